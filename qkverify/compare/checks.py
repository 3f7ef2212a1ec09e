"""Row-by-row checks of a published table against what the theorems imply,
within the float error model of :mod:`qkverify.compare.errormodel`.

Each check compares columns the pipeline computed *independently* (different
sums, different formulas) through an identity a theorem proves for every
matrix -- in particular for the float32-stored form the pipeline worked on
-- or decides whether a face the table reports lies above the pipeline's
resolution.  A status is one of

* ``ok``               -- within the error model / above the resolution;
* ``below resolution`` -- the table's decision is one the pipeline could not
  make (a face, an order, a count): not wrong, not decided;
* ``contradicts``      -- beyond the error model: no float rounding of the
  stated size explains it (``qkverify compare`` exits 1);
* ``n/a``              -- a column it needs is missing or empty.

The checks (name, statement, Lean declaration):

=================  ======================================================  ======================================
``simplex``        a, b, c, d ≥ 0 and a + b + c + d = 1                      Theorem 4 (profileA_nonneg …, sum)
``energy``         symmetric_energy = 1 − a                                  Lemma 5 (frobSq_symPart_div)
``signature``      n_pos = n_neg = dim/2, n_zero = 0 on the restricted       Theorem 3 (heads_have_balanced_attention),
                   space; n_pos, n_neg ≤ dim/2                               Lemma 3 (rank_balance)
``pairing_bound``  pairing ≤ pairing_bound                                   Lemma 2 (pairing_bound)
``pairing_gap``    pairing_gap = pairing_bound − pairing, bound = f(ρ)       Lemma 2 (its definitions)
``sym_simplex``    b_sym + c_sym + d_sym = 1, each ≥ 0                       Lemma 4 (profileA_symPart) + Theorem 4 on S
``sym_scale``      (b, c, d) = (1 − a)·(b_sym, c_sym, d_sym)                 Lemma 4 (profile_scale)
``face_c``         the face c = 0 / c > 0 is above the resolution            Theorem 4 (c = 0 ⇔ β_j ≥ α_j ∀j)
``face_d``         the face d = 0 / d > 0 is above the resolution            Theorem 4 (d = 0 ⇔ α_j ≥ β_j ∀j)
``c_vs_d``         the order of c and d is above the resolution              Def 6
=================  ======================================================  ======================================
"""

from __future__ import annotations

import math

from .errormodel import ErrorModel

OK, LOW, BAD, NA = "ok", "below resolution", "contradicts", "n/a"
#: check name -> (statement, theorem) -- the README and the report quote these
CHECKS = {
    "simplex": ("a, b, c, d ≥ 0 and a + b + c + d = 1", "Theorem 4"),
    "energy": ("symmetric_energy = 1 − a", "Lemma 5"),
    "signature": ("(n_pos, n_neg, n_zero) = (dim/2, dim/2, 0)", "Theorem 3 / Lemma 3"),
    "pairing_bound": ("pairing ≤ pairing_bound", "Lemma 2"),
    "pairing_gap": ("pairing_gap = pairing_bound − pairing; bound = 1 − |1−ρ|/√(1+ρ²)", "Lemma 2 (definitions)"),
    "sym_simplex": ("b_sym + c_sym + d_sym = 1", "Lemma 4 + Theorem 4 on S"),
    "sym_scale": ("(b, c, d) = (1 − a)·(b_sym, c_sym, d_sym)", "Lemma 4"),
    "face_c": ("c = 0 or c > 0 decided above the resolution", "Theorem 4"),
    "face_d": ("d = 0 or d > 0 decided above the resolution", "Theorem 4"),
    "c_vs_d": ("c vs d decided above the resolution", "Def 6"),
}


def _f(row: dict, *cols) -> list | None:
    """The float values of ``cols`` in ``row``, or None if one is missing/NaN."""
    out = []
    for c in cols:
        v = row.get(c)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return None
        out.append(float(v))
    return out


def _g(x: float) -> str:
    return f"{x:.3g}"


def check_row(row: dict, em: ErrorModel) -> dict:
    """All checks of one table row: {check: (status, residual or None, note)}.

    ``row`` has the authors' columns (floats, ints; NaN where empty)."""
    m = int(row["dim"])
    out: dict = {}
    tau = em.tau_identity(m)

    # Theorem 4: the profile lies on the simplex (for the stored form, exactly)
    v = _f(row, "a", "b", "c", "d")
    if v is None:
        out["simplex"] = (NA, None, "a, b, c or d missing")
    else:
        res = sum(v) - 1.0
        neg = [k for k, x in zip("abcd", v) if x < -tau]
        if neg or abs(res) > tau:
            note = (f"{','.join(neg)} < 0; " if neg else "") + f"a+b+c+d−1 = {_g(res)} (tolerance {_g(tau)})"
            out["simplex"] = (BAD, res, note)
        else:
            out["simplex"] = (OK, res, "")

    # Lemma 5: ‖S‖²/‖L‖² = 1 − ‖T‖²/‖L‖²
    v = _f(row, "symmetric_energy", "a")
    if v is None:
        out["energy"] = (NA, None, "symmetric_energy or a missing")
    else:
        res = v[0] - (1.0 - v[1])
        out["energy"] = ((BAD, res, f"symmetric_energy − (1 − a) = {_g(res)} (tolerance {_g(tau)})")
                         if abs(res) > tau else (OK, res, ""))

    # Theorem 3 on the restricted space (and Lemma 3's n_pos, n_neg ≤ n)
    v = _f(row, "n_pos", "n_neg", "n_zero")
    if v is None:
        out["signature"] = (NA, None, "n_pos, n_neg or n_zero missing")
    else:
        p, q, z = (int(x) for x in v)
        if min(p, q, z) < 0 or p + q + z != m or m % 2:
            out["signature"] = (BAD, None, f"counts ({p},{q},{z}) do not add up to dim = {m}"
                                + (" (odd dim: not a restricted head form)" if m % 2 else ""))
        elif (p, q, z) == (m // 2, m // 2, 0):
            out["signature"] = (OK, None, "")
        else:
            extra = " (more than dim/2 on one side: Lemma 3 bounds the true counts by dim/2)" if max(p, q) > m // 2 else ""
            out["signature"] = (LOW, None, f"counts ({p},{q},{z}) ≠ ({m // 2},{m // 2},0): explained by the error "
                                f"model only if some |λ| ≤ δ + cut, i.e. a (nearly) singular head{extra}")

    # Lemma 2: 𝒫 ≤ 1 − |1 − ρ|/√(1 + ρ²)
    v = _f(row, "pairing", "pairing_bound")
    if v is None:
        out["pairing_bound"] = (NA, None, "pairing or pairing_bound missing/empty")
    else:
        res = v[0] - v[1]
        out["pairing_bound"] = ((BAD, res, f"pairing exceeds the bound by {_g(res)} (tolerance {_g(tau)})")
                                if res > tau else (OK, res, ""))

    # the gap and the bound, recomputed from their definitions
    v = _f(row, "pairing", "pairing_bound", "pairing_gap")
    if v is None:
        out["pairing_gap"] = (NA, None, "pairing, pairing_bound or pairing_gap missing/empty")
    else:
        res = v[2] - (v[1] - v[0])
        t = em.tau_definition(max(abs(v[0]), abs(v[1])))
        notes = []
        if abs(res) > t:
            notes.append(f"pairing_gap − (bound − pairing) = {_g(res)}")
        r = _f(row, "rho")
        if r is not None:
            rho = r[0]
            bound = 1.0 - abs(1.0 - rho) / math.sqrt(1.0 + rho * rho)
            if abs(bound - v[1]) > em.tau_definition(4.0):
                notes.append(f"pairing_bound − (1 − |1−ρ|/√(1+ρ²)) = {_g(v[1] - bound)}")
        out["pairing_gap"] = (BAD, res, "; ".join(notes)) if notes else (OK, res, "")

    # π(S): a(S) = 0, so b_sym + c_sym + d_sym = 1
    v = _f(row, "b_sym", "c_sym", "d_sym")
    if v is None:
        out["sym_simplex"] = (NA, None, "b_sym, c_sym or d_sym missing")
    else:
        res = sum(v) - 1.0
        neg = [k for k, x in zip("bcd", v) if x < -tau]
        out["sym_simplex"] = ((BAD, res, (f"{','.join(neg)}_sym < 0; " if neg else "")
                               + f"b_sym+c_sym+d_sym−1 = {_g(res)} (tolerance {_g(tau)})")
                              if neg or abs(res) > tau else (OK, res, ""))

    # Lemma 4: (b, c, d) = (1 − a)·(b, c, d)(S), with 1 − a the symmetric_energy column
    v = _f(row, "symmetric_energy", "b", "c", "d", "b_sym", "c_sym", "d_sym")
    if v is None:
        out["sym_scale"] = (NA, None, "symmetric_energy or a *_sym column missing")
    else:
        s = v[0]
        devs = [v[1 + i] - s * v[4 + i] for i in range(3)]
        worst = max(devs, key=abs)
        t = em.tau_definition(1.0)  # the same float quotients: a few ulps
        bad = [k for k, dv in zip("bcd", devs) if abs(dv) > t]
        out["sym_scale"] = ((BAD, worst, f"{','.join(bad)} ≠ (1 − a)·{bad[0]}_sym by {_g(worst)}")
                            if bad else (OK, worst, ""))

    # faces and the c/d order: could the pipeline decide them?
    R = em.resolution(m)
    for k in ("c", "d"):
        v = _f(row, k)
        if v is None:
            out[f"face_{k}"] = (NA, None, f"{k} missing")
            continue
        x = v[0]
        if x == 0.0:
            out[f"face_{k}"] = (LOW, x, f"{k} = 0 in the table: a float 0 only says {k} ≤ R = {_g(R)}; the face "
                                f"{k} = 0 needs a margin > 2δ the table does not carry (--model decides it)")
        elif x <= R:
            out[f"face_{k}"] = (LOW, x, f"{k} = {_g(x)} ≤ R = {_g(R)}: {k} > 0 and {k} = 0 are indistinguishable")
        else:
            out[f"face_{k}"] = (OK, x, "")
    v = _f(row, "c", "d")
    if v is None:
        out["c_vs_d"] = (NA, None, "c or d missing")
    else:
        c, d = v
        err = em.err_cd(c, m) + em.err_cd(d, m)
        diff = c - d
        if abs(diff) > err:
            out["c_vs_d"] = (OK, diff, "")
        else:
            out["c_vs_d"] = (LOW, diff, f"|c − d| = {_g(abs(diff))} ≤ {_g(err)}: the order of c and d is below the "
                             "resolution")
    return out


def row_verdict(results: dict) -> str:
    """``contradicts`` if any check contradicts, ``flagged`` if any is below
    the resolution, else ``ok``."""
    st = {r[0] for r in results.values()}
    return "contradicts" if BAD in st else "flagged" if LOW in st else "ok"
