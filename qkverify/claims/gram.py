"""Appendix C, Lemma 10 (GramForm.lean): S = ½MᵀJM, its traces and nonzero spectrum through
the 2n × 2n matrix ½JG, and the sorted normalised nonzero spectrum λ with O, E, R as traces
of H = JG/(2‖S‖) — one check per Lean declaration, on ``head`` inputs (with the explicit k of
``trace_pow_symPart`` and the implicit lam of the λ theorems as optional fields) and, for the
definition ``IsSortedNormalizedNonzeroSpectrum S lam`` and its uniqueness, on ``matrix_spectrum``
inputs (any square S, any lam).

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
from ..exact.matrix import frob_sq, sym_part, trace, vstack
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


def real_roots_witness(S: fmpq_mat) -> dict:
    """The ``real_roots`` witness of any square S (a matrix_spectrum input): the factors of
    charpoly(D·S) with their REAL roots isolated (the kernel counts them by Sturm)."""
    w = spectrum_witness(S, "S")
    w["kind"] = "real_roots"
    return w


def _S_witness(s: Subject) -> None:
    """The witness of S's real roots the kernel reads: a head's symmetric S has a spectrum witness,
    a matrix_spectrum input's S (any square matrix) a real_roots witness."""
    if s.kind == "matrix_spectrum":
        s.witness(real_roots_witness(s.inp.S))
    else:
        _witness_spectra(s)


def _nonzero_part(P: fmpq_poly) -> fmpq_poly:
    """P without its factor t^z."""
    cs = list(P.coeffs())
    while cs and cs[0] == 0:
        cs.pop(0)
    return fmpq_poly(cs)


def fresh(lam) -> list[RealAlgebraic]:
    """Copies of an input's exact reals: comparing refines their intervals in place, and the input
    (written into the certificate) must keep the intervals it was given."""
    import dataclasses

    return [dataclasses.replace(x) for x in lam]


def nonzero_real_roots(S: fmpq_mat) -> list[RealAlgebraic]:
    """The nonzero real roots of det(tI − S) with multiplicity, ascending (Lean's
    ``S.charpoly.roots.filter (· ≠ 0)``: roots in ℝ only, any square S)."""
    return [v for v in _roots(S) if v.sign() != 0]


def is_snns(S: fmpq_mat, lam) -> bool:
    """``IsSortedNormalizedNonzeroSpectrum S lam``, decided exactly: lam is nondecreasing and, as
    a multiset, {r/‖S‖ : r a nonzero real root of det(tI − S)} with ‖S‖ = √(frobSq S).  Both
    sides sorted, entry by entry: λ_i = r_i/√f ⇔ sign λ_i = sign r_i and f·λ_i² = r_i²
    (λ_i = r_i/√f exactly when √f is rational).

    >>> from flint import fmpq_mat
    >>> from ..exact.algebraic import RealAlgebraic as R, from_isolating_interval as iso
    >>> is_snns(fmpq_mat([[3, 0], [0, 4]]), [R.from_rational(fmpq(3, 5)), R.from_rational(fmpq(4, 5))])
    True
    >>> h = iso([-1, 0, 2], 0, 1)                       # 1/√2
    >>> is_snns(fmpq_mat([[1, 0], [0, 1]]), [h, h]), is_snns(fmpq_mat([[1, 0], [0, 1]]), [R.from_rational(1)] * 2)
    (True, False)
    """
    from ..exact.algebraic import square
    from ..exact.quadratic import rational_sqrt

    lam = list(lam)
    if any(lam[i].cmp(lam[i + 1]) > 0 for i in range(len(lam) - 1)):
        return False
    roots = nonzero_real_roots(S)
    if len(roots) != len(lam):
        return False
    f = frob_sq(S)
    rq = rational_sqrt(f)
    for x, r in zip(lam, roots):
        if x.sign() != r.sign():
            return False
        if rq is not None:
            if x.cmp(r.scale(1 / rq)) != 0:
                return False
        elif square(x).scale(f).cmp(square(r)) != 0:
            return False
    return True


def _computed_lam(s: Subject) -> list[RealAlgebraic]:
    """ν/‖S‖, ν the roots of det(tI − ½JG) ascending (the witness of the ∃ and the default lam)."""
    def build():
        from ..exact.algebraic import from_isolating_interval
        from ..exact.quadratic import rational_sqrt

        g = gram_parts(s)
        f = frob_sq(g["S"])
        nu = _spec(s, "K")
        if f == 0:   # ν/‖S‖ with ‖S‖ = 0: Lean's x/0 = 0
            return [RealAlgebraic.from_rational(fmpq(0)) for _ in nu]
        rq = rational_sqrt(f)
        out = []
        for v in nu:
            if rq is not None:
                out.append(v.scale(1 / rq))
                continue
            # t = v/√f is a root of p(√f t)·p(−√f t) = P(t)² − f·Q(t)², p(√f t) = P(t) + √f·Q(t)
            c = [fmpq(int(x)) for x in v.poly.coeffs()]
            P = fmpq_poly([cj * f ** (j // 2) if j % 2 == 0 else 0 for j, cj in enumerate(c)])
            Q = fmpq_poly([cj * f ** (j // 2) if j % 2 else 0 for j, cj in enumerate(c)])
            num = (P * P - f * Q * Q).numer()
            while True:
                try:
                    out.append(from_isolating_interval([int(x) for x in num.coeffs()], *_div_sqrt(v.lo, v.hi, f)))
                    break
                except ValueError:
                    v.refine((v.hi - v.lo) / 4)
        return out

    return s.memo("lam_computed", build)


def _div_sqrt(lo: fmpq, hi: fmpq, f: fmpq) -> tuple[fmpq, fmpq]:
    """An interval containing [lo, hi]/√f (rational bracket of √f)."""
    from ..exact.quadratic import sqrt_bracket

    r_lo, r_hi = sqrt_bracket(f, 64)
    cands = [lo / r_lo, lo / r_hi, hi / r_lo, hi / r_hi]
    return min(cands), max(cands)


def _lam(s: Subject) -> list[RealAlgebraic]:
    """The implicit lam of the λ theorems: the input's, else the computed one."""
    return fresh(s.inp.lam) if s.inp.lam is not None else _computed_lam(s)


@predicate("k_pos")
def _k_pos(s: Subject) -> bool:
    """1 ≤ k (Lean binder ``hk`` of trace_pow_symPart), k the input's."""
    if s.inp.k is None:
        raise NotApplicable("no k is given: trace_pow_symPart is stated for one k (give \"k\" in the head input)")
    return s.inp.k >= 1


# n_pos (1 ≤ n, Lean ``hn``) is registered once, in claims/laws.py, for heads and laws alike


@predicate("sorted_normalized_spectrum")
def _h(s: Subject) -> bool:
    """IsSortedNormalizedNonzeroSpectrum S lam: on a head S = symPart(W_KᵀW_Q) and lam the input's
    (else the computed one); on a matrix_spectrum input S and lam as given (binder ``h``)."""
    _S_witness(s)
    if s.kind == "matrix_spectrum":
        return is_snns(s.inp.S, fresh(s.inp.lam))
    return is_snns(gram_parts(s)["S"], _lam(s))


@predicate("sorted_normalized_spectrum_of_S")
def _h2(s: Subject) -> bool:
    """IsSortedNormalizedNonzeroSpectrum S lam' with lam' = the input's lam2 (binder ``h'``)."""
    if s.inp.lam2 is None:
        raise NotApplicable("no lam2 is given (the lam' of the uniqueness)")
    _S_witness(s)
    return is_snns(s.inp.S, fresh(s.inp.lam2))


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
    """tr(S^k) = tr((½JG)^k) at the input's k: both sides by exact matrix powers (N × N and
    2n × 2n), so at k = 0 the sides are N and 2n."""
    g, k = gram_parts(s), s.inp.k
    if k is None:
        raise NotApplicable("no k is given: trace_pow_symPart is stated for one k (give \"k\" in the head input)")
    lhs, rhs = trace(_mpow(g["S"], k)), trace(_mpow(g["K"], k))
    return DeclResult(lhs == rhs, reason="" if lhs == rhs else f"tr(S^{k}) = {lhs} but tr((½JG)^{k}) = {rhs}")


def _mpow(X: fmpq_mat, k: int) -> fmpq_mat:
    """X^k by repeated squaring (X^0 = I)."""
    n = X.nrows()
    out = fmpq_mat(n, n, [int(i == j) for i in range(n) for j in range(n)])
    while k:
        if k & 1:
            out = out * X
        X, k = X * X, k >> 1
    return out


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


def _lam_json(lam) -> dict:
    return V.listv([V.real(x) for x in lam])


@declaration_check("GramForm.IsSortedNormalizedNonzeroSpectrum", ("matrix_spectrum", "head"))
def _is_def(s: Subject) -> DeclResult:
    """The Prop at the input's S and lam (on a head: S = symPart(W_KᵀW_Q) and the head's lam), decided
    exactly by :func:`is_snns`; checked: when true, the enclosures of lam_i and r_i/‖S‖ overlap
    entry by entry (r the nonzero real roots of det(tI − S), ascending)."""
    if s.kind == "head" and s.inp.lam is None:
        raise NotApplicable("no lam is given: the definition is evaluated at the head's lam")
    S, lam = (s.inp.S, fresh(s.inp.lam)) if s.kind == "matrix_spectrum" else (gram_parts(s)["S"], fresh(s.inp.lam))
    _S_witness(s)
    v = is_snns(S, lam)
    ok = True
    if v and lam:
        from flint import arb, ctx

        with ctx.workprec(128):
            rs = arb(frob_sq(S)).sqrt()
            ok = all(x.to_arb(128).overlaps(r.to_arb(128) / rs) for x, r in zip(lam, nonzero_real_roots(S)))
    return DeclResult(ok, value=V.boolean(v))


@declaration_check("GramForm.exists_isSortedNormalizedNonzeroSpectrum", HEAD)
def _exists(s: Subject) -> DeclResult:
    """∃ lam : Fin (2n) → ℝ, IsSortedNormalizedNonzeroSpectrum S lam, decided exactly: when det(tI − S)
    has 2n nonzero real roots with multiplicity, lam = (those roots, ascending)/‖S‖ is one (sorted, and
    its multiset is the definition's by construction); otherwise the two multisets have different
    sizes and no lam of length 2n exists."""
    _witness_spectra(s)
    count = len(nonzero_real_roots(gram_parts(s)["S"]))
    if count != 2 * s.inp.n:
        return DeclResult(False, reason=f"S has {count} nonzero eigenvalues, not 2n = {2 * s.inp.n}")
    return DeclResult(True)


@declaration_check("GramForm.isSortedNormalizedNonzeroSpectrum_unique", ("matrix_spectrum",))
def _unique(s: Subject) -> DeclResult:
    """lam = lam' (the input's lam and lam2), entry by entry, exactly."""
    if s.inp.lam2 is None:
        raise NotApplicable("no lam2 is given (the lam' of the uniqueness)")
    return DeclResult(all(x.cmp(y) == 0 for x, y in zip(fresh(s.inp.lam), fresh(s.inp.lam2))))


def _sum_sq(lam):
    """Σ lam_i² exactly when every lam_i² is rational, else None."""
    from ..exact.algebraic import square

    out = fmpq(0)
    for x in lam:
        q = square(x)
        if not q.is_rational:
            return None
        out += q.rational
    return out


@declaration_check("GramForm.memLambdaSet_of_isSortedNormalizedNonzeroSpectrum", HEAD)
def _mem(s: Subject) -> DeclResult:
    """lam ∈ Λ_n: nondecreasing, lam_{n−1} < 0 < lam_n (exact signs), Σ lam_i² = 1 (exact when the
    squares are rational; for the sorted spectrum Σλ² = Σr²/‖S‖² = tr S²/frobSq S)."""
    _witness_spectra(s)
    lam, n = _lam(s), s.inp.n
    if len(lam) != 2 * n:
        return DeclResult(False)
    mono = all(lam[i].cmp(lam[i + 1]) <= 0 for i in range(2 * n - 1))
    middle = n >= 1 and lam[n - 1].sign() < 0 < lam[n].sign()
    if not (mono and middle):
        return DeclResult(False)
    ss = _sum_sq(lam)
    if ss is None:
        g = gram_parts(s)
        if not is_snns(g["S"], lam):
            return DeclResult(None, reason="Σ lam_i² is not rational and lam is not the sorted spectrum")
        ss = trace(g["S"] * g["S"]) / frob_sq(g["S"]) if frob_sq(g["S"]) else fmpq(0)   # Σ r²/‖S‖², S symmetric
    return DeclResult(ss == 1)


def _stat_of(lam, i: int):
    """statO/E/R of exact reals lam: exact (a Quad) when every lam_i is rational, else an arb
    enclosure of the sum (terms with a zero denominator are 0, Lean's x/0 = 0, decided exactly)."""
    from flint import arb, ctx

    from ..exact.quadratic import Quad

    if all(x.is_rational for x in lam):
        xs = [Quad(x.rational) for x in lam]
        return (Mo.stat_o, Mo.stat_e, Mo.stat_r)[i](xs)
    with ctx.workprec(192):
        tot = arb(0)
        for x in lam:
            a = x.to_arb(192)
            den = 1 - a * a if i < 2 else 1 - a
            if i < 2 and (x.cmp(RealAlgebraic.from_rational(1)) == 0 or x.cmp(RealAlgebraic.from_rational(-1)) == 0):
                continue
            if i == 2 and x.cmp(RealAlgebraic.from_rational(1)) == 0:
                continue
            tot += (a if i == 0 else a * a if i == 1 else arb(1)) / den
        return tot


def _stats(s: Subject, i: int) -> DeclResult:
    """statO/E/R lam against tr(H(1 − H²)⁻¹), tr(H²(1 − H²)⁻¹), tr((1 − H)⁻¹) with H = K/‖S‖
    (K = ½JG; 1/0 = 0, so H = 0 when S = 0) and Mathlib's inverse (0 for a singular matrix).  The
    statistic of the computed lam ν/‖S‖ is the exact root sum over det(tI − K), of the sorted
    spectrum the root sum over the nonzero roots of det(tI − S); of another lam, exact when lam is
    rational, else an enclosure (a difference certified, an equality undecided)."""
    from flint import arb

    from ..exact.quadratic import Quad

    _witness_spectra(s)
    g = gram_parts(s)
    f = frob_sq(g["S"])
    n2 = 2 * s.inp.n
    if f == 0:
        tr = {"O": Quad(0), "E": Quad(0), "R": Quad(n2)}
    else:
        st = Mo.trace_stats(g["K"], f)
        from .moments import inverse_witnesses

        for w in inverse_witnesses(st, "K"):
            s.witness(w)
        tr = st
    rhs = tr[("O", "E", "R")[i]]
    lam = _lam(s)
    lhs = None
    P = None
    if f != 0 and s.inp.lam is None:          # the computed lam = ν/‖S‖: sums over det(tI − ½JG)
        P = g["K"].charpoly()
    elif f != 0 and is_snns(g["S"], lam):     # the sorted spectrum: sums over the nonzero roots of S
        P = _nonzero_part(g["S"].charpoly())
    if P is not None:
        try:
            lhs = Mo.stats_from_charpoly(P, f)[i]
        except ValueError:
            lhs = None
    if lhs is None:
        lhs = _stat_of(lam, i)
    if isinstance(lhs, arb):
        if not lhs.overlaps(rhs.to_arb(192)):
            return DeclResult(False, "certified", reason="the statistic and the trace are separated (certified)")
        return DeclResult(None, "certified", reason="lam is irrational and not the sorted spectrum: the sides "
                                                    "overlap, an equality of reals is not decided by enclosures")
    return DeclResult(lhs == rhs)


for _i, _name in enumerate(("statO", "statE", "statR")):
    declaration_check(f"GramForm.{_name}_eq_trace", HEAD)(lambda s, i=_i: _stats(s, i))


def lemma10_values(s: Subject) -> dict:
    """O, E, R of λ for display (``qkverify spectrum`` on a head)."""
    g = gram_parts(s)
    return dict(zip(("statO", "statE", "statR"), Mo.stats_from_charpoly(g["K"].charpoly(), frob_sq(g["S"]))))
