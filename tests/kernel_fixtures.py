"""Certificates for the kernel tests: a format-2 *weights* certificate built by hand from a
tiny safetensors file (the shape of qkverify/heads/certificate.py's, on a 1 × 3 head small
enough to check by hand), and the format-2 certificates the producer writes for the audit suite."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FORMAT2 = "qkverify-certificate/3"

#: W_Q = e₀ᵀ, W_K = e₁ᵀ (n = 1, N = 3): M = [W_K; W_Q] has rank 2 = 2n, S = ½(e₀e₁ᵀ + e₁e₀ᵀ)
#: has eigenvalues ½, −½, 0 -- signature (1, 1, 1) = (n, n, N − 2n)
W_Q = [[1.0, 0.0, 0.0]]
W_K = [[0.0, 1.0, 0.0]]


def write_weights(path: Path, wq=W_Q, wk=W_K) -> str:
    """A safetensors file with tensors ``q.weight`` and ``k.weight`` ([out, in] = [n, N]); its SHA-256."""
    from safetensors.numpy import save_file

    save_file({"q.weight": np.array(wq, np.float32), "k.weight": np.array(wk, np.float32)}, str(path))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def weights_certificate(directory: Path, name: str = "model.safetensors") -> dict:
    """A valid format-2 certificate of Theorem 3 on the head of ``write_weights`` (written into
    ``directory``): the rank witness of M = Z (entries 0/1, scale exponent 0), and the cells
    witness of X = J·Z·Zᵀ = [[0, 1], [1, 0]] (eigenvalues ±1: cells [−1, 0] and [1, 2])."""
    from flint import fmpq_mat

    from qkverify.certificates import build
    from qkverify.claims.common import rank_witness

    sha = write_weights(directory / name)
    Z = fmpq_mat([[int(x) for x in W_K[0]], [int(x) for x in W_Q[0]]])
    # the current shape (qkverify/heads/certificate.py): each tensor names its file and SHA-256
    inp = {"kind": "weights", "n": 1, "N": 3,
           "tensors": [{"role": "W_Q", "name": "q.weight", "file": name, "sha256": sha, "rows": [0, 1]},
                       {"role": "W_K", "name": "k.weight", "file": name, "sha256": sha, "rows": [0, 1]}]}
    cells = {"kind": "cells", "of": "JZZt", "scale_exponent": 0, "grid_exponent": 0, "zero": 0,
             "cells": [[-1, 0, 1], [1, 0, 1]]}
    T, MT = "heads_have_balanced_attention", "Appendices.MainText."
    decls = [
        {"name": MT + "Nondegenerate", "check": "Nondegenerate", "hypotheses": {}, "conclusion": "computed",
         "evidence": "exact", "value": {"bool": True}},
        {"name": MT + "signature", "check": "signature", "hypotheses": {"hA": True}, "conclusion": "computed",
         "evidence": "exact", "value": {"ints": [1, 1, 1]}},
        {"name": MT + T, "check": T, "hypotheses": {"hnd": True}, "conclusion": "holds", "evidence": "exact"},
    ]
    return json.loads(json.dumps(build(T, inp, [cells, rank_witness(Z, "M")], decls, "holds", "exact",
                                        {"label": "Theorem 3", "model": "hand-made", "layer": 0, "head": 0})))


def shipped_format2() -> list[tuple[str, dict]]:
    """Every format-2 certificate under certificates/ (probes included), as (path, document)."""
    out = []
    for p in sorted((ROOT / "certificates").rglob("*.json")):
        try:
            d = json.loads(p.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if isinstance(d, dict) and d.get("format") == FORMAT2:
            out.append((str(p.relative_to(ROOT)), d))
    return out


def suite_format2() -> list[tuple[str, dict]]:
    """The producer's format-2 certificates on the audit suite (every statement with checks)."""
    from qkverify.audit.run import statements_with_checks
    from qkverify.audit.suite import cases2
    from qkverify.claims.evaluate import evaluate
    from qkverify.claims.registry import declaration_check_fn, registered_check_ids
    from qkverify.errors import QKInputError

    ids = registered_check_ids()
    out = []
    for st in statements_with_checks():
        kinds = {k for d in st.decls if d.check in ids for k in declaration_check_fn(d.check).kinds}
        for name, inp in cases2():
            if getattr(inp, "kind2", None) not in kinds:
                continue
            try:
                cert = evaluate(st.id, inp).certificate({"name": name})
            except QKInputError:
                continue
            out.append((f"<suite>/{st.id}/{name}", json.loads(json.dumps(cert))))
    return out


def mutate(doc: dict, path: tuple, value) -> dict:
    d = copy.deepcopy(doc)
    box = d
    for k in path[:-1]:
        box = box[k]
    box[path[-1]] = value
    return d
