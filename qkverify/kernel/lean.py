"""Lean's total functions, once (DESIGN.md, "Lean's semantics, once"; docs/MATH.md).

Mathlib makes every function total: dividing by 0, the square root of a negative
number, the sum of a family that is not summable and the inverse of a singular
matrix all have a value.  Producer and kernel evaluate every declaration with these
values, so a dropped hypothesis can always be stated and shown needed.  This module
imports only the standard library and python-flint (it lives in the kernel package;
producers import it from here).

================================  ==========================================  ==============================
Lean / Mathlib                    value                                       here
================================  ==========================================  ==============================
``x / y`` on ℝ (``div_zero``)     x / 0 = 0                                   :func:`div`
``x⁻¹`` on ℝ (``inv_zero``)       0⁻¹ = 0                                     :func:`inv`
``a - b`` on ℕ (``Nat.sub``)      max(a − b, 0)                               :func:`nat_sub`
``Real.sqrt`` (``sqrt_eq_zero'``)  √x = √(max(x, 0)), so √x = 0 for x ≤ 0      :func:`sqrt_arg`, :func:`sqrt_rat`
``tsum`` (``tsum_eq_zero_of_not_summable``)  Σ' f = 0 when f is not summable  :func:`tsum`
``Matrix.inv`` (``nonsing_inv_apply_not_isUnit``)  A⁻¹ = 0 when det A = 0     :func:`mat_inv`
``List`` padding of alphaList     the sorted list padded with 0 to length N   :func:`pad`, :func:`sort_desc`
================================  ==========================================  ==============================
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, Sequence

from flint import fmpq, fmpq_mat


def div(x: fmpq, y: fmpq) -> fmpq:
    """Lean's x / y on ℝ: x / 0 = 0.

    >>> div(fmpq(3), fmpq(4)), div(fmpq(3), fmpq(0))
    (3/4, 0)
    """
    return fmpq(0) if y == 0 else fmpq(x) / y


def inv(x: fmpq) -> fmpq:
    """Lean's x⁻¹ on ℝ: 0⁻¹ = 0.

    >>> inv(fmpq(-2)), inv(fmpq(0))
    (-1/2, 0)
    """
    return div(fmpq(1), x)


def nat_sub(a: int, b: int) -> int:
    """ℕ subtraction: a − b truncated at 0.

    >>> nat_sub(5, 3), nat_sub(3, 5)
    (2, 0)
    """
    return max(a - b, 0)


def sqrt_arg(x: fmpq) -> fmpq:
    """The number whose square root ``Real.sqrt x`` is: max(x, 0) (√x = 0 for x ≤ 0).

    >>> sqrt_arg(fmpq(-4)), sqrt_arg(fmpq(9, 4))
    (0, 9/4)
    """
    return max(fmpq(x), fmpq(0))


def sqrt_rat(x: fmpq) -> fmpq | None:
    """``Real.sqrt x`` when it is rational, else None (x ≤ 0 gives 0).

    >>> sqrt_rat(fmpq(9, 4)), sqrt_rat(fmpq(-1)), sqrt_rat(fmpq(2))
    (3/2, 0, None)
    """
    x = sqrt_arg(x)
    p, q = int(x.p), int(x.q)
    a, b = math.isqrt(p), math.isqrt(q)
    return fmpq(a, b) if a * a == p and b * b == q else None


def tsum(summable: bool, value: Any, zero: Any = None) -> Any:
    """Lean's ``∑' i, f i``: ``value`` (the sum, shown to exist) when the family is
    summable, else 0.  ``summable`` must be a decided fact, not a guess.

    >>> tsum(True, fmpq(4, 3)), tsum(False, fmpq(4, 3))
    (4/3, 0)
    """
    return value if summable else (fmpq(0) if zero is None else zero)


def mat_inv(X: fmpq_mat, Y: fmpq_mat | None = None, null: Sequence[fmpq] | None = None) -> fmpq_mat:
    """Lean's A⁻¹ of a square rational matrix, from a witness the caller supplies: the
    inverse Y (checked: X·Y = 1), or a nonzero vector v with X·v = 0 (then X is singular
    and A⁻¹ = 0).  Raises ValueError when the witness does not check.

    >>> mat_inv(fmpq_mat([[2, 0], [0, 4]]), Y=fmpq_mat([[fmpq(1, 2), 0], [0, fmpq(1, 4)]]))
    [1/2,   0]
    [  0, 1/4]
    >>> mat_inv(fmpq_mat([[1, 1], [1, 1]]), null=[fmpq(1), fmpq(-1)])
    [0, 0]
    [0, 0]
    """
    n = X.nrows()
    if X.ncols() != n:
        raise ValueError("only a square matrix has an inverse")
    if Y is not None:
        one = fmpq_mat(n, n, [int(i == j) for i in range(n) for j in range(n)])
        if Y.nrows() != n or Y.ncols() != n or X * Y != one:
            raise ValueError("the stated inverse times the matrix is not the identity")
        return Y
    if null is None or len(null) != n or not any(null):
        raise ValueError("a singular matrix needs a nonzero kernel vector")
    v = fmpq_mat([[fmpq(c)] for c in null])
    if any((X * v).entries()):
        raise ValueError("the stated kernel vector v has X·v ≠ 0")
    return fmpq_mat(n, n)


def pad(xs: Sequence[Any], n: int, zero: Any = None) -> list:
    """``xs`` padded with zeros to length n (Lean's alphaList/betaList convention).

    >>> pad([fmpq(3)], 3)
    [3, 0, 0]
    """
    return list(xs) + [fmpq(0) if zero is None else zero] * nat_sub(n, len(xs))


def sort_desc(xs: Sequence[Any], cmp: Callable[[Any, Any], int]) -> list:
    """Lean's ``sortDesc``: the entries in non-increasing order, by the exact comparison ``cmp``.

    >>> sort_desc([fmpq(1), fmpq(3), fmpq(2)], lambda a, b: (a > b) - (a < b))
    [3, 2, 1]
    """
    return sorted(xs, key=functools.cmp_to_key(lambda a, b: -cmp(a, b)))
