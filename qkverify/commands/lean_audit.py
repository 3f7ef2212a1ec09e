"""``qkverify lean-audit``: per Lean declaration, is it checked (theorems),
computed (definitions) or only mapped?  Plus the blueprint cross-check, from
the skeleton shipped with the package unless ``--blueprint`` names a .tex
file.

Exit status: 0 nothing fails, 1 a failure (or, with ``--require-checked``, a
declaration that is only mapped), 2 unreadable or malformed input (one line
on stderr).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..audit.lean_audit import (
    SKELETON_PATH,
    load_skeleton,
    read_blueprint,
    render_text,
    run_lean_audit,
    scan_certificates,
)
from ..audit.leanmap import DEFAULT_DECLS, DEFAULT_MAP_DIR, load_lean_map, read_decls

NAME = "lean-audit"
HELP = "per Lean declaration: checked / computed / mapped only; lean_map against the blueprint"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options: --decls FILE, --blueprint TEX, --lean-map DIR, --json, --require-checked."""
    parser.add_argument("--decls", metavar="FILE", default=None,
                        help="declaration list, one per line (default: the shipped qkverify/data/lean_decls)")
    parser.add_argument("--blueprint", metavar="TEX", default=None,
                        help="leanblueprint LaTeX (e.g. blueprint/src/content.tex; a web.tex beside it supplies "
                             "the counter setup) instead of the shipped skeleton qkverify/data/blueprint.json")
    parser.add_argument("--lean-map", metavar="DIR", default=None,
                        help="lean_map directory (default: the repository's lean_map/); "
                             "certificate paths, and the certificates/ scanned, are relative to its parent")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--require-checked", action="store_true",
                        help="exit 1 if any declaration is only mapped")


def run(args: argparse.Namespace) -> int:
    """Run the audit; print text or JSON; return 0 / 1 (QKInputError -> 2 in the CLI)."""
    entries = load_lean_map(args.lean_map)
    decls = read_decls(args.decls if args.decls is not None else DEFAULT_DECLS)
    if args.blueprint:
        stmts, bp_source = read_blueprint(args.blueprint), str(args.blueprint)
    else:
        stmts, info = load_skeleton()
        commit = str(info.get("commit", ""))[:7]
        bp_source = f"qkverify/data/{SKELETON_PATH.name}" + (f" (content.tex @ {commit})" if commit else "")
    certs = {}
    if args.lean_map:  # a map elsewhere: its certificates sit beside it, as for the statements' paths
        found, problems = scan_certificates(Path(args.lean_map).resolve().parent / "certificates")
        certs = {"certificates": found, "certificate_problems": problems}
    report = run_lean_audit(
        entries, decls, stmts, **certs,
        decls_source=str(args.decls) if args.decls else "qkverify/data/lean_decls",
        blueprint_source=bp_source, require_checked=args.require_checked,
    )
    report["sources"]["lean_map"] = str(args.lean_map) if args.lean_map else str(DEFAULT_MAP_DIR)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False, default=str))
    else:
        print(render_text(report))
    return report["exit"]
