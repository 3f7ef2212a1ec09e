"""Rigorous decimal presentation of enclosures: outward rounding to a number of
SIGNIFICANT digits, so a tiny value keeps its digits (c ≈ 1.9·10⁻⁶⁰ reads
[1.9e-60, 1.9e-60], not [0, 1e-20]).  Exact integer arithmetic only.

>>> decimal_bounds(fmpq(3, 20), fmpq(3, 20), 5)
('0.15', '0.15')
>>> decimal_bounds(fmpq(1, 3), fmpq(1, 3), 4)
('0.3333', '0.3334')
>>> decimal_bounds(fmpq(19, 10**61), fmpq(19, 10**61), 3)
('1.9e-60', '1.9e-60')
>>> decimal_bounds(fmpq(1, 3), fmpq(1, 3), 4, strict=True)
('0.3333', '0.3334')
>>> decimal_bounds(fmpq(1, 2), fmpq(1, 2), 4, strict=True)
('0.4999', '0.5001')
"""

from __future__ import annotations

from flint import arb, fmpq

from .algebraic import arb_to_interval


def _exponent(x: fmpq, digits: int) -> int:
    """k with 10^(digits−1) ≤ |x|·10^k < 10^digits (x ≠ 0), exactly."""
    p, q = abs(int(x.p)), int(x.q)
    k = digits - 1 - (len(str(p)) - len(str(q)))

    def scaled_ge(bound: int) -> bool:  # |x|·10^k ≥ bound
        return p * 10**k >= bound * q if k >= 0 else p >= bound * q * 10 ** (-k)

    while not scaled_ge(10 ** (digits - 1)):
        k += 1
    while scaled_ge(10**digits):
        k -= 1
    return k


def _round(x: fmpq, k: int, up: bool, strict: bool) -> int:
    """floor (or ceil) of x·10^k; with ``strict`` always strictly below (above) x·10^k."""
    s = x * fmpq(10) ** k if k >= 0 else x / fmpq(10) ** (-k)
    n = int(s.p) // int(s.q)
    exact = n * s.q == s.p
    if up:
        return n + 1 if (strict or not exact) else n
    return n - 1 if (strict and exact) else n


def _text(n: int, k: int) -> str:
    """Decimal text of n·10^(−k): plain for moderate exponents, scientific otherwise."""
    if n == 0:
        return "0"
    sign, d = ("-" if n < 0 else ""), str(abs(n))
    e = len(d) - 1 - k
    if -6 <= e < 16:
        if k <= 0:
            return sign + d + "0" * (-k)
        d = d.rjust(k + 1, "0")
        ip, fp = d[:-k], d[-k:].rstrip("0")
        return sign + ip + ("." + fp if fp else "")
    mant = d[0] + ("." + d[1:].rstrip("0") if d[1:].rstrip("0") else "")
    return f"{sign}{mant}e{e}"


def outward(lo: fmpq, hi: fmpq, digits: int, strict: bool = False) -> tuple[fmpq, fmpq]:
    """Rationals lo' ≤ lo ≤ hi ≤ hi' with ``digits`` significant decimal digits (strictly
    outside with ``strict``).

    >>> outward(fmpq(1, 3), fmpq(1, 3), 3)
    (333/1000, 167/500)
    """
    m = max(abs(lo), abs(hi))
    if m == 0:
        return (lo, hi) if not strict else (fmpq(-1, 10**30), fmpq(1, 10**30))
    k = _exponent(m, digits)
    den = fmpq(10) ** k if k >= 0 else 1 / fmpq(10) ** (-k)
    return fmpq(_round(lo, k, False, strict)) / den, fmpq(_round(hi, k, True, strict)) / den


def decimal_bounds(lo: fmpq, hi: fmpq, digits: int = 20, strict: bool = False) -> tuple[str, str]:
    """Decimal strings (lo', hi') with lo' ≤ lo ≤ hi ≤ hi', rounded outward at ``digits``
    significant digits of max(|lo|, |hi|) (strictly outward with ``strict``)."""
    m = max(abs(lo), abs(hi))
    if m == 0:
        return ("0", "0") if not strict else ("-1e-30", "1e-30")
    k = _exponent(m, digits)
    return _text(_round(lo, k, False, strict), k), _text(_round(hi, k, True, strict), k)


def fixed_bounds(lo: fmpq, hi: fmpq, places: int) -> tuple[str, str]:
    """Outward rounding at ``places`` digits after the decimal point (format-1 certificates of
    statements not yet checked per declaration keep this presentation)."""
    k = 10**places

    def fmt(n: int) -> str:
        ip, fp = divmod(abs(n), k)
        s = f"{ip}.{fp:0{places}d}".rstrip("0").rstrip(".") if fp else f"{ip}"
        return "-" + s if n < 0 else s

    return fmt((int(lo.p) * k) // int(lo.q)), fmt(-((-int(hi.p) * k) // int(hi.q)))


def arb_bounds(x: arb, digits: int = 20, fixed: bool = False) -> tuple[str, str]:
    """Outward-rounded decimal bounds of an arb ball, ``digits`` significant digits (or,
    with ``fixed``, digits after the point)."""
    lo, hi = arb_to_interval(x)
    return fixed_bounds(lo, hi, digits) if fixed else decimal_bounds(lo, hi, digits)
