"""`qkverify claims`: the statements, their Lean declarations and which are checked."""

from __future__ import annotations

from ..claims import metadata
from ..claims.registry import declaration_check_fn, registered_check_ids
from ._util import print_json, table

NAME = "claims"
HELP = "list the statements with their Lean declarations (check id, kind, hypotheses, checked or not)"


def add_arguments(p) -> None:
    p.add_argument("--module", help="Python file declaring conjectures: list them too")
    p.add_argument("--json", action="store_true")


def run(args) -> int:
    ids = registered_check_ids()
    users = []
    if args.module:
        from ..search import USER_CONJECTURES, load_module

        load_module(args.module)
        users = list(USER_CONJECTURES.values())
    stmts = []
    for st in metadata.load().values():
        decls = [{"name": d.name, "check": d.check, "kind": d.kind,
                  "hypotheses": [{"binder": h.binder, "text": h.text, "predicate": h.predicate} for h in d.hypotheses],
                  "checked": d.check in ids,
                  "input_kinds": list(declaration_check_fn(d.check).kinds) if d.check in ids else []}
                 for d in st.decls]
        stmts.append({"id": st.id, "label": st.label, "section": st.section, "declarations": decls})
    if args.json:
        print_json({"statements": stmts, "user_conjectures": [
            {"name": c.name, "label": c.label, "statement": c.statement, "input_kind": c.input_kind,
             "hypotheses": [h[0] for h in c.hypotheses]} for c in users]})
        return 0
    rows = []
    for s in stmts:
        rows.append([f"{s['id']} ({s['label']})", "", "", ""])
        for d in s["declarations"]:
            rows.append(["  " + d["check"], d["kind"], ", ".join(h["binder"] for h in d["hypotheses"]) or "-",
                         ", ".join(d["input_kinds"]) if d["checked"] else "not yet"])
    if users:
        rows.append(["user conjectures (--module)", "", "", ""])
    for c in users:
        rows.append(["  " + c.name, "conjecture", ", ".join(h[0] for h in c.hypotheses) or "-", c.input_kind])
    print(table(rows, ["statement (label) / declaration", "kind", "hypotheses", "checked on"], wrap=(2, 3)))
    n = sum(len(s["declarations"]) for s in stmts)
    k = sum(d["checked"] for s in stmts for d in s["declarations"])
    print(f"{len(stmts)} statements, {n} Lean declarations, {k} with a registered check")
    return 0
