"""Proposition 4 (RankOneLocus.lean).  π of a rank-≤1 L by Definition 6: rank S ≤ 2, so S has at
most two nonzero eigenvalues, with sum tr S and product e₂ = ((tr S)² − ‖S‖²)/2; if e₂ ≤ 0, α₁ − β₁ =
tr S and α₁β₁ = −e₂, else both share the sign of tr S and c or d is ‖S‖²/‖L‖².  Entries may lie in
Q(√m) (the witnesses of the ⊇ direction of the locus)."""

from __future__ import annotations

from flint import arb, fmpq

from ..algebra import Quad
from ..algebra import Coord
from ..derive import Ctx
from ..jsonio import rat, require
from ..table import MT, NotEvaluable, dfn, predicate, thm
from ..wellformed import Args, kind, vector
from . import definition6 as Def6
from .profile import _same_coord


Surd = Quad  # a + b√m, exact


def profile_num(L: list) -> tuple[Surd, list[Surd]]:
    """(‖L‖², π·‖L‖²) for a square L (lists of Surd) of rank ≤ 1."""
    n, h = range(len(L)), fmpq(1, 2)
    tr = sum((L[i][i] for i in n), Surd(0))
    fL, fS, fT = (sum((f(L[i][j], L[j][i]) for i in n for j in n), Surd(0)) for f in
                  (lambda x, y: x * x, lambda x, y: (x + y) * (x + y) * h * h, lambda x, y: (x + y * -1) * (x + y * -1) * h * h))
    return _from_norms(tr, fL, fS, fT)


def profile_num_xy(x: list, y: list) -> tuple[Surd, list[Surd]]:
    """profile_num of L = x yᵀ without multiplying it out (O(N)): tr L = x·y, ‖L‖² = |x|²|y|²,
    tr L² = (x·y)², ‖S‖² = (‖L‖² + tr L²)/2, ‖T‖² = (‖L‖² − tr L²)/2."""
    dot = lambda u, v: sum((a * b for a, b in zip(u, v)), Surd(0))  # noqa: E731
    tr, fL = dot(x, y), dot(x, x) * dot(y, y)
    t2, h = tr * tr, fmpq(1, 2)
    return _from_norms(tr, fL, (fL + t2) * h, (fL + t2 * -1) * h)


def _from_norms(tr, fL, fS, fT) -> tuple[Surd, list[Surd]]:
    """S has at most two nonzero eigenvalues, with sum tr S = tr L and product e₂ = ((tr S)² − ‖S‖²)/2."""
    h = fmpq(1, 2)
    e2, sg, z = (tr * tr + fS * -1) * h, tr.sign(), Surd(0)
    if e2.sign() > 0:
        return fL, [fT, z, fS if sg > 0 else z, fS if sg < 0 else z]
    return fL, [fT, e2 * -2, tr * tr if sg > 0 else z, tr * tr if sg < 0 else z]


def _equal(fL: Surd, num: list[Surd], p: list[fmpq]) -> bool:
    """π = p (Lean: π = 0 when ‖L‖² = 0)."""
    return all(x == 0 for x in p) if fL == 0 else all(a == fL * x for a, x in zip(num, p))


def _formula(t2: fmpq, sg: int) -> list[fmpq]:
    return [(1 - t2) / 2, (1 - t2) / 2, t2 if sg > 0 else fmpq(0), t2 if sg < 0 else fmpq(0)]


def _rat(X) -> list:
    return [[Surd(X[i, j]) for j in range(X.ncols())] for i in range(X.nrows())]


def _profile_is(q: Ctx, p: list[fmpq]) -> bool:
    """π(L) = p: by the rank-≤1 route when the rank witness shows rank L ≤ 1, else by Definition 6
    on the certified spectrum (exact, or disjoint enclosures)."""
    if q.rank("L") <= 1:
        return _equal(*profile_num(_rat(q.mat("L"))), p)
    return all(_same_coord(q, Def6.profile(q)[k], Coord(arb(x), x, x == 0)) for k, x in zip("abcd", p))


def _in_theta(p: list[fmpq]) -> bool:
    return min(p) >= 0 and sum(p) == 1 and p[0] == p[1] and p[2] * p[3] == 0


def _matrix_factor(q: Ctx):
    """L = x yᵀ (rational factor witness of L), or None when rank L ≠ 1 and none is given."""
    if not q.has("factor", "L"):
        if q.rank("L") == 1:
            raise NotEvaluable("rank L = 1 and no factorisation is given")
        return None
    f = q.fact("factor", "L")  # rational, with x yᵀ = L (checked)
    return [v.a for v in f.x], [v.a for v in f.y]


def _dot(u, v) -> fmpq:
    return sum((a * b for a, b in zip(u, v)), fmpq(0))


def _smul(q: Ctx) -> bool:
    """π(s·uvᵀ) = formula(t = u·v); on a matrix L = x yᵀ, at u = x/‖x‖, v = y/‖y‖, s = ‖x‖‖y‖:
    t² = (x·y)²/(‖x‖²‖y‖²), sign t = sign x·y (the normalised form of profile_rank_one)."""
    if q.kind == "rank_one":
        u, v, s = q.arg("u"), q.arg("v"), q.arg("s")
        t = _dot(u, v)
        return _equal(*profile_num_xy([Surd(s * a) for a in u], [Surd(b) for b in v]), _formula(t * t, (t > 0) - (t < 0)))
    f = _matrix_factor(q)
    if f is None:
        raise NotEvaluable("rank L ≠ 1")
    xy = _dot(*f)
    return _profile_is(q, _formula(xy * xy / (_dot(f[0], f[0]) * _dot(f[1], f[1])), (xy > 0) - (xy < 0)))


def _unit(q: Ctx, k: str) -> bool:
    """hu, hv, hs of a rank_one input; the normalised factorisation of a matrix satisfies all three."""
    if q.kind != "rank_one":
        return q.has("factor", "L") and _matrix_factor(q) is not None
    return q.arg("s") > 0 if k == "s" else _dot(q.arg(k), q.arg(k)) == 1


def _trace_formula(q: Ctx) -> bool:
    t = sum((q.mat("L")[i, i] for i in range(q.mat("L").nrows())), fmpq(0))
    return _profile_is(q, _formula(t * t, (t > 0) - (t < 0)))


def _locus(q: Ctx) -> bool:
    """⊆ at a rank-one matrix: π(L) ∈ Θ.  ⊇ at a point p of Θ: the witness x yᵀ has π = p; for N = 1
    and a ≠ 0 no rank-one L exists (1 × 1 matrices are symmetric: a = 0)."""
    if q.kind == "matrix":
        if q.rank("L") != 1:
            raise NotEvaluable("rank L ≠ 1")
        fL, num = profile_num(_rat(q.mat("L")))
        return _in_theta([a.a / fL.a for a in num])
    p = q.arg("p")
    if not _in_theta(p):
        raise NotEvaluable("the ⊇ direction is evaluated at points of Θ")
    if not q.has("factor", "theta"):
        if q.arg("N") == 1 and p[0] != 0:
            return False
        raise NotEvaluable("no matrix realising the point is given")
    f = q.fact("factor", "theta")  # N entries each (checked)
    require(_equal(*profile_num_xy(f.x, f.y), p), "factor witness", "x yᵀ does not have profile p")
    return True


P4 = "profile_rank_one"
predicate("rank_eq_one", lambda q: q.rank("L") == 1)
predicate("norm_eq_one", lambda q: q.frob("L") == 1)
predicate("N_ge_two", lambda q: (q.arg("N") if q.kind == "theta_point" else q.mat("L").nrows()) >= 2)
for _k, _pid in (("u", "u_unit"), ("v", "v_unit"), ("s", "s_pos")):
    predicate(_pid, lambda q, k=_k: _unit(q, k))
dfn(MT + "Theta", P4, ("theta_point",), lambda q: _in_theta(q.arg("p")))
thm(MT + "profile_smul_vecMulVec", P4, ("rank_one", "matrix"), (("hu", "u_unit"), ("hv", "v_unit"), ("hs", "s_pos")),
    _smul)
thm(MT + "exists_smul_vecMulVec_of_rank_eq_one", P4, ("matrix",), (("hL", "rank_eq_one"),),
    lambda q: _matrix_factor(q) is not None)
thm(MT + "profile_rank_one", P4, ("matrix",), (("hL", "rank_eq_one"), ("hnorm", "norm_eq_one")), _trace_formula)
thm(MT + "profiles_rank_one_eq_Theta", P4, ("matrix", "theta_point"), (("hN", "N_ge_two"),), _locus)


# -- the input kinds of this section: their Lean types (the well-formedness pass, kernel/wellformed.py)


@kind("rank_one")
def _wf_rank_one(i: dict) -> Args:
    """u, v : Fin N → ℝ (one length), s : ℝ."""
    u = vector(i["u"], "u")
    return Args(u=u, v=vector(i["v"], "v", len(u)), s=rat(i["s"]), N=len(u))


@kind("theta_point")
def _wf_theta_point(i: dict) -> Args:
    return Args(p=vector(i["p"], "p", 4), N=i["N"])
