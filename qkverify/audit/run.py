"""The audit: every statement, declaration by declaration, on the built-in suite
(:mod:`.suite`), its certificates, the Lean map against the registered checks
and the coverage of the 177 Lean declarations (:mod:`.lean_audit`); the default
model's heads are run by the audit command."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable
from pathlib import Path

from .. import certificates
from ..errors import CertificateExists
from . import lean_audit


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


def statements_with_checks() -> list:
    """Statements (lean_map order) with at least one registered declaration check."""
    from ..claims import metadata
    from ..claims.registry import registered_check_ids

    ids = registered_check_ids()
    return [st for st in metadata.load().values() if any(d.check in ids for d in st.decls)]


def run_statements(out_dir: Path, force: bool = False, write: bool = True,
                   on_statement: Callable[[str], None] | None = None) -> list[AuditRow]:
    """Every statement checked declaration by declaration (certificate format 2) on every
    suite input of a kind one of its checks takes.  A case on which no declaration can be
    evaluated (every one has a failing hypothesis) is listed as ``skipped`` with the reasons.
    ``on_statement(id)`` is called after each statement (a progress bar)."""
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
        if on_statement is not None:
            on_statement(st.id)
    return rows


def lean_map_problems() -> list[str]:
    """The Lean map against the registered checks: a registered check that no
    ``[[decl]]`` names, a predicate id of a checked declaration with no registered
    decision, a public declaration no ``[[decl]]`` maps (or the reverse).  Empty when
    they agree; QKInputError when the map is malformed."""
    from ..claims import metadata
    from ..claims.registry import registered_check_ids, registered_predicates

    stmts = metadata.load()
    decls = metadata.declarations(stmts) + metadata.declarations(stmts, units=True)
    return (lean_audit.registry_failures(decls, set(registered_check_ids()), set(registered_predicates()))
            + lean_audit.coverage_failures(metadata.declarations(stmts), metadata.read_decls()))


def lean_coverage(cert_dir: Path | None = None) -> dict:
    """The lean-audit report (:func:`qkverify.audit.lean_audit.audit`) on the shipped
    lean_map, declaration list and blueprint skeleton, and the certificates under
    ``cert_dir`` -- None: the shipped set, read through the manifest in the package
    (files a user adds under ``certificates/`` change nothing).  Per Lean declaration
    checked / sampled / computed / mapped only; ``report["exit"]`` is 1 when something
    fails."""
    return lean_audit.audit(cert_dir)
