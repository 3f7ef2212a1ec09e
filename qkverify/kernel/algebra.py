"""Exact real numbers for the kernel: rationals, roots of integer polynomials in isolating
intervals, and certified enclosures; root counting.

A :class:`Root` is the unique root of an integer polynomial f in a rational interval
``[lo, hi]``, lo < hi, with a sign change -- a witness checker builds one only after a count
shows f has no other root there.  The kernel never bisects: a rational and a Root are
compared by one exact sign (f keeps the sign of f(lo) below the root and the other sign
above it); two Roots by their intervals when these are disjoint, and by the gcd of their
polynomials when they meet -- equal if the gcd has a root where they meet, otherwise the
certificate's intervals do not separate them and the comparison is undecided.

Root counts use one rule everywhere (:func:`roots_in`): Sturm's theorem on the square-free
part, with each endpoint counted exactly when the interval is closed there.
"""

from __future__ import annotations

from dataclasses import dataclass

from flint import arb, ctx, fmpq, fmpq_poly, fmpz_poly

from .jsonio import Undecided


def precision(bits: int):
    """Run a block with FLINT's working precision at ``bits``: python-flint's own
    ``ctx.workprec`` context manager, which restores the previous precision on exit,
    exceptions included.

    >>> before = ctx.prec
    >>> with precision(200):
    ...     ctx.prec
    200
    >>> ctx.prec == before
    True
    """
    return ctx.workprec(bits)


def sign_at(f: fmpz_poly | fmpq_poly, x: fmpq) -> int:
    """Exact sign of f(x) at a rational x."""
    v = f(x)
    return (v > 0) - (v < 0)


def mirror(f: fmpz_poly) -> fmpz_poly:
    """f(−x)."""
    return fmpz_poly([c if k % 2 == 0 else -c for k, c in enumerate(f.coeffs())])


@dataclass
class Root:
    """The unique root of ``f`` in ``[lo, hi]``, lo < hi, f(lo)·f(hi) < 0."""

    f: fmpz_poly
    lo: fmpq
    hi: fmpq

    def neg(self) -> "Root":
        """−x, as the root of f(−x) in [−hi, −lo]."""
        return Root(mirror(self.f), -self.hi, -self.lo)


@dataclass(frozen=True)
class Box:
    """A real number known only to lie in the rational interval [lo, hi] (certified);
    ``nonzero`` when it is known not to be 0 (a nonzero eigenvalue in a cell)."""

    lo: fmpq
    hi: fmpq
    nonzero: bool = False
    cell: tuple = ()  # (lo, hi, sign): the half-open cell [lo, hi) of a weights head it comes from (ν units), negated if sign < 0


Real = fmpq | Root | Box


class Coord:
    """A profile coordinate: its certified ball, its exact value when every term is
    rational, whether it is zero (decided exactly from the signs of its terms), and
    ``bounds``, rational bounds (lo, hi) when every term is a rational or a Box (the
    sums of the boxes' exact endpoints: no rounding, so a statement made from the same
    boxes is confirmed exactly)."""

    def __init__(self, ball: arb, exact: fmpq | None, zero: bool, bounds: tuple | None = None):
        self.ball, self.exact, self.zero, self.bounds = ball, exact, zero, bounds


def interval(x: Real) -> tuple[fmpq, fmpq]:
    """Rational bounds of x (a point for a rational)."""
    return (x, x) if isinstance(x, fmpq) else (x.lo, x.hi)


def is_exact(x: Real) -> bool:
    """Whether x is known exactly (a rational or a Root), not only enclosed."""
    return not isinstance(x, Box)


def sign(x: Real) -> int:
    """Exact sign of x."""
    return cmp(x, fmpq(0))


def _vs_rational(x: Root, r: fmpq) -> int:
    """cmp(x, r) for a Root x and a rational r, by one sign: f has the sign of f(lo) on
    [lo, x) and the other sign on (x, hi]."""
    if r < x.lo:
        return 1
    if r > x.hi:
        return -1
    s = sign_at(x.f, r)
    return 0 if s == 0 else (1 if s == sign_at(x.f, x.lo) else -1)


def cmp(x: Real, y: Real) -> int:
    """Exact comparison (−1, 0, 1) of two real numbers, never by bisection.

    >>> r = Root(fmpz_poly([-2, 0, 1]), fmpq(1), fmpq(2))          # √2
    >>> cmp(r, fmpq(141, 100)), cmp(r, fmpq(3, 2)), cmp(r, Root(fmpz_poly([-8, 0, 4]), fmpq(5, 4), fmpq(3, 2)))
    (1, -1, 0)
    """
    if isinstance(x, fmpq) and isinstance(y, fmpq):
        return (x > y) - (x < y)
    if isinstance(x, Box) or isinstance(y, Box):
        (xl, xh), (yl, yh) = interval(x), interval(y)
        if isinstance(x, Box) and x.nonzero and y == 0 and (xl >= 0 or xh <= 0):
            return 1 if xl >= 0 else -1
        if isinstance(y, Box) and y.nonzero and x == 0 and (yl >= 0 or yh <= 0):
            return -1 if yl >= 0 else 1
        if xh < yl:
            return -1
        if yh < xl:
            return 1
        raise Undecided("two enclosures overlap: the certificate's cells are too coarse to order them")
    if isinstance(y, fmpq):
        return _vs_rational(x, y)
    if isinstance(x, fmpq):
        return -_vs_rational(y, x)
    if x.hi < y.lo:
        return -1
    if y.hi < x.lo:
        return 1
    if _same(x, y):
        return 0
    raise Undecided("two different algebraic numbers in intervals that meet: the certificate's isolating "
                    "intervals do not separate them")


def _has_root_in(g: fmpz_poly, lo: fmpq, hi: fmpq) -> bool:
    """Whether g (a divisor of a polynomial with exactly one root in [lo, hi], nonzero at
    both ends) has a root there."""
    return g.degree() >= 1 and sign_at(g, lo) * sign_at(g, hi) < 0


def _same(x: Root, y: Root) -> bool:
    """Exact equality of two Roots whose intervals meet: x is the only root of gcd(f_x, f_y) in
    x's interval (if any), and x = y iff that root lies in y's interval too."""
    lo, hi = max(x.lo, y.lo), min(x.hi, y.hi)
    g = x.f.gcd(y.f)
    if not _has_root_in(g, x.lo, x.hi):
        return False
    if lo == hi:
        return sign_at(g, lo) == 0
    return sign_at(g, lo) == 0 or sign_at(g, hi) == 0 or _has_root_in(g, lo, hi)


def is_root(f: fmpz_poly, x: Real) -> bool:
    """Whether f(x) = 0 for an exact real x (a rational, or a Root: then the gcd of f
    and the Root's polynomial must have a root in its interval)."""
    if isinstance(x, fmpq):
        return sign_at(f, x) == 0
    return _has_root_in(x.f.gcd(f), x.lo, x.hi)


def to_arb(x: Real, bits: int = 0) -> arb:
    """A ball containing x: the point, the enclosure, or the Root's interval as the certificate
    gave it (the kernel does not refine it; ``bits`` is kept for callers' clarity)."""
    if isinstance(x, fmpq):
        return arb(x)
    return arb(x.lo).union(arb(x.hi))


def arb_inside(v: arb, lo: fmpq, hi: fmpq) -> bool:
    """Whether the ball v lies inside the rational interval [lo, hi]."""
    return bool(v.lower() >= arb(lo)) and bool(v.upper() <= arb(hi))


# ---------------------------------------------------------------------------
# root counting: one rule


def squarefree(f: fmpz_poly) -> fmpz_poly:
    """f / gcd(f, f'): the same roots, each once."""
    return f if f.degree() < 1 else f // f.gcd(f.derivative())


def sturm_count(f: fmpz_poly, lo: fmpq, hi: fmpq) -> int:
    """Number of distinct real roots of f in the half-open interval (lo, hi] (Sturm)."""
    p0 = fmpq_poly(squarefree(f))
    seq = [p0, p0.derivative()]
    while seq[-1].degree() > 0:
        seq.append(-(seq[-2] % seq[-1]))

    def variations(x: fmpq) -> int:
        signs = [s for s in (sign_at(p, x) for p in seq) if s]
        return sum(1 for a, b in zip(signs, signs[1:]) if a != b)

    return variations(lo) - variations(hi)


def roots_in(f: fmpz_poly, lo: fmpq, hi: fmpq, lo_closed: bool = True, hi_closed: bool = False) -> int:
    """Distinct real roots of f in the interval from lo to hi, each end closed or open as
    given (default: the half-open [lo, hi) of a cell).  Sturm counts (lo, hi]; an endpoint
    root is added or removed by its exact sign.

    >>> f = fmpz_poly([-2, 1]) * fmpz_poly([-8, 1])                  # roots 2 and 8
    >>> roots_in(f, fmpq(2), fmpq(8)), roots_in(f, fmpq(2), fmpq(8), False, True), roots_in(f, fmpq(2), fmpq(2), True, True)
    (1, 1, 1)
    """
    if f.degree() < 1 or lo > hi or (lo == hi and not (lo_closed and hi_closed)):
        return 0
    if lo == hi:
        return int(sign_at(f, lo) == 0)
    return sturm_count(f, lo, hi) + (lo_closed and sign_at(f, lo) == 0) - (not hi_closed and sign_at(f, hi) == 0)


def isolates(f: fmpz_poly, lo: fmpq, hi: fmpq) -> bool:
    """Whether [lo, hi] is an isolation proof for a root of f: lo = hi a rational root, or
    lo < hi with a sign change and no other distinct root of f in [lo, hi] (Sturm).

    >>> isolates(fmpz_poly([60, -32, 1]), fmpq(0), fmpq(100)), isolates(fmpz_poly([60, -32, 1]), fmpq(0), fmpq(10))
    (False, True)
    """
    if f.degree() < 1 or lo > hi:
        return False
    if lo == hi:
        return sign_at(f, lo) == 0
    return sign_at(f, lo) * sign_at(f, hi) < 0 and roots_in(f, lo, hi, True, True) == 1


def count_with_multiplicity(f: fmpz_poly, lo: fmpq, hi: fmpq) -> int:
    """Number of roots of f in the half-open interval [lo, hi), with multiplicity."""
    c, fac = f.factor_squarefree()
    return sum(roots_in(g, lo, hi) * m for g, m in fac)


def power_sum_2(f: fmpz_poly) -> fmpq:
    """Σ r² over the complex roots r of f (with multiplicity), by Newton's identities."""
    cs = f.coeffs()
    d = len(cs) - 1
    if d < 1:
        return fmpq(0)
    an = cs[d]
    e1 = fmpq(-cs[d - 1], an)
    e2 = fmpq(cs[d - 2], an) if d >= 2 else fmpq(0)
    return e1 * e1 - 2 * e2


# ---------------------------------------------------------------------------
# a + b√s: the entries of a normalised vector, of a factor of a rank-one matrix


class Quad:
    """a + b√s with a, b, s rational, s ≥ 0; a rational (b = 0) mixes with any s.

    >>> x = Quad(1, 1, 2)              # 1 + √2
    >>> (x * x).a, (x * x).b           # 3 + 2√2
    (3, 2)
    >>> Quad(1, -1, 2).sign(), (x - x).sign()
    (-1, 0)
    """

    __slots__ = ("a", "b", "s")

    def __init__(self, a, b=0, s=1):
        self.a, self.b, self.s = fmpq(a), fmpq(b), fmpq(s)

    @staticmethod
    def _c(y):
        return y if isinstance(y, Quad) else Quad(y)

    def __add__(self, y):
        y = self._c(y)
        return Quad(self.a + y.a, self.b + y.b, self.s if self.b else y.s)

    __radd__ = __add__

    def __neg__(self):
        return Quad(-self.a, -self.b, self.s)

    def __sub__(self, y):
        return self + -self._c(y)

    def __rsub__(self, y):
        return self._c(y) - self

    def __mul__(self, y):
        y = self._c(y)
        s = self.s if self.b else y.s
        return Quad(self.a * y.a + self.b * y.b * s, self.a * y.b + self.b * y.a, s)

    __rmul__ = __mul__

    def sign(self) -> int:
        """Exact sign: a and b√s compared by squaring when their signs differ."""
        sa, sb = (self.a > 0) - (self.a < 0), (self.b > 0) - (self.b < 0)
        if self.s == 0:
            sb = 0
        if sb == 0 or sa == sb or sa == 0:
            return sa or sb
        d = self.a ** 2 - self.b ** 2 * self.s
        return sa if d > 0 else (sb if d < 0 else 0)

    def __eq__(self, y):
        return (self - y).sign() == 0

    __hash__ = None

    def div(self, y) -> "Quad":
        """Lean's x / y (x / 0 = 0)."""
        y = self._c(y)
        n = y.a ** 2 - y.b ** 2 * y.s
        return Quad(0) if y.sign() == 0 else self * Quad(y.a / n, -y.b / n, y.s)

    def rational(self) -> fmpq:
        from .jsonio import require

        require(self.b == 0, "value", "an irrational value where a rational one is needed")
        return self.a

    def real(self) -> "fmpq | Root":
        """A rational, or the Root of t² − 2at + a² − b²s in a bracket from an integer square root."""
        import math

        p, d = int(self.s.p), int(self.s.q)
        r = math.isqrt(p * d)
        if self.b == 0 or r * r == p * d:
            return self.a + self.b * fmpq(r, d)
        k = 64 + p.bit_length() + d.bit_length()
        t = math.isqrt((p * d) << (2 * k))           # √s = √(pd)/d ∈ [t, t + 1]/(d·2^k)
        lo, hi = sorted(self.a + self.b * fmpq(v, d << k) for v in (t, t + 1))
        c = [self.a ** 2 - self.b ** 2 * self.s, -2 * self.a, fmpq(1)]
        den = math.lcm(*(int(x.q) for x in c))
        return Root(fmpz_poly([int(x.p) * (den // int(x.q)) for x in c]), lo, hi)


# ---------------------------------------------------------------------------
# non-real eigenvalues: boxes and the Krawczyk test


@dataclass(frozen=True)
class CBox:
    """A non-real eigenvalue in the square re ± r + i(im ± r) (im > r > 0); listed twice in a
    spectrum, for it and for its conjugate in the mirror image (same modulus)."""

    re: fmpq
    im: fmpq
    r: fmpq

    def mod2(self) -> tuple[fmpq, fmpq]:
        """Bounds of |z|² over the box."""
        a = max(abs(self.re) - self.r, fmpq(0))
        b = self.im - self.r
        return a * a + b * b, (abs(self.re) + self.r) ** 2 + (self.im + self.r) ** 2


def _strictly_inside(x: arb, lo: fmpq, hi: fmpq) -> bool:
    return bool(x.is_finite() and x.lower() > arb(lo) and x.upper() < arb(hi))


def krawczyk(g: fmpz_poly, b: CBox, prec: int) -> bool:
    """The Krawczyk operator K = c − g(c)/g'(c) + (1 − g'(B)/g'(c))(B − c) of g on the box B
    (centre c) lies strictly inside B: then z ↦ z − g(z)/g'(c) maps B into itself and B
    holds a root of g (Brouwer)."""
    from flint import acb, acb_poly

    with precision(prec):
        gp = acb_poly([acb(c) for c in g.coeffs()])
        dg = gp.derivative()
        c = acb(arb(b.re), arb(b.im))
        B = acb(arb(b.re, b.r), arb(b.im, b.r))
        dc = dg(c)
        if dc.real.contains(0) and dc.imag.contains(0):
            return False
        K = c - gp(c) / dc + (1 - dg(B) / dc) * (B - c)
        return (_strictly_inside(K.real, b.re - b.r, b.re + b.r)
                and _strictly_inside(K.imag, b.im - b.r, b.im + b.r))
