"""`qkverify audit`: every claim on the built-in suite (and the default
model's heads), certificates written under ``--out`` (default
``./qkverify-out/audit``; the Makefile regenerates the shipped set with
``--out certificates``), a short summary printed (the full table in
``<out>/audit.csv`` and ``audit.json``).

Exit 0 only when nothing fails: no claim fails, the lean_map is consistent
with the registry, lean-audit on the certificates written finds no failure,
the default model's heads pass, and no existing certificate was refused."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ..audit.lean_audit import count_lines
from ..audit.run import lean_coverage, lean_map_problems, run_statements
from ..io.outputs import atomic_write_csv, atomic_write_json, default_out
from ._util import CAPS, check_range, echo, print_json, progress, table

NAME = "audit"
HELP = "run every registered claim on the built-in suite (and the default model), write certificates"

#: the columns of audit.csv / audit.json
#: audit.csv / audit.json hold facts only (what each case concludes and where its certificate is), so
#: that a second run, or a fresh clone's `make audit`, rewrites the same bytes; what this run did to
#: each file (written / unchanged / refused) is printed and in --json's "written" column only
COLUMNS = ["statement", "label", "case", "verdict", "evidence", "note", "certificate"]


def add_arguments(p) -> None:
    p.add_argument("--out", default=str(default_out("audit")),
                   help="certificate folder (default ./qkverify-out/audit; `make audit` regenerates the shipped "
                        "set with --out certificates)")
    p.add_argument("--force", action="store_true", help="replace different existing certificates")
    p.add_argument("--no-model", action="store_true", help="skip the default real model's heads")
    p.add_argument("--jobs", type=int, default=2, help=f"processes for the model's heads, 1..{CAPS['jobs']} (default 2)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print one JSON document (the audit.json fields)")


def _model_audit(out: Path, force: bool, jobs: int) -> tuple[bool, str]:
    """Certify the default model's heads (``qkverify heads`` with its
    defaults, quiet) into ``out/heads/<model>/`` -- under the audit's own
    ``--out``, never elsewhere; (ok, one-line summary)."""
    import argparse
    import contextlib
    import io
    import json

    from . import heads as heads_cmd

    p = argparse.ArgumentParser()
    heads_cmd.add_arguments(p)
    # the audit keeps the first head's direct N x N cross-check (about a minute on the default model);
    # the shipped folder gets no report.html
    argv = ["--quiet", "--json", "--jobs", str(jobs), "--check-seconds", "120", "--no-report"]
    if force:
        argv.append("--force")
    ns = p.parse_args(argv)
    ns.out_root = str(out)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = heads_cmd.run(ns)
    try:  # the summary from heads' JSON document, not from its (wrapped) text
        doc = json.loads(buf.getvalue())
        return code == 0, f"{doc['model']['name']}: {len(doc['rows'])} heads. {doc['theorem_3']['summary']}"
    except (ValueError, KeyError, TypeError):
        return code == 0, f"default model: qkverify heads exited {code}"


def run(args) -> int:
    from ..audit.run import statements_with_checks
    from ..io.outputs import probe_output_dir

    check_range("--jobs", args.jobs, 1, CAPS["jobs"])
    out = probe_output_dir(Path(args.out))  # an unwritable --out is exit 2 before any work
    quiet = args.quiet or args.json
    stmts = statements_with_checks()
    with progress(total=len(stmts), desc="audit: suite", unit="statement", quiet=quiet) as bar:
        rows = run_statements(out, force=args.force, on_statement=lambda _: bar.update(1))
    if not args.no_model:  # §1 on real models: a SmolLM2 RoPE head, the default model's first layer
        from ..audit.section1 import run_models

        with progress(total=1, desc="audit: §1 on real heads", unit="model", quiet=quiet) as bar:
            rows += run_models(out, force=args.force)
            bar.update(1)
    table_rows = [[r.claim, r.label, r.case, r.verdict, r.evidence, r.note, r.certificate or ""] for r in rows]
    atomic_write_csv(out / "audit.csv", COLUMNS, table_rows)
    counts = Counter(r.verdict for r in rows)
    ws = Counter(r.write_status for r in rows if r.write_status)
    problems = lean_map_problems()
    coverage = lean_coverage(out)
    ok_model, model_msg = True, "default model: skipped (--no-model)"
    if not args.no_model:
        with progress(total=1, desc="audit: default model's heads", unit="model", quiet=quiet) as bar:
            ok_model, model_msg = _model_audit(out, args.force, args.jobs)
            bar.update(1)
    refused = [r for r in rows if r.write_status.startswith("refused")]
    failed = [r for r in rows if r.verdict == "fails" or r.verdict == "holds (WRONG PAIRING PASSED)"]
    lean_failures = list(coverage.get("failures", []))
    parts = {"suite": not failed, "lean_map": not problems, "lean_audit": coverage.get("exit", 0) == 0,
             "model": ok_model, "certificates_written": not refused}
    doc = {"out": str(out), "verdicts": dict(sorted(counts.items())), "certificates": dict(sorted(ws.items())),
           "parts": parts, "failures": [{"statement": r.claim, "case": r.case, "note": r.note} for r in failed],
           "lean_map_problems": problems, "lean_audit_failures": lean_failures,
           "lean_audit_counts": count_lines(coverage), "model": model_msg,
           "refused": [r.certificate for r in refused], "columns": COLUMNS,
           "rows": [dict(zip(COLUMNS, r)) for r in table_rows]}
    atomic_write_json(out / "audit.json", {k: v for k, v in doc.items() if k != "certificates"})
    doc["rows"] = [dict(row, written=r.write_status) for row, r in zip(doc["rows"], rows)]
    code = 0 if all(parts.values()) else 1
    if args.json:
        print_json(doc)
        return code
    by_st: dict = {}
    for r in rows:
        by_st.setdefault((r.claim, r.label), Counter())[r.verdict] += 1
    not_all = [[c, l, ", ".join(f"{k} {v}" for k, v in sorted(cnt.items()))]
               for (c, l), cnt in by_st.items() if set(cnt) - {"holds", "consistent", "computed"}]
    echo(f"audit: {len(rows)} cases of {len(by_st)} statements; "
         + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if not_all:
        print("statements with a case that does not hold (skipped: a hypothesis fails on that suite input):")
        print(table(not_all, ["statement", "label", "cases"]))
    echo(f"certificates in {out}/: " + ", ".join(f"{k} {v}" for k, v in sorted(ws.items()))
         + f"; full table: {out / 'audit.csv'}")
    for r in failed:
        echo(f"FAILS: {r.claim} ({r.label}) on {r.case}: {r.note}")
    for r in refused:
        echo(f"refused to overwrite {r.certificate}: a different certificate exists (use --force)")
    if problems:
        echo(f"lean_map: {len(problems)} problem(s):", *("  " + p for p in problems))
    else:
        print("lean_map: every registered claim has an entry and every checker is registered")
    print("Lean declarations (qkverify lean-audit has the per-declaration table):")
    print("\n".join(count_lines(coverage)))
    for f in lean_failures[:10]:
        echo(f"lean-audit FAILURE: {f}")
    if len(lean_failures) > 10:
        print(f"… {len(lean_failures) - 10} more lean-audit failures (qkverify lean-audit --out {out})")
    echo(model_msg)
    failing = [k for k, v in parts.items() if not v]
    print("Result: " + ("OK" if code == 0 else "FAILED (" + ", ".join(failing) + ")"))
    return code
