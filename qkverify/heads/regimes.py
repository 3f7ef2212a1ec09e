"""The paper's real-model check (§11.2 of Geshkovski et al.; docs/MATH.md) on any model the
loaders read: per head m, is (W_Q^m, W_K^m, V_m = W_O[:, m]·W_V[m, :]) a good triple?

Each head is evaluated by the per-unit checks of Definition 4.1 (``claims/clusters.py``)
on a :class:`qkverify.io.inputs.ValueHeadInput`: the spectrum is certified on the
d_head × d_head product X = W_V·W_O (the nonzero spectrum of V_m, with multiplicities),
φ₁ = W_O ψ for an eigenvector ψ of X, and ⟨Qφ₁, Kφ₁⟩ is reported for a unit φ₁ as in
the paper, without the model's 1/√d_head (``qk_phi1``), and with it (``qk_phi1_scaled``,
the paper's convention: the score the model computes is ⟨W_Q x, W_K y⟩/√d_head).
"""

from __future__ import annotations

import math

import numpy as np
from flint import arb

from ..claims.evaluate import evaluate
from ..errors import QKInputError
from ..exact.rational import ndarray_to_fmpq_mat
from ..io.inputs import ValueHeadInput

STATEMENT = "clusters_good_triple"
#: numbers as numbers: the eigenvalue of largest modulus (complex for many heads) is written as its real and
#: imaginary parts (the row's ``largest_eigenvalue`` "a+bi" is for the terminal and the JSON)
CSV_COLUMNS = ("model", "layer", "head", "kv_head", "d_head", "d_model", "top_condition", "largest_eigenvalue_re",
               "largest_eigenvalue_im", "lambda1", "abs_lambda2",
               "n_real_eigenvalues", "qk_phi1", "qk_phi1_scaled", "good_triple", "evidence", "certificate", "note")


def head_input(vh) -> ValueHeadInput:
    """The exact input of one head (a :class:`qkverify.models.values.ValueHead`)."""
    mats = [ndarray_to_fmpq_mat(a, f"{vh.key} {r}") for r, a in (("W_Q", vh.W_Q), ("W_K", vh.W_K),
                                                                  ("W_V", vh.W_V), ("W_O", vh.W_O))]
    return ValueHeadInput(*mats, ref=vh.ref or {}, source={"model": vh.model, "layer": vh.layer, "head": vh.head})


def _mid(v: dict | None) -> float | None:
    """Float display of a certificate value (midpoint of an enclosure)."""
    if v is None:
        return None
    if "exact" in v:
        p, _, q = v["exact"].partition("/")
        return int(p) / int(q or 1)
    lo, hi = (float(x) for x in v["enclosure"])
    return (lo + hi) / 2


def classify_head(vh) -> tuple[dict, dict | None]:
    """(table row, format-2 certificate or None) for one head.  The row's values are
    float displays of the certified ones; ``top_condition`` / ``good_triple`` are True,
    False or None (undecided)."""
    inp = head_input(vh)
    try:
        run = evaluate(STATEMENT, inp)
    except QKInputError as err:  # nothing decided (the enclosures are out of reach)
        row = {k: None for k in CSV_COLUMNS}
        row.update(model=vh.model, layer=vh.layer, head=vh.head, kv_head=vh.kv_head, d_head=vh.n, d_model=vh.N,
                   largest_eigenvalue="", evidence="undecided", note=str(err)[:300])
        return row, None
    rec = {r.meta.check: r for r in run.records}
    skipped = dict(run.skipped)
    top = rec.get("clusters.top_eigenvalue_simple_positive")
    good = rec.get("clusters.good_triple")
    lam = rec.get("clusters.top_eigenvalue")
    qk = rec.get("clusters.qk_phi1")
    sp = run.subject.memo("clusters_spectrum", lambda: None)  # the certified spectrum, when it was computed
    abs2, nreal, largest, re_im = None, None, "", (None, None)
    if sp is not None:
        mods = sorted(((float(abs(e.ball(64)).mid()), e) for e in sp.eigs for _ in range(e.mult)),
                      key=lambda t: -t[0])
        abs2 = mods[1][0] if len(mods) > 1 else None
        nreal = sum(e.mult for e in sp.eigs if e.real)
        largest = mods[0][1].describe() if mods else ""
        if mods:
            b = mods[0][1].ball(64)
            re_im = (float(b.real.mid()), 0.0 if mods[0][1].real else float(b.imag.mid()))
    qv = _mid(qk.result.value) if qk else None
    row = {
        "model": vh.model, "layer": vh.layer, "head": vh.head, "kv_head": vh.kv_head, "d_head": vh.n,
        "d_model": vh.N,
        "top_condition": top.result.value["bool"] if top else None,
        "lambda1": _mid(lam.result.value) if lam else None,
        "largest_eigenvalue": largest, "largest_eigenvalue_re": re_im[0], "largest_eigenvalue_im": re_im[1],
        "abs_lambda2": abs2, "n_real_eigenvalues": nreal,
        "qk_phi1": qv, "qk_phi1_scaled": qv / math.sqrt(vh.n) if qv is not None else None,
        "qk_phi1_enclosure": qk.result.value if qk else None,
        "good_triple": good.result.value["bool"] if good else None,
        "evidence": run.evidence,
        "note": "; ".join(filter(None, [vh.note] + [f"{c}: {r}" for c, r in skipped.items()
                                                    if not r.startswith("hypothesis")])),
    }
    cert = None
    if vh.ref:
        cert = run.certificate({"model": vh.model, "layer": vh.layer, "head": vh.head, "kv_head": vh.kv_head,
                                "value_matrix": "V_m = W_O[:, block m]·W_V[block m, :], biases dropped; spectrum "
                                                "certified on X = W_V·W_O (d_head × d_head)"})
    return row, cert


__all__ = ["CSV_COLUMNS", "STATEMENT", "classify_head", "head_input", "arb", "np"]
