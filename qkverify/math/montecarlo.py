"""Monte Carlo estimates of E[‖S‖²/‖L‖²] and E[‖T‖²/‖L‖²] that are facts, not machine output.

The sample is a mathematical function of the seed, the same on every machine: uniform
bits come from Python's ``random.Random(seed)`` (MT19937, seeded by ``init_by_array``
of the seed's 32-bit words, both fixed by CPython since 3.2), Gaussian draws are
Box–Muller values *rounded to a dyadic grid*, and the rounding is decided with FLINT
arb balls (raising the precision until the ball lies between two grid points), so no
float, libm or BLAS result ever enters a sample.  Every per-sample ratio is computed
exactly in integers.  The kernel (``qkverify/kernel/rules/laws.py``) re-generates the
sample by its own implementation of this specification and re-derives every number.

Sampler ``mt19937-boxmuller/1`` (docs/CERTIFICATES.md states it too):

* entries are drawn sample by sample, in order: model ``iid`` the N×N entries of L
  row-major; model ``qk`` the n×N entries of W_K row-major, then those of W_Q;
* a finite law with atoms v_0 < v_1 < … and probabilities p_k = w_k/D (D the least
  common denominator): for D = 1 nothing is drawn; otherwise t = getrandbits(b),
  b = (D−1).bit_length(), repeated until t < D, and the entry is the atom v_k with
  w_0+…+w_{k−1} ≤ t < w_0+…+w_k;  a Gaussian of variance 0 is the point mass at its mean;
* a Gaussian N(m, v), v > 0, takes the next value Z of one standard-normal stream:
  when the stream is empty it draws a = getrandbits(53), then c = getrandbits(53), and
  yields R·cos(2πu₂), then R·sin(2πu₂), with u₁ = (a+1)/2⁵³, u₂ = c/2⁵³,
  R = √(−2 ln u₁); the entry is X = s·⌊(m + √v·Z)/s + ½⌋ with s = 2^(e−32),
  e = ⌊⌊log₂ v⌋/2⌋ (so s ≤ 2⁻³²·√v);
* per sample r_S = ‖S‖²/‖L‖² and r_T = ‖T‖²/‖L‖² (both 0 when L = 0, Lean's x/0 = 0);
  the certificate states Σ⌊2⁶⁴·r_S⌋, Σ⌊2⁶⁴·r_T⌋ and the number of samples with L = 0;
* Hoeffding (r ∈ [0, 1]): h = ⌈2³²·√(ln(2/δ)/(2m))⌉/2³², and with probability at
  least 1 − δ the expectation lies in [Σ/(m·2⁶⁴) − h, (Σ + m)/(m·2⁶⁴) + h] ∩ [0, 1].

The Gaussian is thus sampled through a 53-bit uniform and rounded to 2⁻³² of its
standard deviation: the law sampled differs from N(m, v) at that scale, far below the
Hoeffding half-width.  The evidence is ``empirical`` (it rests on MT19937 behaving as
uniform random bits), never certified.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Sequence

from flint import arb, ctx, fmpq

from ..errors import QKInputError

SAMPLER = "mt19937-boxmuller/1"
GRID_BITS = 32
ACC_BITS = 64
HALFWIDTH_BITS = 32
#: value patterns up to which a finite law's expectations are enumerated rather than sampled
#: (the kernel's enumeration limit)
ENUM_LIMIT = 1 << 16
#: precisions tried (bits) before a rounding is declared out of reach
PRECISIONS = (64, 128, 256, 512, 1024, 4096)


def _floor(y: arb) -> int | None:
    """⌊y⌋ when the ball determines it, else None."""
    f = float(y)
    if not math.isfinite(f):
        return None
    k = math.floor(f)
    return k if (y >= k) and (y < k + 1) else None


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


def _atoms(law) -> list[tuple[fmpq, fmpq]] | None:
    """The atoms of a finite law (a Gaussian of variance 0 is the point mass at its mean);
    None for a nondegenerate Gaussian."""
    if hasattr(law, "atoms"):
        return list(law.atoms)
    return [(law.mean(), fmpq(1))] if law.variance == 0 else None


class _Block:
    """One matrix of the model (L, or W_K / W_Q): per-entry samplers producing integers
    (the entry times the block's denominator ``den``, a power of 2 times the lcm of the
    finite atoms' denominators)."""

    def __init__(self, laws: list):
        self.den = 1
        self.kinds: list[tuple] = []
        for law in laws:
            f = _atoms(law)
            if f is not None:
                for x, _ in f:
                    self.den = _lcm(self.den, int(x.q))
            else:
                self.den = _lcm(self.den, 1 << max(0, GRID_BITS - grid_exponent(law.variance)))
        for law in laws:
            f = _atoms(law)
            if f is not None:
                D = 1
                for _, p in f:
                    D = _lcm(D, int(p.q))
                cum, acc = [], 0
                for _, p in f:
                    acc += int(p * D)
                    cum.append(acc)
                self.kinds.append(("finite", [int(x * self.den) for x, _ in f], cum, D))
            else:
                e = grid_exponent(law.variance)
                c = fmpq(2) ** (GRID_BITS - e)
                mult = fmpq(self.den) / c
                assert mult.q == 1
                shift, var = law.mean() * c + fmpq(1, 2), law.variance * c * c
                self.kinds.append(("gauss", shift, var, int(mult.p), arb(shift), arb(var).sqrt()))

    def sample(self, rng: random.Random, normals: _Normals) -> list[int]:
        out = []
        for k in self.kinds:
            if k[0] == "finite":
                vals, cum, D = k[1], k[2], k[3]
                if D == 1:
                    out.append(vals[0])
                    continue
                b = (D - 1).bit_length()
                t = rng.getrandbits(b)
                while t >= D:
                    t = rng.getrandbits(b)
                out.append(vals[next(i for i, w in enumerate(cum) if t < w)])
            else:
                out.append(_gauss(k, normals) * k[3])
        return out


def _gauss(law: tuple, normals: _Normals) -> int:
    """⌊shift + √var·Z⌋ for the next Z of the stream, decided by arb balls: first at the
    base precision (the run's), then recomputed at each higher precision of PRECISIONS."""
    a, c, which = normals.draw()
    if normals.base is None:
        normals.base = _pair(a, c)
    k = _floor(law[4] + law[5] * normals.base[which])
    for p in PRECISIONS[1:]:
        if k is not None:
            return k
        with ctx.workprec(p):
            k = _floor(arb(law[1]) + arb(law[2]).sqrt() * _pair(a, c)[which])
    if k is None:
        raise QKInputError(f"a Gaussian draw could not be rounded at {PRECISIONS[-1]} bits")
    return k


def hoeffding_halfwidth(m: int, delta: fmpq) -> fmpq:
    """h = ⌈2³²·√(ln(2/δ)/(2m))⌉/2³²: with m iid samples in [0, 1],
    P(|mean − E| ≥ h) ≤ δ (Hoeffding).  Decided with arb balls (exact result).
    Raises QKInputError for m < 1 or δ ∉ (0, 1)."""
    if m < 1:
        raise QKInputError("Monte Carlo needs at least one sample")
    if not (0 < delta < 1):
        raise QKInputError("delta must lie in (0, 1)")
    for p in PRECISIONS:
        with ctx.workprec(p):
            t = ((arb(2) / arb(delta)).log() / (2 * m)).sqrt() * (1 << HALFWIDTH_BITS)
            k = _floor(-t)
        if k is not None:
            return fmpq(-k, 1 << HALFWIDTH_BITS)
    raise QKInputError("the Hoeffding half-width could not be decided")


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


def sample_values(blocks: Sequence[list], seed: int, samples: int) -> list[list[list[fmpq]]]:
    """The exact entry values of the first ``samples`` samples, block by block (row-major),
    as the sampler draws them (tests and display)."""
    rng = random.Random(seed)
    with ctx.workprec(PRECISIONS[0]):
        bs = [_Block(list(b)) for b in blocks]
        normals = _Normals(rng)
        return [[[fmpq(v, b.den) for v in b.sample(rng, normals)] for b in bs] for _ in range(samples)]


def run(model: str, blocks: Sequence[list], N: int, n: int, samples: int, delta: fmpq, seed: int) -> MonteCarloResult:
    """Sample ``samples`` matrices of the model and accumulate the ratios (see the module).

    model ``iid``: ``blocks = [laws of L, row-major]``; ``qk``: ``[laws of W_K, laws of W_Q]``
    (n×N each, row-major).  Laws are :class:`~qkverify.math.baselines.FiniteLaw` /
    :class:`~qkverify.math.baselines.GaussianLaw`.  Deterministic in ``seed`` on every
    machine.  Raises QKInputError on bad parameters."""
    if samples < 1:
        raise QKInputError("Monte Carlo needs at least one sample")
    if not (0 <= seed < 1 << 64):
        raise QKInputError("the Monte Carlo seed must lie in [0, 2^64)")
    h = hoeffding_halfwidth(samples, delta)
    rng = random.Random(seed)
    with ctx.workprec(PRECISIONS[0]):
        bs = [_Block(list(b)) for b in blocks]
        sums = _accumulate(model, bs, N, n, samples, rng, _Normals(rng))
    return MonteCarloResult(samples, delta, seed, *sums, h)


def _accumulate(model: str, bs: list[_Block], N: int, n: int, samples: int, rng: random.Random,
                normals: _Normals) -> tuple[int, int, int]:
    sS = sT = zeros = 0
    for _ in range(samples):
        vals = [b.sample(rng, normals) for b in bs]
        if model == "iid":
            L = vals[0]
            F = sum(x * x for x in L)
            Tr = sum(L[i * N + j] * L[j * N + i] for i in range(N) for j in range(N))
        else:
            K, Q = vals
            Lm = [sum(K[r * N + a] * Q[r * N + b] for r in range(n)) for a in range(N) for b in range(N)]
            F = sum(x * x for x in Lm)
            Tr = sum(Lm[a * N + b] * Lm[b * N + a] for a in range(N) for b in range(N))
        if F == 0:
            zeros += 1
            continue
        sS += ((F + Tr) << ACC_BITS) // (2 * F)
        sT += ((F - Tr) << ACC_BITS) // (2 * F)
    return sS, sT, zeros
