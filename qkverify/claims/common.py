"""Small helpers shared by the claim modules (witness assembly, hypotheses)."""

from __future__ import annotations

from flint import fmpq, fmpq_mat

from ..exact.inertia import Inertia, inertia_charpoly, inertia_ldlt
from ..exact.matrix import frob_sq
from ..exact.rational import fmpq_str
from .registry import predicate


def q(x) -> str:
    """Exact "p/q" text of a rational."""
    return fmpq_str(fmpq(x))


def inertia_both(X: fmpq_mat, name: str, use_ldlt: bool = True) -> tuple[Inertia, list[dict]]:
    """Exact inertia of symmetric X by charpoly+Descartes and (if
    ``use_ldlt``) LDLᵀ; ArithmeticError if they disagree.  Returns the
    inertia and the two witnesses labelled with ``matrix`` = name."""
    a = inertia_charpoly(X)
    ws = [dict(a.witness, matrix=name, inertia=a.to_json())]
    if use_ldlt:
        b = inertia_ldlt(X)
        if a.triple() != b.triple():
            raise ArithmeticError(f"inertia methods disagree on {name}: {a.triple()} vs {b.triple()}")
        ws.append(dict(b.witness, matrix=name, inertia=b.to_json()))
    return a, ws


# hypotheses used by several sections ---------------------------------------

def lean_div(x: fmpq, y: fmpq) -> fmpq:
    """Lean's division on ℝ: x / 0 = 0.

    >>> lean_div(fmpq(1), fmpq(0))
    0
    """
    return fmpq(0) if y == 0 else x / y


# hypothesis predicates (lean_map ``predicate`` ids) shared by several sections ----


@predicate("L_ne_zero")
def _L_ne_zero(s) -> bool:
    """L ≠ 0 (Lean binder ``hL``)."""
    return frob_sq(s.inp.L) != 0


def spectrum_witness(S: fmpq_mat, of: str, prec: int = 160) -> dict:
    """The ``spectrum`` witness of a rational symmetric S (docs/CERTIFICATES.md): the
    common denominator D, the irreducible factors of charpoly(D·S) with multiplicities
    and, for each, its real roots in sorted rational intervals about 2^-prec wide
    (FLINT's certified isolation, each re-checked by an exact sign change)."""
    from ..exact.algebraic import charpoly_factors, isolate_real_roots

    D, facs = charpoly_factors(S)
    out = []
    for f, e in facs:
        cs = [int(c) for c in f.coeffs()]
        if f.degree() == 1:
            r = fmpq(-cs[0], cs[1])
            roots = [[fmpq_str(r), fmpq_str(r)]]
        else:
            roots = [[fmpq_str(lo), fmpq_str(hi)] for lo, hi in isolate_real_roots(f, prec)]
        out.append({"poly": [str(c) for c in cs], "multiplicity": e, "roots": roots})
    out.sort(key=lambda x: (len(x["poly"]), x["poly"]))
    return {"kind": "spectrum", "of": of, "scale": str(D), "factors": out}


def rank_witness(A: fmpq_mat, of: str) -> dict:
    """The ``rank`` witness of a rational matrix (docs/CERTIFICATES.md): a nonzero maximal
    minor of D·A modulo a prime and, below full row rank, an integer basis of the left
    kernel with its own nonzero minor."""
    from ..exact.matrix import rank_certificate

    rc = rank_certificate(A)
    w = {"kind": "rank", "of": of, "scale": str(rc.scale), "rank": rc.rank, "rows": rc.rows, "cols": rc.cols,
         "prime": str(rc.prime), "minor_mod_p": str(rc.minor_mod_p)}
    if rc.left_kernel:
        w.update(kernel=[[str(v) for v in y] for y in rc.left_kernel], kernel_cols=rc.kernel_cols,
                 kernel_minor_mod_p=str(rc.kernel_minor_mod_p), kernel_prime=str(rc.kernel_prime))
    return w


def witnessed_rank(s, A: fmpq_mat, of: str) -> int:
    """rank A, exactly, with its ``rank`` witness of ``of`` recorded on the subject ``s`` once
    (memoised per ``of``: every declaration of a certificate shares one witness)."""
    def build():
        w = rank_witness(A, of)
        s.witness(w)
        return w["rank"]

    return s.memo(("rank", of), build)


@predicate("is_symmetric")
def _is_symmetric(s) -> bool:
    """The matrix the declaration takes is symmetric (Lean binders ``hS``, ``hA``): on a matrix input
    the input matrix itself (alphaList S hS, Lemma 2 and signature take any S, so a non-symmetric
    input is outside them, as in Lean); on a head the Gram matrix Bᵀ·symPart(L)·B (decided exactly);
    a weights head's A is symPart L, symmetric by Lean's symPart_isHermitian (not recomputed at
    N × N)."""
    from ..exact.matrix import is_symmetric, sym_part

    if s.kind == "weights":
        return True
    if s.kind == "head":
        S = sym_part(s.inp.L)
        G = S if s.inp.B is None else s.inp.B.transpose() * S * s.inp.B
        return is_symmetric(G)
    return is_symmetric(s.inp.L)
