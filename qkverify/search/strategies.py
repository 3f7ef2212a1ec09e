"""Hypothesis strategies producing exact claim inputs.

Every strategy draws sizes first (so Hypothesis shrinks dimensions before
entries) and exact rational entries: small integers in [-3, 3] or dyadic
rationals k/2^j (|k| <= 8, j <= 3, one j per matrix block).  Families (``FAMILIES``):

* ``general``        every entry free
* ``symmetric``      L = Lᵀ
* ``antisymmetric``  L = −Lᵀ
* ``low_rank``       L = A Bᵀ with A, B N x r, 0 <= r <= N
* ``rank_one``       L = u vᵀ, u, v nonzero
* ``ties``           L = U diag(λ) Uᵀ + T: U rational orthogonal (Cayley
                     transform of a small antisymmetric matrix), λ with
                     exact ties (repeated values, ± pairs) and near ties
                     (λ and λ + 2^-k, k <= 24), T antisymmetric (possibly 0)
* ``heads``          L = W_Kᵀ W_Q with W_Q, W_K n x N, 1 <= n <= N
* ``unit_rank_one``  L = ±u vᵀ with rational unit vectors u, v (rank 1, ‖L‖ = 1)
* ``unit_norm``      L with ‖L‖² = 1 (a rational unit vector of length N², reshaped)

Inputs by input kind (:data:`KIND_STRATEGIES`, the ``kind`` of a format-2
certificate input): ``matrix``, ``matrix_bound`` (with 0 <= n <= N),
``head`` (n <= N, sometimes with a basis B of C; ``--family general`` also
allows n > N), ``matrix_pair`` (U rational orthogonal, or -- for probing --
an invertible U that usually is not), ``matrix_fiber`` (candidate
decompositions S = H ± P), ``matrix_subspace``, ``family``, ``rank_one``,
``theta_point``, ``law``.  A kind without a builder is drawn by mutating
given seed inputs of that kind (:func:`strategy_for_kind`), so a new input
kind can be searched before it has a strategy of its own.

All strategies are deterministic functions of Hypothesis's choice sequence,
so a run is reproducible from its seed.
"""

from __future__ import annotations

import functools
import re
from typing import Callable

from flint import fmpq, fmpq_mat
from hypothesis import assume
from hypothesis import strategies as st

from ..errors import QKInputError

FAMILIES = ("general", "symmetric", "antisymmetric", "low_rank", "rank_one", "ties", "heads", "unit_rank_one",
            "unit_norm")

# ---------------------------------------------------------------------------
# scalars and matrices


def small_ints(bound: int = 3) -> st.SearchStrategy[fmpq]:
    """Integers in [-bound, bound] as fmpq (shrinks towards 0)."""
    return st.integers(-bound, bound).map(fmpq)


def dyadics(max_num: int = 8, max_exp: int = 3) -> st.SearchStrategy[fmpq]:
    """k / 2^j, |k| <= max_num, 0 <= j <= max_exp (exact)."""
    return st.builds(lambda k, j: fmpq(k, 2 ** j), st.integers(-max_num, max_num), st.integers(0, max_exp))


def entries() -> st.SearchStrategy[fmpq]:
    """Small integers (first, so counterexamples shrink to integers) or dyadics."""
    return st.one_of(small_ints(), dyadics())


def _mat(rows: list[list[fmpq]]) -> fmpq_mat:
    return fmpq_mat(rows)


@st.composite
def rect(draw, r: int, c: int, elem: st.SearchStrategy | None = None) -> fmpq_mat:
    """An r x c exact matrix: integers k in [-8, 8] over a common 2^j,
    0 <= j <= 3 (j drawn once, so integer matrices are the shrink target and
    entries are small integers or dyadics k/2^j); or entries from ``elem``.
    Drawing a flat list of integers keeps Hypothesis's per-example cost low."""
    if elem is not None:
        return _mat([[draw(elem) for _ in range(c)] for _ in range(r)])
    return fmpq_mat(r, c, _flat(draw, r * c))


_J = st.integers(0, 3)


@functools.lru_cache(maxsize=None)
def _binary(count: int) -> st.SearchStrategy[bytes]:
    return st.binary(min_size=count, max_size=count)


def _zigzag(b: int, bound: int) -> int:
    """Byte -> integer in [-bound, bound]: 0, 1, -1, 2, -2, ... (byte 0 -> 0,
    so Hypothesis's byte shrinking drives entries towards 0)."""
    m = b % (2 * bound + 1)
    return (m + 1) // 2 if m % 2 else -(m // 2)


def _flat(draw, count: int) -> list[fmpq]:
    """``count`` exact entries k/2^j: one j in 0..3 per block (|k| <= 3 when
    j = 0, else |k| <= 8), the k from one fixed-size byte string.  One draw
    per block keeps Hypothesis's per-example cost low (~0.4 ms), and its byte
    shrinker still lowers each entry separately."""
    if count == 0:
        return []
    j = draw(_J)
    bound = 3 if j == 0 else 8
    raw = draw(_binary(count))
    return [fmpq(_zigzag(b, bound), 2 ** j) for b in raw]


@st.composite
def general_matrix(draw, N: int) -> fmpq_mat:
    return draw(_cached(rect, N, N))


@st.composite
def symmetric_matrix(draw, N: int) -> fmpq_mat:
    M = fmpq_mat(N, N)
    vals = iter(_flat(draw, N * (N + 1) // 2))
    for i in range(N):
        for j in range(i, N):
            v = next(vals)
            M[i, j] = v
            M[j, i] = v
    return M


@st.composite
def antisymmetric_matrix(draw, N: int) -> fmpq_mat:
    M = fmpq_mat(N, N)
    vals = iter(_flat(draw, N * (N - 1) // 2))
    for i in range(N):
        for j in range(i + 1, N):
            v = next(vals)
            M[i, j] = v
            M[j, i] = -v
    return M


@st.composite
def low_rank_matrix(draw, N: int) -> fmpq_mat:
    r = draw(st.integers(0, N))
    if r == 0:
        return fmpq_mat(N, N)
    A = draw(_cached(rect, N, r))
    Bm = draw(_cached(rect, N, r))
    return A * Bm.transpose()


@st.composite
def rank_one_matrix(draw, N: int) -> fmpq_mat:
    nz = st.integers(1, 3).map(fmpq)
    u = draw(_cached(rect, N, 1))
    v = draw(_cached(rect, N, 1))
    i = draw(st.integers(0, N - 1))
    j = draw(st.integers(0, N - 1))
    if u[i, 0] == 0:
        u[i, 0] = draw(nz)
    if v[j, 0] == 0:
        v[j, 0] = draw(nz)
    return u * v.transpose()


def _cayley(K: fmpq_mat) -> fmpq_mat:
    N = K.nrows()
    I = fmpq_mat(N, N)
    for i in range(N):
        I[i, i] = 1
    return (I - K) * (I + K).inv()  # I + K is invertible for antisymmetric K


@st.composite
def tie_spectrum(draw, N: int) -> list[fmpq]:
    """N eigenvalues with exact ties / ± pairs / near ties (exact rationals).

    Decoded from one byte string (two bytes per eigenvalue) so generation is
    cheap: for eigenvalue i, byte 2i picks the kind (copy of an earlier
    value, its mirror −x, a near tie x ± 2^-k with k <= 24, or a fresh small
    integer) and byte 2i+1 the free parameter.  All-zero bytes give the zero
    spectrum, Hypothesis's shrink target."""
    raw = draw(_binary(2 * N))
    vals: list[fmpq] = []
    for i in range(N):
        kind, par = raw[2 * i] % 4, raw[2 * i + 1]
        prev = vals[par % len(vals)] if vals else fmpq(0)
        if kind == 0:
            vals.append(prev if vals else fmpq(_zigzag(par, 3)))
        elif kind == 1:
            vals.append(-prev if vals else fmpq(_zigzag(par, 3)))
        elif kind == 2:
            k = 1 + (par >> 1) % 24
            vals.append(prev + fmpq(1 if par % 2 == 0 else -1, 2 ** k))
        else:
            vals.append(fmpq(_zigzag(par, 3)))
    return vals


@st.composite
def ties_matrix(draw, N: int) -> fmpq_mat:
    lam = draw(_cached(tie_spectrum, N))
    D = fmpq_mat(N, N)
    for i, x in enumerate(lam):
        D[i, i] = x
    K = draw(_cached(antisymmetric_matrix, N))
    U = _cayley(K)
    S = U * D * U.transpose()
    T = draw(_cached(antisymmetric_matrix, N))  # the zero matrix half of the time after shrinking
    return S + T


@st.composite
def head_product(draw, N: int) -> fmpq_mat:
    n = draw(st.integers(1, N))
    WQ = draw(_cached(rect, n, N))
    WK = draw(_cached(rect, n, N))
    return WK.transpose() * WQ


@st.composite
def unit_rank_one_matrix(draw, N: int) -> fmpq_mat:
    """±u vᵀ with rational unit vectors u, v: rank one and ‖L‖² = 1."""
    u, v = draw(unit_vector(N)), draw(unit_vector(N))
    sg = draw(st.sampled_from((1, -1)))
    return fmpq_mat([[sg * a * b for b in v] for a in u])


@st.composite
def unit_norm_matrix(draw, N: int) -> fmpq_mat:
    """An N x N matrix with ‖L‖² = 1 (a rational unit vector of length N², reshaped)."""
    x = draw(unit_vector(N * N))
    return fmpq_mat([[x[i * N + j] for j in range(N)] for i in range(N)])


@functools.lru_cache(maxsize=None)
def _cached(builder, *args) -> st.SearchStrategy:
    """Build each (builder, size) strategy once: Hypothesis validates a fresh
    strategy object on every draw, which dominated generation time."""
    return builder(*args)


_FAMILY_BUILDERS = {
    "general": general_matrix,
    "symmetric": symmetric_matrix,
    "antisymmetric": antisymmetric_matrix,
    "low_rank": low_rank_matrix,
    "rank_one": rank_one_matrix,
    "ties": ties_matrix,
    "heads": head_product,
    "unit_rank_one": unit_rank_one_matrix,
    "unit_norm": unit_norm_matrix,
}


_FAMILY_CHOICE = st.sampled_from(FAMILIES)


def _check_family(family: str | None) -> None:
    if family is not None and family not in FAMILIES:
        raise QKInputError(f"unknown family {family!r}; choose from {', '.join(FAMILIES)}")


def _check_dim(max_dim: int) -> None:
    if not isinstance(max_dim, int) or max_dim < 1 or max_dim > 12:
        raise QKInputError(f"--max-dim must be an integer in 1..12, got {max_dim!r}")


@st.composite
def matrix_of_size(draw, N: int, family: str | None = None) -> fmpq_mat:
    """An N x N exact matrix from ``family`` (default: a mixture of all)."""
    _check_family(family)
    name = family if family is not None else draw(_FAMILY_CHOICE)
    return draw(_cached(_FAMILY_BUILDERS[name], N))


@st.composite
def square_matrix(draw, max_dim: int, family: str | None = None) -> fmpq_mat:
    """An N x N exact matrix, 1 <= N <= max_dim, from ``family`` (default: a
    mixture of all families, ``general`` first so counterexamples shrink to
    plain matrices)."""
    N = draw(st.integers(1, max_dim))
    name = family if family is not None else draw(_FAMILY_CHOICE)
    return draw(_cached(_FAMILY_BUILDERS[name], N))


# ---------------------------------------------------------------------------
# inputs by kind (the ``kind`` of a format-2 certificate input)


def _inputs():
    from ..io import inputs as I

    return I


@st.composite
def matrix_input(draw, max_dim: int, family: str | None = None):
    """``matrix``: an N x N exact L, 1 <= N <= max_dim."""
    return _inputs().MatrixInput(draw(square_matrix(max_dim, family)))


@st.composite
def symmetric_input(draw, max_dim: int, family: str | None = None):
    """``matrix`` inputs with L symmetric."""
    L = draw(square_matrix(max_dim, family or "symmetric"))
    return _inputs().MatrixInput((L + L.transpose()) * fmpq(1, 2))


@st.composite
def matrix_bound_input(draw, max_dim: int, family: str | None = None):
    """``matrix_bound``: L and a bound n, 0 <= n <= N (n = 0 is a valid Lean input)."""
    L = draw(square_matrix(max_dim, family))
    n = draw(st.integers(0, L.nrows()))
    return _inputs().MatrixInput(L, n)


#: the old name of :func:`matrix_bound_input`
matrix_n_input = matrix_bound_input


@st.composite
def invertible(draw, N: int) -> fmpq_mat:
    """An invertible N x N rational matrix: (lower unitriangular)·diag(nonzero)·(upper unitriangular)."""
    Lo, Up, D = fmpq_mat(N, N), fmpq_mat(N, N), fmpq_mat(N, N)
    off = iter(_flat(draw, N * (N - 1)))
    diag = st.sampled_from((1, 2, -1, fmpq(1, 2)))
    for i in range(N):
        Lo[i, i] = Up[i, i] = 1
        D[i, i] = fmpq(draw(diag))
        for j in range(i):
            Lo[i, j] = next(off)
            Up[j, i] = next(off)
    return Lo * D * Up


@st.composite
def head_input(draw, max_dim: int, family: str | None = None):
    """``head``: (W_Q, W_K) n x N with 1 <= n <= N (n <= N + 1 when family == 'general', so that
    n <= N can be dropped); a third of the time with a basis B of C (an invertible N x N) in
    which the Gram matrix is read."""
    N = draw(st.integers(1, max_dim))
    top = N + 1 if family == "general" else N
    n = draw(st.integers(1, top))
    if family in ("rank_one", "low_rank") or (family is None and draw(st.integers(0, 3)) == 3):
        # degenerate heads: W_Q, W_K with few independent rows
        u = draw(_cached(rect, 1, N))
        cK = draw(_cached(rect, n, 1))
        cQ = draw(_cached(rect, n, 1))
        WK, WQ = cK * u, cQ * draw(_cached(rect, 1, N))
    else:
        WQ = draw(_cached(rect, n, N))
        WK = draw(_cached(rect, n, N))
    B = draw(invertible(N)) if draw(st.integers(0, 2)) == 2 else None
    k = draw(st.one_of(st.none(), st.integers(0, 3)))  # the k of GramForm.trace_pow_symPart (k = 0 too)
    lam = None
    if draw(st.integers(0, 2)) == 2:  # an arbitrary lam for the GramForm λ theorems (h dropped)
        lam = tuple(_real(x) for x in draw(st.lists(_SPECTRAL, min_size=2 * n, max_size=2 * n)))
    if draw(st.integers(0, 7)) == 7:  # a head with n = 0 (Fin 0 → …): W_Q = W_K = 0 × N
        return _inputs().HeadInput(fmpq_mat(0, N), fmpq_mat(0, N), k=k, lam=())
    return _inputs().HeadInput(WQ, WK, B=B, k=k, lam=lam)


#: small rationals for spectra and vectors, |x| ≥ 1 included (Lean's types allow any real)
_SPECTRAL = st.sampled_from([fmpq(x) for x in (0, 1, -1, 2, -2, "1/2", "-1/2", "1/3", "-1/3", "3/5", "-4/5", "3/2")])


#: rational points of Λ_m (unit, sorted, m negative and m positive entries)
_LAMBDA_POINTS = [tuple(fmpq(t) for t in p) for p in (("-3/5", "4/5"), ("-4/5", "3/5"), ("-1/2", "-1/2", "1/2", "1/2"),
                                                          ("-2/3", "-1/3", "1/3", "2/3"))]


def _real(x: fmpq):
    from ..exact.algebraic import RealAlgebraic

    return RealAlgebraic.from_rational(x)


@st.composite
def vector_input(draw, max_dim: int, family: str | None = None):
    """``vector``: x of length 2m (or odd), entries small rationals with |x_i| ≥ 1 allowed, as given or
    normalised; half the time with a matrix S of spectrum x (Q·diag(x)·Qᵀ, Q rational orthogonal,
    so that hσ holds while x may leave Λ_m), a vector y and a scalar c."""
    from ..math.accumulation import matrix_with_spectrum

    m2 = draw(st.integers(1, max(1, min(max_dim, 4))))
    if draw(st.integers(0, 4)) != 4:
        m2 = 2 * ((m2 + 1) // 2)
    if draw(st.integers(0, 2)) == 2:  # a point of Λ_m, with S of its spectrum or of another one
        x = draw(st.sampled_from(_LAMBDA_POINTS))
        m2 = len(x)
        spec = list(x) if draw(st.booleans()) else list(draw(st.lists(_SPECTRAL, min_size=m2, max_size=m2)))
        S = matrix_with_spectrum(spec, draw(st.integers(0, 3)))
        return _inputs().VectorInput(x, False, None, None, S)
    x = tuple(draw(st.lists(_SPECTRAL, min_size=m2, max_size=m2)))
    norm = draw(st.booleans()) and any(x)
    S = matrix_with_spectrum(list(x), draw(st.integers(0, 3))) if draw(st.booleans()) else None
    y = tuple(draw(st.lists(_SPECTRAL, min_size=m2, max_size=m2))) if draw(st.booleans()) else None
    c = draw(_SPECTRAL) if draw(st.booleans()) else None
    if y is not None and not norm and draw(st.booleans()):
        # Theorem 5's S: spectrum x ∪ −y ∪ 0^z (x, y usually positive), symmetric, triangular (same
        # roots, not symmetric) or symmetric with another spectrum
        pos = st.sampled_from([fmpq(t) for t in (1, 2, "1/2", "3/2", "1/3")])
        if draw(st.booleans()):
            x = tuple(draw(st.lists(pos, min_size=m2, max_size=m2)))
        if draw(st.booleans()):
            y = tuple(draw(st.lists(pos, min_size=m2, max_size=m2)))
        spec = list(x) + [-t for t in y] + [fmpq(0)] * draw(st.integers(0, 1))
        how = draw(st.integers(0, 2))
        if how == 0:
            S = matrix_with_spectrum(spec, draw(st.integers(0, 3)))
        elif how == 1:
            k = len(spec)
            S = fmpq_mat(k, k, [spec[i] if i == j else (1 if j == i + 1 else 0) for i in range(k) for j in range(k)])
        else:
            S = matrix_with_spectrum([t + 1 for t in spec], draw(st.integers(0, 3)))
    return _inputs().VectorInput(x, norm, y, c, S)


@st.composite
def matrix_spectrum_input(draw, max_dim: int, family: str | None = None):
    """``matrix_spectrum``: S (a family's matrix, or diag of a spectrum whose norm is a square) and
    lam, lam2: the sorted normalised nonzero spectrum when it is rational, or arbitrary rationals."""
    from ..exact.matrix import frob_sq

    if draw(st.booleans()):
        # Pythagorean spectra: ‖S‖ rational, λ rational
        vals = draw(st.sampled_from([(3, 4), (-3, 4), (3, -4, 0), (1, 2, 2), (-1, 2, -2), (2, 0, 0)]))
        N = len(vals)
        S = fmpq_mat(N, N, [fmpq(vals[i]) if i == j else 0 for i in range(N) for j in range(N)])
    else:
        S = draw(square_matrix(min(max_dim, 3), family))
    f = frob_sq(S)
    from ..exact.quadratic import rational_sqrt

    r = rational_sqrt(f)
    true = None
    if r:
        ev = sorted(S[i, i] / r for i in range(S.nrows()) if S[i, i] != 0) if all(
            S[i, j] == 0 for i in range(S.nrows()) for j in range(S.nrows()) if i != j) else None
        true = tuple(_real(x) for x in ev) if ev is not None else None

    def one():
        if true is not None and draw(st.booleans()):
            return true
        m = len(true) if true is not None else draw(st.integers(0, S.nrows()))
        return tuple(_real(x) for x in sorted(draw(st.lists(_SPECTRAL, min_size=m, max_size=m))))

    lam = one()
    lam2 = one() if draw(st.booleans()) else None
    if lam2 is not None and len(lam2) != len(lam):
        lam2 = None
    return _inputs().SpectrumInput(S, lam, lam2)


@st.composite
def forms_input(draw, max_dim: int, family: str | None = None):
    """``forms``: B_0, …, B_{k−1} on ℚ^n (n ≤ 2, k ≤ 3): RoPE-like families (G_d = G_0·S^d), arbitrary
    ones, and a singular B_0 a third of the time; sometimes a candidate S, sometimes an explicit k ≤
    the number of forms given (k = 1 with B_1 known, k = 0)."""
    from ..io.attention_inputs import make_input
    from ..exact.matrix import to_str_rows

    n = draw(st.integers(1, 2))
    k = draw(st.integers(1, 3))
    G0 = draw(_cached(rect, n, n))
    if draw(st.integers(0, 2)) == 2:
        G0 = fmpq_mat(n, n)  # singular B_0
    S = draw(_cached(rect, n, n))
    if draw(st.booleans()):
        Gs, P = [G0], fmpq_mat(n, n, [int(i == j) for i in range(n) for j in range(n)])
        for _ in range(1, k):
            P = P * S
            Gs.append(G0 * P)
    else:
        Gs = [G0] + [draw(_cached(rect, n, n)) for _ in range(1, k)]
    doc = {"kind": "forms", "B": [to_str_rows(G) for G in Gs]}
    if draw(st.booleans()):
        doc["S"] = to_str_rows(S)
    if draw(st.booleans()):  # Lean's k is separate from the family: fewer than given (B_1 known at k = 1), or 0
        doc["k"] = draw(st.integers(0, len(Gs)))
    try:
        return make_input(doc, "forms", {})
    except QKInputError:
        assume(False)


@st.composite
def orthogonal_input(draw, max_dim: int, family: str | None = None):
    """``matrix_pair``: L and U, U rational orthogonal (Cayley transform or signed permutation)
    or, in the last branch (for probing UᵀU = 1), an invertible U that is usually not."""
    L = draw(square_matrix(max_dim, family))
    N = L.nrows()
    branch = draw(st.integers(0, 2))
    if branch == 0:
        U = _cayley(draw(antisymmetric_matrix(N)))
    elif branch == 1:  # signed permutation
        perm = draw(st.permutations(list(range(N))))
        U = fmpq_mat(N, N)
        for i, p in enumerate(perm):
            U[i, p] = draw(st.sampled_from((1, -1)))
    else:
        U = draw(invertible(N))
    return _inputs().OrthoInput(L, U)


def _diag(xs: list[fmpq]) -> fmpq_mat:
    D = fmpq_mat(len(xs), len(xs))
    for i, x in enumerate(xs):
        D[i, i] = x
    return D


@st.composite
def fiber_input(draw, max_dim: int, family: str | None = None):
    """``matrix_fiber``: L with a candidate S = H + P (face d) or S = H − P (face c).  Usually a
    true decomposition in a rational orthonormal basis U (H = U diag(h) Uᵀ with h symmetric about
    0, P = U diag(p) Uᵀ with p >= 0 -- sometimes with a negative entry), L = S + T with T
    antisymmetric; otherwise H, P free symmetric matrices."""
    N = draw(st.integers(1, max_dim))
    face = draw(st.sampled_from(("d", "c")))
    if draw(st.integers(0, 3)) == 3:
        H, P = draw(_cached(symmetric_matrix, N)), draw(_cached(symmetric_matrix, N))
    else:
        U = _cayley(draw(_cached(antisymmetric_matrix, N)))
        vals = _flat(draw, N)
        h: list[fmpq] = []
        for i in range(N // 2):
            h += [vals[i], -vals[i]]
        h += [fmpq(0)] * (N - len(h))
        p = [abs(x) for x in _flat(draw, N)]
        if draw(st.integers(0, 4)) == 4:
            p[draw(st.integers(0, N - 1))] = fmpq(-1)
        H, P = U * _diag(h) * U.transpose(), U * _diag(p) * U.transpose()
    S = H + P if face == "d" else H - P
    L = S + draw(_cached(antisymmetric_matrix, N))
    return _inputs().FiberInput(L, face, H, P)


@st.composite
def subspace_input(draw, max_dim: int, family: str | None = None):
    """``matrix_subspace``: L, a bound n (0 <= n <= N) and a basis V (k independent rows) of a
    subspace; half of the time S = AᵀA + (antisymmetric), so that S is often positive definite
    on V."""
    N = draw(st.integers(1, max_dim))
    if draw(st.booleans()):
        A = draw(_cached(rect, draw(st.integers(1, N)), N))
        L = A.transpose() * A + draw(_cached(antisymmetric_matrix, N))
    else:
        L = draw(matrix_of_size(N, family))
    k = draw(st.integers(1, N))
    V = draw(_cached(rect, k, N))
    assume(V.rank() == k)
    return _inputs().SubspaceInput(L, draw(st.integers(0, N)), V)


@st.composite
def family_input(draw, max_dim: int, family: str | None = None):
    """``family``: N vectors of length N (rows of v) and an index set s; usually v_i for i in s
    are rows of a rational orthogonal matrix (orthonormal), the others free; sometimes every row
    is free."""
    N = draw(st.integers(1, max_dim))
    mask = draw(st.integers(0, 2 ** N - 1))
    s = tuple(i for i in range(N) if mask >> i & 1)
    v = draw(_cached(rect, N, N))
    if draw(st.integers(0, 3)) != 3:
        U = _cayley(draw(_cached(antisymmetric_matrix, N)))
        for i in s:
            for j in range(N):
                v[i, j] = U[i, j]
    return _inputs().FamilyInput(v, s)


@st.composite
def unit_vector(draw, m: int) -> list[fmpq]:
    """A rational unit vector of length m: the inverse stereographic projection
    (2t, |t|² − 1)/(|t|² + 1) of a rational t, with signs and a cyclic shift."""
    if m == 1:
        return [fmpq(draw(st.sampled_from((1, -1))))]
    t = [fmpq(x, draw(st.sampled_from((1, 2)))) for x in (_zigzag(b, 3) for b in draw(_binary(m - 1)))]
    r = sum((x * x for x in t), fmpq(0))
    out = [2 * x / (r + 1) for x in t] + [(r - 1) / (r + 1)]
    k = draw(st.integers(0, m - 1))
    return out[k:] + out[:k]


@st.composite
def rank_one_input(draw, max_dim: int, family: str | None = None):
    """``rank_one``: vectors u, v and a scalar s (L = s·u vᵀ); u, v usually rational unit vectors,
    s usually positive -- each sometimes not, for probing hu, hv, hs."""
    N = draw(st.integers(1, max_dim))

    def vec():
        if draw(st.integers(0, 3)) == 3:
            return [x for x in draw(_cached(rect, 1, N)).entries()]
        return draw(unit_vector(N))

    u, v = vec(), vec()
    s = fmpq(draw(st.sampled_from((1, 2, fmpq(1, 2), 3, 0, -1, -2))))
    return _inputs().RankOneInput(tuple(u), tuple(v), s)


@st.composite
def theta_point_input(draw, max_dim: int, family: str | None = None):
    """``theta_point``: a size N and p = ((1 − t²)/2, (1 − t²)/2, t₊², t₋²) for a rational
    t ∈ [−1, 1] (a point of Θ), or a rational point of the simplex (usually off Θ)."""
    N = draw(st.integers(1, max_dim))
    if draw(st.integers(0, 2)) != 2:
        den = draw(st.integers(1, 5))
        t = fmpq(draw(st.integers(-den, den)), den)
        p = (1 - t * t) / 2
        pt = (p, p, t * t if t > 0 else fmpq(0), t * t if t < 0 else fmpq(0))
    else:
        w = [draw(st.integers(0, 3)) for _ in range(4)]
        assume(sum(w) > 0)
        pt = tuple(fmpq(x, sum(w)) for x in w)
    return _inputs().ThetaPointInput(pt, N)


# laws -------------------------------------------------------------------


def _B():
    from ..math import baselines as B

    return B


@st.composite
def mean_zero_two_point(draw):
    """{a: b/(b−a), b: −a/(b−a)} with integers a < 0 < b: mean zero, no atom
    at 0; symmetric iff a = −b."""
    B = _B()
    a = -draw(st.integers(1, 3))
    b = draw(st.integers(1, 3))
    return B.FiniteLaw.from_mapping({a: fmpq(b, b - a), b: fmpq(-a, b - a)})


@st.composite
def finite_law(draw, max_atoms: int = 3):
    """A general finite law: up to ``max_atoms`` integer atoms in [-2, 2] with
    positive integer weights (normalised)."""
    B = _B()
    k = draw(st.integers(1, max_atoms))
    vals = draw(st.lists(st.integers(-2, 2), min_size=k, max_size=k, unique=True))
    ws = draw(st.lists(st.integers(1, 3), min_size=k, max_size=k))
    tot = sum(ws)
    return B.FiniteLaw.from_mapping({v: fmpq(w, tot) for v, w in zip(vals, ws)})


@st.composite
def gaussian_law(draw):
    B = _B()
    v = draw(st.sampled_from((0, 1, 2, fmpq(1, 4))))
    m = draw(st.sampled_from((0, 1, -1)))
    return B.GaussianLaw(fmpq(v), fmpq(m))


@st.composite
def centered_gaussian(draw):
    B = _B()
    return B.GaussianLaw(fmpq(draw(st.sampled_from((0, 1, 2, fmpq(1, 4))))))


def any_law() -> st.SearchStrategy:
    """Mean-zero two-point laws first (shrink target), then Gaussians, then
    general finite laws."""
    return st.one_of(mean_zero_two_point(), gaussian_law(), finite_law())


def _enumerable(inp) -> bool:
    """Keep exact enumeration cheap: at most 3 atoms and (qk) n*N <= 4 for
    3-atom laws, n*N <= 6 for 2-atom laws."""
    B = _B()
    laws = inp.all_laws()
    fin = [B.as_finite(l) for l in laws]
    if any(f is None for f in fin):
        return True  # Monte Carlo
    k = max(len(f.atoms) for f in fin)
    if inp.model == "iid":
        return k <= 3
    return inp.n * inp.N <= (6 if k <= 2 else 4)


@st.composite
def law_input(draw, model: str, max_dim: int = 3, drop: str | None = None):
    """LawInput for ``model`` ('iid' or 'qk'); N <= min(max_dim, 3).
    ``drop == "n_le_N"``: qk inputs with n in {N+1, N+2} and nondegenerate
    centered Gaussian laws (the other hypotheses of Proposition 5)."""
    from ..io.inputs import LawInput

    Nmax = max(1, min(max_dim, 3))
    N = draw(st.integers(1, Nmax))
    if model == "qk" and drop == "n_le_N":
        n = N + draw(st.integers(1, 2))
        nondeg = st.sampled_from((1, 2, fmpq(1, 4))).map(lambda v: _B().GaussianLaw(fmpq(v)))
        return LawInput("qk", N, n=n, law_K=draw(nondeg), law_Q=draw(nondeg))
    if draw(st.integers(0, 5)) == 0:   # dependent entries (copies): what hIndep / hindep exclude
        return draw(_dependent_law_input(model, N))
    if model == "iid":
        branch = draw(st.integers(0, 5))
        if branch < 4:
            return LawInput("iid", N, law=draw(any_law()))
        # independent, not identically distributed entries
        cell = centered_gaussian() if branch == 4 else st.one_of(mean_zero_two_point(), finite_law())
        grid = tuple(tuple(draw(cell) for _ in range(N)) for _ in range(N))
        return LawInput("iid", N, grid=grid)
    n = draw(st.integers(1, N + 1))
    branch = draw(st.integers(0, 2))
    if branch == 0:
        law = draw(any_law())
        inp = LawInput("qk", N, n=n, law_K=law, law_Q=law)
    elif branch == 1:
        inp = LawInput("qk", N, n=n, law_K=draw(any_law()), law_Q=draw(any_law()))
    else:
        inp = LawInput("qk", N, n=n, law_K=draw(centered_gaussian()), law_Q=draw(centered_gaussian()))
    from hypothesis import assume

    assume(_enumerable(inp))
    return inp


@st.composite
def _dependent_law_input(draw, model: str, N: int):
    """Dependent entries by copies (sampling branch): iid L_ji = L_ij for every i < j (L symmetric), or
    qk W_Q = W_K (a tied head, L = W_Kᵀ W_K) -- both decided exactly (E[‖S‖²/‖L‖²] = P(L ≠ 0)) for
    any laws, Gaussian ones included."""
    from ..io.inputs import LawInput

    law = draw(st.one_of(mean_zero_two_point(), centered_gaussian()))
    if model == "iid":
        N = max(N, 2)
        cps = tuple((("L", j, i), ("L", i, j), 1) for i in range(N) for j in range(i + 1, N))
        return LawInput("iid", N, law=law, copies=cps)
    n = draw(st.integers(1, N))
    cps = tuple((("W_Q", r, c), ("W_K", r, c), 1) for r in range(n) for c in range(N))
    return LawInput("qk", N, n=n, law_K=law, law_Q=law, copies=cps)


@st.composite
def law_kind_input(draw, max_dim: int, family: str | None = None):
    """``law``: an iid or a qk random-matrix model (:func:`law_input`)."""
    return draw(law_input(draw(st.sampled_from(("iid", "qk"))), max_dim))


# ---------------------------------------------------------------------------
# strategies by input kind


#: input kind -> factory(max_dim, family) -> SearchStrategy of inputs of that kind
KIND_STRATEGIES: dict[str, Callable[[int, str | None], st.SearchStrategy]] = {
    "matrix": matrix_input,
    "matrix_bound": matrix_bound_input,
    "head": head_input,
    "matrix_pair": orthogonal_input,
    "matrix_fiber": fiber_input,
    "matrix_subspace": subspace_input,
    "family": family_input,
    "rank_one": rank_one_input,
    "theta_point": theta_point_input,
    "law": law_kind_input,
    "vector": vector_input,
    "matrix_spectrum": matrix_spectrum_input,
    "forms": forms_input,
}


def register_kind_strategy(kind: str, factory: Callable[[int, str | None], st.SearchStrategy]) -> None:
    """Draw inputs of ``kind`` with ``factory(max_dim, family)`` (replaces a registered one)."""
    KIND_STRATEGIES[kind] = factory


_RATIONAL = re.compile(r"^-?[0-9]+(/[0-9]+)?$")
_SMALL = ("0", "1", "-1", "2", "1/2", "-2", "3")


def _leaves(doc, path=()):
    """Paths of the numeric leaves of a JSON document (rational strings, integers), ``kind`` aside."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k != "kind":
                yield from _leaves(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _leaves(v, path + (i,))
    elif (isinstance(doc, str) and _RATIONAL.match(doc)) or (isinstance(doc, int) and not isinstance(doc, bool)):
        yield path


def reread(doc: dict):
    """An input from its certificate form (``to_json2``), as ``qkverify check`` reads a file;
    QKInputError when the document is not a valid input of its kind."""
    from ..io.inputs import input_from_document

    inp = input_from_document(doc, "law" if doc.get("kind") == "law" else None, "mutated input")
    if getattr(inp, "kind2", None) != doc.get("kind"):
        raise QKInputError(f"mutated input: read back as {getattr(inp, 'kind2', None)}, not {doc.get('kind')}")
    return inp


@st.composite
def mutated_documents(draw, docs: tuple[str, ...]):
    """An input from one of ``docs`` (canonical JSON of certificate inputs) with up to two numeric
    entries replaced -- a rational by 0, ±1, 2, 1/2, −2 or 3, an integer (a size, an index) by 0,
    1, 2 or a neighbour -- re-read and validated by the input reader; the generic strategy for an
    input kind without a builder of its own."""
    import json

    doc = json.loads(draw(st.sampled_from(docs)))
    leaves = list(_leaves(doc))
    for _ in range(draw(st.integers(0, min(2, len(leaves))))):
        path = draw(st.sampled_from(leaves))
        box = doc
        for k in path[:-1]:
            box = box[k]
        old = box[path[-1]]
        if isinstance(old, int):  # sizes and indices: small values and the neighbours
            box[path[-1]] = draw(st.sampled_from((0, 1, 2, max(old - 1, 0), old + 1)))
        else:
            box[path[-1]] = draw(st.sampled_from(_SMALL))
    try:
        return reread(doc)
    except QKInputError:
        assume(False)


def strategy_for_kind(kind: str, max_dim: int = 4, family: str | None = None,
                      seeds: tuple | list = ()) -> st.SearchStrategy | None:
    """Inputs of ``kind``: its builder (:data:`KIND_STRATEGIES`), else mutations of the ``seeds``
    of that kind (inputs with a ``to_json2`` form, e.g. the audit suite's), else None.  Raises
    QKInputError for an unknown family or a bad max_dim."""
    import json

    _check_family(family)
    _check_dim(max_dim)
    if kind in KIND_STRATEGIES:
        return KIND_STRATEGIES[kind](max_dim, family)
    docs = []
    for inp in seeds:
        if getattr(inp, "kind2", None) == kind and hasattr(inp, "to_json2"):
            docs.append(json.dumps(inp.to_json2(), sort_keys=True))
    if docs:
        return mutated_documents(tuple(sorted(set(docs))))
    return None
