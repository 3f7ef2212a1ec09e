"""Breaking the safetensors readers (crafted files, after the weights merge).

The reference loader (``safetensors`` 0.8) parses the header with serde_json into a map whose
tensors are ``#[serde(flatten)]``-ed: every value of the header, ignored fields included, is
parsed in full.  So the reference refuses a header holding a number serde_json cannot make an
f64 of (``1e400``, a 400-digit integer, and -- its float parser being a fast, inexact one --
some literals within an ulp of the largest double), a lone UTF-16 surrogate escape in any string,
or arrays/objects nested 128 deep, wherever they are.  The producer reads through the reference
and so refuses them; the kernel's own reader accepted them all.  Each crafted header is shown to
the reference here, so the rule is checked, not assumed.

Huge shapes: a header may legally declare a [2^40, 0] tensor (no bytes); the kernel listed its
2^40 rows before applying its size limit, and the producer's read of a tensor with a dimension
≥ 2^63 ended in numpy's ValueError (a traceback)."""

from __future__ import annotations

import json
import random
import struct
from pathlib import Path

import numpy as np
import pytest
from safetensors import safe_open

from qkverify.errors import QKInputError
from qkverify.kernel import weights as KW
from qkverify.kernel.jsonio import Invalid, Undecided
from qkverify.models.safetensors_io import SafetensorsFile

Q = np.array([[1, 0, 0]], "<f4").tobytes()
K = np.array([[0, 1, 0]], "<f4").tobytes()


def t(s: int, e: int, shape=(1, 3), dt="F32", extra: str = "") -> str:
    return '{"dtype":"%s","shape":%s,"data_offsets":[%d,%d]%s}' % (dt, json.dumps(list(shape)), s, e, extra)


def blob(header: str, data: bytes = Q + K) -> bytes:
    hb = header.encode("utf-8")
    return struct.pack("<Q", len(hb)) + hb + data


def with_field(v: str) -> bytes:
    """The two-tensor file with an extra (ignored) field ``"x": v`` in q's entry."""
    return blob('{"q":%s,"k":%s}' % (t(0, 12, extra=',"x":' + v), t(12, 24)))


def reference_accepts(p: Path) -> bool:
    try:
        with safe_open(str(p), framework="numpy"):
            return True
    except Exception:
        return False


def kernel_accepts(p: Path) -> bool:
    try:
        KW.st_header(p)
        return True
    except Invalid:
        return False


def producer_accepts(p: Path) -> bool:
    try:
        SafetensorsFile(p)
        return True
    except QKInputError:
        return False


REFUSED = [
    ("1e400", with_field("1e400")), ("-1e400", with_field("-1e400")), ("[1e400]", with_field("[1e400]")),
    ("400-digit integer", with_field("1" + "0" * 400)), ("-310-digit integer", with_field("-1" + "0" * 310)),
    ("1.8e308", with_field("1.8e308")), ("1.7976931348623158e308", with_field("1.7976931348623158e308")),
    ("1.797693134862315708e308 (below the largest double, but serde's parser overflows)",
     with_field("1.797693134862315708e308")),
    ("the largest double as an integer literal", with_field(str(int(np.finfo(np.float64).max)))),
    ("lone leading surrogate", with_field('"\\ud800"')), ("lone trailing surrogate", with_field('"\\udc00"')),
    ("lone surrogate in a list", with_field('["\\ud800x"]')), ("lone surrogate in an object", with_field('{"a":"\\udfff"}')),
    ("arrays 126 deep in a tensor (128 in all)", with_field("[" * 126 + "]" * 126)),
    ("objects 126 deep in a tensor", with_field('{"a":' * 126 + "1" + "}" * 126)),
]
ACCEPTED = [
    ("1e-400 (underflows to 0)", with_field("1e-400")), ("20-digit integer", with_field("18446744073709551616")),
    ("the largest double", with_field("1.7976931348623157e308")), ("1.79769313486231572e308", with_field("1.79769313486231572e308")),
    ("a surrogate pair", with_field('"\\ud83d\\ude00"')), ("arrays 125 deep", with_field("[" * 125 + "]" * 125)),
    ("-0.0 and 1E5", with_field("[-0.0,1E5,-9223372036854775809]")),
    ("exponent overflow with a zero significand", with_field("0e99999999999")),
    ("negative exponent overflow", with_field("1e-99999999999")),
]


@pytest.mark.parametrize("name,data", REFUSED, ids=[r[0] for r in REFUSED])
def test_the_kernel_refuses_headers_the_reference_refuses(tmp_path, name, data):
    p = tmp_path / "m.safetensors"
    p.write_bytes(data)
    assert not reference_accepts(p), "the reference loader's verdict changed"
    assert not producer_accepts(p)
    with pytest.raises(Invalid, match="not a valid safetensors file"):
        KW.st_header(p)


@pytest.mark.parametrize("name,data", ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_the_kernel_reads_headers_the_reference_reads(tmp_path, name, data):
    p = tmp_path / "m.safetensors"
    p.write_bytes(data)
    assert reference_accepts(p) and producer_accepts(p) and kernel_accepts(p)


def test_numbers_in_the_header_are_refused_exactly_when_the_reference_refuses_them(tmp_path):
    """600 random number literals near the edges of f64 (long significands, exponents near
    ±308, integers of 19-310 digits): the kernel's verdict is the reference loader's on each."""
    rng = random.Random(18)
    p = tmp_path / "m.safetensors"
    disagree = []
    for _ in range(600):
        c = rng.random()
        if c < 0.3:
            lit = str(rng.randrange(1, 10)) + "." + "".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 25)))
            lit += "e" + str(rng.choice([307, 308, 308, 308, 309, -330, -320]))
        elif c < 0.5:
            lit = "17976931348623157" + "".join(rng.choice("0123456789") for _ in range(rng.randrange(0, 6)))
            lit += "e" + str(308 - 16 - rng.randrange(-1, 2))
        elif c < 0.8:
            lit = str(rng.randrange(1, 10)) + "".join(rng.choice("0123456789") for _ in range(rng.randrange(18, 311)))
        else:
            lit = "".join(rng.choice("0123456789") for _ in range(rng.randrange(15, 30))).lstrip("0") or "1"
            lit = lit[:rng.randrange(1, len(lit) + 1)] + "." + lit + "e" + str(rng.randrange(280, 300))
        lit = ("-" if rng.random() < .3 else "") + lit
        p.write_bytes(with_field(lit))
        if reference_accepts(p) != kernel_accepts(p):
            disagree.append(lit)
    assert not disagree, disagree[:5]


# --- huge shapes ---------------------------------------------------------------------------------

def test_a_tensor_of_2_40_empty_rows_is_refused_by_its_size_not_listed(tmp_path):
    """[2^40, 0] is a legal tensor (no bytes).  tensor() listed its 2^40 rows before applying its
    limit (MemoryError, or with 2^30 rows an exhausted machine); now the row count is a limit."""
    p = tmp_path / "m.safetensors"
    p.write_bytes(blob('{"e":%s,"q":%s,"k":%s}' % (t(0, 0, (1 << 40, 0)), t(0, 12), t(12, 24))))
    assert reference_accepts(p)
    with pytest.raises(Undecided, match="limit"):
        KW.tensor(p, "e")


def test_the_producer_refuses_a_tensor_numpy_cannot_shape_in_one_line(tmp_path):
    """[2^64 − 1, 0]: the header is legal, numpy refuses the shape (ValueError, a traceback)."""
    p = tmp_path / "m.safetensors"
    p.write_bytes(blob('{"e":%s,"q":%s,"k":%s}' % (t(0, 0, ((1 << 64) - 1, 0)), t(0, 12), t(12, 24))))
    f = SafetensorsFile(p)
    with pytest.raises(QKInputError, match="cannot read tensor e"):
        f.get("e")


# --- the same values on both sides ------------------------------------------------------------------

@pytest.mark.parametrize("dt,bits", [("F16", 16), ("BF16", 16), ("F32", 32), ("F64", 64)])
def test_random_bit_patterns_read_the_same_by_producer_and_kernel(tmp_path, dt, bits):
    """Every finite pattern class (zeros, subnormals, normals up to the largest, both signs) of a
    7 × 9 tensor: the producer's float (exact) equals the kernel's m·2^e entry by entry, and
    both equal the IEEE value computed here from the bits."""
    from fractions import Fraction

    E = {16: 5, 32: 8, 64: 11}[bits] if dt != "BF16" else 8
    Fb = bits - 1 - E
    rng = random.Random(bits + len(dt))
    pats = []
    while len(pats) < 63:
        u = rng.getrandbits(bits) if rng.random() < .7 else rng.choice([0, 1, (1 << Fb) - 1, 1 << Fb, ((1 << E) - 2) << Fb])
        if rng.random() < .5:
            u |= 1 << (bits - 1)
        if (u >> Fb) & ((1 << E) - 1) != (1 << E) - 1:
            pats.append(u)

    def value(u):
        s, e, f = u >> (bits - 1), (u >> Fb) & ((1 << E) - 1), u & ((1 << Fb) - 1)
        bias = (1 << (E - 1)) - 1
        v = Fraction(f, 1 << Fb) * Fraction(2) ** (1 - bias) if e == 0 else (1 + Fraction(f, 1 << Fb)) * Fraction(2) ** (e - bias)
        return -v if s else v

    code = {16: "<H", 32: "<I", 64: "<Q"}[bits]
    data = b"".join(struct.pack(code, u) for u in pats)
    p = tmp_path / "m.safetensors"
    p.write_bytes(blob('{"w":%s}' % t(0, len(data), (7, 9), dt), data))
    want = [value(u) for u in pats]
    mine = [Fraction(float(x)) for x in SafetensorsFile(p).get("w").reshape(-1)]
    Z, e = KW.tensor(p, "w")
    kern = [Fraction(int(z)) * Fraction(2) ** e for z in Z.entries()]
    assert mine == want and kern == want
