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
    """Definitions show their values, or say why they have none: on a real head ``rope MODEL``
    names IsRoPELike and why it is not evaluated (it printed nothing under its heading)."""
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
    # since issue 23 the definition is not evaluated on a real head (T_d has transcendental
    # entries): the section under the score function says so instead of staying empty
    section = out.split("the score function (the same for every reading of the rows):\n")[1].splitlines()
    assert section[0].strip().startswith("IsRoPELike (Definition 3)"), out
    assert "not evaluated on a real head" in section[0] and "transcendental" in section[1] + section[0], out


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


def _numbers_as_numbers(path, exact_columns=()):
    """Every cell of a CSV is empty, a decimal number, True/False, or text in a column that never
    holds a number; p/q only in the ``*_exact`` columns.  LF line endings."""
    import csv
    import re

    raw = path.read_bytes()
    assert b"\r" not in raw, f"{path}: CRLF line endings"
    rows = list(csv.DictReader(raw.decode("utf-8").splitlines()))
    num = re.compile(r"-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?")
    for col in rows[0]:
        vals = [r[col] for r in rows if r[col] != ""]
        nums = [v for v in vals if num.fullmatch(v)]
        if col.endswith("_exact"):
            assert all(re.fullmatch(r"-?\d+(/\d+)?", v) for v in vals), (col, vals[:3])
        elif nums:
            assert len(nums) == len(vals), (path.name, col, [v for v in vals if not num.fullmatch(v)][:3])
    return rows


def test_regimes_csv_writes_complex_eigenvalues_as_numbers(tmp_path):
    """regimes.csv's largest_eigenvalue mixed floats with "0.28+0.039i" strings: the real and
    imaginary parts are two number columns."""
    import cmath

    import numpy as np

    from qkverify.cli import main

    m = bert(tmp_path / "m", n_layers=1, values=True)
    assert main(["regimes", str(m), "--out", str(tmp_path / "o"), "--no-cert", "--quiet"]) in (0, 3)
    rows = _numbers_as_numbers(tmp_path / "o" / "regimes.csv")
    from safetensors.numpy import load_file

    t = load_file(str(m / "model.safetensors"))
    for r in rows:  # independently: the eigenvalue of largest modulus of W_V[m, :]·W_O[:, m] (float64)
        h = int(r["head"])
        Wv = t["encoder.layer.0.attention.self.value.weight"].astype(np.float64)[4 * h:4 * h + 4]
        Wo = t["encoder.layer.0.attention.output.dense.weight"].astype(np.float64)[:, 4 * h:4 * h + 4]
        ev = max(np.linalg.eigvals(Wv @ Wo), key=lambda z: (abs(z), z.imag))
        got = complex(float(r["largest_eigenvalue_re"]), float(r["largest_eigenvalue_im"]))
        assert abs(got - ev) < 1e-9 * abs(ev) or abs(got - ev.conjugate()) < 1e-9 * abs(ev), (got, ev)
        assert abs(abs(got) - abs(ev)) < 1e-9 and cmath.isfinite(got)


def test_accumulation_table_csv_writes_rho_as_a_number(tmp_path):
    """table.csv's rho column held "1/2" beside 1 and 2: a float column and rho_exact."""
    from qkverify.cli import main

    code = main(["accumulation", "--max-n", "20", "--law", "uniform", "--out", str(tmp_path / "a"), "--no-cert",
                 "--quiet"])
    assert code in (0, 1)
    rows = _numbers_as_numbers(tmp_path / "a" / "table.csv")
    assert {(r["rho"], r["rho_exact"]) for r in rows} == {("0.5", "1/2"), ("1.0", "1"), ("2.0", "2")}


def test_verify_lines_fit_100_columns_with_long_paths(tmp_path, capsys):
    """``verify certificates/probes`` printed 'PATH: not a certificate (skipped)' lines of up to 140
    columns (the path alone is ~100): a line that does not fit puts the status on the next line,
    and a path holding ' (' is not cut there."""
    import json
    import shutil

    from qkverify.cli import main

    root = Path(__file__).resolve().parents[1]
    d = tmp_path / "a folder (copy)" / ("x" * 60)
    d.mkdir(parents=True)
    src = sorted((root / "certificates" / "probes").glob("*.json"))
    cert = next(p for p in src if json.loads(p.read_text()).get("format", "").startswith("qkverify-certificate"))
    shutil.copy(cert, d / (cert.stem + "_" + "y" * 30 + ".json"))
    (d / ("z" * 40 + ".input.json")).write_text("{}")
    main(["verify", str(d)])
    out = capsys.readouterr().out
    lines = out.splitlines()
    # a line over 100 columns is only ever the path itself (it holds spaces here, so it cannot fit)
    assert all(len(x) <= 100 or x.rstrip(":").startswith(str(tmp_path)) and x.endswith(".json:")
               for x in lines), [x for x in lines if len(x) > 100]
    assert any(x.strip() == "not a certificate (skipped)" for x in lines), out
    assert any(x.strip().startswith(("valid", "undecided", "invalid")) for x in lines), out
    assert not any(x.startswith("copy)") or x.strip().startswith("(copy)") for x in lines), out
