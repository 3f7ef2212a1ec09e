"""The claim registry: every statement of the paper (docs/MATH.md) is registered exactly once.

A :class:`Claim` is data (ids, labels, Lean declarations, named hypotheses) plus
one ``conclusion`` function that evaluates the statement's conclusion on a
concrete input with exact arithmetic.  The audit, the counterexample search,
the hypothesis probes and the certificate writer all find claims here.

Conventions
-----------
* ``id`` is the Lean name of the statement's main declaration (without the
  ``Appendices.`` / ``Appendices.MainText.`` namespace), e.g.
  ``heads_have_balanced_attention``.
* ``label`` is the arXiv v1 blueprint label ("Theorem 3"); ``seed_label`` the
  label the seed pages use where it differs ("Proposition 6" for Prop 5).
* ``conclusion(inp)`` ignores the hypotheses and evaluates the conclusion with
  Lean's conventions (x/0 = 0, lists padded to length N).  ``check`` first
  tests the hypotheses and refuses inputs that violate one, which is what a
  user wants; the probes call ``conclusion`` directly on inputs that violate
  exactly one hypothesis.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import HypothesisFailed, QKInputError

VERDICTS = ("holds", "fails", "undecided")
EVIDENCE = ("exact", "certified", "empirical")


@dataclass(frozen=True)
class Hypothesis:
    """A named hypothesis of a claim.

    ``holds(inp) -> bool`` decides it exactly on a concrete input.
    """

    name: str
    text: str
    holds: Callable[[Any], bool]


@dataclass
class Result:
    """Outcome of evaluating a claim on one input.

    verdict   -- ``holds`` / ``fails`` / ``undecided``
    evidence  -- ``exact`` / ``certified`` / ``empirical``
    witness   -- JSON-serialisable witness data (see certificates/schema)
    values    -- JSON-serialisable computed values shown to the user
    convention-- padding convention used, where the statement depends on one
    reason    -- one line: why it fails / why it is undecided (precision used)
    """

    verdict: str
    evidence: str
    witness: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)
    convention: str | None = None
    reason: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"bad verdict {self.verdict!r}")
        if self.evidence not in EVIDENCE:
            raise ValueError(f"bad evidence level {self.evidence!r}")


@dataclass(frozen=True)
class Claim:
    """One statement of the paper (docs/MATH.md).

    input_kind is one of ``matrix`` (an N x N rational L), ``symmetric``
    (a rational symmetric S), ``head`` (W_Q, W_K, each n x N), ``orthogonal``
    (L and a rational orthogonal U), ``law`` (a finite probability law and
    sizes), ``spectrum`` (a rational vector).
    """

    id: str
    label: str
    section: str
    lean_decls: tuple[str, ...]
    statement: str
    hypotheses: tuple[Hypothesis, ...]
    input_kind: str
    conclusion: Callable[[Any], Result]
    seed_label: str | None = None
    aliases: tuple[str, ...] = ()

    def failed_hypotheses(self, inp: Any) -> list[Hypothesis]:
        """Hypotheses of this claim that are false on ``inp`` (exact)."""
        return [h for h in self.hypotheses if not h.holds(inp)]

    def check(self, inp: Any) -> Result:
        """Evaluate the claim on ``inp``.

        Raises HypothesisFailed (exit 2 in the CLI) naming the first hypothesis
        that fails, e.g. ``L = 0 has no profile``.
        """
        bad = self.failed_hypotheses(inp)
        if bad:
            h = bad[0]
            raise HypothesisFailed(
                f"{self.id} ({self.label}): hypothesis '{h.name}' ({h.text}) fails on this input"
            )
        return self.conclusion(inp)


_REGISTRY: dict[str, Claim] = {}


def _norm(name: str) -> str:
    s = name.strip().lower()
    s = re.sub(r"^(appendices\.)(maintext\.)?", "", s)
    s = s.replace("thm", "theorem").replace("prop ", "proposition ").replace("cor ", "corollary ")
    s = re.sub(r"^def\.?\s*", "definition ", s)
    s = re.sub(r"^lem\.?\s*", "lemma ", s)
    return re.sub(r"\s+", " ", s)


def register(claim: Claim) -> Claim:
    """Register ``claim`` once; a second claim with the same id is an error."""
    if claim.id in _REGISTRY:
        raise ValueError(f"claim {claim.id!r} registered twice")
    _REGISTRY[claim.id] = claim
    return claim


def _ensure_loaded() -> None:
    # Importing the package registers every section module.
    from . import load_all  # noqa: F401

    load_all()


def all_claims() -> list[Claim]:
    """All registered claims, in registration order (SPEC order)."""
    _ensure_loaded()
    return list(_REGISTRY.values())


def get(name: str) -> Claim:
    """Find a claim by Lean id (with or without namespace), blueprint label
    ("Theorem 3", "thm 3"), seed label ("Proposition 6") or alias.

    Raises QKInputError (exit 2) with the known ids when nothing matches, and
    when a label is ambiguous.
    """
    _ensure_loaded()
    key = _norm(name)
    if key in {_norm(k) for k in _REGISTRY}:
        for k, c in _REGISTRY.items():
            if _norm(k) == key:
                return c
    hits = [
        c
        for c in _REGISTRY.values()
        if key == _norm(c.label)
        or (c.seed_label and key == _norm(c.seed_label))
        or key in {_norm(a) for a in c.aliases}
        or key in {_norm(d) for d in c.lean_decls}
    ]
    # a label shared by several registered checks (e.g. Def 6 and Theorem 4
    # share nothing, but a seed label may collide with an arXiv label):
    # prefer the arXiv label.
    exact = [c for c in hits if key == _norm(c.label)]
    if len(exact) == 1:
        return exact[0]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise QKInputError(
            f"claim name {name!r} is ambiguous: " + ", ".join(c.id for c in hits)
        )
    raise QKInputError(
        f"unknown claim {name!r}; `qkverify claims` lists the {len(_REGISTRY)} known ids and labels"
    )


# --------------------------------------------------------------------------
# Per-declaration checks (certificate format 2).  A check id is the Lean
# declaration name without the ``Appendices.`` / ``Appendices.MainText.``
# namespace (e.g. ``profileA_nonneg``); its metadata (kind, hypotheses,
# statement) lives in ``lean_map/*.toml`` (:mod:`.metadata`).


class Undecided(Exception):
    """A hypothesis predicate cannot decide its Lean hypothesis exactly on this input (the
    message says why); the record shows the hypothesis as undecided."""


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
    """

    conclusion: bool | None
    evidence: str = "exact"
    value: dict | None = None
    reason: str = ""


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
    check_id: str
    kinds: tuple[str, ...]
    fn: Callable[[Subject], DeclResult]


_DECL_CHECKS: dict[str, DeclCheck] = {}
_PREDICATES: dict[str, Callable[[Subject], bool]] = {}


def declaration_check(check_id: str, kinds: tuple[str, ...] = ("matrix",)) -> Callable:
    """Decorator registering the check function of one Lean declaration, evaluated on
    inputs of the given kinds.  Raises ValueError when ``check_id`` is registered twice."""

    def deco(fn: Callable[[Subject], DeclResult]) -> Callable[[Subject], DeclResult]:
        if check_id in _DECL_CHECKS:
            raise ValueError(f"declaration check {check_id!r} registered twice")
        _DECL_CHECKS[check_id] = DeclCheck(check_id, tuple(kinds), fn)
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
