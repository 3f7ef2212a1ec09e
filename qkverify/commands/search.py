"""`qkverify search CLAIM`: Hypothesis-driven counterexample search.

Exit status: 1 when a counterexample is found (its certificate and input file
are written), 0 when none is found (the message says how many inputs were
tried and that this proves nothing), 3 when nothing could be checked (no
eligible input, or the checker raised on every one), 2 on bad input.
"""

from __future__ import annotations

from pathlib import Path

from ..claims.registry import get
from ..io.outputs import probe_output_dir
from ..search import load_module, search, write_counterexample
from ..search.driver import input_json
from ..search.strategies import FAMILIES
from ._util import print_json

NAME = "search"
HELP = "search for a (shrunk) counterexample to a claim or a user conjecture"


def add_arguments(p) -> None:
    p.add_argument("claim", help="Lean id, label, or the name of a conjecture from --module")
    p.add_argument("--budget", type=int, default=200, help="inputs satisfying the hypotheses to try (default 200)")
    p.add_argument("--seed", type=int, default=0, help="RNG seed; the same seed gives the same result (default 0)")
    p.add_argument("--max-dim", type=int, default=4, help="matrix sizes 1..D (default 4)")
    p.add_argument("--family", choices=FAMILIES, help="restrict matrices to one family (default: a mixture)")
    p.add_argument("--module", help="Python file declaring conjectures with qkverify.search.conjecture")
    p.add_argument("--drop", metavar="HYPOTHESIS",
                   help="search inputs violating exactly this hypothesis (as the probes do)")
    p.add_argument("--out", default="certificates/search", help="directory for counterexample certificates")
    p.add_argument("--json", action="store_true")


def run(args) -> int:
    if args.module:
        load_module(args.module)
    claim = get(args.claim)
    probe_output_dir(args.out)  # an unwritable --out is exit 2 before the search, not after
    o = search(claim, budget=args.budget, seed=args.seed, max_dim=args.max_dim,
               family=args.family, drop=args.drop)
    cert = ipath = None
    if o.found:
        cert, ipath = write_counterexample(claim, o, Path(args.out) / claim.id, "search")
    if args.json:
        print_json({
            "claim": claim.id, "label": claim.label, "found": o.found, "drop": args.drop,
            "seed": args.seed, "budget": args.budget, "max_dim": args.max_dim, "family": args.family,
            "eligible_tried": o.first_found_after if o.found else o.eligible, "generated": o.generated,
            "counterexample": input_json(o.input) if o.found else None,
            "verdict": o.result.verdict if o.found else None,
            "evidence": o.result.evidence if o.found else None,
            "reason": o.result.reason if o.found else None,
            "certificate": str(cert) if cert else None, "input_file": str(ipath) if ipath else None,
            "checker_errors": [list(e) for e in o.errors],
            "message": o.summary(),
        })
    else:
        print(o.summary())
        if o.found:
            print(f"counterexample: {input_json(o.input)}")
            print(f"evaluation: {o.result.verdict} [{o.result.evidence}] — {o.result.reason}")
            print(f"certificate: {cert}")
            print(f"input file: {ipath}")
        if o.errors:
            print(f"warning: the checker raised on {len(o.errors)} inputs (skipped); first: {o.errors[0][1]}")
    if o.found:
        return 1
    return 3 if o.checked == 0 else 0  # undecided when no input was actually checked
