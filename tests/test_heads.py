"""Per-head certification: exact Gram data, rank witness, verified eigenvalue
enclosures, profile/faces/pairing, float64 flags, the `heads` command."""

from __future__ import annotations

import csv
import json
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, ctx, fmpq, fmpq_mat, fmpz_mat

from qkverify.exact.rational import fmpq_str
from qkverify.heads.certify import HeadOptions, certify_head
from qkverify.heads.enclosure import enclose_arb, enclose_exact_products, enclose_fast
from qkverify.heads.exact_gram import RANK_PRIME, dyadic_slices, gram_data, rank_witness
from qkverify.models.base import HeadRecord

from test_models import HA, HB, HC, HD, N, _write_bert


def rec(q, k, layer=0, head=0):
    return HeadRecord("t", layer, head, head, np.asarray(q), np.asarray(k), {"file": "x", "sha256": "0" * 64, "tensors": []})


def q_of(x) -> fmpq:
    f = Fraction(float(x))
    return fmpq(f.numerator, f.denominator)


def fmpq_of(A) -> fmpq_mat:
    return fmpq_mat([[q_of(x) for x in row] for row in np.asarray(A, np.float64)])


def contains(lo: str, hi: str, x) -> bool:
    return Fraction(lo) <= Fraction(x) <= Fraction(hi)


def random_head(rng, n, N, spread=20):
    """float32 weights with mantissas and exponents spread over `spread` binary orders."""
    def w():
        return (rng.standard_normal((n, N)) * 2.0 ** rng.integers(-spread, 1, (n, N))).astype(np.float32)
    return w(), w()


# ---------------------------------------------------------------------------
# exact data


@pytest.mark.parametrize("kind", ["float64-wide", "float32", "float32-subnormal"])
def test_dyadic_slices_are_exact(kind):
    rng = np.random.default_rng(3)
    if kind == "float64-wide":
        a = (rng.standard_normal((6, 40)) * 2.0 ** rng.integers(-60, 20, (6, 40))).astype(np.float64)
        mbits = 53
    else:
        lo = -150 if kind == "float32-subnormal" else -20
        a = (rng.standard_normal((6, 40)) * 2.0 ** rng.integers(lo, 1, (6, 40))).astype(np.float32).astype(np.float64)
        mbits = 24
    a[0, 0] = 0.0
    slices, b, e = dyadic_slices(a, 40, mbits)
    assert 2 * b + 6 <= 53
    for i in range(6):
        for j in range(40):
            z = sum(int(s[i, j]) << (b * k) for k, s in enumerate(slices))
            assert Fraction(z) * Fraction(2) ** e == Fraction(float(a[i, j]))
            assert all(abs(s[i, j]) < 2 ** b for s in slices)


def test_gram_data_matches_rational_arithmetic():
    rng = np.random.default_rng(4)
    q, k = random_head(rng, 3, 10)
    g = gram_data(q, k)
    Q, K = fmpq_of(q), fmpq_of(k)
    M = fmpq_mat(K.tolist() + Q.tolist())
    G = M * M.transpose()
    s = fmpq(2) ** (-2 * g.e)
    assert all(G[i, j] * s == g.G[i, j] for i in range(6) for j in range(6))
    L = K.transpose() * Q
    fL = sum((x * x for x in L.entries()), fmpq(0))
    trL2 = sum(((L * L)[i, i] for i in range(10)), fmpq(0))
    assert fL * fmpq(2) ** (-4 * g.e) == g.frob_L
    assert trL2 * fmpq(2) ** (-4 * g.e) == g.tr_L2
    T = (L - L.transpose()) * fmpq(1, 2)
    assert g.a() == sum((x * x for x in T.entries()), fmpq(0)) / fL


@pytest.mark.parametrize("lo", [-20, -40, -140])
def test_float32_integer_route_matches_the_generic_route(lo):
    """gram_data's float32 route (IEEE bit fields, signed-digit slices, one
    stacked product, digit-split traces) gives the same exact G, Z, ‖L‖², tr L²
    as the generic frexp route; -140 exercises subnormals (narrow spread)."""
    from qkverify.heads.exact_gram import _dyadic, _float32_integers

    rng = np.random.default_rng(11)
    q = (rng.standard_normal((3, 17)) * 2.0 ** rng.integers(lo, lo + 20, (3, 17))).astype(np.float32)
    k = (rng.standard_normal((3, 17)) * 2.0 ** rng.integers(lo, lo + 20, (3, 17))).astype(np.float32)
    q[0, 0], k[1, 2] = 0.0, -0.0
    M32 = np.concatenate([k, q])
    Zi, e = _float32_integers(M32)
    for i in range(6):
        for j in range(17):
            assert Fraction(int(Zi[i, j])) * Fraction(2) ** e == Fraction(float(M32[i, j]))
    g = gram_data(q, k)
    assert g.e == e and all(abs(s_).max() < 2 ** g.bits for s_ in g.slices)
    Q, K = fmpq_of(q), fmpq_of(k)
    L = K.transpose() * Q
    assert fmpq(g.frob_L) * fmpq(2) ** (4 * g.e) == sum((x * x for x in L.entries()), fmpq(0))
    assert fmpq(g.tr_L2) * fmpq(2) ** (4 * g.e) == sum(((L * L)[i, i] for i in range(17)), fmpq(0))
    M = fmpq_mat(K.tolist() + Q.tolist())
    G = M * M.transpose()
    assert all(G[i, j] * fmpq(2) ** (-2 * g.e) == g.G[i, j] for i in range(6) for j in range(6))
    slices, b, e2 = _dyadic(M32.astype(np.float64), 17, 24)[:3]
    z_gen = sum(s_.astype(np.int64).astype(object) * (1 << (b * t)) for t, s_ in enumerate(slices))
    assert all(Fraction(int(z_gen[i, j])) * Fraction(2) ** e2 == Fraction(int(Zi[i, j])) * Fraction(2) ** e
               for i in range(6) for j in range(17))
    # too wide for int64: the float32 route declines, gram_data falls back
    w = np.array([[2.0 ** -120, 1.0]], np.float32)
    assert _float32_integers(w) is None
    from qkverify.errors import QKInputError

    with pytest.raises(QKInputError):
        _float32_integers(np.array([[np.inf]], np.float32))


def test_rank_witness_is_independently_checkable():
    rng = np.random.default_rng(5)
    q, k = random_head(rng, 3, 9)
    g = gram_data(q, k)
    w = rank_witness(g)
    assert w["rank"] == 6 and w["prime"] == str(RANK_PRIME) and len(w["minor_cols"]) == 6
    # re-check from the weights alone: exact minor of M·2^{-e}, reduced mod p
    M = np.concatenate([k, q]).astype(np.float64)
    sub = [[int(Fraction(float(M[i, j])) * Fraction(2) ** (-g.e)) for j in w["minor_cols"]] for i in range(6)]
    det = int(fmpz_mat(sub).det())
    assert det % RANK_PRIME == int(w["minor_mod_p"]) != 0
    # a degenerate head (W_K = W_Q) has no full-rank witness
    assert rank_witness(gram_data(HB[0], HB[1])) is None


# ---------------------------------------------------------------------------
# enclosures


def _exact_eigs_half_JG(g, prec=400):
    old = ctx.prec
    ctx.prec = prec
    try:
        cp = g.JG_fmpz().charpoly()
        r = sorted((x.real / 2 for x, m in cp.complex_roots() for _ in range(m)),
                   key=lambda v: float(v.mid()), reverse=True)
        return r
    finally:
        ctx.prec = old


@pytest.mark.parametrize("method", ["fast", "arb", "exact"])
def test_enclosures_contain_the_exact_eigenvalues(method):
    rng = np.random.default_rng(6)
    for trial in range(3):
        q, k = random_head(rng, 4, 24, spread=8)
        g = gram_data(q, k)
        if method == "fast":
            E = enclose_fast(None, g.n, g.gram_float())
        elif method == "arb":
            E = enclose_arb(g.G_fmpz(), g.n, g.gram_float(), prec=200, target_bits=120)
        else:
            E = enclose_exact_products(g.G_fmpz(), g.n, g.gram_float())
        ex = _exact_eigs_half_JG(g)
        assert len(E.values) == 8
        for v, x in zip(E.values, ex):
            assert v.contains(x), (method, trial)
            assert float(v.rad()) <= 1e-9 * abs(float(v.mid()))
        if method == "arb":
            assert all(float(v.rad()) <= 2.0 ** -100 * abs(float(v.mid())) for v in E.values)


# ---------------------------------------------------------------------------
# profiles, faces, signatures


def _iv(row, k):
    return row[k + "_lo"], row[k + "_hi"]


def test_known_heads():
    r = certify_head(rec(*HA), HeadOptions(direct=True))
    row = r["row"]
    assert (row["rank_M"], row["n_pos"], row["n_neg"], row["n_zero"]) == (4, 2, 2, N - 4)
    assert row["a_exact"] == "1/2" and contains(*_iv(row, "b"), "1/2")
    assert _iv(row, "c") == ("0", "0") and _iv(row, "d") == ("0", "0")
    # α = β exactly: the enclosures touch, the faces are decided exactly
    assert (row["face_b0"], row["face_c0"], row["face_d0"]) == (False, True, True)
    assert contains(*_iv(row, "pairing"), 1) and contains(*_iv(row, "rho"), 1)
    assert r["verdict"] == "holds" and row["direct_NxN"] == "agree"

    row = certify_head(rec(*HD)).get("row")
    assert row["a_exact"] == "1/4"
    assert contains(*_iv(row, "b"), "1/4") and contains(*_iv(row, "c"), "1/2") and _iv(row, "d") == ("0", "0")
    assert (row["face_c0"], row["face_d0"]) == (False, True)
    # ρ = β/α = (√2−1)/(√2+1) = 3 − 2√2; 𝒫 = 1 − ‖α−β‖/‖S‖ = 1 − 1/√(3/2)·… checked numerically
    assert contains(*_iv(row, "rho"), Fraction(3) - Fraction(2) * Fraction(2 ** 0.5)) or \
        abs(row["rho"] - (3 - 2 * 2 ** 0.5)) < 1e-12
    for k in ("b", "c"):
        lo, hi = (float(x) for x in _iv(row, k))
        assert hi - lo <= 1e-9 * abs(row[k])

    for H, sig, prof in ((HB, (2, 0, N - 2), ("0", "1", "0")), (HC, (0, 2, N - 2), ("0", "0", "1"))):
        r = certify_head(rec(*H))
        row = r["row"]
        assert row["rank_M"] == 2 and (row["n_pos"], row["n_neg"], row["n_zero"]) == sig
        assert row["a_exact"] == "0" and row["face_b0"] is True
        for k, v in zip("bcd", prof):
            assert _iv(row, k) == (v, v)
        assert r["verdict"] == "undecided" and "hypothesis fails" in r["reason"]


def test_random_heads_agree_with_the_exact_profile():
    from qkverify.math.profile import compute_profile

    rng = np.random.default_rng(7)
    for trial in range(4):
        n, Nn = 2, 6
        q = rng.integers(-8, 9, (n, Nn)).astype(np.float32) / 8
        k = rng.integers(-8, 9, (n, Nn)).astype(np.float32) / 4
        row = certify_head(rec(q, k)).get("row")
        L = fmpq_of(k).transpose() * fmpq_of(q)
        p = compute_profile(L, exact_values=False)
        assert (row["n_pos"], row["n_neg"], row["n_zero"]) == p.inertia
        assert row["a_exact"] == fmpq_str(p.a.exact)
        old = ctx.prec
        ctx.prec = 128
        try:
            for name, coord in zip("bcd", (p.b, p.c, p.d)):
                lo, hi = (Fraction(x) for x in _iv(row, name))
                mine = arb(fmpq(lo.numerator, lo.denominator)).union(arb(fmpq(hi.numerator, hi.denominator)))
                assert coord.enclosure.overlaps(mine), (trial, name)
        finally:
            ctx.prec = old
        fib = p.fibers()
        assert row["face_b0"] == fib["b=0"] and row["face_c0"] == fib["c=0"] and row["face_d0"] == fib["d=0"]


def test_float_pipeline_flags_a_tiny_eigenvalue():
    e = np.eye(N, dtype=np.float32)
    q = np.stack([e[0], e[1]])
    k = np.stack([e[2], np.float32(2.0 ** -40) * e[3]])
    row = certify_head(rec(q, k)).get("row")
    assert (row["n_pos"], row["n_neg"], row["n_zero"]) == (2, 2, N - 4)
    assert (row["float64_n_pos"], row["float64_n_neg"]) == (1, 1)
    assert row["float64_disagrees"] is True and row["float64_flags"].startswith("count")


def test_more_digits():
    row = certify_head(rec(*HD), HeadOptions(digits=30, charpoly=False)).get("row")
    for k in ("b", "c"):
        lo, hi = (Fraction(x) for x in _iv(row, k))
        assert hi - lo <= Fraction(1, 10 ** 30) * abs(Fraction(row[k]))
    assert contains(*_iv(row, "c"), "1/2")


def test_certify_is_picklable_and_signature_without_charpoly():
    import pickle

    r = rec(*HD)
    opt = HeadOptions(charpoly=False)
    r2, o2 = pickle.loads(pickle.dumps((r, opt)))
    row = certify_head(r2, o2)["row"]
    assert (row["n_pos"], row["n_neg"]) == (2, 2) and row["signature_method"].startswith("rank witness")


# ---------------------------------------------------------------------------
# the command


def test_heads_command_on_a_synthetic_checkpoint(tmp_path, capsys):
    from qkverify.certificates import validate
    from qkverify.cli import main
    from qkverify.heads.output import COLUMNS

    p = _write_bert(tmp_path)
    out = tmp_path / "out"
    assert main(["heads", str(p), "--out", str(out), "--direct", "all"]) == 0
    text = capsys.readouterr().out
    flat = " ".join(text.split())
    # the summary says why the other two are not certified: degenerate heads are outside Theorem 3
    assert ("Theorem 3 (signature (d_head, d_head, d_model − 2·d_head)) certified on 2 of 4 heads; it does not "
            "apply to 2: 2 heads are degenerate (rank [W_K; W_Q] < 2·d_head)") in flat, flat
    with open(out / "heads.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0].keys()) == COLUMNS and len(rows) == 4
    for c in ("model", "layer", "head", "kv_head", "n_pos", "n_neg", "n_zero", "a", "b", "c", "d",
              "symmetric_energy", "pairing", "rho", "pairing_bound", "pairing_gap"):
        assert c in COLUMNS
    assert rows[1]["c_lo"] == rows[1]["c_hi"] or Fraction(rows[1]["c_lo"]) <= Fraction(1, 2) <= Fraction(rows[1]["c_hi"])
    doc = json.loads((out / "heads.json").read_text())
    assert doc["rows"][0]["a_exact"] == "1/2" and doc["model"]["arch"] == "bert"
    assert (out / "heads.png").stat().st_size > 1000
    certs = sorted(out.glob("L*H*.json"))
    assert len(certs) == 8                          # Theorem 3 and Definition 6 per head
    from qkverify.kernel import verify_file

    for c in certs:
        cert = json.loads(c.read_text())
        validate(cert)
        assert cert["input"]["kind"] == "weights" and all(len(t["sha256"]) == 64 for t in cert["input"]["tensors"])
        assert "W_Q" not in cert["input"]          # compact: names and slices only
        assert cert["statement"] == ("profile" if c.name.endswith(".profile.json") else "heads_have_balanced_attention")
        wdir = str(p if p.is_dir() else p.parent)
        assert verify_file(c, [wdir]).status == "valid"  # the kernel re-reads the weights (found by SHA-256)
    # rerun: byte-identical certificates (no timestamps, no timings), exit 0;
    # different options give a different certificate, refused without --force
    before = {c.name: c.read_bytes() for c in certs}
    assert main(["heads", str(p), "--out", str(out), "--quiet", "--direct", "all"]) == 0
    assert before == {c.name: c.read_bytes() for c in sorted(out.glob("L*H*.json"))}
    assert main(["heads", str(p), "--out", str(out), "--quiet", "--direct", "none"]) == 2
    assert main(["heads", str(p), "--out", str(out), "--quiet", "--direct", "none", "--force"]) == 0


def test_heads_command_jobs_and_layers(tmp_path):
    from qkverify.cli import main

    p = _write_bert(tmp_path)
    assert main(["heads", str(p), "--out", str(tmp_path / "o1"), "--quiet", "--layers", "1", "--no-plot",
                 "--jobs", "2", "--no-certificates"]) == 0
    rows = list(csv.DictReader(open(tmp_path / "o1" / "heads.csv")))
    assert [(r["layer"], r["head"]) for r in rows] == [("1", "0"), ("1", "1")]
    assert main(["heads", str(p), "--out", str(tmp_path / "o2"), "--quiet", "--layers", "7"]) == 2


# ---------------------------------------------------------------------------
# real models (slow)


def _float64_profile(q, k):
    L = k.astype(np.float64).T @ q.astype(np.float64)
    S, T = (L + L.T) / 2, (L - L.T) / 2
    lam = np.linalg.eigvalsh(S)
    lam = lam[np.argsort(-np.abs(lam))][: 2 * q.shape[0]]      # the 2n nonzero ones
    al = np.sort(lam[lam > 0])[::-1]
    be = np.sort(-lam[lam < 0])[::-1]
    m = max(len(al), len(be))
    al, be = np.pad(al, (0, m - len(al))), np.pad(be, (0, m - len(be)))
    fL = np.sum(L * L)
    return np.array([np.sum(T * T) / fL, 2 * al @ be / fL, np.sum(np.maximum(al - be, 0) ** 2) / fL,
                     np.sum(np.maximum(be - al, 0) ** 2) / fL])


@pytest.mark.slow
def test_default_model_all_72_heads():
    from qkverify.models import load_model

    m = load_model(None)
    heads = list(m.heads())
    assert len(heads) == 72
    for i, h in enumerate(heads):
        res = certify_head(h, HeadOptions(direct=(i == 0)))
        row = res["row"]
        assert (row["n_pos"], row["n_neg"], row["n_zero"]) == (32, 32, 320), h.key
        assert res["verdict"] == "holds"
        prof = np.array([row[k] for k in "abcd"])
        assert np.max(np.abs(prof - _float64_profile(h.W_Q, h.W_K))) <= 1e-9, h.key
        assert row["face_c0"] in (True, False) and row["face_d0"] in (True, False)
        if i == 0:
            assert row["direct_NxN"] == "agree"


@pytest.mark.slow
def test_smollm2_grouped_query_heads():
    from qkverify.models import load_model

    m = load_model("smollm2")
    heads = list(m.heads([0, 29]))
    assert len(heads) == 18
    for h in heads:
        assert h.kv_head == h.head // 3
        res = certify_head(h, HeadOptions())
        row = res["row"]
        assert (row["n_pos"], row["n_neg"], row["n_zero"]) == (64, 64, 576 - 128), h.key
        assert res["verdict"] == "holds"
        assert row["face_c0"] in (True, False) and row["face_d0"] in (True, False)


@pytest.mark.parametrize("exact_p", [False, True])
def test_float_pass_and_exact_diagonals_contain_the_exact_eigenvalues(exact_p):
    """pass1: the float enclosures of every eigenvalue of ½J·Z Zᵀ (ĜY in float or
    exact), and the exact-diagonal refinements of all of them, contain the exact
    eigenvalues (roots of charpoly(J·Z Zᵀ) at 400 bits), on well- and
    ill-conditioned heads; refinement makes an isolated eigenvalue's interval
    far narrower."""
    from flint import arb

    from qkverify.heads.pass1 import Pass1

    rng = np.random.default_rng(20)
    heads = [random_head(rng, 4, 24, spread=8), random_head(rng, 6, 40, spread=3)]
    V = np.linalg.qr(rng.standard_normal((40, 12)))[0].T
    q = (rng.standard_normal((6, 6)) * [1, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5]) @ V[:6]
    heads.append((q.astype(np.float32), (q @ np.eye(40) * 0.7 + 1e-6 * V[6:]).astype(np.float32)))
    for h, (q, k) in enumerate(heads):
        g = gram_data(q, k)
        p = Pass1(g, g.gram_float(), exact_p=exact_p)
        ex = _exact_eigs_half_JG(g)                     # eigenvalues of ½J·Z Zᵀ, decreasing
        two = fmpq(2) ** p.s if p.s >= 0 else fmpq(1, 2 ** -p.s)
        ref = p.refine(range(len(ex)))
        narrower = 0
        for i, x in enumerate(ex):
            ball = arb(float(np.ldexp(p.lo[i], p.s))).union(arb(float(np.ldexp(p.hi[i], p.s))))
            assert ball.contains(x), (i, exact_p)
            lo, hi = ref[i]
            assert arb(lo * two).union(arb(hi * two)).contains(x), (i, exact_p)
            narrower += (hi - lo) * 1000 < fmpq(*float(p.hi[i] - p.lo[i]).as_integer_ratio())
        if h < 2:       # the third head (κ(G) ~ 1e10) is left to the Newton route: ‖H − I‖ limits both passes
            assert narrower >= len(ex) // 2, (h, exact_p)
