"""Exact tensors from a GGUF file (llama.cpp), read by the kernel itself.

The header is parsed with :mod:`struct` (format version 2 or 3: metadata
key/value pairs, tensor infos, aligned data).  Rows of an F32, F16, Q8_0, Q4_0
or Q4_1 matrix are decoded to the exact dyadic rationals llama.cpp's
reference dequantiser defines: F16 scales are exact dyadics and a quantised
value is d·q (+ m) with a small integer q, computed in integers only.  A GGUF
matrix with ggml dimensions ``[ne0, ne1]`` has ``ne1`` rows of ``ne0`` values."""

from __future__ import annotations

import struct
from pathlib import Path

from .jsonio import Undecided, require

#: metadata value types -> struct code (8 = string and 9 = array are read apart)
_SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
#: ggml type -> (name, values per block, bytes per block)
TYPES = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20), 8: ("Q8_0", 32, 34)}
MAX_STRING = 1 << 24


def _f16(u: int) -> tuple[int, int]:
    """(m, e) with value m·2^e for the bits of an IEEE half."""
    E, f = (u >> 10) & 31, u & 1023
    require(E != 31, "weights", "a GGUF scale is Inf or NaN")
    m = (f | 1024) if E else f
    return (-m if u & 0x8000 else m), (E if E else 1) - 25


class _Reader:
    def __init__(self, fh):
        self.fh = fh

    def get(self, code: str):
        n = struct.calcsize("<" + code)
        b = self.fh.read(n)
        require(len(b) == n, "weights", "GGUF header truncated")
        return struct.unpack("<" + code, b)[0]

    def string(self) -> str:
        n = self.get("Q")
        require(n <= MAX_STRING, "weights", "GGUF string too long")
        return self.fh.read(n).decode("utf-8", "replace")

    def value(self, t: int):
        if t in _SCALAR:
            return self.get(_SCALAR[t])
        if t == 8:
            return self.string()
        require(t == 9, "weights", f"unknown GGUF metadata type {t}")
        it, n = self.get("I"), self.get("Q")
        return [self.value(it) for _ in range(n)]


def header(path: Path) -> tuple[dict, dict, int]:
    """(metadata, tensors name -> (dims, ggml type, offset), start of the data section)."""
    with open(path, "rb") as fh:
        r = _Reader(fh)
        if fh.read(4) != b"GGUF":
            raise Undecided("not a GGUF file")
        version, n_t, n_kv = r.get("I"), r.get("Q"), r.get("Q")
        require(version in (2, 3), "weights", f"GGUF version {version}")
        meta = {}
        for _ in range(n_kv):
            k = r.string()
            meta[k] = r.value(r.get("I"))
        tensors = {}
        for _ in range(n_t):
            name = r.string()
            dims = [r.get("Q") for _ in range(r.get("I"))]
            tensors[name] = (dims, r.get("I"), r.get("Q"))
        align = meta.get("general.alignment", 32)
        pos = fh.tell()
    return meta, tensors, pos + (-pos) % align


def rows(path: Path, name: str, a: int, b: int) -> tuple[list[tuple[int, int]], int]:
    """Rows [a, b) of matrix ``name`` as (m, e) pairs, value m·2^e, row-major; and the row length."""
    meta, tensors, start = header(path)
    require(name in tensors, "weights", f"no tensor {name!r} in {path.name}")
    dims, t, off = tensors[name]
    require(len(dims) == 2 and 0 <= a < b <= dims[1], "input", f"rows {a}:{b} of {name} {dims}")
    if t not in TYPES:
        raise Undecided(f"{name} has ggml type {t}; the kernel reads F32/F16/Q4_0/Q4_1/Q8_0")
    kind, per, size = TYPES[t]
    C = dims[0]
    require(C % per == 0, "weights", f"{name}: rows are not whole blocks")
    rb = C // per * size
    with open(path, "rb") as fh:
        fh.seek(start + off + a * rb)
        raw = fh.read((b - a) * rb)
    require(len(raw) == (b - a) * rb, "weights", f"{name}: data truncated")
    out: list[tuple[int, int]] = []
    if kind == "F32":
        for (u,) in struct.iter_unpack("<I", raw):
            E, f = (u >> 23) & 255, u & ((1 << 23) - 1)
            require(E != 255, "weights", "Inf or NaN in the weights")
            m = (f | 1 << 23) if E else f
            out.append((-m if u >> 31 else m, (E if E else 1) - 150))
        return out, C
    if kind == "F16":
        return [_f16(u) for (u,) in struct.iter_unpack("<H", raw)], C
    for s in range(0, len(raw), size):
        blk = raw[s:s + size]
        dm, de = _f16(int.from_bytes(blk[0:2], "little"))
        if kind == "Q8_0":
            out.extend((dm * q, de) for q in struct.unpack("<32b", blk[2:]))
            continue
        qs = blk[2:] if kind == "Q4_0" else blk[4:]
        nib = [x & 15 for x in qs] + [x >> 4 for x in qs]
        if kind == "Q4_0":
            out.extend((dm * (q - 8), de) for q in nib)
        else:  # Q4_1: d·q + m
            mm, me = _f16(int.from_bytes(blk[2:4], "little"))
            lo = min(de, me)
            out.extend((dm * q * (1 << (de - lo)) + mm * (1 << (me - lo)), lo) for q in nib)
    return out, C


__all__ = ["header", "rows", "TYPES"]
