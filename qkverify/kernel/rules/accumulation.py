"""Theorem 5 (MainText/Accumulation.lean) and Lemma 6 (RandomMatrices/ProportionalLobes.lean).
Exactly: ``profile_of_spectrum`` and ``accumulation_estimates`` on vector inputs (square roots
compared by squaring), ``limitProfile``, ``projP``, Θ and the edges on ``rho`` inputs; b(ρ) =
2ρ/(1 + ρ²) monotone and onto by Sturm counts of the roots of its derivative's numerator.
Empirically, on ``lobes`` inputs: the ``trend`` fact (every path redrawn from the seed derived
from the input, sampler mt19937-lobes/2) and the sign test of the trend P(D_{n_max} < D_{n_min})
≥ 1/2 at the input's level δ -- consistent / inconsistent, never holds or fails: a finite sample
neither proves nor refutes an almost-sure limit.  Every hypothesis is decided on the input
(law_X / law_Xprime, dependence, S's form, scales and extra zeros); measurability holds on every
lobes input (X_i = F⁻¹(U_i)) and no input violates it alone (lean_map: unprobeable)."""

from __future__ import annotations

from flint import arb, fmpq, fmpq_poly

from ..algebra import Coord, sturm_count
from ..derive import Ctx
from . import sampling as SMP
from ..lean import div as lean_div
from ..jsonio import qstr, rat, require
from .sampling import limit_profile
from ..table import MT, A, dfn, predicate, thm
from ..wellformed import Args, kind
from .. import limits
from . import definition6 as Def6
from .moments import X, _S_in, other
from .profile import _same_coord

T5, L6, VEC, RHO, LOBES = "accumulation", "proportional_lobes", ("vector",), ("rho",), ("lobes",)


def _plain(q: Ctx):
    """(a, b) = (x, y) of a vector input taken as given."""
    require(not q.arg("normalize"), "input", "this declaration takes the vector as given (normalize false)")
    return [t.a for t in X(q)], [t.a for t in other(q, "y")]


_pos = lambda v: max(v, fmpq(0))  # noqa: E731


def _roots_eq(q: Ctx) -> bool:
    """det(tI − S) = Π(t − x_i)·Π(t + y_i)·t^(k − 2n); on a lobes input, the roots of S_n are
    s₊X_i, −s₋X'_i and k zeros: hspec iff s₊ = v, s₋ = u and k ≥ 0 (with N_n < 2n the multisets
    have different sizes for n ≥ 1)."""
    if q.kind == "lobes":
        S = q.arg("S")
        return S["scale_pos"] == q.arg("v") and S["scale_neg"] == q.arg("u") and S["extra_zeros"] >= 0
    (x, y), S = _plain(q), _S_in(q)
    if 2 * len(x) > S.nrows():
        return False
    p = fmpq_poly([0, 1]) ** (S.nrows() - 2 * len(x))
    for a, b in zip(x, y):
        p *= fmpq_poly([-a, 1]) * fmpq_poly([b, 1])
    return limits.for_charpoly(S).charpoly() == p


def _profile_of_spectrum(q: Ctx) -> bool:
    """π(S) from S's certified spectrum (Definition 6) against the formula in a = sortDesc x, b = sortDesc y."""
    x, y = _plain(q)
    a, b = sorted(x, reverse=True), sorted(y, reverse=True)
    D = sum((t * t for t in a + b), fmpq(0))
    want = [fmpq(0), 2 * sum((s * t for s, t in zip(a, b)), fmpq(0)) / D,
            sum((_pos(s - t) ** 2 for s, t in zip(a, b)), fmpq(0)) / D, sum((_pos(t - s) ** 2 for s, t in zip(a, b)), fmpq(0)) / D]
    got = [Def6.profile(q)[k] for k in "abcd"]
    # an exact coordinate that differs decides 'fails' whatever the others are; the others are
    # compared by _same_coord (exact, or enclosures apart: certified; overlapping: undecided)
    if any(g.exact is not None and g.exact != w for g, w in zip(got, want)):
        return False
    return all(_same_coord(q, g, Coord(arb(w), w, w == 0)) for g, w in zip(got, want))


def _le_sqrt(lhs: fmpq, c: fmpq, t: fmpq) -> bool:
    """lhs ≤ c·√t (t ≥ 0), by squaring with the signs of both sides."""
    if c >= 0:
        return lhs <= 0 or lhs * lhs <= c * c * t
    return lhs <= 0 and lhs * lhs >= c * c * t


def _estimates(q: Ctx) -> bool:
    """accumulation_estimates with a = x, b = y, ρ = c and δ = √r, r = ‖b − ρa‖²/‖a‖², every quotient
    with Lean's x/0 = 0 (a = 0, ha dropped: all quotients 0)."""
    (a, b), rho = _plain(q), other(q, "c").a
    na, nb = sum((t * t for t in a), fmpq(0)), sum((t * t for t in b), fmpq(0))
    r = lean_div(sum(((s - rho * t) ** 2 for s, t in zip(b, a)), fmpq(0)), na)
    ok = ((lean_div(sum((s * t for s, t in zip(a, b)), fmpq(0)), na) - rho) ** 2 <= r
          and _le_sqrt(abs(lean_div(nb, na) - rho ** 2) - r, 2 * rho, r))
    for p, m in ((sum((_pos(s - t) ** 2 for s, t in zip(a, b)), fmpq(0)), _pos(1 - rho)),
                 (sum((_pos(t - s) ** 2 for s, t in zip(a, b)), fmpq(0)), _pos(rho - 1))):
        u = lean_div(p, na)   # |√u − m| ≤ √r ⇔ √u ≤ m + √r and m ≤ √u + √r
        ok = ok and _le_sqrt(u - m * m - r, 2 * m, r) and _le_sqrt(m * m - u - r, fmpq(2), u * r)
    return ok


_rho = lambda q: q.arg("rho")  # noqa: E731


_b = lambda rho: 2 * rho / (1 + rho * rho)  # noqa: E731
_proj = lambda t: [fmpq(0), t[0] + t[1], t[2], t[3]]  # noqa: E731


def _theta(q: Ctx) -> list:
    """The theta_point fact: the Lean proof's preimage θ = (ρ, ρ, (1 − ρ)₊², (ρ − 1)₊²)/(1 + ρ²)."""
    return q.fact("theta_point", "limitProfile").point


def _mem_projP_theta(q: Ctx) -> bool:
    """limitProfile ρ ∈ projP '' Θ.  projP '' Θ = {(0, B, c, d) : B, c, d ≥ 0, cd = 0, B + c + d = 1}
    (θ = (B/2, B/2, c, d) is a preimage; conversely projP θ = (0, a + b, c, d) has these properties for
    θ ∈ Θ), decided on the point itself (ρ < 0, hρ dropped: B = 2ρ/(1 + ρ²) < 0, so no θ exists); when it
    holds the witness θ must be in Θ (a = b, cd = 0, on Δ₃) and map to it."""
    p = limit_profile(_rho(q))
    member = p[0] == 0 and min(p) >= 0 and sum(p) == 1 and p[2] * p[3] == 0
    if member:
        t = _theta(q)
        require(min(t) >= 0 and sum(t) == 1 and t[0] == t[1] and t[2] * t[3] == 0 and _proj(t) == p,
                "theta_point witness", "θ is not in Θ or projP θ ≠ limitProfile ρ")
    return member


NUM, DEN = fmpq_poly([0, 2]), fmpq_poly([1, 0, 1])
DNUM = NUM.derivative() * DEN - NUM * DEN.derivative()   # b' = DNUM/DEN²


def _roots_in(f: fmpq_poly, lo: fmpq, hi: fmpq | None) -> int:
    """Distinct real roots of f in (lo, hi), or (lo, ∞) for hi = None (Cauchy bound)."""
    cs = f.coeffs()
    top = 1 + max((abs(c / cs[-1]) for c in cs[:-1]), default=fmpq(0)) if hi is None else hi
    return sturm_count(f, lo, max(top, lo)) - (hi is not None and f(hi) == 0)


_mono = lambda: _roots_in(DEN, -fmpq(10**9), None) == 0 and _roots_in(DNUM, fmpq(0), fmpq(1)) == 0 and DNUM(fmpq(1, 2)) > 0  # noqa: E731
_anti = lambda: _roots_in(DEN, -fmpq(10**9), None) == 0 and _roots_in(DNUM, fmpq(1), None) == 0 and DNUM(fmpq(2)) < 0  # noqa: E731


for _p, _f in (("rho_nonneg", lambda q: (_rho(q) if q.kind == "rho" else other(q, "c").a) >= 0),
               ("rho_pos", lambda q: _rho(q) > 0), ("rho_le_one", lambda q: _rho(q) <= 1),
               ("rho_ge_one", lambda q: _rho(q) >= 1), ("a_ne_zero", lambda q: any(_plain(q)[0])),
               ("a_nonneg", lambda q: min(_plain(q)[0]) >= 0), ("x_pos", lambda q: min(_plain(q)[0]) > 0),
               ("two_n_le_k", lambda q: 2 * len(_plain(q)[0]) <= _S_in(q).nrows()),
               ("y_pos", lambda q: min(_plain(q)[1]) > 0), ("spectrum_eq", _roots_eq)):
    predicate(_p, _f)
dfn(MT + "limitProfile", T5, RHO, lambda q: limit_profile(_rho(q)))
dfn(MT + "projP", T5, RHO, lambda q: _proj(_theta(q)))
dfn(MT + "limitB", T5, RHO, lambda q: _b(_rho(q)))
for _n, _k, _b_, _f in (
        ("profile_of_spectrum", VEC, (("hk", "two_n_le_k"), ("hS", "S_symmetric"), ("hx", "x_pos"), ("hy", "y_pos"),
                                      ("hroots", "spectrum_eq")), _profile_of_spectrum),
        ("accumulation_estimates", VEC, (("hρ", "rho_nonneg"), ("ha", "a_ne_zero"), ("ha0", "a_nonneg")), _estimates),
        ("limitProfile_mem_projP_Theta", RHO, (("hρ", "rho_nonneg"),), _mem_projP_theta),
        ("limitProfile_edge_d", RHO, (("h0", "rho_pos"), ("h1", "rho_le_one")),
         lambda q: limit_profile(_rho(q)) == [0, _b(_rho(q)), 1 - _b(_rho(q)), 0]),
        ("limitProfile_edge_c", RHO, (("h1", "rho_ge_one"),),
         lambda q: limit_profile(_rho(q)) == [0, _b(_rho(q)), 0, 1 - _b(_rho(q))]),
        ("limitB_strictMonoOn", RHO, (), lambda q: _mono()),
        ("limitB_strictAntiOn", RHO, (), lambda q: _anti()),
        # onto (0, 1]: monotone and continuous from b(0) = 0 to b(1) = 1; from b(1) = 1 down to 0 at ∞
        # (deg NUM < deg DEN), positive on [1, ∞) (NUM has no root there)
        ("limitB_image_Ioc", RHO, (), lambda q: _mono() and _b(fmpq(0)) == 0 and _b(fmpq(1)) == 1),
        ("limitB_image_Ici", RHO, (), lambda q: _anti() and _b(fmpq(1)) == 1 and NUM.degree() < DEN.degree()
         and _roots_in(NUM, fmpq(1), None) == 0 and NUM(fmpq(2)) > 0)):
    thm(MT + _n, T5, _k, _b_, _f)


# -- the sampled limits ------------------------------------------------------------------


def _second_moment(law: tuple) -> fmpq | None:
    """∫ y² dγ, None when infinite."""
    f = law[0]
    if f == "pareto":
        return law[2] * law[1] ** 2 / (law[2] - 2) if law[2] > 2 else None
    if f == "exponential":
        return 2 / law[1] ** 2
    if f == "gamma":
        return law[1] * (law[1] + 1) * law[2] ** 2
    return (law[1] ** 2 + law[1] * law[2] + law[2] ** 2) / 3


def _same(a: tuple, b: tuple) -> bool:
    """The same measure: exponential(λ) is gamma(1, 1/λ)."""
    canon = lambda l: ("gamma", fmpq(1), 1 / l[1]) if l[0] == "exponential" else \
        (("gamma", fmpq(l[1]), l[2]) if l[0] == "gamma" else l)  # noqa: E731
    return canon(a) == canon(b)


def _trend(q: Ctx, what: str) -> bool:
    """The sign test of the trend fact: consistent iff more than k* paths decreased."""
    t = q.fact("trend", what)
    a = q.args
    q.empirical = True
    q.sample = {"seed": SMP.seed(q.inp), "seed_derivation": SMP.SEED_DERIVATION, "confidence": qstr(1 - a["delta"]),
                "test": "sign-trend", "statistic": {"paths": t.paths, "decreasing": t.decreasing,
                                                    "reject_at_most": t.threshold,
                                                    "sizes": [a["sizes"][0], a["sizes"][-1]]}}
    return t.decreasing > t.threshold


for _p, _f in (("u_pos", lambda q: q.arg("u") > 0), ("v_pos", lambda q: q.arg("v") > 0),
               ("gamma_positive", lambda q: q.arg("law")[0] != "uniform" or q.arg("law")[1] >= 0),
               ("second_moment_finite", lambda q: _second_moment(q.arg("law")) is not None),
               ("second_moment_pos", lambda q: (_second_moment(q.arg("law")) or 1) > 0),
               ("X_measurable", lambda q: q.kind == "lobes"), ("Xprime_measurable", lambda q: q.kind == "lobes"),
               ("samples_independent", lambda q: q.arg("dependence") == "independent"),
               ("X_law_gamma", lambda q: _same(q.arg("law_X"), q.arg("law"))),
               ("Xprime_law_gamma", lambda q: _same(q.arg("law_Xprime"), q.arg("law"))),
               ("Nn_ge_two_n", lambda q: q.arg("S")["extra_zeros"] >= 0),
               ("Sn_symmetric", lambda q: q.arg("S")["form"] == "symmetric" or q.arg("S")["coupling"] == 0)):
    predicate(_p, _f)
SAMPLE = (("hu", "u_pos"), ("hv", "v_pos"), ("hX", "X_measurable"), ("hX'", "Xprime_measurable"),
          ("hindep", "samples_independent"), ("hXlaw", "X_law_gamma"), ("hX'law", "Xprime_law_gamma"),
          ("hγpos", "gamma_positive"), ("hM", "second_moment_finite"), ("hMpos", "second_moment_pos"))
thm(A + "proportional_lobes", L6, LOBES, SAMPLE, lambda q: _trend(q, "delta"))
thm(MT + "accumulation", T5, LOBES, SAMPLE + (("hNn", "Nn_ge_two_n"), ("hSsymm", "Sn_symmetric"),
                                              ("hspec", "spectrum_eq")), lambda q: _trend(q, "distance"))


# -- the input kinds of this section: their Lean types (the well-formedness pass, kernel/wellformed.py)


@kind("rho")
def _wf_rho(i: dict) -> Args:
    return Args(rho=rat(i["rho"]))


_FAMILY = {"exponential": ("rate",), "gamma": ("shape", "scale"), "uniform": ("lo", "hi"), "pareto": ("scale", "shape")}


def _positive_law(law: dict, what: str) -> tuple:
    """A law of the lobes study: ("exponential", λ), ("gamma", k, θ) with an integer shape
    1 ≤ k ≤ 64 (the sampler adds k exponentials), ("uniform", lo, hi) with lo < hi, ("pareto", x_m,
    α) with 1/16 ≤ α ≤ 64; every other parameter positive."""
    fam = law["family"]
    need = _FAMILY[fam]
    require(set(law) == {"family", *need}, "input", f"{what}: a {fam} law takes exactly {', '.join(need)}")
    if fam == "gamma":
        require(isinstance(law["shape"], int) and 1 <= law["shape"] <= 64 and rat(law["scale"]) > 0, "input",
                f"{what}: a gamma law has an integer shape 1..64 and a positive scale")
        return ("gamma", law["shape"], rat(law["scale"]))
    p = [rat(law[k]) for k in need]
    if fam == "uniform":
        require(p[0] < p[1], "input", f"{what}: a uniform law needs lo < hi")
        return ("uniform", p[0], p[1])
    require(all(v > 0 for v in p), "input", f"{what}: the parameters of a {fam} law must be positive")
    if fam == "pareto":
        require(fmpq(1, 16) <= p[1] <= 64, "input", f"{what}: a Pareto shape lies in [1/16, 64]")
    return (fam, *p)


@kind("lobes")
def _wf_lobes(i: dict) -> Args:
    """Sampled lobes (Lemma 6, Theorem 5): γ, the laws X and X' actually have (γ when absent), u, v,
    increasing sizes, the paths and the sign test's level δ = 1/k (20 ≤ k ≤ 10¹²), the dependence,
    and S_n (form, coupling, spectral scales, extra zeros; defaults: symmetric, v, u, 0)."""
    s = i["sizes"]
    require(all(a < b for a, b in zip(s, s[1:])), "input", "sizes must increase strictly")
    limits.over("samples", s[-1], limits.MAX_LOBES, "MAX_LOBES")
    gamma = _positive_law(i["law"], "law")
    delta = rat(i["delta"])
    require(delta.p == 1 and 20 <= delta.q <= 10 ** 12, "input", "delta must be 1/k with 20 ≤ k ≤ 10^12")
    S = i.get("S", {"form": "symmetric", "coupling": "0", "scale_pos": i["v"], "scale_neg": i["u"], "extra_zeros": 0})
    return Args(law=gamma, law_X=_positive_law(i["law_X"], "law_X") if "law_X" in i else gamma,
                law_Xprime=_positive_law(i["law_Xprime"], "law_Xprime") if "law_Xprime" in i else gamma,
                u=rat(i["u"]), v=rat(i["v"]), sizes=list(s), paths=i["paths"], delta=delta,
                dependence=i.get("dependence", "independent"),
                S={"form": S["form"], "coupling": rat(S["coupling"]), "scale_pos": rat(S["scale_pos"]),
                   "scale_neg": rat(S["scale_neg"]), "extra_zeros": S["extra_zeros"]})
