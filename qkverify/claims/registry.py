"""The check registry: one check function per Lean declaration (check id) and one
decision per hypothesis predicate id; their metadata (kind, hypotheses, conclusion)
lives in ``lean_map/*.toml`` (:mod:`.metadata`).

A check id is the Lean declaration name without the ``Appendices.`` /
``Appendices.MainText.`` namespace (e.g. ``profileA_nonneg``), or the id of a
clustering check unit (``clusters.good_triple``).  Importing the section modules
(:func:`qkverify.claims.load_all`) registers every check.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable


def _ensure_loaded() -> None:
    # Importing the package registers every section module.
    from . import load_all

    load_all()


class Undecided(Exception):
    """A hypothesis predicate cannot decide its Lean hypothesis exactly on this input (the
    message says why); the record shows the hypothesis as undecided (None)."""


class NotApplicable(Exception):
    """The declaration's conclusion cannot be evaluated on this input (e.g. the
    existential side of an iff with no candidate): it is skipped, with the reason."""


@dataclass
class DeclResult:
    """What a check function returns.

    conclusion -- True / False, or None when undecided (``reason`` says why)
    evidence   -- ``exact`` / ``certified`` / ``empirical``
    value      -- definitions: the computed value as a certificate value object
                  ({"exact": …}, {"enclosure": […]}, {"list": …}, {"matrix": …}, …)
    sample     -- empirical evidence: the record's ``sample`` object (seed and its derivation,
                  confidence 1 − δ, test and statistic); the conclusion then reads
                  consistent (True) / inconsistent (False), never holds / fails
    """

    conclusion: bool | None
    evidence: str = "exact"
    value: dict | None = None
    reason: str = ""
    sample: dict | None = None


class Subject:
    """One concrete input under evaluation: a cache for the producer's computations
    and the witnesses the evaluated declarations need (at most one per (kind, of))."""

    def __init__(self, inp: Any):
        self.inp = inp
        self._memo: dict = {}
        self.witnesses: dict[tuple, dict] = {}
        self._asked: list[set] = []  # witness keys asked for, per open declaration / memo build

    @property
    def kind(self) -> str:
        return self.inp.kind2

    def memo(self, key, fn: Callable[[], Any]) -> Any:
        """fn() once per key; the witnesses its first evaluation asked for are asked for again on
        every later use, so that a declaration using a cached value still claims them."""
        if key not in self._memo:
            self._asked.append(set())
            try:
                val = fn()
            finally:
                asked = self._asked.pop()
            self._memo[key] = (val, asked)
        val, asked = self._memo[key]
        if self._asked:
            self._asked[-1] |= asked
        return val

    def witness(self, w: dict) -> None:
        """Record a witness the certificate must carry."""
        k = (w["kind"], w.get("of"))
        self.witnesses.setdefault(k, w)
        if self._asked:
            self._asked[-1].add(k)

    def begin(self) -> None:
        """Start collecting the witnesses one declaration asks for."""
        self._asked.append(set())

    def end(self) -> set:
        """The witness keys asked for since the matching :meth:`begin`."""
        return self._asked.pop()


@dataclass(frozen=True)
class DeclCheck:
    """A registered check: its id, the input kinds it takes, the function, and the
    module-level statement (file, line) that registered it -- the conformance sheet shows it."""

    check_id: str
    kinds: tuple[str, ...]
    fn: Callable[[Subject], DeclResult]
    registered_at: tuple[str, int] = ("", 0)


_DECL_CHECKS: dict[str, DeclCheck] = {}
_PREDICATES: dict[str, Callable[[Subject], bool]] = {}


def declaration_check(check_id: str, kinds: tuple[str, ...] = ("matrix",)) -> Callable:
    """Decorator registering the check function of one Lean declaration, evaluated on
    inputs of the given kinds.  Raises ValueError when ``check_id`` is registered twice."""
    frame = caller = sys._getframe(1)
    while frame is not None and frame.f_code.co_name != "<module>":  # through helpers like _l7(name, fn)
        frame = frame.f_back
    frame = frame if frame is not None and frame.f_code.co_filename == caller.f_code.co_filename else caller
    where = (frame.f_code.co_filename, frame.f_lineno)

    def deco(fn: Callable[[Subject], DeclResult]) -> Callable[[Subject], DeclResult]:
        if check_id in _DECL_CHECKS:
            raise ValueError(f"declaration check {check_id!r} registered twice")
        _DECL_CHECKS[check_id] = DeclCheck(check_id, tuple(kinds), fn, where)
        return fn

    return deco


def predicate(pid: str) -> Callable:
    """Decorator registering the exact decision of a hypothesis predicate (lean_map ``predicate``):
    True or False, or raise :class:`Undecided` when it is out of exact reach on the input."""

    def deco(fn: Callable[[Subject], bool]) -> Callable[[Subject], bool]:
        if pid in _PREDICATES:
            raise ValueError(f"predicate {pid!r} registered twice")
        _PREDICATES[pid] = fn
        return fn

    return deco


def registered_check_ids() -> frozenset[str]:
    """Check ids that have a registered check function (after loading every section module)."""
    _ensure_loaded()
    return frozenset(_DECL_CHECKS)


def declaration_check_fn(check_id: str) -> DeclCheck:
    """The registered check of ``check_id``; KeyError when none is registered."""
    _ensure_loaded()
    return _DECL_CHECKS[check_id]


def predicate_fn(pid: str) -> Callable[[Subject], bool]:
    """The registered decision of predicate ``pid``; KeyError when none is registered."""
    _ensure_loaded()
    return _PREDICATES[pid]


def registered_predicates() -> frozenset[str]:
    """Predicate ids that have a registered decision (after loading every section module)."""
    _ensure_loaded()
    return frozenset(_PREDICATES)
