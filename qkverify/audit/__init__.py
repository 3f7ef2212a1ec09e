"""The audit: the built-in suite (:mod:`.suite`), running every claim on it
(:mod:`.run`), the Lean map (:mod:`.leanmap`) and lean-audit (:mod:`.lean_audit`)."""
