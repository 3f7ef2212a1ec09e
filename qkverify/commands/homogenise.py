"""`qkverify homogenise FILE`: Proposition 3 on a single-head QKV transformer input with positions:
the homogenised bilinear forms, scores and dehom, and T̂(lift x) = lift(T(x)).  Exit 0 holds,
1 fails, 3 undecided, 2 bad input."""

from __future__ import annotations

from pathlib import Path

from .. import certificates
from ..errors import QKInputError
from ._util import echo, print_json

NAME = "homogenise"
HELP = "Prop 3: homogenise a single-head QKV transformer (positions) into a bilinear one and compare"


def add_arguments(p) -> None:
    p.add_argument("file", help="a transformer input (JSON) with one causal head and positions; - reads "
                                "standard input")
    p.add_argument("--out", help="folder of the certificate (default ./qkverify-out/homogenise)")
    p.add_argument("--no-cert", action="store_true", help="do not write a certificate")
    p.add_argument("--force", action="store_true", help="replace a different existing certificate")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _ball(text: str) -> str:
    """arb's ``[m +/- r]`` as ``m ± r`` (an exact value stays as it is)."""
    import re

    return re.sub(r"\[([^\[\]+]+?) \+/- ([^\]]+)\]", r"\1 ± \2", text)


def run(args) -> int:
    from ..claims.attention import homogenised_outputs
    from ..claims.evaluate import evaluate
    from ..io.inputs import load_input
    from ..io.outputs import default_out, probe_output_dir

    inp = load_input(args.file)
    if inp.kind2 != "transformer":
        raise QKInputError(f"{args.file}: a transformer input is needed, not {inp.kind2}")
    out_dir = None if args.no_cert else Path(args.out or default_out("homogenise"))
    if out_dir is not None:
        probe_output_dir(out_dir)
    run_ = evaluate("qkv_homogenizes_to_bilinear", inp)
    outs = homogenised_outputs(run_.subject)
    stem = "stdin" if args.file == "-" else Path(args.file).stem
    path = None
    if out_dir is not None:
        path = out_dir / run_.statement.id / f"{stem}.json"
        certificates.write(run_.certificate({"name": stem}), path, force=args.force)
    if args.json:
        print_json({"file": args.file, "verdict": run_.verdict, "evidence": run_.evidence,
                    "declarations": [r.to_json() for r in run_.records],
                    "skipped": [{"check": c, "reason": r} for c, r in run_.skipped], "outputs": outs,
                    "certificate": str(path) if path else None})
    else:
        echo(f"{run_.statement.id} ({run_.statement.label}) on {args.file}: {run_.verdict} [{run_.evidence}]",
             "  " + ", ".join(f"{r.meta.check} {r.conclusion} [{r.result.evidence}]" for r in run_.records))
        for c, why in run_.skipped:
            echo(f"  {c}: not evaluated ({why})")
        print("  token i: T(x)_i by the QKV path, then T̂(lift x)_i by the homogenised one (floats ± radius):")
        for i, (t, th) in enumerate(zip(outs["T"], outs["T_hat"])):
            echo(f"    {i}: {_ball(t)}", f"       {_ball(th)}")
        echo(f"  the C-components of T̂(lift x) and T(x) overlap as enclosures: "
             f"{'yes' if outs['overlap'] else 'NO'}; the extra coordinate of each head output, Σ_j ω̂_j: "
             + ", ".join(_ball(x) for x in outs["head_output_extra_coordinate"]))
        if path:
            echo(f"certificate: {path}")
    return {"holds": 0, "consistent": 0, "inconsistent": 0, "fails": 1, "undecided": 3}[run_.verdict]
