"""Lemma 2 (PairingBound.lean) and Lemma 3 (RankBalance.lean).

Lemma 2 lives on ``matrix`` inputs with S = symPart L; α, β are the kernel's
alphaList/betaList of S (certified spectrum).  Square roots are decided by
squaring where the quantities are rational (every α_j, β_j rational, or one of
‖λ₊‖², ‖λ₋‖² known and the other the rest of Σλ²), in the equality case
λ₋ = ρλ₊ by the identity (1−𝒫)² = (1−ρ)²·Σλ²/((1+ρ²)‖S‖²), and otherwise by
enclosures (certified), refined up to MAX_BITS.
"""

from __future__ import annotations

from flint import arb, fmpq, fmpz, fmpz_poly

from ..algebra import Root, power_sum_2, precision, to_arb
from ..derive import Coord, Ctx, lean_div
from ..jsonio import Undecided, poly, ratmat
from ..table import MT, dfn, predicate, thm
from ..witnesses import integer_scaled, rank_fact
from .profile import signs

L2, L3 = "pairing_bound", "rank_balance"
MAT = ("matrix",)
BOUND = ("matrix_bound", "matrix_subspace")
HS = (("hS", "is_symmetric"),)
HRANK = (("hrank", "rank_le_n"),)
MAX_BITS = 2048


def _is_q(x) -> bool:
    return isinstance(x, fmpq)


# -- Lemma 2 -------------------------------------------------------------------


def power_sum(q: Ctx) -> fmpq:
    """Σλ² over the certified spectrum of S (Newton's identities on its factors) =
    ‖λ₊‖² + ‖λ₋‖² (zeros add nothing)."""
    def build():
        w = q.witness("spectrum", "S")
        q.spectrum("S")
        D = fmpz(w["scale"])
        return sum((f["multiplicity"] * power_sum_2(poly(f["poly"])) for f in w["factors"]), fmpq(0)) / (D * D)

    return q.memo("l2_p2", build)


def sums(q: Ctx) -> tuple:
    """(A, B, C, Σλ²) with A = ‖λ₊‖², B = ‖λ₋‖², C = ⟨λ₊, λ₋⟩ exact when they are rational by
    the rule above (None otherwise)."""
    al, be = q.alpha_beta("S")
    p2 = power_sum(q)
    A = sum((x * x for x in al), fmpq(0)) if all(map(_is_q, al)) else None
    B = sum((x * x for x in be), fmpq(0)) if all(map(_is_q, be)) else None
    A = p2 - B if A is None and B is not None else A
    B = p2 - A if B is None and A is not None else B
    ok = all((_is_q(x) and _is_q(y)) or (_is_q(x) and x == 0) or (_is_q(y) and y == 0) for x, y in zip(al, be))
    C = sum((x * y for x, y in zip(al, be) if _is_q(x) and _is_q(y)), fmpq(0)) if ok else None
    return A, B, C, p2


def proportional(q: Ctx) -> bool:
    """λ₋ = ρλ₊ with ρ = ‖λ₋‖/‖λ₊‖ (Lean: ρ = 0 when λ₊ = 0): exact from the supports, rational
    entries, or ratio 1; a pair separated by enclosures refutes it (certified)."""
    al, be = q.alpha_beta("S")
    m = sum(1 for x in al if q.sign(x) > 0)
    k = sum(1 for y in be if q.sign(y) > 0)
    if k == 0:
        return True
    if m != k:
        return False
    if m == 1:
        return True
    if all(map(_is_q, al[:m] + be[:m])):
        return all(b * al[0] == be[0] * a for a, b in zip(al[:m], be[:m]))
    if q.cmp(al[0], be[0]) == 0:
        return all(q.cmp(a, b) == 0 for a, b in zip(al[:m], be[:m]))
    with precision(256):
        for a, b in zip(al[1:m], be[1:m]):
            d = to_arb(b, 256) * to_arb(al[0], 256) - to_arb(be[0], 256) * to_arb(a, 256)
            if not d.contains(0):
                q.certified = True
                return False
    raise Undecided("λ₋ ∥ λ₊ with an irrational ratio ≠ 1 is out of the kernel's reach")


def _balls(q: Ctx, bits: int) -> tuple[arb, arb]:
    """Enclosures of 𝒫 and of the bound 1 − |1−ρ|/√(1+ρ²) (working precision ``bits``)."""
    al, be = q.alpha_beta("S")
    A = [to_arb(x, bits) for x in al]
    B = [to_arb(y, bits) for y in be]
    F = q.frob("S")
    E = sum(((x - y) * (x - y) for x, y in zip(A, B)), arb(0))
    P = 1 - (E * arb(lean_div(fmpq(1), F))).nonnegative_part().sqrt()
    na = sum((x * x for x in A), arb(0)).sqrt()
    rho = sum((y * y for y in B), arb(0)).sqrt() / na
    return P, 1 - abs(1 - rho) / (1 + rho * rho).sqrt()


def pairing_score(q: Ctx):
    """𝒫 = 1 − ‖λ₊ − λ₋‖/√‖S‖² (x/0 = 0): exact (a rational, or the root of q(1−x)² = p below 1)
    when (1 − 𝒫)² = ‖λ₊−λ₋‖²/‖S‖² is rational, else an enclosure."""
    A, B, C, _ = sums(q)
    F = q.frob("S")
    if None not in (A, B, C):
        x2 = lean_div(A + B - 2 * C, F)
        p, d = x2.p, x2.q
        r = p.isqrt() if p >= 0 else fmpz(-1)
        s = d.isqrt()
        if r * r == p and s * s == d:
            return 1 - fmpq(r, s)
        return Root(fmpz_poly([d - p, -2 * d, d]), -x2, fmpq(1))
    with precision(140):
        return Coord(_balls(q, 140)[0], None, False)


def _pairing_bound(q: Ctx) -> bool:
    """(i) 𝒫 = 1 − √(1 − 2⟨λ₊,λ₋⟩/‖S‖²), (ii) 𝒫 ≤ bound, (iii) 𝒫 = bound ↔ λ₋ = ρλ₊."""
    A, B, C, p2 = sums(q)
    F = q.frob("S")
    prop = proportional(q)
    if None not in (A, B, C):  # squaring: (1−𝒫)² = x2, (1−bound)² = 1 − 2ρ/(1+ρ²), ρ² = s
        x2 = lean_div(A + B - 2 * C, F)
        eq1 = x2 == max(fmpq(0), 1 - 2 * lean_div(C, F))
        s, r = lean_div(B, A), 1 - x2
        le = r <= 0 or r * r * (1 + s) ** 2 <= 4 * s
        eq = r >= 0 and r * r * (1 + s) ** 2 == 4 * s
        return eq1 and le and eq == prop
    eq1 = p2 == F  # ‖λ₊−λ₋‖² = Σλ² − 2⟨λ₊,λ₋⟩: the radicands agree iff Σλ² = ‖S‖²
    if prop:  # λ₋ = ρλ₊: (1−𝒫)² = (1−ρ)²Σλ²/((1+ρ²)‖S‖²), (1−bound)² = (1−ρ)²/(1+ρ²)
        al, be = q.alpha_beta("S")
        one = q.cmp(al[0], be[0]) == 0
        return eq1 and (one or p2 >= F) and (one or p2 == F)
    bits = 128
    while bits <= MAX_BITS:
        with precision(bits + 32):
            P, bound = _balls(q, bits)
            gap = bound - P
        q.certified = True
        if gap > 0:
            return eq1  # (ii) strict, so both sides of (iii) are false
        if gap < 0:
            return False
        bits *= 4
    raise Undecided(f"𝒫 and the bound are not separated at {MAX_BITS} bits")


def _norm_sq(q: Ctx) -> bool:
    """frobSq S = ‖λ₊‖² + ‖λ₋‖²: the entries' Σ S_ij² against the spectrum (Σα² + Σβ² when
    rational, else the power sum Σλ²)."""
    A, B, _, p2 = sums(q)
    return q.frob("S") == (A + B if None not in (A, B) else p2)


predicate("lamPlus_ne_zero", lambda q: signs(q)[0] > 0)
dfn(MT + "lamPlusVec", L2, MAT, lambda q: q.alpha_beta("S")[0], HS)
dfn(MT + "lamMinusVec", L2, MAT, lambda q: q.alpha_beta("S")[1], HS)
dfn(MT + "pairingScoreSym", L2, MAT, pairing_score, HS)
thm(MT + "frobSq_eq_norm_sq_add_norm_sq", L2, MAT, HS, _norm_sq)
thm(MT + "pairing_bound", L2, MAT, HS + (("hplus", "lamPlus_ne_zero"),), _pairing_bound)


# -- Lemma 3 -------------------------------------------------------------------


def _V(q: Ctx):
    return q.memo("V", lambda: ratmat(q.inp["V"]))


def _dim_V(q: Ctx) -> int:
    """finrank V = rank of the basis rows (rank witness of V)."""
    return q.memo("dimV", lambda: rank_fact(q.witness("rank", "V"), _V(q)))


def _posdef_on(q: Ctx) -> bool:
    """posDefOn (symPart L) V: x = Vᵀc ranges over V and xᵀSx = cᵀGc with G = V S Vᵀ, whose kernel
    contains ker Vᵀ; so S is positive definite on V iff G ⪰ 0 (no sign change in charpoly(−x),
    real-rooted) and rank G = dim V."""
    V = _V(q)
    G = V * q.mat("S") * V.transpose()
    cs = integer_scaled(G, max(G.numer_denom()[1], fmpz(1)), "posDefOn").charpoly().coeffs()
    neg = [c for c in (c if k % 2 == 0 else -c for k, c in enumerate(cs)) if c != 0]
    psd = all((a > 0) == (b > 0) for a, b in zip(neg, neg[1:]))
    zeros = next(k for k, c in enumerate(cs) if c != 0)
    return psd and G.nrows() - zeros == _dim_V(q)


predicate("rank_le_n", lambda q: q.rank("L") <= q.inp["n"])
predicate("symPart_posdef_on", _posdef_on)
thm(MT + "rank_balance", L3, BOUND, HRANK, lambda q: max(signs(q)[:2]) <= q.inp["n"])
thm(MT + "finrank_le_of_posDefOn", L3, ("matrix_subspace",), HRANK + (("hV", "symPart_posdef_on"),),
    lambda q: _dim_V(q) <= q.inp["n"])
