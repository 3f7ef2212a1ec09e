"""The audit: every registered claim on the built-in suite, certificates for
every checkable (claim, input) pair, the lean_map cross-check, and the
default model's heads when the heads module is available.

Source statements: every claim in :mod:`qkverify.claims` (SPEC.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import certificates
from ..claims.registry import all_claims
from ..errors import CertificateExists
from . import lean_audit, leanmap
from .suite import adapt, cases, fits


@dataclass
class AuditRow:
    claim: str
    label: str
    case: str
    verdict: str          # holds / fails / undecided / skipped / rejected
    evidence: str
    note: str
    certificate: str | None
    write_status: str = ""


def run_suite(out_dir: Path, force: bool = False, write: bool = True) -> list[AuditRow]:
    """Run every claim on every fitting suite case.  Cases whose hypotheses
    fail are listed as ``skipped`` (with the failing hypothesis); L = 0 is
    ``rejected`` by claims that need L ≠ 0.  Certificates go to
    ``out_dir/<claim id>/<case>.json`` (atomic, not overwritten silently)."""
    rows: list[AuditRow] = []
    for claim in all_claims():
        kind = claim.input_kind
        for name, inp in cases():
            if not fits(kind, inp, claim.id):
                continue
            inp2 = adapt(kind, inp)
            bad = claim.failed_hypotheses(inp2)
            if bad:
                h = bad[0]
                verdict = "rejected" if h.name == "L_ne_zero" else "skipped"
                note = f"hypothesis {h.name} ({h.text}) fails"
                if h.name == "L_ne_zero" and "profile" in claim.id:
                    note += ": L = 0 has no profile"
                rows.append(AuditRow(claim.id, claim.label, name, verdict, "-", note, None))
                continue
            res = claim.check(inp2)
            path = None
            status = ""
            if write:
                cert = certificates.build(claim, inp2.to_json(), res, name=name)
                path = out_dir / claim.id / f"{name}.json"
                try:
                    status = certificates.write(cert, path, force=force)
                except CertificateExists:
                    status = "refused (a different certificate exists; --force replaces it)"
            rows.append(AuditRow(claim.id, claim.label, name, res.verdict, res.evidence, res.reason[:120],
                                 str(path) if path else None, status))
    return rows


def statements_with_checks() -> list:
    """Statements (lean_map order) with at least one registered declaration check."""
    from ..claims import metadata
    from ..claims.registry import registered_check_ids

    ids = registered_check_ids()
    return [st for st in metadata.load().values() if any(d.check in ids for d in st.decls)]


def run_statements(out_dir: Path, force: bool = False, write: bool = True) -> list[AuditRow]:
    """Every statement checked declaration by declaration (certificate format 2) on every
    suite input of a kind one of its checks takes.  A case on which no declaration can be
    evaluated (every one has a failing hypothesis) is listed as ``skipped`` with the reasons."""
    from ..claims.evaluate import evaluate
    from ..claims.registry import declaration_check_fn, registered_check_ids
    from ..errors import QKInputError
    from .suite import cases2

    ids = registered_check_ids()
    rows: list[AuditRow] = []
    for st in statements_with_checks():
        kinds = {k for d in st.decls if d.check in ids for k in declaration_check_fn(d.check).kinds}
        for name, inp in cases2():
            if inp.kind2 not in kinds:
                continue
            try:
                run = evaluate(st.id, inp)
            except QKInputError as err:
                rows.append(AuditRow(st.id, st.label, name, "skipped", "-", str(err)[:160], None))
                continue
            path, status = None, ""
            if write:
                path = out_dir / st.id / f"{name}.json"
                try:
                    status = certificates.write(run.certificate({"name": name}), path, force=force)
                except CertificateExists:
                    status = "refused (a different certificate exists; --force replaces it)"
            note = "; ".join(f"{r.meta.check}: {r.conclusion}" for r in run.failures())[:160]
            rows.append(AuditRow(st.id, st.label, name, run.verdict, run.evidence, note,
                                 str(path) if path else None, status))
    return rows


def lean_map_problems() -> list[str]:
    """Registered claims without a lean_map entry and the reverse, plus
    hypothesis-name / label / declaration mismatches (qkverify.leanmap)."""
    entries = leanmap.load_lean_map()
    claims = all_claims()
    ids = {c.id for c in claims} | {st.id for st in statements_with_checks()}
    return leanmap.consistency(ids, entries) + leanmap.registry_problems(claims, entries)


def lean_coverage() -> dict:
    """The lean-audit report (:func:`qkverify.audit.lean_audit.run_lean_audit`)
    on the shipped lean_map, declaration list, blueprint skeleton and
    certificates: per Lean declaration checked / computed / mapped only."""
    stmts, _ = lean_audit.load_skeleton()
    return lean_audit.run_lean_audit(leanmap.load_lean_map(), leanmap.read_decls(), stmts)
