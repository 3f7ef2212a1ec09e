"""The clustering regimes (docs/MATH.md, Clustering regimes): the classifier on rational triples (one per regime
and one where no theorem applies; values derived by hand in the comments), certificates
the kernel accepts and mutations it rejects, check units in the lean_map, the value circuit
of every loader family, the simulated dynamics (Theorem 2.1 on 1,000 initial conditions, the
d = 2 example) and the Ginibre experiment."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from flint import fmpq, fmpq_mat

from qkverify.claims.evaluate import evaluate
from qkverify.io.inputs import TripleInput
from qkverify.kernel import verify_document
from qkverify.math import regimes as R

I2 = fmpq_mat([[1, 0], [0, 1]])
I3 = fmpq_mat([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
STATEMENTS = ("clusters_qk_positive_definite", "clusters_good_triple", "clusters_paranormal",
              "clusters_good_triple_multiplicity")


def M(rows) -> fmpq_mat:
    return fmpq_mat([[fmpq(x) for x in r] for r in rows])


def kernel(cert):
    return verify_document(json.loads(json.dumps(cert)))


def classify(Q, K, V):
    return R.classify(R.Triple(M(Q), M(K), M(V)))


def certs(Q, K, V) -> dict:
    inp = TripleInput(M(Q), M(K), M(V))
    return {st: evaluate(st, inp) for st in STATEMENTS}


def rec(run, check):
    return next(r for r in run.records if r.meta.check == check)


# ---------------------------------------------------------------- the classifier, exact


def test_regime_identity():
    # V = I, QᵀK = diag(2, 1): symmetric with pivots 2, 1 > 0, so QᵀK ≻ 0 -> Theorem 3.1; V = I is
    # paranormal (λ = 1, F = R², G = 0) -> 5.2; λ = 1 has multiplicity 2: not a good triple
    c = classify([[1, 0], [0, 1]], [[2, 0], [0, 1]], [[1, 0], [0, 1]])
    assert c.regimes() == ["3.1", "5.2"]
    assert c.V_identity and c.definiteness.pd and c.top is None and c.good_triple is False
    assert c.paranormal.holds and c.paranormal.lam.exact == 1 and c.paranormal.dims == (2, 0)


def test_regime_good_triple_exact():
    # V = [[2, 1], [0, 1]]: eigenvalues 2 and 1, λ₁ = 2 simple; ker(V − 2I) = span e₁;
    # Q = I, K = diag(1, −1): ⟨Qe₁, Ke₁⟩ = 1 > 0 -> good triple (4.2); QᵀK = diag(1, −1) is not PD
    c = classify([[1, 0], [0, 1]], [[1, 0], [0, -1]], [[2, 1], [0, 1]])
    assert c.regimes() == ["4.2"]
    assert c.top.exact == 2 and c.qk.exact == 1 and not c.top_certified
    assert c.definiteness.symmetric and not c.definiteness.sym_pd
    assert c.paranormal.holds and c.paranormal.dims == (1, 1)


def test_regime_paranormal():
    # V = diag(2, 2, 1): λ = 2 of multiplicity 2 with two eigenvectors (semisimple), |1| < 2;
    # QᵀK = I ≻ 0 -> 5.2 only (λ not simple, V ≠ I)
    c = classify(np.eye(3, dtype=int).tolist(), np.eye(3, dtype=int).tolist(), [[2, 0, 0], [0, 2, 0], [0, 0, 1]])
    assert c.regimes() == ["5.2"]
    assert c.paranormal.dims == (2, 1) and c.paranormal.lam.exact == 2 and c.top is None


def test_regime_minus_identity():
    # V = −I and QᵀK = I -> 8.5; V has no positive eigenvalue: not paranormal, no good triple
    c = classify([[1, 0], [0, 1]], [[1, 0], [0, 1]], [[-1, 0], [0, -1]])
    assert c.regimes() == ["8.5"]
    assert c.V_minus_identity and c.qk_identity and not c.paranormal.holds and c.good_triple is False


def test_no_theorem_applies():
    # V a quarter turn: eigenvalues ±i, no real eigenvalue; QᵀK = [[0, 1], [−1, 0]] antisymmetric:
    # not symmetric and its symmetric part is 0 (not PD); V ≠ ±I
    c = classify([[1, 0], [0, 1]], [[0, 1], [-1, 0]], [[0, -1], [1, 0]])
    assert c.regimes() == []
    assert not c.definiteness.symmetric and not c.definiteness.sym_pd
    assert [e.real for e in c.spectrum.eigs] == [False, False] and c.good_triple is False


def test_symmetric_part_only_is_reported_apart():
    # QᵀK = [[1, 1], [−1, 1]]: symmetric part I ≻ 0, but QᵀK is not symmetric, so QᵀK ≻ 0 fails and
    # Theorem 3.1 does not apply although V = I
    c = classify([[1, 0], [0, 1]], [[1, 1], [-1, 1]], [[1, 0], [0, 1]])
    assert (c.definiteness.symmetric, c.definiteness.sym_pd, c.definiteness.pd) == (False, True, False)
    assert c.regimes() == []


def test_jordan_block_is_not_paranormal():
    # V = [[2, 1, 0], [0, 2, 0], [0, 0, 1]]: λ = 2 has multiplicity 2 but one eigenvector
    c = classify(np.eye(3, dtype=int).tolist(), np.eye(3, dtype=int).tolist(), [[2, 1, 0], [0, 2, 0], [0, 0, 1]])
    assert not c.paranormal.holds and c.paranormal.witness["rows"] and c.regimes() == []


def test_irrational_top_eigenvalue_value_against_sympy():
    # V = [[1, 1], [1, 0]]: λ₁ = (1 + √5)/2, φ₁ ∝ (λ₁, 1); with Q = I, K = diag(1, 2)
    # ⟨Qφ₁, Kφ₁⟩/|φ₁|² = (λ₁² + 2)/(λ₁² + 1)
    from qkverify.exact.algebraic import arb_to_interval

    c = classify([[1, 0], [0, 1]], [[1, 0], [0, 2]], [[1, 1], [1, 0]])
    lam = (1 + sp.sqrt(5)) / 2
    q = lambda x: sp.Rational(int(x.p), int(x.q))  # noqa: E731
    assert q(c.top.lo) < lam < q(c.top.hi)
    lo, hi = arb_to_interval(c.qk.ball)
    assert q(lo) <= (lam**2 + 2) / (lam**2 + 1) <= q(hi) and q(hi) - q(lo) < sp.Rational(1, 10**30)
    # QᵀK = diag(1, 2) ≻ 0 and V is paranormal (λ₁ simple, |λ₂| = λ₁ − 1 < λ₁): 5.2 applies as well
    assert c.good_triple is True and c.regimes() == ["4.2", "5.2"]


def test_complex_eigenvalues_are_certified():
    # V = [[1, −1, 0], [1, 1, 0], [0, 0, 3]]: eigenvalues 1 ± i (modulus √2) and 3: λ₁ = 3 > √2,
    # φ₁ = e₃; K = diag(1, 1, −1): ⟨Qe₃, Ke₃⟩ = −1 -> not a good triple, decided through boxes
    c = classify(np.eye(3, dtype=int).tolist(), [[1, 0, 0], [0, 1, 0], [0, 0, -1]], [[1, -1, 0], [1, 1, 0], [0, 0, 3]])
    assert c.top.exact == 3 and c.qk.exact == -1 and c.top_certified and c.good_triple is False
    box = next(e.box for e in c.spectrum.eigs if not e.real)
    assert box.re - box.r < 1 < box.re + box.r and box.im - box.r < 1 < box.im + box.r


# ---------------------------------------------------------------- certificates


def test_certificates_valid_with_values_by_hand():
    runs = certs([[1, 0], [0, 1]], [[1, 0], [0, -1]], [[2, 1], [0, 1]])
    gt = runs["clusters_good_triple"]
    assert rec(gt, "clusters.top_eigenvalue").result.value == {"exact": "2"}
    assert rec(gt, "clusters.qk_phi1").result.value == {"exact": "1"}
    assert rec(gt, "clusters.good_triple").result.value == {"bool": True}
    assert rec(runs["clusters_qk_positive_definite"], "clusters.qk_positive_definite").result.value == {
        "list": [{"bool": True}, {"bool": False}, {"bool": False}]}
    assert rec(runs["clusters_paranormal"], "clusters.paranormal_eigenvalue").result.value == {
        "list": [{"exact": "2"}, {"ints": [1, 1]}]}
    for st, run in runs.items():
        out = kernel(run.certificate())
        assert out.status == "valid", (st, out.check, out.reason)


@pytest.mark.parametrize("name", ["identity", "complex", "golden", "jordan", "none"])
def test_kernel_accepts_every_regime(name):
    triples = {
        "identity": ([[1, 0], [0, 1]], [[2, 0], [0, 1]], [[1, 0], [0, 1]]),
        "complex": (np.eye(3, dtype=int).tolist(), np.eye(3, dtype=int).tolist(), [[1, -1, 0], [1, 1, 0], [0, 0, 3]]),
        "golden": ([[1, 0], [0, 1]], [[1, 0], [0, 2]], [[1, 1], [1, 0]]),
        "jordan": (np.eye(3, dtype=int).tolist(), np.eye(3, dtype=int).tolist(), [[2, 1, 0], [0, 2, 0], [0, 0, 1]]),
        "none": ([[1, 0], [0, 1]], [[0, 1], [-1, 0]], [[0, -1], [1, 0]]),
    }
    for st, run in certs(*triples[name]).items():
        out = kernel(run.certificate())
        assert out.status == "valid", (name, st, out.check, out.reason)


def _mutations():
    def first(c, kind):
        return next(w for w in c["witnesses"] if w["kind"] == kind)

    def move_box(c):
        f = first(c, "croots")["factors"][0]
        f["complex"][0][0] = "2"       # the box no longer holds 1 + i

    def widen_real(c):
        f = first(c, "croots")["factors"][0]
        f["real"][0] = ["4", "5"]      # the real eigenvalue 3 is not there: no sign change

    def wrong_vector(c):
        first(c, "eigvec")["vector"] = ["1", "1", "1"]

    def definite_lie(c):
        w = first(c, "definite")
        w.pop("x", None)
        w.update(perm=[0, 1, 2], L=[["1", "0", "0"], ["0", "1", "0"], ["0", "0", "1"]], D=["1", "1", "1"])

    def value_lie(c):
        d = next(d for d in c["declarations"] if d["check"] == "clusters.qk_phi1")
        d["value"] = {"exact": "1"}    # it is −1

    def good_lie(c):
        d = next(d for d in c["declarations"] if d["check"] == "clusters.good_triple")
        d["value"] = {"bool": True}

    return [("clusters_good_triple", move_box, "croots"), ("clusters_good_triple", widen_real, "croots"),
            ("clusters_good_triple", wrong_vector, "eigvec"), ("clusters_qk_positive_definite", definite_lie, "definite"),
            ("clusters_good_triple", value_lie, "declarations"), ("clusters_good_triple", good_lie, "declarations")]


@pytest.mark.parametrize("st,mutate,check", _mutations(), ids=[m[1].__name__ for m in _mutations()])
def test_kernel_rejects_mutations(st, mutate, check):
    # V with eigenvalues 1 ± i and 3; K = diag(1, 1, −1): ⟨Qφ₁, Kφ₁⟩ = −1; QᵀK indefinite (x = e₃ shows it)
    run = certs(np.eye(3, dtype=int).tolist(), [[1, 0, 0], [0, 1, 0], [0, 0, -1]],
                [[1, -1, 0], [1, 1, 0], [0, 0, 3]])[st]
    cert = json.loads(json.dumps(run.certificate()))
    assert kernel(cert).status == "valid"
    mutate(cert)
    out = kernel(cert)
    assert out.status == "invalid", (out.status, out.check, out.reason)
    assert check in out.check or check in out.reason, (out.check, out.reason)


def test_shipped_certificates_are_valid():
    base = Path(__file__).resolve().parents[1] / "certificates"
    files = sorted(p for st in STATEMENTS for p in (base / st).glob("*.json"))
    assert len(files) == 4 * 9
    from qkverify.kernel import verify_file

    assert {verify_file(f).status for f in files} == {"valid"}


# ---------------------------------------------------------------- lean_map check units


def test_check_units_in_the_lean_map():
    from qkverify.claims.metadata import declarations, load

    ents = load()
    units = {u.check: u for u in declarations(ents, units=True)}
    assert len(units) == 14 and len(declarations(ents)) == 177
    assert units["clusters.good_triple"].statement == "clusters_good_triple"
    assert ents["clusters_good_triple"].label == "Definition 4.1"
    assert {ents[u.statement].label for u in units.values() if u.kind == "theorem"} == {
        "Theorem 2.1", "Theorem 3.1", "Theorem 4.2", "Theorem 5.2", "Theorem 8.5"}
    assert [(h.binder, h.predicate) for h in units["clusters.qk_phi1"].hypotheses] == [
        ("hV", "top_eigenvalue_simple_positive")]


def test_check_unit_with_a_lean_name_or_bad_id_is_refused(tmp_path):
    from qkverify.claims.metadata import MAP_DIR as DEFAULT_MAP_DIR
    from qkverify.claims.metadata import load as load_lean_map
    from qkverify.errors import QKInputError

    text = (DEFAULT_MAP_DIR / "clusters_paranormal.toml").read_text(encoding="utf-8")
    for old, new, msg in (('check = "clusters.paranormal"', 'check = "Clusters.Paranormal"', "must look like"),
                          ('lean_file = ""', 'lean_file = "x.lean"', "no Lean name or file")):
        f = tmp_path / "clusters_paranormal.toml"
        f.write_text(text.replace(old, new, 1), encoding="utf-8")
        with pytest.raises(QKInputError, match=msg):
            load_lean_map(f)


# ---------------------------------------------------------------- the value circuit of every family


N_, D_ = 8, 2


def _save(d: Path, tensors: dict, config: dict) -> Path:
    from safetensors.numpy import save_file

    d.mkdir(parents=True, exist_ok=True)
    save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()}, str(d / "model.safetensors"))
    (d / "config.json").write_text(json.dumps(config))
    return d


def _rand(rng, *shape):
    return (rng.integers(-8, 9, shape) / 8).astype(np.float32)


def _family(name, tmp_path):
    """(checkpoint, H, KV, expected (W_V, W_O) of head 1) with the slices written out by hand."""
    rng = np.random.default_rng(7)
    N, d = N_, D_
    if name == "bert":
        H, KV = 4, 4
        t = {f"encoder.layer.0.attention.self.{k}.weight": _rand(rng, N, N) for k in ("query", "key", "value")}
        t["encoder.layer.0.attention.output.dense.weight"] = _rand(rng, N, N)
        cfg = {"model_type": "bert", "num_attention_heads": H, "hidden_size": N}
        v, o = t["encoder.layer.0.attention.self.value.weight"][2:4], t["encoder.layer.0.attention.output.dense.weight"][:, 2:4]
    elif name == "llama":
        H, KV = 4, 2  # head 1 uses key/value head 0
        t = {"model.layers.0.self_attn.q_proj.weight": _rand(rng, H * d, N),
             "model.layers.0.self_attn.k_proj.weight": _rand(rng, KV * d, N),
             "model.layers.0.self_attn.v_proj.weight": _rand(rng, KV * d, N),
             "model.layers.0.self_attn.o_proj.weight": _rand(rng, N, H * d)}
        cfg = {"model_type": "llama", "num_attention_heads": H, "num_key_value_heads": KV, "hidden_size": N}
        v, o = t["model.layers.0.self_attn.v_proj.weight"][0:2], t["model.layers.0.self_attn.o_proj.weight"][:, 2:4]
    elif name == "gpt2":
        H, KV = 4, 4  # Conv1D [in, out]: V block = columns 2N + 2:2N + 4, transposed; c_proj rows 2:4, transposed
        t = {"h.0.attn.c_attn.weight": _rand(rng, N, 3 * N), "h.0.attn.c_proj.weight": _rand(rng, N, N)}
        cfg = {"model_type": "gpt2", "n_head": H, "n_embd": N}
        v, o = t["h.0.attn.c_attn.weight"][:, 2 * N + 2:2 * N + 4].T, t["h.0.attn.c_proj.weight"][2:4].T
    elif name == "gpt_neox":
        H, KV = 4, 4  # interleaved [q_h; k_h; v_h] per head: v of head 1 = rows 3·2 + 4 : 3·2 + 6
        t = {"layers.0.attention.query_key_value.weight": _rand(rng, 3 * N, N),
             "layers.0.attention.dense.weight": _rand(rng, N, N)}
        cfg = {"model_type": "gpt_neox", "hidden_size": N, "num_attention_heads": H, "rotary_pct": 0.5}
        v, o = t["layers.0.attention.query_key_value.weight"][10:12], t["layers.0.attention.dense.weight"][:, 2:4]
    else:  # mpt: blocks Q (rows 0:8), K (8:16), V (16:24)
        H, KV = 4, 4
        t = {"transformer.blocks.0.attn.Wqkv.weight": _rand(rng, 3 * N, N),
             "transformer.blocks.0.attn.out_proj.weight": _rand(rng, N, N)}
        cfg = {"model_type": "mpt", "d_model": N, "n_heads": H, "attn_config": {"alibi": True, "clip_qkv": None}}
        v, o = t["transformer.blocks.0.attn.Wqkv.weight"][18:20], t["transformer.blocks.0.attn.out_proj.weight"][:, 2:4]
    return _save(tmp_path / name, t, cfg), v, o


@pytest.mark.parametrize("family", ["bert", "llama", "gpt2", "gpt_neox", "mpt"])
def test_value_slices_of_every_family_and_kernel(family, tmp_path):
    from qkverify.heads.regimes import classify_head
    from qkverify.models.values import open_value_model

    ck, v, o = _family(family, tmp_path)
    vm = open_value_model(str(ck))
    h1 = [h for h in vm.heads() if h.head == 1][0]
    assert np.array_equal(h1.W_V, v.astype(np.float32)) and np.array_equal(h1.W_O, o.astype(np.float32))
    row, cert = classify_head(h1)
    out = verify_document(json.loads(json.dumps(cert)), base_dir=ck)
    assert out.status == "valid", (out.check, out.reason)


# ---------------------------------------------------------------- dynamics (empirical)


def test_theorem_2_1_on_1000_initial_conditions():
    from qkverify.math.dynamics import low_rank_1d

    r = low_rank_1d(3, 1000, seed=11)
    assert r.samples == 1000 and r.passed == 1000 and r.exceptional_max <= 1
    assert set(r.ranks) <= {1, 2, 3} and sum(r.ranks.values()) == 1000
    # by hand: when the tokens end up with one sign, every row attends to the same extreme token
    # (all rows e_n, or all e_1): rank 1; with both signs the negative tokens' rows are e_1 and the
    # positive ones' e_n: rank 2.  The SVD rank of P(T) and the signs of the tokens are read apart.
    assert r.ranks.get(1, 0) == r.same_sign_final and r.ranks.get(2, 0) == 1000 - r.same_sign_final
    assert 0 < r.same_sign_final < 1000


def test_example_d2_rank_is_not_the_cluster_count():
    from qkverify.math.dynamics import example_d2

    r = example_d2(0.2)
    P = np.array(r["P_final"])
    assert P[0, 0] > 0.999 and P[1, 1] > 0.999 and r["rank_P_final"] == 2
    assert r["distance_final"] < 1e-3 and r["clusters_at_tol_1e-2"] == 1


def test_euler_in_z_is_the_rescaled_euler_in_x():
    # docs/MATH.md: with R = I + ΔtV, the discrete rescaled tokens are z^k = R^{-k} x^k
    from qkverify.math.dynamics import simulate

    rng = np.random.default_rng(3)
    Q, K, V, x0 = rng.standard_normal((2, 2)), rng.standard_normal((2, 2)), rng.standard_normal((2, 2)), \
        rng.standard_normal((4, 2))
    dt, T = 0.05, 2.0
    tx = simulate(x0, Q, K, V, dt, T, "euler", "x")
    tz = simulate(x0, Q, K, V, dt, T, "euler", "z")
    Rk = np.linalg.matrix_power(np.eye(2) + dt * V, tx.meta["steps"])
    assert np.allclose(tz.tokens[-1], tx.tokens[-1] @ np.linalg.inv(Rk).T, rtol=1e-9, atol=1e-12)
    assert np.allclose(tz.P[-1], tx.P[-1], atol=1e-9)


# ---------------------------------------------------------------- Ginibre


def test_ginibre_d1_counts_positive_entries():
    # d = 1: the only eigenvalue is the entry itself: the condition holds iff it is positive
    from qkverify.math.ginibre import experiment

    r = experiment(1, 300, seed=4)
    pos = sum(int(np.rint(np.random.default_rng([4, i]).standard_normal((1, 1)) * 2.0**20)[0, 0] > 0)
              for i in range(300))
    assert r.holds == pos and r.float_disagreements == 0


def test_ginibre_decision_on_known_spectra():
    from flint import fmpz_mat

    from qkverify.math.ginibre import top_condition

    assert top_condition(fmpz_mat([[3, 0], [0, -2]])) is True      # 3 > |−2|
    assert top_condition(fmpz_mat([[2, 0], [0, -3]])) is False     # |−3| > 2
    assert top_condition(fmpz_mat([[2, 0], [0, -2]])) is False     # a tie: not strictly larger
    assert top_condition(fmpz_mat([[1, -2], [2, 1]])) is False     # 1 ± 2i only


# ---------------------------------------------------------------- CLI


def run_cli(*args, cwd=None):
    r = subprocess.run([sys.executable, "-m", "qkverify", *args], capture_output=True, text=True, cwd=cwd)
    return r.returncode, r.stdout, r.stderr


def test_cli_regimes_triple_json(tmp_path):
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"Q": [[1, 0], [0, 1]], "K": [["1", 0], [0, -1]], "V": [[2, 1], [0, 1]]}))
    code, out, err = run_cli("regimes", str(f), "--json", "--out", str(tmp_path / "c"))
    assert code == 0, err
    doc = json.loads(out)
    assert [r["theorem"] for r in doc["regimes"]] == ["Theorem 4.2"]
    assert doc["good_triple"] == {"value": True, "evidence": "exact"}
    assert doc["top_eigenvalue"]["value"] == {"exact": "2"} and doc["top_eigenvalue"]["evidence"] == "exact"
    assert doc["qk_phi1"] == {"value": {"exact": "1"}, "evidence": "exact"}
    assert len(list((tmp_path / "c").glob("*.json"))) == 4
    code, out, err = run_cli("verify", str(tmp_path / "c"))
    assert code == 0, out + err


def test_cli_regimes_bad_input_one_line(tmp_path):
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"Q": [[1, 0]], "K": [[1, 0, 0]], "V": [[1, 0], [0, 1]]}))
    code, out, err = run_cli("regimes", str(f))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_cli_simulate_reports_step_and_horizon(tmp_path):
    code, out, err = run_cli("simulate", "--n", "4", "--dt", "0.02", "--horizon", "3", "--out", "o", cwd=tmp_path)
    assert code == 0, err
    assert "Δt = 0.02, T = 3 (150 steps)" in out and (tmp_path / "o" / "simulate.png").stat().st_size > 1000
    assert json.loads((tmp_path / "o" / "simulate.json").read_text())["dt"] == 0.02
    assert {p.name for p in tmp_path.iterdir()} == {"o"}  # writes only under --out


@pytest.mark.slow
def test_cli_regimes_default_model_one_layer(tmp_path):
    code, out, err = run_cli("regimes", "--layers", "0", "--verify", "--out", str(tmp_path / "m"))
    assert code == 0, err
    assert "kernel: valid 12" in out
    rows = (tmp_path / "m" / "regimes.csv").read_text().splitlines()
    assert len(rows) == 13 and rows[0].startswith("model,layer,head")


@pytest.mark.slow
def test_gguf_head_needs_only_row_reads(tmp_path, monkeypatch):
    """A SmolLM2 head's certificate asks the kernel only to read tensor slices: with a stand-in
    for kernel/gguf.py (issue 10) the kernel accepts it."""
    import types

    import gguf as gg

    from qkverify.heads.regimes import classify_head
    from qkverify.models.values import exact_gguf_matrix, open_value_model

    vm = open_value_model("smollm2")
    vh = next(vm.heads([0]))
    row, cert = classify_head(vh)

    reader = gg.GGUFReader(vm.path)
    tensors = {x.name: x for x in reader.tensors}

    def read_slice(path, t, max_entries=None):
        A = exact_gguf_matrix(tensors[t["name"]])
        a, b = t.get("rows") or t.get("cols")
        S = A[a:b] if "rows" in t else A[:, a:b]
        X = fmpq_mat([[fmpq(*float(x).as_integer_ratio()) for x in r] for r in S.tolist()])
        return X.transpose() if t.get("transpose") else X

    fake = types.ModuleType("qkverify.kernel.gguf")
    fake.read_slice = read_slice
    monkeypatch.setitem(sys.modules, "qkverify.kernel.gguf", fake)
    import qkverify.kernel as K

    monkeypatch.setattr(K, "gguf", fake, raising=False)
    out = verify_document(json.loads(json.dumps(cert)), weights_dirs=[str(Path(vm.path).parent)])
    assert out.status == "valid", (out.check, out.reason)
