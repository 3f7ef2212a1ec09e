"""Concrete inputs of claims, built from user files.

A file is JSON (numbers read by their decimal text, ``"p/q"`` strings
allowed) or ``.npy`` (floats taken as exact dyadic rationals):

* a nested list, or ``{"L": …}``          -> MatrixInput   (N x N)
* ``{"S": …}``                            -> MatrixInput with L = S (must be symmetric)
* ``{"W_Q": …, "W_K": …}`` (n x N each)   -> HeadInput
* ``{"L": …, "U": …}``                    -> OrthoInput    (U rational orthogonal)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from flint import fmpq_mat

from ..errors import QKInputError
from ..exact.matrix import is_symmetric, to_str_rows
from ..exact.rational import read_input_file, rows_to_fmpq_mat


@dataclass(frozen=True)
class MatrixInput:
    """A square rational matrix L (N x N, exact); ``n`` is an optional head
    dimension (Lemma 3 takes L with rank L ≤ n)."""

    L: fmpq_mat
    n: int | None = None
    source: dict = field(default_factory=dict, compare=False)

    @property
    def N(self) -> int:
        return self.L.nrows()

    def to_json(self) -> dict:
        out = {"kind": "matrix", "L": to_str_rows(self.L)}
        if self.n is not None:
            out["n"] = self.n
        return out


@dataclass(frozen=True)
class HeadInput:
    """An attention head: W_Q, W_K rational n x N (rows = head dimensions),
    L = W_Kᵀ W_Q."""

    W_Q: fmpq_mat
    W_K: fmpq_mat
    source: dict = field(default_factory=dict, compare=False)

    @property
    def n(self) -> int:
        return self.W_Q.nrows()

    @property
    def N(self) -> int:
        return self.W_Q.ncols()

    @property
    def L(self) -> fmpq_mat:
        return self.W_K.transpose() * self.W_Q

    def to_json(self) -> dict:
        return {"kind": "head", "W_Q": to_str_rows(self.W_Q), "W_K": to_str_rows(self.W_K)}


@dataclass(frozen=True)
class OrthoInput:
    """A square rational L with a rational orthogonal U of the same size."""

    L: fmpq_mat
    U: fmpq_mat
    source: dict = field(default_factory=dict, compare=False)

    @property
    def N(self) -> int:
        return self.L.nrows()

    def to_json(self) -> dict:
        return {"kind": "orthogonal", "L": to_str_rows(self.L), "U": to_str_rows(self.U)}


def _mat(doc: Any, key: str, square: bool) -> fmpq_mat:
    return rows_to_fmpq_mat(doc, key, square=square)


def input_from_document(doc: Any, kind: str | None = None, where: str = "input"):
    """Build a claim input from a parsed document (see module docstring).

    ``kind`` (a Claim.input_kind) selects what is expected; a head is also
    accepted where a matrix is expected (its L = W_Kᵀ W_Q is used).
    Raises QKInputError naming the problem.
    """
    if kind == "law":
        from .random_matrices import LawInput

        return LawInput.from_document(doc, where)
    if isinstance(doc, np.ndarray) or isinstance(doc, list):
        obj: Any = MatrixInput(_mat(doc, f"{where}: L", True))
    elif isinstance(doc, dict):
        keys = set(doc)
        if {"W_Q", "W_K"} <= keys:
            WQ = _mat(doc["W_Q"], f"{where}: W_Q", False)
            WK = _mat(doc["W_K"], f"{where}: W_K", False)
            if (WQ.nrows(), WQ.ncols()) != (WK.nrows(), WK.ncols()):
                raise QKInputError(
                    f"{where}: W_Q is {WQ.nrows()}x{WQ.ncols()} but W_K is {WK.nrows()}x{WK.ncols()}; both must be n x N"
                )
            obj = HeadInput(WQ, WK)
        elif "L" in keys and "U" in keys:
            L = _mat(doc["L"], f"{where}: L", True)
            U = _mat(doc["U"], f"{where}: U", True)
            if U.nrows() != L.nrows():
                raise QKInputError(f"{where}: U is {U.nrows()}x{U.nrows()} but L is {L.nrows()}x{L.nrows()}")
            obj = OrthoInput(L, U)
        elif "L" in keys:
            n = doc.get("n")
            if n is not None:
                try:
                    n = int(str(n))
                except ValueError:
                    raise QKInputError(f"{where}: n must be a positive integer, got {n!r}") from None
                if n < 1:
                    raise QKInputError(f"{where}: n must be a positive integer, got {n}")
            obj = MatrixInput(_mat(doc["L"], f"{where}: L", True), n)
        elif "S" in keys:
            S = _mat(doc["S"], f"{where}: S", True)
            if not is_symmetric(S):
                raise QKInputError(f"{where}: S is not symmetric")
            obj = MatrixInput(S)
        else:
            raise QKInputError(
                f"{where}: expected a matrix or an object with keys L, S, U or W_Q/W_K; found keys {sorted(keys)}"
            )
    else:
        raise QKInputError(f"{where}: expected a matrix (nested list) or a JSON object")
    if kind == "head" and not isinstance(obj, HeadInput):
        raise QKInputError(f"{where}: this claim needs a head {{\"W_Q\": …, \"W_K\": …}}")
    if kind == "orthogonal" and not isinstance(obj, OrthoInput):
        raise QKInputError(f"{where}: this claim needs {{\"L\": …, \"U\": …}} with U orthogonal")
    if kind == "matrix_n" and isinstance(obj, OrthoInput):
        obj = MatrixInput(obj.L)
    if kind == "matrix_n" and isinstance(obj, HeadInput):
        obj = MatrixInput(obj.L, obj.n)
    if kind == "matrix_n" and isinstance(obj, MatrixInput) and obj.n is None:
        raise QKInputError(f"{where}: this claim needs a head dimension: give {{\"L\": …, \"n\": k}} or a head {{\"W_Q\": …, \"W_K\": …}}")
    if kind in ("matrix", "symmetric") and isinstance(obj, HeadInput):
        obj = MatrixInput(obj.L)
    if kind in ("matrix", "symmetric") and isinstance(obj, OrthoInput):
        obj = MatrixInput(obj.L)
    return obj


def load_input(path: str | Path, kind: str | None = None):
    """Read ``path`` (JSON / .npy / .npz) into a claim input; QKInputError on
    any problem (missing file, NaN, ragged rows, non-square, …)."""
    doc = read_input_file(path)
    if isinstance(doc, dict) and all(isinstance(v, np.ndarray) for v in doc.values()):
        doc = {k: v for k, v in doc.items()}
    return input_from_document(doc, kind, str(path))
