"""Benchmark at the survey's shapes: the authors' float64 pipeline against
qkverify's certified route, in the same run, on synthetic float32 heads with
the shapes of the paper's 14 models (bench/survey_heads.py: i.i.d., low
effective rank, outlier dimensions, clustered spectra with near ties).

Certified route = what a head's certificate needs: exact Gram data and a,
the rank witness, the deterministic cells of the spectrum (signature, exact
faces, α_j vs β_j), b, c, d to 9 digits, the witnesses -- without the
optional exact cross-checks (charpoly on the first head, direct route), which
the table lists separately per model.

BLAS runs single-threaded for both (set before numpy loads); each head is
timed as the best of --reps runs of each method, interleaved.  Reported per
shape: ms per head of each, the ratio, the share of heads whose cells needed
more than the default route (digit-sliced enclosures), and per resolution
path how many cell/side decisions it took.  The whole-survey estimate is
Σ over the 14 models of heads × certified ms per head of their shape, on one
core and on all the cores of this machine.

Usage: python bench/bench_survey.py [--per-shape 8] [--reps 3] [--json]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import collections  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from survey_heads import KINDS, SURVEY, shapes, survey_heads_total, synthetic_head  # noqa: E402

from qkverify.heads.certify import HeadOptions, certify_head  # noqa: E402
from qkverify.heads.float_pipeline import authors_pipeline  # noqa: E402
from qkverify.models.base import HeadRecord  # noqa: E402

OPT = HeadOptions(charpoly=False, direct=False, compare_float=False, witnesses=True)


def bench_shape(N: int, n: int, per: int, reps: int) -> dict:
    heads = [synthetic_head(N, n, KINDS[i % len(KINDS)], i // len(KINDS)) for i in range(per)]
    recs = [HeadRecord("bench", 0, i, i, q, k, {}) for i, (q, k) in enumerate(heads)]
    certify_head(recs[0], OPT)                       # warm-up (imports, caches)
    authors_pipeline(recs[0].W_Q, recs[0].W_K)
    ta, tc = [], []
    paths: collections.Counter = collections.Counter()
    off = 0
    kinds_off = collections.Counter()
    undecided = 0
    for i, r in enumerate(recs):
        best_a = best_c = float("inf")
        res = None
        for _ in range(reps):
            t = time.perf_counter()
            authors_pipeline(r.W_Q, r.W_K)
            best_a = min(best_a, time.perf_counter() - t)
            t = time.perf_counter()
            res = certify_head(r, OPT)
            best_c = min(best_c, time.perf_counter() - t)
        ta.append(best_a)
        tc.append(best_c)
        st = res["stats"]
        used = {k for k, v in st.items() if k not in ("levels", "path_final", "diagnostics", "sliced")
                and isinstance(v, int) and v > 0}
        for k, v in st.items():
            if isinstance(v, int):
                paths[k] += v
        if used:
            off += 1
            kinds_off[KINDS[i % len(KINDS)]] += 1
        if "?" in res["spectrum"].order:
            undecided += 1
    a, c = 1e3 * float(np.mean(ta)), 1e3 * float(np.mean(tc))
    return {"N": N, "n": n, "heads": per, "authors_ms": a, "certified_ms": c, "ratio": c / a,
            "off_default_route": off / per, "off_by_kind": dict(kinds_off), "paths": dict(paths),
            "undecided_orders": undecided}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-shape", type=int, default=8, help="synthetic heads per shape (kinds cycle)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--shapes", default=None, help="only these shapes, e.g. 768x64,5120x128")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    sel = sorted(shapes())
    if args.shapes:
        want = {tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")}
        sel = [s for s in sel if s in want]
    out = []
    for N, n in sel:
        out.append(bench_shape(N, n, args.per_shape, args.reps))
        if not args.json:
            r = out[-1]
            print(f"N={N:5d} n={n:3d}  authors {r['authors_ms']:8.1f} ms  certified {r['certified_ms']:8.1f} ms  "
                  f"ratio {r['ratio']:5.2f}  off default route {100 * r['off_default_route']:.0f}%", flush=True)
    by_shape = {(r["N"], r["n"]): r for r in out}
    cores = len(os.sched_getaffinity(0))
    tot_a = tot_c = 0.0
    per_model = []
    for name, N, n, L, H, _ in SURVEY:
        r = by_shape.get((N, n))
        if r is None:
            continue
        k = L * H
        tot_a += k * r["authors_ms"] / 1e3
        tot_c += k * r["certified_ms"] / 1e3
        per_model.append((name, k, k * r["certified_ms"] / 1e3))
    paths: collections.Counter = collections.Counter()
    for r in out:
        paths.update(r["paths"])
    summary = {"survey_heads": survey_heads_total(), "cores": cores,
               "survey_authors_s_one_core": tot_a, "survey_certified_s_one_core": tot_c,
               "survey_certified_s_all_cores": tot_c / cores, "paths": dict(paths), "shapes": out}
    if args.json:
        print(json.dumps(summary, indent=1))
        return 0
    print()
    print("| N, n | authors' pipeline | certified | ratio | heads off the default route |")
    print("|---|---|---|---|---|")
    for r in out:
        print(f"| {r['N']}, {r['n']} | {r['authors_ms']:.1f} ms | {r['certified_ms']:.1f} ms | {r['ratio']:.2f}x "
              f"| {100 * r['off_default_route']:.0f}% {r['off_by_kind'] or ''} |")
    print()
    print(f"whole survey ({survey_heads_total()} heads): authors {tot_a / 60:.1f} min, certified {tot_c / 60:.1f} min "
          f"on one core, {tot_c / cores / 60:.1f} min on {cores} cores (--jobs {cores})")
    print("cell / side decisions by path (all shapes): " + ", ".join(f"{k} {v}" for k, v in sorted(paths.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
