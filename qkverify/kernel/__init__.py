"""The independent certificate kernel (docs/CERTIFICATES.md, TRUST.md).

It imports only the standard library, python-flint and jsonschema -- nothing
else of qkverify.  Laid out as a proof checker: :mod:`.jsonio` (strict reading,
the schema), :mod:`.wellformed` (the Lean types of each input kind, checked
first), :mod:`.witnesses` (one checker per witness kind, typed facts out),
:mod:`.derive` (the kernel's view of a certificate: facts, derived matrices, the
quantities the Lean definitions make of them), :mod:`.table` and :mod:`.rules`
(per declaration: hypotheses and conclusion over the facts), :mod:`.check` (the
loop).  Below them: :mod:`.algebra` (exact reals, root counting), :mod:`.lean`
(Lean's total functions), :mod:`.limits` (every cap), :mod:`.sampling` (the
documented samplers), :mod:`.weights` and :mod:`.gguf` (weights readers)."""

from .check import EXIT, Outcome, expand_paths, verify_document, verify_file

__all__ = ["EXIT", "Outcome", "expand_paths", "verify_document", "verify_file"]
