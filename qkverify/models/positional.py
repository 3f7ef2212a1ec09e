"""How a model encodes positions, as recorded beside each head.

The analysed matrix L = W_Kᵀ W_Q is the score of two tokens at the same
position.  Positional schemes change the score between different positions
in different ways, so every head carries one of these descriptors (a plain
JSON-ready dict) for the checks that need it (SPEC §1, RoPE):

* ``{"kind": "learned_absolute", ...}`` -- a learned position embedding is
  added to the residual stream before the first layer (BERT, GPT-2, OPT);
  the score stays a fixed bilinear form of the layer inputs.
* ``{"kind": "alibi", ...}`` -- a per-head linear distance penalty is added
  to the score (BLOOM, MPT); the bilinear part is unchanged.
* ``{"kind": "rope", "base", "rotary_dim", "partial_rotary_factor",
  "pairing", ...}`` -- the first ``rotary_dim`` rows of each head's W_Q and
  W_K are rotated by position-dependent angles θ_i = base^(−2i/rotary_dim)
  in pairs: ``"half_split"`` pairs row i with row i + rotary_dim/2
  (GPT-NeoX / HF Llama ``rotate_half``), ``"interleaved"`` pairs rows 2i and
  2i+1 (GPT-J ``rotate_every_two``; also the row order of llama.cpp GGUF
  files before the loader undoes their permutation).  The pairing refers to
  the rows of W_Q, W_K *as loaded* (see ``rows``).
* ``{"kind": "unknown", "reason": ...}`` -- nothing to go on (no config).

``base_source`` says whether a number was read from the config or is the
documented default of the family's transformers config class, which HF
applies when the key is absent.
"""

from __future__ import annotations

from fractions import Fraction


def _num(v):
    """A JSON-ready number (ints stay ints; floats as given)."""
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v) if v.is_integer() and abs(v) < 2 ** 53 else v
    return v


def _fraction_text(x) -> str:
    """Exact decimal value of a config number as a rational string (0.25 -> "1/4")."""
    q = Fraction(str(x)) if isinstance(x, (int, float)) else Fraction(x)
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def rope(d_head: int, base, base_source: str, pairing: str, factor=None, rotary_dim: int | None = None,
         scaling=None, rows: str = "as stored in the checkpoint", note: str | None = None) -> dict:
    """A RoPE descriptor.

    d_head       -- rows per head
    base         -- θ base (rope_theta / rotary_emb_base)
    pairing      -- "half_split" or "interleaved" (see module docstring)
    factor       -- partial-rotary fraction from the config (None = 1)
    rotary_dim   -- rotated rows per head; when None, int(d_head·factor) as
                    transformers computes it
    scaling      -- the config's rope_scaling dict, if any
    Raises ValueError for an unknown pairing."""
    if pairing not in ("half_split", "interleaved"):
        raise ValueError(f"unknown RoPE pairing {pairing!r}")
    if rotary_dim is None:
        rotary_dim = int(d_head * float(factor)) if factor is not None else d_head
    out = {"kind": "rope", "base": _num(base), "base_source": base_source,
           "rotary_dim": int(rotary_dim), "d_head": int(d_head),
           "partial_rotary_factor": _fraction_text(factor) if factor is not None else "1",
           "rotary_fraction": _fraction_text(Fraction(int(rotary_dim), int(d_head))) if d_head else "0",
           "pairing": pairing, "rows": rows}
    if scaling:
        out["scaling"] = scaling
    if note:
        out["note"] = note
    return out


def learned_absolute(max_positions=None, note: str | None = None) -> dict:
    """Learned absolute position embeddings (added before the first layer)."""
    out = {"kind": "learned_absolute"}
    if max_positions is not None:
        out["max_positions"] = _num(max_positions)
    if note:
        out["note"] = note
    return out


def alibi(note: str | None = None, **extra) -> dict:
    """ALiBi: a per-head linear bias −m_h·|i − j| added to the score."""
    out = {"kind": "alibi", **{k: _num(v) for k, v in extra.items() if v is not None}}
    if note:
        out["note"] = note
    return out


def unknown(reason: str) -> dict:
    """No positional information available."""
    return {"kind": "unknown", "reason": reason}


def short(p: dict) -> str:
    """One-cell summary for the CSV, e.g. ``rope(base=10000,dim=16/64,half_split)``."""
    k = p.get("kind", "unknown")
    if k == "rope":
        return f"rope(base={p['base']},dim={p['rotary_dim']}/{p['d_head']},{p['pairing']})"
    if k == "alibi":
        return "alibi"
    if k == "learned_absolute":
        return "learned_absolute"
    return k
