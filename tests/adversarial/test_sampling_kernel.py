"""The kernel against forged sampled certificates (#18.5, #23): seeds, levels, samplers' parameters,
conclusions of samples, trend witnesses, caps; and the Monte Carlo false reject (an exact floor)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from flint import arb, ctx, fmpq

from qkverify.claims.evaluate import evaluate
from qkverify.io.law_inputs import LawInput, LobesInput
from qkverify.kernel.rules import sampling as KS
from qkverify.kernel import verify_document

P5 = "expected_symmetric_energy_low_rank_qk"


def kernel(cert):
    return verify_document(json.loads(json.dumps(cert)))


@pytest.fixture(scope="module")
def mc_cert():
    inp = LawInput.from_document({"model": "qk", "N": 2, "n": 1, "law_K": "gaussian", "law_Q": "gaussian",
                                  "monte_carlo": {"samples": 300, "delta": "1/1000"}})
    c = json.loads(json.dumps(evaluate(P5, inp).certificate()))
    assert kernel(c).status == "valid" and c["verdict"] == "consistent"
    return c


@pytest.fixture(scope="module")
def lobes_cert():
    inp = LobesInput.from_document({"law": {"family": "pareto", "scale": "1", "shape": "4"}, "u": "1", "v": "1",
                                    "sizes": [16, 128], "paths": 16})
    c = json.loads(json.dumps(evaluate("accumulation", inp).certificate()))
    assert kernel(c).status == "valid" and c["verdict"] == "consistent"
    return c


def _mut(c, f):
    c = json.loads(json.dumps(c))
    f(c)
    return kernel(c)


@pytest.mark.parametrize("edit,where", [
    (lambda c: c["declarations"][0]["sample"].update(seed=c["declarations"][0]["sample"]["seed"] ^ 1), "declarations"),
    (lambda c: c["input"]["monte_carlo"].update(seed=7), "schema"),                      # a chosen seed
    (lambda c: c["input"]["monte_carlo"].update(delta="999999/1000000"), "schema"),      # δ close to 1
    (lambda c: c["input"]["monte_carlo"].update(delta="1/19"), "schema"),
    (lambda c: c["declarations"][0].update(conclusion="holds"), "declarations"),         # a sample never holds
    (lambda c: c["declarations"][0].update(conclusion="fails"), "declarations"),         # ... nor fails
    (lambda c: c["declarations"][0].update(conclusion="inconsistent"), "declarations"),
    (lambda c: c["declarations"][0].update(evidence="exact"), "declarations"),
    (lambda c: c["declarations"][0]["sample"]["statistic"].update(target="1/2"), "declarations"),
    (lambda c: c["declarations"][0]["sample"].update(confidence="99/100"), "declarations"),
    (lambda c: c["input"]["monte_carlo"].update(samples=301), "monte_carlo witness"),   # another sample
])
def test_forged_monte_carlo_certificates_are_invalid(mc_cert, edit, where):
    out = _mut(mc_cert, edit)
    assert out.status == "invalid" and out.check.startswith(where), (out.check, out.reason)


def _flip(c):
    w = c["witnesses"][0]
    k = next(i for i, (_, o) in enumerate(w["paths"]) if o == "down")
    w["paths"][k] = [w["paths"][k][0], "up"]
    w["decreasing"] -= 1


@pytest.mark.parametrize("edit,where", [
    (lambda c: c["declarations"][0].update(conclusion="fails"), "declarations"),      # the old attack: a sample "fails"
    (lambda c: c["declarations"][0].update(conclusion="inconsistent"), "declarations"),
    (lambda c: c["declarations"][0].update(conclusion="holds"), "declarations"),
    (lambda c: c["declarations"][0]["sample"]["statistic"].update(decreasing=0), "declarations"),
    (lambda c: c["declarations"][0]["sample"]["statistic"].update(reject_at_most=16), "declarations"),
    (_flip, "trend witness"),                                                         # a path's outcome edited
    (lambda c: c["witnesses"][0]["paths"].__setitem__(0, [2048, "overlap"]), "trend witness"),
    (lambda c: c["witnesses"][0].update(decreasing=c["witnesses"][0]["decreasing"] - 1), "trend witness"),
    (lambda c: c["input"].update(seed=4), "schema"),
    (lambda c: c["input"].update(paths=17), "trend witness"),                          # another sample, same witness
    (lambda c: c["input"]["law"].update(family="gamma", shape="5/2", scale="1"), "schema"),
    (lambda c: c["input"]["law"].update(family="gamma", shape=10 ** 9, scale="1"), "schema"),
    (lambda c: c["input"].update(delta="999999/1000000"), "schema"),
    (lambda c: c["declarations"][0]["hypotheses"].update(hindep=False), "declarations"),
])
def test_forged_lobes_certificates_are_invalid(lobes_cert, edit, where):
    out = _mut(lobes_cert, edit)
    assert out.status == "invalid" and out.check.startswith(where), (out.check, out.reason)


def test_a_searched_input_gives_inconsistent_never_fails_and_the_kernel_agrees():
    # the producer's search in test_sampling_params found this input against the trend: inconsistent,
    # which the kernel re-derives; relabelled "fails" it is invalid
    inp = LobesInput.from_document({"law": {"family": "pareto", "scale": "1", "shape": "4"}, "u": "1", "v": "1",
                                    "sizes": [16, 64], "paths": 8, "delta": "1/20"})
    c = json.loads(json.dumps(evaluate("accumulation", inp).certificate()))
    assert c["verdict"] == "inconsistent" and kernel(c).status == "valid"
    c["declarations"][0]["conclusion"] = c["verdict"] = "fails"
    assert kernel(c).status == "invalid"


def test_exact_routes_verify_and_forgeries_do_not():
    cases = [({"model": "iid", "N": 5, "law": "rademacher"}, "integral_frobSq_iid", ("hLaw",), "convolution"),
             ({"model": "qk", "N": 1, "n": 3, "law_K": "gaussian", "law_Q": "lazy"}, P5, ("hlawQ", "hnN"),
              "one_dimensional"),
             ({"model": "qk", "N": 2, "n": 1, "law_K": "gaussian:0", "law_Q": "gaussian"}, P5, ("hvK",), "zero"),
             ({"model": "qk", "N": 3, "n": 2, "law_K": "gaussian", "law_Q": "gaussian",
               "copies": [{"entry": ["W_Q", r, c], "of": ["W_K", r, c], "sign": 1} for r in range(2) for c in range(3)]},
              P5, ("hindep",), "symmetric")]
    for doc, st, drop, method in cases:
        c = json.loads(json.dumps(evaluate(st, LawInput.from_document(doc), drop=drop).certificate()))
        w = next(x for x in c["witnesses"] if x["kind"] == "enumeration")
        assert w["method"] == method and kernel(c).status == "valid", (method, kernel(c).reason)
        w["E_ratio_S"] = "1/3"
        assert kernel(c).status == "invalid"


def test_dependent_and_heavy_tailed_laws_verify():
    tie = [{"entry": ["W_Q", 0, j], "of": ["W_K", 0, j], "sign": 1} for j in range(2)]
    for doc, drop in (({"model": "qk", "N": 2, "n": 1, "law_K": "rademacher", "law_Q": "rademacher", "copies": tie},
                       ("hindep", "hlawK", "hlawQ")),
                      ({"model": "iid", "N": 2, "law": {"pareto": {"shape": "2", "symmetric": True}}}, ("hMemLp",))):
        st = P5 if doc["model"] == "qk" else "integral_frobSq_iid"
        c = json.loads(json.dumps(evaluate(st, LawInput.from_document(doc), drop=drop).certificate()))
        assert kernel(c).status == "valid"
        if "copies" in doc:   # W_Q = (k_1, k_1) instead of (k_0, k_1): another law of L, the stated values are wrong
            c["input"]["copies"][0]["of"] = ["W_K", 0, 1]
        else:                 # another law, other moments
            c["input"]["L"] = {"pareto": {"shape": "3", "scale": "1", "symmetric": True}}
        assert kernel(c).status == "invalid"


def test_hostile_sizes_are_bounded():
    # N = n = 512 with one law per matrix (a 77-byte input): moments in closed form, O(1)
    doc = {"model": "qk", "N": 512, "n": 512, "law_K": "gaussian", "law_Q": "gaussian"}
    assert len(json.dumps(doc, separators=(",", ":"))) <= 80
    run = evaluate("integral_frobSq_qk", LawInput.from_document(doc))
    assert run.verdict == "holds"
    assert kernel(run.certificate()).status == "valid"
    # its expectation of a ratio: past the Monte Carlo caps, undecided naming the cap, on both sides
    run = evaluate(P5, LawInput.from_document(doc))
    r = run.records[0]
    assert r.conclusion == "undecided" and "cap" in r.result.reason
    cert = json.loads(json.dumps(run.certificate()))
    assert kernel(cert).status == "valid"     # undecided as stated: true
    # a forged "consistent" with a Monte Carlo witness the kernel would have to re-draw past its caps
    cert["witnesses"].append({"kind": "monte_carlo", "of": "energy", "sum_S": "0", "sum_T": "0", "zero_samples": 0,
                              "halfwidth": "1", "interval_S": ["0", "1"], "interval_T": ["0", "1"]})
    d = cert["declarations"][0]
    d["conclusion"] = cert["verdict"] = "consistent"
    d["sample"] = {"seed": 0, "seed_derivation": "sha256-canonical-input", "confidence": "999999/1000000",
                   "test": "hoeffding-mean", "statistic": {"samples": 10000, "interval": ["0", "1"], "target": "513/1024"}}
    out = kernel(cert)
    assert out.status == "undecided" and "MAX_MC" in out.reason


@pytest.mark.parametrize("num,den,want", [(4074630942 * 10 ** 8 - 12, 10 ** 8, 4074630941),
                                          (-12620904597 * 10 ** 7 - 5, 10 ** 7, -12620904598)])
def test_kernel_floor_is_exact(num, den, want):
    # the Monte Carlo false reject of #18: a float proposes the wrong integer at every precision
    with ctx.workprec(128):
        assert KS.floor_ball(arb(fmpq(num, den))) == want


@pytest.mark.slow
def test_baselines_40000_samples_pass_and_verify(tmp_path):
    r = subprocess.run([sys.executable, "-m", "qkverify", "baselines", "--samples", "40000", "--out", str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    r = subprocess.run([sys.executable, "-m", "qkverify", "verify", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0 and "7 valid" in " ".join(r.stdout.split()), r.stdout[-2000:] + r.stderr
