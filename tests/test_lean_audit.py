"""`qkverify lean-audit`: blueprint parsing and the shipped skeleton; the
per-declaration statuses (checked / sampled / computed / mapped only) counted
from hand-made certificate sets; the manifest of the shipped set (extra files
ignored, changed or missing files failures); --out; findings, failures, exit
codes; the conformance sheet (regenerated identically, line ranges on the right
functions)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from qkverify.audit import manifest
from qkverify.audit.blueprint import SKELETON_PATH, load_skeleton, parse_blueprint, read_blueprint
from qkverify.audit.evidence import read_records, scan, shipped
from qkverify.audit.lean_audit import audit, coverage_lines, render_text, run_lean_audit
from qkverify.audit.run import lean_coverage
from qkverify.claims.metadata import REPO_ROOT, load, read_decls
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
    return load()


@pytest.fixture(scope="module")
def skeleton():
    return load_skeleton()


@pytest.fixture(scope="module")
def shipped_report():
    """lean-audit of the shipped set (the kernel's verdicts are cached for the whole module)."""
    return lean_coverage()


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
    doc = json.loads(SKELETON_PATH.read_text())
    doc["environments"][0]["display"] = "Definition 7"
    bad = tmp_path / "b.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(QKInputError, match=r"environments\[0\]: display 'Definition 7' does not match"):
        load_skeleton(bad)
    bad.write_text("{}")
    with pytest.raises(QKInputError, match="not a qkverify-blueprint-skeleton/1 document"):
        load_skeleton(bad)


# ---------------------------------------------------------------- statuses, from hand-made certificate sets

def _cert(path: Path, records: list[tuple], fmt: int = 3) -> Path:
    """A hand-made certificate with these (name, conclusion, evidence[, dropped]) records."""
    recs = []
    for name, conclusion, evidence, *dropped in records:
        r = {"name": name, "conclusion": conclusion, "evidence": evidence}
        if dropped:
            r["dropped"] = dropped
        recs.append(r)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"format": f"qkverify-certificate/{fmt}", "declarations": recs}))
    return path


def _fake_kernel(path: Path) -> str:
    return "invalid" if path.name.startswith("bad") else "valid"


A = "Appendices."


@pytest.fixture()
def handmade(tmp_path):
    d = tmp_path / "certs"
    _cert(d / "a.json", [(A + "frobSq_symPart", "holds", "exact"), (A + "symPart", "computed", "exact"),
                         (A + "skewPart", "undecided", "exact")])
    _cert(d / "sub" / "b.json", [(A + "frobSq_skewPart", "consistent", "empirical"),
                                 (A + "frobSq_skewPart_div", "consistent", "empirical")])
    _cert(d / "c2.json", [(A + "frobSq_symPart_div", "holds", "empirical"),     # format 2: a sample
                          (A + "frobSq", "holds", "exact")], fmt=2)
    _cert(d / "d.json", [(A + "frobSq_skewPart_div", "holds", "certified"),
                         (A + "frobSq_eq_frobSq_symPart_add_frobSq_skewPart", "inconsistent", "empirical")])
    _cert(d / "bad.json", [(A + "MainText.rank_balance", "holds", "exact")])  # the kernel rejects it
    _cert(d / "probe.json", [(A + "profileA", "fails", "exact", "hL")])         # a probe: says nothing of profileA
    _cert(d / "user.json", [("user.my_conjecture", "fails", "exact")])          # a user conjecture
    (d / "table.json").write_text(json.dumps({"rows": []}))                   # not a certificate
    return d


def test_statuses_counted_from_a_handmade_set(handmade):
    rep = audit(handmade, verify=_fake_kernel)
    c = rep["counts"]
    # by hand: checked frobSq_symPart (exact) and frobSq_skewPart_div (certified beside a sample);
    # sampled frobSq_skewPart (format 3) and frobSq_symPart_div (format 2 empirical 'holds');
    # computed symPart, frobSq; everything else only mapped
    assert (c["checked"], c["sampled"], c["computed"], c["mapped_only"]) == (2, 2, 2, 177 - 6)
    rows = {r["name"]: r for r in rep["declarations"]}
    st = {n: (rows[A + n]["status"], rows[A + n]["evidence"]) for n in (
        "frobSq_symPart", "frobSq_skewPart_div", "frobSq_skewPart", "frobSq_symPart_div", "symPart", "frobSq",
        "skewPart", "frobSq_eq_frobSq_symPart_add_frobSq_skewPart", "MainText.rank_balance", "profileA")}
    assert st == {
        "frobSq_symPart": ("checked", "exact"), "frobSq_skewPart_div": ("checked", "certified"),
        "frobSq_skewPart": ("sampled", "empirical"), "frobSq_symPart_div": ("sampled", "empirical"),
        "symPart": ("computed", "exact"), "frobSq": ("computed", "exact"),
        "skewPart": ("mapped only", None), "frobSq_eq_frobSq_symPart_add_frobSq_skewPart": ("mapped only", None),
        "MainText.rank_balance": ("mapped only", None), "profileA": ("mapped only", None)}
    assert rows[A + "frobSq_skewPart_div"]["conclusions"] == {"consistent/empirical": 1, "holds/certified": 1}
    assert rows[A + "frobSq_symPart_div"]["conclusions"] == {"consistent/empirical": 1}
    assert "no valid certificate concludes 'holds' (undecided 1)" in rows[A + "skewPart"]["reason"]
    assert rows[A + "MainText.rank_balance"]["reason"] == "check registered, but no valid certificate evaluates it"
    # the sample against Lemma 5 is listed apart, never a failure; the invalid certificate is one
    assert rep["findings"]["sampled_against"] == [
        A + "frobSq_eq_frobSq_symPart_add_frobSq_skewPart: 1 valid certificate(s) conclude 'inconsistent' "
        "(a sample against the statement: evidence, not a counterexample)"]
    assert rep["failures"] == ["bad.json: lists evaluated declarations but the kernel says 'invalid'"]
    assert rep["exit"] == 1
    text = render_text(rep)
    assert "sampled        2 of 124 theorems and lemmas (empirical evidence only)" in text
    assert all(len(line) <= 100 for line in text.splitlines())


def test_no_theorem_is_checked_on_samples_alone(tmp_path):
    d = tmp_path / "c"
    for i, (conc, ev, fmt) in enumerate([("consistent", "empirical", 3), ("holds", "empirical", 2)] * 3):
        _cert(d / f"{i}.json", [(A + "frobSq_symPart", conc, ev)], fmt)
    row = {r["name"]: r for r in audit(d, verify=_fake_kernel)["declarations"]}[A + "frobSq_symPart"]
    assert (row["status"], row["certificates"]) == ("sampled", 6)


def test_failures_and_evidence_against(tmp_path):
    d = tmp_path / "c"
    _cert(d / "x.json", [(A + "frobSq_symPart", "inconsistent", "empirical"), (A + "frobSq", "computed", "exact")])
    rep = audit(d, verify=_fake_kernel)
    assert rep["failures"] == [] and rep["exit"] == 0 and len(rep["findings"]["sampled_against"]) == 1
    _cert(d / "y.json", [(A + "frobSq_symPart", "fails", "exact")])
    _cert(d / "z.json", [(A + "not_a_decl", "holds", "exact")])
    rep = audit(d, verify=_fake_kernel)
    assert rep["failures"] == ["z.json: evaluates Appendices.not_a_decl, which no lean_map [[decl]] maps",
                               "Appendices.frobSq_symPart: 1 valid certificate(s) conclude 'fails'"]
    assert rep["exit"] == 1
    (d / "w.json").write_text(json.dumps({"declarations": [{"name": "x", "conclusion": "maybe"}]}))
    assert "w.json: 'declarations' must list objects" in audit(d, verify=_fake_kernel)["failures"][0]


def test_require_checked(tmp_path):
    d = tmp_path / "c"
    _cert(d / "x.json", [(A + "frobSq_symPart", "holds", "exact")])
    assert audit(d, verify=_fake_kernel)["exit"] == 0
    rep = audit(d, verify=_fake_kernel, require_checked=True)
    assert rep["exit"] == 1 and "--require-checked: 0 theorem(s) only sampled, 176 declaration(s)" in render_text(rep)
    # one statement, every declaration computed: passes; a theorem only sampled does not
    one = load(REPO_ROOT / "lean_map" / "symPart.toml")
    y = tmp_path / "y"
    _cert(y / "y.json", [(A + n, "computed", "exact") for n in ("frobSq", "symPart", "skewPart")])
    kw = dict(registered={"frobSq", "symPart", "skewPart"}, predicates=None, verify=_fake_kernel,
              require_checked=True)
    assert run_lean_audit(one, None, None, certificates=scan(y).certificates, **kw)["exit"] == 0
    lemma5 = load(REPO_ROOT / "lean_map" / "frobSq_eq_frobSq_symPart_add_frobSq_skewPart.toml")
    z = tmp_path / "z"
    names = [d.name for st in lemma5.values() for d in st.decls]
    _cert(z / "z.json", [(n, "holds", "exact") for n in names[1:]] + [(names[0], "consistent", "empirical")])
    kw["registered"] = {n.removeprefix(A) for n in names}
    rep = run_lean_audit(lemma5, None, None, certificates=scan(z).certificates, **kw)
    assert rep["counts"]["sampled"] == 1 and rep["failures"] == [] and rep["exit"] == 1
    assert render_text(rep).endswith("Result: FAILED (--require-checked: 1 theorem(s) only sampled, "
                                     "0 declaration(s) only mapped).")
    kw["require_checked"] = False
    assert run_lean_audit(lemma5, None, None, certificates=scan(z).certificates, **kw)["exit"] == 0


def test_read_records_normalises_format_2_samples():
    recs = read_records({"declarations": [
        {"name": A + "frobSq", "conclusion": "holds", "evidence": "empirical"},
        {"name": A + "frobSq_symPart", "conclusion": "fails", "evidence": {"level": "empirical"}},
        {"name": A + "symPart", "conclusion": "fails", "evidence": "exact", "dropped": ["hL"]},
        {"name": "user.x", "conclusion": "holds", "evidence": "exact"}]})
    assert [(r.name, r.label) for r in recs] == [(A + "frobSq", "consistent/empirical"),
                                                 (A + "frobSq_symPart", "inconsistent/empirical")]
    assert read_records({"format": "qkverify-certificate/1"}) is None


def test_scan_reads_only_certificates_with_records(handmade):
    src = scan(handmade)
    assert sorted(c.name for c in src.certificates) == ["a.json", "bad.json", "c2.json", "d.json", "sub/b.json"]
    assert src.problems == [] and scan(handmade / "missing").certificates == []


# ---------------------------------------------------------------- the manifest of the shipped set

def test_shipped_manifest_is_in_sync_with_the_tree():
    """`make audit` regenerates it with the certificates (qkverify lean-audit --write-manifest)."""
    assert manifest.read() == manifest.build(), "run `make audit` (or qkverify lean-audit --write-manifest)"
    listed = {rel for _, rel in manifest.read()}
    assert "profile_scale/nilpotent_e12.json" in listed
    assert not any(rel.startswith("probes/inputs/") or rel.endswith("probes.json") for rel in listed)


def _shipped_copy(tmp_path: Path, folders=("profile_scale", "symPart")) -> tuple[Path, Path]:
    import shutil

    d = tmp_path / "certificates"
    for f in folders:
        shutil.copytree(manifest.SHIPPED_DIR / f, d / f)
    m = tmp_path / "manifest.sha256"
    assert manifest.write(d, m) == sum(len(list((d / f).glob("*.json"))) for f in folders)
    return d, m


def test_manifest_ignores_user_files_and_fails_on_changed_ones(tmp_path):
    d, m = _shipped_copy(tmp_path)
    base = run_lean_audit(load(), read_decls(), None, certificates=shipped(m, d).certificates, verify=_fake_kernel)
    # a user's certificates beside the shipped ones (even a valid 'fails') change nothing
    _cert(d / "check" / "mine.json", [(A + "frobSq_symPart", "fails", "exact")])
    _cert(d / "profile_scale" / "extra.json", [(A + "profileA", "fails", "exact")])
    src = shipped(m, d)
    assert src.problems == [] and not any("mine" in c.name or "extra" in c.name for c in src.certificates)
    rep = run_lean_audit(load(), read_decls(), None, certificates=src.certificates, verify=_fake_kernel)
    assert rep["declarations"] == base["declarations"] and rep["failures"] == base["failures"] == []
    assert base["counts"]["checked"] == 3 and base["counts"]["computed"] == 3   # Lemma 4; symPart, frobSq, skewPart
    # a listed file changed or missing is a failure of the audit
    f = d / "profile_scale" / "N1_positive.json"
    f.write_bytes(f.read_bytes().replace(b'"holds"', b'"holds" ', 1))
    (d / "symPart" / "N1_positive.json").unlink()
    probs = shipped(m, d).problems
    assert probs == ["shipped certificate profile_scale/N1_positive.json differs from the manifest (SHA-256 "
                     "changed; `make audit` regenerates both)",
                     "shipped certificate symPart/N1_positive.json is missing (listed in the manifest)"]


def test_manifest_format(tmp_path):
    d, m = _shipped_copy(tmp_path, ("symPart",))
    text = m.read_text()
    lines = text.splitlines()
    assert lines == sorted(lines, key=lambda x: x.split("  ")[1]) and text.endswith("\n")
    import hashlib

    sha, rel = lines[0].split("  ")
    assert hashlib.sha256((d / rel).read_bytes()).hexdigest() == sha     # sha256sum's format
    before = m.stat().st_mtime_ns
    manifest.write(d, m)
    assert m.read_text() == text and m.stat().st_mtime_ns == before     # nothing changed, nothing written
    for bad, msg in (("x" * 64 + "  a.json\n", "not a '<sha256>  <path>' line"),
                     ("0" * 64 + "  ../a.json\n", "not a relative path"),
                     ("0" * 64 + "  /a.json\n", "not a relative path"),
                     ("0" * 64 + "  a.json\n" + "1" * 64 + "  a.json\n", "listed twice")):
        m.write_text(bad)
        with pytest.raises(QKInputError, match=msg):
            manifest.read(m)


def test_out_is_honoured(tmp_path, capsys, shipped_report):
    import shutil

    out = tmp_path / "mine"
    shutil.copytree(manifest.SHIPPED_DIR / "profile_scale", out / "profile_scale")
    assert main(["lean-audit", "--out", str(out), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    c = rep["counts"]
    assert (c["checked"], c["sampled"], c["computed"]) == (3, 0, 0) and rep["failures"] == []
    assert {r["name"] for r in rep["declarations"] if r["status"] == "checked"} == {
        "Appendices.MainText.profileA_symPart", "Appendices.MainText.one_sub_profileA",
        "Appendices.MainText.profile_scale"}
    assert lean_coverage(out)["counts"] == c
    assert shipped_report["counts"] != c     # the shipped set says more


def test_user_outputs_never_change_the_shipped_report(tmp_path, monkeypatch, shipped_report):
    monkeypatch.chdir(tmp_path)
    _cert(tmp_path / "qkverify-out" / "check" / "x.json", [(A + "frobSq_symPart", "fails", "exact")])
    _cert(tmp_path / "certificates" / "x.json", [(A + "frobSq_symPart", "fails", "exact")])
    assert lean_coverage() == shipped_report


# ---------------------------------------------------------------- the shipped set

def test_shipped_set_statuses(shipped_report):
    rep = shipped_report
    assert rep["failures"] == [] and rep["exit"] == 0
    c = rep["counts"]
    assert (c["declarations"], c["theorems"], c["definitions"]) == (177, 124, 53)
    assert c["checked"] + c["sampled"] + c["computed"] + c["mapped_only"] == 177
    assert rep["sources"]["certificates"].startswith("manifest qkverify/data/shipped_certificates.sha256")
    for r in rep["declarations"]:
        kinds = set(r["conclusions"])
        if r["status"] == "checked":     # a decisive 'holds' behind every checked theorem
            assert kinds & {"holds/exact", "holds/certified"}, r["name"]
        if r["status"] == "sampled":
            assert kinds <= {"consistent/empirical", "inconsistent/empirical", "undecided/exact",
                             "undecided/certified"}, r["name"]
    rows = {r["name"]: r for r in rep["declarations"]}
    # issue 23: Theorem 5 (an almost-sure limit) is never checked on a sample
    assert rows["Appendices.MainText.accumulation"]["status"] != "checked"
    assert [r["name"] for r in rep["declarations"]] == read_decls()
    assert rep["check_unit_counts"]["check_units"] == 14


def test_cli_text(capsys):
    assert main(["lean-audit"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("lean-audit: 177 Lean declarations in 40 lean_map files")
    assert out[1] == "  certificates: manifest qkverify/data/shipped_certificates.sha256 (" + \
        f"{len(manifest.read())} certificates)"
    assert [x.split()[0] for x in out[4:8]] == ["checked", "sampled", "computed", "mapped"]
    assert out[-1].startswith("Result: nothing fails; ")
    assert all(len(x) <= 100 for x in out)


def test_cli_help_states_the_statuses(capsys):
    with pytest.raises(SystemExit):
        main(["lean-audit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "sampled a theorem or lemma supported only by empirical evidence" in text
    assert "--require-checked exit 1 unless every theorem and lemma is checked (not only sampled or mapped)" in text
    assert "manifest" in text and "--out DIR audit the certificates under DIR" in text


def test_cli_json_shape(capsys):
    assert main(["lean-audit", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert len(rep["declarations"]) == 177 and rep["exit"] == 0
    for r in rep["declarations"]:
        assert {"name", "kind", "status", "evidence", "certificates", "conclusions", "blueprint", "statement"} <= set(r)
        assert (r["status"] == "mapped only") == (r["evidence"] is None)
    row = {r["name"]: r for r in rep["declarations"]}["Appendices.expected_symmetric_energy_low_rank_qk"]
    assert (row["blueprint"], row["blueprint_number"], row["statement"]) == (
        "prop:low-rank", "Proposition 5", "expected_symmetric_energy_low_rank_qk")


def test_cli_require_checked_fails_while_a_theorem_is_only_sampled(capsys, shipped_report):
    code = main(["lean-audit", "--require-checked"])
    c = shipped_report["counts"]
    assert code == (1 if c["sampled"] or c["mapped_only"] else 0)


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
    (["--out", "x", "--write-manifest"], "does not take --out"),
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


# ---------------------------------------------------------------- findings

def _no_certs(entries, skeleton_or_none, **kw):
    return run_lean_audit(entries, read_decls(), skeleton_or_none, registered=set(), predicates=None, **kw)


def test_numbering_findings_from_the_shipped_skeleton(entries, skeleton):
    rep = _no_certs(entries, skeleton[0])
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
    # nothing registered: every check registered by the code is named by no [[decl]]... none here
    assert rep["failures"] == [] and rep["counts"]["mapped_only"] == 177


def test_findings_against_an_old_style_blueprint(entries, tmp_path):
    tex = tmp_path / "content.tex"
    tex.write_text(OLD_STYLE)
    rep = _no_certs(entries, read_blueprint(tex))
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
            "'Proposition 6' -- blueprint agrees with the seed label") in " ".join(text.split())
    assert "symPart: lean_map 'Definition A1' vs blueprint (def:parts) 'Definition 1'" in text


def test_registered_check_without_decl_fails(entries, skeleton):
    rep = run_lean_audit(entries, read_decls(), skeleton[0], registered={"frobSq", "no_such_check"}, predicates=set())
    assert rep["failures"] == ["check 'no_such_check' is registered but no lean_map [[decl]] names it"]


def test_coverage_lines(shipped_report):
    lines = coverage_lines(shipped_report)
    assert lines[0].split()[:1] == ["checked"] and lines[1].split()[:1] == ["sampled"]
    row = next(l for l in lines if l.endswith("frobSq_eq_frobSq_symPart_add_frobSq_skewPart"))
    assert row.split()[:3] == ["Lemma", "5", "5"]
    assert lines[-1].startswith("check units (clustering regimes, no Lean name): 14:")
    assert all(len(x) <= 100 for x in lines)


# ---------------------------------------------------------------- the conformance sheet

def test_shipped_sheet_is_what_the_tree_regenerates(shipped_report):
    from qkverify.audit.sheet import SHIPPED_SHEET, sheet_text

    assert SHIPPED_SHEET.read_text(encoding="utf-8") == sheet_text(shipped_report), (
        "docs/conformance.md is stale: `make audit` (or qkverify lean-audit --sheet docs/conformance.md) "
        "regenerates it")


def _lines(ref: dict) -> str:
    text = (REPO_ROOT / ref["file"]).read_text(encoding="utf-8").splitlines()
    return "\n".join(text[ref["first"] - 1:ref["last"]])


def test_sheet_line_ranges_point_at_the_right_functions(shipped_report):
    from qkverify.audit.sheet import sheet_entries

    entries = sheet_entries(shipped_report)
    assert len(entries) == 177 + 14

    def names(src: str, check: str) -> bool:
        # the registration names the declaration, or builds the name in a loop (f"profile{_k}")
        return f'"{check}"' in src or f'"{check.split(".")[-1]}"' in src or 'f"' in src

    for e in entries:
        check = e["name"].removeprefix("Appendices.").removeprefix("MainText.")
        if e["producer"] is not None:
            src = _lines(e["producer"])
            assert e["producer"]["file"].startswith("qkverify/claims/")
            if e["registered_at"]:   # made by a factory or a helper: the module-level registration names it
                line = _lines({"file": e["producer"]["file"], "first": e["registered_at"], "last": e["registered_at"]})
                assert names(line, check), e["name"]
            else:   # the registration names it, or the loop just above that registers several
                above = _lines({"file": e["producer"]["file"], "first": max(1, e["producer"]["first"] - 3),
                                "last": e["producer"]["first"]})
                assert "declaration_check(" in src and (names(src, check) or f'"{check}"' in above), e["name"]
            if e["producer"]["function"] != "<lambda>" and not e["registered_at"]:
                assert f"def {e['producer']['function'].split('.')[-1]}(" in src, e["name"]
                assert f'declaration_check("{check}"' in src, e["name"]
        if e["kernel"] is not None:
            src = _lines(e["kernel"])
            assert e["kernel"]["file"].startswith("qkverify/kernel/rules/")
            if e["kernel"]["function"].endswith("<lambda>"):
                # the thm(...)/dfn(...) call, the entry of a registration table, or a factory's return
                assert "lambda" in src and e["kernel"]["last"] - e["kernel"]["first"] < 6, e["name"]
            else:
                assert src.lstrip().startswith(f"def {e['kernel']['function'].split('.')[-1]}("), e["name"]
        for h in e["hypotheses"]:
            for side, ref in (("producer", h["producer"]), ("kernel", h["kernel"])):
                if ref is None:
                    continue
                src = _lines(ref)
                if ref["function"].endswith("<lambda>"):  # predicate("id", lambda …), predicate(id)(lambda …), ("id", lambda …)
                    assert "lambda" in src and ("predicate(" in src or f'"{h["predicate"]}"' in src), h["binder"]
                else:
                    assert f"def {ref['function'].split('.')[-1]}(" in src, (side, e["name"], h["binder"])
                    # decorated with its id, or registered by id in a loop of the same file
                    whole = (REPO_ROOT / ref["file"]).read_text(encoding="utf-8")
                    assert f'predicate("{h["predicate"]}")' in src or f'"{h["predicate"]}"' in whole, h["binder"]
    checked = [e for e in entries if e["status"] in ("checked", "sampled", "computed")]
    assert all(e["producer"] is not None and e["kernel"] is not None for e in checked)
    one = next(e for e in entries if e["name"] == "Appendices.MainText.one_sub_profileA")
    assert one["input_kinds"] == ["matrix"] and one["hypotheses"][0]["binder"] == "hL"
    assert one["hypotheses"][0]["probe"]["status"] == "needed"


def test_sheet_entries_read_the_probe_table_and_unprobeable(shipped_report, tmp_path):
    import shutil

    from qkverify.audit.sheet import sheet_text

    lm = tmp_path / "lean_map"
    shutil.copytree(REPO_ROOT / "lean_map", lm)
    f = lm / "profile_scale.toml"
    # the sheet prints whatever reason lean_map gives (the shipped entry already has one: replace it)
    text0 = f.read_text(encoding="utf-8")
    new = re.sub(r'(predicate = "symPart_ne_zero")(, unprobeable = "[^"]*")? }',
                 r'\1, unprobeable = "a made-up reason" }', text0)
    assert new != text0
    f.write_text(new, encoding="utf-8")
    text = sheet_text(shipped_report, lm)
    block = text[text.index("### `Appendices.MainText.profile_scale`"):]
    block = block[:block.index("\n### ")]
    assert "- `hS`: `symPart L ≠ 0` -- predicate `symPart_ne_zero`" in block
    assert "dropped: no counterexample can exist: a made-up reason" in block
    block = text[text.index("### `Appendices.MainText.one_sub_profileA`"):]
    block = block[:block.index("\n### ")]
    assert "dropped: **needed**: counterexample `" in block and "certificates/probes/one_sub_profileA__hL.json" in block
    assert "- producer check: `qkverify/claims/profile.py` lines " in block


def test_cli_sheet_writes_the_file(tmp_path, capsys, shipped_report):
    from qkverify.audit.sheet import sheet_text

    out = tmp_path / "sheet" / "conformance.md"
    assert main(["lean-audit", "--sheet", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == sheet_text(shipped_report)
    assert f"conformance sheet: {out}" in capsys.readouterr().out
    (tmp_path / "adir").mkdir()
    assert main(["lean-audit", "--sheet", str(tmp_path / "adir")]) == 2
