"""§3 Profiles: Def 6, Theorem 4 (simplex faces), Lemma 4 (profile_scale),
profile_conj, Prop 4 (rank-one locus).

Lean: ``Appendices.profileA..D`` and helpers (Def 6), file SimplexFaces
(Theorem 4), ``Appendices.MainText.profile_scale`` (Lemma 4),
``profile_conj``, ``profile_rank_one`` / ``profiles_rank_one_eq_Theta``
(Prop 4).  Conclusions follow Lean's conventions (x/0 = 0, lists padded to N)
so that the hypothesis probes can evaluate them on inputs that violate a
hypothesis.
"""

from __future__ import annotations

from flint import arb, arb_mat, ctx, fmpq, fmpq_mat

from ..exact.algebraic import RealAlgebraic
from ..exact.inertia import inertia_ldlt
from ..exact.matrix import frob_sq, identity, is_antisymmetric, is_symmetric, rank, require_square, sym_part, to_str_rows
from ..math.profile import Profile, compute_profile, profile_lean_convention, spectral_data
from .common import L_NE_ZERO, inertia_both, q, result
from .registry import Claim, Hypothesis, Result, register

SEC = "§3 Profiles"


# --------------------------------------------------------------------------
# witnesses


def eigen_witness(S: fmpq_mat, name: str = "S") -> dict:
    """Exact nonzero spectrum of S: roots of charpoly(D·S) as isolating
    intervals (polynomial, root index, multiplicity)."""
    sd = spectral_data(S)
    roots = []
    for r in sd.pos + sd.neg:
        roots.append(r)
    seen = {}
    for r in roots:
        key = (r.factor, r.index)
        seen[key] = seen.get(key, 0) + 1
    out = []
    for (fi, k), mult in seen.items():
        v = next(r.value for r in roots if (r.factor, r.index) == (fi, k))
        out.append(dict(v.to_json(), multiplicity=mult))
    return {"kind": "eigenvalues", "matrix": name, "scale": str(sd.D), "roots": out, "zero_multiplicity": sd.n_zero}


def profile_witness(p: Profile) -> dict:
    return {"kind": "profile", "matrix": "L", "padding": p.padding, "values": p.to_json(12), "order": p.order}


def _profile_values(p: Profile) -> dict:
    return p.to_json(20)


# --------------------------------------------------------------------------
# Theorem 4


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
    S = H − P): H symmetric with spectrum symmetric about 0, P ⪰ 0, H, P
    commuting with S and each other, ‖P‖² = c‖L‖² (resp. d‖L‖²).

    Returns (evidence, witness, checks): evidence ``exact`` when every
    eigenvalue of S is rational (H, P rational, all checks exact),
    ``certified`` when H, P are arb enclosures built from spectral
    projectors, ``undecided`` when an eigenspace of an irrational eigenvalue
    would have to be split (not implemented)."""
    S = sym_part(L)
    N = S.nrows()
    sd = spectral_data(S)
    m = len(p.alpha)
    # eigenvalues of S (unscaled) with positions
    pos = [r.value.scale(fmpq(1, sd.D)) for r in sd.pos]
    neg = [(-r.value).scale(fmpq(1, sd.D)) for r in sd.neg]
    all_rational = all(f.degree() == 1 for f in sd.factors)
    coeff_P, coeff_H = [], []  # lists of (eigen-direction key, coefficient)
    if all_rational:
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
    # certified route: spectral projectors of distinct eigenvalues; needs every
    # copy of a repeated eigenvalue to be paired with equal partners
    partner = {}
    for j in range(m):
        a = sd.pos[j] if j < len(sd.pos) else None
        b = sd.neg[j] if j < len(sd.neg) else None
        for r, other in ((a, b), (b, a)):
            if r is None:
                continue
            key = (r.factor, r.index)
            okey = None if other is None else (other.factor, other.index)
            if key in partner and partner[key] != okey:
                return "undecided", {"kind": "fiber_decomposition", "face": face, "exact": False,
                                     "reason": "an irrational eigenspace would have to be split"}, {}
            partner[key] = okey
    prec = 200
    old = ctx.prec
    ctx.prec = prec
    try:
        distinct = {}
        for r in sd.pos + sd.neg:
            distinct[(r.factor, r.index)] = r.value.scale(fmpq(1, sd.D)).to_arb(prec)
        if sd.n_zero:
            distinct[("zero",)] = arb(0)
        Sa = arb_mat(S.tolist())
        I = arb_mat(N, N)
        for i in range(N):
            I[i, i] = 1
        E = {}
        for k, lam in distinct.items():
            M = I
            for k2, mu in distinct.items():
                if k2 != k:
                    M = M * (Sa - I * mu) * (1 / (lam - mu))
            E[k] = M
        H = arb_mat(N, N)
        P = arb_mat(N, N)
        # build from distinct eigenvalues (each eigenspace used whole)
        for key, okey in partner.items():
            lam = distinct[key]
            mu = distinct[okey] if okey is not None else arb(0)
            is_pos = any((r.factor, r.index) == key for r in sd.pos)
            if face == "d":
                if is_pos:
                    H += E[key] * (-mu)
                    P += E[key] * (lam + mu)
                else:
                    H += E[key] * lam
            else:
                if is_pos:
                    H += E[key] * lam
                else:
                    H += E[key] * (-mu)
                    P += E[key] * (-(lam + mu))
        sign = 1 if face == "d" else -1
        R = Sa - H - P * sign
        zero_ok = all(R[i, j].contains(0) for i in range(N) for j in range(N))
        comm = [Sa * H - H * Sa, Sa * P - P * Sa, H * P - P * H]
        comm_ok = all(C[i, j].contains(0) for C in comm for i in range(N) for j in range(N))
        target = (p.c if face == "d" else p.d).enclosure * arb(frob_sq(L))
        normP = sum((P[i, j] * P[i, j] for i in range(N) for j in range(N)), arb(0))
        checks = {
            "S = H ± P (enclosure contains 0)": zero_ok,
            "commutators contain 0": comm_ok,
            "‖P‖² enclosure meets the profile's": normP.overlaps(target),
            "P ⪰ 0 and H spectrum symmetric (by construction from exact eigenvalue pairing)": True,
        }
        from ..exact.intervals import arb_bounds
        w = {"kind": "fiber_decomposition", "face": face, "exact": False, "precision_bits": prec,
             "H": [[list(arb_bounds(H[i, j], 30)) for j in range(N)] for i in range(N)],
             "P": [[list(arb_bounds(P[i, j], 30)) for j in range(N)] for i in range(N)],
             "checks": checks}
        return "certified", w, checks
    finally:
        ctx.prec = old


# --------------------------------------------------------------------------
# Lemma 4


def _lemma4(inp) -> Result:
    L = inp.L
    S = sym_part(L)
    fL, fS = frob_sq(L), frob_sq(S)
    checks = {}
    wit = []
    vals = {}
    if fS == 0:
        # S = 0 (L antisymmetric or 0): Lean gives π(S) = (0,0,0,0), so a(S) = 0,
        # and the scaling identity reads (b,c,d)(L) = (1 − a)·0
        if fL == 0:
            return result(True, "exact", [], {"note": "L = 0"}, convention="lean")
        pL = compute_profile(L, "lean")
        checks["a(S) = 0"] = True  # π(0) = (0,0,0,0) with Lean's x/0 = 0
        checks["(b,c,d)(L) = (1−a)(b,c,d)(S) with π(S) = 0"] = all(c.is_zero for c in (pL.b, pL.c, pL.d))
        checks["1 − a = ‖S‖²/‖L‖²"] = (1 - pL.a.exact) == fS / fL
        ok = all(checks.values())
        return result(ok, "exact", wit, {"checks": checks}, "failed: " + "; ".join(k for k, v in checks.items() if not v),
                      convention="lean")
    pL = compute_profile(L, "lean")
    pS = compute_profile(S, "lean")
    checks["a(S) = 0"] = pS.a.exact == 0
    one_minus_a = 1 - pL.a.exact
    checks["1 − a = ‖S‖²/‖L‖²"] = one_minus_a == fS / fL
    evidence = "exact"
    for cL, cS in zip((pL.b, pL.c, pL.d), (pS.b, pS.c, pS.d)):
        if cL.value is not None and cS.value is not None:
            if cS.is_zero:
                checks[f"{cL.name}(L) = (1−a)·{cS.name}(S)"] = cL.is_zero
            else:
                checks[f"{cL.name}(L) = (1−a)·{cS.name}(S)"] = cL.value == cS.value.scale(one_minus_a)
        else:
            # S and sym_part(S) = S have the same α, β (computed exactly); the
            # coordinates share numerators and differ by ‖S‖²/‖L‖² exactly
            checks[f"{cL.name}(L) = (1−a)·{cS.name}(S) (same exact α, β)"] = (
                pL.order == pS.order and cL.is_zero == cS.is_zero
            )
    wit = [profile_witness(pL), dict(profile_witness(pS), matrix="S")]
    vals = {"profile_L": pL.to_json(20), "profile_S": pS.to_json(20), "checks": checks}
    ok = all(checks.values())
    return result(ok, evidence, wit, vals, "failed: " + "; ".join(k for k, v in checks.items() if not v), convention="lean")


# --------------------------------------------------------------------------
# profile_conj


def _profile_conj(inp) -> Result:
    """π(UᵀLU) = π(L) (Lean conventions, π(0) = 0).  Decided exactly: by
    comparing exact coordinate values when they are available, otherwise by a
    sufficient exact condition (equal characteristic polynomials of the
    symmetric parts and equal ‖·‖², ‖skew‖²), otherwise by disjoint
    certified enclosures (fails) — else undecided."""
    L, U = inp.L, inp.U
    C = U.transpose() * L * U
    S, SC = sym_part(L), sym_part(C)
    same_spectrum = S.charpoly() == SC.charpoly()
    same_norms = frob_sq(C) == frob_sq(L) and frob_sq(C - C.transpose()) == frob_sq(L - L.transpose())
    # a sufficient condition for π(UᵀLU) = π(L), recorded as facts (true or
    # false); the verdict rests on the profile comparison below
    wit = [{"kind": "identity", "matrix": "UtLU",
            "charpoly_S": [q(c) for c in S.charpoly().coeffs()],
            "charpoly_UtSU": [q(c) for c in SC.charpoly().coeffs()],
            "checks": {"equal charpolys of the symmetric parts": same_spectrum, "equal norms": same_norms}}]
    vals: dict = {}
    zL, zC = frob_sq(L) == 0, frob_sq(C) == 0
    if zL or zC:
        ok = zL and zC
        return result(ok, "exact", wit, {"pi_L_zero": zL, "pi_UtLU_zero": zC},
                      "one of π(L), π(UᵀLU) is (0,0,0,0) and the other is not", convention="lean")
    p1 = compute_profile(L, "lean")
    p2 = compute_profile(C, "lean")
    vals = {"profile_L": p1.to_json(20), "profile_UtLU": p2.to_json(20)}
    checks: dict = {}
    undecided = []
    evidence = "exact"
    for c1, c2 in zip(p1.coords(), p2.coords()):
        key = f"{c1.name}(UᵀLU) = {c1.name}(L)"
        if c1.value is not None and c2.value is not None:
            checks[key] = c1.value == c2.value
        elif same_spectrum and same_norms:
            checks[key + " (equal spectra and norms)"] = True
        elif not c1.enclosure.overlaps(c2.enclosure):
            checks[key] = False
            evidence = "certified"
        else:
            undecided.append(c1.name)
    vals["checks"] = checks
    ok = all(checks.values())
    if ok and undecided:
        return Result("undecided", "certified", {"witnesses": wit}, vals, "lean",
                      "enclosures of " + ", ".join(undecided) + " overlap and exact values were not computed")
    return result(ok, evidence, wit, vals, "failed: " + "; ".join(k for k, v in checks.items() if not v),
                  convention="lean")


def _orthogonal(inp) -> bool:
    U = inp.U
    return U.transpose() * U == identity(U.nrows())


# --------------------------------------------------------------------------
# Prop 4


def theta_contains(a: fmpq, b: fmpq, c: fmpq, d: fmpq) -> bool:
    """Θ = {a = b, cd = 0} ∩ Δ_3 (exact)."""
    return a == b and c * d == 0 and min(a, b, c, d) >= 0 and a + b + c + d == 1


def rank_one_formula(L: fmpq_mat) -> tuple[fmpq, fmpq, fmpq, fmpq]:
    """Prop 4: for rank-one L, π(L) = ((1−t²)/2, (1−t²)/2, t_+², t_-²) with
    t = tr(L)/‖L‖ — rational because t² = tr(L)²/‖L‖² (exact)."""
    tr = sum((L[i, i] for i in range(L.nrows())), fmpq(0))
    t2 = tr * tr / frob_sq(L)
    return ((1 - t2) / 2, (1 - t2) / 2, t2 if tr > 0 else fmpq(0), t2 if tr < 0 else fmpq(0))


def _prop4(inp) -> Result:
    L = inp.L
    N = L.nrows()
    if frob_sq(L) == 0:
        return Result("fails", "exact", {"witnesses": []}, {}, "lean", "L = 0 is not rank one: π(0) = (0,0,0,0) ∉ Θ")
    p = compute_profile(L, "lean")
    pred = rank_one_formula(L)
    got = [c.exact for c in p.coords()]
    checks = {
        "π(L) = ((1−t²)/2, (1−t²)/2, t₊², t₋²)": got == list(pred),
        "π(L) ∈ Θ": all(g is not None for g in got) and theta_contains(*got),
    }
    # set equality {π(L) : rank L = 1, L ∈ M_N} = Θ, tested at the point t = 0 of Θ,
    # (1/2, 1/2, 0, 0): realised by e_1 e_2ᵀ when N ≥ 2; for N = 1 every rank-one
    # L = [x] has π = (0,0,1,0) or (0,0,0,1) (sign of x), so the point is missed.
    if N >= 2:
        E = fmpq_mat(N, N)
        E[0, 1] = 1
        pe = compute_profile(E, "lean")
        realised = [c.exact for c in pe.coords()] == [fmpq(1, 2), fmpq(1, 2), 0, 0]
        checks["Θ ∋ (1/2,1/2,0,0) is realised by e₁e₂ᵀ (set equality)"] = realised
    else:
        checks["Θ ∋ (1/2,1/2,0,0) is realised in dimension N (set equality)"] = False
    vals = {"profile": p.to_json(20), "predicted": [q(x) for x in pred], "N": N, "checks": checks}
    wit = [profile_witness(p), {"kind": "identity", "matrix": "L", "checks": checks,
                                "predicted": [q(x) for x in pred]}]
    ok = all(checks.values())
    return result(ok, "exact", wit, vals, "failed: " + "; ".join(k for k, v in checks.items() if not v), convention="lean")


# --------------------------------------------------------------------------



register(Claim(
    id="profile_scale", label="Lemma 4", section=SEC,
    lean_decls=("Appendices.MainText.profileA_symPart", "Appendices.MainText.one_sub_profileA",
                "Appendices.MainText.profile_scale"),
    statement="a(S) = 0; L ≠ 0 ⇒ 1 − a = ‖S‖²/‖L‖²; S ≠ 0 ⇒ (b,c,d)(L) = (1 − a(L))·(b,c,d)(S).",
    hypotheses=(Hypothesis("S_ne_zero", "S = sym_part(L) ≠ 0", lambda inp: frob_sq(sym_part(inp.L)) != 0),),
    input_kind="matrix", conclusion=_lemma4,
))

register(Claim(
    id="profile_conj", label="profile_conj", section=SEC,
    lean_decls=("Appendices.MainText.profile_conj", "Appendices.MainText.exists_orthogonal_cols"),
    statement="π(UᵀLU) = π(L) for orthogonal U.",
    hypotheses=(Hypothesis("U_orthogonal", "UᵀU = I", _orthogonal),),
    input_kind="orthogonal", conclusion=_profile_conj,
))

register(Claim(
    id="profile_rank_one", label="Proposition 4", section=SEC,
    lean_decls=("Appendices.MainText.Theta", "Appendices.MainText.profile_smul_vecMulVec",
                "Appendices.MainText.exists_smul_vecMulVec_of_rank_eq_one", "Appendices.MainText.profile_rank_one",
                "Appendices.MainText.profiles_rank_one_eq_Theta"),
    statement="rank L = 1 ⇒ π(L) = ((1−t²)/2,(1−t²)/2,t₊²,t₋²), t = tr L/‖L‖; for N ≥ 2 the rank-one profiles are exactly Θ.",
    hypotheses=(Hypothesis("rank_one", "rank L = 1", lambda inp: rank(inp.L) == 1),
                Hypothesis("N_ge_2", "N ≥ 2", lambda inp: inp.L.nrows() >= 2)),
    input_kind="matrix", conclusion=_prop4, aliases=("rank-one locus", "profiles_rank_one_eq_Theta"),
))


# ==========================================================================
# Definition 6 and Theorem 4, one check per Lean declaration (format 2)
#
# The producer's route: exact eigenvalues of S as RealAlgebraic numbers
# (math/profile.py), exact values of b, c, d through resolvents when the orbit
# is small, certified arb enclosures always; inertia of S by LDLᵀ (a second,
# independent method) for the semidefiniteness sides.  A profile coordinate is
# stated exact when it is zero or every α_j, β_j is rational (the kernel's
# rule), otherwise as an enclosure (and its exact algebraic value, when known,
# goes to the certificate's display).

from . import values as V  # noqa: E402
from .common import spectrum_witness  # noqa: E402
from .registry import DeclResult, NotApplicable, Subject, declaration_check, predicate  # noqa: E402

PROFILE_KINDS = ("matrix", "matrix_fiber")


def _prof(s: Subject) -> Profile | None:
    """π(L) with Lean's padding (None for L = 0: Lean's x/0 = 0 gives (0, 0, 0, 0));
    records the spectrum witness of S."""
    def build():
        s.witness(spectrum_witness(sym_part(s.inp.L), "S"))
        return None if frob_sq(s.inp.L) == 0 else compute_profile(s.inp.L, "lean")

    return s.memo("profile", build)


def _rational_lists(p: Profile) -> bool:
    return all(x.is_rational for x in p.alpha + p.beta)


def _coord_value(p: Profile | None, k: str) -> dict:
    if p is None:
        return V.exact(0)
    c = getattr(p, k)
    if k == "a" or c.is_zero or _rational_lists(p):
        return V.exact(c.exact if c.exact is not None else 0)
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


@declaration_check("sortDesc", PROFILE_KINDS)
def _sortDesc(s: Subject) -> DeclResult:
    """sortDesc of the eigenvalue vector of S: antitone, and a rearrangement (same multiset)."""
    from ..exact.algebraic import eigenvalues_symmetric

    ev = eigenvalues_symmetric(sym_part(s.inp.L))
    flat = [x for x, m in ev for _ in range(m)]
    _prof(s)
    ok = all(flat[i].cmp(flat[i + 1]) >= 0 for i in range(len(flat) - 1)) and len(flat) == s.inp.N
    return DeclResult(ok, value=V.listv([V.real(x) for x in flat]))


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


for _k in "ABCD":
    declaration_check(f"profile{_k}", PROFILE_KINDS)(lambda s, k=_k.lower(): _coord_check(s, k))


@declaration_check("profile", PROFILE_KINDS)
def _profile(s: Subject) -> DeclResult:
    """π(L) = (profileA L, profileB L, profileC L, profileD L)."""
    p = _prof(s)
    vals = [_coord_value(p, k) for k in "abcd"]
    ev = "exact" if all("exact" in v for v in vals) else "certified"
    return DeclResult(True, ev, V.listv(vals))


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


def _fiber(s: Subject, face: str, commute: bool) -> DeclResult:
    """The decomposition faces.  On a ``matrix_fiber`` input the given H, P are checked
    (S = H ± P, symmetric spectrum of H, P ⪰ 0 by LDLᵀ) and the conclusion is that the
    face coordinate is 0; on a ``matrix`` input with the face coordinate 0, H and P are
    built (rational eigenvalues only) and carried as the ``fiber`` witness."""
    p = _prof(s)
    L, S = s.inp.L, sym_part(s.inp.L)
    if s.kind == "matrix_fiber":
        if s.inp.face != face:
            raise NotApplicable("the given decomposition is for the other face")
        H, P = s.inp.H, s.inp.P
    else:
        if not _is(p, face, False):
            raise NotApplicable(f"{face} ≠ 0 and no candidate decomposition is given")
        if not all(f.degree() == 1 for f in spectral_data(S).factors):
            raise NotApplicable("S has irrational eigenvalues: H and P are not rational, no exact witness")
        if p is None:  # L = 0: S = 0 = 0 ± 0
            H = P = fmpq_mat(s.inp.N, s.inp.N)
            w = {"H": to_str_rows(H), "P": to_str_rows(P)}
        else:
            ev, w, checks = face_decomposition(L, p, face)
            H, P = fmpq_mat(w["H"]), fmpq_mat(w["P"])
        s.witness({"kind": "fiber", "of": face, "H": w["H"], "P": w["P"]})
    sign = 1 if face == "d" else -1
    cp = H.charpoly().coeffs()
    neg = [c if k % 2 == 0 else -c for k, c in enumerate(cp)]
    props = (S == H + P * sign and is_symmetric(H) and is_symmetric(P)
             and (neg == list(cp) or neg == [-c for c in cp]) and inertia_ldlt(P).n_neg == 0)
    if not props:
        raise NotApplicable(f"the given H, P do not satisfy S = H {'+' if sign > 0 else '−'} P with the "
                            "required properties")
    if s.kind == "matrix_fiber" and not commute:
        return DeclResult(_is(p, face, False))
    if commute:
        other = "c" if face == "d" else "d"
        target = fmpq(0) if p is None else getattr(p, other).exact
        comm = S * H == H * S and S * P == P * S and H * P == P * H
        return DeclResult(comm and target is not None and frob_sq(P) == target * frob_sq(L))
    return DeclResult(True)


declaration_check("profileD_eq_zero_iff_decomp", PROFILE_KINDS)(lambda s: _fiber(s, "d", False))
declaration_check("profileC_eq_zero_iff_decomp", PROFILE_KINDS)(lambda s: _fiber(s, "c", False))
declaration_check("profileD_eq_zero_decomp_commute", ("matrix",))(lambda s: _fiber(s, "d", True))
declaration_check("profileC_eq_zero_decomp_commute", ("matrix",))(lambda s: _fiber(s, "c", True))
