"""`qkverify spectrum FILE`: the sorted normalised nonzero spectrum λ of a list of numbers, a
symmetric matrix or a head, its statistics 𝓘, C, 𝒫, O, E, R (Appendices B and C; exact
where they are, certified intervals always), and the statements of Appendices B and C
(and Lemma 10 for a head) evaluated on it, with certificates.
Exit 0 when every evaluated statement holds, 1 when one fails, 3 when one is undecided."""

from __future__ import annotations

from pathlib import Path

from .. import certificates
from ..claims.spectra import lam_json, load_spectrum_input, spectrum_report, value_json
from ..errors import QKInputError
from ._util import print_json

NAME = "spectrum"
HELP = "normalised spectrum λ, 𝓘, C, 𝒫, O, E, R of a list of numbers, a symmetric matrix or a head"

KEYS = ("imbalance", "statC", "pairingScore", "statO", "statE", "statR")
LABEL = {"imbalance": "𝓘 (imbalance)", "statC": "C (statC)", "pairingScore": "𝒫 (pairingScore)",
         "statO": "O (statO)", "statE": "E (statE)", "statR": "R (statR)"}


def add_arguments(p) -> None:
    p.add_argument("file", help="JSON: a list of numbers, a symmetric matrix ([[…]], {\"S\": …}) or a head")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--digits", type=int, default=20, help="digits of the intervals (default 20)")
    p.add_argument("--out", help="directory for the certificates (default certificates/<statement>/)")
    p.add_argument("--no-cert", action="store_true", help="do not write certificates")
    p.add_argument("--force", action="store_true", help="replace different existing certificates")


def run(args) -> int:
    if not 1 <= args.digits <= 1000:
        raise QKInputError("--digits must be between 1 and 1000")
    rep = spectrum_report(load_spectrum_input(args.file), args.digits)
    statements = []
    for r in rep.runs:
        path = status = None
        if not args.no_cert:
            cert = r.certificate({"name": f"spectrum of {Path(args.file).name}"})
            name = f"check_{certificates.input_digest(cert['input'])}.json"
            path = (Path(args.out) if args.out else Path("certificates")) / r.statement.id / name
            status = certificates.write(cert, path, force=args.force)
        statements.append({"statement": r.statement.id, "label": r.statement.label, "verdict": r.verdict,
                           "evidence": r.evidence, "declarations": len(r.records),
                           "failures": [d.meta.check for d in r.failures()],
                           "certificate": str(path) if path else None, "written": status})
    vals = {k: value_json(*rep.values[k], args.digits) for k in KEYS if k in rep.values}
    if args.json:
        print_json({"source": rep.source, "m": rep.m, "norm_sq": str(rep.s), "normalised_spectrum": lam_json(rep, args.digits),
                    "MemLambdaSet": rep.member, **vals, "statements": statements})
    else:
        print(f"normalised nonzero spectrum λ = ν/‖ν‖ of a {rep.source} (‖ν‖² = {rep.s}, length {len(rep.nu)}):")
        for e in lam_json(rep, args.digits):
            print(f"  {e['exact']}  ∈ [{e['interval'][0]}, {e['interval'][1]}]")
        print(f"λ ∈ Λ_{rep.m}: {'yes' if rep.member else 'no'}")
        for k in KEYS:
            if k in vals:
                v = vals[k]
                ex = v["exact"] if v["exact"] is not None else "(certified only)"
                print(f"  {LABEL[k]:18s} = {ex}  ∈ [{v['interval'][0]}, {v['interval'][1]}]")
        for st in statements:
            line = f"{st['statement']} ({st['label']}): {st['verdict']} [{st['evidence']}], {st['declarations']} declaration(s)"
            if st["failures"]:
                line += " — not holding: " + ", ".join(st["failures"])
            if st["certificate"]:
                line += f"; certificate {st['certificate']} ({st['written']})"
            print(line)
    verdicts = {st["verdict"] for st in statements}
    return 1 if "fails" in verdicts else (3 if "undecided" in verdicts else 0)
