"""Deterministic cells of head spectra (issue 14 item 1): the cells contain
the exact eigenvalues with exact counts, and they -- and the table rows --
are byte-identical whatever BLAS thread count, OpenBLAS kernel or float
eigensolver output produced them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
import sympy
from flint import fmpq

from qkverify.heads import cells as cells_mod
from qkverify.heads import enclosure as enclosure_mod
from qkverify.heads.budget import Budget, RouteSkipped, charpoly_cost
from qkverify.heads.cells import grid_exponent, head_spectrum, outward_decimal
from qkverify.heads.certify import HeadOptions, certify_head
from qkverify.heads.exact_gram import gram_data, rank_witness
from qkverify.models.base import HeadRecord


def _heads():
    """Small float32 heads of several kinds (deterministic)."""
    rng = np.random.default_rng(20261130)
    out = []
    n, N = 4, 24
    out.append((rng.standard_normal((n, N)) / 5, rng.standard_normal((n, N)) / 5))          # gaussian
    V = np.linalg.qr(rng.standard_normal((N, 2 * n)))[0].T
    q = (rng.standard_normal((n, n)) * [1, 1e-2, 1e-4, 1e-6]) @ V[:n]
    out.append((q, q @ np.eye(N) * 0.5 + 1e-7 * V[n:].sum(0)))                             # ill-conditioned, near ties
    qi = rng.integers(-3, 4, (n, N)).astype(float)
    ki = rng.integers(-3, 4, (n, N)).astype(float)
    out.append((qi, ki))                                                                     # integers: grid hits
    e = np.eye(N)
    out.append((np.stack([e[0], e[1], e[2], e[3]]), np.stack([e[4], e[5], e[6], e[7]])))   # α = β exactly
    return [(np.asarray(a, np.float32), np.asarray(b, np.float32)) for a, b in out]


def _rec(q, k, i=0):
    return HeadRecord("t", 0, i, i, q, k, {"file": "x", "sha256": "0" * 64, "tensors": []})


def _charpoly_X(q, k) -> sympy.Poly:
    """charpoly(J·Z Zᵀ) by sympy from Python-integer Z (independent of qkverify's Gram route)."""
    from qkverify.heads.exact_gram import _float32_integers

    Zi, _ = _float32_integers(np.concatenate([k, q]))
    Z = sympy.Matrix(Zi.astype(object).tolist())
    G = Z * Z.T
    n = q.shape[0]
    J = sympy.zeros(2 * n, 2 * n)
    for i in range(n):
        J[i, n + i] = J[n + i, i] = 1
    x = sympy.Symbol("x")
    return sympy.Poly((J * G).charpoly(x).as_expr(), x)


def _count(p: sympy.Poly, lo: Fraction, hi: Fraction) -> int:
    """Roots of p in [lo, hi) with multiplicity (sympy: count_roots on the
    square-free factors, which counts the closed interval)."""
    tot = 0
    a, b = sympy.Rational(lo.numerator, lo.denominator), sympy.Rational(hi.numerator, hi.denominator)
    for f, mult in p.sqf_list()[1]:
        c = f.count_roots(a, b)
        if f.eval(b) == 0:
            c -= 1
        tot += mult * c
    return tot


@pytest.mark.parametrize("which", range(4))
def test_cells_hold_the_exact_roots_with_exact_counts(which):
    q, k = _heads()[which]
    g = gram_data(q, k)
    rank = 8 if rank_witness(g) is not None else None
    hs = head_spectrum(g, rank if rank else 8 - 0)
    p = _charpoly_X(q, k)
    coeffs = p.all_coeffs()[::-1]
    zero = next(i for i, c in enumerate(coeffs) if c != 0)
    assert hs.zero == zero
    assert hs.grid_exponent == grid_exponent(2 * (g.frob_L + g.tr_L2))
    total = 0
    for kk, r, c in hs.cells:
        lo = Fraction(kk) * Fraction(2) ** (hs.grid_exponent - r)
        hi = Fraction(kk + 1) * Fraction(2) ** (hs.grid_exponent - r)
        got = _count(p, lo, hi) - (zero if lo == 0 else 0)
        assert got == c, (kk, r, c)
        total += c
    assert total == 8 - zero
    # the signature from the cells = sympy's counts of positive / negative roots
    big = Fraction(2) ** 400
    assert hs.n_pos == _count(p, Fraction(0), big) - zero and hs.n_neg == _count(p, -big, Fraction(0))
    if which == 3:                                      # W_Q ⟂ W_K with equal norms: α_j = β_j exactly
        assert hs.order == ["="] * 4 and hs.faces["c0"] is True and hs.faces["d0"] is True


def test_grid_rule_and_outward_decimals():
    assert grid_exponent(4 ** 50) == 10                 # ‖ν‖ = 2^50 → spacing 2^10 = 2^-40·‖ν‖
    assert grid_exponent(4 ** 50 - 1) == 9
    assert outward_decimal(fmpq(2, 3), 3, -1) == "0.666" and outward_decimal(fmpq(2, 3), 3, 1) == "0.667"
    assert outward_decimal(fmpq(19, 10 ** 61), 2, -1) == "0." + "0" * 59 + "19"
    assert outward_decimal(fmpq(123456), 2, 1) == "130000"
    assert outward_decimal(fmpq(-1, 3), 2, 1) == "-0.33"


def test_perturbed_float_eigensolver_gives_identical_cells(monkeypatch):
    """The float eigenvectors only steer the rigorous bounds: perturbing them
    (well within any float error) changes no cell, no order, no row value."""
    heads = _heads()
    base = [certify_head(_rec(q, k, i), HeadOptions(charpoly=False, compare_float=False))
            for i, (q, k) in enumerate(heads)]
    orig = enclosure_mod._float_basis
    rng = np.random.default_rng(1)

    def perturbed(Gm, n):
        Y = orig(Gm, n)
        return Y * (1 + 1e-9 * rng.standard_normal(Y.shape))

    monkeypatch.setattr(enclosure_mod, "_float_basis", perturbed)
    import qkverify.heads.sliced as sliced_mod

    monkeypatch.setattr(sliced_mod, "_float_basis", perturbed)
    again = [certify_head(_rec(q, k, i), HeadOptions(charpoly=False, compare_float=False))
             for i, (q, k) in enumerate(heads)]
    for a, b in zip(base, again):
        assert a["spectrum"].witness() == b["spectrum"].witness()
        assert a["values"] == b["values"]


def test_exact_GY_or_float_GY_is_a_cost_choice(monkeypatch):
    """Whether the float pass takes ĜY exactly (its in-pass estimate of straddling eigenvalues)
    or in float64 changes no cell and no row value: forced either way, the same certificates'
    data.  Heads include an ill-conditioned and a spiked one (an outlier dimension)."""
    heads = _heads()
    rng = np.random.default_rng(7)
    q = rng.standard_normal((6, 64)) / 8
    k = rng.standard_normal((6, 64)) / 8
    q[:, 5] *= 300.0                                  # outlier dimension: ĜY's float error dominates
    k[:, 5] *= 300.0
    heads.append((q.astype(np.float32), k.astype(np.float32)))
    # low effective rank (the survey bench's "lowrank" kind): the default pass switches to exact ĜY
    n, N = 8, 96
    rng = np.random.default_rng(0)
    V = np.linalg.qr(rng.standard_normal((N, 8)))[0].T
    s = (1.0 + np.arange(n)) ** -1.5
    Uq, Uk = (np.linalg.qr(rng.standard_normal((n, n)))[0] for _ in range(2))
    Aq = rng.standard_normal((n, 8))
    Ak = Aq * 0.7 + 0.3 * rng.standard_normal((n, 8))
    q = (Uq * s) @ (Aq @ V) * 0.1 + 1e-3 / np.sqrt(N) * rng.standard_normal((n, N))
    k = (Uk * s) @ (Ak @ V) * 0.1 + 1e-3 / np.sqrt(N) * rng.standard_normal((n, N))
    heads.append((q.astype(np.float32), k.astype(np.float32)))
    opt = HeadOptions(charpoly=False, compare_float=False)
    real = cells_mod.Pass1
    routes = []

    def watch(*a, **kw):
        p = real(*a, **kw)
        routes.append(p.exact_p)
        return p

    monkeypatch.setattr(cells_mod, "Pass1", watch)
    base = [certify_head(_rec(a, b, i), opt) for i, (a, b) in enumerate(heads)]
    assert routes[-1] is True and False in routes      # both routes taken by default
    for forced in (True, False):
        def pass1(gd, gm_s, exact_p=False, Y=None, spacing_exp=None, _f=forced):
            # forced True: ĜY exact from the start; False: no in-pass switch (spacing_exp=None)
            return real(gd, gm_s, exact_p=_f or exact_p, Y=Y, spacing_exp=None)

        monkeypatch.setattr(cells_mod, "Pass1", pass1)
        again = [certify_head(_rec(a, b, i), opt) for i, (a, b) in enumerate(heads)]
        for i, (x, y) in enumerate(zip(base, again)):
            assert x["spectrum"].witness() == y["spectrum"].witness(), (forced, i)
            assert x["values"] == y["values"], (forced, i)


def test_every_rigorous_route_gives_the_same_cells(monkeypatch):
    """Cells found from the digit-sliced enclosures, from arb enclosures alone,
    or from exact counts alone are the same (the cell is a fact, not a route)."""
    q, k = _heads()[0]
    g = gram_data(q, k)
    ref = head_spectrum(g, 8)
    real = cells_mod._providers

    def only(names):
        def providers(gd, budget):
            return [p for p in real(gd, budget) if p.name in names]
        return providers

    for names in (("arb-256",), ("exact-products",), ("sliced-exact",), ("sliced",), ("float",)):
        monkeypatch.setattr(cells_mod, "_providers", only(names))
        hs = head_spectrum(gram_data(q, k), 8)
        assert hs.witness() == ref.witness(), names
    # the exact count alone: enclosures that decide nothing
    from qkverify.heads.cells import _Provider

    def wide(gd, budget):
        big = fmpq(2) ** 400
        return [_Provider("wide", lambda: [(-big, big)] * 8)]

    monkeypatch.setattr(cells_mod, "_providers", wide)
    hs = head_spectrum(gram_data(q, k), 8)          # the exact roots of charpoly(X) close the ladder
    assert hs.witness() == ref.witness() and hs.stats.get("charpoly-roots", 0) > 0
    monkeypatch.setattr(cells_mod, "_exact_root_provider", lambda counter, zero: wide(None, None)[0])
    hs = head_spectrum(gram_data(q, k), 8)          # exact Descartes counts alone
    assert hs.witness() == ref.witness()
    assert hs.stats.get("exact-count", 0) > 0


def test_budget_skips_and_says_how_to_force():
    s, b = charpoly_cost(2048, 100)
    assert s > 3600 and b > 64 * 2**30                    # the direct route at N = 2048: never by default
    with pytest.raises(RouteSkipped, match="budget"):
        Budget(seconds=1.0).direct(2048, 100)
    Budget(force=True).direct(2048, 100)                   # forced: no exception


_SCRIPT = r"""
import json, sys
import numpy as np
sys.path.insert(0, {tests!r})
from test_heads_cells import _heads, _rec
from qkverify.heads.certify import HeadOptions, certify_head
out = []
for i, (q, k) in enumerate(_heads()):
    r = certify_head(_rec(q, k, i), HeadOptions(charpoly=False, compare_float=False))
    out.append({{"cells": r["spectrum"].witness(), "values": r["values"], "witnesses": r["witnesses"]}})
print(json.dumps(out, sort_keys=True))
"""


def _run(env_extra: dict) -> str:
    env = dict(os.environ)
    env.update(env_extra)
    code = _SCRIPT.format(tests=os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def test_byte_identical_across_blas_threads_and_kernels():
    """The certified route in fresh processes with OpenBLAS on 1 and 2
    threads and on the Prescott kernel (other float rounding, as another CPU
    would give) produces byte-identical cells, witnesses and row values."""
    outs = {name: _run(env) for name, env in {
        "1 thread": {"OPENBLAS_NUM_THREADS": "1"},
        "2 threads": {"OPENBLAS_NUM_THREADS": "2"},
        "Prescott": {"OPENBLAS_NUM_THREADS": "1", "OPENBLAS_CORETYPE": "Prescott"},
    }.items()}
    ref = outs["1 thread"]
    assert json.loads(ref)[0]["cells"]["kind"] == "cells"
    for name, text in outs.items():
        assert text == ref, name


def test_split_gram_route_is_exact():
    """Z Zᵀ with the few small entries handled apart equals Python-integer
    Z Zᵀ, and the traces ‖L‖², tr(L²) equal those of the rational L."""
    from qkverify.heads.exact_gram import _float32_integers, _window_parts

    rng = np.random.default_rng(5)
    n, N = 6, 1500
    q = (rng.standard_normal((n, N)) / 40).astype(np.float32)
    k = (rng.standard_normal((n, N)) / 40).astype(np.float32)
    q[0, :5] *= np.float32(2.0 ** -30)                 # a few tiny entries: a third slice otherwise
    k[2, 7] = np.float32(3e-12)
    Zi, e = _float32_integers(np.concatenate([k, q]))
    assert len(_window_parts(Zi)) > 3                  # the columns of the tiny entries go apart
    g = gram_data(q, k)
    Zo = Zi.astype(object)
    G = Zo @ Zo.T
    assert all(int(G[i, j]) == int(g.G[i, j]) for i in range(2 * n) for j in range(2 * n))
    K, Q = Zo[:n], Zo[n:]
    # ‖KᵀQ‖² = tr((KKᵀ)(QQᵀ)) and tr((KᵀQ)²) = tr((QKᵀ)²): n x n products of the integers
    assert int(np.trace((K @ K.T) @ (Q @ Q.T))) == g.frob_L
    assert int(np.trace((Q @ K.T) @ (Q @ K.T))) == g.tr_L2


@pytest.mark.parametrize("case", ["bf16", "outliers", "tiny", "negative-partial-block", "slightly-tiny"])
def test_window_gram_is_exact(case):
    """The blocked Karatsuba Gram (one or two slices, exceptional columns
    apart) equals Z Zᵀ in Python integers, including a last partial block."""
    from qkverify.heads.exact_gram import _float32_integers, _window_parts

    rng = np.random.default_rng(["bf16", "outliers", "tiny", "negative-partial-block", "slightly-tiny"].index(case))
    n2, N = 6, 1300                                     # 1300 = 2 full blocks of 512 and a partial one
    M = rng.standard_normal((n2, N)).astype(np.float32)
    if case == "bf16":                                  # 8 significant bits: one slice
        M = (M.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
    elif case == "outliers":
        M[:, [3, 700, 1299]] *= np.float32(2.0 ** 12)
    elif case == "tiny":
        M[1, 5] = np.float32(1e-9)
        M[4, 1200] = np.float32(-3e-11)
    elif case == "slightly-tiny":                       # a few bits below the window: its correction part
        M[1, 5] = np.float32(0.7371 * 2.0 ** -16)
        M[4, 1200] = np.float32(-0.91237 * 2.0 ** -16)
    else:
        M = -np.abs(M)
        M[0, 0] = np.float32(-2.0 ** 10)
    Zi, _ = _float32_integers(M)
    parts = _window_parts(Zi)
    Zo = Zi.astype(object)
    G = Zo @ Zo.T
    tot = None
    for sh, P in parts:
        t = P.astype(object) * (1 << sh)
        tot = t if tot is None else tot + t
    assert all(int(G[i, j]) == int(tot[i, j]) for i in range(n2) for j in range(n2))
    if case == "bf16":
        assert len(parts) == 1
    if case == "tiny":
        assert len(parts) > 3                           # far below the window: sliced apart
    if case == "outliers":                              # scaled columns: their own window, folded in
        assert len(parts) == 3
    if case == "slightly-tiny":                         # kept in the window, the cut-off bits as one part
        assert len(parts) == 4 and parts[3][0] == 0


def test_exact_cross_with_dropped_pairs_encloses_the_product():
    """sliced._exact_cross: the low-order digit pairs it bounds instead of
    multiplying stay inside its radius (checked against Python integers)."""
    from qkverify.heads import sliced
    from qkverify.heads.digits import carry, digits_of_int64

    rng = np.random.default_rng(3)
    m, w = 6, 24
    A = rng.integers(-2 ** 61, 2 ** 61, (m, m)) >> rng.integers(0, 40, (1, m))      # columns of mixed scale
    B = rng.integers(-2 ** 61, 2 ** 61, (m, m))
    Ad, alo = carry(digits_of_int64(A, w, 80), w)
    Bd, blo = carry(digits_of_int64(B, w, 40), w)
    old = sliced.CROSS_DROP_BITS
    try:
        for bits in (old, 60, 20):
            sliced.CROSS_DROP_BITS = bits
            val, rad = sliced._exact_cross(Ad, alo, Bd, blo, w)
            exact = (A.astype(object).T @ B.astype(object)) * (1 << 120)
            for i in range(m):
                for j in range(m):
                    x = Fraction(int(exact[i, j]))
                    assert abs(Fraction(float(val[i, j])) - x) <= Fraction(float(rad[i, j])), (bits, i, j)
    finally:
        sliced.CROSS_DROP_BITS = old
