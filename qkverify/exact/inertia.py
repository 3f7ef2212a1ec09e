"""Exact inertia (n_pos, n_neg, n_zero) of a rational symmetric matrix by two
independent methods that must agree:

1. the characteristic polynomial and Descartes' rule of signs -- exact here
   because a symmetric matrix has only real eigenvalues, so the number of
   sign changes of p(x) (resp. p(−x)) equals the number of positive
   (resp. negative) roots;
2. a symmetrically pivoted LDLᵀ congruence over Q (1x1 and 2x2 pivots);
   Sylvester's law of inertia reads the inertia off D.

Both return a witness that an independent checker re-verifies: the
integer characteristic polynomial of D·S with its sign-change counts, or
(perm, L, D) with P S Pᵀ = L D Lᵀ.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flint import fmpq, fmpq_mat, fmpz_poly

from ..errors import QKInputError
from .rational import fmpq_str


@dataclass(frozen=True)
class Inertia:
    """Signature of a real symmetric matrix: counts of positive, negative
    and zero eigenvalues with multiplicity (exact integers)."""

    n_pos: int
    n_neg: int
    n_zero: int
    method: str = ""
    witness: dict = field(default_factory=dict, compare=False, hash=False)

    def triple(self) -> tuple[int, int, int]:
        return (self.n_pos, self.n_neg, self.n_zero)

    def to_json(self) -> dict:
        return {"n_pos": self.n_pos, "n_neg": self.n_neg, "n_zero": self.n_zero}


def sign_changes(coeffs: list) -> int:
    """Number of sign changes in a coefficient sequence, zeros skipped."""
    prev = 0
    n = 0
    for c in coeffs:
        s = (c > 0) - (c < 0)
        if s == 0:
            continue
        if prev and s != prev:
            n += 1
        prev = s
    return n


def _require_symmetric(S: fmpq_mat) -> int:
    if S.nrows() != S.ncols():
        raise QKInputError(f"a symmetric matrix must be square, got {S.nrows()}x{S.ncols()}")
    if S != S.transpose():
        raise QKInputError("matrix is not symmetric")
    return S.nrows()


def integer_charpoly(S: fmpq_mat) -> tuple[fmpz_poly, int]:
    """(p, D): p = charpoly of the integer matrix D·S (monic, integer
    coefficients, roots = D × eigenvalues of S), D the least common
    denominator of S.  Exact (FLINT)."""
    B, D = S.numer_denom()
    return B.charpoly(), int(D)


def inertia_from_charpoly(p: fmpz_poly, N: int) -> Inertia:
    """Inertia of a symmetric matrix from its (real-rooted) characteristic
    polynomial p of degree N by Descartes' rule of signs.  Exact."""
    c = [int(x) for x in p.coeffs()]
    if len(c) != N + 1:
        raise ValueError("characteristic polynomial has the wrong degree")
    z = 0
    while z < len(c) and c[z] == 0:
        z += 1
    pos = sign_changes(c)
    neg = sign_changes([x if k % 2 == 0 else -x for k, x in enumerate(c)])
    if pos + neg + z != N:
        raise ArithmeticError("Descartes counts do not add up: the polynomial is not real-rooted")
    return Inertia(
        pos,
        neg,
        z,
        "charpoly",
        {
            "kind": "inertia_charpoly",
            "charpoly": [str(x) for x in c],
            "sign_changes_pos": pos,
            "sign_changes_neg": neg,
            "zero_multiplicity": z,
        },
    )


def inertia_charpoly(S: fmpq_mat) -> Inertia:
    """Exact inertia of rational symmetric S (N x N) by characteristic
    polynomial + Descartes (method 1).  The witness holds the integer
    characteristic polynomial of D·S (``scale`` = D).  Raises QKInputError if
    S is not square/symmetric."""
    N = _require_symmetric(S)
    p, D = integer_charpoly(S)
    inn = inertia_from_charpoly(p, N)
    inn.witness["scale"] = str(D)
    return inn


def ldlt(S: fmpq_mat) -> tuple[list[int], list[list[fmpq]], list[tuple]]:
    """Symmetrically pivoted LDLᵀ of rational symmetric S over Q.

    Returns (perm, L, D_blocks): with P the permutation matrix of ``perm``
    (row i of P S Pᵀ is row perm[i] of S), P S Pᵀ = L D Lᵀ, L unit lower
    triangular (list of rows of fmpq), D block diagonal given as a list of
    blocks: ``("1", d)`` a 1x1 pivot, ``("2", b)`` the 2x2 pivot [[0,b],[b,0]]
    (b ≠ 0, inertia (1,1)), and a trailing ``("0", k)`` zero block of size k.
    Exact; O(N³) rational operations in Python (meant for N up to a few dozen).
    """
    N = _require_symmetric(S)
    A = [[S[i, j] for j in range(N)] for i in range(N)]
    perm = list(range(N))
    Lm = [[fmpq(1) if i == j else fmpq(0) for j in range(N)] for i in range(N)]
    blocks: list[tuple] = []

    def swap(i: int, j: int) -> None:
        if i == j:
            return
        A[i], A[j] = A[j], A[i]
        for row in A:
            row[i], row[j] = row[j], row[i]
        perm[i], perm[j] = perm[j], perm[i]
        # swap the already computed parts of L (columns < k)
        for c in range(k):
            Lm[i][c], Lm[j][c] = Lm[j][c], Lm[i][c]

    k = 0
    while k < N:
        piv = next((i for i in range(k, N) if A[i][i] != 0), None)
        if piv is not None:
            swap(k, piv)
            d = A[k][k]
            col = [A[i][k] / d for i in range(k + 1, N)]
            for a, i in enumerate(range(k + 1, N)):
                Lm[i][k] = col[a]
                if col[a] == 0:
                    continue
                li = col[a]
                rowk = A[k]
                Ai = A[i]
                for j in range(k + 1, i + 1):
                    v = Ai[j] - li * rowk[j]
                    Ai[j] = v
                    A[j][i] = v
            for i in range(k + 1, N):
                A[i][k] = A[k][i] = fmpq(0)
            blocks.append(("1", d))
            k += 1
            continue
        off = next(((i, j) for i in range(k, N) for j in range(i + 1, N) if A[i][j] != 0), None)
        if off is None:
            blocks.append(("0", N - k))
            break
        i0, j0 = off
        swap(k, i0)
        swap(k + 1, j0 if j0 != k else i0)
        b = A[k][k + 1]
        # E = [[0,b],[b,0]], E^{-1} = [[0,1/b],[1/b,0]]
        rest = list(range(k + 2, N))
        lk = {i: A[i][k + 1] / b for i in rest}   # coefficient on column k
        lk1 = {i: A[i][k] / b for i in rest}      # coefficient on column k+1
        for i in rest:
            Lm[i][k] = lk[i]
            Lm[i][k + 1] = lk1[i]
        for ii, i in enumerate(rest):
            for j in rest[: ii + 1]:
                # subtract l_i E l_jᵀ = b (lk_i lk1_j + lk1_i lk_j)
                v = A[i][j] - b * (lk[i] * lk1[j] + lk1[i] * lk[j])
                A[i][j] = v
                A[j][i] = v
        for i in rest:
            for c in (k, k + 1):
                A[i][c] = A[c][i] = fmpq(0)
        blocks.append(("2", b))
        k += 2
    return perm, Lm, blocks


def inertia_ldlt(S: fmpq_mat) -> Inertia:
    """Exact inertia of rational symmetric S by pivoted LDLᵀ (method 2);
    the witness holds perm, L and the D blocks as ``"p/q"`` strings."""
    perm, Lm, blocks = ldlt(S)
    pos = neg = zero = 0
    wblocks = []
    for kind, v in blocks:
        if kind == "1":
            pos += v > 0
            neg += v < 0
            wblocks.append({"size": 1, "value": fmpq_str(v)})
        elif kind == "2":
            pos += 1
            neg += 1
            wblocks.append({"size": 2, "offdiag": fmpq_str(v)})
        else:
            zero += v
            wblocks.append({"size": int(v), "zero": True})
    return Inertia(
        int(pos),
        int(neg),
        int(zero),
        "ldlt",
        {
            "kind": "inertia_ldlt",
            "perm": perm,
            "L": [[fmpq_str(x) for x in row[: i]] for i, row in enumerate(Lm)],
            "D": wblocks,
        },
    )


def inertia(S: fmpq_mat, methods: tuple[str, ...] = ("charpoly", "ldlt")) -> Inertia:
    """Exact inertia by every method in ``methods``; raises ArithmeticError if
    they disagree (which would be a bug).  Returns the first method's result
    with all witnesses under ``witness['methods']``."""
    results = []
    for m in methods:
        results.append(inertia_charpoly(S) if m == "charpoly" else inertia_ldlt(S))
    t = {r.triple() for r in results}
    if len(t) != 1:
        raise ArithmeticError(f"inertia methods disagree: {[ (r.method, r.triple()) for r in results]}")
    r0 = results[0]
    return Inertia(*r0.triple(), "+".join(methods), {"kind": "inertia", "methods": [r.witness for r in results]})
