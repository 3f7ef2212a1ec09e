"""Example conjecture file for ``qkverify search --module``.

Run, from the repository root:

    qkverify search --module docs/conjectures_example.py skew_energy_at_most_half
    qkverify search --module docs/conjectures_example.py two_S_minus_L_is_trace
    qkverify probes --module docs/conjectures_example.py skew_energy_at_most_half

The first finds a counterexample (exit 1); the second finds none, which
proves nothing (exit 0); the probes first attack the conjecture with all its
hypotheses kept, find that it fails there ("fails with all hypotheses", with
the counterexample; exit 1) and therefore do not probe its hypothesis.

Each ``conjecture(...)`` call registers a statement of its own (``user.<name>``,
one declaration, its own named hypotheses); search, probes and certificates
treat it like a Lean declaration, except that the kernel has no table entry
for it: ``qkverify verify`` reports its certificates as "not checkable".
Rules for ``check``: decide the conclusion exactly (python-flint ``fmpq``
arithmetic, never a float comparison) and return ``True`` when it holds,
``False`` when it fails (optionally ``(bool, {"name": "p/q", ...})`` with
values to show).  Hypotheses are named predicates on the same input; the
search only tries inputs on which all of them hold, and the probes drop
each one in turn.
"""

from flint import fmpq
from hypothesis import strategies as st

from qkverify.exact.matrix import frob_sq, is_symmetric, skew_part, sym_part, trace
from qkverify.search import conjecture, strategies


def _frac(x: fmpq) -> str:
    return str(x)


# 1. A false conjecture: "the skew part never carries more than half the
#    energy".  Antisymmetric matrices have ‖T‖² = ‖L‖², so the search finds
#    a 2x2 counterexample (and the certificate shows the exact values).
@conjecture(
    "skew_energy_at_most_half",
    hypotheses={"L_ne_zero": lambda inp: frob_sq(inp.L) != 0},
    input_kind="matrix",
    statement="‖T‖² ≤ ½‖L‖² for every nonzero square L (false)",
)
def skew_energy_at_most_half(inp):
    L = inp.L
    t2, l2 = frob_sq(skew_part(L)), frob_sq(L)
    return t2 <= l2 / 2, {"frobSq_T": _frac(t2), "frobSq_L": _frac(l2)}


# 2. A true statement (Lemma 5 rearranged): 2‖S‖² − ‖L‖² = tr(L²).  The search
#    finds nothing and says that this proves nothing.
@conjecture(
    "two_S_minus_L_is_trace",
    input_kind="matrix",
    statement="2‖S‖² − ‖L‖² = tr(L²)",
)
def two_s_minus_l(inp):
    L = inp.L
    return 2 * frob_sq(sym_part(L)) - frob_sq(L) == trace(L * L)


# 3. A custom input strategy: symmetric matrices only, built from the
#    package's strategies.  "A symmetric matrix with nonnegative trace has
#    a nonnegative diagonal entry" -- true, and cheap to attack.
conjecture(
    "symmetric_trace_diag",
    check=lambda inp: trace(inp.L) < 0 or any(inp.L[i, i] >= 0 for i in range(inp.L.nrows())),
    hypotheses=[("symmetric", "L = Lᵀ", lambda inp: is_symmetric(inp.L))],
    strategy=lambda max_dim, family: strategies.symmetric_input(max_dim),
    input_kind="matrix",
)


# 4. A strategy written from scratch (any Hypothesis strategy producing
#    objects your check understands).  Here: pairs of small integers.
conjecture(
    "sum_of_squares_not_three",
    check=lambda xy: xy[0] ** 2 + xy[1] ** 2 != 3,
    strategy=st.tuples(st.integers(-5, 5), st.integers(-5, 5)),
    statement="x² + y² ≠ 3 for integers x, y",
)
