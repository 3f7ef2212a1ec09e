"""Exact real numbers for the kernel: rationals, roots of integer polynomials
in isolating intervals, and certified enclosures; root counting.

A :class:`Root` is the unique root of a square-free integer polynomial in a
rational interval ``[lo, hi]`` with ``lo < hi`` and a sign change -- the
witness checkers only build one after checking that.  Comparisons between
rationals and roots are decided exactly (bisection by exact signs; equality
through the gcd of the two polynomials), so they never need a tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass

from flint import arb, ctx, fmpq, fmpq_poly, fmpz_poly

from .jsonio import Undecided

#: bisection steps allowed for one comparison before answering "undecided"
MAX_BISECTIONS = 4000


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


@dataclass
class Root:
    """The unique root of ``f`` (square-free) in ``[lo, hi]``, lo < hi, f(lo)·f(hi) < 0."""

    f: fmpz_poly
    lo: fmpq
    hi: fmpq

    def bisect(self) -> None:
        mid = (self.lo + self.hi) / 2
        s = sign_at(self.f, mid)
        if s == 0:  # a rational root: callers see lo == hi
            self.lo = self.hi = mid
        elif s == sign_at(self.f, self.lo):
            self.lo = mid
        else:
            self.hi = mid

    def neg(self) -> "Root":
        """−x, as the root of f(−x) in [−hi, −lo]."""
        g = fmpz_poly([c if k % 2 == 0 else -c for k, c in enumerate(self.f.coeffs())])
        return Root(g, -self.hi, -self.lo)


@dataclass(frozen=True)
class Box:
    """A real number known only to lie in the rational interval [lo, hi] (certified);
    ``nonzero`` when it is known not to be 0 (a nonzero eigenvalue in a cell)."""

    lo: fmpq
    hi: fmpq
    nonzero: bool = False
    cell: tuple = ()  # (lo, hi, count, sign): the cell of a weights head it comes from (ν units)


Real = fmpq | Root | Box


def interval(x: Real) -> tuple[fmpq, fmpq]:
    """Rational bounds of x (a point for a rational)."""
    return (x, x) if isinstance(x, fmpq) else (x.lo, x.hi)


def is_exact(x: Real) -> bool:
    """Whether x is known exactly (a rational or a Root), not only enclosed."""
    return not isinstance(x, Box)


def _settle(x: Real) -> Real:
    return x.lo if isinstance(x, Root) and x.lo == x.hi else x


def sign(x: Real) -> int:
    """Exact sign of x."""
    return cmp(x, fmpq(0))


def cmp(x: Real, y: Real) -> int:
    """Exact comparison (−1, 0, 1) of two real numbers given exactly.

    Raises Undecided only if MAX_BISECTIONS bisections do not separate two
    numbers the gcd test found different (it does not happen for inputs
    within the kernel's size limits)."""
    x, y = _settle(x), _settle(y)
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
    if _same(x, y):
        return 0
    for _ in range(MAX_BISECTIONS):
        (xl, xh), (yl, yh) = interval(x), interval(y)
        if xh < yl:
            return -1
        if yh < xl:
            return 1
        for z in (x, y):
            if isinstance(z, Root):
                z.bisect()
        x, y = _settle(x), _settle(y)
        if isinstance(x, fmpq) and isinstance(y, fmpq):
            return (x > y) - (x < y)
    raise Undecided(f"comparison not separated after {MAX_BISECTIONS} bisections")


def _has_root_in(g: fmpz_poly, lo: fmpq, hi: fmpq) -> bool:
    """Whether g (a divisor of a square-free polynomial with at most one root
    in [lo, hi], nonzero at both ends) has a root there."""
    return g.degree() >= 1 and sign_at(g, lo) * sign_at(g, hi) < 0


def _same(x: Real, y: Real) -> bool:
    """Exact equality test of two reals, at least one a Root."""
    if isinstance(x, fmpq):
        x, y = y, x
    if isinstance(y, fmpq):  # x Root, y rational: equal iff y is the root in x's interval
        return x.lo <= y <= x.hi and sign_at(x.f, y) == 0
    lo, hi = max(x.lo, y.lo), min(x.hi, y.hi)
    if lo > hi:
        return False
    g = x.f.gcd(y.f)
    # x is the only root of g in its interval (if any); x = y iff that root lies
    # in y's interval too.  g is nonzero at every interval endpoint (the Roots'
    # polynomials are), so a sign change is the test.
    return _has_root_in(g, x.lo, x.hi) and _has_root_in(g, lo, hi)


def is_root(f: fmpz_poly, x: Real) -> bool:
    """Whether f(x) = 0 for an exact real x (a rational, or a Root: then the gcd of f
    and the Root's polynomial must have a root in its interval)."""
    if isinstance(x, fmpq):
        return sign_at(f, x) == 0
    return _has_root_in(x.f.gcd(f), x.lo, x.hi)


def to_arb(x: Real, bits: int) -> arb:
    """A ball containing x, refined by bisection to about ``bits`` bits (relative)."""
    if isinstance(x, fmpq):
        return arb(x)
    if isinstance(x, Box):
        return arb(x.lo).union(arb(x.hi))
    target = fmpq(1, 2 ** bits) * max(abs(x.lo), abs(x.hi), fmpq(1, 2 ** 64))
    steps = 0
    while isinstance(x, Root) and x.hi - x.lo > target and x.lo != x.hi:
        x.bisect()
        steps += 1
        if steps > MAX_BISECTIONS:
            raise Undecided("enclosure refinement exceeded its bisection limit")
    return arb(x.lo).union(arb(x.hi))


def arb_inside(v: arb, lo: fmpq, hi: fmpq) -> bool:
    """Whether the ball v lies inside the rational interval [lo, hi]."""
    return bool(v.lower() >= arb(lo)) and bool(v.upper() <= arb(hi))


# ---------------------------------------------------------------------------
# root counting


def sturm_count(f: fmpz_poly, lo: fmpq, hi: fmpq) -> int:
    """Number of distinct real roots of f in the half-open interval (lo, hi] (Sturm)."""
    p0 = fmpq_poly(f)
    seq = [p0, p0.derivative()]
    while seq[-1].degree() > 0:
        seq.append(-(seq[-2] % seq[-1]))

    def variations(x: fmpq) -> int:
        signs = [s for s in (sign_at(p, x) for p in seq) if s]
        return sum(1 for a, b in zip(signs, signs[1:]) if a != b)

    return variations(lo) - variations(hi)


def count_with_multiplicity(f: fmpz_poly, lo: fmpq, hi: fmpq) -> int:
    """Number of roots of f in the half-open interval [lo, hi), with multiplicity."""
    c, fac = f.factor_squarefree()
    total = 0
    for g, m in fac:
        k = sturm_count(g, lo, hi) + (sign_at(g, lo) == 0) - (sign_at(g, hi) == 0)
        total += k * m
    return total


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
