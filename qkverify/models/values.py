"""Value and output projections per head, for the clustering regimes (docs/MATH.md, Clustering regimes).

The paper's real-model check builds, per head m, the value matrix
V_m = W_O[:, block m] · W_V[block m, :] (d_model × d_model, rank ≤ d_head; biases
dropped) and the query–key pair (W_Q^m, W_K^m).  This module cuts the four slices
out of every checkpoint the loaders read, exactly (binary floats are the dyadic
rationals they are; GGUF blocks are dequantised exactly as d·q (+ m) in float64):

==========  ====================================================  ==============================================
family      W_V (rows of the value weight, head g = kv head)      W_O (the head's block of the output projection)
==========  ====================================================  ==============================================
bert        ``attention.self.value`` rows g·d:(g+1)·d              ``attention.output.dense`` columns h·d:(h+1)·d
opt/llama/  ``v_proj`` rows                                        ``out_proj`` / ``o_proj`` columns
gptj
gpt2        ``c_attn`` V block (columns 2N + h·d … of Conv1D)      ``c_proj`` rows h·d:(h+1)·d of Conv1D, transposed
bloom/neox  fused rows 3·h·d + 2d : 3·h·d + 3d                    ``dense`` columns
mpt         fused rows H·d + KV·d + g·d …                         ``out_proj`` columns
gguf        ``attn_v`` rows (as stored)                            ``attn_output`` columns
npz (TL)    ``W_V[l, g]ᵀ``                                         ``W_O[l, h]ᵀ``
==========  ====================================================  ==============================================

W_Q and W_K are cut as the loaders cut them (:meth:`qkverify.models.layouts.Plan.head_slices`);
for GGUF they are taken in the stored row order: llama.cpp permutes the rows of each Q
and K head the same way, and ⟨Pq, Pk⟩ = ⟨q, k⟩, so ⟨Qφ, Kφ⟩ does not change.
Every head also carries the reference (file, SHA-256, tensor slices) from which the
kernel re-reads the four matrices; npz archives and heads whose tensors sit in
different shards have none (no certificate)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np

from ..errors import QKInputError
from ..io.hashing import sha256_of
from . import resolve_model
from .base import HeadShape, kv_head_of, parse_layers

__all__ = ["ValueHead", "ValueModel", "open_value_model", "exact_gguf_matrix", "parse_layers"]

#: V and O tensors (after the checkpoint's prefix) of the separate-projection families
_SEPARATE_VO = {
    "bert": ("encoder.layer.{l}.attention.self.value.weight", "encoder.layer.{l}.attention.output.dense.weight"),
    "opt": ("decoder.layers.{l}.self_attn.v_proj.weight", "decoder.layers.{l}.self_attn.out_proj.weight"),
    "llama": ("layers.{l}.self_attn.v_proj.weight", "layers.{l}.self_attn.o_proj.weight"),
    "gptj": ("h.{l}.attn.v_proj.weight", "h.{l}.attn.out_proj.weight"),
}
#: output projections of the fused families
_FUSED_O = {
    "gpt2": "h.{l}.attn.c_proj.weight",
    "bloom": "h.{l}.self_attention.dense.weight",
    "gpt_neox": "layers.{l}.attention.dense.weight",
    "mpt": "blocks.{l}.attn.out_proj.weight",
}


@dataclass
class ValueHead(HeadShape):
    """One head's exact W_Q, W_K, W_V (n × N) and W_O (N × n) as float arrays (their
    entries are the checkpoint's exact values), and the reference the kernel re-reads
    them from (None when it cannot: ``note`` says why)."""

    model: str
    layer: int
    head: int
    kv_head: int
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray
    ref: dict | None
    note: str = ""


@dataclass
class ValueModel:
    """A checkpoint opened for the value circuit: head counts and a per-layer head factory."""

    name: str
    path: str
    arch: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_model: int
    d_head: int
    layer_heads: object  # Callable[[int], list[ValueHead]]
    meta: dict = field(default_factory=dict)

    def heads(self, layers: list[int] | None = None) -> Iterator[ValueHead]:
        """Every head of the selected layers (QKInputError for a layer out of range)."""
        sel = list(range(self.n_layers)) if layers is None else list(layers)
        bad = [l for l in sel if not 0 <= l < self.n_layers]
        if bad:
            raise QKInputError(f"layer {bad[0]} out of range: {self.name} has layers 0..{self.n_layers - 1}")
        for l in sel:
            yield from self.layer_heads(l)


def _finite(a: np.ndarray, what: str) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype == np.float16:
        a = a.astype(np.float32)
    if a.dtype not in (np.float32, np.float64):
        raise QKInputError(f"{what}: unsupported dtype {a.dtype}")
    if not np.all(np.isfinite(a)):
        raise QKInputError(f"{what} contains NaN or Inf, which are not rational numbers")
    return np.array(a, order="C", copy=True)


# ---------------------------------------------------------------------------
# safetensors


def _open_safetensors(path: Path, name: str | None, pre_norm_qk: bool) -> ValueModel:
    from .layouts import resolve
    from .safetensors_io import Checkpoint
    from .safetensors_models import model_name_from_path, read_config

    ck = Checkpoint.open(path)
    cfg = read_config(path)
    plan = resolve(ck.names, ck.shape, cfg, path, None, None, pre_norm_qk)
    fam = plan.family.name
    if fam not in _SEPARATE_VO and fam not in _FUSED_O:
        raise QKInputError(f"{path}: the value/output projections of {plan.arch} checkpoints are not read "
                           f"(regimes reads {', '.join(sorted(set(_SEPARATE_VO) | set(_FUSED_O)))} layouts)")
    H, KV, N, d = plan.H, plan.KV, plan.N, plan.dh
    mname = name or model_name_from_path(path if path.is_file() else path / "model.safetensors")
    shas: dict = {}

    def sha(f) -> str:
        if f.path not in shas:
            shas[f.path] = sha256_of(f.path)
        return shas[f.path]

    def names(lid: int) -> tuple[str | None, str]:
        if fam in _SEPARATE_VO:
            v, o = _SEPARATE_VO[fam]
            return plan.prefix + v.format(l=lid), plan.prefix + o.format(l=lid)
        return None, plan.prefix + _FUSED_O[fam].format(l=lid)

    def v_slice(h: int, g: int) -> tuple[str, int, int, int]:
        kind = plan.family.kind
        if kind == "separate":
            return "v", 0, g * d, (g + 1) * d
        if kind == "gpt2":
            return "qkv", 1 if plan.orientation == "conv1d" else 0, 2 * N + h * d, 2 * N + (h + 1) * d
        if kind == "interleaved":
            return "qkv", 0, 3 * h * d + 2 * d, 3 * h * d + 3 * d
        return "qkv", 0, H * d + KV * d + g * d, H * d + KV * d + (g + 1) * d

    def cut(tname: str, rows: bool, a: int, b: int, transpose: bool, role: str) -> tuple[np.ndarray, dict, object]:
        W = ck.get(tname)
        S = W[a:b] if rows else W[:, a:b]
        S = _finite(S.T if transpose else S, f"{path}: {tname}")
        ref = {"role": role, "name": tname, ("rows" if rows else "cols"): [a, b]}
        if transpose:
            ref["transpose"] = True
        return S, ref, ck.file_of(tname)

    def layer_heads(i: int) -> list[ValueHead]:
        lid = plan.layer_ids[i]
        tq = plan.tensors[lid]
        vname, oname = names(lid)
        tens = dict(tq)
        if vname is not None:
            tens["v"] = vname
        for t in list(tens.values()) + [oname]:
            if t not in ck.where:
                raise QKInputError(f"{path}: no tensor {t} (the value/output projection of layer {lid})")
        out = []
        for h in range(H):
            g = kv_head_of(h, H, KV)
            (kq, axq, aq, bq), (kk, axk, ak, bk) = plan.head_slices(h)
            kv, axv, av, bv = v_slice(h, g)
            Wq, rq, fq = cut(tens[kq], axq == 0, aq, bq, axq == 1, "W_Q")
            Wk, rk, fk = cut(tens[kk], axk == 0, ak, bk, axk == 1, "W_K")
            Wv, rv, fv = cut(tens[kv], axv == 0, av, bv, axv == 1, "W_V")
            conv = fam == "gpt2" and plan.orientation == "conv1d"
            Wo, ro, fo = cut(oname, conv, h * d, (h + 1) * d, conv, "W_O")
            files = {f.path for f in (fq, fk, fv, fo)}
            ref, note = None, ""
            if len(files) == 1:
                ref = {"file": fq.path.name, "sha256": sha(fq), "n": d, "N": N, "tensors": [rq, rk, rv, ro]}
            else:
                note = "W_Q, W_K, W_V, W_O sit in different shards: no certificate (the kernel reads one file)"
            out.append(ValueHead(mname, i, h, g, Wq, Wk, Wv, Wo, ref, note))
        return out

    return ValueModel(mname, str(path), plan.arch, len(plan.layer_ids), H, KV, N, d, layer_heads,
                      {"layout": plan.layout, "family": fam,
                       "biases": "value/output biases are dropped (the paper's V_m has none)"})


# ---------------------------------------------------------------------------
# GGUF


def exact_gguf_matrix(t) -> np.ndarray:
    """The exact values of a 2-d GGUF tensor as a float64 array [ne1, ne0] (rows = output
    units, as a torch ``[out, in]`` weight): F32/F16/BF16 as stored, Q8_0 = d·q, Q4_0 =
    d·(q − 8), Q4_1 = d·q + m with fp16 d, m (exact in float64: at most 11 + 11 + 5 bits).
    Raises QKInputError for other quantisation types (their exact values are not read here)."""
    import gguf

    T = gguf.GGMLQuantizationType
    qt = t.tensor_type
    ne0, ne1 = int(t.shape[0]), int(t.shape[1]) if len(t.shape) > 1 else 1
    raw = np.ascontiguousarray(t.data)
    if qt in (T.F32, T.F16):
        out = raw.astype(np.float64)
    elif qt == T.BF16:
        out = (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    elif qt in (T.Q8_0, T.Q4_0, T.Q4_1):
        blocks = raw.view(np.uint8).reshape(-1, gguf.GGML_QUANT_SIZES[qt][1])
        dq = blocks[:, :2].copy().view(np.float16).astype(np.float64)
        if qt == T.Q8_0:
            out = blocks[:, 2:].copy().view(np.int8).astype(np.float64) * dq
        else:
            off = 2 if qt == T.Q4_0 else 4
            qs = blocks[:, off:]
            q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.float64)
            out = (q - 8) * dq if qt == T.Q4_0 else q * dq + blocks[:, 2:4].copy().view(np.float16).astype(np.float64)
    else:
        raise QKInputError(f"{t.name}: GGUF type {qt.name}: exact dequantisation is implemented for F32, F16, BF16, "
                           "Q8_0, Q4_0 and Q4_1 only")
    out = out.reshape(ne1, ne0)
    if not np.all(np.isfinite(out)):
        raise QKInputError(f"{t.name} contains NaN or Inf")
    return out


def _open_gguf(path: Path, name: str | None) -> ValueModel:
    from .gguf_model import load_gguf

    m = load_gguf(path, name)  # validates the architecture, head counts and shapes
    from gguf import GGUFReader

    reader = GGUFReader(str(path))
    tensors = {t.name: t for t in reader.tensors}
    H, KV, d, N = m.n_heads, m.n_kv_heads, m.d_head, m.d_model
    layer_ids = m.meta["layer_ids"]
    sha = m.sha256

    def layer_heads(i: int) -> list[ValueHead]:
        l = layer_ids[i]
        mats = {}
        for role, suffix in (("W_Q", "attn_q"), ("W_K", "attn_k"), ("W_V", "attn_v"), ("W_O", "attn_output")):
            tn = f"blk.{l}.{suffix}.weight"
            if tn not in tensors:
                raise QKInputError(f"{path}: missing tensor {tn}")
            mats[role] = (tn, exact_gguf_matrix(tensors[tn]))
        want = {"W_Q": (H * d, N), "W_K": (KV * d, N), "W_V": (KV * d, N), "W_O": (N, H * d)}
        for role, (tn, A) in mats.items():
            if A.shape != want[role]:
                raise QKInputError(f"{path}: {tn} has shape {A.shape}, expected {want[role]}")
        out = []
        for h in range(H):
            g = kv_head_of(h, H, KV)
            sl = {"W_Q": ("rows", h), "W_K": ("rows", g), "W_V": ("rows", g), "W_O": ("cols", h)}
            arrs, refs = {}, []
            for role, (how, k) in sl.items():
                tn, A = mats[role]
                a, b = k * d, (k + 1) * d
                arrs[role] = np.array(A[a:b] if how == "rows" else A[:, a:b], order="C")
                refs.append({"role": role, "name": tn, how: [a, b]})
            ref = {"file": path.name, "sha256": sha, "n": d, "N": N, "tensors": refs}
            out.append(ValueHead(m.name, i, h, g, arrs["W_Q"], arrs["W_K"], arrs["W_V"], arrs["W_O"], ref,
                                 "GGUF: Q and K rows in llama.cpp's stored order (⟨Qφ, Kφ⟩ is unchanged)"))
        return out

    return ValueModel(m.name, str(path), m.arch, m.n_layers, H, KV, N, d, layer_heads,
                      {"layout": "gguf: attn_q/attn_k/attn_v rows, attn_output columns (exact dequantisation)",
                       "family": "gguf", "biases": "value/output biases are dropped"})


# ---------------------------------------------------------------------------
# TransformerLens .npz


def _open_npz(path: Path, name: str | None) -> ValueModel:
    from .npz_model import load_npz

    m = load_npz(path, name)
    z = np.load(path, allow_pickle=False)
    if not {"W_V", "W_O"} <= set(z.files):
        raise QKInputError(f"{path}: the value circuit needs W_V [n_layers, n_heads, d_model, d_head] and "
                           "W_O [n_layers, n_heads, d_head, d_model] (TransformerLens names)")
    WV, WO = z["W_V"], z["W_O"]
    H, KV, N, d = m.n_heads, m.n_kv_heads, m.d_model, m.d_head
    if WV.shape[1:] != (KV, N, d) or WO.shape[1:] != (H, d, N):
        raise QKInputError(f"{path}: W_V {WV.shape} / W_O {WO.shape} do not match {H}/{KV} heads of size {d}")

    def layer_heads(l: int) -> list[ValueHead]:
        out = []
        for rec in m.layer_heads(l):
            out.append(ValueHead(m.name, l, rec.head, rec.kv_head, rec.W_Q, rec.W_K,
                                 _finite(WV[l, rec.kv_head].T, f"{path}: W_V"), _finite(WO[l, rec.head].T, f"{path}: W_O"),
                                 None, "TransformerLens .npz: the kernel does not read .npz files (no certificate)"))
        return out

    return ValueModel(m.name, str(path), "transformerlens", m.n_layers, H, KV, N, d, layer_heads,
                      {"layout": "transformerlens W_V, W_O per head, transposed", "family": "npz"})


def open_value_model(spec: str | None = None, name: str | None = None, pre_norm_qk: bool = False) -> ValueModel:
    """Open a model (path or known name; None = the default, all-MiniLM-L6-v2) for its
    value circuit.  Raises QKInputError for what the loaders refuse."""
    path, canon = resolve_model(spec)
    name = name or canon
    if path.is_dir():
        ggs = sorted(path.glob("*.gguf"))
        if ggs and not any(path.glob("*.safetensors")):
            if len(ggs) > 1:
                raise QKInputError(f"{path}: several .gguf files; name one")
            return _open_gguf(ggs[0], name)
        npzs = sorted(path.glob("*.npz"))
        if npzs and not any(path.glob("*.safetensors")):
            return _open_npz(npzs[0], name)
        return _open_safetensors(path, name, pre_norm_qk)
    with open(path, "rb") as fh:
        magic = fh.read(4)
    if path.suffix.lower() == ".gguf" or magic == b"GGUF":
        return _open_gguf(path, name)
    if path.suffix.lower() == ".npz" or magic[:2] == b"PK":
        return _open_npz(path, name)
    return _open_safetensors(path, name, pre_norm_qk)
