"""Certify one attention head: Theorem 3's signature, Lemma 10's spectrum,
Def 6's profile, Lemma 2's pairing quantities -- from the exact weights.

Per head (independent, picklable, run in a process pool by the CLI):

* exact rank of M = [W_K; W_Q] with a nonzero 2n x 2n minor mod a stated
  prime (Theorem 3's hypothesis, ``stacked`` surjective);
* the signature of S: exactly, by the characteristic polynomial of ½JG
  (2n x 2n, Lemma 10) and Descartes' rule of signs (all roots are real);
  it must agree with the counts read off the certified enclosures; on
  request also by the direct N x N route (charpoly of S itself);
* the 2n nonzero eigenvalues of S as certified enclosures
  (:mod:`qkverify.heads.enclosure`);
* a exactly: ‖L‖² = tr((W_K W_Kᵀ)(W_Q W_Qᵀ)) and tr(L²) = tr((W_K W_Qᵀ)²) are
  traces of n x n blocks of G (integers after scaling);
* b, c, d as certified intervals (relative width ≤ 10^-digits), exact face
  decisions b = 0 (from the signature), c = 0 and d = 0 (α_j vs β_j decided
  from enclosures, refined where they touch, then by exact real algebraic
  comparison of the roots of the charpoly, else ``undecided``);
* symmetric energy 1 − a against the random baseline (N+1)/(2N) (Prop 5),
  pairing score 𝒫, ρ, the bound 1 − |1−ρ|/√(1+ρ²) and its gap (Lemma 2);
* the authors' float64 pipeline beside it, with a flag where it decides a
  count or a face differently.

Scales: M = Z·2^e (Z integer), G_int = Z Zᵀ; eigenvalues of S are 2^{2e}
times those of ½J·G_int and ‖L‖² = 2^{4e}·frob_L -- every profile
coordinate is a ratio, so the power of two cancels exactly.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from flint import arb, ctx, fmpq, fmpz_mat

from ..exact.inertia import inertia_from_charpoly
from ..exact.intervals import arb_bounds
from ..exact.rational import fmpq_str
from ..models.base import HeadRecord
from .enclosure import Enclosure, EnclosureFailed, enclose_arb, enclose_exact_products, enclose_fast
from .exact_gram import gram_data, rank_witness
from .float_pipeline import authors_pipeline

PROFILE_PREC = 192


@dataclass
class HeadOptions:
    """Per-head settings (picklable).

    digits      -- target relative width 10^-digits of b, c, d (default 9)
    enclosure   -- "fast" (float64 midpoint-radius) or "arb"
    charpoly    -- exact signature by charpoly(½JG) + Descartes
    direct      -- also the direct N x N route (charpoly of S), slow
    compare_float -- run the authors' float64 pipeline and flag disagreements
    full_witness  -- include full charpoly coefficients in the witness
    cut         -- the float pipeline's relative eigenvalue cut
    witnesses   -- serialise the eigenvalue enclosures into the certificate
                   witness (off only for timing the decisions alone)
    """

    digits: int = 9
    enclosure: str = "fast"
    charpoly: bool = True
    direct: bool = False
    compare_float: bool = True
    full_witness: bool = False
    cut: float = 1e-9
    witnesses: bool = True


# ---------------------------------------------------------------------------
# small helpers


def _dec(x: arb, places: int) -> tuple[str, str]:
    return arb_bounds(x, places)


def _qfloat(q: fmpq) -> float:
    """Nearest float to an exact rational (display only)."""
    from fractions import Fraction

    return float(Fraction(int(q.p), int(q.q)))


def _mid(x: arb) -> float:
    return float(x.mid())


def _rel_width(x: arb) -> float:
    m = abs(float(x.mid()))
    r = float(x.rad())
    if r == 0:
        return 0.0
    return math.inf if m == 0 else 2 * r / m


def _cmp(x: arb, y: arb) -> int | None:
    """+1 / −1 when the balls are separated, None when they touch."""
    if x > y:
        return 1
    if x < y:
        return -1
    return None


def _bits_for(digits: int) -> int:
    return int(math.ceil((digits + 4) * math.log2(10)))


def _charpoly_witness(cp, n2: int, e: int, full: bool) -> tuple[object, dict]:
    """Exact inertia of ½JG from charpoly(J·G_int) (roots = 2^{1−2e}·spectrum of ½JG,
    a positive factor) and a compact witness."""
    inn = inertia_from_charpoly(cp, n2)
    coeffs = [int(c) for c in cp.coeffs()]
    import hashlib

    text = ",".join(str(c) for c in coeffs)
    w = {
        "kind": "inertia_charpoly",
        "matrix": "half_JG",
        "scale": f"2^{1 - 2 * e}",
        "scale_note": "charpoly of J·(Z Zᵀ) = 2^{1−2e}·(½JG), M = Z·2^e; Descartes' rule applies since ½JG is similar to a symmetric matrix",
        "degree": n2,
        "sign_changes_pos": inn.witness["sign_changes_pos"],
        "sign_changes_neg": inn.witness["sign_changes_neg"],
        "zero_multiplicity": inn.witness["zero_multiplicity"],
        "sign_pattern": "".join("+" if c > 0 else "-" if c < 0 else "0" for c in coeffs),
        "charpoly_sha256": hashlib.sha256(text.encode()).hexdigest(),
        "charpoly_sha256_of": "comma-joined decimal ascending coefficients",
        "max_coefficient_bits": max(abs(c).bit_length() for c in coeffs),
        "inertia": inn.to_json(),
    }
    if full:
        w["charpoly"] = [str(c) for c in coeffs]
    return inn, w


def _exact_roots(cp) -> list:
    """Exact eigenvalues of J·G_int (RealAlgebraic, with multiplicity),
    decreasing.  Uses the lead's real-algebraic module."""
    from ..exact.algebraic import real_roots

    out = []
    for r, mult in real_roots(cp):
        out.extend([r] * mult)
    return list(reversed(out))


# ---------------------------------------------------------------------------
# profile from eigenvalue balls


@dataclass
class _Stats:
    alpha: list
    beta: list
    order: list           # +1 / −1 / 0 (exactly equal) / None (undecided)
    b: arb
    c: arb
    d: arb
    pairing: arb
    rho: arb | None
    bound: arb | None
    gap: arb | None


def _stats(eigs: list, frob_L: int, frob_S: fmpq, order_override: dict | None = None) -> _Stats:
    """α, β, b, c, d, 𝒫, ρ, bound, gap from eigenvalue balls of S (any common
    positive scale s with frob_L = s²‖L‖²); eigs must exclude 0."""
    old = ctx.prec
    ctx.prec = PROFILE_PREC
    try:
        pos = [x for x in eigs if x > 0]                 # decreasing
        neg = [-x for x in reversed(eigs) if x < 0]      # |λ| decreasing
        # balls are sorted by midpoint; the sorted true values can still sit in
        # another order inside overlapping balls, so sort by midpoint and rely
        # on each ball containing the value of the same rank (Weyl order).
        m = max(len(pos), len(neg))
        z = arb(0)
        al = pos + [z] * (m - len(pos))
        be = neg + [z] * (m - len(neg))
        order: list = []
        for j in range(m):
            if order_override and j in order_override:
                order.append(order_override[j])
            else:
                order.append(_cmp(al[j], be[j]))
        K = arb(frob_L)
        sb = arb(0)
        sc = arb(0)
        sd = arb(0)
        s2 = arb(0)
        for j in range(m):
            sb += al[j] * be[j]
            diff = al[j] - be[j]
            sq = (diff * diff).nonnegative_part()
            s2 += sq
            o = order[j]
            if o == 1:
                sc += sq
            elif o == -1:
                sd += sq
            elif o is None:
                # undecided sign: (x)_+² and (x)_-² both lie in [0, sq.upper]
                hull = arb(0).union(sq.upper())
                sc += hull
                sd += hull
        b = 2 * sb / K
        c = sc / K
        d = sd / K
        nS = arb(frob_S).sqrt()
        pairing = 1 - s2.nonnegative_part().sqrt() / nS
        na = sum((x * x for x in al), arb(0)).sqrt()
        nb = sum((x * x for x in be), arb(0)).sqrt()
        if pos:
            rho = nb / na
            bound = 1 - abs(1 - rho) / (1 + rho * rho).sqrt()
            gap = bound - pairing
        else:
            rho = bound = gap = None
        return _Stats(al, be, order, b, c, d, pairing, rho, bound, gap)
    finally:
        ctx.prec = old


# ---------------------------------------------------------------------------


def certify_head(rec: HeadRecord, opt: HeadOptions | None = None) -> dict:
    """Certify one head (see module docstring).  Returns a JSON-ready dict:

    ``row``        -- flat table row (strings/numbers), columns as in the CLI
    ``witnesses``  -- certificate witnesses (rank, inertia, enclosure, identity, …)
    ``values``     -- nested values for the certificate
    ``verdict``/``reason`` -- Theorem 3 on this head
    ``seconds``    -- wall time of the certified part (float comparison excluded)

    Raises QKInputError for malformed heads and ArithmeticError if two exact
    routes disagree (a bug).
    """
    opt = opt or HeadOptions()
    t0 = time.perf_counter()
    n, N = rec.n, rec.N
    n2 = 2 * n
    g = gram_data(rec.W_Q, rec.W_K)
    notes: list[str] = []
    witnesses: list[dict] = []
    row: dict = {"model": rec.model, "layer": rec.layer, "head": rec.head, "kv_head": rec.kv_head,
                 "N": N, "n": n}
    places = max(opt.digits + 8, 20)

    # --- rank of M (Theorem 3's hypothesis) ---------------------------------
    rw = rank_witness(g)
    if rw is None:
        from ..exact.matrix import rank_certificate
        from ..exact.rational import ndarray_to_fmpq_mat

        M = ndarray_to_fmpq_mat(np.concatenate([rec.W_K, rec.W_Q]).astype(np.float64), "M")
        rc = rank_certificate(M)
        rank = rc.rank
        rw = dict(rc.to_json(), matrix="M")
    else:
        rank = n2
    witnesses.append(rw)
    row["rank_M"] = rank

    if g.frob_L == 0:
        row.update({"n_pos": 0, "n_neg": 0, "n_zero": N, "notes": "L = 0: no profile (Lean: π(0) = (0,0,0,0))"})
        return {"row": row, "witnesses": witnesses, "values": {}, "verdict": "undecided",
                "reason": "L = 0", "seconds": time.perf_counter() - t0}

    # --- exact signature by charpoly(½JG) ------------------------------------
    cp = None
    inn = None
    if opt.charpoly or rank < n2:
        cp = g.JG_fmpz().charpoly()
        inn, w = _charpoly_witness(cp, n2, g.e, opt.full_witness)
        witnesses.append(w)

    # --- eigenvalue enclosures ----------------------------------------------
    bits = _bits_for(opt.digits)
    enc: Enclosure | None = None
    eigs: list | None = None
    exact_eigs = None
    route = None
    st_loop = None
    widths_ok = False
    if rank == n2:
        attempts = []
        if opt.enclosure == "fast" and opt.digits <= 12:
            attempts.append(("fast", 0, 0))
        if opt.enclosure == "fast" and opt.digits <= 12:
            attempts.append(("exact-products", 160, 0))   # same Y, exact integer products: ~1e-14 relative
        if opt.enclosure == "arb" and opt.digits <= 12:
            attempts.append(("arb", 128, 0))                # ball products, float64 eigenvectors as they are
        attempts += [("arb", max(bits, 60) + 64, 6), ("arb", 2 * max(bits, 60) + 104, 8)]
        for kind, prec_, steps_ in attempts:
            try:
                if kind == "fast":
                    enc = enclose_fast(None, g.n, g.gram_float())
                elif kind == "exact-products":
                    enc = enclose_exact_products(g.G_fmpz(), g.n, g.gram_float(), prec=prec_)
                else:
                    enc = enclose_arb(g.G_fmpz(), g.n, g.gram_float(), prec=prec_, target_bits=prec_ - 64, max_steps=steps_)
            except EnclosureFailed as err:
                notes.append(f"{kind} enclosure failed: {err}")
                continue
            vals = enc.values
            if any(not (v > 0 or v < 0) for v in vals):
                notes.append(f"{kind} enclosure touches 0; refining")
                continue
            st = _stats(vals, g.frob_L, g.frob_S)
            widths_ok = all(_rel_width(x) <= 10.0 ** (-opt.digits) for x, o in
                            ((st.b, 1), (st.c, 1), (st.d, 1)) if not (x.is_zero()))
            touching = [j for j, o in enumerate(st.order) if o is None]
            eigs, route, st_loop = vals, kind, st   # keep the latest (most precise) so far
            if widths_ok and not touching:
                break
        if eigs is None:
            notes.append("verified enclosures failed; exact route")
        elif not widths_ok:
            notes.append(f"relative width 1e-{opt.digits} of b, c, d not reached "
                         f"(max {max(_rel_width(x) for x in (st_loop.b, st_loop.c, st_loop.d)):.2g})")
    if eigs is None or rank < n2:
        if cp is None:
            cp = g.JG_fmpz().charpoly()
        exact_eigs = [r for r in _exact_roots(cp) if r.sign() != 0]
        old = ctx.prec
        ctx.prec = PROFILE_PREC
        try:
            eigs = [r.to_arb(bits + 40) / 2 for r in exact_eigs]
        finally:
            ctx.prec = old
        route = "exact"

    st = st_loop if route in ("fast", "exact-products", "arb") else _stats(eigs, g.frob_L, g.frob_S)
    # exact comparison where α_j and β_j still touch
    touching = [j for j, o in enumerate(st.order) if o is None]
    if touching:
        try:
            if exact_eigs is None:
                if cp is None:
                    cp = g.JG_fmpz().charpoly()
                exact_eigs = [r for r in _exact_roots(cp) if r.sign() != 0]
            pos = [r for r in exact_eigs if r.sign() > 0]
            neg = [-r for r in reversed(exact_eigs) if r.sign() < 0]
            fix = {}
            for j in touching:
                aj = pos[j] if j < len(pos) else None
                bj = neg[j] if j < len(neg) else None
                if aj is None or bj is None:
                    fix[j] = -1 if aj is None else 1
                else:
                    fix[j] = aj.cmp(bj)
            st = _stats(eigs, g.frob_L, g.frob_S, fix)
            notes.append(f"α_j vs β_j decided by exact algebraic comparison at j = {touching}")
        except Exception as err:  # pragma: no cover - reported, not hidden
            prec_used = enc.prec if enc is not None else PROFILE_PREC
            notes.append(f"exact comparison failed ({err.__class__.__name__}: {err}); α_j vs β_j at j = {touching} "
                         f"undecided with enclosures from the {route} route at {prec_used} bits")

    n_pos_enc = sum(1 for v in eigs if v > 0)
    n_neg_enc = sum(1 for v in eigs if v < 0)
    if inn is not None:
        if rank == n2 and (inn.n_pos, inn.n_neg) != (n_pos_enc, n_neg_enc):
            raise ArithmeticError(f"{rec.key}: charpoly signature {inn.triple()} disagrees with enclosures "
                                  f"({n_pos_enc}, {n_neg_enc})")
        n_pos, n_neg = inn.n_pos, inn.n_neg
        sig_method = "charpoly(½JG)+Descartes" + ("; enclosures agree" if rank == n2 else "")
    else:
        n_pos, n_neg = n_pos_enc, n_neg_enc
        sig_method = "rank witness + certified enclosures"
    n_zero = N - n_pos - n_neg
    row.update({"n_pos": n_pos, "n_neg": n_neg, "n_zero": n_zero, "signature_method": sig_method})

    # --- direct N x N route --------------------------------------------------
    if opt.direct:
        td = time.perf_counter()
        Zi = g.Z_int()
        ZK = fmpz_mat(Zi[:n].tolist())
        ZQ = fmpz_mat(Zi[n:].tolist())
        Lz = ZK.transpose() * ZQ
        S2 = Lz + Lz.transpose()          # = 2^{1−2e}·S, integer
        cpS = S2.charpoly()
        innS = inertia_from_charpoly(cpS, N)
        agree = innS.triple() == (n_pos, n_neg, n_zero)
        witnesses.append({"kind": "inertia_charpoly", "matrix": "S", "scale": f"2^{1 - 2 * g.e}",
                          "route": "direct N x N", "degree": N,
                          "sign_changes_pos": innS.n_pos, "sign_changes_neg": innS.n_neg,
                          "zero_multiplicity": innS.n_zero, "inertia": innS.to_json(),
                          "agrees_with_2n_route": agree})
        row["direct_seconds"] = round(time.perf_counter() - td, 3)
        row["direct_NxN"] = "agree" if agree else "DISAGREE"
        if not agree:
            raise ArithmeticError(f"{rec.key}: direct N x N inertia {innS.triple()} disagrees with "
                                  f"({n_pos}, {n_neg}, {n_zero})")
    else:
        row["direct_NxN"] = ""

    # --- exact a, energies ----------------------------------------------------
    a = g.a()
    sym_energy = 1 - a
    baseline = fmpq(N + 1, 2 * N)
    # faces
    b0 = (n_pos == 0 or n_neg == 0)
    if any(o is None for o in st.order):
        c0 = "undecided" if not any(o == 1 for o in st.order) else False
        d0 = "undecided" if not any(o == -1 for o in st.order) else False
    else:
        c0 = not any(o == 1 for o in st.order)
        d0 = not any(o == -1 for o in st.order)
    seconds = time.perf_counter() - t0

    def iv(name: str, x: arb | None) -> None:
        if x is None:
            row[name] = row[name + "_lo"] = row[name + "_hi"] = ""
            return
        mag = abs(_mid(x))
        pl = places if mag == 0 or mag >= 1 else min(places - int(math.floor(math.log10(mag))), 400)
        lo, hi = _dec(x, pl)
        row[name] = _mid(x)
        row[name + "_lo"] = lo
        row[name + "_hi"] = hi

    row["a"] = _qfloat(a)
    row["a_exact"] = fmpq_str(a)
    iv("b", st.b)
    iv("c", st.c)
    iv("d", st.d)
    row["face_b0"] = b0
    row["face_c0"] = c0
    row["face_d0"] = d0
    row["symmetric_energy"] = _qfloat(sym_energy)
    row["symmetric_energy_exact"] = fmpq_str(sym_energy)
    row["random_baseline"] = fmpq_str(baseline)
    row["energy_above_baseline"] = sym_energy > baseline
    iv("pairing", st.pairing)
    iv("rho", st.rho)
    iv("pairing_bound", st.bound)
    iv("pairing_gap", st.gap)
    if st.gap is not None and st.gap < 0:
        raise ArithmeticError(f"{rec.key}: pairing gap is negative, contradicting Lemma 2")
    # sanity: b + c + d = 1 − a (Theorem 4), exactly known right side
    old = ctx.prec
    ctx.prec = PROFILE_PREC
    try:
        if not (st.b + st.c + st.d).overlaps(arb(sym_energy)):
            raise ArithmeticError(f"{rec.key}: b + c + d does not enclose 1 − a")
    finally:
        ctx.prec = old
    row["lambda_max"] = _mid(eigs[0]) * 2.0 ** (2 * g.e)
    row["lambda_min"] = _mid(eigs[-1]) * 2.0 ** (2 * g.e)
    row["route"] = route
    row["enclosure_rel_width_max"] = max(_rel_width(v) for v in eigs)
    row["seconds"] = round(seconds, 6)

    if not opt.witnesses:
        pass
    elif enc is not None and route in ("fast", "exact-products", "arb"):
        w = enc.to_json(places)
        w["exponent_e"] = g.e
        w["eigenvalues_of_S"] = "each value times 2^(2·exponent_e)"
        witnesses.append(w)
    elif exact_eigs is not None:
        witnesses.append({"kind": "enclosure", "matrix": "half_JG", "method": "exact real roots of charpoly(J·Z Zᵀ) / 2",
                          "scale": "values are eigenvalues of ½J(Z Zᵀ), M = Z·2^e",
                          "eigenvalues": [list(_dec(v, places)) for v in eigs]})
    witnesses.append({
        "kind": "identity", "matrix": "L",
        "scale": f"values times 2^{4 * g.e} are the true ones (M = Z·2^e)",
        "values": {"frob_L": str(g.frob_L), "trace_L2": str(g.tr_L2),
                   "frob_S": fmpq_str(g.frob_S), "frob_T": fmpq_str(g.frob_T), "a": fmpq_str(a)},
        "equalities": ["frob_L = tr((W_K W_Kᵀ)(W_Q W_Qᵀ))", "trace_L2 = tr((W_K W_Qᵀ)²)",
                       "frob_S = (frob_L + trace_L2)/2", "frob_T = (frob_L − trace_L2)/2", "a = frob_T/frob_L"],
    })
    witnesses.append({"kind": "profile", "matrix": "S", "padding": "blueprint",
                      "order": ["=" if o == 0 else ">" if o == 1 else "<" if o == -1 else "?" for o in st.order],
                      "alpha_from": "positive eigenvalues of ½JG, decreasing",
                      "beta_from": "|negative eigenvalues| of ½JG, decreasing"})

    # --- the authors' float64 pipeline -----------------------------------------
    if opt.compare_float:
        fp = authors_pipeline(rec.W_Q, rec.W_K, opt.cut)
        flags = []
        if (fp["n_pos"], fp["n_neg"], fp["n_zero"]) != (n_pos, n_neg, n_zero):
            flags.append(f"count ({fp['n_pos']},{fp['n_neg']},{fp['n_zero']})")
        for face, ex in (("b0", b0), ("c0", c0), ("d0", d0)):
            fv = fp.get(f"face_{face}")
            if isinstance(ex, bool) and fv is not None and bool(fv) != ex:
                flags.append(f"face {face[0]}=0 float says {bool(fv)}")
        for k in ("n_pos", "n_neg", "n_zero", "a", "b", "c", "d", "pairing", "rho"):
            if k in fp:
                row[f"float64_{k}"] = fp[k]
        row["float64_min_abs_eig_rel"] = fp["min_abs_eig"] / fp["max_abs_eig"] if fp["max_abs_eig"] else 0.0
        dev = max(abs(fp[k] - row[k]) for k in ("a", "b", "c", "d")) if "a" in fp else float("nan")
        row["float64_max_profile_dev"] = dev
        row["float64_disagrees"] = bool(flags)
        row["float64_flags"] = "; ".join(flags)
        witnesses.append({"kind": "comparison", "matrix": "S",
                          "what": "authors' float64 pipeline (QR basis, float32 restricted form, eigvalsh, cut 1e-9·max|λ|)",
                          "float64": {k: (v if not isinstance(v, (np.floating,)) else float(v)) for k, v in fp.items()},
                          "disagreements": flags})
    row["notes"] = "; ".join(notes)

    verdict = "holds" if (rank == n2 and (n_pos, n_neg, n_zero) == (n, n, N - n2)) else (
        "fails" if rank == n2 else "undecided")
    reason = "" if verdict == "holds" else (
        f"signature ({n_pos}, {n_neg}, {n_zero}) ≠ ({n}, {n}, {N - n2})" if rank == n2 else
        f"hypothesis fails: rank M = {rank} < 2n = {n2}, Theorem 3 does not apply")
    values = {k: row[k] for k in row}
    return {"row": row, "witnesses": witnesses, "values": values, "verdict": verdict, "reason": reason,
            "seconds": seconds, "evidence": "exact" if inn is not None else "certified"}


def certify_many(records, opt: HeadOptions):
    """Certify an iterable of heads sequentially (generator of dicts)."""
    for r in records:
        yield certify_head(r, opt)


def _worker(args):  # top-level for pickling
    rec, opt = args
    return certify_head(rec, opt)
