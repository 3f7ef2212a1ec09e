"""Rational witnesses of Theorem 4's decomposition faces, for any rational symmetric S.

``profileD_eq_zero_iff_decomp`` says: d = 0 ⇔ S = H + P with H symmetric whose spectrum is
symmetric about 0 and P ⪰ 0.  When d = 0 this module builds such H and P with RATIONAL
entries, also when the eigenvalues of S are irrational (the kernel then checks S = H + P, the
parity of det(tI − H) and an inertia of P, all exact):

1. S is split along the irreducible factors f of its characteristic polynomial.  The kernel of
   f(S) is a rational S-invariant subspace.  Factors whose roots are symmetric about 0 (f(−t)
   = ±f(t)), and pairs f, f̃ = ±f(−t) both present, give a rational S-invariant subspace W on
   which S itself has a spectrum symmetric about 0 (for a pair with different multiplicities,
   the larger kernel contributes cyclic subspaces span{x, Sx, …}, each of dimension deg f);
   Z = ker S.  On W we take H = S, on Z we take H = 0.
2. On the rest R = (W ⊕ Z)^⊥ (rational and S-invariant, S being symmetric) no eigenvalue is 0
   and no two are opposite, so the dominance α_j ≥ β_j that d = 0 means is strict: α_j > β_j.
   There H = Σ_j h_j (Π_{u_j} − Π_{v_j}) with rational h_j ≈ (α_j + β_j)/2, u_j, v_j rational
   vectors of R close to the eigenvectors of α_j and −β_j, made exactly orthogonal by
   Gram–Schmidt over ℚ (Π_u = uuᵀ/uᵀu is rational).  Its spectrum is {±h_j} ∪ {0}: symmetric,
   exactly.  P = S − H is positive definite on R up to the rounding, which is decided exactly
   (LDLᵀ) and refined with more digits when it fails.

Face c (c = 0 ⇔ S = H − P) is face d of −S.  L = 0 gives S = 0 = 0 ± 0.
"""

from __future__ import annotations

from flint import fmpq, fmpq_mat, fmpz_poly

from ..exact.algebraic import charpoly_factors, normalize
from ..exact.inertia import inertia_ldlt
from ..exact.matrix import identity, is_symmetric



def _poly_at(f: fmpz_poly, T: fmpq_mat) -> fmpq_mat:
    """f(T) by Horner (f with integer coefficients)."""
    n = T.nrows()
    out = fmpq_mat(n, n)
    for c in reversed([int(x) for x in f.coeffs()]):
        out = out * T + identity(n) * c
    return out


def _null(A: fmpq_mat) -> list[fmpq_mat]:
    """A rational basis of ker A (columns)."""
    B, _ = A.numer_denom()
    X, k = B.nullspace()
    return [fmpq_mat([[X[i, j]] for i in range(A.ncols())]) for j in range(k)]


def _rank(vs: list[fmpq_mat]) -> int:
    if not vs:
        return 0
    return fmpq_mat([[v[i, 0] for v in vs] for i in range(vs[0].nrows())]).rank()


def _mirror(f: fmpz_poly) -> fmpz_poly:
    """The polynomial whose roots are the negatives of f's (normalised)."""
    c = [int(x) for x in f.coeffs()]
    return normalize(fmpz_poly([x if k % 2 == 0 else -x for k, x in enumerate(c)]))


def _projector(vs: list[fmpq_mat], N: int) -> fmpq_mat:
    """The orthogonal projector onto span(vs) (rational: B(BᵀB)⁻¹Bᵀ)."""
    if not vs:
        return fmpq_mat(N, N)
    B = fmpq_mat([[v[i, 0] for v in vs] for i in range(N)])
    return B * (B.transpose() * B).inv() * B.transpose()


def _symmetric_block(S: fmpq_mat) -> tuple[list[fmpq_mat], list[fmpq_mat]]:
    """(a basis of W, a basis of Z = ker S): step 1 of the module docstring."""
    D, facs = charpoly_factors(S)
    T = S * D
    N = S.nrows()
    by = {tuple(int(c) for c in f.coeffs()): (f, e) for f, e in facs}
    W: list[fmpq_mat] = []
    Z: list[fmpq_mat] = []
    done: set = set()
    for key, (f, e) in by.items():
        if key in done:
            continue
        done.add(key)
        if f.degree() == 1 and int(f.coeffs()[0]) == 0:
            Z = _null(T)
            continue
        g = _mirror(f)
        gk = tuple(int(c) for c in g.coeffs())
        if gk == key:
            W += _null(_poly_at(f, T))
            continue
        if gk not in by:
            continue
        done.add(gk)
        e2 = by[gk][1]
        kf, kg = _null(_poly_at(f, T)), _null(_poly_at(g, T))
        if e > e2:
            kf, kg, f, g, e, e2 = kg, kf, g, f, e2, e
        W += kf  # the smaller multiplicity: all of it
        if e == e2:
            W += kg
            continue
        cyc: list[fmpq_mat] = []
        for x in kg:  # e copies of the cyclic Q[t]/g-module inside ker g(T)
            if len(cyc) == e * g.degree():
                break
            block = [x]
            for _ in range(g.degree() - 1):
                block.append(T * block[-1])
            if _rank(cyc + block) == len(cyc) + len(block):
                cyc += block
        W += cyc
    return W, Z


def _complement(vs: list[fmpq_mat], N: int) -> list[fmpq_mat]:
    """A rational basis of span(vs)^⊥."""
    if not vs:
        return [fmpq_mat([[int(i == j)] for i in range(N)]) for j in range(N)]
    return _null(fmpq_mat([[v[i, 0] for i in range(N)] for v in vs]))


def _gram_schmidt(vs: list[fmpq_mat]) -> list[fmpq_mat]:
    out: list[fmpq_mat] = []
    for v in vs:
        w = v
        for u in out:
            w = w - u * ((u.transpose() * v)[0, 0] / (u.transpose() * u)[0, 0])
        out.append(w)
    return out


def _rational(x, bits: int) -> fmpq:
    from mpmath import mp

    return fmpq(int(mp.nint(x * mp.mpf(2) ** bits)), 2 ** bits)


def _eigen(S: fmpq_mat, R: list[fmpq_mat], digits: int):
    """Eigenpairs of S on R (mpmath, ``digits`` digits): (pos, neg) lists of (value, vector), the
    positive ones decreasing, the negative ones by decreasing absolute value; None when R's
    eigenvalues are not all nonzero or the strict dominance α_j > β_j fails (not on the face)."""
    from mpmath import mp

    N = S.nrows()
    Pi = _projector(R, N)
    A = Pi * S * Pi
    with mp.workdps(digits):
        M = mp.matrix([[mp.mpf(int(A[i, j].p)) / int(A[i, j].q) for j in range(N)] for i in range(N)])
        E, Q = mp.eigsy(M)
        ev = [(E[i], [Q[r, i] for r in range(N)]) for i in range(N)]
        tol = mp.mpf(10) ** (-digits // 2)
        pos = sorted([p for p in ev if p[0] > tol], key=lambda p: -p[0])
        neg = sorted([p for p in ev if p[0] < -tol], key=lambda p: p[0])
        if len(pos) + len(neg) != len(R) or len(neg) > len(pos) or any(
                a + b <= tol for (a, _), (b, _) in zip(pos, neg)):
            return None
        margin = min([(a + b) / 2 for (a, _), (b, _) in zip(pos, neg)] + [a for a, _ in pos])
        return Pi, pos, neg, margin


def _strict_part(S: fmpq_mat, eig, bits: int) -> fmpq_mat | None:
    """Step 2: H on R (zero off R) from the eigenpairs, vectors rounded to 2^−bits."""
    Pi, pos, neg, _ = eig
    N = S.nrows()
    vecs, hs = [], []
    for (a, u), (b, w) in zip(pos, neg):
        hs.append(_rational((a - b) / 2, bits))  # (α_j + β_j)/2 with β_j = −b
        vecs += [fmpq_mat([[_rational(t, bits)] for t in u]), fmpq_mat([[_rational(t, bits)] for t in w])]
    vecs = _gram_schmidt([Pi * v for v in vecs])
    if any((v.transpose() * v)[0, 0] == 0 for v in vecs):
        return None
    H = fmpq_mat(N, N)
    for j, h in enumerate(hs):
        u, w = vecs[2 * j], vecs[2 * j + 1]
        H += (u * u.transpose() * (1 / (u.transpose() * u)[0, 0]) - w * w.transpose() * (1 / (w.transpose() * w)[0, 0])) * h
    return H


def spectrum_symmetric(H: fmpq_mat) -> bool:
    """The eigenvalue multiset of the symmetric H is invariant under negation: det(−tI − H) =
    ±det(tI − H) (the charpoly has only even or only odd powers)."""
    cp = list(H.charpoly().coeffs())
    neg = [c if k % 2 == 0 else -c for k, c in enumerate(cp)]
    return neg == cp or neg == [-c for c in cp]


def decomposition(S: fmpq_mat, face: str) -> tuple[fmpq_mat, fmpq_mat] | None:
    """Rational (H, P) with S = H + P (face ``d``) or S = H − P (face ``c``), H symmetric with a
    spectrum symmetric about 0 and P ⪰ 0, for a rational symmetric S on that face (d = 0, resp.
    c = 0); None when S is not on the face or the rounding did not succeed at any of
    four roundings, each with twice the bits (then the caller's answer is undecided).  Every returned pair is checked here
    exactly.

    >>> S = fmpq_mat([[2, 1], [1, 0]])          # eigenvalues 1 ± √2: α = (1 + √2), β = (√2 − 1)
    >>> H, P = decomposition(S, "d")
    >>> S == H + P and spectrum_symmetric(H) and inertia_ldlt(P).n_neg == 0
    True
    >>> decomposition(fmpq_mat([[1, 0], [0, -3]]), "d") is None   # d = 4/10 ≠ 0
    True
    """
    if not is_symmetric(S):
        raise ValueError("S must be symmetric")
    N = S.nrows()
    if face == "c":
        out = decomposition(-S, "d")
        return None if out is None else (-out[0], out[1])
    if all(S[i, j] == 0 for i in range(N) for j in range(N)):
        return fmpq_mat(N, N), fmpq_mat(N, N)
    W, Z = _symmetric_block(S)
    HW = S * _projector(W, N)
    R = _complement(W + Z, N)
    if not R:
        return (HW, S - HW) if inertia_ldlt(S - HW).n_neg == 0 else None
    import math

    from mpmath import mp

    eig = _eigen(S, R, 40)
    if eig is None:
        return None
    scale = max(abs(float(x)) for x in S.entries()) * N
    bits = 16 + max(0, int(math.log2(scale / max(float(eig[3]), 1e-300))))
    for _ in range(4):
        if bits > 3 * 40:
            eig = _eigen(S, R, bits // 3 + 20) or eig
        HR = _strict_part(S, eig, bits)
        if HR is not None:
            H = HW + HR
            P = S - H
            if is_symmetric(H) and spectrum_symmetric(H) and inertia_ldlt(P).n_neg == 0:
                return H, P
        bits *= 2
    del mp
    return None


def commutes(S: fmpq_mat, H: fmpq_mat, P: fmpq_mat) -> bool:
    """H and P commute with S and with each other (exact)."""
    return S * H == H * S and S * P == P * S and H * P == P * H


def _squarefree(q: fmpq) -> tuple[fmpq, fmpq]:
    """(s, k) with q = k²·s, s a squarefree integer (q > 0 rational)."""
    from flint import fmpz

    n = int(q.p) * int(q.q)          # q = n/q.q², so √q = √n/q.q
    s, k = 1, 1
    for p, e in fmpz(n).factor():
        p = int(p)
        s *= p ** (e % 2)
        k *= p ** (e // 2)
    return fmpq(s), fmpq(k, int(q.q))


def commuting_quadratic(S: fmpq_mat, face: str):
    """Lean's commuting decomposition of a face (the proof's construction) when every eigenvalue of
    the symmetric S lies in one quadratic field ℚ(√s): P = g(S), g the interpolation polynomial (over
    ℚ(√s)) with g(α_j) = α_j − β_j on the positive eigenvalues (face d; g = 0 elsewhere) or
    g(−β_j) = β_j − α_j on the negative ones (face c), H = S ∓ P.  Then H, P commute with S and with
    each other, spec P = {g(λ)} ≥ 0, spec H = {β_j, −β_j, 0} (face d) is symmetric about 0 and
    ‖P‖² = Σ (α_j − β_j)² = c‖L‖².  Returns (s, (H₀, H₁), (P₀, P₁)) with H = H₀ + H₁√s, or None
    when some eigenvalue has degree > 2, two fields differ, S is off the face, the spectrum is
    rational (the rational construction applies), or a repeated eigenvalue would need two values
    of g (P is then not a polynomial in S).

    >>> s, H, P = commuting_quadratic(fmpq_mat([[1, 1], [1, 0]]), "d")   # eigenvalues (1 ± √5)/2
    >>> s, P[0] == fmpq_mat([[1, 0], [0, 1]]) / 2, P[1] == fmpq_mat([[1, 2], [2, -1]]) / 10   # P = (S − λ₋)/√5
    (5, True, True)
    """
    from ..exact.quadratic import Quad

    N = S.nrows()
    eig: list = []   # (value, multiplicity)
    s0 = None
    for f, m in S.charpoly().factor()[1]:
        cs = [fmpq(c) for c in f.coeffs()]
        if len(cs) == 2:
            eig.append((Quad(-cs[0] / cs[1]), m))
            continue
        if len(cs) != 3:
            return None
        c, b, a = cs
        s, k = _squarefree(b * b - 4 * a * c)
        if s0 is not None and s != s0:
            return None
        s0 = s
        for sg in (1, -1):
            eig.append((Quad(-b / (2 * a), sg * k / (2 * a), s), m))
    if s0 is None:
        return None
    pos = sorted([v for v, m in eig if v > 0 for _ in range(m)], reverse=True)
    neg = sorted([-v for v, m in eig if v < 0 for _ in range(m)], reverse=True)
    al, be = pos + [Quad(0)] * (N - len(pos)), neg + [Quad(0)] * (N - len(neg))
    sign = 1 if face == "d" else -1
    if any((a - b) * sign < 0 for a, b in zip(al, be)):
        return None
    g: dict = {}
    for j, (a, b) in enumerate(zip(al, be)):
        key, val = (a, a - b) if face == "d" else (-b, b - a)
        if (face == "d" and a == 0) or (face == "c" and b == 0):
            continue
        old = next((v for k2, v in g.items() if k2 == key), None)
        if old is not None and old != val:
            return None
        g = {k2: v for k2, v in g.items() if k2 != key}
        g[key] = val
    values = [(v, next((w for k2, w in g.items() if k2 == v), Quad(0))) for v, _ in eig]
    # Lagrange over the distinct eigenvalues: g(t) = Σ_i y_i Π_{k≠i} (t − μ_k)/(μ_i − μ_k), coefficients in ℚ(√s)
    coeffs = [Quad(0)] * len(values)
    for i, (mu, y) in enumerate(values):
        basis, den = [Quad(1)], Quad(1)
        for k2, (nu, _) in enumerate(values):
            if k2 != i:
                basis = [(basis[t - 1] if t else Quad(0)) - (basis[t] * nu if t < len(basis) else Quad(0))
                         for t in range(len(basis) + 1)]
                den = den * (mu - nu)
        for t, c in enumerate(basis):
            coeffs[t] = coeffs[t] + c * y / den
    A, B, Sk = fmpq_mat(N, N), fmpq_mat(N, N), identity(N)
    for c in coeffs:
        A, B, Sk = A + Sk * c.a, B + Sk * c.b, Sk * S
    H0, H1 = (S - A, -B) if face == "d" else (S + A, B)
    return s0, (H0, H1), (A, B)


def quadratic_props(S: fmpq_mat, face: str, s: fmpq, H: tuple, P: tuple) -> dict:
    """The properties of S = H ± P over ℚ(√s) (H = H₀ + H₁√s, P = P₀ + P₁√s), decided exactly with
    :class:`~qkverify.exact.quadratic.Quad`: the decomposition, symmetry, the spectrum of H
    symmetric about 0 (odd power sums tr H^k = 0, k ≤ N), P ⪰ 0 (the elementary symmetric functions
    of its eigenvalues ≥ 0, from its power sums), commutation, and ‖P‖² = tr P²."""
    from ..exact.quadratic import Quad

    N = S.nrows()
    sg = 1 if face == "d" else -1
    mul = lambda X, Y: (X[0] * Y[0] + X[1] * Y[1] * s, X[0] * Y[1] + X[1] * Y[0])  # noqa: E731
    tr = lambda X: Quad(sum((X[0][i, i] for i in range(N)), fmpq(0)), sum((X[1][i, i] for i in range(N)), fmpq(0)), s)  # noqa: E731

    def psums(X):
        out, Y = [], X
        for _ in range(N):
            out.append(tr(Y))
            Y = mul(Y, X)
        return out

    pH, pP = psums(H), psums(P)
    e = [Quad(1)]
    for k in range(1, N + 1):
        acc = Quad(0)
        for i in range(1, k + 1):
            acc = acc + (e[k - i] * pP[i - 1] if i % 2 else -(e[k - i] * pP[i - 1]))
        e.append(acc / k)
    Z = (S, fmpq_mat(N, N))
    return {"decomposes": H[0] + P[0] * sg == S and H[1] + P[1] * sg == fmpq_mat(N, N),
            "symmetric": all(X.transpose() == X for X in H + P),
            "H_spectrum_symmetric": all(pH[k] == 0 for k in range(0, N, 2)),
            "P_psd": all(x >= 0 for x in e),
            "commute": all(mul(X, Y) == mul(Y, X) for X, Y in ((H, Z), (P, Z), (H, P))),
            "normP": tr(mul(P, P))}
