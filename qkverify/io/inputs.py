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
* ``{"L": …, "face": "c"|"d", "H": …, "P": …}`` -> FiberInput (a candidate S = H ± P)
* ``{"L": …, "n": k, "V": …}``            -> SubspaceInput (rows of V: a basis of a subspace)
* ``{"v": …, "s": [i, …]}``               -> FamilyInput   (N vectors, an index set)
* ``{"u": […], "v": […], "s": x}``        -> RankOneInput  (L = s·u vᵀ)
* ``{"p": [a, b, c, d], "N": k}``         -> ThetaPointInput
* ``{"model": "iid" | "qk", "N": …, …}``  -> LawInput      (claims on random matrices)
* ``{"Q": …, "K": …, "V": …}``            -> TripleInput   (Q, K k x d, V d x d; docs/MATH.md)

Strict: a key (or ``.npz`` array) that the shape does not have is refused
(naming it), as is a repeated JSON key.  Every shape also accepts the
``"kind"`` key that its ``to_json``/``to_json2`` writes, so written inputs read back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from flint import fmpq, fmpq_mat

from ..errors import QKInputError
from ..exact.matrix import is_symmetric, to_str_rows
from ..exact.rational import fmpq_str, parse_integer, read_input_file, rows_to_fmpq_mat
from .law_inputs import MC_DELTA, MC_SAMPLES, LawInput, LobesInput  # noqa: F401  (the random inputs: io/law_inputs.py)


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


@dataclass(frozen=True)
class SubspaceInput:
    """L (N x N), a bound n ≥ 0 and a subspace V of ℝ^N given by a basis (the rows of V,
    linearly independent): the input of Lemma 3's ``finrank_le_of_posDefOn``."""

    L: fmpq_mat
    n: int
    V: fmpq_mat
    source: dict = field(default_factory=dict, compare=False)

    kind2 = "matrix_subspace"

    @property
    def N(self) -> int:
        return self.L.nrows()

    def to_json2(self) -> dict:
        """The format-2 certificate input object."""
        return {"kind": "matrix_subspace", "L": to_str_rows(self.L), "n": self.n, "V": to_str_rows(self.V)}


@dataclass(frozen=True)
class FamilyInput:
    """A family of N vectors of length N (row i of ``v`` is v_i) and a set ``s`` of indices:
    the input of ``exists_orthogonal_cols`` (only v_i with i ∈ s matter)."""

    v: fmpq_mat
    s: tuple[int, ...]
    source: dict = field(default_factory=dict, compare=False)

    kind2 = "family"

    @property
    def N(self) -> int:
        return self.v.nrows()

    def to_json2(self) -> dict:
        """The format-2 certificate input object."""
        return {"kind": "family", "v": to_str_rows(self.v), "s": list(self.s)}


@dataclass(frozen=True)
class RankOneInput:
    """Vectors u, v of length N and a scalar s (the arguments of ``profile_smul_vecMulVec``);
    L = s·u vᵀ."""

    u: tuple[fmpq, ...]
    v: tuple[fmpq, ...]
    s: fmpq
    source: dict = field(default_factory=dict, compare=False)

    kind2 = "rank_one"

    @property
    def N(self) -> int:
        return len(self.u)

    @property
    def L(self) -> fmpq_mat:
        return fmpq_mat([[self.s * a * b for b in self.v] for a in self.u])

    def to_json2(self) -> dict:
        """The format-2 certificate input object."""
        return {"kind": "rank_one", "u": [fmpq_str(x) for x in self.u], "v": [fmpq_str(x) for x in self.v],
                "s": fmpq_str(self.s)}


@dataclass(frozen=True)
class ThetaPointInput:
    """A point p = (a, b, c, d) with rational coordinates and a size N ≥ 1: the input of the ⊇
    direction of ``profiles_rank_one_eq_Theta`` (is p the profile of a rank-one N x N matrix?)."""

    p: tuple[fmpq, fmpq, fmpq, fmpq]
    N: int
    source: dict = field(default_factory=dict, compare=False)

    kind2 = "theta_point"

    def to_json2(self) -> dict:
        """The format-2 certificate input object."""
        return {"kind": "theta_point", "p": [fmpq_str(x) for x in self.p], "N": self.N}


def _vector(x: Any, where: str) -> tuple[fmpq, ...]:
    if isinstance(x, np.ndarray):
        x = x.tolist()
    if not isinstance(x, list) or not x or any(isinstance(e, list) for e in x):
        raise QKInputError(f"{where}: expected a non-empty flat list of numbers")
    return tuple(rows_to_fmpq_mat([x], where).tolist()[0])


def _size(x: Any, where: str, least: int) -> int:
    try:
        k = int(str(x))
    except ValueError:
        raise QKInputError(f"{where} must be an integer ≥ {least}, got {x!r}") from None
    if k < least or k > 4096:
        raise QKInputError(f"{where} must be an integer from {least} to 4096, got {k}")
    return k


def _special_input(doc: dict, where: str):
    """The inputs of Lemma 3's subspace form, exists_orthogonal_cols, profile_smul_vecMulVec and
    the ⊇ direction of profiles_rank_one_eq_Theta (None when ``doc`` is none of them)."""
    keys = set(doc)
    if {"L", "n", "V"} <= keys:
        _check_keys(doc, "subspace", where)
        L = _mat(doc["L"], f"{where}: L", True)
        V = _mat(doc["V"], f"{where}: V", False)
        if V.ncols() != L.nrows():
            raise QKInputError(f"{where}: V must have N = {L.nrows()} columns (its rows are a basis of the subspace)")
        if V.rank() != V.nrows():
            raise QKInputError(f"{where}: the rows of V must be linearly independent (a basis of the subspace)")
        return SubspaceInput(L, _size(doc["n"], f"{where}: n", 0), V)
    if {"u", "v", "s"} <= keys:
        _check_keys(doc, "rank_one", where)
        u, v = _vector(doc["u"], f"{where}: u"), _vector(doc["v"], f"{where}: v")
        if len(u) != len(v):
            raise QKInputError(f"{where}: u and v must have the same length")
        return RankOneInput(u, v, rows_to_fmpq_mat([[doc["s"]]], f"{where}: s")[0, 0])
    if {"v", "s"} <= keys:
        _check_keys(doc, "family", where)
        v = _mat(doc["v"], f"{where}: v", True)
        if not isinstance(doc["s"], list):
            raise QKInputError(f"{where}: s must be a list of indices")
        s = tuple(_size(i, f"{where}: s", 0) for i in doc["s"])
        if len(set(s)) != len(s) or any(i >= v.nrows() for i in s):
            raise QKInputError(f"{where}: s must list distinct indices below N = {v.nrows()}")
        return FamilyInput(v, tuple(sorted(s)))
    if {"p", "N"} <= keys:
        _check_keys(doc, "theta_point", where)
        p = _vector(doc["p"], f"{where}: p")
        if len(p) != 4:
            raise QKInputError(f"{where}: p must have four coordinates (a, b, c, d)")
        return ThetaPointInput(p, _size(doc["N"], f"{where}: N", 1))
    return None


@dataclass(frozen=True)
class VectorInput:
    """A real vector x for Appendices B and C (and the deterministic parts of Theorem 5).

    x          -- rationals μ; the Lean vector is μ itself, or μ/‖μ‖ when ``normalize``
                  (exact in ℚ(√s), s = ‖μ‖²: a normalised spectrum)
    y, c       -- optional second vector (rational) and scalar, for the declarations with
                  more arguments (ι linear and orthogonal; accumulation_estimates with
                  a = x, b = y, ρ = c)
    S          -- optional rational symmetric matrix; the Lean matrix is S, or S/‖μ‖ when
                  ``normalize`` (so that a matrix with eigenvalues μ has spectrum x)
    """

    x: tuple
    normalize: bool = False
    y: tuple | None = None
    c: fmpq | None = None
    S: fmpq_mat | None = None
    source: dict = field(default_factory=dict, compare=False)

    kind2 = "vector"

    def to_json2(self) -> dict:
        """The format-2 certificate input object."""
        out: dict[str, Any] = {"kind": "vector", "x": [fmpq_str(v) for v in self.x], "normalize": self.normalize}
        if self.y is not None:
            out["y"] = [fmpq_str(v) for v in self.y]
        if self.c is not None:
            out["c"] = fmpq_str(self.c)
        if self.S is not None:
            out["S"] = to_str_rows(self.S)
        return out

    @staticmethod
    def from_document(doc: Any, where: str = "input") -> "VectorInput":
        """From a flat list (x as given) or {"x": […], "normalize": bool, "y": […], "c": q,
        "S": rows} — or "k" instead of S: S = Q·diag(x, −y, 0, …)·Qᵀ of size k with a rational
        Cayley Q; QKInputError naming the problem."""
        from ..exact.rational import parse_rational

        if isinstance(doc, list):
            doc = {"x": doc}
        extra = set(doc) - {"kind", "x", "normalize", "y", "c", "S", "k"}
        if extra:
            raise QKInputError(f"{where}: unknown field(s) {sorted(extra)} of a vector input")

        def vec(key: str) -> tuple:
            v = doc[key]
            if not isinstance(v, list) or not v or any(isinstance(t, (list, dict)) for t in v):
                raise QKInputError(f"{where}: {key} must be a non-empty list of numbers")
            if len(v) > 1 << 20:
                raise QKInputError(f"{where}: {key} has more than 2^20 entries")
            return tuple(parse_rational(t, f"{where}: {key}[{i}]") for i, t in enumerate(v))

        x = vec("x")
        norm = doc.get("normalize", False)
        if not isinstance(norm, bool):
            raise QKInputError(f"{where}: normalize must be true or false")
        if norm and not any(x):
            raise QKInputError(f"{where}: the zero vector has no normalisation")
        y = vec("y") if "y" in doc else None
        c = parse_rational(doc["c"], f"{where}: c") if "c" in doc else None
        S = None
        if "S" in doc and "k" in doc:
            raise QKInputError(f"{where}: give S or k, not both")
        if "S" in doc:
            S = _mat(doc["S"], f"{where}: S", True)
        if "k" in doc:   # S = Q·diag(x, −y, 0, …)·Qᵀ (k × k) with a rational Cayley Q, for profile_of_spectrum
            from ..math.accumulation import matrix_with_spectrum

            k = doc["k"]
            if y is None or norm or isinstance(k, bool) or not str(k).isdigit() or not 2 * len(x) <= int(str(k)) <= 256:
                raise QKInputError(f"{where}: k needs y, normalize false and 2·len(x) ≤ k ≤ 256")
            S = matrix_with_spectrum(list(x) + [-t for t in y] + [0] * (int(str(k)) - 2 * len(x)), 0)
        return VectorInput(x, norm, y, c, S)


@dataclass(frozen=True)
class RhoInput:
    """A ratio ρ (Theorem 5: limitProfile ρ, b(ρ), the edges of the limit curve)."""

    rho: fmpq
    source: dict = field(default_factory=dict, compare=False)

    kind2 = "rho"

    def to_json2(self) -> dict:
        return {"kind": "rho", "rho": fmpq_str(self.rho)}


def _mat(doc: Any, key: str, square: bool) -> fmpq_mat:
    return rows_to_fmpq_mat(doc, key, square=square)


#: the keys each document shape may have (``kind`` is what ``to_json`` writes
#: and must name that shape); anything else is refused, naming the key
SHAPES = {
    "head": ({"W_Q", "W_K"}, {"kind", "B"}, ("head",)),
    "orthogonal": ({"L", "U"}, {"kind"}, ("orthogonal", "matrix_pair")),
    "matrix": ({"L"}, {"kind", "n"}, ("matrix", "matrix_bound")),
    "symmetric": ({"S"}, {"kind"}, ("matrix", "symmetric")),
    "fiber": ({"L", "face", "H", "P"}, {"kind"}, ("matrix_fiber",)),
    "subspace": ({"L", "n", "V"}, {"kind"}, ("matrix_subspace",)),
    "rank_one": ({"u", "v", "s"}, {"kind"}, ("rank_one",)),
    "family": ({"v", "s"}, {"kind"}, ("family",)),
    "theta_point": ({"p", "N"}, {"kind"}, ("theta_point",)),
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


#: what a reader asking for ``kind`` accepts, and the words naming it when another input is given
#: (a law, §1, vector, rho, lobes, family or Θ-point input has no matrix L)
_WANTED = {"matrix": (lambda x: hasattr(x, "L"), "a matrix (or a head)"),
           "symmetric": (lambda x: hasattr(x, "L"), "a symmetric matrix (or a head)"),
           "matrix_n": (lambda x: isinstance(x, MatrixInput), "{\"L\": …, \"n\": k} or a head"),
           "head": (lambda x: isinstance(x, HeadInput), "a head {\"W_Q\": …, \"W_K\": …}"),
           "orthogonal": (lambda x: isinstance(x, OrthoInput), "{\"L\": …, \"U\": …} with U orthogonal"),
           "triple": (lambda x: isinstance(x, TripleInput), "a triple {\"Q\": …, \"K\": …, \"V\": …}")}


def input_from_document(doc: Any, kind: str | None = None, where: str = "input"):
    """Build a claim input from a parsed document (see module docstring).

    ``kind`` (a Claim.input_kind) selects what is expected; a head is also
    accepted where a matrix is expected (its L = W_Kᵀ W_Q is used).
    Raises QKInputError naming the problem -- including a key (or an
    ``.npz`` array) that the document's shape does not have (:data:`SHAPES`),
    and an input of another kind than ``kind`` asks for (:data:`_WANTED`).
    """
    obj = _read_document(doc, kind, where)
    if kind in _WANTED and not _WANTED[kind][0](obj):
        what = getattr(obj, "kind2", None) or type(obj).__name__
        raise QKInputError(f"{where}: a {what} input; {_WANTED[kind][1]} is needed")
    return obj


def _read_document(doc: Any, kind: str | None, where: str):
    """:func:`input_from_document` before the check of the kind asked for."""
    if kind == "law" or (isinstance(doc, dict) and "model" in doc):
        return LawInput.from_document(doc, where)
    from .attention_inputs import KINDS as _S1_KINDS, make_input

    if isinstance(doc, dict) and doc.get("kind") in _S1_KINDS:  # §1 inputs (io/attention_inputs.py)
        return make_input(doc, where, {"dirs": [str(Path(where).parent)]})
    if isinstance(doc, dict) and doc.get("kind") in ("vector", "rho", "lobes") or (
            isinstance(doc, dict) and ("x" in doc or "rho" in doc or {"law", "u", "v"} <= set(doc))) or (
            isinstance(doc, list) and doc and not any(isinstance(t, (list, dict)) for t in doc)):
        if isinstance(doc, list) or doc.get("kind") == "vector" or "x" in doc:
            return VectorInput.from_document(doc, where)
        if doc.get("kind") == "rho" or "rho" in doc:
            from ..exact.rational import parse_rational

            if set(doc) - {"kind", "rho"}:
                raise QKInputError(f"{where}: a rho input is {{\"rho\": q}}")
            return RhoInput(parse_rational(doc["rho"], f"{where}: rho"))
        return LobesInput.from_document(doc, where)
    if isinstance(doc, np.ndarray) or isinstance(doc, list):
        obj: Any = MatrixInput(_mat(doc, f"{where}: L", True))
    elif isinstance(doc, dict):
        keys = set(doc)
        special = _special_input(doc, where)
        if special is not None:
            obj = special
        elif {"Q", "K"} & keys:
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
            _check_keys(doc, "fiber", where)
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
                if n < 0:
                    raise QKInputError(f"{where}: n must be a nonnegative integer, got {n}")
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
