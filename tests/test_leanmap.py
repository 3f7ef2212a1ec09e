"""lean_map/ data and its one reader, qkverify.claims.metadata: the schema check,
strict validation, one [[decl]] per Lean declaration with the binders of its Lean
signature, and the map against the registered checks."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from qkverify.audit.lean_audit import coverage_failures, normalise_label, registry_failures
from qkverify.claims.metadata import MAP_DIR as DEFAULT_MAP_DIR
from qkverify.claims.metadata import SCHEMA_PATH, check_id, declarations, read_decls
from qkverify.claims.metadata import load as load_lean_map
from qkverify.errors import QKInputError

#: a predicate id: letters and digits in words joined by single underscores
PREDICATE_ID = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*$")

# The statements (with their labels) whose declarations have registered checks.
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
    return {d.name: d for d in declarations(entries)}


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
    count = Counter(d.name for d in declarations(entries))
    assert set(count) == set(public)
    assert set(count.values()) == {1}
    assert sum(count.values()) == 177
    for e in entries.values():
        assert tuple(d.name for d in e.decls if not d.is_unit) == e.lean_decls
        assert all(d.statement == e.id for d in e.decls)
    assert coverage_failures(declarations(entries), public) == []


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


def test_reason_only_where_no_check_is_registered(entries, decls):
    """The map says nothing about what is checked (lean-audit derives it): a ``reason`` is
    kept only for the declarations without a registered check (6 clustering check units)."""
    from qkverify.claims.registry import registered_check_ids

    reg = registered_check_ids()
    with_reason = [d for st in entries.values() for d in st.decls if d.reason]
    assert {d.check for d in with_reason} == {"clusters.dynamics", "clusters.low_rank_1d",
                                              "clusters.regime_good_triple", "clusters.regime_identity",
                                              "clusters.regime_minus_identity", "clusters.regime_paranormal"}
    assert all(d.check not in reg for d in with_reason)
    checked = {st.id for st in entries.values() if any(d.check in reg for d in st.decls)}
    assert checked == set(CHECKED)
    for sid, (label, _) in CHECKED.items():
        assert entries[sid].label == label


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
    assert "outside |λ_i| < 1" not in text            # misstated x/0 convention
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


# ---------------------------------------------------------------- the schema and the rules

def test_schema_is_a_valid_json_schema():
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


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
    with pytest.raises(QKInputError, match=r"^lean_map/profile\.toml: missing required field 'section'$"):
        load_lean_map(d)


FROBSQ = 'name = "Appendices.frobSq"\ncheck = "frobSq"\nkind = "def"'


@pytest.mark.parametrize("old,new,msg", [
    ('id = "symPart"', 'id = "skewPart"', "does not match the file name"),
    ('source = "paper"', 'source = "README"', "field 'source' must be one of paper, clusters, got 'README'"),
    ('  "Appendices.frobSq",', '  "Appendices.frobSq", "Appendices.frobSq",', "field 'lean_decls' lists an item twice"),
    ('section = "', 'section = 3\nx = "', "unknown field(s): x"),
    ('conventions = [', 'checker = "symPart"\nconventions = [', "unknown field(s): checker"),   # the old format
    ('label = "Definition A1"', 'label = 3', "field 'label' must be a string"),
    ('statement = """', 'statement = """   """\nold = """', "unknown field(s): old"),
    # [[decl]] tables
    (FROBSQ, FROBSQ + '\ncolour = "red"', '[[decl]] #1 (Appendices.frobSq): unknown field(s): colour'),
    (FROBSQ, FROBSQ + '\nstatus = "computed"', "[[decl]] #1 (Appendices.frobSq): unknown field(s): status"),
    ('check = "frobSq"', 'check = "Appendices.frobSq"', "must be 'frobSq'"),
    (FROBSQ, FROBSQ.replace('"def"', '"axiomatic"'), "field 'kind' must be one of theorem, lemma, def"),
    ('defining = ["frobSq_eq_sum_sq", "frobSq_nonneg", "frobSq_eq_zero_iff"]\n', '',
     "[[decl]] #1 (Appendices.frobSq): missing required field 'defining' (the defining lemmas"),
    (FROBSQ, FROBSQ.replace('"def"', '"theorem"'), "'defining' is for definitions only, not a theorem"),
    ('name = "Appendices.frobSq"', 'name = "Appendices. frobSq"', "is not a Lean declaration name"),
    (FROBSQ, FROBSQ + '\nreason = " "', "[[decl]] #1 (Appendices.frobSq): field 'reason' is empty"),
    ('lean_file = "formalization/Appendices/Common.lean"', 'lean_file = "formalization/Elsewhere.lean"',
     "is not in the statement's lean_files"),
    ('"Appendices.skewPart",\n]', '"Appendices.skewPart", "Appendices.profileA",\n]', "missing [[decl]] for Appendices.profileA"),
    ('source = "paper"', 'source = "clusters"', "clustering entries have no Lean declarations"),
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


HL = '{ binder = "hL", text = "L ≠ 0", predicate = "L_ne_zero" }'


@pytest.mark.parametrize("old,new,msg", [
    ('predicate = "L_ne_zero"', 'predicate = "L-ne-zero"', "'L-ne-zero' (hypotheses[0].predicate) is not a snake_case"),
    ('predicate = "L_ne_zero"', 'predicate = "_L"', "is not a snake_case predicate id"),
    ('binder = "hL"', 'binder = "h L"', "'h L' (hypotheses[0].binder) is not a Lean identifier"),
    (HL + ',\n]', HL + ',\n  { binder = "hL", text = "again", predicate = "again" },\n]', "share the binder name"),
    (HL, '{ binder = "hL", text = "L ≠ 0" }', "missing required field of hypotheses[0] 'predicate'"),
    (HL, HL[:-2] + ', why = "x" }', "unknown field(s) of hypotheses[0]: why"),
    (HL, HL[:-2] + ', unprobeable = "" }', "field 'hypotheses[0].unprobeable' is empty"),
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


def test_unprobeable_is_read(tmp_path):
    d = _copy_map(tmp_path)
    f = d / "frobSq_eq_frobSq_symPart_add_frobSq_skewPart.toml"
    f.write_text(f.read_text().replace(HL, HL[:-2] + ', unprobeable = "implied by the types" }', 1))
    st = load_lean_map(d)["frobSq_eq_frobSq_symPart_add_frobSq_skewPart"]
    hyps = [h for x in st.decls for h in x.hypotheses if h.binder == "hL"]
    assert hyps[0].unprobeable == "implied by the types" and hyps[1].unprobeable == ""


def test_check_unit_rules(tmp_path):
    text = (DEFAULT_MAP_DIR / "clusters_paranormal.toml").read_text(encoding="utf-8")
    for old, new, msg in (('check = "clusters.paranormal"', 'check = "Clusters.Paranormal"',
                           "check unit id 'Clusters.Paranormal' must look like clusters.good_triple"),
                          ('lean_file = ""', 'lean_file = "x.lean"', "no Lean name or file")):
        f = tmp_path / "clusters_paranormal.toml"
        f.write_text(text.replace(old, new, 1), encoding="utf-8")
        with pytest.raises(QKInputError, match=msg):
            load_lean_map(f)


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


def test_read_decls_rejects_garbage(tmp_path):
    f = tmp_path / "decls"
    f.write_text("# comment\nAppendices.frobSq\n\nAppendices.frobSq\nbad name here\n")
    with pytest.raises(QKInputError, match=r"decls:5: 'bad name here'"):
        read_decls(f)
    f.write_text("Appendices.frobSq\n\nAppendices.frobSq\nAppendices.symPart\n")
    assert read_decls(f) == ["Appendices.frobSq", "Appendices.symPart"]


# ---------------------------------------------------------------- the map against the code

def test_coverage_failures(entries, public):
    lean = declarations(entries)
    assert coverage_failures(lean, public) == []
    assert coverage_failures(lean, public + ["Appendices.brand_new"]) == [
        "Appendices.brand_new: in the declaration list but in no lean_map [[decl]]"]
    assert coverage_failures(lean, [n for n in public if n != "Appendices.frobSq"]) == [
        "Appendices.frobSq: mapped (lean_map/symPart.toml) but not in the declaration list"]


def test_registry_failures(entries):
    lean = declarations(entries)
    probs = registry_failures(lean, {"made_up_check", "frobSq_symPart_div"}, {"something_else"})
    assert probs == [
        "check 'made_up_check' is registered but no lean_map [[decl]] names it",
        "lean_map/frobSq_eq_frobSq_symPart_add_frobSq_skewPart.toml: Appendices.frobSq_symPart_div: predicate "
        "'L_ne_zero' of hL has no registered decision",
    ]
    assert registry_failures(lean, {"frobSq_symPart_div"}, None) == []


def test_normalise_label():
    assert normalise_label("Prop 5") == normalise_label("Proposition~5") == "proposition 5"
    assert normalise_label("Def A1") == "definition a1"
    assert normalise_label("Thm. 3") == "theorem 3"
    assert normalise_label("Lemma 10") == "lemma 10"
    assert normalise_label("profile_conj") == "profile_conj"


def test_live_registry_matches_lean_map():
    """Every registered check is named by a [[decl]], every predicate of a checked declaration is
    decided, every public declaration is mapped."""
    from qkverify.audit.run import lean_map_problems

    assert lean_map_problems() == []
