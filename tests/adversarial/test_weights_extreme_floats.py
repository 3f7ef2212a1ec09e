"""Weights at the edges of the float formats (issue 18, hostile inputs): float32 values near
3.4e38 (the largest finite float32 among them) and float64 values spanning about 560 binary
orders are read exactly by producer and kernel (every entry is the exact dyadic it stores) and
the head certificates verify valid from where ``heads`` ran, with no options."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from qkverify.cli import main
from qkverify.kernel import weights as KW
from qkverify.models import load_model


def _model(d: Path, q: np.ndarray, k: np.ndarray) -> Path:
    from safetensors.numpy import save_file

    d.mkdir()
    save_file({"model.layers.0.self_attn.q_proj.weight": q, "model.layers.0.self_attn.k_proj.weight": k},
              str(d / "model.safetensors"))
    (d / "config.json").write_text(json.dumps({"model_type": "llama", "num_attention_heads": 2,
                                               "num_key_value_heads": 2, "hidden_size": q.shape[1]}))
    return d


def _cases():
    rng = np.random.default_rng(1)
    top = float(np.finfo(np.float32).max)

    def near_max():
        return np.clip(rng.standard_normal((4, 6)) * 2e38, -top, top).astype(np.float32)
    big = near_max()
    big[0, 0] = np.finfo(np.float32).max
    big[1, 1] = -np.finfo(np.float32).max
    span = rng.standard_normal((4, 6)) * 2.0 ** rng.integers(-280, 281, (4, 6)).astype(np.float64)
    span[0, 0], span[1, 1] = 2.0 ** 280, 2.0 ** -280 * 3
    return {"float32 near 3.4e38": (big, near_max()),
            "float64 over 560 binary orders": (span, rng.standard_normal((4, 6)) * 2.0 ** rng.integers(-280, 281, (4, 6)))}


@pytest.mark.parametrize("case", list(_cases()))
def test_extreme_floats_read_exactly_and_certified(tmp_path, monkeypatch, capsys, case):
    q, k = _cases()[case]
    monkeypatch.chdir(tmp_path)
    _model(tmp_path / "m", q, k)
    heads = list(load_model("m").heads())
    for h in heads:  # the producer's matrices are the stored numbers, not rescaled or rounded
        r = slice(2 * h.head, 2 * h.head + 2)
        assert np.array_equal(h.W_Q, q[r]) and np.array_equal(h.W_K, k[r]) and h.W_Q.dtype.itemsize >= q.itemsize
    # the kernel's [W_K; W_Q] = Z·2^e of head 1 is the same rationals
    ts = [{"role": "W_Q", "name": "model.layers.0.self_attn.q_proj.weight", "file": "model.safetensors",
           "sha256": "", "rows": [2, 4]},
          {"role": "W_K", "name": "model.layers.0.self_attn.k_proj.weight", "file": "model.safetensors",
           "sha256": "", "rows": [2, 4]}]
    Z, e = KW.head_Z(ts, 2, 6, lambda f, sha: tmp_path / "m" / "model.safetensors")
    want = [Fraction(float(x)) for x in np.concatenate([k[2:4], q[2:4]]).reshape(-1)]
    assert [Fraction(int(Z[i, j])) * Fraction(2) ** e for i in range(4) for j in range(6)] == want
    assert main(["heads", "m", "--out", "out", "--no-plot", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["verify", "out/L00H00.json", "out/L00H01.json"]) == 0
    assert "2 valid" in capsys.readouterr().out
    # the profile certificates are decided: the producer's cells separate every α_j from β_j, even
    # a pair 2^-300 below the spectrum's norm or two values equal to 2^-160 of their size
    assert main(["verify", "out/L00H00.profile.json", "out/L00H01.profile.json"]) == 0
    assert "2 valid" in capsys.readouterr().out
    for h in (0, 1):
        _check_profile(json.loads(Path(f"out/L00H0{h}.profile.json").read_text()), q[2 * h:2 * h + 2],
                       k[2 * h:2 * h + 2])


def _check_profile(cert: dict, q: np.ndarray, k: np.ndarray) -> None:
    """The records of a head's Definition 6 certificate against π(L) computed here independently:
    a exactly in fractions; b, c, d from the eigenvalues of S = sym(W_Kᵀ W_Q) by mpmath at 6000 bits
    (every product and sum of these floats is exact there; the eigenvalues are accurate to about
    2^-5990 of ‖S‖, far below the smallest gap |α_j − β_j| asserted below)."""
    import mpmath as mp

    F = [[Fraction(float(x)) for x in r] for r in q], [[Fraction(float(x)) for x in r] for r in k]
    N = q.shape[1]
    L = [[sum(F[1][r][i] * F[0][r][j] for r in range(len(q))) for j in range(N)] for i in range(N)]
    fL = sum(x * x for row in L for x in row)
    fT = sum(((L[i][j] - L[j][i]) / 2) ** 2 for i in range(N) for j in range(N))
    rec = {d["check"]: d for d in cert["declarations"]}
    assert Fraction(rec["profileA"]["value"]["exact"]) == fT / fL
    with mp.workprec(6000):
        S = mp.matrix([[mp.mpf(L[i][j].numerator) / L[i][j].denominator / 2 + mp.mpf(L[j][i].numerator)
                        / L[j][i].denominator / 2 for j in range(N)] for i in range(N)])
        ev = list(mp.eigsy(S, eigvals_only=True))
        top = max(abs(x) for x in ev)
        nz = [x for x in ev if abs(x) > top * mp.mpf(2) ** -3000]
        assert len(nz) == 4  # signature (2, 2, N − 4): Theorem 3
        al = sorted((x for x in nz if x > 0), reverse=True) + [mp.mpf(0)] * N
        be = sorted((-x for x in nz if x < 0), reverse=True) + [mp.mpf(0)] * N
        gaps = [al[j] - be[j] for j in range(2)]
        assert all(abs(g) > top * mp.mpf(2) ** -2000 for g in gaps)  # each order is far above the error
        want = {"b": sum(2 * al[j] * be[j] for j in range(2)), "c": sum(g * g for g in gaps if g > 0),
                "d": sum(g * g for g in gaps if g < 0)}
        fl = mp.mpf(fL.numerator) / fL.denominator
        for key, v in want.items():
            d = rec["profile" + key.upper()]
            assert d["conclusion"] == "computed", (key, d)
            if v == 0:
                assert d["value"] == {"exact": "0"}, (key, d["value"])
            else:
                lo, hi = (mp.mpf(x) for x in d["value"]["enclosure"])
                # inside, and as narrow as --digits 9 asks (relative to the value or, for a
                # coordinate below 10^-6 of the symmetric energy 1 − a, to that share)
                share = (1 - mp.mpf(fT.numerator) / fT.denominator / fl) * mp.mpf(10) ** -6
                assert lo <= v / fl <= hi and hi - lo <= 1e-8 * max(v / fl, share), (key, lo, v / fl, hi)
    assert rec["profile"]["conclusion"] == "computed"


def test_unordered_pairs_leave_c_and_d_undecided(tmp_path, monkeypatch, capsys):
    """When the cells cannot order some α_j and β_j (here: the exact route is taken away, as when
    it is over the budget), the producer states c and d undecided -- the kernel reads both from the
    order of every pair -- and the kernel agrees: a valid certificate that says undecided."""
    from qkverify.heads import cells

    q, k = _cases()["float64 over 560 binary orders"]
    monkeypatch.chdir(tmp_path)
    _model(tmp_path / "m", q, k)
    monkeypatch.setattr(cells, "MAX_CELL_LEVEL", cells.ORDER_LEVEL_CAP)
    monkeypatch.setattr(cells, "_exact_ties", lambda order, *a: (order, [], {}))
    assert main(["heads", "m", "--out", "out", "--no-plot", "--quiet"]) == 0
    capsys.readouterr()
    for h in ("L00H00", "L00H01"):
        rec = {d["check"]: d["conclusion"] for d in json.loads(Path(f"out/{h}.profile.json").read_text())["declarations"]}
        assert rec == {"profileA": "computed", "profileB": "computed", "profileC": "undecided",
                       "profileD": "undecided", "profile": "undecided"}, (h, rec)
        assert main(["verify", f"out/{h}.profile.json"]) == 0
        assert "valid (profile: undecided" in capsys.readouterr().out


@pytest.mark.parametrize("t", [200, 600])
def test_near_tie_far_below_the_enclosures_is_ordered(tmp_path, monkeypatch, capsys, t):
    """L = u vᵀ with u = (1, 0), v = (2^-t, 1) (one head, d_head = 1): S has the eigenvalues
    (√(1 + ε²) ± ε)/2, ε = u·v = 2^-t, so α_0 − β_0 = ε is 2^-t of α_0 -- beyond the float and arb
    enclosures; the producer's cells still separate them (by the exact roots) and the kernel
    decides.  By hand (‖L‖² = 1 + ε², ‖T‖² = ½, 2α_0β_0 = ½): a = b = ½/(1 + ε²), c = ε²/(1 + ε²),
    d = 0."""
    monkeypatch.chdir(tmp_path)
    q, k = np.array([[2.0 ** -t, 1.0], [1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]])
    _model(tmp_path / "m", q, k)   # head 0 is the one above (head 1: L = e_2 e_1ᵀ, a = 1)
    assert main(["heads", "m", "--out", "out", "--no-plot", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["verify", "out/L00H00.profile.json"]) == 0
    assert "valid (profile: holds" in capsys.readouterr().out
    rec = {d["check"]: d for d in json.loads(Path("out/L00H00.profile.json").read_text())["declarations"]}
    eps2 = Fraction(1, 4 ** t)
    assert Fraction(rec["profileA"]["value"]["exact"]) == Fraction(1, 2) / (1 + eps2)
    assert rec["profileD"]["value"] == {"exact": "0"}
    for key, v in (("B", Fraction(1, 2) / (1 + eps2)), ("C", eps2 / (1 + eps2))):
        lo, hi = (Fraction(x) for x in rec["profile" + key]["value"]["enclosure"])
        share = (1 - Fraction(1, 2) / (1 + eps2)) / 10 ** 6   # below 10^-6 of 1 − a the width is absolute
        assert rec["profile" + key]["conclusion"] == "computed" and lo <= v <= hi
        assert hi - lo < max(v, share) / 10 ** 8
