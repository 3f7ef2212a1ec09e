"""Benchmark: certify all 72 heads of all-MiniLM-L6-v2 against two float64
baselines measured in the same run.

  (i)  the authors' pipeline: QR basis of im(W_Kᵀ)+im(W_Qᵀ), 2n x 2n
       restricted form stored as float32, eigvalsh in float64;
  (ii) eigvalsh of the full N x N symmetric part in float64.

Certified configurations (each covers every head):

  certified        exact rank witness (2n x 2n minor mod p), exact a, certified
                   eigenvalue enclosures of ½JG, b, c, d, pairing, exact face
                   decisions; signature from the rank witness + enclosures
  +witness         the same plus the enclosure witness serialised for the certificate
  +charpoly 1/model  certified +witness on every head, and the exact signature by
                   charpoly(½JG) + Descartes on the first head of the model (the
                   rigorous default this bench recommends: enclosures of the 2n
                   nonzero eigenvalues all separated from 0, with the exact rank,
                   prove the signature; the charpoly cross-checks one head)
  +charpoly        the same plus the exact signature by charpoly(½JG) + Descartes
                   on every head (the CLI default at the time of writing)

BLAS runs single-threaded for every method (OPENBLAS_NUM_THREADS=1, set
before numpy loads), the methods are interleaved over several repetitions
and the fastest repetition of each is reported.  Peak memory: tracemalloc
(Python + numpy allocations) per configuration and the process's peak RSS.

Usage: python bench/bench_heads.py [--reps 5] [--json]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import collections  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

from qkverify.heads.certify import HeadOptions, certify_head  # noqa: E402
from qkverify.heads.float_pipeline import authors_pipeline, full_eigvalsh  # noqa: E402
from qkverify.models import load_model  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    model = load_model(None)
    heads = list(model.heads())
    assert len(heads) == 72

    methods = {
        "(i) authors float64": lambda h: authors_pipeline(h.W_Q, h.W_K),
        "(ii) eigvalsh N x N": lambda h: full_eigvalsh(h.W_Q, h.W_K),
        "certified": lambda h: certify_head(h, HeadOptions(charpoly=False, compare_float=False, witnesses=False)),
        "certified +witness": lambda h: certify_head(h, HeadOptions(charpoly=False, compare_float=False)),
        "certified +charpoly 1/model": lambda h: certify_head(
            h, HeadOptions(charpoly=(h.layer, h.head) == (heads[0].layer, heads[0].head), compare_float=False)),
        "certified +charpoly": lambda h: certify_head(h, HeadOptions(charpoly=True, compare_float=False)),
    }
    # warm-up (imports, caches, BLAS)
    for f in methods.values():
        for h in heads[:3]:
            f(h)
    best = {k: float("inf") for k in methods}
    for _ in range(args.reps):
        for name, f in methods.items():
            t = time.perf_counter()
            for h in heads:
                f(h)
            best[name] = min(best[name], time.perf_counter() - t)

    peak = {}
    for name, f in methods.items():
        tracemalloc.start()
        for h in heads:
            f(h)
        peak[name] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()

    # what the certified runs decided, and where float64 would decide otherwise
    results = [certify_head(h, HeadOptions(charpoly=True, compare_float=True)) for h in heads]
    routes = collections.Counter(r["row"]["route"] for r in results)
    sigs = collections.Counter((r["row"]["n_pos"], r["row"]["n_neg"], r["row"]["n_zero"]) for r in results)
    faces = collections.Counter((r["row"]["face_c0"], r["row"]["face_d0"]) for r in results)
    disagree = [(r["row"]["layer"], r["row"]["head"], r["row"]["float64_flags"]) for r in results
                if r["row"]["float64_disagrees"]]
    maxdev = max(r["row"]["float64_max_profile_dev"] for r in results)
    relw = max(max((float(r["row"][k + "_hi"]) - float(r["row"][k + "_lo"])) / abs(r["row"][k])
                   for k in "bcd" if r["row"][k]) for r in results)

    per = {k: 1e3 * v / len(heads) for k, v in best.items()}
    base_i, base_ii = per["(i) authors float64"], per["(ii) eigvalsh N x N"]
    out = {
        "heads": len(heads), "reps": args.reps, "ms_per_head": per,
        "ratio_vs_authors": {k: v / base_i for k, v in per.items()},
        "ratio_vs_full_eigvalsh": {k: v / base_ii for k, v in per.items()},
        "tracemalloc_peak_bytes": peak,
        "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "routes": dict(routes), "signatures": {str(k): v for k, v in sigs.items()},
        "faces_c0_d0": {str(k): v for k, v in faces.items()},
        "float64_disagreements": disagree,
        "max_profile_dev_authors_vs_exact": maxdev,
        "max_relative_width_bcd": relw,
    }
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"all-MiniLM-L6-v2, {len(heads)} heads, best of {args.reps} (BLAS single-threaded)")
    print(f"{'method':28s} {'ms/head':>9s} {'x (i)':>8s} {'x (ii)':>8s} {'tracemalloc peak':>17s}")
    for k in methods:
        print(f"{k:28s} {per[k]:9.3f} {per[k] / base_i:8.2f} {per[k] / base_ii:8.2f} {peak[k] / 2**20:14.2f} MiB")
    print(f"peak RSS {out['peak_rss_kib'] / 1024:.1f} MiB")
    print(f"signatures {dict(sigs)}; enclosure routes {dict(routes)}; faces (c=0, d=0) {dict(faces)}")
    print(f"max |authors float64 − exact| over a, b, c, d: {maxdev:.3g}; max relative width of b, c, d: {relw:.3g}")
    print("float64 disagrees with the exact answer on: " + (", ".join(f"L{l}H{h} ({f})" for l, h, f in disagree) or "no head"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
