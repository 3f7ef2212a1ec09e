"""The claim table: for every Lean declaration the kernel checks, the statement
it belongs to, the input kinds it is evaluated on, its hypotheses (Lean binder
→ predicate id) and its conclusion -- a function of the kernel's derived facts.
A definition's entry computes its value by the definition; the certificate's
value must agree.  The entries live in :mod:`.rules`, one small module per
blueprint section; this module holds the table and its vocabulary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .derive import Ctx


class NotEvaluable(Exception):
    """The declaration's conclusion cannot be evaluated on this input (e.g. the
    existential side of an iff with no candidate given): it must not be listed."""


@dataclass(frozen=True)
class Decl:
    statement: str
    kinds: tuple[str, ...]
    binders: tuple[tuple[str, str], ...]  # (Lean binder, predicate id)
    fn: Callable[[Ctx], Any]
    is_def: bool = False


#: full Lean name -> entry
TABLE: dict[str, Decl] = {}
#: hypothesis predicate id -> exact decision on the kernel's facts
PREDICATES: dict[str, Callable[[Ctx], bool]] = {}

A, MT = "Appendices.", "Appendices.MainText."


def thm(name: str, statement: str, kinds: tuple[str, ...], binders: tuple, fn: Callable[[Ctx], bool]) -> None:
    """Register a theorem or lemma: its conclusion as a function of the facts."""
    assert name not in TABLE, name
    TABLE[name] = Decl(statement, kinds, binders, fn)


def dfn(name: str, statement: str, kinds: tuple[str, ...], fn: Callable[[Ctx], Any], binders: tuple = ()) -> None:
    """Register a definition: its value computed by the definition."""
    assert name not in TABLE, name
    TABLE[name] = Decl(statement, kinds, binders, fn, True)


def predicate(pid: str, fn: Callable[[Ctx], bool]) -> None:
    """Register the decision of a hypothesis predicate."""
    assert pid not in PREDICATES, pid
    PREDICATES[pid] = fn
