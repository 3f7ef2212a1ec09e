"""Auditing a published per-head table (the authors' float survey format).

* :mod:`.table`      -- reading the table (columns as the authors computed them);
* :mod:`.errormodel` -- the float error model of their pipeline;
* :mod:`.checks`     -- row checks against what the theorems imply (no weights);
* :mod:`.model`      -- with a model: the certified results joined on (layer, head);
* :mod:`.authors`    -- their columns computed as they do, from weights (tables, tests);
* :func:`audit`      -- all of it, returning per-row results and summaries.

Without weights every row is checked with :func:`.checks.check_row`; with
certified heads (``certified``: {(layer, head): CertifiedHead}) the rows of
the chosen table model are also judged with :func:`.model.judge_row`.
A row *contradicts* when a check says ``contradicts`` or, with a model, an
item disagrees *beyond the error model* (a certified value is a proved
fact): ``qkverify compare`` then exits 1.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path

from .checks import BAD, CHECKS, LOW, NA, OK, check_row, row_verdict
from .errormodel import ErrorModel
from .model import AGREE, BEYOND, LUCK, UNDECIDED, WITHIN, judge_row, judge_verdict

#: items judged against a model, in output order
JUDGED = ["signature", "a", "b", "c", "d", "face_c", "face_d", "c_vs_d"]


@dataclass
class Audit:
    """The result of :func:`audit`.

    rows       -- one dict per table row: model, layer, head, dim, verdict,
                  ``checks`` {name: (status, residual, note)}, and with a
                  model ``judged`` {item: (status, note)} and ``model_verdict``
    models     -- table model names in order of appearance
    joined     -- the table model joined with certified heads (or None)
    certified_name -- the certified model's name
    missing    -- (layer, head) of joined rows with no certified head
    """

    rows: list
    models: list
    error_model: ErrorModel
    joined: str | None = None
    certified_name: str | None = None
    missing: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def contradicts(self) -> bool:
        """True when a row contradicts a theorem (or a certified value) beyond the error model."""
        return any(r["verdict"] == "contradicts" or r.get("model_verdict") == "beyond" for r in self.rows)

    def summary(self) -> dict:
        """{model: {"rows": k, "checks": {check: {status: count}}, "judged": {item: {status: count}},
        "verdicts": {...}}}."""
        out: dict = {}
        for r in self.rows:
            s = out.setdefault(r["model"], {"rows": 0, "checks": {c: {} for c in CHECKS}, "judged": {},
                                            "verdicts": {}, "model_verdicts": {}})
            s["rows"] += 1
            for c, (st, _, _) in r["checks"].items():
                s["checks"][c][st] = s["checks"][c].get(st, 0) + 1
            s["verdicts"][r["verdict"]] = s["verdicts"].get(r["verdict"], 0) + 1
            if "judged" in r:
                for it, (st, _) in r["judged"].items():
                    s["judged"].setdefault(it, {})
                    s["judged"][it][st] = s["judged"][it].get(st, 0) + 1
                mv = r["model_verdict"]
                s["model_verdicts"][mv] = s["model_verdicts"].get(mv, 0) + 1
        return out


def audit(rows: list[dict], em: ErrorModel | None = None, certified: dict | None = None,
          table_model: str | None = None, certified_name: str | None = None) -> Audit:
    """Check every row (and, with ``certified``, judge the rows of
    ``table_model`` against it).  ``rows`` as :func:`.table.read_table` reads them."""
    em = em or ErrorModel()
    models: list = []
    out = []
    missing = []
    for r in rows:
        if r["model"] not in models:
            models.append(r["model"])
        res = check_row(r, em)
        o = {"model": r["model"], "layer": r["layer"], "head": r["head"], "dim": r["dim"], "line": r.get("_line"),
             "checks": res, "verdict": row_verdict(res), "table": r}
        if certified is not None and r["model"] == table_model:
            h = certified.get((r["layer"], r["head"]))
            if h is None:
                missing.append((r["layer"], r["head"]))
            else:
                j = judge_row(r, h, em)
                o["judged"] = j
                o["model_verdict"] = judge_verdict(j)
                o["certificate"] = h.certificate
                o["kappa"] = h.kappa
        out.append(o)
    return Audit(out, models, em, table_model if certified is not None else None, certified_name, missing)


# ---------------------------------------------------------------------------
# outputs


def _num(x):
    if x is None:
        return ""
    if isinstance(x, float):
        return "" if math.isnan(x) else repr(x)
    return x


def _table(a: Audit) -> tuple[list[str], list[list]]:
    """The per-row table (column names, rows of raw values) of :func:`csv_text` and :func:`json_doc`."""
    cols = ["model", "layer", "head", "dim", "verdict"]
    joined = a.joined is not None
    if joined:
        cols += ["model_verdict"]
    for c in CHECKS:
        cols += [c, f"{c}_residual"]
    if joined:
        cols += [f"model_{it}" for it in JUDGED] + ["kappa", "certificate"]
    cols += ["findings"]
    out = []
    for r in a.rows:
        line = [r["model"], r["layer"], r["head"], r["dim"], r["verdict"]]
        if joined:
            line.append(r.get("model_verdict", ""))
        for c in CHECKS:
            st, res, _ = r["checks"][c]
            line += [st, res]
        if joined:
            j = r.get("judged") or {}
            line += [j.get(it, ("", ""))[0] for it in JUDGED]
            line += [r.get("kappa"), r.get("certificate", "")]
        line.append(findings(r))
        out.append(line)
    return cols, out


def csv_text(a: Audit) -> str:
    """The per-row CSV: key columns, the row's verdicts, then per check its
    status and residual, per judged item its status, and the notes."""
    cols, lines = _table(a)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for line in lines:
        w.writerow([_num(x) for x in line])
    return buf.getvalue()


def json_doc(a: Audit) -> dict:
    """``qkverify compare --json``: the error model, the summary per model and the rows of
    compare.csv (the same columns; numbers as numbers, an empty residual as null)."""
    cols, lines = _table(a)

    def val(x):
        return None if x is None or (isinstance(x, float) and math.isnan(x)) else x

    return {"error_model": a.error_model.describe(), "joined": a.joined, "certified_name": a.certified_name,
            "summary": a.summary(), "notes": list(a.notes), "missing": [list(k) for k in a.missing],
            "contradicts": a.contradicts, "rows": [dict(zip(cols, map(val, line))) for line in lines]}


def findings(r: dict) -> str:
    """The notes of a row's checks and judged items that are not ok, joined by ' | '."""
    out = [f"{c}: {note}" for c, (st, _, note) in r["checks"].items() if st in (BAD, LOW) and note]
    for it, (st, note) in (r.get("judged") or {}).items():
        if st not in (AGREE, "n/a"):
            out.append(f"model {it}: {st}" + (f" ({note})" if note else ""))
    return " | ".join(out)


def summary_lines(a: Audit, width: int = 100) -> list[str]:
    """Terminal summary: per model, per check the counts of each status,
    then the judged items; every line at most ``width`` characters."""
    lines = [x[:width] for x in a.error_model.describe().splitlines()]
    st_cols = [OK, LOW, BAD, NA]
    for model, s in a.summary().items():
        v = s["verdicts"]
        lines.append("")
        lines.append(f"{model}: {s['rows']} rows; ok {v.get('ok', 0)}, flagged {v.get('flagged', 0)}, "
                     f"contradicts {v.get('contradicts', 0)}"[:width])
        lines.append(f"  {'check':<14}{'theorem':<26}{'ok':>7}{'below res.':>11}{'contradicts':>12}{'n/a':>6}")
        for c, counts in s["checks"].items():
            lines.append(f"  {c:<14}{CHECKS[c][1][:25]:<26}" + "".join(
                f"{counts.get(k, 0):>{w}}" for k, w in zip(st_cols, (7, 11, 12, 6))))
        if s["judged"]:
            mv = s["model_verdicts"]
            lines.append(f"  against {a.certified_name}: agree {mv.get('agree', 0)}, by luck {mv.get('luck', 0)}, "
                         f"disagree within {mv.get('within', 0)}, beyond {mv.get('beyond', 0)}, "
                         f"undecided {mv.get('undecided', 0)}"[:width])
            lines.append(f"  {'item':<14}{'agree':>7}{'by luck':>9}{'within':>8}{'beyond':>8}{'undecided':>11}{'n/a':>6}")
            for it in JUDGED:
                counts = s["judged"].get(it, {})
                lines.append(f"  {it:<14}" + "".join(f"{counts.get(k, 0):>{w}}" for k, w in
                                                      zip((AGREE, LUCK, WITHIN, BEYOND, UNDECIDED, NA),
                                                          (7, 9, 8, 8, 11, 6))))
    if a.missing:
        lines.append(f"{len(a.missing)} joined rows have no certified head (e.g. layer {a.missing[0][0]} head "
                     f"{a.missing[0][1]})"[:width])
    for n in a.notes:
        lines.append(n[:width])
    bad = [r for r in a.rows if r["verdict"] == "contradicts" or r.get("model_verdict") == "beyond"]
    for r in bad[:10]:
        lines.append(f"CONTRADICTS {r['model']} L{r['layer']}H{r['head']} (line {r['line']}): {findings(r)}"[:width])
    if len(bad) > 10:
        lines.append(f"… and {len(bad) - 10} more rows that contradict (see the CSV)")
    return lines


def report_section(a: Audit, csv_name: str = "compare.csv", max_rows: int = 20000) -> dict:
    """JSON-ready data of the report's compare section: the checks with
    their statements and theorems, the summary, and the rows that are not
    plain ``ok`` (at most ``max_rows``; the CSV has them all)."""
    keep = [r for r in a.rows if r["verdict"] != "ok" or r.get("model_verdict") not in (None, "agree")]
    cols = {"model": [], "layer": [], "head": [], "verdict": [], "model_verdict": [], "findings": [], "cert": []}
    for r in keep[:max_rows]:
        cols["model"].append(r["model"])
        cols["layer"].append(r["layer"])
        cols["head"].append(r["head"])
        cols["verdict"].append(r["verdict"])
        cols["model_verdict"].append(r.get("model_verdict", ""))
        cols["findings"].append(findings(r))
        cols["cert"].append(r.get("certificate", ""))
    return {"checks": {c: {"statement": s, "theorem": t} for c, (s, t) in CHECKS.items()},
            "summary": a.summary(), "error_model": a.error_model.describe(), "csv": csv_name,
            "joined": a.joined, "certified_name": a.certified_name, "rows": cols, "n_rows": len(a.rows),
            "n_listed": len(keep), "truncated": max(0, len(keep) - max_rows)}


def write_csv(a: Audit, path: str | Path) -> None:
    """Write :func:`csv_text` atomically."""
    from ..io.outputs import atomic_write_bytes

    atomic_write_bytes(path, csv_text(a).encode("utf-8"))
