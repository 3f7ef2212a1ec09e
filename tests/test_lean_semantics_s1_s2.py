"""Issue 23 on §1 and §2: honest headlines (Theorem 3 on a degenerate head exits 2; definitions
show their values), finrank_radical computes ker J, RoPE with Mathlib's singular inverse (no
exit 70) and no constant sides on real heads, IsPolyBidegreeLeOneOne with Lean's x/0 = 0, and
near_identity's hM decided as Lean states it.  Expected values by hand."""

import json
import subprocess
import sys

import pytest
from flint import fmpq

from qkverify.claims.evaluate import evaluate, summary
from qkverify.claims.registry import declaration_check_fn
from qkverify.io.inputs import input_from_document


def rec(run, check):
    return next((r for r in run.records if r.meta.check == check), None)


def cli(*args, cwd=None):
    p = subprocess.run([sys.executable, "-m", "qkverify", *args], capture_output=True, text=True, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


# a degenerate head: n = 1, N = 3, W_Q = e₀ᵀ, W_K = 2e₀ᵀ: [W_K; W_Q] has rank 1 < 2n = 2
DEGENERATE = {"W_Q": [[1, 0, 0]], "W_K": [[2, 0, 0]]}


def test_theorem3_does_not_apply_on_a_degenerate_head(tmp_path):
    f = tmp_path / "h.json"
    f.write_text(json.dumps(DEGENERATE))
    code, out, err = cli("check", "Theorem 3", "--input", str(f), "--no-cert")
    assert code == 2 and out == ""
    assert "Theorem 3 does not apply: hnd" in err and "is false on this input" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    # --drop hnd evaluates it: S = diag(2, 0, 0) has signature (1, 0, 2) ≠ (1, 1, 1)
    code, out, err = cli("check", "Theorem 3", "--input", str(f), "--no-cert", "--drop", "hnd")
    assert code == 1 and "heads_have_balanced_attention: fails" in out
    # the definition shows its value
    assert "Nondegenerate = false" in out and "signature = (1, 0, 2)" in out


def test_definitions_print_values():
    run = evaluate("heads_have_balanced_attention", input_from_document(DEGENERATE), only=("Nondegenerate",))
    assert summary(rec(run, "Nondegenerate")) == "Nondegenerate = false"


def test_finrank_radical_computes_the_kernel_of_the_stacked_map():
    # W_Q = e₀ᵀ, W_K = e₁ᵀ (n = 1, N = 3): J = [W_Q; W_K] = [[1,0,0],[0,1,0]], ker J = span(e₂):
    # dim 1, and 1 + 2·1 = 3 = N.  The witness is a basis of ker J (was: (N − rank M) + 2n = N)
    run = evaluate("heads_have_balanced_attention", input_from_document({"W_Q": [[1, 0, 0]], "W_K": [[0, 1, 0]]}))
    assert rec(run, "finrank_radical").conclusion == "holds"
    w = run.subject.witnesses[("kernel_basis", "stacked")]
    assert len(w["vectors"]) == 1
    v = [fmpq(int(t)) if "/" not in t else fmpq(*map(int, t.split("/"))) for t in w["vectors"][0]]
    assert v[0] == 0 and v[1] == 0 and v[2] != 0
    # degenerate head, hnd dropped: ker J = span(e₁, e₂), 2 + 2 ≠ 3
    run = evaluate("heads_have_balanced_attention", input_from_document(DEGENERATE), drop=("hnd",),
                   only=("finrank_radical",))
    assert rec(run, "finrank_radical").conclusion == "fails"
    assert "weights" not in declaration_check_fn("finrank_radical").kinds


def test_isRoPELike_iff_drop_h0_with_a_singular_B0(tmp_path):
    # B₀ = 0 (degenerate), B₁ = [[1]]: Mathlib's inverse of G₀ = 0 is 0, T_d = 0; IsRoPELike holds
    # (0 = 0·0) but ∃ S, T₀ = S⁰ = 1 fails: the iff is false (it was an internal error, exit 70)
    f = tmp_path / "forms.json"
    f.write_text(json.dumps({"kind": "forms", "B": [[["0"]], [["1"]]]}))
    code, out, err = cli("check", "isRoPELike_iff", "--input", str(f), "--no-cert", "--drop", "h0")
    assert code == 1 and "Traceback" not in err, err
    assert "isRoPELike_iff: fails" in out
    code, out, err = cli("check", "isRoPELike_iff", "--input", str(f), "--no-cert")
    assert code == 2 and "does not apply: h0" in err


def test_rope_sides_are_computed():
    # forms G_d = G₀·S^d with G₀ = [[1]], S = [[2]]: T_d = 2^d, RoPE-like, S = T₁ = 2
    run = evaluate("isRoPELike_iff", input_from_document({"kind": "forms", "B": [[["1"]], [["2"]], [["4"]]]}))
    assert rec(run, "isRoPELike_iff").conclusion == "holds"
    # not RoPE-like: T₂ = 5 ≠ T₁² = 4; the ∃ side is false too (S would be T₁): the iff holds
    run = evaluate("IsRoPELike", input_from_document({"kind": "forms", "B": [[["1"]], [["2"]], [["5"]]]}))
    assert rec(run, "IsRoPELike").result.value == {"bool": False}
    # on real heads neither side is a constant any more: not evaluated there
    for c in ("isRoPELike_iff", "IsRoPELike"):
        assert "rope_weights" not in declaration_check_fn(c).kinds


@pytest.mark.parametrize("P,value", [
    ("(u0**2*v0 + u0*v0)/(u0 + 1)", False),   # u0·v0 except at u0 = −1, where Lean's x/0 = 0 gives 0 ≠ −v0
    ("u0*v0*(u0/u0)", True),                    # u0/u0 = 0 at u0 = 0, where u0·v0 = 0 too
    ("v0*(u0/u0)", False),                      # 0 at u0 = 0, v0 there
    ("u0*v0 + 2*u0 - 3", True),
    ("u0*v0*(u0**2 + 1)/(u0**2 + 1)", True),    # the denominator has no real zero
])
def test_bidegree_reads_division_as_lean(P, value):
    run = evaluate("biaffine_decomposition", input_from_document({"kind": "biaffine", "N": 1, "P": P}),
                   drop=("hP",))
    assert rec(run, "IsPolyBidegreeLeOneOne").result.value == {"bool": value}
    assert rec(run, "biaffine_decomposition").conclusion == ("holds" if value else "fails")


def _transformer(L, act="relu", b1=None):
    M = {"W_1": [["1"], ["-1"]], "W_2": [["1", "1"]], "act": act}
    if b1:
        M["b_1"] = b1
    return input_from_document({"kind": "transformer", "x": [["1"], ["-2"]], "L": L, "norm": "l2", "M": M,
                                "heads": [{"weights": [["1/2", "1/2"], ["1/2", "1/2"]], "W_V": [["1"]],
                                           "W_O": [["1"]]}]})


def test_near_identity_hM_as_lean_states_it():
    # M(y) = relu(y) + relu(−y) = |y|: ‖M y‖ ≤ 1·|y| for every y, so hM holds with L = 1 (the
    # sufficient test ‖W₂‖‖W₁‖ = √2·√2 = 2 > 1 refused it)
    run = evaluate("near_identity", _transformer("1"), only=("near_identity",))
    r = rec(run, "near_identity")
    assert r.hypotheses == {"hA": True, "hM": True} and r.conclusion == "holds"
    # L = 1/2: M(1) = 1 > 1/2 — hM false, exactly
    run = evaluate("near_identity", _transformer("1/2"), drop=("hM",), only=("near_identity",))
    assert rec(run, "near_identity").hypotheses["hM"] is False
    # gelu, L = 1: M(y) = y·erf(|y|/√2)·sign… ≤ |y| holds but is out of exact reach: undecided, named
    run = evaluate("near_identity", _transformer("1", "gelu"), only=("near_identity",))
    r = rec(run, "near_identity")
    assert r.hypotheses["hM"] is None and r.conclusion == "undecided" and "hM" in r.result.reason
