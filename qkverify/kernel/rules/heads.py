"""Theorem 3 (BalancedHeads.lean): matrix heads and weights heads."""

from __future__ import annotations



from flint import fmpq, fmpq_mat

from ..derive import Ctx, is_zero, sym
from ..jsonio import require
from ..lean import nat_sub
from ..table import MT, dfn, predicate, thm
from ..wellformed import Args, exact_real, kind, matrix, slices, square
from .. import limits
from .profile import signs

T3 = "heads_have_balanced_attention"
HEAD, HEADS = ("head",), ("head", "weights")
HND = (("hnd", "stacked_surjective"),)


def _n(q: Ctx) -> int:
    return q.arg("n")


predicate("stacked_surjective", lambda q: q.head_rank() == 2 * _n(q))
# the matrix a definition is applied to is symmetric: the input matrix itself (alphaList S hS, Lemma 2 take
# any S), the Gram matrix (heads), symPart L of a weights head (symmetric by Lean's symPart_isHermitian)
predicate("is_symmetric", lambda q: q.kind == "weights" or
          (lambda X: X.transpose() == X)(q.mat("gram" if q.kind == "head" else "L")))


def _stacked(q: Ctx) -> fmpq_mat:
    return fmpq_mat(q.mat("W_Q").tolist() + q.mat("W_K").tolist())


def _kernel_vectors(q: Ctx, of: str) -> list[fmpq_mat]:
    return [fmpq_mat([[fmpq(v)] for v in y]) for y in q.fact("rank", of).kernel]


def _radical_eq_ker(q: Ctx) -> bool:
    """rad S = ker J: the left-kernel vectors of S's rank witness (a basis of rad S)
    lie in ker M, and rank S = rank M, so the two spaces have equal dimension."""
    M = q.mat("M")
    return q.rank("S") == q.head_rank() and all(is_zero(M * y) for y in _kernel_vectors(q, "S"))


def _ker_gram(q: Ctx) -> bool:
    """ker G_b = b-coordinates of ker J: B⁻¹y ∈ ker G_b for a basis y of ker J, equal dimensions."""
    Binv = q.fact("inverse", "B").Y if "B" in q.args else q.mat("B")  # the standard basis is its own inverse
    G, M = q.mat("gram"), q.mat("M")
    ys = _kernel_vectors(q, "S")
    return (q.rank("gram") == q.head_rank() and all(is_zero(M * y) for y in ys)
            and all(is_zero(G * (Binv * y)) for y in ys))


def _signature(q: Ctx) -> tuple[int, int, int]:
    return signs(q, "S" if q.kind == "weights" else "gram")



dfn(MT + "stacked", T3, HEAD, _stacked)
dfn(MT + "Nondegenerate", T3, HEADS, lambda q: q.head_rank() == 2 * _n(q))
dfn(MT + "headForm", T3, HEAD,
    lambda q: (q.mat("W_K").transpose() * q.mat("W_Q") + q.mat("W_Q").transpose() * q.mat("W_K")) / 2)
thm(MT + "radical_eq_ker", T3, HEAD, HND, _radical_eq_ker)
def _finrank_radical(q: Ctx) -> bool:
    """finrank (ker J) + 2·finrank H = finrank C, J = [W_Q; W_K]: dim ker J is the size k of the
    kernel_basis fact (k independent vectors in ker J) once rank J + k = N (rank J = rank M from M's
    rank witness, M = [W_K; W_Q] having J's rows), so that they span it; then k + 2n against N."""
    k = q.fact("kernel_basis", "stacked").dim
    require(k + q.head_rank() == q.N, "kernel_basis witness of the stacked map",
            f"{k} vectors and rank {q.head_rank()} do not make N = {q.N}: they do not span ker J")
    return k + 2 * _n(q) == q.N


thm(MT + "finrank_radical", T3, HEAD, HND, _finrank_radical)
dfn(MT + "gram", T3, HEAD, lambda q: q.mat("gram"))
dfn(MT + "signature", T3, HEADS, _signature, (("hA", "is_symmetric"),))
thm(MT + "gram_eq_symPart", T3, HEAD, (), lambda q: q.rank("Lgram") <= _n(q) and sym(q.mat("Lgram")) == q.mat("gram"))
thm(MT + "ker_gram_eq_map", T3, HEAD, HND, _ker_gram)
thm(MT + T3, T3, HEADS, HND, lambda q: _signature(q) == (_n(q), _n(q), nat_sub(q.N, 2 * _n(q))))  # ℕ subtraction


# -- the input kinds of this section: their Lean types (the well-formedness pass, kernel/wellformed.py)


@kind("head")
def _wf_head(i: dict) -> Args:
    """Q, K : C → H with C = ℝ^N, H = ℝ^n: W_Q, W_K are n × N (n = 0 allowed: W_Q = W_K = [] with N
    given); b a basis of C indexed by Fin N; k : ℕ (GramForm.trace_pow_symPart); lam : Fin (2n) → ℝ."""
    if i["W_Q"] == [] or i["W_K"] == []:
        require(i["W_Q"] == [] and i["W_K"] == [] and "N" in i, "input",
                "a head with n = 0 has W_Q = W_K = [] and gives N")
        N = i["N"]
        WQ = WK = fmpq_mat(0, N)
    else:
        require("N" not in i, "input", "N is given only for a head with n = 0")
        WQ = matrix(i["W_Q"], "W_Q")
        WK = matrix(i["W_K"], "W_K", WQ.nrows(), WQ.ncols())
    n, N = WQ.nrows(), WQ.ncols()
    a = Args(W_Q=WQ, W_K=WK, n=n, N=N)
    if "B" in i:  # invertible: the loop reads the inverse witness of B (basis) before any declaration
        a["B"] = square(i["B"], "B", N)
    if "k" in i:
        a["k"] = i["k"]
    if "lam" in i:
        require(len(i["lam"]) == 2 * n, "input", f"lam has {len(i['lam'])} entries, its type Fin (2n) → ℝ needs {2 * n}")
        a["lam"] = [exact_real(x, f"lam[{j}]") for j, x in enumerate(i["lam"])]
    return a


@kind("weights")
def _wf_weights(i: dict) -> Args:
    """A real head: W_Q and W_K (n × N) as slices of weights files, each role once."""
    roles = [t["role"] for t in i["tensors"]]
    require(sorted(roles) == ["W_K", "W_Q"], "input", "the tensors must give W_Q and W_K once each")
    n, N = i["n"], i["N"]
    for t in i["tensors"]:
        slices(t, n, t["role"])
        for k in ("rows", "cols"):
            if k in t:
                require(t[k][1] - t[k][0] == n, "input", f"{t['role']}: {k} {t[k]} do not hold n = {n} rows")
    limits.over("entries of W_K and W_Q", 2 * n * N, limits.MAX_HEAD_ENTRIES, "MAX_HEAD_ENTRIES")
    limits.over("head dimensions n", n, limits.MAX_HEAD_N, "MAX_HEAD_N")
    return Args(n=n, N=N)
