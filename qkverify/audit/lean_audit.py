"""lean-audit (issue 9): what the shipped certificates prove about each Lean
declaration, and how the lean_map lines up with the blueprint.

Per declaration of ``lean_map/*.toml`` the audit derives the status itself:

* ``checked`` (a theorem or lemma) / ``computed`` (a definition): a check
  function is registered for its check id
  (:func:`qkverify.claims.registry.registered_check_ids`) **and** at least one
  certificate under ``certificates/`` lists the declaration among its
  evaluated ``declarations`` with conclusion ``holds``, and the kernel finds
  that certificate valid.  Only certificate format 2 counts: a top-level list
  ``"declarations"`` of objects with ``"name"`` (full Lean name),
  ``"conclusion"`` (``holds`` / ``fails`` / ``undecided``) and
  ``"evidence"``.  The evidence level reported is the strongest among those
  certificates (exact > certified > empirical).
* ``mapped only``: anything else, with the reason the lean_map gives (or why
  a registered check does not count yet).

The blueprint cross-check runs from the skeleton shipped in
``qkverify/data/blueprint.json`` (environments, ``\\label`` keys, numbers as
the blueprint's counters render them, ``\\lean{}`` names) or from a
leanblueprint ``.tex`` file.  Numbering differences and declarations absent
from the blueprint are findings; uncovered declarations, checkers or check ids
that name nothing registered while the data claims checked/computed, code or
certificate references that do not resolve, format-2 certificates the kernel
rejects, and valid certificates concluding ``fails`` are failures (exit 1).

Pure data processing: no arithmetic, no floats.
"""

from __future__ import annotations

import functools
import importlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..claims.registry import all_claims, registered_check_ids
from ..errors import QKInputError
# The one switch point to the kernel: becomes `from ..kernel import verify_file`
# once issue 8's entry point (statuses valid / invalid / undecided / not a
# certificate / not checkable) is on main.
from ..kernel import verify_file as _kernel_verify_file
from ..models.installed import default_weights_dirs
from .leanmap import (
    DEFINITION_KINDS,
    REPO_ROOT,
    LeanMapEntry,
    all_decls,
    check_units,
    consistency,
    normalise_label,
    registry_problems,
)

KINDS = ("theorem", "lemma", "proposition", "corollary", "definition")
#: Evidence levels, strongest first.
EVIDENCE_ORDER = ("exact", "certified", "empirical")
CONCLUSIONS = ("holds", "fails", "undecided", "consistent", "inconsistent", "computed")
#: The blueprint skeleton shipped with the package.
SKELETON_PATH = Path(__file__).resolve().parents[1] / "data" / "blueprint.json"
SKELETON_FORMAT = "qkverify-blueprint-skeleton/1"
DEFAULT_CERT_DIR = REPO_ROOT / "certificates"


# ----------------------------------------------------------------- blueprint

@dataclass(frozen=True)
class BlueprintStatement:
    """One statement environment of a leanblueprint file.

    kind    -- theorem / lemma / proposition / corollary / definition
    number  -- the number as the blueprint renders it ("5", "A1"); None when starred
    label   -- the ``\\label{}`` key ("" if none)
    lean    -- declarations of all ``\\lean{}`` commands, in order
    leanok  -- whether ``\\leanok`` occurs in the statement
    uses    -- keys of all ``\\uses{}`` commands
    line    -- 1-based line of ``\\begin`` (None in the shipped skeleton)
    chapter -- 1-based chapter number (0 before the first ``\\chapter``)
    """

    kind: str
    number: str | None
    label: str
    lean: tuple[str, ...]
    leanok: bool
    uses: tuple[str, ...]
    line: int | None = None
    chapter: int = 0

    @property
    def display(self) -> str:
        """E.g. ``Proposition 5``, ``Definition A1`` (``Theorem*`` when unnumbered)."""
        k = self.kind.capitalize()
        return f"{k} {self.number}" if self.number is not None else f"{k}*"

    @property
    def name(self) -> str:
        """``Proposition 5 (prop:low-rank)``."""
        return f"{self.display} ({self.label})" if self.label else self.display


_COMMENT = re.compile(r"(?<!\\)%.*$", re.MULTILINE)
_BRACED = r"(?:[^{}]|\{[^{}]*\})*"
_TOKEN = re.compile(
    r"\\setcounter\{(?P<sc>\w+)\}\{(?P<scv>-?\d+)\}"
    r"|\\addtocounter\{(?P<ac>\w+)\}\{(?P<acv>-?\d+)\}"
    r"|\\newtheorem\*?\{(?P<nt>\w+)\}(?:\[(?P<ntshare>\w+)\])?\{[^{}]*\}(?:\[(?P<ntwithin>\w+)\])?"
    r"|\\renewcommand\{?\\the(?P<rc>\w+)\}?\{(?P<rcfmt>" + _BRACED + r")\}"
    r"|\\chapter\*?(?:\[[^\]]*\])?\{"
    r"|\\begin\{(?P<kind>" + "|".join(KINDS) + r")(?P<star>\*?)\}"
)
_LABEL = re.compile(r"\\label\{([^}]*)\}")
_LEAN = re.compile(r"\\lean\{([^}]*)\}")
_USES = re.compile(r"\\uses\{([^}]*)\}")
_LEANOK = re.compile(r"\\leanok(?![A-Za-z])")
_COUNTER_FMT = re.compile(r"\\(arabic|Alph|alph)\{(\w+)\}")


def _split_list(s: str) -> list[str]:
    return [x.strip() for x in s.split(",") if x.strip()]


def _skip_title(body: str) -> str:
    """Drop an optional leading ``[title]`` (brackets/braces may nest)."""
    stripped = body.lstrip()
    if not stripped.startswith("["):
        return body
    depth = 0
    for i, ch in enumerate(stripped):
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return stripped[i + 1:]
    return body


def _render(fmt: str, counters: Mapping[str, int], source: str, line: int) -> str:
    def one(m: re.Match) -> str:
        v = counters.get(m.group(2), 0)
        if m.group(1) == "arabic":
            return str(v)
        if not 1 <= v <= 26:
            raise QKInputError(f"{source}:{line}: counter {m.group(2)} = {v} has no letter")
        return chr(ord("A" if m.group(1) == "Alph" else "a") + v - 1)

    out = _COUNTER_FMT.sub(one, fmt)
    if "\\" in out or "{" in out:
        raise QKInputError(f"{source}:{line}: unsupported counter format '{fmt}'")
    return out


def parse_blueprint(text: str, source: str = "blueprint") -> list[BlueprintStatement]:
    """Parse leanblueprint LaTeX into statements, numbered as LaTeX would.

    Each kind has its own counter unless ``\\newtheorem{kind}[other]{..}``
    shares one, and is reset per chapter (and prefixed "chapter.") when
    declared ``\\newtheorem{kind}{..}[chapter]``; ``\\setcounter`` /
    ``\\addtocounter`` apply in document order; ``\\renewcommand{\\thekind}``
    with ``\\arabic`` / ``\\Alph`` / ``\\alph`` changes how numbers render
    (e.g. ``A\\arabic{definition}`` gives "A1"); starred environments are
    unnumbered.  Comments (``%`` to end of line) are ignored.  Raises
    QKInputError (naming ``source`` and the line) when an environment is not
    closed, a counter format is not supported, or the text holds no statement
    environment at all.
    """
    text = _COMMENT.sub("", text)
    counters: dict[str, int] = {}
    shared: dict[str, str] = {}
    within: dict[str, str] = {}
    formats: dict[str, str] = {}
    chapter = 0
    out: list[BlueprintStatement] = []
    pos = 0
    while True:
        m = _TOKEN.search(text, pos)
        if m is None:
            break
        pos = m.end()
        line = text.count("\n", 0, m.start()) + 1
        if m.group("sc"):
            counters[m.group("sc")] = int(m.group("scv"))
        elif m.group("ac"):
            counters[m.group("ac")] = counters.get(m.group("ac"), 0) + int(m.group("acv"))
        elif m.group("nt"):
            if m.group("ntshare"):
                shared[m.group("nt")] = m.group("ntshare")
            if m.group("ntwithin"):
                within[m.group("nt")] = m.group("ntwithin")
        elif m.group("rc"):
            formats[m.group("rc")] = m.group("rcfmt")
        elif m.group("kind"):
            kind, star = m.group("kind"), m.group("star")
            end_tag = f"\\end{{{kind}{star}}}"
            end = text.find(end_tag, m.end())
            if end < 0:
                raise QKInputError(f"{source}:{line}: \\begin{{{kind}{star}}} is never closed")
            body = _skip_title(text[m.end():end])
            number = None
            if not star:
                ctr = shared.get(kind, kind)
                counters[ctr] = counters.get(ctr, 0) + 1
                default = (f"\\arabic{{chapter}}.\\arabic{{{ctr}}}" if within.get(ctr) == "chapter"
                           else f"\\arabic{{{ctr}}}")
                number = _render(formats.get(ctr, default), {**counters, "chapter": chapter}, source, line)
            lab = _LABEL.search(body)
            out.append(BlueprintStatement(
                kind=kind, number=number, label=lab.group(1).strip() if lab else "",
                lean=tuple(d for g in _LEAN.findall(body) for d in _split_list(g)),
                leanok=bool(_LEANOK.search(body)),
                uses=tuple(u for g in _USES.findall(body) for u in _split_list(g)),
                line=line, chapter=chapter,
            ))
            pos = end + len(end_tag)
        else:  # \chapter
            chapter += 1
            for ctr, w in within.items():
                if w == "chapter":
                    counters[ctr] = 0
    if not out:
        raise QKInputError(f"{source}: no theorem/lemma/proposition/corollary/definition environment found")
    return out


def read_blueprint(path: str | Path) -> list[BlueprintStatement]:
    """Read and parse a leanblueprint ``.tex`` file (see :func:`parse_blueprint`).

    When a ``web.tex`` sits next to the file (the leanblueprint layout
    ``blueprint/src/{web,content}.tex``), its preamble (everything before
    ``\\begin{document}``) is read first, so its ``\\newtheorem`` counter setup
    applies.  Raises QKInputError when a file is unreadable or malformed.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
        web = p.parent / "web.tex"
        if p.name != "web.tex" and web.is_file():
            text = web.read_text(encoding="utf-8").split("\\begin{document}")[0] + "\n" + text
    except (OSError, UnicodeDecodeError) as err:
        raise QKInputError(f"cannot read blueprint {p}: {err.__class__.__name__}") from None
    return parse_blueprint(text, str(p))


def skeleton_dict(statements: Iterable[BlueprintStatement], source: Mapping[str, Any]) -> dict:
    """The JSON form of a parsed blueprint (the format of
    ``qkverify/data/blueprint.json``): facts only, no prose.

    ``source`` describes where the statements came from (repository, path,
    commit, preamble).  Line numbers are dropped (they depend on prose).
    """
    return {
        "format": SKELETON_FORMAT,
        "source": dict(source),
        "environments": [
            {"kind": s.kind, "label": s.label, "number": s.number, "display": s.display,
             "chapter": s.chapter, "lean": list(s.lean), "leanok": s.leanok, "uses": list(s.uses)}
            for s in statements
        ],
    }


_SKELETON_KEYS = {"kind", "label", "number", "display", "chapter", "lean", "leanok", "uses"}


def load_skeleton(path: str | Path | None = None) -> tuple[list[BlueprintStatement], dict]:
    """Load a blueprint skeleton (default: the shipped
    ``qkverify/data/blueprint.json``).  Returns (statements, source info).

    Raises QKInputError (one line) when the file is unreadable, not JSON, of
    another format, or an environment is malformed (unknown keys, wrong
    types, a display that does not match kind and number)."""
    p = Path(path) if path is not None else SKELETON_PATH
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise QKInputError(f"cannot read blueprint skeleton {p}: {err.__class__.__name__}") from None
    except json.JSONDecodeError as err:
        raise QKInputError(f"blueprint skeleton {p}: not JSON ({err.msg}, line {err.lineno})") from None
    if not isinstance(doc, dict) or doc.get("format") != SKELETON_FORMAT or not isinstance(doc.get("environments"), list):
        raise QKInputError(f"blueprint skeleton {p}: not a {SKELETON_FORMAT} document")
    out = []
    for i, env in enumerate(doc["environments"]):
        bad = f"blueprint skeleton {p}: environments[{i}]"
        if not isinstance(env, dict) or set(env) != _SKELETON_KEYS:
            raise QKInputError(f"{bad} must have exactly the keys {', '.join(sorted(_SKELETON_KEYS))}")
        ok = (env["kind"] in KINDS and isinstance(env["label"], str)
              and (env["number"] is None or isinstance(env["number"], str))
              and isinstance(env["chapter"], int) and isinstance(env["leanok"], bool)
              and all(isinstance(x, str) for x in env["lean"]) and all(isinstance(x, str) for x in env["uses"]))
        if not ok:
            raise QKInputError(f"{bad} has a field of the wrong type")
        s = BlueprintStatement(kind=env["kind"], number=env["number"], label=env["label"], lean=tuple(env["lean"]),
                               leanok=env["leanok"], uses=tuple(env["uses"]), line=None, chapter=env["chapter"])
        if s.display != env["display"]:
            raise QKInputError(f"{bad}: display '{env['display']}' does not match kind and number ('{s.display}')")
        out.append(s)
    return out, dict(doc.get("source") or {})


# ----------------------------------------------------------------- certificates

def kernel_status(path: Path) -> str:
    """The kernel's verdict on one certificate file: ``valid``, ``invalid``,
    ``undecided``, ``not a certificate``, ``not checkable`` (issue 8), or, from
    the current kernel, ``partial`` / ``unreadable`` / ``skipped``.  Only
    ``valid`` counts for lean-audit.  Cached per (file, size, mtime) within a process
    (certificates of real models take the kernel seconds)."""
    p = Path(path).resolve()
    try:
        st = p.stat()
    except OSError:
        return str(_kernel_verify_file(path, default_weights_dirs()).status)
    return _kernel_status(str(p), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=4096)
def _kernel_status(path: str, size: int, mtime_ns: int) -> str:
    return str(_kernel_verify_file(Path(path), default_weights_dirs()).status)


@dataclass(frozen=True)
class EvaluatedDecl:
    """One item of a format-2 certificate's ``declarations`` list."""

    name: str
    conclusion: str
    evidence: str


@dataclass
class Certificate:
    """A format-2 certificate: its path, the declarations it evaluated, and
    the kernel's verdict (filled in by :func:`run_lean_audit`)."""

    path: Path
    declarations: tuple[EvaluatedDecl, ...]
    kernel: str = ""


def _evidence_level(ev: Any) -> str:
    if isinstance(ev, str):
        return ev
    if isinstance(ev, Mapping):
        for key in ("level", "kind", "evidence"):
            if isinstance(ev.get(key), str):
                return ev[key]
    return "unknown"


def scan_certificates(root: str | Path | None = None) -> tuple[list[Certificate], list[str]]:
    """Format-2 certificates under ``root`` (default: the repository's
    ``certificates/``), searched recursively for ``*.json``.

    Returns (certificates, problems).  A JSON file whose top level has no
    ``"declarations"`` list (a format-1 certificate, a summary table) is
    skipped: it counts for nothing, and so does a record with ``dropped``
    hypotheses (a probe's counterexample to the declaration without them,
    ``certificates/probes/``).  A ``"declarations"`` list whose items are
    not objects with a string ``name`` and a ``conclusion`` in
    holds/fails/undecided is a problem line (a failure of the audit).
    """
    base = Path(root) if root is not None else DEFAULT_CERT_DIR
    certs: list[Certificate] = []
    problems: list[str] = []
    if not base.is_dir():
        return certs, problems
    for f in sorted(base.rglob("*.json")):
        try:
            doc = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue  # not JSON: not a format-2 certificate (the kernel reports unreadable ones)
        if not isinstance(doc, dict) or "declarations" not in doc:
            continue
        items = doc["declarations"]
        evaluated = []
        ok = isinstance(items, list)
        for it in items if ok else ():
            if not (isinstance(it, dict) and isinstance(it.get("name"), str)
                    and it.get("conclusion") in CONCLUSIONS):
                ok = False
                break
            if it.get("dropped"):  # a probe: the declaration evaluated without a hypothesis says nothing of it
                continue
            evaluated.append(EvaluatedDecl(it["name"], it["conclusion"], _evidence_level(it.get("evidence"))))
        if ok and items and not evaluated:
            continue  # only probe records: not evidence about any declaration
        if not ok:
            problems.append(f"{f}: 'declarations' must list objects with a name and a conclusion in "
                            f"{'/'.join(CONCLUSIONS)}")
            continue
        certs.append(Certificate(f, tuple(evaluated)))
    return certs, problems


# ----------------------------------------------------------------- the audit

def _resolve_code(ref: str) -> bool:
    mod, _, attr = ref.partition(":")
    try:
        obj = importlib.import_module(mod)
    except ImportError:
        return False
    for part in attr.split(".") if attr else ():
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def _main_env(names: Iterable[str], env_of: Mapping[str, BlueprintStatement]) -> BlueprintStatement | None:
    envs = [env_of[n] for n in names if n in env_of]
    if not envs:
        return None
    counts: dict[str, int] = {}
    for e in envs:
        counts[e.label or e.display] = counts.get(e.label or e.display, 0) + 1
    best = max(counts.values())
    return next(e for e in envs if counts[e.label or e.display] == best)


def _registry_defaults() -> tuple[set[str], list]:
    """Registered per-declaration check ids and statement-level claims."""
    return set(registered_check_ids()), list(all_claims())


def run_lean_audit(
    entries: Mapping[str, LeanMapEntry],
    decls: Iterable[str] | None = None,
    blueprint: Iterable[BlueprintStatement] | None = None,
    *,
    registered: Iterable[str] | None = None,
    claims: Iterable | None = None,
    certificates: Iterable[Certificate] | None = None,
    certificate_problems: Iterable[str] = (),
    verify: Callable[[Path], str] | None = None,
    decls_source: str = "",
    blueprint_source: str = "",
    require_checked: bool = False,
) -> dict:
    """Derive each declaration's status and cross-check the map.

    entries      -- loaded lean_map (:func:`qkverify.audit.leanmap.load_lean_map`)
    decls        -- the public declaration list to cover (None: skip)
    blueprint    -- blueprint statements (:func:`load_skeleton` or
                    :func:`read_blueprint`), or None to skip the cross-check
    registered   -- registered check ids (None: ``registered_check_ids()``)
    claims       -- statement-level claims with ``.id`` (None: ``all_claims()``)
    certificates -- format-2 certificates (None: :func:`scan_certificates`)
    verify       -- ``path -> kernel status`` (None: :func:`kernel_status`)
    require_checked -- exit 1 when any declaration is only mapped

    Returns a JSON-serialisable report; ``report["exit"]`` is 0 only when
    nothing fails (and, with ``require_checked``, nothing is only mapped).
    """
    ents = list(entries.values())
    mdecls = all_decls(ents)
    by_name = {d.name: d for d in mdecls}
    units = check_units(ents)  # clustering-regimes check units: no Lean name, listed apart
    unit_keys = {u.key for u in units}
    by_id = {e.id: e for e in ents}
    if registered is None or claims is None:
        reg_default, claims_default = _registry_defaults()
        registered = reg_default if registered is None else registered
        claims = claims_default if claims is None else claims
    registered = set(registered)
    claims = list(claims)
    # a statement is "registered" as an old-style claim or through its declarations' checks
    claim_ids = {c.id for c in claims} | {e.id for e in ents if any(d.check in registered for d in e.decls)}
    cert_problems = list(certificate_problems)
    if certificates is None:
        certs, found = scan_certificates()
        cert_problems += found
    else:
        certs = list(certificates)
    vf = verify if verify is not None else kernel_status
    failures: list[str] = list(cert_problems)

    # -- kernel verdicts, and which certificates evaluated which declaration
    listed: dict[str, list[tuple[Certificate, EvaluatedDecl]]] = {}
    for c in certs:
        try:
            c.kernel = vf(c.path)
        except Exception as err:  # a broken certificate must not stop the audit
            c.kernel = f"error ({err.__class__.__name__})"
        if c.kernel != "valid":
            failures.append(f"{c.path}: lists evaluated declarations but the kernel says '{c.kernel}'")
        for ev in c.declarations:
            listed.setdefault(ev.name, []).append((c, ev))
            if ev.name not in by_name and ev.name not in unit_keys:
                failures.append(f"{c.path}: evaluates {ev.name}, which no lean_map [[decl]] maps")

    # -- blueprint index
    stmts = list(blueprint) if blueprint is not None else None
    env_of: dict[str, BlueprintStatement] = {}
    if stmts is not None:
        for s in stmts:
            for n in s.lean:
                env_of.setdefault(n, s)

    # -- per-declaration status
    order = {n: i for i, n in enumerate(decls or ())}

    sampled_against: list[str] = []

    def derived(d) -> dict:
        """Status, evidence, certificate count and reason of one declaration or check unit."""
        valid = [(c, ev) for c, ev in listed.get(d.key, []) if c.kernel == "valid"]
        # format 3: a definition is computed; an empirical record is consistent (issue 23 gives
        # it a status of its own, sampled; until then it counts as before)
        holds = [ev for _, ev in valid if ev.conclusion in ("holds", "computed", "consistent")]
        tally = {k: sum(1 for _, ev in valid if ev.conclusion == k) for k in CONCLUSIONS}
        is_reg = d.check in registered
        if is_reg and holds:
            status = "computed" if d.is_definition else "checked"
            levels = [ev.evidence for ev in holds]
            evidence = next((lv for lv in EVIDENCE_ORDER if lv in levels), levels[0])
            reason = ""
        else:
            status, evidence = "mapped only", None
            reason = (d.reason if not is_reg else
                      "check registered, but no valid format-2 certificate evaluates it" if not valid else
                      "check registered, but no valid certificate concludes 'holds'")
        # a sampled 'fails' (empirical evidence on a limit theorem) is evidence against, not a refutation
        proven = sum(1 for _, ev in valid if ev.conclusion == "fails" and ev.evidence != "empirical")
        if proven:
            failures.append(f"{d.key}: {proven} valid certificate(s) conclude 'fails'")
        if tally["inconsistent"]:
            sampled_against.append(f"{d.key}: {tally['inconsistent']} valid certificate(s) conclude 'inconsistent' "
                                   "on a sample (empirical: evidence, not a counterexample)")
        if d.status in ("checked", "computed") and not is_reg:
            failures.append(f"lean_map/{d.statement}.toml: {d.key} claims '{d.status}' but no check "
                            f"'{d.check}' is registered")
        return {"check": d.check, "kind": d.kind, "status": status, "evidence": evidence,
                "certificates": len(valid), "conclusions": tally, "statement": d.statement,
                "statement_label": by_id[d.statement].label, "claimed": d.status, "reason": reason}

    rows = []
    for d in sorted(mdecls, key=lambda x: (order.get(x.name, len(order)), x.statement)):
        env = env_of.get(d.name)
        r = derived(d)
        rows.append({
            "name": d.name, "check": r["check"], "kind": r["kind"], "status": r["status"],
            "evidence": r["evidence"], "certificates": r["certificates"], "conclusions": r["conclusions"],
            "blueprint": env.label if env else (d.blueprint if stmts is None else ""),
            "blueprint_number": env.display if env else "",
            "statement": d.statement, "statement_label": r["statement_label"], "claimed": d.status,
            "reason": r["reason"],
        })
    unit_rows = [derived(u) for u in units]

    # -- statements: coverage, registry and references
    statements = []
    first = {r["statement"]: i for i, r in reversed(list(enumerate(rows)))}
    for e in sorted(ents, key=lambda x: (first.get(x.id, len(rows)), x.id)):
        mine = [r for r in rows if r["statement"] == e.id]
        statements.append({
            "id": e.id, "label": e.label, "source": e.source, "declarations": len(mine),
            "check_units": sum(u["statement"] == e.id for u in unit_rows),
            "checked": sum(r["status"] == "checked" for r in mine),
            "computed": sum(r["status"] == "computed" for r in mine),
            "mapped_only": sum(r["status"] == "mapped only" for r in mine),
        })
        if e.checker and e.status == "checked" and e.checker not in claim_ids:
            failures.append(f"lean_map/{e.id}.toml: checker '{e.checker}' names no registered claim")
        for ref in e.code:
            if not _resolve_code(ref):
                failures.append(f"lean_map/{e.id}.toml: code reference '{ref}' does not resolve")
        for rel in e.certificates:
            if not (e.root / rel).exists():
                failures.append(f"lean_map/{e.id}.toml: certificate directory '{rel}' does not exist")

    # -- coverage against the declaration list and the blueprint
    mapped = set(by_name)
    decl_list = list(decls) if decls is not None else None
    if decl_list is not None:
        failures += [f"{n}: in the declaration list but in no lean_map [[decl]]" for n in decl_list if n not in mapped]
        failures += [f"{n}: mapped (lean_map/{by_name[n].statement}.toml) but not in the declaration list"
                     for n in sorted(mapped - set(decl_list))]

    findings: dict[str, Any] = {"numbering": [], "not_in_blueprint": None, "blueprint_mismatch": None,
                                "split": None, "unknown_uses": None, "not_leanok": None, "stale_status": [],
                                "registry": []}
    for e in ents:
        if normalise_label(e.seed_label) != normalise_label(e.label):
            findings["numbering"].append({"statement": e.id, "against": "seed", "lean_map_label": e.label,
                                          "other_label": e.seed_label, "blueprint_label": "",
                                          "note": e.numbering_note})
    if stmts is not None:
        labels = {s.label for s in stmts if s.label}
        bp_names = set(env_of)
        failures += [f"{n}: listed by blueprint {env_of[n].name} but in no lean_map [[decl]]"
                     for n in env_of if n not in mapped]
        findings["not_in_blueprint"] = [{"name": d.name, "statement": d.statement}
                                        for d in mdecls if d.name not in bp_names]
        mism, split = [], []
        for e in ents:
            if not e.decls:
                continue
            main = _main_env(e.lean_decls, env_of)
            if main is None:
                continue
            if main.number is not None and normalise_label(main.display) != normalise_label(e.label):
                findings["numbering"].append({
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
                    mism.append({"statement": e.id, "field": f"{d.name}.blueprint",
                                 "lean_map": d.blueprint, "blueprint": actual})
        findings["blueprint_mismatch"] = mism
        findings["split"] = split
        findings["unknown_uses"] = [{"statement": s.name, "unknown": [u for u in s.uses if u not in labels]}
                                    for s in stmts if any(u not in labels for u in s.uses)]
        findings["not_leanok"] = [s.name for s in stmts if s.lean and not s.leanok]
    findings["stale_status"] = [{"name": r["name"], "claimed": r["claimed"], "derived": r["status"]}
                                for r in rows if r["claimed"] == "mapped" and r["status"] != "mapped only"]
    findings["sampled_against"] = sampled_against
    findings["registry"] = (consistency(claim_ids, by_id, public_decls=())
                            + registry_problems(claims, by_id))

    theorems = [r for r in rows if r["kind"] not in DEFINITION_KINDS]
    defs = [r for r in rows if r["kind"] in DEFINITION_KINDS]
    counts = {
        "declarations": len(rows), "theorems": len(theorems), "definitions": len(defs),
        "checked": sum(r["status"] == "checked" for r in rows),
        "computed": sum(r["status"] == "computed" for r in rows),
        "mapped_only": sum(r["status"] == "mapped only" for r in rows),
    }
    unit_counts = {
        "check_units": len(unit_rows),
        "checked": sum(r["status"] == "checked" for r in unit_rows),
        "computed": sum(r["status"] == "computed" for r in unit_rows),
        "mapped_only": sum(r["status"] == "mapped only" for r in unit_rows),
    }
    failures = list(dict.fromkeys(failures))
    exit_code = 1 if failures or (require_checked and counts["mapped_only"]) else 0
    return {
        "counts": counts,
        "declarations": rows,
        "check_unit_counts": unit_counts,
        "check_units": unit_rows,
        "statements": statements,
        "findings": findings,
        "failures": failures,
        "require_checked": require_checked,
        "sources": {"lean_map_files": len(ents), "decls": decls_source or None,
                    "decls_count": len(decl_list) if decl_list is not None else None,
                    "blueprint": blueprint_source or None,
                    "blueprint_environments": len(stmts) if stmts is not None else None,
                    "certificates_format2": len(certs), "registered_checks": len(registered)},
        "exit": exit_code,
    }


# ----------------------------------------------------------------- text output

def count_lines(report: dict) -> list[str]:
    """The three counts, first thing lean-audit and ``qkverify audit`` print."""
    c = report["counts"]
    return [
        f"checked      {c['checked']:>3} of {c['theorems']} theorems and lemmas",
        f"computed     {c['computed']:>3} of {c['definitions']} definitions",
        f"mapped only  {c['mapped_only']:>3} of {c['declarations']} declarations",
    ]


def coverage_lines(report: dict) -> list[str]:
    """Counts, then one line per statement with its checked / computed /
    mapped-only declaration counts (the table ``make audit`` prints)."""
    out = count_lines(report)
    rows = [("statement", "label", "decls", "checked", "computed", "mapped")]
    for s in report["statements"]:
        if s["declarations"]:
            rows.append((s["id"], s["label"], str(s["declarations"]), str(s["checked"]),
                         str(s["computed"]), str(s["mapped_only"])))
    out.append("")
    out += _table(rows, right={2, 3, 4, 5})
    rest = [s["id"] for s in report["statements"] if not s["declarations"]]
    if rest:
        out.append(f"  ({len(rest)} statements have no Lean declaration: {', '.join(rest)})")
    if report.get("check_units"):
        out.append("")
        out += unit_count_lines(report)
    return out


def unit_count_lines(report: dict) -> list[str]:
    """One line on the check units without a Lean name (clustering regimes), kept apart from the
    Lean declarations' counts."""
    u = report["check_unit_counts"]
    return [f"check units without a Lean name (clustering regimes): {u['check_units']} -- {u['checked']} checked, "
            f"{u['computed']} computed, {u['mapped_only']} mapped only"]


def _table(rows: list[tuple[str, ...]], right: set[int] = frozenset(), cap: int = 46) -> list[str]:
    widths = [min(max(len(r[i]) for r in rows), cap) for i in range(len(rows[0]))]
    return ["  " + "  ".join(v.rjust(widths[i]) if i in right else v.ljust(widths[i])
                             for i, v in enumerate(r)).rstrip() for r in rows]


def _first_sentence(s: str) -> str:
    m = re.match(r"(.+?[.;])(\s|$)", s)
    return m.group(1) if m else s


def render_text(report: dict) -> str:
    """Human-readable report: counts, the per-declaration table, findings,
    failures and the result line."""
    src = report["sources"]
    head = f"lean-audit: {report['counts']['declarations']} Lean declarations in {src['lean_map_files']} lean_map files"
    if src.get("blueprint"):
        head += f"; blueprint {src['blueprint']} ({src['blueprint_environments']} environments)"
    head += f"; {src['certificates_format2']} format-2 certificates, {src['registered_checks']} registered checks"
    L = [head, ""] + count_lines(report) + [""]
    rows = [("declaration", "kind", "status", "evidence", "certs", "blueprint", "statement", "reason")]
    for r in report["declarations"]:
        bp = f"{r['blueprint_number']} ({r['blueprint']})" if r["blueprint_number"] else (r["blueprint"] or "-")
        rows.append((r["check"], r["kind"], r["status"], r["evidence"] or "-", str(r["certificates"]), bp,
                     r["statement"], r["reason"] if len(r["reason"]) <= 60 else r["reason"][:59] + "…"))
    L += _table(rows, right={4}, cap=40)

    if report.get("check_units"):
        L += [""] + unit_count_lines(report)
        urows = [("check unit", "kind", "status", "evidence", "certs", "label", "statement", "reason")]
        for r in report["check_units"]:
            urows.append((r["check"], r["kind"], r["status"], r["evidence"] or "-", str(r["certificates"]),
                          r["statement_label"], r["statement"],
                          r["reason"] if len(r["reason"]) <= 60 else r["reason"][:59] + "…"))
        L += _table(urows, right={4}, cap=40)

    f = report["findings"]

    def section(title: str, items: list[str] | None) -> None:
        if items is None:
            return
        L.append("")
        L.append(f"{title}: {'none' if not items else len(items)}")
        L.extend(f"  {x}" for x in items)

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
    section("Declarations whose lean_map status is out of date",
            [f"{x['name']}: lean_map says '{x['claimed']}', derived '{x['derived']}'" for x in f["stale_status"]])
    section("Registry cross-check (statement level)", f["registry"])
    section("Empirical evidence against (sampled trends; not failures)", f.get("sampled_against"))
    section("FAILURES", report["failures"])
    L.append("")
    c = report["counts"]
    if report["failures"]:
        L.append(f"Result: FAILED ({len(report['failures'])} failure(s)).")
    elif report["require_checked"] and c["mapped_only"]:
        L.append(f"Result: FAILED (--require-checked: {c['mapped_only']} declaration(s) only mapped).")
    else:
        L.append(f"Result: nothing fails; {c['checked']} checked, {c['computed']} computed, "
                 f"{c['mapped_only']} only mapped.")
    return "\n".join(L)
