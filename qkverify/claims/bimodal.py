"""Appendix B, balanced bimodal spectra: the definitions (Λ_m, λ₊, λ₋, 𝓘, C, 𝒫, ι),
Lemma 7 (bimodal identities) and Lemma 8 (the mirror ι), one check per Lean declaration.

Lean: ``Appendices/BalancedBimodalSpectra/{Defs,BimodalIdentities,BimodalInvolution}.lean``.
Input: a ``vector`` (:class:`qkverify.io.inputs.VectorInput`): x as given, or μ/‖μ‖ exact in
ℚ(√s) (:mod:`qkverify.math.moments`), with an optional second vector y and scalar c for the
declarations that take them.  Identities are decided in ℚ(√s); the statements with square
roots (2‖λ₊‖‖λ₋‖ = √(1 − 𝓘²), 𝒫 = 1 − √(1 − 2C), 𝒫 = 1 − ‖x − ιx‖/√2) are evaluated with
sympy's exact radicals (√a·√b = √(ab) for rationals), an independent route from the
kernel's comparison of squares.
"""

from __future__ import annotations

import sympy
from flint import fmpq

from ..exact.quadratic import Quad
from ..math import moments as Mo
from .registry import DeclResult, NotApplicable, Subject, declaration_check, predicate

VEC = ("vector",)


def quad_value(v) -> dict:
    """The certificate value of an element of ℚ(√s): {"exact"} or {"root": poly, lo, hi}."""
    v = v if isinstance(v, Quad) else Quad(v)
    if v.is_rational:
        return {"exact": _qs(v.a)}
    lo, hi = v.isolating_interval()
    return {"root": {"poly": [str(c) for c in v.min_poly().coeffs()], "lo": _qs(lo), "hi": _qs(hi)}}


def _qs(x: fmpq) -> str:
    return str(x.p) if x.q == 1 else f"{x.p}/{x.q}"


def list_value(xs) -> dict:
    return {"list": [quad_value(v) for v in xs]}


def vec(s: Subject) -> list[Quad]:
    """The Lean vector x of a vector input (normalised when asked)."""
    def build():
        mu = list(s.inp.x)
        return Mo.normalized(mu) if s.inp.normalize else [Quad(m) for m in mu]

    return s.memo("x", build)


def vec2m(s: Subject) -> list[Quad]:
    """x, when its length is even (the declarations on ℝ^(2m))."""
    x = vec(s)
    if len(x) % 2:
        raise NotApplicable(f"a vector of length {len(x)} is not in ℝ^(2m)")
    return x


def second(s: Subject, key: str):
    """The input's y (same length as x) or c."""
    v = getattr(s.inp, key)
    if v is None:
        raise NotApplicable(f"the input has no {key}")
    if key == "y":
        if len(v) != len(vec(s)):
            raise NotApplicable("x and y have different lengths")
        return [Quad(t) for t in v]
    return Quad(v)


def sym(v: Quad):
    """A Quad as a sympy number."""
    return v.sympy()


def lean_sqrt(v):
    """Lean's Real.sqrt (0 on negatives) of a sympy rational."""
    return sympy.sqrt(v) if v > 0 else sympy.Integer(0)


def zero(e) -> bool:
    """e == 0 for an expression in square roots of rationals (sympy's canonical radicals)."""
    e = sympy.expand(e)
    return e == 0 or sympy.simplify(e) == 0


@predicate("mem_Lambda")
def _mem(s: Subject) -> bool:
    """x ∈ Λ_m (MemLambdaSet), exactly (Lean binders ``hx``, ``h``, ``_hx``, ``_h``)."""
    return Mo.mem_lambda(vec(s))


# Definitions ------------------------------------------------------------------------


@declaration_check("MemLambdaSet", VEC)
def _MemLambdaSet(s: Subject) -> DeclResult:
    """Membership by the four fields, against monotone + unit + exactly m negative and m positive
    entries (the characterisation GramForm's proof uses).  x : Fin (2m) → ℝ: an odd length is
    not of the declaration's type (not evaluated)."""
    x = vec2m(s)
    m = len(x) // 2
    alt = (len(x) % 2 == 0 and all(x[i] <= x[i + 1] for i in range(len(x) - 1))
           and Mo.sum_sq(x) == 1 and sum(t.sign() < 0 for t in x) == m and sum(t.sign() > 0 for t in x) == m)
    got = Mo.mem_lambda(x)
    return DeclResult(got == alt, value={"bool": got})


@declaration_check("lamPlus", VEC)
def _lamPlus(s: Subject) -> DeclResult:
    """λ₊, checked: ‖λ₊‖² + ‖λ₋‖² = ‖x‖² (sum_sq_lamPlus_add_sum_sq_lamMinus)."""
    x = vec2m(s)
    return DeclResult(Mo.sum_sq(Mo.lam_plus(x)) + Mo.sum_sq(Mo.lam_minus(x)) == Mo.sum_sq(x),
                      value=list_value(Mo.lam_plus(x)))


@declaration_check("lamMinus", VEC)
def _lamMinus(s: Subject) -> DeclResult:
    """λ₋, checked: λ₋ of x is λ₊ of ιx (its entries are the bottom half, negated)."""
    x = vec2m(s)
    return DeclResult(Mo.lam_minus(x) == Mo.lam_plus(Mo.iota(x)), value=list_value(Mo.lam_minus(x)))


@declaration_check("imbalance", VEC)
def _imbalance(s: Subject) -> DeclResult:
    """𝓘 = ‖λ₊‖² − ‖λ₋‖², checked against Σ_{i ≥ m} x_i² − Σ_{i < m} x_i²."""
    x = vec2m(s)
    m = len(x) // 2
    v = Mo.imbalance(x)
    return DeclResult(v == Mo.sum_sq(x[m:]) - Mo.sum_sq(x[:m]), value=quad_value(v))


@declaration_check("statC", VEC)
def _statC(s: Subject) -> DeclResult:
    """C = ⟨λ₊, λ₋⟩, checked by polarisation: 2C = ‖λ₊‖² + ‖λ₋‖² − ‖λ₊ − λ₋‖²."""
    x = vec2m(s)
    v = Mo.stat_c(x)
    rhs = Mo.sum_sq(Mo.lam_plus(x)) + Mo.sum_sq(Mo.lam_minus(x)) - Mo.pairing_sq(x)
    return DeclResult(2 * v == rhs, value=quad_value(v))


@declaration_check("pairingScore", VEC)
def _pairingScore(s: Subject) -> DeclResult:
    """𝒫 = 1 − √‖λ₊ − λ₋‖², exact in ℚ(√q); checked: (1 − 𝒫)² = ‖λ₊ − λ₋‖² with 1 − 𝒫 ≥ 0."""
    x = vec2m(s)
    try:
        v = Mo.pairing_score(x)
    except ValueError as err:
        raise NotApplicable(str(err)) from None
    t = 1 - v
    return DeclResult(t * t == Mo.pairing_sq(x) and t.sign() >= 0, value=quad_value(v))


@declaration_check("iotaMap", VEC)
def _iotaMap(s: Subject) -> DeclResult:
    """ιx, checked: ι is an involution."""
    x = vec(s)
    return DeclResult(Mo.iota(Mo.iota(x)) == x, value=list_value(Mo.iota(x)))


# Lemma 7 ----------------------------------------------------------------------------


def _sy(v: Quad):
    return sym(v)


def _l7(name: str, fn) -> None:
    def check(s: Subject) -> DeclResult:
        x = vec2m(s)
        try:
            return DeclResult(bool(fn(x)))
        except ValueError as err:  # a square root out of ℚ(√s)
            raise NotApplicable(str(err)) from None

    declaration_check(name, VEC)(check)


def _norm(v):
    return sympy.sqrt(_sy(Mo.sum_sq(v)))


_l7("sum_sq_lamPlus_eq", lambda x: Mo.sum_sq(Mo.lam_plus(x)) == (1 + Mo.imbalance(x)) / 2)
_l7("sum_sq_lamMinus_eq", lambda x: Mo.sum_sq(Mo.lam_minus(x)) == (1 - Mo.imbalance(x)) / 2)
_l7("two_mul_norm_lamPlus_mul_norm_lamMinus",
    lambda x: zero(2 * _norm(Mo.lam_plus(x)) * _norm(Mo.lam_minus(x)) - lean_sqrt(1 - _sy(Mo.imbalance(x)) ** 2)))
_l7("sum_sq_lamPlus_sub_lamMinus", lambda x: Mo.pairing_sq(x) == 1 - 2 * Mo.stat_c(x))
_l7("pairingScore_eq", lambda x: zero(_sy(Mo.pairing_score(x)) - (1 - lean_sqrt(1 - 2 * _sy(Mo.stat_c(x))))))
_l7("sum_sq_complex", lambda x: zero(sum(((_sy(p) + sympy.I * _sy(m)) ** 2 for p, m in zip(Mo.lam_plus(x),
                                                                                         Mo.lam_minus(x))), 0)
                                     - (_sy(Mo.imbalance(x)) + 2 * sympy.I * _sy(Mo.stat_c(x)))))
_l7("statC_nonneg", lambda x: Mo.stat_c(x).sign() >= 0)
_l7("two_mul_statC_le_one", lambda x: 2 * Mo.stat_c(x) <= 1)
_l7("pairingScore_nonneg", lambda x: Mo.pairing_score(x).sign() >= 0)
_l7("pairingScore_le_one", lambda x: Mo.pairing_score(x) <= 1)


# Lemma 8 ----------------------------------------------------------------------------


def _l8(name: str, fn, need_even: bool = True) -> None:
    def check(s: Subject) -> DeclResult:
        x = vec2m(s) if need_even else vec(s)
        try:
            return DeclResult(bool(fn(s, x)))
        except ValueError as err:
            raise NotApplicable(str(err)) from None

    declaration_check(name, VEC)(check)


def _add(u, v):
    return [a + b for a, b in zip(u, v)]


_l8("iotaMap_iotaMap", lambda s, x: Mo.iota(Mo.iota(x)) == x, False)
_l8("iotaMap_add", lambda s, x: Mo.iota(_add(x, second(s, "y"))) == _add(Mo.iota(x), Mo.iota(second(s, "y"))), False)
_l8("iotaMap_smul", lambda s, x: Mo.iota([second(s, "c") * t for t in x]) == [second(s, "c") * t for t in Mo.iota(x)],
    False)
_l8("sum_iotaMap_mul_iotaMap", lambda s, x: Mo.dot(Mo.iota(x), Mo.iota(second(s, "y"))) == Mo.dot(x, second(s, "y")),
    False)
_l8("sum_iotaMap_mul", lambda s, x: Mo.dot(Mo.iota(x), second(s, "y")) == Mo.dot(x, Mo.iota(second(s, "y"))), False)
_l8("memLambdaSet_iotaMap_iff", lambda s, x: Mo.mem_lambda(Mo.iota(x)) == Mo.mem_lambda(x))
_l8("lamPlus_iotaMap", lambda s, x: Mo.lam_plus(Mo.iota(x)) == Mo.lam_minus(x))
_l8("lamMinus_iotaMap", lambda s, x: Mo.lam_minus(Mo.iota(x)) == Mo.lam_plus(x))
_l8("imbalance_iotaMap", lambda s, x: Mo.imbalance(Mo.iota(x)) == -Mo.imbalance(x))
_l8("statC_iotaMap", lambda s, x: Mo.stat_c(Mo.iota(x)) == Mo.stat_c(x))
_l8("pairingScore_iotaMap", lambda s, x: zero(_sy(Mo.pairing_score(Mo.iota(x))) - _sy(Mo.pairing_score(x))))


def _dist_sq(x) -> Quad:
    return Mo.sum_sq([a - b for a, b in zip(x, Mo.iota(x))])


_l8("sum_sq_sub_iotaMap", lambda s, x: _dist_sq(x) == 2 * Mo.pairing_sq(x))
_l8("pairingScore_eq_dist_iotaMap",
    lambda s, x: zero(_sy(Mo.pairing_score(x)) - (1 - sympy.sqrt(_sy(_dist_sq(x))) / sympy.sqrt(2))))
_l8("pairingScore_eq_one_iff", lambda s, x: (Mo.pairing_score(x) == 1) == (Mo.iota(x) == x))
