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
    return s.inp["k"] if s.kind == "rope_weights" else len(s.inp["B"])


def _T(s: Subject) -> list[fmpq_mat]:
    return s.memo("T", lambda: [_G(s)[0].solve(G) for G in _G(s)])


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
    if "S" not in s.inp.doc or not _h0(s):
        return False
    S = _ratmat(s.inp["S"])
    return all(T == mat_pow(S, d) for d, T in enumerate(_T(s)))


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
    inv = G0.inv()
    return DeclResult(G0 * inv == identity(G0.nrows()) == inv * G0, value=V.listv([V.matrix(G0), V.matrix(inv)]))


@declaration_check("ropeT", FORMS)
def _ropeT(s: Subject) -> DeclResult:
    """T_d = L_0⁻¹ L_d for d < k; checked: L_0 T_d = L_d (ropeL0_comp_ropeT)."""
    T, Gs = _T(s), _G(s)
    return DeclResult(all(Gs[0] * t == g for t, g in zip(T, Gs)), value=V.listv([V.matrix(t) for t in T]))


def _rope_like(s: Subject) -> bool:
    T, k = _T(s), _k(s)
    return all(T[d + e] == T[d] * T[e] for d in range(k) for e in range(k - d))


@declaration_check("IsRoPELike", BOTH)
def _is_rope_like(s: Subject) -> DeclResult:
    """T_{d+e} = T_d T_e for d + e < k; checked against the proof's form L_{d+e} = L_d L_0⁻¹ L_e.
    Real heads: the runtime's forms are RoPE-like (T_d = B⁻¹R_dB, R_d a rotation group); checked:
    T_{d+e} and T_d T_e computed from the weights overlap for d + e < k."""
    if s.kind == "rope_weights":
        h, rt = _head(s), s.inp["runtime"]
        P = h.planes(rt)
        k = _k(s)
        T = [h.conj(h.numeric(P, rt, d)) for d in range(k)]
        with ctx.workprec(PREC):
            Ds = [T[d + e] - T[d] * T[e] for d in range(k) for e in range(k - d)]
            ok = all(D[a, b].contains(0) for D in Ds for a in range(h.n) for b in range(h.n))
        return DeclResult(ok, value=V.boolean(True))
    Gs, k = _G(s), _k(s)
    inv = Gs[0].inv()
    other = all(Gs[d + e] == Gs[d] * inv * Gs[e] for d in range(k) for e in range(k - d))
    v = _rope_like(s)
    return DeclResult(v == other, value=V.boolean(v))


@declaration_check("isRoPELike_iff", BOTH)
def _iff(s: Subject) -> DeclResult:
    """IsRoPELike k B ⇔ ∃ S, T_d = S^d for d < k; the existential is decided with S = T_1 (the only
    candidate when k ≥ 2, eq_ropeT_one_of_forall) and S = 1 when k ≤ 1."""
    if s.kind == "rope_weights":
        return DeclResult(True)
    T, k = _T(s), _k(s)
    rhs = k < 2 or all(T[d] == mat_pow(T[1], d) for d in range(k))
    return DeclResult(_rope_like(s) == rhs)


@declaration_check("eq_ropeT_one_of_forall", BOTH)
def _eq_T1(s: Subject) -> DeclResult:
    """S = T_1 for the candidate S (forms: the input's; real heads: the reading's operator)."""
    if s.kind == "rope_weights":
        same, ev, info = _decide(s)
        return DeclResult(same, ev, reason="" if same else f"the reading's S differs from T_1 (certified): {info.get('example')}")
    if "S" not in s.inp.doc:
        raise NotApplicable("no candidate S is given")
    return DeclResult(_ratmat(s.inp["S"]) == _T(s)[1])


__all__ = ["Head", "rope_report"]
