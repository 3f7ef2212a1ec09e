"""`qkverify lean-audit`: blueprint parsing and the shipped skeleton, the
per-declaration status (checked / computed / mapped only), findings, failures
and exit codes."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from qkverify.audit.lean_audit import (
    Certificate,
    EvaluatedDecl,
    coverage_lines,
    load_skeleton,
    parse_blueprint,
    read_blueprint,
    render_text,
    run_lean_audit,
    scan_certificates,
)
from qkverify.audit.leanmap import load_lean_map, read_decls
from qkverify.cli import main
from qkverify.errors import QKInputError

# A small leanblueprint file in the style of the older blueprint sources
# (content.tex at 0d2da7f / ccc2983): one definition counter, Def 1 for the parts.
OLD_STYLE = r"""
\newtheorem{definition}{Definition}\newtheorem{lemma}{Lemma}\newtheorem{proposition}{Proposition}
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
\end{lemma}
\begin{theorem*}[An unnumbered theorem]
\label{thm:star}
\end{theorem*}
"""


@pytest.fixture(scope="module")
def entries():
    return load_lean_map()


@pytest.fixture(scope="module")
def skeleton():
    return load_skeleton()


def _audit(entries, skeleton, **kw):
    kw.setdefault("registered", set())
    kw.setdefault("claims", [SimpleNamespace(id=e.checker, label=e.label, hypotheses=(), lean_decls=())
                             for e in entries.values() if e.checker])
    kw.setdefault("certificates", [])
    return run_lean_audit(entries, read_decls(), skeleton[0], **kw)


# ---------------------------------------------------------------- blueprint parsing

def test_parse_old_style_numbering_and_fields():
    st = parse_blueprint(OLD_STYLE)
    assert [s.display for s in st] == [
        "Definition 1", "Definition 6", "Lemma 5", "Proposition 6", "Lemma 6", "Theorem*"]
    parts, profile, energy, lowrank, lobes, star = st
    assert parts.lean == ("Appendices.frobSq", "Appendices.symPart", "Appendices.skewPart")
    assert parts.leanok and parts.label == "def:parts" and parts.chapter == 1
    assert profile.uses == ("def:parts",) and energy.chapter == 2
    assert lowrank.uses == ("def:parts", "lem:missing")
    assert not lobes.leanok                      # the proof's \leanok belongs to the proof
    assert star.number is None and energy.line == 20


def test_counters_shared_within_chapter_and_renewcommand():
    tex = (r"\newtheorem{theorem}{Theorem}\newtheorem{lemma}[theorem]{Lemma}"
           r"\newtheorem{corollary}{Corollary}[chapter]"
           r"\chapter{One}\begin{theorem}\label{a}\end{theorem}\begin{lemma}\label{b}\end{lemma}"
           r"\begin{corollary}\label{c1}\end{corollary}"
           r"\addtocounter{theorem}{2}\begin{lemma}\label{c}\end{lemma}"
           r"\setcounter{definition}{0}\renewcommand{\thedefinition}{A\arabic{definition}}"
           r"\begin{definition}\label{d}\end{definition}"
           r"\renewcommand{\thedefinition}{\arabic{definition}}\begin{definition}\label{e}\end{definition}"
           r"\chapter{Two}\begin{corollary}\label{c2}\end{corollary}"
           r"\renewcommand\thetheorem{\Alph{theorem}}\begin{theorem}\label{f}\end{theorem}")
    assert [s.display for s in parse_blueprint(tex)] == [
        "Theorem 1", "Lemma 2", "Corollary 1.1", "Lemma 5", "Definition A1", "Definition 2",
        "Corollary 2.1", "Theorem F"]


def test_parse_errors_are_one_line():
    with pytest.raises(QKInputError, match=r"x\.tex:2: \\begin\{lemma\} is never closed"):
        parse_blueprint("\\chapter{A}\n\\begin{lemma}\\lean{Appendices.frobSq}\n", "x.tex")
    with pytest.raises(QKInputError, match="no theorem/lemma"):
        parse_blueprint("\\chapter{Nothing here}\n", "y.tex")
    with pytest.raises(QKInputError, match="unsupported counter format"):
        parse_blueprint(r"\renewcommand{\thelemma}{\roman{lemma}}\begin{lemma}\end{lemma}", "z.tex")


def test_read_blueprint_uses_web_tex_beside_it(tmp_path):
    (tmp_path / "web.tex").write_text(r"\newtheorem{lemma}[definition]{Lemma}" "\n\\begin{document}\n"
                                      r"\newtheorem{lemma}{Lemma}\end{document}")
    (tmp_path / "content.tex").write_text(r"\begin{definition}\label{d}\end{definition}\begin{lemma}\label{l}\end{lemma}")
    assert [s.display for s in read_blueprint(tmp_path / "content.tex")] == ["Definition 1", "Lemma 2"]


# ---------------------------------------------------------------- the shipped skeleton

def test_shipped_skeleton_numbers_checked_by_hand(skeleton):
    st, src = skeleton
    assert src["commit"] == "86ac24d9f00c10c6ef47e23192569ee22c9a69f0"
    num = {s.label: s.display for s in st}
    assert len(st) == 29
    # worked out by hand from web.tex (separate counters) and content.tex's
    # \setcounter / \renewcommand{\thedefinition} lines
    assert num["def:attention-function"] == "Definition 1"
    assert num["def:transformer"] == "Definition 5"
    assert num["def:parts"] == "Definition A1"
    assert num["def:profile"] == "Definition 6"
    assert num["def:balanced"] == "Definition A2"
    assert num["def:moment-statistics"] == "Definition A3"
    assert num["prop:homogenization"] == "Proposition 3"
    assert num["prop:rank-one"] == "Proposition 4"
    assert num["prop:low-rank"] == "Proposition 5"
    assert num["thm:balanced"] == "Theorem 3"
    assert num["thm:faces"] == "Theorem 4"
    assert num["thm:accumulation"] == "Theorem 5"
    assert num["lem:biaffine-decomposition"] == "Lemma 1"
    assert num["lem:profile-scale"] == "Lemma 4"
    assert num["lem:energy"] == "Lemma 5"
    assert num["lem:gram"] == "Lemma 10"
    assert num["cor:qk"] == "Corollary 2"
    # its \lean{} names are the public declaration list, in order
    assert [n for s in st for n in s.lean] == read_decls()
    assert all(s.leanok for s in st)


def test_skeleton_loader_is_strict(tmp_path):
    doc = json.loads(Path(load_skeleton.__globals__["SKELETON_PATH"]).read_text())
    doc["environments"][0]["display"] = "Definition 7"
    bad = tmp_path / "b.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(QKInputError, match=r"environments\[0\]: display 'Definition 7' does not match"):
        load_skeleton(bad)
    bad.write_text("{}")
    with pytest.raises(QKInputError, match="not a qkverify-blueprint-skeleton/1 document"):
        load_skeleton(bad)


# ---------------------------------------------------------------- statuses and counts

def test_real_counts_today(entries, skeleton):
    """Every one of the 177 Lean declarations is checked (theorems and lemmas) or computed
    (definitions), with a valid certificate."""
    rep = run_lean_audit(entries, read_decls(), skeleton[0])
    # statO/statE_eq_tsum_*: Σ' = closed form is an equality between reals, never certified by enclosures
    # (format 3), so undecided until an exact route lands (issue 23): mapped only
    assert rep["counts"] == {"declarations": 177, "theorems": 124, "definitions": 53,
                             "checked": 122, "computed": 53, "mapped_only": 2}
    assert rep["failures"] == [] and rep["exit"] == 0
    assert rep["sources"]["registered_checks"] == 185   # 177 Lean declarations + 8 clustering-regimes check units
    # the clustering-regimes check units are counted apart from the 177 Lean declarations
    assert rep["check_unit_counts"] == {"check_units": 14, "checked": 0, "computed": 8, "mapped_only": 6}
    # the shipped probes sample Lemma 6 / Theorem 5 at ρ = 1 (Pareto, n ≤ 1024) where the fitted slope
    # is not negative: empirical evidence against, listed apart, never a failure of a Lean theorem
    against = rep["findings"]["sampled_against"]
    assert all("empirical" in x for x in against)
    assert {x.split(":")[0] for x in against} <= {"Appendices.MainText.accumulation", "Appendices.proportional_lobes"}


def _certs():
    E = EvaluatedDecl
    return [
        Certificate(Path("c1.json"), (E("Appendices.frobSq_symPart", "holds", "empirical"),
                                      E("Appendices.symPart", "holds", "exact"),
                                      E("Appendices.profileA", "holds", "exact"))),
        Certificate(Path("c2.json"), (E("Appendices.frobSq_symPart", "holds", "exact"),
                                      E("Appendices.frobSq_symPart_div", "holds", "certified"),
                                      E("Appendices.MainText.rank_balance", "undecided", "certified"))),
        Certificate(Path("bad.json"), (E("Appendices.frobSq_skewPart", "holds", "exact"),)),
    ]


def _verify(path: Path) -> str:
    return "invalid" if path.name == "bad.json" else "valid"


def test_counts_with_registered_checks_and_certificates(entries, skeleton):
    reg = {"frobSq_symPart", "symPart", "frobSq_symPart_div", "frobSq_skewPart", "MainText.rank_balance",
           "rank_balance"}
    rep = _audit(entries, skeleton, registered=reg, certificates=_certs(), verify=_verify)
    c = rep["counts"]
    assert (c["checked"], c["computed"], c["mapped_only"]) == (2, 1, 174)
    rows = {r["name"]: r for r in rep["declarations"]}
    r = rows["Appendices.frobSq_symPart"]
    assert (r["status"], r["evidence"], r["certificates"]) == ("checked", "exact", 2)   # strongest of two
    assert rows["Appendices.frobSq_symPart_div"]["evidence"] == "certified"
    assert (rows["Appendices.symPart"]["status"], rows["Appendices.symPart"]["evidence"]) == ("computed", "exact")
    # listed in a valid certificate but no check registered: only mapped
    assert rows["Appendices.profileA"]["status"] == "mapped only"
    assert rows["Appendices.profileA"]["reason"].startswith("no check registered; statement checker 'profile'")
    # registered, but the only certificate is invalid / only undecided
    assert rows["Appendices.frobSq_skewPart"]["status"] == "mapped only"
    assert rows["Appendices.frobSq_skewPart"]["certificates"] == 0
    assert "no valid format-2 certificate" in rows["Appendices.frobSq_skewPart"]["reason"]
    assert rows["Appendices.MainText.rank_balance"]["reason"] == \
        "check registered, but no valid certificate concludes 'holds'"
    # the invalid certificate fails the audit; the data's 'mapped' claims are now stale
    assert rep["failures"] == ["bad.json: lists evaluated declarations but the kernel says 'invalid'"]
    assert rep["exit"] == 1
    assert {x["name"] for x in rep["findings"]["stale_status"]} == {
        "Appendices.frobSq_symPart", "Appendices.frobSq_symPart_div", "Appendices.symPart"}


def test_exit_codes(entries, skeleton):
    good = [c for c in _certs() if c.path.name != "bad.json"]
    rep = _audit(entries, skeleton, registered={"frobSq_symPart"}, certificates=good, verify=_verify)
    assert rep["failures"] == [] and rep["exit"] == 0
    rep = _audit(entries, skeleton, registered={"frobSq_symPart"}, certificates=good, verify=_verify,
                 require_checked=True)
    assert rep["exit"] == 1 and "--require-checked" in render_text(rep)
    fails = [Certificate(Path("f.json"), (EvaluatedDecl("Appendices.frobSq_symPart", "fails", "exact"),))]
    rep = _audit(entries, skeleton, registered={"frobSq_symPart"}, certificates=fails, verify=_verify)
    assert rep["failures"] == ["Appendices.frobSq_symPart: 1 valid certificate(s) conclude 'fails'"]
    assert rep["exit"] == 1
    unknown = [Certificate(Path("u.json"), (EvaluatedDecl("Appendices.not_a_decl", "holds", "exact"),))]
    rep = _audit(entries, skeleton, certificates=unknown, verify=_verify)
    assert rep["failures"] == ["u.json: evaluates Appendices.not_a_decl, which no lean_map [[decl]] maps"]


def test_claimed_status_without_registered_check_fails(entries, skeleton):
    ents = dict(entries)
    e = ents["symPart"]
    ents["symPart"] = replace(e, decls=(replace(e.decls[0], status="computed"),) + e.decls[1:])
    rep = _audit(ents, skeleton)
    assert rep["failures"] == ["lean_map/symPart.toml: Appendices.frobSq claims 'computed' but no check "
                               "'frobSq' is registered"]
    assert rep["exit"] == 1
    assert _audit(ents, skeleton, registered={"frobSq"})["failures"] == []


def test_unresolved_references_fail(entries, skeleton):
    ents = dict(entries)
    ents["symPart"] = replace(ents["symPart"], code=("qkverify.no_such_module", "qkverify.audit.leanmap:check_id"))
    ents["profile"] = replace(ents["profile"], certificates=("certificates/no_such_dir/",))
    rep = _audit(ents, skeleton)
    assert sorted(rep["failures"]) == [
        "lean_map/profile.toml: certificate directory 'certificates/no_such_dir/' does not exist",
        "lean_map/symPart.toml: code reference 'qkverify.no_such_module' does not resolve",
    ]
    rep = _audit(entries, skeleton, claims=[])
    assert "lean_map/rank_balance.toml: checker 'rank_balance' names no registered claim" in rep["failures"]
    assert len(rep["failures"]) == 34   # every statement with a checker (30 the paper, 4 clustering-regimes; none registered)


def test_scan_certificates_reads_format_2_only(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "old.json").write_text(json.dumps({"format": "qkverify-certificate/1", "claim": {"id": "symPart"}}))
    (tmp_path / "sub" / "new.json").write_text(json.dumps({"format": "qkverify-certificate/2", "declarations": [
        {"name": "Appendices.symPart", "conclusion": "holds", "evidence": "exact"},
        {"name": "Appendices.frobSq", "conclusion": "holds", "evidence": {"level": "certified"}}]}))
    (tmp_path / "broken.json").write_text(json.dumps({"declarations": [{"name": "x", "conclusion": "maybe"}]}))
    (tmp_path / "notjson.json").write_text("{")
    certs, problems = scan_certificates(tmp_path)
    assert [c.path.name for c in certs] == ["new.json"]
    assert [(d.name, d.evidence) for d in certs[0].declarations] == [
        ("Appendices.symPart", "exact"), ("Appendices.frobSq", "certified")]
    assert len(problems) == 1 and "broken.json: 'declarations' must list objects" in problems[0]
    assert scan_certificates(tmp_path / "missing") == ([], [])


def test_shipped_format2_certificates_are_read():
    certs, problems = scan_certificates()
    assert problems == [] and certs
    assert all(c.declarations for c in certs)


# ---------------------------------------------------------------- findings

def test_numbering_findings_from_the_shipped_skeleton(entries, skeleton):
    rep = _audit(entries, skeleton)
    nums = {(n["statement"], n["against"]): n["other_label"] for n in rep["findings"]["numbering"]}
    assert nums == {
        ("expected_symmetric_energy_low_rank_qk", "seed"): "Proposition 6",
        ("clusters_good_triple", "seed"): "Definition (good triple)",
        ("MemLambdaSet", "blueprint"): "Definition A2",
        ("statO", "blueprint"): "Definition A3",
        ("profile_conj", "blueprint"): "Proposition 4",
    }
    f = rep["findings"]
    assert f["not_in_blueprint"] == [] and f["blueprint_mismatch"] == []
    assert f["split"] == [{"statement": "profile", "blueprint": ["def:profile", "prop:rank-one"],
                           "outside": ["Appendices.MainText.profile"]}]
    assert f["unknown_uses"] == [] and f["not_leanok"] == []


def test_findings_against_an_old_style_blueprint(entries, tmp_path):
    tex = tmp_path / "content.tex"
    tex.write_text(OLD_STYLE)
    rep = run_lean_audit(entries, read_decls(), read_blueprint(tex), registered=set(), claims=[
        SimpleNamespace(id=e.checker, label=e.label, hypotheses=(), lean_decls=()) for e in entries.values()
        if e.checker], certificates=[])
    nums = {(n["statement"], n["against"]): n for n in rep["findings"]["numbering"]}
    assert nums[("symPart", "blueprint")]["other_label"] == "Definition 1"
    low = nums[("expected_symmetric_energy_low_rank_qk", "blueprint")]
    assert low["other_label"] == "Proposition 6" and low["note"] == "blueprint agrees with the seed label"
    assert ("profile", "blueprint") not in nums            # Definition 6 both ways
    assert ("proportional_lobes", "blueprint") not in nums  # Lemma 6 both ways
    absent = {x["name"] for x in rep["findings"]["not_in_blueprint"]}
    assert len(absent) == 177 - 11 and "Appendices.MainText.rank_balance" in absent
    # a \lean name the map lacks is uncovered: a failure
    assert rep["failures"] == ["Appendices.frobSq_in_a_newer_blueprint: listed by blueprint Lemma 5 (lem:energy) "
                               "but in no lean_map [[decl]]"]
    assert rep["findings"]["unknown_uses"] == [{"statement": "Proposition 6 (prop:low-rank)", "unknown": ["lem:missing"]}]
    assert rep["findings"]["not_leanok"] == ["Lemma 6 (lem:proportional)"]
    text = render_text(rep)
    assert ("expected_symmetric_energy_low_rank_qk: lean_map 'Proposition 5' vs blueprint (prop:low-rank) "
            "'Proposition 6' -- blueprint agrees with the seed label") in text
    assert "symPart: lean_map 'Definition A1' vs blueprint (def:parts) 'Definition 1'" in text


# ---------------------------------------------------------------- CLI

def test_cli_text_counts_first(capsys):
    assert main(["lean-audit"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("lean-audit: 177 Lean declarations in 40 lean_map files; blueprint qkverify/data/blueprint.json")
    assert out[2:5] == ["checked      122 of 124 theorems and lemmas",
                        "computed      53 of 53 definitions",
                        "mapped only    2 of 177 declarations"]
    assert any(l.split()[:4] == ["accumulation", "theorem", "checked", "empirical"] for l in out)
    assert any(l.split()[:4] == ["profile_rank_one", "theorem", "checked", "exact"] for l in out)
    assert any(l.split()[:4] == ["profile_sum_eq_one", "theorem", "checked", "exact"] for l in out)
    assert out[-1] == "Result: nothing fails; 122 checked, 53 computed, 2 only mapped."


def test_cli_json_shape(capsys):
    assert main(["lean-audit", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["counts"]["mapped_only"] == 2 and rep["exit"] == 0
    assert len(rep["declarations"]) == 177
    for r in rep["declarations"]:
        assert {"name", "kind", "status", "evidence", "certificates", "blueprint", "statement"} <= set(r)
        assert r["name"].startswith("Appendices.")
        # mapped only: no valid certificate, or only undecided ones (the two Σ'-equalities of Lemma 9)
        assert (r["status"] == "mapped only") == (r["certificates"] == 0 or set(r["conclusions"]) and not any(
            v for k, v in r["conclusions"].items() if k != "undecided"))
    assert [r["name"] for r in rep["declarations"]] == read_decls()
    row = {r["name"]: r for r in rep["declarations"]}["Appendices.expected_symmetric_energy_low_rank_qk"]
    assert (row["blueprint"], row["blueprint_number"], row["statement"]) == (
        "prop:low-rank", "Proposition 5", "expected_symmetric_energy_low_rank_qk")
    assert {n["statement"] for n in rep["findings"]["numbering"]} == {
        "expected_symmetric_energy_low_rank_qk", "clusters_good_triple", "MemLambdaSet", "statO", "profile_conj"}
    assert rep["findings"]["not_in_blueprint"] == []


def test_cli_require_checked(capsys):
    # the two Σ'-equalities of Lemma 9 are only mapped (undecided, format 3): --require-checked fails
    assert main(["lean-audit", "--require-checked"]) == 1
    assert "Result: FAILED (--require-checked: 2 declaration(s) only mapped)." in capsys.readouterr().out


def test_cli_custom_decls_and_blueprint(tmp_path, capsys):
    f = tmp_path / "decls"
    f.write_text("Appendices.frobSq\nAppendices.brand_new_lemma\n")
    assert main(["lean-audit", "--decls", str(f), "--json"]) == 1
    rep = json.loads(capsys.readouterr().out)
    assert "Appendices.brand_new_lemma: in the declaration list but in no lean_map [[decl]]" in rep["failures"]
    assert len(rep["failures"]) == 1 + 176
    tex = tmp_path / "content.tex"
    tex.write_text(OLD_STYLE)
    assert main(["lean-audit", "--blueprint", str(tex)]) == 1
    out = capsys.readouterr().out
    assert "Declarations absent from the blueprint: 166" in out
    assert "symPart: lean_map 'Definition A1' vs blueprint (def:parts) 'Definition 1'" in out


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


def test_audit_coverage_lines(entries, skeleton):
    lines = coverage_lines(_audit(entries, skeleton))
    assert lines[0].split() == ["checked", "0", "of", "124", "theorems", "and", "lemmas"]
    row = next(l for l in lines if l.split()[:1] == ["frobSq_eq_frobSq_symPart_add_frobSq_skewPart"])
    assert row.split()[-6:] == ["Lemma", "5", "5", "0", "0", "5"]
    assert "10 statements have no Lean declaration" in lines[-3]
    assert lines[-1].startswith("check units without a Lean name (clustering regimes): 14 --")
