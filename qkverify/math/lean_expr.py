"""Expressions read as Lean reads them: rational functions with x/0 = 0.

An input expression (integers, variables, + − * /, integer powers) denotes a function ℝⁿ → ℝ.
In Lean ``a / b = a * b⁻¹`` and ``0⁻¹ = 0``, so a quotient is 0 wherever its denominator
vanishes, and ``x ^ (−k) = (x ^ k)⁻¹`` likewise; sympy's own simplification (u/u = 1) would
change that function, so the syntax tree is kept as written (:class:`Node`).

:func:`polynomial_everywhere` decides whether the function is a polynomial p on all of ℝⁿ:

* off the zero sets of its denominators it is the rational function R obtained by
  cancelling (a dense open set), so p can only be R, and R must be a polynomial;
* on the zero set of each denominator d the quotient is 0: for d of degree 1 the zero set is a
  hyperplane, parametrised by solving d = 0 for one variable, and the function with that
  quotient replaced by 0 must again equal p there (recursively, for the denominators that are
  left); a denominator without real zeros in one variable (no real root) is skipped; any other
  denominator leaves the question undecided.

>>> polynomial_everywhere("(u0**2*v0 + u0*v0)/(u0 + 1)", ["u0", "v0"])   # differs at u0 = −1
(False, None)
>>> polynomial_everywhere("u0*v0*(u0 + 1)/(u0 + 1)", ["u0", "v0"])[0]        # 0 = u0·v0 at u0 = −1? no
False
>>> polynomial_everywhere("(u0**2 - 1)/(u0 - 1) - 1", ["u0"])             # u0 + 1 − 1 = u0, at 1: 0 − 1 ≠ 1
(False, None)
>>> polynomial_everywhere("u0*v0 + (u0 - 1)*(u0 - 1)/(u0 - 1) - u0 + 1", ["u0", "v0"])[0]   # = u0·v0 at 1 too
True
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import sympy as sp

from ..errors import QKInputError


@dataclass(frozen=True)
class Node:
    """A syntax-tree node: ``op`` in num, var, add, sub, mul, div, pow, neg; ``args`` its
    children; ``value`` an int (num, pow's exponent) or a name (var)."""

    op: str
    args: tuple = ()
    value: object = None


def to_tree(text: str, names: list[str]) -> Node:
    """The syntax tree of ``text`` (the grammar of :func:`qkverify.math.attention.parse`)."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        raise QKInputError(f"{text[:60]!r} is not an expression") from None

    def conv(n) -> Node:
        if isinstance(n, ast.Constant) and type(n.value) is int:
            return Node("num", value=n.value)
        if isinstance(n, ast.Name) and n.id in names:
            return Node("var", value=n.id)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            a = conv(n.operand)
            return Node("neg", (a,)) if isinstance(n.op, ast.USub) else a
        if isinstance(n, ast.BinOp):
            if isinstance(n.op, ast.Pow):
                e = n.right
                k = e.value if isinstance(e, ast.Constant) else (
                    -e.operand.value if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub)
                    and isinstance(e.operand, ast.Constant) else None)
                if type(k) is not int:
                    raise QKInputError(f"{text[:60]!r}: only integer exponents are allowed")
                return Node("pow", (conv(n.left),), k)
            op = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}.get(type(n.op))
            if op is not None:
                return Node(op, (conv(n.left), conv(n.right)))
        raise QKInputError(f"{text[:60]!r}: {type(n).__name__} is not allowed in an expression")

    return conv(tree)


def _divisions(t: Node) -> list[Node]:
    """The nodes that divide: a / b, and x ^ k with k < 0."""
    out = [t] if t.op == "div" or (t.op == "pow" and t.value < 0) else []
    for a in t.args:
        out += _divisions(a)
    return out


def _value(t: Node, syms: dict, zero: frozenset, subs: dict | None = None) -> sp.Expr:
    """The rational function t denotes off the zero sets of its remaining denominators, on the
    variety where the variables in ``subs`` are the given expressions of the others, with the
    nodes in ``zero`` (identified by id) read as 0 and a denominator that is identically 0 there
    making its quotient 0 (Lean's x/0 = 0)."""
    if id(t) in zero:
        return sp.Integer(0)
    if t.op == "num":
        return sp.Integer(t.value)
    if t.op == "var":
        x = syms[t.value]
        return (subs or {}).get(x, x)
    v = [_value(a, syms, zero, subs) for a in t.args]
    if t.op == "neg":
        return -v[0]
    if t.op == "add":
        return v[0] + v[1]
    if t.op == "sub":
        return v[0] - v[1]
    if t.op == "mul":
        return v[0] * v[1]
    if t.op == "pow":
        if t.value >= 0:
            return v[0] ** t.value
        den = sp.cancel(v[0] ** (-t.value))
        return sp.Integer(0) if den == 0 else 1 / den
    den = sp.cancel(v[1])  # div
    return sp.Integer(0) if den == 0 else v[0] / den


def _denominator(t: Node, syms: dict, zero: frozenset, subs: dict | None = None) -> sp.Expr:
    if t.op == "div":
        return sp.cancel(_value(t.args[1], syms, zero, subs))
    return sp.cancel(_value(t.args[0], syms, zero, subs) ** -t.value)


def _no_real_zero(d: sp.Expr) -> bool:
    """d has no real zero: decided for d in one variable (a polynomial with no real root)."""
    free = d.free_symbols
    num, _ = sp.fraction(sp.cancel(d))
    if len(free) != 1:
        return False
    x = next(iter(free))
    p = sp.Poly(num, x)
    return p.degree() > 0 and p.count_roots() == 0


def subst(t: Node, values: dict) -> Node:
    """t with the variables named in ``values`` replaced by those nodes."""
    if t.op == "var" and t.value in values:
        return values[t.value]
    if not t.args:
        return t
    return Node(t.op, tuple(subst(a, values) for a in t.args), t.value)


def lean_eval(t: Node, point: dict):
    """The value of t at a rational point (``point``: name → fmpq), with Lean's x/0 = 0."""
    from flint import fmpq

    if t.op == "num":
        return fmpq(t.value)
    if t.op == "var":
        return fmpq(point[t.value])
    v = [lean_eval(a, point) for a in t.args]
    if t.op == "neg":
        return -v[0]
    if t.op in ("add", "sub", "mul"):
        return v[0] + v[1] if t.op == "add" else v[0] - v[1] if t.op == "sub" else v[0] * v[1]
    if t.op == "pow":
        if t.value >= 0:
            return v[0] ** t.value
        b = v[0] ** (-t.value)
        return fmpq(0) if b == 0 else 1 / b
    return fmpq(0) if v[1] == 0 else v[0] / v[1]


def equals_everywhere(t: Node, target: sp.Expr, names: list[str]) -> bool | None:
    """Whether the function t (Lean's division) equals the polynomial ``target`` on all of ℝⁿ
    (None: undecided, a denominator of degree ≥ 2 with real zeros)."""
    syms = {n: sp.Symbol(n, real=True) for n in names}
    return _agrees(t, syms, frozenset(), {}, sp.expand(target), 0)


def polynomial_everywhere(text, names: list[str]) -> tuple[bool | None, sp.Expr | None]:
    """(is the function a polynomial on all of ℝⁿ, that polynomial): (True, p), (False, None),
    or (None, p) when a denominator of degree ≥ 2 with real zeros leaves it undecided (p is then
    the only candidate).  ``text`` is an expression or a :class:`Node`.  See the module docstring."""
    syms = {n: sp.Symbol(n, real=True) for n in names}
    tree = text if isinstance(text, Node) else to_tree(text, names)
    R = sp.cancel(sp.together(_value(tree, syms, frozenset())))
    num, den = sp.fraction(R)
    if den.free_symbols:
        return False, None
    p = sp.expand(R)
    ok = _agrees(tree, syms, frozenset(), {}, p, 0)
    return ok, (p if ok is not False else None)


def _agrees(tree: Node, syms: dict, zero: frozenset, subs: dict, p: sp.Expr, depth: int) -> bool | None:
    """Whether the function equals p on the variety {subs} (variables solved for), recursing into
    the zero sets of the denominators left."""
    if depth > 32:
        return None
    here = sp.cancel(sp.together(_value(tree, syms, zero, subs)))
    if sp.expand(sp.cancel(here - p.subs(subs))) != 0:
        return False
    undecided = False
    for node in _divisions(tree):
        if id(node) in zero:
            continue
        d = sp.cancel(_denominator(node, syms, zero, subs))
        if d == 0 or not d.free_symbols:
            continue  # identically 0 (read as 0 already) or a nonzero constant
        dn, _ = sp.fraction(d)
        gens = sorted(dn.free_symbols, key=str)
        poly = sp.Poly(dn, *gens)
        if poly.total_degree() == 1:
            x = next(g for g in gens if poly.coeff_monomial(g) != 0)
            sol = sp.solve(dn, x)[0]
            sub2 = {k: sp.cancel(v.subs(x, sol)) for k, v in subs.items()}
            sub2[x] = sol
            r = _agrees(tree, syms, zero | {id(node)}, sub2, p, depth + 1)
        elif _no_real_zero(dn):
            continue
        else:
            r = None
        if r is False:
            return False
        undecided = undecided or r is None
    return None if undecided else True
