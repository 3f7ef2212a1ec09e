"""Issue 23, Lemma 10 as Lean states it (GramForm.lean): k is an input of trace_pow_symPart
(k = 0 stateable and false), λ and S are inputs of IsSortedNormalizedNonzeroSpectrum (the
normalisation by ‖S‖ exercised), lam / lam' inputs of the uniqueness, the λ theorems at a given
lam, heads with n = 0.  Expected values by hand."""

from qkverify.claims.evaluate import evaluate
from qkverify.io.inputs import input_from_document

ST = "GramForm.charpoly_roots_filter_ne_zero"


def rec(run, check):
    return next((r for r in run.records if r.meta.check == check), None)


HEAD = {"W_Q": [[1, 2, 0]], "W_K": [[0, 1, -1]]}  # n = 1, N = 3


def test_trace_pow_k_is_an_input_and_k_zero_fails():
    # S = symPart(W_Kᵀ W_Q): W_Kᵀ W_Q = [[0,0,0],[1,2,0],[-1,-2,0]]; at k = 0 both sides are traces
    # of identities: tr(I_3) = 3 ≠ tr(I_2) = 2 — stateable with hk dropped, and false
    inp = input_from_document(dict(HEAD, k=0))
    run = evaluate(ST, inp, drop=("hk",), only=("GramForm.trace_pow_symPart",))
    r = rec(run, "GramForm.trace_pow_symPart")
    assert r.hypotheses == {"hk": False} and r.conclusion == "fails"
    # k = 2: tr(S²) = frobSq S = Σ S_ij²; S = [[0, 1/2, −1/2], [1/2, 2, −1], [−1/2, −1, 0]]:
    # 1/4 + 1/4 + 1/4 + 4 + 1 + 1/4 + 1 = 7, and tr((½JG)²) must be the same
    run = evaluate(ST, input_from_document(dict(HEAD, k=2)), only=("GramForm.trace_pow_symPart",))
    assert rec(run, "GramForm.trace_pow_symPart").conclusion == "holds"
    # no k: the declaration is not evaluated (it was checked "for every k" with hk the constant True)
    run = evaluate(ST, input_from_document(HEAD))
    assert rec(run, "GramForm.trace_pow_symPart") is None


def test_is_sorted_normalized_spectrum_takes_S_and_lam():
    # S = diag(3, 4): ‖S‖ = 5, nonzero roots 3, 4: lam = (3/5, 4/5) is it, (3, 4) is not (the
    # normalisation), (4/5, 3/5) is not sorted
    def value(S, lam):
        run = evaluate(ST, input_from_document({"S": S, "lam": lam}), only=("GramForm.IsSortedNormalizedNonzeroSpectrum",))
        return rec(run, "GramForm.IsSortedNormalizedNonzeroSpectrum").result.value
    assert value([[3, 0], [0, 4]], ["3/5", "4/5"]) == {"bool": True}
    assert value([[3, 0], [0, 4]], ["3", "4"]) == {"bool": False}
    assert value([[3, 0], [0, 4]], ["4/5", "3/5"]) == {"bool": False}
    # S = I₂: ‖S‖ = √2, lam = (1/√2, 1/√2) = roots of 2x² − 1 in [0, 1]
    assert value([[1, 0], [0, 1]], ["root(2*x^2 - 1, [0, 1])", "root(2*x^2 - 1, [0, 1])"]) == {"bool": True}
    # a non-symmetric S: [[0, 1], [0, 0]] has no nonzero real root: only the empty lam
    assert value([[0, 1], [0, 0]], []) == {"bool": True}
    assert value([[0, 1], [0, 0]], ["0"]) == {"bool": False}


def test_uniqueness_on_lam_and_lam2():
    inp = input_from_document({"S": [[3, 0], [0, 4]], "lam": ["3/5", "4/5"], "lam2": ["3/5", "4/5"]})
    assert rec(evaluate(ST, inp), "GramForm.isSortedNormalizedNonzeroSpectrum_unique").conclusion == "holds"
    # h' dropped: lam2 = (0, 0) is not the spectrum, lam ≠ lam2
    inp = input_from_document({"S": [[3, 0], [0, 4]], "lam": ["3/5", "4/5"], "lam2": ["0", "0"]})
    run = evaluate(ST, inp, drop=("h'",), only=("GramForm.isSortedNormalizedNonzeroSpectrum_unique",))
    r = rec(run, "GramForm.isSortedNormalizedNonzeroSpectrum_unique")
    assert r.hypotheses == {"h": True, "h'": False} and r.conclusion == "fails"


def test_lambda_theorems_at_a_given_lam():
    # head W_Q = [[0, 1]], W_K = [[1, 0]] (n = 1, N = 2): S = [[0, 1/2], [1/2, 0]], eigenvalues ±1/2,
    # ‖S‖ = 1/√2, λ = (−1/√2, 1/√2) ∈ Λ_1.  lam = (0, 0) is not λ: with h dropped, MemLambdaSet fails
    # (Σ lam² = 0 ≠ 1) and statO lam = 0 while tr(H(1 − H²)⁻¹) for H = (JG)/(2‖S‖) ... (λ: O = 0 too),
    # statE lam = 0 ≠ E(λ) = 2·(1/2)/(1/2) = 2
    inp = input_from_document({"W_Q": [[0, 1]], "W_K": [[1, 0]], "lam": ["0", "0"]})
    run = evaluate(ST, inp, drop=("h",))
    assert rec(run, "GramForm.memLambdaSet_of_isSortedNormalizedNonzeroSpectrum").conclusion == "fails"
    assert rec(run, "GramForm.statE_eq_trace").conclusion == "fails"
    assert rec(run, "GramForm.statO_eq_trace").conclusion == "holds"   # 0 = 0: odd sums cancel
    # the computed lam: every λ theorem holds
    run = evaluate(ST, input_from_document({"W_Q": [[0, 1]], "W_K": [[1, 0]]}))
    for c in ("memLambdaSet_of_isSortedNormalizedNonzeroSpectrum", "statO_eq_trace", "statE_eq_trace",
              "statR_eq_trace"):
        assert rec(run, f"GramForm.{c}").conclusion == "holds"


def test_head_with_n_zero():
    # n = 0 (Fin 0): hM holds (onto ℝ⁰), lam is empty and is the sorted spectrum of S = 0, but
    # MemLambdaSet 0 (empty) fails (Σ = 0 ≠ 1): hn is needed
    inp = input_from_document({"W_Q": [], "W_K": [], "N": 2})
    assert inp.n == 0 and inp.N == 2
    run = evaluate(ST, inp, drop=("hn",), only=("GramForm.memLambdaSet_of_isSortedNormalizedNonzeroSpectrum",))
    r = rec(run, "GramForm.memLambdaSet_of_isSortedNormalizedNonzeroSpectrum")
    assert r.hypotheses == {"hM": True, "hn": False, "h": True} and r.conclusion == "fails"
