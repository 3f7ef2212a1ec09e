"""Crafted GGUF files: producer and kernel refuse what llama.cpp's reader (ggml/src/gguf.cpp,
llama-model-loader) and gguf-py refuse -- bad version, duplicate keys or tensor names, a bad
alignment, unknown ggml types, rows that are not whole blocks, tensors that overlap or are out
of order, data outside the file, arrays of arrays.  The producer answers exit 2 in one line
(QKInputError); the kernel calls a certificate over such a file invalid (check ``weights``)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import gguf_craft as G  # noqa: E402

from qkverify.cli import main  # noqa: E402
from qkverify.errors import QKInputError  # noqa: E402
from qkverify.kernel import gguf as KG  # noqa: E402
from qkverify.kernel import verify_document  # noqa: E402
from qkverify.kernel.jsonio import Invalid  # noqa: E402
from qkverify.models import load_model  # noqa: E402

E = [[1 if j == i else 0 for j in range(32)] for i in range(2)]
WQ = G.q4_1_block(1.0, 0.0, E[0]) + G.q4_1_block(1.0, 0.0, E[1])  # W_Q = [e0; e1]
WK = G.q4_1_block(1.0, 0.0, E[1]) + G.q4_1_block(2.0, 0.0, E[0])  # W_K = [e1; 2e0]
KVS = G.llama_kvs(1, 1, 32, 2)
DATA = G.pad(WQ) + G.pad(WK)


def tensors(q_off=0, k_off=64, qt=G.Q4_1, kname="blk.0.attn_k.weight", dims=(32, 2)):
    return [("blk.0.attn_q.weight", list(dims), qt, q_off), (kname, list(dims), G.Q4_1, k_off)]


GOOD = G.gguf_file(KVS, tensors(), DATA)

BAD = [
    ("version 1", G.gguf_file(KVS, tensors(), DATA, version=1)),
    ("version 4", G.gguf_file(KVS, tensors(), DATA, version=4)),
    ("duplicate key", G.gguf_file(KVS + [G.kv("llama.block_count", G.U32, 1)], tensors(), DATA)),
    ("duplicate tensor name", G.gguf_file(KVS, tensors(kname="blk.0.attn_q.weight"), DATA)),
    # W_K = W_Q: both tensors at data offset 0 (gguf-py reads this; llama.cpp refuses it)
    ("aliased W_K = W_Q (overlapping tensors)", G.gguf_file(KVS, tensors(k_off=0), DATA)),
    ("tensors out of order", G.gguf_file(KVS, tensors(q_off=64, k_off=0), G.pad(WK) + G.pad(WQ))),
    ("offset not on the padded end", G.gguf_file(KVS, tensors(k_off=40), G.pad(WQ) + G.pad(WK))),
    ("alignment 48", G.gguf_file(KVS + [G.kv("general.alignment", G.U32, 48)], tensors(k_off=48), DATA, align=48)),
    ("alignment typed u64", G.gguf_file(KVS + [G.kv("general.alignment", G.U64, 32)], tensors(), DATA)),
    ("removed ggml type 4", G.gguf_file(KVS, tensors(qt=4), DATA)),
    ("unknown ggml type 99", G.gguf_file(KVS, tensors(qt=99), DATA)),
    ("rows not whole blocks", G.gguf_file(KVS, tensors(dims=(16, 4)), DATA)),
    ("data outside the file", G.gguf_file(KVS, tensors(), G.pad(WQ) + WK[:20])),
    ("tensor name of 64 bytes", G.gguf_file(KVS, tensors(kname="k" * 64), DATA)),
    ("array of arrays", G.gguf_file(KVS + [G.kv("x.nested", G.ARRAY, (G.ARRAY, []))], tensors(), DATA)),
    ("truncated header", GOOD[:100]),
]


@pytest.mark.parametrize("name,data", BAD, ids=[b[0] for b in BAD])
def test_both_sides_refuse_what_llama_cpp_refuses(tmp_path, name, data):
    p = tmp_path / "m.gguf"
    p.write_bytes(data)
    with pytest.raises(QKInputError, match="GGUF"):
        load_model(str(p)).heads().__next__()
    with pytest.raises(Invalid, match="not a valid GGUF file"):
        KG.rows(p, "blk.0.attn_q.weight", 0, 2)


def test_the_well_formed_file_reads_the_same_on_both_sides(tmp_path):
    from fractions import Fraction

    p = tmp_path / "m.gguf"
    p.write_bytes(GOOD)
    (h,) = list(load_model(str(p)).heads())
    assert h.W_K.tolist() == [E[1], [2 * x for x in E[0]]] and h.W_Q.tolist() == E
    vals, C = KG.rows(p, "blk.0.attn_k.weight", 0, 2)
    assert [Fraction(m) * 2 ** e for m, e in vals] == E[1] + [2 * x for x in E[0]]


def test_heads_on_an_aliased_gguf_exits_2_in_one_line(tmp_path, capsys):
    p = tmp_path / "m.gguf"
    p.write_bytes(dict(BAD)["aliased W_K = W_Q (overlapping tensors)"])
    assert main(["heads", str(p), "--out", str(tmp_path / "o"), "--no-plot", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "overlap" in err, err


@pytest.mark.parametrize("name", ["aliased W_K = W_Q (overlapping tensors)", "duplicate tensor name",
                                  "data outside the file", "unknown ggml type 99"])
def test_kernel_calls_a_certificate_over_a_malformed_gguf_invalid(tmp_path, name):
    p = tmp_path / "m.gguf"
    p.write_bytes(GOOD)
    out = tmp_path / "out"
    assert main(["heads", str(p), "--out", str(out), "--no-plot", "--quiet"]) == 0
    cert = json.loads((out / "L00H00.json").read_text())
    assert verify_document(cert, str(out / "L00H00.json"), out, [str(tmp_path)]).status == "valid"
    data = dict(BAD)[name]
    p.write_bytes(data)
    for t in cert["input"]["tensors"]:
        t["sha256"] = hashlib.sha256(data).hexdigest()
    res = verify_document(cert, str(out / "L00H00.json"), out, [str(tmp_path)])
    assert res.status == "invalid" and res.check == "weights" and "not a valid GGUF file" in res.reason, res


def test_a_well_formed_tensor_of_a_type_the_kernel_does_not_decode_is_undecided(tmp_path):
    from qkverify.kernel.jsonio import Undecided

    iq4 = 20  # IQ4_NL: 32 values in 18 bytes, a type llama.cpp reads and the kernel does not decode
    p = tmp_path / "m.gguf"
    p.write_bytes(G.gguf_file(KVS, [("blk.0.attn_q.weight", [32, 2], iq4, 0)], G.pad(b"\0" * 36)))
    with pytest.raises(Undecided, match="IQ4_NL"):
        KG.rows(p, "blk.0.attn_q.weight", 0, 2)
