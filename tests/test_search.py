"""Counterexample search, probes and user conjectures (qkverify.search)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from flint import fmpq, fmpq_mat
from hypothesis import given, settings
from hypothesis import strategies as st

from qkverify.claims.registry import get
from qkverify.exact.matrix import frob_sq, rank, trace
from qkverify.search import conjecture, forget_conjecture, probe_claim, search, strategies
from qkverify.search.driver import post_shrink
from qkverify.search.probes import NEEDED, NOT_SHOWN

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def tiny_claim():
    """A claim registered only for these tests: tr(L^2) >= 0 (false:
    antisymmetric L has tr(L^2) = -||L||^2)."""
    c = conjecture(
        "test_trace_square_nonneg",
        check=lambda inp: trace(inp.L * inp.L) >= 0,
        hypotheses={"L_ne_zero": lambda inp: frob_sq(inp.L) != 0},
        input_kind="matrix",
    )
    yield c
    forget_conjecture(c.id)


@pytest.fixture
def true_claim():
    c = conjecture("test_frob_nonneg", check=lambda inp: frob_sq(inp.L) >= 0, input_kind="matrix")
    yield c
    forget_conjecture(c.id)


def _L(o):
    return o.input.L


def test_search_finds_minimal_counterexample_deterministically(tiny_claim):
    a = search(tiny_claim, budget=200, seed=3)
    b = search(tiny_claim, budget=200, seed=3)
    assert a.found and b.found
    assert a.input.to_json() == b.input.to_json()
    L = _L(a)
    # minimal: 2x2 antisymmetric with entries ±1
    assert L.nrows() == 2 and L[0, 0] == 0 and L[1, 1] == 0 and abs(L[0, 1]) == 1 and L[1, 0] == -L[0, 1]
    assert a.result.verdict == "fails"


def test_search_nothing_found_says_so(true_claim):
    o = search(true_claim, budget=50, seed=0)
    assert not o.found
    assert 0 < o.eligible <= 50 and o.generated >= 50  # distinct inputs tried / drawn
    assert "proves nothing" in o.summary() and f"{o.eligible} distinct inputs" in o.summary()


def test_unknown_drop_is_an_input_error(tiny_claim):
    from qkverify.errors import QKInputError

    with pytest.raises(QKInputError):
        search(tiny_claim, drop="no_such_hypothesis")


# ---- the probes the issue requires ---------------------------------------------


def _probe(claim_id, hyp, tmp_path):
    rows = {r.hypothesis: r for r in probe_claim(get(claim_id), budget=100, out_dir=tmp_path)}
    r = rows[hyp]
    assert r.status == NEEDED, r.reason
    assert r.evidence == "exact"
    assert r.recheck == "ok"
    assert Path(r.certificate).is_file() and Path(r.input_file).is_file()
    return r




# ---- strategies ------------------------------------------------------------------


@settings(max_examples=30, derandomize=True, database=None, deadline=None)
@given(strategies.matrix_of_size(3, "symmetric"), strategies.matrix_of_size(3, "antisymmetric"),
       strategies.matrix_of_size(3, "rank_one"), strategies.matrix_of_size(3, "ties"))
def test_families_have_their_structure(S, A, R, T):
    assert S == S.transpose()
    assert A == -A.transpose()
    assert rank(R) == 1
    assert T.nrows() == 3


@settings(max_examples=20, derandomize=True, database=None, deadline=None)
@given(strategies.head_input(4))
def test_heads_have_n_le_N(h):
    assert 1 <= h.n <= h.N


def test_post_shrink_reaches_a_fixed_point():
    from qkverify.io.inputs import MatrixInput

    L = fmpq_mat([[3, 5, 0], [-5, 2, 1], [0, -1, 7]])
    out = post_shrink(MatrixInput(L), lambda inp: trace(inp.L * inp.L) < 0)
    M = out.L
    assert M.nrows() == 2 and M == fmpq_mat([[0, 1], [-1, 0]])


# ---- CLI ---------------------------------------------------------------------------


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "qkverify", *args], cwd=cwd, capture_output=True, text=True)


def test_cli_search_module_exit_codes(tmp_path):
    mod = str(ROOT / "docs" / "conjectures_example.py")
    r = _cli("search", "--module", mod, "skew_energy_at_most_half", "--json", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["found"] and doc["counterexample"]["L"] == [["0", "1"], ["-1", "0"]]
    cert = json.loads(Path(tmp_path, doc["certificate"]).read_text())
    assert cert["verdict"] == "fails" and cert["input"]["L"] == [["0", "1"], ["-1", "0"]]
    rec = json.loads(Path(tmp_path, doc["certificate"].replace(".json", ".search.json")).read_text())
    assert rec["kind"] == "counterexample" and rec["search"]["seed"] == 0
    r = _cli("search", "--module", mod, "two_S_minus_L_is_trace", "--budget", "40", cwd=tmp_path)
    assert r.returncode == 0 and "proves nothing" in r.stdout
    r = _cli("search", "no_such_claim", cwd=tmp_path)
    assert r.returncode == 2


