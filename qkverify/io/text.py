"""Terminal output shared by the library and the CLI: JSON documents, tables
(rendered by ``rich``, at most :data:`WIDTH` columns wide) and progress bars
(``tqdm``, on standard error, only on a terminal).

The vocabulary of every table is the one of the CSV and JSON files
(``d_model``, ``d_head``, ``n_heads``, ``layer``, ``head``, ``kv_head``, the
Lean names of quantities); algebraic numbers are written by
:func:`qkverify.exact.notation.root_str`.
"""

from __future__ import annotations

import io
import json
import sys

#: the terminal width every command's output stays within (the full tables go to files)
WIDTH = 100

#: a header rule of dashes under each column, nothing else (no frame, no column lines)
_RULE_BOX = None


def _box():
    global _RULE_BOX
    if _RULE_BOX is None:
        from rich.box import Box

        _RULE_BOX = Box("    \n    \n -  \n    \n    \n    \n    \n    \n", ascii=True)
    return _RULE_BOX


def print_json(obj) -> None:
    """Write ``obj`` as one indented JSON document (UTF-8 text, keys in insertion
    order, numbers as JSON numbers) to stdout."""
    sys.stdout.write(json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False, default=_json_default) + "\n")


def _json_default(x):
    """JSON for the few non-JSON values commands hold: numpy scalars and arrays,
    paths, sets; anything else by ``str`` (exact values are already strings)."""
    try:
        import numpy as np

        if isinstance(x, np.bool_):
            return bool(x)
        if isinstance(x, np.integer):
            return int(x)
        if isinstance(x, np.floating):
            return float(x)
        if isinstance(x, np.ndarray):
            return x.tolist()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(x, (set, frozenset)):
        return sorted(x)
    return str(x)


def table(rows: list[list], headers: list[str], *, width: int = WIDTH, right: tuple[int, ...] = (),
          wrap: tuple[int, ...] | None = None) -> str:
    """A plain text table: ``headers``, a rule of dashes, one line per row;
    columns two spaces apart, cells left-aligned (the columns in ``right``
    right-aligned).  Long text columns (those in ``wrap``; by default those with
    a space inside a cell) are word-wrapped first so that the table stays within
    ``width`` columns; no column is ever dropped (a table whose short columns
    alone are wider than ``width`` is printed wider).

    >>> print(table([["1", "x"], ["10", "yy"]], ["a", "bb"], right=(0,)))
     a  bb
    --- --
     1  x
    10  yy
    """
    from rich.console import Console
    from rich.table import Table

    cells = [["" if x is None else str(x) for x in r] for r in rows]
    n = len(headers)
    natural = [max([len(str(h))] + [max((len(s) for s in r[j].splitlines()), default=0) for r in cells])
               for j, h in enumerate(headers)]
    widths = list(natural)
    gap = 2
    floor = 12  # a wrapped column keeps at least this many characters
    # columns of words wrap first (at spaces); a column of identifiers is cut only when nothing else is left
    words = [j in wrap if wrap is not None else any(" " in r[j].strip() for r in cells) for j in range(n)]
    for allowed in (lambda k: words[k], lambda k: True):
        while sum(widths) + gap * (n - 1) > width:
            cand = [k for k in range(n) if allowed(k) and widths[k] > max(floor, len(str(headers[k])))]
            if not cand:
                break
            j = max(cand, key=lambda k: widths[k])
            widths[j] -= 1
    total = sum(widths) + gap * (n - 1)
    t = Table(box=_box(), show_edge=False, pad_edge=False, padding=(0, 1, 0, 0), header_style="",
              highlight=False, expand=False)
    for j, h in enumerate(headers):
        t.add_column(str(h), justify="right" if j in right else "left", no_wrap=widths[j] == natural[j],
                     min_width=widths[j], max_width=widths[j], overflow="fold")
    for r in cells:
        t.add_row(*r)
    buf = io.StringIO()
    Console(file=buf, width=max(width, total), color_system=None, force_terminal=False, highlight=False,
            emoji=False, markup=False, soft_wrap=False, legacy_windows=False).print(t)
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines())


def progress(iterable=None, *, total=None, desc: str = "", unit: str = "it", quiet: bool = False):
    """A tqdm progress bar on standard error, shown only when standard error is
    a terminal and ``quiet`` is false (``--quiet``, ``--json``)."""
    from tqdm import tqdm

    show = not quiet and hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
    return tqdm(iterable, total=total, desc=desc, unit=unit, disable=not show, file=sys.stderr,
                dynamic_ncols=True, leave=False)


def wrap(text: str, indent: str = "  ", width: int = WIDTH) -> str:
    """``text`` word-wrapped to ``width`` columns, continuation lines indented
    (a word longer than the width -- a path -- is kept whole)."""
    import textwrap

    return "\n".join(textwrap.fill(line, width=width, subsequent_indent=indent, break_long_words=False,
                                   break_on_hyphens=False) if len(line) > width else line
                     for line in text.splitlines() or [""])


def echo(*lines: str) -> None:
    """Print each line, word-wrapped to :data:`WIDTH` columns."""
    for line in lines:
        print(wrap(line), flush=True)
