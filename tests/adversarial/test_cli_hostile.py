"""Hostile command lines (issue 18, "Hostile inputs"): each gives exit 2 with one
line naming the problem, or a bounded correct answer -- never an internal error
(exit 70), a traceback or a hang.  Every command runs in a subprocess with a
timeout, in an empty folder (nothing may be written for a refused command)."""

import os
import subprocess
import sys

import pytest

#: a refused command answers at once; the bound is for a loaded 2-core machine
TIMEOUT = 60


def run(tmp_path, *args, stdin=None):
    env = dict(os.environ, MPLCONFIGDIR=str(tmp_path / ".mpl"))
    r = subprocess.run([sys.executable, "-m", "qkverify", *args], capture_output=True, text=True, cwd=tmp_path,
                       env=env, timeout=TIMEOUT, input=stdin)
    return r


REFUSED = [
    # (argv, a word the one-line message must contain)
    (["accumulation", "--rho", "1e999"], "--rho"),
    (["accumulation", "--rho", "0"], "--rho"),
    (["accumulation", "--max-n", "100000000"], "--max-n"),
    (["simulate", "--horizon", "inf"], "--horizon"),
    (["simulate", "--horizon", "nan"], "--horizon"),
    (["simulate", "--horizon", "1e12"], "--horizon"),
    (["simulate", "--d", "100000", "--n", "100000"], "--d"),
    (["simulate", "--random", "--d", "256", "--n", "1000"], "cap"),         # within each cap, too much work
    (["simulate", "--dt", "1e-9"], "steps"),
    (["simulate", "--dt", "-1"], "--dt"),
    (["simulate", "--theorem-2-1", "--samples", "100000000"], "--samples"),
    (["simulate", "--theorem-2-1", "--ns", "2,100000"], "--ns"),
    (["ginibre", "--d", "100000"], "--d"),
    (["ginibre", "--jobs", "1000000"], "--jobs"),
    (["ginibre", "--samples", "1000000000"], "--samples"),
    (["ginibre", "--d", "0"], "--d"),
    (["rope", "smollm2", "--k", "0"], "--k"),
    (["rope", "smollm2", "--k", "100000"], "--k"),
    (["search", "Lemma 4", "--budget", "1000000000000"], "--budget"),
    (["search", "Lemma 4", "--budget", "0"], "--budget"),
    (["search", "Lemma 4", "--max-dim", "1000"], "--max-dim"),
    (["probes", "Lemma 3", "--budget", "1000000000000"], "--budget"),
    (["heads", "--jobs", "1000000"], "--jobs"),
    (["heads", "--heads", "0,x"], "--heads"),
    (["heads", "--heads", "5-2"], "--heads"),
    (["regimes", "--jobs", "1000000"], "--jobs"),
    (["audit", "--jobs", "0"], "--jobs"),
]


@pytest.mark.parametrize("argv,word", REFUSED, ids=[" ".join(a) for a, _ in REFUSED])
def test_refused_in_one_line(tmp_path, argv, word):
    r = run(tmp_path, *argv)
    assert r.returncode == 2, (r.returncode, r.stderr[-500:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("qkverify: ") and word in lines[0], r.stderr
    assert "Traceback" not in r.stderr
    assert not any(p.name == "qkverify-out" for p in tmp_path.iterdir())


@pytest.mark.parametrize("argv", [["simulate", "--help"], ["ginibre", "--help"], ["search", "--help"],
                                  ["probes", "--help"], ["rope", "--help"], ["accumulation", "--help"],
                                  ["heads", "--help"]])
def test_caps_are_stated_in_help(tmp_path, argv):
    r = run(tmp_path, *argv)
    assert r.returncode == 0
    text = " ".join(r.stdout.split("options:", 1)[1].split())  # the option descriptions, not the usage line
    caps = {"simulate": ["--horizon", "--d", "--n", "--samples"], "ginibre": ["--d", "--samples", "--jobs"],
            "search": ["--budget"], "probes": ["--budget"], "rope": ["--k"], "accumulation": ["--max-n", "--rho"],
            "heads": ["--jobs"]}[argv[0]]
    from qkverify.commands._util import CAPS

    for opt in caps:  # every capped option names its upper bound in --help
        i = text.index(f" {opt} ")
        assert any(str(v) in text[i:i + 400] for v in [*CAPS.values(), 256, 1000, 10000, 1000000]), (opt, text[i:i + 200])


def test_largest_small_runs_answer(tmp_path):
    """Bounded correct answers at the small end of each range."""
    r = run(tmp_path, "ginibre", "--d", "1", "--samples", "3", "--json")
    import json

    doc = json.loads(r.stdout)
    # a 1 × 1 matrix's only eigenvalue is its entry: real and simple, positive half the time
    assert r.returncode == 0 and doc["d"] == 1 and doc["samples"] == 3 and 0 <= doc["holds"] <= 3
    r = run(tmp_path, "simulate", "--horizon", "0.05", "--dt", "0.01", "--n", "3", "--json", "--no-png")
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and doc["steps"] == 5 and doc["n"] == 3


def test_stdin_is_read_and_bad_stdin_refused(tmp_path):
    import json

    r = run(tmp_path, "profile", "-", "--json", stdin="[[1, 2], [3, 4]]")
    doc = json.loads(r.stdout)
    # by hand: S = [[1, 5/2], [5/2, 4]], T = [[0, -1/2], [1/2, 0]]; ‖L‖² = 30, ‖T‖² = 1/2: a = 1/60
    assert r.returncode == 0 and doc["a"]["value"] == "1/60" and doc["d"]["value"] == "0"
    for text, word in (("", "empty"), ("[[1, 2], [3", "JSON"), ("[[1, 2], [3, inf]]", "")):
        r = run(tmp_path, "profile", "-", stdin=text)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and word in r.stderr, r.stderr
