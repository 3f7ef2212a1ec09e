"""Issue 18, class 4: a real value stated as "the root of f in [lo, hi]" is accepted only with an
isolation proof (a sign change and a root count of 1 on the interval); the kernel never assumes
uniqueness.  x² − 32x + 60 = (x − 2)(x − 30) has two roots in [0, 100]."""

from __future__ import annotations

import forge as F

L = {"kind": "matrix", "L": [["1", "1"], ["0", "0"]]}   # frobSq L = 1 + 1 = 2


def frob_value(value: dict) -> dict:
    return F.certificate("symPart", L, [], [F.record(F.A + "frobSq", "computed", value=value)])


def test_a_root_of_a_polynomial_with_two_roots_in_the_interval_is_invalid():
    out = F.verify(frob_value({"root": {"poly": ["60", "-32", "1"], "lo": "0", "hi": "100"}}))
    assert out.status == "invalid" and "isolate" in out.reason, out


def test_an_isolating_interval_is_valid_and_the_wrong_root_invalid():
    assert F.verify(frob_value({"root": {"poly": ["60", "-32", "1"], "lo": "0", "hi": "10"}})).status == "valid"
    assert F.verify(frob_value({"root": {"poly": ["60", "-32", "1"], "lo": "20", "hi": "40"}})).status == "invalid"
    assert F.verify(frob_value({"exact": "2"})).status == "valid"


def test_an_endpoint_root_and_a_double_root_do_not_isolate():
    # (x − 2)(x − 3) on [2, 3]: no sign change (both ends are roots); (x − 2)² on [0, 4]: no sign change
    for poly, lo, hi in ((["6", "-5", "1"], "2", "3"), (["4", "-4", "1"], "0", "4")):
        out = F.verify(frob_value({"root": {"poly": poly, "lo": lo, "hi": hi}}))
        assert out.status == "invalid", (poly, out)
