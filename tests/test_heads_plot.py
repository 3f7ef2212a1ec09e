"""heads.png is readable for one layer and for many (issue 14, Found 9):
head labels, axes named after what they show, a colour scale that varies."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure

from qkverify.heads import output


@pytest.fixture
def captured(monkeypatch):
    """The figure ``plot`` saves (it closes it afterwards)."""
    figs = []
    real = Figure.savefig

    def grab(self, *a, **k):
        figs.append(self)
        return real(self, *a, **k)

    monkeypatch.setattr(Figure, "savefig", grab)
    return figs


def _rows(n_layers, n_heads, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for l in range(n_layers):
        for h in range(n_heads):
            a, b, c, d = rng.dirichlet([2, 2, 1, 1])
            rows.append({"layer": l, "head": h, "a": a, "b": b, "c": c, "d": d})
    return rows


def _texts(fig):
    return [t.get_text() for ax in fig.axes for ax in [ax, *ax.child_axes] for t in ax.texts]


def test_one_layer(tmp_path, captured):
    rows = _rows(1, 12)
    p = tmp_path / "heads.png"
    output.plot(rows, p, "one layer", 384)
    assert p.stat().st_size > 10_000
    fig = captured[0]
    ax_bars = [ax for ax in fig.axes if ax.get_xlabel() == "head"]
    assert len(ax_bars) == 1
    ax = ax_bars[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(h) for h in range(12)]
    assert "a = ‖T‖²/‖L‖²" in ax.get_ylabel()
    assert len(ax.patches) == 12  # one bar per head, not one tick for 12 points
    heights = sorted(round(bar.get_height(), 12) for bar in ax.patches)
    assert heights == sorted(round(r["a"], 12) for r in rows)
    # the bars' colours carry a: different a, different colour
    colours = {tuple(np.round(bar.get_facecolor(), 6)) for bar in ax.patches}
    assert len(colours) == 12
    # every head labelled on the simplex (these points are spread out)
    labels = {t for t in _texts(fig) if t.startswith("H")}
    assert labels == {f"H{h}" for h in range(12)}
    # the baseline is drawn where Prop 5 puts it: (N-1)/(2N)
    ys = [ln.get_ydata()[0] for ln in ax.get_lines()]
    assert any(abs(y - 383 / 768) < 1e-12 for y in ys)


def test_six_layers_grid(tmp_path, captured):
    rows = _rows(6, 12, seed=1)
    output.plot(rows, tmp_path / "heads.png", "six layers", 384)
    fig = captured[0]
    grid_ax = [ax for ax in fig.axes if ax.get_ylabel() == "layer"]
    assert len(grid_ax) == 1
    ax = grid_ax[0]
    assert ax.get_xlabel() == "head"
    assert [t.get_text() for t in ax.get_yticklabels()] == [str(l) for l in range(6)]
    img = ax.images[0].get_array()
    assert img.shape == (6, 12)
    for r in rows:
        assert img[r["layer"], r["head"]] == pytest.approx(r["a"], abs=0)
    assert sum(1 for t in ax.texts) == 72  # every cell's value written
    # the colour bar spans the values: not one colour
    cbar = [a for a in fig.axes if "skew energy" in a.get_ylabel()]
    lo, hi = cbar[0].get_ylim()
    assert lo <= min(r["a"] for r in rows) and hi >= max(r["a"] for r in rows) and hi - lo > 0.05


def test_crowded_heads_get_an_inset(tmp_path, captured):
    # 40 heads packed near the b corner, as in real models: a magnified inset labels them
    rng = np.random.default_rng(2)
    rows = []
    for h in range(40):
        b, c, d = 0.96 + 0.02 * rng.random(), 0.01 * rng.random(), 0.01 * rng.random()
        a = 0.4 + 0.1 * rng.random()
        t = b + c + d
        rows.append({"layer": h // 10, "head": h % 10, "a": a, "b": (1 - a) * b / t, "c": (1 - a) * c / t,
                     "d": (1 - a) * d / t})
    output.plot(rows, tmp_path / "heads.png", "crowded", 384)
    fig = captured[0]
    titles = [ax.get_title() for ax in fig.axes for ax in [ax, *ax.child_axes]]
    assert any(t.startswith("crowded part, magnified") for t in titles)
    labels = {t for t in _texts(fig) if t.startswith("L") and "H" in t}
    assert len(labels) >= 12  # 40 points in a tiny box: not all fit, many do (18 today)


def test_large_model_stays_legible(tmp_path, captured):
    rows = _rows(30, 9, seed=3)
    output.plot(rows, tmp_path / "heads.png", "30 layers", 576)
    fig = captured[0]
    ax = [ax for ax in fig.axes if ax.get_ylabel() == "layer"][0]
    assert len(ax.get_yticklabels()) == 30
    assert fig.get_size_inches()[1] <= 10.0


def test_antisymmetric_head_is_not_drawn_at_a_corner(tmp_path, captured):
    """a = 1 (L antisymmetric, S = 0): (b, c, d) = 0 has no point on the simplex; the head is
    listed under the triangle, never drawn at the b corner (issue 19, Pictures)."""
    rows = _rows(1, 6)
    rows.append({"layer": 0, "head": 6, "a": 1.0, "a_exact": "1", "b": 0.0, "c": 0.0, "d": 0.0})
    output.plot(rows, tmp_path / "heads.png", "skew", 64)
    fig = captured[0]
    simplex = next(ax for ax in fig.axes if ax.get_title().startswith("(b, c, d)/(1 − a)"))
    pts = np.concatenate([c.get_offsets() for c in simplex.collections if len(c.get_offsets())])
    assert len(pts) == 6  # the six other heads; none at the b corner (0, 0) stands for H6
    assert not np.any(np.all(np.isclose(pts, 0.0), axis=1))
    assert any("a = 1" in t and "H6" in t for t in _texts(fig))
    assert "H6" not in [t.get_text() for t in simplex.texts]  # no point label for it


def test_colour_scale_stays_in_the_unit_interval(tmp_path, captured):
    rows = [{"layer": 0, "head": h, "a": a, "b": (1 - a) / 2, "c": (1 - a) / 2, "d": 0.0}
            for h, a in enumerate([0.02, 0.1, 0.97])]
    output.plot(rows, tmp_path / "heads.png", "range", 8)
    fig = captured[0]
    bar = next(ax for ax in fig.axes if "(skew energy)" in ax.get_ylabel())  # the colour bar
    lo, hi = bar.get_ylim()
    assert 0.0 <= lo and hi <= 1.0


def test_inset_has_no_cartesian_ticks(tmp_path, captured):
    rng = np.random.default_rng(3)
    rows = [{"layer": l, "head": h, "a": 0.4, "b": 0.58 + 0.01 * rng.random(), "c": 0.01 * rng.random(),
             "d": 0.01 * rng.random()} for l in range(3) for h in range(8)]
    output.plot(rows, tmp_path / "heads.png", "crowded", 384)
    fig = captured[0]
    insets = [c for ax in fig.axes for c in ax.child_axes]
    assert insets, "a crowded simplex gets a magnified inset"
    for ins in insets:
        assert list(ins.get_xticks()) == [] and list(ins.get_yticks()) == []
