"""Break-it review of `qkverify compare` (issue 22): hostile tables get exit 2 and one line naming
the problem; a certified face with a margin beyond the error model is contradicted by a table that
says otherwise; `--model` takes the options the model loader asks for (--pre-softcap, --layout).

The clean row is the first complete row of the authors' published survey table
(scripts/survey_results/head_statistics.csv, distilgpt2 layer 0 head 0)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from flint import fmpq

from qkverify.cli import main
from qkverify.compare.errormodel import ErrorModel
from qkverify.compare.model import BEYOND, CertifiedHead, judge_row

HEADER = ("model,layer,head,kv_head,dim,symmetric_energy,balance,pairing,rho,pairing_bound,pairing_gap,"
          "lobe_departure,n_pos,n_neg,n_zero,a,b,c,d,b_sym,c_sym,d_sym,trace_ratio,participation_ratio,"
          "stable_rank,leading_share")
ROW = ("distilgpt2,0,0,0,128,0.5208588461684999,1.0,0.8026870867649248,1.304116698045722,0.8149451562606859,"
       "0.012258069495761026,0.09852200758194606,64,64,0,0.47914115383149997,0.5005805686589435,"
       "0.00014645179423884288,0.020131825715317728,0.961067614270688,0.00028117367174650067,"
       "0.03865121205756578,1.044561827082072,52.843970798013714,30.48494462383903,0.03280307746460547")
COLS = HEADER.split(",")


def _with(**change) -> str:
    vals = ROW.split(",")
    for k, v in change.items():
        vals[COLS.index(k)] = v
    return ",".join(vals)


def _run(tmp_path, capsys, text: str) -> tuple[int, str]:
    p = tmp_path / "t.csv"
    p.write_text(text, encoding="utf-8")
    rc = main(["compare", str(p), "--out", str(tmp_path / "o"), "--no-report"])
    err = capsys.readouterr().err
    return rc, err


def test_the_published_row_is_clean(tmp_path, capsys):
    rc, err = _run(tmp_path, capsys, HEADER + "\n" + ROW + "\n")
    assert rc == 0 and err == ""


@pytest.mark.parametrize("change, names", [
    ({"dim": "1e300"}, "dim"),                    # was an OverflowError in the error model (exit 70)
    ({"dim": "99999999999"}, "dim"),
    ({"n_pos": "-64", "n_zero": "128"}, "n_pos"),  # a count is a natural number: malformed, not a theorem
    ({"layer": "-1"}, "layer"),
    ({"head": "-3"}, "head"),
    ({"a": ""}, "a"),                             # a required column left empty: nothing could be checked
    ({"c": "nan"}, "c"),
    ({"model": ""}, "model"),
    ({"dim": "1_28"}, "dim"),                     # Python's float() reads these; no table writer does
    ({"a": "0.479_141"}, "a"),
    ({"dim": "١٢٨"}, "dim"),
    ({"b": "0x1p-1"}, "b"),
])
def test_malformed_cells_exit_2_naming_the_column(tmp_path, capsys, change, names):
    rc, err = _run(tmp_path, capsys, HEADER + "\n" + _with(**change) + "\n")
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"column {names}" in err or f"{names} " in err, err


def test_authors_number_spellings_are_read(tmp_path, capsys):
    """What pandas' to_csv writes (and its readers accept): exponents, signs, nan/inf spelled out,
    surrounding spaces; an empty optional cell is NaN."""
    row = _with(rho="", pairing_bound="NaN", lobe_departure=" 9.852200758194606E-02 ", trace_ratio="+1.044561827082072")
    rc, err = _run(tmp_path, capsys, HEADER + "\n" + row + "\n")
    assert rc == 0, err


def _head(beta):
    """S = diag(1, −β), L = S (a = 0), n = 1, m = 2 (as in test_compare)."""
    b = fmpq(beta)
    two = 1 + b * b
    c = (1 - b) ** 2 / two if b < 1 else fmpq(0)
    d = (b - 1) ** 2 / two if b > 1 else fmpq(0)
    return CertifiedHead(0, 0, 1, 2, 2, 1, 1, fmpq(0), (2 * b / two,) * 2, (c, c), (d, d),
                         {"c0": c == 0, "d0": d == 0}, [(fmpq(1), fmpq(1)), (-b, -b)])


def _row(beta: float, c: float, d: float):
    return {"model": "x", "layer": 0, "head": 0, "dim": 2, "n_pos": 1, "n_neg": 1, "a": 0.0,
            "b": 2 * beta / (1 + beta * beta), "c": c, "d": d}


def test_a_robust_face_contradicts_a_table_that_crosses_it():
    em = ErrorModel()
    delta = em.delta_rel(2)
    # c = 0 exactly with the margin β₁ − α₁ = 1/2 ≫ 2δ‖L‖: every computed ũ_j < 0, so the pipeline's c is 0.0;
    # a table c = 1e-14 (below 2R, where the old test let it pass as 'within') is beyond the error model
    j = judge_row(_row(1.5, 1e-14, 0.25 / 3.25), _head(fmpq(3, 2)), em)
    assert j["face_c"][0] == BEYOND, j
    # c > 0 with the margin α₁ − β₁ = 4e-7 > 2δ‖L‖ ≈ 3.4e-7: the computed ũ₁ > 0, so the pipeline's c > 0;
    # c itself ≈ 8e-14 lies below R = 4·m·δ², which is why the old rule (c ≤ R: within) missed it
    beta = fmpq(1) - fmpq(4, 10 ** 7)
    h = _head(beta)
    assert h.c[0] <= fmpq(*float(em.resolution(2)).as_integer_ratio())
    assert 4e-7 > 2 * delta * float(1 + beta * beta) ** 0.5
    j = judge_row(_row(float(beta), 0.0, 0.0), h, em)
    assert j["face_c"][0] == BEYOND, j


def _gemma2(path):
    """A tiny Gemma 2 checkpoint (its config omits attn_logit_softcapping: transformers' default 50 caps)."""
    from safetensors.numpy import save_file

    rng = np.random.default_rng(3)
    path.mkdir()
    t = {f"model.layers.{l}.self_attn.{p}_proj.weight": rng.integers(-3, 4, size=(4, 8)).astype(np.float32)
         for l in range(1) for p in "qk"}
    save_file(t, str(path / "model.safetensors"))
    (path / "config.json").write_text(json.dumps({"model_type": "gemma2", "num_attention_heads": 2,
                                                  "num_key_value_heads": 2, "hidden_size": 8, "head_dim": 2,
                                                  "num_hidden_layers": 1}))
    return path


def test_compare_model_takes_the_loaders_options(tmp_path, capsys):
    """The loader tells the user to pass --pre-softcap / --layout FILE: compare --model must accept them."""
    from qkverify.compare.authors import model_rows, write_table
    from qkverify.models import load_model

    g = _gemma2(tmp_path / "g2")
    t = tmp_path / "t.csv"
    write_table(model_rows(load_model(str(g), pre_softcap=True), name="g2"), t)
    assert main(["compare", str(t), "--model", str(g), "--out", str(tmp_path / "o"), "--quiet", "--no-report"]) == 2
    assert "--pre-softcap" in capsys.readouterr().err
    assert main(["compare", str(t), "--model", str(g), "--pre-softcap", "--out", str(tmp_path / "o"), "--quiet",
                 "--no-report", "--jobs", "2"]) == 0
    # the same weights under names no family knows, described by a layout file
    from safetensors.numpy import load_file, save_file

    w = load_file(str(g / "model.safetensors"))
    (tmp_path / "x").mkdir()
    save_file({k.replace("model.layers.", "blk.").replace(".self_attn.", "."): v for k, v in w.items()},
              str(tmp_path / "x" / "model.safetensors"))
    lay = tmp_path / "layout.toml"
    lay.write_text('n_heads = 2\nquery = "blk.{layer}.q_proj.weight"\nkey = "blk.{layer}.k_proj.weight"\n')
    capsys.readouterr()
    assert main(["compare", str(t), "--model", str(tmp_path / "x"), "--layout", str(lay), "--table-model", "g2",
                 "--out", str(tmp_path / "o2"), "--quiet", "--no-report", "--jobs", "2"]) == 0, capsys.readouterr()


@pytest.mark.parametrize("doc, cert", [
    ("[1, 2]", None),                                            # not an object (was AttributeError, exit 70)
    ('{"rows": 5}', None),                                       # rows not a list (was TypeError)
    ('{"rows": [{"layer": 0}]}', None),                          # a row without head (was KeyError)
    ('{"rows": [{"layer": "x", "head": 0}]}', None),             # was ValueError
    ('{"rows": [7]}', None),
    (None, {"witnesses": [{"kind": "cells", "cells": [[0, 0, 10 ** 12]], "grid_exponent": 0}]}),  # 10^12 intervals
    (None, {"witnesses": [{"kind": "cells", "cells": [[0, 0, 1]], "grid_exponent": 10 ** 12}]}),  # 2^(10^12)
])
def test_a_malformed_heads_folder_exits_2(tmp_path, capsys, doc, cert):
    d = tmp_path / "h"
    d.mkdir()
    row = {"layer": 0, "head": 0, "d_head": 1, "d_model": 2, "rank_M": 2, "n_pos": 1, "n_neg": 1, "a_exact": "0"}
    (d / "heads.json").write_text(doc if doc is not None else json.dumps({"rows": [row]}), encoding="utf-8")
    if cert is not None:
        (d / "L00H00.json").write_text(json.dumps(cert), encoding="utf-8")
    t = tmp_path / "t.csv"
    t.write_text(HEADER + "\n" + ROW + "\n", encoding="utf-8")
    rc = main(["compare", str(t), "--model", str(d), "--table-model", "distilgpt2", "--out", str(tmp_path / "o"),
               "--no-report", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "internal error" not in err, err


def test_compare_json_is_one_document(tmp_path):
    """--json on every command (issue 21): compare had none."""
    import subprocess
    import sys

    p = tmp_path / "t.csv"
    p.write_text(HEADER + "\n" + ROW + "\n" + _with(head="1", a="0.48") + "\n", encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "qkverify", "compare", str(p), "--out", str(tmp_path / "o"), "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["exit"] == 1 and doc["contradicts"] is True
    assert [x["verdict"] for x in doc["rows"]] == ["ok", "contradicts"]
    assert doc["rows"][1]["simplex"] == "contradicts" and isinstance(doc["rows"][1]["simplex_residual"], float)
    assert doc["summary"]["distilgpt2"]["rows"] == 2
    assert sorted(Path(w).name for w in doc["wrote"]) == ["compare.csv", "report.html"]
