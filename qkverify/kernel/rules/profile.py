"""Definition 6 (Profile.lean) and Theorem 4 (SimplexFaces.lean)."""

from __future__ import annotations

from flint import fmpq, fmpq_mat

from ..algebra import Coord, Quad, Root
from ..derive import Ctx, eye, frob, is_zero, lean_div, skew, sym
from ..lean import sort_desc, sqrt_rat
from ..jsonio import Invalid, Undecided, require
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


def _no_decomposition(q: Ctx, face: str) -> bool:
    """No H, P exist with S = H ± P, P ⪰ 0 and the spectrum of H symmetric about 0 when the face
    coordinate is not 0.  Face d (S = H + P): H ≤ S, so by Weyl's monotonicity the sorted eigenvalues
    satisfy λ_k(H) ≤ λ_k(S), and for every t > 0: #{eig S > t} ≥ #{eig H > t} = #{eig H < −t} ≥
    #{eig S < −t}, i.e. α_j ≥ β_j for every j, i.e. d = 0 (profileD_eq_zero_iff_forall).  Face c
    (S = H − P) symmetrically gives α_j ≤ β_j, i.e. c = 0.  So off the face none exists (TRUST.md)."""
    return not Def6.coord_is(q, Def6.profile(q)[face], fmpq(0))


def _input_pair(q: Ctx, face: str):
    """The matrix_fiber input's H, P for this face when they have the properties (None otherwise:
    they are a candidate, not a witness the certificate vouches for)."""
    if q.kind != "matrix_fiber" or q.arg("face") != face:
        return None
    try:
        return fiber_props(face, q.mat("S"), q.mat("H"), q.mat("P"))
    except Invalid:
        return None


def _decomp(q: Ctx, face: str) -> bool:
    """(face coordinate = 0) ⇔ ∃ H P, S = H ± P, H symmetric with a spectrum symmetric about 0,
    P ⪰ 0 (no commutation, as profileD_eq_zero_iff_decomp states it).  The ∃ holds with the
    input's pair when it qualifies, else with the ``fiber`` witness; it fails off the face by the
    counting argument of :func:`_no_decomposition`; otherwise undecided."""
    on_face = Def6.coord_is(q, Def6.profile(q)[face], fmpq(0))
    if _input_pair(q, face) is not None:
        return on_face
    exists = q.exists(("fiber", face), lambda f: True, lambda: _no_decomposition(q, face),
                      f"the decomposition of face {face}")
    return on_face == exists


def _as_quad(x, s: fmpq) -> Quad:
    """An eigenvalue (rational, or a Root of a quadratic) as an element of ℚ(√s); Undecided when it
    is not in that field."""
    if isinstance(x, fmpq):
        return Quad(x)
    if isinstance(x, Root) and x.f.degree() == 2:
        c, b, a = (fmpq(v) for v in x.f.coeffs())
        k2 = (b * b - 4 * a * c) / s
        k = sqrt_rat(k2) if k2 > 0 else None
        if k is not None:
            for sg in (1, -1):
                v = Quad(-b / (2 * a), sg * k / (2 * a), s)
                if (v - x.lo).sign() >= 0 and (Quad(x.hi) - v).sign() >= 0:
                    return v
    raise Undecided(f"an eigenvalue of S is not in ℚ(√{s}): ‖P‖² against the profile is out of exact reach")


def _target(q: Ctx, face: str, s: fmpq) -> Quad:
    """c‖L‖² (face d) or d‖L‖² (face c) exactly in ℚ(√s): Σ_j (α_j − β_j)₊² (resp. (β_j − α_j)₊²),
    α, β the padded positive and |negative| eigenvalues of S (Definition 6)."""
    al, be = Def6.alpha_beta(q)
    out = Quad(0)
    for a, b in zip(al, be):
        t = _as_quad(a, s) - _as_quad(b, s) if face == "d" else _as_quad(b, s) - _as_quad(a, s)
        if t.sign() > 0:
            out = out + t * t
    return out


def _decomp_commute(q: Ctx, face: str) -> bool:
    """∃ H P, S = H ± P with the properties, H and P commuting with S and with each other, and
    ‖P‖² = c‖L‖² (face d) or d‖L‖² (face c).  Holds with a ``fiber`` witness (rational, or over
    ℚ(√s)) that commutes and has that norm, compared exactly (a commuting witness with another norm
    is offered as one and does not work: invalid); fails off the face (no decomposition at all
    exists, :func:`_no_decomposition`); a witness that does not commute is the plain decomposition
    of ``…_iff_decomp`` and decides nothing here (undecided)."""
    other = "c" if face == "d" else "d"

    def works(f) -> bool:
        if not f.commute:   # the plain decomposition of …_iff_decomp: not offered as a commuting one
            raise Undecided(f"the fiber witness of face {face} does not commute: it witnesses the decomposition, "
                            "not the commuting one")
        return (f.normP - _target(q, face, f.sqrt)).sign() == 0   # a commuting one must have ‖P‖² = {other}‖L‖²

    return q.exists(("fiber", face), works, lambda: _no_decomposition(q, face),
                    f"the commuting decomposition of face {face}")


def _psd(q: Ctx, sgn: int) -> bool:
    p, m, z = signs(q)
    return (m if sgn > 0 else p) == 0


def _symmetric(q: Ctx) -> bool:
    return q.mat("L").transpose() == q.mat("L")


def _sort_desc(q: Ctx) -> list:
    """sortDesc v: a vector input's x (exact in ℚ(√s)), or on a matrix the eigenvalue vector of S."""
    if q.kind != "vector":
        return Def6.sorted_eigenvalues(q)
    from .moments import X

    xs = sort_desc(X(q), lambda a, b: (a - b).sign())
    return [t.real() for t in xs]


dfn(A + "sortDesc", D6, MAT + ("vector",), _sort_desc)
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
thm(A + "profileD_eq_zero_decomp_commute", T4, ("matrix",), HL + (("h", "profileD_eq_zero"),),
    lambda q: _decomp_commute(q, "d"))
thm(A + "profileC_eq_zero_decomp_commute", T4, ("matrix",), HL + (("h", "profileC_eq_zero"),),
    lambda q: _decomp_commute(q, "c"))
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
