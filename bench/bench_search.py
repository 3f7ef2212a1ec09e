"""Benchmark: exact claim checks per second *during a counterexample search*
on 4x4 inputs, qkverify against an exact sympy route measured in the same run.

What is timed
-------------
* qkverify route -- ``qkverify.search.search`` on a 4x4-only strategy (the
  family mixture of qkverify.search.strategies: general, symmetric,
  antisymmetric, low rank, rank one, ties, heads), with the claim's own
  ``conclusion`` as the check: Definition 6 (``profile``: π(L) with both
  paddings, exact) and Theorem 4 (``profile_sum_eq_one``: nonnegativity,
  sum = 1, the eight face fibers with their S = H ± P decompositions).  The
  rate counts conclusion evaluations over the wall time of the whole search
  (generation, shrinking bookkeeping and hypothesis tests included).
* sympy route -- on exactly the inputs the search evaluated, in order: the
  exact profile as a careful sympy user computes it (``bench_profile.sympy_route``: exact
  charpoly roots as Rationals / CRootOf, exact α/β comparisons, b, c, d as
  exact algebraic numbers -- rational or minimal polynomial -- and the eight
  fiber decisions, the same route as bench/bench_profile.py) plus the exact
  check a + b + c + d = 1 (the sum minus 1 is rational 0, or its minimal
  polynomial is x).  It does less than the Theorem 4 conclusion (no
  S = H ± P decompositions, no LDLᵀ cross-check), so the ratio understates
  qkverify's advantage there.  The sympy route gets a wall-clock budget; an
  unfinished input is not counted.
* isolation -- each route runs in its own fresh process (sympy and qkverify
  keep global caches; the second claim must not profit from the first).

Both rates are taken over the same inputs: if sympy finishes only a prefix
of the search's inputs within its budget, qkverify's rate is its time on that
prefix (its per-input check times plus the average per-input search
overhead).  Prints the table and ``ratio = qkverify checks/s ÷ sympy
checks/s`` per claim (target >= 100x).  Exit 0; no assertion on timing.

Usage: python bench/bench_search.py [--budget 300] [--sympy-budget 60] [--seed 0]
"""

from __future__ import annotations

import argparse
import platform
import signal
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import flint  # noqa: E402
import sympy as sp  # noqa: E402

from qkverify.io.inputs import MatrixInput  # noqa: E402
from qkverify.search import resolve, search  # noqa: E402
from qkverify.search.strategies import matrix_of_size  # noqa: E402

from bench_profile import X, sympy_route  # noqa: E402  (one sympy route for both benches)

CLAIMS = ("profile", "profile_sum_eq_one")


class _Budget(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise _Budget()


def sympy_check(L) -> bool:
    """Exact sympy evaluation of π(L) (exact values of b, c, d and the eight
    fiber decisions, as qkverify's conclusions report them: the sympy route
    of bench_profile.py) and of a + b + c + d = 1 (L != 0)."""
    p = sympy_route(L)
    total = p["a"][0] + p["expr"]["b"] + p["expr"]["c"] + p["expr"]["d"] - 1
    if total.is_Rational:
        return total == 0
    return sp.minimal_polynomial(total, X) == X


def clear_caches() -> None:
    """Cold start for both routes: sympy's global cache and qkverify's
    root-isolation cache (so the second claim gains nothing from the first)."""
    from sympy.core.cache import clear_cache

    from qkverify.exact import algebraic

    clear_cache()
    for name in dir(algebraic):
        f = getattr(algebraic, name)
        if callable(getattr(f, "cache_clear", None)):
            f.cache_clear()


def run_ours(claim_id: str, budget: int, seed: int):
    clear_caches()
    sel = resolve(claim_id)
    evaluate = sel.evaluate
    seen = []

    def recording(inp, drop=(), only=()):
        t = time.perf_counter()
        r = evaluate(inp, drop=drop, only=only)
        seen.append((inp.L, time.perf_counter() - t))
        return r

    sel.evaluate = recording
    strat = matrix_of_size(4).map(MatrixInput)
    t0 = time.perf_counter()
    out = search(sel, budget=budget, seed=seed, strategy=strat)
    dt = time.perf_counter() - t0
    return out, seen, dt


def run_sympy(mats, budget: float):
    clear_caches()
    done = 0
    ok = 0
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, budget)
    t0 = time.perf_counter()
    t_last = t0
    try:
        for L in mats:
            ok += bool(sympy_check(L))
            done += 1
            t_last = time.perf_counter()
    except _Budget:
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return done, ok, t_last - t0, time.perf_counter() - t0


def _ours_job(claim_id: str, budget: int, seed: int):
    out, seen, dt = run_ours(claim_id, budget, seed)
    mats = [[[str(L[i, j]) for j in range(L.ncols())] for i in range(L.nrows())] for L, _ in seen]
    return {"found": out.found, "dt": dt, "times": [t for _, t in seen], "mats": mats}


def _sympy_job(mats, budget: float):
    from flint import fmpq_mat

    Ls = [fmpq_mat([[flint.fmpq(*map(int, x.split("/"))) if "/" in x else flint.fmpq(int(x)) for x in r] for r in m])
          for m in mats]
    return run_sympy(Ls, budget)


def _isolated(fn, *args):
    import multiprocessing as mp

    with mp.get_context("spawn").Pool(1) as pool:
        return pool.apply(fn, args)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=int, default=300, help="search budget (eligible inputs) per claim")
    ap.add_argument("--sympy-budget", type=float, default=90.0, help="seconds for the sympy route per claim")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    print(f"python {platform.python_version()}, python-flint {flint.__version__}, sympy {sp.__version__}")
    print(f"4x4 inputs from the search strategies (family mixture), seed {args.seed}")
    rows = []
    for cid in CLAIMS:
        res = _isolated(_ours_job, cid, args.budget, args.seed)
        dt, times = res["dt"], res["times"]
        seen = list(zip(res["mats"], times))
        n = len(seen)
        in_check = sum(times)
        overhead = (dt - in_check) / n  # generation + hypotheses + driver, per input
        print(f"\n[{cid}] qkverify search: {n} exact checks in {dt:.2f} s "
              f"({n / dt:.1f} checks/s; {in_check:.2f} s inside the checks, {overhead * 1e3:.2f} ms/input search "
              f"overhead; counterexample: {'yes' if res['found'] else 'no'})", flush=True)
        sd, sok, st, sel = _isolated(_sympy_job, res["mats"], args.sympy_budget)
        if sd:
            # qkverify's rate on the same prefix of inputs, search overhead included
            ours_prefix = sum(t for _, t in seen[:sd]) + sd * overhead
            ours_rate = sd / ours_prefix
            print(f"[{cid}] sympy route: {sd}/{n} inputs checked in {st:.2f} s ({sd / st:.3f} checks/s); "
                  f"sum = 1 confirmed on {sok}/{sd}; qkverify on the same {sd} inputs: {ours_prefix:.2f} s")
            ratio = ours_rate / (sd / st)
            rows.append((cid, ours_rate, sd / st, f"{ratio:,.0f}x"))
        else:
            print(f"[{cid}] sympy route: 0 checks finished within {sel:.1f} s")
            rows.append((cid, n / dt, 0.0, f">{(n / dt) * sel:,.0f}x"))
    print("\nExact checks per second during search, 4x4 (same run, same inputs, search overhead included)")
    print(f"{'claim':<22} {'qkverify/s':>11} {'sympy/s':>9} {'ratio':>10}")
    for cid, a, b, r in rows:
        print(f"{cid:<22} {a:>11.1f} {b:>9.3f} {r:>10}")
    print("ratio = qkverify checks/s / sympy checks/s (target >= 100x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
