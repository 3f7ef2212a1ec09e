"""§3 Profiles: Def 6, Theorem 4 (simplex faces), Lemma 4 (profile_scale),
profile_conj, Prop 4 (rank-one locus), one check per Lean declaration
(certificate format 2).

Lean: ``Appendices.profileA..D`` and helpers (Def 6, Profile.lean), SimplexFaces.lean
(Theorem 4), MainText/ProfileScale.lean (Lemma 4), MainText/ProfileInvariance.lean
(``profile_conj``), MainText/RankOneLocus.lean (``exists_orthogonal_cols``, Prop 4).
Conclusions follow Lean's conventions (x/0 = 0, lists padded to N) so that a
dropped hypothesis can be evaluated.
"""

from __future__ import annotations

from flint import arb, fmpq, fmpq_mat

from ..exact.inertia import inertia_ldlt
from ..exact.rational import fmpq_str
from ..exact.matrix import (frob_sq, identity, is_antisymmetric, is_symmetric, rank, skew_part, sym_part,
                            to_str_rows, trace)
from ..math.profile import Profile, compute_profile, spectral_data
from . import values as V
from .common import lean_div, spectrum_witness, witnessed_rank
from .registry import DeclResult, NotApplicable, Subject, declaration_check, predicate


# --------------------------------------------------------------------------
# Theorem 4: the rational decomposition S = H ± P of the faces d = 0 and c = 0


def _eigvecs_rational(S: fmpq_mat, lam: fmpq) -> list[fmpq_mat]:
    """Orthogonal (not normalised) rational basis of ker(S − λI)."""
    N = S.nrows()
    A = S - identity(N) * lam
    B, _ = A.numer_denom()
    X, k = B.nullspace()
    vs = [fmpq_mat([[X[i, j]] for i in range(N)]) for j in range(k)]
    out = []
    for v in vs:  # Gram–Schmidt over Q
        w = v
        for u in out:
            w = w - u * ((u.transpose() * v)[0, 0] / (u.transpose() * u)[0, 0])
        out.append(w)
    return out


def _proj(v: fmpq_mat) -> fmpq_mat:
    return v * v.transpose() * (1 / (v.transpose() * v)[0, 0])


def face_decomposition(L: fmpq_mat, p: Profile, face: str) -> tuple[str, dict, dict]:
    """Witness for Theorem 4 item 3 (face 'd': S = H + P) or item 4 (face 'c':
    S = H − P) when every eigenvalue of S is rational: H symmetric with spectrum
    symmetric about 0, P ⪰ 0, H, P commuting with S and each other, ‖P‖² = c‖L‖²
    (resp. d‖L‖²).  Returns ("exact", witness, checks); ValueError for an
    irrational spectrum (the decomposition is then not rational)."""
    S = sym_part(L)
    N = S.nrows()
    sd = spectral_data(S)
    m = len(p.alpha)
    # eigenvalues of S (unscaled) with positions
    pos = [r.value.scale(fmpq(1, sd.D)) for r in sd.pos]
    neg = [(-r.value).scale(fmpq(1, sd.D)) for r in sd.neg]
    if not all(f.degree() == 1 for f in sd.factors):
        raise ValueError("the decomposition is built for rational spectra only")
    spaces = {}
    used = {}

    def take(lam: fmpq):
        key = lam
        if key not in spaces:
            spaces[key] = _eigvecs_rational(S, lam)
            used[key] = 0
        v = spaces[key][used[key]]
        used[key] += 1
        return v
    H = fmpq_mat(N, N)
    P = fmpq_mat(N, N)
    for j in range(m):
        a = pos[j].rational if j < len(pos) else fmpq(0)
        b = neg[j].rational if j < len(neg) else fmpq(0)
        u = take(a) if j < len(pos) else None
        w = take(-b) if j < len(neg) else None
        if face == "d":
            if u is not None:
                H += _proj(u) * b
                P += _proj(u) * (a - b)
            if w is not None:
                H -= _proj(w) * b
        else:
            if u is not None:
                H += _proj(u) * a
            if w is not None:
                H -= _proj(w) * a
                P += _proj(w) * (b - a)
    sign = 1 if face == "d" else -1
    cp = H.charpoly()
    cpn = [c if k % 2 == 0 else -c for k, c in enumerate(cp.coeffs())]
    sym_spec = cpn == list(cp.coeffs()) or cpn == [-c for c in cp.coeffs()]
    Pi = inertia_ldlt(P)
    target = p.c if face == "d" else p.d
    checks = {
        "S = H ± P": S == H + P * sign,
        "H symmetric": is_symmetric(H),
        "spectrum of H symmetric about 0": sym_spec,
        "P positive semidefinite": Pi.n_neg == 0,
        "SH = HS": S * H == H * S,
        "SP = PS": S * P == P * S,
        "HP = PH": H * P == P * H,
        f"‖P‖² = {'c' if face == 'd' else 'd'}‖L‖²": target.exact is not None and frob_sq(P) == target.exact * frob_sq(L),
    }
    w = {"kind": "fiber_decomposition", "face": face, "exact": True,
         "H": to_str_rows(H), "P": to_str_rows(P), "checks": checks}
    return "exact", w, checks


# --------------------------------------------------------------------------
# Definition 6 and Theorem 4
#
# The producer's route: exact eigenvalues of S as RealAlgebraic numbers
# (math/profile.py), exact values of b, c, d through resolvents when the orbit
# is small, certified arb enclosures always; inertia of S by LDLᵀ (a second,
# independent method) for the semidefiniteness sides.  A profile coordinate is
# stated exact when it is zero or every α_j, β_j is rational (the kernel's
# rule), otherwise as an enclosure (and its exact algebraic value, when known,
# goes to the certificate's display).

PROFILE_KINDS = ("matrix", "matrix_fiber")


def _prof(s: Subject) -> Profile | None:
    """π(L) with Lean's padding (None for L = 0: Lean's x/0 = 0 gives (0, 0, 0, 0));
    records the spectrum witness of S."""
    def build():
        s.witness(spectrum_witness(sym_part(s.inp.L), "S"))
        return None if frob_sq(s.inp.L) == 0 else compute_profile(s.inp.L, "lean")

    return s.memo("profile", build)


def _terms(p: Profile, k: str) -> list:
    """The (α_j, β_j) pairs coordinate k sums over: both positive (b), α_j > β_j (c), α_j < β_j (d)."""
    if k == "b":
        return [(x, y) for x, y in zip(p.alpha, p.beta) if x.sign() > 0 and y.sign() > 0]
    side = 1 if k == "c" else -1
    return [(x, y) for x, y, o in zip(p.alpha, p.beta, p.order) if o * side > 0]


def rat_of(text: str) -> fmpq:
    """The rational a value object's "p/q" text stands for."""
    num, _, den = text.partition("/")
    return fmpq(int(num), int(den or 1))


def _coord_value(p: Profile | None, k: str) -> dict:
    """Exact when the coordinate is a or 0 or every pair it sums over is rational (then its
    value is rational and the kernel computes it exactly too), else an enclosure."""
    if p is None:
        return V.exact(0)
    c = getattr(p, k)
    if k == "a" or c.is_zero:
        return V.exact(c.exact if c.exact is not None else 0)
    pairs = _terms(p, k)
    if all(x.is_rational and y.is_rational for x, y in pairs):
        tot = sum(((2 * x.rational * y.rational) if k == "b" else (x.rational - y.rational) ** 2
                   for x, y in pairs), fmpq(0))
        return V.exact(tot / p.frob_L)
    return V.enclosure(c.enclosure)


def _coord_evidence(p: Profile | None, k: str) -> str:
    return "exact" if "exact" in _coord_value(p, k) else "certified"


def _is(p: Profile | None, k: str, one: bool) -> bool:
    """x = 0 / x = 1 for a coordinate, decided exactly (Profile.fibers; π(0) = 0)."""
    if p is None:
        return not one
    return p.fibers()[f"{k}={1 if one else 0}"]


def _inertia(s: Subject):
    return s.memo("inertia", lambda: inertia_ldlt(sym_part(s.inp.L)))


@predicate("profileD_eq_zero")
def _pd0(s: Subject) -> bool:
    """d(L) = 0 (Lean binder ``h`` of profileD_eq_zero_decomp_commute)."""
    return _is(_prof(s), "d", False)


@predicate("profileC_eq_zero")
def _pc0(s: Subject) -> bool:
    """c(L) = 0 (Lean binder ``h`` of profileC_eq_zero_decomp_commute)."""
    return _is(_prof(s), "c", False)


# Definition 6 ------------------------------------------------------------------


@declaration_check("sortDesc", PROFILE_KINDS + ("vector",))
def _sortDesc(s: Subject) -> DeclResult:
    """sortDesc v for any v : Fin n → ℝ: a vector input's x (as given, or normalised), or on a matrix
    the eigenvalue vector of S = symPart L (Lean's hS.eigenvalues, the v of alphaList); checked:
    antitone, of length n, and the same multiset as v (each value counted in both)."""
    if s.kind == "vector":
        from .bimodal import vec

        x = vec(s)
        out = sorted(x, key=lambda t: t.to_arb(128).mid(), reverse=True)
        out = _exact_sort_desc(out)
        ok = (len(out) == len(x) and all(out[i] >= out[i + 1] for i in range(len(out) - 1))
              and all(sum(1 for a in out if a == t) == sum(1 for b in x if b == t) for t in x))
        from .bimodal import list_value

        return DeclResult(ok, value=list_value(out))
    from ..exact.algebraic import eigenvalues_symmetric

    ev = eigenvalues_symmetric(sym_part(s.inp.L))
    flat = [x for x, m in ev for _ in range(m)]
    _prof(s)
    ok = all(flat[i].cmp(flat[i + 1]) >= 0 for i in range(len(flat) - 1)) and len(flat) == s.inp.N
    return DeclResult(ok, value=V.listv([V.real(x) for x in flat]))


def _exact_sort_desc(xs: list) -> list:
    """Decreasing order by exact comparison (elements of ℚ(√s), compared exactly)."""
    import functools

    return sorted(xs, key=functools.cmp_to_key(lambda a, b: (b > a) - (b < a)))


def _list(s: Subject, which: str) -> DeclResult:
    p = _prof(s)
    N = s.inp.N
    from ..exact.algebraic import RealAlgebraic

    xs = [RealAlgebraic.from_rational(0)] * N if p is None else getattr(p, which)
    ok = len(xs) == N and all(x.sign() >= 0 for x in xs) and all(xs[i].cmp(xs[i + 1]) >= 0 for i in range(N - 1))
    if p is not None:  # the nonzero entries are the positive (negative) eigenvalues: count them by LDLᵀ
        inn = _inertia(s)
        ok = ok and sum(1 for x in xs if x.sign() > 0) == (inn.n_pos if which == "alpha" else inn.n_neg)
    return DeclResult(ok, value=V.listv([V.real(x) for x in xs]))


@declaration_check("alphaList", PROFILE_KINDS)
def _alpha(s: Subject) -> DeclResult:
    """α: nonnegative, antitone, length N, as many positive entries as S has positive eigenvalues."""
    return _list(s, "alpha")


@declaration_check("betaList", PROFILE_KINDS)
def _beta(s: Subject) -> DeclResult:
    """β: as α, for the negative eigenvalues."""
    return _list(s, "beta")


def _coord_check(s: Subject, k: str) -> DeclResult:
    """A coordinate by its definition, compared with a second evaluation: the exact
    value (rational, or the resolvent's algebraic number) must lie in the enclosure
    computed term by term from the eigenvalue enclosures."""
    p = _prof(s)
    if p is None:
        return DeclResult(True, value=V.exact(0))
    c = getattr(p, k)
    ok = True
    if c.value is not None:
        ok = c.value.to_arb(120).overlaps(c.enclosure) and (c.value.sign() == 0) == c.is_zero
    return DeclResult(ok, _coord_evidence(p, k), _coord_value(p, k))


def _head_coord(s: Subject, k: str) -> DeclResult:
    """A real head's coordinate from its deterministic cells (qkverify.heads.cells): a exact from
    the traces; b, c, d as the enclosures computed from the cells, or exactly 0.  Evidence as the
    kernel's: a exact; b exact only when 0 (decided by signs); c, d certified (their terms are
    chosen by comparing cells).  Checked against a second quantity: a + b + c + d contains 1."""
    hs = s.inp.spectrum
    s.witness(s.inp.cells_witness)
    if hs.a is None:  # L = 0: π(0) = (0, 0, 0, 0)
        return DeclResult(True, value=V.exact(0))
    zero = {"a": hs.a == 0, "b": hs.n_pos == 0 or hs.n_neg == 0,
            "c": hs.faces.get("c0"), "d": hs.faces.get("d0")}[k]
    lo = hi = hs.a
    for x in "bcd":
        xl, xh = hs.enclosures[x]
        lo, hi = lo + xl, hi + xh
    ok = lo <= 1 <= hi
    # the kernel compares two cells (certified) exactly when some α_j and β_j are both nonzero
    both = hs.n_pos > 0 and hs.n_neg > 0
    ev = "exact" if k == "a" or (k == "b" and zero) or (k in "cd" and zero is True and not both) else "certified"
    if k == "a":
        return DeclResult(ok, ev, V.exact(hs.a))
    enc = hs.cell_enclosures()[k]
    if k in "cd" and "?" in hs.order:
        # the kernel reads c and d from the order of every pair α_j, β_j: one pair its cells leave
        # unordered leaves both undecided (whatever the other pairs say about c = 0 or d = 0)
        return DeclResult(None, ev, V.enclosure_q(*enc), reason=f"the cells do not order every α_j, β_j ({k})")
    if zero == "undecided":
        return DeclResult(None, ev, V.enclosure_q(*enc), reason=f"the cells do not decide {k} = 0")
    return DeclResult(ok, ev, V.exact(0) if zero else V.enclosure_q(*enc))


PROFILE_DEF_KINDS = PROFILE_KINDS + ("weights",)
for _k in "ABCD":
    declaration_check(f"profile{_k}", PROFILE_DEF_KINDS)(
        lambda s, k=_k.lower(): _head_coord_once(s, k) if s.kind == "weights" else _coord_check(s, k))


@declaration_check("profile", PROFILE_DEF_KINDS)
def _profile(s: Subject) -> DeclResult:
    """π(L) = (profileA L, profileB L, profileC L, profileD L): each coordinate checked by its
    definition (:func:`_coord_check`: the exact value inside the term-by-term enclosure), and the
    four stated in that order."""
    if s.kind == "weights":
        parts = [_head_coord_once(s, k) for k in "abcd"]
        concl = None if any(r.conclusion is None for r in parts) else all(r.conclusion for r in parts)
        ev = "exact" if all(r.evidence == "exact" for r in parts) else "certified"
        return DeclResult(concl, ev, V.listv([r.value for r in parts]))
    p = _prof(s)
    vals = [_coord_value(p, k) for k in "abcd"]
    parts = [_coord_check(s, k) for k in "abcd"]
    ok = all(r.conclusion for r in parts) and [r.value for r in parts] == vals
    ev = "exact" if all("exact" in v for v in vals) else "certified"
    return DeclResult(ok, ev, V.listv(vals))


# Theorem 4 ---------------------------------------------------------------------


for _k in "abcd":
    def _nonneg(s: Subject, k=_k) -> DeclResult:
        p = _prof(s)
        if p is None:
            return DeclResult(True)
        c = getattr(p, k)
        return DeclResult(c.is_zero or (c.exact >= 0 if c.exact is not None else c.enclosure > 0))

    declaration_check(f"profile{_k.upper()}_nonneg", PROFILE_KINDS)(_nonneg)


@declaration_check("profile_sum_eq_one", PROFILE_KINDS)
def _sum(s: Subject) -> DeclResult:
    """a + b + c + d = 1: exactly when all four are rational; otherwise the sum of the
    enclosures must contain 1 and Σα² + Σβ² must equal ‖S‖² (2αβ + (α−β)² = α² + β²)."""
    p = _prof(s)
    if p is None:
        return DeclResult(False, reason="L = 0: with x/0 = 0 the profile is (0, 0, 0, 0)")
    ex = [c.exact for c in p.coords()]
    if all(x is not None for x in ex):
        return DeclResult(sum(ex, fmpq(0)) == 1)
    enc = p.a.enclosure + p.b.enclosure + p.c.enclosure + p.d.enclosure
    return DeclResult(bool(enc.contains(arb(1))) and p.frob_S + p.frob_T == p.frob_L)


def _order(s: Subject, p: Profile | None) -> list[int]:
    """cmp(α_j, β_j) for every j; for L = 0 both lists are zero (Lean), all ties."""
    return p.order if p is not None else [0] * s.inp.N


def _thm(name: str, fn):
    declaration_check(name, PROFILE_KINDS)(lambda s: DeclResult(fn(s, _prof(s))))


_sym = lambda s: is_symmetric(s.inp.L)  # noqa: E731
_thm("profileA_eq_zero_iff", lambda s, p: _is(p, "a", False) == _sym(s))
_thm("profileA_eq_one_iff", lambda s, p: _is(p, "a", True) == is_antisymmetric(s.inp.L))
_thm("profileB_eq_zero_iff", lambda s, p: _is(p, "b", False) == (_inertia(s).n_neg == 0 or _inertia(s).n_pos == 0))
_thm("profileB_eq_one_iff", lambda s, p: _is(p, "b", True) == (_sym(s) and all(o == 0 for o in _order(s, p))))
_thm("profileD_eq_zero_iff_forall", lambda s, p: _is(p, "d", False) == all(o >= 0 for o in _order(s, p)))
_thm("profileC_eq_zero_iff_forall", lambda s, p: _is(p, "c", False) == all(o <= 0 for o in _order(s, p)))
_thm("profileD_eq_one_iff", lambda s, p: _is(p, "d", True) == (_sym(s) and _inertia(s).n_pos == 0))
_thm("profileC_eq_one_iff", lambda s, p: _is(p, "c", True) == (_sym(s) and _inertia(s).n_neg == 0))


def _props(S: fmpq_mat, H: fmpq_mat, P: fmpq_mat, face: str) -> bool:
    """S = H ± P with H symmetric, the eigenvalue multiset of H invariant under negation
    (det(tI − H) of one parity) and P ⪰ 0 (symmetric, LDLᵀ inertia without negative pivots)."""
    from ..math.decomposition import spectrum_symmetric

    sign = 1 if face == "d" else -1
    return (S == H + P * sign and is_symmetric(H) and is_symmetric(P) and spectrum_symmetric(H)
            and inertia_ldlt(P).n_neg == 0)


NO_DECOMPOSITION = ("no decomposition exists: if S = H {op} P with P ⪰ 0 and the spectrum of H symmetric about 0, "
                    "Weyl's monotonicity gives #{{eigenvalues of S > t}} {ge} #{{eigenvalues of H > t}} = "
                    "#{{eigenvalues of H < −t}} {ge2} #{{eigenvalues of S < −t}} for every t > 0, i.e. {rel} for every "
                    "j, which the spectrum of S contradicts")


def _no_decomposition(face: str) -> str:
    return NO_DECOMPOSITION.format(op="+" if face == "d" else "−", ge="≥" if face == "d" else "≤",
                                   ge2="≥" if face == "d" else "≤",
                                   rel="α_j ≥ β_j" if face == "d" else "α_j ≤ β_j")


def _face_witness(s: Subject, face: str) -> dict | None:
    """The decomposition the certificate carries for a face that is reached (memoised, one per face),
    as {"H", "P"} (rational) or {"sqrt", "H", "P"} (pairs H₀ + H₁√s): Lean's construction when the
    spectrum of S is rational (it also commutes and has ‖P‖² = c‖L‖²); when every eigenvalue lies in
    one quadratic field, Lean's construction over ℚ(√s) (:func:`qkverify.math.decomposition.commuting_quadratic`);
    else the rational pair of :func:`qkverify.math.decomposition.decomposition` (not commuting);
    None when none is found."""
    def build():
        p = _prof(s)
        S = sym_part(s.inp.L)
        if p is None:
            return {"H": fmpq_mat(s.inp.N, s.inp.N), "P": fmpq_mat(s.inp.N, s.inp.N)}
        if all(f.degree() == 1 for f in spectral_data(S).factors):
            _, w, _ = face_decomposition(s.inp.L, p, face)
            return {"H": fmpq_mat(w["H"]), "P": fmpq_mat(w["P"])}
        from ..math.decomposition import commuting_quadratic, decomposition

        q2 = commuting_quadratic(S, face)
        if q2 is not None:
            return {"sqrt": q2[0], "H": q2[1], "P": q2[2]}
        out = decomposition(S, face)
        return None if out is None else {"H": out[0], "P": out[1]}

    out = s.memo(("face_witness", face), build)
    if out is not None:
        if "sqrt" in out:
            s.witness({"kind": "fiber", "of": face, "sqrt": fmpq_str(out["sqrt"]), "H": to_str_rows(out["H"][0]),
                       "H_sqrt": to_str_rows(out["H"][1]), "P": to_str_rows(out["P"][0]),
                       "P_sqrt": to_str_rows(out["P"][1])})
        else:
            s.witness({"kind": "fiber", "of": face, "H": to_str_rows(out["H"]), "P": to_str_rows(out["P"])})
    return out


def _cand_props(S: fmpq_mat, cand: dict, face: str) -> tuple[bool, bool, object]:
    """(the properties of profileD_eq_zero_iff_decomp hold, H and P commute with S and each other,
    ‖P‖²) for a candidate of :func:`_face_witness`."""
    from ..math.decomposition import commutes, quadratic_props

    if "sqrt" not in cand:
        H, P = cand["H"], cand["P"]
        return _props(S, H, P, face), commutes(S, H, P), frob_sq(P)
    r = quadratic_props(S, face, cand["sqrt"], cand["H"], cand["P"])
    ok = r["decomposes"] and r["symmetric"] and r["H_spectrum_symmetric"] and r["P_psd"]
    return ok, r["commute"], r["normP"]


def _target(p: Profile | None, face: str, s_: fmpq):
    """c‖L‖² (face d) or d‖L‖² (face c) exactly, as Σ_j (α_j − β_j)₊² in ℚ(√s) (None when an
    eigenvalue is not in that field)."""
    from ..exact.quadratic import Quad

    if p is None:
        return Quad(0)
    out = Quad(0)
    for a, b in zip(p.alpha, p.beta):
        qa, qb = _in_field(a, s_), _in_field(b, s_)
        if qa is None or qb is None:
            return None
        t = qa - qb if face == "d" else qb - qa
        if t > 0:
            out = out + t * t
    return out


def _in_field(x, s_: fmpq):
    """A real algebraic number as an element of ℚ(√s) (None when it is not one)."""
    from ..exact.quadratic import Quad, rational_sqrt

    if x.is_rational:
        return Quad(x.rational)
    cs = [fmpq(int(c)) for c in x.poly.coeffs()]
    if len(cs) != 3 or s_ == 1:
        return None
    c, b, a = cs
    k = rational_sqrt((b * b - 4 * a * c) / s_)
    if k is None:
        return None
    for sg in (1, -1):   # the root of the irreducible quadratic in x's isolating interval
        v = Quad(-b / (2 * a), sg * k / (2 * a), s_)
        if x.lo <= v <= x.hi:
            return v
    return None


def _fiber(s: Subject, face: str, commute: bool) -> DeclResult:
    """The decomposition faces of Theorem 4, as Lean states them.

    ``…_iff_decomp``: (face coordinate = 0) ⇔ ∃ H, P with S = H ± P, H symmetric with a spectrum
    symmetric about 0, P ⪰ 0 (no commutation).  The ∃ side holds with a checked witness: the
    input's H, P (``matrix_fiber``) when they qualify, else the pair of :func:`_face_witness`
    (carried as the ``fiber`` witness, rational or over ℚ(√s)); it fails, off the face, by the
    counting argument of :data:`NO_DECOMPOSITION` (β_j > α_j for some j, read off the spectrum of S).

    ``…_decomp_commute``: the same ∃ with H, P commuting with S and each other and ‖P‖² = c‖L‖²
    (d‖L‖² on face c).  On the face: the pair of :func:`_face_witness` when it commutes and has the
    norm (Lean's construction: rational spectra, or every eigenvalue in one quadratic field), else
    undecided (the commuting H, P have entries in a larger number field).  Off the face (``h``
    dropped): fails, as no decomposition at all exists."""
    p = _prof(s)
    S = sym_part(s.inp.L)
    on_face = _is(p, face, False)
    if commute:
        if not on_face:
            return DeclResult(False, reason=_no_decomposition(face))
        other = "c" if face == "d" else "d"
        cand = _face_witness(s, face)
        if cand is None:
            return DeclResult(None, reason=f"{face} = 0 but no decomposition was found")
        ok, comm, normP = _cand_props(S, cand, face)
        target = _target(p, face, cand.get("sqrt", fmpq(1)))
        if not comm or target is None or normP != target:
            return DeclResult(None, reason="the eigenvalues of S are not all in one quadratic field: the commuting "
                                           f"H, P with ‖P‖² = {other}‖L‖² have entries in a larger number field; "
                                           "no exact witness")
        return DeclResult(ok)
    cand = None
    if s.kind == "matrix_fiber" and s.inp.face == face and _props(S, s.inp.H, s.inp.P, face):
        return DeclResult(on_face)
    if on_face:
        cand = _face_witness(s, face)
        if cand is None:
            return DeclResult(None, reason=f"{face} = 0 but no rational decomposition was found")
    rhs = cand is not None and _cand_props(S, cand, face)[0]
    return DeclResult(on_face == rhs, reason="" if rhs else f"{face} ≠ 0 and no decomposition exists (the counting "
                                                             "argument, TRUST.md)")


declaration_check("profileD_eq_zero_iff_decomp", PROFILE_KINDS)(lambda s: _fiber(s, "d", False))
declaration_check("profileC_eq_zero_iff_decomp", PROFILE_KINDS)(lambda s: _fiber(s, "c", False))
declaration_check("profileD_eq_zero_decomp_commute", ("matrix",))(lambda s: _fiber(s, "d", True))
declaration_check("profileC_eq_zero_decomp_commute", ("matrix",))(lambda s: _fiber(s, "c", True))


# --------------------------------------------------------------------------
# Lemma 4 (ProfileScale.lean)

MAT = ("matrix",)


def _a(X: fmpq_mat) -> fmpq:
    """profileA X = ‖skewPart X‖²/‖X‖² (x/0 = 0), exact."""
    return lean_div(frob_sq(skew_part(X)), frob_sq(X))


@predicate("symPart_ne_zero")
def _S_ne_zero(s: Subject) -> bool:
    """symPart L ≠ 0 (Lean binder ``hS`` of profile_scale)."""
    return frob_sq(sym_part(s.inp.L)) != 0


@declaration_check("profileA_symPart", MAT)
def _a_sym(s: Subject) -> DeclResult:
    """a(symPart L) = 0: the skew part of S = symPart L, computed from S's entries, has norm 0."""
    return DeclResult(_a(sym_part(s.inp.L)) == 0)


@declaration_check("one_sub_profileA", MAT)
def _one_sub_a(s: Subject) -> DeclResult:
    """1 − a(L) = ‖S‖²/‖L‖²: a from the skew part, against the symmetric part's norm (x/0 = 0, so
    that with hL dropped L = 0 is evaluated: 1 ≠ 0)."""
    L = s.inp.L
    return DeclResult(1 - _a(L) == lean_div(frob_sq(sym_part(L)), frob_sq(L)))


@declaration_check("profile_scale", MAT)
def _profile_scale(s: Subject) -> DeclResult:
    """a(S) = 0 and (b, c, d)(L) = (1 − a(L))·(b, c, d)(S).  π(S) is computed on its own (the
    spectrum of symPart S, divided by ‖S‖²); exact values are compared where both are rational,
    otherwise the coordinates agree exactly when their zero-ness agrees, symPart S = S and
    (1 − a(L))/‖S‖² = 1/‖L‖² (the same numerator over the two norms; the kernel's route)."""
    L = s.inp.L
    S = sym_part(L)
    p = _prof(s)
    pS = compute_profile(S, "lean") if frob_sq(S) != 0 else None
    one_a = 1 - _a(L)
    scale = one_a * lean_div(fmpq(1), frob_sq(S)) == lean_div(fmpq(1), frob_sq(L))
    ok = _a(S) == 0
    for k in "bcd":
        zL = p is None or getattr(p, k).is_zero
        zS = pS is None or getattr(pS, k).is_zero
        if zL or zS:
            ok = ok and zL == zS
            continue
        cL, cS = getattr(p, k).exact, getattr(pS, k).exact
        ok = ok and (cL == one_a * cS if cL is not None and cS is not None else sym_part(S) == S and scale)
    return DeclResult(ok)


# --------------------------------------------------------------------------
# profile_conj (ProfileInvariance.lean), exists_orthogonal_cols (RankOneLocus.lean)


def _coord(p: Profile | None, k: str) -> tuple[fmpq | None, bool, arb]:
    """(exact value or None, zero, enclosure) of a coordinate, exact by the kernel's rule (zero, a,
    or every α_j, β_j rational)."""
    if p is None:
        return fmpq(0), True, arb(0)
    c = getattr(p, k)
    v = _coord_value(p, k)
    return (rat_of(v["exact"]) if "exact" in v else None), c.is_zero, c.enclosure


def _same(x: tuple, y: tuple) -> tuple[bool | None, str]:
    """Two coordinates: exactly when both are exact, else by disjoint enclosures (certified)."""
    if x[0] is not None and y[0] is not None:
        return x[0] == y[0], "exact"
    if x[1] != y[1]:
        return False, "exact"
    return (False if not x[2].overlaps(y[2]) else None), "certified"


@predicate("U_orthogonal")
def _U_orthogonal(s: Subject) -> bool:
    """UᵀU = 1 (Lean binder ``hU``)."""
    U = s.inp.U
    return U.transpose() * U == identity(U.nrows())


@declaration_check("profile_conj", ("matrix_pair",))
def _profile_conj(s: Subject) -> DeclResult:
    """a, b, c, d of UᵀLU equal those of L: a exactly; b, c, d equal when the exact eigenvalue lists
    of the two symmetric parts agree entry by entry and the norms agree, else compared as values
    (exact, or disjoint enclosures)."""
    L, U = s.inp.L, s.inp.U
    C = U.transpose() * L * U
    ps = []
    for X, name in ((L, "S"), (C, "S_UtLU")):
        s.witness(spectrum_witness(sym_part(X), name))
        ps.append(compute_profile(X, "lean") if frob_sq(X) != 0 else None)
    lists = []
    for X in (L, C):
        sd = spectral_data(sym_part(X))
        lists.append([r.value.scale(fmpq(1, sd.D)) for r in sd.pos + sd.neg])
    same = frob_sq(L) == frob_sq(C) and len(lists[0]) == len(lists[1]) and all(
        x.cmp(y) == 0 for x, y in zip(*lists))
    if _a(L) != _a(C):
        return DeclResult(False)
    if same:
        return DeclResult(True)
    ev = "exact"
    for k in "bcd":
        r, e = _same(_coord(ps[0], k), _coord(ps[1], k))
        ev = "certified" if e == "certified" else ev
        if r is None:
            return DeclResult(None, "certified", reason=f"the enclosures of {k} overlap")
        if not r:
            return DeclResult(False, ev)
    return DeclResult(True, ev)


@predicate("orthonormal_on_s")
def _orthonormal(s: Subject) -> bool:
    """v_i · v_j = [i = j] for i, j ∈ s (Lean binder ``hv``)."""
    v, idx = s.inp.v, s.inp.s
    if not idx:
        return True
    W = fmpq_mat([v.tolist()[i] for i in idx])
    return W * W.transpose() == identity(len(idx))


def orthogonal_extension(v: fmpq_mat, idx: tuple[int, ...]) -> fmpq_mat:
    """A rational orthogonal U with U e_i = v_i (row i of ``v``) for i ∈ idx, for an orthonormal
    rational family: one Householder reflection per vector, I − 2hhᵀ/(hᵀh) with h = e_i − Uᵀv_i,
    which fixes the columns already placed (exact)."""
    N = v.nrows()
    U = identity(N)
    for i in idx:
        z = U.transpose() * fmpq_mat([[x] for x in v.tolist()[i]])
        h = -z
        h[i, 0] += 1
        hh = (h.transpose() * h)[0, 0]
        if hh != 0:
            U = U * (identity(N) - h * h.transpose() * (2 / hh))
    return U


@declaration_check("exists_orthogonal_cols", ("family",))
def _orthogonal_cols(s: Subject) -> DeclResult:
    """∃ U with UᵀU = 1 and U's column i = v_i (i ∈ s): U built by Householder reflections and
    checked; a family that is not orthonormal has no such U (the columns of U are)."""
    v, idx = s.inp.v, s.inp.s
    if not _orthonormal(s):
        return DeclResult(False, reason="the family is not orthonormal")
    U = orthogonal_extension(v, idx)
    s.witness({"kind": "orthogonal", "of": "family", "U": to_str_rows(U)})
    ok = U.transpose() * U == identity(v.nrows()) and all(U[k, i] == v[i, k] for i in idx for k in range(v.nrows()))
    return DeclResult(ok)


# --------------------------------------------------------------------------
# Prop 4 (RankOneLocus.lean)
#
# π of a rank-one matrix through the producer's general route (exact values of
# b, c, d by resolvents, math/profile.py); the kernel evaluates it by the
# rank-≤ 2 structure of S (kernel/rules/rank_one.py).  The formula's side is
# computed from t = u·v (or t = tr L, or t² = (x·y)²/(‖x‖²‖y‖²)).

P4_KINDS = ("matrix", "rank_one", "theta_point")


def formula(t2: fmpq, sign: int) -> list[fmpq]:
    """((1 − t²)/2, (1 − t²)/2, max(t, 0)², max(−t, 0)²) from t² and the sign of t.

    >>> formula(fmpq(9, 25), 1)
    [8/25, 8/25, 9/25, 0]
    """
    return [(1 - t2) / 2, (1 - t2) / 2, t2 if sign > 0 else fmpq(0), t2 if sign < 0 else fmpq(0)]


def in_theta(p: list[fmpq]) -> bool:
    """p ∈ Θ = {a = b, cd = 0} ∩ Δ₃ by Lean's definition (seven conditions)."""
    a, b, c, d = p
    return min(p) >= 0 and a + b + c + d == 1 and a == b and c * d == 0


def _sgn(x: fmpq) -> int:
    return (x > 0) - (x < 0)


def _rank(s: Subject) -> int:
    """rank L with its witness (used by hL and by the kernel's rank-≤1 route)."""
    return witnessed_rank(s, s.inp.L, "L")


def _profile_equals(s: Subject, L: fmpq_mat, target: list[fmpq], spectrum: bool) -> tuple[bool | None, str]:
    """π(L) = target: exact for rank ≤ 1 (resolvent values; Lean's π(0) = 0), otherwise by the
    kernel's coordinate rule (exact, or disjoint enclosures) with the spectrum witness of S."""
    if frob_sq(L) == 0:
        return all(x == 0 for x in target), "exact"
    p = compute_profile(L, "lean")
    if rank(L) <= 1:
        got = [c.exact for c in p.coords()]
        if None in got:  # the resolvent's orbit cap: tr S and the second power sum of S give it
            raise ArithmeticError("exact profile of a rank-one matrix not computed")
        return got == target, "exact"
    if spectrum:
        s.witness(spectrum_witness(sym_part(L), "S"))
    ev = "exact"
    for k, x in zip("abcd", target):
        r, e = _same(_coord(p, k), (x, x == 0, arb(x)))
        ev = "certified" if e == "certified" else ev
        if r is None:
            return None, "certified"
        if not r:
            return False, ev
    return True, ev


def _factor(L: fmpq_mat) -> tuple[list[fmpq], list[fmpq]]:
    """L = x yᵀ for rank L = 1: y a nonzero row of L, x the column through its first nonzero
    entry scaled by that entry."""
    rows = L.tolist()
    i = next(i for i, r in enumerate(rows) if any(r))
    j = next(j for j, x in enumerate(rows[i]) if x != 0)
    return [L[k, j] / L[i, j] for k in range(L.nrows())], list(rows[i])


def _matrix_factor(s: Subject) -> tuple[list[fmpq], list[fmpq]] | None:
    """The factor witness L = x yᵀ when rank L = 1 (None otherwise)."""
    def build():
        if _rank(s) != 1:
            return None
        x, y = _factor(s.inp.L)
        s.witness({"kind": "factor", "of": "L", "x": [str(V.exact(a)["exact"]) for a in x],
                   "y": [str(V.exact(b)["exact"]) for b in y]})
        return x, y

    return s.memo("factor_L", build)


@predicate("rank_eq_one")
def _rank_one(s: Subject) -> bool:
    """rank L = 1 (Lean binder ``hL``)."""
    return _rank(s) == 1


@predicate("norm_eq_one")
def _norm_one(s: Subject) -> bool:
    """frobSq L = 1 (Lean binder ``hnorm``)."""
    return frob_sq(s.inp.L) == 1


@predicate("N_ge_two")
def _N_ge_two(s: Subject) -> bool:
    """2 ≤ N (Lean binder ``hN``)."""
    return s.inp.N >= 2


def _unit(s: Subject, key: str) -> bool:
    """hu, hv, hs on a ``rank_one`` input; on a matrix the instance is the normalised factorisation
    u = x/‖x‖, v = y/‖y‖, s = ‖x‖‖y‖ of L, which satisfies all three whenever it exists."""
    if s.kind != "rank_one":
        return True
    if key == "s":
        return s.inp.s > 0
    w = s.inp.u if key == "u" else s.inp.v
    return sum((a * a for a in w), fmpq(0)) == 1


for _k, _pid in (("u", "u_unit"), ("v", "v_unit"), ("s", "s_pos")):
    predicate(_pid)(lambda s, k=_k: _unit(s, k))


@declaration_check("Theta", ("theta_point",))
def _theta(s: Subject) -> DeclResult:
    """Θ at the input point: membership by the definition, checked against the parametrisation
    p = ((1 − t²)/2, (1 − t²)/2, t₊², t₋²), t ∈ [−1, 1] (with t² = c + d, the sign of c − d)."""
    p = list(s.inp.p)
    t2 = p[2] + p[3]
    param = t2 <= 1 and min(p[2], p[3]) == 0 and min(p) >= 0 and formula(t2, _sgn(p[2] - p[3])) == p
    member = in_theta(p)
    return DeclResult(member == param, value=V.boolean(member))


@declaration_check("profile_smul_vecMulVec", ("rank_one", "matrix"))
def _smul(s: Subject) -> DeclResult:
    """π(s·u vᵀ) = formula(t = u·v) on a ``rank_one`` input; on a rank-one matrix L = x yᵀ (factor
    witness) at its normalised factorisation, t² = (x·y)²/(‖x‖²‖y‖²) (the scale-free form of
    profile_rank_one)."""
    if s.kind == "rank_one":
        inp = s.inp
        t = sum((a * b for a, b in zip(inp.u, inp.v)), fmpq(0))
        r, ev = _profile_equals(s, inp.L, formula(t * t, _sgn(t)), False)
        return DeclResult(r, ev)
    f = _matrix_factor(s)
    if f is None:
        raise NotApplicable("rank L ≠ 1: L is not s·u vᵀ")
    x, y = f
    xy = sum((a * b for a, b in zip(x, y)), fmpq(0))
    t2 = xy * xy / (sum((a * a for a in x), fmpq(0)) * sum((b * b for b in y), fmpq(0)))
    r, ev = _profile_equals(s, s.inp.L, formula(t2, _sgn(xy)), True)
    return DeclResult(r, ev)


@declaration_check("exists_smul_vecMulVec_of_rank_eq_one", ("matrix",))
def _exists_smul(s: Subject) -> DeclResult:
    """∃ unit u, v, s > 0 with L = s·u vᵀ: the witness L = x yᵀ (u = x/‖x‖, v = y/‖y‖, s = ‖x‖‖y‖),
    checked; without rank one there is none (s·u vᵀ has rank 1)."""
    f = _matrix_factor(s)
    if f is None:
        return DeclResult(False, reason="rank L ≠ 1")
    x, y = f
    return DeclResult(fmpq_mat([[a * b for b in y] for a in x]) == s.inp.L and any(x) and any(y))


@declaration_check("profile_rank_one", ("matrix",))
def _profile_rank_one(s: Subject) -> DeclResult:
    """π(L) = formula(t = tr L) (Lean form: rank L = 1 and frobSq L = 1)."""
    _rank(s)
    t = trace(s.inp.L)
    r, ev = _profile_equals(s, s.inp.L, formula(t * t, _sgn(t)), True)
    return DeclResult(r, ev, reason="" if r is not None else "coordinates not separated from the formula")


def realise_theta(p: list[fmpq], N: int) -> dict | None:
    """A factor witness x yᵀ (x = e₀) with profile p ∈ Θ in M_N, following Lean: t = √c − √d,
    v = t e₀ + √(1 − t²) e₁, rescaled.  y = (t, r) when t and r = √(1 − t²) are rational
    (Pythagorean), y = (t/r, 1) when t/r is, else y = (±√m, 1) with m = t²/(1 − t²) (entries in
    Q(√m)); None when N = 1 and p is not a vertex.

    >>> realise_theta([fmpq(8, 25), fmpq(8, 25), fmpq(9, 25), fmpq(0)], 2)["y"]
    ['3/5', '4/5']
    """
    from ..exact.rational import fmpq_str

    def sqrt(x: fmpq) -> fmpq | None:
        r, t = x.p.isqrt(), x.q.isqrt()
        return fmpq(r, t) if r * r == x.p and t * t == x.q else None

    t2, sg = p[2] + p[3], _sgn(p[2] - p[3])
    x = [fmpq(1)] + [fmpq(0)] * (N - 1)
    if t2 == 1:
        y = [fmpq(sg)] + [fmpq(0)] * (N - 1)
    elif N == 1:
        return None
    else:
        t, r = sqrt(t2), sqrt(1 - t2)
        m = t2 / (1 - t2)
        y = [fmpq(0), fmpq(1)] + [fmpq(0)] * (N - 2)
        if t is not None and r is not None:
            y[0], y[1] = sg * t, r
        elif sqrt(m) is not None:
            y[0] = sg * sqrt(m)
        else:
            zero = ["0"] * N
            ys = list(zero)
            ys[0] = str(sg)
            return {"kind": "factor", "of": "theta", "x": [fmpq_str(a) for a in x],
                    "y": [fmpq_str(b) for b in y], "sqrt": fmpq_str(m), "x_sqrt": zero, "y_sqrt": ys}
    return {"kind": "factor", "of": "theta", "x": [fmpq_str(a) for a in x], "y": [fmpq_str(b) for b in y]}


def _realises(w: dict, p: list[fmpq]) -> bool:
    """Whether the factor witness x yᵀ has rank one and profile p: a rational L through
    compute_profile, an L over Q(√m) through sympy's exact eigenvalues of its 2 × 2 block (the
    rest of L is zero, which adds zeros to α and β)."""
    from ..exact.rational import parse_rational

    x = [parse_rational(a) for a in w["x"]]
    y = [parse_rational(b) for b in w["y"]]
    if "sqrt" not in w:
        L = fmpq_mat([[a * b for b in y] for a in x])
        return rank(L) == 1 and _profile_equals(None, L, p, False) == (True, "exact")
    import sympy

    r = sympy.sqrt(sympy.Rational(w["sqrt"]))
    Q = lambda z: sympy.Rational(str(z))  # noqa: E731
    ys = [Q(b) + Q(c) * r for b, c in zip(w["y"], w["y_sqrt"])]
    if any(Q(c) != 0 for c in w["x_sqrt"]) or x[0] != 1 or any(x[1:]) or any(ys[2:]):
        return False
    L = sympy.Matrix([[ys[0], ys[1]], [0, 0]])
    S, T = (L + L.T) / 2, (L - L.T) / 2
    fL = sum(e ** 2 for e in L)
    ev = [sympy.nsimplify(v) for v in S.eigenvals(multiple=True)]
    al = sorted((v for v in ev if v.is_positive), reverse=True) + [0, 0]
    be = sorted((-v for v in ev if v.is_negative), reverse=True) + [0, 0]
    got = [sum(e ** 2 for e in T) / fL, 2 * al[0] * be[0] / fL,
           (al[0] - be[0]) ** 2 / fL if al[0] > be[0] else 0, (be[0] - al[0]) ** 2 / fL if be[0] > al[0] else 0]
    return all(sympy.simplify(g - Q(t)) == 0 for g, t in zip(got, p))


@declaration_check("profiles_rank_one_eq_Theta", ("matrix", "theta_point"))
def _locus(s: Subject) -> DeclResult:
    """{π(L) : rank L = 1} = Θ at one point.  ⊆ on a rank-one matrix: π(L) ∈ Θ.  ⊇ on a point p of
    Θ: L = x yᵀ (factor witness, entries possibly in Q(√m)) of rank one with π(L) = p; for N = 1
    and a ≠ 0 no rank-one L exists (a 1 × 1 matrix is symmetric: a = 0)."""
    if s.kind == "matrix":
        if _rank(s) != 1:
            raise NotApplicable("rank L ≠ 1")
        p = compute_profile(s.inp.L, "lean")
        got = [c.exact for c in p.coords()]
        if None in got:
            raise ArithmeticError("exact profile of a rank-one matrix not computed")
        return DeclResult(in_theta(got))
    p = list(s.inp.p)
    if not in_theta(p):
        raise NotApplicable("the ⊇ direction is evaluated at points of Θ")
    w = realise_theta(p, s.inp.N)
    if w is None:
        return DeclResult(False, reason="N = 1: every 1 × 1 matrix is symmetric, a = 0 ≠ p.a")
    s.witness(w)
    return DeclResult(_realises(w, p))


# (here, at the end, so that the line ranges the conformance sheet names above stay put)
def _head_coord_once(s: Subject, k: str) -> DeclResult:
    """:func:`_head_coord` once per coordinate and statement: ``profile`` states the four again
    (memoised; the cells witness it asks for is asked for again on every use)."""
    return s.memo(("head_coord", k), lambda: _head_coord(s, k))
