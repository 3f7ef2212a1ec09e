"""Parsing user input into exact rationals (python-flint ``fmpq``).

Number text -- a JSON number, or a JSON string holding a number -- follows
one grammar, :data:`NUMBER_GRAMMAR`, and is read exactly:

    number   = fraction | decimal
    fraction = [sign] digits "/" digits          (denominator not zero)
    decimal  = [sign] (digits ["." [digits]] | "." digits) [("e" | "E") [sign] digits]
    sign     = "+" | "-"
    digits   = one or more of 0 1 2 3 4 5 6 7 8 9

Nothing else: no spaces anywhere (not even around the number), no ``_``
separators, no other digits than ASCII 0-9, no ``inf``/``nan``, no hex.
``"0.1"`` is exactly 1/10, ``"1e-3"`` is 1/1000, ``"-2/6"`` is -1/3.  A JSON
number is read by its decimal text (the JSON number grammar is a subset of
``decimal``), never through a binary float.  Decimal exponents are limited to
±:data:`MAX_EXPONENT` and a number to :data:`MAX_DIGITS` characters.

Arrays from ``.npy``/``.npz`` files are read exactly or refused:
integer dtypes and float16/32/64 (binary floats are exact dyadic
rationals), and ``longdouble`` (x87 80-bit or IEEE quad), whose entries are
read exactly through numpy's ``as_integer_ratio``.  Complex, boolean,
object, string, date and structured dtypes are refused, as are NaN and
infinities: a NaN is not a rational.

JSON objects may not repeat a key (``{"L": A, "L": B}`` is refused, naming
the key).
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from flint import fmpq, fmpq_mat, fmpz, fmpz_mat

from ..errors import QKInputError

#: the number grammar of the module docstring (ASCII digits only; fullmatch)
NUMBER_GRAMMAR = re.compile(
    r"(?P<frac>(?P<p>[+-]?[0-9]+)/(?P<q>[0-9]+))"
    r"|(?P<dec>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
)

#: limits that keep a hostile file from exhausting memory
MAX_FILE_BYTES = 512 * 1024 * 1024
MAX_DIM = 8192
MAX_DIGITS = 20000
#: largest decimal exponent accepted in "1e…" notation (keeps 1e999999999 from hanging)
MAX_EXPONENT = 20000


class _JSONNumber(str):
    """Marks a JSON number: its decimal text, kept exact."""


def _keep_constant(name: str) -> Any:
    """NaN / Infinity are kept as text so that the entry that holds them is
    named when it is parsed (they are then rejected: not rational)."""
    return _JSONNumber(name)


def parse_rational(x: Any, where: str = "entry") -> fmpq:
    """Exact rational from an int, fmpq, Fraction, Decimal, ``"p/q"`` or
    decimal string, or a finite binary float (its exact dyadic value).

    Raises QKInputError naming ``where`` for NaN, infinities, booleans,
    zero denominators and anything that is not a number.
    """
    if isinstance(x, bool):
        raise QKInputError(f"{where}: {x!r} is a boolean, not a number")
    if isinstance(x, fmpq):
        return x
    if isinstance(x, (int, fmpz, np.integer)):
        return fmpq(int(x))
    if isinstance(x, Fraction):
        return fmpq(x.numerator, x.denominator)
    if isinstance(x, (float, np.floating)):
        if not np.isfinite(x):
            raise QKInputError(f"{where}: {x!r} is not a rational number")
        num, den = x.as_integer_ratio()  # exact dyadic value, longdouble included (no rounding to float64)
        return fmpq(int(num), int(den))
    if isinstance(x, Decimal):
        if not x.is_finite():
            raise QKInputError(f"{where}: {x} is not a rational number")
        fr = Fraction(x)
        return fmpq(fr.numerator, fr.denominator)
    if isinstance(x, str):
        return parse_number_text(x, where)
    raise QKInputError(f"{where}: {type(x).__name__} {x!r} is not a number")


def parse_number_text(s: str, where: str = "entry") -> fmpq:
    """Exact rational from number text in the grammar of the module docstring.

    >>> parse_number_text("-2/6"), parse_number_text("0.1"), parse_number_text("1.5e-2")
    (-1/3, 1/10, 3/200)

    Raises QKInputError naming ``where`` for text outside the grammar
    (``"1_000"``, ``" 1 "``, ``"0x10"``, ``"inf"``, ``"1/-2"``), a zero
    denominator, more than MAX_DIGITS characters or an exponent beyond
    ±MAX_EXPONENT.
    """
    if len(s) > MAX_DIGITS:
        raise QKInputError(f"{where}: number with more than {MAX_DIGITS} characters")
    m = NUMBER_GRAMMAR.fullmatch(s)
    if m is None and s.lstrip("+-").lower() in ("nan", "inf", "infinity"):
        raise QKInputError(f"{where}: {s} is not a rational number")
    if m is None:
        raise QKInputError(f"{where}: {s!r} is not a rational number (accepted: integers, p/q, decimals "
                           "with an optional exponent; no spaces or '_')")
    if m.group("frac"):
        p, q = int(m.group("p")), int(m.group("q"))
        if q == 0:
            raise QKInputError(f"{where}: {s!r} has a zero denominator")
        return fmpq(p, q)
    d = Decimal(s)  # safe: the text matched the decimal grammar
    if abs(d.adjusted()) > MAX_EXPONENT or abs(d.as_tuple().exponent) > MAX_EXPONENT + MAX_DIGITS:
        raise QKInputError(f"{where}: {s!r} has a decimal exponent beyond ±{MAX_EXPONENT}")
    fr = Fraction(d)
    return fmpq(fr.numerator, fr.denominator)


def parse_integer(x: Any, where: str = "entry") -> int:
    """An integer given as anything :func:`parse_rational` reads (so number
    text follows the same grammar) whose value is an integer; a 0-d numpy
    array (an ``.npz`` scalar) is read as its element.

    >>> parse_integer("12"), parse_integer(7), parse_integer("6/2")
    (12, 7, 3)

    Raises QKInputError naming ``where`` for a non-integer value or text
    outside the grammar (``"1_0"``, ``" 3 "``).
    """
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x[()]
    q = parse_rational(x, where)
    if q.q != 1:
        raise QKInputError(f"{where}: {fmpq_str(q)} is not an integer")
    return int(q.p)


def fmpq_str(q: fmpq) -> str:
    """Canonical ``"p/q"`` (or ``"p"``) text of an exact rational."""
    q = fmpq(q)
    return str(q.p) if q.q == 1 else f"{q.p}/{q.q}"


def rows_to_fmpq_mat(rows: Any, name: str = "matrix", square: bool = False) -> fmpq_mat:
    """Exact matrix from nested lists of scalars accepted by parse_rational.

    Shape r x c with r, c >= 1; ragged rows, empty input and (when
    ``square``) non-square shapes raise QKInputError naming the problem.
    """
    if isinstance(rows, np.ndarray):
        return ndarray_to_fmpq_mat(rows, name, square)
    if not isinstance(rows, list) or not rows:
        raise QKInputError(f"{name}: expected a non-empty list of rows")
    if all(not isinstance(r, list) for r in rows):
        raise QKInputError(f"{name}: expected a list of rows (a nested list), got a flat list")
    ncols = None
    out = []
    for i, r in enumerate(rows):
        if not isinstance(r, list):
            raise QKInputError(f"{name}: row {i} is not a list")
        if ncols is None:
            ncols = len(r)
            if ncols == 0:
                raise QKInputError(f"{name}: row 0 is empty")
        elif len(r) != ncols:
            raise QKInputError(f"{name}: ragged rows (row 0 has {ncols} entries, row {i} has {len(r)})")
        out.append([parse_rational(v, f"{name}[{i}][{j}]") for j, v in enumerate(r)])
    if len(out) > MAX_DIM or ncols > MAX_DIM:
        raise QKInputError(f"{name}: {len(out)}x{ncols} exceeds the size limit {MAX_DIM}")
    if square and len(out) != ncols:
        raise QKInputError(f"{name}: must be square, got {len(out)}x{ncols}")
    return fmpq_mat(out)


def ndarray_to_fmpq_mat(a: np.ndarray, name: str = "matrix", square: bool = False) -> fmpq_mat:
    """Exact matrix from a 2-d numpy array; float entries are taken as the
    exact dyadic rationals they are (a float32 weight is an exact rational).

    Raises QKInputError for NaN/Inf (naming the first bad index), wrong
    dimensionality, empty arrays, non-square input when ``square``.
    """
    if a.ndim != 2:
        raise QKInputError(f"{name}: expected a 2-d array, got shape {a.shape}")
    if a.size == 0:
        raise QKInputError(f"{name}: empty array of shape {a.shape}")
    if square and a.shape[0] != a.shape[1]:
        raise QKInputError(f"{name}: must be square, got {a.shape[0]}x{a.shape[1]}")
    if a.dtype.kind == "f":
        bad = np.argwhere(~np.isfinite(a))
        if bad.size:
            i, j = (int(t) for t in bad[0])
            raise QKInputError(f"{name}[{i}][{j}]: {a[i, j]!r} is not a rational number")
        if a.dtype.itemsize > 8:  # longdouble: wider than float64, read entry by entry
            return fmpq_mat([[parse_rational(v, f"{name}[{i}][{j}]") for j, v in enumerate(row)] for i, row in enumerate(a)])
        M, e = dyadic_fmpz_mat(a)
        return fmpq_mat(M) * (fmpq(2) ** e if e >= 0 else fmpq(1, 2 ** (-e)))
    if a.dtype.kind in "iu":
        return fmpq_mat([[int(v) for v in row] for row in a.tolist()])
    what = {"b": "boolean", "c": "complex", "O": "object", "U": "string", "S": "bytes", "V": "structured",
            "M": "datetime", "m": "timedelta"}.get(a.dtype.kind, "unsupported")
    raise QKInputError(f"{name}: {what} dtype {a.dtype} cannot be read as exact rationals "
                       "(use an integer or float16/32/64/longdouble array)")


def dyadic_fmpz_mat(a: np.ndarray) -> tuple[fmpz_mat, int]:
    """Exact decomposition of a finite float array: ``a == M * 2**e`` with M an
    integer matrix (fmpz_mat) and e an int, computed from frexp without
    rounding.  Shape (r, c) float16/32/64 (a wider dtype would be rounded:
    refused).  Raises QKInputError on NaN/Inf.
    """
    if np.asarray(a).dtype.itemsize > 8 and np.asarray(a).dtype.kind == "f":
        raise QKInputError(f"dyadic_fmpz_mat: dtype {np.asarray(a).dtype} would be rounded to float64")
    a64 = np.asarray(a, dtype=np.float64)  # float16/32 -> float64 is exact
    if a64.ndim != 2:
        raise QKInputError(f"expected a 2-d array, got shape {a64.shape}")
    if not np.all(np.isfinite(a64)):
        raise QKInputError("array contains NaN or Inf, which are not rational numbers")
    mant, ex = np.frexp(a64)  # a = mant * 2**ex with 0.5 <= |mant| < 1
    m_int = np.ldexp(mant, 53).astype(np.int64)  # exact: at most 53 significant bits
    ex = ex.astype(np.int64) - 53
    nz = m_int != 0
    r, c = a64.shape
    if not nz.any():
        return fmpz_mat(r, c), 0
    absm = np.abs(m_int)
    low = absm & (-absm)  # lowest set bit, a power of two < 2**53 (exact in float64)
    tz = np.where(nz, np.log2(np.where(nz, low, 1).astype(np.float64)).astype(np.int64), 0)
    odd = m_int >> tz  # exact: the shifted-out bits are zero
    ex2 = ex + tz
    e0 = int(ex2[nz].min())
    shift = np.where(nz, ex2 - e0, 0).tolist()
    odd_l = odd.tolist()
    rows = [[odd_l[i][j] << shift[i][j] for j in range(c)] for i in range(r)]
    return fmpz_mat(rows), e0


class _DuplicateKey(Exception):
    pass


def _unique_keys(pairs: list) -> dict:
    """object_pairs_hook: a JSON object with a repeated key is refused
    (the standard parser silently keeps the last value)."""
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def _json_load(text: str, where: str) -> Any:
    try:
        return json.loads(
            text,
            parse_float=_JSONNumber,
            parse_int=_JSONNumber,
            parse_constant=_keep_constant,
            object_pairs_hook=_unique_keys,
        )
    except _DuplicateKey as err:
        raise QKInputError(f"{where}: duplicate key {err.args[0]!r} in a JSON object") from None
    except QKInputError:
        raise
    except json.JSONDecodeError as err:
        raise QKInputError(f"{where}: not valid JSON ({err.msg} at line {err.lineno} column {err.colno})") from None
    except RecursionError:
        raise QKInputError(f"{where}: JSON nested too deeply") from None


def read_input_file(path: str | Path) -> Any:
    """Read a JSON or .npy input file.

    JSON: returns the parsed document with numbers kept as their decimal text
    (so ``0.1`` is 1/10 exactly).  ``.npy``: returns a numpy array (no pickles).
    ``.npz``: returns a dict of arrays.  Raises QKInputError for a missing,
    unreadable (no permission), oversized, empty or unparsable file, and for
    a JSON object with a duplicate key.  The file is opened before anything
    else is done with it, so an unreadable input fails at once.

    ``"-"`` reads standard input: JSON, or a ``.npy`` / ``.npz`` recognised by
    its magic bytes.
    """
    if str(path) == "-":
        return _read_stdin()
    p = Path(path)
    try:
        p.stat()
    except FileNotFoundError:
        raise QKInputError(f"{p}: no such file") from None
    except OSError as err:  # no permission to look into a folder on the path, a file in the path, ...
        raise QKInputError(f"{p}: cannot read ({err.strerror or err.__class__.__name__})") from None
    if p.is_dir():
        raise QKInputError(f"{p}: is a directory, expected a file")
    try:
        with open(p, "rb") as fh:
            fh.read(1)
        size = p.stat().st_size
    except OSError as err:
        raise QKInputError(f"{p}: cannot read ({err.strerror or err.__class__.__name__})") from None
    if size == 0:
        raise QKInputError(f"{p}: empty file")
    if size > MAX_FILE_BYTES:
        raise QKInputError(f"{p}: {size} bytes exceeds the input limit of {MAX_FILE_BYTES}")
    if p.suffix == ".npy":
        try:
            return np.load(p, allow_pickle=False)
        except Exception as err:  # numpy raises several kinds
            raise QKInputError(f"{p}: not a readable .npy array ({err.__class__.__name__}: {err})") from None
    if p.suffix == ".npz":
        try:
            with np.load(p, allow_pickle=False) as z:
                return {k: z[k] for k in z.files}
        except Exception as err:
            raise QKInputError(f"{p}: not a readable .npz archive ({err.__class__.__name__})") from None
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise QKInputError(f"{p}: not UTF-8 text (expected JSON, .npy or .npz)") from None
    except OSError as err:
        raise QKInputError(f"{p}: cannot read ({err.strerror or err.__class__.__name__})") from None
    if not text.strip():
        raise QKInputError(f"{p}: empty file")
    return _json_load(text, str(p))


def _read_stdin() -> Any:
    """:func:`read_input_file` of standard input (``-``)."""
    import io
    import sys

    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise QKInputError("-: standard input is not readable")
    try:
        data = stream.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        raise QKInputError(f"-: cannot read standard input ({err.strerror or err.__class__.__name__})") from None
    if len(data) > MAX_FILE_BYTES:
        raise QKInputError(f"-: standard input exceeds the input limit of {MAX_FILE_BYTES} bytes")
    if not data.strip():
        raise QKInputError("-: standard input is empty")
    if data.startswith(b"\x93NUMPY"):
        try:
            return np.load(io.BytesIO(data), allow_pickle=False)
        except Exception as err:  # numpy raises several kinds
            raise QKInputError(f"-: not a readable .npy array ({err.__class__.__name__}: {err})") from None
    if data.startswith(b"PK\x03\x04"):
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                return {k: z[k] for k in z.files}
        except Exception as err:
            raise QKInputError(f"-: not a readable .npz archive ({err.__class__.__name__})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise QKInputError("-: standard input is not UTF-8 text (expected JSON, .npy or .npz)") from None
    return _json_load(text, "-")
