"""Exact head matrices from a safetensors file, read by the kernel itself.

The kernel finds the weights file whose SHA-256 is the certificate's (among
the recorded name next to the certificate, the recorded path, and the
directories passed with ``--weights``), reads the tensors' raw bytes and turns
each IEEE float into the exact dyadic rational it is, with integer arithmetic
only.  M = [W_K; W_Q] = Z·2^e with Z an integer matrix."""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import lzma
import os
import stat
import sys
import zipfile
import zlib
from array import array
from pathlib import Path, PurePosixPath

from flint import fmpq, fmpq_mat, fmpz_mat

from .jsonio import Invalid, Undecided, require

MAX_HEAD_ENTRIES = 1 << 24
#: dtype -> (bytes, exponent bits, fraction bits, array typecode of the raw bits)
FLOATS = {"F64": (8, 11, 52, "Q"), "F32": (4, 8, 23, "I"), "F16": (2, 5, 10, "H"), "BF16": (2, 8, 7, "H")}


@functools.lru_cache(maxsize=32)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _can_be_weights(c: Path) -> bool:
    """Whether candidate ``c`` can be a weights file the kernel reads: a regular file of at least
    10 bytes that begins as a safetensors file (a u64 header length ≤ 10^8, then ``{``), a GGUF
    file or a zip (.npz) does.  Decided from its size and first 9 bytes, read non-blocking, so a
    hint at a pseudo-file that never ends (``/proc/kmsg``: size 0) or at any other big file is
    never read through: its readers would refuse such a file anyway."""
    st = c.stat()
    if not stat.S_ISREG(st.st_mode) or st.st_size < 10:
        return False
    fd = os.open(c, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        head = os.read(fd, 9)
    finally:
        os.close(fd)
    return (head[:4] == b"GGUF" or head[:4] in NPZ_SIGNATURES
            or (int.from_bytes(head[:8], "little") <= ST_MAX_HEADER and head[8:9] == b"{"))


def find(file: str, sha256: str, base_dir: Path | None, dirs: list[str]) -> Path:
    """The candidate file whose SHA-256 is ``sha256``; Undecided naming the candidates when none is.

    ``file`` is the recorded name or a ``path_hint`` (a relative POSIX path).  Candidates, in
    order: ``file`` relative to the certificate's directory ``base_dir``, its name there, ``file``
    relative to the working directory, its name in each of ``dirs`` (``--weights`` and the
    installed model packages).  A candidate is hashed only if it can be a weights file
    (:func:`_can_be_weights`), and used only when its SHA-256 is the certificate's: a hint can
    point nowhere dangerous."""
    name = Path(file).name
    cands = ([base_dir / file, base_dir / name] if base_dir else []) + [Path(file)] + [Path(d) / name for d in dirs]
    seen = []
    for c in cands:
        try:
            if _can_be_weights(c):
                st = c.stat()
                if _sha256(str(c.resolve()), st.st_size, st.st_mtime_ns) == sha256:
                    return c
                seen.append(str(c))
        except OSError:
            continue
    why = f"{len(seen)} candidate(s) with other SHA-256" if seen else "no candidate file found"
    raise Undecided(f"weights file {name} with the certificate's SHA-256: {why}; pass --weights DIR")


#: every dtype the reference loader (safetensors 0.8) knows, with its width in bits
ST_BITS = {"BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8,
           "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16, "F16": 16, "BF16": 16,
           "I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64, "I64": 64, "U64": 64}
ST_MAX_HEADER = 100_000_000
_U64 = 1 << 64


def _st_bad(path: Path, why: str):
    raise Invalid("weights", f"{Path(path).name} is not a valid safetensors file: {why}")


#: serde_json's table of powers of ten (f64 literals 1e0 … 1e308, correctly rounded)
_POW10 = [float(f"1e{i}") for i in range(309)]
_I32 = (-(1 << 31), (1 << 31) - 1)
#: serde_json's recursion limit: arrays and objects nest at most 127 deep
SERDE_MAX_DEPTH = 127


def _serde_f64(lit: str) -> float:
    """The f64 serde_json 1.x (no ``float_roundtrip``: its fast, inexact parser, which the
    reference loader is built with) makes of the JSON number ``lit``; ValueError where it answers
    "number out of range".  Its steps (``parse_integer``, ``parse_long_integer``,
    ``parse_decimal[_overflow]``, ``parse_exponent[_overflow]``, ``f64_from_parts``): digits
    accumulate into a u64 significand until the next one would overflow it; further integer
    digits raise the decimal exponent, further fraction digits are dropped; the exponent is an
    i32 (on overflow: 0 for a zero significand or a negative exponent, else out of range),
    added with saturation; then f = significand as f64, multiplied by 10^e (out of range if it
    becomes infinite) or divided by 10^-e, in steps of 10^308 below 10^-308."""
    pos = not lit.startswith("-")
    mant, _, exp = lit.lstrip("-").replace("E", "e").partition("e")
    ip, _, fp = mant.partition(".")
    sig, e10 = 0, 0
    for i, c in enumerate(ip):
        if sig * 10 + ord(c) - 48 > _U64 - 1:
            e10 = len(ip) - i
            break
        sig = sig * 10 + ord(c) - 48
    for c in fp:
        if sig * 10 + ord(c) - 48 > _U64 - 1:
            break
        sig, e10 = sig * 10 + ord(c) - 48, e10 - 1
    if exp:
        neg, x = exp.startswith("-"), 0
        for c in exp.lstrip("+-"):
            x = x * 10 + ord(c) - 48
            if x > _I32[1]:
                if sig and not neg:
                    raise ValueError("number out of range")
                return 0.0 if pos else -0.0
        e10 = min(max(e10 - x if neg else e10 + x, _I32[0]), _I32[1])
    f = float(sig)
    while True:
        if abs(e10) < len(_POW10):
            if e10 >= 0:
                f *= _POW10[e10]
                if f in (float("inf"), float("-inf")):
                    raise ValueError("number out of range")
            else:
                f /= _POW10[-e10]
            break
        if f == 0.0:
            break
        if e10 >= 0:
            raise ValueError("number out of range")
        f, e10 = f / 1e308, e10 + 308
    return f if pos else -f


def _serde_int(lit: str):
    """An integer literal as serde_json reads it: a u64 or a nonzero i64 stays an integer;
    ``-0``, a negative below −2^63 and anything longer than u64 become an f64 (so no usize),
    possibly out of range."""
    digits = lit.lstrip("-")
    if len(digits) <= 20:
        v = int(lit)
        if -(1 << 63) <= v < _U64 and not (v == 0 and lit.startswith("-")):
            return v
    return _serde_f64(lit)


def _serde_strings_and_depth(obj) -> None:
    """ValueError unless every string (keys too) is valid Unicode -- no lone surrogate escape,
    which serde_json refuses wherever it is -- and arrays/objects nest at most
    :data:`SERDE_MAX_DEPTH` deep (the reference parses every value, ignored ones too)."""
    stack = [(obj, 1)]
    while stack:
        o, depth = stack.pop()
        if isinstance(o, (dict, list)):
            if depth > SERDE_MAX_DEPTH:
                raise ValueError(f"arrays/objects nested more than {SERDE_MAX_DEPTH} deep")
            for k, v in (o.items() if isinstance(o, dict) else ((None, v) for v in o)):
                if k is not None:
                    k.encode("utf-8")
                stack.append((v, depth + 1))
        elif isinstance(o, str):
            o.encode("utf-8")


def _st_json(text: str):
    """The header parsed as serde_json reads it -- numbers, strings and depth by serde_json's
    rules (:func:`_serde_f64`, :func:`_serde_int`, :func:`_serde_strings_and_depth`) -- and with
    every object's keys unique (the README's rule)."""
    def pairs(kv):
        out = {}
        for k, v in kv:
            if k in out:
                raise ValueError(f"duplicate key {k!r}")
            out[k] = v
        return out

    def const(c):
        raise ValueError(f"{c} is not JSON")

    hdr = json.loads(text, object_pairs_hook=pairs, parse_constant=const, parse_int=_serde_int,
                     parse_float=_serde_f64)
    _serde_strings_and_depth(hdr)
    return hdr


def _usize(v) -> bool:
    return type(v) is int and 0 <= v < _U64


def st_header(path: Path) -> tuple[dict, int]:
    """(tensors, data start) of a safetensors file checked by the format's rules, where tensors
    maps each name to (dtype, shape, absolute start, absolute end) of its bytes.

    The rules (the format as the safetensors README states it, and what the reference loader,
    ``safetensors`` 0.8's ``SafeTensors::read_metadata`` / ``Metadata::validate`` in
    huggingface/safetensors ``safetensors/src/tensor.rs``, refuses):

    1. the file has at least 8 bytes; the first 8 are N, a little-endian u64, with
       N ≤ 100,000,000 and 8 + N ≤ the file's size;
    2. the N header bytes are UTF-8 and a JSON object (begins with ``{``; the README's MUST,
       which 0.8 does not yet enforce) followed by JSON whitespace only;
    3. JSON as serde_json reads it, every value (ignored fields too: the reference parses the
       whole header): no NaN/Infinity, integers written as integers (``16.0``, ``1e1`` and
       ``-0`` are no usize), no number serde_json's parser puts out of the f64 range, no lone
       surrogate in any string, arrays/objects nested at most 127 deep; and no key twice in any
       object (the README: "Duplicate keys are disallowed"; serde keeps the last one silently,
       so a tensor named twice is refused here even when the reference would read it);
    4. ``__metadata__``, when present, is null or an object of strings to strings;
    5. every other key is a tensor: an object with ``dtype`` (one of :data:`ST_BITS`),
       ``shape`` (a list of u64) and ``data_offsets`` (exactly two u64, begin ≤ end); other
       fields are ignored, as serde ignores them;
    6. the element count (running product of the shape, each step < 2^64) times the dtype's
       bits is a whole number of bytes, equal to end − begin;
    7. sorted by (begin, end), the tensors tile the data buffer: the first begins at 0, each
       begins where the previous ends (no overlap, no gap — so two names never alias the same
       bytes), and the last end is exactly the file's size − 8 − N (no trailing bytes).

    A file that breaks a rule is Invalid: the SHA-256 pins the bytes, so the certificate's
    input is then no matrix at all."""
    st = Path(path).stat()
    return _st_header(str(path), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _st_header(path: str, size: int, mtime_ns: int) -> tuple[dict, int]:
    with open(path, "rb") as fh:
        head = fh.read(8)
        if head[:4] == b"GGUF":
            _st_bad(path, "it is a GGUF file")
        if len(head) < 8:
            _st_bad(path, "shorter than 8 bytes")
        n = int.from_bytes(head, "little")
        if n > ST_MAX_HEADER:
            _st_bad(path, f"header length {n} > {ST_MAX_HEADER}")
        if 8 + n > size:
            _st_bad(path, f"header length {n} runs past the end of the file")
        raw = fh.read(n)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        _st_bad(path, "header is not UTF-8")
    if not text.startswith("{"):
        _st_bad(path, "header does not begin with '{'")
    try:
        hdr = _st_json(text)
    except (ValueError, RecursionError, UnicodeEncodeError) as e:
        _st_bad(path, f"header is not JSON as the format reads it ({str(e)[:120]})")
    if not isinstance(hdr, dict):
        _st_bad(path, "header is not a JSON object")
    meta = hdr.pop("__metadata__", None)
    if meta is not None and not (isinstance(meta, dict) and all(isinstance(v, str) for v in meta.values())):
        _st_bad(path, "__metadata__ is not a map of strings to strings")
    try:
        for v in (meta or {}).values():
            v.encode("utf-8")
    except UnicodeEncodeError:
        _st_bad(path, "__metadata__ holds a lone surrogate")
    out, spans = {}, []
    for name, info in hdr.items():
        if not isinstance(info, dict) or not {"dtype", "shape", "data_offsets"} <= set(info):
            _st_bad(path, f"tensor {name!r} lacks dtype, shape or data_offsets")
        dt, shape, offs = info["dtype"], info["shape"], info["data_offsets"]
        if dt not in ST_BITS:
            _st_bad(path, f"tensor {name!r} has unknown dtype {dt!r}")
        if not (isinstance(shape, list) and all(_usize(d) for d in shape)):
            _st_bad(path, f"tensor {name!r}: shape is not a list of u64")
        if not (isinstance(offs, list) and len(offs) == 2 and all(_usize(o) for o in offs)):
            _st_bad(path, f"tensor {name!r}: data_offsets is not two u64")
        count = 1
        for d in shape:
            count *= d
            if count >= _U64:
                _st_bad(path, f"tensor {name!r}: element count overflows")
        bits = count * ST_BITS[dt]
        s, e = offs
        if bits % 8 or e < s or e - s != bits // 8:
            _st_bad(path, f"tensor {name!r}: data_offsets [{s}, {e}] do not hold {shape} × {dt}")
        out[name] = (dt, list(shape), 8 + n + s, 8 + n + e)
        spans.append((s, e, name))
    end = 0
    for s, e, name in sorted(spans):
        if s != end:
            _st_bad(path, f"tensor {name!r} begins at {s}, not at {end} "
                          + ("(its bytes overlap another tensor's)" if s < end else "(a gap before it)"))
        end = e
    if 8 + n + end != size:
        _st_bad(path, f"the tensors cover {end} data bytes, the file holds {size - 8 - n}")
    return out, 8 + n


def _dyadic(raw: bytes, dtype: str) -> list[tuple[int, int]]:
    """(mantissa, exponent) with value = mantissa·2^exponent, for each little-endian float."""
    size, wexp, tfrac, code = FLOATS[dtype]
    a = array(code)
    a.frombytes(raw)
    if sys.byteorder != "little":
        a.byteswap()
    emask, fmask, sbit = (1 << wexp) - 1, (1 << tfrac) - 1, 1 << (wexp + tfrac)
    off = (1 << (wexp - 1)) - 1 + tfrac
    out = []
    for u in a:
        E = (u >> tfrac) & emask
        require(E != emask, "weights", "the weights contain Inf or NaN, which are not rational numbers")
        m = (u & fmask) | (1 << tfrac if E else 0)
        out.append((-m if u & sbit else m, (E if E else 1) - off))
    return out


#: the most bytes the kernel inflates from one compressed ``.npz`` member (a zip bomb's
#: declared size is over it: undecided, naming the limit); stored members are read by seeking
NPZ_MAX_INFLATE = 1 << 31
NPY_MAX_HEADER = 10000  # numpy's own max_header_size


#: what may begin an .npz: numpy's np.load takes a file for a zip only when it begins so
NPZ_SIGNATURES = (b"PK\x03\x04", b"PK\x05\x06")
#: what zipfile and its decompressors raise for a member that is not what its headers say
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, RuntimeError, NotImplementedError)


@functools.lru_cache(maxsize=64)
def _npz_member_read(path: str, size: int, mtime_ns: int, member: str) -> None:
    """Read member ``member`` to its end once (per file version), so zipfile checks its CRC-32
    as numpy does; the streaming read of :func:`_npz_block` stops at the last needed entry."""
    with zipfile.ZipFile(path) as z, z.open(member) as fh:
        while fh.read(1 << 22):
            pass


def _npz_block(path: Path, name: str, idx: list[int], N: int, n: int) -> list[tuple[int, int]]:
    """The N × n block ``[*idx, :, :]`` of array ``name`` of an ``.npz`` (a zip of ``.npy`` files,
    format 1.0–3.0, C or Fortran order), row-major, as exact dyadics.

    Rules (numpy's ``np.load``, which refuses the rest): the file begins with a zip signature;
    the zip names each member once and never both ``X`` and ``X.npy`` (np.load's key ``X``
    would be the former); the member is not encrypted and its CRC-32 is right (it is read to
    its end once); the ``.npy`` header is ≤ 10000 bytes (numpy's limit) and a dict with
    ``descr``, ``fortran_order`` and ``shape``; the member holds exactly header +
    Π shape · itemsize bytes.  A member breaking them is Invalid; a dtype other than
    little-endian f2/f4/f8 (spelled ``'<f2'``, ``'<f4'``, ``'<f8'``, as numpy writes them) is
    Undecided; a compressed member declaring more than :data:`NPZ_MAX_INFLATE` bytes is
    Undecided (the limit), so a zip bomb is refused before anything is inflated.  Only the
    needed elements are kept in memory."""
    with open(path, "rb") as f0:
        require(f0.read(4) in NPZ_SIGNATURES, "weights",
                f"{path.name} does not begin with a zip signature (numpy's np.load refuses it as an .npz)")
    try:
        z = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError):
        raise Invalid("weights", f"{path.name} is not a valid .npz (zip) file") from None
    with z:
        names = z.namelist()
        require(len(names) == len(set(names)), "weights", f"{path.name}: a zip member named twice")
        both = sorted(m for m in set(names) if m + ".npy" in set(names))
        require(not both, "weights", f"{path.name}: members {both[:1]} and their .npy are both one array for np.load")
        try:
            info = z.getinfo(name + ".npy")
        except KeyError:
            raise Invalid("weights", f"no array {name!r} in {path.name}") from None
        if info.compress_type != zipfile.ZIP_STORED and info.file_size > NPZ_MAX_INFLATE:
            raise Undecided(f"{path.name}:{name} inflates to {info.file_size} bytes, over the kernel's limit of "
                            f"{NPZ_MAX_INFLATE} for a compressed member")
        require(not info.flag_bits & 1, "weights", f"{path.name}:{name} is an encrypted member")
        try:
            st = Path(path).stat()
            _npz_member_read(str(Path(path).resolve()), st.st_size, st.st_mtime_ns, info.filename)
            fh = z.open(info)
        except (*_ZIP_ERRORS, OSError) as e:  # OSError: e.g. bz2's "Invalid data stream"
            raise Invalid("weights", f"{path.name}:{name} cannot be read ({e})") from None
        with fh:
            head = fh.read(12)
            require(head[:6] == b"\x93NUMPY" and head[6:7] in (b"\x01", b"\x02", b"\x03") and len(head) == 12,
                    "weights", f"{name} is not a .npy array")
            hlen = int.from_bytes(head[8:10] if head[6] == 1 else head[8:12], "little")
            start = (10 if head[6] == 1 else 12) + hlen
            require(hlen <= NPY_MAX_HEADER, "weights", f"{name}: .npy header of {hlen} bytes")
            raw = (head + fh.read(start - 12))[start - hlen:start] if start > 12 else head[start - hlen:start]
            try:
                hdr = ast.literal_eval(raw.decode("latin1"))
            except (ValueError, SyntaxError, RecursionError, MemoryError):
                raise Invalid("weights", f"{name}: .npy header is not a Python literal") from None
            require(isinstance(hdr, dict) and set(hdr) == {"descr", "fortran_order", "shape"}
                    and isinstance(hdr["shape"], tuple) and all(type(d) is int and d >= 0 for d in hdr["shape"])
                    and type(hdr["fortran_order"]) is bool, "weights", f"{name}: malformed .npy header")
            dt = {"<f2": "F16", "<f4": "F32", "<f8": "F64"}.get(hdr["descr"]) if isinstance(hdr["descr"], str) else None
            if dt is None:
                raise Undecided(f"{name}: dtype {hdr['descr']!r}; the kernel reads little-endian f2/f4/f8 arrays")
            shape, sz = list(hdr["shape"]), FLOATS[dt][0]
            count = 1
            for d in shape:
                count *= d
            require(info.file_size == start + count * sz, "weights",
                    f"{name}: the member holds {info.file_size} bytes, its header needs {start + count * sz}")
            require(len(shape) == len(idx) + 2 and shape[-2:] == [N, n] and all(0 <= i < d for i, d in zip(idx, shape)),
                    "input", f"{name} {shape} does not hold an N × n block at {idx}")
            # element strides (in elements) of the row-major or column-major layout
            strides, acc = [0] * len(shape), 1
            for k in (range(len(shape)) if hdr["fortran_order"] else reversed(range(len(shape)))):
                strides[k], acc = acc, acc * shape[k]
            base = sum(i * st for i, st in zip(idx, strides))
            sr, sc = strides[-2], strides[-1]
            want = sorted((base + r * sr + c * sc, r * n + c) for r in range(N) for c in range(n))
            out: list = [None] * (N * n)
            lo, hi = want[0][0], want[-1][0] + 1
            fh.seek(start + lo * sz)
            pos, buf, CH = lo, b"", 1 << 22
            for e, k in want:  # stream forward through [lo, hi), keeping only the wanted entries
                while e >= pos + len(buf) // sz:
                    pos += len(buf) // sz
                    buf = fh.read(min(CH, (hi - pos) * sz))
                    require(buf, "weights", f"{name}: data truncated")
                j = (e - pos) * sz
                out[k] = buf[j:j + sz]
    return _dyadic(b"".join(out), dt)


def _st_info(path: Path, name: str, vector_ok: bool = False) -> tuple[str, int, int, int, int]:
    """(dtype, R, C, bytes per entry, absolute byte offset of the data) of a 2-D float tensor of
    a safetensors file checked by :func:`st_header` (a 1-D one as one row when ``vector_ok``)."""
    tensors, _ = st_header(path)
    require(name in tensors, "weights", f"no tensor {name!r} in {path.name}")
    dt, shape, start, _end = tensors[name]
    if dt not in FLOATS:
        raise Undecided(f"tensor {name} has dtype {dt}; the kernel reads F64/F32/F16/BF16")
    if vector_ok:
        require(len(shape) in (1, 2), "weights", f"{name} is not a vector or matrix")
    else:
        require(len(shape) == 2, "weights", f"{name} is not a matrix")
    R, C = (shape if len(shape) == 2 else [1, shape[0]])
    return dt, R, C, FLOATS[dt][0], start


def _tensor(path: Path, t: dict, n: int, N: int) -> tuple[tuple[int, int], ...]:
    """The exact W_Q or W_K (n × N, row-major) that tensor reference ``t`` names, read once per
    version of the file (a head's profile and Theorem 3 certificates read the same rows)."""
    if n * N > CACHED_ROWS_MAX:  # kept only while small: at most 2 × 2^20 values (≈ 256 MiB) stay held
        return tuple(_tensor_values(Path(path), t, n, N))
    st = Path(path).stat()
    return _tensor_read(str(path), st.st_size, st.st_mtime_ns, json.dumps(t, sort_keys=True), n, N)


#: the largest n·N whose decoded rows are kept between certificates (W_K and W_Q of one head)
CACHED_ROWS_MAX = 1 << 20


@functools.lru_cache(maxsize=2)
def _tensor_read(path: str, size: int, mtime_ns: int, t_json: str, n: int, N: int) -> tuple[tuple[int, int], ...]:
    return tuple(_tensor_values(Path(path), json.loads(t_json), n, N))


def _tensor_values(path: Path, t: dict, n: int, N: int) -> list[tuple[int, int]]:
    fmt = t.get("format", "safetensors")
    slices = {"safetensors": ("rows", "cols"), "npz": ("index",), "gguf": ("rows",)}.get(fmt, ())
    require(any(k in t for k in slices), "input", f"{t['name']}: a {fmt} tensor is sliced by {' or '.join(slices)}")
    # a transform the kernel would not apply must not be stated: the statement would not be what is checked
    require(fmt == "gguf" or "transform" not in t, "input", f"{t['name']}: a transform applies to GGUF tensors only")
    if fmt == "npz":  # TransformerLens [..., d_model, d_head] arrays, indexed, then transposed
        vals = _npz_block(path, t["name"], t["index"], N, n)
        return [vals[r * n + c] for c in range(n) for r in range(N)]
    if fmt == "gguf":  # rows [a, b) of an [ne1, ne0] = [out, in] matrix, blocks read exactly
        from . import gguf

        require("rows" in t, "input", f"{t['name']}: a GGUF tensor is sliced by rows")
        a, b = t["rows"]
        R, C = gguf.matrix(path, t["name"])[:2]  # the slice is checked from the header before reading
        require(b - a == n and C == N, "input", f"rows {a}:{b} of {t['name']} are not an n × N = {n} × {N} block")
        vals, C = gguf.rows(path, t["name"], a, b)
        return gguf.unpermute(vals, n, C) if "RoPE" in t.get("transform", "") else vals
    if fmt != "safetensors":
        raise Undecided(f"tensor {t['name']} is in a {fmt} file: the kernel reads safetensors, GGUF and .npz tensors")
    dt, R, C, sz, off = _st_info(path, t["name"])
    shape = [R, C]
    with open(path, "rb") as fh:
        if "rows" in t:
            a, b = t["rows"]
            require(0 <= a and b == a + n <= R and C == N, "input", f"rows {a}:{b} of {t['name']} {shape}")
            fh.seek(off + a * C * sz)
            return _dyadic(fh.read(n * C * sz), dt)
        a, b = t["cols"]
        require(0 <= a and b == a + n <= C and R == N, "input", f"cols {a}:{b} of {t['name']} {shape}")
        fh.seek(off)
        allv = _dyadic(fh.read(R * C * sz), dt)
        return [allv[r * C + c] for c in range(a, b) for r in range(R)]


def head_Z(tensors: list[dict], n: int, N: int, locate) -> tuple[fmpz_mat, int]:
    """(Z, e) with [W_K; W_Q] = Z·2^e exactly (2n × N), from the recorded tensor slices, each
    read from the file ``locate(path_hint or file, sha256)`` returns: ``rows [a, b)`` of an ``[out, in]``
    tensor, ``cols [a, b)`` of an ``[in, out]`` one (GPT-2 Conv1D, transposed), or an ``index``
    into a TransformerLens ``.npz`` array (transposed)."""
    if 2 * n * N > MAX_HEAD_ENTRIES:  # a limit: undecided (TRUST.md), not a false statement
        raise Undecided(f"2n·N = {2 * n * N} head entries exceed the kernel's limit of {MAX_HEAD_ENTRIES}")
    got = {}
    for t in tensors:
        require(t["role"] not in got, "input", f"{t['role']} given twice")
        hint = t.get("path_hint")
        require(hint is None or PurePosixPath(hint).name == t["file"], "input",
                f"path_hint {hint!r} does not name the file {t['file']}")
        # the hint (relative to the certificate's directory) is one more candidate place; the
        # file is used only if its SHA-256 is the recorded one (find)
        got[t["role"]] = _tensor(locate(hint or t["file"], t["sha256"]), t, n, N)
    require(set(got) == {"W_Q", "W_K"}, "input", "the tensors must give W_Q and W_K")
    vals = got["W_K"] + got["W_Q"]
    emin = min((x for m, x in vals if m), default=0)
    ints = [m << (x - emin) if m else 0 for m, x in vals]
    orv = 0
    for v in ints:
        orv |= v
    tz = (orv & -orv).bit_length() - 1 if orv else 0
    return fmpz_mat(2 * n, N, [v >> tz for v in ints]), emin + tz


def to_Z(vals: list[tuple[int, int]], R: int, C: int) -> tuple[fmpz_mat, int]:
    """(Z, e) with the R×C row-major dyadic values m·2^x equal to Z·2^e exactly."""
    emin = min((x for m, x in vals if m), default=0)
    return fmpz_mat(R, C, [m << (x - emin) if m else 0 for m, x in vals]), emin


def tensor(path: Path, name: str, rows: list[int] | None = None) -> tuple[fmpz_mat, int]:
    """(Z, e): the chosen rows (all when None) of a 2-D tensor, or a 1-D tensor as one row,
    of a safetensors file (F64/F32/F16/BF16), exactly Z·2^e.  At most 4·2^24 rows and entries
    (Undecided beyond, from the header: a legal [2^40, 0] tensor is not listed)."""
    dt, R, C, sz, off = _st_info(path, name, vector_ok=True)
    shape = [R, C]
    n_rows = R if rows is None else len(rows)
    if n_rows > MAX_HEAD_ENTRIES * 4 or n_rows * C > MAX_HEAD_ENTRIES * 4:  # before any list is made
        raise Undecided(f"rows of {name} {shape}: over the kernel's limit of {MAX_HEAD_ENTRIES * 4} entries")
    rows = list(range(R)) if rows is None else rows
    require(all(0 <= r < R for r in rows), "input", f"rows of {name} {shape}")
    vals: list[tuple[int, int]] = []
    with open(path, "rb") as fh:
        if rows == list(range(R)):
            fh.seek(off)
            vals = _dyadic(fh.read(R * C * sz), dt)
        for r in [] if vals else rows:
            fh.seek(off + r * C * sz)
            vals.extend(_dyadic(fh.read(C * sz), dt))
    return to_Z(vals, len(rows), C)


def read_slice(path: Path, t: dict) -> fmpq_mat:
    """Rows [a, b) (``rows``) or columns [a, b) (``cols``) of a 2-d tensor, exactly, as the
    matrix [rows, cols] of the stored tensor (a ``[out, in]`` weight as stored), transposed
    when ``t["transpose"]``.  A GGUF file is read by :mod:`.gguf` (the same contract)."""
    with open(path, "rb") as fh:
        if fh.read(4) == b"GGUF":
            try:
                from . import gguf
            except ImportError:
                raise Undecided("a GGUF tensor: the kernel's GGUF reader (kernel/gguf.py) is not installed") from None
            return gguf.read_slice(path, t, MAX_HEAD_ENTRIES)
    dt, R, C, sz, off = _st_info(path, t["name"])
    shape = [R, C]
    a, b = t["rows"] if "rows" in t else t["cols"]
    require(0 <= a < b <= (R if "rows" in t else C), "input", f"slice {a}:{b} of {t['name']} {shape}")
    if (b - a) * (C if "rows" in t else R) > MAX_HEAD_ENTRIES:
        raise Undecided(f"slice {a}:{b} of {t['name']} {shape}: over the kernel's limit of {MAX_HEAD_ENTRIES} entries")
    rows = []
    with open(path, "rb") as fh:
        if "rows" in t:
            fh.seek(off + a * C * sz)
            vals = _dyadic(fh.read((b - a) * C * sz), dt)
            rows = [vals[i * C:(i + 1) * C] for i in range(b - a)]
        else:
            for r in range(R):
                fh.seek(off + (r * C + a) * sz)
                rows.append(_dyadic(fh.read((b - a) * sz), dt))
    X = fmpq_mat([[fmpq(m << x) if x >= 0 else fmpq(m, 1 << -x) for m, x in row] for row in rows])
    return X.transpose() if t.get("transpose") else X


__all__ = ["find", "head_Z", "read_slice", "tensor", "Invalid"]
