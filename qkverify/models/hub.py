"""Hugging Face hub ids, resolved offline through the local cache.

``qkverify heads org/name`` and ``qkverify.load_model("org/name")`` read the
snapshot that the local Hugging Face cache holds for that repository; nothing
is ever downloaded (``huggingface_hub`` is asked with ``local_files_only`` and
its offline switch on).  Also accepted: ``org/name@revision`` (a branch, tag or
commit the cache has), a ``models--org--name`` cache folder, and any path
inside a cached snapshot.  The model is then named ``org/name`` in every
output, never after the snapshot's commit hash.

Where the cache is, in the order ``huggingface_hub`` documents: ``HF_HUB_CACHE``,
else ``$HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub``, else
``~/.cache/huggingface/hub``.  The variables are read at each call, so a
notebook may set them after ``import qkverify``.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from ..errors import QKInputError

#: a repository id: ``name`` or ``org/name`` (the characters the hub allows), optional ``@revision``
HUB_ID = re.compile(r"(?P<repo>(?:[A-Za-z0-9][A-Za-z0-9._-]*/)?[A-Za-z0-9][A-Za-z0-9._-]*)(?:@(?P<rev>[A-Za-z0-9._/-]+))?")
#: a cache folder of a model repository
CACHE_FOLDER = re.compile(r"models--(?P<repo>.+)")


def cache_dir() -> Path:
    """The Hugging Face hub cache folder (module docstring), from the environment as it is now."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HUGGINGFACE_HUB_CACHE"):
        return Path(os.environ["HUGGINGFACE_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path("~/.cache").expanduser())
    return Path(xdg).expanduser() / "huggingface" / "hub"


def is_hub_id(spec: str) -> bool:
    """True when ``spec`` has the form of a repository id (``org/name``, ``name``, ``@revision``)."""
    return bool(HUB_ID.fullmatch(spec)) and not spec.endswith((".safetensors", ".gguf", ".npz", ".json"))


def repo_of_folder(folder: Path) -> str | None:
    """``org/name`` for a cache folder ``models--org--name`` (the hub forbids ``--`` inside ids,
    so the folder name reads back unambiguously), else None."""
    m = CACHE_FOLDER.fullmatch(folder.name)
    return m.group("repo").replace("--", "/") if m else None


@contextlib.contextmanager
def _offline():
    """huggingface_hub with its offline switch on, restored afterwards (an application that
    imported qkverify keeps its own setting)."""
    from huggingface_hub import constants

    before = constants.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = before


def snapshot(repo: str, revision: str | None = None, cache: Path | None = None) -> Path:
    """The cached snapshot folder of ``repo`` at ``revision`` (default: the cache's ``main``), via
    ``huggingface_hub.snapshot_download(local_files_only=True)`` -- never a download.  Raises
    QKInputError naming the cache folder when the cache does not hold it."""
    cache = cache or cache_dir()
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError:                                   # pragma: no cover - a declared dependency
        raise QKInputError(f"{repo}: reading the Hugging Face cache needs huggingface_hub "
                           "(pip install huggingface_hub)") from None
    try:
        with _offline():
            out = snapshot_download(repo, revision=revision, cache_dir=str(cache), local_files_only=True)
    except LocalEntryNotFoundError:
        at = f" at revision {revision}" if revision else ""
        raise QKInputError(f"{repo}: not a file, a folder or a known model, and the local Hugging Face cache "
                           f"({cache}) holds no snapshot of it{at}; qkverify never downloads: fetch it first "
                           f"(hf download {repo}) or set HF_HUB_CACHE / HF_HOME") from None
    except (ValueError, OSError) as err:                  # a malformed id or an unreadable cache
        raise QKInputError(f"{repo}: cannot read it from the Hugging Face cache {cache} "
                           f"({err.__class__.__name__}: {str(err).splitlines()[0] if str(err) else ''})") from None
    return Path(out)


def resolve_hub(spec: str) -> tuple[Path, str] | None:
    """(snapshot folder, ``org/name``) for a spec that names a model through the cache: a
    ``models--org--name`` folder, a path inside a cached snapshot, or (when no such path exists)
    a repository id held by the cache.  None when the spec is not of these forms; QKInputError
    when it is a repository id the cache does not hold."""
    p = Path(spec).expanduser()
    if p.exists():
        p = p.resolve() if p.is_dir() else p
        repo = repo_of_folder(p)
        if repo is not None:
            return snapshot(repo, None, p.parent), repo
        named = _inside_snapshot(p)
        return (p, named) if named else None
    if not is_hub_id(spec):
        return None
    m = HUB_ID.fullmatch(spec)
    return snapshot(m.group("repo"), m.group("rev")), m.group("repo")


def _inside_snapshot(p: Path) -> str | None:
    """``org/name`` when ``p`` lies in ``…/models--org--name/snapshots/<commit>/``, else None."""
    parts = p.absolute().parts
    for i in range(len(parts) - 2):
        if parts[i + 1] == "snapshots" and CACHE_FOLDER.fullmatch(parts[i]):
            return repo_of_folder(Path(parts[i]))
    return None


def hub_name(spec: str | None) -> str | None:
    """The ``org/name`` a spec is named by when it resolves through the cache (module docstring),
    else None; never raises (a spec that does not resolve is reported by the loader)."""
    if spec is None:
        return None
    p = Path(spec).expanduser()
    if p.exists():
        return repo_of_folder(p.resolve()) or _inside_snapshot(p)
    m = HUB_ID.fullmatch(spec)
    return m.group("repo") if m and "/" in m.group("repo") else None
