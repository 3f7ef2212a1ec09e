"""The first, float64 enclosure of the eigenvalues of ½J·Z Zᵀ, with exact
diagonals only for the eigenvalues that need them (the default route of the
cells; :mod:`.sliced` is the escalation for ill-conditioned heads).

Notation of :mod:`.enclosure`: Ĝ = G·2^(−s) (G = Z Zᵀ exact), Y an exact
basis (float eigenvectors of the Cholesky form rounded to 2 digits per
column, :class:`.sliced._Basis`), P = ĜY, B = ½PᵀJP, H = YᵀP, F = H − I.
The pencil (B, H) has exactly the eigenvalues μ_i of ½JĜ, and with
‖F‖₂ ≤ h < 1/2, C = H^(−1/2)BH^(−1/2) = C₁ + Rem, C₁ = B − (FB + BF)/2,
‖Rem‖₂ ≤ δ = ‖B‖₂(h²/4 + 2r(1 + h/2) + r²), r = (3/8)h²/(1 − h).

Bounds, all rigorous in IEEE binary64 with round to nearest (any summation
order, with or without FMA; γ_k ≤ :func:`.enclosure._g`, every bound
followed by an outward guard), and all but four products O(m²):

* P = fl(Gm·Y): ‖P_true[:, j] − P[:, j]‖₂ ≤ π_j = ‖(γ_m|Gm| + Gr)|y_j|‖₂
  (one product |Gm|·|Y|; Gm, Gr from :meth:`GramData.gram_float`);
* B from A = fl(P[:n]ᵀP[n:]) (PᵀJP = A + Aᵀ): |B_ij − B*_ij| ≤ R_B,ij =
  γ_n‖p_i‖‖p_j‖ + ½(π_i‖p_j‖ + ‖p_i‖π_j + π_iπ_j) + u|B_ij| (Cauchy–Schwarz
  on the exact and the rounded parts);
* H = fl(YᵀP): |H_ij − H*_ij| ≤ R_H,ij = γ_m‖y_i‖‖p_j‖ + ‖y_i‖π_j;
* C₁ off the diagonal: |C₁_ij| ≤ |B_ij| + R_B,ij + ½(f_i b_j + b_i f_j) with
  f_i ≥ ‖F*_{i,:}‖₂, b_j ≥ ‖B*_{:,j}‖₂ (Cauchy–Schwarz for (FB)_ij), giving
  ε ≥ ‖C₁ − diag C₁‖_F and the column energies ρ_i²;
* the diagonal of C₁: C₁_ii = B_ii(1 − F_ii) − Σ_{j≠i} F_ij B_ji, the sum
  bounded by T_i = Σ_{j≠i}(|F_ij| + R_H,ij)(|B_ji| + R_B,ji).

Weyl and Kato–Temple then give each μ_i to about R_B,ii ≈ m·u·‖Ĝ‖ -- a few
1e-14 of the spectrum's norm for a well-conditioned head, so that most
eigenvalues fall in one cell of the 2^-40 grid at once.  For the few that
straddle a grid point, :meth:`Pass1.refine` computes B_ii and H_ii exactly
(the columns p_i = ĜY e_i in digits, :mod:`.digits`) and applies Kato–Temple
again: the width drops to T_i + ρ_i²/gap + δ, some 1e-25 of the norm.  When
the bounds do not close (h ≥ 1/2, an eigenvalue not isolated, Ĝ numerically
singular) the cells escalate to :func:`.sliced.enclose_sliced`.

Cost at 2n = m: the float basis (Cholesky, eigh, a solve) and four products
(ĜY, |Ĝ||Y|, P[:n]ᵀP[n:], YᵀP), some 20·m³ flops; O(m²) otherwise.
"""

from __future__ import annotations

import numpy as np
from flint import fmpq

from .digits import digit_width
from . import enclosure
from .enclosure import EnclosureFailed, _down, _fro_ub, _g, _up, _weyl_kato_temple
from .exact_gram import TINY, U, GramData
from .sliced import _Basis, _column_sums, _combine, _products


def _p2(e: int) -> fmpq:
    return fmpq(1 << e) if e >= 0 else fmpq(1, 1 << (-e))


#: inner-dimension block of the float products: the a priori error bound of a product summed over
#: k terms grows like k·u, so products over 2n = 256 are taken as sums of rank-32 products
#: (γ_32 + γ_(k/32) instead of γ_k: some 6x tighter bounds for the same flops)
KB = 32


def _bmul(A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, float]:
    """fl(A·B) as a sum of rank-KB products, and g with |fl(A·B) − A·B| ≤ g·|A||B|
    entrywise: each block product errs by γ_KB|A_k||B_k|, the sequential sum of the
    q block results by γ_q Σ|fl(A_k B_k)| ≤ γ_q(1 + γ_KB)|A||B|."""
    k = A.shape[1]
    if k <= KB:
        return A @ B, _g(k)
    C = A[:, :KB] @ B[:KB]
    q = 1
    for j in range(KB, k, KB):
        C += A[:, j:j + KB] @ B[j:j + KB]
        q += 1
    gk = _g(KB)
    return C, gk + _g(q) * (1.0 + gk)


def _colnorm_up(A: np.ndarray) -> np.ndarray:
    """Upper bounds of the column 2-norms of a float matrix."""
    m = A.shape[0]
    return _up(np.sqrt(_up(np.einsum("ij,ij->j", A, A) * (1.0 + 2 * _g(m)))))


class Pass1:
    """Float64 enclosures of the eigenvalues of ½J·Z Zᵀ, decreasing (see the
    module docstring).  ``lo``, ``hi`` (float arrays) enclose μ_i·2^(−s);
    ``refine(idx)`` tightens the listed (sorted) indices with exact
    diagonals and returns their exact rational enclosures (μ units ×2^(−s)).
    Raises EnclosureFailed when the bounds do not close."""

    def __init__(self, gd: GramData, Gm_s: tuple, exact_p: bool = False, Y: _Basis | None = None,
                 spacing_exp: int | None = None):
        n = gd.n
        m = 2 * n
        Gm, Gr, s = Gm_s
        self.gd, self.s, self.n, self.m = gd, s, n, m
        w = digit_width(m)
        self.w = w
        if Y is None:
            Y = _Basis(enclosure._float_basis(Gm, n), w)
        self.Y = Y
        self.exact_p = exact_p
        self._Pd = None
        Ym = Y.Ym                                        # exact floats (two w-bit digits per column)
        gm = _g(m)
        if exact_p:
            # P = ĜY exactly in digits (an ill-conditioned head: the float product's a priori error
            # is what limits the bounds), rounded once to float with its radius
            Gd, glo = gd.digits(w)
            Pd, plo = _products(Gd, glo, Y, w)
            self._Pd = (Pd, plo)
            P = np.zeros((m, m))
            ab = np.zeros((m, m))
            with np.errstate(over="ignore", invalid="ignore"):
                for q, D in enumerate(Pd):
                    t = np.ldexp(D, w * (q + plo) + Y.f[None, :] - s)
                    P += t
                    ab += np.abs(t)
            E = ab * ((len(Pd) + 1) * U * 1.01) + TINY * len(Pd)
        else:
            P, gP = _bmul(Gm, Ym)
            aY = np.abs(Ym)
            E = (np.abs(Gm) * gP + Gr) @ aY              # |P_true − P| ≤ E entrywise (γ-bound plus Ĝ's radius)
        if not (np.all(np.isfinite(P)) and np.all(np.isfinite(E))):
            raise EnclosureFailed("Ĝ·Y beyond the float64 range")
        pi = _colnorm_up(_up(E * (1.0 + 2 * gm)))
        if not exact_p and spacing_exp is not None:
            # the diagonal radius ‖p_i‖π_i alone tells an ill-conditioned head: when it exceeds a
            # quarter of the grid spacing for over a quarter of the eigenvalues, ĜY is taken exactly
            pn0 = np.sqrt(np.einsum("ij,ij->j", P, P))
            wide = np.ldexp(pn0 * pi, s + 1 - spacing_exp) > 0.25
            if 4 * int(np.count_nonzero(wide)) > m:
                self.__init__(gd, Gm_s, exact_p=True, Y=Y)
                return
        pn = _colnorm_up(P)
        yn = _colnorm_up(Ym)
        A, gn = _bmul(P[:n].T, P[n:])
        B = 0.5 * (A + A.T)
        RB = _up(gn * np.outer(pn, pn) + 0.5 * (np.outer(pi, pn) + np.outer(pn, pi) + np.outer(pi, pi))
                 + np.abs(B) * (2 * U)) + TINY
        H, gH = _bmul(Ym.T, P)
        RH = _up(gH * np.outer(yn, pn) + np.outer(yn, pi)) + TINY
        F = H - np.eye(m)                                # off-diagonal exact; diagonal exact when H_ii ∈ [1/2, 2]
        dF = np.diag(F).copy()
        RH[np.diag_indices(m)] += np.abs(dF) * (2 * U)
        aF = np.abs(F) + RH
        h = _fro_ub(aF)
        if not h < 0.5:
            raise EnclosureFailed(f"‖H − I‖ bound {h:.3g} is not below 1/2")
        aB = np.abs(B) + RB
        bnorm = _fro_ub(aB)
        r = 0.375 * h * h / (1.0 - h)
        delta = float(_up(bnorm * (h * h / 4 + 2 * r * (1 + h / 2) + r * r)) * 1.01)
        # |(F*B*)_ij| ≤ (|F*||B*|)_ij ≤ ((|F| + R_H)(|B| + R_B))_ij: one product of nonnegative
        # matrices, its rounding covered by the factor (1 + 2γ_m)
        FB = _up((aF @ aB) * (1.0 + 2 * gm))
        offC = aB + _up(0.5 * (FB + FB.T))
        np.fill_diagonal(offC, 0.0)
        offC = _up(offC)
        colsq = _up(np.einsum("ij,ij->j", offC, offC) * (1.0 + 2 * _g(m)))
        aFo = aF.copy()
        np.fill_diagonal(aFo, 0.0)
        aBo = aB.copy()
        np.fill_diagonal(aBo, 0.0)
        T = _up(np.einsum("ij,ji->i", aFo, aBo) * (1.0 + 2 * _g(m)))
        dB = np.diag(B).copy()
        c = dB * (1.0 - dF)
        rB = np.diag(RB)
        rH = np.diag(RH)
        # C₁_ii ∈ c_i ± rad_i (c_i the float diagonal): B*, F* within their radii, the sum within T
        rad = _up(rB * (1.0 + np.abs(dF) + rH) + np.abs(dB) * rH + T + np.abs(c) * (4 * U))
        # ‖C₁ − diag(c)‖₂ ≤ ‖(off-diagonal, diagonal errors)‖_F
        eps = float(_up(np.sqrt(_up((float(np.sum(colsq)) + float(np.sum(rad * rad))) * (1.0 + 2 * _g(2 * m))))))
        order = np.argsort(-c, kind="stable")
        lo, hi = _weyl_kato_temple(c[order], rad[order], colsq[order], eps)     # eigenvalues of C₁
        lo, hi = _down(lo - delta), _up(hi + delta)                               # of C (‖Rem‖₂ ≤ δ)
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            raise EnclosureFailed("float bounds are not finite")
        # the Weyl intervals of C₁ (isolation in refine), as _weyl_kato_temple builds them
        self.wlo = _down(c[order] - eps)
        self.whi = _up(c[order] + eps)
        self.lo, self.hi = lo, hi
        self.order = order
        self.c, self.rad, self.colsq, self.eps, self.delta = c, rad, colsq, eps, delta
        self.T, self.rB, self.rH = T, rB, rH
        self.refined: dict[int, tuple[fmpq, fmpq]] = {}

    def refine(self, idx) -> dict[int, tuple[fmpq, fmpq]]:
        """Exact-diagonal enclosures (exact rationals, μ·2^(−s) units) of the
        sorted indices ``idx``; an index whose Kato–Temple bound does not
        apply keeps its float interval.  Cached."""
        todo = sorted({int(i) for i in idx} - set(self.refined))
        if todo:
            cols = self.order[todo]
            n, m, w = self.n, self.m, self.w
            Y = self.Y
            sub = _SubBasis(Y, cols)
            if self._Pd is not None:
                Pd, plo = [D[:, cols] for D in self._Pd[0]], self._Pd[1]
            else:
                Gd, glo = self.gd.digits(w)
                Pd, plo = _products_cols(Gd, glo, sub, w)    # exact digits of G·Y[:, cols]·2^(−f)
            bd = _combine(_column_sums(Pd, Pd, slice(0, n), slice(n, m)), w, 2 * plo)
            hd = _combine(_column_sums(sub.digits, Pd, slice(0, m), slice(0, m)), w, plo + sub.lo)
            s = self.s
            for k, i in enumerate(todo):
                f = int(Y.f[cols[k]])
                Bii = fmpq(bd[k]) * _p2(2 * f - 2 * s)
                Fii = fmpq(hd[k]) * _p2(2 * f - s) - 1
                eta = Bii * (1 - Fii)
                t = _fq(self.T[cols[k]])
                elo, ehi = eta - t, eta + t                    # C₁_ii exactly up to the second-order sum
                lo, hi = _fq(self.lo[i]), _fq(self.hi[i])
                wlo, whi = _fq(self.wlo[i]), _fq(self.whi[i])
                b_ = None if i == 0 else _fq(self.wlo[i - 1])
                a_ = None if i == self.m - 1 else _fq(self.whi[i + 1])
                iso = ((b_ is None or (b_ > whi and b_ > ehi)) and (a_ is None or (a_ < wlo and a_ < elo)))
                if iso:
                    # Kato–Temple on C₁ (the only eigenvalue in (a, b) is the i-th), within its Weyl interval,
                    # then C = C₁ + Rem moves it by at most δ
                    r2 = _fq(self.colsq[cols[k]])
                    klo = elo if b_ is None else elo - r2 / (b_ - ehi)
                    khi = ehi if a_ is None else ehi + r2 / (elo - a_)
                    dl = _fq(self.delta)
                    nlo, nhi = max(lo, max(klo, wlo) - dl), min(hi, min(khi, whi) + dl)
                    if nlo <= nhi:
                        lo, hi = nlo, nhi
                self.refined[i] = (lo, hi)
        return {i: self.refined[i] for i in idx}


def _fq(x) -> fmpq:
    """A float as an exact rational."""
    p, q = float(x).as_integer_ratio()
    return fmpq(p, q)


def _products_cols(Gd: list, glo: int, Y: "_SubBasis", w: int) -> tuple[list, int]:
    """Digits of Z Zᵀ·Y·2^(−f) for a k-column basis: one stacked float64 product
    (exact: every entry a sum of m products of w-bit digits)."""
    from .digits import carry

    m = Gd[0].shape[0]
    k = Y.digits[0].shape[1]
    R = np.concatenate(Gd, axis=0) @ np.concatenate(Y.digits, axis=1)
    acc: dict = {}
    for q in range(len(Gd)):
        for d in range(len(Y.digits)):
            blk = R[q * m:(q + 1) * m, d * k:(d + 1) * k].astype(np.int64)
            key = q + glo + d + Y.lo
            acc[key] = acc[key] + blk if key in acc else blk
    return carry(acc, w)


class _SubBasis:
    """The columns ``cols`` of a :class:`.sliced._Basis` (digits and scale)."""

    def __init__(self, Y: _Basis, cols):
        self.digits = [D[:, cols] for D in Y.digits]
        self.lo = Y.lo
        self.f = Y.f[cols]
