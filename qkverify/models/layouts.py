"""Checkpoint layouts: where each head's W_Q and W_K sit in a safetensors
checkpoint, chosen from ``config.json``'s ``model_type``.

Families (tensor names as the transformers model classes write them; every
family accepts the prefixes its model classes add, and exactly one prefix
per checkpoint):

===========  ============================================  ==================================================
family       model_type                                    query/key tensors of layer l
===========  ============================================  ==================================================
bert         bert, roberta, xlm-roberta                    ``[bert.|roberta.]encoder.layer.l.attention.self.{query,key}.weight``
opt          opt                                           ``[model.]decoder.layers.l.self_attn.{q,k}_proj.weight``
llama        llama, mistral, mixtral, qwen2, qwen2_moe,    ``[model.|language_model.model.|model.language_model.]layers.l.self_attn.{q,k}_proj.weight``
             qwen3, olmo2, gemma2, gemma3_text, gemma3,
             phi, stablelm, starcoder2
phi3         phi3                                          ``[model.]layers.l.self_attn.qkv_proj.weight`` (fused, Q, K, V blocks)
gptj         gptj                                          ``[transformer.]h.l.attn.{q,k}_proj.weight``
gpt2         gpt2                                          ``[transformer.]h.l.attn.c_attn.weight`` (fused)
gpt_bigcode  gpt_bigcode                                   ``[transformer.]h.l.attn.c_attn.weight`` (fused Linear: multi-query blocks or per head)
bloom        bloom                                         ``[transformer.]h.l.self_attention.query_key_value.weight`` (fused, interleaved)
falcon       falcon, RefinedWeb, RefinedWebModel           ``[transformer.]h.l.self_attention.query_key_value.weight`` (multi-query, per head, or grouped)
gpt_neox     gpt_neox                                      ``[gpt_neox.]layers.l.attention.query_key_value.weight`` (fused, interleaved)
mpt          mpt                                           ``[transformer.]blocks.l.attn.Wqkv.weight`` (fused, Q/K/V blocks)
distilbert   distilbert                                    ``[distilbert.]transformer.layer.l.attention.{q,k}_lin.weight``
t5           t5, mt5                                       ``{encoder,decoder}.block.b.layer.0.SelfAttention.{q,k}.weight`` (encoder blocks, then decoder blocks)
===========  ============================================  ==================================================

A layout file (:func:`read_layout`, ``--layout FILE``) describes any other checkpoint.

How a head is cut out (H query heads, KV key/value heads, d = d_head,
N = d_model, query head h uses key head g = h // (H/KV)):

* separate projections (torch Linear ``[out, in]``): W_Q = rows h·d:(h+1)·d of
  the query weight, W_K = rows g·d:(g+1)·d of the key weight;
* GPT-2 ``c_attn``: Q, K, V blocks of N outputs each, head h at outputs
  h·d:(h+1)·d of its block.  HF's Conv1D stores ``[in, out] = [N, 3N]``
  (columns are outputs, so the head is a column slice, transposed); some
  compatible checkpoints (e.g. written from a torch Linear) store
  ``[out, in] = [3N, N]``.  The orientation is read off the shape against
  d_model (config ``n_embd``, else the token embedding's width, else the
  shape alone); a checkpoint whose layers disagree, or a shape that fits
  neither, is refused;
* BLOOM, GPT-NeoX: ``[3·H·d, N]`` with the rows of head i grouped
  ``[q_i; k_i; v_i]`` (d rows each): W_Q = rows 3·h·d : 3·h·d + d,
  W_K = rows 3·h·d + d : 3·h·d + 2d (transformers views the fused output as
  ``(H, 3, d)`` resp. ``(H, 3·d)``);
* MPT ``Wqkv``, Phi-3 ``qkv_proj``, multi-query Falcon and GPT-BigCode (KV = 1):
  ``[H·d + 2·KV·d, N]``, blocks Q, K, V: W_Q = rows h·d:(h+1)·d,
  W_K = rows H·d + g·d : H·d + (g+1)·d;
* Falcon's ``new_decoder_architecture``: per key head g a group of (r + 2)·d rows,
  r = H/KV: its query heads, k_g, v_g (transformers views the output as
  ``(KV, r + 2, d)``): W_Q = rows g(r+2)d + (h mod r)d …, W_K = rows g(r+2)d + rd …;
  GPT-BigCode without multi_query is interleaved per head (a view ``(H, 3d)``).

Biases (``….bias`` beside the weight) are sliced with the same indices.

Without a ``model_type`` (no config.json, or one without the key) only the
unambiguous separate-projection and GPT-2 names are accepted (BERT, GPT-2,
Llama-style); fused ``query_key_value``/``Wqkv`` tensors need the
model_type, because interleaved and block layouts have the same shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Callable

from ..errors import QKInputError
from . import positional as pos
from .base import kv_head_of


@dataclass(frozen=True)
class Family:
    """One checkpoint layout (see module docstring).

    body     -- regex of a query/key (or fused) weight name after the prefix, with the named groups
                ``layer`` (the block number), ``role`` (query or key, for separate projections) and,
                for encoder-decoder models, ``stack`` (``encoder`` / ``decoder``)
    roles    -- the two ``role`` values (query, key) of separate projections; None when fused
    kind     -- ``separate`` | ``gpt2`` | ``interleaved`` | ``grouped`` | ``blocks`` (fused kinds may be
                refined from the config: Falcon, GPT-BigCode)
    keys     -- config key aliases that differ from the defaults (:data:`CONFIG_KEYS`)
    """

    name: str
    model_types: tuple[str, ...]
    kind: str                 # "separate" | "gpt2" | "interleaved" | "grouped" | "blocks"
    prefixes: tuple[str, ...]
    body: str
    roles: tuple[str, str] | None
    description: str
    norm_body: str | None = None   # regex of q/k normalisation weights after the prefix
    keys: tuple[tuple[str, tuple[str, ...]], ...] = ()
    stacks: tuple[str, ...] = ()   # order of the stacks (encoder-decoder models)

    def key_aliases(self, what: str) -> tuple[str, ...]:
        """Config keys holding ``what`` (``heads``, ``kv_heads``, ``hidden``, ``layers``, ``head_dim``)."""
        return dict(self.keys).get(what, CONFIG_KEYS[what])


#: config keys of the head counts and sizes, in the order they are tried
CONFIG_KEYS = {
    "heads": ("num_attention_heads", "n_head", "n_heads"),
    "kv_heads": ("num_key_value_heads",),
    "hidden": ("hidden_size", "n_embd", "n_embed", "d_model"),
    "layers": ("num_hidden_layers", "n_layer", "n_layers"),
    "head_dim": ("head_dim",),
}

_SEP = r"layers\.(?P<layer>\d+)\.self_attn\.(?P<role>q|k)_proj\.weight"

FAMILIES: tuple[Family, ...] = (
    Family("bert", ("bert", "roberta", "xlm-roberta"), "separate", ("", "bert.", "roberta."),
           r"encoder\.layer\.(?P<layer>\d+)\.attention\.self\.(?P<role>query|key)\.weight", ("query", "key"),
           "bert: separate query/key Linear [out, in]"),
    Family("opt", ("opt",), "separate", ("model.", ""),
           r"decoder\.layers\.(?P<layer>\d+)\.self_attn\.(?P<role>q|k)_proj\.weight", ("q", "k"),
           "opt: separate q_proj/k_proj Linear [out, in]"),
    Family("llama", ("llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "olmo2", "gemma2", "gemma3_text",
                     "gemma3", "phi", "stablelm", "starcoder2"), "separate",
           ("model.", "", "language_model.model.", "model.language_model."),
           _SEP, ("q", "k"),
           "{mt}: separate q_proj/k_proj Linear [out, in], grouped-query attention",
           r"layers\.(?P<layer>\d+)\.self_attn\.(?P<role>q|k)_norm\.weight"),
    Family("phi3", ("phi3",), "blocks", ("model.", ""),
           r"layers\.(?P<layer>\d+)\.self_attn\.qkv_proj\.weight", None,
           "phi3: fused qkv_proj Linear [(H + 2·KV)·d_head, d_model], Q, K, V blocks (grouped-query)"),
    Family("gptj", ("gptj",), "separate", ("transformer.", ""),
           r"h\.(?P<layer>\d+)\.attn\.(?P<role>q|k)_proj\.weight", ("q", "k"),
           "gptj: separate q_proj/k_proj Linear [out, in]"),
    Family("gpt2", ("gpt2",), "gpt2", ("transformer.", ""),
           r"h\.(?P<layer>\d+)\.attn\.c_attn\.weight", None,
           "gpt2: fused c_attn, Q, K, V blocks of d_model outputs"),
    Family("gpt_bigcode", ("gpt_bigcode",), "blocks", ("transformer.", ""),
           r"h\.(?P<layer>\d+)\.attn\.c_attn\.weight", None,
           "gpt_bigcode: fused c_attn Linear [out, in]"),
    Family("bloom", ("bloom",), "interleaved", ("transformer.", ""),
           r"h\.(?P<layer>\d+)\.self_attention\.query_key_value\.weight", None,
           "bloom: fused query_key_value Linear [3·H·d_head, d_model], interleaved per head [q_i; k_i; v_i]"),
    Family("falcon", ("falcon", "RefinedWeb", "RefinedWebModel"), "interleaved", ("transformer.", ""),
           r"h\.(?P<layer>\d+)\.self_attention\.query_key_value\.weight", None,
           "falcon: fused query_key_value Linear [out, in]",
           keys=(("kv_heads", ("num_kv_heads", "n_head_kv")),)),
    Family("gpt_neox", ("gpt_neox",), "interleaved", ("gpt_neox.", ""),
           r"layers\.(?P<layer>\d+)\.attention\.query_key_value\.weight", None,
           "gpt_neox: fused query_key_value Linear [3·H·d_head, d_model], interleaved per head [q_i; k_i; v_i]"),
    Family("mpt", ("mpt",), "blocks", ("transformer.", ""),
           r"blocks\.(?P<layer>\d+)\.attn\.Wqkv\.weight", None,
           "mpt: fused Wqkv Linear [(H + 2·KV)·d_head, d_model], Q, K, V blocks",
           r"blocks\.(?P<layer>\d+)\.attn\.(?P<role>q|k)_ln\.weight"),
    Family("distilbert", ("distilbert",), "separate", ("distilbert.", ""),
           r"transformer\.layer\.(?P<layer>\d+)\.attention\.(?P<role>q|k)_lin\.weight", ("q", "k"),
           "distilbert: separate q_lin/k_lin Linear [out, in]",
           keys=(("hidden", ("dim", "hidden_size")),)),
    Family("t5", ("t5", "mt5"), "separate", ("",),
           r"(?P<stack>encoder|decoder)\.block\.(?P<layer>\d+)\.layer\.0\.SelfAttention\.(?P<role>q|k)\.weight",
           ("q", "k"),
           "{mt}: separate q/k Linear [n_heads·d_kv, d_model] of the encoder's and the decoder's self-attention "
           "(encoder blocks first, then decoder blocks; cross-attention is not a bilinear form of one sequence)",
           keys=(("heads", ("num_heads",)), ("head_dim", ("d_kv",)), ("hidden", ("d_model",)),
                 ("layers", ("num_layers",))),
           stacks=("encoder", "decoder")),
)


BY_MODEL_TYPE = {mt: f for f in FAMILIES for mt in f.model_types}
#: families tried, in order, when there is no model_type
BY_NAMES_ONLY = ("bert", "gpt2", "llama")
SUPPORTED = ", ".join(sorted(BY_MODEL_TYPE))

#: any tensor that normalises queries or keys after the projection (fail closed on all of them)
NORM_NAME = re.compile(r"(?:^|\.)(q_norm|k_norm|q_ln|k_ln|q_layernorm|k_layernorm|query_layernorm|key_layernorm|"
                       r"qk_norm|q_layer_norm|k_layer_norm)(?:\.|$)")

#: documented defaults of transformers' config classes for keys a config.json may omit
ROPE_THETA_DEFAULT = {"llama": 10000.0, "mistral": 10000.0, "mixtral": 1e6, "qwen2": 10000.0, "qwen2_moe": 10000.0,
                      "qwen3": 10000.0, "olmo2": 10000.0, "gemma2": 10000.0, "gemma3_text": 1e6, "gemma3": 1e6,
                      "phi": 10000.0, "phi3": 10000.0, "stablelm": 10000.0, "starcoder2": 10000.0, "falcon": 10000.0}
#: transformers' default partial_rotary_factor where it is not 1 (PhiConfig 0.5, StableLmConfig 0.25)
PARTIAL_ROTARY_DEFAULT = {"phi": 0.5, "stablelm": 0.25}
#: transformers' default attn_logit_softcapping where a config.json may omit it (Gemma2Config: 50.0)
SOFTCAP_DEFAULT = {"gemma2": 50.0}


@dataclass
class Plan:
    """A resolved layout: which tensors hold each layer's heads and how to cut them.

    family, arch     -- the Family and the model_type (or family name)
    layout           -- human-readable description (goes into every record)
    layout_source    -- how the layout was chosen (config model_type, names, or a layout file)
    prefix           -- the one name prefix the checkpoint uses
    layer_ids        -- one id per analysed layer, in order (the block number; for encoder-decoder
                        models ``(stack, block)``)
    tensors          -- layer id -> {"q": name, "k": name} or {"qkv": name}
    biases           -- layer id -> {"q"/"k"/"qkv": bias name} (present ones)
    H, KV, N, dh     -- query heads, key heads, d_model, d_head
    orientation      -- "linear" ([out, in]) or "conv1d" ([in, out], GPT-2)
    qk_norm          -- description of q/k normalisation, or None
    positional       -- layer index -> positional descriptor
    kind             -- how the heads are cut (the family's kind unless the config refines it)
    order            -- order of the q, k, v parts of a fused tensor (per block, group or head)
    kv_map           -- the key head of each query head, when not h // (H/KV) (layout files)
    softcap          -- description of attention-logit soft-capping accepted with ``pre_softcap``
    """

    family: Family
    arch: str
    layout: str
    layout_source: str
    prefix: str
    layer_ids: list
    tensors: dict
    biases: dict
    H: int
    KV: int
    N: int
    dh: int
    orientation: str = "linear"
    qk_norm: str | None = None
    positional: Callable[[int], dict] = field(default=lambda l: pos.unknown("not recorded"))
    kind: str = ""
    order: tuple[str, ...] = ("q", "k", "v")
    kv_map: tuple[int, ...] | None = None
    softcap: str | None = None

    def __post_init__(self) -> None:
        self.kind = self.kind or self.family.kind

    def kv_head(self, h: int) -> int:
        """The key/value head that query head h attends with."""
        if self.kv_map is not None:
            return self.kv_map[h]
        return kv_head_of(h, self.H, self.KV)

    def head_slices(self, h: int) -> tuple[tuple[str, int, int, int], tuple[str, int, int, int]]:
        """((key, axis, a, b) for W_Q, the same for W_K) of query head h:
        ``key`` names the tensor in ``tensors[layer]`` ("q", "k" or "qkv"),
        axis 0 = rows of a ``[out, in]`` tensor, 1 = columns of an
        ``[in, out]`` tensor (to be transposed).

        Fused kinds (d = d_head, r = H/KV query heads per key head):
        ``blocks`` -- parts of H·d, KV·d, KV·d rows in ``order``; ``grouped`` -- per key head g a group
        of (r + 2)·d rows: its r query heads, its key and its value, in ``order`` (Falcon's
        new_decoder_architecture); ``interleaved`` -- the grouped layout with r = 1 (BLOOM, GPT-NeoX)."""
        q, k = self._slices(h)
        if self.orientation == "conv1d" and self.kind != "gpt2":
            q, k = (q[0], 1, q[2], q[3]), (k[0], 1, k[2], k[3])
        return q, k

    def _slices(self, h: int) -> tuple[tuple[str, int, int, int], tuple[str, int, int, int]]:
        d, H, KV, N = self.dh, self.H, self.KV, self.N
        g = self.kv_head(h)
        kind = self.kind
        if kind == "separate":
            return ("q", 0, h * d, (h + 1) * d), ("k", 0, g * d, (g + 1) * d)
        if kind == "gpt2":
            ax = 1 if self.orientation == "conv1d" else 0
            return ("qkv", ax, h * d, (h + 1) * d), ("qkv", ax, N + h * d, N + (h + 1) * d)
        if kind in ("interleaved", "grouped"):
            r = H // KV
            off = _offsets(self.order, {"q": r * d, "k": d, "v": d})
            base = g * (r + 2) * d
            q0 = base + off["q"] + (h % r) * d
            return ("qkv", 0, q0, q0 + d), ("qkv", 0, base + off["k"], base + off["k"] + d)
        if kind == "blocks":
            off = _offsets(self.order, {"q": H * d, "k": KV * d, "v": KV * d})
            return (("qkv", 0, off["q"] + h * d, off["q"] + (h + 1) * d),
                    ("qkv", 0, off["k"] + g * d, off["k"] + (g + 1) * d))
        raise AssertionError(kind)


def _offsets(order: tuple[str, ...], sizes: dict[str, int]) -> dict[str, int]:
    """Start of each part when the parts of ``sizes`` follow one another in ``order``."""
    out, at = {}, 0
    for part in order:
        out[part] = at
        at += sizes[part]
    return out


# ---------------------------------------------------------------------------
# config helpers


def _get(cfg: dict, *keys, default=None):
    for k in keys:
        if cfg.get(k) is not None:
            return cfg[k]
    return default


def effective_config(cfg: dict) -> dict:
    """The text model's config: Gemma 3's multimodal config nests it in
    ``text_config`` (keys there win; model_type stays the outer one)."""
    if isinstance(cfg.get("text_config"), dict) and cfg.get("model_type") == "gemma3":
        return {**cfg, **cfg["text_config"], "model_type": "gemma3"}
    return cfg


def _positive_int(v, what: str, path) -> int:
    try:
        iv = int(v)
    except (TypeError, ValueError):
        raise QKInputError(f"{path}: config {what} = {v!r} is not an integer") from None
    if iv <= 0 or iv != v:
        raise QKInputError(f"{path}: config {what} = {v!r} is not a positive integer")
    return iv


# ---------------------------------------------------------------------------
# name matching


def _match(fam: Family, names: list[str]) -> dict[str, list[tuple[str, tuple, str | None]]]:
    """prefix -> [(name, layer id, role)] of names matching ``prefix + fam.body``; the layer id is
    the block number, or (stack, block number) for a family with stacks."""
    rx = re.compile(fam.body)
    out: dict[str, list] = {}
    for t in names:
        for p in fam.prefixes:
            if t.startswith(p):
                m = rx.fullmatch(t[len(p):])
                if m:
                    g = m.groupdict()
                    lid = (g["stack"], int(g["layer"])) if fam.stacks else int(g["layer"])
                    out.setdefault(p, []).append((t, lid, g.get("role")))
                    break
    return out


def _examples(names: list[str], k: int = 6) -> str:
    return ", ".join(names[:k]) + (" …" if len(names) > k else "")


def _collect(fam: Family, names: list[str], path) -> tuple[str, list, dict]:
    """(prefix, layer ids in order, layer id -> role -> tensor name) for a family;
    QKInputError for two prefixes, missing roles or gaps in the layers (per stack)."""
    found = _match(fam, names)
    if not found:
        return "", [], {}
    if len(found) > 1:
        ps = sorted(found)
        raise QKInputError(f"{path}: attention weights under two prefixes ({', '.join(repr(p) for p in ps)}), e.g. "
                           f"{found[ps[0]][0][0]} and {found[ps[1]][0][0]}; keep one model per checkpoint")
    prefix, hits = next(iter(found.items()))
    tensors: dict = {}
    for t, l, role in hits:
        key = "qkv" if fam.roles is None else ("q" if role == fam.roles[0] else "k")
        tensors.setdefault(l, {})[key] = t
    if fam.stacks:
        layers = sorted(tensors, key=lambda x: (fam.stacks.index(x[0]), x[1]))
    else:
        layers = sorted(tensors)
    need = ("qkv",) if fam.roles is None else ("q", "k")
    for l in layers:
        for r in need:
            if r not in tensors[l]:
                want = "fused QKV" if r == "qkv" else f"{fam.roles[0 if r == 'q' else 1]}"
                raise QKInputError(f"{path}: layer {_layer_text(l)} has no {want} weight")
    for stack in (fam.stacks or (None,)):
        nums = [x[1] for x in layers if x[0] == stack] if fam.stacks else layers
        if nums != list(range(len(nums))):
            raise QKInputError(f"{path}: {stack + ' ' if stack else ''}layer numbers {nums[:6]}"
                               f"{'…' if len(nums) > 6 else ''} are not 0, 1, 2, … (a partial checkpoint?)")
    return prefix, layers, tensors


def _layer_text(lid) -> str:
    """``3``, or ``decoder block 3`` for an encoder-decoder layer id."""
    return f"{lid[0]} block {lid[1]}" if isinstance(lid, tuple) else str(lid)


# ---------------------------------------------------------------------------
# positional encodings per family


def _checked_positional(positional: Callable[[int], dict], n_layers: int, where: str) -> Callable[[int], dict]:
    """Every layer's descriptor built now (they are read per layer later, where a config value that is
    not a number would surface as an internal error) and its RoPE numbers checked: a base that is a
    positive finite number, a partial-rotary fraction in (0, 1], a rotary_dim in 0..d_head.
    QKInputError (one line) naming the value otherwise."""
    import math

    def bad(what: str, v, why: str) -> QKInputError:
        return QKInputError(f"{where}: RoPE {what} = {v!r} is not {why}")

    descs = {}
    for i in range(n_layers):
        try:
            d = positional(i)
        except (ValueError, TypeError, ArithmeticError) as err:
            raise QKInputError(f"{where}: positional encoding not readable from the config "
                               f"({err.__class__.__name__}: {str(err).splitlines()[0] if str(err) else ''})") from None
        if isinstance(d, dict) and d.get("kind") == "rope":
            b = d.get("base")
            if isinstance(b, bool) or not isinstance(b, (int, float)) or not math.isfinite(b) or b <= 0:
                raise bad("base (rope_theta)", b, "a positive number")
            f = Fraction(d["partial_rotary_factor"])
            if not 0 < f <= 1:
                raise bad("partial_rotary_factor", d["partial_rotary_factor"], "in (0, 1]")
            r, dh = d.get("rotary_dim"), d.get("d_head")
            if isinstance(r, bool) or not (isinstance(r, int) and 0 <= r <= dh):
                raise bad("rotary_dim", r, f"a number of rows in 0..d_head = {dh}")
        descs[i] = d
    return lambda l: descs[l] if l in descs else positional(l)


def _rope_params(cfg: dict, layer_type: str | None = None) -> dict:
    """The config's rope parameters: ``rope_parameters`` (newer transformers,
    possibly per layer type) merged under the legacy top-level keys."""
    rp = cfg.get("rope_parameters")
    out: dict = {}
    if isinstance(rp, dict):
        if layer_type and isinstance(rp.get(layer_type), dict):
            out.update(rp[layer_type])
        elif not any(isinstance(v, dict) for v in rp.values()):
            out.update(rp)
    return out


def _positional(fam: Family, mt: str, cfg: dict, dh: int, names: list[str], prefix: str,
                layer_ids: list) -> Callable[[int], dict]:
    """layer -> positional descriptor for a family (module positional)."""
    if fam.name in ("gpt_bigcode", "distilbert"):
        if fam.name == "distilbert" and cfg.get("sinusoidal_pos_embds"):
            d = {"kind": "sinusoidal_absolute", "max_positions": cfg.get("max_position_embeddings"),
                 "note": "fixed sinusoidal position embeddings added before the first layer"}
        else:
            d = pos.learned_absolute(_get(cfg, "n_positions", "max_position_embeddings"))
        return lambda l: d
    if fam.name == "falcon":
        if cfg.get("alibi"):
            d = pos.alibi(note="Falcon adds the ALiBi bias before the 1/√d scale")
        else:
            rp = _rope_params(cfg)
            base = _get(rp, "rope_theta") or _get(cfg, "rope_theta")
            src = "config" if base is not None else "default of transformers' FalconConfig"
            d = pos.rope(dh, base if base is not None else 10000, src, "half_split",
                         scaling=cfg.get("rope_scaling") or None)
        return lambda l: d
    if fam.name == "t5":
        buckets = cfg.get("relative_attention_num_buckets", 32)
        dist = cfg.get("relative_attention_max_distance", 128)

        def t5(l: int) -> dict:
            stack, block = layer_ids[l]
            return {"kind": "relative_bias", "stack": stack, "block": block, "num_buckets": buckets,
                    "max_distance": dist, "bidirectional": stack == "encoder",
                    "note": f"a learned bias b_h(i − j) is added to x_kᵀ L x_q ({stack}.block.0's "
                            "relative_attention_bias, shared by every layer of the stack); no 1/√d scale "
                            "(T5 folds it into the initialisation of W_Q)" + ("; causal" if stack == "decoder" else "")}
        return t5
    if fam.name == "bert":
        kind = cfg.get("position_embedding_type", "absolute")
        if kind == "absolute":
            d = pos.learned_absolute(cfg.get("max_position_embeddings"))
        else:
            d = {"kind": str(kind), "note": "relative position embeddings add position-dependent terms to the score"}
        return lambda l: d
    if fam.name == "opt":
        d = pos.learned_absolute(cfg.get("max_position_embeddings"), "OPT offsets position ids by 2")
        return lambda l: d
    if fam.name == "gpt2":
        d = pos.learned_absolute(_get(cfg, "n_positions", "max_position_embeddings"))
        return lambda l: d
    if fam.name == "bloom":
        d = pos.alibi()
        return lambda l: d
    if fam.name == "gptj":
        rd = cfg.get("rotary_dim")
        d = pos.rope(dh, 10000, "GPT-J's fixed base (not a config key)", "interleaved",
                     rotary_dim=int(rd) if rd is not None else 64 if dh >= 64 else dh,
                     note=None if rd is not None else "rotary_dim absent: transformers' GPTJConfig default 64")
        return lambda l: d
    if fam.name == "gpt_neox":
        rp = _rope_params(cfg)
        base = _get(rp, "rope_theta") or _get(cfg, "rotary_emb_base", "rope_theta")
        src = "config" if base is not None else "default of transformers' GPTNeoXConfig"
        factor = _get(rp, "partial_rotary_factor") or _get(cfg, "rotary_pct", "partial_rotary_factor")
        note = None if factor is not None else "rotary_pct absent: transformers' GPTNeoXConfig default 0.25"
        d = pos.rope(dh, base if base is not None else 10000, src, "half_split",
                     factor=factor if factor is not None else 0.25, scaling=cfg.get("rope_scaling"), note=note)
        return lambda l: d
    if fam.name == "mpt":
        ac = cfg.get("attn_config") if isinstance(cfg.get("attn_config"), dict) else {}
        wpe = any(t == prefix + "wpe.weight" for t in names)
        if ac.get("alibi", False):
            d = pos.alibi(alibi_bias_max=ac.get("alibi_bias_max"),
                          note="also learned absolute embeddings (wpe)" if wpe else None)
        elif ac.get("rope", False):
            d = {"kind": "rope", "base": ac.get("rope_theta", 10000), "d_head": dh, "rotary_dim": dh,
                 "pairing": "unknown", "note": f"llm-foundry rope_impl {ac.get('rope_impl')!r}: pairing not recorded"}
        elif wpe:
            d = pos.learned_absolute(cfg.get("max_seq_len"))
        else:
            d = pos.unknown("MPT config has neither ALiBi, RoPE nor a wpe tensor")
        return lambda l: d
    # llama family (and phi3): RoPE, rotate_half pairing
    rp0 = _rope_params(cfg)
    factor = _get(rp0, "partial_rotary_factor") or _get(cfg, "partial_rotary_factor")
    if factor is None and mt in PARTIAL_ROTARY_DEFAULT:
        factor = PARTIAL_ROTARY_DEFAULT[mt]
    if mt in ("gemma3", "gemma3_text"):
        types = cfg.get("layer_types")
        pattern = int(cfg.get("sliding_window_pattern") or 6)

        def ltype(l: int) -> str:
            if isinstance(types, list) and l < len(types):
                return str(types[l])
            return "full_attention" if (l + 1) % pattern == 0 else "sliding_attention"

        def gem(l: int) -> dict:
            t = ltype(l)
            rp = _rope_params(cfg, t)
            if t == "sliding_attention":
                base = _get(rp, "rope_theta") or _get(cfg, "rope_local_base_freq")
                src = "config" if base is not None else "default of transformers' Gemma3TextConfig (rope_local_base_freq)"
                base = base if base is not None else 10000.0
                scaling = None
            else:
                base = _get(rp, "rope_theta") or _get(cfg, "rope_theta")
                src = "config" if base is not None else "default of transformers' Gemma3TextConfig"
                base = base if base is not None else 1e6
                scaling = cfg.get("rope_scaling")
            return pos.rope(dh, base, src, "half_split", factor=factor, scaling=scaling, note=f"{t} layer")
        return gem
    rp = _rope_params(cfg)
    base = _get(rp, "rope_theta") or _get(cfg, "rope_theta")
    src = "config" if base is not None else f"default of transformers' config for {mt}"
    base = base if base is not None else ROPE_THETA_DEFAULT.get(mt, 10000.0)
    d = pos.rope(dh, base, src, "half_split", factor=factor, scaling=cfg.get("rope_scaling") or None)
    return lambda l: d


# ---------------------------------------------------------------------------
# the resolver


def resolve(names: list[str], shape: Callable[[str], tuple], cfg: dict, path: Path,
            n_heads: int | None = None, n_kv_heads: int | None = None, pre_norm_qk: bool = False,
            pre_softcap: bool = False, layout: "LayoutFile | None" = None) -> Plan:
    """Choose and check the layout of a checkpoint.

    names  -- every tensor name; shape(name) -> its shape (header only)
    cfg    -- config.json ({} when absent)
    n_heads, n_kv_heads -- override the config's head counts
    pre_norm_qk -- accept q/k normalisation (the analysis is then of the
               pre-normalisation W_Kᵀ W_Q)
    pre_softcap -- accept attention-logit soft-capping (Gemma 2; Gemma 3 when set): the score is
               c·tanh(s/c) of the bilinear s = x_kᵀ L x_q / √d, and the analysis is of that L
    layout -- a user's layout file (:func:`read_layout`), which replaces the model_type's

    Raises QKInputError (one line) for an unfamiliar model_type, tensors
    that do not fit the model_type's layout, missing head counts,
    inconsistent shapes, an ambiguous GPT-2 orientation, fused QKV without a
    model_type, q/k normalisation without ``pre_norm_qk``, soft-capping
    without ``pre_softcap``, or score modifications that are not positional
    (clipping)."""
    if layout is not None:
        return _resolve_layout_file(layout, names, shape, cfg, path, n_heads, n_kv_heads, pre_norm_qk)
    cfg = effective_config(cfg)
    mt = cfg.get("model_type")
    if mt is not None:
        mt = str(mt)
        fam = BY_MODEL_TYPE.get(mt)
        if fam is None:
            raise QKInputError(f"{path}: config.json model_type {mt!r} is not a layout qkverify reads "
                               f"(it reads {SUPPORTED}); refusing rather than guessing where W_Q and W_K are "
                               "(describe it with --layout FILE)")
        prefix, layers, tensors = _collect(fam, names, path)
        if not layers:
            ex = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: {"layer": "0", "stack": "encoder"}.get(m.group(1), "q"),
                        f"{fam.prefixes[0]}{fam.body}").replace("\\.", ".")
            raise QKInputError(f"{path}: model_type {mt!r} but no tensor like {ex}; found e.g. {_examples(names)}")
        source = f"config.json model_type {mt!r}"
    else:
        fam = None
        for fname in BY_NAMES_ONLY:
            f = next(x for x in FAMILIES if x.name == fname)
            prefix, layers, tensors = _collect(f, names, path)
            if layers:
                fam = f
                break
        if fam is None:
            fused = [t for t in names if t.endswith("query_key_value.weight") or t.endswith("Wqkv.weight")
                     or t.endswith("qkv_proj.weight")]
            if fused:
                raise QKInputError(f"{path}: fused QKV tensors ({fused[0]}) but no config.json model_type: "
                                   "BLOOM and GPT-NeoX interleave q, k, v per head, MPT and Phi-3 stack blocks, "
                                   "Falcon groups them; put the model's config.json beside the weights "
                                   "(or describe the layout with --layout FILE)")
            raise QKInputError(f"{path}: unrecognised tensor layout (no config.json model_type, and no BERT, GPT-2 "
                               f"or Llama-style attention weights); {len(names)} tensors, e.g. {_examples(names)} "
                               "(describe it with --layout FILE)")
        mt = fam.name
        source = "tensor names (no model_type in config.json)"

    # --- score modifications that are not positional -------------------------
    softcap = None
    cap = cfg.get("attn_logit_softcapping", SOFTCAP_DEFAULT.get(mt)) if "attn_logit_softcapping" in cfg \
        else SOFTCAP_DEFAULT.get(mt)
    if cap is not None:
        if not pre_softcap:
            dflt = "" if "attn_logit_softcapping" in cfg else ", transformers' default for an absent key"
            raise QKInputError(f"{path}: {mt} caps attention logits (attn_logit_softcapping = {cap}{dflt}): the "
                               "score is c·tanh(s/c) of a bilinear form s, not bilinear; pass --pre-softcap to "
                               "analyse the bilinear form inside the cap")
        softcap = f"attention logits soft-capped: score = {cap}·tanh(s/{cap}) with s = x_kᵀ L x_q·scale"
    ac = cfg.get("attn_config") if isinstance(cfg.get("attn_config"), dict) else {}
    if fam.name == "mpt" and ac.get("clip_qkv") is not None:
        raise QKInputError(f"{path}: mpt clips q, k, v to ±{ac['clip_qkv']} (attn_config.clip_qkv): "
                           "the score is not a bilinear form of the inputs")
    qk_norm = _qk_norm(names, shape, cfg, ac, mt, path, pre_norm_qk)

    # --- dimensions ------------------------------------------------------------
    t0 = tensors[layers[0]]
    H = n_heads or _get(cfg, *fam.key_aliases("heads"))
    if not H:
        raise QKInputError(f"{path}: {mt} weights need the head count (no config.json "
                           f"{'/'.join(fam.key_aliases('heads')[:2])}; pass --n-heads)")
    H = _positive_int(H, "head count", path)
    Ncfg = _get(cfg, *fam.key_aliases("hidden"))
    Ncfg = _positive_int(Ncfg, "hidden size", path) if Ncfg is not None else None
    _check_layer_count(fam, cfg, layers, path)
    dh_cfg = _get(cfg, *fam.key_aliases("head_dim"))
    dh_cfg = _positive_int(dh_cfg, "head_dim", path) if dh_cfg is not None else None
    orientation = "linear"
    kind = fam.kind
    KV_cfg = n_kv_heads or _get(cfg, *fam.key_aliases("kv_heads"))
    if kind == "separate":
        sq, sk = shape(t0["q"]), shape(t0["k"])
        if len(sq) != 2 or len(sk) != 2 or sq[1] != sk[1]:
            raise QKInputError(f"{path}: {t0['q']} {list(sq)} / {t0['k']} {list(sk)} are not [rows, d_model] matrices")
        N = sq[1]
        dh = dh_cfg
        if dh is None:
            if sq[0] % H:
                raise QKInputError(f"{path}: {t0['q']} has {sq[0]} rows, not a multiple of n_heads = {H}")
            dh = sq[0] // H
        if dh * H != sq[0]:
            raise QKInputError(f"{path}: {t0['q']} has {sq[0]} rows, not n_heads·head_dim = {H}·{dh}")
        KV = _positive_int(KV_cfg, "num_key_value_heads", path) if KV_cfg else (sk[0] // dh if sk[0] % dh == 0 else 0)
        if KV * dh != sk[0]:
            raise QKInputError(f"{path}: {t0['k']} has {sk[0]} rows, not n_kv_heads·head_dim = {KV}·{dh}")
    else:
        s = shape(t0["qkv"])
        if len(s) != 2:
            raise QKInputError(f"{path}: {t0['qkv']} has shape {list(s)}, not a matrix")
        if kind == "gpt2":
            N, orientation = _gpt2_orientation(t0["qkv"], s, Ncfg, names, shape, prefix, path)
            for l in layers[1:]:
                sl = shape(tensors[l]["qkv"])
                if sl != s:
                    raise QKInputError(f"{path}: ambiguous c_attn orientation: {tensors[l]['qkv']} is {list(sl)} but "
                                       f"{t0['qkv']} is {list(s)}")
        else:
            N = s[1]
        if dh_cfg is None and N % H:
            raise QKInputError(f"{path}: d_model {N} does not split into {H} heads")
        dh = N // H
        if dh_cfg is not None and dh_cfg != dh and (kind == "gpt2" or fam.name in ("bloom", "gpt_neox", "falcon",
                                                                                    "gpt_bigcode", "mpt")):
            raise QKInputError(f"{path}: config head_dim {dh_cfg} but d_model/n_heads = {dh}")
        dh = dh_cfg or dh
        kind, KV = _fused_kind(fam, mt, cfg, ac, H, KV_cfg, n_kv_heads, path)
        if kind != "gpt2" and s[0] != (H + 2 * KV) * dh:
            raise QKInputError(f"{path}: {t0['qkv']} has {s[0]} rows, not (n_heads + 2·n_kv_heads)·d_head = "
                               f"({H} + 2·{KV})·{dh} for the {kind} layout of {mt}")
    if Ncfg is not None and Ncfg != N:
        raise QKInputError(f"{path}: config hidden size {Ncfg} but the attention weights have d_model = {N}")
    kv_head_of(0, H, KV)   # KV divides H

    want = _check_shapes(layers, tensors, shape, path)
    biases = _biases(layers, tensors, names, shape, want, kind, orientation, path)
    if source.startswith("config"):
        try:
            positional = _positional(fam, mt, cfg, dh, names, prefix, layers)
        except (ValueError, TypeError, ArithmeticError) as err:
            raise QKInputError(f"{path}: positional encoding not readable from config.json ({err.__class__.__name__}: "
                               f"{str(err).splitlines()[0] if str(err) else ''})") from None
        positional = _checked_positional(positional, len(layers), f"{path}: config.json")
    else:
        positional = lambda l: pos.unknown("no config.json model_type")  # noqa: E731
    layout = fam.description.replace("{mt}", mt)
    if kind == "gpt2":
        layout += (", Conv1D [in, out] = [d_model, 3·d_model]" if orientation == "conv1d"
                   else ", Linear [out, in] = [3·d_model, d_model]")
    elif fam.name in ("falcon", "gpt_bigcode"):
        layout += {"blocks": f" [(H + 2)·d_head, d_model]: Q heads, then one key head and one value head "
                             f"(multi-query)",
                   "interleaved": " [3·H·d_head, d_model], interleaved per head [q_i; k_i; v_i]",
                   "grouped": " [(H + 2·KV)·d_head, d_model], per key head g: its H/KV query heads, k_g, v_g "
                              "(new_decoder_architecture)"}[kind]
    plan = Plan(fam, mt, layout, source, prefix, layers, tensors, biases, H, KV, N, dh, orientation, qk_norm,
                positional, kind=kind, softcap=softcap)
    if fam.stacks:
        plan.layout += "; layers " + ", ".join(
            f"{st} {[i for i, l in enumerate(layers) if l[0] == st][0]}..{[i for i, l in enumerate(layers) if l[0] == st][-1]}"
            for st in fam.stacks if any(l[0] == st for l in layers))
    return plan


def _qk_norm(names, shape, cfg: dict, ac: dict, mt: str, path, pre_norm_qk: bool) -> str | None:
    """Description of q/k normalisation after the projections, or None; QKInputError without
    ``pre_norm_qk``."""
    norm_names = [t for t in names if NORM_NAME.search(t)]
    cfg_norm = [k for k, v in (("qk_layernorm", cfg.get("qk_layernorm")), ("use_qk_norm", cfg.get("use_qk_norm")),
                               ("attn_config.qk_ln", ac.get("qk_ln")), ("attn_config.qk_gn", ac.get("qk_gn"))) if v]
    if not (norm_names or cfg_norm):
        return None
    what = norm_names[0] if norm_names else f"config {cfg_norm[0]}"
    if not pre_norm_qk:
        raise QKInputError(f"{path}: {mt} normalises q and k after the projections ({what}"
                           f"{', …' if len(norm_names) > 1 else ''}), so its attention score is not a fixed "
                           "bilinear form; pass --pre-norm-qk to analyse the pre-normalisation W_Kᵀ W_Q")
    if norm_names:
        return f"q/k normalised after the projections ({norm_names[0]}, weight shape {list(shape(norm_names[0]))})"
    return f"q/k normalised after the projections (config {cfg_norm[0]})"


def _check_layer_count(fam: Family, cfg: dict, layers: list, path) -> None:
    """The config's layer count(s) against the layers found (per stack for encoder-decoder models:
    ``num_layers`` encoder blocks, ``num_decoder_layers`` decoder blocks, default ``num_layers``);
    a count that is not a positive integer is refused too."""
    if fam.stacks:
        n_enc = _get(cfg, *fam.key_aliases("layers"))
        n_dec = _get(cfg, "num_decoder_layers", default=n_enc)
        for stack, want in (("encoder", n_enc), ("decoder", n_dec)):
            got = sum(1 for l in layers if l[0] == stack)
            if want is not None:
                want = _positive_int(want, f"{stack} layer count", path)
            if got and want is not None and want != got:
                raise QKInputError(f"{path}: config.json says {want} {stack} layers, the checkpoint has "
                                   f"self-attention weights for {got}")
        return
    nl_cfg = _get(cfg, *fam.key_aliases("layers"))
    if nl_cfg is not None:
        nl_cfg = _positive_int(nl_cfg, "layer count", path)
    if nl_cfg is not None and nl_cfg != len(layers):
        raise QKInputError(f"{path}: config.json says {nl_cfg} layers, the checkpoint has attention weights for "
                           f"{len(layers)} (layers 0..{len(layers) - 1})")


def _fused_kind(fam: Family, mt: str, cfg: dict, ac: dict, H: int, KV_cfg, n_kv_heads, path) -> tuple[str, int]:
    """(kind, KV) of a fused QKV tensor from the family and its config keys."""
    if fam.kind == "gpt2" or fam.name in ("bloom", "gpt_neox"):
        return fam.kind, H
    if fam.name == "falcon":
        # transformers' FalconAttention: new_decoder_architecture -> per key head groups; else
        # multi_query (FalconConfig default True) -> one key head after the query heads; else per head.
        # Custom-code configs (RefinedWeb*) convert as transformers' converter does: n_head_kv present
        # means the new architecture.
        new = cfg.get("new_decoder_architecture")
        if mt in ("RefinedWeb", "RefinedWebModel") and new is None:
            new = "n_head_kv" in cfg
        if new:
            KV = _positive_int(KV_cfg or H, "num_kv_heads", path)
            return "grouped", KV
        if cfg.get("multi_query", True):
            return "blocks", 1
        return "interleaved", H
    if fam.name == "gpt_bigcode":
        # GPTBigCodeAttention: multi_query (default True) -> [Q; k; v]; else a view (H, 3·d): per head
        return ("blocks", 1) if cfg.get("multi_query", True) else ("interleaved", H)
    if fam.name == "mpt":
        KV = n_kv_heads or ac.get("kv_n_heads") or (H if ac.get("attn_type", "multihead_attention") ==
                                                      "multihead_attention" else None)
        if ac.get("attn_type") == "multiquery_attention" and not n_kv_heads:
            KV = 1
        if not KV:
            raise QKInputError(f"{path}: mpt attn_type {ac.get('attn_type')!r} without attn_config.kv_n_heads")
        return "blocks", _positive_int(KV, "kv_n_heads", path)
    # phi3: Q, K, V blocks with num_key_value_heads (default num_attention_heads)
    return "blocks", _positive_int(KV_cfg or H, "num_key_value_heads", path)


def _check_shapes(layers: list, tensors: dict, shape, path) -> dict:
    """Every layer's tensors have layer 0's shapes (headers only); returns those shapes."""
    t0 = tensors[layers[0]]
    want = {key: shape(t) for key, t in t0.items()}
    for l in layers:
        for key, t in tensors[l].items():
            if shape(t) != want[key]:
                raise QKInputError(f"{path}: {t} has shape {list(shape(t))}, layer 0's has {list(want[key])}")
    return want


def _biases(layers: list, tensors: dict, names: list[str], shape, want: dict, kind: str, orientation: str,
            path) -> dict:
    """layer id -> {key: bias name} for the ``….bias`` tensors beside the weights (shapes checked)."""
    nameset = set(names)
    biases: dict = {}
    for l in layers:
        for key, t in tensors[l].items():
            if not t.endswith("weight"):
                continue
            b = t[: -len("weight")] + "bias"
            if b in nameset:
                sb = shape(b)
                rows = want[key][1] if orientation == "conv1d" else want[key][0]
                if sb != (rows,):
                    raise QKInputError(f"{path}: bias {b} has shape {list(sb)}, expected [{rows}]")
                biases.setdefault(l, {})[key] = b
    return biases


def _gpt2_orientation(t: str, s: tuple, Ncfg: int | None, names: list[str], shape, prefix: str,
                      path) -> tuple[int, str]:
    """(d_model, "conv1d" | "linear") of a GPT-2 c_attn weight of shape s:
    [N, 3N] is HF's Conv1D, [3N, N] a Linear; N from the config, else the
    token embedding (``wte.weight`` [vocab, N]), else the shape alone.
    QKInputError when the shape fits neither reading."""
    N = Ncfg
    how = "config n_embd"
    if N is None:
        wte = prefix + "wte.weight"
        if wte in names and len(shape(wte)) == 2:
            N, how = shape(wte)[1], f"{wte} width"
    r, c = s
    if N is not None:
        if (r, c) == (N, 3 * N):
            return N, "conv1d"
        if (r, c) == (3 * N, N):
            return N, "linear"
        raise QKInputError(f"{path}: {t} has shape {[r, c]}; with d_model = {N} ({how}) it is neither Conv1D "
                           f"[{N}, {3 * N}] nor Linear [{3 * N}, {N}]")
    if c == 3 * r:
        return r, "conv1d"
    if r == 3 * c:
        return c, "linear"
    raise QKInputError(f"{path}: {t} has shape {[r, c]}, neither [d, 3d] (Conv1D) nor [3d, d] (Linear)")


# ---------------------------------------------------------------------------
# layout files (--layout FILE): a user's description of a checkpoint qkverify has no family for

#: the keys a layout file may have (anything else is refused, naming it)
LAYOUT_KEYS = ("n_heads", "n_kv_heads", "d_head", "d_model", "query", "key", "qkv", "fused", "order",
               "orientation", "kv_head", "positional", "name", "description")
FUSED_KINDS = {"blocks": "blocks", "grouped": "grouped", "per_head": "interleaved"}


@dataclass(frozen=True)
class LayoutFile:
    """A layout file, read and checked (:func:`read_layout`; format in the README, *Models*).

    path, sha256 -- where it came from (recorded as the layout source)
    query, key   -- tensor-name templates with one ``{layer}`` (separate projections), or
    qkv          -- the template of one fused tensor, cut by ``fused`` (blocks | grouped |
                    per_head) with its parts in ``order``
    orientation  -- ``linear`` ([out, in], rows are outputs) or ``conv1d`` ([in, out])
    kv_head      -- the key head of each query head (default h // (n_heads / n_kv_heads))
    """

    path: str
    sha256: str
    n_heads: int
    n_kv_heads: int
    d_head: int | None
    d_model: int | None
    query: str | None
    key: str | None
    qkv: str | None
    fused: str
    order: tuple[str, ...]
    orientation: str
    kv_head: tuple[int, ...] | None
    positional: dict | None
    name: str | None
    description: str | None


def read_layout(path: str | Path) -> LayoutFile:
    """Read a layout file (``.toml`` or ``.json``) and check it: known keys only, one ``{layer}``
    in each template, either query + key or qkv, positive head counts with n_kv_heads dividing
    n_heads, ``order`` a permutation of q, k, v, ``kv_head`` one key head in range per query head
    (and, for a grouped tensor, the group that holds it).  Raises QKInputError naming the problem."""
    import hashlib
    import json

    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as err:
        raise QKInputError(f"{p}: cannot read the layout file ({err.strerror or err.__class__.__name__})") from None
    try:
        if p.suffix.lower() == ".json":
            doc = json.loads(raw.decode("utf-8"))
        else:
            import tomllib

            doc = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise QKInputError(f"{p}: not a readable layout file ({err.__class__.__name__}: "
                           f"{str(err).splitlines()[0] if str(err) else ''})") from None
    if not isinstance(doc, dict):
        raise QKInputError(f"{p}: a layout file is a table (TOML) or an object (JSON)")
    extra = sorted(set(doc) - set(LAYOUT_KEYS))
    if extra:
        raise QKInputError(f"{p}: unknown key {extra[0]!r} (a layout file has {', '.join(LAYOUT_KEYS)})")

    def count(key: str, default=None):
        v = doc.get(key, default)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise QKInputError(f"{p}: {key} = {v!r} is not a positive integer")
        return v

    H = count("n_heads")
    if H is None:
        raise QKInputError(f"{p}: n_heads is required")
    KV = count("n_kv_heads", H)
    if H % KV:
        raise QKInputError(f"{p}: n_kv_heads = {KV} does not divide n_heads = {H}")
    tmpl = {}
    for key in ("query", "key", "qkv"):
        v = doc.get(key)
        if v is None:
            continue
        if not isinstance(v, str) or v.count("{layer}") != 1:
            raise QKInputError(f"{p}: {key} = {v!r} must be a tensor name with one {{layer}}")
        tmpl[key] = v
    if ("qkv" in tmpl) == ("query" in tmpl or "key" in tmpl) or ("qkv" not in tmpl and len(tmpl) != 2):
        raise QKInputError(f"{p}: give either query and key (separate tensors) or qkv (one fused tensor)")
    fused = doc.get("fused", "blocks")
    if fused not in FUSED_KINDS:
        raise QKInputError(f"{p}: fused = {fused!r} (expected {', '.join(FUSED_KINDS)})")
    if "fused" in doc and "qkv" not in tmpl:
        raise QKInputError(f"{p}: fused describes a qkv tensor; this layout has query and key")
    if fused == "per_head" and KV != H:
        raise QKInputError(f"{p}: fused = 'per_head' needs n_kv_heads = n_heads (use 'grouped' for grouped-query)")
    order = doc.get("order", ["q", "k", "v"])
    if not isinstance(order, list) or sorted(order) != ["k", "q", "v"]:
        raise QKInputError(f"{p}: order = {order!r} must list q, k, v once each")
    orient = doc.get("orientation", "linear")
    if orient not in ("linear", "conv1d"):
        raise QKInputError(f"{p}: orientation = {orient!r} (expected linear [out, in] or conv1d [in, out])")
    kvh = doc.get("kv_head")
    if kvh is not None:
        if not isinstance(kvh, list) or len(kvh) != H or any(isinstance(g, bool) or not isinstance(g, int)
                                                             or not 0 <= g < KV for g in kvh):
            raise QKInputError(f"{p}: kv_head must list one key head in 0..{KV - 1} for each of the {H} query heads")
        if "qkv" in tmpl and fused != "blocks" and any(g != h // (H // KV) for h, g in enumerate(kvh)):
            raise QKInputError(f"{p}: in a {fused} tensor each query head uses the key head of its group; "
                               "kv_head disagrees")
        kvh = tuple(kvh)
    posd = doc.get("positional")
    if posd is not None and not isinstance(posd, dict):
        posd = {"kind": str(posd)}
    for key in ("name", "description"):
        if doc.get(key) is not None and not isinstance(doc[key], str):
            raise QKInputError(f"{p}: {key} must be text")
    return LayoutFile(str(p.resolve()), hashlib.sha256(raw).hexdigest(), H, KV, count("d_head"), count("d_model"),
                      tmpl.get("query"), tmpl.get("key"), tmpl.get("qkv"), fused, tuple(order), orient, kvh,
                      posd, doc.get("name"), doc.get("description"))


def _layout_positional(lf: LayoutFile, dh: int, where: str) -> dict:
    """The positional descriptor a layout file gives: ``{kind = "rope", base, pairing[, rotary_dim |
    partial_rotary_factor]}`` is checked and completed like the families' ones; other kinds are recorded
    as given; none is ``unknown``."""
    if not lf.positional:
        return pos.unknown("the layout file gives none")
    d = dict(lf.positional)
    if d.get("kind") != "rope":
        return d
    try:
        out = pos.rope(dh, d["base"], "layout file", d.get("pairing", "half_split"),
                       factor=d.get("partial_rotary_factor"), rotary_dim=d.get("rotary_dim"))
    except (KeyError, ValueError, TypeError) as err:
        raise QKInputError(f"{where}: positional rope needs base and pairing half_split | interleaved "
                           f"({err.__class__.__name__}: {err})") from None
    return _checked_positional(lambda l: out, 1, f"{where}: positional")(0)


def _template_rx(t: str) -> re.Pattern:
    a, b = t.split("{layer}")
    return re.compile(re.escape(a) + r"(\d+)" + re.escape(b))


def _resolve_layout_file(lf: LayoutFile, names: list[str], shape, cfg: dict, path, n_heads, n_kv_heads,
                         pre_norm_qk: bool) -> Plan:
    """The Plan a layout file describes, checked against the checkpoint's tensor names and shapes."""
    where = f"{path} with layout {Path(lf.path).name}"
    H, KV = n_heads or lf.n_heads, n_kv_heads or lf.n_kv_heads
    if (n_heads or n_kv_heads) and (H, KV) != (lf.n_heads, lf.n_kv_heads):
        raise QKInputError(f"{where}: --n-heads/--n-kv-heads disagree with the layout file")
    roles = {"qkv": lf.qkv} if lf.qkv else {"q": lf.query, "k": lf.key}
    tensors: dict = {}
    for key, t in roles.items():
        rx = _template_rx(t)
        for nm in names:
            m = rx.fullmatch(nm)
            if m:
                tensors.setdefault(int(m.group(1)), {})[key] = nm
    if not tensors:
        ex = next(iter(roles.values())).replace("{layer}", "0")
        raise QKInputError(f"{where}: no tensor like {ex}; found e.g. {_examples(names)}")
    layers = sorted(tensors)
    for l in layers:
        for key, t in roles.items():
            if key not in tensors[l]:
                raise QKInputError(f"{where}: layer {l} has no {t.replace('{layer}', str(l))}")
    if layers != list(range(len(layers))):
        raise QKInputError(f"{where}: layer numbers {layers[:6]} are not 0, 1, 2, … (a partial checkpoint?)")
    want = _check_shapes(layers, tensors, shape, path)
    conv = lf.orientation == "conv1d"
    for key, s in want.items():
        if len(s) != 2:
            raise QKInputError(f"{where}: {tensors[0][key]} has shape {list(s)}, not a matrix")
    s0 = want["qkv" if lf.qkv else "q"]
    out_rows, N = (s0[1], s0[0]) if conv else (s0[0], s0[1])
    if lf.qkv:
        kind = FUSED_KINDS[lf.fused]
        dh = lf.d_head or (out_rows // (H + 2 * KV) if out_rows % (H + 2 * KV) == 0 else None)
        if dh is None or out_rows != (H + 2 * KV) * dh:
            raise QKInputError(f"{where}: {tensors[0]['qkv']} has {out_rows} outputs, not (n_heads + 2·n_kv_heads)"
                               f"·d_head = ({H} + 2·{KV})·{dh or 'd_head'}")
    else:
        kind = "separate"
        sk = want["k"]
        k_rows, Nk = (sk[1], sk[0]) if conv else (sk[0], sk[1])
        dh = lf.d_head or (out_rows // H if out_rows % H == 0 else None)
        if dh is None or out_rows != H * dh:
            raise QKInputError(f"{where}: {tensors[0]['q']} has {out_rows} outputs, not n_heads·d_head = "
                               f"{H}·{dh or 'd_head'}")
        if Nk != N or k_rows != KV * dh:
            raise QKInputError(f"{where}: {tensors[0]['k']} has shape {list(sk)}, expected "
                               f"{[N, KV * dh] if conv else [KV * dh, N]} (n_kv_heads·d_head outputs)")
    if lf.d_model is not None and lf.d_model != N:
        raise QKInputError(f"{where}: d_model = {lf.d_model} but the weights have {N} inputs")
    qk_norm = _qk_norm(names, shape, cfg, {}, "this model", path, pre_norm_qk)
    biases = _biases(layers, tensors, names, shape, want, kind, lf.orientation, path)
    posd = _layout_positional(lf, dh, where)
    desc = lf.description or (f"layout file: separate {lf.query} / {lf.key}" if not lf.qkv else
                              f"layout file: fused {lf.qkv}, {lf.fused} {''.join(lf.order)}")
    fam = Family("layout", (), kind, ("",), "", ("q", "k") if not lf.qkv else None, desc)
    return Plan(fam, "layout", desc + (", Conv1D [in, out]" if conv else ""),
                f"layout file {Path(lf.path).name} (sha256 {lf.sha256[:16]}…)", "", layers, tensors, biases,
                H, KV, N, dh, lf.orientation, qk_norm, lambda l: posd, kind=kind, order=lf.order, kv_map=lf.kv_head)
