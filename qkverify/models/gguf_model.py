"""GGUF checkpoints (llama.cpp), read with the ``gguf`` package, every value exact.

``gguf.GGUFReader`` parses the file (it refuses a bad magic or version, duplicate keys,
duplicate tensor names, a non-power-of-two alignment and unknown ggml types); on top of it
:func:`check_layout` applies llama.cpp's rules it does not: tensor names shorter than 64
bytes, rows that are whole blocks, each tensor at the offset the previous ones end at
(padded to the alignment, so no two tensors share bytes) and inside the file.

Values.  ``blk.{l}.attn_q.weight`` / ``blk.{l}.attn_k.weight`` are decoded from the raw
blocks the reader exposes by :func:`exact_dequantize`: the *mathematical* value the block
layout defines (Q4_1: d·q + m with the f16 d, m taken exactly; the K-quants: d·sc·q − dmin·mn),
not gguf's or llama.cpp's float32 evaluation, which rounds when d and m are far apart.  The
values are computed in float64, which is exact for every type read (bounds in
:func:`exact_dequantize`), and each two-term sum is checked to be error-free.  The kernel
decodes the same blocks with integers (qkverify/kernel/gguf.py).

Head counts and RoPE settings come from the metadata
(``{arch}.attention.head_count``, ``{arch}.attention.head_count_kv``,
``{arch}.rope.*``).

RoPE row order.  llama.cpp's HF→GGUF converter reorders the rows of every
Q and K head for the llama architecture: within a head of d rows, HF row
``half·d/2 + i`` (``rotate_half`` pairing) becomes GGUF row ``2i + half``
(interleaved pairs).  :func:`unpermute_rope` undoes it, so the loaded
heads are in HF order, where the RoPE pairing of the original model holds.
The per-head form does not care: the same permutation P acts on the rows
of W_Q and of W_K (both heads have d_head rows), and
(P W_K)ᵀ (P W_Q) = W_Kᵀ PᵀP W_Q = W_Kᵀ W_Q because P is orthogonal, so L,
its signature and its profile are unchanged (tests check this).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import QKInputError
from . import positional as pos
from .base import HeadRecord, Model, kv_head_of
from ..io.hashing import sha256_of

#: architectures whose Q/K rows llama.cpp's converter permutes for RoPE
PERMUTED_ARCHS = ("llama",)
#: GGUF architectures read (separate attn_q / attn_k tensors); llama.cpp
#: rotates llama's (permuted) rows in adjacent pairs and the others' in
#: NeoX halves (rows as in HF)
KNOWN_ARCHS = ("llama", "qwen2", "qwen3", "olmo2")


def permute_rope(W: np.ndarray, n_heads: int) -> np.ndarray:
    """llama.cpp's converter reordering (HF -> GGUF) of a [n_heads·d, N]
    projection: per head, row half·d/2 + i goes to row 2i + half.  Exact
    (a row permutation).  Raises QKInputError if d is odd or rows do not
    split into n_heads heads."""
    r = W.shape[0]
    if n_heads <= 0 or r % n_heads or (r // n_heads) % 2:
        raise QKInputError(f"cannot RoPE-permute {r} rows into {n_heads} heads of even size")
    d = r // n_heads
    return W.reshape(n_heads, 2, d // 2, *W.shape[1:]).swapaxes(1, 2).reshape(W.shape)


def unpermute_rope(W: np.ndarray, n_heads: int) -> np.ndarray:
    """Inverse of :func:`permute_rope` (GGUF -> HF row order).  Exact."""
    r = W.shape[0]
    if n_heads <= 0 or r % n_heads or (r // n_heads) % 2:
        raise QKInputError(f"cannot RoPE-unpermute {r} rows into {n_heads} heads of even size")
    d = r // n_heads
    return W.reshape(n_heads, d // 2, 2, *W.shape[1:]).swapaxes(1, 2).reshape(W.shape)


def _release(reader, t) -> None:
    """Drop the pages of tensor t's bytes from this process's resident set
    (the reader maps the whole file; without this every layer read would
    stay resident).  Best effort: a no-op where madvise is unavailable."""
    import mmap

    mm = getattr(getattr(reader, "data", None), "_mmap", None)
    if mm is None or not hasattr(mm, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
        return
    try:
        start = int(t.data_offset)
        length = int(t.n_bytes)
        base = start - start % mmap.PAGESIZE
        mm.madvise(mmap.MADV_DONTNEED, base, start - base + length)
    except (AttributeError, OSError, ValueError):
        pass


def _field(reader, key: str):
    f = reader.fields.get(key)
    if f is None:
        return None
    try:
        return f.contents()
    except Exception:  # older gguf versions
        try:
            return f.parts[f.data[0]].tolist()[0]
        except Exception:
            return None


#: the ggml types read exactly (ggml-common.h layouts; values as in ggml-quants.c's dequantize_row_*)
EXACT_TYPES = ("F32", "F16", "BF16", "F64", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0",
               "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K")


def _f16(b: np.ndarray) -> np.ndarray:
    """The f16 held in 2 bytes per row of b, as float64 (exact: float16 ⊂ float64)."""
    return np.ascontiguousarray(b).view("<f2").astype(np.float64)


def _add_exact(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b in float64, checked error-free by Knuth's TwoSum (an AssertionError would mean a
    bound in :func:`exact_dequantize` is wrong).  A sum with an Inf or NaN term is not finite;
    it is left to :func:`exact_dequantize`'s refusal of non-rational values."""
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    if np.any(err[np.isfinite(s)] != 0):
        raise AssertionError("a dequantised value is not exact in float64")
    return s


def _scale_min_k4(sc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 8 six-bit scales and mins of a Q4_K/Q5_K block's 12 scale bytes (get_scale_min_k4)."""
    sc = sc.astype(np.int64)
    lo_s, lo_m = sc[:, 0:4] & 63, sc[:, 4:8] & 63
    hi_s = (sc[:, 8:12] & 15) | ((sc[:, 0:4] >> 6) << 4)
    hi_m = (sc[:, 8:12] >> 4) | ((sc[:, 4:8] >> 6) << 4)
    return np.concatenate([lo_s, hi_s], axis=1), np.concatenate([lo_m, hi_m], axis=1)


def exact_dequantize(data: np.ndarray, qtype) -> np.ndarray:
    """The exact values (float64, flat, in storage order) of the raw blocks ``data`` of ggml type
    ``qtype`` (a gguf ``GGMLQuantizationType``), from the block layouts of ggml-common.h.

    Exactness: an f16 is M·2^E with |M| < 2^11 and −24 ≤ E ≤ 5, so a product d·k with an
    integer |k| < 2^42 is exact in float64; the two-term types (Q4_1, Q5_1: d·q + m;
    Q2_K, Q4_K, Q5_K: d·sc·q − dmin·mn) have terms below 2^22·2^E and so a sum below
    2^(22+29+1)·2^min E: at most 52 bits, exact (and checked by :func:`_add_exact`).

    Raises QKInputError for a type outside :data:`EXACT_TYPES` and for Inf/NaN."""
    name = qtype.name
    if name not in EXACT_TYPES:
        raise QKInputError(f"ggml type {name} is not read exactly by qkverify (it reads {', '.join(EXACT_TYPES)})")
    with np.errstate(invalid="ignore", over="ignore"):  # Inf/NaN scales: refused below, no warning
        out = _exact_values(data, qtype, name)
    if not np.all(np.isfinite(out)):
        raise QKInputError(f"a {name} tensor holds Inf or NaN, which are not rational numbers")
    return out


def _exact_values(data: np.ndarray, qtype, name: str) -> np.ndarray:
    """The values of :func:`exact_dequantize`, Inf/NaN not yet refused."""
    import gguf

    if name in ("F32", "F16", "F64"):
        out = np.asarray(data).astype(np.float64).reshape(-1)
    elif name == "BF16":
        bits = np.ascontiguousarray(data).view("<u2").astype(np.uint32) << 16
        out = bits.view(np.float32).astype(np.float64).reshape(-1)
    else:
        size = gguf.GGML_QUANT_SIZES[qtype][1]
        B = np.ascontiguousarray(data).view(np.uint8).reshape(-1, size)
        i64 = np.int64
        if name in ("Q4_0", "Q4_1"):
            o = 2 if name == "Q4_0" else 4
            qs = B[:, o:o + 16].astype(i64)
            q = np.concatenate([qs & 15, qs >> 4], axis=1)
            d = _f16(B[:, 0:2])
            out = d * (q - 8) if name == "Q4_0" else _add_exact(d * q, np.broadcast_to(_f16(B[:, 2:4]), q.shape))
        elif name in ("Q5_0", "Q5_1"):
            o = 2 if name == "Q5_0" else 4
            qh = np.ascontiguousarray(B[:, o:o + 4]).view("<u4").astype(i64)
            bit = (qh >> np.arange(32)) & 1
            qs = B[:, o + 4:o + 20].astype(i64)
            q = np.concatenate([(qs & 15) | (bit[:, :16] << 4), (qs >> 4) | (bit[:, 16:] << 4)], axis=1)
            d = _f16(B[:, 0:2])
            out = d * (q - 16) if name == "Q5_0" else _add_exact(d * q, np.broadcast_to(_f16(B[:, 2:4]), q.shape))
        elif name == "Q8_0":
            out = _f16(B[:, 0:2]) * B[:, 2:34].view(np.int8).astype(i64)
        elif name in ("Q2_K", "Q3_K"):
            # values in (n, shift, half, l) order, sub-block is = 8n + 2·shift/2 + half
            qoff = 16 if name == "Q2_K" else 32
            qs = B[:, qoff:qoff + 64].astype(i64).reshape(-1, 2, 1, 2, 16)
            q = (qs >> (2 * np.arange(4)).reshape(1, 1, 4, 1, 1)) & 3  # (B, n, shift, half, l)
            if name == "Q2_K":
                sc = B[:, 0:16].astype(i64)
                d, dmin = _f16(B[:, 80:82]), _f16(B[:, 82:84])
                q = q.reshape(-1, 16, 16)
                out = _add_exact(d[:, :, None] * (sc & 15)[:, :, None] * q, -(dmin[:, :, None] * (sc >> 4)[:, :, None]))
            else:
                hm = B[:, 0:32].astype(i64).reshape(-1, 1, 1, 2, 16)
                mbit = (4 * np.arange(2)).reshape(1, 2, 1, 1, 1) + np.arange(4).reshape(1, 1, 4, 1, 1)
                q = (q - 4 * (((hm >> mbit) & 1) == 0)).reshape(-1, 16, 16)
                a = np.ascontiguousarray(B[:, 96:108]).view("<u4").astype(i64)
                k1, k2 = 0x03030303, 0x0F0F0F0F
                aux = np.stack([(a[:, 0] & k2) | ((a[:, 2] & k1) << 4), (a[:, 1] & k2) | (((a[:, 2] >> 2) & k1) << 4),
                                ((a[:, 0] >> 4) & k2) | (((a[:, 2] >> 4) & k1) << 4),
                                ((a[:, 1] >> 4) & k2) | (((a[:, 2] >> 6) & k1) << 4)], axis=1)
                sc = aux.astype("<u4").view(np.uint8).astype(i64).reshape(-1, 16) - 32
                out = _f16(B[:, 108:110])[:, :, None] * sc[:, :, None] * q
        elif name in ("Q4_K", "Q5_K"):
            sc, mn = _scale_min_k4(B[:, 4:16])
            qoff = 16 if name == "Q4_K" else 48
            ql = B[:, qoff:qoff + 128].astype(i64).reshape(-1, 4, 1, 32)
            q = ((ql >> (4 * np.arange(2)).reshape(1, 1, 2, 1)) & 15).reshape(-1, 8, 32)
            if name == "Q5_K":
                qh = B[:, 16:48].astype(i64).reshape(-1, 1, 32)
                q = q + 16 * ((qh >> np.arange(8).reshape(1, 8, 1)) & 1)
            d, dmin = _f16(B[:, 0:2]), _f16(B[:, 2:4])
            out = _add_exact(d[:, :, None] * sc[:, :, None] * q, -(dmin[:, :, None] * mn[:, :, None]))
        else:  # Q6_K
            ql = B[:, 0:128].astype(i64).reshape(-1, 2, 64)
            qh = B[:, 128:192].astype(i64).reshape(-1, 2, 32)
            sc = B[:, 192:208].view(np.int8).astype(i64).reshape(-1, 2, 8)
            lo, hi = ql[:, :, :32], ql[:, :, 32:]
            q = np.stack([(lo & 15) | ((qh & 3) << 4), (hi & 15) | (((qh >> 2) & 3) << 4),
                          (lo >> 4) | (((qh >> 4) & 3) << 4), (hi >> 4) | (((qh >> 6) & 3) << 4)], axis=2) - 32
            l16 = np.arange(32) // 16  # (B, n, k, l): scale sc[n, l//16 + 2k]
            s = sc[:, :, (l16[None, :] + 2 * np.arange(4)[:, None])]
            out = _f16(B[:, 208:210])[:, :, None, None] * s * q
        out = np.asarray(out, dtype=np.float64).reshape(-1)
    return out


def matrix_shape(t, path: Path) -> tuple[int, int]:
    """(rows, columns) = (ne1, ne0) of a GGUF tensor read as a matrix by ggml's rule: its
    dimensions padded with 1s to four, a matrix when ne2 = ne3 = 1 (so [ne0] is one row and
    [ne0, ne1, 1] the matrix [ne0, ne1], as llama.cpp's loader accepts them).  QKInputError
    (one line) for any other tensor."""
    ne = [int(x) for x in t.shape] + [1] * (4 - len(t.shape))
    if ne[2:] != [1, 1]:
        raise QKInputError(f"{path}: tensor {t.name} {[int(x) for x in t.shape]} is not a matrix (ggml dimensions "
                           "beyond the second must be 1)")
    return ne[1], ne[0]


def check_layout(reader, path: Path) -> None:
    """llama.cpp's rules (ggml/src/gguf.cpp, llama-model-loader) that ``GGUFReader`` does not
    apply: the file's own byte order (gguf-py reads a byte-swapped file, llama.cpp refuses it), non-empty keys, no array of arrays, names shorter than 64 bytes, at most 4 dimensions, rows of whole blocks, tensor i at
    data offset Σ_{j<i} pad(nbytes_j, alignment) (so tensors never overlap), and every tensor's
    bytes inside the file.  QKInputError (one line) naming the first rule broken."""
    import gguf

    if getattr(reader, "byte_order", "I") != "I":  # gguf-py swaps; llama.cpp refuses the file
        raise QKInputError(f"{path}: not a valid GGUF file (written in the other byte order, which llama.cpp "
                           "refuses)")
    size, end, align = path.stat().st_size, 0, int(reader.alignment)
    for key, f in reader.fields.items():
        A = gguf.GGUFValueType.ARRAY
        if not key or (f.types[:1] == [A] and not key.startswith("GGUF.") and int(f.parts[3][0]) == A):
            raise QKInputError(f"{path}: not a valid GGUF file (key {key!r}: an empty key or an array of arrays)")
    for t in reader.tensors:
        per, tsize = gguf.GGML_QUANT_SIZES[t.tensor_type]
        dims = [int(x) for x in t.shape]
        if len(t.name.encode("utf-8")) >= 64 or len(dims) > 4:
            raise QKInputError(f"{path}: not a valid GGUF file (tensor {t.name[:64]!r}: name of 64+ bytes or 5+ dims)")
        if (dims[0] if dims else 1) % per:
            raise QKInputError(f"{path}: not a valid GGUF file (tensor {t.name!r}: rows are not whole "
                               f"{t.tensor_type.name} blocks of {per})")
        off = int(t.data_offset) - int(reader.data_offset)
        if off != end:
            raise QKInputError(f"{path}: not a valid GGUF file (tensor {t.name!r} at data offset {off}, expected {end}: "
                               "tensors overlap or are out of order)")
        nbytes = int(np.prod(dims, dtype=object)) // per * tsize
        if int(t.data_offset) + nbytes > size:
            raise QKInputError(f"{path}: not a valid GGUF file (tensor {t.name!r}: data is not within the file)")
        end = off + nbytes + (-nbytes) % align


def load_gguf(path: str | Path, name: str | None = None, undo_rope_permutation: bool = True,
              pre_norm_qk: bool = False) -> Model:
    """Open a GGUF file and expose its attention heads.

    Raises QKInputError for unreadable files, architectures outside
    :data:`KNOWN_ARCHS`, missing metadata, fused QKV tensors, tensor shapes
    that do not match the head counts, and q/k normalisation
    (``attn_q_norm``) unless ``pre_norm_qk``.
    """
    from gguf import GGUFReader

    path = Path(path)
    try:
        reader = GGUFReader(str(path))
    except Exception as err:
        msg = " ".join(str(err).split())[:200]
        raise QKInputError(f"{path}: not a readable GGUF file ({err.__class__.__name__}: {msg})") from None
    check_layout(reader, path)
    arch = _field(reader, "general.architecture")
    if not isinstance(arch, str):
        raise QKInputError(f"{path}: GGUF metadata has no general.architecture")
    if arch not in KNOWN_ARCHS:
        raise QKInputError(f"{path}: GGUF architecture {arch!r} is not one qkverify reads ({', '.join(KNOWN_ARCHS)}); "
                           "refusing rather than guessing its attention layout")
    tensors = {t.name: t for t in reader.tensors}
    names = list(tensors)
    norms = [n for n in names if n.endswith(".attn_q_norm.weight") or n.endswith(".attn_k_norm.weight")]
    if norms and not pre_norm_qk:
        raise QKInputError(f"{path}: {arch} normalises q and k after the projections ({norms[0]}), so its attention "
                           "score is not a fixed bilinear form; pass --pre-norm-qk to analyse the "
                           "pre-normalisation W_Kᵀ W_Q")
    qk_norm = f"q/k normalised after the projections ({norms[0]})" if norms else None
    layers = sorted({int(n.split(".")[1]) for n in names if n.startswith("blk.") and n.endswith(".attn_q.weight")})
    if not layers:
        fused = [n for n in names if "attn_qkv" in n]
        hint = " (fused attn_qkv tensors are not supported)" if fused else ""
        raise QKInputError(
            f"{path}: unrecognised GGUF layout{hint}; no blk.*.attn_q.weight tensors; "
            f"e.g. {', '.join(names[:8])}")
    H = _field(reader, f"{arch}.attention.head_count")
    KV = _field(reader, f"{arch}.attention.head_count_kv")
    if isinstance(H, list) or isinstance(KV, list):
        raise QKInputError(f"{path}: per-layer head counts are not supported")
    if not H:
        raise QKInputError(f"{path}: GGUF metadata has no {arch}.attention.head_count")
    H = int(H)
    KV = int(KV) if KV else H
    N = _field(reader, f"{arch}.embedding_length")
    rope = {}
    for key in reader.fields:
        if key.startswith(f"{arch}.rope."):
            v = _field(reader, key)
            rope[key[len(arch) + 1:]] = v if isinstance(v, (int, float, str, list)) else str(v)
    permuted = arch in PERMUTED_ARCHS
    unpermute = undo_rope_permutation and permuted
    mname = name or _field(reader, "general.name") or path.stem
    mname = str(mname).strip() or path.stem
    sha = sha256_of(path)

    def dequant(tname: str) -> tuple[np.ndarray, str]:
        t = tensors.get(tname)
        if t is None:
            raise QKInputError(f"{path}: missing tensor {tname}")
        qt = t.tensor_type
        try:
            W = exact_dequantize(t.data, qt)
        except QKInputError as err:
            raise QKInputError(f"{path}: {tname}: {err}") from None
        _release(reader, t)
        return W.reshape(matrix_shape(t, path)), qt.name

    first_q = dequant(f"blk.{layers[0]}.attn_q.weight")[0]
    if first_q.shape[0] % H:
        raise QKInputError(f"{path}: attn_q has {first_q.shape[0]} rows, not a multiple of head_count {H}")
    dh = first_q.shape[0] // H
    Nm = first_q.shape[1]
    if N and int(N) != Nm:
        raise QKInputError(f"{path}: embedding_length {N} but attn_q has {Nm} columns")
    kv_head_of(0, H, KV)
    layout = (f"gguf:{arch}: separate attn_q/attn_k [out, in], grouped-query attention"
              + ("; rows un-permuted to HF order" if unpermute else ""))
    base = rope.get("rope.freq_base")
    rdim = rope.get("rope.dimension_count")
    if permuted and not unpermute:
        pairing, rows = "interleaved", "GGUF order (llama.cpp's converter permuted each head's rows)"
    elif permuted:
        pairing, rows = "half_split", "HF order (llama.cpp's row permutation undone)"
    else:
        pairing, rows = "half_split", "as stored (llama.cpp rotates NeoX halves for this architecture)"
    positional = pos.rope(dh, base if base is not None else 10000.0,
                          f"GGUF {arch}.rope.freq_base" if base is not None else "llama.cpp default",
                          pairing, rotary_dim=int(rdim) if rdim else dh, rows=rows,
                          scaling={k: v for k, v in rope.items() if "scaling" in k} or None)

    def layer_heads(i: int) -> list[HeadRecord]:
        l = layers[i]
        tq, tk = f"blk.{l}.attn_q.weight", f"blk.{l}.attn_k.weight"
        Wq, qtn = dequant(tq)
        Wk, ktn = dequant(tk)
        if Wq.shape != (H * dh, Nm) or Wk.shape != (KV * dh, Nm):
            raise QKInputError(f"{path}: layer {l}: attn_q {Wq.shape} / attn_k {Wk.shape} do not match "
                               f"{H}/{KV} heads of size {dh} over d_model {Nm}")
        transform = "dequantize"
        bq_name, bk_name = f"blk.{l}.attn_q.bias", f"blk.{l}.attn_k.bias"
        bq = dequant(bq_name)[0].reshape(-1) if bq_name in tensors else None
        bk = dequant(bk_name)[0].reshape(-1) if bk_name in tensors else None
        if (bq is not None and bq.shape != (H * dh,)) or (bk is not None and bk.shape != (KV * dh,)):
            raise QKInputError(f"{path}: layer {l}: attention biases do not match {H}/{KV} heads of size {dh}")
        if unpermute:
            Wq = unpermute_rope(Wq, H)
            Wk = unpermute_rope(Wk, KV)
            bq = unpermute_rope(bq.reshape(-1, 1), H).reshape(-1) if bq is not None else None
            bk = unpermute_rope(bk.reshape(-1, 1), KV).reshape(-1) if bk is not None else None
            transform = "dequantize; undo llama.cpp RoPE row permutation"
        out = []
        for h in range(H):
            g = kv_head_of(h, H, KV)
            qr, kr = [h * dh, (h + 1) * dh], [g * dh, (g + 1) * dh]
            src = {"file": path.name, "sha256": sha, "arch": f"gguf:{arch}",
                   "tensors": [
                       {"role": "W_Q", "name": tq, "rows": qr, "ggml_type": qtn, "transform": transform,
                        "rope_heads": H if unpermute else None},
                       {"role": "W_K", "name": tk, "rows": kr, "ggml_type": ktn, "transform": transform,
                        "rope_heads": KV if unpermute else None}]}
            b_Q = np.array(bq[qr[0]:qr[1]]) if bq is not None else None
            b_K = np.array(bk[kr[0]:kr[1]]) if bk is not None else None
            if b_Q is not None or b_K is not None:
                src["biases"] = {k: {"name": nm, "index": r, "transform": transform}
                                 for k, nm, r, v in (("b_Q", bq_name, qr, b_Q), ("b_K", bk_name, kr, b_K))
                                 if v is not None}
            out.append(HeadRecord(mname, i, h, g, np.array(Wq[qr[0]:qr[1]], order="C"),
                                  np.array(Wk[kr[0]:kr[1]], order="C"), src, layout=layout,
                                  positional=positional, pre_norm_qk=qk_norm is not None, qk_norm=qk_norm,
                                  b_Q=b_Q, b_K=b_K))
        return out

    meta = {"rope": rope, "rope_rows": "HF order (llama.cpp permutation undone)" if unpermute else
            ("GGUF order (permuted by llama.cpp)" if permuted else "as stored"),
            "layer_ids": layers, "values": "exact (blocks decoded as the format defines them)", "layout": layout, "positional": positional,
            "layout_source": f"GGUF general.architecture {arch!r}", "qk_norm": qk_norm}
    return Model(mname, str(path), f"gguf:{arch}", sha, len(layers), H, KV, Nm, dh, layer_heads, meta)
