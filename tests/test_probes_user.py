"""``qkverify probes CLAIM --module FILE`` on a user conjecture (issue 14,
Found 11): a conjecture that is false with all its hypotheses is reported as
such, with a counterexample that the test re-checks by hand."""

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

from qkverify.search.probes import ALL_KEPT, FAILS_WITH_ALL, NO_COUNTEREXAMPLE, NOT_PROBED

ROOT = Path(__file__).resolve().parents[1]

MODULE = '''
from qkverify.exact.matrix import frob_sq, trace
from qkverify.search import conjecture

@conjecture("trace_sq_nonneg", hypotheses={"trace_nonneg": lambda inp: trace(inp.L) >= 0},
            input_kind="matrix", statement="tr(L^2) >= 0 when tr L >= 0 (false: [[0,1],[-1,0]])")
def _c1(inp):
    return trace(inp.L * inp.L) >= 0

@conjecture("frob_nonneg", input_kind="matrix", statement="||L||^2 >= 0")
def _c2(inp):
    return frob_sq(inp.L) >= 0
'''


def cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "qkverify", *args], capture_output=True, text=True, cwd=cwd)


def _frac(s: str) -> Fraction:
    return Fraction(s)


def test_false_conjecture_reported_with_counterexample(tmp_path):
    (tmp_path / "conj.py").write_text(MODULE)
    r = cli("probes", "trace_sq_nonneg", "--module", "conj.py", "--budget", "40", "--out", "pr", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert "FALSE as stated" in r.stdout
    doc = json.loads((tmp_path / "pr" / "probes_trace_sq_nonneg.json").read_text())
    rows = {row["binder"]: row for row in doc["probes"]}
    whole = rows[ALL_KEPT]
    assert whole["status"] == FAILS_WITH_ALL and whole["recheck"] == "ok"
    assert rows["trace_nonneg"]["status"] == NOT_PROBED
    # the counterexample, checked by hand: tr L >= 0 and tr(L^2) = sum_ij L_ij L_ji < 0
    L = [[_frac(x) for x in row] for row in whole["counterexample"]["L"]]
    n = len(L)
    assert sum(L[i][i] for i in range(n)) >= 0
    assert sum(L[i][j] * L[j][i] for i in range(n) for j in range(n)) < 0
    # the input file it wrote is what `qkverify check` would read, and the certificate is there
    assert json.loads(Path(tmp_path, whole["input_file"]).read_text())["L"] == whole["counterexample"]["L"]
    cert = json.loads(Path(tmp_path, whole["certificate"]).read_text())
    assert cert["verdict"] == "fails" and cert["input"]["L"] == whole["counterexample"]["L"]
    # a format-2 certificate of its own statement, which the kernel cannot check
    assert cert["statement"] == "user.trace_sq_nonneg" and cert["declarations"][0]["hypotheses"] == {"trace_nonneg": True}
    v = cli("verify", whole["certificate"], cwd=tmp_path)
    assert v.returncode == 1 and "not checkable" in v.stdout
    md = (tmp_path / "pr" / "probes_trace_sq_nonneg.md").read_text()
    assert (f"| `user.trace_sq_nonneg` | user conjecture trace_sq_nonneg | `user.trace_sq_nonneg` | `{ALL_KEPT}` | "
            f"{FAILS_WITH_ALL} |") in md


def test_shipped_example_conjecture_is_reported_false(tmp_path):
    r = cli("probes", "skew_energy_at_most_half", "--module", str(ROOT / "docs" / "conjectures_example.py"),
            "--budget", "40", "--out", "pr", cwd=tmp_path)
    assert r.returncode == 1 and "FALSE as stated" in r.stdout
    # the minimal counterexample is an antisymmetric 2x2: ||T||^2 = ||L||^2 = 2 > 1
    row = json.loads((tmp_path / "pr" / "probes_skew_energy_at_most_half.json").read_text())["probes"][0]
    L = [[_frac(x) for x in r_] for r_ in row["counterexample"]["L"]]
    T2 = sum(((L[i][j] - L[j][i]) / 2) ** 2 for i in range(len(L)) for j in range(len(L)))
    L2 = sum(x * x for r_ in L for x in r_)
    assert L2 != 0 and T2 > L2 / 2


def test_true_conjecture_says_no_counterexample(tmp_path):
    (tmp_path / "conj.py").write_text(MODULE)
    r = cli("probes", "frob_nonneg", "--module", "conj.py", "--budget", "30", "--out", "pr", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = json.loads((tmp_path / "pr" / "probes_frob_nonneg.json").read_text())["probes"]
    assert [(x["binder"], x["status"]) for x in rows] == [(ALL_KEPT, NO_COUNTEREXAMPLE)]
    assert "does not prove" in rows[0]["reason"]


def test_builtin_claims_keep_their_table(tmp_path):
    # a theorem that holds with its hypotheses gets no "(none dropped)" row
    r = cli("probes", "rank_balance", "--budget", "30", "--out", "pr", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = json.loads((tmp_path / "pr" / "probes_rank_balance.json").read_text())["probes"]
    assert ALL_KEPT not in {x["binder"] for x in rows}
    # one row per (declaration, binder): Lemma 3's two declarations and their Lean binders
    assert sorted((x["check"], x["binder"]) for x in rows) == [
        ("finrank_le_of_posDefOn", "hV"), ("finrank_le_of_posDefOn", "hrank"), ("rank_balance", "hrank")]
