"""The built-in audit suite: hand-made exact inputs covering every face and
vertex fiber of the simplex, exact ties, rank one, antisymmetric, indefinite,
N = 1, nondegenerate and degenerate heads, and orthogonal conjugations.

Each case is (name, input); the audit runs every registered claim whose
input kind fits and whose hypotheses hold.  ``L = 0`` is included on
purpose: the audit must reject it with a clear message.
"""

from __future__ import annotations

import random

from flint import fmpq, fmpq_mat

from ..io.inputs import (FamilyInput, FiberInput, HeadInput, LawInput, LobesInput, MatrixInput, OrthoInput,
                         SpectrumInput,
                         RankOneInput, RhoInput, SubspaceInput, ThetaPointInput, TripleInput,
                         VectorInput)
from ..exact.matrix import cayley_orthogonal, random_antisymmetric


def _m(rows) -> fmpq_mat:
    return fmpq_mat([[fmpq(x) if not isinstance(x, str) else fmpq(*map(int, x.split("/"))) for x in r] for r in rows])


MATRICES = {
    # name: (rows, n for Lemma 3 or None)
    "nilpotent_e12": ([[0, 1], [0, 0]], 1),                       # (1/2, 1/2, 0, 0), rank one
    "sqrt2_tie": ([[1, 1], [1, -1]], 2),                           # (0, 1, 0, 0): α = β = √2, vertex b = 1
    "diag_2_m1": ([[2, 0], [0, -1]], 2),                           # (0, 4/5, 1/5, 0)
    "rank_one_3_4_5": ([["3/5", "4/5"], [0, 0]], 1),                # (8/25, 8/25, 9/25, 0)
    "irrational_1234": ([[1, 2], [3, 4]], 2),                      # (1/60, 3/20, 5/6, 0), face d = 0
    "face_a0_indefinite": ([[1, 2], [2, -3]], 2),                  # symmetric: a = 0
    "vertex_a1_antisymmetric": ([[0, 1, 2], [-1, 0, 3], [-2, -3, 0]], 3),
    "face_b0_positive_definite": ([[2, 1], [0, 1]], 2),            # S ≻ 0, not symmetric
    "vertex_c1_psd": ([[2, 1], [1, 2]], 2),
    "vertex_d1_nsd": ([[-1, 0], [0, -3]], 2),
    "face_c0_rational": ([[1, 1, 0], [-1, -2, 0], [0, 0, 0]], 3),  # β ≥ α, with skew part
    "face_d0_eigenspace_split": ([[1, 2, 0], [2, 1, 0], [0, 0, 3]], 3),  # α = (3,3), β = (1,0)
    "interior_3x3": ([[1, 2, 0], [3, 4, 1], [0, 5, -2]], 3),
    "mixed_order_4x4": ([[3, 0, 0, 0], [0, 1, 0, 0], [0, 0, -2, 0], [0, 0, 0, -2]], 4),  # α=(3,1), β=(2,2): c,d > 0
    "N1_positive": ([[3]], 1),                                      # (0, 0, 1, 0)
    "N1_negative": ([["-2/7"]], 1),                                 # (0, 0, 0, 1)
    "rank_one_negative_trace": ([[-1, -2], [-2, -4]], 1),          # t = −1: (0, 0, 0, 1)
    "zero_matrix": ([[0, 0], [0, 0]], 1),                           # rejected: no profile
}


def _heads() -> dict[str, HeadInput]:
    return {
        # N = 5, n = 2, M of full rank 4: signature (2, 2, 1)
        "head_nondegenerate_N5_n2": HeadInput(_m([[1, 0, 2, 0, 1], [0, 1, 0, 1, 3]]), _m([[1, 1, 0, 0, 0], [0, 0, 1, -1, 2]]),
                                              k=3),
        # N = 4 = 2n: signature (2, 2, 0)
        "head_square_N4_n2": HeadInput(_m([[1, 0, 0, 0], [0, 1, 0, 0]]), _m([[0, 0, 1, 0], ["1/2", 0, 0, 1]])),
        # n = 1, N = 3
        "head_n1_N3": HeadInput(_m([[1, 2, 0]]), _m([[0, 1, -1]])),
        # degenerate: W_Q = W_K, so rank M = n < 2n; S = W_QᵀW_Q ⪰ 0
        "head_degenerate_tied": HeadInput(_m([[1, 0, 1], [0, 1, 1]]), _m([[1, 0, 1], [0, 1, 1]])),
    }


def _ortho() -> dict[str, OrthoInput]:
    rng = random.Random(20260601)
    out = {}
    for name, (rows, _) in MATRICES.items():
        if name in ("interior_3x3", "sqrt2_tie", "face_d0_eigenspace_split"):
            L = _m(rows)
            U = cayley_orthogonal(random_antisymmetric(rng, L.nrows()))
            out[f"conj_{name}"] = OrthoInput(L, U)
    return out


#: Appendix A inputs: finite laws (exact enumeration), Gaussian laws (moments exact,
#: the expectation of a ratio by the deterministic Monte Carlo: empirical), and laws
#: that differ from entry to entry with one second moment per matrix
_SPREAD = {"-2": "1/8", "0": "3/4", "2": "1/8"}  # mean 0, second moment 1, not Rademacher
#: the audit's Monte Carlo: 4000 samples at δ = 1/1000 (Hoeffding half-width 0.031); with 8 to 12
#: Gaussian entries per sample 0.15 to 0.35 s of CPU to draw and as long for the kernel to re-draw,
#: paid again each time lean-audit or a test re-checks the shipped certificates
#: (`qkverify check` defaults to 10000 samples at 10⁻⁶: 0.4 to 0.8 s)
_MC = {"sampler": "mt19937-boxmuller/2", "samples": 4000, "delta": "1/1000"}  # the seed follows from the input
LAWS = {
    "iid_gaussian_N3": {"model": "iid", "N": 3, "law": "gaussian"},
    # N = 1: ‖S‖²/‖L‖² = [L ≠ 0], so E = P(L ≠ 0) = 1 = (N+1)/(2N) in closed form -- exact, no sample
    "iid_gaussian_N1": {"model": "iid", "N": 1, "law": "gaussian"},
    "qk_gaussian_n1_N1": {"model": "qk", "n": 1, "N": 1, "law_K": "gaussian", "law_Q": "gaussian:3"},
    "iid_rademacher_N2": {"model": "iid", "N": 2, "law": "rademacher"},
    "iid_per_entry_unit_variance_N2": {"model": "iid", "N": 2,
                                       "grid": [["rademacher", "gaussian"], [_SPREAD, "rademacher"]]},
    "qk_rademacher_n2_N2": {"model": "qk", "n": 2, "N": 2, "law_K": "rademacher", "law_Q": "rademacher"},
    "qk_skewed_n1_N2": {"model": "qk", "n": 1, "N": 2, "law_K": "skewed", "law_Q": "skewed"},
    "qk_per_entry_n1_N2": {"model": "qk", "n": 1, "N": 2, "law_K": [["rademacher", "gaussian"]],
                           "law_Q": [["skewed", "gaussian:2"]]},
    "qk_gaussian_n1_N4": {"model": "qk", "n": 1, "N": 4, "law_K": "gaussian", "law_Q": "gaussian"},
    "qk_gaussian_n2_N3": {"model": "qk", "n": 2, "N": 3, "law_K": "gaussian", "law_Q": "gaussian"},
    "qk_gaussian_vK2_vQhalf_n2_N2": {"model": "qk", "n": 2, "N": 2, "law_K": "gaussian:2", "law_Q": "gaussian:1/2"},
}


def _laws() -> dict:

    return {name: LawInput.from_document(dict(doc, monte_carlo=_MC), name) for name, doc in LAWS.items()}


def cases() -> list[tuple[str, object]]:
    """All suite inputs as (name, input)."""
    out: list[tuple[str, object]] = []
    for name, (rows, n) in MATRICES.items():
        out.append((name, MatrixInput(_m(rows), n)))
    out.extend(_heads().items())
    out.extend(_ortho().items())
    out.extend(_laws().items())
    return out


def _fibers() -> dict[str, FiberInput]:
    """Candidate decompositions S = H ± P for the ← direction of Theorem 4's faces."""
    return {
        # S = diag(2, −1) = H + P with H = diag(1, −1) (spectrum ±1), P = diag(1, 0) ⪰ 0: d = 0
        "fiber_d_diag_2_m1": FiberInput(_m([[2, 0], [0, -1]]), "d", _m([[1, 0], [0, -1]]), _m([[1, 0], [0, 0]])),
        # S = diag(1, −3) = H − P with H = diag(1, −1), P = diag(0, 2): c = 0
        "fiber_c_diag_1_m3": FiberInput(_m([[1, 1], [-1, -3]]), "c", _m([[1, 0], [0, -1]]), _m([[0, 0], [0, 2]])),
    }


def _heads_in_basis() -> dict[str, HeadInput]:
    """Heads whose Gram matrix is read in a second, non-standard rational basis of C."""
    B = _m([[1, 1, 0, 0, 0], [0, 1, 2, 0, 0], [0, 0, 1, -1, 0], [1, 0, 0, 1, 1], [0, 0, 0, 0, 2]])
    h = _heads()["head_nondegenerate_N5_n2"]
    return {"head_nondegenerate_N5_n2_basis": HeadInput(h.W_Q, h.W_K, B=B)}


def _section_2_3() -> dict[str, object]:
    """Inputs of Lemma 3's subspace form (n = 0 included), exists_orthogonal_cols,
    profile_smul_vecMulVec and the ⊇ direction of profiles_rank_one_eq_Theta."""
    q = lambda *xs: tuple(fmpq(*map(int, x.split("/"))) if isinstance(x, str) else fmpq(x) for x in xs)  # noqa: E731
    head = _heads()["head_nondegenerate_N5_n2"]
    return {
        # Lemma 3: L = 0 with n = 0 (rank 0 ≤ 0: S has no positive or negative eigenvalue)
        "zero_matrix_n0": MatrixInput(_m([[0, 0], [0, 0]]), 0),
        # S = diag(2, −1) is positive definite on span(e₀): dim 1 ≤ n = 2
        "subspace_diag_2_m1": SubspaceInput(_m([[2, 0], [0, -1]]), 2, _m([[1, 0]])),
        # L = e₀e₁ᵀ (rank 1): S = ½(e₀e₁ᵀ + e₁e₀ᵀ) is positive on span(1, 1): dim 1 ≤ 1
        "subspace_nilpotent_e12": SubspaceInput(_m([[0, 1], [0, 0]]), 1, _m([[1, 1]])),
        # a head's L (rank ≤ 2): S is positive definite on span(e₀, e₄): dim 2 ≤ n = 2
        "subspace_head_N5_n2": SubspaceInput(head.L, 2, _m([[1, 0, 0, 0, 0], [0, 0, 0, 0, 1]])),
        # rational orthonormal families (exists_orthogonal_cols)
        "family_N3_one": FamilyInput(_m([["1/3", "2/3", "2/3"], [0, 0, 0], [0, 0, 0]]), (0,)),
        "family_N3_two": FamilyInput(_m([["1/3", "2/3", "2/3"], ["2/3", "1/3", "-2/3"], [0, 0, 0]]), (0, 1)),
        "family_N4_gap": FamilyInput(_m([[0, 0, 0, 0], ["1/2", "1/2", "1/2", "1/2"], [0, 0, 0, 0],
                                         ["1/2", "-1/2", "1/2", "-1/2"]]), (1, 3)),
        # s·u vᵀ with unit u, v: t = 3/5 (8/25, 8/25, 9/25, 0); t = −2/3 (5/18, 5/18, 0, 4/9); t = 0
        "uv_3_4_5": RankOneInput(q("3/5", "4/5"), q(1, 0), fmpq(2)),
        "uv_negative_t": RankOneInput(q(0, 1, 0), q("2/3", "-2/3", "1/3"), fmpq(1, 2)),
        "uv_orthogonal": RankOneInput(q(1, 0), q(0, 1), fmpq(1)),
        # points of Θ: Pythagorean t = 3/5; t² = 1/2 (t/r = 1); t² = 1/3 (L over Q(√(1/2)));
        # d = 2/3 (L over Q(√2)); the vertex d = 1; the centre t = 0; N = 1 vertex; a point off Θ
        "theta_pythagorean": ThetaPointInput(q("8/25", "8/25", "9/25", 0), 2),
        "theta_half": ThetaPointInput(q("1/4", "1/4", "1/2", 0), 2),
        "theta_surd_c": ThetaPointInput(q("1/3", "1/3", "1/3", 0), 3),
        "theta_surd_d": ThetaPointInput(q("1/6", "1/6", 0, "2/3"), 2),
        "theta_vertex_d": ThetaPointInput(q(0, 0, 0, 1), 2),
        "theta_centre": ThetaPointInput(q("1/2", "1/2", 0, 0), 2),
        "theta_N1_vertex": ThetaPointInput(q(0, 0, 1, 0), 1),
        "theta_off": ThetaPointInput(q("1/4", "1/4", "1/4", "1/4"), 2),
    }
def with_spectrum(values: list, seed: int) -> fmpq_mat:
    """A rational symmetric matrix with the given eigenvalues (:func:`qkverify.math.accumulation.matrix_with_spectrum`)."""
    from ..math.accumulation import matrix_with_spectrum

    return matrix_with_spectrum([_q(v) for v in values], seed)


def _reals(*xs):
    """Exact reals of an input (rationals or root(…) texts)."""
    from ..io.inputs import parse_real

    return tuple(parse_real(x, "suite") for x in xs)


def _q(v) -> fmpq:
    return fmpq(*map(int, v.split("/"))) if isinstance(v, str) else fmpq(v)


def _moments() -> dict[str, object]:
    """Appendices B and C and Theorem 5: vectors (normalised spectra, Λ_m points, a point outside
    Λ_m, an odd length), ratios ρ, a head with ‖S‖² a square, and sampled lobes."""
    v = lambda x, norm=False, y=None, c=None, S=None: VectorInput(  # noqa: E731
        tuple(_q(t) for t in x), norm, None if y is None else tuple(_q(t) for t in y),
        None if c is None else _q(c), S)
    out: dict[str, object] = {
        # λ = (−3, −1, 2, 2)/√18 with a matrix of spectrum μ: 𝓘 = −1/9, C = 4/9, 𝒫 = 2/3
        "spectrum_m3_m1_2_2": v([-3, -1, 2, 2], True, [1, 2, 0, -1], "3/2", with_spectrum([-3, -1, 2, 2], 11)),
        "lambda_3_4_5": v(["-3/5", "4/5"], S=with_spectrum(["-3/5", "4/5"], 12)),
        "lambda_mirror_half": v(["-1/2", "-1/2", "1/2", "1/2"], y=["1/3", 0, 1, "-1/2"], c=-2),   # ιλ = λ: 𝒫 = 1
        "vector_unsorted": v([2, -1, 1, -2], True),                                               # not in Λ_2
        "vector_odd_length": v([1, -2, 3], y=[0, 1, 1], c="1/2"),
        # x = (3, 1), y = (2, 2) in a 5 × 5 S; a = x, b = y, ρ = 1/2 for accumulation_estimates
        "lobes_3_1_vs_2_2": v([3, 1], y=[2, 2], c="1/2", S=with_spectrum([3, 1, -2, -2, 0], 13)),
        # ‖S‖² = 144; k = 2 for GramForm.trace_pow_symPart: tr(S²) = ‖S‖² = 144 = tr((½JG)²)
        "head_square_norm_n1_N3": HeadInput(_m([[-3, -3, 0]]), _m([[-3, 1, -2]]), k=2),
        # GramForm.IsSortedNormalizedNonzeroSpectrum S lam and its uniqueness (any S, any lam):
        # S = diag(3, 4), ‖S‖ = 5, λ = (3/5, 4/5); lam = (3, 4) is not normalised (false)
        "spectrum_diag_3_4": SpectrumInput(_m([[3, 0], [0, 4]]), _reals("3/5", "4/5"), _reals("3/5", "4/5")),
        "spectrum_diag_3_4_unnormalised": SpectrumInput(_m([[3, 0], [0, 4]]), _reals("3", "4")),
        # S = I₂: ‖S‖ = √2, λ = (1/√2, 1/√2), roots of 2x² − 1
        "spectrum_identity": SpectrumInput(_m([[1, 0], [0, 1]]), _reals("root(2*x^2 - 1, [0, 1])",
                                                                       "root(2*x^2 - 1, [0, 1])")),
    }
    for r in ("0", "1/2", "3/4", "1", "2"):
        out[f"rho_{r.replace('/', '_')}"] = RhoInput(_q(r))
    from ..math.accumulation import parse_positive_law

    # the sign test of the trend on 16 sample paths (sizes 16 → 256; seeds derived from the input)
    for fam, (u, vv) in (("exponential", (1, 2)), ("gamma", (1, 1)), ("uniform", (2, 1)), ("pareto", (1, 2))):
        out[f"lobes_{fam}"] = LobesInput(parse_positive_law(fam), fmpq(u), fmpq(vv), (16, 64, 256), paths=16)
    return out


def cases2() -> list[tuple[str, object]]:
    """Suite inputs for the per-declaration checks (certificate format 2): each matrix as a
    plain ``matrix`` input and, with its n, as a ``matrix_bound`` one; heads (one in a second
    basis); orthogonal pairs; candidate fiber decompositions; subspaces, orthonormal families,
    rank-one factors and points of Θ (§2, §3); laws; triples (Q, K, V) of the clustering
    regimes."""
    out: list[tuple[str, object]] = []
    for name, (rows, n) in MATRICES.items():
        out.append((name, MatrixInput(_m(rows))))
        if n is not None:
            out.append((f"{name}_n{n}", MatrixInput(_m(rows), n)))
    out.extend(_heads().items())
    out.extend(_heads_in_basis().items())
    out.extend(_ortho().items())
    out.extend(_fibers().items())
    out.extend(_section_2_3().items())
    out.extend(_laws().items())
    out.extend(_moments().items())
    from .suite_s1 import cases as s1_cases

    out.extend(s1_cases())  # §1: attention functions, biaffine scores, forms, transformers
    out.extend(_triples().items())
    return out


def _triples() -> dict[str, TripleInput]:
    """Triples (Q, K, V) of the clustering regimes (docs/MATH.md, Clustering regimes), one per regime and more;
    the regime each satisfies is derived by hand in its comment."""
    I2, I3 = _m([[1, 0], [0, 1]]), _m([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    return {
        # V = I, QᵀK = diag(2, 1) ≻ 0: Theorems 3.1 and 5.2 (I is paranormal: F = R², G = 0)
        "triple_identity": TripleInput(I2, _m([[2, 0], [0, 1]]), I2),
        # V = [[2, 1], [0, 1]]: λ₁ = 2 simple, φ₁ = e₁, ⟨Qe₁, Ke₁⟩ = 1 > 0: good triple (4.2);
        # QᵀK = diag(1, −1) is not PD
        "triple_good": TripleInput(I2, _m([[1, 0], [0, -1]]), _m([[2, 1], [0, 1]])),
        # V = diag(2, 2, 1): λ = 2 semisimple of multiplicity 2, not simple; QᵀK = I: 5.2 only
        "triple_paranormal": TripleInput(I3, I3, _m([[2, 0, 0], [0, 2, 0], [0, 0, 1]])),
        # V = −I, QᵀK = I: Theorem 8.5
        "triple_minus_identity": TripleInput(I2, I2, _m([[-1, 0], [0, -1]])),
        # V a rotation (eigenvalues ±i) and QᵀK antisymmetric: no theorem applies
        "triple_none": TripleInput(I2, _m([[0, 1], [-1, 0]]), _m([[0, -1], [1, 0]])),
        # eigenvalues 1 ± i and 3: λ₁ = 3 > √2 (certified through the boxes), φ₁ = e₃: 4.2, 5.2
        "triple_complex_good": TripleInput(I3, I3, _m([[1, -1, 0], [1, 1, 0], [0, 0, 3]])),
        # eigenvalues (1 ± √5)/2: λ₁ the golden ratio, irrational; QᵀK = I: 4.2, 5.2
        "triple_golden": TripleInput(I2, I2, _m([[1, 1], [1, 0]])),
        # a Jordan block for λ = 2 (multiplicity 2, one eigenvector): not paranormal, not simple
        "triple_jordan": TripleInput(I3, I3, _m([[2, 1, 0], [0, 2, 0], [0, 0, 1]])),
        # V = I, QᵀK = [[1, 1], [−1, 1]]: its symmetric part I is PD but QᵀK is not symmetric:
        # QᵀK ≻ 0 fails, Theorem 3.1 does not apply
        "triple_sym_part_only": TripleInput(I2, _m([[1, 1], [-1, 1]]), I2),
    }


def fits(kind: str, inp, claim_id: str = "") -> bool:
    """Does the input fit a (format-1) claim's input kind?  ``claim_id`` is accepted for callers; unused."""
    if kind in ("matrix", "symmetric"):
        return isinstance(inp, MatrixInput)
    if kind == "matrix_n":
        return isinstance(inp, MatrixInput) and inp.n is not None or isinstance(inp, HeadInput)
    if kind == "head":
        return isinstance(inp, HeadInput)
    if kind == "orthogonal":
        return isinstance(inp, OrthoInput)
    return False


def adapt(kind: str, inp):
    if kind == "matrix_n" and isinstance(inp, HeadInput):
        return MatrixInput(inp.L, inp.n)
    return inp
