"""`qkverify heads` at scale (issue 12): Dask runs byte-identical to local
runs, a worker that dies loses no head, reruns resume from certificates,
several models in one command, folder names, crash inputs, memory errors."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import numpy as np
import pytest

from qkverify.cli import main
from qkverify.heads.certify import certify_head
from qkverify.models.base import HeadRecord

from test_models import _write_bert


def _files(d: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


def _model(tmp_path, name="tiny-bert"):
    p = _write_bert(tmp_path)
    if name != "tiny-bert":
        p.parent.rename(tmp_path / name)
        p = tmp_path / name / "model.safetensors"
    return p


def test_dask_local_cluster_matches_a_local_run_byte_for_byte(tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    p = _model(tmp_path)
    a, b, c = tmp_path / "local", tmp_path / "dask", tmp_path / "dask-dies"
    assert main(["heads", str(p), "--out", str(a), "--quiet", "--jobs", "1"]) == 0
    assert main(["heads", str(p), "--out", str(b), "--quiet", "--scheduler", "local:2"]) == 0
    assert _files(a) == _files(b)
    heads = [f"L{l:02d}H{h:02d}" for l in range(2) for h in range(2)]
    assert sorted(n for n in _files(a) if n.startswith("L")) == sorted(
        f"{x}{ext}" for x in heads for ext in (".json", ".profile.json"))   # Theorem 3 and Def 6 per head
    # a worker that dies during its first task: the task is retried, no head is lost
    marker = tmp_path / "die-once"
    marker.write_text("x")
    monkeypatch.setenv("QKVERIFY_TEST_DIE_ONCE", str(marker))
    assert main(["heads", str(p), "--out", str(c), "--quiet", "--scheduler", "local:2"]) == 0
    assert not marker.exists()                      # some worker did die
    assert _files(a) == _files(c)


def test_rerun_resumes_from_certificates_and_process_pool_matches(tmp_path, capsys):
    p = _model(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["heads", str(p), "--out", str(a), "--quiet", "--jobs", "1"]) == 0
    assert main(["heads", str(p), "--out", str(b), "--quiet", "--jobs", "2"]) == 0
    assert _files(a) == _files(b)
    ref = _files(a)
    # an interrupted run: one certificate and the tables missing
    (a / "L01H00.json").unlink()
    for t in ("heads.csv", "heads.json", "heads.png"):
        (a / t).unlink()
    capsys.readouterr()
    assert main(["heads", str(p), "--out", str(a), "--jobs", "1"]) == 0
    err = capsys.readouterr().err
    assert "3 resumed from certificates" in err
    assert _files(a) == ref
    # other options: the certificates on disk are not reused, and a different one is refused
    assert main(["heads", str(p), "--out", str(a), "--quiet", "--digits", "12"]) == 2
    assert main(["heads", str(p), "--out", str(a), "--quiet", "--digits", "12", "--force"]) == 0


def test_several_models_one_combined_table(tmp_path, capsys):
    p1 = _model(tmp_path / "m1", "first-model") if (tmp_path / "m1").mkdir() is None else None
    p2 = _model(tmp_path / "m2", "second-model") if (tmp_path / "m2").mkdir() is None else None
    out = tmp_path / "out"
    assert main(["heads", str(p1.parent), str(p2.parent), "--out", str(out), "--quiet", "--no-plot"]) == 0
    text = capsys.readouterr().out
    # folder names, not the internal file's stem ("model")
    assert (out / "first-model" / "heads.csv").is_file() and (out / "second-model" / "heads.csv").is_file()
    assert "first-model: 4 heads; signatures (0,2,6): 1, (2,0,6): 1, (2,2,4): 2" in text
    with open(out / "survey.csv") as fh:
        rows = list(csv.DictReader(fh))
    cols = list(rows[0].keys())
    assert cols[:20] == ["model", "layer", "head", "kv_head", "dim", "symmetric_energy", "pairing", "rho",
                         "pairing_bound", "pairing_gap", "n_pos", "n_neg", "n_zero", "a", "b", "c", "d",
                         "b_sym", "c_sym", "d_sym"]
    assert [r["model"] for r in rows] == ["first-model"] * 4 + ["second-model"] * 4
    # HA: a = 1/2, b = 1/2 → b_sym = 1; dim = 2n = 4, n_zero inside the 2n-space = 0
    ha = rows[0]
    assert ha["dim"] == "4" and ha["n_zero"] == "0" and float(ha["b_sym"]) == pytest.approx(1.0, abs=1e-12)
    summ = json.loads((out / "survey_summary.json").read_text())
    # by hand: HA (c = d = 0), HD (d = 0), HB (b = d = 0), HC (b = c = 0)
    assert summ["second-model"]["faces"] == {"b=0": 2, "c=0": 2, "d=0": 3, "undecided": 0}


def test_a_memory_error_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    import qkverify.heads.run as run_mod

    def boom(*a, **k):
        raise MemoryError()

    monkeypatch.setattr(run_mod, "certify_layer", boom)
    p = _model(tmp_path)
    assert main(["heads", str(p), "--out", str(tmp_path / "o"), "--quiet", "--jobs", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "out of memory" in err[0]


def test_jobs_default_is_the_cores_available():
    import argparse

    from qkverify.commands import heads as cmd

    p = argparse.ArgumentParser()
    cmd.add_arguments(p)
    args = p.parse_args([])
    cmd._check_args(args)
    assert args.jobs == len(os.sched_getaffinity(0))


def _rec(q, k):
    return HeadRecord("t", 0, 0, 0, np.asarray(q), np.asarray(k), {"file": "x", "sha256": "0" * 64, "tensors": []})


def test_producer_crash_inputs_of_issue_8():
    rng = np.random.default_rng(8)
    # float32 weights near 3e38: the float pipeline overflows (display only), the certified route does not
    q = (rng.standard_normal((2, 6)) * 1e38).astype(np.float32)
    k = (rng.standard_normal((2, 6)) * 1e38).astype(np.float32)
    r = certify_head(_rec(q, k))
    assert r["verdict"] == "holds" and (r["row"]["n_pos"], r["row"]["n_neg"]) == (2, 2)
    assert "overflowed" in r["row"]["float64_flags"]
    # antisymmetric L (S = 0, L ≠ 0): W_K = [a; b], W_Q = [b; −a] gives L = abᵀ... − ...: a = 1, b = c = d = 0
    a_, b_ = rng.standard_normal(6).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    r = certify_head(_rec(np.stack([b_, -a_]), np.stack([a_, b_])))
    row = r["row"]
    assert row["a_exact"] == "1" and (row["b_lo"], row["b_hi"], row["c_hi"], row["d_hi"]) == ("0", "0", "0", "0")
    assert row["pairing"] == "" and (row["n_pos"], row["n_neg"], row["n_zero"]) == (0, 0, 6)
    assert any(w["kind"] == "inertia_charpoly" and w["zero_multiplicity"] == 4 for w in r["witnesses"])
    # float64 weights spanning ~560 binary orders
    q = rng.standard_normal((2, 6)) * 2.0 ** rng.integers(-280, 280, (2, 6))
    k = rng.standard_normal((2, 6)) * 2.0 ** rng.integers(-280, 280, (2, 6))
    r = certify_head(_rec(q, k))
    assert r["verdict"] == "holds" and r["row"]["n_pos"] + r["row"]["n_neg"] == 4
    # L = 0: a complete result with its signature witness
    z = np.zeros((2, 6), np.float32)
    r = certify_head(_rec(np.eye(2, 6, dtype=np.float32), z))
    assert (r["row"]["n_pos"], r["row"]["n_neg"], r["row"]["n_zero"]) == (0, 0, 6)
    assert [w["kind"] for w in r["witnesses"]] == ["rank", "inertia_charpoly"]
    assert r["verdict"] == "undecided" and "L = 0" in r["row"]["notes"]


def test_no_resume_recomputes_and_compares(tmp_path, capsys):
    p = _model(tmp_path)
    a = tmp_path / "a"
    assert main(["heads", str(p), "--out", str(a), "--quiet", "--no-plot"]) == 0
    ref = _files(a)
    capsys.readouterr()
    assert main(["heads", str(p), "--out", str(a), "--no-resume", "--no-plot"]) == 0
    assert "resumed" not in capsys.readouterr().err and _files(a) == ref


def test_weights_spanning_hundreds_of_binary_orders_are_certified():
    """Issue 18 regression: float64 heads whose entries span ~560 binary orders
    made an enclosure with an infinite radius reach the exact-tie step (a
    crash); such an enclosure is now a failed route and the exact ladder
    decides the cells."""
    for seed in (4, 6, 20, 25, 32, 38):
        rng = np.random.default_rng([18, seed])
        for n, N in ((2, 6), (3, 8), (4, 16)):
            q = rng.standard_normal((n, N)) * 2.0 ** rng.integers(-280, 280, (n, N))
            k = rng.standard_normal((n, N)) * 2.0 ** rng.integers(-280, 280, (n, N))
            r = certify_head(_rec(q, k))
            assert r["row"]["n_pos"] + r["row"]["n_neg"] == 2 * n, (seed, n)
            assert r["verdict"] in ("holds", "fails")


def test_float_comparison_is_opt_in_and_cross_checks_have_their_budget(tmp_path, capsys):
    """Issue 20: the authors' float64 pipeline runs beside the heads only with
    --compare-float (it costs about their whole pipeline again), and the first
    head's exact cross-checks run within --check-seconds."""
    p = _model(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["heads", str(p), "--out", str(a), "--quiet", "--jobs", "1", "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "not compared (--compare-float" in out
    rows = list(csv.DictReader(open(a / "heads.csv", encoding="utf-8")))
    assert all(r["float64_n_pos"] == "" and r["float64_flags"] == "" for r in rows)
    assert main(["heads", str(p), "--out", str(b), "--quiet", "--jobs", "1", "--no-plot", "--compare-float"]) == 0
    assert "disagrees on" in capsys.readouterr().out
    rows = list(csv.DictReader(open(b / "heads.csv", encoding="utf-8")))
    assert all(r["float64_n_pos"] != "" for r in rows)
    # the certificates do not depend on the display-only comparison
    assert {n: v for n, v in _files(a).items() if n.startswith("L")} == \
        {n: v for n, v in _files(b).items() if n.startswith("L")}
    # a cross-check over its budget is skipped and says how to run it
    c = tmp_path / "c"
    assert main(["heads", str(p), "--out", str(c), "--quiet", "--jobs", "1", "--no-plot", "--direct", "all",
                 "--check-seconds", "1e-9"]) == 0
    notes = [r["notes"] for r in csv.DictReader(open(c / "heads.csv", encoding="utf-8"))]
    assert all("--check-seconds" in n for n in notes)
    assert main(["heads", str(p), "--out", str(c), "--check-seconds", "0"]) == 2
