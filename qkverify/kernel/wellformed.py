"""The well-formedness pass: a certificate's input has the Lean types of the declarations
it is evaluated on, checked before anything else (DESIGN.md, "Lean's semantics, once").

One function per input kind (:data:`WF`) reads the input's exact objects and checks the
types Lean gives them: ``Matrix (Fin N) (Fin N) ℝ`` is square, one index type for every
matrix of an input, vectors of one length, a basis is invertible, a law is a probability
law.  It returns the exact objects (:class:`Args`: matrices as ``fmpq_mat``, vectors as
lists of ``fmpq``, sizes as ``int``); rules read them with ``q.arg(name)``.  A malformed
input is ``Invalid("input", one line)``.  Facts about the input (a hypothesis, an
orthogonal U, a symmetric S) are not types: they are the rules' business.

Types that depend on the declaration rather than on the input kind (a vector of even
length 2m for Appendix B, S of the size of x for Lemma 9) are checked per declaration:
``thm(..., args=(...))`` in :mod:`.table` with the checks of this module's second half."""

from __future__ import annotations

from typing import Any, Callable

from flint import fmpq, fmpq_mat

from . import limits
from .jsonio import Invalid, rat, require


class Args(dict):
    """The exact objects of a well-formed input, by field name."""


WF: dict[str, Callable[[dict], Args]] = {}


def kind(name: str):
    def reg(fn):
        assert name not in WF, name
        WF[name] = fn
        return fn
    return reg


def well_formed(inp: dict) -> Args:
    """The exact objects of ``inp`` after its kind's type checks (Invalid when malformed)."""
    fn = WF.get(inp["kind"])
    require(fn is not None, "input", f"no well-formedness rule for input kind {inp['kind']!r}")
    return fn(inp)


# -- readers with their types ---------------------------------------------------------


def matrix(x: list, what: str, rows: int | None = None, cols: int | None = None) -> fmpq_mat:
    """Rows of rationals as an R × C matrix (rectangular; R, C as given when given)."""
    require(isinstance(x, list) and x and all(isinstance(r, list) and r for r in x), "input",
            f"{what} must be a non-empty list of non-empty rows")
    require(len({len(r) for r in x}) == 1, "input", f"{what} has rows of different lengths")
    R, C = len(x), len(x[0])
    limits.over(f"rows or columns of {what}", max(R, C), limits.MAX_DIM, "MAX_DIM")
    require(rows is None or R == rows, "input", f"{what} has {R} rows, its type needs {rows}")
    require(cols is None or C == cols, "input", f"{what} has {C} columns, its type needs {cols}")
    return fmpq_mat([[rat(v) for v in r] for r in x])


def square(x: list, what: str, N: int | None = None) -> fmpq_mat:
    """An N × N matrix (``Matrix (Fin N) (Fin N) ℝ``)."""
    require(isinstance(x, list) and x and all(isinstance(r, list) and len(r) == len(x) for r in x), "input",
            f"{what} must be square (Matrix (Fin N) (Fin N) ℝ)")
    return matrix(x, what, N, N)


def vector(x: list, what: str, n: int | None = None) -> list[fmpq]:
    """A vector of rationals of length n (``Fin n → ℝ``)."""
    require(isinstance(x, list) and (n is None or len(x) == n), "input",
            f"{what} has length {len(x) if isinstance(x, list) else '?'}, its type needs {n}")
    limits.over(f"entries of {what}", len(x), limits.MAX_INLINE_ENTRIES, "MAX_INLINE_ENTRIES")
    return [rat(v) for v in x]


def exact_real(x: Any, what: str):
    """An exact real of an input (``ℝ``): a rational, or {poly, interval} with exactly one distinct
    root of poly in the closed interval (Sturm count), read as that root (a rational or a Root)."""
    from flint import fmpz_poly

    from .algebra import Root, roots_in, sign_at, squarefree

    if isinstance(x, str):
        return rat(x)
    f = fmpz_poly([int(c) for c in x["poly"]])
    lo, hi = rat(x["interval"][0]), rat(x["interval"][1])
    require(not f.is_zero() and f.degree() >= 1 and lo <= hi, "input", f"{what}: a polynomial of degree ≥ 1 and lo ≤ hi")
    g = squarefree(f)  # the same distinct roots, each once
    count = roots_in(g, lo, hi, True, True)
    require(count == 1, "input", f"{what}: {count} distinct roots of the polynomial lie in [{lo}, {hi}], not one")
    if sign_at(g, lo) == 0:
        return lo
    if sign_at(g, hi) == 0:
        return hi
    return Root(g, lo, hi)


# -- one rule per input kind ----------------------------------------------------------


@kind("user")
def _user(i: dict) -> Args:
    return Args()


# -- per-declaration argument types (thm(..., args=...)) ------------------------------


def basis(q: Any) -> None:
    """b : Basis (Fin N) ℝ C -- a head input's B is invertible: its inverse witness (multiplied back).
    An inverse witness may also show a matrix singular (a kernel vector: Lean's X⁻¹ = 0); for a
    basis that proves the input is *not* of the type, so it is refused, never read as Lean's 0."""
    if q.kind == "head" and "B" in q.args:
        require(not q.fact("inverse", "B").singular, "input", "B is singular: not a basis (b : Basis (Fin N) ℝ C)")


def slices(t: dict, n: int, what: str) -> None:
    """A tensor reference's row or column slice [a, b) is not empty."""
    for k in ("rows", "cols"):
        if k in t:
            a, b = t[k]
            require(0 <= a < b, "input", f"{what}: {k} [{a}, {b}) is empty")


def shape(X: fmpq_mat, rows: int | None, cols: int | None, what: str) -> fmpq_mat:
    """X after checking its shape (a matrix read from a weights file)."""
    require((rows is None or X.nrows() == rows) and (cols is None or X.ncols() == cols), "input",
            f"{what} is {X.nrows()} × {X.ncols()}, its type needs {rows or '?'} × {cols or '?'}")
    return X


def even_x(q: Any) -> None:
    """x : Fin (2m) → ℝ (Appendices B, C)."""
    require(len(q.arg("x")) % 2 == 0, "input", f"x has length {len(q.arg('x'))}, not 2m")


def needs(*names: str) -> Callable[[Any], None]:
    """The declaration takes these fields of the input (e.g. y, c, S of a vector input)."""
    def check(q: Any) -> None:
        miss = [k for k in names if k not in q.args]
        if miss:
            raise Invalid("input", f"this declaration needs the input's {', '.join(miss)}")
    return check


def S_of_x(q: Any) -> None:
    """S : Matrix (Fin (2m)) (Fin (2m)) ℝ with x : Fin (2m) → ℝ (Lemma 9)."""
    needs("S")(q)
    require(q.arg("S").nrows() == len(q.arg("x")), "input", "S must be n × n for x of length n")
