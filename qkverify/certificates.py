"""Certificate files (format 3, docs/CERTIFICATES.md): JSON validated by
``schema/certificate.schema.json``, the contract with the kernel.

A certificate records the exact input (``"p/q"`` strings, or per tensor the
file, SHA-256 and slice of a weights file), one record per Lean declaration
evaluated (its hypotheses, conclusion, evidence and, for a definition, its
value), the witnesses the kernel checks, the verdict and the evidence level;
``display`` and ``tool`` are display-only.  Files are canonical JSON (sorted
keys, fixed indentation, no timestamps): the same input gives byte-identical
files on every machine.  Writes are atomic (temporary file + rename) and never
replace a different existing file unless ``force`` is given.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import os
import platform
import stat
from importlib import metadata
from pathlib import Path

from .errors import CertificateExists, QKInputError
from .io.jsontext import indent1
from .io.outputs import atomic_write_bytes

_DEPS = ("python-flint", "sympy", "mpmath", "numpy", "jsonschema", "hypothesis")


def tool_versions() -> dict[str, str]:
    """Versions of qkverify and its dependencies (recorded in certificates).
    Read once per process (reading package metadata costs milliseconds, and
    ``qkverify heads`` writes two certificates per head); a fresh copy each call."""
    return dict(_tool_versions())


@functools.lru_cache(maxsize=1)
def _tool_versions() -> dict[str, str]:
    from . import __version__

    out = {"qkverify": __version__, "python": platform.python_version()}
    for d in _DEPS:
        try:
            out[d] = metadata.version(d)
        except metadata.PackageNotFoundError:
            out[d] = "not installed"
    return out


def canonical_bytes(cert: dict) -> bytes:
    """Canonical UTF-8 JSON (sorted keys, indent 1, trailing newline): byte-identical for equal certificates.

    The bytes are those of ``json.dumps(cert, sort_keys=True, indent=1, ensure_ascii=False)``
    plus a newline; :func:`qkverify.io.jsontext.indent1` writes them without the standard
    library's pure-Python indenting encoder (some 3x faster on a head certificate; tests compare
    both).

    >>> canonical_bytes({"b": [1, 2.5, None], "a": {"x": "é", "y": []}})
    b'{\\n "a": {\\n  "x": "\\xc3\\xa9",\\n  "y": []\\n },\\n "b": [\\n  1,\\n  2.5,\\n  null\\n ]\\n}\\n'
    """
    return (indent1(cert, sort_keys=True) + "\n").encode("utf-8")


def canonical_bytes_all(certs: list[dict]) -> list[bytes]:
    """:func:`canonical_bytes` of each certificate; a list or dict that several of them hold (the
    same object, at the same depth: a head's cells witness, its display row) is written once and
    its text reused.  Safe: nothing can change an object while this call runs.

    >>> row = {"a": [1, 2], "b": "x"}
    >>> canonical_bytes_all([{"r": row}, {"r": row, "s": 1}]) == [canonical_bytes({"r": row}),
    ...                                                        canonical_bytes({"r": row, "s": 1})]
    True
    """
    memo: dict = {}
    return [(indent1(cert, sort_keys=True, memo=memo) + "\n").encode("utf-8") for cert in certs]


def write(cert: dict, path: str | Path, force: bool = False, check_schema: bool = True) -> str:
    """Write ``cert`` atomically at ``path``.

    Returns ``"written"``, ``"unchanged"`` (identical file already there),
    ``"tool versions updated"`` or ``"replaced"`` (different file,
    ``force``).  Raises CertificateExists when a different certificate exists
    and ``force`` is False, QKInputError (one line) when the folder cannot be
    created or written.  The bytes go through
    :func:`qkverify.io.outputs.atomic_write_bytes`: a hidden temporary named
    ``.<name>.<host>.<pid>.<random>.tmp`` renamed over ``path``; temporaries
    that a killed writer left in the folder are removed first (only those of
    that pattern whose pid is dead and which predate this process).
    """
    if check_schema:
        validate(cert)
    return _write_bytes(cert, canonical_bytes(cert), Path(path), force)


def write_all(items: list[tuple[dict, str | Path]], force: bool = False, check_schema: bool = True) -> list[str]:
    """:func:`write` of each (certificate, path), in order; the certificates are serialized together
    (:func:`canonical_bytes_all`: what they share is written once).  Same bytes, statuses and errors
    as :func:`write` one by one (a certificate is validated before any is written)."""
    if check_schema:
        for cert, _ in items:
            validate(cert)
    datas = canonical_bytes_all([cert for cert, _ in items])
    return [_write_bytes(cert, data, Path(path), force) for (cert, path), data in zip(items, datas)]


def _write_bytes(cert: dict, data: bytes, p: Path, force: bool) -> str:
    """:func:`write` once ``data`` = canonical_bytes(cert)."""
    status = "written"
    try:
        st = os.stat(p)  # one system call for "is it a folder" and "is there a file"
    except OSError as err:  # as Path.exists: no such file, or a symlink loop
        if err.errno not in (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP):
            raise QKInputError(f"{p}: cannot read the existing certificate ({err.strerror})") from None
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise QKInputError(f"{p}: is a directory, expected a certificate file")
    if st is not None:
        try:
            old = p.read_bytes()
        except OSError as err:
            raise QKInputError(f"{p}: cannot read the existing certificate ({err.strerror})") from None
        if old == data:
            return "unchanged"
        if not force and _differs_only_in_tool(old, cert):
            force = True  # same mathematics, newer dependency versions: reported, not silent
            status = "tool versions updated"
        if not force:
            raise CertificateExists(f"{p}: a different certificate exists; use --force to replace it")
        if status == "written":
            status = "replaced"
    atomic_write_bytes(p, data)  # temporary + fsync + rename; stale temporaries cleaned
    return status


def _differs_only_in_tool(old: bytes, cert: dict) -> bool:
    try:
        prev = json.loads(old)
    except ValueError:
        return False
    if not isinstance(prev, dict):
        return False
    a = {k: v for k, v in prev.items() if k != "tool"}
    b = {k: v for k, v in cert.items() if k != "tool"}
    return a == b


def input_digest(input_json: dict) -> str:
    """Short stable name for an input: first 16 hex digits of its SHA-256."""
    return hashlib.sha256(json.dumps(input_json, sort_keys=True).encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------
# format 3 (docs/CERTIFICATES.md): per-declaration records and witnesses

FORMAT = "qkverify-certificate/3"
SCHEMA_PATH = Path(__file__).with_name("schema") / "certificate.schema.json"


@functools.lru_cache(maxsize=1)
def _validator():
    """The schema's validator, built once per process."""
    import jsonschema

    return jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))


def validate(cert: dict) -> None:
    """Validate a format-3 certificate against the shipped schema (QKInputError naming the first violation)."""
    v = _validator()
    errs = sorted(v.iter_errors(cert), key=lambda e: [str(p) for p in e.absolute_path])
    if errs:
        e = errs[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        raise QKInputError(f"certificate schema violation at {where}: {e.message[:300]}")


def build(statement: str, input_json: dict, witnesses: list[dict], declarations: list[dict],
           verdict: str, evidence: str, display: dict) -> dict:
    """Assemble a format-3 certificate; ``display`` is display-only (never re-checked)."""
    return {
        "format": FORMAT,
        "statement": statement,
        "input": input_json,
        "witnesses": witnesses,
        "declarations": declarations,
        "verdict": verdict,
        "evidence": evidence,
        "display": display,
        "tool": tool_versions(),
    }


#: names kept for callers written against the transition API
