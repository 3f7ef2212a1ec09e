"""The normalised nonzero spectrum of a list of numbers, a symmetric matrix or a head, its
Appendix B and C statistics, and the statements evaluated on it (``qkverify spectrum``).

λ = ν/‖ν‖ with ν the nonzero eigenvalues, nondecreasing (Lean: the sorted normalised
nonzero spectrum, ``GramForm.IsSortedNormalizedNonzeroSpectrum``).  When every ν is
rational, λ is exact in ℚ(√s) (s = ‖ν‖² = ‖S‖²) and every statistic is exact; the
statements of Appendices B and C are evaluated on the ``vector`` input (ν, normalised, with
S when S is 2m × 2m and invertible).  Otherwise the eigenvalues are exact algebraic
numbers: O, E, R are still exact in ℚ(√s) (sums over the roots of the characteristic
polynomial), 𝓘 is exact when each irreducible factor has roots of one sign, C and 𝒫 are
certified enclosures.  A head also gets Lemma 10 (GramForm) evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flint import arb, ctx, fmpq, fmpq_mat, fmpq_poly

from ..errors import QKInputError
from ..exact.algebraic import RealAlgebraic, real_roots
from ..exact.intervals import arb_bounds
from ..exact.matrix import frob_sq, is_symmetric, sym_part
from ..exact.quadratic import Quad
from ..io.inputs import HeadInput, MatrixInput, VectorInput
from ..math import moments as Mo

STATEMENTS = ("MemLambdaSet", "pairingScore_eq", "pairingScore_eq_one_iff", "statO", "statO_eq_tsum_odd_moments")
BITS = 256


@dataclass
class SpectrumReport:
    """What ``qkverify spectrum`` shows: the normalised spectrum, the statistics (exact or None,
    and a certified interval), Λ membership, and the statement runs."""

    source: str
    s: fmpq
    nu: list[RealAlgebraic]
    values: dict[str, tuple[Any, arb]] = field(default_factory=dict)
    member: bool = False
    runs: list = field(default_factory=list)

    @property
    def m(self) -> int:
        return len(self.nu) // 2


def _nonzero_eigenvalues(S: fmpq_mat) -> list[RealAlgebraic]:
    B, D = S.numer_denom()
    return [r.scale(fmpq(1, int(D))) for r, k in real_roots(B.charpoly()) for _ in range(k) if r.sign() != 0]


def _ball(v) -> arb:
    return v.to_arb(BITS) if isinstance(v, Quad) else v


def spectrum_report(inp, digits: int = 20) -> SpectrumReport:
    """Evaluate everything on a VectorInput (its x is the spectrum: sorted, zeros dropped),
    a MatrixInput (S symmetric) or a HeadInput.  QKInputError for a zero spectrum or a
    non-symmetric matrix."""
    from .evaluate import evaluate

    S = None
    if isinstance(inp, VectorInput):
        mu = sorted(v for v in inp.x if v != 0)
        nu = [RealAlgebraic.from_rational(v) for v in mu]
        source = "list"
    else:
        S = sym_part(inp.L) if isinstance(inp, HeadInput) else inp.L
        if not is_symmetric(S):
            raise QKInputError("the matrix is not symmetric (give its symmetric part, or a head)")
        nu = _nonzero_eigenvalues(S)
        source = "head" if isinstance(inp, HeadInput) else "symmetric matrix"
    if not nu:
        raise QKInputError("the spectrum has no nonzero entry: nothing to normalise")
    rational = all(v.is_rational for v in nu)
    s = sum((v.rational ** 2 for v in nu), fmpq(0)) if rational else frob_sq(S)
    rep = SpectrumReport(source, s, nu)
    if rational:
        mu = [v.rational for v in nu]
        x = Mo.normalized(mu)
        rep.member = Mo.mem_lambda(x)
        vals = {"imbalance": Mo.imbalance(x) if len(x) % 2 == 0 else None,
                "statC": Mo.stat_c(x) if len(x) % 2 == 0 else None,
                "pairingScore": Mo.pairing_score(x) if len(x) % 2 == 0 else None,
                "statO": Mo.stat_o(x), "statE": Mo.stat_e(x), "statR": Mo.stat_r(x)}
        with ctx.workprec(BITS):
            rep.values = {k: (v, _ball(v)) for k, v in vals.items() if v is not None}
        Sv = S if S is not None and S.nrows() == len(mu) and S.det() != 0 else None
        vin = VectorInput(tuple(mu), True, S=Sv)
        for st in STATEMENTS:
            try:
                rep.runs.append(evaluate(st, vin))
            except QKInputError:
                pass
    else:
        rep.values = _algebraic_values(S, nu, s)
        signs = [v.sign() for v in nu]
        rep.member = len(nu) % 2 == 0 and signs == [-1] * rep.m + [1] * rep.m
    if isinstance(inp, HeadInput):
        try:
            rep.runs.append(evaluate("GramForm.charpoly_roots_filter_ne_zero", inp))
        except QKInputError:
            pass
    return rep


def _algebraic_values(S: fmpq_mat, nu: list[RealAlgebraic], s: fmpq) -> dict:
    """Irrational eigenvalues: O, E, R exact (root sums of det(tI − S) without t^z), 𝓘 exact when
    every irreducible factor's roots share a sign, C and 𝒫 as enclosures."""
    P = S.charpoly()
    cs = list(P.coeffs())
    while cs[0] == 0:
        cs.pop(0)
    out: dict[str, tuple[Any, arb]] = {}
    with ctx.workprec(BITS):
        rs = arb(s).sqrt()
        lam = [v.to_arb(BITS) / rs for v in nu]
        m = len(lam) // 2
        if len(lam) % 2 == 0:
            lp, lm = [lam[2 * m - 1 - j] for j in range(m)], [-lam[j] for j in range(m)]
            imb = sum((t * t for t in lp), arb(0)) - sum((t * t for t in lm), arb(0))
            out["imbalance"] = (_imbalance_exact(nu, s, m), imb)
            out["statC"] = (None, sum((a * b for a, b in zip(lp, lm)), arb(0)))
            out["pairingScore"] = (None, 1 - sum(((a - b) * (a - b) for a, b in zip(lp, lm)), arb(0)).sqrt())
        try:
            for k, v in zip(("statO", "statE", "statR"), Mo.stats_from_charpoly(fmpq_poly(cs), s)):
                out[k] = (v, v.to_arb(BITS))
        except ValueError:
            pass
    return out


def _imbalance_exact(nu: list[RealAlgebraic], s: fmpq, m: int) -> Quad | None:
    """(Σ_{ν>0} ν² − Σ_{ν<0} ν²)/s when the sign split follows the irreducible factors (power sums)."""
    from ..exact.algebraic import normalize

    by_poly: dict = {}
    for v in nu:
        by_poly.setdefault(tuple(int(c) for c in normalize(v.poly).coeffs()), []).append(v)
    total = fmpq(0)
    for coeffs, vs in by_poly.items():
        signs = {v.sign() for v in vs}
        deg = len(coeffs) - 1
        if len(signs) != 1 or len(vs) % deg:
            return None
        p2 = Mo.power_sums(fmpq_poly(list(coeffs)), 3)[2]
        total += signs.pop() * p2 * (len(vs) // deg)
    return Quad(total / s) if 2 * m == len(nu) else None


def value_json(v, ball: arb, digits: int) -> dict:
    """{"exact": text or None, "interval": [lo, hi]} (outward-rounded decimals)."""
    return {"exact": None if v is None else str(v), "interval": list(arb_bounds(ball, digits))}


def lam_json(rep: SpectrumReport, digits: int) -> list[dict]:
    """The normalised spectrum: exact text (ν/√s, sympy syntax) and intervals."""
    import sympy

    out = []
    with ctx.workprec(BITS):
        rs = arb(rep.s).sqrt()
        for v in rep.nu:
            if v.is_rational:
                ex = str(Quad(0, v.rational / rep.s, rep.s))
            else:
                t = sympy.Symbol("t")
                poly = sum(int(c) * t ** k for k, c in enumerate(v.poly.coeffs()))
                root = (sorted(sympy.roots(poly, t), key=lambda r: float(r))[v.index] if v.poly.degree() == 2
                        else sympy.CRootOf(poly, v.index))  # radicals for quadratics
                ex = str(sympy.radsimp(root / sympy.sqrt(sympy.Rational(int(rep.s.p), int(rep.s.q)))))
            out.append({"exact": ex, "interval": list(arb_bounds(v.to_arb(BITS) / rs, digits))})
    return out


def load_spectrum_input(path: str):
    """A file for ``qkverify spectrum``: a JSON list of numbers (a spectrum), a symmetric matrix
    (nested list, {"S": …} or {"L": …}) or a head; QKInputError otherwise."""
    from ..exact.rational import read_input_file
    from ..io.inputs import input_from_document

    doc = read_input_file(path)
    inp = input_from_document(doc, None, str(path))
    if isinstance(inp, VectorInput):
        return VectorInput(inp.x, True)
    if isinstance(inp, (MatrixInput, HeadInput)):
        return inp
    raise QKInputError(f"{path}: give a list of numbers, a symmetric matrix or a head {{\"W_Q\": …, \"W_K\": …}}")
