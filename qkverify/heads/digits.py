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
    entries stay below 2^62; not modified).  Returns (digits as float64
    arrays, lowest position).

    With v the value at a position plus the incoming carry, the outgoing carry
    is c = ⌊(v + 2^(w−1))/2^w⌋ and the digit v − c·2^w lies in
    [−2^(w−1), 2^(w−1)): the balanced digit, unique.  |c| ≤ 2^(62−w) + 1, so
    every v stays below 2^63."""
    keys = sorted(acc)
    lo, hi = keys[0], keys[-1]
    half = 1 << (w - 1)
    out = []
    c = None
    q = lo
    while q <= hi or c.any():
        a = acc.get(q)
        if c is None:
            v = a
        else:
            v = c if a is None else a + c
        c = v + half
        np.right_shift(c, w, out=c)                # the carry, floor((v + 2^(w−1)) / 2^w)
        d = np.empty(v.shape)
        np.subtract(v, c << w, out=d)              # the digit, |d| ≤ 2^(w−1): exact in float64
        out.append(d)
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
    """Balanced base-2^w digits of Σ P·2^shift (exact) from int64 parts (shift, P),
    |P| < 2^62.

    Each part is placed at position q = ⌊shift/w⌋ with r = shift mod w: as
    P·2^r when max|P|·2^r fits the position's room, else as
    (P mod 2^(w−r))·2^r (in [0, 2^w)) at q and ⌊P/2^(w−r)⌋ at q + 1, cut
    again into its low w bits and the rest one position up while it does not
    fit.  The sum of the exact bounds (max|P| read from the part) at each
    position is kept ≤ 2^62, as :func:`carry` requires; when a position has
    no room left for w bits (thousands of parts near 2^62), every part is
    cut into balanced digits first (:func:`digits_of_int64`, values below
    2^(2w−1)).  The lowest position is the smallest ⌊shift/w⌋ either way, so
    the digits are those of the exact sum, unique."""
    acc: dict = {}
    room: dict = {}
    cap = 1 << 62
    mask = (1 << w) - 1

    def add(q: int, X: np.ndarray, m: int) -> bool:
        # X·2^(wq) with |X| ≤ m, cut while it does not fit; False when no room at all
        while room.get(q, 0) + m > cap:
            if room.get(q, 0) + mask > cap:
                return False
            room[q] = room.get(q, 0) + mask
            lowb = X & mask
            acc[q] = acc[q] + lowb if q in acc else lowb
            X = X >> w
            m = (m >> w) + 1
            q += 1
        room[q] = room.get(q, 0) + m
        acc[q] = acc[q] + X if q in acc else X
        return True

    for sh, P in parts:
        q, r = divmod(sh, w)
        m = max(int(P.max()), -int(P.min())) if P.size else 0
        if (m << r) + room.get(q, 0) <= cap:
            ok = add(q, P << r if r else P, m << r)
        else:
            s = w - r
            ok = add(q, (P & ((1 << s) - 1)) << r, mask) and add(q + 1, P >> s, (m >> s) + 1)
        if not ok:
            acc = {}
            for sh2, P2 in parts:
                for q2, v in digits_of_int64(P2, w, sh2).items():
                    acc[q2] = acc[q2] + v if q2 in acc else v
            break
    return carry(acc, w)
