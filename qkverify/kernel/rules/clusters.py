"""Clustering regimes (docs/MATH.md; Geshkovski, Letrouit, Polyanskiy, Rigollet): the regime definitions on a
rational triple (Q, K, V), and the good-triple check on a real head's value circuit
X = W_V·W_O read from its weights (φ₁ = W_O ψ for an eigenvector ψ of X)."""

from __future__ import annotations

from flint import arb, fmpq, fmpq_mat

from .. import weights as W
from ..algebra import precision
from ..algebra import Coord
from ..derive import Ctx, derived, eye, sym
from ..jsonio import Undecided, require
from ..table import NotEvaluable, dfn, predicate
from ..witnesses import dominant
from ..wellformed import Args, kind, matrix, slices, square

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
            Q, K, V = (q.arg(k) for k in ("Q", "K", "V"))  # k × d, k × d, d × d (well-formed)
            return {"X": V, "A": Q.transpose() * K, "G": eye(V.nrows()), "of": "V"}
        p = W.find(inp["file"], inp["sha256"], q.base_dir, q.weights_dirs)
        m = {t["role"]: W.read_slice(p, t) for t in inp["tensors"]}
        n, N = inp["n"], inp["N"]
        require(set(m) == {"W_Q", "W_K", "W_V", "W_O"} and all((m[r].nrows(), m[r].ncols()) == (n, N)
                for r in ("W_Q", "W_K", "W_V")) and (m["W_O"].nrows(), m["W_O"].ncols()) == (N, n), "input",
                "the tensors must give W_Q, W_K, W_V (n × N) and W_O (N × n)")
        QO, KO = m["W_Q"] * m["W_O"], m["W_K"] * m["W_O"]
        return {"X": m["W_V"] * m["W_O"], "A": QO.transpose() * KO, "G": m["W_O"].transpose() * m["W_O"], "of": "VO"}

    return q.memo(("clusters", "mats"), build)


derived("VO")(lambda q: _mats(q)["X"])          # the value circuit W_V W_O of a real head
derived("S_QK")(lambda q: sym(_mats(q)["A"]))    # sym(QᵀK)


def _croots(q: Ctx):
    """The complex spectrum fact of X; a non-real eigenvalue (a box) makes what follows certified."""
    return q.fact("croots", _mats(q)["of"])


def _dominant(q: Ctx, simple: bool):
    return dominant(_croots(q), simple)


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
        ev = q.fact("eigvec", M["of"])
        psi = ev.psi
        A, G, n = M["A"], M["G"], len(psi)
        if ev.exact:
            v = fmpq_mat([[x] for x in psi])
            return (v.transpose() * A * v)[0, 0] / (v.transpose() * G * v)[0, 0]
        q.certified = True
        with precision(ev.prec):
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
    spd = q.fact("definite", "S_QK").positive
    return [A == A.transpose(), spd, A == A.transpose() and spd]


def _para(q: Ctx):
    """(λ, dim F) when V is paranormal (F = ker(V − λI) ≠ 0, G the other generalised
    eigenspaces), else None."""
    def f():
        dom = _dominant(q, False)
        if dom is None or dom[1] == 1:
            return dom
        return dom if q.fact("eigenspace", "V").full else None

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


# -- the input kinds of this section: their Lean types (the well-formedness pass, kernel/wellformed.py)


@kind("value_head")
def _wf_value_head(i: dict) -> Args:
    roles = sorted(t["role"] for t in i["tensors"])
    require(roles == ["W_K", "W_O", "W_Q", "W_V"], "input", "the tensors must give W_Q, W_K, W_V and W_O once each")
    for t in i["tensors"]:
        slices(t, i["n"], t["role"])
    return Args(n=i["n"], N=i["N"])


@kind("triple")
def _wf_triple(i: dict) -> Args:
    """Q, K : k × d, V : d × d."""
    Q = matrix(i["Q"], "Q")
    k, d = Q.nrows(), Q.ncols()
    return Args(Q=Q, K=matrix(i["K"], "K", k, d), V=square(i["V"], "V", d))
