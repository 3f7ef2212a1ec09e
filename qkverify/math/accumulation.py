"""Theorem 5 (accumulation) and Lemma 6 (proportional lobes): the limit profile, the
function b(ρ) = 2ρ/(1 + ρ²), and the sampled lobes of the empirical study.

Lean: ``Appendices.MainText.limitProfile``, ``limitB``, ``projP``, ``profile_of_spectrum``,
``accumulation_estimates`` (MainText/Accumulation.lean), ``Appendices.proportional_lobes``
(RandomMatrices/ProportionalLobes.lean).

Sampling (sampler ``mt19937-lobes/2``, docs/CERTIFICATES.md) is deterministic and exact up
to the transcendental inverse CDF: the seed is derived from the input
(:func:`qkverify.math.montecarlo.derive_seed`), one stream ``random.Random(seed)`` gives the
uniforms U = (2k + 1)/2^54 with k = ``getrandbits(53)``, path after path; within a path, the
uniforms of X_i then those of X'_i for i = 0, 1, …, n_max − 1 (so the first n samples are
nested in n, as in Lean: the first n terms of the sequences X and X').  X = F⁻¹(U) is a
certified arb ball; sorted lists are enclosed order statistic by order statistic (the i-th
largest of a set of balls lies between the i-th largest lower end and the i-th largest upper
end), so no order has to be decided.

Laws (γ on (0, ∞) unless stated):

* ``exponential`` (rate λ): X = −log(U)/λ, E[X²] = 2/λ²;
* ``gamma`` (integer shape k from 1 to 64, scale θ): X = −θ·log(U_1···U_k) (a sum of k
  exponentials -- exact only for an integer shape, so no other shape is accepted),
  E[X²] = k(k + 1)θ²;
* ``uniform`` on [lo, hi], lo < hi (lo < 0 puts mass on (−∞, 0]): X = lo + (hi − lo)U exactly,
  E[X²] = (lo² + lo·hi + hi²)/3;
* ``pareto`` (scale x_m > 0, shape α with 1/16 ≤ α ≤ 64): X = x_m·U^(−1/α), heavy-tailed,
  E[X²] = αx_m²/(α − 2) for α > 2 and infinite otherwise.

What a finite sample shows about an almost-sure limit: nothing, strictly (a limit has no
finite-sample consequence without a rate).  The study tests a finite-size *trend* the theorem
suggests -- ``P(D_{n_max} < D_{n_min}) ≥ 1/2`` for the distance D_n to the limit -- on
``paths`` independent sample paths by an exact binomial sign test at level δ
(:func:`sign_test_threshold`): *consistent* or *inconsistent at level δ*, never a proof or a
refutation of the theorem.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

from flint import arb, ctx, fmpq, fmpq_mat

from ..errors import QKInputError

SAMPLER = "mt19937-lobes/2"
#: working precision (bits) of the sampled balls
SAMPLE_BITS = 128
#: precisions tried, in order, to decide whether a path's distance decreased
PATH_BITS = (128, 512, 2048)
#: a uniform is U = k/2^U_BITS with k odd
U_BITS = 54
FAMILIES = ("exponential", "gamma", "uniform", "pareto")
GAMMA_SHAPE_MAX = 64
PARETO_SHAPE_MIN, PARETO_SHAPE_MAX = fmpq(1, 16), fmpq(64)
#: sample paths of one experiment, and uniforms drawn in all (paths × n_max × uniforms per pair)
PATHS_MIN, PATHS_MAX = 8, 1024
MAX_UNIFORMS = 1 << 21
MAX_SIZE = 10 ** 6


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

    def canonical(self) -> tuple:
        """The measure, independently of its parametrisation: exponential(λ) is gamma(1, 1/λ)."""
        if self.family == "exponential":
            return ("gamma", fmpq(1), 1 / self.p("rate"))
        if self.family == "gamma":
            return ("gamma", self.p("shape"), self.p("scale"))
        return (self.family,) + tuple(v for _, v in sorted(self.params))

    def same(self, other: "PositiveLaw") -> bool:
        """The two laws are the same measure (exact; the four families are disjoint except
        exponential = gamma of shape 1)."""
        return self.canonical() == other.canonical()

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
        if f == "uniform":
            a, b = self.p("lo"), self.p("hi")
            return arb(a) + arb(b - a) * arb(fmpq(ks[0], 1 << U_BITS))
        logs = [arb(fmpq(k, 1 << U_BITS)).log() for k in ks]  # log U
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
    bare family name with default parameters.  The gamma shape must be an integer from 1 to 64
    (JSON integer or integer text: the sampler adds that many exponentials, and no other shape
    would be sampled exactly); a Pareto shape lies in [1/16, 64].  QKInputError naming the problem."""
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
    if fam == "gamma" and (ps["shape"].q != 1 or not 1 <= ps["shape"] <= GAMMA_SHAPE_MAX):
        raise QKInputError(f"{where}: the gamma shape must be an integer from 1 to {GAMMA_SHAPE_MAX} (the sampler "
                           f"adds that many exponentials; {_qs(ps['shape'])} would not be sampled exactly)")
    if fam == "pareto" and not PARETO_SHAPE_MIN <= ps["shape"] <= PARETO_SHAPE_MAX:
        raise QKInputError(f"{where}: the Pareto shape must lie in [1/16, 64], got {_qs(ps['shape'])}")
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
    """The sorted lobes at each size (nested samples, one path from ``seed``), as balls at ``bits``
    (the exact order of the samples from their uniforms)."""
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


# ---------------------------------------------------------------------------
# the study: independent sample paths and a sign test of the trend


def sign_test_threshold(paths: int, delta: fmpq) -> int:
    """k* = the largest k with P(Bin(paths, ½) ≤ k) ≤ δ (−1 when even k = 0 has a larger
    probability), exactly in integers.  If each of ``paths`` independent paths decreases with
    probability p ≥ ½, then P(#decreasing ≤ k*) ≤ P_{½}(Bin ≤ k*) ≤ δ (the binomial law is
    stochastically increasing in p): "≤ k* paths decreased" rejects p ≥ ½ at level δ.

    >>> sign_test_threshold(10, fmpq(1, 20))   # P(Bin(10,½) ≤ 1) = 11/1024 ≤ 1/20 < 56/1024
    1
    >>> sign_test_threshold(8, fmpq(1, 1000))  # P(Bin(8,½) = 0) = 1/256 > 1/1000
    -1
    """
    acc, k = 0, -1
    for j in range(paths + 1):
        acc += math.comb(paths, j)
        if fmpq(acc, 1 << paths) > delta:
            return k
        k = j
    return k


def enclose_sorted_desc(balls: list[arb]) -> list[arb]:
    """Balls enclosing the order statistics x_(1) ≥ x_(2) ≥ … of any reals x_i ∈ balls[i]: the
    i-th largest value lies between the i-th largest lower end and the i-th largest upper end
    (for each t, #{x_j ≥ t} is squeezed between the counts of lower and of upper ends ≥ t).
    No order between overlapping balls is decided."""
    los = sorted((b.lower() for b in balls), reverse=True)
    his = sorted((b.upper() for b in balls), reverse=True)
    return [lo.union(hi) for lo, hi in zip(los, his)]


@dataclass(frozen=True)
class PathDraws:
    """The uniforms of one path: ``x[i]`` those of X_i, ``xp[i]`` those of X'_i (odd k of k/2^54)."""

    x: list
    xp: list


def draw_paths(seed: int, paths: int, nmax: int, per_x: int, per_xp: int) -> list[PathDraws]:
    """The uniforms of every path from one stream (path after path; within a path X_i's then
    X'_i's uniforms for i = 0, …, nmax − 1)."""
    rng = random.Random(seed)
    draw = lambda k: [2 * rng.getrandbits(U_BITS - 1) + 1 for _ in range(k)]  # noqa: E731
    out = []
    for _ in range(paths):
        xs, xps = [], []
        for _ in range(nmax):
            xs.append(draw(per_x))
            xps.append(draw(per_xp))
        out.append(PathDraws(xs, xps))
    return out


@dataclass(frozen=True)
class MatrixSpec:
    """The random matrices S_n of Theorem 5: ``form`` ``symmetric`` or ``triangular`` (coupling q),
    the scales s₊, s₋ of its spectrum (positive eigenvalues s₊X_i, negative −s₋X'_i; Lean's hspec
    asks s₊ = v, s₋ = u) and the extra zero eigenvalues k (N_n = 2n + k; Lean's hNn asks k ≥ 0)."""

    form: str = "symmetric"
    coupling: fmpq = fmpq(0)
    scale_pos: fmpq | None = None
    scale_neg: fmpq | None = None
    extra_zeros: int = 0


class LobeModel:
    """What a lobes input says about X, X' and S_n (duck-typed on
    :class:`~qkverify.io.law_inputs.LobesInput`): the laws actually sampled, the dependence, and
    S_n's form, spectral scales and extra zeros."""

    def __init__(self, inp):
        self.inp = inp
        self.law_x = inp.law_X or inp.law
        self.law_xp = inp.law_Xprime or inp.law
        self.rho = fmpq(inp.u) / fmpq(inp.v) if inp.v != 0 else fmpq(0)  # Lean: u / 0 = 0
        S = inp.S
        self.form, self.q, self.k = S.form, S.coupling, S.extra_zeros
        self.sp = S.scale_pos if S.scale_pos is not None else fmpq(inp.v)
        self.sn = S.scale_neg if S.scale_neg is not None else fmpq(inp.u)

    def values(self, d: PathDraws, n: int) -> tuple[list[arb], list[arb]]:
        """X_{<n} and X'_{<n} as balls at the current precision (``repeated``: X_i = X_0)."""
        if self.inp.dependence == "repeated":
            x0, xp0 = self.law_x.sample(d.x[0]), self.law_xp.sample(d.xp[0])
            return [x0] * n, [xp0] * n
        return [self.law_x.sample(k) for k in d.x[:n]], [self.law_xp.sample(k) for k in d.xp[:n]]

    def lemma6(self, X: list[arb], Xp: list[arb]) -> arb:
        """δ_n = ‖β − ρα‖/‖α‖, α = sortDesc(v·X), β = sortDesc(u·X') (Lean's x/0 = 0 when α = 0
        exactly, i.e. v = 0; a ball around 0 in the denominator otherwise leaves it undecided)."""
        a = enclose_sorted_desc([arb(self.inp.v) * x for x in X])
        b = enclose_sorted_desc([arb(self.inp.u) * x for x in Xp])
        r = arb(self.rho)
        num = sum((_sq(y - r * x) for x, y in zip(a, b)), arb(0))
        den = sum((_sq(x) for x in a), arb(0))
        if den == 0:
            return arb(0)
        return (num / den).sqrt()

    def spectrum(self, X: list[arb], Xp: list[arb]) -> tuple[list[arb], arb, arb]:
        """(eigenvalues of symPart S_n, ‖S_n‖², ‖skewPart S_n‖²).  S_n: the sequence
        (s₊X_0, −s₋X'_0, s₊X_1, −s₋X'_1, …) cut to N_n = 2n + k entries when k < 0; ``symmetric``:
        any symmetric matrix with that spectrum (and k ≥ 0 zeros); ``triangular`` (coupling q):
        block diagonal with 2×2 blocks [[p, q·p], [0, m]] over consecutive pairs (p, m) of the
        sequence (a last unpaired entry is a 1×1 block), whose characteristic roots are the
        sequence.  A 2×2 block has symPart eigenvalues (p + m)/2 ± √(((p − m)/2)² + (qp/2)²),
        ‖block‖² = p² + m² + q²p², ‖skewPart‖² = q²p²/2."""
        seq = []
        for x, y in zip(X, Xp):
            seq += [arb(self.sp) * x, -arb(self.sn) * y]
        if self.k < 0:
            seq = seq[:max(len(seq) + self.k, 0)]
        q = arb(self.q)
        if self.form != "triangular" or self.q == 0:
            return seq, sum((_sq(t) for t in seq), arb(0)), arb(0)
        eig, F, T = [], arb(0), arb(0)
        for i in range(0, len(seq), 2):
            p = seq[i]
            if i + 1 == len(seq):
                eig.append(p)
                F += _sq(p)
                continue
            m = seq[i + 1]
            c, r = (p + m) / 2, (_sq((p - m) / 2) + _sq(q * p / 2)).sqrt()
            eig += [c + r, c - r]
            F += _sq(p) + _sq(m) + _sq(q * p)
            T += _sq(q * p) / 2
        return eig, F, T

    def theorem5(self, X: list[arb], Xp: list[arb]) -> arb:
        """‖π(S_n) − limitProfile ρ‖₂ with π(S) = (‖T‖², 2⟨α,β⟩, ‖(α−β)₊‖², ‖(β−α)₊‖²)/‖S‖²
        (Definition 6; α, β the sorted positive and negative parts of symPart's spectrum)."""
        eig, F, T = self.spectrum(X, Xp)
        a = enclose_sorted_desc([pos(e) for e in eig])
        b = enclose_sorted_desc([pos(-e) for e in eig])
        prof = [T, 2 * sum((x * y for x, y in zip(a, b)), arb(0)),
                sum((_sq(pos(x - y)) for x, y in zip(a, b)), arb(0)),
                sum((_sq(pos(y - x)) for x, y in zip(a, b)), arb(0))]
        prof = [t / F for t in prof] if F != 0 else [arb(0)] * 4  # Lean: x/0 = 0 for S_n = 0
        return sum((_sq(t - arb(c)) for t, c in zip(prof, limit_profile(self.rho))), arb(0)).sqrt()

    def quantity(self, what: str, d: PathDraws, n: int) -> arb:
        X, Xp = self.values(d, n)
        return self.lemma6(X, Xp) if what == "delta" else self.theorem5(X, Xp)


def path_outcome(model: LobeModel, what: str, d: PathDraws, n_lo: int, n_hi: int) -> tuple[int, str]:
    """(bits, outcome) for one path: ``zero`` when D_{n_hi} is exactly 0 (the limit is reached,
    e.g. Lean's x/0 = 0 at v = 0); else, at the first precision of PATH_BITS where the balls of
    D_{n_hi} and D_{n_lo} are disjoint, ``down`` (D_{n_hi} < D_{n_lo}) or ``up`` (D_{n_hi} > D_{n_lo});
    ``overlap`` at the last precision when they never are (equal distances -- e.g. X_i = X_0 --
    count as not decreasing).  The trend event is {D_{n_hi} < D_{n_lo}} ∪ {D_{n_hi} = 0}: ``down``
    and ``zero``."""
    for bits in PATH_BITS:
        with ctx.workprec(bits):
            lo, hi = model.quantity(what, d, n_lo), model.quantity(what, d, n_hi)
            if hi == 0:
                return bits, "zero"
            if not (lo.is_finite() and hi.is_finite()):
                continue
            if hi < lo:
                return bits, "down"
            if hi > lo:
                return bits, "up"
    return PATH_BITS[-1], "overlap"


@dataclass(frozen=True)
class TrendResult:
    """The sign test of one lobes input: ``outcomes`` per path ((bits, down/up/overlap)),
    ``decreasing`` = #down + #zero, ``threshold`` k* (:func:`sign_test_threshold`); ``medians`` the
    float medians of the quantity at each size (display only)."""

    what: str
    paths: int
    sizes: tuple
    delta: fmpq
    seed: int
    outcomes: list
    decreasing: int
    threshold: int
    medians: list

    @property
    def consistent(self) -> bool:
        return self.decreasing > self.threshold

    def witness(self) -> dict:
        return {"kind": "trend", "of": self.what, "paths": [[b, o] for b, o in self.outcomes],
                "decreasing": self.decreasing}

    def sample_record(self) -> dict:
        from .montecarlo import SEED_DERIVATION

        return {"seed": self.seed, "seed_derivation": SEED_DERIVATION, "confidence": _qs(1 - self.delta),
                "test": "sign-trend", "statistic": {"paths": self.paths, "decreasing": self.decreasing,
                                                    "reject_at_most": self.threshold,
                                                    "sizes": [self.sizes[0], self.sizes[-1]]}}


def check_study_cost(paths: int, nmax: int, per_pair: int) -> None:
    """QKInputError naming the cap when paths × n_max × (uniforms per pair) > MAX_UNIFORMS."""
    if paths * nmax * per_pair > MAX_UNIFORMS:
        raise QKInputError(f"{paths} paths × n = {nmax} × {per_pair} uniforms per pair exceed the study's cap of "
                           f"{MAX_UNIFORMS} uniforms (fewer paths or smaller sizes)")


def trend_test(inp, what: str, seed: int, with_medians: bool = True) -> TrendResult:
    """Draw ``inp.paths`` paths, decide for each whether D_{n_max} < D_{n_min} (``what``:
    ``delta`` for Lemma 6, ``distance`` for Theorem 5) and apply the sign test at level
    ``inp.delta``.  Deterministic in ``seed`` (derived from the input)."""
    model = LobeModel(inp)
    sizes = tuple(inp.sizes)
    px, pxp = model.law_x.uniforms_per_sample, model.law_xp.uniforms_per_sample
    check_study_cost(inp.paths, sizes[-1], px + pxp)
    draws = draw_paths(seed, inp.paths, sizes[-1], px, pxp)
    outcomes = [path_outcome(model, what, d, sizes[0], sizes[-1]) for d in draws]
    medians = []
    if with_medians:
        with ctx.workprec(SAMPLE_BITS):
            for n in sizes:
                vals = sorted(float(model.quantity(what, d, n).mid()) for d in draws)
                medians.append(vals[len(vals) // 2])
    down = sum(1 for _, o in outcomes if o in ("down", "zero"))
    return TrendResult(what, inp.paths, sizes, fmpq(inp.delta), seed, outcomes, down,
                       sign_test_threshold(inp.paths, fmpq(inp.delta)), medians)
