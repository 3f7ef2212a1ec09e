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
* C₁ off the diagonal: |C₁_ij| ≤ |B_ij| + R_B,ij + ½((|F| + R_H)(|B| + R_B))_ij
  + ½((|F| + R_H)(|B| + R_B))_ji (one product of nonnegative matrices), giving
  ε ≥ ‖C₁ − diag C₁‖_F and the column energies ρ_i²;
* the diagonal of C₁: C₁_ii = B_ii(1 − F_ii) − Σ_{j≠i} F_ij B_ji, the sum
  bounded by T_i = Σ_{j≠i}(|F_ij| + R_H,ij)(|B_ji| + R_B,ji).

Weyl and Kato–Temple then give each μ_i to about R_B,ii ≈ m·u·‖Ĝ‖ -- a few
1e-14 of the spectrum's norm for a well-conditioned head, so that most
eigenvalues fall in one cell of the 2^-40 grid at once.  That the bounds
close at all (‖H − I‖₂ ≤ h < 1/2) proves Ĝ invertible, so rank M = 2n.

For the few eigenvalues that straddle a grid point, :meth:`Pass1.refine`
works on the pencil (½ĜJĜ, Ĝ) itself, whose eigenvalues are the μ_i: for
v = y_i it computes p = Ĝv exactly (digits, :mod:`.digits`), the exact
Rayleigh quotient ρ = B_ii/H_ii and a rigorous bound of the residual
ε² = wᵀĜw/H_ii, w = ½Jp − ρv (for the symmetric C' = Ĝ^(−1/2)(½ĜJĜ)Ĝ^(−1/2)
and u = Ĝ^(1/2)v, ‖C'u − ρu‖²/‖u‖² = ε²); Kato–Temple with the neighbours'
float intervals as isolation gives μ_i to ε²/gap -- second order in the
error of y_i, about 1e-30 of the norm for a well-conditioned head.  When
y_i is too coarse (an ill-conditioned Gram matrix: its error is amplified
by cond Ĝ), two Newton stages replace it by v − Σ_(j≠i) y_j(p_jᵀw)/(μ_j − ρ)
rounded to an exact 53-bit vector, which squares ε.  Kato–Temple on C₁
with the exact B_ii, H_ii (width T_i + ρ_i²/gap + δ) remains where the
residual bound is not finite.  When nothing closes (h ≥ 1/2, an eigenvalue
not isolated, Ĝ numerically singular) the cells escalate to
:func:`.sliced.enclose_sliced`.

Cost at 2n = m: the float basis (Cholesky, eigh, one triangular solve) and
five products (ĜY, |Ĝ||Y|, P[:n]ᵀP[n:], YᵀP, |F||B|), some 22·m³ flops;
O(m²) otherwise; a refined eigenvalue costs O(m²) (one exact column of ĜY,
three matrix-vector products).
"""

from __future__ import annotations

import numpy as np
from flint import fmpq

from .digits import digit_width
from . import enclosure
from .enclosure import EnclosureFailed, _down, _fro_ub, _g, _up, _weyl_kato_temple, scale2
from .exact_gram import TINY, U, GramData
from .sliced import _Basis, _float_of_digits, _products


def _p2(e: int) -> fmpq:
    return fmpq(1 << e) if e >= 0 else fmpq(1, 1 << (-e))


#: refinement stages of one eigenvalue (:meth:`Pass1.refine`): the exact basis vector, then two
#: Newton steps
STAGES = 3

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


def _upp(x: np.ndarray) -> np.ndarray:
    """:func:`.enclosure._up` for a NONNEGATIVE float array (in place when it can): x(1 + 8.08u) + tiny
    is ≥ the exact value of an expression of at most 8 rounded operations on nonnegative terms."""
    x *= 1.0 + 8.08 * U
    x += 2.0 ** -1000
    return x


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
        self.Gm_s = Gm_s
        self._aG = None                                  # (|Gm|, γ_m|Gm| + Gr, |Gm| + Gr), see _abs_gram
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
            P, ab = _float_of_digits(Pd, plo, Y, w, s, m)
            E = ab * ((len(Pd) + 1) * U * 1.01) + TINY * len(Pd)
        else:
            P, gP = _bmul(Gm, Ym)
            aY = np.abs(Ym)
            aG = np.abs(Gm)
            self._aG = (aG, _upp(gm * aG + Gr), _upp(aG + Gr))
            E = aG * gP
            E += Gr
            E = E @ aY                                   # |P_true − P| ≤ E entrywise (γ-bound plus Ĝ's radius)
        if not (np.all(np.isfinite(P)) and np.all(np.isfinite(E))):
            raise EnclosureFailed("Ĝ·Y beyond the float64 range")
        E *= 1.0 + 2 * gm
        pi = _colnorm_up(_upp(E))
        if not exact_p and spacing_exp is not None:
            # the diagonal radius ‖p_i‖π_i alone tells an ill-conditioned head: the float intervals end up
            # about 4 radii wide, so an interval straddles a grid point with probability about
            # min(1, 4r_i) (r_i in grid spacings); when that expects over m/8 straddles -- each an exact
            # refinement -- ĜY is taken exactly instead (a cost choice only: both routes are rigorous
            # and the cells do not depend on it)
            pn0 = np.sqrt(np.einsum("ij,ij->j", P, P))
            r = scale2(pn0 * pi, s + 1 - spacing_exp)
            if 8 * float(np.minimum(1.0, 4.0 * r).sum()) > m:
                self.__init__(gd, Gm_s, exact_p=True, Y=Y)
                return
        pn = _colnorm_up(P)
        yn = _colnorm_up(Ym)
        A, gn = _bmul(P[:n].T, P[n:])
        B = A + A.T
        B *= 0.5
        dB = np.diag(B).copy()
        # R_B = γ_n pn pnᵀ + ½(π pnᵀ + pn πᵀ + π πᵀ) + 2u|B| = (γ_n pn + ½π) pnᵀ + (pn + π)(½π)ᵀ + 2u|B|
        # (nonnegative terms, a few roundings each: _upp)
        aB = np.abs(B)
        RB = np.outer(gn * pn + 0.5 * pi, pn)
        RB += np.outer(pn + pi, 0.5 * pi)
        RB += aB * (2 * U)
        RB = _upp(RB)
        H, gH = _bmul(Ym.T, P)
        RH = np.outer(yn, gH * pn + pi)                  # γ yn pnᵀ + yn πᵀ
        RH = _upp(RH)
        F = H
        F[np.diag_indices(m)] -= 1.0                     # H − I: off-diagonal exact; diagonal exact when H_ii ∈ [1/2, 2]
        dF = np.diag(F).copy()
        RH[np.diag_indices(m)] += np.abs(dF) * (2 * U)
        aF = np.abs(F)
        aF += RH
        h = _fro_ub(aF)
        if not h < 0.5:
            raise EnclosureFailed(f"‖H − I‖ bound {h:.3g} is not below 1/2")
        aB += RB                                         # |B| + R_B
        bnorm = _fro_ub(aB)
        r = 0.375 * h * h / (1.0 - h)
        delta = float(_up(bnorm * (h * h / 4 + 2 * r * (1 + h / 2) + r * r)) * 1.01)
        # |(F*B*)_ij| ≤ (|F*||B*|)_ij ≤ ((|F| + R_H)(|B| + R_B))_ij: one product of nonnegative
        # matrices, its rounding covered by the factor (1 + 2γ_m)
        FB = aF @ aB
        # T_i ≥ Σ_(j≠i) |F*_ij||B*_ji|: the full sum (the j = i term only adds), before FB is reused
        T = _upp(np.einsum("ij,ji->i", aF, aB) * (1.0 + 2 * _g(m)))
        FB *= 1.0 + 2 * gm
        offC = FB + FB.T                                 # ½(FB + (FB)ᵀ) + |B| + R_B, rounded up
        offC *= 0.5
        offC += aB
        offC = _upp(offC)
        np.fill_diagonal(offC, 0.0)
        colsq = _upp(np.einsum("ij,ij->j", offC, offC) * (1.0 + 2 * _g(m)))
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
        self._stage: dict[int, int] = {}
        self._vec: dict = {}           # i -> (v, its float residual w, ρ) of the last stage
        self._P = None

    def refine(self, idx) -> dict[int, tuple[fmpq, fmpq]]:
        """Tighter enclosures (exact rationals, μ·2^(−s) units) of the sorted indices
        ``idx``, one more stage for each index per call (up to :data:`STAGES`; the
        intervals only shrink, and are cached):

        1. the basis vector v = y_i: p = Ĝv exactly (digits), B_ii = ½pᵀJp and H_ii = vᵀp
           exact; Kato–Temple on C₁ (η = B_ii(1 − F_ii) ± T_i, ρ_i², δ) and on the pencil
           (Rayleigh quotient B_ii/H_ii, residual ε², :meth:`_rayleigh`);
        2. and 3. v one Newton step closer to the eigenvector (the float data's eigen-
           decomposition applied to the residual w: v − Σ_(j≠i) y_j (p_jᵀw)/(μ_j − ρ)),
           rounded to an exact vector, then the pencil's Kato–Temple again: ε² is squared
           at each step (an ill-conditioned head whose float basis is too coarse for the
           grid).
        An index whose bounds do not apply keeps its interval."""
        want = sorted({int(i) for i in idx})
        first = [i for i in want if i not in self.refined]
        again = [i for i in want if i in self.refined and self._stage.get(i, 0) < STAGES
                 and i in self._vec]
        if first:
            self._first(first)
        if again:
            self._newton(again)
        return {i: self.refined[i] for i in idx}

    def _first(self, todo: list) -> None:
        cols = self.order[todo]
        n, m, w = self.n, self.m, self.w
        Y = self.Y
        sub = _SubBasis(Y, cols)
        if self._Pd is not None:
            Pd, plo = [D[:, cols] for D in self._Pd[0]], self._Pd[1]
        else:
            Gd, glo = self.gd.digits(w)
            Pd, plo = _products_cols(Gd, glo, sub, w)    # exact digits of G·Y[:, cols]·2^(−f)
        Bs, Hs, eps2, W = self._rayleigh(sub, Pd, plo, Y.Ym[:, cols])
        for k, i in enumerate(todo):
            Bii, Hii = Bs[k], Hs[k]
            lo, hi = _fq(self.lo[i]), _fq(self.hi[i])
            if eps2[k] is None:
                lo, hi = self._c1_kt(i, int(cols[k]), lo, hi, Bii, Hii)
            self.refined[i] = self._pencil_kt(i, lo, hi, Bii, Hii, eps2[k])
            self._stage[i] = 1
            if W is not None:
                self._vec[i] = (Y.Ym[:, cols[k]], W[:, k], _ratio_float(Bii, Hii))

    def _c1_kt(self, i: int, c: int, lo: fmpq, hi: fmpq, Bii: fmpq, Hii: fmpq) -> tuple[fmpq, fmpq]:
        """[lo, hi] ∩ Kato–Temple on C₁ with its exact diagonal B_ii(1 − F_ii) ± T_i (the only
        eigenvalue in (a, b) is the i-th), within its Weyl interval, widened by δ (C = C₁ + Rem)."""
        eta = Bii * (2 - Hii)                          # B_ii(1 − F_ii), F_ii = H_ii − 1
        t = _fq(self.T[c])
        elo, ehi = eta - t, eta + t                    # C₁_ii exactly up to the second-order sum
        wlo, whi = _fq(self.wlo[i]), _fq(self.whi[i])
        b_ = None if i == 0 else _fq(self.wlo[i - 1])
        a_ = None if i == self.m - 1 else _fq(self.whi[i + 1])
        if not ((b_ is None or (b_ > whi and b_ > ehi)) and (a_ is None or (a_ < wlo and a_ < elo))):
            return lo, hi
        r2 = _fq(self.colsq[c])
        klo = elo if b_ is None else elo - r2 / (b_ - ehi)
        khi = ehi if a_ is None else ehi + r2 / (elo - a_)
        dl = _fq(self.delta)
        nlo, nhi = max(lo, max(klo, wlo) - dl), min(hi, min(khi, whi) + dl)
        return (nlo, nhi) if nlo <= nhi else (lo, hi)

    def _newton(self, todo: list) -> None:
        """One Newton step for the vectors of ``todo`` (see :meth:`refine`), in one batch."""
        n, m, w = self.n, self.m, self.w
        V = np.stack([self._vec[i][0] for i in todo], axis=1)
        Wr = np.stack([self._vec[i][1] for i in todo], axis=1)
        rho = np.array([self._vec[i][2] for i in todo])
        Gm, _, _ = self.Gm_s
        Ym = self.Y.Ym
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            Pf = self._Pfloat()                                   # ≈ ĜY (any float approximation will do)
            Cw = Pf.T @ Wr                                        # coordinates of w in the basis (YᵀĜ = Y⁻¹)
            den = self.c[:, None] - rho[None, :]                  # μ_j − ρ by column j of Y
            for k, i in enumerate(todo):
                den[self.order[i], k] = np.inf                    # no step along y_i itself
            Vn = V - Ym @ (Cw / den)
        ok = np.all(np.isfinite(Vn), axis=0) & np.any(Vn != 0, axis=0)
        for k, i in enumerate(todo):
            self._stage[i] = self._stage.get(i, 1) + 1
            if not ok[k]:
                self._vec.pop(i, None)
        keep = [k for k in range(len(todo)) if ok[k]]
        if not keep:
            return
        try:
            basis = _Basis(Vn[:, keep], w, bits=53)      # every bit of the float vector
        except EnclosureFailed:
            return
        Gd, glo = self.gd.digits(w)
        Pd, plo = _products_cols(Gd, glo, basis, w)
        Bs, Hs, eps2, W = self._rayleigh(basis, Pd, plo, basis.Ym)
        for j, k in enumerate(keep):
            i = todo[k]
            lo, hi = self.refined[i]
            if Hs[j] > 0:
                self.refined[i] = self._pencil_kt(i, lo, hi, Bs[j], Hs[j], eps2[j])
            if W is not None and np.all(np.isfinite(W[:, j])):
                self._vec[i] = (basis.Ym[:, j], W[:, j], _ratio_float(Bs[j], Hs[j]))
            else:
                self._vec.pop(i, None)

    def _Pfloat(self) -> np.ndarray:
        """fl(Gm·Ym), computed once (the Newton steps' approximate eigendecomposition)."""
        if self._P is None:
            self._P = self.Gm_s[0] @ self.Y.Ym
        return self._P

    def _pencil_kt(self, i: int, lo: fmpq, hi: fmpq, Bii: fmpq, Hii: fmpq, eps2) -> tuple[fmpq, fmpq]:
        """[lo, hi] ∩ the pencil's Kato–Temple bounds of μ_i from a vector with Rayleigh quotient
        ρ = B_ii/H_ii and residual bound ε² (``eps2``), isolated by the neighbours' float intervals:
        no eigenvalue lies strictly between μ_i and lo_(i−1) (resp. hi_(i+1)), so
        (b − ρ)(ρ − μ_i) ≤ ε² when μ_i < ρ < b, and (μ_i − ρ)(ρ − a) ≤ ε² when a < ρ < μ_i
        (the largest eigenvalue is ≥ every Rayleigh quotient, the smallest ≤)."""
        if eps2 is None or Hii <= 0:
            return lo, hi
        rho = Bii / Hii
        if i == 0:
            lo = max(lo, rho)
        else:
            b = _fq(self.lo[i - 1])
            if rho < b:
                lo = max(lo, rho - eps2 / (b - rho))
        if i == self.m - 1:
            hi = min(hi, rho)
        else:
            a = _fq(self.hi[i + 1])
            if rho > a:
                hi = min(hi, rho + eps2 / (rho - a))
        if lo > hi:
            raise ArithmeticError("Rayleigh-quotient enclosure disjoint from the float one (a bug)")
        return lo, hi

    def _rayleigh(self, basis, Pd: list, plo: int, V: np.ndarray) -> tuple[list, list, list, np.ndarray | None]:
        """For the k vectors v of ``basis`` (exact: v = Σ digits·2^(w(d + lo) + f), float values
        ``V``) and the exact digits ``Pd`` of G·v·2^(−f): B = ½pᵀJp and H = vᵀp (p = Ĝv,
        exact rationals), upper bounds ε² ≥ wᵀĜw/H (exact rationals; None where not finite) of
        the residual w = ½Jp − ρv, ρ = B/H, and the float residuals W.

        Why: with Ĝ ≻ 0 (proved by the float pass) the pencil (½ĜJĜ, Ĝ) is the symmetric
        matrix C' = Ĝ^(−1/2)(½ĜJĜ)Ĝ^(−1/2) (eigenvalues μ_i), u = Ĝ^(1/2)v has Rayleigh
        quotient ρ and ‖C'u − ρu‖² = rᵀĜ⁻¹r with r = ½ĜJĜv − ρĜv = Ĝw, i.e. wᵀĜw; ‖u‖² = H.

        Bounds (float64, round to nearest, any order): p = Σ digits rounded with its
        radius e_p; ρ rounded (2u|ρ|); w = fl(½Jp − ρv) within e_w; Ĝw from Gm with
        γ_m|Gm||w| + Gr|w|; √(wᵀĜw) ≤ √(w_fᵀĜw_f) + √(e_wᵀ(|Gm| + Gr)e_w) (Ĝ ⪰ 0)."""
        n, m, w, s = self.n, self.m, self.w, self.s
        Ps = np.stack(Pd)                                          # (Q, m, k) digits
        bd = _pair_sums(Ps[:, :n], Ps[:, n:], w, 2 * plo)          # Σ_r p_r p_(n+r): ½pᵀJp
        hd = _pair_sums(np.stack(basis.digits), Ps, w, plo + basis.lo)
        fc = basis.f
        k = len(fc)
        Bs = [bd[j] * _p2(2 * int(fc[j]) - 2 * s) for j in range(k)]
        Hs = [hd[j] * _p2(2 * int(fc[j]) - s) for j in range(k)]
        Gm, Gr, _ = self.Gm_s
        aG, gG, sG = self._abs_gram()
        P = np.zeros((m, k))
        ab = np.zeros((m, k))
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            for q, D in enumerate(Pd):
                t = scale2(D, w * (q + plo) + fc[None, :] - s)
                P += t
                ab += np.abs(t)
            ep = ab * ((len(Pd) + 1) * U * 1.01) + TINY * len(Pd)
            rho = np.array([_ratio_float(b, h) for b, h in zip(Bs, Hs)])
            perm = np.r_[n:m, 0:n]
            Vr = V * rho[None, :]
            Wf = 0.5 * P[perm] - Vr
            aV, aW = np.abs(V), np.abs(Wf)
            ew = _up(0.5 * ep[perm] + (2 * U * np.abs(rho) + TINY)[None, :] * aV + U * aW
                     + 1.01 * U * np.abs(Vr) + TINY)
            gm = _g(m)
            g2 = 1.0 + 2 * gm                          # a sum of m nonnegative terms rounds by ≤ γ_m relative
            Q = Gm @ Wf
            EQ = _up((gG @ aW) * g2)                   # |Ĝw_f − Q| ≤ EQ
            tt = _up(np.einsum("ij,ij->j", Wf, Q) + gm * g2 * np.einsum("ij,ij->j", aW, np.abs(Q))
                     + g2 * np.einsum("ij,ij->j", aW, EQ))
            ed = _up(np.einsum("ij,ij->j", ew, _up((sG @ ew) * g2)) * g2)
            num = _up(_up(np.sqrt(np.maximum(tt, 0.0))) + _up(np.sqrt(ed)))
            num = _up(num * num)
        eps2 = []
        for j in range(k):
            x = float(num[j])
            eps2.append(_fq(x) / Hs[j] if np.isfinite(x) and Hs[j] > 0 else None)
        return Bs, Hs, eps2, (Wf if np.all(np.isfinite(Wf)) else None)

    def _abs_gram(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(|Gm|, γ_m|Gm| + Gr, |Gm| + Gr), rounded up, computed once."""
        if self._aG is None:
            Gm, Gr, _ = self.Gm_s
            aG = np.abs(Gm)
            self._aG = (aG, _up(_g(self.m) * aG + Gr), _up(aG + Gr))
        return self._aG


def _pair_sums(A: np.ndarray, B: np.ndarray, w: int, lo: int) -> list[fmpq]:
    """Σ_r a_r·b_r per column, exactly, for a = Σ_q A[q]·2^(w(q + lo_a)) and b likewise (digit
    stacks (Qa, r, k) and (Qb, r, k), balanced w-bit digits; ``lo`` = lo_a + lo_b): every digit
    pair's column dot product is one float64 einsum, exact (each term below 2^(2w−2), at most
    2^(55−2w) terms), gathered by position a + b in int64 and combined in Python integers."""
    D = np.einsum("arj,brj->abj", A, B).astype(np.int64)         # (Qa, Qb, k), exact
    Qa, Qb, k = D.shape
    pos = np.zeros((Qa + Qb - 1, k), np.int64)
    for a in range(Qa):
        pos[a:a + Qb] += D[a]                                     # below 2^53·min(Qa, Qb): fits int64
    out = []
    rows = pos.tolist()
    for j in range(k):
        t = 0
        for q in range(Qa + Qb - 2, -1, -1):                      # Horner in 2^w
            t = (t << w) + rows[q][j]
        out.append(fmpq(t) * _p2(w * lo))
    return out


def _ratio_float(b: fmpq, h: fmpq) -> float:
    """The nearest float of b/h (exact rationals; 0.0 when h = 0, ±inf on overflow)."""
    if h == 0:
        return 0.0
    q = b / h
    try:
        return int(q.p) / int(q.q)
    except OverflowError:
        return float("inf") if q > 0 else float("-inf")


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
    """The columns ``cols`` of a :class:`.sliced._Basis` (digits and scale).  When the basis has
    not split itself into digits yet (a well-conditioned head refines a few columns only), the
    digits of these columns alone: balanced digits are unique, so they are the basis's digits of
    those columns (the all-zero top digits of the subset dropped)."""

    def __init__(self, Y: _Basis, cols):
        if Y._digits is None:
            from .digits import carry, digits_of_int64

            self.digits, self.lo = carry(digits_of_int64(Y._Yi[:, cols], Y.w), Y.w)
        else:
            self.digits = [D[:, cols] for D in Y.digits]
            self.lo = Y.lo
        self.f = Y.f[cols]
