"""Definition 6 (Profile.lean) and Theorem 4 (SimplexFaces.lean)."""

from __future__ import annotations

from flint import fmpq, fmpq_mat

from ..derive import Coord, Ctx, eye, frob, is_zero, lean_div, skew, sym
from ..jsonio import Undecided, require
from ..table import MT, A, NotEvaluable, dfn, predicate, thm
from ..witnesses import fiber_props
from .energy import HL, MAT

D6, T4 = "profile", "profile_sum_eq_one"
HS = (("hS", "is_symmetric"),)

predicate("profileD_eq_zero", lambda q: q.coord_is(q.profile()["d"], fmpq(0)))
predicate("profileC_eq_zero", lambda q: q.coord_is(q.profile()["c"], fmpq(0)))


def signs(q: Ctx, of: str = "S") -> tuple[int, int, int]:
    """(n₊, n₋, n₀) of the symmetric matrix ``of`` from its certified eigenvalues."""
    s = [q.sign(x) for x in q.eigenvalues_S(of)]
    return s.count(1), s.count(-1), s.count(0)


def _one(q: Ctx, name: str) -> bool:
    p = q.profile()
    return q.coord_is(p[name], fmpq(1), others=tuple(p[k] for k in "abcd" if k != name))


def _decomp(q: Ctx, face: str, commute: bool) -> bool:
    """S = H ± P from the input (matrix_fiber) or the fiber witness; the properties are
    checked by fiber_fact (Invalid when they fail).  With ``commute`` also ‖P‖² = c‖L‖²
    (face d) or d‖L‖² (face c)."""
    if q.kind == "matrix_fiber":
        if q.arg("face") != face:
            raise NotEvaluable("the input's decomposition is for the other face")
        normP = fiber_props(face, q.mat("S"), q.mat("H"), q.mat("P")).normP
    else:
        if not q.coord_is(q.profile()[face], fmpq(0)):
            raise NotEvaluable(f"{face} ≠ 0 and no candidate decomposition is given")
        normP = q.fact("fiber", face).normP
    if q.kind == "matrix_fiber" and not commute:
        return q.coord_is(q.profile()[face], fmpq(0))
    if commute:
        other = "c" if face == "d" else "d"
        return q.coord_exact(other) * q.frob("L") == normP
    return True


def _psd(q: Ctx, sgn: int) -> bool:
    p, m, z = signs(q)
    return (m if sgn > 0 else p) == 0


def _symmetric(q: Ctx) -> bool:
    return q.mat("L").transpose() == q.mat("L")


dfn(A + "sortDesc", D6, MAT, lambda q: q.sorted_eigenvalues())
dfn(A + "alphaList", D6, MAT, lambda q: q.alpha_beta()[0], HS)
dfn(A + "betaList", D6, MAT, lambda q: q.alpha_beta()[1], HS)
WMAT = MAT + ("weights",)
for _k in "ABCD":
    dfn(A + f"profile{_k}", D6, WMAT, lambda q, k=_k.lower(): q.profile()[k])
    thm(A + f"profile{_k}_nonneg", T4, MAT, (), lambda q, k=_k.lower(): q.coord_sign(q.profile()[k]) >= 0)
dfn(MT + "profile", D6, WMAT, lambda q: [q.profile()[k] for k in "abcd"])

thm(A + "profile_sum_eq_one", T4, MAT, HL, lambda q: q.profile_sum() == 1)
thm(A + "profileA_eq_zero_iff", T4, MAT, HL, lambda q: q.coord_is(q.profile()["a"], fmpq(0)) == _symmetric(q))
thm(A + "profileA_eq_one_iff", T4, MAT, HL,
    lambda q: q.coord_is(q.profile()["a"], fmpq(1)) == (q.mat("L").transpose() == -q.mat("L")))
thm(A + "profileB_eq_zero_iff", T4, MAT, HL,
    lambda q: q.coord_is(q.profile()["b"], fmpq(0)) == (_psd(q, 1) or _psd(q, -1)))
thm(A + "profileB_eq_one_iff", T4, MAT, HL,
    lambda q: _one(q, "b") == (_symmetric(q) and all(o == 0 for o in q.order())))
thm(A + "profileD_eq_zero_iff_forall", T4, MAT, HL,
    lambda q: q.coord_is(q.profile()["d"], fmpq(0)) == all(o >= 0 for o in q.order()))
thm(A + "profileC_eq_zero_iff_forall", T4, MAT, HL,
    lambda q: q.coord_is(q.profile()["c"], fmpq(0)) == all(o <= 0 for o in q.order()))
thm(A + "profileD_eq_zero_iff_decomp", T4, MAT, HL, lambda q: _decomp(q, "d", False))
thm(A + "profileC_eq_zero_iff_decomp", T4, MAT, HL, lambda q: _decomp(q, "c", False))
thm(A + "profileD_eq_zero_decomp_commute", T4, MAT, HL + (("h", "profileD_eq_zero"),), lambda q: _decomp(q, "d", True))
thm(A + "profileC_eq_zero_decomp_commute", T4, MAT, HL + (("h", "profileC_eq_zero"),), lambda q: _decomp(q, "c", True))
thm(A + "profileD_eq_one_iff", T4, MAT, HL, lambda q: _one(q, "d") == (_symmetric(q) and _psd(q, -1)))
thm(A + "profileC_eq_one_iff", T4, MAT, HL, lambda q: _one(q, "c") == (_symmetric(q) and _psd(q, 1)))



# Lemma 4 (ProfileScale.lean), profile_conj (ProfileInvariance.lean), exists_orthogonal_cols


def _a(X: fmpq_mat) -> fmpq:
    return lean_div(frob(skew(X)), frob(X))


def _profile_scale(q: Ctx) -> bool:
    """A coordinate of L is a sum X of terms in α, β of S over ‖L‖², that of S the same sum for
    symPart S over ‖S‖²: symPart S = S (as matrices) makes them equal, so the identity holds iff X = 0
    (exactly, from the signs of its terms) or (1 − a(L))/‖S‖² = 1/‖L‖² (a(L) from the skew part)."""
    S, p = q.mat("S"), q.profile()
    ok = sym(S) == S and (1 - _a(q.mat("L"))) * lean_div(fmpq(1), q.frob("S")) == lean_div(fmpq(1), q.frob("L"))
    return _a(S) == 0 and all(p[k].zero or ok for k in "bcd")


def _same_coord(q: Ctx, x: Coord, y: Coord) -> bool:
    if x.exact is not None and y.exact is not None:
        return x.exact == y.exact
    if x.zero != y.zero:
        return False
    q.certified = True
    if x.ball.overlaps(y.ball):
        raise Undecided("two coordinates' enclosures overlap and their exact values are out of reach")
    return False


def _profile_conj(q: Ctx) -> bool:
    """a exactly; b, c, d equal when the α, β lists of the two symmetric parts agree entry by entry
    (two spectrum witnesses, compared exactly) and the norms agree, else compared as values."""
    p, r = q.profile("L"), q.profile("UtLU")
    same = q.frob("L") == q.frob("UtLU") and all(
        q.cmp(x, y) == 0 for x, y in zip(sum(q.alpha_beta("S"), []), sum(q.alpha_beta("S_UtLU"), [])))
    return p["a"].exact == r["a"].exact and all(same or _same_coord(q, p[k], r[k]) for k in "bcd")


def _orthonormal(q: Ctx) -> bool:
    v, s = q.arg("v"), q.arg("s")
    W = fmpq_mat([v.tolist()[i] for i in s]) if s else eye(0)
    return not s or W * W.transpose() == eye(len(s))


def _orthogonal_cols(q: Ctx) -> bool:
    """The witness U (UᵀU = 1, column i = v_i) is checked; without one the conclusion fails exactly
    when the family is not orthonormal (the columns of such a U are)."""
    v, s = q.arg("v"), q.arg("s")
    if not q.has("orthogonal", "family"):
        if _orthonormal(q):
            raise NotEvaluable("no extension U is given")
        return False
    U, N = q.fact("orthogonal", "family").U, q.arg("N")
    require(all(U[k, i] == v[i, k] for i in s for k in range(N)), "orthogonal witness", "a column of U is not v_i")
    return True


L4, M1 = "profile_scale", ("matrix",)
predicate("symPart_ne_zero", lambda q: not is_zero(q.mat("S")))
predicate("U_orthogonal", lambda q: q.mat("U").transpose() * q.mat("U") == eye(q.mat("U").nrows()))
predicate("orthonormal_on_s", _orthonormal)
thm(MT + "profileA_symPart", L4, M1, (), lambda q: _a(q.mat("S")) == 0)
thm(MT + "one_sub_profileA", L4, M1, HL, lambda q: 1 - _a(q.mat("L")) == lean_div(q.frob("S"), q.frob("L")))
thm(MT + "profile_scale", L4, M1, (("hS", "symPart_ne_zero"),), _profile_scale)
thm(MT + "profile_conj", "profile_conj", ("matrix_pair",), (("hU", "U_orthogonal"),), _profile_conj)
thm(MT + "exists_orthogonal_cols", "profile_conj", ("family",), (("hv", "orthonormal_on_s"),), _orthogonal_cols)
