"""GGUF checkpoints (llama.cpp), read with the ``gguf`` package.

Tensors ``blk.{l}.attn_q.weight`` / ``blk.{l}.attn_k.weight`` are
dequantised with ``gguf.quants.dequantize`` (any type it supports; F32/F16/
BF16 are read as they are) into float32 arrays of shape
``[n_heads·d_head, d_model]`` -- the exact values gguf's reference
dequantiser produces.  For Q4_0, Q4_1 and Q8_0 we also recompute every value
as d·q (+ m) in float64, which is exact for these formats (an fp16 scale
times a small integer plus an fp16 offset needs at most 53 bits), and record
how many float32 values differ (``dequant_inexact``; 0 on every file we
have seen).

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


def _exact_dequant_mismatches(raw: np.ndarray, qtype, deq: np.ndarray) -> int | None:
    """Number of entries where gguf's float32 dequantisation differs from
    the exact d·q (+ m) (computed in float64, exact for these types); None
    when the type is not checked here."""
    import gguf

    T = gguf.GGMLQuantizationType
    blocks = np.ascontiguousarray(raw).view(np.uint8).reshape(-1, gguf.GGML_QUANT_SIZES[qtype][1])
    if qtype == T.Q8_0:
        d = blocks[:, :2].copy().view(np.float16).astype(np.float64)
        q = blocks[:, 2:].copy().view(np.int8).astype(np.float64)
        exact = q * d
    elif qtype in (T.Q4_0, T.Q4_1):
        off = 2 if qtype == T.Q4_0 else 4
        d = blocks[:, :2].copy().view(np.float16).astype(np.float64)
        qs = blocks[:, off:]
        q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.float64)
        if qtype == T.Q4_0:
            exact = (q - 8) * d
        else:
            m = blocks[:, 2:4].copy().view(np.float16).astype(np.float64)
            exact = q * d + m
    else:
        return None
    return int(np.count_nonzero(exact.reshape(-1) != deq.astype(np.float64).reshape(-1)))


def load_gguf(path: str | Path, name: str | None = None, undo_rope_permutation: bool = True,
              pre_norm_qk: bool = False) -> Model:
    """Open a GGUF file and expose its attention heads.

    Raises QKInputError for unreadable files, architectures outside
    :data:`KNOWN_ARCHS`, missing metadata, fused QKV tensors, tensor shapes
    that do not match the head counts, and q/k normalisation
    (``attn_q_norm``) unless ``pre_norm_qk``.
    """
    import gguf
    from gguf import GGUFReader

    path = Path(path)
    try:
        reader = GGUFReader(str(path))
    except Exception as err:
        raise QKInputError(f"{path}: not a readable GGUF file ({err.__class__.__name__}: {err})") from None
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
    checks: dict[str, int] = {}

    def dequant(tname: str) -> tuple[np.ndarray, str]:
        t = tensors.get(tname)
        if t is None:
            raise QKInputError(f"{path}: missing tensor {tname}")
        qt = t.tensor_type
        try:
            W = gguf.quants.dequantize(t.data, qt)
        except NotImplementedError:
            raise QKInputError(f"{path}: {tname} has type {qt.name}, which gguf cannot dequantise") from None
        W = np.array(W, copy=True)
        if qt == gguf.GGMLQuantizationType.BF16 and W.dtype != np.float32:
            W = W.astype(np.float32)
        if W.dtype == np.float16:
            W = W.astype(np.float32)
        if len(t.shape) == 1 or W.ndim == 1:
            _release(reader, t)
            return W.reshape(-1), qt.name
        W = W.reshape(int(t.shape[1]), int(t.shape[0])) if W.ndim != 2 else W
        if not np.all(np.isfinite(W)):
            raise QKInputError(f"{path}: {tname} contains NaN or Inf")
        mis = _exact_dequant_mismatches(t.data, qt, W)
        if mis is not None:
            checks[tname] = mis
        _release(reader, t)
        return W, qt.name

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
                        "rope_heads": H if unpermute else None, "dequant_inexact": checks.get(tq)},
                       {"role": "W_K", "name": tk, "rows": kr, "ggml_type": ktn, "transform": transform,
                        "rope_heads": KV if unpermute else None, "dequant_inexact": checks.get(tk)}]}
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
            "layer_ids": layers, "dequant_checks": checks, "layout": layout, "positional": positional,
            "layout_source": f"GGUF general.architecture {arch!r}", "qk_norm": qk_norm}
    return Model(mname, str(path), f"gguf:{arch}", sha, len(layers), H, KV, Nm, dh, layer_heads, meta)
