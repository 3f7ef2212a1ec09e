"""Appendices B and C on exact inputs: Λ_m, the lobes λ₊ and λ₋, 𝓘, C, 𝒫, the mirror ι,
the moment statistics O, E, R and their series, and the sums over a spectrum that
Lemma 10 equates with traces.

Lean: ``Appendices.MemLambdaSet``, ``lamPlus``, ``lamMinus``, ``imbalance``, ``statC``,
``pairingScore``, ``iotaMap`` (BalancedBimodalSpectra/Defs.lean), ``statO``, ``statE``,
``statR`` (Moments/Defs.lean).  Vectors are 0-based lists of length 2m as in Lean:
(λ₊)_j = x_{2m−1−j}, (λ₋)_j = −x_j, (ιx)_i = −x_{n−1−i}.  Division follows Lean (x/0 = 0).

Entries are rationals or elements of one field ℚ(√s) (:class:`~qkverify.exact.quadratic.Quad`):
a normalised spectrum λ = μ/‖μ‖ of a rational μ has λ_i = (μ_i/s)·√s with s = ‖μ‖², so
every sum of products of two entries (‖λ₊‖², 𝓘, C, ‖λ₊ − λ₋‖²) is rational and O, R lie
in ℚ(√s).  Everything here is exact.

>>> x = normalized([-3, -1, 2, 2])       # λ = μ/√18
>>> imbalance(x), stat_c(x), pairing_score(x)
(-1/9, 4/9, 2/3)
>>> stat_o(x), stat_e(x)
(-38*sqrt(2)/119, 194/119)
"""

from __future__ import annotations

from typing import Sequence

from flint import arb, ctx, fmpq, fmpq_mat, fmpq_poly

from ..exact.quadratic import Quad, lean_div, rational_sqrt, sqrt_q

Vec = Sequence[Quad]


def q(x) -> Quad:
    """A rational (or Quad) as a Quad."""
    return x if isinstance(x, Quad) else Quad(x)


def normalized(mu: Sequence) -> list[Quad]:
    """μ/‖μ‖ exactly, in ℚ(√s) with s = Σμ² (rational when s is a square).  μ ≠ 0.

    >>> normalized([3, 4])
    [3/5, 4/5]
    """
    mu = [fmpq(m) for m in mu]
    s = sum((m * m for m in mu), fmpq(0))
    if s == 0:
        raise ValueError("the zero vector has no normalisation")
    return [Quad(0, m / s, s) for m in mu]


def half(x: Vec) -> int:
    """m for a vector of length 2m (ValueError for an odd length)."""
    if len(x) % 2:
        raise ValueError(f"a vector of length {len(x)} is not in ℝ^(2m)")
    return len(x) // 2


def lam_plus(x: Vec) -> list[Quad]:
    """(λ₊)_j = x_{2m−1−j}: the top half, reversed (Lean ``lamPlus``)."""
    m = half(x)
    return [q(x[2 * m - 1 - j]) for j in range(m)]


def lam_minus(x: Vec) -> list[Quad]:
    """(λ₋)_j = −x_j (Lean ``lamMinus``)."""
    return [-q(x[j]) for j in range(half(x))]


def dot(u: Vec, v: Vec) -> Quad:
    return sum((q(a) * q(b) for a, b in zip(u, v)), Quad(0))


def sum_sq(u: Vec) -> Quad:
    return dot(u, u)


def imbalance(x: Vec) -> Quad:
    """𝓘(x) = ‖λ₊‖² − ‖λ₋‖² (Lean ``imbalance``)."""
    return sum_sq(lam_plus(x)) - sum_sq(lam_minus(x))


def stat_c(x: Vec) -> Quad:
    """C(x) = ⟨λ₊, λ₋⟩ (Lean ``statC``)."""
    return dot(lam_plus(x), lam_minus(x))


def pairing_sq(x: Vec) -> Quad:
    """‖λ₊ − λ₋‖² (rational for a normalised rational vector)."""
    return sum_sq([a - b for a, b in zip(lam_plus(x), lam_minus(x))])


def as_rational(v: Quad, what: str) -> fmpq:
    if not v.is_rational:
        raise ValueError(f"{what} = {v} is not rational; its square root is out of ℚ(√s)")
    return v.a


def pairing_score(x: Vec) -> Quad:
    """𝒫(x) = 1 − √‖λ₊ − λ₋‖² (Lean ``pairingScore``), exact in ℚ(√q)."""
    return 1 - sqrt_q(as_rational(pairing_sq(x), "‖λ₊ − λ₋‖²"))


def iota(x: Vec) -> list[Quad]:
    """(ιx)_i = −x_{n−1−i} (Lean ``iotaMap``), any length."""
    n = len(x)
    return [-q(x[n - 1 - i]) for i in range(n)]


def mem_lambda(x: Vec) -> bool:
    """x ∈ Λ_m (Lean ``MemLambdaSet``): nondecreasing, Σx² = 1 and x_{m−1} < 0 < x_m
    (0-based; for m = 0 the unit condition already fails).  Odd lengths are not in ℝ^(2m)."""
    if len(x) % 2:
        return False
    m = len(x) // 2
    xs = [q(t) for t in x]
    mono = all(xs[i] <= xs[i + 1] for i in range(len(xs) - 1))
    unit = sum_sq(xs) == 1
    middle = m == 0 or (xs[m - 1].sign() < 0 < xs[m].sign())
    return mono and unit and middle


def stat_o(x: Vec) -> Quad:
    """O(x) = Σ x_i/(1 − x_i²) (Lean ``statO``, x/0 = 0)."""
    return sum((lean_div(q(t), 1 - q(t) * q(t)) for t in x), Quad(0))


def stat_e(x: Vec) -> Quad:
    """E(x) = Σ x_i²/(1 − x_i²) (Lean ``statE``, x/0 = 0)."""
    return sum((lean_div(q(t) * q(t), 1 - q(t) * q(t)) for t in x), Quad(0))


def stat_r(x: Vec) -> Quad:
    """R(x) = Σ 1/(1 − x_i) (Lean ``statR``, x/0 = 0)."""
    return sum((lean_div(Quad(1), 1 - q(t)) for t in x), Quad(0))


# -- sums over the roots of a characteristic polynomial ------------------------


def power_sums(P: fmpq_poly, k: int) -> list[fmpq]:
    """p_0..p_{k−1}, p_j = Σ ν^j over the complex roots ν of P (with multiplicity), by
    Newton's identities on the monic P."""
    c = [x / P.coeffs()[-1] for x in P.coeffs()]
    d = len(c) - 1
    e = lambda i: c[d - i] if 0 <= i <= d else fmpq(0)  # noqa: E731  coefficient of t^{d−i}
    p = [fmpq(d)]
    for j in range(1, k):
        v = -j * e(j)
        for i in range(1, j):
            v -= e(i) * p[j - i]
        p.append(v)
    return p


def root_sum(P: fmpq_poly, g: fmpq_poly, h: fmpq_poly) -> fmpq:
    """Σ g(ν)/h(ν) over the roots ν of P with multiplicity, exactly: the trace of
    g·h⁻¹ in ℚ[t]/(P).  ValueError when h vanishes at a root of P."""
    d, u, _ = h.xgcd(P)          # d = u·h + v·P
    if d.degree() != 0:
        raise ValueError("the denominator vanishes at a root")
    w = (g * u / d) % P
    ps = power_sums(P, max(P.degree(), 1))
    return sum((cf * ps[i] for i, cf in enumerate(w.coeffs())), fmpq(0))


def stats_from_charpoly(P: fmpq_poly, s: fmpq) -> tuple[Quad, Quad, Quad]:
    """(O, E, R) of the vector ν/√s, ν running over the roots of P: with h = s − t²,
    O = √s·Σν/h(ν), E = Σν²/h(ν), R = Σ(s + √s·ν)/h(ν) (each term of R is
    √s/(√s − ν), rationalised).  ValueError when some ν² = s (a term with a zero
    denominator in Lean)."""
    t, one = fmpq_poly([0, 1]), fmpq_poly([1])
    h = fmpq_poly([s, 0, -1])
    r = Quad(0, 1, s)
    a, b, c = root_sum(P, t, h), root_sum(P, t * t, h), root_sum(P, one, h)
    return r * a, Quad(b), s * c + r * a


# -- traces through exact inverses, Lean's A⁻¹ = 0 for a singular A (Lemma 9 part 3, Lemma 10) --


def _identity(n: int) -> fmpq_mat:
    return fmpq_mat(n, n, [int(i == j) for i in range(n) for j in range(n)])


def lean_inverse(M: fmpq_mat) -> tuple[fmpq_mat | None, list[fmpq] | None]:
    """Mathlib's ``M⁻¹`` of a square rational matrix with its witness: (M⁻¹, None) when M is
    invertible, (None, v) with v ≠ 0, M·v = 0 when it is singular (then Lean's M⁻¹ is the zero
    matrix, ``Matrix.nonsing_inv_apply_not_isUnit``).

    >>> Y, v = lean_inverse(fmpq_mat([[1, 0], [0, 0]]))
    >>> Y is None and v[0] == 0 and v[1] != 0
    True
    """
    if M.det() != 0:
        return M.inv(), None
    B, _ = M.numer_denom()
    X, k = B.nullspace()
    v = [fmpq(X[i, 0]) for i in range(M.nrows())]
    return None, v


def trace_stats(X: fmpq_mat, s: fmpq) -> dict:
    """For A = X/√s (s > 0 rational, X rational square), with Lean's inverse (0 when singular):
    ``O`` = tr(A(1 − A²)⁻¹), ``E`` = tr(A²(1 − A²)⁻¹), ``R`` = tr((1 − A)⁻¹), exact in ℚ(√s), and
    the ``witnesses`` they are read from.

    * 1 − A² = (sI − X²)/s, so (1 − A²)⁻¹ = s·Y with Y = (sI − X²)⁻¹ (rational), or 0 when
      sI − X² is singular: O = √s·tr(XY), E = tr(X²Y).
    * When √s = r is rational, (1 − A)⁻¹ = r·(rI − X)⁻¹ (rational, or 0 when rI − X is singular).
      When √s is irrational, √sI − X is invertible exactly when sI − X² is (its Galois conjugate
      −√sI − X is invertible with it, and (√sI − X)(√sI + X) = sI − X²), and then
      (√sI − X)⁻¹ = (√sI + X)·Y: R = s·tr(Y) + √s·tr(XY), else R = 0.

    Witnesses: ``{"of": "sI_minus_X2", "inverse": Y}`` or ``{"of": …, "null": v}`` (a nonzero
    v with (sI − X²)v = 0), and for a rational √s the same for ``rI_minus_X``.

    >>> st = trace_stats(fmpq_mat([[0, 0], [0, 1]]), fmpq(1))    # S = diag(0, 1): 1 − S singular
    >>> st["R"], st["O"], st["E"]
    (0, 0, 0)
    >>> trace_stats(fmpq_mat([[1, 0], [0, 2]]), fmpq(16))["R"]  # A = diag(1/4, 1/2): 4/3 + 2
    10/3
    """
    n = X.nrows()
    Id = _identity(n)
    tr = lambda Z: sum((Z[i, i] for i in range(n)), fmpq(0))  # noqa: E731
    Y, v = lean_inverse(Id * s - X * X)
    wit = [{"of": "sI_minus_X2", "inverse": Y} if Y is not None else {"of": "sI_minus_X2", "null": v}]
    r = Quad(0, 1, s)
    if Y is None:
        O = E = Quad(0)
    else:
        O, E = r * tr(X * Y), Quad(tr(X * X * Y))
    rq = rational_sqrt(s)
    if rq is not None:
        Z, w = lean_inverse(Id * rq - X)
        wit.append({"of": "rI_minus_X", "inverse": Z} if Z is not None else {"of": "rI_minus_X", "null": w})
        R = Quad(rq * tr(Z)) if Z is not None else Quad(0)
    else:
        R = Quad(0) if Y is None else s * tr(Y) + r * tr(X * Y)
    return {"O": O, "E": E, "R": R, "witnesses": wit}


# -- the moment series (Lemma 9 part 1): Lean's tsum, in closed form ----------------------


def summable_abs_moments(x: Vec) -> bool:
    """Whether k ↦ Σ_i |x_i|^(2k+1) (and k ↦ Σ_i |x_i|^(2k+2)) is summable: exactly when every
    |x_i| < 1 (an entry with |x_i| ≥ 1 adds a term ≥ 1 at every k, so the terms do not tend to 0).

    >>> summable_abs_moments([fmpq(1, 2), fmpq(-1, 3)]), summable_abs_moments([fmpq(1, 2), fmpq(1)])
    (True, False)
    """
    return all(abs(q(t)) < 1 for t in x)


def tsum_even_moments(x: Vec) -> tuple[bool, Quad]:
    """Lean's ``∑' k, ∑ i, x i ^ (2 * (k + 1))``: (summable, value).  The terms are ≥ 0, so the
    family is summable exactly when every |x_i| < 1, and then its sum is the geometric closed form
    Σ_i x_i²/(1 − x_i²); otherwise Lean's ``tsum`` is 0 (``tsum_eq_zero_of_not_summable``).

    >>> tsum_even_moments([fmpq(1, 2), fmpq(1)])    # not summable: Lean's sum is 0
    (False, 0)
    >>> tsum_even_moments([fmpq(1, 2), fmpq(-1, 3)])
    (True, 11/24)
    """
    if not summable_abs_moments(x):
        return False, Quad(0)
    return True, sum((q(t) * q(t) / (1 - q(t) * q(t)) for t in x), Quad(0))


def tsum_odd_moments(x: Vec) -> tuple[bool, Quad]:
    """Lean's ``∑' k, ∑ i, x i ^ (2 * k + 1)``: (summable, value).  Grouping the entries by their
    absolute value r, the k-th term is Σ_r (n₊(r) − n₋(r))·r^(2k+1) (n± the entries equal to ±r).
    It is summable exactly when n₊(r) = n₋(r) for every r ≥ 1 (the largest r ≥ 1 with a nonzero
    coefficient would dominate, so the terms would not tend to 0); then the sum is
    Σ_{|x_i|<1} x_i/(1 − x_i²).  Otherwise Lean's ``tsum`` is 0.

    >>> tsum_odd_moments([fmpq(2)])                  # 2^(2k+1): not summable
    (False, 0)
    >>> tsum_odd_moments([fmpq(-2), fmpq(2), fmpq(1, 2)])   # ±2 cancel term by term
    (True, 2/3)
    """
    big: dict = {}
    for t in x:
        a = abs(q(t))
        if a >= 1:
            key = next((k for k in big if k == a), a)
            big[key] = big.get(key, 0) + q(t).sign()
    if any(c != 0 for c in big.values()):
        return False, Quad(0)
    return True, sum((q(t) / (1 - q(t) * q(t)) for t in x if abs(q(t)) < 1), Quad(0))


def exact_rational_or_none(v: Quad) -> fmpq | None:
    return v.a if v.is_rational else None


__all__ = ["Quad", "normalized", "lam_plus", "lam_minus", "imbalance", "stat_c", "pairing_sq", "pairing_score",
           "iota", "mem_lambda", "stat_o", "stat_e", "stat_r", "power_sums", "root_sum", "stats_from_charpoly",
           "trace_stats", "lean_inverse", "summable_abs_moments", "tsum_even_moments", "tsum_odd_moments",
           "rational_sqrt"]
