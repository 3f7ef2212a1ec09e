"""Tables (CSV, JSON), per-head certificates and the summary picture.

Columns follow the field's names (SPEC §2–§3): ``model, layer, head,
kv_head, n_pos, n_neg, n_zero, a, b, c, d, symmetric_energy, pairing, rho,
pairing_bound, pairing_gap`` and, for every value that is an enclosure
rather than an exact number, ``<name>_lo`` / ``<name>_hi`` (outward-rounded
decimals); ``a`` and ``symmetric_energy`` are exact (``*_exact`` holds the
rational ``p/q`` in the JSON table), the float columns are display values.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..io.outputs import atomic_savefig, atomic_write_csv, atomic_write_json

COLUMNS = [
    "model", "layer", "head", "kv_head", "d_model", "d_head", "rank_M", "n_pos", "n_neg", "n_zero",
    "a", "a_exact", "b", "b_lo", "b_hi", "c", "c_lo", "c_hi", "d", "d_lo", "d_hi",
    "face_b0", "face_c0", "face_d0",
    "symmetric_energy", "symmetric_energy_exact", "random_baseline", "random_baseline_exact",
    "energy_above_baseline",
    "pairing", "pairing_lo", "pairing_hi", "rho", "rho_lo", "rho_hi",
    "pairing_bound", "pairing_bound_lo", "pairing_bound_hi",
    "pairing_gap", "pairing_gap_lo", "pairing_gap_hi",
    "lambda_max", "lambda_min", "signature_method", "direct_NxN", "route", "enclosure_rel_width_max",
    "float64_n_pos", "float64_n_neg", "float64_n_zero", "float64_a", "float64_b", "float64_c", "float64_d",
    "float64_pairing", "float64_rho", "float64_min_abs_eig_rel", "float64_max_profile_dev",
    "float64_disagrees", "float64_flags", "notes",
    # from the loader (qkverify.models HeadRecord.table_fields): what L = W_Kᵀ W_Q is for this model
    "score", "positional", "bias_const", "bias_lin_key_norm", "bias_lin_query_norm",
]
#: output column -> key of the row the certifier returns (N and n inside the code, the field's
#: names d_model and d_head in every file and on the terminal)
ROW_KEY = {"d_model": "N", "d_head": "n"}
# timings are printed by the command, not stored: the table is reproducible byte for byte
JSON_EXTRA = ["layout", "biaffine"]
#: what the JSON table says about the float64_* columns
FLOAT_NOTE = ("float64_* columns: the authors' float64 pipeline, display only (6 significant digits); "
              "they decide nothing and are never in a certificate; a value and its *_exact column: the "
              "float is the nearest double of the exact rational; *_lo, *_hi: certified enclosures")

#: the combined survey table uses the authors' column names (their
#: scripts/survey_results/head_statistics.csv) for the quantities qkverify
#: certifies: dim = 2n (the restricted space), n_zero = dim − n_pos − n_neg
#: as in their table, b_sym = b/(1 − a) etc.; then the certified intervals.
AUTHORS_COLUMNS = ["model", "layer", "head", "kv_head", "dim", "symmetric_energy", "pairing", "rho",
                   "pairing_bound", "pairing_gap", "n_pos", "n_neg", "n_zero", "a", "b", "c", "d",
                   "b_sym", "c_sym", "d_sym"]
SURVEY_EXTRA = ["d_model", "d_head", "rank_M", "a_exact", "b_lo", "b_hi", "c_lo", "c_hi", "d_lo", "d_hi",
                "face_b0", "face_c0", "face_d0", "pairing_lo", "pairing_hi", "float64_disagrees", "float64_flags"]


#: (file column, row key) of every column, in order
_ROW_PAIRS = tuple((c, ROW_KEY.get(c, c)) for c in COLUMNS + JSON_EXTRA)


def output_row(r: dict) -> dict:
    """A certifier's row in the files' vocabulary: ``d_model``/``d_head`` for
    N/n, and ``random_baseline`` as a number beside its exact
    ``random_baseline_exact``."""
    out = {c: r[k] for c, k in _ROW_PAIRS if k in r}
    rb = r.get("random_baseline")
    if isinstance(rb, str) and rb:
        from fractions import Fraction

        out["random_baseline_exact"] = rb
        out["random_baseline"] = float(Fraction(rb))
    return out


def _cell(v):
    t = type(v)
    if t is str or t is int or t is bool:   # the common cells first (the same as below)
        return v
    if t is float:
        return float.__repr__(v)
    if v is None:
        return ""
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    if isinstance(v, np.integer):
        return int(v)
    return v


def write_csv(rows: list[dict], path: str | Path) -> None:
    """One row per head, columns :data:`COLUMNS` (missing values empty; LF line
    endings; numbers as numbers), written atomically."""
    atomic_write_csv(path, COLUMNS, [[_cell(o.get(c)) for c in COLUMNS] for o in map(output_row, rows)])


def write_json(rows: list[dict], meta: dict, path: str | Path) -> None:
    """{"model": meta, "columns": [...], "rows": [...]} with the exact extras."""
    atomic_write_json(path, table_document(rows, meta))


def table_document(rows: list[dict], meta: dict) -> dict:
    """The heads.json document: {"model": meta, "columns", "display_only", "rows"}."""
    cols = COLUMNS + JSON_EXTRA
    return {"model": meta, "columns": cols, "display_only": FLOAT_NOTE,
            "rows": [{c: o[c] for c in cols if c in o} for o in map(output_row, rows)]}


def survey_row(r: dict) -> dict:
    """One row of the combined table (authors' column names, see
    :data:`AUTHORS_COLUMNS`), from a head row."""
    o = output_row(r)
    out = {k: o.get(k) for k in AUTHORS_COLUMNS + SURVEY_EXTRA if k in o}
    out["dim"] = 2 * r["n"]
    out["n_zero"] = 2 * r["n"] - r["n_pos"] - r["n_neg"]
    s = r.get("symmetric_energy")
    for k in ("b", "c", "d"):
        v = r.get(k)
        out[f"{k}_sym"] = (v / s) if isinstance(v, float) and isinstance(s, float) and s else None
    return out


def write_survey(rows: list[dict], path: str | Path) -> None:
    """The combined table of several models (CSV, authors' column names first)."""
    cols = AUTHORS_COLUMNS + SURVEY_EXTRA
    atomic_write_csv(path, cols, [[_cell(survey_row(r).get(c)) for c in cols] for r in rows])


def model_summary(rows: list[dict]) -> dict:
    """Per-model counts: signatures, exact faces, float-vs-exact disagreements.

    >>> model_summary([{"n_pos": 2, "n_neg": 2, "n_zero": 4, "face_b0": False, "face_c0": True,
    ...                 "face_d0": False, "float64_disagrees": True}])["faces"]
    {'b=0': 0, 'c=0': 1, 'd=0': 0, 'undecided': 0}
    """
    sig: dict = {}
    for r in rows:
        k = f"({r['n_pos']},{r['n_neg']},{r['n_zero']})"
        sig[k] = sig.get(k, 0) + 1
    faces = {"b=0": sum(1 for r in rows if r.get("face_b0") is True),
             "c=0": sum(1 for r in rows if r.get("face_c0") is True),
             "d=0": sum(1 for r in rows if r.get("face_d0") is True),
             "undecided": sum(1 for r in rows if "undecided" in (r.get("face_c0"), r.get("face_d0")))}
    dis = sum(1 for r in rows if r.get("float64_disagrees"))
    return {"heads": len(rows), "signatures": sig, "faces": faces, "float64_disagrees": dis}


def _faces(r: dict) -> str:
    """The exact faces of a head's profile: ``b=0,c=0``, ``-`` (interior) or ``?`` (undecided)."""
    return ",".join(k for k, key in (("b=0", "face_b0"), ("c=0", "face_c0"), ("d=0", "face_d0"))
                    if r.get(key) is True) or ("?" if "undecided" in (r.get("face_c0"), r.get("face_d0")) else "-")


#: at most this many heads are listed one per line on the terminal; more are summarised per layer
PER_HEAD_LINES = 16


def summary_lines(rows: list[dict]) -> list[str]:
    """What the terminal shows (within 100 columns; the full table is heads.csv):
    one line per head for a few heads, else one line per layer."""
    from ..io.text import table

    def f(x, k=4):
        return "" if x in (None, "") else f"{float(x):.{k}f}"

    if len(rows) <= PER_HEAD_LINES:
        body = [[r["layer"], r["head"], r["kv_head"], f"({r['n_pos']},{r['n_neg']},{r['n_zero']})",
                 f(r.get("a")), f(r.get("b")), f(r.get("c")), f(r.get("d")), _faces(r),
                 f(r.get("pairing")), f(r.get("pairing_gap"))] for r in rows]
        return table(body, ["layer", "head", "kv_head", "signature", "a", "b", "c", "d", "faces", "pairing",
                            "pairing_gap"], right=(0, 1, 2)).splitlines()
    by_layer: dict = {}
    for r in rows:
        by_layer.setdefault(r["layer"], []).append(r)
    body = []
    for l, rs in sorted(by_layer.items()):
        sig: dict = {}
        for r in rs:
            k = f"({r['n_pos']},{r['n_neg']},{r['n_zero']})"
            sig[k] = sig.get(k, 0) + 1
        a = [float(r["a"]) for r in rs if r.get("a") not in (None, "")]
        faces = {k: sum(1 for r in rs if r.get(key) is True) for k, key in (("b=0", "face_b0"), ("c=0", "face_c0"),
                                                                          ("d=0", "face_d0"))}
        body.append([l, len(rs), ", ".join(f"{k}×{v}" if v > 1 else k for k, v in sorted(sig.items())),
                     f"{min(a):.4f}" if a else "", f"{max(a):.4f}" if a else "",
                     " ".join(f"{k}:{v}" for k, v in faces.items() if v) or "-",
                     sum(1 for r in rs if r.get("float64_disagrees"))])
    return table(body, ["layer", "heads", "signatures (n_pos,n_neg,n_zero)", "a min", "a max", "faces",
                        "float64 disagrees"], right=(0, 1, 3, 4, 6)).splitlines()


def theorem3_summary(results: list[dict]) -> tuple[str, list[str]]:
    """(sentence, keys of the heads it does not apply to): how many heads have
    Theorem 3's signature (d_head, d_head, d_model − 2·d_head) certified, and
    why the others are not (a degenerate head: rank [W_K; W_Q] < 2·d_head,
    so the theorem does not apply; or a contradiction, a bug).

    >>> theorem3_summary([{"verdict": "holds", "row": {"layer": 0, "head": 0, "rank_M": 4, "n": 2}},
    ...                   {"verdict": "undecided", "row": {"layer": 0, "head": 1, "rank_M": 3, "n": 2}}])[0]
    'Theorem 3 (signature (d_head, d_head, d_model − 2·d_head)) certified on 1 of 2 heads; it does not apply to 1: 1 head is degenerate (rank [W_K; W_Q] < 2·d_head): L0H1'
    """
    holds = [r for r in results if r["verdict"] == "holds"]
    degenerate = [r for r in results if r["verdict"] != "holds" and r["row"].get("rank_M") is not None
                  and r["row"]["rank_M"] < 2 * r["row"]["n"]]
    other = [r for r in results if r["verdict"] != "holds" and r not in degenerate]
    key = lambda r: f"L{r['row']['layer']}H{r['row']['head']}"  # noqa: E731
    text = (f"Theorem 3 (signature (d_head, d_head, d_model − 2·d_head)) certified on {len(holds)} of "
            f"{len(results)} heads")
    if degenerate:
        names = [key(r) for r in degenerate]
        shown = ", ".join(names[:8]) + (f", … ({len(names) - 8} more in heads.csv)" if len(names) > 8 else "")
        text += (f"; it does not apply to {len(degenerate)}: {len(degenerate)} "
                 f"head{' is' if len(degenerate) == 1 else 's are'} degenerate (rank [W_K; W_Q] < 2·d_head): {shown}")
    if other:
        text += (f"; {len(other)} contradict{'s' if len(other) == 1 else ''} it (a bug, please report): "
                 + ", ".join(key(r) for r in other[:8]))
    return text, [key(r) for r in degenerate]


def plot(rows: list[dict], path: str | Path, title: str, N: int) -> None:
    """PNG of a model's heads, readable for one layer and for many.

    Left: every head on the simplex of (b, c, d)/(1 − a) -- the profile of
    the symmetric part S (Def 6, Lemma 4: (b, c, d) = (1 − a)·(b, c, d)(S));
    corners: b (α = β, the spectrum of S symmetric about 0), c (S ⪰ 0),
    d (S ⪯ 0) -- coloured by the skew energy a.  Where heads crowd too much
    to be labelled, an inset magnifies the crowded part.  Right: a per head:
    bars for one layer, a layer × head grid (values written in the cells when
    they are large enough) for several.  One diverging colour scale centred
    on the random baseline a₀ = (N−1)/(2N) (Prop 5: E[1 − a] = (N+1)/(2N)):
    blue heads are more symmetric than a random matrix, red ones more skew.
    Heads are labelled ``H<h>`` (one layer) or ``L<l>H<h>`` wherever a label
    meets no other label, no corner name and no point.  An antisymmetric head
    (a = 1: S = 0, so (b, c, d) = 0) has no point on the simplex: it is listed
    under the triangle, never drawn at a corner; so is a head with L = 0 (no
    profile), which also has no bar (its place says "L = 0").  The colour scale stays in
    [0, 1] (a is a fraction).  Floats are display values only.

    rows  -- table rows (``layer``, ``head``, ``a``, ``b``, ``c``, ``d``);
             rows without ``b`` (L = 0) are listed, not drawn
    path  -- the PNG file (its folder is created)
    title -- figure title; N -- the model width d_model (for a₀)
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm

    # L = 0 (no profile, Lean's π(0) = 0): no point and no bar, but listed, never silently left out
    zero = [r for r in rows if r.get("b") in (None, "")]
    rows = [r for r in rows if r.get("b") not in (None, "")]
    p = Path(path)
    layer_ids = sorted({int(r["layer"]) for r in rows + zero})
    head_ids = sorted({int(r["head"]) for r in rows + zero})
    n_l, n_h = max(len(layer_ids), 1), max(len(head_ids), 1)
    one_layer = len(layer_ids) == 1
    fig_h = 5.6 if n_l <= 8 else min(5.6 + 0.22 * (n_l - 8), 10.0)  # the grid grows with the layers
    fig = plt.figure(figsize=(14, fig_h))
    gs = fig.add_gridspec(1, 3, width_ratios=[1.5, 1.0, 0.035], wspace=0.18)
    ax1, ax2, cax = fig.add_subplot(gs[0, 0]), fig.add_subplot(gs[0, 1]), fig.add_subplot(gs[0, 2])
    base = (N - 1) / (2 * N)
    fig.suptitle(title + f"; random baseline a₀ = (d_model − 1)/(2·d_model) = {base:.4f}", fontsize=11)
    zero_names = [f"H{r['head']}" if one_layer else f"L{r['layer']}H{r['head']}" for r in zero]
    zero_text = ("L = 0 (no profile): " + ", ".join(zero_names[:10])
                 + (f", … ({len(zero_names) - 10} more)" if len(zero_names) > 10 else "")) if zero else ""
    if not rows:
        for ax in (ax1, ax2, cax):
            ax.axis("off")
        ax2.text(0.5, 0.5, "no head with a profile" + (f"\n{zero_text}" if zero else ""), ha="center",
                 va="center")
        atomic_savefig(fig, p, dpi=120)
        plt.close(fig)
        return

    labels = [f"H{r['head']}" if one_layer else f"L{r['layer']}H{r['head']}" for r in rows]
    a_all = np.array([float(r["a"]) for r in rows])
    # a = 1 exactly (the exact column when there is one): L antisymmetric, S = 0, no point on the simplex
    skew = [i for i, r in enumerate(rows) if str(r.get("a_exact", "")) == "1" or
            (r.get("a_exact") in (None, "") and float(r["a"]) == 1.0)]
    on = [i for i in range(len(rows)) if i not in skew]
    s = 1.0 - a_all
    s[skew] = 1.0
    c = np.array([float(r["c"]) for r in rows]) / s
    d = np.array([float(r["d"]) for r in rows]) / s
    x = c + 0.5 * d
    y = (np.sqrt(3) / 2) * d
    x[skew] = np.nan
    y[skew] = np.nan
    a = a_all
    half = max(float(np.max(np.abs(a - base))), 1e-3) * 1.05
    # a diverging scale centred on the baseline, clipped to [0, 1] (a is a fraction of ‖L‖²)
    norm = TwoSlopeNorm(vcenter=base, vmin=max(0.0, base - half), vmax=min(1.0, base + half))
    cmap = plt.get_cmap("coolwarm")

    def place_labels(ax, idx, size=7.5, draw=True):
        """Greedy labels for the points ``idx``: eight offsets are tried
        around each point; a label is kept only where its box meets no kept
        label and no point and lies inside the axes.  Returns the set of
        labelled indices (``draw=False``: only which would be)."""
        fig.canvas.draw()
        tr = ax.transData
        pts = tr.transform(np.column_stack([np.nan_to_num(x, nan=-1e9), np.nan_to_num(y, nan=-1e9)]))
        axbox = ax.get_window_extent()
        px = size * fig.dpi / 72.0
        r_pt = 3.5 * fig.dpi / 72.0
        # the corner names (and any other text already on the axes) are obstacles too
        kept = [tuple(t.get_window_extent().extents) for t in ax.texts]
        done = set()
        for i in sorted((k for k in idx if k not in skew), key=lambda k: (-pts[k, 1], pts[k, 0])):
            w, h = 0.62 * px * len(labels[i]) + 2, px + 2
            x0, y0 = pts[i]
            for dx, dy in ((5, 1), (5, -h - 1), (-w - 5, 1), (-w - 5, -h - 1), (-w / 2, 6), (-w / 2, -h - 6),
                           (9, -h / 2), (-w - 9, -h / 2)):
                bx = (x0 + dx, y0 + dy, x0 + dx + w, y0 + dy + h)
                if bx[0] < axbox.x0 or bx[2] > axbox.x1 or bx[1] < axbox.y0 or bx[3] > axbox.y1:
                    continue
                if any(bx[0] < k[2] and k[0] < bx[2] and bx[1] < k[3] and k[1] < bx[3] for k in kept):
                    continue
                if np.any((pts[:, 0] > bx[0] - r_pt) & (pts[:, 0] < bx[2] + r_pt)
                          & (pts[:, 1] > bx[1] - r_pt) & (pts[:, 1] < bx[3] + r_pt)):
                    continue
                kept.append(bx)
                done.add(i)
                if not draw:
                    break
                tx, ty = tr.inverted().transform((bx[0], bx[1]))
                ax.text(tx, ty, labels[i], fontsize=size, ha="left", va="bottom", color="0.15", zorder=4)
                break
        return done

    def draw_simplex(ax, lw=1.0, size=32):
        tri = np.array([[0, 0], [1, 0], [0.5, np.sqrt(3) / 2], [0, 0]])
        ax.plot(tri[:, 0], tri[:, 1], color="0.35", lw=lw, zorder=1)
        ax.scatter(x[on], y[on], c=a[on], cmap=cmap, norm=norm, s=size, edgecolor="k", linewidth=0.4, zorder=3)

    # ---- left: the simplex ---------------------------------------------------------------------
    draw_simplex(ax1)
    top = np.sqrt(3) / 2
    ax1.text(-0.02, -0.03, "b\n(α = β)", ha="center", va="top", fontsize=8.5)
    ax1.text(1.02, -0.03, "c\n(S ⪰ 0)", ha="center", va="top", fontsize=8.5)
    ax1.text(0.5, top + 0.03, "d (S ⪯ 0)", ha="center", va="bottom", fontsize=8.5)
    ax1.set_xlim(-0.2, 1.2)
    ax1.set_ylim(-0.22, top + 0.12)
    ax1.set_aspect("equal")
    ax1.axis("off")
    ax1.set_title("(b, c, d)/(1 − a) on the simplex; colour: a", fontsize=10)
    if skew:
        names = [labels[i] for i in skew]
        shown = ", ".join(names[:10]) + (f", … ({len(names) - 10} more)" if len(names) > 10 else "")
        ax1.set_ylim(-0.36, top + 0.12)
        ax1.text(0.5, -0.17, f"a = 1 (L antisymmetric, S = 0: no point on the simplex): {shown}",
                 ha="center", va="top", fontsize=7.5, color="0.15",
                 bbox=dict(boxstyle="round,pad=0.3", fc=cmap(norm(1.0)), alpha=0.35, ec="0.5"))
    if zero:
        ax1.set_ylim(-0.36, top + 0.12)
        ax1.text(0.5, -0.245 if skew else -0.17, zero_text, ha="center", va="top", fontsize=7.5, color="0.15",
                 bbox=dict(boxstyle="round,pad=0.3", fc="white", ec="0.5"))
    everyone = [i for i in range(len(rows)) if i not in skew]
    fits = place_labels(ax1, everyone, draw=False)
    crowd = [i for i in everyone if i not in fits]
    labelled: set = set()
    zoomed = False
    if crowd and len(everyone) > 1:
        span = max(np.ptp(x[crowd]), np.ptp(y[crowd]))
        if span < 0.35:  # one crowded region: magnify it, with the heads around it
            mx, my = float(np.mean(x[crowd])), float(np.mean(y[crowd]))
            near = [i for i in everyone if np.hypot(x[i] - mx, y[i] - my) <= max(0.06, 1.5 * span)]
            hw = max(np.ptp(x[near]), np.ptp(y[near])) / 2
            hw += max(0.15 * hw, 0.004)
            cx, cy = (x[near].min() + x[near].max()) / 2, (y[near].min() + y[near].max()) / 2
            # the inset sits to the right of the triangle, where the panel is empty
            ax1.set_xlim(-0.2, 2.05)
            zoomed = True
            labelled = place_labels(ax1, everyone)
            ins = ax1.inset_axes([1.12, 0.0, 0.9, 0.9], transform=ax1.transData)
            draw_simplex(ins, lw=0.8, size=26)
            ins.set_xlim(cx - hw, cx + hw)
            ins.set_ylim(cy - hw, cy + hw)
            ins.set_aspect("equal")
            ins.set_xticks([])  # a magnified piece of the triangle: its coordinates mean nothing to a reader
            ins.set_yticks([])
            ins.set_title(f"crowded part, magnified ×{1.0 / (2 * hw):.0f}", fontsize=7.5, pad=2)
            ax1.indicate_inset_zoom(ins, edgecolor="0.45")
            inside = [i for i in everyone if abs(x[i] - cx) <= hw and abs(y[i] - cy) <= hw]
            labelled |= place_labels(ins, inside, size=7)
    if not zoomed:
        labelled = place_labels(ax1, everyone)
    if len(labelled) < len(everyone):
        ax1.text(0.5, -0.33 if skew or zero else -0.21, f"{len(labelled)} of {len(everyone)} heads labelled here; every "
                 "head is in the "
                 + ("bars" if one_layer else "grid"), ha="center", va="bottom", fontsize=7.5, color="0.3")

    # ---- right: a per head -------------------------------------------------------------------
    if one_layer:
        hx = np.array([int(r["head"]) for r in rows])
        ax2.bar(hx, a, color=cmap(norm(a)), edgecolor="k", linewidth=0.4)
        ax2.axhline(base, color="k", ls="--", lw=1, label=f"random baseline a₀ = {base:.4f}")
        ax2.legend(loc="upper right", fontsize=8, framealpha=0.9)
        for xi, ai in zip(hx, a):
            ax2.text(xi, ai, f"{ai:.2f}", ha="center", va="bottom", fontsize=7.5)
        for r in zero:  # no bar: L = 0 has no skew energy (Lean: a = 0/0 = 0), said in words
            ax2.text(int(r["head"]), 0.01, "L = 0", ha="center", va="bottom", fontsize=7.5, rotation=90,
                     color="0.3")
        ax2.set_xticks(head_ids, [str(h) for h in head_ids], fontsize=8)
        ax2.set_xlim(min(head_ids) - 0.6, max(head_ids) + 0.6)
        ax2.set_ylim(0, max(float(a.max()), base) * 1.22 + 0.02)
        ax2.set_xlabel("head")
        ax2.set_ylabel("a = ‖T‖²/‖L‖²")
        ax2.set_title(f"skew energy a = ‖T‖²/‖L‖² per head, layer {layer_ids[0]}", fontsize=10)
    else:
        li = {l: k for k, l in enumerate(layer_ids)}
        hi = {h: k for k, h in enumerate(head_ids)}
        grid = np.full((n_l, n_h), np.nan)
        for r, av in zip(rows, a):
            grid[li[int(r["layer"])], hi[int(r["head"])]] = av
        zero_cells = {(li[int(r["layer"])], hi[int(r["head"])]) for r in zero}
        ax2.imshow(np.ma.masked_invalid(grid), cmap=cmap, norm=norm, aspect="auto", interpolation="nearest")
        ax2.set_xlabel("head")
        ax2.set_ylabel("layer")
        sh, sl = max(1, int(np.ceil(n_h / 24))), max(1, int(np.ceil(n_l / 32)))
        ax2.set_xticks(range(0, n_h, sh), [str(h) for h in head_ids[::sh]], fontsize=8)
        ax2.set_yticks(range(0, n_l, sl), [str(l) for l in layer_ids[::sl]], fontsize=8)
        ax2.set_title("skew energy a = ‖T‖²/‖L‖² per layer and head", fontsize=10)
        fig.canvas.draw()
        bb = ax2.get_window_extent()
        fs = min(8.0, (bb.height / n_l) * 0.45 * 72 / fig.dpi, (bb.width / n_h) / 4.2 * 72 / fig.dpi)
        if fs >= 5.0:  # values written in the cells only when legible
            for (i, j), v in np.ndenumerate(grid):
                if np.isfinite(v):
                    rgba = cmap(norm(v))
                    dark = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2] < 0.5
                    ax2.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=fs,
                             color="white" if dark else "black")
            for i, j in zero_cells:
                ax2.text(j, i, "L=0", ha="center", va="center", fontsize=fs, color="0.3")
    cb = fig.colorbar(matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap), cax=cax)
    cb.set_label("a = ‖T‖²/‖L‖² (skew energy); black line: random baseline a₀")
    cb.ax.axhline(base, color="k", lw=1.5)
    atomic_savefig(fig, p, dpi=120, bbox_inches="tight")
    plt.close(fig)
