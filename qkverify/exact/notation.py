"""One written notation for exact real numbers, used by every output of qkverify.

* a rational is written ``p/q`` (or ``p``): ``3/20``, ``-7``;
* an irrational real algebraic number is written

      ``root(<polynomial in x>, [lo, hi])``

  -- the unique real root of the integer polynomial in the rational interval
  ``[lo, hi]`` (the polynomial is irreducible, or at least square-free, with a
  positive leading coefficient and coprime coefficients; ``lo`` and ``hi`` are
  short decimals chosen so that the interval holds exactly one root).  E.g.
  √2 is ``root(x^2 - 2, [1, 2])``.

A float approximation may be written beside it (``≈ 1.41421``); it is display
only.  :func:`parse_root` reads the notation back.  The interval written is
an *isolating* interval, proved so here: every other real root of the
polynomial lies in one of FLINT's certified root enclosures, disjoint from it.

>>> root_str([-2, 0, 1], 1, 2)
'root(x^2 - 2, [1, 2])'
>>> root_str([-2, 0, 1], "1.41", "1.42")
'root(x^2 - 2, [1, 2])'
>>> poly_str([422, -1005, -9000, 13500])
'13500*x^3 - 9000*x^2 - 1005*x + 422'
>>> parse_root('root(x^2 - 2, [1, 2])')
([-2, 0, 1], Fraction(1, 1), Fraction(2, 1))
>>> exact_str(Fraction(-3, 20))
'-3/20'
"""

from __future__ import annotations

import re
from fractions import Fraction

from flint import fmpq, fmpz_poly

__all__ = ["poly_str", "root_str", "root_over_sqrt", "parse_root", "exact_str", "isolating_decimal_interval", "algebraic_str",
           "sympy_str"]


def _q(x) -> Fraction:
    if isinstance(x, Fraction):
        return x
    if isinstance(x, fmpq):
        return Fraction(int(x.p), int(x.q))
    if isinstance(x, int):
        return Fraction(x)
    return Fraction(str(x))


def exact_str(q) -> str:
    """A rational as ``p/q`` (``p`` when the denominator is 1).

    >>> exact_str(fmpq(6, 4)), exact_str(5)
    ('3/2', '5')
    """
    q = _q(q)
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def _dec(q: Fraction) -> str:
    """A rational with a terminating decimal expansion, written as a decimal."""
    if q.denominator == 1:
        return str(q.numerator)
    s = "-" if q < 0 else ""
    a = abs(q)
    k = 0
    while (a * 10 ** k).denominator != 1:
        k += 1
    digits = str((a * 10 ** k).numerator).rjust(k + 1, "0")
    return f"{s}{digits[:-k]}.{digits[-k:]}"


def poly_str(coeffs, var: str = "x") -> str:
    """An integer polynomial, ascending coefficients, as ``a*x^k + … + c``."""
    cs = [int(c) for c in coeffs]
    terms = []
    for k in range(len(cs) - 1, -1, -1):
        c = cs[k]
        if c == 0:
            continue
        sign = "-" if c < 0 else "+"
        a = abs(c)
        mono = "" if k == 0 else (var if k == 1 else f"{var}^{k}")
        body = str(a) if k == 0 else (mono if a == 1 else f"{a}*{mono}")
        terms.append((sign, body))
    if not terms:
        return "0"
    first_sign, first = terms[0]
    out = ("-" if first_sign == "-" else "") + first
    for sign, body in terms[1:]:
        out += f" {sign} {body}"
    return out


def _sqfree(coeffs) -> fmpz_poly:
    f = fmpz_poly([int(c) for c in coeffs])
    if f.degree() < 1:
        raise ValueError("a root needs a polynomial of degree at least 1")
    g = f.gcd(f.derivative())
    if g.degree() > 0:
        f = f // g
    c = f.content()
    if c != 1:
        f = fmpz_poly([int(x) // int(c) for x in f.coeffs()])
    if f.leading_coefficient() < 0:
        f = -f
    return f


def _real_root_enclosures(f: fmpz_poly, prec: int) -> list[tuple[Fraction, Fraction]]:
    """Rational intervals, one per real root of the square-free ``f``, each
    holding exactly that root (FLINT's certified isolation)."""
    from .algebraic import isolate_real_roots

    return [(_q(lo), _q(hi)) for lo, hi in isolate_real_roots(f, prec)]


def isolating_decimal_interval(coeffs, lo, hi, max_prec: int = 4096) -> tuple[Fraction, Fraction, list[int]]:
    """(a, b, g): the square-free part ``g`` (ascending coefficients) of the
    polynomial and the shortest decimal interval [a, b] (fewest digits) that
    holds exactly one real root of it -- the one root that lies in [lo, hi].

    Raises ValueError when [lo, hi] holds no root, or more than one root that
    the enclosures at ``max_prec`` bits cannot tell apart."""
    lo, hi = _q(lo), _q(hi)
    if lo > hi:
        lo, hi = hi, lo
    f = _factor_with_root(_sqfree(coeffs), lo, hi)
    prec = 64
    while True:
        ivs = _real_root_enclosures(f, prec)
        meet = [i for i, (a, b) in enumerate(ivs) if a <= hi and lo <= b]
        inside = [i for i in meet if lo <= ivs[i][0] and ivs[i][1] <= hi]
        if len(meet) == 1 and (inside or lo == hi or _sign_change(f, lo, hi) or _holds(f, ivs[meet[0]], lo, hi)):
            i = meet[0]
            break
        if not meet:
            raise ValueError("the interval holds no root of the polynomial")
        if prec >= max_prec:
            raise ValueError("the interval does not isolate one root of the polynomial")
        prec *= 2
    a0, b0 = ivs[i]
    others = [iv for j, iv in enumerate(ivs) if j != i]
    k = 0
    while True:
        s = Fraction(10) ** k
        a = Fraction(_floor(a0 * s)) / s
        b = Fraction(-_floor(-b0 * s)) / s
        if all(iv[1] < a or b < iv[0] for iv in others):
            return a, b, [int(c) for c in f.coeffs()]
        k += 1


def _factor_with_root(f: fmpz_poly, lo: Fraction, hi: Fraction) -> fmpz_poly:
    """The irreducible factor of ``f`` whose real roots meet [lo, hi], when it is
    the only one (else ``f`` itself, whose roots are then told apart below)."""
    _, facs = f.factor()
    if len(facs) == 1:
        g = facs[0][0]
        return g if g.leading_coefficient() > 0 else -g
    hits = []
    for g, _ in facs:
        if g.degree() < 1:
            continue
        if any(a <= hi and lo <= b for a, b in _real_root_enclosures(g, 64)):
            hits.append(g)
    if len(hits) == 1:
        g = hits[0]
        return g if g.leading_coefficient() > 0 else -g
    return f


def root_over_sqrt(coeffs, s, lo, hi) -> str:
    """The notation of y/√s, for y the root of the integer polynomial
    (ascending ``coeffs``) and a rational s > 0, the quotient lying in [lo, hi]:
    y/√s is a root of E(x)² − s·O(x)², where f(x√s) = E(x) + √s·O(x).

    >>> root_over_sqrt([-3, 1], 3, "1.7", "1.8")  # 3/√3 = √3
    'root(x^2 - 3, [1, 2])'
    """
    from flint import fmpq_poly

    s = _q(s)
    sq = fmpq(s.numerator, s.denominator)
    E, O = [], []
    for k, c in enumerate(int(x) for x in coeffs):
        (E if k % 2 == 0 else O).append((k, fmpq(c) * sq ** (k // 2)))
    e = fmpq_poly([0] * (len(coeffs)))
    o = fmpq_poly([0] * (len(coeffs)))
    for k, c in E:
        e += fmpq_poly([0] * k + [c])
    for k, c in O:
        o += fmpq_poly([0] * k + [c])
    g = e * e - o * o * sq
    den = 1
    for c in g.coeffs():
        den = den * int(c.q) // __import__("math").gcd(den, int(c.q))
    return root_str([int(c * den) for c in g.coeffs()], lo, hi)


def _floor(q: Fraction) -> int:
    return q.numerator // q.denominator


def _sign(f: fmpz_poly, x: Fraction) -> int:
    v = f(fmpq(x.numerator, x.denominator))
    return (v > 0) - (v < 0)


def _sign_change(f: fmpz_poly, lo: Fraction, hi: Fraction) -> bool:
    return _sign(f, lo) * _sign(f, hi) < 0


def _holds(f: fmpz_poly, iv, lo: Fraction, hi: Fraction) -> bool:
    """The root enclosed by ``iv`` is in [lo, hi]: the enclosure's part inside
    [lo, hi] shows a sign change, or an endpoint of [lo, hi] is the root."""
    a, b = max(iv[0], lo), min(iv[1], hi)
    if a > b:
        return False
    return _sign(f, a) == 0 or _sign(f, b) == 0 or _sign_change(f, a, b)


def root_str(coeffs, lo, hi) -> str:
    """``root(<poly>, [a, b])`` for the root of the integer polynomial
    (ascending ``coeffs``) that lies in [lo, hi]; a rational root is written
    ``p/q`` instead.  See the module docstring."""
    a, b, g = isolating_decimal_interval(coeffs, lo, hi)
    if len(g) == 2:  # degree 1: rational
        return exact_str(Fraction(-g[0], g[1]))
    return f"root({poly_str(g)}, [{_dec(a)}, {_dec(b)}])"


_ROOT = re.compile(r"^root\((?P<poly>[^,]+),\s*\[(?P<lo>[^,\]]+),\s*(?P<hi>[^\]]+)\]\)$")
_TERM = re.compile(r"^(?P<c>\d+)?(?:\*?x(?:\^(?P<k>\d+))?)?$")


def parse_root(s: str) -> tuple[list[int], Fraction, Fraction]:
    """(ascending coefficients, lo, hi) of a ``root(…)`` string; ValueError if malformed."""
    m = _ROOT.match(s.strip())
    if not m:
        raise ValueError(f"not a root(...) notation: {s!r}")
    text = m.group("poly").replace(" ", "")
    text = text if text.startswith("-") else "+" + text
    coeffs: dict[int, int] = {}
    for sign, term in re.findall(r"([+-])([^+-]+)", text):
        t = _TERM.match(term)
        if not t or term == "":
            raise ValueError(f"cannot read the term {term!r}")
        c = int(t.group("c")) if t.group("c") else 1
        k = 0 if "x" not in term else int(t.group("k") or 1)
        coeffs[k] = coeffs.get(k, 0) + (c if sign == "+" else -c)
    deg = max(coeffs)
    return [coeffs.get(k, 0) for k in range(deg + 1)], Fraction(m.group("lo")), Fraction(m.group("hi"))


def algebraic_str(x, approx_digits: int | None = None) -> str:
    """A :class:`qkverify.exact.algebraic.RealAlgebraic` (or a rational) in the
    notation, with ``≈ <decimal>`` beside it when ``approx_digits`` is given and
    the number is irrational."""
    from .algebraic import RealAlgebraic

    if not isinstance(x, RealAlgebraic):
        return exact_str(x)
    if x.is_rational:
        return exact_str(x.rational)
    s = root_str([int(c) for c in x.poly.coeffs()], x.lo, x.hi)
    if approx_digits:
        s += f" ≈ {x.decimal(approx_digits)}"
    return s


def sympy_str(expr, lo, hi) -> str:
    """An exact sympy number (rational, radicals, ``CRootOf``…) in the notation:
    its minimal polynomial and the root of it in the enclosure [lo, hi] (which
    must hold the number).  Falls back to sympy's own text when the minimal
    polynomial is out of reach."""
    import sympy

    if expr.is_Rational:
        return exact_str(Fraction(int(expr.p), int(expr.q)))
    x = sympy.Symbol("x")
    try:
        mp = sympy.Poly(sympy.minimal_polynomial(expr, x), x)
        coeffs = [int(c) for c in reversed(mp.all_coeffs())]
        return root_str(coeffs, lo, hi)
    except (NotImplementedError, ValueError, TypeError):
        return str(expr)
