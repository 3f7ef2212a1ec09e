"""Exact biaffine components of a head with query/key biases.

With biases the score of a key token x_k and a query token x_q is biaffine
(blueprint Lemma 1):

    (W_K x_k + b_K)ᵀ (W_Q x_q + b_Q)
        = x_kᵀ L x_q + x_kᵀ (W_Kᵀ b_Q) + (W_Qᵀ b_K)ᵀ x_q + b_Kᵀ b_Q,

with the bilinear part L = W_Kᵀ W_Q (the matrix every other check analyses),
the key-side linear term u = W_Kᵀ b_Q, the query-side linear term
w = W_Qᵀ b_K (both length N) and the constant c = b_Kᵀ b_Q.  Every float
weight is an exact dyadic rational, so all of these are exact dyadic
rationals; they are computed here in integers (numpy object arrays of
Python ints, no rounding) as Z·2^e.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
from flint import fmpq

from ..errors import QKInputError


def dyadic_ints(a: np.ndarray) -> tuple[np.ndarray, int]:
    """Exact a = Z·2^e for a finite float array: Z an object array of
    Python ints (same shape), e an int; the common power of two is as large
    as possible (Z's entries are not all even unless a = 0).

    >>> Z, e = dyadic_ints(np.array([0.5, -1.5, 3.0]))
    >>> Z.tolist(), e
    ([1, -3, 6], -1)

    Raises QKInputError for NaN/Inf."""
    a = np.asarray(a, dtype=np.float64)   # float16/32 -> float64 is exact
    if not np.all(np.isfinite(a)):
        raise QKInputError("weights contain NaN or Inf, which are not rational numbers")
    mant, ex = np.frexp(a)
    m = np.ldexp(mant, 53).astype(np.int64)            # exact: 53 significant bits at most
    nz = m != 0
    if not nz.any():
        return np.zeros(a.shape, dtype=object), 0
    absm = np.abs(m)
    low = np.where(nz, absm & (-absm), 1)              # lowest set bit (a power of two)
    tz = np.frexp(low.astype(np.float64))[1].astype(np.int64) - 1
    odd = np.where(nz, m >> tz, 0)
    ex2 = ex.astype(np.int64) - 53 + tz                # a = odd·2^ex2 entrywise
    e0 = int(ex2[nz].min())
    shift = np.where(nz, ex2 - e0, 0)
    Z = odd.astype(object) << shift.astype(object)
    return Z, e0


def _q(z: int, e: int) -> fmpq:
    return fmpq(z * 2 ** e) if e >= 0 else fmpq(z, 2 ** (-e))


def _qstr(q: fmpq) -> str:
    return str(q.p) if q.q == 1 else f"{q.p}/{q.q}"


@dataclass
class ExactVector:
    """An exact dyadic vector v = Z·2^e (Z Python ints)."""

    Z: list
    e: int

    def values(self) -> list[fmpq]:
        """Entries as fmpq."""
        return [_q(int(z), self.e) for z in self.Z]

    def norm_sq(self) -> fmpq:
        """‖v‖² exactly."""
        return _q(sum(int(z) * int(z) for z in self.Z), 2 * self.e)

    def text(self) -> list[str]:
        """Entries as ``"p/q"`` strings (integers without ``/1``)."""
        return [_qstr(q) for q in self.values()]

    def sha256(self) -> str:
        """SHA-256 of the comma-joined ``text()`` (to name the vector)."""
        return hashlib.sha256(",".join(self.text()).encode()).hexdigest()


@dataclass
class BiaffineParts:
    """The exact biaffine components of one head (see module docstring).

    lin_key   -- u = W_Kᵀ b_Q (coefficient vector of x_k), length N
    lin_query -- w = W_Qᵀ b_K (coefficient vector of x_q), length N
    const     -- c = b_Kᵀ b_Q
    """

    lin_key: ExactVector
    lin_query: ExactVector
    const: fmpq

    def to_json(self, vectors: bool = False) -> dict:
        """JSON-ready summary: exact squared norms and constant as ``"p/q"``,
        float displays, SHA-256 of each vector's exact text; the vectors
        themselves when ``vectors``."""
        out = {}
        for key, v, what in (("lin_key", self.lin_key, "W_Kᵀ b_Q (coefficient of x_key)"),
                             ("lin_query", self.lin_query, "W_Qᵀ b_K (coefficient of x_query)")):
            ns = v.norm_sq()
            d = {"what": what, "norm_sq": _qstr(ns), "norm": float(ns) ** 0.5, "sha256": v.sha256(),
                 "sha256_of": "comma-joined exact entries p/q"}
            if vectors:
                d["values"] = v.text()
            out[key] = d
        out["const"] = _qstr(self.const)
        out["const_float"] = float(self.const)
        return out


def _dyadic_int64(a: np.ndarray) -> tuple[np.ndarray, int] | None:
    """Exact a = Z·2^e with Z int64 when every |Z| < 2^62 (the usual case
    for float32/bfloat16 weights), else None.  a must be finite."""
    if a.dtype == np.float32:
        # a float32 is a 24-bit integer times 2^(exponent − 24): no bit search needed
        mant, ex = np.frexp(a)
        nz = mant != 0
        if not nz.any():
            return np.zeros(a.shape, np.int64), 0
        ex = ex.astype(np.int64)
        e0 = int(ex[nz].min()) - 24
        shift = np.where(nz, ex - 24 - e0, 0)
        if int(shift.max()) + 24 <= 62:
            return np.ldexp(mant, 24).astype(np.int64) << shift, e0
    mant, ex = np.frexp(np.asarray(a, dtype=np.float64))
    m = np.ldexp(mant, 53).astype(np.int64)
    nz = m != 0
    if not nz.any():
        return np.zeros(a.shape, np.int64), 0
    absm = np.abs(m)
    low = np.where(nz, absm & (-absm), 1)
    tz = np.frexp(low.astype(np.float64))[1].astype(np.int64) - 1
    odd = np.where(nz, m >> tz, 0)
    ex2 = ex.astype(np.int64) - 53 + tz
    e0 = int(ex2[nz].min())
    shift = np.where(nz, ex2 - e0, 0)
    bits = np.frexp(np.abs(odd).astype(np.float64))[1].astype(np.int64)   # bit length of |odd| (≤ 53)
    if int((bits + shift).max()) > 62:
        return None
    return odd << shift, e0


def _limbs(Z: np.ndarray, w: int) -> list[np.ndarray]:
    """Z (int64) = Σ_k C_k 2^{wk} with float64 C_k of |C_k| < 2^w (signed)."""
    s = np.sign(Z)
    A = np.abs(Z)
    out = []
    while True:
        out.append((s * (A & ((1 << w) - 1))).astype(np.float64))
        A = A >> w
        if not A.any():
            return out


def _matvec_T(W: np.ndarray, b: np.ndarray) -> ExactVector:
    """Exact Wᵀ b for W (n, N), b (n,).

    Fast route: W = Z_W·2^{e_W}, b = z_b·2^{e_b} with int64 integers, cut
    into w-bit limbs with 2w + ⌈log2 n⌉ ≤ 53, so every limb product z_bᵀ C_k
    has integer partial sums below 2^53 and float64 computes it exactly in
    any summation order; the limb products are combined in Python ints.
    Otherwise (integers wider than 62 bits) object-array arithmetic."""
    n, N = W.shape
    if W.size == 0:
        return ExactVector([0] * N, 0)
    fw, fb = _dyadic_int64(W), _dyadic_int64(b)
    if fw is not None and fb is not None:
        (ZW, eW), (zb, eb) = fw, fb
        w = (53 - int(np.ceil(np.log2(max(n, 2))))) // 2
        acc = np.zeros(N, dtype=object)
        for l, B in enumerate(_limbs(zb, w)):
            for k, C in enumerate(_limbs(ZW, w)):
                P = (B @ C).astype(np.int64)     # exact integers below 2^53
                acc = acc + (P.astype(object) << (w * (k + l)))
        return ExactVector([int(x) for x in acc], eW + eb)
    ZW, eW = dyadic_ints(W)
    zb, eb = dyadic_ints(b)
    v = zb.reshape(1, -1).dot(ZW).reshape(-1)
    return ExactVector([int(x) for x in v], eW + eb)


def biaffine_parts(W_Q: np.ndarray, W_K: np.ndarray, b_Q: np.ndarray | None, b_K: np.ndarray | None) -> BiaffineParts:
    """Exact u = W_Kᵀ b_Q, w = W_Qᵀ b_K, c = b_Kᵀ b_Q (a missing bias is 0).

    W_Q, W_K: (n, N) float arrays; b_Q, b_K: (n,) float arrays or None.
    Raises QKInputError for NaN/Inf or mismatched shapes."""
    n, N = W_Q.shape
    zero = np.zeros(n)
    bq = zero if b_Q is None else np.asarray(b_Q).reshape(-1)
    bk = zero if b_K is None else np.asarray(b_K).reshape(-1)
    if bq.shape != (n,) or bk.shape != (n,) or W_K.shape != (n, N):
        raise QKInputError(f"biases {bq.shape}, {bk.shape} do not fit heads of shape {W_Q.shape}, {W_K.shape}")
    zq, eq = dyadic_ints(bq)
    zk, ek = dyadic_ints(bk)
    c = _q(int(sum(int(x) * int(y) for x, y in zip(zk, zq))), eq + ek)
    return BiaffineParts(_matvec_T(W_K, bq), _matvec_T(W_Q, bk), c)
