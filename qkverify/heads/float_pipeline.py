"""The authors' float64 survey pipeline, reproduced for comparison only.

Nothing here decides anything: these numbers are shown beside the exact
answers and a head is flagged where they would decide a count or a face
differently (SPEC "The authors' pipeline", formalisation/README.md).

Per head: an orthonormal basis U of im(W_Kᵀ) + im(W_Qᵀ) by an unpivoted QR
of [W_Kᵀ W_Qᵀ] (N x 2n) in float64; the restricted form Uᵀ L U =
(W_K U)ᵀ(W_Q U) (2n x 2n) stored as float32; ``eigvalsh`` of its symmetric
part in float64; eigenvalues counted with a relative cut
(1e-9·max|λ| by default); lobes α, β and the profile with no cut.
"""

from __future__ import annotations

import numpy as np

DEFAULT_CUT = 1e-9


def _profile_from_eigs(lam: np.ndarray, frob_L: float, frob_T: float) -> dict:
    pos = np.sort(lam[lam > 0])[::-1]
    neg = np.sort(-lam[lam < 0])[::-1]
    m = max(len(pos), len(neg))
    al = np.zeros(m)
    be = np.zeros(m)
    al[: len(pos)] = pos
    be[: len(neg)] = neg
    diff = al - be
    a = frob_T / frob_L
    b = 2.0 * float(al @ be) / frob_L
    c = float(np.sum(np.maximum(diff, 0.0) ** 2)) / frob_L
    d = float(np.sum(np.maximum(-diff, 0.0) ** 2)) / frob_L
    nS = np.sqrt(float(lam @ lam))
    nd = np.sqrt(float(diff @ diff))
    na, nb = np.sqrt(float(al @ al)), np.sqrt(float(be @ be))
    rho = nb / na if na > 0 else float("nan")
    pairing = 1.0 - nd / nS if nS > 0 else float("nan")     # S = 0: undefined (display only)
    bound = 1.0 - abs(1.0 - rho) / np.sqrt(1.0 + rho * rho) if na > 0 else float("nan")
    return {"a": a, "b": b, "c": c, "d": d, "pairing": pairing, "rho": rho, "pairing_bound": bound,
            "face_b0": b == 0.0, "face_c0": c == 0.0, "face_d0": d == 0.0}


def authors_pipeline(W_Q: np.ndarray, W_K: np.ndarray, cut: float = DEFAULT_CUT) -> dict:
    """Float64 results of the authors' pipeline for one head (W_Q, W_K of
    shape (n, N)): counts with the relative ``cut``, profile, pairing.
    Float only -- for display and disagreement flags, never for decisions.
    When the float32 restricted form overflows, returns {"error": ...} and
    None counts instead of raising.
    """
    Q = np.asarray(W_Q, dtype=np.float64)
    K = np.asarray(W_K, dtype=np.float64)
    N = Q.shape[1]
    with np.errstate(over="ignore", invalid="ignore"):
        U, _ = np.linalg.qr(np.concatenate([K.T, Q.T], axis=1))
        Lr = ((K @ U).T @ (Q @ U)).astype(np.float32).astype(np.float64)
    if not np.all(np.isfinite(Lr)):
        # the pipeline stores the restricted form as float32: beyond 3.4e38 it overflows
        return {"error": "float64 pipeline overflowed (its float32 restricted form is not finite)",
                "n_pos": None, "n_neg": None, "n_zero": None, "cut": cut, "max_abs_eig": None, "min_abs_eig": None}
    S = 0.5 * (Lr + Lr.T)
    lam = np.linalg.eigvalsh(S)
    mx = float(np.max(np.abs(lam))) if lam.size else 0.0
    thr = cut * mx
    n_pos = int(np.sum(lam > thr))
    n_neg = int(np.sum(lam < -thr))
    T = 0.5 * (Lr - Lr.T)
    fL = float(np.sum(Lr * Lr))
    fT = float(np.sum(T * T))
    out = {"n_pos": n_pos, "n_neg": n_neg, "n_zero": N - n_pos - n_neg, "cut": cut, "max_abs_eig": mx,
           "min_abs_eig": float(np.min(np.abs(lam))) if lam.size else 0.0}
    if fL > 0:
        out.update(_profile_from_eigs(lam, fL, fT))
    return out


def full_eigvalsh(W_Q: np.ndarray, W_K: np.ndarray) -> np.ndarray:
    """``eigvalsh`` of the full N x N symmetric part of L = W_Kᵀ W_Q in
    float64 (the second bench baseline)."""
    Q = np.asarray(W_Q, dtype=np.float64)
    K = np.asarray(W_K, dtype=np.float64)
    L = K.T @ Q
    return np.linalg.eigvalsh(0.5 * (L + L.T))
