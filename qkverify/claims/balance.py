"""§2 Pairing and balance: Lemma 2 (PairingBound.lean), Lemma 3 (RankBalance.lean),
Theorem 3 (BalancedHeads.lean), one check per Lean declaration (certificate format 2).

Lemma 2 is evaluated on ``matrix`` inputs with S = the input matrix, as Lean states it for any S
with ``hS : S.IsHermitian`` (a non-symmetric input fails hS and is outside the statement; hS is a
proof argument the statement's terms use, so it cannot be dropped).  λ₊, λ₋ are the exact
eigenvalue lists α, β of S (Lean's alphaList/betaList, padded to N).  The square
roots of the statement (‖λ₊‖, ‖λ₋‖, ‖S‖, 𝒫, ρ, the bound) are decided by the same
rule as the kernel (qkverify/kernel/rules/balance.py):

* **by squaring, exactly**, when ‖λ₊‖², ‖λ₋‖² and ⟨λ₊, λ₋⟩ are rational -- every
  α_j, β_j rational, or one of the two norms known and the other the rest of Σλ²
  (a power sum of the characteristic polynomial), products with a zero entry 0;
* **exactly in the equality case** λ₋ = ρλ₊ (decided from the supports, rational
  entries, or ratio 1): then (1−𝒫)² = (1−ρ)²Σλ²/((1+ρ²)‖S‖²) and
  (1−bound)² = (1−ρ)²/(1+ρ²);
* **by certified enclosures** otherwise (refined to 2048 bits), else undecided.

Lemma 3 is evaluated on ``matrix_bound`` inputs (L, n) and, for
``finrank_le_of_posDefOn``, on ``matrix_subspace`` inputs (L, n and a basis of a
subspace V).  Lean's n is any natural number, n = 0 included.
"""

from __future__ import annotations

from flint import arb, ctx, fmpq, fmpq_mat, fmpz

from ..exact.algebraic import RealAlgebraic, arb_to_interval, charpoly_factors
from ..exact.inertia import inertia_charpoly, inertia_ldlt
from ..exact.matrix import frob_sq, identity, is_symmetric, rank, sym_part, vstack
from ..math.profile import spectral_data
from . import values as V
from .common import inertia_both, lean_div, rank_witness, spectrum_witness, witnessed_rank
from .registry import DeclResult, Subject, declaration_check, predicate

MAT = ("matrix",)
BOUND = ("matrix_bound", "matrix_subspace")
ZERO = RealAlgebraic.from_rational(0)
#: the kernel refines enclosures of 𝒫 and the bound up to this many bits
MAX_BITS = 2048


# --------------------------------------------------------------------------
# Lemma 2


def _spec(s: Subject) -> tuple[list[RealAlgebraic], list[RealAlgebraic], fmpq]:
    """α, β of S (length N, exact) and Σλ² from the characteristic polynomial of D·S (Newton:
    e₁² − 2e₂ per factor); records the spectrum witness of S."""
    def build():
        S = sym_part(s.inp.L)
        s.witness(spectrum_witness(S, "S"))
        sd = spectral_data(S)
        N, inv = S.nrows(), fmpq(1, sd.D)
        al = [r.value.scale(inv) for r in sd.pos] + [ZERO] * (N - len(sd.pos))
        be = [(-r.value).scale(inv) for r in sd.neg] + [ZERO] * (N - len(sd.neg))
        D, facs = charpoly_factors(S)
        p2 = fmpq(0)
        for f, e in facs:
            c = [fmpq(int(x)) for x in f.coeffs()]
            e1 = -c[-2] / c[-1]
            e2 = c[-3] / c[-1] if len(c) > 2 else fmpq(0)
            p2 += e * (e1 * e1 - 2 * e2)
        return al, be, p2 / (D * D)

    return s.memo("l2_spec", build)


def _q(x: RealAlgebraic) -> fmpq | None:
    return x.rational if x.is_rational else None


def _sums(s: Subject) -> tuple:
    """(A, B, C, Σλ²): A = ‖λ₊‖², B = ‖λ₋‖², C = ⟨λ₊, λ₋⟩ when rational by the module's rule."""
    al, be, p2 = _spec(s)
    qa, qb = [_q(x) for x in al], [_q(y) for y in be]
    A = sum((x * x for x in qa), fmpq(0)) if None not in qa else None
    B = sum((y * y for y in qb), fmpq(0)) if None not in qb else None
    if A is None and B is not None:
        A = p2 - B
    if B is None and A is not None:
        B = p2 - A
    ok = all((x is not None and y is not None) or x == 0 or y == 0 for x, y in zip(qa, qb))
    C = sum((x * y for x, y in zip(qa, qb) if x is not None and y is not None), fmpq(0)) if ok else None
    return A, B, C, p2


def _proportional(s: Subject) -> tuple[bool | None, str]:
    """(λ₋ = ρλ₊, evidence): exact from the supports, rational entries or ratio 1, certified when an
    enclosure separates a pair; None when out of reach (irrational ratio ≠ 1)."""
    al, be, _ = _spec(s)
    m = sum(1 for x in al if x.sign() > 0)
    k = sum(1 for y in be if y.sign() > 0)
    if k == 0:
        return True, "exact"
    if m != k:
        return False, "exact"
    if m == 1:
        return True, "exact"
    if all(x.is_rational for x in al[:m] + be[:m]):
        a1, b1 = al[0].rational, be[0].rational
        return all(y.rational * a1 == b1 * x.rational for x, y in zip(al[:m], be[:m])), "exact"
    if al[0].cmp(be[0]) == 0:
        return all(x.cmp(y) == 0 for x, y in zip(al[:m], be[:m])), "exact"
    with ctx.workprec(300):  # the products at the balls' own precision, not the caller's
        for x, y in zip(al[1:m], be[1:m]):
            d = y.to_arb(300) * al[0].to_arb(300) - be[0].to_arb(300) * x.to_arb(300)
            if not d.contains(0):
                return False, "certified"
    return None, "certified"


def _balls(s: Subject, bits: int) -> tuple[arb, arb]:
    """Enclosures of 𝒫 = 1 − ‖λ₊ − λ₋‖/‖S‖ and of 1 − |1−ρ|/√(1+ρ²) at ``bits`` bits."""
    al, be, _ = _spec(s)
    with ctx.workprec(bits + 32):
        A = [x.to_arb(bits + 32) for x in al]
        B = [y.to_arb(bits + 32) for y in be]
        F = frob_sq(sym_part(s.inp.L))
        E = sum(((x - y) * (x - y) for x, y in zip(A, B)), arb(0))
        P = 1 - (E * arb(lean_div(fmpq(1), F))).nonnegative_part().sqrt()
        rho = sum((y * y for y in B), arb(0)).sqrt() / sum((x * x for x in A), arb(0)).sqrt()
        return P, 1 - abs(1 - rho) / (1 + rho * rho).sqrt()


def _inertia(s: Subject):
    S = sym_part(s.inp.L)
    return s.memo("l2_inertia", lambda: inertia_both(S, "S", S.nrows() <= 48)[0])


@predicate("lamPlus_ne_zero")
def _lam_plus(s: Subject) -> bool:
    """λ₊ ≠ 0: S has a positive eigenvalue (inertia by the characteristic polynomial and, up to
    N = 48, LDLᵀ; Lean binder ``hplus``)."""
    return _inertia(s).n_pos > 0


def _lam_list(s: Subject, which: int) -> DeclResult:
    """λ₊ (λ₋) = alphaList S (betaList S) as a vector: nonnegative, antitone, length N, and as many
    positive entries as S has positive (negative) eigenvalues (a second inertia computation)."""
    xs = _spec(s)[which]
    inn = _inertia(s)
    ok = (len(xs) == s.inp.N and all(x.sign() >= 0 for x in xs) and all(xs[i].cmp(xs[i + 1]) >= 0
                                                                        for i in range(len(xs) - 1))
          and sum(1 for x in xs if x.sign() > 0) == (inn.n_pos if which == 0 else inn.n_neg))
    return DeclResult(ok, value=V.listv([V.real(x) for x in xs]))


declaration_check("lamPlusVec", MAT)(lambda s: _lam_list(s, 0))
declaration_check("lamMinusVec", MAT)(lambda s: _lam_list(s, 1))


def _sqrt_q(x: fmpq) -> fmpq | None:
    p, d = fmpz(x.p), fmpz(x.q)
    r, t = p.isqrt(), d.isqrt()
    return fmpq(r, t) if r * r == p and t * t == d else None


@declaration_check("pairingScoreSym", MAT)
def _pairing_score(s: Subject) -> DeclResult:
    """𝒫 = 1 − ‖λ₊ − λ₋‖/√frobSq S (x/0 = 0): exact when (1 − 𝒫)² = ‖λ₊ − λ₋‖²/‖S‖² is rational (a
    rational, or the root below 1 of q(1 − x)² = p), else a certified enclosure; the exact value
    must lie in the enclosure computed from the eigenvalue enclosures."""
    A, B, C, _ = _sums(s)
    F = frob_sq(sym_part(s.inp.L))
    P, _ = _balls(s, 160)
    if None in (A, B, C):
        return DeclResult(True, "certified", V.enclosure(P))
    x2 = lean_div(A + B - 2 * C, F)
    r = _sqrt_q(x2)
    if r is not None:
        lo, hi = arb_to_interval(P)
        return DeclResult(lo <= 1 - r <= hi, value=V.exact(1 - r))
    return DeclResult(True, value=V.root_in([int(x2.q - x2.p), int(-2 * x2.q), int(x2.q)], P))


@declaration_check("frobSq_eq_norm_sq_add_norm_sq", MAT)
def _norm_sq(s: Subject) -> DeclResult:
    """frobSq S (Σ S_ij²) = ‖λ₊‖² + ‖λ₋‖² (Σα² + Σβ² when rational, else the power sum Σλ²)."""
    A, B, _, p2 = _sums(s)
    return DeclResult(frob_sq(sym_part(s.inp.L)) == (A + B if None not in (A, B) else p2))


@declaration_check("pairing_bound", MAT)
def _pairing_bound(s: Subject) -> DeclResult:
    """(i) 𝒫 = 1 − √(1 − 2⟨λ₊,λ₋⟩/‖S‖²), (ii) 𝒫 ≤ 1 − |1−ρ|/√(1+ρ²), (iii) equality ⇔ λ₋ = ρλ₊,
    with ρ = ‖λ₋‖/‖λ₊‖ (0 when λ₊ = 0)."""
    A, B, C, p2 = _sums(s)
    F = frob_sq(sym_part(s.inp.L))
    prop, ev = _proportional(s)
    if prop is None:
        return DeclResult(None, "certified", reason="λ₋ ∥ λ₊ with an irrational ratio ≠ 1 is out of reach")
    if None not in (A, B, C):  # squaring: (1 − 𝒫)² = x2, (1 − bound)² = 1 − 2ρ/(1 + ρ²), ρ² = t
        x2 = lean_div(A + B - 2 * C, F)
        eq1 = x2 == max(fmpq(0), 1 - 2 * lean_div(C, F))
        t, r = lean_div(B, A), 1 - x2
        le = r <= 0 or r * r * (1 + t) ** 2 <= 4 * t
        eq = r >= 0 and r * r * (1 + t) ** 2 == 4 * t
        return DeclResult(eq1 and le and eq == prop, ev)
    eq1 = p2 == F
    if prop:
        al, be, _ = _spec(s)
        one = al[0].cmp(be[0]) == 0
        return DeclResult(eq1 and (one or p2 >= F) and (one or p2 == F), ev)
    bits = 128
    while bits <= MAX_BITS:
        P, bound = _balls(s, bits)
        if bound > P:
            return DeclResult(eq1, "certified")
        if bound < P:
            return DeclResult(False, "certified", reason="𝒫 exceeds the bound")
        bits *= 4
    return DeclResult(None, "certified", reason=f"𝒫 and the bound are not separated at {MAX_BITS} bits")


# --------------------------------------------------------------------------
# Lemma 3


def _rank_L(s: Subject) -> int:
    return witnessed_rank(s, s.inp.L, "L")


@predicate("rank_le_n")
def _rank_le_n(s: Subject) -> bool:
    """rank L ≤ n (rank witness of L; Lean binder ``hrank``)."""
    return _rank_L(s) <= s.inp.n


def _dim_V(s: Subject) -> int:
    return witnessed_rank(s, s.inp.V, "V")


@predicate("symPart_posdef_on")
def _posdef_on(s: Subject) -> bool:
    """posDefOn (symPart L) V: G = V S Vᵀ (x = Vᵀc) is positive semidefinite with rank dim V,
    decided by LDLᵀ (Lean binder ``hV``)."""
    V = s.inp.V
    G = V * sym_part(s.inp.L) * V.transpose()
    inn = inertia_ldlt(G)
    from ..math.regimes import definiteness

    # the kernel does not take determinants: it checks G's LDLᵀ (or an x with xᵀGx ≤ 0)
    s.witness(dict(definiteness(G).witness, of="VSVt"))
    return inn.n_neg == 0 and inn.n_pos == _dim_V(s)


@declaration_check("rank_balance", BOUND)
def _rank_balance(s: Subject) -> DeclResult:
    """S has at most n positive and at most n negative eigenvalues (inertia by the characteristic
    polynomial and LDLᵀ, which must agree; the spectrum witness carries it to the kernel)."""
    S = sym_part(s.inp.L)
    inn, _ = inertia_both(S, "S", S.nrows() <= 48)
    s.witness(spectrum_witness(S, "S"))
    return DeclResult(inn.n_pos <= s.inp.n and inn.n_neg <= s.inp.n)


@declaration_check("finrank_le_of_posDefOn", ("matrix_subspace",))
def _finrank(s: Subject) -> DeclResult:
    """dim V ≤ n, with dim V the rank of the basis rows (rank witness of V)."""
    return DeclResult(_dim_V(s) <= s.inp.n)


# --------------------------------------------------------------------------
# Theorem 3 (BalancedHeads.lean).
# Inputs: a head (W_Q, W_K, optionally a basis B of C for the Gram matrix) or
# a weights head (the certified route of qkverify.heads; only the declarations
# that need no N x N object are evaluated there).

HEAD = ("head",)
HEADS = ("head", "weights")


def _B(s: Subject) -> fmpq_mat:
    return s.inp.B if s.inp.B is not None else identity(s.inp.N)


def _head(s: Subject) -> dict:
    """Exact objects of a head: M = [W_K; W_Q], S, the Gram matrix in the basis B, L_B."""
    def build():
        inp = s.inp
        M = vstack(inp.W_K, inp.W_Q)
        S = sym_part(inp.L)
        B = _B(s)
        G = B.transpose() * S * B
        LB = (inp.W_K * B).transpose() * (inp.W_Q * B)
        return {"M": M, "S": S, "G": G, "LB": LB}

    return s.memo("head", build)


def _rank_M(s: Subject) -> int:
    """rank [W_K; W_Q] with its witness (weights heads carry theirs in s.inp)."""
    if s.kind == "weights":
        s.witness(s.inp.rank_witness)
        return s.inp.rank_M
    h = _head(s)
    w = rank_witness(h["M"], "M")
    s.witness(w)
    return w["rank"]


@predicate("stacked_surjective")
def _nondegenerate(s: Subject) -> bool:
    """Nondegenerate Q K: the stacked map is surjective, rank [W_K; W_Q] = 2n (binder ``hnd``)."""
    return _rank_M(s) == 2 * s.inp.n


@declaration_check("stacked", HEAD)
def _stacked(s: Subject) -> DeclResult:
    """J = (Q, K) as the 2n × N matrix [W_Q; W_K]; its rank equals that of [W_K; W_Q]."""
    J = vstack(s.inp.W_Q, s.inp.W_K)
    return DeclResult(rank(J) == rank(_head(s)["M"]), value=V.matrix(J))


@declaration_check("Nondegenerate", HEADS)
def _nd(s: Subject) -> DeclResult:
    """Nondegenerate as a value (rank of the witness = 2n), against FLINT's rank for a matrix head."""
    r = _rank_M(s)
    ok = True if s.kind == "weights" else r == rank(_head(s)["M"])
    return DeclResult(ok, value=V.boolean(r == 2 * s.inp.n))


@declaration_check("headForm", HEAD)
def _headForm(s: Subject) -> DeclResult:
    """S(e_i, e_j) = ½(⟨K e_i, Q e_j⟩ + ⟨Q e_i, K e_j⟩); checked: symmetric (headForm_symm) and
    Jᵀ·B·J = 2S for the pairing form B((a,b),(a',b')) = ⟨a,b'⟩ + ⟨b,a'⟩ (pairForm_stacked)."""
    inp = s.inp
    S = (inp.W_K.transpose() * inp.W_Q + inp.W_Q.transpose() * inp.W_K) / 2
    n = inp.n
    J = vstack(inp.W_Q, inp.W_K)
    Bp = fmpq_mat(2 * n, 2 * n, [int(abs(i - j) == n) for i in range(2 * n) for j in range(2 * n)])
    return DeclResult(is_symmetric(S) and J.transpose() * Bp * J == S * 2, value=V.matrix(S))


def _null(A: fmpq_mat) -> fmpq_mat:
    """Columns spanning the right null space of A (exact, FLINT)."""
    B, _ = A.numer_denom()
    X, k = B.nullspace()
    return fmpq_mat([[X[i, j] for j in range(k)] for i in range(A.ncols())]) if k else fmpq_mat(A.ncols(), 0)


def _same_span(X: fmpq_mat, Y: fmpq_mat) -> bool:
    if X.ncols() != Y.ncols():
        return False
    if X.ncols() == 0:
        return True
    return rank(fmpq_mat([list(a) + list(b) for a, b in zip(X.tolist(), Y.tolist())])) == X.ncols() == rank(X)


@declaration_check("radical_eq_ker", HEAD)
def _radical(s: Subject) -> DeclResult:
    """{x | S(x, ·) = 0} = ker J: the null spaces of S and of M span the same space (exact)."""
    h = _head(s)
    s.witness(rank_witness(h["S"], "S"))
    return DeclResult(_same_span(_null(h["S"]), _null(h["M"])))


@declaration_check("finrank_radical", HEAD)
def _finrank_radical(s: Subject) -> DeclResult:
    """finrank (ker J) + 2·finrank H = finrank C, with ker J computed: an exact basis of the null
    space of the stacked matrix J = [W_Q; W_K] (the ``kernel_basis`` witness: each vector in ker J,
    the vectors independent), its size k = dim ker J (no larger: rank J ≥ N − k by the rank
    witness of M, which has J's rows), then k + 2n against N."""
    N, n = s.inp.N, s.inp.n
    J = vstack(s.inp.W_Q, s.inp.W_K)
    K = _null(J)
    s.witness({"kind": "kernel_basis", "of": "stacked",
               "vectors": [[str(V.exact(K[i, j])["exact"]) for i in range(N)] for j in range(K.ncols())]})
    _rank_M(s)
    k = K.ncols()
    return DeclResult(k + 2 * n == N, reason="" if k + 2 * n == N else f"dim ker J = {k}, 2n = {2 * n}, N = {N}")


@declaration_check("gram", HEAD)
def _gram(s: Subject) -> DeclResult:
    """G_ij = S(b_i, b_j) = (Bᵀ S B)_ij; symmetric (gram_isHermitian)."""
    G = _head(s)["G"]
    return DeclResult(is_symmetric(G), value=V.matrix(G))


def _signature(s: Subject) -> tuple[int, int, int]:
    """(n₊, n₋, n₀) of the Gram matrix: charpoly + Descartes and LDLᵀ must agree (two
    methods); the spectrum witness carries it to the kernel.  Weights heads: from the
    certified route's cells."""
    if s.kind == "weights":
        s.witness(s.inp.cells_witness)
        return s.inp.signature
    def build():
        G = _head(s)["G"]
        a, b = inertia_charpoly(G), inertia_ldlt(G)
        if a.triple() != b.triple():
            raise ArithmeticError(f"inertia methods disagree: {a.triple()} vs {b.triple()}")
        s.witness(spectrum_witness(G, "gram"))
        return a.triple()

    return s.memo("signature", build)


@declaration_check("signature", HEADS)
def _sig(s: Subject) -> DeclResult:
    p, m, z = _signature(s)
    return DeclResult(p + m + z == s.inp.N, value=V.ints((p, m, z)))


@declaration_check("gram_eq_symPart", HEAD)
def _gram_eq(s: Subject) -> DeclResult:
    """The Gram matrix is symPart of L_B = (W_K B)ᵀ(W_Q B), whose rank is ≤ n."""
    h = _head(s)
    w = rank_witness(h["LB"], "Lgram")
    s.witness(w)
    return DeclResult(w["rank"] <= s.inp.n and sym_part(h["LB"]) == h["G"])


@declaration_check("ker_gram_eq_map", HEAD)
def _ker_gram(s: Subject) -> DeclResult:
    """ker G = B⁻¹ ker J (null spaces compared exactly)."""
    h = _head(s)
    s.witness(rank_witness(h["S"], "S"))
    s.witness(rank_witness(h["G"], "gram"))
    return DeclResult(_same_span(_null(h["G"]), _B(s).inv() * _null(h["M"])))


@declaration_check("heads_have_balanced_attention", HEADS)
def _thm3(s: Subject) -> DeclResult:
    """signature(gram b) = (n, n, N − 2n), with ℕ's truncated subtraction (N − 2n = 0 when N < 2n)."""
    from ..kernel.lean import nat_sub

    n, N = s.inp.n, s.inp.N
    return DeclResult(_signature(s) == (n, n, nat_sub(N, 2 * n)))
