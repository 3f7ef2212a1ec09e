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

Refused (QKInputError, one line), as the kernel refuses them
(:func:`qkverify.kernel.weights._npz_block`): a zip naming a member twice, or holding both
``X`` and ``X.npy`` (``np.load(f)["X"]`` is the former, the .npy the latter), a member whose
``.npy`` header numpy's own parser refuses, whose shape is not integers or whose size
disagrees with its header, a member whose CRC-32 is wrong or that is encrypted (numpy refuses
both), a non-float dtype (object arrays above all: they would need pickle), a float dtype
spelled otherwise than numpy writes it (:data:`DESCRS`), and a compressed member declaring
more than :data:`NPZ_MAX_INFLATE` bytes (2 GiB) -- a zip bomb is refused by its declared
size before anything is inflated, and a member's declared size bounds what zipfile inflates.
C and Fortran order (``np.savez`` of transposed arrays) are both read.
"""

from __future__ import annotations

import ast
import lzma
import re
import zipfile
import zlib
from pathlib import Path

import numpy as np

from ..errors import QKInputError
from . import positional as pos
from .base import HeadRecord, Model, exact_float, kv_head_of
from ..io.hashing import sha256_of

_BLOCK = re.compile(r"^blocks\.(\d+)\.attn\.(_?[Wb]_[QK])$")
#: the most bytes one compressed member may inflate to (the kernel's limit too)
NPZ_MAX_INFLATE = 1 << 31


def _npy_header(fh, version: tuple[int, int]):
    """(shape, fortran_order, dtype) by numpy's header parser (format 1.0, 2.0 or 3.0)."""
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(fh)
    if version == (2, 0):
        return np.lib.format.read_array_header_2_0(fh)
    try:
        from numpy.lib import _format_impl as fmt
    except ImportError:  # numpy 1.x
        fmt = np.lib.format
    return fmt._read_array_header(fh, version)


#: the .npy ``descr`` spellings read (numpy's own on a little-endian machine): the kernel
#: re-reads exactly these, so a member spelled otherwise ('f4', 'float32', '=f4', …) is refused
DESCRS = ("<f2", "<f4", "<f8")
_ZIP_READ_ERRORS = (zipfile.BadZipFile, ValueError, KeyError, OSError, NotImplementedError, RuntimeError, EOFError,
                    zlib.error, lzma.LZMAError)


def _descr_literal(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> object:
    """The ``descr`` of a member's .npy header as written (numpy has parsed the header already)."""
    with zf.open(info) as fh:
        head = fh.read(8)
        n = int.from_bytes(fh.read(2 if head[6] == 1 else 4), "little")
        text = fh.read(n).decode("utf-8" if head[6] == 3 else "latin1")
    return ast.literal_eval(text)["descr"]


def check_members(path: Path, keys: list[str]) -> dict[str, tuple]:
    """{key: (shape, dtype)} of the ``.npy`` members ``keys``, read from their headers (by
    numpy's own header parser), with the rules of the module docstring; each member is also read
    to its end once, so zipfile checks its CRC-32 as numpy's ``np.load`` does (a stored member is
    later memory-mapped, which checks nothing).  QKInputError otherwise."""
    out = {}
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            if len(names) != len(set(names)):
                raise QKInputError(f"{path}: not a valid .npz (a zip member is named twice)")
            both = sorted(n for n in set(names) if n + ".npy" in set(names))
            if both:
                raise QKInputError(f"{path}: not a valid .npz (members {both[0]!r} and {both[0] + '.npy'!r} are both "
                                   f"the array {both[0]!r}: np.load reads the first, qkverify would read the second)")
            for key in keys:
                info = zf.getinfo(key + ".npy")
                if info.compress_type != zipfile.ZIP_STORED and info.file_size > NPZ_MAX_INFLATE:
                    raise QKInputError(f"{path}: member {key} would inflate to {info.file_size} bytes, over the "
                                       f"limit of {NPZ_MAX_INFLATE} bytes for a compressed member")
                with zf.open(info) as fh:
                    version = np.lib.format.read_magic(fh)
                    shape, fortran, dtype = _npy_header(fh, version)
                    start = fh.tell()
                    while fh.read(1 << 22):  # to the end: a wrong CRC-32 raises here
                        pass
                if dtype.hasobject or dtype.kind != "f" or dtype.itemsize > 8:
                    raise QKInputError(f"{path}: array {key} has dtype {dtype}; weights must be float16/32/64 arrays")
                if not all(type(d) is int for d in shape):
                    raise QKInputError(f"{path}: not a valid .npz (array {key} has shape {shape!r}, not integers)")
                descr = _descr_literal(zf, info)
                if descr not in DESCRS:
                    raise QKInputError(f"{path}: array {key}'s .npy header spells its dtype {descr!r}; qkverify reads "
                                       f"float arrays spelled {', '.join(map(repr, DESCRS))}, as numpy writes them")
                if info.file_size != start + int(np.prod(shape, dtype=object)) * dtype.itemsize:
                    raise QKInputError(f"{path}: not a valid .npz (member {key} holds {info.file_size} bytes, "
                                       "its header needs another size)")
                out[key] = (tuple(shape), dtype)
    except QKInputError:
        raise
    except _ZIP_READ_ERRORS as err:
        raise QKInputError(f"{path}: not a valid .npz ({err.__class__.__name__}: "
                           f"{' '.join(str(err).split())[:160]})") from None
    return out


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
        bias_names = [b for b in ("b_Q", "b_K") if b in files]
        hdr = check_members(path, ["W_Q", "W_K"] + bias_names)
        sq, sk = hdr["W_Q"][0], hdr["W_K"][0]
        if len(sq) != 4 or len(sk) != 4:
            raise QKInputError(f"{path}: W_Q {sq} / W_K {sk} are not [n_layers, n_heads, d_model, d_head]")
        nl, H, N, dh = sq
        if sk[0] != nl or sk[2:] != (N, dh):
            raise QKInputError(f"{path}: W_K shape {sk} does not match W_Q {sq}")
        KV = sk[1]
        kv_head_of(0, H, KV)

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
        hdr = check_members(path, sorted(per.values()))
        q0, k0 = hdr[per[(0, "W_Q")]][0], hdr[per[(0, "W_K")]][0]
        if len(q0) != 3 or len(k0) != 3 or k0[1:] != q0[1:]:
            raise QKInputError(f"{path}: block 0 W_Q {q0} / W_K {k0} are not [n_heads, d_model, d_head]")
        H, N, dh = q0
        KV = k0[0]
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
