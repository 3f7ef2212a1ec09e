"""Counterexample search, hypothesis probes and user conjectures, per Lean declaration.

Public API
----------
``resolve(name)`` / ``all_selections()``
    What to attack: a statement (its declarations with a registered check), one
    declaration, or a user conjecture (:mod:`qkverify.search.targets`).
``search(sel, budget=, seed=, max_dim=, family=, drop=)``
    Hypothesis-driven search for a (shrunk) counterexample; see
    :mod:`qkverify.search.driver`.
``probe_selection(sel, ...)`` / ``run_probes(selections, ...)``
    Drop each hypothesis of each declaration in turn; see :mod:`qkverify.search.probes`.
``conjecture(name, check=..., hypotheses=..., strategy=..., input_kind=...)``
    Register your own statement, so that ``qkverify search --module FILE NAME`` and
    ``qkverify probes --module FILE NAME`` can attack it (:mod:`qkverify.search.user`).
    Example: ``docs/conjectures_example.py``.
``load_module(path)``
    Import a conjecture file (registers what it declares).

Writing a conjecture
--------------------
``check(inp)`` must decide the conclusion *exactly* (``fmpq`` arithmetic, no
float comparisons) and return ``True`` (holds), ``False`` (fails), or a
``(bool, values_dict)`` pair.  Hypotheses are ``{name: predicate}`` (or
``(name, text, predicate)`` tuples); a predicate takes the input and returns
a bool.  Inputs come from ``strategy`` (a Hypothesis ``SearchStrategy`` or
``factory(max_dim, family)``) or, by default, from the strategy of
``input_kind`` (``matrix``: ``MatrixInput`` with an exact ``fmpq_mat`` ``.L``;
``head``: ``HeadInput`` with ``.W_Q``, ``.W_K``; ``matrix_bound``,
``matrix_pair``, ``rank_one``, …; see :mod:`qkverify.search.strategies`).
"""

from __future__ import annotations

from . import strategies
from .driver import SearchOutcome, search, write_counterexample
from .probes import probe_selection, run_probes
from .targets import all_selections, resolve
from .user import USER_CONJECTURES, conjecture, forget_conjecture, load_module

__all__ = ["search", "SearchOutcome", "write_counterexample", "probe_selection", "run_probes", "resolve",
           "all_selections", "conjecture", "forget_conjecture", "load_module", "strategies", "USER_CONJECTURES"]
