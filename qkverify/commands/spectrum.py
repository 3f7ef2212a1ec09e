"""`qkverify spectrum FILE`: the sorted normalised nonzero spectrum λ of a list of numbers, a
symmetric matrix or a head, its statistics 𝓘, C, 𝒫, O, E, R (Appendices B and C; exact
where they are, certified intervals always), and the statements of Appendices B and C
(and Lemma 10 for a head) evaluated on it, with certificates.
Exact values are written p/q or root(<polynomial in x>, [lo, hi]) (qkverify.exact.notation).
Exit 0 when every evaluated statement holds, 1 when one fails, 3 when one is undecided."""

from __future__ import annotations

from pathlib import Path

from .. import certificates
from ..claims.spectra import lam_json, load_spectrum_input, spectrum_report, value_json
from ..errors import QKInputError
from ..exact.notation import root_over_sqrt, sympy_str
from ..io.outputs import default_out
from ._util import echo, print_json

NAME = "spectrum"
HELP = "normalised spectrum λ, 𝓘, C, 𝒫, O, E, R of a list of numbers, a symmetric matrix or a head"

KEYS = ("imbalance", "statC", "pairingScore", "statO", "statE", "statR")
LABEL = {"imbalance": "imbalance (𝓘)", "statC": "statC (C)", "pairingScore": "pairingScore (𝒫)",
         "statO": "statO (O)", "statE": "statE (E)", "statR": "statR (R)"}


def add_arguments(p) -> None:
    p.add_argument("file", help="JSON: a list of numbers, a symmetric matrix ([[…]], {\"S\": …}) or a head; "
                                "- reads standard input")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--digits", type=int, default=20, help="digits of the intervals, 1..1000 (default 20)")
    p.add_argument("--out", help="folder for the certificates (default ./qkverify-out/spectrum/<statement>/)")
    p.add_argument("--no-cert", action="store_true", help="do not write certificates")
    p.add_argument("--force", action="store_true", help="replace different existing certificates")


def _exact(text: str | None, interval) -> str | None:
    """An exact statistic (sympy text) in the one notation (p/q or root(…))."""
    if text is None:
        return None
    import sympy

    try:
        return sympy_str(sympy.sympify(text), *interval)
    except (sympy.SympifyError, TypeError, ValueError):
        return text


def run(args) -> int:
    if not 1 <= args.digits <= 1000:
        raise QKInputError("--digits must be between 1 and 1000")
    rep = spectrum_report(load_spectrum_input(args.file), args.digits)
    base = Path(args.out) if args.out else default_out("spectrum")
    name_of = "stdin" if args.file == "-" else Path(args.file).name
    statements = []
    for r in rep.runs:
        path = status = None
        if not args.no_cert:
            cert = r.certificate({"name": f"spectrum of {name_of}"})
            name = f"check_{certificates.input_digest(cert['input'])}.json"
            path = base / r.statement.id / name
            status = certificates.write(cert, path, force=args.force)
        statements.append({"statement": r.statement.id, "label": r.statement.label, "verdict": r.verdict,
                           "evidence": r.evidence, "declarations": len(r.records),
                           "failures": [d.meta.check for d in r.failures()],
                           "certificate": str(path) if path else None, "written": status})
    vals = {}
    for k in KEYS:
        if k in rep.values:
            v = value_json(*rep.values[k], args.digits)
            ex = _exact(v["exact"], v["interval"])
            # "exact": the value in the one notation (p/q or root(…)), None when only certified
            vals[k] = {"exact": ex, "value": ex, "interval": v["interval"], "float": float(rep.values[k][1].mid())}
    lam = []
    for e, nu in zip(lam_json(rep, args.digits), rep.nu):
        c = [int(x) for x in nu.poly.coeffs()]
        ex = root_over_sqrt(c, str(rep.s), *e["interval"])
        lam.append({"exact": ex, "value": ex,
                    "interval": e["interval"], "float": float(sum(map(float, e["interval"])) / 2)})
    if args.json:
        print_json({"source": rep.source, "m": rep.m, "norm_sq": str(rep.s), "normalised_spectrum": lam,
                    "MemLambdaSet": rep.member, **vals, "statements": statements})
    else:
        print(f"normalised nonzero spectrum λ = ν/‖ν‖ of a {rep.source} (‖ν‖² = {rep.s}, length {len(rep.nu)}):")
        for e in lam:
            echo(f"  {e['value']} ≈ {e['float']:.10g}")
        print(f"λ ∈ Λ_{rep.m} (MemLambdaSet): {'yes' if rep.member else 'no'}")
        for k in KEYS:
            if k in vals:
                v = vals[k]
                if v["value"] is None:
                    echo(f"  {LABEL[k]:17s} ∈ [{v['interval'][0]}, {v['interval'][1]}] (certified)")
                else:
                    echo(f"  {LABEL[k]:17s} = {v['value']}" + ("" if "/" not in v["value"] and "root" not in
                                                                 v["value"] else f" ≈ {v['float']:.12g}"))
        for st in statements:
            line = f"{st['statement']} ({st['label']}): {st['verdict']} [{st['evidence']}], {st['declarations']} declaration(s)"
            if st["failures"]:
                line += " — not holding: " + ", ".join(st["failures"])
            if st["certificate"]:
                line += f"; certificate {st['certificate']} ({st['written']})"
            echo(line)
    verdicts = {st["verdict"] for st in statements}
    return 1 if "fails" in verdicts else (3 if "undecided" in verdicts else 0)
