"""Appendices B and C and Lemma 10, declaration by declaration: values derived by hand in the
comments (or with sympy's exact radicals), every certificate valid for the kernel, mutated
certificates rejected."""

import json

import pytest
import sympy
from flint import fmpq, fmpq_mat

from qkverify.audit.suite import with_spectrum
from qkverify.claims.evaluate import evaluate
from qkverify.claims.gram import lemma10_values
from qkverify.claims.registry import Subject
from qkverify.errors import QKInputError
from qkverify.io.inputs import HeadInput, VectorInput, input_from_document
from qkverify.kernel import verify_document

R2 = sympy.sqrt(2)


def vec(x, normalize=False, y=None, c=None, S=None):
    return VectorInput(tuple(fmpq(*v) if isinstance(v, tuple) else fmpq(v) for v in x), normalize,
                       None if y is None else tuple(fmpq(v) for v in y), None if c is None else fmpq(*c), S)


def kernel(run):
    return verify_document(json.loads(json.dumps(run.certificate())))


def rec(run, check):
    return next(r for r in run.records if r.meta.check == check)


def val(run, check):
    """A record's value as a sympy number (exact) or list of them."""
    v = rec(run, check).result.value
    return _sym(v)


def _sym(v):
    (tag, x), = v.items()
    if tag == "list":
        return [_sym(t) for t in x]
    if tag == "exact":
        return sympy.Rational(x)
    if tag == "bool":
        return x
    t = sympy.Symbol("t")
    poly = sum(int(c) * t ** k for k, c in enumerate(x["poly"]))
    roots = [r for r in sympy.real_roots(poly) if sympy.Rational(x["lo"]) <= r <= sympy.Rational(x["hi"])]
    assert len(roots) == 1
    return sympy.nsimplify(sympy.simplify(roots[0]))


def same(a, b) -> bool:
    return sympy.simplify(a - b) == 0


MU = vec([-3, -1, 2, 2], normalize=True, y=[1, 2, 0, -1], c=(3, 2), S=with_spectrum([-3, -1, 2, 2], 11))


def test_normalised_spectrum_m3_m1_2_2_by_hand():
    # λ = μ/√18 = μ/(3√2); λ₊ = (2, 2)/(3√2), λ₋ = (3, 1)/(3√2)
    # 𝓘 = (4 + 4 − 9 − 1)/18 = −1/9, C = (6 + 2)/18 = 4/9, ‖λ₊ − λ₋‖² = (1 + 1)/18 = 1/9, 𝒫 = 1 − 1/3 = 2/3
    run = evaluate("MemLambdaSet", MU)
    assert val(run, "MemLambdaSet") is True
    assert val(run, "imbalance") == sympy.Rational(-1, 9)
    assert val(run, "statC") == sympy.Rational(4, 9)
    assert val(run, "pairingScore") == sympy.Rational(2, 3)
    assert all(same(a, b) for a, b in zip(val(run, "lamPlus"), [R2 / 3, R2 / 3]))
    assert all(same(a, b) for a, b in zip(val(run, "lamMinus"), [1 / R2, R2 / 6]))
    assert all(same(a, b) for a, b in zip(val(run, "iotaMap"), [-R2 / 3, -R2 / 3, R2 / 6, 1 / R2]))
    assert kernel(run).status == "valid"
    # O: −1/√2 ↦ (−1/√2)/(1/2) = −√2; −√2/6 ↦ (−√2/6)(18/17) = −3√2/17; √2/3 ↦ (√2/3)(9/7) = 3√2/7 (twice)
    #    O = √2(−1 − 3/17 + 6/7) = −38√2/119
    # E = 1 + 1/17 + 2·(2/7) = 194/119
    # R = (2 − √2) + (18 − 3√2)/17 + 2(9 + 3√2)/7 = 670/119 − 38√2/119
    run = evaluate("statO", MU)
    assert same(val(run, "statO"), -38 * R2 / 119)
    assert val(run, "statE") == sympy.Rational(194, 119)
    assert same(val(run, "statR"), sympy.Rational(670, 119) - 38 * R2 / 119)
    assert kernel(run).status == "valid"


def test_lambda_points_by_hand():
    # (−3/5, 4/5): λ₊ = (4/5), λ₋ = (3/5): 𝓘 = 7/25, C = 12/25, 𝒫 = 1 − 1/5 = 4/5;
    # O = −15/16 + 20/9 = 185/144, E = 9/16 + 16/9 = 337/144, R = 5/8 + 5 = 45/8
    p = vec([(-3, 5), (4, 5)])
    run = evaluate("MemLambdaSet", p)
    assert [val(run, k) for k in ("imbalance", "statC", "pairingScore")] == [sympy.Rational(7, 25),
                                                                             sympy.Rational(12, 25),
                                                                             sympy.Rational(4, 5)]
    run = evaluate("statO", p)
    assert [val(run, k) for k in ("statO", "statE", "statR")] == [sympy.Rational(185, 144), sympy.Rational(337, 144),
                                                                  sympy.Rational(45, 8)]
    # (−1/2, −1/2, 1/2, 1/2): λ₊ = λ₋ = (1/2, 1/2): 𝓘 = 0, C = 1/2, 𝒫 = 1 and ιλ = λ;
    # O = 0, E = 4·(1/4)/(3/4) = 4/3, R = 2/(3/2) + 2/(1/2) = 16/3
    h = vec([(-1, 2), (-1, 2), (1, 2), (1, 2)])
    run = evaluate("MemLambdaSet", h)
    assert [val(run, k) for k in ("imbalance", "statC", "pairingScore")] == [0, sympy.Rational(1, 2), 1]
    run = evaluate("statO", h)
    assert [val(run, k) for k in ("statO", "statE", "statR")] == [0, sympy.Rational(4, 3), sympy.Rational(16, 3)]
    run = evaluate("pairingScore_eq_one_iff", h)
    assert rec(run, "pairingScore_eq_one_iff").conclusion == "holds"     # 𝒫 = 1 and ιλ = λ
    assert kernel(run).status == "valid"


@pytest.mark.parametrize("st", ["pairingScore_eq", "pairingScore_eq_one_iff", "statO_eq_tsum_odd_moments"])
def test_lemmas_7_8_9_hold_on_the_normalised_spectrum(st):
    run = evaluate(st, MU)
    # Σ' = closed form: Lean's tsum decided exactly (summable, geometric closed form), so it holds exactly
    assert run.verdict == "holds" and not run.skipped
    out = kernel(run)
    assert out.status == "valid", out.reason
    if st == "statO_eq_tsum_odd_moments":
        # the tsum and the trace formulas exactly (S has spectrum μ)
        r = rec(run, "statO_eq_tsum_odd_moments")
        assert (r.conclusion, r.result.evidence) == ("holds", "exact")
        assert rec(run, "trace_eq_statR").result.evidence == "exact"


def test_hypotheses_are_needed_off_lambda():
    # x = (−1, 3) is not a unit vector: λ₊ = (3), λ₋ = (1), 𝓘 = 8, ‖λ₊‖² = 9 ≠ (1 + 8)/2, |x_2| = 3 ≥ 1,
    # 2C = 6 > 1, 𝒫 = 1 − √4 = −1 < 0; with x/0 = 0: O = 0 + 3/(1 − 9) = −3/8, R = 1/2 − 1/2 = 0,
    # R(ιx) = R(−3, 1) = 1/4, so (R − R∘ι)/2 = −1/8 ≠ O.  The identities that hold for every x
    # (sum_sq_complex, C ≥ 0 here, the ι rules, statO_iotaMap) still hold with the hypothesis dropped
    x = vec([-1, 3])
    fails = {"sum_sq_lamPlus_eq", "two_mul_statC_le_one", "pairingScore_nonneg", "MemLambdaSet.abs_entry_lt_one",
             "statO_eq_half_statR_sub"}
    holds = {"sum_sq_complex", "statC_nonneg", "imbalance_iotaMap", "statO_iotaMap"}
    for st in ("pairingScore_eq", "pairingScore_eq_one_iff", "statO_eq_tsum_odd_moments"):
        run = evaluate(st, x, drop=("hx", "_hx", "h", "_h"))
        got = {r.meta.check: r.conclusion for r in run.records}
        assert {c: got[c] for c in fails if c in got} == {c: "fails" for c in fails if c in got}
        assert all(got[c] == "holds" for c in holds if c in got)
        assert kernel(run).status == "valid"
    assert not evaluate("pairingScore_eq", x, drop=("hx",)).records[0].result.conclusion


def test_mirror_with_y_and_c_and_odd_length():
    # ι(x + y) = ιx + ιy and ι(cx) = c·ιx on ℝ³ (no Λ structure): only the length-free declarations run
    run = evaluate("pairingScore_eq_one_iff", vec([1, -2, 3], y=[0, 1, 1], c=(1, 2)))
    assert {r.meta.check for r in run.records} == {"iotaMap_iotaMap", "iotaMap_add", "iotaMap_smul",
                                                   "sum_iotaMap_mul_iotaMap", "sum_iotaMap_mul"}
    assert run.verdict == "holds" and kernel(run).status == "valid"
    run = evaluate("MemLambdaSet", vec([1, -2, 3]))
    # MemLambdaSet takes x : Fin (2m) → ℝ: on ℝ³ it is not of its type, so not evaluated (issue 18)
    assert val(run, "iotaMap") == [-3, 2, -1] and "MemLambdaSet" not in {r.meta.check for r in run.records}


def test_head_square_norm_lemma10_by_hand():
    # W_Q = (−3, −3, 0), W_K = (−3, 1, −2): S = [[9, 3, 3], [3, −3, 3], [3, 3, 0]], ‖S‖² = 144,
    # det(tI − S) = t(t² − 6t − 54): ν = 3 ± 3√7, λ = (1 ± √7)/4.
    # 1 − λ² = (4 ∓ √7)/8, so λ/(1 − λ²) = 2(1 ± √7)/(4 ∓ √7) = 2(11 ± 5√7)/9: O = 44/9;
    # λ²/(1 − λ²) = (4 ± √7)²/9: E = 46/9; 1/(1 − λ) = 4/(3 ∓ √7) = 2(3 ± √7): R = 12
    head = HeadInput(fmpq_mat([[-3, -3, 0]]), fmpq_mat([[-3, 1, -2]]), k=2)
    s = Subject(head)
    vals = lemma10_values(s)
    assert [vals[k] for k in ("statO", "statE", "statR")] == [fmpq(44, 9), fmpq(46, 9), 12]
    run = evaluate("GramForm.charpoly_roots_filter_ne_zero", head)
    # every declaration but the two on a given lam (the definition, the uniqueness) is evaluated
    assert run.verdict == "holds" and {c for c, _ in run.skipped} == {
        "GramForm.IsSortedNormalizedNonzeroSpectrum", "GramForm.isSortedNormalizedNonzeroSpectrum_unique"}
    # G = MMᵀ with M = [W_K; W_Q]: ‖W_K‖² = 14, ⟨W_K, W_Q⟩ = 9 − 3 = 6, ‖W_Q‖² = 18
    assert rec(run, "GramForm.G").result.value == {"matrix": [["14", "6"], ["6", "18"]]}
    assert kernel(run).status == "valid"


def test_head_non_square_norm_against_sympy():
    # W_Q = (1, 2, 0), W_K = (0, 1, −1): ‖S‖² = 7 is not a square; O, E, R of λ = ν/√7 by sympy's radicals
    head = HeadInput(fmpq_mat([[1, 2, 0]]), fmpq_mat([[0, 1, -1]]))
    S = sympy.Matrix([[0, sympy.Rational(1, 2), -sympy.Rational(1, 2)], [sympy.Rational(1, 2), 2, -1],
                      [-sympy.Rational(1, 2), -1, 0]])
    lam = [ev / sympy.sqrt(7) for ev, m in S.eigenvals().items() for _ in range(m) if ev != 0]
    want = [sum(t / (1 - t ** 2) for t in lam), sum(t ** 2 / (1 - t ** 2) for t in lam), sum(1 / (1 - t) for t in lam)]
    got = lemma10_values(Subject(head))
    for k, w in zip(("statO", "statE", "statR"), want):
        assert same(got[k].sympy(), w)
    run = evaluate("GramForm.charpoly_roots_filter_ne_zero", head)
    assert run.verdict == "holds" and kernel(run).status == "valid"


def test_lemma10_without_surjectivity():
    # W_Q = W_K = (1, 0, 1): S has eigenvalues 2, 0, 0 while ½JG = [[1, 1], [1, 1]] has 0 and 2:
    # the nonzero spectra differ, so charpoly_roots_filter_ne_zero needs hM; S = ½MᵀJM holds anyway
    tied = HeadInput(fmpq_mat([[1, 0, 1]]), fmpq_mat([[1, 0, 1]]))
    run = evaluate("GramForm.charpoly_roots_filter_ne_zero", tied)
    assert rec(run, "GramForm.symPart_eq_half_conj").conclusion == "holds"
    assert "GramForm.charpoly_roots_filter_ne_zero" in {c for c, _ in run.skipped}
    assert kernel(run).status == "valid"
    probe = evaluate("GramForm.charpoly_roots_filter_ne_zero", tied, drop=("hM",),
                     only=("GramForm.charpoly_roots_filter_ne_zero",))
    assert probe.verdict == "fails"
    out = kernel(probe)
    assert out.status == "valid" and out.verdict == "fails", out.reason


def test_hn_cannot_be_violated_by_a_head():
    # 1 ≤ n (hn) holds on every head: a head has at least one row; an empty one is refused
    with pytest.raises(QKInputError):
        input_from_document({"W_Q": [], "W_K": []})


@pytest.mark.parametrize("mutate,check", [
    (lambda c: next(w for w in c["witnesses"] if w["kind"] == "inverse")["rows"][0].__setitem__(0, "7"), "inverse"),
    (lambda c: next(d for d in c["declarations"] if d["check"] == "trace_eq_statO").update(conclusion="fails"),
     "declarations"),
    (lambda c: next(d for d in c["declarations"] if d["check"] == "statO_iotaMap")["hypotheses"].update(_h=False),
     "declarations"),
    # the input changed: the inverse witness (checked first) no longer inverts sI − S²
    (lambda c: c["input"].update(x=["-3", "-1", "2", "3"]), ("declarations", "inverse")),
])
def test_kernel_rejects_mutated_lemma9_certificates(mutate, check):
    cert = json.loads(json.dumps(evaluate("statO_eq_tsum_odd_moments", MU).certificate()))
    assert verify_document(cert).status == "valid"
    mutate(cert)
    out = verify_document(cert)
    assert out.status == "invalid" and out.check.startswith(check), (out.check, out.reason)


def test_kernel_rejects_a_wrong_stated_value():
    cert = json.loads(json.dumps(evaluate("statO", MU).certificate()))
    d = next(d for d in cert["declarations"] if d["check"] == "statE")
    d["value"] = {"exact": "195/119"}
    out = verify_document(cert)
    assert out.status == "invalid" and "statE" in out.check
    cert = json.loads(json.dumps(evaluate("MemLambdaSet", MU).certificate()))
    d = next(d for d in cert["declarations"] if d["check"] == "pairingScore")
    d["value"] = {"exact": "3/4"}
    assert verify_document(cert).status == "invalid"


def test_vector_input_parsing():
    v = input_from_document({"x": ["-3", -1, 2, "2"], "normalize": True})
    assert v.kind2 == "vector" and v.to_json2() == {"kind": "vector", "x": ["-3", "-1", "2", "2"], "normalize": True}
    assert input_from_document([1, "1/2"]).x == (1, fmpq(1, 2))
    for bad in ({"x": [0, 0], "normalize": True}, {"x": [1], "normalize": "yes"}, {"x": []}, {"x": [1], "z": 2}):
        with pytest.raises(QKInputError):
            input_from_document(bad)
