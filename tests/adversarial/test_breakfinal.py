"""breakfinal: a last hostile-prover pass over the kernel.  Each forgery tells a consistent false
story (its witnesses are made for the false claim); none may be valid."""

from __future__ import annotations

import forge as F


def test_a_singular_basis_with_a_null_vector_inverse_witness_is_refused():
    # W_Q = e₀ᵀ, W_K = e₁ᵀ in ℝ², B = [[1, 0], [0, 0]] is not a basis.  The inverse witness of B is
    # given in its "singular" form (a kernel vector (0, 1), correct: B·(0, 1) = 0), which is Lean's
    # B⁻¹ = 0 for a matrix -- but a Basis is invertible by its type, so the input is not of the type.
    # The Gram matrix in B is 0 (signature (0, 0, 2) ≠ (1, 1, 0)): "Theorem 3 fails with hnd true".
    from flint import fmpq_mat

    from qkverify.claims.common import rank_witness, spectrum_witness

    inp = {"kind": "head", "W_Q": [["1", "0"]], "W_K": [["0", "1"]], "B": [["1", "0"], ["0", "0"]]}
    ws = [rank_witness(fmpq_mat([[0, 1], [1, 0]]), "M"), spectrum_witness(fmpq_mat(2, 2), "gram"),
          {"kind": "inverse", "of": "B", "null": ["0", "1"]}]
    doc = F.certificate("heads_have_balanced_attention", inp, ws,
                        [F.record(F.MT + "heads_have_balanced_attention", "fails", "exact", {"hnd": True})])
    out = F.verify(doc)
    assert out.status == "invalid" and "basis" in out.reason, out


def test_posdefon_is_not_stated_false_on_the_span_of_dependent_rows():
    # S = diag(1, 1, −1) is ≻ 0 on span{(1, 0, 0)}; V's rows (1, 0, 0), (2, 0, 0) span it but are
    # dependent.  "hV is false" (dropped) with rank witnesses of L and V is a false statement.
    from flint import fmpq_mat

    from qkverify.claims.common import rank_witness

    L = [[1, 0, 0], [0, 1, 0], [0, 0, -1]]
    inp = {"kind": "matrix_subspace", "L": [[str(x) for x in r] for r in L], "n": 3,
           "V": [["1", "0", "0"], ["2", "0", "0"]]}
    ws = [rank_witness(fmpq_mat(L), "L"), rank_witness(fmpq_mat([[1, 0, 0], [2, 0, 0]]), "V")]
    doc = F.certificate("rank_balance", inp, ws, [F.record(F.MT + "finrank_le_of_posDefOn", "holds", "exact",
                                                           {"hrank": True, "hV": False}, dropped=["hV"])])
    assert F.verify(doc).status != "valid"


def _slow_spectrum_certificate(n: int, digits: int) -> dict:
    # breakfinal's SLOW INPUT: a symmetric n × n matrix of `digits`-digit rationals (p/7) with a made-up
    # spectrum (x^n).  Its characteristic polynomial is what costs: 160 × 600 digits took 55-77 s
    # before the kernel answered invalid.
    import random

    rnd = random.Random(7)
    L = [[None] * n for _ in range(n)]
    for i in range(n):
        for j in range(i, n):
            p = rnd.randrange(10 ** (digits - 1), 10 ** digits) * rnd.choice((1, -1))
            L[i][j] = L[j][i] = f"{p}/7" if p % 7 else str(p // 7)
    w = {"kind": "spectrum", "of": "S", "scale": "7",
         "factors": [{"poly": ["0", "1"], "multiplicity": n, "roots": [["0", "0"]]}]}
    return F.certificate("profile_sum_eq_one", {"kind": "matrix", "L": L}, [w],
                         [F.record(F.A + "profileA_nonneg", "holds")])


def test_a_huge_digit_matrix_is_undecided_before_its_characteristic_polynomial():
    out = F.verify(_slow_spectrum_certificate(160, 600))
    assert out.status == "undecided" and "MAX_CHARPOLY_WORK" in out.reason and "1994-bit" in out.reason, out


def test_the_charpoly_work_cap_leaves_real_heads_and_small_huge_digit_matrices():
    # J·Z·Zᵀ of a real head: 2n = 64 (all-MiniLM-L6-v2, entries ≤ 90 bits) and 2n = 256 (d_head 128,
    # float32 weights: 110-130 bits) are within the cap; a small matrix of huge entries too.
    from qkverify.kernel.limits import MAX_CHARPOLY_WORK, charpoly_work

    assert charpoly_work(64, 90) < charpoly_work(256, 160) < MAX_CHARPOLY_WORK < charpoly_work(160, 1994)
    out = F.verify(_slow_spectrum_certificate(4, 600))
    assert out.status == "invalid" and "do not multiply" in out.reason, out


def _sampled_certificates():
    import json

    from qkverify.claims.evaluate import evaluate
    from qkverify.io.law_inputs import LawInput, LobesInput

    mc = LawInput.from_document({"model": "qk", "N": 2, "n": 1, "law_K": "gaussian", "law_Q": "gaussian",
                                 "monte_carlo": {"samples": 300, "delta": "1/1000"}})
    lobes = LobesInput.from_document({"law": {"family": "pareto", "scale": "1", "shape": "4"}, "u": "1", "v": "1",
                                      "sizes": [16, 128], "paths": 16})
    return [json.loads(json.dumps(evaluate(s, i).certificate()))
            for s, i in (("expected_symmetric_energy_low_rank_qk", mc), ("accumulation", lobes))]


def test_a_sampled_input_has_one_spelling():
    # The seed hashes the input's text: "2/2" for "1" (or 300.0 for 300) would be another seed for one
    # input, and a prover could try spellings until a true statement samples 'inconsistent'.
    mc, lobes = _sampled_certificates()
    assert F.verify(mc).status == F.verify(lobes).status == "valid"
    for doc, path, spelling in [(mc, ("input", "W_K", "gaussian", "variance"), "2/2"),
                                (mc, ("input", "W_K", "gaussian", "mean"), "0/3"),
                                (mc, ("input", "monte_carlo", "samples"), 300.0),
                                (lobes, ("input", "law", "shape"), "8/2"),
                                (lobes, ("input", "u"), "3/3")]:
        out = F.verify(F.edit(doc, path, spelling))
        assert out.status == "invalid" and ("canonical" in out.reason or "JSON integer" in out.reason), (spelling, out)
    # spellings a pattern can see are refused by the schema of the sampled inputs
    for doc, path, spelling in [(mc, ("input", "W_K", "gaussian", "mean"), "-0"),
                                (mc, ("input", "W_K", "gaussian", "variance"), "01"),
                                (mc, ("input", "W_Q", "gaussian", "variance"), "1/1"),
                                (lobes, ("input", "v"), "+1"), (lobes, ("input", "v"), "1/-2")]:
        out = F.verify(F.edit(doc, path, spelling))
        assert out.status == "invalid" and "schema" in str(out), (spelling, out)


def test_the_seed_refuses_a_non_canonical_spelling_itself():
    import pytest

    from qkverify.kernel.jsonio import Invalid
    from qkverify.kernel.rules import sampling as KS

    inp = {"kind": "lobes", "u": "1", "v": "2/4", "sizes": [16, 128]}
    with pytest.raises(Invalid, match="canonical"):
        KS.seed(inp)
    assert KS.seed({**inp, "v": "1/2"}) == KS.seed({"v": "1/2", "u": "1", "sizes": [16, 128], "kind": "lobes"})
