"""What the kernel derives from a certificate: the exact input objects, the
facts its witnesses establish, and the quantities the Lean definitions make of
them (profile coordinates, α and β, signatures).  Every decision records
whether it was exact or rested on an enclosure."""

from __future__ import annotations

import functools
from pathlib import Path

from flint import arb, fmpq, fmpq_mat, fmpz, fmpz_mat, fmpz_poly

from . import weights as W
from . import witnesses as F
from .algebra import (Box, Real, Root, cmp, count_with_multiplicity, is_exact, power_sum_2, precision, sign, sign_at,
                      sturm_count, to_arb)
from .jsonio import Invalid, Undecided, rat, ratmat, require

#: working precision (bits) of the enclosures the kernel computes
PREC = 128


def lean_div(x: fmpq, y: fmpq) -> fmpq:
    """Lean's division on ℝ: x / 0 = 0."""
    return fmpq(0) if y == 0 else x / y


def frob(X: fmpq_mat) -> fmpq:
    """Squared Frobenius norm Σ X_ij² (Lean ``frobSq`` = tr(XᵀX))."""
    return sum((X[i, j] ** 2 for i in range(X.nrows()) for j in range(X.ncols())), fmpq(0))


def is_zero(X: fmpq_mat) -> bool:
    """Whether every entry of X is 0."""
    return not any(X.entries())


def trace(X: fmpq_mat) -> fmpq:
    return sum((X[i, i] for i in range(X.nrows())), fmpq(0))


def sym(X: fmpq_mat) -> fmpq_mat:
    return (X + X.transpose()) / 2


def skew(X: fmpq_mat) -> fmpq_mat:
    return (X - X.transpose()) / 2


class Coord:
    """A profile coordinate: its certified ball, its exact value when every term is
    rational, and whether it is zero (decided exactly from the signs of its terms)."""

    def __init__(self, ball: arb, exact: fmpq | None, zero: bool):
        self.ball, self.exact, self.zero = ball, exact, zero


class Ctx:
    """The kernel's view of one certificate."""

    def __init__(self, cert: dict, base_dir: Path | None, weights_dirs: list[str]):
        self.cert, self.base_dir, self.weights_dirs = cert, base_dir, weights_dirs
        self.inp = cert["input"]
        self.kind = self.inp["kind"]
        mc = self.inp.get("monte_carlo")
        if isinstance(mc, dict) and "delta" in mc:  # a law's sampling parameters, checked even when unused
            require(0 < rat(mc["delta"]) < 1, "input", "monte_carlo.delta must lie in (0, 1)")
        self.certified = False  # set when a decision rested on an enclosure
        self.empirical = False  # set when a conclusion rests on a sample (Monte Carlo, Lemma 6, Theorem 5)
        self.witnesses: dict[tuple, dict] = {}
        for w in cert["witnesses"]:
            key = (w["kind"], w.get("of"))
            require(key not in self.witnesses, "witnesses", f"two {w['kind']} witnesses of {w.get('of')}")
            self.witnesses[key] = w
        self.used: set[tuple] = set()
        self._memo: dict = {}

    # -- witnesses ---------------------------------------------------------
    def witness(self, kind: str, of: str | None) -> dict:
        w = self.witnesses.get((kind, of))
        require(w is not None, "witnesses", f"a {kind} witness of {of} is needed and missing")
        self.used.add((kind, of))
        return w

    def memo(self, key, fn):
        """fn() once per key; a reuse replays whether its computation compared enclosures
        (or rested on a sample), so every declaration's evidence level is its own."""
        if key not in self._memo:
            outer = (self.certified, self.empirical)
            self.certified = self.empirical = False
            v = fn()
            self._memo[key] = (v, self.certified, self.empirical)
            self.certified, self.empirical = outer
        v, c, e = self._memo[key]
        self.certified |= c
        self.empirical |= e
        return v

    # -- input matrices ----------------------------------------------------
    def mat(self, name: str) -> fmpq_mat:
        def build():
            if name in ("L", "U", "H", "P", "W_Q", "W_K", "B") and name in self.inp:
                return ratmat(self.inp[name])
            if name == "L" and self.kind == "head":
                return self.mat("W_K").transpose() * self.mat("W_Q")
            if name == "S":
                return sym(self.mat("L"))
            if name == "T":
                return skew(self.mat("L"))
            if name == "M":
                return fmpq_mat(self.mat("W_K").tolist() + self.mat("W_Q").tolist())
            if name == "UtLU":
                U = self.mat("U")
                return U.transpose() * self.mat("L") * U
            if name == "S_UtLU":
                return sym(self.mat("UtLU"))
            if name == "B":  # the basis of C a head's Gram matrix is taken in (standard by default)
                N = self.mat("W_Q").ncols()
                return fmpq_mat(N, N, [fmpq(int(i == j)) for i in range(N) for j in range(N)])
            if name == "gram":
                return self.mat("B").transpose() * self.mat("S") * self.mat("B")
            if name == "Lgram":  # ⟨K b_i, Q b_j⟩, a matrix of rank ≤ n (gram_eq_symPart)
                return (self.mat("W_K") * self.mat("B")).transpose() * (self.mat("W_Q") * self.mat("B"))
            raise Invalid("input", f"matrix {name} is not derivable from a {self.kind} input")

        return self.memo(("mat", name), build)

    @property
    def N(self) -> int:
        if self.kind == "weights":
            return self.inp["N"]
        return self.mat("L").nrows()

    def frob(self, name: str) -> fmpq:
        return self.memo(("frob", name), lambda: frob(self.mat(name)))

    # -- facts from witnesses ----------------------------------------------
    def spectrum(self, of: str) -> list[Real]:
        return self.memo(("spec", of), lambda: F.spectrum_fact(self.witness("spectrum", of), self.mat(of)))

    def rank(self, of: str) -> int:
        return self.memo(("rank", of), lambda: F.rank_fact(self.witness("rank", of), self.mat(of)))

    def head_Z(self) -> tuple[fmpz_mat, int]:
        """[W_K; W_Q] = Z·2^e read from the weights file (weights inputs only)."""
        def load():
            return W.head_Z(self.inp["tensors"], self.inp["n"], self.inp["N"],
                            lambda f, sha: W.find(f, sha, self.base_dir, self.weights_dirs))

        return self.memo("Z", load)

    def head_rank(self) -> int:
        """Rank of M = [W_K; W_Q] from the rank witness (of M), for matrix or weights heads."""
        def build():
            w = self.witness("rank", "M")
            if self.kind == "weights":
                Z, _ = self.head_Z()
                return F.rank_fact(w, fmpq_mat(Z))
            return F.rank_fact(w, self.mat("M"))

        return self.memo("rankM", build)

    def head_spectrum(self) -> tuple[list[Real], int]:
        """Nonzero eigenvalues of S for a weights head (from the cells witness, as
        enclosures of ν·2^(2e)/2) and the number of zero eigenvalues of S."""
        def build():
            Z, e = self.head_Z()
            w = self.witness("cells", "JZZt")
            require(w["scale_exponent"] == e, "cells witness", f"scale exponent {w['scale_exponent']} ≠ {e}")
            n = self.inp["n"]
            G = self.head_G()
            X = fmpz_mat(G.tolist()[n:] + G.tolist()[:n])  # J·G
            boxes, z = F.cells_fact(w, X)
            f = fmpq(2) ** (2 * e) / 2 if e >= 0 else fmpq(1, 2 ** (-2 * e)) / 2
            count = {(b.lo, b.hi): boxes.count(b) for b in boxes}
            vals: list[Real] = [Box(b.lo * f, b.hi * f, True, (b.lo, b.hi, count[(b.lo, b.hi)], 1)) for b in boxes]
            self._memo["P"] = (X.charpoly(), False, False)
            return vals, self.N - len(vals)

        return self.memo("headspec", build)

    def head_G(self) -> fmpz_mat:
        """Z·Zᵀ (2n × 2n, exact) of a weights head."""
        return self.memo("G", lambda: (lambda Z: Z * Z.transpose())(self.head_Z()[0]))

    def head_norms(self) -> tuple[fmpq, fmpq]:
        """(‖L‖², tr(L²)) of a weights head from the blocks of G = Z Zᵀ (L = W_Kᵀ W_Q):
        ‖L‖² = Σ (W_K W_Kᵀ)_ij (W_Q W_Qᵀ)_ij and tr L² = Σ (W_Q W_Kᵀ)_ij (W_Q W_Kᵀ)_ji, times 2^(4e)."""
        def build():
            G, n, e = self.head_G(), self.inp["n"], self.head_Z()[1]
            fl = sum((G[i, j] * G[n + i, n + j] for i in range(n) for j in range(n)), fmpz(0))
            t2 = sum((G[n + i, j] * G[n + j, i] for i in range(n) for j in range(n)), fmpz(0))
            s = fmpq(2) ** (4 * e) if e >= 0 else fmpq(1, 2 ** (-4 * e))
            return fl * s, t2 * s

        return self.memo("norms", build)

    def eigenvalues_S(self, of: str = "S") -> list[Real]:
        """All N eigenvalues of S (or of the named symmetric matrix), zeros included."""
        if self.kind == "weights":
            vals, zeros = self.head_spectrum()
            return vals + [fmpq(0)] * zeros
        return self.spectrum(of)

    # -- decisions that record their evidence ------------------------------
    def cmp(self, x: Real, y: Real) -> int:
        """Exact comparison; it rests on enclosures (certified) unless both sides are exact, or
        one is 0 and the other a cell known to be a nonzero eigenvalue on one side of 0."""
        def signed_cell(a, b):
            return isinstance(a, Box) and a.nonzero and isinstance(b, fmpq) and b == 0 and (a.lo >= 0 or a.hi <= 0)

        if not (is_exact(x) and is_exact(y)) and not (signed_cell(x, y) or signed_cell(y, x)):
            self.certified = True
        return cmp(x, y)

    def sign(self, x: Real) -> int:
        return self.cmp(x, fmpq(0))

    # -- Definition 6: α, β and the profile ---------------------------------
    def alpha_beta(self, of: str = "S") -> tuple[list[Real], list[Real]]:
        """α (positive eigenvalues, decreasing) and β (|negative| eigenvalues, decreasing),
        each padded with zeros to length N (Lean's ``alphaList``/``betaList``)."""
        def build():
            ev = self.eigenvalues_S(of)
            if self.kind == "weights":  # cells come sorted and disjoint (checked): keep their order
                pos = [x for x in reversed(ev) if self.sign(x) > 0]
                neg = [_neg(x) for x in ev if self.sign(x) < 0]
            else:
                key = functools.cmp_to_key(lambda x, y: -self.cmp(x, y))
                pos = sorted([x for x in ev if self.sign(x) > 0], key=key)
                neg = sorted([_neg(x) for x in ev if self.sign(x) < 0], key=key)
            n = len(ev)
            return pos + [fmpq(0)] * (n - len(pos)), neg + [fmpq(0)] * (n - len(neg))

        return self.memo(("ab", of), build)

    def sorted_eigenvalues(self, of: str = "S") -> list[Real]:
        """All eigenvalues of S, decreasing (Lean ``sortDesc`` of the eigenvalue vector)."""
        key = functools.cmp_to_key(lambda x, y: -self.cmp(x, y))
        return self.memo(("sorted", of), lambda: sorted(self.eigenvalues_S(of), key=key))

    def order(self, of: str = "S") -> list[int]:
        """cmp(α_j, β_j) for every j (for a weights head, two cells that meet are compared
        exactly through the characteristic polynomial, see :meth:`_cells_equal`)."""
        a, b = self.alpha_beta(of)

        def one(x, y):
            try:
                return self.cmp(x, y)
            except Undecided:
                if self.kind == "weights" and self._cells_equal(x, y):
                    return 0
                raise

        return self.memo(("order", of), lambda: [one(x, y) for x, y in zip(a, b)])

    def _cells_equal(self, x: Box, y: Box) -> bool:
        """α = β for α in a cell C and β = −ν, ν in a cell C', each holding one distinct root of
        P (the characteristic polynomial of X, ν units, possibly multiple): equal iff
        gcd(P(x), P(−x)) has a root in C ∩ (−C') -- that root is P's only root in C, and its
        negative P's only root in C'."""
        (lo1, hi1, _, s1), (lo2, hi2, _, s2) = x.cell, y.cell
        P = self._memo["P"][0]
        R = P // P.gcd(P.derivative())  # square-free part: its roots are P's, once each

        def distinct(lo, hi):  # roots of R in [lo, hi)
            return sturm_count(R, lo, hi) + (sign_at(R, lo) == 0) - (sign_at(R, hi) == 0)

        if s1 * s2 != -1 or distinct(lo1, hi1) != 1 or distinct(lo2, hi2) != 1:
            return False
        Q = P.gcd(fmpz_poly([c if k % 2 == 0 else -c for k, c in enumerate(P.coeffs())]))
        lo, hi = max(lo1, -hi2), min(hi1, -lo2)  # C = [lo1, hi1), −C' = (−hi2, −lo2]
        return lo <= hi and (count_with_multiplicity(Q, lo, hi) + (sign_at(Q, hi) == 0)) > 0

    def profile(self, L: str = "L") -> "Profile":
        """π(L) = (a, b, c, d) by Definition 6 (Lean ``profileA``..``profileD``), x/0 = 0;
        each coordinate is computed when first asked for (its own evidence level)."""
        return Profile(self, L)

    def norms(self, L: str = "L") -> tuple[fmpq, fmpq]:
        """(‖L‖², ‖T‖²), T the skew part (a weights head: from its Gram blocks)."""
        def build():
            if self.kind == "weights":
                fL, t2 = self.head_norms()
                return fL, (fL - t2) / 2
            return self.frob(L), frob(skew(self.mat(L)))

        return self.memo(("norms", L), build)

    def coord(self, k: str, L: str = "L") -> Coord:
        """One coordinate of π(L): a from the norms; b, c, d from α, β (and their order)."""
        def build():
            fL, fT = self.norms(L)
            if k == "a":
                a = lean_div(fT, fL)
                return Coord(arb(a), a, a == 0)
            S = "S" if L == "L" else "S_" + L
            al, be = self.alpha_beta(S)
            if k == "b":
                pos = [self.sign(x) > 0 and self.sign(y) > 0 for x, y in zip(al, be)]
                zero, pairs = fL == 0 or not any(pos), [(x, y, 2) for x, y, p in zip(al, be, pos) if p]
            else:
                order = self.order(S)
                side = 1 if k == "c" else -1
                zero = fL == 0 or all(o * side <= 0 for o in order)
                pairs = [(x, y, 1) for x, y, o in zip(al, be, order) if o * side > 0]
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
            return Coord(ball, None, False)

        return self.memo(("coord", k, L), build)

    def profile_sum(self, L: str = "L") -> fmpq:
        """a + b + c + d exactly: each j contributes 2α_jβ_j + (α_j−β_j)₊² + (α_j−β_j)₋² =
        α_j² + β_j², so b + c + d = Σ λ² / ‖L‖² with Σ λ² the power sum of the certified
        spectrum (Newton's identities on its factors)."""
        S = "S" if L == "L" else "S_" + L
        w = self.witness("spectrum", S)
        self.spectrum(S)
        D = fmpz(w["scale"])
        p2 = sum((fac["multiplicity"] * power_sum_2(F.poly(fac["poly"])) for fac in w["factors"]), fmpq(0))
        return self.coord("a", L).exact + lean_div(p2 / (D * D), self.norms(L)[0])

    def coord_is(self, c: Coord, q: fmpq, L: str = "L", others: tuple = ()) -> bool:
        """Decide c = q for q ∈ {0, 1}: exactly when c is exact or q = 0; for q = 1 from the
        exact sum and the exact zero-ness of the other three coordinates; else by the ball."""
        if c.exact is not None:
            return c.exact == q
        if q == 0:
            return c.zero
        if all(o.zero for o in others) and self.profile_sum(L) == 1:
            return True
        if any(not o.zero for o in others) and self.profile_sum(L) == 1:
            return False
        self.certified = True
        if not c.ball.contains(arb(q)):
            return False
        raise Undecided(f"cannot decide whether a coordinate equals {q}")

    def coord_exact(self, name: str) -> fmpq:
        """The exact value of b, c or d: when its terms are rational, or when the other two
        of b, c, d are exactly zero (then it is the exact sum minus a)."""
        p = self.profile()
        if p[name].exact is not None:
            return p[name].exact
        if all(p[k].zero for k in "bcd" if k != name):
            return self.profile_sum() - p["a"].exact
        raise Undecided(f"the exact value of {name} is out of the kernel's reach (irrational terms)")

    def coord_sign(self, c: Coord) -> int:
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
        return self.q.coord(k, self.L)


def _neg(x: Real) -> Real:
    if isinstance(x, fmpq):
        return -x
    if isinstance(x, Box):
        return Box(-x.hi, -x.lo, x.nonzero, x.cell[:3] + (-x.cell[3],) if x.cell else ())
    return x.neg()


__all__ = ["Ctx", "Coord", "lean_div", "frob", "trace", "sym", "skew", "PREC", "sign", "Root", "Undecided", "rat"]
