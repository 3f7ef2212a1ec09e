"""Concrete inputs of claims, built from user files.

A file is JSON (numbers read by their decimal text, ``"p/q"`` strings
allowed; see :mod:`qkverify.exact.rational` for the one number grammar),
``.npy`` (floats taken as exact dyadic rationals) or ``.npz`` (arrays named
like the JSON keys):

* a nested list, or ``{"L": …}``          -> MatrixInput   (N x N)
* ``{"L": …, "n": k}``                    -> MatrixInput with a head dimension
* ``{"S": …}``                            -> MatrixInput with L = S (must be symmetric)
* ``{"W_Q": …, "W_K": …}`` (n x N each)   -> HeadInput
* ``{"L": …, "U": …}``                    -> OrthoInput    (U rational orthogonal)
* ``{"model": "iid" | "qk", "N": …, …}``  -> LawInput      (claims on random matrices)
* ``{"Q": …, "K": …, "V": …}``            -> TripleInput   (Q, K k x d, V d x d; docs/MATH.md)

Strict: a key (or ``.npz`` array) that the shape does not have is refused
(naming it), as is a repeated JSON key.  Every shape also accepts the
``"kind"`` key that its ``to_json`` writes, so written inputs read back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from flint import fmpq, fmpq_mat

from ..errors import QKInputError
from ..math import baselines as B
from ..exact.matrix import is_symmetric, to_str_rows
from ..exact.rational import fmpq_str, parse_integer, read_input_file, rows_to_fmpq_mat


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

    @property
    def kind2(self) -> str:
        """Input kind of certificate format 2: ``matrix`` or ``matrix_bound`` (with n)."""
        return "matrix" if self.n is None else "matrix_bound"

    def to_json2(self) -> dict:
        """The format-2 certificate input object."""
        out = {"kind": self.kind2, "L": to_str_rows(self.L)}
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
    B: fmpq_mat | None = None  # a basis of C (columns) for the Gram matrix; standard when None

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

    kind2 = "head"

    def to_json2(self) -> dict:
        """The format-2 certificate input object."""
        out = self.to_json()
        if self.B is not None:
            out["B"] = to_str_rows(self.B)
        return out


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

    kind2 = "matrix_pair"

    def to_json2(self) -> dict:
        """The format-2 certificate input object."""
        return {"kind": "matrix_pair", "L": to_str_rows(self.L), "U": to_str_rows(self.U)}


@dataclass(frozen=True)
class FiberInput:
    """L with a candidate decomposition S = H + P (face ``d``) or S = H − P (face ``c``),
    for the ← direction of Theorem 4's decomposition faces."""

    L: fmpq_mat
    face: str
    H: fmpq_mat
    P: fmpq_mat
    source: dict = field(default_factory=dict, compare=False)

    kind2 = "matrix_fiber"

    @property
    def N(self) -> int:
        return self.L.nrows()

    def to_json2(self) -> dict:
        """The format-2 certificate input object."""
        return {"kind": "matrix_fiber", "L": to_str_rows(self.L), "face": self.face,
                "H": to_str_rows(self.H), "P": to_str_rows(self.P)}


@dataclass(frozen=True)
class TripleInput:
    """A triple (Q, K, V) of the self-attention dynamics (docs/MATH.md, Clustering regimes): Q, K rational k x d,
    V rational d x d; the score of tokens x, y is ⟨Qx, Ky⟩ (no 1/√d: absorbed into Q)."""

    Q: fmpq_mat
    K: fmpq_mat
    V: fmpq_mat
    source: dict = field(default_factory=dict, compare=False)

    kind2 = "triple"

    @property
    def d(self) -> int:
        return self.V.nrows()

    def to_json2(self) -> dict:
        """The format-2 certificate input object."""
        return {"kind": "triple", "Q": to_str_rows(self.Q), "K": to_str_rows(self.K), "V": to_str_rows(self.V)}


@dataclass(frozen=True)
class ValueHeadInput:
    """One attention head of a weights file for the clustering checks: W_Q, W_K, W_V exact
    rational n x N (rows = head dimensions), W_O exact N x n (the head's block of the output
    projection), biases dropped; ``ref`` is the certificate input (file, SHA-256, tensor
    slices) from which the kernel re-reads them."""

    W_Q: fmpq_mat
    W_K: fmpq_mat
    W_V: fmpq_mat
    W_O: fmpq_mat
    ref: dict
    source: dict = field(default_factory=dict, compare=False)

    kind2 = "value_head"

    def to_json2(self) -> dict:
        """The format-2 certificate input object (the weights are named, not copied)."""
        return dict(self.ref, kind="value_head")


def _mat(doc: Any, key: str, square: bool) -> fmpq_mat:
    return rows_to_fmpq_mat(doc, key, square=square)


#: the keys each document shape may have (``kind`` is what ``to_json`` writes
#: and must name that shape); anything else is refused, naming the key
SHAPES = {
    "head": ({"W_Q", "W_K"}, {"kind"}, ("head",)),
    "orthogonal": ({"L", "U"}, {"kind"}, ("orthogonal",)),
    "matrix": ({"L"}, {"kind", "n"}, ("matrix",)),
    "symmetric": ({"S"}, {"kind"}, ("matrix", "symmetric")),
    "triple": ({"Q", "K", "V"}, {"kind"}, ("triple",)),
}


def _check_keys(doc: dict, shape: str, where: str) -> None:
    """Refuse keys that ``shape`` does not have, and a ``kind`` that names
    another shape (QKInputError naming the key)."""
    required, optional, kinds = SHAPES[shape]
    extra = sorted(str(k) for k in doc if k not in required | optional)
    if extra:
        allowed = ", ".join(sorted(required)) + "".join(f" [{k}]" for k in sorted(optional))
        raise QKInputError(f"{where}: unknown key {extra[0]!r} (a {shape} input has the keys {allowed})")
    if "kind" in doc and doc["kind"] not in kinds:
        raise QKInputError(f"{where}: key 'kind' is {doc['kind']!r}, but the keys are those of a {shape} input")


def input_from_document(doc: Any, kind: str | None = None, where: str = "input"):
    """Build a claim input from a parsed document (see module docstring).

    ``kind`` (a Claim.input_kind) selects what is expected; a head is also
    accepted where a matrix is expected (its L = W_Kᵀ W_Q is used).
    Raises QKInputError naming the problem -- including a key (or an
    ``.npz`` array) that the document's shape does not have (:data:`SHAPES`).
    """
    if kind == "law":
        return LawInput.from_document(doc, where)
    if isinstance(doc, np.ndarray) or isinstance(doc, list):
        obj: Any = MatrixInput(_mat(doc, f"{where}: L", True))
    elif isinstance(doc, dict):
        keys = set(doc)
        if {"Q", "K", "V"} & keys:
            _check_keys(doc, "triple", where)
            if not {"Q", "K", "V"} <= keys:
                raise QKInputError(f"{where}: a triple needs Q, K and V; missing {sorted({'Q', 'K', 'V'} - keys)[0]}")
            Q, K = _mat(doc["Q"], f"{where}: Q", False), _mat(doc["K"], f"{where}: K", False)
            V = _mat(doc["V"], f"{where}: V", True)
            if (Q.nrows(), Q.ncols()) != (K.nrows(), K.ncols()) or Q.ncols() != V.nrows():
                raise QKInputError(f"{where}: Q and K must both be k x d and V d x d; got Q {Q.nrows()}x{Q.ncols()}, "
                                   f"K {K.nrows()}x{K.ncols()}, V {V.nrows()}x{V.ncols()}")
            obj = TripleInput(Q, K, V)
        elif {"W_Q", "W_K"} & keys:
            _check_keys(doc, "head", where)
            if not {"W_Q", "W_K"} <= keys:
                raise QKInputError(f"{where}: a head needs both W_Q and W_K; found only {sorted(keys & {'W_Q', 'W_K'})[0]}")
            WQ = _mat(doc["W_Q"], f"{where}: W_Q", False)
            WK = _mat(doc["W_K"], f"{where}: W_K", False)
            if (WQ.nrows(), WQ.ncols()) != (WK.nrows(), WK.ncols()):
                raise QKInputError(
                    f"{where}: W_Q is {WQ.nrows()}x{WQ.ncols()} but W_K is {WK.nrows()}x{WK.ncols()}; both must be n x N"
                )
            B = None
            if "B" in keys:
                B = _mat(doc["B"], f"{where}: B", True)
                if B.nrows() != WQ.ncols() or B.det() == 0:
                    raise QKInputError(f"{where}: B must be an invertible N x N matrix (a basis of C)")
            obj = HeadInput(WQ, WK, B=B)
        elif {"L", "face", "H", "P"} <= keys:
            L = _mat(doc["L"], f"{where}: L", True)
            if doc["face"] not in ("c", "d"):
                raise QKInputError(f"{where}: face must be \"c\" (S = H − P) or \"d\" (S = H + P)")
            H, P = (_mat(doc[k], f"{where}: {k}", True) for k in ("H", "P"))
            if not (H.nrows() == P.nrows() == L.nrows()):
                raise QKInputError(f"{where}: H and P must have the size of L")
            obj = FiberInput(L, doc["face"], H, P)
        elif "L" in keys and "U" in keys:
            _check_keys(doc, "orthogonal", where)
            L = _mat(doc["L"], f"{where}: L", True)
            U = _mat(doc["U"], f"{where}: U", True)
            if U.nrows() != L.nrows():
                raise QKInputError(f"{where}: U is {U.nrows()}x{U.nrows()} but L is {L.nrows()}x{L.nrows()}")
            obj = OrthoInput(L, U)
        elif "L" in keys:
            _check_keys(doc, "matrix", where)
            n = doc.get("n")
            if n is not None:
                n = parse_integer(n, f"{where}: n")
                if n < 1:
                    raise QKInputError(f"{where}: n must be a positive integer, got {n}")
            obj = MatrixInput(_mat(doc["L"], f"{where}: L", True), n)
        elif "S" in keys:
            _check_keys(doc, "symmetric", where)
            S = _mat(doc["S"], f"{where}: S", True)
            if not is_symmetric(S):
                raise QKInputError(f"{where}: S is not symmetric")
            obj = MatrixInput(S)
        else:
            raise QKInputError(
                f"{where}: expected a matrix or an object with keys L, S, U, W_Q/W_K or Q/K/V; found keys {sorted(keys)}"
            )
    else:
        raise QKInputError(f"{where}: expected a matrix (nested list) or a JSON object")
    if kind == "triple" and not isinstance(obj, TripleInput):
        raise QKInputError(f"{where}: a triple {{\"Q\": …, \"K\": …, \"V\": …}} is needed (Q, K k x d, V d x d)")
    if kind != "triple" and isinstance(obj, TripleInput) and kind is not None:
        raise QKInputError(f"{where}: a triple (Q, K, V) is the input of the clustering statements only")
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


#: Monte Carlo defaults for claim checks (a false "fails" has probability <= delta)
MC_SAMPLES = 20000
MC_DELTA = fmpq(1, 10 ** 6)

def _q(x: fmpq | None) -> str | None:
    return None if x is None else fmpq_str(x)


@dataclass(frozen=True)
class LawInput:
    """A random-matrix model with exact laws.

    model  -- ``"iid"`` (L is N x N, independent entries) or ``"qk"``
              (L = W_Kᵀ W_Q, W_K and W_Q n x N, all 2nN entries independent)
    N, n   -- sizes (n only for ``qk``), integers >= 1
    law    -- iid: the common entry law (FiniteLaw or GaussianLaw), or
    grid   -- iid: an N x N tuple of laws (independent, not necessarily
              identically distributed entries)
    law_K, law_Q -- qk: the iid laws of the entries of W_K and of W_Q
    samples, delta, seed -- Monte Carlo parameters, used only when a
              nondegenerate Gaussian makes the expectation of a ratio
              non-enumerable

    Raises QKInputError on inconsistent fields.
    """

    model: str
    N: int
    n: int | None = None
    law: Any = None
    grid: tuple | None = None
    law_K: Any = None
    law_Q: Any = None
    samples: int = MC_SAMPLES
    delta: fmpq = MC_DELTA
    seed: int = 0
    source: dict = field(default_factory=dict, compare=False)

    kind2 = "law"

    def __post_init__(self) -> None:
        B._check_size("N", self.N)
        B._check_size("samples", self.samples)
        if self.model == "iid":
            if (self.law is None) == (self.grid is None):
                raise QKInputError("an iid law input needs exactly one of 'law' or 'grid'")
            if self.grid is not None:
                if len(self.grid) != self.N or any(len(r) != self.N for r in self.grid):
                    raise QKInputError(f"'grid' must be {self.N} x {self.N} laws")
        elif self.model == "qk":
            if self.n is None:
                raise QKInputError("a qk law input needs the head dimension n")
            B._check_size("n", self.n)
            if self.law_K is None or self.law_Q is None:
                raise QKInputError("a qk law input needs law_K and law_Q")
        else:
            raise QKInputError(f"unknown law model {self.model!r} (use 'iid' or 'qk')")

    # ---- the laws of the entries ------------------------------------------
    def entry_grid(self) -> list[list[Any]]:
        """iid model: the N x N list of entry laws."""
        if self.grid is not None:
            return [list(r) for r in self.grid]
        return [[self.law] * self.N for _ in range(self.N)]

    def all_laws(self) -> list[Any]:
        if self.model == "iid":
            return [l for r in self.entry_grid() for l in r]
        return [self.law_K, self.law_Q]

    def is_finite(self) -> bool:
        """Exact enumeration applies: every law is finite (degenerate Gaussians
        count), or (qk) one factor is the point mass at 0, so L = 0 a.s."""
        if self.model == "qk" and (B.is_zero_law(self.law_K) or B.is_zero_law(self.law_Q)):
            return True
        return all(B.as_finite(l) is not None for l in self.all_laws())

    def sigma2(self) -> fmpq:
        """iid: the common second moment if the entries share one, else the
        mean of the entries' second moments (so that E‖L‖² = N²σ² is automatic)."""
        ms = [l.second_moment() for l in self.all_laws()]
        return sum(ms, fmpq(0)) / len(ms)

    # ---- JSON ---------------------------------------------------------------
    def to_json(self) -> dict:
        out: dict[str, Any] = {"kind": "law", "model": self.model, "N": self.N}
        if self.model == "iid":
            if self.grid is not None:
                out["grid"] = [[l.to_json() for l in r] for r in self.grid]
            else:
                out["law"] = self.law.to_json()
        else:
            out["n"] = self.n
            out["law_K"] = self.law_K.to_json()
            out["law_Q"] = self.law_Q.to_json()
        if not self.is_finite():
            out["monte_carlo"] = {"samples": self.samples, "delta": fmpq_str(self.delta), "seed": self.seed}
        return out

    @staticmethod
    def from_document(doc: Any, where: str = "input") -> "LawInput":
        """Inverse of :meth:`to_json`.  Laws: ``{"value": "prob"}``,
        ``{"gaussian": "v"[, "mean": "m"]}`` or a name (``rademacher``,
        ``skewed``, ``lazy``, ``skewed3``, ``gaussian``).  Raises QKInputError."""
        if not isinstance(doc, dict):
            raise QKInputError(f"{where}: a law input is a JSON object with 'model', 'N' and the laws")
        model = str(doc.get("model", "iid"))
        allowed = {"kind", "model", "N", "monte_carlo"} | (
            {"law", "grid"} if model == "iid" else {"n", "law_K", "law_Q"} if model == "qk" else set())
        extra = sorted(str(k) for k in doc if k not in allowed)
        if extra and model in ("iid", "qk"):
            raise QKInputError(f"{where}: unknown key {extra[0]!r} (a {model} law input has the keys "
                               f"{', '.join(sorted(allowed))})")
        if "kind" in doc and doc["kind"] != "law":
            raise QKInputError(f"{where}: key 'kind' is {doc['kind']!r}, but this claim takes a law input")
        if model == "iid" and "law" in doc and "grid" in doc:
            raise QKInputError(f"{where}: give 'law' or 'grid', not both")

        def size(key: str) -> int:
            if key not in doc:
                raise QKInputError(f"{where}: missing '{key}'")
            return parse_integer(doc[key], f"{where}: {key}")

        mc = doc.get("monte_carlo") or {}
        if not isinstance(mc, dict):
            raise QKInputError(f"{where}: 'monte_carlo' must be an object with samples, delta, seed")
        extra = sorted(str(k) for k in mc if k not in ("samples", "delta", "seed"))
        if extra:
            raise QKInputError(f"{where}: unknown key {extra[0]!r} in 'monte_carlo' (keys: samples, delta, seed)")
        kw = {}
        if mc:
            kw = {"samples": parse_integer(mc.get("samples", MC_SAMPLES), f"{where}: samples"),
                  "delta": B.to_fmpq(mc.get("delta", MC_DELTA), f"{where}: delta"),
                  "seed": parse_integer(mc.get("seed", 0), f"{where}: seed")}
        if model == "iid":
            if "grid" in doc:
                grid = tuple(tuple(B.parse_law(l) for l in r) for r in doc["grid"])
                return LawInput("iid", size("N"), grid=grid, **kw)
            if "law" not in doc:
                raise QKInputError(f"{where}: an iid law input needs 'law' or 'grid'")
            return LawInput("iid", size("N"), law=B.parse_law(doc["law"]), **kw)
        if model == "qk":
            for k in ("law_K", "law_Q"):
                if k not in doc:
                    raise QKInputError(f"{where}: a qk law input needs '{k}'")
            return LawInput("qk", size("N"), n=size("n"), law_K=B.parse_law(doc["law_K"]),
                            law_Q=B.parse_law(doc["law_Q"]), **kw)
        raise QKInputError(f"{where}: unknown law model {model!r} (use 'iid' or 'qk')")

    def describe(self) -> str:
        if self.model == "iid":
            what = self.law.label() if self.law is not None else "per-entry laws"
            return f"iid N={self.N}, {what}"
        return f"qk n={self.n} N={self.N}, K {self.law_K.label()}, Q {self.law_Q.label()}"
