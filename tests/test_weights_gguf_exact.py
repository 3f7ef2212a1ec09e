"""GGUF weights read exactly by producer and kernel alike (issue 18, false rejects): quantised
blocks are the rationals the format defines (Q4_1: d·q + m with f16 d and m exactly), not the
float32 values gguf's dequantiser (or llama.cpp) computes, which round.

The tiny Q4_1 model: one head, d_head 2, d_model 32, one block per row.
  W_Q rows: d = 1, m = 2⁻²⁴ (the smallest f16), q = e₀ / e₁  ->  W_Q = [e₀; e₁] + ε𝟙ᵀ, ε = 2⁻²⁴;
  W_K rows: d = 1, m = 0, the same q              ->  W_K = [e₀; e₁].
In float32, 1 + 2⁻²⁴ rounds to 1, so the float pipeline sees W_Q = W_K and a symmetric L (a = 0).
Exactly, with u = e₀ + e₁: L = W_Kᵀ W_Q = E + ε u𝟙ᵀ (E = e₀e₀ᵀ + e₁e₁ᵀ), T = ½(L − Lᵀ) =
(ε/2)(u𝟙ᵀ − 𝟙uᵀ), ‖T‖² = (ε²/4)(2·‖u‖²·32 − 2(u·𝟙)²) = (ε²/4)(128 − 8) = 30ε²,
‖L‖² = ‖E‖² + 2ε⟨E, u𝟙ᵀ⟩ + ε²‖u‖²·32 = 2 + 4ε + 64ε², so
a = ‖T‖²/‖L‖² = 15ε²/(1 + 2ε + 32ε²) = 15/(2⁴⁸ + 2²⁵ + 32)."""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gguf_craft as G  # noqa: E402

from qkverify.cli import main  # noqa: E402
from qkverify.kernel import gguf as KG  # noqa: E402
from qkverify.models import load_model  # noqa: E402

EPS = Fraction(1, 2**24)
A_EXACT = Fraction(15, 2**48 + 2**25 + 32)


def write_tiny_q4_1(path: Path) -> Path:
    e = [[1 if j == i else 0 for j in range(32)] for i in range(2)]
    wq = G.q4_1_block(1.0, b"\x01\x00", e[0]) + G.q4_1_block(1.0, b"\x01\x00", e[1])  # m = 2^-24
    wk = G.q4_1_block(1.0, 0.0, e[0]) + G.q4_1_block(1.0, 0.0, e[1])
    tensors = [("blk.0.attn_q.weight", [32, 2], G.Q4_1, 0), ("blk.0.attn_k.weight", [32, 2], G.Q4_1, 64)]
    path.write_bytes(G.gguf_file(G.llama_kvs(1, 1, 32, 2), tensors, G.pad(wq) + G.pad(wk)))
    return path


def _expected():
    WQ = [[(1 if j == i else 0) + EPS for j in range(32)] for i in range(2)]
    WK = [[Fraction(1 if j == i else 0) for j in range(32)] for i in range(2)]
    return WQ, WK


def test_q4_1_values_are_d_q_plus_m_exactly(tmp_path):
    import gguf

    p = write_tiny_q4_1(tmp_path / "tiny.gguf")
    WQ, WK = _expected()
    (h,) = list(load_model(str(p)).heads())
    assert [[Fraction(float(x)) for x in r] for r in h.W_Q] == WQ
    assert [[Fraction(float(x)) for x in r] for r in h.W_K] == WK
    # gguf's float32 dequantisation rounds 1 + 2^-24 to 1: the two would disagree on the weights
    t = next(t for t in gguf.GGUFReader(str(p)).tensors if t.name == "blk.0.attn_q.weight")
    assert float(gguf.quants.dequantize(t.data, t.tensor_type).reshape(2, 32)[0, 0]) == 1.0
    # the kernel's own reader gives the same rationals
    vals, C = KG.rows(p, "blk.0.attn_q.weight", 0, 2)
    assert C == 32 and [Fraction(m) * Fraction(2) ** e for m, e in vals] == WQ[0] + WQ[1]


def test_q4_1_head_certificates_state_the_exact_profile(tmp_path, capsys):
    p = write_tiny_q4_1(tmp_path / "tiny.gguf")
    out = tmp_path / "out"
    assert main(["heads", str(p), "--out", str(out), "--no-plot", "--quiet"]) == 0
    prof = json.loads((out / "L00H00.profile.json").read_text())
    (a,) = [d for d in prof["declarations"] if d["check"] == "profileA"]
    assert Fraction(a["value"]["exact"]) == A_EXACT  # float32 weights would give a = 0
    capsys.readouterr()
    assert main(["verify", str(out / "L00H00.json"), "--weights", str(tmp_path)]) == 0


def test_q4_1_profile_certificate_of_the_tiny_model_is_valid(tmp_path, capsys):
    p = write_tiny_q4_1(tmp_path / "tiny.gguf")
    out = tmp_path / "out"
    assert main(["heads", str(p), "--out", str(out), "--no-plot", "--quiet"]) == 0
    assert main(["verify", str(out / "L00H00.profile.json"), "--weights", str(tmp_path)]) == 0


def write_generic_q4_1(path: Path) -> Path:
    """Two heads (d_head 2, d_model 32), every block d = 1 + 2⁻¹⁰, m = 2⁻¹²(1 + 2⁻¹⁰) and
    small q: d·q + m needs up to 26 bits, so float32 rounds most of the values."""
    d, m = 1 + 2**-10, 2**-12 * (1 + 2**-10)

    def rows(k: int) -> bytes:
        return b"".join(G.q4_1_block(d, m, [(3 * (i + k) + 5 * j + (i * j) % 7) % 16 for j in range(32)])
                        for i in range(4))
    wq, wk = rows(0), rows(9)
    tensors = [("blk.0.attn_q.weight", [32, 4], G.Q4_1, 0), ("blk.0.attn_k.weight", [32, 4], G.Q4_1, len(G.pad(wq)))]
    path.write_bytes(G.gguf_file(G.llama_kvs(2, 2, 32, 2, "generic"), tensors, G.pad(wq) + G.pad(wk)))
    return path


def test_generic_q4_1_heads_verify_valid_where_float32_rounds(tmp_path, capsys):
    import gguf

    p = write_generic_q4_1(tmp_path / "g.gguf")
    # entry (row 0, column 15) of attn_q: q = (0 + 75 + 0) % 16 = 11, so d·q + m =
    # 11·1025/1024 + 1025/2^22 = (11·1025·4096 + 1025)/2^22 = 46183425/2^22 (26 bits);
    # float32 keeps 24 bits: the nearest multiple of 4, 46183424/2^22
    t = next(t for t in gguf.GGUFReader(str(p)).tensors if t.name == "blk.0.attn_q.weight")
    assert Fraction(float(gguf.quants.dequantize(t.data, t.tensor_type).reshape(4, 32)[0, 15])) == Fraction(46183424, 2**22)
    vals, _ = KG.rows(p, "blk.0.attn_q.weight", 0, 1)
    assert Fraction(vals[15][0]) * Fraction(2) ** vals[15][1] == Fraction(46183425, 2**22)
    h0 = next(load_model(str(p)).heads())  # llama rows: stored row 0 is HF row 0 of head 0
    assert Fraction(float(h0.W_Q[0, 15])) == Fraction(46183425, 2**22)
    out = tmp_path / "out"
    assert main(["heads", str(p), "--out", str(out), "--no-plot", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["verify", str(out / "*.json"), "--weights", str(tmp_path)]) == 0
    assert "4 valid" in capsys.readouterr().out


def test_float32_scales_far_apart_still_exact(tmp_path):
    """d = 2^15·(1 + 2^-10) (a large f16) and m = 2^-24: d·q + m needs 15 + 39 bits -- more than
    float32 has, within float64; producer and kernel both give the rational."""
    d = 32768.0 * (1 + 2**-10)
    q = list(range(16)) + list(range(16))
    blk = G.q4_1_block(d, b"\x01\x00", q)
    p = tmp_path / "far.gguf"
    tensors = [("blk.0.attn_q.weight", [32, 2], G.Q4_1, 0), ("blk.0.attn_k.weight", [32, 2], G.Q4_1, 64)]
    p.write_bytes(G.gguf_file(G.llama_kvs(1, 1, 32, 2), tensors, G.pad(blk + blk) + G.pad(blk + blk)))
    want = [Fraction(d) * x + EPS for x in q]
    (h,) = list(load_model(str(p)).heads())
    assert [Fraction(float(x)) for x in h.W_Q[0]] == want
    vals, _ = KG.rows(p, "blk.0.attn_q.weight", 0, 1)
    assert [Fraction(m) * Fraction(2) ** e for m, e in vals] == want


@pytest.mark.parametrize("qtype", ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"])
def test_block_decoders_agree_with_gguf_where_float32_is_exact(qtype):
    """Random blocks whose f16 scales are powers of two close together (so gguf's float32
    arithmetic is exact): gguf's reference dequantiser, the producer's exact decoder and the
    kernel's integer decoder give the same numbers -- the layouts are read the same way."""
    import gguf

    from qkverify.models.gguf_model import exact_dequantize

    T = gguf.GGMLQuantizationType[qtype]
    size = gguf.GGML_QUANT_SIZES[T][1]
    scales = {"Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q8_0": [0], "Q2_K": [80, 82],
              "Q3_K": [108], "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208]}[qtype]
    rng = np.random.default_rng(7)
    blocks = []
    for _ in range(12):
        b = bytearray(rng.integers(0, 256, size, dtype=np.uint8).tobytes())
        for o in scales:
            b[o:o + 2] = G.f16(float(rng.choice([-1, 1]) * 2.0 ** int(rng.integers(-3, 3))))
        blocks.append(bytes(b))
    raw = np.frombuffer(b"".join(blocks), np.uint8).reshape(len(blocks), size)
    ref = gguf.quants.dequantize(raw, T).reshape(-1).astype(np.float64)
    mine = exact_dequantize(raw, T)
    kern = [m * 2.0 ** e for blk in blocks for m, e in KG.BLOCKS[qtype](blk)]
    assert np.array_equal(mine, ref) and np.array_equal(np.array(kern), ref)


@pytest.mark.parametrize("qtype", ["Q4_1", "Q5_1", "Q2_K", "Q4_K", "Q5_K", "Q6_K", "Q3_K"])
def test_producer_and_kernel_agree_on_any_finite_scales(qtype):
    """Any finite f16 scales (subnormal to 65504, far apart): the producer's float64 values are
    exactly the kernel's integers (no rounding anywhere)."""
    import gguf

    from qkverify.models.gguf_model import exact_dequantize

    T = gguf.GGMLQuantizationType[qtype]
    size = gguf.GGML_QUANT_SIZES[T][1]
    scales = {"Q4_1": [0, 2], "Q5_1": [0, 2], "Q2_K": [80, 82], "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208],
              "Q3_K": [108]}[qtype]
    rng = np.random.default_rng(11)
    blocks = []
    for i in range(24):
        b = bytearray(rng.integers(0, 256, size, dtype=np.uint8).tobytes())
        for k, o in enumerate(scales):  # alternate the extremes: 65504 beside 2^-24
            v = [0x7BFF, 0x0001, 0x0400, 0xFBFF][(i + k) % 4] if i % 2 else int(rng.integers(0, 0x7C00))
            b[o:o + 2] = v.to_bytes(2, "little")
        blocks.append(bytes(b))
    raw = np.frombuffer(b"".join(blocks), np.uint8).reshape(len(blocks), size)
    mine = exact_dequantize(raw, T)
    kern = [Fraction(m) * Fraction(2) ** e for blk in blocks for m, e in KG.BLOCKS[qtype](blk)]
    assert [Fraction(float(x)) for x in mine] == kern


@pytest.mark.slow
def test_smollm2_gguf_head_certificates_verify_valid(tmp_path, capsys):
    """The shipped SmolLM2 GGUF (Q4_1): the producer's certificates of layer 0 are valid (they
    were all undecided: the kernel did not read GGUF)."""
    from qkverify.models.installed import default_weights_dirs  # noqa: F401  (installed-model lookup)

    out = tmp_path / "out"
    if main(["heads", "SmolLM2-135M-Instruct", "--layers", "0", "--out", str(out), "--no-plot", "--quiet"]) != 0:
        pytest.skip("SmolLM2 GGUF not installed")
    capsys.readouterr()
    assert main(["verify", str(out / "*.json")]) == 0
    assert "18 valid" in capsys.readouterr().out
