"""`qkverify compare` (issue 22): a published per-head table audited row by
row against the theorems within the authors' float error model, and against
a model's certified heads.  The tables are made here: rows of the project's
own float pipeline on the shipped MiniLM computed as the authors do, planted
inconsistent rows, and rows perturbed so that a face flips."""

from __future__ import annotations

import csv
import math

import pytest
from flint import fmpq

from qkverify.cli import main
from qkverify.compare import audit
from qkverify.compare.authors import model_rows, write_table
from qkverify.compare.checks import check_row
from qkverify.compare.errormodel import ErrorModel
from qkverify.compare.model import AGREE, BEYOND, LUCK, WITHIN, CertifiedHead, judge_row
from qkverify.compare.table import AUTHORS_COLUMNS, read_table


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """The authors' columns of MiniLM layers 0-1 (24 heads), computed as their scripts do."""
    from qkverify.models import load_model

    rows = model_rows(load_model(None), [0, 1])
    p = tmp_path_factory.mktemp("tables") / "minilm.csv"
    write_table(rows, p)
    return p, rows


def _rows(path):
    rows, _ = read_table(path)
    for r in rows:
        r.pop("_line")
    return rows


def _status(csv_path):
    with open(csv_path, newline="", encoding="utf-8") as fh:
        return {(int(r["layer"]), int(r["head"])): r for r in csv.DictReader(fh)}


def test_error_model_figures_by_hand():
    em = ErrorModel()
    m = 128
    delta = 2 * (2.0 ** -24 + 4 * m * 2.0 ** -53)          # σ(u32 + c·m·u64)
    assert em.delta_rel(m) == pytest.approx(delta, rel=1e-15)
    assert em.resolution(m) == pytest.approx(4 * m * delta ** 2, rel=1e-15)
    # a c of 1e-10 (the smallest nonzero c or d in the published table) lies above the resolution
    assert em.resolution(256) < 1e-10
    # |c̃ − c| ≤ 4δ√(m c̃) + 4mδ² + 3εc̃
    assert em.err_cd(0.25, m) == pytest.approx(4 * delta * math.sqrt(m * 0.25) + 4 * m * delta ** 2
                                               + 3 * 2 * 2.0 ** -24 * 0.25)


def test_clean_rows_pass(clean, tmp_path, capsys):
    path, rows = clean
    assert len(rows) == 24 and list(rows[0]) == AUTHORS_COLUMNS
    assert main(["compare", str(path), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "contradicts 0" in out
    assert all(len(line) <= 100 for line in out.splitlines())
    st = _status(tmp_path / "compare.csv")
    assert len(st) == 24
    assert {r["verdict"] for r in st.values()} <= {"ok", "flagged"}
    for r in st.values():                      # the theorem checks all pass on clean rows
        for c in ("simplex", "energy", "signature", "pairing_bound", "pairing_gap", "sym_simplex", "sym_scale"):
            assert r[c] == "ok", (c, r)
    # a table zero is a face the pipeline cannot decide: flagged, never 'ok'
    zeros = [(r["layer"], r["head"]) for r in rows if r["d"] == 0.0]
    assert zeros and all(st[k]["face_d"] == "below resolution" for k in zeros)
    data = (tmp_path / "compare.csv").read_bytes()
    assert b"\r\n" not in data


def _plant(rows):
    """Copies of clean rows, each broken in one way; returns (rows, {(layer, head): expected check})."""
    src = {(r["layer"], r["head"]): r for r in rows}
    out, want = [dict(r) for r in rows], {}

    def put(key, check, **change):
        r = next(x for x in out if (x["layer"], x["head"]) == key)
        r.update(change)
        want[key] = check

    r = src[(0, 0)]
    put((0, 0), "simplex", a=r["a"] + 1e-6)
    r = src[(0, 1)]
    put((0, 1), "energy", symmetric_energy=r["symmetric_energy"] - 1e-7, a=r["a"], b=r["b"])
    r = src[(0, 2)]
    put((0, 2), "pairing_bound", pairing=r["pairing_bound"] + 1e-4, pairing_gap=-1e-4)
    r = src[(0, 3)]
    put((0, 3), "pairing_gap", pairing_gap=r["pairing_gap"] * 1.001)
    r = src[(0, 4)]
    put((0, 4), "sym_simplex", b_sym=r["b_sym"] + 1e-8)
    put((0, 5), "signature", n_zero=1)
    r = src[(0, 6)]
    put((0, 6), "sym_scale", c=r["c"] * 1.0001, d=r["d"] - r["c"] * 0.0001)
    return out, want


def test_planted_rows_are_flagged(clean, tmp_path, capsys):
    _, rows = clean
    planted, want = _plant(_rows(clean[0]))
    p = tmp_path / "planted.csv"
    write_table(planted, p)
    assert main(["compare", str(p), "--out", str(tmp_path / "o")]) == 1
    out = capsys.readouterr().out
    st = _status(tmp_path / "o" / "compare.csv")
    for key, check in want.items():
        assert st[key][check] == "contradicts", (key, check, st[key]["findings"])
        assert st[key]["verdict"] == "contradicts"
        assert f"L{key[0]}H{key[1]}" in out
    others = [k for k in st if k not in want]
    assert all(st[k]["verdict"] != "contradicts" for k in others)


def test_flags_below_resolution_are_not_contradictions(clean):
    em = ErrorModel()
    r = dict(_rows(clean[0])[0])
    m = r["dim"]
    # counts off balance: only a (nearly) singular head explains them -- flagged, not a contradiction
    res = check_row({**r, "n_pos": m // 2 + 1, "n_neg": m // 2 - 1}, em)
    assert res["signature"][0] == "below resolution" and "Lemma 3" in res["signature"][2]
    # c tinier than R = 4·m·δ²: c > 0 and c = 0 are indistinguishable
    tiny = em.resolution(m) / 2
    res = check_row({**r, "c": tiny, "d": r["d"] + r["c"] - tiny}, em)
    assert res["face_c"][0] == "below resolution"
    # c ≈ d within the error model: their order is not decided
    res = check_row({**r, "c": 0.01, "d": 0.01 + 1e-12}, em)
    assert res["c_vs_d"][0] == "below resolution"
    assert res["simplex"][0] == "contradicts"   # (and that row no longer sums to 1)


def test_bad_tables_exit_2_with_one_line(tmp_path, capsys):
    p = tmp_path / "t.csv"
    p.write_text("model,layer,head,dim,a,b,c\nx,0,0,4,0.1,0.2,0.3\n", encoding="utf-8")
    assert main(["compare", str(p), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "no column d" in err and len(err.strip().splitlines()) == 1
    p.write_text("model,layer,head,dim,a,b,c,d\nx,0,0,4,0.1,zz,0.3,0.6\n", encoding="utf-8")
    assert main(["compare", str(p), "--out", str(tmp_path / "o")]) == 2
    assert "t.csv:2: column b is not a number" in capsys.readouterr().err
    p.write_text("model,layer,head,dim,a,b,c,d\nx,0,0,4,0.1,0.2,0.3,0.4\nx,0,0,4,0.1,0.2,0.3,0.4\n", encoding="utf-8")
    assert main(["compare", str(p), "--out", str(tmp_path / "o")]) == 2
    assert "already on line 2" in capsys.readouterr().err


def _head(beta, n_pos=1):
    """A hand-made certified head: S = diag(1, −β), L = S (a = 0), n = 1."""
    b = fmpq(beta)
    two = fmpq(1) + b * b
    c = (fmpq(1) - b) ** 2 / two if b < 1 else fmpq(0)
    d = (b - fmpq(1)) ** 2 / two if b > 1 else fmpq(0)
    return CertifiedHead(0, 0, 1, 2, 2, n_pos, 1, fmpq(0), (2 * b / two,) * 2, (c, c), (d, d),
                         {"c0": c == 0, "d0": d == 0}, [(fmpq(1), fmpq(1)), (-b, -b)])


def _row(beta):
    two = 1 + beta * beta
    c = (1 - beta) ** 2 / two if beta < 1 else 0.0
    d = (beta - 1) ** 2 / two if beta > 1 else 0.0
    return {"model": "x", "layer": 0, "head": 0, "dim": 2, "n_pos": 1, "n_neg": 1, "a": 0.0,
            "b": 2 * beta / two, "c": c, "d": d}


def test_judge_luck_and_flips_by_hand():
    em = ErrorModel()
    # α₁ = 1, β₁ = 1/2: c > 0 and d = 0 with margin 1/2 ≫ 2δ‖L‖ -- robust agreement
    j = judge_row(_row(0.5), _head(fmpq(1, 2)), em)
    assert j["face_c"][0] == AGREE and j["face_d"][0] == AGREE and j["c_vs_d"][0] == AGREE
    # β₁ = 1 − 10⁻⁹: the margin α₁ − β₁ is far below 2δ‖L‖ ≈ 3.4·10⁻⁷ -- the table is right by luck
    beta = fmpq(10 ** 9 - 1, 10 ** 9)
    j = judge_row(_row(float(beta)), _head(beta), em)
    assert j["face_c"][0] == LUCK and j["face_d"][0] == LUCK
    # the same head, the float pipeline having rounded the other way (d = 1e-18 > 0, c = 0): within the model
    r = _row(float(beta))
    r["c"], r["d"] = 0.0, 1e-18
    j = judge_row(r, _head(beta), em)
    assert j["face_c"][0] == WITHIN and j["face_d"][0] == WITHIN
    # a robust head whose table says d = 1e-3 > 0: beyond the error model
    r = _row(0.5)
    r["d"] = 1e-3
    j = judge_row(r, _head(fmpq(1, 2)), em)
    assert j["face_d"][0] == BEYOND and j["d"][0] == BEYOND


@pytest.mark.slow
def test_model_join_finds_a_flipped_face(clean, tmp_path, capsys):
    rows = _rows(clean[0])
    zero_d = next(r for r in rows if r["d"] == 0.0)          # a head on the face d = 0
    key = (zero_d["layer"], zero_d["head"])
    # flip it consistently (every theorem check still passes without weights): d = 1e-6, c, c_sym, d_sym moved
    flip = dict(zero_d)
    flip["d"], flip["c"] = 1e-6, zero_d["c"] - 1e-6
    s = flip["symmetric_energy"]
    flip["d_sym"], flip["c_sym"] = flip["d"] / s, flip["c"] / s
    table = [flip if (r["layer"], r["head"]) == key else r for r in rows]
    p = tmp_path / "flipped.csv"
    write_table(table, p)
    a = audit(_rows(p))
    assert all(r["verdict"] != "contradicts" for r in a.rows)      # without weights: nothing contradicts
    assert main(["compare", str(p), "--model", "all-MiniLM-L6-v2", "--out", str(tmp_path / "o"), "--quiet"]) == 1
    out = capsys.readouterr().out
    st = _status(tmp_path / "o" / "compare.csv")
    assert st[key]["model_face_d"] == "disagrees beyond the error model"
    assert st[key]["model_verdict"] == "beyond"
    assert f"L{key[0]}H{key[1]}" in out
    others = {k: r for k, r in st.items() if k != key}
    assert all(r["model_verdict"] in ("agree", "luck") for r in others.values())
    assert all(r["model_signature"] == "agree" and r["model_a"] == "agree" for r in others.values())
    html = (tmp_path / "o" / "report.html").read_text(encoding="utf-8")
    assert '"joined":"all-MiniLM-L6-v2"' in html and "disagrees beyond the error model" in html


def test_model_from_a_heads_folder(tmp_path):
    """--model may name a folder `qkverify heads` wrote: its certificates' cells are the enclosures."""
    from test_report import _npz_model

    from qkverify.models import load_model

    p = _npz_model(tmp_path / "tiny.npz")
    assert main(["heads", str(p), "--out", str(tmp_path / "h"), "--quiet", "--jobs", "1"]) == 0
    t = tmp_path / "t.csv"
    write_table(model_rows(load_model(str(p)), name="tiny"), t)
    assert main(["compare", str(t), "--model", str(tmp_path / "h"), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    st = _status(tmp_path / "o" / "compare.csv")
    assert len(st) == 6
    assert all(r["model_verdict"] in ("agree", "luck") and r["model_signature"] == "agree" for r in st.values())
    assert st[(0, 0)]["certificate"] == "L00H00.json"
    assert '"cert_prefix":"../h/"' in (tmp_path / "o" / "report.html").read_text(encoding="utf-8")
