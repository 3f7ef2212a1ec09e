"""Shared bits for CLI commands: output helpers (re-exported from
:mod:`qkverify.io.text`), index lists (``--layers``, ``--heads``) and the caps
every command states in its ``--help`` and enforces with one line, exit 2."""

from __future__ import annotations

import math
import re

from ..errors import QKInputError
from ..io.text import echo, print_json, progress, table, wrap

__all__ = ["echo", "print_json", "progress", "table", "wrap", "parse_indices", "check_range", "check_real", "CAPS"]

#: the caps of the command-line options (issue 18, hostile inputs): past them the command
#: exits 2 with one line before any work.  Each is far above what the experiments need and
#: low enough that the largest allowed run answers (or is refused) on one machine.
CAPS = {
    "budget": 10**5,       # search / probes: inputs tried per declaration or hypothesis
    "jobs": 64,            # worker processes
    "samples": 10**6,      # Monte Carlo / simulation samples
    "d": 1024,             # matrix sizes of ginibre / simulate
    "n": 10**4,            # tokens of simulate
    "horizon": 10**4,      # simulate: final time T (with the step, at most MAX_STEPS steps)
    "k": 64,               # rope: distances d = 0 … k−1
    "max_dim": 12,         # search / probes: matrix sizes
    "max_n": 10**6,        # accumulation: sample size per side
}
#: simulate: at most this many integrator steps (horizon / dt)
MAX_STEPS = 10**6
#: simulate: at most this many token·dimension·step updates (d·n·steps, the work of a run)
MAX_WORK = 10**10


def check_range(option: str, value, lo, hi) -> None:
    """Exit 2 (QKInputError, one line) unless lo ≤ value ≤ hi."""
    if value is None:
        return
    if not (lo <= value <= hi):
        raise QKInputError(f"{option} must be between {lo} and {hi} (got {value})")


def check_real(option: str, value: float | None, lo: float, hi: float, *, open_lo: bool = True) -> None:
    """Exit 2 (one line) unless ``value`` is a finite real in (lo, hi] (``open_lo``) or [lo, hi]."""
    if value is None:
        return
    if not math.isfinite(value) or value > hi or value < lo or (open_lo and value == lo):
        left = "(" if open_lo else "["
        raise QKInputError(f"{option} must be a finite number in {left}{lo:g}, {hi:g}] (got {value:g})")


def parse_indices(text: str | None, option: str) -> tuple[int, ...] | None:
    """``"0,3-5"`` -> (0, 3, 4, 5) (sorted, without repeats); None or "" -> None
    (all).  QKInputError (exit 2, one line) on malformed text.

    >>> parse_indices("0,3-5,4", "--heads")
    (0, 3, 4, 5)
    >>> parse_indices(None, "--heads") is None
    True
    """
    if text is None or not str(text).strip():
        return None
    out: set[int] = set()
    for part in str(text).split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d{1,6})(?:\s*-\s*(\d{1,6}))?", part)
        if not m:
            raise QKInputError(f"{option}: cannot read {part!r} (expected e.g. 0,3-5)")
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) is not None else a
        if b < a:
            raise QKInputError(f"{option}: {part} is an empty range")
        out.update(range(a, b + 1))
    return tuple(sorted(out))
