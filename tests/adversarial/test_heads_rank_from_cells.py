"""The rank witness ``{"kind": "rank", "of": "M", "rank": 2n, "from": "cells"}`` of a
weights head (issue 20): rank M = 2n read from the cells witness the kernel checks anyway
(charpoly(J·Z Zᵀ) has a nonzero constant term, so Z Zᵀ is invertible).  A hostile prover
writes it on a rank-deficient head; the kernel must refuse it.

Heads (n = 1, N = 3, values by hand):
* balanced: W_Q = e₀ᵀ, W_K = e₁ᵀ -- Z = [e₁; e₀], Z Zᵀ = I, X = J = [[0, 1], [1, 0]],
  charpoly x² − 1 (constant −1 ≠ 0): rank M = 2;
* tied: W_Q = W_K = e₀ᵀ -- Z Zᵀ = [[1, 1], [1, 1]] = X, charpoly x² − 2x (constant 0),
  eigenvalues 2 and 0: rank M = 1 < 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import kernel_fixtures as K
from qkverify.kernel import verify_document

FROM_CELLS = {"kind": "rank", "of": "M", "rank": 2, "from": "cells"}


def check(doc, d: Path):
    return verify_document(doc, str(d / "c.json"), d, [])


def _with_rank(cert: dict, w: dict) -> dict:
    out = json.loads(json.dumps(cert))
    out["witnesses"] = [x for x in out["witnesses"] if x["kind"] != "rank"] + [w]
    return out


def test_rank_from_cells_on_a_full_rank_head_is_valid(tmp_path):
    cert = K.weights_certificate(tmp_path)
    assert check(cert, tmp_path).status == "valid"
    out = check(_with_rank(cert, FROM_CELLS), tmp_path)
    assert out.status == "valid", out.reason


def test_rank_from_cells_on_a_rank_deficient_head_is_invalid(tmp_path):
    """The tied head with its true cells (zero = 1, one cell [2, 3] holding ν = 2) and a forged
    "rank 2 from cells": the kernel reads charpoly's constant term 0 and refuses."""
    cert = K.weights_certificate(tmp_path)
    sha = K.write_weights(tmp_path / "model.safetensors", wq=[[1.0, 0.0, 0.0]], wk=[[1.0, 0.0, 0.0]])
    for t in cert["input"]["tensors"]:
        t["sha256"] = sha
    cells = {"kind": "cells", "of": "JZZt", "scale_exponent": 0, "grid_exponent": 0, "zero": 1,
             "cells": [[2, 0, 1]]}
    forged = _with_rank(cert, FROM_CELLS)
    forged["witnesses"] = [cells if w["kind"] == "cells" else w for w in forged["witnesses"]]
    out = check(forged, tmp_path)
    assert out.status == "invalid" and "constant term" in out.reason, out
    # and with cells forged to zero = 0 (x² − 2x has x¹ exactly, not x⁰): the cells witness itself fails
    forged["witnesses"] = [dict(w, zero=0, cells=[[0, 0, 1], [2, 0, 1]]) if w["kind"] == "cells" else w
                           for w in forged["witnesses"]]
    assert check(forged, tmp_path).status == "invalid"


def test_rank_from_cells_needs_the_cells_witness_and_states_2n(tmp_path):
    cert = K.weights_certificate(tmp_path)
    no_cells = _with_rank(cert, FROM_CELLS)
    no_cells["witnesses"] = [w for w in no_cells["witnesses"] if w["kind"] != "cells"]
    assert check(no_cells, tmp_path).status == "invalid"
    for r in (1, 3):                                  # only 2n = 2 can come from the cells
        assert check(_with_rank(cert, dict(FROM_CELLS, rank=r)), tmp_path).status == "invalid"
    assert check(_with_rank(cert, dict(FROM_CELLS, of="S")), tmp_path).status == "invalid"   # schema


def test_rank_from_cells_is_refused_on_a_matrix_head():
    """A matrix head has no cells witness: the form is refused there."""
    from flint import fmpq_mat

    from qkverify.claims.evaluate import evaluate
    from qkverify.io.inputs import HeadInput

    W_Q, W_K = fmpq_mat([[1, 0, 0]]), fmpq_mat([[0, 1, 0]])
    cert = json.loads(json.dumps(evaluate("heads_have_balanced_attention", HeadInput(W_Q, W_K)).certificate()))
    assert verify_document(cert).status == "valid"
    forged = _with_rank(cert, FROM_CELLS)
    assert verify_document(forged).status == "invalid"
