"""CLI subcommands, one module each.

Each module defines ``NAME`` (the subcommand), ``HELP`` (one line),
``add_arguments(parser)`` and ``run(args) -> int`` (the exit status).
``qkverify.cli`` discovers them from ``COMMANDS``; a module that is not there
yet is skipped, so commands land one at a time.
"""

COMMANDS = (
    "profile",
    "signature",
    "check",
    "claims",
    "audit",
    "heads",
    "search",
    "probes",
    "baselines",
    "verify",
    "lean_audit",
    "spectrum",
    "accumulation",
    "rope",
    "homogenise",
    "regimes",
    "simulate",
    "ginibre",
    "compare",
)
