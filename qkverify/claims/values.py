"""Certificate value objects (format 2) from the producer's exact objects.

Enclosures are rounded OUTWARD to ``SIG`` significant decimal digits from a
rigorous FLINT ball, which is deterministic: the same input gives the same
digits on every machine.

>>> exact(fmpq(3, 4))
{'exact': '3/4'}
>>> enclosure_q(fmpq(1, 3), fmpq(1, 3))
{'enclosure': ['3.33333333333e-1', '3.33333333334e-1']}
>>> enclosure_q(fmpq(-5, 7), fmpq(0))
{'enclosure': ['-7.14285714286e-1', '1e-12']}
"""

from __future__ import annotations

import math

from flint import arb, fmpq, fmpq_mat, fmpz

from ..exact.algebraic import RealAlgebraic, arb_to_interval
from ..exact.matrix import to_str_rows
from ..exact.rational import fmpq_str

#: significant decimal digits of a stated enclosure
SIG = 12


def exact(q) -> dict:
    """{"exact": "p/q"}."""
    return {"exact": fmpq_str(fmpq(q))}


def _digits_exponent(x: fmpq) -> int:
    """k such that 10^(SIG−1) ≤ |x|·10^k < 10^SIG (x ≠ 0), computed exactly."""
    p, q = abs(int(x.p)), int(x.q)
    k = SIG - 1 - (len(str(p)) - len(str(q)))
    while p * 10**k < 10 ** (SIG - 1) * q if k >= 0 else p < 10 ** (SIG - 1) * q * 10 ** (-k):
        k += 1
    while p * 10**k >= 10**SIG * q if k >= 0 else p >= 10**SIG * q * 10 ** (-k):
        k -= 1
    return k


def _round(x: fmpq, k: int, up: bool) -> int:
    """The integer n strictly below (or above) x·10^k, adjacent to it: the stated
    interval is strictly wider than the ball, so a finer enclosure of the same value
    (the kernel's) always fits inside."""
    s = x * fmpq(10) ** k if k >= 0 else x / fmpq(10) ** (-k)
    n = int(s.p) // int(s.q)  # floor
    if up:
        return n + 1
    return n - 1 if n * s.q == s.p else n


def _text(n: int, k: int) -> str:
    """Decimal text of n·10^(−k) in scientific notation (exact)."""
    if n == 0:
        return "0"
    sign, d = ("-" if n < 0 else ""), str(abs(n))
    e = len(d) - 1 - k
    mant = d[0] + ("." + d[1:].rstrip("0") if d[1:].rstrip("0") else "")
    return f"{sign}{mant}e{e}" if e else f"{sign}{mant}"


def enclosure_q(lo: fmpq, hi: fmpq) -> dict:
    """{"enclosure": [lo', hi']} with lo' ≤ lo, hi ≤ hi', decimals of SIG significant digits."""
    m = max(abs(lo), abs(hi))
    if m == 0:
        return {"enclosure": ["-1e-30", "1e-30"]}
    k = _digits_exponent(m)
    return {"enclosure": [_text(_round(lo, k, False), k), _text(_round(hi, k, True), k)]}


def enclosure(x: arb) -> dict:
    """Outward-rounded enclosure of an arb ball."""
    lo, hi = arb_to_interval(x)
    return enclosure_q(lo, hi)


def root_in(poly: list[int], x: arb) -> dict:
    """{"root": poly, lo, hi}: the root of the integer polynomial ``poly`` (ascending coefficients)
    inside the ball x, with [lo, hi] ⊇ x rounded outward to SIG significant digits (rationals).

    >>> root_in([-2, 0, 1], arb(2).sqrt())["root"]["lo"]
    '141421356237/100000000000'
    """
    lo, hi = arb_to_interval(x)
    m = max(abs(lo), abs(hi))
    k = _digits_exponent(m) if m != 0 else 0
    den = fmpq(10) ** k if k >= 0 else 1 / fmpq(10) ** (-k)
    a, b = fmpq(_round(lo, k, False)) / den, fmpq(_round(hi, k, True)) / den
    return {"root": {"poly": [str(c) for c in poly], "lo": fmpq_str(a), "hi": fmpq_str(b)}}


def real(x: RealAlgebraic) -> dict:
    """An exact real: {"exact"} for a rational, else {"root": poly, lo, hi} (its isolating interval)."""
    if x.is_rational:
        return exact(x.rational)
    return {"root": {"poly": [str(c) for c in x.poly.coeffs()], "lo": fmpq_str(x.lo), "hi": fmpq_str(x.hi)}}


def matrix(X: fmpq_mat) -> dict:
    """{"matrix": rows of "p/q"}."""
    return {"matrix": to_str_rows(X)}


def listv(items: list[dict]) -> dict:
    """{"list": [...]}."""
    return {"list": list(items)}


def boolean(b: bool) -> dict:
    return {"bool": bool(b)}


def ints(xs) -> dict:
    return {"ints": [int(x) for x in xs]}


__all__ = ["SIG", "exact", "enclosure", "enclosure_q", "root_in", "real", "matrix", "listv", "boolean", "ints", "fmpz", "math"]
