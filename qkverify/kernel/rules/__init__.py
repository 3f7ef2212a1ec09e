"""The kernel's claim table, one rule pack per blueprint section (importing this package
registers every entry in :data:`qkverify.kernel.table.TABLE`).

Writing a rule (the API, kernel phase A of issue 18)
---------------------------------------------------

The loop (:mod:`..check`) has already, before any rule runs: read the certificate
strictly, validated it against the schema, run the **well-formedness pass** of its input
kind (:mod:`..wellformed`: the Lean types -- square matrices, one index type, equal
lengths, a basis invertible, a law a probability law) and sent **every witness** through
the checker of its kind (:data:`..witnesses.CHECKERS`), each giving a typed fact.  A rule
only combines facts, and should read like its Lean statement.

* **Register a declaration** (:mod:`..table`)::

      thm(MT + "profile_rank_one", "profile_rank_one", ("matrix",),
          (("hL", "rank_eq_one"), ("hnorm", "norm_eq_one")),   # Lean binder -> predicate id
          lambda q: ...,                                       # the conclusion: True / False
          args=(even_x,))                                      # argument types beyond the kind's
      dfn(A + "profileB", "profile", ("matrix",), lambda q: ...)   # a definition: its value
      predicate("rank_eq_one", lambda q: q.rank("L") == 1)         # one decision per predicate id

  A conclusion returns True / False or raises ``Undecided`` (named); ``NotEvaluable``
  when the declaration is not stated for this input.  ``args`` entries are functions of
  ``q`` raising ``Invalid("input", …)`` (:mod:`..wellformed` has ``even_x``, ``needs``,
  ``S_of_x``, ``shape``).

* **Read the input**: ``q.arg("x")`` (exact objects of the well-formed input: ``fmpq_mat``,
  lists of ``fmpq``, ints), ``q.mat("S")`` (input matrices and the derived ones; a pack
  adds its own with ``@derived("half_JG")`` in :mod:`..derive`), ``q.kind``.

* **Read facts**: ``q.fact(kind, of)`` returns the typed fact of the certificate's witness
  (:mod:`..witnesses`: ``Spectrum.values``/``power_sum_2``, ``Rank.rank``/``kernel``,
  ``Fiber.normP``/``commute``, ``Factor.x``/``y``, ``Inverse.Y`` (0 when singular)/``singular``, ``KernelBasis.dim``,
  ``dominant(CRoots)``,
  …); a missing witness is Invalid.  ``q.has(kind, of)`` for an optional witness.
  Shorthands: ``q.spectrum(of)``, ``q.rank(of)``; Definition 6 in :mod:`.definition6` (``profile(q)``,
  ``alpha_beta(q)``, ``order(q)``, …).
  Every witness must be read by some declaration (else the certificate is invalid), except
  the standalone kinds spectrum, rank and cells.

* **∃-conclusions**: ``q.exists((kind, of), works, none_exists)`` -- holds only with a
  witness that ``works``, fails only when ``none_exists()`` proves from facts that no
  witness exists (prove it in the docstring; list it in TRUST.md), else undecided.  A ∀
  over an infinite domain fails only with a checked counterexample.

* **Record evidence**: exact decisions need nothing.  Compare reals with ``q.cmp`` /
  ``q.sign`` (they set ``q.certified`` when an enclosure decided); set ``q.certified = True``
  yourself when your rule decides a strict inequality or ≠ from balls.  An equality between
  reals is never decided by enclosures: raise ``Undecided``.  A conclusion resting on a
  sample sets ``q.empirical = True`` and ``q.sample`` (statistic, confidence, seed); the
  loop then expects ``consistent`` / ``inconsistent``.  ``q.memo(key, fn)`` caches with
  the evidence flags replayed.

* **Add a witness kind**: a ``$defs/w_<kind>`` entry in the schema, a fact dataclass and a
  ``@checker("<kind>")`` function in :mod:`..witnesses` (multiply out, count signs; never
  search), and the producer writes it.

* **Lean's total functions** (x/0 = 0, √ of a negative = 0, tsum of a non-summable family
  = 0, a singular inverse = 0, ℕ subtraction): :mod:`..lean`, shared with the producers.
  Caps: :mod:`..limits` (``limits.over(what, value, cap, NAME)`` answers undecided).
"""

from . import (accumulation, attention, balance, clusters, energy, heads, laws, moments, profile,  # noqa: F401
               rank_one, rope)
