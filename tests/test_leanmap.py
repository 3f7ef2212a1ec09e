"""lean_map/ data and qkverify.audit.leanmap: loading, strict validation,
one [[decl]] per Lean declaration with the binders of its Lean signature."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from qkverify.audit.leanmap import (
    DEFAULT_MAP_DIR,
    PREDICATE_ID,
    all_decls,
    check_against_registry,
    check_id,
    consistency,
    load_lean_map,
    normalise_label,
    read_decls,
    registry_problems,
)
from qkverify.errors import QKInputError

# The claims that have statement-level checkers, with their exact hypothesis names.
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
    "MemLambdaSet": ("Definition (Appendix B)", ()),
    "pairingScore_eq": ("Lemma 7", ("mem_Lambda",)),
    "pairingScore_eq_one_iff": ("Lemma 8", ("mem_Lambda",)),
    "statO": ("Definition (Appendix C)", ()),
    "statO_eq_tsum_odd_moments": ("Lemma 9", ("mem_Lambda", "spectrum_of_symmetric")),
    "proportional_lobes": ("Lemma 6", ("positive", "finite_nonzero_second_moment", "positive_scales")),
    "accumulation": ("Theorem 5", ("two_n_le_k", "positive_lobes", "finite_nonzero_second_moment", "positive_scales")),
    "pairing_bound": ("Lemma 2", ("lamPlus_ne_zero",)),
    "integral_frobSq_iid": ("Corollary 1", ("mean_zero", "common_variance", "sigma_ne_zero", "gaussian")),
    "integral_frobSq_qk": ("Corollary 2", ("mean_zero", "variances_nonzero")),
    "expected_symmetric_energy_low_rank_qk": ("Proposition 5", ("gaussian", "variances_nonzero", "n_le_N")),
    "IsAttentionFunction": ("Definition 1", ()),
    "IsBilinearScore": ("Definition 2", ()),
    "biaffine_decomposition": ("Lemma 1", ("bidegree_le_one_one",)),
    "IsRoPELike": ("Definition 3", ("B0_nondegenerate",)),
    "isRoPELike_iff": ("Proposition 1", ("B0_nondegenerate", "k_ge_2")),
    "head": ("Definition 4", ()),
    "transformer": ("Definition 5", ()),
    "near_identity": ("Proposition 2", ("convex_outputs", "M_linear_growth")),
    "qkv_homogenizes_to_bilinear": ("Proposition 3", ("qkv_attention",)),
    # clustering-regimes definitions checked through check units without a Lean name
    "clusters_good_triple": ("Definition 4.1", ("top_eigenvalue_simple_positive", "qk_positive_on_phi1")),
    "clusters_qk_positive_definite": ("Definition (QᵀK ≻ 0)", ()),
    "clusters_paranormal": ("Definition (paranormal V)", ()),
    "clusters_good_triple_multiplicity": ("Definition (good triple with multiplicity)",
                                          ("qk_positive_definite", "V_paranormal")),
}

# Prop binders read off the Lean signatures by hand (formalization/ in
# aodesky/attention-bilinear-forms): (binder, predicate) in signature order.
PINNED_BINDERS = {
    # §1 (MainText/{Homogenization,BiaffineDecomposition,RoPELike,NearIdentity}.lean)
    "Appendices.MainText.IsPolyFun": [],
    "Appendices.MainText.IsAttentionFunction": [],
    "Appendices.MainText.IsBilinearScore": [],
    "Appendices.MainText.IsPolyBidegreeLeOneOne": [],
    "Appendices.MainText.biaffine_components": [("h", "biaffine_decomposition_holds")],
    "Appendices.MainText.biaffine_decomposition": [("hP", "bidegree_le_one_one")],
    "Appendices.MainText.ropeL": [],
    "Appendices.MainText.ropeL0Equiv": [("h0", "B0_nondegenerate")],
    "Appendices.MainText.ropeT": [("h0", "B0_nondegenerate")],
    "Appendices.MainText.IsRoPELike": [("h0", "B0_nondegenerate")],
    "Appendices.MainText.isRoPELike_iff": [("h0", "B0_nondegenerate")],
    "Appendices.MainText.eq_ropeT_one_of_forall": [("hk", "k_ge_two"), ("h0", "B0_nondegenerate"), ("hS", "ropeT_eq_pow")],
    "Appendices.MainText.head": [],
    "Appendices.MainText.transformer": [],
    "Appendices.MainText.IsAttentionOutput": [],
    "Appendices.MainText.attentionBlock": [],
    "Appendices.MainText.norm_attentionBlock_le": [("hA", "heads_convex_outputs")],
    "Appendices.MainText.near_identity": [("hA", "heads_convex_outputs"), ("hM", "M_linear_growth")],
    "Appendices.MainText.qkvScore": [],
    "Appendices.MainText.homForm": [],
    "Appendices.MainText.homForm_apply": [],
    "Appendices.MainText.homScore": [],
    "Appendices.MainText.dehom": [],
    "Appendices.MainText.homScore_eq": [],
    "Appendices.MainText.isPolyFun_bilinear": [],
    "Appendices.MainText.qkv_homogenizes_to_bilinear": [("ha", "qkv_attention_functions")],
    "Appendices.frobSq_symPart_div": [("hL", "L_ne_zero")],
    "Appendices.frobSq_skewPart_div": [("hL", "L_ne_zero")],
    "Appendices.frobSq_symPart": [],
    "Appendices.frobSq_eq_frobSq_symPart_add_frobSq_skewPart": [],
    "Appendices.MainText.profile_scale": [("hS", "symPart_ne_zero")],
    "Appendices.MainText.profileA_symPart": [],
    "Appendices.MainText.one_sub_profileA": [("hL", "L_ne_zero")],
    "Appendices.MainText.profiles_rank_one_eq_Theta": [("hN", "N_ge_two")],
    "Appendices.MainText.profile_rank_one": [("hL", "rank_eq_one"), ("hnorm", "norm_eq_one")],
    "Appendices.MainText.profile_smul_vecMulVec": [("hu", "u_unit"), ("hv", "v_unit"), ("hs", "s_pos")],
    "Appendices.MainText.profile_conj": [("hU", "U_orthogonal")],
    "Appendices.profileA": [],
    "Appendices.profile_sum_eq_one": [("hL", "L_ne_zero")],
    "Appendices.profileA_nonneg": [],
    "Appendices.profileD_eq_zero_decomp_commute": [("hL", "L_ne_zero"), ("h", "profileD_eq_zero")],
    "Appendices.alphaList": [("hS", "is_symmetric")],
    "Appendices.MemLambdaSet": [],
    "Appendices.sum_sq_complex": [("_hx", "mem_Lambda")],
    "Appendices.pairingScore_eq_one_iff": [("hx", "mem_Lambda")],
    "Appendices.memLambdaSet_iotaMap_iff": [],
    "Appendices.GramForm.symPart_eq_half_conj": [],
    "Appendices.GramForm.trace_pow_symPart": [("hk", "k_pos")],
    "Appendices.GramForm.card_charpoly_roots_symPart": [],
    "Appendices.GramForm.charpoly_roots_filter_ne_zero": [("hM", "stacked_surjective")],
    "Appendices.GramForm.exists_isSortedNormalizedNonzeroSpectrum": [("hM", "stacked_surjective")],
    "Appendices.GramForm.statO_eq_trace": [("hM", "stacked_surjective"), ("hn", "n_pos"),
                                           ("h", "sorted_normalized_spectrum")],
    "Appendices.trace_eq_statR": [("hS", "S_symmetric"), ("h", "mem_Lambda"), ("hσ", "eigenvalues_perm_eq")],
    "Appendices.GramForm.isSortedNormalizedNonzeroSpectrum_unique": [("h", "sorted_normalized_spectrum"),
                                                                     ("h'", "sorted_normalized_spectrum_of_S")],
    "Appendices.MainText.profile_of_spectrum": [("hk", "two_n_le_k"), ("hS", "S_symmetric"), ("hx", "x_pos"),
                                                ("hy", "y_pos"), ("hroots", "spectrum_eq")],
    "Appendices.integral_frobSq_iid": [("hMemLp", "memLp_two"), ("hVar", "second_moment_eq_sigma_sq")],
    "Appendices.integral_frobSq_symPart_div_integral_frobSq_iid": [
        ("hIndep", "entries_independent"), ("hMemLp", "memLp_two"), ("hMean", "mean_zero"),
        ("hVar", "second_moment_eq_sigma_sq"), ("hσ", "sigma_ne_zero"), ("hN", "N_pos")],
    "Appendices.expected_symmetric_energy_low_rank_qk": [
        ("hn", "n_pos"), ("hnN", "n_le_N"), ("hvK", "vK_ne_zero"), ("hvQ", "vQ_ne_zero"),
        ("hmeas", "entries_aemeasurable"), ("hindep", "entries_independent"),
        ("hlawK", "WK_entries_gaussian"), ("hlawQ", "WQ_entries_gaussian")],
    "Appendices.MainText.rank_balance": [("hrank", "rank_le_n")],
    "Appendices.MainText.finrank_le_of_posDefOn": [("hrank", "rank_le_n"), ("hV", "symPart_posdef_on")],
    "Appendices.MainText.heads_have_balanced_attention": [("hnd", "stacked_surjective")],
    "Appendices.MainText.gram_eq_symPart": [],
    "Appendices.MainText.near_identity": [("hA", "heads_convex_outputs"), ("hM", "M_linear_growth")],
    "Appendices.MainText.eq_ropeT_one_of_forall": [("hk", "k_ge_two"), ("h0", "B0_nondegenerate"),
                                                   ("hS", "ropeT_eq_pow")],
    "Appendices.MainText.pairing_bound": [("hS", "is_symmetric"), ("hplus", "lamPlus_ne_zero")],
}
PINNED_INSTANCES = {
    "Appendices.integral_frobSq_iid": ["probability_measure"],
    "Appendices.MainText.near_identity": ["nontrivial"],
    "Appendices.MainText.radical_eq_ker": [],          # `omit` both FiniteDimensional instances
    "Appendices.MainText.gram_eq_symPart": ["finite_dimensional"],  # only H's is kept
    "Appendices.MainText.finrank_radical": ["finite_dimensional", "finite_dimensional"],
    "Appendices.frobSq_symPart_div": [],
}


@pytest.fixture(scope="module")
def entries():
    return load_lean_map()


@pytest.fixture(scope="module")
def decls(entries):
    return {d.name: d for d in all_decls(entries)}


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
    spec = [e for e in entries.values() if e.source == "paper"]
    clusters = [e for e in entries.values() if e.source == "clusters"]
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
    # clustering-regimes statements carry check units without a Lean name (name "", check clusters.*)
    assert all(e.decls and all(d.is_unit and d.check.startswith("clusters.") for d in e.decls) for e in clusters)
    assert all(e.lean_decls and e.lean_files for e in spec)


def test_every_public_declaration_in_exactly_one_decl_table(entries, public):
    count = Counter(d.name for d in all_decls(entries))
    assert set(count) == set(public)
    assert set(count.values()) == {1}
    assert sum(count.values()) == 177
    for e in entries.values():
        assert tuple(d.name for d in e.decls if not d.is_unit) == e.lean_decls
        assert all(d.statement == e.id for d in e.decls)
    checkers = {e.checker for e in entries.values() if e.checker}
    assert consistency(checkers, entries, public) == []


def test_check_ids_are_names_without_namespace(decls):
    for name, d in decls.items():
        assert d.check == re.sub(r"^Appendices\.(MainText\.)?", "", name)
    assert len({d.check for d in decls.values()}) == 177
    assert check_id("Appendices.MemLambdaSet.abs_entry_lt_one") == "MemLambdaSet.abs_entry_lt_one"
    assert decls["Appendices.GramForm.statO_eq_trace"].check == "GramForm.statO_eq_trace"


def test_kinds(decls):
    kinds = Counter(d.kind for d in decls.values())
    assert kinds["theorem"] + kinds["lemma"] == 124
    assert sum(d.is_definition for d in decls.values()) == 53
    assert decls["Appendices.MemLambdaSet"].kind == "structure"
    assert decls["Appendices.MainText.IsAttentionFunction"].kind == "structure"
    assert decls["Appendices.MainText.homForm_apply"].kind == "lemma"
    assert decls["Appendices.MainText.norm_attentionBlock_le"].kind == "lemma"
    assert decls["Appendices.MainText.profile_conj"].kind == "theorem"
    assert decls["Appendices.GramForm.IsSortedNormalizedNonzeroSpectrum"].kind == "def"
    for d in decls.values():
        if not d.is_definition:
            assert d.defining == ()


@pytest.mark.parametrize("name", sorted(PINNED_BINDERS))
def test_hypotheses_are_the_lean_binders(decls, name):
    d = decls[name]
    assert [(h.binder, h.predicate) for h in d.hypotheses] == PINNED_BINDERS[name]
    if name in PINNED_INSTANCES:
        assert [i.predicate for i in d.instances] == PINNED_INSTANCES[name]


def test_probability_statements_carry_the_measure_instance(decls):
    for d in decls.values():
        if "probability space" in d.arguments:
            assert "probability_measure" in [i.predicate for i in d.instances], d.name


def test_predicates_snake_case_and_reused(decls):
    preds = Counter()
    for d in decls.values():
        for p in d.predicates:
            assert PREDICATE_ID.match(p), (d.name, p)
            preds[p] += 1
        for h in d.hypotheses:
            if h.text == "L ≠ 0":
                assert h.predicate == "L_ne_zero"
            if "MemLambdaSet" in h.text:
                assert h.predicate == "mem_Lambda"
    assert preds["L_ne_zero"] == 16      # Lemma 5 (2), Theorem 4 (13), one_sub_profileA
    assert preds["mem_Lambda"] == 28     # Lemma 7 (10), Lemma 8 (6), Lemma 9 (12)
    assert preds["stacked_surjective"] == 11   # Theorem 3 (3 with hnd) and Lemma 10 (8 with hM)
    assert preds["probability_measure"] == 17  # Corollaries 1, 2, Proposition 5, Lemma 6, Theorem 5


def test_l_ne_zero_exactly_where_lean_has_it(decls):
    with_hl = sorted(n for n, d in decls.items() if "L_ne_zero" in d.predicates)
    assert with_hl == sorted(
        ["Appendices.frobSq_symPart_div", "Appendices.frobSq_skewPart_div", "Appendices.MainText.one_sub_profileA"]
        + [f"Appendices.{x}" for x in (
            "profile_sum_eq_one", "profileA_eq_zero_iff", "profileA_eq_one_iff", "profileB_eq_zero_iff",
            "profileB_eq_one_iff", "profileD_eq_zero_iff_forall", "profileD_eq_zero_iff_decomp",
            "profileD_eq_zero_decomp_commute", "profileD_eq_one_iff", "profileC_eq_zero_iff_forall",
            "profileC_eq_zero_iff_decomp", "profileC_eq_zero_decomp_commute", "profileC_eq_one_iff")])
    # the profile definitions take no hypothesis
    for x in ("profileA", "profileB", "profileC", "profileD"):
        assert decls[f"Appendices.{x}"].hypotheses == ()
    assert decls["Appendices.MainText.profile"].hypotheses == ()


def test_definitions_have_defining_lists(decls):
    assert decls["Appendices.frobSq"].defining == ("frobSq_eq_sum_sq", "frobSq_nonneg", "frobSq_eq_zero_iff")
    assert decls["Appendices.MemLambdaSet"].defining == (
        "MemLambdaSet.mono", "MemLambdaSet.unit", "MemLambdaSet.middle_neg", "MemLambdaSet.middle_pos")
    assert decls["Appendices.MainText.homForm"].defining == ("homForm_apply",)


def test_decl_lean_files_and_blueprint_labels(entries, decls):
    for e in entries.values():
        for d in e.decls:
            if d.is_unit:  # a clustering check unit: no Lean file
                assert d.lean_file == "" and e.source == "clusters"
                continue
            assert d.lean_file in e.lean_files and d.lean_file.startswith("formalization/")
    assert decls["Appendices.MainText.profile"].lean_file == "formalization/MainText/RankOneLocus.lean"
    assert decls["Appendices.MainText.profile"].blueprint == "prop:rank-one"
    assert decls["Appendices.MainText.exists_orthogonal_cols"].blueprint == "prop:rank-one"
    assert decls["Appendices.symPart"].blueprint == "def:parts"
    assert decls["Appendices.proportional_lobes"].blueprint == "lem:proportional"
    # each [[decl]] names the environment of the shipped skeleton whose \lean{} lists it
    skel = json.loads((Path(__file__).resolve().parents[1] / "qkverify/data/blueprint.json").read_text())
    env = {n: e["label"] for e in skel["environments"] for n in e["lean"]}
    assert {n: d.blueprint for n, d in decls.items()} == env


def test_statement_blueprint_fields(entries):
    got = {i: (entries[i].blueprint, entries[i].blueprint_number) for i in
           ("symPart", "expected_symmetric_energy_low_rank_qk", "MemLambdaSet", "statO", "profile_conj", "profile")}
    assert got == {
        "symPart": ("def:parts", "Definition A1"),
        "expected_symmetric_energy_low_rank_qk": ("prop:low-rank", "Proposition 5"),
        "MemLambdaSet": ("def:balanced", "Definition A2"),
        "statO": ("def:moment-statistics", "Definition A3"),
        "profile_conj": ("prop:rank-one", "Proposition 4"),
        "profile": ("def:profile", "Definition 6"),
    }


def test_all_declarations_only_mapped_with_a_reason(decls):
    assert {d.status for d in decls.values()} == {"mapped"}
    assert all(d.reason.strip() for d in decls.values())


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


def test_numbering_recorded(entries):
    e = entries["expected_symmetric_energy_low_rank_qk"]
    assert (e.label, e.seed_label) == ("Proposition 5", "Proposition 6")
    assert "Proposition 6" in e.numbering_note and "Proposition 5" in e.numbering_note
    assert "Definition 1" in entries["symPart"].numbering_note
    assert sorted(x.id for x in entries.values() if x.seed_label != x.label) == [
        "clusters_good_triple", "expected_symmetric_energy_low_rank_qk"]


def test_issue9_data_fixes(entries):
    text = "\n".join(p.read_text(encoding="utf-8") for p in DEFAULT_MAP_DIR.glob("*.toml"))
    assert "m_ge_1" not in text                       # invented hypothesis removed
    assert "iota_map" not in text and "mirror /" not in text   # code names that do not exist
    assert "qkverify/claims/moments.py" in text       # the series checker with tail bounds now exists
    assert "outside |λ_i| < 1" not in text            # misstated x/0 convention
    assert entries["MemLambdaSet"].hypotheses == () and entries["statO"].hypotheses == ()
    assert any("±1" in c for c in entries["statO"].conventions)
    assert any("m = 0" in c for c in entries["MemLambdaSet"].conventions)


def test_clusters_paper_labels(entries):
    labels = {e.label for e in entries.values() if e.source == "clusters"}
    assert {"Definition 4.1", "Theorem 2.1", "Theorem 3.1", "Theorem 4.2", "Theorem 5.2", "Theorem 8.5"} <= labels


def test_conventions_recorded(entries):
    joined = lambda i: " ".join(entries[i].conventions)  # noqa: E731
    assert "π(0) = (0,0,0,0)" in joined("profile") and "max(λ_i, 0)" in joined("profile")
    assert "arbitrary basis" in joined("heads_have_balanced_attention")
    assert "hnorm" in joined("profile_rank_one") and "2 ≤ N" in joined("profile_rank_one")
    assert "nonzero variances" in joined("expected_symmetric_energy_low_rank_qk")
    assert "B_j = P_{m−j}" in joined("IsBilinearScore")
    assert "no independence" in joined("integral_frobSq_iid")


# ---------------------------------------------------------------- validation

def _copy_map(tmp_path: Path, ids=("symPart", "profile", "frobSq_eq_frobSq_symPart_add_frobSq_skewPart")) -> Path:
    d = tmp_path / "lean_map"
    d.mkdir()
    for i in ids:
        shutil.copy(DEFAULT_MAP_DIR / f"{i}.toml", d / f"{i}.toml")
    return d


def test_seed_label_needs_a_note(tmp_path):
    d = _copy_map(tmp_path)
    f = d / "profile.toml"
    f.write_text(f.read_text().replace('seed_label = "Definition 6"', 'seed_label = "Definition 7"'))
    with pytest.raises(QKInputError, match=r"profile\.toml: seed_label 'Definition 7' differs .* numbering_note is missing"):
        load_lean_map(d)


def test_missing_field_names_the_file(tmp_path):
    d = _copy_map(tmp_path)
    f = d / "profile.toml"
    f.write_text("\n".join(l for l in f.read_text().splitlines() if not l.startswith("section")))
    with pytest.raises(QKInputError, match=r"profile\.toml: missing required field 'section'"):
        load_lean_map(d)


@pytest.mark.parametrize("old,new,msg", [
    ('id = "symPart"', 'id = "skewPart"', "does not match the file name"),
    ('status = "checked"', 'status = "no checker yet"', "checker 'symPart' is set but status"),
    ('source = "paper"', 'source = "README"', "source must be one of"),
    ('  "Appendices.frobSq",', '  "Appendices.frobSq", "Appendices.frobSq",', "listed twice"),
    ('hypotheses = []\nconventions', 'hypotheses = [ { name = "x" } ]\nconventions', "exactly 'name', 'text'"),
    ('checker = "symPart"', 'checker = 3', "field 'checker' must be a str"),
    # [[decl]] tables
    ('check = "frobSq"\nkind = "def"', 'check = "frobSq"\nkind = "def"\ncolour = "red"', "unknown field(s) colour"),
    ('check = "frobSq"', 'check = "Appendices.frobSq"', "must be 'frobSq'"),
    ('check = "frobSq"\nkind = "def"', 'check = "frobSq"\nkind = "axiomatic"', "kind must be one of"),
    ('defining = ["frobSq_eq_sum_sq", "frobSq_nonneg", "frobSq_eq_zero_iff"]\n', '', "needs 'defining'"),
    ('name = "Appendices.frobSq"\ncheck = "frobSq"\nkind = "def"', 'name = "Appendices.frobSq"\ncheck = "frobSq"\nkind = "theorem"',
     "'defining' is for definitions only"),
    ('blueprint = "def:parts"\nstatus = "mapped"', 'blueprint = "def:parts"\nstatus = "computed"\nstatus2 = 1', "unknown field(s) status2"),
    ('blueprint = "def:parts"\nstatus = "mapped"', 'blueprint = "def:parts"\nstatus = "checked"', "is 'computed', not 'checked'"),
    ('status = "mapped"\nreason = "no check registered; statement checker \'symPart\' writes format-1 certificates only"\n\n[[decl]]\nname = "Appendices.symPart"',
     'status = "mapped"\nreason = " "\n\n[[decl]]\nname = "Appendices.symPart"', "needs a 'reason'"),
    ('lean_file = "formalization/Appendices/Common.lean"', 'lean_file = "formalization/Elsewhere.lean"',
     "is not in the statement's lean_files"),
    ('"Appendices.skewPart",\n]', '"Appendices.skewPart", "Appendices.profileA",\n]', "missing [[decl]] for Appendices.profileA"),
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


@pytest.mark.parametrize("old,new,msg", [
    ('predicate = "L_ne_zero"', 'predicate = "L-ne-zero"', "predicate id 'L-ne-zero' is not snake_case"),
    ('predicate = "L_ne_zero"', 'predicate = "_L"', "is not snake_case"),
    ('binder = "hL"', 'binder = "h L"', "binder 'h L' is not a Lean identifier"),
    ('{ binder = "hL", text = "L ≠ 0", predicate = "L_ne_zero" },\n]',
     '{ binder = "hL", text = "L ≠ 0", predicate = "L_ne_zero" },\n  { binder = "hL", text = "again", predicate = "again" },\n]',
     "share the binder name"),
    ('{ binder = "hL", text = "L ≠ 0", predicate = "L_ne_zero" }', '{ binder = "hL", text = "L ≠ 0" }',
     "exactly 'binder', 'text', 'predicate'"),
])
def test_malformed_hypotheses(tmp_path, old, new, msg):
    d = _copy_map(tmp_path)
    f = d / "frobSq_eq_frobSq_symPart_add_frobSq_skewPart.toml"
    text = f.read_text()
    assert old in text
    f.write_text(text.replace(old, new, 1))
    with pytest.raises(QKInputError, match="frobSq_eq_frobSq_symPart_add_frobSq_skewPart.toml") as err:
        load_lean_map(d)
    assert msg in str(err.value) and "\n" not in str(err.value)


def test_name_outside_the_declaration_list(tmp_path):
    d = _copy_map(tmp_path)
    f = d / "symPart.toml"
    f.write_text(f.read_text().replace("Appendices.skewPart", "Appendices.skewPartNew")
                 .replace('check = "skewPart"', 'check = "skewPartNew"'))
    with pytest.raises(QKInputError, match=r"symPart\.toml: .*Appendices\.skewPartNew is not in the public declaration list"):
        load_lean_map(d)
    assert "Appendices.skewPartNew" in load_lean_map(d, known_decls=False)["symPart"].lean_decls


def test_declaration_mapped_twice(tmp_path):
    d = _copy_map(tmp_path)
    text = (d / "symPart.toml").read_text()
    (d / "zz_copy.toml").write_text(text.replace('id = "symPart"', 'id = "zz_copy"'))
    with pytest.raises(QKInputError, match=r"zz_copy\.toml: Appendices\.\w+ is already mapped in lean_map/symPart\.toml"):
        load_lean_map(d)
    block = text[text.index("[[decl]]"):text.index("[[decl]]", text.index("[[decl]]") + 1)]
    (d / "zz_copy.toml").unlink()
    (d / "symPart.toml").write_text(text + "\n" + block)
    with pytest.raises(QKInputError, match=r"symPart\.toml: .*mapped twice in this file"):
        load_lean_map(d)


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


def test_code_references_must_name_qkverify(tmp_path):
    d = _copy_map(tmp_path)
    f = d / "symPart.toml"
    f.write_text(f.read_text().replace('checker = "symPart"', 'code = ["os.path:join"]\nchecker = "symPart"'))
    with pytest.raises(QKInputError, match="code reference 'os.path:join'"):
        load_lean_map(d)
    f.write_text(f.read_text().replace('["os.path:join"]', '["qkverify.audit.leanmap:check_id"]'))
    assert load_lean_map(d)["symPart"].code == ("qkverify.audit.leanmap:check_id",)


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
    dup = ents["symPart"]
    ents["symPart"] = replace(dup, lean_decls=dup.lean_decls + ("Appendices.profileA",))
    ra = ents["rank_balance"]
    ents["rank_balance"] = replace(ra, lean_decls=("Appendices.MainText.rank_balance",))
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
