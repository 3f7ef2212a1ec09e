"""Definition 6 (Profile.lean): α, β, the profile π(L) = (a, b, c, d) and its coordinates, on
the kernel's facts -- a matrix's spectrum witness, or a weights head's cells (one half-open rule,
:func:`cell_cmp`).  Every decision records whether it was exact or rested on an enclosure.  The
other rule packs read Definition 6 from here (``from .definition6 import profile, …``)."""

from __future__ import annotations

import functools

from flint import arb, fmpq, fmpz, fmpz_mat, fmpz_poly

from ..algebra import Box, Coord, Real, interval, mirror, precision, roots_in, squarefree, to_arb
from ..derive import Ctx, frob, skew
from ..jsonio import Undecided
from ..lean import div as lean_div
from ..limits import PREC


def head_spectrum(q: Ctx) -> tuple[list[Real], int]:
    """Nonzero eigenvalues of S for a weights head (from the cells fact, as
    enclosures of ν·2^(2e)/2) and the number of zero eigenvalues of S."""
    def build():
        c, e = q.fact("cells", "JZZt"), q.head_Z()[1]
        boxes = c.boxes
        f = fmpq(2) ** (2 * e) / 2 if e >= 0 else fmpq(1, 2 ** (-2 * e)) / 2
        vals: list[Real] = [Box(b.lo * f, b.hi * f, True, (b.lo, b.hi, 1, b.cell[3])) for b in boxes]
        return vals, q.N - len(vals)

    return q.memo("headspec", build)


def head_G(q: Ctx) -> fmpz_mat:
    """Z·Zᵀ (2n × 2n, exact) of a weights head."""
    return q.memo("G", lambda: (lambda Z: Z * Z.transpose())(q.head_Z()[0]))


def head_norms(q: Ctx) -> tuple[fmpq, fmpq]:
    """(‖L‖², tr(L²)) of a weights head from the blocks of G = Z Zᵀ (L = W_Kᵀ W_Q):
    ‖L‖² = Σ (W_K W_Kᵀ)_ij (W_Q W_Qᵀ)_ij and tr L² = Σ (W_Q W_Kᵀ)_ij (W_Q W_Kᵀ)_ji, times 2^(4e)."""
    def build():
        G, n, e = head_G(q), q.args["n"], q.head_Z()[1]
        fl = sum((G[i, j] * G[n + i, n + j] for i in range(n) for j in range(n)), fmpz(0))
        t2 = sum((G[n + i, j] * G[n + j, i] for i in range(n) for j in range(n)), fmpz(0))
        s = fmpq(2) ** (4 * e) if e >= 0 else fmpq(1, 2 ** (-4 * e))
        return fl * s, t2 * s

    return q.memo("norms", build)


def eigenvalues_S(q: Ctx, of: str = "S") -> list[Real]:
    """All N eigenvalues of S (or of the named symmetric matrix), zeros included."""
    if q.kind == "weights":
        vals, zeros = head_spectrum(q)
        return vals + [fmpq(0)] * zeros
    return q.spectrum(of)

# -- Definition 6: α, β and the profile ---------------------------------

def alpha_beta(q: Ctx, of: str = "S") -> tuple[list[Real], list[Real]]:
    """α (positive eigenvalues, decreasing) and β (|negative| eigenvalues, decreasing),
    each padded with zeros to length N (Lean's ``alphaList``/``betaList``)."""
    def build():
        ev = eigenvalues_S(q, of)
        if q.kind == "weights":  # cells come sorted and disjoint (checked): keep their order
            pos = [x for x in reversed(ev) if q.sign(x) > 0]
            neg = [_neg(x) for x in ev if q.sign(x) < 0]
        else:
            key = functools.cmp_to_key(lambda x, y: -q.cmp(x, y))
            pos = sorted([x for x in ev if q.sign(x) > 0], key=key)
            neg = sorted([_neg(x) for x in ev if q.sign(x) < 0], key=key)
        n = len(ev)
        return pos + [fmpq(0)] * (n - len(pos)), neg + [fmpq(0)] * (n - len(neg))

    return q.memo(("ab", of), build)


def sorted_eigenvalues(q: Ctx, of: str = "S") -> list[Real]:
    """All eigenvalues of S, decreasing (Lean ``sortDesc`` of the eigenvalue vector)."""
    key = functools.cmp_to_key(lambda x, y: -q.cmp(x, y))
    return q.memo(("sorted", of), lambda: sorted(eigenvalues_S(q, of), key=key))


def order(q: Ctx, of: str = "S") -> list[int]:
    """cmp(α_j, β_j) for every j; for a weights head, two cells by :func:`cell_cmp`."""
    a, b = alpha_beta(q, of)

    def one(x, y):
        if isinstance(x, Box) and isinstance(y, Box) and x.cell and y.cell:
            q.certified = True  # the values are known by their cells (as the producer states it)
            return cell_cmp(x.cell, y.cell, q.fact("cells", "JZZt").charpoly)
        return q.cmp(x, y)

    return q.memo(("order", of), lambda: [one(x, y) for x, y in zip(a, b)])


def profile(q: Ctx, L: str = "L") -> "Profile":
    """π(L) = (a, b, c, d) by Definition 6 (Lean ``profileA``..``profileD``), x/0 = 0;
    each coordinate is computed when first asked for (its own evidence level)."""
    return Profile(q, L)


def norms(q: Ctx, L: str = "L") -> tuple[fmpq, fmpq]:
    """(‖L‖², ‖T‖²), T the skew part (a weights head: from its Gram blocks)."""
    def build():
        if q.kind == "weights":
            fL, t2 = head_norms(q)
            return fL, (fL - t2) / 2
        return q.frob(L), frob(skew(q.mat(L)))

    return q.memo(("norms", L), build)


def coord(q: Ctx, k: str, L: str = "L") -> Coord:
    """One coordinate of π(L): a from the norms; b, c, d from α, β (and their order)."""
    def build():
        fL, fT = norms(q, L)
        if k == "a":
            a = lean_div(fT, fL)
            return Coord(arb(a), a, a == 0)
        S = "S" if L == "L" else "S_" + L
        al, be = alpha_beta(q, S)
        if k == "b":
            pos = [q.sign(x) > 0 and q.sign(y) > 0 for x, y in zip(al, be)]
            zero, pairs = fL == 0 or not any(pos), [(x, y, 2) for x, y, p in zip(al, be, pos) if p]
        else:
            ords = order(q, S)
            side = 1 if k == "c" else -1
            zero = fL == 0 or all(o * side <= 0 for o in ords)
            pairs = [(x, y, 1) for x, y, o in zip(al, be, ords) if o * side > 0]
        if zero:
            return Coord(arb(0), fmpq(0), True)
        with precision(PREC):
            inv = arb(lean_div(fmpq(1), fL))
            if k == "b":
                ball = sum((m * to_arb(x, PREC) * to_arb(y, PREC) for x, y, m in pairs), arb(0)) * inv
            else:
                ball = sum(((to_arb(x, PREC) - to_arb(y, PREC)) ** 2 for x, y, m in pairs), arb(0)) * inv
        if all(isinstance(x, fmpq) and isinstance(y, fmpq) for x, y, m in pairs):
            terms = (m * x * y if k == "b" else (x - y) ** 2 for x, y, m in pairs)
            return Coord(ball, lean_div(sum(terms, fmpq(0)), fL), False)
        if all(isinstance(x, (fmpq, Box)) and isinstance(y, (fmpq, Box)) for x, y, m in pairs):
            lo, hi = _term_bounds(k, pairs)
            lo, hi = lean_div(lo, fL), lean_div(hi, fL)
            with precision(PREC):
                ball = ball.intersection(arb(lo).union(arb(hi)))
            return Coord(ball, None, False, (lo, hi))
        return Coord(ball, None, False)

    return q.memo(("coord", k, L), build)


def _term_bounds(k: str, pairs: list) -> tuple[fmpq, fmpq]:
    """Exact bounds of Σ m·α_j·β_j (k = b) or Σ (α_j − β_j)² (c, d) over the pairs, each value a
    rational or a Box [lo, hi]: a product of two values ≥ 0 lies in [lo·lo', hi·hi']; |x − y| lies
    in [max(x_lo − y_hi, y_lo − x_hi, 0), max(x_hi − y_lo, y_hi − x_lo)], and its square in the
    squares of those ends (every term ≥ 0).  The same sums the producer states (heads/cells.py,
    profile_enclosures), in exact rationals: a ball of x − y squared in Arb loses 2r² at its low end."""
    lo = hi = fmpq(0)
    for x, y, m in pairs:
        (x0, x1), (y0, y1) = interval(x), interval(y)
        if k == "b":
            lo += m * max(x0, fmpq(0)) * max(y0, fmpq(0))
            hi += m * x1 * y1
        else:
            d0, d1 = max(x0 - y1, y0 - x1, fmpq(0)), max(x1 - y0, y1 - x0)
            lo, hi = lo + d0 * d0, hi + d1 * d1
    return lo, hi


def profile_sum(q: Ctx, L: str = "L") -> fmpq:
    """a + b + c + d exactly: each j contributes 2α_jβ_j + (α_j−β_j)₊² + (α_j−β_j)₋² =
    α_j² + β_j², so b + c + d = Σ λ² / ‖L‖² with Σ λ² the power sum of the certified
    spectrum (Newton's identities on its factors)."""
    S = "S" if L == "L" else "S_" + L
    p2 = q.fact("spectrum", S).power_sum_2
    return coord(q, "a", L).exact + lean_div(p2, norms(q, L)[0])


def coord_is(q: Ctx, c: Coord, val: fmpq, L: str = "L", others: tuple = ()) -> bool:
    """Decide c = q for q ∈ {0, 1}: exactly when c is exact or q = 0; for q = 1 from the
    exact sum and the exact zero-ness of the other three coordinates; else by the ball."""
    if c.exact is not None:
        return c.exact == val
    if val == 0:
        return c.zero
    if all(o.zero for o in others) and profile_sum(q, L) == 1:
        return True
    if any(not o.zero for o in others) and profile_sum(q, L) == 1:
        return False
    q.certified = True
    if not c.ball.contains(arb(val)):
        return False
    raise Undecided(f"cannot decide whether a coordinate equals {val}")


def coord_exact(q: Ctx, name: str) -> fmpq:
    """The exact value of b, c or d: when its terms are rational, or when the other two
    of b, c, d are exactly zero (then it is the exact sum minus a)."""
    p = profile(q)
    if p[name].exact is not None:
        return p[name].exact
    if all(p[k].zero for k in "bcd" if k != name):
        return profile_sum(q) - p["a"].exact
    raise Undecided(f"the exact value of {name} is out of the kernel's reach (irrational terms)")


def coord_sign(q: Ctx, c: Coord) -> int:
    """Sign of a coordinate, exactly: its exact value's sign, else +1 -- a coordinate
    that is not zero is a sum of terms that are ≥ 0 by their signs, one of them > 0
    (b: α_jβ_j with both positive; c, d: squares of nonzero differences)."""
    if c.exact is not None:
        return (c.exact > 0) - (c.exact < 0)
    return 0 if c.zero else 1



class Profile:
    """π(L) as a lazy mapping "a".."d" -> :class:`Coord`."""

    def __init__(self, q: Ctx, L: str):
        self.q, self.L = q, L

    def __getitem__(self, k: str) -> Coord:
        return coord(self.q, k, self.L)


def _neg(x: Real) -> Real:
    if isinstance(x, fmpq):
        return -x
    if isinstance(x, Box):
        return Box(-x.hi, -x.lo, x.nonzero, x.cell[:2] + (-x.cell[2],) + x.cell[3:] if x.cell else ())
    return x.neg()


def cell_cmp(x: tuple, y: tuple, P: fmpz_poly) -> int:
    """cmp(u, v) for u and v in cells of the cells witness, each (lo, hi, sign, one): the half-open
    cell [lo, hi) in ν units, or its mirror image (−hi, −lo] when sign < 0 (the witness is of
    ν = 2λ·2^(−2e): one positive factor on both sides, so the order is the ν order); ``one``:
    the cell's roots are one value of P = charpoly(J·Z·Zᵀ) (the cells witness decides it).

    Sets that do not meet order u and v strictly.  Where they meet and both cells hold one
    value, u = v exactly when the intersection holds a root of Q = gcd(P(x), P(−x)): such a
    root w is P's one value in the cell of u, and ±w is P's value in the cell of v, so
    w = u = v; conversely u = v is such a root.  Otherwise (no such root, or a cell that holds
    two distinct values, where w may be the other one) the cells do not say how u and v
    compare: undecided (the kernel does not refine cells; the producer must give cells that
    separate what Definition 6 compares).  Two different values are never declared equal.

    >>> P = fmpz_poly([-8, 1]) * fmpz_poly([-2, 1]) * fmpz_poly([8, 1]) ** 2   # ν = 8, 2, −8, −8
    >>> cell_cmp((fmpq(8), fmpq(16), 1, True), (fmpq(-8), fmpq(0), -1, True), P)   # 8 and −(−8) meet at 8
    0
    >>> cell_cmp((fmpq(2), fmpq(4), 1, True), (fmpq(-8), fmpq(-4), -1, True), P), cell_cmp((fmpq(8), fmpq(16), 1, True), (fmpq(-4), fmpq(-2), -1, True), P)
    (-1, 1)
    >>> P2 = fmpz_poly([-8, 1]) * fmpz_poly([-9, 1]) * fmpz_poly([8, 1])   # ν = 8, 9 in one cell, −8
    >>> cell_cmp((fmpq(8), fmpq(16), 1, False), (fmpq(-8), fmpq(0), -1, True), P2)
    Traceback (most recent call last):
    ...
    qkverify.kernel.jsonio.Undecided: a cell holding two distinct eigenvalues meets another one: the cells witness does not order them (Definition 6 needs cells that separate α_j from β_j)
    """
    (a, b, ca), (c, d, cb) = (_closure(x), _closure(y))
    if b < c or (b == c and not (ca[1] and cb[0])):
        return -1
    if d < a or (d == a and not (cb[1] and ca[0])):
        return 1
    lo, lo_closed = (a, ca[0]) if a > c else ((c, cb[0]) if c > a else (a, ca[0] and cb[0]))
    hi, hi_closed = (b, ca[1]) if b < d else ((d, cb[1]) if d < b else (b, ca[1] and cb[1]))
    if not (x[3] and y[3]):
        raise Undecided("a cell holding two distinct eigenvalues meets another one: the cells witness does not "
                        "order them (Definition 6 needs cells that separate α_j from β_j)")
    if roots_in(squarefree(P.gcd(mirror(P))), lo, hi, lo_closed, hi_closed) > 0:
        return 0
    raise Undecided("two different eigenvalues lie in cells that meet: the cells witness does not order them "
                    "(Definition 6 needs cells that separate α_j from β_j)")


def _closure(x: tuple) -> tuple:
    lo, hi, s = x[:3]
    return (lo, hi, (True, False)) if s > 0 else (-hi, -lo, (False, True))

