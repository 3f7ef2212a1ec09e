"""The audit: the built-in suite (:mod:`.suite`), running every statement on it
(:mod:`.run`), and lean-audit (:mod:`.lean_audit`) with its inputs -- the
blueprint (:mod:`.blueprint`), the certificates' records (:mod:`.evidence`),
the manifest of the shipped set (:mod:`.manifest`) -- and the conformance
sheet (:mod:`.sheet`).  The Lean map is read by :mod:`qkverify.claims.metadata`."""
