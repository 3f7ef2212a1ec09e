"""Break-it review of `qkverify compare` (issue 22): hostile tables get exit 2 and one line naming
the problem; a certified face with a margin beyond the error model is contradicted by a table that
says otherwise; `--model` takes the options the model loader asks for (--pre-softcap, --layout).

The clean row is the first complete row of the authors' published survey table
(scripts/survey_results/head_statistics.csv, distilgpt2 layer 0 head 0)."""

from __future__ import annotations

import json

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
