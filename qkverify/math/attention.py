"""§1 mathematics for the producer: attention functions and biaffine scores
(sympy), forms and RoPE rotations (exact rationals), and the transformer
evaluator (enclosures with python-flint's arb at an explicit precision).

Conventions (SPEC §1, Lean ``Appendices.MainText``):

* coordinates of C are ``x{j}_{c}`` (token j, coordinate c); a biaffine
  P: C × C → ℝ is written in ``u{a}`` (key) and ``v{b}`` (query);
* a bilinear form B(u, v) = uᵀ G v is given by its Gram matrix G, the first
  argument being the key: L_j(v)(u) = B_j(u, v), so L_j = G_j in the dual basis
  and T_d = G_0⁻¹ G_d;
* heads: scores s_{kj} = ⟨W_K x_j + b_K, W_Q x_k + b_Q⟩ · scale (scale 1/√n by
  default), weights softmax over j ≤ k (causal; position 0 returns x_0, as
  Lean's ``head``) or over all j; value maps V_i = W_O,i W_V,i; the network
  M(y) = W_2 act(W_1 y + b_1) + b_2.
"""

from __future__ import annotations

import ast
from math import isqrt

import sympy as sp
from flint import arb, arb_mat, ctx, fmpq, fmpq_mat

from ..errors import QKInputError

#: bits of the trace-power norm bound the kernel recomputes for hM (qkverify/kernel/rules/attention.py)
NORM_PREC = 64
#: functions an expression may call (potentials only)
FUNCTIONS = {"exp": sp.exp, "log": sp.log}


def parse(text: str, names: list[str], functions: bool = False) -> sp.Expr:
    """A sympy expression from ``text``: integers, the given variable names, + − * / and ** with an
    integer exponent (and exp/log when ``functions``).  The syntax tree is checked before sympy sees
    it.  Raises QKInputError naming what is not allowed.

    >>> parse("x0_0*x1_0 - 1/2", ["x0_0", "x1_0"])
    x0_0*x1_0 - 1/2
    """
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise QKInputError(f"{text[:60]!r} is not an expression") from None
    allowed = set(names) | (set(FUNCTIONS) if functions else set())
    for n in ast.walk(tree):
        ok = isinstance(n, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow,
                            ast.USub, ast.UAdd, ast.Load))
        ok = ok or (isinstance(n, ast.Constant) and type(n.value) is int)
        ok = ok or (isinstance(n, ast.Name) and n.id in allowed)
        ok = ok or (functions and isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in FUNCTIONS
                    and len(n.args) == 1 and not n.keywords)
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow) and not (
                isinstance(n.right, ast.Constant) and type(n.right.value) is int
                or isinstance(n.right, ast.UnaryOp) and isinstance(n.right.operand, ast.Constant)):
            ok = False
        if not ok:
            what = n.id if isinstance(n, ast.Name) else type(n).__name__
            raise QKInputError(f"{text[:60]!r}: {what} is not allowed in an expression (variables: "
                               f"{', '.join(names[:4])}{', …' if len(names) > 4 else ''})")
    syms = {s: sp.Symbol(s, real=True) for s in names}
    return sp.sympify(text, locals={**syms, **(FUNCTIONS if functions else {})}, rational=True)


def x_names(k: int, N: int) -> list[str]:
    return [f"x{j}_{c}" for j in range(k) for c in range(N)]


def lean_polynomial(text: str, names: list[str]) -> tuple[bool | None, sp.Expr]:
    """(is the function ``text`` denotes with Lean's x/0 = 0 a polynomial on all of ℝⁿ, the
    expression to use): (True, p) with the polynomial p; (False, the generic rational function);
    (None, p) undecided (:func:`qkverify.math.lean_expr.polynomial_everywhere`)."""
    from .lean_expr import polynomial_everywhere

    ok, p = polynomial_everywhere(text, names)
    return ok, (p if p is not None else parse(text, names))


def _all(values) -> bool | None:
    values = list(values)
    if any(v is False for v in values):
        return False
    return None if any(v is None for v in values) else True


def is_polynomial(e: sp.Expr, names: list[str]) -> bool:
    """Whether a rational expression is a polynomial function (its reduced denominator is constant)."""
    num, den = sp.fraction(sp.cancel(sp.together(e)))
    return not (den.free_symbols & {sp.Symbol(s, real=True) for s in names})


def rational_str(q) -> str:
    q = sp.Rational(q)
    return str(q.p) if q.q == 1 else f"{q.p}/{q.q}"


# -- Definitions 1 and 2 ---------------------------------------------------------------

def potential(pot: dict, k: int) -> tuple[sp.Expr, list[sp.Symbol]]:
    """φ(s) as a sympy expression in s0 … s_{k−1}."""
    s = [sp.Symbol(f"s{j}", real=True) for j in range(k)]
    if "expression" in pot:
        return parse(pot["expression"], [f"s{j}" for j in range(k)], functions=True), s
    if "log_sum_exp" in pot:
        t = sp.Rational(pot["log_sum_exp"])
        return t * sp.log(sum(sp.exp(x / t) for x in s)), s
    Q, b = pot["quadratic"]["Q"], pot["quadratic"]["b"]
    return (sum(sp.Rational(Q[i][j]) * s[i] * s[j] for i in range(k) for j in range(k)) / 2
            + sum(sp.Rational(b[j]) * s[j] for j in range(k))), s


def attention_fields(doc: dict) -> tuple[dict, dict]:
    """The fields of IsAttentionFunction decided with sympy, each True / False / None (None: outside
    the families decided here), and notes (what sympy showed).  Families: log-sum-exp (τ) or
    quadratic potentials; softmax (ρ, τ') or polynomial weights."""
    k, N = doc["k"], doc["N"]
    names = x_names(k, N)
    lean_sig = [lean_polynomial(t, names) for t in doc["scores"]]  # σ_j as Lean reads it (x/0 = 0)
    sig = [e for _, e in lean_sig]
    phi, s = potential(doc["potential"], k)
    grad_phi = [sp.diff(phi, x) for x in s]
    notes: dict = {}
    f: dict = {"contDiff_φ": True, "output": True, "grad": None, "poly_σ": _all(ok for ok, _ in lean_sig)}
    pot, wts = doc["potential"], doc["weights"]
    if "log_sum_exp" in pot:
        tau = sp.Rational(pot["log_sum_exp"])
        H0 = sp.hessian(phi, s).subs({x: 0 for x in s})
        # Hessian of τ·log Σ exp(s/τ) is (diag p − p pᵀ)/τ: ⪰ 0 iff τ > 0 (k ≥ 2); at s = 0 its
        # eigenvalues are 0 and 1/(kτ), so τ < 0 is not convex
        notes["hessian_at_0_eigenvalues"] = sorted(str(v) for v in H0.eigenvals())
        f["convexOn_φ"] = bool(k == 1 or all(v >= 0 for v in H0.eigenvals()))
    elif "quadratic" in pot:
        Qm = sp.Matrix(pot["quadratic"]["Q"]).applyfunc(sp.Rational)
        f["convexOn_φ"] = bool(Qm.is_positive_semidefinite)
    else:  # a user potential: its Hessian where sympy decides; the certificate says undecided
        H = sp.simplify(sp.hessian(phi, s))
        psd = H.is_positive_semidefinite
        notes["sympy_hessian"] = str(H)
        notes["sympy_convex"] = psd if psd is None else bool(psd)
        f["convexOn_φ"] = f["contDiff_φ"] = None
    if "softmax" in wts:
        lean_rho = [lean_polynomial(t, names) for t in wts["softmax"]["scores"]]
        rho = [e for _, e in lean_rho]
        t2 = sp.Rational(wts["softmax"]["tau"])
        w = [sp.exp(r / t2) / sum(sp.exp(x / t2) for x in rho) for r in rho]
        f["mem_stdSimplex"] = sp.simplify(sum(w)) == 1 and all(x.is_positive for x in w)
        f["contDiff_w"] = f["contDiff_a"] = True if _all(ok for ok, _ in lean_rho) else None
        if "log_sum_exp" in pot and f["poly_σ"] and _all(ok for ok, _ in lean_rho):
            composed = [g.subs(dict(zip(s, sig)), simultaneous=True) for g in grad_phi]
            direct = all(sp.simplify(a - b) == 0 for a, b in zip(composed, w))
            # softmax(a) = softmax(b) iff a − b is the same in every coordinate (σ, ρ polynomials)
            tau = sp.Rational(pot["log_sum_exp"])
            d = [sp.expand(a / tau - b / t2) for a, b in zip(sig, rho)]
            shift = all(sp.expand(x - d[0]) == 0 for x in d)
            notes["grad"] = {"sympy_simplify_zero": bool(direct), "shift_invariant": bool(shift)}
            f["grad"] = bool(shift)
    else:
        lean_w = [lean_polynomial(t, names) for t in wts["polynomial"]]
        w = [e for _, e in lean_w]
        w_poly = _all(ok for ok, _ in lean_w)
        f["contDiff_w"] = f["contDiff_a"] = True if w_poly else None
        # ω(x) ∈ Δ for every x: polynomial weights must be constants (a nonconstant polynomial on ℝⁿ is
        # unbounded); weights that are not polynomials (Lean's x/0 = 0) are not decided here
        if w_poly:
            const = [sp.expand(x) for x in w]
            f["mem_stdSimplex"] = (all(not x.free_symbols for x in const) and all(x >= 0 for x in const)
                                   and sum(const) == 1)
        else:
            f["mem_stdSimplex"] = None
        if "quadratic" in pot:
            # ω = ∇φ∘σ = ½(Q + Qᵀ)σ + b, a polynomial when σ is: decided when σ and ω are read as
            # polynomials; ω not a polynomial (Lean's reading) while σ is: false
            composed = [g.subs(dict(zip(s, sig)), simultaneous=True) for g in grad_phi]
            if w_poly and f["poly_σ"]:
                f["grad"] = all(sp.expand(a - b) == 0 for a, b in zip(composed, w))
            elif w_poly is False and f["poly_σ"]:
                f["grad"] = False
    if "expression" in pot:  # what sympy shows about ω = ∇φ∘σ, for the reader only
        composed = [g.subs(dict(zip(s, sig)), simultaneous=True) for g in grad_phi]
        notes["sympy_grad_equal"] = all(sp.simplify(a - b) == 0 for a, b in zip(composed, w))
        f["grad"] = None
    return f, notes


def bilinear_forms(doc: dict) -> tuple[bool | None, list]:
    """IsBilinearScore: (decision, the matrices B_j with σ_j = x_jᵀ B_j x_m, or the offending term)."""
    k, N = doc["k"], doc["N"]
    names = x_names(k, N)
    X = [[sp.Symbol(f"x{j}_{c}", real=True) for c in range(N)] for j in range(k)]
    out = []
    for j, t in enumerate(doc["scores"]):
        ok, e = lean_polynomial(t, names)
        if ok is None:
            return None, [f"σ_{j}: a denominator of degree ≥ 2 with real zeros (Lean's x/0 = 0) is not decided"]
        if not ok:
            return False, [f"σ_{j} is not a polynomial (read with Lean's x/0 = 0)"]
        P = sp.Poly(e, *[x for r in X for x in r])
        B = [[sp.Integer(0)] * N for _ in range(N)]
        for mono, c in P.terms():
            blk = [sum(mono[i * N:(i + 1) * N]) for i in range(k)]
            ok = sum(blk) == 2 and blk[k - 1] == (2 if j == k - 1 else 1) and (j == k - 1 or blk[j] == 1)
            if not ok:
                return False, [f"σ_{j} has the monomial {sp.Mul(*[x ** p for x, p in zip(P.gens, mono)])}"]
            idx = [i for i, p in enumerate(mono) for _ in range(p)]
            a, b = (idx[0] % N, idx[1] % N) if j < k - 1 else (idx[0] % N, idx[1] % N)
            B[a][b] += c
        out.append([[rational_str(v) for v in r] for r in B])
    return True, out


# -- Lemma 1 ----------------------------------------------------------------------------

def uv_names(N: int) -> list[str]:
    return [f"u{a}" for a in range(N)] + [f"v{b}" for b in range(N)]


def biaffine_parts(doc: dict) -> dict:
    """P's decomposition by Lemma 1's formulas with sympy, its bidegree and the offending monomial.

    Returns {"polynomial", "bidegree_ok", "offending", "B", "L", "R", "D"} (matrices and vectors as
    exact text, None when P is not of bidegree ≤ (1, 1))."""
    N = doc["N"]
    names = uv_names(N)
    u = [sp.Symbol(f"u{a}", real=True) for a in range(N)]
    v = [sp.Symbol(f"v{b}", real=True) for b in range(N)]
    e = parse(doc["P"], names)
    out: dict = {"polynomial": is_polynomial(e, names), "offending": None}
    if not out["polynomial"]:
        out.update(bidegree_ok=False, offending="P is not a polynomial (its reduced denominator is not constant)")
        return out
    P = sp.Poly(sp.cancel(e), *(u + v))
    for mono, c in P.terms():
        du, dv = sum(mono[:N]), sum(mono[N:])
        if du > 1 or dv > 1:
            term = sp.Mul(c, *[x ** p for x, p in zip(P.gens, mono)])
            out.update(bidegree_ok=False,
                       offending=f"{term} has degree {du} in u and {dv} in v (bidegree ≤ (1, 1) is needed)")
            return out
    out["bidegree_ok"] = True
    ex = P.as_expr()
    z = {x: 0 for x in u + v}
    D = ex.subs(z)
    Lu = sp.expand(ex.subs({x: 0 for x in v}) - D)
    Rv = sp.expand(ex.subs({x: 0 for x in u}) - D)
    Bu = sp.expand(ex - ex.subs({x: 0 for x in v}) - ex.subs({x: 0 for x in u}) + D)
    out["B"] = [[rational_str(sp.Poly(Bu, *(u + v)).coeff_monomial(u[a] * v[b])) for b in range(N)] for a in range(N)]
    out["L"] = [rational_str(sp.diff(Lu, u[a])) for a in range(N)]
    out["R"] = [rational_str(sp.diff(Rv, v[b])) for b in range(N)]
    out["D"] = rational_str(D)
    out["sum_is_P"] = sp.expand(Bu + Lu + Rv + D - ex) == 0
    return out


# -- forms, rotations ---------------------------------------------------------------------

def identity(n: int) -> fmpq_mat:
    return fmpq_mat(n, n, [int(i == j) for i in range(n) for j in range(n)])


def mat_pow(S: fmpq_mat, d: int) -> fmpq_mat:
    out = identity(S.nrows())
    for _ in range(d):
        out = out * S
    return out


def rotation(pairs: list[tuple[int, int]], cs: list[tuple[fmpq, fmpq]], n: int) -> fmpq_mat:
    """Block rotation of Q^n: in the plane (a, b), e_a ↦ c e_a + s e_b, e_b ↦ −s e_a + c e_b."""
    R = identity(n)
    for (a, b), (c, s) in zip(pairs, cs):
        R[a, a], R[b, b], R[a, b], R[b, a] = c, c, -s, s
    return R


def rope_forms(W_Q: fmpq_mat, W_K: fmpq_mat, R: fmpq_mat, k: int) -> tuple[list[fmpq_mat], fmpq_mat]:
    """B_d(u, v) = ⟨R^d W_K u, W_Q v⟩ for d < k (SPEC §1), i.e. G_d = W_Kᵀ (R^d)ᵀ W_Q, and the operator
    the construction predicts, S = W_Q⁻¹ Rᵀ W_Q (so that T_d = S^d)."""
    Gs = [W_K.transpose() * mat_pow(R, d).transpose() * W_Q for d in range(k)]
    return Gs, W_Q.inv() * R.transpose() * W_Q


# -- the transformer evaluator (enclosures) ------------------------------------------------

def inv_sqrt(n: int, prec: int):
    """1/√n: an exact rational when n is a square, else an arb ball at ``prec`` bits."""
    r = isqrt(n)
    if r * r == n:
        return fmpq(1, r)
    with ctx.workprec(prec):
        return 1 / arb(n).sqrt()


def softmax_rows(S: fmpq_mat, scale, causal: bool, prec: int) -> list[list[arb]]:
    """Rows k of softmax weights over keys j (S[j, k] = ⟨k_j, q_k⟩ exactly), at ``prec`` bits."""
    ell = S.nrows()
    out = []
    with ctx.workprec(prec):
        for k in range(ell):
            keys = range(k + 1) if causal else range(ell)
            top = max(S[j, k] for j in keys)
            e = [(arb(S[j, k] - top) * scale).exp() if j in keys else arb(0) for j in range(ell)]
            tot = sum(e, arb(0))
            out.append([x / tot for x in e])
    return out


def act(t: arb, kind: str) -> arb:
    """relu, gelu (t·Φ(t) with the error function) or identity on an enclosure."""
    if kind == "relu":
        return t.max(arb(0))
    if kind == "gelu":
        return t * (1 + (t / arb(2).sqrt()).erf()) / 2
    return t


def gram_trace_bound(M: fmpq_mat, squarings: int, prec: int) -> arb:
    """An upper bound of the Euclidean operator norm ‖M‖: tr(G^(2^s))^(1/2^(s+1)) with G = MᵀM
    (or MMᵀ, the smaller), since λ_max(G)^(2^s) ≤ tr(G^(2^s)); s = 0 is the Frobenius norm."""
    with ctx.workprec(prec):
        A = arb_mat(M)
        G = A.transpose() * A if M.ncols() <= M.nrows() else A * A.transpose()
        logk = arb(0)
        for _ in range(squarings):
            t = G.trace()
            G = (G * (1 / t)) * (G * (1 / t))
            logk = 2 * (logk + t.log())
        return ((logk + G.trace().log()) / (2 * 2 ** squarings)).exp()


__all__ = ["parse", "attention_fields", "bilinear_forms", "biaffine_parts", "rope_forms", "rotation",
           "softmax_rows", "act", "gram_trace_bound", "inv_sqrt", "mat_pow", "identity"]
