"""qkverify command line: a thin layer over the claim registry.

Exit status: 0 success / claim holds, 1 a claim fails or a certificate is
invalid (per command), 2 usage or input error (one line on stderr, never a
traceback).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from . import __version__
from .commands import COMMANDS
from .errors import QKInputError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        sys.stderr.write(f"qkverify: error: {message}\n")
        raise SystemExit(2)


def build_parser() -> tuple[argparse.ArgumentParser, dict]:
    """The argparse parser with one subcommand per module in qkverify.commands, and their run functions."""
    parser = _Parser(prog="qkverify", description="Exact checks of attention-head mathematics.")
    parser.add_argument("--version", action="version", version=f"qkverify {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    runners = {}
    for mod_name in COMMANDS:
        try:
            mod = importlib.import_module(f".commands.{mod_name}", __package__)
        except ModuleNotFoundError as err:
            if err.name == f"{__package__}.commands.{mod_name}":
                continue
            raise
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        runners[mod.NAME] = mod.run
    return parser, runners


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit status (0/1/3 per command, 2 bad input, 70 internal error)."""
    parser, runners = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    try:
        return int(runners[args.command](args) or 0)
    except QKInputError as err:
        sys.stderr.write(f"qkverify: {err}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("qkverify: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except PermissionError as err:  # commands check their files up front; this is the backstop
        where = f"{err.filename}: " if err.filename else ""
        sys.stderr.write(f"qkverify: {where}permission denied\n")
        return 2
    except Exception as err:  # a bug, not bad input: one line unless debugging
        if os.environ.get("QKVERIFY_DEBUG"):
            raise
        sys.stderr.write(f"qkverify: internal error: {err.__class__.__name__}: {err} (set QKVERIFY_DEBUG=1 for a traceback)\n")
        return 70


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
