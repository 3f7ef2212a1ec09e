"""`qkverify accumulation`: Lemma 6 and Theorem 5 sampled.  For each positive law and ratio ρ:
spectra vX_{<n} and −uX'_{<n} (u = ρ, v = 1) at sizes up to --max-n, δ_n = ‖β_n − ρα_n‖/‖α_n‖
and ‖π(S_n) − limitProfile ρ‖ as certified intervals, a table, a log-log PNG, the fitted
slopes (empirical), and the empirical certificates of ``proportional_lobes`` and
``accumulation`` (the kernel redraws the sample from the seed).
Exit 0 when every fitted slope is negative, 1 otherwise (the output says which law and ρ did not
show the trend: one sample path is empirical evidence, not a counterexample)."""

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
from ..io.outputs import atomic_savefig, atomic_write_csv, atomic_write_json, default_out, probe_output_dir
from ._util import CAPS, echo, print_json, progress, table

#: cap on ρ and 1/ρ (a sample's eigenvalues are scaled by ρ; beyond this the enclosures lose their digits)
RHO_CAP = 10**6

NAME = "accumulation"
HELP = "sampled lobes: δ_n (Lemma 6) and the distance of π(S_n) to its limit (Theorem 5), table and PNG"


def add_arguments(p) -> None:
    p.add_argument("--law", action="append", metavar="LAW",
                   help=f"a positive law: {', '.join(FAMILIES)}, or JSON such as "
                        "'{\"family\": \"pareto\", \"shape\": \"5/2\"}' (repeatable; default: all four)")
    p.add_argument("--rho", action="append", metavar="Q",
                   help=f"ratio ρ = u/v, a rational in [1/{RHO_CAP}, {RHO_CAP}] (repeatable; default 1/2, 1, 2)")
    p.add_argument("--max-n", type=int, default=10000,
                   help=f"largest sample size per side, 10..{CAPS['max_n']} (default 10000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample, 0..2^63−1 (default 0)")
    p.add_argument("--out", default=str(default_out("accumulation")),
                   help="folder of the PNG, tables and certificates (default ./qkverify-out/accumulation)")
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
    from ..claims.accumulation import sample_points, study_sizes
    from ..claims.evaluate import evaluate

    if not 10 <= args.max_n <= CAPS["max_n"]:
        raise QKInputError(f"--max-n must be between 10 and {CAPS['max_n']}")
    if not 0 <= args.seed < 2**63:
        raise QKInputError("--seed must be in [0, 2^63)")
    laws = _laws(args.law)
    rhos = [parse_rational(r, f"--rho {r}") for r in (args.rho or ["1/2", "1", "2"])]
    for r, text in zip(rhos, args.rho or ["1/2", "1", "2"]):
        if not fmpq(1, RHO_CAP) <= r <= RHO_CAP:
            raise QKInputError(f"--rho {text}: must be a positive rational in [1/{RHO_CAP}, {RHO_CAP}]")
    sizes = study_sizes(args.max_n)
    out = probe_output_dir(Path(args.out))
    rows, series, certs = [], [], []
    combos = [(law, r) for law in laws for r in rhos]
    for law, r in progress(combos, desc="lobes", unit="law×ρ", quiet=args.quiet or args.json):
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
    slopes = [{k: v for k, v in s.items() if k not in ("delta", "distance")} for s in series]
    # the full table: JSON (exact interval endpoints as strings) and CSV (numbers as numbers)
    atomic_write_json(out / "table.json", {"sizes": sizes, "seed": args.seed, "rows": rows, "slopes": slopes})
    atomic_write_csv(out / "table.csv", ["law", "rho", "n", "delta_lo", "delta_hi", "distance_lo", "distance_hi"],
                     [[x["law"], x["rho"], x["n"], *x["delta"], *x["distance"]] for x in rows])
    not_neg = [s for s in series if not s["negative"]]
    bad_checks = [c for c in checks if not c["ok"]]
    code = 0 if not not_neg and not bad_checks else 1
    why = []
    for s in not_neg:
        which = [k for k, key in (("δ_n", "slope_delta"), ("distance", "slope_distance"))
                 if not float(s[key][1]) < 0]
        why.append(f"{s['law']}, ρ = {s['rho']}: the fitted slope of {' and '.join(which)} is not negative")
    for c in bad_checks:
        why.append(f"{c['law']}, ρ = {c['rho']}: the explicit matrix's profile is outside the lobe formula's "
                   "enclosure")
    if args.json:
        print_json({"sizes": sizes, "seed": args.seed, "rows": rows, "png": str(png), "certificates": certs,
                    "matrix_cross_checks": checks, "slopes": slopes, "exit": code, "why": why})
        return code
    print(f"sampled lobes: {len(laws)} law(s) × {len(rhos)} ρ, sizes n = {sizes[0]} … {sizes[-1]} per side, "
          f"seed {args.seed}")
    print("fitted slopes of log(value) against log n (empirical: one sample path; each value certified):")
    print(table([[s["law"], s["rho"], f"{s['slope_delta'][0]} … {s['slope_delta'][1]}",
                  f"{s['slope_distance'][0]} … {s['slope_distance'][1]}", "yes" if s["negative"] else "NO"]
                 for s in series],
                ["law", "ρ", "slope of δ_n (Lemma 6)", "slope of distance (Theorem 5)", "both < 0"]))
    if checks:
        good = sum(1 for c in checks if c["ok"])
        echo(f"cross-check on explicit {2 * checks[0]['n']}×{2 * checks[0]['n']} matrices ({checks[0]['law']}, "
             f"ρ = {', '.join(c['rho'] for c in checks)}): the profile by Definition 6 lies inside the lobe "
             f"formula's enclosure for {good} of {len(checks)}")
    if certs:
        tally = {}
        for c in certs:
            tally.setdefault(c["statement"], {}).setdefault(f"{c['verdict']} [{c['evidence']}]", 0)
            tally[c["statement"]][f"{c['verdict']} [{c['evidence']}]"] += 1
        echo(f"{len(certs)} certificates in {out / 'certificates'}/: "
             + "; ".join(f"{st}: " + ", ".join(f"{v} {k}" for k, v in t.items()) for st, t in tally.items()))
    echo(f"picture: {png}; every size and interval: {out / 'table.csv'}, {out / 'table.json'}")
    if code:
        echo("exit 1 -- the sample does not show the trend everywhere (empirical evidence, not a counterexample):",
             *(f"  {w}" for w in why),
             "  (one sample path: try a larger --max-n or another --seed; a heavy tail, e.g. Pareto, converges slowly)")
    return code


def _plot(series: list[dict], sizes: list[int], path: Path) -> None:
    """Two log-log panels, one line per law and ρ (the interval midpoints; the intervals are far
    narrower than a pixel): colour = law, line style = ρ, explained by two legends under the
    panels (never over the data); the fitted slopes are in the terminal table and table.json."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    laws = list(dict.fromkeys(s["law"] for s in series))
    rhos = list(dict.fromkeys(s["rho"] for s in series))
    styles = ("-", "--", ":", "-.")
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.4))
    for ax, key, title, ylabel in (
            (axes[0], "delta", "Lemma 6: δ_n = ‖β_n − ρα_n‖ / ‖α_n‖", "δ_n"),
            (axes[1], "distance", "Theorem 5: ‖π(S_n) − limitProfile(ρ)‖", "‖π(S_n) − limitProfile(ρ)‖")):
        for s in series:   # colour by law, line style by ρ
            ax.loglog(sizes, s[key], marker="o", ms=3, lw=1.2, color=f"C{laws.index(s['law']) % 10}",
                      linestyle=styles[rhos.index(s["rho"]) % 4])
        ax.set_xlabel("n (eigenvalues per side)")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    law_handles = [Line2D([], [], color=f"C{i % 10}", marker="o", ms=3, lw=1.5, label=l) for i, l in enumerate(laws)]
    rho_handles = [Line2D([], [], color="0.2", lw=1.5, linestyle=styles[i % 4], label=f"ρ = {r}")
                   for i, r in enumerate(rhos)]
    fig.suptitle("Sampled lobes (empirical trend: one sample path; each point a certified interval)", fontsize=11)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.legend(handles=law_handles, loc="lower left", bbox_to_anchor=(0.06, 0.0), ncol=2, fontsize=8,
               title="law (colour)", title_fontsize=8, frameon=False)
    fig.legend(handles=rho_handles, loc="lower right", bbox_to_anchor=(0.97, 0.0), ncol=len(rho_handles),
               fontsize=8, title="ratio ρ (line style)", title_fontsize=8, frameon=False)
    atomic_savefig(fig, path, dpi=120)
    plt.close(fig)
