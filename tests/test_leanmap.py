"""lean_map/ data and qkverify.leanmap: loading, validation, consistency."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest

from qkverify.errors import QKInputError
from qkverify.audit.leanmap import (
    DEFAULT_MAP_DIR,
    check_against_registry,
    consistency,
    load_lean_map,
    normalise_label,
    read_decls,
    registry_problems,
)

# The claims that have (or will have) checkers, with their exact hypothesis names.
CHECKED = {
    "symPart": ("Definition A1", ()),
    "frobSq_eq_frobSq_symPart_add_frobSq_skewPart": ("Lemma 5", ("L_ne_zero",)),
    "profile": ("Definition 6", ("L_ne_zero",)),
    "profile_sum_eq_one": ("Theorem 4", ("L_ne_zero",)),
    "profile_scale": ("Lemma 4", ("S_ne_zero",)),
    "profile_conj": ("profile_conj", ("U_orthogonal",)),
    "profile_rank_one": ("Proposition 4", ("rank_one", "N_ge_2")),
    "rank_balance": ("Lemma 3", ("rank_le_n",)),
    "heads_have_balanced_attention": ("Theorem 3", ("stacked_surjective",)),
    "GramForm.charpoly_roots_filter_ne_zero": ("Lemma 10", ("M_surjective", "n_ge_1")),
    "pairing_bound": ("Lemma 2", ("lamPlus_ne_zero",)),
    "integral_frobSq_iid": ("Corollary 1", ("mean_zero", "common_variance", "sigma_ne_zero", "gaussian")),
    "integral_frobSq_qk": ("Corollary 2", ("mean_zero", "variances_nonzero")),
    "expected_symmetric_energy_low_rank_qk": ("Proposition 5", ("gaussian", "variances_nonzero", "n_le_N")),
}


@pytest.fixture(scope="module")
def entries():
    return load_lean_map()


@pytest.fixture(scope="module")
def public():
    return read_decls()


def test_shipped_declaration_list(public):
    assert len(public) == 177
    assert public[0] == "Appendices.MainText.IsPolyFun"
    assert public[-1] == "Appendices.GramForm.statR_eq_trace"
    assert "Appendices.MainText.rank_balance" in public


def test_map_has_one_entry_per_statement(entries):
    assert len(entries) == 40
    spec = [e for e in entries.values() if e.source == "SPEC.md"]
    clusters = [e for e in entries.values() if e.source == "CLUSTERS.md"]
    assert len(spec) == 30 and len(clusters) == 10
    labels = {e.label for e in spec}
    expected = ({f"Definition {i}" for i in range(1, 7)} | {"Definition A1"}
                | {f"Lemma {i}" for i in range(1, 11)} | {f"Proposition {i}" for i in range(1, 6)}
                | {"Corollary 1", "Corollary 2", "Theorem 3", "Theorem 4", "Theorem 5", "profile_conj",
                   "Definition (Appendix B)", "Definition (Appendix C)"})
    assert labels == expected
    for e in entries.values():
        assert e.path.name == f"{e.id}.toml"
    assert all(e.lean_decls == () and e.lean_files == () for e in clusters)
    assert all(e.lean_decls and e.lean_files for e in spec)


def test_every_public_declaration_in_exactly_one_entry(entries, public):
    count = Counter(d for e in entries.values() for d in e.lean_decls)
    assert set(count) == set(public)
    assert max(count.values()) == 1
    assert sum(count.values()) == 177
    checkers = {e.checker for e in entries.values() if e.checker}
    assert consistency(checkers, entries, public) == []


def test_checked_entries(entries):
    checked = {e.id for e in entries.values() if e.status == "checked"}
    assert checked == set(CHECKED)
    for cid, (label, hyps) in CHECKED.items():
        e = entries[cid]
        assert e.label == label
        assert e.checker == cid
        assert e.hypothesis_names == hyps
        assert e.certificates == (f"certificates/{cid}/",)
    for e in entries.values():
        if e.id not in CHECKED:
            assert (e.checker, e.status, e.certificates) == ("", "no checker yet", ())


def test_specific_groupings(entries):
    assert entries["profile"].lean_decls == tuple(
        f"Appendices.{n}" for n in ("sortDesc", "alphaList", "betaList", "profileA", "profileB",
                                    "profileC", "profileD")) + ("Appendices.MainText.profile",)
    assert set(entries["profile_conj"].lean_decls) == {
        "Appendices.MainText.profile_conj", "Appendices.MainText.exists_orthogonal_cols"}
    assert len(entries["profile_sum_eq_one"].lean_decls) == 17
    assert len(entries["GramForm.charpoly_roots_filter_ne_zero"].lean_decls) == 16
    assert entries["heads_have_balanced_attention"].lean_files == (
        "formalization/MainText/BalancedHeads.lean",)
    assert "formalization/Appendices/BalancedBimodalSpectra/SimplexFaces.lean" in \
        entries["profile_sum_eq_one"].lean_files
    assert (DEFAULT_MAP_DIR / "GramForm.charpoly_roots_filter_ne_zero.toml").is_file()


def test_prop5_numbering_recorded(entries):
    e = entries["expected_symmetric_energy_low_rank_qk"]
    assert (e.label, e.seed_label) == ("Proposition 5", "Proposition 6")
    assert "Proposition 6" in e.numbering_note and "Proposition 5" in e.numbering_note
    # every other entry agrees with its seed label
    assert [x.id for x in entries.values() if x.seed_label != x.label] == [e.id]


def test_conventions_recorded(entries):
    joined = lambda i: " ".join(entries[i].conventions)  # noqa: E731
    assert "π(0) = (0,0,0,0)" in joined("profile") and "max(λ_i, 0)" in joined("profile")
    assert "arbitrary basis" in joined("heads_have_balanced_attention")
    assert "N ≥ 2" in joined("profile_rank_one")
    assert "nonzero variances" in joined("expected_symmetric_energy_low_rank_qk")
    assert "B_j = P_{m−j}" in joined("IsBilinearScore")


# ---------------------------------------------------------------- validation

def _copy_map(tmp_path: Path, ids=("symPart", "profile")) -> Path:
    d = tmp_path / "lean_map"
    d.mkdir()
    for i in ids:
        shutil.copy(DEFAULT_MAP_DIR / f"{i}.toml", d / f"{i}.toml")
    return d


def test_missing_field_names_the_file(tmp_path):
    d = _copy_map(tmp_path)
    f = d / "profile.toml"
    f.write_text("\n".join(l for l in f.read_text().splitlines() if not l.startswith("section")))
    with pytest.raises(QKInputError, match=r"profile\.toml: missing required field 'section'"):
        load_lean_map(d)


@pytest.mark.parametrize("old,new,msg", [
    ('id = "symPart"', 'id = "skewPart"', "does not match the file name"),
    ('status = "checked"', 'status = "no checker yet"', "checker 'symPart' is set but status"),
    ('seed_label = "Definition A1"', 'seed_label = "Definition 1"', "numbering_note is missing"),
    ('source = "SPEC.md"', 'source = "README"', "source must be one of"),
    ('"Appendices.frobSq",', '"Appendices.frobSq", "Appendices.frobSq",', "listed twice"),
    ('"Appendices.frobSq",', '"not a name",', "not a Lean declaration name"),
    ('hypotheses = []', 'hypotheses = [ { name = "x" } ]', "exactly 'name' and 'text'"),
    ('checker = "symPart"', 'checker = 3', "field 'checker' must be a str"),
])
def test_malformed_entry(tmp_path, old, new, msg):
    d = _copy_map(tmp_path)
    f = d / "symPart.toml"
    text = f.read_text()
    assert old in text
    f.write_text(text.replace(old, new, 1))
    with pytest.raises(QKInputError, match="symPart.toml") as err:
        load_lean_map(d)
    assert msg in str(err.value)
    assert "\n" not in str(err.value)


def test_bad_toml_and_missing_dir(tmp_path):
    d = _copy_map(tmp_path)
    (d / "broken.toml").write_text('id = "broken\n')
    with pytest.raises(QKInputError, match=r"broken\.toml: not valid TOML"):
        load_lean_map(d)
    with pytest.raises(QKInputError, match="not found"):
        load_lean_map(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(QKInputError, match="no lean_map entries"):
        load_lean_map(tmp_path / "empty")


def test_read_decls_rejects_garbage(tmp_path):
    f = tmp_path / "decls"
    f.write_text("# comment\nAppendices.frobSq\n\nAppendices.frobSq\nbad name here\n")
    with pytest.raises(QKInputError, match=r"decls:5: 'bad name here'"):
        read_decls(f)
    f.write_text("Appendices.frobSq\n\nAppendices.frobSq\nAppendices.symPart\n")
    assert read_decls(f) == ["Appendices.frobSq", "Appendices.symPart"]


# ---------------------------------------------------------------- consistency

def test_consistency_reports_each_kind_of_problem(entries, public):
    ents = dict(entries)
    reg = {e.checker for e in ents.values() if e.checker} - {"rank_balance"} | {"made_up_claim"}
    # declaration listed twice and one public declaration uncovered
    dup = ents["symPart"]
    ents["symPart"] = type(dup)(**{**dup.__dict__, "lean_decls": dup.lean_decls + ("Appendices.profileA",)})
    ra = ents["rank_balance"]
    ents["rank_balance"] = type(ra)(**{**ra.__dict__, "lean_decls": ("Appendices.MainText.rank_balance",)})
    probs = consistency(reg, ents, public)
    assert "registered claim 'made_up_claim' has no lean_map entry with checker = \"made_up_claim\"" in probs
    assert "lean_map entry rank_balance: checker 'rank_balance' is not registered" in probs
    assert "declaration Appendices.profileA listed by several entries: profile, symPart" in probs
    assert ("public declaration Appendices.MainText.finrank_le_of_posDefOn is not covered by any "
            "lean_map entry") in probs
    assert len(probs) == 4


def test_registry_problems_with_fake_claims(entries):
    H = lambda n: SimpleNamespace(name=n)  # noqa: E731
    good = SimpleNamespace(id="rank_balance", label="Lemma 3", hypotheses=(H("rank_le_n"),),
                           lean_decls=("rank_balance", "Appendices.MainText.finrank_le_of_posDefOn"))
    bad = SimpleNamespace(id="profile_rank_one", label="Prop 4", hypotheses=(H("rank_one"), H("N_ge_1")),
                          lean_decls=("Appendices.MainText.profile_conj",))
    relabel = SimpleNamespace(id="pairing_bound", label="Lemma 7", hypotheses=(H("lamPlus_ne_zero"),),
                              lean_decls=())
    probs = registry_problems([good, bad, relabel], entries)
    assert probs == [
        "claim 'profile_rank_one': hypothesis names differ from lean_map "
        "(lean_map only: N_ge_2; registry only: N_ge_1)",
        "claim 'profile_rank_one': declarations not listed in lean_map/profile_rank_one.toml: "
        "Appendices.MainText.profile_conj",
        "claim 'pairing_bound': registry label 'Lemma 7' differs from lean_map label 'Lemma 2'",
    ]


def test_normalise_label():
    assert normalise_label("Prop 5") == normalise_label("Proposition~5") == "proposition 5"
    assert normalise_label("Def A1") == "definition a1"
    assert normalise_label("Thm. 3") == "theorem 3"
    assert normalise_label("Lemma 10") == "lemma 10"
    assert normalise_label("profile_conj") == "profile_conj"


def test_live_registry_matches_lean_map(entries):
    """Whatever is registered now must have an entry with the same hypothesis names."""
    probs = check_against_registry(entries)
    blocking = [p for p in probs if p.startswith("registered claim") or "hypothesis names" in p
                or "declarations not listed" in p]
    assert blocking == []
