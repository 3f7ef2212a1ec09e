"""`qkverify audit`: every claim on the built-in suite (and the default
model's heads), certificates written, summary table printed.  Exit 0 only
when no claim fails and the lean_map is consistent with the registry."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ..audit.lean_audit import coverage_lines
from ..audit.run import lean_coverage, lean_map_problems, run_statements
from ._util import table

NAME = "audit"
HELP = "run every registered claim on the built-in suite (and the default model), write certificates"


def add_arguments(p) -> None:
    p.add_argument("--out", default="certificates", help="certificate directory (default: certificates/)")
    p.add_argument("--force", action="store_true", help="replace different existing certificates")
    p.add_argument("--no-model", action="store_true", help="skip the default real model's heads")
    p.add_argument("--jobs", type=int, default=2, help="processes for the model's heads (default 2)")


def _model_audit(out: Path, force: bool, jobs: int) -> tuple[bool, str]:
    """Certify the default model's heads (``qkverify heads`` with its
    defaults, quiet) into ``out/heads/<model>/`` -- under the audit's own
    ``--out``, never elsewhere; (ok, one-line summary)."""
    import argparse

    from . import heads as heads_cmd

    p = argparse.ArgumentParser()
    heads_cmd.add_arguments(p)
    # the audit keeps the first head's direct N x N cross-check (about a minute on the default model)
    argv = ["--quiet", "--jobs", str(jobs), "--check-seconds", "120"]
    if force:
        argv.append("--force")
    ns = p.parse_args(argv)
    ns.out_root = str(out)
    code = heads_cmd.run(ns)
    return code == 0, f"default model: qkverify heads exited {code}"


def run(args) -> int:
    from ..io.outputs import probe_output_dir

    out = probe_output_dir(Path(args.out))  # an unwritable --out is exit 2 before any work
    rows = run_statements(out, force=args.force)
    if not args.no_model:  # §1 on real models: a SmolLM2 RoPE head, the default model's first layer
        from ..audit.section1 import run_models

        rows += run_models(out, force=args.force)
    body = [[r.claim, r.label, r.case, r.verdict, r.evidence, r.note[:70]] for r in rows]
    print(table(body, ["claim", "label", "case", "verdict", "evidence", "note"]))
    counts = Counter(r.verdict for r in rows)
    print()
    print("summary: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
          + f"; {sum(1 for r in rows if r.certificate)} certificates in {out}/")
    ws = Counter(r.write_status for r in rows if r.write_status)
    print("certificates: " + ", ".join(f"{k} {v}" for k, v in sorted(ws.items())))
    problems = lean_map_problems()
    if problems:
        print(f"lean_map: {len(problems)} problem(s):")
        for p in problems:
            print("  " + p)
    else:
        print("lean_map: every registered claim has an entry and every checker is registered")
    coverage = lean_coverage()
    print("Lean declarations (qkverify lean-audit has the per-declaration table):")
    print("\n".join(coverage_lines(coverage)))
    if coverage["failures"]:
        print(f"lean-audit: {len(coverage['failures'])} failure(s); run qkverify lean-audit")
    ok_model = True
    if not args.no_model:
        ok_model, msg = _model_audit(out, args.force, args.jobs)
        print(msg)
    refused = [r for r in rows if r.write_status.startswith("refused")]
    for r in refused:
        print(f"refused to overwrite {r.certificate}: a different certificate exists (use --force)")
    failed = counts.get("fails", 0) + counts.get("holds (WRONG PAIRING PASSED)", 0)
    return 0 if failed == 0 and not problems and ok_model and not refused else 1
