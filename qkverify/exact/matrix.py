"""Exact rational matrices on ``flint.fmpq_mat``: symmetric/antisymmetric
parts, Frobenius energy, traces, integer scaling, exact rank with a
nonzero-minor witness, spectral projectors and rational orthogonal matrices.

All functions are exact (no floating point) and raise QKInputError on
shape errors that come from user input.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from flint import fmpq, fmpq_mat, fmpz, fmpz_mat, nmod_mat

from ..errors import QKInputError

#: primes used for minor witnesses (largest primes below 2**62, 2**61, ...)
WITNESS_PRIMES = (4611686018427387847, 2305843009213693951, 1152921504606846883, 576460752303423433)


def shape(A: fmpq_mat) -> tuple[int, int]:
    """(rows, cols) of a matrix."""
    return A.nrows(), A.ncols()


def require_square(A: fmpq_mat, name: str = "L") -> int:
    """Return N for an N x N matrix; QKInputError otherwise."""
    r, c = shape(A)
    if r != c:
        raise QKInputError(f"{name} must be square, got {r}x{c}")
    return r


def identity(n: int) -> fmpq_mat:
    """The n x n identity as an exact fmpq_mat."""
    I = fmpq_mat(n, n)
    for i in range(n):
        I[i, i] = 1
    return I


def zeros(r: int, c: int) -> fmpq_mat:
    """The r x c zero matrix (exact)."""
    return fmpq_mat(r, c)


def sym_part(L: fmpq_mat) -> fmpq_mat:
    """S = (L + Lᵀ)/2 (Def A1, Lean ``Appendices.symPart``); exact, N x N."""
    require_square(L)
    return (L + L.transpose()) * fmpq(1, 2)


def skew_part(L: fmpq_mat) -> fmpq_mat:
    """T = (L − Lᵀ)/2 (Def A1, Lean ``Appendices.skewPart``); exact, N x N."""
    require_square(L)
    return (L - L.transpose()) * fmpq(1, 2)


def entries(A: fmpq_mat) -> list[fmpq]:
    """Entries of A in row-major order (exact fmpq)."""
    return list(A.entries())


def frob_sq(A: fmpq_mat) -> fmpq:
    """‖A‖² = tr(AᵀA) = Σ a_ij² (Lean ``Appendices.frobSq``); exact fmpq."""
    s = fmpq(0)
    for x in A.entries():
        s += x * x
    return s


def trace(A: fmpq_mat) -> fmpq:
    """tr(A) for square A (exact); QKInputError if A is not square."""
    n = require_square(A, "matrix")
    s = fmpq(0)
    for i in range(n):
        s += A[i, i]
    return s


def is_zero(A: fmpq_mat) -> bool:
    """A = 0 exactly."""
    return all(x == 0 for x in A.entries())


def is_symmetric(A: fmpq_mat) -> bool:
    """A square and A = Aᵀ exactly (Theorem 4: a = 0 fiber)."""
    return A.nrows() == A.ncols() and A == A.transpose()


def is_antisymmetric(A: fmpq_mat) -> bool:
    """A square and A = −Aᵀ exactly (Theorem 4: a = 1 fiber)."""
    return A.nrows() == A.ncols() and A == -A.transpose()


def to_str_rows(A: fmpq_mat) -> list[list[str]]:
    """Rows of ``"p/q"`` strings (certificate form)."""
    from .rational import fmpq_str

    return [[fmpq_str(A[i, j]) for j in range(A.ncols())] for i in range(A.nrows())]


def integer_scaled(A: fmpq_mat) -> tuple[fmpz_mat, fmpz]:
    """(B, D) with B = D·A an integer matrix and D ≥ 1 the least common
    denominator of the entries; exact."""
    B, D = A.numer_denom()
    return B, D


def block(rows: list[list[fmpq_mat]]) -> fmpq_mat:
    """Assemble a block matrix from a list of block rows (exact)."""
    out = []
    for brow in rows:
        h = brow[0].nrows()
        for i in range(h):
            line = []
            for B in brow:
                if B.nrows() != h:
                    raise ValueError("block heights differ")
                line.extend(B[i, j] for j in range(B.ncols()))
            out.append(line)
    return fmpq_mat(out)


def vstack(A: fmpq_mat, B: fmpq_mat) -> fmpq_mat:
    """Rows of A over rows of B (e.g. M = [W_K; W_Q], 2n x N); QKInputError on a column mismatch."""
    if A.ncols() != B.ncols():
        raise QKInputError(f"cannot stack {A.nrows()}x{A.ncols()} over {B.nrows()}x{B.ncols()}")
    if A.nrows() + B.nrows() == 0:  # keep the width of an empty stack (a head with n = 0)
        return fmpq_mat(0, A.ncols())
    return fmpq_mat(A.tolist() + B.tolist())


@dataclass
class RankCertificate:
    """Exact rank r of an integer-scaled matrix with a witness.

    ``rows``/``cols``: indices of a nonzero r x r minor of B = D·A;
    ``prime``/``minor_mod_p``: the minor's value mod a stated prime (nonzero,
    which proves the minor is nonzero over Z, hence rank ≥ r);
    ``left_kernel``: when r < number of rows, rows−r integer vectors y with
    yᵀB = 0 whose own maximal minor on ``kernel_cols`` is nonzero modulo
    ``kernel_prime`` (they are independent, which proves rank ≤ r).
    """

    rank: int
    rows: list[int]
    cols: list[int]
    prime: int
    minor_mod_p: int
    scale: int
    left_kernel: list[list[int]]
    kernel_cols: list[int]
    kernel_minor_mod_p: int | None
    kernel_prime: int | None = None

    def to_json(self) -> dict:
        return {
            "kind": "rank",
            "rank": self.rank,
            "scale": str(self.scale),
            "minor_rows": self.rows,
            "minor_cols": self.cols,
            "prime": str(self.prime),
            "minor_mod_p": str(self.minor_mod_p),
            "left_kernel": [[str(v) for v in y] for y in self.left_kernel],
            "kernel_cols": self.kernel_cols,
            "kernel_minor_mod_p": None if self.kernel_minor_mod_p is None else str(self.kernel_minor_mod_p),
            "kernel_prime": None if self.kernel_prime is None else str(self.kernel_prime),
        }


def _pivots(R, r: int) -> list[int]:
    piv = []
    for i in range(r):
        for j in range(R.ncols()):
            if R[i, j] != 0:
                piv.append(j)
                break
    return piv


def _mod(B: fmpz_mat, p: int) -> nmod_mat:
    return nmod_mat([[int(x) % p for x in row] for row in B.tolist()], p)


def _minor_witness(B: fmpz_mat, r: int) -> tuple[int, list[int], list[int], int] | None:
    """(p, rows, cols, det mod p) for a nonzero r x r minor of B, found from
    reduced echelon forms modulo the witness primes; None if every prime
    divides every such minor it finds (astronomically unlikely)."""
    if r == 0:
        return WITNESS_PRIMES[0], [], [], 1
    for p in WITNESS_PRIMES:
        Bp = _mod(B, p)
        R, rp = Bp.rref()
        if rp != r:
            continue
        cols = _pivots(R, r)
        Rt, rt = Bp.transpose().rref()
        rows = _pivots(Rt, rt)
        sub = nmod_mat([[int(B[i, j]) % p for j in cols] for i in rows], p)
        d = int(sub.det())
        if d != 0:
            return p, rows, cols, d
    return None


def rank_certificate(A: fmpq_mat) -> RankCertificate:
    """Exact rank of a rational r x c matrix with a re-checkable witness
    (see RankCertificate).  Used for Theorem 3's nondegeneracy (rank of the
    stacked map M = [W_K; W_Q]) and Lemma 3 (rank L).

    The rank is exact: rows − dim(left kernel), the left kernel computed over
    Z by FLINT; the nonzero minor is located modulo a witness prime.  Raises
    ArithmeticError only if no witness prime works (never seen)."""
    B, D = integer_scaled(A)
    X, nullity = B.transpose().nullspace()
    r = B.nrows() - nullity
    found = _minor_witness(B, r)
    if found is None:
        raise ArithmeticError("no witness prime gives a nonzero maximal minor")
    p, rows, cols, m = found
    kern: list[list[int]] = []
    kcols: list[int] = []
    kminor = None
    kp = None
    if nullity:
        kern = [[int(X[i, k]) for i in range(X.nrows())] for k in range(nullity)]
        K = fmpz_mat(kern)
        kw = _minor_witness(K, nullity)
        if kw is None:
            raise ArithmeticError("no witness prime gives a nonzero kernel minor")
        kp, _, kcols, kminor = kw
    return RankCertificate(r, rows, cols, p, m, int(D), kern, kcols, kminor, kp)


def rank(A: fmpq_mat) -> int:
    """Exact rank (fmpq_mat.rref)."""
    return A.rref()[1]


# --------------------------------------------------------------------------
# rational orthogonal matrices (Cayley transform) and random rational data


def cayley_orthogonal(K: fmpq_mat) -> fmpq_mat:
    """U = (I − K)(I + K)⁻¹ for antisymmetric rational K: a rational
    orthogonal matrix (UᵀU = I exactly).  Raises QKInputError when K is not
    antisymmetric."""
    if not is_antisymmetric(K):
        raise QKInputError("Cayley transform needs an antisymmetric matrix")
    n = K.nrows()
    I = identity(n)
    return (I - K) * (I + K).inv()


def random_rational(rng: random.Random, r: int, c: int, num: int = 5, den: int = 4) -> fmpq_mat:
    """r x c matrix with entries p/q, |p| ≤ num, 1 ≤ q ≤ den (exact)."""
    return fmpq_mat([[fmpq(rng.randint(-num, num), rng.randint(1, den)) for _ in range(c)] for _ in range(r)])


def random_antisymmetric(rng: random.Random, n: int, num: int = 3, den: int = 2) -> fmpq_mat:
    """Random rational antisymmetric n x n matrix (input of cayley_orthogonal)."""
    K = fmpq_mat(n, n)
    for i in range(n):
        for j in range(i + 1, n):
            v = fmpq(rng.randint(-num, num), rng.randint(1, den))
            K[i, j] = v
            K[j, i] = -v
    return K
