"""Accurate verified eigenvalues of ½J·Z Zᵀ from exact integer products done
in float64 by digit slices (the default enclosure route of the cells).

Digits.  An integer matrix A is held as balanced base-2^w digits,
A = Σ_q D_q·2^(wq) with |D_q| ≤ 2^(w−1) (float64 arrays of integers).  With
2w − 2 + ⌈log₂ m⌉ ≤ 53 every product D_q·E_d of two digit matrices over an
inner dimension m has integer partial sums below 2^53, so BLAS computes it
exactly whatever its summation order (the error-free splitting of Ozaki et
al., used for the exact Gram matrix too); the products are combined in int64
and renormalised by vectorised carries.  No Python loop over entries.

The enclosure (notation of :mod:`.enclosure`).  Ĝ = G·2^(−s) with G = Z Zᵀ;
Y a nonsingular basis (float eigenvectors of the Cholesky form, rounded to
an exact integer matrix with a power-of-two scale per column).  Exactly:
P = ĜY (digits), the diagonals B_ii = ½(PᵀJP)_ii and H_ii = (YᵀP)_ii
(column sums of digit products, combined in Python integers: m values).
Rigorous float64 bounds for everything off the diagonal (|fl(AB) − AB| ≤
γ|A||B|).  With F = H − I, ‖F‖ ≤ h < 1/2, C = H^(−1/2) B H^(−1/2) has exactly
the eigenvalues μ_i of ½JĜ and C = C₁ + Rem with C₁ = B − (FB + BF)/2 and
‖Rem‖₂ ≤ δ = ‖B‖₂(h²/4 + 2r(1 + h/2) + r²), r = (3/8)h²/(1 − h).  The
diagonal of C₁ is B_ii(1 − F_ii) − Σ_{j≠i} F_ij B_ji: the first term exact, the
sum a product of two small quantities (float, bounded).  Weyl on C₁ with
ε ≥ ‖C₁ − diag C₁‖_F, Kato–Temple for isolated eigenvalues (η = (C₁)_ii,
ρ_i² ≥ Σ_{j≠i}(C₁)_ji²), widened by δ, give each μ_i to about ρ_i²/gap + δ:
some 1e-20 of ‖μ‖ for a well-conditioned head, against 1e-12 for the plain
float64 route, so almost every eigenvalue falls inside one cell of the
2^-40 grid at once.  When h is large (an ill-conditioned Gram matrix) Y is
first improved by Newton steps carried in exact digits.

Cost at 2n = 256: one float64 product (Q·m x m)·(m x 2m) for P (Q ≈ 5 digits
of G), four m x m float products for the bounds, O(Q²m²) for the diagonals.
"""

from __future__ import annotations

import math

import numpy as np
from flint import arb, ctx, fmpq

from .digits import carry as _carry
from .digits import digit_width, digits_of_int64 as _digits_of_int64
from .enclosure import Enclosure, EnclosureFailed, _float_basis, _fro_ub, _g, _imul, _perm, _up, scale2
from .exact_gram import TINY, U, GramData

PREC = 192


def _column_sums(A: list, B: list, rows_a: slice, rows_b: slice) -> dict:
    """{a + b: int64 vector} with Σ_k A_a[k, j]·B_b[k', j] over the row ranges
    (exact: each product < 2^(2w−2), at most 2^(55−2w) terms)."""
    out: dict = {}
    for a, Da in enumerate(A):
        X = Da[rows_a]
        for b, Eb in enumerate(B):
            s = np.einsum("kj,kj->j", X, Eb[rows_b]).astype(np.int64)
            out[a + b] = out[a + b] + s if (a + b) in out else s
    return out


def _combine(sums: dict, w: int, lo: int) -> list[int]:
    """Python integers Σ_s sums[s][j]·2^(w(s + lo)) for every column j."""
    m = len(next(iter(sums.values())))
    tot = [0] * m
    for s, v in sums.items():
        sh = w * (s + lo)
        for j, x in enumerate(v.tolist()):
            if x:
                tot[j] += (x << sh) if sh >= 0 else fmpq(x, 1 << (-sh))
    return tot


class _Basis:
    """An exact basis Y = Σ_d Y_d·2^(w·d)·2^(f_j) (balanced digits, per-column
    scale 2^(f_j)) and its float64 rounding with a radius."""

    def __init__(self, Yf: np.ndarray, w: int, ndig: int = 2, bits: int | None = None):
        self.w = w
        mx = np.max(np.abs(Yf), axis=0)
        if not np.all(np.isfinite(mx)) or np.any(mx == 0):
            raise EnclosureFailed("float eigenvectors are not finite / a column is zero")
        # each column rounded to ``bits`` bits below its largest entry (default w·ndig − 2: ndig digits)
        self.f = np.frexp(mx)[1].astype(np.int64) - (w * ndig - 2 if bits is None else bits)
        Yr = np.rint(scale2(Yf, -self.f[None, :]))                      # integers, |Yr| ≤ 2^(w·ndig − 2) ≤ 2^53
        self._Yi = Yr.astype(np.int64)
        self._digits = None
        self._lo = 0
        self.Ym = scale2(Yr, self.f[None, :])                            # exact: scaling by powers of two
        self.Yr = None

    @property
    def digits(self) -> list:
        """The balanced digits (computed on first use: the float pass needs only ``Ym``)."""
        if self._digits is None:
            self._digits, self._lo = _carry(_digits_of_int64(self._Yi, self.w), self.w)
        return self._digits

    @property
    def lo(self) -> int:
        self.digits
        return self._lo

    def _float(self) -> None:
        tot = np.zeros_like(self.digits[0])
        ab = np.zeros_like(tot)
        for d, D in enumerate(self.digits):
            t = scale2(D, self.w * (d + self.lo) + self.f[None, :])
            tot = tot + t
            ab = ab + np.abs(t)
        self.Ym = tot
        k = len(self.digits)
        self.Yr = ab * ((k + 1) * U * 1.01) + TINY * k if k > 1 else None

    def refine(self, dY: np.ndarray) -> None:
        """Y ← Y + dY, dY rounded to about 2w bits below its largest entry
        (relative to each column's scale); any exact Y is a valid basis."""
        w = self.w
        rel = scale2(np.abs(dY), -self.f[None, :])
        mx = float(np.max(rel)) if rel.size else 0.0
        if not np.isfinite(mx) or mx > 2.0 ** 20:
            raise EnclosureFailed("Newton correction is not finite")
        if mx == 0.0:
            return
        lo = (int(np.frexp(mx)[1]) - (2 * w - 2)) // w
        Di = np.rint(scale2(dY, -(self.f[None, :] + w * lo))).astype(np.int64)   # |Di| ≤ 2^(2w−2)·2^w
        acc = _digits_of_int64(Di, w)
        acc = {q + lo: v for q, v in acc.items()}
        for d, D in enumerate(self.digits):
            q = d + self.lo
            acc[q] = acc[q] + D.astype(np.int64) if q in acc else D.astype(np.int64)
        self._digits, self._lo = _carry(acc, w)
        self._float()



def _float_of_digits(Pd, plo: int, Y, w: int, s: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """(P̂, |terms|): the m × m float sum of the digit products Pd (digit q scaled by
    2^(w·(q + plo) + f_j − s), column j's exponent f_j from Y) and the sum of the terms' absolute
    values, from which the callers bound the rounding error of P̂ (overflow left as inf/nan)."""
    P = np.zeros((m, m))
    ab = np.zeros((m, m))
    with np.errstate(over="ignore", invalid="ignore"):
        for q, D in enumerate(Pd):
            t = scale2(D, w * (q + plo) + Y.f[None, :] - s)
            P += t
            ab += np.abs(t)
    return P, ab

def _products(Gd: list, glo: int, Y: _Basis, w: int) -> tuple[list, int]:
    """Digits of Z Zᵀ·Y·2^(−f) (column scale removed): one stacked float64 product."""
    m = Gd[0].shape[0]
    Gs = np.concatenate(Gd, axis=0)                       # (Qm x m)
    Ys = np.concatenate(Y.digits, axis=1)                 # (m x Dm)
    R = Gs @ Ys                                          # exact: |entries| ≤ m·2^(2w−2) ≤ 2^53
    acc: dict = {}
    for q in range(len(Gd)):
        for d in range(len(Y.digits)):
            blk = R[q * m:(q + 1) * m, d * m:(d + 1) * m].astype(np.int64)
            key = q + glo + d + Y.lo
            acc[key] = acc[key] + blk if key in acc else blk
    return _carry(acc, w)


#: pairs of digits whose products together stay below 2^-CROSS_DROP_BITS of the largest pair's bound
#: are bounded instead of computed (exact-product route)
CROSS_DROP_BITS = 110


def _exact_cross(A: list, alo: int, B: list, blo: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Float64 value and radius of (Σ_a A_a 2^(w(a+alo)))ᵀ(Σ_b B_b 2^(w(b+blo))) for
    digit matrices (m x m each): the digit pairs as float64 products (exact:
    every entry is a sum of m products below 2^(2w−2)), gathered per shift in
    int64, renormalised, then rounded (radius γ over the digits, plus
    underflow).  Low-order pairs whose total is provably below
    2^-CROSS_DROP_BITS of the largest pair's bound are not multiplied: each
    entry of A_aᵀB_b is at most m·max|A_a|·max|B_b| in absolute value, and
    their sum (times its power of two) joins the radius."""
    m = A[0].shape[0]
    ma = [float(np.max(np.abs(X))) for X in A]
    mb = [float(np.max(np.abs(X))) for X in B]
    # each pair's bound m·max|A_a|·max|B_b|·2^(w(a+b+alo+blo)) as a base-2 logarithm (no overflow)
    pairs = sorted((math.log2(ma[a]) + math.log2(mb[b]) + w * (a + b), a, b)
                   for a in range(len(A)) for b in range(len(B)) if ma[a] and mb[b])
    if not pairs:
        z = np.zeros((m, m))
        return z, z + TINY
    top = pairs[-1][0]
    rel = 0.0                      # upper bound of the dropped pairs' bounds over the top pair's
    k = 0
    while k < len(pairs) - 1:
        r = math.ldexp(1.0, max(math.ceil(pairs[k][0] - top) + 1, -1000))     # ≥ 2^(lb − top)
        if (rel + r) * 1.01 > math.ldexp(1.0, -CROSS_DROP_BITS):
            break
        rel += r
        k += 1
    try:
        ft = math.floor(top)
        dropped = math.ldexp(rel * m * 2.0 ** (top - ft) * 1.01, ft + w * (alo + blo)) if k else 0.0
    except OverflowError:                                  # beyond the float range: keep every pair
        dropped, k = 0.0, 0
    acc: dict = {}
    for _, a, b in pairs[k:]:
        blk = (A[a].T @ B[b]).astype(np.int64)
        key = a + b + alo + blo
        acc[key] = acc[key] + blk if key in acc else blk
    D, lo = _carry(acc, w)
    val = np.zeros((m, m))
    ab = np.zeros((m, m))
    with np.errstate(over="ignore", invalid="ignore"):
        for q, X in enumerate(D):
            t = scale2(X, w * (q + lo))
            val += t
            ab += np.abs(t)
    if not (np.all(np.isfinite(val)) and np.all(np.isfinite(ab))):
        raise EnclosureFailed("exact products beyond the float64 range")
    # the dropped pairs' bound, rounded up (a sum of k positive floats: factor (1 + γ_k) covered by 1.01)
    return val, ab * ((len(D) + 1) * U * 1.01) + TINY * len(D) + dropped * 1.01


def _exact_offdiag(Pd: list, plo: int, Y: "_Basis", w: int, p: np.ndarray, s: int) -> tuple:
    """(Bm, Br, Hm, Hr) from exact products: B = ½P̂ᵀJP̂ and H = YᵀP̂ with
    P̂ = 2^(−s)·G·Y, each entry rounded once (radius relative to the entry
    itself, not to |P|ᵀ|P|), so Newton steps can shrink the off-diagonal part
    far below float64's product errors."""
    f = Y.f.astype(np.int64)
    sc = f[:, None] + f[None, :]
    B2, B2r = _exact_cross(Pd, plo, [D[p] for D in Pd], plo, w)
    H2, H2r = _exact_cross(Y.digits, Y.lo, Pd, plo, w)
    Bm = scale2(B2, sc - 2 * s - 1)
    Br = scale2(B2r, sc - 2 * s - 1) + TINY
    Hm = scale2(H2, sc - s)
    Hr = scale2(H2r, sc - s) + TINY
    return Bm, Br, Hm, Hr


def enclose_sliced(gd: GramData, Gm_s: tuple, max_newton: int = 3, exact_offdiag: bool = False) -> Enclosure:
    """Verified eigenvalues of ½J·(Z Zᵀ) (decreasing, arb balls), by the
    digit-sliced exact products of the module docstring.  Gm_s = (Gm, Gr, s)
    from :meth:`GramData.gram_float`.  With ``exact_offdiag`` the whole of B
    and H is computed exactly (some 1 GFlop at 2n = 256) and Newton steps go
    on until the bounds are limited by the digits alone (the escalation step
    of the cells).  Raises EnclosureFailed when the bounds do not close
    (singular Gram matrix, h ≥ 1/2)."""
    n = gd.n
    m = 2 * n
    Gm, _, s = Gm_s
    w = digit_width(m)
    Gd, glo = gd.digits(w)
    Y = _Basis(_float_basis(Gm, n), w)
    p = _perm(n)
    I = np.eye(m)
    prev = (math.inf, math.inf)
    for it in range(max_newton + 1):
        Pd, plo = _products(Gd, glo, Y, w)
        # exact diagonals: Σ_k P_kj P_{k+n,j} and Σ_k Y_kj P_kj (times 2^(2f_j), 2^(2f_j))
        bd = _combine(_column_sums(Pd, Pd, slice(0, n), slice(n, m)), w, 2 * plo)
        hd = _combine(_column_sums(Y.digits, Pd, slice(0, m), slice(0, m)), w, plo + Y.lo)
        # float P̂ = ĜY = 2^(−s)·G·Y with a radius
        Pm, ab = _float_of_digits(Pd, plo, Y, w, s, m)
        if not (np.all(np.isfinite(Pm)) and np.all(np.isfinite(ab))):
            raise EnclosureFailed("G·Y beyond the float64 range")
        Pr = ab * ((len(Pd) + 1) * U * 1.01) + TINY * len(Pd)
        if exact_offdiag:
            Bm, Br, Hm, Hr = _exact_offdiag(Pd, plo, Y, w, p, s)
        else:
            aP = np.abs(Pm)
            Bm, Br = _imul(Pm.T, Pr.T, Pm[p], Pr[p], aA=aP.T, aB=aP[p])
            Bm, Br = 0.5 * Bm, 0.5 * Br
            Hm, Hr = _imul(Y.Ym.T, None if Y.Yr is None else Y.Yr.T, Pm, Pr, aB=aP)
        # exact diagonals as rationals: B_jj = 2^(2f_j − 2s)·bd_j, H_jj = 2^(2f_j − s)·hd_j
        Bd = [fmpq(x) * _p2(2 * int(f) - 2 * s) for x, f in zip(bd, Y.f)]
        Fd = [fmpq(x) * _p2(2 * int(f) - s) - 1 for x, f in zip(hd, Y.f)]
        Fm = Hm - I
        np.fill_diagonal(Fm, [float(x) for x in Fd])
        np.fill_diagonal(Bm, [float(x) for x in Bd])
        Fr = Hr.copy()
        np.fill_diagonal(Fr, np.abs(np.diag(Fm)) * (2 * U) + TINY)
        np.fill_diagonal(Br, np.abs(np.diag(Bm)) * (2 * U) + TINY)
        h = _fro_ub(np.abs(Fm) + Fr)
        offB = np.abs(Bm) + Br
        np.fill_diagonal(offB, 0.0)
        dB = np.diag(Bm)
        # good enough when the first-order remainder is below 2^-70 of ‖B‖ and
        # the off-diagonal energy is small; otherwise one Newton step on Y
        bn = float(np.max(np.abs(dB)))
        ob = float(np.max(offB)) / bn
        # stop when the first-order remainder and the off-diagonal part are small,
        # or when a Newton step no longer helps (the float radii dominate)
        good = h < 2.0 ** -60 and ob < 2.0 ** -50
        if good or it == max_newton or (h > prev[0] / 16 and ob > prev[1] / 16):
            break
        prev = (h, ob)
        if not h < 0.25:
            break                     # too far from orthogonal for Newton: the bounds below fail cleanly
        gap = dB[:, None] - dB[None, :]
        sep = np.abs(gap) > 2.0 ** -20 * bn
        with np.errstate(divide="ignore", invalid="ignore"):
            W = np.where(sep, (dB[None, :] * Fm - Bm) / np.where(sep, gap, 1.0), -0.5 * Fm)
        np.fill_diagonal(W, -0.5 * np.diag(Fm))
        # Y ← Y(I + W): the columns are rows of W's action; any exact Y is valid
        Y.refine(Y.Ym @ W)
    if not h < 0.5:
        raise EnclosureFailed(f"‖H − I‖ bound {h:.3g} is not below 1/2")
    # --- C₁ = B − (FB + BF)/2 off the diagonal (float bounds), its diagonal exactly + small
    FBm, FBr = _imul(Fm, Fr, Bm, Br)
    S1 = FBm + FBm.T
    Cm = Bm - 0.5 * S1
    Cr = _up(Br + 0.5 * (FBr + FBr.T) + (np.abs(S1) + np.abs(Cm)) * (2 * U))
    # Σ_{j≠i} F_ij B_ji with a bound (the j = i term is taken exactly below)
    Fo = Fm.copy()
    np.fill_diagonal(Fo, 0.0)
    Bo = Bm.copy()
    np.fill_diagonal(Bo, 0.0)
    Fro = Fr.copy()
    np.fill_diagonal(Fro, 0.0)
    Bro = Br.copy()
    np.fill_diagonal(Bro, 0.0)
    cross = np.sum(Fo * Bo, axis=1)
    cross_r = _up(np.sum(np.abs(Fo) * Bro + Fro * (np.abs(Bo) + Bro), axis=1)
                  + np.sum(np.abs(Fo * Bo), axis=1) * _g(m))
    bnorm = _fro_ub(np.abs(Bm) + Br)
    r = 0.375 * h * h / (1.0 - h)
    delta = float(_up(bnorm * (h * h / 4 + 2 * r * (1 + h / 2) + r * r)) * 1.01)
    offC = np.abs(Cm) + Cr
    np.fill_diagonal(offC, 0.0)
    colsq = np.sum(offC * offC, axis=0) * (1.0 + 2 * _g(m))
    eps = float(_up(np.sqrt(_up(float(np.sum(colsq)) * (1.0 + 2 * _g(m))))))
    rho2 = _up(colsq)
    with ctx.workprec(PREC):
        diag = []
        for i in range(m):
            c = arb(Bd[i]) * (1 - arb(Fd[i])) - arb(float(cross[i]))
            diag.append(c + arb(0, float(cross_r[i])))
        order = sorted(range(m), key=lambda i: diag[i].mid(), reverse=True)
        vals = _weyl_kt_arb([diag[i] for i in order], [float(rho2[i]) for i in order], eps, delta, s)
    return Enclosure(vals, eps, h, s, "sliced", PREC, steps=it)


def _p2(e: int) -> fmpq:
    return fmpq(1 << e) if e >= 0 else fmpq(1, 1 << (-e))


def _weyl_kt_arb(d: list, rho2: list, eps: float, delta: float, s: int) -> list:
    """Eigenvalue balls of C = C₁ + Rem (‖Rem‖ ≤ δ) from the diagonal balls d of
    C₁ (sorted by midpoint, decreasing), column energies ρ_i² and ε ≥ ‖C₁ − diag‖₂;
    times 2^s.  Weyl: λ_i(C₁) between the i-th largest lower end − ε and the
    i-th largest upper end + ε.  Kato–Temple where that interval is disjoint
    from its neighbours'."""
    m = len(d)
    lows = sorted((x.lower() for x in d), reverse=True)
    ups = sorted((x.upper() for x in d), reverse=True)
    e = arb(eps)
    wlo = [lows[i] - e for i in range(m)]
    whi = [ups[i] + e for i in range(m)]
    two = arb(2) ** s
    dl = arb(delta)
    out = []
    for i in range(m):
        lo, hi = wlo[i].lower(), whi[i].upper()
        b_ = None if i == 0 else wlo[i - 1].lower()
        a_ = None if i == m - 1 else whi[i + 1].upper()
        iso = (b_ is None or b_ > hi) and (a_ is None or a_ < lo)
        if iso:
            eta = d[i]
            if (b_ is None or b_ > eta.upper()) and (a_ is None or eta.lower() > a_):
                r2 = arb(rho2[i])
                klo = eta.lower() if b_ is None else (eta.lower() - r2 / (b_ - eta.upper())).lower()
                khi = eta.upper() if a_ is None else (eta.upper() + r2 / (eta.lower() - a_)).upper()
                if klo <= khi:
                    lo, hi = max(lo, klo), min(hi, khi)
        ball = arb(lo).union(arb(hi))
        out.append((ball + dl * arb(0, 1)) * two)
    return out
