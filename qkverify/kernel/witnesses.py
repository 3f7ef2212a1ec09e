"""Every witness checker, in one table (:data:`CHECKERS`, witness kind -> checker).

The kernel's first pass sends each witness of a certificate through the checker of its
kind.  A checker takes the witness (already validated by the schema) and the kernel's
view of the certificate ``q`` (the well-formed input's exact objects ``q.arg(name)``,
the matrices the rule packs derive from them ``q.mat(of)``, and other facts
``q.fact(kind, of)``); it multiplies out, evaluates signs and counts roots, and returns
a typed fact (the small dataclasses below), or raises :class:`Invalid` naming the
witness.  Rules read facts only (``q.fact``); they never see a witness's text."""

from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

from flint import arb, arb_mat, fmpq, fmpq_mat, fmpz, fmpz_mat, fmpz_poly, nmod_mat

from . import limits
from .algebra import (Box, CBox, Quad, Real, Root, cmp, count_with_multiplicity, interval, krawczyk, power_sum_2,
                      precision, roots_in, sign, sign_at, squarefree, sturm_count, to_arb)
from .jsonio import Invalid, NotEvaluable, Undecided, dec, poly, qstr, rat, ratmat, require

#: witness kind -> checker(w, q) -> fact
CHECKERS: dict[str, Callable[[dict, Any], Any]] = {}


def checker(kind: str):
    def reg(fn):
        assert kind not in CHECKERS, kind
        CHECKERS[kind] = fn
        return fn
    return reg


def integer_scaled(X: fmpq_mat, D: fmpz, what: str) -> fmpz_mat:
    """D·X as an integer matrix (Invalid if D·X is not integral)."""
    Y = X * D
    num, den = Y.numer_denom()
    require(den == 1, what, f"scale {D} does not clear the denominators")
    return num


def _scaled(f: fmpz_poly, D: fmpz) -> fmpz_poly:
    """g with g(x) = 0 iff f(D·x) = 0: coefficients c_k·D^k."""
    return fmpz_poly([c * D**k for k, c in enumerate(f.coeffs())])


def eye(n: int) -> fmpq_mat:
    return fmpq_mat(n, n, [int(i == j) for i in range(n) for j in range(n)])


# ---------------------------------------------------------------------------
# facts: what each checker establishes (typed; rules read their fields)

Spectrum = NamedTuple("Spectrum", [("values", list), ("power_sum_2", fmpq)])  # every eigenvalue with multiplicity; Σλ²
Rank = NamedTuple("Rank", [("rank", int), ("kernel", tuple)])  # rank X; integer y with yᵀX = 0 spanning the left kernel
Cells = NamedTuple("Cells", [("boxes", list), ("zero", int), ("charpoly", fmpz_poly)])  # one box per nonzero root; 0's multiplicity
Fiber = NamedTuple("Fiber", [("H", fmpq_mat), ("P", fmpq_mat), ("normP", object), ("commute", bool), ("sqrt", fmpq)])
# S = H ± P with its properties; ‖P‖² (fmpq, or Quad over ℚ(√sqrt)); whether H, P commute with S and each other;
# sqrt: the entries lie in ℚ(√sqrt) (1: rational; H, P are then the rational parts)
Factor = NamedTuple("Factor", [("x", list), ("y", list)])  # x, y ≠ 0 in ℚ(√m)^N (for L: rational, L = x yᵀ)
Orthogonal = NamedTuple("Orthogonal", [("U", fmpq_mat)])  # UᵀU = 1, N × N
Inverse = NamedTuple("Inverse", [("Y", fmpq_mat), ("singular", bool)])  # Lean's X⁻¹ (0 when X is singular)
ThetaPoint = NamedTuple("ThetaPoint", [("point", list)])  # the Lean proof's preimage of limitProfile ρ
Trend = NamedTuple("Trend", [("paths", int), ("decreasing", int), ("threshold", int)])  # sign test: paths, #decreasing, k*
Moments = NamedTuple("Moments", [("values", dict), ("why", dict)])  # E‖L‖², E tr(L·L), E‖S‖², E‖T‖² (None: undecided, why)
Enumeration = NamedTuple("Enumeration", [("E_ratio_S", fmpq), ("E_ratio_T", fmpq)])  # exact, over every value pattern
MonteCarlo = NamedTuple("MonteCarlo", [("intervals", list), ("samples", int), ("delta", fmpq)])  # Hoeffding intervals of the re-drawn sample, m, δ
CRoots = NamedTuple("CRoots", [("roots", list)])  # every eigenvalue once: (rational | Root | CBox, multiplicity, factor)
EigVec = NamedTuple("EigVec", [("psi", list), ("exact", bool), ("prec", int)])  # ψ ≠ 0, Xψ = λψ for the dominant λ
Definite = NamedTuple("Definite", [("positive", bool)])  # S ≻ 0, or not
Eigenspace = NamedTuple("Eigenspace", [("full", bool)])  # dim ker(X − λI) = the multiplicity m of the dominant λ


def dominant(c: CRoots, simple: bool):
    """(λ, m): the real positive eigenvalue strictly larger in modulus than every other one, with
    its multiplicity (m = 1 required when ``simple``), or None."""
    pos = [(x, m) for x, m, _ in c.roots if not isinstance(x, CBox) and sign(x) > 0 and (m == 1 or not simple)]
    if not pos:
        return None
    lam, mult = pos[0]
    for x, m in pos[1:]:
        if cmp(x, lam) > 0:
            lam, mult = x, m
    return None if any(x is not lam and _vs(lam, x) <= 0 for x, _, _ in c.roots) else (lam, mult)


def _vs(lam, x) -> int:
    """sign(λ − |x|) for the real λ > 0 and another eigenvalue x (exact, or through a box)."""
    if not isinstance(x, CBox):
        return cmp(lam, x if sign(x) > 0 else (-x if isinstance(x, fmpq) else x.neg()))
    (lo2, hi2), (lo, hi) = x.mod2(), interval(lam)
    if lo * lo > hi2:
        return 1
    if hi * hi < lo2:
        return -1
    raise Undecided("the modulus of a real eigenvalue and of a complex box are not separated by the witness")


# ---------------------------------------------------------------------------
# rank


def _minor_mod(Y: fmpz_mat, rows: list[int], cols: list[int], p: int) -> int:
    if not rows:
        return 1
    return int(nmod_mat([[int(Y[i, j]) % p for j in cols] for i in rows], p).det())


def rank_of(w: dict, X: fmpq_mat) -> Rank:
    """Rank(X) = r: a nonzero r×r minor of scale·X modulo a prime p (rank ≥ r) and,
    when r < rows, ``kernel``: rows − r integer vectors y with yᵀ·(scale·X) = 0 whose
    own minor on ``kernel_cols`` is nonzero mod p (rank ≤ r)."""
    what = f"rank witness of {w['of']}"
    D = fmpz(w["scale"])
    require(D > 0, what, "scale must be positive")
    limits.over("bits of a scale", D.bit_length(), limits.MAX_WITNESS_BITS, "MAX_WITNESS_BITS")
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
    return Rank(r, tuple(tuple(int(v) for v in y) for y in K))


def invertible(c: Cells) -> bool:
    """X is invertible, read off its Cells fact: 0 is not a root of charpoly(X), i.e. the
    fact's ``zero`` (the multiplicity of x in charpoly(X), checked exactly by
    :func:`cells_of`) is 0 -- the constant term ±det X is nonzero."""
    return c.zero == 0 and c.charpoly.degree() >= 1


def rank_from_cells(w: dict, q) -> Rank:
    """Rank(M) = 2n for a weights head from its Cells fact (witness ``"from": "cells"``).

    Proof: the cells checker has computed charpoly(X) of X = J·Z·Zᵀ (M = Z·2^e, Z
    integer 2n × N) and the exact multiplicity of its root 0.  If 0 is not a root,
    det X = det J·det(Z Zᵀ) ≠ 0 with det J = ±1, so Z Zᵀ (2n × 2n) is invertible,
    rank Z ≥ rank Z Zᵀ = 2n, and rank M = rank Z ≤ 2n (its row count): rank M = 2n.
    Nothing is computed beyond the cells witness's own check; a head where 0 is a root
    (rank-deficient) is refused -- it needs the minor and kernel-vector form."""
    what = "rank witness of M"
    require(q.kind == "weights", what, "a rank from cells needs a weights head (its cells witness)")
    n2 = 2 * q.arg("n")
    require(w["rank"] == n2, what, f"a rank from cells can only state rank M = 2n = {n2}")
    c: Cells = q.fact("cells", "JZZt")
    require(n2 >= 1 and c.charpoly.degree() == n2 and invertible(c), what,
            "charpoly(J·Z Zᵀ) has a zero constant term: Z Zᵀ is singular, rank M < 2n")
    return Rank(rank=n2, kernel=())


@checker("rank")
def _rank(w: dict, q) -> Rank:
    if w.get("from") == "cells":
        return rank_from_cells(w, q)
    if w["of"] == "M" and q.kind == "weights":
        return rank_of(w, fmpq_mat(q.head_Z()[0]))
    return rank_of(w, q.mat(w["of"]))


# ---------------------------------------------------------------------------
# exact spectrum of a rational symmetric matrix


def spectrum_of(w: dict, X: fmpq_mat, real_only: bool = False) -> Spectrum:
    """Spectrum(X), with multiplicity, each eigenvalue exact.

    Checks: Π poly_k^m_k equals charpoly(D·X) times the product of the leading
    coefficients (FLINT charpoly is monic); each poly_k has deg poly_k sorted,
    disjoint intervals, each a rational root or a sign change -- so each holds
    exactly one simple root and all roots are real; distinct factors share no root.

    ``real_only`` (the ``real_roots`` witness of any square X): a factor lists only its real
    roots, and their number must be its count of distinct real roots (Sturm, inside the
    Cauchy bound), so none is missing; ``values`` are then the real roots of det(tI − X)."""
    what = f"{'real_roots' if real_only else 'spectrum'} witness of {w['of']}"
    D = fmpz(w["scale"])
    require(D > 0, what, "scale must be positive")
    limits.over("bits of a scale", D.bit_length(), limits.MAX_WITNESS_BITS, "MAX_WITNESS_BITS")
    limits.over("rows of a matrix to take the characteristic polynomial of", X.nrows(), limits.MAX_CHARPOLY_DIM,
                "MAX_CHARPOLY_DIM")
    require(sum(len(f["poly"]) - 1 for f in w["factors"]) <= X.nrows(), what, "the factors' degrees exceed the size")
    P = limits.for_charpoly(integer_scaled(X, D, what)).charpoly()
    prod, lead = fmpz_poly([1]), fmpz(1)
    values: list[Real] = []
    polys = []
    for k, fac in enumerate(w["factors"]):
        f, m, roots = poly(fac["poly"]), fac["multiplicity"], fac["roots"]
        require(f.degree() >= 1 and m >= 1, what, f"factor {k} is constant or has multiplicity 0")
        if real_only:
            cs = f.coeffs()
            bound = 1 + max((abs(fmpq(c, cs[-1])) for c in cs[:-1]), default=fmpq(0))
            n_real = sturm_count(f, -bound, bound)
            require(len(roots) == n_real, what, f"factor {k}: {n_real} real roots, {len(roots)} given")
        else:
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
    p2 = sum((fac["multiplicity"] * power_sum_2(poly(fac["poly"])) for fac in w["factors"]), fmpq(0)) / (D * D)
    return Spectrum(values, p2)


@checker("spectrum")
def _spectrum(w: dict, q) -> Spectrum:
    return spectrum_of(w, q.mat(w["of"]))


@checker("real_roots")
def _real_roots(w: dict, q) -> Spectrum:
    """The real roots of det(tI − X), X any square matrix (Lean's ``X.charpoly.roots`` in ℝ)."""
    return spectrum_of(w, q.mat(w["of"]), real_only=True)


# ---------------------------------------------------------------------------
# cells: enclosures of the nonzero spectrum of X = J Z Zᵀ (a weights head)


def cells_of(w: dict, X: fmpz_mat) -> Cells:
    """The nonzero eigenvalues of the integer matrix X in cells, and the multiplicity of 0.

    One rule, everywhere: a cell (k, r, c) is the half-open interval [lo, hi) =
    [k·2^(g−r), (k+1)·2^(g−r)) and holds c roots of P, counted with multiplicity, where
    charpoly(X) = x^z·P, P(0) ≠ 0.  The kernel checks:

    1. the cells are sorted and disjoint (each hi ≤ the next lo);
    2. each cell holds at least c roots: for c = 1 a sign change P(lo)·P(hi) < 0 (a root in
       (lo, hi) ⊂ [lo, hi)), otherwise the count with multiplicity on [lo, hi); whether its roots
       are one value (one distinct root of P there) is recorded with the cell -- two distinct
       eigenvalues may share a cell, and then no value is ever declared equal to one of them
       (:func:`.rules.definition6.cell_cmp`);
    3. Σ c = deg P.  Then each cell holds exactly c roots and none lies outside the cells
       (a cell holding more would leave fewer than deg P for the others).

    Two values in cells are compared by :func:`.derive.cell_cmp` (the same half-open rule)."""
    what = "cells witness"
    full = _charpoly(X.nrows(), tuple(X.entries()))
    cs = full.coeffs()
    z = w["zero"]
    require(all(c == 0 for c in cs[:z]) and (z == len(cs) - 1 or cs[z] != 0), what,
            f"the characteristic polynomial does not have x^{z} exactly")
    P = fmpz_poly(cs[z:])
    g = w["grid_exponent"]
    limits.over("bits of a cell grid exponent", max([abs(g)] + [abs(r) for _, r, _ in w["cells"]]),
                limits.MAX_WITNESS_BITS, "MAX_WITNESS_BITS")
    ends: list[tuple] = []
    for k, r, c in w["cells"]:
        require(c >= 1 and r >= 0, what, "a cell needs a positive count and a level r ≥ 0")
        h = fmpq(2) ** (g - r) if g - r >= 0 else fmpq(1, 2 ** (r - g))
        lo, hi = k * h, (k + 1) * h
        require(not ends or ends[-1][1] <= lo, what, "cells not sorted and disjoint")
        ends.append((lo, hi, c))
    R = squarefree(P)
    boxes = []
    for i, (lo, hi, c) in enumerate(ends):
        one = True                      # a sign change with c = 1: one root
        if not (c == 1 and sign_at(P, lo) * sign_at(P, hi) < 0):
            require(count_with_multiplicity(P, lo, hi) >= c, what, f"cell {i} does not hold {c} roots")
            one = roots_in(R, lo, hi) == 1
        boxes.extend([Box(lo, hi, False, (lo, hi, 1, one))] * c)
    require(len(boxes) == P.degree(), what, f"the cells hold {len(boxes)} roots, the polynomial has {P.degree()}")
    return Cells(boxes, z, full)


@functools.lru_cache(maxsize=4)
def _charpoly(n: int, entries: tuple) -> fmpz_poly:
    """det(tI − X) of the n × n integer matrix with these entries (row-major), once per matrix: a
    head's profile and Theorem 3 certificates both state cells of the same J·Z·Zᵀ."""
    return limits.for_charpoly(fmpz_mat(n, n, list(entries))).charpoly()


@checker("cells")
def _cells(w: dict, q) -> Cells:
    Z, e = q.head_Z()
    require(w["scale_exponent"] == e, "cells witness", f"scale exponent {w['scale_exponent']} ≠ {e}")
    n = q.arg("n")
    G = Z * Z.transpose()
    rows = G.tolist()
    X = fmpz_mat(rows[n:] + rows[:n])  # J·G
    return cells_of(w, X)


# ---------------------------------------------------------------------------
# fiber decomposition S = H ± P (Theorem 4, faces c = 0 and d = 0)


def fiber_props(face: str, S: fmpq_mat, H: fmpq_mat, P: fmpq_mat) -> Fiber:
    """Check the decomposition properties of S = H + P (face d) or S = H − P (face c), as
    profileD_eq_zero_iff_decomp states them (no commutation): H, P symmetric; the spectrum of H
    is symmetric about 0 (its characteristic polynomial is even or odd); P ⪰ 0 (its
    characteristic polynomial, real-rooted, has no sign agreement between consecutive nonzero
    coefficients of charpoly(−x) -- Descartes: no negative root).  Whether H and P commute with
    S and with each other is recorded, for the decomp_commute declarations."""
    what = f"fiber decomposition (face {face})"
    require(H.nrows() == H.ncols() == P.nrows() == P.ncols() == S.nrows(), what, "H and P must be N × N")
    limits.over("rows of a matrix to take the characteristic polynomial of", S.nrows(), limits.MAX_CHARPOLY_DIM,
                "MAX_CHARPOLY_DIM")
    sgn = 1 if face == "d" else -1
    require(H + P * sgn == S, what, f"S ≠ H {'+' if sgn > 0 else '−'} P")
    require(H.transpose() == H and P.transpose() == P, what, "H or P is not symmetric")
    commute = H * S == S * H and P * S == S * P and H * P == P * H
    D = max(limits.for_charpoly(H).numer_denom()[1], fmpz(1))
    ch = integer_scaled(H, D, what).charpoly().coeffs()
    parity = [c for k, c in enumerate(ch) if (k + len(ch) - 1) % 2 == 1]
    require(all(c == 0 for c in parity), what, "the spectrum of H is not symmetric about 0")
    D = max(limits.for_charpoly(P).numer_denom()[1], fmpz(1))
    cp = integer_scaled(P, D, what).charpoly().coeffs()
    neg = [c if k % 2 == 0 else -c for k, c in enumerate(cp)]
    nz = [c for c in neg if c != 0]
    require(all((a > 0) == (b > 0) for a, b in zip(nz, nz[1:])), what, "P has a negative eigenvalue")
    return Fiber(H, P, sum((P[i, j] ** 2 for i in range(P.nrows()) for j in range(P.ncols())), fmpq(0)), commute, fmpq(1))


def _qmul(X: tuple, Y: tuple, s: fmpq) -> tuple:
    """(A + B√s)(C + D√s) = (AC + s·BD) + (AD + BC)√s for rational matrices A, B, C, D."""
    (A, B), (C, D) = X, Y
    return A * C + B * D * s, A * D + B * C


def _qtrace(X: tuple, s: fmpq) -> Quad:
    n = X[0].nrows()
    return Quad(sum((X[0][i, i] for i in range(n)), fmpq(0)), sum((X[1][i, i] for i in range(n)), fmpq(0)), s)


def fiber_props_quadratic(face: str, S: fmpq_mat, H: tuple, P: tuple, s: fmpq) -> Fiber:
    """The decomposition S = H ± P with entries in ℚ(√s) (H = H₀ + H₁√s, P = P₀ + P₁√s; s > 0 not a
    square): S = H₀ ± P₀ and 0 = H₁ ± P₁; H, P symmetric (each part); the spectrum of H symmetric
    about 0 ⇔ tr(H^k) = 0 for every odd k ≤ N (Newton's identities: the odd elementary symmetric
    functions of the eigenvalues vanish ⇔ det(tI − H) is even or odd); P ⪰ 0 ⇔ every elementary
    symmetric function e_k of its (real) eigenvalues is ≥ 0 (e_k from the power sums tr(P^k) by
    Newton's identities; a real-rooted polynomial whose coefficients alternate has no negative root),
    signs exact in ℚ(√s); commutation recorded; ``normP`` = tr(P²) (a Quad)."""
    what = f"fiber decomposition (face {face}, over ℚ(√{s}))"
    N = S.nrows()
    require(all(X.nrows() == X.ncols() == N for X in H + P), what, "H and P must be N × N")
    sgn = 1 if face == "d" else -1
    require(H[0] + P[0] * sgn == S and H[1] + P[1] * sgn == fmpq_mat(N, N), what, f"S ≠ H {'+' if sgn > 0 else '−'} P")
    require(all(X.transpose() == X for X in H + P), what, "H or P is not symmetric")
    limits.over("fiber dimension", N, limits.MAX_QUADRATIC_FIBER, "MAX_QUADRATIC_FIBER")

    def power_sums(X: tuple) -> list:
        out, Y = [], X
        for _ in range(N):
            out.append(_qtrace(Y, s))
            Y = _qmul(Y, X, s)
        return out

    pH = power_sums(H)
    require(all(pH[k].sign() == 0 for k in range(0, N, 2)), what, "the spectrum of H is not symmetric about 0")
    pP, e = power_sums(P), [Quad(1)]
    for k in range(1, N + 1):   # Newton: k·e_k = Σ_{i=1..k} (−1)^(i−1) e_{k−i} p_i
        acc = Quad(0)
        for i in range(1, k + 1):
            acc = acc + (e[k - i] * pP[i - 1] if i % 2 else -(e[k - i] * pP[i - 1]))
        e.append(acc * Quad(fmpq(1, k)))
    require(all(x.sign() >= 0 for x in e), what, "P has a negative eigenvalue")
    Sq = (S, fmpq_mat(N, N))
    commute = all(_qmul(X, Y, s) == _qmul(Y, X, s) for X, Y in ((H, Sq), (P, Sq), (H, P)))
    return Fiber(H[0], P[0], _qtrace(_qmul(P, P, s), s), commute, s)


@checker("fiber")
def _fiber(w: dict, q) -> Fiber:
    """S = H ± P as fiber_props states it; with ``sqrt`` = s the entries are H + H_sqrt·√s, P + P_sqrt·√s."""
    if "sqrt" not in w:
        return fiber_props(w["of"], q.mat("S"), ratmat(w["H"]), ratmat(w["P"]))
    s = rat(w["sqrt"])
    require(s > 0 and not (s.p.isqrt() ** 2 == s.p and s.q.isqrt() ** 2 == s.q), "fiber witness",
            "sqrt must be a positive non-square")
    return fiber_props_quadratic(w["of"], q.mat("S"), (ratmat(w["H"]), ratmat(w["H_sqrt"])),
                                 (ratmat(w["P"]), ratmat(w["P_sqrt"])), s)


# ---------------------------------------------------------------------------
# factor x yᵀ (Proposition 4), orthogonal extension (exists_orthogonal_cols)


@checker("factor")
def _factor(w: dict, q) -> Factor:
    """x, y (entries x + x_sqrt·√sqrt), both nonzero and of one length; for ``of`` L they are
    rational and x yᵀ = L, for ``of`` theta they have the input's length N."""
    what = "factor witness"
    m, z = rat(w.get("sqrt", "0")), ["0"] * len(w["x"])
    require("sqrt" not in w or (m > 0 and not (m.p.isqrt() ** 2 == m.p and m.q.isqrt() ** 2 == m.q)),
            what, "sqrt must be a positive non-square")
    x, y = ([Quad(rat(a), rat(b), m) for a, b in zip(w[k], w.get(k + "_sqrt", z))] for k in "xy")
    require(len(x) == len(y) == len(w.get("x_sqrt", z)) == len(w.get("y_sqrt", z)) and any(v.sign() for v in x)
            and any(v.sign() for v in y), what, "x, y must be nonzero, one entry per coordinate each")
    if w["of"] == "L":
        L = q.mat("L")
        require(all(v.b == 0 for v in x + y) and len(x) == L.nrows()
                and all(x[i].a * y[j].a == L[i, j] for i in range(L.nrows()) for j in range(L.ncols())),
                what, "L ≠ x yᵀ with rational x, y")
    else:
        require(len(x) == q.arg("N"), what, "x yᵀ is not N × N")
    return Factor(x, y)


@checker("orthogonal")
def _orthogonal(w: dict, q) -> Orthogonal:
    U, N = ratmat(w["U"]), q.arg("N")
    require(U.nrows() == U.ncols() == N and U.transpose() * U == eye(N), "orthogonal witness", "U is not N × N with UᵀU = 1")
    return Orthogonal(U)


# ---------------------------------------------------------------------------
# exact inverse (Appendix C: the traces of Lemma 9 and Lemma 10)


@checker("inverse")
def _inverse(w: dict, q) -> Inverse:
    """Mathlib's X⁻¹ (``Matrix.inv``; kernel/lean.py mat_inv): the stated rows Y with Y·X = 1, or a
    stated nonzero rational v with X·v = 0 (X singular, X⁻¹ = 0)."""
    X, what = q.mat(w["of"]), f"inverse witness of {w['of']}"
    require(X.nrows() == X.ncols(), what, "only a square matrix has an inverse")
    n = X.nrows()
    if "null" in w:
        v = fmpq_mat([[rat(c)] for c in w["null"]])
        require(v.nrows() == n and any(v.entries()) and not any((X * v).entries()), what,
                "the stated vector is zero or not in the kernel")
        return Inverse(fmpq_mat(n, n), True)
    Y = ratmat(w["rows"])
    require(Y.nrows() == n and Y.ncols() == n and Y * X == eye(n), what,
            "the stated matrix times the matrix is not the identity")
    return Inverse(Y, False)


CounterExample = NamedTuple("CounterExample", [("y", tuple)])  # a point offered against a ∀-hypothesis (near_identity's hM)


@checker("counterexample")
def _counterexample(w: dict, q) -> CounterExample:
    """The stated point, read exactly (its sides are the rule's: it depends on the declaration)."""
    return CounterExample(tuple(rat(c) for c in w["y"]))


KernelBasis = NamedTuple("KernelBasis", [("dim", int)])  # dim independent vectors v with [W_Q; W_K]·v = 0


@checker("kernel_basis")
def _kernel_basis(w: dict, q) -> KernelBasis:
    """The stated vectors lie in the kernel of J = [W_Q; W_K] (J·v = 0, exactly) and are linearly
    independent (their matrix has full rank); that they span it is the rank witness's part
    (rank J + #vectors = N, checked by the rule)."""
    what = "kernel_basis witness of the stacked map"
    WQ, WK = q.arg("W_Q"), q.arg("W_K")
    N = WQ.ncols()
    vs = [[rat(c) for c in v] for v in w["vectors"]]
    require(all(len(v) == N for v in vs), what, f"each vector has N = {N} entries")
    if vs:
        V = fmpq_mat(vs).transpose()
        for M in (WQ, WK):
            if M.nrows():
                require(not any((M * V).entries()), what, "a vector is not in the kernel of the stacked map")
        require(V.rank() == len(vs), what, "the vectors are not linearly independent")
    return KernelBasis(len(vs))


# ---------------------------------------------------------------------------
# Theorem 5: the preimage of limitProfile, the sampled trend


@checker("theta_point")
def _theta_point(w: dict, q) -> ThetaPoint:
    """The Lean proof's preimage θ = (ρ, ρ, (1 − ρ)₊², (ρ − 1)₊²)/(1 + ρ²)."""
    t, rho = [rat(v) for v in w["point"]], q.arg("rho")
    d, pos = 1 + rho * rho, lambda v: max(v, fmpq(0))
    require(t == [rho / d, rho / d, pos(1 - rho) ** 2 / d, pos(rho - 1) ** 2 / d], "theta_point witness",
            "not the preimage (ρ, ρ, (1 − ρ)₊², (ρ − 1)₊²)/(1 + ρ²) of the Lean proof")
    return ThetaPoint(t)


def _inside(ball: arb, enc: list) -> bool:
    return bool(ball.lower() >= arb(dec(enc[0]))) and bool(ball.upper() <= arb(dec(enc[1])))


@checker("trend")
def _trend(w: dict, q) -> Trend:
    """Every path re-drawn (sampler mt19937-lobes/2, seed derived from the input): its stated
    [bits, outcome] must be what the balls give at ``bits``, after overlapping balls at every lower
    precision of the ladder; ``overlap`` only at the last precision.  ``decreasing`` = #down + #zero."""
    from .rules import sampling as SMP  # the section's sampler (rules import this module)

    a = q.args
    require(len(w["paths"]) == a["paths"], "trend witness", f"the input has {a['paths']} paths")
    paths = SMP.draw_paths(a, SMP.seed(q.inp))
    for k, ((bits, outcome), path) in enumerate(zip(w["paths"], paths)):
        for b in SMP.PATH_BITS:
            if b > bits:
                break
            got = SMP.path_outcome(a, w["of"], path, b)
            want = (None if outcome == "overlap" else outcome) if b == bits else None
            require(got == want and (outcome != "overlap" or bits == SMP.PATH_BITS[-1]), "trend witness",
                    f"path {k}: at {b} bits the comparison gives {got or 'overlapping balls'}, the witness says "
                    f"{outcome} at {bits}")
    down = sum(1 for _, o in w["paths"] if o in ("down", "zero"))
    require(w["decreasing"] == down, "trend witness", f"{down} paths decreased")
    return Trend(a["paths"], down, SMP.sign_threshold(a["paths"], a["delta"]))


# ---------------------------------------------------------------------------
# Appendix A: moments, enumeration, Monte Carlo


@checker("moments")
def _moments(w: dict, q) -> Moments:
    """The stated integrals are the kernel's (an integral it leaves undecided is absent)."""
    from .rules import sampling as SMP  # the section's sampler (rules import this module)

    out, why = SMP.moments(q.args)
    want = {k: qstr(v) for k, v in out.items() if v is not None}
    got = {k: w[k] for k in out if k in w}
    bad = sorted(set(want) ^ set(got) | {k for k in want if k in got and rat(got[k]) != out[k]})
    require(not bad, "moments witness", f"{bad[0]} is {want.get(bad[0], 'undecided')}" if bad else "")
    return Moments(out, why)


@checker("enumeration")
def _enumeration(w: dict, q) -> Enumeration:
    """The exact expectations by the stated method, recomputed (docs/CERTIFICATES.md)."""
    from .rules import sampling as SMP  # the section's sampler (rules import this module)

    method = w["method"]
    if method == "patterns":
        count, eS, eT = SMP.enumerate_energy(q.args)
        require(w.get("patterns") == count, "enumeration witness", f"the enumeration has {count} patterns")
    else:
        require("patterns" not in w, "enumeration witness", "only the patterns method counts patterns")
        if method == "zero":
            require(SMP.zero_product(q.args), "enumeration witness", "neither W_K nor W_Q is identically 0")
            eS = eT = fmpq(0)
        elif method == "symmetric":
            eS, eT = SMP.symmetric(q.args)
        elif method == "convolution":
            require(q.args["model"] == "iid", "enumeration witness", "the convolution is for iid inputs")
            eS, eT = SMP.convolution_energy(q.args)
        else:
            eS, eT = SMP.one_dimensional(q.args)
    require((rat(w["E_ratio_S"]), rat(w["E_ratio_T"])) == (eS, eT), "enumeration witness",
            f"the {method} route gives E_ratio_S = {qstr(eS)}, E_ratio_T = {qstr(eT)}")
    return Enumeration(eS, eT)


@checker("monte_carlo")
def _monte_carlo(w: dict, q) -> MonteCarlo:
    """The witness states exactly the re-drawn sample's sums, zero count, half-width and intervals
    (seed derived from the input)."""
    from .rules import sampling as SMP  # the section's sampler (rules import this module)

    r = SMP.monte_carlo(q.args, SMP.seed(q.inp))
    s, iv = r["sums"], r["intervals"]
    want = {"sum_S": str(s[0]), "sum_T": str(s[1]), "zero_samples": s[2], "halfwidth": qstr(r["halfwidth"]),
            "interval_S": [qstr(x) for x in iv[0]], "interval_T": [qstr(x) for x in iv[1]]}
    bad = [k for k in want if w[k] != want[k]]
    require(not bad, "monte_carlo witness", f"{bad[0]} is {want[bad[0]]} for the re-drawn sample" if bad else "")
    return MonteCarlo(iv, r["samples"], r["delta"])


# ---------------------------------------------------------------------------
# clustering regimes: complex spectrum, eigenvector, definiteness, eigenspace


@checker("croots")
def _croots(w: dict, q) -> CRoots:
    """Every eigenvalue of X once, with its multiplicity and square-free factor.

    With X = Y/D (Y integral), the witness gives per multiplicity m a factor f_m of charpoly(Y);
    Π f_m^m (times the leading coefficients) is charpoly(Y) -- multiplied out, not factorised --
    and the f_m are pairwise coprime.  The roots of g_m(x) = f_m(D·x) (the eigenvalues) are listed
    as sorted disjoint rational intervals (a sign change, or a rational root) and, for non-real
    ones with positive imaginary part, boxes above the real axis, pairwise disjoint, each passing
    the Krawczyk test at ``prec`` bits.  Each interval and each box and its mirror image hold a
    root, and their number is deg g_m: so each holds exactly one, the deg g_m roots are distinct
    (f_m is square-free) and, the f_m being coprime, each has multiplicity exactly m."""
    X = q.mat(w["of"])
    what = f"croots witness of {w['of']}"
    limits.over("rows of a matrix to take the characteristic polynomial of", X.nrows(), limits.MAX_CHARPOLY_DIM,
                "MAX_CHARPOLY_DIM")
    prec = w["prec"]
    require(64 <= prec <= limits.MAX_PREC, what, f"prec must lie in [64, {limits.MAX_PREC}]")
    Y, D = limits.for_charpoly(X).numer_denom()
    fs = [(poly(f["poly"]), f["multiplicity"]) for f in w["factors"]]
    require(all(f.degree() >= 1 for f, _ in fs) and len({m for _, m in fs}) == len(fs), what,
            "a factor is constant, or two have one multiplicity")
    prod, lead = fmpz_poly([1]), fmpz(1)
    for f, m in fs:
        prod, lead = prod * f ** m, lead * f.coeffs()[-1] ** m
    require(prod == Y.charpoly() * lead, what, "the factors do not multiply to the characteristic polynomial")
    require(all(fs[i][0].gcd(fs[j][0]).degree() == 0 for i in range(len(fs)) for j in range(i)), what,
            "two factors share a root")
    out: list = []
    boxed = False
    for fac, (f, m) in zip(w["factors"], fs):
        g = _scaled(f, D)  # g(x) = f(D·x): the eigenvalues of X
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
            boxed = True
    q.certified = q.certified or boxed  # a non-real eigenvalue is known only by its box
    return CRoots(out)


@checker("eigvec")
def _eigvec(w: dict, q) -> EigVec:
    """An eigenvector ψ of X for its simple dominant eigenvalue λ: exact (``vector``, checked
    Xψ = λψ, ψ ≠ 0) or enclosed (``pivot`` k, ``prec``: the unique solution with ψ_k = 1 of
    the rows i ≠ k of (X − λI)ψ = 0 by an Arb solve, whose success shows those rows
    independent, so the eigenvector has ψ_k ≠ 0 and is that solution)."""
    what = f"eigvec witness of {w['of']}"
    X = q.mat(w["of"])
    top = dominant(q.fact("croots", w["of"]), True)
    if top is None:
        raise NotEvaluable("the top eigenvalue is not real, positive and simple")
    lam, n = top[0], X.nrows()
    if "vector" in w:
        require(isinstance(lam, fmpq), what, "an exact eigenvector needs a rational eigenvalue")
        v = ratmat([[x] for x in w["vector"]])
        require(v.nrows() == n and any(v.entries()) and X * v == v * lam, what, "not an eigenvector for λ")
        return EigVec([v[i, 0] for i in range(n)], True, 0)
    k, prec = w["pivot"], w["prec"]
    require(0 <= k < n and 64 <= prec <= limits.MAX_PREC, what, "bad pivot or precision")
    idx = [i for i in range(n) if i != k]
    with precision(prec):
        lb = to_arb(lam, prec + 16)
        M = arb_mat([[arb(X[i, j]) - (lb if i == j else 0) for j in idx] for i in idx])
        try:
            y = M.solve(arb_mat([[-arb(X[i, k])] for i in idx]))
        except ZeroDivisionError:
            raise Undecided(f"{what}: the reduced system is not shown nonsingular at {prec} bits") from None
        return EigVec([arb(1) if i == k else y[idx.index(i), 0] for i in range(n)], False, prec)


@checker("definite")
def _definite(w: dict, q) -> Definite:
    """S ≻ 0 from P S Pᵀ = L D Lᵀ (L unit lower triangular, every D_i > 0), or not from a
    rational x ≠ 0 with xᵀ S x ≤ 0."""
    what, S = "definite witness", q.mat(w["of"])
    n = S.nrows()
    if "x" in w:
        x = ratmat([[v] for v in w["x"]])
        require(x.nrows() == n and any(x.entries()), what, "x must be a nonzero vector of length d")
        require((x.transpose() * S * x)[0, 0] <= 0, what, "xᵀSx > 0")
        return Definite(False)
    perm, L, Dg = w["perm"], ratmat(w["L"]), [rat(v) for v in w["D"]]
    require(sorted(perm) == list(range(n)) and L.nrows() == L.ncols() == len(Dg) == n, what, "bad sizes")
    require(all(L[i, j] == (1 if i == j else 0) for i in range(n) for j in range(i, n)), what,
            "L is not unit lower triangular")
    require(all(v > 0 for v in Dg), what, "a pivot is not positive")
    PSP = fmpq_mat([[S[perm[i], perm[j]] for j in range(n)] for i in range(n)])
    Dm = fmpq_mat([[Dg[i] if i == j else 0 for j in range(n)] for i in range(n)])
    require(L * Dm * L.transpose() == PSP, what, "L D Lᵀ ≠ P S Pᵀ")
    return Definite(True)


@checker("eigenspace")
def _eigenspace(w: dict, q) -> Eigenspace:
    """Whether ker(X − λI) has dimension m for the dominant λ of multiplicity m > 1 (rational):
    ``basis`` = m independent eigenvectors (True), or a nonzero minor of X − λI of order
    d − m + 1 (rank > d − m: False)."""
    what, X = f"eigenspace witness of {w['of']}", q.mat(w["of"])
    dom = dominant(q.fact("croots", w["of"]), False)
    if dom is None or dom[1] == 1:
        raise NotEvaluable("no dominant eigenvalue of multiplicity > 1")
    lam, m = dom
    if not isinstance(lam, fmpq):
        raise Undecided("an irrational dominant eigenvalue of multiplicity > 1")
    n = X.nrows()
    M = X - eye(n) * lam
    if "basis" in w:
        F = ratmat(w["basis"]).transpose()
        require(F.nrows() == n and F.ncols() == m and F.rank() == m and not any((M * F).entries()), what,
                f"not {m} independent eigenvectors")
        return Eigenspace(True)
    rows, cols = w["rows"], w["cols"]
    require(len(rows) == len(cols) == n - m + 1 and len(set(rows)) == len(rows) == len(set(cols))
            and all(0 <= i < n for i in rows + cols), what, "bad minor")
    require(fmpq_mat([[M[i, j] for j in cols] for i in rows]).det() != 0, what, "the minor is zero")
    return Eigenspace(False)
