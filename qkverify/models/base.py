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
Biases are not part of the bilinear form and are not loaded (Prop 3 moves
them into a homogeneous coordinate).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from ..errors import QKInputError


@dataclass
class HeadRecord:
    """One attention head with exact weights (picklable: plain data only).

    model    -- model name used in tables and file names
    layer    -- 0-based layer index
    head     -- 0-based query-head index within the layer
    kv_head  -- key/value head used by this query head (= head without GQA)
    W_Q, W_K -- float32/float64 arrays of shape (n, N); their entries are the
                checkpoint's exact values
    source   -- {"file", "sha256", "arch", "tensors": [{"role", "name",
                "rows"/"cols", "transform", ...}]}: enough to re-derive W_Q,
                W_K from the weights file (compact certificates)
    """

    model: str
    layer: int
    head: int
    kv_head: int
    W_Q: np.ndarray
    W_K: np.ndarray
    source: dict = field(default_factory=dict)

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
