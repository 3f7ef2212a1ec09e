"""A GGUF writer for tests, written from the format's layout (not gguf-py's writer), so that
malformed files can be made too: any version, duplicate keys or tensors, any offsets, types
and alignment."""

from __future__ import annotations

import struct

import numpy as np

U32, I32, F32, STRING, ARRAY, U64 = 4, 5, 6, 8, 9, 10
Q4_1 = 3


def s(x: str | bytes) -> bytes:
    b = x.encode("utf-8") if isinstance(x, str) else x
    return struct.pack("<Q", len(b)) + b


def kv(key: str, vtype: int, value) -> bytes:
    """One metadata pair; ``value`` is a str (STRING), a number or a (elem type, list) (ARRAY)."""
    out = s(key) + struct.pack("<I", vtype)
    if vtype == STRING:
        return out + s(value)
    if vtype == ARRAY:
        et, items = value
        out += struct.pack("<IQ", et, len(items))
        for v in items:
            out += kv("", et, v)[8 + 4:]  # the value part of a pair with an empty key
        return out
    return out + struct.pack("<" + {U32: "I", I32: "i", F32: "f", U64: "Q"}[vtype], value)


def f16(x: float) -> bytes:
    return np.array([x], "<f2").tobytes()


def q4_1_block(d: float | bytes, m: float | bytes, q: list[int]) -> bytes:
    """One Q4_1 block (32 values d·q + m): f16 d, f16 m, then q[j] | q[j+16] << 4 for j < 16."""
    d = d if isinstance(d, bytes) else f16(d)
    m = m if isinstance(m, bytes) else f16(m)
    assert len(q) == 32 and all(0 <= x < 16 for x in q)
    return d + m + bytes(q[j] | q[j + 16] << 4 for j in range(16))


def gguf_file(kvs: list[bytes], tensors: list[tuple], data: bytes, version: int = 3, align: int = 32) -> bytes:
    """Header (magic, version, counts, pairs, tensor infos), padding to ``align``, then ``data``.
    A tensor is (name, dims [ne0, ne1, …], ggml type, offset in the data section)."""
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs)) + b"".join(kvs)
    for name, dims, t, off in tensors:
        out += s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", t, off)
    out += b"\0" * ((-len(out)) % align)
    return out + data


def llama_kvs(n_head: int, n_kv: int, N: int, d_head: int, name: str = "tiny-q4_1") -> list[bytes]:
    return [kv("general.architecture", STRING, "llama"), kv("general.name", STRING, name),
            kv("llama.block_count", U32, 1), kv("llama.embedding_length", U32, N),
            kv("llama.attention.head_count", U32, n_head), kv("llama.attention.head_count_kv", U32, n_kv),
            kv("llama.rope.dimension_count", U32, d_head), kv("llama.rope.freq_base", F32, 10000.0)]


def pad(b: bytes, align: int = 32) -> bytes:
    return b + b"\0" * ((-len(b)) % align)
