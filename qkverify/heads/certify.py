"""Certify one attention head: Theorem 3's signature, Lemma 10's spectrum,
Def 6's profile, Lemma 2's pairing quantities -- from the exact weights.

Per head (independent, picklable; run in a process pool or on a Dask cluster):

1. exact data (:func:`_exact_stage`): M = [W_K; W_Q] = Z·2^e, the Gram
   matrix Z Zᵀ, ‖L‖² and tr(L²) (so a exactly), and a rank witness of M (a
   nonzero 2n x 2n minor mod a stated prime: Theorem 3's hypothesis);
2. the spectrum (:func:`_spectrum_stage`): the deterministic cells of the
   nonzero eigenvalues of X = J·Z Zᵀ (:mod:`qkverify.heads.cells`); the
   signature, the order α_j vs β_j, the faces, b, c, d, 𝒫, ρ, the Lemma 2 bound
   and gap are read from them -- nothing depends on BLAS, CPU or threads;
3. exact cross-checks within the budget (:func:`_exact_signature_stage`):
   charpoly(J·Z Zᵀ) + Descartes (Lemma 10) and the direct N x N route, each
   run only when its estimated cost fits :class:`~qkverify.heads.budget.Budget`
   (a skipped route is said in the notes, with how to force it);
4. the table row and the format-1 certificate witnesses
   (:func:`_row_stage`, :func:`_witness_stage`), all derived from the
   deterministic data;
5. the authors' float64 pipeline (:func:`float_columns`), display only:
   rounded to 6 significant digits, in the tables, never in a certificate.

Scales: eigenvalues of S are ν·2^(2e)/2 (ν of X) and ‖L‖² = frob_L·2^(4e);
every profile coordinate is a ratio, so the powers of two cancel exactly.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field

import numpy as np
from flint import fmpq, fmpz_mat, fmpz_poly

from ..errors import QKInputError
from ..exact.inertia import inertia_from_charpoly
from ..exact.rational import fmpq_str
from ..models.base import HeadRecord
from .budget import Budget, RouteSkipped, charpoly_cost
from .cells import ExactCounter, HeadSpectrum, exact_decimal, head_spectrum
from .exact_gram import GramData, gram_data, rank_witness
from .float_pipeline import authors_pipeline

#: significant digits of every printed enclosure beyond the --digits target
EXTRA_DIGITS = 6
#: float64 comparison columns are rounded to this many significant digits
FLOAT_DISPLAY_DIGITS = 6
#: the row keys that are display-only float64 comparisons (tables only)
FLOAT_KEYS = ("float64_n_pos", "float64_n_neg", "float64_n_zero", "float64_a", "float64_b", "float64_c",
              "float64_d", "float64_pairing", "float64_rho", "float64_min_abs_eig_rel", "float64_max_profile_dev",
              "float64_disagrees", "float64_flags")


@dataclass
class HeadOptions:
    """Per-head settings (picklable).

    digits        -- target width of b, c, d: 10^-digits relative to max(value, 10^-6·(1 − a)) (default 9)
    charpoly      -- exact signature by charpoly(½JG) + Descartes (within the budget)
    direct        -- also the direct N x N route (charpoly of S; within the budget)
    compare_float -- run the authors' float64 pipeline (display only) and flag disagreements
    full_witness  -- include full charpoly coefficients in the witness
    cut           -- the float pipeline's relative eigenvalue cut
    witnesses     -- build the format-1 witnesses in ``witnesses`` (the certificates do not read them)
    budget        -- time/memory budget of each exact route on one head
    check_budget  -- the budget of the optional exact cross-checks (charpoly of a full-rank head,
                     the direct route); None: ``budget``
    """

    digits: int = 9
    charpoly: bool = True
    direct: bool = False
    compare_float: bool = True
    full_witness: bool = False
    cut: float = 1e-9
    witnesses: bool = True
    budget: Budget = field(default_factory=Budget)
    check_budget: Budget | None = None


# ---------------------------------------------------------------------------
# small helpers


def _float(q) -> float | None:
    """Nearest float of an exact rational (deterministic), None on overflow."""
    try:
        return int(q.p) / int(q.q)        # Python's int division is correctly rounded
    except OverflowError:
        return None


def _sig6(x) -> float | None:
    """A float rounded to 6 significant digits (display), None for NaN/inf."""
    if x is None:
        return None
    x = float(x)
    if not np.isfinite(x):
        return None
    return float(f"{x:.{FLOAT_DISPLAY_DIGITS}g}")


def _charpoly_witness(cp, n2: int, e: int, full: bool) -> tuple[object, dict]:
    """Exact inertia of ½JG from charpoly(J·Z Zᵀ) (roots = 2^{1−2e}·spectrum of
    ½JG, a positive factor) and a compact witness."""
    inn = inertia_from_charpoly(cp, n2)
    coeffs = [int(c) for c in cp.coeffs()]
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


# ---------------------------------------------------------------------------
# stages


def _exact_stage(rec: HeadRecord) -> tuple[GramData, int, dict]:
    """Exact Gram data, the rank of M and its witness."""
    g = gram_data(rec.W_Q, rec.W_K)
    rw = rank_witness(g)
    if rw is not None:
        return g, 2 * rec.n, rw
    from ..exact.matrix import rank_certificate          # exact rational route: rank-deficient heads only
    from ..exact.rational import ndarray_to_fmpq_mat          # (same reason)

    M = ndarray_to_fmpq_mat(np.concatenate([rec.W_K, rec.W_Q]).astype(np.float64), "M")
    rc = rank_certificate(M)
    return g, rc.rank, dict(rc.to_json(), matrix="M")


def _spectrum_stage(g: GramData, rank: int, opt: HeadOptions, counter: ExactCounter) -> HeadSpectrum:
    return head_spectrum(g, rank, opt.digits, opt.budget, counter=counter)


def _exact_signature_stage(rec: HeadRecord, g: GramData, hs: HeadSpectrum, rank: int, opt: HeadOptions,
                           counter: ExactCounter, notes: list, witnesses: list) -> tuple[bool, str, str]:
    """charpoly(½JG) + Descartes (when asked or needed) and the direct N x N
    route (when asked), each within the budget.  Returns (exact signature?,
    signature method, direct route cell)."""
    n, N = rec.n, rec.N
    n2 = 2 * n
    exact_sig = False
    if hs.frob_L + hs.trace_L2 == 0:
        # S = 0: charpoly(J·Z Zᵀ) = x^(2n) exactly (every eigenvalue is 0; tr X² = 0)
        cp_coeffs = [0] * n2 + [1]
        _, w = _charpoly_witness(fmpz_poly(cp_coeffs), n2, g.e, opt.full_witness)
        w["note"] = "S = 0 (‖L‖² + tr L² = 0), so every eigenvalue of ½JG is 0"
        witnesses.append(w)
        exact_sig = True
    elif opt.charpoly or rank < n2:
        try:
            if rank == n2 and opt.check_budget is not None:     # a cross-check only: its own budget
                opt.check_budget.check(f"exact charpoly of the {n2}x{n2} matrix J·Z Zᵀ (a cross-check)",
                                       charpoly_cost(n2, g.gram_bits()), "raise --check-seconds to run it")
            cp = counter.poly()
        except RouteSkipped as err:
            notes.append(str(err))
        else:
            inn, w = _charpoly_witness(cp, n2, g.e, opt.full_witness)
            if (inn.n_pos, inn.n_neg, inn.n_zero) != (hs.n_pos, hs.n_neg, hs.zero):
                raise ArithmeticError(f"{rec.key}: charpoly signature {inn.triple()} disagrees with the cells "
                                      f"({hs.n_pos}, {hs.n_neg}, {hs.zero})")
            witnesses.append(w)
            exact_sig = True
    method = ("charpoly(½JG)+Descartes; cells agree" if exact_sig else
              "rank witness + certified cells of the 2n nonzero eigenvalues")
    direct = ""
    if opt.direct:
        bits = g.gram_bits() + 2          # |(Z_Kᵀ Z_Q)_ij| ≤ max diag(Z Zᵀ) (Cauchy–Schwarz)
        try:
            if opt.check_budget is not None:
                opt.check_budget.check(f"direct {N}x{N} route (a cross-check)", charpoly_cost(N, bits),
                                       "raise --check-seconds / --budget-memory to run it")
            else:
                opt.budget.direct(N, bits)
        except RouteSkipped as err:
            notes.append(str(err))
            direct = "skipped"
        else:
            Zi = g.Z_int()
            ZK = fmpz_mat(Zi[:n].tolist())
            ZQ = fmpz_mat(Zi[n:].tolist())
            Lz = ZK.transpose() * ZQ
            innS = inertia_from_charpoly((Lz + Lz.transpose()).charpoly(), N)   # 2^{1−2e}·S, integer
            agree = innS.triple() == (hs.n_pos, hs.n_neg, hs.n_zero)
            witnesses.append({"kind": "inertia_charpoly", "matrix": "S", "scale": f"2^{1 - 2 * g.e}",
                              "route": "direct N x N", "degree": N,
                              "sign_changes_pos": innS.n_pos, "sign_changes_neg": innS.n_neg,
                              "zero_multiplicity": innS.n_zero, "inertia": innS.to_json(),
                              "agrees_with_2n_route": agree})
            if not agree:
                raise ArithmeticError(f"{rec.key}: direct N x N inertia {innS.triple()} disagrees with "
                                      f"({hs.n_pos}, {hs.n_neg}, {hs.n_zero})")
            direct = "agree"
    return exact_sig, method, direct


def _row_stage(rec: HeadRecord, hs: HeadSpectrum, rank: int, method: str, direct: str, opt: HeadOptions,
               notes: list) -> dict:
    """The table row: exact values, enclosures rounded outward to a fixed
    number of significant digits, display floats that are deterministic
    functions of them (nearest float of an exact rational)."""
    N, n = rec.N, rec.n
    row: dict = {"model": rec.model, "layer": rec.layer, "head": rec.head, "kv_head": rec.kv_head, "N": N, "n": n,
                 "rank_M": rank, "n_pos": hs.n_pos, "n_neg": hs.n_neg, "n_zero": hs.n_zero,
                 "signature_method": method, "direct_NxN": direct}
    sig = opt.digits + EXTRA_DIGITS
    if hs.a is None:
        notes.insert(0, "L = 0: no profile (Lean: π(0) = (0,0,0,0))")
    else:
        row["a"] = _float(hs.a)
        row["a_exact"] = fmpq_str(hs.a)
        row["symmetric_energy"] = _float(hs.symmetric_energy)
        row["symmetric_energy_exact"] = fmpq_str(hs.symmetric_energy)
        baseline = fmpq(N + 1, 2 * N)
        row["random_baseline"] = fmpq_str(baseline)
        row["energy_above_baseline"] = hs.symmetric_energy > baseline
        row["face_b0"] = hs.faces["b0"]
        row["face_c0"] = hs.faces["c0"]
        row["face_d0"] = hs.faces["d0"]
    for name in ("b", "c", "d", "pairing", "rho", "pairing_bound", "pairing_gap"):
        iv = hs.enclosures.get(name)
        if iv is None:
            row[name] = row[name + "_lo"] = row[name + "_hi"] = ""
            continue
        lo, hi = hs.interval_strings(name, sig)
        row[name] = _float((iv[0] + iv[1]) / 2)
        row[name + "_lo"], row[name + "_hi"] = lo, hi
    if "pairing_gap" in hs.enclosures and hs.enclosures["pairing_gap"][1] < 0:
        raise ArithmeticError(f"{rec.key}: pairing gap is negative, contradicting Lemma 2")
    if hs.a is not None and "b" in hs.enclosures:
        lo = sum((hs.enclosures[k][0] for k in "bcd"), fmpq(0))
        hi = sum((hs.enclosures[k][1] for k in "bcd"), fmpq(0))
        if not lo <= hs.symmetric_energy <= hi:
            raise ArithmeticError(f"{rec.key}: b + c + d does not enclose 1 − a")
    cb, cu = hs.int_bounds()                     # integer cell bounds in the unit cu (ν units)
    unit = fmpq(1, 2) * (fmpq(2) ** (2 * hs.scale_exponent) if hs.scale_exponent >= 0
                         else fmpq(1, 2 ** (-2 * hs.scale_exponent))) * cu
    row["lambda_max"] = _float(fmpq(cb[0][0] + cb[0][1], 2) * unit) if cb else 0.0
    row["lambda_min"] = _float(fmpq(cb[-1][0] + cb[-1][1], 2) * unit) if cb else 0.0
    row["route"] = "cells"
    # the largest (hi − lo)/max(|lo|, |hi|), compared by cross-multiplication in integers
    best = None
    for lo, hi in cb:
        d = max(abs(lo), abs(hi))
        if d and (best is None or (hi - lo) * best[1] > best[0] * d):
            best = (hi - lo, d)
    row["enclosure_rel_width_max"] = _sig6(_float(fmpq(*best))) if best else 0.0
    return row


def _witness_stage(g: GramData, hs: HeadSpectrum, witnesses: list, places: int) -> None:
    """Format-1 witnesses from the deterministic data: the eigenvalue
    enclosures of ½J(Z Zᵀ) are the cells (exact decimals of dyadic bounds),
    the identity of Def 6, the profile order."""
    if hs.cells:
        witnesses.append({
            "kind": "enclosure", "matrix": "half_JG",
            "scale": "2^{-2e}: values are eigenvalues of ½J(Z Zᵀ) with M = Z·2^e",
            "method": f"cells of the spectrum of J·Z Zᵀ (grid 2^{hs.grid_exponent} refined by level), halved; "
                      "deterministic: decided by rigorous enclosures and exact counts",
            "eigenvalues": [[exact_decimal(lo / 2), exact_decimal(hi / 2)] for lo, hi in hs.cell_bounds()],
            "exponent_e": g.e,
            "eigenvalues_of_S": "each value times 2^(2·exponent_e)",
        })
    if hs.a is not None:
        witnesses.append({
            "kind": "identity", "matrix": "L",
            "scale": f"values times 2^{4 * g.e} are the true ones (M = Z·2^e)",
            "values": {"frob_L": str(g.frob_L), "trace_L2": str(g.tr_L2),
                       "frob_S": fmpq_str(g.frob_S), "frob_T": fmpq_str(g.frob_T), "a": fmpq_str(hs.a)},
            "equalities": ["frob_L = tr((W_K W_Kᵀ)(W_Q W_Qᵀ))", "trace_L2 = tr((W_K W_Qᵀ)²)",
                           "frob_S = (frob_L + trace_L2)/2", "frob_T = (frob_L − trace_L2)/2", "a = frob_T/frob_L"],
        })
        witnesses.append({"kind": "profile", "matrix": "S", "padding": "blueprint", "order": list(hs.order),
                          "alpha_from": "positive eigenvalues of ½JG, decreasing",
                          "beta_from": "|negative eigenvalues| of ½JG, decreasing"})


def float_columns(rec: HeadRecord, row: dict, cut: float) -> None:
    """The authors' float64 pipeline beside the certified values in ``row``
    (display only, 6 significant digits; in the tables, never in a
    certificate), with a flag where it would decide a count or a face
    differently from the row's exact answers."""
    fp = authors_pipeline(rec.W_Q, rec.W_K, cut)
    flags = []
    if fp.get("error"):
        flags.append(fp["error"])
    elif (fp["n_pos"], fp["n_neg"], fp["n_zero"]) != (row["n_pos"], row["n_neg"], row["n_zero"]):
        flags.append(f"count ({fp['n_pos']},{fp['n_neg']},{fp['n_zero']})")
    for face in ("b", "c", "d"):
        fv = fp.get(f"face_{face}0")
        ex = row.get(f"face_{face}0")
        if isinstance(ex, bool) and fv is not None and bool(fv) != ex:
            flags.append(f"face {face}=0 float says {bool(fv)}")
    for k in ("n_pos", "n_neg", "n_zero"):
        row[f"float64_{k}"] = fp.get(k)
    for k in ("a", "b", "c", "d", "pairing", "rho"):
        row[f"float64_{k}"] = _sig6(fp.get(k))
    mx = fp.get("max_abs_eig") or 0.0
    row["float64_min_abs_eig_rel"] = _sig6(fp["min_abs_eig"] / mx) if mx and np.isfinite(mx) else None
    # the deviation is taken from the displayed (6-digit) float values, so it is
    # as reproducible as they are: the raw difference would be rounding noise
    devs = [abs(row[f"float64_{k}"] - row[k]) for k in ("a", "b", "c", "d")
            if isinstance(row.get(f"float64_{k}"), float) and isinstance(row.get(k), float)]
    row["float64_max_profile_dev"] = _sig6(max(devs)) if devs else None
    row["float64_disagrees"] = bool(flags)
    row["float64_flags"] = "; ".join(flags)


def _verdict(n: int, N: int, rank: int, hs: HeadSpectrum) -> tuple[str, str]:
    n2 = 2 * n
    if rank < n2:
        return "undecided", f"hypothesis fails: rank M = {rank} < 2n = {n2}, Theorem 3 does not apply"
    if (hs.n_pos, hs.n_neg, hs.n_zero) == (n, n, N - n2):
        return "holds", ""
    return "fails", f"signature ({hs.n_pos}, {hs.n_neg}, {hs.n_zero}) ≠ ({n}, {n}, {N - n2})"


# ---------------------------------------------------------------------------


def certify_head(rec: HeadRecord, opt: HeadOptions | None = None) -> dict:
    """Certify one head (see the module docstring).  Returns a JSON-ready dict:

    ``row``        -- flat table row (columns of :data:`qkverify.heads.output.COLUMNS`)
    ``spectrum``   -- the :class:`~qkverify.heads.cells.HeadSpectrum` (cells, exact
                      identities, enclosures): the deterministic data of the head
    ``witnesses``  -- format-1 certificate witnesses (rank, inertia, enclosure, identity, profile)
    ``values``     -- the row without its display-only float64 columns (certificates)
    ``verdict``/``reason``/``evidence`` -- Theorem 3 on this head
    ``seconds``    -- wall time of the certified part (float comparison excluded)
    ``stats``      -- which rigorous route decided the cells (machine-dependent; not in outputs)

    Raises QKInputError for malformed heads and ArithmeticError if two exact
    routes disagree (a bug).
    """
    opt = opt or HeadOptions()
    t0 = time.perf_counter()
    n, N = rec.n, rec.N
    if n < 1 or N < 1:
        raise QKInputError(f"{rec.key}: empty head ({n} x {N})")
    notes: list[str] = []
    witnesses: list[dict] = []
    g, rank, rw = _exact_stage(rec)
    witnesses.append(rw)
    stats: dict = {}
    counter = ExactCounter(g, opt.budget, stats)
    hs = _spectrum_stage(g, rank, opt, counter)
    exact_sig, method, direct = _exact_signature_stage(rec, g, hs, rank, opt, counter, notes, witnesses)
    row = _row_stage(rec, hs, rank, method, direct, opt, notes)
    if opt.witnesses:
        _witness_stage(g, hs, witnesses, opt.digits + EXTRA_DIGITS)
    seconds = time.perf_counter() - t0
    notes.extend(hs.notes)
    if opt.compare_float:
        float_columns(rec, row, opt.cut)
    row["notes"] = "; ".join(notes)
    verdict, reason = _verdict(n, N, rank, hs)
    values = {k: v for k, v in row.items() if k not in FLOAT_KEYS}
    stats.update(hs.stats)
    return {"row": row, "spectrum": hs, "witnesses": witnesses, "values": values, "verdict": verdict,
            "reason": reason, "seconds": seconds, "evidence": "exact" if exact_sig else "certified", "stats": stats}


def _worker(args):  # top-level for pickling
    rec, opt = args
    return certify_head(rec, opt)
