"""`qkverify search CLAIM`: Hypothesis-driven counterexample search, per Lean declaration.

CLAIM is a statement id or blueprint label (every declaration of it with a
registered check), one declaration (its full Lean name, or its check id), or
a user conjecture from ``--module``.  An input is tried when all hypotheses
of a declaration hold on it (with ``--drop B``: B false, the others true);
a counterexample is an input on which that declaration's conclusion fails.

Exit status: 1 when a counterexample is found (its format-2 certificate --
re-checked by the kernel -- and its input file are written), 0 when none is
found (the message says how many inputs were tried and that this proves
nothing), 3 when nothing could be checked (no eligible input, no strategy
for the input kind, or every evaluation crashed), 2 on bad input.
"""

from __future__ import annotations

from pathlib import Path

from ..audit.suite import cases2
from ..io.outputs import probe_output_dir
from ..search import load_module, resolve, search, write_counterexample
from ..search.driver import input_json
from ..search.strategies import FAMILIES
from ..io.outputs import default_out
from ._util import CAPS, check_range, echo, print_json

NAME = "search"
HELP = "search for a (shrunk) counterexample to a Lean declaration, a statement or a user conjecture"


def add_arguments(p) -> None:
    p.add_argument("claim", help="statement id, blueprint label, Lean declaration, or a conjecture from --module")
    p.add_argument("--budget", type=int, default=200,
                   help=f"inputs satisfying the hypotheses to try, 1..{CAPS['budget']} (default 200)")
    p.add_argument("--seed", type=int, default=0, help="RNG seed; the same seed gives the same result (default 0)")
    p.add_argument("--max-dim", type=int, default=4, help=f"matrix sizes 1..D, D ≤ {CAPS['max_dim']} (default 4)")
    p.add_argument("--family", choices=FAMILIES, help="restrict matrices to one family (default: a mixture)")
    p.add_argument("--module", help="Python file declaring conjectures with qkverify.search.conjecture")
    p.add_argument("--drop", metavar="BINDER",
                   help="search inputs on which this hypothesis is false and the others hold (as the probes do)")
    p.add_argument("--out", default=str(default_out("search")),
                   help="directory for counterexample certificates (default ./qkverify-out/search)")
    p.add_argument("--json", action="store_true")


def run(args) -> int:
    from ..kernel import verify_file

    check_range("--budget", args.budget, 1, CAPS["budget"])
    check_range("--max-dim", args.max_dim, 1, CAPS["max_dim"])
    check_range("--seed", args.seed, 0, 2**63 - 1)
    if args.module:
        load_module(args.module)
    sel = resolve(args.claim)
    probe_output_dir(args.out)  # an unwritable --out is exit 2 before the search, not after
    o = search(sel, budget=args.budget, seed=args.seed, max_dim=args.max_dim, family=args.family, drop=args.drop,
               seeds=tuple(inp for _, inp in cases2()))
    cert = ipath = None
    kernel = None
    if o.found:
        cert, ipath = write_counterexample(sel, o, Path(args.out) / sel.id, "search")
        k = verify_file(cert)
        kernel = k.status + (f" [{k.check}] {k.reason}" if k.status not in ("valid", "not checkable") else "")
    if args.json:
        print_json({
            "claim": sel.id, "statement": sel.statement, "label": sel.label, "declarations": list(o.targets),
            "found": o.found, "drop": args.drop, "seed": args.seed, "budget": args.budget, "max_dim": args.max_dim,
            "family": args.family, "eligible_tried": o.first_found_after if o.found else o.eligible,
            "checked": o.checked, "generated": o.generated,
            "counterexample": input_json(o.input) if o.found else None,
            "failing": o.failing, "verdict": o.evaluation.verdict if o.found else None,
            "evidence": o.evidence, "certificate": str(cert) if cert else None,
            "input_file": str(ipath) if ipath else None, "kernel": kernel,
            "errors": [list(e) for e in o.errors], "message": o.summary(),
        })
    else:
        echo(o.summary())
        if o.found:
            echo(f"counterexample: {input_json(o.input)}")
            for c, hyps, dropped, concl, ev, why in o.evaluation.records:
                if c in o.failing:
                    echo(f"  {c}: {concl} [{ev}]" + (f" — {why}" if why else "")
                         + (f" (dropped: {', '.join(dropped)})" if dropped else ""))
            echo(f"certificate: {cert} (kernel: {kernel})")
            if ipath:
                echo(f"input file: {ipath}")
        if o.errors:
            echo(f"warning: the evaluation raised on {len(o.errors)} inputs (skipped); first: {o.errors[0][1]}")
    if o.found:
        return 1
    return 3 if o.checked == 0 else 0  # undecided when no input was actually checked
