"""Rows of a GGUF (llama.cpp) matrix as exact dyadic rationals, read by the kernel itself.

The header (format 2 or 3: metadata, tensor infos, aligned data) is parsed with
:mod:`struct`.  F32/F16 values are exact dyadics; a Q8_0, Q4_0 or Q4_1 value is
d·q (+ m) with F16 scales d, m and a small integer q, computed in integers.  A matrix with
ggml dimensions ``[ne0, ne1]`` has ``ne1`` rows of ``ne0`` values."""

from __future__ import annotations

import functools
import struct
from pathlib import Path

from .jsonio import Undecided, require

_SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
#: ggml type -> (name, values per block, bytes per block)
TYPES = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20), 8: ("Q8_0", 32, 34)}


def _float(u: int, E_bits: int, F_bits: int) -> tuple[int, int]:
    """(m, e), value m·2^e, of the bits u of an IEEE binary float."""
    E, f = (u >> F_bits) & ((1 << E_bits) - 1), u & ((1 << F_bits) - 1)
    require(E != (1 << E_bits) - 1, "weights", "Inf or NaN in a GGUF tensor")
    m = (f | 1 << F_bits) if E else f
    return (-m if u >> (E_bits + F_bits) else m), (E if E else 1) - (1 << (E_bits - 1)) + 1 - F_bits


def header(path: Path) -> tuple[dict, dict, int]:
    """(metadata, tensors name -> (dims, ggml type, offset), start of the data section)."""
    st = Path(path).stat()
    return _header(str(path), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _header(path: str, size: int, mtime_ns: int) -> tuple[dict, dict, int]:
    with open(path, "rb") as fh:
        def get(code):
            b = fh.read(struct.calcsize("<" + code))
            require(len(b) == struct.calcsize("<" + code), "weights", "GGUF header truncated")
            return struct.unpack("<" + code, b)[0]

        def string():
            return fh.read(get("Q")).decode("utf-8", "replace")

        def value(t):
            if t in _SCALAR:
                return get(_SCALAR[t])
            if t == 8:
                return string()
            require(t == 9, "weights", f"unknown GGUF metadata type {t}")
            it, n = get("I"), get("Q")
            return [value(it) for _ in range(n)]

        if fh.read(4) != b"GGUF":
            raise Undecided("not a GGUF file")
        version, n_t, n_kv = get("I"), get("Q"), get("Q")
        require(version in (2, 3), "weights", f"GGUF version {version}")
        meta = {}
        for _ in range(n_kv):
            k = string()
            meta[k] = value(get("I"))
        tensors = {}
        for _ in range(n_t):
            name = string()
            dims = [get("Q") for _ in range(get("I"))]
            tensors[name] = (dims, get("I"), get("Q"))
        pos, align = fh.tell(), meta.get("general.alignment", 32)
    return meta, tensors, pos + (-pos) % align


def rows(path: Path, name: str, a: int, b: int) -> tuple[list[tuple[int, int]], int]:
    """Rows [a, b) of matrix ``name`` as (m, e) pairs (value m·2^e, row-major) and the row length."""
    _, tensors, start = header(Path(path))
    require(name in tensors, "weights", f"no tensor {name!r} in {Path(path).name}")
    dims, t, off = tensors[name]
    require(len(dims) == 2 and 0 <= a < b <= dims[1], "input", f"rows {a}:{b} of {name} {dims}")
    if t not in TYPES:
        raise Undecided(f"{name} has ggml type {t}; the kernel reads F32/F16/Q4_0/Q4_1/Q8_0")
    kind, per, size = TYPES[t]
    require(dims[0] % per == 0, "weights", f"{name}: rows are not whole blocks")
    rb = dims[0] // per * size
    with open(path, "rb") as fh:
        fh.seek(start + off + a * rb)
        raw = fh.read((b - a) * rb)
    require(len(raw) == (b - a) * rb, "weights", f"{name}: data truncated")
    if kind in ("F32", "F16"):
        code, eb, fb = ("<I", 8, 23) if kind == "F32" else ("<H", 5, 10)
        return [_float(u, eb, fb) for (u,) in struct.iter_unpack(code, raw)], dims[0]
    out: list[tuple[int, int]] = []
    for s in range(0, len(raw), size):
        blk = raw[s:s + size]
        dm, de = _float(int.from_bytes(blk[0:2], "little"), 5, 10)
        if kind == "Q8_0":
            out.extend((dm * q, de) for q in struct.unpack("<32b", blk[2:]))
            continue
        nib = [x & 15 for x in blk[-16:]] + [x >> 4 for x in blk[-16:]]
        if kind == "Q4_0":
            out.extend((dm * (q - 8), de) for q in nib)
        else:  # Q4_1: d·q + m
            mm, me = _float(int.from_bytes(blk[2:4], "little"), 5, 10)
            lo = min(de, me)
            out.extend((dm * q * (1 << (de - lo)) + mm * (1 << (me - lo)), lo) for q in nib)
    return out, dims[0]


def read_slice(path: Path, t: dict):
    """Rows [a, b) (``rows``) or columns [a, b) (``cols``) of matrix ``t["name"]``, exactly, as
    an fmpq_mat [rows, cols] of the tensor as stored ([ne1, ne0], torch [out, in]), transposed
    when ``t["transpose"]`` (the contract of :func:`qkverify.kernel.weights.read_slice`)."""
    from flint import fmpq, fmpq_mat

    _, tensors, _ = header(Path(path))
    require(t["name"] in tensors, "weights", f"no tensor {t['name']!r} in {Path(path).name}")
    dims = tensors[t["name"]][0]
    if "rows" in t:
        a, b = t["rows"]
        vals, C = rows(path, t["name"], a, b)
        grid = [vals[i * C:(i + 1) * C] for i in range(b - a)]
    else:
        a, b = t["cols"]
        require(len(dims) == 2 and 0 <= a < b <= dims[0], "input", f"cols {a}:{b} of {t['name']} {dims}")
        vals, C = rows(path, t["name"], 0, dims[1])
        grid = [vals[i * C + a:i * C + b] for i in range(dims[1])]
    X = fmpq_mat([[fmpq(m << x) if x >= 0 else fmpq(m, 1 << -x) for m, x in row] for row in grid])
    return X.transpose() if t.get("transpose") else X
