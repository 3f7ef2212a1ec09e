"""The claim table: for every Lean declaration the kernel checks, the statement
it belongs to, the input kinds it is evaluated on, its hypotheses (Lean binder
→ predicate) and its conclusion -- a function of the kernel's derived facts.
A definition's entry computes its value by the definition; the certificate's
value must agree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from flint import fmpq, fmpq_mat

from .derive import Ctx, is_zero, lean_div, sym, trace
from .jsonio import Invalid
from .witnesses import fiber_fact


class NotEvaluable(Exception):
    """The declaration's conclusion cannot be evaluated on this input (e.g. the
    existential side of an iff with no candidate given): it must not be listed."""


@dataclass(frozen=True)
class Decl:
    statement: str
    kinds: tuple[str, ...]
    binders: tuple[tuple[str, str], ...]  # (Lean binder, predicate id)
    fn: Callable[[Ctx], Any]
    is_def: bool = False


# ---------------------------------------------------------------------------
# hypotheses, by predicate id


def _n(q: Ctx) -> int:
    return q.inp["n"] if q.kind == "weights" else q.mat("W_Q").nrows()


PREDICATES: dict[str, Callable[[Ctx], bool]] = {
    "L_ne_zero": lambda q: not is_zero(q.mat("L")),
    "nondegenerate": lambda q: q.head_rank() == 2 * _n(q),
    "profileD_eq_zero": lambda q: q.coord_is(q.profile()["d"], fmpq(0)),
    "profileC_eq_zero": lambda q: q.coord_is(q.profile()["c"], fmpq(0)),
}


# ---------------------------------------------------------------------------
# conclusions


def _signs(q: Ctx, of: str = "S") -> tuple[int, int, int]:
    ev = q.eigenvalues_S(of)
    s = [q.sign(x) for x in ev]
    return s.count(1), s.count(-1), s.count(0)


def _one(q: Ctx, name: str) -> bool:
    p = q.profile()
    return q.coord_is(p[name], fmpq(1), others=tuple(p[k] for k in "abcd" if k != name))


def _decomp(q: Ctx, face: str, commute: bool) -> bool:
    """S = H ± P from the input (matrix_fiber) or the fiber witness; the properties are
    checked by fiber_fact (Invalid when they fail).  With ``commute`` also ‖P‖² = c‖L‖²
    (face d) or d‖L‖² (face c)."""
    if q.kind == "matrix_fiber":
        if q.inp["face"] != face:
            raise NotEvaluable("the input's decomposition is for the other face")
        H, P = q.mat("H"), q.mat("P")
    else:
        if not q.coord_is(q.profile()[face], fmpq(0)):
            raise NotEvaluable(f"{face} ≠ 0 and no candidate decomposition is given")
        w = q.witness("fiber", face)
        H, P = (fmpq_mat([[fmpq(x) for x in r] for r in _rows(w[k])]) for k in ("H", "P"))
    normP = fiber_fact(face, q.mat("S"), H, P)
    if q.kind == "matrix_fiber" and not commute:
        return q.coord_is(q.profile()[face], fmpq(0))
    if commute:
        other = "c" if face == "d" else "d"
        return q.coord_exact(other) * q.frob("L") == normP
    return True


def _rows(rows):
    from .jsonio import rat

    return [[rat(x) for x in r] for r in rows]


def _psd(q: Ctx, sgn: int) -> bool:
    p, m, z = _signs(q)
    return (m if sgn > 0 else p) == 0


def _stacked(q: Ctx) -> fmpq_mat:
    return fmpq_mat(q.mat("W_Q").tolist() + q.mat("W_K").tolist())


def _kernel_vectors(q: Ctx, of: str) -> list[fmpq_mat]:
    q.rank(of)
    return [fmpq_mat([[fmpq(int(v))] for v in y]) for y in q.witness("rank", of).get("kernel", [])]


def _radical_eq_ker(q: Ctx) -> bool:
    """rad S = ker J: the left-kernel vectors of S's rank witness (a basis of rad S)
    lie in ker M, and rank S = rank M, so the two spaces have equal dimension."""
    M = q.mat("M")
    return q.rank("S") == q.head_rank() and all(is_zero(M * y) for y in _kernel_vectors(q, "S"))


def _ker_gram(q: Ctx) -> bool:
    """ker G_b = b-coordinates of ker J: B⁻¹y ∈ ker G_b for a basis y of ker J, equal dimensions."""
    Binv, G, M = q.mat("B").inv(), q.mat("gram"), q.mat("M")
    ys = _kernel_vectors(q, "S")
    return (q.rank("gram") == q.head_rank() and all(is_zero(M * y) for y in ys)
            and all(is_zero(G * (Binv * y)) for y in ys))


def _signature(q: Ctx) -> tuple[int, int, int]:
    return _signs(q, "S" if q.kind == "weights" else "gram")


A, MT = "Appendices.", "Appendices.MainText."
MAT, HEAD, HEADS = ("matrix", "matrix_fiber"), ("head",), ("head", "weights")
HL = (("hL", "L_ne_zero"),)
HND = (("hnd", "nondegenerate"),)
T4, L5, D6, T3 = "profile_sum_eq_one", "frobSq_eq_frobSq_symPart_add_frobSq_skewPart", "profile", \
    "heads_have_balanced_attention"


def _entries() -> dict[str, Decl]:
    t: dict[str, Decl] = {}

    def thm(name, st, kinds, binders, fn):
        t[name] = Decl(st, kinds, binders, fn)

    def dfn(name, st, kinds, fn):
        t[name] = Decl(st, kinds, (), fn, True)

    # Definition A1 (Appendices/Common.lean)
    dfn(A + "frobSq", "symPart", MAT, lambda q: trace(q.mat("L").transpose() * q.mat("L")))
    dfn(A + "symPart", "symPart", MAT, lambda q: (q.mat("L") + q.mat("L").transpose()) * fmpq(1, 2))
    dfn(A + "skewPart", "symPart", MAT, lambda q: (q.mat("L") - q.mat("L").transpose()) * fmpq(1, 2))
    # Lemma 5 (EnergyIdentities.lean)
    tr2 = lambda q: trace(q.mat("L") * q.mat("L"))  # noqa: E731
    thm(A + "frobSq_symPart", L5, MAT, (), lambda q: q.frob("S") == q.frob("L") / 2 + tr2(q) / 2)
    thm(A + "frobSq_skewPart", L5, MAT, (), lambda q: q.frob("T") == q.frob("L") / 2 - tr2(q) / 2)
    thm(A + L5, L5, MAT, (), lambda q: q.frob("L") == q.frob("S") + q.frob("T"))
    thm(A + "frobSq_symPart_div", L5, MAT, HL,
        lambda q: lean_div(q.frob("S"), q.frob("L")) == fmpq(1, 2) + lean_div(tr2(q), 2 * q.frob("L")))
    thm(A + "frobSq_skewPart_div", L5, MAT, HL,
        lambda q: lean_div(q.frob("T"), q.frob("L")) == fmpq(1, 2) - lean_div(tr2(q), 2 * q.frob("L")))
    # Definition 6 (Profile.lean)
    dfn(A + "sortDesc", D6, MAT, lambda q: q.sorted_eigenvalues())
    dfn(A + "alphaList", D6, MAT, lambda q: q.alpha_beta()[0])
    dfn(A + "betaList", D6, MAT, lambda q: q.alpha_beta()[1])
    for k in "ABCD":
        dfn(A + f"profile{k}", D6, MAT, lambda q, k=k: q.profile()[k.lower()])
    dfn(MT + "profile", D6, MAT, lambda q: [q.profile()[k] for k in "abcd"])
    # Theorem 4 (SimplexFaces.lean)
    for k in "ABCD":
        thm(A + f"profile{k}_nonneg", T4, MAT, (), lambda q, k=k: q.coord_sign(q.profile()[k.lower()]) >= 0)
    thm(A + "profile_sum_eq_one", T4, MAT, HL, lambda q: q.profile_sum() == 1)
    thm(A + "profileA_eq_zero_iff", T4, MAT, HL,
        lambda q: q.coord_is(q.profile()["a"], fmpq(0)) == (q.mat("L").transpose() == q.mat("L")))
    thm(A + "profileA_eq_one_iff", T4, MAT, HL,
        lambda q: q.coord_is(q.profile()["a"], fmpq(1)) == (q.mat("L").transpose() == -q.mat("L")))
    thm(A + "profileB_eq_zero_iff", T4, MAT, HL,
        lambda q: q.coord_is(q.profile()["b"], fmpq(0)) == (_psd(q, 1) or _psd(q, -1)))
    thm(A + "profileB_eq_one_iff", T4, MAT, HL,
        lambda q: _one(q, "b") == (q.mat("L").transpose() == q.mat("L") and all(o == 0 for o in q.order())))
    thm(A + "profileD_eq_zero_iff_forall", T4, MAT, HL,
        lambda q: q.coord_is(q.profile()["d"], fmpq(0)) == all(o >= 0 for o in q.order()))
    thm(A + "profileC_eq_zero_iff_forall", T4, MAT, HL,
        lambda q: q.coord_is(q.profile()["c"], fmpq(0)) == all(o <= 0 for o in q.order()))
    thm(A + "profileD_eq_zero_iff_decomp", T4, MAT, HL, lambda q: _decomp(q, "d", False))
    thm(A + "profileC_eq_zero_iff_decomp", T4, MAT, HL, lambda q: _decomp(q, "c", False))
    thm(A + "profileD_eq_zero_decomp_commute", T4, MAT, HL + (("h", "profileD_eq_zero"),),
        lambda q: _decomp(q, "d", True))
    thm(A + "profileC_eq_zero_decomp_commute", T4, MAT, HL + (("h", "profileC_eq_zero"),),
        lambda q: _decomp(q, "c", True))
    thm(A + "profileD_eq_one_iff", T4, MAT, HL,
        lambda q: _one(q, "d") == (q.mat("L").transpose() == q.mat("L") and _psd(q, -1)))
    thm(A + "profileC_eq_one_iff", T4, MAT, HL,
        lambda q: _one(q, "c") == (q.mat("L").transpose() == q.mat("L") and _psd(q, 1)))
    # Theorem 3 (BalancedHeads.lean)
    dfn(MT + "stacked", T3, HEAD, _stacked)
    dfn(MT + "Nondegenerate", T3, HEADS, lambda q: q.head_rank() == 2 * _n(q))
    dfn(MT + "headForm", T3, HEAD,
        lambda q: (q.mat("W_K").transpose() * q.mat("W_Q") + q.mat("W_Q").transpose() * q.mat("W_K")) / 2)
    thm(MT + "radical_eq_ker", T3, HEAD, HND, _radical_eq_ker)
    thm(MT + "finrank_radical", T3, HEADS, HND, lambda q: (q.N - q.head_rank()) + 2 * _n(q) == q.N)
    dfn(MT + "gram", T3, HEAD, lambda q: q.mat("gram"))
    dfn(MT + "signature", T3, HEADS, _signature)
    thm(MT + "gram_eq_symPart", T3, HEAD, (),
        lambda q: q.rank("Lgram") <= _n(q) and sym(q.mat("Lgram")) == q.mat("gram"))
    thm(MT + "ker_gram_eq_map", T3, HEAD, HND, _ker_gram)
    thm(MT + T3, T3, HEADS, HND, lambda q: _signature(q) == (_n(q), _n(q), q.N - 2 * _n(q)))
    return t


TABLE: dict[str, Decl] = _entries()
