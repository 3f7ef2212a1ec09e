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


def test_regimes_writes_an_irrational_top_eigenvalue_in_the_one_notation(tmp_path, capsys):
    """V = [[1, 1], [1, 0]] has eigenvalues (1 ± √5)/2, the roots of x² − x − 1: the list of
    eigenvalues said root(x^2 - x - 1, [1, 2]) but λ₁ and the paranormal λ, exact, were printed as
    the enclosure [1.61803398874, 1.61803398875]."""
    import json

    from qkverify.cli import main

    f = tmp_path / "t.json"
    f.write_text(json.dumps({"Q": [[1, 0], [0, 1]], "K": [[1, 0], [0, 1]], "V": [[1, 1], [1, 0]]}))
    assert main(["regimes", str(f), "--no-cert"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "λ₁ = root(x^2 - x - 1, [1, 2]) ≈ 1.61803398874 [exact]" in out, out
    assert "paranormal: yes: λ = root(x^2 - x - 1, [1, 2])" in out, out
    assert main(["regimes", str(f), "--no-cert", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["top_eigenvalue"]["root"]["value"] == doc["paranormal"]["lambda_exact"] == "root(x^2 - x - 1, [1, 2])"
