"""Small helpers shared by the claim modules (witness assembly, hypotheses)."""

from __future__ import annotations

import hashlib
import random

from flint import fmpq, fmpq_mat, fmpz_mat

from ..exact.inertia import Inertia, inertia_charpoly, inertia_ldlt
from ..exact.matrix import frob_sq, rank, to_str_rows
from ..exact.rational import fmpq_str
from .registry import Hypothesis, Result


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


def result(ok: bool, evidence: str, witnesses: list[dict], values: dict, reason_fail: str = "", convention=None) -> Result:
    """Result with verdict holds/fails from ``ok``; the reason is kept only for a failure."""
    return Result(
        "holds" if ok else "fails",
        evidence,
        {"witnesses": witnesses},
        values,
        convention,
        "" if ok else reason_fail,
    )


def seeded_rng(*parts) -> random.Random:
    """Deterministic RNG from the exact input (byte-identical certificates)."""
    h = hashlib.sha256(repr(parts).encode()).digest()
    return random.Random(int.from_bytes(h[:8], "big"))


def random_invertible(rng: random.Random, n: int) -> fmpq_mat:
    """A random rational invertible n x n matrix (small integers), exact."""
    while True:
        B = fmpq_mat([[fmpq(rng.randint(-3, 3)) for _ in range(n)] for _ in range(n)])
        if B.det() != 0:
            return B


# hypotheses used by several sections ---------------------------------------

def _L(inp):
    return inp.L


L_NE_ZERO = Hypothesis("L_ne_zero", "L ≠ 0", lambda inp: frob_sq(_L(inp)) != 0)
