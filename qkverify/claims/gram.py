"""Appendix C, Lemma 10 (GramForm): S = ½MᵀJM and the 2n x 2n fast path.

Lean: ``Appendices.GramForm.M``, ``.J``, ``.G``, ``symPart_eq_half_conj``,
``trace_pow_symPart``, ``frobSq_symPart_eq_quarter_trace``,
``charpoly_roots_filter_ne_zero``, ``card_charpoly_roots_symPart``,
``card_charpoly_roots_half_JG``, ``IsSortedNormalizedNonzeroSpectrum`` and
its existence/uniqueness/Λ_n lemmas, ``statO/E/R_eq_trace``.
"""

from __future__ import annotations

from flint import fmpq, fmpq_mat, fmpq_poly

from ..exact.inertia import inertia_charpoly, inertia_from_charpoly
from ..exact.matrix import frob_sq, identity, rank, sym_part, trace, vstack
from .common import q, result
from .registry import Claim, Hypothesis, Result, register


#: above this N, traces of powers of the N x N S are not recomputed directly
TRACE_POWERS_MAX_N = 64


def gram_parts(inp) -> tuple[fmpq_mat, fmpq_mat, fmpq_mat]:
    """(M, J, G): M = [W_K; W_Q] (2n x N), J = [[0, I_n], [I_n, 0]], G = MMᵀ."""
    n = inp.n
    M = vstack(inp.W_K, inp.W_Q)
    J = fmpq_mat(2 * n, 2 * n)
    for i in range(n):
        J[i, n + i] = 1
        J[n + i, i] = 1
    return M, J, M * M.transpose()


def half_JG(inp) -> fmpq_mat:
    """½JG (2n x 2n, exact); its spectrum is the nonzero spectrum of S when
    M is surjective (Lemma 10)."""
    _, J, G = gram_parts(inp)
    return J * G * fmpq(1, 2)


def _lemma10(inp) -> Result:
    n, N = inp.n, inp.N
    M, J, G = gram_parts(inp)
    S = sym_part(inp.L)
    H = J * G * fmpq(1, 2)
    checks = {"S = ½MᵀJM": S == M.transpose() * J * M * fmpq(1, 2)}
    traces = []
    if N <= TRACE_POWERS_MAX_N:
        Sk, Hk = identity(N), identity(2 * n)
        for k in range(1, 2 * n + 1):
            Sk, Hk = Sk * S, Hk * H
            traces.append(q(trace(Sk)))
            if trace(Sk) != trace(Hk):
                checks[f"tr(S^{k}) = tr((½JG)^{k})"] = False
        if not any(k.startswith("tr(S^") for k in checks):
            checks[f"tr(S^k) = tr((½JG)^k) for k = 1..{2 * n}"] = True
    # (for larger N the equality of all power traces follows from the charpoly
    #  identity below through Newton's identities, and is not recomputed)
    JG = J * G
    checks["‖S‖² = ¼ tr((JG)²)"] = frob_sq(S) == trace(JG * JG) / 4
    pS = S.charpoly()
    pH = H.charpoly()
    x = fmpq_poly([0, 1])
    checks["charpoly(S) = x^(N−2n) · charpoly(½JG)"] = (N >= 2 * n) and pS == x ** (N - 2 * n) * pH
    checks["½JG invertible (no zero in its spectrum)"] = H.det() != 0
    # nonzero spectrum of S = spectrum of ½JG, as multisets: the charpoly identity
    # plus invertibility of ½JG
    checks["nonzero spectrum of S = spectrum of ½JG (multisets)"] = (
        checks["charpoly(S) = x^(N−2n) · charpoly(½JG)"] and checks["½JG invertible (no zero in its spectrum)"]
    )
    B, D = H.numer_denom()
    innH = inertia_from_charpoly(B.charpoly(), 2 * n)
    # sorted normalised nonzero spectrum lies in Λ_n: n negative, n positive entries
    checks["normalised nonzero spectrum in Λ_n (n negative, n positive)"] = innH.triple() == (n, n, 0)
    wit = [
        dict(innH.witness, matrix="half_JG", scale=str(int(D)), inertia=innH.to_json()),
        {"kind": "trace_powers", "matrix": "S", "traces": traces,
         "charpoly_S": [q(c) for c in pS.coeffs()], "charpoly_half_JG": [q(c) for c in pH.coeffs()]},
    ]
    vals = {"n": n, "N": N, "inertia_half_JG": innH.to_json(), "checks": checks}
    ok = all(checks.values())
    return result(ok, "exact", wit, vals, "failed: " + "; ".join(k for k, v in checks.items() if not v))


register(Claim(
    id="GramForm.charpoly_roots_filter_ne_zero", label="Lemma 10", section="Appendix C",
    lean_decls=tuple("Appendices.GramForm." + d for d in (
        "M", "J", "G", "symPart_eq_half_conj", "trace_pow_symPart", "frobSq_symPart_eq_quarter_trace",
        "charpoly_roots_filter_ne_zero", "card_charpoly_roots_symPart", "card_charpoly_roots_half_JG",
        "IsSortedNormalizedNonzeroSpectrum", "exists_isSortedNormalizedNonzeroSpectrum",
        "isSortedNormalizedNonzeroSpectrum_unique", "memLambdaSet_of_isSortedNormalizedNonzeroSpectrum",
        "statO_eq_trace", "statE_eq_trace", "statR_eq_trace")),
    statement="S = ½MᵀJM, tr(S^k) = tr((½JG)^k), ‖S‖² = ¼tr((JG)²); M surjective ⇒ nonzero spectrum of S = spectrum of ½JG, normalised in Λ_n.",
    hypotheses=(
        Hypothesis("M_surjective", "M = [W_K; W_Q] : R^N → R^{2n} is surjective", lambda inp: rank(vstack(inp.W_K, inp.W_Q)) == 2 * inp.n),
        Hypothesis("n_ge_1", "n ≥ 1", lambda inp: inp.n >= 1),
    ),
    input_kind="head", conclusion=_lemma10, aliases=("GramForm", "Gram form"),
))
