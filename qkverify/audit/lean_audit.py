"""lean-audit: what the certificates establish about each Lean declaration, and
how the Lean map lines up with the declaration list and the blueprint.

Each declaration of ``lean_map/*.toml`` gets a status derived from the
certificates the kernel finds valid (never from the map):

* ``checked`` -- a theorem or lemma with a registered check and a valid
  certificate concluding ``holds`` on **exact or certified** evidence;
* ``sampled`` -- a theorem or lemma whose only support is **empirical**: valid
  certificates concluding ``consistent`` (a sample never makes a theorem
  checked);
* ``computed`` -- a definition with a registered check whose value a valid
  certificate computes;
* ``mapped only`` -- anything else, with the reason (the map's ``reason``, or
  why the certificates do not count).

A valid certificate concluding ``fails`` on exact or certified evidence is a
failure; one concluding ``inconsistent`` (a sample against the statement) is
listed as sampled evidence against, never a failure.  Failures also are: a
certificate with declaration records that the kernel does not find valid, a
record of a name the map does not hold, a shipped certificate missing or
changed (manifest), a declaration of the list or of the blueprint that no
``[[decl]]`` maps (and the reverse), a registered check that no ``[[decl]]``
names, a predicate id of a checked declaration with no registered decision.

:func:`run_lean_audit` runs the stages in order -- kernel verdicts
(:func:`verify_certificates`), records per declaration
(:func:`records_by_name`), statuses (:func:`declaration_status`), coverage
(:func:`coverage_failures`, :func:`registry_failures`), the blueprint
cross-check (:func:`blueprint_findings`) and the counts (:func:`count`) --
and :func:`audit` gathers its inputs (the shipped set through the manifest,
or a folder).  Pure data processing: no arithmetic, no floats.
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..claims import metadata
from ..claims.metadata import DeclMeta, StatementMeta
from .blueprint import SKELETON_PATH, BlueprintStatement, load_skeleton, read_blueprint
from .evidence import EVIDENCE_ORDER, Certificate, Record, Source, kernel_status, scan, shipped

STATUSES = ("checked", "sampled", "computed", "mapped only")
#: terminal width of the text report
WIDTH = 100


# ----------------------------------------------------------------- stage 1: kernel verdicts

def verify_certificates(certs: Iterable[Certificate], verify: Callable[[Path], str]) -> list[str]:
    """Ask the kernel about every certificate (``c.kernel``); one failure per certificate
    with declaration records that is not ``valid``."""
    failures = []
    for c in certs:
        try:
            c.kernel = verify(c.path)
        except Exception as err:  # a broken certificate must not stop the audit
            c.kernel = f"error ({err.__class__.__name__})"
        if c.kernel != "valid":
            failures.append(f"{c.name}: lists evaluated declarations but the kernel says '{c.kernel}'")
    return failures


# ----------------------------------------------------------------- stage 2: records per declaration

def records_by_name(certs: Iterable[Certificate], known: set[str]) -> tuple[dict[str, list[Record]], list[str]]:
    """The records of the valid certificates, by declaration name; one failure per record
    (of any certificate) naming a declaration the map does not hold."""
    out: dict[str, list[Record]] = {}
    failures = []
    for c in certs:
        for r in c.records:
            if r.name not in known:
                failures.append(f"{c.name}: evaluates {r.name}, which no lean_map [[decl]] maps")
            elif c.kernel == "valid":
                out.setdefault(r.name, []).append(r)
    return out, failures


# ----------------------------------------------------------------- stage 3: statuses

def _strongest(records: list[Record]) -> str:
    levels = {r.evidence for r in records}
    return next((lv for lv in EVIDENCE_ORDER if lv in levels), sorted(levels)[0] if levels else "")


def declaration_status(d: DeclMeta, records: list[Record], registered: bool) -> dict:
    """Status, evidence and reason of one declaration (or check unit) from the records of
    its valid certificates.  Also returns, under ``refuted`` and ``against``, how many
    records conclude ``fails`` (exact/certified) and ``inconsistent`` (empirical)."""
    tally = Counter(r.conclusion for r in records)
    if d.is_definition:
        good = [r for r in records if r.conclusion in ("computed", "holds", "consistent")]
        status = "computed" if registered and good else "mapped only"
    else:
        good = [r for r in records if r.conclusion == "holds"]
        status = "checked" if registered and good else "mapped only"
        if status == "mapped only" and registered and tally["consistent"]:
            good = [r for r in records if r.conclusion == "consistent"]
            status = "sampled"
    if status != "mapped only":
        reason = ""
    elif not registered:
        reason = d.reason or "no check registered for it"
    elif not records:
        reason = "check registered, but no valid certificate evaluates it"
    else:
        what = ", ".join(f"{k} {v}" for k, v in sorted(tally.items()))
        reason = f"check registered, but no valid certificate concludes 'holds' ({what})"
    return {
        "status": status, "evidence": _strongest(good) if status != "mapped only" else None,
        "reason": reason, "certificates": len(records),
        "conclusions": dict(sorted(Counter(r.label for r in records).items())),
        "refuted": tally["fails"], "against": tally["inconsistent"],
    }


# ----------------------------------------------------------------- stage 4: coverage

def coverage_failures(decls: list[DeclMeta], decl_list: list[str] | None) -> list[str]:
    """Declarations of the public list that no ``[[decl]]`` maps, and the reverse."""
    if decl_list is None:
        return []
    mapped = {d.name: d for d in decls}
    out = [f"{n}: in the declaration list but in no lean_map [[decl]]" for n in decl_list if n not in mapped]
    listed = set(decl_list)
    out += [f"{n}: mapped (lean_map/{mapped[n].statement}.toml) but not in the declaration list"
            for n in sorted(set(mapped) - listed)]
    return out


def registry_failures(decls: list[DeclMeta], registered: set[str], predicates: set[str] | None) -> list[str]:
    """The map against the code: a registered check no ``[[decl]]`` names, and a hypothesis
    predicate id of a declaration with a registered check that has no registered decision
    (``predicates`` None: not checked; instance arguments are not decided)."""
    checks = {d.check for d in decls}
    out = [f"check '{c}' is registered but no lean_map [[decl]] names it" for c in sorted(registered - checks)]
    if predicates is not None:
        for d in decls:
            if d.check in registered:
                out += [f"lean_map/{d.statement}.toml: {d.name}: predicate '{h.predicate}' of {h.binder} has no "
                        "registered decision" for h in d.hypotheses if h.predicate not in predicates]
    return out


# ----------------------------------------------------------------- stage 5: the blueprint

def normalise_label(label: str) -> str:
    """Canonical form of a statement label for comparisons.

    >>> normalise_label("Prop~5"), normalise_label("Def A1"), normalise_label("Lemma  4")
    ('proposition 5', 'definition a1', 'lemma 4')
    """
    s = re.sub(r"[\s~]+", " ", label.strip().lower())
    for short, full in (("def", "definition"), ("lem", "lemma"), ("lemma", "lemma"),
                        ("prop", "proposition"), ("cor", "corollary"), ("thm", "theorem")):
        s = re.sub(rf"^{short}\.?(?=\s|\d)", full, s)
    return re.sub(r"\s+", " ", s)


def _main_env(names: Iterable[str], env_of: Mapping[str, BlueprintStatement]) -> BlueprintStatement | None:
    envs = [env_of[n] for n in names if n in env_of]
    if not envs:
        return None
    counts = Counter(e.label or e.display for e in envs)
    best = max(counts.values())
    return next(e for e in envs if counts[e.label or e.display] == best)


def blueprint_index(blueprint: Iterable[BlueprintStatement] | None) -> dict[str, BlueprintStatement]:
    """Lean name -> the first blueprint environment whose ``\\lean{}`` lists it."""
    env_of: dict[str, BlueprintStatement] = {}
    for s in blueprint or ():
        for n in s.lean:
            env_of.setdefault(n, s)
    return env_of


def blueprint_findings(stmts: Iterable[StatementMeta], decls: list[DeclMeta],
                       blueprint: list[BlueprintStatement] | None) -> tuple[dict, list[str]]:
    """Numbering differences (against the seed's labels, and the blueprint's), declarations
    absent from the blueprint, statements spread over several environments, blueprint
    fields of the map that differ, unknown ``\\uses{}``, ``\\lean{}`` without ``\\leanok``
    -- and, as failures, blueprint ``\\lean{}`` names no ``[[decl]]`` maps.  Without a
    blueprint only the seed numbering is compared (the other findings are None)."""
    stmts = list(stmts)
    f: dict[str, Any] = {"numbering": [], "not_in_blueprint": None, "blueprint_mismatch": None, "split": None,
                         "unknown_uses": None, "not_leanok": None}
    for e in stmts:
        if normalise_label(e.seed_label) != normalise_label(e.label):
            f["numbering"].append({"statement": e.id, "against": "seed", "lean_map_label": e.label,
                                   "other_label": e.seed_label, "blueprint_label": "", "note": e.numbering_note})
    if blueprint is None:
        return f, []
    env_of = blueprint_index(blueprint)
    mapped = {d.name for d in decls}
    failures = [f"{n}: listed by blueprint {env_of[n].name} but in no lean_map [[decl]]"
                for n in env_of if n not in mapped]
    f["not_in_blueprint"] = [{"name": d.name, "statement": d.statement} for d in decls if d.name not in env_of]
    mism, split = [], []
    for e in stmts:
        main = _main_env(e.lean_decls, env_of) if e.decls else None
        if main is None:
            continue
        if main.number is not None and normalise_label(main.display) != normalise_label(e.label):
            f["numbering"].append({
                "statement": e.id, "against": "blueprint", "lean_map_label": e.label,
                "other_label": main.display, "blueprint_label": main.label,
                "note": ("blueprint agrees with the seed label"
                         if normalise_label(main.display) == normalise_label(e.seed_label) else ""),
            })
        envs = list(dict.fromkeys(env_of[n].label or env_of[n].display for n in e.lean_decls if n in env_of))
        if len(envs) > 1:
            split.append({"statement": e.id, "blueprint": envs,
                          "outside": [n for n in e.lean_decls if n in env_of and env_of[n] is not main]})
        if (e.blueprint, e.blueprint_number) != (main.label, main.display):
            mism.append({"statement": e.id, "field": "blueprint/blueprint_number",
                         "lean_map": f"{e.blueprint} / {e.blueprint_number}",
                         "blueprint": f"{main.label} / {main.display}"})
        for d in e.decls:
            actual = env_of[d.name].label if d.name in env_of else ""
            if d.blueprint != actual:
                mism.append({"statement": e.id, "field": f"{d.name}.blueprint", "lean_map": d.blueprint,
                             "blueprint": actual})
    labels = {s.label for s in blueprint if s.label}
    f["blueprint_mismatch"] = mism
    f["split"] = split
    f["unknown_uses"] = [{"statement": s.name, "unknown": [u for u in s.uses if u not in labels]}
                         for s in blueprint if any(u not in labels for u in s.uses)]
    f["not_leanok"] = [s.name for s in blueprint if s.lean and not s.leanok]
    return f, failures


# ----------------------------------------------------------------- stage 6: counts

def count(rows: list[dict]) -> dict:
    """Declarations, theorems (and lemmas), definitions, and how many are checked, sampled,
    computed and only mapped."""
    defs = [r for r in rows if r["kind"] in metadata.DEFINITION_KINDS]
    out = {"declarations": len(rows), "theorems": len(rows) - len(defs), "definitions": len(defs)}
    for s in STATUSES:
        out[s.replace(" ", "_")] = sum(r["status"] == s for r in rows)
    return out


# ----------------------------------------------------------------- the stages together

def run_lean_audit(
    statements: Mapping[str, StatementMeta],
    decls: Iterable[str] | None = None,
    blueprint: Iterable[BlueprintStatement] | None = None,
    *,
    certificates: Iterable[Certificate] = (),
    certificate_problems: Iterable[str] = (),
    registered: Iterable[str] | None = None,
    predicates: Iterable[str] | None = None,
    verify: Callable[[Path], str] | None = None,
    sources: Mapping[str, Any] | None = None,
    require_checked: bool = False,
) -> dict:
    """Derive each declaration's status and cross-check the map.

    statements   -- the Lean map (:func:`qkverify.claims.metadata.load`)
    decls        -- the public declaration list to cover (None: skip)
    blueprint    -- blueprint statements (:func:`load_skeleton`, :func:`read_blueprint`),
                    or None to skip the blueprint cross-check
    certificates -- certificates with their records (:mod:`.evidence`); ``certificate_problems``
                    the failures found reading them
    registered   -- registered check ids (None: the live registry); ``predicates`` the
                    registered predicate ids (None: the live registry when ``registered``
                    is None too, else not checked)
    verify       -- ``path -> kernel verdict`` (None: :func:`.evidence.kernel_status`)
    require_checked -- exit 1 unless every theorem/lemma is checked and every
                    definition computed (a sampled theorem is not checked)

    Returns a JSON-serialisable report; ``report["exit"]`` is 0 only when nothing
    fails (and, with ``require_checked``, nothing is sampled or only mapped).
    """
    if registered is None:
        from ..claims.registry import registered_check_ids, registered_predicates

        registered, predicates = registered_check_ids(), registered_predicates()
    registered = set(registered)
    predicates = set(predicates) if predicates is not None else None
    stmts = list(statements.values())
    lean = metadata.declarations(statements)
    units = metadata.declarations(statements, units=True)
    certs = list(certificates)

    failures = list(certificate_problems)
    failures += verify_certificates(certs, verify or kernel_status)
    records, unknown = records_by_name(certs, {d.name for d in lean + units})
    failures += unknown

    decl_list = list(decls) if decls is not None else None
    order = {n: i for i, n in enumerate(decl_list or ())}
    env_of = blueprint_index(blueprint)
    by_id = {e.id: e for e in stmts}
    against: list[str] = []

    def row(d: DeclMeta) -> dict:
        r = declaration_status(d, records.get(d.name, []), d.check in registered)
        if r["refuted"]:
            failures.append(f"{d.name}: {r['refuted']} valid certificate(s) conclude 'fails'")
        if r["against"]:
            against.append(f"{d.name}: {r['against']} valid certificate(s) conclude 'inconsistent' "
                           "(a sample against the statement: evidence, not a counterexample)")
        env = env_of.get(d.name)
        return {"name": d.name, "check": d.check, "kind": d.kind, "status": r["status"],
                "evidence": r["evidence"], "certificates": r["certificates"], "conclusions": r["conclusions"],
                "blueprint": env.label if env else (d.blueprint if blueprint is None else ""),
                "blueprint_number": env.display if env else "",
                "statement": d.statement, "statement_label": by_id[d.statement].label, "reason": r["reason"]}

    rows = [row(d) for d in sorted(lean, key=lambda x: (order.get(x.name, len(order)), x.statement))]
    unit_rows = [row(u) for u in units]
    failures += coverage_failures(lean, decl_list)
    failures += registry_failures(lean + units, registered, predicates)
    bp = list(blueprint) if blueprint is not None else None
    findings, bp_failures = blueprint_findings(stmts, lean, bp)
    failures += bp_failures
    findings["sampled_against"] = against

    statements_out = []
    first = {r["statement"]: i for i, r in reversed(list(enumerate(rows)))}
    for e in sorted(stmts, key=lambda x: (first.get(x.id, len(rows)), x.id)):
        mine = [r for r in rows if r["statement"] == e.id]
        c = count(mine)
        statements_out.append({"id": e.id, "label": e.label, "source": e.source, "declarations": len(mine),
                               "check_units": sum(u["statement"] == e.id for u in unit_rows),
                               **{k: c[k] for k in ("checked", "sampled", "computed", "mapped_only")}})

    counts = count(rows)
    unit_counts = count(unit_rows)
    unit_counts = {"check_units": unit_counts.pop("declarations"), **{k: unit_counts[k] for k in
                   ("checked", "sampled", "computed", "mapped_only")}}
    failures = list(dict.fromkeys(failures))
    not_full = counts["sampled"] + counts["mapped_only"]
    src = dict(sources or {})
    src.update({"lean_map_files": len(stmts), "decls_count": len(decl_list) if decl_list is not None else None,
                "blueprint_environments": len(bp) if bp is not None else None,
                "certificates_with_records": len(certs), "registered_checks": len(registered)})
    return {
        "counts": counts, "declarations": rows, "check_unit_counts": unit_counts, "check_units": unit_rows,
        "statements": statements_out, "findings": findings, "failures": failures,
        "require_checked": require_checked, "sources": src,
        "exit": 1 if failures or (require_checked and not_full) else 0,
    }


def audit(cert_dir: str | Path | None = None, *, lean_map: str | Path | None = None,
          decls: str | Path | None = None, blueprint: str | Path | None = None,
          manifest_path: str | Path | None = None, require_checked: bool = False,
          verify: Callable[[Path], str] | None = None) -> dict:
    """The lean-audit report on the certificates under ``cert_dir`` (None: the shipped set,
    read through the manifest), the Lean map (default ``lean_map/``), the declaration list
    (default: the shipped ``qkverify/data/lean_decls``) and the blueprint (a leanblueprint
    ``.tex``; default: the shipped skeleton).  QKInputError when an input is unreadable or
    malformed."""
    stmts = metadata.load(lean_map)
    decl_list = metadata.read_decls(decls)
    if blueprint is not None:
        bp, bp_source = read_blueprint(blueprint), str(blueprint)
    else:
        bp, info = load_skeleton()
        commit = str(info.get("commit", ""))[:7]
        bp_source = f"qkverify/data/{SKELETON_PATH.name}" + (f" (content.tex @ {commit})" if commit else "")
    source: Source = shipped(manifest_path) if cert_dir is None else scan(cert_dir)
    return run_lean_audit(
        stmts, decl_list, bp, certificates=source.certificates, certificate_problems=source.problems,
        verify=verify, require_checked=require_checked,
        sources={"lean_map": str(lean_map) if lean_map else "lean_map/",
                 "decls": str(decls) if decls else "qkverify/data/lean_decls", "blueprint": bp_source,
                 "certificates": source.description, "certificate_root": str(source.root)},
    )


# ----------------------------------------------------------------- text output

def count_lines(report: dict) -> list[str]:
    """The four counts, first thing lean-audit and ``qkverify audit`` print."""
    c = report["counts"]
    return [
        f"checked      {c['checked']:>3} of {c['theorems']} theorems and lemmas (exact or certified)",
        f"sampled      {c['sampled']:>3} of {c['theorems']} theorems and lemmas (empirical evidence only)",
        f"computed     {c['computed']:>3} of {c['definitions']} definitions",
        f"mapped only  {c['mapped_only']:>3} of {c['declarations']} declarations",
    ]


def unit_count_lines(report: dict) -> list[str]:
    """One line on the check units without a Lean name (clustering regimes), counted apart."""
    u = report["check_unit_counts"]
    return [f"check units (clustering regimes, no Lean name): {u['check_units']}: {u['checked']} checked, "
            f"{u['sampled']} sampled, {u['computed']} computed, {u['mapped_only']} mapped only"]


def _table(rows: list[tuple[str, ...]], right: set[int] = frozenset(), width: int = WIDTH) -> list[str]:
    """Rows within ``width`` columns (the last column cut with … when needed)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    used = 2 + sum(widths[:-1]) + 2 * (len(widths) - 1)
    widths[-1] = max(8, min(widths[-1], width - used))
    out = []
    for r in rows:
        cells = [v if len(v) <= widths[i] else v[:widths[i] - 1] + "…" for i, v in enumerate(r)]
        out.append("  " + "  ".join(v.rjust(widths[i]) if i in right else v.ljust(widths[i])
                                    for i, v in enumerate(cells)).rstrip())
    return out


def coverage_lines(report: dict) -> list[str]:
    """The counts, then one line per statement with declarations: checked, sampled,
    computed and mapped-only counts (within 100 columns)."""
    out = count_lines(report)
    rows = [("label", "decls", "chk", "smp", "cmp", "map", "statement")]
    for s in report["statements"]:
        if s["declarations"]:
            rows.append((s["label"], str(s["declarations"]), str(s["checked"]), str(s["sampled"]),
                         str(s["computed"]), str(s["mapped_only"]), s["id"]))
    out.append("")
    out += _table(rows, right={1, 2, 3, 4, 5})
    rest = [s["id"] for s in report["statements"] if not s["declarations"]]
    if rest:
        out += _wrap(f"({len(rest)} statements have no Lean declaration: {', '.join(rest)})", "  ")
    if report.get("check_units"):
        out += [""] + unit_count_lines(report)
    return out


def _wrap(text: str, indent: str = "", more: str = "      ") -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + more,
                         break_long_words=True, break_on_hyphens=False) or [indent]


def _first_sentence(s: str) -> str:
    m = re.match(r"(.+?[.;])(\s|$)", s)
    return m.group(1) if m else s


def render_text(report: dict) -> str:
    """The human-readable report within 100 columns: sources, counts, the table per
    statement, the declarations not checked or computed (sampled, only mapped), the
    check units, findings, failures and the result line.  ``--json`` has every row."""
    src = report["sources"]
    L = _wrap(f"lean-audit: {report['counts']['declarations']} Lean declarations in {src['lean_map_files']} "
              f"lean_map files; {src['registered_checks']} registered checks")
    L += _wrap(f"certificates: {src.get('certificates', '?')}", "  ")
    if src.get("blueprint"):
        L += _wrap(f"blueprint: {src['blueprint']}, {src['blueprint_environments']} environments", "  ")
    L += [""] + coverage_lines(report)

    def section(title: str, items: list[str] | None) -> None:
        if items is None:
            return
        L.append("")
        L.append(f"{title}: {'none' if not items else len(items)}")
        for x in items:
            L.extend(_wrap(x, "  "))

    def listing(rows: list[dict], status: str) -> list[str]:
        return [f"{r['name']} ({r['statement_label']}): " + (
            ", ".join(f"{k} {v}" for k, v in r["conclusions"].items()) if status == "sampled" else r["reason"])
            for r in rows if r["status"] == status]

    section("Sampled, not checked (empirical evidence only)", listing(report["declarations"], "sampled"))
    section("Only mapped", listing(report["declarations"], "mapped only"))
    units = report.get("check_units") or []
    section("Check units sampled", listing(units, "sampled"))
    section("Check units only mapped", listing(units, "mapped only"))

    f = report["findings"]
    nums = []
    for n in f["numbering"]:
        who = "seed" if n["against"] == "seed" else f"blueprint ({n['blueprint_label']})"
        line = f"{n['statement']}: lean_map '{n['lean_map_label']}' vs {who} '{n['other_label']}'"
        if n.get("note"):
            line += f" -- {_first_sentence(n['note'])}"
        nums.append(line)
    section("Numbering differences", nums)
    if f["not_in_blueprint"] is not None:
        section("Declarations absent from the blueprint",
                [f"{x['name']}  (lean_map/{x['statement']}.toml)" for x in f["not_in_blueprint"]])
        section("Statements spread over several blueprint environments",
                [f"{x['statement']}: {', '.join(x['blueprint'])} ({', '.join(x['outside'])} outside the main one)"
                 for x in f["split"]])
        section("lean_map blueprint fields that differ from the blueprint",
                [f"{x['statement']}: {x['field']} = '{x['lean_map']}', blueprint '{x['blueprint']}'"
                 for x in f["blueprint_mismatch"]])
        section("Blueprint \\uses{} of unknown labels",
                [f"{x['statement']}: {', '.join(x['unknown'])}" for x in f["unknown_uses"]])
        section("Blueprint statements with \\lean{} but no \\leanok", f["not_leanok"])
    section("Sampled evidence against (not failures)", f.get("sampled_against"))
    section("FAILURES", report["failures"])
    L.append("")
    L += _wrap(result_line(report))
    return "\n".join(L)


def result_line(report: dict) -> str:
    """``Result: …``: FAILED with the number of failures (or what --require-checked
    found), else the four counts."""
    c = report["counts"]
    if report["failures"]:
        return f"Result: FAILED ({len(report['failures'])} failure(s))."
    if report["require_checked"] and (c["sampled"] or c["mapped_only"]):
        return (f"Result: FAILED (--require-checked: {c['sampled']} theorem(s) only sampled, "
                f"{c['mapped_only']} declaration(s) only mapped).")
    return (f"Result: nothing fails; {c['checked']} checked, {c['sampled']} sampled, {c['computed']} computed, "
            f"{c['mapped_only']} only mapped.")
