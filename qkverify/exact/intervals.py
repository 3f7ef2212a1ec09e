"""Rigorous decimal presentation of enclosures (outward rounding)."""

from __future__ import annotations

from flint import arb, fmpq

from .algebraic import arb_to_interval
from .rational import fmpq_str


def _floor_div(a: int, b: int) -> int:
    return a // b


def decimal_bounds(lo: fmpq, hi: fmpq, digits: int = 20) -> tuple[str, str]:
    """Decimal strings (lo', hi') with lo' ≤ lo ≤ hi ≤ hi', rounded outward at
    ``digits`` digits after the point (exact integer arithmetic)."""
    k = 10**digits
    lo_n = (int(lo.p) * k) // int(lo.q)
    hi_n = -((-int(hi.p) * k) // int(hi.q))

    def fmt(n: int) -> str:
        s = "-" if n < 0 else ""
        n = abs(n)
        ip, fp = divmod(n, k)
        return f"{s}{ip}.{fp:0{digits}d}".rstrip("0").rstrip(".") if fp else f"{s}{ip}"

    return fmt(lo_n), fmt(hi_n)


def arb_bounds(x: arb, digits: int = 20) -> tuple[str, str]:
    """Outward-rounded decimal bounds of an arb ball."""
    lo, hi = arb_to_interval(x)
    return decimal_bounds(lo, hi, digits)


def rational_json(q: fmpq) -> str:
    return fmpq_str(q)
