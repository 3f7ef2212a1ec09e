"""The spectral facts behind the clustering regimes of self-attention dynamics.

Source: docs/MATH.md, Clustering regimes (Geshkovski, Letrouit, Polyanskiy, Rigollet, arXiv
2305.05465).  A triple (Q, K, V) -- Q, K of shape k × d, V of shape d × d, all
rational -- falls under one of the paper's four regimes:

=========================  ==================  ============================================  ===========
V                          Q, K                limit of the rescaled tokens z_i              theorem
=========================  ==================  ============================================  ===========
V = I_d                    QᵀK ≻ 0             boundary of a convex polytope (vertices)      3.1
top eigenvalue simple > 0  ⟨Qφ₁, Kφ₁⟩ > 0      ≤ 3 parallel hyperplanes {φ₁*(x) = c}         4.2
V paranormal               QᵀK ≻ 0             (∂K ∪ {0}) × G, K a polytope in F             5.2
V = −I_d                   QᵀK = I_d           every token x_i → 0, P → (1/n)11ᵀ             8.5
=========================  ==================  ============================================  ===========

What is decided here, and how:

* **QᵀK ≻ 0** (symmetric positive definite): exactly, by a pivoted LDLᵀ over Q
  of S = ½(QᵀK + KᵀQ) cross-checked with the signs of its characteristic
  polynomial; "only the symmetric part is PD" is reported separately.
* **The spectrum of V** (non-symmetric): the characteristic polynomial of the
  integer matrix D·V is split into square-free parts by multiplicity; the real
  roots of each part get rational isolating intervals (an exact sign change),
  the non-real roots complex boxes, each shown to hold a root by the Krawczyk
  test at a stated precision (FLINT ``acb``).  Boxes and intervals are
  disjoint and as many as the degree, so each holds exactly one root.
* **The top-eigenvalue condition** (the eigenvalue of largest modulus is real,
  positive and simple): real roots are compared exactly, non-real ones through
  their boxes (then the decision is *certified*).
* **⟨Qφ₁, Kφ₁⟩ for a unit eigenvector φ₁**: exact when λ₁ is rational (φ₁
  from the exact null space), else a certified enclosure from an Arb solve of
  (V − λ₁ I)ψ = 0 with ψ_k = 1.
* **Paranormal V**: λ = the largest positive real eigenvalue, every other
  eigenvalue strictly smaller in modulus, λ semisimple (for a rational λ of
  multiplicity m, an exact basis of ker(V − λI) of size m, or a nonzero minor
  of order d − m + 1 showing the kernel is smaller).

Real heads use the same machinery on the small matrix X = W_V·W_O (value slice
times output slice, d_head × d_head) rather than V_m = W_O·W_V (d_model ×
d_model): the two share their nonzero eigenvalues with multiplicities and
Jordan structure, and φ₁ = W_O ψ for an eigenvector ψ of X, so
⟨Qφ₁, Kφ₁⟩/|φ₁|² = ψᵀAψ / ψᵀGψ with A = (W_Q W_O)ᵀ(W_K W_O), G = W_Oᵀ W_O.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flint import acb, acb_poly, arb, arb_mat, ctx, fmpq, fmpq_mat, fmpz, fmpz_poly

from ..exact.algebraic import arb_to_interval
from ..exact.inertia import inertia_charpoly, ldlt
from ..exact.matrix import identity, rank, sym_part
from ..exact.rational import fmpq_str

#: working precision (bits) of the root isolation and of the eigenvector solve
ROOT_PREC = 128
#: the Krawczyk test's precision is raised up to this many bits before giving up
MAX_KRAWCZYK_PREC = 1 << 15


class Undecided(Exception):
    """The enclosures do not decide (the message says what did not separate)."""


def scaled_poly(f: fmpz_poly, D: fmpz) -> fmpz_poly:
    """g(x) = f(D·x) as an integer polynomial (coefficients c_k·D^k): the roots of g are
    the roots of f divided by D.

    >>> scaled_poly(fmpz_poly([-4, 0, 1]), fmpz(2))   # x² − 4 at 2x: 4x² − 4
    4*x^2 + (-4)
    """
    return fmpz_poly([c * D**k for k, c in enumerate(f.coeffs())])


def _sign(f: fmpz_poly, x: fmpq) -> int:
    v = f(x)
    return (v > 0) - (v < 0)


def _dyadic_round(x: fmpq, k: int) -> fmpq:
    """x rounded to the grid 2^-k (nearest, ties down): short exact centres for the boxes."""
    s = x * 2**k
    n = int(s.p) // int(s.q)
    if 2 * (s - n) > 1:
        n += 1
    return fmpq(n, 2**k)


def _bits_below(x: fmpq) -> int:
    """k ≥ 0 with 2^-k ≤ x (x > 0): how many binary digits resolve x."""
    k = 0
    while fmpq(1, 2**k) > x:
        k += 1
    return k


# ---------------------------------------------------------------------------
# complex boxes and the Krawczyk test


@dataclass(frozen=True)
class CBox:
    """The square re ± r + i(im ± r) in the open upper half-plane (im > r > 0): it holds one
    non-real eigenvalue, and its mirror image the conjugate one."""

    re: fmpq
    im: fmpq
    r: fmpq

    def mod2(self) -> tuple[fmpq, fmpq]:
        """Exact bounds of |z|² over the box."""
        a = max(abs(self.re) - self.r, fmpq(0))
        b = self.im - self.r
        return a * a + b * b, (abs(self.re) + self.r) ** 2 + (self.im + self.r) ** 2

    def to_json(self) -> list[str]:
        return [fmpq_str(self.re), fmpq_str(self.im), fmpq_str(self.r)]


def krawczyk(g: fmpz_poly, box: CBox, prec: int) -> bool:
    """True when the Krawczyk operator of g on ``box`` lies strictly inside the box, which
    proves that the box holds a root of g (Brouwer).  Evaluated with acb balls at ``prec``
    bits; False when the test does not pass (it never claims a root that is not there).

    >>> krawczyk(fmpz_poly([1, 0, 1]), CBox(fmpq(0), fmpq(1), fmpq(1, 8)), 64)   # x² + 1 at i
    True
    """
    with ctx.workprec(prec):
        gp = acb_poly([acb(c) for c in g.coeffs()])
        dg = gp.derivative()
        c = acb(arb(box.re), arb(box.im))
        B = acb(arb(box.re, box.r), arb(box.im, box.r))
        dgc = dg(c)
        if dgc.real.contains(0) and dgc.imag.contains(0):
            return False
        K = c - gp(c) / dgc + (1 - dg(B) / dgc) * (B - c)
        if not (K.real.is_finite() and K.imag.is_finite()):
            return False
        return bool(K.real.lower() > arb(box.re - box.r) and K.real.upper() < arb(box.re + box.r)
                    and K.imag.lower() > arb(box.im - box.r) and K.imag.upper() < arb(box.im + box.r))


# ---------------------------------------------------------------------------
# the certified spectrum of a rational (non-symmetric) matrix


@dataclass
class Eig:
    """One eigenvalue of X (one per distinct root; ``mult`` its algebraic multiplicity).

    real eigenvalues: ``lo``/``hi`` isolate it as a root of the square-free factor
    ``factor`` (lo = hi for a rational one, also in ``exact``); non-real ones (imaginary
    part > 0): ``box``; ``conj`` marks the mirror image of a box (listed once in witnesses)."""

    mult: int
    factor: int
    lo: fmpq | None = None
    hi: fmpq | None = None
    exact: fmpq | None = None
    box: CBox | None = None
    conj: bool = False

    @property
    def real(self) -> bool:
        return self.box is None

    def ball(self, prec: int) -> acb:
        """A complex ball holding the eigenvalue."""
        with ctx.workprec(prec):
            if self.real:
                return acb(arb(self.lo).union(arb(self.hi)) if self.exact is None else arb(self.exact))
            im = arb(self.box.im, self.box.r)
            return acb(arb(self.box.re, self.box.r), -im if self.conj else im)

    def describe(self) -> str:
        if self.exact is not None:
            return fmpq_str(self.exact)
        b = self.ball(64)
        if self.real:
            return f"{float(b.real.mid()):.12g}"
        return f"{float(b.real.mid()):.12g}{float(b.imag.mid()):+.12g}i"


@dataclass
class Spectrum:
    """Eigenvalues of a rational matrix X with their witness.

    X = Y / D with Y integral; ``factors`` = [(g, m)]: g the square-free part of
    multiplicity m of charpoly(Y), rescaled so that its roots are eigenvalues of X."""

    X: fmpq_mat
    D: fmpz
    factors: list[tuple[fmpz_poly, int]]
    eigs: list[Eig]
    prec: int  # precision at which every box passes the Krawczyk test

    def witness(self, of: str) -> dict:
        """The ``croots`` witness (docs/CERTIFICATES.md)."""
        out = []
        for i, (g, m) in enumerate(self.factors):
            mine = [e for e in self.eigs if e.factor == i]
            # the factor f of charpoly(Y) itself (g(x) = f(D·x)): the kernel multiplies the
            # factors out rather than factorising (issue 18)
            out.append({"multiplicity": m, "poly": [str(c // self.D ** k) for k, c in enumerate(g.coeffs())],
                        "real": [[fmpq_str(e.lo), fmpq_str(e.hi)] for e in mine if e.real],
                        "complex": [e.box.to_json() for e in mine if not e.real and not e.conj]})
        return {"kind": "croots", "of": of, "prec": self.prec, "factors": out}


def _real_interval(g: fmpz_poly, ball: acb, bits: int) -> tuple[fmpq, fmpq] | None:
    """A rational isolating interval of the real root in ``ball`` (exact sign change), with
    endpoints on a 2^-k grid about 2^-bits relative to the root (short certificates)."""
    lo, hi = arb_to_interval(ball.real)
    if lo < hi:
        k = _bits_below(max(abs(lo), abs(hi), fmpq(1, 2**64)) / 2**bits)
        lo2, hi2 = fmpq(int((lo * 2**k).floor()), 2**k), fmpq(int((hi * 2**k).ceil()), 2**k)
        if _sign(g, lo2) * _sign(g, hi2) < 0 and _sign(g, lo2) == _sign(g, lo) and _sign(g, hi2) == _sign(g, hi):
            lo, hi = lo2, hi2
    if lo == hi:
        return (lo, hi) if _sign(g, lo) == 0 else None
    if _sign(g, lo) == 0:
        return lo, lo
    if _sign(g, hi) == 0:
        return hi, hi
    return (lo, hi) if _sign(g, lo) * _sign(g, hi) < 0 else None


def spectrum(X: fmpq_mat, prec: int = ROOT_PREC) -> Spectrum:
    """The certified spectrum of a square rational matrix X (see the module docstring).

    Real eigenvalues are exact (isolating intervals, checked by sign changes); non-real
    ones are boxes of relative size about 2^-(prec/2) (and at most a quarter of the
    distance to the nearest other eigenvalue), each passing the Krawczyk test.

    >>> s = spectrum(fmpq_mat([[0, -1], [1, 0]]))          # a rotation: eigenvalues ±i
    >>> [(e.real, e.conj, e.mult) for e in s.eigs]
    [(False, False, 1), (False, True, 1)]
    >>> [e.exact for e in spectrum(fmpq_mat([[2, 0], [0, 2]])).eigs]   # 2 with multiplicity 2
    [2]
    """
    Y, D = X.numer_denom()
    _, sqf = Y.charpoly().factor_squarefree()
    factors: list[tuple[fmpz_poly, int]] = []
    eigs: list[Eig] = []
    kp_all = 64
    for i, (f, m) in enumerate(sorted(sqf, key=lambda t: t[1])):
        g = scaled_poly(f, D)
        factors.append((g, m))
        if g.degree() == 1:
            c0, c1 = g.coeffs()
            x = fmpq(-c0, c1)
            eigs.append(Eig(m, i, x, x, x))
            continue
        p = prec
        while True:  # raise the precision until every real interval and complex box is certified
            mine, kp = _isolate(g, m, i, p)
            if mine is not None:
                break
            p *= 2
            if p > MAX_KRAWCZYK_PREC:
                raise Undecided(f"the roots of a factor of degree {g.degree()} are not certified at "
                                f"{MAX_KRAWCZYK_PREC} bits")
        kp_all = max(kp_all, kp)
        eigs.extend(mine)
    boxes = [(factors[e.factor][0], e.box) for e in eigs if not e.real and not e.conj]
    while not all(krawczyk(g, b, kp_all) for g, b in boxes):  # one precision for the whole witness
        kp_all *= 2
        if kp_all > 4 * MAX_KRAWCZYK_PREC:
            raise Undecided("the Krawczyk test does not pass at one common precision")
    return Spectrum(X, D, factors, eigs, kp_all)


def _isolate(g: fmpz_poly, m: int, i: int, p: int) -> tuple[list[Eig] | None, int]:
    """The roots of the square-free factor g (index i, multiplicity m) from FLINT's roots at
    ``p`` bits: real ones as isolating intervals, non-real ones (upper half-plane) as boxes
    of relative size 2^-(p/2), at most a quarter of the distance to the nearest other root,
    passing the Krawczyk test at 2p or 4p bits.  (None, 0) when something does not pass."""
    with ctx.workprec(p):
        roots = [r for r, _ in g.complex_roots()]
    mine = []
    for r in roots:
        if r.imag.is_zero():
            iv = _real_interval(g, r, p // 2)
            if iv is None:
                return None, 0
            mine.append(Eig(m, i, iv[0], iv[1], iv[0] if iv[0] == iv[1] else None))
    mine.sort(key=lambda e: e.lo)
    if not all(a.hi < b.lo for a, b in zip(mine, mine[1:])):
        return None, 0
    with ctx.workprec(p):
        for r in (r for r in roots if not r.imag.is_zero() and r.imag > 0):
            sep = min(arb_to_interval(abs(r - s))[0] for s in roots if s is not r)
            mod = max(arb_to_interval(abs(r))[1], fmpq(1, 2**64))
            rr = min(sep / 4, mod / 2 ** (p // 2))
            if rr <= 0:
                return None, 0
            k = _bits_below(rr) + 8
            re = _dyadic_round(arb_to_interval(r.real)[0], k)
            im = _dyadic_round(arb_to_interval(r.imag)[0], k)
            box = CBox(re, im, fmpq(1, 2 ** (k - 6)))
            mine.append(Eig(m, i, box=box))
            mine.append(Eig(m, i, box=box, conj=True))
    boxes = [e.box for e in mine if not e.real and not e.conj]
    for kp in (2 * p, 4 * p):
        if all(krawczyk(g, b, kp) for b in boxes):
            return mine, (kp if boxes else 64)
    return None, 0


# ---------------------------------------------------------------------------
# comparisons of eigenvalues (exact for real ones, through boxes otherwise)


def _abs_real(e: Eig) -> tuple[fmpq, fmpq]:
    if e.exact is not None:
        return abs(e.exact), abs(e.exact)
    if e.lo >= 0:
        return e.lo, e.hi
    return -e.hi, -e.lo


def _refine(g: fmpz_poly, e: Eig) -> None:
    """Halve the isolating interval of a real irrational eigenvalue (exact signs)."""
    mid = (e.lo + e.hi) / 2
    s = _sign(g, mid)
    if s == 0:
        e.lo = e.hi = e.exact = mid
    elif s == _sign(g, e.lo):
        e.lo = mid
    else:
        e.hi = mid


def compare_modulus(sp: Spectrum, a: Eig, b: Eig, max_steps: int = 400) -> tuple[int, bool]:
    """(sign of |a| − |b|, whether a box was used); a, b distinct eigenvalues, a real.

    Real against real: exact (interval refinement; two distinct real roots of equal
    modulus are ±x, recognised exactly).  Against a box: |z|² bounds of the box against the
    refined interval of |a|.  Raises Undecided when they do not separate."""
    ga = sp.factors[a.factor][0]
    for _ in range(max_steps):
        alo, ahi = _abs_real(a)
        if b.real:
            gb = sp.factors[b.factor][0]
            blo, bhi = _abs_real(b)
            if ahi < blo:
                return -1, False
            if bhi < alo:
                return 1, False
            if a.exact is not None and b.exact is not None:
                return (alo > blo) - (alo < blo), False
            if _opposite(ga, a, gb, b):
                return 0, False
            for e, g in ((a, ga), (b, gb)):
                if e.exact is None:
                    _refine(g, e)
        else:
            lo2, hi2 = b.box.mod2()
            if ahi * ahi < lo2:
                return -1, True
            if hi2 < alo * alo:
                return 1, True
            if a.exact is not None:
                break
            _refine(ga, a)
    raise Undecided("the modulus of two eigenvalues is not separated by the enclosures")


def _opposite(ga: fmpz_poly, a: Eig, gb: fmpz_poly, b: Eig) -> bool:
    """Whether b = −a exactly (a root of gcd(ga(x), gb(−x)) in a's interval whose negative is b)."""
    neg = fmpz_poly([c if k % 2 == 0 else -c for k, c in enumerate(gb.coeffs())])
    h = ga.gcd(neg)
    if h.degree() < 1:
        return False
    inter = (max(a.lo, -b.hi), min(a.hi, -b.lo))
    if inter[0] > inter[1]:
        return False
    if a.exact is not None:
        return _sign(h, a.exact) == 0 and inter[0] <= a.exact <= inter[1]
    return _sign(h, a.lo) * _sign(h, a.hi) < 0 and _sign(h, inter[0]) * _sign(h, inter[1]) <= 0


def _positive(sp: Spectrum, e: Eig) -> bool:
    """Whether the eigenvalue is real and positive (exact: the sign of its factor at 0)."""
    if not e.real:
        return False
    if e.exact is not None:
        return e.exact > 0
    if e.lo < 0 < e.hi:
        g = sp.factors[e.factor][0]
        if _sign(g, fmpq(0)) == _sign(g, e.lo):
            e.lo = fmpq(0)
        else:
            e.hi = fmpq(0)
    return e.lo >= 0


def dominant(sp: Spectrum, simple: bool) -> tuple[Eig | None, bool]:
    """The eigenvalue λ of largest modulus when it is real, positive, strictly larger in
    modulus than every other eigenvalue and (``simple``) of multiplicity 1; else None.
    Second value: whether a box decided something (evidence *certified*, else exact)."""
    used = False
    cands = [e for e in sp.eigs if _positive(sp, e) and (e.mult == 1 or not simple)]
    if not cands:
        return None, False
    lam = cands[0]
    for e in cands[1:]:
        c, u = compare_modulus(sp, e, lam)
        used |= u
        if c > 0:
            lam = e
    for e in sp.eigs:
        if e is lam:
            continue
        c, u = compare_modulus(sp, lam, e)
        used |= u
        if c <= 0:
            return None, used
    return lam, used


# ---------------------------------------------------------------------------
# eigenvectors and ⟨Qφ₁, Kφ₁⟩


def rational_eigenvector(X: fmpq_mat, lam: fmpq) -> fmpq_mat:
    """A primitive integer vector spanning ker(X − λI) (λ a simple rational eigenvalue)."""
    n = X.nrows()
    B, _ = (X - identity(n) * lam).numer_denom()
    N, k = B.nullspace()
    v = [N[i, 0] for i in range(n)]
    g = fmpz(0)
    for x in v:
        g = g.gcd(x)
    return fmpq_mat([[fmpq(x, g)] for x in v])


def arb_eigenvector(X: fmpq_mat, lam: arb, pivot: int, prec: int) -> list[arb] | None:
    """The eigenvector ψ of X for the simple eigenvalue in the ball ``lam`` with ψ_pivot = 1,
    enclosed by an Arb solve of the other rows of (X − λI)ψ = 0; None when Arb cannot show
    the reduced matrix nonsingular (a bad pivot or too little precision)."""
    n = X.nrows()
    idx = [i for i in range(n) if i != pivot]
    with ctx.workprec(prec):
        M = arb_mat([[arb(X[i, j]) - (lam if i == j else 0) for j in idx] for i in idx])
        rhs = arb_mat([[-arb(X[i, pivot])] for i in idx])
        try:
            y = M.solve(rhs)
        except ZeroDivisionError:
            return None
        out = [arb(1) if i == pivot else y[idx.index(i), 0] for i in range(n)]
        return out if all(x.is_finite() for x in out) else None


def refine_real(sp: Spectrum, e: Eig, bits: int) -> arb:
    """A ball around the real eigenvalue e of relative width about 2^-bits (bisection)."""
    e = Eig(e.mult, e.factor, e.lo, e.hi, e.exact)  # a copy: the witness keeps the short interval
    if e.exact is None:
        g = sp.factors[e.factor][0]
        target = max(abs(e.lo), abs(e.hi)) / 2**bits
        while e.exact is None and e.hi - e.lo > target:
            _refine(g, e)
    with ctx.workprec(bits + 32):
        return arb(e.exact) if e.exact is not None else arb((e.lo + e.hi) / 2, (e.hi - e.lo) / 2)


@dataclass
class QKValue:
    """⟨Qφ₁, Kφ₁⟩ for a unit eigenvector φ₁: exact (rational λ₁) or an Arb ball; the witness."""

    exact: fmpq | None
    ball: arb
    witness: dict
    residual_ok: bool = True  # (X − λ₁I)ψ = 0 exactly, or its enclosure contains 0

    @property
    def sign(self) -> int | None:
        if self.exact is not None:
            return (self.exact > 0) - (self.exact < 0)
        if self.ball > 0:
            return 1
        if self.ball < 0:
            return -1
        return None


def qk_phi1(sp: Spectrum, lam: Eig, A: fmpq_mat, G: fmpq_mat, of: str, prec: int = 256) -> QKValue:
    """ψᵀAψ / ψᵀGψ for an eigenvector ψ of X for λ₁ (with A = QᵀK, G = I for a triple).

    λ₁ rational: exact, witness ``{"vector": ψ}``; else an Arb enclosure, witness
    ``{"pivot": k, "prec": prec}`` (the coordinate set to 1 and the precision of the
    solve).  Raises Undecided when no pivot works at this precision."""
    X = sp.X
    n = X.nrows()
    if lam.exact is not None:
        v = rational_eigenvector(X, lam.exact)
        val = (v.transpose() * A * v)[0, 0] / (v.transpose() * G * v)[0, 0]
        with ctx.workprec(prec):
            ball = arb(val)
        return QKValue(val, ball, {"kind": "eigvec", "of": of, "vector": [fmpq_str(v[i, 0]) for i in range(n)]},
                       X * v == v * lam.exact)
    lb = refine_real(sp, lam, prec)
    psi = None
    for k in range(n):
        psi = arb_eigenvector(X, lb, k, prec)
        if psi is not None:
            break
    if psi is None:
        raise Undecided(f"the eigenvector solve is singular for every pivot at {prec} bits")
    with ctx.workprec(prec):
        k = max(range(n), key=lambda i: (float(abs(psi[i]).mid()), -i))
    psi = arb_eigenvector(X, lb, k, prec)
    if psi is None:
        raise Undecided(f"the eigenvector solve at pivot {k} is singular at {prec} bits")
    with ctx.workprec(prec):
        num = sum((psi[i] * arb(A[i, j]) * psi[j] for i in range(n) for j in range(n) if A[i, j] != 0), arb(0))
        den = sum((psi[i] * arb(G[i, j]) * psi[j] for i in range(n) for j in range(n) if G[i, j] != 0), arb(0))
        val = num / den
        res = all((sum((arb(X[i, j]) * psi[j] for j in range(n)), arb(0)) - lb * psi[i]).contains(0)
                  for i in range(n))
    return QKValue(None, val, {"kind": "eigvec", "of": of, "pivot": k, "prec": prec}, res)


# ---------------------------------------------------------------------------
# QᵀK ≻ 0


@dataclass
class Definiteness:
    """QᵀK ≻ 0 decided exactly: ``symmetric`` (QᵀK = KᵀQ), ``sym_pd`` (its symmetric part is
    positive definite), ``pd`` = both; the ``definite`` witness of S = sym(QᵀK)."""

    symmetric: bool
    sym_pd: bool
    witness: dict

    @property
    def pd(self) -> bool:
        return self.symmetric and self.sym_pd


def definiteness(QtK: fmpq_mat) -> Definiteness:
    """Exact decision of QᵀK ≻ 0 (d × d).  PD: the pivoted LDLᵀ P S Pᵀ = L D Lᵀ with every
    pivot positive (witness perm, L, D); not PD: a rational x ≠ 0 with xᵀSx ≤ 0 read off
    the first non-positive pivot (witness x).  Cross-checked with the characteristic
    polynomial's signs (raises ArithmeticError if the two methods disagree).

    >>> definiteness(fmpq_mat([[2, 1], [1, 2]])).pd, definiteness(fmpq_mat([[1, 2], [0, 1]])).sym_pd
    (True, False)
    """
    S = sym_part(QtK)
    n = S.nrows()
    perm, L, blocks = ldlt(S)
    pd = len(blocks) == n and all(k == "1" and v > 0 for k, v in blocks)
    if pd != (inertia_charpoly(S).n_pos == n):
        raise ArithmeticError("LDLᵀ and the characteristic polynomial disagree on definiteness")
    if pd:
        w = {"kind": "definite", "of": "S_QK", "perm": perm,
             "L": [[fmpq_str(x) for x in row] for row in L], "D": [fmpq_str(v) for _, v in blocks]}
    else:
        pos, y = 0, None
        for kind, v in blocks:
            if kind == "1" and v > 0:
                pos += 1
                continue
            y = [fmpq(0)] * n
            y[pos] = fmpq(1)
            if kind == "2":  # the 2×2 pivot [[0, b], [b, 0]]: (1, −sign b) gives −2|b|
                y[pos + 1] = fmpq(-1) if v > 0 else fmpq(1)
            break
        # x with Lᵀ (P x) = y, so that xᵀ S x = yᵀ D y ≤ 0
        Lt = fmpq_mat([[L[j][i] for j in range(n)] for i in range(n)])
        z = Lt.solve(fmpq_mat([[v] for v in y]))
        x = [fmpq(0)] * n
        for i in range(n):
            x[perm[i]] = z[i, 0]
        w = {"kind": "definite", "of": "S_QK", "x": [fmpq_str(v) for v in x]}
    return Definiteness(QtK == QtK.transpose(), pd, w)


# ---------------------------------------------------------------------------
# paranormal V


@dataclass
class Paranormal:
    """Whether V is paranormal: R^d = F ⊕ G, both invariant, V|_F = λI with λ > 0 and
    spectral radius of V|_G below λ.  ``lam`` the eigenvalue, ``F``/``G`` bases (columns)
    when λ is rational, ``dims`` = (dim F, dim G), ``witness`` (multiplicity > 1 only),
    ``certified`` when a box decided, ``reason`` when it is not paranormal."""

    holds: bool
    lam: Eig | None = None
    dims: tuple[int, int] | None = None
    F: fmpq_mat | None = None
    G: fmpq_mat | None = None
    witness: dict | None = None
    certified: bool = False
    reason: str = ""


def _columns(X: fmpq_mat) -> fmpq_mat:
    """A basis (columns) of the column space of X, exact."""
    R = X.transpose().rref()[0]
    rows = [[R[i, j] for j in range(R.ncols())] for i in range(R.nrows()) if any(R[i, j] for j in range(R.ncols()))]
    return fmpq_mat(rows).transpose() if rows else fmpq_mat(X.nrows(), 0)


def paranormal(sp: Spectrum) -> Paranormal:
    """Decide paranormality of X = sp.X (see the module docstring); F must be nonzero (with
    F = {0} every matrix would qualify).  Raises Undecided for an irrational eigenvalue of
    multiplicity > 1 (its eigenspace is not rational) or enclosures that do not separate.

    >>> paranormal(spectrum(fmpq_mat([[2, 0, 0], [0, 2, 0], [0, 0, 1]]))).dims
    (2, 1)
    """
    lam, used = dominant(sp, simple=False)
    if lam is None:
        return Paranormal(False, certified=used,
                          reason="no positive real eigenvalue exceeds every other eigenvalue in modulus")
    X, n, m = sp.X, sp.X.nrows(), lam.mult
    if lam.exact is None:
        if m > 1:
            raise Undecided("an irrational dominant eigenvalue of multiplicity > 1 (its eigenspace is not rational)")
        return Paranormal(True, lam, (1, n - 1), certified=used)
    M = X - identity(n) * lam.exact
    B, _ = M.numer_denom()
    Nsp, k = B.nullspace()
    F = fmpq_mat([[Nsp[i, j] for j in range(k)] for i in range(n)]) if k else fmpq_mat(n, 0)
    w = None
    if m > 1:
        if k == m:
            w = {"kind": "eigenspace", "of": "V", "basis": [[fmpq_str(F[i, j]) for i in range(n)] for j in range(k)]}
        else:
            rows, cols = _nonzero_minor(M, n - m + 1)
            w = {"kind": "eigenspace", "of": "V", "rows": rows, "cols": cols}
    if k != m:
        return Paranormal(False, lam, witness=w, certified=used,
                          reason=f"λ = {fmpq_str(lam.exact)} has multiplicity {m} but only {k} eigenvectors")
    G = _columns(M)
    return Paranormal(True, lam, (k, n - k), F, G, w, used)


def _nonzero_minor(M: fmpq_mat, r: int) -> tuple[list[int], list[int]]:
    """Rows and columns of a nonzero r × r minor of M (rank M ≥ r), by exact row reduction."""
    R, rk = M.rref()
    cols = []
    i = 0
    for j in range(M.ncols()):
        if i < rk and R[i, j] != 0:
            cols.append(j)
            i += 1
    cols = cols[:r]
    Rt, _ = fmpq_mat([[M[i, j] for j in cols] for i in range(M.nrows())]).transpose().rref()
    rows = []
    i = 0
    for j in range(M.nrows()):
        if i < len(cols) and Rt[i, j] != 0:
            rows.append(j)
            i += 1
    return rows, cols


# ---------------------------------------------------------------------------
# the classification of one triple


REGIMES = {
    "3.1": "V = I_d and QᵀK ≻ 0: the rescaled tokens converge to the boundary of a convex polytope "
           "(generically its vertices)",
    "4.2": "good triple: the rescaled tokens converge to at most three parallel hyperplanes {φ₁*(x) = c}, "
           "c ∈ {0, a, b}",
    "5.2": "V paranormal and QᵀK ≻ 0: the rescaled tokens converge to (∂K ∪ {0}) × G, K a polytope in F",
    "8.5": "V = −I_d and QᵀK = I_d: every token x_i converges to 0 and P → (1/n)11ᵀ",
}


@dataclass
class Triple:
    """A rational triple Q, K (k × d) and V (d × d) with the matrices the checks use:
    X (the matrix whose spectrum is certified), A, G with ⟨Qφ, Kφ⟩/|φ|² = ψᵀAψ/ψᵀGψ."""

    Q: fmpq_mat
    K: fmpq_mat
    V: fmpq_mat

    @property
    def d(self) -> int:
        return self.V.nrows()

    @property
    def QtK(self) -> fmpq_mat:
        return self.Q.transpose() * self.K


@dataclass
class Classification:
    """Everything ``qkverify regimes`` reports about one triple (see :func:`classify`)."""

    V_identity: bool
    V_minus_identity: bool
    qk_identity: bool
    definiteness: Definiteness
    spectrum: Spectrum
    top: Eig | None
    top_certified: bool
    qk: QKValue | None
    paranormal: Paranormal | None
    notes: list[str] = field(default_factory=list)

    @property
    def good_triple(self) -> bool | None:
        if self.top is None:
            return False
        if self.qk is None or self.qk.sign is None:
            return None
        return self.qk.sign > 0

    def regimes(self) -> list[str]:
        """The theorems of the regime table whose hypotheses hold."""
        out = []
        pd = self.definiteness.pd
        if self.V_identity and pd:
            out.append("3.1")
        if self.good_triple:
            out.append("4.2")
        if self.paranormal is not None and self.paranormal.holds and pd:
            out.append("5.2")
        if self.V_minus_identity and self.qk_identity:
            out.append("8.5")
        return out


def classify(t: Triple, prec: int = ROOT_PREC) -> Classification:
    """Classify a rational triple (exact where the data are rational, certified where a
    non-real eigenvalue is compared).  Raises ValueError on inconsistent shapes.

    >>> c = classify(Triple(fmpq_mat([[1, 0], [0, 1]]), fmpq_mat([[2, 0], [0, 1]]), fmpq_mat([[1, 0], [0, 1]])))
    >>> c.regimes(), c.good_triple, c.top
    (['3.1', '5.2'], False, None)
    """
    d = t.d
    if t.V.ncols() != d or t.Q.ncols() != d or t.K.ncols() != d or t.Q.nrows() != t.K.nrows():
        raise ValueError("Q and K must be k × d and V d × d")
    I = identity(d)
    sp = spectrum(t.V, prec)
    notes = []
    top, used = dominant(sp, simple=True)
    qk = None
    if top is not None:
        qk = qk_phi1(sp, top, t.QtK, I, "V", 2 * prec)
    try:
        par = paranormal(sp)
    except Undecided as err:
        par = None
        notes.append(f"paranormal: undecided ({err})")
    return Classification(t.V == I, t.V == -I, t.QtK == I, definiteness(t.QtK), sp, top, used, qk, par, notes)


__all__ = ["CBox", "Classification", "Definiteness", "Eig", "Paranormal", "QKValue", "REGIMES", "Spectrum",
           "Triple", "Undecided", "classify", "compare_modulus", "definiteness", "dominant", "krawczyk",
           "paranormal", "qk_phi1", "rank", "scaled_poly", "spectrum"]
