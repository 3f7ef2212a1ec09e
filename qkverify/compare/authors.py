"""The authors' survey columns computed as their scripts compute them, from a
head's weights, in float (for building tables to audit and for tests).

Per head: the restricted form F = (W_K R)ᵀ(W_Q R) with R from an unpivoted
QR of [W_Kᵀ W_Qᵀ] in float64, stored as float32 and read back as float64
(their extraction script), then every column of :data:`~.table.AUTHORS_COLUMNS`
with their formulas (``scripts/head_statistics.py``: counts with the cut
1e-9·max|λ|, lobes from all eigenvalues, no cut).  Display / test data
only: nothing here decides anything.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from .errormodel import CUT
from .table import AUTHORS_COLUMNS


def restricted_form(W_Q: np.ndarray, W_K: np.ndarray, storage=np.float32) -> np.ndarray:
    """Rᵀ(W_Kᵀ W_Q)R (2n × 2n) as their extraction stores it (float64
    arithmetic, ``storage`` dtype), returned as float64."""
    Q = np.asarray(W_Q, dtype=np.float64)
    K = np.asarray(W_K, dtype=np.float64)
    R, _ = np.linalg.qr(np.concatenate([K.T, Q.T], axis=1), mode="reduced")
    F = (K @ R).T @ (Q @ R)
    return F.astype(storage).astype(np.float64)


def _lobes(ev: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pos = np.sort(ev[ev > 0])[::-1]
    neg = np.sort(-ev[ev < 0])[::-1]
    k = max(pos.size, neg.size)
    return np.pad(pos, (0, k - pos.size)), np.pad(neg, (0, k - neg.size))


def statistics_row(L: np.ndarray, model: str, layer: int, head: int, kv_head: int, cut: float = CUT) -> dict:
    """The authors' per-head columns of one restricted form ``L`` (float64 m × m).

    Raises ValueError for L = 0 (their script refuses it too)."""
    S, T = 0.5 * (L + L.T), 0.5 * (L - L.T)
    norm_sq = float((L ** 2).sum())
    if norm_sq == 0.0:
        raise ValueError(f"{model} L{layer}H{head}: the form is zero")
    ev = np.linalg.eigvalsh(S)
    thr = cut * max(abs(float(ev[0])), abs(float(ev[-1])))
    n_pos, n_neg = int((ev > thr).sum()), int((ev < -thr).sum())
    lp, lm = _lobes(ev)
    u = lp - lm
    sym_sq = float((S ** 2).sum())
    np_, nm = float(np.linalg.norm(lp)), float(np.linalg.norm(lm))
    rho = nm / np_ if np_ > 0 else math.nan
    pairing = 1.0 - float(np.linalg.norm(u)) / math.sqrt(sym_sq)
    bound = 1.0 - abs(1.0 - rho) / math.sqrt(1.0 + rho ** 2)
    e = np.linalg.svd(L, compute_uv=False) ** 2
    return {
        "model": model, "layer": layer, "head": head, "kv_head": kv_head, "dim": L.shape[0],
        "symmetric_energy": sym_sq / norm_sq,
        "balance": 1.0 - abs(n_pos - n_neg) / (n_pos + n_neg) if n_pos + n_neg else math.nan,
        "pairing": pairing, "rho": rho, "pairing_bound": bound, "pairing_gap": bound - pairing,
        "lobe_departure": float(np.linalg.norm(lm - rho * lp)) / nm if nm > 0 else math.nan,
        "n_pos": n_pos, "n_neg": n_neg, "n_zero": ev.size - n_pos - n_neg,
        "a": float((T ** 2).sum()) / norm_sq,
        "b": float(2.0 * lp @ lm) / norm_sq,
        "c": float((u[u > 0] ** 2).sum()) / norm_sq,
        "d": float((u[u < 0] ** 2).sum()) / norm_sq,
        "b_sym": float(2.0 * lp @ lm) / sym_sq,
        "c_sym": float((u[u > 0] ** 2).sum()) / sym_sq,
        "d_sym": float((u[u < 0] ** 2).sum()) / sym_sq,
        "trace_ratio": abs(float(np.trace(L))) / math.sqrt(norm_sq),
        "participation_ratio": float(e.sum() ** 2 / (e ** 2).sum()),
        "stable_rank": float(e.sum() / e[0]),
        "leading_share": float(e[0] / e.sum()),
    }


def model_rows(model, layers: list[int] | None = None, name: str | None = None) -> list[dict]:
    """The authors' rows of every head of a loaded model (``qkverify.models``)."""
    out = []
    for l in (range(model.n_layers) if layers is None else layers):
        for rec in model.layer_heads(l):
            out.append(statistics_row(restricted_form(rec.W_Q, rec.W_K), name or model.name, rec.layer, rec.head,
                                      rec.kv_head))
    return out


def _cell(v) -> str:
    if isinstance(v, float):
        return "" if math.isnan(v) else repr(v)
    return str(v)


def write_table(rows: list[dict], path: str | Path, columns: list[str] | None = None) -> None:
    """CSV in the authors' format (their column order, floats by ``repr``,
    NaN as an empty cell, LF line endings)."""
    cols = columns or AUTHORS_COLUMNS
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(cols)
        for r in rows:
            w.writerow([_cell(r.get(c, "")) for c in cols])
