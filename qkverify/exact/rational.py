"""Parsing user input into exact rationals (python-flint ``fmpq``).

Accepted scalars: Python ints, ``"p/q"`` strings, decimal strings (``"0.1"``
is exactly 1/10, ``"1e-3"`` is 1/1000), JSON numbers read by their decimal
text (never through a binary float), and binary floats from ``.npy`` files,
which are exact dyadic rationals.  NaN and infinities are rejected: a NaN is
not a rational.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from flint import fmpq, fmpq_mat, fmpz, fmpz_mat

from ..errors import QKInputError

_RAT = re.compile(r"^\s*([+-]?\d+)\s*/\s*([+-]?\d+)\s*$")

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
        xf = float(x)
        if not math.isfinite(xf):
            raise QKInputError(f"{where}: {xf!r} is not a rational number")
        fr = Fraction(xf)  # exact dyadic value of the binary float
        return fmpq(fr.numerator, fr.denominator)
    if isinstance(x, Decimal):
        if not x.is_finite():
            raise QKInputError(f"{where}: {x} is not a rational number")
        fr = Fraction(x)
        return fmpq(fr.numerator, fr.denominator)
    if isinstance(x, str):
        s = x.strip()
        if len(s) > MAX_DIGITS:
            raise QKInputError(f"{where}: number with more than {MAX_DIGITS} characters")
        m = _RAT.match(s)
        if m:
            p, q = int(m.group(1)), int(m.group(2))
            if q == 0:
                raise QKInputError(f"{where}: {s!r} has a zero denominator")
            return fmpq(p, q)
        try:
            d = Decimal(s)
        except InvalidOperation:
            raise QKInputError(f"{where}: {s!r} is not a rational number") from None
        if not d.is_finite():
            raise QKInputError(f"{where}: {s} is not a rational number")
        if abs(d.adjusted()) > MAX_EXPONENT or abs(d.as_tuple().exponent) > MAX_EXPONENT + MAX_DIGITS:
            raise QKInputError(f"{where}: {s!r} has a decimal exponent beyond ±{MAX_EXPONENT}")
        fr = Fraction(d)
        return fmpq(fr.numerator, fr.denominator)
    raise QKInputError(f"{where}: {type(x).__name__} {x!r} is not a number")


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
        M, e = dyadic_fmpz_mat(a)
        return fmpq_mat(M) * (fmpq(2) ** e if e >= 0 else fmpq(1, 2 ** (-e)))
    if a.dtype.kind in "iub":
        if a.dtype.kind == "b":
            raise QKInputError(f"{name}: boolean array is not a rational matrix")
        return fmpq_mat([[int(v) for v in row] for row in a.tolist()])
    raise QKInputError(f"{name}: unsupported dtype {a.dtype}")


def dyadic_fmpz_mat(a: np.ndarray) -> tuple[fmpz_mat, int]:
    """Exact decomposition of a finite float array: ``a == M * 2**e`` with M an
    integer matrix (fmpz_mat) and e an int, computed from frexp without
    rounding.  Shape (r, c) float16/32/64.  Raises QKInputError on NaN/Inf.
    """
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


def _json_load(text: str, where: str) -> Any:
    try:
        return json.loads(
            text,
            parse_float=_JSONNumber,
            parse_int=_JSONNumber,
            parse_constant=_keep_constant,
        )
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
    oversized, empty or unparsable file.
    """
    p = Path(path)
    if not p.exists():
        raise QKInputError(f"{p}: no such file")
    if p.is_dir():
        raise QKInputError(f"{p}: is a directory, expected a file")
    size = p.stat().st_size
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
    if not text.strip():
        raise QKInputError(f"{p}: empty file")
    return _json_load(text, str(p))
