"""Every command that writes files writes only under its ``--out`` (issue 14,
Found 4): each command runs in an empty working folder, and afterwards every
new file there lies under the folder named by ``--out``."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MATRIX = "[[1,-1,2,-1],[3,2,3,2],[2,1,-3,3],[0,3,-2,2]]"


def files_under(d: Path) -> set[Path]:
    return {p.relative_to(d) for p in d.rglob("*") if p.is_file() or p.is_symlink()}


@pytest.fixture
def work(tmp_path):
    w = tmp_path / "work"
    w.mkdir()
    (w / "L.json").write_text(MATRIX)
    (w / "S.json").write_text('{"S": [[2, 1], [1, -3]]}')
    (w / "spec.json").write_text('[1, -2, 3, "-1/2"]')  # a spectrum: Appendices B and C are evaluated on it
    shutil.copy(ROOT / "docs" / "conjectures_example.py", w / "conj.py")
    return w


def run_in(work: Path, args, timeout=900):
    env = dict(os.environ, MPLCONFIGDIR=str(work.parent / "mpl"))  # matplotlib's cache: outside the folder
    before = files_under(work)
    r = subprocess.run([sys.executable, "-m", "qkverify", *args], capture_output=True, text=True, cwd=work,
                       env=env, timeout=timeout)
    new = files_under(work) - before
    return r, new


@pytest.mark.parametrize("args,code", [
    (["check", "Definition 6", "--input", "L.json", "--out", "out/one.json"], 0),
    (["search", "skew_energy_at_most_half", "--module", "conj.py", "--out", "out"], 1),
    (["probes", "skew_energy_at_most_half", "--module", "conj.py", "--budget", "30", "--out", "out"], 1),
    (["probes", "rank_balance", "--budget", "30", "--out", "out"], 0),
    (["audit", "--no-model", "--out", "out"], 0),
])
def test_writes_only_under_out(work, args, code):
    r, new = run_in(work, args)
    assert r.returncode == code, r.stderr
    assert new, "the command wrote nothing"
    outside = sorted(str(p) for p in new if p.parts[0] != "out")
    assert outside == [], outside


@pytest.mark.parametrize("args", [
    ["profile", "L.json"], ["signature", "S.json"], ["claims"], ["baselines", "--no-mc"], ["lean-audit"],
])
def test_read_only_commands_write_nothing(work, args):
    r, new = run_in(work, args)
    assert r.returncode == 0, r.stderr
    assert new == set()


def test_check_out_dir_and_default(work):
    (work / "d").mkdir()
    r, new = run_in(work, ["check", "Definition 6", "--input", "L.json", "--out", "d"])
    assert r.returncode == 0 and len(new) == 1 and next(iter(new)).parts[0] == "d"
    r, new = run_in(work, ["check", "Definition 6", "--input", "L.json"])  # default: ./qkverify-out/check/<claim>/
    assert r.returncode == 0 and [p.parts[:3] for p in new] == [("qkverify-out", "check", "profile")]


@pytest.mark.parametrize("args,where", [
    (["search", "skew_energy_at_most_half", "--module", "conj.py"], "search"),
    (["probes", "rank_balance", "--budget", "20"], "probes"),
    (["spectrum", "spec.json"], "spectrum"),
    (["simulate", "--n", "3", "--horizon", "0.1"], "simulate"),
])
def test_default_out_is_qkverify_out(work, args, where):
    """No --out: everything goes under ./qkverify-out/<command>/, never certificates/ (issue 19)."""
    r, new = run_in(work, args)
    # 3: spectrum's Lemma 9 Σ'-equalities are undecided (never certified by enclosures, format 3)
    assert r.returncode in (0, 1, 3), r.stderr
    assert new and all(p.parts[:2] == ("qkverify-out", where) for p in new), sorted(map(str, new))[:5]


# heads and audit on the real model: tests/test_docs_examples.py::test_readme_model_examples_run
# runs the README's `heads --layers 0 --out …` and `audit --out …` and checks the same property.
