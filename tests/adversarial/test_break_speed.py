"""Breaker tests for issue 20's speed work (6d0e2eb..eee7095): the faster routines must give
what the slower ones gave, byte for byte, and stay rigorous.

Attempts that found nothing are kept as regression tests (scale2 against np.ldexp on random
bit patterns, the balanced digits of many parts against Python integers, the indent-1 JSON
engine against json.dumps); the findings are the tests named ``test_finding_*``."""

from __future__ import annotations

import contextlib
import io
import json
import random
import shutil

import numpy as np
import pytest

from qkverify.certificates import canonical_bytes, canonical_bytes_all
from qkverify.heads.digits import digits_of_parts
from qkverify.heads.enclosure import scale2
from qkverify.io.jsontext import indent1


# --------------------------------------------------------------------------------------------
# scale2 == np.ldexp, bit for bit


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_scale2_is_ldexp_on_float64_bit_patterns():
    rng = np.random.default_rng(20)
    specials = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, -5e-324, 2.2250738585072014e-308,
                         2.225073858507201e-308, 1.7976931348623157e308, 1.0, -3.0, 0.75])
    with np.errstate(all="ignore"):
        for t in range(3000):
            x = np.concatenate([rng.integers(0, 2 ** 64, size=8, dtype=np.uint64).view(np.float64),
                                rng.choice(specials, 4)])
            e = int(rng.integers(-2200, 2200)) if t % 2 else int(rng.integers(-1030, 1030))
            assert _same(scale2(x, e), np.ldexp(x, e)), e
            ea = rng.integers(-1100, 1100, size=x.shape) if t % 3 else rng.integers(-1022, 1024, size=x.shape)
            assert _same(scale2(x, ea), np.ldexp(x, ea))
            ec = rng.integers(-1022, 1024, size=(1, 4))
            assert _same(scale2(x.reshape(3, 4), ec), np.ldexp(x.reshape(3, 4), ec))


def test_finding_scale2_float32_array_is_not_ldexp():
    """The docstring says ``np.ldexp(x, e)`` bit for bit for every float array; for a float32 x
    the product with the Python float 2^e is taken in float32 (NumPy 2's weak scalars: 2^200
    becomes inf) and an integer array exponent gives a float64 result where ldexp keeps
    float32.  Every caller in qkverify passes float64 today, so no output changes; the claim
    (or the function) needs narrowing."""
    x = np.array([2.0 ** -149, 1.5], dtype=np.float32)    # the float32 subnormal minimum
    with np.errstate(all="ignore"):
        assert _same(scale2(x, 200), np.ldexp(x, 200))                 # 2^51 and inf, not inf twice
        assert _same(scale2(x, np.array([3, -3])), np.ldexp(x, np.array([3, -3])))   # float32 result


# --------------------------------------------------------------------------------------------
# balanced digits of many parts == the exact integer sum


def test_digits_of_parts_against_python_integers():
    rng = np.random.default_rng(7)
    R = random.Random(7)
    for it in range(400):
        shape = (R.randrange(1, 4), R.randrange(1, 4))
        w = R.choice([2, 3, 7, 20, 23, 26])
        k = R.choice([1, 2, 3, 40, 300]) if it % 40 else 3000
        parts = []
        for _ in range(k):
            kind = R.randrange(4)
            if kind == 0:
                P = np.full(shape, (1 << 62) - 1, np.int64) * R.choice([1, -1])
            elif kind == 1:
                P = np.full(shape, -(1 << 61), np.int64)
            else:
                P = rng.integers(-(2 ** 61), 2 ** 61, size=shape, dtype=np.int64)
            parts.append((R.randrange(0, 200), P))
        exact = np.zeros(shape, object)
        for sh, P in parts:
            exact += P.astype(object) * (1 << sh)
        D, lo = digits_of_parts(parts, w)
        rec = np.zeros(shape, object)
        for i, d in enumerate(D):
            assert np.all(d >= -(2 ** (w - 1))) and np.all(d < 2 ** (w - 1))
            rec += d.astype(np.int64).astype(object) * (1 << (w * (i + lo)))
        assert np.array_equal(rec, exact), (w, k)


# --------------------------------------------------------------------------------------------
# indent-1 JSON == json.dumps


def _doc(R: random.Random, d: int = 0):
    strs = ["", "é", "\u2028", "\x00", "\"\\", "😀", "],[", ",", "\x1f"]
    scalars = [None, True, False, 0, -1, 2 ** 70, 1e16, -0.0, float("nan"), float("-inf"), 5e-324]
    c = R.randrange(9 if d < 5 else 1)
    if c == 0:
        return R.choice(scalars + strs)
    if c == 1:
        return [R.choice(scalars) for _ in range(R.randrange(0, 9))]
    if c == 2:   # integer rows, sometimes with a bool or an empty row inside
        return [[R.choice([0, 1, -5, 2 ** 63] + ([True, False] if R.random() < .2 else []))
                 for _ in range(R.randrange(0, 4))] for _ in range(R.randrange(1, 8))]
    if c == 3:
        return tuple(_doc(R, d + 1) for _ in range(R.randrange(0, 7)))
    if c == 4:
        return [[], {}, [[]], [{}], [[1], []]][R.randrange(5)]
    return {R.choice(strs) + str(i): _doc(R, d + 1) for i in range(R.randrange(0, 8))}


def test_indent1_and_memo_against_json_dumps():
    R = random.Random(11)
    for _ in range(3000):
        o = _doc(R)
        for sk in (False, True):
            assert indent1(o, sort_keys=sk) == json.dumps(o, indent=1, ensure_ascii=False, sort_keys=sk)
        if isinstance(o, dict):
            sub = _doc(R, 1)
            c1, c2 = {"x": o, "y": sub, "z": [sub, o], "w": sub}, {"a": sub, "x": o}
            want = [(json.dumps(c, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode() for c in (c1, c2)]
            assert canonical_bytes_all([c1, c2]) == want


def test_finding_canonical_bytes_depth_as_json_dumps():
    """indent1 recurses through two frames per level (_indent1 -> _emit -> _indent1) where the
    engine it replaced used one: a document 400 levels deep, which json.dumps and the old
    canonical_bytes (6d0e2eb) write, raised RecursionError."""
    o = 1
    for i in range(400):
        o = {"a": [o]} if i % 2 else [o, 2]
    want = (json.dumps(o, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode()
    assert canonical_bytes(o) == want
    assert canonical_bytes_all([o, {"b": o}])[0] == want


# --------------------------------------------------------------------------------------------
# a head whose cells hold two distinct eigenvalues in one cell (pre-existing, not the speed work)


def _one_head_model(folder, q, k):
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    save_file({"bert.encoder.layer.0.attention.self.query.weight": q,
               "bert.encoder.layer.0.attention.self.key.weight": k}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"num_attention_heads": 1, "model_type": "bert"}))
    return folder


def _heads_then_verify(tmp_path, q, k):
    from qkverify.cli import main

    m = _one_head_model(tmp_path / "m", q, k)
    out = tmp_path / "out"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        assert main(["heads", str(m), "--out", str(out), "--jobs", "1", "--no-plot", "--no-report",
                     "--quiet"]) == 0
    for name in ("L00H00.json", "L00H00.profile.json"):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            rc = main(["verify", str(out / name)])
        assert rc == 0, buf.getvalue()


def test_float16_head_spanning_over_62_binary_orders_verifies(tmp_path):
    """float16 weights from 2^-24 to 6e4 (read as float32: exponents 63 orders apart with the
    24-bit mantissa, past the int64 route): the producer's scale exponent was the smallest
    float32 exponent minus 24, keeping a factor 2^23 in Z, where the kernel removes every common
    power of two ("scale exponent -47 ≠ -24": both certificates invalid).  Now e is the
    exponent of the largest power of two dividing every entry, on both sides."""
    rng = np.random.default_rng(11)
    q = (rng.standard_normal((2, 8)) * 4).astype(np.float16)
    k = (rng.standard_normal((2, 8)) * 4).astype(np.float16)
    q[0, 3] = np.float16(2.0 ** -24)          # the smallest float16 subnormal
    k[1, 5] = np.float16(60000.0)
    _heads_then_verify(tmp_path, q, k)


def test_finding_rank2_head_certificate_is_valid(tmp_path):
    """W_Q = A·B, W_K = C·B in float32 (rank 2 up to rounding; 4 x 16): the characteristic
    polynomial of X = J·Z·Zᵀ is squarefree (8 distinct eigenvalues), yet the producer merges
    two distinct negative eigenvalues that share the cell [−2^16, −2^15) (k = −2, level 13,
    g = 28) into one cell ``[-2, 13, 2]``; the kernel (since 8b64d10) required the c roots of
    a cell with c > 1 to be one value and called both certificates invalid.  Same bytes at
    6d0e2eb: not caused by the speed work.  Fixed in the kernel: a cell may hold distinct
    roots (a true count); only the equality of two cells' values needs one value in each."""
    rng = np.random.default_rng(3)
    b = rng.standard_normal((2, 16)).astype(np.float32)
    q = rng.standard_normal((4, 2)).astype(np.float32) @ b
    k = rng.standard_normal((4, 2)).astype(np.float32) @ b
    _heads_then_verify(tmp_path, q, k)


# --------------------------------------------------------------------------------------------
# the output folder changes under a run (the write cache of io/outputs.py)


def _run_disrupted(tmp_path, model, out, disrupt):
    import qkverify.certificates as C
    from qkverify.cli import main

    calls = [0]
    orig = C.write_all

    def wrapped(*a, **kw):
        r = orig(*a, **kw)
        calls[0] += 1
        if calls[0] == 1:
            disrupt()
        return r

    C.write_all = wrapped
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            rc = main(["heads", str(model), "--out", str(out), "--jobs", "1", "--no-plot", "--quiet"])
    finally:
        C.write_all = orig
    return rc, buf.getvalue()


def _two_head_model(folder):
    rng = np.random.default_rng(0)
    q = (rng.standard_normal((4, 12)) / 4).astype(np.float32)
    k = (rng.standard_normal((4, 12)) / 4).astype(np.float32)
    m = _one_head_model(folder, q, k)
    (folder / "config.json").write_text(json.dumps({"num_attention_heads": 2, "model_type": "bert"}))
    return m


def test_out_folder_removed_mid_run_is_recreated(tmp_path):
    m = _two_head_model(tmp_path / "m")
    out = tmp_path / "out"
    rc, text = _run_disrupted(tmp_path, m, out, lambda: shutil.rmtree(out))
    assert rc == 0, text
    assert sorted(p.name for p in out.iterdir()) == ["L00H01.json", "L00H01.profile.json", "heads.csv",
                                                     "heads.json", "report.html"]


def test_out_folder_replaced_by_a_file_mid_run_is_one_line_exit_2(tmp_path):
    m = _two_head_model(tmp_path / "m")
    out = tmp_path / "out"

    def to_file():
        shutil.rmtree(out)
        out.write_text("x")

    rc, text = _run_disrupted(tmp_path, m, out, to_file)
    assert rc == 2 and "Traceback" not in text and len(text.strip().splitlines()) == 1, text


def test_relative_out_then_chdir_writes_relative_to_the_new_cwd(tmp_path, monkeypatch):
    m = _two_head_model(tmp_path / "m")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    rc, text = _run_disrupted(tmp_path, m, "rel", lambda: __import__("os").chdir(tmp_path / "b"))
    assert rc == 0, text
    assert sorted(p.name for p in (tmp_path / "a" / "rel").iterdir()) == ["L00H00.json", "L00H00.profile.json"]
    assert (tmp_path / "b" / "rel" / "L00H01.json").is_file() and (tmp_path / "b" / "rel" / "heads.csv").is_file()
