"""Checkpoint layouts: where each head's W_Q and W_K sit in a safetensors
checkpoint, chosen from ``config.json``'s ``model_type``.

Families (tensor names as the transformers model classes write them; every
family accepts the prefixes its model classes add, and exactly one prefix
per checkpoint):

=========  ==========================================  ==================================================
family     model_type                                  query/key tensors of layer l
=========  ==========================================  ==================================================
bert       bert, roberta, xlm-roberta                  ``[bert.|roberta.]encoder.layer.l.attention.self.{query,key}.weight``
opt        opt                                         ``[model.]decoder.layers.l.self_attn.{q,k}_proj.weight``
llama      llama, mistral, mixtral, qwen2, qwen3,      ``[model.|language_model.model.|model.language_model.]layers.l.self_attn.{q,k}_proj.weight``
           olmo2, gemma3_text, gemma3
gptj       gptj                                        ``[transformer.]h.l.attn.{q,k}_proj.weight``
gpt2       gpt2                                        ``[transformer.]h.l.attn.c_attn.weight`` (fused)
bloom      bloom                                       ``[transformer.]h.l.self_attention.query_key_value.weight`` (fused, interleaved)
gpt_neox   gpt_neox                                    ``[gpt_neox.]layers.l.attention.query_key_value.weight`` (fused, interleaved)
mpt        mpt                                         ``[transformer.]blocks.l.attn.Wqkv.weight`` (fused, Q/K/V blocks)
=========  ==========================================  ==================================================

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
* MPT ``Wqkv``: ``[H·d + 2·KV·d, N]``, blocks Q, K, V: W_Q = rows h·d:(h+1)·d,
  W_K = rows H·d + g·d : H·d + (g+1)·d.

Biases (``….bias`` beside the weight) are sliced with the same indices.

Without a ``model_type`` (no config.json, or one without the key) only the
unambiguous separate-projection and GPT-2 names are accepted (BERT, GPT-2,
Llama-style); fused ``query_key_value``/``Wqkv`` tensors need the
model_type, because interleaved and block layouts have the same shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import QKInputError
from . import positional as pos
from .base import kv_head_of


@dataclass(frozen=True)
class Family:
    """One checkpoint layout (see module docstring)."""

    name: str
    model_types: tuple[str, ...]
    kind: str                 # "separate" | "gpt2" | "interleaved" | "blocks"
    prefixes: tuple[str, ...]
    body: str                 # regex of a query/key (or fused) weight name after the prefix; group 1 = layer
    roles: tuple[str, str] | None
    description: str
    norm_body: str | None = None   # regex of q/k normalisation weights after the prefix


FAMILIES: tuple[Family, ...] = (
    Family("bert", ("bert", "roberta", "xlm-roberta"), "separate", ("", "bert.", "roberta."),
           r"encoder\.layer\.(\d+)\.attention\.self\.(query|key)\.weight", ("query", "key"),
           "bert: separate query/key Linear [out, in]"),
    Family("opt", ("opt",), "separate", ("model.", ""),
           r"decoder\.layers\.(\d+)\.self_attn\.(q|k)_proj\.weight", ("q", "k"),
           "opt: separate q_proj/k_proj Linear [out, in]"),
    Family("llama", ("llama", "mistral", "mixtral", "qwen2", "qwen3", "olmo2", "gemma3_text", "gemma3"), "separate",
           ("model.", "", "language_model.model.", "model.language_model."),
           r"layers\.(\d+)\.self_attn\.(q|k)_proj\.weight", ("q", "k"),
           "llama: separate q_proj/k_proj Linear [out, in], grouped-query attention",
           r"layers\.(\d+)\.self_attn\.(q|k)_norm\.weight"),
    Family("gptj", ("gptj",), "separate", ("transformer.", ""),
           r"h\.(\d+)\.attn\.(q|k)_proj\.weight", ("q", "k"),
           "gptj: separate q_proj/k_proj Linear [out, in]"),
    Family("gpt2", ("gpt2",), "gpt2", ("transformer.", ""),
           r"h\.(\d+)\.attn\.c_attn\.weight", None,
           "gpt2: fused c_attn, Q, K, V blocks of d_model outputs"),
    Family("bloom", ("bloom",), "interleaved", ("transformer.", ""),
           r"h\.(\d+)\.self_attention\.query_key_value\.weight", None,
           "bloom: fused query_key_value Linear [3·H·d_head, d_model], interleaved per head [q_i; k_i; v_i]"),
    Family("gpt_neox", ("gpt_neox",), "interleaved", ("gpt_neox.", ""),
           r"layers\.(\d+)\.attention\.query_key_value\.weight", None,
           "gpt_neox: fused query_key_value Linear [3·H·d_head, d_model], interleaved per head [q_i; k_i; v_i]"),
    Family("mpt", ("mpt",), "blocks", ("transformer.", ""),
           r"blocks\.(\d+)\.attn\.Wqkv\.weight", None,
           "mpt: fused Wqkv Linear [(H + 2·KV)·d_head, d_model], Q, K, V blocks",
           r"blocks\.(\d+)\.attn\.(q|k)_ln\.weight"),
)
BY_MODEL_TYPE = {mt: f for f in FAMILIES for mt in f.model_types}
#: families tried, in order, when there is no model_type
BY_NAMES_ONLY = ("bert", "gpt2", "llama")
SUPPORTED = ", ".join(sorted(BY_MODEL_TYPE))

#: any tensor that normalises queries or keys after the projection (fail closed on all of them)
NORM_NAME = re.compile(r"(?:^|\.)(q_norm|k_norm|q_ln|k_ln|q_layernorm|k_layernorm|query_layernorm|key_layernorm|"
                       r"qk_norm|q_layer_norm|k_layer_norm)(?:\.|$)")

#: documented defaults of transformers' config classes for keys a config.json may omit
ROPE_THETA_DEFAULT = {"llama": 10000.0, "mistral": 10000.0, "mixtral": 1e6, "qwen2": 10000.0, "qwen3": 10000.0,
                      "olmo2": 10000.0, "gemma3_text": 1e6, "gemma3": 1e6}


@dataclass
class Plan:
    """A resolved layout: which tensors hold each layer's heads and how to cut them.

    family, arch     -- the Family and the model_type (or family name)
    layout           -- human-readable description (goes into every record)
    layout_source    -- how the layout was chosen (config model_type or names)
    prefix           -- the one name prefix the checkpoint uses
    layer_ids        -- layer numbers found, consecutive from 0
    tensors          -- layer id -> {"q": name, "k": name} or {"qkv": name}
    biases           -- layer id -> {"q"/"k"/"qkv": bias name} (present ones)
    H, KV, N, dh     -- query heads, key heads, d_model, d_head
    orientation      -- "linear" ([out, in]) or "conv1d" ([in, out], GPT-2)
    qk_norm          -- description of q/k normalisation, or None
    positional       -- layer index -> positional descriptor
    """

    family: Family
    arch: str
    layout: str
    layout_source: str
    prefix: str
    layer_ids: list[int]
    tensors: dict[int, dict[str, str]]
    biases: dict[int, dict[str, str]]
    H: int
    KV: int
    N: int
    dh: int
    orientation: str = "linear"
    qk_norm: str | None = None
    positional: Callable[[int], dict] = field(default=lambda l: pos.unknown("not recorded"))

    def head_slices(self, h: int) -> tuple[tuple[str, int, int, int], tuple[str, int, int, int]]:
        """((key, axis, a, b) for W_Q, the same for W_K) of query head h:
        ``key`` names the tensor in ``tensors[layer]`` ("q", "k" or "qkv"),
        axis 0 = rows of a ``[out, in]`` tensor, 1 = columns of an
        ``[in, out]`` tensor (to be transposed)."""
        d, H, KV, N = self.dh, self.H, self.KV, self.N
        g = kv_head_of(h, H, KV)
        kind = self.family.kind
        if kind == "separate":
            return ("q", 0, h * d, (h + 1) * d), ("k", 0, g * d, (g + 1) * d)
        if kind == "gpt2":
            ax = 1 if self.orientation == "conv1d" else 0
            return ("qkv", ax, h * d, (h + 1) * d), ("qkv", ax, N + h * d, N + (h + 1) * d)
        if kind == "interleaved":
            base = 3 * h * d
            return ("qkv", 0, base, base + d), ("qkv", 0, base + d, base + 2 * d)
        if kind == "blocks":
            return ("qkv", 0, h * d, (h + 1) * d), ("qkv", 0, H * d + g * d, H * d + (g + 1) * d)
        raise AssertionError(kind)


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


def _match(fam: Family, names: list[str], body: str | None = None) -> dict[str, list[tuple[str, int, str | None]]]:
    """prefix -> [(name, layer, role)] of names matching ``prefix + body``."""
    rx = re.compile(body or fam.body)
    out: dict[str, list] = {}
    for t in names:
        for p in fam.prefixes:
            if t.startswith(p):
                m = rx.fullmatch(t[len(p):])
                if m:
                    out.setdefault(p, []).append((t, int(m.group(1)), m.group(2) if m.lastindex and m.lastindex > 1 else None))
                    break
    return out


def _examples(names: list[str], k: int = 6) -> str:
    return ", ".join(names[:k]) + (" …" if len(names) > k else "")


def _collect(fam: Family, names: list[str], path) -> tuple[str, list[int], dict[int, dict[str, str]]]:
    """(prefix, layer ids, layer -> role -> tensor name) for a family;
    QKInputError for two prefixes, missing roles or gaps in the layers."""
    found = _match(fam, names)
    if not found:
        return "", [], {}
    if len(found) > 1:
        ps = sorted(found)
        raise QKInputError(f"{path}: attention weights under two prefixes ({', '.join(repr(p) for p in ps)}), e.g. "
                           f"{found[ps[0]][0][0]} and {found[ps[1]][0][0]}; keep one model per checkpoint")
    prefix, hits = next(iter(found.items()))
    tensors: dict[int, dict[str, str]] = {}
    for t, l, role in hits:
        key = "qkv" if fam.roles is None else ("q" if role == fam.roles[0] else "k")
        tensors.setdefault(l, {})[key] = t
    layers = sorted(tensors)
    need = ("qkv",) if fam.roles is None else ("q", "k")
    for l in layers:
        for r in need:
            if r not in tensors[l]:
                want = "fused QKV" if r == "qkv" else f"{fam.roles[0 if r == 'q' else 1]}"
                raise QKInputError(f"{path}: layer {l} has no {want} weight")
    if layers != list(range(len(layers))):
        raise QKInputError(f"{path}: layer numbers {layers[:6]}{'…' if len(layers) > 6 else ''} are not 0, 1, 2, … "
                           "(a partial checkpoint?)")
    return prefix, layers, tensors


# ---------------------------------------------------------------------------
# positional encodings per family


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
                n_layers: int) -> Callable[[int], dict]:
    """layer -> positional descriptor for a family (module positional)."""
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
    # llama family: RoPE, rotate_half pairing
    factor = _get(cfg, "partial_rotary_factor")
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
            n_heads: int | None = None, n_kv_heads: int | None = None, pre_norm_qk: bool = False) -> Plan:
    """Choose and check the layout of a checkpoint.

    names  -- every tensor name; shape(name) -> its shape (header only)
    cfg    -- config.json ({} when absent)
    n_heads, n_kv_heads -- override the config's head counts
    pre_norm_qk -- accept q/k normalisation (the analysis is then of the
               pre-normalisation W_Kᵀ W_Q)

    Raises QKInputError (one line) for an unfamiliar model_type, tensors
    that do not fit the model_type's layout, missing head counts,
    inconsistent shapes, an ambiguous GPT-2 orientation, fused QKV without a
    model_type, q/k normalisation without ``pre_norm_qk``, or score
    modifications that are not positional (soft-capping, clipping)."""
    cfg = effective_config(cfg)
    mt = cfg.get("model_type")
    if mt is not None:
        mt = str(mt)
        fam = BY_MODEL_TYPE.get(mt)
        if fam is None:
            raise QKInputError(f"{path}: config.json model_type {mt!r} is not a layout qkverify reads "
                               f"(it reads {SUPPORTED}); refusing rather than guessing where W_Q and W_K are")
        prefix, layers, tensors = _collect(fam, names, path)
        if not layers:
            ex = f"{fam.prefixes[0]}{fam.body}".replace("\\.", ".").replace("(\\d+)", "0")
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
            fused = [t for t in names if t.endswith("query_key_value.weight") or t.endswith("Wqkv.weight")]
            if fused:
                raise QKInputError(f"{path}: fused QKV tensors ({fused[0]}) but no config.json model_type: "
                                   "BLOOM and GPT-NeoX interleave q, k, v per head, MPT stacks blocks; "
                                   "put the model's config.json beside the weights")
            raise QKInputError(f"{path}: unrecognised tensor layout (no config.json model_type, and no BERT, GPT-2 "
                               f"or Llama-style attention weights); {len(names)} tensors, e.g. {_examples(names)}")
        mt = fam.name
        source = "tensor names (no model_type in config.json)"

    # --- score modifications that are not positional -------------------------
    if mt in ("gemma3", "gemma3_text") and cfg.get("attn_logit_softcapping") is not None:
        raise QKInputError(f"{path}: {mt} caps attention logits (attn_logit_softcapping = "
                           f"{cfg['attn_logit_softcapping']}): the score is a tanh of a bilinear form, not bilinear")
    ac = cfg.get("attn_config") if isinstance(cfg.get("attn_config"), dict) else {}
    if fam.name == "mpt" and ac.get("clip_qkv") is not None:
        raise QKInputError(f"{path}: mpt clips q, k, v to ±{ac['clip_qkv']} (attn_config.clip_qkv): "
                           "the score is not a bilinear form of the inputs")
    norm_names = [t for t in names if NORM_NAME.search(t)]
    cfg_norm = [k for k, v in (("qk_layernorm", cfg.get("qk_layernorm")), ("use_qk_norm", cfg.get("use_qk_norm")),
                               ("attn_config.qk_ln", ac.get("qk_ln")), ("attn_config.qk_gn", ac.get("qk_gn"))) if v]
    qk_norm = None
    if norm_names or cfg_norm:
        what = norm_names[0] if norm_names else f"config {cfg_norm[0]}"
        if not pre_norm_qk:
            raise QKInputError(f"{path}: {mt} normalises q and k after the projections ({what}"
                               f"{', …' if len(norm_names) > 1 else ''}), so its attention score is not a fixed "
                               "bilinear form; pass --pre-norm-qk to analyse the pre-normalisation W_Kᵀ W_Q")
        if norm_names:
            shp = shape(norm_names[0])
            qk_norm = f"q/k normalised after the projections ({norm_names[0]}, weight shape {list(shp)})"
        else:
            qk_norm = f"q/k normalised after the projections (config {cfg_norm[0]})"

    # --- dimensions ------------------------------------------------------------
    t0 = tensors[layers[0]]
    H = n_heads or _get(cfg, "num_attention_heads", "n_head", "n_heads")
    if not H:
        raise QKInputError(f"{path}: {mt} weights need the head count (no config.json num_attention_heads/n_head; "
                           "pass --n-heads)")
    H = _positive_int(H, "head count", path)
    Ncfg = _get(cfg, "hidden_size", "n_embd", "n_embed", "d_model")
    Ncfg = _positive_int(Ncfg, "hidden size", path) if Ncfg is not None else None
    nl_cfg = _get(cfg, "num_hidden_layers", "n_layer", "n_layers")
    if nl_cfg is not None and int(nl_cfg) != len(layers):
        raise QKInputError(f"{path}: config.json says {nl_cfg} layers, the checkpoint has attention weights for "
                           f"{len(layers)} (layers 0..{len(layers) - 1})")
    orientation = "linear"
    kind = fam.kind
    if kind == "separate":
        sq, sk = shape(t0["q"]), shape(t0["k"])
        if len(sq) != 2 or len(sk) != 2 or sq[1] != sk[1]:
            raise QKInputError(f"{path}: {t0['q']} {list(sq)} / {t0['k']} {list(sk)} are not [rows, d_model] matrices")
        N = sq[1]
        dh = _get(cfg, "head_dim")
        dh = _positive_int(dh, "head_dim", path) if dh is not None else None
        if dh is None:
            if sq[0] % H:
                raise QKInputError(f"{path}: {t0['q']} has {sq[0]} rows, not a multiple of n_heads = {H}")
            dh = sq[0] // H
        if dh * H != sq[0]:
            raise QKInputError(f"{path}: {t0['q']} has {sq[0]} rows, not n_heads·head_dim = {H}·{dh}")
        KV = n_kv_heads or _get(cfg, "num_key_value_heads")
        KV = _positive_int(KV, "num_key_value_heads", path) if KV else (sk[0] // dh if sk[0] % dh == 0 else 0)
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
        if N % H:
            raise QKInputError(f"{path}: d_model {N} does not split into {H} heads")
        dh = N // H
        if _get(cfg, "head_dim") is not None and int(cfg["head_dim"]) != dh:
            raise QKInputError(f"{path}: config head_dim {cfg['head_dim']} but d_model/n_heads = {dh}")
        KV = H
        if kind == "blocks":
            KV = n_kv_heads or ac.get("kv_n_heads") or (H if ac.get("attn_type", "multihead_attention") ==
                                                          "multihead_attention" else None)
            if ac.get("attn_type") == "multiquery_attention" and not n_kv_heads:
                KV = 1
            if not KV:
                raise QKInputError(f"{path}: mpt attn_type {ac.get('attn_type')!r} without attn_config.kv_n_heads")
            KV = _positive_int(KV, "kv_n_heads", path)
            if s[0] != (H + 2 * KV) * dh:
                raise QKInputError(f"{path}: {t0['qkv']} has {s[0]} rows, not (n_heads + 2·kv_n_heads)·d_head = "
                                   f"({H} + 2·{KV})·{dh}")
        elif kind == "interleaved" and s[0] != 3 * N:
            raise QKInputError(f"{path}: {t0['qkv']} has shape {list(s)}, not [3·d_model, d_model] = [{3 * N}, {N}]")
    if Ncfg is not None and Ncfg != N:
        raise QKInputError(f"{path}: config hidden size {Ncfg} but the attention weights have d_model = {N}")
    kv_head_of(0, H, KV)   # KV divides H

    # --- shapes of every layer (headers only) --------------------------------
    want = {}
    for key, t in t0.items():
        want[key] = shape(t)
    for l in layers:
        for key, t in tensors[l].items():
            if shape(t) != want[key]:
                raise QKInputError(f"{path}: {t} has shape {list(shape(t))}, layer 0's has {list(want[key])}")

    # --- biases -----------------------------------------------------------------
    nameset = set(names)
    biases: dict[int, dict[str, str]] = {}
    for l in layers:
        for key, t in tensors[l].items():
            b = t[: -len("weight")] + "bias"
            if b in nameset:
                sb = shape(b)
                rows = want[key][1] if (kind == "gpt2" and orientation == "conv1d") else want[key][0]
                if sb != (rows,):
                    raise QKInputError(f"{path}: bias {b} has shape {list(sb)}, expected [{rows}]")
                biases.setdefault(l, {})[key] = b

    positional = _positional(fam, mt, cfg, dh, names, prefix, len(layers)) if source.startswith("config") else \
        (lambda l: pos.unknown("no config.json model_type"))
    layout = fam.description
    if kind == "gpt2":
        layout += (", Conv1D [in, out] = [d_model, 3·d_model]" if orientation == "conv1d"
                   else ", Linear [out, in] = [3·d_model, d_model]")
    return Plan(fam, mt, layout, source, prefix, layers, tensors, biases, H, KV, N, dh, orientation, qk_norm,
                positional)


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
