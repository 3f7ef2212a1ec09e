"""The claim table: for every Lean declaration the kernel checks, the statement it belongs
to, the input kinds it is evaluated on, the types of its arguments on such an input, its
hypotheses (Lean binder → predicate id) and its conclusion -- a function of the kernel's
facts.  A definition's entry computes its value by the definition; the certificate's
value must agree.  The entries live in :mod:`.rules`, one module per blueprint section
(their docstring explains how to write one); this module holds the table and its
vocabulary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .derive import Ctx
from .jsonio import NotEvaluable  # noqa: F401  (re-exported for the rule packs)


@dataclass(frozen=True)
class Decl:
    statement: str
    kinds: tuple[str, ...]
    binders: tuple[tuple[str, str], ...]  # (Lean binder, predicate id)
    fn: Callable[[Ctx], Any]
    is_def: bool = False
    args: tuple[Callable[[Ctx], None], ...] = ()  # the declaration's argument types on the input


#: full Lean name -> entry
TABLE: dict[str, Decl] = {}
#: hypothesis predicate id -> exact decision on the kernel's facts
PREDICATES: dict[str, Callable[[Ctx], bool]] = {}

A, MT = "Appendices.", "Appendices.MainText."


def thm(name: str, statement: str, kinds: tuple[str, ...], binders: tuple, fn: Callable[[Ctx], bool],
        args: tuple = ()) -> None:
    """Register a theorem or lemma: its conclusion as a function of the facts (True / False,
    or raise Undecided); ``args``: checks of its argument types beyond the input kind's."""
    assert name not in TABLE, name
    TABLE[name] = Decl(statement, kinds, binders, fn, False, tuple(args))


def dfn(name: str, statement: str, kinds: tuple[str, ...], fn: Callable[[Ctx], Any], binders: tuple = (),
        args: tuple = ()) -> None:
    """Register a definition: its value computed by the definition."""
    assert name not in TABLE, name
    TABLE[name] = Decl(statement, kinds, binders, fn, True, tuple(args))


def predicate(pid: str, fn: Callable[[Ctx], bool]) -> None:
    """Register the decision of a hypothesis predicate."""
    assert pid not in PREDICATES, pid
    PREDICATES[pid] = fn
