"""Appendix B (Defs, Lemmas 7, 8), Appendix C (Defs, Lemma 9) on ``vector`` inputs and Lemma 10
(GramForm) on ``head`` inputs.  A vector's Lean x is μ, or μ/‖μ‖ when normalised: exact in
ℚ(√s), s = ‖μ‖² (:class:`Q`); square roots of rationals are compared by squaring (Lean's √ of a
negative number is 0).  Only the moment series use enclosures (a tail bound).  Lemma 10's λ is
ν/‖S‖, ν the certified spectrum of K = ½JG; O, E, R of λ are sums over the roots of det(tI − K)
in ℚ[t]/(P), the traces come from an inverse witness multiplied back."""

from __future__ import annotations

import functools
import math

from flint import arb, fmpq, fmpq_mat, fmpq_poly, fmpz_poly

from ..algebra import Quad, Root, cmp, count_with_multiplicity, precision, to_arb
from ..derive import Ctx, derived, eye, frob, trace
from ..jsonio import Undecided, require
from ..table import A, NotEvaluable, dfn, predicate, thm

VEC, HEAD = ("vector",), ("head",)
B0, L7, L8, C0, L9 = "MemLambdaSet", "pairingScore_eq", "pairingScore_eq_one_iff", "statO", "statO_eq_tsum_odd_moments"
L10, G = "GramForm.charpoly_roots_filter_ne_zero", A + "GramForm."
HX, HX_, H, H_ = (("hx", "mem_Lambda"),), (("_hx", "mem_Lambda"),), (("h", "mem_Lambda"),), (("_h", "mem_Lambda"),)


def qsqrt(s: fmpq) -> fmpq | None:
    """The rational square root of s ≥ 0, or None."""
    p, d = int(s.p), int(s.q)
    a, b = math.isqrt(p), math.isqrt(d)
    return fmpq(a, b) if a * a == p and b * b == d else None


Q = Quad  # a + b√s


def qroot(s: fmpq) -> Q:
    """√s in ℚ(√s) (a rational when s is a square)."""
    r = qsqrt(s)
    return Q(r) if r is not None else Q(0, 1, s)


def vec(q: Ctx):
    """(x, s, √s): the Lean vector in ℚ(√s), s = ‖μ‖² when normalised, else 1."""
    def build():
        mu = q.arg("x")
        s = sum((m * m for m in mu), fmpq(0)) if q.arg("normalize") else fmpq(1)
        r = qsqrt(s)
        return [Q(m / r) if r is not None else Q(0, m / s, s) for m in mu], s, qroot(s)

    return q.memo("vec", build)


X = lambda q: vec(q)[0]  # noqa: E731


def other(q: Ctx, key: str):
    """The input's y (a list of the length of x) or c, as Qs."""
    if key == "c":
        return Q(q.arg("c"))
    return [Q(t) for t in q.arg("y")]


def even(x):
    require(len(x) % 2 == 0, "input", f"a vector of length {len(x)} is not in ℝ^(2m)")
    return x


lp = lambda x: [x[len(even(x)) - 1 - j] for j in range(len(x) // 2)]  # noqa: E731
lm = lambda x: [-x[j] for j in range(len(even(x)) // 2)]  # noqa: E731
iota = lambda x: [-x[len(x) - 1 - i] for i in range(len(x))]  # noqa: E731
dot = lambda u, v: sum((a * b for a, b in zip(u, v)), Q(0))  # noqa: E731
imb = lambda x: dot(lp(x), lp(x)) - dot(lm(x), lm(x))  # noqa: E731
C = lambda x: dot(lp(x), lm(x))  # noqa: E731
qP = lambda x: dot(*2 * [[a - b for a, b in zip(lp(x), lm(x))]]).rational()  # noqa: E731
P = lambda x: Q(1, -1, qP(x)).real()  # noqa: E731


def mem(x) -> bool:
    """MemLambdaSet: monotone, unit, x_{m−1} < 0 < x_m."""
    m = len(x) // 2
    return (len(x) % 2 == 0 and all((x[i + 1] - x[i]).sign() >= 0 for i in range(len(x) - 1)) and dot(x, x) == 1
            and (m == 0 or x[m - 1].sign() < 0 < x[m].sign()))


stO = lambda x: sum((t.div(1 - t * t) for t in x), Q(0))  # noqa: E731
stE = lambda x: sum(((t * t).div(1 - t * t) for t in x), Q(0))  # noqa: E731
stR = lambda x: sum((Q(1).div(1 - t) for t in x), Q(0))  # noqa: E731
reals = lambda v: [t.real() for t in v]  # noqa: E731


predicate("mem_Lambda", lambda q: mem(X(q)))
dfn(A + "MemLambdaSet", B0, VEC, lambda q: mem(X(q)))
dfn(A + "lamPlus", B0, VEC, lambda q: reals(lp(X(q))))
dfn(A + "lamMinus", B0, VEC, lambda q: reals(lm(X(q))))
dfn(A + "imbalance", B0, VEC, lambda q: imb(X(q)).real())
dfn(A + "statC", B0, VEC, lambda q: C(X(q)).real())
dfn(A + "pairingScore", B0, VEC, lambda q: P(X(q)))
dfn(A + "iotaMap", B0, VEC, lambda q: reals(iota(X(q))))


def _complex(x) -> bool:
    """Σ (p_j + i·m_j)² by complex multiplication, against 𝓘 + 2iC."""
    re, im = Q(0), Q(0)
    for p, m in zip(lp(x), lm(x)):
        re, im = re + p * p - m * m, im + p * m + m * p
    return re == imb(x) and im == 2 * C(x)


for _n, _f, _b in (  # Lemma 7 (BimodalIdentities.lean)
        ("sum_sq_lamPlus_eq", lambda x: dot(lp(x), lp(x)) == (1 + imb(x)) * fmpq(1, 2), HX),
        ("sum_sq_lamMinus_eq", lambda x: dot(lm(x), lm(x)) == (1 - imb(x)) * fmpq(1, 2), HX),
        ("two_mul_norm_lamPlus_mul_norm_lamMinus",   # 2√a√b = √c ⇔ 4ab = max(c, 0)
         lambda x: 4 * dot(lp(x), lp(x)).rational() * dot(lm(x), lm(x)).rational()
         == max(1 - imb(x).rational() ** 2, fmpq(0)), HX),
        ("sum_sq_lamPlus_sub_lamMinus", lambda x: qP(x) == 1 - 2 * C(x).rational(), HX),
        ("pairingScore_eq", lambda x: qP(x) == max(1 - 2 * C(x).rational(), fmpq(0)), HX),
        ("sum_sq_complex", _complex, HX_),
        ("statC_nonneg", lambda x: C(x).sign() >= 0, HX),
        ("two_mul_statC_le_one", lambda x: (1 - 2 * C(x)).sign() >= 0, HX),
        ("pairingScore_nonneg", lambda x: cmp(P(x), fmpq(0)) >= 0, HX),
        ("pairingScore_le_one", lambda x: cmp(P(x), fmpq(1)) <= 0, HX)):
    thm(A + _n, L7, VEC, _b, lambda q, f=_f: f(X(q)))


_D = lambda x: dot(*2 * [[a - b for a, b in zip(x, iota(x))]]).rational()  # noqa: E731
_add = lambda u, v: [a + b for a, b in zip(u, v)]  # noqa: E731


for _n, _f, _b in (  # Lemma 8 (BimodalInvolution.lean)
        ("iotaMap_iotaMap", lambda q, x: iota(iota(x)) == x, ()),
        ("iotaMap_add", lambda q, x: iota(_add(x, other(q, "y"))) == _add(iota(x), iota(other(q, "y"))), ()),
        ("iotaMap_smul", lambda q, x: iota([other(q, "c") * a for a in x]) == [other(q, "c") * a for a in iota(x)], ()),
        ("sum_iotaMap_mul_iotaMap", lambda q, x: dot(iota(x), iota(other(q, "y"))) == dot(x, other(q, "y")), ()),
        ("sum_iotaMap_mul", lambda q, x: dot(iota(x), other(q, "y")) == dot(x, iota(other(q, "y"))), ()),
        ("memLambdaSet_iotaMap_iff", lambda q, x: mem(iota(even(x))) == mem(x), ()),
        ("lamPlus_iotaMap", lambda q, x: lp(iota(x)) == lm(x), ()),
        ("lamMinus_iotaMap", lambda q, x: lm(iota(x)) == lp(x), ()),
        ("imbalance_iotaMap", lambda q, x: imb(iota(x)) == -imb(x), HX_),
        ("statC_iotaMap", lambda q, x: C(iota(x)) == C(x), HX_),
        ("pairingScore_iotaMap", lambda q, x: qP(iota(x)) == qP(x), HX_),          # 1 − √a = 1 − √b ⇔ a = b
        ("sum_sq_sub_iotaMap", lambda q, x: _D(x) == 2 * qP(x), HX_),
        ("pairingScore_eq_dist_iotaMap", lambda q, x: qP(even(x)) == _D(x) / 2, HX),  # √a = √D/√2 ⇔ a = D/2
        ("pairingScore_eq_one_iff", lambda q, x: (cmp(P(x), fmpq(1)) == 0) == (iota(x) == x), HX)):
    thm(A + _n, L8, VEC, _b, lambda q, f=_f: f(q, X(q)))

dfn(A + "statO", C0, VEC, lambda q: stO(X(q)).real())
dfn(A + "statE", C0, VEC, lambda q: stE(X(q)).real())
dfn(A + "statR", C0, VEC, lambda q: stR(X(q)).real())


_below_one = lambda x: all((1 - t * t).sign() > 0 for t in x)  # noqa: E731


def _series(q: Ctx, odd: bool) -> bool:
    """Σ' of the odd (even) moments against the closed form O (E): the series fact is a ball
    holding the sum (K terms and the tail bound); a closed form outside it refutes the
    equality (certified), one inside it decides nothing: an equality between reals is
    never certified by enclosures (undecided)."""
    x = even(X(q))
    if max((t * t).rational() for t in x) >= 1:
        raise NotEvaluable("some |x_i| ≥ 1")
    ball = q.fact("series", "odd" if odd else "even").ball
    q.certified = True
    with precision(256):
        closed = to_arb((stO(x) if odd else stE(x)).real(), 240)
        if not closed.overlaps(ball):
            return False
    raise Undecided("the closed form lies in the series' enclosure: an equality between reals is not decided by "
                    "enclosures")


def _traces(q: Ctx, X_: fmpq_mat, s: fmpq, of: str):
    """For A = X/√s: tr A(1−A²)⁻¹, tr A²(1−A²)⁻¹, tr (1−A)⁻¹ = √s·tr XY, tr X²Y, s·tr Y + √s·tr XY,
    Y = (sI − X²)⁻¹ from the inverse fact."""
    Y = q.fact("inverse", of).Y
    a = qroot(s) * trace(X_ * Y)
    return a, Q(trace(X_ * X_ * Y)), s * trace(Y) + a


def _S_in(q: Ctx) -> fmpq_mat:
    return q.arg("S")


@derived("sI_minus_S2")
def _sI_S2(q: Ctx) -> fmpq_mat:
    """sI − S² for the vector input's S (s = ‖x‖² when normalised, else 1)."""
    S = _S_in(q)
    return eye(S.nrows()) * vec(q)[1] - S * S


def _charpoly_eq(q: Ctx) -> bool:
    """The eigenvalues of the Lean S = S_in/√s are x with multiplicity ⇔ det(tI − S_in) = Π (t − μ_i)."""
    prod = fmpq_poly([1])
    for m in q.arg("x"):
        prod *= fmpq_poly([-m, 1])
    return _S_in(q).nrows() == len(q.arg("x")) and _S_in(q).charpoly() == prod


predicate("S_symmetric", lambda q: q.kind == "lobes" or _S_in(q).transpose() == _S_in(q))
predicate("eigenvalues_perm_eq", _charpoly_eq)
TR = (("hS", "S_symmetric"), ("h", "mem_Lambda"), ("hσ", "eigenvalues_perm_eq"))
for _n, _f, _b in (  # Lemma 9 (OEEquivalences.lean)
        ("MemLambdaSet.abs_entry_lt_one", lambda q: _below_one(X(q)), H),
        ("statO_eq_tsum_odd_moments", lambda q: _series(q, True), H),
        ("statE_eq_tsum_even_moments", lambda q: _series(q, False), H),
        ("summable_abs_odd_moments", lambda q: _below_one(X(q)), H),    # the geometric majorant n·ρ^k
        ("summable_abs_even_moments", lambda q: _below_one(X(q)), H),
        ("statO_eq_half_statR_sub", lambda q: stO(X(q)) == (stR(X(q)) - stR(iota(X(q)))) * fmpq(1, 2), H),
        ("statE_add_card_eq_half_statR_add",
         lambda q: len(even(X(q))) + stE(X(q)) == (stR(X(q)) + stR(iota(X(q)))) * fmpq(1, 2), H),
        ("statO_iotaMap", lambda q: stO(iota(even(X(q)))) == -stO(X(q)), H_),
        ("statE_iotaMap", lambda q: stE(iota(even(X(q)))) == stE(X(q)), H_),
        ("trace_eq_statO", lambda q: _traces(q, _S_in(q), vec(q)[1], "sI_minus_S2")[0] == stO(X(q)), TR),
        ("trace_eq_statE", lambda q: _traces(q, _S_in(q), vec(q)[1], "sI_minus_S2")[1] == stE(X(q)), TR),
        ("trace_eq_statR", lambda q: _traces(q, _S_in(q), vec(q)[1], "sI_minus_S2")[2] == stR(X(q)), TR)):
    thm(A + _n, L9, VEC, _b, _f)


# -- Lemma 10 (GramForm.lean) ---------------------------------------------------------
_n = lambda q: q.arg("n")  # noqa: E731
_J = lambda n: fmpq_mat(2 * n, 2 * n, [int(abs(i - j) == n) for i in range(2 * n) for j in range(2 * n)])  # noqa: E731
_G = lambda q: q.memo("G", lambda: q.mat("M") * q.mat("M").transpose())  # noqa: E731
_K = lambda q: q.mat("half_JG")  # noqa: E731
derived("half_JG")(lambda q: _J(_n(q)) * _G(q) / 2)
derived("sI_minus_K2")(lambda q: eye(2 * _n(q)) * frob(q.mat("S")) - _K(q) * _K(q))
_sorted = lambda v: sorted(v, key=functools.cmp_to_key(cmp))  # noqa: E731
_nu = lambda q: q.memo("nu", lambda: _sorted(q.spectrum("half_JG")))  # noqa: E731
_nz_S = lambda q: q.memo("nzS", lambda: _sorted(v for v in q.spectrum("S") if cmp(v, fmpq(0)) != 0))  # noqa: E731
_same = lambda u, v: len(u) == len(v) and all(cmp(a, b) == 0 for a, b in zip(u, v))  # noqa: E731
_is_sorted_nns = lambda q, lam: all(cmp(a, b) <= 0 for a, b in zip(lam, lam[1:])) and _same(lam, _nz_S(q))  # noqa: E731


def _real_roots(X_: fmpq_mat) -> int:
    """Real roots of det(tI − X) with multiplicity (Sturm inside a Cauchy bound)."""
    f = X_.numer_denom()[0].charpoly()
    cs = f.coeffs()
    B = 1 + max((abs(fmpq(c, cs[-1])) for c in cs[:-1]), default=fmpq(0))
    return count_with_multiplicity(f, -B, B + 1)


def _lam_mem(q: Ctx) -> bool:
    """ν/‖S‖ ∈ Λ_n: nondecreasing, Σν² = ‖S‖² (power sums of the witness), n negative then n positive."""
    nu, n = _nu(q), _n(q)
    p2 = q.fact("spectrum", "half_JG").power_sum_2
    return (all(cmp(a, b) <= 0 for a, b in zip(nu, nu[1:])) and p2 == frob(q.mat("S")) and n >= 1
            and [cmp(v, fmpq(0)) for v in nu] == [-1] * n + [1] * n)


def _root_sum(P_: fmpq_poly, g: fmpq_poly, h: fmpq_poly) -> fmpq:
    """Σ g(ν)/h(ν) over the roots of P with multiplicity: the trace of g·h⁻¹ in ℚ[t]/(P), from the
    power sums p_0..p_{d−1} (Newton's identities)."""
    d, u, _ = h.xgcd(P_)
    if d.degree() != 0:
        raise NotEvaluable("a normalised eigenvalue is ±1 (a zero denominator)")
    c = P_.coeffs()
    e = [c[-1 - i] / c[-1] for i in range(len(c))]
    ps = [fmpq(len(c) - 1)]
    for j in range(1, len(c) - 1):
        ps.append(-j * e[j] - sum((e[i] * ps[j - i] for i in range(1, j)), fmpq(0)))
    return sum((a * ps[i] for i, a in enumerate(((g * u / d) % P_).coeffs())), fmpq(0))


def _stats_lam(q: Ctx, i: int):
    """O, E, R of λ = ν/√s: with h = s − t², O = √s·Σν/h, E = Σν²/h, R = Σ(s + √s·ν)/h."""
    s = frob(q.mat("S"))
    P_, t, h = _K(q).charpoly(), fmpq_poly([0, 1]), fmpq_poly([s, 0, -1])
    if i == 1:
        return Q(_root_sum(P_, t * t, h))
    a = qroot(s) * _root_sum(P_, t, h)
    return a if i == 0 else a + s * _root_sum(P_, fmpq_poly([1]), h)


def _trace_pows(q: Ctx) -> bool:
    """tr(S^k) = tr((½JG)^k) for k = 1..max(N, 2n), hence for all k ≥ 1 (Newton's identities)."""
    S, K = q.mat("S"), _K(q)
    Sk, Kk = S, K
    for _ in range(max(q.N, 2 * _n(q))):
        if trace(Sk) != trace(Kk):
            return False
        Sk, Kk = Sk * S, Kk * K
    return True


HM = (("hM", "stacked_surjective"),)
HMNH = HM + (("hn", "n_pos"), ("h", "sorted_normalized_spectrum"))
predicate("k_pos", lambda q: True)          # k runs over 1..max(N, 2n)
# n_pos (1 ≤ n) is registered once, in rules/laws.py, for heads and laws alike
predicate("sorted_normalized_spectrum", lambda q: _is_sorted_nns(q, _nu(q)))
predicate("sorted_normalized_spectrum_of_S", lambda q: _is_sorted_nns(q, _nz_S(q)))
dfn(G + "M", L10, HEAD, lambda q: q.mat("M"))
dfn(G + "J", L10, HEAD, lambda q: _J(_n(q)))
dfn(G + "G", L10, HEAD, _G)
dfn(G + "IsSortedNormalizedNonzeroSpectrum", L10, HEAD, lambda q: _is_sorted_nns(q, _nu(q)))
for _n_, _f, _b in (
        ("symPart_eq_half_conj", lambda q: q.mat("S") == q.mat("M").transpose() * _J(_n(q)) * q.mat("M") / 2, ()),
        ("trace_pow_symPart", _trace_pows, (("hk", "k_pos"),)),
        ("frobSq_symPart_eq_quarter_trace", lambda q: frob(q.mat("S")) == trace((_J(_n(q)) * _G(q)) ** 2) / 4, ()),
        ("charpoly_roots_filter_ne_zero", lambda q: _same(_nz_S(q), _nu(q)), HM),
        ("card_charpoly_roots_symPart", lambda q: _real_roots(q.mat("S")) == q.N, ()),
        ("card_charpoly_roots_half_JG", lambda q: _real_roots(_K(q)) == 2 * _n(q), HM),
        ("exists_isSortedNormalizedNonzeroSpectrum", lambda q: len(_nu(q)) == 2 * _n(q) and _is_sorted_nns(q, _nu(q)), HM),
        ("isSortedNormalizedNonzeroSpectrum_unique", lambda q: _same(_nu(q), _nz_S(q)),
         (("h", "sorted_normalized_spectrum"), ("h'", "sorted_normalized_spectrum_of_S"))),
        ("memLambdaSet_of_isSortedNormalizedNonzeroSpectrum", _lam_mem, HMNH)) + tuple(
        (f"{nm}_eq_trace", lambda q, i=i: _stats_lam(q, i) == _traces(q, _K(q), frob(q.mat("S")), "sI_minus_K2")[i], HMNH)
        for i, nm in enumerate(("statO", "statE", "statR"))):
    thm(G + _n_, L10, HEAD, _b, _f)
