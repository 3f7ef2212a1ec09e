"""Issue 18, resource attacks: small certificates that made the old kernel use more than 4 GiB or
120 s.  Every loop and allocation of the kernel is bounded by the certificate's size and the caps
of kernel/limits.py; past a cap the answer is ``undecided`` naming the cap.  The verdicts here
do not depend on the machine's speed: each case either stops at a named cap before the work, or
does work linear in the certificate (checked in a child process under a 2 GiB address-space
limit, never by a clock)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import forge as F


def _undecided_by(doc, cap: str, base=None):
    out = F.verify(doc, base)
    assert out.status == "undecided" and cap in out.reason, out
    return out


def test_a_theta_point_of_size_4096_is_not_multiplied_out(tmp_path):
    """⊇ of profiles_rank_one_eq_Theta at p = (0, 0, 1, 0), N = 4096, from x = y = e₀: π(x yᵀ) is
    taken from x·y, |x|², |y|² (O(N)); the old kernel built the 4096 × 4096 product as Python
    objects.  Run in a child process under a 2 GiB address-space limit."""
    x = ["1"] + ["0"] * 4095
    doc = F.certificate("profile_rank_one", {"kind": "theta_point", "p": ["0", "0", "1", "0"], "N": 4096},
                        [{"kind": "factor", "of": "theta", "x": x, "y": x}],
                        [F.record(F.MT + "profiles_rank_one_eq_Theta", "holds", "exact", {"hN": True})])
    f = tmp_path / "theta.json"
    f.write_text(json.dumps(doc))
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); "
            "from qkverify.kernel import verify_file; o = verify_file(sys.argv[1]); print(o.status, o.reason)")
    r = subprocess.run([sys.executable, "-c", code, str(f)], capture_output=True, text=True,
                       env={"PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert r.returncode == 0 and r.stdout.startswith("valid"), r.stdout + r.stderr


def test_a_series_witness_is_refused():
    # Lean's tsum of the moment series is decided exactly (no series witness): a certificate that
    # still offers one, say of a million terms, is not a certificate of this format
    inp = {"kind": "vector", "x": ["-1/2", "1/2"], "normalize": False}
    doc = F.certificate("statO_eq_tsum_odd_moments", inp, [{"kind": "series", "of": "odd", "terms": 1000000, "digits": 1}],
                        [F.record(F.A + "statO_eq_tsum_odd_moments", "holds", "exact", {"h": True})])
    assert F.verify(doc).status == "invalid"


def test_a_root_of_a_polynomial_of_huge_degree():
    poly = ["-2"] + ["0"] * 20000 + ["1"]  # x^20001 − 2
    doc = F.certificate("symPart", {"kind": "matrix", "L": [["1"]]}, [],
                        [F.record(F.A + "frobSq", "computed", value={"root": {"poly": poly, "lo": "1", "hi": "2"}})])
    _undecided_by(doc, "MAX_DEGREE")


def test_a_scale_of_40000_digits():
    w = {"kind": "spectrum", "of": "S", "scale": "1" + "0" * 39999,
         "factors": [{"poly": ["-1", "1"], "multiplicity": 1, "roots": [["1", "1"]]}]}
    doc = F.certificate("profile", {"kind": "matrix", "L": [["1"]]}, [w],
                        [F.record(F.A + "sortDesc", "computed", value={"list": [{"exact": "1"}]})])
    _undecided_by(doc, "MAX_WITNESS_BITS")


def test_an_expression_raised_to_the_64th_power_three_times():
    e = "((((x0_0+x1_0+1)**64)**64)**64)"
    inp = {"kind": "attention_function", "k": 2, "N": 1, "scores": [e, "x1_0"],
           "potential": {"log_sum_exp": "1"}, "weights": {"softmax": {"scores": ["x0_0", "x1_0"], "tau": "1"}}}
    doc = F.certificate("IsAttentionFunction", inp, [],
                        [F.record(F.MT + "IsPolyFun", "computed", value={"list": [{"bool": True}, {"bool": True}]})])
    _undecided_by(doc, "MAX_EXPR_DEGREE")


def test_a_law_of_size_512_sampled():
    law = {"gaussian": {"mean": "0", "variance": "1"}}
    inp = {"kind": "law", "model": "qk", "N": 512, "n": 512, "W_K": law, "W_Q": law,
           "monte_carlo": {"sampler": "mt19937-boxmuller/2", "samples": 16, "delta": "1/1000"}}
    w = {"kind": "monte_carlo", "of": "energy", "sum_S": "0", "sum_T": "0", "zero_samples": 0, "halfwidth": "0",
         "interval_S": ["0", "1"], "interval_T": ["0", "1"]}
    hyps = {k: True for k in ("hn", "hnN", "hvK", "hvQ", "hmeas", "hindep", "hlawK", "hlawQ")}
    doc = F.certificate("expected_symmetric_energy_low_rank_qk", inp, [w], [F.record(
        F.A + "expected_symmetric_energy_low_rank_qk", "consistent", "empirical", hyps,
        sample={"seed": 0, "seed_derivation": "sha256-canonical-input", "confidence": "999/1000",
                "test": "hoeffding-mean", "statistic": {"samples": 16, "interval": ["0", "1"], "target": "513/1024"}})])
    _undecided_by(doc, "MAX_MC_")


def test_a_gamma_shape_of_a_billion():
    """A gamma shape the sampler does not honour (10⁹ exponentials per draw) is refused by the schema;
    a lobes study past MAX_LOBE_UNIFORMS uniforms is undecided naming the cap."""
    base = {"kind": "lobes", "u": "1", "v": "1", "paths": 16, "delta": "1/1000"}
    w = {"kind": "trend", "of": "delta", "decreasing": 16, "paths": [[128, "down"]] * 16}
    hyps = {k: True for k in ("hu", "hv", "hX", "hX'", "hindep", "hXlaw", "hX'law", "hγpos", "hM", "hMpos")}
    sample = {"seed": 0, "seed_derivation": "sha256-canonical-input", "confidence": "999/1000", "test": "sign-trend",
              "statistic": {"paths": 16, "decreasing": 16, "reject_at_most": 3, "sizes": [2, 4]}}
    for law, sizes, want in (({"family": "gamma", "shape": 10 ** 9, "scale": "1"}, [2, 4], "invalid"),
                             ({"family": "exponential", "rate": "1"}, [2, 1_000_000], "undecided")):
        doc = F.certificate("proportional_lobes", base | {"law": law, "sizes": sizes}, [w], [F.record(
            F.A + "proportional_lobes", "consistent", "empirical", hyps, sample=sample)])
        if want == "invalid":
            out = F.verify(doc)
            assert out.status == "invalid" and out.check == "schema", out
        else:
            _undecided_by(doc, "MAX_LOBE_UNIFORMS")


def test_cells_on_a_grid_of_a_billion_bits(tmp_path):
    inp = F.weights_input(tmp_path, [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]])
    w = {"kind": "cells", "of": "JZZt", "scale_exponent": 0, "grid_exponent": 1000000000, "zero": 0,
         "cells": [[-1, 1000000000, 1], [1, 1000000000, 1]]}
    # profileA (1/2, from the norms) does not read the cells: the unread witness still leaves it undecided
    doc = F.certificate("profile", inp, [w], [F.record(F.A + "profileA", "computed", value={"exact": "1/2"})])
    _undecided_by(doc, "MAX_WITNESS_BITS", tmp_path)


def test_an_inline_matrix_past_the_cap():
    L = [["0"] * 300 for _ in range(300)]
    doc = F.certificate("symPart", {"kind": "matrix", "L": L}, [],
                        [F.record(F.A + "frobSq", "computed", value={"exact": "0"})])
    _undecided_by(doc, "MAX_DIM")


def test_a_weights_head_past_the_cap(tmp_path):
    inp = F.weights_input(tmp_path, [[1.0, 0.0]], [[0.0, 1.0]])
    inp["n"], inp["N"] = 4096, 4096
    for t in inp["tensors"]:
        t["rows"] = [0, 4096]
    doc = F.certificate("profile", inp, [], [F.record(F.A + "profileA", "computed", value={"exact": "0"})])
    _undecided_by(doc, "MAX_HEAD_", tmp_path)


def test_json_nested_past_the_cap(tmp_path):
    from qkverify.kernel import verify_file

    f = tmp_path / "deep.json"
    f.write_text('{"format": "qkverify-certificate/3", "display": ' + "[" * 5000 + "]" * 5000 + "}")
    out = verify_file(f)
    assert out.status in ("invalid", "unreadable"), out


@pytest.mark.parametrize("atoms", [16])
def test_an_enumeration_past_the_cap(atoms):
    law = {"atoms": [[str(i), f"1/{atoms}"] for i in range(atoms)]}
    inp = {"kind": "law", "model": "iid", "N": 3, "L": law}
    w = {"kind": "enumeration", "of": "energy", "method": "patterns", "patterns": atoms ** 9, "E_ratio_S": "1/2",
         "E_ratio_T": "1/2"}
    hyps = {k: True for k in ("hIndep", "hMeas", "hLaw", "hv", "hN")}
    doc = F.certificate("integral_frobSq_iid", inp, [w], [F.record(
        F.A + "integral_frobSq_symPart_div_frobSq_gaussian", "fails", "exact", hyps | {"hLaw": False},
        dropped=["hLaw"])])
    _undecided_by(doc, "ENUM_LIMIT")
