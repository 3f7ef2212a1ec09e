"""`qkverify accumulation`: Lemma 6 and Theorem 5 sampled.  For each positive law and ratio ρ:
spectra vX_{<n} and −uX'_{<n} (u = ρ, v = 1) at sizes up to --max-n, δ_n = ‖β_n − ρα_n‖/‖α_n‖
and ‖π(S_n) − limitProfile ρ‖ as certified intervals, a table, a log-log PNG, the fitted
slopes (empirical), and the empirical certificates of ``proportional_lobes`` and
``accumulation`` (the kernel redraws the sample from the seed).
Exit 0 when every fitted slope is negative, 1 otherwise."""

from __future__ import annotations

import json
from pathlib import Path

from flint import fmpq

from .. import certificates
from ..errors import QKInputError
from ..exact.intervals import arb_bounds
from ..exact.rational import parse_rational
from ..io.inputs import LobesInput
from ..math.accumulation import FAMILIES, parse_positive_law
from ._util import print_json, table

NAME = "accumulation"
HELP = "sampled lobes: δ_n (Lemma 6) and the distance of π(S_n) to its limit (Theorem 5), table and PNG"


def add_arguments(p) -> None:
    p.add_argument("--law", action="append", metavar="LAW",
                   help=f"a positive law: {', '.join(FAMILIES)}, or JSON such as "
                        "'{\"family\": \"pareto\", \"shape\": \"5/2\"}' (repeatable; default: all four)")
    p.add_argument("--rho", action="append", metavar="Q", help="ratio ρ = u/v (repeatable; default 1/2, 1, 2)")
    p.add_argument("--max-n", type=int, default=10000, help="largest sample size per side (default 10000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    p.add_argument("--out", default="accumulation", help="directory for the PNG, table and certificates "
                                                          "(default ./accumulation)")
    p.add_argument("--no-cert", action="store_true", help="do not write certificates")
    p.add_argument("--force", action="store_true", help="replace different existing files")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _laws(specs):
    out = []
    for spec in specs or FAMILIES:
        doc = spec
        if isinstance(spec, str) and spec.strip().startswith("{"):
            try:
                doc = json.loads(spec)
            except json.JSONDecodeError as err:
                raise QKInputError(f"--law {spec}: not JSON ({err.msg})") from None
        out.append(parse_positive_law(doc, f"--law {spec}"))
    return out


def run(args) -> int:
    from tqdm import tqdm

    from ..claims.accumulation import sample_points, study_sizes
    from ..claims.evaluate import evaluate

    if not 10 <= args.max_n <= 10**6:
        raise QKInputError("--max-n must be between 10 and 10^6")
    if not 0 <= args.seed < 2**63:
        raise QKInputError("--seed must be in [0, 2^63)")
    laws = _laws(args.law)
    rhos = [parse_rational(r, f"--rho {r}") for r in (args.rho or ["1/2", "1", "2"])]
    if any(r <= 0 for r in rhos):
        raise QKInputError("--rho must be positive")
    sizes = study_sizes(args.max_n)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows, series, certs = [], [], []
    combos = [(law, r) for law in laws for r in rhos]
    for law, r in tqdm(combos, desc="lobes", unit="law×ρ", disable=args.quiet or args.json):
        inp = LobesInput(law, r, fmpq(1), args.seed, tuple(sizes))
        d_pts, d_slope = sample_points(inp, "delta")
        p_pts, p_slope = sample_points(inp, "distance")
        for n, d, p in zip(sizes, d_pts, p_pts):
            rows.append({"law": law.label(), "rho": str(r), "n": n, "delta": list(arb_bounds(d, 12)),
                         "distance": list(arb_bounds(p, 12))})
        series.append({"law": law.label(), "rho": str(r), "delta": [float(x.mid()) for x in d_pts],
                       "distance": [float(x.mid()) for x in p_pts],
                       "slope_delta": list(arb_bounds(d_slope, 4)), "slope_distance": list(arb_bounds(p_slope, 4)),
                       "negative": bool(d_slope < 0) and bool(p_slope < 0)})
        if not args.no_cert:
            for st in ("proportional_lobes", "accumulation"):
                run_ = evaluate(st, inp)
                cert = run_.certificate({"name": f"{law.family} rho={r} seed={args.seed}"})
                path = out / "certificates" / st / f"{law.family}_rho{str(r).replace('/', '_')}_seed{args.seed}.json"
                certs.append({"statement": st, "verdict": run_.verdict, "evidence": run_.evidence, "path": str(path),
                              "written": certificates.write(cert, path, force=args.force)})
    # cross-check on explicit matrices (small sizes): uniform samples are rational, so S_n itself can be
    # built (Q·diag(vX, −uX')·Qᵀ, a rational Cayley Q) and its profile taken by Definition 6
    from ..math.accumulation import matrix_cross_check

    checks = [{"law": law.label(), "rho": str(r), "n": sizes[0],
               "ok": matrix_cross_check(law, r, fmpq(1), args.seed, sizes[0])}
              for law in laws if law.family == "uniform" for r in rhos]
    png = out / "accumulation.png"
    _plot(series, sizes, png)
    (out / "table.json").write_text(json.dumps({"sizes": sizes, "seed": args.seed, "rows": rows,
                                                "slopes": [{k: v for k, v in s.items() if k not in ("delta", "distance")}
                                                           for s in series]}, indent=1) + "\n")
    if args.json:
        print_json({"sizes": sizes, "seed": args.seed, "rows": rows, "png": str(png), "certificates": certs,
                    "matrix_cross_checks": checks,
                    "slopes": [{k: v for k, v in s.items() if k not in ("delta", "distance")} for s in series]})
    else:
        print(table([[x["law"], x["rho"], x["n"], f"[{x['delta'][0]}, {x['delta'][1]}]",
                      f"[{x['distance'][0]}, {x['distance'][1]}]"] for x in rows],
                    ["law", "ρ", "n", "δ_n = ‖β_n − ρα_n‖/‖α_n‖ (certified)", "‖π(S_n) − limitProfile ρ‖ (certified)"]))
        print()
        print("fitted slopes of log(value) against log n (empirical: one sample path, seed "
              f"{args.seed}, sizes {sizes[0]}..{sizes[-1]}):")
        for s in series:
            print(f"  {s['law']:28s} ρ = {s['rho']:4s}  δ_n: {s['slope_delta'][0]} .. {s['slope_delta'][1]}   "
                  f"distance: {s['slope_distance'][0]} .. {s['slope_distance'][1]}")
        for c in checks:
            print(f"cross-check, explicit {2 * c['n']}×{2 * c['n']} matrix ({c['law']}, ρ = {c['rho']}): profile by "
                  f"Definition 6 {'inside' if c['ok'] else 'OUTSIDE'} the lobe formula's enclosure")
        print(f"plot: {png}; table: {out / 'table.json'}")
        for c in certs:
            print(f"certificate {c['path']} ({c['written']}): {c['statement']} {c['verdict']} [{c['evidence']}]")
    return 0 if all(s["negative"] for s in series) and all(c["ok"] for c in checks) else 1


def _plot(series: list[dict], sizes: list[int], path: Path) -> None:
    """Two log-log panels, one line per law and ρ (the interval midpoints; the intervals are far
    narrower than a pixel)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    for ax, key, title in ((axes[0], "delta", "Lemma 6: δ_n = ‖β_n − ρα_n‖ / ‖α_n‖"),
                           (axes[1], "distance", "Theorem 5: ‖π(S_n) − limitProfile(ρ)‖")):
        laws = list(dict.fromkeys(s["law"] for s in series))
        rhos = list(dict.fromkeys(s["rho"] for s in series))
        for s in series:   # colour by law, line style by ρ
            ax.loglog(sizes, s[key], marker="o", ms=3, color=f"C{laws.index(s['law']) % 10}",
                      linestyle=("-", "--", ":", "-.")[rhos.index(s["rho"]) % 4],
                      label=f"{s['law']}, ρ={s['rho']} (slope {s['slope_' + key][0][:6]})")
        ax.set_xlabel("n (eigenvalues per side)")
        ax.set_ylabel(key if key == "distance" else "δ_n")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6)
    fig.suptitle("Sampled lobes (empirical trend; each point a certified interval)", fontsize=11)
    fig.tight_layout()
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=120, metadata={"Software": None})
    plt.close(fig)
    tmp.replace(path)
