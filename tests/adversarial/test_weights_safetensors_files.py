"""Crafted safetensors files (issue 18, item 6): producer and kernel refuse what the format's
rules refuse -- a tensor named twice, overlapping / out-of-range / incomplete data offsets,
header length, JSON, dtype and shape-size mismatches, a bad ``__metadata__`` -- and read
everything the reference loader reads.  The producer answers exit 2 with one line; the kernel
calls a certificate over such a file *invalid* (check ``weights``): the SHA-256 pins the bytes,
so the certificate's input is no matrix at all (TRUST.md).

Each crafted file is also shown to the reference loader (``safetensors.safe_open``), so the
rule's source is checked, not assumed; the two rules the README states and the reference does
not enforce (duplicate keys, a header beginning with ``{``) are marked."""

from __future__ import annotations

import hashlib
import json
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
from safetensors import safe_open

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kernel_fixtures as K  # noqa: E402

from qkverify.cli import main  # noqa: E402
from qkverify.errors import QKInputError  # noqa: E402
from qkverify.kernel import verify_document  # noqa: E402
from qkverify.kernel.jsonio import Invalid  # noqa: E402
from qkverify.kernel.weights import st_header  # noqa: E402
from qkverify.models.safetensors_io import SafetensorsFile  # noqa: E402

Q = np.array([[1, 0, 0]], "<f4").tobytes()  # W_Q = e0ᵀ (12 bytes)
KK = np.array([[0, 1, 0]], "<f4").tobytes()  # W_K = e1ᵀ


def t(s: int, e: int, shape=(1, 3), dt="F32", **extra) -> str:
    return json.dumps(dict({"dtype": dt, "shape": list(shape), "data_offsets": [s, e]}, **extra))


def blob(header: str, data: bytes, n: int | None = None) -> bytes:
    hb = header.encode("utf-8")
    return struct.pack("<Q", len(hb) if n is None else n) + hb + data


def reference_accepts(p: Path) -> bool:
    try:
        with safe_open(str(p), framework="numpy"):
            return True
    except Exception:
        return False


GOOD = '{"q.weight":%s,"k.weight":%s}' % (t(0, 12), t(12, 24))

#: (name, file bytes, does the reference loader accept it?) -- every one is refused by us
BAD = [
    # W_K = W_Q: both names point at the same 12 bytes (aliasing through overlapping offsets)
    ("aliased W_K = W_Q", blob('{"q.weight":%s,"k.weight":%s}' % (t(0, 12), t(0, 12)), Q), False),
    ("partial overlap", blob('{"q.weight":%s,"k.weight":%s}' % (t(0, 12), t(8, 20)), Q + KK[:8]), False),
    # the same name twice: serde keeps the last entry (here identical, so the reference reads it);
    # the README disallows duplicate keys -- refused by the spec's rule, not the reference's
    ("tensor named twice", blob('{"q.weight":%s,"k.weight":%s,"k.weight":%s}' % (t(0, 12), t(12, 24), t(12, 24)),
                                Q + KK), True),
    ("tensor named twice, last one aliasing", blob('{"q.weight":%s,"k.weight":%s,"k.weight":%s}'
                                                   % (t(0, 12), t(12, 24), t(0, 12)), Q + KK), False),
    ("__metadata__ twice", blob('{"__metadata__":{"a":"1"},"__metadata__":{"a":"2"},"q.weight":%s,"k.weight":%s}'
                                % (t(0, 12), t(12, 24)), Q + KK), False),
    ("a gap between tensors", blob('{"q.weight":%s,"k.weight":%s}' % (t(0, 12), t(16, 28)), Q + b"\0" * 4 + KK), False),
    ("trailing bytes", blob(GOOD, Q + KK + b"\0\0\0\0"), False),
    ("truncated data", blob(GOOD, Q + KK[:8]), False),
    ("offsets past the end", blob('{"q.weight":%s,"k.weight":%s}' % (t(0, 12), t(12, 24000)), Q + KK), False),
    ("end before begin", blob('{"q.weight":%s,"k.weight":%s}' % (t(12, 0), t(12, 24)), Q + KK), False),
    ("shape × dtype ≠ byte range", blob('{"q.weight":%s,"k.weight":%s}' % (t(0, 12, (1, 2)), t(12, 24)), Q + KK), False),
    ("unknown dtype", blob('{"q.weight":%s,"k.weight":%s}' % (t(0, 12, dt="F31"), t(12, 24)), Q + KK), False),
    ("float in shape", blob('{"q.weight":{"dtype":"F32","shape":[1.0,3],"data_offsets":[0,12]},"k.weight":%s}'
                            % t(12, 24), Q + KK), False),
    ("-0 in offsets", blob('{"q.weight":{"dtype":"F32","shape":[1,3],"data_offsets":[-0,12]},"k.weight":%s}'
                           % t(12, 24), Q + KK), False),
    ("three offsets", blob('{"q.weight":{"dtype":"F32","shape":[1,3],"data_offsets":[0,12,12]},"k.weight":%s}'
                           % t(12, 24), Q + KK), False),
    ("missing shape", blob('{"q.weight":{"dtype":"F32","data_offsets":[0,12]},"k.weight":%s}' % t(12, 24), Q + KK), False),
    ("__metadata__ not str→str", blob('{"__metadata__":{"a":1},"q.weight":%s,"k.weight":%s}' % (t(0, 12), t(12, 24)),
                                      Q + KK), False),
    ("__metadata__ a list", blob('{"__metadata__":[],"q.weight":%s,"k.weight":%s}' % (t(0, 12), t(12, 24)), Q + KK), False),
    ("NaN in the header", blob('{"q.weight":%s,"k.weight":%s,"x":NaN}' % (t(0, 12), t(12, 24)), Q + KK), False),
    ("header not an object", blob("[1, 2]", Q + KK), False),
    ("header not UTF-8", struct.pack("<Q", 3) + b"{\xff}", False),
    ("header length past the end", struct.pack("<Q", 1000) + b"{}", False),
    ("header length over 100,000,000", struct.pack("<Q", 100_000_001) + b"{}", False),
    ("shorter than 8 bytes", b"\x02\0\0", False),
    ("element count overflows", blob('{"q.weight":{"dtype":"F32","shape":[4294967296,4294967296,0],'
                                     '"data_offsets":[0,0]},"k.weight":%s}' % t(0, 12), KK), False),
    # the README: "The header data MUST begin with a { character" (0.8 does not enforce it yet)
    ("header begins with a space", blob(" " + GOOD, Q + KK), True),
]

#: files the reference reads: we read them too (no false reject)
OK = [
    ("plain", blob(GOOD, Q + KK)),
    ("metadata, trailing spaces", blob('{"__metadata__":{"format":"pt"},"q.weight":%s,"k.weight":%s}    '
                                       % (t(0, 12), t(12, 24)), Q + KK)),
    ("metadata null, extra field ignored", blob('{"__metadata__":null,"q.weight":%s,"k.weight":%s}'
                                                % (t(0, 12, note="x"), t(12, 24)), Q + KK)),
    ("listed out of offset order", blob('{"k.weight":%s,"q.weight":%s}' % (t(12, 24), t(0, 12)), Q + KK)),
    ("empty and scalar tensors beside", blob('{"e":%s,"s":%s,"q.weight":%s,"k.weight":%s,"i":%s}'
                                             % (t(0, 0, (0, 5)), t(0, 8, (), "F64"), t(8, 20), t(20, 32),
                                                t(32, 33, (2,), "F4")),
                                             np.float64(2).tobytes() + Q + KK + b"\x21")),
]


@pytest.mark.parametrize("name,data,ref", BAD, ids=[b[0] for b in BAD])
def test_both_sides_refuse_what_the_format_refuses(tmp_path, name, data, ref):
    p = tmp_path / "model.safetensors"
    p.write_bytes(data)
    assert reference_accepts(p) is ref, "the reference loader's verdict changed"
    with pytest.raises(QKInputError, match="not a safetensors file"):
        SafetensorsFile(p)
    with pytest.raises(Invalid, match="not a valid safetensors file"):
        st_header(p)


@pytest.mark.parametrize("name,data", OK, ids=[o[0] for o in OK])
def test_both_sides_read_what_the_reference_reads(tmp_path, name, data):
    p = tmp_path / "model.safetensors"
    p.write_bytes(data)
    assert reference_accepts(p)
    f = SafetensorsFile(p)
    tensors, _ = st_header(p)
    assert set(f.names) == set(tensors)
    assert f.get("q.weight").tolist() == [[1, 0, 0]] and f.get("k.weight").tolist() == [[0, 1, 0]]


def _llama_dir(d: Path, data: bytes) -> Path:
    """A one-layer llama checkpoint (1 head, d_head 1, d_model 3) whose weights file is ``data``
    with the tensor names q.weight / k.weight renamed to the llama ones."""
    d.mkdir()
    raw = data.replace(b'"q.weight"', b'"model.layers.0.self_attn.q_proj.weight"').replace(
        b'"k.weight"', b'"model.layers.0.self_attn.k_proj.weight"')
    n = int.from_bytes(raw[:8], "little") + len(raw) - len(data)  # the header grew by the renames
    (d / "model.safetensors").write_bytes(struct.pack("<Q", n) + raw[8:])
    (d / "config.json").write_text(json.dumps({"model_type": "llama", "num_attention_heads": 1,
                                               "num_key_value_heads": 1, "hidden_size": 3}))
    return d


@pytest.mark.parametrize("name", ["aliased W_K = W_Q", "tensor named twice", "tensor named twice, last one aliasing"])
def test_heads_on_an_aliased_or_duplicated_file_exits_2_in_one_line(tmp_path, capsys, name):
    data = dict((b[0], b[1]) for b in BAD)[name]
    d = _llama_dir(tmp_path / "m", data)
    assert main(["heads", str(d), "--out", str(tmp_path / "out"), "--no-plot", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not a safetensors file" in err, err
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").rglob("*.json"))


def test_the_same_head_read_exactly_when_the_file_is_well_formed(tmp_path):
    from qkverify.models import load_model

    d = _llama_dir(tmp_path / "m", blob(GOOD, Q + KK))
    (h,) = list(load_model(str(d)).heads())
    assert h.W_Q.tolist() == [[1, 0, 0]] and h.W_K.tolist() == [[0, 1, 0]]


@pytest.mark.parametrize("name", ["aliased W_K = W_Q", "tensor named twice", "tensor named twice, last one aliasing",
                                  "a gap between tensors", "trailing bytes", "shape × dtype ≠ byte range"])
def test_kernel_calls_a_certificate_over_a_malformed_file_invalid(tmp_path, name):
    """The hand-made certificate (W_Q = e0ᵀ, W_K = e1ᵀ, valid over the well-formed file) re-pointed
    at a crafted file holding the same bytes for q and k: invalid, naming the rule."""
    cert = K.weights_certificate(tmp_path)
    assert verify_document(cert, str(tmp_path / "c.json"), tmp_path, []).status == "valid"
    data = dict((b[0], b[1]) for b in BAD)[name]
    (tmp_path / "model.safetensors").write_bytes(data)
    sha = hashlib.sha256(data).hexdigest()
    for tr in cert["input"]["tensors"]:
        tr["sha256"] = sha
    out = verify_document(cert, str(tmp_path / "c.json"), tmp_path, [])
    assert out.status == "invalid" and out.check == "weights", out
    assert "not a valid safetensors file" in out.reason
