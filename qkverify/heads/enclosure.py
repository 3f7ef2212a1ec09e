"""Verified enclosures of the 2n nonzero eigenvalues of S = ½(L + Lᵀ) for a
nondegenerate head, from a float64 eigendecomposition plus a rigorous
residual bound (SPEC Appendix C Lemma 10; the verified-eigenvalue approach
of INTLAB's ``verifyeig`` / VSDP).

The reduction (exact).  With M = [W_K; W_Q] of rank 2n, G = MMᵀ and
J = [[0, I_n], [I_n, 0]], the nonzero spectrum of S is the spectrum of
½JG (Lemma 10).  Write G = CCᵀ (any factor).  For every nonsingular
2n x 2n matrix Y put

    P = G Y,   B = ½ Pᵀ J P = ½ YᵀGJGY,   H = Yᵀ P = YᵀGY.

With K = CᵀY, B = Kᵀ(½CᵀJC)K and H = KᵀK, and ½CᵀJC is a symmetric
matrix similar to ½JCCᵀ = ½JG.  Ostrowski's theorem (congruence) gives,
with eigenvalues sorted decreasingly,

    λ_i(B) = θ_i · μ_i,   θ_i ∈ [λ_min(H), λ_max(H)] ⊂ [1 − h, 1 + h],

μ_i the eigenvalues of ½JG and h ≥ ‖H − I‖₂ (h < 1 also proves H, hence G,
positive definite: rank M = 2n again).  Weyl's inequality with
D = diag(B_ii) gives |λ_i(B) − D_(i)| ≤ ‖B − D‖₂ ≤ ‖B − D‖_F.  So

    μ_i ∈ [D_(i) − ε, D_(i) + ε] / [1 − h, 1 + h],   ε ≥ ‖B − D‖_F.

Y comes from floating point: a Cholesky factor R of G (G ≈ RRᵀ), the
eigenvectors X of the symmetric ½RᵀJR, Y = R⁻ᵀX, so that B is nearly
diagonal and H nearly the identity.  Y is an exact dyadic matrix; nothing
about it needs to be accurate for the enclosure to be valid.

Rigour.  G is exact (integers).  P, B and H are enclosed by
midpoint-radius interval matrix products.  Two implementations:

* ``fast`` (default): numpy float64 midpoint-radius products with a priori
  rounding-error bounds valid in IEEE binary64 round-to-nearest for any
  summation order and with or without FMA (|fl(AB) − AB| ≤ γ_k |A||B|,
  Higham, *Accuracy and Stability*, §3.1; Rump, *Verification methods*,
  Acta Numerica 2010, §2–§3), every float-computed bound followed by an
  outward guard; the orthogonal form C = H^{-1/2}BH^{-1/2} (see
  :func:`enclose_fast`) with Weyl and Kato–Temple; results as arb balls.
  This assumes numpy/OpenBLAS compute in IEEE binary64 with round to
  nearest (true on x86-64 and aarch64); nothing else about the BLAS matters.
* ``exact-products``: P, B, H computed exactly with FLINT integers, then
  Weyl + Kato–Temple + Ostrowski in arb (no float rounding in the bounds);
* ``arb``: the same products as arb_mat ball arithmetic at a chosen
  precision, with Newton refinement of Y (quadratically convergent) when
  more digits are asked for than float64 eigenvectors give.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
from flint import arb, arb_mat, ctx, fmpz_mat

from ..exact.intervals import arb_bounds
from .exact_gram import TINY as _TINY
from .exact_gram import U, scale2, swap_matrix


class EnclosureFailed(ArithmeticError):
    """The verified route could not produce an enclosure (G numerically
    singular, h ≥ 1, or an enclosure that straddles 0).  Callers fall back
    to the exact characteristic-polynomial route."""


@dataclass
class Enclosure:
    """Certified eigenvalues of ½J·G_int (G_int = Z Zᵀ, integers), sorted
    decreasingly, as arb balls; the eigenvalues of ½JG are these times
    2^{2e} (e from the GramData).

    eps    -- upper bound of ‖B − diag B‖_F (in units of 2^{-scale})
    h      -- upper bound of ‖H − I‖_F
    method -- "fast" or "arb"
    prec   -- working precision in bits (53 for fast)
    """

    values: list
    eps: float
    h: float
    scale: int
    method: str
    prec: int
    steps: int = 0
    notes: list = field(default_factory=list)
    lo: np.ndarray | None = None      # float64 endpoints (values = [lo, hi]·2^scale), fast route
    hi: np.ndarray | None = None

    def to_json(self, digits: int = 20) -> dict:
        return {
            "kind": "enclosure",
            "matrix": "half_JG",
            "scale": "2^{-2e}: values are eigenvalues of ½J(Z Zᵀ) with M = Z·2^e",
            "method": f"verified float eigendecomposition ({self.method}), Weyl + Ostrowski",
            "precision_bits": self.prec,
            "offdiag_bound": float(self.eps) * 2.0 ** self.scale if np.isfinite(self.eps) else None,
            "orthogonality_bound": float(self.h),
            "eigenvalues": [list(arb_bounds(v, digits)) for v in self.values],
        }


# ---------------------------------------------------------------------------
# float64 midpoint-radius products


def _g(k: int) -> float:
    """A safe upper bound for γ_{k+2}/(1 − γ_{k+2}) with γ_j = ju/(1 − ju),
    padded by 1% to absorb the roundings of the bound computation itself."""
    return 1.01 * (k + 2) * U


def _imul(Am: np.ndarray, Ar: np.ndarray | None, Bm: np.ndarray, Br: np.ndarray | None,
          aA: np.ndarray | None = None, aB: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Enclosure [Cm ± Cr] of {AB : |A − Am| ≤ Ar, |B − Bm| ≤ Br} (entrywise).

    Cm = fl(Am Bm).  The true product differs from Am Bm by at most
    |Am|Br + Ar(|Bm| + Br), and fl(Am Bm) from Am Bm by at most
    g|Am||Bm| (g ≥ γ_k).  The radius is evaluated as

        (g|Am| + Ar)|Bm| + (|Am| + Ar)Br
          = g|Am||Bm| + |Am|Br + Ar(|Bm| + Br) + g|Am|Br  ≥  the bound above

    with two products instead of three.  Every entry of it is a sum of
    products of nonnegative floats with at most k + 3 roundings on any path,
    so the computed value underestimates the exact one by a factor at least
    1 − γ_{k+3}, which the (1 + 4g) inflation and the tiny absolute term
    (underflow) cover.  ``aA``/``aB`` may pass |Am|/|Bm| when already known.
    """
    k = Am.shape[1]
    g = _g(k)
    Cm = Am @ Bm
    if aA is None:
        aA = np.abs(Am)
    if aB is None:
        aB = np.abs(Bm)
    rad = (aA * g if Ar is None else aA * g + Ar) @ aB
    if Br is not None:
        rad += (aA if Ar is None else aA + Ar) @ Br
    return Cm, rad * (1.0 + 4 * g) + _TINY


def _fro_ub(W: np.ndarray) -> float:
    """An upper bound of the Frobenius norm of a nonnegative float matrix."""
    k = W.size
    s = float(np.sum(W * W))
    s = s * (1.0 + 2 * _g(k)) + _TINY
    return float(np.sqrt(s)) * (1.0 + 4 * U)


def _gram_float(G: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """(Gm, Gr, s): G·2^{-s} rounded to float64 (Gm) with |G·2^{-s} − Gm| ≤ Gr,
    s chosen so the largest entry is about 1."""
    # G is positive semidefinite, so |G_ij| ≤ max_k G_kk: the diagonal bounds every entry
    mx = max(abs(int(G[i, i])) for i in range(G.shape[0]))
    s = max(mx.bit_length(), 1)
    Gm = scale2(G.astype(np.float64), -s)  # int -> float: correctly rounded; scaling exact
    Gr = np.abs(Gm) * (U * 1.0001) + _TINY
    return Gm, Gr, s


def _perm(n: int) -> np.ndarray:
    return np.concatenate([np.arange(n, 2 * n), np.arange(n)])


def _float_basis(Gm: np.ndarray, n: int) -> np.ndarray:
    """Y ≈ R⁻ᵀX (see module docstring); raises EnclosureFailed when the
    float Cholesky factorisation fails."""
    try:
        R = np.linalg.cholesky(Gm)
    except np.linalg.LinAlgError:
        raise EnclosureFailed("Gram matrix numerically singular (float Cholesky failed)") from None
    p = _perm(n)
    B0 = 0.5 * (R.T @ R[p])
    B0 = 0.5 * (B0 + B0.T)
    try:
        _, X = np.linalg.eigh(B0)       # LAPACK's divide-and-conquer driver: the fastest with vectors here
    except np.linalg.LinAlgError:
        raise EnclosureFailed("float eigendecomposition failed") from None
    from scipy.linalg import solve_triangular

    # Y = R⁻ᵀX by one triangular solve (a third of a general solve's cost); any nonsingular Y is
    # valid, accuracy only helps
    Y = solve_triangular(R, X, trans="T", lower=True, check_finite=False)
    if not np.all(np.isfinite(Y)):
        raise EnclosureFailed("float basis is not finite")
    return Y


def _finish(dsorted: list, eps, h, scale: int, prec: int, rq=None) -> list:
    """Eigenvalue balls from the bounds, as arb balls (prec bits).

    dsorted -- the diagonal of B (exact midpoints), decreasing
    eps     -- upper bound of ‖B − diag(mid)‖₂ (Weyl: λ_i(B) ∈ d_(i) ± eps)
    h       -- upper bound of ‖H − I‖₂ (Ostrowski: μ_i = λ_i(B)/θ_i, θ_i ∈ [1 ± h])
    rq      -- optional per-index data (eta_ball, rho2_upper) for Kato–Temple:
               η = B_ii (a ball holding the true diagonal entry) and ρ² ≥ Σ_{j≠i} B_ij²;
               if λ_i is the only eigenvalue in (a, b) ∋ η then
               η − ρ²/(b − η) ≤ λ_i ≤ η + ρ²/(η − a).  The isolating (a, b) are
               the neighbours' Weyl intervals when those are disjoint.
    The results are multiplied by 2^scale.
    """
    with ctx.workprec(prec):
        if not h < 1:
            raise EnclosureFailed(f"‖H − I‖ bound {float(h):.3g} is not below 1")
        theta = arb(1) + arb(h) * arb(0, 1)
        two = arb(2) ** scale
        e = arb(eps)
        m = len(dsorted)
        ds = [arb(d) if not isinstance(d, arb) else d for d in dsorted]
        weyl = [d + e * arb(0, 1) for d in ds]
        out = []
        for i in range(m):
            lam = weyl[i]
            if rq is not None:
                eta, rho2 = rq[i]
                up_ok = i == 0 or weyl[i - 1].lower() > weyl[i].upper()
                lo_ok = i == m - 1 or weyl[i + 1].upper() < weyl[i].lower()
                if up_ok and lo_ok:
                    b_ = None if i == 0 else weyl[i - 1].lower()
                    a_ = None if i == m - 1 else weyl[i + 1].upper()
                    if (b_ is None or b_ > eta) and (a_ is None or eta > a_):
                        lo = eta.lower() if b_ is None else (eta - arb(rho2) / (b_ - eta)).lower()
                        hi = eta.upper() if a_ is None else (eta + arb(rho2) / (eta - a_)).upper()
                        kt = arb(lo).union(arb(hi))
                        if kt.overlaps(lam):
                            lam = kt.intersection(lam)
            out.append(lam / theta * two)
        return out


def enclose_fast(G: np.ndarray, n: int, Gm_s: tuple | None = None) -> Enclosure:
    """Verified eigenvalues of ½J·G (G: 2n x 2n object array of Python ints,
    symmetric positive definite) by float64 midpoint-radius arithmetic.
    ``Gm_s`` = (Gm, Gr, s) may be passed when the caller already has the
    rounded Gram matrix.  Raises EnclosureFailed when the bounds do not close.

    Besides the Ostrowski form of the module docstring this uses its
    orthogonal version: with H = I + F (‖F‖₂ ≤ h < 1), Q = K H^{-1/2} is
    orthogonal, so C = H^{-1/2} B H^{-1/2} = Qᵀ(½CᵀJC)Q has exactly the
    eigenvalues μ_i.  (I + F)^{-1/2} = I − F/2 + R with
    ‖R‖₂ ≤ r = (3/8)h²/(1 − h) (binomial series, |coefficients| ≤ 3/8 from
    the second on), so C = B − (FB + BF)/2 + Rem with
    ‖Rem‖₂ ≤ δ = ‖B‖₂ (h²/4 + 2r(1 + h/2) + r²).  The first-order part is
    enclosed entrywise; Weyl + Kato–Temple on it, widened by δ, give each
    μ_i to about the entrywise radius of C_ii -- far tighter than the
    Ostrowski factor 1 ± ‖F‖ (used by the arb and exact-product routes)
    for the small eigenvalues.
    """
    Gm, Gr, s = Gm_s if Gm_s is not None else _gram_float(G)
    Y = _float_basis(Gm, n)
    p = _perm(n)
    aY = np.abs(Y)
    Pm, Pr = _imul(Gm, Gr, Y, None, aB=aY)
    aP = np.abs(Pm)
    Bm, Br = _imul(Pm.T, Pr.T, Pm[p], Pr[p], aA=aP.T, aB=aP[p])      # PᵀJP = 2B
    Hm, Hr = _imul(Y.T, None, Pm, Pr, aA=aY.T, aB=aP)
    Bm, Br = 0.5 * Bm, 0.5 * Br                    # exact scalings
    m = 2 * n
    I = np.eye(m)
    Fm = Hm - I                      # off-diagonal exact; diagonal exact by Sterbenz when H_ii ∈ [1/2, 2]
    Fr = Hr + np.abs(Fm) * (2 * U) * I
    h = _fro_ub(np.abs(Fm) + Fr)
    if not h < 0.5:
        raise EnclosureFailed(f"‖H − I‖ bound {h:.3g} is not below 1/2")
    # --- orthogonal form: C = B − (FB + BF)/2 + Rem,  ‖Rem‖₂ ≤ δ
    FBm, FBr = _imul(Fm, Fr, Bm, Br)
    S1 = FBm + FBm.T
    Cm = Bm - 0.5 * S1
    Cr = _up(Br + 0.5 * (FBr + FBr.T) + (np.abs(S1) + np.abs(Cm)) * (2 * U))
    bnorm = _fro_ub(np.abs(Bm) + Br)
    r = 0.375 * h * h / (1.0 - h)
    delta = float(_up(bnorm * (h * h / 4 + 2 * r * (1 + h / 2) + r * r)) * 1.01)
    dC = np.diag(Cm).copy()
    rC = np.diag(Cr) + delta
    offC = np.abs(Cm) + Cr
    np.fill_diagonal(offC, 0.0)
    sq = offC * offC
    colsq = np.sum(sq, axis=0) * (1.0 + 2 * _g(m))          # a sum of m squares: γ_m covered
    # ‖C_approx − diag‖_F² ≤ Σ off-diagonal squares + Σ diagonal radii² (sums of m terms again)
    tot = (float(np.sum(colsq)) + float(np.sum(np.diag(Cr) ** 2))) * (1.0 + 2 * _g(m))
    epsC = float(_up(np.sqrt(_up(tot)) + delta))
    rho2C = _up(_up(np.sqrt(_up(colsq)) + delta) ** 2)
    order = np.argsort(-dC, kind="stable")
    lo, hi = _weyl_kato_temple(dC[order], rC[order], rho2C[order], epsC)
    vals = _balls(lo, hi, s)
    return Enclosure(vals, epsC, h, s, "fast", 53, lo=lo, hi=hi)


def _balls(lo: np.ndarray, hi: np.ndarray, s: int) -> list:
    """arb balls holding [lo_i, hi_i]·2^s (the scaling is exact in float64)."""
    lo = scale2(lo, s)
    hi = scale2(hi, s)
    return [arb(x).union(arb(y)) if x != y else arb(x) for x, y in zip(lo.tolist(), hi.tolist())]


def _up(x):
    """Outward guard for an upper bound: x + 8.08u|x| + tiny ≥ the exact value
    of an expression of at most 8 rounded operations on nonnegative terms
    (or one subtraction) whose float evaluation gave x."""
    return x + np.abs(x) * (8.08 * U) + _TINY


def _down(x):
    """Outward guard for a lower bound (see :func:`_up`)."""
    return x - np.abs(x) * (8.08 * U) - _TINY


def _weyl_kato_temple(d: np.ndarray, r: np.ndarray, rho2: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Rigorous bounds [lo_i, hi_i] of the i-th largest eigenvalue of B from
    its diagonal d (decreasing, exact floats) with diagonal radii r, column
    off-diagonal energies ρ_i² ≤ rho2 and ε ≥ ‖B − diag(d)‖₂ (float64, every
    operation followed by an outward guard).

    Weyl: λ_i ∈ [d_i − ε, d_i + ε].  Kato–Temple where the Weyl interval of i
    is disjoint from its neighbours' (a = upper end of i+1's, b = lower end
    of i−1's): λ_i ∈ [η − ρ²/(b − η), η + ρ²/(η − a)] with η = B_ii ∈ [d_i ± r_i];
    taking η_lo/η_hi on the right sides keeps both ends valid without any
    monotonicity assumption.
    """
    wlo = _down(d - eps)
    whi = _up(d + eps)
    m = len(d)
    inf = np.inf
    b = np.concatenate([[inf], wlo[:-1]])      # lower end of the previous (larger) interval
    a = np.concatenate([whi[1:], [-inf]])      # upper end of the next (smaller) interval
    eta_lo = _down(d - r)
    eta_hi = _up(d + r)
    iso = (b > whi) & (a < wlo) & (b > eta_hi) & (a < eta_lo)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # the first and last eigenvalues have one neighbour: their infinite side stays infinite
        # (inf − inf would be NaN and turn Kato–Temple off for them)
        den_b = np.where(np.isfinite(b), _down(b - eta_hi), np.inf)
        den_a = np.where(np.isfinite(a), _down(eta_lo - a), np.inf)
        qb = np.where(np.isfinite(b), _up(rho2 / den_b), 0.0)
        qa = np.where(np.isfinite(a), _up(rho2 / den_a), 0.0)
        klo = _down(eta_lo - qb)
        khi = _up(eta_hi + qa)
    ok = iso & (den_b > 0) & (den_a > 0) & np.isfinite(klo) & np.isfinite(khi)
    lo = np.where(ok, np.maximum(klo, wlo), wlo)
    hi = np.where(ok, np.minimum(khi, whi), whi)
    bad = lo > hi
    lo[bad], hi[bad] = wlo[bad], whi[bad]
    assert len(lo) == m
    return lo, hi


# ---------------------------------------------------------------------------
# arb route with Newton refinement


def _arb_diag_mid(B: arb_mat) -> list:
    return [B[i, i].mid() for i in range(B.nrows())]


def _fro_ub_arb(E: arb_mat) -> arb:
    """Upper bound (as an exact arb) of the Frobenius norm of an arb matrix:
    sqrt of the upper end of trace(EᵀE)."""
    t = (E.transpose() * E).trace()
    return arb(t.upper()).sqrt().upper()


def enclose_arb(Gz: fmpz_mat, n: int, Gm_s: tuple, prec: int = 128, target_bits: int = 60, max_steps: int = 6,
                Y0: np.ndarray | None = None) -> Enclosure:
    """Verified eigenvalues of ½J·G by arb_mat ball arithmetic at ``prec``
    bits, refining Y by Newton steps until ε/‖B‖ and h fall below
    2^-target_bits (or ``max_steps``).  Raises EnclosureFailed."""
    m = 2 * n
    with ctx.workprec(prec):
        Gm, _, s = Gm_s
        two_s = arb(2) ** (-s)
        Ga = arb_mat(Gz) * two_s
        JGa = arb_mat(swap_matrix(n) * Gz) * two_s
        if Y0 is None:
            Y0 = _float_basis(Gm, n)
        Ya = arb_mat(Y0.tolist())
        I = arb_mat(m, m)
        for i in range(m):
            I[i, i] = 1
        steps = 0
        while True:
            P = Ga * Ya
            Q = JGa * Ya
            B = (P.transpose() * Q) * arb(0.5)
            H = Ya.transpose() * P
            dmid = _arb_diag_mid(B)
            D = arb_mat(m, m)
            for i in range(m):
                D[i, i] = dmid[i]
            E = B - D
            F = H - I
            EtE = E.transpose() * E
            eps = arb(EtE.trace().upper()).sqrt().upper()
            h = _fro_ub_arb(F)
            bnorm = max(abs(x) for x in dmid)
            good = (h < arb(2) ** (-target_bits)) and (eps < bnorm * arb(2) ** (-target_bits))
            if good or steps >= max_steps:
                break
            # Newton step: Y <- Y (I + W), W from the first-order conditions
            Em, Fm = E.mid(), F.mid()
            W = arb_mat(m, m)
            tol = bnorm * arb(2) ** (-40)
            for i in range(m):
                W[i, i] = -Fm[i, i] / 2
                for j in range(m):
                    if i == j:
                        continue
                    gap = dmid[i] - dmid[j]
                    if abs(gap) > tol:
                        W[i, j] = ((dmid[j] * Fm[i, j] - Em[i, j]) / gap).mid()
                    else:
                        W[i, j] = (-Fm[i, j] / 2).mid()
            Ya = (Ya * (I + W)).mid()
            steps += 1
        if not h < 1:
            raise EnclosureFailed("‖H − I‖ bound not below 1")
        # midpoints are exact, so arb comparisons decide the order exactly
        order = sorted(range(m), key=functools.cmp_to_key(lambda i, j: int(dmid[i] > dmid[j]) - int(dmid[i] < dmid[j])),
                       reverse=True)
        ds = [dmid[i] for i in order]
        # Kato–Temple data: η = B_ii (ball), ρ_i² ≤ (EᵀE)_ii (includes the tiny diagonal residual)
        rq = [(B[i, i], EtE[i, i].upper()) for i in order]
        vals = _finish(ds, eps, h, s, prec, rq)
        return Enclosure(vals, float(eps), float(h), s, "arb", prec, steps)


# ---------------------------------------------------------------------------
# exact-product route: the same bounds with B and H computed exactly


def enclose_exact_products(Gz: fmpz_mat, n: int, Gm_s: tuple, prec: int = 160) -> Enclosure:
    """Verified eigenvalues of ½J·G (G = Gz, an exact integer Gram matrix;
    Gm_s = (Gm, Gr, s) its rounded scaled copy) where P = GY, B = ½PᵀJP and
    H = YᵀP are computed exactly in integers (Y rounded to an integer matrix
    times 2^f, which is just another valid choice of Y).  The only rounding
    left is in the final arb steps, so the widths are those of the float64
    eigenvectors: about 1e-14 relative, with Kato–Temple quadratic bounds for
    isolated eigenvalues.  Raises EnclosureFailed."""
    m = 2 * n
    Gm, _, s = Gm_s                 # Gm ≈ G·2^{-s}; Y is built for G·2^{-s}
    Y = _float_basis(Gm, n)
    mx = float(np.max(np.abs(Y)))
    if not np.isfinite(mx) or mx == 0:
        raise EnclosureFailed("float eigenvectors are not finite")
    f = int(np.frexp(mx)[1]) - 62
    Yi = np.rint(scale2(Y, -f)).astype(np.int64)   # |Yi| < 2^62; Y' = Yi·2^f
    Yz = fmpz_mat(Yi.tolist())
    P = Gz * Yz
    Q = swap_matrix(n) * P
    # with Gs = G·2^{-s} and Y = Yi·2^f:  B = ½ YᵀGsJGsY = 2^{2f−2s−1}·B2,
    # H = YᵀGsY = 2^{2f−s}·Hi, and H − I = 2^{2f−s}(Hi − 2^{s−2f} I)
    B2 = P.transpose() * Q
    Hi = Yz.transpose() * P
    if s - 2 * f < 0:
        raise EnclosureFailed("unexpected scaling of the eigenvector matrix")
    one = 1 << (s - 2 * f)
    # exact sums: (B2ᵀB2)_jj − B2_jj² is column j's off-diagonal energy;
    # ‖Hi − one·I‖_F² = Σ_j (FᵀF)_jj with F = Hi − one·I
    # (column sums of squares taken entrywise in Python integers: exact, and
    # far cheaper than forming B2ᵀB2 or FᵀF just for their diagonals)
    b2 = [int(x) for x in B2.entries()]            # row-major, m x m
    diag = [b2[i * m + i] for i in range(m)]
    col = [sum(x * x for x in b2[j::m]) - diag[j] * diag[j] for j in range(m)]
    tot = sum(col)
    hi_ = [int(x) for x in Hi.entries()]
    for i in range(m):
        hi_[i * m + i] -= one
    hsum = sum(x * x for x in hi_)
    with ctx.workprec(prec):
        sc_b = arb(2) ** (2 * f - 2 * s - 1)     # B = sc_b · B2
        sc_h = arb(2) ** (2 * f - s)
        order = sorted(range(m), key=lambda i: diag[i], reverse=True)   # exact integer order
        # eps ≥ ‖B − diag B‖_F, diag taken exactly (as arb balls of exact values)
        eps = (arb(tot).sqrt() * sc_b).upper()
        h = (arb(hsum).sqrt() * sc_h).upper()
        ds = [arb(diag[i]) * sc_b for i in order]
        rq = [(ds[k], (arb(col[i]) * sc_b * sc_b).upper()) for k, i in enumerate(order)]
        vals = _finish(ds, eps, h, s, prec, rq)
        return Enclosure(vals, float(eps), float(h), s, "exact-products", prec)
