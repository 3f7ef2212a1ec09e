"""The one notation for exact reals (qkverify.exact.notation) and the terminal
table (qkverify.io.text): doctests, and the isolating intervals checked with
sympy's exact root counts (an independent derivation)."""

import doctest
from fractions import Fraction

import pytest
import sympy

from qkverify.exact import notation
from qkverify.io import text

X = sympy.Symbol("x")


def test_doctests():
    for mod in (notation, text):
        r = doctest.testmod(mod, verbose=False)
        assert r.failed == 0 and r.attempted > 0, mod.__name__


@pytest.mark.parametrize("expr,lo,hi", [
    (sympy.sqrt(2), "1.41", "1.42"),
    (-sympy.sqrt(2), "-1.42", "-1.41"),
    (sympy.sqrt(2) + sympy.sqrt(3), "3.14", "3.15"),
    (sympy.Rational(1, 1000) + sympy.sqrt(2) / 10**6, "0.0010014", "0.0010015"),  # a root close to others
    (sympy.CRootOf(X**5 - X - 1, 0), "1.16", "1.17"),
])
def test_root_str_names_the_number(expr, lo, hi):
    s = notation.sympy_str(expr, lo, hi)
    coeffs, a, b = notation.parse_root(s)
    P = sympy.Poly(list(reversed(coeffs)), X)
    assert P.count_roots(sympy.Rational(a), sympy.Rational(b)) == 1  # isolating
    assert P.eval(expr).equals(0) or sympy.simplify(P.as_expr().subs(X, expr)) == 0
    assert a <= Fraction(str(sympy.N(expr, 30))) <= b
    assert len(str(a)) <= 12 and len(str(b)) <= 12  # short decimals, not the enclosure's 20 digits


def test_rationals_are_p_over_q():
    assert notation.sympy_str(sympy.Rational(-6, 4), "-2", "-1") == "-3/2"
    assert notation.root_str([-3, 2], 0, 5) == "3/2"  # a degree-one polynomial is a rational


def test_root_str_refuses_an_interval_without_a_root():
    with pytest.raises(ValueError):
        notation.root_str([-2, 0, 1], 2, 3)


def test_table_stays_within_width():
    rows = [[str(i), "word " * 40] for i in range(3)]
    out = text.table(rows, ["head", "notes"])
    assert max(len(line) for line in out.splitlines()) <= text.WIDTH
    assert out.count("word") == 120  # wrapped, nothing dropped
