"""TransformerLens-style arrays in a ``.npz`` archive.

Accepted layouts:

* ``W_Q``, ``W_K`` of shape ``[n_layers, n_heads, d_model, d_head]``
  (``W_K`` may have fewer heads, ``[n_layers, n_kv_heads, d_model, d_head]``,
  for grouped-query attention);
* per layer ``blocks.{l}.attn.W_Q`` / ``blocks.{l}.attn.W_K`` (or
  ``_W_K``) of shape ``[n_heads, d_model, d_head]``.

TransformerLens computes q = x W_Q (x a row vector), so each head's
[d_model, d_head] slice is transposed to the (n, N) convention here.
Biases ``b_Q``/``b_K`` (``[n_layers, n_heads, d_head]``, or per block
``blocks.{l}.attn.b_Q`` / ``b_K`` / ``_b_K``) are loaded when present.

Memory: an uncompressed member (``np.savez``) is memory-mapped at its
offset inside the archive, mapped afresh for each layer and released after
the layer's heads are copied out; a compressed one (``np.savez_compressed``)
has to be inflated whole each time it is read.  The arrays carry no config,
so the positional encoding is recorded as unknown.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import numpy as np

from ..errors import QKInputError
from . import positional as pos
from .base import HeadRecord, Model, exact_float, kv_head_of
from ..io.hashing import sha256_of

_BLOCK = re.compile(r"^blocks\.(\d+)\.attn\.(_?[Wb]_[QK])$")


def _member(path: Path, z, key: str) -> np.ndarray:
    """Array ``key`` of an .npz: a read-only memory map when the member is
    stored uncompressed, else the inflated array."""
    member = key + ".npy"
    try:
        with zipfile.ZipFile(path) as zf:
            info = zf.getinfo(member)
            if info.compress_type != zipfile.ZIP_STORED:
                raise KeyError(member)
        with open(path, "rb") as fh:
            fh.seek(info.header_offset)
            local = fh.read(30)
            if local[:4] != b"PK\x03\x04":
                raise KeyError(member)
            nlen, xlen = int.from_bytes(local[26:28], "little"), int.from_bytes(local[28:30], "little")
            fh.seek(info.header_offset + 30 + nlen + xlen)
            version = np.lib.format.read_magic(fh)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
            else:
                raise KeyError(member)
            offset = fh.tell()
        if dtype.hasobject:
            raise KeyError(member)
        if int(np.prod(shape)) == 0:
            return np.zeros(shape, dtype)
        return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape, order="F" if fortran else "C")
    except (KeyError, ValueError, OSError, AttributeError):
        return z[key]


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
        del WQ, WK
        bias_names = [b for b in ("b_Q", "b_K") if b in files]

        def get(l: int) -> tuple[np.ndarray, np.ndarray, str, str]:
            return _member(path, z, "W_Q")[l], _member(path, z, "W_K")[l], "W_Q", "W_K"

        def get_bias(l: int) -> dict:
            return {b: (_member(path, z, b)[l], b) for b in bias_names}

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
        layers = sorted({l for l, r in per if r in ("W_Q", "W_K")})
        if not layers:
            raise QKInputError(f"{path}: unrecognised .npz layout (biases without W_Q/W_K)")
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
            return _member(path, z, a), _member(path, z, b), a, b

        def get_bias(l: int) -> dict:
            return {r: (_member(path, z, per[(l, r)]), per[(l, r)]) for r in ("b_Q", "b_K") if (l, r) in per}

        layout = "per-block"

    def layer_heads(l: int) -> list[HeadRecord]:
        WQl, WKl, nq, nk = get(l)
        if WQl.shape != (H, N, dh) or WKl.shape != (KV, N, dh):
            raise QKInputError(f"{path}: layer {l} shapes {WQl.shape}, {WKl.shape} differ from layer 0")
        bias = get_bias(l)
        for key, (arr, bn) in bias.items():
            want = (H if key == "b_Q" else KV, dh)
            if tuple(arr.shape) != want:
                raise QKInputError(f"{path}: {bn} has shape {tuple(arr.shape)} at layer {l}, expected {want}")
        out = []
        for h in range(H):
            g = kv_head_of(h, H, KV)
            iq = [l, h] if layout == "stacked" else [h]
            ik = [l, g] if layout == "stacked" else [g]
            src = {"file": path.name, "sha256": sha, "arch": "transformerlens",
                   "tensors": [
                       {"role": "W_Q", "name": nq, "index": iq, "layout": "[d_model, d_head]", "transform": "transpose"},
                       {"role": "W_K", "name": nk, "index": ik, "layout": "[d_model, d_head]", "transform": "transpose"}]}
            Wq = exact_float(np.array(WQl[h].T, order="C"))
            Wk = exact_float(np.array(WKl[g].T, order="C"))
            b_Q = exact_float(np.array(bias["b_Q"][0][h])) if "b_Q" in bias else None
            b_K = exact_float(np.array(bias["b_K"][0][g])) if "b_K" in bias else None
            if b_Q is not None or b_K is not None:
                src["biases"] = {k: {"name": bias[k][1], "index": (iq if k == "b_Q" else ik)}
                                 for k in ("b_Q", "b_K") if k in bias}
            out.append(HeadRecord(mname, l, h, g, Wq, Wk, src, layout=lay, positional=positional, b_Q=b_Q, b_K=b_K))
        return out

    lay = f"transformerlens ({layout}): W_Q, W_K [d_model, d_head] per head, transposed"
    positional = pos.unknown("TransformerLens arrays carry no config")
    return Model(mname, str(path), "transformerlens", sha, nl, H, KV, N, dh, layer_heads,
                 {"layout": lay, "npz_layout": layout, "positional": positional})
