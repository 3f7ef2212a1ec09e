"""report.html (issue 22): written beside heads.png by `qkverify heads`
(--no-report skips it), self-contained, one marker per head -- checked in
Debian's headless chromium (tests marked ``browser``), with a screenshot
saved under test-artifacts/ for the test log."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from qkverify.cli import main
from qkverify.heads.report import STATUS_ID, model_data, page_size_estimate, render

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(os.environ.get("QKVERIFY_ARTIFACTS", ROOT / "test-artifacts"))
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)


def _npz_model(path: Path, layers=2, heads=3, N=8, n=2, seed=0) -> Path:
    """A TransformerLens .npz with small integer weights (exact arithmetic is instant)."""
    rng = np.random.default_rng(seed)
    WQ = rng.integers(-4, 5, size=(layers, heads, N, n)).astype(np.float32)
    WK = rng.integers(-4, 5, size=(layers, heads, N, n)).astype(np.float32)
    np.savez(path, W_Q=WQ, W_K=WK)
    return path


def _blob(html: str) -> dict:
    m = re.search(r'<script id="qk-data" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(m.group(1))


def test_heads_writes_report_by_default_and_not_with_no_report(tmp_path):
    p = _npz_model(tmp_path / "tiny.npz")
    out = tmp_path / "o"
    assert main(["heads", str(p), "--out", str(out), "--quiet", "--jobs", "1"]) == 0
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<script src=" not in html                  # nothing fetched: plotly is embedded
    d = _blob(html)
    (m,) = d["models"]
    assert m["heads"] == 6 and len(m["cols"]["layer"]) == 6
    assert m["N"] == 8 and m["baseline"] == pytest.approx(7 / 16)
    # the certified values are the table's: a from heads.csv, intervals as strings
    import csv

    rows = list(csv.DictReader(open(out / "heads.csv", encoding="utf-8")))
    assert [round(float(r["a"]), 10) for r in rows] == [round(x, 10) for x in m["cols"]["a"]]
    assert m["cols"]["b_lo"] == [r["b_lo"] for r in rows]
    out2 = tmp_path / "o2"
    assert main(["heads", str(p), "--out", str(out2), "--quiet", "--jobs", "1", "--no-report"]) == 0
    assert not (out2 / "report.html").exists() and (out2 / "heads.csv").exists()


def test_faces_and_hostile_names_are_safe():
    rows = [{"layer": 0, "head": 0, "kv_head": 0, "a": 0.25, "a_exact": "1/4", "b": 0.5, "c": 0.25, "d": 0,
             "face_b0": False, "face_c0": False, "face_d0": True, "n_pos": 1, "n_neg": 1, "b_lo": "0.5",
             "b_hi": "0.5"},
            {"layer": 0, "head": 1, "kv_head": 0, "a": 0.5, "a_exact": "1/2", "face_c0": "undecided",
             "face_d0": "undecided", "face_b0": False, "n_pos": 1, "n_neg": 1}]
    m = model_data(rows, "</script><script>alert(1)</script>", 4, 1)
    assert m["cols"]["faces"] == ["FFT", "F??"]
    assert m["cols"]["a_den"] == [1, 1]
    html = render([m], "t</script>")
    assert html.count("</script>") == html.count("<script")       # no early close from the data
    assert _blob(html)["models"][0]["name"].startswith("</script>")


def test_page_size_of_a_survey():
    """A 9,512-head survey page (14 models): plotly's script plus about 230 bytes per head."""
    size = page_size_estimate(9512)
    base = page_size_estimate(14)
    assert size < 9_000_000
    assert (size - base) / (9512 - 14) < 400


# ---------------------------------------------------------------------------
# the real browser


def _chromium(url: str, tmp: Path, shot: Path | None = None, dump: bool = True) -> tuple[str, str]:
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (`make test` installs it with apt-get as root)")
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={tmp / 'chromium-profile'}", "--window-size=1400,1400", "--virtual-time-budget=10000",
            "--enable-logging=stderr", "--v=0"]
    args += [f"--screenshot={shot}"] if shot else ["--dump-dom"]
    r = subprocess.run(args + [url], capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout, r.stderr


def _page_status(dom: str) -> dict:
    m = re.search(rf'<pre id="{STATUS_ID}"[^>]*>(.*?)</pre>', dom, re.S)
    assert m, "the page never reported its status (its script did not run)"
    import html as _h

    return json.loads(_h.unescape(m.group(1)))


def _console_errors(stderr: str) -> list[str]:
    return [l for l in stderr.splitlines() if "CONSOLE" in l and re.search(r"error|uncaught", l, re.I)]


def _check_in_browser(page: Path, tmp: Path, heads: int, name: str, fragment: str = "") -> Path:
    url = page.resolve().as_uri() + fragment
    dom, err = _chromium(url, tmp)
    st = _page_status(dom)
    assert st["errors"] == [] and _console_errors(err) == []
    assert st["shown"] == heads and st["markers"] == heads, st      # one drawn marker per head
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / f"{name}.png"
    _chromium(url, tmp, shot)
    assert shot.stat().st_size > 20_000
    print(f"screenshot: {shot}")
    return shot


@pytest.mark.browser
def test_report_in_headless_chromium(tmp_path):
    p = _npz_model(tmp_path / "tiny.npz", layers=3, heads=4)
    out = tmp_path / "o"
    assert main(["heads", str(p), "--out", str(out), "--quiet", "--jobs", "1"]) == 0
    _check_in_browser(out / "report.html", tmp_path, 12, "report-one-model")
    # the layer filter: layer 1 only
    dom, _ = _chromium((out / "report.html").resolve().as_uri() + "#layer=1", tmp_path)
    assert _page_status(dom)["markers"] == 4
    # the table lists every head, each with a link to its certificate that exists
    links = re.findall(r'<a href="(L\d\dH\d\d\.json)">', dom)
    assert len(links) == 4 and all((out / h).is_file() for h in links)


@pytest.mark.browser
def test_survey_page_has_a_model_selector(tmp_path):
    a = _npz_model(tmp_path / "alpha.npz", layers=2, heads=2, seed=1)
    b = _npz_model(tmp_path / "beta.npz", layers=2, heads=3, seed=2)
    out = tmp_path / "survey"
    assert main(["heads", str(a), str(b), "--out", str(out), "--quiet", "--jobs", "1"]) == 0
    page = out / "report.html"
    d = _blob(page.read_text(encoding="utf-8"))
    assert [m["heads"] for m in d["models"]] == [4, 6]
    assert d["models"][1]["cert_prefix"] == "beta/"
    _check_in_browser(page, tmp_path, 4, "report-survey-model0")
    dom, _ = _chromium(page.resolve().as_uri() + "#model=1", tmp_path)
    assert _page_status(dom)["markers"] == 6
    assert '<a href="beta/L00H00.json">' in dom and (out / "beta" / "L00H00.json").is_file()


@pytest.mark.browser
def test_compare_section_in_headless_chromium(tmp_path):
    from qkverify.compare.authors import model_rows, write_table
    from qkverify.models import load_model

    p = _npz_model(tmp_path / "tiny.npz", layers=2, heads=3)
    rows = model_rows(load_model(str(p)), name="tiny")
    rows[0]["a"] += 1e-3                               # a planted row
    t = tmp_path / "t.csv"
    write_table(rows, t)
    out = tmp_path / "cmp"
    assert main(["compare", str(t), "--model", str(p), "--out", str(out), "--quiet"]) == 1
    dom, err = _chromium((out / "report.html").resolve().as_uri(), tmp_path)
    st = _page_status(dom)
    assert st["errors"] == [] and _console_errors(err) == [] and st["markers"] == 6
    assert "Audit of a published table" in dom and "contradicts" in dom
    _check_in_browser(out / "report.html", tmp_path, 6, "report-compare")
