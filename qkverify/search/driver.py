"""Counterexample search driver on top of ``hypothesis.find``.

``search(claim, ...)`` looks for an input on which every hypothesis of the
claim holds and the conclusion fails; ``search(claim, drop=h)`` (used by the
probes) looks for an input on which *exactly* the hypothesis ``h`` fails,
all others hold, and the conclusion fails.  Either way Hypothesis shrinks the
first counterexample it finds, so what comes back is minimal for its
shrinker (sizes first, then entries towards 0).

Determinism: the Hypothesis example database is disabled, the RNG is
``random.Random(seed)``, there is no deadline, and every conclusion is a
deterministic function of the exact input; the same (claim, seed, budget,
max_dim, family) gives the same counterexample.

Each distinct exact input is evaluated once (a memo keyed by its canonical
JSON; Hypothesis's shrinker revisits inputs).  An input rejected by the claim
itself (QKInputError from ``conclusion``) is not a counterexample.  Any other exception is recorded in ``errors`` and the
input is skipped: a crash of the checker is never reported as a
counterexample.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, assume, find, settings
from hypothesis.errors import NoSuchExample, Unsatisfiable

from ..errors import QKInputError
from .strategies import strategy_for


@dataclass
class SearchOutcome:
    """What a search found.

    found            -- a counterexample was found (and shrunk)
    input            -- the minimal counterexample (claim input object) or None
    result           -- the claim's Result on it (verdict 'fails')
    generated        -- inputs drawn by Hypothesis (including shrinking)
    eligible         -- distinct inputs with the required hypothesis pattern on
                        which the conclusion was evaluated (before the first
                        counterexample)
    first_found_after -- eligible inputs tried before the first failure
    errors           -- (input description, error text) of checker crashes
    seconds          -- wall time
    """

    claim_id: str
    drop: str | None
    seed: int
    budget: int
    max_dim: int
    family: str | None
    found: bool = False
    input: Any = None
    result: Any = None
    generated: int = 0
    eligible: int = 0
    checked: int = 0  # eligible inputs whose conclusion was actually evaluated
    first_found_after: int | None = None
    errors: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        what = f"{self.claim_id}" + (f" without '{self.drop}'" if self.drop else "")
        pattern = "violating only that hypothesis" if self.drop else "satisfying the hypotheses"
        if self.found:
            return (f"{what}: counterexample found after {self.first_found_after} distinct inputs {pattern} "
                    f"({self.generated} drawn incl. shrinking, seed {self.seed})")
        if self.checked == 0:
            return (f"{what}: nothing was checked: {self.eligible} distinct inputs {pattern}, "
                    f"{len(self.errors)} checker errors ({self.generated} drawn, seed {self.seed}); undecided")
        return (f"{what}: no counterexample among {self.checked} distinct inputs {pattern} checked "
                f"({self.generated} drawn, seed {self.seed}, max dim {self.max_dim}); this proves nothing")


def _pattern_ok(claim, inp, drop: str | None) -> bool:
    """All hypotheses hold (drop None) / exactly ``drop`` fails."""
    for h in claim.hypotheses:
        ok = bool(h.holds(inp))
        if h.name == drop:
            if ok:
                return False
        elif not ok:
            return False
    return True


def search(
    claim,
    *,
    budget: int = 200,
    seed: int = 0,
    max_dim: int = 4,
    family: str | None = None,
    drop: str | None = None,
    strategy=None,
) -> SearchOutcome:
    """Search for a counterexample to ``claim`` (a registry Claim).

    budget   -- number of eligible inputs Hypothesis may try (its max_examples)
    seed     -- RNG seed (deterministic)
    max_dim  -- matrices have size 1..max_dim
    family   -- restrict matrices to one family of strategies.FAMILIES
    drop     -- a hypothesis name: search inputs violating exactly this one
    strategy -- override the input strategy

    Returns a SearchOutcome.  Raises QKInputError for a bad hypothesis name,
    budget, family or max_dim.
    """
    if drop is not None and drop not in {h.name for h in claim.hypotheses}:
        raise QKInputError(
            f"{claim.id} has no hypothesis {drop!r}; its hypotheses: "
            + (", ".join(h.name for h in claim.hypotheses) or "none")
        )
    if not isinstance(budget, int) or budget < 1:
        raise QKInputError(f"--budget must be a positive integer, got {budget!r}")
    strat = strategy if strategy is not None else strategy_for(claim, max_dim, family, drop=drop)
    out = SearchOutcome(claim.id, drop, seed, budget, max_dim, family)
    state = {"found": False}
    memo: dict[str, bool] = {}  # exact input -> conclusion failed (shrinking revisits inputs)

    def condition(inp) -> bool:
        out.generated += 1
        try:
            eligible = _pattern_ok(claim, inp, drop)
        except QKInputError:
            eligible = False
        except Exception as err:  # a hypothesis test crashed: skip, record
            out.errors.append((_describe(inp), f"hypothesis check: {type(err).__name__}: {err}"))
            eligible = False
        assume(eligible)
        key = _key(inp)
        if key is not None and key in memo:
            return memo[key]
        if not state["found"]:
            out.eligible += 1
        try:
            res = claim.conclusion(inp)
        except QKInputError:
            failed = False
        except Exception as err:
            out.errors.append((_describe(inp), f"{type(err).__name__}: {err}"))
            failed = False
        else:
            failed = res.verdict == "fails"
            if not state["found"]:
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
        inp = find(strat, condition, settings=s, random=random.Random(seed))
    except (NoSuchExample, Unsatisfiable):
        inp = None
    if inp is not None:
        def still_fails(cand) -> bool:
            try:
                if not _pattern_ok(claim, cand, drop):
                    return False
                key = _key(cand)
                if key is not None and key in memo:
                    return memo[key]
                r = claim.conclusion(cand).verdict == "fails"
            except Exception:
                return False
            if key is not None:
                memo[key] = r
            return r

        inp = post_shrink(inp, still_fails)
        out.found = True
        out.input = inp
        out.result = claim.conclusion(inp)
    out.seconds = time.perf_counter() - t0
    return out


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
        WQ, WK = inp.W_Q, inp.W_K
        for k in range(WQ.ncols()):  # drop a residual coordinate
            a, b = _delete_index(WQ, k, rows=False), _delete_index(WK, k, rows=False)
            if a is not None:
                yield I.HeadInput(a, b)
        for r in range(WQ.nrows()):  # drop a head coordinate
            a, b = _delete_index(WQ, r, cols=False), _delete_index(WK, r, cols=False)
            if a is not None:
                yield I.HeadInput(a, b)
        for X in _entry_moves(WQ, 0):
            yield I.HeadInput(X, WK)
        for X in _entry_moves(WK, 0):
            yield I.HeadInput(WQ, X)
    elif isinstance(inp, I.OrthoInput):
        for k in range(inp.L.nrows()):
            a, b = _delete_index(inp.L, k), _delete_index(inp.U, k)
            if a is not None:
                yield I.OrthoInput(a, b)
        for X in _entry_moves(inp.L, _structure(inp.L)):
            yield I.OrthoInput(X, inp.U)
        for X in _entry_moves(inp.U, 0):
            yield I.OrthoInput(inp.L, X)
    else:
        from ..io.inputs import LawInput

        if isinstance(inp, LawInput):
            import dataclasses

            if inp.model == "qk" and inp.n > 1:
                yield dataclasses.replace(inp, n=inp.n - 1)
            if inp.N > 1 and inp.grid is None:
                yield dataclasses.replace(inp, N=inp.N - 1)
            if inp.N > 1 and inp.grid is not None:
                for k in range(inp.N):
                    g = tuple(tuple(l for j, l in enumerate(r) if j != k) for i, r in enumerate(inp.grid) if i != k)
                    yield dataclasses.replace(inp, N=inp.N - 1, grid=g)


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


def _key(inp: Any) -> str | None:
    """Exact identity of an input (its canonical JSON), or None when it has
    no JSON form (then it is never memoised)."""
    import json

    try:
        return json.dumps(inp.to_json(), sort_keys=True, separators=(",", ":"))
    except Exception:
        return None


def _describe(inp: Any) -> str:
    try:
        return _short(inp.to_json())
    except Exception:  # pragma: no cover - only for odd user inputs
        return repr(inp)[:200]


def _short(obj: Any, limit: int = 200) -> str:
    import json

    s = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return s if len(s) <= limit else s[: limit - 1] + "…"


def input_json(inp: Any) -> dict:
    """The input's JSON form (``to_json``) with a ``kind`` field; user inputs
    without ``to_json`` are wrapped as ``{"kind": "none", "repr": ...}``."""
    if hasattr(inp, "to_json"):
        d = dict(inp.to_json())
        d.setdefault("kind", "none")
        return d
    return {"kind": "none", "repr": repr(inp)}


def counterexample_record(claim, outcome: SearchOutcome, mode: str) -> dict:
    """How a counterexample was found (written beside its certificate as
    ``<stem>.search.json``): search parameters, the dropped hypothesis, which
    hypotheses hold on the input, the failing checks and how to re-check."""
    inp, res = outcome.input, outcome.result
    return {
        "kind": "counterexample",
        "claim_id": claim.id,  # not "claim": `qkverify verify DIR` skips files without format/claim
        "label": claim.label,
        "mode": mode,
        "dropped_hypothesis": outcome.drop,
        "hypotheses_on_input": {h.name: bool(h.holds(inp)) for h in claim.hypotheses},
        "verdict": res.verdict,
        "evidence": res.evidence,
        "failed_checks": [k for k, v in (res.values.get("checks") or {}).items() if not v],
        "reason": res.reason,
        "input": input_json(inp),
        "search": {"seed": outcome.seed, "budget": outcome.budget, "max_dim": outcome.max_dim,
                   "family": outcome.family, "distinct_inputs_tried": outcome.first_found_after,
                   "drawn": outcome.generated,
                   "shrunk_by": "hypothesis.find, then deletion/entry simplification to a fixed point"},
        "recheck": (f"qkverify check {claim.id} --input INPUT_FILE" if outcome.drop is None
                    else f"qkverify check {claim.id} --input INPUT_FILE evaluates the conclusion only once "
                         f"hypothesis '{outcome.drop}' may be dropped; until then re-evaluate "
                         f"claim.conclusion on the input (qkverify.search.probes.recheck)"),
    }


def counterexample_certificate(claim, outcome: SearchOutcome, mode: str) -> dict:
    """Certificate (schema ``qkverify-certificate/1``) for a found
    counterexample: the exact input and the claim's own failing exact
    evaluation with its witnesses -- exactly what ``qkverify check`` writes,
    so ``qkverify verify`` re-checks it independently."""
    from .. import certificates

    name = f"{mode}: {claim.id}" + (f" without {outcome.drop}" if outcome.drop else "")
    return certificates.build(claim, input_json(outcome.input), outcome.result, name=name)


def write_counterexample(claim, outcome: SearchOutcome, directory: str | Path, mode: str,
                         stem: str | None = None, force: bool = True) -> tuple[Path, Path]:
    """Write ``<stem>.json`` (the certificate), ``<stem>.search.json`` (how it
    was found) and ``inputs/<stem>.input.json`` (the bare input document that
    ``qkverify check CLAIM --input FILE`` reads).  Returns (certificate, input)."""
    import json

    from .. import certificates

    d = Path(directory)
    ij = input_json(outcome.input)
    stem = stem or f"{claim.id}__{certificates.input_digest(ij)}"
    cpath = d / f"{stem}.json"
    ipath = d / "inputs" / f"{stem}.input.json"
    certificates.write(counterexample_certificate(claim, outcome, mode), cpath, force=force)
    rec = counterexample_record(claim, outcome, mode)
    rec["certificate"] = cpath.name
    rec["input_file"] = f"inputs/{ipath.name}"
    (d / f"{stem}.search.json").write_text(json.dumps(rec, indent=1, ensure_ascii=False, sort_keys=True) + "\n",
                                           encoding="utf-8")
    ipath.parent.mkdir(parents=True, exist_ok=True)
    ipath.write_text(json.dumps(ij, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    return cpath, ipath
