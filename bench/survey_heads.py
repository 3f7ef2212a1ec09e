"""Synthetic float32 attention heads with the shapes of the paper's survey.

The survey (arXiv 2609.22990v1, §5) covers 9,512 heads of 14 models.  This
module gives their shapes and a generator of heads with the structure real
heads have (not only i.i.d. Gaussian weights):

* ``gaussian``  -- i.i.d. N(0, 1/N) entries (what an untrained head looks like);
* ``lowrank``   -- singular values decaying like a power law (effective rank
                   a fraction of n), shared input subspace between W_Q and W_K;
* ``spiked``    -- a few "outlier" input dimensions with weights 30-100x the
                   rest (the massive activations of LLM checkpoints) plus
                   dominant shared directions;
* ``clustered`` -- singular values in a few tight clusters, and W_Q nearly
                   orthogonal to W_K row-wise (α_j ≈ β_j: near ties of the
                   profile's order decisions, as in positional heads).

Every head is deterministic in (shape, kind, index).  Used by
bench/bench_survey.py and by the memory check of the README.
"""

from __future__ import annotations

import numpy as np

#: (model, d_model N, d_head n, layers, query heads, KV heads) -- the 14 models of the survey
SURVEY = [
    ("distilgpt2", 768, 64, 6, 12, 12),
    ("gpt2", 768, 64, 12, 12, 12),
    ("gpt2-medium", 1024, 64, 24, 16, 16),
    ("gpt2-large", 1280, 64, 36, 20, 20),
    ("opt-125m", 768, 64, 12, 12, 12),
    ("opt-350m", 1024, 64, 24, 16, 16),
    ("opt-1.3b", 2048, 64, 24, 32, 32),
    ("opt-2.7b", 2560, 80, 32, 32, 32),
    ("opt-6.7b", 4096, 128, 32, 32, 32),
    ("opt-13b", 5120, 128, 40, 40, 40),
    ("bloom-3b", 2560, 80, 30, 32, 32),
    ("bloom-7b1", 4096, 128, 30, 32, 32),
    ("pythia-70m", 512, 64, 6, 8, 8),
    ("Mistral-Small-24B", 5120, 128, 40, 32, 8),
]

KINDS = ("gaussian", "lowrank", "spiked", "clustered")


def survey_heads_total() -> int:
    """Number of heads in the survey (query heads; 9,512)."""
    return sum(l * h for _, _, _, l, h, _ in SURVEY)


def shapes() -> dict[tuple[int, int], int]:
    """{(N, n): number of survey heads with that shape}."""
    out: dict[tuple[int, int], int] = {}
    for _, N, n, l, h, _ in SURVEY:
        out[(N, n)] = out.get((N, n), 0) + l * h
    return out


def _orth_rows(rng, k: int, N: int) -> np.ndarray:
    q, _ = np.linalg.qr(rng.standard_normal((N, k)))
    return q.T


def synthetic_head(N: int, n: int, kind: str, index: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(W_Q, W_K), float32, shape (n, N), of the given structure kind."""
    rng = np.random.default_rng([N, n, KINDS.index(kind), index])
    sc = 1.0 / np.sqrt(N)
    if kind == "gaussian":
        q = rng.standard_normal((n, N)) * sc
        k = rng.standard_normal((n, N)) * sc
    elif kind == "lowrank":
        r = max(4, n // 4)
        V = _orth_rows(rng, 2 * r, N)                      # shared input subspace
        s = (1.0 + np.arange(n)) ** -1.5
        Uq = np.linalg.qr(rng.standard_normal((n, n)))[0]
        Uk = np.linalg.qr(rng.standard_normal((n, n)))[0]
        Aq = rng.standard_normal((n, 2 * r))
        Ak = Aq * 0.7 + 0.3 * rng.standard_normal((n, 2 * r))
        q = (Uq * s) @ (Aq @ V) * 0.1 + 1e-3 * sc * rng.standard_normal((n, N))
        k = (Uk * s) @ (Ak @ V) * 0.1 + 1e-3 * sc * rng.standard_normal((n, N))
    elif kind == "spiked":
        q = rng.standard_normal((n, N)) * sc
        k = rng.standard_normal((n, N)) * sc
        out = rng.choice(N, size=4, replace=False)
        q[:, out] *= rng.uniform(30, 100, 4)
        k[:, out] *= rng.uniform(30, 100, 4)
        d = _orth_rows(rng, 3, N)
        q += rng.standard_normal((n, 3)) @ d * 2.0
        k += rng.standard_normal((n, 3)) @ d * 2.0
    elif kind == "clustered":
        V = _orth_rows(rng, 2 * n, N)
        levels = np.repeat([1.0, 0.3, 0.05], -(-n // 3))[:n]
        levels = levels * (1 + 1e-6 * rng.standard_normal(n))
        Uq = np.linalg.qr(rng.standard_normal((n, n)))[0]
        Uk = np.linalg.qr(rng.standard_normal((n, n)))[0]
        q = (Uq * levels) @ V[:n]
        k = (Uk * levels[::-1]) @ V[n:] + 1e-7 * (Uk @ V[:n])
    else:
        raise ValueError(f"unknown kind {kind}")
    return np.ascontiguousarray(q, dtype=np.float32), np.ascontiguousarray(k, dtype=np.float32)


def write_model(folder, N: int, n: int, layers: int, heads: int, kinds=KINDS) -> "Path":
    """A BERT-layout safetensors checkpoint of synthetic heads (``config.json``
    beside it) in ``folder``; head h of layer l is ``synthetic_head(N, n,
    kinds[(l·heads + h) % len(kinds)], l·heads + h)``.  Returns the folder."""
    import json
    from pathlib import Path

    from safetensors.numpy import save_file

    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    t = {}
    for l in range(layers):
        qs, ks = [], []
        for h in range(heads):
            i = l * heads + h
            q, k = synthetic_head(N, n, kinds[i % len(kinds)], i)
            qs.append(q)
            ks.append(k)
        t[f"bert.encoder.layer.{l}.attention.self.query.weight"] = np.concatenate(qs)
        t[f"bert.encoder.layer.{l}.attention.self.key.weight"] = np.concatenate(ks)
    save_file(t, str(d / "model.safetensors"))
    (d / "config.json").write_text(json.dumps({"num_attention_heads": heads, "model_type": "bert"}))
    return d
