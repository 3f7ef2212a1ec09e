"""Read-only access to ``.safetensors`` files and sharded checkpoints,
one tensor at a time, by memory mapping.

The format is an 8-byte little-endian header length, a JSON header mapping
tensor names to ``{"dtype", "shape", "data_offsets"}``, then raw
little-endian data.  We read it directly (rather than through
``safetensors.numpy``) so that bfloat16 tensors, which numpy has no dtype
for, can be widened to float32 exactly: a bfloat16 is the top 16 bits of a
float32, so shifting its bits left by 16 gives the same number.

Memory.  :meth:`SafetensorsFile.get` maps only the byte range of the one
tensor asked for (``mmap`` with an offset), and the array it returns is a
read-only view of that mapping (float32/float64) or a widened copy
(float16/bfloat16, after which the mapping is dropped).  The mapping lives
exactly as long as the array: once a layer's tensors are no longer
referenced, their pages leave the process's resident set.  Pages are only
touched when read, so slicing the query and key rows out of a fused QKV
tensor never loads the value rows.  Nothing here keeps a whole-file map
(the previous reader did, and its resident set grew with every layer).

A sharded checkpoint (``model.safetensors.index.json`` whose
``weight_map`` names the shard of every tensor) is a :class:`Checkpoint`
over its shards; each tensor is read from its own shard.
"""

from __future__ import annotations

import json
import mmap
import struct
from pathlib import Path

import numpy as np

from ..errors import QKInputError

_DTYPES = {"F64": np.dtype("<f8"), "F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "BF16": np.dtype("<u2")}
MAX_HEADER = 100 * 1024 * 1024
#: the conventional name of a sharded checkpoint's index
INDEX_NAME = "model.safetensors.index.json"


class SafetensorsFile:
    """Header and lazily read tensors of one safetensors file.

    ``names`` -- tensor names in file order; ``get(name)`` returns a float
    array (float16 and bfloat16 widened to float32, exact).  Raises
    QKInputError for a file that is not safetensors and for tensor dtypes
    that are not binary floats.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            size = self.path.stat().st_size
            with open(self.path, "rb") as fh:
                raw = fh.read(8)
                if len(raw) < 8:
                    raise QKInputError(f"{self.path}: too short to be a safetensors file")
                (hlen,) = struct.unpack("<Q", raw)
                if hlen <= 0 or hlen > MAX_HEADER or 8 + hlen > size:
                    raise QKInputError(f"{self.path}: not a safetensors file (bad header length)")
                header = json.loads(fh.read(hlen).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise QKInputError(f"{self.path}: not a safetensors file (header is not JSON)") from None
        except OSError as err:
            raise QKInputError(f"{self.path}: cannot read ({err.strerror})") from None
        if not isinstance(header, dict):
            raise QKInputError(f"{self.path}: not a safetensors file (header is not a JSON object)")
        self.metadata = header.pop("__metadata__", {}) or {}
        # the data section must hold every tensor the header announces
        ends = []
        for info in header.values():
            if isinstance(info, dict) and isinstance(info.get("data_offsets"), list) and len(info["data_offsets"]) == 2:
                try:
                    ends.append(int(info["data_offsets"][1]))
                except (TypeError, ValueError):
                    pass
        need = 8 + hlen + (max(ends) if ends else 0)
        if need > size:
            raise QKInputError(f"{self.path}: file truncated (the header needs {need} bytes, the file has {size})")
        self.header = header
        self.names = list(header)
        self._data_start = 8 + hlen
        self._size = size

    def shape(self, name: str) -> tuple[int, ...]:
        """Shape of tensor ``name`` from the header (no data read)."""
        return tuple(int(s) for s in self.header[name]["shape"])

    def dtype(self, name: str) -> str:
        """safetensors dtype string of tensor ``name`` (e.g. ``F32``)."""
        return str(self.header[name]["dtype"])

    def nbytes(self, name: str) -> int:
        """Bytes of tensor ``name`` in the file (from the header)."""
        a, b = (int(x) for x in self.header[name]["data_offsets"])
        return b - a

    def get(self, name: str) -> np.ndarray:
        """The tensor ``name`` as a float32/float64 array with exact values.

        float32/float64 tensors come back as a read-only view of a mapping of
        just this tensor's bytes; float16/bfloat16 ones as a widened float32
        copy.  NaN/Inf are not checked here (callers check the slices they
        use, so unused rows are never read).  Raises QKInputError for an
        unknown name, a non-float dtype or inconsistent offsets."""
        if name not in self.header:
            raise QKInputError(f"{self.path}: no tensor named {name!r}")
        info = self.header[name]
        dt = info.get("dtype")
        if dt not in _DTYPES:
            raise QKInputError(f"{self.path}: tensor {name} has dtype {dt}; only F64/F32/F16/BF16 weights are supported")
        start, end = (int(x) for x in info["data_offsets"])
        shape = tuple(int(s) for s in info["shape"])
        npdt = _DTYPES[dt]
        count = int(np.prod(shape)) if shape else 1
        if start < 0 or end - start != count * npdt.itemsize or self._data_start + end > self._size:
            raise QKInputError(f"{self.path}: tensor {name} has inconsistent offsets")
        if count == 0:
            return np.zeros(shape, np.float32 if dt != "F64" else np.float64)
        off = self._data_start + start
        base = off - off % mmap.ALLOCATIONGRANULARITY
        try:
            with open(self.path, "rb") as fh:
                mm = mmap.mmap(fh.fileno(), off - base + (end - start), offset=base, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as err:
            raise QKInputError(f"{self.path}: cannot map tensor {name} ({err})") from None
        a = np.frombuffer(mm, dtype=npdt, count=count, offset=off - base).reshape(shape)
        if dt == "BF16":
            return (a.astype(np.uint32) << 16).view(np.float32)
        if dt == "F16":
            return a.astype(np.float32)
        if a.dtype.byteorder not in ("=", "|") and a.dtype.byteorder != ("<" if np.little_endian else ">"):
            a = a.astype(a.dtype.newbyteorder("="))
        return a


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
