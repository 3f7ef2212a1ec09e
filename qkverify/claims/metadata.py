"""Claim metadata, read from ``lean_map/*.toml`` (the only place it lives).

One file per statement (blueprint label); each ``[[decl]]`` table is one Lean
declaration with its kind, its hypotheses (Lean binder, text, predicate id)
and its conclusion in words.  The code registers one check function per
check id (:func:`qkverify.claims.registry.declaration_check`) and one decision
function per predicate id; everything else about a claim comes from here.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..errors import QKInputError

#: lean_map/ beside the package (the repository checkout; installs are editable)
MAP_DIR = Path(__file__).resolve().parents[2] / "lean_map"


@dataclass(frozen=True)
class HypMeta:
    """One Prop binder of a Lean declaration."""

    binder: str
    text: str
    predicate: str
    #: why no input of the declaration's types can make the statement fail with this binder dropped
    #: (lean_map ``unprobeable``; empty when a counterexample is expected)
    unprobeable: str = ""


@dataclass(frozen=True)
class DeclMeta:
    """One Lean declaration of a statement."""

    name: str
    check: str
    kind: str
    hypotheses: tuple[HypMeta, ...]
    conclusion: str
    statement: str

    @property
    def is_definition(self) -> bool:
        return self.kind in ("def", "abbrev", "structure")


@dataclass(frozen=True)
class StatementMeta:
    """One statement (lean_map file): id, labels, section, text and its declarations."""

    id: str
    label: str
    section: str
    text: str
    decls: tuple[DeclMeta, ...]
    seed_label: str = ""


def _decl(raw: dict, st: str, fname: str) -> DeclMeta:
    try:
        hyps = tuple(HypMeta(h["binder"], h["text"], h["predicate"], h.get("unprobeable", ""))
                     for h in raw.get("hypotheses", []))
        # a clustering check unit has no Lean name: its check id names it in certificates
        return DeclMeta(raw["name"] or raw["check"], raw["check"], raw["kind"], hyps, raw.get("conclusion", ""), st)
    except (KeyError, TypeError) as err:
        raise QKInputError(f"lean_map/{fname}: malformed [[decl]] table ({err})") from None


@functools.lru_cache(maxsize=4)
def load(map_dir: Path = MAP_DIR) -> dict[str, StatementMeta]:
    """Every statement of the Lean map, by id (QKInputError naming a malformed file)."""
    out: dict[str, StatementMeta] = {}
    for p in sorted(map_dir.glob("*.toml")):
        try:
            raw = tomllib.loads(p.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as err:
            raise QKInputError(f"lean_map/{p.name}: {err}") from None
        sid = raw.get("id", p.stem)
        decls = tuple(_decl(d, sid, p.name) for d in raw.get("decl", []))
        out[sid] = StatementMeta(sid, raw.get("label", ""), raw.get("section", ""), raw.get("statement", "").strip(),
                                 decls, raw.get("seed_label", ""))
    return out


def statement(sid: str) -> StatementMeta:
    """The statement with id ``sid`` (QKInputError when unknown)."""
    st = load().get(sid)
    if st is None:
        raise QKInputError(f"no lean_map entry for statement {sid!r}")
    return st


def declaration(name: str) -> DeclMeta:
    """The declaration with full Lean name or check id ``name``."""
    for st in load().values():
        for d in st.decls:
            if name in (d.name, d.check):
                return d
    raise QKInputError(f"no lean_map [[decl]] for {name!r}")


def resolve(name: str) -> StatementMeta | None:
    """The statement named by a statement id, a blueprint label ("Theorem 4", "thm 4"),
    the seed's label ("Proposition 6"), or one of its declarations (full Lean name or
    check id); None when nothing matches.  A blueprint label wins over a seed label."""
    key = " ".join(name.strip().lower().replace("thm", "theorem").split())
    for st in load().values():
        if key in (st.id.lower(), st.label.lower()):
            return st
    for st in load().values():
        if st.seed_label and key == st.seed_label.lower():
            return st
    for st in load().values():
        if any(key in (d.name.lower(), d.check.lower()) for d in st.decls):
            return st
    return None
