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

from flint import arb, arb_mat, ctx, fmpq, fmpq_mat, fmpz_mat

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
# Def 6: the two padding conventions agree


def _same(x: RealAlgebraic | None, y: RealAlgebraic | None) -> bool | None:
    if x is None or y is None:
        return None
    return x == y


def _def6(inp) -> Result:
    L = inp.L
    if frob_sq(L) == 0:
        # Lean: π(0) = (0,0,0,0); blueprint: undefined — they cannot agree
        return Result("fails", "exact", {"witnesses": []}, {"lean": ["0", "0", "0", "0"]}, "lean",
                      "L = 0: the blueprint profile is undefined while Lean gives (0,0,0,0)")
    pb = compute_profile(L, "blueprint")
    pl = compute_profile(L, "lean")
    same = {}
    undecided = []
    for cb, cl in zip(pb.coords(), pl.coords()):
        s = _same(cb.value, cl.value)
        if s is None:
            # exact values unavailable: padding only appends pairs (0, 0), which add
            # zero terms; the nonzero index sets are compared exactly instead
            s = cb.is_zero == cl.is_zero and pb.order == pl.order[: len(pb.order)] and all(
                o == 0 for o in pl.order[len(pb.order):]
            )
        same[cb.name] = s
    ok = all(same.values())
    w = [eigen_witness(sym_part(L)), profile_witness(pb), profile_witness(pl)]
    vals = {"blueprint": _profile_values(pb), "lean_agrees": same}
    return result(ok, "exact", w, vals, "paddings disagree on " + ",".join(k for k, v in same.items() if not v),
                  convention="blueprint and lean")


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


def _theorem4(inp) -> Result:
    L = inp.L
    N = require_square(L)
    if frob_sq(L) == 0:
        # Lean: every coordinate is 0/0 = 0, so the sum is 0, not 1
        return Result("fails", "exact", {"witnesses": [{"kind": "identity", "matrix": "L",
                      "values": {"a": "0", "b": "0", "c": "0", "d": "0"}, "checks": {"sum = 1": False}}]},
                      {"a": "0", "b": "0", "c": "0", "d": "0", "sum": "0"}, "lean",
                      "L = 0: with x/0 = 0 the profile is (0,0,0,0), whose sum is 0")
    p = compute_profile(L, "lean")
    S = sym_part(L)
    inn, inn_w = inertia_both(S, "S")
    fL, fS = frob_sq(L), frob_sq(S)
    checks: dict[str, bool] = {}
    # nonnegativity: a rational; b, c, d sums of positive terms (exact signs)
    checks["a ≥ 0"] = p.a.exact >= 0
    checks["b ≥ 0"] = all(x.sign() >= 0 for x in p.alpha + p.beta)
    checks["c ≥ 0"] = checks["d ≥ 0"] = True  # sums of squares of real numbers
    # sum = 1: b + c + d = Σα² + Σβ² (termwise 2xy + (x−y)² = x² + y²) = tr(S²) = ‖S‖²,
    # all over ‖L‖²; with a = ‖T‖²/‖L‖² this is ‖S‖² + ‖T‖² = ‖L‖² (exact)
    exact_vals = [c.exact for c in p.coords()]
    if all(v is not None for v in exact_vals):
        checks["a + b + c + d = 1 (exact values)"] = sum(exact_vals, fmpq(0)) == 1
    checks["(‖S‖² + ‖T‖²)/‖L‖² = 1 (power-sum form)"] = (fS + p.frob_T) == fL
    # fibers
    f = p.fibers()
    psd = inn.n_neg == 0
    nsd = inn.n_pos == 0
    ge = all(o >= 0 for o in p.order)
    le = all(o <= 0 for o in p.order)
    checks["a = 0 ⇔ L symmetric"] = f["a=0"] == is_symmetric(L)
    checks["a = 1 ⇔ L antisymmetric"] = f["a=1"] == is_antisymmetric(L)
    checks["b = 0 ⇔ S semidefinite"] = f["b=0"] == (psd or nsd)
    checks["b = 1 ⇔ L symmetric and α = β"] = f["b=1"] == (is_symmetric(L) and all(o == 0 for o in p.order))
    checks["d = 0 ⇔ α_j ≥ β_j ∀j"] = f["d=0"] == ge
    checks["d = 1 ⇔ L symmetric negative semidefinite"] = f["d=1"] == (is_symmetric(L) and nsd)
    checks["c = 0 ⇔ β_j ≥ α_j ∀j"] = f["c=0"] == le
    checks["c = 1 ⇔ L symmetric positive semidefinite"] = f["c=1"] == (is_symmetric(L) and psd)
    # exact values, where known, must agree with the structural face decisions
    for c in p.coords():
        if c.value is not None:
            checks[f"{c.name} exact value consistent with face"] = (c.value.sign() == 0) == c.is_zero
    witnesses = [eigen_witness(S)] + inn_w + [profile_witness(p)]
    evidence = "exact"
    undecided = []
    for face in ("d", "c"):
        if f[f"{face}=0"]:
            ev, w, ch = face_decomposition(L, p, face)
            witnesses.append(w)
            if ev == "undecided":
                undecided.append(w["reason"])
            else:
                if ev == "certified":
                    evidence = "certified"
                for k, v in ch.items():
                    checks[f"{face}=0 decomposition: {k}"] = v
    values = {"profile": p.to_json(20), "checks": checks}
    ok = all(checks.values())
    if ok and undecided:
        return Result("undecided", evidence, {"witnesses": witnesses}, values, "lean",
                      "; ".join(undecided))
    return result(ok, evidence, witnesses, values,
                  "failed: " + "; ".join(k for k, v in checks.items() if not v), convention="lean")


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
    id="profile", label="Definition 6", section=SEC,
    lean_decls=("Appendices.sortDesc", "Appendices.alphaList", "Appendices.betaList", "Appendices.profileA",
                "Appendices.profileB", "Appendices.profileC", "Appendices.profileD", "Appendices.MainText.profile"),
    statement="π(L) = (a,b,c,d): the blueprint's equal-length padding and Lean's length-N padding give the same value.",
    hypotheses=(L_NE_ZERO,), input_kind="matrix", conclusion=_def6, aliases=("Def 6", "profileA"),
))

register(Claim(
    id="profile_sum_eq_one", label="Theorem 4", section=SEC,
    lean_decls=tuple("Appendices." + n for n in (
        "profileA_nonneg", "profileB_nonneg", "profileC_nonneg", "profileD_nonneg", "profile_sum_eq_one",
        "profileA_eq_zero_iff", "profileA_eq_one_iff", "profileB_eq_zero_iff", "profileB_eq_one_iff",
        "profileD_eq_zero_iff_forall", "profileD_eq_zero_iff_decomp", "profileD_eq_zero_decomp_commute",
        "profileD_eq_one_iff", "profileC_eq_zero_iff_forall", "profileC_eq_zero_iff_decomp",
        "profileC_eq_zero_decomp_commute", "profileC_eq_one_iff")),
    statement="For L ≠ 0: a,b,c,d ≥ 0, a+b+c+d = 1, and the eight face/vertex fibers (with S = H ± P on d = 0 / c = 0).",
    hypotheses=(L_NE_ZERO,), input_kind="matrix", conclusion=_theorem4, aliases=("simplex faces",),
))

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
