"""The conformance sheet: every Lean declaration as qkverify checks it, for a
reviewer to read beside the Lean file.

Per declaration (grouped by Lean file, in the order of the declaration list):
its binders and conclusion as the project transcribes them (``lean_map/``),
its hypotheses, each with the predicate that decides it and what the
hypothesis probes found when it is dropped (the shipped probe table
``certificates/probes/probes.json``) or why no counterexample can exist (the
map's ``unprobeable``); the producer's check function and the kernel's rule,
each as file and line range found by introspection of the code (so the sheet
never points at stale lines); the input kinds; the lean-audit status and the
conclusion/evidence kinds of its certificates.

``qkverify lean-audit --sheet FILE`` writes it; the shipped copy is
``docs/conformance.md`` (``make audit`` regenerates it, and a test checks it is
what the tree produces).  Deterministic: no dates, no machine paths.
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
from pathlib import Path
from typing import Any, Callable

from ..claims import metadata
from ..claims.metadata import REPO_ROOT, DeclMeta

#: the probe table, relative to the audited certificates' folder
PROBE_TABLE = Path("probes") / "probes.json"
SHIPPED_SHEET = REPO_ROOT / "docs" / "conformance.md"


@functools.lru_cache(maxsize=64)
def _lambda_spans(path: str) -> tuple[tuple[int, int, int, int, int], ...]:
    """For every lambda of a Python file: (line, body column, body end column on its line,
    first, last) where first..last are the lines of the innermost call, tuple or statement
    that holds it -- the registration ``thm(name, …, lambda q: …)``, ``predicate(id)(lambda
    …)``, or one entry of a registration loop's table."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    parent: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parent[child] = node
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda):
            up = parent.get(node)
            while up is not None and not isinstance(up, (ast.Call, ast.Tuple, ast.stmt)):
                up = parent.get(up)
            holder = up or node
            body = node.body
            end = body.end_col_offset if body.end_lineno == body.lineno else 10 ** 6
            out.append((node.lineno, body.col_offset, end, holder.lineno, holder.end_lineno or holder.lineno))
    return tuple(out)


def source_range(fn: Callable | None) -> dict | None:
    """Where ``fn`` is defined: ``{"file": path relative to the repository (POSIX),
    "first": line, "last": line, "function": qualified name}`` -- decorators included; for a
    lambda, the call (or table entry) that registers it.  None when unknown."""
    if fn is None:
        return None
    fn = inspect.unwrap(fn)
    try:
        lines, first = inspect.getsourcelines(fn)
        path = Path(inspect.getsourcefile(fn) or "").resolve()
    except (OSError, TypeError):
        return None
    last = first + len(lines) - 1
    if fn.__name__ == "<lambda>":
        code = fn.__code__
        cols = [c for ln, _, c, _ in code.co_positions() if ln == code.co_firstlineno and c is not None]
        col = min(cols) if cols else None
        spans = [sp for sp in _lambda_spans(str(path)) if sp[0] == code.co_firstlineno]
        hit = [sp for sp in spans if col is not None and sp[1] <= col < sp[2]] or spans
        if hit:
            first, last = hit[0][3], hit[0][4]
    try:
        rel = path.relative_to(REPO_ROOT).as_posix()
    except ValueError:
        rel = path.name
    return {"file": rel, "first": first, "last": last, "function": fn.__qualname__}


def registration(chk: Any, ref: dict | None) -> int | None:
    """The line of ``chk``'s ``declaration_check(...)`` call when it lies outside ``ref`` (a
    function made by a factory, or registered in a loop); None otherwise."""
    path, line = getattr(chk, "registered_at", ("", 0))
    if not line or ref is None or Path(path).resolve() != (REPO_ROOT / ref["file"]).resolve():
        return None
    return None if ref["first"] <= line <= ref["last"] else line


def _code(ref: dict | None, registered: int | None = None) -> str:
    if ref is None:
        return "none"
    lines = f"line {ref['first']}" if ref["first"] == ref["last"] else f"lines {ref['first']}–{ref['last']}"
    return f"`{ref['file']}` {lines} (`{ref['function']}`)" + (
        f", registered at line {registered}" if registered else "")


def _short_ref(ref: dict | None) -> str:
    if ref is None:
        return "none"
    span = str(ref["first"]) if ref["first"] == ref["last"] else f"{ref['first']}–{ref['last']}"
    return f"`{ref['file']}:{span}`"


def read_probe_table(root: str | Path) -> tuple[dict[tuple[str, str], dict], dict]:
    """The probe table under the certificates' folder ``root``: rows by (declaration, binder),
    and the table's search parameters ({} and {} when there is no table)."""
    p = Path(root) / PROBE_TABLE
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}, {}
    rows = {}
    for r in doc.get("probes", []) if isinstance(doc, dict) else []:
        if isinstance(r, dict) and isinstance(r.get("declaration"), str) and isinstance(r.get("binder"), str):
            rows[(r["declaration"], r["binder"])] = r
    return rows, dict(doc.get("params") or {}) if isinstance(doc, dict) else {}


def _short_json(obj: Any, limit: int = 90) -> str:
    s = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    return s if len(s) <= limit else s[:limit - 1] + "…"


def _dropped(probe: dict | None, unprobeable: str) -> str:
    """What dropping one hypothesis shows: the probe's outcome, or why none can exist."""
    if probe is None:
        found = ""
    else:
        st = probe.get("status", "")
        if st.startswith("needed"):
            found = (f"**{st}**: counterexample `{_short_json(probe.get('counterexample'))}`"
                     + (f" (`{probe['certificate']}`)" if probe.get("certificate") else ""))
        elif st == "not shown necessary":
            found = f"not shown necessary: no counterexample among {probe.get('eligible_tried', 0)} inputs tried"
        else:
            why = probe.get("reason") or ""
            found = st + (f" ({why})" if why else "")
    if unprobeable:
        text = f"no counterexample can exist: {unprobeable}"
        if found.startswith("**needed"):
            text += f" -- **but the probe table has one**: {found}"
        return text
    return found or "not in the probe table"


def _span(text: str) -> str:
    """``text`` as a Markdown code span (on one line)."""
    text = " ".join(text.split())
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def sheet_entries(report: dict, lean_map: str | Path | None = None) -> list[dict]:
    """The sheet's data, one dict per declaration (then per check unit): what the map
    transcribes, where the producer check and the kernel rule are, input kinds, status and
    certificate kinds from ``report`` (:func:`qkverify.audit.lean_audit.audit`), and per
    hypothesis the probe outcome read from the probe table beside the audited certificates."""
    from ..claims.registry import declaration_check_fn, predicate_fn, registered_check_ids
    from ..kernel.table import PREDICATES, TABLE

    import qkverify.kernel.rules  # noqa: F401  (fills the kernel's table)

    stmts = metadata.load(lean_map)
    decls = {d.name: d for st in stmts.values() for d in st.decls}
    probes, _ = read_probe_table(report["sources"].get("certificate_root", "certificates"))
    registered = registered_check_ids()

    def pred_fn(pid: str) -> Callable | None:
        try:
            return predicate_fn(pid)
        except KeyError:
            return None

    out = []
    for row in report["declarations"] + report.get("check_units", []):
        d: DeclMeta = decls[row["name"]]
        st = stmts[d.statement]
        chk = declaration_check_fn(d.check) if d.check in registered else None
        kernel = TABLE.get(d.name)
        hyps = []
        for h in d.hypotheses:
            hyps.append({"binder": h.binder, "text": h.text, "predicate": h.predicate,
                         "producer": source_range(pred_fn(h.predicate)),
                         "kernel": source_range(PREDICATES.get(h.predicate)),
                         "unprobeable": h.unprobeable, "probe": probes.get((d.name, h.binder))})
        out.append({
            "name": d.name, "kind": d.kind, "unit": d.is_unit, "lean_file": d.lean_file,
            "statement": st.id, "label": st.label, "blueprint": d.blueprint,
            "arguments": d.arguments, "conclusion": d.conclusion, "hypotheses": hyps,
            "instances": [{"class": i.cls, "predicate": i.predicate, "unprobeable": i.unprobeable}
                          for i in d.instances],
            "all_kept": probes.get((d.name, "(none dropped)")),
            "producer": source_range(chk.fn) if chk else None,
            "registered_at": registration(chk, source_range(chk.fn)) if chk else None,
            "kernel": source_range(kernel.fn) if kernel else None,
            "input_kinds": list(chk.kinds) if chk else [],
            "kernel_kinds": list(kernel.kinds) if kernel else [],
            "status": row["status"], "evidence": row["evidence"], "reason": row["reason"],
            "conclusions": row["conclusions"],
        })
    return out


def render_sheet(entries: list[dict], report: dict, probe_params: dict) -> str:
    """The sheet as Markdown (LF line endings, no trailing spaces)."""
    c = report["counts"]
    src = report["sources"]
    params = ", ".join(f"{k} {v}" for k, v in sorted(probe_params.items())) or "no probe table"
    L = [
        "# Conformance sheet: each Lean declaration as qkverify checks it",
        "",
        "Written by `qkverify lean-audit --sheet` (`make audit` writes this file, `docs/conformance.md`; a test",
        "checks that the tree regenerates it byte for byte). Do not edit it by hand.",
        "",
        "Read each entry beside its Lean file (`aodesky/attention-bilinear-forms`, `formalization/`).",
        "*binders*, *hypotheses* and *conclusion* are the project's transcription in `lean_map/`;",
        "each hypothesis names the predicate that decides it (producer and kernel code) and what",
        "dropping it shows: the hypothesis probes' outcome from the shipped probe table",
        f"(`certificates/probes/probes.json`: {params}) or why no counterexample can exist.",
        "*producer check* is the function in `qkverify/claims/` that evaluates the declaration and",
        "writes its certificate record; *kernel rule* is the entry of the independent kernel's table",
        "(`qkverify/kernel/rules/`) that decides it again from the certificate's witnesses. Their",
        "lines are found by introspection when the sheet is written. *status* is lean-audit's:",
        "`checked` (exact or certified `holds`), `sampled` (empirical evidence only), `computed`",
        "(a definition's value), `mapped only`; *certificates* counts the valid shipped",
        "certificates' records by conclusion/evidence.",
        "",
        f"Certificates: {src.get('certificates', '?')}.",
        "",
        f"Counts: checked {c['checked']} and sampled {c['sampled']} of {c['theorems']} theorems and lemmas, "
        f"computed {c['computed']} of {c['definitions']} definitions, mapped only {c['mapped_only']} of "
        f"{c['declarations']} declarations.",
    ]
    current = None
    for e in entries:
        group = e["lean_file"] or "Clustering regimes: check units without a Lean name"
        if group != current:
            current = group
            L += ["", f"## {group}"]
        evidence = f" ({e['evidence']})" if e["evidence"] else ""
        L += ["", f"### `{e['name']}` — {e['kind']}", ""]
        where = f"{e['label']} (`{e['statement']}`)" + (f", blueprint `{e['blueprint']}`" if e["blueprint"] else "")
        L.append(f"- statement: {where}")
        L.append(f"- status: **{e['status']}**{evidence}" + (f" -- {e['reason']}" if e["reason"] else ""))
        kinds = ", ".join(f"{k} {v}" for k, v in e["conclusions"].items()) or "none"
        L.append(f"- certificates: {kinds}")
        L.append(f"- binders: {_span(e['arguments'])}")
        if not e["hypotheses"] and not e["instances"]:
            L.append("- hypotheses: none")
        else:
            L.append("- hypotheses:")
            for h in e["hypotheses"]:
                L.append(f"  - `{h['binder']}`: {_span(h['text'])} -- predicate `{h['predicate']}` "
                         f"(producer {_short_ref(h['producer'])}, kernel {_short_ref(h['kernel'])}); "
                         f"dropped: {_dropped(h['probe'], h['unprobeable'])}")
            for i in e["instances"]:
                why = f"; no counterexample can exist: {i['unprobeable']}" if i["unprobeable"] else ""
                L.append(f"  - instance argument `[{i['class']}]` (predicate `{i['predicate']}`): not decided, every "
                         f"input qkverify takes is one{why}")
        if e["all_kept"] is not None:
            L.append(f"- with every hypothesis kept: {_dropped(e['all_kept'], '')}")
        L.append(f"- conclusion: {_span(e['conclusion'])}")
        L.append(f"- producer check: {_code(e['producer'], e['registered_at'])}")
        L.append(f"- kernel rule: {_code(e['kernel'])}")
        kinds = ", ".join(e["input_kinds"]) or "none"
        if e["kernel_kinds"] and e["kernel_kinds"] != e["input_kinds"]:
            kinds += f" (kernel: {', '.join(e['kernel_kinds'])})"
        L.append(f"- input kinds: {kinds}")
    return "\n".join(line.rstrip() for line in L) + "\n"


def sheet_text(report: dict, lean_map: str | Path | None = None) -> str:
    """The conformance sheet of a lean-audit report (:func:`render_sheet` of :func:`sheet_entries`)."""
    _, params = read_probe_table(report["sources"].get("certificate_root", "certificates"))
    return render_sheet(sheet_entries(report, lean_map), report, params)


def write_sheet(report: dict, path: str | Path, lean_map: str | Path | None = None) -> Path:
    """Write the sheet to ``path`` atomically; QKInputError when it cannot be written."""
    from ..io.outputs import atomic_write_text

    return atomic_write_text(path, sheet_text(report, lean_map))
