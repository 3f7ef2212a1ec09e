"""Exact integer matrices as balanced base-2^w digits in float64 arrays.

An integer matrix A is held as A = Σ_q D_q·2^(w(q + lo)) with |D_q| ≤ 2^(w−1).
With 2w − 2 + ⌈log₂ m⌉ ≤ 53, the product of two digit matrices over an inner
dimension m has integer partial sums below 2^53, so BLAS computes it exactly
in float64 whatever its summation order (the error-free splitting of Ozaki
et al.); products are gathered in int64 and renormalised by vectorised
carries.  Used for the exact Gram matrix's traces (:mod:`.exact_gram`) and
the exact products of the enclosure route (:mod:`.sliced`).
"""

from __future__ import annotations

import math

import numpy as np


def digit_width(m: int) -> int:
    """Largest w with 2w − 2 + ⌈log₂ m⌉ ≤ 53 (products of two balanced
    w-bit digits summed over m terms are exact in float64).

    >>> digit_width(256), digit_width(128)
    (23, 24)
    """
    return (55 - max(1, math.ceil(math.log2(max(m, 2))))) // 2


def carry(acc: dict, w: int) -> tuple[list[np.ndarray], int]:
    """Balanced base-2^w digits of Σ_q acc[q]·2^(wq) (acc: int64 arrays whose
    entries stay below 2^62).  Returns (digits as float64 arrays, lowest
    position)."""
    keys = sorted(acc)
    lo, hi = keys[0], keys[-1]
    half = 1 << (w - 1)
    mask = (1 << w) - 1
    out = []
    carry = np.zeros_like(acc[lo])
    q = lo
    while q <= hi or carry.any():
        v = acc[q] + carry if q in acc else carry
        d = ((v + half) & mask) - half            # in [−2^(w−1), 2^(w−1))
        carry = (v - d) >> w                      # exact: v − d is a multiple of 2^w
        out.append(d.astype(np.float64))
        q += 1
    while len(out) > 1 and not out[-1].any():
        out.pop()
    return out, lo


def digits_of_int64(A: np.ndarray, w: int, shift: int = 0) -> dict:
    """acc-form {position: int64} of A·2^shift, A int64 with |A| < 2^62."""
    acc: dict = {}
    q0, r0 = divmod(shift, w)
    half = 1 << (w - 1)
    mask = (1 << w) - 1
    v = A.astype(np.int64)
    t = 0
    while True:
        d = ((v + half) & mask) - half
        v = (v - d) >> w
        # d·2^(r0) < 2^(2w−1): fits int64 with room for sums
        acc[q0 + t] = acc.get(q0 + t, 0) + (d << r0)
        t += 1
        if not v.any():
            break
    return acc


def digits_of_parts(parts: list, w: int) -> tuple[list[np.ndarray], int]:
    """Balanced base-2^w digits of Σ P·2^shift (exact) from int64 parts (shift, P)."""
    acc: dict = {}
    for sh, P in parts:
        for q, v in digits_of_int64(P, w, sh).items():
            acc[q] = acc[q] + v if q in acc else v
    return carry(acc, w)


