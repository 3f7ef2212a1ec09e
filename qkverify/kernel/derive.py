"""What the kernel derives from a certificate: the well-formed input's exact objects, the
facts its witnesses establish, the matrices the rules name, and the quantities the Lean
definitions make of them (profile coordinates, α and β, signatures).  Every decision
records whether it was exact or rested on an enclosure (``certified``) or a sample
(``empirical``)."""

from __future__ import annotations


from pathlib import Path
from typing import Any, Callable

from flint import fmpq, fmpq_mat, fmpz_mat

from . import weights as W
from .algebra import Box, Real, Root, cmp, is_exact, sign
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

    def all_checked(self) -> None:
        """Undecided when some witness's checker answered undecided (past a cap) and no record
        stated undecided on it: a certificate is valid only when every witness was checked."""
        for key in self.witnesses:
            v = self._memo.get(("fact",) + key, (None,))[0]
            if isinstance(v, _Pending) and key not in self.used:
                raise Undecided(f"{key[0]} witness of {key[1]}: {v.err}")

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


__all__ = ["Ctx", "lean_div", "frob", "trace", "sym", "skew", "PREC", "sign", "Root", "Undecided", "rat",
           "derived", "eye"]
