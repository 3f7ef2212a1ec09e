"""Benchmark: the kernel's cost against the producer's on the same certificates.

For random integer matrices (entries −3..3, fixed seed) of sizes 4, 8, 30 and
60, each statement's check (``claims.evaluate`` + certificate assembly: the
producer) and the kernel's ``verify_document`` on the certificate it wrote are
timed in the same run (process CPU seconds).  Issue 14's target: verify within
5× check.  Every certificate must be valid; the script says so per row.

Prints a table; exits 0.  No assertion on timing.

Usage: python bench/bench_verify.py [--sizes 4 8 30 60] [--per-size 3] [--seed 14]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qkverify.claims.evaluate import evaluate  # noqa: E402
from qkverify.io.inputs import MatrixInput  # noqa: E402
from qkverify.kernel import verify_document  # noqa: E402
from flint import fmpq_mat  # noqa: E402

STATEMENTS = ("profile", "profile_sum_eq_one", "frobSq_eq_frobSq_symPart_add_frobSq_skewPart")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[4, 8, 30, 60])
    ap.add_argument("--per-size", type=int, default=3)
    ap.add_argument("--seed", type=int, default=14)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    print(f"{'N':>4} {'statement':<46} {'check s':>9} {'verify s':>9} {'ratio':>7}  kernel")
    worst = 0.0
    for N in a.sizes:
        mats = [fmpq_mat([[rng.randint(-3, 3) for _ in range(N)] for _ in range(N)]) for _ in range(a.per_size)]
        for st in STATEMENTS:
            tc = tv = 0.0
            status = set()
            for L in mats:
                t = time.process_time()
                cert = json.loads(json.dumps(evaluate(st, MatrixInput(L)).certificate()))
                tc += time.process_time() - t
                t = time.process_time()
                status.add(verify_document(cert).status)
                tv += time.process_time() - t
            ratio = tv / tc if tc else float("nan")
            worst = max(worst, ratio)
            print(f"{N:>4} {st:<46} {tc / len(mats):>9.3f} {tv / len(mats):>9.3f} {ratio:>7.2f}  {'/'.join(sorted(status))}")
    print(f"worst verify/check ratio: {worst:.2f} (target ≤ 5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
