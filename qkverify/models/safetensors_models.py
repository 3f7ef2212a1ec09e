"""Safetensors checkpoints (one file, a directory, or a sharded checkpoint
with ``model.safetensors.index.json``): heads cut out as the layout that
``config.json``'s ``model_type`` names (:mod:`qkverify.models.layouts`).

Weights are read one layer at a time: ``Model.layer_heads(l)`` maps the
layer's query/key (or fused QKV) tensors from their shards, copies each
head's rows into its record, and lets the mappings go.  Only the rows a head
uses are checked for NaN/Inf (and only they are paged in).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..errors import QKInputError
from ..io.hashing import sha256_of
from .base import HeadRecord, Model, kv_head_of
from .layouts import Plan, effective_config, resolve
from .safetensors_io import Checkpoint, SafetensorsFile, read_json_file

_GENERIC = {"model", "models", "pytorch_model", "weights", "snapshots", "main", "checkpoint", "."}


def model_name_from_path(path: Path) -> str:
    """A readable model name: the file stem, or the nearest parent directory
    whose name is not generic (``model``, ``snapshots`` …)."""
    cands = [path.stem] + [p.name for p in path.parents]
    for c in cands:
        if c and c.lower() not in _GENERIC and not c.startswith(".") and not c.startswith("model-0"):
            return c
    return path.stem or "model"


def read_config(path: Path) -> dict:
    """``config.json`` next to the weights (or in the directory), or {}.
    Raises QKInputError when it exists but is not a JSON object."""
    d = path if path.is_dir() else path.parent
    cfg = d / "config.json"
    if not cfg.is_file():
        return {}
    data = read_json_file(cfg)
    if not isinstance(data, dict):
        raise QKInputError(f"{cfg}: not a JSON object")
    return data


def _combined(files: list[SafetensorsFile], sha) -> str:
    import hashlib

    h = hashlib.sha256()
    for f in files:
        h.update(f"{f.path.name}:{sha(f)}\n".encode())
    return h.hexdigest()


def load_safetensors(path: str | Path, n_heads: int | None = None, n_kv_heads: int | None = None,
                     name: str | None = None, pre_norm_qk: bool = False, pre_softcap: bool = False,
                     layout: str | Path | None = None) -> Model:
    """Open a safetensors checkpoint and resolve its attention layout.

    n_heads / n_kv_heads override config.json; ``pre_norm_qk`` accepts
    checkpoints with q/k normalisation (the records are then labelled
    ``pre_norm_qk``), ``pre_softcap`` checkpoints whose attention logits are
    soft-capped (labelled ``pre_softcap``); ``layout`` is a layout file
    (:func:`qkverify.models.layouts.read_layout`) that replaces the
    model_type's layout.  Raises QKInputError (one line) for everything
    :func:`qkverify.models.layouts.resolve` refuses and for unreadable or
    inconsistent files."""
    from .layouts import read_layout

    path = Path(path)
    lf = read_layout(layout) if layout is not None else None
    ck = Checkpoint.open(path)
    cfg = read_config(path)
    plan = resolve(ck.names, ck.shape, cfg, path, n_heads, n_kv_heads, pre_norm_qk, pre_softcap, lf)
    options = {k: v for k, v in (("pre_softcap", bool(pre_softcap)), ("layout", lf.path if lf else None)) if v}
    mname = name or model_name_from_path(path if path.is_file() else path / "model.safetensors")
    shas: dict[Path, str] = {}

    def sha(f: SafetensorsFile) -> str:
        if f.path not in shas:
            shas[f.path] = sha256_of(f.path)
        return shas[f.path]

    model_sha = sha(ck.files[0]) if len(ck.files) == 1 else _combined(ck.files, sha)
    H, KV, N, dh = plan.H, plan.KV, plan.N, plan.dh

    def layer_heads(i: int) -> list[HeadRecord]:
        lid = plan.layer_ids[i]
        names = plan.tensors[lid]
        arrays = {key: ck.get(t) for key, t in names.items()}
        bnames = plan.biases.get(lid, {})
        barrays = {key: ck.get(t) for key, t in bnames.items()}
        positional = plan.positional(i)
        out = []
        for h in range(H):
            g = plan.kv_head(h)
            (kq, axq, aq, bq), (kk, axk, ak, bk) = plan.head_slices(h)
            Wq = _cut(arrays[kq], axq, aq, bq, names[kq], path)
            Wk = _cut(arrays[kk], axk, ak, bk, names[kk], path)
            fq, fk = ck.file_of(names[kq]), ck.file_of(names[kk])
            k_entry = _tensor_entry("W_K", names[kk], axk, ak, bk, sha(fk))
            if fk is not fq:
                # W_K sits in another shard than W_Q (a shard boundary between q_proj and k_proj):
                # name that shard and its hash; a certificate's input names one weights file, so
                # the kernel reports this head's tensors as not re-read rather than mismatched
                del k_entry["sha256"]
                k_entry.update({"file": fk.path.name, "file_sha256": sha(fk)})
            src = {"file": fq.path.name, "sha256": sha(fq), "arch": plan.arch,
                   "tensors": [_tensor_entry("W_Q", names[kq], axq, aq, bq, sha(fq)), k_entry],
                   "layout_source": plan.layout_source}
            b_Q = b_K = None
            if bnames:
                brefs = {}
                if kq in barrays:
                    b_Q = _cut_bias(barrays[kq], aq, bq, bnames[kq], path)
                    brefs["b_Q"] = {"name": bnames[kq], "index": [aq, bq], "sha256": sha(ck.file_of(bnames[kq]))}
                if kk in barrays:
                    b_K = _cut_bias(barrays[kk], ak, bk, bnames[kk], path)
                    brefs["b_K"] = {"name": bnames[kk], "index": [ak, bk], "sha256": sha(ck.file_of(bnames[kk]))}
                src["biases"] = brefs or None
            out.append(HeadRecord(mname, i, h, g, Wq, Wk, src, layout=plan.layout, positional=positional,
                                  pre_norm_qk=plan.qk_norm is not None, qk_norm=plan.qk_norm, b_Q=b_Q, b_K=b_K,
                                  softcap=plan.softcap))
        return out

    meta = {"layer_ids": [_layer_label(l) for l in plan.layer_ids] if plan.family.stacks else plan.layer_ids,
            "layout": plan.layout, "layout_source": plan.layout_source,
            "positional": plan.positional(0) if len({json.dumps(plan.positional(i), sort_keys=True)
                                                      for i in range(len(plan.layer_ids))}) == 1
            else {str(i): plan.positional(i) for i in range(len(plan.layer_ids))},
            "score": _model_score(plan), "qk_norm": plan.qk_norm,
            **({"softcap": plan.softcap} if plan.softcap else {}),
            "biases": "query/key biases present: the score is biaffine (Lemma 1); L = W_Kᵀ W_Q is its bilinear "
                      "part, the other parts are per head in heads.json" if plan.biases else None}
    if len(ck.files) > 1:
        meta["shards"] = [f.path.name for f in ck.files]
        meta["sha256_of"] = "SHA-256 of the lines '<shard>:<sha256>' (one per shard, sorted by name)"
    for k in ("rope_theta", "rope_scaling"):
        c = effective_config(cfg)
        if k in c:
            meta[k] = c[k]
    return Model(mname, str(path), plan.arch, model_sha, len(plan.layer_ids), H, KV, N, dh, layer_heads, meta,
                 options)


def _layer_label(lid) -> str:
    """``encoder.block.3`` for an encoder-decoder layer id, else the block number as text."""
    return f"{lid[0]}.block.{lid[1]}" if isinstance(lid, tuple) else str(lid)


def _model_score(plan: Plan) -> str:
    parts = ((["pre_norm_qk"] if plan.qk_norm else []) + (["pre_softcap"] if plan.softcap else [])
             + (["bilinear_part_of_biaffine"] if plan.biases else []))
    return ",".join(parts) or "bilinear"


def _cut(W: np.ndarray, axis: int, a: int, b: int, tname: str, path: Path) -> np.ndarray:
    """Rows a:b (axis 0) or columns a:b transposed (axis 1) of W, as an owned
    contiguous copy; QKInputError for NaN/Inf in that slice."""
    S = W[a:b] if axis == 0 else W[:, a:b].T
    S = np.array(S, order="C", copy=True)
    if not np.all(np.isfinite(S)):
        raise QKInputError(f"{path}: tensor {tname} contains NaN or Inf (in {'rows' if axis == 0 else 'columns'} {a}:{b})")
    return S


def _cut_bias(v: np.ndarray, a: int, b: int, tname: str, path: Path) -> np.ndarray:
    S = np.array(v[a:b], copy=True)
    if not np.all(np.isfinite(S)):
        raise QKInputError(f"{path}: bias {tname} contains NaN or Inf (entries {a}:{b})")
    return S


def _tensor_entry(role: str, name: str, axis: int, a: int, b: int, sha: str) -> dict:
    """The certificate's tensor reference, in the form the kernel re-reads:
    ``rows`` of a ``linear[out,in]`` tensor, or ``cols`` of a
    ``conv1d[in,out]`` tensor with ``transform: "transpose"``."""
    if axis == 0:
        return {"role": role, "name": name, "rows": [a, b], "layout": "linear[out,in]", "sha256": sha}
    return {"role": role, "name": name, "cols": [a, b], "layout": "conv1d[in,out]", "transform": "transpose",
            "sha256": sha}
