"""Exact tensors for the producer of §1 inputs that name a weights file (the kernel reads the
same bytes with its own readers, qkverify/kernel/weights.py and gguf.py).

``locate`` finds the file with the recorded SHA-256; ``matrix`` returns rows (and columns) of a
safetensors tensor (through :class:`qkverify.models.safetensors_io.SafetensorsFile`, the one
safetensors reader of the producer) or of a GGUF matrix (its blocks decoded exactly by
:func:`qkverify.models.gguf_model.exact_dequantize`) as an exact ``fmpq_mat``."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
from flint import fmpq, fmpq_mat

from ..errors import QKInputError
from .hashing import sha256_of
from ..exact.rational import dyadic_fmpz_mat


def locate(file: str, sha256: str, dirs: list[str | Path] = ()) -> Path:
    """The file named ``file`` (as given, or by its name in one of ``dirs``) whose SHA-256 is
    ``sha256``; QKInputError naming the candidates otherwise."""
    cands = [Path(file)] + [Path(d) / Path(file).name for d in dirs]
    for c in cands:
        if c.is_file() and sha256_of(c) == sha256:
            return c
    raise QKInputError(f"{Path(file).name}: no file with SHA-256 {sha256[:12]}… among {', '.join(map(str, cands))}")


@functools.lru_cache(maxsize=4)
def _gguf(path: str):
    import gguf

    from ..models.gguf_model import check_layout

    try:
        r = gguf.GGUFReader(path)
    except Exception as err:
        raise QKInputError(f"{Path(path).name}: not a readable GGUF file ({' '.join(str(err).split())[:200]})") from None
    check_layout(r, Path(path))
    return r, {t.name: t for t in r.tensors}


def array(path: Path, name: str) -> np.ndarray:
    """A whole tensor as float64 (exact), from a safetensors or GGUF file (QKInputError, one
    line, for a file its format's rules refuse).  A GGUF tensor is the matrix [ne1, ne0]
    (:func:`qkverify.models.gguf_model.matrix_shape`, a vector as one row)."""
    with open(path, "rb") as fh:
        magic = fh.read(4)
    if magic == b"GGUF":
        from ..models.gguf_model import exact_dequantize

        r, ts = _gguf(str(path))
        if name not in ts:
            raise QKInputError(f"{path.name}: no tensor {name!r}")
        from ..models.gguf_model import matrix_shape

        t = ts[name]
        return exact_dequantize(t.data, t.tensor_type).reshape(matrix_shape(t, path))
    from ..models.safetensors_io import SafetensorsFile

    return np.asarray(SafetensorsFile(path).get(name), dtype=np.float64)


def exact(a: np.ndarray) -> fmpq_mat:
    """A float array (1-D as one row) as an exact fmpq_mat."""
    a = np.atleast_2d(np.asarray(a, dtype=np.float64))
    if not np.all(np.isfinite(a)):
        raise QKInputError("weights contain NaN or Inf, which are not rational numbers")
    Z, e = dyadic_fmpz_mat(a)
    return fmpq_mat(Z) * (fmpq(2) ** e if e >= 0 else fmpq(1, 2 ** -e))


def matrix(path: Path, name: str, rows: tuple[int, int] | list[int] | None = None,
           cols: tuple[int, int] | None = None) -> fmpq_mat:
    """Rows (a range [a, b) or a list of row indices) and columns [a, b) of a tensor, exactly."""
    A = np.atleast_2d(array(path, name))
    if rows is not None:
        A = A[list(rows)] if isinstance(rows, list) else A[rows[0]:rows[1]]
    if cols is not None:
        A = A[:, cols[0]:cols[1]]
    return exact(A)


__all__ = ["locate", "array", "exact", "matrix"]
