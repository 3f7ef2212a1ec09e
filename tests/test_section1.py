"""§1 (attention functions, biaffine scores, RoPE-like forms, heads, transformers, the near-identity
bound, the homogenisation), declaration by declaration, each certificate re-checked by the kernel.
Expected values are derived by hand in the comments (or with sympy, independently of FLINT)."""

import json
import re
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp
from flint import fmpq

from qkverify.audit.suite_s1 import DOCS, TRANSFORMERS
from qkverify.claims.evaluate import evaluate
from qkverify.errors import QKInputError
from qkverify.io.attention_inputs import make_input
from qkverify.kernel import verify_document


def run_cli(*args):
    r = subprocess.run([sys.executable, "-m", "qkverify", *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def kernel(cert, dirs=()):
    return verify_document(json.loads(json.dumps(cert)), weights_dirs=list(dirs))


def rec(run, check):
    return next(r for r in run.records if r.meta.check == check)


def inp(name):
    return make_input({**DOCS, **TRANSFORMERS}[name], name)


# -- Definition 3 / Proposition 1 ----------------------------------------------------------------

def test_rational_rotation_T_d_by_hand():
    # W_Q = W_K = 1, R = [[3/5, −4/5], [4/5, 3/5]] (cos θ = 3/5, sin θ = 4/5): G_d = (R^d)ᵀ = R^(−d), so
    # T_d = G_0⁻¹ G_d = [[cos dθ, sin dθ], [−sin dθ, cos dθ]]; cos 2θ = 9/25 − 16/25 = −7/25,
    # sin 2θ = 2·(3/5)(4/5) = 24/25; cos 3θ = 4c³ − 3c = −117/125, sin 3θ = 3s − 4s³ = 44/125.
    run = evaluate("IsRoPELike", inp("rope_rational_2x2_k5"))
    T = rec(run, "ropeT").result.value["list"]
    assert T[0] == {"matrix": [["1", "0"], ["0", "1"]]}
    assert T[1] == {"matrix": [["3/5", "4/5"], ["-4/5", "3/5"]]}
    assert T[2] == {"matrix": [["-7/25", "24/25"], ["-24/25", "-7/25"]]}
    assert T[3] == {"matrix": [["-117/125", "44/125"], ["-44/125", "-117/125"]]}
    assert rec(run, "IsRoPELike").result.value == {"bool": True}
    assert kernel(run.certificate()).status == "valid"
    run2 = evaluate("isRoPELike_iff", inp("rope_rational_2x2_k5"))
    assert [r.conclusion for r in run2.records] == ["holds", "holds"]   # S = T_1 given, T_d = S^d
    assert kernel(run2.certificate()).status == "valid"


def test_two_frequency_pairs_against_sympy():
    # T_d from the construction with sympy: G_d = W_Kᵀ (R^d)ᵀ W_Q, T_d = G_0⁻¹ G_d = W_Q⁻¹ (Rᵀ)^d W_Q
    WQ = sp.Matrix([[2, 1, 0, 0], [0, 1, 0, 1], [1, 0, 1, 0], [0, 0, 1, 3]])
    WK = sp.Matrix([[1, 0, 1, 0], [0, 2, 0, 0], [1, 1, 2, 0], [0, 0, 0, 1]])
    c1, s1, c2, s2 = sp.Rational(5, 13), sp.Rational(12, 13), sp.Rational(8, 17), sp.Rational(15, 17)
    R = sp.Matrix([[c1, -s1, 0, 0], [s1, c1, 0, 0], [0, 0, c2, -s2], [0, 0, s2, c2]])
    G = [WK.T * (R ** d).T * WQ for d in range(6)]
    run = evaluate("IsRoPELike", inp("rope_rational_two_pairs_k6"))
    for d, v in enumerate(rec(run, "ropeT").result.value["list"]):
        assert sp.Matrix([[sp.Rational(x) for x in r] for r in v["matrix"]]) == G[0].inv() * G[d]
    assert kernel(run.certificate()).status == "valid"


def test_not_rope_like_and_alibi():
    run = evaluate("IsRoPELike", inp("forms_not_rope_like_k3"))
    assert rec(run, "IsRoPELike").result.value == {"bool": False}   # T_1 = [[1,1],[0,1]], T_2 ≠ T_1²
    # ALiBi, bilinear parts only: B_d = G for every d, T_d = 1: RoPE-like with S = 1
    run = evaluate("isRoPELike_iff", inp("alibi_bilinear_parts_k4"))
    assert [r.conclusion for r in run.records] == ["holds", "holds"]
    # homogenised with offset c = 1, m = 1/2: T̂_d = diag(1, 1, 1 − d/2); T̂_1² = diag(1,1,1/4) ≠ T̂_2 = diag(1,1,0)
    run = evaluate("IsRoPELike", inp("alibi_homogenised_offset_k4"))
    assert rec(run, "IsRoPELike").result.value == {"bool": False}
    assert rec(run, "ropeT").result.value["list"][2] == {"matrix": [["1", "0", "0"], ["0", "1", "0"], ["0", "0", "0"]]}
    assert kernel(run.certificate()).status == "valid"
    # without the offset B̂_0 is degenerate: h0 fails, Definition 3 does not apply
    with pytest.raises(QKInputError, match="h0"):
        evaluate("isRoPELike_iff", inp("alibi_homogenised_no_offset_k3"))


def test_singular_B0_is_refused_by_the_cli(tmp_path):
    f = tmp_path / "alibi.json"
    f.write_text(json.dumps(DOCS["alibi_homogenised_no_offset_k3"]))
    code, out, err = run_cli("rope", str(f))
    assert code == 2 and "B_0 is singular" in err and "\n" not in err.strip()


def test_wrong_candidate_S():
    d = dict(DOCS["rope_rational_2x2_k5"], S=[["3/5", "-4/5"], ["4/5", "3/5"]])   # R instead of R⁻¹
    run = evaluate("isRoPELike_iff", make_input(d), drop=("hS",))
    r = rec(run, "eq_ropeT_one_of_forall")
    assert r.hypotheses["hS"] is False and r.conclusion == "fails"
    assert kernel(run.certificate()).status == "valid" and run.verdict == "fails"


# -- Definitions 1 and 2 -------------------------------------------------------------------------

@pytest.mark.parametrize("name,value", [
    ("softmax_bilinear_k3", True),     # weights' scores = σ + x2_0²: a shift common to every j
    ("softmax_temperature_2", True),
    ("uniform_linear_potential", True),  # φ = (s0 + s1 + s2)/3, ω = (1/3, 1/3, 1/3)
    ("softmax_wrong_weights_k3", False),  # σ − ρ depends on j
    ("quadratic_indefinite", False),  # Q has eigenvalue −1; ω not constant, not in the simplex
    ("negative_temperature", False),  # −log Σ exp(−s): Hessian at 0 has eigenvalue −1/3
    ("rational_score", False),        # 1/(1 + x²) is not a polynomial
])
def test_attention_functions(name, value):
    run = evaluate("IsAttentionFunction", inp(name))
    assert rec(run, "IsAttentionFunction").result.value == {"bool": value}
    assert kernel(run.certificate()).status == "valid"


def test_is_poly_fun_and_undecided_family():
    run = evaluate("IsAttentionFunction", inp("rational_score"))
    assert rec(run, "IsPolyFun").result.value == {"list": [{"bool": False}, {"bool": True}, {"bool": True}]}
    d = dict(DOCS["softmax_bilinear_k3"], potential={"quadratic": {"Q": [["1", "0", "0"], ["0", "1", "0"], ["0", "0", "1"]],
                                                                  "b": ["0", "0", "0"]}})
    run = evaluate("IsAttentionFunction", make_input(d))   # quadratic φ, softmax ω: ∇φ∘σ = ω not decided
    r = rec(run, "IsAttentionFunction")
    assert r.conclusion == "undecided" and "grad" in r.result.reason
    assert kernel(run.certificate()).status == "valid"
    # a user potential: sympy's Hessian diag(12 s0², 2, 4) is ⪰ 0 (convex), but the kernel decides
    # only log-sum-exp and quadratic potentials, so the certificate says undecided
    run = evaluate("IsAttentionFunction", inp("user_potential_quartic"))
    r = rec(run, "IsAttentionFunction")
    assert r.conclusion == "undecided" and "'sympy_convex': True" in r.result.reason
    assert kernel(run.certificate()).status == "valid"


def test_bilinear_score():
    # σ_j = x_{j,0} x_{2,0} + 2 x_{j,1} x_{2,1}: B_j = diag(1, 2) for every j; a cubic score is not bilinear
    run = evaluate("IsBilinearScore", inp("softmax_bilinear_k3"))
    assert rec(run, "IsBilinearScore").result.value == {"bool": True}
    run = evaluate("IsBilinearScore", inp("uniform_linear_potential"))
    assert rec(run, "IsBilinearScore").result.value == {"bool": False}
    from qkverify.math.attention import bilinear_forms
    ok, Bs = bilinear_forms(DOCS["softmax_bilinear_k3"])
    assert ok and Bs == [[["1", "0"], ["0", "2"]]] * 3


# -- Lemma 1 ---------------------------------------------------------------------------------------

def test_biaffine_components_by_hand():
    # P = 2u0v1 − u1v0 + 3u0 − v1/2 + 5: D = P(0,0) = 5, L(u) = P(u,0) − 5 = 3u0, R(v) = P(0,v) − 5 = −v1/2,
    # B(u,v) = 2u0v1 − u1v0
    from qkverify.math.attention import biaffine_parts
    p = biaffine_parts(DOCS["biaffine_hand_N2"])
    assert (p["B"], p["L"], p["R"], p["D"]) == ([["0", "2"], ["-1", "0"]], ["3", "0"], ["0", "-1/2"], "5")
    run = evaluate("biaffine_decomposition", inp("biaffine_hand_N2"))
    assert [r.conclusion for r in run.records] == ["computed", "holds", "holds"]  # IsPolyBidegreeLeOneOne: a definition
    assert kernel(run.certificate()).status == "valid"
    # ALiBi at distance 3 with slope 1/2: the penalty is the constant D = −3/2
    assert biaffine_parts(DOCS["biaffine_alibi_distance_3"])["D"] == "-3/2"


def test_bidegree_names_the_monomial_and_wrong_decomposition():
    run = evaluate("biaffine_decomposition", inp("bidegree_2_1"))
    r = rec(run, "IsPolyBidegreeLeOneOne")
    assert r.result.value == {"bool": False} and "u0**2*v0" in r.result.reason and "degree 2 in u" in r.result.reason
    assert {c for c, _ in run.skipped} == {"biaffine_components", "biaffine_decomposition"}
    run = evaluate("biaffine_decomposition", inp("biaffine_wrong_decomposition"))   # L and R swapped: h fails
    assert "biaffine_components" in {c for c, _ in run.skipped}


# -- Definitions 4, 5 and Proposition 2 ------------------------------------------------------------

def _encl(v):
    from qkverify.kernel.jsonio import dec
    return dec(v["enclosure"][0]), dec(v["enclosure"][1])


def test_head_with_fixed_weights_by_hand():
    # causal fixed weights, Lean's head: A_0 = x_0 = (1, 0); A_1 = 2x_0 − x_1 = (3/2, 1); A_2 = x_1 = (1/2, −1)
    run = evaluate("head", inp("fixed_weights_not_convex"))
    want = [[1, 0], [fmpq(3, 2), 1], [fmpq(1, 2), -1]]
    for r, row in zip(rec(run, "head").result.value["list"], want):
        for v, w in zip(r["list"], row):
            lo, hi = _encl(v)
            assert lo <= w <= hi and hi - lo < fmpq(1, 10 ** 9)
    assert kernel(run.certificate()).status == "valid"
    run = evaluate("near_identity", inp("fixed_weights_not_convex"))   # weights −1: not convex, hA fails
    assert rec(run, "IsAttentionOutput").result.value == {"list": [{"bool": False}]}
    assert {c for c, _ in run.skipped} == {"norm_attentionBlock_le", "near_identity"}


@pytest.mark.parametrize("name", ["two_heads_relu_l2", "two_heads_relu_linf", "causal_head_gelu_l2", "qkv_positions_n2"])
def test_near_identity_on_instances(name):
    run = evaluate("near_identity", inp(name))
    assert run.verdict == "holds" and run.evidence == "certified"
    assert [r.meta.check for r in run.records] == ["IsAttentionOutput", "attentionBlock", "norm_attentionBlock_le",
                                                   "near_identity"]
    assert kernel(run.certificate()).status == "valid"


def test_hM_fails_with_a_bias_and_L_below_the_bound():
    run = evaluate("near_identity", inp("mlp_with_bias"))   # M(0) = b_2 = (1, 0) ≠ 0: no L works
    assert "near_identity" in {c for c, _ in run.skipped}
    # L = 1/100 is below what M needs: hM is decided false (an exact counterexample y), not refused
    d = dict(TRANSFORMERS["two_heads_relu_l2"], L="1/100")
    run = evaluate("near_identity", make_input(d))
    assert ("near_identity", "hypothesis hM (‖M(y)‖ ≤ L‖y‖ for every y) fails") in run.skipped


def test_transformer_definition():
    # T(x)_0 for one causal head: A_0 = x_0 = (1, 0), V = [[1,0],[1,1]], y_0 = x_0 + V x_0 = (2, 1);
    # M(y) = W_2 gelu(W_1 y), W_1 y = (3, 1): T_0 = y_0 + W_2 (gelu 3, gelu 1), gelu t = t·Φ(t)
    run = evaluate("transformer", inp("causal_head_gelu_l2"))
    T0 = rec(run, "transformer").result.value["list"][0]["list"]
    Phi = lambda t: (1 + sp.erf(t / sp.sqrt(2))) / 2  # noqa: E731
    g3, g1 = 3 * Phi(3), 1 * Phi(1)
    want = [2 + g3, 1 - g3 + g1]
    for v, w in zip(T0, want):
        lo, hi = _encl(v)
        assert sp.Rational(int(lo.p), int(lo.q)) <= sp.N(w, 40) <= sp.Rational(int(hi.p), int(hi.q))
    assert kernel(run.certificate()).status == "valid"


# -- Proposition 3 --------------------------------------------------------------------------------

def test_homogenisation_exact():
    run = evaluate("qkv_homogenizes_to_bilinear", inp("qkv_positions_n4"))
    assert run.verdict == "holds" and run.evidence == "exact" and len(run.records) == 8
    # dehom(y)_i = x_i + (α_i − 1)p_i with α = (2, 1/2, −1):
    # (1,0,2) + (0,0,1) = (1,0,3); (0,1,−1) − ½(1,0,0) = (−1/2,1,−1); (1/2,1,0) − 2(0,1,0) = (1/2,−1,0)
    assert rec(run, "dehom").result.value == {"matrix": [["1", "0", "3"], ["-1/2", "1", "-1"], ["1/2", "-1", "0"]]}
    # homForm_{0,0}: n = 4, so 1/√n = 1/2; the (ℝ, ℝ) entry is ⟨Q p_0, K p_0⟩/2 with p_0 = (0,0,1):
    # Q p_0 = (1, 0, 0, 1), K p_0 = (0, 1, 2, 1): ⟨·,·⟩ = 1, entry 1/2
    assert rec(run, "homForm").result.value["list"][0]["matrix"][3][3] == "1/2"
    assert kernel(run.certificate()).status == "valid"
    from qkverify.claims.attention import homogenised_outputs
    assert homogenised_outputs(run.subject)["overlap"]


def test_homogenise_cli(tmp_path):
    f = tmp_path / "qkv.json"
    f.write_text(json.dumps(TRANSFORMERS["qkv_positions_n2"]))
    code, out, err = run_cli("homogenise", str(f), "--out", str(tmp_path / "c"), "--json")
    rep = json.loads(out)
    assert code == 0 and rep["verdict"] == "holds" and rep["outputs"]["overlap"]
    code, out, _ = run_cli("verify", str(tmp_path / "c"))
    # verify puts the status on the next line when "PATH: status" would pass 100 columns
    assert code == 0 and re.search(r"\.json:\s+valid\b", out), out


# -- the kernel rejects what is wrong ---------------------------------------------------------------

def _set(path, value):
    def f(c):
        x = c
        for k in path[:-1]:
            x = x[k]
        x[path[-1]] = value
    return f


@pytest.mark.parametrize("name,statement,mutate,check", [
    ("rope_rational_2x2_k5", "IsRoPELike", _set(["input", "B", 2, 0, 0], "1"), "declarations"),
    ("rope_rational_2x2_k5", "IsRoPELike", _set(["declarations", 2, "value", "list", 1, "matrix", 0, 0], "4/5"), "declarations"),
    ("rope_rational_2x2_k5", "isRoPELike_iff", _set(["input", "S", 0, 1], "-4/5"), "declarations"),
    ("biaffine_hand_N2", "biaffine_decomposition", _set(["input", "decomposition", "D"], "4"), "declarations"),
    ("bidegree_2_1", "biaffine_decomposition", _set(["input", "P"], "u0*v0 + u1"), "declarations"),
    ("softmax_bilinear_k3", "IsAttentionFunction", _set(["input", "weights", "softmax", "tau"], "2"), "declarations"),
    ("two_heads_relu_l2", "near_identity", _set(["input", "x", 0, 0], "2"), "declarations"),
    ("qkv_positions_n4", "qkv_homogenizes_to_bilinear", _set(["input", "alpha", 0], "3"), "declarations"),
    ("two_heads_relu_l2", "near_identity", _set(["evidence"], "exact"), "evidence"),
])
def test_mutations_rejected(name, statement, mutate, check):
    cert = json.loads(json.dumps(evaluate(statement, inp(name)).certificate()))
    assert kernel(cert).status == "valid"
    mutate(cert)
    out = kernel(cert)
    assert out.status == "invalid" and out.check.startswith(check), (out.check, out.reason)


def test_near_identity_L_below_bound_is_undecided_for_the_kernel():
    cert = json.loads(json.dumps(evaluate("near_identity", inp("two_heads_relu_l2")).certificate()))
    cert["input"]["L"] = "1/100"
    assert kernel(cert).status == "undecided"


# -- readers ---------------------------------------------------------------------------------------

def test_kernel_gguf_reader_is_exact(tmp_path):
    gguf = pytest.importorskip("gguf")
    from qkverify.kernel import gguf as KG
    T = gguf.GGMLQuantizationType
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((6, 64)) * 3).astype(np.float32)
    p = tmp_path / "t.gguf"
    w = gguf.GGUFWriter(str(p), "llama")
    w.add_tensor("f32", a)
    w.add_tensor("f16", a.astype(np.float16))
    for name, t in (("q8", T.Q8_0), ("q40", T.Q4_0), ("q41", T.Q4_1)):
        q = gguf.quants.quantize(a, t)
        w.add_tensor(name, q, raw_shape=q.shape, raw_dtype=t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    r = gguf.GGUFReader(str(p))
    for t in r.tensors:
        ref = np.asarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float64).reshape(6, 64)
        vals, C = KG.rows(p, t.name, 1, 4)
        mine = np.array([m * 2.0 ** e for m, e in vals]).reshape(3, 64)   # exact: small dyadics
        assert C == 64 and np.array_equal(mine, ref[1:4]), t.name


def _llama(tmp_path):
    from safetensors.numpy import save_file
    rng = np.random.default_rng(7)
    H, KV, dh, N = 2, 1, 8, 16
    (tmp_path / "config.json").write_text(json.dumps(
        {"model_type": "llama", "hidden_size": N, "num_attention_heads": H, "num_key_value_heads": KV,
         "head_dim": dh, "num_hidden_layers": 1, "rope_theta": 10000.0}))
    save_file({"model.layers.0.self_attn.q_proj.weight": (rng.standard_normal((H * dh, N)) / 4).astype(np.float32),
               "model.layers.0.self_attn.k_proj.weight": (rng.standard_normal((KV * dh, N)) / 4).astype(np.float32)},
              str(tmp_path / "model.safetensors"))
    return tmp_path


def test_llama_safetensors_head_both_pairings(tmp_path):
    from qkverify.models.rope import check_head
    d = _llama(tmp_path)
    res = check_head(str(d), 0, 1, 12)
    good, bad = res["readings"]
    assert (good["pairing"], good["verdict"], good["evidence"]) == ("half_split", "holds", "exact")
    assert (bad["pairing"], bad["verdict"], bad["evidence"]) == ("interleaved", "fails", "certified")
    assert float(good["numbers"]["max_abs_T_d_minus_S_pow_d_upper"]) < 1e-30
    assert bad["numbers"]["separated_entries_of_T1_minus_S"] > 0
    for rd in res["readings"]:
        for run in rd["runs"]:
            assert kernel(run.certificate(), [str(d)]).status == "valid"
    # the kernel rejects a certificate whose reading was changed after the fact
    cert = json.loads(json.dumps(good["runs"][0].certificate()))
    cert["input"]["reading"]["pairing"] = "interleaved"
    out = kernel(cert, [str(d)])
    assert out.status == "invalid" and "hS" in out.reason


# -- real models (slow) -----------------------------------------------------------------------------

@pytest.mark.slow
def test_smollm2_head_rope_like_k8_and_wrong_pairing_fails(tmp_path):
    from qkverify.models.rope import check_head
    try:
        res = check_head("smollm2", 0, 0, 8)
    except QKInputError as err:
        pytest.skip(str(err))
    good, bad = res["readings"]
    assert res["input"]["runtime"] == {"pairing": "interleaved", "base": "100000", "rotary_dim": 64}
    assert good["reading"] == {"pairing": "half_split", "base": "100000", "rotary_dim": 64, "rows": "llama_unpermuted"}
    assert (good["verdict"], good["evidence"], bad["verdict"], bad["evidence"]) == ("holds", "exact", "fails", "certified")
    dirs = [str(res["info"]["file"]).rsplit("/", 1)[0]]
    for rd in res["readings"]:
        for run in rd["runs"]:
            assert kernel(run.certificate(), dirs).status == "valid"


@pytest.mark.slow
def test_minilm_near_identity_with_real_constants():
    from safetensors import safe_open
    from qkverify.models.layer import layer_input
    from qkverify.claims.attention import Evaluation
    inp_, info = layer_input(None, 0, norm="l2")
    run = evaluate("near_identity", inp_)
    assert run.verdict == "holds" and run.evidence == "certified"
    assert kernel(run.certificate(), inp_.source["dirs"]).status == "valid"
    # L against float SVDs (display only): ‖W_1‖‖W_2‖ ≤ L ≤ 1.001·‖W_1‖‖W_2‖
    f = safe_open(f"{inp_.source['dirs'][0]}/model.safetensors", "numpy")
    W1 = f.get_tensor("encoder.layer.0.intermediate.dense.weight").astype(np.float64)
    W2 = f.get_tensor("encoder.layer.0.output.dense.weight").astype(np.float64)
    prod = np.linalg.norm(W1, 2) * np.linalg.norm(W2, 2)
    L = float(fmpq(*map(int, inp_["L"].split("/"))))
    assert prod <= L <= 1.001 * prod
    # V = Σ_i ‖W_O,i W_V,i‖: the certified enclosure contains the float value
    WV = f.get_tensor("encoder.layer.0.attention.self.value.weight").astype(np.float64)
    WO = f.get_tensor("encoder.layer.0.attention.output.dense.weight").astype(np.float64)
    Vf = sum(np.linalg.norm(WO[:, 32 * i:32 * i + 32] @ WV[32 * i:32 * i + 32], 2) for i in range(12))
    lo, hi = run.subject.memo("eval", lambda: Evaluation(inp_)).sides(True)["V"]
    assert float(lo.lower()) <= Vf * (1 + 1e-9) and Vf * (1 - 1e-9) <= float(hi.upper())
    assert info["tokens"][0] == "[CLS]" and "embedding LayerNorm" in info["left_out"]


def test_zero_temperature_is_refused_like_the_kernel_does(tmp_path):
    # a probe mutated the suite's τ to 0: the producer evaluated it, the kernel refused it as input
    import json as _json
    import subprocess as _sp
    import sys as _sys

    doc = {"N": 1, "k": 2, "kind": "attention_function", "potential": {"log_sum_exp": "0"},
           "scores": ["x0_0*x1_0", "x1_0*x1_0"],
           "weights": {"softmax": {"scores": ["x0_0*x1_0", "x1_0*x1_0"], "tau": "1"}}}
    p = tmp_path / "tau0.json"
    p.write_text(_json.dumps(doc))
    r = _sp.run([_sys.executable, "-m", "qkverify", "check", "IsAttentionFunction", "--input", str(p), "--no-cert"],
                capture_output=True, text=True)
    assert r.returncode == 2 and "temperature τ must be nonzero" in r.stderr and "Traceback" not in r.stderr
