"""Breaking the ``.npz`` readers (crafted archives, after the weights merge).  The reference is
numpy's ``np.load`` (through ``zipfile``); each crafted archive is shown to it here.

1. Ambiguous names: an archive holding both ``W_Q`` and ``W_Q.npy``.  ``np.load(f)["W_Q"]``
   returns the member named ``W_Q``; the kernel read ``W_Q.npy``; the producer read ``W_Q.npy``
   when stored and ``W_Q`` when compressed -- one certificate, two matrices.  Both sides refuse.
2. CRC-32: numpy reads a member to its end and refuses a wrong CRC.  The kernel streams only up
   to the last entry it needs and the producer memory-maps stored members, so neither checked
   it (and where the kernel did reach the end, zipfile's BadZipFile escaped as a kernel error;
   the producer's compressed read escaped as a traceback).  An encrypted member (RuntimeError)
   did the same.  Both sides now read each member they use to its end once.
3. Data before the archive: numpy refuses a file that does not begin with a zip signature
   (it is no .npz for np.load); zipfile, and so the kernel, read past the junk.
4. Header spellings: numpy accepts any ``descr`` np.dtype() accepts (``'f4'``, ``'float32'``,
   ``'=f4'``, ``'e'``, ``'d'``) and the producer certified such members, which the kernel (it
   reads the three spellings numpy writes, ``'<f2'``, ``'<f4'``, ``'<f8'``) left undecided: the
   producer refuses them now.  A shape holding ``True`` crashed the producer (numpy's memmap
   TypeError); a structured descr (a list) crashed the kernel (TypeError): refused / undecided."""

from __future__ import annotations

import io
import struct
import zipfile
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import qkverify.kernel.weights as KW
from qkverify.cli import main
from qkverify.errors import QKInputError
from qkverify.kernel.jsonio import Invalid, Undecided
from qkverify.models import load_model

RNG = np.random.default_rng(1)
WQ = (RNG.integers(-8, 8, (1, 2, 6, 2)) / 4).astype(np.float32)
WK = (RNG.integers(-8, 8, (1, 2, 6, 2)) / 4).astype(np.float32)


def npy(a: np.ndarray, header: dict | None = None) -> bytes:
    """The .npy bytes of ``a`` (C order), with ``header`` written in place of numpy's own."""
    b = io.BytesIO()
    if header is None:
        np.lib.format.write_array(b, a)
        return b.getvalue()
    h = repr(header).encode("latin1")
    h += b" " * ((-(10 + len(h) + 1)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + np.ascontiguousarray(a).tobytes()


def archive(members: list[tuple[str, bytes]], comp=zipfile.ZIP_STORED) -> bytes:
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", compression=comp) as z:
        for name, data in members:
            z.writestr(name, data)
    return b.getvalue()


def write(tmp_path: Path, data: bytes) -> Path:
    p = tmp_path / "tl.npz"
    p.write_bytes(data)
    return p


def reference(p: Path):
    z = np.load(p, allow_pickle=False)
    return np.asarray(z["W_Q"]), np.asarray(z["W_K"])


def kernel_head(p: Path):
    """The kernel's W_Q block [0, 0] (d_model 6 × d_head 2) as fractions, row-major."""
    return [Fraction(m) * Fraction(2) ** e for m, e in KW._npz_block(p, "W_Q", [0, 0], 6, 2)]


# --- 1. ambiguous names --------------------------------------------------------------------------

@pytest.mark.parametrize("comp", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_a_member_named_both_w_q_and_w_q_npy_is_refused_by_both_sides(tmp_path, comp):
    p = write(tmp_path, archive([("W_Q", npy(WK)), ("W_Q.npy", npy(WQ)), ("W_K.npy", npy(WK))], comp))
    q, _ = reference(p)
    assert np.array_equal(q, WK)  # numpy's W_Q is the member named W_Q, not W_Q.npy
    with pytest.raises(QKInputError, match="W_Q"):
        list(load_model(str(p)).heads())
    with pytest.raises(Invalid, match="W_Q"):
        kernel_head(p)


# --- 2. CRC-32, encrypted members ----------------------------------------------------------------

def patch_member(data: bytes, name: str, **fields) -> bytes:
    """Set fields (crc, flags) of ``name``'s central-directory and local headers."""
    b, nb = bytearray(data), name.encode()
    offs = {"crc": (16, 14, "<I"), "flags": (8, 6, "<H")}
    i = b.find(b"PK\x01\x02")
    while i >= 0:
        n = struct.unpack_from("<H", b, i + 28)[0]
        if bytes(b[i + 46:i + 46 + n]) == nb:
            local = struct.unpack_from("<I", b, i + 42)[0]
            for f, v in fields.items():
                cd, lo, fmt = offs[f]
                struct.pack_into(fmt, b, i + cd, v)
                struct.pack_into(fmt, b, local + lo, v)
        i = b.find(b"PK\x01\x02", i + 4)
    return bytes(b)


def crc_of(data: bytes, name: str) -> int:
    return zipfile.ZipFile(io.BytesIO(data)).getinfo(name).CRC


@pytest.mark.parametrize("layers", [1, 64])
@pytest.mark.parametrize("comp", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_a_member_with_a_wrong_crc_is_refused_by_both_sides(tmp_path, layers, comp):
    """With 64 layers the head of layer 0 needs only the member's first bytes."""
    wq = np.concatenate([WQ] * layers)
    good = archive([("W_Q.npy", npy(wq)), ("W_K.npy", npy(np.concatenate([WK] * layers)))], comp)
    p = write(tmp_path, patch_member(good, "W_Q.npy", crc=crc_of(good, "W_Q.npy") ^ 1))
    with pytest.raises(zipfile.BadZipFile, match="CRC"):
        reference(p)
    with pytest.raises(QKInputError, match="CRC"):
        list(load_model(str(p)).heads())
    with pytest.raises(Invalid, match="CRC"):
        kernel_head(p)


def test_one_flipped_byte_far_from_the_head_is_caught(tmp_path):
    """A stored 64-layer member whose last layer's bytes differ from what its CRC says."""
    data = bytearray(archive([("W_Q.npy", npy(np.concatenate([WQ] * 64))), ("W_K.npy", npy(np.concatenate([WK] * 64)))]))
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("W_Q.npy")
    data[info.header_offset + 30 + len("W_Q.npy") + info.file_size - 3] ^= 0x40
    p = write(tmp_path, bytes(data))
    with pytest.raises(QKInputError, match="CRC"):
        list(load_model(str(p)).heads())
    with pytest.raises(Invalid, match="CRC"):
        kernel_head(p)


def test_an_encrypted_member_is_refused_in_one_line(tmp_path, capsys):
    good = archive([("W_Q.npy", npy(WQ)), ("W_K.npy", npy(WK))])
    p = write(tmp_path, patch_member(good, "W_Q.npy", flags=1))
    with pytest.raises(RuntimeError, match="encrypted"):
        reference(p)
    assert main(["heads", str(p), "--out", str(tmp_path / "o"), "--no-plot", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "encrypted" in err, err
    with pytest.raises(Invalid, match="encrypted"):
        kernel_head(p)


# --- 3. data before the archive --------------------------------------------------------------------

def test_junk_before_the_archive_is_refused_as_numpy_refuses_it(tmp_path):
    p = write(tmp_path, b"not a zip " * 8 + archive([("W_Q.npy", npy(WQ)), ("W_K.npy", npy(WK))]))
    with pytest.raises(Exception):
        reference(p)
    with pytest.raises(QKInputError):
        load_model(str(p))
    with pytest.raises(Invalid, match="zip"):
        kernel_head(p)


# --- 4. header spellings ---------------------------------------------------------------------------

@pytest.mark.parametrize("descr", ["f4", "float32", "=f4", "<f", "single"])
def test_a_descr_numpy_reads_but_the_kernel_does_not_is_refused_by_the_producer(tmp_path, descr):
    p = write(tmp_path, archive([("W_Q.npy", npy(WQ, {"descr": descr, "fortran_order": False, "shape": WQ.shape})),
                                 ("W_K.npy", npy(WK))]))
    assert np.array_equal(reference(p)[0], WQ)
    with pytest.raises(Undecided, match="dtype"):
        kernel_head(p)
    with pytest.raises(QKInputError, match=f"{descr!r}"):
        list(load_model(str(p)).heads())


def test_the_three_spellings_numpy_writes_are_read_alike(tmp_path):
    for dt, descr in ((np.float16, "<f2"), (np.float32, "<f4"), (np.float64, "<f8")):
        p = write(tmp_path, archive([("W_Q.npy", npy(WQ.astype(dt))), ("W_K.npy", npy(WK.astype(dt)))]))
        (h, *_) = list(load_model(str(p)).heads())
        assert [Fraction(float(x)) for x in h.W_Q.T.reshape(-1)] == kernel_head(p), descr


def test_a_bool_in_the_shape_is_refused_in_one_line(tmp_path, capsys):
    p = write(tmp_path, archive([("W_Q.npy", npy(WQ, {"descr": "<f4", "fortran_order": False, "shape": (True, 2, 6, 2)})),
                                 ("W_K.npy", npy(WK))]))
    assert main(["heads", str(p), "--out", str(tmp_path / "o"), "--no-plot", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "shape" in err, err
    with pytest.raises(Invalid, match="header"):
        kernel_head(p)


def test_a_structured_descr_is_not_a_kernel_error(tmp_path):
    p = write(tmp_path, archive([("W_Q.npy", npy(WQ, {"descr": [("a", "<f4")], "fortran_order": False, "shape": WQ.shape})),
                                 ("W_K.npy", npy(WK))]))
    with pytest.raises(Undecided, match="dtype"):
        kernel_head(p)
    with pytest.raises(QKInputError, match="dtype"):
        load_model(str(p))


# --- the same values on both sides ------------------------------------------------------------------

@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("comp", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_random_finite_values_read_the_same_by_producer_and_kernel(tmp_path, order, comp, dt):
    """Random finite bit patterns (subnormals and extremes included) in [2, 3, 5, 4] arrays, C or
    Fortran order, stored or deflated: every head's W_Q and W_K, entry by entry, are the same
    rationals for numpy (the reference), the producer and the kernel."""
    rng = np.random.default_rng(int(np.dtype(dt).itemsize) + 10 * (order == "F") + comp)
    u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(dt).itemsize]
    arrs = []
    for _ in range(2):
        bits = rng.integers(0, np.iinfo(u).max, (2, 3, 5, 4), dtype=u, endpoint=True)
        a = bits.view(dt).copy()
        a[~np.isfinite(a)] = 0
        arrs.append(np.asfortranarray(a) if order == "F" else a)
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", compression=comp) as z:
        for key, a in zip(("W_Q", "W_K"), arrs):
            z.writestr(key + ".npy", npy(a))
    p = write(tmp_path, b.getvalue())
    heads = list(load_model(str(p)).heads())
    assert len(heads) == 6
    for h in heads:
        for key, W in (("W_Q", h.W_Q), ("W_K", h.W_K)):
            idx = [h.layer, h.head if key == "W_Q" else h.kv_head]
            kern = [Fraction(m) * Fraction(2) ** e for m, e in KW._npz_block(p, key, idx, 5, 4)]
            ref = [Fraction(float(x)) for x in arrs[key == "W_K"][idx[0], idx[1]].reshape(-1)]
            assert [Fraction(float(x)) for x in np.asarray(W).T.reshape(-1)] == ref == kern, (h.layer, h.head, key)
