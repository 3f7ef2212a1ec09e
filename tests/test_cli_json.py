"""`--json` on every command (issue 21): one JSON document on standard output, with
the fields of the files the command writes; `--heads` selects heads; `-` reads
standard input.  Each command runs in a subprocess in an empty folder."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples"


def run(cwd, *args, stdin=None, timeout=900):
    env = dict(os.environ, MPLCONFIGDIR=str(Path(cwd) / ".mpl"))
    return subprocess.run([sys.executable, "-m", "qkverify", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=timeout, input=stdin)


CASES = [
    (["profile", str(EX / "L.json")], lambda d: d["a"]["value"] == "1/60" and d["d_model"] == 2),
    (["signature", str(EX / "S.json")], lambda d: (d["n_pos"], d["n_neg"], d["n_zero"]) == (2, 1, 0)),
    (["spectrum", str(EX / "head.json")], lambda d: d["normalised_spectrum"][0]["value"].startswith("root(")),
    (["claims"], lambda d: len(d["statements"]) > 20),
    (["check", "Definition 6", "--input", str(EX / "L.json")], lambda d: d["verdict"] == "holds"),
    (["rope", str(EX / "forms.json")], lambda d: d["verdict"] == "holds"),
    (["homogenise", str(EX / "transformer.json")], lambda d: d["verdict"] == "holds"),
    (["regimes", str(EX / "triple.json")], lambda d: d["good_triple"]["value"] is True),
    (["baselines", "--no-mc"], lambda d: d["all_as_expected"] is True),
    (["simulate", "--n", "3", "--horizon", "0.1"], lambda d: d["steps"] == 10 and d["n"] == 3),
    (["ginibre", "--d", "4", "--samples", "3"], lambda d: d["samples"] == 3),
    (["accumulation", "--max-n", "30", "--law", "uniform", "--rho", "1", "--no-cert"],
     lambda d: d["sizes"][-1] <= 30 and len(d["tests"]) == 1),
    (["search", "Lemma 4", "--budget", "5"], lambda d: d["found"] is False and d["budget"] == 5),
    (["probes", "rank_balance", "--budget", "5"], lambda d: len(d["probes"]) >= 1),
]


@pytest.mark.parametrize("argv,check", CASES, ids=[a[0] for a, _ in CASES])
def test_json_parses(tmp_path, argv, check):
    r = run(tmp_path, *argv, "--json")
    assert r.returncode in (0, 1, 3), r.stderr[-800:]
    doc = json.loads(r.stdout)  # exactly one document, nothing else on stdout
    assert check(doc), json.dumps(doc)[:800]


def test_verify_json(tmp_path):
    shutil.copytree(ROOT / "certificates" / "profile", tmp_path / "c")
    r = run(tmp_path, "verify", "c", "--json")
    doc = json.loads(r.stdout)
    n = len(list((tmp_path / "c").glob("*.json")))
    assert r.returncode == 0 and doc["counts"] == {"valid": n} and doc["exit"] == 0
    assert all(f["status"] == "valid" and f["statement"] == "profile" for f in doc["files"])


def test_audit_json_and_exit(tmp_path):
    r = run(tmp_path, "audit", "--no-model", "--json", "--out", "o")
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and all(doc["parts"].values()) and doc["columns"][0] == "statement"
    assert json.loads((tmp_path / "o" / "audit.json").read_text())["parts"] == doc["parts"]
    assert (tmp_path / "o" / "audit.csv").read_bytes().count(b"\r") == 0


def test_heads_json_and_head_selection(tmp_path):
    sys.path.insert(0, str(ROOT / "tests"))
    from test_models import _write_bert

    p = _write_bert(tmp_path)
    r = run(tmp_path, "heads", str(p), "--heads", "1", "--json", "--no-plot", "--out", "o")
    doc = json.loads(r.stdout)
    assert r.returncode == 0, r.stderr
    assert [(row["layer"], row["head"]) for row in doc["rows"]] == [(0, 1), (1, 1)]
    assert doc["rows"][0]["d_model"] == doc["rows"][0]["d_model"] and "N" not in doc["rows"][0]
    assert doc["theorem_3"]["summary"].startswith("Theorem 3")
    # the same fields as the file, and the CSV in the same vocabulary with LF line endings
    assert json.loads((tmp_path / "o" / "heads.json").read_text())["rows"] == doc["rows"]
    raw = (tmp_path / "o" / "heads.csv").read_bytes()
    assert b"\r" not in raw and raw.split(b"\n")[0].split(b",")[4:6] == [b"d_model", b"d_head"]
    import csv

    row = next(csv.DictReader((tmp_path / "o" / "heads.csv").open()))
    n = int(row["d_model"])  # random_baseline is a number, its exact value beside it: (N + 1)/(2N)
    from fractions import Fraction

    assert Fraction(row["random_baseline_exact"]) == Fraction(n + 1, 2 * n)
    assert float(row["random_baseline"]) == float(Fraction(n + 1, 2 * n))
