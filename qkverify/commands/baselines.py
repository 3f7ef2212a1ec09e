"""`qkverify baselines`: Appendix A's random-matrix baselines.

Exact rows (finite laws, every value pattern accounted for): E‖L‖², E‖S‖², E‖T‖² against
Corollary 1 / Corollary 2's formulas, and the expectation of the ratio ‖S‖²/‖L‖²
(conditional on L ≠ 0, and with Lean's x/0 = 0) against (N+1)/(2N).  Monte Carlo rows
(Gaussian entries, where the expectation of a ratio has no closed form): each is a law
input evaluated like ``qkverify check`` -- Corollary 1's Gaussian clauses or Proposition 5 --
whose certificate is written under --out (``qkverify verify`` re-draws the sample); the
Hoeffding interval at confidence 1 − δ makes the row *consistent* or *inconsistent at level
δ* (evidence empirical).  The sample is a deterministic function of the row's input (its
seed is derived from it), the same on every machine.  Exit 0 when every exact row matches
where the theory says it must (moments for all mean-zero laws; the expectation of the ratio
for symmetric laws) and every Monte Carlo row is consistent; 1 otherwise.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from flint import fmpq

from .. import certificates
from ..exact.rational import fmpq_str
from ..math import baselines as B
from ..math import montecarlo as MC
from ._util import CAPS, echo, print_json, table

NAME = "baselines"
HELP = "Appendix A random baselines: exact for finite laws, Monte Carlo (empirical) for Gaussians"


def add_arguments(p) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--no-mc", action="store_true", help="skip the Monte Carlo rows")
    p.add_argument("--samples", type=int, default=B.MC_SAMPLES,
                   help=f"Monte Carlo samples per row, 1 to {CAPS['samples']} (default {B.MC_SAMPLES}: about 8 s of "
                        "CPU for the whole table; the sample is a deterministic function of the row's input)")
    p.add_argument("--delta", default="1/1000", help="Hoeffding failure probability per row: 1/k with k from 20 to "
                                                     "10^12, i.e. δ ∈ [1e-12, 1/20] (default 1/1000)")
    p.add_argument("--out", default=str(Path("qkverify-out") / "baselines"),
                   help="folder for the Monte Carlo rows' certificates (default ./qkverify-out/baselines)")
    p.add_argument("--no-cert", action="store_true", help="do not write certificates")
    p.add_argument("--force", action="store_true", help="replace different existing certificates")


def mc_rows(samples: int, delta: fmpq, out: Path | None, force: bool = False) -> list[dict]:
    """The Monte Carlo rows: standard Gaussian entries, iid sizes MC_IID_SIZES (Corollary 1's
    Gaussian clauses) and qk sizes MC_QK_SIZES (Proposition 5), each evaluated on its law input;
    certificates written under ``out`` (None: not written)."""
    from ..claims.evaluate import evaluate
    from ..io.law_inputs import LawInput

    g = B.GaussianLaw(fmpq(1))
    todo = [("iid", None, N) for N in B.MC_IID_SIZES] + [("qk", n, N) for n, N in B.MC_QK_SIZES]
    rows = []
    for model, n, N in todo:
        if model == "iid":
            inp = LawInput("iid", N, law=g, samples=samples, delta=delta)
            st, check, label = "integral_frobSq_iid", "integral_frobSq_symPart_div_frobSq_gaussian", "Corollary 1 (Gaussian part)"
        else:
            inp = LawInput("qk", N, n=n, law_K=g, law_Q=g, samples=samples, delta=delta)
            st, check, label = "expected_symmetric_energy_low_rank_qk", "expected_symmetric_energy_low_rank_qk", "Proposition 5"
        run = evaluate(st, inp)
        rec = next(r for r in run.records if r.meta.check == check)
        w = run.subject.witnesses[("monte_carlo", "energy")]
        lo_S = fmpq(int(w["sum_S"]), samples) / (1 << MC.ACC_BITS)
        row = {"statement": label, "model": model, "law": "gaussian", "n": n, "N": N, "evidence": "empirical",
               "target_S": fmpq_str(fmpq(N + 1, 2 * N)), "target_T": fmpq_str(fmpq(N - 1, 2 * N)),
               "mc": {"sampler": MC.SAMPLER, "samples": samples, "confidence": fmpq_str(1 - delta), "seed": inp.seed,
                      "halfwidth": w["halfwidth"], "mean_S": float(lo_S), "zero_samples": w["zero_samples"],
                      "interval_S": w["interval_S"], "interval_T": w["interval_T"],
                      "interval_S_float": [float(Fraction(x)) for x in w["interval_S"]]},
               "conclusion": rec.conclusion, "consistent": run.verdict == "consistent"}
        if out is not None:
            path = out / f"{st}_{model}_{'' if n is None else f'n{n}_'}N{N}.json"
            row["certificate"] = str(path)
            row["written"] = certificates.write(run.certificate({"name": f"baselines {model} n={n} N={N}"}), path,
                                                force=force)
        rows.append(row)
    return rows


def _expected_ok(r: dict) -> bool:
    if r["evidence"] == "empirical":
        return r["consistent"]
    ok = r["moments_match"] and r["ratio_of_expectations_match"]
    if r["symmetric_law"]:
        ok = ok and r["expectation_of_ratio_match_conditional"]
    if "bruteforce_agrees" in r:
        ok = ok and r["bruteforce_agrees"]
    return ok


def _yn(x) -> str:
    return "yes" if x else "NO"


def run(args) -> int:
    from ._util import check_range

    check_range("--samples", args.samples, 1, CAPS["samples"])
    samples = MC.check_samples(args.samples, "--samples")
    delta = MC.check_delta(args.delta, "--delta")
    rows = B.baseline_rows()
    if not args.no_mc:
        rows += mc_rows(samples, delta, None if args.no_cert else Path(args.out), args.force)
    ok = all(_expected_ok(r) for r in rows)
    if args.json:
        print_json({"rows": rows, "all_as_expected": ok})
        return 0 if ok else 1
    ex = [r for r in rows if r["evidence"] == "exact"]
    body = []
    for r in ex:
        v, f = r["values"], r["formulas"]
        moments = all(v[k] == f[k] for k in ("E_L2", "E_S2", "E_T2"))
        eq = r["expectation_of_ratio_match_conditional"]
        body.append([r["statement"].split(" /")[0], r["law"], "-" if r["n"] is None else str(r["n"]), str(r["N"]),
                     _yn(moments), v["P_L0"], _fmtq(v["E_ratio_S_cond"]), "yes" if eq else f"no: {f['ratio_S']}"])
    brute = [r.get("bruteforce_agrees") for r in ex]
    echo("Exact rows (finite laws, every value pattern; E[ratio] conditional on L ≠ 0; the values of E‖L‖², "
         "E‖S‖², E‖T‖² and their formulas: --json):")
    print(table(body, ["statement", "law", "d_head", "d_model", "moments", "P(L=0)", "E[‖S‖²/‖L‖² | L≠0]",
                       "= (N+1)/(2N)"]))
    checked = [b for b in brute if b is not None]
    if checked:
        echo(f"moments: E‖L‖², E‖S‖², E‖T‖² equal Corollary 1 / 2's formulas; a brute-force enumeration agrees on "
             f"{sum(1 for b in checked if b)} of {len(checked)} rows")
    mc = [r for r in rows if r["evidence"] == "empirical"]
    if mc:
        print()
        conf = mc[0]["mc"]["confidence"]
        print(f"Monte Carlo (Gaussian entries; evidence empirical; the Hoeffding interval holds with probability ≥ {conf};"
              " seeds derived from each row's input):")
        body = []
        for r in mc:
            m = r["mc"]
            lo, hi = m["interval_S_float"]
            body.append([r["statement"], "-" if r["n"] is None else str(r["n"]), str(r["N"]), str(m["samples"]),
                         f"{m['mean_S']:.5f}", f"[{lo:.5f}, {hi:.5f}]", r["target_S"], r["conclusion"]])
        print(table(body, ["statement", "d_head", "d_model", "samples", "mean ‖S‖²/‖L‖²", "interval", "(N+1)/(2N)",
                           "result"]))
        if not args.no_cert:
            print(f"certificates: {args.out} (qkverify verify {args.out})")
    print()
    echo("Symmetric laws match (N+1)/(2N) exactly; mean-zero laws that are not symmetric (skewed, skewed3) do not: "
         "the expectation of a ratio needs the symmetry the Gaussian hypothesis supplies.")
    return 0 if ok else 1


def _fmtq(s):
    if s is None:
        return "-"
    if len(s) > 24:
        from fractions import Fraction

        return f"≈{float(Fraction(s)):.6f}"
    return s
