"""Concrete inputs of claims, built from user files: one table of input kinds.

A file is JSON (numbers read by their decimal text, ``"p/q"`` strings allowed; see
:mod:`qkverify.exact.rational` for the one number grammar), ``.npy`` (floats taken as exact
dyadic rationals) or ``.npz`` (arrays named like the JSON keys).  Every input kind is a
frozen dataclass deriving from :class:`Input`: its fields say how each key is read and written
(:class:`Codec`), its ``check`` states the Lean types the fields must have together (one index
type, square, a basis is invertible, …), and :data:`SHAPES` says which keys make a document of
that kind.  Inputs accept everything the Lean types accept -- singular matrices, entries of any
size, ``k = 0``, a head with ``n = 0`` -- so that a dropped hypothesis can be shown needed.

=============================================  ===============================  ==============
document keys                                  class                            ``kind2``
=============================================  ===============================  ==============
a nested list, or ``{"L"[, "n"]}``             :class:`MatrixInput`             matrix / matrix_bound
``{"S"}`` (S symmetric)                        :class:`MatrixInput` with L = S  matrix
``{"W_Q", "W_K"[, "B", "k", "lam", "N"]}``     :class:`HeadInput`               head
``{"L", "U"}``                                 :class:`OrthoInput`              matrix_pair
``{"L", "face", "H", "P"}``                    :class:`FiberInput`              matrix_fiber
``{"L", "n", "V"}``                            :class:`SubspaceInput`           matrix_subspace
``{"v", "s"}``                                 :class:`FamilyInput`             family
``{"u", "v", "s"}``                            :class:`RankOneInput`            rank_one
``{"p", "N"}``                                 :class:`ThetaPointInput`         theta_point
``{"S", "lam"[, "lam2"]}``                     :class:`SpectrumInput`           matrix_spectrum
``{"Q", "K", "V"}``                            :class:`TripleInput`             triple
``{"x", …}`` or a flat list                    :class:`VectorInput`             vector
``{"rho"}``                                    :class:`RhoInput`                rho
``{"law", "u", "v", …}``                       :class:`LobesInput`              lobes
``{"model", "N", …}``                          :class:`LawInput`                law
``{"kind": <§1 kind>, …}``                     io/attention_inputs.py           (the §1 kinds)
=============================================  ===============================  ==============

Exact reals (``lam``): a rational, or an algebraic number given as ``"root(<poly in x>, [lo, hi])"``
or ``{"poly": [c0, c1, …], "interval": [lo, hi]}`` (ascending integer coefficients) with exactly
one root of the polynomial in [lo, hi].

Strict: a key (or ``.npz`` array) that the shape does not have is refused (naming it), as is a
repeated JSON key.  Every shape also accepts the ``"kind"`` key that its ``to_json``/``to_json2``
writes, so written inputs read back.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar

import numpy as np
from flint import fmpq, fmpq_mat

from ..errors import QKInputError
from ..exact.algebraic import RealAlgebraic, from_isolating_interval
from ..exact.matrix import is_symmetric, to_str_rows
from ..exact.rational import fmpq_str, parse_integer, parse_rational, read_input_file, rows_to_fmpq_mat
from .law_inputs import MC_DELTA, MC_SAMPLES, LawInput, LobesInput  # noqa: F401  (the random inputs: io/law_inputs.py)

#: the largest k of trace_pow_symPart (tr(S^k) is computed by repeated squaring of exact matrices)
K_MAX = 4096


# ---- reading and writing one field ---------------------------------------------------------------


@dataclass(frozen=True)
class Codec:
    """How a field is read from a document value (``read(value, where)``, QKInputError naming the
    problem) and written back (``write(value)``, JSON)."""

    read: Callable[[Any, str], Any]
    write: Callable[[Any], Any]


def _mat(doc: Any, key: str, square: bool) -> fmpq_mat:
    return rows_to_fmpq_mat(doc, key, square=square)


def _vector(x: Any, where: str) -> tuple[fmpq, ...]:
    if isinstance(x, np.ndarray):
        x = x.tolist()
    if not isinstance(x, list) or not x or any(isinstance(e, list) for e in x):
        raise QKInputError(f"{where}: expected a non-empty flat list of numbers")
    return tuple(rows_to_fmpq_mat([x], where).tolist()[0])


def _size(x: Any, where: str, least: int) -> int:
    if isinstance(x, np.integer):
        x = int(x)
    k = parse_integer(x, where)
    if k < least or k > 4096:
        what = "a nonnegative integer" if least == 0 else f"an integer from {least}"
        raise QKInputError(f"{where}: must be {what} at most 4096, got {k}")
    return k


_ROOT = re.compile(r"^\s*root\((?P<poly>.+),\s*\[(?P<lo>[^,\]]+),(?P<hi>[^\]]+)\]\s*\)\s*$")


def _poly_coeffs(text: str, where: str) -> list[int]:
    """Ascending integer coefficients of a polynomial in x written as text (sympy's parser on a
    restricted alphabet: digits, x, + − * ^ ( ) and spaces)."""
    import sympy

    if not re.fullmatch(r"[0-9x+\-*^() ]+", text) or len(text) > 4000:
        raise QKInputError(f"{where}: {text!r} is not a polynomial in x with integer coefficients")
    x = sympy.Symbol("x")
    try:
        p = sympy.Poly(sympy.sympify(text.replace("^", "**"), locals={"x": x}), x)
    except (sympy.SympifyError, sympy.PolynomialError, TypeError, SyntaxError):
        raise QKInputError(f"{where}: {text!r} is not a polynomial in x") from None
    cs = [c for c in reversed(p.all_coeffs())]
    if any(not c.is_Integer for c in cs):
        raise QKInputError(f"{where}: the polynomial must have integer coefficients")
    return [int(c) for c in cs]


def parse_real(x: Any, where: str) -> RealAlgebraic:
    """An exact real: a rational (any form of the number grammar), ``"root(<poly in x>, [lo, hi])"``
    or ``{"poly": [c0, c1, …], "interval": [lo, hi]}``; the interval must isolate one root.

    >>> parse_real("root(x^2 - 2, [1, 2])", "lam[0]").index
    1
    >>> parse_real("-3/4", "lam[1]").rational
    -3/4
    """
    if isinstance(x, dict):
        if set(x) != {"poly", "interval"} or not isinstance(x["poly"], list) or not isinstance(x["interval"], list) \
                or len(x["interval"]) != 2 or len(x["poly"]) > 4097:
            raise QKInputError(f"{where}: an algebraic number is {{\"poly\": [c0, c1, …], \"interval\": [lo, hi]}}")
        coeffs = [parse_integer(c, f"{where}: poly") for c in x["poly"]]
        lo, hi = (parse_rational(t, f"{where}: interval") for t in x["interval"])
    elif isinstance(x, str) and x.strip().startswith("root("):
        m = _ROOT.match(x)
        if m is None:
            raise QKInputError(f"{where}: write an algebraic number as root(<poly in x>, [lo, hi])")
        coeffs = _poly_coeffs(m["poly"], where)
        lo, hi = (parse_rational(m[k].strip(), f"{where}: interval") for k in ("lo", "hi"))
    else:
        return RealAlgebraic.from_rational(parse_rational(x, where))
    try:
        return from_isolating_interval(coeffs, lo, hi)
    except ValueError as err:
        raise QKInputError(f"{where}: {err}") from None


def real_json(r: RealAlgebraic) -> Any:
    """An exact real as written in a certificate input: "p/q", or {"poly", "interval"}."""
    if r.is_rational:
        return fmpq_str(r.rational)
    return {"poly": [str(int(c)) for c in r.poly.coeffs()], "interval": [fmpq_str(r.lo), fmpq_str(r.hi)]}


def _reals(x: Any, where: str) -> tuple[RealAlgebraic, ...]:
    if isinstance(x, np.ndarray):
        x = x.tolist()
    if not isinstance(x, list) or any(isinstance(e, list) for e in x) or len(x) > 4096:
        raise QKInputError(f"{where}: expected a flat list of at most 4096 exact reals")
    return tuple(parse_real(e, f"{where}[{i}]") for i, e in enumerate(x))


SQUARE = Codec(lambda x, w: _mat(x, w, True), to_str_rows)
RECT = Codec(lambda x, w: _mat(x, w, False), to_str_rows)
VECTOR = Codec(_vector, lambda v: [fmpq_str(t) for t in v])
RATIONAL = Codec(lambda x, w: rows_to_fmpq_mat([[x]], w)[0, 0], fmpq_str)
NAT = Codec(lambda x, w: _size(x, w, 0), int)
POS = Codec(lambda x, w: _size(x, w, 1), int)
REALS = Codec(_reals, lambda v: [real_json(t) for t in v])
TEXT = Codec(lambda x, w: x, lambda x: x)


def fld(codec: Codec, default: Any = dataclasses.MISSING) -> Any:
    """A dataclass field read and written by ``codec`` (optional when it has a default)."""
    return field(default=default, metadata={"codec": codec})


def _source() -> Any:
    return field(default_factory=dict, compare=False)


# ---- the input kinds ----------------------------------------------------------------------------


class Input:
    """Common behaviour of the input kinds: a document is read field by field (:class:`Codec`),
    then :meth:`check` enforces the Lean types the fields have together; ``to_json2`` writes the
    certificate input object, ``to_json`` the document shape (``kind`` = the first of
    ``DOC_KINDS``), both read back by :func:`input_from_document`."""

    kind2: ClassVar[str]
    #: the values of a document's ``kind`` key that name this shape
    DOC_KINDS: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def coded(cls) -> list[dataclasses.Field]:
        return [f for f in dataclasses.fields(cls) if "codec" in f.metadata]

    def _json(self, kind: str) -> dict:
        out: dict[str, Any] = {"kind": kind}
        for f in self.coded():
            v = getattr(self, f.name)
            if v is not None:
                out[f.name] = f.metadata["codec"].write(v)
        return out

    def to_json2(self) -> dict:
        """The certificate input object."""
        return self._json(self.kind2)

    def to_json(self) -> dict:
        """The document this input is read from (its shape's ``kind``)."""
        return self._json(self.DOC_KINDS[0] if self.DOC_KINDS else self.kind2)

    def check(self, where: str) -> None:
        """Raise QKInputError when the fields do not have the Lean types together."""

    @classmethod
    def from_document(cls, doc: dict, where: str = "input", shape: str | None = None) -> "Input":
        """Read ``doc`` field by field: unknown keys and a ``kind`` of another shape are refused,
        a missing required key is named; then :meth:`check`."""
        fs = cls.coded()
        names = {f.name for f in fs}
        required = {f.name for f in fs if f.default is dataclasses.MISSING}
        extra = sorted(str(k) for k in doc if k not in names | {"kind"})
        shape = shape or cls.kind2
        if extra:
            allowed = ", ".join(sorted(required)) + "".join(f" [{k}]" for k in sorted(names - required))
            raise QKInputError(f"{where}: unknown key {extra[0]!r} (a {shape} input has the keys {allowed})")
        if "kind" in doc and doc["kind"] not in cls.DOC_KINDS + (cls.kind2,):
            raise QKInputError(f"{where}: key 'kind' is {doc['kind']!r}, but the keys are those of a {shape} input")
        missing = sorted(required - set(doc))
        if missing:
            raise QKInputError(f"{where}: a {shape} input needs the key {missing[0]!r}")
        kw = {f.name: f.metadata["codec"].read(doc[f.name], f"{where}: {f.name}") for f in fs if f.name in doc}
        obj = cls(**kw)
        obj.check(where)
        return obj


@dataclass(frozen=True)
class MatrixInput(Input):
    """A square rational matrix L (``Matrix (Fin N) (Fin N) ℝ``); ``n`` an optional natural
    number (Lemma 3 takes L with rank L ≤ n)."""

    L: fmpq_mat = fld(SQUARE)
    n: int | None = fld(NAT, None)
    source: dict = _source()
    DOC_KINDS = ("matrix", "matrix_bound")

    @property
    def N(self) -> int:
        return self.L.nrows()

    @property
    def kind2(self) -> str:  # type: ignore[override]
        """``matrix``, or ``matrix_bound`` with n."""
        return "matrix" if self.n is None else "matrix_bound"


@dataclass(frozen=True)
class SymmetricInput(Input):
    """The document ``{"S": …}``: read as the MatrixInput L = S (S must be symmetric)."""

    S: fmpq_mat = fld(SQUARE)
    DOC_KINDS = ("symmetric",)
    kind2 = "matrix"

    def check(self, where: str) -> None:
        if not is_symmetric(self.S):
            raise QKInputError(f"{where}: S is not symmetric")


@dataclass(frozen=True)
class HeadInput(Input):
    """An attention head: W_Q, W_K rational n × N (rows = head dimensions, n = 0 allowed with
    ``N`` given), L = W_Kᵀ W_Q.  Optional: a basis B of C (columns, invertible) for the Gram
    matrix; k, the power of GramForm.trace_pow_symPart; lam, a vector of 2n exact reals (the
    implicit argument of the GramForm theorems about the sorted normalised spectrum)."""

    W_Q: fmpq_mat = fld(Codec(lambda x, w: _empty_or(x, w), to_str_rows))
    W_K: fmpq_mat = fld(Codec(lambda x, w: _empty_or(x, w), to_str_rows))
    source: dict = _source()
    B: fmpq_mat | None = fld(SQUARE, None)
    k: int | None = fld(Codec(lambda x, w: _bounded(x, w, K_MAX), int), None)
    lam: tuple | None = fld(REALS, None)
    DOC_KINDS = ("head",)
    kind2 = "head"

    @property
    def n(self) -> int:
        return self.W_Q.nrows()

    @property
    def N(self) -> int:
        return self.W_Q.ncols()

    @property
    def L(self) -> fmpq_mat:
        return self.W_K.transpose() * self.W_Q

    def to_json2(self) -> dict:
        out = super().to_json2()
        if self.n == 0:
            out["N"] = self.N
        return out

    def to_json(self) -> dict:
        out = super().to_json()
        if self.n == 0:
            out["N"] = self.N
        return out

    @classmethod
    def from_document(cls, doc: dict, where: str = "input", shape: str | None = None) -> "HeadInput":
        if not {"W_Q", "W_K"} <= set(doc):
            have = sorted(set(doc) & {"W_Q", "W_K"})
            raise QKInputError(f"{where}: a head needs both W_Q and W_K; found only {have[0] if have else 'neither'}")
        doc = dict(doc)
        N = doc.pop("N", None)
        if N is not None:  # a head with no rows: W_Q = W_K = [] of width N
            N = _size(N, f"{where}: N", 1)
            if doc["W_Q"] != [] or doc["W_K"] != []:
                raise QKInputError(f"{where}: N is given only for a head with n = 0 (W_Q = W_K = [])")
            doc["W_Q"] = doc["W_K"] = fmpq_mat(0, N)
        return super().from_document(doc, where, "head")

    def check(self, where: str) -> None:
        WQ, WK = self.W_Q, self.W_K
        if (WQ.nrows(), WQ.ncols()) != (WK.nrows(), WK.ncols()):
            raise QKInputError(f"{where}: W_Q is {WQ.nrows()}x{WQ.ncols()} but W_K is {WK.nrows()}x{WK.ncols()}; "
                               "both must be n x N")
        if self.B is not None and (self.B.nrows() != WQ.ncols() or self.B.det() == 0):
            raise QKInputError(f"{where}: B must be an invertible N x N matrix (a basis of C)")
        if self.lam is not None and len(self.lam) != 2 * self.n:
            raise QKInputError(f"{where}: lam must have 2n = {2 * self.n} entries (Fin (2 * n) → ℝ)")


def _empty_or(x: Any, where: str) -> fmpq_mat:
    if isinstance(x, fmpq_mat):
        return x
    return _mat(x, where, False)


def _bounded(x: Any, where: str, hi: int) -> int:
    k = parse_integer(x, where)
    if not 0 <= k <= hi:
        raise QKInputError(f"{where} must be a natural number ≤ {hi}, got {k}")
    return k


@dataclass(frozen=True)
class OrthoInput(Input):
    """A square rational L with a square rational U of the same size (Lean: ``profile_conj``
    takes any U with the hypothesis UᵀU = 1)."""

    L: fmpq_mat = fld(SQUARE)
    U: fmpq_mat = fld(SQUARE)
    source: dict = _source()
    DOC_KINDS = ("orthogonal", "matrix_pair")
    kind2 = "matrix_pair"

    @property
    def N(self) -> int:
        return self.L.nrows()

    def check(self, where: str) -> None:
        if self.U.nrows() != self.L.nrows():
            raise QKInputError(f"{where}: U is {self.U.nrows()}x{self.U.nrows()} but L is "
                               f"{self.L.nrows()}x{self.L.nrows()}")


@dataclass(frozen=True)
class FiberInput(Input):
    """L with a candidate decomposition S = H + P (face ``d``) or S = H − P (face ``c``), for the ←
    direction of Theorem 4's decomposition faces."""

    L: fmpq_mat = fld(SQUARE)
    face: str = fld(TEXT)
    H: fmpq_mat = fld(SQUARE)
    P: fmpq_mat = fld(SQUARE)
    source: dict = _source()
    DOC_KINDS = ("matrix_fiber",)
    kind2 = "matrix_fiber"

    @property
    def N(self) -> int:
        return self.L.nrows()

    def check(self, where: str) -> None:
        if self.face not in ("c", "d"):
            raise QKInputError(f"{where}: face must be \"c\" (S = H − P) or \"d\" (S = H + P)")
        if not (self.H.nrows() == self.P.nrows() == self.L.nrows()):
            raise QKInputError(f"{where}: H and P must have the size of L")


@dataclass(frozen=True)
class TripleInput(Input):
    """A triple (Q, K, V) of the self-attention dynamics (docs/MATH.md, Clustering regimes): Q, K
    rational k × d, V rational d × d; the score of tokens x, y is ⟨Qx, Ky⟩ (no 1/√d: absorbed
    into Q)."""

    Q: fmpq_mat = fld(RECT)
    K: fmpq_mat = fld(RECT)
    V: fmpq_mat = fld(SQUARE)
    source: dict = _source()
    DOC_KINDS = ("triple",)
    kind2 = "triple"

    @property
    def d(self) -> int:
        return self.V.nrows()

    @classmethod
    def from_document(cls, doc: dict, where: str = "input", shape: str | None = None) -> "TripleInput":
        missing = sorted({"Q", "K", "V"} - set(doc))
        if missing and not (set(doc) - {"Q", "K", "V", "kind"}):
            raise QKInputError(f"{where}: a triple needs Q, K and V; missing {missing[0]}")
        return super().from_document(doc, where, "triple")

    def check(self, where: str) -> None:
        Q, K, V = self.Q, self.K, self.V
        if (Q.nrows(), Q.ncols()) != (K.nrows(), K.ncols()) or Q.ncols() != V.nrows():
            raise QKInputError(f"{where}: Q and K must both be k x d and V d x d; got Q {Q.nrows()}x{Q.ncols()}, "
                               f"K {K.nrows()}x{K.ncols()}, V {V.nrows()}x{V.ncols()}")


@dataclass(frozen=True)
class ValueHeadInput:
    """One attention head of a weights file for the clustering checks: W_Q, W_K, W_V exact
    rational n × N (rows = head dimensions), W_O exact N × n (the head's block of the output
    projection), biases dropped; ``ref`` is the certificate input (file, SHA-256, tensor
    slices) from which the kernel re-reads them.  Built from a model, never from a document."""

    W_Q: fmpq_mat
    W_K: fmpq_mat
    W_V: fmpq_mat
    W_O: fmpq_mat
    ref: dict
    source: dict = field(default_factory=dict, compare=False)

    kind2 = "value_head"

    def to_json2(self) -> dict:
        """The certificate input object (the weights are named, not copied)."""
        return dict(self.ref, kind="value_head")


@dataclass(frozen=True)
class SubspaceInput(Input):
    """L (N × N), a natural number n and a subspace V of ℝ^N given by a basis (the rows of V,
    linearly independent): the input of Lemma 3's ``finrank_le_of_posDefOn``."""

    L: fmpq_mat = fld(SQUARE)
    n: int = fld(NAT)
    V: fmpq_mat = fld(RECT)
    source: dict = _source()
    DOC_KINDS = ("subspace", "matrix_subspace")
    kind2 = "matrix_subspace"

    @property
    def N(self) -> int:
        return self.L.nrows()

    def check(self, where: str) -> None:
        if self.V.ncols() != self.L.nrows():
            raise QKInputError(f"{where}: V must have N = {self.L.nrows()} columns (its rows are a basis of the "
                               "subspace)")
        if self.V.rank() != self.V.nrows():
            raise QKInputError(f"{where}: the rows of V must be linearly independent (a basis of the subspace)")


def _indices(x: Any, where: str) -> tuple[int, ...]:
    if not isinstance(x, list):
        raise QKInputError(f"{where} must be a list of indices")
    return tuple(sorted(_size(i, where, 0) for i in x))


@dataclass(frozen=True)
class FamilyInput(Input):
    """A family of N vectors of length N (row i of ``v`` is v_i) and a set ``s`` of indices: the
    input of ``exists_orthogonal_cols`` (only v_i with i ∈ s matter)."""

    v: fmpq_mat = fld(SQUARE)
    s: tuple[int, ...] = fld(Codec(_indices, list))
    source: dict = _source()
    DOC_KINDS = ("family",)
    kind2 = "family"

    @property
    def N(self) -> int:
        return self.v.nrows()

    def check(self, where: str) -> None:
        if len(set(self.s)) != len(self.s) or any(i >= self.v.nrows() for i in self.s):
            raise QKInputError(f"{where}: s must list distinct indices below N = {self.v.nrows()}")


@dataclass(frozen=True)
class RankOneInput(Input):
    """Vectors u, v of length N and a scalar s (the arguments of ``profile_smul_vecMulVec``);
    L = s·u vᵀ."""

    u: tuple[fmpq, ...] = fld(VECTOR)
    v: tuple[fmpq, ...] = fld(VECTOR)
    s: fmpq = fld(RATIONAL)
    source: dict = _source()
    DOC_KINDS = ("rank_one",)
    kind2 = "rank_one"

    @property
    def N(self) -> int:
        return len(self.u)

    @property
    def L(self) -> fmpq_mat:
        return fmpq_mat([[self.s * a * b for b in self.v] for a in self.u])

    def check(self, where: str) -> None:
        if len(self.u) != len(self.v):
            raise QKInputError(f"{where}: u and v must have the same length")


@dataclass(frozen=True)
class ThetaPointInput(Input):
    """A point p = (a, b, c, d) with rational coordinates and a size N ≥ 1: the input of the ⊇
    direction of ``profiles_rank_one_eq_Theta`` (is p the profile of a rank-one N × N matrix?)."""

    p: tuple[fmpq, fmpq, fmpq, fmpq] = fld(VECTOR)
    N: int = fld(POS)
    source: dict = _source()
    DOC_KINDS = ("theta_point",)
    kind2 = "theta_point"

    def check(self, where: str) -> None:
        if len(self.p) != 4:
            raise QKInputError(f"{where}: p must have four coordinates (a, b, c, d)")


@dataclass(frozen=True)
class SpectrumInput(Input):
    """A square rational matrix S (k × k, any) and vectors lam (and lam2) of exact reals: the
    arguments of ``GramForm.IsSortedNormalizedNonzeroSpectrum S lam`` and of
    ``isSortedNormalizedNonzeroSpectrum_unique`` (lam' = lam2, of the same length)."""

    S: fmpq_mat = fld(SQUARE)
    lam: tuple = fld(REALS)
    lam2: tuple | None = fld(REALS, None)
    source: dict = _source()
    DOC_KINDS = ("matrix_spectrum",)
    kind2 = "matrix_spectrum"

    def check(self, where: str) -> None:
        if self.lam2 is not None and len(self.lam2) != len(self.lam):
            raise QKInputError(f"{where}: lam and lam2 must have the same length (one m)")


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


# ---- the table of document shapes ---------------------------------------------------------------

#: (name, keys that make a document of this shape, class), tried in order; the first whose keys
#: are all present reads the document (its class then refuses any key it does not have)
SHAPES: tuple[tuple[str, frozenset, type], ...] = (
    ("subspace", frozenset({"L", "n", "V"}), SubspaceInput),
    ("rank_one", frozenset({"u", "v", "s"}), RankOneInput),
    ("family", frozenset({"v", "s"}), FamilyInput),
    ("theta_point", frozenset({"p", "N"}), ThetaPointInput),
    ("matrix_spectrum", frozenset({"S", "lam"}), SpectrumInput),
    ("triple", frozenset({"Q"}), TripleInput),
    ("triple", frozenset({"K"}), TripleInput),
    ("head", frozenset({"W_Q"}), HeadInput),
    ("head", frozenset({"W_K"}), HeadInput),
    ("fiber", frozenset({"L", "face", "H", "P"}), FiberInput),
    ("orthogonal", frozenset({"L", "U"}), OrthoInput),
    ("matrix", frozenset({"L"}), MatrixInput),
    ("symmetric", frozenset({"S"}), SymmetricInput),
)


def _shape_of(doc: dict, where: str):
    keys = set(doc)
    for name, need, cls in SHAPES:
        if need <= keys:
            return cls.from_document(doc, where, name)
    raise QKInputError(
        f"{where}: expected a matrix or an object with keys L, S, U, W_Q/W_K or Q/K/V; found keys {sorted(keys)}")


def _is_vector_like(doc: Any) -> bool:
    if isinstance(doc, list):
        return bool(doc) and not any(isinstance(t, (list, dict)) for t in doc)
    return isinstance(doc, dict) and (doc.get("kind") in ("vector", "rho", "lobes") or "x" in doc or "rho" in doc
                                      or {"law", "u", "v"} <= set(doc))


#: what a caller's ``kind`` (a Claim.input_kind) makes of a document of another shape
_READINGS: dict[str, Callable[[Any], Any]] = {
    "matrix": lambda o: MatrixInput(o.L) if isinstance(o, (HeadInput, OrthoInput)) else o,
    "symmetric": lambda o: MatrixInput(o.L) if isinstance(o, (HeadInput, OrthoInput)) else o,
    "matrix_n": lambda o: (MatrixInput(o.L) if isinstance(o, OrthoInput)
                           else MatrixInput(o.L, o.n) if isinstance(o, HeadInput) else o),
}


#: what a reader asking for ``kind`` accepts, and the words naming it when another input is given
#: (a law, §1, vector, rho, lobes, family or Θ-point input has no matrix L)
_WANTED = {"matrix": (lambda x: hasattr(x, "L"), "a matrix (or a head)"),
           "symmetric": (lambda x: hasattr(x, "L"), "a symmetric matrix (or a head)"),
           "matrix_n": (lambda x: isinstance(x, MatrixInput), "{\"L\": …, \"n\": k} or a head"),
           "head": (lambda x: isinstance(x, HeadInput), "a head {\"W_Q\": …, \"W_K\": …}"),
           "orthogonal": (lambda x: isinstance(x, OrthoInput), "{\"L\": …, \"U\": …} with U orthogonal"),
           "triple": (lambda x: isinstance(x, TripleInput), "a triple {\"Q\": …, \"K\": …, \"V\": …}")}


def input_from_document(doc: Any, kind: str | None = None, where: str = "input"):
    """Build a claim input from a parsed document (see the module docstring's table).

    ``kind`` (a Claim.input_kind) selects what is expected; a head is also accepted where a matrix
    is expected (its L = W_Kᵀ W_Q is used).  Raises QKInputError naming the problem -- including
    a key (or an ``.npz`` array) that the document's shape does not have, and an input of another
    kind than ``kind`` asks for (:data:`_WANTED`)."""
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
    if _is_vector_like(doc):
        if isinstance(doc, list) or doc.get("kind") == "vector" or "x" in doc:
            return VectorInput.from_document(doc, where)
        if doc.get("kind") == "rho" or "rho" in doc:
            if set(doc) - {"kind", "rho"}:
                raise QKInputError(f"{where}: a rho input is {{\"rho\": q}}")
            return RhoInput(parse_rational(doc["rho"], f"{where}: rho"))
        return LobesInput.from_document(doc, where)
    if isinstance(doc, (np.ndarray, list)):
        obj: Any = MatrixInput(_mat(doc, f"{where}: L", True))
    elif isinstance(doc, dict):
        obj = _shape_of(doc, where)
        if isinstance(obj, SymmetricInput):
            obj = MatrixInput(obj.S)
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
    obj = _READINGS.get(kind or "", lambda o: o)(obj)
    if kind == "matrix_n" and isinstance(obj, MatrixInput) and obj.n is None:
        raise QKInputError(f"{where}: this claim needs a head dimension: give {{\"L\": …, \"n\": k}} or a head "
                           "{\"W_Q\": …, \"W_K\": …}")
    return obj


def load_input(path: str | Path, kind: str | None = None):
    """Read ``path`` (JSON / .npy / .npz) into a claim input; QKInputError on
    any problem (missing file, NaN, ragged rows, non-square, …)."""
    doc = read_input_file(path)
    if isinstance(doc, dict) and all(isinstance(v, np.ndarray) for v in doc.values()):
        doc = {k: v for k, v in doc.items()}
    return input_from_document(doc, kind, str(path))
