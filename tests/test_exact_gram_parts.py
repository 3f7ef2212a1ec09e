"""The exact Gram route's integer pieces against Python-integer arithmetic:
the parts of Z Zᵀ (_window_parts), their balanced digits (digits_of_parts,
carry), the traces of the profile (_exact_traces) and the float enclosure
(gram_float), on int64 matrices built to reach every branch: outlier
columns, tiny entries, all-zero columns, 1-column heads, N not a multiple of
the block, entries near 2^62, negative values, thousands of parts."""

from __future__ import annotations

import math
import zlib
from fractions import Fraction

import numpy as np
import pytest

from qkverify.heads.digits import carry, digit_width, digits_of_parts
from qkverify.heads.exact_gram import GramData, _exact_traces, _window_parts, gram_data


def gram_int(Z: np.ndarray) -> list[list[int]]:
    """Z Zᵀ in Python integers (independent of numpy's int64)."""
    rows = [[int(x) for x in r] for r in Z.tolist()]
    return [[sum(a * b for a, b in zip(r, s)) for s in rows] for r in rows]


def parts_int(parts: list) -> list[list[int]]:
    m = parts[0][1].shape[0]
    G = [[0] * m for _ in range(m)]
    for sh, P in parts:
        assert P.dtype == np.int64
        for i, row in enumerate(P.tolist()):
            for j, v in enumerate(row):
                G[i][j] += v << sh
    return G


def balanced_digits(x: int, w: int, lo: int, count: int) -> list[int]:
    """Balanced base-2^w digits d_lo..d_(lo+count−1) of x (x divisible by 2^(w·lo)), by hand."""
    half = 1 << (w - 1)
    x >>= w * lo
    out = []
    for _ in range(count):
        d = ((x + half) % (1 << w)) - half
        out.append(d)
        x = (x - d) >> w
    assert x == 0
    return out


def check_digits(D: list, lo: int, w: int, G: list[list[int]], lo_expected: int) -> None:
    assert lo == lo_expected
    assert all(d.dtype == np.float64 for d in D)
    assert len(D) == 1 or D[-1].any()                 # no zero digit at the top
    Q = len(D)
    for i, row in enumerate(G):
        for j, x in enumerate(row):
            got = [float(D[q][i, j]) for q in range(Q)]
            assert got == [float(d) for d in balanced_digits(x, w, lo, Q)]


def random_int_matrix(rng, m: int, N: int, kind: str) -> np.ndarray:
    """Integer m x N matrices shaped like the float32 heads' Z, or harsher."""
    if kind == "float32":
        A = rng.standard_normal((m, N)).astype(np.float32)
        A[:, rng.integers(0, N, size=max(1, N // 20))] *= np.float32(2.0 ** 12)    # outlier columns
        A[:, rng.integers(0, N, size=max(1, N // 25))] *= np.float32(2.0 ** 40)    # far outliers
        A[rng.random((m, N)) < 0.01] = np.float32(2.0 ** -30)                       # tiny entries
        A[:, rng.integers(0, N, size=max(1, N // 30))] = 0                           # zero columns
        A[rng.random((m, N)) < 0.5] *= -1
        return A
    if kind == "near62":
        Z = rng.integers(-(1 << 61), 1 << 61, size=(m, N), dtype=np.int64)
        Z[0, 0] = (1 << 62) - 1
        Z[-1, -1] = -(1 << 62) + 1
        return Z
    if kind == "mixed":
        e = rng.integers(0, 60, size=(m, N))
        Z = (rng.integers(1, 1 << 20, size=(m, N), dtype=np.int64) << e) >> rng.integers(0, 20, size=(m, N))
        Z[rng.random((m, N)) < 0.3] *= -1
        Z[:, rng.integers(0, N, size=max(1, N // 10))] = 0
        return np.clip(Z, -(1 << 62) + 1, (1 << 62) - 1)
    if kind == "tiny_window":
        Z = rng.integers(-(1 << 40), 1 << 40, size=(m, N), dtype=np.int64) << 6
        Z[rng.random((m, N)) < 0.05] = rng.integers(-7, 8)          # tiny entries below the window
        Z[:, 0] = rng.integers(-(1 << 55), 1 << 55, size=m)          # an outlier column
        return Z
    if kind == "tiny_col":                                          # one column below the window
        Z = rng.integers(-(1 << 44), 1 << 44, size=(m, N), dtype=np.int64) << 4
        Z[0, 0] = 1 << 47
        Z[1, -1] = -1
        return Z
    if kind == "narrow":                                            # one slice holds every entry
        return rng.integers(-(1 << 15), 1 << 15, size=(m, N), dtype=np.int64) << 3
    if kind == "low":                                               # every entry fits [0, 2b)
        Z = rng.integers(-(1 << 38), 1 << 38, size=(m, N), dtype=np.int64)
        Z[0, 0] = 1
        return Z
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["near62", "mixed", "tiny_window", "tiny_col", "narrow", "low"])
@pytest.mark.parametrize("shape,block", [((4, 1), 512), ((6, 13), 5), ((2, 37), 8), ((8, 40), 512)])
def test_window_parts_digits_traces_are_exact(kind, shape, block):
    rng = np.random.default_rng(zlib.crc32(repr((kind, shape, block)).encode()))
    Z = random_int_matrix(rng, *shape, kind)
    G = gram_int(Z)
    parts = _window_parts(Z, block)
    assert parts_int(parts) == G
    for w in (digit_width(shape[0]), 9):
        D, lo = digits_of_parts(parts, w)
        check_digits(D, lo, w, G, min(sh for sh, _ in parts) // w)
    n = shape[0] // 2
    w = digit_width(shape[0])
    D, lo = digits_of_parts(parts, w)
    KK = sum(G[i][j] * G[n + i][n + j] for i in range(n) for j in range(n))
    KQ = sum(G[i][n + j] * G[j][n + i] for i in range(n) for j in range(n))
    assert _exact_traces(D, lo, w, n) == (KK, KQ)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("N", [1, 7, 700])
def test_gram_data_float32_heads_are_exact(seed, N):
    rng = np.random.default_rng(seed)
    A = random_int_matrix(rng, 6, N, "float32")
    W_K, W_Q = A[:3], A[3:]
    g = gram_data(W_Q, W_K)
    # Z·2^e = M exactly, so G = Z Zᵀ is the Gram matrix of M scaled by 2^(−2e)
    Zi = [[Fraction(float(x)) * Fraction(2) ** (-g.e) for x in r] for r in np.concatenate([W_K, W_Q]).tolist()]
    assert all(x.denominator == 1 for r in Zi for x in r)
    G = gram_int(np.array([[int(x) for x in r] for r in Zi], dtype=object))
    assert parts_int(g.parts) == G
    assert g.diag_exact() == [G[i][i] for i in range(6)]
    KK = sum(G[i][j] * G[3 + i][3 + j] for i in range(3) for j in range(3))
    KQ = sum(G[i][3 + j] * G[j][3 + i] for i in range(3) for j in range(3))
    assert (g.frob_L, g.tr_L2) == (KK, KQ)
    Gm, Gr, s = g.gram_float()
    top = max(G[i][i] for i in range(6))
    assert top == 0 or 2 ** (s - 1) <= top < 2 ** s
    for i in range(6):
        for j in range(6):
            assert abs(Fraction(G[i][j], 2 ** s) - Fraction(float(Gm[i, j]))) <= Fraction(float(Gr[i, j]))


def test_digits_of_parts_many_large_parts():
    """Thousands of parts near 2^62 at nearby shifts: the placement runs out of
    int64 room and must still give the digits of the exact sum."""
    rng = np.random.default_rng(7)
    parts = []
    for k in range(3000):
        P = rng.integers(-(1 << 62) + 1, 1 << 62, size=(2, 2), dtype=np.int64)
        parts.append((int(rng.integers(3, 40)), P))
    parts.append((5, np.zeros((2, 2), np.int64)))
    G = parts_int(parts)
    for w in (8, 24):
        D, lo = digits_of_parts(parts, w)
        check_digits(D, lo, w, G, min(sh for sh, _ in parts) // w)


def test_carry_is_balanced_and_exact():
    rng = np.random.default_rng(11)
    for w in (2, 8, 23, 26):
        acc = {q: rng.integers(-(1 << 61), 1 << 61, size=(3, 3), dtype=np.int64) for q in (-2, 0, 1, 4)}
        keep = {q: v.copy() for q, v in acc.items()}
        D, lo = carry(acc, w)
        assert all(np.array_equal(acc[q], keep[q]) for q in acc)          # inputs untouched
        G = [[sum(int(acc[q][i, j]) << (w * (q + 2)) for q in acc) for j in range(3)] for i in range(3)]
        check_digits(D, lo + 2, w, G, 0)
    D, lo = carry({3: np.zeros((2, 2), np.int64)}, 10)
    assert lo == 3 and len(D) == 1 and not D[0].any()


def test_gram_float_below_the_normal_range():
    """A part scaled below 2^-1022 (ldexp route) and one at the subnormal edge."""
    big = np.array([[1 << 61, 0], [0, 1 << 60]], np.int64)
    small = np.array([[5, -(1 << 40) - 1], [-(1 << 40) - 1, 7]], np.int64)
    for sh in (900, 1000, 1030, 1040, 1100):
        g = GramData(1, 1, 0, [], 0, [(sh, big), (0, small)], 0, 0)
        Gm, Gr, s = g.gram_float()
        for i in range(2):
            for j in range(2):
                # Gm is the float sum, in the parts' order, of each part correctly rounded then scaled
                ref = math.ldexp(float(int(big[i, j])), sh - s) + math.ldexp(float(int(small[i, j])), -s)
                assert Gm[i, j] == ref
                x = Fraction((int(big[i, j]) << sh) + int(small[i, j]), 2 ** s)
                assert abs(x - Fraction(float(Gm[i, j]))) <= Fraction(float(Gr[i, j]))


@pytest.mark.parametrize("spread", [0, 10, 20, 27, 30])
def test_float32_integers_are_exact(spread):
    """Z·2^e = M entrywise, on both sides of the 2^51 fast conversion
    (the integers have about 24 + spread + 2 bits), signs and subnormals included."""
    from qkverify.heads.exact_gram import _float32_integers

    rng = np.random.default_rng(spread)
    M = (rng.standard_normal((4, 50)) * 2.0 ** rng.integers(-spread, 1, size=(4, 50))).astype(np.float32)
    M[0, :2] = [np.float32(0.0), np.float32(-3.5)]
    if spread == 0:                                                          # subnormals (E' = 1)
        M *= np.float32(2.0 ** -126)
        M[1, :2] = [np.float32(1.0e-45), -np.float32(3.0e-39)]
    Zi, e = _float32_integers(M)
    ab = M.view(np.uint32) & np.uint32(0x7FFFFFFF)
    wide = max(int(ab.max()) >> 23, 1) - max(int(ab[ab > 0].min()) >> 23, 1) + 24
    assert wide <= 51 if spread < 27 else 51 < wide <= 62                   # both conversions reached
    assert Zi.dtype == np.int64
    for x, z in zip(M.ravel().tolist(), Zi.ravel().tolist()):
        assert Fraction(x) == Fraction(z) * Fraction(2) ** e
    assert np.bitwise_or.reduce(Zi, axis=None) & 1                        # no common power of two left
