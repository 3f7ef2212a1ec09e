"""The Lean map: one TOML file per statement of SPEC.md / CLUSTERS.md.

Each file ``lean_map/<id>.toml`` ties a statement to its Lean declarations
(fully qualified, e.g. ``Appendices.MainText.rank_balance``), the Lean files
that hold them, its arXiv v1 label, the label the seed pages use, its named
hypotheses and the qkverify claim (if any) that checks it.  This module loads
and validates those files and cross-checks them against the claim registry
and the public declaration list (``qkverify/data/lean_decls``, a copy of the
blueprint's ``lean_decls``).

Nothing here does arithmetic; the module only reads data.
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
SOURCES = ("SPEC.md", "CLUSTERS.md")

# field name -> (python type, required)
_FIELDS: dict[str, tuple[type, bool]] = {
    "id": (str, True),
    "label": (str, True),
    "seed_label": (str, True),
    "numbering_note": (str, False),
    "section": (str, True),
    "source": (str, True),
    "lean_decls": (list, True),
    "lean_files": (list, True),
    "statement": (str, True),
    "hypotheses": (list, True),
    "conventions": (list, True),
    "checker": (str, True),
    "status": (str, True),
    "certificates": (list, True),
    "decl": (list, False),
}

# A Lean name: dot-separated identifiers (letters, digits, _, ', unicode letters).
_LEAN_NAME = re.compile(r"^[^\s.,{}()\[\]]+(\.[^\s.,{}()\[\]]+)*$")


@dataclass(frozen=True)
class MapHypothesis:
    """One named hypothesis of a lean_map entry (``name``, ``text``)."""

    name: str
    text: str


@dataclass(frozen=True)
class LeanMapEntry:
    """One lean_map TOML file, validated.

    ``lean_decls`` are fully qualified Lean names; ``certificates`` are paths
    relative to the repository root (the parent of the lean_map directory).
    ``path`` is the file the entry was read from.
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
    path: Path | None = None

    @property
    def hypothesis_names(self) -> tuple[str, ...]:
        """Names of the hypotheses, in file order."""
        return tuple(h.name for h in self.hypotheses)

    @property
    def root(self) -> Path:
        """Directory that ``certificates`` paths are relative to: the parent
        of the lean_map directory this entry came from (the repo root for the
        shipped map)."""
        return self.path.resolve().parent.parent if self.path else REPO_ROOT


def _bad(fname: str, msg: str) -> QKInputError:
    return QKInputError(f"lean_map/{fname}: {msg}")


def _str_list(raw: dict, key: str, fname: str) -> tuple[str, ...]:
    vals = raw[key]
    for i, v in enumerate(vals):
        if not isinstance(v, str) or not v.strip():
            raise _bad(fname, f"{key}[{i}] must be a non-empty string")
    return tuple(vals)


def parse_entry(raw: Mapping, fname: str, path: Path | None = None) -> LeanMapEntry:
    """Validate one decoded TOML table and build a :class:`LeanMapEntry`.

    ``fname`` is the file name used in error messages and must be
    ``<id>.toml``.  Raises QKInputError (one line, naming the file) on a
    missing field, a wrong type, an unknown field, an id that does not match
    the file name, an unknown status/source, a declaration that is not a
    Lean name or is listed twice, a hypothesis without name/text or with a
    repeated name, a checker/status/certificates mismatch, or a seed label
    that differs from the label without a ``numbering_note``.
    """
    unknown = sorted(set(raw) - set(_FIELDS))
    if unknown:
        raise _bad(fname, f"unknown field(s) {', '.join(unknown)}")
    for key, (typ, required) in _FIELDS.items():
        if key not in raw:
            if required:
                raise _bad(fname, f"missing required field '{key}'")
            continue
        if not isinstance(raw[key], typ):
            raise _bad(fname, f"field '{key}' must be a {typ.__name__}, got {type(raw[key]).__name__}")
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
    if raw["source"] == "CLUSTERS.md" and decls:
        raise _bad(fname, "CLUSTERS.md entries have no Lean declarations (lean_decls = [])")
    files = _str_list(raw, "lean_files", fname)
    conventions = _str_list(raw, "conventions", fname)
    certs = _str_list(raw, "certificates", fname)

    hyps: list[MapHypothesis] = []
    for i, h in enumerate(raw["hypotheses"]):
        if not isinstance(h, dict) or set(h) != {"name", "text"}:
            raise _bad(fname, f"hypotheses[{i}] must be a table with exactly 'name' and 'text'")
        if not all(isinstance(h[k], str) and h[k].strip() for k in ("name", "text")):
            raise _bad(fname, f"hypotheses[{i}] needs a non-empty name and text")
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
        certificates=certs, numbering_note=note, path=path,
    )


def load_lean_map(path: str | Path | None = None) -> dict[str, LeanMapEntry]:
    """Load and validate every ``*.toml`` in a lean_map directory.

    ``path``: a directory (default: the repository's top-level ``lean_map/``,
    located relative to this package) or a single ``.toml`` file.
    Returns ``{id: LeanMapEntry}`` sorted by file name.

    Raises QKInputError naming the file when the directory is missing or
    empty, a file is not valid TOML, or an entry is malformed (see
    :func:`parse_entry`).  Serves issue 5 (lean_map) for every SPEC
    statement; no Lean declaration in particular.
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
    entries: dict[str, LeanMapEntry] = {}
    for f in files:
        try:
            raw = tomllib.loads(f.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as err:
            raise _bad(f.name, f"not valid TOML ({err})") from None
        except (OSError, UnicodeDecodeError) as err:
            raise _bad(f.name, f"cannot read ({err.__class__.__name__})") from None
        e = parse_entry(raw, f.name, f)
        entries[e.id] = e
    return entries


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
