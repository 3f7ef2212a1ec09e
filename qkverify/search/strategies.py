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

Inputs by ``Claim.input_kind``: ``matrix``/``symmetric`` -> MatrixInput,
``matrix_n`` -> MatrixInput with a head dimension n (1 <= n <= N),
``head`` -> HeadInput (n <= N; ``--family general`` also allows n > N),
``orthogonal`` -> OrthoInput (U rational orthogonal, or -- last branch,
for probing -- an invertible non-orthogonal U), ``law`` -> LawInput of the
model the claim needs (qkverify.claims.laws.LAW_MODELS).

All strategies are deterministic functions of Hypothesis's choice sequence,
so a run is reproducible from its seed.
"""

from __future__ import annotations

import functools
from typing import Callable

from flint import fmpq, fmpq_mat
from hypothesis import strategies as st

from ..errors import QKInputError

FAMILIES = ("general", "symmetric", "antisymmetric", "low_rank", "rank_one", "ties", "heads")

#: strategies registered for individual claims (user conjectures, tests):
#: claim id -> callable(max_dim, family) -> SearchStrategy
CLAIM_STRATEGIES: dict[str, Callable[[int, str | None], st.SearchStrategy]] = {}


def register_strategy(claim_id: str, factory: Callable[[int, str | None], st.SearchStrategy] | st.SearchStrategy) -> None:
    """Use ``factory(max_dim, family)`` (or a fixed strategy) to generate inputs
    for ``claim_id`` instead of the input-kind default."""
    if isinstance(factory, st.SearchStrategy):
        fixed = factory
        CLAIM_STRATEGIES[claim_id] = lambda max_dim, family: fixed
    else:
        CLAIM_STRATEGIES[claim_id] = factory


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
# claim inputs by kind


def _inputs():
    from ..io import inputs as I

    return I


@st.composite
def matrix_input(draw, max_dim: int, family: str | None = None):
    return _inputs().MatrixInput(draw(square_matrix(max_dim, family)))


@st.composite
def symmetric_input(draw, max_dim: int, family: str | None = None):
    L = draw(square_matrix(max_dim, family or "symmetric"))
    return _inputs().MatrixInput((L + L.transpose()) * fmpq(1, 2))


@st.composite
def matrix_n_input(draw, max_dim: int, family: str | None = None):
    L = draw(square_matrix(max_dim, family))
    n = draw(st.integers(1, L.nrows()))
    return _inputs().MatrixInput(L, n)


@st.composite
def head_input(draw, max_dim: int, family: str | None = None):
    """(W_Q, W_K) with 1 <= n <= N (n <= N + 1 when family == 'general',
    so that a hypothesis n <= N can be dropped)."""
    N = draw(st.integers(1, max_dim))
    top = N + 1 if family == "general" else N
    n = draw(st.integers(1, top))
    if family in ("rank_one", "low_rank"):
        # degenerate heads: W_Q, W_K with few independent rows
        u = draw(_cached(rect, 1, N))
        cK = draw(_cached(rect, n, 1))
        cQ = draw(_cached(rect, n, 1))
        WK, WQ = cK * u, cQ * draw(_cached(rect, 1, N))
    else:
        WQ = draw(_cached(rect, n, N))
        WK = draw(_cached(rect, n, N))
    return _inputs().HeadInput(WQ, WK)


@st.composite
def orthogonal_input(draw, max_dim: int, family: str | None = None):
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
    else:  # invertible, usually not orthogonal (for probing U_orthogonal)
        U = draw(rect(N, N).filter(lambda M: M.det() != 0))
    return _inputs().OrthoInput(L, U)


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


# ---------------------------------------------------------------------------


def strategy_for(claim, max_dim: int = 4, family: str | None = None, drop: str | None = None) -> st.SearchStrategy:
    """The input strategy for ``claim`` (a registry Claim).

    A strategy registered with :func:`register_strategy` wins; otherwise the
    claim's ``input_kind`` decides.  ``drop`` (a hypothesis the probes drop)
    lets the law strategies aim at inputs violating it (n > N for
    ``n_le_N``).  Raises QKInputError for an unknown family, a bad max_dim,
    or an input kind without a strategy.
    """
    _check_family(family)
    _check_dim(max_dim)
    if claim.id in CLAIM_STRATEGIES:
        return CLAIM_STRATEGIES[claim.id](max_dim, family)
    kind = claim.input_kind
    if kind == "matrix":
        return matrix_input(max_dim, family)
    if kind == "symmetric":
        return symmetric_input(max_dim, family)
    if kind == "matrix_n":
        return matrix_n_input(max_dim, family)
    if kind == "head":
        return head_input(max_dim, family)
    if kind == "orthogonal":
        return orthogonal_input(max_dim, family)
    if kind == "law":
        from ..claims.laws import LAW_MODELS

        return law_input(LAW_MODELS.get(claim.id, "iid"), max_dim, drop)
    raise QKInputError(f"no search strategy for input kind {kind!r} (claim {claim.id})")
