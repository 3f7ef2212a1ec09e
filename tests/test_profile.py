"""Exact profiles: the values from the issue, paddings, properties vs float64."""

import numpy as np
import pytest
from flint import fmpq, fmpq_mat
from hypothesis import given, settings, strategies as st

from qkverify.errors import QKInputError
from qkverify.math.profile import compute_profile, profile_lean_convention

Q = fmpq


@pytest.mark.parametrize(
    "rows,expected",
    [
        ([[0, 1], [0, 0]], (Q(1, 2), Q(1, 2), 0, 0)),
        ([[1, 1], [1, -1]], (0, 1, 0, 0)),              # eigenvalues ±√2, profile rational
        ([[2, 0], [0, -1]], (0, Q(4, 5), Q(1, 5), 0)),
        ([[Q(3, 5), Q(4, 5)], [0, 0]], (Q(8, 25), Q(8, 25), Q(9, 25), 0)),
        ([[1, 2], [3, 4]], (Q(1, 60), Q(3, 20), Q(5, 6), 0)),  # irrational spectrum
        ([[-1, 0], [0, -3]], (0, 0, 0, 1)),
        ([[3, 0, 0, 0], [0, 1, 0, 0], [0, 0, -2, 0], [0, 0, 0, -2]], (0, Q(16, 18), Q(1, 18), Q(1, 18))),
    ],
)
def test_issue_profiles_exact(rows, expected):
    for padding in ("blueprint", "lean"):
        p = compute_profile(fmpq_mat(rows), padding)
        assert [c.exact for c in p.coords()] == [Q(x) for x in expected]


def test_sqrt2_tie_is_exact_not_approximate():
    p = compute_profile(fmpq_mat([[1, 1], [1, -1]]))
    assert p.order == [0]  # α₁ = β₁ = √2 decided equal
    f = p.fibers()
    assert f["b=1"] and f["c=0"] and f["d=0"] and not f["a=1"]


def test_algebraic_coordinate():
    p = compute_profile(fmpq_mat([[1, 2, 0], [3, 4, 1], [0, 5, -2]]))
    assert p.a.exact == Q(17, 120)
    assert p.b.exact is None and p.b.value is not None
    # b is a root of its minimal polynomial, within the certified interval
    poly = p.b.value.poly
    assert poly.degree() == 3
    lo, hi = p.b.value.lo, p.b.value.hi
    assert poly(lo) * poly(hi) < 0
    assert p.d.exact == 0


def test_zero_matrix_rejected_but_lean_gives_zero():
    with pytest.raises(QKInputError, match="L = 0 has no profile"):
        compute_profile(fmpq_mat([[0, 0], [0, 0]]))
    assert profile_lean_convention(fmpq_mat([[0, 0], [0, 0]])) == (0, 0, 0, 0)


def test_non_square_rejected():
    with pytest.raises(QKInputError, match="square"):
        compute_profile(fmpq_mat([[1, 2, 3], [4, 5, 6]]))


def float_profile(A):
    S = (A + A.T) / 2
    T = (A - A.T) / 2
    ev = np.linalg.eigvalsh(S)
    al = np.sort(ev[ev > 0])[::-1]
    be = np.sort(-ev[ev < 0])[::-1]
    m = max(len(al), len(be))
    al = np.pad(al, (0, m - len(al)))
    be = np.pad(be, (0, m - len(be)))
    fl = (A * A).sum()
    dif = al - be
    return np.array([(T * T).sum() / fl, 2 * al @ be / fl, (np.maximum(dif, 0) ** 2).sum() / fl,
                     (np.maximum(-dif, 0) ** 2).sum() / fl])


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4).flatmap(lambda n: st.lists(st.lists(st.integers(-4, 4), min_size=n, max_size=n),
                                                     min_size=n, max_size=n)))
def test_exact_profile_agrees_with_float64(rows):
    A = np.array(rows, dtype=float)
    if not A.any():
        return
    p = compute_profile(fmpq_mat(rows))
    got = np.array([float(c.enclosure.mid()) for c in p.coords()])
    assert np.allclose(got, float_profile(A), atol=1e-9)
    # exact values sum to one whenever all four are rational
    ex = [c.exact for c in p.coords()]
    if all(x is not None for x in ex):
        assert sum(ex, Q(0)) == 1


@pytest.mark.parametrize("rows,member", [
    ([[Q(3, 5), Q(4, 5)], [0, 0]], True),      # rank one: (8/25, 8/25, 9/25, 0)
    ([[0, 1], [0, 0]], True),                  # (1/2, 1/2, 0, 0)
    ([[1, 2], [3, 4]], False),                 # a = 1/60 ≠ b = 3/20
    ([[1, 1], [1, -1]], False),                # (0, 1, 0, 0): a ≠ b
    ([[3, 0, 0, 0], [0, 1, 0, 0], [0, 0, -2, 0], [0, 0, 0, -2]], False),  # c, d > 0
    ([[2, 1], [1, 2]], True),                  # vertex (0, 0, 1, 0): a = b = 0 and d = 0
])
def test_theta_membership(rows, member):
    assert compute_profile(fmpq_mat(rows)).in_theta()["member"] is member
