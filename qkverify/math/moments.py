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


# -- traces through exact inverses (Lemma 9 part 3, Lemma 10) -------------------


def trace_stats(X: fmpq_mat, s: fmpq) -> tuple[Quad, Quad, Quad, fmpq_mat]:
    """For A = X/√s: tr(A(1 − A²)⁻¹), tr(A²(1 − A²)⁻¹), tr((1 − A)⁻¹) and the exact inverse
    Y = (sI − X²)⁻¹ they are read from: (1 − A²)⁻¹ = s·Y, (1 − A)⁻¹ = (1 + A)(1 − A²)⁻¹, so
    the traces are √s·tr(XY), tr(X²Y), s·tr(Y) + √s·tr(XY).  ZeroDivisionError when
    sI − X² is singular."""
    n = X.nrows()
    Id = fmpq_mat(n, n, [int(i == j) for i in range(n) for j in range(n)])
    M = Id * s - X * X
    if M.det() == 0:
        raise ZeroDivisionError("sI − X² is singular")
    Y = M.inv()
    tr = lambda Z: sum((Z[i, i] for i in range(n)), fmpq(0))  # noqa: E731
    r = Quad(0, 1, s)
    a = tr(X * Y)
    return r * a, Quad(tr(X * X * Y)), s * tr(Y) + r * a, Y


# -- the moment series (Lemma 9 part 1) ------------------------------------------


def series_terms(x: Vec, digits: int) -> int:
    """The number K of terms after which the tail bound n·ρ^K/(1 − ρ), ρ = max x_i² < 1,
    is at most 10^−digits (ValueError when some |x_i| ≥ 1)."""
    rho = max((as_rational(q(t) * q(t), "x_i²") for t in x), default=fmpq(0))
    if rho >= 1:
        raise ValueError("some |x_i| ≥ 1: the moment series do not converge")
    tol, K = fmpq(1, 10**digits), 0
    while len(x) * rho**K > tol * (1 - rho):
        K += 1
    return K


def series_tail(x: Vec, K: int) -> fmpq:
    """The tail bound n·ρ^K/(1 − ρ) of both moment series after K terms (|x_i|^{2k+1} ≤ ρ^k
    and |x_i|^{2k+2} ≤ ρ^k for |x_i| < 1)."""
    rho = max((as_rational(q(t) * q(t), "x_i²") for t in x), default=fmpq(0))
    return len(x) * rho**K / (1 - rho)


def series_partial(x: Vec, K: int, odd: bool, bits: int = 256) -> arb:
    """Σ_{k<K} Σ_i x_i^(2k+1) (odd) or x_i^(2k+2) (even), as a ball computed at ``bits``."""
    with ctx.workprec(bits):
        total = arb(0)
        for t in x:
            xa = q(t).to_arb(bits)
            r = (q(t) * q(t)).to_arb(bits)
            term, acc = (xa if odd else r), arb(0)
            for _ in range(K):
                acc += term
                term *= r
            total += acc
        return total


def exact_rational_or_none(v: Quad) -> fmpq | None:
    return v.a if v.is_rational else None


__all__ = ["Quad", "normalized", "lam_plus", "lam_minus", "imbalance", "stat_c", "pairing_sq", "pairing_score",
           "iota", "mem_lambda", "stat_o", "stat_e", "stat_r", "power_sums", "root_sum", "stats_from_charpoly",
           "trace_stats", "series_terms", "series_tail", "series_partial", "rational_sqrt"]
