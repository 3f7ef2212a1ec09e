"""Appendix A on a ``law`` input: Corollary 1 (IidBaseline.lean), Corollary 2
(QKProductBaseline.lean), Proposition 5 (LowRankExpectedEnergy.lean).

A law input is a random matrix with independent entries, each a finite law (exact atoms)
or a Gaussian (exact mean and variance): model ``iid`` gives L (N×N), model ``qk`` gives
W_K, W_Q (n×N) and L = W_Kᵀ W_Q.  Moments are expectations of polynomials under the
product law, from the entries' means and variances.  E[‖S‖²/‖L‖²] (x/0 = 0) is a sum over
every value pattern when the laws are finite (at most ENUM_LIMIT patterns); otherwise the
kernel re-generates the certificate's Monte Carlo sample by the documented sampler
(docs/CERTIFICATES.md, ``mt19937-boxmuller/1``) and applies Hoeffding's bound: evidence
empirical.  The implicit σ (σ_K, σ_Q, v, v_K, v_Q) of a Lean statement is instantiated
with the second moment of the first entry of its matrix (1 when there is no entry)."""

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
ENUM_LIMIT = 1 << 16   # value patterns the kernel sums over
WORK_LIMIT = 1 << 24   # Monte Carlo entries drawn (samples × entries per sample)
GRID, ACC, HALF = 32, 64, 32
PRECS = (64, 128, 256, 512, 1024, 4096)


def _law(j: dict) -> tuple:
    """("atoms", [(v, p), …]) or ("gauss", mean, variance > 0)."""
    if "atoms" in j:
        at = [(rat(v), rat(p)) for v, p in j["atoms"]]
        require(all(p > 0 for _, p in at) and sum((p for _, p in at), fmpq(0)) == 1, "input",
                "a finite law's probabilities must be positive and sum to 1")
        require(all(a[0] < b[0] for a, b in zip(at, at[1:])), "input", "a finite law's atoms must increase strictly")
        return ("atoms", at)
    m, v = rat(j["gaussian"]["mean"]), rat(j["gaussian"]["variance"])
    require(v >= 0, "input", "a Gaussian variance must be ≥ 0")
    return ("atoms", [(m, fmpq(1))]) if v == 0 else ("gauss", m, v)


def _grids(q: Ctx) -> dict:
    def build():
        inp, N = q.inp, q.inp["N"]
        rows = N if inp["model"] == "iid" else inp["n"]
        out = {}
        for k in ("L",) if inp["model"] == "iid" else ("W_K", "W_Q"):
            x = inp[k]
            g = [[_law(x)] * N for _ in range(rows)] if isinstance(x, dict) else [[_law(l) for l in r] for r in x]
            require(len(g) == rows and all(len(r) == N for r in g), "input", f"{k} must be {rows}×{N} laws")
            out[k] = g
        return out

    return q.memo("laws", build)


def _block(q: Ctx, name: str) -> list:
    g = _grids(q)
    if name not in g:
        raise Invalid("input", f"an input of model {q.inp['model']} has no entry laws of {name}")
    return [l for r in g[name] for l in r]


def _m1(l: tuple) -> fmpq:
    return l[1] if l[0] == "gauss" else sum((p * v for v, p in l[1]), fmpq(0))


def _m2(l: tuple) -> fmpq:
    return l[2] + l[1] ** 2 if l[0] == "gauss" else sum((p * v * v for v, p in l[1]), fmpq(0))


def _s2(q: Ctx, name: str) -> fmpq:
    """The implicit σ² (v) the check instantiates: the first entry's second moment."""
    b = _block(q, name)
    return _m2(b[0]) if b else fmpq(1)


def _centred_gauss(l: tuple, v: fmpq) -> bool:
    """The law is gaussianReal 0 v (v = 0: the point mass at 0)."""
    return (l[0] == "gauss" and l[1] == 0 and l[2] == v) or (v == 0 and l == ("atoms", [(fmpq(0), fmpq(1))]))


def _n(q: Ctx) -> int:
    if q.kind in ("law", "weights"):
        return q.inp["n"]
    return q.mat("W_Q").nrows()


# hMemLp, hMeas, hIndep hold on every law input: a product of finite or Gaussian laws
for _pid in ("memLp_two", "WK_memLp_two", "WQ_memLp_two", "entries_aemeasurable", "entries_independent"):
    predicate(_pid, lambda q: _grids(q) is not None)
predicate("mean_zero", lambda q: all(_m1(l) == 0 for l in _block(q, "L")))
predicate("second_moment_eq_sigma_sq", lambda q: all(_m2(l) == _s2(q, "L") for l in _block(q, "L")))
predicate("sigma_ne_zero", lambda q: _s2(q, "L") != 0)
predicate("v_ne_zero", lambda q: _s2(q, "L") != 0)
predicate("entries_gaussian", lambda q: all(_centred_gauss(l, _s2(q, "L")) for l in _block(q, "L")))
predicate("N_pos", lambda q: q.inp["N"] > 0)
predicate("n_pos", lambda q: _n(q) > 0)
predicate("n_le_N", lambda q: q.inp["n"] <= q.inp["N"])
for _x, _b in (("K", "W_K"), ("Q", "W_Q")):
    predicate(f"W{_x}_mean_zero", lambda q, b=_b: all(_m1(l) == 0 for l in _block(q, b)))
    predicate(f"W{_x}_second_moment_eq", lambda q, b=_b: all(_m2(l) == _s2(q, b) for l in _block(q, b)))
    predicate(f"W{_x}_entries_gaussian", lambda q, b=_b: all(_centred_gauss(l, _s2(q, b)) for l in _block(q, b)))
    predicate(f"sigma{_x}_ne_zero", lambda q, b=_b: _s2(q, b) != 0)
    predicate(f"v{_x}_ne_zero", lambda q, b=_b: _s2(q, b) != 0)


# ---------------------------------------------------------------------------
# moments: E L_ab L_cd under the product law, from means M and variances V


def _moments(q: Ctx) -> dict:
    def build():
        g, N = _grids(q), q.inp["N"]
        mean = lambda G: fmpq_mat(len(G), N, [_m1(l) for r in G for l in r])  # noqa: E731
        var = lambda G: fmpq_mat(len(G), N, [_m2(l) - _m1(l) ** 2 for r in G for l in r])  # noqa: E731
        if "L" in g:  # E L_ab² = M_ab² + V_ab, E L_ab L_ba = M_ab M_ba (a ≠ b)
            M, X = mean(g["L"]), var(g["L"])
        else:  # E[K_ra K_sc] = MK_ra MK_sc + [r = s, a = c] VK_ra, and likewise for Q
            MK, VK, MQ, VQ = mean(g["W_K"]), var(g["W_K"]), mean(g["W_Q"]), var(g["W_Q"])
            sq = lambda Y: fmpq_mat(Y.nrows(), Y.ncols(), [x * x for x in Y.entries()])  # noqa: E731
            M = MK.transpose() * MQ
            X = VK.transpose() * sq(MQ) + sq(MK).transpose() * VQ + VK.transpose() * VQ
        eL = frob(M) + sum(X.entries(), fmpq(0))
        et = trace(M * M) + trace(X)
        out = {"E_frobSq": eL, "E_trace_mul_self": et, "E_frobSq_symPart": (eL + et) / 2,
               "E_frobSq_skewPart": (eL - et) / 2}
        w = q.witness("moments", "L")
        for k, v in out.items():
            require(rat(w[k]) == v, "moments witness", f"{k} is {qstr(v)}, the witness says {w[k]}")
        return out

    return q.memo("moments", build)


def _mom(q: Ctx, k: str) -> fmpq:
    return _moments(q)[k]


# ---------------------------------------------------------------------------
# E[‖S‖²/‖L‖²], E[‖T‖²/‖L‖²]: enumeration or the Monte Carlo experiment


def _values_to_L(q: Ctx, x: list) -> fmpq_mat:
    N = q.inp["N"]
    if q.inp["model"] == "iid":
        return fmpq_mat(N, N, x)
    n = q.inp["n"]
    return fmpq_mat(n, N, x[:n * N]).transpose() * fmpq_mat(n, N, x[n * N:])


def _enumerate(q: Ctx) -> tuple[fmpq, fmpq]:
    laws = [l for k in _grids(q) for l in _block(q, k)]
    require(all(l[0] == "atoms" for l in laws), "enumeration witness", "a Gaussian entry has no finite support")
    count = math.prod(len(l[1]) for l in laws)
    if count > ENUM_LIMIT:
        raise Undecided(f"{count} value patterns exceed the kernel's enumeration limit {ENUM_LIMIT} (use Monte Carlo)")
    eS = eT = fmpq(0)
    for pat in itertools.product(*(l[1] for l in laws)):
        L = _values_to_L(q, [v for v, _ in pat])
        F, tr = frob(L), trace(L * L)
        if F:
            p = math.prod((w for _, w in pat), start=fmpq(1))
            eS, eT = eS + p * (F + tr) / (2 * F), eT + p * (F - tr) / (2 * F)
    w = q.witness("enumeration", "energy")
    require((w["patterns"], rat(w["E_ratio_S"]), rat(w["E_ratio_T"])) == (count, eS, eT), "enumeration witness",
            f"the enumeration gives {count} patterns, E_ratio_S = {qstr(eS)}, E_ratio_T = {qstr(eT)}")
    return eS, eT


def _fl(y: arb) -> int | None:
    """⌊y⌋ when the ball decides it."""
    f = float(y)
    if not math.isfinite(f):
        return None
    k = math.floor(f)
    return k if y >= k and y < k + 1 else None


def _bm(a: int, c: int) -> tuple[arb, arb]:
    r = (arb(fmpq(a + 1, 1 << 53)).log() * -2).sqrt()
    s, co = arb.sin_cos_pi_fmpq(fmpq(c, 1 << 52))
    return r * co, r * s


def _grid_c(v: fmpq) -> fmpq:
    """1/s for a Gaussian of variance v: 2^(32 − e), e = ⌊⌊log₂ v⌋/2⌋."""
    t = int(v.p).bit_length() - int(v.q).bit_length()
    t -= (fmpq(2) ** t if t >= 0 else fmpq(1, 2 ** -t)) > v
    return fmpq(2) ** (GRID - t // 2) if GRID - t // 2 >= 0 else fmpq(1, 2 ** (t // 2 - GRID))


def _entry_sampler(l: tuple, den: int):
    """For one entry law: a function (rng, stream) -> the drawn value times ``den``."""
    if l[0] == "atoms":
        D = math.lcm(*(int(p.q) for _, p in l[1]))
        cum = list(itertools.accumulate(int(p * D) for _, p in l[1]))
        vals = [int(x * den) for x, _ in l[1]]
        bits = (D - 1).bit_length()

        def draw(rng, stream):
            if D == 1:
                return vals[0]
            t = rng.getrandbits(bits)
            while t >= D:
                t = rng.getrandbits(bits)
            return vals[next(i for i, c in enumerate(cum) if t < c)]

        return draw
    c = _grid_c(l[2])
    shift, var, mult = l[1] * c + fmpq(1, 2), l[2] * c * c, int(den / c)
    base = (arb(shift), arb(var).sqrt())

    def draw(rng, stream):
        if not stream:
            a, b = rng.getrandbits(53), rng.getrandbits(53)
            zc, zs = _bm(a, b)
            stream.extend([(a, b, 1, zs), (a, b, 0, zc)])
        a, b, which, z = stream.pop()
        k = _fl(base[0] + base[1] * z)
        for p in PRECS[1:]:
            if k is not None:
                break
            with precision(p):
                k = _fl(arb(shift) + arb(var).sqrt() * _bm(a, b)[which])
        if k is None:
            raise Undecided(f"a Gaussian draw cannot be rounded at {PRECS[-1]} bits")
        return k * mult

    return draw


def _sample(q: Ctx, m: int, seed: int) -> tuple[int, int, int]:
    """(Σ⌊2⁶⁴ r_S⌋, Σ⌊2⁶⁴ r_T⌋, #{L = 0}) over the m samples of the documented sampler;
    each block (L, or W_K and W_Q) is drawn as integers: values times a common denominator."""
    N, n = q.inp["N"], q.inp.get("n", 0)
    rng, stream = random.Random(seed), []
    sS = sT = zeros = 0
    with precision(PRECS[0]):
        samplers = []
        for k in _grids(q):
            b = _block(q, k)
            den = math.lcm(1, *(int(x.q) for l in b if l[0] == "atoms" for x, _ in l[1]),
                           *(int(_grid_c(l[2]).p) for l in b if l[0] == "gauss"))
            samplers.append([_entry_sampler(l, den) for l in b])
        for _ in range(m):
            x = [[f(rng, stream) for f in b] for b in samplers]
            if len(x) == 1:
                L = x[0]
            else:
                K, Q = x
                L = [sum(K[r * N + a] * Q[r * N + b] for r in range(n)) for a in range(N) for b in range(N)]
            F = sum(v * v for v in L)
            tr = sum(L[a * N + b] * L[b * N + a] for a in range(N) for b in range(N))
            if F == 0:
                zeros += 1
                continue
            sS += ((F + tr) << ACC) // (2 * F)
            sT += ((F - tr) << ACC) // (2 * F)
    return sS, sT, zeros


def _halfwidth(m: int, delta: fmpq) -> fmpq:
    """⌈2³²·√(ln(2/δ)/(2m))⌉/2³² (Hoeffding, ratios in [0, 1])."""
    for p in PRECS:
        with precision(p):
            k = _fl(-((arb(2) / arb(delta)).log() / (2 * m)).sqrt() * (1 << HALF))
        if k is not None:
            return fmpq(-k, 1 << HALF)
    raise Undecided("the Hoeffding half-width cannot be decided")


def _monte_carlo(q: Ctx) -> tuple[tuple, tuple]:
    mc = q.inp.get("monte_carlo")
    require(mc is not None, "input", "a monte_carlo witness needs the input's monte_carlo parameters")
    m, delta, seed = mc["samples"], rat(mc["delta"]), mc["seed"]
    require(0 < delta < 1, "input", "monte_carlo.delta must lie in (0, 1)")
    work = m * sum(len(_block(q, k)) for k in _grids(q))
    if work > WORK_LIMIT:
        raise Undecided(f"{work} Monte Carlo draws exceed the kernel's limit {WORK_LIMIT}")
    sS, sT, zeros = _sample(q, m, seed)
    h = _halfwidth(m, delta)
    den = fmpq(m) * (1 << ACC)
    iv = [(max(fmpq(0), s / den - h), min(fmpq(1), (s + m) / den + h)) for s in (sS, sT)]
    want = {"kind": "monte_carlo", "of": "energy", "sum_S": str(sS), "sum_T": str(sT), "zero_samples": zeros,
            "halfwidth": qstr(h), "interval_S": [qstr(x) for x in iv[0]], "interval_T": [qstr(x) for x in iv[1]]}
    w = q.witness("monte_carlo", "energy")
    bad = [k for k in want if w[k] != want[k]]
    require(not bad, "monte_carlo witness", f"{bad[0] if bad else ''} is {want[bad[0]] if bad else ''} "
            "for the re-generated sample")
    return iv[0], iv[1]


def _ratio_is(q: Ctx, which: int, target: fmpq) -> bool:
    """E[‖S‖²/‖L‖²] (which = 0) or E[‖T‖²/‖L‖²] (1) equals target: exactly by enumeration,
    or empirically: target lies in the Hoeffding interval of the re-generated sample."""
    if ("enumeration", "energy") in q.witnesses:
        return q.memo("enum", lambda: _enumerate(q))[which] == target
    lo, hi = q.memo("mc", lambda: _monte_carlo(q))[which]
    q.empirical = True
    return lo <= target <= hi


def _N(q: Ctx) -> fmpq:
    return fmpq(q.inp["N"])


def _rS(q: Ctx) -> fmpq:
    return lean_div(_N(q) + 1, 2 * _N(q))


def _rT(q: Ctx) -> fmpq:
    return lean_div(_N(q) - 1, 2 * _N(q))


# ---------------------------------------------------------------------------

IND, MEM, MEAN, VAR = ("hIndep", "entries_independent"), ("hMemLp", "memLp_two"), ("hMean", "mean_zero"), \
    ("hVar", "second_moment_eq_sigma_sq")
C1R = (IND, MEM, MEAN, VAR, ("hσ", "sigma_ne_zero"), ("hN", "N_pos"))
GAU = (IND, ("hMeas", "entries_aemeasurable"), ("hLaw", "entries_gaussian"), ("hv", "v_ne_zero"), ("hN", "N_pos"))
QK = (IND, ("hKL2", "WK_memLp_two"), ("hQL2", "WQ_memLp_two"), ("hKMean", "WK_mean_zero"),
      ("hQMean", "WQ_mean_zero"), ("hKVar", "WK_second_moment_eq"), ("hQVar", "WQ_second_moment_eq"))
QKR = QK + (("hσK", "sigmaK_ne_zero"), ("hσQ", "sigmaQ_ne_zero"), ("hn", "n_pos"), ("hN", "N_pos"))
LR = (("hn", "n_pos"), ("hnN", "n_le_N"), ("hvK", "vK_ne_zero"), ("hvQ", "vQ_ne_zero"),
      ("hmeas", "entries_aemeasurable"), ("hindep", "entries_independent"), ("hlawK", "WK_entries_gaussian"),
      ("hlawQ", "WQ_entries_gaussian"))


def _v(q: Ctx) -> fmpq:
    return _s2(q, "L") if q.inp["model"] == "iid" else _n(q) * _s2(q, "W_K") * _s2(q, "W_Q")


def _div(q: Ctx, k: str) -> fmpq:
    return lean_div(_mom(q, k), _mom(q, "E_frobSq"))


thm(A + C1, C1, LAW, (MEM, VAR), lambda q: _mom(q, "E_frobSq") == _N(q) ** 2 * _v(q))
thm(A + "integral_frobSq_symPart_iid", C1, LAW, (IND, MEM, MEAN, VAR),
    lambda q: _mom(q, "E_frobSq_symPart") == _N(q) * (_N(q) + 1) / 2 * _v(q))
thm(A + "integral_frobSq_skewPart_iid", C1, LAW, (IND, MEM, MEAN, VAR),
    lambda q: _mom(q, "E_frobSq_skewPart") == _N(q) * (_N(q) - 1) / 2 * _v(q))
thm(A + "integral_frobSq_symPart_div_integral_frobSq_iid", C1, LAW, C1R, lambda q: _div(q, "E_frobSq_symPart") == _rS(q))
thm(A + "integral_frobSq_skewPart_div_integral_frobSq_iid", C1, LAW, C1R, lambda q: _div(q, "E_frobSq_skewPart") == _rT(q))
thm(A + "integral_frobSq_symPart_div_frobSq_gaussian", C1, LAW, GAU, lambda q: _ratio_is(q, 0, _rS(q)))
thm(A + "integral_frobSq_skewPart_div_frobSq_gaussian", C1, LAW, GAU, lambda q: _ratio_is(q, 1, _rT(q)))
thm(A + C2, C2, LAW, QK, lambda q: _mom(q, "E_frobSq") == _N(q) ** 2 * _v(q))
thm(A + "integral_trace_mul_self_qk", C2, LAW, QK, lambda q: _mom(q, "E_trace_mul_self") == _N(q) * _v(q))
thm(A + "integral_frobSq_symPart_qk", C2, LAW, QK,
    lambda q: _mom(q, "E_frobSq_symPart") == _N(q) * (_N(q) + 1) / 2 * _v(q))
thm(A + "integral_frobSq_skewPart_qk", C2, LAW, QK,
    lambda q: _mom(q, "E_frobSq_skewPart") == _N(q) * (_N(q) - 1) / 2 * _v(q))
thm(A + "integral_frobSq_symPart_div_integral_frobSq_qk", C2, LAW, QKR, lambda q: _div(q, "E_frobSq_symPart") == _rS(q))
thm(A + "integral_frobSq_skewPart_div_integral_frobSq_qk", C2, LAW, QKR, lambda q: _div(q, "E_frobSq_skewPart") == _rT(q))
thm(A + P5, P5, LAW, LR, lambda q: _ratio_is(q, 0, _rS(q)))
thm(A + "expected_skew_energy_low_rank_qk", P5, LAW, LR, lambda q: _ratio_is(q, 1, _rT(q)))
