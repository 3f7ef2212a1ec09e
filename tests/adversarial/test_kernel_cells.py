"""Issue 18, class 1: cell boundaries.  A head whose S has eigenvalues 4, 1, −4, −4 has
profile (40/89, 40/89, 0, 9/89); cells that put ν = 2 (λ = 1) in [0, 8) and ν = −8 in
[−8, 0) made the old kernel count ν = 8 (the excluded end of [0, 8)) as a common root of the
cell of 2 and the mirror of the cell of −8, declare α₂ = 1 equal to β₂ = 4 and accept d = 0.

Now one half-open rule holds everywhere (kernel/derive.py cell_cmp): the two cells meet, the
kernel shows exactly that they hold different values (no root of gcd(P(x), P(−x)) where they
meet) and, as it never refines a witness, answers that these cells do not order α₂ and β₂ --
undecided, never valid.  With cells that separate them, d = 0 is shown false: invalid.

The head, by hand: two 1-dimensional heads in orthogonal coordinate planes,
W_K = [[2, 2, 0, 0], [0, 0, 1, 2]], W_Q = [[2, −2, 0, 0], [0, 0, 1, −2]]:
L = k₁q₁ᵀ ⊕ k₂q₂ᵀ, symPart(k qᵀ) has eigenvalues (k·q ± |k||q|)/2, so block 1 (k·q = 0,
|k||q| = 8) gives ±4 and block 2 (k·q = −3, |k||q| = 5) gives 1 and −4; ‖L‖² = 64 + 25 = 89,
‖S‖² = 49, ‖T‖² = 40.  α = (4, 1, 0, 0), β = (4, 4, 0, 0): a = 40/89, b = 2(16 + 4)/89 = 40/89,
c = 0, d = (4 − 1)²/89 = 9/89.  ν = eigenvalues of J·Z·Zᵀ (Z = M, e = 0) = 2λ = 8, 2, −8, −8."""

from __future__ import annotations

import pytest

import forge as F

WK = [[2.0, 2.0, 0.0, 0.0], [0.0, 0.0, 1.0, 2.0]]
WQ = [[2.0, -2.0, 0.0, 0.0], [0.0, 0.0, 1.0, -2.0]]
P = "profile"


def cells(*cs, g=3) -> dict:
    return {"kind": "cells", "of": "JZZt", "scale_exponent": 0, "grid_exponent": g, "zero": 0, "cells": list(cs)}


#: the forger's cells: [−8, 0) twice (ν = −8, −8), [0, 8) (ν = 2), [8, 16) (ν = 8) -- all true counts
COARSE = cells([-1, 0, 2], [0, 0, 1], [1, 0, 1])
#: cells that separate: [−8, −4) twice, [2, 4), [8, 12)
FINE = cells([-2, 1, 2], [1, 2, 1], [2, 1, 1])


@pytest.fixture
def head(tmp_path):
    return tmp_path, F.weights_input(tmp_path, WQ, WK)


def test_d_stated_zero_on_coarse_cells_is_never_valid(head):
    d, inp = head
    forged = F.certificate(P, inp, [COARSE], [F.record(F.A + "profileD", "computed", "certified", value={"exact": "0"})])
    out = F.verify(forged, d)
    assert out.status == "undecided" and "does not order them" in out.reason, out


def test_profile_40_89_wide_b_0_0_is_never_valid(head):
    d, inp = head
    value = {"list": [{"exact": "40/89"}, {"enclosure": ["-2", "2"]}, {"exact": "0"}, {"exact": "0"}]}
    forged = F.certificate(P, inp, [COARSE], [F.record(F.MT + "profile", "computed", "certified", value=value)])
    assert F.verify(forged, d).status == "undecided"


def test_the_same_claims_on_separating_cells_are_invalid_and_the_true_ones_valid(head):
    d, inp = head
    zero = F.certificate(P, inp, [FINE], [F.record(F.A + "profileD", "computed", "certified", value={"exact": "0"})])
    out = F.verify(zero, d)
    assert out.status == "invalid" and "value" in out.reason, out
    # the truth: a = 40/89 exactly, c = 0 exactly, d = 9/89 inside an enclosure (the cells give balls)
    true = F.certificate(P, inp, [FINE], [
        F.record(F.A + "profileA", "computed", value={"exact": "40/89"}),
        F.record(F.A + "profileC", "computed", evidence="certified", value={"exact": "0"}),  # α₂ < β₂ from the cells
        F.record(F.A + "profileD", "computed", evidence="certified", value={"enclosure": ["-1", "1"]})])
    out = F.verify(true, d)
    assert out.status == "valid", out


def test_a_cell_straddling_zero_is_never_valid(head):
    d, inp = head
    # [−8, −4) ×2, [−4, 4) holding ν = 2 (sign unknown from the cell), [8, 12)
    w = cells([-2, 1, 2], [-1, 1, 1], [2, 1, 1])
    forged = F.certificate(P, inp, [w], [F.record(F.A + "profileC", "computed", value={"exact": "0"})])
    assert F.verify(forged, d).status != "valid"


def test_equal_values_in_touching_cells_are_equal_and_different_ones_never():
    """The kernel's rule on its own: [8, 16) and the mirror (0, 8] of [−8, 0) meet only at 8,
    where ±8 are roots: equal.  [0, 8) and (0, 8] meet on (0, 8) where no ±pair lies: never equal."""
    from flint import fmpq, fmpz_poly

    from qkverify.kernel.rules.definition6 import cell_cmp
    from qkverify.kernel.jsonio import Undecided

    Pn = fmpz_poly([-8, 1]) * fmpz_poly([-2, 1]) * fmpz_poly([8, 1]) ** 2
    assert cell_cmp((fmpq(8), fmpq(16), 1, True), (fmpq(-8), fmpq(0), -1, True), Pn) == 0
    with pytest.raises(Undecided):
        cell_cmp((fmpq(0), fmpq(8), 1, True), (fmpq(-8), fmpq(0), -1, True), Pn)
    # a cell holding two distinct values, 8 and 9, meets the mirror of [−8, 0) at 8, where ±8 are
    # roots: u may be 9, so never "equal"
    P2 = fmpz_poly([-8, 1]) * fmpz_poly([-9, 1]) * fmpz_poly([8, 1])
    with pytest.raises(Undecided):
        cell_cmp((fmpq(8), fmpq(16), 1, False), (fmpq(-8), fmpq(0), -1, True), P2)


def test_a_cell_may_hold_two_distinct_eigenvalues_and_counts_still_bind():
    """cells_of: a cell of count 2 holding two distinct roots is a true statement (the count with
    multiplicity on [lo, hi) is 2) and is recorded as not one value; a count the cell does not
    hold is invalid."""
    from flint import fmpq, fmpz_mat

    from qkverify.kernel.jsonio import Invalid
    from qkverify.kernel.witnesses import cells_of

    X = fmpz_mat([[9, 0, 0], [0, 10, 0], [0, 0, -8]])      # ν = 9, 10, −8: grid 2^3
    ok = cells_of({"zero": 0, "grid_exponent": 3, "cells": [[-1, 0, 1], [1, 0, 2]]}, X)
    assert [b.cell[3] for b in ok.boxes] == [True, False, False]
    assert (ok.boxes[1].lo, ok.boxes[1].hi) == (fmpq(8), fmpq(16))
    with pytest.raises(Invalid):
        cells_of({"zero": 0, "grid_exponent": 3, "cells": [[-1, 0, 2], [1, 0, 1]]}, X)
