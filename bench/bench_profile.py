"""Benchmark: exact profile π(L) = (a, b, c, d) of random rational matrices,
qkverify against an exact sympy route measured in the same run.

What is compared (SPEC §3, Def 6, blueprint padding; Lean profileA..D):

* qkverify route -- ``qkverify.math.profile.compute_profile(L)`` (FLINT charpoly,
  factorisation, exact root comparison, resolvent for the exact values of
  b, c, d) followed by ``Profile.fibers()`` (the eight face decisions).
* sympy route -- what a careful sympy user would write to get the *same*
  exact answers: S = (L+Lᵀ)/2 as a Matrix of Rationals, its characteristic
  polynomial, exact roots from ``Poly.all_roots()`` (Rationals and CRootOf,
  real roots in exact increasing order), α/β split by exact sign, each
  comparison α_j vs β_j decided by an exact zero test (minimal polynomial of
  the difference is x) and otherwise sympy's sign decision, and b, c, d as
  exact algebraic numbers via ``sympy.minimal_polynomial``.

Both routes run on the same fixed-seed stream of matrices (entries p/q,
|p| ≤ 5, 1 ≤ q ≤ 4).  Each route has a wall-clock budget per size; the sympy
route is interrupted (SIGALRM) when its budget runs out and the unfinished
matrix is not counted.  Per-matrix costs are process CPU seconds (robust to
other load on a shared machine); wall seconds are printed beside them.  After timing, every matrix sympy finished is
checked against qkverify's answer: equal rationals, or the same minimal
polynomial with sympy's value lying in the sympy isolating interval that
contains qkverify's isolating interval; a equal; face decisions equal.

Prints a table; exits 0.  No assertion on timing.

Usage: python bench/bench_profile.py [--sizes 4 8] [--budget-sympy 60]
       [--budget-ours 20] [--seed 20240611]
"""

from __future__ import annotations

import argparse
import platform
import random
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import flint  # noqa: E402
import sympy as sp  # noqa: E402
from flint import fmpq, fmpq_mat  # noqa: E402

from qkverify.exact.matrix import frob_sq, random_rational  # noqa: E402
from qkverify.math.profile import compute_profile  # noqa: E402

X = sp.Symbol("x")


class _Budget(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise _Budget()


def matrix_stream(seed: int, N: int):
    """Deterministic stream of nonzero N x N rational matrices."""
    rng = random.Random(f"{seed}-{N}")
    while True:
        L = random_rational(rng, N, N, num=5, den=4)
        if frob_sq(L) != 0:
            yield L


# ---------------------------------------------------------------------------
# qkverify route


def ours(L: fmpq_mat):
    P = compute_profile(L)
    return P, P.fibers()


# ---------------------------------------------------------------------------
# sympy route


def _to_sympy(L: fmpq_mat) -> sp.Matrix:
    N = L.nrows()
    return sp.Matrix(N, N, lambda i, j: sp.Rational(int(L[i, j].p), int(L[i, j].q)))


def _exact_cmp(u, v) -> int:
    """Exact comparison of two real algebraic sympy numbers (≥ 0 here)."""
    if u == v:  # structurally equal (same Rational or same CRootOf)
        return 0
    diff = u - v
    if diff.is_Rational:
        return int(bool(diff > 0)) - int(bool(diff < 0))
    if sp.minimal_polynomial(diff, X) == X:  # exact zero test
        return 0
    pos = diff.is_positive  # nonzero: sympy's own sign decision
    if pos is None:
        pos = bool(diff.evalf(100) > 0)
    return 1 if pos else -1


def _exact_value(expr):
    """(rational or None, minimal polynomial or None) of an algebraic expr."""
    expr = sp.sympify(expr)
    if expr.is_Rational:
        return expr, None
    mp = sp.minimal_polynomial(expr, X)
    if sp.degree(mp, X) == 1:
        c1, c0 = sp.Poly(mp, X).all_coeffs()
        return sp.Rational(-c0, c1), None
    return None, mp


def sympy_route(L: fmpq_mat, exact_values: bool = True) -> dict:
    """The sympy route.  With exact_values=False (the like-for-like
    comparison where qkverify gives enclosures only, see main) the eigenvalue
    order and face decisions stay exact but b, c, d are only evaluated to
    40 digits."""
    Ls = _to_sympy(L)
    N = Ls.rows
    S = (Ls + Ls.T) / 2
    T = (Ls - Ls.T) / 2
    fL = sum(v**2 for v in Ls)
    fT = sum(v**2 for v in T)
    p = sp.Poly(S.charpoly(X).as_expr(), X)
    roots = p.all_roots()  # exact; real roots in exact increasing order
    if len(roots) != N or not all(r.is_real for r in roots):
        raise ArithmeticError("non-real eigenvalue of a symmetric matrix")
    signs = []
    for r in roots:
        if r.is_Rational:
            signs.append(int(bool(r > 0)) - int(bool(r < 0)))
        else:  # CRootOf of an irreducible factor: never 0
            signs.append(1 if r.is_positive else -1)
    alpha = [r for r, s in zip(reversed(roots), reversed(signs)) if s > 0]
    beta = [-r for r, s in zip(roots, signs) if s < 0]
    m = max(len(alpha), len(beta))
    A = alpha + [sp.Integer(0)] * (m - len(alpha))
    B = beta + [sp.Integer(0)] * (m - len(beta))
    order = [_exact_cmp(A[j], B[j]) for j in range(m)]
    both = [j for j in range(m) if j < len(alpha) and j < len(beta)]
    b_expr = 2 * sp.Add(*[A[j] * B[j] for j in both]) / fL
    c_expr = sp.Add(*[(A[j] - B[j]) ** 2 for j in range(m) if order[j] > 0]) / fL
    d_expr = sp.Add(*[(A[j] - B[j]) ** 2 for j in range(m) if order[j] < 0]) / fL
    out = {"a": (fT / fL, None), "order": order, "inertia": (len(alpha), len(beta), N - len(alpha) - len(beta))}
    exprs = {"b": b_expr, "c": c_expr, "d": d_expr}
    for k, e in exprs.items():
        if exact_values:
            out[k] = _exact_value(e)
        else:
            out[k] = (sp.Integer(0), None) if e == 0 else (None, None)
            out[k + "_approx"] = sp.N(e, 40)
    out["expr"] = exprs
    z = {k: (out[k][0] == 0) for k in "abcd"}  # b, c, d: sums of positive terms
    out["fibers"] = {}
    for k in "abcd":
        others = [o for o in "abcd" if o != k]
        out["fibers"][f"{k}=0"] = z[k]
        out["fibers"][f"{k}=1"] = all(z[o] for o in others)
    return out


# ---------------------------------------------------------------------------
# agreement


def _same_value(coord, rat, mp, expr) -> tuple[bool, str]:
    v = coord.value
    if v is None:
        # no exact value from qkverify (Galois orbit above its cap): the
        # sympy value must lie in qkverify's certified enclosure
        if rat is not None:
            val = flint.arb(fmpq(int(rat.p), int(rat.q)))
            return bool(coord.enclosure.overlaps(val)), "enclosure only"
        val = sp.Rational(str(sp.N(expr, 60)))
        return bool(coord.enclosure.overlaps(flint.arb(fmpq(int(val.p), int(val.q))))), "enclosure only"
    if rat is not None:
        ok = v.is_rational and v.rational == fmpq(int(rat.p), int(rat.q))
        return ok, "rational"
    if v.is_rational:
        return False, "qkverify rational, sympy irrational"
    P = sp.Poly(mp, X)
    coeffs = [int(c) for c in P.all_coeffs()]  # descending, primitive
    if coeffs[0] < 0:
        coeffs = [-c for c in coeffs]
    ours_c = [int(c) for c in reversed(v.poly.coeffs())]
    if coeffs != ours_c:
        return False, "minimal polynomials differ"
    # which root: sympy's exact isolating intervals (disjoint) separate the
    # real roots; qkverify's interval lies in exactly one of them, and
    # sympy's value must evaluate inside the same one.
    ivs = P.intervals(eps=sp.Rational(1, 10**12))
    lo, hi = sp.Rational(int(v.lo.p), int(v.lo.q)), sp.Rational(int(v.hi.p), int(v.hi.q))
    hits = [k for k, ((s, t), _) in enumerate(ivs) if not (hi < s or lo > t)]
    if len(hits) != 1:
        return False, "root not located"
    (s, t), _ = ivs[hits[0]]
    val = sp.Rational(str(sp.N(expr, 40)))
    others = [k for k, ((s2, t2), _) in enumerate(ivs) if s2 <= val <= t2]
    return others == hits[:1], "algebraic"


def agree(P, fib, sy) -> tuple[bool, list[str]]:
    """Compare qkverify's profile with a sympy result (exact or faces-only)."""
    problems = []
    if P.a.value.rational != fmpq(int(sy["a"][0].p), int(sy["a"][0].q)):
        problems.append("a")
    for k in "bcd":
        rat, mp = sy[k]
        coord = getattr(P, k)
        if k + "_approx" in sy:  # faces-only sympy result
            if rat is not None:  # structurally zero
                if not coord.is_zero:
                    problems.append(f"{k}: zero for sympy only")
                continue
            ap = sp.Rational(str(sy[k + "_approx"]))
            encl = coord.value.to_arb(128) if coord.value is not None else coord.enclosure
            if coord.is_zero or not encl.overlaps(flint.arb(fmpq(int(ap.p), int(ap.q)))):
                problems.append(f"{k}: sympy value outside qkverify's enclosure")
            continue
        ok, why = _same_value(coord, rat, mp, sy["expr"][k])
        if not ok:
            problems.append(f"{k}: {why}")
    if fib != sy["fibers"]:
        problems.append("fibers")
    if list(P.order) != sy["order"]:
        problems.append("alpha/beta order")
    if P.inertia != sy["inertia"]:
        problems.append("inertia")
    return not problems, problems


# ---------------------------------------------------------------------------


def run_ours(N: int, seed: int, budget: float, cap: int):
    """qkverify on the stream until ``budget`` wall seconds or ``cap``
    matrices; returns (results, cpu seconds, wall seconds)."""
    done = []
    stream = matrix_stream(seed, N)
    t0, c0 = time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < budget and len(done) < cap:
        L = next(stream)
        done.append((L, *ours(L)))
    return done, time.process_time() - c0, time.perf_counter() - t0


def run_sympy(N: int, seed: int, budget: float, exact_values: bool = True):
    """sympy on the same stream, interrupted after ``budget`` wall seconds;
    returns (finished results, cpu and wall seconds spent on them, total wall
    seconds, whether a matrix was left unfinished)."""
    done = []
    stream = matrix_stream(seed, N)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, budget)
    t0, c0 = time.perf_counter(), time.process_time()
    t_last, c_last = t0, c0
    interrupted = False
    try:
        while True:
            L = next(stream)
            done.append((L, sympy_route(L, exact_values)))
            t_last, c_last = time.perf_counter(), time.process_time()
    except _Budget:
        interrupted = True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    elapsed_wall, elapsed_cpu = time.perf_counter() - t0, time.process_time() - c0
    return done, c_last - c0, t_last - t0, elapsed_cpu, elapsed_wall, interrupted


def fmt_t(sec: float | None) -> str:
    if sec is None:
        return "-"
    if sec < 1e-3:
        return f"{sec * 1e6:.0f} us"
    if sec < 1:
        return f"{sec * 1e3:.2f} ms"
    return f"{sec:.2f} s"


def _sympy_block(N, seed, budget, exact_values, od, label):
    print(f"[{N}x{N}] sympy route, {label} (budget {budget:.0f} s) ...", flush=True)
    sd, sc, sw, ecpu, ewall, intr = run_sympy(N, seed, budget, exact_values)
    if sd:
        per_s = sc / len(sd)
        print(f"  {len(sd)} matrices finished in {sc:.2f} s CPU / {sw:.2f} s wall ({per_s:.3f} s CPU each)"
              + ("; next matrix unfinished at budget" if intr else ""))
    else:
        per_s = None
        print(f"  0 matrices finished within {ecpu:.1f} s CPU / {ewall:.1f} s wall "
              f"(per-matrix cost > {ecpu:.1f} s CPU)")
    selapsed = ecpu
    n_ok = 0
    bad = []
    for i, (L, sy) in enumerate(sd):
        if i < len(od):
            L2, P, fib = od[i]
            if L2 != L:
                raise RuntimeError("matrix streams out of step")
        else:
            P, fib = ours(L)
        ok, probs = agree(P, fib, sy)
        n_ok += ok
        if not ok:
            bad.append((i, probs))
    what = ("a, b, c, d exact values" if exact_values else "a exact, b, c, d in enclosures") + \
        ", alpha/beta order, inertia, fibers"
    print(f"  agreement: {n_ok}/{len(sd)} matrices ({what})")
    for i, probs in bad[:5]:
        print(f"    matrix #{i}: {', '.join(probs)}")
    return len(sd), per_s, selapsed, n_ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[4, 8])
    ap.add_argument("--budget-sympy", type=float, default=60.0, help="seconds per size, sympy exact route")
    ap.add_argument("--budget-sympy-faces", type=float, default=30.0,
                    help="seconds per size, sympy faces-only route (run only where qkverify gave enclosures only)")
    ap.add_argument("--budget-ours", type=float, default=20.0, help="seconds per size for qkverify")
    ap.add_argument("--cap", type=int, default=20000, help="max matrices per size for qkverify")
    ap.add_argument("--seed", type=int, default=20240611)
    args = ap.parse_args(argv)

    print(f"python {platform.python_version()}, python-flint {flint.__version__}, sympy {sp.__version__}, "
          f"flint threads {flint.ctx.threads}")
    print(f"entries p/q with |p| <= 5, 1 <= q <= 4; seed {args.seed}; blueprint padding")
    rows = []
    for N in args.sizes:
        print(f"\n[{N}x{N}] qkverify route (budget {args.budget_ours:.0f} s) ...", flush=True)
        od, ot, ow = run_ours(N, args.seed, args.budget_ours, args.cap)
        n_exact = sum(1 for _, P, _ in od if P.exact_complete)
        per_o = ot / len(od)
        print(f"  {len(od)} matrices in {ot:.2f} s CPU / {ow:.2f} s wall ({per_o * 1e3:.3f} ms CPU each); "
              f"exact b, c, d for {n_exact}/{len(od)}")
        if n_exact < len(od):
            notes = next(P.notes for _, P, _ in od if not P.exact_complete)
            print(f"  note: {notes[0]} (compute_profile default max_orbit=720)")
        like = "exact" if n_exact == len(od) else "mixed"
        ns, ps, sel, nok = _sympy_block(N, args.seed, args.budget_sympy, True, od, "exact b, c, d")
        rows.append((N, "exact b,c,d", len(od), per_o, f"{n_exact}/{len(od)}", ns, ps, sel, nok, like == "exact"))
        if n_exact < len(od):
            ns, ps, sel, nok = _sympy_block(N, args.seed, args.budget_sympy_faces, False, od,
                                            "exact faces, b, c, d to 40 digits")
            rows.append((N, "faces+encl.", len(od), per_o, f"{n_exact}/{len(od)}", ns, ps, sel, nok, True))

    print("\nExact profile throughput (same run, same matrices)")
    hdr = (f"{'N':>2} {'sympy computes':<14} | {'qkverify n':>10} {'per matrix':>10} {'matr/s':>8} "
           f"{'exact bcd':>10} | {'sympy n':>7} {'per matrix':>10} {'matr/s':>7} | {'ratio':>8} | agree")
    print(hdr)
    print("-" * len(hdr))
    for N, mode, no, po, ne, ns, ps, sel, nok, fair in rows:
        if ps is None:
            ratio = f">{sel / po:,.0f}x"
            ps_s, rs_s = f">{sel:.0f} s", f"<{1 / sel:.3f}"
        else:
            ratio = f"{ps / po:,.0f}x"
            ps_s, rs_s = fmt_t(ps), f"{1 / ps:.3f}"
        if not fair:
            ratio += "*"
        print(f"{N:>2} {mode:<14} | {no:>10} {fmt_t(po):>10} {1 / po:>8.1f} {ne:>10} | "
              f"{ns:>7} {ps_s:>10} {rs_s:>7} | {ratio:>8} | {nok}/{ns}")
    print("times are process CPU seconds (the machine may be shared; budgets are wall-clock)")
    print("ratio = sympy CPU seconds per matrix / qkverify CPU seconds per matrix (target >= 100x on 4x4)")
    if any(not r[-1] for r in rows):
        print("* not like-for-like: qkverify returned certified enclosures (not exact values) for b, c, d "
              "on these matrices; compare with the 'faces+encl.' row")
    return 0


if __name__ == "__main__":
    sys.exit(main())
