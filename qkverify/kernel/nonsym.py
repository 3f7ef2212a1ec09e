"""Witness checkers for the clustering regimes (docs/MATH.md, Clustering regimes): the complex spectrum of a
non-symmetric rational matrix, an eigenvector, the dimension of an eigenspace, and the
definiteness of a symmetric matrix.  Each returns a typed fact or raises Invalid."""

from __future__ import annotations

from dataclasses import dataclass

from flint import acb, acb_poly, arb, arb_mat, fmpq, fmpq_mat, fmpz_poly

from .algebra import Real, Root, precision, sign_at, to_arb
from .jsonio import Undecided, rat, ratmat, require
from .witnesses import _scaled

#: largest precision (bits) a witness may ask the kernel to work at
MAX_PREC = 1 << 16


@dataclass(frozen=True)
class CBox:
    """A non-real eigenvalue in the square re ± r + i(im ± r) (im > r > 0); listed twice in a
    spectrum, for it and for its conjugate in the mirror image (same modulus)."""

    re: fmpq
    im: fmpq
    r: fmpq

    def mod2(self) -> tuple[fmpq, fmpq]:
        """Bounds of |z|² over the box."""
        a = max(abs(self.re) - self.r, fmpq(0))
        b = self.im - self.r
        return a * a + b * b, (abs(self.re) + self.r) ** 2 + (self.im + self.r) ** 2


def _inside(x: arb, lo: fmpq, hi: fmpq) -> bool:
    return bool(x.is_finite() and x.lower() > arb(lo) and x.upper() < arb(hi))


def krawczyk(g: fmpz_poly, b: CBox, prec: int) -> bool:
    """The Krawczyk operator K = c − g(c)/g'(c) + (1 − g'(B)/g'(c))(B − c) of g on the box B
    (centre c) lies strictly inside B: then z ↦ z − g(z)/g'(c) maps B into itself and B
    holds a root of g (Brouwer)."""
    with precision(prec):
        gp = acb_poly([acb(c) for c in g.coeffs()])
        dg = gp.derivative()
        c = acb(arb(b.re), arb(b.im))
        B = acb(arb(b.re, b.r), arb(b.im, b.r))
        dc = dg(c)
        if dc.real.contains(0) and dc.imag.contains(0):
            return False
        K = c - gp(c) / dc + (1 - dg(B) / dc) * (B - c)
        return _inside(K.real, b.re - b.r, b.re + b.r) and _inside(K.imag, b.im - b.r, b.im + b.r)


def croots_fact(w: dict, X: fmpq_mat) -> list[tuple[Real | CBox, int, fmpz_poly]]:
    """Every eigenvalue of X once, with its multiplicity and square-free factor:
    (rational | Root | CBox, m, g).

    With X = Y/D (Y integral) and charpoly(Y) = c·Π f_m^m its square-free decomposition
    (FLINT), the witness lists per multiplicity m the real roots of g_m(x) = f_m(D·x) as
    sorted disjoint rational intervals (a sign change, or a rational root) and its non-real
    roots with positive imaginary part as boxes above the real axis, pairwise disjoint, each
    passing the Krawczyk test at ``prec`` bits.  Each interval and each box and its mirror
    image hold a root, and their number is deg g_m: so each holds exactly one."""
    what = f"croots witness of {w['of']}"
    prec = w["prec"]
    require(64 <= prec <= MAX_PREC, what, f"prec must lie in [64, {MAX_PREC}]")
    Y, D = X.numer_denom()
    _, sqf = Y.charpoly().factor_squarefree()
    by_m = {m: f for f, m in sqf}
    require(sorted(by_m) == sorted(f["multiplicity"] for f in w["factors"]) and len(w["factors"]) == len(by_m),
            what, f"the multiplicities are not those of the square-free decomposition ({sorted(by_m)})")
    out: list = []
    for fac in w["factors"]:
        m = fac["multiplicity"]
        g = _scaled(by_m[m], D)  # g(x) = f(D·x): the eigenvalues of X
        require(len(fac["real"]) + 2 * len(fac["complex"]) == g.degree(), what,
                f"multiplicity {m}: {g.degree()} roots needed")
        prev = None
        for lo_s, hi_s in fac["real"]:
            lo, hi = rat(lo_s), rat(hi_s)
            require(lo <= hi and (prev is None or prev < lo), what, "real intervals not sorted and disjoint")
            prev = hi
            if lo == hi:
                require(sign_at(g, lo) == 0, what, f"{lo} is not a root")
                out.append((lo, m, g))
            else:
                require(sign_at(g, lo) * sign_at(g, hi) < 0, what, f"no sign change on [{lo}, {hi}]")
                out.append((Root(g, lo, hi), m, g))
        boxes = [CBox(rat(a), rat(b), rat(r)) for a, b, r in fac["complex"]]
        for i, b in enumerate(boxes):
            require(b.im > b.r > 0, what, f"complex box {i} does not lie above the real axis")
            require(all(abs(b.re - c.re) > b.r + c.r or abs(b.im - c.im) > b.r + c.r for c in boxes[:i]), what,
                    f"complex box {i} meets another one")
            require(krawczyk(g, b, prec), what, f"complex box {i}: the Krawczyk test fails at {prec} bits")
            out += [(b, m, g), (b, m, g)]
    return out


def eigvec_fact(w: dict, X: fmpq_mat, lam: Real) -> list:
    """An eigenvector ψ of X for the simple real eigenvalue λ: exact (``vector``, checked
    Xψ = λψ, ψ ≠ 0) or enclosed (``pivot`` k, ``prec``: the unique solution with ψ_k = 1 of
    the rows i ≠ k of (X − λI)ψ = 0 by an Arb solve, whose success shows those rows
    independent, so the eigenvector has ψ_k ≠ 0 and is that solution)."""
    what = f"eigvec witness of {w['of']}"
    n = X.nrows()
    if "vector" in w:
        require(isinstance(lam, fmpq), what, "an exact eigenvector needs a rational eigenvalue")
        v = ratmat([[x] for x in w["vector"]])
        require(v.nrows() == n and any(v.entries()) and X * v == v * lam, what, "not an eigenvector for λ")
        return [v[i, 0] for i in range(n)]
    k, prec = w["pivot"], w["prec"]
    require(0 <= k < n and 64 <= prec <= MAX_PREC, what, "bad pivot or precision")
    idx = [i for i in range(n) if i != k]
    with precision(prec):
        lb = to_arb(lam, prec + 16)
        M = arb_mat([[arb(X[i, j]) - (lb if i == j else 0) for j in idx] for i in idx])
        try:
            y = M.solve(arb_mat([[-arb(X[i, k])] for i in idx]))
        except ZeroDivisionError:
            raise Undecided(f"{what}: the reduced system is not shown nonsingular at {prec} bits") from None
        return [arb(1) if i == k else y[idx.index(i), 0] for i in range(n)]


def definite_fact(w: dict, S: fmpq_mat) -> bool:
    """S ≻ 0 from P S Pᵀ = L D Lᵀ (L unit lower triangular, every D_i > 0), or not from a
    rational x ≠ 0 with xᵀ S x ≤ 0."""
    what = "definite witness"
    n = S.nrows()
    if "x" in w:
        x = ratmat([[v] for v in w["x"]])
        require(x.nrows() == n and any(x.entries()), what, "x must be a nonzero vector of length d")
        require((x.transpose() * S * x)[0, 0] <= 0, what, "xᵀSx > 0")
        return False
    perm, L, Dg = w["perm"], ratmat(w["L"]), [rat(v) for v in w["D"]]
    require(sorted(perm) == list(range(n)) and L.nrows() == L.ncols() == len(Dg) == n, what, "bad sizes")
    require(all(L[i, j] == (1 if i == j else 0) for i in range(n) for j in range(i, n)), what,
            "L is not unit lower triangular")
    require(all(v > 0 for v in Dg), what, "a pivot is not positive")
    PSP = fmpq_mat([[S[perm[i], perm[j]] for j in range(n)] for i in range(n)])
    Dm = fmpq_mat([[Dg[i] if i == j else 0 for j in range(n)] for i in range(n)])
    require(L * Dm * L.transpose() == PSP, what, "L D Lᵀ ≠ P S Pᵀ")
    return True


def eigenspace_fact(w: dict, X: fmpq_mat, lam: fmpq, m: int) -> bool:
    """Whether ker(X − λI) has dimension m (the algebraic multiplicity): ``basis`` = m
    independent eigenvectors (True), or a nonzero minor of X − λI of order d − m + 1
    (rank > d − m: False)."""
    what = f"eigenspace witness of {w['of']}"
    n = X.nrows()
    M = X - fmpq_mat([[lam if i == j else 0 for j in range(n)] for i in range(n)])
    if "basis" in w:
        F = ratmat(w["basis"]).transpose()
        require(F.nrows() == n and F.ncols() == m and F.rank() == m and not any((M * F).entries()), what,
                f"not {m} independent eigenvectors")
        return True
    rows, cols = w["rows"], w["cols"]
    require(len(rows) == len(cols) == n - m + 1 and len(set(rows)) == len(rows) == len(set(cols)), what, "bad minor")
    require(fmpq_mat([[M[i, j] for j in cols] for i in rows]).det() != 0, what, "the minor is zero")
    return False
