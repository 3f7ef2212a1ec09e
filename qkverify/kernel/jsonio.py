"""Reading a certificate strictly: JSON without duplicate keys or NaN, the
shipped JSON Schema, and typed field readers that raise :class:`Invalid`."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
from flint import fmpq, fmpq_mat, fmpz, fmpz_poly

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "schema" / "certificate.schema.json"
from .limits import MAX_FILE_BYTES, MAX_INT_DIGITS as MAX_DIGITS, MAX_JSON_DEPTH


class Invalid(Exception):
    """A certificate that is wrong: ``check`` names the failing check."""

    def __init__(self, check: str, why: str):
        super().__init__(f"{check}: {why}")
        self.check, self.why = check, why


class Undecided(Exception):
    """The kernel could not decide within its limits (``why`` names the limit)."""


class NotEvaluable(Exception):
    """A declaration's conclusion (or a witness) cannot be evaluated on this input, e.g. the
    existential side of an iff with no candidate given: it must not be listed."""


class Unreadable(Exception):
    """Not a readable JSON text (no such file, not UTF-8, not JSON)."""


def require(cond: bool, check: str, why: str) -> None:
    """Raise Invalid(check, why) unless ``cond``."""
    if not cond:
        raise Invalid(check, why)


class _Dup(Exception):
    pass


def _pairs(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise _Dup(k)
        out[k] = v
    return out


def _no_constant(name: str):
    raise ValueError(f"JSON constant {name} is not a number")


def _int(s: str) -> int:
    if len(s) > MAX_DIGITS:
        raise ValueError(f"JSON integer with more than {MAX_DIGITS} digits")
    return int(s)


def loads(text: str) -> Any:
    """Parse strict JSON: duplicate keys, NaN/Infinity and huge integers are Invalid."""
    try:
        doc = json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constant, parse_int=_int)
    except _Dup as e:
        raise Invalid("json", f"duplicate key {e.args[0]!r}") from None
    except json.JSONDecodeError as e:
        raise Unreadable(f"not valid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except (ValueError, RecursionError) as e:
        raise Invalid("json", str(e)[:200]) from None
    stack = [(doc, 1)]
    while stack:  # nesting depth, without recursion
        x, d = stack.pop()
        if isinstance(x, (dict, list)):
            require(d <= MAX_JSON_DEPTH, "json", f"nested deeper than the kernel's limit MAX_JSON_DEPTH = {MAX_JSON_DEPTH}")
            stack.extend((v, d + 1) for v in (x.values() if isinstance(x, dict) else x))
    return doc


def read(path: Path) -> Any:
    """Read and parse one file (size limit, UTF-8)."""
    try:
        if path.is_dir():
            raise Unreadable("is a directory")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise Unreadable(f"larger than the kernel's limit of {MAX_FILE_BYTES} bytes")
        text = path.read_bytes().decode("utf-8")
    except OSError as e:
        raise Unreadable(e.strerror or str(e)) from None
    except UnicodeDecodeError:
        raise Unreadable("not UTF-8 text") from None
    return loads(text)


@functools.lru_cache(maxsize=1)
def schema() -> dict:
    """The shipped JSON Schema (the producer/kernel contract)."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=1)
def _validator():
    return jsonschema.Draft202012Validator(schema())


def check_schema(doc: Any) -> None:
    """Invalid("schema") naming the first violation by JSON path."""
    errs = sorted(_validator().iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path])
    if errs:
        e = errs[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        raise Invalid("schema", f"at {where}: {e.message[:200]}")


_RAT = re.compile(r"^(-?[0-9]+)(?:/([1-9][0-9]*))?$")


def rat(x: str) -> fmpq:
    """``"p"`` / ``"p/q"`` as an exact rational (the schema has checked the text)."""
    m = _RAT.match(x)
    require(m is not None, "format", f"{x[:40]!r} is not a rational")
    return fmpq(fmpz(m.group(1)), fmpz(m.group(2) or 1))


_DEC = re.compile(r"^(-?)([0-9]{1,40})(?:\.([0-9]{1,40}))?(?:e(-?[0-9]{1,6}))?$")


def dec(x: str) -> fmpq:
    """Exact value of a decimal such as ``"-0.497"`` or ``"4.97e-61"``."""
    m = _DEC.match(x)
    require(m is not None, "format", f"{x[:40]!r} is not a decimal")
    digits = m.group(2) + (m.group(3) or "")
    e = int(m.group(4) or 0) - len(m.group(3) or "")
    v = fmpq(int(digits)) * (fmpq(10) ** e if e >= 0 else fmpq(1, 10 ** (-e)))
    return -v if m.group(1) else v


def ratmat(rows: list) -> fmpq_mat:
    """Rows of rational strings as an fmpq_mat (rectangular, checked)."""
    require(len({len(r) for r in rows}) == 1, "format", "ragged matrix rows")
    return fmpq_mat([[rat(v) for v in r] for r in rows])


def poly(cs: list) -> fmpz_poly:
    """Ascending integer coefficients (strings) as an fmpz_poly (Undecided past MAX_DEGREE)."""
    from .limits import MAX_DEGREE, over

    over("coefficients of a polynomial", len(cs), MAX_DEGREE + 1, "MAX_DEGREE + 1")
    return fmpz_poly([fmpz(c) for c in cs])


def qstr(q) -> str:
    """Canonical ``"p/q"`` text."""
    q = fmpq(q)
    return str(q.p) if q.q == 1 else f"{q.p}/{q.q}"
