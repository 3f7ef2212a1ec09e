"""Exact real algebraic numbers and exact real spectra.

A :class:`RealAlgebraic` is an irreducible integer polynomial (primitive,
positive leading coefficient) together with the index of one of its real
roots (ascending order) and an isolating interval with rational endpoints
that contains exactly that root.  Rationals are kept as exact ``fmpq``.
Comparison and equality between any two such numbers are decided exactly:
two different irreducible polynomials have no common root, so their roots
differ and interval refinement separates them in finitely many steps; roots
of the same polynomial are equal iff their indices are.

Root isolation uses FLINT's certified ``fmpz_poly.complex_roots`` (every
returned ball contains exactly one root); every interval is re-checked by an
exact sign change of the polynomial at its rational endpoints.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from typing import Callable

from flint import arb, arb_poly, ctx, fmpq, fmpq_mat, fmpz_poly

from .rational import fmpq_str

# ---------------------------------------------------------------------------
# helpers


def arb_to_interval(x: arb) -> tuple[fmpq, fmpq]:
    """Exact rational endpoints [mid − rad, mid + rad] of an arb ball."""
    m, e = x.mid().man_exp()
    mid = fmpq(int(m)) * _pow2(int(e))
    r, er = x.rad().man_exp()
    rad = fmpq(int(r)) * _pow2(int(er))
    return mid - rad, mid + rad


def _pow2(e: int) -> fmpq:
    return fmpq(2) ** e if e >= 0 else fmpq(1, 2 ** (-e))


def interval_to_arb(lo: fmpq, hi: fmpq, prec: int) -> arb:
    """Smallest convenient arb ball containing the rational interval [lo, hi], its endpoints
    rounded outward at ``prec`` bits (rigorous at any ``prec``; ``prec`` only sets the width)."""
    with ctx.workprec(prec):
        if lo == hi:
            return arb(lo)
        return arb(lo).union(arb(hi))


def normalize(f: fmpz_poly) -> fmpz_poly:
    """Primitive part with positive leading coefficient."""
    c = f.content()
    if c != 1 and c != 0:
        f = fmpz_poly([x // c for x in f.coeffs()])
    if f.leading_coefficient() < 0:
        f = -f
    return f


def _sign(f: fmpz_poly, x: fmpq) -> int:
    v = f(x)
    return (v > 0) - (v < 0)


@functools.lru_cache(maxsize=4096)
def _isolate_cached(coeffs: tuple[int, ...], prec: int) -> tuple[tuple[fmpq, fmpq], ...]:
    f = fmpz_poly(list(coeffs))
    with ctx.workprec(max(prec, 53)):
        roots = f.complex_roots()
    out = []
    for r, mult in roots:
        if not r.imag.is_zero():
            continue
        if mult != 1:
            raise ArithmeticError("isolation called on a polynomial that is not square-free")
        lo, hi = arb_to_interval(r.real)
        out.append((lo, hi))
    out.sort(key=lambda t: t[0])
    # exact re-check (once per cached result): sign change at rational endpoints
    # and disjoint intervals
    for lo, hi in out:
        if lo != hi and _sign(f, lo) * _sign(f, hi) >= 0:
            if _sign(f, lo) == 0 or _sign(f, hi) == 0:
                continue  # a rational root sitting on an endpoint; caller handles
            raise ArithmeticError("root isolation lost its sign change")
    for (a, b), (c, d) in zip(out, out[1:]):
        if b >= c:
            raise ArithmeticError("isolating intervals overlap")
    return tuple(out)


def isolate_real_roots(f: fmpz_poly, prec: int = 53) -> list[tuple[fmpq, fmpq]]:
    """Isolating intervals (ascending, rational endpoints) of the real roots
    of a square-free integer polynomial, each of width about 2^-prec relative
    (FLINT's certified complex_roots).  Each interval with lo < hi is checked
    exactly to carry a sign change, and the intervals to be disjoint."""
    return list(_isolate_cached(tuple(int(c) for c in f.coeffs()), prec))


# ---------------------------------------------------------------------------


@dataclass
class RealAlgebraic:
    """A real algebraic number, exact.

    poly   -- irreducible fmpz_poly, primitive, positive leading coefficient
              (degree 1 for rationals)
    index  -- which real root of ``poly``, counting from the smallest (0-based)
    lo, hi -- rational isolating interval (lo == hi for a rational)
    """

    poly: fmpz_poly
    index: int
    lo: fmpq
    hi: fmpq

    # -- constructors -----------------------------------------------------
    @staticmethod
    def from_rational(q) -> "RealAlgebraic":
        q = fmpq(q)
        return RealAlgebraic(normalize(fmpz_poly([-q.p, q.q])), 0, q, q)

    @property
    def is_rational(self) -> bool:
        return self.poly.degree() == 1

    @property
    def rational(self) -> fmpq | None:
        if self.poly.degree() != 1:
            return None
        c0, c1 = (int(x) for x in self.poly.coeffs())
        return fmpq(-c0, c1)

    def sign(self) -> int:
        if self.is_rational:
            q = self.rational
            return (q > 0) - (q < 0)
        if self.lo >= 0:
            return 1
        if self.hi <= 0:
            return -1
        # 0 is not a root of an irreducible polynomial of degree ≥ 2
        return 1 if _sign(self.poly, fmpq(0)) * _sign(self.poly, self.hi) < 0 else -1

    def refine(self, width: fmpq) -> "RealAlgebraic":
        """Bisect (exactly) until hi − lo ≤ width; returns self."""
        if self.is_rational:
            return self
        f = self.poly
        s_lo = _sign(f, self.lo)
        while self.hi - self.lo > width:
            mid = (self.lo + self.hi) / 2
            s = _sign(f, mid)
            if s == 0:
                raise ArithmeticError("irreducible polynomial of degree ≥ 2 vanished at a rational")
            if s == s_lo:
                self.lo = mid
            else:
                self.hi = mid
        return self

    def refine_bits(self, prec: int) -> "RealAlgebraic":
        """Re-isolate at about ``prec`` bits with FLINT (fast for large prec)."""
        if self.is_rational:
            return self
        ivs = isolate_real_roots(self.poly, prec)
        lo, hi = ivs[self.index]
        if lo > self.lo:
            self.lo = lo
        if hi < self.hi:
            self.hi = hi
        return self

    def to_arb(self, prec: int = 53) -> arb:
        """Rigorous arb enclosure, about ``prec`` bits wide."""
        if self.is_rational:
            with ctx.workprec(prec):
                return arb(self.rational)
        w = (self.hi - self.lo)
        if w > 0 and w > _pow2(-prec) * max(abs(self.lo), abs(self.hi), fmpq(1, 2**30)):
            self.refine_bits(prec + 10)
        return interval_to_arb(self.lo, self.hi, prec + 10)

    def __neg__(self) -> "RealAlgebraic":
        if self.is_rational:
            return RealAlgebraic.from_rational(-self.rational)
        c = [int(x) for x in self.poly.coeffs()]
        g = normalize(fmpz_poly([x if k % 2 == 0 else -x for k, x in enumerate(c)]))
        nreal = len(isolate_real_roots(self.poly, 53))
        return RealAlgebraic(g, nreal - 1 - self.index, -self.hi, -self.lo)

    def scale(self, k: fmpq) -> "RealAlgebraic":
        """k·self for rational k > 0 (exact)."""
        k = fmpq(k)
        if k <= 0:
            raise ValueError("scale needs k > 0")
        if self.is_rational:
            return RealAlgebraic.from_rational(self.rational * k)
        # root of f(x/k): coefficients c_i k^{-i}; clear denominators
        c = [fmpq(int(x)) for x in self.poly.coeffs()]
        d = len(c) - 1
        cc = [ci * k ** (d - i) for i, ci in enumerate(c)]  # k^d f(x/k)
        den = 1
        for x in cc:
            den = den * x.q // math.gcd(den, x.q)
        g = normalize(fmpz_poly([int(x * den) for x in cc]))
        return RealAlgebraic(g, self.index, self.lo * k, self.hi * k)

    # -- exact comparison -------------------------------------------------
    def cmp(self, other: "RealAlgebraic") -> int:
        """−1, 0, 1: exact comparison of two real algebraic numbers."""
        a, b = self, other
        if a.is_rational and b.is_rational:
            x, y = a.rational, b.rational
            return (x > y) - (x < y)
        if a.poly == b.poly:
            return (a.index > b.index) - (a.index < b.index)
        # different irreducible polynomials: the numbers differ; separate them
        while True:
            if a.hi < b.lo:
                return -1
            if b.hi < a.lo:
                return 1
            if a.is_rational:
                q = a.rational
                b._exclude(q)
                continue
            if b.is_rational:
                a._exclude(b.rational)
                continue
            a.refine((a.hi - a.lo) / 4)
            b.refine((b.hi - b.lo) / 4)

    def _exclude(self, q: fmpq) -> None:
        """Shrink the interval so it no longer contains the rational q
        (q is not a root since poly is irreducible of degree ≥ 2)."""
        if not (self.lo <= q <= self.hi):
            return
        s_lo = _sign(self.poly, self.lo)
        s_q = _sign(self.poly, q)
        if s_q == s_lo:
            self.lo = q
        else:
            self.hi = q
        if self.lo == q or self.hi == q:
            # make the containment strict by one more bisection step
            self.refine((self.hi - self.lo) / 2)

    def __eq__(self, other) -> bool:  # exact
        if not isinstance(other, RealAlgebraic):
            other = RealAlgebraic.from_rational(other)
        return self.cmp(other) == 0

    def __lt__(self, other) -> bool:
        return self.cmp(other) < 0

    def __le__(self, other) -> bool:
        return self.cmp(other) <= 0

    def __hash__(self) -> int:
        return hash((tuple(int(c) for c in self.poly.coeffs()), self.index))

    # -- presentation -----------------------------------------------------
    def to_json(self) -> dict:
        """Certificate form: polynomial (ascending integer coefficients as
        strings), root index and rational isolating interval."""
        return {
            "poly": [str(int(c)) for c in self.poly.coeffs()],
            "root_index": self.index,
            "interval": [fmpq_str(self.lo), fmpq_str(self.hi)],
        }

    def decimal(self, digits: int = 20) -> str:
        prec = int(digits * 3.33) + 20
        return self.to_arb(prec).str(digits, radius=False)

    def __repr__(self) -> str:
        if self.is_rational:
            return f"RealAlgebraic({fmpq_str(self.rational)})"
        return f"RealAlgebraic(root {self.index} of {self.poly} in [{self.lo}, {self.hi}])"


def real_roots(p: fmpz_poly) -> list[tuple[RealAlgebraic, int]]:
    """All real roots of a nonzero integer polynomial with multiplicity,
    ascending, as exact RealAlgebraic numbers (irreducible factorisation by
    FLINT, isolation per factor)."""
    if p.is_zero():
        raise ValueError("the zero polynomial has every number as a root")
    _, facs = p.factor()
    out: list[tuple[RealAlgebraic, int]] = []
    for f, e in facs:
        f = normalize(f)
        if f.degree() == 1:
            out.append((RealAlgebraic(f, 0, *(2 * [fmpq(-int(f.coeffs()[0]), int(f.coeffs()[1]))])), e))
            continue
        for k, (lo, hi) in enumerate(isolate_real_roots(f)):
            out.append((RealAlgebraic(f, k, lo, hi), e))
    out.sort(key=functools.cmp_to_key(lambda x, y: x[0].cmp(y[0])))
    return out


def eigenvalues_symmetric(S: fmpq_mat) -> list[tuple[RealAlgebraic, int]]:
    """Exact spectrum of a rational symmetric matrix: (eigenvalue,
    multiplicity) pairs in decreasing order, multiplicities summing to N.
    Raises ArithmeticError if the characteristic polynomial is not
    real-rooted (S not symmetric)."""
    p = S.charpoly()  # fmpq_poly, monic
    pz = p.numer()
    roots = real_roots(pz)
    if sum(m for _, m in roots) != S.nrows():
        raise ArithmeticError("characteristic polynomial is not real-rooted")
    return list(reversed(roots))


def charpoly_factors(S: fmpq_mat) -> tuple[int, list[tuple[fmpz_poly, int]]]:
    """(D, [(f, e)]) with D·S integer, f the monic irreducible factors of the
    charpoly of D·S (roots = D × eigenvalues, algebraic integers) and e their
    multiplicities."""
    B, D = S.numer_denom()
    _, facs = B.charpoly().factor()
    return int(D), [(normalize(f), e) for f, e in facs]


# ---------------------------------------------------------------------------
# exact value of a polynomial expression in the eigenvalues


def resolvent_value(
    factors: list[fmpz_poly],
    F: Callable[[Callable[[int, int], arb]], arb],
    max_orbit: int = 720,
    max_prec: int = 1 << 14,
) -> RealAlgebraic | None:
    """Exact value of v = F(roots) as a RealAlgebraic, where ``factors`` are
    monic irreducible integer polynomials with only real roots (so all roots
    are algebraic integers) and F is an integer polynomial expression in
    those roots, evaluated through ``val(i, k)`` = k-th smallest real root of
    factors[i].

    Method: Q(z) = Π_σ (z − F(σ·roots)) over σ in the product of the
    symmetric groups of each factor's roots.  Q is invariant under the Galois
    group, its coefficients are symmetric integer polynomials in algebraic
    integers, hence integers; they are computed with arb balls at increasing
    precision until each ball holds exactly one integer (rigorous).  The
    minimal polynomial of v is the irreducible factor of Q with a root in the
    enclosure of v, found by exact isolation.  Returns None when the orbit is
    larger than ``max_orbit`` (the caller then reports an enclosure only).
    """
    degs = [f.degree() for f in factors]
    orbit = 1
    for d in degs:
        orbit *= math.factorial(d)
    if orbit > max_orbit:
        return None
    height = max((f.height_bits() for f in factors), default=1)
    prec = 128 + 2 * height
    max_prec = max(max_prec, 64 * prec)
    while prec <= max_prec:
        with ctx.workprec(prec):
            roots = []
            for f in factors:
                if f.degree() == 1:
                    roots.append([arb(fmpq(-int(f.coeffs()[0]), int(f.coeffs()[1])))])
                else:
                    roots.append([interval_to_arb(lo, hi, prec) for lo, hi in isolate_real_roots(f, prec + 20)])
            perms = [list(itertools.permutations(range(len(r)))) for r in roots]
            values = []
            for choice in itertools.product(*perms):
                def val(i, k, _c=choice):
                    return roots[i][_c[i][k]]

                values.append(F(val))
            v_id = F(lambda i, k: roots[i][k])
            # product tree in Arb; each coefficient ball must hold exactly one integer
            Qz = arb_poly.from_roots(values).unique_fmpz_poly()
        if Qz is None:
            prec *= 2
            continue
        lo, hi = arb_to_interval(v_id)
        cands = []
        for g, _ in Qz.factor()[1]:
            g = normalize(g)
            if g.degree() == 1:
                q = fmpq(-int(g.coeffs()[0]), int(g.coeffs()[1]))
                if lo <= q <= hi:
                    cands.append(RealAlgebraic.from_rational(q))
                continue
            for k, (a, b) in enumerate(isolate_real_roots(g, prec)):
                if not (b < lo or a > hi):
                    cands.append(RealAlgebraic(g, k, a, b))
        # a root that lies in the enclosure of v must be v if it is the only one
        uniq = []
        for c in cands:
            if not any(c.poly == u.poly and c.index == u.index for u in uniq):
                uniq.append(c)
        if len(uniq) == 1:
            return uniq[0]
        prec *= 2
    raise ArithmeticError("resolvent precision limit reached")


# ---------------------------------------------------------------------------
# constructing algebraic numbers from a polynomial and an interval, squares


def _between(x: RealAlgebraic, lo: fmpq, hi: fmpq) -> bool:
    """lo ≤ x ≤ hi, exactly."""
    return x.cmp(RealAlgebraic.from_rational(lo)) >= 0 and x.cmp(RealAlgebraic.from_rational(hi)) <= 0


def from_isolating_interval(coeffs, lo, hi) -> RealAlgebraic:
    """The real root of the nonzero integer polynomial Σ coeffs[i]·x^i (ascending) that lies in
    [lo, hi], as an exact RealAlgebraic (on its irreducible factor).  ValueError unless exactly
    one distinct root of the polynomial lies in the closed interval (the isolation proof: the
    roots are counted exactly, factor by factor).

    >>> r = from_isolating_interval([-2, 0, 1], 1, 2)        # √2
    >>> r.index, r.cmp(RealAlgebraic.from_rational(fmpq(141, 100)))
    (1, 1)
    >>> from_isolating_interval([-2, 0, 1], -2, 2)
    Traceback (most recent call last):
    ...
    ValueError: 2 distinct roots of the polynomial lie in [-2, 2], not one
    """
    lo, hi = fmpq(lo), fmpq(hi)
    p = fmpz_poly([int(c) for c in coeffs])
    if p.is_zero():
        raise ValueError("the zero polynomial isolates no root")
    if lo > hi:
        raise ValueError(f"empty interval [{lo}, {hi}]")
    inside = [r for r, _ in real_roots(p) if _between(r, lo, hi)]
    if len(inside) != 1:
        raise ValueError(f"{len(inside)} distinct roots of the polynomial lie in [{lo}, {hi}], not one")
    r = inside[0]
    if not r.is_rational:  # the caller's interval isolates the root on its irreducible factor too
        r.lo, r.hi = lo, hi
    return r


def square(x: RealAlgebraic) -> RealAlgebraic:
    """x², exact: with f(t) = e(t²) + t·o(t²) the minimal polynomial of x, x² is a root of
    e(u)² − u·o(u)²; the root is singled out by refining x until one root of that polynomial is
    left in the square of x's interval.

    >>> square(from_isolating_interval([-2, 0, 1], -2, -1)).rational
    2
    """
    if x.is_rational:
        return RealAlgebraic.from_rational(x.rational ** 2)
    c = [int(t) for t in x.poly.coeffs()]
    e = fmpz_poly(c[0::2])
    o = fmpz_poly(c[1::2])
    P = e * e - fmpz_poly([0, 1]) * o * o
    cands = [r for r, _ in real_roots(P)]
    s = x.sign()
    while True:
        if s > 0:
            lo, hi = max(x.lo, fmpq(0)) ** 2, x.hi ** 2
        else:
            lo, hi = min(x.hi, fmpq(0)) ** 2, x.lo ** 2
        inside = [r for r in cands if _between(r, lo, hi)]
        if len(inside) == 1:
            return inside[0]
        x.refine((x.hi - x.lo) / 4)
