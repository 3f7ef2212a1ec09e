"""`qkverify check CLAIM --input FILE`: evaluate one claim on one input and
write its certificate.  Exit 0 holds, 1 fails, 3 undecided, 2 bad input
(including an unreadable input or an unwritable ``--out``, both detected
before the claim is evaluated)."""

from __future__ import annotations

from pathlib import Path

from .. import certificates
from ..io.inputs import load_input
from ..claims.registry import get
from ..errors import QKInputError
from ..io.outputs import probe_output_file
from ._util import print_json

NAME = "check"
HELP = "check one claim (Lean id or blueprint label) on an input file and write a certificate"

EXIT = {"holds": 0, "fails": 1, "undecided": 3}


def add_arguments(p) -> None:
    p.add_argument("claim", help="Lean id (e.g. profile_rank_one) or label (e.g. 'Theorem 3')")
    p.add_argument("--input", required=True, help="input file (JSON or .npy)")
    p.add_argument("--out", help="certificate file, or an existing directory to write into "
                                 "(default certificates/<claim>/check_<input digest>.json)")
    p.add_argument("--force", action="store_true", help="replace a different existing certificate")
    p.add_argument("--no-cert", action="store_true", help="do not write a certificate")
    p.add_argument("--drop", metavar="HYP", action="append", default=[],
                   help="evaluate the conclusion although hypothesis HYP fails on the input (Lean conventions, "
                        "x/0 = 0); repeatable. This is how a probe's counterexample is re-checked")
    p.add_argument("--json", action="store_true")


def certificate_path(args, claim, input_json: dict) -> Path:
    """Where ``check`` writes: ``--out FILE``, ``--out DIR/check_<digest>.json``
    for an existing folder, else ``certificates/<claim>/check_<digest>.json``."""
    name = f"check_{certificates.input_digest(input_json)}.json"
    if args.out and Path(args.out).is_dir():
        return Path(args.out) / name  # --out DIR: write inside it, as heads/search/probes do
    return Path(args.out) if args.out else Path("certificates") / claim.id / name


def run(args) -> int:
    claim = get(args.claim)
    inp = load_input(args.input, claim.input_kind)
    names = {h.name for h in claim.hypotheses}
    for d in args.drop:
        if d not in names:
            raise QKInputError(f"--drop {d}: {claim.id} has hypotheses {', '.join(sorted(names)) or '(none)'}")
    ij = inp.to_json()
    path = None if args.no_cert else probe_output_file(certificate_path(args, claim, ij))
    failing = [h for h in claim.failed_hypotheses(inp)]
    kept = [h for h in failing if h.name not in args.drop]
    if kept:
        h = kept[0]
        raise QKInputError(f"{claim.id} ({claim.label}): hypothesis '{h.name}' ({h.text}) fails on this input"
                           f" (use --drop {h.name} to evaluate the conclusion anyway)")
    res = claim.conclusion(inp)
    if failing:
        res.reason = (f"hypotheses dropped and false on this input: {', '.join(h.name for h in failing)}; "
                      + res.reason).rstrip("; ")
    cert = certificates.build(claim, ij, res)
    if path is not None:
        status = certificates.write(cert, path, force=args.force)
    if args.json:
        print_json({"claim": claim.id, "label": claim.label, "verdict": res.verdict, "evidence": res.evidence,
                    "reason": res.reason, "values": res.values, "certificate": str(path) if path else None})
    else:
        print(f"{claim.id} ({claim.label}): {res.verdict} [{res.evidence}]" + (f" — {res.reason}" if res.reason else ""))
        if path:
            print(f"certificate: {path} ({status})")
    return EXIT[res.verdict]
