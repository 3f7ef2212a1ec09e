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
from itertools import chain
from importlib import metadata
from pathlib import Path

from .errors import CertificateExists, QKInputError
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
    plus a newline; :func:`_indent1` writes them without the standard library's pure-Python
    indenting encoder (some 5x faster on a head certificate; tests compare both).

    >>> canonical_bytes({"b": [1, 2.5, None], "a": {"x": "é", "y": []}})
    b'{\\n "a": {\\n  "x": "\\xc3\\xa9",\\n  "y": []\\n },\\n "b": [\\n  1,\\n  2.5,\\n  null\\n ]\\n}\\n'
    """
    parts: list[str] = []
    _indent1(cert, "\n", parts, None)
    parts.append("\n")
    return "".join(parts).encode("utf-8")


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
    out = []
    for cert in certs:
        parts: list[str] = []
        _indent1(cert, "\n", parts, memo)
        parts.append("\n")
        out.append("".join(parts).encode("utf-8"))
    return out


_ENC_STR = json.encoder.encode_basestring          # ensure_ascii=False: the C string encoder
#: the C encoder without indentation, for lists of integer lists (a head's cells): its text is
#: re-indented by replacing the separators (integers contain no ',', '[' or ']')
_ENC_COMPACT = json.JSONEncoder(separators=(",", ":")).encode


def _float(o: float) -> str:
    if o != o:
        return "NaN"
    if o in (float("inf"), float("-inf")):
        return "Infinity" if o > 0 else "-Infinity"
    return float.__repr__(o)


#: the text of a scalar by its exact type (json's rules: bool before int, NaN / Infinity spelled as json does)
_SCALARS = {str: _ENC_STR, int: int.__repr__, float: _float, bool: lambda o: "true" if o else "false",
            type(None): lambda o: "null"}


def _scalar(o) -> str:
    f = _SCALARS.get(type(o))
    if f is not None:
        return f(o)
    if isinstance(o, str):
        return _ENC_STR(o)
    if isinstance(o, bool):
        return "true" if o else "false"
    if isinstance(o, int):
        return int.__repr__(o)
    if isinstance(o, float):
        return _float(o)
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def _int_rows(o: list, inner: str) -> str | None:
    """The text of a non-empty list of non-empty lists of ints (exact type int), None for anything else."""
    if any(type(v) is not list or not v for v in o):
        return None
    if set(map(type, chain.from_iterable(o))) != {int}:
        return None
    i2 = inner + " "
    text = _ENC_COMPACT(o)                               # [[1,2],[3,4]]
    text = text[2:-2].replace("],[", "\x00").replace(",", "," + i2)
    return "[" + inner + "[" + i2 + text.replace("\x00", inner + "]," + inner + "[" + i2) + inner + "]"


#: lists and dicts shorter than this are not worth a memo entry
_MEMO_MIN = 6


def _indent1(o, nl: str, out: list, memo: dict | None) -> None:
    """Append the indent-1, sorted-keys JSON text of ``o`` (``nl`` = newline plus the current indent);
    with ``memo``, the text of a large list or dict is kept by (object id, indent) and reused (the
    objects all stay alive while the caller serializes: an id is not reused meanwhile)."""
    if memo is not None and isinstance(o, (dict, list, tuple)) and len(o) >= _MEMO_MIN:
        key = (id(o), nl)
        text = memo.get(key)
        if text is None:
            sub: list[str] = []
            _emit(o, nl, sub, memo)
            text = memo[key] = "".join(sub)
        out.append(text)
        return
    _emit(o, nl, out, memo)


def _emit(o, nl: str, out: list, memo: dict | None) -> None:
    if isinstance(o, dict):
        if not o:
            out.append("{}")
            return
        inner = nl + " "
        out.append("{")
        first = True
        scalars = _SCALARS
        for k in sorted(o):
            if not isinstance(k, str):
                raise TypeError("certificate keys must be strings")
            out.append(inner if first else "," + inner)
            first = False
            out.append(_ENC_STR(k))
            out.append(": ")
            v = o[k]
            f = scalars.get(type(v))
            if f is not None:
                out.append(f(v))
            elif isinstance(v, (dict, list, tuple)):
                _indent1(v, inner, out, memo)
            else:
                out.append(_scalar(v))
        out.append(nl + "}")
    elif isinstance(o, (list, tuple)):
        if not o:
            out.append("[]")
            return
        inner = nl + " "
        sep = "," + inner
        kinds = set(map(type, o))
        if kinds == {int}:
            out.append("[" + inner + sep.join(map(int.__repr__, o)) + nl + "]")
            return
        if kinds == {list}:
            text = _int_rows(o, inner)
            if text is not None:
                out.append(text + nl + "]")
                return
        out.append("[")
        first = True
        for v in o:
            out.append(inner if first else sep)
            first = False
            if isinstance(v, (dict, list, tuple)):
                _indent1(v, inner, out, memo)
            else:
                out.append(_scalar(v))
        out.append(nl + "]")
    else:
        out.append(_scalar(o))


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
