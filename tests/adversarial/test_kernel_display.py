"""Issue 18, class 7: ``display`` holds labels and float figures only.  A head certificate
used to carry ``display.row.a_exact`` and ``symmetric_energy_exact``: exact values the kernel
never read, so an edited one left the certificate valid.  The schema now refuses an exact value
there (a fraction, or a key naming one); the exact values live in the records (profileA), which
the kernel re-derives."""

from __future__ import annotations

import pytest

import forge as F
import kernel_fixtures as K


@pytest.fixture
def weights(tmp_path):
    return tmp_path, K.weights_certificate(tmp_path)


@pytest.mark.parametrize("display", [
    {"label": "Theorem 3", "row": {"a": 0.5, "a_exact": "1/2"}},                   # the field
    {"label": "Theorem 3", "row": {"symmetric_energy_exact": "1/2"}},
    {"label": "Theorem 3", "row": {"a": 0.5, "random_baseline": "385/768"}},       # a fraction under any name
    {"label": "Theorem 3", "values": [{"signature": "1 / 1"}]},
    {"label": "Theorem 3", "Exact": 1},
])
def test_an_exact_value_in_display_is_refused(weights, display):
    d, cert = weights
    out = F.verify(F.edit(cert, ("display",), display), d)
    assert (out.status, out.check) == ("invalid", "schema"), out


def test_labels_and_float_figures_are_display(weights):
    d, cert = weights
    display = {"label": "Theorem 3", "model": "hand-made", "row": {"a": 0.5, "b_lo": "0.49", "notes": "", "n": 1},
               "figures": [0.25, None, True]}
    assert F.verify(F.edit(cert, ("display",), display), d).status == "valid"


def test_the_heads_row_keeps_its_exact_values_out_of_display():
    from qkverify.heads.certificate import display_row, exact_fields, with_exact

    row = {"N": 3, "a": 0.25, "a_exact": "1/4", "symmetric_energy": 0.75, "symmetric_energy_exact": "3/4",
           "random_baseline": "2/3", "b": 0.5}
    shown = display_row(row)
    assert "a_exact" not in shown and "random_baseline" not in shown and shown["b"] == 0.5
    prof = {"declarations": [{"check": "profileA", "value": {"exact": "1/4"}}]}
    # a resumed head gets them back from the profileA record: 1 − 1/4 = 3/4, (N + 1)/(2N) = 4/6 = 2/3
    assert with_exact(shown, exact_fields(shown, prof)) == row
