"""`qkverify lean-audit`: blueprint parsing, numbering and the coverage report."""

from __future__ import annotations

import json
import shutil
import sys
import types
from pathlib import Path
from types import SimpleNamespace

import pytest

from qkverify.cli import main
from qkverify.errors import QKInputError
from qkverify.audit.lean_audit import parse_blueprint, render_text, run_audit
from qkverify.audit.leanmap import DEFAULT_MAP_DIR, load_lean_map, read_decls

# A small leanblueprint file in the style of blueprint/src/content.tex.
FIXTURE = r"""
\chapter{Profiles}
\begin{definition}[Symmetric and antisymmetric parts]
\label{def:parts}
\lean{Appendices.frobSq, Appendices.symPart,
      Appendices.skewPart}
\leanok
\end{definition}
% \begin{lemma} a commented-out environment is ignored \end{lemma}
\setcounter{definition}{5}
\begin{definition}[Profile of $\pi$ {[}four numbers{]}]
\label{def:profile}
\lean{Appendices.sortDesc, Appendices.alphaList, Appendices.betaList, Appendices.profileA}
\leanok
\uses{def:parts}
\end{definition}
\chapter{Random matrices}
\setcounter{lemma}{4}
\begin{lemma}[Energy identities]
\label{lem:energy}
\lean{Appendices.frobSq_symPart, Appendices.frobSq_in_a_newer_blueprint}
\leanok
\uses{def:parts}
\end{lemma}
\begin{proof}
\leanok
\uses{def:parts}
\end{proof}
\setcounter{proposition}{5}
\begin{proposition}[Expected symmetric energy for random low-rank QK products]
\label{prop:low-rank}
\lean{Appendices.expected_symmetric_energy_low_rank_qk, Appendices.expected_skew_energy_low_rank_qk}
\leanok
\uses{def:parts, lem:missing}
\end{proposition}
\begin{lemma}[Proportional lobes]
\label{lem:proportional}
\lean{Appendices.proportional_lobes}
\uses{def:profile}
\end{lemma}
\begin{theorem*}[An unnumbered remark-like theorem]
\label{thm:star}
\end{theorem*}
\begin{corollary}[No Lean yet]
\label{cor:none}
\end{corollary}
"""


@pytest.fixture
def tex(tmp_path) -> Path:
    p = tmp_path / "content.tex"
    p.write_text(FIXTURE, encoding="utf-8")
    return p


def test_parse_blueprint_numbering_and_fields():
    st = parse_blueprint(FIXTURE)
    assert [s.display for s in st] == [
        "Definition 1", "Definition 6", "Lemma 5", "Proposition 6", "Lemma 6", "Theorem*", "Corollary 1"]
    parts, profile, energy, lowrank, lobes = st[:5]
    assert parts.lean == ("Appendices.frobSq", "Appendices.symPart", "Appendices.skewPart")
    assert parts.leanok and parts.label == "def:parts"
    assert profile.title == "Profile of $\\pi$ {[}four numbers{]}"
    assert profile.uses == ("def:parts",)
    assert lowrank.label == "prop:low-rank" and lowrank.uses == ("def:parts", "lem:missing")
    assert not lobes.leanok                      # the proof's \leanok belongs to the proof
    assert energy.leanok and energy.line == 19


def test_shared_counters_and_addtocounter():
    tex = (r"\newtheorem{theorem}{Theorem}\newtheorem{lemma}[theorem]{Lemma}"
           r"\begin{theorem}\label{a}\end{theorem}\begin{lemma}\label{b}\end{lemma}"
           r"\addtocounter{theorem}{2}\begin{lemma}\label{c}\end{lemma}"
           r"\begin{definition}\label{d}\end{definition}")
    assert [s.display for s in parse_blueprint(tex)] == ["Theorem 1", "Lemma 2", "Lemma 5", "Definition 1"]


def test_parse_errors_are_one_line():
    with pytest.raises(QKInputError, match=r"x\.tex:2: \\begin\{lemma\} is never closed"):
        parse_blueprint("\\chapter{A}\n\\begin{lemma}\\lean{Appendices.frobSq}\n", "x.tex")
    with pytest.raises(QKInputError, match="no theorem/lemma"):
        parse_blueprint("\\chapter{Nothing here}\n", "y.tex")


def test_audit_against_fixture(tex):
    report = run_audit(load_lean_map(), read_decls(), parse_blueprint(tex.read_text()),
                       verifier=None, registry=None)
    # a \lean{} declaration missing from lean_map is reported, with where it came from
    assert report["uncovered"] == [{"decl": "Appendices.frobSq_in_a_newer_blueprint",
                                    "sources": ["blueprint Lemma 5 (lem:energy)"]}]
    assert report["blueprint_not_in_decls"] == ["Appendices.frobSq_in_a_newer_blueprint"]
    assert report["exit"] == 1 and report["covered_all"] is False
    # Prop 5 (arXiv v1) vs Proposition 6 (seed page and this blueprint)
    num = {(n["entry"], n["against"]): n["other_label"] for n in report["numbering"]}
    assert num[("expected_symmetric_energy_low_rank_qk", "seed")] == "Proposition 6"
    assert num[("expected_symmetric_energy_low_rank_qk", "blueprint")] == "Proposition 6"
    assert num[("symPart", "blueprint")] == "Definition 1"
    assert ("profile", "blueprint") not in num            # Definition 6 both ways
    assert ("proportional_lobes", "blueprint") not in num  # Lemma 6 both ways
    # statements with no lean_map entry: the corollary without \lean (the starred
    # theorem has none either)
    unm = {u["statement"]: u["reason"] for u in report["blueprint_unmapped"]}
    assert unm == {"Theorem* (thm:star)": "no \\lean{} declaration",
                   "Corollary 1 (cor:none)": "no \\lean{} declaration"}
    # lean_map declarations the blueprint does not list (e.g. all of the main text)
    nib = {x["decl"]: x["entry"] for x in report["not_in_blueprint"]}
    assert nib["Appendices.profileB"] == "profile"
    assert nib["Appendices.MainText.rank_balance"] == "rank_balance"
    assert len(nib) == 177 - 11
    assert report["blueprint_not_leanok"] == ["Lemma 6 (lem:proportional)"]
    assert report["blueprint_unknown_uses"] == [{"statement": "Proposition 6 (prop:low-rank)",
                                                 "unknown": ["lem:missing"]}]
    text = render_text(report)
    assert "Appendices.frobSq_in_a_newer_blueprint  [blueprint Lemma 5 (lem:energy)]" in text
    assert ("expected_symmetric_energy_low_rank_qk: arXiv v1 'Proposition 5' vs blueprint "
            "(prop:low-rank) 'Proposition 6' -- blueprint agrees with the seed label") in text


def test_cli_shipped_list_gives_full_coverage(capsys):
    assert main(["lean-audit", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["decls_count"] == 177 and rep["lean_map_declarations"] == 177
    assert rep["uncovered"] == [] and rep["listed_twice"] == [] and rep["not_in_decls"] == []
    assert rep["lean_map_entries"] == 40
    rows = {r["id"]: r for r in rep["coverage"]}
    assert rows["profile_sum_eq_one"]["declarations"] == 17
    assert rows["accumulation"]["checker"] == "-" and rows["accumulation"]["certificate"] == "-"
    assert rows["rank_balance"]["checker"] == "rank_balance"
    assert [r["id"] for r in rep["coverage"]][:3] == ["IsAttentionFunction", "IsBilinearScore",
                                                      "biaffine_decomposition"]
    assert sum(r["declarations"] for r in rep["coverage"]) == 177


def test_cli_text_with_blueprint(tex, capsys):
    assert main(["lean-audit", "--blueprint", str(tex)]) == 1
    out = capsys.readouterr().out
    assert "Declarations with no lean_map entry: 1" in out
    assert "arXiv v1 'Proposition 5' vs seed 'Proposition 6'" in out
    assert "Coverage (statement x Lean declarations x checker x certificate x verified):" in out


def test_cli_custom_decls(tmp_path, capsys):
    f = tmp_path / "decls"
    f.write_text("Appendices.frobSq\nAppendices.brand_new_lemma\n")
    assert main(["lean-audit", "--decls", str(f), "--json"]) == 1
    rep = json.loads(capsys.readouterr().out)
    assert rep["uncovered"] == [{"decl": "Appendices.brand_new_lemma", "sources": ["decls"]}]
    assert len(rep["not_in_decls"]) == 176
    assert {"decl": "Appendices.symPart", "entry": "symPart"} in rep["not_in_decls"]


@pytest.mark.parametrize("argv,msg", [
    (["--decls", "/nonexistent/lean_decls"], "cannot read declaration list"),
    (["--blueprint", "/nonexistent/content.tex"], "cannot read blueprint"),
])
def test_cli_unreadable_input_exits_2(argv, msg, capsys):
    assert main(["lean-audit", *argv]) == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err and err.count("\n") == 1


def test_cli_malformed_blueprint_and_map_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.tex"
    bad.write_text("\\begin{theorem}\\label{t}\n")
    assert main(["lean-audit", "--blueprint", str(bad)]) == 2
    assert "is never closed" in capsys.readouterr().err
    d = tmp_path / "lean_map"
    d.mkdir()
    (d / "oops.toml").write_text('id = "oops"\n')
    assert main(["lean-audit", "--lean-map", str(d)]) == 2
    err = capsys.readouterr().err
    assert "oops.toml: missing required field" in err and err.count("\n") == 1


# ---------------------------------------------------------------- certificates

def _tmp_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "lean_map").mkdir(parents=True)
    for i in ("symPart", "rank_balance", "accumulation"):
        shutil.copy(DEFAULT_MAP_DIR / f"{i}.toml", root / "lean_map" / f"{i}.toml")
    cert = root / "certificates" / "symPart"
    cert.mkdir(parents=True)
    (cert / "one.json").write_text("{}")
    (cert / "two.json").write_text("{}")
    return root


def test_certificate_presence_and_verifier(tmp_path):
    root = _tmp_repo(tmp_path)
    ents = load_lean_map(root / "lean_map")

    rows = {r["id"]: r for r in run_audit(ents, verifier=None, registry=None)["coverage"]}
    assert (rows["symPart"]["certificate"], rows["symPart"]["certificate_files"]) == ("present", 2)
    assert rows["symPart"]["verified"] == "n/a"
    assert (rows["rank_balance"]["certificate"], rows["rank_balance"]["verified"]) == ("missing", "n/a")
    assert rows["accumulation"]["certificate"] == "-"

    def fake(path):
        return SimpleNamespace(ok=Path(path).name == "one.json", reason="witness rejected")

    rep = run_audit(ents, verifier=fake, registry=None)
    row = {r["id"]: r for r in rep["coverage"]}["symPart"]
    assert row["verified"] == "FAILED (1/2 ok)"
    assert row["verify_failures"] == [{"file": str(root / "certificates/symPart/two.json"),
                                       "reason": "witness rejected"}]
    assert "two.json: witness rejected" in render_text(rep)
    rep = run_audit(ents, verifier=lambda p: SimpleNamespace(ok=True), registry=None)
    assert {r["id"]: r for r in rep["coverage"]}["symPart"]["verified"] == "ok (2/2)"


def test_verifier_module_is_used_when_present(tmp_path, monkeypatch):
    root = _tmp_repo(tmp_path)
    mod = types.ModuleType("qkverify.kernel.verifier")
    seen = []
    mod.verify_file = lambda p: seen.append(Path(p).name) or SimpleNamespace(ok=True)
    monkeypatch.setitem(sys.modules, "qkverify.kernel.verifier", mod)
    rep = run_audit(load_lean_map(root / "lean_map"), registry=None)
    assert rep["verifier"] == "qkverify.kernel.verifier.verify_file"
    assert sorted(seen) == ["one.json", "two.json"]
    assert {r["id"]: r for r in rep["coverage"]}["symPart"]["verified"] == "ok (2/2)"


def test_registry_section_uses_given_claims():
    ents = load_lean_map()
    claims = [SimpleNamespace(id="symPart", label="Def A1", hypotheses=(), lean_decls=("Appendices.symPart",)),
              SimpleNamespace(id="unmapped_claim", label="Lemma 99", hypotheses=(), lean_decls=())]
    rep = run_audit(ents, read_decls(), verifier=None, registry=claims)
    assert rep["registered_claims"] == ["symPart", "unmapped_claim"]
    assert ("registered claim 'unmapped_claim' has no lean_map entry with checker = \"unmapped_claim\""
            in rep["registry"])
    assert "lean_map entry rank_balance: checker 'rank_balance' is not registered" in rep["registry"]
    assert not any("'symPart'" in line for line in rep["registry"])
    assert rep["exit"] == 0   # registry findings are reported, coverage decides the exit status
