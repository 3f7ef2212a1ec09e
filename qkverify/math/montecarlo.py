"""Monte Carlo estimates of E[‖S‖²/‖L‖²] and E[‖T‖²/‖L‖²] that are facts, not machine output.

The sample is a mathematical function of the input, the same on every machine: the seed is
derived from the certificate's input object (:func:`derive_seed`, no free choice), uniform
bits come from Python's ``random.Random(seed)`` (MT19937, seeded by ``init_by_array`` of the
seed's 32-bit words, both fixed by CPython since 3.2), continuous draws are *rounded to a
dyadic grid*, and every rounding is decided with FLINT arb balls (raising the precision
until the ball lies between two grid points; the candidate integer is read from the ball's
exact midpoint, never through a float), so no float, libm or BLAS result ever enters a
sample.  Every per-sample ratio is computed exactly in integers.  The kernel
(``qkverify/kernel/rules/laws.py``) re-generates the sample by its own implementation of
this specification and re-derives every number.

Sampler ``mt19937-boxmuller/2`` (docs/CERTIFICATES.md states it too):

* seed = the first 8 bytes (big-endian) of SHA-256 of the canonical JSON of the input
  object (``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``
  encoded in UTF-8); the input holds ``monte_carlo = {sampler, samples, delta}``;
* per sample the *free* entries are drawn in order -- model ``iid`` the N×N entries of L
  row-major, model ``qk`` the n×N entries of W_K row-major, then those of W_Q -- skipping
  the targets of ``copies``; then each copy target takes sign × its source's value;
* a finite law with atoms v_0 < v_1 < … and probabilities p_k = w_k/D (D the least
  common denominator): for D = 1 nothing is drawn; otherwise t = getrandbits(b),
  b = (D−1).bit_length(), repeated until t < D, and the entry is the atom v_k with
  w_0+…+w_{k−1} ≤ t < w_0+…+w_k;  a Gaussian of variance 0 is the point mass at its mean;
* a Gaussian N(m, v), v > 0, takes the next value Z of one standard-normal stream:
  when the stream is empty it draws a = getrandbits(53), then c = getrandbits(53), and
  yields R·cos(2πu₂), then R·sin(2πu₂), with u₁ = (a+1)/2⁵³, u₂ = c/2⁵³,
  R = √(−2 ln u₁); the entry is X = s·⌊(m + √v·Z)/s + ½⌋ with s = 2^(e−32),
  e = ⌊⌊log₂ v⌋/2⌋ (so s ≤ 2⁻³²·√v);
* a Pareto law (scale x_m, shape α) draws a = getrandbits(53), u = (a+1)/2⁵³ and
  Y = x_m·u^(−1/α); the entry is s·⌊Y/s + ½⌋ with s = 2^(⌊log₂ x_m⌋ − 32); a symmetric
  Pareto then draws one more bit getrandbits(1) and negates the entry when it is 1;
* per sample r_S = ‖S‖²/‖L‖² and r_T = ‖T‖²/‖L‖² (both 0 when L = 0, Lean's x/0 = 0);
  the certificate states Σ⌊2⁶⁴·r_S⌋, Σ⌊2⁶⁴·r_T⌋ and the number of samples with L = 0;
* Hoeffding (r ∈ [0, 1]): h = ⌈2³²·√(ln(2/δ)/(2m))⌉/2³², and with probability at
  least 1 − δ the expectation lies in [Σ/(m·2⁶⁴) − h, (Σ + m)/(m·2⁶⁴) + h] ∩ [0, 1].
  δ = 1/k with k an integer in [20, 10¹²] (:func:`check_delta`).

The continuous laws are thus sampled through a 53-bit uniform and rounded to 2⁻³² of
their scale: the law sampled differs from the stated one at that scale, far below the
Hoeffding half-width.  The evidence is ``empirical`` (it rests on MT19937 behaving as
uniform random bits), never certified, and a sample never makes a theorem hold or fail:
it is *consistent* or *inconsistent at level δ*.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from dataclasses import dataclass
from typing import Any, Sequence

from flint import arb, ctx, fmpq

from ..errors import QKInputError

SAMPLER = "mt19937-boxmuller/2"
#: how the seed follows from the input (recorded in every empirical record)
SEED_DERIVATION = "sha256-canonical-input"
GRID_BITS = 32
ACC_BITS = 64
HALFWIDTH_BITS = 32
#: value patterns up to which a finite law's expectations are enumerated rather than sampled
#: (the kernel's enumeration limit)
ENUM_LIMIT = 1 << 16
#: precisions tried (bits) before a rounding is declared out of reach
PRECISIONS = (64, 128, 256, 512, 1024, 4096)
#: δ = 1/k with DELTA_K_MIN ≤ k ≤ DELTA_K_MAX, i.e. δ ∈ [1e-12, 1/20]
DELTA_K_MIN, DELTA_K_MAX = 20, 10 ** 12
#: samples per Monte Carlo experiment, at most
MAX_SAMPLES = 1 << 24
#: draws (samples × free entries) and integer multiply-adds (samples × the cost of ‖L‖² and
#: tr(L·L) from the draws: N² for iid, N²·n for qk) of one experiment, at most: producer and kernel
#: draw about 6 µs per Gaussian entry, so these bound either side to about a minute (the largest
#: row of `qkverify baselines --samples 40000`, n = N = 8, draws 5.1 million entries)
MAX_DRAWS = 1 << 23
MAX_PRODUCT_WORK = 1 << 26
#: shapes of a Pareto entry law: 1/4 ≤ α ≤ 64 (draws stay below 2^212 · x_m)
PARETO_SHAPE_MIN, PARETO_SHAPE_MAX = fmpq(1, 4), fmpq(64)


# ---------------------------------------------------------------------------
# seeds and levels


def canonical_json(obj: Any) -> bytes:
    """The canonical JSON bytes of ``obj`` (sorted keys, no spaces, UTF-8): what a seed is
    derived from."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def derive_seed(input_obj: Any) -> int:
    """The sampler's seed: the first 8 bytes, big-endian, of SHA-256 of the canonical JSON of
    the certificate's ``input`` object (its seed-free sampling parameters included).  There
    is no other way to choose a seed.

    >>> derive_seed({"kind": "law"}) == int(hashlib.sha256(b'{"kind":"law"}').hexdigest()[:16], 16)
    True
    """
    return int.from_bytes(hashlib.sha256(canonical_json(input_obj)).digest()[:8], "big")


def check_delta(delta: Any, where: str = "delta") -> fmpq:
    """δ as an exact rational, which must be 1/k with k an integer in [20, 10¹²] (δ ∈ [1e-12, 1/20]):
    a confidence level 1 − δ of at least 95 %, written so that the schema can enforce the range.
    Accepts what :func:`~qkverify.exact.rational.parse_rational` reads (``"1/1000"``, ``"1e-6"``,
    ``0.05``).  Raises QKInputError naming the bound.

    >>> check_delta("1e-6"), check_delta("0.05")
    (1/1000000, 1/20)
    """
    from ..exact.rational import parse_rational

    d = parse_rational(delta, where)
    if not (d > 0 and d.p == 1 and DELTA_K_MIN <= int(d.q) <= DELTA_K_MAX):
        raise QKInputError(f"{where} must be 1/k with k an integer from {DELTA_K_MIN} to 10^12 "
                           f"(δ between 1e-12 and 1/20), got {d}")
    return d


def check_samples(samples: Any, where: str = "samples") -> int:
    """A sample count: an integer from 1 to MAX_SAMPLES (2^24).  QKInputError otherwise."""
    if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= MAX_SAMPLES:
        raise QKInputError(f"{where} must be an integer from 1 to {MAX_SAMPLES}, got {samples!r}")
    return samples


# ---------------------------------------------------------------------------
# exact floors of balls


def floor_of_ball(y: arb, max_bits: int = 1 << 20) -> int | None:
    """⌊y⌋ when the ball decides it (every point of the ball has the same floor), else None.

    The candidate is the floor of the ball's exact midpoint m·2^e (an arf read exactly as
    integers, never through a float: ``float`` rounds 4074630941.99999988 up to 4074630942
    and would propose the wrong integer at every precision).  A ball whose midpoint has
    more than ``max_bits`` bits, or that is not finite, gives None.

    >>> with ctx.workprec(128):
    ...     floor_of_ball(arb(4074630942) - arb(fmpq(12, 10**8)))
    4074630941
    >>> floor_of_ball(arb(-1, fmpq(1, 4))) is None  # [-5/4, -3/4] straddles -1
    True
    """
    if not y.is_finite():
        return None
    m, e = (int(t) for t in y.mid().man_exp())
    if m.bit_length() + e > max_bits:
        return None
    k = m << e if e >= 0 else m >> -e  # >> floors, negative m included
    return k if (y >= k) and (y < k + 1) else None


def floor_decided(f, what: str = "a rounding of the Monte Carlo sampler") -> int:
    """⌊f()⌋ for an arb-valued f, evaluated at each precision of PRECISIONS until the ball
    decides it.  QKInputError when 4096 bits do not."""
    for p in PRECISIONS:
        with ctx.workprec(p):
            k = floor_of_ball(f())
        if k is not None:
            return k
    raise QKInputError(f"{what} is not decided at {PRECISIONS[-1]} bits")


def _lcm(a: int, b: int) -> int:
    return a // math.gcd(a, b) * b


def _log2_floor(v: fmpq) -> int:
    """⌊log₂ v⌋ for a rational v > 0 (exact)."""
    p, q = int(v.p), int(v.q)
    t = p.bit_length() - q.bit_length()
    if t >= 0:
        return t if p >= q << t else t - 1
    return t if p << -t >= q else t - 1


def grid_exponent(v: fmpq) -> int:
    """e = ⌊⌊log₂ v⌋/2⌋ for a Gaussian variance v > 0: the grid is s = 2^(e − GRID_BITS)."""
    return _log2_floor(v) // 2


def grid_inverse(law) -> fmpq:
    """1/s for a continuous entry law: 2^(32 − e) (Gaussian, e = ⌊⌊log₂ v⌋/2⌋) or
    2^(32 − ⌊log₂ x_m⌋) (Pareto)."""
    e = grid_exponent(law.variance) if _family(law) == "gauss" else _log2_floor(law.scale)
    return fmpq(2) ** (GRID_BITS - e) if GRID_BITS >= e else fmpq(1, 2 ** (e - GRID_BITS))


# ---------------------------------------------------------------------------
# the draws


class _Normals:
    """The standard-normal stream: Box–Muller pairs from two 53-bit words."""

    def __init__(self, rng: random.Random):
        self.rng, self.left, self.pair = rng, 0, (0, 0)
        self.base: tuple[arb, arb] | None = None

    def draw(self) -> tuple[int, int, int]:
        if not self.left:
            self.pair = (self.rng.getrandbits(53), self.rng.getrandbits(53))
            self.left, self.base = 2, None
        self.left -= 1
        return self.pair + (1 - self.left,)


def _pair(a: int, c: int) -> tuple[arb, arb]:
    """(R·cos 2πu₂, R·sin 2πu₂) at the current precision."""
    r = (arb(fmpq(a + 1, 1 << 53)).log() * -2).sqrt()
    sn, co = arb.sin_cos_pi_fmpq(fmpq(c, 1 << 52))
    return r * co, r * sn


def _family(law) -> str:
    """``finite`` (finite laws and point-mass Gaussians), ``gauss`` or ``pareto``."""
    if hasattr(law, "atoms"):
        return "finite"
    if hasattr(law, "shape"):
        return "pareto"
    return "finite" if law.variance == 0 else "gauss"


def _atoms(law) -> list[tuple[fmpq, fmpq]]:
    return list(law.atoms) if hasattr(law, "atoms") else [(law.mean(), fmpq(1))]


class _Sampler:
    """Per-entry samplers of the whole model producing integers (the entry times one common
    denominator ``den``: the lcm of the finite atoms' denominators and of the continuous
    laws' grid inverses), and the copy map."""

    def __init__(self, laws: list, copies: dict[int, tuple[int, int]]):
        self.den = 1
        for law in laws:
            if _family(law) == "finite":
                for x, _ in _atoms(law):
                    self.den = _lcm(self.den, int(x.q))
            else:
                self.den = _lcm(self.den, int(grid_inverse(law).p))
        self.kinds: list[tuple] = []
        for law in laws:
            fam = _family(law)
            if fam == "finite":
                at = _atoms(law)
                D = 1
                for _, p in at:
                    D = _lcm(D, int(p.q))
                cum, acc = [], 0
                for _, p in at:
                    acc += int(p * D)
                    cum.append(acc)
                self.kinds.append(("finite", [int(x * self.den) for x, _ in at], cum, D))
                continue
            c = grid_inverse(law)
            mult = fmpq(self.den) / c
            assert mult.q == 1
            if fam == "gauss":
                shift, var = law.mean() * c + fmpq(1, 2), law.variance * c * c
                self.kinds.append(("gauss", shift, var, int(mult.p), arb(shift), arb(var).sqrt()))
            else:
                self.kinds.append(("pareto", law.scale * c, law.shape, int(mult.p), bool(law.symmetric)))
        self.copies = copies
        self.free = [i for i in range(len(laws)) if i not in copies]

    def sample(self, rng: random.Random, normals: _Normals) -> list[int]:
        out = [0] * len(self.kinds)
        for i in self.free:
            k = self.kinds[i]
            if k[0] == "finite":
                vals, cum, D = k[1], k[2], k[3]
                if D == 1:
                    out[i] = vals[0]
                    continue
                b = (D - 1).bit_length()
                t = rng.getrandbits(b)
                while t >= D:
                    t = rng.getrandbits(b)
                out[i] = vals[next(j for j, w in enumerate(cum) if t < w)]
            elif k[0] == "gauss":
                out[i] = _gauss(k, normals) * k[3]
            else:
                out[i] = _pareto(k, rng) * k[3]
        for i, (j, sign) in self.copies.items():
            out[i] = sign * out[j]
        return out


def _gauss(law: tuple, normals: _Normals) -> int:
    """⌊shift + √var·Z⌋ for the next Z of the stream, decided by arb balls: first at the
    base precision (the run's), then recomputed at each higher precision of PRECISIONS."""
    a, c, which = normals.draw()
    if normals.base is None:
        normals.base = _pair(a, c)
    k = floor_of_ball(law[4] + law[5] * normals.base[which])
    if k is not None:
        return k
    return floor_decided(lambda: arb(law[1]) + arb(law[2]).sqrt() * _pair(a, c)[which], "a Gaussian draw")


def _pareto(law: tuple, rng: random.Random) -> int:
    """⌊x_m·c·u^(−1/α) + ½⌋ (u = (a+1)/2⁵³), negated on a set bit for a symmetric Pareto."""
    a = rng.getrandbits(53)
    k = floor_decided(lambda: arb(law[1]) * (-(arb(fmpq(a + 1, 1 << 53)).log()) / arb(law[2])).exp()
                      + arb(fmpq(1, 2)), "a Pareto draw")
    if law[4] and rng.getrandbits(1):
        k = -k
    return k


def hoeffding_halfwidth(m: int, delta: fmpq) -> fmpq:
    """h = ⌈2³²·√(ln(2/δ)/(2m))⌉/2³²: with m iid samples in [0, 1],
    P(|mean − E| ≥ h) ≤ δ (Hoeffding).  Decided with arb balls (exact result).
    Raises QKInputError for m < 1 or δ ∉ (0, 1)."""
    if m < 1:
        raise QKInputError("Monte Carlo needs at least one sample")
    if not (0 < delta < 1):
        raise QKInputError("delta must lie in (0, 1)")
    k = floor_decided(lambda: -((arb(2) / arb(delta)).log() / (2 * m)).sqrt() * (1 << HALFWIDTH_BITS),
                      "the Hoeffding half-width")
    return fmpq(-k, 1 << HALFWIDTH_BITS)


@dataclass(frozen=True)
class MonteCarloResult:
    """The outcome of one run: ``sum_S`` = Σ⌊2⁶⁴·r_S⌋, ``sum_T`` likewise, ``zero_samples``
    the samples with L = 0, ``halfwidth`` h (exact); :meth:`interval` gives the Hoeffding
    interval for E[r_S] (``"S"``) or E[r_T] (``"T"``) at confidence 1 − δ."""

    samples: int
    delta: fmpq
    seed: int
    sum_S: int
    sum_T: int
    zero_samples: int
    halfwidth: fmpq

    def mean_bounds(self, which: str) -> tuple[fmpq, fmpq]:
        s = self.sum_S if which == "S" else self.sum_T
        den = fmpq(self.samples) * (1 << ACC_BITS)
        return fmpq(s) / den, fmpq(s + self.samples) / den

    def interval(self, which: str) -> tuple[fmpq, fmpq]:
        lo, hi = self.mean_bounds(which)
        return max(fmpq(0), lo - self.halfwidth), min(fmpq(1), hi + self.halfwidth)

    def contains(self, which: str, value: fmpq) -> bool:
        lo, hi = self.interval(which)
        return lo <= value <= hi

    def witness(self) -> dict:
        """The certificate's ``monte_carlo`` witness (every number re-derived by the kernel)."""
        q = lambda x: str(x.p) if x.q == 1 else f"{x.p}/{x.q}"  # noqa: E731
        return {"kind": "monte_carlo", "of": "energy", "sum_S": str(self.sum_S), "sum_T": str(self.sum_T),
                "zero_samples": self.zero_samples, "halfwidth": q(self.halfwidth),
                "interval_S": [q(x) for x in self.interval("S")], "interval_T": [q(x) for x in self.interval("T")]}

    def sample_record(self, which: str, target: fmpq) -> dict:
        """The record's ``sample`` object for the claim E[r_which] = target (format 3)."""
        q = lambda x: str(x.p) if x.q == 1 else f"{x.p}/{x.q}"  # noqa: E731
        return {"seed": self.seed, "seed_derivation": SEED_DERIVATION, "confidence": q(1 - self.delta),
                "test": "hoeffding-mean", "statistic": {"samples": self.samples,
                                                        "interval": [q(x) for x in self.interval(which)],
                                                        "target": q(target)}}


def _flatten(blocks: Sequence[list], copies: Sequence = ()) -> tuple[list, dict[int, tuple[int, int]]]:
    """All entry laws in draw order and the copy map {target index: (source index, sign)};
    ``copies`` holds ((block, index), (block, index), sign) with row-major indices."""
    offs, laws = [], []
    for b in blocks:
        offs.append(len(laws))
        laws.extend(b)
    cmap = {offs[tb] + ti: (offs[sb] + si, sign) for (tb, ti), (sb, si), sign in copies}
    return laws, cmap


def product_work(model: str, N: int, n: int) -> int:
    """Integer multiply-adds per sample to form ‖L‖² and tr(L·L) from the draws."""
    return N * N * (n if model == "qk" else 1) + N * N


def check_work(model: str, N: int, n: int, samples: int, free_entries: int) -> None:
    """QKInputError naming the cap when an experiment exceeds MAX_DRAWS or MAX_PRODUCT_WORK."""
    if samples * free_entries > MAX_DRAWS:
        raise QKInputError(f"{samples} samples × {free_entries} drawn entries exceed the Monte Carlo cap of "
                           f"{MAX_DRAWS} draws (fewer samples, or a smaller matrix)")
    if samples * product_work(model, N, n) > MAX_PRODUCT_WORK:
        raise QKInputError(f"{samples} samples of an N = {N}{f', n = {n}' if model == 'qk' else ''} product exceed "
                           f"the Monte Carlo cap of {MAX_PRODUCT_WORK} multiply-adds")


def sample_values(blocks: Sequence[list], seed: int, samples: int, copies: Sequence = ()) -> list[list[list[fmpq]]]:
    """The exact entry values of the first ``samples`` samples, block by block (row-major),
    as the sampler draws them (tests and display)."""
    rng = random.Random(seed)
    laws, cmap = _flatten(blocks, copies)
    with ctx.workprec(PRECISIONS[0]):
        smp = _Sampler(laws, cmap)
        normals = _Normals(rng)
        out = []
        for _ in range(samples):
            flat = [fmpq(v, smp.den) for v in smp.sample(rng, normals)]
            blocks_out, k = [], 0
            for b in blocks:
                blocks_out.append(flat[k:k + len(b)])
                k += len(b)
            out.append(blocks_out)
        return out


def run(model: str, blocks: Sequence[list], N: int, n: int, samples: int, delta: fmpq, seed: int,
        copies: Sequence = ()) -> MonteCarloResult:
    """Sample ``samples`` matrices of the model and accumulate the ratios (see the module).

    model ``iid``: ``blocks = [laws of L, row-major]``; ``qk``: ``[laws of W_K, laws of W_Q]``
    (n×N each, row-major).  Laws are :class:`~qkverify.math.baselines.FiniteLaw`,
    :class:`~qkverify.math.baselines.GaussianLaw` or :class:`~qkverify.math.baselines.ParetoLaw`;
    ``copies``: ((block, index), (block, index), sign) triples, target first.  Deterministic in
    ``seed`` (:func:`derive_seed` of the input) on every machine.  Raises QKInputError on bad
    parameters or past the caps MAX_SAMPLES, MAX_DRAWS, MAX_PRODUCT_WORK."""
    check_samples(samples)
    if not (0 <= seed < 1 << 64):
        raise QKInputError("the Monte Carlo seed must lie in [0, 2^64)")
    laws, cmap = _flatten(blocks, copies)
    check_work(model, N, n, samples, len(laws) - len(cmap))
    h = hoeffding_halfwidth(samples, delta)
    rng = random.Random(seed)
    with ctx.workprec(PRECISIONS[0]):
        smp = _Sampler(laws, cmap)
        sums = _accumulate(model, smp, N, n, samples, rng, _Normals(rng))
    return MonteCarloResult(samples, delta, seed, *sums, h)


def _accumulate(model: str, smp: _Sampler, N: int, n: int, samples: int, rng: random.Random,
                normals: _Normals) -> tuple[int, int, int]:
    sS = sT = zeros = 0
    for _ in range(samples):
        vals = smp.sample(rng, normals)
        if model == "iid":
            L = vals
        else:
            K, Q = vals[:n * N], vals[n * N:]
            L = [sum(K[r * N + a] * Q[r * N + b] for r in range(n)) for a in range(N) for b in range(N)]
        F = sum(x * x for x in L)
        Tr = sum(L[i * N + j] * L[j * N + i] for i in range(N) for j in range(N))
        if F == 0:
            zeros += 1
            continue
        sS += ((F + Tr) << ACC_BITS) // (2 * F)
        sT += ((F - Tr) << ACC_BITS) // (2 * F)
    return sS, sT, zeros
