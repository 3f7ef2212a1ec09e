"""Exact and sampled evidence for the law statements (#23) and the sampler's arithmetic (#18):
values derived in this file by hand or by a brute force over value patterns with
``fractions.Fraction`` (no qkverify code involved)."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction as F

import pytest
from flint import arb, ctx, fmpq

from qkverify.claims.evaluate import evaluate
from qkverify.io.law_inputs import LawInput, LobesInput
from qkverify.math import accumulation as Acc
from qkverify.math import baselines as B
from qkverify.math import montecarlo as MC

P5 = "expected_symmetric_energy_low_rank_qk"
RAD = {F(-1): F(1, 2), F(1): F(1, 2)}
SKEW = {F(-2): F(1, 3), F(1): F(2, 3)}


def q(x: F) -> fmpq:
    return fmpq(x.numerator, x.denominator)


def rec(run, check):
    return next(r for r in run.records if r.meta.check == check)


# ---- exact floors (the Monte Carlo false reject of #18) ----------------------------


@pytest.mark.parametrize("num,den,want", [
    (4074630942 * 10 ** 8 - 12, 10 ** 8, 4074630941),      # 4074630941.99999988: a float rounds it up
    (-12620904597 * 10 ** 7 - 5, 10 ** 7, -12620904598),   # −12620904597.0000005: a float rounds it up
    (7, 2, 3), (-7, 2, -4), (5, 1, 5)])
def test_floor_of_ball_reads_the_midpoint_exactly(num, den, want):
    with ctx.workprec(128):
        assert MC.floor_of_ball(arb(fmpq(num, den))) == want
    assert float(F(num, den)) == math.floor(float(F(num, den))) or want == math.floor(F(num, den))


def test_floor_of_a_straddling_ball_is_undecided():
    assert MC.floor_of_ball(arb(3, fmpq(1, 4))) is None           # [11/4, 13/4] contains 3
    assert MC.floor_of_ball(arb("inf")) is None


# ---- Lean's integrals, closed forms ------------------------------------------------


def brute(model, laws, N, n=0, copies=None):
    """E‖L‖², E tr(L·L), E‖S‖², E‖T‖² over every value pattern of the free entries (Fractions);
    copies: {target index: (source index, sign)} on the flat entry list."""
    copies = copies or {}
    free = [i for i in range(len(laws)) if i not in copies]
    out = [F(0)] * 4
    for pat in itertools.product(*(list(laws[i].items()) for i in free)):
        x = [F(0)] * len(laws)
        p = F(1)
        for i, (v, w) in zip(free, pat):
            x[i], p = v, p * w
        for t, (s, sign) in copies.items():
            x[t] = sign * x[s]
        if model == "iid":
            L = [x[i * N:(i + 1) * N] for i in range(N)]
        else:
            K, Q = x[:n * N], x[n * N:]
            L = [[sum(K[r * N + a] * Q[r * N + b] for r in range(n)) for b in range(N)] for a in range(N)]
        fr = sum(L[a][b] ** 2 for a in range(N) for b in range(N))
        tr = sum(L[a][b] * L[b][a] for a in range(N) for b in range(N))
        for k, val in enumerate((fr, tr, (fr + tr) / 2, (fr - tr) / 2)):
            out[k] += p * val
    return out


def _finite(d):
    return B.FiniteLaw.from_mapping({str(v): str(p) for v, p in d.items()})


def test_gaussian_qk_moments_by_hand_scalar_and_grid_routes():
    # n = 2, N = 2, W_K ~ N(1, 1), W_Q ~ N(2, 3): E K² = 2, E Q² = 7; E L_ab² = n·2·7 + n(n−1)·1·4 = 36,
    # so E‖L‖² = 144; E L_ab L_ba = (Σ_r 1·2)² = 16 for a ≠ b: E tr(L·L) = 2·36 + 2·16 = 104;
    # E‖S‖² = 124, E‖T‖² = 20
    K, Q = B.GaussianLaw(fmpq(1), fmpq(1)), B.GaussianLaw(fmpq(3), fmpq(2))
    want = [fmpq(144), fmpq(104), fmpq(124), fmpq(20)]
    m = B.lean_moments("qk", 2, {"W_K": K, "W_Q": Q}, 2)
    assert [m[k] for k in B.MOMENT_KEYS] == want
    g = B.lean_moments("qk", 2, {"W_K": ((K, K), (K, K)), "W_Q": ((Q, Q), (Q, Q))}, 2)
    assert [g[k] for k in B.MOMENT_KEYS] == want


@pytest.mark.parametrize("model,N,n,laws", [
    ("iid", 2, 0, [RAD, SKEW, SKEW, RAD]),
    ("qk", 2, 1, [RAD, SKEW, SKEW, RAD]),
    ("qk", 2, 2, [RAD, SKEW, RAD, RAD, SKEW, RAD, RAD, SKEW]),
])
def test_grid_moments_against_brute_force(model, N, n, laws):
    fl = [_finite(d) for d in laws]
    blocks = ({"L": tuple(tuple(fl[i * N:(i + 1) * N]) for i in range(N))} if model == "iid" else
              {"W_K": tuple(tuple(fl[r * N:(r + 1) * N]) for r in range(n)),
               "W_Q": tuple(tuple(fl[n * N + r * N:n * N + (r + 1) * N]) for r in range(n))})
    m = B.lean_moments(model, N, blocks, n)
    assert [m[k] for k in B.MOMENT_KEYS] == [q(x) for x in brute(model, laws, N, n)]


@pytest.mark.parametrize("model,N,n,laws,copies", [
    # L_10 = L_01 (symmetric off-diagonal), L_11 = −L_00
    ("iid", 2, 0, [SKEW, RAD, RAD, SKEW], {2: (1, 1)}),
    ("iid", 2, 0, [RAD, SKEW, SKEW, RAD], {2: (1, 1), 3: (0, -1)}),
    # W_Q = W_K (tied head): L = W_Kᵀ W_K; needs E X⁴
    ("qk", 2, 1, [SKEW, RAD, SKEW, RAD], {2: (0, 1), 3: (1, 1)}),
    ("qk", 2, 2, [SKEW, RAD, RAD, SKEW, SKEW, RAD, RAD, SKEW], {4: (0, 1), 5: (1, 1), 6: (2, -1), 7: (3, 1)}),
])
def test_dependent_moments_against_brute_force(model, N, n, laws, copies):
    fl = [_finite(d) for d in laws]
    for t, (s, sign) in copies.items():
        fl[t] = fl[s] if sign == 1 else B.negated(fl[s])
        laws[t] = {sign * v: p for v, p in laws[s].items()}
    names = ["L"] if model == "iid" else ["W_K", "W_Q"]
    rows = N if model == "iid" else n
    blocks = {nm: tuple(tuple(fl[b * rows * N + r * N: b * rows * N + (r + 1) * N]) for r in range(rows))
              for b, nm in enumerate(names)}
    loc = lambda i: (names[i // (rows * N)], (i % (rows * N)) // N, i % N)  # noqa: E731
    cps = [(loc(t), loc(s), sign) for t, (s, sign) in copies.items()]
    m = B.lean_moments(model, N, blocks, n, cps)
    assert [m[k] for k in B.MOMENT_KEYS] == [q(x) for x in brute(model, laws, N, n, copies)]


def test_pareto_entries_follow_lean_integrals():
    # iid N = 2: L_00 ~ ±Pareto(1, 3/2) (not square-integrable), the others Rademacher.
    # ∫ frobSq L = 0 (not integrable), ∫ tr(L·L) = 0 (L_00² not integrable), ∫ frobSq(skewPart L) =
    # E(L_01 − L_10)²/2 = (1 + 1)/2 = 1 (the diagonal does not enter), ∫ frobSq(symPart L) = 0
    heavy = B.ParetoLaw(fmpq(1), fmpq(3, 2), True)
    assert not B.is_square_integrable(heavy) and heavy.mean() == 0 and heavy.second_moment() == 0
    m = B.lean_moments("iid", 2, {"L": ((heavy, B.RADEMACHER), (B.RADEMACHER, B.RADEMACHER))})
    assert [m[k] for k in B.MOMENT_KEYS] == [0, 0, 0, 1]
    # shape 3: E X² = α x_m²/(α − 2) = 3, square-integrable: E‖L‖² = N²·3 for an iid N = 2 matrix
    light = B.ParetoLaw(fmpq(1), fmpq(3), True)
    assert B.lean_moments("iid", 2, {"L": light})["E_frobSq"] == 12


def test_hmemlp_is_a_decision_but_cannot_be_shown_needed():
    # hMemLp false (every entry ±Pareto(1, 2)): hVar forces σ = 0 (Lean's ∫ X² = 0), and ∫ frobSq L = 0
    inp = LawInput.from_document({"model": "iid", "N": 2, "law": {"pareto": {"shape": "2", "symmetric": True}}})
    run = evaluate("integral_frobSq_iid", inp, drop=("hMemLp",), only=("integral_frobSq_iid",))
    r = run.records[0]
    assert r.hypotheses == {"hMemLp": False, "hVar": True} and r.conclusion == "holds"


def test_a_tied_head_shows_hindep_needed():
    # Proposition 5 with W_Q = W_K: L = W_Kᵀ W_K is symmetric, ‖S‖²/‖L‖² = 1 whenever L ≠ 0
    tie = [{"entry": ["W_Q", 0, j], "of": ["W_K", 0, j], "sign": 1} for j in range(2)]
    rad = LawInput.from_document({"model": "qk", "N": 2, "n": 1, "law_K": "rademacher", "law_Q": "rademacher",
                                  "copies": tie})
    assert not rad.independent() and rad.patterns() == 4
    run = evaluate(P5, rad, drop=("hindep", "hlawK", "hlawQ"))
    assert rec(run, P5).hypotheses["hindep"] is False
    # Rademacher: L = kkᵀ ≠ 0 always, E[‖S‖²/‖L‖²] = 1 ≠ 3/4 exactly: fails (exact)
    assert rec(run, P5).conclusion == "fails" and run.evidence == "exact"
    assert run.subject.witnesses[("enumeration", "energy")]["E_ratio_S"] == "1"
    g = LawInput.from_document({"model": "qk", "N": 2, "n": 1, "law_K": "gaussian", "law_Q": "gaussian",
                                "copies": tie, "monte_carlo": {"samples": 200, "delta": "1/1000"}})
    run = evaluate(P5, g, drop=("hindep",))
    r = rec(run, P5)
    # Gaussian: L = W_Kᵀ W_K is symmetric surely, so ‖S‖²/‖L‖² = [L ≠ 0] and E = P(W_K ≠ 0) = 1 ≠ 3/4:
    # exact, no sample -- hindep is needed
    assert r.hypotheses["hindep"] is False and r.conclusion == "fails" and r.result.evidence == "exact"
    assert g.ratio_route() == ("symmetric", fmpq(1), fmpq(0))
    # with an atom at 0 (lazy: P(0) = 1/2 for each of the two entries of W_K): E = 1 − 1/4 = 3/4 -- holds
    lazy = LawInput.from_document({"model": "qk", "N": 2, "n": 1, "law_K": "lazy", "law_Q": "lazy", "copies": tie})
    assert B.symmetric_ratios("qk", 2, 1, lazy.grids(), lazy.copies) == (fmpq(3, 4), fmpq(0))


def test_copy_with_a_sign_needs_a_symmetric_law():
    from qkverify.errors import QKInputError

    with pytest.raises(QKInputError, match="law must be that of"):
        LawInput.from_document({"model": "iid", "N": 2, "law": "skewed",
                                "copies": [{"entry": ["L", 1, 0], "of": ["L", 0, 1], "sign": -1}]})
    ok = LawInput.from_document({"model": "iid", "N": 2, "law": "rademacher",
                                 "copies": [{"entry": ["L", 1, 0], "of": ["L", 0, 1], "sign": -1}]})
    # L = [[a, b], [−b, d]] with Rademacher entries: ‖L‖² = 4, ‖S‖² = a² + d² = 2: both ratios 1/2
    assert B.enumerate_ratios("iid", 2, 0, ok.grids(), ok.copies) == (fmpq(1, 2), fmpq(1, 2))


def test_issue_example_gaussian_mean_07_is_never_holds():
    # #23: Proposition 5 with the law hypotheses dropped and entries N(0.7, 1): no closed form, so
    # the expectation is sampled and the record reads consistent / inconsistent, never holds
    doc = {"model": "qk", "N": 2, "n": 1, "law_K": {"gaussian": "1", "mean": "7/10"},
           "law_Q": {"gaussian": "1", "mean": "7/10"}, "monte_carlo": {"samples": 4000, "delta": "1/1000"}}
    run = evaluate(P5, LawInput.from_document(doc), drop=("hlawK", "hlawQ"))
    r = rec(run, P5)
    assert r.result.evidence == "empirical" and r.conclusion in ("consistent", "inconsistent")
    lo, hi = (F(x) for x in r.to_json()["sample"]["statistic"]["interval"])
    assert lo < F(76097, 100000) < hi          # the interval holds the true value 0.76097


# ---- the samplers ----------------------------------------------------------------


def test_pareto_and_copy_draws_follow_the_specification():
    # one symmetric Pareto(1, 4) entry then a copy of it with sign −1, recomputed with floats
    rng = random.Random(11)
    a = rng.getrandbits(53)
    y = ((a + 1) / 2 ** 53) ** (-1 / 4)
    bit = rng.getrandbits(1)
    law = B.ParetoLaw(fmpq(1), fmpq(4), True)
    (vals,), = MC.sample_values([[law, law]], 11, 1, copies=[((0, 1), (0, 0), -1)])
    want = fmpq(math.floor(y * 2 ** 32 + 0.5), 2 ** 32) * (-1 if bit else 1)
    assert vals == [want, -want]


def test_sorted_enclosures_hold_every_order_statistic():
    rng = random.Random(3)
    with ctx.workprec(64):
        for _ in range(50):
            mids = [rng.uniform(-1, 1) for _ in range(6)]
            balls = [arb(m, rng.uniform(0, 0.3)) for m in mids]
            enc = Acc.enclose_sorted_desc(balls)
            pts = sorted((float(b.mid()) + float(b.rad()) * rng.uniform(-1, 1) for b in balls), reverse=True)
            assert all(e.contains(arb(p)) for e, p in zip(enc, pts))


def test_triangular_block_spectrum_by_hand():
    # p = 2, m = −1, q = 1: symPart [[2, 1], [1, −1]] has trace 1, determinant −3: (1 ± √13)/2;
    # ‖S‖² = 4 + 1 + 4 = 9, ‖skewPart‖² = 2·(1/2)² ... = q²p²/2 = 2
    inp = LobesInput.from_document({"law": "exponential", "u": "1", "v": "1", "sizes": [1, 2], "paths": 8,
                                    "S": {"form": "triangular", "coupling": "1"}})
    with ctx.workprec(128):
        eig, F2, T2 = Acc.LobeModel(inp).spectrum([arb(2)], [arb(1)])
        r13 = arb(13).sqrt()
        assert eig[0].overlaps((1 + r13) / 2) and eig[1].overlaps((1 - r13) / 2)
        assert F2.overlaps(arb(9)) and T2.overlaps(arb(2))


def test_lobes_hypotheses_are_decisions():
    base = {"law": "exponential", "u": "1", "v": "1", "sizes": [16, 64], "paths": 8}
    cases = {"hXlaw": {"law_X": {"family": "exponential", "rate": "2"}},
             "hX'law": {"law_Xprime": {"family": "uniform"}},
             "hindep": {"dependence": "repeated"},
             "hSsymm": {"S": {"form": "triangular", "coupling": "1/2"}},
             "hspec": {"S": {"scale_pos": "2"}},
             "hNn": {"S": {"extra_zeros": -1}}}
    for binder, extra in cases.items():
        inp = LobesInput.from_document(dict(base, **extra))
        run = evaluate("accumulation", inp, drop=tuple(cases), only=("accumulation",))
        h = run.records[0].hypotheses
        false = {b for b, v in h.items() if not v}
        assert binder in false and false <= {binder, "hspec"}, (binder, false)
    # exponential(rate 1) is gamma(shape 1, scale 1): the same measure, hXlaw true
    same = LobesInput.from_document(dict(base, law_X={"family": "gamma", "shape": 1, "scale": "1"}))
    assert evaluate("accumulation", same, only=("accumulation",)).records[0].hypotheses["hXlaw"] is True


# ---- exact wherever the law allows: convolution, N = 1, zero products ----------------------


def test_rademacher_iid_beyond_the_pattern_limit_is_exact():
    # N = 5: 2^25 value patterns, past the enumeration limit.  By hand: ‖L‖² = N² always, and
    # E‖S‖² = N·1 + N(N−1)/2·E((a+b)/2)²·2 = N + N(N−1)/2 = 15, so E[‖S‖²/‖L‖²] = 15/25 = 3/5
    inp = LawInput.from_document({"model": "iid", "N": 5, "law": "rademacher"})
    assert inp.patterns() == 2 ** 25 and inp.ratio_route()[0] == "convolution" and not inp.needs_monte_carlo()
    run = evaluate("integral_frobSq_iid", inp, drop=("hLaw",))
    w = run.subject.witnesses[("enumeration", "energy")]
    assert (w["method"], w["E_ratio_S"], w["E_ratio_T"]) == ("convolution", "3/5", "2/5")
    assert rec(run, "integral_frobSq_symPart_div_frobSq_gaussian").conclusion == "holds" and run.evidence == "exact"


def test_capped_convolution_against_brute_force():
    LAZY = {F(-1): F(1, 4), F(0): F(1, 2), F(1): F(1, 4)}
    ref = [F(0), F(0)]
    for pat in itertools.product(list(LAZY.items()), repeat=9):
        p = math.prod((w for _, w in pat), start=F(1))
        x = [v for v, _ in pat]
        L = [x[0:3], x[3:6], x[6:9]]
        l2 = sum(L[i][j] ** 2 for i in range(3) for j in range(3))
        s2 = sum(((L[i][j] + L[j][i]) / 2) ** 2 for i in range(3) for j in range(3))
        if l2:
            ref[0] += p * s2 / l2
            ref[1] += p * (l2 - s2) / l2
    e = B.iid_energy_law(3, B.LAZY, capped=True).summary()
    assert (e.E_ratio_S_lean, e.E_ratio_T_lean) == (q(ref[0]), q(ref[1]))


def test_one_dimensional_ratio_is_the_probability_that_L_is_not_zero():
    # N = 1, n = 3, W_K Gaussian (atomless), W_Q lazy (P(0) = 1/2): L = Σ_r K_r Q_r is 0 iff every
    # Q_r = 0, probability 1/8, so E[‖S‖²/‖L‖²] = 7/8 ≠ 1 = (N+1)/(2N): Proposition 5 without hlawQ fails,
    # exactly, with Gaussian entries (hnN, 3 ≤ 1, dropped too)
    inp = LawInput.from_document({"model": "qk", "N": 1, "n": 3, "law_K": "gaussian", "law_Q": "lazy"})
    assert inp.ratio_route() == ("one_dimensional", fmpq(7, 8), fmpq(0))
    run = evaluate(P5, inp, drop=("hlawQ", "hnN"))
    assert rec(run, P5).conclusion == "fails" and run.evidence == "exact"
    # all Gaussian, N = n = 1: L = KQ ≠ 0 almost surely: E = 1 = (N+1)/(2N) -- holds, exactly
    g = LawInput.from_document({"model": "qk", "N": 1, "n": 1, "law_K": "gaussian", "law_Q": "gaussian"})
    run = evaluate(P5, g)
    assert [r.conclusion for r in run.records] == ["holds", "holds"] and run.evidence == "exact"
