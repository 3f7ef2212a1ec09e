"""Appendix A on a ``law`` input: Corollary 1 (IidBaseline.lean), Corollary 2
(QKProductBaseline.lean), Proposition 5 (LowRankExpectedEnergy.lean).

The input is a random matrix with independent entries, each a finite law or a Gaussian:
model ``iid`` gives L (N×N), model ``qk`` W_K, W_Q (n×N) and L = W_Kᵀ W_Q.  Moments are
expectations of polynomials, from the entries' means and variances.  E[‖S‖²/‖L‖²]
(x/0 = 0) is the sum over every value pattern of finite laws (at most ENUM_LIMIT), or
the kernel re-draws the certificate's Monte Carlo sample (sampler ``mt19937-boxmuller/1``,
docs/CERTIFICATES.md) and applies Hoeffding's bound: evidence empirical.  Lean's implicit
σ (σ_K, σ_Q, v, v_K, v_Q) is the second moment of its matrix's first entry (1 if none)."""

from __future__ import annotations

import itertools
import math
import random

from flint import arb, fmpq, fmpq_mat

from ..algebra import precision
from ..derive import Ctx, frob, lean_div, trace
from ..jsonio import Invalid, Undecided, qstr, rat, require
from ..table import A, predicate, thm

C1, C2, P5 = "integral_frobSq_iid", "integral_frobSq_qk", "expected_symmetric_energy_low_rank_qk"
LAW = ("law",)
ENUM_LIMIT, WORK_LIMIT = 1 << 16, 1 << 24  # value patterns summed; Monte Carlo draws (samples × entries)
GRID, ACC, HALF = 32, 64, 32
PRECS = (64, 128, 256, 512, 1024, 4096)


def _law(j: dict) -> tuple:
    """("atoms", [(v, p), …], m1, m2) or ("gauss", mean, variance > 0, m2); variance 0 is a point mass."""
    if "gaussian" in j:
        m, v = rat(j["gaussian"]["mean"]), rat(j["gaussian"]["variance"])
        require(v >= 0, "input", "a Gaussian variance must be ≥ 0")
        if v:
            return ("gauss", m, v, v + m * m)
        at = [(m, fmpq(1))]
    else:
        at = [(rat(x), rat(p)) for x, p in j["atoms"]]
        ok = all(p > 0 for _, p in at) and sum(p for _, p in at) == 1 and all(a[0] < b[0] for a, b in zip(at, at[1:]))
        require(ok, "input", "a finite law needs strictly increasing atoms with positive probabilities summing to 1")
    return ("atoms", at, sum(p * x for x, p in at), sum(p * x * x for x, p in at))


def _grids(q: Ctx) -> dict:
    def build():
        inp, N = q.inp, q.inp["N"]
        rows, out = (N if inp["model"] == "iid" else inp["n"]), {}
        for k in ("L",) if inp["model"] == "iid" else ("W_K", "W_Q"):
            x = inp[k]
            out[k] = [[_law(x)] * N for _ in range(rows)] if isinstance(x, dict) else [[_law(l) for l in r] for r in x]
            require(len(out[k]) == rows and all(len(r) == N for r in out[k]), "input", f"{k} must be {rows}×{N} laws")
        return out

    return q.memo("laws", build)


def _block(q: Ctx, name: str) -> list:
    g = _grids(q)
    if name not in g:
        raise Invalid("input", f"an input of model {q.inp['model']} has no entry laws of {name}")
    return [l for r in g[name] for l in r]


def _m1(l: tuple) -> fmpq:
    return l[1] if l[0] == "gauss" else l[2]


def _s2(q: Ctx, name: str) -> fmpq:
    b = _block(q, name)
    return b[0][3] if b else fmpq(1)


def _gauss0(l: tuple, v: fmpq) -> bool:
    """The law is gaussianReal 0 v (v = 0: the point mass at 0)."""
    return (l[0] == "gauss" and l[1] == 0 and l[2] == v) or (v == 0 and l[1] == [(0, 1)])


def _n(q: Ctx) -> int:
    return q.inp["n"] if q.kind in ("law", "weights") else q.mat("W_Q").nrows()


# hMemLp, hMeas, hIndep hold on every law input: a product of finite or Gaussian laws
for _pid in ("memLp_two", "WK_memLp_two", "WQ_memLp_two", "entries_aemeasurable", "entries_independent"):
    predicate(_pid, lambda q: _grids(q) is not None)
predicate("N_pos", lambda q: q.inp["N"] > 0)
predicate("n_pos", lambda q: _n(q) > 0)
predicate("n_le_N", lambda q: q.inp["n"] <= q.inp["N"])
for _x, _b in (("", "L"), ("WK_", "W_K"), ("WQ_", "W_Q")):
    predicate(_x + "mean_zero", lambda q, b=_b: all(_m1(l) == 0 for l in _block(q, b)))
    predicate(_x + ("second_moment_eq" if _x else "second_moment_eq_sigma_sq"),
              lambda q, b=_b: all(l[3] == _s2(q, b) for l in _block(q, b)))
    predicate(_x + "entries_gaussian", lambda q, b=_b: all(_gauss0(l, _s2(q, b)) for l in _block(q, b)))
for _p, _b in (("sigma", "L"), ("v", "L"), ("sigmaK", "W_K"), ("sigmaQ", "W_Q"), ("vK", "W_K"), ("vQ", "W_Q")):
    predicate(_p + "_ne_zero", lambda q, b=_b: _s2(q, b) != 0)


def _moments(q: Ctx) -> dict:
    """E L_ab L_cd under the product law from means M and variances V: iid, E L_ab² = M_ab² + V_ab and
    E L_ab L_ba = M_ab M_ba (a ≠ b); qk, E[K_ra K_sc] = MK_ra MK_sc + [r = s, a = c] VK_ra (and Q)."""
    def build():
        g, N = _grids(q), q.inp["N"]
        mat = lambda G, f: fmpq_mat(len(G), N, [f(l) for r in G for l in r])  # noqa: E731
        M, V = ({k: mat(G, _m1) for k, G in g.items()}, {k: mat(G, lambda l: l[3] - _m1(l) ** 2) for k, G in g.items()})
        if "L" in g:
            Mean, X = M["L"], V["L"]
        else:
            sq = {k: mat(G, lambda l: _m1(l) ** 2) for k, G in g.items()}
            Mean = M["W_K"].transpose() * M["W_Q"]
            X = V["W_K"].transpose() * (sq["W_Q"] + V["W_Q"]) + sq["W_K"].transpose() * V["W_Q"]
        eL, et = frob(Mean) + sum(X.entries(), fmpq(0)), trace(Mean * Mean) + trace(X)
        out = {"E_frobSq": eL, "E_trace_mul_self": et, "E_frobSq_symPart": (eL + et) / 2,
               "E_frobSq_skewPart": (eL - et) / 2}
        w = q.witness("moments", "L")
        bad = [k for k, v in out.items() if rat(w[k]) != v]
        require(not bad, "moments witness", f"{bad[0] if bad else ''} is {qstr(out[bad[0]]) if bad else ''}")
        return out

    return q.memo("moments", build)


def _to_L(q: Ctx, x: list) -> list:
    """The entries of L (row-major) from the drawn entries of the model."""
    N, n = q.inp["N"], q.inp.get("n", 0)
    if q.inp["model"] == "iid":
        return x
    return [sum(x[r * N + a] * x[(n + r) * N + b] for r in range(n)) for a in range(N) for b in range(N)]


def _FT(N: int, L: list) -> tuple:
    return sum(v * v for v in L), sum(L[a * N + b] * L[b * N + a] for a in range(N) for b in range(N))


def _enumerate(q: Ctx) -> tuple[fmpq, fmpq]:
    laws, N = [l for k in _grids(q) for l in _block(q, k)], q.inp["N"]
    require(all(l[0] == "atoms" for l in laws), "enumeration witness", "a Gaussian entry has no finite support")
    count, eS, eT = math.prod(len(l[1]) for l in laws), fmpq(0), fmpq(0)
    if count > ENUM_LIMIT:
        raise Undecided(f"{count} value patterns exceed the kernel's enumeration limit {ENUM_LIMIT} (use Monte Carlo)")
    for pat in itertools.product(*(l[1] for l in laws)):
        F, tr = _FT(N, _to_L(q, [v for v, _ in pat]))
        if F:
            p = math.prod((w for _, w in pat), start=fmpq(1))
            eS, eT = eS + p * (F + tr) / (2 * F), eT + p * (F - tr) / (2 * F)
    w = q.witness("enumeration", "energy")
    require((w["patterns"], rat(w["E_ratio_S"]), rat(w["E_ratio_T"])) == (count, eS, eT), "enumeration witness",
            f"the enumeration gives {count} patterns, E_ratio_S = {qstr(eS)}, E_ratio_T = {qstr(eT)}")
    return eS, eT


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


def _monte_carlo(q: Ctx) -> list[tuple[fmpq, fmpq]]:
    """Re-draw the sample, re-derive Σ⌊2⁶⁴ r⌋ (r_S, r_T), #{L = 0}, h = ⌈2³²√(ln(2/δ)/(2m))⌉/2³² and
    the intervals [Σ/(m2⁶⁴) − h, (Σ + m)/(m2⁶⁴) + h] ∩ [0, 1]; the witness must state exactly these."""
    mc = q.inp.get("monte_carlo")
    require(mc is not None, "input", "a monte_carlo witness needs the input's monte_carlo parameters")
    m, delta, N = mc["samples"], rat(mc["delta"]), q.inp["N"]
    require(0 < delta < 1, "input", "monte_carlo.delta must lie in (0, 1)")
    blocks = [_block(q, k) for k in _grids(q)]
    if m * sum(map(len, blocks)) > WORK_LIMIT:
        raise Undecided(f"{m * sum(map(len, blocks))} Monte Carlo draws exceed the kernel's limit {WORK_LIMIT}")
    rng, stream, sums = random.Random(mc["seed"]), [], [0, 0, 0]
    with precision(PRECS[0]):
        draws = []
        for b in blocks:  # each block drawn as integers: values times one common denominator
            den = math.lcm(1, *(int(x.q) for l in b if l[0] == "atoms" for x, _ in l[1]),
                           *(int(_c(l[2]).p) for l in b if l[0] == "gauss"))
            draws += [_drawer(l, den) for l in b]
        for _ in range(m):
            F, tr = _FT(N, _to_L(q, [f(rng, stream) for f in draws]))
            if F == 0:
                sums[2] += 1
            else:
                sums[0], sums[1] = sums[0] + ((F + tr) << ACC) // (2 * F), sums[1] + ((F - tr) << ACC) // (2 * F)
        k = _floor(lambda: -((arb(2) / arb(delta)).log() / (2 * m)).sqrt() * (1 << HALF))
    h, den = fmpq(-k, 1 << HALF), fmpq(m) * (1 << ACC)
    iv = [(max(fmpq(0), s / den - h), min(fmpq(1), (s + m) / den + h)) for s in sums[:2]]
    want = {"kind": "monte_carlo", "of": "energy", "sum_S": str(sums[0]), "sum_T": str(sums[1]),
            "zero_samples": sums[2], "halfwidth": qstr(h), "interval_S": [qstr(x) for x in iv[0]],
            "interval_T": [qstr(x) for x in iv[1]]}
    bad = [k for k in want if q.witness("monte_carlo", "energy")[k] != want[k]]
    require(not bad, "monte_carlo witness", f"{bad[0] if bad else ''} is {want[bad[0]] if bad else ''} "
            "for the re-drawn sample")
    return iv


def _ratio_is(q: Ctx, which: int, target: fmpq) -> bool:
    """E[‖S‖²/‖L‖²] (which = 0) or E[‖T‖²/‖L‖²] (1) equals target: exactly by enumeration, or
    empirically: target lies in the Hoeffding interval of the re-drawn sample."""
    if ("enumeration", "energy") in q.witnesses:
        return q.memo("enum", lambda: _enumerate(q))[which] == target
    lo, hi = q.memo("mc", lambda: _monte_carlo(q))[which]
    q.empirical = True
    return lo <= target <= hi


def _N(q: Ctx) -> fmpq:
    return fmpq(q.inp["N"])


def _t(q: Ctx, sgn: int) -> fmpq:
    """(N+1)/(2N) or (N−1)/(2N) with x/0 = 0."""
    return lean_div(_N(q) + sgn, 2 * _N(q))


def _v(q: Ctx) -> fmpq:
    return _s2(q, "L") if q.inp["model"] == "iid" else _n(q) * _s2(q, "W_K") * _s2(q, "W_Q")


def _is(key: str, f):
    return lambda q: _moments(q)[key] == f(_N(q)) * _v(q)


def _div(key: str, sgn: int):
    return lambda q: lean_div(_moments(q)[key], _moments(q)["E_frobSq"]) == _t(q, sgn)


SQ, SYM, SKEW = (lambda N: N * N), (lambda N: N * (N + 1) / 2), (lambda N: N * (N - 1) / 2)
IND, MEM, MEAN, VAR = (("hIndep", "entries_independent"), ("hMemLp", "memLp_two"), ("hMean", "mean_zero"),
                       ("hVar", "second_moment_eq_sigma_sq"))
C1R = (IND, MEM, MEAN, VAR, ("hσ", "sigma_ne_zero"), ("hN", "N_pos"))
GAU = (IND, ("hMeas", "entries_aemeasurable"), ("hLaw", "entries_gaussian"), ("hv", "v_ne_zero"), ("hN", "N_pos"))
QK = (IND, ("hKL2", "WK_memLp_two"), ("hQL2", "WQ_memLp_two"), ("hKMean", "WK_mean_zero"), ("hQMean", "WQ_mean_zero"),
      ("hKVar", "WK_second_moment_eq"), ("hQVar", "WQ_second_moment_eq"))
QKR = QK + (("hσK", "sigmaK_ne_zero"), ("hσQ", "sigmaQ_ne_zero"), ("hn", "n_pos"), ("hN", "N_pos"))
LR = (("hn", "n_pos"), ("hnN", "n_le_N"), ("hvK", "vK_ne_zero"), ("hvQ", "vQ_ne_zero"),
      ("hmeas", "entries_aemeasurable"), ("hindep", "entries_independent"), ("hlawK", "WK_entries_gaussian"),
      ("hlawQ", "WQ_entries_gaussian"))
for _name, _st, _bs, _fn in (
        (C1, C1, (MEM, VAR), _is("E_frobSq", SQ)),
        ("integral_frobSq_symPart_iid", C1, (IND, MEM, MEAN, VAR), _is("E_frobSq_symPart", SYM)),
        ("integral_frobSq_skewPart_iid", C1, (IND, MEM, MEAN, VAR), _is("E_frobSq_skewPart", SKEW)),
        ("integral_frobSq_symPart_div_integral_frobSq_iid", C1, C1R, _div("E_frobSq_symPart", 1)),
        ("integral_frobSq_skewPart_div_integral_frobSq_iid", C1, C1R, _div("E_frobSq_skewPart", -1)),
        ("integral_frobSq_symPart_div_frobSq_gaussian", C1, GAU, lambda q: _ratio_is(q, 0, _t(q, 1))),
        ("integral_frobSq_skewPart_div_frobSq_gaussian", C1, GAU, lambda q: _ratio_is(q, 1, _t(q, -1))),
        (C2, C2, QK, _is("E_frobSq", SQ)),
        ("integral_trace_mul_self_qk", C2, QK, _is("E_trace_mul_self", lambda N: N)),
        ("integral_frobSq_symPart_qk", C2, QK, _is("E_frobSq_symPart", SYM)),
        ("integral_frobSq_skewPart_qk", C2, QK, _is("E_frobSq_skewPart", SKEW)),
        ("integral_frobSq_symPart_div_integral_frobSq_qk", C2, QKR, _div("E_frobSq_symPart", 1)),
        ("integral_frobSq_skewPart_div_integral_frobSq_qk", C2, QKR, _div("E_frobSq_skewPart", -1)),
        (P5, P5, LR, lambda q: _ratio_is(q, 0, _t(q, 1))),
        ("expected_skew_energy_low_rank_qk", P5, LR, lambda q: _ratio_is(q, 1, _t(q, -1)))):
    thm(A + _name, _st, LAW, _bs, _fn)
