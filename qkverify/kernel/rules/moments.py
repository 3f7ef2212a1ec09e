"""Appendix B (Defs, Lemmas 7, 8), Appendix C (Defs, Lemma 9) on ``vector`` inputs and Lemma 10
(GramForm) on ``head`` and ``matrix_spectrum`` inputs.  A vector's Lean x is μ, or μ/‖μ‖ when
normalised: exact in ℚ(√s), s = ‖μ‖² (:class:`Q`); square roots of rationals are compared by
squaring (Lean's √ of a negative number is 0).  The moment series are Lean's ``tsum``, decided
exactly (summable or not by an exact test on x, the closed form, 0 when not summable).  Traces
use Mathlib's inverse (0 for a singular matrix) from the ``inverse`` witness.  Lemma 10's λ is the
head's lam, else ν/‖S‖ (ν the certified spectrum of K = ½JG, Lean's x/0 = 0); O, E, R of the
sorted spectrum are sums over the roots of det(tI − S) in ℚ[t]/(P); of any other λ, exact when λ
is rational, else an enclosure (a difference certified, an equality undecided)."""

from __future__ import annotations

import functools
import math

from flint import fmpq, fmpq_mat, fmpq_poly

from .. import limits
from ..algebra import Quad, Root, cmp, count_with_multiplicity, precision, sign_at, sturm_count, to_arb
from ..derive import Ctx, derived, eye, frob, trace
from ..jsonio import Invalid, Undecided, rat, require
from ..table import A, NotEvaluable, dfn, predicate, thm
from ..wellformed import Args, exact_real, kind, square, vector
from ..wellformed import S_of_x, even_x, needs

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
        require(s != 0, "input", "the zero vector has no normalisation")
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
E2M = (even_x,)  # x : Fin (2m) → ℝ
dfn(A + "MemLambdaSet", B0, VEC, lambda q: mem(X(q)), args=E2M)
dfn(A + "lamPlus", B0, VEC, lambda q: reals(lp(X(q))), args=E2M)
dfn(A + "lamMinus", B0, VEC, lambda q: reals(lm(X(q))), args=E2M)
dfn(A + "imbalance", B0, VEC, lambda q: imb(X(q)).real(), args=E2M)
dfn(A + "statC", B0, VEC, lambda q: C(X(q)).real(), args=E2M)
dfn(A + "pairingScore", B0, VEC, lambda q: P(X(q)), args=E2M)
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
    thm(A + _n, L7, VEC, _b, lambda q, f=_f: f(X(q)), args=E2M)


_D = lambda x: dot(*2 * [[a - b for a, b in zip(x, iota(x))]]).rational()  # noqa: E731
_add = lambda u, v: [a + b for a, b in zip(u, v)]  # noqa: E731


def _l8_args(name: str) -> tuple:
    """iotaMap's lemmas take x (and y, c) of any length n; the others x of length 2m."""
    extra = (needs("y"),) if "add" in name or name.startswith("sum_iotaMap") else (needs("c"),) if "smul" in name else ()
    return extra + (() if name.startswith(("iotaMap_", "sum_iotaMap")) else E2M)


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
    thm(A + _n, L8, VEC, _b, lambda q, f=_f: f(q, X(q)), args=_l8_args(_n))

dfn(A + "statO", C0, VEC, lambda q: stO(X(q)).real())
dfn(A + "statE", C0, VEC, lambda q: stE(X(q)).real())
dfn(A + "statR", C0, VEC, lambda q: stR(X(q)).real())


_below_one = lambda x: all((1 - t * t).sign() > 0 for t in x)  # noqa: E731


def tsum_moments(x, odd: bool) -> Q:
    """Lean's ``∑' k, ∑ i, x i ^ (2k+1)`` (odd) or ``x i ^ (2(k+1))`` (even), exactly.

    Even: the terms are ≥ 0; summable exactly when every |x_i| < 1 (an entry with |x_i| ≥ 1
    adds ≥ 1 to every term), and then the sum is the geometric Σ x_i²/(1 − x_i²).  Odd: group
    the entries with |x_i| ≥ 1 by x_i² and count their signs; when every count is 0 those entries
    cancel term by term and the sum is Σ_{|x_i|<1} x_i/(1 − x_i²); otherwise the largest |x_i| ≥ 1
    with a nonzero count c dominates, |term_k| ≥ |c|/2 for large k, and the family is not
    summable.  A family that is not summable sums to 0 (``tsum_eq_zero_of_not_summable``)."""
    if not odd:
        return sum(((t * t).div(1 - t * t) for t in x), Q(0)) if _below_one(x) else Q(0)
    big: list = []   # [x², Σ sign]
    for t in x:
        t2 = t * t
        if (t2 - 1).sign() >= 0:
            g = next((g for g in big if g[0] == t2), None)
            if g is None:
                big.append([t2, 0])
                g = big[-1]
            g[1] += t.sign()
    if any(c for _, c in big):
        return Q(0)
    return sum((t.div(1 - t * t) for t in x if (1 - t * t).sign() > 0), Q(0))


def _series(q: Ctx, odd: bool) -> bool:
    """statO x (statE x) = Lean's tsum of the odd (even) moments, both exact."""
    x = even(X(q))
    return tsum_moments(x, odd) == (stO(x) if odd else stE(x))


def _traces(q: Ctx, X_: fmpq_mat, s: fmpq, name: str):
    """For A = X/√s (s > 0) with Mathlib's inverse (0 for a singular matrix): tr A(1−A²)⁻¹,
    tr A²(1−A²)⁻¹, tr (1−A)⁻¹.  (1 − A²)⁻¹ = s·Y, Y = (sI − X²)⁻¹ from the inverse fact
    (Y = 0 when singular): O = √s·tr XY, E = tr X²Y.  When √s = r is rational, (1 − A)⁻¹ =
    r·(rI − X)⁻¹ (the ``rI_minus_`` inverse fact, 0 when singular); when √s is irrational,
    √sI − X is invertible exactly when sI − X² is (its Galois conjugate −√sI − X is singular with
    it, and (√sI − X)(√sI + X) = sI − X²), and then (1 − A)⁻¹ = √s(√sI + X)Y: R = s·tr Y + √s·tr XY
    (0 when Y = 0)."""
    Y = q.fact("inverse", "sI_minus_" + name + "2").Y
    a = qroot(s) * trace(X_ * Y)
    r = qsqrt(s)
    if r is not None:
        R = Q(r * trace(q.fact("inverse", "rI_minus_" + name).Y))
    else:
        R = s * trace(Y) + a
    return a, Q(trace(X_ * X_ * Y)), R


def _S_in(q: Ctx) -> fmpq_mat:
    return q.arg("S")


@derived("sI_minus_S2")
def _sI_S2(q: Ctx) -> fmpq_mat:
    """sI − S² for the vector input's S (s = ‖x‖² when normalised, else 1)."""
    S = _S_in(q)
    return eye(S.nrows()) * vec(q)[1] - S * S


def _rI(X_: fmpq_mat, s: fmpq) -> fmpq_mat:
    r = qsqrt(s)
    if r is None:
        raise Invalid("input", "rI − X is named only when √s = r is rational")
    return eye(X_.nrows()) * r - X_


derived("rI_minus_S")(lambda q: _rI(_S_in(q), vec(q)[1]))


def _charpoly_eq(q: Ctx) -> bool:
    """The eigenvalues of the Lean S = S_in/√s are x with multiplicity ⇔ det(tI − S_in) = Π (t − μ_i)."""
    prod = fmpq_poly([1])
    for m in q.arg("x"):
        prod *= fmpq_poly([-m, 1])
    return _S_in(q).nrows() == len(q.arg("x")) and limits.for_charpoly(_S_in(q)).charpoly() == prod


predicate("S_symmetric", lambda q: q.kind == "lobes" or _S_in(q).transpose() == _S_in(q))
predicate("eigenvalues_perm_eq", _charpoly_eq)
TR = (("hS", "S_symmetric"), ("h", "mem_Lambda"), ("hσ", "eigenvalues_perm_eq"))


def _vtraces(q: Ctx):
    """The traces of Lemma 9 part 3 at the Lean S = S_in/√s (S_in of the size of x)."""
    if _S_in(q).nrows() != len(X(q)):
        raise NotEvaluable(f"S is {_S_in(q).nrows()} × {_S_in(q).nrows()} but x has {len(X(q))} entries")
    return q.memo("vtraces", lambda: _traces(q, _S_in(q), vec(q)[1], "S"))


for _n, _f, _b in (  # Lemma 9 (OEEquivalences.lean)
        ("MemLambdaSet.abs_entry_lt_one", lambda q: _below_one(even(X(q))), H),
        ("statO_eq_tsum_odd_moments", lambda q: _series(q, True), H),
        ("statE_eq_tsum_even_moments", lambda q: _series(q, False), H),
        ("summable_abs_odd_moments", lambda q: _below_one(even(X(q))), H),  # |x_i| ≥ 1: a term ≥ 1 at every k
        ("summable_abs_even_moments", lambda q: _below_one(even(X(q))), H),
        ("statO_eq_half_statR_sub", lambda q: stO(X(q)) == (stR(X(q)) - stR(iota(X(q)))) * fmpq(1, 2), H),
        ("statE_add_card_eq_half_statR_add",
         lambda q: len(even(X(q))) + stE(X(q)) == (stR(X(q)) + stR(iota(X(q)))) * fmpq(1, 2), H),
        ("statO_iotaMap", lambda q: stO(iota(even(X(q)))) == -stO(X(q)), H_),
        ("statE_iotaMap", lambda q: stE(iota(even(X(q)))) == stE(X(q)), H_),
        ("trace_eq_statO", lambda q: _vtraces(q)[0] == stO(X(q)), TR),
        ("trace_eq_statE", lambda q: _vtraces(q)[1] == stE(X(q)), TR),
        ("trace_eq_statR", lambda q: _vtraces(q)[2] == stR(X(q)), TR)):
    thm(A + _n, L9, VEC, _b, _f, args=E2M + ((S_of_x,) if _n.startswith("trace_eq") else ()))


# -- Lemma 10 (GramForm.lean) ---------------------------------------------------------
# exact reals of Lemma 10: rationals and Roots, with the two operations the definition needs


def _int_poly(cs) -> fmpz_poly:
    """An integer polynomial proportional to the rational coefficients cs (ascending)."""
    P = fmpq_poly(list(cs))
    return P.numer() if not P.is_zero() else fmpz_poly([0])


def scale(x, c: fmpq):
    """c·x for an exact real x (rational or Root) and a rational c."""
    if isinstance(x, fmpq) or c == 0:
        return x * c
    if c < 0:
        return scale(x, -c).neg()
    d = x.f.degree()
    g = _int_poly([a * c ** (d - k) for k, a in enumerate(x.f.coeffs())])   # c^d·f(t/c)
    return Root(g, x.lo * c, x.hi * c)


def _halve(x: Root) -> Root:
    """The half of x's interval holding x (an input's exact real, refined to square it: the kernel
    never refines a witness's intervals)."""
    mid = (x.lo + x.hi) / 2
    s = sign_at(x.f, mid)
    if s == 0:
        return Root(x.f, mid, mid)
    return Root(x.f, x.lo, mid) if s != sign_at(x.f, x.lo) else Root(x.f, mid, x.hi)


def real_square(x):
    """x² for an exact real x: a rational, or a Root of (the irreducible factor holding it of)
    e(u)² − u·o(u)², x's polynomial f(t) = e(t²) + t·o(t²), in an interval refined until that
    polynomial has exactly one root there (Sturm)."""
    if isinstance(x, fmpq):
        return x * x
    x = Root(x.f, x.lo, x.hi)   # a copy: refining does not touch the caller's
    if x.lo <= 0 <= x.hi and sign_at(x.f, fmpq(0)) == 0:
        return fmpq(0)
    cs = [fmpq(c) for c in x.f.coeffs()]
    e = fmpq_poly(cs[0::2])
    o = fmpq_poly(cs[1::2])
    u = fmpq_poly([0, 1])
    P = _int_poly((e * e - u * o * o).coeffs())
    P = P // P.gcd(P.derivative())
    for _ in range(limits.MAX_BISECTIONS):
        if x.lo == x.hi:
            return x.lo * x.lo
        if not (x.lo < 0 < x.hi):
            lo, hi = sorted((x.lo * x.lo, x.hi * x.hi))
            if sign_at(P, lo) and sign_at(P, hi) and sturm_count(P, lo, hi) == 1:
                _, facs = P.factor()
                g = next(g for g, _ in facs if sign_at(g, lo) * sign_at(g, hi) < 0)
                if g.degree() == 1:
                    return fmpq(-g.coeffs()[0], g.coeffs()[1])
                return Root(g, lo, hi)
        x = _halve(x)
    raise Undecided("the square of an algebraic number was not isolated within the bisection limit MAX_BISECTIONS")


def rational_or_none(x):
    """x when it is rational (a Root whose polynomial has the rational root in its interval)."""
    if isinstance(x, fmpq):
        return x
    for g, _ in x.f.factor()[1]:
        if g.degree() == 1:
            r = fmpq(-g.coeffs()[0], g.coeffs()[1])
            if x.lo <= r <= x.hi:
                return r
    return None


_n = lambda q: q.arg("n")  # noqa: E731
_J = lambda n: fmpq_mat(2 * n, 2 * n, [int(abs(i - j) == n) for i in range(2 * n) for j in range(2 * n)])  # noqa: E731
_G = lambda q: q.memo("G", lambda: q.mat("M") * q.mat("M").transpose())  # noqa: E731
_K = lambda q: q.mat("half_JG")  # noqa: E731
derived("half_JG")(lambda q: _J(_n(q)) * _G(q) / 2)
derived("sI_minus_K2")(lambda q: eye(2 * _n(q)) * frob(q.mat("S")) - _K(q) * _K(q))
derived("rI_minus_K")(lambda q: _rI(_K(q), frob(q.mat("S"))))
_sorted = lambda v: sorted(v, key=functools.cmp_to_key(cmp))  # noqa: E731
_nu = lambda q: q.memo("nu", lambda: _sorted(q.spectrum("half_JG")))  # noqa: E731
_same = lambda u, v: len(u) == len(v) and all(cmp(a, b) == 0 for a, b in zip(u, v))  # noqa: E731


def _nz_S(q: Ctx) -> list:
    """The nonzero real roots of det(tI − S), ascending: S = symPart(W_Kᵀ W_Q) of a head (its
    spectrum witness) or the matrix_spectrum input's S, any square matrix (its real_roots witness)."""
    def build():
        vals = q.fact("real_roots", "S").values if q.kind == "matrix_spectrum" else q.spectrum("S")
        return _sorted(v for v in vals if cmp(v, fmpq(0)) != 0)

    return q.memo("nzS", build)


class Lam:
    """The lam of Lemma 10 as entries v_i/√f (f > 0; f = 1 for an input's lam, f = frobSq S for
    ν/‖S‖), or all 0 (the computed ν/‖S‖ when S = 0: Lean's x/0 = 0)."""

    def __init__(self, vals: list, f: fmpq, given: bool):
        self.vals, self.f, self.given = vals, f, given

    def __len__(self):
        return len(self.vals)


def _lam(q: Ctx, key: str = "lam") -> Lam:
    """The input's lam (lam2), else — on a head — the computed ν/‖S‖, ν the roots of det(tI − ½JG)."""
    def build():
        if key in q.args:
            return Lam(q.arg(key), fmpq(1), True)
        if q.kind == "matrix_spectrum":
            raise Invalid("input", f"this declaration needs the input's {key}")
        f = frob(q.mat("S"))
        return Lam(_nu(q) if f else [fmpq(0)] * len(_nu(q)), f if f else fmpq(1), False)

    return q.memo(("Lam", key), build)


def _S_f(q: Ctx) -> fmpq:
    return frob(q.mat("S"))


def is_snns(q: Ctx, lam: Lam) -> bool:
    """``IsSortedNormalizedNonzeroSpectrum S lam``: lam nondecreasing and, as a multiset,
    {r/‖S‖ : r a nonzero real root of det(tI − S)}, ‖S‖ = √f, f = frobSq S (r/0 = 0, but with f = 0
    S = 0 has no nonzero root).  Both sides sorted, entry by entry: lam_i = r_i/√f ⇔ the signs agree
    and f·lam_i² = r_i² (lam_i·√f = r_i exactly when √f is rational)."""
    vals, nz, f = lam.vals, _nz_S(q), _S_f(q)
    if any(cmp(a, b) > 0 for a, b in zip(vals, vals[1:])) or len(vals) != len(nz):
        return False
    if not lam.given:   # ν/√f against r/√f, one f > 0: compare ν with r
        return _same(vals, nz)
    r = qsqrt(f)
    for x, y in zip(vals, nz):
        if cmp(x, fmpq(0)) != cmp(y, fmpq(0)):
            return False
        if r is not None:
            if cmp(scale(x, r), y) != 0:
                return False
        elif cmp(scale(real_square(x), f), real_square(y)) != 0:
            return False
    return True


def _real_roots(X_: fmpq_mat) -> int:
    """Real roots of det(tI − X) with multiplicity (Sturm inside a Cauchy bound)."""
    f = limits.for_charpoly(X_).numer_denom()[0].charpoly()
    cs = f.coeffs()
    B = 1 + max((abs(fmpq(c, cs[-1])) for c in cs[:-1]), default=fmpq(0))
    return count_with_multiplicity(f, -B, B + 1)


def _lam_sq(lam: Lam):
    """Σ lam_i² exactly when every lam_i² is rational, else None."""
    out = fmpq(0)
    for v in lam.vals:
        v2 = rational_or_none(real_square(v))
        if v2 is None:
            return None
        out += v2 / lam.f
    return out


def _lam_mem(q: Ctx) -> bool:
    """lam ∈ Λ_n: nondecreasing, lam_{n−1} < 0 < lam_n (exact signs; n ≥ 1), Σ lam_i² = 1 (exact
    when the squares are rational; for the sorted spectrum Σλ² = Σr²/‖S‖² = p₂(S)/frobSq S, the
    tr(S²)/frobSq S — undecided otherwise)."""
    lam, n = _lam(q), _n(q)
    vals = lam.vals
    if len(vals) != 2 * n:
        return False
    mono = all(cmp(a, b) <= 0 for a, b in zip(vals, vals[1:]))
    middle = n >= 1 and cmp(vals[n - 1], fmpq(0)) < 0 < cmp(vals[n], fmpq(0))
    if not (mono and middle):
        return False
    ss = _lam_sq(lam)
    if ss is None:
        if not is_snns(q, lam):
            raise Undecided("Σ lam_i² is not rational and lam is not the sorted spectrum")
        f, S = _S_f(q), q.mat("S")
        ss = trace(S * S) / f if f else fmpq(0)   # Σ r²/f over the nonzero roots of the symmetric S
    return ss == 1


def _root_sum(P_: fmpq_poly, g: fmpq_poly, h: fmpq_poly) -> fmpq:
    """Σ g(ν)/h(ν) over the roots of P with multiplicity: the trace of g·h⁻¹ in ℚ[t]/(P), from the
    power sums p_0..p_{d−1} (Newton's identities).  NotEvaluable when h vanishes at a root."""
    d, u, _ = h.xgcd(P_)
    if d.degree() != 0:
        raise NotEvaluable("a normalised eigenvalue is ±1 (a zero denominator)")
    c = P_.coeffs()
    e = [c[-1 - i] / c[-1] for i in range(len(c))]
    ps = [fmpq(len(c) - 1)]
    for j in range(1, len(c) - 1):
        ps.append(-j * e[j] - sum((e[i] * ps[j - i] for i in range(1, j)), fmpq(0)))
    return sum((a * ps[i] for i, a in enumerate(((g * u / d) % P_).coeffs())), fmpq(0))


def _nonzero_part(P_: fmpq_poly) -> fmpq_poly:
    cs = list(P_.coeffs())
    while cs and cs[0] == 0:
        cs.pop(0)
    return fmpq_poly(cs)


def _stats_spectrum(q: Ctx, i: int, P_: fmpq_poly) -> Q:
    """O, E, R of λ = r/√f, r running over the roots of P (with multiplicity): with h = f − t²,
    O = √f·Σr/h, E = Σr²/h, R = Σ(f + √f·r)/h (NotEvaluable when some r² = f)."""
    f = _S_f(q)
    t, h = fmpq_poly([0, 1]), fmpq_poly([f, 0, -1])
    if i == 1:
        return Q(_root_sum(P_, t * t, h))
    a = qroot(f) * _root_sum(P_, t, h)
    return a if i == 0 else a + f * _root_sum(P_, fmpq_poly([1]), h)


def _stats_entries(q: Ctx, lam: Lam, i: int):
    """statO/E/R of lam entry by entry with Lean's x/0 = 0: exact in ℚ(√f) when every v_i is
    rational, else an arb enclosure (zero denominators decided exactly: λ² = 1 ⇔ v² = f, λ = 1 ⇔
    v > 0 and v² = f)."""
    f = lam.f
    if all(isinstance(v, fmpq) for v in lam.vals):
        r = qsqrt(f)
        xs = [Q(v / r) if r is not None else Q(0, v / f, f) for v in lam.vals]
        return (stO, stE, stR)[i](xs)
    with precision(256):
        rf, tot = arb(f).sqrt(), arb(0)
        for v in lam.vals:
            at_one = cmp(real_square(v), f) == 0
            if at_one and (i < 2 or cmp(v, fmpq(0)) > 0):
                continue
            a = to_arb(v, 240) / rf
            tot += (a / (1 - a * a)) if i == 0 else (a * a / (1 - a * a)) if i == 1 else 1 / (1 - a)
        return tot


def _gram_traces(q: Ctx):
    """tr H(1 − H²)⁻¹, tr H²(1 − H²)⁻¹, tr (1 − H)⁻¹ for H = K/‖S‖ (K = ½JG; 1/0 = 0, so H = 0 and
    the traces are 0, 0, 2n when S = 0), with Mathlib's inverse."""
    f = _S_f(q)
    if f == 0:
        return Q(0), Q(0), Q(2 * _n(q))
    return _traces(q, _K(q), f, "K")


def _stats_lam(q: Ctx, i: int) -> bool:
    """statO/E/R lam = the trace.  The statistic exactly by root sums for the computed lam = ν/‖S‖
    (over det(tI − ½JG)) and for the sorted spectrum (over the nonzero roots of det(tI − S)); of any
    other lam exactly when rational, else by enclosures (separated: fails, certified; overlapping:
    undecided -- an equality between reals is not decided by enclosures)."""
    rhs = _gram_traces(q)[i]
    lam = _lam(q)
    lhs = None
    P_ = None
    if _S_f(q) != 0 and not lam.given:
        P_ = limits.for_charpoly(_K(q)).charpoly()
    elif _S_f(q) != 0 and is_snns(q, lam):
        P_ = _nonzero_part(limits.for_charpoly(q.mat("S")).charpoly())
    if P_ is not None:
        try:
            lhs = _stats_spectrum(q, i, P_)
        except NotEvaluable:
            lhs = None
    if lhs is None:
        lhs = _stats_entries(q, lam, i)
    if isinstance(lhs, Q):
        return lhs == rhs
    q.certified = True
    with precision(256):
        if not lhs.overlaps(to_arb(rhs.real(), 240)):
            return False
    raise Undecided("lam is irrational and not the sorted spectrum: the sides overlap, an equality of reals is "
                    "not decided by enclosures")


def _mpow(X_: fmpq_mat, k: int) -> fmpq_mat:
    out = eye(X_.nrows())
    while k > 0:  # k ≥ 0 (limits.for_power refuses a negative one)
        if k & 1:
            out = out * X_
        X_, k = X_ * X_, k >> 1
    return out


def _k(q: Ctx) -> int:
    if "k" not in q.args:
        raise NotEvaluable("trace_pow_symPart is stated for one k: the head input gives none")
    return q.arg("k")


def _trace_pow(q: Ctx) -> bool:
    """tr(S^k) = tr((½JG)^k) at the input's k, by exact matrix powers (k = 0: N against 2n)."""
    k = _k(q)
    return trace(_mpow(limits.for_power(q.mat("S"), k), k)) == trace(_mpow(limits.for_power(_K(q), k), k))


def _exists(q: Ctx) -> bool:
    """∃ lam : Fin (2n) → ℝ, IsSortedNormalizedNonzeroSpectrum S lam.  A lam of length 2n exists
    exactly when det(tI − S) has 2n nonzero real roots with multiplicity (from S's spectrum
    witness): then lam = (those roots, ascending)/‖S‖ is one (nondecreasing, and its multiset is the
    definition's by construction); otherwise the multisets have different sizes and no lam exists."""
    return len(_nz_S(q)) == 2 * _n(q)


HM = (("hM", "stacked_surjective"),)
HMNH = HM + (("hn", "n_pos"), ("h", "sorted_normalized_spectrum"))
predicate("k_pos", lambda q: _k(q) >= 1)
# n_pos (1 ≤ n) is registered once, in rules/laws.py, for heads and laws alike
predicate("sorted_normalized_spectrum", lambda q: is_snns(q, _lam(q)))
predicate("sorted_normalized_spectrum_of_S", lambda q: is_snns(q, _lam(q, "lam2")))
dfn(G + "M", L10, HEAD, lambda q: q.mat("M"))
dfn(G + "J", L10, HEAD, lambda q: _J(_n(q)))
dfn(G + "G", L10, HEAD, _G)


def _snns_value(q: Ctx) -> bool:
    if q.kind == "head" and "lam" not in q.args:
        raise NotEvaluable("the definition is evaluated at the head's lam: the input gives none")
    return is_snns(q, _lam(q))


dfn(G + "IsSortedNormalizedNonzeroSpectrum", L10, ("matrix_spectrum", "head"), _snns_value)
for _n_, _f, _b, _k_ in (
        ("symPart_eq_half_conj", lambda q: q.mat("S") == q.mat("M").transpose() * _J(_n(q)) * q.mat("M") / 2, (), HEAD),
        ("trace_pow_symPart", _trace_pow, (("hk", "k_pos"),), HEAD),
        ("frobSq_symPart_eq_quarter_trace", lambda q: frob(q.mat("S")) == trace((_J(_n(q)) * _G(q)) ** 2) / 4, (),
         HEAD),
        ("charpoly_roots_filter_ne_zero", lambda q: _same(_nz_S(q), _nu(q)), HM, HEAD),
        ("card_charpoly_roots_symPart", lambda q: _real_roots(q.mat("S")) == q.N, (), HEAD),
        ("card_charpoly_roots_half_JG", lambda q: _real_roots(_K(q)) == 2 * _n(q), HM, HEAD),
        ("exists_isSortedNormalizedNonzeroSpectrum", _exists, HM, HEAD),
        ("isSortedNormalizedNonzeroSpectrum_unique",
         lambda q: _same(_lam(q).vals, _lam(q, "lam2").vals),
         (("h", "sorted_normalized_spectrum"), ("h'", "sorted_normalized_spectrum_of_S")), ("matrix_spectrum",)),
        ("memLambdaSet_of_isSortedNormalizedNonzeroSpectrum", _lam_mem, HMNH, HEAD)) + tuple(
        (f"{nm}_eq_trace", lambda q, i=i: _stats_lam(q, i), HMNH, HEAD)
        for i, nm in enumerate(("statO", "statE", "statR"))):
    thm(G + _n_, L10, _k_, _b, _f)


# -- the input kinds of this section: their Lean types (the well-formedness pass, kernel/wellformed.py)


@kind("vector")
def _wf_vector(i: dict) -> Args:
    """x : Fin n → ℝ; y of the same length; c : ℝ; S square (its size is tied to x by each
    declaration, e.g. 2m × 2m for Lemma 9)."""
    x = vector(i["x"], "x")
    a = Args(x=x, normalize=i["normalize"], n=len(x))
    if "y" in i:
        a["y"] = vector(i["y"], "y", len(x))
    if "c" in i:
        a["c"] = rat(i["c"])
    if "S" in i:
        a["S"] = square(i["S"], "S")
    return a


@kind("matrix_spectrum")
def _wf_matrix_spectrum(i: dict) -> Args:
    """S : Matrix (Fin k) (Fin k) ℝ (any), lam, lam' : Fin m → ℝ (one m), exact reals."""
    a = Args(S=square(i["S"], "S"), lam=[exact_real(x, f"lam[{j}]") for j, x in enumerate(i["lam"])])
    if "lam2" in i:
        require(len(i["lam2"]) == len(i["lam"]), "input", "lam and lam2 must have one length m")
        a["lam2"] = [exact_real(x, f"lam2[{j}]") for j, x in enumerate(i["lam2"])]
    return a
