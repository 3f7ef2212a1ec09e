"""`qkverify check CLAIM --input FILE`: evaluate one claim on one input and
write its certificate.  Exit 0 holds, 1 fails, 3 undecided, 2 bad input
(including an unreadable input or an unwritable ``--out``, both detected
before the claim is evaluated)."""

from __future__ import annotations

from pathlib import Path

from .. import certificates
from ..errors import QKInputError
from ..io.outputs import default_out, probe_output_dir, probe_output_file
from ._util import echo, print_json

NAME = "check"
HELP = "check one claim (Lean id or blueprint label) on an input file and write a certificate"

EXIT = {"holds": 0, "consistent": 0, "inconsistent": 0, "fails": 1, "undecided": 3}


def add_arguments(p) -> None:
    p.add_argument("claim", help="statement id (e.g. profile_rank_one) or label (e.g. 'Theorem 3'): every "
                                 "declaration of it; or one declaration by its full Lean name or check id")
    p.add_argument("--input", required=True, help="input file (JSON, .npy or .npz; - reads standard input)")
    p.add_argument("--out", help="certificate file, or an existing directory to write into "
                                 "(default ./qkverify-out/check/<claim>/check_<input digest>.json)")
    p.add_argument("--force", action="store_true", help="replace a different existing certificate")
    p.add_argument("--no-cert", action="store_true", help="do not write a certificate")
    p.add_argument("--drop", metavar="HYP", action="append", default=[],
                   help="evaluate the conclusion although hypothesis HYP fails on the input (Lean conventions, "
                        "x/0 = 0); repeatable. This is how a probe's counterexample is re-checked")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def certificate_path(args, claim_id: str, input_json: dict) -> Path:
    """Where ``check`` writes: ``--out FILE``, ``--out DIR/check_<digest>.json``
    for an existing folder, else ``./qkverify-out/check/<claim>/check_<digest>.json``."""
    name = f"check_{certificates.input_digest(input_json)}.json"
    if args.out and Path(args.out).is_dir():
        return Path(args.out) / name  # --out DIR: write inside it, as heads/search/probes do
    return Path(args.out) if args.out else default_out("check", claim_id) / name


def probe_output(args, claim_id: str) -> None:
    """Refuse an unwritable output (exit 2, one line) before the claim is
    evaluated: the folder ``check`` will write into, or ``--out FILE``."""
    if args.no_cert:
        return
    if args.out and not Path(args.out).is_dir():
        probe_output_file(args.out)
    else:
        probe_output_dir(Path(args.out) if args.out else default_out("check", claim_id))


def _run2(args, sel) -> int:
    """Format-2 path: the statement's declarations (or the one named), each with its own hypotheses."""
    from ..claims.evaluate import evaluate, summary

    st = sel.meta
    inp = sel.load(args.input)
    binders = set(sel.binders()) | {b.predicate for t in sel.targets for b in t.binders}
    for d in args.drop:
        if d not in binders:
            raise QKInputError(f"--drop {d}: the hypotheses of {sel.id} are {', '.join(sorted(sel.binders())) or '(none)'}")
    pred = {b.predicate: b.binder for t in sel.targets for b in t.binders}
    probe_output(args, st.id)
    run = evaluate(st.id, inp, drop=tuple(pred.get(d, d) for d in args.drop),
                   only=(sel.single,) if sel.single else (), headline=True)
    cert = run.certificate()
    path = status = None
    if not args.no_cert:
        path = certificate_path(args, st.id, cert["input"])
        status = certificates.write(cert, path, force=args.force)
    if args.json:
        print_json({"statement": st.id, "label": st.label, "verdict": run.verdict, "evidence": run.evidence,
                    "declarations": [r.to_json() for r in run.records],
                    "skipped": [{"check": c, "reason": r} for c, r in run.skipped],
                    "certificate": str(path) if path else None})
    else:
        echo(f"{st.id} ({st.label}): {run.verdict} [{run.evidence}] — {len(run.records)} declaration(s) evaluated")
        for r in run.records:
            echo(f"  {summary(r)}")
        for c, why in run.skipped:
            echo(f"  {c}: not evaluated ({why})")
        if path:
            echo(f"certificate: {path} ({status})")
    return EXIT[run.verdict]


def run(args) -> int:
    from ..search.targets import resolve

    # a statement id or label, or one declaration of it; exit 2 naming the problem when the name is
    # unknown or nothing of it is checked
    return _run2(args, resolve(args.claim))
