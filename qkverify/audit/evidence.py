"""What certificates say about Lean declarations, for lean-audit: the
declaration records of each certificate, the kernel's verdict on the file, and
where the certificates come from -- the shipped set through the package's
manifest (:mod:`.manifest`), or every certificate under a folder.

A record is one item of a certificate's ``declarations`` list: the
declaration's ``name`` (full Lean name, or a clustering check unit's id), its
``conclusion`` and its ``evidence``.  Certificate format 3 concludes
``holds`` / ``fails`` / ``undecided`` on exact or certified evidence,
``consistent`` / ``inconsistent`` on empirical evidence, ``computed`` for a
definition; a format-2 record with empirical evidence is read as format 3 reads
it (``holds`` → ``consistent``, ``fails`` → ``inconsistent``).  Records of
probes (a ``dropped`` hypothesis: a counterexample to the declaration without
it) and of user conjectures (names ``user.…``) say nothing about a Lean
declaration and are left out.

Pure data processing: no arithmetic.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from . import manifest

DECIDED = ("holds", "fails", "undecided")
SAMPLED = ("consistent", "inconsistent")
CONCLUSIONS = DECIDED + SAMPLED + ("computed",)
#: Evidence levels, strongest first.
EVIDENCE_ORDER = ("exact", "certified", "empirical")
#: the prefix of a user conjecture's names (qkverify.search.targets.USER_PREFIX)
USER_PREFIX = "user."


@dataclass(frozen=True)
class Record:
    """One declaration evaluated by a certificate (conclusion in the format-3 vocabulary)."""

    name: str
    conclusion: str
    evidence: str

    @property
    def label(self) -> str:
        """``conclusion/evidence``, e.g. ``holds/exact``, ``consistent/empirical``."""
        return f"{self.conclusion}/{self.evidence}"


@dataclass
class Certificate:
    """A certificate file, its declaration records and the kernel's verdict on it."""

    path: Path
    records: tuple[Record, ...]
    kernel: str = ""
    name: str = field(default="")  # how reports name it (the path relative to the audited folder)

    def __post_init__(self) -> None:
        self.name = self.name or str(self.path)


@dataclass
class Source:
    """The certificates lean-audit reads and where they came from.

    ``certificates`` -- those with at least one record about a declaration;
    ``problems``     -- failures found while reading (malformed records, a manifest
                        entry missing or changed);
    ``description``  -- e.g. ``manifest qkverify/data/shipped_certificates.sha256 (535 certificates)``;
    ``root``         -- the folder the certificates' names are relative to.
    """

    certificates: list[Certificate]
    problems: list[str]
    description: str
    root: Path


def _evidence_level(ev: Any) -> str:
    if isinstance(ev, str):
        return ev
    if isinstance(ev, Mapping):
        for key in ("level", "kind", "evidence"):
            if isinstance(ev.get(key), str):
                return ev[key]
    return "unknown"


def read_records(doc: Any) -> tuple[Record, ...] | None | str:
    """The records of a decoded certificate: a tuple (possibly empty: only probe or user
    records), None when the document has no ``declarations`` list (not a
    per-declaration certificate), or a problem string when the list is malformed.

    >>> read_records({"declarations": [{"name": "Appendices.symPart", "conclusion": "holds",
    ...                                 "evidence": "empirical"}]})
    (Record(name='Appendices.symPart', conclusion='consistent', evidence='empirical'),)
    >>> read_records({"declarations": [{"name": "x", "conclusion": "maybe"}]})
    "'declarations' must list objects with a name and a conclusion in holds/fails/undecided/consistent/inconsistent/computed"
    """
    if not isinstance(doc, dict) or "declarations" not in doc:
        return None
    items = doc["declarations"]
    bad = ("'declarations' must list objects with a name and a conclusion in " + "/".join(CONCLUSIONS))
    if not isinstance(items, list):
        return bad
    out: list[Record] = []
    for it in items:
        if not (isinstance(it, dict) and isinstance(it.get("name"), str) and it.get("conclusion") in CONCLUSIONS):
            return bad
        if it.get("dropped") or it["name"].startswith(USER_PREFIX):
            continue
        ev = _evidence_level(it.get("evidence"))
        c = it["conclusion"]
        if ev == "empirical" and c in ("holds", "fails"):  # format 2: a sample decides nothing
            c = "consistent" if c == "holds" else "inconsistent"
        out.append(Record(it["name"], c, ev))
    return tuple(out)


def _read(f: Path, name: str) -> tuple[Certificate | None, str | None]:
    try:
        doc = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None, None  # not JSON: not a per-declaration certificate (`verify` reports unreadable files)
    recs = read_records(doc)
    if isinstance(recs, str):
        return None, f"{name}: {recs}"
    if not recs:
        return None, None
    return Certificate(f, recs, name=name), None


def scan(root: str | Path) -> Source:
    """Every certificate under the folder ``root`` (``*.json``, recursively) with a record
    about a declaration; a missing folder holds none."""
    base = Path(root)
    certs: list[Certificate] = []
    problems: list[str] = []
    files = sorted(base.rglob("*.json")) if base.is_dir() else []
    for f in files:
        c, prob = _read(f, f.relative_to(base).as_posix())
        if prob:
            problems.append(prob)
        elif c is not None:
            certs.append(c)
    return Source(certs, problems, f"{base} ({len(certs)} certificates with declaration records)", base)


def shipped(manifest_path: str | Path | None = None, cert_dir: str | Path | None = None) -> Source:
    """The shipped certificates: the files the manifest lists (default
    ``qkverify/data/shipped_certificates.sha256``) under ``cert_dir`` (default
    ``certificates/``), each with its pinned SHA-256.  A listed file that is missing or
    changed is a problem (a failure of the audit); files the manifest does not list are
    never read.  QKInputError when the manifest itself is malformed."""
    mpath = Path(manifest_path) if manifest_path is not None else manifest.MANIFEST_PATH
    base = Path(cert_dir) if cert_dir is not None else manifest.SHIPPED_DIR
    entries = manifest.read(mpath)
    files, problems = manifest.check(entries, base)
    certs: list[Certificate] = []
    for f in files:
        c, prob = _read(f, f.relative_to(base).as_posix())
        if prob:
            problems.append(prob)
        elif c is not None:
            certs.append(c)
    try:
        shown = mpath.resolve().relative_to(manifest.REPO_ROOT).as_posix()
    except ValueError:
        shown = str(mpath)
    return Source(certs, problems, f"manifest {shown} ({len(entries)} certificates)", base)


def kernel_status(path: Path) -> str:
    """The kernel's verdict on one certificate file (``valid``, ``invalid``, ``undecided``,
    ``unreadable``, …); only ``valid`` counts for lean-audit.  Cached per (file, size,
    mtime) within a process: certificates of real models take the kernel seconds."""
    p = Path(path).resolve()
    try:
        st = p.stat()
    except OSError:
        return _kernel_status(str(p), -1, -1)
    return _kernel_status(str(p), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=4096)
def _kernel_status(path: str, size: int, mtime_ns: int) -> str:
    from ..kernel import verify_file
    from ..models.installed import default_weights_dirs

    return str(verify_file(Path(path), default_weights_dirs()).status)
