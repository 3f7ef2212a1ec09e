"""What the kernel derives from a certificate: the well-formed input's exact objects, the
facts its witnesses establish, the matrices the rules name, and the quantities the Lean
definitions make of them (profile coordinates, α and β, signatures).  Every decision
records whether it was exact or rested on an enclosure (``certified``) or a sample
(``empirical``)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Callable

from flint import arb, fmpq, fmpq_mat, fmpz, fmpz_mat, fmpz_poly

from . import weights as W
from .algebra import Box, Real, Root, cmp, count_with_multiplicity, is_exact, precision, sign, sign_at, sturm_count, to_arb
from .jsonio import Invalid, NotEvaluable, Undecided, rat, require
from .lean import div as lean_div
from .limits import PREC
from .wellformed import well_formed
from .witnesses import CHECKERS


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


def eye(n: int) -> fmpq_mat:
    return fmpq_mat(n, n, [int(i == j) for i in range(n) for j in range(n)])


class Coord:
    """A profile coordinate: its certified ball, its exact value when every term is
    rational, and whether it is zero (decided exactly from the signs of its terms)."""

    def __init__(self, ball: arb, exact: fmpq | None, zero: bool):
        self.ball, self.exact, self.zero = ball, exact, zero


#: input matrices a witness may be "of" by their own name (a vector input's S is not S = symPart L:
#: rules read it as q.arg("S"))
INPUT_MATRICES = frozenset({"L", "U", "H", "P", "W_Q", "W_K", "B", "V"})
#: matrix name -> its derivation from the input (rule packs add theirs with :func:`derived`)
DERIVED: dict[str, Callable[["Ctx"], fmpq_mat]] = {}


def derived(name: str):
    """Register how the matrix ``name`` (a witness's ``of``) is derived from the input."""
    def reg(fn):
        assert name not in DERIVED, name
        DERIVED[name] = fn
        return fn
    return reg


class _Pending:
    """A fact whose checker answered Undecided in the first pass (re-raised when read)."""

    def __init__(self, err: Undecided):
        self.err = err


class Ctx:
    """The kernel's view of one certificate: the well-formed input (``args``), the facts of
    its witnesses (``fact``), the derived matrices (``mat``) and the evidence flags of the
    declaration being decided."""

    def __init__(self, cert: dict, base_dir: Path | None, weights_dirs: list[str]):
        self.cert, self.base_dir, self.weights_dirs = cert, base_dir, weights_dirs
        self.inp = cert["input"]
        self.kind = self.inp["kind"]
        self.args = well_formed(self.inp)  # the Lean types, before anything else
        self.certified = False  # set when a decision rested on an enclosure
        self.empirical = False  # set when a conclusion rests on a sample (Monte Carlo, Lemma 6, Theorem 5)
        self.sample: dict | None = None  # what an empirical conclusion rests on (the record's "sample")
        self.witnesses: dict[tuple, dict] = {}
        for w in cert["witnesses"]:
            key = (w["kind"], w.get("of"))
            require(key not in self.witnesses, "witnesses", f"two {w['kind']} witnesses of {w.get('of')}")
            self.witnesses[key] = w
        self.used: set[tuple] = set()
        self._deps: dict[tuple, set] = {}
        self._building: list[tuple] = []
        self._memo: dict = {}

    # -- the input ---------------------------------------------------------
    def arg(self, name: str) -> Any:
        """An exact object of the well-formed input (Invalid when the input has none)."""
        if name not in self.args:
            raise Invalid("input", f"this declaration needs the input's {name}")
        return self.args[name]

    # -- witnesses and their facts -------------------------------------------
    def establish_all(self) -> None:
        """The first pass: every witness through the checker of its kind (a witness that
        does not check makes the certificate invalid, used or not)."""
        for key in self.witnesses:
            self._establish(key)

    def has(self, kind: str, of: str | None) -> bool:
        """Whether the certificate carries a ``kind`` witness of ``of`` (an optional witness)."""
        return (kind, of) in self.witnesses

    def fact(self, kind: str, of: str | None):
        """The typed fact of the ``kind`` witness of ``of`` (Invalid when missing); read by a
        declaration, it and the facts its checker read count as used."""
        key = (kind, of)
        require(key in self.witnesses, "witnesses", f"a {kind} witness of {of} is needed and missing")
        if self._building:
            self._deps[self._building[-1]].add(key)
        else:
            self._use(key)
        v = self._establish(key)
        if isinstance(v, _Pending):
            raise Undecided(str(v.err))
        return v

    def _use(self, key: tuple) -> None:
        if key not in self.used:
            self.used.add(key)
            for d in self._deps.get(key, ()):
                self._use(d)

    def _establish(self, key: tuple):
        def build():
            self._building.append(key)
            self._deps.setdefault(key, set())
            try:
                return CHECKERS[key[0]](self.witnesses[key], self)
            except NotEvaluable as err:
                raise Invalid(f"{key[0]} witness of {key[1]}", f"does not apply to this input ({err})") from None
            except Undecided as err:
                return _Pending(err)
            finally:
                self._building.pop()

        return self.memo(("fact",) + key, build)

    def memo(self, key, fn):
        """fn() once per key; a reuse replays whether its computation compared enclosures
        (or rested on a sample), so every declaration's evidence level is its own."""
        if key not in self._memo:
            outer = (self.certified, self.empirical)
            self.certified = self.empirical = False
            try:
                v = fn()
                self._memo[key] = (v, self.certified, self.empirical)
            finally:
                self.certified, self.empirical = outer
        v, c, e = self._memo[key]
        self.certified |= c
        self.empirical |= e
        return v

    # -- matrices ------------------------------------------------------------
    def mat(self, name: str) -> fmpq_mat:
        """The input's matrix ``name`` (one of :data:`INPUT_MATRICES`, the same object in every
        input kind that has it), or the matrix the rules derive under that name."""
        if name in INPUT_MATRICES and isinstance(self.args.get(name), fmpq_mat):
            return self.args[name]
        fn = DERIVED.get(name)
        if fn is None:
            raise Invalid("input", f"matrix {name} is not derivable from a {self.kind} input")
        return self.memo(("mat", name), lambda: fn(self))

    @property
    def N(self) -> int:
        if self.kind == "weights":
            return self.args["N"]
        return self.mat("L").nrows()

    def frob(self, name: str) -> fmpq:
        return self.memo(("frob", name), lambda: frob(self.mat(name)))

    # -- facts the rules read often ------------------------------------------
    def spectrum(self, of: str) -> list[Real]:
        return self.fact("spectrum", of).values

    def rank(self, of: str) -> int:
        return self.fact("rank", of).rank

    def head_Z(self) -> tuple[fmpz_mat, int]:
        """[W_K; W_Q] = Z·2^e read from the weights file (weights inputs only)."""
        def load():
            return W.head_Z(self.inp["tensors"], self.args["n"], self.args["N"],
                            lambda f, sha: W.find(f, sha, self.base_dir, self.weights_dirs))

        return self.memo("Z", load)

    def head_rank(self) -> int:
        """Rank of M = [W_K; W_Q] from the rank witness of M (matrix or weights heads)."""
        return self.rank("M")

    def head_spectrum(self) -> tuple[list[Real], int]:
        """Nonzero eigenvalues of S for a weights head (from the cells fact, as
        enclosures of ν·2^(2e)/2) and the number of zero eigenvalues of S."""
        def build():
            c, e = self.fact("cells", "JZZt"), self.head_Z()[1]
            boxes = c.boxes
            f = fmpq(2) ** (2 * e) / 2 if e >= 0 else fmpq(1, 2 ** (-2 * e)) / 2
            count = {(b.lo, b.hi): boxes.count(b) for b in boxes}
            vals: list[Real] = [Box(b.lo * f, b.hi * f, True, (b.lo, b.hi, count[(b.lo, b.hi)], 1)) for b in boxes]
            return vals, self.N - len(vals)

        return self.memo("headspec", build)

    def head_G(self) -> fmpz_mat:
        """Z·Zᵀ (2n × 2n, exact) of a weights head."""
        return self.memo("G", lambda: (lambda Z: Z * Z.transpose())(self.head_Z()[0]))

    def head_norms(self) -> tuple[fmpq, fmpq]:
        """(‖L‖², tr(L²)) of a weights head from the blocks of G = Z Zᵀ (L = W_Kᵀ W_Q):
        ‖L‖² = Σ (W_K W_Kᵀ)_ij (W_Q W_Qᵀ)_ij and tr L² = Σ (W_Q W_Kᵀ)_ij (W_Q W_Kᵀ)_ji, times 2^(4e)."""
        def build():
            G, n, e = self.head_G(), self.args["n"], self.head_Z()[1]
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

    # -- ∃ and ∀ conclusions -------------------------------------------------
    def exists(self, key: tuple, works: Callable[[Any], bool], none_exists: Callable[[], bool] | None = None,
               what: str = "the ∃-conclusion") -> bool:
        """An ∃-conclusion (DESIGN.md): ``holds`` only from the witness ``key`` = (kind, of),
        whose fact ``works`` must accept (a witness that does not work is Invalid: the
        certificate offers it as one); ``fails`` only when ``none_exists()`` shows from facts
        that no witness exists (the caller's docstring proves it; TRUST.md lists it);
        otherwise undecided."""
        if self.has(*key):
            require(works(self.fact(*key)), f"{key[0]} witness of {key[1]}", f"does not witness {what}")
            return True
        if none_exists is not None and none_exists():
            return False
        raise Undecided(f"{what}: no witness is given and no argument shows that none exists")

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
        P = self.fact("cells", "JZZt").charpoly
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
        p2 = self.fact("spectrum", S).power_sum_2
        return self.coord("a", L).exact + lean_div(p2, self.norms(L)[0])

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


# -- the matrices every matrix and head input derives --------------------------------------


@derived("L")
def _L(q: Ctx) -> fmpq_mat:
    """L = W_Kᵀ W_Q of a head; a vector input's matrix S (Theorem 5's profile_of_spectrum takes
    π(S)); a matrix input gives L itself."""
    if q.kind == "vector":
        return q.arg("S")
    return q.mat("W_K").transpose() * q.mat("W_Q")


derived("S")(lambda q: q.arg("S") if q.kind == "matrix_spectrum" else sym(q.mat("L")))  # matrix_spectrum: any S
derived("T")(lambda q: skew(q.mat("L")))
derived("M")(lambda q: fmpq_mat(2 * q.mat("W_K").nrows(), q.mat("W_K").ncols(),   # [W_K; W_Q] (n = 0: 0 × N)
                                [x for r in q.mat("W_K").tolist() + q.mat("W_Q").tolist() for x in r]))
derived("UtLU")(lambda q: q.mat("U").transpose() * q.mat("L") * q.mat("U"))
derived("S_UtLU")(lambda q: sym(q.mat("UtLU")))
derived("B")(lambda q: eye(q.mat("W_Q").ncols()))   # the basis of C a head's Gram matrix is taken in
derived("gram")(lambda q: q.mat("B").transpose() * q.mat("S") * q.mat("B"))
# ⟨K b_i, Q b_j⟩, a matrix of rank ≤ n (gram_eq_symPart)
derived("Lgram")(lambda q: (q.mat("W_K") * q.mat("B")).transpose() * (q.mat("W_Q") * q.mat("B")))


__all__ = ["Ctx", "Coord", "lean_div", "frob", "trace", "sym", "skew", "PREC", "sign", "Root", "Undecided", "rat",
           "derived", "eye"]
