"""Issue 23, Theorem 4's decomposition faces as Lean states them (SimplexFaces.lean,
shapeD_eq_zero_iff_decomp / shapeD_eq_zero_decomp_commute): no commutation in the iff, the →
direction beyond rational spectra, and h dropped stateable (diag(1, −3) fails with a
non-existence argument).  Expected values by hand or with sympy, independently of the producer."""

import sympy
from flint import fmpq_mat

from qkverify.claims.evaluate import evaluate
from qkverify.io.inputs import input_from_document

DECOMP = ("profileD_eq_zero_iff_decomp", "profileD_eq_zero_decomp_commute", "profileC_eq_zero_iff_decomp",
          "profileC_eq_zero_decomp_commute")


def records(run):
    return {r.meta.check: r for r in run.records}


def _sym(rows):
    return sympy.Matrix([[sympy.Rational(x) for x in r] for r in rows])


def test_iff_decomp_needs_no_commutation():
    # S = [[1, 1], [1, 0]] = H + P with H = [[0, 1], [1, 0]] (spectrum ±1) and P = diag(1, 0) ⪰ 0;
    # H S ≠ S H (H S = [[1, 0], [1, 1]], S H = [[1, 1], [0, 1]]), which Lean does not ask for;
    # d = 0: eigenvalues of S are (1 ± √5)/2, α₁ = 1.618 > β₁ = 0.618
    inp = input_from_document({"L": [[1, 1], [1, 0]], "face": "d", "H": [[0, 1], [1, 0]], "P": [[1, 0], [0, 0]]})
    H, S = _sym([[0, 1], [1, 0]]), _sym([[1, 1], [1, 0]])
    assert H * S != S * H
    run = evaluate("profile_sum_eq_one", inp)
    assert records(run)["profileD_eq_zero_iff_decomp"].conclusion == "holds"
    assert ("fiber", "d") not in run.subject.witnesses  # the input's own H, P are the witness


def test_iff_decomp_beyond_rational_spectra():
    # S = [[2, 1], [1, 0]]: eigenvalues 1 ± √2, α = (1 + √2), β = (√2 − 1), d = 0.  A rational
    # H (spectrum symmetric about 0) and P ⪰ 0 with S = H + P are shown; checked here with sympy.
    run = evaluate("profile_sum_eq_one", input_from_document({"L": [[2, 1], [1, 0]]}))
    rec = records(run)["profileD_eq_zero_iff_decomp"]
    assert rec.conclusion == "holds" and rec.result.evidence == "exact"
    w = run.subject.witnesses[("fiber", "d")]
    H, P = _sym(w["H"]), _sym(w["P"])
    assert H + P == _sym([[2, 1], [1, 0]]) and H == H.T and P == P.T
    t = sympy.Symbol("t")
    cp = H.charpoly(t).as_expr()
    assert sympy.expand(cp.subs(t, -t) - cp) == 0 or sympy.expand(cp.subs(t, -t) + cp) == 0
    assert all(ev >= 0 for ev in P.eigenvals())


def test_iff_decomp_witness_for_random_irrational_heads():
    # heads with a kernel (N > 2n) and irrational eigenvalues: the → direction is shown every time
    # the face is reached; each witness re-checked with sympy
    import random

    rng = random.Random(7)
    shown = 0
    for _ in range(6):
        N, n = 4, 1
        WQ = [[rng.randint(-2, 2) for _ in range(N)] for _ in range(n)]
        WK = [[rng.randint(-2, 2) for _ in range(N)] for _ in range(n)]
        run = evaluate("profile_sum_eq_one", input_from_document({"W_Q": WQ, "W_K": WK}, "matrix"))
        for face in "dc":
            rec = records(run).get(f"profile{face.upper()}_eq_zero_iff_decomp")
            if rec is None or ("fiber", face) not in run.subject.witnesses:
                continue
            w = run.subject.witnesses[("fiber", face)]
            H, P = _sym(w["H"]), _sym(w["P"])
            L = sympy.Matrix(WK).T * sympy.Matrix(WQ)
            S = (L + L.T) / 2
            assert (H + P if face == "d" else H - P) == S and all(ev >= 0 for ev in P.eigenvals())
            assert rec.conclusion == "holds"
            shown += 1
    assert shown >= 3


def test_decomp_commute_with_h_dropped_fails_on_diag_1_m3():
    # diag(1, −3): α = (1, 0), β = (3, 0), d = (3 − 1)²/10 = 2/5 ≠ 0; no H, P exist (β₁ > α₁),
    # so ∃ H P … fails (was refused: "d ≠ 0 and no candidate decomposition is given")
    inp = input_from_document({"L": [[1, 0], [0, -3]]})
    run = evaluate("profile_sum_eq_one", inp, drop=("h",), only=("profileD_eq_zero_decomp_commute",))
    rec = records(run)["profileD_eq_zero_decomp_commute"]
    assert rec.hypotheses == {"hL": True, "h": False} and rec.dropped == ("h",)
    assert rec.conclusion == "fails" and "no decomposition exists" in rec.result.reason
    # the iff itself holds there: d ≠ 0 and no decomposition
    run = evaluate("profile_sum_eq_one", inp, only=("profileD_eq_zero_iff_decomp",))
    assert records(run)["profileD_eq_zero_iff_decomp"].conclusion == "holds"


def test_decomp_commute_irrational_pairs_with_a_rational_witness():
    # S = [[1, 1], [1, −1]]: eigenvalues ±√2 (α = β = (√2)), c = d = 0; H = S, P = 0 commute and
    # ‖P‖² = 0 = c‖L‖²: shown exactly although the spectrum is irrational
    run = evaluate("profile_sum_eq_one", input_from_document({"L": [[1, 1], [1, -1]]}))
    assert records(run)["profileD_eq_zero_decomp_commute"].conclusion == "holds"
    w = run.subject.witnesses[("fiber", "d")]
    assert _sym(w["P"]) == sympy.zeros(2, 2) and _sym(w["H"]) == _sym([[1, 1], [1, -1]])


def test_decomposition_module_on_the_face_only():
    from qkverify.exact.inertia import inertia_ldlt
    from qkverify.math.decomposition import decomposition, spectrum_symmetric

    S = fmpq_mat([[0, 1, 0], [1, 0, 1], [0, 1, 1]])   # charpoly t³ − t² − 2t + 1: three irrational roots
    for face in "dc":
        out = decomposition(S, face)
        if out is not None:
            H, P = out
            assert S == (H + P if face == "d" else H - P) and spectrum_symmetric(H)
            assert inertia_ldlt(P).n_neg == 0
    assert decomposition(fmpq_mat([[1, 0], [0, -3]]), "d") is None
