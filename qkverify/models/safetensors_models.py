"""Loaders for safetensors checkpoints: BERT-style encoders, GPT-2 and
Llama/Mistral (grouped-query attention).

Layouts (detected from tensor names):

* BERT-style: ``…encoder.layer.{l}.attention.self.{query,key}.weight``,
  torch Linear ``[out, in]``; head h is rows h·d_head:(h+1)·d_head.
* GPT-2: ``…h.{l}.attn.c_attn.weight``, Conv1D ``[d, 3d]`` (``[in, out]``):
  transposed, rows 0:d are Q, d:2d are K, 2d:3d are V; head h is the block
  of d_head consecutive rows in each.
* Llama/Mistral: ``…layers.{l}.self_attn.{q,k}_proj.weight``, Linear
  ``[out, in]``; query head i uses KV head i // (n_heads / n_kv_heads).

``n_heads`` (and ``n_kv_heads``) come from ``config.json`` beside the
weights when present, otherwise from the caller; without either the loader
raises QKInputError.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from ..errors import QKInputError
from .base import HeadRecord, Model, exact_float, kv_head_of, split_rows
from ..io.hashing import sha256_of
from .safetensors_io import SafetensorsFile

BERT_RE = re.compile(r"(?:^|\.)encoder\.layer\.(\d+)\.attention\.self\.(query|key)\.weight$")
GPT2_RE = re.compile(r"(?:^|\.)h\.(\d+)\.attn\.c_attn\.weight$")
LLAMA_RE = re.compile(r"(?:^|\.)layers\.(\d+)\.self_attn\.(q|k)_proj\.weight$")

_GENERIC = {"model", "models", "pytorch_model", "weights", "snapshots", "main", "checkpoint", "."}



def _linear_heads(mname, layer, Wq, Wk, tq, tk, H, KV, dh, where, sha, arch) -> list[HeadRecord]:
    """Heads of one layer from torch-Linear [out, in] query/key weights:
    query head h is rows h·d_head:(h+1)·d_head of W_q, its key head
    g = kv_head_of(h, H, KV) the same rows of W_k (g = h without grouped-
    query attention).  Exact float arrays in, HeadRecords with the tensor
    names, row slices and file SHA-256 out."""
    out = []
    for h in range(H):
        g = kv_head_of(h, H, KV)
        qr, kr = [h * dh, (h + 1) * dh], [g * dh, (g + 1) * dh]
        src = {"file": where[tq].path.name, "sha256": sha(where[tq]), "arch": arch,
               "tensors": [
                   {"role": "W_Q", "name": tq, "rows": qr, "layout": "linear[out,in]", "sha256": sha(where[tq])},
                   {"role": "W_K", "name": tk, "rows": kr, "layout": "linear[out,in]", "sha256": sha(where[tk])}]}
        out.append(HeadRecord(mname, layer, h, g, np.ascontiguousarray(Wq[qr[0]:qr[1]]),
                              np.ascontiguousarray(Wk[kr[0]:kr[1]]), src))
    return out

def model_name_from_path(path: Path) -> str:
    """A readable model name: the file stem, or the nearest parent directory
    whose name is not generic (``model``, ``snapshots`` …)."""
    cands = [path.stem] + [p.name for p in path.parents]
    for c in cands:
        if c and c.lower() not in _GENERIC and not c.startswith("."):
            return c
    return path.stem or "model"


def read_config(path: Path) -> dict:
    """``config.json`` next to the weights (or in the directory), or {}."""
    d = path if path.is_dir() else path.parent
    cfg = d / "config.json"
    if not cfg.is_file():
        return {}
    try:
        data = json.loads(cfg.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise QKInputError(f"{cfg}: not readable JSON") from None
    return data if isinstance(data, dict) else {}


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        fs = sorted(path.glob("*.safetensors"))
        if not fs:
            raise QKInputError(f"{path}: no .safetensors files in this directory")
        return fs
    return [path]


def _examples(names: list[str], k: int = 8) -> str:
    return ", ".join(names[:k]) + (" …" if len(names) > k else "")


def load_safetensors(path: str | Path, n_heads: int | None = None, n_kv_heads: int | None = None,
                     name: str | None = None) -> Model:
    """Open a safetensors checkpoint (file or directory of shards) and detect
    its attention layout.

    n_heads / n_kv_heads override config.json.  Raises QKInputError for an
    unknown layout (listing some tensor names found), a missing head count,
    or inconsistent shapes.
    """
    path = Path(path)
    files = [SafetensorsFile(f) for f in _files(path)]
    where: dict[str, SafetensorsFile] = {}
    for f in files:
        for t in f.names:
            where[t] = f
    names = list(where)
    cfg = read_config(path)
    mname = name or model_name_from_path(path if path.is_file() else path / "x.safetensors")
    shas: dict[Path, str] = {}

    def sha(f: SafetensorsFile) -> str:
        if f.path not in shas:
            shas[f.path] = sha256_of(f.path)
        return shas[f.path]

    model_sha = sha(files[0]) if len(files) == 1 else None

    bert = {(int(m.group(1)), m.group(2)): t for t in names if (m := BERT_RE.search(t))}
    gpt2 = {int(m.group(1)): t for t in names if (m := GPT2_RE.search(t))}
    llama = {(int(m.group(1)), m.group(2)): t for t in names if (m := LLAMA_RE.search(t))}

    if bert:
        arch = "bert"
        layers = sorted({l for l, _ in bert})
        _require_pairs(bert, layers, ("query", "key"), path)
        H = n_heads or cfg.get("num_attention_heads")
        if not H:
            raise QKInputError(f"{path}: BERT-style weights need n_heads (no config.json with num_attention_heads; pass --n-heads)")
        H = int(H)
        t0 = bert[(layers[0], "query")]
        q0 = where[t0].shape(t0)
        if len(q0) != 2 or q0[0] % H:
            raise QKInputError(f"{path}: {t0} has shape {q0}, not [n_heads·d_head, d_model] with n_heads = {H}")
        dh, N = q0[0] // H, q0[1]

        def layer_heads(l: int) -> list[HeadRecord]:
            tq, tk = bert[(layers[l], "query")], bert[(layers[l], "key")]
            Wq, Wk = exact_float(where[tq].get(tq)), exact_float(where[tk].get(tk))
            if Wq.shape != Wk.shape:
                raise QKInputError(f"{path}: {tq} {Wq.shape} and {tk} {Wk.shape} differ in shape")
            split_rows(Wq, H, tq)
            return _linear_heads(mname, l, Wq, Wk, tq, tk, H, H, dh, where, sha, arch)

        return Model(mname, str(path), arch, model_sha or _combined(files, sha), len(layers), H, H, N, dh,
                     layer_heads, {"layer_ids": layers})

    if gpt2:
        arch = "gpt2"
        layers = sorted(gpt2)
        H = n_heads or cfg.get("n_head") or cfg.get("num_attention_heads")
        if not H:
            raise QKInputError(f"{path}: GPT-2 weights need n_heads (no config.json with n_head; pass --n-heads)")
        H = int(H)
        t0 = gpt2[layers[0]]
        s0 = where[t0].shape(t0)
        if len(s0) != 2 or s0[1] != 3 * s0[0]:
            raise QKInputError(f"{path}: {t0} has shape {s0}, expected Conv1D [d, 3d]")
        N = s0[0]
        if N % H:
            raise QKInputError(f"{path}: d_model {N} does not split into {H} heads")
        dh = N // H

        def layer_heads(l: int) -> list[HeadRecord]:
            t = gpt2[layers[l]]
            W = exact_float(where[t].get(t))
            if W.shape != (N, 3 * N):
                raise QKInputError(f"{path}: {t} has shape {W.shape}, expected {(N, 3 * N)}")
            out = []
            for h in range(H):
                qc = [h * dh, (h + 1) * dh]
                kc = [N + h * dh, N + (h + 1) * dh]
                src = {"file": where[t].path.name, "sha256": sha(where[t]), "arch": arch,
                       "tensors": [
                           {"role": "W_Q", "name": t, "cols": qc, "layout": "conv1d[in,out]", "transform": "transpose", "sha256": sha(where[t])},
                           {"role": "W_K", "name": t, "cols": kc, "layout": "conv1d[in,out]", "transform": "transpose", "sha256": sha(where[t])}]}
                out.append(HeadRecord(mname, l, h, h, np.ascontiguousarray(W[:, qc[0]:qc[1]].T),
                                      np.ascontiguousarray(W[:, kc[0]:kc[1]].T), src))
            return out

        return Model(mname, str(path), arch, model_sha or _combined(files, sha), len(layers), H, H, N, dh,
                     layer_heads, {"layer_ids": layers})

    if llama:
        arch = "llama"
        layers = sorted({l for l, _ in llama})
        _require_pairs(llama, layers, ("q", "k"), path)
        H = n_heads or cfg.get("num_attention_heads")
        if not H:
            raise QKInputError(f"{path}: Llama weights need n_heads (no config.json with num_attention_heads; pass --n-heads)")
        H = int(H)
        tq0, tk0 = llama[(layers[0], "q")], llama[(layers[0], "k")]
        sq, sk = where[tq0].shape(tq0), where[tk0].shape(tk0)
        if len(sq) != 2 or len(sk) != 2 or sq[0] % H or sq[1] != sk[1]:
            raise QKInputError(f"{path}: {tq0} {sq} / {tk0} {sk} do not fit n_heads = {H}")
        dh = int(cfg.get("head_dim") or sq[0] // H)
        if dh * H != sq[0]:
            raise QKInputError(f"{path}: {tq0} has {sq[0]} rows, not n_heads·head_dim = {H}·{dh}")
        KV = n_kv_heads or cfg.get("num_key_value_heads") or sk[0] // dh
        KV = int(KV)
        if KV * dh != sk[0]:
            raise QKInputError(f"{path}: {tk0} has {sk[0]} rows, not n_kv_heads·head_dim = {KV}·{dh}")
        kv_head_of(0, H, KV)  # validates divisibility
        N = sq[1]
        meta = {"layer_ids": layers}
        for k in ("rope_theta", "rope_scaling"):
            if k in cfg:
                meta[k] = cfg[k]

        def layer_heads(l: int) -> list[HeadRecord]:
            tq, tk = llama[(layers[l], "q")], llama[(layers[l], "k")]
            Wq, Wk = exact_float(where[tq].get(tq)), exact_float(where[tk].get(tk))
            if Wq.shape != (H * dh, N) or Wk.shape != (KV * dh, N):
                raise QKInputError(f"{path}: layer {l} shapes {Wq.shape}, {Wk.shape} differ from layer 0")
            return _linear_heads(mname, l, Wq, Wk, tq, tk, H, KV, dh, where, sha, arch)

        return Model(mname, str(path), arch, model_sha or _combined(files, sha), len(layers), H, KV, N, dh,
                     layer_heads, meta)

    raise QKInputError(
        f"{path}: unrecognised tensor layout (no BERT, GPT-2 or Llama attention weights); "
        f"{len(names)} tensors, e.g. {_examples(names)}")


def _require_pairs(table: dict, layers: list[int], roles: tuple[str, str], path: Path) -> None:
    for l in layers:
        for r in roles:
            if (l, r) not in table:
                raise QKInputError(f"{path}: layer {l} has no {r} weight")
    if layers != list(range(layers[0], layers[0] + len(layers))):
        raise QKInputError(f"{path}: layer indices {layers[:6]}… are not consecutive")


def _combined(files: list[SafetensorsFile], sha) -> str:
    import hashlib

    h = hashlib.sha256()
    for f in files:
        h.update(f"{f.path.name}:{sha(f)}\n".encode())
    return h.hexdigest()
