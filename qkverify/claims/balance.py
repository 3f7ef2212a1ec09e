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


def _surjective(inp) -> bool:
    return rank(stacked(inp)) == 2 * inp.n


def _theorem3(inp) -> Result:
    n, N = inp.n, inp.N
    M = stacked(inp)
    rc = rank_certificate(M)
    S = sym_part(inp.L)
    use_ldlt = N <= LDLT_MAX_N
    inn, w_inn = inertia_both(S, "S", use_ldlt)
    # ker M ⊆ rad S, and dims: rad S = ker M  (radical_eq_ker)
    B, _ = M.numer_denom()
    X, k = B.nullspace()
    kerM = [fmpq_mat([[X[i, j]] for i in range(N)]) for j in range(k)]
    in_rad = all((S * v) == fmpq_mat(N, 1) for v in kerM)
    rng = seeded_rng("theorem3-basis", to_str_rows(M))
    Bm = random_invertible(rng, N)
    gram2 = Bm.transpose() * S * Bm
    inn2, w_inn2 = inertia_both(gram2, "gram_in_basis", use_ldlt)
    for w in w_inn2:
        w["basis"] = to_str_rows(Bm)
    target = (n, n, N - 2 * n)
    checks = {
        "stacked map surjective (rank M = 2n)": rc.rank == 2 * n,
        "ker J ⊆ radical of S": in_rad,
        "dim radical = dim ker J": inn.n_zero == N - rc.rank,
        "dim ker J + 2n = N": (N - rc.rank) + 2 * n == N,
        "signature (n, n, N−2n) in the standard basis": inn.triple() == target,
        "signature (n, n, N−2n) in a random rational basis": inn2.triple() == target,
    }
    wit = [dict(rc.to_json(), matrix="M")] + w_inn + w_inn2
    vals = {"n": n, "N": N, "rank_M": rc.rank, "signature": inn.to_json(),
            "signature_random_basis": inn2.to_json(), "checks": checks}
    ok = all(checks.values())
    return result(ok, "exact", wit, vals, "failed: " + "; ".join(k for k, v in checks.items() if not v))


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
        vals = {k: list(arb_bounds(Q[k], 25)) for k in ("pairing", "rho", "bound")}
        vals["gap"] = list(arb_bounds(gap, 25))
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

register(Claim(
    id="heads_have_balanced_attention", label="Theorem 3", section=SEC,
    lean_decls=tuple("Appendices.MainText." + d for d in (
        "stacked", "Nondegenerate", "headForm", "radical_eq_ker", "finrank_radical", "gram", "signature",
        "gram_eq_symPart", "ker_gram_eq_map", "heads_have_balanced_attention")),
    statement="If J = (Q,K) : C → H×H is surjective, the head form S has signature (n, n, N−2n) in every basis; rad S = ker J.",
    hypotheses=(Hypothesis("stacked_surjective", "the stacked map J = (Q, K) is surjective (rank M = 2n)", _surjective),),
    input_kind="head", conclusion=_theorem3, aliases=("balanced heads", "nondegenerate head"),
))
