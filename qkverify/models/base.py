"""Head records and model handles shared by every loader.

A loader turns a weights file into a :class:`Model`; iterating over
``Model.heads(layers)`` yields one :class:`HeadRecord` per attention head.
A record carries the head's query and key maps as numpy arrays whose
entries are the exact values of the checkpoint (binary floats are exact
dyadic rationals; half-precision and bfloat16 values are widened to float32
without rounding; GGUF blocks are dequantised by ``gguf``), together with
everything a compact certificate needs to name them without copying them:
the weights file's SHA-256, the tensor names, the row/column slices and the
transforms applied (transpose, RoPE row order).

Conventions (SPEC §1–§2): W_Q, W_K have shape (n, N) -- n = d_head rows,
N = d_model columns -- so that q = W_Q x and k = W_K x; L = W_Kᵀ W_Q.

What the analysed matrix is.  Every record says what L = W_Kᵀ W_Q is for
its model (``score``):

* ``"bilinear"`` -- the score of two tokens (before positional effects and
  a positive 1/√d scale) is exactly x_kᵀ L x_q;
* ``"bilinear_part_of_biaffine"`` -- the model has query/key biases
  (``b_Q``, ``b_K`` are loaded): the score is biaffine (Lemma 1) and L is
  its bilinear part; :meth:`HeadRecord.biaffine` gives the other parts
  exactly;
* ``"pre_norm_qk"`` -- the model normalises q and k after the projections
  (``q_norm``/``k_norm``): no fixed bilinear form exists and L is the
  pre-normalisation matrix, analysed only on request (``--pre-norm-qk``);
* ``"pre_softcap"`` -- the model soft-caps its attention logits (Gemma 2:
  score = c·tanh(s/c)): L is the bilinear form s inside the cap (a monotone
  function of it is the score), analysed only on request (``--pre-softcap``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from ..errors import QKInputError


class HeadShape:
    """n, N and the short name of a head record with ``W_Q`` (n × N), ``layer`` and ``head``."""

    @property
    def n(self) -> int:
        """Head dimension d_head (rows of W_Q)."""
        return int(self.W_Q.shape[0])

    @property
    def N(self) -> int:
        """Model dimension d_model (columns of W_Q)."""
        return int(self.W_Q.shape[1])

    @property
    def key(self) -> str:
        """Stable short name ``L{layer}H{head}`` (zero-padded)."""
        return f"L{self.layer:02d}H{self.head:02d}"


@dataclass
class HeadRecord(HeadShape):
    """One attention head with exact weights (picklable: plain data only).

    model    -- model name used in tables and file names
    layer    -- 0-based layer index
    head     -- 0-based query-head index within the layer
    kv_head  -- key/value head used by this query head (= head without GQA)
    W_Q, W_K -- float32/float64 arrays of shape (n, N); their entries are the
                checkpoint's exact values
    source   -- {"file", "sha256", "arch", "tensors": [{"role", "name",
                "rows"/"cols", "transform", ...}], "layout", "positional",
                "score", "pre_norm_qk", "qk_norm", "biases"}: enough to
                re-derive W_Q, W_K from the weights file (compact
                certificates) and to say what they mean
    layout   -- how the head was cut out of the checkpoint, e.g.
                ``"gpt_neox: fused query_key_value [3·H·d_head, d_model], interleaved per head"``
    positional -- the model's position encoding at this layer
                (:mod:`qkverify.models.positional`)
    pre_norm_qk -- True when q_norm/k_norm follow the projections and L is
                the pre-normalisation W_Kᵀ W_Q (analysed on request only)
    qk_norm  -- what normalises q and k (None when nothing does)
    b_Q, b_K -- the head's query/key biases, shape (n,), exact, or None
    softcap  -- what caps the attention logits (None when nothing does; such heads are
                loaded only on request and labelled ``pre_softcap``)
    """

    model: str
    layer: int
    head: int
    kv_head: int
    W_Q: np.ndarray
    W_K: np.ndarray
    source: dict = field(default_factory=dict)
    layout: str = ""
    positional: dict = field(default_factory=dict)
    pre_norm_qk: bool = False
    qk_norm: str | None = None
    b_Q: np.ndarray | None = None
    b_K: np.ndarray | None = None
    softcap: str | None = None

    def __post_init__(self) -> None:
        # the per-head record the certificates are built from carries the labels too
        s = self.source
        if self.softcap:
            s.setdefault("softcap", self.softcap)
        s.setdefault("layout", self.layout)
        s.setdefault("positional", self.positional)
        s.setdefault("score", self.score)
        s.setdefault("pre_norm_qk", self.pre_norm_qk)
        s.setdefault("qk_norm", self.qk_norm)
        s.setdefault("biases", None)

    @property
    def has_bias(self) -> bool:
        """True when the head has a query or key bias."""
        return self.b_Q is not None or self.b_K is not None

    @property
    def score(self) -> str:
        """What L = W_Kᵀ W_Q is (module docstring): ``bilinear``,
        ``bilinear_part_of_biaffine``, ``pre_norm_qk``, ``pre_softcap``, or several of
        them joined by commas (e.g. ``pre_norm_qk,bilinear_part_of_biaffine``)."""
        parts = ((["pre_norm_qk"] if self.pre_norm_qk else []) + (["pre_softcap"] if self.softcap else [])
                 + (["bilinear_part_of_biaffine"] if self.has_bias else []))
        return ",".join(parts) or "bilinear"

    def biaffine(self):
        """Exact biaffine components (u = W_Kᵀ b_Q, w = W_Qᵀ b_K, c = b_Kᵀ b_Q)
        as :class:`qkverify.models.biaffine.BiaffineParts`, or None without
        biases."""
        if not self.has_bias:
            return None
        from .biaffine import biaffine_parts

        return biaffine_parts(self.W_Q, self.W_K, self.b_Q, self.b_K)

    def table_fields(self, vectors: bool = False) -> dict:
        """Per-head columns the loader contributes to heads.csv / heads.json:
        ``score``, ``positional`` (short text), ``layout``, and for heads with
        biases ``bias_const``, ``bias_lin_key_norm``, ``bias_lin_query_norm``
        (float displays) plus ``biaffine`` (exact: squared norms and constant
        as ``"p/q"``, the bias tensors, and the vectors when ``vectors``)."""
        from .positional import short

        out = {"score": self.score, "positional": short(self.positional) if self.positional else "",
               "layout": self.layout}
        bp = self.biaffine()
        if bp is not None:
            js = bp.to_json(vectors)
            js["biases"] = self.source.get("biases")
            out["biaffine"] = js
            out["bias_const"] = js["const_float"]
            out["bias_lin_key_norm"] = js["lin_key"]["norm"]
            out["bias_lin_query_norm"] = js["lin_query"]["norm"]
        return out



@dataclass
class Model:
    """A loaded checkpoint: metadata plus a per-layer head factory.

    ``layer_heads(l)`` returns the records of layer l (loaded lazily, so a
    large model is never held in memory at once).  Shapes: every head has
    W_Q, W_K of shape (d_head, d_model).
    """

    name: str
    path: str
    arch: str
    sha256: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_model: int
    d_head: int
    layer_heads: Callable[[int], list[HeadRecord]]
    meta: dict = field(default_factory=dict)
    #: loader options beyond the head counts that reopening the model needs (a worker process
    #: reopens it from ``path``): e.g. ``{"layout": "/abs/layout.toml", "pre_softcap": True}``
    options: dict = field(default_factory=dict)

    def __iter__(self) -> Iterator[HeadRecord]:
        """Every head, layer by layer (``for h in model``: h.layer, h.head, h.kv_head, h.W_Q, h.W_K)."""
        return self.heads()

    def __len__(self) -> int:
        """The number of heads (n_layers · n_heads)."""
        return self.n_layers * self.n_heads

    def head(self, layer: int, head: int) -> HeadRecord:
        """One head; QKInputError when (layer, head) is out of range."""
        if not 0 <= head < self.n_heads:
            raise QKInputError(f"head {head} out of range: {self.name} has heads 0..{self.n_heads - 1}")
        return list(self.heads([layer]))[head]

    def __repr__(self) -> str:
        return (f"<Model {self.name!r}: {self.arch}, {self.n_layers} layers × {self.n_heads} heads "
                f"({self.n_kv_heads} key heads), d_model = {self.d_model}, d_head = {self.d_head}>")

    def heads(self, layers: list[int] | None = None) -> Iterator[HeadRecord]:
        """Every head of the selected layers (all layers when None), in
        (layer, head) order.  Raises QKInputError for a layer out of range."""
        sel = list(range(self.n_layers)) if layers is None else list(layers)
        for l in sel:
            if not 0 <= l < self.n_layers:
                raise QKInputError(f"layer {l} out of range: {self.name} has layers 0..{self.n_layers - 1}")
        for l in sel:
            yield from self.layer_heads(l)

    def n_selected(self, layers: list[int] | None = None) -> int:
        return (self.n_layers if layers is None else len(layers)) * self.n_heads

    def describe(self) -> dict:
        """JSON-ready summary (no arrays)."""
        return {
            "name": self.name,
            "file": Path(self.path).name,
            "arch": self.arch,
            "sha256": self.sha256,
            "n_layers": self.n_layers,
            "n_heads": self.n_heads,
            "n_kv_heads": self.n_kv_heads,
            "d_model": self.d_model,
            "d_head": self.d_head,
            **self.meta,
        }


def kv_head_of(head: int, n_heads: int, n_kv_heads: int) -> int:
    """Grouped-query attention: query head i uses KV head i // (n_heads / n_kv_heads).

    Raises QKInputError when n_kv_heads does not divide n_heads."""
    if n_kv_heads <= 0 or n_heads % n_kv_heads:
        raise QKInputError(f"n_kv_heads = {n_kv_heads} does not divide n_heads = {n_heads}")
    return head // (n_heads // n_kv_heads)


def parse_layers(text: str | None) -> list[int] | None:
    """``"0,2,4-5"`` -> [0, 2, 4, 5]; None/"" -> None (all layers).
    Raises QKInputError on malformed text."""
    if text is None or not str(text).strip():
        return None
    out: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part)
        if not m:
            raise QKInputError(f"--layers: cannot read {part!r} (expected e.g. 0,2,4-5)")
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) is not None else a
        if b < a:
            raise QKInputError(f"--layers: empty range {part!r}")
        out.extend(range(a, b + 1))
    return sorted(set(out))


def exact_float(a: np.ndarray) -> np.ndarray:
    """Widen float16 arrays to float32 (exact); float32/float64 unchanged.
    Raises QKInputError for non-float dtypes and for NaN/Inf entries, which
    are not rational numbers."""
    if a.dtype == np.float16:
        a = a.astype(np.float32)
    if a.dtype not in (np.float32, np.float64):
        raise QKInputError(f"unsupported weight dtype {a.dtype}")
    if not np.all(np.isfinite(a)):
        raise QKInputError("weights contain NaN or Inf, which are not rational numbers")
    return a


def split_rows(W: np.ndarray, n_heads: int, what: str) -> int:
    """d_head for a (n_heads·d_head, N) projection; QKInputError otherwise."""
    if W.ndim != 2:
        raise QKInputError(f"{what}: expected a 2-d weight, got shape {W.shape}")
    if n_heads <= 0 or W.shape[0] % n_heads:
        raise QKInputError(f"{what}: {W.shape[0]} rows do not split into {n_heads} heads")
    return W.shape[0] // n_heads
