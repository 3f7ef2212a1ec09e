"""§2 Pairing and balance: Lemma 2 (pairing_bound), Lemma 3 (rank_balance),
Theorem 3 (heads_have_balanced_attention).

Lean: ``Appendices.MainText.pairing_bound`` and helpers; ``rank_balance``,
``finrank_le_of_posDefOn``; ``stacked``, ``Nondegenerate``, ``headForm``,
``radical_eq_ker``, ``finrank_radical``, ``gram``, ``signature``,
``gram_eq_symPart``, ``ker_gram_eq_map``, ``heads_have_balanced_attention``.
"""

from __future__ import annotations

from flint import arb, ctx, fmpq, fmpq_mat

from ..exact.algebraic import resolvent_value
from ..exact.intervals import arb_bounds
from ..exact.matrix import frob_sq, rank, rank_certificate, sym_part, to_str_rows, vstack
from ..math.profile import spectral_data
from .common import inertia_both, q, random_invertible, result, seeded_rng
from .registry import Claim, Hypothesis, Result, register

SEC = "§2 Pairing and balance"

#: above this size LDLᵀ in Python is slow; the charpoly method alone is used
LDLT_MAX_N = 48


# --------------------------------------------------------------------------
# Theorem 3


def stacked(inp) -> fmpq_mat:
    """M = [W_K; W_Q] (2n x N), the stacked map J = (Q, K) up to row order."""
    return vstack(inp.W_K, inp.W_Q)


# --------------------------------------------------------------------------
# Lemma 3


def _rank_le_n(inp) -> bool:
    return rank(inp.L) <= inp.n


def _lemma3(inp) -> Result:
    L, n = inp.L, inp.n
    N = L.nrows()
    rc = rank_certificate(L)
    inn, w = inertia_both(sym_part(L), "S", N <= LDLT_MAX_N)
    checks = {
        "S has at most n positive eigenvalues": inn.n_pos <= n,
        "S has at most n negative eigenvalues": inn.n_neg <= n,
        # a subspace on which S is positive definite has dim ≤ n_pos (Sylvester)
        "every positive-definite subspace of S has dimension ≤ n": inn.n_pos <= n,
    }
    vals = {"n": n, "rank_L": rc.rank, "inertia": inn.to_json(), "checks": checks}
    ok = all(checks.values())
    return result(ok, "exact", [dict(rc.to_json(), matrix="L")] + w, vals,
                  "failed: " + "; ".join(k for k, v in checks.items() if not v))


# --------------------------------------------------------------------------
# Lemma 2


def pairing_quantities(S: fmpq_mat, prec: int = 128) -> dict:
    """Certified enclosures (arb) of Lemma 2's quantities for symmetric S:
    ‖λ₊‖², ‖λ₋‖², ⟨λ₊,λ₋⟩, 𝒫 = 1 − ‖λ₊−λ₋‖/‖S‖, ρ = ‖λ₋‖/‖λ₊‖ and the bound
    1 − |1−ρ|/√(1+ρ²).  Lists padded with zeros (lamPlusVec/lamMinusVec)."""
    sd = spectral_data(S)
    old = ctx.prec
    ctx.prec = prec
    try:
        D = arb(sd.D)
        a = [r.value.to_arb(prec) / D for r in sd.pos]
        b = [-(r.value.to_arb(prec)) / D for r in sd.neg]
        m = max(len(a), len(b))
        a += [arb(0)] * (m - len(a))
        b += [arb(0)] * (m - len(b))
        pp = sum((x * x for x in a), arb(0))
        mm = sum((x * x for x in b), arb(0))
        pm = sum((x * y for x, y in zip(a, b)), arb(0))
        S2 = arb(frob_sq(S))
        diff = sum(((x - y) * (x - y) for x, y in zip(a, b)), arb(0))
        P = 1 - diff.nonnegative_part().sqrt() / S2.sqrt()
        rho = (mm / pp).nonnegative_part().sqrt() if len(sd.pos) else None
        bound = 1 - ((1 - rho) * (1 - rho)).nonnegative_part().sqrt() / (1 + rho * rho).sqrt() if rho is not None else None
        return {"sd": sd, "pp": pp, "mm": mm, "pm": pm, "S2": S2, "pairing": P, "rho": rho,
                "bound": bound, "alt": 1 - (1 - 2 * pm / S2).nonnegative_part().sqrt()}
    finally:
        ctx.prec = old


def _proportional(sd) -> bool:
    """Exact test of λ₋ = ρλ₊ (β_j α_1 = β_1 α_j for all j, padded)."""
    m = max(len(sd.pos), len(sd.neg))
    if not sd.neg:
        return True  # λ₋ = 0 = ρλ₊ with ρ = 0
    if len(sd.pos) != len(sd.neg):
        return False  # ρ > 0 and a zero of one list faces a nonzero of the other
    for j in range(1, m):
        a1, aj, b1, bj = sd.pos[0], sd.pos[j], sd.neg[0], sd.neg[j]

        def F(val, a1=a1, aj=aj, b1=b1, bj=bj):
            return val(bj.factor, bj.index) * val(a1.factor, a1.index) - val(b1.factor, b1.index) * val(aj.factor, aj.index)

        v = resolvent_value(sd.factors, F, max_orbit=5040)
        if v is None:
            raise ArithmeticError("orbit too large")
        if v.sign() != 0:
            return False
    return True


def _lemma2(inp) -> Result:
    S = sym_part(inp.L)
    if frob_sq(S) == 0:
        return Result("fails", "exact", {"witnesses": []}, {}, None, "S = 0: λ₊ = 0")
    prec = 128
    while True:
        Q = pairing_quantities(S, prec)
        sd = Q["sd"]
        if not sd.pos:
            return Result("fails", "exact", {"witnesses": []}, {}, None, "λ₊ = 0: ρ is undefined")
        gap = Q["bound"] - Q["pairing"]
        vals = {k: list(arb_bounds(Q[k], 25, fixed=True)) for k in ("pairing", "rho", "bound")}
        vals["gap"] = list(arb_bounds(gap, 25, fixed=True))
        checks = {
            "‖S‖² = ‖λ₊‖² + ‖λ₋‖² (power sum, exact)": True,
            "𝒫 = 1 − √(1 − 2⟨λ₊,λ₋⟩/‖S‖²) (enclosures meet)": Q["pairing"].overlaps(Q["alt"]),
        }
        if gap > 0:
            checks["𝒫 < bound (certified)"] = True
            ok = all(checks.values())
            return result(ok, "certified", [{"kind": "enclosure", "matrix": "S", "precision_bits": prec, "values": vals}],
                          vals, "failed: " + "; ".join(k for k, v in checks.items() if not v))
        if gap < 0:
            checks["𝒫 ≤ bound"] = False
            return result(False, "certified", [{"kind": "enclosure", "matrix": "S", "precision_bits": prec, "values": vals}],
                          vals, "𝒫 exceeds the bound (certified)")
        # enclosures touch: decide the equality case exactly
        try:
            prop = _proportional(sd)
        except ArithmeticError:
            prop = None
        if prop:
            checks["λ₋ = ρλ₊ exactly, so 𝒫 = bound (equality case)"] = True
            return result(all(checks.values()), "exact",
                          [{"kind": "enclosure", "matrix": "S", "precision_bits": prec, "values": vals}], vals, "failed")
        if prec >= 4096:
            return Result("undecided", "certified", {"witnesses": []}, vals, None,
                          f"enclosures of 𝒫 and the bound still overlap at {prec} bits")
        prec *= 4


# --------------------------------------------------------------------------

register(Claim(
    id="pairing_bound", label="Lemma 2", section=SEC,
    lean_decls=("Appendices.MainText.lamPlusVec", "Appendices.MainText.lamMinusVec",
                "Appendices.MainText.pairingScoreSym", "Appendices.MainText.frobSq_eq_norm_sq_add_norm_sq",
                "Appendices.MainText.pairing_bound"),
    statement="‖S‖² = ‖λ₊‖² + ‖λ₋‖²; 𝒫 = 1 − √(1 − 2⟨λ₊,λ₋⟩/‖S‖²) ≤ 1 − |1−ρ|/√(1+ρ²), equality iff λ₋ = ρλ₊.",
    hypotheses=(Hypothesis("lamPlus_ne_zero", "λ₊ ≠ 0 (S has a positive eigenvalue)",
                           lambda inp: len(spectral_data(sym_part(inp.L)).pos) > 0),),
    input_kind="matrix", conclusion=_lemma2, aliases=("pairing score",),
))

register(Claim(
    id="rank_balance", label="Lemma 3", section=SEC,
    lean_decls=("Appendices.MainText.finrank_le_of_posDefOn", "Appendices.MainText.rank_balance"),
    statement="rank L ≤ n ⇒ S has at most n positive and at most n negative eigenvalues.",
    hypotheses=(Hypothesis("rank_le_n", "rank L ≤ n", _rank_le_n),),
    input_kind="matrix_n", conclusion=_lemma3,
))


# ==========================================================================
# Theorem 3, one check per Lean declaration (format 2; BalancedHeads.lean).
# Inputs: a head (W_Q, W_K, optionally a basis B of C for the Gram matrix) or
# a weights head (the certified route of qkverify.heads; only the declarations
# that need no N x N object are evaluated there).

from ..exact.inertia import inertia_charpoly, inertia_ldlt  # noqa: E402
from ..exact.matrix import identity, is_symmetric  # noqa: E402
from . import values as V  # noqa: E402
from .common import rank_witness, spectrum_witness  # noqa: E402
from .registry import DeclResult, Subject, declaration_check, predicate  # noqa: E402

HEAD = ("head",)
HEADS = ("head", "weights")


def _B(s: Subject) -> fmpq_mat:
    return s.inp.B if s.inp.B is not None else identity(s.inp.N)


def _head(s: Subject) -> dict:
    """Exact objects of a head: M = [W_K; W_Q], S, the Gram matrix in the basis B, L_B."""
    def build():
        inp = s.inp
        M = vstack(inp.W_K, inp.W_Q)
        S = sym_part(inp.L)
        B = _B(s)
        G = B.transpose() * S * B
        LB = (inp.W_K * B).transpose() * (inp.W_Q * B)
        return {"M": M, "S": S, "G": G, "LB": LB}

    return s.memo("head", build)


def _rank_M(s: Subject) -> int:
    """rank [W_K; W_Q] with its witness (weights heads carry theirs in s.inp)."""
    if s.kind == "weights":
        s.witness(s.inp.rank_witness)
        return s.inp.rank_M
    h = _head(s)
    w = rank_witness(h["M"], "M")
    s.witness(w)
    return w["rank"]


@predicate("stacked_surjective")
def _nondegenerate(s: Subject) -> bool:
    """Nondegenerate Q K: the stacked map is surjective, rank [W_K; W_Q] = 2n (binder ``hnd``)."""
    return _rank_M(s) == 2 * s.inp.n


@declaration_check("stacked", HEAD)
def _stacked(s: Subject) -> DeclResult:
    """J = (Q, K) as the 2n × N matrix [W_Q; W_K]; its rank equals that of [W_K; W_Q]."""
    J = vstack(s.inp.W_Q, s.inp.W_K)
    return DeclResult(rank(J) == rank(_head(s)["M"]), value=V.matrix(J))


@declaration_check("Nondegenerate", HEADS)
def _nd(s: Subject) -> DeclResult:
    """Nondegenerate as a value (rank of the witness = 2n), against FLINT's rank for a matrix head."""
    r = _rank_M(s)
    ok = True if s.kind == "weights" else r == rank(_head(s)["M"])
    return DeclResult(ok, value=V.boolean(r == 2 * s.inp.n))


@declaration_check("headForm", HEAD)
def _headForm(s: Subject) -> DeclResult:
    """S(e_i, e_j) = ½(⟨K e_i, Q e_j⟩ + ⟨Q e_i, K e_j⟩); checked: symmetric (headForm_symm) and
    Jᵀ·B·J = 2S for the pairing form B((a,b),(a',b')) = ⟨a,b'⟩ + ⟨b,a'⟩ (pairForm_stacked)."""
    inp = s.inp
    S = (inp.W_K.transpose() * inp.W_Q + inp.W_Q.transpose() * inp.W_K) / 2
    n = inp.n
    J = vstack(inp.W_Q, inp.W_K)
    Bp = fmpq_mat(2 * n, 2 * n, [int(abs(i - j) == n) for i in range(2 * n) for j in range(2 * n)])
    return DeclResult(is_symmetric(S) and J.transpose() * Bp * J == S * 2, value=V.matrix(S))


def _null(A: fmpq_mat) -> fmpq_mat:
    """Columns spanning the right null space of A (exact, FLINT)."""
    B, _ = A.numer_denom()
    X, k = B.nullspace()
    return fmpq_mat([[X[i, j] for j in range(k)] for i in range(A.ncols())]) if k else fmpq_mat(A.ncols(), 0)


def _same_span(X: fmpq_mat, Y: fmpq_mat) -> bool:
    if X.ncols() != Y.ncols():
        return False
    if X.ncols() == 0:
        return True
    return rank(fmpq_mat([list(a) + list(b) for a, b in zip(X.tolist(), Y.tolist())])) == X.ncols() == rank(X)


@declaration_check("radical_eq_ker", HEAD)
def _radical(s: Subject) -> DeclResult:
    """{x | S(x, ·) = 0} = ker J: the null spaces of S and of M span the same space (exact)."""
    h = _head(s)
    s.witness(rank_witness(h["S"], "S"))
    return DeclResult(_same_span(_null(h["S"]), _null(h["M"])))


@declaration_check("finrank_radical", HEADS)
def _finrank(s: Subject) -> DeclResult:
    """dim ker J + 2n = N, with dim ker J = N − rank M."""
    N, n = s.inp.N, s.inp.n
    dim = N - _rank_M(s) if s.kind == "weights" else _null(_head(s)["M"]).ncols()
    if s.kind != "weights":
        _rank_M(s)
    return DeclResult(dim + 2 * n == N)


@declaration_check("gram", HEAD)
def _gram(s: Subject) -> DeclResult:
    """G_ij = S(b_i, b_j) = (Bᵀ S B)_ij; symmetric (gram_isHermitian)."""
    G = _head(s)["G"]
    return DeclResult(is_symmetric(G), value=V.matrix(G))


def _signature(s: Subject) -> tuple[int, int, int]:
    """(n₊, n₋, n₀) of the Gram matrix: charpoly + Descartes and LDLᵀ must agree (two
    methods); the spectrum witness carries it to the kernel.  Weights heads: from the
    certified route's cells."""
    if s.kind == "weights":
        s.witness(s.inp.cells_witness)
        return s.inp.signature
    def build():
        G = _head(s)["G"]
        a, b = inertia_charpoly(G), inertia_ldlt(G)
        if a.triple() != b.triple():
            raise ArithmeticError(f"inertia methods disagree: {a.triple()} vs {b.triple()}")
        s.witness(spectrum_witness(G, "gram"))
        return a.triple()

    return s.memo("signature", build)


@declaration_check("signature", HEADS)
def _sig(s: Subject) -> DeclResult:
    p, m, z = _signature(s)
    return DeclResult(p + m + z == s.inp.N, value=V.ints((p, m, z)))


@declaration_check("gram_eq_symPart", HEAD)
def _gram_eq(s: Subject) -> DeclResult:
    """The Gram matrix is symPart of L_B = (W_K B)ᵀ(W_Q B), whose rank is ≤ n."""
    h = _head(s)
    w = rank_witness(h["LB"], "Lgram")
    s.witness(w)
    return DeclResult(w["rank"] <= s.inp.n and sym_part(h["LB"]) == h["G"])


@declaration_check("ker_gram_eq_map", HEAD)
def _ker_gram(s: Subject) -> DeclResult:
    """ker G = B⁻¹ ker J (null spaces compared exactly)."""
    h = _head(s)
    s.witness(rank_witness(h["S"], "S"))
    s.witness(rank_witness(h["G"], "gram"))
    return DeclResult(_same_span(_null(h["G"]), _B(s).inv() * _null(h["M"])))


@declaration_check("heads_have_balanced_attention", HEADS)
def _thm3(s: Subject) -> DeclResult:
    """signature(gram b) = (n, n, N − 2n)."""
    n, N = s.inp.n, s.inp.N
    return DeclResult(_signature(s) == (n, n, N - 2 * n))
