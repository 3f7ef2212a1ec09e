"""Definition 3 and Proposition 1 (RoPELike.lean): forms B_0 … B_{k−1} on H.

``forms`` inputs give the Gram matrices G_d (B_d(u, v) = uᵀ G_d v, u the key, v
the query); L_d is G_d in the dual basis and T_d = G_0⁻¹ G_d, all exact.

``rope_weights`` inputs are a real head read from its weights file: on the
coordinate subspace H of C spanned by ``cols`` (n = d_head coordinates) the
model's forms are G_d = Aᵀ R_d B with A = W_K|_H, B = W_Q|_H (stored rows) and
R_d the rotation the runtime applies at distance d (pairs of stored rows, angle
d·θ_i, θ_i = base^(−2i/r)).  With det A·det B ≠ 0 (B_0 nondegenerate, decided
exactly from the weights), T_d = B⁻¹ R_d B, so T_{d+e} = T_d T_e and T_d = T_1^d
hold exactly (rotations in fixed planes add their angles).  The reading's S is
B⁻¹ R' B with R' the rotation the reading's pairing and row order describe, so
T_d = S^d for d < k (k ≥ 2) iff R' = R_1: exact when the two describe the same
planes, frequencies and base; otherwise an entry of R_1 − R' is shown nonzero by
enclosures (certified).  The runtime convention of a GGUF file comes from its
metadata (general.architecture, rope.freq_base, rope.dimension_count)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from flint import arb, ctx, fmpq, fmpq_mat

from .. import gguf
from .. import weights as W
from ..derive import PREC, Ctx
from ..jsonio import Invalid, Undecided, rat, ratmat, require
from ..table import MT, dfn, predicate, thm

D3, P1 = "IsRoPELike", "isRoPELike_iff"
FORMS, RW = ("forms",), ("rope_weights",)
H0 = (("h0", "B0_nondegenerate"),)
#: llama.cpp's rope mode per GGUF architecture: NORM rotates adjacent stored rows, NEOX halves
GGUF_PAIRING = {"llama": "interleaved", "qwen2": "half_split", "qwen3": "half_split", "olmo2": "half_split"}


def _G(q: Ctx) -> list[fmpq_mat]:
    def build():
        Gs = [ratmat(B) for B in q.inp["B"]]
        n = Gs[0].nrows()
        require(all(G.nrows() == G.ncols() == n for G in Gs), "input", "the forms must be n×n matrices of one size")
        return Gs
    return q.memo("G", build)


def _k(q: Ctx) -> int:
    return q.inp["k"] if q.kind == "rope_weights" else len(q.inp["B"])


def _T(q: Ctx) -> list[fmpq_mat]:
    """T_d = L_0⁻¹ L_d (Lean ``ropeT``)."""
    return q.memo("T", lambda: [_G(q)[0].inv() * G for G in _G(q)])


def _pow(S: fmpq_mat, d: int) -> fmpq_mat:
    out = fmpq_mat(S.nrows(), S.ncols(), [int(i == j) for i in range(S.nrows()) for j in range(S.ncols())])
    for _ in range(d):
        out = out * S
    return out


def _rope_like(q: Ctx) -> bool:
    if q.kind == "rope_weights":
        return True  # a rotation group in fixed planes (module docstring); h0 is decided from the weights
    T, k = _T(q), _k(q)
    return all(T[d + e] == T[d] * T[e] for d in range(k) for e in range(k - d))


def _pow_side(q: Ctx) -> bool:
    """∃ S, T_d = S^d for d < k: S = T_1 is the only candidate when k ≥ 2; S = 1 otherwise."""
    if q.kind == "rope_weights" or _k(q) < 2:
        return True
    T = _T(q)
    return all(T[d] == _pow(T[1], d) for d in range(_k(q)))


# -- real heads ----------------------------------------------------------------


def _file(q: Ctx) -> Path:
    return q.memo("file", lambda: W.find(q.inp["file"], q.inp["sha256"], q.base_dir, q.weights_dirs))


def _rows(q: Ctx, role: str) -> fmpq_mat:
    """The head's rows [a, b) of W_Q or W_K restricted to the columns ``cols`` (exact)."""
    def build():
        t, p, cols = q.inp[role], _file(q), q.inp["cols"]
        a, b = t["rows"]
        if q.inp["format"] == "gguf":
            vals, C = gguf.rows(p, t["name"], a, b)
            Z, e = W.to_Z(vals, b - a, C)
        else:
            Z, e = W.tensor(p, t["name"], list(range(a, b)))
        require(len(set(cols)) == len(cols) == b - a and all(0 <= c < Z.ncols() for c in cols), "input",
                "cols must name n distinct columns of C")
        M = fmpq_mat([[Z[i, c] for c in cols] for i in range(b - a)])
        return M * (fmpq(2) ** e if e >= 0 else fmpq(1, 2 ** -e))
    return q.memo(("rows", role), build)


def _runtime(q: Ctx) -> dict:
    """The runtime convention: from the GGUF metadata (checked against the input), else the input's."""
    rt = q.inp["runtime"]
    if q.inp["format"] == "gguf":
        meta, _, _ = gguf.header(_file(q))
        arch = meta.get("general.architecture")
        require(arch in GGUF_PAIRING, "input", f"GGUF architecture {arch!r}: its rope mode is not in the kernel's table")
        base = Fraction(meta.get(f"{arch}.rope.freq_base", 10000))
        r = meta.get(f"{arch}.rope.dimension_count", q.inp["W_Q"]["rows"][1] - q.inp["W_Q"]["rows"][0])
        require(rt["pairing"] == GGUF_PAIRING[arch] and rat(rt["base"]) == fmpq(base.numerator, base.denominator)
                and rt["rotary_dim"] == r, "input", f"the runtime convention is not the file's ({arch}, base {base}, {r} rotary dims)")
    return rt


def _planes(spec: dict, n: int, rows: str = "stored") -> frozenset:
    """(row a, row b, frequency index i) of each rotated plane, in stored-row coordinates."""
    r = spec["rotary_dim"]
    require(r % 2 == 0 and 0 < r <= n and n % 2 == 0, "input", f"rotary_dim {r} does not fit heads of {n} rows")
    h = r // 2
    pairs = [(i, i + h) if spec["pairing"] == "half_split" else (2 * i, 2 * i + 1) for i in range(h)]
    # loaded row half·n/2 + i is stored row 2i + half when llama.cpp's permutation was undone
    perm = (lambda x: 2 * (x % (n // 2)) + x // (n // 2)) if rows == "llama_unpermuted" else (lambda x: x)
    return frozenset((perm(a), perm(b), i) for i, (a, b) in enumerate(pairs))


def _rotation(planes: frozenset, base: fmpq, r: int, n: int, prec: int) -> list[list[arb]]:
    """The rotation at distance 1 as enclosures computed at ``prec`` bits."""
    with ctx.workprec(prec):
        R = [[arb(int(i == j)) for j in range(n)] for i in range(n)]
        for a, b, i in planes:
            th = arb(base) ** (arb(-2 * i) / r)
            R[a][a], R[b][b], R[a][b], R[b][a] = th.cos(), th.cos(), -th.sin(), th.sin()
    return R


def _same_rotation(q: Ctx) -> bool:
    """R' = R_1: the reading's rotation is the runtime's (module docstring)."""
    def build():
        rt, rd, n = _runtime(q), q.inp["reading"], len(q.inp["cols"])
        P, P2 = _planes(rt, n), _planes(rd, n, rd["rows"])
        if P == P2 and rat(rt["base"]) == rat(rd["base"]) and rt["rotary_dim"] == rd["rotary_dim"]:
            return True, False
        A, B = (_rotation(p, rat(s["base"]), s["rotary_dim"], n, PREC) for p, s in ((P, rt), (P2, rd)))
        if any(not A[i][j].overlaps(B[i][j]) for i in range(n) for j in range(n)):
            return False, True
        raise Undecided("the two rotations differ in their description but no entry is separated by enclosures")
    same, certified = q.memo("same", build)
    q.certified |= certified
    return same


def _nondegenerate(q: Ctx) -> bool:
    if q.kind == "forms":
        return _G(q)[0].det() != 0
    return _rows(q, "W_K").det() != 0 and _rows(q, "W_Q").det() != 0


def _hS(q: Ctx) -> bool:
    """T_d = S^d for every d < k, S the input's candidate (forms) or the reading's (weights)."""
    if q.kind == "rope_weights":
        return _k(q) < 2 or _same_rotation(q)
    require("S" in q.inp, "input", "eq_ropeT_one_of_forall needs a candidate S")
    if not _nondegenerate(q):
        return False
    S = ratmat(q.inp["S"])
    return all(T == _pow(S, d) for d, T in enumerate(_T(q)))


def _S_is_T1(q: Ctx) -> bool:
    if q.kind == "rope_weights":
        return _same_rotation(q)
    return ratmat(q.inp["S"]) == _T(q)[1]


predicate("B0_nondegenerate", _nondegenerate)
predicate("k_ge_two", lambda q: _k(q) >= 2)
predicate("ropeT_eq_pow", _hS)

dfn(MT + "ropeL", D3, FORMS, lambda q: list(_G(q)))
dfn(MT + "ropeL0Equiv", D3, FORMS, lambda q: [_G(q)[0], _G(q)[0].inv()], H0)
dfn(MT + "ropeT", D3, FORMS, _T, H0)
dfn(MT + "IsRoPELike", D3, FORMS + RW, _rope_like, H0)
thm(MT + P1, P1, FORMS + RW, H0, lambda q: _rope_like(q) == _pow_side(q))
thm(MT + "eq_ropeT_one_of_forall", P1, FORMS + RW,
    (("hk", "k_ge_two"),) + H0 + (("hS", "ropeT_eq_pow"),), _S_is_T1)

__all__ = ["Invalid"]
