"""Clustering regimes (docs/MATH.md; Geshkovski, Letrouit, Polyanskiy, Rigollet, "The emergence of clusters in
self-attention dynamics"): the definitions that decide which regime theorem applies to a
triple (Q, K, V), checked unit by unit (certificate format 2).

The statements have no Lean declarations in our formalisation; each ``[[decl]]`` of the
``lean_map/clusters_*.toml`` files is a *check unit* named by its check id
(``clusters.good_triple`` …).  The definitions are computed here and by the kernel
(``qkverify/kernel/rules/clusters.py``) from the witnesses:

* ``clusters.qk_positive_definite`` (Definition QᵀK ≻ 0): [QᵀK symmetric, its symmetric
  part PD, QᵀK ≻ 0] -- exact (``definite`` witness: LDLᵀ or a vector with xᵀSx ≤ 0);
* Definition 4.1 (good triple): ``clusters.top_eigenvalue_simple_positive``,
  ``clusters.top_eigenvalue``, ``clusters.qk_phi1`` (⟨Qφ₁, Kφ₁⟩ for a unit φ₁) and
  ``clusters.good_triple`` -- exact when every eigenvalue of V is real and λ₁ rational,
  certified otherwise (``croots`` and ``eigvec`` witnesses);
* paranormal V: ``clusters.paranormal`` and ``clusters.paranormal_eigenvalue`` ([λ, (dim F,
  dim G)]); good triple with multiplicity: ``clusters.good_triple_multiplicity``.

Inputs: a rational triple (``triple``) or one head of a weights file (``value_head``: the
good-triple units on X = W_V·W_O, see :mod:`qkverify.math.regimes`).  The regime theorems
(3.1, 4.2, 5.2, 8.5) and Theorem 2.1 conclude about t → ∞; they are mapped, not checked:
their hypotheses are these definitions, and ``qkverify simulate`` tests them empirically.
"""

from __future__ import annotations

from flint import fmpq_mat, fmpq_poly

from ..exact.matrix import identity
from ..math import regimes as R
from . import values as V
from .registry import DeclResult, NotApplicable, Subject, declaration_check, predicate

TRIPLE = ("triple",)
HEADS = ("triple", "value_head")


def _mats(s: Subject) -> dict:
    """X (its spectrum decides), A and G with ⟨Qφ₁, Kφ₁⟩/|φ₁|² = ψᵀAψ/ψᵀGψ, the witness name."""
    def build():
        inp = s.inp
        if s.kind == "triple":
            return {"X": inp.V, "A": inp.Q.transpose() * inp.K, "G": identity(inp.d), "of": "V"}
        QO, KO = inp.W_Q * inp.W_O, inp.W_K * inp.W_O
        return {"X": inp.W_V * inp.W_O, "A": QO.transpose() * KO, "G": inp.W_O.transpose() * inp.W_O, "of": "VO"}

    return s.memo("clusters_mats", build)


def _spectrum(s: Subject) -> R.Spectrum:
    def build():
        try:
            return R.spectrum(_mats(s)["X"], R.ROOT_PREC)
        except R.Undecided as err:
            raise NotApplicable(f"undecided: {err}") from None

    sp = s.memo("clusters_spectrum", build)
    s.witness(sp.witness(_mats(s)["of"]))
    return sp


def _level(s: Subject, exact: bool = True) -> str:
    """certified as soon as V has a non-real eigenvalue (its box decides), else exact."""
    return "exact" if exact and all(e.real for e in _spectrum(s).eigs) else "certified"


def _top(s: Subject) -> R.Eig | None:
    def build():
        try:
            return R.dominant(_spectrum(s), simple=True)[0]
        except R.Undecided as err:
            raise NotApplicable(f"undecided: {err}") from None

    return s.memo("clusters_top", build)


def _qk(s: Subject) -> R.QKValue:
    def build():
        top = _top(s)
        if top is None:
            raise NotApplicable("the top eigenvalue is not real, positive and simple")
        M = _mats(s)
        try:
            return R.qk_phi1(_spectrum(s), top, M["A"], M["G"], M["of"], 2 * R.ROOT_PREC)
        except R.Undecided as err:
            raise NotApplicable(f"undecided: {err}") from None

    v = s.memo("clusters_qk", build)
    s.witness(v.witness)
    return v


def _pd(s: Subject) -> R.Definiteness:
    d = s.memo("clusters_pd", lambda: R.definiteness(_mats(s)["A"]))
    s.witness(d.witness)
    return d


def _para(s: Subject) -> R.Paranormal:
    def build():
        try:
            return R.paranormal(_spectrum(s))
        except R.Undecided as err:
            raise NotApplicable(f"undecided: {err}") from None

    p = s.memo("clusters_para", build)
    if p.witness is not None:
        s.witness(p.witness)
    return p


def real_value(e: R.Eig) -> dict:
    """A real eigenvalue as a certificate value: exact, or an enclosure of its isolating interval."""
    return V.exact(e.exact) if e.exact is not None else V.enclosure_q(e.lo, e.hi)


def _charpoly_root(X: fmpq_mat, e: R.Eig, mult: int | None = None) -> bool:
    """e is a root of det(tI − X) computed directly by FLINT (not from the spectrum's factors):
    exactly (with multiplicity ``mult`` when given), or, for an isolating interval of a simple root,
    a sign change of the characteristic polynomial over [lo, hi]."""
    p = X.charpoly()
    if e.exact is not None:
        if p(e.exact) != 0:
            return False
        if mult is None:
            return True
        lin = fmpq_poly([-e.exact, 1])
        return p % lin ** mult == 0 and p % lin ** (mult + 1) != 0
    return (mult in (None, 1)) and p(e.lo) * p(e.hi) <= 0


def _sylvester_pd(A: fmpq_mat) -> bool:
    """sym(A) ≻ 0 by Sylvester's criterion: every leading principal minor of (A + Aᵀ)/2 is > 0 (FLINT
    determinants; the producer decides by LDLᵀ)."""
    S = (A + A.transpose()) / 2
    return all(fmpq_mat([[S[i, j] for j in range(m)] for i in range(m)]).det() > 0 for m in range(1, S.nrows() + 1))


def _sturm_agrees(s: Subject) -> bool:
    """The real eigenvalues of the spectrum against a Sturm count of each factor's real roots."""
    from ..exact.algebraic import real_roots

    sp = _spectrum(s)
    return sum(len(real_roots(g)) for g, _ in sp.factors) == sum(e.real for e in sp.eigs)


def _para_consistent(s: Subject, p: R.Paranormal) -> bool:
    """When V is paranormal with λ rational: F ⊕ G = R^d, V F ⊆ F (F the λ-eigenvectors), V G ⊆ G."""
    if not (p.holds and p.F is not None):
        return True
    X = _mats(s)["X"]
    FG = fmpq_mat([list(a) + list(b) for a, b in zip(p.F.tolist(), p.G.tolist())]) if p.G.ncols() else p.F
    return FG.rank() == X.nrows() and X * p.F == p.F * p.lam.exact and (
        p.G.ncols() == 0 or fmpq_mat([list(a) + list(b) for a, b in zip(p.G.tolist(), (X * p.G).tolist())]).rank()
        == p.G.ncols())


@predicate("top_eigenvalue_simple_positive")
def _p_top(s: Subject) -> bool:
    return _top(s) is not None


@predicate("V_paranormal")
def _p_para(s: Subject) -> bool:
    return _para(s).holds


@declaration_check("clusters.top_eigenvalue_simple_positive", HEADS)
def _top_cond(s: Subject) -> DeclResult:
    """Definition 4.1, first condition; the real-root count is cross-checked by Sturm."""
    top = _top(s)
    return DeclResult(_sturm_agrees(s), _level(s), V.boolean(top is not None))


@declaration_check("clusters.top_eigenvalue", HEADS)
def _top_value(s: Subject) -> DeclResult:
    """λ₁, exact when rational, else the enclosure of its isolating interval; checked: a simple
    positive root of the characteristic polynomial computed directly (:func:`_charpoly_root`)."""
    top = _top(s)
    if top is None:
        raise NotApplicable("the top eigenvalue is not real, positive and simple")
    ok = _charpoly_root(_mats(s)["X"], top, 1) and (top.exact > 0 if top.exact is not None else top.lo >= 0)
    return DeclResult(ok, _level(s), real_value(top))


@declaration_check("clusters.qk_phi1", HEADS)
def _qk_value(s: Subject) -> DeclResult:
    """⟨Qφ₁, Kφ₁⟩ for a unit eigenvector; cross-check: the residual (V − λ₁I)φ₁ encloses 0
    (exact eigenvector: equals 0)."""
    v = _qk(s)
    val = V.exact(v.exact) if v.exact is not None else V.enclosure(v.ball)
    return DeclResult(v.residual_ok, _level(s, v.exact is not None), val)


@declaration_check("clusters.good_triple", HEADS)
def _good(s: Subject) -> DeclResult:
    """Definition 4.1: the top-eigenvalue condition and ⟨Qφ₁, Kφ₁⟩ > 0 (NotApplicable when the
    enclosure of ⟨Qφ₁, Kφ₁⟩ contains 0)."""
    if _top(s) is None:
        return DeclResult(_sturm_agrees(s), _level(s), V.boolean(False))
    v = _qk(s)
    if v.sign is None:
        raise NotApplicable("undecided: the enclosure of ⟨Qφ₁, Kφ₁⟩ contains 0")
    # checked: the sign against ψᵀAψ for an eigenvector ψ from FLINT's nullspace of X − λ₁I (λ₁
    # rational; ψᵀGψ > 0), or against the enclosure of ⟨Qφ₁, Kφ₁⟩ (λ₁ irrational)
    top, M = _top(s), _mats(s)
    if top.exact is not None:
        Z = M["X"] - identity(M["X"].nrows()) * top.exact
        N, k = Z.numer_denom()[0].nullspace()
        psi = fmpq_mat([[N[i, 0]] for i in range(Z.nrows())])
        num, den = (psi.transpose() * M["A"] * psi)[0, 0], (psi.transpose() * M["G"] * psi)[0, 0]
        ok = k == 1 and den > 0 and (num > 0) == (v.sign > 0)
    else:
        ok = (v.ball > 0) == (v.sign > 0)
    return DeclResult(ok, _level(s, v.exact is not None), V.boolean(v.sign > 0))


@declaration_check("clusters.qk_positive_definite", TRIPLE)
def _qkpd(s: Subject) -> DeclResult:
    """[QᵀK symmetric, sym(QᵀK) ≻ 0, QᵀK ≻ 0]; LDLᵀ and the characteristic polynomial agree
    (checked inside :func:`qkverify.math.regimes.definiteness`)."""
    d = _pd(s)
    A = _mats(s)["A"]
    symmetric = all(A[i, j] == A[j, i] for i in range(A.nrows()) for j in range(i))
    ok = d.symmetric == symmetric and d.sym_pd == _sylvester_pd(A) and d.pd == (symmetric and _sylvester_pd(A))
    return DeclResult(ok, "exact", V.listv([V.boolean(d.symmetric), V.boolean(d.sym_pd), V.boolean(d.pd)]))


@declaration_check("clusters.paranormal", TRIPLE)
def _paranormal(s: Subject) -> DeclResult:
    """V paranormal; when it is and λ is rational, F ⊕ G = R^d with V F ⊆ F, V G ⊆ G is checked exactly."""
    p = _para(s)
    return DeclResult(_para_consistent(s, p), _level(s), V.boolean(p.holds))


@declaration_check("clusters.paranormal_eigenvalue", TRIPLE)
def _paranormal_value(s: Subject) -> DeclResult:
    """[λ, (dim F, dim G)]; checked: λ is a root of the characteristic polynomial (computed directly)
    of multiplicity dim F, dim F + dim G = d, and for λ rational rank(V − λI) = dim G (FLINT rank)."""
    p = _para(s)
    if p.dims is None:  # hV dropped on a V that is not paranormal: λ, F and G do not exist
        raise NotApplicable("V is not paranormal: λ, F and G are not defined")
    X = _mats(s)["X"]
    n = X.nrows()
    ok = p.dims[0] + p.dims[1] == n and _charpoly_root(X, p.lam, p.dims[0])
    if p.lam.exact is not None:
        ok = ok and (X - identity(n) * p.lam.exact).rank() == p.dims[1]
    return DeclResult(ok, _level(s), V.listv([real_value(p.lam), V.ints(p.dims)]))


@declaration_check("clusters.good_triple_multiplicity", TRIPLE)
def _gtm(s: Subject) -> DeclResult:
    """QᵀK ≻ 0 and V paranormal; checked: QᵀK ≻ 0 against Sylvester's criterion (with QᵀK
    symmetric) and the paranormal decomposition as in ``clusters.paranormal``."""
    d, p = _pd(s), _para(s)  # both evaluated: the certificate carries both witnesses
    A = _mats(s)["A"]
    ok = d.pd == (A == A.transpose() and _sylvester_pd(A)) and _para_consistent(s, p)
    return DeclResult(ok, _level(s), V.boolean(d.pd and p.holds))
