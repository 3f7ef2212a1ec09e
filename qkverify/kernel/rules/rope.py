"""Definition 3 and Proposition 1 (RoPELike.lean).

``forms``: Gram matrices G_d of B_0, B_1, … (B_d(u, v) = uᵀ G_d v, u the key) and k (default: the
number given); L_d = G_d in the dual basis, T_d = L_0⁻¹ L_d with Mathlib's inverse (0 when G_0 is
singular: the inverse witness of B0), all exact.  ``rope_weights``: a real head, for
eq_ropeT_one_of_forall only (there T_d = B⁻¹ R_d B has transcendental entries, so IsRoPELike and
isRoPELike_iff, equalities of reals, are not evaluated); on the coordinate subspace
H = span(e_c, c ∈ cols) of C, G_d = Aᵀ R_d B with A = W_K|_H, B = W_Q|_H (stored rows) and R_d the
runtime's rotation at distance d.  The reading's S is B⁻¹ R' B (R' its planes carried to stored
rows): S = T_1 exactly when both describe the same planes, frequencies and base, else an entry of
R_1 − R' is separated from 0 by enclosures."""

from __future__ import annotations

from fractions import Fraction

from flint import arb, ctx, fmpq, fmpq_mat

from .. import gguf
from .. import weights as W
from ..derive import PREC, Ctx, derived
from ..jsonio import Undecided, rat, ratmat, require
from ..table import MT, NotEvaluable, dfn, predicate, thm
from ..wellformed import Args, kind, square

D3, P1, FORMS, RW = "IsRoPELike", "isRoPELike_iff", ("forms",), ("rope_weights",)
H0 = (("h0", "B0_nondegenerate"),)
#: llama.cpp's rope mode per GGUF architecture: NORM rotates adjacent stored rows, NEOX halves
GGUF_PAIRING = {"llama": "interleaved", "qwen2": "half_split", "qwen3": "half_split", "olmo2": "half_split"}


def _G(q: Ctx) -> list[fmpq_mat]:
    return q.arg("G")  # n × n of one n (well-formed)


def _k(q: Ctx) -> int:
    """k: a real head's, or the forms input's (default: the number of forms given; Lean's B is a
    family indexed by ℕ and k a separate argument, so more forms than k may be given)."""
    return q.inp["k"] if q.kind == "rope_weights" else q.arg("k")


def _L0inv(q: Ctx) -> fmpq_mat:
    """L_0⁻¹ from the inverse witness of B_0 (Lean: 0 when B_0 is degenerate); never computed."""
    return q.fact("inverse", "B0").Y


def _T(q: Ctx) -> list[fmpq_mat]:
    """T_d = L_0⁻¹ L_d for every given d (0 for every d when G_0 is singular: Mathlib's inverse)."""
    return q.memo("T", lambda: [_L0inv(q) * G for G in _G(q)])


def _pow(S: fmpq_mat, d: int) -> fmpq_mat:
    n = S.nrows()
    out = fmpq_mat(n, n, [int(i == j) for i in range(n) for j in range(n)])
    for _ in range(d):
        out = out * S
    return out


def _rope_like(q: Ctx) -> bool:
    """T_{d+e} = T_d T_e for d + e < k (forms only: on a real head T_d has transcendental entries)."""
    T, k = _T(q), _k(q)
    return all(T[d + e] == T[d] * T[e] for d in range(k) for e in range(k - d))


def _pow_side(q: Ctx) -> bool:
    """∃ S, ∀ d < k, T_d = S^d, decided: k = 0 vacuous (true); k = 1: T_0 = S^0 = 1 (S arbitrary);
    k ≥ 2: T_1 = S^1 forces S = T_1, so the ∃ holds iff T_d = T_1^d for every d < k (no other
    candidate exists, which decides the false case too)."""
    k, T = _k(q), _T(q)
    if k == 0:
        return True
    if k == 1:
        return T[0] == _pow(T[0], 0)
    return all(T[d] == _pow(T[1], d) for d in range(k))


def _rows(q: Ctx, role: str) -> fmpq_mat:
    """W_Q or W_K of the head, rows [a, b) as stored, restricted to the columns ``cols`` (exact)."""
    def build():
        t, p, cols = q.inp[role], W.find(q.inp["file"], q.inp["sha256"], q.base_dir, q.weights_dirs), q.inp["cols"]
        a, b = t["rows"]
        if q.inp["format"] == "gguf":
            vals, C = gguf.rows(p, t["name"], a, b)
            Z, e = W.to_Z(vals, b - a, C)
        else:
            Z, e = W.tensor(p, t["name"], list(range(a, b)))
        require(len(set(cols)) == len(cols) == b - a and max(cols) < Z.ncols(), "input", "cols: n distinct columns of C")
        return fmpq_mat([[Z[i, c] for c in cols] for i in range(b - a)]) * (fmpq(2) ** e if e >= 0 else fmpq(1, 2 ** -e))
    return q.memo(("rows", role), build)


def _runtime(q: Ctx) -> dict:
    """The runtime convention; for a GGUF file it must be the one its metadata names."""
    rt = q.inp["runtime"]
    if q.inp["format"] == "gguf":
        meta = gguf.header(W.find(q.inp["file"], q.inp["sha256"], q.base_dir, q.weights_dirs))[0]
        arch = meta.get("general.architecture")
        base = Fraction(meta.get(f"{arch}.rope.freq_base", 10000))
        r = meta.get(f"{arch}.rope.dimension_count", len(q.inp["cols"]))
        require((rt["pairing"], rat(rt["base"]), rt["rotary_dim"]) == (GGUF_PAIRING.get(arch), fmpq(base.numerator, base.denominator), r),
                "input", f"the runtime convention is not the file's ({arch}, base {base}, {r} rotary dims)")
    return rt


def _planes(spec: dict, n: int) -> frozenset:
    """(row a, row b, frequency index i) of each rotated plane, in stored rows (a loaded row
    half·n/2 + i is stored row 2i + half when llama.cpp's permutation was undone)."""
    r = spec["rotary_dim"]
    require(r % 2 == 0 and 0 < r <= n and n % 2 == 0, "input", f"rotary_dim {r} does not fit heads of {n} rows")
    pairs = [(i, i + r // 2) if spec["pairing"] == "half_split" else (2 * i, 2 * i + 1) for i in range(r // 2)]
    perm = (lambda x: 2 * (x % (n // 2)) + x // (n // 2)) if spec.get("rows") == "llama_unpermuted" else (lambda x: x)
    return frozenset((perm(a), perm(b), i) for i, (a, b) in enumerate(pairs))


def _rotation(spec: dict, n: int) -> list[list[arb]]:
    """The rotation at distance 1 as enclosures (PREC bits)."""
    R = [[arb(int(i == j)) for j in range(n)] for i in range(n)]
    with ctx.workprec(PREC):
        for a, b, i in _planes(spec, n):
            th = arb(rat(spec["base"])) ** (arb(-2 * i) / spec["rotary_dim"])
            R[a][a], R[b][b], R[a][b], R[b][a] = th.cos(), th.cos(), -th.sin(), th.sin()
    return R


def _same_rotation(q: Ctx) -> bool:
    """R' = R_1 (module docstring); certified when decided by enclosures."""
    def build():
        rt, rd, n = _runtime(q), q.inp["reading"], len(q.inp["cols"])
        if (_planes(rt, n), rat(rt["base"]), rt["rotary_dim"]) == (_planes(rd, n), rat(rd["base"]), rd["rotary_dim"]):
            return True, False
        A, B = _rotation(rt, n), _rotation(rd, n)
        if any(not A[i][j].overlaps(B[i][j]) for i in range(n) for j in range(n)):
            return False, True
        raise Undecided("the two rotations differ in description but no entry is separated by enclosures")
    same, certified = q.memo("same", build)
    q.certified |= certified
    return same


def _nondegenerate(q: Ctx) -> bool:
    if q.kind == "forms":
        return not q.fact("inverse", "B0").singular
    return not q.fact("inverse", "WK_H").singular and not q.fact("inverse", "WQ_H").singular


def _hS(q: Ctx) -> bool:
    """T_d = S^d for d < k, S the input's candidate (forms) or the reading's (weights)."""
    if q.kind == "rope_weights":
        return _k(q) < 2 or _same_rotation(q)
    if "S" not in q.inp:
        return False
    S = ratmat(q.inp["S"])
    return all(T == _pow(S, d) for d, T in enumerate(_T(q)[:_k(q)]))


def _eq_T1(q: Ctx) -> bool:
    """S = T_1 for the candidate S (forms: the input's, with B_1 given; real heads: the reading's)."""
    if q.kind == "rope_weights":
        return _same_rotation(q)
    if "S" not in q.inp:
        raise NotEvaluable("no candidate S is given")
    if len(_T(q)) < 2:
        raise NotEvaluable("B_1 is not given: T_1 cannot be formed")
    return ratmat(q.inp["S"]) == _T(q)[1]


derived("B0")(lambda q: _G(q)[0])
derived("WK_H")(lambda q: _rows(q, "W_K"))
derived("WQ_H")(lambda q: _rows(q, "W_Q"))
predicate("B0_nondegenerate", _nondegenerate)
predicate("k_ge_two", lambda q: _k(q) >= 2)
predicate("ropeT_eq_pow", _hS)
dfn(MT + "ropeL", D3, FORMS, lambda q: list(_G(q)))
def _nonsingular(q: Ctx) -> fmpq_mat:
    """G_0 when B_0 is nondegenerate (its inverse witness has rows); ropeL0Equiv and ropeT are formed
    only then (the definitions take h0)."""
    if q.fact("inverse", "B0").singular:
        raise NotEvaluable("B_0 is degenerate: L_0 is not an equivalence (the definition needs h0)")
    return _G(q)[0]


dfn(MT + "ropeL0Equiv", D3, FORMS, lambda q: [_nonsingular(q), _L0inv(q)], H0)
dfn(MT + "ropeT", D3, FORMS, lambda q: (_nonsingular(q), _T(q))[1], H0)
dfn(MT + "IsRoPELike", D3, FORMS, _rope_like, H0)
thm(MT + P1, P1, FORMS, H0, lambda q: _rope_like(q) == _pow_side(q))
thm(MT + "eq_ropeT_one_of_forall", P1, FORMS + RW, (("hk", "k_ge_two"),) + H0 + (("hS", "ropeT_eq_pow"),), _eq_T1)


# -- the input kinds of this section: their Lean types (the well-formedness pass, kernel/wellformed.py)


@kind("forms")
def _wf_forms(i: dict) -> Args:
    """B : ℕ → bilinear forms on H = ℝ^n (Gram matrices of B_0, B_1, …, one n); k : ℕ (default: how
    many are given; Lean's B is indexed by ℕ and k is separate); S ∈ End(H) when given."""
    Gs = [square(B, f"B[{d}]") for d, B in enumerate(i["B"])]
    n = Gs[0].nrows()
    require(all(G.nrows() == n for G in Gs), "input", "the forms must be n × n of one n (one space H)")
    k = i.get("k", len(Gs))
    require(k <= len(Gs), "input", f"k = {k} but only B_0 … B_{len(Gs) - 1} are given")
    a = Args(G=Gs, n=n, k=k)
    if "S" in i:
        a["S"] = square(i["S"], "S", n)
    return a


@kind("rope_weights")
def _wf_rope_weights(i: dict) -> Args:
    (a, b), (c, d), cols = i["W_Q"]["rows"], i["W_K"]["rows"], i["cols"]
    n = b - a
    require(a < b and d - c == n, "input", "W_Q and W_K must be slices of n rows each")
    require(len(set(cols)) == len(cols) == n, "input", "cols: n distinct columns of C")
    return Args(n=n, k=i["k"])
