"""Issue 18, class 2: existential conclusions.  ``holds`` needs a witness the kernel checks;
``fails`` needs a non-existence argument the kernel checks from facts; a witness offered that
does not work is a false statement of the certificate.

profileD_eq_zero_decomp_commute on L = diag(3, −1): S = L, α = (3, 0), β = (1, 0), so d = 0 and
c = (3 − 1)²/10 = 2/5, c·‖L‖² = 4.  H = diag(1, −1), P = diag(2, 0) works (‖P‖² = 4).  The old
kernel accepted "fails" from H = diag(2, −2), P = diag(1, 1): a decomposition (S = H + P, spec H
= {±2}, P ⪰ 0, all commuting) but ‖P‖² = 2 ≠ 4 -- it judged the ∃ on the certificate's own
witness."""

from __future__ import annotations

from flint import fmpq_mat

import forge as F

T4 = "profile_sum_eq_one"
NAME = F.A + "profileD_eq_zero_decomp_commute"


def _cert(L, conclusion, hyps, fiber=None):
    from qkverify.claims.common import spectrum_witness

    ws = [spectrum_witness(fmpq_mat(L), "S")]  # S = L (symmetric)
    if fiber is not None:
        ws.append({"kind": "fiber", "of": "d", "H": fiber[0], "P": fiber[1]})
    rec = F.record(NAME, conclusion, "exact", hyps)
    if not hyps["h"]:
        rec["dropped"] = ["h"]
    return F.certificate(T4, {"kind": "matrix", "L": [[str(x) for x in r] for r in L]}, ws, [rec])


D31 = [[3, 0], [0, -1]]


def test_fails_from_a_witness_that_does_not_work_is_invalid():
    forged = _cert(D31, "fails", {"hL": True, "h": True}, ([["2", "0"], ["0", "-2"]], [["1", "0"], ["0", "1"]]))
    out = F.verify(forged)
    assert out.status == "invalid" and "does not witness" in out.reason, out


def test_fails_with_no_witness_and_d_zero_is_not_valid():
    out = F.verify(_cert(D31, "fails", {"hL": True, "h": True}))
    assert out.status == "undecided", out


def test_holds_from_a_working_witness_is_valid():
    out = F.verify(_cert(D31, "holds", {"hL": True, "h": True}, ([["1", "0"], ["0", "-1"]], [["2", "0"], ["0", "0"]])))
    assert out.status == "valid", out


def test_fails_when_d_is_not_zero_is_valid_without_a_witness():
    # diag(1, −3): α = (1, 0), β = (3, 0), d = 4/10 ≠ 0: h is false (dropped), and no H, P exists
    out = F.verify(_cert([[1, 0], [0, -3]], "fails", {"hL": True, "h": False}))
    assert out.status == "valid" and out.verdict == "fails", out


def test_holds_claimed_when_d_is_not_zero_is_invalid():
    # a "witness" for diag(1, −3): S = H + P with H = diag(1, −1), P = diag(0, −2) is not P ⪰ 0
    out = F.verify(_cert([[1, 0], [0, -3]], "holds", {"hL": True, "h": False},
                         ([["1", "0"], ["0", "-1"]], [["0", "0"], ["0", "-2"]])))
    assert out.status == "invalid", out
