"""Def A1 and Lemma 5: symmetric / antisymmetric parts and their energies.

Lean: ``Appendices.frobSq``, ``symPart``, ``skewPart`` (Def A1);
``frobSq_eq_frobSq_symPart_add_frobSq_skewPart``, ``frobSq_symPart``,
``frobSq_skewPart``, ``frobSq_symPart_div``, ``frobSq_skewPart_div``
(Lemma 5, Appendix A).  All checks are exact rational arithmetic.
"""

from __future__ import annotations

from flint import fmpq

from ..exact.matrix import frob_sq, is_antisymmetric, is_symmetric, skew_part, sym_part, to_str_rows, trace
from .common import L_NE_ZERO, q, result
from .registry import Claim, register


def _def_a1(inp):
    L = inp.L
    S, T = sym_part(L), skew_part(L)
    checks = {
        "L = S + T": L == S + T,
        "S symmetric": is_symmetric(S),
        "T antisymmetric": is_antisymmetric(T),
    }
    ok = all(checks.values())
    w = [{"kind": "identity", "matrix": "L", "S": to_str_rows(S), "T": to_str_rows(T), "checks": checks}]
    return result(ok, "exact", w, {"checks": checks}, "failed: " + ", ".join(k for k, v in checks.items() if not v))


def _div(x: fmpq, y: fmpq) -> fmpq:
    """Lean's division: x/0 = 0."""
    return fmpq(0) if y == 0 else x / y


def _lemma5(inp):
    L = inp.L
    S, T = sym_part(L), skew_part(L)
    fL, fS, fT = frob_sq(L), frob_sq(S), frob_sq(T)
    tr2 = trace(L * L)
    half = fmpq(1, 2)
    checks = {
        "‖L‖² = ‖S‖² + ‖T‖²": fL == fS + fT,
        "‖S‖² = ½‖L‖² + ½tr(L²)": fS == half * fL + half * tr2,
        "‖T‖² = ½‖L‖² − ½tr(L²)": fT == half * fL - half * tr2,
        # divided forms, Lean convention x/0 = 0 (need L ≠ 0)
        "‖S‖²/‖L‖² = ½ + tr(L²)/(2‖L‖²)": _div(fS, fL) == half + _div(tr2, 2 * fL),
        "‖T‖²/‖L‖² = ½ − tr(L²)/(2‖L‖²)": _div(fT, fL) == half - _div(tr2, 2 * fL),
    }
    values = {"frobSq_L": q(fL), "frobSq_S": q(fS), "frobSq_T": q(fT), "trace_L_sq": q(tr2)}
    w = [{"kind": "identity", "matrix": "L", "values": values, "checks": checks}]
    ok = all(checks.values())
    return result(ok, "exact", w, values, "failed: " + ", ".join(k for k, v in checks.items() if not v))


register(
    Claim(
        id="symPart",
        label="Definition A1",
        section="Appendix A",
        lean_decls=("Appendices.frobSq", "Appendices.symPart", "Appendices.skewPart"),
        statement="L = S + T with S = (L+Lᵀ)/2 symmetric and T = (L−Lᵀ)/2 antisymmetric.",
        hypotheses=(),
        input_kind="matrix",
        conclusion=_def_a1,
        aliases=("Def A1", "skewPart"),
    )
)

register(
    Claim(
        id="frobSq_eq_frobSq_symPart_add_frobSq_skewPart",
        label="Lemma 5",
        section="Appendix A",
        lean_decls=(
            "Appendices.frobSq_eq_frobSq_symPart_add_frobSq_skewPart",
            "Appendices.frobSq_symPart",
            "Appendices.frobSq_skewPart",
            "Appendices.frobSq_symPart_div",
            "Appendices.frobSq_skewPart_div",
        ),
        statement="‖L‖² = ‖S‖² + ‖T‖², ‖S‖² = ½‖L‖² + ½tr(L²), ‖T‖² = ½‖L‖² − ½tr(L²); for L ≠ 0 divided by ‖L‖².",
        hypotheses=(L_NE_ZERO,),
        input_kind="matrix",
        conclusion=_lemma5,
        aliases=("energy identities",),
    )
)
