"""One checker per witness kind.  Each takes the witness (already validated
by the schema) and the exact matrix it is about, checks it, and returns a
typed fact; any inconsistency raises :class:`Invalid` naming the witness."""

from __future__ import annotations

from flint import fmpq, fmpq_mat, fmpz, fmpz_mat, fmpz_poly, nmod_mat

from .algebra import Box, Real, Root, count_with_multiplicity, sign_at
from .jsonio import poly, rat, require


def integer_scaled(X: fmpq_mat, D: fmpz, what: str) -> fmpz_mat:
    """D·X as an integer matrix (Invalid if D·X is not integral)."""
    Y = X * D
    num, den = Y.numer_denom()
    require(den == 1, what, f"scale {D} does not clear the denominators")
    return num


def charpoly(Y: fmpz_mat) -> fmpz_poly:
    """Characteristic polynomial det(xI − Y) of a square integer matrix (FLINT)."""
    return Y.charpoly()


# ---------------------------------------------------------------------------
# rank


def _minor_mod(Y: fmpz_mat, rows: list[int], cols: list[int], p: int) -> int:
    if not rows:
        return 1
    return int(nmod_mat([[int(Y[i, j]) % p for j in cols] for i in rows], p).det())


def rank_fact(w: dict, X: fmpq_mat) -> int:
    """Rank(X) = r: a nonzero r×r minor of scale·X modulo a prime p (rank ≥ r) and,
    when r < rows, ``kernel``: rows − r integer vectors y with yᵀ·(scale·X) = 0 whose
    own minor on ``kernel_cols`` is nonzero mod p (rank ≤ r)."""
    what = f"rank witness of {w['of']}"
    D = fmpz(w["scale"])
    require(D > 0, what, "scale must be positive")
    Y = integer_scaled(X, D, what)
    R, C = Y.nrows(), Y.ncols()
    r, rows, cols = w["rank"], w["rows"], w["cols"]
    require(r <= min(R, C) and len(rows) == len(cols) == r, what, "rank and minor size disagree")
    require(len(set(rows)) == r and all(0 <= i < R for i in rows), what, "bad minor rows")
    require(len(set(cols)) == r and all(0 <= j < C for j in cols), what, "bad minor columns")
    p = fmpz(w["prime"])
    require(p.is_prime() and p < 2**62, what, f"{p} is not a prime below 2^62")
    p = int(p)
    require(_minor_mod(Y, rows, cols, p) == int(w["minor_mod_p"]) != 0, what, "the stated minor is not the "
            "minor of the matrix mod p, or is zero")
    K = w.get("kernel", [])
    require(len(K) == R - r, what, f"{R - r} left-kernel vectors are needed to show rank ≤ {r}")
    if K:
        Kz = fmpz_mat([[fmpz(v) for v in y] for y in K])
        require(Kz.ncols() == R and (Kz * Y).is_zero(), what, "a kernel vector y has yᵀ·X ≠ 0")
        kc = w["kernel_cols"]
        require(len(set(kc)) == len(kc) == R - r and all(0 <= j < R for j in kc), what, "bad kernel_cols")
        kp = fmpz(w.get("kernel_prime", p))
        require(kp.is_prime() and kp < 2**62, what, f"{kp} is not a prime below 2^62")
        require(_minor_mod(Kz, list(range(R - r)), kc, int(kp)) == int(w["kernel_minor_mod_p"]) != 0, what,
                "the kernel vectors' minor is wrong or zero mod its prime")
    return r


# ---------------------------------------------------------------------------
# exact spectrum of a rational symmetric matrix


def spectrum_fact(w: dict, X: fmpq_mat) -> list[Real]:
    """Spectrum(X), with multiplicity, each eigenvalue exact.

    Checks: Π poly_k^m_k equals charpoly(D·X) times the product of the leading
    coefficients (FLINT charpoly is monic); each poly_k has deg poly_k sorted,
    disjoint intervals, each a rational root or a sign change -- so each holds
    exactly one simple root and all roots are real; distinct factors share no root."""
    what = f"spectrum witness of {w['of']}"
    D = fmpz(w["scale"])
    require(D > 0, what, "scale must be positive")
    P = charpoly(integer_scaled(X, D, what))
    prod, lead = fmpz_poly([1]), fmpz(1)
    values: list[Real] = []
    polys = []
    for k, fac in enumerate(w["factors"]):
        f, m, roots = poly(fac["poly"]), fac["multiplicity"], fac["roots"]
        require(f.degree() >= 1 and m >= 1, what, f"factor {k} is constant or has multiplicity 0")
        require(len(roots) == f.degree(), what, f"factor {k}: {f.degree()} roots needed, {len(roots)} given")
        prev = None
        for j, (lo_s, hi_s) in enumerate(roots):
            lo, hi = rat(lo_s), rat(hi_s)
            require(lo <= hi and (prev is None or prev < lo), what, f"factor {k}: intervals not sorted and disjoint")
            prev = hi
            if lo == hi:
                require(sign_at(f, lo) == 0, what, f"factor {k}: {lo} is not a root")
                x: Real = lo / D
            else:
                require(sign_at(f, lo) * sign_at(f, hi) < 0, what, f"factor {k}, root {j}: no sign change")
                x = Root(_scaled(f, D), lo / D, hi / D)
            values.extend([x] * m)
        polys.append(f)
        prod *= f ** m
        lead *= f.coeffs()[-1] ** m
    require(prod == P * lead, what, "the factors do not multiply to the characteristic polynomial")
    for i in range(len(polys)):
        for j in range(i + 1, len(polys)):
            require(polys[i].gcd(polys[j]).degree() == 0, what, f"factors {i} and {j} share a root")
    return values


def _scaled(f: fmpz_poly, D: fmpz) -> fmpz_poly:
    """g with g(x) = 0 iff f(D·x) = 0: coefficients c_k·D^k."""
    return fmpz_poly([c * D**k for k, c in enumerate(f.coeffs())])


# ---------------------------------------------------------------------------
# cells: enclosures of the nonzero spectrum of X = J Z Zᵀ (a weights head)


def cells_fact(w: dict, X: fmpz_mat) -> tuple[list[Box], int]:
    """The eigenvalues of the integer matrix X as closed cells, and the zero multiplicity.

    charpoly(X) = x^z·P with P(0) ≠ 0; every cell [k·2^(g−r), (k+1)·2^(g−r)] holds
    at least c roots of P with multiplicity in [lo, hi) -- a sign change at the
    endpoints suffices for c = 1, a Sturm count otherwise -- and the counts add up
    to deg P, so each cell holds exactly c and no root lies outside the cells."""
    what = "cells witness"
    P = charpoly(X)
    cs = P.coeffs()
    z = w["zero"]
    require(all(c == 0 for c in cs[:z]) and (z == len(cs) - 1 or cs[z] != 0), what,
            f"the characteristic polynomial does not have x^{z} exactly")
    P = fmpz_poly(cs[z:])
    g = w["grid_exponent"]
    boxes, ends = [], []
    for k, r, c in w["cells"]:
        require(c >= 1 and r >= 0, what, "a cell needs a positive count and a level r ≥ 0")
        h = fmpq(2) ** (g - r) if g - r >= 0 else fmpq(1, 2 ** (r - g))
        lo, hi = k * h, (k + 1) * h
        require(not ends or ends[-1][1] <= lo, what, "cells not sorted and disjoint")
        ends.append((lo, hi, c))
    total = 0
    for i, (lo, hi, c) in enumerate(ends):
        if c == 1 and sign_at(P, lo) * sign_at(P, hi) < 0:
            n_in = 1  # at least one root inside; the total below makes it exactly one
        else:
            n_in = count_with_multiplicity(P, lo, hi)
        require(n_in >= c, what, f"cell {i} holds fewer than {c} roots")
        total += c
        boxes.extend([Box(lo, hi)] * c)
    require(total == P.degree(), what, f"the cells hold {total} roots, the polynomial has {P.degree()}")
    return boxes, z


# ---------------------------------------------------------------------------
# fiber decomposition S = H ± P (Theorem 4, faces c = 0 and d = 0)


def fiber_fact(face: str, S: fmpq_mat, H: fmpq_mat, P: fmpq_mat) -> fmpq:
    """Check the decomposition properties and return ‖P‖².

    S = H + P (face d) or S = H − P (face c); H, P symmetric; H, P commute with S
    and with each other; the spectrum of H is symmetric about 0 (its characteristic
    polynomial is even or odd); P ⪰ 0 (its characteristic polynomial, real-rooted,
    has no sign agreement between consecutive nonzero coefficients -- Descartes:
    no negative root)."""
    what = f"fiber decomposition (face {face})"
    sgn = 1 if face == "d" else -1
    require(H + P * sgn == S, what, f"S ≠ H {'+' if sgn > 0 else '−'} P")
    require(H.transpose() == H and P.transpose() == P, what, "H or P is not symmetric")
    require(H * S == S * H and P * S == S * P and H * P == P * H, what, "H, P and S do not commute")
    D = max(H.numer_denom()[1], fmpz(1))
    ch = integer_scaled(H, D, what).charpoly().coeffs()
    parity = [c for k, c in enumerate(ch) if (k + len(ch) - 1) % 2 == 1]
    require(all(c == 0 for c in parity), what, "the spectrum of H is not symmetric about 0")
    D = max(P.numer_denom()[1], fmpz(1))
    cp = integer_scaled(P, D, what).charpoly().coeffs()
    # roots of charpoly(−x) ↔ negative eigenvalues: no sign change in q(x) = charpoly(−x)
    q = [c if k % 2 == 0 else -c for k, c in enumerate(cp)]
    nz = [c for c in q if c != 0]
    require(all((a > 0) == (b > 0) for a, b in zip(nz, nz[1:])), what, "P has a negative eigenvalue")
    return sum((P[i, j] ** 2 for i in range(P.nrows()) for j in range(P.ncols())), fmpq(0))


# ---------------------------------------------------------------------------
# exact inverse (Appendix C: the traces of Lemma 9 and Lemma 10)


def inverse_fact(w: dict, X: fmpq_mat) -> fmpq_mat:
    """Y = X⁻¹: the stated rows multiplied back give the identity."""
    Y = fmpq_mat([[rat(v) for v in r] for r in w["rows"]])
    n = X.nrows()
    require(Y.nrows() == n and Y.ncols() == n and Y * X == fmpq_mat(n, n, [int(i == j) for i in range(n)
                                                                              for j in range(n)]),
            f"inverse witness of {w['of']}", "the stated matrix times the matrix is not the identity")
    return Y
