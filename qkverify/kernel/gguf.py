"""GGUF (llama.cpp) tensors as exact dyadic rationals, read by the kernel itself.

The file is checked by the rules of the reference reader, llama.cpp's ``gguf_init_from_file``
(ggml/src/gguf.cpp) and its model loader, before any value is read:

1. the magic ``GGUF``, then version 2 or 3 (version 1 and later versions are refused; a
   version whose low 16 bits are 0 is a file of the other byte order: refused);
2. tensor and key-value counts are int64 ≥ 0; every string is a u64 length ≤ 2^30 that fits
   in the rest of the file, and every array has ≤ 2^30 elements that fit in it;
3. keys are non-empty and unique; a value's type is one of the 13 GGUF types; an array's
   element type is not itself an array;
4. ``general.alignment``, when present, is a u32, non-zero and a power of two (default 32);
5. a tensor's name is UTF-8, shorter than 64 bytes and unique; it has at most 4 dimensions,
   each an int64 ≥ 0, with an element count < 2^63; its ggml type is one gguf-py 0.19 names
   (removed types refused) and its row length ne0 is a whole number of blocks of that type;
6. the data section begins at the end of the tensor infos padded to the alignment, and each
   tensor's offset is exactly the sum of the previous tensors' sizes each padded to the
   alignment (so tensors never overlap and none is out of order);
7. every tensor's bytes lie inside the file (the loader's "tensor data is not within the file
   bounds").

A file that breaks a rule is Invalid (its SHA-256 is the certificate's, so its input is no
matrix); a well-formed tensor of a type the kernel does not decode is Undecided.

Values, from the block layouts of ggml-common.h / ggml-quants.c (dequantize_row_*), computed
with integers only -- the mathematical values the format defines, where llama.cpp's own float32
evaluation may round (f16 d, m, dmin read exactly; q the block's small integers):

* F32, F16, BF16, F64: the IEEE value (Inf/NaN refused: not rational);
* Q4_0: d·(q − 8); Q4_1: d·q + m; Q5_0: d·(q − 16); Q5_1: d·q + m; Q8_0: d·q;
* Q2_K: d·(sc & 15)·q − dmin·(sc >> 4); Q3_K: d·(sc − 32)·(q − 4·[high bit clear]);
  Q4_K, Q5_K: d·sc·q − dmin·mn with the 6-bit scales/mins of get_scale_min_k4;
  Q6_K: d·sc·(q − 32) with int8 scales.

A matrix with ggml dimensions ``[ne0, ne1]`` (any further ones 1, as ggml pads them) has
``ne1`` rows of ``ne0`` values; slices are checked, and limited in size, from the header before
any block is read, and a column slice reads only the blocks holding its columns."""

from __future__ import annotations

import functools
import struct
from pathlib import Path

from .jsonio import Invalid, Undecided, require

MAX_STRING = 1 << 30
MAX_ARRAY = 1 << 30
MAX_NAME = 64
MAX_DIMS = 4
#: value type -> struct code (8 string and 9 array apart)
_SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "b", 10: "Q", 11: "q", 12: "d"}
#: every ggml type gguf-py 0.19 names: type -> (name, values per block, bytes per block)
TYPES = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20), 6: ("Q5_0", 32, 22),
         7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 40), 10: ("Q2_K", 256, 84),
         11: ("Q3_K", 256, 110), 12: ("Q4_K", 256, 144), 13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210),
         15: ("Q8_K", 256, 292), 16: ("IQ2_XXS", 256, 66), 17: ("IQ2_XS", 256, 74), 18: ("IQ3_XXS", 256, 98),
         19: ("IQ1_S", 256, 50), 20: ("IQ4_NL", 32, 18), 21: ("IQ3_S", 256, 110), 22: ("IQ2_S", 256, 82),
         23: ("IQ4_XS", 256, 136), 24: ("I8", 1, 1), 25: ("I16", 1, 2), 26: ("I32", 1, 4), 27: ("I64", 1, 8),
         28: ("F64", 1, 8), 29: ("IQ1_M", 256, 56), 30: ("BF16", 1, 2), 34: ("TQ1_0", 256, 54),
         35: ("TQ2_0", 256, 66), 39: ("MXFP4", 32, 17), 40: ("NVFP4", 64, 36), 41: ("Q1_0", 128, 18)}
#: a type's name -> (type, values per block, bytes per block)
_KIND = {v[0]: (k, v[1], v[2]) for k, v in TYPES.items()}
#: bytes per block of a type's name
_SIZE = {v[0]: v[2] for v in TYPES.values()}
#: the IEEE formats: name -> (exponent bits, fraction bits)
IEEE = {"F16": (5, 10), "BF16": (8, 7), "F32": (8, 23), "F64": (11, 52)}


def _bad(path, why: str):
    raise Invalid("weights", f"{Path(path).name} is not a valid GGUF file: {why}")


def _float(u: int, E_bits: int, F_bits: int) -> tuple[int, int]:
    """(m, e), value m·2^e, of the bits u of an IEEE binary float (Invalid for Inf/NaN)."""
    E, f = (u >> F_bits) & ((1 << E_bits) - 1), u & ((1 << F_bits) - 1)
    require(E != (1 << E_bits) - 1, "weights", "Inf or NaN in a GGUF tensor: not a rational number")
    m = (f | 1 << F_bits) if E else f
    return (-m if u >> (E_bits + F_bits) else m), (E if E else 1) - (1 << (E_bits - 1)) + 1 - F_bits


def _h(b: bytes, i: int) -> tuple[int, int]:
    """The f16 at byte i of b, exactly."""
    return _float(b[i] | b[i + 1] << 8, 5, 10)


def header(path: Path) -> tuple[dict, dict, int]:
    """(metadata, tensors, start of the data section) of a GGUF file checked by the module's rules;
    tensors maps a name to (dims, ggml type, offset in the data section)."""
    st = Path(path).stat()
    return _header(str(path), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _header(path: str, size: int, mtime_ns: int) -> tuple[dict, dict, int]:
    with open(path, "rb") as fh:
        def raw(n: int) -> bytes:
            if n > size - fh.tell():
                _bad(path, "truncated header")
            return fh.read(n)

        def get(code: str):
            return struct.unpack("<" + code, raw(struct.calcsize("<" + code)))[0]

        def string() -> bytes:
            n = get("Q")
            if n > MAX_STRING:
                _bad(path, f"a string of {n} bytes")
            return raw(n)

        def text(what: str) -> str:
            try:
                return string().decode("utf-8")
            except UnicodeDecodeError:
                _bad(path, f"a {what} that is not UTF-8")

        def value(t: int):
            if t in _SCALAR:
                return get(_SCALAR[t])
            if t == 8:
                return string().decode("utf-8", "replace")
            if t != 9:
                _bad(path, f"unknown metadata value type {t}")
            it, n = get("i"), get("Q")
            if it == 9 or it not in _SCALAR and it != 8:
                _bad(path, f"an array of value type {it}")
            if n > MAX_ARRAY or n * struct.calcsize(_SCALAR.get(it, "Q")) > size - fh.tell():
                _bad(path, f"an array of {n} elements")
            if it in _SCALAR:
                return list(struct.unpack(f"<{n}{_SCALAR[it]}", raw(n * struct.calcsize(_SCALAR[it]))))
            return [value(8) for _ in range(n)]

        if raw(4) != b"GGUF":  # the certificate says GGUF of the file its SHA-256 pins
            _bad(path, "it does not begin with the magic GGUF")
        version = get("I")
        if version & 0xFFFF == 0:
            _bad(path, f"version {version}: the other byte order")
        if version not in (2, 3):
            _bad(path, f"version {version} (llama.cpp reads 2 and 3)")
        n_t, n_kv = get("q"), get("q")
        if n_t < 0 or n_kv < 0:
            _bad(path, "a negative tensor or key-value count")
        meta: dict = {}
        types: dict = {}
        for _ in range(n_kv):  # each pair reads ≥ 12 bytes: bounded by the file's size
            k = text("key")
            if not k or k in meta:
                _bad(path, f"key {k!r} is empty or repeated")
            types[k] = get("i")
            meta[k] = value(types[k])
        align = meta.get("general.alignment", 32)
        if "general.alignment" in meta and not (types["general.alignment"] == 4 and align and align & (align - 1) == 0):
            _bad(path, f"general.alignment {align!r} is not a u32 power of two")
        tensors: dict = {}
        for _ in range(n_t):
            name = text("tensor name")
            if len(name.encode("utf-8")) >= MAX_NAME or name in tensors:
                _bad(path, f"tensor name {name[:80]!r} is {'repeated' if name in tensors else 'too long'}")
            nd = get("I")
            if nd > MAX_DIMS:
                _bad(path, f"tensor {name!r} has {nd} dimensions")
            dims = [get("q") for _ in range(nd)]
            count = 1
            for d in dims:
                if d < 0:
                    _bad(path, f"tensor {name!r} has a negative dimension")
                count *= d
            if count >= 1 << 63:
                _bad(path, f"tensor {name!r} has too many elements")
            t = get("i")
            if t not in TYPES:
                _bad(path, f"tensor {name!r} has unknown ggml type {t}")
            _, per, bsize = TYPES[t]
            if (dims[0] if dims else 1) % per:
                _bad(path, f"tensor {name!r}: rows of {dims[0]} values are not whole {TYPES[t][0]} blocks of {per}")
            tensors[name] = (dims, t, get("Q"), count // per * bsize)
        start = fh.tell() + (-fh.tell()) % align
    end = 0
    for name, (dims, t, off, nbytes) in tensors.items():
        if off != end:
            _bad(path, f"tensor {name!r} at data offset {off}, expected {end} (tensors in order, padded to {align})")
        if start + off + nbytes > size:
            _bad(path, f"tensor {name!r}: data is not within the file")
        end = off + nbytes + (-nbytes) % align
    return meta, {k: v[:3] for k, v in tensors.items()}, start


# --- blocks -> exact values (m, e) -------------------------------------------------------------

def _sum(terms: list[tuple[int, int, int, int]]) -> list[tuple[int, int]]:
    """[(a·2^x + b·2^y)] as (m, e) pairs for each (a, x, b, y)."""
    out = []
    for a, x, b, y in terms:
        lo = min(x, y)
        out.append(((a << (x - lo)) + (b << (y - lo)), lo))
    return out


def _q4_0(b):
    (dm, de), qs = _h(b, 0), b[2:18]
    return [(dm * (q - 8), de) for q in [x & 15 for x in qs] + [x >> 4 for x in qs]]


def _q4_1(b):
    (dm, de), (mm, me), qs = _h(b, 0), _h(b, 2), b[4:20]
    return _sum([(dm * q, de, mm, me) for q in [x & 15 for x in qs] + [x >> 4 for x in qs]])


def _q5(b, with_min: bool):
    (dm, de) = _h(b, 0)
    o = 4 if with_min else 2
    qh, qs = int.from_bytes(b[o:o + 4], "little"), b[o + 4:o + 20]
    lo = [(qs[j] & 15) | ((qh >> j) & 1) << 4 for j in range(16)]
    hi = [(qs[j] >> 4) | ((qh >> (j + 16)) & 1) << 4 for j in range(16)]
    if not with_min:
        return [(dm * (q - 16), de) for q in lo + hi]
    mm, me = _h(b, 2)
    return _sum([(dm * q, de, mm, me) for q in lo + hi])


def _q8_0(b):
    dm, de = _h(b, 0)
    return [(dm * q, de) for q in struct.unpack("<32b", b[2:34])]


def _q2_k(b):
    sc, qs, (dm, de), (nm, ne) = b[0:16], b[16:80], _h(b, 80), _h(b, 82)
    out, i = [], 0
    for n in (0, 32):
        for shift in (0, 2, 4, 6):
            for half in (0, 16):
                s = sc[i]
                i += 1
                out += _sum([(dm * (s & 15) * ((qs[n + half + l] >> shift) & 3), de, -nm * (s >> 4), ne)
                             for l in range(16)])
    return out


def _q3_k(b):
    hm, qs, raw, (dm, de) = b[0:32], b[32:96], b[96:108], _h(b, 108)
    a = [int.from_bytes(raw[4 * k:4 * k + 4], "little") for k in range(3)]
    k1, k2 = 0x03030303, 0x0F0F0F0F
    aux = [(a[0] & k2) | ((a[2] & k1) << 4), (a[1] & k2) | (((a[2] >> 2) & k1) << 4),
           ((a[0] >> 4) & k2) | (((a[2] >> 4) & k1) << 4), ((a[1] >> 4) & k2) | (((a[2] >> 6) & k1) << 4)]
    scales = [x - 256 if x > 127 else x for x in b"".join(v.to_bytes(4, "little") for v in aux)]
    out, i, m = [], 0, 1
    for n in (0, 32):
        for shift in (0, 2, 4, 6):
            for half in (0, 16):
                s = scales[i] - 32
                i += 1
                out += [(dm * s * (((qs[n + half + l] >> shift) & 3) - (0 if hm[half + l] & m else 4)), de)
                        for l in range(16)]
            m <<= 1
    return out


def _scale_min_k4(j: int, q: bytes) -> tuple[int, int]:
    if j < 4:
        return q[j] & 63, q[j + 4] & 63
    return (q[j + 4] & 15) | ((q[j - 4] >> 6) << 4), (q[j + 4] >> 4) | ((q[j] >> 6) << 4)


def _qk(b, five: bool):
    (dm, de), (nm, ne), sc = _h(b, 0), _h(b, 2), b[4:16]
    qh, ql = (b[16:48], b[48:176]) if five else (b"", b[16:144])
    out = []
    for j in range(4):
        for half in (0, 1):
            s, mn = _scale_min_k4(2 * j + half, sc)
            bit = 1 << (2 * j + half)
            for l in range(32):
                q = (ql[32 * j + l] >> (4 * half)) & 15
                if five and qh[l] & bit:
                    q += 16
                out.append((dm * s * q, de, -nm * mn, ne))
    return _sum(out)


def _q6_k(b):
    ql, qh, sc, (dm, de) = b[0:128], b[128:192], struct.unpack("<16b", b[192:208]), _h(b, 208)
    out = [None] * 256
    for n in (0, 1):
        L, H, S, y = ql[64 * n:], qh[32 * n:], sc[8 * n:], 128 * n
        for l in range(32):
            i = l // 16
            q = [((L[l] & 15) | ((H[l] & 3) << 4)) - 32, ((L[l + 32] & 15) | (((H[l] >> 2) & 3) << 4)) - 32,
                 ((L[l] >> 4) | (((H[l] >> 4) & 3) << 4)) - 32, ((L[l + 32] >> 4) | (((H[l] >> 6) & 3) << 4)) - 32]
            for k in range(4):
                out[y + l + 32 * k] = (dm * S[i + 2 * k] * q[k], de)
    return out


BLOCKS = {"Q4_0": _q4_0, "Q4_1": _q4_1, "Q5_0": lambda b: _q5(b, False), "Q5_1": lambda b: _q5(b, True),
          "Q8_0": _q8_0, "Q2_K": _q2_k, "Q3_K": _q3_k, "Q4_K": lambda b: _qk(b, False),
          "Q5_K": lambda b: _qk(b, True), "Q6_K": _q6_k}


def matrix(path: Path, name: str) -> tuple[int, int, str, int]:
    """(rows ne1, row length ne0, ggml type name, absolute offset of the data) of tensor ``name``
    read as a matrix by ggml's rule: dimensions padded with 1s to four, a matrix when
    ne2 = ne3 = 1 (llama.cpp's loader accepts [ne0, ne1, 1] for [ne0, ne1]; [ne0] is one row).
    Invalid for another tensor; Undecided for a type the kernel does not decode.  Nothing but
    the header is read."""
    _, tensors, start = header(Path(path))
    require(name in tensors, "weights", f"no tensor {name!r} in {Path(path).name}")
    dims, t, off = tensors[name]
    ne = list(dims) + [1] * (MAX_DIMS - len(dims))
    require(ne[2:] == [1, 1], "input", f"{name} {dims} is not a matrix (ggml dimensions beyond the second must be 1)")
    kind = TYPES[t][0]
    if kind not in IEEE and kind not in BLOCKS:
        raise Undecided(f"{name} has ggml type {kind}; the kernel reads {', '.join(list(IEEE) + list(BLOCKS))}")
    return ne[1], ne[0], kind, start + off


def _decode(kind: str, raw: bytes) -> list[tuple[int, int]]:
    """The exact values (m, e) of whole blocks (or IEEE numbers) ``raw`` of ggml type ``kind``."""
    if kind in IEEE:
        eb, fb = IEEE[kind]
        code = {2: "H", 4: "I", 8: "Q"}[_SIZE[kind]]
        return [_float(u, eb, fb) for (u,) in struct.iter_unpack("<" + code, raw)]
    dec, size, out = BLOCKS[kind], _SIZE[kind], []
    for s in range(0, len(raw), size):
        out.extend(dec(raw[s:s + size]))
    return out


def _limit(entries: int, max_entries: int | None, what: str) -> None:
    from . import weights

    cap = 4 * weights.MAX_HEAD_ENTRIES if max_entries is None else max_entries
    if entries > cap:
        raise Undecided(f"{what}: {entries} entries exceed the kernel's limit of {cap}")


def rows(path: Path, name: str, a: int, b: int, max_entries: int | None = None) -> tuple[list[tuple[int, int]], int]:
    """Rows [a, b) of matrix ``name`` as (m, e) pairs (value m·2^e, row-major) and the row length.
    The slice and its size (at most ``max_entries``, by default the kernel's 4·2^24) are checked
    from the header before any block is read."""
    R, C, kind, base = matrix(path, name)
    require(0 <= a < b <= R, "input", f"rows {a}:{b} of {name} [{C}, {R}]")
    _limit((b - a) * C, max_entries, f"rows {a}:{b} of {name}")
    _, per, size = _KIND[kind]
    rb = C // per * size
    with open(path, "rb") as fh:
        fh.seek(base + a * rb)
        raw = fh.read((b - a) * rb)
    return _decode(kind, raw), C


def columns(path: Path, name: str, a: int, b: int, max_entries: int | None = None) -> list[list[tuple[int, int]]]:
    """Columns [a, b) of matrix ``name``, row by row: from each row only the blocks holding them
    are read (the size is checked from the header first, as in :func:`rows`)."""
    R, C, kind, base = matrix(path, name)
    require(0 <= a < b <= C, "input", f"cols {a}:{b} of {name} [{C}, {R}]")
    _limit(R * (b - a), max_entries, f"cols {a}:{b} of {name}")
    _, per, size = _KIND[kind]
    rb, b0, b1 = C // per * size, a // per, (b - 1) // per + 1
    out = []
    with open(path, "rb") as fh:
        for r in range(R):
            fh.seek(base + r * rb + b0 * size)
            vals = _decode(kind, fh.read((b1 - b0) * size))
            out.append(vals[a - b0 * per:b - b0 * per])
    return out


def unpermute(vals: list, n: int, C: int) -> list:
    """Rows of one head (n × C, row-major) from llama.cpp's converter order back to HF order:
    HF row half·n/2 + i is GGUF row 2i + half (the inverse of the converter's permutation)."""
    require(n % 2 == 0, "input", f"a RoPE row permutation of {n} rows")
    order = [2 * (r % (n // 2)) + r // (n // 2) for r in range(n)]
    return [v for r in order for v in vals[r * C:(r + 1) * C]]


def read_slice(path: Path, t: dict, max_entries: int | None = None):
    """Rows [a, b) (``rows``) or columns [a, b) (``cols``) of matrix ``t["name"]``, exactly, as
    an fmpq_mat [rows, cols] of the tensor as stored ([ne1, ne0], torch [out, in]), transposed
    when ``t["transpose"]`` (the contract of :func:`qkverify.kernel.weights.read_slice`); at most
    ``max_entries`` entries (Undecided beyond, decided from the header)."""
    from flint import fmpq, fmpq_mat

    if "rows" in t:
        a, b = t["rows"]
        vals, C = rows(path, t["name"], a, b, max_entries)
        grid = [vals[i * C:(i + 1) * C] for i in range(b - a)]
    else:
        grid = columns(path, t["name"], *t["cols"], max_entries)
    X = fmpq_mat([[fmpq(m << x) if x >= 0 else fmpq(m, 1 << -x) for m, x in row] for row in grid])
    return X.transpose() if t.get("transpose") else X


__all__ = ["header", "matrix", "rows", "columns", "read_slice", "unpermute", "TYPES", "BLOCKS", "Invalid"]
