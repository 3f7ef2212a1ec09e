"""Real RoPE heads as ``rope_weights`` inputs (Definition 3, Proposition 1 on real weights).

The input names the head's stored rows in the weights file, a coordinate subspace H of C on
which B_0 is nondegenerate (``cols``), the number k of distances, and two conventions:

* ``runtime`` -- what the model computes on its stored rows: for a GGUF file llama.cpp's rope
  mode for the architecture (``llama``: adjacent pairs of the stored rows, NORM; ``qwen2``,
  ``qwen3``, ``olmo2``: halves, NEOX), with ``rope.freq_base`` and ``rope.dimension_count``
  from the metadata (the kernel re-reads them); for safetensors the Hugging Face
  implementation named by config.json's model_type (``rotate_half`` for the Llama family,
  adjacent pairs for GPT-J), as :mod:`qkverify.models.layouts` records it;
* ``reading`` -- how qkverify's loader reads the head: its pairing, base and rotary dimension
  (:mod:`qkverify.models.positional`) on the rows as loaded (``llama_unpermuted`` when
  llama.cpp's row permutation was undone, else ``stored``).

``pairing`` overrides the reading's pairing (the other convention must fail the check)."""

from __future__ import annotations

import random
from pathlib import Path

from flint import fmpq_mat

from ..errors import QKInputError
from ..exact.rational import fmpq_str, parse_rational
from ..io.attention_inputs import KindInput, make_input
from ..io.tensors import exact
from . import load_model
from .gguf_model import permute_rope

#: llama.cpp's rope mode per GGUF architecture (the loader's KNOWN_ARCHS)
GGUF_RUNTIME = {"llama": "interleaved", "qwen2": "half_split", "qwen3": "half_split", "olmo2": "half_split"}
DEFAULT_K = 8


def choose_cols(W_Q, W_K, seed: int = 0, tries: int = 20) -> list[int]:
    """n columns c with W_Q[:, c] and W_K[:, c] both invertible (exact determinants): the first n,
    else seeded random choices.  Raises QKInputError when none is found."""
    n, N = W_Q.shape
    rng = random.Random(seed)
    cand = [list(range(n))] + [sorted(rng.sample(range(N), n)) for _ in range(tries)]
    for cols in cand:
        if exact(W_Q[:, cols]).det() != 0 and exact(W_K[:, cols]).det() != 0:
            return cols
    raise QKInputError(f"no {n} coordinates of C found on which B_0 is nondegenerate (tried {len(cand)})")


def rope_input(model: str | None, layer: int = 0, head: int = 0, k: int = DEFAULT_K,
               pairing: str | None = None) -> tuple[KindInput, dict]:
    """(the ``rope_weights`` input of one head, a description for display).  Raises QKInputError for
    a model without RoPE, a head out of range, or an unknown pairing."""
    m = load_model(model)
    if not 0 <= layer < m.n_layers:
        raise QKInputError(f"layer {layer} out of range: {m.name} has layers 0..{m.n_layers - 1}")
    if not 0 <= head < m.n_heads:
        raise QKInputError(f"head {head} out of range: {m.name} has heads 0..{m.n_heads - 1}")
    rec = m.layer_heads(layer)[head]
    pos = rec.positional or {}
    if pos.get("kind") != "rope" or pos.get("pairing") not in ("half_split", "interleaved"):
        why = pos.get("pairing") or pos.get("reason") or pos.get("note")
        raise QKInputError(f"{m.name}: positions are {pos.get('kind', 'unknown')}" + (f" ({why})" if why else "")
                           + ", not RoPE with a known pairing: Definition 3 needs position-dependent forms")
    if pairing not in (None, "half_split", "interleaved"):
        raise QKInputError(f"--pairing {pairing}: use half_split or interleaved")
    src = rec.source
    tq, tk = (next(t for t in src["tensors"] if t["role"] == r) for r in ("W_Q", "W_K"))
    fmt = "gguf" if src["arch"].startswith("gguf:") else "safetensors"
    base = fmpq_str(parse_rational(pos["base"]))
    r = int(pos["rotary_dim"])
    if fmt == "gguf":
        arch = src["arch"][5:]
        runtime = {"pairing": GGUF_RUNTIME[arch], "base": base, "rotary_dim": r}
    else:
        runtime = {"pairing": pos["pairing"], "base": base, "rotary_dim": r}
    unperm = "undo llama.cpp" in str(tq.get("transform", ""))
    reading = {"pairing": pairing or pos["pairing"], "base": base, "rotary_dim": r,
               "rows": "llama_unpermuted" if unperm else "stored"}
    cols = choose_cols(rec.W_Q, rec.W_K)
    doc = {"kind": "rope_weights", "file": Path(src["file"]).name, "sha256": src["sha256"], "format": fmt,
           "W_Q": {"name": tq["name"], "rows": list(tq["rows"])}, "W_K": {"name": tk["name"], "rows": list(tk["rows"])},
           "cols": cols, "k": k, "runtime": runtime, "reading": reading}
    path = Path(m.path)
    # the stored rows (the runtime's frame), from the loaded ones by llama.cpp's permutation
    stored = {"W_Q": rec.W_Q, "W_K": rec.W_K}
    if unperm:
        stored = {k: permute_rope(v, 1) for k, v in stored.items()}
    inp = make_input(doc, "rope", {"dirs": [str(path if path.is_dir() else path.parent)], "loaded_W_Q": rec.W_Q,
                                   "stored": stored})
    info = {"model": m.name, "layer": layer, "head": head, "kv_head": rec.kv_head, "n": rec.n, "N": rec.N,
            "positional": pos, "layout": rec.layout, "file": str(path)}
    return inp, info


__all__ = ["rope_input", "choose_cols", "GGUF_RUNTIME", "fmpq_mat"]


OTHER = {"half_split": "interleaved", "interleaved": "half_split"}


def check_head(model: str | None, layer: int = 0, head: int = 0, k: int = DEFAULT_K,
               pairing: str | None = None, other: bool = True) -> dict:
    """Evaluate Definition 3 and Proposition 1 on one real head, read with the loader's convention
    (or ``pairing``) and, when ``other``, with the other pairing as well (which must fail).

    Returns {"info", "readings": [{"pairing", "runs": [StatementRun…], "numbers", "verdict"}]}; the
    verdict of a reading is that of ``T_d = S^d`` (hypothesis hS of eq_ropeT_one_of_forall):
    evaluated with hS dropped, so a wrong reading gives a certificate whose verdict is ``fails``."""
    from ..claims.evaluate import evaluate
    from ..claims.rope import rope_report

    inp, info = rope_input(model, layer, head, k, pairing)
    pairs = [inp["reading"]["pairing"]] + ([OTHER[inp["reading"]["pairing"]]] if other and pairing is None else [])
    out = {"info": info, "input": inp.doc, "readings": []}
    for p in pairs:
        this = inp if p == inp["reading"]["pairing"] else make_input(
            dict(inp.doc, reading=dict(inp["reading"], pairing=p)), "rope", inp.source)
        # Definition 3 and the iff are not evaluated on real heads (transcendental T_d): S = T_1 is
        runs = [evaluate("isRoPELike_iff", this, drop=("hS",))]
        eq = next(r for r in runs[0].records if r.meta.check == "eq_ropeT_one_of_forall")
        out["readings"].append({"pairing": p, "reading": this.doc["reading"], "runs": runs,
                                "numbers": rope_report(runs[0].subject), "hS": eq.hypotheses.get("hS"),
                                "verdict": eq.conclusion, "evidence": eq.result.evidence})
    return out
