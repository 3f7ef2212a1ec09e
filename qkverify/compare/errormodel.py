"""An explicit float error model of the authors' survey pipeline.

The pipeline (``scripts/extract_qk_bilinear_db.py`` and
``scripts/head_statistics.py`` of the paper's repository) does, per head:

1. in float64, an orthonormal basis R of im(W_Kᵀ) + im(W_Qᵀ) (unpivoted QR
   of the N × 2n matrix [W_Kᵀ W_Qᵀ]) and F = (W_K R)ᵀ(W_Q R), m × m with
   m = ``dim`` = 2n;
2. stores F as **float32**: F̃ = F + E, each entry rounded to nearest, so
   |E_ij| ≤ u₃₂·|F_ij| and ‖E‖₂ ≤ ‖E‖_F ≤ u₃₂·‖L‖_F (u₃₂ = 2⁻²⁴);
3. reads F̃ back as float64, forms S̃ = ½(F̃ + F̃ᵀ), T̃ = ½(F̃ − F̃ᵀ) and calls
   ``eigvalsh(S̃)``, which is backward stable: the computed eigenvalues are
   the exact eigenvalues of S̃ + ΔS with ‖ΔS‖₂ ≤ c·m·u₆₄·‖S̃‖₂ (u₆₄ = 2⁻⁵³);
4. counts eigenvalues beyond the cut 1e-9·max|λ̃| (n_pos, n_neg, n_zero) and
   builds the lobes α, β from *all* positive / negative eigenvalues (no cut),
   then a, b, c, d, 𝒫, ρ, … as sums of squares divided by ‖F̃‖²_F.

**Eigenvalues.** By Weyl's inequality every sorted eigenvalue the pipeline
sees lies within δ of the true one, δ = ‖E_sym‖₂ + ‖ΔS‖₂, and relative to
‖L‖_F

    δ_rel = σ·(u₃₂ + c·m·u₆₄)                                  (δ = δ_rel·‖L‖_F)

with c = :data:`C_EIG` and a safety factor σ = :data:`SAFETY` that absorbs
the float64 stage 1 (QR and products: c'·N·u₆₄·‖W_K‖‖W_Q‖/‖L‖, below 1 % of
u₃₂ unless the factors cancel by more than 10⁵ — ``compare --model`` checks
this on the weights), second-order terms and the summations.  The map from a
spectrum to its sorted positive (negative) parts is 1-Lipschitz, so
|α̃_j − α_j| ≤ δ, |β̃_j − β_j| ≤ δ and u_j = α_j − β_j moves by at most 2δ.

**Consequences used row by row** (all normalised by ‖L‖²_F):

* a face c = 0 (every u_j ≤ 0) and a value c̃ ≤ R = 4·m·δ_rel² are
  indistinguishable: a computed c̃ = 0 only says c ≤ R, and a computed
  0 < c̃ ≤ R is compatible with c = 0 (:meth:`ErrorModel.resolution`).  A
  c̃ > R proves c > 0.  Likewise d.  Deciding c = 0 itself needs the margin
  min_j(β_j − α_j) > 2δ, which the table does not carry;
* |c̃ − c| ≤ 4δ_rel·√(m·c̃) + 4·m·δ_rel² (:meth:`ErrorModel.err_cd`), from
  |x₊² − y₊²| ≤ |x − y|·(x₊ + y₊) and Cauchy–Schwarz;
* |b̃ − b| ≤ 2δ_rel·√(2·m·(1 − a)) + 2·m·δ_rel² (:meth:`ErrorModel.err_b`);
  b, c, d also get 3ε times their value for the denominator ‖F̃‖²;
* |ã − a| ≤ 2ε(√a + a) + 4ε², ε = σ·u₃₂ (:meth:`ErrorModel.err_a`): ã is
  ‖T̃‖²/‖F̃‖² with both perturbed by at most ε relatively;
* c vs d is decided only when |c̃ − d̃| > err_cd(c̃) + err_cd(d̃);
* the counts use the cut 1e-9·max|λ̃|, far below δ (δ ≥ u₃₂·‖L‖_F ≥
  6·10⁻⁸·max|λ|): an eigenvalue with |λ| ≤ δ + cut may be counted on either
  side or as zero, so counts other than (m/2, m/2, 0) are explained by the
  error model only by a (nearly) singular head.

**Identities.** Lemma 5, Lemma 4, Theorem 4 and Lemma 2 hold exactly for the
*stored* matrix F̃ too (they hold for every real matrix, every list of
reals), so those checks see only float64 arithmetic on F̃: the backward
error of ``eigvalsh`` (‖S̃‖²_F vs Σλ̃²: relative 2c·m·u₆₄) and the sums of
m² squares (m²·u₆₄ each, naive bound).  Their tolerance is
:meth:`ErrorModel.tau_identity`; a definition recomputed from other columns
of the same row (pairing_gap = bound − pairing, the bound from ρ, balance)
gets a few ulps (:meth:`ErrorModel.tau_definition`).

Everything here is float arithmetic *about* floats: it decides nothing about
a head; it says what a float table could have decided.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: float32 unit roundoff (storage of the restricted form)
U32 = 2.0 ** -24
#: float64 unit roundoff (every computation)
U64 = 2.0 ** -53
#: constant c of eigvalsh's backward error c·m·u₆₄·‖S‖₂ (LAPACK's p(m) taken as c·m)
C_EIG = 4.0
#: safety factor σ on every bound (float64 stage 1, second-order terms, summations)
SAFETY = 2.0
#: the pipeline's relative eigenvalue cut for the counts (older scripts: 1e-7)
CUT = 1e-9


@dataclass(frozen=True)
class ErrorModel:
    """The float error model of the authors' pipeline (module docstring).

    u_store -- unit roundoff of the stored restricted form (float32: 2⁻²⁴)
    u_work  -- unit roundoff of the computations (float64: 2⁻⁵³)
    c_eig   -- eigvalsh backward-error constant c (‖ΔS‖₂ ≤ c·m·u·‖S‖₂)
    safety  -- σ, multiplies every bound
    cut     -- relative eigenvalue cut of the counts

    >>> em = ErrorModel()
    >>> f"{em.delta_rel(128):.3e}"
    '1.192e-07'
    >>> f"{em.resolution(128):.2e}"
    '7.28e-12'
    """

    u_store: float = U32
    u_work: float = U64
    c_eig: float = C_EIG
    safety: float = SAFETY
    cut: float = CUT

    def eps(self) -> float:
        """ε: relative Frobenius error of the stored form, ‖F̃ − F‖_F ≤ ε‖L‖_F."""
        return self.safety * self.u_store

    def delta_rel(self, m: int) -> float:
        """δ/‖L‖_F: how far any eigenvalue of S the pipeline sees may lie from the true one."""
        return self.safety * (self.u_store + self.c_eig * m * self.u_work)

    def resolution(self, m: int) -> float:
        """R = 4·m·δ_rel²: a c (or d) at most R cannot be told from 0 by the pipeline."""
        return 4.0 * m * self.delta_rel(m) ** 2

    def err_a(self, a: float) -> float:
        """Bound on |ã − a| (stored-form rounding of ‖T‖² and ‖L‖²)."""
        e = self.eps()
        a = min(max(a, 0.0), 1.0)
        return 2.0 * e * (math.sqrt(a) + a) + 4.0 * e * e

    def err_b(self, s: float, m: int) -> float:
        """Bound on |b̃ − b| for a head of symmetric energy s = 1 − a."""
        d = self.delta_rel(m)
        # the last term: the denominator ‖F̃‖² is itself within 2ε + ε² of ‖L‖²
        return 2.0 * d * math.sqrt(2.0 * m * max(s, 0.0)) + 2.0 * m * d * d + 3.0 * self.eps() * max(s, 0.0)

    def err_cd(self, x: float, m: int) -> float:
        """Bound on |c̃ − c| given the computed c̃ = x (the same for d)."""
        d = self.delta_rel(m)
        return 4.0 * d * math.sqrt(m * max(x, 0.0)) + 4.0 * m * d * d + 3.0 * self.eps() * max(x, 0.0)

    def tau_identity(self, m: int) -> float:
        """Tolerance of an identity the theorems give for the stored form
        (sums of m² squares, eigvalsh's backward error)."""
        return self.safety * self.u_work * (2.0 * self.c_eig * m + 4.0 * m * m + 16.0)

    def tau_definition(self, scale: float = 1.0) -> float:
        """Tolerance of a column recomputed from other columns of its row
        by the same float formula (a few ulps of ``scale``)."""
        return self.safety * 8.0 * self.u_work * max(abs(scale), 1.0)

    def describe(self) -> str:
        """Two sentences (each under 100 characters) for the terminal and the report."""
        return (f"error model: delta = {self.safety:g}·(2^-24 + {self.c_eig:g}·m·2^-53)·‖L‖ (float32 storage, "
                f"eigvalsh), counts cut {self.cut:g}·max|λ|.\n"
                f"A face c = 0 or d = 0 is below the resolution R = 4·m·delta² (m = 128: "
                f"{self.resolution(128):.1e}).")
