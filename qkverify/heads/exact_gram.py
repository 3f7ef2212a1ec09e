"""Exact integer data of one head: M = [W_K; W_Q] = Z·2^e, the Gram matrix
G = MMᵀ, the traces that give the profile's a, a rank witness for M and the
characteristic polynomial of ½JG (SPEC Theorem 3, Def 6, Appendix C Lemma 10).

Exactness.  Every binary float is an integer times a power of two.  With
numpy's ``frexp`` (no rounding) M = Z·2^e with Z an integer matrix.  The
entries of Z can have more bits than a float64 product could hold, so Z is
cut into b-bit slices Z = Σ_k C_k 2^{bk} with |C_k| < 2^b and
2b + log2(N) ≤ 53: every product C_k C_lᵀ then has integer partial sums
below 2^53 in absolute value, so BLAS computes it exactly in float64
whatever the summation order (an "error-free" splitting in the style of
Ozaki et al.).  The slices' products are combined in Python integers, giving
G·2^{-2e} = Z Zᵀ exactly.  No decimal strings, no rounding anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from flint import fmpq, fmpz, fmpz_mat, nmod_mat

from ..errors import QKInputError

#: prime for the fast rank witness (2^31 − 1, so residues multiply in int64)
RANK_PRIME = 2147483647


@dataclass
class GramData:
    """Exact integer data of a head.

    n, N      -- head and model dimensions
    e         -- M = Z·2^e exactly, Z an integer matrix
    slices    -- the b-bit slices C_k of Z (float64 arrays of integers)
    bits      -- slice width b
    parts     -- [(shift, P)]: Z Zᵀ = Σ P·2^shift exactly, P int64 (2n x 2n),
                 each |P_ij| < 2^54
    frob_L    -- ‖L‖²·2^{-4e} = tr(G_KK G_QQ) (Python int, exact)
    tr_L2     -- tr(L²)·2^{-4e} = tr(G_KQ G_KQ) (Python int, exact)

    ``G`` (Z Zᵀ as Python ints) is built on first use: the certified float
    route does not need it, the characteristic polynomial does.
    """

    n: int
    N: int
    e: int
    slices: list
    bits: int
    parts: list
    frob_L: int
    tr_L2: int
    _G: np.ndarray | None = None
    _Gz: fmpz_mat | None = None
    _Zi: np.ndarray | None = None

    @property
    def G(self) -> np.ndarray:
        """Z Zᵀ as a (2n x 2n) numpy object array of Python ints (exact);
        the true Gram matrix is G·2^{2e}."""
        if self._G is None:
            G = None
            for sh, P in self.parts:
                t = P.astype(object)
                if sh:
                    t = t * (1 << sh)
                G = t if G is None else G + t
            self._G = G
        return self._G

    def gram_float(self) -> tuple[np.ndarray, np.ndarray, int]:
        """(Gm, Gr, s): |Z Zᵀ·2^{-s} − Gm| ≤ Gr entrywise (rigorous), with s
        such that the largest diagonal entry of Gm is in [1/2, 1)·(1 + small)."""
        from .enclosure import U, _TINY

        # the diagonal of Z Zᵀ bounds every entry (Gram matrix); any power of two
        # is a valid scale, so a float estimate of the largest diagonal entry will do
        dmax = max(float(np.max(np.diag(P).astype(np.float64))) * 2.0 ** sh for sh, P in self.parts)
        s = int(np.frexp(dmax)[1]) if dmax > 0 else 0
        Gm = None
        absum = None
        for sh, P in self.parts:
            t = np.ldexp(P.astype(np.float64), sh - s)   # int64 < 2^54 -> float: may round (≤ u relative)
            Gm = t if Gm is None else Gm + t
            absum = np.abs(t) if absum is None else absum + np.abs(t)
        k = len(self.parts)
        # each conversion and each of the k−1 additions rounds by ≤ u relative to the partial sums
        Gr = absum * ((k + 1) * U * 1.01) + _TINY
        return Gm, Gr, s

    @property
    def frob_S(self) -> fmpq:
        """‖S‖²·2^{-4e} = (‖L‖² + tr L²)/2 (exact)."""
        return fmpq(self.frob_L + self.tr_L2, 2)

    @property
    def frob_T(self) -> fmpq:
        """‖T‖²·2^{-4e} = (‖L‖² − tr L²)/2 (exact)."""
        return fmpq(self.frob_L - self.tr_L2, 2)

    def a(self) -> fmpq:
        """a = ‖T‖²/‖L‖² (Def 6), exact; QKInputError when L = 0."""
        if self.frob_L == 0:
            raise QKInputError("L = 0 has no profile (the definition divides by ‖L‖² = 0)")
        return self.frob_T / self.frob_L

    def Z_int(self) -> np.ndarray:
        """Z as an object array of Python ints (2n x N)."""
        out = None
        for k, C in enumerate(self.slices):
            t = C.astype(np.int64).astype(object)
            if k:
                t = t * (1 << (self.bits * k))
            out = t if out is None else out + t
        return out

    def G_fmpz(self) -> fmpz_mat:
        """Z Zᵀ as an fmpz_mat (exact), assembled from the int64 parts; cached."""
        if self._Gz is None:
            Gz = None
            for sh, P in self.parts:
                t = fmpz_mat(P.tolist())
                if sh:
                    t = t * fmpz(1 << sh)
                Gz = t if Gz is None else Gz + t
            self._Gz = Gz
        return self._Gz

    def JG_fmpz(self) -> fmpz_mat:
        """J·(Z Zᵀ) as an fmpz_mat (rows of the two n-blocks swapped).  Its
        eigenvalues are 2^{1−2e} times those of ½JG (a positive factor)."""
        return swap_matrix(self.n) * self.G_fmpz()


def swap_matrix(n: int) -> fmpz_mat:
    """J = [[0, I_n], [I_n, 0]] as an fmpz_mat (cached per n)."""
    J = _SWAP.get(n)
    if J is None:
        J = fmpz_mat(2 * n, 2 * n)
        for i in range(n):
            J[i, n + i] = 1
            J[n + i, i] = 1
        _SWAP[n] = J
    return J


_SWAP: dict[int, fmpz_mat] = {}


def _pieces(A: np.ndarray) -> np.ndarray:
    """Split an int64 array with |A| < 2^54 into 3 signed 18-bit pieces:
    A = p0 + p1·2^18 + p2·2^36 exactly (stacked on a new first axis)."""
    sgn = np.sign(A)
    v = np.abs(A)
    m = (1 << 18) - 1
    return np.stack([sgn * (v & m), sgn * ((v >> 18) & m), sgn * (v >> 36)])


def _exact_frobenius_pairing(As: list, Cs: list) -> int:
    """Σ_ij (Σ_t 2^{s_t} A_t)_ij (Σ_u 2^{s_u} C_u)_ij exactly, where A_t, C_u
    are given as 18-bit pieces (3, r, c) of int64 arrays below 2^54: every
    partial sum of piece products fits in int64."""
    a = np.concatenate([A.reshape(3, -1) for _, A in As])     # (3T, m)
    c = np.concatenate([C.reshape(3, -1) for _, C in Cs])     # (3U, m)
    D = (a @ c.T).tolist()    # entries < 2^36 · m, exact in int64 for m < 2^26
    sa = [sh + 18 * r for sh, _ in As for r in range(3)]
    sc = [sh + 18 * r for sh, _ in Cs for r in range(3)]
    total = 0
    for i, si in enumerate(sa):
        row = D[i]
        for j, sj in enumerate(sc):
            if row[j]:
                total += row[j] << (si + sj)
    return total


def dyadic_slices(A: np.ndarray, N: int, mbits: int = 53) -> tuple[list[np.ndarray], int, int]:
    """See :func:`_dyadic` (this returns its first three results)."""
    return _dyadic(A, N, mbits)[:3]


def _dyadic(A: np.ndarray, N: int, mbits: int = 53) -> tuple[list[np.ndarray], int, int, np.ndarray | None]:
    """Exact decomposition A = Σ_k C_k 2^{bk} · 2^e of a finite float array.

    Returns (slices, b, e, Zi) with C_k float64 arrays of integers, |C_k| < 2^b,
    b = ⌊(53 − ⌈log2 N⌉)/2⌋, so products of slices over N terms are exact in
    float64.  ``mbits`` = 24 when every entry is a float32 value (its
    mantissa has 24 bits, so |x|·2^{-(exp(x) − 24)} is an integer and e can be
    read off the exponents alone); with 53 the lowest set bit of every
    mantissa is located so that no slice is wasted.  Zi is Z = |A|·2^{-e}·sign
    as int64 when it fits (else None).  Raises QKInputError on NaN/Inf.
    """
    a = np.asarray(A, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise QKInputError("weights contain NaN or Inf, which are not rational numbers")
    b = (53 - int(np.ceil(np.log2(max(N, 2))))) // 2
    nz = a != 0
    if not nz.any():
        return [np.zeros_like(a)], b, 0, np.zeros(a.shape, np.int64)
    mant, ex = np.frexp(a)
    ex64 = ex.astype(np.int64)
    big = np.iinfo(np.int64).max
    if mbits == 24:
        # float32 values (normal or subnormal) are integers times 2^(exp − 24)
        e = int(np.where(nz, ex64, big).min()) - 24
    else:
        m53 = np.abs(np.ldexp(mant, 53)).astype(np.int64)  # exact integers below 2^53
        # exponent of the lowest set bit of each entry: ex − 53 + log2(m53 & −m53)
        low = np.where(nz, m53 & (-m53), 1).astype(np.float64)   # powers of two
        tz = np.frexp(low)[1].astype(np.int64) - 1
        e = int(np.where(nz, ex64 - 53 + tz, big).min())
    # |A|·2^{-e} is an integer; slice it into b-bit pieces, exactly
    top = int(np.where(nz, ex64, np.iinfo(np.int64).min).max()) - e  # bit length bound of Z
    if top > 960:
        raise QKInputError(f"weights span {top} binary orders of magnitude; too wide for exact slicing")
    K = max(1, -(-top // b))
    s = np.sign(a)
    v = np.abs(a)
    slices = []
    if top <= 62:
        # |A|·2^{-e} is an integer below 2^62: exact in int64, slice by bit masks
        Zi = np.ldexp(v, -e).astype(np.int64)
        # remove a common power of two (keeps Z Zᵀ and its characteristic polynomial small)
        low = Zi & (-Zi)
        t = int(np.frexp(float(np.min(low[Zi != 0])))[1]) - 1
        if t > 0:
            Zi >>= t
            e += t
            top -= t
            K = max(1, -(-top // b))
        mask = (1 << b) - 1
        for k in range(K):
            slices.append(s * ((Zi >> (b * k)) & mask).astype(np.float64))
        return slices, b, e, Zi * s.astype(np.int64)
    for k in range(K):
        # floor(|a| / 2^{e+bk}) mod 2^b, exact in float64 (power-of-two scaling)
        t = np.floor(np.ldexp(v, -(e + b * k)))
        hi = np.floor(np.ldexp(v, -(e + b * (k + 1))))
        t = t - np.ldexp(hi, b)  # exact: the result is an integer in [0, 2^b)
        slices.append(s * t)
    return slices, b, e, None


def gram_data(W_Q: np.ndarray, W_K: np.ndarray) -> GramData:
    """Exact Gram data of the head (W_Q, W_K), shapes (n, N) each.

    Raises QKInputError for shape mismatches and NaN/Inf.
    """
    if W_Q.shape != W_K.shape or W_Q.ndim != 2:
        raise QKInputError(f"W_Q {W_Q.shape} and W_K {W_K.shape} must both be n x N")
    n, N = W_Q.shape
    f32 = np.asarray(W_Q).dtype == np.float32 and np.asarray(W_K).dtype == np.float32
    M = np.concatenate([np.asarray(W_K, np.float64), np.asarray(W_Q, np.float64)], axis=0)
    slices, b, e, Zi = _dyadic(M, N, 24 if f32 else 53)
    parts = []
    K = len(slices)
    for k in range(K):
        for l in range(k, K):
            P = (slices[k] @ slices[l].T).astype(np.int64)  # exact: integer sums below 2^53
            if l != k:
                P = P + P.T  # in int64, exact (below 2^54)
            parts.append((b * (k + l), P))
    # ‖L‖² = tr(G_KK G_QQ) = Σ G_KK ∘ G_QQ (both symmetric); tr(L²) = Σ G_KQ ∘ G_KQᵀ
    pcs = [(sh, _pieces(P)) for sh, P in parts]
    frob_L = _exact_frobenius_pairing([(sh, X[:, :n, :n]) for sh, X in pcs], [(sh, X[:, n:, n:]) for sh, X in pcs])
    tr_L2 = _exact_frobenius_pairing([(sh, X[:, :n, n:]) for sh, X in pcs],
                                     [(sh, X[:, :n, n:].transpose(0, 2, 1)) for sh, X in pcs])
    gd = GramData(n, N, e, slices, b, parts, frob_L, tr_L2)
    gd._Zi = Zi
    return gd


def _mod_p(data: GramData, cols: list[int], p: int) -> list[list[int]]:
    """Z[:, cols] mod p as Python ints (exact, int64 arithmetic)."""
    if data._Zi is not None:
        return np.mod(data._Zi[:, cols], p).tolist()
    acc = np.zeros((2 * data.n, len(cols)), dtype=np.int64)
    for k, C in enumerate(data.slices):
        c = np.mod(C[:, cols].astype(np.int64), p)
        w = pow(2, data.bits * k, p)
        acc = np.mod(acc + np.mod(c * w, p), p)
    return acc.tolist()


def _det_mod(rows: list[list[int]], p: int) -> int:
    """det mod p of a square integer matrix given by residues (FLINT)."""
    return int(nmod_mat(fmpz_mat(rows), p).det())


def rank_witness(data: GramData) -> dict | None:
    """Certificate that rank M = 2n: a 2n x 2n minor of Z = M·2^{-e} that is
    nonzero modulo RANK_PRIME (hence nonzero over Z).  Tries columns 0..2n−1,
    then the pivot columns of Z mod p.  Returns the witness dict (kind
    ``rank``, compatible with :class:`qkverify.exact.matrix.RankCertificate`'s
    JSON) or None when rank M mod p < 2n (the caller then uses the exact
    rank certificate).  Serves Theorem 3's hypothesis (``stacked`` surjective).
    """
    n2, N = 2 * data.n, data.N
    if N < n2:
        return None
    p = RANK_PRIME
    cols = list(range(n2))
    det = _det_mod(_mod_p(data, cols, p), p)
    if det == 0:
        full = nmod_mat(fmpz_mat(_mod_p(data, list(range(N)), p)), p)
        R, r = full.rref()
        if r < n2:
            return None
        cols = []
        for i in range(r):
            for j in range(N):
                if int(R[i, j]) != 0:
                    cols.append(j)
                    break
        det = _det_mod(_mod_p(data, cols, p), p)
        if det == 0:
            return None
    return {
        "kind": "rank",
        "matrix": "M",
        "rank": n2,
        "scale": f"2^{-data.e}",
        "minor_rows": list(range(n2)),
        "minor_cols": cols,
        "prime": str(p),
        "minor_mod_p": str(det),
        "left_kernel": [],
        "kernel_cols": [],
        "kernel_minor_mod_p": None,
        "note": "minor of the integer matrix M·2^{-e}; rank M = 2n = number of rows, so no kernel part",
    }
