"""The independent certificate kernel (docs/CERTIFICATES.md, TRUST.md).

It imports only the standard library, python-flint and jsonschema -- nothing
else of qkverify.  Layout: :mod:`.jsonio` (strict reading, the schema),
:mod:`.algebra` (exact reals, root counting), :mod:`.witnesses` (one checker
per witness kind), :mod:`.weights` (exact head matrices from safetensors),
:mod:`.derive` (the quantities the Lean definitions make of the facts),
:mod:`.table` (per declaration: hypotheses and conclusion), :mod:`.check` (the
loop)."""

from .check import EXIT, Outcome, expand_paths, verify_document, verify_file

__all__ = ["EXIT", "Outcome", "expand_paths", "verify_document", "verify_file"]
