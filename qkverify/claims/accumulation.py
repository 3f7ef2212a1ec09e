"""Theorem 5 (accumulation) and Lemma 6 (proportional lobes), one check per Lean declaration.

Lean: ``MainText/Accumulation.lean`` and ``RandomMatrices/ProportionalLobes.lean``.

* Deterministic parts, exactly.  ``profile_of_spectrum`` on a vector input (x, y and a
  symmetric S with that spectrum; ``qkverify.audit.suite`` builds S = Q·diag(x, −y, 0…)·Qᵀ
  with a rational Cayley Q): the profile of the matrix (Definition 6, exact eigenvalues)
  against the formula in a = sortDesc x, b = sortDesc y.  ``accumulation_estimates`` with
  a = x, b = y, ρ = c: the four inequalities in square roots of rationals, decided by
  sympy's exact radicals.  ``limitProfile``, ``projP``, Θ, the edges and b(ρ) on a ``rho``
  input; b's monotonicity and images decided by sympy (symbolically), and at the input's
  exact point ρ: β = b(ρ) has a rational √(1 − β²) = |1 − ρ²|/(1 + ρ²) (a Pythagorean β
  such as b(3/4) = 24/25), so the preimage formulas of the Lean proofs give ρ back exactly.
* The almost-sure limits, empirically, on a ``lobes`` input
  (:mod:`qkverify.math.accumulation`): D_n = δ_n = ‖β_n − ρα_n‖/‖α_n‖ (Lemma 6) or
  ‖π(S_n) − limitProfile ρ‖ (Theorem 5) as certified balls on ``paths`` independent sample
  paths, and an exact binomial sign test of the trend "P(D_{n_max} < D_{n_min}) ≥ 1/2" at the
  input's level δ: ``consistent`` or ``inconsistent at level δ`` (evidence ``empirical``).  A
  finite sample says nothing about an almost-sure limit without a rate: the result is evidence
  about the trend, never ``holds`` or ``fails``.  Every hypothesis is a decision on the input
  (law_X / law_Xprime, dependence, S's form, scales and extra zeros), except measurability
  (``X_measurable``), which no input can violate alone.
"""

from __future__ import annotations

import functools

import sympy
from flint import fmpq

from ..exact.matrix import sym_part
from ..math import accumulation as Acc
from ..math.profile import compute_profile
from . import values as V
from ..exact.rational import fmpq_str
from .common import spectrum_witness
from .registry import DeclResult, NotApplicable, Subject, declaration_check, predicate

VEC, RHO, LOBES = ("vector",), ("rho",), ("lobes",)


# -- vector inputs ------------------------------------------------------------------


def plain(s: Subject) -> tuple[list[fmpq], list[fmpq]]:
    """(x, y) of a vector input taken as given (a = x, b = y)."""
    inp = s.inp
    if inp.normalize:
        raise NotApplicable("this declaration takes the vectors as given (normalize false)")
    if inp.y is None or len(inp.y) != len(inp.x):
        raise NotApplicable("the input needs y of the length of x")
    return list(inp.x), list(inp.y)


def _S(s: Subject):
    if s.inp.S is None:
        raise NotApplicable("the input has no matrix S")
    return s.inp.S


def _pos(v: fmpq) -> fmpq:
    return max(v, fmpq(0))


@predicate("two_n_le_k")
def _two_n_le_k(s: Subject) -> bool:
    """2n ≤ k: the lobes fit in the k × k matrix S."""
    return 2 * len(plain(s)[0]) <= _S(s).nrows()


@predicate("x_pos")
def _x_pos(s: Subject) -> bool:
    return min(plain(s)[0]) > 0


@predicate("y_pos")
def _y_pos(s: Subject) -> bool:
    return min(plain(s)[1]) > 0


@predicate("spectrum_eq")
def _spectrum_eq(s: Subject) -> bool:
    """hroots: S.charpoly.roots = x ∪ −y ∪ {0^(k − 2n)} as multisets (Lean's real roots of det(tI − S)
    with multiplicity, for any square S; k − 2n in ℕ, 0 when 2n > k); on a lobes input the roots of
    S_n are the sampled s₊X_i, −s₋X'_i and k zeros (:func:`_lobes_spectrum`)."""
    if s.kind == "lobes":
        return _lobes_spectrum(s)
    from ..exact.algebraic import real_roots

    x, y = plain(s)
    S = _S(s)
    B, D = S.numer_denom()
    roots = [r.scale(fmpq(1, int(D))) for r, m in real_roots(B.charpoly()) for _ in range(m)]
    if any(not r.is_rational for r in roots):
        return False  # x, y are rational: an irrational root is not among them
    want = sorted(x + [-t for t in y] + [fmpq(0)] * max(S.nrows() - 2 * len(x), 0))
    return sorted(r.rational for r in roots) == want


@predicate("rho_nonneg")
def _rho_nonneg(s: Subject) -> bool:
    """0 ≤ ρ (ρ of a rho input, or c of a vector input)."""
    return (s.inp.rho if s.kind == "rho" else _c(s)) >= 0


def _c(s: Subject) -> fmpq:
    if s.inp.c is None:
        raise NotApplicable("the input has no c (ρ)")
    return s.inp.c


predicate("a_ne_zero")(lambda s: any(plain(s)[0]))
predicate("a_nonneg")(lambda s: min(plain(s)[0]) >= 0)
predicate("rho_pos")(lambda s: s.inp.rho > 0)
predicate("rho_le_one")(lambda s: s.inp.rho <= 1)
predicate("rho_ge_one")(lambda s: s.inp.rho >= 1)


@declaration_check("profile_of_spectrum", VEC)
def _profile_of_spectrum(s: Subject) -> DeclResult:
    """π(S) from S's exact eigenvalues (Definition 6) = (0, 2⟨a,b⟩, ‖(a−b)₊‖², ‖(b−a)₊‖²)/(‖a‖² + ‖b‖²)."""
    x, y = plain(s)
    S = _S(s)
    s.witness(spectrum_witness(sym_part(S), "S"))
    p = compute_profile(S, "lean")
    got = [c.exact for c in p.coords()]
    if None in got:
        raise NotApplicable("the profile of S is not rational")
    a, b = sorted(x, reverse=True), sorted(y, reverse=True)
    D = sum((t * t for t in a + b), fmpq(0))
    want = [fmpq(0), 2 * sum((u * v for u, v in zip(a, b)), fmpq(0)) / D,
            sum((_pos(u - v) ** 2 for u, v in zip(a, b)), fmpq(0)) / D,
            sum((_pos(v - u) ** 2 for u, v in zip(a, b)), fmpq(0)) / D]
    return DeclResult(got == want)


def _r(q: fmpq):
    return sympy.Rational(int(q.p), int(q.q))


def _holds(rel) -> bool:
    """Decide a relation between expressions in square roots of rationals exactly (sympy)."""
    out = sympy.simplify(rel)
    if out not in (sympy.true, sympy.false):
        raise NotApplicable(f"sympy could not decide {rel}")
    return bool(out)


@declaration_check("accumulation_estimates", VEC)
def _estimates(s: Subject) -> DeclResult:
    """With δ = ‖b − ρa‖/‖a‖: |⟨a,b⟩/‖a‖² − ρ| ≤ δ, |‖b‖²/‖a‖² − ρ²| ≤ δ² + 2ρδ,
    |‖(a−b)₊‖/‖a‖ − (1−ρ)₊| ≤ δ, |‖(b−a)₊‖/‖a‖ − (ρ−1)₊| ≤ δ (a = x, b = y, ρ = c), with Lean's
    x/0 = 0 (so that with ha dropped, a = 0, the statement is evaluated: δ = 0)."""
    x, y = plain(s)
    a, b, rho = [_r(t) for t in x], [_r(t) for t in y], _r(_c(s))
    norm = lambda v: sympy.sqrt(sum(t * t for t in v))  # noqa: E731
    div = lambda p, q: sympy.Integer(0) if q == 0 else p / q  # noqa: E731  (Lean's x/0 = 0; q exact)
    na = norm(a)
    d = div(norm([u - rho * v for u, v in zip(b, a)]), na)
    ab = sum(u * v for u, v in zip(a, b))
    pp = norm([max(u - v, 0) for u, v in zip(a, b)])
    pm = norm([max(v - u, 0) for u, v in zip(a, b)])
    rels = [sympy.Abs(div(ab, na ** 2) - rho) <= d, sympy.Abs(div(norm(b) ** 2, na ** 2) - rho ** 2) <= d ** 2 + 2 * rho * d,
            sympy.Abs(div(pp, na) - max(1 - rho, 0)) <= d, sympy.Abs(div(pm, na) - max(rho - 1, 0)) <= d]
    return DeclResult(all(_holds(r) for r in rels))


# -- rho inputs ----------------------------------------------------------------------


def _theta_point(rho: fmpq) -> list[fmpq]:
    """The preimage under projP of limitProfile ρ in Θ (the Lean proof's witness)."""
    d = 1 + rho * rho
    return [rho / d, rho / d, _pos(1 - rho) ** 2 / d, _pos(rho - 1) ** 2 / d]


@declaration_check("limitProfile", RHO)
def _limitProfile(s: Subject) -> DeclResult:
    """limitProfile ρ, Lean's definition (1/(1 + ρ²)) • (0, 2ρ, (1 − ρ)₊², (ρ − 1)₊²) -- the scalar
    applied to each coordinate -- against the coordinates of ``limitProfile_eq``
    (:func:`qkverify.math.accumulation.limit_profile`), and their sum is 1.  The definition has no
    hypothesis on ρ: for ρ < 0 the point is off the simplex (b < 0), which is not a failure."""
    r = fmpq(s.inp.rho)
    scale = 1 / (1 + r * r)
    by_def = [scale * x for x in (fmpq(0), 2 * r, max(1 - r, fmpq(0)) ** 2, max(r - 1, fmpq(0)) ** 2)]
    lp = Acc.limit_profile(r)
    return DeclResult(by_def == lp and sum(lp, fmpq(0)) == 1, value=V.listv([V.exact(t) for t in lp]))


@declaration_check("projP", RHO)
def _projP(s: Subject) -> DeclResult:
    """projP at the Θ point θ of ρ (the witness); checked: projP θ is limitProfile ρ computed by its
    own formula (:func:`qkverify.math.accumulation.limit_profile`, what the witness is for), and
    projP keeps the coordinate sum."""
    t = _theta_point(s.inp.rho)
    s.witness({"kind": "theta_point", "of": "limitProfile", "point": [V.exact(v)["exact"] for v in t]})
    p = [fmpq(0), t[0] + t[1], t[2], t[3]]
    ok = p == Acc.limit_profile(s.inp.rho) and sum(p, fmpq(0)) == sum(t, fmpq(0))
    return DeclResult(ok, value=V.listv([V.exact(v) for v in p]))


@declaration_check("limitProfile_mem_projP_Theta", RHO)
def _mem_theta(s: Subject) -> DeclResult:
    """limitProfile ρ ∈ projP '' Θ: holds with the witness θ (the Lean proof's) when θ ∈ Θ and
    projP θ = limitProfile ρ; fails (ρ < 0, hρ dropped) because no θ exists: projP θ has second
    coordinate a + b ≥ 0 for every θ ∈ Θ, while limitProfile ρ has 2ρ/(1 + ρ²) < 0."""
    from .profile import in_theta

    lp = Acc.limit_profile(s.inp.rho)
    if lp[1] < 0:
        return DeclResult(False, reason="no θ ∈ Θ exists: projP θ = (0, a + b, c, d) has a + b ≥ 0, here "
                                        f"the second coordinate is {lp[1]}")
    t = _theta_point(s.inp.rho)
    s.witness({"kind": "theta_point", "of": "limitProfile", "point": [V.exact(v)["exact"] for v in t]})
    return DeclResult(in_theta(list(t)) and [fmpq(0), t[0] + t[1], t[2], t[3]] == lp)


@declaration_check("limitB", RHO)
def _limitB(s: Subject) -> DeclResult:
    """b(ρ) = 2ρ/(1 + ρ²); checked: it is the b-coordinate of limitProfile ρ."""
    b = Acc.limit_b(s.inp.rho)
    return DeclResult(b == Acc.limit_profile(s.inp.rho)[1], value=V.exact(b))


@declaration_check("limitProfile_edge_d", RHO)
def _edge_d(s: Subject) -> DeclResult:
    b = Acc.limit_b(s.inp.rho)
    return DeclResult(Acc.limit_profile(s.inp.rho) == [0, b, 1 - b, 0])


@declaration_check("limitProfile_edge_c", RHO)
def _edge_c(s: Subject) -> DeclResult:
    b = Acc.limit_b(s.inp.rho)
    return DeclResult(Acc.limit_profile(s.inp.rho) == [0, b, 0, 1 - b])


@functools.lru_cache(maxsize=1)
def _symbolic() -> dict[str, bool]:
    """b's monotonicity and images, decided symbolically by sympy."""
    from sympy.calculus.util import function_range
    from sympy.calculus.singularities import is_strictly_decreasing, is_strictly_increasing

    from sympy.calculus.util import continuous_domain

    r = sympy.Symbol("rho", real=True)
    b = 2 * r / (1 + r ** 2)
    ioc, ici = sympy.Interval.Lopen(0, 1), sympy.Interval(1, sympy.oo)
    # b' > 0 on (0, 1) and b' < 0 on (1, ∞); b is continuous on ℝ, so the endpoint 1 joins both
    cont = continuous_domain(b, r, sympy.S.Reals) == sympy.S.Reals
    return {"mono": cont and bool(is_strictly_increasing(b, sympy.Interval.open(0, 1), r)),
            "anti": cont and bool(is_strictly_decreasing(b, sympy.Interval.open(1, sympy.oo), r)),
            "ioc": function_range(b, r, ioc) == ioc, "ici": function_range(b, r, ici) == ioc}


def _preimage(rho: fmpq, sign: int) -> fmpq | None:
    """(1 ∓ √(1 − β²))/β for β = b(ρ), exactly (√(1 − β²) = |1 − ρ²|/(1 + ρ²)); None for ρ = 0."""
    from ..exact.quadratic import rational_sqrt

    beta = Acc.limit_b(rho)
    if beta == 0:
        return None
    root = rational_sqrt(1 - beta * beta)
    return (1 + sign * root) / beta


def _point(rho: fmpq, lo: fmpq, hi: fmpq | None, sign: int) -> bool:
    """At the input's point: β = b(ρ) ∈ (0, 1] has the preimage of the Lean proof in the interval."""
    if not (rho > lo if hi is not None else rho >= lo) or (hi is not None and rho > hi):
        return True   # the point lies outside this branch: nothing to test there
    pre = _preimage(rho, sign)
    return pre is not None and Acc.limit_b(pre) == Acc.limit_b(rho) and pre == rho


def _monotone(key: str, lo: fmpq, hi: fmpq | None, sign: int) -> DeclResult:
    """sympy's decision against the exact sign of b' (:func:`qkverify.math.accumulation.limit_b_monotone`)."""
    exact = Acc.limit_b_monotone(lo, hi) == sign
    if _symbolic()[key] != exact:
        return DeclResult(None, reason=f"sympy says {_symbolic()[key]}, the exact sign of b' says {exact}")
    return DeclResult(exact)


declaration_check("limitB_strictMonoOn", RHO)(lambda s: _monotone("mono", fmpq(0), fmpq(1), 1))
declaration_check("limitB_strictAntiOn", RHO)(lambda s: _monotone("anti", fmpq(1), None, -1))
declaration_check("limitB_image_Ioc", RHO)(
    lambda s: DeclResult(_symbolic()["ioc"] and _point(s.inp.rho, fmpq(0), fmpq(1), -1)))
declaration_check("limitB_image_Ici", RHO)(
    lambda s: DeclResult(_symbolic()["ici"] and _point(s.inp.rho, fmpq(1), None, 1)))


# -- lobes inputs: the limits, empirically ------------------------------------------


@predicate("u_pos")
def _u_pos(s: Subject) -> bool:
    return s.inp.u > 0


@predicate("v_pos")
def _v_pos(s: Subject) -> bool:
    return s.inp.v > 0


@predicate("gamma_positive")
def _gamma_positive(s: Subject) -> bool:
    """γ((−∞, 0]) = 0, from the law's parameters (a uniform law with lo < 0 violates it)."""
    return s.inp.law.positive()


@predicate("second_moment_finite")
def _m2_finite(s: Subject) -> bool:
    """∫⁻ y² dγ < ∞ (a Pareto law of shape ≤ 2 violates it)."""
    return s.inp.law.second_moment() is not None


@predicate("second_moment_pos")
def _m2_pos(s: Subject) -> bool:
    """0 < ∫⁻ y² dγ: infinite counts as positive; every law of a lobes input is a probability
    measure other than the point mass at 0, so this holds on every input (and is implied by hγpos)."""
    m = s.inp.law.second_moment()
    return m is None or m > 0


@predicate("X_measurable")
def _x_measurable(s: Subject) -> bool:
    """Every X_i is measurable: a lobes input describes X_i = F⁻¹(U_i), a measurable function of
    uniforms.  No input can violate hX alone: with hXlaw and hMpos, Mathlib's ``Measure.map`` of a
    map that is not a.e.-measurable is 0, whose second moment is 0."""
    return s.kind == "lobes"


predicate("Xprime_measurable")(_x_measurable)


@predicate("samples_independent")
def _indep(s: Subject) -> bool:
    """X_0, X_1, …, X'_0, X'_1, … independent: ``dependence`` is ``independent`` (``repeated``,
    X_i = X_0 and X'_i = X'_0, is not)."""
    return s.inp.dependence == "independent"


@predicate("X_law_gamma")
def _x_law(s: Subject) -> bool:
    """Every X_i has law γ: the law sampled for X is γ (``law_X`` absent or the same measure)."""
    return s.inp.law_X is None or s.inp.law_X.same(s.inp.law)


@predicate("Xprime_law_gamma")
def _xp_law(s: Subject) -> bool:
    return s.inp.law_Xprime is None or s.inp.law_Xprime.same(s.inp.law)


@predicate("Nn_ge_two_n")
def _nn(s: Subject) -> bool:
    """2n ≤ N_n: N_n = 2n + k with the input's extra zeros k ≥ 0."""
    return s.inp.S.extra_zeros >= 0


@predicate("Sn_symmetric")
def _sn_symm(s: Subject) -> bool:
    """Every S_n is symmetric: form ``symmetric``, or ``triangular`` with coupling 0."""
    return s.inp.S.form == "symmetric" or s.inp.S.coupling == 0


def _lobes_spectrum(s: Subject) -> bool:
    """The characteristic roots of S_n are vX_i, −uX'_i and N_n − 2n zeros: the spectrum's scales
    are v and u, and N_n ≥ 2n (with fewer than 2n roots the multisets differ for n ≥ 1)."""
    S, inp = s.inp.S, s.inp
    return (S.scale_pos in (None, inp.v)) and (S.scale_neg in (None, inp.u)) and S.extra_zeros >= 0


def _trend(s: Subject, what: str) -> DeclResult:
    """The sign test of the trend D_{n_max} < D_{n_min} on the input's paths (empirical:
    consistent / inconsistent at level δ; an almost-sure limit is never proved or refuted)."""
    r = s.memo(("trend", what), lambda: Acc.trend_test(s.inp, what, s.inp.seed))
    s.witness(r.witness())
    name = "δ_n" if what == "delta" else "‖π(S_n) − limitProfile ρ‖"
    verdict = "consistent" if r.consistent else f"inconsistent at level {fmpq_str(r.delta)}"
    return DeclResult(r.consistent, "empirical", sample=r.sample_record(),
                      reason=f"{name} decreased from n = {r.sizes[0]} to n = {r.sizes[-1]} on {r.decreasing} of "
                             f"{r.paths} paths (the sign test rejects a decreasing trend at ≤ {r.threshold}): {verdict}; "
                             "a finite sample neither proves nor refutes an almost-sure limit")


declaration_check("proportional_lobes", LOBES)(lambda s: _trend(s, "delta"))
declaration_check("accumulation", LOBES)(lambda s: _trend(s, "distance"))


def study_sizes(max_n: int) -> list[int]:
    """Sample sizes 10, 30, 100, 300, … (two per decade) up to ``max_n``, which is always included."""
    out, k = [], 0
    while True:
        n = (1, 3)[k % 2] * 10 ** (1 + k // 2)
        if n >= max_n:
            break
        out.append(n)
        k += 1
    return out + [max_n]
