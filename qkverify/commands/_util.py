"""Shared bits for CLI commands (re-exported from :mod:`qkverify.io.text`)."""

from ..io.text import print_json, table

__all__ = ["print_json", "table"]
