"""Issue 23, kernel side: every finding's input, certified by the producer, is re-decided by the
kernel (the certificate is ``valid``) with the conclusion Lean's reading gives.  Each expected
value is derived by hand in its comment; on today's main these certificates are not valid (the
kernel demanded commutation, summed the series by enclosures, had no singular inverse, no exact
reals in inputs, …) or the producer concluded otherwise."""

import json

import pytest

from qkverify.claims.evaluate import evaluate
from qkverify.io.inputs import input_from_document
from qkverify.kernel.check import verify_document


def both(statement, doc, drop=(), only=()):
    """(check id → conclusion, kernel outcome) of the producer's certificate."""
    run = evaluate(statement, input_from_document(doc), drop=tuple(drop), only=tuple(only))
    out = verify_document(json.loads(json.dumps(run.certificate())))
    assert out.status == "valid", (out.check, out.reason)
    return {r.meta.check: r.conclusion for r in run.records}, run


# -- Theorem 4: the decomposition faces ---------------------------------------------------


def test_iff_decomp_without_commutation_on_an_irrational_spectrum():
    # S = [[1, 1], [1, 0]]: eigenvalues (1 ± √5)/2, α = ((1+√5)/2, 0), β = ((√5−1)/2, 0): α₁ − β₁ = 1 > 0,
    # so d = 0 (face d reached) and c = 1/‖L‖²·1 ≠ 0
    got, run = both("profile_sum_eq_one", {"kind": "matrix", "L": [[1, 1], [1, 0]]})
    assert got["profileD_eq_zero_iff_decomp"] == "holds"
    assert got["profileC_eq_zero_iff_decomp"] == "holds"     # c ≠ 0 and no decomposition (counting)
    # Lean's commuting construction over ℚ(√5): P = (S − λ₋I)/√5, ‖P‖² = (α₁ − β₁)² = 1 = c‖L‖²
    assert got["profileD_eq_zero_decomp_commute"] == "holds"
    w = run.subject.witnesses[("fiber", "d")]
    assert w["sqrt"] == "5" and w["P"] == [["1/2", "0"], ["0", "1/2"]] and w["P_sqrt"] == [["1/10", "1/5"], ["1/5", "-1/10"]]


def test_decomp_commute_off_the_face_fails_by_non_existence():
    # diag(1, −3): α = (1, 0), β = (3, 0): α₁ < β₁, so d = (3 − 1)²/10 = 2/5 ≠ 0 and no H, P exist
    got, _ = both("profile_sum_eq_one", {"kind": "matrix", "L": [[1, 0], [0, -3]]}, drop=("h",))
    assert got["profileD_eq_zero_decomp_commute"] == "fails"
    assert got["profileC_eq_zero_decomp_commute"] == "holds"   # c = 0: rational construction


def test_decomp_commute_beyond_one_quadratic_field_is_undecided():
    # S = sym [[1,2,0],[0,−1,1],[1,0,3]] has a cubic irreducible characteristic polynomial
    got, _ = both("profile_sum_eq_one", {"kind": "matrix", "L": [[1, 2, 0], [0, -1, 1], [1, 0, 3]]})
    assert got["profileD_eq_zero_iff_decomp"] == "holds"
    assert got["profileD_eq_zero_decomp_commute"] == "undecided"


# -- Lemma 9: Lean's tsum and singular inverses -------------------------------------------------


def test_statE_series_not_summable_is_zero():
    # x = (1/2, 1): the even moments Σ_k (1/4)^(k+1) + 1 do not tend to 0: tsum = 0; statE = (1/4)/(3/4) + 1/0 = 1/3
    got, _ = both("statO_eq_tsum_odd_moments", {"kind": "vector", "x": ["1/2", "1"]}, drop=("h",))
    assert got["statE_eq_tsum_even_moments"] == "fails"
    # odd: 1^(2k+1) = 1 does not tend to 0: tsum = 0 = statO? statO = (1/2)/(3/4) + 1/0 = 2/3 ≠ 0
    assert got["statO_eq_tsum_odd_moments"] == "fails"


def test_statO_series_with_cancelling_large_entries():
    # x = (−2, 2, 1/2, −1/2): (−2)^(2k+1) + 2^(2k+1) = 0 termwise, the rest sums to 0: summable, tsum = 0;
    # statO = −2/(−3) + 2/(−3) + (1/2)/(3/4) − (1/2)/(3/4) = 0: holds
    got, _ = both("statO_eq_tsum_odd_moments", {"kind": "vector", "x": ["-2", "2", "1/2", "-1/2"]}, drop=("h",))
    assert got["statO_eq_tsum_odd_moments"] == "holds"


def test_statE_series_closed_form_exact():
    # x = (−4, −3, 3, 4)/5 ∈ Λ₂: E = 2·(16/25)/(9/25) + 2·(9/25)/(16/25) = 32/9 + 9/8, exactly the tsum
    got, _ = both("statO_eq_tsum_odd_moments", {"kind": "vector", "x": [-4, -3, 3, 4], "normalize": True})
    assert got["statE_eq_tsum_even_moments"] == "holds" and got["statO_eq_tsum_odd_moments"] == "holds"


def test_trace_eq_statR_with_a_singular_inverse():
    # x = (0, 1), S = diag(0, 1): 1 − S = diag(1, 0) is singular, Mathlib's inverse is 0: tr = 0;
    # statR x = 1/(1 − 0) + 1/(1 − 1) = 1 + 0 = 1 ≠ 0
    got, run = both("statO_eq_tsum_odd_moments", {"kind": "vector", "x": ["0", "1"], "S": [[0, 0], [0, 1]]},
                    drop=("h",))
    assert got["trace_eq_statR"] == "fails"
    assert "null" in run.subject.witnesses[("inverse", "rI_minus_S")]


# -- Lemma 10 (GramForm) ------------------------------------------------------------------------


HEAD = {"kind": "head", "W_Q": [[1, 0, 2, 0, 1], [0, 1, 1, 3, 0]], "W_K": [[1, 1, 0, 0, 2], [0, 2, 1, 1, 0]]}


def test_trace_pow_at_k_zero_is_false():
    # k = 0: tr(S⁰) = N = 5, tr((½JG)⁰) = 2n = 4
    got, _ = both("GramForm.charpoly_roots_filter_ne_zero", dict(HEAD, k=0), drop=("hk",),
                  only=("GramForm.trace_pow_symPart",))
    assert got["GramForm.trace_pow_symPart"] == "fails"


def test_sorted_normalized_spectrum_as_a_definition_of_any_S_and_lam():
    # S = diag(3, 4): ‖S‖ = 5, the sorted normalised spectrum is (3/5, 4/5); (3, 4) is not normalised
    doc = {"kind": "matrix_spectrum", "S": [[3, 0], [0, 4]], "lam": ["3/5", "4/5"], "lam2": ["3/5", "4/5"]}
    got, run = both("GramForm.charpoly_roots_filter_ne_zero", doc)
    assert got["GramForm.isSortedNormalizedNonzeroSpectrum_unique"] == "holds"
    assert [r.result.value for r in run.records if r.meta.check == "GramForm.IsSortedNormalizedNonzeroSpectrum"] == [
        {"bool": True}]
    # I₂: ‖I‖ = √2, λ = (1/√2, 1/√2), the root of 2x² − 1 in [0, 1]; a rotation has no real root (lam = ())
    for S, lam, want in (([[1, 0], [0, 1]], [{"poly": ["-1", "0", "2"], "interval": ["0", "1"]}] * 2, True),
                         ([[1, 0], [0, 1]], ["1", "1"], False), ([[0, -1], [1, 0]], [], True)):
        _, run = both("GramForm.charpoly_roots_filter_ne_zero", {"kind": "matrix_spectrum", "S": S, "lam": lam},
                      only=("GramForm.IsSortedNormalizedNonzeroSpectrum",))
        assert run.records[0].result.value == {"bool": want}


def test_exists_sorted_spectrum_fails_by_counting():
    # W_Q = W_K = [[1,0,0],[1,0,0]] (n = 2): S = diag(2, 0, 0) has 1 nonzero eigenvalue, not 2n = 4
    got, _ = both("GramForm.charpoly_roots_filter_ne_zero",
                  {"kind": "head", "W_Q": [[1, 0, 0], [1, 0, 0]], "W_K": [[1, 0, 0], [1, 0, 0]]}, drop=("hM",),
                  only=("GramForm.exists_isSortedNormalizedNonzeroSpectrum",))
    assert got["GramForm.exists_isSortedNormalizedNonzeroSpectrum"] == "fails"


def test_lam_given_with_h_dropped_is_evaluated():
    # lam = (−1/2, −1/2, 1/2, 1/2) ∈ Λ₂ but not the spectrum of the head: the λ-theorems are evaluated at it
    got, _ = both("GramForm.charpoly_roots_filter_ne_zero", dict(HEAD, lam=["-1/2", "-1/2", "1/2", "1/2"]), drop=("h",))
    assert got["GramForm.memLambdaSet_of_isSortedNormalizedNonzeroSpectrum"] == "holds"   # it is in Λ₂
    assert got["GramForm.statE_eq_trace"] == "fails"   # E(lam) = 4·(1/4)/(3/4) = 4/3, not the head's trace


def test_head_with_n_zero():
    # n = 0, N = 3: M is 0 × 3, ker J = ℝ³, 3 + 0 = 3; the sorted spectrum is empty
    got, _ = both("GramForm.charpoly_roots_filter_ne_zero", {"kind": "head", "W_Q": [], "W_K": [], "N": 3, "k": 0},
                  drop=("hk",))
    assert got["GramForm.trace_pow_symPart"] == "fails"   # tr(S⁰) = 3, tr(K⁰) = 0
    assert got["GramForm.exists_isSortedNormalizedNonzeroSpectrum"] == "holds"


# -- §1 and §2 --------------------------------------------------------------------------------------


def test_finrank_radical_kernel_basis():
    # J = [[1,0,0],[0,1,0]]: ker J = span(e₂), 1 + 2 = 3
    got, _ = both("heads_have_balanced_attention", {"kind": "head", "W_Q": [[1, 0, 0]], "W_K": [[0, 1, 0]]})
    assert got["finrank_radical"] == "holds"


def test_rope_with_a_singular_B0_and_h0_dropped():
    # G₀ = [[1,1],[1,1]] singular: T_d = 0·G_d = 0: IsRoPELike holds (0 = 0·0), the ∃ S side fails (T₀ = 0 ≠ 1)
    doc = {"kind": "forms", "B": [[[1, 1], [1, 1]], [[0, -1], [1, 0]], [[-1, 0], [0, -1]]]}
    got, _ = both("isRoPELike_iff", doc, drop=("h0",))
    assert got["isRoPELike_iff"] == "fails"


def test_near_identity_abs_value_mlp_satisfies_hM():
    # M(y) = relu(y) + relu(−y) = |y|, L = 1: ‖M y‖ = ‖y‖ for N = 1, hM true (activation patterns); L = 1/2 false
    doc = {"kind": "transformer", "x": [["1"], ["-2"]], "norm": "l2", "L": "1",
           "M": {"W_1": [["1"], ["-1"]], "W_2": [["1", "1"]], "act": "relu"},
           "heads": [{"weights": [["1", "0"], ["1/2", "1/2"]], "W_V": [["1"]], "W_O": [["1"]]}]}
    _, run = both("near_identity", doc)
    assert next(r for r in run.records if r.meta.check == "near_identity").hypotheses["hM"] is True
    _, run = both("near_identity", dict(doc, L="1/2"), drop=("hM",))
    assert next(r for r in run.records if r.meta.check == "near_identity").hypotheses["hM"] is False
    assert ("counterexample", "hM") in run.subject.witnesses


def test_bidegree_follows_lean_division():
    # P = u0*v0*(u0/u0): Lean's u0/u0 is 0 at u0 = 0, where u0·v0 is 0 too: P = u0·v0 everywhere (bidegree (1, 1));
    # P = (u0**2*v0)/u0 is u0·v0 off u0 = 0 and 0 on it: also u0·v0
    for P in ("u0*v0*(u0/u0)", "(u0**2*v0)/u0"):
        _, run = both("biaffine_decomposition", {"kind": "biaffine", "N": 1, "P": P},
                      only=("IsPolyBidegreeLeOneOne",))
        assert run.records[0].result.value == {"bool": True}
    # P = v0/u0 is not a polynomial (it is 0 on u0 = 0 and unbounded near it)
    _, run = both("biaffine_decomposition", {"kind": "biaffine", "N": 1, "P": "v0/u0"}, only=("IsPolyBidegreeLeOneOne",))
    assert run.records[0].result.value == {"bool": False}


def test_accumulation_limit_profile_fails_for_negative_rho():
    # ρ = −1/2: limitProfile has second coordinate 2ρ/(1 + ρ²) = −4/5 < 0, projP θ has a + b ≥ 0
    got, _ = both("accumulation", {"kind": "rho", "rho": "-1/2"}, drop=("hρ",),
                  only=("limitProfile_mem_projP_Theta",))
    assert got["limitProfile_mem_projP_Theta"] == "fails"


@pytest.mark.parametrize("null", [["1", "-1"], ["0", "0"]])
def test_kernel_checks_the_null_vector_of_a_singular_inverse(null):
    # a null vector that is not one (or is zero) is invalid: the certificate offers it as Mathlib's 0 inverse
    run = evaluate("statO_eq_tsum_odd_moments", input_from_document({"kind": "vector", "x": ["0", "1"],
                                                                       "S": [[0, 0], [0, 1]]}), drop=("h",))
    cert = json.loads(json.dumps(run.certificate()))
    w = next(w for w in cert["witnesses"] if w["kind"] == "inverse" and w["of"] == "rI_minus_S")
    w["null"] = null
    assert verify_document(cert).status == "invalid"
