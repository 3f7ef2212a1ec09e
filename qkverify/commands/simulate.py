"""`qkverify simulate`: the self-attention dynamics of docs/MATH.md (Clustering regimes) in floating point
(evidence: empirical).  Three modes:

* default: one run from given or random (Q, K, V) and tokens -- forward Euler (the layer
  picture) or RK4, in x or in the rescaled z = e^{−tV}x; the final cluster count, P(T) and
  its rank, a PNG of the 2-D paths and of P(t);
* ``--theorem-2-1``: Theorem 2.1 (d = 1) over many random initial conditions, as a table;
* ``--example-d2``: x_1 = (1, ε), x_2 = (1, −ε): P → I_2 while one cluster forms.

Step size and horizon are options and are reported with every result.  Exit 0, or 1 when
the Theorem 2.1 check finds a sample that does not look like the theorem's limit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import QKInputError
from ..io.outputs import default_out
from ._util import CAPS, MAX_STEPS, check_range, check_real, echo, print_json, progress

#: caps of simulate's sizes (a float simulation: n² d work per step)
SIM_D = 256
SIM_N = 1000
#: at most this many token-pair updates n²·d·steps in one run (about a minute of numpy)
MAX_WORK = 10**10


def _check_work(n: int, d: int, dt: float, T: float, samples: int = 1) -> None:
    steps = T / dt
    if steps > MAX_STEPS:
        raise QKInputError(f"--horizon / --dt = {steps:.3g} steps exceeds the cap of {MAX_STEPS}")
    work = samples * n * n * d * steps
    if work > MAX_WORK:
        raise QKInputError(f"samples·n²·d·steps = {work:.3g} exceeds the cap of {MAX_WORK:.0e} "
                           "(lower --n, --d, --samples or --horizon, or raise --dt)")

NAME = "simulate"
HELP = "simulate the self-attention dynamics (Euler/RK4, x or z); Theorem 2.1 check; the d = 2 example"


def add_arguments(p) -> None:
    """Options of ``qkverify simulate``."""
    p.add_argument("--triple", help="a triple file {Q, K, V} (default Q = K = V = I_d; see --random)")
    p.add_argument("--random", action="store_true", help="a random triple: Q, K, V with i.i.d. N(0, 1/d) entries")
    p.add_argument("--tokens", help="initial tokens, n x d (JSON or .npy; default: n random N(0, 1) tokens)")
    p.add_argument("--d", type=int, default=2, help=f"dimension of a random triple, 1..{SIM_D} (default 2)")
    p.add_argument("--n", type=int, default=6, help=f"number of random tokens, 1..{SIM_N} (default 6)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--method", choices=("rk4", "euler"), default="rk4", help="integrator (default rk4)")
    p.add_argument("--coords", choices=("z", "x"), default="z", help="rescaled z = e^{-tV}x (default) or x")
    p.add_argument("--dt", type=float, default=None,
                   help="step size in (0, 1] (default 0.01; 0.05 for --theorem-2-1)")
    p.add_argument("--horizon", type=float, default=None,
                   help=f"final time T in (0, {CAPS['horizon']}] (default 10; 30 for --theorem-2-1; 40 for "
                        f"--example-d2); at most {MAX_STEPS} steps T/Δt and {MAX_WORK:.0e} token-pair updates "
                        "n²·d·steps per run")
    p.add_argument("--cluster-tol", type=float, default=1e-3,
                   help="clusters: tokens closer than this times max(1, max norm) are one cluster (default 1e-3)")
    p.add_argument("--out", default=str(default_out("simulate")),
                   help="folder of the picture and its JSON (default ./qkverify-out/simulate)")
    p.add_argument("--no-png", action="store_true", help="no picture, nothing written")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--theorem-2-1", dest="thm21", action="store_true",
                   help="the d = 1 check of Theorem 2.1 over --samples random initial conditions per n in --ns")
    p.add_argument("--samples", type=int, default=1000,
                   help=f"--theorem-2-1: initial conditions per n, 1..{CAPS['samples']} (default 1000)")
    p.add_argument("--ns", default="2,3,5,10", help=f"--theorem-2-1: token counts, each 2..{SIM_N} (default 2,3,5,10)")
    p.add_argument("--tol", type=float, default=1e-6, help="--theorem-2-1: row = e_1/e_n and rank tolerance")
    p.add_argument("--example-d2", dest="ex2", action="store_true", help="the d = 2 example x = (1, ±ε)")
    p.add_argument("--eps", type=float, default=0.2, help="--example-d2: ε (default 0.2)")


def _matrix(path: str, what: str) -> np.ndarray:
    from ..exact.rational import read_input_file

    doc = read_input_file(path)
    try:
        a = np.array(doc, dtype=np.float64)
    except (TypeError, ValueError):
        raise QKInputError(f"{path}: {what} must be a rectangular matrix of numbers") from None
    if a.ndim != 2 or not np.all(np.isfinite(a)):
        raise QKInputError(f"{path}: {what} must be a finite 2-d array, got shape {a.shape}")
    return a


def _outputs(args, stem: str):
    """(png path or None): the output folder is checked before any work."""
    if args.no_png:
        return None
    from ..io.outputs import probe_output_dir

    return probe_output_dir(args.out) / f"{stem}.png"


def _save_json(args, stem: str, doc: dict) -> None:
    if args.no_png:
        return
    import json

    from ..io.outputs import atomic_write_text, ensure_dir

    ensure_dir(args.out)
    atomic_write_text(Path(args.out) / f"{stem}.json", json.dumps(doc, indent=1, default=float) + "\n")


def run(args) -> int:
    check_real("--dt", args.dt, 0, 1)
    check_real("--horizon", args.horizon, 0, CAPS["horizon"])
    check_real("--cluster-tol", args.cluster_tol, 0, 1)
    check_real("--tol", args.tol, 0, 1)
    check_real("--eps", args.eps, 0, 10**6)
    check_range("--d", args.d, 1, SIM_D)
    check_range("--n", args.n, 1, SIM_N)
    check_range("--samples", args.samples, 1, CAPS["samples"])
    check_range("--seed", args.seed, 0, 2**32 - 1)
    if args.thm21:
        return _thm21(args)
    if args.ex2:
        return _ex2(args)
    return _single(args)


def _single(args) -> int:
    from ..math import dynamics as D

    rng = np.random.default_rng(args.seed)
    if args.triple:
        from ..io.inputs import load_input

        t = load_input(args.triple, "triple")
        Q, K, V = (np.array([[float(x) for x in r] for r in M.tolist()]) for M in (t.Q, t.K, t.V))
        source = f"triple {args.triple} (rational entries as float64)"
    elif args.random:
        if args.d < 1:
            raise QKInputError("--d must be at least 1")
        Q, K, V = (rng.standard_normal((args.d, args.d)) / np.sqrt(args.d) for _ in range(3))
        source = f"random triple, seed {args.seed}: Q, K, V with i.i.d. N(0, 1/d) entries"
    else:
        if args.d < 1:
            raise QKInputError("--d must be at least 1")
        Q = K = V = np.eye(args.d)
        source = "Q = K = V = I_d (Theorem 3.1: the rescaled tokens go to the vertices of their convex hull)"
    d = V.shape[0]
    if args.tokens:
        x0 = _matrix(args.tokens, "the tokens")
        if x0.shape[1] != d:
            raise QKInputError(f"{args.tokens}: tokens have {x0.shape[1]} coordinates, the triple d = {d}")
    else:
        if args.n < 1:
            raise QKInputError("--n must be at least 1")
        x0 = rng.standard_normal((args.n, d))
    dt = args.dt or 0.01
    T = args.horizon or 10.0
    if d > SIM_D or len(x0) > SIM_N:
        raise QKInputError(f"simulate: at most d = {SIM_D} and {SIM_N} tokens (got d = {d}, {len(x0)} tokens)")
    _check_work(len(x0), d, dt, T)
    png = _outputs(args, "simulate")
    try:
        tr = D.simulate(x0, Q, K, V, dt, T, args.method, args.coords)
    except ValueError as err:
        raise QKInputError(str(err)) from None
    final = tr.tokens[-1]
    P = tr.P[-1]
    s = np.linalg.svd(P, compute_uv=False)
    out = {"evidence": "empirical (floating-point simulation)", "source": source, "d": d, "n": len(x0),
           "method": tr.method, "coords": tr.coords, "dt": tr.dt, "horizon": tr.horizon, "steps": tr.meta["steps"],
           "clusters": D.cluster_count(final, args.cluster_tol), "cluster_tol": args.cluster_tol,
           "rank_P_final": int(np.sum(s > 1e-6 * s[0])), "P_final": P.tolist(), "tokens_final": final.tolist(),
           "Q": Q.tolist(), "K": K.tolist(), "V": V.tolist()}
    if not np.all(np.isfinite(final)):
        out["warning"] = "the tokens overflowed: shorten --horizon or use --coords z"
    if png is not None:
        D.plot(tr, png, f"{source}; clusters at tol {args.cluster_tol:g}: {out['clusters']}")
        out["png"] = str(png)
        _save_json(args, "simulate", out)
    if args.json:
        print_json(out)
        return 0
    echo(f"simulate: d = {d}, n = {out['n']} tokens; {source}")
    print(f"  {tr.method} in {tr.coords}, Δt = {tr.dt:g}, T = {tr.horizon:g} ({out['steps']} steps) [empirical]")
    print(f"  clusters at tolerance {args.cluster_tol:g} (× max(1, max ‖{tr.coords}_i‖)): {out['clusters']}")
    print(f"  rank P(T) (singular values > 1e-6·σ₁): {out['rank_P_final']}")
    print("  P(T) = " + np.array2string(P, precision=4, suppress_small=True).replace("\n", "\n         "))
    if "warning" in out:
        print("  warning: " + out["warning"])
    if png is not None:
        print(f"  picture: {png}")
    return 0


def _thm21(args) -> int:
    from ..math.dynamics import low_rank_1d

    try:
        ns = [int(x) for x in args.ns.split(",") if x.strip()]
    except ValueError:
        raise QKInputError(f"--ns: cannot read {args.ns!r} (expected e.g. 2,3,5,10)") from None
    if not ns or min(ns) < 2 or max(ns) > SIM_N or args.samples < 1:
        raise QKInputError(f"--ns needs token counts in 2..{SIM_N} and --samples at least 1")
    dt, T = args.dt or 0.05, args.horizon or 30.0
    _check_work(max(ns), 1, dt, T, args.samples * len(ns))
    if not args.no_png:
        from ..io.outputs import probe_output_dir

        probe_output_dir(args.out)
    rows = [low_rank_1d(n, args.samples, args.seed + n, dt, T, args.tol, args.method)
            for n in progress(ns, desc="Theorem 2.1", unit="n", quiet=args.json)]
    ok = all(r.passed == r.samples for r in rows)
    doc = {"evidence": "empirical", "theorem": "Theorem 2.1", "dt": dt, "horizon": rows[0].horizon,
           "method": args.method, "tol": args.tol, "seed": args.seed, "rows": [r.__dict__ for r in rows],
           "all_pass": ok}
    _save_json(args, "theorem_2_1", doc)
    if args.json:
        print_json(doc)
        return 0 if ok else 1
    echo(f"Theorem 2.1 (d = 1), empirical: x_i(0) i.i.d. N(0, 1), V and QK uniform in [1/2, 2] per sample; "
         f"{args.method} in z, Δt = {dt:g}, T = {rows[0].horizon:g}; a row counts as e_1 / e_n within {args.tol:g}; "
         f"rank = singular values > {args.tol:g}·σ₁; seed {args.seed} + n")
    head = f"{'n':>4} {'samples':>8} {'pass':>6} {'max exceptional rows':>21} {'rank 1':>7} {'rank 2':>7} " \
           f"{'rank 3':>7} {'rank > 3':>8} {'max |ΔP| over [T−1, T]':>24}"
    print(head)
    for r in rows:
        big = sum(v for k, v in r.ranks.items() if k > 3)
        print(f"{r.n:>4} {r.samples:>8} {r.passed:>6} {r.exceptional_max:>21} {r.ranks.get(1, 0):>7} "
              f"{r.ranks.get(2, 0):>7} {r.ranks.get(3, 0):>7} {big:>8} {r.max_last_change:>24.3g}")
    print("result: every sample has all rows but at most one equal to e_1 or e_n and rank ≤ 3" if ok else
          "result: some samples do not (see --json for the first ones); raise --horizon or lower --dt")
    return 0 if ok else 1


def _ex2(args) -> int:
    from ..math import dynamics as D

    if not args.eps > 0:
        raise QKInputError("--eps must be positive")
    dt, T = args.dt or 0.01, args.horizon or 40.0
    _check_work(2, 2, dt, T)
    png = _outputs(args, "example_d2")
    r = D.example_d2(args.eps, dt, T, args.method)
    if png is not None:
        I = np.eye(2)
        tr = D.simulate(np.array([[1.0, args.eps], [1.0, -args.eps]]), I, I, I, dt, T, args.method, "z")
        D.plot(tr, png, f"x1 = (1, {args.eps:g}), x2 = (1, −{args.eps:g}), Q = K = V = I")
        r["png"] = str(png)
    r["evidence"] = "empirical (floating-point simulation)"
    _save_json(args, "example_d2", r)
    if args.json:
        print_json(r)
        return 0
    print(f"d = 2 example, Q = K = V = I_2, x_1(0) = (1, {args.eps:g}), x_2(0) = (1, −{args.eps:g}); "
          f"{args.method} in z, Δt = {dt:g}, T = {r['horizon']:g} [empirical]")
    print("  P(T) = " + np.array2string(np.array(r["P_final"]), precision=6) + f"  (rank {r['rank_P_final']})")
    print(f"  |z_1(T) − z_2(T)| = {r['distance_final']:.3g}: clusters at tolerance 1e-2: {r['clusters_at_tol_1e-2']}")
    print("  the limit of P has rank 2 while the tokens form one cluster: the rank is not the number of clusters")
    if png is not None:
        print(f"  picture: {png}")
    return 0
