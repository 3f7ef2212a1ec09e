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
