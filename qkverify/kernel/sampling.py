"""The kernel's own samplers (empirical evidence, docs/CERTIFICATES.md): the documented
Monte Carlo of a law input (sampler ``mt19937-boxmuller/1``) and the sample path of a
lobes input.  Each is a mathematical function of the seed; the witness checkers of
:mod:`.witnesses` re-draw with them and compare.  Expectations of a law are derived
here too (moments from means and variances, the exact enumeration of finite laws).

The semantics of these samplers belong to the sampling rules (DESIGN.md, owners)."""

from __future__ import annotations

import itertools
import math
import random

from flint import arb, fmpq, fmpq_mat

from . import limits
from .algebra import precision
from .jsonio import Undecided, require

GRID, ACC, HALF = 32, 64, 32
PRECS = (64, 128, 256, 512, 1024, 4096)
U_BITS = 54


def frob(X: fmpq_mat) -> fmpq:
    return sum((X[i, j] ** 2 for i in range(X.nrows()) for j in range(X.ncols())), fmpq(0))


def trace(X: fmpq_mat) -> fmpq:
    return sum((X[i, i] for i in range(X.nrows())), fmpq(0))


# -- law inputs: expectations -------------------------------------------------------------


def _m1(l: tuple) -> fmpq:
    return l[1] if l[0] == "gauss" else l[2]


def blocks(args: dict) -> dict[str, list]:
    """Entry laws of each matrix (L, or W_K and W_Q), row-major."""
    return {k: [l for r in g for l in r] for k, g in args["laws"].items()}


def moments(args: dict) -> dict[str, fmpq]:
    """E‖L‖², E tr(L·L), E‖S‖², E‖T‖² under the product law, from means M and variances V:
    iid, E L_ab² = M_ab² + V_ab and E L_ab L_ba = M_ab M_ba (a ≠ b); qk, E[K_ra K_sc] =
    MK_ra MK_sc + [r = s, a = c] VK_ra (and Q)."""
    g = args["laws"]
    mat = lambda G, f: fmpq_mat([[f(l) for l in r] for r in G]) if G and G[0] else fmpq_mat(0, 0)  # noqa: E731
    M, V = ({k: mat(G, _m1) for k, G in g.items()}, {k: mat(G, lambda l: l[3] - _m1(l) ** 2) for k, G in g.items()})
    if "L" in g:
        Mean, X = M["L"], V["L"]
    else:
        sq = {k: mat(G, lambda l: _m1(l) ** 2) for k, G in g.items()}
        Mean = M["W_K"].transpose() * M["W_Q"]
        X = V["W_K"].transpose() * (sq["W_Q"] + V["W_Q"]) + sq["W_K"].transpose() * V["W_Q"]
    eL, et = frob(Mean) + sum(X.entries(), fmpq(0)), trace(Mean * Mean) + trace(X)
    return {"E_frobSq": eL, "E_trace_mul_self": et, "E_frobSq_symPart": (eL + et) / 2, "E_frobSq_skewPart": (eL - et) / 2}


def _to_L(args: dict, x: list) -> list:
    """The entries of L (row-major) from the drawn entries of the model."""
    N, n = args["N"], args["n"]
    if args["model"] == "iid":
        return x
    return [sum(x[r * N + a] * x[(n + r) * N + b] for r in range(n)) for a in range(N) for b in range(N)]


def _FT(N: int, L: list) -> tuple:
    return sum(v * v for v in L), sum(L[a * N + b] * L[b * N + a] for a in range(N) for b in range(N))


def enumerate_energy(args: dict) -> tuple[int, fmpq, fmpq]:
    """(patterns, E[‖S‖²/‖L‖²], E[‖T‖²/‖L‖²]) summed over every value pattern of finite laws."""
    laws, N = [l for b in blocks(args).values() for l in b], args["N"]
    require(all(l[0] == "atoms" for l in laws), "enumeration witness", "a Gaussian entry has no finite support")
    count, eS, eT = math.prod(len(l[1]) for l in laws), fmpq(0), fmpq(0)
    limits.over("value patterns", count, limits.ENUM_LIMIT, "ENUM_LIMIT")
    for pat in itertools.product(*(l[1] for l in laws)):
        F, tr = _FT(N, _to_L(args, [v for v, _ in pat]))
        if F:
            p = math.prod((w for _, w in pat), start=fmpq(1))
            eS, eT = eS + p * (F + tr) / (2 * F), eT + p * (F - tr) / (2 * F)
    return count, eS, eT


# -- law inputs: the Monte Carlo sampler mt19937-boxmuller/1 ------------------------------


def _floor(f) -> int:
    """⌊f()⌋ for an arb-valued f, evaluated at increasing precision until the ball decides it."""
    for p in PRECS:
        with precision(p):
            y = f()
        k = math.floor(float(y)) if math.isfinite(float(y)) else None
        if k is not None and y >= k and y < k + 1:
            return k
    raise Undecided(f"a rounding of the Monte Carlo sampler is not decided at {PRECS[-1]} bits")


def _bm(a: int, c: int) -> tuple[arb, arb]:
    """Box–Muller: R·(cos 2πu₂, sin 2πu₂), u₁ = (a+1)/2⁵³, u₂ = c/2⁵³, R = √(−2 ln u₁)."""
    r = (arb(fmpq(a + 1, 1 << 53)).log() * -2).sqrt()
    s, co = arb.sin_cos_pi_fmpq(fmpq(c, 1 << 52))
    return r * co, r * s


def _c(v: fmpq) -> fmpq:
    """1/s = 2^(32 − e), e = ⌊⌊log₂ v⌋/2⌋: the grid a Gaussian of variance v is rounded to."""
    t = int(v.p).bit_length() - int(v.q).bit_length()
    t -= (fmpq(2) ** t if t >= 0 else fmpq(1, 2 ** -t)) > v
    return fmpq(2) ** (GRID - t // 2) if GRID >= t // 2 else fmpq(1, 2 ** (t // 2 - GRID))


def _drawer(l: tuple, den: int):
    """The draw of one entry, times den, by the documented sampler."""
    if l[0] == "atoms":
        D = math.lcm(*(int(p.q) for _, p in l[1]))
        cum, vals = list(itertools.accumulate(int(p * D) for _, p in l[1])), [int(x * den) for x, _ in l[1]]

        def draw(rng, stream):
            t = D
            while D > 1 and t >= D:
                t = rng.getrandbits((D - 1).bit_length())
            return vals[next(i for i, c in enumerate(cum) if t < c)] if D > 1 else vals[0]

        return draw
    c = _c(l[2])
    shift, var, mult = l[1] * c + fmpq(1, 2), l[2] * c * c, int(den / c)
    base = (arb(shift), arb(var).sqrt())

    def draw(rng, stream):
        if not stream:
            a, b = rng.getrandbits(53), rng.getrandbits(53)
            stream.extend(zip(((a, b, 1), (a, b, 0)), reversed(_bm(a, b))))
        (a, b, which), z = stream.pop()
        y = base[0] + base[1] * z  # at the base precision; recomputed only when undecided
        k = math.floor(float(y))
        if not (y >= k and y < k + 1):
            k = _floor(lambda: arb(shift) + arb(var).sqrt() * _bm(a, b)[which])
        return k * mult

    return draw


def monte_carlo(args: dict) -> dict:
    """Re-draw the sample: Σ⌊2⁶⁴ r⌋ (r_S, r_T), #{L = 0}, h = ⌈2³²√(ln(2/δ)/(2m))⌉/2³² and
    the intervals [Σ/(m2⁶⁴) − h, (Σ + m)/(m2⁶⁴) + h] ∩ [0, 1]."""
    mc = args["monte_carlo"]
    require(mc is not None, "input", "a monte_carlo witness needs the input's monte_carlo parameters")
    from .jsonio import rat

    m, delta, N = mc["samples"], rat(mc["delta"]), args["N"]
    bl = list(blocks(args).values())
    limits.over("Monte Carlo draws", m * sum(map(len, bl)), limits.WORK_LIMIT, "WORK_LIMIT")
    rng, stream, sums = random.Random(mc["seed"]), [], [0, 0, 0]
    with precision(PRECS[0]):
        draws = []
        for b in bl:  # each block drawn as integers: values times one common denominator
            den = math.lcm(1, *(int(x.q) for l in b if l[0] == "atoms" for x, _ in l[1]),
                           *(int(_c(l[2]).p) for l in b if l[0] == "gauss"))
            draws += [_drawer(l, den) for l in b]
        for _ in range(m):
            F, tr = _FT(N, _to_L(args, [f(rng, stream) for f in draws]))
            if F == 0:
                sums[2] += 1
            else:
                sums[0], sums[1] = sums[0] + ((F + tr) << ACC) // (2 * F), sums[1] + ((F - tr) << ACC) // (2 * F)
        k = _floor(lambda: -((arb(2) / arb(delta)).log() / (2 * m)).sqrt() * (1 << HALF))
    h, den = fmpq(-k, 1 << HALF), fmpq(m) * (1 << ACC)
    iv = [(max(fmpq(0), s / den - h), min(fmpq(1), (s + m) / den + h)) for s in sums[:2]]
    return {"sums": sums, "halfwidth": h, "intervals": iv}


# -- lobes inputs (Lemma 6, Theorem 5) ------------------------------------------------------


def limit_profile(rho: fmpq) -> list[fmpq]:
    """Lean ``limitProfile ρ`` = (0, 2ρ, (1 − ρ)₊², (ρ − 1)₊²)/(1 + ρ²)."""
    d, pos = 1 + rho * rho, lambda v: max(v, fmpq(0))
    return [fmpq(0), 2 * rho / d, pos(1 - rho) ** 2 / d, pos(rho - 1) ** 2 / d]


def _sample(f: str, p: dict, ks: list[int]) -> arb:
    """F⁻¹ of the uniforms k/2^54 as a ball."""
    logs = [arb(k).log() - U_BITS * arb(2).log() for k in ks]
    if f == "uniform":
        return arb(p["lo"]) + arb(p["hi"] - p["lo"]) * arb(ks[0]) / arb(2) ** U_BITS
    if f == "pareto":
        return arb(p["scale"]) * (-logs[0] / arb(p["shape"])).exp()
    return -sum(logs, arb(0)) * (arb(p["scale"]) if f == "gamma" else 1 / arb(p["rate"]))


def lobes_points(args: dict, what: str, bits: int = 128):
    """δ_n (or ‖π(S_n) − limitProfile ρ‖) at each size, and the least-squares log-log slope."""
    f, p = args["family"], args["params"]
    per, u, v, sizes = int(p["shape"]) if f == "gamma" else 1, args["u"], args["v"], args["sizes"]
    rng = random.Random(args["seed"])
    draws = [[[2 * rng.getrandbits(U_BITS - 1) + 1 for _ in range(per)] for _ in range(2)] for _ in range(sizes[-1])]
    key = (lambda ks: ks[0]) if f == "uniform" else (lambda ks: -math.prod(ks))   # the exact order of the samples
    out = []
    with precision(bits):
        Xs = [[(key(d[j]), _sample(f, p, d[j])) for d in draws] for j in range(2)]
        for n in sizes:
            al, be = ([arb(c) * t for _, t in sorted(Xs[j][:n], key=lambda e: e[0], reverse=True)] for j, c in ((0, v), (1, u)))
            if what == "delta":
                out.append((sum(((y - arb(u / v) * x) * (y - arb(u / v) * x) for x, y in zip(al, be)), arb(0))
                            / sum((x * x for x in al), arb(0))).sqrt())
                continue
            D, pp = sum((x * x for x in al + be), arb(0)), [((x - y) + abs(x - y)) / 2 for x, y in zip(al, be)]
            pm = [((y - x) + abs(y - x)) / 2 for x, y in zip(al, be)]
            prof = [arb(0), 2 * sum((x * y for x, y in zip(al, be)), arb(0)) / D,
                    sum((t * t for t in pp), arb(0)) / D, sum((t * t for t in pm), arb(0)) / D]
            out.append(sum(((a - arb(b)) * (a - arb(b)) for a, b in zip(prof, limit_profile(u / v))), arb(0)).sqrt())
        xs, ys = [arb(n).log() for n in sizes], [t.log() for t in out]
        mx, my = sum(xs, arb(0)) / len(xs), sum(ys, arb(0)) / len(ys)
        slope = sum(((a - mx) * (b - my) for a, b in zip(xs, ys)), arb(0)) / sum(((a - mx) * (a - mx) for a in xs), arb(0))
    return out, slope
