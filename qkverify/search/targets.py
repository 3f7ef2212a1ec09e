"""What the counterexample search and the hypothesis probes attack: Lean declarations
(one registered check each, with the hypotheses of its Lean signature from
``lean_map/*.toml``) and user conjectures (:mod:`qkverify.search.user`).

A :class:`Selection` is what a user names on the command line -- a statement id
or blueprint label (all its declarations with a registered check), one
declaration (its full Lean name, or a check id that is not also a statement id)
or a user conjecture -- and knows how to decide the hypotheses of each of its
:class:`Target` declarations on an input (the registered predicate functions,
:func:`qkverify.claims.registry.predicate_fn`), how to evaluate them
(:func:`qkverify.claims.evaluate.evaluate`) and which certificate that writes.
Nothing here is specific to a statement: new statements, input kinds and
predicates work without edits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..claims import metadata
from ..claims.registry import NotApplicable, Subject, Undecided, declaration_check_fn, predicate_fn, registered_check_ids
from ..errors import QKInputError

#: the prefix of a user conjecture's statement and declaration names in a certificate
USER_PREFIX = "user."


@dataclass(frozen=True)
class Binder:
    """One hypothesis of a target: its Lean binder (or the user's hypothesis name), its text,
    and how it is decided (a registered predicate id, or the user's callable)."""

    binder: str
    text: str
    predicate: Any
    #: lean_map's reason why no counterexample can exist with this binder dropped ("" when one may)
    unprobeable: str = ""


@dataclass(frozen=True)
class Target:
    """One declaration the search attacks.

    statement -- statement id (``user.<name>`` for a user conjecture)
    name      -- full Lean name (``user.<name>``)
    check     -- check id (the Lean name without namespace; the user's name)
    kind      -- Lean kind (``theorem``, ``lemma``, ``def``, …) or ``conjecture``
    binders   -- its hypotheses, in signature order
    kinds     -- the input kinds it is evaluated on
    """

    statement: str
    label: str
    name: str
    check: str
    kind: str
    binders: tuple[Binder, ...]
    kinds: tuple[str, ...]

    def binder_names(self) -> tuple[str, ...]:
        return tuple(b.binder for b in self.binders)


@dataclass
class Evaluation:
    """One input evaluated: the declaration records and the certificate they make.

    records -- (check id, hypotheses {binder: bool}, dropped binders, conclusion, evidence, reason)
    skipped -- (check id, why) of declarations not evaluated on this input
    """

    records: list[tuple[str, dict, tuple, str, str, str]]
    skipped: list[tuple[str, str]]
    certificate: Callable[[], dict]
    values: dict = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        from ..claims.evaluate import verdict_of

        return verdict_of([r[3] for r in self.records])

    def failing(self, drop: str | None = None) -> list[str]:
        """Check ids whose conclusion fails with every non-dropped hypothesis true (and, when
        ``drop`` is given, with that hypothesis false)."""
        # format 3: a sampled failure is "inconsistent" (evidence, not a refutation; the probes
        # table says so from the evidence level)
        return [r[0] for r in self.records if r[3] in ("fails", "inconsistent")
                and (drop is None or r[1].get(drop) is False)]

    def evidence_of(self, checks: list[str]) -> str:
        order = ("exact", "certified", "empirical")
        return max((r[4] for r in self.records if r[0] in checks), key=order.index, default="exact")


class Selection:
    """Declarations named by the user, and how to evaluate them on an input."""

    id: str          # statement id, declaration check id or conjecture name (file names, messages)
    label: str
    statement: str   # statement id in certificates
    targets: tuple[Target, ...]
    user: bool = False

    def kinds(self) -> tuple[str, ...]:
        out: list[str] = []
        for t in self.targets:
            out.extend(k for k in t.kinds if k not in out)
        return tuple(out)

    def binders(self) -> tuple[str, ...]:
        out: list[str] = []
        for t in self.targets:
            out.extend(b for b in t.binder_names() if b not in out)
        return tuple(out)

    def hypotheses(self, target: Target, inp: Any, cache: dict | None = None) -> dict[str, bool]:
        """The truth of each hypothesis of ``target`` on ``inp`` (exact); NotApplicable when one
        is not even stated for this input."""
        raise NotImplementedError

    def evaluate(self, inp: Any, drop: tuple[str, ...] = (), only: tuple[str, ...] = ()) -> Evaluation:
        """Evaluate the targets (``only``: these check ids) on ``inp`` with the binders ``drop``
        allowed to be false; QKInputError when nothing could be evaluated."""
        raise NotImplementedError

    def recheck_command(self, drop: str | None, input_file: str, target: Target | None = None) -> str:
        raise NotImplementedError

    def load(self, path: str | Path) -> Any:
        """Read an input file the way ``qkverify check`` does for this selection."""
        raise NotImplementedError


class DeclSelection(Selection):
    """A statement's declarations with registered checks (all, or one of them)."""

    def __init__(self, st: metadata.StatementMeta, only: str | None = None):
        ids = registered_check_ids()
        self.meta = st
        self.statement = st.id
        self.label = st.label
        self.targets = tuple(
            Target(st.id, st.label, d.name, d.check, d.kind,
                   tuple(Binder(h.binder, h.text, h.predicate, h.unprobeable) for h in d.hypotheses),
                   tuple(declaration_check_fn(d.check).kinds))
            for d in st.decls if d.check in ids and (only is None or d.check == only))
        self.single = only
        self.id = only or st.id
        if not self.targets:
            raise QKInputError(f"{st.id} ({st.label}): no declaration of it has a registered check yet; "
                               "`qkverify claims` shows which are checked")

    def hypotheses(self, target: Target, inp: Any, cache: dict | None = None) -> dict[str, bool | None]:
        """Each binder decided (None when its predicate cannot decide it: :class:`Undecided`)."""
        subj = cache.setdefault("subject", Subject(inp)) if cache is not None else Subject(inp)
        out: dict[str, bool | None] = {}
        for b in target.binders:
            try:
                out[b.binder] = bool(predicate_fn(b.predicate)(subj))
            except Undecided:
                out[b.binder] = None
        return out

    def evaluate(self, inp: Any, drop: tuple[str, ...] = (), only: tuple[str, ...] = ()) -> Evaluation:
        from ..claims.evaluate import evaluate

        if not only and self.single is not None:
            only = (self.single,)
        run = evaluate(self.statement, inp, drop=drop, only=only)
        recs = [(r.meta.check, dict(r.hypotheses), tuple(r.dropped), r.conclusion, r.result.evidence,
                 r.result.reason) for r in run.records]
        return Evaluation(recs, list(run.skipped), run.certificate)

    def cli_name(self, target: Target | None = None) -> str:
        """What to pass to ``qkverify check`` to evaluate exactly these declarations."""
        if target is not None and len(self.meta.decls) > 1:
            return target.name
        if self.single is not None:
            return self.targets[0].name
        return self.statement

    def recheck_command(self, drop: str | None, input_file: str, target: Target | None = None) -> str:
        return (f"qkverify check {self.cli_name(target)} --input {input_file}"
                + (f" --drop {drop}" if drop else ""))

    def load(self, path: str | Path) -> Any:
        return load_for_kinds(path, self.kinds())


def load_for_kinds(path: str | Path, kinds: tuple[str, ...] | set[str]) -> Any:
    """Read an input file for declarations evaluated on ``kinds``: the document's own shape, or
    the reading a kind asks for (a head where only heads are taken, a matrix with its head
    dimension n, a law); QKInputError when the file is unreadable or of none of the kinds."""
    from ..exact.rational import read_input_file
    from ..io.inputs import input_from_document

    doc = read_input_file(path)
    wants = [w for k, w in (("law", "law"), ("head", "head"), ("matrix_bound", "matrix_n"), ("matrix", "matrix"))
             if k in kinds]
    errors: list[QKInputError] = []
    for want in [None] + wants:
        try:
            inp = input_from_document(doc, want, str(path))
        except QKInputError as err:
            errors.append(err)
            continue
        if getattr(inp, "kind2", None) in kinds:
            return inp
        errors.append(QKInputError(f"{path}: a {getattr(inp, 'kind2', '?')} input; these declarations take "
                                   f"{', '.join(sorted(kinds))}"))
    # the reading a kind asked for names the problem best (e.g. "needs a head dimension")
    raise errors[1] if len(errors) > 1 else errors[0]


def resolve(name: str) -> Selection:
    """The selection named by ``name``: a user conjecture, a statement (id, blueprint or seed
    label: every declaration with a registered check), or one declaration (full Lean name, or a
    check id that is not also a statement id) -- :func:`qkverify.claims.metadata.find`.
    QKInputError (exit 2) when nothing matches or nothing is checked."""
    from .user import USER_CONJECTURES, UserSelection

    if name in USER_CONJECTURES:
        return UserSelection(USER_CONJECTURES[name])
    hit = metadata.find(name)
    if hit is None:
        raise QKInputError(f"unknown claim {name!r}: not a statement id, blueprint label, Lean declaration or "
                           "user conjecture; `qkverify claims` lists them")
    st, decl = hit
    return DeclSelection(st, only=decl.check if decl is not None else None)


def all_selections() -> list[Selection]:
    """Every statement (lean_map order) with at least one registered declaration check."""
    ids = registered_check_ids()
    return [DeclSelection(st) for st in metadata.load().values() if any(d.check in ids for d in st.decls)]


def input_document(inp: Any) -> dict | None:
    """The input's file form (``to_json2``, or ``to_json``), which ``qkverify check`` reads back;
    None for a user input without one."""
    for attr in ("to_json2", "to_json"):
        f = getattr(inp, attr, None)
        if f is not None:
            try:
                return dict(f())
            except Exception:  # a user object whose JSON form is broken
                return None
    return None


def input_key(inp: Any) -> str | None:
    """Exact identity of an input (its canonical JSON), None when it has no JSON form."""
    doc = input_document(inp)
    if doc is None:
        try:
            return "repr:" + repr(inp)
        except Exception:
            return None
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


__all__ = ["Binder", "Target", "Evaluation", "Selection", "DeclSelection", "resolve", "all_selections",
           "load_for_kinds", "input_document", "input_key", "NotApplicable", "USER_PREFIX"]
