"""TransformerLens-style arrays in a ``.npz`` archive.

Accepted layouts:

* ``W_Q``, ``W_K`` of shape ``[n_layers, n_heads, d_model, d_head]``
  (``W_K`` may have fewer heads, ``[n_layers, n_kv_heads, d_model, d_head]``,
  for grouped-query attention);
* per layer ``blocks.{l}.attn.W_Q`` / ``blocks.{l}.attn.W_K`` (or
  ``_W_K``) of shape ``[n_heads, d_model, d_head]``.

TransformerLens computes q = x W_Q (x a row vector), so each head's
[d_model, d_head] slice is transposed to the (n, N) convention here.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import numpy as np

from ..errors import QKInputError
from .base import HeadRecord, Model, exact_float, kv_head_of
from ..io.hashing import sha256_of

_BLOCK = re.compile(r"^blocks\.(\d+)\.attn\.(_?W_[QK])$")


def load_npz(path: str | Path, name: str | None = None) -> Model:
    """Open a TransformerLens-style ``.npz``.  Raises QKInputError for other
    layouts (listing the array names found) and inconsistent shapes."""
    path = Path(path)
    try:
        z = np.load(path, allow_pickle=False)
        files = list(z.files)
    except (OSError, ValueError, zipfile.BadZipFile) as err:
        raise QKInputError(f"{path}: not a readable .npz archive ({err.__class__.__name__})") from None
    sha = sha256_of(path)
    mname = name or path.stem

    if "W_Q" in files and "W_K" in files:
        WQ, WK = z["W_Q"], z["W_K"]
        if WQ.ndim != 4 or WK.ndim != 4:
            raise QKInputError(f"{path}: W_Q {WQ.shape} / W_K {WK.shape} are not [n_layers, n_heads, d_model, d_head]")
        nl, H, N, dh = WQ.shape
        if WK.shape[0] != nl or WK.shape[2:] != (N, dh):
            raise QKInputError(f"{path}: W_K shape {WK.shape} does not match W_Q {WQ.shape}")
        KV = WK.shape[1]
        kv_head_of(0, H, KV)

        def get(l: int) -> tuple[np.ndarray, np.ndarray, str, str]:
            return WQ[l], WK[l], "W_Q", "W_K"

        layout = "stacked"
    else:
        per: dict[tuple[int, str], str] = {}
        for f in files:
            m = _BLOCK.match(f)
            if m:
                per[(int(m.group(1)), m.group(2).lstrip("_"))] = f
        layers = sorted({l for l, _ in per})
        if not layers:
            raise QKInputError(
                f"{path}: unrecognised .npz layout (expected W_Q/W_K [n_layers, n_heads, d_model, d_head] "
                f"or blocks.{{l}}.attn.W_Q); found {', '.join(files[:8]) or 'no arrays'}")
        if layers != list(range(len(layers))):
            raise QKInputError(f"{path}: block indices {layers[:6]} are not 0..n_layers−1")
        for l in layers:
            if (l, "W_Q") not in per or (l, "W_K") not in per:
                raise QKInputError(f"{path}: block {l} lacks W_Q or W_K")
        nl = len(layers)
        q0, k0 = z[per[(0, "W_Q")]], z[per[(0, "W_K")]]
        if q0.ndim != 3 or k0.ndim != 3 or k0.shape[1:] != q0.shape[1:]:
            raise QKInputError(f"{path}: block 0 W_Q {q0.shape} / W_K {k0.shape} are not [n_heads, d_model, d_head]")
        H, N, dh = q0.shape
        KV = k0.shape[0]
        kv_head_of(0, H, KV)

        def get(l: int) -> tuple[np.ndarray, np.ndarray, str, str]:
            a, b = per[(l, "W_Q")], per[(l, "W_K")]
            return z[a], z[b], a, b

        layout = "per-block"

    def layer_heads(l: int) -> list[HeadRecord]:
        WQl, WKl, nq, nk = get(l)
        if WQl.shape != (H, N, dh) or WKl.shape != (KV, N, dh):
            raise QKInputError(f"{path}: layer {l} shapes {WQl.shape}, {WKl.shape} differ from layer 0")
        WQl, WKl = exact_float(np.asarray(WQl)), exact_float(np.asarray(WKl))
        out = []
        for h in range(H):
            g = kv_head_of(h, H, KV)
            iq = [l, h] if layout == "stacked" else [h]
            ik = [l, g] if layout == "stacked" else [g]
            src = {"file": path.name, "sha256": sha, "arch": "transformerlens",
                   "tensors": [
                       {"role": "W_Q", "name": nq, "index": iq, "layout": "[d_model, d_head]", "transform": "transpose"},
                       {"role": "W_K", "name": nk, "index": ik, "layout": "[d_model, d_head]", "transform": "transpose"}]}
            out.append(HeadRecord(mname, l, h, g, np.ascontiguousarray(WQl[h].T), np.ascontiguousarray(WKl[g].T), src))
        return out

    return Model(mname, str(path), "transformerlens", sha, nl, H, KV, N, dh, layer_heads, {"layout": layout})
