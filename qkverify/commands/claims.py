"""`qkverify claims`: the registered statements."""

from __future__ import annotations

from ..claims.registry import all_claims
from ._util import print_json, table

NAME = "claims"
HELP = "list the registered claims (ids, blueprint labels, hypotheses, Lean declarations)"


def add_arguments(p) -> None:
    p.add_argument("--json", action="store_true")


def run(args) -> int:
    cs = all_claims()
    if args.json:
        print_json([{"id": c.id, "label": c.label, "seed_label": c.seed_label, "section": c.section,
                     "input_kind": c.input_kind, "hypotheses": [h.name for h in c.hypotheses],
                     "lean_decls": list(c.lean_decls), "statement": c.statement} for c in cs])
        return 0
    rows = [[c.id, c.label + (f" (seed: {c.seed_label})" if c.seed_label and c.seed_label != c.label else ""),
             c.input_kind, ",".join(h.name for h in c.hypotheses) or "-", str(len(c.lean_decls))] for c in cs]
    print(table(rows, ["id", "label", "input", "hypotheses", "lean decls"]))
    return 0
