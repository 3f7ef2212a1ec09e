"""Definition A1 and Lemma 5: symmetric and antisymmetric parts and their energies.

Lean (``Appendices/Common.lean``, ``RandomMatrices/EnergyIdentities.lean``):
``frobSq L = tr(Lᵀ L)``, ``symPart L = ½(L + Lᵀ)``, ``skewPart L = ½(L − Lᵀ)``;
``frobSq_symPart``: ‖S‖² = ‖L‖²/2 + tr(L²)/2, ``frobSq_skewPart``: ‖T‖² = ‖L‖²/2 −
tr(L²)/2, ``frobSq_eq_frobSq_symPart_add_frobSq_skewPart``: ‖L‖² = ‖S‖² + ‖T‖², and,
for L ≠ 0 only, the divided forms ``frobSq_symPart_div`` / ``frobSq_skewPart_div``.
Everything is exact rational arithmetic; each check compares two quantities
computed independently (a norm of one matrix against a formula in another).
"""

from __future__ import annotations

from flint import fmpq

from ..exact.matrix import entries, frob_sq, is_antisymmetric, is_symmetric, skew_part, sym_part, trace
from . import values as V
from .common import lean_div
from .registry import DeclResult, Subject, declaration_check

MAT = ("matrix",)


def _parts(s: Subject):
    return s.memo("ST", lambda: (sym_part(s.inp.L), skew_part(s.inp.L)))


# Definition A1 -----------------------------------------------------------------


@declaration_check("frobSq", MAT)
def _frobSq(s: Subject) -> DeclResult:
    """frobSq L = tr(LᵀL), checked against frobSq_eq_sum_sq (Σ L_ij²)."""
    L = s.inp.L
    v = trace(L.transpose() * L)
    return DeclResult(v == sum((x * x for x in entries(L)), fmpq(0)), value=V.exact(v))


@declaration_check("symPart", MAT)
def _symPart(s: Subject) -> DeclResult:
    """symPart L = ½(L + Lᵀ), checked against symPart_isSymm and symPart_add_skewPart."""
    S, T = _parts(s)
    return DeclResult(is_symmetric(S) and S + T == s.inp.L, value=V.matrix(S))


@declaration_check("skewPart", MAT)
def _skewPart(s: Subject) -> DeclResult:
    """skewPart L = ½(L − Lᵀ), checked against skewPart_transpose and symPart_add_skewPart."""
    S, T = _parts(s)
    return DeclResult(is_antisymmetric(T) and S + T == s.inp.L, value=V.matrix(T))


# Lemma 5 -----------------------------------------------------------------------


def _norms(s: Subject):
    def build():
        S, T = _parts(s)
        L = s.inp.L
        return frob_sq(L), frob_sq(S), frob_sq(T), trace(L * L)

    return s.memo("norms", build)


@declaration_check("frobSq_symPart", MAT)
def _fs(s: Subject) -> DeclResult:
    fL, fS, fT, t2 = _norms(s)
    return DeclResult(fS == fL / 2 + t2 / 2)


@declaration_check("frobSq_skewPart", MAT)
def _ft(s: Subject) -> DeclResult:
    fL, fS, fT, t2 = _norms(s)
    return DeclResult(fT == fL / 2 - t2 / 2)


@declaration_check("frobSq_eq_frobSq_symPart_add_frobSq_skewPart", MAT)
def _fsum(s: Subject) -> DeclResult:
    fL, fS, fT, t2 = _norms(s)
    return DeclResult(fL == fS + fT)


@declaration_check("frobSq_symPart_div", MAT)
def _fs_div(s: Subject) -> DeclResult:
    fL, fS, fT, t2 = _norms(s)
    return DeclResult(lean_div(fS, fL) == fmpq(1, 2) + lean_div(t2, 2 * fL))


@declaration_check("frobSq_skewPart_div", MAT)
def _ft_div(s: Subject) -> DeclResult:
    fL, fS, fT, t2 = _norms(s)
    return DeclResult(lean_div(fT, fL) == fmpq(1, 2) - lean_div(t2, 2 * fL))
