"""Definition A1 (Common.lean) and Lemma 5 (EnergyIdentities.lean)."""

from __future__ import annotations

from flint import fmpq

from ..derive import is_zero, lean_div, trace
from ..table import A, dfn, predicate, thm

MAT = ("matrix", "matrix_fiber")
HL = (("hL", "L_ne_zero"),)
L5 = "frobSq_eq_frobSq_symPart_add_frobSq_skewPart"

predicate("L_ne_zero", lambda q: not is_zero(q.mat("L")))

dfn(A + "frobSq", "symPart", MAT, lambda q: trace(q.mat("L").transpose() * q.mat("L")))
dfn(A + "symPart", "symPart", MAT, lambda q: (q.mat("L") + q.mat("L").transpose()) * fmpq(1, 2))
dfn(A + "skewPart", "symPart", MAT, lambda q: (q.mat("L") - q.mat("L").transpose()) * fmpq(1, 2))


def _tr2(q) -> fmpq:
    return trace(q.mat("L") * q.mat("L"))


thm(A + "frobSq_symPart", L5, MAT, (), lambda q: q.frob("S") == q.frob("L") / 2 + _tr2(q) / 2)
thm(A + "frobSq_skewPart", L5, MAT, (), lambda q: q.frob("T") == q.frob("L") / 2 - _tr2(q) / 2)
thm(A + L5, L5, MAT, (), lambda q: q.frob("L") == q.frob("S") + q.frob("T"))
thm(A + "frobSq_symPart_div", L5, MAT, HL,
    lambda q: lean_div(q.frob("S"), q.frob("L")) == fmpq(1, 2) + lean_div(_tr2(q), 2 * q.frob("L")))
thm(A + "frobSq_skewPart_div", L5, MAT, HL,
    lambda q: lean_div(q.frob("T"), q.frob("L")) == fmpq(1, 2) - lean_div(_tr2(q), 2 * q.frob("L")))
