"""Loaders on small synthetic checkpoints written here (safetensors, GGUF via
gguf's writer, TransformerLens .npz) with heads whose profile is known in
closed form; plus the packaged models' metadata."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from qkverify.errors import QKInputError
from qkverify.models import load_model, parse_layers, permute_rope, unpermute_rope
from qkverify.models.base import kv_head_of

N = 8
DH = 2


def e(i: int) -> np.ndarray:
    v = np.zeros(N, dtype=np.float32)
    v[i] = 1.0
    return v


# Heads (W_Q, W_K), each 2 x 8, with known profiles π = (a, b, c, d):
#  HA: L = e3 e1ᵀ + e4 e2ᵀ      -> π = (1/2, 1/2, 0, 0), signature (2, 2, 4), α = β (both faces)
#  HD: L = Σ (e_{2r}+e_{2r+1}) e_{2r}ᵀ, two rank-one blocks with t = 1/√2
#                                -> π = (1/4, 1/4, 1/2, 0), signature (2, 2, 4)
#  HB: W_K = W_Q                 -> L symmetric PSD, π = (0, 0, 1, 0), rank M = 2 < 4
#  HC: W_K = −2 W_Q              -> L symmetric NSD, π = (0, 0, 0, 1), rank M = 2 < 4
HA = (np.stack([e(0), e(1)]), np.stack([e(2), e(3)]))
HD = (np.stack([e(4), e(6)]), np.stack([e(4) + e(5), e(6) + e(7)]))
HB = (np.stack([e(0), e(1)]), np.stack([e(0), e(1)]))
HC = (np.stack([e(2), e(5)]), -2 * np.stack([e(2), e(5)]))
KNOWN = {"HA": (0.5, 0.5, 0.0, 0.0), "HD": (0.25, 0.25, 0.5, 0.0), "HB": (0.0, 0.0, 1.0, 0.0), "HC": (0.0, 0.0, 0.0, 1.0)}
LAYERS = [[HA, HD], [HB, HC]]          # 2 layers x 2 heads
NAMES = [["HA", "HD"], ["HB", "HC"]]


def _profile_float(Wq, Wk):
    L = Wk.astype(np.float64).T @ Wq.astype(np.float64)
    S, T = (L + L.T) / 2, (L - L.T) / 2
    lam = np.linalg.eigvalsh(S)
    al = np.sort(lam[lam > 1e-12])[::-1]
    be = np.sort(-lam[lam < -1e-12])[::-1]
    m = max(len(al), len(be))
    al = np.pad(al, (0, m - len(al)))
    be = np.pad(be, (0, m - len(be)))
    fL = np.sum(L * L)
    return (np.sum(T * T) / fL, 2 * al @ be / fL, np.sum(np.maximum(al - be, 0) ** 2) / fL,
            np.sum(np.maximum(be - al, 0) ** 2) / fL)


def test_known_heads_have_the_stated_profiles():
    for row, names in zip(LAYERS, NAMES):
        for (q, k), nm in zip(row, names):
            assert np.allclose(_profile_float(q, k), KNOWN[nm], atol=1e-12), nm


def _write_bert(tmp_path, dtype=np.float32, config=True):
    from safetensors.numpy import save_file

    t = {}
    for l, row in enumerate(LAYERS):
        t[f"bert.encoder.layer.{l}.attention.self.query.weight"] = np.concatenate([q for q, _ in row]).astype(dtype)
        t[f"bert.encoder.layer.{l}.attention.self.key.weight"] = np.concatenate([k for _, k in row]).astype(dtype)
        t[f"bert.encoder.layer.{l}.attention.self.query.bias"] = np.zeros(2 * DH, dtype=dtype)
    d = tmp_path / "tiny-bert"
    d.mkdir()
    save_file(t, str(d / "model.safetensors"))
    if config:
        (d / "config.json").write_text(json.dumps({"num_attention_heads": 2, "model_type": "bert"}))
    return d / "model.safetensors"


def _check(model, expect_kv=None):
    heads = list(model.heads())
    assert len(heads) == 4
    for rec in heads:
        q, k = LAYERS[rec.layer][rec.head]
        if expect_kv is None:
            assert rec.kv_head == rec.head
        assert rec.W_Q.shape == (DH, N) and rec.W_K.shape == (DH, N)
        assert np.array_equal(rec.W_Q.astype(np.float64), q.astype(np.float64))
        assert np.array_equal(rec.W_K.astype(np.float64), k.astype(np.float64))
        assert len(rec.source["sha256"]) == 64
        assert {t["role"] for t in rec.source["tensors"]} == {"W_Q", "W_K"}


def test_bert_safetensors_recovers_heads(tmp_path):
    p = _write_bert(tmp_path)
    m = load_model(str(p))
    assert (m.arch, m.n_layers, m.n_heads, m.d_model, m.d_head) == ("bert", 2, 2, N, DH)
    assert m.name == "tiny-bert"
    _check(m)
    rec = list(m.heads([1]))[1]
    assert rec.source["tensors"][0]["rows"] == [2, 4]
    assert rec.source["tensors"][0]["name"] == "bert.encoder.layer.1.attention.self.query.weight"


def test_bert_float16_is_widened_exactly(tmp_path):
    m = load_model(str(_write_bert(tmp_path, np.float16)))
    _check(m)
    assert next(m.heads()).W_Q.dtype == np.float32


def test_bert_without_config_needs_n_heads(tmp_path):
    p = _write_bert(tmp_path, config=False)
    with pytest.raises(QKInputError, match="n_heads"):
        load_model(str(p))
    _check(load_model(str(p), n_heads=2))


def test_bfloat16_raw_file(tmp_path):
    """A hand-written BF16 safetensors file: bf16 = top half of a float32."""
    vals = {}
    for l, row in enumerate(LAYERS):
        vals[f"encoder.layer.{l}.attention.self.query.weight"] = np.concatenate([q for q, _ in row])
        vals[f"encoder.layer.{l}.attention.self.key.weight"] = np.concatenate([k for _, k in row])
    header, blobs, off = {}, [], 0
    for name, a in vals.items():
        raw = (a.astype(np.float32).view(np.uint32) >> 16).astype("<u2").tobytes()
        header[name] = {"dtype": "BF16", "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    p = tmp_path / "bf16.safetensors"
    p.write_bytes(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    _check(load_model(str(p), n_heads=2))


def test_gpt2_conv1d_layout(tmp_path):
    from safetensors.numpy import save_file

    t = {}
    for l, row in enumerate(LAYERS):
        Wq = np.concatenate([q for q, _ in row])       # [d, N] with d = N/... here 4 x 8
        Wk = np.concatenate([k for _, k in row])
        # GPT-2 needs d = N: pad the heads to 4 heads of size 2 (heads 2, 3 zero)
        Wq = np.concatenate([Wq, np.zeros((N - Wq.shape[0], N), np.float32)])
        Wk = np.concatenate([Wk, np.zeros((N - Wk.shape[0], N), np.float32)])
        Wv = np.ones((N, N), np.float32)
        # Conv1D [in, 3·out]; C order (safetensors.numpy writes raw memory)
        t[f"h.{l}.attn.c_attn.weight"] = np.ascontiguousarray(np.concatenate([Wq.T, Wk.T, Wv.T], axis=1))
        t[f"h.{l}.attn.c_attn.bias"] = np.zeros(3 * N, np.float32)
    p = tmp_path / "gpt2.safetensors"
    save_file(t, str(p))
    (tmp_path / "config.json").write_text(json.dumps({"n_head": 4}))
    m = load_model(str(p))
    assert (m.arch, m.n_heads, m.d_head, m.d_model) == ("gpt2", 4, 2, N)
    heads = list(m.heads())
    for rec in heads:
        if rec.head < 2:
            q, k = LAYERS[rec.layer][rec.head]
            assert np.array_equal(rec.W_Q, q) and np.array_equal(rec.W_K, k)
        else:
            assert not rec.W_Q.any()
    t0 = heads[1].source["tensors"]
    assert t0[0]["cols"] == [2, 4] and t0[1]["cols"] == [N + 2, N + 4] and t0[0]["transform"] == "transpose"


def _gqa_weights():
    """4 query heads sharing 2 KV heads (GQA): KV head 0 = HA's keys, 1 = HD's keys."""
    q = [HA[0], np.stack([e(2), e(3)]), HD[0], -HD[0]]
    k = [HA[1], HD[1]]
    return np.concatenate(q), np.concatenate(k), q, k


def test_llama_gqa_safetensors(tmp_path):
    from safetensors.numpy import save_file

    Wq, Wk, q, k = _gqa_weights()
    save_file({"model.layers.0.self_attn.q_proj.weight": Wq, "model.layers.0.self_attn.k_proj.weight": Wk,
               "model.layers.0.self_attn.v_proj.weight": Wk}, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps({"num_attention_heads": 4, "num_key_value_heads": 2,
                                                      "rope_theta": 10000.0}))
    m = load_model(str(tmp_path))
    assert (m.arch, m.n_heads, m.n_kv_heads, m.d_head) == ("llama", 4, 2, 2)
    heads = list(m.heads())
    assert [h.kv_head for h in heads] == [0, 0, 1, 1]
    for h in heads:
        assert np.array_equal(h.W_Q, q[h.head]) and np.array_equal(h.W_K, k[h.head // 2])
    assert heads[3].source["tensors"][1]["rows"] == [2, 4]


def test_kv_head_rule():
    assert [kv_head_of(i, 9, 3) for i in range(9)] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    with pytest.raises(QKInputError):
        kv_head_of(0, 9, 2)


def test_rope_permutation_roundtrip_and_L_invariance():
    rng = np.random.default_rng(0)
    # small integers, so every float64 product below is exact whatever the order
    Wq = rng.integers(-9, 10, (3 * 4, 6)).astype(np.float32)
    Wk = rng.integers(-9, 10, (3 * 4, 6)).astype(np.float32)
    P = permute_rope(Wq, 3)
    assert np.array_equal(unpermute_rope(P, 3), Wq)
    # within a head of 4 rows, HF rows (0,1,2,3) = (half0 i0, half0 i1, half1 i0, half1 i1)
    # go to GGUF rows (i0 half0, i0 half1, i1 half0, i1 half1)
    assert np.array_equal(P[:4], Wq[[0, 2, 1, 3]])
    Pk = permute_rope(Wk, 3)
    for h in range(3):
        sl = slice(4 * h, 4 * h + 4)
        L = Wk[sl].astype(np.float64).T @ Wq[sl].astype(np.float64)
        Lp = Pk[sl].astype(np.float64).T @ P[sl].astype(np.float64)
        assert np.array_equal(L, Lp)  # exact: the same row permutation on both factors


def _write_gguf(path, Wq, Wk, n_head, n_kv, qtype=None, arch="llama"):
    import gguf

    w = gguf.GGUFWriter(str(path), arch)
    w.add_block_count(1)
    w.add_embedding_length(Wq.shape[1])
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_rope_freq_base(10000.0)
    w.add_rope_dimension_count(Wq.shape[0] // n_head)
    w.add_name("tiny-llama")
    for name, W in (("blk.0.attn_q.weight", Wq), ("blk.0.attn_k.weight", Wk)):
        if qtype is None:
            w.add_tensor(name, W.astype(np.float32))
        else:
            qd = gguf.quants.quantize(W.astype(np.float32), qtype)
            w.add_tensor(name, qd, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def test_gguf_llama_unpermutes_rope_rows(tmp_path):
    Wq, Wk, q, k = _gqa_weights()
    p = tmp_path / "tiny.gguf"
    # llama.cpp's converter stores Q permuted with n_head and K with n_head_kv
    _write_gguf(p, permute_rope(Wq, 4), permute_rope(Wk, 2), 4, 2)
    m = load_model(str(p))
    assert (m.arch, m.n_heads, m.n_kv_heads, m.d_model, m.d_head, m.name) == ("gguf:llama", 4, 2, N, 2, "tiny-llama")
    assert m.meta["rope"]["rope.freq_base"] == 10000.0
    heads = list(m.heads())
    assert [h.kv_head for h in heads] == [0, 0, 1, 1]
    for h in heads:
        assert np.array_equal(h.W_Q, q[h.head]) and np.array_equal(h.W_K, k[h.head // 2])
    # without undoing the permutation the rows differ but every L = W_Kᵀ W_Q is identical
    from qkverify.models import load_gguf

    raw = list(load_gguf(p, undo_rope_permutation=False).heads())
    for a, b in zip(heads, raw):
        La = a.W_K.astype(np.float64).T @ a.W_Q.astype(np.float64)
        Lb = b.W_K.astype(np.float64).T @ b.W_Q.astype(np.float64)
        assert np.array_equal(La, Lb)


def test_gguf_q8_0_dequantisation_is_exact(tmp_path):
    import gguf

    rng = np.random.default_rng(1)
    Wq = rng.standard_normal((4, 32)).astype(np.float32)
    Wk = rng.standard_normal((4, 32)).astype(np.float32)
    p = tmp_path / "q8.gguf"
    _write_gguf(p, Wq, Wk, 2, 2, gguf.GGMLQuantizationType.Q8_0)
    m = load_model(str(p))
    heads = list(m.heads())
    assert heads[0].source["tensors"][0]["ggml_type"] == "Q8_0"
    # the dequantised values are d·q with d an fp16 scale: close to the originals
    back = unpermute_rope(gguf.quants.dequantize(gguf.quants.quantize(permute_rope(Wq, 2), gguf.GGMLQuantizationType.Q8_0),
                                                 gguf.GGMLQuantizationType.Q8_0), 2)
    assert np.array_equal(np.concatenate([heads[0].W_Q, heads[1].W_Q]), unpermute_rope(
        gguf.quants.dequantize(gguf.quants.quantize(Wq, gguf.GGMLQuantizationType.Q8_0), gguf.GGMLQuantizationType.Q8_0), 2))
    assert np.max(np.abs(back - Wq)) < 0.05


def test_npz_stacked_and_per_block(tmp_path):
    WQ = np.stack([np.stack([q.T for q, _ in row]) for row in LAYERS])   # [L, H, N, dh]
    WK = np.stack([np.stack([k.T for _, k in row]) for row in LAYERS])
    p = tmp_path / "tl.npz"
    np.savez(p, W_Q=WQ, W_K=WK)
    m = load_model(str(p))
    assert (m.arch, m.n_layers, m.n_heads, m.d_model, m.d_head) == ("transformerlens", 2, 2, N, DH)
    _check(m)
    p2 = tmp_path / "tl_blocks.npz"
    np.savez(p2, **{f"blocks.{l}.attn.W_Q": WQ[l] for l in range(2)}, **{f"blocks.{l}.attn.W_K": WK[l] for l in range(2)})
    _check(load_model(str(p2)))
    # grouped-query: one KV head per layer
    p3 = tmp_path / "tl_gqa.npz"
    np.savez(p3, W_Q=WQ, W_K=WK[:, :1])
    heads = list(load_model(str(p3)).heads())
    assert [h.kv_head for h in heads] == [0, 0, 0, 0]
    assert np.array_equal(heads[1].W_K, LAYERS[0][0][1])


def test_unknown_layouts_name_tensors(tmp_path):
    from safetensors.numpy import save_file

    p = tmp_path / "odd.safetensors"
    save_file({"foo.weight": np.zeros((2, 2), np.float32), "bar.bias": np.zeros(2, np.float32)}, str(p))
    with pytest.raises(QKInputError, match="unrecognised tensor layout.*foo.weight"):
        load_model(str(p))
    q = tmp_path / "odd.npz"
    np.savez(q, X=np.zeros(3))
    with pytest.raises(QKInputError, match="unrecognised .npz layout.*X"):
        load_model(str(q))
    with pytest.raises(QKInputError, match="no such file"):
        load_model(str(tmp_path / "missing.safetensors"))
    bad = tmp_path / "junk.safetensors"
    bad.write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00notjs")
    with pytest.raises(QKInputError, match="not a safetensors file"):
        load_model(str(bad))


def test_cli_unknown_layout_exits_2(tmp_path, capsys):
    from safetensors.numpy import save_file

    from qkverify.cli import main

    p = tmp_path / "odd.safetensors"
    save_file({"foo.weight": np.zeros((2, 2), np.float32)}, str(p))
    assert main(["heads", str(p), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "foo.weight" in err and len(err.strip().splitlines()) == 1


def test_nan_weights_rejected(tmp_path):
    from safetensors.numpy import save_file

    t = {"encoder.layer.0.attention.self.query.weight": np.full((4, 8), np.nan, np.float32),
         "encoder.layer.0.attention.self.key.weight": np.zeros((4, 8), np.float32)}
    p = tmp_path / "nan.safetensors"
    save_file(t, str(p))
    m = load_model(str(p), n_heads=2)
    with pytest.raises(QKInputError, match="NaN"):
        list(m.heads())


def test_parse_layers():
    assert parse_layers("0,2,4-5") == [0, 2, 4, 5]
    assert parse_layers(None) is None
    with pytest.raises(QKInputError):
        parse_layers("3-1")
    with pytest.raises(QKInputError):
        parse_layers("x")


def test_default_model_metadata():
    m = load_model(None)
    assert (m.name, m.arch, m.n_layers, m.n_heads, m.d_model, m.d_head) == ("all-MiniLM-L6-v2", "bert", 6, 12, 384, 32)
    h = next(m.heads([5]))
    assert h.W_Q.dtype == np.float32 and h.W_Q.shape == (32, 384)
    assert h.source["tensors"][1]["name"] == "encoder.layer.5.attention.self.key.weight"


def test_smollm2_metadata():
    m = load_model("smollm2")
    assert (m.arch, m.n_layers, m.n_heads, m.n_kv_heads, m.d_model, m.d_head) == ("gguf:llama", 30, 9, 3, 576, 64)
    heads = list(m.heads([0]))
    assert [h.kv_head for h in heads] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert heads[4].source["tensors"][0]["ggml_type"] == "Q4_1"


# ---------------------------------------------------------------------------
# memory: weights are streamed one layer at a time (issue 12, item 4)

MEM_N, MEM_H, MEM_LAYERS = 2048, 16, 8          # d_model, heads, layers
MEM_LAYER_QK = 2 * MEM_N * MEM_N * 4             # one layer's q_proj + k_proj bytes (32 MiB)
MEM_CONSTANT = 64 << 20                          # interpreter noise, hashing buffers, small arrays
#: peak RSS above the interpreter's (after imports) may be at most this: the
#: layer's q/k pages being read + the heads' copies + one spare layer, plus a constant
MEM_BOUND = 3 * MEM_LAYER_QK + MEM_CONSTANT      # 160 MiB; the checkpoint is 512 MiB, its q/k 256 MiB


def _write_streamed_safetensors(path, tensors):
    """Write a safetensors file tensor by tensor (name -> (shape, seed)) so the
    test itself never holds the model: random float32 data, generated per tensor."""
    header, off = {}, 0
    for name, (shape, _) in tensors.items():
        n = int(np.prod(shape)) * 4
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [off, off + n]}
        off += n
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", len(h)) + h)
        for name, (shape, seed) in tensors.items():
            fh.write(np.random.default_rng(seed).standard_normal(shape, dtype=np.float32).tobytes())


_MEM_SCRIPT = r"""
import json, resource, sys
import numpy as np
from qkverify.models import load_model

def status(key):
    # VmRSS (resident now) and VmHWM (its high-water mark) of this process's own address space.
    # ru_maxrss is not used for the peak: Linux carries the pre-exec image's high-water mark
    # (the forking parent, here pytest) into the child's ru_maxrss, so it reports the parent's size.
    try:
        with open("/proc/self/status") as fh:
            return next(int(l.split()[1]) * 1024 for l in fh if l.startswith(key + ":"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

base = status("VmRSS")
m = load_model(sys.argv[1])
n, s = 0, 0.0
for rec in m.heads():
    n += 1
    s += float(rec.W_Q[0, 0]) + float(rec.W_K[-1, -1])   # the arrays are really there
peak = status("VmHWM")
print(json.dumps({"base": base, "peak": peak, "heads": n, "layers": m.n_layers}))
"""


def test_peak_rss_does_not_grow_with_layers(tmp_path):
    """A 512 MiB sharded Llama-style checkpoint (8 layers, d_model 2048, q/k/v/o
    16 MiB each) is read head by head in a fresh process; its peak RSS above
    the interpreter's stays below 3 × one layer's q/k bytes + 64 MiB = 160 MiB,
    less than the q/k weights of all layers together (256 MiB).  Measured:
    about 66 MiB (one layer's q/k pages while mapped + the heads' copies);
    a loader keeping a whole-file map reaches about 325 MiB."""
    import subprocess
    import sys

    d = tmp_path / "big"
    d.mkdir()
    wm = {}
    per_shard = MEM_LAYERS // 2
    for s in range(2):
        fn = f"model-{s + 1:05d}-of-00002.safetensors"
        ts = {f"model.layers.{l}.self_attn.{r}_proj.weight": ((MEM_N, MEM_N), 100 * l + i)
              for l in range(s * per_shard, (s + 1) * per_shard) for i, r in enumerate("qkvo")}
        _write_streamed_safetensors(d / fn, ts)
        wm.update({t: fn for t in ts})
    (d / "model.safetensors.index.json").write_text(json.dumps({"weight_map": wm}))
    (d / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": MEM_N, "num_attention_heads": MEM_H,
                                               "num_key_value_heads": MEM_H, "num_hidden_layers": MEM_LAYERS}))
    total = sum(f.stat().st_size for f in d.glob("*.safetensors"))
    assert total > 500 << 20
    res = subprocess.run([sys.executable, "-c", _MEM_SCRIPT, str(d)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    r = json.loads(res.stdout)
    assert (r["heads"], r["layers"]) == (MEM_H * MEM_LAYERS, MEM_LAYERS)
    grown = r["peak"] - r["base"]
    print(f"peak RSS above the interpreter: {grown / 2**20:.1f} MiB (bound {MEM_BOUND / 2**20:.0f} MiB; "
          f"checkpoint {total / 2**20:.0f} MiB, q/k of all layers {MEM_LAYERS * MEM_LAYER_QK / 2**20:.0f} MiB)")
    assert grown < MEM_BOUND


def test_npz_biases_and_memory_mapped_members(tmp_path):
    from qkverify.models.npz_model import _member

    WQ = np.stack([np.stack([q.T for q, _ in row]) for row in LAYERS])   # [L, H, N, dh]
    WK = np.stack([np.stack([k.T for _, k in row]) for row in LAYERS])
    bQ = np.arange(2 * 2 * DH, dtype=np.float32).reshape(2, 2, DH) / 4
    p = tmp_path / "tlb.npz"
    np.savez(p, W_Q=WQ, W_K=WK, b_Q=bQ)
    assert isinstance(_member(p, np.load(p), "W_Q"), np.memmap)      # stored uncompressed: mapped, not read
    heads = list(load_model(str(p)).heads())
    _check(load_model(str(p)))
    assert np.array_equal(heads[3].b_Q, bQ[1, 1]) and heads[3].b_K is None
    assert heads[3].score == "bilinear_part_of_biaffine" and heads[3].positional["kind"] == "unknown"
    # u = W_Kᵀ b_Q by hand for layer 1 head 1 (HC: W_K = −2·[e2; e5], b_Q = (6/4, 7/4)): u = −3 e2 − 7/2 e5
    bp = heads[3].biaffine()
    assert bp.lin_key.text() == ["0", "0", "-3", "0", "0", "-7/2", "0", "0"] and bp.const == 0
    q = tmp_path / "tlc.npz"
    np.savez_compressed(q, W_Q=WQ, W_K=WK)
    assert not isinstance(_member(q, np.load(q), "W_Q"), np.memmap)
    _check(load_model(str(q)))


def test_gguf_positional_and_refusals(tmp_path, capsys):
    from qkverify.cli import main
    from qkverify.models import load_gguf

    Wq, Wk, q, k = _gqa_weights()
    p = tmp_path / "tiny.gguf"
    _write_gguf(p, permute_rope(Wq, 4), permute_rope(Wk, 2), 4, 2)
    rec = next(load_model(str(p)).heads())
    assert (rec.positional["pairing"], rec.positional["base"], rec.positional["rotary_dim"]) == ("half_split", 10000, 2)
    assert next(load_gguf(p, undo_rope_permutation=False).heads()).positional["pairing"] == "interleaved"
    p2 = tmp_path / "phi.gguf"
    _write_gguf(p2, Wq, Wk, 4, 2, arch="phi3")
    assert main(["heads", str(p2), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "'phi3'" in err and len(err.strip().splitlines()) == 1
