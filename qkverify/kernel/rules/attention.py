"""§1 (Homogenization.lean, BiaffineDecomposition.lean, NearIdentity.lean).

* ``attention_function``: scores σ_j and weights are expressions in ``x{j}_{c}``, read as Lean
  reads them (x/0 = 0, no cancelling of removable singularities: :mod:`..lean_expr`); potentials
  log-sum-exp (τ) or ½sᵀQs + bᵀs.  Decided: polynomial σ, convexity (τ > 0; symPart Q ⪰ 0),
  simplex values (softmax; constant weights), ω = ∇φ∘σ (softmax: σ/τ − ρ/τ' independent of j,
  softmax being injective modulo shifts; quadratic: ω ≡ ½(Q + Qᵀ)σ + b).
* ``biaffine``: P(u, v) as an expression in ``u{a}`` (key) and ``v{b}`` (query), read as Lean does.
* ``transformer``: tokens, heads (softmax over rational scores, or fixed weight rows), value
  maps V_i = W_O,i W_V,i, M(y) = W_2 act(W_1 y + b_1) + b_2, matrices inline or tensors of a
  safetensors ``file``.  Outputs are enclosures; ‖V_i‖ (Euclidean) from the certified roots
  of charpoly((W_OᵀW_O)(W_VW_Vᵀ)); ‖W‖ ≤ tr((WᵀW)^(2^s))^(1/2^(s+1)) for hM; sup norm: row sums."""

from __future__ import annotations

from math import isqrt

from flint import arb, arb_mat, ctx, fmpq, fmpq_mat, fmpq_mpoly_ctx, fmpz_mat

from .. import limits
from .. import weights as W
from ..derive import PREC, Ctx
from ..jsonio import Invalid, Undecided, rat, ratmat, require
from ..lean_expr import Node, equals_everywhere, lean_eval, polynomial_everywhere, subst, to_tree
from ..table import MT, NotEvaluable, dfn, predicate, thm
from ..wellformed import Args, kind, matrix, square, vector

AF, BI, TR, Q3 = ("attention_function",), ("biaffine",), ("transformer",), "qkv_homogenizes_to_bilinear"
NORM_PREC = 64  # bits of the trace-power bound of ‖W_1‖, ‖W_2‖ (hM)


def _psd(X: fmpq_mat) -> bool:
    """Symmetric X ⪰ 0: no sign change in charpoly(−x) (real-rooted, so Descartes is exact)."""
    cs = [c if i % 2 == 0 else -c for i, c in enumerate(limits.for_charpoly(X).numer_denom()[0].charpoly().coeffs())]
    nz = [c for c in cs if c != 0]
    return all((a > 0) == (b > 0) for a, b in zip(nz, nz[1:]))


# -- Definitions 1 and 2, Lemma 1: expressions read as Lean reads them (x/0 = 0, kernel/lean_expr.py) --------

def _tri(values) -> bool | None:
    values = list(values)
    if False in values:
        return False
    return None if None in values else True


def _lean_polys(q: Ctx, key: str, texts: list[str], names: list[str]) -> list:
    """[(is a polynomial on all of ℝⁿ: True / False / None, that polynomial)] per expression."""
    def build():
        out = []
        for t in texts:
            try:
                out.append(polynomial_everywhere(t, names))
            except (ValueError, SyntaxError) as err:
                raise Invalid("input", f"{t[:40]!r}: {err}") from None
        return out

    return q.memo(("lp", key), build)


def _xnames(q: Ctx) -> list[str]:
    return [f"x{j}_{c}" for j in range(q.inp["k"]) for c in range(q.inp["N"])]


def _fns(q: Ctx, key: str, texts: list[str]) -> list:
    require(len(texts) == q.inp["k"], "input", f"{key}: k expressions are needed")
    return _lean_polys(q, key, texts, _xnames(q))


def _is_attention_function(q: Ctx) -> bool:
    """The fields of IsAttentionFunction (a = Σ ω_j x_j and φ's smoothness hold by the input's form),
    the functions read with Lean's x/0 = 0: σ polynomial; φ convex (log-sum-exp: τ > 0 or k = 1;
    quadratic ½sᵀQs + bᵀs: symPart Q ⪰ 0); ω smooth when its scores (weights) are polynomials; ω in
    the simplex (softmax: always; polynomial weights: constants in the simplex, a nonconstant
    polynomial being unbounded); ω = ∇φ∘σ (log-sum-exp with softmax: σ/τ − ρ/τ' independent of j,
    softmax being injective modulo shifts; quadratic: ω ≡ ½(Q + Qᵀ)σ + b, false when σ is a
    polynomial and ω is not).  A field outside these cases is undecided."""
    inp, k = q.inp, q.inp["k"]
    sig, pot, wts = _fns(q, "scores", inp["scores"]), inp["potential"], inp["weights"]
    poly_sig = _tri(ok for ok, _ in sig)
    f = [poly_sig]
    if "log_sum_exp" in pot:
        tau = rat(pot["log_sum_exp"])
        require(tau != 0, "input", "the temperature τ must be nonzero")
        f.append(tau > 0 or k == 1)
    elif "quadratic" in pot:
        Qm, b = ratmat(pot["quadratic"]["Q"]), [rat(x) for x in pot["quadratic"]["b"]]
        require(Qm.nrows() == Qm.ncols() == len(b) == k, "input", "Q is k×k, b of length k")
        Qs = (Qm + Qm.transpose()) / 2
        f.append(_psd(Qs))
    else:  # a potential given as an expression: not decided by the kernel
        f.append(None)
    grad = None
    if "softmax" in wts:
        rho, t2 = _fns(q, "softmax", wts["softmax"]["scores"]), rat(wts["softmax"]["tau"])
        require(t2 != 0, "input", "the weights' temperature must be nonzero")
        rho_poly = _tri(ok for ok, _ in rho)
        f.append(True if rho_poly else None)  # smooth ω and a
        if "log_sum_exp" in pot and poly_sig and rho_poly:  # σ/τ − ρ/τ' (times ττ') must not depend on j
            d = [s_[1] * t2 - r[1] * tau for s_, r in zip(sig, rho)]
            grad = all(x == d[0] for x in d)
    else:
        w = _fns(q, "polynomial", wts["polynomial"])
        w_poly = _tri(ok for ok, _ in w)
        f.append(True if w_poly else None)
        if w_poly:
            vals = [x[1].leading_coefficient() if x[1].is_constant() and not x[1].is_zero() else fmpq(0) for x in w]
            f.append(all(x[1].is_constant() for x in w) and min(vals) >= 0 and sum(vals) == 1)
        else:
            f.append(None)
        if "quadratic" in pot:
            if w_poly and poly_sig:
                grad = all(w[j][1] == sum((sig[i][1] * Qs[j, i] for i in range(k)), sig[0][1] * 0 + b[j])
                           for j in range(k))
            elif w_poly is False and poly_sig:
                grad = False
    f.append(grad)
    if False in f:
        return False
    if None in f:
        raise Undecided("a field of IsAttentionFunction is outside what the kernel decides for these families")
    return True


def _is_poly_fun(q: Ctx) -> list:
    """IsPolyFun σ_j for each score, with Lean's x/0 = 0 (undecided when a denominator of degree ≥ 2
    with real zeros is left)."""
    dec = [ok for ok, _ in _fns(q, "scores", q.inp["scores"])]
    if None in dec:
        raise Undecided("a score has a denominator of degree ≥ 2 with real zeros: Lean's x/0 = 0 there is not decided")
    return dec


def _bilinear(q: Ctx) -> bool:
    """σ_j = B_j(x_j, x_m) (m = k − 1) with σ_j read as Lean reads it: σ_j a polynomial whose every
    monomial is x_{j,a}·x_{m,b} (x_{m,a}·x_{m,b} for j = m)."""
    k, N = q.inp["k"], q.inp["N"]
    fns = _fns(q, "scores", q.inp["scores"])
    ok = _tri(ok for ok, _ in fns)
    if ok is None:
        raise Undecided("a score has a denominator of degree ≥ 2 with real zeros: Lean's x/0 = 0 there is not decided")
    if not ok:
        return False
    for j, (_, p) in enumerate(fns):
        for e in p.monoms():
            blk = [sum(e[i * N:(i + 1) * N]) for i in range(k)]
            if sum(blk) != 2 or blk[k - 1] != (2 if j == k - 1 else 1) or (j < k - 1 and blk[j] != 1):
                return False
    return True


dfn(MT + "IsPolyFun", "IsAttentionFunction", AF, _is_poly_fun)
dfn(MT + "IsAttentionFunction", "IsAttentionFunction", AF, _is_attention_function)
dfn(MT + "IsBilinearScore", "IsBilinearScore", AF, _bilinear)


# -- Lemma 1 ----------------------------------------------------------------------------------

def _uv(N: int) -> list[str]:
    return [f"u{a}" for a in range(N)] + [f"v{b}" for b in range(N)]


def _lemma1(q: Ctx) -> dict:
    """P as Lean reads it: its tree, whether it is a polynomial on all of ℝ^(2N) (True / False /
    None) with that polynomial p, and whether p has bidegree ≤ (1, 1)."""
    def build():
        N = q.inp["N"]
        names = _uv(N)
        try:
            tree = to_tree(q.inp["P"], names)
        except (ValueError, SyntaxError) as err:
            raise Invalid("input", f"P: {err}") from None
        ok, p = polynomial_everywhere(tree, names)
        bid = ok is not False and all(sum(e[:N]) <= 1 and sum(e[N:]) <= 1 for e in p.monoms())
        return {"tree": tree, "names": names, "ok": ok, "p": p, "N": N,
                "bidegree": False if not bid else (None if ok is None else True)}

    return q.memo("lemma1", build)


def _bidegree(q: Ctx) -> bool:
    """IsPolyBidegreeLeOneOne b P: ∃ p of bidegree ≤ (1, 1) with P = p everywhere (Lean's x/0 = 0, no
    cancelling of removable singularities: P must be its reduced quotient on the zero sets of its
    denominators too)."""
    b = _lemma1(q)["bidegree"]
    if b is None:
        raise Undecided("P has a denominator of degree ≥ 2 with real zeros: Lean's x/0 = 0 there is not decided")
    return b


def _given(q: Ctx) -> tuple:
    """The input's B, L, R, D as polynomials in u, v."""
    if "decomposition" not in q.inp:
        raise NotEvaluable("no decomposition is given")
    m = _lemma1(q)
    N, C = m["N"], fmpq_mpoly_ctx.get(tuple(m["names"]), "lex")
    dec, g = q.inp["decomposition"], C.gens()
    Bm, L, R = ratmat(dec["B"]), [rat(x) for x in dec["L"]], [rat(x) for x in dec["R"]]
    require(Bm.nrows() == Bm.ncols() == len(L) == len(R) == N, "input", "B is N×N, L and R have length N")
    z = C.constant(0)
    return (sum((Bm[a, b] * g[a] * g[N + b] for a in range(N) for b in range(N)), z), sum((L[a] * g[a] for a in range(N)), z),
            sum((R[b] * g[N + b] for b in range(N)), z), C.constant(rat(dec["D"])))


def _h(q: Ctx) -> bool:
    """∀ u v, P(u, v) = B(u, v) + L(u) + R(v) + D for the given four (binder ``h``), P read with
    Lean's x/0 = 0; no decomposition given: false (there is no B, L, R, D to state it of)."""
    if "decomposition" not in q.inp:
        return False
    m = _lemma1(q)
    r = equals_everywhere(m["tree"], m["names"], sum(_given(q), _given(q)[3] * 0))
    if r is None:
        raise Undecided("P has a denominator of degree ≥ 2 with real zeros")
    return r


def _formulas_agree(q: Ctx, B, Lu, Rv, D) -> bool | None:
    """D = P(0,0), L(u) = P(u,0) − P(0,0), R(v) = P(0,v) − P(0,0), B(u,v) = P(u,v) − P(u,0) − P(0,v) + P(0,0)
    for the polynomials B, L, R, D, each an identity of Lean functions on all of ℝ^(2N)."""
    m = _lemma1(q)
    N, t, names = m["N"], m["tree"], m["names"]
    zero = Node("num", value=0)
    t_u0 = subst(t, {f"v{b}": zero for b in range(N)})
    t_0v = subst(t, {f"u{a}": zero for a in range(N)})
    P00 = lean_eval(t, {n: fmpq(0) for n in names})
    return _tri([D == D.context().constant(P00),
                 equals_everywhere(t_u0, names, Lu + P00),
                 equals_everywhere(t_0v, names, Rv + P00),
                 equals_everywhere(Node("sub", (Node("sub", (t, t_u0)), t_0v)), names, B - P00)])


def _components(q: Ctx) -> bool:
    r = _formulas_agree(q, *_given(q))
    if r is None:
        raise Undecided("a denominator of degree ≥ 2 with real zeros is left")
    return r


def _unique(q: Ctx) -> bool:
    """∃! (B, L, R, D) with P = B + L + R + D, each given by the formulas.  P a polynomial p of
    bidegree ≤ (1, 1): its coefficients read monomial by monomial are a decomposition and the only
    one (a decomposition's coefficients are p's), and they must agree with the formulas evaluated on
    P.  Otherwise no decomposition exists (B + L + R + D is a polynomial of bidegree ≤ (1, 1))."""
    m = _lemma1(q)
    b = _bidegree(q)
    if not b:
        return False
    p, N = m["p"], m["N"]
    C = p.context()
    cls = [(1, 1), (1, 0), (0, 1), (0, 0)]
    read = [sum((C.from_dict({e: c}) for e, c in p.to_dict().items() if (min(sum(e[:N]), 1), min(sum(e[N:]), 1)) == t),
                C.constant(0)) for t in cls]
    r = _formulas_agree(q, *read)
    if r is None:
        raise Undecided("a denominator of degree ≥ 2 with real zeros is left")
    return sum(read, C.constant(0)) == p and r


predicate("bidegree_le_one_one", _bidegree)
predicate("biaffine_decomposition_holds", _h)
dfn(MT + "IsPolyBidegreeLeOneOne", "biaffine_decomposition", BI, _bidegree)
thm(MT + "biaffine_components", "biaffine_decomposition", BI, (("h", "biaffine_decomposition_holds"),), _components)
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


#: hidden widths up to which the activation patterns of a ReLU network are enumerated for hM (the producer's)
MAX_PATTERNS_WIDTH = 12


def _vec_or_none(q: Ctx, spec) -> fmpq_mat | None:
    return _mat(q, spec) if spec is not None else None


def _M_exact(q: Ctx, y: fmpq_mat) -> fmpq_mat:
    """M(y) = W₂ act(W₁y + b₁) + b₂ exactly for a row vector y (relu or identity)."""
    m = q.inp["M"]
    H = y * _mat(q, m["W_1"]).transpose()
    b1 = _vec_or_none(q, m.get("b_1"))
    if b1 is not None:
        H = H + b1
    if m["act"] == "relu":
        H = fmpq_mat([[max(H[0, c], fmpq(0)) for c in range(H.ncols())]])
    out = H * _mat(q, m["W_2"]).transpose()
    b2 = _vec_or_none(q, m.get("b_2"))
    return out + b2 if b2 is not None else out


def _pattern_bounded(q: Ctx, A: fmpq_mat, L: fmpq) -> bool:
    """‖A‖ ≤ L in the input's norm, exactly: sup norm by row sums; Euclidean by L²I − AᵀA ⪰ 0."""
    N = A.ncols()
    if q.inp["norm"] == "linf":
        return all(sum((abs(A[r, c]) for c in range(N)), fmpq(0)) <= L for r in range(A.nrows()))
    return _psd(fmpq_mat(N, N, [L * L * int(i == j) for i in range(N) for j in range(N)]) - A.transpose() * A)


def _exceeds(q: Ctx, y: fmpq_mat, L: fmpq) -> bool:
    """‖M y‖ > L‖y‖: exactly for relu / identity (squares for l2, L ≥ 0), by enclosures for gelu."""
    if q.inp["M"]["act"] in ("relu", "identity"):
        My = _M_exact(q, y)
        if q.inp["norm"] == "linf":
            return max(abs(x) for x in My.entries()) > L * max(abs(x) for x in y.entries())
        return sum((x * x for x in My.entries()), fmpq(0)) > L * L * sum((x * x for x in y.entries()), fmpq(0))
    q.certified = True
    with ctx.workprec(PREC):
        return bool(_row_norm(q, _M(q, arb_mat(y)), 0) > arb(L) * _row_norm(q, y, 0))


def _hM(q: Ctx) -> bool:
    """∀ y, ‖M y‖ ≤ L‖y‖ (binder ``hM``) as Lean states it, M(y) = W₂ act(W₁y + b₁) + b₂:

    * false when L < 0 (C ≠ 0), when M(0) ≠ 0 (y = 0; exactly, or by an enclosure for gelu with a
      bias), or at the ``counterexample`` witness y (‖M y‖ > L‖y‖, evaluated here);
    * true, M positively homogeneous (relu / identity, b₁ = b₂ = 0, width ≤ 12), when every
      activation pattern's A_σ = W₂ diag(σ) W₁ has ‖A_σ‖ ≤ L exactly (M(y) = A_σ y on the cone of
      σ; e.g. M(y) = relu(y) + relu(−y) = |y| with L = 1);
    * true when M(0) = 0 exactly and L ≥ ‖W₂‖·‖W₁‖ (certified bounds; |act t| ≤ |t| for relu, gelu
      without b₁, identity, and relu is 1-Lipschitz with b₁);
    * otherwise undecided (named)."""
    m, L = q.inp["M"], rat(q.inp["L"])
    if L < 0:
        return False
    if m is None:
        return True
    N = _X(q).ncols()
    W1, W2 = _mat(q, m["W_1"]), _mat(q, m["W_2"])
    b1, b2 = _vec_or_none(q, m.get("b_1")), _vec_or_none(q, m.get("b_2"))
    act = m["act"]
    no_b1, no_b2 = b1 is None or not any(b1.entries()), b2 is None or not any(b2.entries())
    m0_zero = True
    if act in ("relu", "identity") or no_b1:  # gelu(0) = 0: with b₁ = 0, M(0) = b₂
        m0 = _M_exact(q, fmpq_mat(1, N)) if act != "gelu" else (b2 if b2 is not None else fmpq_mat(1, W2.nrows()))
        if any(m0.entries()):
            return False
    else:
        with ctx.workprec(PREC):
            z = _M(q, arb_mat(1, N))
        if any(not z[0, c].contains(0) for c in range(z.ncols())):
            q.certified = True
            return False
        m0_zero = False  # gelu(b₁) is transcendental: M(0) = 0 is not decided exactly
    width = W1.nrows()
    if act in ("relu", "identity") and width <= MAX_PATTERNS_WIDTH and no_b1 and no_b2:
        if act == "identity":
            pats = [W2 * W1]
        else:
            pats = [W2 * fmpq_mat(width, width, [int(i == j and (sig >> i) & 1) for i in range(width)
                                                 for j in range(width)]) * W1 for sig in range(2 ** width)]
        if all(_pattern_bounded(q, A, L) for A in pats):
            return True
    if q.has("counterexample", "hM"):
        y = q.fact("counterexample", "hM").y
        require(len(y) == N, "counterexample witness of hM", f"y must have N = {N} entries")
        require(_exceeds(q, fmpq_mat([list(y)]), L), "counterexample witness of hM", "‖M y‖ ≤ L‖y‖ at the stated y")
        return False
    if m0_zero:
        with ctx.workprec(PREC):
            g = _norm_upper(q, W1) * _norm_upper(q, W2)
            if g <= arb(L):
                q.certified = True
                return True
    raise Undecided(f"‖M y‖ ≤ {L}·‖y‖ for every y is neither shown nor refuted (no counterexample is given; the "
                    "bounds do not reach L)")


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
def _homogenises(q: Ctx) -> bool:
    """T̂(lift x) = lift(T(x)) through the scores: the homogenised scores of the lifted tokens are the
    QKV scores.  Not evaluated when the head's scores are not qkvScore (a bias, another scale)."""
    if not _ha(q):
        raise NotEvaluable("the heads' scores are not qkvScore: their homogenisation is not evaluated")
    return _hom_scores(q, [fmpq(1)] * _X(q).nrows()) == _qkv_scores(q, _X(q))


thm(MT + Q3, Q3, TR, (("ha", "qkv_attention_functions"),), _homogenises)


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
