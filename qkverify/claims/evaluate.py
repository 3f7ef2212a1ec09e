"""Evaluate a statement on one input, declaration by declaration.

For each Lean declaration of the statement (lean_map order) that has a
registered check for the input's kind: decide each of ITS hypotheses (Lean
binders, by their predicate), skip it when one fails (unless that binder is
dropped, as the hypothesis probes do), else run its check.  The records and
the witnesses the checks asked for make a format-3 certificate (docs/CERTIFICATES.md): a
theorem's record concludes holds / fails / undecided, or consistent / inconsistent on
empirical evidence; a definition's record is computed, with its value."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import certificates
from ..errors import QKInputError
from . import metadata
from .registry import DeclResult, NotApplicable, Subject, Undecided, _DECL_CHECKS, _ensure_loaded, _PREDICATES

EVIDENCE_ORDER = ("exact", "certified", "empirical")
#: a statement's verdict is the weakest of its records (a definition's ``computed`` counts as holds)
PRECEDENCE = ("fails", "undecided", "inconsistent", "consistent", "holds")
#: conclusions that are not a failure of the declaration
GOOD = ("holds", "computed", "consistent")


def verdict_of(conclusions: list[str]) -> str:
    """fails > undecided > inconsistent > consistent > holds (definitions only: holds)."""
    cs = ["holds" if c == "computed" else c for c in conclusions]
    return next((v for v in PRECEDENCE if v in cs), "holds")


@dataclass
class DeclRecord:
    """One evaluated declaration."""

    meta: metadata.DeclMeta
    hypotheses: dict[str, bool | None]
    dropped: tuple[str, ...]
    result: DeclResult

    @property
    def is_definition(self) -> bool:
        return self.meta.kind in ("def", "structure")

    @property
    def conclusion(self) -> str:
        """holds / fails / undecided; consistent / inconsistent on empirical evidence; computed
        for a definition whose value agrees with its defining lemmas (else undecided)."""
        c = self.result.conclusion
        if self.is_definition:
            return "computed" if c and self.result.value is not None else "undecided"
        if c is None:
            return "undecided"
        if self.result.evidence == "empirical":
            return "consistent" if c else "inconsistent"
        return "holds" if c else "fails"

    def to_json(self, inp: dict | None = None) -> dict:
        out: dict[str, Any] = {"name": self.meta.name, "check": self.meta.check, "hypotheses": self.hypotheses,
                               "conclusion": self.conclusion, "evidence": self.result.evidence}
        if self.dropped:
            out["dropped"] = list(self.dropped)
        if self.result.value is not None:
            out["value"] = self.result.value
        if self.result.evidence == "empirical" and self.conclusion != "undecided" and self.result.sample is not None:
            out["sample"] = self.result.sample   # seed (derived from the input), confidence, test, statistic
        return out


@dataclass
class StatementRun:
    """A statement evaluated on one input."""

    statement: metadata.StatementMeta
    subject: Subject
    records: list[DeclRecord] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (check id, reason)
    used: set = field(default_factory=set)  # witness keys asked for by the evaluated declarations

    @property
    def verdict(self) -> str:
        return verdict_of([r.conclusion for r in self.records])

    @property
    def evidence(self) -> str:
        return max((r.result.evidence for r in self.records), key=EVIDENCE_ORDER.index, default="exact")

    def failures(self) -> list[DeclRecord]:
        return [r for r in self.records if r.conclusion not in GOOD]

    def certificate(self, display: dict | None = None) -> dict:
        """The format-3 certificate of this run (witnesses sorted by kind and subject)."""
        ws = [self.subject.witnesses[k] for k in sorted(self.used, key=lambda k: (k[0], str(k[1])))]
        B = getattr(self.subject.inp, "B", None) if self.subject.kind == "head" else None
        if B is not None:  # "b : a basis of C": the kernel takes no inverse, it multiplies this one back
            from ..exact.rational import fmpq_str

            ws.append({"kind": "inverse", "of": "B", "rows": [[fmpq_str(B.inv()[i, j]) for j in range(B.ncols())]
                                                           for i in range(B.nrows())]})
            ws.sort(key=lambda w: (w["kind"], str(w.get("of"))))
        disp = {"label": self.statement.label, "statement": self.statement.text}
        disp.update(display or {})
        inp = self.subject.inp.to_json2()
        return certificates.build(self.statement.id, inp, ws, [r.to_json(inp) for r in self.records], self.verdict,
                                   self.evidence, disp)


def show_value(v: dict | None, limit: int = 60) -> str:
    """A definition's value in one short line: ``false``, ``3/4``, ``[1, 0, 0]``,
    ``root(x^2 - 2, [1.41, 1.42])``, ``3 × 3 matrix``, ``∈ [0.1, 0.2]``.

    >>> show_value({"bool": False}), show_value({"list": [{"exact": "1/2"}, {"ints": [1, 1, 0]}]})
    ('false', '[1/2, (1, 1, 0)]')
    """
    if v is None:
        return "?"
    (tag, x), = v.items()
    if tag == "bool":
        out = "true" if x else "false"
    elif tag == "exact":
        out = str(x)
    elif tag == "ints":
        out = "(" + ", ".join(str(t) for t in x) + ")"
    elif tag == "list":
        out = "[" + ", ".join(show_value(t, limit) for t in x) + "]"
    elif tag == "matrix":
        out = f"{len(x)} × {len(x[0]) if x else 0} matrix"
    elif tag == "enclosure":
        out = f"∈ [{x[0]}, {x[1]}]"
    elif tag == "root":
        from fractions import Fraction

        terms = [(int(c), k) for k, c in enumerate(x["poly"]) if int(c)]
        poly = " + ".join(f"{c}*x^{k}" if k else str(c) for c, k in reversed(terms)).replace("+ -", "- ")
        lo, hi = (float(Fraction(x[k])) for k in ("lo", "hi"))  # display only: the record keeps the exact ends
        out = f"root({poly}, [{lo:.6g}, {hi:.6g}])"
    else:
        out = str(x)
    return out if len(out) <= limit else out[: limit - 1] + "…"


def summary(rec: DeclRecord) -> str:
    """One line per record, as ``qkverify check`` prints it: a definition shows its value
    (``Nondegenerate = false``), a theorem its conclusion and evidence."""
    why = f" — {rec.result.reason}" if rec.result.reason else ""
    if rec.meta.is_definition and rec.result.value is not None:
        return f"{rec.meta.check} = {show_value(rec.result.value)}" + (
            f" [{rec.result.evidence}]" if rec.result.evidence != "exact" else "")
    return f"{rec.meta.check}: {rec.conclusion} [{rec.result.evidence}]{why}"


def _decide_hypotheses(d: metadata.DeclMeta, subject: Subject) -> dict[str, bool | None]:
    """Each Lean binder of ``d`` decided by its predicate: True, False, or None when the predicate
    cannot decide it exactly on this input (it raises :class:`Undecided`)."""
    out: dict[str, bool | None] = {}
    for h in d.hypotheses:
        try:
            out[h.binder] = bool(_PREDICATES[h.predicate](subject))
        except Undecided:
            out[h.binder] = None
    return out


def evaluate(statement_id: str, inp: Any, drop: tuple[str, ...] = (), only: tuple[str, ...] = (),
             headline: bool = False) -> StatementRun:
    """Evaluate every declaration of ``statement_id`` that applies to ``inp``.

    ``drop``: binders whose hypothesis may be false (probes); ``only``: restrict to these check
    ids.  A hypothesis its predicate cannot decide is ``None`` in the record and, unless dropped,
    makes the record ``undecided`` (naming it).  With ``headline`` (``qkverify check``), the
    statement's own declaration (or the one declaration of ``only``) must apply: when one of its
    hypotheses is false and not dropped, QKInputError "<label> does not apply: <binder> (<text>)
    is false on this input" (exit 2).  Raises QKInputError when no declaration could be
    evaluated, naming the hypotheses that failed."""
    _ensure_loaded()
    st = metadata.statement(statement_id)
    run = StatementRun(st, Subject(inp))
    head = only[0] if len(only) == 1 else st.id
    for d in st.decls:
        chk = _DECL_CHECKS.get(d.check)
        if chk is None or (only and d.check not in only):
            continue
        if inp.kind2 not in chk.kinds:
            run.skipped.append((d.check, f"not evaluated on a {inp.kind2} input"))
            continue
        run.subject.begin()  # a skipped declaration's witnesses stay out of the certificate
        try:
            hyps = _decide_hypotheses(d, run.subject)
            bad = [h for h in d.hypotheses if hyps[h.binder] is False and h.binder not in drop]
            if bad:
                if headline and d.check == head:
                    name = st.label if d.check == st.id and not only else d.check
                    raise QKInputError(f"{name} does not apply: {bad[0].binder} ({bad[0].text}) is false on this "
                                       f"input (--drop {bad[0].binder} evaluates it anyway)")
                run.skipped.append((d.check, f"hypothesis {bad[0].binder} ({bad[0].text}) fails"))
                continue
            open_ = [h for h in d.hypotheses if hyps[h.binder] is None and h.binder not in drop]
            if open_:
                res = DeclResult(None, reason=f"hypothesis {open_[0].binder} ({open_[0].text}) is not decided on "
                                              "this input")
            else:
                res = chk.fn(run.subject)
        except NotApplicable as err:
            run.skipped.append((d.check, str(err)))
            continue
        finally:
            asked = run.subject.end()
        run.used |= asked
        dropped = tuple(h.binder for h in d.hypotheses if h.binder in drop)
        run.records.append(DeclRecord(d, hyps, dropped, res))
    if not run.records:
        why = "; ".join(f"{c}: {r}" for c, r in run.skipped) or "no declaration of it has a registered check"
        raise QKInputError(f"{statement_id}: nothing to evaluate on this input ({why})")
    return run
