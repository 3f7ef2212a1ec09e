"""The manifest of the shipped certificates: which files under ``certificates/``
lean-audit reads when it audits the shipped set, pinned by SHA-256.

The manifest is ``qkverify/data/shipped_certificates.sha256``, in the format of
``sha256sum`` (one ``<64 hex digits>  <path>`` line per certificate, the path
relative to ``certificates/`` with ``/`` separators, sorted), so that
``cd certificates && sha256sum -c ../qkverify/data/shipped_certificates.sha256``
checks it too.  It is written by :func:`write` when the shipped set is
regenerated (``make audit`` runs ``qkverify lean-audit --write-manifest`` right
after ``qkverify audit --out certificates``) and lists every certificate then
under ``certificates/`` (a JSON object whose ``format`` is
``qkverify-certificate/<n>``); input files and tables are not certificates.

A file a user adds under ``certificates/`` is not in the manifest and changes
nothing lean-audit says about the shipped set; a listed file that is missing or
whose bytes changed is a failure of the audit.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path, PurePosixPath

from ..claims.metadata import REPO_ROOT
from ..errors import QKInputError

#: the shipped certificates
SHIPPED_DIR = REPO_ROOT / "certificates"
#: the manifest, shipped in the package
MANIFEST_PATH = Path(__file__).resolve().parents[1] / "data" / "shipped_certificates.sha256"
CERTIFICATE_FORMAT = re.compile(r"^qkverify-certificate/\d+$")
_LINE = re.compile(r"^([0-9a-f]{64})  (\S(?:.*\S)?)$")


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def is_certificate(path: Path) -> bool:
    """True when ``path`` is a JSON object whose ``format`` is ``qkverify-certificate/<n>``."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(doc, dict) and isinstance(doc.get("format"), str) and bool(CERTIFICATE_FORMAT.match(doc["format"]))


def build(cert_dir: str | Path = SHIPPED_DIR) -> list[tuple[str, str]]:
    """(SHA-256, path relative to ``cert_dir``) of every certificate under ``cert_dir``,
    sorted by path (an empty list when the folder does not exist)."""
    base = Path(cert_dir)
    if not base.is_dir():
        return []
    files = [p for p in base.rglob("*.json") if p.is_file() and is_certificate(p)]
    return sorted(((sha256_file(p), p.relative_to(base).as_posix()) for p in files), key=lambda e: e[1])


def render(entries: list[tuple[str, str]]) -> str:
    """The manifest text: ``<sha256>  <path>`` lines, LF line endings.

    >>> print(render([("0" * 64, "a/b.json")]), end="")
    0000000000000000000000000000000000000000000000000000000000000000  a/b.json
    """
    return "".join(f"{sha}  {rel}\n" for sha, rel in entries)


def write(cert_dir: str | Path = SHIPPED_DIR, path: str | Path = MANIFEST_PATH) -> int:
    """Record the certificates now under ``cert_dir`` in the manifest at ``path``
    (atomically; unchanged bytes when nothing changed).  Returns how many it lists."""
    from ..io.outputs import atomic_write_text

    entries = build(cert_dir)
    text = render(entries)
    p = Path(path)
    if not p.is_file() or p.read_text(encoding="utf-8") != text:
        atomic_write_text(p, text)
    return len(entries)


def read(path: str | Path = MANIFEST_PATH) -> list[tuple[str, str]]:
    """The entries of a manifest file.  QKInputError (one line, naming the line) when
    it cannot be read, a line is not ``<64 lowercase hex>  <path>``, a path is not a
    relative POSIX path inside the folder, or a path is listed twice."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise QKInputError(f"cannot read the certificate manifest {p}: {err.__class__.__name__}") from None
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for n, line in enumerate(text.split("\n"), 1):
        if not line:
            continue
        m = _LINE.match(line)
        if not m:
            raise QKInputError(f"{p}:{n}: not a '<sha256>  <path>' line")
        rel = m.group(2)
        pp = PurePosixPath(rel)
        if "\\" in rel or pp.is_absolute() or ".." in pp.parts or rel.startswith("./"):
            raise QKInputError(f"{p}:{n}: '{rel}' is not a relative path inside the certificates folder")
        if rel in seen:
            raise QKInputError(f"{p}:{n}: '{rel}' is listed twice")
        seen.add(rel)
        out.append((m.group(1), rel))
    return out


def check(entries: list[tuple[str, str]], cert_dir: str | Path = SHIPPED_DIR) -> tuple[list[Path], list[str]]:
    """The listed files that are present with the pinned SHA-256, and one problem
    line per file that is missing or whose bytes differ."""
    base = Path(cert_dir)
    ok: list[Path] = []
    problems: list[str] = []
    for sha, rel in entries:
        f = base / rel
        if not f.is_file():
            problems.append(f"shipped certificate {rel} is missing (listed in the manifest)")
        elif sha256_file(f) != sha:
            problems.append(f"shipped certificate {rel} differs from the manifest (SHA-256 changed; "
                            "`make audit` regenerates both)")
        else:
            ok.append(f)
    return ok, problems
