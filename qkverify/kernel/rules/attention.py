"""§1 (Homogenization.lean, BiaffineDecomposition.lean, NearIdentity.lean).

* ``attention_function``: scores σ_j and weights are expressions in ``x{j}_{c}``, read into
  exact rational functions; potentials log-sum-exp (τ) or ½sᵀQs + bᵀs.  Decided: polynomial σ,
  convexity (τ > 0; Q ⪰ 0), simplex values (softmax; constant weights), ω = ∇φ∘σ (softmax:
  σ/τ − ρ/τ' independent of j, softmax being injective modulo shifts; quadratic: ω ≡ Qσ + b).
* ``biaffine``: P(u, v) as an expression in ``u{a}`` (key) and ``v{b}`` (query).
* ``transformer``: tokens, heads (softmax over rational scores, or fixed weight rows), value
  maps V_i = W_O,i W_V,i, M(y) = W_2 act(W_1 y + b_1) + b_2, matrices inline or tensors of a
  safetensors ``file``.  Outputs are enclosures; ‖V_i‖ (Euclidean) from the certified roots
  of charpoly((W_OᵀW_O)(W_VW_Vᵀ)); ‖W‖ ≤ tr((WᵀW)^(2^s))^(1/2^(s+1)) for hM; sup norm: row sums."""

from __future__ import annotations

import ast
from math import comb, isqrt

from flint import arb, arb_mat, ctx, fmpq, fmpq_mat, fmpq_mpoly_ctx, fmpz_mat

from .. import limits
from .. import weights as W
from ..derive import PREC, Ctx
from ..jsonio import Invalid, Undecided, rat, ratmat, require
from ..table import MT, NotEvaluable, dfn, predicate, thm
from ..wellformed import Args, kind, matrix, square, vector

AF, BI, TR, Q3 = ("attention_function",), ("biaffine",), ("transformer",), "qkv_homogenizes_to_bilinear"
NORM_PREC = 64  # bits of the trace-power bound of ‖W_1‖, ‖W_2‖ (hM)


def _deg(p) -> int:
    return max(p.total_degree(), 0)


def _room(degree: int, terms: int) -> None:
    """Undecided before an expression is multiplied out past the caps (degree, and a bound on terms)."""
    limits.over("degrees of an expression", degree, limits.MAX_EXPR_DEGREE, "MAX_EXPR_DEGREE")
    limits.over("terms of an expression", terms, limits.MAX_EXPR_TERMS, "MAX_EXPR_TERMS")


def rational_function(text: str, C: fmpq_mpoly_ctx):
    """(P, Q) in lowest terms, Q monic: integers, C's variables, + − * / and ** (integer |e| ≤ 64)."""
    names, one = dict(zip(C.names(), C.gens())), C.constant(1)

    def ev(n):
        if isinstance(n, ast.BinOp):
            (p, q), op = ev(n.left), n.op
            if isinstance(op, ast.Pow):
                e = n.right.value if isinstance(n.right, ast.Constant) else None
                require(type(e) is int and abs(e) <= limits.MAX_EXPONENT and (e >= 0 or not p.is_zero()), "input",
                        "bad exponent")
                t = max(len(p), len(q), 1)
                _room(abs(e) * max(_deg(p), _deg(q)), comb(t + abs(e) - 1, abs(e)))   # monomials of a power
                return (p ** e, q ** e) if e >= 0 else (q ** -e, p ** -e)
            r, s = ev(n.right)
            _room(max(_deg(p), _deg(q)) + max(_deg(r), _deg(s)), max(len(p), len(q)) * max(len(r), len(s)))
            if isinstance(op, (ast.Add, ast.Sub)):
                return (p * s + r * q if isinstance(op, ast.Add) else p * s - r * q), q * s
            if isinstance(op, ast.Mult):
                return p * r, q * s
            require(isinstance(op, ast.Div) and not r.is_zero(), "input", "division by zero or an unknown operator")
            return p * s, q * r
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            p, q = ev(n.operand)
            return (-p if isinstance(n.op, ast.USub) else p), q
        if isinstance(n, ast.Constant) and type(n.value) is int:
            return C.constant(n.value), one
        if isinstance(n, ast.Name) and n.id in names:
            return names[n.id], one
        raise Invalid("input", f"cannot read {type(n).__name__} in an expression")

    try:
        p, q = ev(ast.parse(text, mode="eval").body)
    except SyntaxError:
        raise Invalid("input", f"{text[:40]!r} is not an expression") from None
    g = p.gcd(q)
    c = (q / g).leading_coefficient()
    return p / g / c, q / g / c


def _eq(a, b) -> bool:
    return a[0] * b[1] == b[0] * a[1]


def _psd(X: fmpq_mat) -> bool:
    """Symmetric X ⪰ 0: no sign change in charpoly(−x) (real-rooted, so Descartes is exact)."""
    cs = [c if i % 2 == 0 else -c for i, c in enumerate(limits.for_charpoly(X).numer_denom()[0].charpoly().coeffs())]
    nz = [c for c in cs if c != 0]
    return all((a > 0) == (b > 0) for a, b in zip(nz, nz[1:]))


# -- Definitions 1 and 2 ---------------------------------------------------------------------

def _fns(q: Ctx, key: str, texts: list[str]) -> list:
    k, N = q.inp["k"], q.inp["N"]
    require(len(texts) == k, "input", f"{key}: k expressions are needed")
    C = fmpq_mpoly_ctx.get(tuple(f"x{j}_{c}" for j in range(k) for c in range(N)), "lex")
    return q.memo(("fn", key), lambda: [rational_function(t, C) for t in texts])


def _is_attention_function(q: Ctx) -> bool:
    """The fields of IsAttentionFunction (a = Σ ω_j x_j and φ's smoothness hold by the input's form)."""
    inp, k = q.inp, q.inp["k"]
    sig, pot, wts = _fns(q, "scores", inp["scores"]), inp["potential"], inp["weights"]
    f = [all(s[1].is_constant() for s in sig)]
    if "log_sum_exp" in pot:
        tau = rat(pot["log_sum_exp"])
        require(tau != 0, "input", "the temperature τ must be nonzero")
        f.append(tau > 0 or k == 1)
    elif "quadratic" in pot:
        Qm, b = ratmat(pot["quadratic"]["Q"]), [rat(x) for x in pot["quadratic"]["b"]]
        require(Qm.nrows() == Qm.ncols() == len(b) == k and Qm == Qm.transpose(), "input", "Q symmetric k×k, b of length k")
        f.append(_psd(Qm))
    else:  # a potential given as an expression: not decided by the kernel
        f.append(None)
    grad = None
    if "softmax" in wts:
        rho, t2 = _fns(q, "softmax", wts["softmax"]["scores"]), rat(wts["softmax"]["tau"])
        require(t2 != 0, "input", "the weights' temperature must be nonzero")
        f.append(all(r[1].is_constant() for r in rho) or None)  # smooth ω and a
        if "log_sum_exp" in pot:  # σ/τ − ρ/τ' (times ττ') must not depend on j
            d = [(s[0] * r[1] * t2 - r[0] * s[1] * tau, s[1] * r[1]) for s, r in zip(sig, rho)]
            grad = all(_eq(x, d[0]) for x in d)
    else:
        w = _fns(q, "polynomial", wts["polynomial"])
        f.append(all(x[1].is_constant() for x in w) or None)
        vals = [x[0].leading_coefficient() if x[0].is_constant() and not x[0].is_zero() else fmpq(0) for x in w]
        f.append(all(x[0].is_constant() and x[1].is_constant() for x in w) and min(vals) >= 0 and sum(vals) == 1)
        if "quadratic" in pot:
            grad = True
            for j in range(k):  # ω_j ≡ Σ_i Q_ji σ_i + b_j as rational functions
                acc = (sig[0][1] ** 0 * b[j], sig[0][1] ** 0)
                for i in range(k):
                    acc = (acc[0] * sig[i][1] + sig[i][0] * Qm[j, i] * acc[1], acc[1] * sig[i][1])
                grad = grad and _eq(acc, w[j])
    f.append(grad)
    if False in f:
        return False
    if None in f:
        raise Undecided("a field of IsAttentionFunction is outside what the kernel decides for these families")
    return True


def _bilinear(q: Ctx) -> bool:
    """σ_j = B_j(x_j, x_m): every monomial is x_{j,a}·x_{m,b} (m = k − 1)."""
    k, N = q.inp["k"], q.inp["N"]
    for j, (p, d) in enumerate(_fns(q, "scores", q.inp["scores"])):
        for e in ([None] if not d.is_constant() else p.monoms()):
            blk = [sum(e[i * N:(i + 1) * N]) for i in range(k)] if e else [0] * k
            if sum(blk) != 2 or blk[k - 1] != (2 if j == k - 1 else 1) or (j < k - 1 and blk[j] != 1):
                return False
    return True


dfn(MT + "IsPolyFun", "IsAttentionFunction", AF, lambda q: [s[1].is_constant() for s in _fns(q, "scores", q.inp["scores"])])
dfn(MT + "IsAttentionFunction", "IsAttentionFunction", AF, _is_attention_function)
dfn(MT + "IsBilinearScore", "IsBilinearScore", AF, _bilinear)


# -- Lemma 1 ----------------------------------------------------------------------------------

def _P(q: Ctx):
    """(P as a polynomial or None, its variable context, N)."""
    N = q.inp["N"]
    C = fmpq_mpoly_ctx.get(tuple(f"u{a}" for a in range(N)) + tuple(f"v{b}" for b in range(N)), "lex")
    p, d = q.memo("P", lambda: rational_function(q.inp["P"], C))
    return (p if d.is_constant() else None), C, N


def _bidegree(q: Ctx) -> bool:
    p, _, N = _P(q)
    return p is not None and all(sum(e[:N]) <= 1 and sum(e[N:]) <= 1 for e in p.monoms())


def _formulas(q: Ctx) -> tuple:
    """(B, L, R, D) by D = P(0,0), L = P(u,0) − D, R = P(0,v) − D, B = P − P(u,0) − P(0,v) + D."""
    p, C, N = _P(q)
    pu0, p0v = p.subs({v: 0 for v in C.names()[N:]}), p.subs({u: 0 for u in C.names()[:N]})
    d = pu0.subs({u: 0 for u in C.names()[:N]})
    return p - pu0 - p0v + d, pu0 - d, p0v - d, d


def _given(q: Ctx) -> tuple:
    if "decomposition" not in q.inp:
        raise NotEvaluable("no decomposition is given")
    dec, (_, C, N), g = q.inp["decomposition"], _P(q), _P(q)[1].gens()
    Bm, L, R = ratmat(dec["B"]), [rat(x) for x in dec["L"]], [rat(x) for x in dec["R"]]
    require(Bm.nrows() == Bm.ncols() == len(L) == len(R) == N, "input", "B is N×N, L and R have length N")
    z = C.constant(0)
    return (sum((Bm[a, b] * g[a] * g[N + b] for a in range(N) for b in range(N)), z), sum((L[a] * g[a] for a in range(N)), z),
            sum((R[b] * g[N + b] for b in range(N)), z), C.constant(rat(dec["D"])))


def _unique(q: Ctx) -> bool:
    """The formulas give a bilinear B, linear L, R, constant D summing to P (existence), and the
    coefficients read monomial by monomial are the same four (uniqueness)."""
    p, C, N = _P(q)
    cls = [(1, 1), (1, 0), (0, 1), (0, 0)]
    read = [sum((C.from_dict({e: c}) for e, c in p.to_dict().items() if (sum(e[:N]), sum(e[N:])) == t), C.constant(0))
            for t in cls]
    return sum(_formulas(q), C.constant(0)) == p and list(_formulas(q)) == read


predicate("bidegree_le_one_one", _bidegree)
predicate("biaffine_decomposition_holds", lambda q: _P(q)[0] is not None and sum(_given(q), _P(q)[1].constant(0)) == _P(q)[0])
dfn(MT + "IsPolyBidegreeLeOneOne", "biaffine_decomposition", BI, _bidegree)
thm(MT + "biaffine_components", "biaffine_decomposition", BI, (("h", "biaffine_decomposition_holds"),),
    lambda q: _given(q) == _formulas(q))
thm(MT + "biaffine_decomposition", "biaffine_decomposition", BI, (("hP", "bidegree_le_one_one"),), _unique)


# -- Definitions 4, 5 and Proposition 2 ---------------------------------------------------------

def _mat(q: Ctx, spec) -> fmpq_mat:
    """An inline matrix or vector (as one row), or rows/cols [a, b) of a tensor of the input's file."""
    if isinstance(spec, list):
        return ratmat(spec if isinstance(spec[0], list) else [spec])

    def whole():
        Z, e = W.tensor(W.find(q.inp["file"], q.inp["sha256"], q.base_dir, q.weights_dirs), spec["tensor"])
        return Z, (fmpq(2) ** e if e >= 0 else fmpq(1, 2 ** -e))

    def build():
        Z, s = q.memo(("T", spec["tensor"]), whole)
        r, c = range(*spec.get("rows", (0, Z.nrows()))), range(*spec.get("cols", (0, Z.ncols())))
        require(r.stop <= Z.nrows() and c.stop <= Z.ncols(), "input", f"slice of {spec['tensor']} out of range")
        return fmpq_mat(Z if (len(r), len(c)) == (Z.nrows(), Z.ncols()) else fmpz_mat([[Z[i, j] for j in c] for i in r])) * s
    return q.memo(("m", repr(spec)), build)


def _X(q: Ctx) -> fmpq_mat:
    """Tokens as rows: inline, or sums of rows of embedding tensors."""
    def build():
        if isinstance(q.inp["x"], list):
            return ratmat(q.inp["x"])
        p, out = W.find(q.inp["file"], q.inp["sha256"], q.base_dir, q.weights_dirs), None
        for t in q.inp["x"]["sum"]:
            Z, e = W.tensor(p, t["tensor"], t["rows"])
            rows = fmpq_mat(Z) * (fmpq(2) ** e if e >= 0 else fmpq(1, 2 ** -e))
            out = rows if out is None else out + rows
        return out
    return q.memo("X", build)


def _inv_sqrt(n: int):
    r = isqrt(n)
    return fmpq(1, r) if r * r == n else 1 / arb(n).sqrt()


def _weights(q: Ctx, i: int) -> tuple[list[list], bool]:
    """(weight rows of head i, IsAttentionOutput of the head); causal heads follow Lean's ``head``
    (position 0 returns x_0, position k weighs x_0 … x_k); with positions the scores are of x + p."""
    def build():
        h, X = q.inp["heads"][i], _X(q)
        ell, causal = X.nrows(), h.get("causal", False)
        keys = [range(k + 1) if causal else range(ell) for k in range(ell)]
        if "weights" in h:
            Wt = ratmat(h["weights"])
            require(Wt.nrows() == Wt.ncols() == ell and all(Wt[k, j] == 0 for k in range(ell) for j in range(ell)
                                                            if j not in keys[k]), "input", "ℓ×ℓ weights, causal if so")
            rows = [[fmpq(int(j == 0)) for j in range(ell)] if causal and k == 0 else [Wt[k, j] for j in range(ell)]
                    for k in range(ell)]
            return rows, all(min(r) >= 0 and sum(r) == 1 for r in rows)
        Xp = X + ratmat(q.inp["positions"]) if "positions" in q.inp else X
        Qx, Kx = Xp * _mat(q, h["W_Q"]).transpose(), Xp * _mat(q, h["W_K"]).transpose()
        for M, b in ((Qx, h.get("b_Q")), (Kx, h.get("b_K"))):
            bv = _mat(q, b) if b is not None else None
            for r in range(ell if bv is not None else 0):
                for c in range(M.ncols()):
                    M[r, c] += bv[0, c]
        S, c = Kx * Qx.transpose(), rat(h["scale"]) if "scale" in h else _inv_sqrt(Qx.ncols())
        rows = []
        for k in range(ell):
            top = max(S[j, k] for j in keys[k])
            e = [(arb(S[j, k] - top) * c).exp() if j in keys[k] else arb(0) for j in range(ell)]
            rows.append([x / sum(e, arb(0)) for x in e])
        return rows, True
    with ctx.workprec(PREC):
        return q.memo(("w", i), build)


def _outputs(q: Ctx, i: int) -> arb_mat:
    with ctx.workprec(PREC):
        return arb_mat([[arb(v) for v in r] for r in _weights(q, i)[0]]) * arb_mat(_X(q))


def _block(q: Ctx) -> arb_mat:
    """attentionBlock: row k is Σ_i W_O,i W_V,i A_i(x)_k."""
    def build():
        return sum((_outputs(q, i) * arb_mat(_mat(q, h["W_V"]).transpose()) * arb_mat(_mat(q, h["W_O"]).transpose())
                    for i, h in enumerate(q.inp["heads"])), arb_mat(_X(q).nrows(), _X(q).ncols()))
    with ctx.workprec(PREC):
        return q.memo("block", build)


def _M(q: Ctx, Y: arb_mat) -> arb_mat:
    """M on every row of Y (0 when the input has none); act: relu, gelu (t·Φ(t)) or identity."""
    m = q.inp["M"]
    if m is None:
        return arb_mat(Y.nrows(), Y.ncols())
    act = {"relu": lambda t: t.max(arb(0)), "gelu": lambda t: t * (1 + (t / arb(2).sqrt()).erf()) / 2,
           "identity": lambda t: t}[m["act"]]
    with ctx.workprec(PREC):
        H = Y * arb_mat(_mat(q, m["W_1"]).transpose())
        b1 = _mat(q, m["b_1"]) if m.get("b_1") is not None else fmpq_mat(1, H.ncols())
        out = arb_mat([[act(H[r, c] + b1[0, c]) for c in range(H.ncols())] for r in range(H.nrows())])
        out = out * arb_mat(_mat(q, m["W_2"]).transpose())
        b2 = _mat(q, m["b_2"]) if m.get("b_2") is not None else fmpq_mat(1, out.ncols())
        return out + arb_mat([[b2[0, c] for c in range(out.ncols())]] * out.nrows())


def _amax(xs: list[arb]) -> arb:
    return arb(max(x.lower() for x in xs)).union(arb(max(x.upper() for x in xs)))


def _row_norm(q: Ctx, M, r: int) -> arb:
    v = [arb(M[r, c]) for c in range(M.ncols())]
    return _amax([abs(x) for x in v]) if q.inp["norm"] == "linf" else sum((x * x for x in v), arb(0)).sqrt()


def _rowsum(M: fmpq_mat) -> fmpq:
    return max(sum(abs(M[r, c]) for c in range(M.ncols())) for r in range(M.nrows()))


def _opnorm(q: Ctx, i: int) -> tuple[arb, arb]:
    """Certified lower and upper bounds of ‖W_O,i W_V,i‖ in the input's norm."""
    def build():
        h = q.inp["heads"][i]
        WV, WO = _mat(q, h["W_V"]), _mat(q, h["W_O"])
        if q.inp["norm"] == "linf":
            return arb(_rowsum(WO * WV)), arb(_rowsum(WO * WV))
        num, den = limits.for_charpoly((WO.transpose() * WO) * (WV * WV.transpose())).numer_denom()
        roots = [r.real / den for r, _ in num.charpoly().complex_roots()]
        return (arb(max(r.lower() for r in roots)).max(arb(0)).sqrt(), arb(max(r.upper() for r in roots)).max(arb(0)).sqrt())
    with ctx.workprec(PREC):
        return q.memo(("V", i), build)


def _norm_upper(q: Ctx, M: fmpq_mat) -> arb:
    """An upper bound of the operator norm of M (Euclidean: the trace-power bound at NORM_PREC bits)."""
    if q.inp["norm"] == "linf":
        return arb(_rowsum(M))
    s = q.inp.get("squarings", 0)
    with ctx.workprec(NORM_PREC):
        G = arb_mat(M.transpose()) * arb_mat(M) if M.ncols() <= M.nrows() else arb_mat(M) * arb_mat(M.transpose())
        logk = arb(0)
        for _ in range(s):
            t = G.trace()
            require(t > 0, "input", "a zero weight matrix")
            G, logk = (G * (1 / t)) * (G * (1 / t)), 2 * (logk + t.log())
        return ((logk + G.trace().log()) / 2 ** (s + 1)).exp()


def _hM(q: Ctx) -> bool:
    """∀ y, ‖M y‖ ≤ L‖y‖: false when L < 0 or M(0) ≠ 0; true when L ≥ ‖W_2‖·‖W_1‖ (|act t| ≤ |t|)."""
    m, L = q.inp["M"], rat(q.inp["L"])
    if L < 0 or m is None:
        return L >= 0
    with ctx.workprec(PREC):
        z = _M(q, arb_mat(1, _X(q).ncols()))
        q.certified = True
        if any(not z[0, c].contains(0) for c in range(z.ncols())):
            return False
        if not all(z[0, c].is_zero() for c in range(z.ncols())):
            raise Undecided("M(0) is not shown to be 0 or nonzero")
        if _norm_upper(q, _mat(q, m["W_1"])) * _norm_upper(q, _mat(q, m["W_2"])) <= arb(L):
            return True
    raise Undecided("L is below the certified growth bound ‖W_2‖·‖W_1‖: hM is not decided")


def _bound(q: Ctx, with_M: bool) -> bool:
    """‖A(x)_k (+ M(x_k + A(x)_k))‖ ≤ (V (+ L + LV))·max_j ‖x_j‖ at every k, V = Σ‖V_i‖ enclosed."""
    with ctx.workprec(PREC):
        X, A = _X(q), _block(q)
        out = A + _M(q, arb_mat(X) + A) if with_M else A
        xmax = _amax([_row_norm(q, X, r) for r in range(X.nrows())])
        L = arb(rat(q.inp["L"])) if with_M else arb(0)
        c = [(L + v + L * v) * xmax for v in (sum((_opnorm(q, i)[s] for i in range(len(q.inp["heads"]))), arb(0))
                                              for s in (0, 1))]
        lhs = [_row_norm(q, out, r) for r in range(X.nrows())]
    q.certified = True
    if all(x <= c[0] for x in lhs):
        return True
    if any(x > c[1] for x in lhs):
        return False
    raise Undecided("the two sides of the bound overlap at the kernel's precision")


def _single(q: Ctx, causal: bool = False) -> dict:
    hs = q.inp["heads"]
    if len(hs) != 1 or (causal and not hs[0].get("causal", False)):
        raise NotEvaluable("stated for one (causal) head")
    return hs[0]


def _entries(M: arb_mat) -> list:
    return [[M[r, c] for c in range(M.ncols())] for r in range(M.nrows())]


def _transformer(q: Ctx) -> list:
    _single(q)
    with ctx.workprec(PREC):
        Y = arb_mat(_X(q)) + _block(q)
        return _entries(Y + _M(q, Y))


predicate("heads_convex_outputs", lambda q: all(_weights(q, i)[1] for i in range(len(q.inp["heads"]))))
predicate("M_linear_growth", _hM)
dfn(MT + "head", "head", TR, lambda q: _single(q, True) and _entries(_outputs(q, 0)))
dfn(MT + "transformer", "transformer", TR, _transformer)
dfn(MT + "IsAttentionOutput", "near_identity", TR, lambda q: [_weights(q, i)[1] for i in range(len(q.inp["heads"]))])
dfn(MT + "attentionBlock", "near_identity", TR, lambda q: _entries(_block(q)))
thm(MT + "norm_attentionBlock_le", "near_identity", TR, (("hA", "heads_convex_outputs"),), lambda q: _bound(q, False))
thm(MT + "near_identity", "near_identity", TR, (("hA", "heads_convex_outputs"), ("hM", "M_linear_growth")),
    lambda q: _bound(q, True))


# -- Proposition 3 (values scaled by √n, the common factor 1/√n of qkvScore and homForm) ----------

def _qkv(q: Ctx):
    """(Q, K, positions P, tokens X, α) of a one-head input with positions."""
    h = _single(q, True)
    if "positions" not in q.inp or "W_Q" not in h:
        raise NotEvaluable("Proposition 3 needs a QKV head and positions")
    X, P = _X(q), ratmat(q.inp["positions"])
    al = [rat(a) for a in q.inp.get("alpha", ["1"] * X.nrows())]
    require(P.nrows() == len(al) == X.nrows() and P.ncols() == X.ncols(), "input", "positions ℓ×N, alpha of length ℓ")
    return _mat(q, h["W_Q"]), _mat(q, h["W_K"]), P, X, al


def _col(M: fmpq_mat, i: int, extra=None) -> fmpq_mat:
    """Row i of M as a column, with ``extra`` appended (a point of C × ℝ)."""
    return fmpq_mat([[M[i, c]] for c in range(M.ncols())] + ([[extra]] if extra is not None else []))


def _hat(K: fmpq_mat, p: fmpq_mat) -> fmpq_mat:
    """[K | K p]: (u, α) ↦ K(u + αp) (Lean ``homMap``)."""
    Kp = K * p
    return fmpq_mat([[K[r, c] for c in range(K.ncols())] + [Kp[r, 0]] for r in range(K.nrows())])


def _homform(q: Ctx, m: int, j: int) -> fmpq_mat:
    """√n·homForm_{m,j}: ((u,α),(v,β)) ↦ (u,α)ᵀ [K|Kp_j]ᵀ [Q|Qp_m] (v,β)."""
    Q, K, P, _, _ = _qkv(q)
    return _hat(K, _col(P, j)).transpose() * _hat(Q, _col(P, m))


def _four_terms(q: Ctx, m: int, j: int) -> fmpq_mat:
    """√n times homForm_apply's right side ⟨Qv,Ku⟩ + α⟨Qv,Kp_j⟩ + β⟨Qp_m,Ku⟩ + αβ⟨Qp_m,Kp_j⟩ as a matrix."""
    Q, K, P, _, _ = _qkv(q)
    G, pm, pj = K.transpose() * Q, _col(P, m), _col(P, j)
    top, bot, corner = G * pm, pj.transpose() * G, (pj.transpose() * G * pm)[0, 0]
    n = G.nrows()
    return fmpq_mat([[G[r, c] for c in range(n)] + [top[r, 0]] for r in range(n)] + [[bot[0, c] for c in range(n)] + [corner]])


def _scaled(q: Ctx, x):
    c = _inv_sqrt(_qkv(q)[0].nrows())
    if isinstance(c, fmpq):
        return x * c
    with ctx.workprec(PREC):
        return [[arb(x[r, s]) * c for s in range(x.ncols())] for r in range(x.nrows())] if isinstance(x, fmpq_mat) else arb(x) * c


def _qkv_scores(q: Ctx, X: fmpq_mat) -> list[list[fmpq]]:
    """√n·qkvScore(x_0..x_m)_j = ⟨Q(x_m + p_m), K(x_j + p_j)⟩ for every m and j ≤ m."""
    Q, K, P, _, _ = _qkv(q)
    Y = X + P
    return [[((Q * _col(Y, m)).transpose() * (K * _col(Y, j)))[0, 0] for j in range(m + 1)] for m in range(X.nrows())]


def _hom_scores(q: Ctx, alpha=None) -> list[list[fmpq]]:
    """√n·homScore(y_0..y_m)_j = homForm_{m,j}(y_j, y_m) at y_i = (x_i, α_i)."""
    _, _, _, X, al = _qkv(q)
    y = [_col(X, i, (alpha or al)[i]) for i in range(X.nrows())]
    return [[(y[j].transpose() * _homform(q, m, j) * y[m])[0, 0] for j in range(m + 1)] for m in range(len(y))]


def _pairs(q: Ctx) -> list[tuple[int, int]]:
    return [(m, j) for m in range(_X(q).nrows()) for j in range(m + 1)]


def _poly_bilinear(q: Ctx) -> bool:
    """y ↦ B(y_j, y_m) is the polynomial Σ_rs B_rs y_{j,r} y_{m,s}: its value at the input's y is B's."""
    _, _, _, X, al = _qkv(q)
    y = [[X[i, c] for c in range(X.ncols())] + [al[i]] for i in range(X.nrows())]
    return all(sum((B[r, s] * y[j][r] * y[m][s] for r in range(B.nrows()) for s in range(B.ncols())), fmpq(0))
               == (_col(fmpq_mat([y[j]]), 0).transpose() * B * _col(fmpq_mat([y[m]]), 0))[0, 0]
               for m, j in _pairs(q) for B in [_homform(q, m, j)])


def _ha(q: Ctx) -> bool:
    """a_m is an attention function with the QKV scores: one causal softmax head without biases and
    with scale 1/√n, or causal fixed weights in the simplex (the gradient of a linear potential)."""
    hs = q.inp["heads"]
    if len(hs) != 1 or not hs[0].get("causal", False):
        return False
    return _weights(q, 0)[1] if "weights" in hs[0] else not any(k in hs[0] for k in ("b_Q", "b_K", "scale"))


def _dehom(q: Ctx) -> fmpq_mat:
    _, _, P, X, al = _qkv(q)
    return fmpq_mat([[X[i, c] + (al[i] - 1) * P[i, c] for c in range(X.ncols())] for i in range(X.nrows())])


predicate("qkv_attention_functions", _ha)
dfn(MT + "qkvScore", Q3, TR, lambda q: [[_scaled(q, s) for s in r] for r in _qkv_scores(q, _X(q))])
dfn(MT + "homForm", Q3, TR, lambda q: [_scaled(q, _homform(q, m, j)) for m, j in _pairs(q)])
thm(MT + "homForm_apply", Q3, TR, (), lambda q: all(_homform(q, m, j) == _four_terms(q, m, j) for m, j in _pairs(q)))
dfn(MT + "homScore", Q3, TR, lambda q: [[_scaled(q, s) for s in r] for r in _hom_scores(q)])
dfn(MT + "dehom", Q3, TR, _dehom)
thm(MT + "homScore_eq", Q3, TR, (), lambda q: _hom_scores(q) == _qkv_scores(q, _dehom(q)))
thm(MT + "isPolyFun_bilinear", Q3, TR, (), _poly_bilinear)
thm(MT + Q3, Q3, TR, (("ha", "qkv_attention_functions"),),
    lambda q: _hom_scores(q, [fmpq(1)] * _X(q).nrows()) == _qkv_scores(q, _X(q)))


# -- the input kinds of this section: their Lean types (the well-formedness pass, kernel/wellformed.py)


@kind("attention_function")
def _wf_attention_function(i: dict) -> Args:
    """σ : C^k → ℝ^k (k scores), w : C^k → ℝ^k (k weights), φ : ℝ^k → ℝ."""
    k = i["k"]
    require(len(i["scores"]) == k, "input", f"scores: k = {k} expressions are needed")
    pot, wts = i["potential"], i["weights"]
    if "quadratic" in pot:
        Q = square(pot["quadratic"]["Q"], "Q", k)
        require(Q == Q.transpose(), "input", "the quadratic potential's Q must be symmetric")
        vector(pot["quadratic"]["b"], "b", k)
    if "softmax" in wts:
        require(len(wts["softmax"]["scores"]) == k, "input", f"softmax scores: k = {k} expressions are needed")
    else:
        require(len(wts["polynomial"]) == k, "input", f"weights: k = {k} expressions are needed")
    return Args(k=k, N=i["N"])


@kind("biaffine")
def _wf_biaffine(i: dict) -> Args:
    N = i["N"]
    a = Args(N=N)
    if "decomposition" in i:
        d = i["decomposition"]
        a["B"], a["L"], a["R"] = square(d["B"], "B", N), vector(d["L"], "L", N), vector(d["R"], "R", N)
        a["D"] = rat(d["D"])
    return a


@kind("transformer")
def _wf_transformer(i: dict) -> Args:
    """Tokens x : C^ℓ (ℓ × N), heads (weights ℓ × ℓ, or W_Q, W_K n × N), value maps
    W_V (d × N), W_O (N × d), M(y) = W_2 act(W_1 y + b_1) + b_2; inline parts checked here,
    tensor parts when read (:func:`shape`)."""
    a = Args()
    if isinstance(i["x"], list):
        X = matrix(i["x"], "x (tokens as rows)")
        a["x"], a["ell"], a["N"] = X, X.nrows(), X.ncols()
    for h, head in enumerate(i["heads"]):
        if "weights" in head and "ell" in a:
            square(head["weights"], f"heads[{h}].weights", a["ell"])
    if "positions" in i and "ell" in a:
        a["positions"] = matrix(i["positions"], "positions", a["ell"], a["N"])
    if "alpha" in i and "ell" in a:
        a["alpha"] = vector(i["alpha"], "alpha", a["ell"])
    return a
