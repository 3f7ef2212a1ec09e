"""Benchmark: exact signature of a rank-64 head form on C = R^384, direct
route against the Gram route (Lemma 10), measured in the same run.

Head: N = 384, n = 32, W_Q and W_K random float32 of shape 32 x 384 (fixed
seed).  Every float32 is an exact dyadic rational, so the inputs are exact
(``qkverify.exact.rational.ndarray_to_fmpq_mat``).

* direct route -- S = sym_part(W_Kᵀ W_Q) (384 x 384), scaled to the integer
  matrix D·S, FLINT ``fmpz_mat.charpoly`` and Descartes' rule of signs
  (``qkverify.exact.inertia.inertia_charpoly``).  SPEC Theorem 3
  (``heads_have_balanced_attention``): expected signature (n, n, N − 2n).
* Gram route -- ½JG with G = MMᵀ, M = [W_K; W_Q] (64 x 64 after the product,
  ``qkverify.claims.gram.half_JG``), integer scaling, charpoly and Descartes
  (``inertia_from_charpoly``).  Its spectrum is the nonzero spectrum of S
  when M has full rank 2n (SPEC Lemma 10, ``charpoly_roots_filter_ne_zero``),
  so the signature of S is (p, q, N − 2n) with (p, q, 0) that of ½JG.  The
  rank is certified separately (``qkverify.exact.matrix.rank_certificate``),
  timed on its own and also added to the Gram route's total.

Times are process CPU seconds (FLINT runs single-threaded here, and the
machine may be shared); the direct route's wall time is printed beside it.
Prints both signatures, the times and the ratio; exits 0.  No assertion on
timing.

Usage: python bench/bench_signature.py [--seed 0] [--N 384] [--n 32] [--repeat 3]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import flint  # noqa: E402
import numpy as np  # noqa: E402

from qkverify.claims.gram import half_JG  # noqa: E402
from qkverify.io.inputs import HeadInput  # noqa: E402
from qkverify.exact.inertia import inertia_charpoly, inertia_from_charpoly  # noqa: E402
from qkverify.exact.matrix import rank_certificate, sym_part, vstack  # noqa: E402
from qkverify.exact.rational import ndarray_to_fmpq_mat  # noqa: E402


WALL: dict[str, float] = {}


def _t(f, *a):
    """(f(*a), process CPU seconds); the wall time goes to WALL[f.__name__]."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = f(*a)
    WALL[getattr(f, "__name__", "?")] = time.perf_counter() - t0
    return out, time.process_time() - c0


def direct_route(head: HeadInput):
    """(inertia triple, timings dict) via the 384 x 384 charpoly."""
    S, t_build = _t(lambda: sym_part(head.W_K.transpose() * head.W_Q))
    inn, t_cp = _t(inertia_charpoly, S)  # integer scaling + fmpz_mat.charpoly + Descartes
    return inn, {"build S": t_build, "charpoly+Descartes": t_cp}


def gram_route(head: HeadInput):
    """(inertia triple of S, inertia of ½JG, timings) via the 64 x 64 ½JG."""
    H, t_build = _t(half_JG, head)

    def cp():
        B, _D = H.numer_denom()
        return inertia_from_charpoly(B.charpoly(), H.nrows())

    innH, t_cp = _t(cp)
    N, two_n = head.N, 2 * head.n
    triple = (innH.n_pos, innH.n_neg, innH.n_zero + N - two_n)
    return triple, innH, {"build ½JG": t_build, "charpoly+Descartes": t_cp}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--N", type=int, default=384)
    ap.add_argument("--n", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3, help="repeat the fast routes and keep the best time")
    args = ap.parse_args(argv)
    N, n = args.N, args.n

    print(f"python {platform.python_version()}, python-flint {flint.__version__}, "
          f"numpy {np.__version__}, flint threads {flint.ctx.threads}")
    rng = np.random.default_rng(args.seed)
    WQ = rng.standard_normal((n, N)).astype(np.float32)
    WK = rng.standard_normal((n, N)).astype(np.float32)
    (head, t_conv) = _t(lambda: HeadInput(W_Q=ndarray_to_fmpq_mat(WQ, "W_Q"), W_K=ndarray_to_fmpq_mat(WK, "W_K")))
    print(f"head: N = {N}, n = {n}, float32 standard normal, seed {args.seed}; "
          f"exact conversion {t_conv * 1e3:.1f} ms; expected signature ({n}, {n}, {N - 2 * n})")

    M = vstack(head.W_K, head.W_Q)
    rc_times = []
    for _ in range(max(1, args.repeat)):
        rc, t = _t(rank_certificate, M)
        rc_times.append(t)
    t_rank = min(rc_times)
    print(f"rank_certificate(M), M = [W_K; W_Q] {M.nrows()}x{M.ncols()}: rank {rc.rank} "
          f"(witness minor mod p = {rc.minor_mod_p} != 0, p = {rc.prime}), {t_rank:.3f} s")

    g_best = None
    for _ in range(max(1, args.repeat)):
        g_triple, innH, g_t = gram_route(head)
        if g_best is None or sum(g_t.values()) < sum(g_best.values()):
            g_best = g_t
    t_gram = sum(g_best.values())
    print(f"Gram route: ½JG {2 * n}x{2 * n} signature {innH.triple()} -> S signature {g_triple}; "
          + ", ".join(f"{k} {v:.3f} s" for k, v in g_best.items()) + f"; total {t_gram:.3f} s")

    print("direct route: charpoly of the {0}x{0} S (this takes a while) ...".format(N), flush=True)
    d_inn, d_t = direct_route(head)
    t_direct = sum(d_t.values())
    print(f"direct route: S signature {d_inn.triple()}; "
          + ", ".join(f"{k} {v:.3f} s" for k, v in d_t.items()) + f"; total {t_direct:.3f} s CPU "
          f"(charpoly wall {WALL.get('inertia_charpoly', float('nan')):.3f} s)")

    expected = (n, n, N - 2 * n)
    full_rank = rc.rank == 2 * n
    print("\nExact signature of the head form, N = %d, n = %d" % (N, n))
    hdr = f"{'route':<32} | {'signature':<14} | {'time':>9} | {'ratio':>8}"
    print(hdr)
    print("-" * len(hdr))
    print(f"{'direct (384x384 charpoly)':<32} | {str(d_inn.triple()):<14} | {t_direct:>7.3f} s | {'1x':>8}")
    print(f"{'Gram ½JG (64x64 charpoly)':<32} | {str(g_triple):<14} | {t_gram:>7.3f} s | "
          f"{t_direct / t_gram:>7.0f}x")
    print(f"{'Gram ½JG + rank_certificate(M)':<32} | {str(g_triple):<14} | {t_gram + t_rank:>7.3f} s | "
          f"{t_direct / (t_gram + t_rank):>7.0f}x")
    print(f"{'rank_certificate(M) alone':<32} | {'rank ' + str(rc.rank):<14} | {t_rank:>7.3f} s |")
    print("times: process CPU seconds; ratio = direct time / route time")
    agree = d_inn.triple() == g_triple == expected and full_rank
    print(f"both routes give {expected}: {'yes' if agree else 'NO'} "
          f"(direct {d_inn.triple()}, Gram {g_triple}, rank M = {rc.rank})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
