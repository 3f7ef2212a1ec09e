"""Cost estimates and the time/memory budget of the expensive exact routes.

Every route of ``qkverify heads`` is chosen by its estimated cost.  The
estimates are deterministic functions of the matrix size m and the bit
length B of its largest entry (never a measured time), so whether a route
runs does not depend on the machine's load; they were fitted on this
project's development machine (2 cores, FLINT 3 through python-flint 0.9):

* exact characteristic polynomial of an integer m x m matrix (FLINT,
  multimodular): about 0.15 s·(m/64)^3.5·(B/82), memory about
  m²·m(B + log₂m)/8 bytes (measured: m = 64, B = 82: 0.12 s; the direct
  route of all-MiniLM-L6-v2, m = 384, B = 79: 67 s and 630 MiB) -- the
  2n x 2n route of Lemma 10 at n = 128 is some 20 s and 0.2 GiB, the direct
  N x N route at N = 2048 some 8 hours and 120 GiB (the 24 GB crash of
  issue 12);
* exact integer products of the 2n x 2n enclosure route: about
  0.5 s·(m/256)^3·(B/100), memory 3·m²·(2B + 64)/8 bytes;
* arb ball products at precision p: about 1.5 s·(m/256)^3·(p/256)·steps.

A route over the budget raises :class:`RouteSkipped` with a message that says
what was skipped and how to force it; callers report it and go on without
that route (a decision that needed it is reported undecided).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: default budget of one exact route on one head
DEFAULT_SECONDS = 120.0
DEFAULT_BYTES = 2 * 2**30


class RouteSkipped(RuntimeError):
    """An exact route was not run because its estimated cost is over the budget."""


def charpoly_cost(m: int, bits: int) -> tuple[float, float]:
    """(seconds, bytes) estimated for the exact characteristic polynomial of
    an m x m integer matrix whose entries have at most ``bits`` bits.

    >>> s, b = charpoly_cost(2048, 100); s > 3600 and b > 2**36
    True
    """
    m = max(int(m), 1)
    bits = max(int(bits), 1)
    sec = 0.15 * (m / 64) ** 3.5 * (bits / 82)
    mem = m * m * m * (bits + math.log2(m + 1)) / 8 + 64 * 2**20
    return sec, mem


def products_cost(m: int, bits: int) -> tuple[float, float]:
    """(seconds, bytes) of the exact integer products of the enclosure route."""
    sec = 0.5 * (m / 256) ** 3 * (max(bits, 1) / 100)
    mem = 3 * m * m * (2 * bits + 64) / 8
    return sec, mem


def arb_cost(m: int, prec: int, steps: int = 10) -> tuple[float, float]:
    """(seconds, bytes) of the arb Newton enclosure at precision ``prec``."""
    sec = 1.5 * (m / 256) ** 3 * (prec / 256) * steps
    mem = 8 * m * m * (2 * prec + 64) / 8
    return sec, mem


def _fmt_s(s: float) -> str:
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    if s < 172800:
        return f"{s / 3600:.0f} h"
    return f"{s / 86400:.0f} days"


def _fmt_b(b: float) -> str:
    return f"{b / 2**30:.1f} GiB" if b >= 2**30 else f"{b / 2**20:.0f} MiB"


@dataclass
class Budget:
    """Time (seconds) and memory (bytes) one exact route may take on one head.

    ``force`` runs every route whatever its estimate (``--budget-seconds inf``
    does the same for time only).  Picklable (plain data)."""

    seconds: float = DEFAULT_SECONDS
    bytes: float = DEFAULT_BYTES
    force: bool = False

    def check(self, what: str, cost: tuple[float, float], how: str) -> None:
        """Raise RouteSkipped when ``cost`` = (seconds, bytes) is over the budget."""
        sec, mem = cost
        if self.force or (sec <= self.seconds and mem <= self.bytes):
            return
        raise RouteSkipped(f"{what} skipped: estimated {_fmt_s(sec)} and {_fmt_b(mem)}, over the budget of "
                           f"{_fmt_s(self.seconds)} and {_fmt_b(self.bytes)} per head ({how})")

    def charpoly(self, gd) -> None:
        """The 2n x 2n characteristic polynomial of J·Z Zᵀ."""
        self.check(f"exact charpoly of the {2 * gd.n}x{2 * gd.n} matrix J·Z Zᵀ",
                   charpoly_cost(2 * gd.n, gd.gram_bits()), "raise --budget-seconds / --budget-memory to run it")

    def direct(self, N: int, bits: int) -> None:
        """The direct N x N route (charpoly of S)."""
        self.check(f"direct {N}x{N} route", charpoly_cost(N, bits),
                   "raise --budget-seconds / --budget-memory to run it")

    def exact_products(self, gd) -> None:
        self.check("exact-product enclosure", products_cost(2 * gd.n, gd.gram_bits()),
                   "raise --budget-seconds / --budget-memory")

    def arb(self, gd, prec: int) -> None:
        self.check(f"arb enclosure at {prec} bits", arb_cost(2 * gd.n, prec),
                   "raise --budget-seconds / --budget-memory")
