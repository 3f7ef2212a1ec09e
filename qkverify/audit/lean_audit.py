"""Blueprint cross-check (issue 5 item 4): lean_map versus the published
declaration list and the leanblueprint LaTeX.

Reads
* a ``lean_decls`` list (one fully qualified declaration per line), and/or
* leanblueprint LaTeX: statement environments ``theorem``, ``lemma``,
  ``proposition``, ``corollary``, ``definition`` with ``\\label{}``,
  ``\\lean{A, B}``, ``\\leanok`` and ``\\uses{}``; ``\\setcounter``,
  ``\\addtocounter`` and shared counters declared by
  ``\\newtheorem{lemma}[theorem]{...}`` are honoured when numbering,

and reports declarations without a lean_map entry, lean_map declarations the
list or blueprint does not have, numbering differences (arXiv v1 label vs
seed label vs the blueprint's own numbering) and a coverage table
(statement x declarations x checker x certificate x verified).

Pure data processing: no arithmetic, no floats.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..errors import QKInputError
from .leanmap import (
    LeanMapEntry,
    consistency,
    normalise_label,
    registry_problems,
)

KINDS = ("theorem", "lemma", "proposition", "corollary", "definition")


@dataclass(frozen=True)
class BlueprintStatement:
    """One statement environment of a leanblueprint file.

    kind    -- theorem / lemma / proposition / corollary / definition
    number  -- the blueprint's own number (None for starred environments)
    label   -- the ``\\label{}`` key ("" if none)
    title   -- the optional ``[...]`` title
    lean    -- declarations of all ``\\lean{}`` commands, in order
    leanok  -- whether ``\\leanok`` occurs in the statement
    uses    -- keys of all ``\\uses{}`` commands
    line    -- 1-based line of ``\\begin``
    """

    kind: str
    number: int | None
    label: str
    title: str
    lean: tuple[str, ...]
    leanok: bool
    uses: tuple[str, ...]
    line: int

    @property
    def display(self) -> str:
        """E.g. ``Proposition 6`` (or ``Proposition*`` when unnumbered)."""
        k = self.kind.capitalize()
        return f"{k} {self.number}" if self.number is not None else f"{k}*"

    @property
    def name(self) -> str:
        """``Proposition 6 (prop:low-rank)``."""
        return f"{self.display} ({self.label})" if self.label else self.display


_COMMENT = re.compile(r"(?<!\\)%.*$", re.MULTILINE)
_TOKEN = re.compile(
    r"\\setcounter\{(?P<sc>\w+)\}\{(?P<scv>-?\d+)\}"
    r"|\\addtocounter\{(?P<ac>\w+)\}\{(?P<acv>-?\d+)\}"
    r"|\\newtheorem\*?\{(?P<nt>\w+)\}(?:\[(?P<ntshare>\w+)\])?"
    r"|\\begin\{(?P<kind>" + "|".join(KINDS) + r")(?P<star>\*?)\}"
)
_LABEL = re.compile(r"\\label\{([^}]*)\}")
_LEAN = re.compile(r"\\lean\{([^}]*)\}")
_USES = re.compile(r"\\uses\{([^}]*)\}")
_LEANOK = re.compile(r"\\leanok(?![A-Za-z])")


def _split_list(s: str) -> list[str]:
    return [x.strip() for x in s.split(",") if x.strip()]


def _title(body: str) -> tuple[str, str]:
    """Split an optional leading ``[title]`` (brackets/braces may nest)."""
    stripped = body.lstrip()
    if not stripped.startswith("["):
        return "", body
    depth = 0
    for i, ch in enumerate(stripped):
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return stripped[1:i].strip(), stripped[i + 1:]
    return "", body


def parse_blueprint(text: str, source: str = "blueprint") -> list[BlueprintStatement]:
    """Parse leanblueprint LaTeX into statements, numbered as LaTeX would.

    Each kind has its own counter unless ``\\newtheorem{kind}[other]{..}``
    shares one; ``\\setcounter``/``\\addtocounter`` apply in document order;
    starred environments are unnumbered.  Comments (``%`` to end of line) are
    ignored.  Raises QKInputError (naming ``source`` and the line) when an
    environment is not closed, or when the text holds no statement
    environment at all.
    """
    text = _COMMENT.sub("", text)
    counters: dict[str, int] = {}
    shared: dict[str, str] = {}
    out: list[BlueprintStatement] = []
    pos = 0
    while True:
        m = _TOKEN.search(text, pos)
        if m is None:
            break
        if m.group("sc"):
            counters[m.group("sc")] = int(m.group("scv"))
            pos = m.end()
            continue
        if m.group("ac"):
            counters[m.group("ac")] = counters.get(m.group("ac"), 0) + int(m.group("acv"))
            pos = m.end()
            continue
        if m.group("nt"):
            if m.group("ntshare"):
                shared[m.group("nt")] = m.group("ntshare")
            pos = m.end()
            continue
        kind, star = m.group("kind"), m.group("star")
        line = text.count("\n", 0, m.start()) + 1
        end_tag = f"\\end{{{kind}{star}}}"
        end = text.find(end_tag, m.end())
        if end < 0:
            raise QKInputError(f"{source}:{line}: \\begin{{{kind}{star}}} is never closed")
        title, body = _title(text[m.end():end])
        number = None
        if not star:
            ctr = shared.get(kind, kind)
            counters[ctr] = counters.get(ctr, 0) + 1
            number = counters[ctr]
        lab = _LABEL.search(body)
        lean = [d for g in _LEAN.findall(body) for d in _split_list(g)]
        uses = [u for g in _USES.findall(body) for u in _split_list(g)]
        out.append(BlueprintStatement(
            kind=kind, number=number, label=lab.group(1).strip() if lab else "", title=title,
            lean=tuple(lean), leanok=bool(_LEANOK.search(body)), uses=tuple(uses), line=line,
        ))
        pos = end + len(end_tag)
    if not out:
        raise QKInputError(f"{source}: no theorem/lemma/proposition/corollary/definition environment found")
    return out


def read_blueprint(path: str | Path) -> list[BlueprintStatement]:
    """Read and parse a leanblueprint ``.tex`` file (see
    :func:`parse_blueprint`).  Raises QKInputError when unreadable."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise QKInputError(f"cannot read blueprint {p}: {err.__class__.__name__}") from None
    return parse_blueprint(text, str(p))


# ----------------------------------------------------------------- verifier

def find_verifier() -> Callable[[Path], Any] | None:
    """``qkverify.kernel.verifier.verify_file`` if that module exists, else None.

    Only a missing ``qkverify.kernel.verifier`` module means "no verifier"; an
    error inside an existing module propagates."""
    try:
        mod = importlib.import_module("qkverify.kernel.verifier")
    except ModuleNotFoundError as err:
        if err.name in ("qkverify.kernel.verifier",):
            return None
        raise
    fn = getattr(mod, "verify_file", None)
    return fn if callable(fn) else None


def _certificate_status(entry: LeanMapEntry, verifier: Callable | None) -> dict:
    if not entry.checker:
        return {"certificate": "-", "certificate_files": 0, "verified": "-", "verify_failures": []}
    files: list[Path] = []
    for rel in entry.certificates:
        d = entry.root / rel
        if d.is_dir():
            files.extend(sorted(d.rglob("*.json")))
    if not files:
        return {"certificate": "missing", "certificate_files": 0, "verified": "n/a", "verify_failures": []}
    if verifier is None:
        return {"certificate": "present", "certificate_files": len(files), "verified": "n/a",
                "verify_failures": []}
    ok, failures, partial = 0, [], 0
    for f in files:
        try:
            res = verifier(f)
            partial_ = False
            if hasattr(res, "ok"):
                good = bool(res.ok)
            else:  # qkverify.kernel.verifier.Outcome: valid / partial / invalid / unreadable
                status = getattr(res, "status", "")
                good = status in ("valid", "partial")
                partial_ = status == "partial"
            why = "" if good else str(getattr(res, "reason", "") or getattr(res, "message", "") or "not ok")
        except Exception as err:  # a broken certificate must not stop the audit
            good, why = False, f"{err.__class__.__name__}: {err}"
        if good:
            ok += 1
            partial += partial_
        else:
            failures.append({"file": str(f), "reason": why.splitlines()[0] if why else "not ok"})
    note = f", {partial} partially re-checked" if partial else ""
    verdict = f"ok ({ok}/{len(files)}{note})" if ok == len(files) else f"FAILED ({ok}/{len(files)} ok)"
    return {"certificate": "present", "certificate_files": len(files), "verified": verdict,
            "verify_failures": failures}


# ----------------------------------------------------------------- audit

_SECTION_ORDER = ("§1", "§2", "§3", "Appendix A", "Appendix B", "Appendix C")


def _natkey(s: str) -> tuple:
    """Natural sort key: ``Lemma 10`` after ``Lemma 9``."""
    return tuple((1, int(t), "") if t.isdigit() else (0, 0, t)
                 for t in re.split(r"(\d+)", normalise_label(s)) if t)


def _entry_order(e: LeanMapEntry) -> tuple:
    """SPEC order of sections (§1, §2, §3, Appendix A, B, C, then CLUSTERS),
    then natural label order."""
    rank = next((i for i, p in enumerate(_SECTION_ORDER) if e.section.startswith(p)), len(_SECTION_ORDER))
    return (rank, _natkey(e.label), e.id)


def run_audit(
    entries: Mapping[str, LeanMapEntry],
    decls: Iterable[str] | None = None,
    blueprint: Iterable[BlueprintStatement] | None = None,
    *,
    decls_source: str = "",
    blueprint_source: str = "",
    verifier: Callable | None | str = "auto",
    registry: Iterable | None | str = "auto",
) -> dict:
    """Cross-check the lean_map against a declaration list and a blueprint.

    entries   -- loaded lean_map (:func:`qkverify.leanmap.load_lean_map`)
    decls     -- declaration list, or None to skip that comparison
    blueprint -- parsed statements (:func:`parse_blueprint`), or None
    verifier  -- ``"auto"`` (use ``qkverify.kernel.verifier.verify_file`` if present),
                 a callable ``path -> object with .ok``, or None
    registry  -- ``"auto"`` (``registry.all_claims()``), claim objects, or None

    Returns a JSON-serialisable dict; ``report["exit"]`` is 0 when every
    declaration of the list and of the blueprint's ``\\lean{}`` commands is
    covered by exactly one lean_map entry, else 1.
    """
    decl_list = list(decls) if decls is not None else None
    # Present entries in SPEC order: the declaration list follows SPEC, so an
    # entry's first declaration fixes its place; entries without declarations
    # (CLUSTERS.md) follow in section / label order.
    pos = {d: i for i, d in enumerate(decl_list or ())}
    big = len(pos) + 1

    def order(e: LeanMapEntry) -> tuple:
        first = min((pos[d] for d in e.lean_decls if d in pos), default=big)
        return (first, _entry_order(e))

    ents = sorted(entries.values(), key=order)
    owner: dict[str, list[str]] = {}
    for e in ents:
        for d in e.lean_decls:
            owner.setdefault(d, []).append(e.id)
    by_id = {e.id: e for e in ents}
    stmts = list(blueprint) if blueprint is not None else None

    report: dict[str, Any] = {
        "lean_map_entries": len(ents),
        "lean_map_declarations": len(owner),
        "decls_source": decls_source if decl_list is not None else None,
        "decls_count": len(decl_list) if decl_list is not None else None,
        "blueprint_source": blueprint_source if stmts is not None else None,
        "blueprint_statements": len(stmts) if stmts is not None else None,
    }

    # -- declarations with no lean_map entry
    sources: dict[str, list[str]] = {}
    if decl_list is not None:
        for d in decl_list:
            if d not in owner:
                sources.setdefault(d, []).append("decls")
    if stmts is not None:
        for s in stmts:
            for d in s.lean:
                if d not in owner:
                    sources.setdefault(d, []).append(f"blueprint {s.name}")
    report["uncovered"] = [{"decl": d, "sources": src} for d, src in sources.items()]
    report["listed_twice"] = [{"decl": d, "entries": ids} for d, ids in owner.items() if len(ids) > 1]

    # -- lean_map declarations missing from the list / the blueprint
    if decl_list is not None:
        have = set(decl_list)
        report["not_in_decls"] = [{"decl": d, "entry": ids[0]} for d, ids in owner.items() if d not in have]
    else:
        report["not_in_decls"] = None
    if stmts is not None:
        bp_decls = {d for s in stmts for d in s.lean}
        report["not_in_blueprint"] = [{"decl": d, "entry": ids[0]} for d, ids in owner.items()
                                      if d not in bp_decls]
        if decl_list is not None:
            have = set(decl_list)
            report["blueprint_not_in_decls"] = sorted(d for d in bp_decls if d not in have)
        else:
            report["blueprint_not_in_decls"] = None
    else:
        report["not_in_blueprint"] = None
        report["blueprint_not_in_decls"] = None

    # -- blueprint statements: mapping, numbering, flags
    numbering: list[dict] = []
    for e in ents:
        if normalise_label(e.seed_label) != normalise_label(e.label):
            numbering.append({"entry": e.id, "against": "seed", "lean_map_label": e.label,
                              "other_label": e.seed_label, "note": e.numbering_note})
    unmapped, split, not_leanok, bad_uses, stmt_rows = [], [], [], [], []
    if stmts is not None:
        labels = {s.label for s in stmts if s.label}
        for s in stmts:
            hits: dict[str, int] = {}
            for d in s.lean:
                for eid in owner.get(d, []):
                    hits[eid] = hits.get(eid, 0) + 1
            row = {"statement": s.display, "label": s.label, "title": s.title, "line": s.line,
                   "lean": list(s.lean), "leanok": s.leanok, "uses": list(s.uses),
                   "entries": sorted(hits, key=lambda k: -hits[k])}
            stmt_rows.append(row)
            if not hits:
                unmapped.append({"statement": s.name, "line": s.line, "lean": list(s.lean),
                                 "reason": "no \\lean{} declaration" if not s.lean
                                 else "none of its declarations is in lean_map"})
            else:
                if len(hits) > 1:
                    split.append({"statement": s.name, "entries": row["entries"]})
                main = by_id[row["entries"][0]]
                if s.number is not None and normalise_label(s.display) != normalise_label(main.label):
                    numbering.append({
                        "entry": main.id, "against": "blueprint", "lean_map_label": main.label,
                        "other_label": s.display, "tex_label": s.label,
                        "note": ("blueprint agrees with the seed label"
                                 if normalise_label(s.display) == normalise_label(main.seed_label) else ""),
                    })
            if s.lean and not s.leanok:
                not_leanok.append(s.name)
            missing = [u for u in s.uses if u not in labels]
            if missing:
                bad_uses.append({"statement": s.name, "unknown": missing})
    report["blueprint_unmapped"] = unmapped if stmts is not None else None
    report["blueprint_split"] = split if stmts is not None else None
    report["blueprint_not_leanok"] = not_leanok if stmts is not None else None
    report["blueprint_unknown_uses"] = bad_uses if stmts is not None else None
    report["blueprint"] = stmt_rows if stmts is not None else None
    report["numbering"] = numbering

    # -- registry
    reg_lines: list[str] = []
    claims = None
    if registry == "auto":
        try:
            from .claims.registry import all_claims
            claims = all_claims()
        except Exception as err:  # a half-written claim module must not hide the audit
            reg_lines.append(f"registry unavailable: {err.__class__.__name__}: {err}".splitlines()[0])
    elif registry is not None:
        claims = list(registry)
    if claims is not None:
        reg_lines += consistency({c.id for c in claims}, by_id, public_decls=())
        reg_lines += registry_problems(claims, by_id)
        report["registered_claims"] = sorted(c.id for c in claims)
    else:
        report["registered_claims"] = None
    report["registry"] = reg_lines

    # -- coverage table
    vf = find_verifier() if verifier == "auto" else verifier
    report["verifier"] = "qkverify.kernel.verifier.verify_file" if (verifier == "auto" and vf) else (
        "custom" if vf else None)
    coverage = []
    for e in ents:
        row = {"id": e.id, "label": e.label, "section": e.section, "source": e.source,
               "declarations": len(e.lean_decls), "checker": e.checker or "-", "status": e.status}
        row.update(_certificate_status(e, vf))
        coverage.append(row)
    report["coverage"] = coverage

    report["covered_all"] = not report["uncovered"] and not report["listed_twice"]
    unverified = [r for r in report.get("coverage", []) if str(r.get("verified", "")).startswith("FAILED")]
    report["exit"] = 0 if report["covered_all"] and not unverified else 1
    return report


# ----------------------------------------------------------------- text output

def _first_sentence(s: str) -> str:
    m = re.match(r"(.+?[.;])(\s|$)", s)
    return m.group(1) if m else s


def render_text(report: dict) -> str:
    """Human-readable report (plain text, one finding per line)."""
    L: list[str] = []
    src = report.get("decls_source") or "-"
    head = f"lean-audit: {report['lean_map_entries']} lean_map entries, {report['lean_map_declarations']} declarations"
    if report.get("decls_count") is not None:
        head += f"; decls list {src} ({report['decls_count']})"
    if report.get("blueprint_source"):
        head += f"; blueprint {report['blueprint_source']} ({report['blueprint_statements']} statements)"
    L.append(head)

    def section(title: str, items: list[str] | None) -> None:
        if items is None:
            return
        L.append("")
        L.append(f"{title}: {'none' if not items else len(items)}")
        L.extend(f"  {x}" for x in items)

    section("Declarations with no lean_map entry",
            [f"{u['decl']}  [{'; '.join(u['sources'])}]" for u in report["uncovered"]])
    section("Declarations listed by several lean_map entries",
            [f"{x['decl']}  ({', '.join(x['entries'])})" for x in report["listed_twice"]])
    if report["not_in_decls"] is not None:
        section("lean_map declarations missing from the decls list",
                [f"{x['decl']}  (lean_map/{x['entry']}.toml)" for x in report["not_in_decls"]])
    if report["not_in_blueprint"] is not None:
        section("lean_map declarations missing from the blueprint",
                [f"{x['decl']}  (lean_map/{x['entry']}.toml)" for x in report["not_in_blueprint"]])
    if report.get("blueprint_not_in_decls") is not None:
        section("Blueprint \\lean{} declarations missing from the decls list", report["blueprint_not_in_decls"])
    if report["blueprint_unmapped"] is not None:
        section("Blueprint statements with no lean_map entry",
                [f"{x['statement']} (line {x['line']}): {x['reason']}" for x in report["blueprint_unmapped"]])
        section("Blueprint statements spread over several lean_map entries",
                [f"{x['statement']}: {', '.join(x['entries'])}" for x in report["blueprint_split"]])
        section("Blueprint statements with \\lean{} but no \\leanok", report["blueprint_not_leanok"])
        section("Blueprint \\uses{} of unknown labels",
                [f"{x['statement']}: {', '.join(x['unknown'])}" for x in report["blueprint_unknown_uses"]])
    nums = []
    for n in report["numbering"]:
        who = "seed" if n["against"] == "seed" else f"blueprint ({n.get('tex_label') or '?'})"
        line = f"{n['entry']}: arXiv v1 '{n['lean_map_label']}' vs {who} '{n['other_label']}'"
        if n.get("note"):
            line += f" -- {_first_sentence(n['note'])}"
        nums.append(line)
    section("Numbering differences", nums)
    section("Registry cross-check", report["registry"])

    L.append("")
    L.append("Coverage (statement x Lean declarations x checker x certificate x verified):")
    rows = [("statement", "id", "decls", "checker", "certificate", "verified")]
    for c in report["coverage"]:
        cert = c["certificate"] if c["certificate"] != "present" else f"present ({c['certificate_files']})"
        rows.append((c["label"], c["id"], str(c["declarations"]), c["checker"], cert, c["verified"]))
    widths = [min(max(len(r[i]) for r in rows), 44) for i in range(len(rows[0]))]
    for r in rows:
        L.append("  " + "  ".join(v.ljust(widths[i]) if i != 2 else v.rjust(widths[i])
                                  for i, v in enumerate(r)).rstrip())
    fails = [f for c in report["coverage"] for f in c.get("verify_failures", [])]
    if fails:
        L.append("")
        L.append(f"Certificates that did not verify: {len(fails)}")
        L.extend(f"  {f['file']}: {f['reason']}" for f in fails)

    L.append("")
    if report["covered_all"]:
        L.append(f"Result: every declaration is covered by exactly one lean_map entry "
                 f"({report['lean_map_declarations']} in lean_map).")
    else:
        L.append(f"Result: {len(report['uncovered'])} declaration(s) without an entry, "
                 f"{len(report['listed_twice'])} listed twice.")
    return "\n".join(L)

