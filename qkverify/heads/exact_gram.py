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

When Z fits in int64 (every float32 head, and float64 weights spanning at
most 62 binary orders) :func:`_window_parts` does this with two slices
over blocks of columns and three symmetric rank-k updates per block
(Karatsuba), the few columns outside the two slices' window apart.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from flint import fmpq, fmpz, fmpz_mat, nmod_mat

from ..errors import QKInputError
from .digits import carry, digit_width, digits_of_int64, digits_of_parts

#: prime for the fast rank witness (2^31 − 1, so residues multiply in int64)
RANK_PRIME = 2147483647

#: unit roundoff of IEEE binary64 with round to nearest (used by the rigorous
#: float64 bounds here and in :mod:`.enclosure`, which imports it from here)
U = 2.0 ** -53
#: absorbs every possible underflow contribution of a float64 bound
TINY = 2.0 ** -1000


def scale2(x, e):
    """``np.ldexp(x, e)`` bit for bit, about ten times faster: for a float64 array x, x·2^e by one
    multiplication by the exact power of two 2^e whenever every 2^e is a normal float (an integer
    ``e``, or an integer array that broadcasts against ``x``).  IEEE multiplication rounds x·2^e
    correctly, and so does ldexp (exact unless the result under- or overflows, then correctly
    rounded / ±inf alike); outside that exponent range, or for any other x, ldexp itself.

    >>> import numpy as np
    >>> x = np.array([3.0, -0.75, 5e-324, 1e300, float("nan")])
    >>> all(np.array_equal(scale2(x, e), np.ldexp(x, e), equal_nan=True) for e in (-1100, -1074, -60, 0, 7, 20))
    True
    """
    if getattr(x, "dtype", None) != np.float64:
        # a float32 / float16 x would take the product in its own type (NumPy's weak Python
        # scalars: 2^200 is inf in float32) and an array exponent would promote it to float64
        return np.ldexp(x, e)
    if isinstance(e, (int, np.integer)):
        e = int(e)
        return x * _P2F(e) if -1022 <= e <= 1023 else np.ldexp(x, e)
    e = np.asarray(e)
    if e.size and int(e.min()) >= -1022 and int(e.max()) <= 1023:
        return x * np.ldexp(1.0, e)
    return np.ldexp(x, e)


@functools.lru_cache(maxsize=4096)
def _P2F(e: int) -> float:
    """2^e as a float (exact for −1074 ≤ e ≤ 1023)."""
    import math

    return math.ldexp(1.0, e)



@dataclass
class GramData:
    """Exact integer data of a head.

    n, N      -- head and model dimensions
    e         -- M = Z·2^e exactly, Z an integer matrix
    slices    -- the b-bit slices C_k of Z (float64 arrays of integers)
    bits      -- slice width b
    parts     -- [(shift, P)]: Z Zᵀ = Σ P·2^shift exactly, P int64 (2n x 2n),
                 each |P_ij| < 2^62
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
    _diag: list | None = None
    _digits: dict | None = None
    _gf: tuple | None = None

    def digits(self, w: int | None = None) -> tuple[list[np.ndarray], int]:
        """Balanced base-2^w digits of Z Zᵀ (exact; cached per w); w defaults
        to the width for products over 2n terms (:func:`.digits.digit_width`)."""
        w = digit_width(2 * self.n) if w is None else w
        if self._digits is None:
            self._digits = {}
        if w not in self._digits:
            self._digits[w] = digits_of_parts(self.parts, w)
        return self._digits[w]

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

    def diag_exact(self) -> list[int]:
        """The diagonal of Z Zᵀ as Python ints (exact; cached).  G is positive
        semidefinite, so its largest diagonal entry bounds every entry."""
        if self._diag is None:
            d = [0] * (2 * self.n)
            for sh, P in self.parts:
                v = np.diagonal(P).tolist()
                d = [a + (b << sh) for a, b in zip(d, v)] if sh else [a + b for a, b in zip(d, v)]
            self._diag = d
        return self._diag

    def gram_bits(self) -> int:
        """Bit length of the largest entry of Z Zᵀ (exact)."""
        return max(self.diag_exact()).bit_length()

    def gram_float(self) -> tuple[np.ndarray, np.ndarray, int]:
        """(Gm, Gr, s): |Z Zᵀ·2^{-s} − Gm| ≤ Gr entrywise (rigorous), with
        2^(s−1) ≤ max diag(Z Zᵀ) < 2^s, so every |entry| of Gm is below 1.
        The scale comes from the exact diagonal (no float overflow whatever
        the weights' exponent range); parts scaled below the float range
        underflow to 0 within the absolute term TINY."""
        if self._gf is not None:
            return self._gf
        s = self.gram_bits()
        Gm = None
        absum = None
        for sh, P in self.parts:
            k = sh - s
            # int64 < 2^62 -> float64 may round (≤ u relative); the scaling by 2^k is exact or, below
            # the normal range, one correct rounding (:func:`scale2`)
            t = scale2(P.astype(np.float64), k)
            if Gm is None:
                Gm, absum = t, np.abs(t)
            else:
                Gm += t
                absum += np.abs(t, out=t)
        k = len(self.parts)
        # each conversion and each of the k−1 additions rounds by ≤ u relative to the partial sums
        Gr = absum
        Gr *= (k + 1) * U * 1.01
        Gr += TINY * (k + 1)
        self._gf = (Gm, Gr, s)
        return self._gf

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
        if self._Zi is not None:
            return self._Zi.astype(object)
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


#: 1.5·2^52 and its bit pattern (exact float64 <-> int64 conversion of integers below 2^51)
_MAGIC_F = 1.5 * 2.0 ** 52
_MAGIC_I = np.int64(0x4338000000000000)


def _float32_integers(M32: np.ndarray) -> tuple[np.ndarray, int] | None:
    """Exact M = Zi·2^e for a float32 array.

    Every float32 is an integer times 2^{E'−150} with E' = max(E, 1) from its
    biased exponent field E, and has at most 24 significant bits.  With
    E'_min the smallest such exponent over the nonzero entries (read from the
    bit patterns: for positive floats the bit order is the value order),
    M·2^{150−E'_min} is an integer matrix: the float64 scaling by a power of
    two is exact, and so is the conversion to int64 while the integers stay
    below 2^62 (checked from the largest exponent; below 2^51 it is done by
    adding 1.5·2^52 and reading the bit pattern, one fast pass).  A common power of two
    (the lowest set bit of the OR of all entries; two's complement keeps it)
    is then removed.  Returns (Zi, e) or None when Z would need more than 62
    bits (the caller then uses the generic route).  Raises QKInputError on
    NaN/Inf.
    """
    M32 = np.ascontiguousarray(M32, dtype=np.float32)
    ab = M32.view(np.uint32) & np.uint32(0x7FFFFFFF)
    amax = int(ab.max())
    if amax >= 0x7F800000:
        raise QKInputError("weights contain NaN or Inf, which are not rational numbers")
    if amax == 0:
        return np.zeros(M32.shape, np.int64), 0
    ab -= np.uint32(1)                                # 0 wraps to the largest uint32: the min is the smallest nonzero
    amin = int(ab.min()) + 1
    emin = max(amin >> 23, 1)
    emax = max(amax >> 23, 1)
    if emax - emin + 24 > 62:
        return None
    F = np.multiply(M32, 2.0 ** (150 - emin), dtype=np.float64)   # exact integers below 2^(emax − emin + 24)
    if emax - emin + 24 <= 51:
        # |F| < 2^51: F + 1.5·2^52 is exact and lies in [2^52, 2^53), where a float's bit pattern is
        # that of 2^52 plus its integer offset, so the bits minus those of 1.5·2^52 are F as int64
        F += _MAGIC_F
        Zi = F.view(np.int64)
        Zi -= _MAGIC_I
    else:
        Zi = F.astype(np.int64)                       # exact integers < 2^62
    orv = int(np.bitwise_or.reduce(Zi, axis=None))
    t = (orv & -orv).bit_length() - 1
    if t > 0:
        Zi >>= t                          # exact: every entry is divisible by 2^t
    return Zi, emin - 150 + t


def _slices_of_int(Zi: np.ndarray, N: int) -> tuple[list[np.ndarray], int]:
    """Signed-digit b-bit slices (float64) of an int64 matrix, Zi = Σ C_k 2^{bk}
    with |C_k| < 2^b and 2b + ⌈log2 N⌉ ≤ 53 (so slice products summed over N
    terms are exact in float64).  The lower slices are Zi mod 2^b in [0, 2^b)
    (two's complement ``&``), the top one the arithmetic shift (floor), which
    is below 2^b in absolute value because K·b exceeds the bit length of
    max|Zi|."""
    bmax = (53 - int(np.ceil(np.log2(max(N, 2))))) // 2
    top = int(np.abs(Zi).max()).bit_length()
    K = top // bmax + 1                  # smallest K with K·bmax > top
    b = top // K + 1                     # smallest b with K·b > top (b ≤ bmax)
    mask = (1 << b) - 1
    out = []
    z = Zi
    for _ in range(K - 1):
        out.append((z & mask).astype(np.float64))
        z = z >> b
    out.append(z.astype(np.float64))
    return out, b


def _exact_traces(D: list, lo: int, w: int, n: int) -> tuple[int, int]:
    """(tr(G_KK G_QQ), tr(G_KQ G_KQ)) of G = Σ_q D_q·2^(w(q+lo)) (balanced
    digits, symmetric G), exactly.  Both are sums of entrywise products of n x n
    blocks (tr(AB) = Σ A_ij B_ij for symmetric A, B; tr(C²) = Σ C_ij (Cᵀ)_ij).
    For each digit pairing and each row i the n products of a row are summed
    in one batched float64 product: each term is below 2^(2w−2) in absolute
    value, so the row sums are integers below n·2^(2w−2) ≤ 2^53 (as
    2w − 2 + log₂2n ≤ 53), exact whatever the order; the n row sums are added
    in int64 (below n²·2^(2w−2) < 2^62 for n ≤ 2^10) and the pairings
    combined in Python integers."""
    if n > 1024:
        raise QKInputError(f"d_head = {n} above 1024 is not supported by the exact trace route")
    Q = len(D)
    Ds = np.stack(D)                                       # (Q, 2n, 2n) float64 integers
    out = []
    for X, Y in ((Ds[:, :n, :n], Ds[:, n:, n:]), (Ds[:, :n, n:], Ds[:, n:, :n])):
        # (n, Q, n) @ (n, n, Q): row i of every digit of X against row i of every digit of Y
        R = np.matmul(X.transpose(1, 0, 2), Y.transpose(1, 2, 0))   # exact row sums, see above
        M = R.astype(np.int64).sum(axis=0).tolist()                 # (Q, Q), exact in int64
        tot = 0
        for q in range(Q):
            for r in range(Q):
                v = M[q][r]
                if v:
                    sh = w * (q + r + 2 * lo)
                    if sh < 0:
                        raise ArithmeticError("negative digit position in an integer Gram matrix")
                    tot += v << sh
        out.append(tot)
    return out[0], out[1]


def _slice_parts(slices: list, b: int, n2: int, shift: int = 0) -> list:
    """[(shift, P)] with Σ P·2^shift = C Cᵀ for C = Σ_k slices[k]·2^(bk): one
    stacked float64 product (entries < 2^(2b)·N ≤ 2^53: exact), cross pairs
    symmetrised in int64 (below 2^54)."""
    K = len(slices)
    C = slices[0] if K == 1 else np.concatenate(slices, axis=0)
    Gs = (C @ C.T).astype(np.int64)
    parts = []
    for k in range(K):
        for l in range(k, K):
            P = Gs[k * n2:(k + 1) * n2, l * n2:(l + 1) * n2]
            P = P + P.T if l != k else P.copy()
            parts.append((shift + b * (k + l), P))
    return parts


def _split_parts(Zi: np.ndarray, N: int) -> list | None:
    """Exact parts of Z Zᵀ for float32-derived Z when a few small entries are
    all that keep Z from fitting two slices (real and synthetic heads alike:
    tens of entries in a million).  Returns None when the split does not pay.

    Z = Z_b + Z_s with Z_s the entries below 2^(L−1), L = top + 25 − 2b.  An
    integer read from a float32 has at most 24 significant bits, so every
    entry of Z_b is divisible by 2^u, u = L − 24 (checked), and Z_b = 2^u·Z″
    with Z″ below 2^(2b−1): two slices, a product 4/9 of three.  Then

        Z Zᵀ = 2^(2u)·Z″Z″ᵀ + 2^u(X + Xᵀ) + Z_s Z_sᵀ,   X = Z″[:, c] Z_s[:, c]ᵀ

    over the c columns that hold a small entry, as exact float64 products of
    slices of Z″ and balanced digits of Z_s (sizes chosen so that every sum of
    products stays below 2^53)."""
    n2 = Zi.shape[0]
    bmax = (53 - int(np.ceil(np.log2(max(N, 2))))) // 2
    A = np.abs(Zi)
    top = int(A.max()).bit_length()
    if top <= 2 * bmax:
        return None
    L = top + 25 - 2 * bmax
    u = L - 24
    small = (A < (1 << (L - 1))) & (Zi != 0)
    cols = np.flatnonzero(small.any(axis=0))
    c = len(cols)
    if c == 0 or c > N // 8 or u <= 0:
        return None
    Zb = np.where(small, 0, Zi)
    if np.any(Zb & ((1 << u) - 1)):
        return None                                  # not float32-shaped after all: the generic route
    Zpp = Zb >> u                                    # exact; |Z″| < 2^(2b − 1)
    sl, b = _slices_of_int(Zpp, N)
    if len(sl) > 2:
        return None
    parts = _slice_parts(sl, b, n2, 2 * u)
    Zs = np.where(small, Zi, 0)[:, cols]             # (2n x c), |Z_s| < 2^(L−1)
    lc = max(1, int(np.ceil(np.log2(c + 1))))
    ds = min(54 - b - lc, (55 - lc) // 2)
    if ds < 8:
        return None
    T, tlo = carry(digits_of_int64(Zs, ds), ds)       # balanced digits, |T_d| ≤ 2^(ds−1)
    S = [x[:, cols] for x in sl]                      # |S_k| < 2^b
    # cross: c·2^(b + ds − 1) ≤ 2^53; small x small: c·2^(2ds − 2) ≤ 2^53
    for k, Sk in enumerate(S):
        for d, Td in enumerate(T):
            P = (Sk @ Td.T).astype(np.int64)
            parts.append((u + b * k + ds * (d + tlo), P + P.T))
    for d1 in range(len(T)):
        for d2 in range(d1, len(T)):
            P = (T[d1] @ T[d2].T).astype(np.int64)
            parts.append((ds * (d1 + d2 + 2 * tlo), P + P.T if d1 != d2 else P))
    return parts


#: columns per block of the float32 Gram route: 2b + 2 + ⌈log₂ 512⌉ ≤ 53 gives 21-bit slices (a
#: 42-bit window), and the slices of a block of a 2n = 256 head take 2 MiB whatever N
GRAM_BLOCK = 512


def _bitlen(v: np.ndarray) -> np.ndarray:
    """Bit lengths of nonnegative int64 values below 2^62 (0 for 0), exactly:
    frexp of the float may round up across a power of two, so it is corrected."""
    b = np.frexp(v.astype(np.float64))[1].astype(np.int64)
    big = (b > 0) & (b < 63)
    over = np.zeros(v.shape, bool)
    over[big] = (v[big] >> (b[big] - 1)) == 0         # rounded up: one bit fewer
    return b - over


def _window_parts(Zi: np.ndarray, block: int = GRAM_BLOCK) -> list:
    """Exact parts [(shift, P)] of Z Zᵀ (Σ P·2^shift, P int64) for an int64
    Z (2n x N, |Z| < 2^62): one symmetric rank-k update per block of columns.

    The regular columns fit a window [L, L + 2b) (every entry divisible by
    2^L and below 2^(L+2b) in absolute value): Z = C₁·2^(L+b) + C₀·2^L with
    C₁ = Z >> (L + b) (floor), C₀ = (Z >> L) mod 2^b, so |C₁| ≤ 2^b,
    0 ≤ C₀ < 2^b and |C₁ + C₀| ≤ 2^(b+1).  Three symmetric rank-k updates per
    block (Karatsuba: C₁C₁ᵀ, C₀C₀ᵀ and (C₁ + C₀)(C₁ + C₀)ᵀ, the cross term
    their difference) cost 3/4 of one on [C₁; C₀]; with
    2b + 2 + ⌈log₂ block⌉ ≤ 53 every entry of each is an integer below 2^53,
    so BLAS computes it exactly whatever its order.  Block sums are gathered
    in int64.  When every regular entry spans at most b bits, one slice.  The
    few columns with an entry outside the window (outlier dimensions, tiny
    entries) are multiplied apart with as many slices as they need
    (:func:`_slices_of_int`, :func:`_slice_parts`).  The window is the one
    that leaves the fewest such columns (computed from per-column maxima and
    lowest set bits)."""
    n2, N = Zi.shape
    block = max(1, min(block, N))
    b = (51 - int(np.ceil(np.log2(max(block, 2))))) // 2
    # the OR of a column's |Z_ij| has the bit length of its largest entry and the lowest set bit of
    # its lowest one (−x and x share their lowest set bit)
    cor = np.bitwise_or.reduce(np.abs(Zi), axis=0)
    nzc = cor > 0
    if not nzc.any():
        return [(0, np.zeros((n2, n2), np.int64))]
    bits = _bitlen(cor)                                    # |Z_ij| < 2^bits[j]
    low = _bitlen(cor & -cor) - 1                          # every entry of column j divisible by 2^low[j]
    tmax = int(bits.max())
    lmin = int(low[nzc].min())
    if tmax - lmin <= b:                                   # one slice holds every entry exactly
        C = np.empty((n2, block))
        P = None
        for j0 in range(0, N, block):
            j1 = min(N, j0 + block)
            Cb = C[:, :j1 - j0]
            Cb[...] = Zi[:, j0:j1] >> lmin
            S = (Cb @ Cb.T).astype(np.int64)
            P = S if P is None else P + S
        return [(2 * lmin, P)]
    best = None
    for T in range(tmax, max(tmax - 24, 2 * b) - 1, -1):
        L = T - 2 * b
        exc = nzc & ((bits > T) | (low < L))
        c = int(np.count_nonzero(exc))
        if best is None or c < best[0]:
            best = (c, T, exc)
    if tmax <= 2 * b and (best is None or best[0] > 0):
        best = (0, 2 * b, np.zeros(N, bool))               # every entry fits [0, 2b)
    _, T, exc = best
    L = max(T - 2 * b, 0)
    mask = (1 << b) - 1
    # tiny-entry columns (every entry below 2^T, some with bits below 2^L) stay in the window
    # products with their bits below 2^L cut off (W = C₁·2^(L+b) + C₀·2^L), and the cut-off part
    # R = Z − W ∈ [0, 2^L) is added back as one correction part W Rᵀ + R Wᵀ + R Rᵀ: the products
    # C₁Rᵀ, C₀Rᵀ, RRᵀ over the c such columns are exact in float64 (entries below c·2^(b+L) and
    # c·2^(2L)), combined in int64 (below c·2^(2L+2b+2) ≤ 2^62); the others -- outlier columns
    # above 2^T -- are sliced apart
    tiny = exc & (bits <= T)
    ct = int(np.count_nonzero(tiny))
    if ct and 2 * L + 2 * b + 2 + ct.bit_length() <= 62 and b + L + ct.bit_length() <= 53:
        exc = exc & ~tiny
        tcols = np.flatnonzero(tiny)
    else:
        tcols = np.zeros(0, np.int64)
    # outlier columns (an entry at or above 2^T) that fit a window of their own, [L + δ, L + δ + 2b)
    # with δ ≥ 1: the same three products per group of equal δ, folded into the main parts shifted by
    # 2δ (int64: every part stays below 2^62, checked from the counts); the rest is sliced apart
    groups: dict[int, list[int]] = {}
    for j in np.flatnonzero(exc & (bits > T)).tolist():
        d = int(bits[j]) - T
        if low[j] >= L + d:
            groups.setdefault(d, []).append(j)
    budget = N << (2 * b + 2)                              # the main parts' bound: N·2^(2b+2)
    folded = {}
    for d in sorted(groups):
        add = len(groups[d]) << (2 * b + 2 + 2 * d)
        if budget + add < 1 << 62:
            budget += add
            folded[d] = np.array(groups[d], np.int64)
            exc[folded[d]] = False
    ecols = np.flatnonzero(exc)
    zcols = np.sort(np.concatenate([ecols] + list(folded.values()))) if folded else ecols   # apart from the window
    C1 = np.empty((n2, block))
    C0 = np.empty((n2, block))
    G2 = Gp = G0 = None
    for j0 in range(0, N, block):
        j1 = min(N, j0 + block)
        Zb = Zi[:, j0:j1]
        A1 = C1[:, :j1 - j0] if j1 - j0 < block else C1
        A0 = C0[:, :j1 - j0] if j1 - j0 < block else C0
        A1[...] = Zb >> (L + b)
        A0[...] = (Zb >> L) & mask
        loc = zcols[(zcols >= j0) & (zcols < j1)] - j0
        if loc.size:
            A1[:, loc] = 0.0
            A0[:, loc] = 0.0
        s2 = (A1 @ A1.T).astype(np.int64)                 # exact (see above); numpy calls syrk
        s0 = (A0 @ A0.T).astype(np.int64)
        A1 += A0                                           # C₁ + C₀, exact (|·| ≤ 2^(b+1))
        sp = (A1 @ A1.T).astype(np.int64)
        if G2 is None:
            G2, Gp, G0 = s2, sp, s0
        else:
            G2 += s2
            Gp += sp
            G0 += s0
    G1 = Gp - G2 - G0                                      # C₁C₀ᵀ + C₀C₁ᵀ, exact in int64
    for d, cols in folded.items():
        Zo = Zi[:, cols]
        O1 = (Zo >> (L + d + b)).astype(np.float64)        # |O₁| ≤ 2^b, 0 ≤ O₀ < 2^b: as the main slices
        O0 = ((Zo >> (L + d)) & mask).astype(np.float64)
        o2 = (O1 @ O1.T).astype(np.int64)
        o0 = (O0 @ O0.T).astype(np.int64)
        O1 += O0
        o1 = (O1 @ O1.T).astype(np.int64) - o2 - o0
        G2 += o2 << (2 * d)                                # 2^(2(L+d+b)) = 2^(2(L+b))·2^(2d)
        G1 += o1 << (2 * d)
        G0 += o0 << (2 * d)
    parts = [(2 * (L + b), G2), (2 * L + b, G1), (2 * L, G0)]
    if tcols.size:
        Zt = Zi[:, tcols]
        Rf = (Zt & ((1 << L) - 1)).astype(np.float64)     # R = Z mod 2^L (two's complement: in [0, 2^L))
        X1 = ((Zt >> (L + b)).astype(np.float64) @ Rf.T).astype(np.int64)          # C₁Rᵀ, exact
        X0 = (((Zt >> L) & mask).astype(np.float64) @ Rf.T).astype(np.int64)      # C₀Rᵀ, exact
        X = (X1 << (L + b)) + (X0 << L)                    # W Rᵀ
        parts.append((0, X + X.T + (Rf @ Rf.T).astype(np.int64)))
    if ecols.size:
        Ze = Zi[:, ecols]
        sl, be = _slices_of_int(Ze, len(ecols))
        parts.extend(_slice_parts(sl, be, n2))
    return parts


def gram_data(W_Q: np.ndarray, W_K: np.ndarray) -> GramData:
    """Exact Gram data of the head (W_Q, W_K), shapes (n, N) each.

    float32 weights (every real checkpoint here) take an integer-only route:
    Z from the IEEE bit fields, slices of Z, one float64 product of the
    stacked slices (exact, see the module docstring), with the few small
    entries that would cost a third slice handled apart (:func:`_split_parts`).
    Other dtypes go through :func:`_dyadic`.  Raises QKInputError for shape
    mismatches and NaN/Inf.  Serves SPEC Def 6 (a) and Appendix C Lemma 10 (G).
    """
    if W_Q.shape != W_K.shape or W_Q.ndim != 2:
        raise QKInputError(f"W_Q {W_Q.shape} and W_K {W_K.shape} must both be n x N")
    n, N = W_Q.shape
    n2 = 2 * n
    f32 = np.asarray(W_Q).dtype == np.float32 and np.asarray(W_K).dtype == np.float32
    fast = _float32_integers(np.concatenate([W_K, W_Q], axis=0)) if f32 else None
    parts = None
    if fast is not None:
        Zi, e = fast
        parts = _window_parts(Zi)
        slices, b = [], 0
    else:
        M = np.concatenate([np.asarray(W_K, np.float64), np.asarray(W_Q, np.float64)], axis=0)
        # the lowest set bit of every entry located (mbits 53) even for float32 values: e is then the
        # exponent of the largest power of two dividing every entry, the one the kernel reads from the
        # weights (with mbits 24 a float32 head spanning over 62 binary orders, e.g. float16 weights
        # from 2^-24 to 6e4, kept a factor 2^23 in Z: "scale exponent -47 ≠ -24")
        slices, b, e, Zi = _dyadic(M, N, 53)
        if Zi is not None:              # an integer matrix below 2^62 (float64, dequantised GGUF): the blocked route
            parts = _window_parts(Zi)
    if parts is None:
        parts = _slice_parts(slices, b, n2)
    gd = GramData(n, N, e, slices, b, parts, 0, 0)
    gd._Zi = Zi
    # ‖L‖² = tr(G_KK G_QQ) = Σ G_KK ∘ G_QQ (both symmetric); tr(L²) = Σ G_KQ ∘ G_KQᵀ
    w = digit_width(n2)
    D, lo = gd.digits(w)
    gd.frob_L, gd.tr_L2 = _exact_traces(D, lo, w, n)
    return gd


def _mod_p(data: GramData, cols: list[int], p: int) -> list[list[int]]:
    """Z[:, cols] as Python ints congruent to Z mod p (exact, int64 arithmetic):
    Z itself when it fits in int64 (FLINT reduces it), else residues."""
    if data._Zi is not None:
        return data._Zi[:, cols].tolist()
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
