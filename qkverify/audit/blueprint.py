"""The blueprint side of lean-audit: leanblueprint LaTeX parsed into its
statement environments, numbered as LaTeX numbers them, and the skeleton of
the blueprint shipped in ``qkverify/data/blueprint.json`` (environments,
``\\label`` keys, rendered numbers, ``\\lean{}`` names; no prose).

Pure text processing: no arithmetic.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import QKInputError

KINDS = ("theorem", "lemma", "proposition", "corollary", "definition")
#: The blueprint skeleton shipped with the package.
SKELETON_PATH = Path(__file__).resolve().parents[1] / "data" / "blueprint.json"
SKELETON_FORMAT = "qkverify-blueprint-skeleton/1"

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
