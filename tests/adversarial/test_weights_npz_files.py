"""Hostile ``.npz`` files (issue 18): an object-dtype archive is bad input (exit 2, one line,
not an internal error), and a zip bomb -- a small file whose compressed member inflates to
gigabytes -- is refused by both sides from its declared size, before anything is inflated
(the stated limit: 2 GiB per compressed member, ``NPZ_MAX_INFLATE``)."""

from __future__ import annotations

import hashlib
import io
import json
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest

import qkverify.kernel.weights as KW
import qkverify.models.npz_model as NM
from qkverify.cli import main
from qkverify.errors import QKInputError
from qkverify.kernel import verify_document
from qkverify.models import load_model

RNG = np.random.default_rng(3)
WQ = RNG.standard_normal((1, 2, 6, 2)).astype(np.float32)
WK = RNG.standard_normal((1, 2, 6, 2)).astype(np.float32)


def bomb(path: Path, shape=(1, 2, 1024, 1024), keys=("W_Q", "W_K")) -> Path:
    """A deflated .npz whose members are float32 zeros of ``shape`` (4 MiB each by default):
    a few kB on disk."""
    hdr = io.BytesIO()
    np.lib.format.write_array_header_1_0(hdr, {"descr": "<f4", "fortran_order": False, "shape": shape})
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for key in keys:
            with z.open(key + ".npy", "w", force_zip64=True) as f:
                f.write(hdr.getvalue())
                left, chunk = int(np.prod(shape)) * 4, bytes(1 << 24)
                while left:
                    f.write(chunk[:min(left, len(chunk))])
                    left -= min(left, len(chunk))
    return path


def test_object_dtype_npz_exits_2_in_one_line(tmp_path, capsys):
    p = tmp_path / "obj.npz"
    np.savez(p, W_Q=np.array([[[[object()]]]], dtype=object), W_K=WK)
    assert main(["heads", str(p), "--out", str(tmp_path / "o"), "--no-plot", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "dtype object" in err, err


def test_integer_dtype_npz_is_refused_too(tmp_path):
    p = tmp_path / "int.npz"
    np.savez(p, W_Q=np.ones((1, 2, 6, 2), np.int32), W_K=WK)
    with pytest.raises(QKInputError, match="dtype int32"):
        load_model(str(p))


def test_zip_bomb_refused_by_both_sides_before_inflating(tmp_path, monkeypatch, capsys):
    """With the limit lowered to 1 MiB, a 5 kB archive declaring 4 MiB members stands for the
    real thing (the 2 GiB case is the slow test below): refused from the declared size, and
    nothing near the member's size is ever allocated."""
    small = tmp_path / "ok.npz"
    np.savez_compressed(small, W_Q=WQ, W_K=WK)
    out = tmp_path / "out"
    assert main(["heads", str(small), "--out", str(out), "--no-plot", "--quiet"]) == 0
    cert = json.loads((out / "L00H00.json").read_text())
    assert verify_document(cert, str(out / "L00H00.json"), out, [str(tmp_path)]).status == "valid"  # warm
    monkeypatch.setattr(NM, "NPZ_MAX_INFLATE", 1 << 20)
    monkeypatch.setattr(KW, "NPZ_MAX_INFLATE", 1 << 20)
    p = bomb(tmp_path / "bomb.npz")
    assert p.stat().st_size < 64 * 1024  # 8 MiB of members in a few dozen kB
    data = p.read_bytes()
    tracemalloc.start()
    with pytest.raises(QKInputError, match="over the limit"):
        load_model(str(p))
    # the kernel, on a certificate re-pointed at the bomb (same names, index and shapes)
    small.write_bytes(data)
    for t in cert["input"]["tensors"]:
        t["sha256"] = hashlib.sha256(data).hexdigest()
    with pytest.raises(KW.Undecided, match="limit"):
        KW._npz_block(small, "W_Q", [0, 0], 1024, 1024)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    res = verify_document(cert, str(out / "L00H00.json"), out, [str(tmp_path)])
    assert res.status == "undecided" and "limit" in res.reason, res
    assert peak < 1 << 21  # well under one 4 MiB member: nothing was inflated


def test_a_member_whose_size_disagrees_with_its_header_is_refused(tmp_path):
    hdr = io.BytesIO()
    np.lib.format.write_array_header_1_0(hdr, {"descr": "<f4", "fortran_order": False, "shape": (1, 2, 6, 2)})
    p = tmp_path / "short.npz"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("W_Q.npy", hdr.getvalue() + WQ.tobytes()[:-4])
        z.writestr("W_K.npy", hdr.getvalue() + WK.tobytes())
    with pytest.raises(QKInputError, match="not a valid .npz"):
        load_model(str(p))
    with pytest.raises(KW.Invalid, match="header needs"):
        KW._npz_block(p, "W_Q", [0, 0], 6, 2)


@pytest.mark.slow
def test_a_real_2_gib_zip_bomb_is_refused_at_the_stated_limit(tmp_path):
    """A ~2 MB archive whose member inflates to 2 GiB + 4 MiB of zeros (about 10 s to make)."""
    p = bomb(tmp_path / "bomb.npz", shape=(1, 1, 1024 * 1024 + 1024, 512), keys=("W_Q",))
    with zipfile.ZipFile(p) as z:
        assert z.getinfo("W_Q.npy").file_size > NM.NPZ_MAX_INFLATE
    with pytest.raises(QKInputError, match="over the limit"):
        NM.check_members(p, ["W_Q"])
    with pytest.raises(KW.Undecided, match="limit"):
        KW._npz_block(p, "W_Q", [0, 0], 1024 * 1024 + 1024, 512)
