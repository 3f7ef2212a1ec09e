"""Every checkpoint layout, pinned by a planted head.

Each test writes a tiny checkpoint (config.json + safetensors, one of them
sharded) in one layout, with one planted head P whose W_Q, W_K are small
integer matrices.  Its exact profile is computed here with sympy (and stated
by hand), and ``qkverify heads`` must reproduce it: ``a`` exactly, b, c, d
enclosed, no face.  For every layout the test also computes, with sympy,
the profile that a wrong reading of the same tensor would give (blocks
instead of interleaving, a Conv1D read as a Linear, the wrong KV group) and
checks it differs -- so a loader that cut the tensor the wrong way could not
pass.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from qkverify.cli import main

# ---------------------------------------------------------------------------
# the planted head and its exact profile

N, D = 4, 2          # d_model, d_head; H = 2 heads (4 with GQA)
WQ_P = np.array([[1, -1, -1, 0], [-2, -1, -2, 1]], np.float32)
WK_P = np.array([[1, 1, -1, -1], [1, -2, 2, -1]], np.float32)
# by hand: L = W_Kᵀ W_Q, ‖L‖² = 108, ‖T‖² = 43, S = (L + Lᵀ)/2 has eigenvalues
# with α·β pairing giving b = 13/36, c = 1/108, d = 25/108 (checked by sympy below)
PI_P = (Fraction(43, 108), Fraction(13, 36), Fraction(1, 108), Fraction(25, 108))
# other heads (nonzero L, full-rank [W_K; W_Q]) and value rows
WQ_O = np.array([[0, 1, 0, 1], [1, 0, 1, 1]], np.float32)
WK_O = np.array([[1, 0, 0, 2], [0, 1, -1, 0]], np.float32)
WQ_R = np.array([[2, 0, 1, 0], [0, 1, 0, -1]], np.float32)
WK_R = np.array([[0, 0, 1, 1], [1, -1, 0, 0]], np.float32)
WV = [np.array([[1, 2, 3, 4], [4, 3, 2, 1]], np.float32), np.array([[-1, 0, 2, 0], [0, 5, 0, -3]], np.float32)]
# biases of the planted head (dyadic) and of the others
BQ_P, BK_P = np.array([0.5, -1], np.float32), np.array([2, 0.25], np.float32)
BQ_O, BK_O = np.array([1, 0], np.float32), np.array([0, -0.5], np.float32)


def sym_profile(Wq, Wk) -> tuple:
    """π(L) for L = W_Kᵀ W_Q, exactly (sympy; Def 6 with α, β padded)."""
    L = sp.Matrix(Wk.astype(int).tolist()).T * sp.Matrix(Wq.astype(int).tolist())
    S, T = (L + L.T) / 2, (L - L.T) / 2
    fL = sum(x ** 2 for x in L)
    lam = sp.Poly(S.charpoly(sp.Symbol("x")).as_expr(), sp.Symbol("x")).real_roots()   # exact, with multiplicity
    al = sorted((x for x in lam if x > 0), reverse=True)
    be = sorted((-x for x in lam if x < 0), reverse=True)
    m = max(len(al), len(be))
    al += [sp.Integer(0)] * (m - len(al))
    be += [sp.Integer(0)] * (m - len(be))
    a = sum(x ** 2 for x in T) / fL
    b = 2 * sum(p * q for p, q in zip(al, be)) / fL
    c = sum((p - q) ** 2 for p, q in zip(al, be) if p > q) / fL
    d = sum((q - p) ** 2 for p, q in zip(al, be) if q > p) / fL
    return a, b, c, d


def test_planted_profile_by_hand_and_sympy():
    got = sym_profile(WQ_P, WK_P)
    assert [sp.Rational(x.numerator, x.denominator) for x in PI_P] == [sp.nsimplify(x) for x in got]
    assert not _differs(WQ_P, WK_P)
    L = WK_P.T.astype(int) @ WQ_P.astype(int)
    assert int((L * L).sum()) == 108 and int((((L - L.T) / 2) ** 2).sum()) == 43
    assert sum(PI_P) == 1


def _differs(Wq, Wk) -> bool:
    """A wrong reading gives another exact profile (the test could not pass with it)."""
    got = sym_profile(Wq, Wk)
    want = [sp.Rational(x.numerator, x.denominator) for x in PI_P]
    return any(sp.simplify(g - w) != 0 for g, w in zip(got, want))


# ---------------------------------------------------------------------------
# writing checkpoints


def _save(d: Path, tensors: dict, config: dict | None, shards: list[list[str]] | None = None) -> Path:
    from safetensors.numpy import save_file

    d.mkdir(parents=True, exist_ok=True)
    tensors = {k: np.ascontiguousarray(v) for k, v in tensors.items()}
    if shards is None:
        save_file(tensors, str(d / "model.safetensors"))
    else:
        wm = {}
        for i, names in enumerate(shards):
            fn = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
            save_file({k: tensors[k] for k in names}, str(d / fn))
            wm.update({k: fn for k in names})
        assert set(wm) == set(tensors)
        (d / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": wm}))
    if config is not None:
        (d / "config.json").write_text(json.dumps(config))
    return d


def _run(ckpt: Path, out: Path, *extra) -> tuple[int, dict]:
    code = main(["heads", str(ckpt), "--out", str(out), "--quiet", "--no-plot", *extra])
    doc = json.loads((out / "heads.json").read_text()) if code in (0, 1) else {}
    return code, doc


def _check_planted(doc: dict, layer: int, head: int) -> dict:
    row = next(r for r in doc["rows"] if (r["layer"], r["head"]) == (layer, head))
    a, b, c, d = PI_P
    assert Fraction(row["a_exact"]) == a
    for name, v in (("b", b), ("c", c), ("d", d)):
        assert Fraction(row[name + "_lo"]) <= v <= Fraction(row[name + "_hi"]), (name, row[name + "_lo"], row[name + "_hi"])
    assert (row["face_b0"], row["face_c0"], row["face_d0"]) == (False, False, False)
    assert (row["n_pos"], row["n_neg"], row["n_zero"]) == (2, 2, 0)
    return row


def _one_line_exit_2(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


# ---------------------------------------------------------------------------
# separate projections


def test_bert_with_biases(tmp_path):
    t = {}
    for l, (heads, bq, bk) in enumerate([([(WQ_O, WK_O), (WQ_P, WK_P)], [BQ_O, BQ_P], [BK_O, BK_P]),
                                         ([(WQ_R, WK_R), (WQ_O, WK_O)], [BQ_O, BQ_O], [BK_O, BK_O])]):
        p = f"bert.encoder.layer.{l}.attention.self."
        t[p + "query.weight"] = np.concatenate([q for q, _ in heads])
        t[p + "key.weight"] = np.concatenate([k for _, k in heads])
        t[p + "query.bias"] = np.concatenate(bq)
        t[p + "key.bias"] = np.concatenate(bk)
        t[p + "value.weight"] = np.concatenate(WV)
    ck = _save(tmp_path / "bert", t, {"model_type": "bert", "num_attention_heads": 2, "hidden_size": N,
                                      "num_hidden_layers": 2, "max_position_embeddings": 512})
    code, doc = _run(ck, tmp_path / "out", "--biaffine-vectors")
    assert code == 0
    row = _check_planted(doc, 0, 1)
    assert doc["model"]["positional"] == {"kind": "learned_absolute", "max_positions": 512}
    assert doc["model"]["score"] == "bilinear_part_of_biaffine" and row["score"] == "bilinear_part_of_biaffine"
    # biaffine parts by hand: u = W_Kᵀ b_Q, w = W_Qᵀ b_K, c = b_Kᵀ b_Q
    bf = row["biaffine"]
    assert bf["lin_key"]["values"] == ["-1/2", "5/2", "-5/2", "1/2"] and bf["lin_key"]["norm_sq"] == "13"
    assert bf["lin_query"]["values"] == ["3/2", "-9/4", "-5/2", "1/4"] and bf["lin_query"]["norm_sq"] == "109/8"
    assert bf["const"] == "3/4" and row["bias_const"] == 0.75
    assert bf["biases"]["b_Q"] == {"name": "bert.encoder.layer.0.attention.self.query.bias", "index": [2, 4],
                                   "sha256": bf["biases"]["b_Q"]["sha256"]}
    import csv

    rows = list(csv.DictReader(open(tmp_path / "out" / "heads.csv")))
    assert rows[1]["score"] == "bilinear_part_of_biaffine" and float(rows[1]["bias_lin_key_norm"]) == pytest.approx(13 ** 0.5)


def test_opt_prefix_and_learned_positions(tmp_path):
    t = {}
    for l, heads in enumerate([[(WQ_P, WK_P), (WQ_O, WK_O)], [(WQ_O, WK_O), (WQ_R, WK_R)]]):
        p = f"model.decoder.layers.{l}.self_attn."
        t[p + "q_proj.weight"] = np.concatenate([q for q, _ in heads])
        t[p + "k_proj.weight"] = np.concatenate([k for _, k in heads])
        t[p + "q_proj.bias"] = np.concatenate([BQ_P, BQ_O])
        t[p + "k_proj.bias"] = np.concatenate([BK_P, BK_O])
    ck = _save(tmp_path / "opt", t, {"model_type": "opt", "num_attention_heads": 2, "hidden_size": N,
                                     "max_position_embeddings": 2048, "enable_bias": True})
    code, doc = _run(ck, tmp_path / "out", "--no-certificates")
    assert code == 0
    row = _check_planted(doc, 0, 0)
    assert row["biaffine"]["const"] == "3/4"
    assert doc["model"]["arch"] == "opt" and doc["model"]["positional"]["kind"] == "learned_absolute"
    assert doc["model"]["layout"].startswith("opt: separate q_proj/k_proj")


def _gqa_tensors(layer_prefix: str, planted_at: int = 2):
    """4 query heads on 2 KV heads; query head 2 (KV group 1) is the planted one."""
    q = [WQ_O, WQ_R, WQ_P, WQ_O]
    k = [WK_R, WK_P]         # KV head 1 = planted keys
    assert planted_at == 2
    return {layer_prefix + "q_proj.weight": np.concatenate(q), layer_prefix + "k_proj.weight": np.concatenate(k),
            layer_prefix + "v_proj.weight": np.concatenate(WV)}, q, k


def test_llama_gqa_sharded(tmp_path, capsys):
    t = {}
    for l in range(2):
        tt, q, k = _gqa_tensors(f"model.layers.{l}.self_attn.")
        t.update(tt)
    t["model.embed_tokens.weight"] = np.ones((10, N), np.float32)
    shards = [[n for n in t if ".layers.0." in n or "embed" in n], [n for n in t if ".layers.1." in n]]
    cfg = {"model_type": "mistral", "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": D,
           "hidden_size": N, "num_hidden_layers": 2, "rope_theta": 1000000.0}
    ck = _save(tmp_path / "mistral", t, cfg, shards)
    code, doc = _run(ck, tmp_path / "out")
    assert code == 0
    for l in range(2):
        row = _check_planted(doc, l, 2)
        assert row["kv_head"] == 1
    assert doc["model"]["shards"] == ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    assert doc["model"]["positional"] == {"kind": "rope", "base": 1000000, "base_source": "config", "rotary_dim": 2,
                                          "d_head": 2, "partial_rotary_factor": "1", "rotary_fraction": "1",
                                          "pairing": "half_split", "rows": "as stored in the checkpoint"}
    # wrong KV group (h mod KV instead of h // (H/KV)) pairs head 2 with KV head 0
    assert _differs(WQ_P, WK_R)
    # layer 1 came from the second shard, and its certificate names it; the kernel re-reads it
    cert = json.loads((tmp_path / "out" / "L01H02.json").read_text())
    assert {t["file"] for t in cert["input"]["tensors"]} == {"model-00002-of-00002.safetensors"}
    assert main(["verify", "-v", str(tmp_path / "out" / "L01H02.json"), "--weights", str(ck)]) == 0
    assert "valid (heads_have_balanced_attention: holds" in " ".join(capsys.readouterr().out.split())
    # one shard passed alone is refused with a pointer to the directory
    err = _one_line_exit_2(capsys, ["heads", str(ck / "model-00001-of-00002.safetensors"), "--out",
                                    str(tmp_path / "o3"), "--quiet"])
    assert "one shard of the sharded checkpoint" in err
    # a missing shard is one line, exit 2
    (ck / "model-00002-of-00002.safetensors").unlink()
    err = _one_line_exit_2(capsys, ["heads", str(ck), "--out", str(tmp_path / "o2"), "--quiet"])
    assert "model-00002-of-00002.safetensors is missing" in err


def test_gptj_interleaved_rope(tmp_path):
    t = {}
    for l in range(1):
        p = f"transformer.h.{l}.attn."
        t[p + "q_proj.weight"] = np.concatenate([WQ_O, WQ_P])
        t[p + "k_proj.weight"] = np.concatenate([WK_O, WK_P])
    ck = _save(tmp_path / "gptj", t, {"model_type": "gptj", "n_head": 2, "n_embd": N, "rotary_dim": 2, "n_layer": 1})
    code, doc = _run(ck, tmp_path / "out", "--no-certificates")
    assert code == 0
    _check_planted(doc, 0, 1)
    pe = doc["model"]["positional"]
    assert (pe["kind"], pe["pairing"], pe["rotary_dim"], pe["base"]) == ("rope", "interleaved", 2, 10000)


# ---------------------------------------------------------------------------
# q/k normalisation


def _qwen3(tmp_path) -> Path:
    t = {}
    tt, q, k = _gqa_tensors("model.layers.0.self_attn.")
    t.update(tt)
    t["model.layers.0.self_attn.q_norm.weight"] = np.ones(D, np.float32)
    t["model.layers.0.self_attn.k_norm.weight"] = np.ones(D, np.float32)
    return _save(tmp_path / "qwen3", t, {"model_type": "qwen3", "num_attention_heads": 4, "num_key_value_heads": 2,
                                         "head_dim": D, "hidden_size": N, "rope_theta": 1000000})


def test_qk_norm_refused_by_default(tmp_path, capsys):
    ck = _qwen3(tmp_path)
    err = _one_line_exit_2(capsys, ["heads", str(ck), "--out", str(tmp_path / "o"), "--quiet"])
    assert ("q_norm" in err or "k_norm" in err) and "not a fixed bilinear form" in err and "--pre-norm-qk" in err


def test_qk_norm_with_option_is_labelled(tmp_path, capsys):
    ck = _qwen3(tmp_path)
    code = main(["heads", str(ck), "--out", str(tmp_path / "o"), "--no-plot", "--pre-norm-qk", "--no-certificates"])
    assert code == 0
    text = capsys.readouterr().out
    assert "PRE-NORMALISATION" in text
    doc = json.loads((tmp_path / "o" / "heads.json").read_text())
    row = _check_planted(doc, 0, 2)
    assert row["score"] == "pre_norm_qk" and doc["model"]["score"] == "pre_norm_qk"
    assert "_norm.weight" in doc["model"]["qk_norm"]
    import csv

    rows = list(csv.DictReader(open(tmp_path / "o" / "heads.csv")))
    assert {r["score"] for r in rows} == {"pre_norm_qk"}
    # the per-head record the certificates are built from carries the label
    from qkverify.models import load_model

    rec = next(load_model(str(ck), pre_norm_qk=True).heads())
    assert rec.pre_norm_qk and rec.source["score"] == "pre_norm_qk" and rec.source["pre_norm_qk"] is True


# ---------------------------------------------------------------------------
# GPT-2 fused c_attn


def _gpt2_fused() -> np.ndarray:
    """[3N, N] rows: Q block (heads 0, 1), K block, V block -- the [out, in] reading."""
    Q = np.concatenate([WQ_O, WQ_P])
    K = np.concatenate([WK_O, WK_P])
    V = np.concatenate(WV)
    return np.concatenate([Q, K, V])


def test_gpt2_conv1d_in_out(tmp_path, capsys):
    W = _gpt2_fused().T                       # HF Conv1D [in, out] = [N, 3N]
    bias = np.concatenate([BQ_O, BQ_P, BK_O, BK_P, np.zeros(N, np.float32)])      # Q, K, V blocks
    t = {"transformer.h.0.attn.c_attn.weight": W, "transformer.h.0.attn.c_attn.bias": bias,
         "transformer.wte.weight": np.ones((7, N), np.float32)}
    ck = _save(tmp_path / "gpt2", t, {"model_type": "gpt2", "n_head": 2, "n_embd": N, "n_layer": 1, "n_positions": 64})
    code, doc = _run(ck, tmp_path / "out")
    assert code == 0
    row = _check_planted(doc, 0, 1)
    assert row["biaffine"]["const"] == "3/4" and row["biaffine"]["lin_query"]["norm_sq"] == "109/8"
    assert "Conv1D [in, out]" in doc["model"]["layout"]
    assert doc["model"]["positional"] == {"kind": "learned_absolute", "max_positions": 64}
    # a loader that read the Conv1D bytes as [out, in] would see other matrices
    raw = np.ascontiguousarray(W).reshape(3 * N, N)
    assert _differs(raw[2:4], raw[N + 2:N + 4])
    # the kernel re-reads the transposed column slices
    assert main(["verify", "-v", str(tmp_path / "out" / "L00H01.json"), "--weights", str(ck)]) == 0
    assert "valid (heads_have_balanced_attention: holds" in " ".join(capsys.readouterr().out.split())


def test_gpt2_out_in_orientation(tmp_path, capsys):
    W = _gpt2_fused()                         # [out, in] = [3N, N], e.g. written from a torch Linear
    ck = _save(tmp_path / "gpt2lin", {"h.0.attn.c_attn.weight": W}, {"model_type": "gpt2", "n_head": 2, "n_embd": N})
    code, doc = _run(ck, tmp_path / "out")
    assert code == 0
    _check_planted(doc, 0, 1)
    assert "Linear [out, in]" in doc["model"]["layout"]
    raw = np.ascontiguousarray(W).reshape(N, 3 * N)   # the other orientation's reading
    assert _differs(raw[:, 2:4].T, raw[:, N + 2:N + 4].T)
    assert main(["verify", "-v", str(tmp_path / "out" / "L00H01.json"), "--weights", str(ck)]) == 0
    assert "valid (heads_have_balanced_attention: holds" in " ".join(capsys.readouterr().out.split())


def test_gpt2_ambiguous_orientation_refused(tmp_path, capsys):
    W = _gpt2_fused()
    t = {"h.0.attn.c_attn.weight": W.T, "h.1.attn.c_attn.weight": W}   # layers disagree
    ck = _save(tmp_path / "mixed", t, {"model_type": "gpt2", "n_head": 2})
    err = _one_line_exit_2(capsys, ["heads", str(ck), "--out", str(tmp_path / "o"), "--quiet"])
    assert "ambiguous c_attn orientation" in err
    ck2 = _save(tmp_path / "neither", {"h.0.attn.c_attn.weight": W[:, :3]}, {"model_type": "gpt2", "n_head": 2, "n_embd": N})
    err = _one_line_exit_2(capsys, ["heads", str(ck2), "--out", str(tmp_path / "o"), "--quiet"])
    assert "neither Conv1D" in err


# ---------------------------------------------------------------------------
# fused, interleaved per head (BLOOM, GPT-NeoX) and blocks (MPT)


def _interleaved() -> tuple[np.ndarray, np.ndarray]:
    """[3N, N]: rows [q_0; k_0; v_0; q_1; k_1; v_1] and the matching bias."""
    W = np.concatenate([WQ_O, WK_O, WV[0], WQ_P, WK_P, WV[1]])
    b = np.concatenate([BQ_O, BK_O, np.zeros(D, np.float32), BQ_P, BK_P, np.zeros(D, np.float32)])
    return W, b


def test_bloom_interleaved_with_biases_and_alibi(tmp_path, capsys):
    W, b = _interleaved()
    t = {"transformer.h.0.self_attention.query_key_value.weight": W,
         "transformer.h.0.self_attention.query_key_value.bias": b,
         "transformer.h.0.self_attention.dense.weight": np.eye(N, dtype=np.float32)}
    # BLOOM's config.json names: n_embed, n_head, n_layer
    ck = _save(tmp_path / "bloom", t, {"model_type": "bloom", "n_embed": N, "n_head": 2, "n_layer": 1})
    code, doc = _run(ck, tmp_path / "out")
    assert code == 0
    row = _check_planted(doc, 0, 1)
    assert doc["model"]["positional"] == {"kind": "alibi"}
    assert row["biaffine"]["const"] == "3/4" and row["biaffine"]["lin_key"]["norm_sq"] == "13"
    assert row["biaffine"]["biases"]["b_Q"]["index"] == [6, 8]
    # blocks instead of interleaving would take rows 2:4 as Q and N+2:N+4 as K
    assert _differs(W[2:4], W[N + 2:N + 4])
    cert = json.loads((tmp_path / "out" / "L00H01.json").read_text())
    assert [t["rows"] for t in cert["input"]["tensors"]] == [[6, 8], [8, 10]]
    assert main(["verify", "-v", str(tmp_path / "out" / "L00H01.json"), "--weights", str(ck)]) == 0
    assert "valid (heads_have_balanced_attention: holds" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("prefix", ["gpt_neox.", ""])
def test_gpt_neox_interleaved_partial_rope(tmp_path, prefix):
    W, b = _interleaved()
    t = {f"{prefix}layers.0.attention.query_key_value.weight": W,
         f"{prefix}layers.0.attention.query_key_value.bias": b}
    ck = _save(tmp_path / "pythia", t, {"model_type": "gpt_neox", "hidden_size": N, "num_attention_heads": 2,
                                        "num_hidden_layers": 1, "rotary_pct": 0.5, "rotary_emb_base": 10000})
    code, doc = _run(ck, tmp_path / "out", "--no-certificates")
    assert code == 0
    _check_planted(doc, 0, 1)
    pe = doc["model"]["positional"]
    assert (pe["kind"], pe["pairing"], pe["rotary_dim"], pe["partial_rotary_factor"], pe["base"]) == \
        ("rope", "half_split", 1, "1/2", 10000)
    assert _differs(W[2:4], W[N + 2:N + 4])


def test_mpt_blocks(tmp_path):
    Q = np.concatenate([WQ_P, WQ_O])
    K = np.concatenate([WK_P, WK_O])
    W = np.concatenate([Q, K, np.concatenate(WV)])       # [3N, N]: Q, K, V blocks
    t = {"transformer.blocks.0.attn.Wqkv.weight": W}
    cfg = {"model_type": "mpt", "d_model": N, "n_heads": 2, "n_layers": 1, "no_bias": True,
           "attn_config": {"alibi": True, "alibi_bias_max": 8, "clip_qkv": None, "qk_ln": False}}
    ck = _save(tmp_path / "mpt", t, cfg)
    code, doc = _run(ck, tmp_path / "out", "--no-certificates")
    assert code == 0
    _check_planted(doc, 0, 0)
    assert doc["model"]["positional"] == {"kind": "alibi", "alibi_bias_max": 8}
    assert doc["model"]["score"] == "bilinear"
    # interleaving instead of blocks would take rows 0:2 as Q and 2:4 as K
    assert _differs(W[0:2], W[2:4])


# ---------------------------------------------------------------------------
# refusals


def test_unknown_model_type_refused(tmp_path, capsys):
    ck = _save(tmp_path / "xlnet", {"transformer.layer.0.rel_attn.q": _interleaved()[0]},
               {"model_type": "xlnet", "n_head": 2})
    err = _one_line_exit_2(capsys, ["heads", str(ck), "--out", str(tmp_path / "o"), "--quiet"])
    assert "model_type 'xlnet'" in err and "--layout FILE" in err


def test_fused_without_model_type_refused(tmp_path, capsys):
    ck = _save(tmp_path / "noconfig", {"h.0.self_attention.query_key_value.weight": _interleaved()[0]}, None)
    err = _one_line_exit_2(capsys, ["heads", str(ck), "--out", str(tmp_path / "o"), "--quiet", "--n-heads", "2"])
    assert "model_type" in err and "interleave" in err


def test_model_type_without_its_tensors_refused(tmp_path, capsys):
    ck = _save(tmp_path / "wrong", {"h.0.attn.c_attn.weight": _gpt2_fused()}, {"model_type": "bloom", "n_head": 2})
    err = _one_line_exit_2(capsys, ["heads", str(ck), "--out", str(tmp_path / "o"), "--quiet"])
    assert "model_type 'bloom' but no tensor like" in err


def test_pytorch_bin_refused_with_conversion_command(tmp_path, capsys):
    d = tmp_path / "binmodel"
    d.mkdir()
    (d / "pytorch_model.bin").write_bytes(b"\x80\x02}q\x00.")     # a pickle; never unpickled
    (d / "config.json").write_text(json.dumps({"model_type": "opt"}))
    for target in (d, d / "pytorch_model.bin"):
        err = _one_line_exit_2(capsys, ["heads", str(target), "--out", str(tmp_path / "o"), "--quiet"])
        assert "not read" in err and "safetensors" in err and "weights_only=True" in err


def test_mpt_clip_qkv_and_gemma_softcap_refused(tmp_path, capsys):
    W = np.concatenate([_gpt2_fused()])
    ck = _save(tmp_path / "mptclip", {"transformer.blocks.0.attn.Wqkv.weight": W},
               {"model_type": "mpt", "d_model": N, "n_heads": 2, "attn_config": {"clip_qkv": 8, "alibi": True}})
    assert "clip" in _one_line_exit_2(capsys, ["heads", str(ck), "--out", str(tmp_path / "o"), "--quiet"])


# ---------------------------------------------------------------------------
# the resolver on real configurations (headers only: names and shapes, no data)


def _resolve(shapes: dict, cfg: dict, **kw):
    from qkverify.models.layouts import resolve

    return resolve(list(shapes), lambda t: tuple(shapes[t]), cfg, Path("ckpt"), **kw)


def test_resolver_pythia_70m_shapes():
    # EleutherAI/pythia-70m: d = 512, 8 heads of 64, 6 layers, rotary_pct 0.25, base 10000
    cfg = {"model_type": "gpt_neox", "hidden_size": 512, "num_attention_heads": 8, "num_hidden_layers": 6,
           "rotary_pct": 0.25, "rotary_emb_base": 10000, "max_position_embeddings": 2048}
    for prefix in ("gpt_neox.", ""):
        shapes = {f"{prefix}layers.{l}.attention.query_key_value.weight": (1536, 512) for l in range(6)}
        shapes.update({f"{prefix}layers.{l}.attention.query_key_value.bias": (1536,) for l in range(6)})
        shapes["embed_out.weight"] = (50304, 512)
        plan = _resolve(shapes, cfg)
        assert (plan.H, plan.KV, plan.N, plan.dh, plan.prefix) == (8, 8, 512, 64, prefix)
        assert plan.head_slices(3) == (("qkv", 0, 576, 640), ("qkv", 0, 640, 704))   # rows 3·3·64 …
        pe = plan.positional(0)
        assert (pe["rotary_dim"], pe["rotary_fraction"], pe["pairing"], pe["base"]) == (16, "1/4", "half_split", 10000)
        assert plan.biases[5] == {"qkv": f"{prefix}layers.5.attention.query_key_value.bias"}


def test_resolver_bloom_560m_names_and_config_keys():
    cfg = {"model_type": "bloom", "n_embed": 1024, "num_attention_heads": 16, "n_layer": 24}
    for prefix in ("", "transformer."):
        shapes = {f"{prefix}h.{l}.self_attention.query_key_value.weight": (3072, 1024) for l in range(24)}
        plan = _resolve(shapes, cfg)
        assert (plan.H, plan.N, plan.dh, plan.family.kind) == (16, 1024, 64, "interleaved")
        assert plan.head_slices(1) == (("qkv", 0, 192, 256), ("qkv", 0, 256, 320))
        assert plan.positional(7) == {"kind": "alibi"}


def test_resolver_opt_prefixes_and_mistral_small_gqa():
    cfg = {"model_type": "opt", "hidden_size": 768, "num_attention_heads": 12, "num_hidden_layers": 2}
    for prefix in ("model.", ""):
        shapes = {f"{prefix}decoder.layers.{l}.self_attn.{r}_proj.weight": (768, 768) for l in range(2) for r in "qkv"}
        plan = _resolve(shapes, cfg)
        assert (plan.H, plan.dh, plan.prefix) == (12, 64, prefix)
    # Mistral-Small-24B: 32 query heads on 8 KV heads of 128, d_model 5120
    cfg = {"model_type": "mistral", "hidden_size": 5120, "num_attention_heads": 32, "num_key_value_heads": 8,
           "head_dim": 128, "num_hidden_layers": 1, "rope_theta": 100000000.0}
    shapes = {"model.layers.0.self_attn.q_proj.weight": (4096, 5120), "model.layers.0.self_attn.k_proj.weight": (1024, 5120)}
    plan = _resolve(shapes, cfg)
    assert (plan.H, plan.KV, plan.N, plan.dh) == (32, 8, 5120, 128)
    assert plan.head_slices(13) == (("q", 0, 13 * 128, 14 * 128), ("k", 0, 3 * 128, 4 * 128))   # 13 // 4 = 3
    assert plan.positional(0)["base"] == 100000000


def test_resolver_gemma3_local_and_global_rope_and_vision_tower():
    text = {"hidden_size": 8, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 4,
            "num_hidden_layers": 6, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0, "sliding_window_pattern": 6}
    cfg = {"model_type": "gemma3", "text_config": text, "vision_config": {"hidden_size": 16}}
    shapes = {}
    for l in range(6):
        p = f"language_model.model.layers.{l}.self_attn."
        shapes.update({p + "q_proj.weight": (8, 8), p + "k_proj.weight": (4, 8), p + "q_norm.weight": (4,),
                       p + "k_norm.weight": (4,)})
    # a SigLIP vision tower's q_proj/k_proj must not be taken for the language model's
    shapes["vision_tower.vision_model.encoder.layers.0.self_attn.q_proj.weight"] = (16, 16)
    from qkverify.errors import QKInputError

    with pytest.raises(QKInputError, match="pre-norm-qk"):
        _resolve(shapes, cfg)
    plan = _resolve(shapes, cfg, pre_norm_qk=True)
    assert plan.prefix == "language_model.model." and len(plan.layer_ids) == 6 and plan.qk_norm
    assert [plan.positional(l)["base"] for l in range(6)] == [10000] * 5 + [1000000]
    assert "(4,)" not in plan.qk_norm and "[4]" in plan.qk_norm


def test_resolver_refusals():
    from qkverify.errors import QKInputError

    shapes = {"model.layers.0.self_attn.q_proj.weight": (4, 4), "model.layers.0.self_attn.k_proj.weight": (4, 4),
              "layers.0.self_attn.q_proj.weight": (4, 4), "layers.0.self_attn.k_proj.weight": (4, 4)}
    with pytest.raises(QKInputError, match="two prefixes"):
        _resolve(shapes, {"model_type": "llama", "num_attention_heads": 2})
    shapes = {f"model.layers.{l}.self_attn.{r}_proj.weight": (4, 4) for l in range(2) for r in "qk"}
    with pytest.raises(QKInputError, match="says 3 layers"):
        _resolve(shapes, {"model_type": "llama", "num_attention_heads": 2, "num_hidden_layers": 3})
    with pytest.raises(QKInputError, match="head count"):
        _resolve(shapes, {"model_type": "llama"})
    mpt = {"transformer.blocks.0.attn.Wqkv.weight": (12, 4), "transformer.blocks.0.attn.q_ln.weight": (4,)}
    with pytest.raises(QKInputError, match="q_ln"):
        _resolve(mpt, {"model_type": "mpt", "d_model": 4, "n_heads": 2, "attn_config": {"qk_ln": True}})
    gem = {"model.layers.0.self_attn.q_proj.weight": (4, 4), "model.layers.0.self_attn.k_proj.weight": (4, 4)}
    with pytest.raises(QKInputError, match="caps attention logits"):
        _resolve(gem, {"model_type": "gemma3_text", "num_attention_heads": 2, "attn_logit_softcapping": 50.0})


def test_query_and_key_in_different_shards(tmp_path, capsys):
    """q_proj in one shard, k_proj in the next: each is read from its own
    shard; the certificate names both files (file and SHA-256 per tensor) and the
    kernel re-reads each from its shard."""
    t, q, k = _gqa_tensors("model.layers.0.self_attn.")
    names = list(t)
    shards = [[names[0]], names[1:]]
    ck = _save(tmp_path / "split", t, {"model_type": "llama", "num_attention_heads": 4, "num_key_value_heads": 2,
                                        "hidden_size": N}, shards)
    code, doc = _run(ck, tmp_path / "out")
    assert code == 0
    _check_planted(doc, 0, 2)
    cert = json.loads((tmp_path / "out" / "L00H02.json").read_text())
    tq, tk = cert["input"]["tensors"]
    assert tq["file"] == "model-00001-of-00002.safetensors" and tk["file"] == "model-00002-of-00002.safetensors"
    # each tensor names its own shard and SHA-256: the kernel reads W_Q and W_K from both files
    assert main(["verify", str(tmp_path / "out" / "L00H02.json"), "--weights", str(ck)]) == 0
    assert "valid (heads_have_balanced_attention: holds" in " ".join(capsys.readouterr().out.split())
