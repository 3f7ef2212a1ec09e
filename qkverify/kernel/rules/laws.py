"""Appendix A on a ``law`` input: Corollary 1 (IidBaseline.lean), Corollary 2
(QKProductBaseline.lean), Proposition 5 (LowRankExpectedEnergy.lean).

The input is a random matrix with exact entry laws (finite, Gaussian, Pareto), independent
except for its copies.  Integrals follow Lean's Bochner integral (0 for a non-integrable
integrand): the ``moments`` fact.  E[‖S‖²/‖L‖²] (x/0 = 0) is exact wherever the law allows
(the ``enumeration`` fact: value patterns, the iid convolution, N = 1, a zero product) or
sampled (the ``monte_carlo`` fact, sampler ``mt19937-boxmuller/2``, seed derived from the
input): then the conclusion is consistent / inconsistent at level δ, evidence empirical.
Lean's implicit σ (σ_K, σ_Q, v, v_K, v_Q) is Lean's ∫ X² of its matrix's first entry (1 if
none).  Every hypothesis is decided on the input; hMeas / hmeas hold on every law input (each
entry a measurable map) -- no input violates them alone (lean_map: unprobeable)."""

from __future__ import annotations

from flint import fmpq

from . import sampling as SMP
from .. import limits
from ..derive import Ctx, lean_div
from ..jsonio import Invalid, Undecided, qstr, rat, require
from ..table import A, predicate, thm
from ..wellformed import Args, kind

C1, C2, P5 = "integral_frobSq_iid", "integral_frobSq_qk", "expected_symmetric_energy_low_rank_qk"
LAW = ("law",)


def _laws(q: Ctx, name: str) -> list:
    """The distinct entry laws of L, W_K or W_Q (once per input: predicates cost O(n·N))."""
    d = q.arg("distinct")
    if name not in d:
        raise Invalid("input", f"an input of model {q.inp['model']} has no entry laws of {name}")
    return d[name]


def _s2(q: Ctx, name: str) -> fmpq:
    _laws(q, name)
    g = q.arg("laws")[name]
    return SMP.m2(g[0][0]) if g and g[0] else fmpq(1)


def _gauss0(l: tuple, v: fmpq) -> bool:
    """gaussianReal 0 v (v = 0: the point mass at 0)."""
    return (l[0] == "gauss" and l[1] == 0 and l[2] == v) or (v == 0 and SMP.zero(l))


def _n(q: Ctx) -> int:
    return q.arg("n")


def _independent(q: Ctx) -> bool:
    """No copy of a random entry (a copy of a point mass is independent of everything)."""
    g = q.arg("laws")
    return all(g[s[0]][s[1]][s[2]][0] == "atoms" and len(g[s[0]][s[1]][s[2]][1]) == 1
               for s, _ in q.arg("copies").values())


predicate("memLp_two", lambda q: all(SMP.l2(l) for l in _laws(q, "L")))
predicate("WK_memLp_two", lambda q: all(SMP.l2(l) for l in _laws(q, "W_K")))
predicate("WQ_memLp_two", lambda q: all(SMP.l2(l) for l in _laws(q, "W_Q")))
predicate("entries_aemeasurable", lambda q: q.arg("laws") is not None)
predicate("entries_independent", _independent)
predicate("N_pos", lambda q: q.inp["N"] > 0)
predicate("n_pos", lambda q: _n(q) > 0)
predicate("n_le_N", lambda q: q.inp["n"] <= q.inp["N"])
for _x, _b in (("", "L"), ("WK_", "W_K"), ("WQ_", "W_Q")):
    predicate(_x + "mean_zero", lambda q, b=_b: all(SMP.m1(l) == 0 for l in _laws(q, b)))
    predicate(_x + ("second_moment_eq" if _x else "second_moment_eq_sigma_sq"),
              lambda q, b=_b: all(SMP.m2(l) == _s2(q, b) for l in _laws(q, b)))
    predicate(_x + "entries_gaussian", lambda q, b=_b: all(_gauss0(l, _s2(q, b)) for l in _laws(q, b)))
for _p, _b in (("sigma", "L"), ("v", "L"), ("sigmaK", "W_K"), ("sigmaQ", "W_Q"), ("vK", "W_K"), ("vQ", "W_Q")):
    predicate(_p + "_ne_zero", lambda q, b=_b: _s2(q, b) != 0)


def _moment(q: Ctx, key: str) -> fmpq:
    """Lean's ∫ of the integrand ``key`` (the moments fact); Undecided when its integrability is not decided."""
    f = q.fact("moments", "L")
    if f.values[key] is None:
        raise Undecided(f.why[key])
    return f.values[key]


def _ratio_is(q: Ctx, which: int, target: fmpq) -> bool:
    """E[‖S‖²/‖L‖²] (which = 0) or E[‖T‖²/‖L‖²] (1) equals target: exactly (enumeration fact), or
    empirically: target in the Hoeffding interval of the re-drawn sample (consistent / inconsistent)."""
    if q.has("enumeration", "energy"):
        e = q.fact("enumeration", "energy")
        return (e.E_ratio_S, e.E_ratio_T)[which] == target
    if not q.has("monte_carlo", "energy"):
        SMP.mc_caps(q.args)   # past a cap the producer states undecided (Undecided here, naming the cap) ...
        raise Invalid("witnesses", "a monte_carlo witness of energy is needed and missing")   # ... else one is owed
    mc = q.fact("monte_carlo", "energy")
    lo, hi = mc.intervals[which]
    q.empirical = True
    q.sample = {"seed": SMP.seed(q.inp), "seed_derivation": SMP.SEED_DERIVATION, "confidence": qstr(1 - mc.delta),
                "test": "hoeffding-mean", "statistic": {"samples": mc.samples, "interval": [qstr(lo), qstr(hi)],
                                                        "target": qstr(target)}}
    return lo <= target <= hi


def _N(q: Ctx) -> fmpq:
    return fmpq(q.inp["N"])


def _t(q: Ctx, sgn: int) -> fmpq:
    """(N+1)/(2N) or (N−1)/(2N) with x/0 = 0."""
    return lean_div(_N(q) + sgn, 2 * _N(q))


def _v(q: Ctx) -> fmpq:
    return _s2(q, "L") if q.inp["model"] == "iid" else _n(q) * _s2(q, "W_K") * _s2(q, "W_Q")


def _is(key: str, f):
    return lambda q: _moment(q, key) == f(_N(q)) * _v(q)


def _div(key: str, sgn: int):
    return lambda q: lean_div(_moment(q, key), _moment(q, "E_frobSq")) == _t(q, sgn)


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


# -- the input kinds of this section: their Lean types (the well-formedness pass, kernel/wellformed.py)


def _law(j: dict) -> tuple:
    """("atoms", [(v, p), …]) -- a Gaussian of variance 0 is the point mass at its mean --,
    ("gauss", m, v) with v > 0, or ("pareto", x_m, α, symmetric) with x_m > 0, 1/4 ≤ α ≤ 64."""
    if "gaussian" in j:
        m, v = rat(j["gaussian"]["mean"]), rat(j["gaussian"]["variance"])
        require(v >= 0, "input", "a Gaussian variance must be ≥ 0")
        return ("gauss", m, v) if v else ("atoms", [(m, fmpq(1))])
    if "pareto" in j:
        xm, a = rat(j["pareto"]["scale"]), rat(j["pareto"]["shape"])
        require(xm > 0 and fmpq(1, 4) <= a <= 64, "input", "a Pareto law needs scale > 0 and 1/4 ≤ shape ≤ 64")
        return ("pareto", xm, a, j["pareto"]["symmetric"])
    at = [(rat(x), rat(p)) for x, p in j["atoms"]]
    ok = all(p > 0 for _, p in at) and sum(p for _, p in at) == 1 and all(a[0] < b[0] for a, b in zip(at, at[1:]))
    require(ok, "input", "a finite law needs strictly increasing atoms with positive probabilities summing to 1")
    return ("atoms", at)


@kind("law")
def _law_input(i: dict) -> Args:
    """A random matrix with exact entry laws: L (N × N, model iid) or W_K, W_Q (n × N, model qk);
    each entry a probability law -- one law, or the distinct laws once and an index per entry
    (``distinct`` lists the laws used, so a predicate over every entry costs O(n·N)); ``uniform``
    the law of a matrix given by one law;
    ``copies`` {target entry: (source entry, ±1)}: the target is ±the source, so its stated law
    must be that law, no source is a target, no target twice; the Monte Carlo parameters."""
    N = i["N"]
    n = i.get("n", 0)
    rows = N if i["model"] == "iid" else n
    names = ("L",) if i["model"] == "iid" else ("W_K", "W_Q")
    grids, uniform, distinct = {}, {}, {}
    for k in names:
        x = i[k]
        limits.over("entry laws", rows * N, limits.MAX_INLINE_ENTRIES, "MAX_INLINE_ENTRIES")
        if "index" not in x:   # one law for every entry
            law = _law(x)
            grids[k], uniform[k], distinct[k] = [[law] * N for _ in range(rows)], law, [law] if rows * N else []
            continue
        table = [_law(l) for l in x["laws"]]   # the distinct laws once; each entry an index into them
        idx = [[int(i) for i in r.split(",")] if r else [] for r in x["index"]]   # the schema's pattern: digits
        require(all(i < len(table) for r in idx for i in r), "input", f"{k}: an index is past its laws")
        g = [[table[i] for i in r] for r in idx]
        require(len(g) == rows and all(len(r) == N for r in g), "input", f"{k} must be {rows}×{N} laws")
        grids[k], uniform[k] = g, None
        used = {i for r in idx for i in r}
        distinct[k] = [table[i] for i in sorted(used)]
    copies: dict = {}
    for c in i.get("copies", []):
        t, s = tuple(c["entry"]), tuple(c["of"])
        for e in (t, s):
            require(e[0] in names and e[1] < rows and e[2] < N, "input", f"copy endpoint {list(e)} is outside the matrices")
        require(t != s and t not in copies, "input", f"entry {list(t)} is copied twice, or from itself")
        copies[t] = (s, c["sign"])
    for t, (s, sign) in copies.items():
        require(s not in copies, "input", f"entry {list(s)} is itself a copy")
        src = grids[s[0]][s[1]][s[2]]
        want = src if sign == 1 else SMP.negated(src)
        require(want is not None and want == grids[t[0]][t[1]][t[2]], "input",
                f"entry {list(t)} is ±{list(s)}: its stated law must be that law")
    mc = i.get("monte_carlo")
    if mc is not None:
        d = rat(mc["delta"])
        require(d.p == 1 and 20 <= d.q <= 10 ** 12, "input", "monte_carlo.delta must be 1/k with 20 ≤ k ≤ 10^12")
    return Args(N=N, n=n, model=i["model"], laws=grids, uniform=uniform, distinct=distinct, copies=copies,
                monte_carlo=mc)
