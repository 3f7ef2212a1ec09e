"""§1 (Homogenization.lean, BiaffineDecomposition.lean, NearIdentity.lean).

* ``attention_function``: scores σ_j and weights as arithmetic expressions in the
  coordinates ``x{j}_{c}``, read into exact rational functions; the potential is
  log-sum-exp with temperature τ or quadratic ½sᵀQs + bᵀs.  Decided: polynomial
  σ (lowest-terms denominator constant), convexity (τ > 0; Q ⪰ 0 by the signs of
  its characteristic polynomial), simplex values (softmax; constant polynomial
  weights), ω = ∇φ∘σ (softmax: σ/τ − ρ/τ' independent of j, since softmax is
  shift-invariant and injective modulo shifts; quadratic: ω ≡ Qσ + b).
* ``biaffine``: P(u, v) as an expression in ``u{a}``, ``v{b}``.
* ``transformer``: tokens, heads (softmax over rational scores, or fixed weight
  rows), value maps V_i = W_O,i W_V,i, a network M(y) = W_2 act(W_1 y + b_1) + b_2;
  matrices inline or named tensors of a safetensors ``file``.  Outputs are
  enclosures at PREC bits; ‖V_i‖ (Euclidean) from the certified roots of the
  characteristic polynomial of (W_Oᵀ W_O)(W_V W_Vᵀ), ‖W‖ for hM from
  tr((WᵀW)^(2^s))^(1/2^(s+1)) ≥ ‖W‖ (s = ``squarings``); sup norm: row sums."""

from __future__ import annotations

import ast
from math import isqrt
from pathlib import Path

from flint import arb, arb_mat, ctx, fmpq, fmpq_mat, fmpq_mpoly_ctx, fmpz_mat

from .. import weights as W
from ..derive import PREC, Ctx
from ..jsonio import Invalid, Undecided, rat, ratmat, require
from ..table import MT, NotEvaluable, dfn, predicate, thm

AF, BI, TR = ("attention_function",), ("biaffine",), ("transformer",)
Q3 = "qkv_homogenizes_to_bilinear"
#: bits of the trace-power bound of ‖W_1‖, ‖W_2‖ (the hM decision)
NORM_PREC = 64


# -- exact rational functions of an expression -------------------------------------

def _bin(op, a, b):
    (p, q), (r, s) = a, b
    if isinstance(op, ast.Add):
        return p * s + r * q, q * s
    if isinstance(op, ast.Sub):
        return p * s - r * q, q * s
    if isinstance(op, ast.Mult):
        return p * r, q * s
    require(isinstance(op, ast.Div) and not r.is_zero(), "input", "division by zero in an expression")
    return p * s, q * r


def rational_function(text: str, C: fmpq_mpoly_ctx):
    """(P, Q) in lowest terms with Q monic, P/Q the value of ``text`` (integers, the
    context's variable names, + − * / and ** with an integer exponent |e| ≤ 64)."""
    names, one = dict(zip(C.names(), C.gens())), C.constant(1)

    def ev(n):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow):
            a, e = ev(n.left), n.right.value if isinstance(n.right, ast.Constant) else None
            require(type(e) is int and abs(e) <= 64 and (e >= 0 or not a[0].is_zero()), "input", "bad exponent")
            return (a[0] ** e, a[1] ** e) if e >= 0 else (a[1] ** -e, a[0] ** -e)
        if isinstance(n, ast.BinOp):
            return _bin(n.op, ev(n.left), ev(n.right))
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
    p, q = p / g, q / g
    c = q.leading_coefficient()
    return p / c, q / c


def _eq(a, b) -> bool:
    return a[0] * b[1] == b[0] * a[1]


def _psd(X: fmpq_mat) -> bool:
    """A rational symmetric X is ⪰ 0: no sign change in charpoly(−x) (real-rooted: Descartes is exact)."""
    num, _ = X.numer_denom()
    cs = [c if i % 2 == 0 else -c for i, c in enumerate(num.charpoly().coeffs())]
    nz = [c for c in cs if c != 0]
    return all((a > 0) == (b > 0) for a, b in zip(nz, nz[1:]))


# -- Definitions 1 and 2 -------------------------------------------------------------

def _xs(q: Ctx) -> fmpq_mpoly_ctx:
    k, N = q.inp["k"], q.inp["N"]
    return fmpq_mpoly_ctx.get(tuple(f"x{j}_{c}" for j in range(k) for c in range(N)), "lex")


def _fns(q: Ctx, key: str, texts: list[str]) -> list:
    require(len(texts) == q.inp["k"], "input", f"{key}: k expressions are needed")
    return q.memo(("fn", key), lambda: [rational_function(t, _xs(q)) for t in texts])


def _fields(q: Ctx) -> dict:
    """The eight fields of IsAttentionFunction (None: not decided by the kernel)."""
    inp, k = q.inp, q.inp["k"]
    sig = _fns(q, "scores", inp["scores"])
    pot, wts = inp["potential"], inp["weights"]
    f = {"contDiff_φ": True, "output": True, "poly_σ": all(s[1].is_constant() for s in sig), "grad": None}
    if "log_sum_exp" in pot:
        tau = rat(pot["log_sum_exp"])
        require(tau != 0, "input", "the temperature τ must be nonzero")
        f["convexOn_φ"] = tau > 0 or k == 1
    else:
        Qm, b = ratmat(pot["quadratic"]["Q"]), [rat(x) for x in pot["quadratic"]["b"]]
        require(Qm.nrows() == Qm.ncols() == len(b) == k and Qm == Qm.transpose(), "input", "Q must be symmetric k×k, b of length k")
        f["convexOn_φ"] = _psd(Qm)
    if "softmax" in wts:
        rho, t2 = _fns(q, "softmax", wts["softmax"]["scores"]), rat(wts["softmax"]["tau"])
        require(t2 != 0, "input", "the weights' temperature must be nonzero")
        f["mem_stdSimplex"] = True
        f["contDiff_w"] = f["contDiff_a"] = all(r[1].is_constant() for r in rho) or None
        if "log_sum_exp" in pot:  # σ/τ − ρ/τ' (times ττ') must not depend on j
            d = [(s[0] * r[1] * t2 - r[0] * s[1] * tau, s[1] * r[1]) for s, r in zip(sig, rho)]
            f["grad"] = all(_eq(x, d[0]) for x in d)
    else:
        w = _fns(q, "polynomial", wts["polynomial"])
        f["contDiff_w"] = f["contDiff_a"] = all(x[1].is_constant() for x in w) or None
        const = all(x[0].is_constant() and x[1].is_constant() for x in w)
        vals = [x[0].leading_coefficient() / x[1].leading_coefficient() if not x[0].is_zero() else fmpq(0) for x in w]
        f["mem_stdSimplex"] = const and all(v >= 0 for v in vals) and sum(vals) == 1
        if "quadratic" in pot:
            one = _xs(q).constant(1)
            for j in range(k):
                acc = (_xs(q).constant(b[j]), one)
                for i in range(k):
                    acc = _bin(ast.Add(), acc, (sig[i][0] * Qm[j, i], sig[i][1]))
                if not _eq(acc, w[j]):
                    f["grad"] = False
                    break
            else:
                f["grad"] = True
    return f


def _is_attention_function(q: Ctx) -> bool:
    vals = list(_fields(q).values())
    if False in vals:
        return False
    if None in vals:
        raise Undecided("a field of IsAttentionFunction is outside what the kernel decides for these families")
    return True


def _bilinear(q: Ctx) -> bool:
    """σ_j = B_j(x_j, x_m): every monomial is x_{j,a}·x_{m,b} (m = k − 1)."""
    k, N = q.inp["k"], q.inp["N"]
    for j, (p, d) in enumerate(_fns(q, "scores", q.inp["scores"])):
        if not d.is_constant():
            return False
        for e in p.monoms():
            blk = [sum(e[i * N:(i + 1) * N]) for i in range(k)]
            if sum(blk) != 2 or blk[k - 1] != (2 if j == k - 1 else 1) or (j < k - 1 and blk[j] != 1):
                return False
    return True


dfn(MT + "IsPolyFun", "IsAttentionFunction", AF, lambda q: [s[1].is_constant() for s in _fns(q, "scores", q.inp["scores"])])
dfn(MT + "IsAttentionFunction", "IsAttentionFunction", AF, _is_attention_function)
dfn(MT + "IsBilinearScore", "IsBilinearScore", AF, _bilinear)


# -- Lemma 1 -------------------------------------------------------------------------

def _P(q: Ctx):
    """(P as a polynomial or None, the variable context, N)."""
    N = q.inp["N"]
    C = fmpq_mpoly_ctx.get(tuple(f"u{a}" for a in range(N)) + tuple(f"v{b}" for b in range(N)), "lex")
    p, d = q.memo("P", lambda: rational_function(q.inp["P"], C))
    return (p / d.leading_coefficient() if d.is_constant() else None), C, N


def _bidegree(q: Ctx) -> bool:
    p, _, N = _P(q)
    return p is not None and all(sum(e[:N]) <= 1 and sum(e[N:]) <= 1 for e in p.monoms())


def _formulas(q: Ctx) -> tuple:
    """(B, L, R, D) by the formulas D = P(0,0), L = P(u,0) − D, R = P(0,v) − D, B = P − P(u,0) − P(0,v) + D."""
    p, C, N = _P(q)
    us, vs = C.names()[:N], C.names()[N:]
    pu0, p0v = p.subs({v: 0 for v in vs}), p.subs({u: 0 for u in us})
    d = pu0.subs({u: 0 for u in us})
    return p - pu0 - p0v + d, pu0 - d, p0v - d, d


def _given(q: Ctx) -> tuple:
    if "decomposition" not in q.inp:
        raise NotEvaluable("no decomposition is given")
    dec, (_, C, N) = q.inp["decomposition"], _P(q)
    g = C.gens()
    Bm, L, R = ratmat(dec["B"]), [rat(x) for x in dec["L"]], [rat(x) for x in dec["R"]]
    require(Bm.nrows() == Bm.ncols() == len(L) == len(R) == N, "input", "B is N×N, L and R have length N")
    B = sum((Bm[a, b] * g[a] * g[N + b] for a in range(N) for b in range(N)), C.constant(0))
    return (B, sum((L[a] * g[a] for a in range(N)), C.constant(0)), sum((R[b] * g[N + b] for b in range(N)), C.constant(0)),
            C.constant(rat(dec["D"])))


def _unique(q: Ctx) -> bool:
    """Existence (the formulas give a bilinear B, linear L and R, constant D summing to P) and
    uniqueness (the coefficients read monomial by monomial give the same four)."""
    p, C, N = _P(q)
    parts = _formulas(q)
    cls = lambda e: (sum(e[:N]), sum(e[N:]))  # noqa: E731
    read = [sum((C.from_dict({e: c}) for e, c in p.to_dict().items() if cls(e) == t), C.constant(0))
            for t in ((1, 1), (1, 0), (0, 1), (0, 0))]
    return sum(parts, C.constant(0)) == p and list(parts) == read


predicate("bidegree_le_one_one", _bidegree)
predicate("biaffine_decomposition_holds", lambda q: _P(q)[0] is not None and sum(_given(q), _P(q)[1].constant(0)) == _P(q)[0])
dfn(MT + "IsPolyBidegreeLeOneOne", "biaffine_decomposition", BI, _bidegree)
thm(MT + "biaffine_components", "biaffine_decomposition", BI, (("h", "biaffine_decomposition_holds"),),
    lambda q: _given(q) == _formulas(q))
thm(MT + "biaffine_decomposition", "biaffine_decomposition", BI, (("hP", "bidegree_le_one_one"),), _unique)


# -- the transformer: tokens, heads, value maps, the network ---------------------------

def _file(q: Ctx) -> Path:
    return q.memo("file", lambda: W.find(q.inp["file"], q.inp["sha256"], q.base_dir, q.weights_dirs))


def _mat(q: Ctx, spec) -> fmpq_mat:
    """An inline matrix, or rows/cols [a, b) of a named tensor of the input's file (exact)."""
    if isinstance(spec, list):
        return ratmat(spec)

    def whole():
        Z, e = W.tensor(_file(q), spec["tensor"])
        return Z, (fmpq(2) ** e if e >= 0 else fmpq(1, 2 ** -e))

    def build():
        Z, s = q.memo(("T", spec["tensor"]), whole)
        r = range(*spec.get("rows", (0, Z.nrows())))
        c = range(*spec.get("cols", (0, Z.ncols())))
        require(r.stop <= Z.nrows() and c.stop <= Z.ncols(), "input", f"slice of {spec['tensor']} out of range")
        sub = Z if (len(r), len(c)) == (Z.nrows(), Z.ncols()) else fmpz_mat([[Z[i, j] for j in c] for i in r])
        return fmpq_mat(sub) * s
    return q.memo(("m", repr(spec)), build)


def _vec(q: Ctx, spec) -> fmpq_mat | None:
    """A bias as a 1×n row (None when absent)."""
    if spec is None:
        return None
    return fmpq_mat([[rat(x) for x in spec]]) if isinstance(spec, list) else _mat(q, spec)


def _X(q: Ctx) -> fmpq_mat:
    """Tokens x_0 … x_{ℓ−1} as rows: inline, or sums of rows of embedding tensors."""
    def build():
        x = q.inp["x"]
        if isinstance(x, list):
            return ratmat(x)
        out = None
        for t in x["sum"]:
            Z, e = W.tensor(_file(q), t["tensor"], t["rows"])
            rows = fmpq_mat(Z) * (fmpq(2) ** e if e >= 0 else fmpq(1, 2 ** -e))
            out = rows if out is None else out + rows
        return out
    return q.memo("X", build)


def _scale(h: dict, n: int):
    """The score scale: the head's rational ``scale``, else 1/√n (exact when n is a square)."""
    if "scale" in h:
        return rat(h["scale"])
    r = isqrt(n)
    return fmpq(1, r) if r * r == n else 1 / arb(n).sqrt()


def _weights(q: Ctx, i: int) -> tuple[list[list], bool]:
    """(rows w_k of head i's attention weights, IsAttentionOutput of the head).  Causal heads follow
    Lean's ``head``: position 0 returns x_0, position k weighs x_0 … x_k."""
    def build():
        h, X = q.inp["heads"][i], _X(q)
        ell, causal = X.nrows(), h.get("causal", False)
        keys = [range(k + 1) if causal else range(ell) for k in range(ell)]
        if "weights" in h:
            Wt = ratmat(h["weights"])
            require(Wt.nrows() == Wt.ncols() == ell, "input", "fixed weights must be ℓ×ℓ")
            rows = [[Wt[k, j] if j in keys[k] else fmpq(0) for j in range(ell)] for k in range(ell)]
            require(all(Wt[k, j] == 0 for k in range(ell) for j in range(ell) if j not in keys[k]), "input",
                    "a causal head weighs only x_0 … x_k")
            if causal:
                rows[0] = [fmpq(int(j == 0)) for j in range(ell)]
            return rows, all(all(v >= 0 for v in r) and sum(r) == 1 for r in rows)
        WQ, WK = _mat(q, h["W_Q"]), _mat(q, h["W_K"])
        Xp = X + ratmat(q.inp["positions"]) if "positions" in q.inp else X  # scores of x + p
        Qx, Kx = Xp * WQ.transpose(), Xp * WK.transpose()
        for M, b in ((Qx, _vec(q, h.get("b_Q"))), (Kx, _vec(q, h.get("b_K")))):
            for r in range(ell if b is not None else 0):
                for c in range(M.ncols()):
                    M[r, c] += b[0, c]
        S, c = Kx * Qx.transpose(), _scale(h, WQ.nrows())  # S[j, k] = ⟨k_j, q_k⟩
        rows = []
        for k in range(ell):
            top = max(S[j, k] for j in keys[k])
            e = [(arb(S[j, k] - top) * c).exp() if j in keys[k] else arb(0) for j in range(ell)]
            tot = sum(e, arb(0))
            rows.append([x / tot for x in e])
        return rows, True
    with ctx.workprec(PREC):
        return q.memo(("w", i), build)


def _arb(M: fmpq_mat) -> arb_mat:
    return arb_mat(M)


def _outputs(q: Ctx, i: int) -> arb_mat:
    """A_i(x) (ℓ×N)."""
    rows, _ = _weights(q, i)
    with ctx.workprec(PREC):
        return arb_mat([[arb(v) for v in r] for r in rows]) * _arb(_X(q))


def _block(q: Ctx) -> arb_mat:
    """attentionBlock: row k is Σ_i W_O,i W_V,i A_i(x)_k."""
    def build():
        out = None
        for i, h in enumerate(q.inp["heads"]):
            t = _outputs(q, i) * _arb(_mat(q, h["W_V"]).transpose()) * _arb(_mat(q, h["W_O"]).transpose())
            out = t if out is None else out + t
        return out
    with ctx.workprec(PREC):
        return q.memo("block", build)


def _act(t: arb, kind: str) -> arb:
    if kind == "relu":
        return t.max(arb(0))
    if kind == "gelu":
        return t * (1 + (t / arb(2).sqrt()).erf()) / 2
    return t


def _M(q: Ctx, Y: arb_mat) -> arb_mat:
    """M applied to every row of Y (M = 0 when the input has none)."""
    m = q.inp["M"]
    if m is None:
        return arb_mat(Y.nrows(), Y.ncols())
    with ctx.workprec(PREC):
        H = Y * _arb(_mat(q, m["W_1"]).transpose())
        b1, b2 = _vec(q, m.get("b_1")), _vec(q, m.get("b_2"))
        H = arb_mat([[_act(H[r, c] + (b1[0, c] if b1 is not None else 0), m["act"]) for c in range(H.ncols())]
                     for r in range(H.nrows())])
        out = H * _arb(_mat(q, m["W_2"]).transpose())
        if b2 is not None:
            out = out + arb_mat([[b2[0, c] for c in range(out.ncols())]] * out.nrows())
        return out


def _amax(xs: list[arb]) -> arb:
    """An enclosure of the maximum of enclosed reals."""
    return arb(max(x.lower() for x in xs)).union(arb(max(x.upper() for x in xs)))


def _row_norm(q: Ctx, M, r: int) -> arb:
    """‖row r of M‖ in the input's norm on C."""
    vals = [arb(M[r, c]) for c in range(M.ncols())]
    if q.inp["norm"] == "linf":
        return _amax([abs(x) for x in vals])
    return sum((x * x for x in vals), arb(0)).sqrt()


def _opnorm(q: Ctx, i: int) -> tuple[arb, arb]:
    """Certified lower and upper bounds of ‖W_O,i W_V,i‖ in the input's norm."""
    def build():
        h = q.inp["heads"][i]
        WV, WO = _mat(q, h["W_V"]), _mat(q, h["W_O"])
        if q.inp["norm"] == "linf":
            V = WO * WV
            s = max(sum(abs(V[r, c]) for c in range(V.ncols())) for r in range(V.nrows()))
            return arb(s), arb(s)
        P = (WO.transpose() * WO) * (WV * WV.transpose())
        num, den = P.numer_denom()
        roots = [r.real / den for r, _ in num.charpoly().complex_roots()]
        lo, hi = max(r.lower() for r in roots), max(r.upper() for r in roots)
        return arb(lo).max(arb(0)).sqrt(), arb(hi).max(arb(0)).sqrt()
    with ctx.workprec(PREC):
        return q.memo(("V", i), build)


def _norm_upper(q: Ctx, M: fmpq_mat) -> arb:
    """A certified upper bound of the operator norm of M in the input's norm (Euclidean: at
    NORM_PREC bits, enough for an upper bound)."""
    if q.inp["norm"] == "linf":
        return arb(max(sum(abs(M[r, c]) for c in range(M.ncols())) for r in range(M.nrows())))
    with ctx.workprec(NORM_PREC):
        G = _arb(M.transpose()) * _arb(M) if M.ncols() <= M.nrows() else _arb(M) * _arb(M.transpose())
        logk = arb(0)
        for _ in range(q.inp.get("squarings", 0)):
            t = G.trace()
            require(t > 0, "input", "a zero weight matrix")
            G = (G * (1 / t)) * (G * (1 / t))
            logk = 2 * (logk + t.log())
        return ((logk + G.trace().log()) / (2 * 2 ** q.inp.get("squarings", 0))).exp()


def _hM(q: Ctx) -> bool:
    """∀ y, ‖M y‖ ≤ L‖y‖: false when L < 0 or M(0) ≠ 0; true when L ≥ ‖W_2‖·‖W_1‖ (|act t| ≤ |t|)."""
    m, L = q.inp["M"], rat(q.inp["L"])
    if L < 0:
        return False
    if m is None:
        return True
    with ctx.workprec(PREC):
        z = _M(q, arb_mat(1, _X(q).ncols()))
        if any(not z[0, c].contains(0) for c in range(z.ncols())):
            q.certified = True
            return False
        if any(not z[0, c].is_zero() for c in range(z.ncols())):
            raise Undecided("M(0) is not shown to be 0 or nonzero")
        bound = _norm_upper(q, _mat(q, m["W_1"])) * _norm_upper(q, _mat(q, m["W_2"]))
        q.certified = True
        if bound <= arb(L):
            return True
    raise Undecided("L is below the certified growth bound ‖W_2‖·‖W_1‖: hM is not decided")


def _bound(q: Ctx, with_M: bool) -> bool:
    """‖A(x)_k (+ M(x_k + A(x)_k))‖ ≤ (V (+ L + LV))·max_j ‖x_j‖ for every k, V = Σ‖V_i‖ enclosed."""
    with ctx.workprec(PREC):
        X, A = _X(q), _block(q)
        out = A + _M(q, _arb(X) + A) if with_M else A
        xmax = _amax([_row_norm(q, X, r) for r in range(X.nrows())])
        L = arb(rat(q.inp["L"])) if with_M else arb(0)
        V = [sum((_opnorm(q, i)[s] for i in range(len(q.inp["heads"]))), arb(0)) for s in (0, 1)]
        c = [(L + v + L * v) * xmax for v in V]
        lhs = [_row_norm(q, out, r) for r in range(X.nrows())]
    q.certified = True
    if all(x <= c[0] for x in lhs):
        return True
    if any(x > c[1] for x in lhs):
        return False
    raise Undecided("the two sides of the near-identity bound overlap at the kernel's precision")


def _single(q: Ctx, causal: bool = False) -> dict:
    hs = q.inp["heads"]
    if len(hs) != 1 or (causal and not hs[0].get("causal", False)):
        raise NotEvaluable("the definition is stated for one (causal) head")
    return hs[0]


def _transformer(q: Ctx) -> list:
    _single(q)
    with ctx.workprec(PREC):
        Y = _arb(_X(q)) + _block(q)
        T = Y + _M(q, Y)
    return [[T[r, c] for c in range(T.ncols())] for r in range(T.nrows())]


def _head(q: Ctx) -> list:
    _single(q, True)
    A = _outputs(q, 0)
    return [[A[r, c] for c in range(A.ncols())] for r in range(A.nrows())]


predicate("heads_convex_outputs", lambda q: all(_weights(q, i)[1] for i in range(len(q.inp["heads"]))))
predicate("M_linear_growth", _hM)
dfn(MT + "head", "head", TR, _head)
dfn(MT + "transformer", "transformer", TR, _transformer)
dfn(MT + "IsAttentionOutput", "near_identity", TR, lambda q: [_weights(q, i)[1] for i in range(len(q.inp["heads"]))])
dfn(MT + "attentionBlock", "near_identity", TR,
    lambda q: [[_block(q)[r, c] for c in range(_block(q).ncols())] for r in range(_block(q).nrows())])
thm(MT + "norm_attentionBlock_le", "near_identity", TR, (("hA", "heads_convex_outputs"),), lambda q: _bound(q, False))
thm(MT + "near_identity", "near_identity", TR, (("hA", "heads_convex_outputs"), ("hM", "M_linear_growth")),
    lambda q: _bound(q, True))


# -- Proposition 3: the homogenisation ---------------------------------------------------

def _qkv(q: Ctx):
    """(Q, K, positions P, tokens X, α) of a one-head input with positions."""
    h = _single(q, True)
    if "positions" not in q.inp or "W_Q" not in h:
        raise NotEvaluable("Proposition 3 needs a QKV head and positions")
    X, P = _X(q), ratmat(q.inp["positions"])
    al = [rat(a) for a in q.inp.get("alpha", ["1"] * X.nrows())]
    require(P.nrows() == len(al) == X.nrows() and P.ncols() == X.ncols(), "input", "positions are ℓ×N, alpha has ℓ entries")
    return _mat(q, h["W_Q"]), _mat(q, h["W_K"]), P, X, al


def _row(M: fmpq_mat, i: int) -> fmpq_mat:
    return fmpq_mat([[M[i, c] for c in range(M.ncols())]]).transpose()


def _hat(K: fmpq_mat, p: fmpq_mat) -> fmpq_mat:
    """[K | K p]: u + αe ↦ K(u + αp) (Lean ``homMap``)."""
    Kp = K * p
    return fmpq_mat([[K[r, c] for c in range(K.ncols())] + [Kp[r, 0]] for r in range(K.nrows())])


def _scaled(q: Ctx, x):
    c = _scale({}, _mat(q, _single(q)["W_Q"]).nrows())
    if isinstance(c, fmpq):
        return x * c
    with ctx.workprec(PREC):
        return [[arb(x[r, s]) * c for s in range(x.ncols())] for r in range(x.nrows())] if isinstance(x, fmpq_mat) else arb(x) * c


def _homform(q: Ctx, m: int, j: int) -> fmpq_mat:
    """√n · homForm_{m,j}: ((u,α),(v,β)) ↦ (u,α)ᵀ [K|Kp_j]ᵀ [Q|Qp_m] (v,β)."""
    Q, K, P, _, _ = _qkv(q)
    return _hat(K, _row(P, j)).transpose() * _hat(Q, _row(P, m))


def _four_terms(q: Ctx, m: int, j: int) -> fmpq_mat:
    """√n times the four-term formula of homForm_apply, as a matrix on C × ℝ."""
    Q, K, P, _, _ = _qkv(q)
    G, pm, pj = K.transpose() * Q, _row(P, m), _row(P, j)
    top, bot = G * pm, pj.transpose() * G
    N = G.nrows()
    return fmpq_mat([[G[r, c] for c in range(N)] + [top[r, 0]] for r in range(N)]
                    + [[bot[0, c] for c in range(N)] + [(pj.transpose() * G * pm)[0, 0]]])


def _lifted(q: Ctx, al=None) -> list[fmpq_mat]:
    _, _, _, X, a = _qkv(q)
    return [fmpq_mat([[X[i, c] for c in range(X.ncols())] + [(al or a)[i]]]).transpose() for i in range(X.nrows())]


def _dehom(q: Ctx) -> fmpq_mat:
    _, _, P, X, al = _qkv(q)
    return fmpq_mat([[X[i, c] + (al[i] - 1) * P[i, c] for c in range(X.ncols())] for i in range(X.nrows())])


def _qkv_scores(q: Ctx, X: fmpq_mat) -> list[list[fmpq]]:
    """√n · qkvScore(x_0..x_m)_j for every m and j ≤ m."""
    Q, K, P, _, _ = _qkv(q)
    Y = X + P
    return [[((Q * _row(Y, m)).transpose() * (K * _row(Y, j)))[0, 0] for j in range(m + 1)] for m in range(X.nrows())]


def _hom_scores(q: Ctx, y: list[fmpq_mat]) -> list[list[fmpq]]:
    """√n · homScore(y_0..y_m)_j = homForm_{m,j}(y_j, y_m)."""
    return [[(y[j].transpose() * _homform(q, m, j) * y[m])[0, 0] for j in range(m + 1)] for m in range(len(y))]


def _pairs(q: Ctx) -> list[tuple[int, int]]:
    return [(m, j) for m in range(_X(q).nrows()) for j in range(m + 1)]


def _poly_bilinear(q: Ctx) -> bool:
    """y ↦ B(y_j, y_m) is the polynomial Σ B_rs y_{j,r} y_{m,s}, evaluated at the input's y."""
    y, n1 = _lifted(q), _X(q).ncols() + 1
    C = fmpq_mpoly_ctx.get(tuple(f"a{r}" for r in range(n1)) + tuple(f"b{s}" for s in range(n1)), "lex")
    g = C.gens()
    for m, j in _pairs(q):
        B = _homform(q, m, j)
        p = sum((B[r, s] * g[r] * g[n1 + s] for r in range(n1) for s in range(n1)), C.constant(0))
        if p(*([y[j][r, 0] for r in range(n1)] + [y[m][s, 0] for s in range(n1)])) != (y[j].transpose() * B * y[m])[0, 0]:
            return False
    return True


def _ha(q: Ctx) -> bool:
    """Each a_m is an attention function with the QKV scores: a causal softmax head with no bias and
    the scale 1/√n, or causal fixed weights in the simplex (the gradient of a linear potential)."""
    hs = q.inp["heads"]
    if len(hs) != 1 or not hs[0].get("causal", False):
        return False
    if "weights" in hs[0]:
        return _weights(q, 0)[1]
    return not any(k in hs[0] for k in ("b_Q", "b_K", "scale"))


predicate("qkv_attention_functions", _ha)
dfn(MT + "qkvScore", Q3, TR, lambda q: [[_scaled(q, s) for s in r] for r in _qkv_scores(q, _X(q))])
dfn(MT + "homForm", Q3, TR, lambda q: [_scaled(q, _homform(q, m, j)) for m, j in _pairs(q)])
thm(MT + "homForm_apply", Q3, TR, (), lambda q: all(_homform(q, m, j) == _four_terms(q, m, j) for m, j in _pairs(q)))
dfn(MT + "homScore", Q3, TR, lambda q: [[_scaled(q, s) for s in r] for r in _hom_scores(q, _lifted(q))])
dfn(MT + "dehom", Q3, TR, _dehom)
thm(MT + "homScore_eq", Q3, TR, (), lambda q: _hom_scores(q, _lifted(q)) == _qkv_scores(q, _dehom(q)))
thm(MT + "isPolyFun_bilinear", Q3, TR, (), _poly_bilinear)
thm(MT + Q3, Q3, TR, (("ha", "qkv_attention_functions"),),
    lambda q: _hom_scores(q, _lifted(q, [fmpq(1)] * _X(q).nrows())) == _qkv_scores(q, _X(q)))
