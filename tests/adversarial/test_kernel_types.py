"""Issue 18, class 3: Lean's types, enforced by the well-formedness pass before anything else.
Each certificate below tells a consistent story about an input that the Lean signature's types
do not admit (a non-square `Matrix (Fin N) (Fin N) ℝ`, two index types, vectors of different
lengths, a singular basis, …); every one must be invalid, naming the input."""

from __future__ import annotations

import pytest

import forge as F


def _invalid_input(doc, base=None):
    out = F.verify(doc, base)
    assert out.status == "invalid" and out.check in ("input", "schema"), out
    return out


def test_non_square_L_profile_rank_one_fails():
    # L = [[0, 1, 0]] (1 × 3): "rank 1, ‖L‖² = 1, and π(L) is not the trace formula" (the old kernel
    # read the diagonal of the 1 × 1 corner and agreed)
    rank = {"kind": "rank", "of": "L", "scale": "1", "rank": 1, "rows": [0], "cols": [1], "prime": "101",
            "minor_mod_p": "1"}
    doc = F.certificate("profile_rank_one", {"kind": "matrix", "L": [["0", "1", "0"]]}, [rank],
                        [F.record(F.MT + "profile_rank_one", "fails", "exact", {"hL": True, "hnorm": True})])
    _invalid_input(doc)


def test_u_and_v_of_different_lengths():
    # u = (1), v = (0, 1): "s·u vᵀ has another profile than the formula"
    doc = F.certificate("profile_rank_one", {"kind": "rank_one", "u": ["1"], "v": ["0", "1"], "s": "1"}, [],
                        [F.record(F.MT + "profile_smul_vecMulVec", "fails", "exact", {"hu": True, "hv": True, "hs": True})])
    _invalid_input(doc)


def test_a_singular_basis_for_theorem_3(tmp_path):
    # W_Q = e₀ᵀ, W_K = e₁ᵀ in ℝ², B = [[1, 0], [0, 0]] is not a basis: "the Gram matrix in it has the
    # wrong signature, so Theorem 3 fails although hnd holds"
    from flint import fmpq_mat

    from qkverify.claims.common import rank_witness

    from qkverify.claims.common import spectrum_witness

    M = fmpq_mat([[0, 1], [1, 0]])
    inp = {"kind": "head", "W_Q": [["1", "0"]], "W_K": [["0", "1"]], "B": [["1", "0"], ["0", "0"]]}
    gram = fmpq_mat(2, 2)  # Bᵀ S B with S = [[0, 1/2], [1/2, 0]]: 0, signature (0, 0, 2) ≠ (1, 1, 0)
    doc = F.certificate("heads_have_balanced_attention", inp, [rank_witness(M, "M"), spectrum_witness(gram, "gram")],
                        [F.record(F.MT + "heads_have_balanced_attention", "fails", "exact", {"hnd": True})])
    out = F.verify(doc)  # a basis carries its inverse; this one has none (and none exists)
    assert out.status == "invalid" and "inverse witness of B" in out.reason, out
    fake = F.edit(doc, ("witnesses",), doc["witnesses"] + [{"kind": "inverse", "of": "B", "rows": [["1", "0"], ["0", "1"]]}])
    out = F.verify(fake)
    assert out.status == "invalid" and "inverse witness of B" in out.check, out


def test_a_first_column_compared_on_its_first_coordinate_only():
    # v = [[1, 0, 5]] (one vector of length 3, not N vectors of length N), s = {0}, U = [[1]]
    doc = F.certificate("profile_conj", {"kind": "family", "v": [["1", "0", "5"]], "s": [0]},
                        [{"kind": "orthogonal", "of": "family", "U": [["1"]]}],
                        [F.record(F.MT + "exists_orthogonal_cols", "holds", "exact", {"hv": False}, dropped=["hv"])])
    _invalid_input(doc)


@pytest.mark.parametrize("inp,statement,record", [
    # U of another size than L: "π(UᵀLU) ≠ π(L)"
    ({"kind": "matrix_pair", "L": [["1", "2"], ["0", "1"]], "U": [["1"]]}, "profile_conj",
     ("Appendices.MainText.profile_conj", "fails", {"hU": True})),
    # H, P of another size than L
    ({"kind": "matrix_fiber", "L": [["1", "0"], ["0", "0"]], "face": "d", "H": [["0"]], "P": [["1"]]},
     "profile_sum_eq_one", ("Appendices.profileD_eq_zero_iff_decomp", "fails", {"hL": True})),
    # rows of V not in ℝ^N
    ({"kind": "matrix_subspace", "L": [["1", "0"], ["0", "1"]], "n": 0, "V": [["1", "0", "0"]]}, "rank_balance",
     ("Appendices.MainText.finrank_le_of_posDefOn", "fails", {"hrank": False, "hV": True})),
    # K of another shape than Q
    ({"kind": "triple", "Q": [["1", "0"]], "K": [["1"]], "V": [["1", "0"], ["0", "1"]]},
     "clusters_qk_positive_definite", ("clusters.qk_positive_definite", "computed", {})),
    # V not square
    ({"kind": "triple", "Q": [["1", "0"]], "K": [["1", "0"]], "V": [["1", "0"]]},
     "clusters_paranormal", ("clusters.paranormal", "computed", {})),
    # forms on spaces of two dimensions
    ({"kind": "forms", "B": [[["1"]], [["1", "0"], ["0", "1"]]]}, "IsRoPELike",
     ("Appendices.MainText.ropeL", "computed", {})),
    # y of another length than x
    ({"kind": "vector", "x": ["1", "2"], "normalize": False, "y": ["1"]}, "MemLambdaSet",
     ("Appendices.iotaMap_add", "fails", {})),
    # a law grid of the wrong shape
    ({"kind": "law", "model": "iid", "N": 2, "L": [[{"atoms": [["0", "1"]]}]]}, "integral_frobSq_iid",
     ("Appendices.integral_frobSq_iid", "fails", {"hMemLp": True, "hVar": True})),
    # probabilities that do not sum to 1: not a law
    ({"kind": "law", "model": "iid", "N": 1, "L": {"atoms": [["0", "1/2"], ["1", "1/3"]]}}, "integral_frobSq_iid",
     ("Appendices.integral_frobSq_iid", "fails", {"hMemLp": True, "hVar": True})),
    # a quadratic potential whose Q is not k × k
    ({"kind": "attention_function", "k": 2, "N": 1, "scores": ["x0_0", "x1_0"],
      "potential": {"quadratic": {"Q": [["1"]], "b": ["0", "0"]}}, "weights": {"polynomial": ["1", "0"]}},
     "IsAttentionFunction", ("Appendices.MainText.IsAttentionFunction", "computed", {})),
    # a bilinear part of the wrong size
    ({"kind": "biaffine", "N": 2, "P": "u0*v0", "decomposition": {"B": [["1"]], "L": ["0", "0"], "R": ["0", "0"], "D": "0"}},
     "biaffine_decomposition", ("Appendices.MainText.biaffine_components", "fails", {"h": True})),
    # an exponential law with rate 0 is no law
    ({"kind": "lobes", "law": {"family": "exponential", "rate": "0"}, "u": "1", "v": "1", "seed": 0, "sizes": [2, 4]},
     "proportional_lobes", ("Appendices.proportional_lobes", "inconsistent", {})),
])
def test_inputs_outside_their_lean_types(inp, statement, record):
    name, concl, hyps = record
    r = F.record(name, concl, "empirical" if concl == "inconsistent" else "exact", hyps)
    if name.endswith(("ropeL", "qk_positive_definite", "paranormal", "IsAttentionFunction")):
        r["value"] = {"bool": True}
    _invalid_input(F.certificate(statement, inp, [], [r]))


def test_an_odd_vector_for_a_declaration_on_2m_coordinates():
    # x = (−1, 0, 1): MemLambdaSet takes x : Fin (2m) → ℝ; "x ∈ Λ is false" is not a statement about it
    doc = F.certificate("MemLambdaSet", {"kind": "vector", "x": ["-1", "0", "1"], "normalize": False}, [],
                        [F.record(F.A + "MemLambdaSet", "computed", value={"bool": False})])
    _invalid_input(doc)
    doc = F.certificate("statO_eq_tsum_odd_moments", {"kind": "vector", "x": ["-1", "0", "1"], "normalize": False}, [],
                        [F.record(F.A + "MemLambdaSet.abs_entry_lt_one", "fails", "exact", {"h": False}, dropped=["h"])])
    _invalid_input(doc)


def test_S_of_another_size_than_x_for_lemma_9():
    # Lemma 9: S is 2m × 2m for x of length 2m; here x has length 2 and S is 1 × 1
    inp = {"kind": "vector", "x": ["-1/2", "1/2"], "normalize": False, "S": [["1"]]}
    doc = F.certificate("statO_eq_tsum_odd_moments", inp, [], [F.record(
        F.A + "trace_eq_statO", "fails", "exact", {"hS": True, "h": False, "hσ": False}, dropped=["h", "hσ"])])
    _invalid_input(doc)
