"""Proposition 4 (RankOneLocus.lean): the profile of a rank-one matrix and the locus Θ.

Profiles of rank-≤1 matrices are computed exactly by Definition 6 through the
spectrum of S: rank S ≤ rank L + rank Lᵀ ≤ 2, so S has at most two nonzero
eigenvalues λ₁, λ₂, with λ₁ + λ₂ = tr S and λ₁λ₂ = e₂ = ((tr S)² − ‖S‖²)/2.  If
e₂ ≤ 0 then α = (λ₁), β = (−λ₂) and α₁ − β₁ = tr S, α₁β₁ = −e₂; if e₂ > 0 both
have the sign of tr S and (b, c, d)·‖L‖² = (0, ‖S‖², 0) or (0, 0, ‖S‖²).  Entries
may lie in Q(√m) (the ⊇ direction of the locus), so the arithmetic is that of
a + b√m."""

from __future__ import annotations

from flint import arb, fmpq, fmpq_mat

from ..derive import Coord, Ctx
from ..jsonio import rat, require
from ..table import MT, NotEvaluable, dfn, predicate, thm
from .profile import _same_coord

P4 = "profile_rank_one"


class Surd:
    """a + b√m (a, b, m rational; m ≥ 0 not a square, or b = 0), exact."""

    __slots__ = ("a", "b", "m")

    def __init__(self, a, b=0, m=0):
        self.a, self.b, self.m = fmpq(a), fmpq(b), fmpq(m)

    def _m(self, o) -> fmpq:
        return self.m if self.b != 0 else o.m

    def __add__(self, o):
        o = o if isinstance(o, Surd) else Surd(o)
        return Surd(self.a + o.a, self.b + o.b, self._m(o))

    def __sub__(self, o):
        return self + (o if isinstance(o, Surd) else Surd(o)) * -1

    def __mul__(self, o):
        o = o if isinstance(o, Surd) else Surd(o)
        m = self._m(o)
        return Surd(self.a * o.a + m * self.b * o.b, self.a * o.b + self.b * o.a, m)

    def __eq__(self, o):
        o = o if isinstance(o, Surd) else Surd(o)
        return self.a == o.a and self.b == o.b

    def sign(self) -> int:
        sa, sb = (self.a > 0) - (self.a < 0), (self.b > 0) - (self.b < 0)
        if sa == 0 or sb == 0 or sa == sb:
            return sa or sb
        return sa if self.a * self.a > self.b * self.b * self.m else sb


def rank_le_one_profile(L: list[list[Surd]]) -> tuple[Surd, list[Surd]]:
    """(‖L‖², [a, b, c, d]·‖L‖²) for a square L of rank ≤ 1 (see the module docstring)."""
    N = len(L)
    fL, fT, fS, tr = Surd(0), Surd(0), Surd(0), Surd(0)
    for i in range(N):
        tr = tr + L[i][i]
        for j in range(N):
            fL = fL + L[i][j] * L[i][j]
            s, t = (L[i][j] + L[j][i]) * fmpq(1, 2), (L[i][j] - L[j][i]) * fmpq(1, 2)
            fS, fT = fS + s * s, fT + t * t
    e2 = (tr * tr - fS) * fmpq(1, 2)
    sg = tr.sign()
    if e2.sign() <= 0:
        num = [fT, e2 * -2, tr * tr if sg > 0 else Surd(0), tr * tr if sg < 0 else Surd(0)]
    else:
        num = [fT, Surd(0), fS if sg > 0 else Surd(0), fS if sg < 0 else Surd(0)]
    return fL, num


def _rational(X: fmpq_mat) -> list[list[Surd]]:
    return [[Surd(X[i, j]) for j in range(X.ncols())] for i in range(X.nrows())]


def _coords_equal(fL: Surd, num: list[Surd], p: list[fmpq]) -> bool:
    """π = p, with Lean's π = (0, 0, 0, 0) when ‖L‖² = 0."""
    if fL == Surd(0):
        return all(x == 0 for x in p)
    return all(n == fL * x for n, x in zip(num, p))


def _formula(t2: fmpq, sign: int) -> list[fmpq]:
    """((1 − t²)/2, (1 − t²)/2, max(t, 0)², max(−t, 0)²)."""
    return [(1 - t2) / 2, (1 - t2) / 2, t2 if sign > 0 else fmpq(0), t2 if sign < 0 else fmpq(0)]


def _profile_is(q: Ctx, p: list[fmpq]) -> bool:
    """π(L) = p for a matrix input: exactly by the rank-≤1 route when rank L ≤ 1 (rank witness),
    otherwise by Definition 6 on the certified spectrum (exact, or disjoint enclosures)."""
    if q.rank("L") <= 1:
        return _coords_equal(*rank_le_one_profile(_rational(q.mat("L"))), p)
    got = q.profile()
    return all(_same_coord(q, got[k], Coord(arb(x), x, x == 0)) for k, x in zip("abcd", p))


def _in_theta(p: list[fmpq]) -> bool:
    a, b, c, d = p
    return min(p) >= 0 and a + b + c + d == 1 and a == b and c * d == 0


def _point(q: Ctx) -> list[fmpq]:
    return [rat(x) for x in q.inp["p"]]


def _factor(q: Ctx, of: str) -> tuple[list[Surd], list[Surd]]:
    """The vectors x, y of a ``factor`` witness (entries x + x_sqrt·√m)."""
    w = q.witness("factor", of)
    m = rat(w.get("sqrt", "0"))
    if "sqrt" in w:
        r, s = m.p.isqrt(), m.q.isqrt()
        require(m > 0 and not (r * r == m.p and s * s == m.q), "factor witness", "sqrt must be a positive non-square")
    zero = ["0"] * len(w["x"])
    xs = [Surd(rat(a), rat(b), m) for a, b in zip(w["x"], w.get("x_sqrt", zero))]
    ys = [Surd(rat(a), rat(b), m) for a, b in zip(w["y"], w.get("y_sqrt", zero))]
    require(len(xs) == len(ys) == len(w.get("x_sqrt", zero)) == len(w.get("y_sqrt", zero)), "factor witness",
            "x and y must have one entry per coordinate")
    require(any(v.sign() for v in xs) and any(v.sign() for v in ys), "factor witness", "x or y is zero")
    return xs, ys


def _outer(x: list[Surd], y: list[Surd]) -> list[list[Surd]]:
    return [[a * b for b in y] for a in x]


def _matrix_factor(q: Ctx) -> tuple[list[Surd], list[Surd]] | None:
    """L = x yᵀ with x, y ≠ 0 rational (the factor witness of L), or None when rank L ≠ 1."""
    if ("factor", "L") not in q.witnesses:
        if q.rank("L") == 1:
            raise NotEvaluable("rank L = 1 and no factorisation is given")
        return None
    x, y = _factor(q, "L")
    require(all(v.b == 0 for v in x + y), "factor witness", "a factorisation of L is rational")
    require(_outer(x, y) == _rational(q.mat("L")), "factor witness", "L ≠ x yᵀ")
    return x, y


def _smul(q: Ctx) -> bool:
    """π(s·u vᵀ) = ((1−t²)/2, (1−t²)/2, t₊², t₋²), t = u·v.  A ``rank_one`` input gives u, v, s; on a
    matrix L = x yᵀ the normalised factorisation u = x/‖x‖, v = y/‖y‖, s = ‖x‖‖y‖ is taken, for
    which t² = (x·y)²/(‖x‖²‖y‖²) and sign t = sign(x·y)."""
    if q.kind == "rank_one":
        u, v, s = [rat(x) for x in q.inp["u"]], [rat(x) for x in q.inp["v"]], rat(q.inp["s"])
        L = [[Surd(s * a * b) for b in v] for a in u]
        t = sum((a * b for a, b in zip(u, v)), fmpq(0))
        return _coords_equal(*rank_le_one_profile(L), _formula(t * t, (t > 0) - (t < 0)))
    f = _matrix_factor(q)
    if f is None:
        raise NotEvaluable("rank L ≠ 1: L is not s·u vᵀ")
    x, y = ([v.a for v in w] for w in f)
    xy = sum((a * b for a, b in zip(x, y)), fmpq(0))
    t2 = xy * xy / (sum((a * a for a in x), fmpq(0)) * sum((b * b for b in y), fmpq(0)))
    return _profile_is(q, _formula(t2, (xy > 0) - (xy < 0)))


def _unit(q: Ctx, key: str) -> bool:
    """u·u = 1 (v·v = 1, s > 0) for a ``rank_one`` input; for a matrix, the normalised factorisation
    u = x/‖x‖, v = y/‖y‖, s = ‖x‖‖y‖ of the factor witness (x, y ≠ 0 checked) satisfies all three."""
    if q.kind == "rank_one":
        if key == "s":
            return rat(q.inp["s"]) > 0
        return sum((a * a for a in (rat(x) for x in q.inp[key])), fmpq(0)) == 1
    return ("factor", "L") in q.witnesses and _matrix_factor(q) is not None


def _trace_formula(q: Ctx) -> bool:
    """profile_rank_one: π(L) = ((1−t²)/2, (1−t²)/2, t₊², t₋²) with t = tr L (Lean form, ‖L‖² = 1)."""
    t = sum((q.mat("L")[i, i] for i in range(_N(q))), fmpq(0))
    return _profile_is(q, _formula(t * t, (t > 0) - (t < 0)))


def _exists_smul(q: Ctx) -> bool:
    """∃ unit u, v and s > 0 with L = s·u vᵀ: the witness L = x yᵀ (x, y ≠ 0) gives u = x/‖x‖,
    v = y/‖y‖, s = ‖x‖‖y‖; without one, rank L ≠ 1 refutes it (s·u vᵀ has rank 1)."""
    return _matrix_factor(q) is not None


def _theta_locus(q: Ctx) -> bool:
    """{π(L) : rank L = 1} = Θ at one point: a matrix L of rank 1 (⊆: π(L) ∈ Θ), or a point p of Θ
    (⊇: the witness L = x yᵀ, x, y ≠ 0, over Q(√m), has π(L) = p; for N = 1 and a ≠ 0 no L exists,
    as every 1 × 1 matrix is symmetric and has a = 0)."""
    if q.kind == "matrix":
        if q.rank("L") != 1:
            raise NotEvaluable("rank L ≠ 1")
        fL, num = rank_le_one_profile(_rational(q.mat("L")))
        p = [n.a / fL.a for n in num]
        return _in_theta(p)
    p = _point(q)
    if not _in_theta(p):
        raise NotEvaluable("the ⊇ direction is evaluated at points of Θ")
    if ("factor", "theta") not in q.witnesses:
        if q.inp["N"] == 1 and p[0] != 0:
            return False
        raise NotEvaluable("no matrix realising the point is given")
    x, y = _factor(q, "theta")
    require(len(x) == q.inp["N"], "factor witness", "x and y must have N entries")
    require(_coords_equal(*rank_le_one_profile(_outer(x, y)), p), "factor witness", "π(x yᵀ) ≠ p")
    return True


def _N(q: Ctx) -> int:
    return q.inp["N"] if q.kind == "theta_point" else q.mat("L").nrows()


predicate("rank_eq_one", lambda q: q.rank("L") == 1)
predicate("norm_eq_one", lambda q: q.frob("L") == 1)
predicate("N_ge_two", lambda q: _N(q) >= 2)
for _k in "uvs":
    predicate(f"{_k}_{'pos' if _k == 's' else 'unit'}", lambda q, k=_k: _unit(q, k))

dfn(MT + "Theta", P4, ("theta_point",), lambda q: _in_theta(_point(q)))
thm(MT + "profile_smul_vecMulVec", P4, ("rank_one", "matrix"),
    (("hu", "u_unit"), ("hv", "v_unit"), ("hs", "s_pos")), _smul)
thm(MT + "exists_smul_vecMulVec_of_rank_eq_one", P4, ("matrix",), (("hL", "rank_eq_one"),), _exists_smul)
thm(MT + "profile_rank_one", P4, ("matrix",), (("hL", "rank_eq_one"), ("hnorm", "norm_eq_one")), _trace_formula)
thm(MT + "profiles_rank_one_eq_Theta", P4, ("matrix", "theta_point"), (("hN", "N_ge_two"),), _theta_locus)
