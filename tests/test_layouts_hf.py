"""The layouts of issue 21 (phi3, falcon, gemma2, distilbert, gpt_bigcode, qwen2_moe, t5, phi,
stablelm, starcoder2) and ``--layout FILE``, each pinned by a tiny checkpoint with a planted head.

Tensor names and config keys are those of transformers' model classes (modeling_*.py and
configuration_*.py) and of real checkpoints; each test says which.

The planted head, by hand.  W_Q = [e1; e3] (rows), W_K = [(4, 3, 0, 0); (0, 0, −5, 12)], so
L = W_Kᵀ W_Q has column 1 = (4, 3, 0, 0), column 3 = (0, 0, −5, 12), the others 0: two 2 × 2
blocks [[p, 0], [q, 0]] on (x1, x2) and (x3, x4).  For such a block
‖L‖² = p² + q², ‖T‖² = q²/2 and S = [[p, q/2], [q/2, 0]] has eigenvalues (p ± √(p² + q²))/2:
  block 1 (p, q) = (4, 3):   ‖L‖² = 25,  ‖T‖² = 9/2,   eigenvalues 9/2, −1/2;
  block 2 (p, q) = (−5, 12): ‖L‖² = 169, ‖T‖² = 72,    eigenvalues 4, −9.
So ‖L‖² = 194, ‖T‖² = 153/2, α = (9/2, 4), β = (9, 1/2) (decreasing), and
  a = (153/2)/194 = 153/388,
  b = 2(9/2·9 + 4·1/2)/194 = 85/194,
  c = (4 − 1/2)²/194 = 49/776          (j = 2: α > β),
  d = (9 − 9/2)²/194 = 81/776          (j = 1: α < β);
a + b + c + d = (306 + 340 + 49 + 81)/776 = 1.  M = [W_K; W_Q] has rank 4 = 2n (the x2 and x4
columns are reached only by the two key rows), so the signature is (2, 2, N − 4).  Padding the
columns with zeros (N = 8) adds zero rows and columns to L and changes none of this.
"""

from __future__ import annotations

import csv
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from qkverify.cli import main

PI = (Fraction(153, 388), Fraction(85, 194), Fraction(49, 776), Fraction(81, 776))
WQ4 = np.array([[1, 0, 0, 0], [0, 0, 1, 0]], np.float32)
WK4 = np.array([[4, 3, 0, 0], [0, 0, -5, 12]], np.float32)
RNG = np.random.default_rng(21)


def pad(W: np.ndarray, N: int) -> np.ndarray:
    return np.concatenate([W, np.zeros((W.shape[0], N - W.shape[1]), np.float32)], axis=1)


def other(rows: int, N: int) -> np.ndarray:
    """Filler weights: small random integers (full rank with overwhelming probability)."""
    return RNG.integers(-3, 4, size=(rows, N)).astype(np.float32)


def sym_profile(Wq, Wk) -> tuple:
    """π(L), L = W_Kᵀ W_Q, with sympy (independent of qkverify)."""
    L = sp.Matrix(Wk.astype(int).tolist()).T * sp.Matrix(Wq.astype(int).tolist())
    S, T = (L + L.T) / 2, (L - L.T) / 2
    fL = sum(x ** 2 for x in L)
    lam = sp.Poly(S.charpoly(sp.Symbol("x")).as_expr(), sp.Symbol("x")).real_roots()
    al = sorted((x for x in lam if x > 0), reverse=True)
    be = sorted((-x for x in lam if x < 0), reverse=True)
    m = max(len(al), len(be))
    al += [sp.Integer(0)] * (m - len(al))
    be += [sp.Integer(0)] * (m - len(be))
    return (sum(x ** 2 for x in T) / fL, 2 * sum(p * q for p, q in zip(al, be)) / fL,
            sum((p - q) ** 2 for p, q in zip(al, be) if p > q) / fL,
            sum((q - p) ** 2 for p, q in zip(al, be) if q > p) / fL)


def differs(Wq, Wk) -> bool:
    """A wrong reading of the tensor gives another profile (so it could not pass)."""
    if not np.any(Wk.T @ Wq):
        return True
    got = sym_profile(Wq, Wk)
    return any(sp.nsimplify(g) != sp.Rational(w.numerator, w.denominator) for g, w in zip(got, PI))


def test_planted_profile_by_hand_agrees_with_sympy():
    assert [sp.Rational(x.numerator, x.denominator) for x in PI] == [sp.nsimplify(x) for x in sym_profile(WQ4, WK4)]
    assert sym_profile(pad(WQ4, 8), pad(WK4, 8)) == sym_profile(WQ4, WK4)
    assert sum(PI) == 1


def save(d: Path, tensors: dict, config: dict | None) -> Path:
    from safetensors.numpy import save_file

    d.mkdir(parents=True, exist_ok=True)
    save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()}, str(d / "model.safetensors"))
    if config is not None:
        (d / "config.json").write_text(json.dumps(config))
    return d


def run(ck: Path, out: Path, *extra) -> tuple[int, dict]:
    code = main(["heads", str(ck), "--out", str(out), "--quiet", "--no-plot", *extra])
    return code, (json.loads((out / "heads.json").read_text()) if code in (0, 1) else {})


def planted(doc: dict, layer: int, head: int, kv_head: int | None = None) -> dict:
    row = next(r for r in doc["rows"] if (r["layer"], r["head"]) == (layer, head))
    a, b, c, d = PI
    assert Fraction(row["a_exact"]) == a
    for name, v in (("b", b), ("c", c), ("d", d)):
        assert Fraction(row[name + "_lo"]) <= v <= Fraction(row[name + "_hi"]), name
    assert (row["n_pos"], row["n_neg"], row["n_zero"]) == (2, 2, row["d_model"] - 4)
    if kv_head is not None:
        assert row["kv_head"] == kv_head
    return row


def one_line_exit_2(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def verify(cert: Path, ck: Path, capsys) -> None:
    assert main(["verify", str(cert), "--weights", str(ck)]) == 0
    assert "valid (heads_have_balanced_attention: holds" in " ".join(capsys.readouterr().out.split())


# ---------------------------------------------------------------------------
# phi3: modeling_phi3.Phi3Attention -- qkv_proj = Linear(hidden, (H + 2·KV)·head_dim), split as
# query_pos = H·head_dim, key = qkv[query_pos : query_pos + KV·head_dim] (microsoft/Phi-3-mini-4k-instruct:
# model.layers.N.self_attn.qkv_proj.weight; config num_attention_heads, num_key_value_heads, hidden_size)


def test_phi3_fused_qkv_proj_gqa(tmp_path, capsys):
    N, d, H, KV = 8, 2, 4, 2
    Q = [other(d, N), other(d, N), other(d, N), pad(WQ4, N)]          # query head 3 -> key head 1
    K = [other(d, N), pad(WK4, N)]
    W = np.concatenate(Q + K + [other(KV * d, N)])                     # [Q | K | V] = 16 rows
    ck = save(tmp_path / "phi3", {"model.layers.0.self_attn.qkv_proj.weight": W},
              {"model_type": "phi3", "hidden_size": N, "num_attention_heads": H, "num_key_value_heads": KV,
               "num_hidden_layers": 1, "rope_theta": 10000.0, "partial_rotary_factor": 1.0})
    code, doc = run(ck, tmp_path / "out")
    assert code == 0
    planted(doc, 0, 3, kv_head=1)
    assert doc["model"]["arch"] == "phi3" and doc["model"]["positional"]["pairing"] == "half_split"
    # an interleaved reading (per head [q; k; v]) or the wrong key group would see other matrices
    assert differs(W[6:8], W[8:10])                                    # the wrong key group (h mod KV)
    cert = tmp_path / "out" / "L00H03.json"
    assert [t["rows"] for t in json.loads(cert.read_text())["input"]["tensors"]] == [[6, 8], [10, 12]]
    verify(cert, ck, capsys)


# ---------------------------------------------------------------------------
# falcon: modeling_falcon.FalconAttention._split_heads -- new_decoder_architecture: view
# (…, KV, H/KV + 2, head_dim), queries [:-2], key [-2], value [-1]; multi_query: view (…, H + 2, head_dim);
# else view (…, H, 3, head_dim).  configuration_falcon: num_kv_heads (legacy n_head_kv), multi_query
# (default True), new_decoder_architecture, alibi; tensor transformer.h.N.self_attention.query_key_value.weight
# (tiiuae/falcon-7b: 4672 = 4544 + 2·64 rows, multi-query; falcon-40b: RefinedWeb with n_head_kv = 8).


def test_falcon_multi_query(tmp_path, capsys):
    N, d = 4, 2
    W = np.concatenate([other(d, N), WQ4, WK4, other(d, N)])          # [q_0; q_1; k; v]
    ck = save(tmp_path / "falcon7b", {"transformer.h.0.self_attention.query_key_value.weight": W},
              {"model_type": "falcon", "hidden_size": N, "num_attention_heads": 2, "num_hidden_layers": 1,
               "multi_query": True, "new_decoder_architecture": False, "alibi": False, "bias": False})
    code, doc = run(ck, tmp_path / "out")
    assert code == 0
    planted(doc, 0, 1, kv_head=0)
    assert doc["model"]["n_kv_heads"] == 1 and "multi-query" in doc["model"]["layout"]
    assert differs(W[2:4], W[6:8])                                     # per-head reading: k_1 = rows 6:8
    verify(tmp_path / "out" / "L00H01.json", ck, capsys)


@pytest.mark.parametrize("config", [
    {"model_type": "falcon", "num_kv_heads": 2, "new_decoder_architecture": True},
    {"model_type": "RefinedWeb", "n_head_kv": 2},                      # custom-code config, as converted
])
def test_falcon_new_decoder_architecture_groups(tmp_path, capsys, config):
    N, d, H, KV = 8, 2, 4, 2
    # per key head g: q_{2g}, q_{2g+1}, k_g, v_g; query head 2 is planted in group 1
    W = np.concatenate([other(d, N), other(d, N), other(d, N), other(d, N),
                        pad(WQ4, N), other(d, N), pad(WK4, N), other(d, N)])
    cfg = {"hidden_size": N, "num_attention_heads": H, "num_hidden_layers": 1, "alibi": False, **config}
    ck = save(tmp_path / "falcon40b", {"transformer.h.0.self_attention.query_key_value.weight": W}, cfg)
    code, doc = run(ck, tmp_path / "out")
    assert code == 0
    planted(doc, 0, 2, kv_head=1)
    assert "new_decoder_architecture" in doc["model"]["layout"]
    assert differs(W[4:6], W[8 + 2:8 + 4])                             # blocks: q_2 = 4:6, k_1 = H·d + d
    verify(tmp_path / "out" / "L00H02.json", ck, capsys)


def test_falcon_per_head_with_alibi(tmp_path):
    N, d = 4, 2
    W = np.concatenate([other(d, N), other(d, N), other(d, N), WQ4, WK4, other(d, N)])
    ck = save(tmp_path / "falconmha", {"transformer.h.0.self_attention.query_key_value.weight": W},
              {"model_type": "falcon", "hidden_size": N, "num_attention_heads": 2, "multi_query": False,
               "alibi": True})
    code, doc = run(ck, tmp_path / "out", "--no-certificates")
    assert code == 0
    planted(doc, 0, 1, kv_head=1)
    assert doc["model"]["positional"]["kind"] == "alibi"


# ---------------------------------------------------------------------------
# gemma2: modeling_gemma2 -- model.layers.N.self_attn.{q,k}_proj.weight; configuration_gemma2:
# attn_logit_softcapping (default 50.0), query_pre_attn_scalar, head_dim, num_key_value_heads


def test_gemma2_softcap_refused_then_labelled(tmp_path, capsys):
    N, d = 4, 2
    t = {"model.layers.0.self_attn.q_proj.weight": np.concatenate([other(d, N), WQ4]),
         "model.layers.0.self_attn.k_proj.weight": WK4}
    cfg = {"model_type": "gemma2", "hidden_size": N, "num_attention_heads": 2, "num_key_value_heads": 1,
           "head_dim": d, "num_hidden_layers": 1, "query_pre_attn_scalar": 2}    # softcapping: the default 50
    ck = save(tmp_path / "gemma2", t, cfg)
    err = one_line_exit_2(capsys, ["heads", str(ck), "--out", str(tmp_path / "o"), "--quiet"])
    assert "attn_logit_softcapping = 50.0" in err and "--pre-softcap" in err
    code, doc = run(ck, tmp_path / "out", "--pre-softcap", "--no-certificates")
    assert code == 0
    row = planted(doc, 0, 1, kv_head=0)
    assert row["score"] == "pre_softcap" and doc["model"]["score"] == "pre_softcap"
    assert "tanh" in doc["model"]["softcap"]
    assert "INSIDE the cap" in " ".join(capsys.readouterr().out.split())
    assert {r["score"] for r in csv.DictReader(open(tmp_path / "out" / "heads.csv"))} == {"pre_softcap"}
    # with softcapping switched off (null) the score is bilinear and nothing needs the option
    cfg["attn_logit_softcapping"] = None
    ck2 = save(tmp_path / "gemma2b", t, cfg)
    code, doc = run(ck2, tmp_path / "out2", "--no-certificates")
    assert code == 0 and doc["model"]["score"] == "bilinear"


# ---------------------------------------------------------------------------
# distilbert: modeling_distilbert.MultiHeadSelfAttention q_lin/k_lin/v_lin/out_lin; keys as in
# distilbert-base-uncased (distilbert.transformer.layer.N.attention.q_lin.weight); config dim, n_heads, n_layers


def test_distilbert_q_lin_k_lin(tmp_path, capsys):
    N, d = 4, 2
    p = "distilbert.transformer.layer.{l}.attention."
    t = {}
    for l in range(2):
        q = [WQ4, other(d, N)] if l == 1 else [other(d, N), other(d, N)]
        k = [WK4, other(d, N)] if l == 1 else [other(d, N), other(d, N)]
        t[p.format(l=l) + "q_lin.weight"] = np.concatenate(q)
        t[p.format(l=l) + "k_lin.weight"] = np.concatenate(k)
        t[p.format(l=l) + "q_lin.bias"] = np.array([1, 0, 0, 2], np.float32)
        t[p.format(l=l) + "k_lin.bias"] = np.array([0, 1, 0, 0], np.float32)
    ck = save(tmp_path / "distilbert", t, {"model_type": "distilbert", "dim": N, "n_heads": 2, "n_layers": 2,
                                           "max_position_embeddings": 512, "sinusoidal_pos_embds": False})
    code, doc = run(ck, tmp_path / "out")
    assert code == 0
    row = planted(doc, 1, 0)
    assert row["score"] == "bilinear_part_of_biaffine"
    assert doc["model"]["positional"] == {"kind": "learned_absolute", "max_positions": 512}
    verify(tmp_path / "out" / "L01H00.json", ck, capsys)


# ---------------------------------------------------------------------------
# gpt_bigcode: modeling_gpt_bigcode.GPTBigCodeAttention -- c_attn = Linear(embed, embed + 2·kv_dim); multi_query
# (default True): split (embed, 2·head_dim); else view (H, 3·head_dim): per head [q; k; v]
# (bigcode/starcoderbase: transformer.h.N.attn.c_attn.weight [6400 + 2·128, 6400]); config n_embd, n_head, n_layer


@pytest.mark.parametrize("multi_query", [True, False])
def test_gpt_bigcode(tmp_path, multi_query):
    N, d = 4, 2
    if multi_query:
        W = np.concatenate([other(d, N), WQ4, WK4, other(d, N)])      # [Q (N rows) | k | v]
        kv = 0
    else:
        W = np.concatenate([other(d, N), other(d, N), other(d, N), WQ4, WK4, other(d, N)])
        kv = 1
    t = {"transformer.h.0.attn.c_attn.weight": W, "transformer.h.0.attn.c_attn.bias": np.zeros(len(W), np.float32)}
    ck = save(tmp_path / "bigcode", t, {"model_type": "gpt_bigcode", "n_embd": N, "n_head": 2, "n_layer": 1,
                                        "multi_query": multi_query, "n_positions": 64})
    code, doc = run(ck, tmp_path / "out", "--no-certificates")
    assert code == 0
    planted(doc, 0, 1, kv_head=kv)
    assert doc["model"]["n_kv_heads"] == (1 if multi_query else 2)
    assert doc["model"]["positional"] == {"kind": "learned_absolute", "max_positions": 64}
    # GPT-2's Conv1D reading of the same bytes would be something else
    raw = np.ascontiguousarray(W).reshape(N, len(W))
    assert differs(raw[:, 2:4].T, raw[:, N + 2:N + 4].T)


# ---------------------------------------------------------------------------
# qwen2_moe (Qwen/Qwen1.5-MoE-A2.7B: model.layers.N.self_attn.{q,k}_proj.{weight,bias}, experts beside),
# starcoder2 (bigcode/starcoder2-3b: the same names, use_bias), both grouped-query with num_key_value_heads


@pytest.mark.parametrize("mt", ["qwen2_moe", "starcoder2"])
def test_qwen2_moe_and_starcoder2_gqa_with_biases(tmp_path, mt, capsys):
    N, d = 8, 2
    p = "model.layers.0."
    t = {p + "self_attn.q_proj.weight": np.concatenate([other(d, N), other(d, N), pad(WQ4, N), other(d, N)]),
         p + "self_attn.k_proj.weight": np.concatenate([other(d, N), pad(WK4, N)]),
         p + "self_attn.q_proj.bias": np.arange(8, dtype=np.float32),
         p + "self_attn.k_proj.bias": np.ones(4, np.float32),
         p + "mlp.experts.0.gate_proj.weight": other(4, N), p + "mlp.gate.weight": other(2, N)}
    ck = save(tmp_path / mt, t, {"model_type": mt, "hidden_size": N, "num_attention_heads": 4,
                                 "num_key_value_heads": 2, "num_hidden_layers": 1})
    code, doc = run(ck, tmp_path / "out")
    assert code == 0
    planted(doc, 0, 2, kv_head=1)
    pe = doc["model"]["positional"]
    assert (pe["kind"], pe["base"], pe["base_source"]) == ("rope", 10000, f"default of transformers' config for {mt}")
    verify(tmp_path / "out" / "L00H02.json", ck, capsys)


# ---------------------------------------------------------------------------
# t5: modeling_t5.T5Attention -- q, k, v, o = Linear(d_model, n_heads·d_kv, bias=False); scores = q·kᵀ +
# position_bias (no 1/√d: folded into the initialisation of q); the relative_attention_bias sits in block 0 of each
# stack.  Names as in t5-small: encoder.block.N.layer.0.SelfAttention.q.weight, decoder.block.N.layer.0.SelfAttention,
# decoder.block.N.layer.1.EncDecAttention (cross-attention, not read).  Config d_model, d_kv, num_heads, num_layers,
# num_decoder_layers.


def test_t5_encoder_and_decoder_self_attention(tmp_path, capsys):
    N, d, H = 4, 2, 3                                                  # n_heads·d_kv = 6 ≠ d_model (as in t5-11b)
    t = {}
    for stack in ("encoder", "decoder"):
        for b in range(2):
            p = f"{stack}.block.{b}.layer.0.SelfAttention."
            plant = (stack, b) == ("decoder", 1)
            t[p + "q.weight"] = np.concatenate([other(d, N), WQ4 if plant else other(d, N), other(d, N)])
            t[p + "k.weight"] = np.concatenate([other(d, N), WK4 if plant else other(d, N), other(d, N)])
            t[p + "v.weight"] = other(H * d, N)
            t[p + "o.weight"] = other(N, H * d)
        t[f"{stack}.block.0.layer.0.SelfAttention.relative_attention_bias.weight"] = other(32, H)
    for b in range(2):
        p = f"decoder.block.{b}.layer.1.EncDecAttention."
        t[p + "q.weight"] = other(H * d, N)
        t[p + "k.weight"] = other(H * d, N)
    t["shared.weight"] = other(10, N)
    ck = save(tmp_path / "t5", t, {"model_type": "t5", "d_model": N, "d_kv": d, "num_heads": H, "num_layers": 2,
                                   "num_decoder_layers": 2, "relative_attention_num_buckets": 32,
                                   "relative_attention_max_distance": 128})
    code, doc = run(ck, tmp_path / "out")
    assert code == 0
    assert doc["model"]["layer_ids"] == ["encoder.block.0", "encoder.block.1", "decoder.block.0", "decoder.block.1"]
    assert len(doc["rows"]) == 4 * H
    planted(doc, 3, 1, kv_head=1)
    pe = doc["model"]["positional"]["3"]
    assert (pe["kind"], pe["stack"], pe["block"], pe["bidirectional"]) == ("relative_bias", "decoder", 1, False)
    assert "no 1/√d" in pe["note"]
    assert doc["model"]["positional"]["0"]["bidirectional"] is True
    cert = tmp_path / "out" / "L03H01.json"
    assert [t["name"] for t in json.loads(cert.read_text())["input"]["tensors"]] == [
        "decoder.block.1.layer.0.SelfAttention.q.weight", "decoder.block.1.layer.0.SelfAttention.k.weight"]
    verify(cert, ck, capsys)
    # a T5 encoder alone (T5EncoderModel) has only encoder blocks
    enc = {k: v for k, v in t.items() if k.startswith("encoder.")}
    ck2 = save(tmp_path / "t5enc", enc, {"model_type": "t5", "d_model": N, "d_kv": d, "num_heads": H,
                                         "num_layers": 2})
    code, doc = run(ck2, tmp_path / "out2", "--no-certificates")
    assert code == 0 and doc["model"]["n_layers"] == 2


# ---------------------------------------------------------------------------
# phi (microsoft/phi-2: model.layers.N.self_attn.{q,k,v}_proj with biases, dense; PhiConfig partial_rotary_factor
# default 0.5, qk_layernorm) and stablelm (stabilityai/stablelm-2-1_6b: q_proj/k_proj, use_qkv_bias,
# partial_rotary_factor default 0.25, qk_layernorm -> self_attn.q_layernorm.norms.H.weight)


@pytest.mark.parametrize("mt,fraction,rotary_dim", [("phi", "1/2", 2), ("stablelm", "1/4", 1)])
def test_phi_and_stablelm_partial_rotary_defaults(tmp_path, mt, fraction, rotary_dim):
    N, d = 8, 4                                                        # H = 2 heads of 4
    # head 1 has d_head 4: plant W_Q, W_K in its first two rows and keep two filler rows (rank 2n = 8 needs them)
    q1 = np.concatenate([pad(WQ4, N), np.array([[0, 0, 0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0, 1, 0]], np.float32)])
    k1 = np.concatenate([pad(WK4, N), np.array([[0, 0, 0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 0, 0, 0, 1]], np.float32)])
    t = {"model.layers.0.self_attn.q_proj.weight": np.concatenate([other(d, N), q1]),
         "model.layers.0.self_attn.k_proj.weight": np.concatenate([other(d, N), k1]),
         "model.layers.0.self_attn.q_proj.bias": np.zeros(2 * d, np.float32)}
    ck = save(tmp_path / mt, t, {"model_type": mt, "hidden_size": N, "num_attention_heads": 2,
                                 "num_hidden_layers": 1})
    code, doc = run(ck, tmp_path / "out", "--no-certificates")
    assert code == 0
    row = next(r for r in doc["rows"] if r["head"] == 1)
    # the second block pair adds L' = e6 e5ᵀ + e8 e7ᵀ: ‖L'‖² = 2, ‖T'‖² = 1, eigenvalues ±1/2 twice, so
    # ‖L‖² = 196, ‖T‖² = 155/2, α = (9/2, 4, 1/2, 1/2), β = (9, 1/2, 1/2, 1/2) and a = 155/392
    assert Fraction(row["a_exact"]) == Fraction(155, 392)
    pe = doc["model"]["positional"]
    assert (pe["partial_rotary_factor"], pe["rotary_dim"], pe["pairing"]) == (fraction, rotary_dim, "half_split")


def test_stablelm_per_head_qk_layernorm_refused(tmp_path, capsys):
    N, d = 4, 2
    t = {"model.layers.0.self_attn.q_proj.weight": np.concatenate([WQ4, other(d, N)]),
         "model.layers.0.self_attn.k_proj.weight": np.concatenate([WK4, other(d, N)]),
         "model.layers.0.self_attn.q_layernorm.norms.0.weight": np.ones(d, np.float32),
         "model.layers.0.self_attn.k_layernorm.norms.0.weight": np.ones(d, np.float32)}
    ck = save(tmp_path / "slm", t, {"model_type": "stablelm", "hidden_size": N, "num_attention_heads": 2,
                                    "qk_layernorm": True})
    err = one_line_exit_2(capsys, ["heads", str(ck), "--out", str(tmp_path / "o"), "--quiet"])
    assert "_layernorm.norms.0.weight" in err and "--pre-norm-qk" in err
    code, doc = run(ck, tmp_path / "out", "--pre-norm-qk", "--no-certificates")
    assert code == 0
    assert planted(doc, 0, 0)["score"] == "pre_norm_qk"


# ---------------------------------------------------------------------------
# --layout FILE


LAYOUT_TOML = """\
# a made-up checkpoint: one fused tensor per layer, per key head g the parts k_g, its query heads, v_g
n_heads = 4
n_kv_heads = 2
qkv = "backbone.blocks.{layer}.mixer.wqkv.weight"
fused = "grouped"
order = ["k", "q", "v"]
positional = { kind = "rope", base = 10000, pairing = "half_split" }
description = "my model: fused wqkv grouped per key head (k, q…, v)"
"""


def test_layout_file_grouped_custom_order(tmp_path, capsys):
    N, d = 8, 2
    # group 0: k_0, q_0, q_1, v_0; group 1: k_1, q_2, q_3, v_1 -- query head 3 is planted (key head 1)
    W = np.concatenate([other(d, N), other(d, N), other(d, N), other(d, N),
                        pad(WK4, N), other(d, N), pad(WQ4, N), other(d, N)])
    t = {f"backbone.blocks.{l}.mixer.wqkv.weight": (W if l == 1 else other(16, N)) for l in range(2)}
    ck = save(tmp_path / "custom", t, {"model_type": "my-own-arch"})
    lay = tmp_path / "my.layout.toml"
    lay.write_text(LAYOUT_TOML)
    # without the layout file: refused, pointing at --layout
    err = one_line_exit_2(capsys, ["heads", str(ck), "--out", str(tmp_path / "o"), "--quiet"])
    assert "--layout FILE" in err
    code, doc = run(ck, tmp_path / "out", "--layout", str(lay))
    assert code == 0
    planted(doc, 1, 3, kv_head=1)
    assert doc["model"]["layout"].startswith("my model: fused wqkv")
    assert doc["model"]["layout_source"].startswith("layout file my.layout.toml (sha256 ")
    assert doc["model"]["positional"]["kind"] == "rope"
    assert differs(W[10:12], W[12:14])                                 # order q, k, v would read these
    verify(tmp_path / "out" / "L01H03.json", ck, capsys)
    # the API takes the same file
    import qkverify

    m = qkverify.load_model(str(ck), layout=str(lay))
    rec = m.head(1, 3)
    assert np.array_equal(rec.W_Q, pad(WQ4, N)) and np.array_equal(rec.W_K, pad(WK4, N))


def test_layout_file_json_separate_conv1d_with_kv_map(tmp_path):
    N, d = 4, 2
    # Conv1D storage [in, out]; query head 0 uses key head 1 and query head 1 key head 0
    q = np.concatenate([WQ4, other(d, N)]).T
    k = np.concatenate([other(d, N), WK4]).T
    ck = save(tmp_path / "conv", {"tr.0.wq": q, "tr.0.wk": k}, None)
    lay = tmp_path / "layout.json"
    lay.write_text(json.dumps({"n_heads": 2, "n_kv_heads": 2, "query": "tr.{layer}.wq", "key": "tr.{layer}.wk",
                               "orientation": "conv1d", "kv_head": [1, 0]}))
    code, doc = run(ck, tmp_path / "out", "--layout", str(lay), "--no-certificates")
    assert code == 0
    planted(doc, 0, 0, kv_head=1)
    assert doc["model"]["positional"]["kind"] == "unknown"


@pytest.mark.parametrize("text,msg", [
    ('n_heads = 2\nquery = "a.{layer}.q"\nkey = "a.{layer}.k"\nheads = 3\n', "unknown key 'heads'"),
    ('n_heads = 2\nquery = "a.q"\nkey = "a.{layer}.k"\n', "one {layer}"),
    ('n_heads = 2\nqkv = "a.{layer}.qkv"\nquery = "a.{layer}.q"\n', "either query and key"),
    ('n_heads = 3\nn_kv_heads = 2\nquery = "a.{layer}.q"\nkey = "a.{layer}.k"\n', "does not divide"),
    ('n_heads = 2\nqkv = "a.{layer}.qkv"\norder = ["q", "q", "v"]\n', "q, k, v once each"),
    ('n_heads = 2\nquery = "a.{layer}.q"\nkey = "a.{layer}.k"\nkv_head = [0, 5]\n', "kv_head"),
    ('n_heads = 2\nquery = "nothing.{layer}.q"\nkey = "nothing.{layer}.k"\n', "no tensor like nothing.0.q"),
    ("n_heads = [\n", "not a readable layout file"),
])
def test_layout_file_refusals(tmp_path, capsys, text, msg):
    ck = save(tmp_path / "c", {"a.0.q": np.concatenate([WQ4, WQ4]), "a.0.k": np.concatenate([WK4, WK4])}, None)
    lay = tmp_path / "bad.toml"
    lay.write_text(text)
    err = one_line_exit_2(capsys, ["heads", str(ck), "--out", str(tmp_path / "o"), "--quiet", "--layout", str(lay)])
    assert msg in err


# ---------------------------------------------------------------------------
# the resolver on the shapes of real checkpoints (headers only)


def _resolve(shapes: dict, cfg: dict, **kw):
    from qkverify.models.layouts import resolve

    return resolve(list(shapes), lambda t: tuple(shapes[t]), cfg, Path("ckpt"), **kw)


def test_resolver_real_shapes():
    # microsoft/Phi-3-mini-4k-instruct: 3072 = 32·96, qkv_proj [9216, 3072]
    plan = _resolve({f"model.layers.{l}.self_attn.qkv_proj.weight": (9216, 3072) for l in range(32)},
                    {"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32, "num_key_value_heads": 32,
                     "num_hidden_layers": 32})
    assert (plan.kind, plan.dh, plan.head_slices(1)) == ("blocks", 96, (("qkv", 0, 96, 192), ("qkv", 0, 3168, 3264)))
    # tiiuae/falcon-7b: 71 heads of 64, query_key_value [4672, 4544], multi-query
    plan = _resolve({f"transformer.h.{l}.self_attention.query_key_value.weight": (4672, 4544) for l in range(32)},
                    {"model_type": "falcon", "hidden_size": 4544, "num_attention_heads": 71, "num_hidden_layers": 32,
                     "multi_query": True, "new_decoder_architecture": False})
    assert (plan.KV, plan.head_slices(70)) == (1, (("qkv", 0, 4480, 4544), ("qkv", 0, 4544, 4608)))
    # tiiuae/falcon-40b: 128 heads, 8 key heads, 8192 = 128·64, rows (128 + 16)·64 = 9216
    plan = _resolve({"transformer.h.0.self_attention.query_key_value.weight": (9216, 8192)},
                    {"model_type": "falcon", "hidden_size": 8192, "num_attention_heads": 128, "num_kv_heads": 8,
                     "new_decoder_architecture": True})
    # query head 17 is the second of group 1 (16 per group): rows 1·18·64 + 1·64
    assert plan.head_slices(17) == (("qkv", 0, 1216, 1280), ("qkv", 0, 2176, 2240))
    # t5-small: d_model 512, 8 heads of 64, 6 + 6 blocks
    shapes = {f"{s}.block.{b}.layer.0.SelfAttention.{r}.weight": (512, 512)
              for s in ("encoder", "decoder") for b in range(6) for r in "qk"}
    plan = _resolve(shapes, {"model_type": "t5", "d_model": 512, "d_kv": 64, "num_heads": 8, "num_layers": 6})
    assert len(plan.layer_ids) == 12 and plan.layer_ids[6] == ("decoder", 0) and plan.dh == 64
    from qkverify.errors import QKInputError

    with pytest.raises(QKInputError, match="says 5 encoder layers"):
        _resolve(shapes, {"model_type": "t5", "d_model": 512, "d_kv": 64, "num_heads": 8, "num_layers": 5,
                          "num_decoder_layers": 6})
