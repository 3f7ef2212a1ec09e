"""Lemma 2 (PairingBound.lean; S = symPart L, λ± = α, β of S) and Lemma 3 (RankBalance.lean).
Square roots: by squaring when ‖λ₊‖², ‖λ₋‖², ⟨λ₊,λ₋⟩ are rational; in the equality case λ₋ = ρλ₊
through (1−𝒫)² = (1−ρ)²Σλ²/((1+ρ²)‖S‖²), (1−bound)² = (1−ρ)²/(1+ρ²); else by enclosures."""

from __future__ import annotations

from flint import arb, fmpq, fmpz_poly

from ..algebra import Root, precision, to_arb
from ..algebra import Coord
from ..derive import Ctx, derived, lean_div
from ..jsonio import Undecided
from ..table import MT, dfn, predicate, thm
from ..wellformed import Args, kind, matrix, square
from . import definition6 as Def6
from .profile import signs

L2, MAT, HS = "pairing_bound", ("matrix",), (("hS", "is_symmetric"),)


def _q(x) -> bool:
    return isinstance(x, fmpq)


def power_sum(q: Ctx) -> fmpq:
    """Σλ² = ‖λ₊‖² + ‖λ₋‖² over the certified spectrum of S (Newton on its factors)."""
    return q.fact("spectrum", "S").power_sum_2


def sums(q: Ctx) -> tuple:
    """(A, B, C, Σλ²): ‖λ₊‖², ‖λ₋‖², ⟨λ₊, λ₋⟩ when rational (one norm may be Σλ² minus the other)."""
    al, be = Def6.alpha_beta(q, "S")
    p2 = power_sum(q)
    A = sum((x * x for x in al), fmpq(0)) if all(map(_q, al)) else None
    B = sum((x * x for x in be), fmpq(0)) if all(map(_q, be)) else None
    A, B = (p2 - B if A is None and B is not None else A), (p2 - A if B is None and A is not None else B)
    ok = all((_q(x) and _q(y)) or (_q(x) and x == 0) or (_q(y) and y == 0) for x, y in zip(al, be))
    return A, B, sum((x * y for x, y in zip(al, be) if _q(x) and _q(y)), fmpq(0)) if ok else None, p2


def proportional(q: Ctx) -> bool:
    """λ₋ = ρλ₊ (ρ = 0 when λ₊ = 0): from the supports, rational entries or ratio 1; refuted by an
    enclosure (certified); out of reach for an irrational ratio ≠ 1."""
    al, be = Def6.alpha_beta(q, "S")
    m, k = sum(q.sign(x) > 0 for x in al), sum(q.sign(y) > 0 for y in be)
    if k == 0 or m != k or m == 1:
        return k == 0 or m == k
    if all(map(_q, al[:m] + be[:m])):
        return all(b * al[0] == be[0] * a for a, b in zip(al[:m], be[:m]))
    if q.cmp(al[0], be[0]) == 0:
        return all(q.cmp(a, b) == 0 for a, b in zip(al[:m], be[:m]))
    with precision(256):
        if any(not (to_arb(b, 256) * to_arb(al[0], 256) - to_arb(be[0], 256) * to_arb(a, 256)).contains(0)
               for a, b in zip(al[1:m], be[1:m])):
            q.certified = True
            return False
    raise Undecided("λ₋ ∥ λ₊ with an irrational ratio ≠ 1 is out of the kernel's reach")


def _balls(q: Ctx, bits: int) -> tuple[arb, arb]:
    """Enclosures of 𝒫 and of 1 − |1−ρ|/√(1+ρ²)."""
    A, B = ([to_arb(x, bits) for x in xs] for xs in Def6.alpha_beta(q, "S"))
    E = sum(((x - y) * (x - y) for x, y in zip(A, B)), arb(0))
    rho = sum((y * y for y in B), arb(0)).sqrt() / sum((x * x for x in A), arb(0)).sqrt()
    return 1 - (E * arb(lean_div(fmpq(1), q.frob("S")))).nonnegative_part().sqrt(), 1 - abs(1 - rho) / (1 + rho * rho).sqrt()


def pairing_score(q: Ctx):
    """𝒫 = 1 − ‖λ₊−λ₋‖/√‖S‖² (x/0 = 0): a rational or the root below 1 of d(1−x)² = p when
    (1−𝒫)² = p/d is rational, else an enclosure."""
    A, B, C, _ = sums(q)
    if None in (A, B, C):
        with precision(140):
            return Coord(_balls(q, 140)[0], None, False)
    x2 = lean_div(A + B - 2 * C, q.frob("S"))
    p, d = x2.p, x2.q
    if p.isqrt() ** 2 == p and d.isqrt() ** 2 == d:
        return 1 - fmpq(p.isqrt(), d.isqrt())
    return Root(fmpz_poly([d - p, -2 * d, d]), -x2, fmpq(1))


def _pairing_bound(q: Ctx) -> bool:
    """(i) 𝒫 = 1 − √(1 − 2⟨λ₊,λ₋⟩/‖S‖²), (ii) 𝒫 ≤ bound, (iii) 𝒫 = bound ↔ λ₋ = ρλ₊."""
    (A, B, C, p2), F, prop = sums(q), q.frob("S"), proportional(q)
    if None not in (A, B, C):  # (1−𝒫)² = x2, (1−bound)² = 1 − 2ρ/(1+ρ²), ρ² = s
        x2 = lean_div(A + B - 2 * C, F)
        s, r = lean_div(B, A), 1 - x2
        eq = r >= 0 and r * r * (1 + s) ** 2 == 4 * s
        return x2 == max(fmpq(0), 1 - 2 * lean_div(C, F)) and (r <= 0 or r * r * (1 + s) ** 2 <= 4 * s) and eq == prop
    if prop:  # radicands agree iff Σλ² = ‖S‖²; ρ = 1 iff α₁ = β₁
        one = q.cmp(Def6.alpha_beta(q, "S")[0][0], Def6.alpha_beta(q, "S")[1][0]) == 0
        return p2 == F and (one or p2 >= F) and (one or p2 == F)
    q.certified = True
    for bits in (128, 512, 2048):
        with precision(bits + 32):
            P, bound = _balls(q, bits)
        if bound > P or bound < P:
            return p2 == F and bound > P  # strict: both sides of (iii) false
    raise Undecided("𝒫 and the bound are not separated at 2048 bits")


def _norm_sq(q: Ctx) -> bool:
    """frobSq S = ‖λ₊‖² + ‖λ₋‖² (Σα² + Σβ² when rational, else Σλ² of the spectrum)."""
    A, B, _, p2 = sums(q)
    return q.frob("S") == (A + B if None not in (A, B) else p2)


predicate("lamPlus_ne_zero", lambda q: signs(q)[0] > 0)
dfn(MT + "lamPlusVec", L2, MAT, lambda q: Def6.alpha_beta(q, "S")[0], HS)
dfn(MT + "lamMinusVec", L2, MAT, lambda q: Def6.alpha_beta(q, "S")[1], HS)
dfn(MT + "pairingScoreSym", L2, MAT, pairing_score, HS)
thm(MT + "frobSq_eq_norm_sq_add_norm_sq", L2, MAT, HS, _norm_sq)
thm(MT + "pairing_bound", L2, MAT, HS + (("hplus", "lamPlus_ne_zero"),), _pairing_bound)


# Lemma 3: rank_balance on (L, n); finrank_le_of_posDefOn on (L, n, basis rows of V)


def _dim_V(q: Ctx) -> int:
    return q.rank("V")


def _posdef_on(q: Ctx) -> bool:
    """posDefOn (symPart L) V, V spanned by the rows of V: with the rows a basis (rank witness),
    x = Vᵀc, S ≻ 0 on V iff G = V S Vᵀ ≻ 0 -- the definite fact of G (LDLᵀ multiplied back, or an
    x with xᵀGx ≤ 0); the kernel takes no determinant."""
    return _dim_V(q) == q.mat("V").nrows() and q.fact("definite", "VSVt").positive


derived("VSVt")(lambda q: q.mat("V") * q.mat("S") * q.mat("V").transpose())


HRANK = (("hrank", "rank_le_n"),)
predicate("rank_le_n", lambda q: q.rank("L") <= q.arg("n"))
predicate("symPart_posdef_on", _posdef_on)
thm(MT + "rank_balance", "rank_balance", ("matrix_bound", "matrix_subspace"), HRANK,
    lambda q: max(signs(q)[:2]) <= q.arg("n"))
thm(MT + "finrank_le_of_posDefOn", "rank_balance", ("matrix_subspace",), HRANK + (("hV", "symPart_posdef_on"),),
    lambda q: _dim_V(q) <= q.arg("n"))


# -- the input kinds of this section: their Lean types (the well-formedness pass, kernel/wellformed.py)


@kind("matrix_bound")
def _wf_matrix_bound(i: dict) -> Args:
    return Args(L=square(i["L"], "L"), n=i["n"])


@kind("matrix_subspace")
def _wf_matrix_subspace(i: dict) -> Args:
    L = square(i["L"], "L")
    return Args(L=L, n=i["n"], V=matrix(i["V"], "V (rows spanning the subspace)", cols=L.nrows()))
