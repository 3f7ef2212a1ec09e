"""Theorem 5 (accumulation) and Lemma 6 (proportional lobes): the limit profile, the
function b(ρ) = 2ρ/(1 + ρ²), and the sampled lobes of the empirical study.

Lean: ``Appendices.MainText.limitProfile``, ``limitB``, ``projP``, ``profile_of_spectrum``,
``accumulation_estimates`` (MainText/Accumulation.lean), ``Appendices.proportional_lobes``
(RandomMatrices/ProportionalLobes.lean).

Sampling is deterministic and exact up to the transcendental inverse CDF: the i-th
uniform is U = (2k + 1)/2^54 with k = ``random.Random(seed).getrandbits(53)`` (Python's
Mersenne Twister, identical on every machine), X = F⁻¹(U) is a certified arb ball, and
the order of the samples is decided exactly from the rationals U (F⁻¹ is monotone).
X_i and X'_i are drawn alternately from one stream, so the first n samples are nested
in n as in Lean (the first n terms of the sequences X and X').

Laws (γ on (0, ∞) unless stated):

* ``exponential`` (rate λ): X = −log(U)/λ, E[X²] = 2/λ²;
* ``gamma`` (integer shape k, scale θ): X = −θ·log(U_1···U_k) (a sum of k exponentials),
  E[X²] = k(k + 1)θ²;
* ``uniform`` on [lo, hi], 0 ≤ lo < hi: X = lo + (hi − lo)U exactly, E[X²] = (lo² + lo·hi + hi²)/3;
* ``pareto`` (scale x_m > 0, shape α): X = x_m·U^(−1/α), heavy-tailed, E[X²] = αx_m²/(α − 2)
  for α > 2 and infinite otherwise.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from flint import arb, ctx, fmpq, fmpq_mat

from ..errors import QKInputError

#: working precision (bits) of the sampled balls
SAMPLE_BITS = 128
#: a uniform is U = k/2^U_BITS with k odd
U_BITS = 54
FAMILIES = ("exponential", "gamma", "uniform", "pareto")


@dataclass(frozen=True)
class PositiveLaw:
    """A law γ of the study: ``family`` and exact rational parameters."""

    family: str
    params: tuple[tuple[str, fmpq], ...]

    def p(self, name: str) -> fmpq:
        return dict(self.params)[name]

    @property
    def uniforms_per_sample(self) -> int:
        return int(self.p("shape")) if self.family == "gamma" else 1

    def positive(self) -> bool:
        """γ((−∞, 0]) = 0."""
        if self.family == "uniform":
            return self.p("lo") >= 0
        return True

    def second_moment(self) -> fmpq | None:
        """∫ y² dγ exactly, None when infinite."""
        f = self.family
        if f == "exponential":
            return 2 / self.p("rate") ** 2
        if f == "gamma":
            k = self.p("shape")
            return k * (k + 1) * self.p("scale") ** 2
        if f == "uniform":
            a, b = self.p("lo"), self.p("hi")
            return (a * a + a * b + b * b) / 3
        a, xm = self.p("shape"), self.p("scale")
        return a * xm * xm / (a - 2) if a > 2 else None

    def key(self, ks: list[int]) -> int:
        """An integer increasing in the sample, from the odd numerators k of U = k/2^54:
        the exact order of the samples (F⁻¹ is monotone)."""
        if self.family == "uniform":
            return ks[0]
        prod = 1
        for k in ks:
            prod *= k
        return -prod  # exponential, gamma, Pareto decrease in U

    def sample(self, ks: list[int]) -> arb:
        """F⁻¹ of the uniforms U = k/2^54 as a ball (at the caller's precision)."""
        f = self.family
        logs = [arb(k).log() - U_BITS * arb(2).log() for k in ks]  # log U, U = k/2^54
        if f == "uniform":
            a, b = self.p("lo"), self.p("hi")
            return arb(a) + arb(b - a) * arb(ks[0]) / arb(2) ** U_BITS
        if f == "exponential":
            return -logs[0] / arb(self.p("rate"))
        if f == "gamma":
            return -arb(self.p("scale")) * sum(logs, arb(0))
        return arb(self.p("scale")) * (-logs[0] / arb(self.p("shape"))).exp()

    def to_json(self) -> dict:
        out: dict[str, Any] = {"family": self.family}
        for k, v in self.params:
            out[k] = int(v) if k == "shape" and self.family == "gamma" else _qs(v)
        return out

    def label(self) -> str:
        return self.family + "(" + ", ".join(f"{k}={_qs(v)}" for k, v in self.params) + ")"


def _qs(x: fmpq) -> str:
    return str(x.p) if x.q == 1 else f"{x.p}/{x.q}"


def parse_positive_law(doc: Any, where: str = "law") -> PositiveLaw:
    """A law from ``{"family": "exponential", "rate": "1"}`` (see the module docstring) or a
    bare family name with default parameters.  QKInputError naming the problem."""
    from ..exact.rational import parse_rational

    if isinstance(doc, str):
        doc = {"family": doc}
    if not isinstance(doc, dict) or doc.get("family") not in FAMILIES:
        raise QKInputError(f"{where}: a law is {{\"family\": one of {', '.join(FAMILIES)}, …}}")
    fam = doc["family"]
    need = {"exponential": {"rate": 1}, "gamma": {"shape": 2, "scale": 1}, "uniform": {"lo": 0, "hi": 1},
            "pareto": {"scale": 1, "shape": 4}}[fam]
    extra = set(doc) - set(need) - {"family"}
    if extra:
        raise QKInputError(f"{where}: unknown parameter(s) {sorted(extra)} of a {fam} law")
    ps = {k: parse_rational(doc.get(k, d), f"{where}: {k}") for k, d in need.items()}
    if fam == "gamma" and (ps["shape"].q != 1 or not 1 <= ps["shape"] <= 64):
        raise QKInputError(f"{where}: the gamma shape must be an integer from 1 to 64 (a sum of exponentials)")
    if fam == "pareto" and not fmpq(1, 64) <= ps["shape"] <= 1024:
        # X = x_m·U^(−1/α) with U ≥ 2^-54: beyond these the sampler's balls lose every digit
        raise QKInputError(f"{where}: the pareto shape must be between 1/64 and 1024 (what the sampler honours)")
    if fam == "uniform" and not ps["lo"] < ps["hi"]:
        raise QKInputError(f"{where}: a uniform law needs lo < hi")
    if any(v <= 0 for k, v in ps.items() if k != "lo"):
        raise QKInputError(f"{where}: the parameters of a {fam} law must be positive")
    return PositiveLaw(fam, tuple(ps.items()))


def uniforms(seed: int, count: int, per: int) -> list[tuple[list[int], list[int]]]:
    """``count`` pairs (uniforms of X_i, uniforms of X'_i) drawn alternately from one stream,
    each uniform given by the odd numerator k of U = k/2^54."""
    rng = random.Random(seed)
    draw = lambda: [2 * rng.getrandbits(U_BITS - 1) + 1 for _ in range(per)]  # noqa: E731
    out = []
    for _ in range(count):
        a = draw()
        out.append((a, draw()))
    return out


@dataclass
class LobeSample:
    """Sorted lobes for the first n samples: α = sortDesc(v·X_{<n}), β = sortDesc(u·X'_{<n})."""

    n: int
    alpha: list[arb]
    beta: list[arb]


def lobes(law: PositiveLaw, u: fmpq, v: fmpq, seed: int, sizes: list[int], bits: int = SAMPLE_BITS) -> list[LobeSample]:
    """The sorted lobes at each size (nested samples), as balls at ``bits``."""
    nmax = max(sizes)
    draws = uniforms(seed, nmax, law.uniforms_per_sample)
    out = []
    with ctx.workprec(bits):
        X = [(law.key(a), law.sample(a)) for a, _ in draws]
        Xp = [(law.key(b), law.sample(b)) for _, b in draws]
        for n in sorted(sizes):
            sx = sorted(X[:n], key=lambda t: t[0], reverse=True)
            sy = sorted(Xp[:n], key=lambda t: t[0], reverse=True)
            out.append(LobeSample(n, [arb(v) * b for _, b in sx], [arb(u) * b for _, b in sy]))
    return out


def _sq(x: arb) -> arb:
    """x² as a ball (arb's ``**`` is NaN on a ball around 0)."""
    return x * x


def pos(x: arb) -> arb:
    """A ball containing max(x, 0)."""
    return (x + abs(x)) / 2


def delta(s: LobeSample, rho: fmpq, bits: int = SAMPLE_BITS) -> arb:
    """‖β − ρα‖/‖α‖ (Lemma 6's quantity)."""
    with ctx.workprec(bits):
        r = arb(rho)
        num = sum((_sq(b - r * a) for a, b in zip(s.alpha, s.beta)), arb(0))
        den = sum((a * a for a in s.alpha), arb(0))
        return (num / den).sqrt()


def profile_from_lobes(alpha: list, beta: list, bits: int = SAMPLE_BITS) -> list[arb]:
    """π(S) for a symmetric S with eigenvalues α, −β and zeros (``profile_of_spectrum``):
    (0, 2⟨α,β⟩, ‖(α−β)₊‖², ‖(β−α)₊‖²)/(‖α‖² + ‖β‖²)."""
    with ctx.workprec(bits):
        D = sum((a * a for a in alpha), arb(0)) + sum((b * b for b in beta), arb(0))
        B = 2 * sum((a * b for a, b in zip(alpha, beta)), arb(0))
        C = sum((_sq(pos(a - b)) for a, b in zip(alpha, beta)), arb(0))
        Dd = sum((_sq(pos(b - a)) for a, b in zip(alpha, beta)), arb(0))
        return [arb(0), B / D, C / D, Dd / D]


def limit_profile(rho: fmpq) -> list[fmpq]:
    """limitProfile ρ = (0, 2ρ, max(1 − ρ, 0)², max(ρ − 1, 0)²)/(1 + ρ²), exactly."""
    rho = fmpq(rho)
    d = 1 + rho * rho
    return [fmpq(0), 2 * rho / d, max(1 - rho, fmpq(0)) ** 2 / d, max(rho - 1, fmpq(0)) ** 2 / d]


def limit_b(rho: fmpq) -> fmpq:
    """b(ρ) = 2ρ/(1 + ρ²) (Lean ``limitB``)."""
    rho = fmpq(rho)
    return 2 * rho / (1 + rho * rho)


def limit_b_monotone(lo: fmpq, hi: fmpq | None) -> int:
    """+1 (strictly increasing), −1 (strictly decreasing) or 0 (neither, or not decided) for
    b(ρ) = 2ρ/(1 + ρ²) on [lo, hi] (hi None: [lo, ∞)), decided exactly without sympy: with b = p/q,
    b' = (p′q − pq′)/q²; q = 1 + ρ² has no real root (b is continuous), and when the numerator has
    no real root inside (lo, hi) (FLINT's factorisation, isolated roots) its sign there is its sign at
    one interior point.  A numerator root isolated across an end of the interval gives 0.

    >>> limit_b_monotone(fmpq(0), fmpq(1)), limit_b_monotone(fmpq(1), None), limit_b_monotone(fmpq(0), None)
    (1, -1, 0)
    """
    from flint import fmpq_poly, fmpz_poly

    from ..exact.algebraic import real_roots

    p, q = fmpq_poly([0, 2]), fmpq_poly([1, 0, 1])
    num = p.derivative() * q - p * q.derivative()
    if num.is_zero() or real_roots(fmpz_poly([int(c) for c in q.numer().coeffs()])):
        return 0
    for r, _ in real_roots(fmpz_poly([int(c) for c in num.numer().coeffs()])):
        outside = r.hi <= lo or (hi is not None and r.lo >= hi)
        inside = r.lo > lo and (hi is None or r.hi < hi)
        if inside or not outside:
            return 0
    mid = (lo + hi) / 2 if hi is not None else lo + 1
    v = num(mid)
    return (v > 0) - (v < 0)


def distance(s: LobeSample, rho: fmpq, bits: int = SAMPLE_BITS) -> arb:
    """‖π(S_n) − limitProfile(ρ)‖₂ for the sampled S_n (Theorem 5's quantity)."""
    with ctx.workprec(bits):
        p = profile_from_lobes(s.alpha, s.beta, bits)
        return sum((_sq(a - arb(b)) for a, b in zip(p, limit_profile(rho))), arb(0)).sqrt()


def loglog_slope(ns: list[int], vals: list[arb], bits: int = SAMPLE_BITS) -> arb:
    """Least-squares slope of log(value) against log(n), as a ball (empirical trend)."""
    with ctx.workprec(bits):
        xs = [arb(n).log() for n in ns]
        ys = [v.log() for v in vals]
        k = len(xs)
        mx, my = sum(xs, arb(0)) / k, sum(ys, arb(0)) / k
        sxy = sum(((x - mx) * (y - my) for x, y in zip(xs, ys)), arb(0))
        sxx = sum((_sq(x - mx) for x in xs), arb(0))
        return sxy / sxx


def matrix_with_spectrum(values: list, seed: int) -> fmpq_mat:
    """A rational symmetric matrix Q·diag(values)·Qᵀ with a rational orthogonal Cayley Q
    (Q = (I − K)(I + K)⁻¹ for a random rational antisymmetric K), exactly.

    >>> S = matrix_with_spectrum([3, 1, -2], 0)
    >>> S.transpose() == S, [int(c) for c in S.charpoly().coeffs()]
    (True, [6, -5, -2, 1])
    """
    from ..exact.matrix import cayley_orthogonal, random_antisymmetric

    rng = random.Random(seed)
    k = len(values)
    Q = cayley_orthogonal(random_antisymmetric(rng, k))
    D = fmpq_mat(k, k, [fmpq(values[i]) if i == j else 0 for i in range(k) for j in range(k)])
    return Q * D * Q.transpose()


def exact_uniform_lobes(law: PositiveLaw, u: fmpq, v: fmpq, seed: int, n: int) -> tuple[list[fmpq], list[fmpq]]:
    """For a uniform law the samples are rational: v·X_{<n}, u·X'_{<n} exactly (the lobes' entries)."""
    a, b = law.p("lo"), law.p("hi")
    draws = uniforms(seed, n, 1)
    X = [a + (b - a) * fmpq(k[0], 1 << U_BITS) for k, _ in draws]
    Xp = [a + (b - a) * fmpq(k[0], 1 << U_BITS) for _, k in draws]
    return [v * t for t in X], [u * t for t in Xp]


def matrix_cross_check(law: PositiveLaw, u: fmpq, v: fmpq, seed: int, n: int, bits: int = SAMPLE_BITS) -> bool:
    """Build S_n = Q·diag(vX_{<n}, −uX'_{<n})·Qᵀ explicitly (uniform law: rational samples), take its
    profile by Definition 6 (exact eigenvalues) and check that every coordinate lies in the ball
    the lobe formula (profile_of_spectrum) gives for the same sample."""
    from ..math.profile import compute_profile

    xs, ys = exact_uniform_lobes(law, u, v, seed, n)
    S = matrix_with_spectrum(xs + [-t for t in ys], seed)
    exact = [c.exact for c in compute_profile(S, "lean").coords()]
    with ctx.workprec(bits):
        balls = profile_from_lobes([arb(t) for t in sorted(xs, reverse=True)],
                                   [arb(t) for t in sorted(ys, reverse=True)], bits)
        return None not in exact and all(bool(b.contains(arb(e))) for b, e in zip(balls, exact))
