"""Appendix A random baselines (qkverify.baselines, claims.random_matrices).

Exact values for N = 2 are pinned as literals *and* recomputed here by an
independent brute force over every value pattern with ``fractions.Fraction``
(no qkverify code involved), so a wrong literal or a wrong enumeration both
fail.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from fractions import Fraction as F

import pytest
from flint import arb, ctx, fmpq

from qkverify.math import baselines as B
from qkverify.claims.random_matrices import LawInput
from qkverify.claims.registry import get
from qkverify.errors import QKInputError

RAD = {F(-1): F(1, 2), F(1): F(1, 2)}
SKEW = {F(-2): F(1, 3), F(1): F(2, 3)}
LAZY = {F(-1): F(1, 4), F(0): F(1, 2), F(1): F(1, 4)}


def q(x: F) -> fmpq:
    return fmpq(x.numerator, x.denominator)


# ---- independent brute force (plain Python, Fraction) -----------------------


def _energies(L):
    N = len(L)
    l2 = sum(L[i][j] ** 2 for i in range(N) for j in range(N))
    s2 = sum(((L[i][j] + L[j][i]) / 2) ** 2 for i in range(N) for j in range(N))
    t2 = sum(((L[i][j] - L[j][i]) / 2) ** 2 for i in range(N) for j in range(N))
    return l2, s2, t2


def _accumulate(pairs):
    eL = eS = eT = p0 = rS = rT = F(0)
    for L, p in pairs:
        l2, s2, t2 = _energies(L)
        eL += p * l2
        eS += p * s2
        eT += p * t2
        if l2 == 0:
            p0 += p
        else:
            rS += p * s2 / l2
            rT += p * t2 / l2
    return {"E_L2": eL, "E_S2": eS, "E_T2": eT, "P_L0": p0, "rS_lean": rS, "rT_lean": rT,
            "rS_cond": rS / (1 - p0), "rT_cond": rT / (1 - p0)}


def brute_iid(N, law):
    def gen():
        for pat in itertools.product(law.items(), repeat=N * N):
            p = F(1)
            for _, pp in pat:
                p *= pp
            yield [[pat[i * N + j][0] for j in range(N)] for i in range(N)], p

    return _accumulate(gen())


def brute_qk(n, N, law):
    def gen():
        for pk in itertools.product(law.items(), repeat=n * N):
            for pq in itertools.product(law.items(), repeat=n * N):
                p = F(1)
                for _, pp in pk + pq:
                    p *= pp
                K = [[pk[r * N + a][0] for a in range(N)] for r in range(n)]
                Q = [[pq[r * N + a][0] for a in range(N)] for r in range(n)]
                yield [[sum(K[r][a] * Q[r][b] for r in range(n)) for b in range(N)] for a in range(N)], p

    return _accumulate(gen())


def _check(summ: B.EnergySummary, ref: dict):
    assert summ.E_L2 == q(ref["E_L2"])
    assert summ.E_S2 == q(ref["E_S2"])
    assert summ.E_T2 == q(ref["E_T2"])
    assert summ.P_L0 == q(ref["P_L0"])
    assert summ.E_ratio_S_lean == q(ref["rS_lean"])
    assert summ.E_ratio_T_lean == q(ref["rT_lean"])
    assert summ.E_ratio_S_cond == q(ref["rS_cond"])
    assert summ.E_ratio_T_cond == q(ref["rT_cond"])


# ---- Corollary 1, N = 2 -------------------------------------------------------


def test_cor1_rademacher_N2_pinned():
    s = B.iid_energy_law(2, B.RADEMACHER).summary()
    # N^2 s, N(N+1)s/2, N(N-1)s/2 with s = 1; symmetric law: E[ratio] = 3/4
    assert (s.E_L2, s.E_S2, s.E_T2) == (4, 3, 1)
    assert s.P_L0 == 0
    assert s.E_ratio_S_cond == fmpq(3, 4) and s.E_ratio_T_cond == fmpq(1, 4)
    _check(s, brute_iid(2, RAD))


def test_cor1_skewed_N2_pinned():
    s = B.iid_energy_law(2, B.SKEWED).summary()
    # variance 2: moments match the formulas exactly ...
    assert (s.E_L2, s.E_S2, s.E_T2) == (8, 6, 2)
    # ... but the expectation of the ratio is not (N+1)/(2N) = 3/4
    assert s.E_ratio_S_cond == fmpq(349, 455)
    assert s.E_ratio_T_cond == fmpq(106, 455)
    assert s.E_ratio_S_cond != fmpq(3, 4)
    _check(s, brute_iid(2, SKEW))


def test_cor1_lazy_N2_conditioning_matters():
    s = B.iid_energy_law(2, B.LAZY).summary()
    assert s.P_L0 == fmpq(1, 16)
    assert s.E_ratio_S_cond == fmpq(3, 4)          # symmetric law: exact given L != 0
    assert s.E_ratio_S_lean == fmpq(45, 64)        # Lean's x/0 = 0 on {L = 0}
    _check(s, brute_iid(2, LAZY))


# ---- Corollary 2 / Proposition 5, N = 2 ----------------------------------------


def test_cor2_n1_N2_both_laws_pinned():
    r = B.qk_energy_law(1, 2, B.RADEMACHER, B.RADEMACHER).summary()
    assert (r.E_L2, r.E_S2, r.E_T2) == (4, 3, 1)      # n N^2, nN(N+1)/2, nN(N-1)/2
    assert r.E_ratio_S_cond == fmpq(3, 4)
    _check(r, brute_qk(1, 2, RAD))
    s = B.qk_energy_law(1, 2, B.SKEWED, B.SKEWED).summary()
    assert (s.E_L2, s.E_S2, s.E_T2) == (16, 12, 4)    # sigma_K^2 sigma_Q^2 = 4
    assert s.E_ratio_S_cond == fmpq(19, 25)           # != 3/4
    _check(s, brute_qk(1, 2, SKEW))


def test_qk_rademacher_n2_N2_has_zero_mass():
    s = B.qk_energy_law(2, 2, B.RADEMACHER, B.RADEMACHER).summary()
    assert s.P_L0 == fmpq(1, 8)
    assert s.E_ratio_S_cond == fmpq(3, 4)
    assert s.E_ratio_S_lean == fmpq(21, 32)
    _check(s, brute_qk(2, 2, RAD))


def test_bruteforce_routes_agree_N2():
    for law in (B.RADEMACHER, B.SKEWED, B.SKEWED3):
        a = B.iid_energy_law(2, law).summary()
        b = B.iid_energy_law_bruteforce(2, law)
        assert (a.E_L2, a.E_S2, a.E_ratio_S_lean, a.P_L0) == (b.E_L2, b.E_S2, b.E_ratio_S_lean, b.P_L0)
    a = B.qk_energy_law(1, 2, B.SKEWED3, B.SKEWED).summary()
    b = B.qk_energy_law_bruteforce(1, 2, B.SKEWED3, B.SKEWED)
    assert (a.E_L2, a.E_S2, a.E_T2, a.E_ratio_S_lean) == (b.E_L2, b.E_S2, b.E_T2, b.E_ratio_S_lean)


@pytest.mark.parametrize("law", [B.RADEMACHER, B.SKEWED], ids=["rademacher", "skewed"])
@pytest.mark.parametrize("N", [2, 3])
def test_enumeration_fast(law, N):
    t = time.perf_counter()
    B.iid_energy_law(N, law).summary()
    for n in range(1, N + 1):
        s = B.qk_energy_law(n, N, law, law).summary()
        f = B.qk_moment_formulas(n, N, law.second_moment(), law.second_moment())
        assert (s.E_L2, s.E_S2, s.E_T2) == (f["E_L2"], f["E_S2"], f["E_T2"])


def test_symmetric_laws_match_skewed_do_not_N3():
    target = fmpq(2, 3)
    for law in (B.RADEMACHER, B.LAZY):
        assert B.iid_energy_law(3, law).summary().E_ratio_S_cond == target
    for law in (B.SKEWED, B.SKEWED3):
        assert B.iid_energy_law(3, law).summary().E_ratio_S_cond != target


# ---- laws, inputs ---------------------------------------------------------------


def test_law_parsing_and_errors():
    law = B.parse_law({"-2": "1/3", "1": "2/3"})
    assert law.mean() == 0 and law.second_moment() == 2 and not law.is_symmetric()
    assert B.RADEMACHER.is_symmetric()
    with pytest.raises(QKInputError):
        B.parse_law({"1": "1/2", "2": "1/3"})  # does not sum to 1
    with pytest.raises(QKInputError):
        B.parse_law({"1": "-1/2", "2": "3/2"})
    with pytest.raises(QKInputError):
        B.parse_law("cauchy")
    g = B.parse_law({"gaussian": "2", "mean": "1"})
    assert g.second_moment() == 3 and g.mean() == 1


def test_law_input_json_roundtrip():
    for inp in (LawInput("iid", 2, law=B.SKEWED),
                LawInput("qk", 3, n=2, law_K=B.GaussianLaw(fmpq(2)), law_Q=B.RADEMACHER),
                LawInput("iid", 2, grid=((B.RADEMACHER, B.SKEWED), (B.LAZY, B.GaussianLaw(fmpq(1))))) ):
        doc = json.loads(json.dumps(inp.to_json()))
        back = LawInput.from_document(doc)
        assert back.to_json() == inp.to_json()
    with pytest.raises(QKInputError):
        LawInput.from_document({"model": "qk", "N": 2, "law_K": "rademacher"})


# ---- Monte Carlo -----------------------------------------------------------------


def test_hoeffding_halfwidth_is_an_upper_bound():
    t = B.hoeffding_halfwidth(20000, fmpq(1, 1000))
    old = ctx.prec
    ctx.prec = 256
    try:  # rigorous: the tight ball of log(2000)/40000 lies below t^2 (exact rational)
        assert arb(t * t) > arb(2000).log() / 40000
    finally:
        ctx.prec = old
    assert float(t) == pytest.approx(0.0137848671, abs=1e-9)


def test_monte_carlo_deterministic_and_consistent():
    g = B.GaussianLaw(fmpq(1))
    a = B.monte_carlo_ratio("qk", 6, n=1, law_K=g, law_Q=g, samples=3000, seed=7)
    b = B.monte_carlo_ratio("qk", 6, n=1, law_K=g, law_Q=g, samples=3000, seed=7)
    assert a.mean_S_bounds == b.mean_S_bounds
    assert a.contains("S", fmpq(7, 12)) and a.contains("T", fmpq(5, 12))
    lo, hi = a.mean_S_bounds
    assert 0 < hi - lo <= fmpq(1, 2 ** 64) * 3000 / 3000 + fmpq(1, 2 ** 60)


# ---- claims ----------------------------------------------------------------------


def test_cor1_claim_verdicts():
    c = get("Corollary 1")
    r = c.conclusion(LawInput("iid", 2, law=B.RADEMACHER))
    assert (r.verdict, r.evidence) == ("holds", "exact")
    r = c.conclusion(LawInput("iid", 2, law=B.SKEWED))
    assert (r.verdict, r.evidence) == ("fails", "exact")
    assert [h.name for h in c.failed_hypotheses(LawInput("iid", 2, law=B.SKEWED))] == ["gaussian"]
    r = c.check(LawInput("iid", 3, law=B.GaussianLaw(fmpq(2)), samples=2000))
    assert (r.verdict, r.evidence) == ("holds", "empirical")
    r = c.conclusion(LawInput("iid", 2, law=B.GaussianLaw(fmpq(0))))   # sigma = 0: 0/0 = 0
    assert (r.verdict, r.evidence) == ("fails", "exact")


def test_prop5_claim_labels_and_verdicts():
    c = get("Proposition 6")  # the seed's label
    assert c.id == "expected_symmetric_energy_low_rank_qk" and c.label == "Proposition 5"
    r = c.conclusion(LawInput("qk", 2, n=1, law_K=B.SKEWED, law_Q=B.SKEWED))
    assert r.verdict == "fails" and r.values["E_ratio_S"] == "19/25"
    r = c.conclusion(LawInput("qk", 2, n=1, law_K=B.GaussianLaw(fmpq(0)), law_Q=B.GaussianLaw(fmpq(3))))
    assert (r.verdict, r.evidence) == ("fails", "exact")     # L = 0 a.s.


def test_cor2_claim_mean_nonzero_fails_exactly():
    c = get("Corollary 2")
    one = B.FiniteLaw.from_mapping({1: 1})
    r = c.conclusion(LawInput("qk", 1, n=2, law_K=one, law_Q=one))
    assert (r.verdict, r.evidence) == ("fails", "exact")
    assert r.values["E_L2"] == "4" and r.values["formula_E_L2"] == "2"


def test_cli_baselines_no_mc_json():
    out = subprocess.run([sys.executable, "-m", "qkverify", "baselines", "--no-mc", "--json"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["all_as_expected"] is True
    row = next(r for r in doc["rows"] if r["model"] == "iid" and r["law"] == "skewed" and r["N"] == 2)
    assert row["values"]["E_ratio_S_cond"] == "349/455"
    assert row["moments_match"] and not row["expectation_of_ratio_match_conditional"]
