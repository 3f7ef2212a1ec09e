"""Weights at the edges of the float formats (issue 18, hostile inputs): float32 values near
3.4e38 (the largest finite float32 among them) and float64 values spanning about 560 binary
orders are read exactly by producer and kernel (every entry is the exact dyadic it stores) and
the head certificates verify valid from where ``heads`` ran, with no options."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from qkverify.cli import main
from qkverify.kernel import weights as KW
from qkverify.models import load_model


def _model(d: Path, q: np.ndarray, k: np.ndarray) -> Path:
    from safetensors.numpy import save_file

    d.mkdir()
    save_file({"model.layers.0.self_attn.q_proj.weight": q, "model.layers.0.self_attn.k_proj.weight": k},
              str(d / "model.safetensors"))
    (d / "config.json").write_text(json.dumps({"model_type": "llama", "num_attention_heads": 2,
                                               "num_key_value_heads": 2, "hidden_size": q.shape[1]}))
    return d


def _cases():
    rng = np.random.default_rng(1)
    top = float(np.finfo(np.float32).max)

    def near_max():
        return np.clip(rng.standard_normal((4, 6)) * 2e38, -top, top).astype(np.float32)
    big = near_max()
    big[0, 0] = np.finfo(np.float32).max
    big[1, 1] = -np.finfo(np.float32).max
    span = rng.standard_normal((4, 6)) * 2.0 ** rng.integers(-280, 281, (4, 6)).astype(np.float64)
    span[0, 0], span[1, 1] = 2.0 ** 280, 2.0 ** -280 * 3
    return {"float32 near 3.4e38": (big, near_max()),
            "float64 over 560 binary orders": (span, rng.standard_normal((4, 6)) * 2.0 ** rng.integers(-280, 281, (4, 6)))}


@pytest.mark.parametrize("case", list(_cases()))
def test_extreme_floats_read_exactly_and_certified(tmp_path, monkeypatch, capsys, case):
    q, k = _cases()[case]
    monkeypatch.chdir(tmp_path)
    _model(tmp_path / "m", q, k)
    heads = list(load_model("m").heads())
    for h in heads:  # the producer's matrices are the stored numbers, not rescaled or rounded
        r = slice(2 * h.head, 2 * h.head + 2)
        assert np.array_equal(h.W_Q, q[r]) and np.array_equal(h.W_K, k[r]) and h.W_Q.dtype.itemsize >= q.itemsize
    # the kernel's [W_K; W_Q] = Z·2^e of head 1 is the same rationals
    ts = [{"role": "W_Q", "name": "model.layers.0.self_attn.q_proj.weight", "file": "model.safetensors",
           "sha256": "", "rows": [2, 4]},
          {"role": "W_K", "name": "model.layers.0.self_attn.k_proj.weight", "file": "model.safetensors",
           "sha256": "", "rows": [2, 4]}]
    Z, e = KW.head_Z(ts, 2, 6, lambda f, sha: tmp_path / "m" / "model.safetensors")
    want = [Fraction(float(x)) for x in np.concatenate([k[2:4], q[2:4]]).reshape(-1)]
    assert [Fraction(int(Z[i, j])) * Fraction(2) ** e for i in range(4) for j in range(6)] == want
    assert main(["heads", "m", "--out", "out", "--no-plot", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["verify", "out/L00H00.json", "out/L00H01.json"]) == 0
    assert "2 valid" in capsys.readouterr().out
    # the profile certificates are never invalid; on the 560-order span the kernel may find the
    # cells too coarse to order two enclosures (undecided: heads/cells + kernel, on the board)
    assert main(["verify", "out/L00H00.profile.json", "out/L00H01.profile.json"]) in (0, 3)
