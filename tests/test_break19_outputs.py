"""A fresh reviewer's checks that the outputs read alike and say what happened
(issue 19): the terminal within 100 columns, one vocabulary, what a summary says."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "adversarial"))

from test_cli_break19 import bert  # noqa: E402


def test_audit_reports_the_models_theorem_3_summary(tmp_path, monkeypatch):
    """``qkverify audit`` printed, as the default model's result, whichever wrapped line of the
    heads summary contained "Theorem 3" -- on all-MiniLM-L6-v2 the fragment "  and the
    certificates of 72 heads (Theorem 3 and Definition 6: …)"; it must be the model's
    Theorem 3 sentence, whole."""
    import qkverify.models
    from qkverify.commands import audit

    m = bert(tmp_path / "tiny", n_layers=1)
    monkeypatch.setattr(qkverify.models, "DEFAULT_MODEL", str(m))
    ok, msg = audit._model_audit(tmp_path / "out", False, 1)
    assert ok
    assert msg.startswith("tiny: 2 heads. Theorem 3 (signature (d_head, d_head, d_model − 2·d_head)) certified on "
                          "2 of 2 heads"), msg
    assert "\n" not in msg


def test_rope_on_a_real_head_shows_the_definitions_value(tmp_path, capsys):
    """Definitions show their values (``IsRoPELike = true``): ``rope FILE.json`` printed
    "(value: true)", ``rope MODEL`` only "computed [exact]"."""
    import json

    import numpy as np
    from safetensors.numpy import save_file

    from qkverify.cli import main

    rng = np.random.default_rng(7)
    H, KV, dh, N = 2, 1, 8, 16
    (tmp_path / "config.json").write_text(json.dumps(
        {"model_type": "llama", "hidden_size": N, "num_attention_heads": H, "num_key_value_heads": KV,
         "head_dim": dh, "num_hidden_layers": 1, "rope_theta": 10000.0}))
    save_file({"model.layers.0.self_attn.q_proj.weight": (rng.standard_normal((H * dh, N)) / 4).astype(np.float32),
               "model.layers.0.self_attn.k_proj.weight": (rng.standard_normal((KV * dh, N)) / 4).astype(np.float32)},
              str(tmp_path / "model.safetensors"))
    assert main(["rope", str(tmp_path), "--k", "3", "--no-cert"]) == 0
    out = capsys.readouterr().out
    line = [x for x in out.splitlines() if x.strip().startswith("IsRoPELike")]
    assert len(line) == 1 and "(value: true)" in line[0], out
