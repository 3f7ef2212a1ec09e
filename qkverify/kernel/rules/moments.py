"""Appendix B (BalancedBimodalSpectra: Defs, Lemma 7, Lemma 8) and Appendix C (Moments: Defs,
Lemma 9, Lemma 10) on ``vector`` and ``head`` inputs.

A vector input's Lean x is μ, or μ/‖μ‖ when normalised: its entries lie in ℚ(√s), s = ‖μ‖²,
and every statement is decided exactly there (:class:`Q`); square roots of the rationals
‖λ₊ − λ₋‖², 1 − 2C, … are compared by squaring (√a = √b ⇔ a = b for a, b ≥ 0, Lean's
√ of a negative number being 0).  The moment series are the one place where enclosures
decide (a tail bound).  Lemma 10's λ is ν/‖S‖, ν running over the certified spectrum of
½JG; O, E, R of it are sums over the roots of its characteristic polynomial, computed in
ℚ[t]/(P) (exact), and the traces come from an inverse witness multiplied back."""

from __future__ import annotations

import functools
import math

from flint import arb, fmpq, fmpq_mat, fmpq_poly, fmpz_poly

from .. import witnesses as F
from ..algebra import Root, cmp, count_with_multiplicity, power_sum_2, precision, to_arb
from ..derive import Ctx, frob, trace
from ..jsonio import Undecided, rat, ratmat, require
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


class Q:
    """a + b√s (a, b, s rational, s ≥ 0); all numbers of one computation share s."""

    __slots__ = ("a", "b", "s")

    def __init__(self, a, b=0, s=1):
        self.a, self.b, self.s = fmpq(a), fmpq(b), fmpq(s)

    def _c(self, y):
        return y if isinstance(y, Q) else Q(y, 0, self.s)

    def __add__(self, y):
        y = self._c(y)
        return Q(self.a + y.a, self.b + y.b, self.s)

    __radd__ = __add__

    def __neg__(self):
        return Q(-self.a, -self.b, self.s)

    def __sub__(self, y):
        return self + -self._c(y)

    def __rsub__(self, y):
        return self._c(y) - self

    def __mul__(self, y):
        y = self._c(y)
        return Q(self.a * y.a + self.b * y.b * self.s, self.a * y.b + self.b * y.a, self.s)

    __rmul__ = __mul__

    def sign(self) -> int:
        sa, sb = (self.a > 0) - (self.a < 0), (self.b > 0) - (self.b < 0)
        if sb == 0 or sa == sb or sa == 0:
            return sa or sb
        d = self.a ** 2 - self.b ** 2 * self.s
        return sa if d > 0 else (sb if d < 0 else 0)

    def __eq__(self, y):
        return (self - y).sign() == 0

    def div(self, y) -> "Q":
        """Lean's x / y (x / 0 = 0)."""
        y = self._c(y)
        n = y.a ** 2 - y.b ** 2 * y.s
        return Q(0, 0, self.s) if y.sign() == 0 else self * Q(y.a / n, -y.b / n, self.s)

    def rational(self) -> fmpq:
        require(self.b == 0, "value", "an irrational value where a rational one is needed")
        return self.a

    def real(self):
        """The kernel's exact real: a rational, or the Root of t² − 2at + a² − b²s in a bracket."""
        r = qsqrt(self.s)
        if self.b == 0 or r is not None:
            return self.a + self.b * (r or 0)
        p, d = int(self.s.p), int(self.s.q)
        k = 64 + p.bit_length() + d.bit_length()
        t = math.isqrt((p * d) << (2 * k))           # √s = √(pd)/d, bracketed by t/(d·2^k)
        lo, hi = sorted(self.a + self.b * fmpq(v, d << k) for v in (t, t + 1))
        c = [self.a ** 2 - self.b ** 2 * self.s, -2 * self.a, fmpq(1)]
        den = math.lcm(*(int(x.q) for x in c))
        return Root(fmpz_poly([int(x.p) * (den // int(x.q)) for x in c]), lo, hi)


def tsum(xs, zero):
    return sum(xs, zero)


def qroot(s: fmpq) -> Q:
    """√s as a Q of the field ℚ(√s) (a rational when s is a square)."""
    r = qsqrt(s)
    return Q(r) if r is not None else Q(0, 1, s)


# -- vector inputs ---------------------------------------------------------------


def vec(q: Ctx):
    """(x, s, √s, lift): the Lean vector in ℚ(√s), s = ‖μ‖² (1 unless normalised), √s as a Q,
    and the embedding of rationals (y, c, constants)."""
    def build():
        mu = [rat(t) for t in q.inp["x"]]
        s = sum((m * m for m in mu), fmpq(0)) if q.inp["normalize"] else fmpq(1)
        r = qsqrt(s)
        sf = fmpq(1) if r is not None else s
        x = [Q(m / r) if r is not None else Q(0, m / s, s) for m in mu]
        return x, s, qroot(s), (lambda v: Q(v, 0, sf))

    return q.memo("vec", build)


def X(q):
    return vec(q)[0]


def Z(q):
    return vec(q)[3](0)


def even(x):
    require(len(x) % 2 == 0, "input", f"a vector of length {len(x)} is not in ℝ^(2m)")
    return x


def lp(x):
    n = len(even(x))
    return [x[n - 1 - j] for j in range(n // 2)]


def lm(x):
    return [-x[j] for j in range(len(even(x)) // 2)]


def iota(x):
    return [-x[len(x) - 1 - i] for i in range(len(x))]


def dot(u, v, z):
    return tsum((a * b for a, b in zip(u, v)), z)


def imb(x, z):
    return dot(lp(x), lp(x), z) - dot(lm(x), lm(x), z)


def C(x, z):
    return dot(lp(x), lm(x), z)


def qP(x, z) -> fmpq:
    """‖λ₊ − λ₋‖² (rational)."""
    d = [a - b for a, b in zip(lp(x), lm(x))]
    return dot(d, d, z).rational()


def P(x, z):
    """𝒫(x) = 1 − √‖λ₊ − λ₋‖² as an exact real."""
    return Q(1, -1, qP(x, z)).real()


def mem(x, z) -> bool:
    """x ∈ Λ_m (MemLambdaSet: mono, unit, middle_neg, middle_pos)."""
    if len(x) % 2:
        return False
    m = len(x) // 2
    mono = all((x[i + 1] - x[i]).sign() >= 0 for i in range(len(x) - 1))
    return mono and dot(x, x, z) == 1 and (m == 0 or x[m - 1].sign() < 0 < x[m].sign())


def stO(x, z):
    return tsum((t.div(1 - t * t) for t in x), z)


def stE(x, z):
    return tsum(((t * t).div(1 - t * t) for t in x), z)


def stR(x, z):
    return tsum((Q(1, 0, t.s).div(1 - t) for t in x), z)


def reals(v):
    return [t.real() for t in v]


def other(q: Ctx, key: str):
    """The rational y (as a list) or c of the input, lifted; NotEvaluable when absent."""
    require(key in q.inp, "input", f"this declaration needs the input's {key}")
    lift = vec(q)[3]
    return [lift(rat(t)) for t in q.inp[key]] if key == "y" else lift(rat(q.inp[key]))


def y_same(q: Ctx):
    y = other(q, "y")
    require(len(y) == len(X(q)), "input", "x and y have different lengths")
    return y


predicate("mem_Lambda", lambda q: mem(X(q), Z(q)))

# Definitions (Defs.lean)
dfn(A + "MemLambdaSet", B0, VEC, lambda q: mem(X(q), Z(q)))
dfn(A + "lamPlus", B0, VEC, lambda q: reals(lp(X(q))))
dfn(A + "lamMinus", B0, VEC, lambda q: reals(lm(X(q))))
dfn(A + "imbalance", B0, VEC, lambda q: imb(X(q), Z(q)).real())
dfn(A + "statC", B0, VEC, lambda q: C(X(q), Z(q)).real())
dfn(A + "pairingScore", B0, VEC, lambda q: P(X(q), Z(q)))
dfn(A + "iotaMap", B0, VEC, lambda q: reals(iota(X(q))))


def _l7(name, fn, binders=HX):
    thm(A + name, L7, VEC, binders, lambda q: fn(X(q), Z(q)))


# Lemma 7 (BimodalIdentities.lean)
_l7("sum_sq_lamPlus_eq", lambda x, z: dot(lp(x), lp(x), z) == (1 + imb(x, z)) * fmpq(1, 2))
_l7("sum_sq_lamMinus_eq", lambda x, z: dot(lm(x), lm(x), z) == (1 - imb(x, z)) * fmpq(1, 2))
_l7("two_mul_norm_lamPlus_mul_norm_lamMinus",   # 2√a√b = √c ⇔ 4ab = max(c, 0)
    lambda x, z: 4 * dot(lp(x), lp(x), z).rational() * dot(lm(x), lm(x), z).rational()
    == max(1 - imb(x, z).rational() ** 2, fmpq(0)))
_l7("sum_sq_lamPlus_sub_lamMinus", lambda x, z: qP(x, z) == 1 - 2 * C(x, z).rational())
_l7("pairingScore_eq", lambda x, z: qP(x, z) == max(1 - 2 * C(x, z).rational(), fmpq(0)))


def _complex(x, z) -> bool:
    """Σ (p_j + i·m_j)² by complex multiplication, against 𝓘 + 2iC."""
    re = im = z
    for p, m in zip(lp(x), lm(x)):
        re, im = re + p * p - m * m, im + p * m + m * p
    return re == imb(x, z) and im == 2 * C(x, z)


_l7("sum_sq_complex", _complex, HX_)
_l7("statC_nonneg", lambda x, z: C(x, z).sign() >= 0)
_l7("two_mul_statC_le_one", lambda x, z: (1 - 2 * C(x, z)).sign() >= 0)
_l7("pairingScore_nonneg", lambda x, z: cmp(P(x, z), fmpq(0)) >= 0)
_l7("pairingScore_le_one", lambda x, z: cmp(P(x, z), fmpq(1)) <= 0)


def _l8(name, fn, binders=()):
    thm(A + name, L8, VEC, binders, fn)


# Lemma 8 (BimodalInvolution.lean)
_l8("iotaMap_iotaMap", lambda q: iota(iota(X(q))) == X(q))
_l8("iotaMap_add", lambda q: iota([a + b for a, b in zip(X(q), y_same(q))])
    == [a + b for a, b in zip(iota(X(q)), iota(y_same(q)))])
_l8("iotaMap_smul", lambda q: iota([other(q, "c") * a for a in X(q)]) == [other(q, "c") * a for a in iota(X(q))])
_l8("sum_iotaMap_mul_iotaMap", lambda q: dot(iota(X(q)), iota(y_same(q)), Z(q)) == dot(X(q), y_same(q), Z(q)))
_l8("sum_iotaMap_mul", lambda q: dot(iota(X(q)), y_same(q), Z(q)) == dot(X(q), iota(y_same(q)), Z(q)))
_l8("memLambdaSet_iotaMap_iff", lambda q: mem(iota(even(X(q))), Z(q)) == mem(X(q), Z(q)))
_l8("lamPlus_iotaMap", lambda q: lp(iota(X(q))) == lm(X(q)))
_l8("lamMinus_iotaMap", lambda q: lm(iota(X(q))) == lp(X(q)))
_l8("imbalance_iotaMap", lambda q: imb(iota(X(q)), Z(q)) == -imb(X(q), Z(q)), HX_)
_l8("statC_iotaMap", lambda q: C(iota(X(q)), Z(q)) == C(X(q), Z(q)), HX_)
_l8("pairingScore_iotaMap", lambda q: qP(iota(X(q)), Z(q)) == qP(X(q), Z(q)), HX_)   # 1 − √a = 1 − √b ⇔ a = b


def _D(q) -> fmpq:
    """Σ (x_i − (ιx)_i)²."""
    d = [a - b for a, b in zip(X(q), iota(X(q)))]
    return dot(d, d, Z(q)).rational()


_l8("sum_sq_sub_iotaMap", lambda q: _D(q) == 2 * qP(X(q), Z(q)), HX_)
_l8("pairingScore_eq_dist_iotaMap", lambda q: qP(X(q), Z(q)) == _D(q) / 2, HX)    # √a = √D/√2 ⇔ a = D/2
_l8("pairingScore_eq_one_iff", lambda q: (cmp(P(X(q), Z(q)), fmpq(1)) == 0) == (iota(X(q)) == X(q)), HX)

# Appendix C definitions (Moments/Defs.lean)
dfn(A + "statO", C0, VEC, lambda q: stO(X(q), Z(q)).real())
dfn(A + "statE", C0, VEC, lambda q: stE(X(q), Z(q)).real())
dfn(A + "statR", C0, VEC, lambda q: stR(X(q), Z(q)).real())


def _below_one(x) -> bool:
    return all((1 - t * t).sign() > 0 for t in x)


def _series(q: Ctx, odd: bool) -> bool:
    """The tsum of the odd (even) moments against O (E): K terms of the series as a ball
    and the tail bound n·ρ^K/(1 − ρ), ρ = max x_i² (|x|^(2k+1), |x|^(2k+2) ≤ ρ^k)."""
    x = X(q)
    w = q.witness("series", "odd" if odd else "even")
    rho = max((t * t).rational() for t in x)
    if rho >= 1:
        raise NotEvaluable("some |x_i| ≥ 1")
    T = len(x) * rho ** w["terms"] / (1 - rho)
    require(T <= fmpq(1, 10 ** w["digits"]), "series witness", f"{w['terms']} terms leave a tail above 10^-{w['digits']}")
    q.certified = True
    with precision(256):
        part = arb(0)
        for t in x:
            r = (t * t).rational()
            ball = _ball(t) if odd else arb(r)
            acc = arb(0)
            for _ in range(w["terms"]):
                acc, ball = acc + ball, ball * arb(r)
            part += acc
        d = _ball(stO(x, Z(q)) if odd else stE(x, Z(q))) - part
        if bool(d.upper() <= arb(T)) and bool(d.lower() >= -arb(T)):
            return True
        if bool(d.lower() > arb(T)) or bool(d.upper() < -arb(T)):
            return False
    raise Undecided("the series enclosure and the closed form overlap at the interval's edge")


def _ball(v: Q) -> arb:
    return to_arb(v.real(), 240)


def _traces(q: Ctx, X_: fmpq_mat, s: fmpq, root: Q, of: str):
    """For A = X/√s: (tr A(1−A²)⁻¹, tr A²(1−A²)⁻¹, tr (1−A)⁻¹) = (√s·tr XY, tr X²Y, s·tr Y + √s·tr XY)
    with Y = (sI − X²)⁻¹ from the inverse witness."""
    n = X_.nrows()
    Y = q.memo(("inv", of), lambda: F.inverse_fact(q.witness("inverse", of), fmpq_mat(
        n, n, [s * int(i == j) for i in range(n) for j in range(n)]) - X_ * X_))
    a = trace(X_ * Y)
    return root * a, root * 0 + trace(X_ * X_ * Y), root * 0 + s * trace(Y) + root * a


def _S_in(q: Ctx) -> fmpq_mat:
    require("S" in q.inp, "input", "this declaration needs the matrix S of the vector input")
    return q.memo("S_in", lambda: ratmat(q.inp["S"]))


def _charpoly_eq(q: Ctx) -> bool:
    """The eigenvalues of the Lean S = S_in/√s are x (with multiplicity) ⇔ charpoly(S_in) = Π (t − μ_i)."""
    mu = [rat(t) for t in q.inp["x"]]
    S = _S_in(q)
    if S.nrows() != len(mu):
        return False
    prod = fmpq_poly([1])
    for m in mu:
        prod *= fmpq_poly([-m, 1])
    return S.charpoly() == prod


predicate("S_symmetric", lambda q: q.kind == "lobes" or _S_in(q).transpose() == _S_in(q))
predicate("eigenvalues_perm_eq", _charpoly_eq)

# Lemma 9 (OEEquivalences.lean)
thm(A + "MemLambdaSet.abs_entry_lt_one", L9, VEC, H, lambda q: _below_one(X(q)))
thm(A + "statO_eq_tsum_odd_moments", L9, VEC, H, lambda q: _series(q, True))
thm(A + "statE_eq_tsum_even_moments", L9, VEC, H, lambda q: _series(q, False))
thm(A + "summable_abs_odd_moments", L9, VEC, H, lambda q: _below_one(X(q)))     # geometric majorant
thm(A + "summable_abs_even_moments", L9, VEC, H, lambda q: _below_one(X(q)))
thm(A + "statO_eq_half_statR_sub", L9, VEC, H,
    lambda q: stO(X(q), Z(q)) == (stR(X(q), Z(q)) - stR(iota(X(q)), Z(q))) * fmpq(1, 2))
thm(A + "statE_add_card_eq_half_statR_add", L9, VEC, H,
    lambda q: len(even(X(q))) + stE(X(q), Z(q)) == (stR(X(q), Z(q)) + stR(iota(X(q)), Z(q))) * fmpq(1, 2))
thm(A + "statO_iotaMap", L9, VEC, H_, lambda q: stO(iota(X(q)), Z(q)) == -stO(X(q), Z(q)))
thm(A + "statE_iotaMap", L9, VEC, H_, lambda q: stE(iota(X(q)), Z(q)) == stE(X(q), Z(q)))
TR = (("hS", "S_symmetric"), ("h", "mem_Lambda"), ("hσ", "eigenvalues_perm_eq"))
for _i, (_nm, _f) in enumerate((("statO", stO), ("statE", stE), ("statR", stR))):
    thm(A + f"trace_eq_{_nm}", L9, VEC, TR, lambda q, i=_i, f=_f:
        _traces(q, _S_in(q), vec(q)[1], vec(q)[2], "sI_minus_S2")[i] == f(X(q), Z(q)))


# -- Lemma 10 (GramForm.lean) on heads ---------------------------------------------


def _n(q: Ctx) -> int:
    return q.inp["n"] if "n" in q.inp else q.mat("W_Q").nrows()


def _J(n: int) -> fmpq_mat:
    return fmpq_mat(2 * n, 2 * n, [int(abs(i - j) == n) for i in range(2 * n) for j in range(2 * n)])


def _G(q: Ctx) -> fmpq_mat:
    return q.memo("G", lambda: q.mat("M") * q.mat("M").transpose())


def _K(q: Ctx) -> fmpq_mat:
    """½JG."""
    return q.memo("K", lambda: _J(_n(q)) * _G(q) / 2)


def _sorted(v):
    return sorted(v, key=functools.cmp_to_key(cmp))


def _nu(q: Ctx):
    """The certified spectrum of ½JG, nondecreasing (λ = ν/‖S‖)."""
    return q.memo("nu", lambda: _sorted(F.spectrum_fact(q.witness("spectrum", "half_JG"), _K(q))))


def _nz_S(q: Ctx):
    """The nonzero eigenvalues of S, nondecreasing."""
    return q.memo("nzS", lambda: _sorted(v for v in q.spectrum("S") if cmp(v, fmpq(0)) != 0))


def _same(u, v) -> bool:
    return len(u) == len(v) and all(cmp(a, b) == 0 for a, b in zip(u, v))


def _is_sorted_nns(q: Ctx, lam) -> bool:
    """IsSortedNormalizedNonzeroSpectrum S (λ/‖S‖): λ nondecreasing, its multiset the nonzero roots."""
    return all(cmp(a, b) <= 0 for a, b in zip(lam, lam[1:])) and _same(lam, _nz_S(q))


def _real_roots(X_: fmpq_mat) -> int:
    """Number of real roots of charpoly(X) with multiplicity (Sturm, inside a Cauchy bound)."""
    D = X_.numer_denom()[1]
    f = F.charpoly(F.integer_scaled(X_, D, "charpoly"))
    cs = f.coeffs()
    B = 1 + max((abs(fmpq(c, cs[-1])) for c in cs[:-1]), default=fmpq(0))
    return count_with_multiplicity(f, -B, B + 1)


def _lam_mem(q: Ctx) -> bool:
    """ν/‖S‖ ∈ Λ_n: nondecreasing, Σν² = ‖S‖² (power sums of the witness), n negative then n positive."""
    w, nu, n = q.witness("spectrum", "half_JG"), _nu(q), _n(q)
    D = rat(w["scale"])
    p2 = sum((f["multiplicity"] * power_sum_2(F.poly(f["poly"])) for f in w["factors"]), fmpq(0)) / (D * D)
    signs = [cmp(v, fmpq(0)) for v in nu]
    return (all(cmp(a, b) <= 0 for a, b in zip(nu, nu[1:])) and p2 == frob(q.mat("S")) and n >= 1
            and signs == [-1] * n + [1] * n)


def _power_sums(P_: fmpq_poly, k: int) -> list[fmpq]:
    c = P_.coeffs()
    d = len(c) - 1
    e = [c[d - i] / c[d] for i in range(d + 1)]
    p = [fmpq(d)]
    for j in range(1, k):
        p.append(-j * (e[j] if j <= d else 0) - sum((e[i] * p[j - i] for i in range(1, min(j, d + 1))), fmpq(0)))
    return p


def _root_sum(P_: fmpq_poly, g: fmpq_poly, h: fmpq_poly) -> fmpq:
    """Σ g(ν)/h(ν) over the roots of P with multiplicity: the trace of g·h⁻¹ in ℚ[t]/(P)."""
    d, u, _ = h.xgcd(P_)
    if d.degree() != 0:
        raise NotEvaluable("a normalised eigenvalue is ±1 (a zero denominator)")
    ps = _power_sums(P_, max(P_.degree(), 1))
    return sum((c * ps[i] for i, c in enumerate(((g * u / d) % P_).coeffs())), fmpq(0))


def _stats_lam(q: Ctx, i: int):
    """O, E or R of λ = ν/√s: with h = s − t², O = √s·Σν/h, E = Σν²/h, R = Σ(s + √s·ν)/h."""
    s = frob(q.mat("S"))
    root = qroot(s)
    P_, t, h = _K(q).charpoly(), fmpq_poly([0, 1]), fmpq_poly([s, 0, -1])
    if i == 1:
        return root * 0 + _root_sum(P_, t * t, h)
    a = root * _root_sum(P_, t, h)
    return a if i == 0 else a + s * _root_sum(P_, fmpq_poly([1]), h)


def _trace_pows(q: Ctx) -> bool:
    """tr(S^k) = tr((½JG)^k) for k = 1..max(N, 2n): all k ≥ 1 by Newton's identities."""
    S, K = q.mat("S"), _K(q)
    Sk, Kk = S, K
    for _ in range(max(q.N, 2 * _n(q))):
        if trace(Sk) != trace(Kk):
            return False
        Sk, Kk = Sk * S, Kk * K
    return True


HM = (("hM", "stacked_surjective"),)
predicate("k_pos", lambda q: True)          # k runs over 1..max(N, 2n)
predicate("n_pos", lambda q: _n(q) >= 1)
predicate("sorted_normalized_spectrum", lambda q: _is_sorted_nns(q, _nu(q)))
predicate("sorted_normalized_spectrum_of_S", lambda q: _is_sorted_nns(q, _nz_S(q)))
dfn(G + "M", L10, HEAD, lambda q: q.mat("M"))
dfn(G + "J", L10, HEAD, lambda q: _J(_n(q)))
dfn(G + "G", L10, HEAD, _G)
thm(G + "symPart_eq_half_conj", L10, HEAD, (), lambda q: q.mat("S") == q.mat("M").transpose() * _J(_n(q)) * q.mat("M") / 2)
thm(G + "trace_pow_symPart", L10, HEAD, (("hk", "k_pos"),), _trace_pows)
thm(G + "frobSq_symPart_eq_quarter_trace", L10, HEAD, (),
    lambda q: frob(q.mat("S")) == trace((_J(_n(q)) * _G(q)) ** 2) / 4)
thm(G + "charpoly_roots_filter_ne_zero", L10, HEAD, HM, lambda q: _same(_nz_S(q), _nu(q)))
thm(G + "card_charpoly_roots_symPart", L10, HEAD, (), lambda q: _real_roots(q.mat("S")) == q.N)
thm(G + "card_charpoly_roots_half_JG", L10, HEAD, HM, lambda q: _real_roots(_K(q)) == 2 * _n(q))
dfn(G + "IsSortedNormalizedNonzeroSpectrum", L10, HEAD, lambda q: _is_sorted_nns(q, _nu(q)))
thm(G + "exists_isSortedNormalizedNonzeroSpectrum", L10, HEAD, HM,
    lambda q: len(_nu(q)) == 2 * _n(q) and _is_sorted_nns(q, _nu(q)))
thm(G + "isSortedNormalizedNonzeroSpectrum_unique", L10, HEAD,
    (("h", "sorted_normalized_spectrum"), ("h'", "sorted_normalized_spectrum_of_S")), lambda q: _same(_nu(q), _nz_S(q)))
HMNH = HM + (("hn", "n_pos"), ("h", "sorted_normalized_spectrum"))
thm(G + "memLambdaSet_of_isSortedNormalizedNonzeroSpectrum", L10, HEAD, HMNH, _lam_mem)
for _i, _nm in enumerate(("statO", "statE", "statR")):
    thm(G + f"{_nm}_eq_trace", L10, HEAD, HMNH, lambda q, i=_i: _stats_lam(q, i) == _traces(
        q, _K(q), frob(q.mat("S")), qroot(frob(q.mat("S"))), "sI_minus_K2")[i])
