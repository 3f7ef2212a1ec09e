"""The kernel's own samplers and expectations of random inputs (empirical and exact evidence of
Appendix A, Lemma 6 and Theorem 5; docs/CERTIFICATES.md).  Written independently of the producer
(qkverify/math): the witness checkers of :mod:`..witnesses` call these and compare.

* Seeds: the first 8 bytes of SHA-256 of the certificate's canonical input (:func:`seed`); no
  input states one.
* Law inputs: entry laws are tuples ``("atoms", [(v, p), …])``, ``("gauss", m, v)`` (v > 0) and
  ``("pareto", x_m, α, symmetric)``; :func:`moments` evaluates Lean's four integrals (Bochner:
  0 for a non-integrable integrand) in closed form, :func:`enumerate_energy` sums over value
  patterns, :func:`monte_carlo` re-draws the sample of sampler ``mt19937-boxmuller/2``.
* Lobes inputs: :func:`path_outcome` recomputes one path of sampler ``mt19937-lobes/2``;
  :func:`sign_threshold` the sign test's k*.
Every loop is bounded by the certificate's size and the caps of :mod:`.limits`."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random

from flint import arb, fmpq, fmpq_mat

from .. import limits
from ..algebra import precision
from ..jsonio import Undecided, require

GRID, ACC, HALF = 32, 64, 32
PRECS = (64, 128, 256, 512, 1024, 4096)
U_BITS = 54
PATH_BITS = (128, 512, 2048)
SEED_DERIVATION = "sha256-canonical-input"


# -- seeds, levels, floors -------------------------------------------------------------------


def seed(inp: dict) -> int:
    """The first 8 bytes (big-endian) of SHA-256 of the canonical JSON of the input object."""
    canon = json.dumps(inp, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return int.from_bytes(hashlib.sha256(canon).digest()[:8], "big")


def delta_ok(d: fmpq) -> bool:
    """δ = 1/k with 20 ≤ k ≤ 10¹² (the schema's pattern says the same)."""
    return d.p == 1 and 20 <= d.q <= 10 ** 12


def floor_ball(y: arb) -> int | None:
    """⌊y⌋ when every point of the ball has it: the floor of the exact midpoint m·2^e, checked."""
    if not y.is_finite():
        return None
    m, e = (int(t) for t in y.mid().man_exp())
    if m.bit_length() + e > 1 << 20:
        return None
    k = m << e if e >= 0 else m >> -e
    return k if (y >= k and y < k + 1) else None


def floor_of(f, what: str) -> int:
    """⌊f()⌋ at the precisions PRECS in turn; Undecided when 4096 bits do not decide it."""
    for p in PRECS:
        with precision(p):
            k = floor_ball(f())
        if k is not None:
            return k
    raise Undecided(f"{what} is not decided at {PRECS[-1]} bits")


# -- entry laws -------------------------------------------------------------------------------


def raw(l: tuple, k: int) -> fmpq | None:
    """E[X^k] (k ≤ 4), None when E|X|^k = ∞."""
    if l[0] == "atoms":
        return sum((p * v ** k for v, p in l[1]), fmpq(0))
    if l[0] == "gauss":
        m, v = l[1], l[2]
        return [fmpq(1), m, m * m + v, m ** 3 + 3 * m * v, m ** 4 + 6 * m * m * v + 3 * v * v][k]
    if k == 0:
        return fmpq(1)
    if k >= l[2]:
        return None
    return fmpq(0) if l[3] and k % 2 else l[2] * l[1] ** k / (l[2] - k)


def m1(l: tuple) -> fmpq:
    """Lean's ∫ X (0 when X is not integrable)."""
    r = raw(l, 1)
    return fmpq(0) if r is None else r


def m2(l: tuple) -> fmpq:
    """Lean's ∫ X² (0 when X is not square-integrable)."""
    r = raw(l, 2)
    return fmpq(0) if r is None else r


def l2(l: tuple) -> bool:
    return raw(l, 2) is not None


def l1(l: tuple) -> bool:
    return raw(l, 1) is not None


def zero(l: tuple) -> bool:
    """The point mass at 0."""
    return l[0] == "atoms" and l[1] == [(0, 1)]


def negated(l: tuple) -> tuple | None:
    if l[0] == "atoms":
        return ("atoms", sorted((-v, p) for v, p in l[1]))
    if l[0] == "gauss":
        return ("gauss", -l[1], l[2])
    return l if l[3] else None


# -- Lean's integrals of a law input ------------------------------------------------------------


def _assemble(Fd, Fo, To, ok: dict, why: str) -> tuple[dict, dict]:
    full = {"E_frobSq": Fd + Fo, "E_trace_mul_self": Fd + To, "E_frobSq_symPart": Fd + (Fo + To) / 2,
            "E_frobSq_skewPart": (Fo - To) / 2}
    vals = {k: (None if ok[k] is None else full[k] if ok[k] else fmpq(0)) for k in full}
    return vals, {k: why for k in full if ok[k] is None}


def moments(args: dict) -> tuple[dict, dict]:
    """({key: ∫ … or None}, {key: why undecided}) for ∫ frobSq L, ∫ tr(L·L), ∫ frobSq(symPart L),
    ∫ frobSq(skewPart L) as Lean's Bochner integral evaluates them.  Independent entries:
    iid E L_ab² = m2_ab, E L_ab L_ba = m1_ab m1_ba (a ≠ b); qk E L_ab² = Σ_r m2K m2Q + (Σ_r m1K m1Q)²
    − Σ_r m1K² m1Q², E L_ab L_ba = M_ab M_ba, M = m1Kᵀ m1Q; an integrand is integrable iff each
    of its independent summands is (frobSq, symPart: every L_ab ∈ L²; skewPart: every off-diagonal
    one; iid tr: diagonal ∈ L², every L_ab L_ba integrable; qk tr outside L²: undecided).  With
    copies, each product of entries is grouped by its independent variables (moments ≤ 4)."""
    N, n, g, uni = args["N"], args["n"], args["laws"], args["uniform"]
    if args["copies"]:
        return _dependent(args)
    if args["model"] == "iid":
        law = uni["L"]
        if law is not None:
            ok2 = l2(law) or N == 0
            pair = (l1(law) or zero(law)) or N < 2
            return _assemble(N * m2(law), N * (N - 1) * m2(law), N * (N - 1) * m1(law) ** 2,
                             {"E_frobSq": ok2, "E_frobSq_symPart": ok2, "E_frobSq_skewPart": ok2 or N < 2,
                              "E_trace_mul_self": ok2 and pair}, "")
        G = g["L"]
        Fd = sum((m2(G[i][i]) for i in range(N)), fmpq(0))
        Fo = sum((m2(G[i][j]) for i in range(N) for j in range(N) if i != j), fmpq(0))
        To = sum((m1(G[i][j]) * m1(G[j][i]) for i in range(N) for j in range(N) if i != j), fmpq(0))
        d2 = all(l2(G[i][i]) for i in range(N))
        o2 = all(l2(G[i][j]) for i in range(N) for j in range(N) if i != j)
        pr = all((l1(G[i][j]) and l1(G[j][i])) or zero(G[i][j]) or zero(G[j][i])
                 for i in range(N) for j in range(i + 1, N))
        return _assemble(Fd, Fo, To, {"E_frobSq": d2 and o2, "E_frobSq_symPart": d2 and o2,
                                      "E_frobSq_skewPart": o2, "E_trace_mul_self": d2 and pr}, "")
    why = "∫ tr(L·L) with an entry of W_K or W_Q outside L²: integrability not decided"
    term2 = lambda k, q: (l2(k) and l2(q)) or zero(k) or zero(q)  # noqa: E731
    lk, lq = uni["W_K"], uni["W_Q"]
    if lk is not None and lq is not None:
        ok2 = term2(lk, lq) or n == 0 or N == 0
        one = n * m2(lk) * m2(lq) + (n * m1(lk) * m1(lq)) ** 2 - n * m1(lk) ** 2 * m1(lq) ** 2
        return _assemble(N * one, N * (N - 1) * one, N * (N - 1) * (n * m1(lk) * m1(lq)) ** 2,
                         {"E_frobSq": ok2, "E_frobSq_symPart": ok2, "E_frobSq_skewPart": ok2 or N < 2,
                          "E_trace_mul_self": True if ok2 else None}, why)
    K, Q = g["W_K"], g["W_Q"]
    mat = lambda G, f: fmpq_mat(n, N, [f(l) for r in G for l in r])  # noqa: E731
    MK, MQ = mat(K, m1), mat(Q, m1)
    M = MK.transpose() * MQ
    E2 = mat(K, m2).transpose() * mat(Q, m2) - mat(K, lambda l: m1(l) ** 2).transpose() * mat(Q, lambda l: m1(l) ** 2)
    Fd = sum((E2[a, a] + M[a, a] ** 2 for a in range(N)), fmpq(0))
    Fall = sum(E2.entries(), fmpq(0)) + sum((x * x for x in M.entries()), fmpq(0))
    To = sum((M[a, b] * M[b, a] for a in range(N) for b in range(N) if a != b), fmpq(0))
    if all(l2(l) for G in (K, Q) for r in G for l in r):
        a2 = o2 = True
    else:
        good = [[all(term2(K[r][a], Q[r][b]) for r in range(n)) for b in range(N)] for a in range(N)]
        a2, o2 = all(map(all, good)), all(good[a][b] for a in range(N) for b in range(N) if a != b)
    return _assemble(Fd, Fall - Fd, To, {"E_frobSq": a2, "E_frobSq_symPart": a2, "E_frobSq_skewPart": o2,
                                         "E_trace_mul_self": True if a2 else None}, why)


def _dependent(args: dict) -> tuple[dict, dict]:
    N, n, g = args["N"], args["n"], args["laws"]
    cost = N * N * (n * n if args["model"] == "qk" else 1)
    limits.over("terms of the moments of dependent entries", cost, limits.MAX_DEPENDENT_TERMS, "MAX_DEPENDENT_TERMS")
    src = args["copies"]          # {(blk, r, c): ((blk, r, c), sign)}
    bad = []

    def E(*es) -> fmpq:
        count, sign = {}, 1
        for e in es:
            b, s = src.get(e, (e, 1))
            count[b], sign = count.get(b, 0) + 1, sign * s
        out = fmpq(sign)
        for b, k in count.items():
            r = raw(g[b[0]][b[1]][b[2]], k)
            if r is None:
                bad.append(b)
                return fmpq(0)
            out *= r
        return out

    if args["model"] == "iid":
        L = lambda a, b: ("L", a, b)  # noqa: E731
        pairs = lambda f: sum((f(a, b) for a in range(N) for b in range(N) if a != b), fmpq(0))  # noqa: E731
        Fd = sum((E(L(a, a), L(a, a)) for a in range(N)), fmpq(0))
        Fo, To = pairs(lambda a, b: E(L(a, b), L(a, b))), pairs(lambda a, b: E(L(a, b), L(b, a)))
    else:
        LL = lambda a, b, c, d: sum((E(("W_K", r, a), ("W_Q", r, b), ("W_K", s, c), ("W_Q", s, d))  # noqa: E731
                                     for r in range(n) for s in range(n)), fmpq(0))
        Fd = sum((LL(a, a, a, a) for a in range(N)), fmpq(0))
        Fo = sum((LL(a, b, a, b) for a in range(N) for b in range(N) if a != b), fmpq(0))
        To = sum((LL(a, b, b, a) for a in range(N) for b in range(N) if a != b), fmpq(0))
    if bad:
        why = "dependent entries with an infinite moment (a Pareto law): integrability not decided"
        return {k: None for k in ("E_frobSq", "E_trace_mul_self", "E_frobSq_symPart", "E_frobSq_skewPart")}, \
            {k: why for k in ("E_frobSq", "E_trace_mul_self", "E_frobSq_symPart", "E_frobSq_skewPart")}
    return _assemble(Fd, Fo, To, {k: True for k in ("E_frobSq", "E_trace_mul_self", "E_frobSq_symPart",
                                                   "E_frobSq_skewPart")}, "")


# -- exact expectations of the ratios: enumeration -------------------------------------------------


def zero_product(args: dict) -> bool:
    """qk with every entry of W_K, or every entry of W_Q, the point mass at 0: L = 0 surely."""
    return args["model"] == "qk" and any(args["distinct"][b] and all(zero(l) for l in args["distinct"][b])
                                         for b in ("W_K", "W_Q"))


def _flat(args: dict) -> tuple[list, dict, list]:
    """Entry laws in draw order, the copy map on flat indices {target: (source, sign)}, the free indices."""
    N, names = args["N"], list(args["laws"])
    rows = {k: len(args["laws"][k]) for k in names}
    off, o = {}, 0
    for k in names:
        off[k], o = o, o + rows[k] * N
    laws = [l for k in names for r in args["laws"][k] for l in r]
    idx = lambda e: off[e[0]] + e[1] * N + e[2]  # noqa: E731
    cmap = {idx(t): (idx(s), sign) for t, (s, sign) in args["copies"].items()}
    return laws, cmap, [i for i in range(len(laws)) if i not in cmap]


def _to_L(args: dict, x: list) -> list:
    N, n = args["N"], args["n"]
    if args["model"] == "iid":
        return x
    return [sum(x[r * N + a] * x[(n + r) * N + b] for r in range(n)) for a in range(N) for b in range(N)]


def _FT(N: int, L: list) -> tuple:
    return sum(v * v for v in L), sum(L[a * N + b] * L[b * N + a] for a in range(N) for b in range(N))


def enumerate_energy(args: dict) -> tuple[int, fmpq, fmpq]:
    """(patterns, E[‖S‖²/‖L‖²], E[‖T‖²/‖L‖²]) over every value pattern of the free entries (x/0 = 0);
    a zero product has one pattern and both ratios 0."""
    if zero_product(args):
        return 1, fmpq(0), fmpq(0)
    laws, cmap, free = _flat(args)
    require(all(laws[i][0] == "atoms" for i in free), "enumeration witness", "an entry law is not finite")
    count = 1
    for i in free:
        count *= len(laws[i][1])
        limits.over("value patterns", count, limits.ENUM_LIMIT, "ENUM_LIMIT")
    N, eS, eT = args["N"], fmpq(0), fmpq(0)
    x = [fmpq(0)] * len(laws)
    for pat in itertools.product(*(laws[i][1] for i in free)):
        p = fmpq(1)
        for i, (v, w) in zip(free, pat):
            x[i], p = v, p * w
        for t, (s, sign) in cmap.items():
            x[t] = sign * x[s]
        F, tr = _FT(N, _to_L(args, x))
        if F:
            eS, eT = eS + p * (F + tr) / (2 * F), eT + p * (F - tr) / (2 * F)
    return count, eS, eT


# -- the Monte Carlo sampler mt19937-boxmuller/2 ---------------------------------------------------


def _log2_floor(v: fmpq) -> int:
    t = int(v.p).bit_length() - int(v.q).bit_length()
    return t - ((fmpq(2) ** t if t >= 0 else fmpq(1, 2 ** -t)) > v)


def _grid(l: tuple) -> fmpq:
    """1/s: 2^(32 − e), e = ⌊⌊log₂ v⌋/2⌋ (Gaussian) or ⌊log₂ x_m⌋ (Pareto)."""
    e = _log2_floor(l[2]) // 2 if l[0] == "gauss" else _log2_floor(l[1])
    return fmpq(2) ** (GRID - e) if GRID >= e else fmpq(1, 2 ** (e - GRID))


def _bm(a: int, c: int) -> tuple[arb, arb]:
    r = (arb(fmpq(a + 1, 1 << 53)).log() * -2).sqrt()
    s, co = arb.sin_cos_pi_fmpq(fmpq(c, 1 << 52))
    return r * co, r * s


def _drawer(l: tuple, den: int):
    """The draw of one entry, times den (the common denominator), by the documented sampler."""
    if l[0] == "atoms":
        D = math.lcm(*(int(p.q) for _, p in l[1]))
        cum, vals = list(itertools.accumulate(int(p * D) for _, p in l[1])), [int(x * den) for x, _ in l[1]]

        def draw(rng, stream):
            if D == 1:
                return vals[0]
            t = rng.getrandbits((D - 1).bit_length())
            while t >= D:
                t = rng.getrandbits((D - 1).bit_length())
            return vals[next(i for i, c in enumerate(cum) if t < c)]

        return draw
    c = _grid(l)
    mult = fmpq(den) / c
    if l[0] == "pareto":
        xc, alpha, sym = l[1] * c, l[2], l[3]

        def draw(rng, stream):
            a = rng.getrandbits(53)
            k = floor_of(lambda: arb(xc) * (-(arb(fmpq(a + 1, 1 << 53)).log()) / arb(alpha)).exp() + arb(fmpq(1, 2)),
                         "a Pareto draw")
            return (-k if sym and rng.getrandbits(1) else k) * int(mult.p)

        return draw
    shift, var = l[1] * c + fmpq(1, 2), l[2] * c * c
    base = (arb(shift), arb(var).sqrt())

    def draw(rng, stream):
        if not stream:
            a, b = rng.getrandbits(53), rng.getrandbits(53)
            stream.extend(zip(((a, b, 1), (a, b, 0)), reversed(_bm(a, b))))
        (a, b, which), z = stream.pop()
        k = floor_ball(base[0] + base[1] * z)
        if k is None:
            k = floor_of(lambda: arb(shift) + arb(var).sqrt() * _bm(a, b)[which], "a Gaussian draw")
        return k * int(mult.p)

    return draw


def mc_caps(args: dict) -> None:
    """Undecided, naming the cap, when the input's Monte Carlo experiment passes MAX_MC_DRAWS or
    MAX_MC_PRODUCT (or there is none)."""
    mc = args["monte_carlo"]
    if mc is None:
        raise Undecided("the input has no Monte Carlo parameters")
    m, N, n = mc["samples"], args["N"], args["n"]
    _, _, free = _flat(args)
    limits.over("Monte Carlo draws", m * len(free), limits.MAX_MC_DRAWS, "MAX_MC_DRAWS")
    limits.over("Monte Carlo multiply-adds", m * (N * N * (n if args["model"] == "qk" else 1) + N * N),
                limits.MAX_MC_PRODUCT, "MAX_MC_PRODUCT")


def monte_carlo(args: dict, seed_: int) -> dict:
    """Re-draw the sample: Σ⌊2⁶⁴ r⌋ (r_S, r_T), #{L = 0}, h = ⌈2³²√(ln(2/δ)/(2m))⌉/2³² and the
    intervals [Σ/(m2⁶⁴) − h, (Σ + m)/(m2⁶⁴) + h] ∩ [0, 1].  Undecided past MAX_MC_DRAWS draws or
    MAX_MC_PRODUCT multiply-adds."""
    from ..jsonio import rat

    mc = args["monte_carlo"]
    require(mc is not None, "input", "a monte_carlo witness needs the input's monte_carlo parameters")
    m, delta, N, n = mc["samples"], rat(mc["delta"]), args["N"], args["n"]
    require(delta_ok(delta), "input", "monte_carlo.delta must be 1/k with 20 ≤ k ≤ 10^12")
    laws, cmap, free = _flat(args)
    limits.over("Monte Carlo draws", m * len(free), limits.MAX_MC_DRAWS, "MAX_MC_DRAWS")
    limits.over("Monte Carlo multiply-adds", m * (N * N * (n if args["model"] == "qk" else 1) + N * N),
                limits.MAX_MC_PRODUCT, "MAX_MC_PRODUCT")
    den = math.lcm(1, *(int(x.q) for l in laws if l[0] == "atoms" for x, _ in l[1]),
                   *(int(_grid(l).p) for l in laws if l[0] != "atoms"))
    rng, stream, sums = random.Random(seed_), [], [0, 0, 0]
    with precision(PRECS[0]):
        draws = [(i, _drawer(laws[i], den)) for i in free]
        x = [0] * len(laws)
        for _ in range(m):
            for i, f in draws:
                x[i] = f(rng, stream)
            for t, (s, sign) in cmap.items():
                x[t] = sign * x[s]
            F, tr = _FT(N, _to_L(args, x))
            if F == 0:
                sums[2] += 1
            else:
                sums[0], sums[1] = sums[0] + ((F + tr) << ACC) // (2 * F), sums[1] + ((F - tr) << ACC) // (2 * F)
    k = floor_of(lambda: -((arb(2) / arb(delta)).log() / (2 * m)).sqrt() * (1 << HALF), "the Hoeffding half-width")
    h, d = fmpq(-k, 1 << HALF), fmpq(m) * (1 << ACC)
    iv = [(max(fmpq(0), s / d - h), min(fmpq(1), (s + m) / d + h)) for s in sums[:2]]
    return {"sums": sums, "halfwidth": h, "intervals": iv, "samples": m, "delta": delta}


# -- lobes inputs: sampler mt19937-lobes/2 -----------------------------------------------------------


def sign_threshold(paths: int, delta: fmpq) -> int:
    """k* = max{k : P(Bin(paths, ½) ≤ k) ≤ δ}, −1 when none."""
    acc, k = 0, -1
    for j in range(paths + 1):
        acc += math.comb(paths, j)
        if fmpq(acc, 1 << paths) > delta:
            return k
        k = j
    return k


def _sample(law: tuple, ks: list) -> arb:
    """F⁻¹ of the uniforms k/2^54 as a ball: ("exponential", λ), ("gamma", k, θ), ("uniform", lo, hi),
    ("pareto", x_m, α)."""
    f = law[0]
    if f == "uniform":
        return arb(law[1]) + arb(law[2] - law[1]) * arb(fmpq(ks[0], 1 << U_BITS))
    logs = [arb(fmpq(k, 1 << U_BITS)).log() for k in ks]
    if f == "exponential":
        return -logs[0] / arb(law[1])
    if f == "gamma":
        return -arb(law[2]) * sum(logs, arb(0))
    return arb(law[1]) * (-logs[0] / arb(law[2])).exp()


def per_sample(law: tuple) -> int:
    return law[1] if law[0] == "gamma" else 1


def draw_paths(args: dict, seed_: int) -> list:
    """[(uniforms of X_i, uniforms of X'_i) for i < n_max] per path, from one stream."""
    rng, nmax = random.Random(seed_), args["sizes"][-1]
    px, pxp = per_sample(args["law_X"]), per_sample(args["law_Xprime"])
    limits.over("uniforms of the lobes study", args["paths"] * nmax * (px + pxp), limits.MAX_LOBE_UNIFORMS,
                "MAX_LOBE_UNIFORMS")
    draw = lambda k: [2 * rng.getrandbits(U_BITS - 1) + 1 for _ in range(k)]  # noqa: E731
    out = []
    for _ in range(args["paths"]):
        xs, xps = [], []
        for _ in range(nmax):
            xs.append(draw(px))
            xps.append(draw(pxp))
        out.append((xs, xps))
    return out


def _sorted_desc(balls: list) -> list:
    los = sorted((b.lower() for b in balls), reverse=True)
    his = sorted((b.upper() for b in balls), reverse=True)
    return [a.union(b) for a, b in zip(los, his)]


def _pos(x: arb) -> arb:
    return (x + abs(x)) / 2


def limit_profile(rho: fmpq) -> list:
    d, pos = 1 + rho * rho, lambda v: max(v, fmpq(0))
    return [fmpq(0), 2 * rho / d, pos(1 - rho) ** 2 / d, pos(rho - 1) ** 2 / d]


def _quantity(args: dict, what: str, path, n: int) -> arb:
    """D_n of one path at the current precision: Lemma 6's δ_n or Theorem 5's ‖π(S_n) − limitProfile ρ‖."""
    xs, xps = path
    if args["dependence"] == "repeated":
        X, Xp = [_sample(args["law_X"], xs[0])] * n, [_sample(args["law_Xprime"], xps[0])] * n
    else:
        X = [_sample(args["law_X"], k) for k in xs[:n]]
        Xp = [_sample(args["law_Xprime"], k) for k in xps[:n]]
    u, v = args["u"], args["v"]
    rho = u / v if v != 0 else fmpq(0)
    if what == "delta":
        a, b = _sorted_desc([arb(v) * x for x in X]), _sorted_desc([arb(u) * x for x in Xp])
        den = sum((x * x for x in a), arb(0))
        if den == 0:
            return arb(0)
        return (sum(((y - arb(rho) * x) * (y - arb(rho) * x) for x, y in zip(a, b)), arb(0)) / den).sqrt()
    S = args["S"]
    seq = []
    for x, y in zip(X, Xp):
        seq += [arb(S["scale_pos"]) * x, -arb(S["scale_neg"]) * y]
    if S["extra_zeros"] < 0:
        seq = seq[:max(len(seq) + S["extra_zeros"], 0)]
    if S["form"] == "symmetric" or S["coupling"] == 0:
        eig, F, T = seq, sum((t * t for t in seq), arb(0)), arb(0)
    else:
        q, eig, F, T = arb(S["coupling"]), [], arb(0), arb(0)
        for i in range(0, len(seq), 2):
            p = seq[i]
            if i + 1 == len(seq):
                eig, F = eig + [p], F + p * p
                continue
            m = seq[i + 1]
            c, r = (p + m) / 2, (((p - m) / 2) * ((p - m) / 2) + (q * p / 2) * (q * p / 2)).sqrt()
            eig += [c + r, c - r]   # the producer's order of operations: the same balls bit for bit
            F, T = F + (p * p + m * m + (q * p) * (q * p)), T + (q * p) * (q * p) / 2
    a, b = _sorted_desc([_pos(e) for e in eig]), _sorted_desc([_pos(-e) for e in eig])
    prof = [T, 2 * sum((x * y for x, y in zip(a, b)), arb(0)), sum((_pos(x - y) * _pos(x - y) for x, y in zip(a, b)), arb(0)),
            sum((_pos(y - x) * _pos(y - x) for x, y in zip(a, b)), arb(0))]
    prof = [t / F for t in prof] if F != 0 else [arb(0)] * 4
    return sum(((t - arb(c)) * (t - arb(c)) for t, c in zip(prof, limit_profile(rho))), arb(0)).sqrt()


def path_outcome(args: dict, what: str, path, bits: int) -> str | None:
    """The comparison of D_{n_max} with D_{n_min} at ``bits``: zero, down, up, or None (overlap)."""
    lo_n, hi_n = args["sizes"][0], args["sizes"][-1]
    with precision(bits):
        lo, hi = _quantity(args, what, path, lo_n), _quantity(args, what, path, hi_n)
        if hi == 0:
            return "zero"
        if not (lo.is_finite() and hi.is_finite()):
            return None
        return "down" if hi < lo else "up" if hi > lo else None


# -- exact routes beyond patterns ----------------------------------------------------------------

def convolution_energy(args: dict) -> tuple[fmpq, fmpq]:
    """iid finite laws, no copies: the joint law of (2‖S‖², 2‖T‖²) (values times a square scale) as
    the convolution of the N diagonal laws (2x², 0) and the N(N−1)/2 pair laws ((x+y)², (x−y)²);
    E[r_S] = Σ p·A/(A+B), E[r_T] = Σ p·B/(A+B) over A + B ≠ 0.  Undecided past the caps."""
    N, G = args["N"], args["laws"]["L"]
    require(not args["copies"] and all(l[0] == "atoms" for l in args["distinct"]["L"]), "enumeration witness",
            "the convolution needs finite laws and independent entries")
    limits.over("convolution steps", N * (N + 1) // 2, limits.CONV_MAX_WORK, "CONV_MAX_WORK")
    scale = math.lcm(1, *(int(v.q) for l in args["distinct"]["L"] for v, _ in l[1]))
    ints = lambda l: [(int(v * scale), p) for v, p in l[1]]  # noqa: E731
    dist, work = {(0, 0): fmpq(1)}, 0

    def conv(contrib: dict) -> None:
        nonlocal dist, work
        work += len(dist) * len(contrib)
        limits.over("convolution products", work, limits.CONV_MAX_WORK, "CONV_MAX_WORK")
        out: dict = {}
        for (a, b), p in dist.items():
            for (c, d), r in contrib.items():
                out[(a + c, b + d)] = out.get((a + c, b + d), fmpq(0)) + p * r
        limits.over("values of a partial law", len(out), limits.CONV_MAX_SUPPORT, "CONV_MAX_SUPPORT")
        dist = out

    for i in range(N):
        c: dict = {}
        for x, p in ints(G[i][i]):
            c[(2 * x * x, 0)] = c.get((2 * x * x, 0), fmpq(0)) + p
        conv(c)
    for i in range(N):
        for j in range(i + 1, N):
            c = {}
            for x, p in ints(G[i][j]):
                for y, r in ints(G[j][i]):
                    k = ((x + y) ** 2, (x - y) ** 2)
                    c[k] = c.get(k, fmpq(0)) + p * r
            conv(c)
    eS = sum((p * fmpq(a, a + b) for (a, b), p in dist.items() if a + b), fmpq(0))
    eT = sum((p * fmpq(b, a + b) for (a, b), p in dist.items() if a + b), fmpq(0))
    return eS, eT


def one_dimensional(args: dict) -> tuple[fmpq, fmpq]:
    """N = 1 without copies: E[r_S] = P(L ≠ 0), E[r_T] = 0 (L is a number)."""
    require(args["N"] == 1 and not args["copies"], "enumeration witness", "one_dimensional needs N = 1, no copies")
    at0 = lambda l: dict(l[1]).get(fmpq(0), fmpq(0)) if l[0] == "atoms" else fmpq(0)  # noqa: E731
    cont = lambda l: l[0] != "atoms"  # noqa: E731
    if args["model"] == "iid":
        return 1 - at0(args["laws"]["L"][0][0]), fmpq(0)
    p0, fin = fmpq(1), []
    for k, q in zip((r[0] for r in args["laws"]["W_K"]), (r[0] for r in args["laws"]["W_Q"])):
        if cont(k) and cont(q):
            return fmpq(1), fmpq(0)
        if cont(k) or cont(q):
            p0 *= at0(q if cont(k) else k)
        else:
            fin.append((k[1], q[1]))
    limits.over("value patterns", math.prod(len(a) * len(b) for a, b in fin), limits.ENUM_LIMIT, "ENUM_LIMIT")
    pz = fmpq(0)
    for pat in itertools.product(*(itertools.product(a, b) for a, b in fin)):
        if sum((x[0] * y[0] for x, y in pat), fmpq(0)) == 0:
            pz += math.prod((x[1] * y[1] for x, y in pat), start=fmpq(1))
    return 1 - p0 * pz, fmpq(0)


def symmetric(args: dict) -> tuple[fmpq, fmpq]:
    """Copies that make L symmetric surely (iid: L_ji = L_ij, sign +1, for every i < j; qk: W_Q = s·W_K
    entry by entry with one sign s, or W_K = s·W_Q): ‖T‖² = 0, r_S = [L ≠ 0], so E[r_S] = 1 − P(L = 0),
    E[r_T] = 0, with P(L = 0) = Π over the free entries of L's upper triangle (iid) or of the source
    matrix (qk) of their atom at 0 (L = 0 iff they all vanish; they are independent)."""
    N, n, g, cp = args["N"], args["n"], args["laws"], args["copies"]
    tied = lambda a, b: cp.get(b) == (a, 1) or cp.get(a) == (b, 1)  # noqa: E731
    at0 = lambda l: dict(l[1]).get(fmpq(0), fmpq(0)) if l[0] == "atoms" else fmpq(0)  # noqa: E731
    if args["model"] == "iid":
        require(all(tied(("L", i, j), ("L", j, i)) for i in range(N) for j in range(i + 1, N)), "enumeration witness",
                "the copies do not make L symmetric")
        free = [("L", i, j) for i in range(N) for j in range(N) if ("L", i, j) not in cp]
    else:
        signs, src = set(), set()
        for r in range(n):
            for c in range(N):
                k, q = ("W_K", r, c), ("W_Q", r, c)
                hit = (cp.get(q, (None, 0)), "W_K") if cp.get(q, (None,))[0] == k else \
                    ((cp.get(k, (None, 0)), "W_Q") if cp.get(k, (None,))[0] == q else None)
                require(hit is not None, "enumeration witness", "the copies do not make W_Q = ±W_K")
                signs.add(hit[0][1])
                src.add(hit[1])
        require(len(signs) <= 1 and len(src) <= 1, "enumeration witness", "W_Q = ±W_K needs one sign and one source")
        b = src.pop() if src else "W_K"
        free = [(b, r, c) for r in range(n) for c in range(N) if (b, r, c) not in cp]
    p0 = fmpq(1)
    for e in free:
        p0 *= at0(g[e[0]][e[1]][e[2]])
    return 1 - p0, fmpq(0)
