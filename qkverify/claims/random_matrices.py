"""Appendix A, random matrices: Corollary 1 (iid baseline), Corollary 2 (QK
product baseline), Proposition 5 (the seed's "Proposition 6": expected
symmetric energy of random low-rank QK products).

Inputs are :class:`LawInput` objects (``input_kind = "law"``): a model
(``iid``: L is N x N with independent entries; ``qk``: L = W_Kᵀ W_Q with
W_K, W_Q n x N), the sizes, and the entry laws -- finite rational laws
(evaluated exactly by enumeration, :mod:`qkverify.baselines`) or Gaussian
laws (moments exact; the expectation of a ratio by Monte Carlo with a
Hoeffding interval, evidence ``empirical``).

Conventions follow the Lean files: "variance" in ``integral_frobSq_iid`` is
the second moment ``∫ X² = σ²`` (equal to the variance under mean zero);
expectations of ``‖S‖²/‖L‖²`` integrate the Lean value ``x/0 = 0`` on
``{L = 0}``; ratios of expectations use ``x/0 = 0`` too.  The conditional
value ``E[· | L ≠ 0]`` is reported beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flint import fmpq

from ..io.inputs import MC_DELTA, MC_SAMPLES, LawInput
from ..math import baselines as B
from ..errors import QKInputError
from ..exact.rational import fmpq_str
from .registry import Claim, Hypothesis, Result, register

SEC = "Appendix A"

#: model expected by each claim of this module (the search picks its strategy from this)
LAW_MODELS = {
    "integral_frobSq_iid": "iid",
    "integral_frobSq_qk": "qk",
    "expected_symmetric_energy_low_rank_qk": "qk",
}


def _q(x: fmpq | None) -> str | None:
    return None if x is None else fmpq_str(x)


def _need(inp: Any, model: str) -> LawInput:
    if not isinstance(inp, LawInput):
        raise QKInputError("this claim needs a law input {\"kind\": \"law\", \"model\": …}")
    if inp.model != model:
        raise QKInputError(f"this claim needs a law input with model '{model}', got '{inp.model}'")
    return inp


def _div(x: fmpq, y: fmpq) -> fmpq:
    """Lean's division: x/0 = 0."""
    return fmpq(0) if y == 0 else x / y


def _mc(inp: LawInput) -> B.MonteCarloResult:
    if inp.model == "iid":
        if inp.grid is not None:
            return B.monte_carlo_ratio("iid", inp.N, grid=inp.grid, samples=inp.samples, delta=inp.delta, seed=inp.seed)
        return B.monte_carlo_ratio("iid", inp.N, inp.law, samples=inp.samples, delta=inp.delta, seed=inp.seed)
    return B.monte_carlo_ratio("qk", inp.N, n=inp.n, law_K=inp.law_K, law_Q=inp.law_Q,
                               samples=inp.samples, delta=inp.delta, seed=inp.seed)


def _ratio_checks(inp: LawInput, checks: dict, values: dict, wit: list, summ: B.EnergySummary | None) -> str:
    """Add the expectation-of-ratio checks; returns the evidence level."""
    N = fmpq(inp.N)
    tS, tT = (N + 1) / (2 * N), (N - 1) / (2 * N)
    values["target_ratio_S"] = fmpq_str(tS)
    values["target_ratio_T"] = fmpq_str(tT)
    if summ is not None:
        checks["E[‖S‖²/‖L‖²] = (N+1)/(2N) (x/0 = 0)"] = summ.E_ratio_S_lean == tS
        checks["E[‖T‖²/‖L‖²] = (N−1)/(2N) (x/0 = 0)"] = summ.E_ratio_T_lean == tT
        values["E_ratio_S"] = fmpq_str(summ.E_ratio_S_lean)
        values["E_ratio_T"] = fmpq_str(summ.E_ratio_T_lean)
        values["P_L_eq_0"] = fmpq_str(summ.P_L0)
        values["E_ratio_S_given_L_ne_0"] = _q(summ.E_ratio_S_cond)
        values["E_ratio_T_given_L_ne_0"] = _q(summ.E_ratio_T_cond)
        values["E_ratio_S_float"] = float(summ.E_ratio_S_lean)
        return "exact"
    r = _mc(inp)
    checks[f"E[‖S‖²/‖L‖²] = (N+1)/(2N) within the {fmpq_str(1 - r.delta)} Hoeffding interval"] = r.contains("S", tS)
    checks[f"E[‖T‖²/‖L‖²] = (N−1)/(2N) within the {fmpq_str(1 - r.delta)} Hoeffding interval"] = r.contains("T", tT)
    values["monte_carlo"] = r.to_json()
    wit.append({"kind": "comparison", "what": "Monte Carlo interval for E[‖S‖²/‖L‖²], E[‖T‖²/‖L‖²]",
                "monte_carlo": r.to_json(), "targets": [fmpq_str(tS), fmpq_str(tT)]})
    return "empirical"


def _finish(checks: dict, values: dict, wit: list, evidence: str) -> Result:
    """Verdict and evidence.  Checks whose name mentions 'Hoeffding' are
    Monte Carlo (empirical); every other check is exact.  A failure of an
    exact check makes the verdict 'fails' with evidence 'exact', whatever the
    Monte Carlo said; otherwise the weakest evidence used is reported."""
    ok = all(checks.values())
    values["checks"] = checks
    bad = [k for k, v in checks.items() if not v]
    exact_bad = [k for k in bad if "Hoeffding" not in k]
    reason = ""
    if exact_bad:
        evidence = "exact"
        reason = "failed: " + "; ".join(exact_bad)
    elif bad:
        reason = "failed: " + "; ".join(bad) + " (statistical: Monte Carlo, see values.monte_carlo)"
    return Result("holds" if ok else "fails", evidence, {"witnesses": wit}, values, "lean", reason)


def _summary_json(s: B.EnergySummary) -> dict:
    return s.to_json()


# --------------------------------------------------------------------------
# Corollary 1


def _cor1(inp: Any) -> Result:
    inp = _need(inp, "iid")
    N = inp.N
    s2 = inp.sigma2()
    f = B.iid_moment_formulas(N, s2)
    checks: dict[str, bool] = {}
    values: dict[str, Any] = {"model": "iid", "N": N, "sigma2": fmpq_str(s2)}
    wit: list[dict] = []
    summ = None
    if inp.is_finite():
        laws = inp.grid if inp.grid is not None else B.as_finite(inp.law)
        el = B.iid_energy_law(N, laws)
        summ = el.summary()
        eL, eS, eT = summ.E_L2, summ.E_S2, summ.E_T2
        values["method"] = f"exact enumeration of {el.patterns} value patterns grouped into {len(el.dist)} energy classes"
    else:
        m = B.iid_moments_exact(N, inp.entry_grid())
        eL, eS, eT = m["E_L2"], m["E_S2"], m["E_T2"]
        values["method"] = "moments exact (linearity, independence); expectation of the ratio by Monte Carlo"
    checks["E‖L‖² = N²σ²"] = eL == f["E_L2"]
    checks["E‖S‖² = N(N+1)σ²/2"] = eS == f["E_S2"]
    checks["E‖T‖² = N(N−1)σ²/2"] = eT == f["E_T2"]
    checks["E‖S‖²/E‖L‖² = (N+1)/(2N)"] = _div(eS, eL) == f["ratio_S"]
    checks["E‖T‖²/E‖L‖² = (N−1)/(2N)"] = _div(eT, eL) == f["ratio_T"]
    values.update({"E_L2": fmpq_str(eL), "E_S2": fmpq_str(eS), "E_T2": fmpq_str(eT),
                   "formula_E_L2": fmpq_str(f["E_L2"]), "formula_E_S2": fmpq_str(f["E_S2"]),
                   "formula_E_T2": fmpq_str(f["E_T2"])})
    ev = _ratio_checks(inp, checks, values, wit, summ)
    wit.insert(0, {"kind": "identity", "what": "exact expectations vs Corollary 1",
                   "values": {k: values[k] for k in ("E_L2", "E_S2", "E_T2", "formula_E_L2", "formula_E_S2", "formula_E_T2")},
                   "checks": dict(checks)})
    return _finish(checks, values, wit, ev)


def _iid_mean_zero(inp: Any) -> bool:
    return all(l.mean() == 0 for l in _need(inp, "iid").all_laws())


def _iid_common_variance(inp: Any) -> bool:
    ms = {l.second_moment() for l in _need(inp, "iid").all_laws()}
    return len(ms) == 1


def _iid_sigma_ne_zero(inp: Any) -> bool:
    return _need(inp, "iid").sigma2() != 0


def _iid_gaussian(inp: Any) -> bool:
    """Every entry is Gaussian.  Together with mean_zero and common_variance
    this is Lean's hLaw: all entries have law gaussianReal 0 σ²."""
    return all(l.is_gaussian() for l in _need(inp, "iid").all_laws())


# --------------------------------------------------------------------------
# Corollary 2


def _cor2(inp: Any) -> Result:
    inp = _need(inp, "qk")
    n, N = inp.n, inp.N
    sK, sQ = inp.law_K.second_moment(), inp.law_Q.second_moment()
    f = B.qk_moment_formulas(n, N, sK, sQ)
    checks: dict[str, bool] = {}
    values: dict[str, Any] = {"model": "qk", "n": n, "N": N, "sigma_K2": fmpq_str(sK), "sigma_Q2": fmpq_str(sQ)}
    wit: list[dict] = []
    if inp.is_finite():
        el = B.qk_energy_law(n, N, inp.law_K, inp.law_Q)
        s = el.summary()
        eL, eS, eT = s.E_L2, s.E_S2, s.E_T2
        values["method"] = f"exact enumeration of {el.patterns} value patterns grouped into {len(el.dist)} energy classes"
        values["E_ratio_S (not part of Corollary 2)"] = fmpq_str(s.E_ratio_S_lean)
    else:
        m = B.qk_moments_exact(n, N, inp.law_K, inp.law_Q)
        eL, eS, eT = m["E_L2"], m["E_S2"], m["E_T2"]
        values["method"] = "moments exact (linearity, independence)"
    etr = eS - eT
    checks["E‖L‖² = nN²σ_K²σ_Q²"] = eL == f["E_L2"]
    checks["E tr(L²) = nNσ_K²σ_Q²"] = etr == f["E_trL2"]
    checks["E‖S‖² = nN(N+1)σ_K²σ_Q²/2"] = eS == f["E_S2"]
    checks["E‖T‖² = nN(N−1)σ_K²σ_Q²/2"] = eT == f["E_T2"]
    checks["E‖S‖²/E‖L‖² = (N+1)/(2N)"] = _div(eS, eL) == f["ratio_S"]
    checks["E‖T‖²/E‖L‖² = (N−1)/(2N)"] = _div(eT, eL) == f["ratio_T"]
    values.update({"E_L2": fmpq_str(eL), "E_trL2": fmpq_str(etr), "E_S2": fmpq_str(eS), "E_T2": fmpq_str(eT)})
    values.update({f"formula_{k}": fmpq_str(v) for k, v in f.items()})
    wit.append({"kind": "identity", "what": "exact expectations vs Corollary 2",
                "values": {k: values[k] for k in ("E_L2", "E_trL2", "E_S2", "E_T2")}, "checks": dict(checks)})
    return _finish(checks, values, wit, "exact")


def _qk_mean_zero(inp: Any) -> bool:
    inp = _need(inp, "qk")
    return inp.law_K.mean() == 0 and inp.law_Q.mean() == 0


def _qk_variances_nonzero(inp: Any) -> bool:
    """Cor 2 (second moments σ_K², σ_Q² ≠ 0) and Prop 5 (v_K, v_Q ≠ 0)."""
    inp = _need(inp, "qk")
    return inp.law_K.second_moment() != 0 and inp.law_Q.second_moment() != 0


# --------------------------------------------------------------------------
# Proposition 5


def _prop5(inp: Any) -> Result:
    inp = _need(inp, "qk")
    values: dict[str, Any] = {"model": "qk", "n": inp.n, "N": inp.N}
    checks: dict[str, bool] = {}
    wit: list[dict] = []
    summ = None
    if inp.is_finite():
        el = B.qk_energy_law(inp.n, inp.N, inp.law_K, inp.law_Q)
        summ = el.summary()
        values["method"] = f"exact enumeration of {el.patterns} value patterns grouped into {len(el.dist)} energy classes"
        wit.append({"kind": "identity", "what": "exact expectations (enumeration)", "values": summ.to_json()})
    else:
        values["method"] = "Monte Carlo with a Hoeffding interval (ratios in [0,1])"
    ev = _ratio_checks(inp, checks, values, wit, summ)
    return _finish(checks, values, wit, ev)


def _qk_gaussian(inp: Any) -> bool:
    inp = _need(inp, "qk")
    return B.is_centered_gaussian(inp.law_K) and B.is_centered_gaussian(inp.law_Q)


def _n_le_N(inp: Any) -> bool:
    inp = _need(inp, "qk")
    return inp.n <= inp.N


# --------------------------------------------------------------------------

register(Claim(
    id="integral_frobSq_iid", label="Corollary 1", section=SEC,
    lean_decls=tuple("Appendices." + d for d in (
        "integral_frobSq_iid", "integral_frobSq_symPart_iid", "integral_frobSq_skewPart_iid",
        "integral_frobSq_symPart_div_integral_frobSq_iid", "integral_frobSq_skewPart_div_integral_frobSq_iid",
        "integral_frobSq_symPart_div_frobSq_gaussian", "integral_frobSq_skewPart_div_frobSq_gaussian")),
    statement=("Independent mean-zero entries with common variance σ²: E‖L‖² = N²σ², E‖S‖² = N(N+1)σ²/2, "
               "E‖T‖² = N(N−1)σ²/2; for σ ≠ 0 the ratios are (N+1)/(2N), (N−1)/(2N); for iid Gaussian entries "
               "also E[‖S‖²/‖L‖²] = (N+1)/(2N), E[‖T‖²/‖L‖²] = (N−1)/(2N)."),
    hypotheses=(
        Hypothesis("mean_zero", "every entry has mean 0", _iid_mean_zero),
        Hypothesis("common_variance", "every entry has the same second moment E[L_ij²] = σ² (Lean's hVar)", _iid_common_variance),
        Hypothesis("sigma_ne_zero", "σ ≠ 0", _iid_sigma_ne_zero),
        Hypothesis("gaussian", "every entry is Gaussian (gaussianReal m v, v = 0 allowed); with mean_zero and "
                   "common_variance: iid gaussianReal 0 σ²", _iid_gaussian),
    ),
    input_kind="law", conclusion=_cor1, aliases=("iid baseline",),
))

register(Claim(
    id="integral_frobSq_qk", label="Corollary 2", section=SEC,
    lean_decls=tuple("Appendices." + d for d in (
        "integral_frobSq_qk", "integral_trace_mul_self_qk", "integral_frobSq_symPart_qk",
        "integral_frobSq_skewPart_qk", "integral_frobSq_symPart_div_integral_frobSq_qk",
        "integral_frobSq_skewPart_div_integral_frobSq_qk")),
    statement=("L = W_Kᵀ W_Q, independent mean-zero entries with variances σ_K², σ_Q²: E‖L‖² = nN²σ_K²σ_Q², "
               "E tr(L²) = nNσ_K²σ_Q², E‖S‖² = nN(N+1)σ_K²σ_Q²/2, E‖T‖² = nN(N−1)σ_K²σ_Q²/2; for nonzero variances "
               "the ratios are (N+1)/(2N), (N−1)/(2N)."),
    hypotheses=(
        Hypothesis("mean_zero", "the entries of W_K and W_Q have mean 0", _qk_mean_zero),
        Hypothesis("variances_nonzero", "σ_K² ≠ 0 and σ_Q² ≠ 0", _qk_variances_nonzero),
    ),
    input_kind="law", conclusion=_cor2, aliases=("qk baseline", "QK-product baseline"),
))

register(Claim(
    id="expected_symmetric_energy_low_rank_qk", label="Proposition 5", section=SEC,
    seed_label="Proposition 6",
    lean_decls=("Appendices.expected_symmetric_energy_low_rank_qk", "Appendices.expected_skew_energy_low_rank_qk"),
    statement=("1 ≤ n ≤ N, W_K, W_Q n x N with independent centered Gaussian entries of nonzero variances v_K, v_Q: "
               "E[‖S‖²/‖L‖²] = (N+1)/(2N) and E[‖T‖²/‖L‖²] = (N−1)/(2N), independently of n."),
    hypotheses=(
        Hypothesis("gaussian", "the entries of W_K and of W_Q are iid centered Gaussian (gaussianReal 0 v)", _qk_gaussian),
        Hypothesis("variances_nonzero", "v_K ≠ 0 and v_Q ≠ 0", _qk_variances_nonzero),
        Hypothesis("n_le_N", "n ≤ N (n ≥ 1 and N ≥ 1 are input sizes)", _n_le_N),
    ),
    input_kind="law", conclusion=_prop5, aliases=("low-rank QK energy", "expected_skew_energy_low_rank_qk"),
))
