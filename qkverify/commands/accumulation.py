"""`qkverify accumulation`: Lemma 6 and Theorem 5 sampled.  For each positive law and ratio ρ:
spectra vX_{<n} and −uX'_{<n} (u = ρ, v = 1) at sizes up to --max-n on --paths independent
sample paths, D_n = δ_n = ‖β_n − ρα_n‖/‖α_n‖ (Lemma 6) and D_n = ‖π(S_n) − limitProfile ρ‖
(Theorem 5) as certified balls, and a sign test of the trend "P(D_{n_max} < D_{n_min}) ≥ 1/2"
at level --delta: consistent / inconsistent at level δ (empirical evidence -- an almost-sure limit
is never proved or refuted by a finite sample).  The medians per size in a table and a log-log
PNG, and the certificates of ``proportional_lobes`` and ``accumulation`` (the kernel redraws every
path from the seed, which is derived from the certificate's input: there is no --seed).
Exit 0 unless the explicit-matrix cross-check fails (1): an inconsistent trend is reported, as
evidence, not as a failure."""

from __future__ import annotations

import json
from pathlib import Path

from flint import fmpq

from .. import certificates
from ..errors import QKInputError
from ..exact.rational import fmpq_str, parse_rational
from ..io.law_inputs import LobesInput
from ..io.outputs import atomic_savefig, atomic_write_csv, atomic_write_json, default_out, probe_output_dir
from ..math import accumulation as Acc
from ..math import montecarlo as MC
from ..math.accumulation import FAMILIES, parse_positive_law
from ._util import CAPS, echo, print_json, progress, table

#: cap on ρ and 1/ρ (a sample's eigenvalues are scaled by ρ; beyond this the enclosures lose their digits)
RHO_CAP = 10**6

NAME = "accumulation"
HELP = "sampled lobes: sign test of the trend of δ_n (Lemma 6) and of the distance of π(S_n) to its limit (Theorem 5)"


def add_arguments(p) -> None:
    p.add_argument("--law", action="append", metavar="LAW",
                   help=f"a positive law: {', '.join(FAMILIES)}, or JSON such as "
                        "'{\"family\": \"pareto\", \"shape\": \"5/2\"}' (repeatable; default: all four; a gamma shape "
                        "is an integer from 1 to 64)")
    p.add_argument("--rho", action="append", metavar="Q",
                   help=f"ratio ρ = u/v, a rational in [1/{RHO_CAP}, {RHO_CAP}] (repeatable; default 1/2, 1, 2)")
    p.add_argument("--max-n", type=int, default=1000,
                   help=f"largest sample size per side, 10..{Acc.MAX_SIZE} (default 1000; paths × max-n × uniforms "
                        f"per pair ≤ {Acc.MAX_UNIFORMS})")
    p.add_argument("--paths", type=int, default=32,
                   help=f"independent sample paths, {Acc.PATHS_MIN}..{Acc.PATHS_MAX} (default 32)")
    p.add_argument("--delta", default="1/1000", help="level δ of the sign test: 1/k with k from 20 to 10^12, i.e. "
                                                     "δ ∈ [1e-12, 1/20] (default 1/1000)")
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
    from ..claims.accumulation import study_sizes
    from ..claims.evaluate import evaluate

    if not 10 <= args.max_n <= min(CAPS["max_n"], Acc.MAX_SIZE):
        raise QKInputError(f"--max-n must be between 10 and {min(CAPS['max_n'], Acc.MAX_SIZE)}")
    if not Acc.PATHS_MIN <= args.paths <= Acc.PATHS_MAX:
        raise QKInputError(f"--paths must be between {Acc.PATHS_MIN} and {Acc.PATHS_MAX}")
    delta = MC.check_delta(args.delta, "--delta")
    laws = _laws(args.law)
    rhos = [parse_rational(r, f"--rho {r}") for r in (args.rho or ["1/2", "1", "2"])]
    for r, text in zip(rhos, args.rho or ["1/2", "1", "2"]):
        if not fmpq(1, RHO_CAP) <= r <= RHO_CAP:
            raise QKInputError(f"--rho {text}: must be a positive rational in [1/{RHO_CAP}, {RHO_CAP}]")
    sizes = study_sizes(args.max_n)
    for law in laws:   # the study's cap, before any work
        Acc.check_study_cost(args.paths, sizes[-1], 2 * law.uniforms_per_sample)
    out = probe_output_dir(Path(args.out))
    rows, series, certs = [], [], []
    combos = [(law, r) for law in laws for r in rhos]
    for law, r in progress(combos, desc="lobes", unit="law×ρ", quiet=args.quiet or args.json):
        inp = LobesInput(law, r, fmpq(1), tuple(sizes), args.paths, delta)
        entry = {"law": law.label(), "rho": fmpq_str(r), "seed": inp.seed}
        for st, what in (("proportional_lobes", "delta"), ("accumulation", "distance")):
            try:
                run_ = evaluate(st, inp)
            except QKInputError as err:   # a hypothesis fails (e.g. hM for a Pareto law of shape ≤ 2)
                run_, why = None, str(err)
            # the test the declaration ran (cached on its subject), or the same test without a certificate
            res = (run_.subject.memo(("trend", what), lambda: Acc.trend_test(inp, what, inp.seed)) if run_
                   else Acc.trend_test(inp, what, inp.seed))
            verdict = "consistent" if res.consistent else "inconsistent"
            entry[what] = {"medians": res.medians, "decreasing": res.decreasing, "paths": res.paths,
                           "reject_at_most": res.threshold,
                           "conclusion": verdict if run_ else f"{verdict} (no certificate: {why})"}
            for n, m in zip(sizes, res.medians):
                rows.append({"law": law.label(), "rho": fmpq_str(r), "n": n, "quantity": what, "median": m})
            if run_ is not None and not args.no_cert:
                cert = run_.certificate({"name": f"{law.family} rho={fmpq_str(r)}"})
                path = out / "certificates" / st / f"{law.family}_rho{fmpq_str(r).replace('/', '_')}.json"
                certs.append({"statement": st, "verdict": run_.verdict, "evidence": run_.evidence, "path": str(path),
                              "written": certificates.write(cert, path, force=args.force)})
        series.append(entry)
    # cross-check on explicit matrices (small sizes): uniform samples are rational, so S_n itself can be
    # built (Q·diag(vX, −uX')·Qᵀ, a rational Cayley Q) and its profile taken by Definition 6
    from ..math.accumulation import matrix_cross_check

    checks = [{"law": law.label(), "rho": fmpq_str(r), "n": sizes[0],
               "ok": matrix_cross_check(law, r, fmpq(1), MC.derive_seed({"cross_check": law.to_json()}), sizes[0])}
              for law in laws if law.family == "uniform" for r in rhos]
    png = out / "accumulation.png"
    _plot(series, sizes, png)
    tests = [{k: (v if not isinstance(v, dict) else {a: b for a, b in v.items() if a != "medians"})
              for k, v in s.items()} for s in series]
    atomic_write_json(out / "table.json", {"sizes": sizes, "paths": args.paths, "delta": fmpq_str(delta),
                                           "rows": rows, "tests": tests})
    atomic_write_csv(out / "table.csv", ["law", "rho", "n", "quantity", "median"],
                     [[x["law"], x["rho"], x["n"], x["quantity"], x["median"]] for x in rows])
    bad_checks = [c for c in checks if not c["ok"]]
    code = 1 if bad_checks else 0
    why = [f"{c['law']}, ρ = {c['rho']}: the explicit matrix's profile is outside the lobe formula's enclosure"
           for c in bad_checks]
    if args.json:
        print_json({"sizes": sizes, "paths": args.paths, "delta": fmpq_str(delta), "rows": rows, "tests": tests,
                    "png": str(png), "certificates": certs, "matrix_cross_checks": checks, "exit": code, "why": why})
        return code
    echo(f"sampled lobes: {len(laws)} law(s) × {len(rhos)} ρ, sizes n = {sizes[0]} … {sizes[-1]} per side, "
         f"{args.paths} independent paths each (seeds derived from each input)")
    echo(f"sign test of the trend P(D_{sizes[-1]} < D_{sizes[0]}) ≥ 1/2 at level δ = {fmpq_str(delta)} "
         "(empirical: a finite sample neither proves nor refutes an almost-sure limit):")
    print(table([[s["law"], s["rho"],
                  *(f"{s[w]['medians'][0]:.3g} → {s[w]['medians'][-1]:.3g}" for w in ("delta", "distance")),
                  *(f"{s[w]['decreasing']}/{s[w]['paths']} {s[w]['conclusion']}" for w in ("delta", "distance"))]
                 for s in series],
                ["law", "ρ", "median δ_n", "median distance", "δ_n fell (Lemma 6)",
                 "distance fell (Thm 5)"]))
    if checks:
        good = sum(1 for c in checks if c["ok"])
        echo(f"cross-check on explicit {2 * checks[0]['n']}×{2 * checks[0]['n']} matrices ({checks[0]['law']}, "
             f"ρ = {', '.join(c['rho'] for c in checks)}): the profile by Definition 6 lies inside the lobe "
             f"formula's enclosure for {good} of {len(checks)}")
    if certs:
        tally: dict = {}
        for c in certs:
            tally.setdefault(c["statement"], {}).setdefault(f"{c['verdict']} [{c['evidence']}]", 0)
            tally[c["statement"]][f"{c['verdict']} [{c['evidence']}]"] += 1
        echo(f"{len(certs)} certificates in {out / 'certificates'}/: "
             + "; ".join(f"{st}: " + ", ".join(f"{v} {k}" for k, v in t.items()) for st, t in tally.items()))
    echo(f"picture: {png}; every size: {out / 'table.csv'}, {out / 'table.json'}")
    if code:
        echo("exit 1 -- the cross-check failed:", *(f"  {w}" for w in why))
    return code


def _plot(series: list[dict], sizes: list[int], path: Path) -> None:
    """Two log-log panels of the medians over the paths, one line per law and ρ: colour = law,
    line style = ρ, explained by two legends under the panels (never over the data)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    laws = list(dict.fromkeys(s["law"] for s in series))
    rhos = list(dict.fromkeys(s["rho"] for s in series))
    styles = ("-", "--", ":", "-.")
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.4))
    for ax, key, title, ylabel in (
            (axes[0], "delta", "Lemma 6: median δ_n = ‖β_n − ρα_n‖ / ‖α_n‖", "δ_n"),
            (axes[1], "distance", "Theorem 5: median ‖π(S_n) − limitProfile(ρ)‖", "‖π(S_n) − limitProfile(ρ)‖")):
        for s in series:   # colour by law, line style by ρ
            ax.loglog(sizes, [max(y, 1e-300) for y in s[key]["medians"]], marker="o", ms=3, lw=1.2,
                      color=f"C{laws.index(s['law']) % 10}", linestyle=styles[rhos.index(s["rho"]) % 4])
        ax.set_xlabel("n (eigenvalues per side)")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    law_handles = [Line2D([], [], color=f"C{i % 10}", marker="o", ms=3, lw=1.5, label=l) for i, l in enumerate(laws)]
    rho_handles = [Line2D([], [], color="0.2", lw=1.5, linestyle=styles[i % 4], label=f"ρ = {r}")
                   for i, r in enumerate(rhos)]
    fig.suptitle("Sampled lobes (empirical: medians over independent paths; each value a certified ball)", fontsize=11)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.legend(handles=law_handles, loc="lower left", bbox_to_anchor=(0.06, 0.0), ncol=2, fontsize=8,
               title="law (colour)", title_fontsize=8, frameon=False)
    fig.legend(handles=rho_handles, loc="lower right", bbox_to_anchor=(0.97, 0.0), ncol=len(rho_handles),
               fontsize=8, title="ratio ρ (line style)", title_fontsize=8, frameon=False)
    atomic_savefig(fig, path, dpi=120)
    plt.close(fig)
