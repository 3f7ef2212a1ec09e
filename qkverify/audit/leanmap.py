"""The Lean map: one TOML file per statement of the paper / the clustering paper (docs/MATH.md), one
``[[decl]]`` table per Lean declaration.

Each file ``lean_map/<id>.toml`` ties a statement (a blueprint label such as
"Lemma 5") to the Lean declarations that formalise it.  Statement-level
fields: the arXiv v1 ``label``, the label the seed pages use, the blueprint's
``\\label`` and rendered number, named hypotheses, conventions, the legacy
statement ``checker``/``status`` the current claim registry reads, and the
certificate directories.  Per declaration (``[[decl]]``, the data lean-audit
works from): the full Lean ``name``; its ``check`` id (the name without
``Appendices.`` / ``Appendices.MainText.``); the Lean ``kind``; its data
``arguments`` and ``conclusion`` in words; ``hypotheses`` = exactly the named
Prop binders of the Lean signature, with Lean's binder names and a snake_case
``predicate`` id naming the condition; ``instances`` = the Prop-valued
instance arguments (``[IsProbabilityMeasure μ]``, ``[FiniteDimensional ℝ C]``),
which Lean leaves anonymous; for definitions the ``defining`` lemmas; the Lean
file; the blueprint label of the environment whose ``\\lean{}`` lists it;
and the ``status`` the data claims (``checked`` / ``computed`` / ``mapped``,
with a ``reason`` when mapped).  lean-audit derives the real status.

This module loads and validates those files strictly (unknown fields, wrong
types, duplicates, names outside the public declaration list, declarations
mapped twice, predicate ids that are not snake_case: one-line QKInputError
naming the file) and cross-checks statement-level data against the claim
registry.  Nothing here does arithmetic; the module only reads data.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from ..errors import QKInputError

#: Repository top level (the directory holding ``lean_map/`` and ``certificates/``).
REPO_ROOT = Path(__file__).resolve().parents[2]
#: Default lean_map directory.
DEFAULT_MAP_DIR = REPO_ROOT / "lean_map"
#: Shipped copy of the public declaration list (one declaration per line).
DEFAULT_DECLS = Path(__file__).resolve().parents[1] / "data" / "lean_decls"

STATUSES = ("checked", "no checker yet")
SOURCES = ("paper", "clusters")  # docs/MATH.md: the paper's sections; Clustering regimes
#: Lean keywords of the declarations a map may hold.
THEOREM_KINDS = ("theorem", "lemma")
DEFINITION_KINDS = ("def", "abbrev", "structure", "class", "inductive", "instance", "opaque")
#: What a ``[[decl]]`` may claim; lean-audit derives the real status.
DECL_STATUSES = ("checked", "computed", "mapped")
#: Namespace prefixes stripped to form a check id (longest first).
NAMESPACES = ("Appendices.MainText.", "Appendices.")

# field name -> (python type, required)
_FIELDS: dict[str, tuple[type, bool]] = {
    "id": (str, True),
    "label": (str, True),
    "seed_label": (str, True),
    "numbering_note": (str, False),
    "blueprint": (str, False),
    "blueprint_number": (str, False),
    "section": (str, True),
    "source": (str, True),
    "lean_decls": (list, True),
    "lean_files": (list, True),
    "statement": (str, True),
    "hypotheses": (list, True),
    "conventions": (list, True),
    "code": (list, False),
    "checker": (str, True),
    "status": (str, True),
    "certificates": (list, True),
    "decl": (list, False),
}

# [[decl]] field -> (python type, required)
_DECL_FIELDS: dict[str, tuple[type, bool]] = {
    "name": (str, True),
    "check": (str, True),
    "kind": (str, True),
    "arguments": (str, True),
    "hypotheses": (list, True),
    "instances": (list, False),
    "conclusion": (str, True),
    "defining": (list, False),
    "lean_file": (str, True),
    "blueprint": (str, True),
    "status": (str, True),
    "reason": (str, False),
}

#: A check unit without a Lean name (clustering regimes): ``clusters.`` then a snake_case name.
CHECK_UNIT = re.compile(r"^clusters\.[a-z0-9]+(?:_[a-z0-9]+)*$")
# A Lean name: dot-separated identifiers (letters, digits, _, ', unicode letters).
_LEAN_NAME = re.compile(r"^[^\s.,{}()\[\]]+(\.[^\s.,{}()\[\]]+)*$")
# A Lean binder name (hL, hσK, _hx, h', hX'law).
_BINDER = re.compile(r"^[^\W\d][\w'₀-₉]*$")
#: A predicate id: letters and digits in words joined by single underscores
#: (``L_ne_zero``, ``N_ge_two``, ``vK_ne_zero``, ``memLp_two``).
PREDICATE_ID = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*$")
# A code reference: ``qkverify.module`` or ``qkverify.module:attribute``.
_CODE_REF = re.compile(r"^qkverify(\.[A-Za-z_]\w*)+(:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*)?$")


def check_id(name: str) -> str:
    """The check id of a Lean declaration: its name without the
    ``Appendices.MainText.`` / ``Appendices.`` namespace.

    >>> check_id("Appendices.MainText.profile_rank_one"), check_id("Appendices.GramForm.J")
    ('profile_rank_one', 'GramForm.J')
    """
    for ns in NAMESPACES:
        if name.startswith(ns):
            return name[len(ns):]
    return name


@dataclass(frozen=True)
class MapHypothesis:
    """One named hypothesis of a statement (``name``, ``text``)."""

    name: str
    text: str


@dataclass(frozen=True)
class DeclHypothesis:
    """One Prop binder of a Lean signature: Lean's ``binder`` name, the
    condition in words, and the snake_case ``predicate`` id of the condition."""

    binder: str
    text: str
    predicate: str


@dataclass(frozen=True)
class DeclInstance:
    """A Prop-valued instance argument (anonymous in Lean), e.g.
    ``IsProbabilityMeasure μ`` with predicate ``probability_measure``."""

    cls: str
    predicate: str


@dataclass(frozen=True)
class MapDecl:
    """One ``[[decl]]`` table: a Lean declaration and what the map claims of it.

    ``statement`` is the id of the lean_map file that holds it.
    """

    name: str
    check: str
    kind: str
    arguments: str
    hypotheses: tuple[DeclHypothesis, ...]
    instances: tuple[DeclInstance, ...]
    conclusion: str
    defining: tuple[str, ...]
    lean_file: str
    blueprint: str
    status: str
    reason: str
    statement: str

    @property
    def is_definition(self) -> bool:
        """True for definitions (``def``, ``structure``, …), False for theorems and lemmas."""
        return self.kind in DEFINITION_KINDS

    @property
    def is_unit(self) -> bool:
        """A check unit without a Lean name (a clustering-regimes statement): ``name`` is empty and
        ``check`` (e.g. ``clusters.good_triple``) names it everywhere, certificates included."""
        return not self.name

    @property
    def key(self) -> str:
        """The name certificates use: the Lean name, or the check id of a check unit."""
        return self.name or self.check

    @property
    def predicates(self) -> tuple[str, ...]:
        """Predicate ids of the hypotheses, then of the instance arguments."""
        return tuple(h.predicate for h in self.hypotheses) + tuple(i.predicate for i in self.instances)


@dataclass(frozen=True)
class LeanMapEntry:
    """One lean_map TOML file, validated.

    ``lean_decls`` are fully qualified Lean names (equal, in order, to the
    names of ``decls``); ``certificates`` are paths relative to the repository
    root (the parent of the lean_map directory).  ``path`` is the file the
    entry was read from.
    """

    id: str
    label: str
    seed_label: str
    section: str
    source: str
    lean_decls: tuple[str, ...]
    lean_files: tuple[str, ...]
    statement: str
    hypotheses: tuple[MapHypothesis, ...]
    conventions: tuple[str, ...]
    checker: str
    status: str
    certificates: tuple[str, ...]
    numbering_note: str = ""
    blueprint: str = ""
    blueprint_number: str = ""
    code: tuple[str, ...] = ()
    decls: tuple[MapDecl, ...] = ()
    path: Path | None = None

    @property
    def hypothesis_names(self) -> tuple[str, ...]:
        """Names of the statement-level hypotheses, in file order."""
        return tuple(h.name for h in self.hypotheses)

    @property
    def root(self) -> Path:
        """Directory that ``certificates`` paths are relative to: the parent
        of the lean_map directory this entry came from (the repo root for the
        shipped map)."""
        return self.path.resolve().parent.parent if self.path else REPO_ROOT


def _bad(fname: str, msg: str) -> QKInputError:
    return QKInputError(f"lean_map/{fname}: {msg}")


def _str_list(raw: Mapping, key: str, fname: str, where: str = "") -> tuple[str, ...]:
    vals = raw[key]
    for i, v in enumerate(vals):
        if not isinstance(v, str) or not v.strip():
            raise _bad(fname, f"{where}{key}[{i}] must be a non-empty string")
    return tuple(vals)


def _check_fields(raw: Mapping, spec: Mapping[str, tuple[type, bool]], fname: str, where: str = "") -> None:
    unknown = sorted(set(raw) - set(spec))
    if unknown:
        raise _bad(fname, f"{where}unknown field(s) {', '.join(unknown)}")
    for key, (typ, required) in spec.items():
        if key not in raw:
            if required:
                raise _bad(fname, f"{where}missing required field '{key}'")
            continue
        if not isinstance(raw[key], typ):
            raise _bad(fname, f"{where}field '{key}' must be a {typ.__name__}, got {type(raw[key]).__name__}")


def _parse_table_list(items: list, keys: tuple[str, ...], fname: str, where: str,
                      optional: tuple[str, ...] = ()) -> list[dict]:
    out = []
    for i, h in enumerate(items):
        if not isinstance(h, dict) or not set(keys) <= set(h) <= set(keys) | set(optional):
            raise _bad(fname, f"{where}[{i}] must be a table with exactly {', '.join(repr(k) for k in keys)}"
                       + (f" (and optionally {', '.join(repr(k) for k in optional)})" if optional else ""))
        if not all(isinstance(h[k], str) and h[k].strip() for k in tuple(keys) + tuple(k for k in optional if k in h)):
            raise _bad(fname, f"{where}[{i}] needs non-empty strings for {', '.join(keys)}")
        out.append(h)
    return out


def parse_decl(raw: Mapping, fname: str, index: int, statement: str, source_files: tuple[str, ...],
               units: bool = False) -> MapDecl:
    """Validate one ``[[decl]]`` table (number ``index`` in file ``fname``).

    Raises QKInputError (one line, naming the file and the declaration) on an
    unknown or missing field, a wrong type, a name that is not a Lean name, a
    check id that is not the name without its namespace, an unknown kind or
    status, hypotheses/instances that are not tables of exactly
    binder/text/predicate (class/predicate), a binder that is not a Lean
    identifier or is repeated, a predicate id that is not snake_case,
    ``defining`` on a theorem (or missing on a definition), a status that does
    not fit the kind, a mapped declaration without a reason, or a Lean file
    that the statement's ``lean_files`` does not list.  With ``units`` (clustering-regimes
    entries) the table is a check unit without a Lean name: ``name`` and ``lean_file``
    are empty and ``check`` matches :data:`CHECK_UNIT`.
    """
    name = raw.get("name") if isinstance(raw, Mapping) else None
    where = f"[[decl]] #{index + 1}" + (f" ({name})" if isinstance(name, str) else "") + ": "
    if not isinstance(raw, Mapping):
        raise _bad(fname, f"{where}must be a table")
    _check_fields(raw, _DECL_FIELDS, fname, where)
    unit = units
    if unit and (name or raw["lean_file"]):
        raise _bad(fname, f"{where}a clustering check unit has no Lean name or file (name = \"\", lean_file = \"\")")
    for key in ("check", "kind", "conclusion", "status") + (() if unit else ("name", "lean_file")):
        if not raw[key].strip():
            raise _bad(fname, f"{where}field '{key}' is empty")
    if unit and not CHECK_UNIT.match(raw["check"]):
        raise _bad(fname, f"{where}check unit id '{raw['check']}' must look like clusters.good_triple")
    if not unit and not _LEAN_NAME.match(name):
        raise _bad(fname, f"{where}'{name}' is not a Lean declaration name")
    if not unit and raw["check"] != check_id(name):
        raise _bad(fname, f"{where}check id '{raw['check']}' must be '{check_id(name)}' (the name without its namespace)")
    kind = raw["kind"]
    if kind not in THEOREM_KINDS + DEFINITION_KINDS:
        raise _bad(fname, f"{where}kind must be one of {', '.join(THEOREM_KINDS + DEFINITION_KINDS)}, got '{kind}'")
    is_def = kind in DEFINITION_KINDS
    # `unprobeable`: why no input of the declaration's types violates this hypothesis alone (board, lead)
    hyps = _parse_table_list(raw["hypotheses"], ("binder", "text", "predicate"), fname, f"{where}hypotheses",
                             optional=("unprobeable",))
    insts = _parse_table_list(raw.get("instances", []), ("class", "predicate"), fname, f"{where}instances")
    binders = [h["binder"] for h in hyps]
    for b in binders:
        if not _BINDER.match(b):
            raise _bad(fname, f"{where}binder '{b}' is not a Lean identifier")
    if len(set(binders)) != len(binders):
        raise _bad(fname, f"{where}two hypotheses share the binder name")
    for t in hyps + insts:
        if not PREDICATE_ID.match(t["predicate"]):
            raise _bad(fname, f"{where}predicate id '{t['predicate']}' is not snake_case")
    if is_def and "defining" not in raw:
        raise _bad(fname, f"{where}a definition needs 'defining' (the defining lemmas, possibly [])")
    if not is_def and "defining" in raw:
        raise _bad(fname, f"{where}'defining' is for definitions only, not a {kind}")
    defining = _str_list(raw, "defining", fname, where) if is_def else ()
    status = raw["status"]
    if status not in DECL_STATUSES:
        raise _bad(fname, f"{where}status must be one of {', '.join(DECL_STATUSES)}, got '{status}'")
    if status == "checked" and is_def:
        raise _bad(fname, f"{where}a definition is 'computed', not 'checked'")
    if status == "computed" and not is_def:
        raise _bad(fname, f"{where}a {kind} is 'checked', not 'computed'")
    reason = raw.get("reason", "")
    if status == "mapped" and not reason.strip():
        raise _bad(fname, f"{where}a mapped declaration needs a 'reason'")
    if not unit and raw["lean_file"] not in source_files:
        raise _bad(fname, f"{where}lean_file '{raw['lean_file']}' is not in the statement's lean_files")
    if raw["blueprint"] and not re.match(r"^[\w:.\-]+$", raw["blueprint"]):
        raise _bad(fname, f"{where}blueprint '{raw['blueprint']}' is not a \\label key")
    return MapDecl(
        name=name, check=raw["check"], kind=kind, arguments=raw["arguments"],
        hypotheses=tuple(DeclHypothesis(h["binder"], h["text"], h["predicate"]) for h in hyps),
        instances=tuple(DeclInstance(i["class"], i["predicate"]) for i in insts),
        conclusion=raw["conclusion"], defining=defining, lean_file=raw["lean_file"],
        blueprint=raw["blueprint"], status=status, reason=reason, statement=statement,
    )


def parse_entry(raw: Mapping, fname: str, path: Path | None = None,
                known_decls: Iterable[str] | None = None) -> LeanMapEntry:
    """Validate one decoded TOML table and build a :class:`LeanMapEntry`.

    ``fname`` is the file name used in error messages and must be
    ``<id>.toml``.  ``known_decls``: the public declaration list every
    ``[[decl]]`` name must belong to (None: no such check).  Raises
    QKInputError (one line, naming the file) on a missing field, a wrong type,
    an unknown field, an id that does not match the file name, an unknown
    status/source, a declaration that is not a Lean name, is listed twice or
    is not in ``known_decls``, ``lean_decls`` that differ from the
    ``[[decl]]`` names, a malformed ``[[decl]]`` (see :func:`parse_decl`), a
    hypothesis without name/text or with a repeated name, a
    checker/status/certificates mismatch, a code reference outside
    ``qkverify``, or a seed label that differs from the label without a
    ``numbering_note``.
    """
    _check_fields(raw, _FIELDS, fname)
    for key in ("id", "label", "seed_label", "section", "statement"):
        if not raw[key].strip():
            raise _bad(fname, f"field '{key}' is empty")
    eid = raw["id"]
    if fname != f"{eid}.toml":
        raise _bad(fname, f"id '{eid}' does not match the file name (expected {eid}.toml)")
    if raw["source"] not in SOURCES:
        raise _bad(fname, f"source must be one of {', '.join(SOURCES)}, got '{raw['source']}'")
    if raw["status"] not in STATUSES:
        raise _bad(fname, f"status must be 'checked' or 'no checker yet', got '{raw['status']}'")

    decls = _str_list(raw, "lean_decls", fname)
    for d in decls:
        if not _LEAN_NAME.match(d):
            raise _bad(fname, f"'{d}' is not a Lean declaration name")
    dup = sorted({d for d in decls if decls.count(d) > 1})
    if dup:
        raise _bad(fname, f"declaration listed twice in the same entry: {', '.join(dup)}")
    if raw["source"] == "clusters" and decls:
        raise _bad(fname, "clustering entries have no Lean declarations (lean_decls = []; their [[decl]] tables "
                          "are check units without a Lean name)")
    files = _str_list(raw, "lean_files", fname)
    conventions = _str_list(raw, "conventions", fname)
    certs = _str_list(raw, "certificates", fname)
    code = _str_list(raw, "code", fname) if "code" in raw else ()
    for ref in code:
        if not _CODE_REF.match(ref):
            raise _bad(fname, f"code reference '{ref}' must be 'qkverify.module' or 'qkverify.module:attribute'")

    known = set(known_decls) if known_decls is not None else None
    parsed: list[MapDecl] = []
    for i, t in enumerate(raw.get("decl", [])):
        d = parse_decl(t, fname, i, eid, files, units=raw["source"] == "clusters")
        if any(p.key == d.key for p in parsed):
            raise _bad(fname, f"declaration {d.key} is mapped twice in this file")
        if known is not None and not d.is_unit and d.name not in known:
            raise _bad(fname, f"declaration {d.name} is not in the public declaration list (lean_decls)")
        parsed.append(d)
    if raw["source"] == "paper" and tuple(d.name for d in parsed) != decls:
        missing = [d for d in decls if d not in {p.name for p in parsed}]
        extra = [p.name for p in parsed if p.name not in decls]
        what = (f"missing [[decl]] for {', '.join(missing)}" if missing else
                f"[[decl]] not in lean_decls: {', '.join(extra)}" if extra else
                "[[decl]] tables are not in the order of lean_decls")
        raise _bad(fname, f"lean_decls and the [[decl]] tables differ ({what})")

    hyps: list[MapHypothesis] = []
    for h in _parse_table_list(raw["hypotheses"], ("name", "text"), fname, "hypotheses"):
        hyps.append(MapHypothesis(h["name"], h["text"]))
    names = [h.name for h in hyps]
    if len(set(names)) != len(names):
        raise _bad(fname, "two hypotheses share a name")

    checker, status = raw["checker"], raw["status"]
    if checker and status != "checked":
        raise _bad(fname, f"checker '{checker}' is set but status is '{status}'")
    if not checker and status != "no checker yet":
        raise _bad(fname, "status is 'checked' but checker is empty")
    if checker and not certs:
        raise _bad(fname, "a checked entry must name its certificate directory")
    if not checker and certs:
        raise _bad(fname, "certificates listed for an entry without a checker")
    note = raw.get("numbering_note", "")
    if raw["seed_label"] != raw["label"] and not note.strip():
        raise _bad(fname, f"seed_label '{raw['seed_label']}' differs from label '{raw['label']}' "
                          "but numbering_note is missing")

    return LeanMapEntry(
        id=eid, label=raw["label"], seed_label=raw["seed_label"], section=raw["section"],
        source=raw["source"], lean_decls=decls, lean_files=files, statement=raw["statement"],
        hypotheses=tuple(hyps), conventions=conventions, checker=checker, status=status,
        certificates=certs, numbering_note=note, blueprint=raw.get("blueprint", ""),
        blueprint_number=raw.get("blueprint_number", ""), code=code, decls=tuple(parsed), path=path,
    )


def load_lean_map(path: str | Path | None = None,
                  known_decls: Iterable[str] | None | bool = None) -> dict[str, LeanMapEntry]:
    """Load and validate every ``*.toml`` in a lean_map directory.

    ``path``: a directory (default: the repository's top-level ``lean_map/``,
    located relative to this package) or a single ``.toml`` file.
    ``known_decls``: the public declaration list every ``[[decl]]`` name must
    belong to; None (default) reads the shipped ``qkverify/data/lean_decls``,
    False skips that check.  Returns ``{id: LeanMapEntry}`` sorted by file
    name.

    Raises QKInputError naming the file when the directory is missing or
    empty, a file is not valid TOML, an entry is malformed (see
    :func:`parse_entry`), or a declaration (or check id) is mapped by two
    files.  Serves issue 9 (one Lean declaration, one check); no Lean
    declaration in particular.
    """
    p = Path(path) if path is not None else DEFAULT_MAP_DIR
    if p.is_file():
        files = [p]
    elif p.is_dir():
        files = sorted(p.glob("*.toml"))
        if not files:
            raise QKInputError(f"no lean_map entries (*.toml) in {p}")
    else:
        raise QKInputError(f"lean_map directory not found: {p}")
    known = read_decls() if known_decls is None else (None if known_decls is False else list(known_decls))
    entries: dict[str, LeanMapEntry] = {}
    owner: dict[str, str] = {}
    for f in files:
        try:
            raw = tomllib.loads(f.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as err:
            raise _bad(f.name, f"not valid TOML ({err})") from None
        except (OSError, UnicodeDecodeError) as err:
            raise _bad(f.name, f"cannot read ({err.__class__.__name__})") from None
        e = parse_entry(raw, f.name, f, known)
        for d in e.decls:
            for key in ((d.name,) if d.name else ()) + ("check " + d.check,):
                if key in owner:
                    raise _bad(f.name, f"{key.replace('check ', 'check id ')} is already mapped in "
                                       f"lean_map/{owner[key]}.toml")
                owner[key] = e.id
        entries[e.id] = e
    return entries


def all_decls(entries: Mapping[str, LeanMapEntry] | Iterable[LeanMapEntry]) -> list[MapDecl]:
    """Every Lean declaration (``[[decl]]`` with a Lean name) of a loaded map, file by file in file order."""
    ents = entries.values() if isinstance(entries, Mapping) else entries
    return [d for e in ents for d in e.decls if not d.is_unit]


def check_units(entries: Mapping[str, LeanMapEntry] | Iterable[LeanMapEntry]) -> list[MapDecl]:
    """Every check unit without a Lean name (clustering-regimes ``[[decl]]`` tables), in file order."""
    ents = entries.values() if isinstance(entries, Mapping) else entries
    return [d for e in ents for d in e.decls if d.is_unit]


def read_decls(path: str | Path | None = None) -> list[str]:
    """Read a lean_decls list: one fully qualified declaration per line.

    Blank lines and lines starting with ``#`` are skipped; order is kept and
    repeated names are kept once.  Default: the shipped copy
    ``qkverify/data/lean_decls`` (177 declarations).  Raises QKInputError when
    the file cannot be read or a line is not a Lean name (message names the
    line number).
    """
    p = Path(path) if path is not None else DEFAULT_DECLS
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise QKInputError(f"cannot read declaration list {p}: {err.__class__.__name__}") from None
    out: list[str] = []
    seen: set[str] = set()
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if not _LEAN_NAME.match(s):
            raise QKInputError(f"{p}:{n}: '{s[:60]}' is not a Lean declaration name")
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


def consistency(
    registry_ids: Iterable[str],
    entries: Mapping[str, LeanMapEntry] | Iterable[LeanMapEntry],
    public_decls: Iterable[str] | None = None,
) -> list[str]:
    """Cross-check the lean_map against the registry and the public list.

    ``registry_ids``: ids of the registered claims (whatever is registered
    now).  ``entries``: loaded lean_map (dict or iterable of entries).
    ``public_decls``: declaration list (default: the shipped
    ``qkverify/data/lean_decls``).

    Returns one line per problem (empty list = consistent):
    a registered claim with no entry whose ``checker`` equals it; an entry
    whose checker is not registered; a declaration listed by two entries;
    a public declaration that no entry covers.  Never raises on
    inconsistency; raises QKInputError only if the default list is unreadable.
    """
    ents = list(entries.values()) if isinstance(entries, Mapping) else list(entries)
    reg = set(registry_ids)
    pub = list(public_decls) if public_decls is not None else read_decls()
    problems: list[str] = []

    by_checker: dict[str, list[str]] = {}
    for e in ents:
        if e.checker:
            by_checker.setdefault(e.checker, []).append(e.id)
    for cid in sorted(reg):
        if cid not in by_checker:
            problems.append(f"registered claim '{cid}' has no lean_map entry with checker = \"{cid}\"")
    for cid, owners in sorted(by_checker.items()):
        if cid not in reg:
            problems.append(f"lean_map entry {', '.join(owners)}: checker '{cid}' is not registered")
        if len(owners) > 1:
            problems.append(f"checker '{cid}' is named by several entries: {', '.join(owners)}")

    owner: dict[str, list[str]] = {}
    for e in ents:
        for d in e.lean_decls:
            owner.setdefault(d, []).append(e.id)
    for d, ids in owner.items():
        if len(ids) > 1:
            problems.append(f"declaration {d} listed by several entries: {', '.join(ids)}")
    for d in pub:
        if d not in owner:
            problems.append(f"public declaration {d} is not covered by any lean_map entry")
    return problems


def normalise_label(label: str) -> str:
    """Canonical form of a statement label for comparisons:
    ``"Prop 5"``, ``"proposition 5"`` and ``"Proposition~5"`` all become
    ``"proposition 5"``; ``"Def A1"`` becomes ``"definition a1"``."""
    s = re.sub(r"[\s~]+", " ", label.strip().lower())
    for short, full in (("def", "definition"), ("lem", "lemma"), ("lemma", "lemma"),
                        ("prop", "proposition"), ("cor", "corollary"), ("thm", "theorem")):
        s = re.sub(rf"^{short}\.?(?=\s|\d)", full, s)
    return re.sub(r"\s+", " ", s)


def _short(decl: str) -> str:
    return re.sub(r"^Appendices\.(MainText\.)?", "", decl)


def registry_problems(claims: Iterable, entries: Mapping[str, LeanMapEntry]) -> list[str]:
    """Compare registered claims with their lean_map entries.

    ``claims``: objects with ``.id``, ``.label``, ``.lean_decls`` and
    ``.hypotheses`` (each with ``.name``), e.g. ``registry.all_claims()``.
    For each claim that has an entry (matched by ``checker``), report:
    hypothesis names that differ (as ordered-insensitive sets), a label that
    differs after :func:`normalise_label`, and claim declarations that the
    entry does not list (compared with or without the ``Appendices.`` /
    ``Appendices.MainText.`` prefix).  Claims with no entry are reported by
    :func:`consistency`, not here.
    """
    by_checker = {e.checker: e for e in entries.values() if e.checker}
    problems: list[str] = []
    for c in claims:
        e = by_checker.get(c.id)
        if e is None:
            continue
        cn = [h.name for h in getattr(c, "hypotheses", ())]
        en = list(e.hypothesis_names)
        if sorted(cn) != sorted(en):
            missing = sorted(set(en) - set(cn))
            extra = sorted(set(cn) - set(en))
            bits = []
            if missing:
                bits.append("lean_map only: " + ", ".join(missing))
            if extra:
                bits.append("registry only: " + ", ".join(extra))
            if not bits:
                bits.append("repeated names")
            problems.append(f"claim '{c.id}': hypothesis names differ from lean_map ({'; '.join(bits)})")
        label = getattr(c, "label", "") or ""
        if label and normalise_label(label) != normalise_label(e.label):
            problems.append(f"claim '{c.id}': registry label '{label}' differs from lean_map label '{e.label}'")
        full = set(e.lean_decls)
        short = {_short(d) for d in e.lean_decls}
        stray = [d for d in getattr(c, "lean_decls", ()) if d not in full and _short(d) not in short]
        if stray:
            problems.append(f"claim '{c.id}': declarations not listed in lean_map/{e.id}.toml: {', '.join(stray)}")
    return problems


def check_against_registry(entries: Mapping[str, LeanMapEntry] | None = None,
                           public_decls: Iterable[str] | None = None) -> list[str]:
    """Run :func:`consistency` and :func:`registry_problems` against the live
    registry (``qkverify.claims.registry.all_claims()``).  ``entries`` default:
    :func:`load_lean_map`.  Returns the combined problem lines."""
    from ..claims.registry import all_claims

    ents = entries if entries is not None else load_lean_map()
    claims = all_claims()
    return consistency({c.id for c in claims}, ents, public_decls) + registry_problems(claims, ents)
