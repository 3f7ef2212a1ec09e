"""Exact arithmetic in a real quadratic field ℚ(√s).

A normalised spectrum λ = μ/‖μ‖ of a rational vector μ lives in ℚ(√s) with
s = ‖μ‖² (each entry is (μ_i/s)·√s), and so do the statistics of Appendices B
and C built from it.  :class:`Quad` keeps such a number exactly as a + b√s;
signs and equalities are decided exactly (no enclosure needed), enclosures are
computed from an exact bracket of √s.

>>> r2 = Quad(0, 1, 2)
>>> (r2 * r2) == 2, (1 / (1 + r2)) == Quad(-1, 1, 2)
(True, True)
>>> Quad(3, -2, 2).sign()           # 3 − 2√2 > 0 since 9 > 8
1
>>> Quad(1, 1, 9).is_rational, Quad(1, 1, 9).a   # √9 = 3 folds in
(True, 4)
"""

from __future__ import annotations

import math

from flint import arb, ctx, fmpq, fmpz_poly

from ..errors import QKInputError


def rational_sqrt(q: fmpq) -> fmpq | None:
    """The rational square root of q ≥ 0 when it exists, else None.

    >>> rational_sqrt(fmpq(9, 4)), rational_sqrt(fmpq(2))
    (3/2, None)
    """
    q = fmpq(q)
    if q < 0:
        return None
    p, d = int(q.p), int(q.q)
    rp, rd = math.isqrt(p), math.isqrt(d)
    return fmpq(rp, rd) if rp * rp == p and rd * rd == d else None


def sqrt_bracket(s: fmpq, bits: int = 128) -> tuple[fmpq, fmpq]:
    """Rationals lo ≤ √s ≤ hi with hi − lo ≤ 2^−bits/q (exact integer square roots, s ≥ 0)."""
    s = fmpq(s)
    p, q = int(s.p), int(s.q)
    k = 1 << bits
    r = math.isqrt(p * q * k * k)
    lo = fmpq(r, q * k)
    return lo, (lo if r * r == p * q * k * k else fmpq(r + 1, q * k))


class Quad:
    """a + b√s with a, b rational and s > 0 rational.  When s is a rational square the
    number is folded to a rational (b = 0).  Numbers of different fields do not mix
    (ValueError), rationals mix with everything."""

    __slots__ = ("a", "b", "s")

    def __init__(self, a, b=0, s=1):
        a, b, s = fmpq(a), fmpq(b), fmpq(s)
        if s <= 0:
            raise QKInputError("ℚ(√s) needs s > 0")
        r = rational_sqrt(s) if b != 0 else None
        if b == 0 or r is not None:
            a, b, s = a + (b * r if r is not None else 0), fmpq(0), fmpq(1)
        self.a, self.b, self.s = a, b, s

    # -- structure --------------------------------------------------------
    @property
    def is_rational(self) -> bool:
        return self.b == 0

    def _lift(self, y) -> "Quad":
        if isinstance(y, Quad):
            if not y.is_rational and not self.is_rational and y.s != self.s:
                raise ValueError(f"ℚ(√{self.s}) and ℚ(√{y.s}) do not mix")
            return y
        return Quad(y)

    def _s(self, y: "Quad") -> fmpq:
        return self.s if not self.is_rational else y.s

    # -- field operations -------------------------------------------------
    def __add__(self, y):
        y = self._lift(y)
        return Quad(self.a + y.a, self.b + y.b, self._s(y))

    __radd__ = __add__

    def __neg__(self):
        return Quad(-self.a, -self.b, self.s)

    def __sub__(self, y):
        return self + (-self._lift(y))

    def __rsub__(self, y):
        return self._lift(y) - self

    def __mul__(self, y):
        y = self._lift(y)
        s = self._s(y)
        return Quad(self.a * y.a + self.b * y.b * s, self.a * y.b + self.b * y.a, s)

    __rmul__ = __mul__

    def inverse(self) -> "Quad":
        """1/x (ZeroDivisionError for 0)."""
        n = self.a * self.a - self.b * self.b * self.s
        if n == 0:
            raise ZeroDivisionError("inverse of 0 in ℚ(√s)")
        return Quad(self.a / n, -self.b / n, self.s)

    def __truediv__(self, y):
        return self * self._lift(y).inverse()

    def __rtruediv__(self, y):
        return self._lift(y) * self.inverse()

    def __pow__(self, k: int):
        out = Quad(1)
        for _ in range(k):
            out = out * self
        return out

    # -- order ------------------------------------------------------------
    def sign(self) -> int:
        """Exact sign of a + b√s."""
        a, b = self.a, self.b
        sa, sb = (a > 0) - (a < 0), (b > 0) - (b < 0)
        if sb == 0 or sa == sb:
            return sa if sa else sb
        if sa == 0:
            return sb
        d = a * a - b * b * self.s   # a and b√s of opposite signs: the larger magnitude wins
        return sa if d > 0 else (sb if d < 0 else 0)

    def __eq__(self, y) -> bool:
        return (self - self._lift(y)).sign() == 0

    def __hash__(self):
        return hash((self.a, self.b, self.s))

    def __lt__(self, y):
        return (self - y).sign() < 0

    def __le__(self, y):
        return (self - y).sign() <= 0

    def __gt__(self, y):
        return (self - y).sign() > 0

    def __ge__(self, y):
        return (self - y).sign() >= 0

    def __abs__(self):
        return -self if self.sign() < 0 else self

    # -- output -----------------------------------------------------------
    def to_arb(self, bits: int = 128) -> arb:
        """A ball containing the number, computed at ``bits`` bits of working precision
        (√s bracketed to about ``bits`` bits; rigorous at any ``bits``)."""
        with ctx.workprec(bits):
            if self.is_rational:
                return arb(self.a)
            lo, hi = sqrt_bracket(self.s, bits)
            return arb(self.a) + arb(self.b) * (arb(lo).union(arb(hi)))

    def min_poly(self) -> fmpz_poly:
        """The integer polynomial of least degree with this root, primitive, positive leading
        coefficient: q·t − p for a rational, else a multiple of t² − 2at + a² − b²s."""
        if self.is_rational:
            return fmpz_poly([-self.a.p, self.a.q])
        c = [self.a * self.a - self.b * self.b * self.s, -2 * self.a, fmpq(1)]
        den = 1
        for x in c:
            den = den * int(x.q) // math.gcd(den, int(x.q))
        ints = [int(x.p) * (den // int(x.q)) for x in c]
        g = math.gcd(*ints)
        return fmpz_poly([v // g for v in ints])

    def isolating_interval(self, bits: int = 128) -> tuple[fmpq, fmpq]:
        """Rational lo < hi around an irrational value, excluding its conjugate a − b√s."""
        lo, hi = sqrt_bracket(self.s, bits)
        ends = sorted((self.a + self.b * lo, self.a + self.b * hi))
        return ends[0], ends[1]

    def sympy(self):
        """The number as a sympy expression (for display: √18 prints as 3*sqrt(2))."""
        import sympy

        a = sympy.Rational(int(self.a.p), int(self.a.q))
        if self.is_rational:
            return a
        b = sympy.Rational(int(self.b.p), int(self.b.q))
        return a + b * sympy.sqrt(sympy.Rational(int(self.s.p), int(self.s.q)))

    def __repr__(self) -> str:
        return str(self.sympy())

    __str__ = __repr__


def lean_div(x, y):
    """Lean's division x / y with x / 0 = 0, for rationals and Quads."""
    y = y if isinstance(y, Quad) else Quad(y)
    return Quad(0) if y.sign() == 0 else x / y


def sqrt_q(q: fmpq) -> Quad:
    """Lean's Real.sqrt of a rational as an element of ℚ(√q) (0 for q ≤ 0).

    >>> sqrt_q(fmpq(8)), sqrt_q(fmpq(-1))
    (2*sqrt(2), 0)
    """
    q = fmpq(q)
    return Quad(0) if q <= 0 else Quad(0, 1, q)
