"""The profile π(L) = (a, b, c, d) of a square rational matrix, exactly.

Source: SPEC §3, Def 6 (Lean ``Appendices.profileA..D``, ``alphaList``,
``betaList``, ``sortDesc``; blueprint label Def 6).  For L ≠ 0 with
S = ½(L+Lᵀ), T = ½(L−Lᵀ):

    a = ‖T‖²/‖L‖²,  b = 2⟨α,β⟩/‖L‖²,  c = ‖(α−β)_+‖²/‖L‖²,  d = ‖(α−β)_-‖²/‖L‖²

with α, β the decreasing positive eigenvalues of S and absolute values of
its negative eigenvalues.  The blueprint pads α, β with zeros to equal
length; Lean pads both to length N (``sortDesc (i ↦ max(λ_i, 0))``).  Both
conventions are computed and compared.

How it is exact.  Eigenvalues are exact real algebraic numbers (roots of the
integer characteristic polynomial of D·S, D the common denominator).  Every
comparison α_j vs β_j is decided exactly.  a is rational.  b, c, d are
integer polynomial expressions in the eigenvalues divided by D²‖L‖²; their
exact values (rational when they are, otherwise minimal polynomial +
isolating interval) come from :func:`qkverify.exact.algebraic.resolvent_value`
when the Galois orbit is small enough, and certified arb enclosures always.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from flint import arb, ctx, fmpq, fmpq_mat

from ..errors import QKInputError
from ..exact.algebraic import RealAlgebraic, charpoly_factors, isolate_real_roots, resolvent_value
from ..exact.intervals import arb_bounds, decimal_bounds
from ..exact.matrix import frob_sq, require_square, skew_part, sym_part
from ..exact.rational import fmpq_str

PADDINGS = ("blueprint", "lean")


@dataclass
class Coordinate:
    """One profile coordinate.

    value     -- exact RealAlgebraic (rational or algebraic) or None when the
                 exact value was not computed (Galois orbit above the cap)
    enclosure -- certified arb ball
    is_zero   -- decided exactly (sum of positive terms is zero iff empty)
    """

    name: str
    value: RealAlgebraic | None
    enclosure: arb
    is_zero: bool

    @property
    def exact(self) -> fmpq | None:
        return self.value.rational if self.value is not None else None

    def to_json(self, digits: int = 20) -> dict:
        if self.value is not None and self.value.is_rational:
            q = self.value.rational
            lo, hi = decimal_bounds(q, q, digits)
            return {"exact": fmpq_str(q), "algebraic": None, "interval": [lo, hi]}
        lo, hi = arb_bounds(self.enclosure, digits)
        return {
            "exact": None,
            "algebraic": None if self.value is None else self.value.to_json(),
            "interval": [lo, hi],
        }


@dataclass
class Profile:
    """π(L) with everything needed to re-check it.

    alpha, beta -- exact eigenvalue lists of S (padded per ``padding``)
    order       -- per index j: +1 if α_j > β_j, 0 if equal, −1 if less (exact)
    frob_L, frob_T, frob_S -- exact squared Frobenius norms
    D           -- common denominator of S (eigenvalues of D·S are algebraic integers)
    """

    N: int
    padding: str
    a: Coordinate
    b: Coordinate
    c: Coordinate
    d: Coordinate
    alpha: list[RealAlgebraic]
    beta: list[RealAlgebraic]
    order: list[int]
    frob_L: fmpq
    frob_S: fmpq
    frob_T: fmpq
    D: int
    inertia: tuple[int, int, int]
    exact_complete: bool = True
    notes: list[str] = field(default_factory=list)

    def coords(self) -> list[Coordinate]:
        return [self.a, self.b, self.c, self.d]

    def fibers(self) -> dict[str, bool]:
        """The eight face/vertex memberships, each decided exactly.

        x = 0 is read off the exact structure (b, c, d are sums of strictly
        positive terms); x = 1 holds iff the other three are 0 (they are
        nonnegative and sum to 1 - proved exactly by Theorem 4's check)."""
        z = {k.name: k.is_zero for k in self.coords()}
        one = {
            "a": z["b"] and z["c"] and z["d"],
            "b": z["a"] and z["c"] and z["d"],
            "c": z["a"] and z["b"] and z["d"],
            "d": z["a"] and z["b"] and z["c"],
        }
        out = {}
        for k in "abcd":
            out[f"{k}=0"] = z[k]
            out[f"{k}=1"] = one[k]
        return out

    def in_theta(self) -> dict[str, bool | None]:
        """Membership of π(L) in Θ = {a = b, cd = 0} ∩ Δ_3 (Prop 4, Lean
        ``Appendices.MainText.Theta``), decided exactly: cd = 0 from the exact
        face decisions, a = b by exact comparison of real algebraic numbers
        (None only when b's exact value was not computed and its enclosure
        contains a)."""
        cd0 = self.c.is_zero or self.d.is_zero
        if self.b.value is not None:
            ab = self.a.value == self.b.value
        elif not self.b.enclosure.overlaps(self.a.enclosure):
            ab = False
        else:
            ab = None
        member = (ab and cd0) if ab is not None else (False if not cd0 else None)
        return {"a=b": ab, "cd=0": cd0, "member": member}

    def to_json(self, digits: int = 20) -> dict:
        return {
            "N": self.N,
            "padding": self.padding,
            "a": self.a.to_json(digits),
            "b": self.b.to_json(digits),
            "c": self.c.to_json(digits),
            "d": self.d.to_json(digits),
            "fibers": self.fibers(),
            "Theta": self.in_theta(),
            "alpha": [_ev_json(x, digits) for x in self.alpha],
            "beta": [_ev_json(x, digits) for x in self.beta],
            "inertia": {"n_pos": self.inertia[0], "n_neg": self.inertia[1], "n_zero": self.inertia[2]},
            "exact_complete": self.exact_complete,
        }


def _ev_json(x: RealAlgebraic, digits: int) -> dict:
    if x.is_rational:
        return {"exact": fmpq_str(x.rational), "algebraic": None}
    lo, hi = arb_bounds(x.to_arb(int(digits * 3.4) + 20), digits)
    return {"exact": None, "algebraic": x.to_json(), "interval": [lo, hi]}


@dataclass
class _Root:
    value: RealAlgebraic  # eigenvalue of D·S
    factor: int           # index into the factor list
    index: int            # root index within the factor


ZERO = RealAlgebraic.from_rational(0)


@dataclass
class SpectralData:
    """Exact spectrum of S = sym_part(L) split by sign (scaled by D)."""

    D: int
    factors: list           # irreducible monic factors (nonzero roots only)
    pos: list[_Root]        # positive eigenvalues of D·S, decreasing
    neg: list[_Root]        # negative eigenvalues of D·S, by decreasing |λ|
    n_zero: int


def spectral_data(S: fmpq_mat) -> SpectralData:
    """Exact eigenvalues of the rational symmetric S, grouped for profile
    computations.  Raises ArithmeticError if S is not symmetric."""
    D, facs = charpoly_factors(S)
    factors = []
    roots: list[_Root] = []
    n_zero = 0
    for f, e in facs:
        if f.degree() == 1 and int(f.coeffs()[0]) == 0:
            n_zero += e
            continue
        fi = len(factors)
        factors.append(f)
        if f.degree() == 1:
            q = fmpq(-int(f.coeffs()[0]), int(f.coeffs()[1]))
            rs = [RealAlgebraic.from_rational(q)]
        else:
            ivs = isolate_real_roots(f)
            if len(ivs) != f.degree():
                raise ArithmeticError("symmetric matrix with a non-real eigenvalue")
            rs = [RealAlgebraic(f, k, lo, hi) for k, (lo, hi) in enumerate(ivs)]
        for k, r in enumerate(rs):
            for _ in range(e):
                roots.append(_Root(r, fi, k))
    cmp = functools.cmp_to_key(lambda x, y: x.value.cmp(y.value))
    pos = sorted([r for r in roots if r.value.sign() > 0], key=cmp, reverse=True)
    neg = sorted([r for r in roots if r.value.sign() < 0], key=cmp)  # most negative first
    return SpectralData(D, factors, pos, neg, n_zero)


def _value(val, r: _Root | None, negate: bool = False):
    if r is None:
        return None
    v = val(r.factor, r.index)
    return -v if negate else v


def compute_profile(
    L: fmpq_mat,
    padding: str = "blueprint",
    exact_values: bool = True,
    max_orbit: int = 720,
    prec: int = 128,
) -> Profile:
    """π(L) for a square rational L ≠ 0 (Def 6; Lean profileA..D).

    padding: ``blueprint`` (α, β padded to equal length) or ``lean`` (both
    padded to length N).  exact_values: compute exact (rational/algebraic)
    values of b, c, d when the Galois orbit has at most ``max_orbit``
    elements; enclosures (``prec`` bits) are always computed.

    Raises QKInputError for a non-square L and for L = 0 (which has no
    profile; Lean's x/0 = 0 convention gives π(0) = (0,0,0,0), see
    :func:`profile_lean_convention`).
    """
    if padding not in PADDINGS:
        raise ValueError(f"padding must be one of {PADDINGS}")
    N = require_square(L)
    fL = frob_sq(L)
    if fL == 0:
        raise QKInputError("L = 0 has no profile (the definition divides by ‖L‖² = 0)")
    S = sym_part(L)
    T = skew_part(L)
    fS, fT = frob_sq(S), frob_sq(T)
    sd = spectral_data(S)
    m = max(len(sd.pos), len(sd.neg)) if padding == "blueprint" else N
    A = [sd.pos[j] if j < len(sd.pos) else None for j in range(m)]
    B = [sd.neg[j] if j < len(sd.neg) else None for j in range(m)]
    alpha = [a.value if a else ZERO for a in A]
    beta = [(-b.value) if b else ZERO for b in B]
    order = [alpha[j].cmp(beta[j]) for j in range(m)]
    # report eigenvalues of S itself (the roots above belong to D·S)
    inv_d = fmpq(1, sd.D)
    alpha = [x.scale(inv_d) if not x.is_rational or x.rational != 0 else x for x in alpha]
    beta = [x.scale(inv_d) if not x.is_rational or x.rational != 0 else x for x in beta]
    both = [j for j in range(m) if A[j] is not None and B[j] is not None]
    Jp = [j for j in range(m) if order[j] > 0]
    Jm = [j for j in range(m) if order[j] < 0]

    def F_b(val):
        s = arb(0)
        for j in both:
            s += _value(val, A[j]) * _value(val, B[j], True)
        return s

    def _diff_sq(val, js):
        s = arb(0)
        for j in js:
            x = _value(val, A[j]) if A[j] else arb(0)
            y = _value(val, B[j], True) if B[j] else arb(0)
            s += (x - y) * (x - y)
        return s

    def F_c(val):
        return _diff_sq(val, Jp)

    def F_d(val):
        return _diff_sq(val, Jm)

    K = fmpq(sd.D) ** 2 * fL  # coordinates = F / K (b = 2 F_b / K)
    a_val = fT / fL
    notes: list[str] = []
    complete = True

    def coord(name: str, F, scale: fmpq, empty: bool) -> Coordinate:
        nonlocal complete
        if empty:
            z = RealAlgebraic.from_rational(0)
            return Coordinate(name, z, arb(0), True)
        value = None
        if exact_values:
            try:
                v = resolvent_value(sd.factors, F, max_orbit=max_orbit)
                why = f"Galois orbit above {max_orbit}"
            except ArithmeticError as err:  # precision cap reached
                v, why = None, str(err)
            if v is None:
                complete = False
                notes.append(f"{name}: exact value not computed ({why}); certified enclosure only")
            else:
                value = v.scale(scale)
        with ctx.workprec(prec):
            enc = F(_root_arb_getter(sd, prec)) * arb(scale)
        if value is not None:
            # tighten: the exact value's own isolating interval
            enc = value.to_arb(prec)
        return Coordinate(name, value, enc, False)

    a = Coordinate("a", RealAlgebraic.from_rational(a_val), arb(a_val), a_val == 0)
    b = coord("b", F_b, 2 / K, not both)
    c = coord("c", F_c, 1 / K, not Jp)
    d = coord("d", F_d, 1 / K, not Jm)
    return Profile(
        N=N,
        padding=padding,
        a=a,
        b=b,
        c=c,
        d=d,
        alpha=alpha,
        beta=beta,
        order=order,
        frob_L=fL,
        frob_S=fS,
        frob_T=fT,
        D=sd.D,
        inertia=(len(sd.pos), len(sd.neg), sd.n_zero),
        exact_complete=complete,
        notes=notes,
    )


def _root_arb_getter(sd: SpectralData, prec: int):
    cache: dict[tuple[int, int], arb] = {}
    ivs: dict[int, list] = {}

    def val(i: int, k: int) -> arb:
        key = (i, k)
        if key not in cache:
            f = sd.factors[i]
            if f.degree() == 1:
                with ctx.workprec(prec):
                    cache[key] = arb(fmpq(-int(f.coeffs()[0]), int(f.coeffs()[1])))
            else:
                if i not in ivs:
                    ivs[i] = isolate_real_roots(f, prec + 20)
                lo, hi = ivs[i][k]
                with ctx.workprec(prec):
                    cache[key] = arb(lo).union(arb(hi))
        return cache[key]

    return val


def profile_lean_convention(L: fmpq_mat, **kw) -> tuple[fmpq | None, ...] | Profile:
    """Lean's profile: lists padded to length N and x/0 = 0, so L = 0 gives
    the 4-tuple of zeros (returned as four exact 0s) instead of an error."""
    require_square(L)
    if frob_sq(L) == 0:
        return (fmpq(0), fmpq(0), fmpq(0), fmpq(0))
    return compute_profile(L, padding="lean", **kw)
