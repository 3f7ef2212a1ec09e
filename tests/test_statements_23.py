"""§2 and §3 statements checked per Lean declaration (certificate format 2): Lemma 2
(pairing_bound), Lemma 3 (rank_balance), Lemma 4 (profile_scale), profile_conj and
Proposition 4 (profile_rank_one).  Expected values are derived by hand in the comments (or
with sympy); each certificate is re-checked by the kernel, and mutated ones are rejected."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
import sympy
from flint import fmpq, fmpq_mat

from qkverify.claims import metadata
from qkverify.claims.evaluate import evaluate
from qkverify.errors import QKInputError
from qkverify.io.inputs import (FamilyInput, MatrixInput, OrthoInput, RankOneInput, SubspaceInput, ThetaPointInput,
                                input_from_document)
from qkverify.kernel import verify_document
from qkverify.kernel.jsonio import dec, rat

ROOT = Path(__file__).resolve().parents[1]
MINE = ("pairing_bound", "rank_balance", "profile_scale", "profile_conj", "profile_rank_one")


def Q(*xs):
    return tuple(fmpq(*map(int, x.split("/"))) if isinstance(x, str) else fmpq(x) for x in xs)


def M(rows):
    return fmpq_mat([list(Q(*r)) for r in rows])


def kernel(cert):
    return verify_document(json.loads(json.dumps(cert)))


def record(run, check):
    return next(r for r in run.records if r.meta.check == check)


def valid(run, verdict=None):
    out = kernel(run.certificate())
    assert out.status == "valid", (out.check, out.reason)
    if verdict:
        assert out.verdict == verdict
    return out


def run_cli(*args):
    r = subprocess.run([sys.executable, "-m", "qkverify", *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


# ---------------------------------------------------------------- Lemma 2


def test_lemma2_equality_case_by_hand():
    # S = diag(2, −1): λ₊ = (2, 0), λ₋ = (1, 0), ‖S‖² = 5 = 4 + 1.  𝒫 = 1 − ‖(1, 0)‖/√5 = 1 − 1/√5,
    # the root below 1 of 5(1 − x)² = 1, i.e. 5x² − 10x + 4.  ρ = 1/2, bound = 1 − (1/2)/√(5/4) =
    # 1 − 1/√5 = 𝒫, and λ₋ = ½λ₊: the equality case, decided exactly
    run = evaluate("pairing_bound", MatrixInput(M([[2, 0], [0, -1]])))
    assert record(run, "lamPlusVec").result.value == {"list": [{"exact": "2"}, {"exact": "0"}]}
    assert record(run, "lamMinusVec").result.value == {"list": [{"exact": "1"}, {"exact": "0"}]}
    v = record(run, "pairingScoreSym").result.value["root"]
    assert v["poly"] == ["4", "-10", "5"]
    x = 1 - 1 / sympy.sqrt(5)
    assert sympy.Rational(v["lo"]) < x < sympy.Rational(v["hi"])
    pb = record(run, "pairing_bound")
    assert pb.conclusion == "holds" and pb.result.evidence == "exact" and pb.hypotheses == {"hS": True, "hplus": True}
    assert run.evidence == "exact"
    valid(run, "holds")


def test_lemma2_strict_inequality_by_squaring():
    # S = diag(3, 1, −2, −2): λ₊ = (3, 1), λ₋ = (2, 2); ‖λ₊ − λ₋‖² = 2, ‖S‖² = 18: 𝒫 = 1 − 1/3 = 2/3.
    # ρ = √8/√10 = 2/√5, bound = 1 − (1 − 2/√5)/(3/√5) = (5 − √5)/3 ≈ 0.92 > 2/3; λ₋ ∦ λ₊
    run = evaluate("pairing_bound", MatrixInput(M([[3, 0, 0, 0], [0, 1, 0, 0], [0, 0, -2, 0], [0, 0, 0, -2]])))
    assert record(run, "pairingScoreSym").result.value == {"exact": "2/3"}
    assert record(run, "pairing_bound").result.evidence == "exact"
    valid(run, "holds")


def test_lemma2_irrational_spectrum():
    # L = [[1,2],[3,4]]: S = [[1, 5/2], [5/2, 4]], eigenvalues (5 ± √34)/2, so λ₊ = ((5+√34)/2, 0),
    # λ₋ = ((√34−5)/2, 0): λ₊ − λ₋ = (5, 0), ‖S‖² = 59/2, 𝒫 = 1 − 5/√(59/2) (an enclosure: the
    # eigenvalues are irrational); one entry each, so λ₋ = ρλ₊ and 𝒫 = bound (exact)
    # (Lean's S is the input matrix: the symmetric part is given)
    run = evaluate("pairing_bound", MatrixInput(M([[1, "5/2"], ["5/2", 4]])))
    lo, hi = record(run, "pairingScoreSym").result.value["enclosure"]
    x = 1 - 5 / sympy.sqrt(sympy.Rational(59, 2))
    assert sympy.Rational(str(dec(lo))) < x < sympy.Rational(str(dec(hi)))
    assert record(run, "pairingScoreSym").result.evidence == "certified"
    assert record(run, "pairing_bound").result.evidence == "exact"
    valid(run, "holds")
    # two positive and two negative irrational eigenvalues, not proportional: decided by enclosures
    run = evaluate("pairing_bound", MatrixInput(M([[1, "5/2", 0], ["5/2", 4, 3], [0, 3, -2]])))
    assert record(run, "pairing_bound").conclusion == "holds"
    assert record(run, "pairing_bound").result.evidence == "certified"
    valid(run, "holds")


@pytest.mark.parametrize("rows", [[[-1, 0], [0, -3]], [[0, 0], [0, 0]]])
def test_lemma2_with_lamplus_zero_is_evaluated(rows):
    # λ₊ = 0: Lean's ρ = ‖λ₋‖/0 = 0 and the bound is 1 − 1/1 = 0.
    # S = diag(−1, −3): 𝒫 = 1 − ‖(3, 1)‖/√10 = 0 = bound, but λ₋ = (3, 1) ≠ 0 = ρλ₊: the iff fails.
    # S = 0: 𝒫 = 1 − 0/0 = 1 > 0 = bound.  Without the drop the declaration is skipped (not refused).
    inp = MatrixInput(M(rows))
    run = evaluate("pairing_bound", inp)
    assert ("pairing_bound", "hypothesis hplus (λ₊ ≠ 0 (S has a positive eigenvalue)) fails") in run.skipped
    assert {r.meta.check for r in run.records} == {"lamPlusVec", "lamMinusVec", "pairingScoreSym",
                                                   "frobSq_eq_norm_sq_add_norm_sq"}
    valid(run, "holds")
    probe = evaluate("pairing_bound", inp, drop=("hplus",), only=("pairing_bound",))
    assert probe.verdict == "fails" and record(probe, "pairing_bound").hypotheses["hplus"] is False
    valid(probe, "fails")


def test_lemma2_value_tampering_rejected():
    run = evaluate("pairing_bound", MatrixInput(M([[2, 0], [0, -1]])))
    cert = json.loads(json.dumps(run.certificate()))
    i = next(k for k, d in enumerate(cert["declarations"]) if d["check"] == "pairingScoreSym")
    bad = json.loads(json.dumps(cert))
    bad["declarations"][i]["value"]["root"]["hi"] = bad["declarations"][i]["value"]["root"]["lo"]
    assert kernel(bad).status == "invalid"
    bad = json.loads(json.dumps(cert))
    bad["declarations"][i]["value"] = {"exact": "11/20"}  # 1 − 1/√5 ≈ 0.5528 is irrational
    assert kernel(bad).status == "invalid"
    bad = json.loads(json.dumps(cert))
    j = next(k for k, d in enumerate(cert["declarations"]) if d["check"] == "pairing_bound")
    bad["declarations"][j]["evidence"] = "certified"
    out = kernel(bad)
    assert out.status == "invalid" and "evidence" in out.reason


# ---------------------------------------------------------------- Lemma 3


def test_lemma3_n_zero_is_a_valid_input():
    inp = input_from_document({"L": [[0, 0], [0, 0]], "n": 0})
    assert inp.n == 0 and inp.kind2 == "matrix_bound"
    run = evaluate("rank_balance", inp)  # rank 0 ≤ 0; S = 0 has no positive or negative eigenvalue
    assert record(run, "rank_balance").conclusion == "holds"
    valid(run, "holds")
    with pytest.raises(QKInputError, match="nonnegative"):
        input_from_document({"L": [[0]], "n": -1})


def test_lemma3_needs_rank_le_n():
    # L = I₂, n = 1: rank 2 > 1 and S = I has 2 > 1 positive eigenvalues
    inp = MatrixInput(M([[1, 0], [0, 1]]), 1)
    with pytest.raises(QKInputError, match="hrank"):
        evaluate("rank_balance", inp)
    probe = evaluate("rank_balance", inp, drop=("hrank",))
    assert probe.verdict == "fails"
    valid(probe, "fails")


def test_finrank_le_of_posDefOn_on_a_given_subspace():
    # L = W_KᵀW_Q of the suite's N = 5, n = 2 head (rank 2): S[0,0] = 1, S[4,4] = 6, S[0,4] = 1/2, so
    # G = V S Vᵀ = [[1, 1/2], [1/2, 6]] for V = span(e₀, e₄) has det 23/4 > 0: dim V = 2 ≤ n = 2
    from qkverify.audit.suite import _heads

    L = _heads()["head_nondegenerate_N5_n2"].L
    V = M([[1, 0, 0, 0, 0], [0, 0, 0, 0, 1]])
    G = V * (L + L.transpose()) * V.transpose() / 2
    assert G == M([[1, "1/2"], ["1/2", 6]])
    run = evaluate("rank_balance", SubspaceInput(L, 2, V))
    rec = record(run, "finrank_le_of_posDefOn")
    assert rec.hypotheses == {"hrank": True, "hV": True} and rec.conclusion == "holds"
    valid(run, "holds")
    # S[1,1] = 0: S is not positive definite on span(e₁), so the declaration is skipped
    run = evaluate("rank_balance", SubspaceInput(L, 2, M([[0, 1, 0, 0, 0]])))
    assert "finrank_le_of_posDefOn" in {c for c, _ in run.skipped}
    # without hrank: L = I₂, n = 1, V = ℝ²: dim 2 > 1
    probe = evaluate("rank_balance", SubspaceInput(M([[1, 0], [0, 1]]), 1, M([[1, 0], [0, 1]])), drop=("hrank",))
    assert record(probe, "finrank_le_of_posDefOn").conclusion == "fails"
    valid(probe, "fails")
    with pytest.raises(QKInputError, match="linearly independent"):
        input_from_document({"L": [[1, 0], [0, 1]], "n": 1, "V": [[1, 0], [2, 0]]})


def test_lemma3_forged_witnesses_rejected():
    run = evaluate("rank_balance", SubspaceInput(M([[2, 0], [0, -1]]), 2, M([[1, 0]])))
    cert = json.loads(json.dumps(run.certificate()))
    kinds = {(w["kind"], w["of"]): i for i, w in enumerate(cert["witnesses"])}
    bad = json.loads(json.dumps(cert))
    bad["witnesses"][kinds[("spectrum", "S")]]["factors"][0]["poly"][0] = "7"
    out = kernel(bad)
    assert out.status == "invalid" and "spectrum" in out.check
    bad = json.loads(json.dumps(cert))
    bad["witnesses"][kinds[("rank", "V")]]["rank"] = 0
    assert kernel(bad).status == "invalid"
    bad = json.loads(json.dumps(cert))
    bad["input"]["n"] = 0  # hrank becomes false: the certificate's hypotheses no longer hold
    assert kernel(bad).status == "invalid"


# ---------------------------------------------------------------- Lemma 4


def test_lemma4_hypotheses_per_declaration():
    # L antisymmetric: S = 0, so only profile_scale (hS) is skipped; L = 0 also skips one_sub_profileA (hL)
    run = evaluate("profile_scale", MatrixInput(M([[0, 1], [-1, 0]])))
    assert {r.meta.check for r in run.records} == {"profileA_symPart", "one_sub_profileA"}
    assert record(run, "one_sub_profileA").hypotheses == {"hL": True}
    valid(run, "holds")
    run = evaluate("profile_scale", MatrixInput(M([[0, 0], [0, 0]])))
    assert {r.meta.check for r in run.records} == {"profileA_symPart"}
    # with hS dropped on S = 0: b = c = d = 0 for L and (Lean's x/0 = 0) for S: the identity holds
    probe = evaluate("profile_scale", MatrixInput(M([[0, 1], [-1, 0]])), drop=("hS",), only=("profile_scale",))
    assert probe.verdict == "holds" and record(probe, "profile_scale").dropped == ("hS",)
    valid(probe, "holds")


def test_lemma4_by_hand():
    # L = [[2, 1], [−1, −1]]: S = diag(2, −1), T = [[0, 1], [−1, 0]]; ‖L‖² = 7, ‖T‖² = 2, a = 2/7.
    # b(L) = 2·2·1/7 = 4/7, b(S) = 4/5, (1 − 2/7)·4/5 = 4/7; c(L) = 1/7 = (5/7)·(1/5)
    run = evaluate("profile_scale", MatrixInput(M([[2, 1], [-1, -1]])))
    assert all(r.conclusion == "holds" and r.result.evidence == "exact" for r in run.records)
    valid(run, "holds")
    # irrational eigenvalues ([[1,2],[3,4]]: a = 1/60, ‖S‖²/‖L‖² = (59/2)/30 = 59/60): still exact
    run = evaluate("profile_scale", MatrixInput(M([[1, 2], [3, 4]])))
    assert run.evidence == "exact"
    valid(run, "holds")


# ---------------------------------------------------------------- profile_conj


def test_profile_conj_decided_exactly_and_can_fail():
    from qkverify.exact.matrix import cayley_orthogonal

    U = cayley_orthogonal(M([[0, 1, 2], [-1, 0, 3], [-2, -3, 0]]))
    run = evaluate("profile_conj", OrthoInput(M([[1, 2, 0], [3, 4, 1], [0, 5, -2]]), U))
    assert record(run, "profile_conj").result.evidence == "exact"  # the irrational α, β compared exactly
    valid(run, "holds")
    # U = [[1,1],[0,1]] is not orthogonal: L = e₀e₁ᵀ has a = 1/2, UᵀLU = [[0,1],[0,1]] has
    # ‖T‖² = 1/2, ‖·‖² = 2, a = 1/4: the conclusion fails (it is no constant)
    inp = OrthoInput(M([[0, 1], [0, 0]]), M([[1, 1], [0, 1]]))
    with pytest.raises(QKInputError, match="hU"):
        evaluate("profile_conj", inp)
    probe = evaluate("profile_conj", inp, drop=("hU",))
    assert probe.verdict == "fails"
    valid(probe, "fails")
    # U = 2I: the spectra differ (×4) but the profile is scale-invariant: compared coordinate by coordinate
    probe = evaluate("profile_conj", OrthoInput(M([[2, 1], [-1, -1]]), M([[2, 0], [0, 2]])), drop=("hU",))
    assert probe.verdict == "holds" and record(probe, "profile_conj").result.evidence == "exact"
    valid(probe, "holds")


def test_exists_orthogonal_cols_witness():
    # v₀ = (1,2,2)/3, v₁ = (2,1,−2)/3 are orthonormal; the extension U has them as columns 0, 1
    v = M([["1/3", "2/3", "2/3"], ["2/3", "1/3", "-2/3"], [0, 0, 0]])
    run = evaluate("profile_conj", FamilyInput(v, (0, 1)))
    U = fmpq_mat([[rat(x) for x in r] for r in run.subject.witnesses[("orthogonal", "family")]["U"]])
    assert U.transpose() * U == fmpq_mat(3, 3, [1, 0, 0, 0, 1, 0, 0, 0, 1])
    assert [U[k, 0] for k in range(3)] == list(Q("1/3", "2/3", "2/3"))
    assert [U[k, 1] for k in range(3)] == list(Q("2/3", "1/3", "-2/3"))
    cert = run.certificate()
    valid(run, "holds")
    bad = json.loads(json.dumps(cert))
    bad["witnesses"][0]["U"][2][2] = "-1/3"
    assert kernel(bad).status == "invalid"
    # not orthonormal (|v₀|² = 2): no orthogonal U has v₀ as a column
    probe = evaluate("profile_conj", FamilyInput(M([[1, 1], [0, 0]]), (0,)), drop=("hv",))
    assert probe.verdict == "fails"
    valid(probe, "fails")


# ---------------------------------------------------------------- Proposition 4


def test_prop4_lean_form_by_hand():
    # L = [[3/5, 4/5], [0, 0]] = e₀(3/5, 4/5)ᵀ: rank 1, ‖L‖² = 1, t = tr L = 3/5:
    # π = ((1 − 9/25)/2, (1 − 9/25)/2, 9/25, 0) = (8/25, 8/25, 9/25, 0)
    from qkverify.math.profile import compute_profile

    L = M([["3/5", "4/5"], [0, 0]])
    assert [c.exact for c in compute_profile(L, "lean").coords()] == list(Q("8/25", "8/25", "9/25", 0))
    run = evaluate("profile_rank_one", MatrixInput(L))
    rec = record(run, "profile_rank_one")
    assert rec.hypotheses == {"hL": True, "hnorm": True} and rec.conclusion == "holds"
    assert record(run, "profiles_rank_one_eq_Theta").conclusion == "holds"
    w = run.subject.witnesses[("factor", "L")]
    assert (w["x"], w["y"]) == (["1", "0"], ["3/5", "4/5"])
    valid(run, "holds")


def test_prop4_N1_does_not_need_N_ge_2():
    # the old probe called N ≥ 2 needed for profile_rank_one with [[1]]; it is a hypothesis of
    # profiles_rank_one_eq_Theta only.  [[1]]: t = 1, π = (0, 0, 1, 0); [[−1]]: (0, 0, 0, 1)
    binders = {h.binder for h in metadata.declaration("profile_rank_one").hypotheses}
    assert binders == {"hL", "hnorm"}
    assert {h.binder for h in metadata.declaration("profiles_rank_one_eq_Theta").hypotheses} == {"hN"}
    for x in (1, -1):
        run = evaluate("profile_rank_one", MatrixInput(M([[x]])))
        assert record(run, "profile_rank_one").conclusion == "holds"
        assert any(c == "profiles_rank_one_eq_Theta" and "hN" in why for c, why in run.skipped)
        valid(run, "holds")


def test_prop4_normalised_generalisation():
    # L = [[−1, −2], [−2, −4]] = x yᵀ with x = (1, 2), y = (−1, −2): ‖L‖² = 25 ≠ 1 (profile_rank_one's
    # hnorm fails); at u = x/√5, v = y/√5, s = 5: t = u·v = −1, π = (0, 0, 0, 1)
    run = evaluate("profile_rank_one", MatrixInput(M([[-1, -2], [-2, -4]])))
    assert ("profile_rank_one", "hypothesis hnorm (frobSq L = 1) fails") in run.skipped
    assert record(run, "profile_smul_vecMulVec").conclusion == "holds"
    assert record(run, "exists_smul_vecMulVec_of_rank_eq_one").conclusion == "holds"
    w = run.subject.witnesses[("factor", "L")]
    assert (w["x"], w["y"]) == (["1", "2"], ["-1", "-2"])
    valid(run, "holds")
    # rank 2: no factorisation; with hL dropped the existence fails (s·u vᵀ has rank 1)
    probe = evaluate("profile_rank_one", MatrixInput(M([[1, 0], [0, 1]])), drop=("hL",),
                     only=("exists_smul_vecMulVec_of_rank_eq_one",))
    assert probe.verdict == "fails"
    valid(probe, "fails")
    # Lean form without hL: diag(3/5, 4/5) has ‖L‖² = 1, t = 7/5, formula a = (1 − 49/25)/2 < 0 ≠ 0
    probe = evaluate("profile_rank_one", MatrixInput(M([["3/5", 0], [0, "4/5"]])), drop=("hL",),
                     only=("profile_rank_one",))
    assert probe.verdict == "fails"
    valid(probe, "fails")


def test_prop4_rank_one_input():
    # u = e₁, v = (2, −2, 1)/3, s = 1/2: t = −2/3, π = (5/18, 5/18, 0, 4/9)
    run = evaluate("profile_rank_one", RankOneInput(Q(0, 1, 0), Q("2/3", "-2/3", "1/3"), fmpq(1, 2)))
    assert record(run, "profile_smul_vecMulVec").hypotheses == {"hu": True, "hv": True, "hs": True}
    valid(run, "holds")
    from qkverify.math.profile import compute_profile

    L = RankOneInput(Q(0, 1, 0), Q("2/3", "-2/3", "1/3"), fmpq(1, 2)).L
    assert [c.exact for c in compute_profile(L, "lean").coords()] == list(Q("5/18", "5/18", 0, "4/9"))
    # s = −1 < 0: π(−uvᵀ) has t = −u·v, so c and d swap: fails.  u = (2, 0) not unit: fails
    for inp, hyp in ((RankOneInput(Q("3/5", "4/5"), Q(1, 0), fmpq(-1)), "hs"),
                     (RankOneInput(Q(2, 0), Q(1, 0), fmpq(1)), "hu")):
        probe = evaluate("profile_rank_one", inp, drop=(hyp,))
        assert probe.verdict == "fails"
        valid(probe, "fails")


def _sympy_profile(x, y):
    L = sympy.Matrix(len(x), len(y), lambda i, j: x[i] * y[j])
    S, T = (L + L.T) / 2, (L - L.T) / 2
    fL = sum(e ** 2 for e in L)
    ev = S.eigenvals(multiple=True)
    al = sorted([e for e in ev if e > 0], reverse=True) + [0] * len(ev)
    be = sorted([-e for e in ev if e < 0], reverse=True) + [0] * len(ev)
    pairs = list(zip(al, be))[:len(ev)]
    return [sympy.simplify(z) for z in (sum(e ** 2 for e in T) / fL, sum(2 * a * b for a, b in pairs) / fL,
                                        sum((a - b) ** 2 for a, b in pairs if a > b) / fL,
                                        sum((b - a) ** 2 for a, b in pairs if b > a) / fL)]


@pytest.mark.parametrize("p,N,kind", [
    (("8/25", "8/25", "9/25", 0), 2, "pythagorean"),   # t = 3/5, r = 4/5: y = (3/5, 4/5)
    (("1/4", "1/4", "1/2", 0), 2, "scaled"),          # t² = 1/2 = r²: y = (1, 1)
    (("1/3", "1/3", "1/3", 0), 3, "surd"),            # t² = 1/3, t/r = √(1/2): y = (√(1/2), 1, 0)
    (("1/6", "1/6", 0, "2/3"), 2, "surd"),            # t = −√(2/3), t/r = −√2: y = (−√2, 1)
    ((0, 0, 0, 1), 2, "vertex"),                      # t = −1: y = −e₀
])
def test_points_of_theta_are_realised(p, N, kind):
    run = evaluate("profile_rank_one", ThetaPointInput(Q(*p), N))
    assert record(run, "Theta").result.value == {"bool": True}
    assert record(run, "profiles_rank_one_eq_Theta").conclusion == "holds"
    w = run.subject.witnesses[("factor", "theta")]
    assert ("sqrt" in w) == (kind == "surd")
    m = sympy.Rational(w.get("sqrt", "0"))
    x = [sympy.Rational(a) for a in w["x"]]
    y = [sympy.Rational(b) + sympy.Rational(c) * sympy.sqrt(m) for b, c in zip(w["y"], w.get("y_sqrt", ["0"] * N))]
    assert _sympy_profile(x, y) == [sympy.Rational(str(z)) for z in Q(*p)]
    cert = json.loads(json.dumps(run.certificate()))
    valid(run, "holds")
    bad = json.loads(json.dumps(cert))
    i = next(k for k, v in enumerate(bad["witnesses"]) if v["kind"] == "factor")
    bad["witnesses"][i]["y"][-1] = "5"
    assert kernel(bad).status == "invalid"


def test_theta_needs_N_ge_2_and_points_off_theta():
    # N = 1: every 1 × 1 matrix is symmetric (a = 0), so (1/2, 1/2, 0, 0) ∈ Θ is not realised
    inp = ThetaPointInput(Q("1/2", "1/2", 0, 0), 1)
    run = evaluate("profile_rank_one", inp)
    assert any(c == "profiles_rank_one_eq_Theta" and "hN" in why for c, why in run.skipped)
    probe = evaluate("profile_rank_one", inp, drop=("hN",))
    assert record(probe, "profiles_rank_one_eq_Theta").conclusion == "fails"
    valid(probe, "fails")
    # the vertices are realised in N = 1 as well ([1]: (0, 0, 1, 0))
    probe = evaluate("profile_rank_one", ThetaPointInput(Q(0, 0, 1, 0), 1), drop=("hN",))
    assert probe.verdict == "holds"
    valid(probe, "holds")
    # (1/4, 1/4, 1/4, 1/4) has cd ≠ 0: not in Θ; the ⊇ direction is not evaluated there
    run = evaluate("profile_rank_one", ThetaPointInput(Q("1/4", "1/4", "1/4", "1/4"), 2))
    assert record(run, "Theta").result.value == {"bool": False}
    assert "profiles_rank_one_eq_Theta" in {c for c, _ in run.skipped}
    valid(run, "holds")


# ---------------------------------------------------------------- no constant checks


@pytest.mark.parametrize("statement,inp,module,attr,fake", [
    # producer side: a wrong power sum Σλ² must make frobSq_eq_norm_sq_add_norm_sq fail
    ("pairing_bound", MatrixInput(M([[1, "5/2"], ["5/2", 4]])), "qkverify.claims.balance", "_spec",
     lambda orig: lambda s: orig(s)[:2] + (orig(s)[2] + 1,)),
    # producer side: a wrong a(L) must make one_sub_profileA and profile_scale fail
    ("profile_scale", MatrixInput(M([[1, 2], [3, 4]])), "qkverify.claims.profile", "_a",
     lambda orig: lambda X: orig(X) + fmpq(1, 7)),
])
def test_producer_checks_depend_on_what_they_compare(monkeypatch, statement, inp, module, attr, fake):
    import importlib

    mod = importlib.import_module(module)
    assert evaluate(statement, inp).verdict == "holds"
    monkeypatch.setattr(mod, attr, fake(getattr(mod, attr)))
    assert evaluate(statement, inp).verdict == "fails"


@pytest.mark.parametrize("statement,inp,attr,fake", [
    ("pairing_bound", MatrixInput(M([[1, "5/2"], ["5/2", 4]])), "balance.power_sum", lambda orig: lambda q: orig(q) + 1),
    ("pairing_bound", MatrixInput(M([[2, 0], [0, -1]])), "balance.proportional", lambda orig: lambda q: not orig(q)),
    ("rank_balance", MatrixInput(M([[1, 2], [3, 4]]), 2), "balance.signs", lambda orig: lambda q, of="S": (3, 0, 0)),
    ("profile_scale", MatrixInput(M([[1, 2], [3, 4]])), "profile._a", lambda orig: lambda X: orig(X) + 1),
    ("profile_rank_one", MatrixInput(M([["3/5", "4/5"], [0, 0]])), "rank_one._formula",
     lambda orig: lambda t2, sg: orig(t2 + fmpq(1, 9), sg)),
    ("profile_rank_one", ThetaPointInput(Q("8/25", "8/25", "9/25", 0), 2), "rank_one._in_theta",
     lambda orig: lambda p: False),
])
def test_kernel_checks_depend_on_what_they_compare(monkeypatch, statement, inp, attr, fake):
    """A certificate the kernel accepts becomes invalid when one of the quantities a check
    compares is computed wrongly: the check is not a constant."""
    import importlib

    modname, name = attr.split(".")
    mod = importlib.import_module(f"qkverify.kernel.rules.{modname}")
    cert = evaluate(statement, inp).certificate()
    assert kernel(cert).status == "valid"
    monkeypatch.setattr(mod, name, fake(getattr(mod, name)))
    assert kernel(cert).status == "invalid"


# ---------------------------------------------------------------- shipped certificates, CLI, kernel


def test_shipped_certificates_are_valid_and_cover_every_declaration():
    seen = {}
    for st in MINE:
        files = sorted((ROOT / "certificates" / st).glob("*.json"))
        assert files, st
        for f in files:
            doc = json.loads(f.read_text())
            assert doc["format"] == "qkverify-certificate/3" and doc["statement"] == st
            out = verify_document(doc, str(f))
            assert out.status == "valid", (f, out.check, out.reason)
            for d in doc["declarations"]:
                seen.setdefault(d["name"], set()).add(d["conclusion"])
    want = {d.name for st in MINE for d in metadata.statement(st).decls}
    assert set(seen) == want and all(v <= {"holds", "computed"} for v in seen.values())


def test_cli_check_drop_and_verify(tmp_path):
    f = tmp_path / "l.json"
    f.write_text(json.dumps({"L": [[1, 0], [0, 1]], "n": 1}))
    code, out, err = run_cli("check", "Lemma 3", "--input", str(f), "--no-cert")
    assert code == 2 and "hrank" in err
    code, out, err = run_cli("check", "Lemma 3", "--input", str(f), "--no-cert", "--drop", "hrank")
    assert code == 1 and "rank_balance: fails [exact]" in out
    g = tmp_path / "p.json"
    g.write_text(json.dumps({"p": ["1/2", "1/2", "0", "0"], "N": 1}))
    code, out, err = run_cli("check", "Proposition 4", "--input", str(g), "--no-cert")
    assert code == 0 and "profiles_rank_one_eq_Theta: not evaluated (hypothesis hN" in out
    code, out, err = run_cli("check", "Proposition 4", "--input", str(g), "--out", str(tmp_path / "c.json"),
                             "--drop", "hN")
    assert code == 1 and "profiles_rank_one_eq_Theta: fails [exact]" in out
    code, out, err = run_cli("verify", str(tmp_path / "c.json"))
    assert code == 0 and "valid" in out, out + err


def test_new_kernel_modules_import_only_the_standard_library_and_flint():
    for name in ("balance.py", "rank_one.py", "profile.py"):
        tree = ast.parse((ROOT / "qkverify" / "kernel" / "rules" / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                assert node.module.split(".")[0] in sys.stdlib_module_names | {"flint", "__future__"}, node.module
            if isinstance(node, ast.Import):
                assert all(a.name.split(".")[0] in sys.stdlib_module_names | {"flint"} for a in node.names)
