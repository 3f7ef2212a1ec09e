"""Plain-text output helpers shared by the library and the CLI."""

from __future__ import annotations

import json
import sys


def print_json(obj) -> None:
    """Write ``obj`` as indented JSON (UTF-8 text, keys in insertion order) to stdout."""
    sys.stdout.write(json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def table(rows: list[list[str]], headers: list[str]) -> str:
    """Left-aligned text table with a dashed rule under ``headers``.

    >>> print(table([["1", "x"]], ["a", "bb"]))
    a  bb
    -  --
    1  x
    """
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)] if rows else [len(h) for h in headers]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    for r in rows:
        out.append("  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip())
    return "\n".join(out)
