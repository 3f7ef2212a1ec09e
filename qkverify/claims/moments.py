"""Appendix C: the moment statistics O, E, R (Moments/Defs.lean) and Lemma 9
(OEEquivalences.lean), one check per Lean declaration, on ``vector`` inputs.

O, E, R are exact in ℚ(√s) (:mod:`qkverify.math.moments`); each definition is checked
against a certified enclosure computed term by term.  The moment series (part 1) are
checked with certified tail bounds: K terms as a ball plus n·ρ^K/(1 − ρ), ρ = max x_i²,
below 10^−``SERIES_DIGITS`` (evidence ``certified``: the exact closed form lies in an
interval of that width around the series).  The trace formulas (part 3) take the input's
matrix S (S/‖μ‖ when normalised) and read the traces from the exact inverse of sI − S²,
which the certificate carries.
"""

from __future__ import annotations

from flint import arb, ctx, fmpq, fmpq_poly

from ..exact.matrix import is_symmetric, to_str_rows
from ..exact.quadratic import Quad
from ..math import moments as Mo
from .bimodal import quad_value, vec, vec2m
from .registry import DeclResult, NotApplicable, Subject, declaration_check, predicate

VEC = ("vector",)
#: the width 10^−SERIES_DIGITS of the certified enclosure of the moment series
SERIES_DIGITS = 30


def _ball_check(v: Quad, terms: list[Quad]) -> bool:
    """The exact value lies in the enclosure of the same sum computed term by term with arb."""
    with ctx.workprec(192):
        ball = sum((t.to_arb(192) for t in terms), arb(0))
        return bool(ball.overlaps(v.to_arb(192)))


def _stat(s: Subject, f, term) -> DeclResult:
    x = vec(s)
    v = f(x)
    return DeclResult(_ball_check(v, [term(t) for t in x]), value=quad_value(v))


def _lean_div(a: Quad, b: Quad) -> Quad:
    return Quad(0) if b.sign() == 0 else a / b


@declaration_check("statO", VEC)
def _statO(s: Subject) -> DeclResult:
    """O(x) = Σ x_i/(1 − x_i²) exact, inside its term-by-term enclosure."""
    return _stat(s, Mo.stat_o, lambda t: _lean_div(t, 1 - t * t))


@declaration_check("statE", VEC)
def _statE(s: Subject) -> DeclResult:
    """E(x) = Σ x_i²/(1 − x_i²)."""
    return _stat(s, Mo.stat_e, lambda t: _lean_div(t * t, 1 - t * t))


@declaration_check("statR", VEC)
def _statR(s: Subject) -> DeclResult:
    """R(x) = Σ 1/(1 − x_i)."""
    return _stat(s, Mo.stat_r, lambda t: _lean_div(Quad(1), 1 - t))


# Lemma 9 --------------------------------------------------------------------------


def _abs_lt_one(x) -> bool:
    return all(abs(t) < 1 for t in x)


@declaration_check("MemLambdaSet.abs_entry_lt_one", VEC)
def _abs(s: Subject) -> DeclResult:
    """|x_i| < 1 for every index i."""
    return DeclResult(_abs_lt_one(vec2m(s)))


def _series(s: Subject, odd: bool) -> DeclResult:
    """Σ_{k<K} Σ_i x_i^(2k+1) (or ^(2k+2)) as a ball, widened by the tail bound, contains O (E)."""
    x = vec2m(s)
    try:
        K = Mo.series_terms(x, SERIES_DIGITS)
    except ValueError as err:
        raise NotApplicable(str(err)) from None
    s.witness({"kind": "series", "of": "odd" if odd else "even", "terms": K, "digits": SERIES_DIGITS})
    T = Mo.series_tail(x, K)
    with ctx.workprec(256):
        d = (Mo.stat_o(x) if odd else Mo.stat_e(x)).to_arb(256) - Mo.series_partial(x, K, odd, 256)
        if bool(abs(d) <= arb(T)):  # an equality between reals is never certified (format 3): exact or undecided
            return DeclResult(None, "certified", reason="the closed form lies in the series' enclosure; an equality "
                                                        "between reals is not decided by enclosures")
        if bool(abs(d) > arb(T)):
            return DeclResult(False, "certified")
    return DeclResult(None, "certified", reason="the closed form sits at the edge of the series enclosure")


declaration_check("statO_eq_tsum_odd_moments", VEC)(lambda s: _series(s, True))
declaration_check("statE_eq_tsum_even_moments", VEC)(lambda s: _series(s, False))
for _n in ("summable_abs_odd_moments", "summable_abs_even_moments"):
    # Σ_i |x_i|^(2k+1) ≤ n·ρ^k with ρ = max x_i² < 1: a convergent geometric majorant
    declaration_check(_n, VEC)(lambda s: DeclResult(max(t * t for t in vec2m(s)) < 1))


@declaration_check("statO_eq_half_statR_sub", VEC)
def _o_half(s: Subject) -> DeclResult:
    x = vec2m(s)
    return DeclResult(Mo.stat_o(x) == (Mo.stat_r(x) - Mo.stat_r(Mo.iota(x))) / 2)


@declaration_check("statE_add_card_eq_half_statR_add", VEC)
def _e_half(s: Subject) -> DeclResult:
    x = vec2m(s)
    return DeclResult(len(x) + Mo.stat_e(x) == (Mo.stat_r(x) + Mo.stat_r(Mo.iota(x))) / 2)


declaration_check("statO_iotaMap", VEC)(lambda s: DeclResult(Mo.stat_o(Mo.iota(vec2m(s))) == -Mo.stat_o(vec2m(s))))
declaration_check("statE_iotaMap", VEC)(lambda s: DeclResult(Mo.stat_e(Mo.iota(vec2m(s))) == Mo.stat_e(vec2m(s))))


def _S(s: Subject):
    if s.inp.S is None:
        raise NotApplicable("the input has no matrix S")
    return s.inp.S


def _scale(s: Subject) -> fmpq:
    """s = ‖μ‖² when normalised (the Lean S is S/√s), else 1."""
    return sum((m * m for m in s.inp.x), fmpq(0)) if s.inp.normalize else fmpq(1)


@predicate("S_symmetric")
def _S_symmetric(s: Subject) -> bool:
    """The given matrix S is symmetric (Lean ``hS : S.IsHermitian`` / ``S.IsSymm``); the S_n of a
    lobes input are symmetric by construction (any symmetric matrix with the sampled spectrum)."""
    if s.kind == "lobes":
        return True
    return is_symmetric(_S(s))


@predicate("eigenvalues_perm_eq")
def _perm(s: Subject) -> bool:
    """The eigenvalues of S, with multiplicity, are x up to a permutation: det(tI − S) = Π(t − μ_i)."""
    S = _S(s)
    if S.nrows() != len(s.inp.x):
        return False
    p = fmpq_poly([1])
    for m in s.inp.x:
        p *= fmpq_poly([-m, 1])
    return S.charpoly() == p


def _trace(s: Subject, i: int) -> DeclResult:
    x = vec2m(s)
    try:
        vals = Mo.trace_stats(_S(s), _scale(s))
    except ZeroDivisionError as err:
        raise NotApplicable(str(err)) from None
    s.witness({"kind": "inverse", "of": "sI_minus_S2", "rows": to_str_rows(vals[3])})
    return DeclResult(vals[i] == (Mo.stat_o, Mo.stat_e, Mo.stat_r)[i](x))


for _i, _name in enumerate(("trace_eq_statO", "trace_eq_statE", "trace_eq_statR")):
    declaration_check(_name, VEC)(lambda s, i=_i: _trace(s, i))
