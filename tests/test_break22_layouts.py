"""Break-it review of the checkpoint layouts (issue 21 item 2): config.json values that are not what
transformers' config classes hold (a layer count that is not an integer, RoPE numbers out of range)
get exit 2 and one line naming the key -- never an internal error, now or later when a command
reads the positional encoding (`qkverify rope` indexed past d_head with partial_rotary_factor = 7)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from qkverify.cli import main

BASE = {"model_type": "llama", "num_attention_heads": 2, "num_key_value_heads": 2, "hidden_size": 8,
        "num_hidden_layers": 2}


def _ckpt(path, cfg: dict, layers: int = 2, layout: str | None = None):
    from safetensors.numpy import save_file

    rng = np.random.default_rng(7)
    path.mkdir()
    save_file({f"model.layers.{l}.self_attn.{p}_proj.weight": rng.integers(-3, 4, size=(8, 8)).astype(np.float32)
               for l in range(layers) for p in "qk"}, str(path / "model.safetensors"))
    if cfg is not None:
        (path / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    return path


@pytest.mark.parametrize("change, names", [
    ({"num_hidden_layers": "two"}, "layer count"),           # was: internal error, ValueError
    ({"num_hidden_layers": [2]}, "layer count"),             # was: internal error, TypeError
    ({"num_hidden_layers": 2.5}, "layer count"),             # was accepted as 2
    ({"partial_rotary_factor": "half"}, "positional"),      # was: internal error, ValueError
    ({"partial_rotary_factor": 7}, "partial_rotary_factor"),  # rotary_dim 28 > d_head 4: rope crashed later
    ({"partial_rotary_factor": 0}, "partial_rotary_factor"),
    ({"rope_theta": "abc"}, "base"),
    ({"rope_theta": -1}, "base"),
    ({"rope_theta": 0}, "base"),
    ({"model_type": "gemma3_text", "sliding_window_pattern": "x"}, "positional"),  # was: internal error
])
def test_bad_config_values_exit_2_naming_them(tmp_path, capsys, change, names):
    p = _ckpt(tmp_path / "m", {**BASE, **change})
    rc = main(["heads", str(p), "--layers", "0", "--out", str(tmp_path / "o"), "--quiet", "--no-certificates",
               "--no-report", "--jobs", "1"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1 and "internal error" not in err and names in err, err


def test_t5_decoder_layer_count_must_be_an_integer(tmp_path, capsys):
    from safetensors.numpy import save_file

    rng = np.random.default_rng(1)
    p = tmp_path / "t5"
    p.mkdir()
    save_file({f"encoder.block.{l}.layer.0.SelfAttention.{r}.weight": rng.integers(-3, 4, size=(4, 4)).astype(np.float32)
               for l in range(2) for r in "qk"}, str(p / "model.safetensors"))
    cfg = {"model_type": "t5", "num_heads": 2, "d_kv": 2, "d_model": 4, "num_layers": "2"}
    (p / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    assert main(["heads", str(p), "--out", str(tmp_path / "o"), "--quiet", "--no-certificates", "--no-report"]) == 2
    assert "encoder layer count" in capsys.readouterr().err


@pytest.mark.parametrize("rope, names", [
    ('base = "x"', "base"),
    ("base = 10000\nrotary_dim = 99", "rotary_dim"),
    ("base = -5", "base"),
])
def test_layout_file_rope_numbers_are_checked(tmp_path, capsys, rope, names):
    p = _ckpt(tmp_path / "m", None)
    lay = tmp_path / "layout.toml"
    lay.write_text('n_heads = 2\nquery = "model.layers.{layer}.self_attn.q_proj.weight"\n'
                   'key = "model.layers.{layer}.self_attn.k_proj.weight"\n[positional]\nkind = "rope"\n' + rope + "\n")
    rc = main(["heads", str(p), "--layout", str(lay), "--layers", "0", "--out", str(tmp_path / "o"), "--quiet",
               "--no-certificates", "--no-report"])
    err = capsys.readouterr().err
    assert rc == 2 and names in err and len(err.strip().splitlines()) == 1, err


def test_sound_rope_configs_still_load(tmp_path):
    """Phi-2's partial rotary (0.4 of d_head 80 = 32 rows) and StableLM's default 0.25."""
    import qkverify

    p = _ckpt(tmp_path / "m", {**BASE, "model_type": "phi", "partial_rotary_factor": 0.5, "rope_theta": 10000.0})
    m = qkverify.load_model(str(p))
    d = m.head(0, 0).positional
    assert d["kind"] == "rope" and d["rotary_dim"] == 2 and d["partial_rotary_factor"] == "1/2"
