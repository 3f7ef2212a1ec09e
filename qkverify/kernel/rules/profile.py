"""Definition 6 (Profile.lean) and Theorem 4 (SimplexFaces.lean)."""

from __future__ import annotations

from flint import fmpq, fmpq_mat

from ..derive import Ctx
from ..jsonio import rat
from ..table import MT, A, NotEvaluable, dfn, predicate, thm
from ..witnesses import fiber_fact
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
        if q.inp["face"] != face:
            raise NotEvaluable("the input's decomposition is for the other face")
        H, P = q.mat("H"), q.mat("P")
    else:
        if not q.coord_is(q.profile()[face], fmpq(0)):
            raise NotEvaluable(f"{face} ≠ 0 and no candidate decomposition is given")
        w = q.witness("fiber", face)
        H, P = (fmpq_mat([[rat(x) for x in r] for r in w[k]]) for k in ("H", "P"))
    normP = fiber_fact(face, q.mat("S"), H, P)
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
for _k in "ABCD":
    dfn(A + f"profile{_k}", D6, MAT, lambda q, k=_k.lower(): q.profile()[k])
    thm(A + f"profile{_k}_nonneg", T4, MAT, (), lambda q, k=_k.lower(): q.coord_sign(q.profile()[k]) >= 0)
dfn(MT + "profile", D6, MAT, lambda q: [q.profile()[k] for k in "abcd"])

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
