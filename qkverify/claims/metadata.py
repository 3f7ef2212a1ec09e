"""The Lean map: ``lean_map/*.toml``, the only place claim metadata lives, and
this module its only reader.

One file per statement of ``docs/MATH.md`` (a blueprint label such as
"Lemma 4"), one ``[[decl]]`` table per Lean declaration: its full Lean
``name``, its ``check`` id (the name without ``Appendices.`` /
``Appendices.MainText.``), the Lean ``kind``, its data ``arguments`` and its
``conclusion`` as the project transcribes them, ``hypotheses`` = exactly the
Prop binders of the Lean signature (Lean's binder name, the condition in
words, the id of the predicate that decides it, and ``unprobeable`` -- why no
input of the declaration's types can make it false while the others hold --
where that is so), ``instances`` = the Prop-valued instance arguments, the
``defining`` lemmas of a definition, the Lean file and the blueprint label.
Clustering-regimes files (``source = "clusters"``) hold *check units*: no
Lean name, named by a check id ``clusters.<name>`` everywhere.

Every file is checked against ``qkverify/data/lean_map.schema.json`` (a JSON
Schema of the decoded TOML) and then against the rules a schema cannot state
(:func:`parse`).  Nothing here does arithmetic and nothing here says what is
checked: the code registers one check function per check id
(:func:`qkverify.claims.registry.declaration_check`) and lean-audit derives
each declaration's status from the certificates.
"""

from __future__ import annotations

import functools
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import QKInputError

#: The repository top level (lean_map/ and certificates/ sit there; installs are editable).
REPO_ROOT = Path(__file__).resolve().parents[2]
#: lean_map/ beside the package.
MAP_DIR = REPO_ROOT / "lean_map"
_DATA = Path(__file__).resolve().parents[1] / "data"
#: The public declaration list (one fully qualified Lean name per line), shipped with the package.
DECLS_PATH = _DATA / "lean_decls"
#: The JSON Schema every decoded lean_map file must satisfy.
SCHEMA_PATH = _DATA / "lean_map.schema.json"

THEOREM_KINDS = ("theorem", "lemma")
DEFINITION_KINDS = ("def", "abbrev", "structure", "class", "inductive", "instance", "opaque")
#: Namespace prefixes stripped to form a check id (longest first).
NAMESPACES = ("Appendices.MainText.", "Appendices.")
_LEAN_NAME = re.compile(r"^[^\s.,{}()\[\]]+(\.[^\s.,{}()\[\]]+)*$")


@dataclass(frozen=True)
class HypMeta:
    """One Prop binder of a Lean signature: Lean's binder name, the condition in
    words, the predicate id that decides it, and why no counterexample to the
    declaration with it dropped can exist (``""``: probes should find one)."""

    binder: str
    text: str
    predicate: str
    unprobeable: str = ""


@dataclass(frozen=True)
class InstanceMeta:
    """A Prop-valued instance argument (anonymous in Lean), e.g. ``IsProbabilityMeasure μ``."""

    cls: str
    predicate: str
    unprobeable: str = ""


@dataclass(frozen=True)
class DeclMeta:
    """One ``[[decl]]`` table: a Lean declaration, or a check unit without a Lean name.

    ``name`` is what certificates call it: the full Lean name, or the check id of a
    check unit (``is_unit``); ``statement`` is the id of the file that holds it."""

    name: str
    check: str
    kind: str
    hypotheses: tuple[HypMeta, ...]
    conclusion: str
    statement: str
    arguments: str = ""
    instances: tuple[InstanceMeta, ...] = ()
    defining: tuple[str, ...] = ()
    lean_file: str = ""
    blueprint: str = ""
    reason: str = ""
    is_unit: bool = False

    @property
    def is_definition(self) -> bool:
        """True for definitions (``def``, ``structure``, …), False for theorems and lemmas."""
        return self.kind in DEFINITION_KINDS

    @property
    def key(self) -> str:
        """The name certificates use (the same as ``name``)."""
        return self.name

    @property
    def predicates(self) -> tuple[str, ...]:
        """Predicate ids of the hypotheses, then of the instance arguments."""
        return tuple(h.predicate for h in self.hypotheses) + tuple(i.predicate for i in self.instances)


@dataclass(frozen=True)
class StatementMeta:
    """One lean_map file: the statement's id, labels, section, text and declarations.

    ``decls`` are in file order; for a ``paper`` statement their names are
    ``lean_decls`` in order.  ``path`` is the file it was read from."""

    id: str
    label: str
    section: str
    text: str
    decls: tuple[DeclMeta, ...]
    seed_label: str = ""
    numbering_note: str = ""
    blueprint: str = ""
    blueprint_number: str = ""
    source: str = "paper"
    lean_decls: tuple[str, ...] = ()
    lean_files: tuple[str, ...] = ()
    conventions: tuple[str, ...] = ()
    path: Path | None = None


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


def read_decls(path: str | Path | None = None) -> list[str]:
    """The public declaration list: one fully qualified Lean name per line
    (default: the shipped ``qkverify/data/lean_decls``, 177 names).

    Blank lines and ``#`` comments are skipped; order is kept and a repeated
    name is kept once.  QKInputError when the file cannot be read or a line is
    not a Lean name (the message names the line)."""
    p = Path(path) if path is not None else DECLS_PATH
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise QKInputError(f"cannot read declaration list {p}: {err.__class__.__name__}") from None
    out: dict[str, None] = {}
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if not _LEAN_NAME.match(s):
            raise QKInputError(f"{p}:{n}: '{s[:60]}' is not a Lean declaration name")
        out.setdefault(s)
    return list(out)


# ----------------------------------------------------------------- the schema check

@functools.lru_cache(maxsize=1)
def _validator():
    from jsonschema import Draft202012Validator

    return Draft202012Validator(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


#: what a pattern in the schema means, for the error message
_PATTERN_MEANS = {
    "lean_name": "a Lean declaration name", "binder": "a Lean identifier",
    "predicate_id": "a snake_case predicate id (letters and digits in words joined by _)",
    "blueprint_key": "a \\label key", "statement_id": "a statement id",
}


def _where(raw: Mapping, path: list) -> tuple[str, str]:
    """(``[[decl]] #3 (name): `` prefix, dotted field) of a JSON path in a decoded file."""
    prefix = ""
    if len(path) >= 2 and path[0] == "decl" and isinstance(path[1], int):
        d = raw["decl"][path[1]]
        name = d.get("name") if isinstance(d, Mapping) else None
        name = name or (d.get("check") if isinstance(d, Mapping) else None)
        prefix = f"[[decl]] #{path[1] + 1}" + (f" ({name})" if isinstance(name, str) and name else "") + ": "
        path = path[2:]
    field = ""
    for p in path:
        field += f"[{p}]" if isinstance(p, int) else (("." if field else "") + str(p))
    return prefix, field


def _schema_message(err: Any, raw: Mapping) -> str:
    """One line for a jsonschema error, naming the declaration and the field."""
    prefix, field = _where(raw, list(err.absolute_path))
    inst, what = err.instance, err.validator
    of = f" of {field}" if field else ""
    if what == "required":
        missing = [k for k in err.validator_value if k not in inst]
        extra = " (the defining lemmas of a definition, possibly [])" if missing == ["defining"] else ""
        return f"{prefix}missing required field{of} '{missing[0]}'{extra}"
    if what == "additionalProperties":
        unknown = sorted(set(inst) - set(err.schema.get("properties", {})))
        return f"{prefix}unknown field(s){of}: {', '.join(unknown)}"
    if what == "type":
        names = {"string": "string", "array": "list", "object": "table"}
        return f"{prefix}field '{field}' must be a {names.get(err.validator_value, err.validator_value)}"
    if what == "pattern":
        if isinstance(inst, str) and not inst.strip():
            return f"{prefix}field '{field}' is empty"
        ref = next((k for k, v in _validator().schema["$defs"].items() if v.get("pattern") == err.validator_value), "")
        if field.endswith("check") and "clusters" in err.validator_value:
            return f"{prefix}check unit id '{inst}' must look like clusters.good_triple"
        return f"{prefix}'{inst}' ({field}) is not {_PATTERN_MEANS.get(ref, 'of the right form')}"
    if what == "enum":
        return f"{prefix}field '{field}' must be one of {', '.join(map(str, err.validator_value))}, got '{inst}'"
    if what == "const":
        return (f"{prefix}a clustering check unit has no Lean name or file (name = \"\", lean_file = \"\"); "
                f"got {field} = '{inst}'")
    if what == "not":
        return f"{prefix}'defining' is for definitions only, not a {inst.get('kind')}"
    if what == "maxItems":
        return "clustering entries have no Lean declarations (lean_decls = []; their [[decl]] tables are check units)"
    if what == "minItems":
        return f"{prefix}field '{field}' is empty (a statement maps at least one [[decl]])"
    if what == "uniqueItems":
        return f"{prefix}field '{field}' lists an item twice"
    return f"{prefix}{field}: {err.message}"


def _bad(fname: str, msg: str) -> QKInputError:
    return QKInputError(f"lean_map/{fname}: {msg}")


def _sort_key(err: Any) -> tuple:
    """Shallow errors first (a file-level problem before one inside a [[decl]]), then by path."""
    path = tuple((0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in err.absolute_path)
    return len(path), path, err.validator


def parse(raw: Mapping, fname: str, known_decls: Iterable[str] | None = None, path: Path | None = None) -> StatementMeta:
    """Check one decoded lean_map file and build its :class:`StatementMeta`.

    ``fname`` (``<id>.toml``) names the file in messages; ``known_decls`` is the
    public declaration list every Lean name must belong to (None: not checked).
    Raises QKInputError, one line naming the file (and the declaration), when the
    file breaks the schema (a missing or unknown field, a wrong type, a name that
    is not a Lean name, a binder that is not a Lean identifier, a predicate id
    that is not snake_case, ``defining`` on a theorem or missing on a
    definition, a check unit with a Lean name) or a rule of the map: the id is
    not the file name, a check id is not the name without its namespace,
    ``lean_decls`` differ from the ``[[decl]]`` names, a Lean file is not in
    ``lean_files``, two binders of one declaration share a name, a declaration
    is mapped twice or is not in ``known_decls``, or ``seed_label`` differs
    from ``label`` without a ``numbering_note``.
    """
    errors = sorted(_validator().iter_errors(raw), key=_sort_key)
    if errors:
        raise _bad(fname, _schema_message(errors[0], raw))
    sid = raw["id"]
    if fname != f"{sid}.toml":
        raise _bad(fname, f"id '{sid}' does not match the file name (expected {sid}.toml)")
    if raw["seed_label"] != raw["label"] and not raw.get("numbering_note", "").strip():
        raise _bad(fname, f"seed_label '{raw['seed_label']}' differs from label '{raw['label']}' "
                          "but numbering_note is missing")
    unit = raw["source"] == "clusters"
    known = set(known_decls) if known_decls is not None else None
    decls: list[DeclMeta] = []
    for i, d in enumerate(raw["decl"]):
        key = d["name"] or d["check"]
        where = f"[[decl]] #{i + 1} ({key}): "
        if not unit and d["check"] != check_id(d["name"]):
            raise _bad(fname, f"{where}check id '{d['check']}' must be '{check_id(d['name'])}' "
                              "(the name without its namespace)")
        if not unit and d["lean_file"] not in raw["lean_files"]:
            raise _bad(fname, f"{where}lean_file '{d['lean_file']}' is not in the statement's lean_files")
        binders = [h["binder"] for h in d["hypotheses"]]
        if len(set(binders)) != len(binders):
            raise _bad(fname, f"{where}two hypotheses share the binder name")
        if any(p.name == key for p in decls):
            raise _bad(fname, f"declaration {key} is mapped twice in this file")
        if known is not None and not unit and d["name"] not in known:
            raise _bad(fname, f"declaration {d['name']} is not in the public declaration list (lean_decls)")
        decls.append(DeclMeta(
            name=key, check=d["check"], kind=d["kind"],
            hypotheses=tuple(HypMeta(h["binder"], h["text"], h["predicate"], h.get("unprobeable", ""))
                             for h in d["hypotheses"]),
            conclusion=d["conclusion"], statement=sid, arguments=d["arguments"],
            instances=tuple(InstanceMeta(x["class"], x["predicate"], x.get("unprobeable", ""))
                            for x in d.get("instances", [])),
            defining=tuple(d.get("defining", ())), lean_file=d["lean_file"], blueprint=d["blueprint"],
            reason=d.get("reason", ""), is_unit=unit))
    if not unit and tuple(d.name for d in decls) != tuple(raw["lean_decls"]):
        names = [d.name for d in decls]
        missing = [n for n in raw["lean_decls"] if n not in names]
        extra = [n for n in names if n not in raw["lean_decls"]]
        what = (f"missing [[decl]] for {', '.join(missing)}" if missing else
                f"[[decl]] not in lean_decls: {', '.join(extra)}" if extra else
                "[[decl]] tables are not in the order of lean_decls")
        raise _bad(fname, f"lean_decls and the [[decl]] tables differ ({what})")
    return StatementMeta(
        id=sid, label=raw["label"], section=raw["section"], text=raw["statement"].strip(), decls=tuple(decls),
        seed_label=raw["seed_label"], numbering_note=raw.get("numbering_note", ""),
        blueprint=raw.get("blueprint", ""), blueprint_number=raw.get("blueprint_number", ""),
        source=raw["source"], lean_decls=tuple(raw["lean_decls"]), lean_files=tuple(raw["lean_files"]),
        conventions=tuple(raw["conventions"]), path=path)


def load(map_dir: str | Path | None = None, known_decls: Iterable[str] | None | bool = None) -> dict[str, StatementMeta]:
    """Every statement of a Lean map, by id, in file-name order.

    ``map_dir``: a lean_map directory (default: the repository's, read once per
    process) or one ``.toml`` file.  ``known_decls``: the public declaration list
    every Lean name must belong to; None reads the shipped one, False skips the
    check.  Raises QKInputError naming the file when the directory is missing or
    empty, a file is not TOML, breaks the schema or a rule of :func:`parse`, or a
    declaration (or a check id) is mapped by two files."""
    if map_dir is None and known_decls is None:
        return _shipped()
    known = None if known_decls is False else (read_decls() if known_decls is None else list(known_decls))
    return _read_map(Path(map_dir) if map_dir is not None else MAP_DIR, known)


@functools.lru_cache(maxsize=1)
def _shipped() -> dict[str, StatementMeta]:
    return _read_map(MAP_DIR, read_decls())


def _read_map(p: Path, known: list[str] | None) -> dict[str, StatementMeta]:
    if p.is_file():
        files = [p]
    elif p.is_dir():
        files = sorted(p.glob("*.toml"))
        if not files:
            raise QKInputError(f"no lean_map entries (*.toml) in {p}")
    else:
        raise QKInputError(f"lean_map directory not found: {p}")
    out: dict[str, StatementMeta] = {}
    owner: dict[str, str] = {}
    for f in files:
        try:
            raw = tomllib.loads(f.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as err:
            raise _bad(f.name, f"not valid TOML ({err})") from None
        except (OSError, UnicodeDecodeError) as err:
            raise _bad(f.name, f"cannot read ({err.__class__.__name__})") from None
        st = parse(raw, f.name, known, f)
        for d in st.decls:
            for k in (d.name, "check id " + d.check):
                if k in owner:
                    raise _bad(f.name, f"{k} is already mapped in lean_map/{owner[k]}.toml")
                owner[k] = st.id
        out[st.id] = st
    return out


def declarations(stmts: Mapping[str, StatementMeta] | None = None, units: bool = False) -> list[DeclMeta]:
    """The Lean declarations of a loaded map (default: the shipped one), file by
    file in file order; with ``units`` the clustering check units instead."""
    stmts = load() if stmts is None else stmts
    return [d for st in stmts.values() for d in st.decls if d.is_unit == units]


def statement(sid: str) -> StatementMeta:
    """The statement with id ``sid`` (QKInputError when unknown)."""
    st = load().get(sid)
    if st is None:
        raise QKInputError(f"no lean_map entry for statement {sid!r}")
    return st


def declaration(name: str) -> DeclMeta:
    """The declaration with full Lean name or check id ``name`` (QKInputError when unknown)."""
    for st in load().values():
        for d in st.decls:
            if name in (d.name, d.check):
                return d
    raise QKInputError(f"no lean_map [[decl]] for {name!r}")


def _norm(label: str) -> str:
    return " ".join(label.strip().lower().replace("thm", "theorem").split())


def find(name: str) -> tuple[StatementMeta, DeclMeta | None] | None:
    """What ``name`` names: ``(statement, None)`` for a statement id, blueprint label
    ("Theorem 4", "thm 4") or seed label ("Proposition 6") -- a blueprint label wins
    over a seed label -- else ``(statement, declaration)`` for a full Lean name or a
    check id; None when nothing matches."""
    key = _norm(name)
    stmts = load().values()
    for st in stmts:
        if key in (st.id.lower(), _norm(st.label)):
            return st, None
    for st in stmts:
        if st.seed_label and key == _norm(st.seed_label):
            return st, None
    for st in stmts:
        for d in st.decls:
            if key in (d.name.lower(), d.check.lower()):
                return st, d
    return None


def resolve(name: str) -> StatementMeta | None:
    """The statement named by ``name`` (see :func:`find`): a statement id, a label, or
    one of its declarations; None when nothing matches."""
    hit = find(name)
    return hit[0] if hit else None
