"""Tables (CSV, JSON), per-head certificates and the summary picture.

Columns follow the field's names (SPEC §2–§3): ``model, layer, head,
kv_head, n_pos, n_neg, n_zero, a, b, c, d, symmetric_energy, pairing, rho,
pairing_bound, pairing_gap`` and, for every value that is an enclosure
rather than an exact number, ``<name>_lo`` / ``<name>_hi`` (outward-rounded
decimals); ``a`` and ``symmetric_energy`` are exact (``*_exact`` holds the
rational ``p/q`` in the JSON table), the float columns are display values.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

COLUMNS = [
    "model", "layer", "head", "kv_head", "N", "n", "rank_M", "n_pos", "n_neg", "n_zero",
    "a", "b", "b_lo", "b_hi", "c", "c_lo", "c_hi", "d", "d_lo", "d_hi",
    "face_b0", "face_c0", "face_d0",
    "symmetric_energy", "random_baseline", "energy_above_baseline",
    "pairing", "pairing_lo", "pairing_hi", "rho", "rho_lo", "rho_hi",
    "pairing_bound", "pairing_bound_lo", "pairing_bound_hi",
    "pairing_gap", "pairing_gap_lo", "pairing_gap_hi",
    "lambda_max", "lambda_min", "signature_method", "direct_NxN", "route", "enclosure_rel_width_max",
    "float64_n_pos", "float64_n_neg", "float64_n_zero", "float64_a", "float64_b", "float64_c", "float64_d",
    "float64_pairing", "float64_rho", "float64_min_abs_eig_rel", "float64_max_profile_dev",
    "float64_disagrees", "float64_flags", "notes",
]
# timings are printed by the command, not stored: the table is reproducible byte for byte
JSON_EXTRA = ["a_exact", "symmetric_energy_exact"]
#: what the JSON table says about the float64_* columns
FLOAT_NOTE = ("float64_* columns: the authors' float64 pipeline, display only (6 significant digits); "
              "they decide nothing and are never in a certificate")

#: the combined survey table uses the authors' column names (their
#: scripts/survey_results/head_statistics.csv) for the quantities qkverify
#: certifies: dim = 2n (the restricted space), n_zero = dim − n_pos − n_neg
#: as in their table, b_sym = b/(1 − a) etc.; then the certified intervals.
AUTHORS_COLUMNS = ["model", "layer", "head", "kv_head", "dim", "symmetric_energy", "pairing", "rho",
                   "pairing_bound", "pairing_gap", "n_pos", "n_neg", "n_zero", "a", "b", "c", "d",
                   "b_sym", "c_sym", "d_sym"]
SURVEY_EXTRA = ["N", "n", "rank_M", "a_exact", "b_lo", "b_hi", "c_lo", "c_hi", "d_lo", "d_hi",
                "face_b0", "face_c0", "face_d0", "pairing_lo", "pairing_hi", "float64_disagrees", "float64_flags"]


def _cell(v):
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
    """One row per head, columns :data:`COLUMNS` (missing values empty)."""
    import io

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO(newline="")
    w = csv.writer(buf)
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow([_cell(r.get(c)) for c in COLUMNS])
    _atomic_text(p, buf.getvalue())


def write_json(rows: list[dict], meta: dict, path: str | Path) -> None:
    """{"model": meta, "columns": [...], "rows": [...]} with the exact extras."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    cols = COLUMNS + JSON_EXTRA
    doc = {"model": meta, "columns": cols, "display_only": FLOAT_NOTE,
           "rows": [{c: r.get(c) for c in cols if c in r} for r in rows]}
    _atomic_text(p, json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=False) + "\n")


def _atomic_text(p: Path, text: str) -> None:
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(p)


def survey_row(r: dict) -> dict:
    """One row of the combined table (authors' column names, see
    :data:`AUTHORS_COLUMNS`), from a head row."""
    out = {k: r.get(k) for k in AUTHORS_COLUMNS + SURVEY_EXTRA if k in r}
    out["dim"] = 2 * r["n"]
    out["n_zero"] = 2 * r["n"] - r["n_pos"] - r["n_neg"]
    s = r.get("symmetric_energy")
    for k in ("b", "c", "d"):
        v = r.get(k)
        out[f"{k}_sym"] = (v / s) if isinstance(v, float) and isinstance(s, float) and s else None
    return out


def write_survey(rows: list[dict], path: str | Path) -> None:
    """The combined table of several models (CSV, authors' column names first)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    cols = AUTHORS_COLUMNS + SURVEY_EXTRA
    with open(p, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        for r in rows:
            sr = survey_row(r)
            w.writerow([_cell(sr.get(c)) for c in cols])


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


def summary_lines(rows: list[dict]) -> list[str]:
    """A compact text table for the terminal."""
    from ..io.text import table

    def f(x, k=6):
        return "" if x in (None, "") else f"{float(x):.{k}f}"

    out = []
    for r in rows:
        faces = ",".join(k for k, key in (("b=0", "face_b0"), ("c=0", "face_c0"), ("d=0", "face_d0"))
                         if r.get(key) is True) or ("?" if "undecided" in (r.get("face_c0"), r.get("face_d0")) else "-")
        out.append([r["layer"], r["head"], r["kv_head"], f"({r['n_pos']},{r['n_neg']},{r['n_zero']})",
                    f(r.get("a")), f(r.get("b")), f(r.get("c")), f(r.get("d")), faces,
                    f(r.get("symmetric_energy")), f(r.get("pairing")), f(r.get("rho"), 4), f(r.get("pairing_gap")),
                    r.get("float64_flags") or ""])
    return table(out, ["layer", "head", "kv", "signature", "a", "b", "c", "d", "faces", "1-a", "pairing",
                       "rho", "gap", "float64 disagrees"]).splitlines()


def plot(rows: list[dict], path: str | Path, title: str, N: int) -> None:
    """PNG: heads on the simplex (ternary plot of (b, c, d)/(1 − a), colour =
    layer) beside a against layer with the random baseline a = (N−1)/(2N)
    (Prop 5: E[1 − a] = (N+1)/(2N))."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    rows = [r for r in rows if r.get("b") not in (None, "")]
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 5.2))
    if rows:
        layers = np.array([r["layer"] for r in rows])
        s = np.array([1.0 - r["a"] for r in rows])
        s[s == 0] = 1.0
        b = np.array([r["b"] for r in rows]) / s
        c = np.array([r["c"] for r in rows]) / s
        d = np.array([r["d"] for r in rows]) / s
        x = c + 0.5 * d
        y = (np.sqrt(3) / 2) * d
        tri = np.array([[0, 0], [1, 0], [0.5, np.sqrt(3) / 2], [0, 0]])
        ax1.plot(tri[:, 0], tri[:, 1], color="0.3", lw=1)
        lmin, lmax = int(layers.min()), int(layers.max())
        cmap = plt.get_cmap("viridis", max(lmax - lmin + 1, 1))
        norm = matplotlib.colors.BoundaryNorm(np.arange(lmin - 0.5, lmax + 1.5), cmap.N)
        sc = ax1.scatter(x, y, c=layers, cmap=cmap, norm=norm, s=22, edgecolor="k", linewidth=0.3)
        ax1.text(-0.03, -0.05, "b", ha="right")
        ax1.text(1.03, -0.05, "c", ha="left")
        ax1.text(0.5, np.sqrt(3) / 2 + 0.03, "d", ha="center")
        ax1.set_aspect("equal")
        ax1.axis("off")
        ax1.set_title("(b, c, d)/(1 − a) on the simplex")
        cb = fig.colorbar(sc, ax=ax1, label="layer", shrink=0.8)
        step = max(1, (lmax - lmin + 1) // 10)
        cb.set_ticks(list(range(lmin, lmax + 1, step)))
        a = np.array([r["a"] for r in rows])
        nh = max(r["head"] for r in rows) + 1
        jit = (np.array([r["head"] for r in rows]) - (nh - 1) / 2) * (0.5 / max(nh, 1))
        ax2.scatter(layers + jit, a, c=layers, cmap=cmap, norm=norm, s=18, edgecolor="k", linewidth=0.3)
        ax2.set_xticks(list(range(lmin, lmax + 1, step)))
        base = (N - 1) / (2 * N)
        ax2.axhline(base, color="crimson", ls="--", lw=1, label=f"random baseline a = (N−1)/(2N) = {base:.4f}")
        ax2.set_xlabel("layer")
        ax2.set_ylabel("a = ‖T‖²/‖L‖² (skew energy)")
        ax2.set_ylim(0, 1)
        ax2.legend(loc="best", fontsize=8)
        ax2.set_title("skew energy per head")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(p, dpi=120)
    plt.close(fig)


def certificate_for(res: dict, rec_source: dict, meta: dict) -> dict:
    """A compact certificate (lead's writer, schema-validated on write): the
    weights file's SHA-256 plus tensor names and slices instead of inline
    matrices; claim Theorem 3 with the profile and pairing values."""
    from ..certificates import build
    from ..claims.registry import Result, get

    claim = get("heads_have_balanced_attention")
    row = res["row"]
    inp = {
        "kind": "weights",
        "sha256": rec_source.get("sha256", ""),
        "file": rec_source.get("file", ""),
        "tensors": rec_source.get("tensors", []),
        "arch": rec_source.get("arch", ""),
        "model": row["model"], "layer": row["layer"], "head": row["head"], "kv_head": row["kv_head"],
        "n": row["n"], "N": row["N"],
        "head_convention": "W_Q, W_K are n x N (rows = head dimensions); L = W_Kᵀ W_Q",
    }
    values = {k: v for k, v in res["values"].items() if k not in ("seconds", "direct_seconds") and not k.startswith("_")}
    result = Result(res["verdict"], res.get("evidence", "certified"), {"witnesses": res["witnesses"]}, values,
                    "blueprint (α, β padded to equal length; Lean's length-N padding adds only zero pairs, same values)",
                    res.get("reason", ""))
    return build(claim, inp, result, name=f"{row['model']} layer {row['layer']} head {row['head']}")
