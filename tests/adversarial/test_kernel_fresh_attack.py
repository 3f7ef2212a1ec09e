"""A fresh attack on the kernel after the issue-18 fixes: each certificate below tells a
consistent false story -- its witnesses are made for the false claim (another matrix's spectrum,
a sample of another seed, an inverse of another matrix, …), not one edited field of a true
certificate.  None may be accepted (valid); past a limit the honest answer is undecided."""

from __future__ import annotations

import copy
import json

import pytest
from flint import fmpq_mat

import forge as F


def true_cert(statement: str, doc: dict, drop: tuple = ()) -> dict:
    """What the producer writes for the input document ``doc`` (a true certificate)."""
    from qkverify.claims.evaluate import evaluate
    from qkverify.search.strategies import reread

    return json.loads(json.dumps(evaluate(statement, reread(doc), drop=drop).certificate()))


def rec_of(cert: dict, check: str) -> dict:
    return next(r for r in cert["declarations"] if r["check"] == check)


M = lambda rows: {"kind": "matrix", "L": [[str(x) for x in r] for r in rows]}  # noqa: E731


# -- Definition 6 / Theorem 4 ------------------------------------------------------------------


def a01_profile_of_another_matrix():
    """π of diag(2, −1) (spectrum witness and values) stated for diag(2, 1)."""
    c = true_cert("profile", M([[2, 0], [0, -1]]))
    return c | {"input": M([[2, 0], [0, 1]])}


def a02_spectrum_of_the_transpose_scaled():
    """L = [[1, 2], [0, 1]]: a spectrum witness (and values) computed for 2S instead of S, scale halved."""
    c = true_cert("profile", M([[2, 4], [0, 2]]))
    return c | {"input": M([[1, 2], [0, 1]])}


def a03_one_root_counted_twice():
    """S = diag(1, 3): the factor (x − 1) listed with multiplicity 2, (x − 3) dropped: 'eigenvalues 1, 1'."""
    c = true_cert("profile", M([[1, 0], [0, 1]]))
    return c | {"input": M([[1, 0], [0, 3]])}


def a04_a_factor_split_in_two_equal_ones():
    """S = diag(2, 2): charpoly (x − 2)² written as two factors x − 2 and 2x − 4 (one root, 'two eigenvalues')."""
    c = true_cert("profile", M([[2, 0], [0, 2]]))
    w = c["witnesses"][0]
    w["factors"] = [{"poly": ["-2", "1"], "multiplicity": 1, "roots": [["2", "2"]]},
                    {"poly": ["-4", "2"], "multiplicity": 1, "roots": [["2", "2"]]}]
    return c


def a05_profile_d_zero_for_a_nsd_matrix():
    """L = diag(−1, −2): d = 1, stated 0 with c = 1 (α and β swapped in every list)."""
    c = true_cert("profile", M([[-1, 0], [0, -2]]))
    for r in c["declarations"]:
        if r["check"] == "profileC":
            r["value"] = {"exact": "1"}
        if r["check"] == "profileD":
            r["value"] = {"exact": "0"}
        if r["check"] == "profile":
            r["value"]["list"][2], r["value"]["list"][3] = {"exact": "1"}, {"exact": "0"}
        if r["check"] in ("alphaList", "betaList"):
            r["value"] = rec_of(c, "betaList" if r["check"] == "alphaList" else "alphaList")["value"]
    return c


def a06_theorem4_fails_on_a_valid_story():
    """profile_sum_eq_one 'fails' on [[1, 2], [3, 4]] with a spectrum witness of another matrix."""
    c = true_cert("profile_sum_eq_one", M([[1, 2], [3, 5]]))
    c = c | {"input": M([[1, 2], [3, 4]])}
    for r in c["declarations"]:
        if r["check"] == "profile_sum_eq_one":
            r["conclusion"] = "fails"
    c["verdict"] = "fails"
    return c


# -- ∃ and decompositions ----------------------------------------------------------------------


def a07_decomposition_with_p_not_psd():
    """S = diag(3, −1) = H + P, H = diag(0, 0), P = S: 'a decomposition with ‖P‖² = 10 ≠ 4: fails'."""
    from qkverify.claims.common import spectrum_witness

    ws = [spectrum_witness(fmpq_mat([[3, 0], [0, -1]]), "S"),
          {"kind": "fiber", "of": "d", "H": [["0", "0"], ["0", "0"]], "P": [["3", "0"], ["0", "-1"]]}]
    return F.certificate("profile_sum_eq_one", M([[3, 0], [0, -1]]), ws, [
        F.record(F.A + "profileD_eq_zero_decomp_commute", "fails", "exact", {"hL": True, "h": True})])


def a08_decomposition_claimed_for_d_nonzero():
    """S = diag(1, −3) (d ≠ 0) with h dropped: 'holds' from H = diag(1, −1), P = diag(0, −2)."""
    from qkverify.claims.common import spectrum_witness

    ws = [spectrum_witness(fmpq_mat([[1, 0], [0, -3]]), "S"),
          {"kind": "fiber", "of": "d", "H": [["1", "0"], ["0", "-1"]], "P": [["0", "0"], ["0", "-2"]]}]
    return F.certificate("profile_sum_eq_one", M([[1, 0], [0, -3]]), ws, [
        F.record(F.A + "profileD_eq_zero_decomp_commute", "holds", "exact", {"hL": True, "h": False}, dropped=["h"])])


def a09_orthogonal_extension_of_a_non_unit_family():
    """v = [[1, 1], [0, 1]], s = {0} (|v₀|² = 2), hv dropped: 'holds' from U with U[:, 0] = v₀ (not orthogonal)."""
    return F.certificate("profile_conj", {"kind": "family", "v": [["1", "1"], ["0", "1"]], "s": [0]},
                         [{"kind": "orthogonal", "of": "family", "U": [["1", "0"], ["1", "1"]]}],
                         [F.record(F.MT + "exists_orthogonal_cols", "holds", "exact", {"hv": False}, dropped=["hv"])])


def a10_no_extension_claimed_for_an_orthonormal_family():
    """v = I₂, s = {0, 1}: 'fails' (no orthogonal U) with no witness and hv true."""
    return F.certificate("profile_conj", {"kind": "family", "v": [["1", "0"], ["0", "1"]], "s": [0, 1]}, [],
                         [F.record(F.MT + "exists_orthogonal_cols", "fails", "exact", {"hv": True})])


def a11_theta_point_realised_by_the_wrong_factor():
    """p = (1/4, 1/4, 1/2, 0) ∈ Θ, N = 2: 'realised' by x = y = (1, 0), whose profile is (0, 0, 1, 0)."""
    return F.certificate("profile_rank_one", {"kind": "theta_point", "p": ["1/4", "1/4", "1/2", "0"], "N": 2},
                         [{"kind": "factor", "of": "theta", "x": ["1", "0"], "y": ["1", "0"]}],
                         [F.record(F.MT + "profiles_rank_one_eq_Theta", "holds", "exact", {"hN": True})])


def a12_theta_point_said_unrealisable():
    """p = (1/4, 1/4, 1/2, 0), N = 2: 'no rank-one matrix has this profile' (fails, no witness)."""
    return F.certificate("profile_rank_one", {"kind": "theta_point", "p": ["1/4", "1/4", "1/2", "0"], "N": 2}, [],
                         [F.record(F.MT + "profiles_rank_one_eq_Theta", "fails", "exact", {"hN": True})])


def a13_rank_one_from_a_false_rank_witness():
    """L = I₂ (rank 2): 'rank 1' from a minor and a kernel vector (1, −1) of another matrix; profile_rank_one holds."""
    rank = {"kind": "rank", "of": "L", "scale": "1", "rank": 1, "rows": [0], "cols": [0], "prime": "101",
            "minor_mod_p": "1", "kernel": [["1", "-1"]], "kernel_cols": [0], "kernel_minor_mod_p": "1"}
    return F.certificate("profile_rank_one", M([[1, 0], [0, 1]]), [rank],
                         [F.record(F.MT + "exists_smul_vecMulVec_of_rank_eq_one", "fails", "exact", {"hL": True})])


# -- heads ----------------------------------------------------------------------------------------


def a14_tied_head_said_nondegenerate():
    """W_Q = W_K = [[1, 0, 1]]: rank M = 1 < 2n = 2, stated 2 from a minor of another M."""
    from qkverify.claims.common import rank_witness

    inp = {"kind": "head", "W_Q": [["1", "0", "1"]], "W_K": [["1", "0", "1"]]}
    w = rank_witness(fmpq_mat([[1, 0, 1], [0, 1, 0]]), "M")
    return F.certificate("heads_have_balanced_attention", inp, [w],
                         [F.record(F.MT + "Nondegenerate", "computed", value={"bool": True})])


def a15_head_gram_in_a_fake_basis():
    """A head with a basis B and the inverse of another matrix as its inverse witness."""
    c = true_cert("heads_have_balanced_attention",
                  {"kind": "head", "W_Q": [["1", "0", "0"]], "W_K": [["0", "1", "0"]],
                   "B": [["1", "1", "0"], ["0", "1", "0"], ["0", "0", "1"]]})
    for w in c["witnesses"]:
        if w["kind"] == "inverse" and w["of"] == "B":
            w["rows"] = [["1", "0", "0"], ["0", "1", "0"], ["0", "0", "1"]]
    return c


def a16_weights_head_with_cells_of_another_head(tmp_path):
    """The hand-made weights head (ν = ±1) with the cells of a head whose ν = ±2."""
    import kernel_fixtures as K

    c = K.weights_certificate(tmp_path)
    for w in c["witnesses"]:
        if w["kind"] == "cells":
            w["cells"] = [[-2, 0, 1], [2, 0, 1]]  # [−2, −1) and [2, 3): "ν = ±2"
            w["grid_exponent"] = 0
    return c, tmp_path


def a17_weights_head_cell_root_on_its_open_end(tmp_path):
    """ν = ±1 claimed in the cells [−2, −1) and [0, 1): 1 is the excluded end of [0, 1)."""
    import kernel_fixtures as K

    c = K.weights_certificate(tmp_path)
    for w in c["witnesses"]:
        if w["kind"] == "cells":
            w["cells"] = [[-2, 0, 1], [0, 0, 1]]
    return c, tmp_path


def a18_weights_file_swapped(tmp_path):
    """The certificate of one weights file, the other head's file beside it under the recorded name."""
    import kernel_fixtures as K

    c = K.weights_certificate(tmp_path)
    K.write_weights(tmp_path / "model.safetensors", wq=[[2.0, 0.0, 0.0]], wk=[[0.0, 2.0, 0.0]])
    return c, tmp_path


# -- Appendices B, C ------------------------------------------------------------------------------


def _vec(x, **kw):
    return {"kind": "vector", "x": [str(v) for v in x], "normalize": False, **kw}


def a19_inverse_of_another_matrix_for_lemma_9():
    """trace_eq_statO 'fails' at x = (−3/5, 4/5), S = diag(−3/5, 4/5), from the inverse of another sI − S²."""
    c = true_cert("statO_eq_tsum_odd_moments", _vec(["-3/5", "4/5"], S=[["-3/5", "0"], ["0", "4/5"]]))
    for w in c["witnesses"]:
        if w["kind"] == "inverse":
            w["rows"] = [["2", "0"], ["0", "2"]]
    for r in c["declarations"]:
        if r["check"] == "trace_eq_statO":
            r["conclusion"] = "fails"
    return c


def a20_series_with_too_few_terms():
    """statO_eq_tsum 'fails' from 3 terms of the series claimed to 30 digits."""
    c = true_cert("statO_eq_tsum_odd_moments", _vec(["-3/5", "4/5"]))
    for w in c["witnesses"]:
        if w["kind"] == "series":
            w["terms"] = 3
    for r in c["declarations"]:
        if r["check"] == "statO_eq_tsum_odd_moments":
            r["conclusion"], r["evidence"] = "fails", "certified"
    return c


def a21_pairing_score_as_the_other_root():
    """pairingScore stated as the other root of its own quadratic (1 + √a instead of 1 − √a)."""
    c = true_cert("MemLambdaSet", _vec(["-3/5", "-1/5", "1/5", "3/5"]))
    for r in c["declarations"]:
        v = r.get("value", {})
        if r["check"] == "pairingScore" and "root" in v:
            v["root"]["lo"], v["root"]["hi"] = "1", "3"
        elif r["check"] == "pairingScore":
            r["value"] = {"root": {"poly": ["0", "-2", "1"], "lo": "1", "hi": "3"}}  # x² − 2x: 2 instead of 0
    return c


# -- RoPE -------------------------------------------------------------------------------------------


def a22_rope_forms_with_a_null_vector_of_a_regular_b0():
    """Forms B_0 = I, B_1 = R: 'B_0 is degenerate' from a vector not in its kernel, ropeT = 0."""
    c = true_cert("IsRoPELike", {"kind": "forms", "B": [[["1", "0"], ["0", "1"]], [["0", "-1"], ["1", "0"]]]})
    for w in c["witnesses"]:
        if w["kind"] == "inverse":
            w.pop("rows", None)
            w["null"] = ["1", "0"]
    for r in c["declarations"]:
        if "h0" in r["hypotheses"]:
            r["hypotheses"]["h0"] = False
            r.setdefault("dropped", []).append("h0")
    return c


# -- clustering regimes ------------------------------------------------------------------------------


def _triple(V):
    return {"kind": "triple", "Q": [["1", "0"], ["0", "1"]], "K": [["1", "0"], ["0", "1"]],
            "V": [[str(x) for x in r] for r in V]}


def a23_croots_with_multiplicities_swapped():
    """V = diag(2, 2, 3): the factor of 2 given multiplicity 1 and that of 3 multiplicity 2 ('3 is double')."""
    c = true_cert("clusters_paranormal", {"kind": "triple", "Q": [["1", "0", "0"]], "K": [["1", "0", "0"]],
                                          "V": [["2", "0", "0"], ["0", "2", "0"], ["0", "0", "3"]]})
    for w in c["witnesses"]:
        if w["kind"] == "croots":
            ms = [f["multiplicity"] for f in w["factors"]]
            for f, m in zip(w["factors"], reversed(ms)):
                f["multiplicity"] = m
    return c


def a24_definite_from_an_ldl_of_another_matrix():
    """QᵀK = [[1, 2], [2, 1]] (indefinite) 'positive definite' from the LDLᵀ of I."""
    c = true_cert("clusters_qk_positive_definite", {"kind": "triple", "Q": [["1", "0"], ["0", "1"]],
                                                    "K": [["1", "0"], ["0", "1"]], "V": [["1", "0"], ["0", "1"]]})
    return c | {"input": c["input"] | {"K": [["1", "2"], ["2", "1"]]}}


def a25_definite_from_a_vector_with_positive_form():
    """QᵀK = I 'not positive definite' from x = (1, 0) with xᵀSx = 1 > 0."""
    c = true_cert("clusters_qk_positive_definite", _triple([[1, 0], [0, 1]]))
    for w in c["witnesses"]:
        if w["kind"] == "definite":
            for k in ("perm", "L", "D"):
                w.pop(k, None)
            w["x"] = ["1", "0"]
    for r in c["declarations"]:
        if r["check"] == "clusters.qk_positive_definite":
            r["value"] = {"list": [{"bool": True}, {"bool": False}, {"bool": False}]}
    return c


def a26_eigenvector_of_another_eigenvalue():
    """V = diag(3, 1): the 'top eigenvector' (0, 1) of eigenvalue 1; ⟨Qφ, Kφ⟩ read off it."""
    c = true_cert("clusters_good_triple", {"kind": "triple", "Q": [["1", "0"], ["0", "-1"]],
                                           "K": [["1", "0"], ["0", "1"]], "V": [["3", "0"], ["0", "1"]]})
    for w in c["witnesses"]:
        if w["kind"] == "eigvec":
            w.pop("pivot", None)
            w.pop("prec", None)
            w["vector"] = ["0", "1"]
    for r in c["declarations"]:
        if r["check"] == "clusters.qk_phi1":
            r["value"] = {"exact": "-1"}
        if r["check"] == "clusters.good_triple":
            r["value"] = {"bool": False}
    return c


# -- Appendix A, Theorem 5 -----------------------------------------------------------------------------


def _law(**over):
    return {"kind": "law", "model": "iid", "N": 2, "L": {"gaussian": {"mean": "0", "variance": "1"}},
            "monte_carlo": {"sampler": "mt19937-boxmuller/2", "samples": 200, "delta": "1/1000"}} | over


def a27_monte_carlo_of_another_seed():
    """The sample drawn for one input stated for an equivalent spelling of it (the same law as a
    table of one law with an index per entry): another canonical input, so another derived seed."""
    c = true_cert("integral_frobSq_iid", _law())
    c["input"]["L"] = {"laws": [{"gaussian": {"mean": "0", "variance": "1"}}], "index": ["0,0", "0,0"]}
    return c


def a28_moments_of_another_law():
    """E‖L‖² & co. of variance 2 stated for variance 1 (hVar with σ² = 2)."""
    c = true_cert("integral_frobSq_iid", _law(L={"gaussian": {"mean": "0", "variance": "2"}}))
    c["input"]["L"] = {"gaussian": {"mean": "0", "variance": "1"}}
    return c


def a29_a_sample_presented_as_a_proof():
    """The Gaussian ratio corollary on a sample, stated as exact 'holds' (no sample object)."""
    c = true_cert("integral_frobSq_iid", _law())
    for r in c["declarations"]:
        if r["evidence"] == "empirical":
            r["evidence"], r["conclusion"] = "exact", "holds"
            r.pop("sample", None)
    c["evidence"], c["verdict"] = "exact", "holds"
    return c


def a30_a_sample_with_another_confidence():
    """The sample object says 1 − δ = 999999/1000000 while the input's δ is 1/1000."""
    c = true_cert("integral_frobSq_iid", _law())
    for r in c["declarations"]:
        if "sample" in r:
            r["sample"]["confidence"] = "999999/1000000"
    return c


def a31_trend_of_another_path():
    """Lemma 6's trend of the uniform law's paths stated for an equivalent spelling of the input
    (law_X given explicitly as γ): another derived seed, other paths."""
    law = {"family": "uniform", "lo": "0", "hi": "1"}
    c = true_cert("proportional_lobes", {"kind": "lobes", "law": law, "u": "1", "v": "1", "sizes": [16, 64, 256],
                                         "paths": 32, "delta": "1/1000"})
    c["input"]["law_X"] = dict(law)
    return c


def a32_limit_profile_preimage_outside_theta():
    """limitProfile_mem_projP_Theta at ρ = 1/2 from a 'preimage' θ = (0, 3/5, 0, 2/5)... not the Lean proof's."""
    c = true_cert("accumulation", {"kind": "rho", "rho": "1/2"})
    for w in c["witnesses"]:
        if w["kind"] == "theta_point":
            w["point"] = ["0", "4/5", "1/5", "0"]
    return c


# -- verdicts, records, statements ----------------------------------------------------------------------


def a33_verdict_laundered():
    """A failing record under a 'holds' verdict."""
    c = true_cert("profile_sum_eq_one", M([[1, 2], [3, 4]]))
    c["declarations"][0]["conclusion"] = "fails"
    c["verdict"] = "holds"
    return c


def a34_a_theorem_record_as_a_definition():
    """profile_sum_eq_one stated 'computed' with a value, as if it were a definition."""
    c = true_cert("profile_sum_eq_one", M([[1, 2], [3, 4]]))
    r = rec_of(c, "profile_sum_eq_one")
    r["conclusion"], r["value"] = "computed", {"bool": True}
    return c


ATTACKS = [v for k, v in sorted(globals().items()) if k[:1] == "a" and k[1:3].isdigit()]


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.__name__ for a in ATTACKS])
def test_no_forgery_is_accepted(attack, tmp_path):
    import inspect

    made = attack(tmp_path) if inspect.signature(attack).parameters else attack()
    doc, base = made if isinstance(made, tuple) else (made, None)
    out = F.verify(copy.deepcopy(doc), base)
    assert out.status != "valid", (attack.__name__, attack.__doc__)


def test_at_least_30_attacks():
    assert len(ATTACKS) >= 30
