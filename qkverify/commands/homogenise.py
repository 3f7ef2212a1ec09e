"""`qkverify homogenise FILE`: Proposition 3 on a single-head QKV transformer input with positions:
the homogenised bilinear forms, scores and dehom, and T̂(lift x) = lift(T(x)).  Exit 0 holds,
1 fails, 3 undecided, 2 bad input."""

from __future__ import annotations

from pathlib import Path

from .. import certificates
from ..errors import QKInputError
from ._util import print_json

NAME = "homogenise"
HELP = "Prop 3: homogenise a single-head QKV transformer (positions) into a bilinear one and compare"


def add_arguments(p) -> None:
    p.add_argument("file", help="a transformer input (JSON) with one causal head and positions")
    p.add_argument("--out", help="write the certificate into this directory")
    p.add_argument("--force", action="store_true")
    p.add_argument("--json", action="store_true")


def run(args) -> int:
    from ..claims.attention import homogenised_outputs
    from ..claims.evaluate import evaluate
    from ..io.inputs import load_input

    inp = load_input(args.file)
    if inp.kind2 != "transformer":
        raise QKInputError(f"{args.file}: a transformer input is needed, not {inp.kind2}")
    run_ = evaluate("qkv_homogenizes_to_bilinear", inp)
    outs = homogenised_outputs(run_.subject)
    path = None
    if args.out:
        path = Path(args.out) / run_.statement.id / f"{Path(args.file).stem}.json"
        certificates.write(run_.certificate({"name": Path(args.file).stem}), path, force=args.force)
    if args.json:
        print_json({"file": args.file, "verdict": run_.verdict, "evidence": run_.evidence,
                    "declarations": [r.to_json() for r in run_.records],
                    "skipped": [{"check": c, "reason": r} for c, r in run_.skipped], "outputs": outs,
                    "certificate": str(path) if path else None})
    else:
        for r in run_.records:
            print(f"  {r.meta.check}: {r.conclusion} [{r.result.evidence}]")
        for c, why in run_.skipped:
            print(f"  {c}: not evaluated ({why})")
        for i, (t, th) in enumerate(zip(outs["T"], outs["T_hat"])):
            print(f"  T(x)_{i} = {t};  T̂(lift x)_{i} = {th}")
        print(f"  the C-components of T̂(lift x) and T(x) overlap as enclosures: {outs['overlap']}; "
              f"extra coordinate of each head output Σ_j ω̂_j: {', '.join(outs['head_output_extra_coordinate'])}")
        print(f"{args.file}: {run_.verdict} [{run_.evidence}]" + (f"; certificate {path}" if path else ""))
    return {"holds": 0, "consistent": 0, "inconsistent": 0, "fails": 1, "undecided": 3}[run_.verdict]
