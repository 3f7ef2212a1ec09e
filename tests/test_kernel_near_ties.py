"""False rejects on near ties (issue 18): the profile of a weights head whose α_j and β_j nearly
coincide.  The kernel bounds c, d by the exact endpoints of the cells (as the producer states them),
not by squaring an Arb ball of α_j − β_j, which loses 2r² at its low end; a stated enclosure it
cannot confirm is undecided, one disjoint from its own enclosure invalid."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from flint import arb, fmpq

from qkverify.cli import main
from qkverify.kernel.algebra import Box
from qkverify.kernel.check import verify_file
from qkverify.kernel.rules.definition6 import _term_bounds

ROOT = Path(__file__).resolve().parents[1]


def _survey():
    spec = importlib.util.spec_from_file_location("survey_heads", ROOT / "bench" / "survey_heads.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_square_of_a_difference_of_cells_is_bounded_by_its_exact_ends():
    """x ∈ [3, 4], y ∈ [1, 2]: (x − y)² ∈ [1, 9] exactly (by hand); Arb's square of the ball
    x − y = 2 ± 1 reaches below 0 -- the loss that rejected true enclosures."""
    x, y = Box(fmpq(3), fmpq(4), True), Box(fmpq(1), fmpq(2), True)
    assert _term_bounds("c", [(x, y, 1)]) == (fmpq(1), fmpq(9))
    assert _term_bounds("d", [(y, x, 1)]) == (fmpq(1), fmpq(9))
    assert _term_bounds("b", [(x, y, 2)]) == (fmpq(6), fmpq(16))
    assert ((arb(2, 1)) ** 2).lower() < 1


@pytest.fixture(scope="module")
def clustered(tmp_path_factory):
    """speed's synthetic clustered heads (768 × 64): heads 3 and 7 have α_j − β_j ~ 1e-8 relative."""
    d = tmp_path_factory.mktemp("clustered")
    _survey().write_model(d / "model", 768, 64, 1, 8)
    assert main(["heads", str(d / "model"), "--heads", "3,7", "--out", str(d / "o"), "--jobs", "1",
                 "--no-plot", "--no-report", "--quiet"]) == 0
    return d / "o"


def test_every_certificate_the_producer_writes_on_near_ties_is_valid(clustered):
    files = sorted(p for p in clustered.glob("L*.json"))
    assert {p.name for p in files} >= {"L00H03.profile.json", "L00H07.profile.json"}
    bad = [(p.name, o.status, o.reason) for p in files for o in [verify_file(p)] if o.status != "valid"]
    assert not bad, bad


def _edit_c(src: Path, dst: Path, lo: str, hi: str) -> Path:
    c = json.loads(src.read_text())
    for r in c["declarations"]:
        if r["check"] == "profileC":
            r["value"] = {"enclosure": [lo, hi]}
        if r["check"] == "profile":
            r["value"]["list"][2] = {"enclosure": [lo, hi]}
    dst.write_text(json.dumps(c))
    return dst


def test_a_stated_enclosure_is_undecided_unless_disjoint_from_the_kernels(clustered):
    from qkverify.kernel.jsonio import dec

    src = clustered / "L00H03.profile.json"
    stated = next(r for r in json.loads(src.read_text())["declarations"] if r["check"] == "profileC")
    lo, hi = (dec(v) for v in stated["value"]["enclosure"])
    w = hi - lo
    edited = clustered.parent / "edited"   # beside o/: the path hint ../model/ still finds the weights
    edited.mkdir(exist_ok=True)
    as_str = lambda v: format(float(v), ".15e")  # noqa: E731
    # shifted wholly above the kernel's enclosure: a false statement, invalid
    out = verify_file(_edit_c(src, edited / "above.json", as_str(hi + 10 * w), as_str(hi + 20 * w)))
    assert out.status == "invalid" and "profileC" in out.check, out
    # the upper tenth of the stated enclosure: it meets the kernel's, which does not lie inside it
    out = verify_file(_edit_c(src, edited / "narrow.json", as_str(hi - w / 10), as_str(hi)))
    assert out.status == "undecided", out
