"""Breaking head certificates' tensor references (a hostile prover edits the input of a valid
certificate over a well-formed safetensors file).  Each edit must make the certificate invalid,
or undecided where only the weights file cannot be found -- never valid.

Found: a ``transform`` ("undo llama.cpp RoPE row permutation") on a safetensors or .npz tensor
was accepted and silently ignored -- the certificate stated a permuted W_Q and was checked on
the unpermuted one, so its statement was not what the kernel verified; and a slice key of the
wrong kind for the format (``index`` on safetensors, ``rows`` on .npz) or a "gguf" reference to
a file that is no GGUF ended as a KeyError ("format") or undecided, not as what they are: an
input that names no matrix (invalid)."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kernel_fixtures as K  # noqa: E402

from qkverify.kernel import verify_document  # noqa: E402

ROPE = "dequantize; undo llama.cpp RoPE row permutation"

#: (edit, expected status, expected check or None)
EDITS = [
    ("rows past the end", lambda T, c: T[0].update(rows=[0, 2]), "invalid", "input"),
    ("rows of a missing row", lambda T, c: T[0].update(rows=[1, 2]), "invalid", "input"),
    ("cols of a [n, N] tensor", lambda T, c: (T[0].pop("rows"), T[0].update(cols=[0, 1])), "invalid", "input"),
    ("an npz index on safetensors", lambda T, c: (T[0].pop("rows"), T[0].update(index=[0])), "invalid", "input"),
    ("format npz on safetensors", lambda T, c: T[0].update(format="npz"), "invalid", "input"),
    ("format gguf on safetensors", lambda T, c: T[0].update(format="gguf"), "invalid", "weights"),
    ("a transform on safetensors", lambda T, c: T[0].update(transform=ROPE), "invalid", "input"),
    ("'dequantize' on safetensors", lambda T, c: T[1].update(transform="dequantize"), "invalid", "input"),
    ("W_Q twice", lambda T, c: T[1].update(role="W_Q"), "invalid", "input"),
    ("roles swapped", lambda T, c: (T[0].update(role="W_K"), T[1].update(role="W_Q")), "invalid", None),
    ("W_K = W_Q's tensor", lambda T, c: T[1].update(name="q.weight"), "invalid", None),
    ("n = 2", lambda T, c: c["input"].update(n=2), "invalid", "input"),
    ("N = 2", lambda T, c: c["input"].update(N=2), "invalid", "input"),
    ("a tensor the file lacks", lambda T, c: T[0].update(name="nope"), "invalid", "weights"),
    ("another SHA-256", lambda T, c: T[0].update(sha256="0" * 64), "undecided", None),
    ("hint climbing to /etc/passwd", lambda T, c: T[0].update(file="passwd", path_hint="../" * 40 + "etc/passwd"),
     "undecided", None),
    ("an absolute hint", lambda T, c: T[0].update(path_hint="/etc/model.safetensors"), "invalid", "schema"),
    ("a backslash hint", lambda T, c: T[0].update(path_hint="..\\model.safetensors"), "invalid", "schema"),
    ("a hint naming another file", lambda T, c: T[0].update(path_hint="other.safetensors"), "invalid", "input"),
    ("a file name with a directory", lambda T, c: T[0].update(file="x/model.safetensors"), "invalid", "schema"),
]


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    d = tmp_path_factory.mktemp("cert")
    c = K.weights_certificate(d)
    assert verify_document(copy.deepcopy(c), str(d / "c.json"), d, []).status == "valid"
    return c, d


@pytest.mark.parametrize("name,edit,status,check", EDITS, ids=[e[0] for e in EDITS])
def test_an_edited_tensor_reference_is_never_valid(cert, name, edit, status, check):
    c, d = copy.deepcopy(cert[0]), cert[1]
    edit(c["input"]["tensors"], c)
    out = verify_document(c, str(d / "c.json"), d, [])
    assert out.status == status and (check is None or out.check == check), out
