"""Appendix C: the moment statistics O, E, R (Moments/Defs.lean) and Lemma 9
(OEEquivalences.lean), one check per Lean declaration, on ``vector`` inputs.

O, E, R are exact in ℚ(√s) (:mod:`qkverify.math.moments`), with Lean's x/0 = 0; each
definition is checked against an enclosure of the same sum computed term by term.  The moment
series (part 1) are Lean's ``tsum``: decided exactly, a summable family by its geometric closed
form and a family that is not summable as 0 (so that with ``h`` dropped, |x_i| ≥ 1 is evaluated).
The trace formulas (part 3) take the input's matrix S (S/‖μ‖ when normalised) and Mathlib's
inverse (0 for a singular matrix): the certificate carries each inverse, or a null vector of
the singular matrix.
"""

from __future__ import annotations

from flint import arb, ctx, fmpq, fmpq_poly

from ..exact.matrix import is_symmetric, to_str_rows
from ..exact.rational import fmpq_str
from ..exact.quadratic import Quad
from ..math import moments as Mo
from .bimodal import quad_value, vec, vec2m
from .registry import DeclResult, NotApplicable, Subject, declaration_check, predicate

VEC = ("vector",)


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
    """Lean's ``∑' k, ∑ i, x_i^(2k+1)`` (odd) or ``x_i^(2k+2)`` (even) against statO x (statE x), both
    exact: the series is summable or not by the exact test of :func:`qkverify.math.moments.tsum_odd_moments`
    (:func:`~qkverify.math.moments.tsum_even_moments`), and then its sum is the geometric closed form
    Σ_i x_i/(1 − x_i²) over |x_i| < 1 (Σ_i x_i²/(1 − x_i²)); a family that is not summable sums to 0
    in Lean.  statO (statE) is evaluated term by term with Lean's x/0 = 0."""
    x = vec2m(s)
    summable, total = (Mo.tsum_odd_moments if odd else Mo.tsum_even_moments)(x)
    stat = Mo.stat_o(x) if odd else Mo.stat_e(x)
    why = "" if summable else "the series is not summable: Lean's tsum is 0"
    return DeclResult(total == stat, reason=why if total != stat else "")


declaration_check("statO_eq_tsum_odd_moments", VEC)(lambda s: _series(s, True))
declaration_check("statE_eq_tsum_even_moments", VEC)(lambda s: _series(s, False))
for _n in ("summable_abs_odd_moments", "summable_abs_even_moments"):
    # k ↦ Σ_i |x_i|^(2k+1) (resp. ^(2k+2)) is summable exactly when every |x_i| < 1
    declaration_check(_n, VEC)(lambda s: DeclResult(Mo.summable_abs_moments(vec2m(s))))


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


def inverse_witnesses(st: dict, name: str) -> list[dict]:
    """The ``inverse`` witnesses of :func:`qkverify.math.moments.trace_stats`, for the matrix called
    ``name`` (S or K): its rows, or a nonzero null vector when it is singular (Lean's inverse 0)."""
    out = []
    for w in st["witnesses"]:
        of = w["of"].replace("X", name)
        if w.get("inverse") is not None:
            out.append({"kind": "inverse", "of": of, "rows": to_str_rows(w["inverse"])})
        else:
            out.append({"kind": "inverse", "of": of, "null": [fmpq_str(c) for c in w["null"]]})
    return out


def _trace(s: Subject, i: int) -> DeclResult:
    """tr(S(1 − S²)⁻¹), tr(S²(1 − S²)⁻¹) or tr((1 − S)⁻¹) with Mathlib's inverse (0 for a singular
    matrix), against statO x, statE x or statR x with Lean's x/0 = 0."""
    x = vec2m(s)
    S = _S(s)
    if S.nrows() != len(x):
        raise NotApplicable(f"S is {S.nrows()} × {S.nrows()} but x has {len(x)} entries")
    st = Mo.trace_stats(S, _scale(s))
    for w in inverse_witnesses(st, "S"):
        s.witness(w)
    return DeclResult(st[("O", "E", "R")[i]] == (Mo.stat_o, Mo.stat_e, Mo.stat_r)[i](x))


for _i, _name in enumerate(("trace_eq_statO", "trace_eq_statE", "trace_eq_statR")):
    declaration_check(_name, VEC)(lambda s, i=_i: _trace(s, i))
