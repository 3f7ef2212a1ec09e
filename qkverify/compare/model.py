"""Joining a published table with the certified results of a model.

The certified side of a head is what ``qkverify heads`` proves: the exact
a, certified enclosures of b, c, d, the faces (an equality only when exact),
the signature, and the eigenvalue cells of S (rigorous enclosures of every
nonzero eigenvalue).  It comes either from running the certification on a
weights file (:func:`certify_model`) or from a folder ``qkverify heads``
wrote (:func:`read_heads_dir`: heads.json and the per-head certificates,
whose ``cells`` witness carries the eigenvalue enclosures -- run
``qkverify verify`` on them to have the kernel re-check them).

For each row the table's float answer is compared with the certified one
(:func:`judge_row`), through the error model: a disagreement is *within*
the model when a float pipeline with those error bounds could have produced
it, *beyond* otherwise; an agreement is *by luck* when the certified margin
that decides it (the smallest |α_j − β_j| of a face, the smallest |λ| of a
count, |c − d| of an order) is at most the pipeline's error, so the same
pipeline could as well have answered the other way.  Margins are compared
with exact rational arithmetic on the certified enclosures.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from flint import fmpq

from ..errors import QKInputError
from ..exact.rational import parse_rational
from .errormodel import ErrorModel

AGREE, LUCK, WITHIN, BEYOND, UNDECIDED, NA = ("agree", "agree by luck", "disagrees within the error model",
                                              "disagrees beyond the error model", "exact undecided", "n/a")
#: the float64 stage-1 constant c' (QR and products: c'·N·u64·‖W_K‖‖W_Q‖/‖L‖)
C_QR = 4.0


def _q(x) -> fmpq | None:
    """An exact rational from a decimal / fraction string (or None)."""
    if x in (None, ""):
        return None
    return parse_rational(str(x))


@dataclass
class CertifiedHead:
    """What was certified about one head (enclosures as exact rationals).

    eig    -- closed intervals of the nonzero eigenvalues of S up to one
              positive factor, decreasing (the first n_pos positive)
    a      -- exact a (fmpq); b, c, d -- (lo, hi) or None (undecided order)
    faces  -- {"c0", "d0"}: True / False / "undecided"
    """

    layer: int
    head: int
    n: int
    N: int
    rank_M: int
    n_pos: int
    n_neg: int
    a: fmpq | None
    b: tuple | None
    c: tuple | None
    d: tuple | None
    faces: dict
    eig: list
    certificate: str = ""
    kappa: float | None = None
    extra: dict = field(default_factory=dict)


def _iv(row: dict, k: str):
    lo, hi = _q(row.get(f"{k}_lo")), _q(row.get(f"{k}_hi"))
    return (lo, hi) if lo is not None and hi is not None else None


def _head_from_row(row: dict, eig: list, cert: str = "") -> CertifiedHead:
    return CertifiedHead(int(row["layer"]), int(row["head"]), int(row["n"]), int(row["N"]), int(row["rank_M"]),
                         int(row["n_pos"]), int(row["n_neg"]), _q(row.get("a_exact")), _iv(row, "b"), _iv(row, "c"),
                         _iv(row, "d"), {"c0": row.get("face_c0"), "d0": row.get("face_d0")}, eig, cert,
                         extra={"row": row})


#: the largest binary exponent of a cell read from a heads folder (the cells of float weights stay
#: within a few thousand; flint aborts the process on powers far beyond)
MAX_CELL_EXPONENT = 100_000


def cells_bounds(cells: list, grid_exponent: int, max_count: int | None = None) -> list[tuple[fmpq, fmpq]]:
    """Decreasing closed intervals from a ``cells`` witness ([k, r, count]
    ascending: count eigenvalues in [k·2^(g−r), (k+1)·2^(g−r))).  Raises
    ValueError for a cell exponent beyond :data:`MAX_CELL_EXPONENT` or, with
    ``max_count``, more eigenvalues than that."""
    out = []
    total = 0
    for k, r, cnt in reversed(cells):
        e = grid_exponent - r
        total += int(cnt)
        if abs(e) > MAX_CELL_EXPONENT or int(cnt) < 0 or (max_count is not None and total > max_count):
            raise ValueError("cell out of range")
        w = fmpq(2) ** e if e >= 0 else fmpq(1, 2 ** (-e))
        out.extend([(fmpq(k) * w, fmpq(k + 1) * w)] * int(cnt))
    return out


def read_heads_dir(path: str | Path) -> tuple[str, dict]:
    """(model name, {(layer, head): CertifiedHead}) from a folder written by
    ``qkverify heads`` (heads.json + LxxHyy.json certificates).  Raises
    QKInputError when heads.json or a certificate is missing, unreadable or
    not in the shape ``heads`` writes (a cells witness with more eigenvalues
    than 2·d_head or exponents beyond :data:`MAX_CELL_EXPONENT`)."""
    d = Path(path)
    try:
        doc = json.loads((d / "heads.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise QKInputError(f"{d}: no readable heads.json ({err.__class__.__name__}); run qkverify heads first") from None
    rows = doc.get("rows") if isinstance(doc, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise QKInputError(f"{d}/heads.json: not the table `qkverify heads` writes (an object whose rows are objects)")
    out = {}
    for k, row in enumerate(rows):
        # heads.json names the sizes d_model, d_head (the output vocabulary); the rows in memory N, n
        row = {**row, **{short: row[name] for name, short in (("d_model", "N"), ("d_head", "n")) if name in row}}
        try:
            layer, head, n = int(row["layer"]), int(row["head"]), int(row["n"])
            if min(layer, head, n) < 0:
                raise ValueError
        except (KeyError, ValueError, TypeError):
            raise QKInputError(f"{d}/heads.json: row {k} has no integer layer, head and d_head") from None
        cp = d / f"L{layer:02d}H{head:02d}.json"
        try:
            cert = json.loads(cp.read_text(encoding="utf-8"))
            w = next(w for w in cert["witnesses"] if w.get("kind") == "cells")
            eig = cells_bounds(w["cells"], int(w["grid_exponent"]), 2 * n)
        except (OSError, ValueError, KeyError, StopIteration, TypeError, AttributeError):
            raise QKInputError(f"{cp}: no readable certificate with a cells witness (heads --no-certificates?)") from None
        try:
            out[(layer, head)] = _head_from_row(row, eig, cp.name)
        except (KeyError, ValueError, TypeError):
            raise QKInputError(f"{d}/heads.json: row {k} (layer {layer}, head {head}) is not a row `qkverify heads` "
                               "writes") from None
    model = doc.get("model")
    return str((model.get("name") if isinstance(model, dict) else None) or d.name), out


def certify_model(spec: str, layers: list[int], jobs: int = 1, pre_norm_qk: bool = False,
                  progress=None, model=None, n_heads: int | None = None, n_kv_heads: int | None = None,
                  options: tuple = ()) -> tuple[str, dict]:
    """(model name, {(layer, head): CertifiedHead}) by certifying every head
    of ``layers`` of the model ``spec`` (the ``heads`` machinery; no
    certificate is written, the exact cross-check routes are skipped).
    ``model``: the model already loaded from ``spec`` (else it is loaded with ``n_heads``,
    ``n_kv_heads`` and the loader ``options``, e.g. ``(("layout", path), ("pre_softcap", True))``;
    a loaded model's own options are what worker processes reopen it with);
    ``progress(k)`` is called as heads finish.  Also sets each head's κ =
    ‖W_K‖_F‖W_Q‖_F/‖L‖_F (the float64 stage 1 of the error model)."""
    import numpy as np

    from ..heads.run import ModelRef, RunConfig, register, run_local
    from ..models import load_model

    if model is None:
        model = load_model(spec, n_heads, n_kv_heads, pre_norm_qk=pre_norm_qk, **dict(options))
    bad = [l for l in layers if not 0 <= l < model.n_layers]
    if bad:
        raise QKInputError(f"the table has layer {bad[0]}, {model.name} has layers 0..{model.n_layers - 1}")
    ref = ModelRef(str(model.path), model.sha256, n_heads, n_kv_heads, model.name, pre_norm_qk,
                   tuple(sorted(model.options.items())))
    register(ref, model)
    cfg = RunConfig(exact_signature="none", direct="none")
    out: dict = {}

    def on_result(res):
        hs, row = res["spectrum"], res["row"]
        eig = hs.cell_bounds() if hs is not None else []
        out[(int(row["layer"]), int(row["head"]))] = _head_from_row(row, eig)
        if progress:
            progress(1)

    run_local(ref, model, sorted(set(layers)), cfg, jobs, lambda l, h: None, on_result)
    # the float64 stage 1 of the pipeline: κ = ‖W_K‖_F‖W_Q‖_F/‖L‖_F (display; error model's assumption)
    for l in sorted(set(layers)):
        for rec in model.layer_heads(l):
            K, Q = np.asarray(rec.W_K, dtype=np.float64), np.asarray(rec.W_Q, dtype=np.float64)
            # ‖L‖_F² = tr((W_K W_Kᵀ)(W_Q W_Qᵀ)) (the Gram form, n × n)
            nl = math.sqrt(max(float(np.sum((K @ K.T) * (Q @ Q.T))), 0.0))
            h = out.get((rec.layer, rec.head))
            if h is not None and nl > 0:
                h.kappa = float(np.linalg.norm(K) * np.linalg.norm(Q) / nl)
    return model.name, out


# ---------------------------------------------------------------------------
# judging one row


def _scale(h: CertifiedHead):
    """(‖L‖² lower, upper) in the units of ``h.eig`` (from ‖S‖² = (1 − a)‖L‖²)."""
    if h.a is None or h.a >= 1 or not h.eig:
        return None
    s = 1 - h.a
    lo = hi = fmpq(0)
    for a0, a1 in h.eig:
        m2 = max(a0 * a0, a1 * a1)
        n2 = fmpq(0) if a0 <= 0 <= a1 else min(a0 * a0, a1 * a1)
        hi += m2
        lo += n2
    return lo / s, hi / s


def _pairs(h: CertifiedHead):
    pos = h.eig[:h.n_pos]
    neg = [(-b, -a) for a, b in reversed(h.eig[h.n_pos:])]
    k = max(len(pos), len(neg))
    z = (fmpq(0), fmpq(0))
    pos, neg = pos + [z] * (k - len(pos)), neg + [z] * (k - len(neg))
    return [(a0 - b1, a1 - b0) for (a0, a1), (b0, b1) in zip(pos, neg)]


def _frac(x: float) -> fmpq:
    """The exact value of a float."""
    p, q = float(x).as_integer_ratio()
    return fmpq(p, q)


def _beyond_interval(x: float, iv, err: float) -> bool:
    """Is the float x farther than err from the exact interval iv?"""
    xq, e = _frac(x), _frac(err)
    return xq < iv[0] - e or xq > iv[1] + e


def judge_row(row: dict, h: CertifiedHead, em: ErrorModel) -> dict:
    """The table row against the certified head: {item: (status, note)} for
    items ``signature``, ``a``, ``b``, ``c``, ``d``, ``face_c``, ``face_d``,
    ``c_vs_d`` (statuses :data:`AGREE`, :data:`LUCK`, :data:`WITHIN`,
    :data:`BEYOND`, :data:`UNDECIDED`, :data:`NA`)."""
    m = int(row["dim"])
    out: dict = {}
    if m != 2 * h.n:
        out["dim"] = (BEYOND, f"table dim {m} ≠ 2·d_head = {2 * h.n}")
        return out
    sc = _scale(h)
    dl = _frac(em.delta_rel(m))

    def above(x: fmpq, thr_rel: fmpq) -> bool:
        """x > thr_rel·‖L‖ for certain (x ≥ 0 in eig units)."""
        return sc is not None and x > 0 and x * x > thr_rel * thr_rel * sc[1]

    def within(x: fmpq, thr_rel: fmpq) -> bool:
        """x ≤ thr_rel·‖L‖ possibly (against the smallest ‖L‖)."""
        return sc is not None and (x <= 0 or x * x <= thr_rel * thr_rel * sc[1])

    # ---- signature on the restricted space
    zr = 2 * h.n - h.n_pos - h.n_neg
    if not (isinstance(row.get("n_pos"), int) and isinstance(row.get("n_neg"), int)):
        out["signature"] = (NA, "")
    else:
        tp, tn = row["n_pos"], row["n_neg"]
        mx = max((max(abs(a0), abs(a1)) for a0, a1 in h.eig), default=fmpq(0))
        cutq = _frac(em.cut)
        # |μ| > δ + cut·(max|μ| + δ) for certain: such an eigenvalue keeps its side
        def sure(lo_abs: fmpq) -> bool:
            if sc is None:
                return False
            thr = dl * (1 + cutq)
            # lo_abs − cut·max > thr·‖L‖ (‖L‖ at its largest)
            x = lo_abs - cutq * mx
            return above(x, thr)
        P = sum(1 for a0, a1 in h.eig if a0 > 0 and sure(a0))
        Nn = sum(1 for a0, a1 in h.eig if a1 < 0 and sure(-a1))
        small = len(h.eig) - P - Nn + zr
        if (tp, tn) == (h.n_pos, h.n_neg):
            out["signature"] = (AGREE, "") if small == 0 else (
                LUCK, f"{small} eigenvalue(s) within δ + cut of 0: the pipeline could have counted them otherwise")
        elif tp >= P and tn >= Nn:
            out["signature"] = (WITHIN, f"certified ({h.n_pos},{h.n_neg},{zr}) vs table ({tp},{tn},{m - tp - tn}); "
                                f"{small} eigenvalue(s) within δ + cut of 0")
        else:
            out["signature"] = (BEYOND, f"certified ({h.n_pos},{h.n_neg},{zr}) vs table ({tp},{tn},{m - tp - tn})")

    # ---- a, b, c, d
    a_t = row.get("a")
    if h.a is None or not isinstance(a_t, float) or math.isnan(a_t):
        out["a"] = (NA, "")
    else:
        err = em.err_a(float(a_t))
        ok = not _beyond_interval(a_t, (h.a, h.a), err)
        out["a"] = (AGREE, "") if ok else (BEYOND, f"table a = {a_t:.10g}, exact a = {float(h.a):.10g} (error model ±{err:.2g})")
    s = 1.0 - float(h.a) if h.a is not None else 1.0
    for k in "bcd":
        x = row.get(k)
        iv = getattr(h, k)
        if iv is None or not isinstance(x, float) or math.isnan(x):
            out[k] = (NA if iv is not None else UNDECIDED, "")
            continue
        err = em.err_b(s, m) if k == "b" else em.err_cd(x, m)
        out[k] = (AGREE, "") if not _beyond_interval(x, iv, err) else (
            BEYOND, f"table {k} = {x:.10g}, certified [{float(iv[0]):.10g}, {float(iv[1]):.10g}] (error model ±{err:.2g})")

    # ---- faces c = 0, d = 0
    pairs = _pairs(h)
    R = em.resolution(m)
    two_d = 2 * dl
    for k, key in (("c", "c0"), ("d", "d0")):
        ex = h.faces.get(key)
        x = row.get(k)
        if ex not in (True, False):
            out[f"face_{k}"] = (UNDECIDED, "the certified order α_j vs β_j is open")
            continue
        if not isinstance(x, float) or math.isnan(x):
            out[f"face_{k}"] = (NA, "")
            continue
        t0 = x == 0.0
        # signed margins: u_j for c (positive part), −u_j for d
        sgn = 1 if k == "c" else -1
        ivs = [(u0, u1) if sgn > 0 else (-u1, -u0) for u0, u1 in pairs]
        if ex:      # k = 0 exactly: every signed u_j ≤ 0; robust iff every one < −2δ and no zero eigenvalue
            robust = zr == 0 and all(above(-hi, two_d) for lo, hi in ivs)
        else:       # k > 0: robust iff some signed u_j > 2δ
            robust = any(above(lo, two_d) for lo, hi in ivs)
        name = f"{k} = 0" if ex else f"{k} > 0"
        if ex == t0:
            out[f"face_{k}"] = (AGREE, "") if robust else (
                LUCK, f"certified {name}, but its margin is ≤ 2δ: the table's answer is right by luck")
        else:
            # a robust face decides the pipeline's answer: every computed signed ũ_j < 0 (so the
            # table's value is 0.0), resp. some ũ_j > 0 (so it is > 0) -- crossing it is beyond the model
            iv = getattr(h, k)
            if robust:
                ok = False
            elif ex:
                ok = x <= em.resolution(m) + em.err_cd(0.0, m)
            else:
                ok = iv is not None and iv[0] <= _frac(R)
            told = f"table {k} = {x:.3g}" if not t0 else f"table {k} = 0"
            out[f"face_{k}"] = (WITHIN if ok else BEYOND, f"certified {name}, {told}")

    # ---- c vs d
    c_t, d_t = row.get("c"), row.get("d")
    if h.c is None or h.d is None or not all(isinstance(v, float) and not math.isnan(v) for v in (c_t, d_t)):
        out["c_vs_d"] = (UNDECIDED if h.c is None else NA, "")
    else:
        lo, hi = h.c[0] - h.d[1], h.c[1] - h.d[0]
        ex = ">" if lo > 0 else "<" if hi < 0 else ("=" if h.faces.get("c0") is True and h.faces.get("d0") is True
                                                    else "?")
        tb = ">" if c_t > d_t else "<" if c_t < d_t else "="
        err = _frac(em.err_cd(c_t, m) + em.err_cd(d_t, m))
        if ex == "?":
            out["c_vs_d"] = (UNDECIDED, "certified enclosures of c and d overlap")
        elif ex == tb:
            margin = min(abs(lo), abs(hi)) if ex != "=" else fmpq(0)
            out["c_vs_d"] = (AGREE, "") if margin > err else (LUCK, f"|c − d| ≤ {float(err):.2g}: right by luck")
        else:
            diff = _frac(c_t - d_t)
            ok = lo - err <= diff <= hi + err
            out["c_vs_d"] = (WITHIN if ok else BEYOND, f"certified c {ex} d, table c {tb} d")
    return out


def judge_verdict(judged: dict) -> str:
    """``beyond`` / ``within`` / ``luck`` / ``agree`` for a row's judgement."""
    st = {v[0] for v in judged.values()}
    return ("beyond" if BEYOND in st else "within" if WITHIN in st else "luck" if LUCK in st
            else "undecided" if UNDECIDED in st else "agree")
