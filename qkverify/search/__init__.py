"""Counterexample search, hypothesis probes and user conjectures.

Public API
----------
``search(claim, budget=, seed=, max_dim=, family=, drop=)``
    Hypothesis-driven search for a (shrunk) counterexample; see
    :mod:`qkverify.search.driver`.
``run_probes(claims, ...)`` / ``probe_claim(claim, ...)``
    Drop each named hypothesis in turn; see :mod:`qkverify.search.probes`.
``conjecture(name, check=..., hypotheses=..., strategy=..., input_kind=...)``
    Register your own statement in the claim registry, so that
    ``qkverify search --module FILE NAME`` and ``qkverify probes --module FILE NAME``
    can attack it.  Example: ``docs/conjectures_example.py``.
``load_module(path)``
    Import a conjecture file (registers what it declares).

Writing a conjecture
--------------------
``check(inp)`` must decide the conclusion *exactly* (``fmpq`` arithmetic, no
float comparisons) and return ``True`` (holds), ``False`` (fails), a
``(bool, values_dict)`` pair, or a full :class:`qkverify.claims.registry.Result`.
Hypotheses are ``{name: predicate}`` (or ``(name, text, predicate)`` tuples);
a predicate takes the input and returns a bool.  Inputs come from
``strategy`` (a Hypothesis ``SearchStrategy`` or ``factory(max_dim, family)``)
or, by default, from the strategy of ``input_kind`` (``matrix``:
``MatrixInput`` with an exact ``fmpq_mat`` ``.L``; ``head``: ``HeadInput``
with ``.W_Q``, ``.W_K``; ``matrix_n``, ``orthogonal``, ``symmetric``; see
:mod:`qkverify.search.strategies`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..errors import QKInputError
from .driver import SearchOutcome, search, write_counterexample
from .probes import probe_claim, run_probes
from . import strategies

__all__ = ["search", "SearchOutcome", "write_counterexample", "probe_claim", "run_probes",
           "conjecture", "forget_conjecture", "load_module", "strategies", "USER_CLAIMS"]

#: ids registered through :func:`conjecture` (only these may be re-registered)
USER_CLAIMS: dict[str, Any] = {}


def _hypotheses(spec) -> tuple:
    from ..claims.registry import Hypothesis

    if spec is None:
        return ()
    items: Iterable
    if isinstance(spec, Mapping):
        items = [(k, k, v) for k, v in spec.items()]
    else:
        items = spec
    out = []
    for it in items:
        if isinstance(it, Hypothesis):
            out.append(it)
            continue
        if not isinstance(it, tuple) or len(it) not in (2, 3):
            raise QKInputError(f"a hypothesis is a Hypothesis, (name, predicate) or (name, text, predicate); got {it!r}")
        name, text, pred = (it[0], it[0], it[1]) if len(it) == 2 else it
        if not callable(pred):
            raise QKInputError(f"hypothesis {name!r}: predicate is not callable")
        out.append(Hypothesis(str(name), str(text), pred))
    names = [h.name for h in out]
    if len(set(names)) != len(names):
        raise QKInputError(f"duplicate hypothesis names: {names}")
    return tuple(out)


def _wrap_check(name: str, check: Callable) -> Callable:
    from ..claims.registry import Result

    def conclusion(inp):
        r = check(inp)
        if isinstance(r, Result):
            return r
        values: dict = {}
        if isinstance(r, tuple) and len(r) == 2:
            r, values = r
        if not isinstance(r, bool):
            raise TypeError(f"conjecture {name!r}: check returned {type(r).__name__}, expected bool, (bool, dict) or Result")
        return Result("holds" if r else "fails", "exact", {"witnesses": []}, dict(values), None,
                      "" if r else f"user check of {name} returned False")

    return conclusion


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
    """Register a user conjecture as a claim (same registry as the built-in
    statements; ``qkverify search NAME`` then works on it).

    name        -- claim id (must not collide with a built-in claim)
    check       -- exact decision of the conclusion: ``inp -> bool | (bool, dict) | Result``;
                   omit it to use ``conjecture(...)`` as a decorator
    hypotheses  -- ``{name: predicate}`` or ``(name, text, predicate)`` tuples
    strategy    -- Hypothesis SearchStrategy of inputs, or
                   ``factory(max_dim, family) -> SearchStrategy``; default:
                   the strategy of ``input_kind``
    input_kind  -- ``matrix`` (default without a strategy), ``matrix_n``,
                   ``head``, ``orthogonal``, ``symmetric``, ``law``, or
                   ``custom`` (the default with a strategy)

    Returns the registered Claim (or a decorator returning it).  Raises
    QKInputError for a name clash or malformed hypotheses.
    """
    if check is None:
        return lambda fn: conjecture(name, check=fn, hypotheses=hypotheses, strategy=strategy,
                                     input_kind=input_kind, statement=statement, label=label,
                                     lean_decls=lean_decls)
    from ..claims import registry

    registry._ensure_loaded()
    if not name or not isinstance(name, str):
        raise QKInputError("a conjecture needs a non-empty string name")
    if name in registry._REGISTRY and name not in USER_CLAIMS:
        raise QKInputError(f"conjecture name {name!r} clashes with a built-in claim")
    kind = input_kind or ("custom" if strategy is not None else "matrix")
    claim = registry.Claim(
        id=name,
        label=label or f"user conjecture {name}",
        section="user conjectures",
        lean_decls=tuple(lean_decls),
        statement=statement or (check.__doc__ or "").strip().split("\n")[0] or name,
        hypotheses=_hypotheses(hypotheses),
        input_kind=kind,
        conclusion=_wrap_check(name, check),
    )
    if name in USER_CLAIMS:  # re-import of the same conjecture file
        registry._REGISTRY.pop(name, None)
    registry.register(claim)
    USER_CLAIMS[name] = claim
    if strategy is not None:
        strategies.register_strategy(name, strategy)
    else:
        strategies.CLAIM_STRATEGIES.pop(name, None)
    return claim


def forget_conjecture(name: str) -> None:
    """Remove a conjecture registered with :func:`conjecture` (tests, REPLs).
    Built-in claims cannot be removed: QKInputError."""
    from ..claims import registry

    if name not in USER_CLAIMS:
        raise QKInputError(f"{name!r} is not a user conjecture")
    registry._REGISTRY.pop(name, None)
    USER_CLAIMS.pop(name, None)
    strategies.CLAIM_STRATEGIES.pop(name, None)


def load_module(path: str | Path):
    """Import a conjecture file by path (its ``conjecture(...)`` calls register
    claims).  Returns the module.  Raises QKInputError when the file is
    missing or raises while importing."""
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
