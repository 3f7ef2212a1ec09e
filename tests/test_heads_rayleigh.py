"""The float pass's refinement stages (issue 20 item 3): Kato–Temple on the pencil
(½ĜJĜ, Ĝ) from the exact Rayleigh quotient of a basis vector and its residual, then
from Newton-improved vectors.  Each refined interval must hold the exact eigenvalue,
computed here independently (sympy's exact roots of charpoly(J·Z Zᵀ)), and an
ill-conditioned head must get its cells without the exact-B-and-H escalation."""

from __future__ import annotations

import numpy as np
from flint import arb, ctx, fmpq, fmpz_mat

from qkverify.heads.cells import grid_exponent, head_spectrum
from qkverify.heads.exact_gram import _float32_integers, gram_data
from qkverify.heads.pass1 import STAGES, Pass1


def _ill_conditioned(n: int = 6, N: int = 40, seed: int = 7):
    """W_Q, W_K sharing an input subspace with singular values from 1 down to 1e-5 (a Gram
    matrix of condition ~1e8: the float basis is far from Ĝ-orthonormal)."""
    rng = np.random.default_rng(seed)
    V = np.linalg.qr(rng.standard_normal((N, 2 * n)))[0].T
    s = np.logspace(0, -4, 2 * n)
    A = rng.standard_normal((n, 2 * n)) * s
    q = A @ V
    k = (0.7 * A + 0.3 * rng.standard_normal((n, 2 * n)) * s) @ V
    return q.astype(np.float32), k.astype(np.float32)


def _exact_mu(q, k, s: int) -> list:
    """Balls (arb, 200 bits) of the eigenvalues of ½J·Ĝ, Ĝ = Z Zᵀ·2^(−s), decreasing: FLINT's
    rigorous root isolation of charpoly(J·Z Zᵀ), Z read from the float32 bits."""
    Zi, _ = _float32_integers(np.concatenate([k, q]))
    Z = fmpz_mat(Zi.astype(object).tolist())
    n = q.shape[0]
    G = (Z * Z.transpose()).tolist()
    X = fmpz_mat(G[n:] + G[:n])                                 # J·G: the two row blocks swapped
    with ctx.workprec(200):
        roots = [r.real for r, mult in X.charpoly().complex_roots() for _ in range(mult)]
        scale = arb(2) ** (-s - 1)
        return [r * scale for r in sorted(roots, key=lambda r: float(r.mid()), reverse=True)]


def _inside(r, lo: fmpq, hi: fmpq) -> bool:
    with ctx.workprec(200):
        return bool(arb(lo) <= r) and bool(r <= arb(hi))


def test_every_refinement_stage_encloses_the_exact_eigenvalue():
    q, k = _ill_conditioned()
    gd = gram_data(q, k)
    Gm_s = gd.gram_float()
    p = Pass1(gd, Gm_s)
    mu = _exact_mu(q, k, p.s)
    m = p.m
    idx = list(range(m))
    widths = []
    for stage in range(STAGES):
        got = p.refine(idx)
        for i in idx:
            lo, hi = got[i]
            assert _inside(mu[i], lo, hi), (stage, i)
            assert lo >= fmpq(*float(p.lo[i]).as_integer_ratio()) and hi <= fmpq(*float(p.hi[i]).as_integer_ratio())
        widths.append(sorted(float(hi - lo) for lo, hi in got.values()))
    float_widths = sorted(float(p.hi[i] - p.lo[i]) for i in idx)
    # the first stage gains orders of magnitude on most eigenvalues, the Newton stages more
    assert widths[0][m // 2] < 1e-6 * float_widths[m // 2]
    assert sum(widths[-1]) <= sum(widths[0])


def test_ill_conditioned_head_needs_no_exact_b_and_h():
    q, k = _ill_conditioned()
    hs = head_spectrum(gram_data(q, k), None, rank_fn=lambda: 12)
    assert hs.rank_M == 12
    assert not {"sliced", "sliced-exact", "exact-products", "arb-256", "arb-640"} & set(hs.stats)
    # the cells hold the exact eigenvalues (ν = 2·μ·2^s, so compare in ν units)
    gd = gram_data(q, k)
    s = gd.gram_float()[2]
    nu = [x * arb(2) ** (s + 1) for x in _exact_mu(q, k, s)]
    bounds = hs.cell_bounds()
    assert len(bounds) == len(nu)
    for (lo, hi), r in zip(bounds, nu):
        assert _inside(r, lo, hi)
    assert grid_exponent(2 * (gd.frob_L + gd.tr_L2)) == hs.grid_exponent
