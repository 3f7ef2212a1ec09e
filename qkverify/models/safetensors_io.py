"""Minimal read-only access to ``.safetensors`` files (memory-mapped).

The format is an 8-byte little-endian header length, a JSON header mapping
tensor names to ``{"dtype", "shape", "data_offsets"}``, then raw
little-endian data.  We read it directly (rather than through
``safetensors.numpy``) so that bfloat16 tensors, which numpy has no dtype
for, can be widened to float32 exactly: a bfloat16 is the top 16 bits of a
float32, so shifting its bits left by 16 gives the same number.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

from ..errors import QKInputError

_DTYPES = {"F64": np.dtype("<f8"), "F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "BF16": np.dtype("<u2")}
MAX_HEADER = 100 * 1024 * 1024


class SafetensorsFile:
    """Header and lazily read tensors of one safetensors file.

    ``names`` -- tensor names in file order; ``get(name)`` returns a float
    array (float16 widened to float32, bfloat16 widened to float32, exact).
    Raises QKInputError for a file that is not safetensors and for tensor
    dtypes that are not binary floats.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            size = self.path.stat().st_size
            with open(self.path, "rb") as fh:
                raw = fh.read(8)
                if len(raw) < 8:
                    raise QKInputError(f"{self.path}: too short to be a safetensors file")
                (hlen,) = struct.unpack("<Q", raw)
                if hlen <= 0 or hlen > MAX_HEADER or 8 + hlen > size:
                    raise QKInputError(f"{self.path}: not a safetensors file (bad header length)")
                header = json.loads(fh.read(hlen).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise QKInputError(f"{self.path}: not a safetensors file (header is not JSON)") from None
        if not isinstance(header, dict):
            raise QKInputError(f"{self.path}: not a safetensors file (header is not a JSON object)")
        self.metadata = header.pop("__metadata__", {}) or {}
        # the data section must hold every tensor the header announces
        ends = []
        for info in header.values():
            if isinstance(info, dict) and isinstance(info.get("data_offsets"), list) and len(info["data_offsets"]) == 2:
                try:
                    ends.append(int(info["data_offsets"][1]))
                except (TypeError, ValueError):
                    pass
        need = 8 + hlen + (max(ends) if ends else 0)
        if need > size:
            raise QKInputError(f"{self.path}: file truncated (the header needs {need} bytes, the file has {size})")
        self.header = header
        self.names = list(header)
        self._data_start = 8 + hlen
        self._size = size
        self._mm = None

    def _map(self) -> np.ndarray:
        if self._mm is None:
            self._mm = np.memmap(self.path, dtype=np.uint8, mode="r")
        return self._mm

    def shape(self, name: str) -> tuple[int, ...]:
        """Shape of tensor ``name`` from the header (no data read)."""
        return tuple(int(s) for s in self.header[name]["shape"])

    def dtype(self, name: str) -> str:
        """safetensors dtype string of tensor ``name`` (e.g. ``F32``)."""
        return str(self.header[name]["dtype"])

    def get(self, name: str) -> np.ndarray:
        """The tensor ``name`` as a float32/float64 array with exact values."""
        if name not in self.header:
            raise QKInputError(f"{self.path}: no tensor named {name!r}")
        info = self.header[name]
        dt = info.get("dtype")
        if dt not in _DTYPES:
            raise QKInputError(f"{self.path}: tensor {name} has dtype {dt}; only F64/F32/F16/BF16 weights are supported")
        start, end = (int(x) for x in info["data_offsets"])
        shape = tuple(int(s) for s in info["shape"])
        npdt = _DTYPES[dt]
        count = int(np.prod(shape)) if shape else 1
        if end - start != count * npdt.itemsize or self._data_start + end > self._size:
            raise QKInputError(f"{self.path}: tensor {name} has inconsistent offsets")
        buf = self._map()[self._data_start + start: self._data_start + end]
        a = np.frombuffer(buf.tobytes(), dtype=npdt).reshape(shape)
        if dt == "BF16":
            a = (a.astype(np.uint32) << 16).view(np.float32)
        elif dt == "F16":
            a = a.astype(np.float32)
        else:
            a = a.astype(a.dtype.newbyteorder("="), copy=False)
        if not np.all(np.isfinite(a)):
            raise QKInputError(f"{self.path}: tensor {name} contains NaN or Inf")
        return a
