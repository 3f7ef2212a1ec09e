"""``qkverify lean-audit``: per Lean declaration, what the certificates establish --
checked, sampled, computed or only mapped -- plus the blueprint cross-check and,
with ``--sheet``, the conformance sheet (:mod:`qkverify.audit.sheet`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

NAME = "lean-audit"
HELP = "per Lean declaration: checked / sampled / computed / mapped only; lean_map against the blueprint"
#: where --sheet writes without a FILE
DEFAULT_SHEET = Path("qkverify-out") / "lean-audit" / "conformance.md"

DESCRIPTION = """\
Statuses, per Lean declaration (derived from certificates the kernel finds valid):
  checked      a theorem or lemma concluded 'holds' on exact or certified evidence
  sampled      a theorem or lemma supported only by empirical evidence ('consistent');
               a sample never makes a theorem checked
  computed     a definition whose value a certificate computes
  mapped only  none of these (the reason is shown)
A certificate concluding 'inconsistent' (a sample against a statement) is listed as
sampled evidence against, never a failure; one concluding 'fails' on exact or
certified evidence is a failure.

Without --out the shipped certificates are audited through the manifest in the
package (qkverify/data/shipped_certificates.sha256): files added under
certificates/ or anywhere else change nothing; a listed file missing or changed
is a failure.

Exit status: 0 nothing fails; 1 a failure, or with --require-checked a theorem or
lemma that is not checked (sampled or only mapped) or a definition not computed;
2 unreadable or malformed input (one line on stderr)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options: --out DIR, --sheet [FILE], --write-manifest, --decls FILE, --blueprint TEX,
    --lean-map DIR, --json, --require-checked."""
    parser.description = DESCRIPTION
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--out", metavar="DIR", default=None,
                        help="audit the certificates under DIR (recursively) instead of the shipped set")
    parser.add_argument("--sheet", metavar="FILE", nargs="?", const=str(DEFAULT_SHEET), default=None,
                        help="also write the conformance sheet (per declaration: binders, conclusion, producer "
                             "check and kernel rule with file and lines, input and evidence kinds, what probes "
                             f"found per hypothesis) to FILE (default {DEFAULT_SHEET}; the shipped one is "
                             "docs/conformance.md)")
    parser.add_argument("--write-manifest", action="store_true",
                        help="first record the certificates now under certificates/ in the package's manifest "
                             "(what `make audit` does after regenerating the shipped set); not with --out")
    parser.add_argument("--decls", metavar="FILE", default=None,
                        help="declaration list, one per line (default: the shipped qkverify/data/lean_decls)")
    parser.add_argument("--blueprint", metavar="TEX", default=None,
                        help="leanblueprint LaTeX (e.g. blueprint/src/content.tex; a web.tex beside it supplies "
                             "the counter setup) instead of the shipped skeleton qkverify/data/blueprint.json")
    parser.add_argument("--lean-map", metavar="DIR", default=None,
                        help="lean_map directory (default: the repository's lean_map/)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON document")
    parser.add_argument("--require-checked", action="store_true",
                        help="exit 1 unless every theorem and lemma is checked (not only sampled or mapped) "
                             "and every definition computed")


def run(args: argparse.Namespace) -> int:
    """Run the audit; print text or JSON; write the sheet; return 0 / 1 (QKInputError -> 2)."""
    from ..audit import manifest
    from ..audit.lean_audit import audit, render_text
    from ..errors import QKInputError

    if args.write_manifest:
        if args.out is not None:
            raise QKInputError("--write-manifest records the shipped certificates/; it does not take --out")
        manifest.write()
    sheet_path = None
    if args.sheet is not None:
        from ..io.outputs import probe_output_file

        sheet_path = probe_output_file(args.sheet, "--sheet")  # an unwritable FILE is exit 2 before any work
    report = audit(args.out, lean_map=args.lean_map, decls=args.decls, blueprint=args.blueprint,
                   require_checked=args.require_checked)
    if sheet_path is not None:
        from ..audit.sheet import write_sheet

        write_sheet(report, sheet_path, lean_map=args.lean_map)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False, default=str))
    else:
        print(render_text(report))
        if sheet_path is not None:
            print(f"conformance sheet: {sheet_path}")
    return report["exit"]
