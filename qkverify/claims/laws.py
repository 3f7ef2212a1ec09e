"""Appendix A, random matrices, one check per Lean declaration on a ``law`` input:
Corollary 1 (``IidBaseline.lean``), Corollary 2 (``QKProductBaseline.lean``) and
Proposition 5, the seed's "Proposition 6" (``LowRankExpectedEnergy.lean``).

A law input (:class:`~qkverify.io.law_inputs.LawInput`) is a random matrix whose entries
have exact finite, Gaussian or Pareto laws, independent except for the input's ``copies``:
model ``iid`` (L, N×N) for Corollary 1, model ``qk`` (L = W_Kᵀ W_Q, W_K and W_Q n×N) for
Corollary 2 and Proposition 5.

How each conclusion is evaluated (the kernel re-derives each by its own route):

* moments (∫ frobSq L, ∫ tr(L·L), ∫ frobSq(symPart L), ∫ frobSq(skewPart L)) exactly, with
  Lean's Bochner integral (a non-integrable integrand integrates to 0): small finite iid
  laws through the exact law of the energies (:func:`~qkverify.math.baselines.iid_energy_law`,
  a convolution), otherwise the closed forms of
  :func:`~qkverify.math.baselines.lean_moments` (O(1) for a matrix with one law, FLINT
  products for grids); witness ``moments``.  An integral whose integrability is not decided
  (dependent heavy-tailed entries) is ``undecided``, named;
* E[‖S‖²/‖L‖²] and E[‖T‖²/‖L‖²] with Lean's x/0 = 0, exactly wherever the law allows (witness
  ``enumeration``, :meth:`~qkverify.io.law_inputs.LawInput.ratio_route`): a zero product
  (L = 0 surely), every value pattern of the free entries (at most ENUM_LIMIT), N = 1 (the
  ratio is [L ≠ 0]: E = P(L ≠ 0) for any laws, Gaussians included), iid finite laws by the
  exact law of the energies (a convolution within its caps); otherwise there is no closed
  form (a ratio of quadratic forms) and the expectation is *sampled* by the
  deterministic Monte Carlo of :mod:`qkverify.math.montecarlo` (witness ``monte_carlo``): the
  declaration is then ``consistent`` or ``inconsistent at level δ`` (evidence ``empirical``),
  never ``holds`` or ``fails`` -- an equality of reals is not decided by a sample.

Lean's implicit σ (σ_K, σ_Q, v, v_K, v_Q) is instantiated with Lean's ∫ X² of its matrix's
first entry (1 when the matrix has no entry): hVar-style hypotheses then say that every entry
has that second moment.  Every hypothesis is a decision on the input: independence (no copy
of a random entry), square-integrability (a Pareto law of shape ≤ 2 is not), means, second
moments, Gaussian laws.  Measurability (hMeas, hmeas) is the one exception: every entry of a
law input is a measurable map, and no input of the Lean types can violate it alone -- hLaw /
hlawK / hlawQ state ``μ.map X = gaussianReal 0 v``, and Mathlib's ``Measure.map`` of a map that is
not a.e.-measurable is 0, not a probability measure.
"""

from __future__ import annotations

from typing import Any

from flint import fmpq

from ..exact.rational import fmpq_str
from ..io.law_inputs import LawInput
from ..math import baselines as B
from ..math import montecarlo as MC
from ..errors import QKInputError
from .common import lean_div
from .registry import DeclResult, NotApplicable, Subject, declaration_check, predicate

LAW = ("law",)
#: the model each statement is about (search strategies and the suite pick inputs by it)
LAW_MODELS = {"integral_frobSq_iid": "iid", "integral_frobSq_qk": "qk", "expected_symmetric_energy_low_rank_qk": "qk"}
#: iid sizes up to which the producer's moments come from the exact energy law
ENERGY_LAW_MAX_N = 6


def _inp(s: Subject) -> LawInput:
    if not isinstance(s.inp, LawInput):
        raise NotApplicable("this declaration takes a law input")
    return s.inp


def _laws(s: Subject, name: str) -> list:
    """The distinct laws of the entries of ``name`` (L, W_K or W_Q)."""
    inp = _inp(s)
    if name not in inp.blocks():
        raise NotApplicable(f"an input of model {inp.model} has no entry laws of {name} "
                            f"({'Corollary 1 takes model iid' if name == 'L' else 'model qk is needed'})")
    return inp.distinct_laws(name)


def _s2(s: Subject, name: str) -> fmpq:
    """The σ² the check instantiates: Lean's ∫ X² of the first entry (1 if none)."""
    _laws(s, name)
    first = s.inp.first_law(name)
    return first.second_moment() if first is not None else fmpq(1)


def _gauss0(law: Any, v: fmpq) -> bool:
    """The law is gaussianReal 0 v (the point mass at 0 when v = 0)."""
    return B.is_centered_gaussian(law) and law.second_moment() == v


def _n(s: Subject) -> int:
    """The head dimension n (law inputs of model qk, heads)."""
    if getattr(s.inp, "n", None) is None:
        raise NotApplicable("the input has no head dimension n (model qk is needed)")
    return s.inp.n


def _l2(s: Subject, names: tuple[str, ...]) -> bool:
    """MemLp 2 of every entry of the named matrices: finite and Gaussian laws are, a Pareto law iff
    its shape exceeds 2."""
    return all(B.is_square_integrable(l) for b in names for l in _laws(s, b))


def _measurable(s: Subject) -> bool:
    """hMeas / hmeas: every entry of a law input is a measurable map (no input can violate it
    alone: see the module docstring)."""
    _inp(s)
    return True


def _independent(s: Subject) -> bool:
    """hIndep / hindep: the entries are jointly independent -- every copy's source is a point mass."""
    return _inp(s).independent()


predicate("memLp_two")(lambda s: _l2(s, ("L",)))
predicate("WK_memLp_two")(lambda s: _l2(s, ("W_K",)))
predicate("WQ_memLp_two")(lambda s: _l2(s, ("W_Q",)))
predicate("entries_aemeasurable")(_measurable)
predicate("entries_independent")(_independent)
predicate("mean_zero")(lambda s: all(l.mean() == 0 for l in _laws(s, "L")))
predicate("second_moment_eq_sigma_sq")(lambda s: all(l.second_moment() == _s2(s, "L") for l in _laws(s, "L")))
predicate("sigma_ne_zero")(lambda s: _s2(s, "L") != 0)
predicate("v_ne_zero")(lambda s: _s2(s, "L") != 0)
predicate("entries_gaussian")(lambda s: all(_gauss0(l, _s2(s, "L")) for l in _laws(s, "L")))
predicate("N_pos")(lambda s: s.inp.N > 0)
predicate("n_pos")(lambda s: _n(s) > 0)
predicate("n_le_N")(lambda s: _n(s) <= s.inp.N)
for _x, _b in (("K", "W_K"), ("Q", "W_Q")):
    predicate(f"W{_x}_mean_zero")(lambda s, b=_b: all(l.mean() == 0 for l in _laws(s, b)))
    predicate(f"W{_x}_second_moment_eq")(lambda s, b=_b: all(l.second_moment() == _s2(s, b) for l in _laws(s, b)))
    predicate(f"W{_x}_entries_gaussian")(lambda s, b=_b: all(_gauss0(l, _s2(s, b)) for l in _laws(s, b)))
    predicate(f"sigma{_x}_ne_zero")(lambda s, b=_b: _s2(s, b) != 0)
    predicate(f"v{_x}_ne_zero")(lambda s, b=_b: _s2(s, b) != 0)


# ---------------------------------------------------------------------------
# what the conclusions are evaluated from


def _energy_law(s: Subject) -> B.EnergySummary:
    """The exact law of (‖S‖², ‖T‖², ‖L‖²) of a finite law input with independent entries, summarised."""
    def build():
        inp = s.inp
        g = inp.grids()
        if inp.model == "iid":
            return B.iid_energy_law(inp.N, g["L"]).summary()
        return B.qk_energy_law_grids(inp.N, g["W_K"], g["W_Q"]).summary()

    return s.memo("energy_law", build)


def _moments(s: Subject) -> B.LeanMoments:
    def build():
        inp = _inp(s)
        small = inp.model == "qk" and not inp.needs_monte_carlo()
        if (not inp.copies and inp.is_finite()
                and (small or (inp.model == "iid" and inp.N <= ENERGY_LAW_MAX_N))):
            e = _energy_law(s)
            m = B.LeanMoments({"E_frobSq": e.E_L2, "E_trace_mul_self": e.E_S2 - e.E_T2, "E_frobSq_symPart": e.E_S2,
                               "E_frobSq_skewPart": e.E_T2}, {})
        else:
            m = B.lean_moments(inp.model, inp.N, inp.blocks(), inp.n or 0, inp.copies)
        s.witness({"kind": "moments", "of": "L", **{k: fmpq_str(v) for k, v in m.values.items() if v is not None}})
        return m

    return s.memo("moments", build)


def _ratios(s: Subject) -> tuple[str, Any]:
    """("exact", (E[r_S], E[r_T])) by enumeration, ("empirical", MonteCarloResult), or
    ("undecided", reason) past the Monte Carlo caps."""
    def build():
        inp = s.inp
        route = inp.ratio_route()
        if route[0] != "monte_carlo":
            if route[0] == "patterns":
                if inp.copies:
                    eS, eT = B.enumerate_ratios(inp.model, inp.N, inp.n or 0, inp.grids(), inp.copies)
                else:
                    e = _energy_law(s)
                    eS, eT = e.E_ratio_S_lean, e.E_ratio_T_lean
            else:
                eS, eT = route[1], route[2]
            w = {"kind": "enumeration", "of": "energy", "method": route[0],
                 "E_ratio_S": fmpq_str(eS), "E_ratio_T": fmpq_str(eT)}
            if route[0] == "patterns":
                w["patterns"] = inp.patterns()
            s.witness(w)
            return "exact", (eS, eT)
        blocks, copies = inp.mc_blocks()
        try:
            r = MC.run(inp.model, blocks, inp.N, inp.n or 0, inp.samples, inp.delta, inp.seed, copies)
        except QKInputError as err:
            return "undecided", str(err)
        s.witness(r.witness())
        return "empirical", r

    return s.memo("ratios", build)


def _N(s: Subject) -> fmpq:
    return fmpq(s.inp.N)


def _v(s: Subject) -> fmpq:
    """σ² (iid) or n·σ_K²·σ_Q² (qk): the variance factor of the moment formulas."""
    if s.inp.model == "iid":
        return _s2(s, "L")
    return s.inp.n * _s2(s, "W_K") * _s2(s, "W_Q")


def _target(s: Subject, which: str) -> fmpq:
    """(N+1)/(2N) or (N−1)/(2N), with Lean's x/0 = 0 (N = 0 gives 0)."""
    N = _N(s)
    return lean_div(N + 1 if which == "S" else N - 1, 2 * N)


def _moment_check(model: str, key: str, factor):
    def fn(s: Subject) -> DeclResult:
        _laws(s, "L" if model == "iid" else "W_K")
        m = _moments(s)
        if m[key] is None:
            return DeclResult(None, reason=m.why[key])
        return DeclResult(m[key] == factor(_N(s)) * _v(s))

    return fn


def _ratio_of_expectations(model: str, which: str):
    def fn(s: Subject) -> DeclResult:
        _laws(s, "L" if model == "iid" else "W_K")
        m = _moments(s)
        key = "E_frobSq_symPart" if which == "S" else "E_frobSq_skewPart"
        for k in (key, "E_frobSq"):
            if m[k] is None:
                return DeclResult(None, reason=m.why[k])
        return DeclResult(lean_div(m[key], m["E_frobSq"]) == _target(s, which))

    return fn


def _expectation_of_ratio(model: str, which: str):
    def fn(s: Subject) -> DeclResult:
        _laws(s, "L" if model == "iid" else "W_K")
        kind, val = _ratios(s)
        t = _target(s, which)
        if kind == "exact":
            return DeclResult(val[0 if which == "S" else 1] == t)
        if kind == "undecided":
            return DeclResult(None, "empirical", reason=val)
        lo, hi = val.interval(which)
        inside = val.contains(which, t)
        verdict = "consistent" if inside else f"inconsistent at level {fmpq_str(val.delta)}"
        return DeclResult(inside, "empirical", sample=val.sample_record(which, t),
                          reason=f"{fmpq_str(t)} {'∈' if inside else '∉'} [{float(lo):.5f}, {float(hi):.5f}], the "
                                 f"Hoeffding interval at confidence {fmpq_str(1 - val.delta)} ({val.samples} samples, "
                                 f"seed {val.seed} from the input): {verdict}; an equality of reals is not decided "
                                 "by a sample")

    return fn


_SQ = lambda N: N * N  # noqa: E731
_SYM = lambda N: N * (N + 1) / 2  # noqa: E731
_SKEW = lambda N: N * (N - 1) / 2  # noqa: E731

# Corollary 1
declaration_check("integral_frobSq_iid", LAW)(_moment_check("iid", "E_frobSq", _SQ))
declaration_check("integral_frobSq_symPart_iid", LAW)(_moment_check("iid", "E_frobSq_symPart", _SYM))
declaration_check("integral_frobSq_skewPart_iid", LAW)(_moment_check("iid", "E_frobSq_skewPart", _SKEW))
declaration_check("integral_frobSq_symPart_div_integral_frobSq_iid", LAW)(_ratio_of_expectations("iid", "S"))
declaration_check("integral_frobSq_skewPart_div_integral_frobSq_iid", LAW)(_ratio_of_expectations("iid", "T"))
declaration_check("integral_frobSq_symPart_div_frobSq_gaussian", LAW)(_expectation_of_ratio("iid", "S"))
declaration_check("integral_frobSq_skewPart_div_frobSq_gaussian", LAW)(_expectation_of_ratio("iid", "T"))
# Corollary 2
declaration_check("integral_frobSq_qk", LAW)(_moment_check("qk", "E_frobSq", _SQ))
declaration_check("integral_trace_mul_self_qk", LAW)(_moment_check("qk", "E_trace_mul_self", lambda N: N))
declaration_check("integral_frobSq_symPart_qk", LAW)(_moment_check("qk", "E_frobSq_symPart", _SYM))
declaration_check("integral_frobSq_skewPart_qk", LAW)(_moment_check("qk", "E_frobSq_skewPart", _SKEW))
declaration_check("integral_frobSq_symPart_div_integral_frobSq_qk", LAW)(_ratio_of_expectations("qk", "S"))
declaration_check("integral_frobSq_skewPart_div_integral_frobSq_qk", LAW)(_ratio_of_expectations("qk", "T"))
# Proposition 5
declaration_check("expected_symmetric_energy_low_rank_qk", LAW)(_expectation_of_ratio("qk", "S"))
declaration_check("expected_skew_energy_low_rank_qk", LAW)(_expectation_of_ratio("qk", "T"))
