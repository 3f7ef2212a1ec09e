"""Deterministic cells of a head's nonzero spectrum (SPEC Appendix C Lemma 10,
Theorem 3, Def 6, Lemma 2): certificates that are the same on every machine.

The object.  With M = [W_K; W_Q] = Z·2^e (Z an integer 2n x N matrix, read
exactly from the float bit patterns) put X = J·Z·Zᵀ (2n x 2n, integer;
J = [[0, I_n], [I_n, 0]]).  X is similar to a symmetric matrix on the image
of M, so its eigenvalues ν are real, and the nonzero eigenvalues of
S = sym_part(W_Kᵀ W_Q) are exactly the nonzero ν times 2^(2e)/2 (Lemma 10:
S = ½MᵀJM and ½JMMᵀ share their nonzero spectrum).  Everything a head's
certificate states about S is read from the ν.

The grid.  tr(X²) = Σν² = 2(‖L‖² + tr L²)·2^(−4e) is an exact integer T.
The base grid exponent is

    g = ⌊(bitlen(T) − 1)/2⌋ − GRID_BITS      (GRID_BITS = 40),

so that 2^(g+40) ≤ ‖ν‖₂ < 2^(g+41.5): the spacing 2^g is about 2^-40 of the
spectrum's norm.  Level r ≥ 0 has spacing 2^(g−r).

The cells.  Each nonzero eigenvalue ν lies in exactly one cell
k = ⌊ν / 2^(g−r)⌋, i.e. ν ∈ [k·2^(g−r), (k+1)·2^(g−r)); equal cells are
merged with their count c.  A cell is a fact about the exact integers
(whatever computed it); cells are reported as ``[k, r, c]`` sorted by value
(ascending), ``zero`` is the exact multiplicity of ν = 0.  Counting
convention (exact, and what a checker evaluates): c = N≥(lo) − N≥(hi) with
N≥(t) the number of roots ≥ t of charpoly(X) (Descartes' rule on p(x + t) is
exact because p is real-rooted), except that a cell with lo = 0 does not count
the ``zero`` roots at 0.  Each cell's closed interval contains its roots.

Levels.  Every eigenvalue starts at r = 0.  A cell is refined (all its
eigenvalues to r + 1) only when the profile needs it, by rules that read the
coarser cells alone, so the final cells are a function of the weights:

* sign: a cell whose closed interval contains 0 (k = 0 or k = −1);
* order: α_j vs β_j (the j-th largest positive eigenvalue and the j-th
  largest |negative| one; faces c = 0, d = 0 and the c/d split) is decided
  when the closed cells are disjoint; otherwise both cells are refined;
* digits: when the width of b, c or d computed from the cells is above
  10^-digits relative to max(value, 10^-6·(1 − a)) (:data:`SHARE_FLOOR`),
  every cell is refined by the number of levels that the width asks for
  (then again while it is still too wide).

Each rule stops at a level cap (the order rule's counts levels beyond the one
at which a cell stopped touching 0, so an eigenvalue far below the grid
spacing is refined to the same relative precision as the others); an order
still open there is decided from the exact real roots of the characteristic
polynomial (within the budget): α_j = β_j is proved, or α_j ≠ β_j and their
cells are refined, by exact sign evaluations, until they separate (at most
MAX_CELL_LEVEL), since the kernel orders two cells only when they are apart.
An order left open is ``'?'`` (never a float guess) and c, d are then stated
undecided.

Finding a cell.  A rigorous but machine-dependent enclosure [l, u] of the
i-th largest eigenvalue gives its cell at once when l and u fall in the same
cell.  The first enclosure is the float pass of :mod:`.pass1` (ĜY in float,
or exact in digits for an ill-conditioned head); its base cells and
one-level refinements are decided in bulk from the float endpoints (an exact
power-of-two scaling and a floor), and an eigenvalue whose interval holds a
grid point is refined in batches (``Pass1.refine``: the exact Rayleigh
quotient of its basis vector and Kato–Temple from its residual, then up to
two Newton-improved vectors).
When a grid point t still lies in (l, u], the side of ν vs t is decided
rigorously: by tighter enclosures (the Newton route of :mod:`.sliced` with
exact products, then arb ball arithmetic at growing precision, all with
Weyl/Kato–Temple bounds), and as a last resort by the exact count N≥(t) of
charpoly(X) (``ν_i ≥ t`` iff N≥(t) > i for the i-th largest).  Any rigorous method gives the same
answer, so the cells do not depend on BLAS, CPU or thread count.  How often
each path decided is counted in :attr:`HeadSpectrum.stats`.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from flint import arb, ctx, fmpq, fmpz_poly

from ..errors import QKInputError
from ..exact.algebraic import RealAlgebraic, arb_to_interval
from .budget import Budget, RouteSkipped
from .enclosure import EnclosureFailed, enclose_arb, enclose_exact_products, scale2
from .exact_gram import GramData
from .pass1 import STAGES as REFINE_STAGES
from .pass1 import Pass1, _fq
from .sliced import enclose_sliced

#: base grid spacing ≈ 2^-GRID_BITS · ‖ν‖₂
GRID_BITS = 40
#: refinement levels for sign and order decisions: beyond the base grid, or beyond the level at
#: which an eigenvalue's cell stopped touching 0 (an eigenvalue far below the grid spacing, e.g. of
#: weights spanning hundreds of binary orders, gets the same relative precision as the others)
ORDER_LEVEL_CAP = 64
#: the deepest level any cell may reach (the kernel refuses cell levels above 2^14, MAX_WITNESS_BITS)
MAX_CELL_LEVEL = 4096
#: refinement levels beyond the base grid for the digits target of b, c, d
#: (at least this many; more when --digits asks for more, see :func:`digits_level_cap`)
DIGITS_LEVEL_CAP = 48


def digits_level_cap(digits: int) -> int:
    """Levels beyond the base grid that the digits target may use:
    max(48, ⌈3.33·digits⌉ − 24), a function of the option alone.

    >>> digits_level_cap(9), digits_level_cap(30)
    (48, 76)
    """
    return max(DIGITS_LEVEL_CAP, math.ceil(digits * math.log2(10)) - 24)
#: precision (bits) of the fixed-precision arb steps (sqrt in 𝒫, ρ, bound)
PROFILE_PREC = 256


def grid_exponent(trX2: int) -> int:
    """Base grid exponent g from T = tr(X²) = Σν² (exact integer, T > 0):
    g = ⌊(bitlen(T) − 1)/2⌋ − 40, so 2^(g+40) ≤ ‖ν‖₂ < 2^(g+41.5).

    >>> grid_exponent(4 ** 50)     # ‖ν‖ = 2^50
    10
    """
    if trX2 <= 0:
        raise ValueError("tr(X²) must be positive")
    return (int(trX2).bit_length() - 1) // 2 - GRID_BITS


def _p2(e: int) -> fmpq:
    return fmpq(1 << e) if e >= 0 else fmpq(1, 1 << (-e))


def _floor_div_p2(x: fmpq, e: int) -> int:
    """⌊x / 2^e⌋ (exact)."""
    if e >= 0:
        return int((x / (1 << e)).floor())
    return int((x * (1 << (-e))).floor())


# ---------------------------------------------------------------------------
# exact counts from the characteristic polynomial


class ExactCounter:
    """charpoly(X) (computed once, within the budget) and exact counts
    N≥(t) of its roots ≥ t at dyadic t (Descartes on the Taylor shift,
    exact since the polynomial is real-rooted)."""

    def __init__(self, gd: GramData, budget: Budget, stats: dict):
        self.gd = gd
        self.budget = budget
        self.stats = stats
        self._p: fmpz_poly | None = None
        self._cache: dict = {}

    def poly(self) -> fmpz_poly:
        """charpoly(J·Z Zᵀ); raises RouteSkipped when over the budget."""
        if self._p is None:
            self.budget.charpoly(self.gd)          # raises RouteSkipped
            self._p = self.gd.JG_fmpz().charpoly()
            self.stats["charpoly"] = self.stats.get("charpoly", 0) + 1
        return self._p

    def zero_multiplicity(self) -> int:
        cs = self.poly().coeffs()
        z = 0
        while z < len(cs) and cs[z] == 0:
            z += 1
        return z

    def count_ge(self, t: fmpq) -> int:
        """Number of roots ≥ t (with multiplicity)."""
        key = (int(t.p), int(t.q))
        if key in self._cache:
            return self._cache[key]
        p = self.poly()
        a, q = int(t.p), int(t.q)           # t = a/q, q a power of two
        s = q.bit_length() - 1
        d = p.degree()
        cs = [int(c) for c in p.coeffs()]
        # p_s(y) = 2^(s·d)·p(y/2^s) has integer coefficients; roots y = 2^s·x
        ps = fmpz_poly([c << (s * (d - k)) for k, c in enumerate(cs)])
        shifted = ps(fmpz_poly([a, 1]))      # roots y − a = 2^s(x − t)
        c2 = [int(c) for c in shifted.coeffs()]
        z = 0
        while z < len(c2) and c2[z] == 0:
            z += 1
        nz = [c for c in c2[z:] if c != 0]
        var = sum(1 for u, v in zip(nz, nz[1:]) if (u < 0) != (v < 0))
        self._cache[key] = var + z
        return var + z


# ---------------------------------------------------------------------------
# rigorous side decisions ν_i ≥ t


@dataclass
class _Provider:
    name: str
    run: object          # () -> list of (lo, hi) fmpq in ν units, decreasing (a Pass1 when ``fast``)
    fast: bool = False


class _Decider:
    """Rank-matched intervals of the nonzero eigenvalues (ν units, decreasing),
    improved on demand along a ladder of rigorous enclosures, with exact
    counts as the last resort.  ``index_map`` maps the i-th nonzero
    eigenvalue to its index among all 2n (the zeros sit between the positive
    and the negative ones)."""

    def __init__(self, providers: list[_Provider], counter: ExactCounter | None, stats: dict,
                 n_nonzero: int, zero: int, iv=None, refiner=None, first: str = "none"):
        self.providers = providers
        self.counter = counter
        self.stats = stats
        self.level = -1
        self.iv = iv
        self.first = first
        self.refiner = refiner          # idx -> {i: (lo, hi)}: tighter intervals, one more stage per call
        self.refined: dict[int, int] = {}   # i -> stages of the refiner already applied
        self.stages = REFINE_STAGES
        self.notes: list[str] = []
        self.m = n_nonzero
        self.zero = zero
        self.n_pos: int | None = None
        #: i -> (r, s) with ν_i = s·r, r an exact real algebraic number (set for near ties that the
        #: exact roots of charpoly(X) separate): sides of ν_i decided by exact sign evaluations
        self.roots: dict = {}
        while self.iv is None:
            if not self.escalate():
                raise QKInputError("no enclosure of the spectrum could be computed and the exact route is out of "
                                   "reach (" + "; ".join(self.notes[-2:]) + ")")

    @property
    def name(self) -> str:
        return self.providers[self.level].name if self.level >= 0 else self.first

    def prefetch(self, idx) -> None:
        """Tighten the intervals of the eigenvalues ``idx`` by one more stage of the refiner,
        in one batch."""
        todo = [int(i) for i in idx if self.refined.get(int(i), 0) < self.stages]
        if not todo or self.refiner is None:
            return
        for i in todo:
            self.refined[i] = self.refined.get(i, 0) + 1
        try:
            new = self.refiner(todo)
        except (EnclosureFailed, RouteSkipped) as err:
            self.notes.append(f"exact diagonals: {err}")
            self.refiner = None
            return
        self.stats["exact-diagonals"] = self.stats.get("exact-diagonals", 0) + len(todo)
        for i, (l1, h1) in new.items():
            l0, h0 = self.iv[i]
            lo, hi = max(l0, l1), min(h0, h1)
            if lo > hi:
                raise ArithmeticError("exact-diagonal enclosure is disjoint from the float one (a bug)")
            self.iv[i] = (lo, hi)

    def _refine(self, i: int) -> bool:
        """Refine eigenvalue i by one more stage (True when that was tried now)."""
        if self.refiner is None or self.refined.get(i, 0) >= self.stages:
            return False
        self.prefetch([i])
        return True

    def escalate(self) -> bool:
        """Intersect with the next provider's intervals; False when none is left."""
        while self.level + 1 < len(self.providers):
            self.level += 1
            pv = self.providers[self.level]
            try:
                new = pv.run()
            except (EnclosureFailed, RouteSkipped) as err:
                self.notes.append(f"{pv.name} enclosure: {err}")
                continue
            if len(new) != self.m:
                self.notes.append(f"{pv.name} enclosure: {len(new)} values, expected {self.m}")
                continue
            if self.iv is None:
                self.iv = list(new)
            else:
                out = []
                for (l0, h0), (l1, h1) in zip(self.iv, new):
                    lo, hi = max(l0, l1), min(h0, h1)
                    if lo > hi:
                        raise ArithmeticError(f"{pv.name} enclosure is disjoint from an earlier one (a bug)")
                    out.append((lo, hi))
                self.iv = out
            return True
        return False

    def _full_index(self, i: int) -> int:
        if self.n_pos is None or i < self.n_pos:
            return i
        return i + self.zero

    def side(self, i: int, t: fmpq) -> bool | None:
        """ν_i ≥ t?  None when undecidable within the budget."""
        while True:
            lo, hi = self.iv[i]
            if lo >= t:
                self.stats[self.name] = self.stats.get(self.name, 0) + 1
                return True
            if hi < t:
                self.stats[self.name] = self.stats.get(self.name, 0) + 1
                return False
            if self._refine(i):
                continue
            if i in self.roots or not self.escalate():
                break
        if i in self.roots:
            r, sg = self.roots[i]
            self.stats["exact-root"] = self.stats.get("exact-root", 0) + 1
            return r.cmp(RealAlgebraic.from_rational(sg * t)) * sg >= 0
        if self.counter is None:
            self.stats["undecided"] = self.stats.get("undecided", 0) + 1
            return None
        try:
            nge = self.counter.count_ge(t)
        except RouteSkipped as err:
            self.notes.append(f"exact count skipped: {err}")
            self.stats["undecided"] = self.stats.get("undecided", 0) + 1
            return None
        self.stats["exact-count"] = self.stats.get("exact-count", 0) + 1
        return self._full_index(i) < nge

    def cell(self, i: int, e: int) -> int | None:
        """⌊ν_i / 2^e⌋ (exact), None when undecidable."""
        while True:
            lo, hi = self.iv[i]
            klo, khi = _floor_div_p2(lo, e), _floor_div_p2(hi, e)
            if klo == khi:
                self.stats[self.name] = self.stats.get(self.name, 0) + 1
                return klo
            if self._refine(i):
                continue
            if khi - klo > 1 or not self.escalate():
                break
        # bisection over the grid points in (lo, hi]: the largest k with ν_i ≥ k·2^e
        a, b = klo, khi
        while a < b:
            mid = (a + b + 1) // 2
            s = self.side(i, fmpq(mid) * _p2(e))
            if s is None:
                return None
            if s:
                a = mid
            else:
                b = mid - 1
        return a


# ---------------------------------------------------------------------------
# the result


class _FloatIV:
    """Intervals (lo_i·2^sc, hi_i·2^sc) from float arrays, as exact rationals on
    first use (most base cells are decided from the floats alone)."""

    def __init__(self, lo: np.ndarray, hi: np.ndarray, sc: int):
        self.lo, self.hi, self.sc, self.two = lo, hi, sc, _p2(sc)
        self.over: dict = {}

    def __len__(self) -> int:
        return len(self.lo)

    def __getitem__(self, i: int):
        v = self.over.get(i)
        if v is None:
            v = self.over[i] = (_fq(self.lo[i]) * self.two, _fq(self.hi[i]) * self.two)
        return v

    def __setitem__(self, i: int, v) -> None:
        self.over[i] = v

    def __iter__(self):
        return (self[i] for i in range(len(self)))


@dataclass
class HeadSpectrum:
    """The deterministic spectral data of one head (a function of the exact
    weights alone; nothing here depends on BLAS, CPU or thread count).

    n, N            -- d_head, d_model
    scale_exponent  -- e with M = Z·2^e (Z integer)
    grid_exponent   -- g (cells at level r have width 2^(g−r)), see the module docstring
    zero            -- exact multiplicity of the eigenvalue 0 of X = J·Z Zᵀ
    cells           -- [(k, r, c)] ascending by value: c eigenvalues of X in [k·2^(g−r), (k+1)·2^(g−r))
    n_pos, n_neg    -- positive / negative eigenvalues of S (exact: read from the cells)
    order           -- α_j vs β_j for j < max(n_pos, n_neg): '>', '<', '=' or '?'
    equal_pairs     -- the j whose '=' was proved from the exact charpoly (not from cells)
    faces           -- {"b0", "c0", "d0"}: True / False / "undecided"
    frob_L, trace_L2 -- ‖L‖²·2^(−4e), tr(L²)·2^(−4e) (exact integers)
    a, symmetric_energy -- a = ‖T‖²/‖L‖² and 1 − a (exact rationals; None when L = 0)
    enclosures      -- {"b", "c", "d", "pairing", "rho", "pairing_bound", "pairing_gap"}:
                       (lo, hi) exact rationals computed from the cells (b, c, d with
                       exact rational arithmetic; 𝒫, ρ and the Lemma 2 bound by arb at
                       256 bits, which is deterministic); absent where undefined
    stats           -- how many cell / side decisions each path took ("fast",
                       "exact-products", "arb-256", "arb-640", "exact-count",
                       "charpoly", "undecided") and the levels used
    notes           -- what could not be done and why
    rank_M          -- the exact rank of M = [W_K; W_Q] the cells were computed with
    """

    n: int
    N: int
    scale_exponent: int
    grid_exponent: int
    zero: int
    cells: list
    n_pos: int
    n_neg: int
    order: list
    faces: dict
    frob_L: int
    trace_L2: int
    a: fmpq | None
    symmetric_energy: fmpq | None
    enclosures: dict
    equal_pairs: list = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    rank_M: int | None = None
    _cell_enc: dict | None = field(default=None, repr=False, compare=False)

    @property
    def n_zero(self) -> int:
        """Multiplicity of 0 in the spectrum of S (N − n_pos − n_neg)."""
        return self.N - self.n_pos - self.n_neg

    def cell_bounds(self) -> list[tuple[fmpq, fmpq]]:
        """Closed intervals (ν units) of the nonzero eigenvalues of X, one per
        eigenvalue with multiplicity, decreasing."""
        out = []
        g = self.grid_exponent
        for k, r, c in reversed(self.cells):
            w = _p2(g - r)
            out.extend([(fmpq(k) * w, fmpq(k + 1) * w)] * c)
        return out

    def cell_enclosures(self) -> dict:
        """b, c, d (exact rational intervals) computed term by term from the cells alone -- the
        enclosures a certificate states, since the kernel recomputes them from the witness (the
        table's ``enclosures`` are tighter: intersected with b + c + d = 1 − a)."""
        if self._cell_enc is None:
            iv, unit = self.int_bounds()
            frob_S = fmpq(self.frob_L + self.trace_L2, 2)
            self._cell_enc = profile_enclosures(iv, self.n_pos, self.order, self.frob_L, frob_S, tighten=False,
                                                unit=unit)
        return dict(self._cell_enc)

    def int_bounds(self) -> tuple[list, fmpq]:
        """The cells as integer intervals (one per eigenvalue with multiplicity,
        decreasing) in the unit 2^(g − R) of the finest level R, and that unit."""
        g = self.grid_exponent
        R = max((r for _, r, _ in self.cells), default=0)
        out = []
        for k, r, c in reversed(self.cells):
            sh = R - r
            out.extend([(k << sh, (k + 1) << sh)] * c)
        return out, _p2(g - R)

    def witness(self) -> dict:
        """The certificate witness of kind ``cells`` (JSON-ready, deterministic).  A fresh dict
        on each call; its ``cells`` list is built once per spectrum (a head's two certificates
        ask for it some ten times) and shared between the calls: callers only read it."""
        cached = self.__dict__.get("_witness_cells")
        if cached is None or cached[0] is not self.cells or cached[1] != len(self.cells):
            cached = (self.cells, len(self.cells), [[int(k), int(r), int(c)] for k, r, c in self.cells])
            self.__dict__["_witness_cells"] = cached
        return {"kind": "cells", "of": "JZZt", "scale_exponent": self.scale_exponent,
                "grid_exponent": self.grid_exponent, "zero": self.zero, "cells": cached[2]}

    def interval_strings(self, name: str, sig: int) -> tuple[str, str] | None:
        """The enclosure of ``name`` rounded outward to ``sig`` significant
        digits (plain decimal strings), None where undefined."""
        iv = self.enclosures.get(name)
        if iv is None:
            return None
        return outward_decimal(iv[0], sig, -1), outward_decimal(iv[1], sig, +1)


# ---------------------------------------------------------------------------
# decimal output


def outward_decimal(q: fmpq, sig: int, direction: int) -> str:
    """A plain decimal string with at most ``sig`` significant digits that is
    ≤ q (direction −1) or ≥ q (direction +1).  Exact integer arithmetic.

    >>> outward_decimal(fmpq(1, 3), 4, -1), outward_decimal(fmpq(1, 3), 4, +1)
    ('0.3333', '0.3334')
    >>> outward_decimal(fmpq(-2, 3), 3, -1)
    '-0.667'
    """
    p, d = int(q.p), int(q.q)
    if p == 0:
        return "0"
    a = abs(p)
    # E with 10^E ≤ |q| < 10^(E+1)
    E = len(str(a)) - len(str(d))
    if a * 10 ** max(-E, 0) < d * 10 ** max(E, 0):
        E -= 1
    sh = sig - 1 - E                         # |q|·10^sh has sig digits before the point
    num, den = (p * 10 ** sh, d) if sh >= 0 else (p, d * 10 ** (-sh))
    k = -((-num) // den) if direction > 0 else num // den       # ceil / floor
    neg = k < 0
    s = str(abs(k))
    if sh > 0:
        s = s.rjust(sh + 1, "0")
        s = s[:-sh] + "." + s[-sh:]
        s = s.rstrip("0").rstrip(".")
    elif sh < 0:
        s = s + "0" * (-sh)
    return ("-" if neg and s != "0" else "") + s


def exact_decimal(q: fmpq) -> str:
    """Exact decimal string of a dyadic rational (denominator a power of two).

    >>> exact_decimal(fmpq(-3, 8))
    '-0.375'
    """
    p, d = int(q.p), int(q.q)
    s = d.bit_length() - 1
    if d != 1 << s:
        raise ValueError("not a dyadic rational")
    if s == 0:
        return str(p)
    n = abs(p) * 5 ** s
    t = str(n).rjust(s + 1, "0")
    out = (t[:-s] + "." + t[-s:]).rstrip("0").rstrip(".")
    return ("-" if p < 0 else "") + out


# ---------------------------------------------------------------------------
# profile enclosures from cell intervals


def _pairs(iv: list, n_pos: int) -> tuple[list, list]:
    pos = iv[:n_pos]
    neg = [(-hi, -lo) for lo, hi in reversed(iv[n_pos:])]
    m = max(len(pos), len(neg))
    z = (0, 0)
    return pos + [z] * (m - len(pos)), neg + [z] * (m - len(neg))


def order_symbols(iv: list, n_pos: int) -> list:
    """α_j vs β_j from closed intervals: '>' when α's lower end exceeds β's
    upper end, '<' symmetrically, None when they meet; past the positive (or
    negative) eigenvalues, where α_j (β_j) is the padding 0, by the other's sign.

    >>> order_symbols([(4, 5), (1, 2), (-3, -2), (-8, -6)], 2), order_symbols([(1, 2), (-3, -2), (-6, -5)], 1)
    (['<', None], ['<', '<'])
    """
    al, be = _pairs(iv, n_pos)
    npos, nneg = n_pos, len(iv) - n_pos
    out = []
    for j, ((a0, a1), (b0, b1)) in enumerate(zip(al, be)):
        # past the positive (negative) eigenvalues α_j (β_j) is the padding 0 and the other a
        # nonzero eigenvalue: its sign orders them
        out.append("<" if j >= npos else ">" if j >= nneg else ">" if a0 > b1 else "<" if a1 < b0 else None)
    return out


def profile_enclosures(iv: list, n_pos: int, order: list, frob_L: int, frob_S: fmpq,
                       tighten: bool = True, unit: fmpq | None = None, pairing: bool = True,
                       raw: dict | None = None) -> dict:
    """Enclosures of b, c, d (exact rationals) and 𝒫, ρ, the Lemma 2 bound
    and gap (arb at 256 bits, returned as exact rational endpoints) from
    closed intervals of the nonzero eigenvalues of X (ν units, decreasing;
    the first n_pos positive).  With μ = ν·2^(2e)/2 the eigenvalues of S and
    ‖L‖² = frob_L·2^(4e): b = Σα_jβ_j/(2·frob_L), c = Σ_{α>β}(α−β)²/(4·frob_L),
    d likewise, ‖α − β‖²/‖S‖² = Σ(α−β)²/(4·frob_S), ρ² = Σβ²/Σα² (ν units).
    With ``unit`` the intervals are integers in that unit (cells at a common
    level): the sums are taken in Python integers, then scaled by unit².

    >>> e = profile_enclosures([(fmpq(2), fmpq(2)), (fmpq(-1), fmpq(-1))], 1, [">"], 5, fmpq(5, 4))
    >>> e["b"], e["c"]
    ((1/5, 1/5), (1/20, 1/20))
    """
    al, be = _pairs(iv, n_pos)
    fL = fmpq(frob_L)
    blo = bhi = clo = chi = dlo = dhi = s2lo = s2hi = 0
    for (a0, a1), (b0, b1), o in zip(al, be, order):
        blo += a0 * b0
        bhi += a1 * b1
        if o == ">":
            x0, x1 = a0 - b1, a1 - b0
            clo += x0 * x0
            chi += x1 * x1
            s2lo += x0 * x0
            s2hi += x1 * x1
        elif o == "<":
            x0, x1 = b0 - a1, b1 - a0
            dlo += x0 * x0
            dhi += x1 * x1
            s2lo += x0 * x0
            s2hi += x1 * x1
        elif o == "?":
            x1 = max(a1 - b0, b1 - a0, 0)
            chi += x1 * x1
            dhi += x1 * x1
            s2hi += x1 * x1
    u2 = fmpq(1) if unit is None else unit * unit
    blo, bhi, clo, chi, dlo, dhi, s2lo, s2hi = (fmpq(x) * u2 for x in (blo, bhi, clo, chi, dlo, dhi, s2lo, s2hi))
    b = (blo / (2 * fL), bhi / (2 * fL))
    c = (clo / (4 * fL), chi / (4 * fL))
    d = (dlo / (4 * fL), dhi / (4 * fL))
    if raw is not None:   # the caller also keeps the untightened ones
        raw.update(b=b, c=c, d=d)
    if not tighten:  # straight from the cells: what the kernel recomputes from the witness
        return {"b": b, "c": c, "d": d}
    # Theorem 4: b + c + d = 1 − a = frob_S/frob_L exactly; intersect each
    # interval with what the other two and the exact sum allow
    sym = frob_S / fL
    b = (max(b[0], sym - c[1] - d[1]), min(b[1], sym - c[0] - d[0]))
    c = (max(c[0], sym - b[1] - d[1]), min(c[1], sym - b[0] - d[0]))
    d = (max(d[0], sym - b[1] - c[1]), min(d[1], sym - b[0] - c[0]))
    if b[0] > b[1] or c[0] > c[1] or d[0] > d[1]:
        raise ArithmeticError("b + c + d intervals do not meet 1 − a (a bug)")
    out = {"b": b, "c": c, "d": d}
    if frob_S == 0 or not pairing:      # pairing=False: b, c, d only (the refinement loop's widths)
        return out
    with ctx.workprec(PROFILE_PREC):
        def ball(lo, hi):
            return arb(lo) if lo == hi else arb(lo).union(arb(hi))

        def put(name, x):
            if x.is_finite():
                out[name] = arb_to_interval(x)

        pair = 1 - ball(s2lo / (4 * frob_S), s2hi / (4 * frob_S)).sqrt()
        put("pairing", pair)
        na_lo = fmpq(sum(x * x for x, _ in al)) * u2
        if n_pos and na_lo > 0:
            na_hi = fmpq(sum(y * y for _, y in al)) * u2
            nb_lo = fmpq(sum(x * x for x, _ in be)) * u2
            nb_hi = fmpq(sum(y * y for _, y in be)) * u2
            rho = ball(nb_lo / na_hi, nb_hi / na_lo).sqrt()
            bound = 1 - abs(1 - rho) / (1 + rho * rho).sqrt()
            put("rho", rho)
            put("pairing_bound", bound)
            put("pairing_gap", bound - pair)
    return out


#: below this share of the symmetric energy 1 − a, the digits target of b, c, d
#: is absolute (10^-digits · SHARE_FLOOR · (1 − a)): nine significant digits of a
#: c of 1e-16 say nothing that the exact face decision c ≠ 0 does not
SHARE_FLOOR = fmpq(1, 10 ** 6)


def _weighty(iv: list, n_pos: int, order: list, frob_L: int, allow: dict, unit: fmpq | None = None) -> set[int]:
    """Indices whose cell width can move a coordinate that is still too wide
    by more than its share: to first order a width w of α_j moves b by
    w·β_j/(2‖L‖²) and c (when α_j > β_j) or d (α_j < β_j) by w·|α_j − β_j|/(2‖L‖²)
    (ν units); ``allow`` maps each too-wide coordinate to the absolute width it
    may take, shared evenly among the pairs.  A function of the cells alone."""
    m = len(iv)
    al, be = _pairs(iv, n_pos)
    pairs = max(len(al), 1)
    fL2 = 2 * fmpq(frob_L)
    u2 = fmpq(1) if unit is None else unit * unit
    # w·partner/(2‖L‖²)·unit² > allow/pairs  ⇔  w·partner > thr (exact rationals; w, partner in units)
    thr = {k: v * fL2 / (pairs * u2) for k, v in allow.items()}
    if unit is not None:
        # integer widths and partners: x > t ⇔ x > ⌊t⌋ for an integer x, so Python integers compare
        thr = {k: int(v.floor()) for k, v in thr.items()}
    tb, tc, td = thr.get("b"), thr.get("c"), thr.get("d")
    out = set()
    for j, ((a0, a1), (b0, b1)) in enumerate(zip(al, be)):
        o = order[j] if j < len(order) else "?"
        diff = max(a1 - b0, b1 - a0, 0)
        ia = j if j < n_pos else None
        ib = m - 1 - j if j < m - n_pos else None
        for i, (lo, hi), partner in ((ia, (a0, a1), max(abs(b0), abs(b1))), (ib, (b0, b1), max(abs(a0), abs(a1)))):
            if i is None:
                continue
            wdt = hi - lo
            hit = False
            if tb is not None and wdt * partner > tb:
                hit = True
            if not hit and o in (">", "?") and tc is not None and wdt * diff > tc:
                hit = True
            if not hit and o in ("<", "?") and td is not None and wdt * diff > td:
                hit = True
            if hit:
                out.add(i)
    return out


def _rel_width(iv: tuple, floor: fmpq) -> float:
    """Width of [lo, hi] relative to max(lo, floor) (floor > 0)."""
    lo, hi = iv
    if lo == hi:
        return 0.0
    ref = max(lo, floor)
    if ref <= 0:
        return math.inf
    q = (hi - lo) / ref
    return int(q.p) / int(q.q)            # correctly rounded int division


# ---------------------------------------------------------------------------
# providers of enclosures


def _from_enclosure(enc, m: int) -> list:
    """ν intervals (exact rationals) from an Enclosure of ½J·Z Zᵀ (ν = 2·value)."""
    if enc.lo is not None:
        if not (np.all(np.isfinite(enc.lo)) and np.all(np.isfinite(enc.hi))):
            raise EnclosureFailed("float enclosure is not finite")
        lo = scale2(enc.lo, enc.scale + 1)
        hi = scale2(enc.hi, enc.scale + 1)
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            raise EnclosureFailed("enclosure beyond the float64 range")
        out = []
        for x, y in zip(lo.tolist(), hi.tolist()):
            fx, fy = Fraction(x), Fraction(y)
            out.append((fmpq(fx.numerator, fx.denominator), fmpq(fy.numerator, fy.denominator)))
        return out
    out = []
    for v in enc.values:
        if not v.is_finite():
            # an enclosure with an infinite radius (weights spanning hundreds of binary orders)
            raise EnclosureFailed("enclosure is not finite")
        lo, hi = arb_to_interval(v)
        out.append((2 * lo, 2 * hi))
    return out


def _providers(gd: GramData, budget: Budget) -> list[_Provider]:
    n = gd.n
    m = 2 * n
    def gram_float():
        return gd.gram_float()

    def sliced():
        return _from_enclosure(enclose_sliced(gd, gram_float()), m)

    def sliced_exact():
        budget.exact_products(gd)
        return _from_enclosure(enclose_sliced(gd, gram_float(), max_newton=5, exact_offdiag=True), m)

    def exact_products():
        budget.exact_products(gd)
        return _from_enclosure(enclose_exact_products(gd.G_fmpz(), n, gram_float(), prec=192), m)

    def arb_route(prec):
        def run():
            budget.arb(gd, prec)
            return _from_enclosure(enclose_arb(gd.G_fmpz(), n, gram_float(), prec=prec,
                                               target_bits=prec - 64, max_steps=10), m)
        return run

    return [_Provider("float", lambda g=None: Pass1(gd, gram_float(), spacing_exp=g), fast=True),
            _Provider("sliced", sliced), _Provider("sliced-exact", sliced_exact), _Provider("exact-products", exact_products),
            _Provider("arb-256", arb_route(256)), _Provider("arb-640", arb_route(640))]


def _exact_root_provider(counter: ExactCounter, zero: int) -> _Provider:
    """Intervals of the nonzero roots of charpoly(X) (FLINT's rigorous,
    deterministic complex root isolation of the deflated polynomial)."""

    def run():
        p = counter.poly()
        cs = [int(c) for c in p.coeffs()]
        q = fmpz_poly(cs[zero:])
        if q.degree() <= 0:
            return []
        with ctx.workprec(128):
            roots = []
            for r, mult in q.complex_roots():
                lo, hi = arb_to_interval(r.real)
                roots.extend([(lo, hi)] * mult)
        roots.sort(key=lambda t: t[0] + t[1], reverse=True)
        return roots

    return _Provider("charpoly-roots", run)


# ---------------------------------------------------------------------------
# the driver


def head_spectrum(gd: GramData, rank: int | None, digits: int = 9, budget: Budget | None = None,
                  counter: ExactCounter | None = None, rank_fn=None) -> HeadSpectrum:
    """The deterministic cells of the nonzero spectrum of S for one head
    (see the module docstring), with the exact identities and the profile
    enclosures read from them.

    gd     -- exact Gram data (:func:`qkverify.heads.exact_gram.gram_data`)
    rank   -- the exact rank of M, or None: then a successful float pass proves rank M = 2n
              (its bound ‖YᵀĜY − I‖₂ < 1/2 makes YᵀĜY, hence Ĝ = Z Zᵀ·2^(−s), invertible),
              and otherwise ``rank_fn()`` gives it (a rank witness computed by the caller);
              the rank used is :attr:`HeadSpectrum.rank_M`
    digits -- refine until b, c, d have relative width ≤ 10^-digits (or the cap)
    budget -- time/memory budget of the exact routes (charpoly of X)
    counter -- an :class:`ExactCounter` to share (its charpoly is computed once)

    Raises ArithmeticError when two rigorous routes contradict each other (a
    bug).  Serves Lemma 10, Theorem 3 (signature), Def 6 (profile, faces),
    Lemma 2 (pairing).
    """
    budget = budget or Budget()
    n, N = gd.n, gd.N
    m = 2 * n
    counter = counter or ExactCounter(gd, budget, {})
    stats: dict = counter.stats
    notes: list[str] = []
    frob_L, tr_L2 = int(gd.frob_L), int(gd.tr_L2)
    T = 2 * (frob_L + tr_L2)                   # tr(X²) = Σν²
    frob_S = fmpq(frob_L + tr_L2, 2)
    a = gd.frob_T / fmpq(frob_L) if frob_L else None
    sym = 1 - a if a is not None else None
    if T == 0:
        # Σν² = 0 with ν real: every eigenvalue of X is 0 (S = 0)
        if rank is None:
            rank = rank_fn()
        g = 0
        enc = {} if frob_L == 0 else {"b": (fmpq(0), fmpq(0)), "c": (fmpq(0), fmpq(0)), "d": (fmpq(0), fmpq(0))}
        faces = {"b0": True, "c0": True, "d0": True}
        stats["levels"] = {}
        return HeadSpectrum(n, N, gd.e, g, m, [], 0, 0, [], faces, frob_L, tr_L2, a, sym, enc, [], stats,
                            ["S = 0: every eigenvalue of X = J·Z Zᵀ is 0 (tr X² = 0)"], rank_M=rank)
    g = grid_exponent(T)
    fast = None
    notes_diag: list[str] = []
    if rank is None or rank == m:
        providers = _providers(gd, budget)
        if providers and providers[0].fast:
            try:
                fast = providers.pop(0).run(g)
            except EnclosureFailed as err:
                notes_diag.append(f"float enclosure: {err}")
        if rank is None:
            # the float pass closed its bounds: H = YᵀĜY with ‖H − I‖₂ < 1/2 is positive definite, so
            # Ĝ (2n x 2n) is invertible and rank M = rank Z Zᵀ = 2n; otherwise the caller's witness decides
            rank = m if fast is not None else rank_fn()
    if rank == m:
        zero = 0
        # the exact roots close the ladder: rigorous and deterministic, used when every
        # enclosure fails (a Gram matrix beyond float range or numerically singular)
        providers = providers + [_exact_root_provider(counter, 0)]
    else:
        fast = None
        try:
            zero = counter.zero_multiplicity()
        except RouteSkipped as err:
            raise QKInputError(f"rank M = {rank} < 2n: the exact route is needed and {err}") from None
        providers = [_exact_root_provider(counter, zero)]
    k_nz = m - zero
    level = [0] * k_nz
    cell: list = [None] * k_nz
    # --- level-0 cells, rank-matched: cell[i], level[i] for the i-th largest nonzero eigenvalue
    if fast is not None:
        # the float enclosures decide most base cells at once (floor of an exact power-of-two
        # scaling is exact); exact diagonals tighten the others in one batch
        sc = fast.s + 1                              # ν = value·2^(s+1)
        two = _p2(sc)
        kl = np.floor(scale2(fast.lo, sc - g))
        kh = np.floor(scale2(fast.hi, sc - g))
        same = kl == kh
        if 4 * int(np.count_nonzero(~same)) > k_nz and not fast.exact_p:
            # an ill-conditioned head: the float product ĜY limits the bounds; the same basis with
            # ĜY exact (digits) before the Newton route
            try:
                fast = Pass1(gd, gd.gram_float(), exact_p=True, Y=fast.Y)
            except EnclosureFailed as err:
                notes_diag.append(f"float enclosure with exact ĜY: {err}")
            else:
                kl = np.floor(scale2(fast.lo, sc - g))
                kh = np.floor(scale2(fast.hi, sc - g))
                same = kl == kh
                stats["exact-GY"] = stats.get("exact-GY", 0) + 1
        fp = fast
        if fp.exact_p:
            # the float pass already had ĜY exact: the Newton route with float B and H adds nothing it
            # lacks (their float errors are what limit both), so an escalation goes to exact B and H
            providers = [pv for pv in providers if pv.name != "sliced"]
        dec = _Decider(providers, counter, stats, k_nz, zero, iv=_FloatIV(fp.lo, fp.hi, sc),
                       refiner=lambda idx: {i: (lo * two, hi * two) for i, (lo, hi) in fp.refine(idx).items()},
                       first="float")
        dec.notes.extend(notes_diag)
        # the eigenvalues whose interval holds a grid point: exact columns of ĜY and the Rayleigh quotient
        # of each basis vector with its residual (Pass1.refine), in one batch -- even when most of them
        # straddle (an ill-conditioned head: the columns of ĜY are then all exact already)
        open0 = np.flatnonzero(~same)
        for _ in range(REFINE_STAGES):
            if not len(open0):
                break
            dec.prefetch(open0)
            open0 = [i for i in open0 if _floor_div_p2(dec.iv[i][0], g) != _floor_div_p2(dec.iv[i][1], g)]
        kli = kl.astype(np.int64).tolist()
        for i, ok in enumerate(same.tolist()):
            cell[i] = kli[i] if ok else dec.cell(i, g)
        stats["float"] = stats.get("float", 0) + int(np.count_nonzero(same))
    else:
        dec = _Decider(providers, counter, stats, k_nz, zero)
        dec.notes.extend(notes_diag)
        for i in range(k_nz):
            cell[i] = dec.cell(i, g)
    if any(c is None for c in cell):
        raise ArithmeticError("a base cell could not be decided (enclosures and the exact count unavailable)")
    n_pos = sum(1 for c in cell if c >= 0)
    dec.n_pos = n_pos
    n_neg = k_nz - n_pos

    def refine(idx: set[int]) -> set[int]:
        """Refine every eigenvalue in the cells of idx by one level; returns
        the indices that could not be refined (undecided)."""
        groups = {(cell[i], level[i]) for i in idx}
        members = [i for i in range(k_nz) if (cell[i], level[i]) in groups]
        fiv = dec.iv if isinstance(dec.iv, _FloatIV) else None
        if fiv is not None:
            # the float intervals decide most sides at once: the midpoint (2k + 1)·2^(g−r−1), scaled by an
            # exact power of two, is an integer below 2^53, compared with exactly scaled float endpoints
            plain = [i for i in members if i not in fiv.over and abs(cell[i]) < 2 ** 50]
            if plain:
                ix = np.array(plain)
                sh = fiv.sc - (g - np.array([level[i] for i in plain]) - 1)
                mid = np.array([2 * cell[i] + 1 for i in plain], dtype=np.float64)
                up = scale2(fiv.lo[ix], sh) >= mid
                down = scale2(fiv.hi[ix], sh) < mid
                done = set()
                for i, u, d_ in zip(plain, up.tolist(), down.tolist()):
                    if u or d_:
                        cell[i] = 2 * cell[i] + (1 if u else 0)
                        level[i] += 1
                        done.add(i)
                stats["float"] = stats.get("float", 0) + len(done)
                members = [i for i in members if i not in done]
        # one batch of exact diagonals for the members whose interval holds the new grid point
        open_ = []
        for i in members:
            t = fmpq(2 * cell[i] + 1) * _p2(g - level[i] - 1)
            lo, hi = dec.iv[i]
            if lo < t <= hi:
                open_.append(i)
        for _ in range(REFINE_STAGES):
            if not open_:
                break
            dec.prefetch(open_)
            open_ = [i for i in open_ if dec.iv[i][0] < fmpq(2 * cell[i] + 1) * _p2(g - level[i] - 1) <= dec.iv[i][1]]
        stuck = set()
        for i in members:
            t = fmpq(2 * cell[i] + 1) * _p2(g - level[i] - 1)
            s = dec.side(i, t)
            if s is None:
                stuck.add(i)
                continue
            cell[i] = 2 * cell[i] + (1 if s else 0)
            level[i] += 1
        return stuck

    def ibounds() -> tuple[list, fmpq]:
        """The cells as integer intervals in the unit 2^(g − R) of the finest level R."""
        R = max(level, default=0)
        if R == 0:
            return [(k, k + 1) for k in cell], _p2(g)
        return [(cell[i] << (R - level[i]), (cell[i] + 1) << (R - level[i])) for i in range(k_nz)], _p2(g - R)

    # --- sign: closed cells that contain 0
    stuck_all: set[int] = set()
    while True:
        want = {i for i in range(k_nz) if cell[i] in (0, -1) and level[i] < ORDER_LEVEL_CAP} - stuck_all
        if not want:
            break
        stuck_all |= refine(want)
    # --- order α_j vs β_j
    def order_cap(i: int) -> int:
        """The deepest level the order rule refines eigenvalue i to: ORDER_LEVEL_CAP levels beyond
        the level at which its cell stopped touching 0 (the base grid for most), no cap while it
        still touches 0 (ν_i ≠ 0, so that ends), never beyond MAX_CELL_LEVEL.  A function of the
        cell alone: the cell k at level r touched 0 down to level r − bitlen(m) with m = k or −k − 1."""
        k = cell[i]
        m = k if k >= 0 else -k - 1
        if m == 0:
            return MAX_CELL_LEVEL
        return min(MAX_CELL_LEVEL, ORDER_LEVEL_CAP + max(0, level[i] - m.bit_length() + 1))

    def order_loop(cap) -> None:
        nonlocal stuck_all
        while True:
            sym_ = order_symbols(ibounds()[0], n_pos)
            want = set()
            for j, o in enumerate(sym_):
                if o is None:
                    for i in (j if j < n_pos else None, k_nz - 1 - j if j < k_nz - n_pos else None):
                        if i is not None and level[i] < cap(i):
                            want.add(i)
            want -= stuck_all
            if not want:
                break
            stuck_all |= refine(want)

    order_loop(order_cap)
    order = [o if o is not None else "?" for o in order_symbols(ibounds()[0], n_pos)]
    equal_pairs: list[int] = []
    if "?" in order:
        order, equal_pairs, apart = _exact_ties(order, counter, n_pos, zero, notes)
        if apart:
            # α_j ≠ β_j closer than the cap's cells: their exact roots decide every side at once,
            # so both cells are refined until they separate (the kernel orders only separate cells)
            for j, (ra, rb) in apart.items():
                dec.roots[j] = (ra, 1)
                dec.roots[k_nz - 1 - j] = (rb, -1)
            stuck_all -= set(dec.roots)
            order_loop(lambda i: MAX_CELL_LEVEL if i in dec.roots else order_cap(i))
            sym_ = order_symbols(ibounds()[0], n_pos)
            order = [o if o != "?" or j in equal_pairs else (sym_[j] or "?") for j, o in enumerate(order)]
            if "?" in order:
                notes.append(f"α_j vs β_j left '?' at j = {[j for j, o in enumerate(order) if o == '?']}: "
                             f"their cells do not separate within {MAX_CELL_LEVEL} levels")
    # --- digits of b, c, d: refine the cells whose width weighs most
    target = 10.0 ** (-digits)
    floor = SHARE_FLOOR * frob_S / frob_L if frob_L else SHARE_FLOOR
    coords = [k for k in ("b", "c", "d") if not (k in "cd" and "?" in order)]

    def widths():
        iv, unit = ibounds()
        enc = profile_enclosures(iv, n_pos, order, frob_L, frob_S, unit=unit, pairing=False)
        return enc, max((_rel_width(enc[k], floor) for k in coords), default=0.0)

    enc, w = widths()
    cap = digits_level_cap(digits)
    while w > target and frob_L:
        # the absolute width each too-wide coordinate may take (exact rationals)
        tq = fmpq(1, 10 ** digits)
        allow = {k: tq * max(enc[k][0], floor) / 2 for k in coords if _rel_width(enc[k], floor) > target}
        iv, unit = ibounds()
        want = _weighty(iv, n_pos, order, frob_L, allow, unit)
        want = {i for i in want if level[i] < cap} - stuck_all
        if not want:
            break
        stuck_all |= refine(want)
        enc, w = widths()
    if w > target:
        notes.append(f"relative width 1e-{digits} of b, c, d not reached within {cap} extra levels "
                     f"(reached {w:.2g})")
    if stuck_all:
        notes.append(f"{len(stuck_all)} cells could not be refined (enclosures and exact counts out of budget)")
    iv, unit = ibounds()
    raw: dict = {}
    enc = profile_enclosures(iv, n_pos, order, frob_L, frob_S, unit=unit, raw=raw)    # with 𝒫, ρ, the Lemma 2 bound
    # which enclosure failed on this machine is a fact about the machine, not the head:
    # diagnostics, never part of a table or a certificate
    stats["diagnostics"] = list(dec.notes)
    # --- merge cells
    merged: dict = {}
    for i in range(k_nz):
        key = (cell[i], level[i])
        merged[key] = merged.get(key, 0) + 1
    R = max(level, default=0)
    cells = sorted(((k, r, c) for (k, r), c in merged.items()), key=lambda t: t[0] << (R - t[1]))   # k·2^(g−r)
    faces = {"b0": n_pos == 0 or n_neg == 0,
             "c0": False if ">" in order else ("undecided" if "?" in order else True),
             "d0": False if "<" in order else ("undecided" if "?" in order else True)}
    if frob_L == 0:
        enc = {}
    stats["levels"] = {str(r): c for r, c in sorted(Counter(level).items())}
    stats["path_final"] = dec.name
    hs = HeadSpectrum(n, N, gd.e, g, zero, cells, n_pos, n_neg, order, faces, frob_L, tr_L2, a, sym, enc,
                      equal_pairs, stats, notes, rank_M=rank)
    if frob_L and hs.int_bounds() == (iv, unit):
        hs._cell_enc = raw          # what cell_enclosures() computes from these very intervals
    return hs


def _exact_ties(order: list, counter: ExactCounter, n_pos: int, zero: int, notes: list) -> tuple[list, list, dict]:
    """Orders still '?' at the level cap: decide α_j = β_j exactly from the
    real roots of charpoly(X) when its cost is within the budget.  Returns the
    orders (with '=' where proved), the j proved equal, and {j: (α_j, β_j)} as
    exact real algebraic numbers (ν units) for the j where they differ."""
    from ..exact.algebraic import real_roots   # heavy: only for exact ties

    try:
        p = counter.poly()
    except RouteSkipped as err:
        notes.append(f"α_j vs β_j left undecided at the level cap: {err}")
        return order, [], {}
    roots = []
    for r, mult in real_roots(p):
        roots.extend([r] * mult)
    roots = [r for r in reversed(roots) if r.sign() != 0]          # nonzero, decreasing
    pos = [r for r in roots if r.sign() > 0]
    neg = [-r for r in reversed(roots) if r.sign() < 0]
    out, eq, apart = list(order), [], {}
    for j, o in enumerate(order):
        if o != "?":
            continue
        # α_j, β_j are 0 past the positive / negative eigenvalues (the blueprint's padding)
        a_, b_ = (pos[j] if j < len(pos) else None), (neg[j] if j < len(neg) else None)
        c = (0 if b_ is None else -1) if a_ is None else (1 if b_ is None else a_.cmp(b_))
        if c == 0:
            out[j] = "="
            eq.append(j)
        elif a_ is not None and b_ is not None:
            apart[j] = (a_, b_)
        else:
            out[j] = ">" if c > 0 else "<"
    if eq:
        notes.append(f"α_j = β_j proved from the exact roots of charpoly(X) at j = {eq}")
    return out, eq, apart
