"""§1 RoPE-like attention: Definition 3 (ropeL, ropeL0Equiv, ropeT, IsRoPELike) and
Proposition 1 (isRoPELike_iff, eq_ropeT_one_of_forall).  Lean: ``MainText/RoPELike.lean``.

``forms`` inputs: B_d(u, v) = uᵀ G_d v on H = ℚ^n, all exact.  ``rope_weights`` inputs: a real
head; on the coordinate subspace H ⊂ C spanned by ``cols`` the model's forms are
G_d = Aᵀ R_d B (A = W_K|_H, B = W_Q|_H in stored row order, R_d the runtime's rotation at
distance d), so T_d = B⁻¹ R_d B.  The candidate S of ``eq_ropeT_one_of_forall`` is the
reading's operator B'⁻¹ R' B' (B' the rows in the reading's order, R' its pairing).

Decided here: B_0's nondegeneracy exactly (det A, det B from the weights); T_d = S^d exactly
when the reading's rotation, carried to stored rows by the row permutation, is the runtime's
(compared as symbolic rotation matrices with sympy symbols for the cosines and sines); when it
is not, certified: an entry of T_1 − S computed from the weights as enclosures excludes 0.  For
display, T_d and S^d are computed from the weights for every d < k and their enclosures compared."""

from __future__ import annotations

import numpy as np
import sympy as sp
from flint import arb, arb_mat, ctx, fmpq, fmpq_mat

from ..errors import QKInputError
from ..io import tensors as TS
from ..math.attention import identity, mat_pow
from . import values as V
from .registry import DeclResult, NotApplicable, Subject, declaration_check, predicate

FORMS, RW, BOTH = ("forms",), ("rope_weights",), ("forms", "rope_weights")
PREC = 192


def _ratmat(rows) -> fmpq_mat:
    return fmpq_mat([[fmpq(*map(int, x.split("/"))) if "/" in x else fmpq(int(x)) for x in r] for r in rows])


def _G(s: Subject) -> list[fmpq_mat]:
    def build():
        Gs = [_ratmat(B) for B in s.inp["B"]]
        n = Gs[0].nrows()
        if any(G.nrows() != n or G.ncols() != n for G in Gs):
            raise QKInputError("forms: every B_d must be an n×n matrix of the same n")
        return Gs
    return s.memo("G", build)


def _k(s: Subject) -> int:
    """k: the input's, else (forms) the number of forms given.  Lean's B is a family indexed by ℕ and k
    a separate argument; a forms input may list more forms than k (B_1 for eq_ropeT_one_of_forall
    at k ≤ 1)."""
    if s.kind == "rope_weights":
        return s.inp["k"]
    k = s.inp.get("k", len(s.inp["B"]))
    if k > len(s.inp["B"]):
        raise NotApplicable(f"k = {k} but only B_0 … B_{len(s.inp['B']) - 1} are given")
    return k


def _L0_inverse(s: Subject) -> fmpq_mat:
    """L_0⁻¹ as a matrix: G_0⁻¹, or Mathlib's ``Matrix.inv`` of a singular G_0, the zero matrix (the
    reading of T_d = L_0⁻¹ L_d used when h0 is dropped: Lean's ``ropeT`` itself needs h0), with the
    inverse witness of B0 (rows, or a null vector) the kernel reads T_d from."""
    def build():
        G0 = _G(s)[0]
        if _inverse_witness(s, G0, "B0"):
            return G0.inv()
        return fmpq_mat(G0.nrows(), G0.nrows())

    return s.memo("L0inv", build)


def _T(s: Subject) -> list[fmpq_mat]:
    """T_d = L_0⁻¹ L_d = G_0⁻¹ G_d for d < k (0 for every d when G_0 is singular)."""
    return s.memo("T", lambda: [_L0_inverse(s) * G for G in _G(s)])


# -- real heads ---------------------------------------------------------------------------------

class Head:
    """A ``rope_weights`` input read with the producer's readers (gguf / safetensors)."""

    def __init__(self, inp):
        self.doc = inp.doc
        self.path = TS.locate(inp["file"], inp["sha256"], inp.source.get("dirs", []))
        cols = self.doc["cols"]
        self.n = len(cols)

        stored = inp.source.get("stored", {})

        def rows(role):
            t = self.doc[role]
            M = stored.get(role)
            if M is None:
                M = TS.array(self.path, t["name"])[t["rows"][0]:t["rows"][1]]
            return TS.exact(np.asarray(M)[:, cols])
        self.A, self.B = rows("W_K"), rows("W_Q")  # stored row order
        with ctx.workprec(PREC):
            self.Binv, self.Barb = arb_mat(self.B.inv()), arb_mat(self.B)
        # the rows as the loader returned them (its reading), when the input was built from a model
        loaded = inp.source.get("loaded_W_Q")
        self.B_read = TS.exact(np.asarray(loaded)[:, cols]) if loaded is not None else None

    def planes(self, spec: dict, rows: str = "stored") -> list[tuple[int, int, int]]:
        """(a, b, i) in stored rows: the loaded row x of a llama.cpp-permuted head is stored row
        σ(x), σ = the inverse of qkverify.models.gguf_model.unpermute_rope's row map."""
        n, r = self.n, spec["rotary_dim"]
        h = r // 2
        pairs = [(i, i + h) if spec["pairing"] == "half_split" else (2 * i, 2 * i + 1) for i in range(h)]
        if rows == "llama_unpermuted":
            idx = np.arange(n).reshape(2, n // 2).T.reshape(-1)  # stored order of the loaded rows
            perm = {int(x): int(p) for p, x in enumerate(idx)}
            return [(perm[a], perm[b], i) for i, (a, b) in enumerate(pairs)]
        return [(a, b, i) for i, (a, b) in enumerate(pairs)]

    def symbolic(self, planes, spec) -> sp.Matrix:
        """The rotation at distance 1 with symbols c_i, s_i (θ_i = base^(−2i/r), tagged by base and r)."""
        R = sp.eye(self.n)
        tag = f"{spec['base']}_{spec['rotary_dim']}"
        for a, b, i in planes:
            c, s_ = sp.Symbol(f"c{i}_{tag}"), sp.Symbol(f"s{i}_{tag}")
            R[a, a], R[b, b], R[a, b], R[b, a] = c, c, -s_, s_
        return R

    def numeric(self, planes, spec, d: int) -> arb_mat:
        with ctx.workprec(PREC):
            R = [[arb(int(i == j)) for j in range(self.n)] for i in range(self.n)]
            base = fmpq(*map(int, spec["base"].split("/"))) if "/" in spec["base"] else fmpq(int(spec["base"]))
            for a, b, i in planes:
                th = d * arb(base) ** (arb(-2 * i) / spec["rotary_dim"])
                R[a][a], R[b][b], R[a][b], R[b][a] = th.cos(), th.cos(), -th.sin(), th.sin()
            return arb_mat(R)

    def conj(self, R: arb_mat) -> arb_mat:
        with ctx.workprec(PREC):
            return self.Binv * R * self.Barb


def _head(s: Subject) -> Head:
    return s.memo("head", lambda: Head(s.inp))


def _decide(s: Subject) -> tuple[bool, str, dict]:
    """(S = T_1, evidence, display numbers) for a real head."""
    def build():
        h = _head(s)
        rt, rd = s.inp["runtime"], s.inp["reading"]
        P_rt, P_rd = h.planes(rt), h.planes(rd, rd["rows"])
        same = h.symbolic(P_rt, rt) == h.symbolic(P_rd, rd)
        T1 = h.conj(h.numeric(P_rt, rt, 1))
        if h.B_read is not None:  # S = B'⁻¹ R' B' with the loader's rows B' and R' in their coordinates
            with ctx.workprec(PREC):
                S = arb_mat(h.B_read.inv()) * h.numeric(h.planes(rd), rd, 1) * arb_mat(h.B_read)
        else:
            S = h.conj(h.numeric(P_rd, rd, 1))
        with ctx.workprec(PREC):
            D = T1 - S
            sep = [(i, j) for i in range(h.n) for j in range(h.n) if not D[i, j].contains(0)]
            info = {"separated_entries_of_T1_minus_S": len(sep)}
            if sep:
                i, j = sep[0]
                info["example"] = {"entry": [i, j], "T1": T1[i, j].str(12, radius=False), "S": S[i, j].str(12, radius=False)}
            worst = arb(0)
            Sd = arb_mat(identity(h.n))
            for d in range(s.inp["k"]):
                Td = h.conj(h.numeric(P_rt, rt, d))
                if d:
                    Sd = Sd * S
                for a in range(h.n):
                    for b in range(h.n):
                        worst = worst.max(abs(Td[a, b] - Sd[a, b]).upper())
            info["max_abs_T_d_minus_S_pow_d_upper"] = worst.upper().str(5, radius=False)
        if same:
            if sep:
                raise ArithmeticError("symbolically equal rotations with separated numeric entries")
            return True, "exact", info
        if sep:
            return False, "certified", info
        raise QKInputError("the reading and the runtime differ but no entry of T_1 − S is separated; raise PREC")
    return s.memo("decide", build)


def rope_report(s: Subject) -> dict:
    """Display numbers of a real head (enclosure comparison of T_d and S^d for d < k)."""
    return _decide(s)[2] if s.kind == "rope_weights" else {}


# -- predicates -----------------------------------------------------------------------------------

def _inverse_witness(s: Subject, X, of: str) -> bool:
    """Whether X is invertible, with the witness the kernel multiplies back: X⁻¹, or a nonzero
    integer v with X·v = 0 (then Lean's X⁻¹ is 0)."""
    from ..exact.rational import fmpq_str

    if X.det() != 0:
        Y = X.inv()
        s.witness({"kind": "inverse", "of": of, "rows": [[fmpq_str(Y[i, j]) for j in range(Y.ncols())]
                                                        for i in range(Y.nrows())]})
        return True
    K, _ = X.numer_denom()[0].nullspace()
    s.witness({"kind": "inverse", "of": of, "null": [str(K[i, 0]) for i in range(K.nrows())]})
    return False


@predicate("B0_nondegenerate")
def _h0(s: Subject) -> bool:
    """B_0 is nondegenerate (binder ``h0``): det G_0 ≠ 0; for a real head det A·det B ≠ 0 (each
    with its inverse witness)."""
    if s.kind == "forms":
        return _inverse_witness(s, _G(s)[0], "B0")
    h = _head(s)
    return _inverse_witness(s, h.A, "WK_H") and _inverse_witness(s, h.B, "WQ_H")


@predicate("k_ge_two")
def _hk(s: Subject) -> bool:
    """2 ≤ k (binder ``hk``)."""
    return _k(s) >= 2


@predicate("ropeT_eq_pow")
def _hS(s: Subject) -> bool:
    """T_d = S^d for every d < k (binder ``hS``), S the input's candidate or the reading's operator."""
    if s.kind == "rope_weights":
        return _k(s) < 2 or _decide(s)[0]
    if "S" not in s.inp.doc:
        return False
    S = _ratmat(s.inp["S"])
    return all(T == mat_pow(S, d) for d, T in enumerate(_T(s)[:_k(s)]))


# -- declarations -----------------------------------------------------------------------------------

@declaration_check("ropeL", FORMS)
def _ropeL(s: Subject) -> DeclResult:
    """L_j(v)(u) = B_j(u, v): the matrix of L_j in the dual basis (column b is L_j(e_b), entry a its
    value at e_a), B_j(e_a, e_b) from the form.  Checked at u = (1, 2, …, n), v = (1, −1, 1, …)
    (distinct, so a transposed L_j shows): L_j(v)(u) from the matrix against B_j(u, v) = Σ u_a B_ab v_b
    summed with sympy from the input's entries as written."""
    Gs = _G(s)
    n = Gs[0].nrows()
    E = [fmpq_mat([[fmpq(int(i == a))] for i in range(n)]) for a in range(n)]
    Ls = [fmpq_mat([[(E[a].transpose() * G * E[b])[0, 0] for b in range(n)] for a in range(n)]) for G in Gs]
    u = fmpq_mat([[a + 1] for a in range(n)])
    v = fmpq_mat([[(-1) ** b] for b in range(n)])
    ok = True
    for L, B in zip(Ls, s.inp["B"]):
        Lv = L * v  # the functional L_j(v) in the dual basis
        lhs = sum((u[a, 0] * Lv[a, 0] for a in range(n)), fmpq(0))
        rhs = sum(sp.Rational(B[a][b]) * (a + 1) * (-1) ** b for a in range(n) for b in range(n))
        ok = ok and sp.Rational(int(lhs.p), int(lhs.q)) == rhs
    return DeclResult(ok, value=V.listv([V.matrix(L) for L in Ls]))


@declaration_check("ropeL0Equiv", FORMS)
def _ropeL0Equiv(s: Subject) -> DeclResult:
    """L_0 as an equivalence H ≃ H^∨: [L_0, L_0⁻¹]; checked: two-sided inverse, coe = ropeL 0."""
    G0 = _G(s)[0]
    if G0.det() == 0:
        raise NotApplicable("B_0 is degenerate: L_0 is not an equivalence (the definition needs h0)")
    inv = _L0_inverse(s)
    return DeclResult(G0 * inv == identity(G0.nrows()) == inv * G0, value=V.listv([V.matrix(G0), V.matrix(inv)]))


@declaration_check("ropeT", FORMS)
def _ropeT(s: Subject) -> DeclResult:
    """T_d = L_0⁻¹ L_d for d < k; checked: L_0 T_d = L_d (ropeL0_comp_ropeT)."""
    T, Gs = _T(s), _G(s)
    if Gs[0].det() == 0:
        raise NotApplicable("B_0 is degenerate: T_d = L_0⁻¹ L_d needs h0 (ropeL0Equiv)")
    return DeclResult(all(Gs[0] * t == g for t, g in zip(T, Gs)), value=V.listv([V.matrix(t) for t in T]))


def _rope_like(s: Subject) -> bool:
    T, k = _T(s), _k(s)
    T = T[:k]
    return all(T[d + e] == T[d] * T[e] for d in range(k) for e in range(k - d))


@declaration_check("IsRoPELike", FORMS)
def _is_rope_like(s: Subject) -> DeclResult:
    """T_{d+e} = T_d T_e for d + e < k; checked against the proof's form L_{d+e} = L_d L_0⁻¹ L_e.
    Not evaluated on a real head (``rope_weights``): there T_d = B⁻¹R_dB has transcendental entries
    (cos dθ, sin dθ), the equalities are the angle-addition identities of the runtime's rotations,
    and an equality of reals is not decided by enclosures."""
    Gs, k = _G(s), _k(s)
    v = _rope_like(s)
    if Gs[0].det() == 0:  # h0 dropped: the proof's form needs L_0 invertible; the value is T's
        return DeclResult(True, value=V.boolean(v))
    inv = _L0_inverse(s)
    other = all(Gs[d + e] == Gs[d] * inv * Gs[e] for d in range(k) for e in range(k - d))
    return DeclResult(v == other, value=V.boolean(v))


@declaration_check("isRoPELike_iff", FORMS)
def _iff(s: Subject) -> DeclResult:
    """IsRoPELike k B ⇔ ∃ S, T_d = S^d for every d < k, both sides computed.  The ∃ side: k = 0,
    vacuous (true); k = 1, T_0 = S^0 = 1 (S arbitrary); k ≥ 2, S = T_1 is the only candidate
    (T_1 = S^1) and T_d = T_1^d is checked for every d < k.  With h0 dropped T_d = 0 (Mathlib's
    inverse of a singular G_0): the left side holds (0 = 0·0), the right side fails for k ≥ 1
    (T_0 = 0 ≠ 1).  Not evaluated on a real head (see IsRoPELike)."""
    T, k = _T(s), _k(s)
    n = _G(s)[0].nrows()
    if k == 0:
        rhs = True
    elif k == 1:
        rhs = T[0] == identity(n)
    else:
        rhs = all(T[d] == mat_pow(T[1], d) for d in range(k))
    lhs = _rope_like(s)
    return DeclResult(lhs == rhs, reason="" if lhs == rhs else f"IsRoPELike is {lhs}, the ∃ S side is {rhs}")


@declaration_check("eq_ropeT_one_of_forall", BOTH)
def _eq_T1(s: Subject) -> DeclResult:
    """S = T_1 for the candidate S (forms: the input's; real heads: the reading's operator)."""
    if s.kind == "rope_weights":
        same, ev, info = _decide(s)
        return DeclResult(same, ev, reason="" if same else f"the reading's S differs from T_1 (certified): {info.get('example')}")
    if "S" not in s.inp.doc:
        raise NotApplicable("no candidate S is given")
    if len(_T(s)) < 2:
        raise NotApplicable("B_1 is not given: T_1 cannot be formed")
    return DeclResult(_ratmat(s.inp["S"]) == _T(s)[1])


__all__ = ["Head", "rope_report"]
