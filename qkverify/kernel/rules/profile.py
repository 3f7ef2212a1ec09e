"""Definition 6 (Profile.lean) and Theorem 4 (SimplexFaces.lean)."""

from __future__ import annotations

from flint import fmpq, fmpq_mat

from ..algebra import Coord
from ..derive import Ctx, eye, frob, is_zero, lean_div, skew, sym
from ..jsonio import Undecided, require
from ..table import MT, A, NotEvaluable, dfn, predicate, thm
from ..wellformed import Args, kind, square
from . import definition6 as Def6
from ..witnesses import fiber_props
from .energy import HL, MAT

D6, T4 = "profile", "profile_sum_eq_one"
HS = (("hS", "is_symmetric"),)

predicate("profileD_eq_zero", lambda q: Def6.coord_is(q, Def6.profile(q)["d"], fmpq(0)))
predicate("profileC_eq_zero", lambda q: Def6.coord_is(q, Def6.profile(q)["c"], fmpq(0)))


def signs(q: Ctx, of: str = "S") -> tuple[int, int, int]:
    """(n₊, n₋, n₀) of the symmetric matrix ``of`` from its certified eigenvalues."""
    s = [q.sign(x) for x in Def6.eigenvalues_S(q, of)]
    return s.count(1), s.count(-1), s.count(0)


def _one(q: Ctx, name: str) -> bool:
    p = Def6.profile(q)
    return Def6.coord_is(q, p[name], fmpq(1), others=tuple(p[k] for k in "abcd" if k != name))


def _decomp(q: Ctx, face: str) -> bool:
    """profileD_eq_zero_iff_decomp (face d) / profileC_… (face c): S = H ± P from the input
    (matrix_fiber) or the fiber witness; the properties are checked by fiber_props (Invalid
    when they fail)."""
    if q.kind == "matrix_fiber":
        if q.arg("face") != face:
            raise NotEvaluable("the input's decomposition is for the other face")
        fiber_props(face, q.mat("S"), q.mat("H"), q.mat("P"))
        return Def6.coord_is(q, Def6.profile(q)[face], fmpq(0))
    if not Def6.coord_is(q, Def6.profile(q)[face], fmpq(0)):
        raise NotEvaluable(f"{face} ≠ 0 and no candidate decomposition is given")
    q.fact("fiber", face)
    return True


def _decomp_commute(q: Ctx, face: str) -> bool:
    """∃ H P: S = H + P (face d; H − P for face c), H, P symmetric and commuting with S and with
    each other, spec H symmetric about 0, P ⪰ 0, and ‖P‖² = c·‖L‖² (face d; d·‖L‖² for c).

    ``holds`` only from a fiber witness (or the input's H, P) that has all of this; a witness
    that does not is Invalid.  ``fails`` only when the face coordinate is not 0, by this
    argument: let H, P be such a pair (face d).  Commuting symmetric matrices diagonalise in
    one orthonormal basis: S = Σ (h_i + p_i) e_i e_iᵀ with p_i ≥ 0 and {h_i} symmetric about 0
    as a multiset.  A negative eigenvalue λ_i = h_i + p_i < 0 has h_i < −p_i ≤ 0, so |λ_i| ≤ −h_i;
    pair the index i with an index k of h_k = −h_i (a bijection between the negative and the
    positive h's): λ_k = h_k + p_k ≥ −h_i ≥ |λ_i| > 0.  This injects the negative eigenvalues
    into positive ones no smaller in modulus, so the j-th largest |negative| eigenvalue is at
    most the j-th largest positive one: β_j ≤ α_j for every j, and d = Σ(β_j − α_j)₊²/‖L‖² = 0.
    (Face c: S = H − P, the same argument for −S swaps α and β.)  So d ≠ 0 leaves no pair."""
    other = "c" if face == "d" else "d"

    def works(f) -> bool:
        return Def6.coord_exact(q, other) * q.frob("L") == f.normP

    if q.kind == "matrix_fiber" and q.arg("face") == face:
        if works(fiber_props(face, q.mat("S"), q.mat("H"), q.mat("P"))):
            return True
    return q.exists(("fiber", face), works, lambda: not Def6.coord_is(q, Def6.profile(q)[face], fmpq(0)),
                    f"∃ H, P with S = H {'+' if face == 'd' else '−'} P and ‖P‖² = {other}·‖L‖²")


def _psd(q: Ctx, sgn: int) -> bool:
    p, m, z = signs(q)
    return (m if sgn > 0 else p) == 0


def _symmetric(q: Ctx) -> bool:
    return q.mat("L").transpose() == q.mat("L")


dfn(A + "sortDesc", D6, MAT, lambda q: Def6.sorted_eigenvalues(q))
dfn(A + "alphaList", D6, MAT, lambda q: Def6.alpha_beta(q)[0], HS)
dfn(A + "betaList", D6, MAT, lambda q: Def6.alpha_beta(q)[1], HS)
WMAT = MAT + ("weights",)
for _k in "ABCD":
    dfn(A + f"profile{_k}", D6, WMAT, lambda q, k=_k.lower(): Def6.profile(q)[k])
    thm(A + f"profile{_k}_nonneg", T4, MAT, (), lambda q, k=_k.lower(): Def6.coord_sign(q, Def6.profile(q)[k]) >= 0)
dfn(MT + "profile", D6, WMAT, lambda q: [Def6.profile(q)[k] for k in "abcd"])

thm(A + "profile_sum_eq_one", T4, MAT, HL, lambda q: Def6.profile_sum(q) == 1)
thm(A + "profileA_eq_zero_iff", T4, MAT, HL, lambda q: Def6.coord_is(q, Def6.profile(q)["a"], fmpq(0)) == _symmetric(q))
thm(A + "profileA_eq_one_iff", T4, MAT, HL,
    lambda q: Def6.coord_is(q, Def6.profile(q)["a"], fmpq(1)) == (q.mat("L").transpose() == -q.mat("L")))
thm(A + "profileB_eq_zero_iff", T4, MAT, HL,
    lambda q: Def6.coord_is(q, Def6.profile(q)["b"], fmpq(0)) == (_psd(q, 1) or _psd(q, -1)))
thm(A + "profileB_eq_one_iff", T4, MAT, HL,
    lambda q: _one(q, "b") == (_symmetric(q) and all(o == 0 for o in Def6.order(q))))
thm(A + "profileD_eq_zero_iff_forall", T4, MAT, HL,
    lambda q: Def6.coord_is(q, Def6.profile(q)["d"], fmpq(0)) == all(o >= 0 for o in Def6.order(q)))
thm(A + "profileC_eq_zero_iff_forall", T4, MAT, HL,
    lambda q: Def6.coord_is(q, Def6.profile(q)["c"], fmpq(0)) == all(o <= 0 for o in Def6.order(q)))
thm(A + "profileD_eq_zero_iff_decomp", T4, MAT, HL, lambda q: _decomp(q, "d"))
thm(A + "profileC_eq_zero_iff_decomp", T4, MAT, HL, lambda q: _decomp(q, "c"))
thm(A + "profileD_eq_zero_decomp_commute", T4, MAT, HL + (("h", "profileD_eq_zero"),), lambda q: _decomp_commute(q, "d"))
thm(A + "profileC_eq_zero_decomp_commute", T4, MAT, HL + (("h", "profileC_eq_zero"),), lambda q: _decomp_commute(q, "c"))
thm(A + "profileD_eq_one_iff", T4, MAT, HL, lambda q: _one(q, "d") == (_symmetric(q) and _psd(q, -1)))
thm(A + "profileC_eq_one_iff", T4, MAT, HL, lambda q: _one(q, "c") == (_symmetric(q) and _psd(q, 1)))



# Lemma 4 (ProfileScale.lean), profile_conj (ProfileInvariance.lean), exists_orthogonal_cols


def _a(X: fmpq_mat) -> fmpq:
    return lean_div(frob(skew(X)), frob(X))


def _profile_scale(q: Ctx) -> bool:
    """A coordinate of L is a sum X of terms in α, β of S over ‖L‖², that of S the same sum for
    symPart S over ‖S‖²: symPart S = S (as matrices) makes them equal, so the identity holds iff X = 0
    (exactly, from the signs of its terms) or (1 − a(L))/‖S‖² = 1/‖L‖² (a(L) from the skew part)."""
    S, p = q.mat("S"), Def6.profile(q)
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
    p, r = Def6.profile(q, "L"), Def6.profile(q, "UtLU")
    same = q.frob("L") == q.frob("UtLU") and all(
        q.cmp(x, y) == 0 for x, y in zip(sum(Def6.alpha_beta(q, "S"), []), sum(Def6.alpha_beta(q, "S_UtLU"), [])))
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


# -- the input kinds of this section: their Lean types (the well-formedness pass, kernel/wellformed.py)


@kind("matrix")
def _wf_matrix(i: dict) -> Args:
    return Args(L=square(i["L"], "L"))


@kind("matrix_pair")
def _wf_matrix_pair(i: dict) -> Args:
    L = square(i["L"], "L")
    return Args(L=L, U=square(i["U"], "U", L.nrows()))


@kind("matrix_fiber")
def _wf_matrix_fiber(i: dict) -> Args:
    L = square(i["L"], "L")
    N = L.nrows()
    return Args(L=L, H=square(i["H"], "H", N), P=square(i["P"], "P", N), face=i["face"])


@kind("family")
def _wf_family(i: dict) -> Args:
    """v : Fin N → EuclideanSpace ℝ (Fin N) (row i is v_i), s a set of indices of Fin N."""
    v = square(i["v"], "v (N vectors of length N)")
    require(all(0 <= k < v.nrows() for k in i["s"]) and len(set(i["s"])) == len(i["s"]), "input",
            "s must be distinct indices of Fin N")
    return Args(v=v, s=list(i["s"]), N=v.nrows())
