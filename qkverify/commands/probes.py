"""`qkverify probes [CLAIM]`: drop each named hypothesis in turn and search
for a counterexample to the conclusion.

Writes ``probes.md`` and ``probes.json`` (or ``probes_<claim>.*`` for one
claim) plus one certificate and one input file per hypothesis shown needed
into ``--out`` (default ``certificates/probes``).

The statement is first searched with every hypothesis kept: a user
conjecture that fails there is reported as ``fails with all hypotheses``
with its counterexample (certificate and input file written, re-checked),
and its hypotheses are not probed.

Exit 0; 1 if a statement fails with all its hypotheses, or a written
counterexample did not survive its re-check; 2 on bad input.
"""

from __future__ import annotations

from ..claims.registry import all_claims, get
from ..io.outputs import probe_output_dir
from ..search import load_module
from ..search.probes import FAILS_WITH_ALL, USER_SECTION, run_probes, write_tables
from ._util import print_json, table

NAME = "probes"
HELP = "which hypotheses are needed: drop each in turn and search for a counterexample"


def add_arguments(p) -> None:
    p.add_argument("claim", nargs="?", help="one claim (default: every registered claim)")
    p.add_argument("--budget", type=int, default=200, help="eligible inputs per hypothesis (default 200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-dim", type=int, default=4)
    p.add_argument("--module", help="Python file declaring conjectures (probed with the built-in claims, or alone when named)")
    p.add_argument("--out", default="certificates/probes")
    p.add_argument("--json", action="store_true")


def run(args) -> int:
    if args.module:
        load_module(args.module)
    if args.claim:
        claims = [get(args.claim)]
    else:  # every built-in claim, plus the conjectures of --module if given
        claims = [c for c in all_claims() if c.section != "user conjectures" or args.module]
    probe_output_dir(args.out)  # an unwritable --out is exit 2 before the probes, not after
    rows = run_probes(claims, budget=args.budget, seed=args.seed, max_dim=args.max_dim, out_dir=args.out)
    params = {"budget": args.budget, "seed": args.seed, "max_dim": args.max_dim}
    stem = "probes" if not args.claim else f"probes_{claims[0].id}"
    md, js = write_tables(rows, args.out, params, stem)
    false = [r for r in rows if r.status.startswith(FAILS_WITH_ALL)]
    if args.json:
        print_json({"params": params, "probes": [r.to_json() for r in rows], "markdown": str(md), "json": str(js)})
    else:
        body = [[r.claim, r.hypothesis, r.status, r.evidence or "-",
                 _short(r.counterexample), str(r.eligible_tried), r.recheck or "-"] for r in rows]
        print(table(body, ["claim", "hypothesis", "status", "evidence", "minimal counterexample", "tried", "re-check"]))
        skipped = [c.id for c in claims if not c.hypotheses and c.section != USER_SECTION]
        if skipped:
            print(f"no named hypotheses (nothing to probe): {', '.join(skipped)}")
        for r in false:
            print(f"{r.claim} is FALSE as stated: it fails on {_short(r.counterexample)} although every hypothesis "
                  f"holds ({r.reason.split(': ', 1)[-1]})" + (f"; certificate {r.certificate}" if r.certificate else ""))
        print(f"tables: {md}, {js}")
    bad = [r for r in rows if r.recheck not in (None, "ok") and not r.recheck.startswith("n/a")]
    return 1 if bad or false else 0


def _short(ce) -> str:
    import json

    if ce is None:
        return "-"
    s = json.dumps({k: v for k, v in ce.items() if k != "kind"}, ensure_ascii=False, separators=(",", ":"))
    return s if len(s) <= 70 else s[:69] + "…"
