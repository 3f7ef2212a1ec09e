"""Issue 23, Lemma 9 as Lean states it (OEEquivalences.lean): the moment series are Lean's tsum
(exact: summable or 0), |x_i| ≥ 1 is an input, and the trace identities use Mathlib's inverse
(0 for a singular matrix).  Expected values by hand."""

from flint import fmpq, fmpq_mat

from qkverify.claims.evaluate import evaluate
from qkverify.io.inputs import VectorInput, input_from_document
from qkverify.math import moments as Mo


def rec(run, check):
    return next(r for r in run.records if r.meta.check == check)


def test_statE_series_is_exact_on_lambda():
    # λ = (−3/5, 4/5) ∈ Λ_1: E = (9/25)/(16/25) + (16/25)/(9/25) = 9/16 + 16/9 = 337/144, and the
    # even-moment series Σ_k Σ_i λ_i^(2k+2) = Σ_i λ_i²/(1 − λ_i²) is summable with that sum; decided
    # exactly (it was "certified" to 10⁻³⁰, an equality of reals from enclosures)
    run = evaluate("statO_eq_tsum_odd_moments", input_from_document({"x": ["-3/5", "4/5"]}))
    r = rec(run, "statE_eq_tsum_even_moments")
    assert r.conclusion == "holds" and r.result.evidence == "exact"
    assert Mo.tsum_even_moments([fmpq(-3, 5), fmpq(4, 5)]) == (True, fmpq(337, 144))
    assert rec(run, "statO_eq_tsum_odd_moments").result.evidence == "exact"


def test_statE_with_h_dropped_is_evaluated_at_one_half_one():
    # x = (1/2, 1): not in Λ_1 (‖x‖² = 5/4).  statE = (1/4)/(3/4) + 1/(1 − 1) = 1/3 + 0 (x/0 = 0);
    # the series has terms (1/4)^(k+1) + 1, not summable: Lean's tsum is 0 ≠ 1/3
    inp = input_from_document({"x": ["1/2", "1"]})
    run = evaluate("statO_eq_tsum_odd_moments", inp, drop=("h",), only=("statE_eq_tsum_even_moments",))
    r = rec(run, "statE_eq_tsum_even_moments")
    assert r.hypotheses == {"h": False} and r.conclusion == "fails" and r.result.evidence == "exact"
    assert Mo.stat_e([fmpq(1, 2), fmpq(1)]) == fmpq(1, 3)


def test_statO_with_h_dropped_not_summable():
    # x = (0, 2): statO = 0 + 2/(1 − 4) = −2/3; terms 2^(2k+1) do not tend to 0: tsum 0 ≠ −2/3
    run = evaluate("statO_eq_tsum_odd_moments", input_from_document({"x": ["0", "2"]}), drop=("h",),
                   only=("statO_eq_tsum_odd_moments",))
    assert rec(run, "statO_eq_tsum_odd_moments").conclusion == "fails"
    # ±2 cancel term by term: summable with sum 1/2/(1 − 1/4) = 2/3 = statO (2 and −2 cancel there too)
    assert Mo.tsum_odd_moments([fmpq(-2), fmpq(2), fmpq(1, 2)]) == (True, fmpq(2, 3))
    assert Mo.stat_o([fmpq(-2), fmpq(2), fmpq(1, 2)]) == fmpq(2, 3)


def test_trace_eq_statR_singular_inverse_is_zero():
    # x = (0, 1), S = diag(0, 1): 1 − S = diag(1, 0) is singular, Mathlib's inverse is 0, so
    # tr((1 − S)⁻¹) = 0; statR x = 1/(1 − 0) + 1/(1 − 1) = 1 + 0 = 1: the statement (h dropped) fails.
    # It was refused (ZeroDivisionError → not applicable).
    inp = VectorInput((fmpq(0), fmpq(1)), False, S=fmpq_mat([[0, 0], [0, 1]]))
    run = evaluate("statO_eq_tsum_odd_moments", inp, drop=("h",), only=("trace_eq_statR",))
    r = rec(run, "trace_eq_statR")
    assert r.hypotheses == {"hS": True, "h": False, "hσ": True}
    assert r.conclusion == "fails"
    w = run.subject.witnesses[("inverse", "rI_minus_S")]
    assert "null" in w and [fmpq(int(c)) for c in w["null"]][0] == 0


def test_trace_eq_statO_singular():
    # x = (1/2, 1), S = diag(1/2, 1): 1 − S² = diag(3/4, 0) singular → 0, trace 0;
    # statO = (1/2)/(3/4) + 1/0 = 2/3 ≠ 0
    inp = VectorInput((fmpq(1, 2), fmpq(1)), False, S=fmpq_mat([[fmpq(1, 2), 0], [0, 1]]))
    run = evaluate("statO_eq_tsum_odd_moments", inp, drop=("h",), only=("trace_eq_statO", "trace_eq_statE"))
    assert rec(run, "trace_eq_statO").conclusion == "fails"      # 0 ≠ 2/3
    assert rec(run, "trace_eq_statE").conclusion == "fails"      # 0 ≠ (1/4)/(3/4) = 1/3


def test_trace_identities_hold_on_lambda():
    # λ = (−3/5, 4/5), S = diag(−3/5, 4/5): tr((1 − S)⁻¹) = 1/(8/5) + 1/(1/5) = 5/8 + 5 = 45/8 = statR λ
    inp = VectorInput((fmpq(-3, 5), fmpq(4, 5)), False, S=fmpq_mat([[fmpq(-3, 5), 0], [0, fmpq(4, 5)]]))
    run = evaluate("statO_eq_tsum_odd_moments", inp)
    for c in ("trace_eq_statO", "trace_eq_statE", "trace_eq_statR"):
        assert rec(run, c).conclusion == "holds"
    assert Mo.stat_r([fmpq(-3, 5), fmpq(4, 5)]) == fmpq(45, 8)
