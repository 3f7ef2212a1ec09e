"""The kernel's reading of an input expression as Lean reads it: a rational function with
``x / 0 = 0`` (and ``x ^ (−k) = (x ^ k)⁻¹``, ``0⁻¹ = 0``), the syntax tree as written -- no
cancelling of removable singularities.  Stdlib ``ast`` and FLINT's multivariate polynomials only
(an independent implementation from the producer's sympy one, ``qkverify/math/lean_expr.py``).

:func:`polynomial_everywhere` decides whether the function is a polynomial on all of ℝⁿ:

* off the zero sets of its denominators it is the reduced quotient num/den obtained bottom-up
  (gcd at every division), so the only candidate is that quotient, which must have a constant
  denominator;
* on the zero set of each remaining denominator d of total degree 1 (a hyperplane: one variable
  solved for), the quotient is 0 and the function must again equal the candidate there
  (recursively; a denominator that vanishes identically on the hyperplane is read as 0); a
  denominator of degree ≥ 2 with real zeros leaves the question undecided -- except one in a
  single variable whose square-free part has no real root (Sturm count).

The recursion is bounded by the number of division nodes (each level zeroes one more).

>>> polynomial_everywhere("(u0**2*v0 + u0*v0)/(u0 + 1)", ["u0", "v0"])[0]
False
>>> polynomial_everywhere("u0*v0*(u0/u0)", ["u0", "v0"])[0]
True
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from math import comb

from flint import fmpq, fmpq_mpoly, fmpq_mpoly_ctx, fmpq_poly

from . import limits


@dataclass(frozen=True)
class Node:
    op: str
    args: tuple = ()
    value: object = None


def to_tree(text: str, names: list[str]) -> Node:
    """The syntax tree: integers, the given names, + − * /, integer powers (ValueError otherwise)."""
    body = ast.parse(text, mode="eval").body

    def conv(n) -> Node:
        if isinstance(n, ast.Constant) and type(n.value) is int:
            return Node("num", value=n.value)
        if isinstance(n, ast.Name) and n.id in names:
            return Node("var", value=n.id)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            a = conv(n.operand)
            return Node("neg", (a,)) if isinstance(n.op, ast.USub) else a
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow):
            e = n.right
            k = e.value if isinstance(e, ast.Constant) else (
                -e.operand.value if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub)
                and isinstance(e.operand, ast.Constant) else None)
            if type(k) is not int or abs(k) > limits.MAX_EXPONENT:
                raise ValueError(f"only integer exponents up to {limits.MAX_EXPONENT} are read")
            return Node("pow", (conv(n.left),), k)
        if isinstance(n, ast.BinOp):
            op = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}.get(type(n.op))
            if op is not None:
                return Node(op, (conv(n.left), conv(n.right)))
        raise ValueError(f"{type(n).__name__} is not allowed in an expression")

    return conv(body)


def _reduce(num: fmpq_mpoly, den: fmpq_mpoly) -> tuple[fmpq_mpoly, fmpq_mpoly]:
    if num.is_zero():
        return num, den.context().from_dict({(0,) * den.context().nvars(): 1})
    g = num.gcd(den)
    num, den = num / g, den / g
    lc = den.leading_coefficient()
    return num * (1 / lc), den * (1 / lc)


def _deg(p: fmpq_mpoly) -> int:
    return max(p.total_degree(), 0)


def _room(degree: int, terms: int) -> None:
    """Undecided before an expression is multiplied out past the caps (degree, and a bound on terms)."""
    limits.over("degrees of an expression", degree, limits.MAX_EXPR_DEGREE, "MAX_EXPR_DEGREE")
    limits.over("terms of an expression", terms, limits.MAX_EXPR_TERMS, "MAX_EXPR_TERMS")


def _room2(x: tuple, y: tuple) -> None:
    """Room for a product of the quotients x and y (numerators and denominators multiplied)."""
    _room(max(_deg(x[0]), _deg(x[1])) + max(_deg(y[0]), _deg(y[1])),
          max(len(x[0]), len(x[1]), 1) * max(len(y[0]), len(y[1]), 1))


class _Ev:
    """Bottom-up evaluation of a tree into reduced quotients, on a variety given by ``subs``
    (variable index → polynomial in the others), with the division nodes in ``zero`` read as 0."""

    def __init__(self, ctx: fmpq_mpoly_ctx, names: list[str]):
        self.ctx, self.names = ctx, names
        self.one = ctx.from_dict({(0,) * ctx.nvars(): 1})

    def value(self, t: Node, zero: frozenset, subs: dict) -> tuple[fmpq_mpoly, fmpq_mpoly]:
        if id(t) in zero:
            return 0 * self.one, self.one
        if t.op == "num":
            return self.one * t.value, self.one
        if t.op == "var":
            i = self.names.index(t.value)
            return (subs[i] if i in subs else self.ctx.gens()[i]), self.one
        vs = [self.value(a, zero, subs) for a in t.args]
        if t.op == "neg":
            return -vs[0][0], vs[0][1]
        if t.op != "pow":
            if len(vs) == 2:
                _room2(*vs)
        else:
            e, (a, b) = abs(t.value), vs[0]
            _room(e * max(_deg(a), _deg(b)), comb(max(len(a), len(b), 1) + e - 1, e))   # monomials of a power
        if t.op in ("add", "sub"):
            (a, b), (c, d) = vs
            return _reduce(a * d + c * b if t.op == "add" else a * d - c * b, b * d)
        if t.op == "mul":
            (a, b), (c, d) = vs
            return _reduce(a * c, b * d)
        if t.op == "pow":
            a, b = vs[0]
            k = t.value
            if k >= 0:
                return a ** k, b ** k
            if a.is_zero():
                return 0 * self.one, self.one  # 0⁻¹ = 0
            return _reduce(b ** -k, a ** -k)
        (a, b), (c, d) = vs  # a/b ÷ c/d
        if c.is_zero():
            return 0 * self.one, self.one   # x / 0 = 0
        return _reduce(a * d, b * c)

    def denominator(self, t: Node, zero: frozenset, subs: dict) -> fmpq_mpoly:
        """The numerator of the divisor of a division node (its zero set is where Lean's x/0 applies)."""
        if t.op == "div":
            return self.value(t.args[1], zero, subs)[0]
        return self.value(t.args[0], zero, subs)[0]


def _divisions(t: Node) -> list[Node]:
    out = [t] if t.op == "div" or (t.op == "pow" and t.value < 0) else []
    for a in t.args:
        out += _divisions(a)
    return out


def _no_real_zero(d: fmpq_mpoly) -> bool:
    """d, a polynomial in one variable, has no real root (Sturm sequence of its square-free part)."""
    used = [i for i, e in enumerate(d.degrees()) if e > 0]
    if len(used) != 1:
        return False
    i = used[0]
    coeffs: dict[int, fmpq] = {}
    for mono, c in d.to_dict().items():
        coeffs[mono[i]] = coeffs.get(mono[i], fmpq(0)) + c
    p = fmpq_poly([coeffs.get(k, fmpq(0)) for k in range(max(coeffs) + 1)])
    p = p / p.gcd(p.derivative())
    seq = [p, p.derivative()]
    while seq[-1].degree() > 0:
        r = -(seq[-2] % seq[-1])
        if r.is_zero():
            break
        seq.append(r)

    def changes(signs: list[int]) -> int:
        s = [x for x in signs if x]
        return sum(1 for a, b in zip(s, s[1:]) if a != b)

    lead = [(1 if q.coeffs()[-1] > 0 else -1) for q in seq]
    at_minus = [lc * (-1) ** q.degree() for lc, q in zip(lead, seq)]
    return changes(at_minus) - changes(lead) == 0


def subst(t: Node, values: dict) -> Node:
    """t with the variables named in ``values`` replaced by those nodes."""
    if t.op == "var" and t.value in values:
        return values[t.value]
    if not t.args:
        return t
    return Node(t.op, tuple(subst(a, values) for a in t.args), t.value)


def lean_eval(t: Node, point: dict) -> fmpq:
    """The value of t at a rational point (name → fmpq) with Lean's x/0 = 0 and 0⁻¹ = 0."""
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


def _tree(text, names: list[str]) -> Node:
    return text if isinstance(text, Node) else to_tree(text, names)


def polynomial_everywhere(text, names: list[str]) -> tuple[bool | None, fmpq_mpoly | None]:
    """(whether the Lean function of ``text`` (an expression or a :class:`Node`) is a polynomial on
    ℝⁿ, that polynomial): (True, p), (False, None), or (None, p) undecided (the module docstring)."""
    ctx = fmpq_mpoly_ctx.get(tuple(names), "lex")
    ev = _Ev(ctx, names)
    tree = _tree(text, names)
    num, den = ev.value(tree, frozenset(), {})
    if not den.is_constant():
        return False, None
    p = num * (1 / den.leading_coefficient())
    ok = _agrees(ev, tree, frozenset(), {}, p, 0)
    return ok, (p if ok is not False else None)


def equals_everywhere(text, names: list[str], target: fmpq_mpoly) -> bool | None:
    """Whether the Lean function of ``text`` (an expression or a Node) equals the polynomial
    ``target`` (in the context of ``names``) on all of ℝⁿ; None: undecided."""
    ctx = fmpq_mpoly_ctx.get(tuple(names), "lex")
    ev = _Ev(ctx, names)
    return _agrees(ev, _tree(text, names), frozenset(), {}, target, 0)


def _compose(ev: _Ev, p: fmpq_mpoly, subs: dict) -> fmpq_mpoly:
    if not subs:
        return p
    gens = ev.ctx.gens()
    return p.compose(*[subs.get(i, gens[i]) for i in range(len(gens))])


def _agrees(ev: _Ev, tree: Node, zero: frozenset, subs: dict, p: fmpq_mpoly, depth: int) -> bool | None:
    if depth > 64:
        return None
    num, den = ev.value(tree, zero, subs)
    if not (num - _compose(ev, p, subs) * den).is_zero():
        return False
    undecided = False
    for node in _divisions(tree):
        if id(node) in zero:
            continue
        d = ev.denominator(node, zero, subs)
        if d.is_zero() or d.is_constant():
            continue
        if d.total_degree() == 1:
            mono = d.to_dict()
            i = next(k for k in range(ev.ctx.nvars()) if mono.get(tuple(int(j == k) for j in range(ev.ctx.nvars())), 0))
            a = mono[tuple(int(j == i) for j in range(ev.ctx.nvars()))]
            xi = ev.ctx.gens()[i]
            sol = (xi * a - d) * (1 / a)           # x_i = −(d − a·x_i)/a on the hyperplane d = 0
            sub2 = {k: v.compose(*[sol if j == i else g for j, g in enumerate(ev.ctx.gens())]) for k, v in subs.items()}
            sub2[i] = sol
            r = _agrees(ev, tree, zero | {id(node)}, sub2, p, depth + 1)
        elif _no_real_zero(d):
            continue
        else:
            r = None
        if r is False:
            return False
        undecided = undecided or r is None
    return None if undecided else True
