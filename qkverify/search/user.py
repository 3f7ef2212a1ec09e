"""User conjectures: your own statements for ``qkverify search/probes --module FILE``.

A conjecture is its own statement with one declaration (its name) and its own
named hypotheses; :func:`conjecture` registers it here, apart from the Lean
statements (which live in ``lean_map/*.toml`` and ``qkverify.claims``).  Its
certificates have the format-2 shape with the statement and declaration name
``user.<name>``; the kernel has no table entry for them, so ``qkverify
verify`` reports them as *not checkable* (exit 1, or 0 with
``--allow-uncheckable``).  Example: ``docs/conjectures_example.py``.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..errors import QKInputError
from .targets import USER_PREFIX, Binder, Evaluation, Selection, Target, input_document, load_for_kinds

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.']{0,99}$")
_BINDER = re.compile(r"^[A-Za-z_][A-Za-z0-9_']{0,99}$")

#: old ``input_kind`` names -> certificate input kinds (``symmetric`` draws symmetric matrices)
KIND_ALIASES = {"matrix_n": "matrix_bound", "orthogonal": "matrix_pair", "symmetric": "matrix"}


@dataclass(frozen=True)
class UserConjecture:
    """A user's statement: ``check(inp)`` decides the conclusion exactly; ``hypotheses`` are
    (name, text, predicate) triples; inputs come from ``strategy`` or the strategy of
    ``input_kind`` (:func:`qkverify.search.strategies.strategy_for_kind`)."""

    name: str
    label: str
    statement: str
    hypotheses: tuple[tuple[str, str, Callable[[Any], bool]], ...]
    check: Callable[[Any], Any]
    input_kind: str
    strategy: Callable[[int, str | None], Any] | None = None

    @property
    def kind2(self) -> str:
        return KIND_ALIASES.get(self.input_kind, self.input_kind)


#: conjectures registered by :func:`conjecture`, by name
USER_CONJECTURES: dict[str, UserConjecture] = {}


def _hypotheses(spec) -> tuple:
    if spec is None:
        return ()
    items: Iterable = [(k, k, v) for k, v in spec.items()] if isinstance(spec, Mapping) else spec
    out = []
    for it in items:
        if hasattr(it, "holds") and hasattr(it, "name"):  # a registry.Hypothesis-like object
            it = (it.name, getattr(it, "text", it.name), it.holds)
        if not isinstance(it, tuple) or len(it) not in (2, 3):
            raise QKInputError(f"a hypothesis is (name, predicate) or (name, text, predicate); got {it!r}")
        name, text, pred = (it[0], it[0], it[1]) if len(it) == 2 else it
        if not callable(pred):
            raise QKInputError(f"hypothesis {name!r}: predicate is not callable")
        if not isinstance(name, str) or not _BINDER.match(name):
            raise QKInputError(f"hypothesis name {name!r}: use letters, digits, _ and ' (like a Lean binder)")
        out.append((name, str(text), pred))
    names = [h[0] for h in out]
    if len(set(names)) != len(names):
        raise QKInputError(f"duplicate hypothesis names: {names}")
    return tuple(out)


def _clashes(name: str) -> bool:
    from ..claims import metadata

    if metadata.resolve(name) is not None:
        return True
    return any(name in (d.name, d.check) for st in metadata.load().values() for d in st.decls)


def conjecture(
    name: str,
    *,
    check: Callable | None = None,
    hypotheses: Mapping[str, Callable] | Iterable | None = None,
    strategy: Any = None,
    input_kind: str | None = None,
    statement: str = "",
    label: str | None = None,
    lean_decls: tuple[str, ...] = (),
):
    """Register a user conjecture (``qkverify search NAME --module FILE`` then attacks it).

    name        -- its name (letters, digits, ``_ . '``); must not be a Lean statement, label or
                   declaration
    check       -- exact decision of the conclusion: ``inp -> bool``, ``(bool, {name: value})``
                   (values shown in the certificate's display), or None (undecided); omit it to
                   use ``conjecture(...)`` as a decorator
    hypotheses  -- ``{name: predicate}`` or ``(name, text, predicate)`` tuples; names like Lean
                   binders
    strategy    -- Hypothesis SearchStrategy of inputs, or ``factory(max_dim, family)``; default:
                   the strategy of ``input_kind``
    input_kind  -- an input kind (``matrix``, the default without a strategy, ``matrix_bound``,
                   ``head``, ``matrix_pair``, ``rank_one``, …; also ``matrix_n``, ``orthogonal``,
                   ``symmetric``), or ``custom`` (the default with a strategy)
    lean_decls  -- ignored (kept for old conjecture files)

    Returns the UserConjecture (or a decorator returning it).  Raises QKInputError for a name
    clash or malformed hypotheses.
    """
    if check is None:
        return lambda fn: conjecture(name, check=fn, hypotheses=hypotheses, strategy=strategy,
                                     input_kind=input_kind, statement=statement, label=label)
    if not isinstance(name, str) or not _NAME.match(name):
        raise QKInputError(f"conjecture name {name!r}: use letters, digits, '_', '.' and \"'\"")
    if name not in USER_CONJECTURES and _clashes(name):
        raise QKInputError(f"conjecture name {name!r} clashes with a built-in statement or declaration")
    kind = input_kind or ("custom" if strategy is not None else "matrix")
    factory = None
    if strategy is not None:
        from hypothesis import strategies as st

        if isinstance(strategy, st.SearchStrategy):
            factory = (lambda fixed: lambda max_dim, family: fixed)(strategy)
        elif callable(strategy):
            factory = strategy
        else:
            raise QKInputError("strategy must be a Hypothesis SearchStrategy or factory(max_dim, family)")
    if strategy is None and input_kind == "symmetric":
        from . import strategies as S

        factory = lambda max_dim, family: S.symmetric_input(max_dim, family)  # noqa: E731
    c = UserConjecture(name, label or f"user conjecture {name}",
                       statement or (check.__doc__ or "").strip().split("\n")[0] or name,
                       _hypotheses(hypotheses), check, kind, factory)
    USER_CONJECTURES[name] = c
    return c


def forget_conjecture(name: str) -> None:
    """Remove a conjecture registered with :func:`conjecture` (tests, REPLs); QKInputError when
    ``name`` is not one."""
    if name not in USER_CONJECTURES:
        raise QKInputError(f"{name!r} is not a user conjecture")
    del USER_CONJECTURES[name]


def load_module(path: str | Path):
    """Import a conjecture file by path (its ``conjecture(...)`` calls register conjectures).
    Returns the module; QKInputError when the file is missing or raises while importing."""
    p = Path(path)
    if not p.is_file():
        raise QKInputError(f"{p}: no such conjecture file")
    digest = hashlib.sha256(str(p.resolve()).encode()).hexdigest()[:12]
    mod_name = f"qkverify_user_conjectures_{digest}"
    spec = importlib.util.spec_from_file_location(mod_name, p)
    if spec is None or spec.loader is None:
        raise QKInputError(f"{p}: cannot be imported as a Python module")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = mod
    try:
        spec.loader.exec_module(mod)
    except QKInputError:
        raise
    except Exception as err:
        raise QKInputError(f"{p}: importing the conjecture file failed ({type(err).__name__}: {err})") from None
    return mod


# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _schema_input_kinds() -> frozenset[str]:
    from ..certificates import SCHEMA_PATH

    s = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return frozenset(s["properties"]["input"]["properties"]["kind"]["enum"])


def _decide(c: UserConjecture, inp: Any) -> tuple[str, str, dict, str]:
    """(conclusion, evidence, values, reason) of the user's check."""
    r = c.check(inp)
    values: dict = {}
    if isinstance(r, tuple) and len(r) == 2 and isinstance(r[1], Mapping):
        r, values = r
    if hasattr(r, "verdict") and hasattr(r, "evidence"):  # an old registry.Result
        return r.verdict, r.evidence, dict(getattr(r, "values", {}) or {}), getattr(r, "reason", "")
    if r is None:
        return "undecided", "exact", dict(values), f"the check of {c.name} returned None"
    if not isinstance(r, bool):
        raise TypeError(f"conjecture {c.name!r}: check returned {type(r).__name__}, expected bool, "
                        "(bool, dict) or None")
    return ("holds" if r else "fails"), "exact", dict(values), "" if r else f"the check of {c.name} returned False"


def _jsonable(v: Any) -> Any:
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return str(v)


class UserSelection(Selection):
    """One user conjecture as a search target."""

    user = True

    def __init__(self, c: UserConjecture):
        self.conj = c
        self.id = c.name
        self.label = c.label
        self.statement = USER_PREFIX + c.name
        self.targets = (Target(self.statement, c.label, self.statement, self.statement, "conjecture",
                               tuple(Binder(n, t, p) for n, t, p in c.hypotheses), (c.kind2,)),)

    def hypotheses(self, target: Target, inp: Any, cache: dict | None = None) -> dict[str, bool]:
        return {b.binder: bool(b.predicate(inp)) for b in target.binders}

    def evaluate(self, inp: Any, drop: tuple[str, ...] = (), only: tuple[str, ...] = ()) -> Evaluation:
        c, t = self.conj, self.targets[0]
        hyps = self.hypotheses(t, inp)
        bad = [b for b in t.binders if not hyps[b.binder] and b.binder not in drop]
        if bad:
            raise QKInputError(f"{c.name}: hypothesis {bad[0].binder} ({bad[0].text}) fails on this input")
        concl, ev, values, reason = _decide(c, inp)
        dropped = tuple(b for b in t.binder_names() if b in drop)
        rec = (t.check, hyps, dropped, concl, ev, reason)

        def certificate(display: dict | None = None) -> dict:
            from ..certificates import build

            doc = input_document(inp)
            disp: dict[str, Any] = {"label": c.label, "statement": c.statement}
            if values:
                disp["values"] = _jsonable(values)
            if doc is not None and doc.get("kind") in _schema_input_kinds() and doc.get("kind") != "user":
                inp_json = doc
            else:
                inp_json = {"kind": "user"}
                disp["input"] = _jsonable(doc) if doc is not None else repr(inp)
            d: dict[str, Any] = {"name": t.name, "check": t.check, "hypotheses": hyps, "conclusion": concl,
                                 "evidence": ev}
            if dropped:
                d["dropped"] = list(dropped)
            disp.update(display or {})
            return build(self.statement, inp_json, [], [d], concl, ev, disp)

        return Evaluation([rec], [], certificate, values)

    def recheck_command(self, drop: str | None, input_file: str, target: Target | None = None) -> str:
        return (f"re-evaluate {self.conj.name} on {input_file} (a user conjecture: the kernel cannot check it)")

    def load(self, path: str | Path) -> Any:
        return load_for_kinds(path, (self.conj.kind2,))


__all__ = ["UserConjecture", "USER_CONJECTURES", "conjecture", "forget_conjecture", "load_module",
           "UserSelection"]
