"""Exact arithmetic layer: parsing, inertia (two methods), algebraic numbers."""

import json
import random
from fractions import Fraction

import numpy as np
import pytest
from flint import fmpq, fmpq_mat, fmpz_poly
from hypothesis import given, settings, strategies as st

from qkverify.errors import QKInputError
from qkverify.exact.algebraic import RealAlgebraic, eigenvalues_symmetric, real_roots
from qkverify.exact.inertia import inertia_charpoly, inertia_ldlt, ldlt
from qkverify.exact.matrix import cayley_orthogonal, identity, random_antisymmetric, rank_certificate
from qkverify.exact.rational import dyadic_fmpz_mat, ndarray_to_fmpq_mat, parse_rational, read_input_file


def test_decimal_text_is_exact(tmp_path):
    p = tmp_path / "m.json"
    p.write_text('[[0.1, 2], ["1/3", "-2.5e-1"]]')
    doc = read_input_file(p)
    from qkverify.exact.rational import rows_to_fmpq_mat

    M = rows_to_fmpq_mat(doc, square=True)
    assert M[0, 0] == fmpq(1, 10)  # not the binary float 0.1000000000000000055…
    assert M[1, 0] == fmpq(1, 3) and M[1, 1] == fmpq(-1, 4)


@pytest.mark.parametrize("bad,msg", [("NaN", "NaN"), ("1/0", "zero denominator"), ("abc", "not a rational")])
def test_bad_scalars(bad, msg):
    with pytest.raises(QKInputError, match=msg):
        parse_rational(bad, "L[0][0]")


def test_float32_is_exact_dyadic():
    a = np.array([[0.1, -3.5], [1e-30, 0.0]], dtype=np.float32)
    M = ndarray_to_fmpq_mat(a)
    assert Fraction(int(M[0, 0].p), int(M[0, 0].q)) == Fraction(float(np.float32(0.1)))
    assert M[0, 0] != fmpq(1, 10)
    B, e = dyadic_fmpz_mat(a.astype(np.float64))
    for i in range(2):
        for j in range(2):
            assert Fraction(int(B[i, j])) * Fraction(2) ** e == Fraction(float(a[i, j]))


def test_nan_in_npy_is_named(tmp_path):
    p = tmp_path / "m.npy"
    np.save(p, np.array([[1.0, float("nan")], [0.0, 1.0]]))
    with pytest.raises(QKInputError, match=r"\[0\]\[1\].*not a rational"):
        ndarray_to_fmpq_mat(read_input_file(p))


def sym_from(rows):
    A = fmpq_mat(rows)
    return A + A.transpose()


def test_inertia_known_values():
    assert inertia_charpoly(fmpq_mat([[0, 1], [1, 0]])).triple() == (1, 1, 0)
    assert inertia_ldlt(fmpq_mat([[0, 1], [1, 0]])).triple() == (1, 1, 0)  # needs a 2x2 pivot
    S = fmpq_mat([[1, 2, 0], [2, 1, 0], [0, 0, 0]])  # eigenvalues 3, -1, 0
    assert inertia_charpoly(S).triple() == (1, 1, 1)
    assert inertia_ldlt(S).triple() == (1, 1, 1)


small = st.integers(-3, 3)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 6).flatmap(lambda n: st.lists(st.lists(small, min_size=n, max_size=n), min_size=n, max_size=n)),
       st.booleans())
def test_two_inertia_methods_agree(rows, zero_diag):
    S = sym_from(rows)
    n = S.nrows()
    if zero_diag:
        for i in range(n):
            S[i, i] = 0
    a, b = inertia_charpoly(S), inertia_ldlt(S)
    assert a.triple() == b.triple()
    # and LDLᵀ multiplies back to P S Pᵀ
    perm, L, blocks = ldlt(S)
    D = fmpq_mat(n, n)
    k = 0
    for kind, v in blocks:
        if kind == "1":
            D[k, k] = v; k += 1
        elif kind == "2":
            D[k, k + 1] = D[k + 1, k] = v; k += 2
        else:
            k += v
    P = fmpq_mat([[S[perm[i], perm[j]] for j in range(n)] for i in range(n)])
    Lm = fmpq_mat(L)
    assert P == Lm * D * Lm.transpose()
    # float64 agrees on the count away from zero
    ev = np.linalg.eigvalsh(np.array([[float(S[i, j]) for j in range(n)] for i in range(n)]))
    assert sum(ev > 1e-9) == a.n_pos and sum(ev < -1e-9) == a.n_neg


def test_sqrt2_equality_is_decided_exactly():
    # +√2 (root 1 of x²−2) against −(−√2): equal, decided by the polynomial and root index
    p = RealAlgebraic(fmpz_poly([-2, 0, 1]), 1, fmpq(1), fmpq(2))
    m = -RealAlgebraic(fmpz_poly([-2, 0, 1]), 0, fmpq(-2), fmpq(-1))
    assert p == m
    # √2 vs the rational 1414213562373095/10**15: different, decided by refinement
    assert p.cmp(RealAlgebraic.from_rational(fmpq(1414213562373095, 10**15))) == 1


def test_eigenvalues_of_1234():
    S = fmpq_mat([[1, fmpq(5, 2)], [fmpq(5, 2), 4]])  # (5 ± √34)/2
    ev = eigenvalues_symmetric(S)
    assert [m for _, m in ev] == [1, 1]
    top = ev[0][0]
    assert list(map(int, top.poly.coeffs())) == [-9, -20, 4]  # 4x² − 20x − 9
    assert abs(float(top.to_arb(80).mid()) - (5 + 34**0.5) / 2) < 1e-12


def test_real_roots_multiplicity():
    p = fmpz_poly([-2, 0, 1]) * fmpz_poly([0, 1]) ** 2 * fmpz_poly([-3, 1])
    rr = real_roots(p)
    assert [m for _, m in rr] == [1, 2, 1, 1]
    assert rr[1][0].rational == 0 and rr[3][0].rational == 3


def test_rank_certificate_degenerate():
    A = fmpq_mat([[1, 2, 3], [2, 4, 6], [fmpq(1, 2), 0, 1]])
    c = rank_certificate(A)
    assert c.rank == 2
    assert c.minor_mod_p != 0 and len(c.left_kernel) == 1
    y = c.left_kernel[0]
    B, D = A.numer_denom()
    assert all(sum(y[i] * int(B[i, j]) for i in range(3)) == 0 for j in range(3))


def test_cayley_is_orthogonal():
    U = cayley_orthogonal(random_antisymmetric(random.Random(3), 4))
    assert U.transpose() * U == identity(4)
