"""Counterexample search, probes per Lean declaration and user conjectures (qkverify.search).
Counterexamples are re-derived in the tests by hand (fractions, sympy), never read back
from the producer."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
import sympy
from flint import fmpq, fmpq_mat
from hypothesis import given, settings
from hypothesis import strategies as st

from qkverify.audit.suite import cases2
from qkverify.errors import QKInputError
from qkverify.exact.matrix import frob_sq, is_symmetric, rank, sym_part, trace
from qkverify.kernel import verify_document, verify_file
from qkverify.search import conjecture, forget_conjecture, probe_selection, resolve, search, strategies
from qkverify.search.driver import post_shrink
from qkverify.search.probes import NEEDED, NO_HYPOTHESES, NOT_SHOWN, NOT_TESTED
from qkverify.search.targets import DeclSelection

ROOT = Path(__file__).resolve().parent.parent
SEEDS = tuple(inp for _, inp in cases2())


@pytest.fixture
def tiny():
    """tr(L²) ≥ 0 for L ≠ 0 (false: antisymmetric L has tr(L²) = −‖L‖²)."""
    c = conjecture("test_trace_square_nonneg", check=lambda inp: trace(inp.L * inp.L) >= 0,
                   hypotheses={"L_ne_zero": lambda inp: frob_sq(inp.L) != 0}, input_kind="matrix")
    yield resolve(c.name)
    forget_conjecture(c.name)


@pytest.fixture
def true_conj():
    c = conjecture("test_frob_nonneg", check=lambda inp: frob_sq(inp.L) >= 0, input_kind="matrix")
    yield resolve(c.name)
    forget_conjecture(c.name)


def F(x) -> Fraction:
    return Fraction(str(x))


def test_search_finds_minimal_counterexample_deterministically(tiny):
    a = search(tiny, budget=200, seed=3)
    b = search(tiny, budget=200, seed=3)
    assert a.found and b.found and a.input.to_json2() == b.input.to_json2()
    L = a.input.L
    # minimal: 2x2 antisymmetric with entries ±1
    assert L.nrows() == 2 and L[0, 0] == 0 and L[1, 1] == 0 and abs(L[0, 1]) == 1 and L[1, 0] == -L[0, 1]
    assert a.evaluation.verdict == "fails" and a.failing == ["user.test_trace_square_nonneg"]


def test_search_nothing_found_says_so(true_conj):
    o = search(true_conj, budget=50, seed=0)
    assert not o.found
    assert 0 < o.checked <= 50 and o.generated >= 50
    assert "proves nothing" in o.summary() and f"{o.checked} distinct inputs" in o.summary()


def test_unknown_drop_and_names_are_input_errors(tiny):
    with pytest.raises(QKInputError, match="no hypothesis"):
        search(tiny, drop="no_such_hypothesis")
    with pytest.raises(QKInputError, match="unknown claim"):
        resolve("no_such_claim")
    with pytest.raises(QKInputError, match="clashes"):
        conjecture("rank_balance", check=lambda inp: True)
    with pytest.raises(QKInputError, match="hypothesis name"):
        conjecture("test_bad_binder", check=lambda inp: True, hypotheses={"L ≠ 0": lambda inp: True})


def test_resolve_statement_label_and_declaration():
    st_ = resolve("Lemma 3")
    assert isinstance(st_, DeclSelection) and st_.statement == "rank_balance" and st_.single is None
    assert {t.check for t in st_.targets} == {"finrank_le_of_posDefOn", "rank_balance"}
    one = resolve("Appendices.MainText.profile_rank_one")  # the full Lean name: that declaration only
    assert one.statement == "profile_rank_one" and [t.check for t in one.targets] == ["profile_rank_one"]
    assert [b.binder for b in one.targets[0].binders] == ["hL", "hnorm"]  # no N ≥ 2 (issue 9)
    assert resolve("finrank_le_of_posDefOn").single == "finrank_le_of_posDefOn"


# ---- probes per declaration ------------------------------------------------------


@pytest.fixture(scope="module")
def prop4_rows(tmp_path_factory):
    out = tmp_path_factory.mktemp("probes")
    return out, {(r.check, r.binder): r for r in probe_selection(resolve("profile_rank_one"), budget=40,
                                                                  out_dir=out, seeds=SEEDS)}


def _needed(r):
    assert r.status == NEEDED and r.evidence == "exact" and r.recheck == "ok", (r.status, r.reason, r.recheck)
    doc = json.loads(Path(r.certificate).read_text())
    out = verify_document(doc, r.certificate)
    assert out.status == "valid" and out.verdict == "fails"
    (rec,) = [d for d in doc["declarations"] if d["check"] == r.check]
    assert rec["dropped"] == [r.binder] and rec["hypotheses"][r.binder] is False and rec["conclusion"] == "fails"
    assert all(v for b, v in rec["hypotheses"].items() if b != r.binder)
    assert json.loads(Path(r.input_file).read_text()) == doc["input"]
    return doc["input"]


def test_prop4_N_ge_2_is_needed_only_for_the_set_equality(prop4_rows):
    _, rows = prop4_rows
    assert ("profile_rank_one", "hN") not in rows  # issue 9: never a hypothesis of the formula
    p = _needed(rows[("profiles_rank_one_eq_Theta", "hN")])
    # by hand: N = 1 and p ∈ Θ, but the only 1 x 1 profiles are the vertices c = 1, d = 1
    a, b, c, d = map(F, p["p"])
    assert p["kind"] == "theta_point" and p["N"] == 1
    assert a == b and c * d == 0 and min(a, b, c, d) >= 0 and a + b + c + d == 1 and (c, d) not in ((1, 0), (0, 1))


def test_prop4_formula_needs_rank_one_and_unit_norm(prop4_rows):
    _, rows = prop4_rows
    L = [[F(x) for x in r] for r in _needed(rows[("profile_rank_one", "hL")])["L"]]
    M = sympy.Matrix(L)
    assert sum(x * x for r in L for x in r) == 1 and M.rank() != 1
    L = [[F(x) for x in r] for r in _needed(rows[("profile_rank_one", "hnorm")])["L"]]
    M = sympy.Matrix(L)
    assert M.rank() == 1 and sum(x * x for r in L for x in r) != 1
    for k in ("hu", "hv", "hs"):
        _needed(rows[("profile_smul_vecMulVec", k)])


def test_probe_certificate_is_what_check_writes(prop4_rows, tmp_path):
    out, rows = prop4_rows
    r = rows[("profile_rank_one", "hnorm")]
    assert r.recheck_command == f"qkverify check Appendices.MainText.profile_rank_one --input {r.input_file} --drop hnorm"
    cert = tmp_path / "c.json"
    p = subprocess.run([sys.executable, "-m", "qkverify", "check", "Appendices.MainText.profile_rank_one",
                        "--input", r.input_file, "--drop", "hnorm", "--out", str(cert)], capture_output=True, text=True)
    assert p.returncode == 1, p.stderr
    assert cert.read_bytes() == Path(r.certificate).read_bytes()
    assert verify_file(cert).status == "valid"


def test_rank_balance_probe_by_hand(tmp_path):
    rows = {(r.check, r.binder): r for r in probe_selection(resolve("rank_balance"), budget=30, out_dir=tmp_path,
                                                             seeds=SEEDS)}
    ce = _needed(rows[("rank_balance", "hrank")])
    L = sympy.Matrix([[F(x) for x in r] for r in ce["L"]])
    ev = (L + L.T).eigenvals()
    pos = sum(m for v, m in ev.items() if v > 0)
    neg = sum(m for v, m in ev.items() if v < 0)
    assert L.rank() > ce["n"] and max(pos, neg) > ce["n"]
    ce = _needed(rows[("finrank_le_of_posDefOn", "hV")])
    V = sympy.Matrix([[F(x) for x in r] for r in ce["V"]])
    L = sympy.Matrix([[F(x) for x in r] for r in ce["L"]])
    G = V * (L + L.T) / 2 * V.T
    assert V.rows > ce["n"] and L.rank() <= ce["n"] and not all(e > 0 for e in G.eigenvals())


def test_not_shown_not_tested_and_no_hypotheses(tmp_path):
    rows = {(r.check, r.binder): r for r in probe_selection(resolve("Lemma 4"), budget=20, out_dir=tmp_path)}
    # profile_scale holds without symPart L ≠ 0 (a(S) = 0 = (b, c, d)(S) at S = 0): lean_map says why
    # no counterexample exists, and the search found none
    r = rows[("profile_scale", "hS")]
    assert r.status == "unprobeable" and "antisymmetric" in r.reason and r.eligible_tried > 0
    assert rows[("profileA_symPart", "—")].status == NO_HYPOTHESES
    _needed(rows[("one_sub_profileA", "hL")])  # L = 0: 1 − a(0) = 1, ‖S‖²/‖L‖² = 0 (x/0 = 0)
    # hS of the pairing declarations is a proof argument their own terms use: unprobeable, with why
    rows = {(r.check, r.binder): r for r in probe_selection(resolve("pairing_bound"), budget=10, out_dir=None)}
    r = rows[("pairing_bound", "hS")]
    assert r.status == "unprobeable" and "proof argument" in r.reason


def test_a_kind_without_a_builder_is_searched_from_the_suite(monkeypatch):
    """A new input kind needs no strategy of its own: mutations of its suite inputs are drawn."""
    monkeypatch.delitem(strategies.KIND_STRATEGIES, "theta_point")
    sel = resolve("profiles_rank_one_eq_Theta")
    # without seeds only matrices are drawn, on which the ⊆ direction holds even for N = 1
    assert not search(sel, drop="hN", budget=20).found
    o = search(sel, drop="hN", budget=50, seeds=SEEDS)
    assert o.found and o.input.kind2 == "theta_point" and o.input.N == 1
    assert o.failing == ["profiles_rank_one_eq_Theta"]


# ---- strategies ------------------------------------------------------------------


@settings(max_examples=30, derandomize=True, database=None, deadline=None)
@given(strategies.matrix_of_size(3, "symmetric"), strategies.matrix_of_size(3, "antisymmetric"),
       strategies.matrix_of_size(3, "rank_one"), strategies.matrix_of_size(3, "ties"),
       strategies.matrix_of_size(3, "unit_rank_one"), strategies.matrix_of_size(3, "unit_norm"))
def test_families_have_their_structure(S, A, R, T, U1, U):
    assert S == S.transpose()
    assert A == -A.transpose()
    assert rank(R) == 1
    assert T.nrows() == 3
    assert rank(U1) == 1 and frob_sq(U1) == 1
    assert frob_sq(U) == 1


@settings(max_examples=25, derandomize=True, database=None, deadline=None)
@given(st.sampled_from(sorted(strategies.KIND_STRATEGIES)).flatmap(
    lambda k: strategies.KIND_STRATEGIES[k](3, None).map(lambda x: (k, x))))
def test_every_kind_strategy_draws_readable_inputs_of_its_kind(kx):
    kind, inp = kx
    doc = (inp.to_json2() if hasattr(inp, "to_json2") else inp.to_json())
    assert inp.kind2 == kind == doc["kind"]
    back = strategies.reread(json.loads(json.dumps(doc)))
    assert (back.to_json2() if hasattr(back, "to_json2") else back.to_json()) == doc
    if kind == "matrix_fiber":  # S = H ± P by construction, H and P symmetric
        S = sym_part(inp.L)
        assert is_symmetric(inp.H) and is_symmetric(inp.P)
        assert S == (inp.H + inp.P if inp.face == "d" else inp.H - inp.P)
    if kind == "head" and inp.B is not None:
        assert inp.B.det() != 0
    if kind == "matrix_subspace":
        assert rank(inp.V) == inp.V.nrows()


@settings(max_examples=20, derandomize=True, database=None, deadline=None)
@given(strategies.head_input(4))
def test_heads_have_n_le_N(h):
    assert 0 <= h.n <= h.N   # n = 0 (Fin 0) is a Lean input too


def test_post_shrink_reaches_a_fixed_point():
    from qkverify.io.inputs import MatrixInput

    L = fmpq_mat([[3, 5, 0], [-5, 2, 1], [0, -1, 7]])
    out = post_shrink(MatrixInput(L), lambda inp: trace(inp.L * inp.L) < 0)
    assert out.L == fmpq_mat([[0, 1], [-1, 0]])


# ---- CLI ---------------------------------------------------------------------------


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "qkverify", *args], cwd=cwd, capture_output=True, text=True)


def test_cli_search_module_exit_codes(tmp_path):
    mod = str(ROOT / "docs" / "conjectures_example.py")
    r = _cli("search", "--module", mod, "skew_energy_at_most_half", "--json", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["found"] and doc["counterexample"]["L"] == [["0", "1"], ["-1", "0"]]
    assert doc["kernel"] == "not checkable"  # a user conjecture has no kernel table entry
    cert = json.loads(Path(tmp_path, doc["certificate"]).read_text())
    assert cert["format"] == "qkverify-certificate/3" and cert["statement"] == "user.skew_energy_at_most_half"
    assert cert["verdict"] == "fails" and cert["input"]["L"] == [["0", "1"], ["-1", "0"]]
    rec = json.loads(Path(tmp_path, doc["certificate"].replace(".json", ".search.json")).read_text())
    assert rec["kind"] == "counterexample" and rec["search"]["seed"] == 0
    r = _cli("verify", doc["certificate"], cwd=tmp_path)
    assert r.returncode == 1 and "not checkable" in r.stdout
    r = _cli("verify", doc["certificate"], "--allow-uncheckable", cwd=tmp_path)
    assert r.returncode == 0
    r = _cli("search", "--module", mod, "two_S_minus_L_is_trace", "--budget", "40", cwd=tmp_path)
    assert r.returncode == 0 and "proves nothing" in r.stdout
    r = _cli("search", "no_such_claim", cwd=tmp_path)
    assert r.returncode == 2


def test_cli_search_declaration_with_drop(tmp_path):
    r = _cli("search", "frobSq_symPart_div", "--drop", "hL", "--budget", "20", "--json", "--out", "o", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    # L = 0: ‖S‖²/‖L‖² = 0 with x/0 = 0, while (1 + tr(L²)/‖L‖²)/2 = 1/2
    assert doc["kernel"] == "valid" and doc["counterexample"]["L"] == [["0"]]
    assert doc["declarations"] == ["frobSq_symPart_div"] and doc["failing"] == ["frobSq_symPart_div"]
    r = _cli("verify", doc["certificate"], cwd=tmp_path)
    assert r.returncode == 0 and "valid" in r.stdout


def test_a_broken_strategy_is_reported_not_raised(monkeypatch):
    def broken(max_dim, family):
        return st.integers(0, 3).map(lambda i: 1 // (i - i))  # raises when drawn

    monkeypatch.setitem(strategies.KIND_STRATEGIES, "theta_point", broken)
    monkeypatch.setitem(strategies.KIND_STRATEGIES, "matrix", broken)
    o = search(resolve("profiles_rank_one_eq_Theta"), budget=10)
    assert not o.found and "drawing inputs failed (ZeroDivisionError" in o.no_strategy


def test_claims_lists_declarations_and_what_is_checked(capsys):
    from qkverify.claims import metadata
    from qkverify.claims.registry import registered_check_ids
    from qkverify.cli import main

    assert main(["claims", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    sts = {s["id"]: s for s in doc["statements"]}
    assert set(sts) == set(metadata.load())
    lemma3 = {d["check"]: d for d in sts["rank_balance"]["declarations"]}
    assert [h["binder"] for h in lemma3["finrank_le_of_posDefOn"]["hypotheses"]] == ["hrank", "hV"]
    assert lemma3["finrank_le_of_posDefOn"]["checked"] and lemma3["finrank_le_of_posDefOn"]["input_kinds"] == [
        "matrix_subspace"]
    checked = {d["check"] for s in doc["statements"] for d in s["declarations"] if d["checked"]}
    assert checked == registered_check_ids() & {d.check for s in metadata.load().values() for d in s.decls}
    assert main(["claims"]) == 0
    assert "with a registered check" in capsys.readouterr().out
