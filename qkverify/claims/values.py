"""Certificate value objects (format 2) from the producer's exact objects.

Enclosures are rounded OUTWARD to ``SIG`` significant decimal digits from a
rigorous FLINT ball, which is deterministic: the same input gives the same
digits on every machine.

>>> exact(fmpq(3, 4))
{'exact': '3/4'}
>>> enclosure_q(fmpq(1, 3), fmpq(1, 3))
{'enclosure': ['0.333333333333', '0.333333333334']}
>>> enclosure_q(fmpq(-5, 7), fmpq(0))
{'enclosure': ['-0.714285714286', '1e-12']}
"""

from __future__ import annotations

import math

from flint import arb, fmpq, fmpq_mat, fmpz

from ..exact.algebraic import RealAlgebraic, arb_to_interval
from ..exact.matrix import to_str_rows
from ..exact.intervals import decimal_bounds, outward
from ..exact.rational import fmpq_str

#: significant decimal digits of a stated enclosure
SIG = 12


def exact(q) -> dict:
    """{"exact": "p/q"}."""
    return {"exact": fmpq_str(fmpq(q))}


def enclosure_q(lo: fmpq, hi: fmpq) -> dict:
    """{"enclosure": [lo', hi']} with lo' < lo, hi < hi' strictly (so a finer enclosure of
    the same value, the kernel's, always fits inside), SIG significant digits."""
    return {"enclosure": list(decimal_bounds(lo, hi, SIG, strict=True))}


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
    a, b = outward(*arb_to_interval(x), SIG, strict=True)
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
