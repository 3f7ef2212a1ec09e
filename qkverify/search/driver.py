"""Counterexample search driver on top of ``hypothesis.find``.

``search(sel, ...)`` looks for an input on which one of the selected
declarations (:mod:`qkverify.search.targets`) has all its hypotheses true and
a failing conclusion; ``search(sel, drop=b)`` (the probes) looks for an input
on which the hypothesis ``b`` of a declaration is false, its other
hypotheses hold, and its conclusion -- evaluated with Lean's conventions,
``b`` dropped -- fails.  Hypotheses are decided first (the registered
predicate functions), so the conclusion is only evaluated on eligible
inputs.  Hypothesis shrinks the first counterexample it finds, then
:func:`post_shrink` simplifies it to a local fixed point.

Determinism: the Hypothesis example database is disabled, the RNG is
``random.Random(seed)``, there is no deadline, and every evaluation is a
deterministic function of the exact input; the same (selection, seed,
budget, max_dim, family, drop) gives the same counterexample.

Each distinct exact input is evaluated once (a memo keyed by its canonical
JSON; the shrinker revisits inputs).  An input on which nothing could be
evaluated (QKInputError, NotApplicable) is not a counterexample; any other
exception is recorded in ``errors`` and the input skipped: a crash is never
reported as a counterexample.
"""

from __future__ import annotations

import contextlib

import json
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, assume, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample, Unsatisfiable

from ..claims.registry import NotApplicable
from ..errors import QKInputError
from .strategies import reread, strategy_for_kind
from .targets import Evaluation, Selection, Target, input_document, input_key


@dataclass
class SearchOutcome:
    """What a search found.

    found             -- a counterexample was found (and shrunk)
    input             -- the minimal counterexample, or None
    evaluation        -- the declarations evaluated on it (:class:`~.targets.Evaluation`)
    failing           -- check ids whose conclusion fails there
    generated         -- inputs drawn by Hypothesis (including shrinking)
    eligible          -- distinct inputs with the required hypothesis pattern (before the first
                         counterexample)
    checked           -- eligible inputs on which a conclusion was actually evaluated
    first_found_after -- eligible inputs tried up to the first failure
    errors            -- (input, error) of evaluations that crashed
    skips             -- why eligible inputs could not be evaluated (the first few reasons)
    no_strategy       -- why no input could be drawn ('' when inputs were drawn)
    seconds           -- wall time
    """

    id: str
    drop: str | None
    seed: int
    budget: int
    max_dim: int
    family: str | None
    targets: tuple[str, ...] = ()
    found: bool = False
    input: Any = None
    evaluation: Evaluation | None = None
    failing: list[str] = field(default_factory=list)
    generated: int = 0
    eligible: int = 0
    checked: int = 0
    first_found_after: int | None = None
    errors: list[tuple[str, str]] = field(default_factory=list)
    skips: list[str] = field(default_factory=list)
    no_strategy: str = ""
    seconds: float = 0.0

    @property
    def evidence(self) -> str | None:
        return self.evaluation.evidence_of(self.failing) if self.found and self.evaluation else None

    def summary(self) -> str:
        """One line: what was found or tried (and that finding nothing proves nothing)."""
        what = self.id + (f" without '{self.drop}'" if self.drop else "")
        pattern = "violating only that hypothesis" if self.drop else "satisfying the hypotheses"
        if self.found:
            return (f"{what}: counterexample found after {self.first_found_after} distinct inputs {pattern} "
                    f"({self.generated} drawn incl. shrinking, seed {self.seed}); fails: {', '.join(self.failing)}")
        if self.no_strategy:
            return f"{what}: nothing was checked: {self.no_strategy}; undecided"
        if self.checked == 0:
            return (f"{what}: nothing was checked: {self.eligible} distinct inputs {pattern}, "
                    f"{len(self.errors)} errors ({self.generated} drawn, seed {self.seed}); undecided")
        return (f"{what}: no counterexample among {self.checked} distinct inputs {pattern} checked "
                f"({self.generated} drawn, seed {self.seed}, max dim {self.max_dim}); this proves nothing")


def _kind(inp: Any) -> str | None:
    return getattr(inp, "kind2", None)


def _strategy(sel: Selection, targets: tuple[Target, ...], max_dim: int, family: str | None,
              seeds: tuple) -> tuple[Any, str]:
    """(strategy, '') or (None, why no input can be drawn)."""
    conj = getattr(sel, "conj", None)
    if conj is not None and conj.strategy is not None:
        strategy_for_kind("matrix", max_dim, family)  # validates max_dim and family
        return conj.strategy(max_dim, family), ""
    kinds, missing = [], []
    for t in targets:
        for k in t.kinds:
            if k in kinds or k in missing:
                continue
            (kinds if strategy_for_kind(k, max_dim, family, seeds) is not None else missing).append(k)
    if not kinds:
        return None, f"no search strategy for the input kind(s) {', '.join(missing) or '(none)'}"
    return st.one_of([strategy_for_kind(k, max_dim, family, seeds) for k in kinds]), ""


def _active(sel: Selection, targets: tuple[Target, ...], inp: Any, drop: str | None) -> list[str]:
    """Check ids of the targets with the required hypothesis pattern on ``inp``: all hypotheses
    true (drop None), or ``drop`` false and every other one true.  NotApplicable / QKInputError
    (a hypothesis not stated for this input) count as no pattern."""
    cache: dict = {}
    out = []
    for t in targets:
        if _kind(inp) not in t.kinds and t.kind != "conjecture":
            continue
        if drop is not None and drop not in t.binder_names():
            continue
        try:
            hyps = sel.hypotheses(t, inp, cache)
        except (NotApplicable, QKInputError):
            continue
        if all(v or b == drop for b, v in hyps.items()) and (drop is None or hyps[drop] is False):
            out.append(t.check)
    return out


def search(
    sel: Selection,
    *,
    budget: int = 200,
    seed: int = 0,
    max_dim: int = 4,
    family: str | None = None,
    drop: str | None = None,
    targets: tuple[Target, ...] | None = None,
    strategy=None,
    seeds: tuple = (),
) -> SearchOutcome:
    """Search for a counterexample among the declarations of ``sel`` (default all its targets).

    budget   -- eligible inputs Hypothesis may try (its max_examples)
    seed     -- RNG seed (deterministic)
    max_dim  -- sizes 1..max_dim
    family   -- restrict matrices to one family of strategies.FAMILIES
    drop     -- a binder: search inputs where it is false and the target's others hold
    strategy -- override the input strategy
    seeds    -- inputs whose mutations are drawn for kinds without a builder (the audit suite)

    Returns a SearchOutcome.  Raises QKInputError for a binder no target has, a bad budget,
    family or max_dim.
    """
    targets = tuple(targets if targets is not None else sel.targets)
    if drop is not None:
        targets = tuple(t for t in targets if drop in t.binder_names())
        if not targets:
            raise QKInputError(f"{sel.id} has no hypothesis {drop!r}; its hypotheses: "
                               + (", ".join(sel.binders()) or "none"))
    if not isinstance(budget, int) or budget < 1:
        raise QKInputError(f"--budget must be a positive integer, got {budget!r}")
    out = SearchOutcome(sel.id, drop, seed, budget, max_dim, family, tuple(t.check for t in targets))
    strat, why = (strategy, "") if strategy is not None else _strategy(sel, targets, max_dim, family, seeds)
    if strat is None:
        out.no_strategy = why
        return out
    drops = (drop,) if drop else ()
    memo: dict[str, bool | None] = {}  # input -> None (not eligible) / conclusion failed
    state = {"found": False}

    def evaluate(inp, active) -> tuple[bool, Evaluation | None]:
        try:
            ev = sel.evaluate(inp, drop=drops, only=tuple(active))
        except (QKInputError, NotApplicable) as err:
            if len(out.skips) < 3 and str(err) not in out.skips:
                out.skips.append(str(err))
            return False, None
        except Exception as err:  # noqa: BLE001 - a crash of a check is recorded, never a counterexample
            out.errors.append((_describe(inp), f"{type(err).__name__}: {err}"))
            return False, None
        return bool(ev.failing(drop)) and bool(ev.records), ev

    def condition(inp) -> bool:
        out.generated += 1
        key = input_key(inp)
        if key is not None and key in memo:
            assume(memo[key] is not None)
            return bool(memo[key])
        try:
            active = _active(sel, targets, inp, drop)
        except Exception as err:  # noqa: BLE001 - a hypothesis predicate crashed: skip, record
            out.errors.append((_describe(inp), f"hypothesis check: {type(err).__name__}: {err}"))
            active = []
        if not active:
            if key is not None:
                memo[key] = None
            assume(False)
        if not state["found"]:
            out.eligible += 1
        failed, ev = evaluate(inp, active)
        if ev is not None and ev.records and not state["found"]:
            out.checked += 1
        if key is not None:
            memo[key] = failed
        if failed and not state["found"]:
            state["found"] = True
            out.first_found_after = out.eligible
        return failed

    s = settings(
        max_examples=budget,
        database=None,
        deadline=None,
        derandomize=False,
        phases=(Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )
    _quiet_storage()
    t0 = time.perf_counter()
    try:
        with _shrink_by_count():
            inp = find(strat, condition, settings=s, random=random.Random(seed))
    except (NoSuchExample, Unsatisfiable):
        inp = None
    except Exception as err:  # noqa: BLE001 - a strategy that cannot draw (e.g. a stale builder): reported
        out.no_strategy = f"drawing inputs failed ({type(err).__name__}: {str(err)[:200]})"
        inp = None
    if inp is not None:
        def still_fails(cand) -> bool:
            key = input_key(cand)
            if key is not None and key in memo:
                return bool(memo[key])
            try:
                active = _active(sel, targets, cand, drop)
            except Exception:  # noqa: BLE001
                active = []
            r = bool(active) and evaluate(cand, active)[0]
            if key is not None:
                memo[key] = r if active else None
            return r

        inp = post_shrink(inp, still_fails)
        active = _active(sel, targets, inp, drop)
        out.found = True
        out.input = inp
        out.evaluation = sel.evaluate(inp, drop=drops, only=tuple(active))
        out.failing = out.evaluation.failing(drop)
    out.seconds = time.perf_counter() - t0
    return out


@contextlib.contextmanager
def _shrink_by_count():
    """Hypothesis stops shrinking after five minutes of wall time (its engine's
    ``MAX_SHRINKING_SECONDS``), so on a loaded machine the same seed could give a
    less shrunk counterexample.  Within this block shrinking is bounded by its
    count of successful shrinks (``MAX_SHRINKS``) only: the result is a function of
    the inputs, the same on every machine."""
    try:
        from hypothesis.internal.conjecture import engine
    except ImportError:  # pragma: no cover - another Hypothesis layout: nothing to pin
        yield
        return
    saved = getattr(engine, "MAX_SHRINKING_SECONDS", None)
    if saved is None:  # pragma: no cover
        yield
        return
    engine.MAX_SHRINKING_SECONDS = float("inf")
    try:
        yield
    finally:
        engine.MAX_SHRINKING_SECONDS = saved


def _quiet_storage() -> None:
    """Hypothesis caches source constants on disk; keep that out of the
    user's working directory unless they chose a place."""
    import os
    import tempfile

    os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY",
                          os.path.join(tempfile.gettempdir(), f"qkverify-hypothesis-{os.getuid()}"))


# ---------------------------------------------------------------------------
# post-shrinking: local minimality under deletions and entry simplification


def _delete_index(M, k: int, rows: bool = True, cols: bool = True):
    from flint import fmpq_mat

    r = [i for i in range(M.nrows()) if not (rows and i == k)]
    c = [j for j in range(M.ncols()) if not (cols and j == k)]
    if not r or not c:
        return None
    return fmpq_mat([[M[i, j] for j in c] for i in r])


def _simpler_values(x) -> list:
    """Candidates simpler than x: 0, then ±1 with x's sign, then trunc(x)."""
    from flint import fmpq

    if x == 0:
        return []
    out = [fmpq(0)]
    s = 1 if x > 0 else -1
    if abs(x) != 1:
        out.append(fmpq(s))
    t = fmpq(int(x.p) // int(x.q) if x > 0 else -((-int(x.p)) // int(x.q)))
    if t != 0 and t != x and abs(t) != 1:
        out.append(t)
    return out


def _entry_moves(M, paired: int):
    """Yield (i, j, new matrix) replacing entry (i, j) by simpler values;
    ``paired`` = +1 / -1 keeps a symmetric / antisymmetric matrix so."""
    N, C = M.nrows(), M.ncols()
    for i in range(N):
        for j in range(C):
            if paired and j < i:
                continue
            for v in _simpler_values(M[i, j]):
                if paired == -1 and i == j:
                    continue
                X = M.__class__(M)  # copy
                X[i, j] = v
                if paired and i != j:
                    X[j, i] = v if paired == 1 else -v
                yield X


def _structure(M) -> int:
    if M.nrows() != M.ncols():
        return 0
    if M == M.transpose():
        return 1
    if M == -M.transpose():
        return -1
    return 0


def _candidates(inp):
    """Simpler inputs of the same type: smaller sizes first, then entries."""
    from ..io import inputs as I

    if isinstance(inp, I.MatrixInput):
        L, n = inp.L, inp.n
        N = L.nrows()
        for k in range(N):
            M = _delete_index(L, k)
            if M is not None:
                yield I.MatrixInput(M, None if n is None else min(n, M.nrows()))
                if n is not None and n > 1 and n >= M.nrows():
                    yield I.MatrixInput(M, n - 1)
        if n is not None and n > 1:
            yield I.MatrixInput(L, n - 1)
        for X in _entry_moves(L, _structure(L)):
            yield I.MatrixInput(X, n)
    elif isinstance(inp, I.HeadInput):
        WQ, WK, B = inp.W_Q, inp.W_K, inp.B
        if B is not None:  # the standard basis first
            yield I.HeadInput(WQ, WK)
        for k in range(WQ.ncols()):  # drop a residual coordinate
            a, b = _delete_index(WQ, k, rows=False), _delete_index(WK, k, rows=False)
            if a is not None:
                yield I.HeadInput(a, b)
        for r in range(WQ.nrows()):  # drop a head coordinate
            a, b = _delete_index(WQ, r, cols=False), _delete_index(WK, r, cols=False)
            if a is not None:
                yield I.HeadInput(a, b, B=B)
        for X in _entry_moves(WQ, 0):
            yield I.HeadInput(X, WK, B=B)
        for X in _entry_moves(WK, 0):
            yield I.HeadInput(WQ, X, B=B)
    elif isinstance(inp, I.OrthoInput):
        for k in range(inp.L.nrows()):
            a, b = _delete_index(inp.L, k), _delete_index(inp.U, k)
            if a is not None:
                yield I.OrthoInput(a, b)
        for X in _entry_moves(inp.L, _structure(inp.L)):
            yield I.OrthoInput(X, inp.U)
        for X in _entry_moves(inp.U, 0):
            yield I.OrthoInput(inp.L, X)
    elif isinstance(inp, I.LawInput):
        import dataclasses

        def inside(N: int, n: int | None) -> tuple:
            """The copies whose two endpoints stay inside the smaller matrices."""
            rows = lambda b: N if b == "L" else n  # noqa: E731
            return tuple(cp for cp in inp.copies
                         if all(e[1] < rows(e[0]) and e[2] < N for e in cp[:2]))

        if inp.model == "qk" and inp.n > 1:
            yield dataclasses.replace(inp, n=inp.n - 1, copies=inside(inp.N, inp.n - 1))
        if inp.N > 1 and inp.grid is None:
            yield dataclasses.replace(inp, N=inp.N - 1, copies=inside(inp.N - 1, inp.n))
        if inp.N > 1 and inp.grid is not None and not inp.copies:  # (deleting index k would renumber copies)
            for k in range(inp.N):
                g = tuple(tuple(l for j, l in enumerate(r) if j != k) for i, r in enumerate(inp.grid) if i != k)
                yield dataclasses.replace(inp, N=inp.N - 1, grid=g)
    else:
        yield from _document_moves(inp)


def _document_moves(inp):
    """Simpler inputs of any kind with a certificate form: a row of a basis or an index less,
    then each numeric entry replaced by 0, ±1 or its integer part, re-read by the input reader
    (candidates it refuses are skipped)."""
    from ..exact.rational import parse_rational
    from .strategies import _leaves

    doc = input_document(inp)
    if doc is None or "kind" not in doc:
        return
    cands = []
    for key in ("V", "s"):  # a subspace basis row, an index of a family
        if isinstance(doc.get(key), list) and len(doc[key]) > 1:
            for k in range(len(doc[key])):
                d = json.loads(json.dumps(doc))
                del d[key][k]
                cands.append(d)
    for path in _leaves(doc):
        box = doc
        for k in path[:-1]:
            box = box[k]
        old = box[path[-1]]
        try:
            x = parse_rational(old, "entry")
        except Exception:  # noqa: BLE001 - not a rational: leave it
            continue
        for v in _simpler_values(x):
            d = json.loads(json.dumps(doc))
            b = d
            for k in path[:-1]:
                b = b[k]
            if isinstance(old, int):
                if v.q != 1:
                    continue
                b[path[-1]] = int(v)
            else:
                b[path[-1]] = str(v)
            cands.append(d)
    for d in cands:
        try:
            yield reread(d)
        except QKInputError:
            continue


def post_shrink(inp, still_fails, max_steps: int = 400):
    """Greedy local minimisation after Hypothesis's shrinker: repeatedly take
    the first simpler candidate (deleting a row/column of the residual space
    or of the head, lowering n, replacing an entry by 0, ±1 or its integer
    part) that is still a counterexample with the same hypothesis pattern.
    Stops at a fixed point: no single such move keeps the failure."""
    steps = 0
    improved = True
    while improved and steps < max_steps:
        improved = False
        for cand in _candidates(inp):
            steps += 1
            if still_fails(cand):
                inp = cand
                improved = True
                break
            if steps >= max_steps:
                break
    return inp


def _describe(inp: Any) -> str:
    doc = input_document(inp)
    s = json.dumps(doc, ensure_ascii=False, separators=(",", ":")) if doc is not None else repr(inp)
    return s if len(s) <= 200 else s[:199] + "…"


def input_json(inp: Any) -> dict:
    """The input's JSON form with a ``kind`` field (``{"kind": "none", "repr": …}`` for a user
    object without one)."""
    doc = input_document(inp)
    if doc is None:
        return {"kind": "none", "repr": repr(inp)}
    doc.setdefault("kind", "none")
    return doc


def counterexample_record(sel: Selection, o: SearchOutcome, mode: str) -> dict:
    """How a counterexample was found (``<stem>.search.json`` beside its certificate)."""
    return {
        "kind": "counterexample",
        "statement": sel.statement,
        "label": sel.label,
        "mode": mode,
        "declarations": list(o.targets),
        "dropped_hypothesis": o.drop,
        "failing": list(o.failing),
        "input": input_json(o.input),
        "search": {"seed": o.seed, "budget": o.budget, "max_dim": o.max_dim, "family": o.family,
                   "distinct_inputs_tried": o.first_found_after, "drawn": o.generated,
                   "shrunk_by": "hypothesis.find, then deletion/entry simplification to a fixed point"},
    }


def ascii_stem(stem: str) -> str:
    """A file-name stem in ASCII: Lean's Greek binders spelled out (``hρ`` → ``hrho``, ``hσK`` →
    ``hsigmaK``) and a prime as ``_prime`` (``hX'`` → ``hX_prime``), so that certificate files
    have portable names.

    >>> ascii_stem("accumulation_estimates__hρ"), ascii_stem("accumulation__hX'law")
    ('accumulation_estimates__hrho', 'accumulation__hX_primelaw')
    """
    import unicodedata

    out = []
    for ch in stem:
        if ch.isascii():
            out.append("_prime" if ch == "'" else ch)
        else:
            name = unicodedata.name(ch, "")
            word = name.split()[-1].lower() if name.startswith("GREEK") else f"u{ord(ch):04x}"
            out.append(word if "SMALL" in name or not name.startswith("GREEK") else word.capitalize())
    return "".join(out)


def write_counterexample(sel: Selection, o: SearchOutcome, directory: str | Path, mode: str = "search",
                         stem: str | None = None, force: bool = True,
                         record: bool = True) -> tuple[Path, Path | None]:
    """Write ``<stem>.json`` (the format-2 certificate of the evaluation on the counterexample:
    exactly what ``qkverify check`` writes for it), ``inputs/<stem>.input.json`` (the bare input
    document ``qkverify check`` reads; not for a user input without a JSON form) and, with
    ``record``, ``<stem>.search.json`` (how it was found).  Returns (certificate, input file)."""
    from .. import certificates
    from ..io.outputs import atomic_write_text

    d = Path(directory)
    doc = input_document(o.input)
    stem = ascii_stem(stem or f"{sel.id}__{certificates.input_digest(input_json(o.input))}")
    cpath = d / f"{stem}.json"
    certificates.write(o.evaluation.certificate(), cpath, force=force)
    ipath = None
    if doc is not None:
        ipath = d / "inputs" / f"{stem}.input.json"
        atomic_write_text(ipath, json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    if record:
        rec = counterexample_record(sel, o, mode)
        rec["certificate"] = cpath.name
        rec["input_file"] = f"inputs/{ipath.name}" if ipath else None
        atomic_write_text(d / f"{stem}.search.json", json.dumps(rec, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    return cpath, ipath
