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
