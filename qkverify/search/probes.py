"""Hypothesis-necessity probes.

For every named hypothesis ``h`` of every registered claim, search for an
input on which ``h`` fails, every other hypothesis holds, and the claim's
conclusion (evaluated directly, with Lean's conventions such as x/0 = 0)
fails.  Outcomes:

* ``needed``              -- such an input was found; it is shrunk, written
                             as a certificate plus a bare input file, and
                             re-read from that file and re-evaluated
                             (``recheck``) before it is reported;
* ``not shown necessary`` -- none was found within the budget.  This never
                             means the hypothesis is unnecessary; the row
                             says how many eligible inputs were tried (0 when
                             the strategies never produced an input violating
                             exactly this hypothesis).

A failure decided by Monte Carlo (evidence ``empirical``) is reported as
``needed (empirical)``.

Before dropping anything, the statement itself is attacked with *every*
hypothesis kept (row ``hypothesis = "(none dropped)"``).  If it fails there,
the row says ``fails with all hypotheses`` with the shrunk counterexample,
its certificate and input file, re-read and re-evaluated like the others;
the per-hypothesis probes are then skipped (``not probed``): dropping a
hypothesis of a false statement shows nothing.  For a user conjecture
(section ``user conjectures``) the row is always shown -- ``no
counterexample`` when none was found, which proves nothing; for the
built-in statements it is shown only when one fails (a bug).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import QKInputError
from .driver import SearchOutcome, input_json, search, write_counterexample

NEEDED = "needed"
#: input kinds with a file form that ``qkverify check`` reads
FILE_KINDS = ("matrix", "matrix_n", "symmetric", "head", "orthogonal", "law")
NOT_SHOWN = "not shown necessary"
NOT_TESTED = "not tested"  # no input violating only that hypothesis was generated / checked
FAILS_WITH_ALL = "fails with all hypotheses"  # a counterexample to the statement as stated
NO_COUNTEREXAMPLE = "no counterexample"  # the statement with all its hypotheses survived the search
NOT_PROBED = "not probed"  # skipped: the statement already fails with every hypothesis kept
#: the ``hypothesis`` field of the row that keeps every hypothesis
ALL_KEPT = "(none dropped)"
USER_SECTION = "user conjectures"


@dataclass
class ProbeRow:
    """One (claim, hypothesis) probe."""

    claim: str
    label: str
    hypothesis: str
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
    errors: int

    def to_json(self) -> dict:
        """JSON form without the wall time (so the written table is reproducible)."""
        d = asdict(self)
        d.pop("seconds")
        return d


def load_claim_input(path: str | Path, claim) -> Any:
    """Read an input file the way ``qkverify check`` does for this claim
    (law inputs through :meth:`LawInput.from_document`)."""
    from ..exact.rational import read_input_file

    if claim.input_kind == "law":
        from ..io.inputs import LawInput

        return LawInput.from_document(read_input_file(path), str(path))
    from ..io.inputs import load_input

    return load_input(path, claim.input_kind)


def recheck(claim, drop: str | None, input_path: Path) -> str:
    """Re-read the written input and re-evaluate: returns ``"ok"`` when the
    conclusion fails and exactly ``drop`` is the failing hypothesis (no
    hypothesis fails, when ``drop`` is None), else a one-line description of
    the mismatch."""
    try:
        inp = load_claim_input(input_path, claim)
    except QKInputError as err:
        return f"input file not readable: {err}"
    bad = [h.name for h in claim.failed_hypotheses(inp)]
    if bad != ([] if drop is None else [drop]):
        return f"hypotheses failing on the re-read input: {bad}"
    res = claim.conclusion(inp)
    if res.verdict != "fails":
        return f"conclusion on the re-read input: {res.verdict}"
    return "ok"


def _write_found(claim, o: SearchOutcome, drop: str | None, out_dir, stem: str):
    """Certificate, input file and re-check of a found counterexample:
    (certificate path, input path, re-check) as strings, or Nones."""
    if out_dir is None:
        return None, None, None
    c, i = write_counterexample(claim, o, out_dir, "probe", stem=stem)
    if claim.input_kind in FILE_KINDS:
        chk = recheck(claim, drop, i)
    else:
        chk = "n/a (custom input kind: no input file form to re-read)"
    return str(c), str(i), chk


def probe_statement(claim, *, budget: int = 200, seed: int = 0, max_dim: int = 4,
                    out_dir: str | Path | None = "certificates/probes") -> ProbeRow:
    """Search for a counterexample with every hypothesis of ``claim`` kept:
    the row ``(none dropped)`` with status FAILS_WITH_ALL (counterexample
    written and re-checked when ``out_dir``), NO_COUNTEREXAMPLE, or
    NOT_TESTED when no eligible input could be checked."""
    o: SearchOutcome = search(claim, budget=budget, seed=seed, max_dim=max_dim)
    text = "every hypothesis holds" if claim.hypotheses else "no hypotheses"
    if o.found:
        cert, ipath, chk = _write_found(claim, o, None, out_dir, f"{claim.id}__all_hypotheses")
        return ProbeRow(claim.id, claim.label, ALL_KEPT, text,
                        FAILS_WITH_ALL if o.result.evidence != "empirical" else FAILS_WITH_ALL + " (empirical)",
                        o.result.evidence, input_json(o.input),
                        "the statement fails on this input although every hypothesis holds: " + o.result.reason,
                        o.first_found_after, o.generated, round(o.seconds, 3), cert, ipath, chk, len(o.errors))
    if o.checked == 0:
        status = NOT_TESTED
        reason = (f"the search never checked an input satisfying every hypothesis ({o.generated} generated, "
                  f"{o.eligible} eligible, {len(o.errors)} checker errors); nothing was tested")
    else:
        status = NO_COUNTEREXAMPLE
        reason = (f"the statement held on all {o.eligible} eligible inputs ({o.generated} generated); "
                  "this does not prove it")
    return ProbeRow(claim.id, claim.label, ALL_KEPT, text, status, None, None, reason, o.eligible, o.generated,
                    round(o.seconds, 3), None, None, None, len(o.errors))


def probe_claim(claim, *, budget: int = 200, seed: int = 0, max_dim: int = 4,
                out_dir: str | Path | None = "certificates/probes") -> list[ProbeRow]:
    """Probe ``claim``: first the statement with every hypothesis kept
    (:func:`probe_statement`), then every hypothesis dropped in turn; write
    certificates when ``out_dir``.  See the module docstring for which rows
    are returned."""
    rows = []
    whole = probe_statement(claim, budget=budget, seed=seed, max_dim=max_dim, out_dir=out_dir)
    false = whole.status.startswith(FAILS_WITH_ALL)
    if false or claim.section == USER_SECTION:
        rows.append(whole)
    if false:
        for h in claim.hypotheses:
            rows.append(ProbeRow(claim.id, claim.label, h.name, h.text, NOT_PROBED, None, None,
                                 "the statement fails with every hypothesis kept (row '(none dropped)'); "
                                 "dropping a hypothesis shows nothing", 0, 0, 0.0, None, None, None, 0))
        return rows
    for h in claim.hypotheses:
        o: SearchOutcome = search(claim, budget=budget, seed=seed, max_dim=max_dim, drop=h.name)
        cert = ipath = chk = None
        if o.found:
            status = NEEDED if o.result.evidence != "empirical" else NEEDED + " (empirical)"
            cert, ipath, chk = _write_found(claim, o, h.name, out_dir, f"{claim.id}__{h.name}")
            ce = input_json(o.input)
            reason = o.result.reason
            ev = o.result.evidence
        else:
            status, ce, ev = NOT_SHOWN, None, None
            reason = (f"no input violating only '{h.name}' with a failing conclusion among {o.eligible} eligible "
                      f"inputs ({o.generated} generated); this does not show the hypothesis is unnecessary")
            if o.checked == 0:
                status = NOT_TESTED
                reason = (f"the search never checked an input violating only '{h.name}' "
                          f"({o.generated} generated, {o.eligible} eligible, {len(o.errors)} checker errors); "
                          "nothing was tested")
        rows.append(ProbeRow(claim.id, claim.label, h.name, h.text, status, ev, ce, reason,
                             o.first_found_after if o.found else o.eligible, o.generated,
                             round(o.seconds, 3), cert, ipath, chk, len(o.errors)))
    return rows


def run_probes(claims, **kw) -> list[ProbeRow]:
    """Probe every hypothesis of every claim in ``claims`` (see probe_claim)."""
    rows: list[ProbeRow] = []
    for c in claims:
        rows.extend(probe_claim(c, **kw))
    return rows


def _short(obj: Any, limit: int = 90) -> str:
    if obj is None:
        return "—"
    d = {k: v for k, v in obj.items() if k != "kind"}
    s = json.dumps(d, ensure_ascii=False, separators=(",", ":"))
    return s if len(s) <= limit else s[: limit - 1] + "…"


def markdown_table(rows: list[ProbeRow], params: dict) -> str:
    """The probe table as Markdown."""
    lines = [
        "# Hypothesis-necessity probes",
        "",
        "For each named hypothesis: an input violating exactly that hypothesis (all others hold) on which the",
        "conclusion, evaluated with Lean's conventions (x/0 = 0), fails. \"not shown necessary\" means the search",
        "found none within its budget; it does not mean the hypothesis is unnecessary. A row \"(none dropped)\"",
        "attacks the statement with every hypothesis kept (shown for user conjectures, and for any statement that",
        "fails there: then it is false as stated and its hypotheses are not probed).",
        "",
        "Search: " + ", ".join(f"{k} {v}" for k, v in params.items()),
        "",
        "| claim | label | hypothesis | status | evidence | minimal counterexample | tried | re-check |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ce = _short(r.counterexample).replace("|", "\\|")
        lines.append(f"| `{r.claim}` | {r.label} | `{r.hypothesis}` | {r.status} | {r.evidence or '—'} | `{ce}` | "
                     f"{r.eligible_tried} | {r.recheck or '—'} |")
    lines.append("")
    return "\n".join(lines)


def write_tables(rows: list[ProbeRow], out_dir: str | Path, params: dict, stem: str = "probes") -> tuple[Path, Path]:
    """Write ``<stem>.md`` and ``<stem>.json`` into ``out_dir``."""
    from ..io.outputs import atomic_write_text

    d = Path(out_dir)
    md = d / f"{stem}.md"
    js = d / f"{stem}.json"
    atomic_write_text(md, markdown_table(rows, params))
    atomic_write_text(js, json.dumps({"params": params, "probes": [r.to_json() for r in rows]}, indent=1,
                                     ensure_ascii=False, sort_keys=True) + "\n")
    return md, js
