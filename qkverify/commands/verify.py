"""`qkverify verify CERT...`: re-check certificates with the independent kernel.

Each argument is a certificate file, a directory (searched recursively for
``*.json``) or a glob pattern (``'certificates/**/*.json'``).  One line per
file: ``valid``, ``invalid: [check] why``, ``undecided: why`` (the kernel's
limit and how to raise it), ``not a certificate`` (skipped), ``not
checkable`` (a statement the kernel has no table entry for, e.g. a user
conjecture) or ``unreadable``.

Exit status: 1 if any certificate is invalid (or not checkable without
``--allow-uncheckable``), else 3 if any is undecided, else 2 if a path is
unreadable or nothing was a certificate, else 0.  Every certificate is checked
in full or not at all: there is no partial re-check.  See TRUST.md.
"""

from __future__ import annotations

import sys
from collections import Counter

from .. import kernel
from ..io.text import echo
from ..models.installed import default_weights_dirs

NAME = "verify"
HELP = "re-check certificate files with the independent kernel (0 valid, 1 invalid, 3 undecided, 2 unreadable)"

def add_arguments(p) -> None:
    """CERT... plus -q/--quiet, -v, --weights DIR, --allow-uncheckable, --allow-partial."""
    p.add_argument("certs", nargs="+", metavar="CERT",
                   help="certificate files, directories (searched for *.json) or glob patterns")
    p.add_argument("-q", "--quiet", action="store_true", help="print only certificates that are not valid")
    p.add_argument("-v", "--verbose", action="store_true", help="also list the declarations re-checked")
    p.add_argument("--weights", action="append", default=[], metavar="DIR",
                   help="directory holding weights files named by certificates (the file whose SHA-256 "
                        "matches is used); repeatable; the installed default model is searched too")
    p.add_argument("--allow-uncheckable", action="store_true",
                   help="exit 0 although some certificates are of statements the kernel has no entry for")
    p.add_argument("--json", action="store_true",
                   help="print one JSON document: per file its status, statement, verdict and reason, and the counts")


def _say(line: str) -> None:
    """``path: status …`` on one line when it fits in 100 columns; else the path and its status on
    the first line and the rest, indented, below (a path and a status word are never split)."""
    head, sep, rest = line.partition(" (") if ": valid (" in line else line.partition(": ", )
    if len(line) <= 100 or not sep:
        print(line, flush=True)
        return
    if ": valid (" in line:
        print(head, flush=True)
        echo("  (" + rest)
        return
    path, _, detail = line.partition(": ")
    status, _, why = detail.partition(": ")
    print(f"{path}: {status}" + (":" if why else ""), flush=True)
    if why:
        echo("  " + why)


def _check(path, dirs: list[str], verbose: bool = False, record: list | None = None):
    """(status, line) for one file, as the kernel decides it (its JSON record appended to ``record``)."""
    out = kernel.verify_file(path, dirs)
    if record is not None:
        record.append({"file": str(path), "status": out.status, "statement": getattr(out, "statement", None),
                       "verdict": getattr(out, "verdict", None), "check": getattr(out, "check", None),
                       "reason": getattr(out, "reason", None),
                       "declarations": list(getattr(out, "declarations", None) or [])})
    if out.status == "not a certificate":
        return "not a certificate", f"{path}: not a certificate (skipped)"
    if out.status == "valid":
        line = f"{path}: valid ({out.statement}: {out.verdict}; {len(out.declarations)} declaration(s))"
        if verbose:
            line += "".join(f"\n    re-checked: {d}" for d in out.declarations)
        return "valid", line
    if out.status == "invalid":
        return "invalid", f"{path}: invalid: [{out.check}] {out.reason}"
    if out.status == "undecided":
        return "undecided", f"{path}: undecided: {out.reason}"
    return out.status, f"{path}: {out.status}: {out.reason}"


def run(args) -> int:
    """Verify every named certificate, print one line each and a summary; returns the exit status."""
    dirs = list(args.weights) + [d for d in default_weights_dirs() if d not in args.weights]
    code = _run(args, dirs, records := [] if args.json else None)
    if args.json:
        from ._util import print_json

        counts = Counter(r["status"] for r in records)
        print_json({"files": records, "counts": dict(sorted(counts.items())), "exit": code})
    return code


def _run(args, dirs: list[str], records: list | None) -> int:
    from ..io.text import progress

    files, problems = kernel.expand_paths(args.certs)
    for msg in problems:
        if records is None:
            print(f"{msg}: unreadable", file=sys.stderr)
        else:
            records.append({"file": msg, "status": "unreadable"})
    counts: Counter = Counter()
    counts["unreadable"] += len(problems)
    with progress(total=len(files), desc="verify", unit="file",
                  quiet=args.json or len(files) < 20 or not args.quiet) as bar:
        for f in files:
            status, line = _check(f, dirs, args.verbose, records)
            counts[status] += 1
            bar.update(1)
            if records is None and not (args.quiet and status in ("valid", "not a certificate")):
                _say(line)
    total = len(files) + len(problems)
    if total != 1 and records is None:
        print(f"{total} file(s): " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()) if v))
    checked = total - counts["not a certificate"] - counts["unreadable"]
    if checked == 0 and not counts["unreadable"]:
        print("nothing to verify: no certificate among the files given", file=sys.stderr)
        return 2
    if counts["invalid"] or counts["unreadable"] == total:
        return 1 if counts["invalid"] else 2
    if counts["not checkable"] and not args.allow_uncheckable:
        return 1
    if counts["undecided"]:
        return 3
    return 2 if counts["unreadable"] else 0
