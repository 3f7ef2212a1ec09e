"""Read-only access to ``.safetensors`` files and sharded checkpoints, one
tensor at a time, through the official ``safetensors`` package.

Format rules.  A file is opened only when the reference loader
(``safetensors.safe_open``, whose Rust core checks the header length, UTF-8,
JSON types, dtypes, shape × dtype = byte range, and that the byte ranges tile
the data buffer exactly: no overlap, no gap, no trailing byte) accepts it,
and when, besides, the header begins with ``{`` and names no key twice: the
format's README disallows duplicate keys, but serde keeps the last one
silently, so ``{"W_K": …, "W_K": …}`` would otherwise be read as whatever
the last entry says.  The kernel enforces the same rules with its own reader
(:func:`qkverify.kernel.weights.st_header`, where each rule is listed).

Values.  F64/F32/F16 tensors come from ``safe_open(...).get_tensor``
(float16 widened to float32, exactly); BF16, which numpy has no dtype for,
is read as its raw 16-bit patterns at the byte range the reference loader
validated and widened to float32 by a 16-bit shift (a bfloat16 is the top
half of a float32, so the value is unchanged).

Memory.  A tensor is read only when asked for, as an owned copy, and the
file is mapped only while it is read (``safe_open`` is used as a context
manager), so no mapping outlives a layer.

A sharded checkpoint (``model.safetensors.index.json`` whose
``weight_map`` names the shard of every tensor) is a :class:`Checkpoint`
over its shards; each tensor is read from its own shard.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from safetensors import SafetensorError, safe_open

from ..errors import QKInputError

_FLOATS = ("F64", "F32", "F16", "BF16")
#: the conventional name of a sharded checkpoint's index
INDEX_NAME = "model.safetensors.index.json"


def _unique(pairs: list) -> dict:
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"names {k!r} twice")
        out[k] = v
    return out


class SafetensorsFile:
    """Header and lazily read tensors of one safetensors file.

    ``names`` -- tensor names in header order; ``get(name)`` returns a float
    array (float16 and bfloat16 widened to float32, exact).  Raises
    QKInputError (one line) for a file the format's rules refuse (module
    docstring) and, in ``get``, for dtypes that are not binary floats.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            with safe_open(str(self.path), framework="numpy") as f:
                self.metadata = f.metadata() or {}
            with open(self.path, "rb") as fh:
                n = int.from_bytes(fh.read(8), "little")
                text = fh.read(n).decode("utf-8")
        except SafetensorError as err:
            raise QKInputError(f"{self.path}: not a safetensors file ({_reason(err)})") from None
        except OSError as err:
            raise QKInputError(f"{self.path}: cannot read ({err.strerror or err})") from None
        if not text.startswith("{"):
            raise QKInputError(f"{self.path}: not a safetensors file (the header does not begin with '{{')")
        try:
            header = json.loads(text, object_pairs_hook=_unique)
        except ValueError as err:
            raise QKInputError(f"{self.path}: not a safetensors file (the header {err}; "
                               "the format disallows duplicate keys)") from None
        header.pop("__metadata__", None)
        self.header = header
        self.names = list(header)
        self._data_start = 8 + n

    def shape(self, name: str) -> tuple[int, ...]:
        """Shape of tensor ``name`` from the header (no data read)."""
        return tuple(int(s) for s in self._info(name)["shape"])

    def dtype(self, name: str) -> str:
        """safetensors dtype string of tensor ``name`` (e.g. ``F32``)."""
        return str(self._info(name)["dtype"])

    def nbytes(self, name: str) -> int:
        """Bytes of tensor ``name`` in the file (from the header)."""
        a, b = self._info(name)["data_offsets"]
        return int(b) - int(a)

    def _info(self, name: str) -> dict:
        if name not in self.header:
            raise QKInputError(f"{self.path}: no tensor named {name!r}")
        return self.header[name]

    def get(self, name: str) -> np.ndarray:
        """The tensor ``name`` as a float32/float64 array with exact values (an
        owned copy; float16/bfloat16 widened to float32).  NaN/Inf are not
        checked here (callers check the slices they use).  Raises
        QKInputError for an unknown name or a dtype that is not a binary float."""
        dt = self.dtype(name)
        if dt not in _FLOATS:
            raise QKInputError(f"{self.path}: tensor {name} has dtype {dt}; only F64/F32/F16/BF16 weights are supported")
        shape = self.shape(name)
        try:
            if dt == "BF16":
                start = self._data_start + int(self._info(name)["data_offsets"][0])
                bits = np.fromfile(self.path, dtype="<u2", count=int(np.prod(shape, dtype=object)), offset=start)
                return (bits.astype(np.uint32) << 16).view(np.float32).reshape(shape)
            with safe_open(str(self.path), framework="numpy") as f:
                a = f.get_tensor(name)
        except SafetensorError as err:
            raise QKInputError(f"{self.path}: cannot read tensor {name} ({_reason(err)})") from None
        except (OSError, MemoryError, ValueError) as err:  # ValueError: a shape numpy cannot make
            raise QKInputError(f"{self.path}: cannot read tensor {name} ({err.__class__.__name__}: {err})") from None
        a = np.asarray(a)
        if a.dtype == np.float16:
            a = a.astype(np.float32)
        return a.astype(a.dtype.newbyteorder("="), copy=False)


def _reason(err: Exception) -> str:
    """The reference loader's message without its generic prefix, on one line."""
    msg = " ".join(str(err).split())
    return msg.replace("Error while deserializing header: ", "")[:200]


class Checkpoint:
    """The tensors of a safetensors checkpoint: one file, a directory of
    files, or a sharded checkpoint with ``model.safetensors.index.json``.

    files   -- the SafetensorsFile objects (only headers are read on open)
    where   -- tensor name -> the file that holds it
    index   -- the index file's path for a sharded checkpoint, else None
    Raises QKInputError for a missing shard, a tensor the index places in a
    shard that lacks it, the same tensor name in two files, or no files.
    """

    def __init__(self, files: list[SafetensorsFile], index: Path | None = None):
        self.files = files
        self.index = index
        self.where: dict[str, SafetensorsFile] = {}
        for f in files:
            for t in f.names:
                if t in self.where:
                    raise QKInputError(f"tensor {t} is in both {self.where[t].path.name} and {f.path.name}; "
                                       "pass one file, or a directory holding one checkpoint")
                self.where[t] = f
        self.names = list(self.where)

    @classmethod
    def open(cls, path: str | Path) -> "Checkpoint":
        """Open ``path`` (see class docstring).  A directory with an index
        reads exactly the shards the index names; without one, every
        ``*.safetensors`` file in it."""
        path = Path(path)
        if path.is_file():
            idx = path.parent / INDEX_NAME
            if idx.is_file() and path.name in set(_weight_map(idx).values()):
                raise QKInputError(f"{path} is one shard of the sharded checkpoint {idx}; pass the directory "
                                   f"{path.parent} instead")
            return cls([SafetensorsFile(path)])
        indexes = sorted(path.glob("*.safetensors.index.json"))
        if len(indexes) > 1:
            raise QKInputError(f"{path}: several index files ({', '.join(p.name for p in indexes)}); "
                               "keep one checkpoint per directory")
        if indexes:
            idx = indexes[0]
            wm = _weight_map(idx)
            shards = sorted(set(wm.values()))
            missing = [s for s in shards if not (path / s).is_file()]
            if missing:
                raise QKInputError(f"{idx}: shard {missing[0]} is missing"
                                   + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
            ck = cls([SafetensorsFile(path / s) for s in shards], idx)
            for t, s in wm.items():
                f = ck.where.get(t)
                if f is None or f.path.name != s:
                    raise QKInputError(f"{idx}: places {t} in {s}, but "
                                       + (f"it is in {f.path.name}" if f else "no shard holds it"))
            return ck
        fs = sorted(path.glob("*.safetensors"))
        if not fs:
            raise QKInputError(f"{path}: no .safetensors files in this directory")
        return cls([SafetensorsFile(f) for f in fs])

    def file_of(self, name: str) -> SafetensorsFile:
        """The file holding tensor ``name``; QKInputError when there is none."""
        f = self.where.get(name)
        if f is None:
            raise QKInputError(f"no tensor named {name!r} in the checkpoint")
        return f

    def shape(self, name: str) -> tuple[int, ...]:
        """Shape of ``name`` from its file's header."""
        return self.file_of(name).shape(name)

    def get(self, name: str) -> np.ndarray:
        """Tensor ``name`` read from its own file (see SafetensorsFile.get)."""
        return self.file_of(name).get(name)


def _weight_map(idx: Path) -> dict[str, str]:
    """The ``weight_map`` of a sharded checkpoint's index (tensor -> shard
    file name).  Raises QKInputError for an unreadable index, a shard name
    with a directory part, or no map."""
    try:
        doc = json.loads(idx.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise QKInputError(f"{idx}: not readable JSON") from None
    wm = doc.get("weight_map") if isinstance(doc, dict) else None
    if not isinstance(wm, dict) or not wm or not all(isinstance(k, str) and isinstance(v, str) for k, v in wm.items()):
        raise QKInputError(f"{idx}: no weight_map (tensor name -> shard file)")
    for v in wm.values():
        if Path(v).name != v:
            raise QKInputError(f"{idx}: shard {v!r} is not a file name in this directory")
    return wm
