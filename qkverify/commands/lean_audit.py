"""``qkverify lean-audit``: cross-check lean_map against the published Lean
declaration list and (optionally) the leanblueprint LaTeX.

Exit status: 0 every declaration is covered by exactly one lean_map entry,
1 otherwise, 2 unreadable or malformed input (one line on stderr).
"""

from __future__ import annotations

import argparse
import json

from ..audit.lean_audit import read_blueprint, render_text, run_audit
from ..audit.leanmap import DEFAULT_DECLS, DEFAULT_MAP_DIR, load_lean_map, read_decls

NAME = "lean-audit"
HELP = "cross-check lean_map/ against the Lean declaration list and the blueprint LaTeX"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options: --decls FILE, --blueprint TEX, --lean-map DIR, --json."""
    parser.add_argument("--decls", metavar="FILE", default=None,
                        help="declaration list, one per line (default: the shipped qkverify/data/lean_decls)")
    parser.add_argument("--blueprint", metavar="TEX", default=None,
                        help="leanblueprint LaTeX (e.g. blueprint/src/content.tex) to cross-check")
    parser.add_argument("--lean-map", metavar="DIR", default=None,
                        help="lean_map directory (default: the repository's lean_map/); "
                             "certificate paths are read relative to its parent")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    """Run the audit; print text or JSON; return 0 / 1 (QKInputError -> 2 in the CLI)."""
    entries = load_lean_map(args.lean_map)
    decls_path = args.decls if args.decls is not None else DEFAULT_DECLS
    decls = read_decls(decls_path)
    stmts = read_blueprint(args.blueprint) if args.blueprint else None
    report = run_audit(
        entries, decls, stmts,
        decls_source=str(args.decls) if args.decls else "qkverify/data/lean_decls",
        blueprint_source=str(args.blueprint) if args.blueprint else "",
    )
    report["lean_map_source"] = str(args.lean_map) if args.lean_map else str(DEFAULT_MAP_DIR)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(render_text(report))
    return report["exit"]
