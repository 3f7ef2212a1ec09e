"""Break-it review of report.html (issue 22) on degenerate heads, in headless chromium: heads on the
simplex's corners and edges (exactly decided faces) are drawn whole, a head with L = 0 is not
called 'no face decided (c > 0 and d > 0, certified)' nor 'undecided', and the offline page offers
no button that uploads the data (plotly.js 3's 'Share chart...' posts to Plotly Cloud)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from qkverify.cli import main
from test_report import _blob, _chromium, _page_status


def _degenerate(path):
    """A TransformerLens .npz of one layer, six heads (N = 8, n = 2), each pinned by hand:
    H0 W_K = W_Q: L = W_QᵀW_Q ⪰ 0, so a = 0 and π = (0, 0, 1, 0): the c corner;
    H1 W_K = −W_Q: π = (0, 0, 0, 1), the d corner;
    H2 W_Q = 0: L = 0, π(0) = (0, 0, 0, 0) by Lean's x/0 = 0, no point of the simplex;
    H3 W_Q = e1ᵀ, W_K = 2e1ᵀ + e2ᵀ ... (rows): generic; H4, H5 generic."""
    rng = np.random.default_rng(3)
    WQ = rng.integers(-4, 5, size=(1, 6, 8, 2)).astype(np.float32)
    WK = rng.integers(-4, 5, size=(1, 6, 8, 2)).astype(np.float32)
    WK[0, 0] = WQ[0, 0]
    WK[0, 1] = -WQ[0, 1]
    WQ[0, 2] = 0
    np.savez(path, W_Q=WQ, W_K=WK)
    return path


@pytest.fixture(scope="module")
def deg_report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("deg")
    p = _degenerate(tmp / "deg.npz")
    out = tmp / "o"
    assert main(["heads", str(p), "--out", str(out), "--quiet", "--jobs", "1"]) == 0
    return tmp, out


def test_zero_head_is_marked_as_such_in_the_data(deg_report):
    _, out = deg_report
    m = _blob((out / "report.html").read_text(encoding="utf-8"))["models"][0]
    faces = m["cols"]["faces"]
    assert faces[2] == "ZZZ"                                   # L = 0
    assert faces[0][0] == "T" and faces[0][2] == "T"           # b = 0, d = 0 exactly (S ⪰ 0)
    cert = json.loads((out / "L00H02.profile.json").read_text(encoding="utf-8"))
    vals = {d["check"]: d.get("value") for d in cert["declarations"]}
    assert all(vals[k] == {"exact": "0"} for k in ("profileA", "profileB", "profileC", "profileD"))


@pytest.mark.browser
def test_degenerate_heads_in_headless_chromium(deg_report):
    tmp, out = deg_report
    url = (out / "report.html").resolve().as_uri()
    dom, _ = _chromium(url, tmp)
    st = _page_status(dom)
    assert st["errors"] == []
    # five heads have a point on the simplex, the L = 0 head has none and is said so
    assert st["shown"] == 6 and st["zero"] == 1 and st["markers"] == 5, st
    assert "not drawn: L = 0" in dom
    # its table row: Lean's exact zeros, as in its certificate; never 'undecided'
    row = re.search(r"<tr><td>0</td><td>2</td><td>2</td>(.*?)</tr>", dom).group(1)
    assert "undecided" not in row and "L = 0" in row and row.count('class="exact">0<') == 4, row
    # markers on the corners are not clipped by the triangle (cliponaxis)
    front = re.search(r'<g class="toplevel frontplot"[^>]*>', dom).group(0)
    assert "clip-path" not in front, front
    # nothing on the page sends the data anywhere
    buttons = re.findall(r'data-title="([^"]*)"', dom)
    assert "Download plot as a PNG" in buttons and not any("Share" in b or "Edit" in b for b in buttons), buttons


@pytest.mark.browser
def test_degenerate_screenshot(deg_report):
    from test_report import ARTIFACTS

    tmp, out = deg_report
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "report-degenerate-heads.png"
    _chromium((out / "report.html").resolve().as_uri(), tmp, shot)
    assert shot.stat().st_size > 20_000
    print(f"screenshot: {shot}")
