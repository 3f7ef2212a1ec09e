"""A real transformer layer as a ``transformer`` input (Proposition 2 with a model's constants).

For a BERT-family safetensors checkpoint (the default model, all-MiniLM-L6-v2) the input names,
per head i, the rows [i·d, (i+1)·d) of the query, key and value weights and the columns of the
attention output weight (V_i = W_O[:, i] W_V[i]); the network M(y) = W_2 gelu(W_1 y) is the
layer's feed-forward block; the tokens are sums of rows of the embedding tables (word piece,
position, token type 0) for a sentence tokenised with the model's own tokenizer (the ``tokenizers``
library on the checkpoint's ``tokenizer.json``: BERT normalisation, punctuation splitting, WordPiece,
[CLS] … [SEP]; from ``vocab.txt`` with the library's BERT WordPiece pipeline when there is no
tokenizer.json).

What is left out, because Proposition 2 is about T = (id + M)∘(id + Σ_i V_i A_i) with linear V_i
and ‖M(y)‖ ≤ L‖y‖: the LayerNorms (after the embeddings, after attention and after the
feed-forward block), the value and output biases (they make V_i affine), and the feed-forward
biases (with them M(0) ≠ 0, and no L satisfies hM).  The query and key biases stay: any score
gives convex combinations.  BERT attends in both directions, so the heads are not causal."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import QKInputError
from ..exact.rational import fmpq_str, parse_rational
from ..io.attention_inputs import KindInput, make_input
from . import resolve_model
from ..io.hashing import sha256_of
from ..io.tensors import array

DEFAULT_TEXT = "attention heads are bilinear forms"
PREFIX = "encoder.layer.{l}."


def tokenize(text: str, folder: Path) -> tuple[list[int], list[str]]:
    """(token ids, tokens) of ``text`` as the checkpoint in ``folder`` tokenises it: its
    ``tokenizer.json`` through the ``tokenizers`` library, else its ``vocab.txt`` through the
    library's BERT WordPiece pipeline (lower-cased, punctuation split, [CLS] … [SEP]); no padding,
    the file's truncation kept.  Raises
    QKInputError when the folder has neither or the file is not a tokenizer."""
    try:
        from tokenizers import Tokenizer
        from tokenizers.implementations import BertWordPieceTokenizer
    except ImportError:                                   # pragma: no cover - a declared dependency
        raise QKInputError("tokenising the layer input needs the tokenizers package (pip install tokenizers)") from None
    tj, vt = folder / "tokenizer.json", folder / "vocab.txt"
    try:
        if tj.is_file():
            tok = Tokenizer.from_file(str(tj))
        elif vt.is_file():
            tok = BertWordPieceTokenizer(str(vt), lowercase=True)
        else:
            raise QKInputError(f"{folder}: no tokenizer.json or vocab.txt beside the weights")
        tok.no_padding()                   # padding is for batches; the attention mask would drop it anyway
        enc = tok.encode(text)
    except QKInputError:
        raise
    except Exception as err:  # the library raises its own exception types for a malformed file
        raise QKInputError(f"{folder}: cannot tokenise with its tokenizer ({err.__class__.__name__}: "
                           f"{str(err).splitlines()[0] if str(err) else ''})") from None
    return list(enc.ids), list(enc.tokens)


def layer_input(model: str | None = None, layer: int = 0, text: str = DEFAULT_TEXT, norm: str = "l2",
                squarings: int = 4) -> tuple[KindInput, dict]:
    """(the ``transformer`` input of one BERT layer on the tokens of ``text``, a description).

    L is the certified bound ‖W_2‖·‖W_1‖ (GELU: |gelu t| ≤ |t|) rounded up to 7 significant digits,
    computed as the kernel does (tr((WᵀW)^(2^s))^(1/2^(s+1)), s = ``squarings``; sup norm: row
    sums).  Raises QKInputError for a checkpoint that is not BERT-like."""
    from ..claims.attention import PREC
    from ..io.tensors import exact
    from ..math.attention import NORM_PREC, gram_trace_bound
    from flint import arb, ctx

    path, canon = resolve_model(model)
    f = path if path.is_file() else path / "model.safetensors"
    cfg_p = f.parent / "config.json"
    if not cfg_p.is_file():
        raise QKInputError(f"{f}: no config.json beside the weights")
    cfg = json.loads(cfg_p.read_text(encoding="utf-8"))
    if cfg.get("model_type") != "bert":
        raise QKInputError(f"{f}: model_type {cfg.get('model_type')!r}; the layer input reads BERT layers")
    H, N = int(cfg["num_attention_heads"]), int(cfg["hidden_size"])
    d = N // H
    if not 0 <= layer < int(cfg["num_hidden_layers"]):
        raise QKInputError(f"layer {layer} out of range")
    ids, tokens = tokenize(text, f.parent)
    p = PREFIX.format(l=layer)
    heads = []
    for i in range(H):
        r = [i * d, (i + 1) * d]
        heads.append({"W_Q": {"tensor": p + "attention.self.query.weight", "rows": r},
                      "b_Q": {"tensor": p + "attention.self.query.bias", "cols": r},
                      "W_K": {"tensor": p + "attention.self.key.weight", "rows": r},
                      "b_K": {"tensor": p + "attention.self.key.bias", "cols": r},
                      "W_V": {"tensor": p + "attention.self.value.weight", "rows": r},
                      "W_O": {"tensor": p + "attention.output.dense.weight", "cols": r}})
    W1, W2 = p + "intermediate.dense.weight", p + "output.dense.weight"
    e1, e2 = exact(array(f, W1)), exact(array(f, W2))
    with ctx.workprec(PREC):
        if norm == "linf":
            g = arb(_row_sum(e1)) * arb(_row_sum(e2))
        else:
            g = gram_trace_bound(e1, squarings, NORM_PREC) * gram_trace_bound(e2, squarings, NORM_PREC)
    L = _round_up(g)
    doc = {"kind": "transformer", "file": f.name, "sha256": sha256_of(f),
           "x": {"sum": [{"tensor": "embeddings.word_embeddings.weight", "rows": ids},
                         {"tensor": "embeddings.position_embeddings.weight", "rows": list(range(len(ids)))},
                         {"tensor": "embeddings.token_type_embeddings.weight", "rows": [0] * len(ids)}]},
           "heads": heads, "M": {"W_1": {"tensor": W1}, "W_2": {"tensor": W2}, "act": "gelu"},
           "L": L, "norm": norm, "squarings": squarings}
    info = {"model": canon or (f.parent.name if f.parent.name != "model" else f.parent.parent.name), "layer": layer,
            "text": text, "token_ids": ids, "tokens": tokens, "heads": H, "d_head": d, "N": N,
            "left_out": ["embedding LayerNorm", "attention LayerNorm", "output LayerNorm", "value bias",
                         "attention output bias", "feed-forward biases"]}
    return make_input(doc, "layer", {"dirs": [str(f.parent)]}), info


def _row_sum(A):
    """max_r Σ_c |A_rc| (the sup-norm operator norm), exactly."""
    return max(sum(abs(A[r, c]) for c in range(A.ncols())) for r in range(A.nrows()))


def _round_up(x) -> str:
    """The exact upper end of the ball x rounded up to a decimal with 7 significant digits ("p/q")."""
    import math
    from fractions import Fraction

    m, e = x.upper().man_exp()
    q = Fraction(int(m)) * (Fraction(2) ** int(e))
    k = 6 - math.floor(math.log10(q)) if q > 0 else 0
    num = math.ceil(q * Fraction(10) ** k)
    out = Fraction(num) / Fraction(10) ** k
    return fmpq_str(parse_rational(f"{out.numerator}/{out.denominator}"))


__all__ = ["layer_input", "tokenize", "DEFAULT_TEXT"]
