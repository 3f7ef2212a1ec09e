"""`qkverify probes [CLAIM]`: for each Lean declaration and each of its
hypotheses, drop it and search for an input on which the others hold, it
fails, and the conclusion fails (:mod:`qkverify.search.probes`).

CLAIM is a statement id or label, one declaration, or a user conjecture from
``--module``; without it, every statement with a registered check (and the
conjectures of ``--module``).  Writes ``probes.md`` and ``probes.json`` (or
``probes_<claim>.*``) plus a format-2 certificate and an input file per
hypothesis shown needed into ``--out`` (default ``./qkverify-out/probes``).

Exit 0; 1 if a declaration fails with all its hypotheses (a user conjecture
that is false as stated) or a written counterexample did not survive its
re-check; 2 on bad input.
"""

from __future__ import annotations

from ..audit.suite import cases2
from ..io.outputs import probe_output_dir
from ..search import USER_CONJECTURES, all_selections, load_module, resolve
from ..search.probes import FAILS_WITH_ALL, run_probes, short, write_tables
from ..search.user import UserSelection
from ..io.outputs import default_out
from ._util import CAPS, check_range, echo, print_json, progress, table

NAME = "probes"
HELP = "which hypotheses are needed: drop each hypothesis of each declaration in turn and search"


def add_arguments(p) -> None:
    p.add_argument("claim", nargs="?", help="a statement, declaration or conjecture (default: every statement)")
    p.add_argument("--budget", type=int, default=200,
                   help=f"eligible inputs per hypothesis, 1..{CAPS['budget']} (default 200)")
    p.add_argument("--seed", type=int, default=0, help="RNG seed (default 0)")
    p.add_argument("--max-dim", type=int, default=4, help=f"matrix sizes 1..D, D ≤ {CAPS['max_dim']} (default 4)")
    p.add_argument("--module", help="Python file declaring conjectures (probed with the statements, or alone when named)")
    p.add_argument("--out", default=str(default_out("probes")),
                   help="folder of the tables and certificates (default ./qkverify-out/probes)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true")


def run(args) -> int:
    check_range("--budget", args.budget, 1, CAPS["budget"])
    check_range("--max-dim", args.max_dim, 1, CAPS["max_dim"])
    check_range("--seed", args.seed, 0, 2**63 - 1)
    if args.module:
        load_module(args.module)
    if args.claim:
        sels = [resolve(args.claim)]
    else:
        sels = all_selections() + ([UserSelection(c) for c in USER_CONJECTURES.values()] if args.module else [])
    probe_output_dir(args.out)  # an unwritable --out is exit 2 before the probes, not after
    rows = []
    for sel in progress(sels, desc="probes", unit="statement", quiet=args.quiet or args.json or len(sels) == 1):
        rows += run_probes([sel], budget=args.budget, seed=args.seed, max_dim=args.max_dim, out_dir=args.out,
                           seeds=tuple(inp for _, inp in cases2()))
    params = {"budget": args.budget, "seed": args.seed, "max_dim": args.max_dim}
    stem = "probes" if not args.claim else f"probes_{sels[0].id}"
    md, js = write_tables(rows, args.out, params, stem)
    # an empirical "fails" (a sampled trend of a limit theorem) is evidence, not a counterexample
    false = [r for r in rows if r.status.startswith(FAILS_WITH_ALL) and "empirical" not in r.status]
    against = [r for r in rows if r.status.startswith(FAILS_WITH_ALL) and "empirical" in r.status]
    if args.json:
        print_json({"params": params, "probes": [r.to_json() for r in rows], "markdown": str(md), "json": str(js)})
    else:
        body = [[r.check, r.binder, r.status, r.evidence or "-", str(r.eligible_tried)] for r in rows]
        print(table(body, ["declaration", "binder", "status", "evidence", "tried"], wrap=(2,), right=(4,)))
        for r in false:
            echo(f"{r.check} is FALSE as stated: it fails on {short(r.counterexample)} although every hypothesis "
                 "holds" + (f"; certificate {r.certificate}" if r.certificate else ""))
        for r in against:
            echo(f"{r.check}: the sample on {short(r.counterexample)} does not show the stated trend although every "
                 "hypothesis holds (empirical evidence, not a counterexample)"
                 + (f"; certificate {r.certificate}" if r.certificate else ""))
        echo(f"the minimal counterexamples, their certificates and re-checks: {md}, {js}")
    bad = [r for r in rows if r.recheck not in (None, "ok") and not r.recheck.startswith("n/a")]
    for r in bad:
        echo(f"re-check of {r.certificate} failed: {r.recheck}")
    return 1 if bad or false else 0
