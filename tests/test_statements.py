"""Statements checked declaration by declaration (certificate format 2), each
verified by the kernel.  Expected values are derived by hand in the comments."""

import json
import subprocess
import sys

import pytest
from flint import fmpq, fmpq_mat

from qkverify import certificates
from qkverify.claims import metadata
from qkverify.claims.evaluate import evaluate
from qkverify.errors import QKInputError
from qkverify.io.inputs import FiberInput, HeadInput, MatrixInput
from qkverify.kernel import verify_document


def run_cli(*args, cwd=None):
    r = subprocess.run([sys.executable, "-m", "qkverify", *args], capture_output=True, text=True, cwd=cwd)
    return r.returncode, r.stdout, r.stderr


def kernel(cert):
    return verify_document(json.loads(json.dumps(cert)))


def record(run, check):
    return next(r for r in run.records if r.meta.check == check)


def test_resolve_statement_names():
    assert metadata.resolve("Theorem 3").id == "heads_have_balanced_attention"
    assert metadata.resolve("thm 4").id == "profile_sum_eq_one"
    assert metadata.resolve("Appendices.profileB_nonneg").id == "profile_sum_eq_one"
    assert metadata.resolve("frobSq_symPart_div").id == "frobSq_eq_frobSq_symPart_add_frobSq_skewPart"
    assert metadata.resolve("Theorem 99") is None


def test_lemma5_each_declaration_has_its_own_hypotheses():
    # L = 0: the undivided identities have no hypothesis and are evaluated; the divided
    # forms need hL and are skipped (not refused as a whole)
    run = evaluate("frobSq_eq_frobSq_symPart_add_frobSq_skewPart", MatrixInput(fmpq_mat(2, 2)))
    assert {r.meta.check for r in run.records} == {"frobSq_symPart", "frobSq_skewPart",
                                                   "frobSq_eq_frobSq_symPart_add_frobSq_skewPart"}
    assert {c for c, _ in run.skipped} == {"frobSq_symPart_div", "frobSq_skewPart_div"}
    assert kernel(run.certificate()).status == "valid"


def test_def_a1_values():
    # L = [[1,2],[3,4]]: ‖L‖² = 30, S = [[1, 5/2], [5/2, 4]], T = [[0, −1/2], [1/2, 0]]
    run = evaluate("symPart", MatrixInput(fmpq_mat([[1, 2], [3, 4]])))
    assert record(run, "frobSq").result.value == {"exact": "30"}
    assert record(run, "symPart").result.value == {"matrix": [["1", "5/2"], ["5/2", "4"]]}
    assert record(run, "skewPart").result.value == {"matrix": [["0", "-1/2"], ["1/2", "0"]]}
    assert kernel(run.certificate()).status == "valid"


def test_profile_of_1234_by_hand():
    # S = [[1, 5/2], [5/2, 4]]: eigenvalues (5 ± √34)/2, α₁ = (5 + √34)/2, β₁ = (√34 − 5)/2;
    # ‖L‖² = 30, ‖T‖² = 1/2: a = 1/60, b = 2α₁β₁/30 = 2·(9/4)/30 = 3/20,
    # c = (α₁ − β₁)²/30 = 25/30 = 5/6, d = 0
    run = evaluate("profile", MatrixInput(fmpq_mat([[1, 2], [3, 4]])))
    assert record(run, "profileA").result.value == {"exact": "1/60"}
    assert record(run, "profileD").result.value == {"exact": "0"}
    from qkverify.kernel.jsonio import dec

    for k, q in (("profileB", fmpq(3, 20)), ("profileC", fmpq(5, 6))):
        enc = record(run, k).result.value["enclosure"]
        assert dec(enc[0]) < q < dec(enc[1]) and dec(enc[1]) - dec(enc[0]) < fmpq(1, 10**9)
    assert record(run, "profileB").result.evidence == "certified"
    out = kernel(run.certificate())
    assert out.status == "valid", out.reason


def test_theorem4_on_zero_matrix():
    # L = 0: the four nonnegativity theorems have no hypothesis (π(0) = (0,0,0,0) in Lean);
    # everything else needs hL and is skipped; with hL dropped the sum is 0 ≠ 1
    Z = MatrixInput(fmpq_mat(2, 2))
    run = evaluate("profile_sum_eq_one", Z)
    assert {r.meta.check for r in run.records} == {f"profile{k}_nonneg" for k in "ABCD"}
    assert kernel(run.certificate()).status == "valid"
    probe = evaluate("profile_sum_eq_one", Z, drop=("hL",), only=("profile_sum_eq_one",))
    assert probe.verdict == "fails" and record(probe, "profile_sum_eq_one").dropped == ("hL",)
    out = kernel(probe.certificate())
    assert out.status == "valid" and out.verdict == "fails", out.reason


def test_theorem4_decomposition_witness_by_hand():
    # S = diag(2, −1): α = (2, 0), β = (1, 0), d = 0; H = diag(1, −1), P = diag(1, 0);
    # c = (2 − 1)²/5 = 1/5 and ‖P‖² = 1 = c·‖L‖²
    run = evaluate("profile_sum_eq_one", MatrixInput(fmpq_mat([[2, 0], [0, -1]])))
    w = run.subject.witnesses[("fiber", "d")]
    assert w["H"] == [["1", "0"], ["0", "-1"]] and w["P"] == [["1", "0"], ["0", "0"]]
    assert record(run, "profileD_eq_zero_decomp_commute").conclusion == "holds"
    # c = 1/5 ≠ 0 and no S = H − P exists (β₁ = 1 < α₁ = 2): the iff holds (issue 23: the ∃ side is
    # decided, by the counting argument, rather than skipped)
    assert record(run, "profileC_eq_zero_iff_decomp").conclusion == "holds"
    assert kernel(run.certificate()).status == "valid"


def test_theorem4_converse_from_a_given_decomposition():
    # S = diag(1, −3) = H − P with H = diag(1, −1), P = diag(0, 2): then c = 0
    inp = FiberInput(fmpq_mat([[1, 1], [-1, -3]]), "c", fmpq_mat([[1, 0], [0, -1]]), fmpq_mat([[0, 0], [0, 2]]))
    run = evaluate("profile_sum_eq_one", inp, only=("profileC_eq_zero_iff_decomp",))
    assert record(run, "profileC_eq_zero_iff_decomp").conclusion == "holds"
    assert kernel(run.certificate()).status == "valid"
    # a candidate that does not satisfy the properties (P not ⪰ 0) is only a hint: the ∃ side is
    # decided with the producer's own witness (c = 0 here), so the iff still holds
    bad = FiberInput(fmpq_mat([[1, 1], [-1, -3]]), "c", fmpq_mat([[1, 0], [0, -5]]), fmpq_mat([[0, 0], [0, -2]]))
    run = evaluate("profile_sum_eq_one", bad, only=("profileC_eq_zero_iff_decomp",))
    assert record(run, "profileC_eq_zero_iff_decomp").conclusion == "holds"
    assert ("fiber", "c") in run.subject.witnesses


def test_theorem3_head_and_second_basis():
    # M = [W_K; W_Q] has rank 4 = 2n (N = 5): signature (2, 2, 1) in every basis
    WQ = fmpq_mat([[1, 0, 2, 0, 1], [0, 1, 0, 1, 3]])
    WK = fmpq_mat([[1, 1, 0, 0, 0], [0, 0, 1, -1, 2]])
    B = fmpq_mat([[1, 1, 0, 0, 0], [0, 1, 2, 0, 0], [0, 0, 1, -1, 0], [1, 0, 0, 1, 1], [0, 0, 0, 0, 2]])
    for inp in (HeadInput(WQ, WK), HeadInput(WQ, WK, B=B)):
        run = evaluate("heads_have_balanced_attention", inp)
        assert record(run, "signature").result.value == {"ints": [2, 2, 1]}
        assert record(run, "heads_have_balanced_attention").conclusion == "holds"
        assert record(run, "radical_eq_ker").conclusion == "holds"
        assert kernel(run.certificate()).status == "valid"


def test_theorem3_without_surjectivity_fails():
    # W_Q = W_K: S = W_QᵀW_Q ⪰ 0, rank M = 1 < 2: signature (1, 0, 2) ≠ (1, 1, 1)
    tied = HeadInput(fmpq_mat([[1, 0, 1]]), fmpq_mat([[1, 0, 1]]))
    run = evaluate("heads_have_balanced_attention", tied)
    assert "heads_have_balanced_attention" in {c for c, _ in run.skipped}
    probe = evaluate("heads_have_balanced_attention", tied, drop=("hnd",), only=("heads_have_balanced_attention",))
    assert probe.verdict == "fails"
    assert kernel(probe.certificate()).status == "valid"


def test_certificate_bytes_identical_and_no_silent_overwrite(tmp_path):
    inp = MatrixInput(fmpq_mat([[1, 2], [3, 4]]))
    c1 = evaluate("profile", inp).certificate()
    c2 = evaluate("profile", inp).certificate()
    assert certificates.canonical_bytes(c1) == certificates.canonical_bytes(c2)
    p = tmp_path / "c.json"
    assert certificates.write(c1, p) == "written"
    assert certificates.write(c2, p) == "unchanged"
    other = evaluate("profile", MatrixInput(fmpq_mat([[1, 0], [0, 2]]))).certificate()
    with pytest.raises(QKInputError, match="--force"):
        certificates.write(other, p)
    bad = dict(c1, verdict="probably")
    with pytest.raises(QKInputError, match="schema"):
        certificates.write(bad, tmp_path / "d.json")


@pytest.mark.parametrize("mutate,check", [
    (lambda c: c["declarations"][0].update(conclusion="fails"), "declarations[0]"),
    (lambda c: c["declarations"][1]["hypotheses"].update(hL=False), "declarations[1]"),
    (lambda c: c["declarations"].append(dict(c["declarations"][0])), "declarations"),
    (lambda c: c.update(verdict="fails"), "verdict"),
    (lambda c: c.update(evidence="certified"), "evidence"),
    (lambda c: c.update(statement="profile"), "declarations[0]"),
    (lambda c: c["witnesses"].clear(), "witnesses"),
    (lambda c: c["witnesses"].append(dict(c["witnesses"][0])), "witnesses"),
    (lambda c: c["declarations"][0].update(extra=1), "schema"),
])
def test_kernel_rejects_mutations(mutate, check):
    run = evaluate("profile_sum_eq_one", MatrixInput(fmpq_mat([[1, 2], [3, 4]])))
    cert = json.loads(json.dumps(run.certificate()))
    assert kernel(cert).status == "valid"
    mutate(cert)
    out = kernel(cert)
    assert out.status == "invalid" and out.check.startswith(check), (out.check, out.reason)


def test_cli_check_and_verify(tmp_path):
    g = tmp_path / "l.json"
    g.write_text("[[1,2],[3,4]]")
    code, out, err = run_cli("check", "Theorem 4", "--input", str(g), "--out", str(tmp_path / "t4.json"))
    assert code == 0, err
    cert = json.loads((tmp_path / "t4.json").read_text())
    assert cert["verdict"] == "holds" and cert["statement"] == "profile_sum_eq_one"
    assert cert["input"] == {"kind": "matrix", "L": [["1", "2"], ["3", "4"]]}
    code, out, err = run_cli("verify", str(tmp_path / "t4.json"))
    assert code == 0 and "valid" in out, out + err
    f = tmp_path / "h.json"
    f.write_text(json.dumps({"W_Q": [[1, 0, 1]], "W_K": [[1, 0, 1]]}))
    code, out, err = run_cli("check", "Theorem 3", "--input", str(f), "--no-cert")
    # issue 23: a statement whose hypothesis is false (and not dropped) does not apply: exit 2
    assert code == 2 and "Theorem 3 does not apply: hnd" in err, out + err
    code, out, err = run_cli("check", "Theorem 3", "--input", str(f), "--no-cert", "--drop", "hnd")
    assert code == 1 and "heads_have_balanced_attention: fails [exact]" in out, out + err


def test_theorem4_at_zero_with_hL_dropped():
    # π(0) = (0, 0, 0, 0) in Lean: a + b + c + d = 0 ≠ 1; a = 0 although 0ᵀ = −0, so
    # profileA_eq_one_iff fails too; the d = 0 decomposition holds with H = P = 0
    run = evaluate("profile_sum_eq_one", MatrixInput(fmpq_mat(2, 2)), drop=("hL",))
    concl = {r.meta.check: r.conclusion for r in run.records}
    assert concl["profile_sum_eq_one"] == "fails" and concl["profileA_eq_one_iff"] == "fails"
    assert concl["profileA_eq_zero_iff"] == "holds" and concl["profileD_eq_zero_decomp_commute"] == "holds"
    out = kernel(run.certificate())
    assert out.status == "valid" and out.verdict == "fails"


def test_cli_theorem4_zero_matrix_drop(tmp_path):
    f = tmp_path / "z.json"
    f.write_text("[[0,0],[0,0]]")
    code, out, err = run_cli("check", "Theorem 4", "--input", str(f), "--drop", "L_ne_zero", "--no-cert")
    assert code == 1 and "profile_sum_eq_one: fails [exact]" in out, out + err
