"""Clustering regimes (docs/MATH.md; Geshkovski, Letrouit, Polyanskiy, Rigollet): the regime definitions on a
rational triple (Q, K, V), and the good-triple check on a real head's value circuit
X = W_V·W_O read from its weights (φ₁ = W_O ψ for an eigenvector ψ of X)."""

from __future__ import annotations

from flint import arb, fmpq, fmpq_mat

from .. import nonsym as NS
from .. import weights as W
from ..algebra import cmp, interval, precision, sign
from ..derive import Coord, Ctx, sym
from ..jsonio import Undecided, ratmat, require
from ..table import NotEvaluable, dfn, predicate

TRIPLE, HEADS = ("triple",), ("triple", "value_head")
GT = "clusters_good_triple"
HV = (("hV", "top_eigenvalue_simple_positive"),)


def _ev(q: Ctx, key: str, fn):
    """fn() memoised; every later use marks the evidence as the first one did."""
    def run():
        saved, q.certified = q.certified, False
        try:
            return fn(), q.certified
        finally:
            q.certified = saved
    v, flag = q.memo(("clusters", key), run)
    q.certified = q.certified or flag
    return v


def _mats(q: Ctx) -> dict:
    """X (its spectrum is certified) and A, G with ⟨Qφ, Kφ⟩/|φ|² = ψᵀAψ/ψᵀGψ: for a triple
    X = V, A = QᵀK, G = I; for a value head X = W_V W_O, A = (W_Q W_O)ᵀ(W_K W_O), G = W_OᵀW_O."""
    def build():
        inp = q.inp
        if q.kind == "triple":
            Q, K, V = (ratmat(inp[k]) for k in ("Q", "K", "V"))
            d = V.nrows()
            require(V.ncols() == d == Q.ncols() == K.ncols() and Q.nrows() == K.nrows(), "input",
                    "Q and K must be k × d, V d × d")
            QtK = Q.transpose() * K
            return {"X": V, "A": QtK, "G": fmpq_mat([[int(i == j) for j in range(d)] for i in range(d)]), "of": "V"}
        p = W.find(inp["file"], inp["sha256"], q.base_dir, q.weights_dirs)
        m = {t["role"]: W.read_slice(p, t) for t in inp["tensors"]}
        n, N = inp["n"], inp["N"]
        require(set(m) == {"W_Q", "W_K", "W_V", "W_O"} and all((m[r].nrows(), m[r].ncols()) == (n, N)
                for r in ("W_Q", "W_K", "W_V")) and (m["W_O"].nrows(), m["W_O"].ncols()) == (N, n), "input",
                "the tensors must give W_Q, W_K, W_V (n × N) and W_O (N × n)")
        QO, KO = m["W_Q"] * m["W_O"], m["W_K"] * m["W_O"]
        return {"X": m["W_V"] * m["W_O"], "A": QO.transpose() * KO, "G": m["W_O"].transpose() * m["W_O"], "of": "VO"}

    return q.memo(("clusters", "mats"), build)


def _roots(q: Ctx) -> list:
    """The eigenvalues of X; any non-real one (a box) makes what follows certified."""
    def f():
        M = _mats(q)
        rts = NS.croots_fact(q.witness("croots", M["of"]), M["X"])
        q.certified = q.certified or any(isinstance(x, NS.CBox) for x, _, _ in rts)
        return rts

    return _ev(q, "roots", f)


def _abs(x):
    return x if sign(x) > 0 else (-x if isinstance(x, fmpq) else x.neg())


def _vs(q: Ctx, lam, x) -> int:
    """sign(λ − |x|) for the real λ > 0 and another eigenvalue x (exact, or through a box)."""
    if not isinstance(x, NS.CBox):
        return cmp(lam, _abs(x))
    lo2, hi2 = x.mod2()
    for _ in range(400):
        lo, hi = interval(lam)
        if lo * lo > hi2:
            return 1
        if hi * hi < lo2:
            return -1
        if isinstance(lam, fmpq) or lo == hi:
            break
        lam.bisect()
    raise Undecided("the modulus of a real eigenvalue and of a complex box are not separated")


def _dominant(q: Ctx, simple: bool):
    """(λ, m): the real positive eigenvalue strictly larger in modulus than every other one,
    with its multiplicity (m = 1 required when ``simple``), or None."""
    rts = _roots(q)
    pos = [(x, m) for x, m, _ in rts if not isinstance(x, NS.CBox) and sign(x) > 0 and (m == 1 or not simple)]
    if not pos:
        return None
    lam, mult = pos[0]
    for x, m in pos[1:]:
        if cmp(x, lam) > 0:
            lam, mult = x, m
    if any(x is not lam and _vs(q, lam, x) <= 0 for x, _, _ in rts):
        return None
    return lam, mult


def _top(q: Ctx):
    """λ₁ when the eigenvalue of largest modulus is real, positive and simple, else None."""
    return _ev(q, "top", lambda: (_dominant(q, True) or (None,))[0])


def _qk(q: Ctx):
    """⟨Qφ₁, Kφ₁⟩ for a unit φ₁: exact from an exact eigenvector, else an Arb ball."""
    def f():
        lam = _top(q)
        if lam is None:
            raise NotEvaluable("the top eigenvalue is not real, positive and simple")
        M = _mats(q)
        w = q.witness("eigvec", M["of"])
        psi = NS.eigvec_fact(w, M["X"], lam)
        A, G, n = M["A"], M["G"], len(psi)
        if "vector" in w:
            v = fmpq_mat([[x] for x in psi])
            return (v.transpose() * A * v)[0, 0] / (v.transpose() * G * v)[0, 0]
        q.certified = True
        with precision(w["prec"]):
            num = sum((psi[i] * A[i, j] * psi[j] for i in range(n) for j in range(n) if A[i, j] != 0), arb(0))
            den = sum((psi[i] * G[i, j] * psi[j] for i in range(n) for j in range(n) if G[i, j] != 0), arb(0))
            return Coord(num / den, None, False)

    return _ev(q, "qk", f)


def _good(q: Ctx) -> bool:
    if _top(q) is None:
        return False
    v = _qk(q)
    if isinstance(v, fmpq):
        return v > 0
    if v.ball > 0 or v.ball < 0:
        return bool(v.ball > 0)
    raise Undecided("the enclosure of ⟨Qφ₁, Kφ₁⟩ contains 0")


def _pd(q: Ctx) -> list[bool]:
    """[QᵀK symmetric, sym(QᵀK) ≻ 0, QᵀK ≻ 0] (the definite witness of S = sym(QᵀK))."""
    A = _mats(q)["A"]
    spd = q.memo(("clusters", "pd"), lambda: NS.definite_fact(q.witness("definite", "S_QK"), sym(A)))
    return [A == A.transpose(), spd, A == A.transpose() and spd]


def _para(q: Ctx):
    """(λ, dim F) when V is paranormal (F = ker(V − λI) ≠ 0, G the other generalised
    eigenspaces), else None."""
    def f():
        dom = _dominant(q, False)
        if dom is None or dom[1] == 1:
            return dom
        lam, m = dom
        if not isinstance(lam, fmpq):
            raise Undecided("an irrational dominant eigenvalue of multiplicity > 1")
        return dom if NS.eigenspace_fact(q.witness("eigenspace", "V"), _mats(q)["X"], lam, m) else None

    return _ev(q, "para", f)


predicate("top_eigenvalue_simple_positive", lambda q: _top(q) is not None)
predicate("V_paranormal", lambda q: _para(q) is not None)

dfn("clusters.top_eigenvalue_simple_positive", GT, HEADS, lambda q: _top(q) is not None)
dfn("clusters.top_eigenvalue", GT, HEADS, _top, HV)
dfn("clusters.qk_phi1", GT, HEADS, _qk, HV)
dfn("clusters.good_triple", GT, HEADS, _good)
dfn("clusters.qk_positive_definite", "clusters_qk_positive_definite", TRIPLE, _pd)
dfn("clusters.paranormal", "clusters_paranormal", TRIPLE, lambda q: _para(q) is not None)
dfn("clusters.paranormal_eigenvalue", "clusters_paranormal", TRIPLE,
    lambda q: [_para(q)[0], [_para(q)[1], _mats(q)["X"].nrows() - _para(q)[1]]], (("hV", "V_paranormal"),))
dfn("clusters.good_triple_multiplicity", "clusters_good_triple_multiplicity", TRIPLE,
    lambda q: all([_pd(q)[2], _para(q) is not None]))
