"""`qkverify accumulation`: Lemma 6 and Theorem 5 sampled.  For each positive law and ratio ρ:
spectra vX_{<n} and −uX'_{<n} (u = ρ, v = 1) at sizes up to --max-n on --paths independent
sample paths, D_n = δ_n = ‖β_n − ρα_n‖/‖α_n‖ (Lemma 6) and D_n = ‖π(S_n) − limitProfile ρ‖
(Theorem 5) as certified balls, and a sign test of the trend "P(D_{n_max} < D_{n_min}) ≥ 1/2"
at level --delta: consistent / inconsistent at level δ (empirical evidence -- an almost-sure limit
is never proved or refuted by a finite sample).  A table of the medians, a log-log PNG, and the
certificates of ``proportional_lobes`` and ``accumulation`` (the kernel redraws every path from
the seed, which is derived from the certificate's input).
Exit 0 unless the explicit-matrix cross-check fails (1); an inconsistent trend is reported."""

from __future__ import annotations

import json
from pathlib import Path

from flint import fmpq

from .. import certificates
from ..errors import QKInputError
from ..exact.rational import fmpq_str, parse_rational
from ..io.law_inputs import LobesInput
from ..math import accumulation as Acc
from ..math import montecarlo as MC
from ..math.accumulation import FAMILIES, parse_positive_law
from ._util import print_json, table

NAME = "accumulation"
HELP = "sampled lobes: sign test of the trend of δ_n (Lemma 6) and of the distance of π(S_n) to its limit (Theorem 5)"


def add_arguments(p) -> None:
    p.add_argument("--law", action="append", metavar="LAW",
                   help=f"a positive law: {', '.join(FAMILIES)}, or JSON such as "
                        "'{\"family\": \"pareto\", \"shape\": \"5/2\"}' (repeatable; default: all four; a gamma shape "
                        "is an integer from 1 to 64)")
    p.add_argument("--rho", action="append", metavar="Q", help="ratio ρ = u/v (repeatable; default 1/2, 1, 2)")
    p.add_argument("--max-n", type=int, default=1000, help="largest sample size per side (default 1000; "
                                                           f"paths × max-n ≤ {Acc.MAX_UNIFORMS // 2})")
    p.add_argument("--paths", type=int, default=32, help=f"independent sample paths ({Acc.PATHS_MIN} to "
                                                         f"{Acc.PATHS_MAX}; default 32)")
    p.add_argument("--delta", default="1/1000", help="level δ of the sign test, 1/k with k from 20 to 10^12 "
                                                     "(δ ∈ [1e-12, 1/20]; default 1/1000)")
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

    from ..claims.accumulation import study_sizes
    from ..claims.evaluate import evaluate

    if not 10 <= args.max_n <= Acc.MAX_SIZE:
        raise QKInputError(f"--max-n must be between 10 and {Acc.MAX_SIZE}")
    delta = MC.check_delta(args.delta, "--delta")
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
            verdict = ("consistent" if res.consistent else "inconsistent")
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
    summary = {"sizes": sizes, "paths": args.paths, "delta": fmpq_str(delta), "rows": rows,
               "tests": [{k: (v if not isinstance(v, dict) else {a: b for a, b in v.items() if a != "medians"})
                          for k, v in s.items()} for s in series]}
    (out / "table.json").write_text(json.dumps(summary, indent=1) + "\n")
    if args.json:
        print_json(dict(summary, png=str(png), certificates=certs, matrix_cross_checks=checks))
        return 0 if all(c["ok"] for c in checks) else 1
    print(table([[s["law"], s["rho"], *(f"{s[w]['medians'][0]:.4g} → {s[w]['medians'][-1]:.4g}" for w in ("delta", "distance")),
                  *(f"{s[w]['decreasing']}/{s[w]['paths']} ({s[w]['conclusion']})" for w in ("delta", "distance"))]
                 for s in series],
                ["law", "ρ", f"median δ_n, n = {sizes[0]} → {sizes[-1]}", "median ‖π(S_n) − limit‖",
                 "δ_n decreased (Lemma 6)", "distance decreased (Theorem 5)"]))
    print()
    print(f"sign test of the trend P(D_{{{sizes[-1]}}} < D_{{{sizes[0]}}}) ≥ 1/2 on {args.paths} paths at level δ = "
          f"{fmpq_str(delta)} (empirical; seeds derived from each input): consistent / inconsistent with the trend. "
          "A finite sample neither proves nor refutes an almost-sure limit.")
    for c in checks:
        print(f"cross-check, explicit {2 * c['n']}×{2 * c['n']} matrix ({c['law']}, ρ = {c['rho']}): profile by "
              f"Definition 6 {'inside' if c['ok'] else 'OUTSIDE'} the lobe formula's enclosure")
    print(f"plot: {png}; table: {out / 'table.json'}")
    for c in certs:
        print(f"certificate {c['path']} ({c['written']}): {c['statement']} {c['verdict']} [{c['evidence']}]")
    return 0 if all(c["ok"] for c in checks) else 1


def _plot(series: list[dict], sizes: list[int], path: Path) -> None:
    """Two log-log panels of the medians over the paths, one line per law and ρ."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    for ax, key, title in ((axes[0], "delta", "Lemma 6: median δ_n = ‖β_n − ρα_n‖ / ‖α_n‖"),
                           (axes[1], "distance", "Theorem 5: median ‖π(S_n) − limitProfile(ρ)‖")):
        laws = list(dict.fromkeys(s["law"] for s in series))
        rhos = list(dict.fromkeys(s["rho"] for s in series))
        for s in series:   # colour by law, line style by ρ
            ys = [max(y, 1e-300) for y in s[key]["medians"]]
            ax.loglog(sizes, ys, marker="o", ms=3, color=f"C{laws.index(s['law']) % 10}",
                      linestyle=("-", "--", ":", "-.")[rhos.index(s["rho"]) % 4],
                      label=f"{s['law']}, ρ={s['rho']} ({s[key]['decreasing']}/{s[key]['paths']} decreased)")
        ax.set_xlabel("n (eigenvalues per side)")
        ax.set_ylabel(key if key == "distance" else "δ_n")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6)
    fig.suptitle("Sampled lobes (empirical: medians over independent paths)", fontsize=11)
    fig.tight_layout()
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=120, metadata={"Software": None})
    plt.close(fig)
    tmp.replace(path)
