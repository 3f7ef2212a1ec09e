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

from flint import fmpq

from ..derive import Ctx, lean_div
from ..jsonio import Invalid, qstr, rat
from ..table import A, predicate, thm

C1, C2, P5 = "integral_frobSq_iid", "integral_frobSq_qk", "expected_symmetric_energy_low_rank_qk"
LAW = ("law",)


def _grids(q: Ctx) -> dict:
    return q.arg("laws")


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
    return q.arg("n")


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
    """E‖L‖², E tr(L·L), E‖S‖², E‖T‖² (the moments fact: derived from the law and stated)."""
    return q.fact("moments", "L").values


def _ratio_is(q: Ctx, which: int, target: fmpq) -> bool:
    """E[‖S‖²/‖L‖²] (which = 0) or E[‖T‖²/‖L‖²] (1) equals target: exactly by enumeration, or
    empirically: target lies in the Hoeffding interval of the re-drawn sample."""
    if q.has("enumeration", "energy"):
        e = q.fact("enumeration", "energy")
        return (e.E_ratio_S, e.E_ratio_T)[which] == target
    lo, hi = q.fact("monte_carlo", "energy").intervals[which]
    q.empirical = True
    q.sample = {"statistic": "hoeffding_interval", "confidence": qstr(1 - rat(q.arg("monte_carlo")["delta"])),
                "seed": "input.monte_carlo.seed"}
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
