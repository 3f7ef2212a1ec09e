"""Hypothesis-necessity probes, declaration by declaration.

For every declaration of a selection (:mod:`qkverify.search.targets`) and
every hypothesis (Lean binder) ``b`` of it, search for an input on which
``b`` is false, every other hypothesis of that declaration holds, and its
conclusion -- evaluated with Lean's conventions (x/0 = 0), ``b`` dropped --
fails.  Outcomes:

* ``needed``              -- such an input was found: it is shrunk, written as
                             a format-2 certificate (the record lists ``b`` in
                             ``dropped``) and as a bare input file, and
                             re-checked (:func:`recheck`): the kernel must find
                             the certificate valid with the conclusion failing,
                             and ``qkverify check DECLARATION --input FILE --drop b``
                             must write exactly the same certificate;
* ``not shown necessary`` -- inputs violating ``b`` (with the others true) were
                             evaluated and none broke the conclusion.  This never
                             means the hypothesis is unnecessary;
* ``not tested``          -- no such input was found or none could be evaluated
                             (the row says which), e.g. a hypothesis that every
                             input of the kind satisfies;
* ``unprobeable``         -- lean_map says why no input of the declaration's types
                             makes the statement fail with ``b`` dropped (field
                             ``unprobeable`` of the hypothesis entry), and the search
                             found none either (a counterexample found anyway is
                             reported as ``needed`` and contradicts that reason).

A declaration without hypotheses gets one row ``no hypotheses``.

Before dropping anything the selection is attacked with every hypothesis
kept.  A declaration that fails there gets the row ``(none dropped)`` /
``fails with all hypotheses`` with its counterexample (written and
re-checked like the others), and its hypotheses are not probed (``not
probed``): dropping a hypothesis of a false statement shows nothing.  For a
user conjecture the row is always shown -- ``no counterexample`` when none
was found, which proves nothing; for the built-in statements only when one
fails (a bug).  A counterexample decided by Monte Carlo (evidence
``empirical``) is reported as ``needed (empirical)`` /
``fails with all hypotheses (empirical)``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import QKInputError
from .driver import SearchOutcome, input_json, search, write_counterexample
from .targets import Selection, Target

NEEDED = "needed"
NOT_SHOWN = "not shown necessary"
NOT_TESTED = "not tested"
FAILS_WITH_ALL = "fails with all hypotheses"
NO_COUNTEREXAMPLE = "no counterexample"
NOT_PROBED = "not probed"
UNPROBEABLE = "unprobeable"
NO_HYPOTHESES = "no hypotheses"
#: the ``binder`` field of a row that keeps every hypothesis
ALL_KEPT = "(none dropped)"


@dataclass
class ProbeRow:
    """One (declaration, binder) probe."""

    statement: str
    label: str
    declaration: str
    check: str
    binder: str
    hypothesis_text: str
    status: str
    evidence: str | None
    counterexample: dict | None
    reason: str
    eligible_tried: int
    generated: int
    seconds: float
    certificate: str | None
    input_file: str | None
    recheck: str | None
    recheck_command: str | None
    errors: int

    def to_json(self) -> dict:
        """JSON form without the wall time (so the written table is reproducible)."""
        d = asdict(self)
        d.pop("seconds")
        return d


def recheck(sel: Selection, target: Target, drop: str | None, cert_path: Path, input_path: Path | None) -> str:
    """Re-check a written counterexample: ``"ok"``, else one line naming the mismatch.

    Built-in declarations: the kernel finds the certificate file valid with ``target`` failing
    (and ``drop`` false and dropped), and re-reading the input file as ``qkverify check`` does
    and evaluating the same declarations gives a byte-identical certificate.  User conjectures
    (the kernel cannot check them): the re-read input has the same hypothesis pattern and the
    conclusion still fails."""
    from .. import certificates

    if input_path is None:
        return "n/a (custom input kind: no input file form to re-read)"
    try:
        inp = sel.load(input_path)
    except QKInputError as err:
        return f"input file not readable: {err}"
    written = json.loads(Path(cert_path).read_text(encoding="utf-8"))
    rec = next((d for d in written["declarations"] if d["check"] == target.check), None)
    if rec is None:
        return f"the certificate has no record of {target.check}"
    only = tuple(d["check"] for d in written["declarations"])
    try:
        ev = sel.evaluate(inp, drop=(drop,) if drop else (), only=only)
    except QKInputError as err:
        return f"re-evaluation refused the input: {err}"
    if target.check not in ev.failing(drop):
        return f"on the re-read input {target.check} does not fail with that hypothesis pattern"
    if sel.user:
        return "ok"
    from ..kernel import verify_file

    k = verify_file(cert_path)
    if k.status != "valid" or k.verdict not in ("fails", "inconsistent"):
        return f"kernel: {k.status} {k.check} {k.reason}".strip()
    if drop is not None and (rec.get("dropped") != [drop] or rec["hypotheses"].get(drop) is not False):
        return f"the record does not show {drop} false and dropped"
    if certificates.canonical_bytes(ev.certificate()) != Path(cert_path).read_bytes():
        return "the certificate differs from what `qkverify check` writes for the input file"
    return "ok"


def _found(sel: Selection, target: Target, o: SearchOutcome, drop: str | None, out_dir, stem: str):
    """Certificate, input file and re-check of a found counterexample (strings, or Nones)."""
    if out_dir is None:
        return None, None, None
    c, i = write_counterexample(sel, o, out_dir, "probe", stem=stem, record=False)
    return str(c), (str(i) if i else None), recheck(sel, target, drop, c, i)


def _row(sel: Selection, t: Target, binder: str, text: str, status: str, reason: str, o: SearchOutcome | None = None,
         cert=None, ipath=None, chk=None, cmd=None) -> ProbeRow:
    found = o is not None and o.found
    return ProbeRow(sel.statement, sel.label, t.name, t.check, binder, text, status,
                    o.evidence if found else None, input_json(o.input) if found else None, reason,
                    (o.first_found_after if found else o.eligible) if o else 0, o.generated if o else 0,
                    round(o.seconds, 3) if o else 0.0, cert, ipath, chk, cmd, len(o.errors) if o else 0)


def _untested_reason(o: SearchOutcome, what: str) -> str:
    if o.no_strategy:
        return f"nothing was tested: {o.no_strategy}"
    if o.eligible == 0:
        return (f"no input {what} was found ({o.generated} drawn); nothing was tested")
    why = f"; e.g. {o.skips[0]}" if o.skips else (f"; first error: {o.errors[0][1]}" if o.errors else "")
    return (f"{o.eligible} inputs {what} were found but none could be evaluated "
            f"({len(o.errors)} errors{why}); nothing was tested")


def probe_selection(sel: Selection, *, budget: int = 200, seed: int = 0, max_dim: int = 4,
                    out_dir: str | Path | None = "certificates/probes", seeds: tuple = ()) -> list[ProbeRow]:
    """Probe every declaration of ``sel``: first with every hypothesis kept, then each
    hypothesis dropped in turn (module docstring).  Writes certificates and input files into
    ``out_dir`` (None: nothing written) and returns the rows."""
    kw = dict(budget=budget, seed=seed, max_dim=max_dim, seeds=seeds)
    rows: list[ProbeRow] = []
    whole = search(sel, **kw)
    false = set(whole.failing)
    for t in sel.targets:
        if t.check in false:
            ev = whole.evidence
            status = FAILS_WITH_ALL + (" (empirical)" if ev == "empirical" else "")
            stem = f"{t.check if not sel.user else sel.id}__all_hypotheses"
            cert, ipath, chk = _found(sel, t, whole, None, out_dir, stem)
            rows.append(_row(sel, t, ALL_KEPT, "every hypothesis holds" if t.binders else "no hypotheses", status,
                             f"{t.check} fails on this input although every hypothesis holds", whole, cert, ipath,
                             chk, sel.recheck_command(None, ipath or "FILE", t)))
            for b in t.binders:
                rows.append(_row(sel, t, b.binder, b.text, NOT_PROBED,
                                 "the declaration fails with every hypothesis kept (row '(none dropped)'); "
                                 "dropping a hypothesis shows nothing"))
            continue
        if sel.user:
            if whole.checked:
                status, why = NO_COUNTEREXAMPLE, (f"the conjecture held on all {whole.checked} inputs satisfying its "
                                                  f"hypotheses ({whole.generated} drawn); this does not prove it")
            else:
                status, why = NOT_TESTED, _untested_reason(whole, "satisfying every hypothesis")
            rows.append(_row(sel, t, ALL_KEPT, "every hypothesis holds" if t.binders else "no hypotheses", status,
                             why, whole))
        if not t.binders:
            if not sel.user:
                rows.append(_row(sel, t, "—", "", NO_HYPOTHESES, "the declaration has no hypotheses to drop"))
            continue
        for b in t.binders:
            o = search(sel, targets=(t,), drop=b.binder, **kw)
            if o.found:
                status = NEEDED + (" (empirical)" if o.evidence == "empirical" else "")
                cert, ipath, chk = _found(sel, t, o, b.binder, out_dir, f"{t.check if not sel.user else sel.id}__{b.binder}")
                contra = (f" (this contradicts lean_map's unprobeable reason: {b.unprobeable})"
                          if getattr(b, "unprobeable", "") else "")
                rows.append(_row(sel, t, b.binder, b.text, status,
                                 f"{t.check} fails on this input, where {b.binder} is false and every other hypothesis "
                                 "holds" + contra, o, cert, ipath, chk, sel.recheck_command(b.binder, ipath or "FILE", t)))
            elif getattr(b, "unprobeable", ""):
                rows.append(_row(sel, t, b.binder, b.text, UNPROBEABLE, b.unprobeable, o))
            elif o.checked:
                rows.append(_row(sel, t, b.binder, b.text, NOT_SHOWN,
                                 f"the conclusion held on all {o.checked} inputs where only {b.binder} is false "
                                 f"({o.generated} drawn); this does not show the hypothesis is unnecessary", o))
            else:
                rows.append(_row(sel, t, b.binder, b.text, NOT_TESTED,
                                 _untested_reason(o, f"with {b.binder} false and the other hypotheses true"), o))
    return rows


def run_probes(selections, **kw) -> list[ProbeRow]:
    """Probe every declaration of every selection (:func:`probe_selection`)."""
    rows: list[ProbeRow] = []
    for sel in selections:
        rows.extend(probe_selection(sel, **kw))
    return rows


def short(obj: Any, limit: int = 90) -> str:
    """A counterexample in one short line (its ``kind`` left out)."""
    if obj is None:
        return "—"
    d = {k: v for k, v in obj.items() if k != "kind"}
    s = json.dumps(d, ensure_ascii=False, separators=(",", ":"))
    return s if len(s) <= limit else s[: limit - 1] + "…"


def markdown_table(rows: list[ProbeRow], params: dict, base: Path | None = None) -> str:
    """The probe table as Markdown (certificate paths relative to ``base``)."""
    def rel(p):
        if not p:
            return "—"
        try:
            return f"`{Path(p).relative_to(base)}`" if base else f"`{p}`"
        except ValueError:
            return f"`{p}`"

    lines = [
        "# Hypothesis-necessity probes, per Lean declaration",
        "",
        "For each hypothesis (Lean binder) of each declaration: an input on which that hypothesis is false,",
        "every other hypothesis of the declaration holds, and its conclusion -- evaluated with Lean's",
        "conventions (x/0 = 0) -- fails (\"needed\", with the shrunk counterexample as a format-2 certificate",
        "that the kernel re-checks). \"not shown necessary\": inputs violating it were evaluated and none broke",
        "the conclusion -- this does not mean the hypothesis is unnecessary. \"not tested\": no such input was",
        "found or evaluated. \"unprobeable\": no input of the declaration's types can break it with that hypothesis",
        "dropped, for the reason given (lean_map). A row \"(none dropped)\" attacks a declaration with every",
        "hypothesis kept (shown for user conjectures, and for any declaration that fails there).",
        "",
        "Search: " + ", ".join(f"{k} {v}" for k, v in params.items()),
        "",
        "| statement | label | declaration | binder | status | evidence | minimal counterexample (or why none exists) | tried | certificate | re-check |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ce = (r.reason if r.status == UNPROBEABLE else short(r.counterexample)).replace("|", "\\|")
        lines.append(f"| `{r.statement}` | {r.label} | `{r.check}` | `{r.binder}` | {r.status} | {r.evidence or '—'} | "
                     f"`{ce}` | {r.eligible_tried} | {rel(r.certificate)} | {r.recheck or '—'} |")
    lines.append("")
    return "\n".join(lines)


def write_tables(rows: list[ProbeRow], out_dir: str | Path, params: dict, stem: str = "probes") -> tuple[Path, Path]:
    """Write ``<stem>.md`` and ``<stem>.json`` into ``out_dir``."""
    from ..io.outputs import atomic_write_text

    d = Path(out_dir)
    md = d / f"{stem}.md"
    js = d / f"{stem}.json"
    atomic_write_text(md, markdown_table(rows, params, d))
    atomic_write_text(js, json.dumps({"params": params, "probes": [r.to_json() for r in rows]}, indent=1,
                                     ensure_ascii=False, sort_keys=True) + "\n")
    return md, js
