"""§1 Attention functions and transformers: Definition 1 (IsPolyFun, IsAttentionFunction),
Definition 2 (IsBilinearScore), Lemma 1 (IsPolyBidegreeLeOneOne, biaffine_components,
biaffine_decomposition), Definitions 4–5 (head, transformer), Proposition 2
(IsAttentionOutput, attentionBlock, norm_attentionBlock_le, near_identity) and Proposition 3
(qkvScore, homForm, homForm_apply, homScore, dehom, homScore_eq, isPolyFun_bilinear,
qkv_homogenizes_to_bilinear).

Lean: ``formalization/MainText/{Homogenization,BiaffineDecomposition,NearIdentity}.lean``.
The symbolic declarations are decided with sympy (the kernel re-decides them with FLINT's
multivariate polynomials); the transformer is evaluated with enclosures at PREC bits."""

from __future__ import annotations


import numpy as np
import sympy as sp
from flint import arb, arb_mat, ctx, fmpq, fmpq_mat

from ..errors import QKInputError
from ..io import tensors as TS
from ..math import attention as MA
from . import values as V
from ..math import lean_expr as LE
from .registry import DeclResult, NotApplicable, Subject, Undecided, declaration_check, predicate

AF, BI, TR = ("attention_function",), ("biaffine",), ("transformer",)
#: bits of the enclosures (the kernel uses the same working precision)
PREC = 128
#: the value recorded for a definition the evaluation could not decide
NO_VALUE = {"list": []}


def _exprs(s: Subject, key: str, texts: list[str]) -> list[sp.Expr]:
    names = MA.x_names(s.inp["k"], s.inp["N"])
    return s.memo(("ex", key), lambda: [MA.parse(t, names) for t in texts])


# -- Definitions 1 and 2 -------------------------------------------------------------------

@declaration_check("IsPolyFun", AF)
def _is_poly_fun(s: Subject) -> DeclResult:
    """IsPolyFun σ_j for each score, σ_j read with Lean's x/0 = 0: a polynomial on all of ℝ^(kN)
    (:mod:`qkverify.math.lean_expr`; undecided when a denominator of degree ≥ 2 with real zeros is
    left).  Checked: a score that is a polynomial everywhere has a polynomial cancelled form (sympy's
    own test), the converse failing only where Lean's x/0 = 0 differs from the cancelled form."""
    names = MA.x_names(s.inp["k"], s.inp["N"])
    syms = [sp.Symbol(n, real=True) for n in names]
    dec = [MA.lean_polynomial(t, names)[0] for t in s.inp["scores"]]
    if any(d is None for d in dec):
        return DeclResult(None, reason="a score has a denominator of degree ≥ 2 with real zeros: Lean's x/0 = 0 "
                                       "there is not decided")
    generic = [bool(sp.cancel(e).is_polynomial(*syms)) for e in _exprs(s, "scores", s.inp["scores"])]
    plain = [_division_free(t) for t in s.inp["scores"]]
    # polynomial in Lean's reading ⇒ generically one (sympy); written with no division by a
    # variable and no negative power (syntax) ⇒ polynomial in Lean's reading
    ok = all((g or not a) and (a or not p) for a, g, p in zip(dec, generic, plain))
    return DeclResult(ok, value=V.listv([V.boolean(x) for x in dec]))


def _division_free(text: str) -> bool:
    """Whether the score's text divides only by constants and raises only to literal powers ≥ 0
    (read from its syntax tree: then it is a polynomial whatever x/0 means)."""
    import ast

    def constant(n) -> bool:
        return not any(isinstance(m, ast.Name) for m in ast.walk(n))

    for n in ast.walk(ast.parse(text, mode="eval")):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) and not constant(n.right):
            return False
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow) and not (
                isinstance(n.right, ast.Constant) and isinstance(n.right.value, int) and n.right.value >= 0):
            return False
    return True


def _fields(s: Subject):
    return s.memo("fields", lambda: MA.attention_fields(s.inp.doc))


def _fields_again(doc: dict) -> dict:
    """The fields of IsAttentionFunction decided a second way, for the families the producer
    decides (True / False; absent where there is no second way): poly_σ and contDiff_w/a by
    sympy's own polynomial test of the cancelled expressions; convexOn_φ of a quadratic potential
    by its principal minors (exact, FLINT), of log-sum-exp by the sign of τ (its Hessian is
    (diag p − p pᵀ)/τ); grad of a quadratic potential as ω = ½(Q + Qᵀ)σ + b, without
    differentiating φ; mem_stdSimplex of constant weights by FLINT rationals; output: a is defined
    by the input as Σ_j ω_j x_j."""
    from itertools import combinations

    k, N = doc["k"], doc["N"]
    names = MA.x_names(k, N)
    syms = [sp.Symbol(n, real=True) for n in names]
    poly = lambda e: bool(sp.cancel(e).is_polynomial(*syms))  # noqa: E731  (the generic reading)
    sig = [MA.lean_polynomial(t, names)[1] for t in doc["scores"]]
    pot, wts = doc["potential"], doc["weights"]
    out: dict = {"output": True}
    if not all(poly(MA.parse(t, names)) for t in doc["scores"]):  # not even generically a polynomial
        out["poly_σ"] = False
    if "quadratic" in pot:
        Q = fmpq_mat([[_q(str(sp.Rational(x))) for x in r] for r in pot["quadratic"]["Q"]])
        S = (Q + Q.transpose()) / 2
        out["convexOn_φ"] = all(fmpq_mat([[S[i, j] for j in idx] for i in idx]).det() >= 0
                                for m in range(1, k + 1) for idx in combinations(range(k), m))
    elif "log_sum_exp" in pot:
        out["convexOn_φ"] = k == 1 or sp.Rational(pot["log_sum_exp"]) > 0
    if "softmax" in wts:
        rho = [MA.parse(t, names) for t in wts["softmax"]["scores"]]
        if all(poly(r) for r in rho):
            out["contDiff_w"] = out["contDiff_a"] = True
    else:
        w = [MA.parse(t, names) for t in wts["polynomial"]]
        if all(poly(x) for x in w):
            out["contDiff_w"] = out["contDiff_a"] = True
        consts = [sp.cancel(x) for x in w]
        if all(not x.free_symbols for x in consts):
            c = [_q(str(sp.Rational(x))) for x in consts]
            out["mem_stdSimplex"] = all(x >= 0 for x in c) and sum(c, fmpq(0)) == 1
        elif all(poly(x) for x in w):   # a nonconstant polynomial is unbounded
            out["mem_stdSimplex"] = False
        if "quadratic" in pot and all(MA.lean_polynomial(t, names)[0] for t in wts["polynomial"] + doc["scores"]):
            Qr = [[sp.Rational(x) for x in r] for r in pot["quadratic"]["Q"]]
            b = [sp.Rational(x) for x in pot["quadratic"]["b"]]
            out["grad"] = all(sp.expand(w[j] - sum((Qr[j][i] + Qr[i][j]) * sig[i] for i in range(k)) / 2 - b[j]) == 0
                              for j in range(k))
    return out


@declaration_check("IsAttentionFunction", AF)
def _is_attention_function(s: Subject) -> DeclResult:
    """The eight fields of the structure (smoothness, simplex, convexity, polynomial σ, ω = ∇φ∘σ,
    a = Σ ω_j x_j); a = Σ ω_j x_j is how the input defines a.  Checked: every field the producer
    decides agrees with its second decision (:func:`_fields_again`) where there is one."""
    f, notes = _fields(s)
    again = _fields_again(s.inp.doc)
    differ = [k for k, v in again.items() if f.get(k) is not None and f[k] != v]
    if isinstance(notes.get("grad"), dict) and notes["grad"]["sympy_simplify_zero"] and f["grad"] is False:
        differ.append("grad")  # sympy showed ω = ∇φ∘σ: the shift test must agree
    false = [k for k, v in f.items() if v is False]
    if false:
        return DeclResult(not differ, value=V.boolean(False), reason="fails: " + ", ".join(false))
    open_ = [k for k, v in f.items() if v is None]
    if open_ and not differ:
        said = {k: v for k, v in notes.items() if k.startswith("sympy_") and k != "sympy_hessian"}
        return DeclResult(None, value=NO_VALUE, reason="not decided for these families: " + ", ".join(open_)
                          + (f" (sympy, not kernel-checked: {said})" if said else ""))
    return DeclResult(not differ, value=V.boolean(True),
                      reason="the two decisions differ on: " + ", ".join(differ) if differ else "")


@declaration_check("IsBilinearScore", AF)
def _is_bilinear(s: Subject) -> DeclResult:
    """σ_j(x) = B_j(x_j, x_m): the matrices read off the monomials reproduce every σ_j."""
    ok, Bs = MA.bilinear_forms(s.inp.doc)
    if ok is None:
        return DeclResult(None, reason=Bs[0])
    if not ok:
        return DeclResult(True, value=V.boolean(False), reason=Bs[0])
    k, N = s.inp["k"], s.inp["N"]
    X = [[sp.Symbol(f"x{j}_{c}", real=True) for c in range(N)] for j in range(k)]
    back = all(sp.expand(sum(sp.Rational(B[a][b]) * X[j][a] * X[k - 1][b] for a in range(N) for b in range(N)) - e) == 0
               for j, (B, e) in enumerate(zip(Bs, _exprs(s, "scores", s.inp["scores"]))))
    return DeclResult(back, value=V.boolean(True))


# -- Lemma 1 ---------------------------------------------------------------------------------

def _lemma1(s: Subject) -> dict:
    """P read as Lean reads it (:mod:`qkverify.math.lean_expr`: x/0 = 0, the syntax tree as
    written): whether it is a polynomial on all of ℝ^(2N) (True / False / None undecided), that
    polynomial p, and whether p has bidegree ≤ (1, 1) (with the offending monomial)."""
    def build():
        N = s.inp["N"]
        names = MA.uv_names(N)
        tree = LE.to_tree(s.inp["P"], names)
        ok, p = LE.polynomial_everywhere(tree, names)
        u = [sp.Symbol(f"u{a}", real=True) for a in range(N)]
        v = [sp.Symbol(f"v{b}", real=True) for b in range(N)]
        out = {"tree": tree, "names": names, "u": u, "v": v, "polynomial": ok, "p": p, "offending": None}
        if ok is False:
            out.update(bidegree=False, offending="P is not a polynomial function (with Lean's x/0 = 0 it differs "
                                                 "from every polynomial somewhere)")
            return out
        P = sp.Poly(p, *(u + v))
        for mono, c in P.terms():
            du, dv = sum(mono[:N]), sum(mono[N:])
            if du > 1 or dv > 1:
                term = sp.Mul(c, *[x ** q for x, q in zip(P.gens, mono)])
                out.update(bidegree=False, offending=f"{term} has degree {du} in u and {dv} in v")
                return out
        out["bidegree"] = None if ok is None else True
        if ok is None:
            out["offending"] = "a denominator of degree ≥ 2 with real zeros: Lean's x/0 = 0 there is not decided"
        return out

    return s.memo("lemma1", build)


@predicate("bidegree_le_one_one")
def _bidegree(s: Subject) -> bool:
    """IsPolyBidegreeLeOneOne b P (binder ``hP``), with Lean's x/0 = 0; Undecided when a
    denominator of degree ≥ 2 with real zeros is left."""
    b = _lemma1(s)["bidegree"]
    if b is None:
        raise Undecided(_lemma1(s)["offending"])
    return b


def _given(s: Subject) -> tuple:
    d = s.inp.get("decomposition")
    if d is None:
        raise NotApplicable("no decomposition (B, L, R, D) is given")
    N = s.inp["N"]
    if len(d["B"]) != N or len(d["L"]) != N or len(d["R"]) != N:
        raise NotApplicable("the decomposition's sizes do not match N")
    u, v = _lemma1(s)["u"], _lemma1(s)["v"]
    B = sum((sp.Rational(d["B"][a][b]) * u[a] * v[b] for a in range(N) for b in range(N)), sp.Integer(0))
    Lu = sum((sp.Rational(x) * y for x, y in zip(d["L"], u)), sp.Integer(0))
    Rv = sum((sp.Rational(x) * y for x, y in zip(d["R"], v)), sp.Integer(0))
    return B, Lu, Rv, sp.Rational(d["D"])


@predicate("biaffine_decomposition_holds")
def _h(s: Subject) -> bool:
    """∀ u v, P(u, v) = B(u, v) + L(u) + R(v) + D for the given B, L, R, D (binder ``h``), with
    Lean's x/0 = 0 in P; Undecided when a denominator of degree ≥ 2 with real zeros is left."""
    if s.inp.get("decomposition") is None:
        return False
    m = _lemma1(s)
    r = LE.equals_everywhere(m["tree"], sum(_given(s)), m["names"])
    if r is None:
        raise Undecided("P has a denominator of degree ≥ 2 with real zeros")
    return r


def _formulas(s: Subject) -> dict:
    """The four components by Lemma 1's formulas, each a Lean function: P(0,0), u ↦ P(u,0) − P(0,0),
    v ↦ P(0,v) − P(0,0), (u,v) ↦ P(u,v) − P(u,0) − P(0,v) + P(0,0) (trees, x/0 = 0)."""
    m = _lemma1(s)
    N, t = s.inp["N"], m["tree"]
    zero = LE.Node("num", value=0)
    t_u0 = LE.subst(t, {f"v{b}": zero for b in range(N)})
    t_0v = LE.subst(t, {f"u{a}": zero for a in range(N)})
    P00 = LE.lean_eval(t, {n: 0 for n in m["names"]})
    c = LE.Node("num", value=0)
    return {"D": P00, "L": t_u0, "R": t_0v,
            "B": LE.Node("sub", (LE.Node("sub", (t, t_u0)), t_0v)), "P00": P00, "zero": c}


def _tri(values: list) -> bool | None:
    """All true → True; one false → False; else None."""
    if any(v is False for v in values):
        return False
    return None if any(v is None for v in values) else True


@declaration_check("IsPolyBidegreeLeOneOne", BI)
def _is_bidegree(s: Subject) -> DeclResult:
    """∃ p of bidegree ≤ (1, 1) with P(u, v) = p(u, v) for all u, v, P read with Lean's x/0 = 0
    (:mod:`qkverify.math.lean_expr`): P must be its cancelled rational function p on the zero sets
    of its denominators too.  Checked: p's degree in u alone and in v alone (sympy) against the
    monomial scan.  Undecided when a denominator of degree ≥ 2 with real zeros is left."""
    m = _lemma1(s)
    b = m["bidegree"]
    if b is None:
        return DeclResult(None, reason=m["offending"])
    again = False
    if m["polynomial"]:
        again = sp.Poly(m["p"], *m["u"]).total_degree() <= 1 and sp.Poly(m["p"], *m["v"]).total_degree() <= 1
    return DeclResult(again == b, value=V.boolean(b), reason=m["offending"] or "")


def _formula_checks(s: Subject, B, Lu, Rv, D) -> bool | None:
    """Whether B, L, R, D (sympy polynomials) are what the formulas give, each as an identity of
    functions on all of ℝ^(2N) (Lean's x/0 = 0 in P)."""
    f, m = _formulas(s), _lemma1(s)
    return _tri([sp.Rational(str(f["P00"])) == D,
                 LE.equals_everywhere(f["L"], Lu + f["P00"], m["names"]),
                 LE.equals_everywhere(f["R"], Rv + f["P00"], m["names"]),
                 LE.equals_everywhere(f["B"], B - f["P00"], m["names"])])


@declaration_check("biaffine_components", BI)
def _components(s: Subject) -> DeclResult:
    """D = P(0,0), L(u) = P(u,0) − P(0,0), R(v) = P(0,v) − P(0,0), B(u,v) = P(u,v) − P(u,0) − P(0,v)
    + P(0,0) for the given B, L, R, D: each identity decided on all of ℝ^(2N), P with Lean's x/0 = 0
    (so that with h dropped a P that is not B + L + R + D is evaluated as Lean does)."""
    r = _formula_checks(s, *_given(s))
    return DeclResult(r, reason="" if r is not None else "a denominator of degree ≥ 2 with real zeros is left")


@declaration_check("biaffine_decomposition", BI)
def _decomposition(s: Subject) -> DeclResult:
    """∃! (B, L, R, D) with P = B + L + R + D, and every decomposition is given by the formulas.
    When P is a polynomial p of bidegree ≤ (1, 1) (Lean's reading): the coefficients read monomial by
    monomial from p are a decomposition, the only one (a decomposition's coefficients are p's), and
    they agree with the formulas evaluated on P.  When it is not, no decomposition exists (B + L + R
    + D is such a polynomial), so the ∃! fails."""
    m = _lemma1(s)
    if m["bidegree"] is None:
        return DeclResult(None, reason=m["offending"])
    if not m["bidegree"]:
        return DeclResult(False, reason=f"no decomposition exists: {m['offending']}")
    u, v, N = m["u"], m["v"], s.inp["N"]
    P = sp.Poly(m["p"], *(u + v))
    B = sum((P.coeff_monomial(u[a] * v[b]) * u[a] * v[b] for a in range(N) for b in range(N)), sp.Integer(0))
    Lu = sum((P.coeff_monomial(u[a]) * u[a] for a in range(N)), sp.Integer(0))
    Rv = sum((P.coeff_monomial(v[b]) * v[b] for b in range(N)), sp.Integer(0))
    D = P.coeff_monomial(1)
    exists = sp.expand(B + Lu + Rv + D - m["p"]) == 0
    r = _formula_checks(s, B, Lu, Rv, D)
    return DeclResult(None if r is None else (exists and r))


# -- the transformer --------------------------------------------------------------------------

class Evaluation:
    """Exact matrices and enclosures of a ``transformer`` input (see qkverify.math.attention)."""

    def __init__(self, inp, prec: int = PREC):
        self.doc, self.prec = inp.doc, prec
        self.path = None
        if "file" in self.doc:
            self.path = TS.locate(self.doc["file"], self.doc["sha256"], inp.source.get("dirs", []))
        self._m: dict = {}

    def mat(self, spec) -> fmpq_mat:
        if isinstance(spec, list):
            return fmpq_mat([[fmpq(*map(int, x.split("/"))) if "/" in x else fmpq(int(x)) for x in r] for r in spec])
        key = repr(spec)
        if key not in self._m:
            self._m[key] = TS.matrix(self.path, spec["tensor"], tuple(spec["rows"]) if "rows" in spec else None,
                                     tuple(spec["cols"]) if "cols" in spec else None)
        return self._m[key]

    def vec(self, spec):
        return None if spec is None else self.mat([spec] if isinstance(spec, list) else spec)

    def X(self) -> fmpq_mat:
        if "X" not in self._m:
            x = self.doc["x"]
            if isinstance(x, list):
                self._m["X"] = self.mat(x)
            else:
                parts = [TS.matrix(self.path, t["tensor"], list(t["rows"])) for t in x["sum"]]
                out = parts[0]
                for p in parts[1:]:
                    out = out + p
                self._m["X"] = out
        return self._m["X"]

    def head_weights(self, i: int) -> tuple[list[list], bool]:
        """(weight rows, IsAttentionOutput) of head i; causal heads return x_0 at position 0."""
        key = ("w", i)
        if key in self._m:
            return self._m[key]
        h, X = self.doc["heads"][i], self.X()
        ell, causal = X.nrows(), h.get("causal", False)
        if "weights" in h:
            Wt = self.mat(h["weights"])
            if (Wt.nrows(), Wt.ncols()) != (ell, ell) or causal and any(Wt[k, j] != 0 for k in range(ell)
                                                                         for j in range(k + 1, ell)):
                raise QKInputError("fixed weights must be ℓ×ℓ, and a causal head weighs only x_0 … x_k")
            rows = [[Wt[k, j] for j in range(ell)] for k in range(ell)]
            if causal:
                rows[0] = [fmpq(int(j == 0)) for j in range(ell)]
            res = rows, all(all(v >= 0 for v in r) and sum(r) == 1 for r in rows)
        else:
            Xp = X + self.mat(self.doc["positions"]) if "positions" in self.doc else X  # QKV scores use x + p
            Qx = Xp * self.mat(h["W_Q"]).transpose()
            Kx = Xp * self.mat(h["W_K"]).transpose()
            for M, b in ((Qx, self.vec(h.get("b_Q"))), (Kx, self.vec(h.get("b_K")))):
                if b is not None:
                    for r in range(ell):
                        for c in range(M.ncols()):
                            M[r, c] += b[0, c]
            scale = fmpq(*map(int, h["scale"].split("/"))) if "/" in h.get("scale", "") else (
                fmpq(int(h["scale"])) if "scale" in h else MA.inv_sqrt(self.mat(h["W_Q"]).nrows(), self.prec))
            res = MA.softmax_rows(Kx * Qx.transpose(), scale, causal, self.prec), True
        self._m[key] = res
        return res

    def outputs(self, i: int) -> arb_mat:
        rows, _ = self.head_weights(i)
        with ctx.workprec(self.prec):
            return arb_mat([[arb(v) for v in r] for r in rows]) * arb_mat(self.X())

    def block(self) -> arb_mat:
        if "block" not in self._m:
            with ctx.workprec(self.prec):
                out = arb_mat(self.X().nrows(), self.X().ncols())
                for i, h in enumerate(self.doc["heads"]):
                    out = out + self.outputs(i) * arb_mat(self.mat(h["W_V"]).transpose()) * arb_mat(
                        self.mat(h["W_O"]).transpose())
                self._m["block"] = out
        return self._m["block"]

    def M(self, Y: arb_mat) -> arb_mat:
        m = self.doc["M"]
        if m is None:
            return arb_mat(Y.nrows(), Y.ncols())
        with ctx.workprec(self.prec):
            H = Y * arb_mat(self.mat(m["W_1"]).transpose())
            b1, b2 = self.vec(m.get("b_1")), self.vec(m.get("b_2"))
            H = arb_mat([[MA.act(H[r, c] + (b1[0, c] if b1 is not None else 0), m["act"]) for c in range(H.ncols())]
                         for r in range(H.nrows())])
            out = H * arb_mat(self.mat(m["W_2"]).transpose())
            if b2 is not None:
                out = out + arb_mat([[b2[0, c] for c in range(out.ncols())] for _ in range(out.nrows())])
            return out

    def row_norm(self, M, r: int) -> arb:
        with ctx.workprec(self.prec):
            vals = [arb(M[r, c]) for c in range(M.ncols())]
            if self.doc["norm"] == "linf":
                a = [abs(x) for x in vals]
                return arb(max(x.lower() for x in a)).union(arb(max(x.upper() for x in a)))
            return sum((x * x for x in vals), arb(0)).sqrt()

    def value_norm(self, i: int) -> tuple[arb, arb]:
        """Certified bounds of ‖W_O,i W_V,i‖: sup norm exactly (row sums); Euclidean: below by ‖V y‖/‖y‖
        for y a float power-iteration vector read exactly, above by tr(P^(2^8))^(1/2^9) with
        P = (W_Oᵀ W_O)(W_V W_Vᵀ), whose eigenvalues are those of VᵀV (all ≥ 0) apart from zeros."""
        key = ("vn", i)
        if key in self._m:
            return self._m[key]
        h = self.doc["heads"][i]
        WV, WO = self.mat(h["W_V"]), self.mat(h["W_O"])
        with ctx.workprec(self.prec):
            if self.doc["norm"] == "linf":
                Vm = WO * WV
                t = max(sum(abs(Vm[r, c]) for c in range(Vm.ncols())) for r in range(Vm.nrows()))
                res = arb(t), arb(t)
            else:
                fo, fv = _floats(WO), _floats(WV)
                y = np.ones(fv.shape[1])
                for _ in range(60):
                    y = fv.T @ (fo.T @ (fo @ (fv @ y)))
                    ny = np.linalg.norm(y)
                    if not np.isfinite(ny) or ny == 0:  # V y = 0 (e.g. W_V = 0): 0 is the lower bound
                        y = None
                        break
                    y /= ny
                if y is not None:
                    # any nonzero y gives a lower bound; rounded to 2^-24 so that BLAS's last bits (which
                    # differ between CPU kernels) do not reach the certificate
                    y = np.round(y * 2.0 ** 24) / 2.0 ** 24
                    if not y.any():
                        y = None
                if y is None:
                    lo = arb(0)
                else:
                    ye = TS.exact(y).transpose()
                    Vy = WO * (WV * ye)
                    lo = (arb(sum(Vy[r, 0] ** 2 for r in range(Vy.nrows())))
                          / arb(sum(ye[r, 0] ** 2 for r in range(ye.nrows())))).sqrt()
                P = arb_mat((WO.transpose() * WO) * (WV * WV.transpose()))
                logk = arb(0)
                for _ in range(8):
                    t = P.trace()
                    P = (P * (1 / t)) * (P * (1 / t))
                    logk = 2 * (logk + t.log())
                hi = ((logk + P.trace().log()) / 2 ** 9).exp()
                res = lo, hi
        self._m[key] = res
        return res

    def growth(self) -> arb | None:
        """A certified upper bound of sup ‖M y‖/‖y‖ when M(0) = 0 (|act t| ≤ |t|); None when M(0) ≠ 0."""
        m = self.doc["M"]
        if m is None:
            return arb(0)
        with ctx.workprec(self.prec):
            z = self.M(arb_mat(1, self.X().ncols()))
            if any(not z[0, c].contains(0) for c in range(z.ncols())):
                return None
            if self.doc["norm"] == "linf":
                rs = lambda A: arb(max(sum(abs(A[r, c]) for c in range(A.ncols())) for r in range(A.nrows())))  # noqa: E731
                return rs(self.mat(m["W_1"])) * rs(self.mat(m["W_2"]))
            s = self.doc.get("squarings", 0)
            return (MA.gram_trace_bound(self.mat(m["W_1"]), s, MA.NORM_PREC)
                    * MA.gram_trace_bound(self.mat(m["W_2"]), s, MA.NORM_PREC))

    def sides(self, with_M: bool) -> dict:
        """The two sides of norm_attentionBlock_le (with_M False) or near_identity, per position."""
        with ctx.workprec(self.prec):
            X, A = self.X(), self.block()
            out = A + self.M(arb_mat(X) + A) if with_M else A
            xs = [self.row_norm(X, r) for r in range(X.nrows())]
            xmax = arb(max(x.lower() for x in xs)).union(arb(max(x.upper() for x in xs)))
            Vb = [self.value_norm(i) for i in range(len(self.doc["heads"]))]
            Vlo, Vhi = sum((b[0] for b in Vb), arb(0)), sum((b[1] for b in Vb), arb(0))
            L = arb(_q(self.doc["L"])) if with_M else arb(0)
            return {"lhs": [self.row_norm(out, r) for r in range(X.nrows())], "xmax": xmax, "V": (Vlo, Vhi),
                    "rhs": ((L + Vlo + L * Vlo) * xmax, (L + Vhi + L * Vhi) * xmax)}


def _floats(M: fmpq_mat) -> np.ndarray:
    """A float display copy of an exact matrix (used only to choose a test vector)."""
    return np.array([[float(M[r, c]) for c in range(M.ncols())] for r in range(M.nrows())])


def _q(t: str) -> fmpq:
    return fmpq(*map(int, t.split("/"))) if "/" in t else fmpq(int(t))


def _ev(s: Subject) -> Evaluation:
    return s.memo("eval", lambda: Evaluation(s.inp))


def _encl(M) -> dict:
    return V.listv([V.listv([V.enclosure(M[r, c]) for c in range(M.ncols())]) for r in range(M.nrows())])


def _single(s: Subject, causal: bool = False) -> dict:
    hs = s.inp["heads"]
    if len(hs) != 1 or (causal and not hs[0].get("causal", False)):
        raise NotApplicable("stated for one" + (" causal" if causal else "") + " head")
    return hs[0]


@predicate("heads_convex_outputs")
def _hA(s: Subject) -> bool:
    """Every head returns convex combinations of its inputs (binder ``hA``): softmax heads always,
    fixed weight rows when they are ≥ 0 and sum to 1."""
    return all(_ev(s).head_weights(i)[1] for i in range(len(s.inp["heads"])))


#: hidden widths up to which the activation patterns of a ReLU network are enumerated for hM
MAX_PATTERNS_WIDTH = 12


def _relu_patterns(W1: fmpq_mat, W2: fmpq_mat, width: int):
    """A_σ = W₂·diag(σ)·W₁ for every σ ∈ {0, 1}^width (a superset of the activation patterns)."""
    from itertools import product

    for sig in product((0, 1), repeat=width):
        D = fmpq_mat(width, width, [int(i == j and sig[i]) for i in range(width) for j in range(width)])
        yield sig, W2 * D * W1


def _mlp_exact(ev: "Evaluation", y: fmpq_mat) -> fmpq_mat:
    """M(y) for a row vector y, exactly (relu or identity activation)."""
    m = ev.doc["M"]
    H = y * ev.mat(m["W_1"]).transpose()
    b1 = ev.vec(m.get("b_1"))
    if b1 is not None:
        H = H + b1
    if m["act"] == "relu":
        H = fmpq_mat([[max(H[0, c], fmpq(0)) for c in range(H.ncols())]])
    out = H * ev.mat(m["W_2"]).transpose()
    b2 = ev.vec(m.get("b_2"))
    return out + b2 if b2 is not None else out


def _norm_exceeds(ev: "Evaluation", My: fmpq_mat, y: fmpq_mat, L: fmpq) -> bool:
    """‖M y‖ > L‖y‖ exactly (l2: squares, L ≥ 0; linf: maxima)."""
    if ev.doc["norm"] == "linf":
        return max(abs(x) for x in My.entries()) > L * max(abs(x) for x in y.entries())
    return sum((x * x for x in My.entries()), fmpq(0)) > L * L * sum((x * x for x in y.entries()), fmpq(0))


@predicate("M_linear_growth")
def _hM(s: Subject) -> bool:
    """∀ y, ‖M y‖ ≤ L‖y‖ (binder ``hM``), decided as Lean states it, for M(y) = W₂ act(W₁y + b₁) + b₂:

    * false when L < 0 (C ≠ 0) or M(0) ≠ 0 (y = 0), or at an exact (relu / identity) or certified
      (gelu) counterexample y (the basis vectors, ±, and the top eigenvectors of each activation
      pattern's matrix, kept when they lie in its cone);
    * true, for M positively homogeneous (b₁ = b₂ = 0, relu or identity), when every pattern's
      matrix A_σ = W₂ diag(σ) W₁ has ‖A_σ‖ ≤ L (Euclidean: L²I − A_σᵀA_σ ⪰ 0 by LDLᵀ; sup norm:
      row sums), exactly -- M(y) = A_σ y on the cone of σ; e.g. M(y) = relu(y) + relu(−y) = |y|
      with L = 1;
    * true when M(0) = 0 exactly and L ≥ ‖W₂‖‖W₁‖ (certified: ‖M y − M 0‖ ≤ ‖W₂‖‖W₁ y‖, as relu
      and identity are 1-Lipschitz and |gelu t| ≤ |t|; for gelu with b₁ ≠ 0, M(0) = W₂ gelu(b₁) + b₂
      = 0 is not decided exactly, so this route does not apply);
    * otherwise Undecided (named)."""
    from ..exact.inertia import inertia_ldlt

    L = _q(s.inp["L"])
    ev = _ev(s)
    m = s.inp["M"]
    if L < 0:
        return False
    if m is None:
        return True
    N = ev.X().ncols()
    W1, W2 = ev.mat(m["W_1"]), ev.mat(m["W_2"])
    b1, b2 = ev.vec(m.get("b_1")), ev.vec(m.get("b_2"))
    act = m["act"]
    zero = fmpq_mat(1, N)
    m0_zero = True  # M(0) = 0, exactly (None: not decided)
    if act in ("relu", "identity") or b1 is None or not any(b1.entries()):
        # gelu(0) = 0, so with b₁ = 0 a gelu network has M(0) = b₂ exactly, as relu / identity ones
        m0 = _mlp_exact(ev, zero) if act != "gelu" else (b2 if b2 is not None else zero)
        if any(m0.entries()):
            return False
    else:
        z = ev.M(arb_mat(1, N))
        if any(not z[0, c].contains(0) for c in range(z.ncols())):
            return False
        m0_zero = None  # gelu(b₁) is transcendental: M(0) = 0 is not decided exactly
    candidates = []
    for i in range(N):
        for sg in (1, -1):
            candidates.append(fmpq_mat(1, N, [sg * int(j == i) for j in range(N)]))
    homogeneous = (b1 is None or not any(b1.entries())) and (b2 is None or not any(b2.entries()))
    width = W1.nrows()
    if act in ("relu", "identity") and width <= MAX_PATTERNS_WIDTH:
        pats = list(_relu_patterns(W1, W2, width)) if act == "relu" else [((1,) * width, W2 * W1)]
        bounded = True
        for sig, A in pats:
            if ev.doc["norm"] == "linf":
                ok = all(sum((abs(A[r, c]) for c in range(N)), fmpq(0)) <= L for r in range(A.nrows()))
            else:
                ok = inertia_ldlt(fmpq_mat(N, N, [L * L * int(i == j) for i in range(N) for j in range(N)])
                                  - A.transpose() * A).n_neg == 0
            if not ok:
                bounded = False
                candidates += _top_vectors(A, ev.doc["norm"])
        if bounded and homogeneous:
            return True
    # the certified sufficient bound first: when it reaches L no counterexample exists, and the
    # search below (an MLP evaluation per test vector: minutes on a real model's 384 × 1536) is moot
    g = ev.growth() if m0_zero else None  # m0_zero: relu / identity, or b₁ = 0 (Lipschitz constant 1)
    if g is not None:
        with ctx.workprec(PREC):
            if g <= arb(L):
                return True
    from ..exact.rational import fmpq_str

    if not homogeneous:  # with a bias the ratio ‖M y‖/‖y‖ depends on the scale of y: try far and near points
        candidates = [y * (fmpq(2) ** e if e >= 0 else fmpq(1, 2 ** -e)) for y in candidates for e in range(-8, 25, 4)]
    for y in candidates:
        if act in ("relu", "identity"):
            bad = _norm_exceeds(ev, _mlp_exact(ev, y), y, L)
        else:
            with ctx.workprec(PREC):
                My = ev.M(arb_mat(y))
                ny = ev.row_norm(arb_mat(y), 0)
                bad = bool(ev.row_norm(My, 0) > arb(L) * ny)
        if bad:  # the kernel re-evaluates both sides at this y
            s.witness({"kind": "counterexample", "of": "hM", "y": [fmpq_str(c) for c in y.entries()]})
            return False
    raise Undecided(f"‖M y‖ ≤ {L}·‖y‖ for every y is neither shown nor refuted (no counterexample among the "
                    "test vectors; the bounds do not reach L)")


def _top_vectors(A: fmpq_mat, norm: str) -> list[fmpq_mat]:
    """Test vectors where ‖A y‖/‖y‖ is largest: ± a top eigenvector of AᵀA (l2, rounded to 2^-24),
    or the sign vector of A's largest row (linf)."""
    N = A.ncols()
    if norm == "linf":
        r = max(range(A.nrows()), key=lambda i: sum(abs(A[i, c]) for c in range(N)))
        v = [fmpq((A[r, c] > 0) - (A[r, c] < 0)) for c in range(N)]
        return [fmpq_mat([v]), fmpq_mat([[-x for x in v]])]
    F = _floats(A)
    w, U = np.linalg.eigh(F.T @ F)
    v = U[:, int(np.argmax(w))]
    q = [fmpq(int(round(x * 2 ** 24)), 2 ** 24) for x in v]
    return [fmpq_mat([q]), fmpq_mat([[-x for x in q]])] if any(q) else []


@declaration_check("head", TR)
def _head(s: Subject) -> DeclResult:
    """A(x)_0 = x_0 and A(x)_i = a_i(x_0, …, x_i): the weights of position i vanish beyond i."""
    _single(s, True)
    rows, _ = _ev(s).head_weights(0)
    causal = all(rows[i][j] == 0 for i in range(len(rows)) for j in range(i + 1, len(rows)))
    return DeclResult(causal and rows[0][0] == 1, "certified", _encl(_ev(s).outputs(0)))


@declaration_check("transformer", TR)
def _transformer(s: Subject) -> DeclResult:
    """T(x)_i = y_i + M(y_i) with y_i = x_i + V(A(x)_i); checked: T − x = A-block + M(x + A-block)."""
    _single(s)
    ev = _ev(s)
    with ctx.workprec(PREC):
        A = ev.block()
        Y = arb_mat(ev.X()) + A
        T = Y + ev.M(Y)
        D = T - arb_mat(ev.X()) - (A + ev.M(arb_mat(ev.X()) + A))
        ok = all(D[r, c].contains(0) for r in range(D.nrows()) for c in range(D.ncols()))
    return DeclResult(ok, "certified", _encl(T))


@declaration_check("IsAttentionOutput", TR)
def _is_attention_output(s: Subject) -> DeclResult:
    """Per head: every output is a convex combination of the inputs; checked on the computed
    weights (nonnegative, summing to 1 within their enclosures)."""
    ev = _ev(s)
    vals, ok = [], True
    with ctx.workprec(PREC):
        for i in range(len(s.inp["heads"])):
            rows, convex = ev.head_weights(i)
            vals.append(convex)
            ok = ok and (not convex or all(sum((arb(x) for x in r), arb(0)).contains(1)
                                           and all(arb(x) >= 0 for x in r) for r in rows))
    return DeclResult(ok, value=V.listv([V.boolean(v) for v in vals]))


@declaration_check("attentionBlock", TR)
def _attention_block(s: Subject) -> DeclResult:
    """Σ_i V_i(A_i(x)_k) for every k; checked: the sum with each V_i = W_O,i W_V,i formed first
    overlaps the sum computed head output by head output."""
    ev = _ev(s)
    with ctx.workprec(PREC):
        other = arb_mat(ev.X().nrows(), ev.X().ncols())
        for i, h in enumerate(s.inp["heads"]):
            Vt = (arb_mat(ev.mat(h["W_O"])) * arb_mat(ev.mat(h["W_V"]))).transpose()
            other = other + ev.outputs(i) * Vt
        A = ev.block()
        ok = all(A[r, c].overlaps(other[r, c]) for r in range(A.nrows()) for c in range(A.ncols()))
    return DeclResult(ok, "certified", _encl(A))


def _bound(s: Subject, with_M: bool) -> DeclResult:
    sd = _ev(s).sides(with_M)
    if all(x <= sd["rhs"][0] for x in sd["lhs"]):
        return DeclResult(True, "certified")
    if any(x > sd["rhs"][1] for x in sd["lhs"]):
        return DeclResult(False, "certified", reason="the bound fails at a position (certified)")
    return DeclResult(None, "certified", reason="the two sides overlap at the working precision")


@declaration_check("norm_attentionBlock_le", TR)
def _norm_block(s: Subject) -> DeclResult:
    """‖Σ_i V_i(A_i(x)_k)‖ ≤ (Σ_i ‖V_i‖)·max_j ‖x_j‖ for every k."""
    return _bound(s, False)


@declaration_check("near_identity", TR)
def _near_identity(s: Subject) -> DeclResult:
    """‖A(x)_k + M(x_k + A(x)_k)‖ ≤ (L + V + LV)·max_j ‖x_j‖ for every k (the k-th component of T(x) − x)."""
    return _bound(s, True)


# -- Proposition 3 ----------------------------------------------------------------------------

def _qkv(s: Subject):
    h = _single(s, True)
    if "positions" not in s.inp.doc or "W_Q" not in h:
        raise NotApplicable("Proposition 3 needs a QKV head and positions")
    ev = _ev(s)
    X, P = ev.X(), ev.mat(s.inp["positions"])
    al = [_q(a) for a in s.inp.get("alpha", ["1"] * X.nrows())]
    return ev.mat(h["W_Q"]), ev.mat(h["W_K"]), P, X, al


def _col(M: fmpq_mat, i: int) -> fmpq_mat:
    return fmpq_mat([[M[i, c]] for c in range(M.ncols())])


def _homform(s: Subject, m: int, j: int) -> fmpq_mat:
    """√n·homForm_{m,j} as a matrix on C × ℝ: entry (a, b) = ⟨Q(v + βp_m), K(u + αp_j)⟩ at the basis
    vectors (u, α) = e_a, (v, β) = e_b (evaluated from the definition, vector by vector)."""
    def build():
        Q, K, P, X, _ = _qkv(s)
        N = X.ncols()
        out = fmpq_mat(N + 1, N + 1)
        for a in range(N + 1):
            ua = _col(P, j) if a == N else fmpq_mat([[fmpq(int(c == a))] for c in range(N)])
            Ku = K * ua
            for b in range(N + 1):
                vb = _col(P, m) if b == N else fmpq_mat([[fmpq(int(c == b))] for c in range(N)])
                out[a, b] = ((Q * vb).transpose() * Ku)[0, 0]
        return out
    return s.memo(("hf", m, j), build)


def _scale(s: Subject):
    return MA.inv_sqrt(_qkv(s)[0].nrows(), PREC)


def _val(s: Subject, r: fmpq) -> dict:
    c = _scale(s)
    if isinstance(c, fmpq):
        return V.exact(r * c)
    with ctx.workprec(PREC):
        return V.enclosure(arb(r) * c)


def _mval(s: Subject, M: fmpq_mat) -> dict:
    c = _scale(s)
    if isinstance(c, fmpq):
        return V.matrix(M * c)
    return V.listv([V.listv([_val(s, M[r, k]) for k in range(M.ncols())]) for r in range(M.nrows())])


def _pairs(s: Subject) -> list[tuple[int, int]]:
    ell = _qkv(s)[3].nrows()
    return [(m, j) for m in range(ell) for j in range(m + 1)]


def _qkv_scores(s: Subject, X: fmpq_mat) -> list[list[fmpq]]:
    """√n·qkvScore(x_0..x_m)_j = ⟨Q(x_m + p_m), K(x_j + p_j)⟩ for every m and j ≤ m."""
    Q, K, P, _, _ = _qkv(s)
    Y = X + P
    return [[((Q * _col(Y, m)).transpose() * (K * _col(Y, j)))[0, 0] for j in range(m + 1)] for m in range(X.nrows())]


def _lift(s: Subject, al) -> list[fmpq_mat]:
    X = _qkv(s)[3]
    return [fmpq_mat([[X[i, c]] for c in range(X.ncols())] + [[al[i]]]) for i in range(X.nrows())]


def _hom_scores(s: Subject, y: list[fmpq_mat]) -> list[list[fmpq]]:
    return [[(y[j].transpose() * _homform(s, m, j) * y[m])[0, 0] for j in range(m + 1)] for m in range(len(y))]


def _dehom(s: Subject, al=None) -> fmpq_mat:
    """dehom(y)_i = u_i + (α_i − 1)p_i for y_i = (x_i, α_i), α the input's (or the given) scalars."""
    _, _, P, X, al0 = _qkv(s)
    al = al0 if al is None else al
    return fmpq_mat([[X[i, c] + (al[i] - 1) * P[i, c] for c in range(X.ncols())] for i in range(X.nrows())])


@predicate("qkv_attention_functions")
def _ha(s: Subject) -> bool:
    """Each a_m is an attention function with the QKV scores (binder ``ha``): a causal softmax head
    without biases and with the scale 1/√n, or causal fixed weights in the simplex (constant
    weights are the gradient of a linear potential)."""
    h = _single(s, True)
    if "weights" in h:
        return _ev(s).head_weights(0)[1]
    return not any(k in h for k in ("b_Q", "b_K", "scale"))


@declaration_check("qkvScore", TR)
def _qkv_score(s: Subject) -> DeclResult:
    """σ(x)_j = ⟨Q(x_m + p_m), K(x_j + p_j)⟩/√n; checked against the expansion in x and p."""
    Q, K, P, X, _ = _qkv(s)
    sc = _qkv_scores(s, X)
    G = Q.transpose() * K
    ok = all(sc[m][j] == ((_col(X, m) + _col(P, m)).transpose() * G * (_col(X, j) + _col(P, j)))[0, 0]
             for m in range(X.nrows()) for j in range(m + 1))
    ev = "exact" if isinstance(_scale(s), fmpq) else "certified"
    return DeclResult(ok, ev, V.listv([V.listv([_val(s, r) for r in row]) for row in sc]))


@declaration_check("homForm", TR)
def _hom_form(s: Subject) -> DeclResult:
    """The bilinear form on C × ℝ, for every query position m and key position j ≤ m; checked:
    its value on (u, 1), (v, 1) is the QKV score of u, v at positions j, m."""
    Q, K, P, X, _ = _qkv(s)
    y = _lift(s, [fmpq(1)] * X.nrows())
    ok = _hom_scores(s, y) == _qkv_scores(s, X)
    ev = "exact" if isinstance(_scale(s), fmpq) else "certified"
    return DeclResult(ok, ev, V.listv([_mval(s, _homform(s, m, j)) for m, j in _pairs(s)]))


@declaration_check("homForm_apply", TR)
def _hom_form_apply(s: Subject) -> DeclResult:
    """homForm((u,α),(v,β)) = (⟨Qv,Ku⟩ + α⟨Qv,Kp_j⟩ + β⟨Qp_m,Ku⟩ + αβ⟨Qp_m,Kp_j⟩)/√n, as matrices."""
    Q, K, P, X, _ = _qkv(s)
    N = X.ncols()
    G = K.transpose() * Q
    ok = True
    for m, j in _pairs(s):
        pm, pj = _col(P, m), _col(P, j)
        F = fmpq_mat(N + 1, N + 1)
        for a in range(N):
            for b in range(N):
                F[a, b] = G[a, b]
            F[a, N] = (G * pm)[a, 0]
            F[N, a] = (pj.transpose() * G)[0, a]
        F[N, N] = (pj.transpose() * G * pm)[0, 0]
        ok = ok and F == _homform(s, m, j)
    return DeclResult(ok)


@declaration_check("homScore", TR)
def _hom_score(s: Subject) -> DeclResult:
    """σ̂(y)_j = homForm_{m,j}(y_j, y_m) at the input's y = (x_i, α_i); checked: bilinear in (y_j, y_m)
    (scaling y_j by 2 doubles the score)."""
    al = _qkv(s)[4]
    y = _lift(s, al)
    sc = _hom_scores(s, y)
    ok = all((2 * y[j].transpose() * _homform(s, m, j) * y[m])[0, 0] == 2 * sc[m][j] for m, j in _pairs(s))
    ev = "exact" if isinstance(_scale(s), fmpq) else "certified"
    return DeclResult(ok, ev, V.listv([V.listv([_val(s, r) for r in row]) for row in sc]))


@declaration_check("dehom", TR)
def _dehom_check(s: Subject) -> DeclResult:
    """dehom(y)_i = u_i + (α_i − 1)p_i; checked: the rows against the matrix form X + diag(α − 1)·P,
    and dehom of the lift (α = 1) is x (dehom_iota)."""
    _, _, P, X, al = _qkv(s)
    D = _dehom(s)
    ell = X.nrows()
    diag = fmpq_mat(ell, ell)
    for i in range(ell):
        diag[i, i] = al[i] - 1
    return DeclResult(D == X + diag * P and _dehom(s, [fmpq(1)] * ell) == X, value=V.matrix(D))


@declaration_check("homScore_eq", TR)
def _hom_score_eq(s: Subject) -> DeclResult:
    """homScore(y) = qkvScore(dehom y), exactly (the common factor 1/√n aside)."""
    return DeclResult(_hom_scores(s, _lift(s, _qkv(s)[4])) == _qkv_scores(s, _dehom(s)))


@declaration_check("isPolyFun_bilinear", TR)
def _is_poly_fun_bilinear(s: Subject) -> DeclResult:
    """y ↦ homForm(y_j, y_m) is the polynomial Σ_rs B_rs y_{j,r} y_{m,s} (sympy, B the matrix of
    homForm), checked at the input's y against homForm evaluated from its definition,
    ⟨Q(u_m + α_m p_m), K(u_j + α_j p_j)⟩ (the common factor 1/√n aside)."""
    Q, K, P, X, al = _qkv(s)
    y = _lift(s, al)
    n1 = y[0].nrows()
    a = sp.symbols(f"a0:{n1}")
    b = sp.symbols(f"b0:{n1}")
    ok = True
    for m, j in _pairs(s):
        B = _homform(s, m, j)
        p = sum(sp.Rational(int(B[r, c].p), int(B[r, c].q)) * a[r] * b[c] for r in range(n1) for c in range(n1))
        val = p.subs({**{a[r]: sp.Rational(int(y[j][r, 0].p), int(y[j][r, 0].q)) for r in range(n1)},
                      **{b[c]: sp.Rational(int(y[m][c, 0].p), int(y[m][c, 0].q)) for c in range(n1)}})
        qv = Q * (_col(X, m) + _col(P, m) * al[m])
        ku = K * (_col(X, j) + _col(P, j) * al[j])
        e = (qv.transpose() * ku)[0, 0]
        ok = ok and val == sp.Rational(int(e.p), int(e.q))
    return DeclResult(ok)


@declaration_check("qkv_homogenizes_to_bilinear", TR)
def _homogenises(s: Subject) -> DeclResult:
    """T̂(lift x) = lift(T(x)): the homogenised bilinear scores of the lifted tokens are the QKV
    scores (exactly), so the weights, the outputs and T agree, and the extra coordinate is
    Σ_j ω_j = 1 plus V̂ and M̂'s 0."""
    X = _qkv(s)[3]
    if not _ha(s):
        raise NotApplicable("the heads' scores are not qkvScore (a bias or another scale): the homogenisation of "
                            "those scores is not evaluated")
    ok = _hom_scores(s, _lift(s, [fmpq(1)] * X.nrows())) == _qkv_scores(s, X)
    return DeclResult(ok)


__all__ = ["Evaluation", "PREC"]


def homogenised_outputs(s: Subject) -> dict:
    """For display: T(x) by the QKV path and T̂(lift x) by the homogenised path (softmax of the
    homogenised scores of the lifted tokens, outputs in C × ℝ, V̂ = (V·, 0), M̂ = (M·, 0)), as text;
    and the extra coordinate of each head output, Σ_j ω̂_j."""
    ev = _ev(s)
    h = _single(s, True)
    Q, K, P, X, _ = _qkv(s)
    ell = X.nrows()
    with ctx.workprec(PREC):
        A = ev.block()
        Y = arb_mat(X) + A
        T = Y + ev.M(Y)
        hs = _hom_scores(s, _lift(s, [fmpq(1)] * ell))
        if "weights" in h:
            W = ev.head_weights(0)[0]
        else:
            S = fmpq_mat(ell, ell)
            for m in range(ell):
                for j in range(m + 1):
                    S[j, m] = hs[m][j]
            W = MA.softmax_rows(S, MA.inv_sqrt(Q.nrows(), PREC), True, PREC)
        Ah = arb_mat([[arb(v) for v in r] for r in W]) * arb_mat(X)       # C part of Â(x̂)
        extra = [sum((arb(v) for v in r), arb(0)) for r in W]              # ℝ part: Σ_j ω̂_j
        Vh = Ah * arb_mat(ev.mat(h["W_V"]).transpose()) * arb_mat(ev.mat(h["W_O"]).transpose())
        Yh = arb_mat(X) + Vh
        Th = Yh + ev.M(Yh)
    fmt = lambda M, r: "(" + ", ".join(M[r, c].str(10) for c in range(M.ncols())) + ")"  # noqa: E731
    return {"T": [fmt(T, r) for r in range(ell)], "T_hat": [fmt(Th, r)[:-1] + ", 1)" for r in range(ell)],
            "head_output_extra_coordinate": [e.str(10) for e in extra],
            "overlap": all(T[r, c].overlaps(Th[r, c]) for r in range(ell) for c in range(T.ncols()))}
