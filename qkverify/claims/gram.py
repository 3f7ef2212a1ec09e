"""Appendix C, Lemma 10 (GramForm.lean): S = ½MᵀJM, its traces and nonzero spectrum through
the 2n × 2n matrix ½JG, and the sorted normalised nonzero spectrum λ with O, E, R as traces
of H = JG/(2‖S‖) — one check per Lean declaration, on ``head`` inputs.

M = [W_K; W_Q] (2n × N), J = [[0, I_n], [I_n, 0]], G = MMᵀ, K = ½JG.  The producer's routes:
characteristic polynomials and their exact real roots (:func:`qkverify.exact.algebraic.real_roots`);
λ = ν/‖S‖ with ν the roots of det(tI − K); O, E, R of λ as sums over those roots in
ℚ[t]/(P) (exact in ℚ(‖S‖), rational when ‖S‖² is a square), against the traces read from
the exact inverse of ‖S‖²·I − K² (the ``inverse`` witness).  The kernel re-derives every
conclusion from the ``spectrum`` witnesses of S and of ½JG, the rank witness of M and the
inverse.
"""

from __future__ import annotations

from flint import fmpq, fmpq_mat, fmpq_poly

from ..exact.algebraic import RealAlgebraic, real_roots
from ..exact.matrix import frob_sq, sym_part, to_str_rows, trace, vstack
from ..math import moments as Mo
from . import values as V
from .common import spectrum_witness
from .registry import DeclResult, NotApplicable, Subject, declaration_check, predicate

HEAD = ("head",)


def gram_parts(s: Subject) -> dict:
    """M, J, G, K = ½JG and S of a head (exact)."""
    def build():
        inp = s.inp
        n = inp.n
        M = vstack(inp.W_K, inp.W_Q)
        J = fmpq_mat(2 * n, 2 * n, [int(abs(i - j) == n) for i in range(2 * n) for j in range(2 * n)])
        G = M * M.transpose()
        return {"M": M, "J": J, "G": G, "K": J * G / 2, "S": sym_part(inp.L)}

    return s.memo("gram", build)


def _roots(X: fmpq_mat) -> list[RealAlgebraic]:
    """The real eigenvalues of X with multiplicity, ascending (exact)."""
    B, D = X.numer_denom()
    return [r.scale(fmpq(1, int(D))) for r, m in real_roots(B.charpoly()) for _ in range(m)]


def _spec(s: Subject, key: str) -> list[RealAlgebraic]:
    """ν (key K: every real eigenvalue of ½JG) or the nonzero eigenvalues of S, ascending."""
    def build():
        vals = _roots(gram_parts(s)[key])
        return vals if key == "K" else [v for v in vals if v.sign() != 0]

    return s.memo(("spec", key), build)


def _witness_spectra(s: Subject) -> None:
    """The kernel's spectrum witnesses of S and of ½JG (½JG only when its spectrum is real)."""
    g = gram_parts(s)
    s.witness(spectrum_witness(g["S"], "S"))
    if len(_spec(s, "K")) != 2 * s.inp.n:
        raise NotApplicable("½JG has non-real eigenvalues: no spectrum witness")
    s.witness(spectrum_witness(g["K"], "half_JG"))


def _nonzero_part(P: fmpq_poly) -> fmpq_poly:
    """P without its factor t^z."""
    cs = list(P.coeffs())
    while cs and cs[0] == 0:
        cs.pop(0)
    return fmpq_poly(cs)


def _is_sorted_nns(s: Subject, lam: list[RealAlgebraic], P_lam: fmpq_poly) -> bool:
    """IsSortedNormalizedNonzeroSpectrum S (λ/‖S‖) for λ the real roots of P_lam: λ nondecreasing and,
    as a multiset, the nonzero roots of det(tI − S) — on polynomials: P_lam is det(tI − S) without
    its t^z, and every root of P_lam is real."""
    _witness_spectra(s)
    mono = all(lam[i] <= lam[i + 1] for i in range(len(lam) - 1))
    return mono and len(lam) == P_lam.degree() and _nonzero_part(gram_parts(s)["S"].charpoly()) == P_lam


def _lam_K(s: Subject) -> bool:
    return _is_sorted_nns(s, _spec(s, "K"), gram_parts(s)["K"].charpoly())


@predicate("k_pos")
def _k_pos(s: Subject) -> bool:
    """1 ≤ k: trace_pow_symPart is evaluated for every k from 1 to max(N, 2n), which covers all
    k ≥ 1 (Newton's identities determine every power sum from these)."""
    return True


# n_pos (1 ≤ n, Lean ``hn``) is registered once, in claims/laws.py, for heads and laws alike


@predicate("sorted_normalized_spectrum")
def _h(s: Subject) -> bool:
    """λ = (spectrum of ½JG, ascending)/‖S‖ is a sorted normalised nonzero spectrum of S."""
    return _lam_K(s)


@predicate("sorted_normalized_spectrum_of_S")
def _h2(s: Subject) -> bool:
    """λ' = (nonzero eigenvalues of S, ascending)/‖S‖ is one (the second candidate of the uniqueness)."""
    return _is_sorted_nns(s, _spec(s, "S"), _nonzero_part(gram_parts(s)["S"].charpoly()))


@declaration_check("GramForm.M", HEAD)
def _M(s: Subject) -> DeclResult:
    """M = [W_K; W_Q]; checked: MᵀM = W_KᵀW_K + W_QᵀW_Q."""
    g = gram_parts(s)
    inp = s.inp
    return DeclResult(g["M"].transpose() * g["M"] == inp.W_K.transpose() * inp.W_K + inp.W_Q.transpose() * inp.W_Q,
                      value=V.matrix(g["M"]))


@declaration_check("GramForm.J", HEAD)
def _J(s: Subject) -> DeclResult:
    """J = [[0, I], [I, 0]]; checked: J² = I and J symmetric."""
    J = gram_parts(s)["J"]
    n2 = J.nrows()
    return DeclResult(J * J == fmpq_mat(n2, n2, [int(i == j) for i in range(n2) for j in range(n2)])
                      and J.transpose() == J, value=V.matrix(J))


@declaration_check("GramForm.G", HEAD)
def _G(s: Subject) -> DeclResult:
    """G = MMᵀ; checked: its blocks are the Gram matrices W_KW_Kᵀ, W_KW_Qᵀ, W_QW_Kᵀ, W_QW_Qᵀ."""
    g, inp, n = gram_parts(s), s.inp, s.inp.n
    G = g["G"]
    blk = lambda A, B: A * B.transpose()  # noqa: E731
    ok = all(G[i + a * n, j + b * n] == blk(X, Y)[i, j] for a, X in enumerate((inp.W_K, inp.W_Q))
             for b, Y in enumerate((inp.W_K, inp.W_Q)) for i in range(n) for j in range(n))
    return DeclResult(ok, value=V.matrix(G))


@declaration_check("GramForm.symPart_eq_half_conj", HEAD)
def _conj(s: Subject) -> DeclResult:
    g = gram_parts(s)
    return DeclResult(g["S"] == g["M"].transpose() * g["J"] * g["M"] / 2)


@declaration_check("GramForm.trace_pow_symPart", HEAD)
def _trace_pow(s: Subject) -> DeclResult:
    """tr(S^k) = tr(K^k) for all k ≥ 1 ⇔ t^(2n)·det(tI − S) = t^N·det(tI − K) (charpoly_mul_comm')."""
    g = gram_parts(s)
    t = fmpq_poly([0, 1])
    return DeclResult(t ** (2 * s.inp.n) * g["S"].charpoly() == t ** s.inp.N * g["K"].charpoly())


@declaration_check("GramForm.frobSq_symPart_eq_quarter_trace", HEAD)
def _frob(s: Subject) -> DeclResult:
    g = gram_parts(s)
    JG = g["J"] * g["G"]
    return DeclResult(frob_sq(g["S"]) == trace(JG * JG) / 4)


@declaration_check("GramForm.charpoly_roots_filter_ne_zero", HEAD)
def _roots_eq(s: Subject) -> DeclResult:
    """The nonzero real roots of det(tI − S) are the real roots of det(tI − K), with multiplicity."""
    _witness_spectra(s)
    return DeclResult(_spec(s, "S") == _spec(s, "K"))


@declaration_check("GramForm.card_charpoly_roots_symPart", HEAD)
def _card_S(s: Subject) -> DeclResult:
    return DeclResult(len(_roots(gram_parts(s)["S"])) == s.inp.N)


@declaration_check("GramForm.card_charpoly_roots_half_JG", HEAD)
def _card_K(s: Subject) -> DeclResult:
    return DeclResult(len(_spec(s, "K")) == 2 * s.inp.n)


@declaration_check("GramForm.IsSortedNormalizedNonzeroSpectrum", HEAD)
def _is_def(s: Subject) -> DeclResult:
    """The Prop for λ = ν/‖S‖; checked: its multiset equals that of the nonzero spectrum of S
    eigenvalue by eigenvalue as well as by polynomials."""
    v = _lam_K(s)
    return DeclResult(v == (_spec(s, "S") == _spec(s, "K")), value=V.boolean(v))


@declaration_check("GramForm.exists_isSortedNormalizedNonzeroSpectrum", HEAD)
def _exists(s: Subject) -> DeclResult:
    return DeclResult(len(_spec(s, "K")) == 2 * s.inp.n and _lam_K(s))


@declaration_check("GramForm.isSortedNormalizedNonzeroSpectrum_unique", HEAD)
def _unique(s: Subject) -> DeclResult:
    """λ (from ½JG) = λ' (from S), entry by entry."""
    _witness_spectra(s)
    return DeclResult(_spec(s, "K") == _spec(s, "S"))


@declaration_check("GramForm.memLambdaSet_of_isSortedNormalizedNonzeroSpectrum", HEAD)
def _mem(s: Subject) -> DeclResult:
    """λ ∈ Λ_n: nondecreasing, Σν² = ‖S‖² (as traces: Σν² = tr K²), ν_{n−1} < 0 < ν_n."""
    _witness_spectra(s)
    nu, n = _spec(s, "K"), s.inp.n
    g = gram_parts(s)
    return DeclResult(all(nu[i] <= nu[i + 1] for i in range(len(nu) - 1)) and trace(g["K"] * g["K"]) == frob_sq(g["S"])
                      and len(nu) == 2 * n and nu[n - 1].sign() < 0 < nu[n].sign())


def _stats(s: Subject, i: int) -> DeclResult:
    """O, E or R of λ: root sums of det(tI − K) against the traces of H = K/‖S‖."""
    _witness_spectra(s)
    g = gram_parts(s)
    sq = frob_sq(g["S"])
    try:
        spec_side = Mo.stats_from_charpoly(g["K"].charpoly(), sq)
        tr = Mo.trace_stats(g["K"], sq)
    except (ValueError, ZeroDivisionError) as err:
        raise NotApplicable(str(err)) from None
    s.witness({"kind": "inverse", "of": "sI_minus_K2", "rows": to_str_rows(tr[3])})
    return DeclResult(spec_side[i] == tr[i])


for _i, _name in enumerate(("statO", "statE", "statR")):
    declaration_check(f"GramForm.{_name}_eq_trace", HEAD)(lambda s, i=_i: _stats(s, i))


def lemma10_values(s: Subject) -> dict:
    """O, E, R of λ for display (``qkverify spectrum`` on a head)."""
    g = gram_parts(s)
    return dict(zip(("statO", "statE", "statR"), Mo.stats_from_charpoly(g["K"].charpoly(), frob_sq(g["S"]))))
