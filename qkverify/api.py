"""The Python API: qkverify from a notebook.

Six functions, each a thin layer over the producer or the kernel that the command line uses,
so that a notebook and ``qkverify …`` give the same answers:

* :func:`profile` -- π(L) = (a, b, c, d) of a square matrix (Def 6; ``qkverify profile``);
* :func:`signature` -- the inertia (n_pos, n_neg, n_zero) of a symmetric matrix, or of a head's
  sym_part(W_Kᵀ W_Q) (Theorem 3; ``qkverify signature``);
* :func:`head` -- one attention head from W_Q, W_K (n × N each) or a loaded head record:
  profile, signature, rank of [W_K; W_Q] and Theorem 3 (``qkverify heads`` for one head);
* :func:`load_model` -- a checkpoint, a known model or a Hugging Face hub id from the local cache,
  iterable over its heads (``layer``, ``head``, ``kv_head``, ``W_Q``, ``W_K``);
* :func:`check` -- one Lean declaration or statement on one input (``qkverify check``);
* :func:`verify` -- the independent kernel on a certificate (``qkverify verify``).

Inputs are read exactly or refused: numpy arrays of integer and binary-float dtypes (float16,
float32, float64, longdouble, and ml_dtypes' bfloat16 -- read from its bits -- and float8/float6/
float4 types, widened to float32, which holds every one of their values), nested lists or tuples
of ints, ``Fraction``\\ s, finite floats (their exact binary value) and strings in the README's
number grammar (``"1/3"``, ``"0.1"`` = 1/10), and torch tensors when torch is installed (never
required: a tensor is recognised by its type's module, its bits are read on the CPU).  Bad input
raises :class:`qkverify.InputError` with the command line's one-line message.

Results are small immutable objects with exact values (:class:`fractions.Fraction`, or
:class:`Algebraic` for an irrational algebraic number: ``float()`` gives the nearest float, ``str()``
the project's notation ``root(x^2 - 2, [1, 3/2])``), the evidence level (``exact``, ``certified``,
``empirical``), ``to_dict()`` (the fields of the command's ``--json``), a readable ``repr`` and
``_repr_html_`` for notebooks.

>>> import qkverify
>>> p = qkverify.profile([[1, 2], [3, 4]])
>>> p
Profile(a=1/60, b=3/20, c=5/6, d=0; exact)
>>> p.a, p.b, p.c, p.d
(Fraction(1, 60), Fraction(3, 20), Fraction(5, 6), Fraction(0, 1))
>>> import numpy as np
>>> W = np.array([[1.5, 0, -2], [0.25, 1, 0]], dtype=np.float32)
>>> qkverify.head(W, W).profile.a
Fraction(0, 1)
"""

from __future__ import annotations

import html
import os
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from .errors import QKInputError

InputError = QKInputError

__all__ = ["profile", "signature", "head", "load_model", "check", "verify", "InputError", "Algebraic",
           "Enclosure", "Profile", "Signature", "Head", "CheckResult", "VerifyResult", "as_exact_matrix"]

#: the ranges of ``digits`` the command line takes (``qkverify profile --digits``, ``qkverify heads --digits``)
PROFILE_DIGITS = (1, 10000)
HEAD_DIGITS = (1, 200)


def _digits(digits, bounds: tuple[int, int], where: str) -> int:
    """``digits`` as an int in ``bounds`` (the CLI's range), else InputError."""
    lo, hi = bounds
    if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)) or not lo <= int(digits) <= hi:
        raise QKInputError(f"{where}: digits must be an integer between {lo} and {hi}, not {digits!r}")
    return int(digits)


#: heads up to this d_model take the exact route (charpoly of the N × N sym_part, exact b, c, d); larger
#: ones the cells route of ``qkverify heads`` (exact a, certified b, c, d), which scales to real models
EXACT_HEAD_MAX_N = 48


# ---------------------------------------------------------------------------
# exact values


def _fraction(q) -> Fraction:
    return Fraction(int(q.p), int(q.q))


def _poly_text(coeffs: list[int]) -> str:
    """Integer polynomial in x, highest power first: ``3*x^2 - x + 1``."""
    terms = []
    for k in range(len(coeffs) - 1, -1, -1):
        c = coeffs[k]
        if c == 0:
            continue
        mag = abs(c)
        mono = "" if k == 0 else ("x" if k == 1 else f"x^{k}")
        body = str(mag) if not mono else (mono if mag == 1 else f"{mag}*{mono}")
        sign = "-" if c < 0 else "+"
        terms.append((sign, body))
    if not terms:
        return "0"
    first = ("-" if terms[0][0] == "-" else "") + terms[0][1]
    return first + "".join(f" {s} {b}" for s, b in terms[1:])


def _simplest(x: Fraction, y: Fraction) -> Fraction:
    """The rational with the smallest denominator (then numerator) in [x, y], x ≤ y (continued fractions).

    >>> _simplest(Fraction(141, 100), Fraction(3, 2)), _simplest(Fraction(-3, 2), Fraction(1, 3))
    (Fraction(3, 2), Fraction(0, 1))
    """
    if x <= 0 <= y:
        return Fraction(0)
    if y < 0:
        return -_simplest(-y, -x)
    c = -(-x.numerator // x.denominator)            # ceil(x)
    if c <= y:
        return Fraction(c)
    f = x.numerator // x.denominator                # x, y in (f, f + 1)
    return f + 1 / _simplest(1 / (y - f), 1 / (x - f))


def _q_text(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


@dataclass(frozen=True)
class Algebraic:
    """An exact real algebraic number: the root of ``poly`` (integer coefficients, ascending, irreducible)
    in the rational interval [lo, hi], which holds exactly one root.  ``float()`` is a float near it
    (display only), ``str()`` the notation ``root(<poly in x>, [lo, hi])``; comparisons are exact.

    >>> from qkverify.api import Algebraic
    >>> r2 = Algebraic.sqrt(2)
    >>> r2
    root(x^2 - 2, [1, 2])
    >>> float(r2) == 2 ** 0.5, r2 > Fraction(7, 5), r2 < Fraction(3, 2)
    (True, True, True)
    """

    poly: tuple[int, ...]
    lo: Fraction
    hi: Fraction

    @classmethod
    def _of(cls, x) -> "Algebraic | Fraction":
        """From a :class:`qkverify.exact.algebraic.RealAlgebraic` (a Fraction when it is rational), with
        the simplest isolating interval: its ends are the simplest rationals between the root's own
        interval and its neighbours' (every real root lies in its isolating interval, so a widened
        interval that meets no other root's still holds exactly one root)."""
        if x.is_rational:
            return _fraction(x.rational)
        # the one notation of the package (qkverify.exact.notation): the shortest decimal interval that
        # isolates the root, proved against FLINT's enclosures of the other real roots
        from .exact.notation import isolating_decimal_interval

        lo, hi, g = isolating_decimal_interval([int(c) for c in x.poly.coeffs()], _fraction(x.lo), _fraction(x.hi))
        return cls(tuple(g), lo, hi)

    @classmethod
    def sqrt(cls, n: int) -> "Algebraic | Fraction":
        """√n of a positive integer, exactly (a Fraction when n is a square)."""
        from flint import fmpz_poly

        from .exact.algebraic import real_roots

        return cls._of(real_roots(fmpz_poly([-int(n), 0, 1]))[-1][0])

    def _ra(self):
        """The kernel-side number: its root index is the one real root whose isolating interval meets
        [lo, hi] (exactly one does, since [lo, hi] isolates a root)."""
        from flint import fmpq, fmpz_poly

        from .exact.algebraic import RealAlgebraic, isolate_real_roots

        f = fmpz_poly(list(self.poly))
        lo, hi = fmpq(self.lo.numerator, self.lo.denominator), fmpq(self.hi.numerator, self.hi.denominator)
        hits = [k for k, (a, b) in enumerate(isolate_real_roots(f)) if not (b < lo or a > hi)]
        if len(hits) != 1:
            raise ValueError(f"[{self.lo}, {self.hi}] does not isolate one root of {_poly_text(list(self.poly))}")
        return RealAlgebraic(f, hits[0], lo, hi)

    def _cmp(self, other) -> int:
        from flint import fmpq

        from .exact.algebraic import RealAlgebraic

        if isinstance(other, Algebraic):
            o = other._ra()
        elif isinstance(other, (int, Fraction)):
            o = RealAlgebraic.from_rational(fmpq(Fraction(other).numerator, Fraction(other).denominator))
        else:
            return NotImplemented
        return self._ra().cmp(o)

    def __float__(self) -> float:
        return float(self._ra().to_arb(64).mid())

    def __eq__(self, other) -> bool:
        c = self._cmp(other)
        return NotImplemented if c is NotImplemented else c == 0

    def __lt__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is NotImplemented else c < 0

    def __le__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is NotImplemented else c <= 0

    def __gt__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is NotImplemented else c > 0

    def __ge__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is NotImplemented else c >= 0

    def __hash__(self) -> int:
        return hash(self.poly)

    def __str__(self) -> str:
        from .exact.notation import root_str

        return root_str(list(self.poly), self.lo, self.hi)

    __repr__ = __str__

    def to_dict(self) -> dict:
        return {"root": str(self), "poly": [str(c) for c in self.poly], "interval": [_q_text(self.lo),
                                                                                    _q_text(self.hi)],
                "float": float(self)}


@dataclass(frozen=True)
class Enclosure:
    """A certified enclosure lo ≤ x ≤ hi of a real number whose exact value was not computed
    (rational endpoints; ``float()`` is the midpoint, display only)."""

    lo: Fraction
    hi: Fraction

    def __float__(self) -> float:
        return float((self.lo + self.hi) / 2)

    def __contains__(self, x) -> bool:
        return self.lo <= x <= self.hi

    def __str__(self) -> str:
        return f"[{_q_text(self.lo)}, {_q_text(self.hi)}]"

    def __repr__(self) -> str:
        return f"Enclosure({float(self.lo):.10g} ≤ x ≤ {float(self.hi):.10g})"

    def to_dict(self) -> dict:
        return {"interval": [_q_text(self.lo), _q_text(self.hi)], "float": float(self)}


Value = Fraction | Algebraic | Enclosure


def _value_text(v: Value) -> str:
    return _q_text(v) if isinstance(v, Fraction) else str(v)


def _value_dict(v: Value):
    return _q_text(v) if isinstance(v, Fraction) else v.to_dict()


# ---------------------------------------------------------------------------
# reading inputs exactly


def _torch_array(x) -> np.ndarray:
    """A torch tensor's values as a numpy array read exactly (on the CPU): bfloat16 from its bits,
    float8 types widened to float32 (exact), the others through ``.numpy()``."""
    name = str(getattr(x, "dtype", "?")).removeprefix("torch.")
    if name.startswith("complex") or name == "bool":
        raise QKInputError(f"a torch tensor of dtype {name} cannot be read as exact rationals")
    try:
        t = x.detach().cpu() if hasattr(x, "detach") else x.cpu()
        if name == "bfloat16":
            import sys

            torch = sys.modules[type(x).__module__.split(".")[0]]
            bits = t.contiguous().view(torch.int16).numpy().view(np.uint16)
            return _bf16_bits(bits)
        if name.startswith("float8"):
            return t.float().numpy()
        return t.numpy()
    except QKInputError:
        raise
    except Exception as err:       # a layout or device torch cannot hand to numpy (sparse, meta, …)
        msg = str(err).splitlines()[0] if str(err) else err.__class__.__name__
        raise QKInputError(f"a torch tensor of dtype {name} cannot be read on the CPU ({msg}); "
                           "give a dense tensor with data, e.g. t.to_dense()") from None


def _bf16_bits(bits: np.ndarray) -> np.ndarray:
    """bfloat16 values from their 16-bit patterns: the top half of a float32, so exact."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _numpy_exact(a: np.ndarray, name: str) -> np.ndarray:
    """An array numpy's exact reader takes (ints, float16/32/64, longdouble): ml_dtypes' bfloat16
    from its bits, its other small float types widened to float32 (every value is a float32)."""
    dt = a.dtype
    if dt.kind == "V" or dt.name in ("bfloat16",) or dt.name.startswith(("float8", "float6", "float4", "int4",
                                                                          "uint4", "int2", "uint2")):
        if dt.name == "bfloat16" and dt.itemsize == 2:
            return _bf16_bits(np.ascontiguousarray(a).view(np.uint16))
        if dt.name.startswith(("float8", "float6", "float4")):
            return a.astype(np.float32)
        if dt.name.startswith(("int", "uint")):
            return a.astype(np.int64)
        raise QKInputError(f"{name}: dtype {dt} cannot be read as exact rationals")
    return a


def _plain_entry(v: Any, name: str) -> Any:
    """A nested list's entry as the exact readers take it: a numpy scalar of ml_dtypes' small float
    types (bfloat16, float8, …) becomes the float32 of the same value (exact); others unchanged."""
    if isinstance(v, np.generic) and (v.dtype.kind == "V" or v.dtype.name.startswith(("bfloat", "float8", "float6",
                                                                                        "float4", "int4", "uint4",
                                                                                        "int2", "uint2"))):
        return _numpy_exact(np.array([v]), name)[0]
    return v


def _plain_row(r: Any, name: str) -> Any:
    """A row of a nested list: an array row is read as its array would be, entries made plain."""
    if isinstance(r, np.ndarray):
        r = _numpy_exact(r, name)
    if isinstance(r, (list, tuple, np.ndarray)):
        return [_plain_entry(v, name) for v in r]
    return _plain_entry(r, name)


def as_exact_matrix(x: Any, name: str = "matrix", square: bool = False):
    """The exact rational matrix (python-flint ``fmpq_mat``) of a 2-d input: a numpy array, a torch
    tensor, a nested list/tuple of numbers, or an ``fmpq_mat`` (module docstring).  Raises
    :class:`qkverify.InputError` naming the problem (ragged rows, NaN, a dtype that is not a number,
    not square when ``square``)."""
    from flint import fmpq_mat

    from .exact.rational import ndarray_to_fmpq_mat, rows_to_fmpq_mat

    if isinstance(x, fmpq_mat):
        if square and x.nrows() != x.ncols():
            raise QKInputError(f"{name}: must be square, got {x.nrows()}x{x.ncols()}")
        return x
    if type(x).__module__.split(".")[0] == "torch" and hasattr(x, "dtype") and hasattr(x, "cpu"):
        x = _torch_array(x)
    if isinstance(x, np.ndarray):
        return ndarray_to_fmpq_mat(_numpy_exact(x, name), name, square)
    if isinstance(x, (list, tuple)):
        rows = [_plain_row(r, name) for r in x]
        return rows_to_fmpq_mat(rows, name, square)
    raise QKInputError(f"{name}: a {type(x).__name__} is not a matrix (give a numpy array, a torch tensor or "
                       "a nested list of numbers)")


def _float_array(x: Any, name: str) -> np.ndarray | None:
    """A float64/float32 array with the same exact values, or None when some entry is not a binary
    float (a Fraction like 1/3, an integer beyond 2^53)."""
    if type(x).__module__.split(".")[0] == "torch" and hasattr(x, "dtype") and hasattr(x, "cpu"):
        x = _torch_array(x)
    if isinstance(x, np.ndarray):
        a = _numpy_exact(x, name)
        if a.dtype.kind == "f" and a.dtype.itemsize <= 8:
            return a.astype(np.float64) if a.dtype == np.float16 else a
        if a.dtype.kind in "iu" and (a.size == 0 or int(np.max(np.abs(a.astype(object)))) < 2 ** 53):
            return a.astype(np.float64)
        return None
    return None


def _rows(M) -> list[list]:
    return [[M[i, j] for j in range(M.ncols())] for i in range(M.nrows())]


# ---------------------------------------------------------------------------
# results


class _Result:
    """to_dict / repr / _repr_html_ for the frozen result dataclasses."""

    def _items(self) -> list[tuple[str, str]]:
        raise NotImplementedError

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td><code>{html.escape(v)}</code></td></tr>"
                       for k, v in self._items())
        return f"<table><caption>{html.escape(type(self).__name__)}</caption>{rows}</table>"


@dataclass(frozen=True, repr=False)
class Profile(_Result):
    """π(L) = (a, b, c, d) (Def 6; Lean ``profileA`` … ``profileD``): exact values (Fraction or
    Algebraic), or certified enclosures where the exact value was not computed (``evidence`` then
    ``certified``).  ``alpha``, ``beta``: the padded positive eigenvalues of S and the absolute values
    of its negative ones, decreasing; ``faces``: which of a, b, c, d are 0 (decided exactly)."""

    a: Value
    b: Value
    c: Value
    d: Value
    evidence: str
    N: int
    padding: str = "blueprint"
    inertia: tuple[int, int, int] | None = None
    alpha: tuple = ()
    beta: tuple = ()
    faces: dict = field(default_factory=dict)
    theta: bool | None = None
    _json: dict = field(default_factory=dict, compare=False)

    def __repr__(self) -> str:
        return (f"Profile(a={_value_text(self.a)}, b={_value_text(self.b)}, c={_value_text(self.c)}, "
                f"d={_value_text(self.d)}; {self.evidence})")

    def __iter__(self):
        return iter((self.a, self.b, self.c, self.d))

    def floats(self) -> tuple[float, float, float, float]:
        """(a, b, c, d) as floats (display only)."""
        return tuple(float(v) for v in self)

    def to_dict(self) -> dict:
        """The fields of ``qkverify profile --json`` plus ``evidence``."""
        out = dict(self._json) if self._json else {k: _value_dict(getattr(self, k)) for k in "abcd"}
        out["evidence"] = self.evidence
        return out

    def _items(self):
        return ([(k, _value_text(getattr(self, k)) + f"  ≈ {float(getattr(self, k)):.6g}") for k in "abcd"]
                + [("evidence", self.evidence), ("N", str(self.N))]
                + ([("inertia of S", str(self.inertia))] if self.inertia else [])
                + ([("faces", ", ".join(k for k, v in self.faces.items() if v) or "none (interior)")]
                   if self.faces else []))


@dataclass(frozen=True, repr=False)
class Signature(_Result):
    """The inertia (n_pos, n_neg, n_zero) of a symmetric matrix, exact (Theorem 3's ``signature``)."""

    n_pos: int
    n_neg: int
    n_zero: int
    evidence: str = "exact"
    methods: str = ""

    def __repr__(self) -> str:
        return f"Signature(n_pos={self.n_pos}, n_neg={self.n_neg}, n_zero={self.n_zero}; {self.evidence})"

    def __iter__(self):
        return iter((self.n_pos, self.n_neg, self.n_zero))

    def to_dict(self) -> dict:
        """The fields of ``qkverify signature --json``."""
        return {"n_pos": self.n_pos, "n_neg": self.n_neg, "n_zero": self.n_zero, "evidence": self.evidence,
                "methods": self.methods}

    def _items(self):
        return [("(n_pos, n_neg, n_zero)", str(tuple(self))), ("evidence", self.evidence), ("methods", self.methods)]


@dataclass(frozen=True, repr=False)
class Head(_Result):
    """One attention head, analysed: its profile, the signature of S = sym_part(W_Kᵀ W_Q), the rank
    of M = [W_K; W_Q] and Theorem 3 (``heads_have_balanced_attention``: signature (n, n, N − 2n) when
    rank M = 2n): ``theorem3`` is ``holds``, ``fails`` or ``not applicable`` (its hypothesis
    rank M = 2n fails; ``reason`` says so).  ``route``: ``exact`` (small heads: charpoly of the N × N
    sym_part) or ``cells`` (the route of ``qkverify heads``: exact a, certified b, c, d)."""

    n: int
    N: int
    profile: Profile | None
    signature: Signature
    rank_M: int
    theorem3: str
    evidence: str
    route: str
    reason: str = ""
    layer: int | None = None
    head: int | None = None
    kv_head: int | None = None
    model: str | None = None

    def __repr__(self) -> str:
        where = f"L{self.layer}H{self.head} of {self.model}: " if self.layer is not None else ""
        prof = repr(self.profile) if self.profile is not None else "no profile (L = 0)"
        return (f"Head({where}n={self.n}, N={self.N}, {prof}, signature={tuple(self.signature)}, "
                f"Theorem 3 {self.theorem3}; {self.evidence})")

    def to_dict(self) -> dict:
        out = {"n": self.n, "N": self.N, "rank_M": self.rank_M, "theorem3": self.theorem3, "reason": self.reason,
               "evidence": self.evidence, "route": self.route, "signature": self.signature.to_dict(),
               "profile": self.profile.to_dict() if self.profile is not None else None}
        for k in ("model", "layer", "head", "kv_head"):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        return out

    def _items(self):
        return ([("head", f"L{self.layer}H{self.head} (key head {self.kv_head}) of {self.model}")]
                if self.layer is not None else []) + [
            ("n, N", f"{self.n}, {self.N}"), ("rank [W_K; W_Q]", str(self.rank_M)),
            ("signature of S", str(tuple(self.signature))), ("Theorem 3", self.theorem3 + (f" ({self.reason})"
                                                                                         if self.reason else "")),
            ("profile", repr(self.profile)), ("evidence", self.evidence), ("route", self.route)]


@dataclass(frozen=True, repr=False)
class CheckResult(_Result):
    """A statement (or one Lean declaration of it) evaluated on one input: the verdict, the evidence,
    one record per declaration evaluated (its hypotheses, conclusion, evidence, value), those skipped
    and why, and the certificate (``certificate()``; ``write(path)``) that ``qkverify verify`` re-checks."""

    statement: str
    label: str
    verdict: str
    evidence: str
    declarations: tuple
    skipped: tuple
    _certificate: dict = field(default_factory=dict, compare=False)

    def certificate(self) -> dict:
        """The certificate (a fresh copy of the JSON document)."""
        import copy

        return copy.deepcopy(self._certificate)

    def write(self, path: str | Path, force: bool = False) -> str:
        """Write the certificate atomically; returns ``written`` / ``unchanged``; InputError when a
        different certificate is there and not ``force``."""
        from . import certificates

        return certificates.write(self._certificate, Path(path), force=force)

    def __repr__(self) -> str:
        decl = ", ".join(f"{d['check']}: {d['conclusion']}" for d in self.declarations)
        return f"CheckResult({self.statement} ({self.label}): {self.verdict}; {self.evidence} — {decl})"

    def to_dict(self) -> dict:
        """The fields of ``qkverify check --json`` (without the certificate path)."""
        return {"statement": self.statement, "label": self.label, "verdict": self.verdict, "evidence": self.evidence,
                "declarations": [dict(d) for d in self.declarations],
                "skipped": [{"check": c, "reason": r} for c, r in self.skipped]}

    def _items(self):
        return ([("statement", f"{self.statement} ({self.label})"), ("verdict", self.verdict),
                 ("evidence", self.evidence)]
                + [(d["check"], f"{d['conclusion']} [{d['evidence']}]") for d in self.declarations]
                + [(c, f"not evaluated: {r}") for c, r in self.skipped])


@dataclass(frozen=True, repr=False)
class VerifyResult(_Result):
    """What the kernel decided about one certificate: ``status`` (valid, invalid, undecided, not a
    certificate, not checkable, unreadable), the statement and verdict it certifies, the declarations
    re-checked, and for a certificate that is not valid the failing check and why."""

    path: str
    status: str
    statement: str = ""
    verdict: str = ""
    declarations: tuple = ()
    check: str = ""
    reason: str = ""

    @property
    def valid(self) -> bool:
        return self.status == "valid"

    def __bool__(self) -> bool:
        return self.valid

    def __repr__(self) -> str:
        tail = f"{self.statement}: {self.verdict}" if self.status == "valid" else f"[{self.check}] {self.reason}"
        return f"VerifyResult({self.path}: {self.status}; {tail})"

    def to_dict(self) -> dict:
        return {"path": self.path, "status": self.status, "statement": self.statement, "verdict": self.verdict,
                "declarations": list(self.declarations), "check": self.check, "reason": self.reason}

    def _items(self):
        return [(k, str(v)) for k, v in self.to_dict().items() if v not in ("", [], ())]


# ---------------------------------------------------------------------------
# the functions


def _coord(c) -> Value:
    """An exact coordinate of :class:`qkverify.math.profile.Profile` as a Fraction / Algebraic, or its
    certified enclosure when its exact value was not computed."""
    from .exact.algebraic import arb_to_interval

    if c.value is not None:
        return Algebraic._of(c.value)
    lo, hi = arb_to_interval(c.enclosure)
    return Enclosure(_fraction(lo), _fraction(hi))


def profile(L: Any, padding: str = "blueprint", digits: int = 20) -> Profile:
    """The profile π(L) = (a, b, c, d) of a square matrix L ≠ 0 (Def 6; Lean ``Appendices.profileA`` …
    ``profileD``), exactly: a is rational; b, c, d are exact rationals or algebraic numbers (certified
    enclosures when their Galois orbit is too large, with ``evidence = "certified"``).

    L -- N × N: a numpy array, torch tensor, nested list of numbers (module docstring).
    padding -- ``blueprint`` (α, β padded to equal length) or ``lean`` (both padded to N).
    digits -- digits of the decimal intervals in :meth:`Profile.to_dict` (1 to 10000, as
              ``qkverify profile --digits``).

    Raises InputError for a non-square L, L = 0 (no profile: the definition divides by ‖L‖²),
    anything that is not a matrix of numbers, and digits out of range.

    >>> profile([[1, 2], [3, 4]])
    Profile(a=1/60, b=3/20, c=5/6, d=0; exact)
    >>> profile([["1/2", 0], [0, "-0.5"]]).b
    Fraction(1, 1)
    >>> profile([[0, 0], [0, 0]])
    Traceback (most recent call last):
    ...
    qkverify.errors.QKInputError: L = 0 has no profile (the definition divides by ‖L‖² = 0)
    """
    from .math.profile import PADDINGS, compute_profile

    digits = _digits(digits, PROFILE_DIGITS, "profile")
    if padding not in PADDINGS:
        raise QKInputError(f"padding must be one of {', '.join(PADDINGS)}, not {padding!r}")
    M = as_exact_matrix(L, "L", square=True)
    p = compute_profile(M, padding)
    return _profile_result(p, digits)


def _profile_result(p, digits: int = 20) -> Profile:
    coords = [_coord(c) for c in p.coords()]
    ev = "exact" if all(not isinstance(v, Enclosure) for v in coords) else "certified"
    alpha = tuple(Algebraic._of(x) for x in p.alpha)
    beta = tuple(Algebraic._of(x) for x in p.beta)
    return Profile(*coords, evidence=ev, N=p.N, padding=p.padding, inertia=tuple(p.inertia), alpha=alpha,
                   beta=beta, faces=p.fibers(), theta=p.in_theta()["member"], _json=p.to_json(digits))


def signature(S: Any) -> Signature:
    """The signature (n_pos, n_neg, n_zero) of a symmetric rational matrix S, exactly: charpoly +
    Descartes' rule, and for N ≤ 48 also an LDLᵀ decomposition, which must agree (Lean ``signature``;
    Theorem 3).  ``signature((W_Q, W_K))`` gives that of the head's form sym_part(W_Kᵀ W_Q).

    Raises InputError for a matrix that is not symmetric (give a symmetric matrix or a head).

    >>> signature([[2, 1], [1, 2]])
    Signature(n_pos=2, n_neg=0, n_zero=0; exact)
    >>> tuple(signature(([[1, 0, 0]], [[0, 1, 0]])))
    (1, 1, 1)
    """
    from .exact.inertia import inertia_charpoly, inertia_ldlt
    from .exact.matrix import is_symmetric, sym_part

    if isinstance(S, tuple) and len(S) == 2:
        Wq = as_exact_matrix(S[0], "W_Q")
        Wk = as_exact_matrix(S[1], "W_K")
        if Wq.nrows() != Wk.nrows() or Wq.ncols() != Wk.ncols():
            raise QKInputError(f"W_Q is {Wq.nrows()}x{Wq.ncols()} but W_K is {Wk.nrows()}x{Wk.ncols()}")
        X = sym_part(Wk.transpose() * Wq)
    else:
        X = as_exact_matrix(S, "S", square=True)
        if not is_symmetric(X):
            raise QKInputError("S: matrix is not symmetric (give a symmetric matrix or a head (W_Q, W_K))")
    a = inertia_charpoly(X)
    methods = "charpoly + Descartes"
    if X.nrows() <= 48:
        b = inertia_ldlt(X)
        if a.triple() != b.triple():
            raise ArithmeticError(f"inertia methods disagree: {a.triple()} vs {b.triple()}")
        methods += ", LDLᵀ"
    return Signature(a.n_pos, a.n_neg, a.n_zero, "exact", methods)


def head(W_Q: Any, W_K: Any = None, *, digits: int = 9, route: str = "auto") -> Head:
    """One attention head: W_Q, W_K of shape (n, N) -- rows are head dimensions, L = W_Kᵀ W_Q -- or a
    head record of :func:`load_model` (``head(record)``).

    route -- ``exact`` (charpoly of the N × N sym_part: exact b, c, d), ``cells`` (the route of
    ``qkverify heads``: exact a, the rank witness and certified cells of the 2n nonzero eigenvalues,
    b, c, d to ``digits`` digits, 1 to 200 as ``qkverify heads --digits``; needs binary-float entries,
    e.g. any numpy float array) or ``auto``
    (exact up to N = 48 or when the entries are not binary floats, cells above).

    Raises InputError for mismatched shapes, entries that are not numbers and digits out of range.

    >>> import numpy as np
    >>> W = np.array([[1, 0, 0, 0], [0, 0, 1, 0]], np.float32)
    >>> h = head(W, np.array([[4, 3, 0, 0], [0, 0, -5, 12]], np.float32))
    >>> h.profile
    Profile(a=153/388, b=85/194, c=49/776, d=81/776; exact)
    >>> tuple(h.signature), h.theorem3
    ((2, 2, 0), 'holds')
    """
    rec = None
    if W_K is None:
        if not all(hasattr(W_Q, k) for k in ("W_Q", "W_K", "layer", "head")):
            raise QKInputError("head(W_Q, W_K): give both matrices, or one head record of load_model")
        rec, W_Q, W_K = W_Q, W_Q.W_Q, W_Q.W_K
    if route not in ("auto", "exact", "cells"):
        raise QKInputError(f"route must be auto, exact or cells, not {route!r}")
    digits = _digits(digits, HEAD_DIGITS, "head")
    fq, fk = _float_array(W_Q, "W_Q"), _float_array(W_K, "W_K")
    shape_q = fq.shape if fq is not None else None
    if route == "cells" and (fq is None or fk is None):
        raise QKInputError("route 'cells' needs binary-float (or small integer) arrays W_Q, W_K")
    if fq is not None and fk is not None:
        if fq.ndim != 2 or fq.shape != fk.shape or 0 in fq.shape:
            raise QKInputError(f"W_Q has shape {fq.shape}, W_K {fk.shape}: expected two n x N matrices")
        use_cells = route == "cells" or (route == "auto" and shape_q[1] > EXACT_HEAD_MAX_N)
    else:
        use_cells = False
    meta = {} if rec is None else {"layer": rec.layer, "head": rec.head, "kv_head": rec.kv_head,
                                   "model": getattr(rec, "model", None)}
    if use_cells:
        return _head_cells(fq, fk, digits, meta)
    return _head_exact(as_exact_matrix(W_Q, "W_Q"), as_exact_matrix(W_K, "W_K"), meta)


def _head_exact(Wq, Wk, meta: dict) -> Head:
    from .exact.matrix import rank, vstack
    from .math.profile import compute_profile

    if Wq.nrows() != Wk.nrows() or Wq.ncols() != Wk.ncols():
        raise QKInputError(f"W_Q is {Wq.nrows()}x{Wq.ncols()} but W_K is {Wk.nrows()}x{Wk.ncols()}: "
                           "expected two n x N matrices")
    n, N = Wq.nrows(), Wq.ncols()
    L = Wk.transpose() * Wq
    sig = signature(_sym(L))
    r = rank(vstack(Wk, Wq))
    prof = None
    if any(L[i, j] != 0 for i in range(N) for j in range(N)):
        prof = _profile_result(compute_profile(L))
    t3, why = _theorem3(n, N, r, tuple(sig))
    ev = prof.evidence if prof is not None else "exact"
    return Head(n, N, prof, sig, r, t3, ev, "exact", why, **meta)


def _sym(L):
    from .exact.matrix import sym_part

    return sym_part(L)


def _theorem3(n: int, N: int, rank_M: int, sig: tuple[int, int, int]) -> tuple[str, str]:
    if rank_M < 2 * n:
        return "not applicable", f"hypothesis fails: rank [W_K; W_Q] = {rank_M} < 2n = {2 * n}"
    if sig == (n, n, N - 2 * n):
        return "holds", ""
    return "fails", f"signature {sig} ≠ ({n}, {n}, {N - 2 * n})"


def _head_cells(fq: np.ndarray, fk: np.ndarray, digits: int, meta: dict) -> Head:
    from .heads.certify import HeadOptions, certify_head
    from .models.base import HeadRecord

    rec = HeadRecord(meta.get("model") or "head", meta.get("layer") or 0, meta.get("head") or 0,
                     meta.get("kv_head") or 0, fq, fk)
    res = certify_head(rec, HeadOptions(digits=digits, compare_float=False))
    row, hs = res["row"], res["spectrum"]
    n, N = rec.n, rec.N
    sig = Signature(int(row["n_pos"]), int(row["n_neg"]), int(row["n_zero"]), res["evidence"],
                    row["signature_method"])
    prof = None
    if "a_exact" in row:
        vals = [Fraction(row["a_exact"])]
        for k in "bcd":
            if row.get(f"face_{k}0"):
                vals.append(Fraction(0))
            else:
                vals.append(Enclosure(Fraction(row[k + "_lo"]), Fraction(row[k + "_hi"])))
        faces = {"a=0": vals[0] == 0, "b=0": bool(row["face_b0"]), "c=0": bool(row["face_c0"]),
                 "d=0": bool(row["face_d0"])}
        prof = Profile(*vals, evidence="certified" if any(isinstance(v, Enclosure) for v in vals) else "exact",
                       N=N, inertia=(sig.n_pos, sig.n_neg, sig.n_zero), faces=faces,
                       _json={k: row.get(k) for k in ("a_exact", "b_lo", "b_hi", "c_lo", "c_hi", "d_lo", "d_hi",
                                                      "face_b0", "face_c0", "face_d0")})
    t3, why = _theorem3(n, N, int(row["rank_M"]), tuple(sig))
    ev = "certified" if (prof is not None and prof.evidence == "certified") or res["evidence"] == "certified" \
        else "exact"
    del hs
    return Head(n, N, prof, sig, int(row["rank_M"]), t3, ev, "cells", why, **meta)


def load_model(path_or_hub_id: str | Path | None = None, **options):
    """A model's attention heads, read exactly from its weights without running its code: a
    ``.safetensors`` file or folder (sharded too), a ``.gguf``, a TransformerLens ``.npz``, a known
    model (``all-MiniLM-L6-v2``, the default; ``SmolLM2-135M-Instruct``), or a Hugging Face hub id
    (``org/name``, ``org/name@revision``) or ``models--org--name`` folder held by the local Hugging
    Face cache -- never downloaded -- which is then named ``org/name``.

    Iterating gives the heads in (layer, head) order, each with ``layer``, ``head``, ``kv_head``,
    ``W_Q`` and ``W_K`` (numpy arrays whose entries are the checkpoint's exact values) and ``source``
    (file, SHA-256, tensor names and rows); ``model.head(layer, h)`` gives one, ``model.heads(layers)``
    some layers.  Options: ``n_heads``, ``n_kv_heads`` (a checkpoint without config.json),
    ``pre_norm_qk``, ``pre_softcap``, ``layout`` (a layout file), ``name``.  Raises InputError (one
    line) for what the command line refuses.
    """
    from .models import load_model as _load

    spec = None if path_or_hub_id is None else str(path_or_hub_id)
    return _load(spec, **options)


def _document(x: Any, where: str) -> Any:
    """A Python input as the document form ``qkverify check`` reads: matrices (numpy, torch, nested
    lists) as rows of exact rationals, dicts key by key."""
    from flint import fmpq

    if isinstance(x, dict):
        return {k: _document(v, f"{where}: {k}") for k, v in x.items()}
    if isinstance(x, np.ndarray) or (type(x).__module__.split(".")[0] == "torch" and hasattr(x, "cpu")):
        if getattr(x, "ndim", 2) == 2:
            return _rows(as_exact_matrix(x, where))
        a = _torch_array(x) if not isinstance(x, np.ndarray) else x
        return [fmpq(_fraction_of(v).numerator, _fraction_of(v).denominator) for v in _numpy_exact(a, where).ravel()]
    if isinstance(x, tuple):
        return [_document(v, where) for v in x]
    if isinstance(x, list):
        return [_document(v, where) if isinstance(v, (list, tuple, dict, np.ndarray)) else _plain_entry(v, where)
                for v in x]
    return _plain_entry(x, where)


def _fraction_of(v) -> Fraction:
    from .exact.rational import parse_rational

    q = parse_rational(v.item() if hasattr(v, "item") and not isinstance(v, np.longdouble) else v)
    return _fraction(q)


def _input_for(sel, x: Any):
    """The claim input of ``x`` for a selection: a path is read as ``qkverify check --input`` reads
    it; a Python object is read in the document's own shape or the reading one of the declarations'
    kinds asks for (a head where heads are taken, a matrix with its head dimension, a law)."""
    from .io.inputs import input_from_document

    if isinstance(x, (str, Path)) and Path(x).exists():
        return sel.load(str(x))
    doc = _document(x, "input")
    kinds = sel.kinds()
    wants = [w for k, w in (("law", "law"), ("head", "head"), ("matrix_bound", "matrix_n"), ("matrix", "matrix"))
             if k in kinds]
    errors: list[QKInputError] = []
    for want in [None] + wants:
        try:
            inp = input_from_document(doc, want, "input")
        except QKInputError as err:
            errors.append(err)
            continue
        if getattr(inp, "kind2", None) in kinds:
            return inp
        errors.append(QKInputError(f"input: a {getattr(inp, 'kind2', '?')} input; these declarations take "
                                   f"{', '.join(sorted(kinds))}"))
    raise errors[1] if len(errors) > 1 else errors[0]


def check(declaration: str, input: Any, drop: Iterable[str] = ()) -> CheckResult:
    """Evaluate a statement (its id or blueprint label: every declaration of it) or one Lean
    declaration (full name or check id) on one input, with exactly the hypotheses of its Lean signature;
    ``drop`` names hypotheses (Lean binders) that may be false, to show they are needed.  The input is a
    file path, or a Python object in the shapes of the input files (README *Input files*): a matrix,
    ``{"L": …}``, ``{"W_Q": …, "W_K": …}``, ``{"L": …, "U": …}``, a law, …, whose matrices may be numpy
    arrays, torch tensors or nested lists.  Nothing is written: ``result.write(path)`` writes the
    certificate, which ``qkverify verify`` re-checks.

    Raises InputError for an unknown name, a hypothesis to drop that the declarations do not have, an
    input of no kind they take, and an input on which a hypothesis fails that is not dropped.

    >>> r = check("Theorem 4", [[1, 2], [3, 4]])
    >>> r.verdict, r.evidence
    ('holds', 'exact')
    """
    from .claims.evaluate import evaluate
    from .search.targets import resolve

    if not isinstance(declaration, str):
        raise QKInputError(f"check: the declaration is a name (a statement id, blueprint label or Lean "
                           f"declaration), not a {type(declaration).__name__}")
    sel = resolve(declaration)
    drop = tuple(drop) if not isinstance(drop, str) else (drop,)
    binders = set(sel.binders()) | {b.predicate for t in sel.targets for b in t.binders}
    for d in drop:
        if d not in binders:
            raise QKInputError(f"drop {d}: the hypotheses of {sel.id} are {', '.join(sorted(sel.binders())) or '(none)'}")
    pred = {b.predicate: b.binder for t in sel.targets for b in t.binders}
    inp = _input_for(sel, input)
    run = evaluate(sel.statement, inp, drop=tuple(pred.get(d, d) for d in drop),
                   only=(sel.single,) if getattr(sel, "single", None) else (), headline=True)
    return CheckResult(run.statement.id, run.statement.label, run.verdict, run.evidence,
                       tuple(r.to_json() for r in run.records), tuple(run.skipped), run.certificate())


def verify(path: str | Path | dict, weights: Iterable[str] = ()) -> VerifyResult:
    """The independent kernel's decision on one certificate (a file, or a certificate document as a
    dict), exactly as ``qkverify verify`` makes it: ``valid`` only when everything it states is true.
    ``weights``: folders holding the weights files a certificate names (the file whose SHA-256 matches
    is used; the installed default model is searched too).  The result is truthy when valid.
    """
    from . import kernel
    from .models.installed import default_weights_dirs

    if not isinstance(path, (str, os.PathLike, dict)):
        raise QKInputError(f"verify: give a certificate file's path or a certificate document (a dict), "
                           f"not a {type(path).__name__}")
    dirs = [str(w) for w in weights] + [d for d in default_weights_dirs() if d not in weights]
    if isinstance(path, dict):
        out = kernel.verify_document(path, "<certificate>", None, dirs)
    else:
        out = kernel.verify_file(path, dirs)
    return VerifyResult(str(out.path), out.status, out.statement, out.verdict, tuple(out.declarations), out.check,
                        out.reason)
