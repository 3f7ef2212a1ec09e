"""`qkverify compare TABLE.csv [--model MODEL]`: audit a published per-head table.

The table is in the authors' survey format (their scripts/head_statistics.py:
``model, layer, head, kv_head, dim, symmetric_energy, balance, pairing, rho,
pairing_bound, pairing_gap, lobe_departure, n_pos, n_neg, n_zero, a, b, c, d,
b_sym, c_sym, d_sym, trace_ratio, participation_ratio, stable_rank,
leading_share``).  Every row is checked against what the theorems imply,
within the float error model of their pipeline (qkverify.compare.errormodel);
with ``--model`` the rows of that model are joined on (layer, head) with the
certified results and judged item by item.  Writes ``compare.csv`` (one line
per row) and ``report.html`` under ``--out``; prints a summary per check and
per model.

Exit status: 0 no row contradicts; 1 a row contradicts a theorem beyond the
error model (or, with --model, a certified value beyond it); 2 bad input.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import QKInputError

NAME = "compare"
HELP = "audit a published per-head table (the authors' float format) against the theorems, and a model's certified heads"


def add_arguments(p) -> None:
    """Register the options of ``qkverify compare``."""
    p.add_argument("table", help="CSV in the authors' format (scripts/survey_results/head_statistics.csv)")
    p.add_argument("--model", default=None,
                   help="join with certified results: a weights file/folder or known model (its heads are certified "
                        "now, no certificate written) or a folder written by `qkverify heads` (heads.json + certificates)")
    p.add_argument("--table-model", default=None,
                   help="which of the table's models to join with --model (default: the table's only model, or the "
                        "one named like the certified model)")
    p.add_argument("--out", default=None, help="output folder (default ./qkverify-out/compare)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes when certifying --model (default 1)")
    p.add_argument("--pre-norm-qk", action="store_true", help="as for `heads`: analyse W_Kᵀ W_Q before q/k norms")
    p.add_argument("--pre-softcap", action="store_true",
                   help="as for `heads`: accept soft-capped attention logits (Gemma 2), analyse the bilinear form inside")
    p.add_argument("--layout", metavar="FILE", default=None,
                   help="as for `heads`: a layout file for a checkpoint qkverify has no layout for")
    p.add_argument("--n-heads", type=int, default=None, help="as for `heads`: head count without config.json")
    p.add_argument("--n-kv-heads", type=int, default=None, help="as for `heads`: KV head count without config.json")
    p.add_argument("--safety", type=float, default=None,
                   help="safety factor σ of the error model (default 2; see README 'compare')")
    p.add_argument("--cut", type=float, default=None, help="the pipeline's relative eigenvalue cut (default 1e-9; "
                                                          "older scripts 1e-7)")
    p.add_argument("--no-report", action="store_true", help="skip report.html")
    p.add_argument("--quiet", action="store_true", help="summary only, no progress bar")
    p.add_argument("--json", action="store_true",
                   help="one JSON document on standard output (the error model, the summary, compare.csv's rows)")


def _error_model(args):
    from ..compare.errormodel import CUT, SAFETY, ErrorModel

    safety = SAFETY if args.safety is None else args.safety
    cut = CUT if args.cut is None else args.cut
    if not (safety >= 1 and safety < 1e6):
        raise QKInputError("--safety must be a number in [1, 1e6)")
    if not 0 < cut < 1:
        raise QKInputError("--cut must be in (0, 1)")
    return ErrorModel(safety=safety, cut=cut)


def _pick_table_model(models: list[str], wanted: str | None, certified_name: str) -> str:
    if wanted is not None:
        if wanted not in models:
            raise QKInputError(f"--table-model {wanted}: not in the table (it has {', '.join(models[:8])})")
        return wanted
    if len(models) == 1:
        return models[0]
    key = certified_name.lower().split("/")[-1]
    hits = [m for m in models if m.lower().split("/")[-1] == key]
    if len(hits) == 1:
        return hits[0]
    raise QKInputError(f"the table has {len(models)} models and none is named {certified_name}: "
                       f"name the one to join with --table-model ({', '.join(models[:8])})")


def run(args) -> int:
    """Audit the table; see the module docstring for the exit status."""
    from ..compare import audit, json_doc, report_section, summary_lines, write_csv
    from ..compare.table import read_table
    from ..io.outputs import probe_output_dir

    em = _error_model(args)
    if args.jobs < 1:
        raise QKInputError("--jobs must be at least 1")
    out = Path(args.out) if args.out else Path("qkverify-out") / "compare"
    probe_output_dir(out)
    rows, _cols = read_table(args.table)
    models = list(dict.fromkeys(r["model"] for r in rows))
    certified = name = table_model = None
    report_models = []
    if args.model:
        mp = Path(args.model)
        if mp.is_dir() and (mp / "heads.json").is_file():
            from ..compare.model import read_heads_dir

            name, certified = read_heads_dir(mp)
            prefix = os.path.relpath(mp.resolve(), out.resolve()).replace(os.sep, "/") + "/"
            certs = True
        else:
            from ..commands.heads import check_readable
            from ..compare.model import certify_model

            check_readable(args.model)
            from ..models import load_model

            model = load_model(args.model, args.n_heads, args.n_kv_heads, pre_norm_qk=args.pre_norm_qk,
                               pre_softcap=args.pre_softcap, layout=args.layout)
            table_model = _pick_table_model(models, args.table_model, model.name)
            # certify the layers of the joined rows only
            layers = sorted({r["layer"] for r in rows if r["model"] == table_model})
            from tqdm import tqdm

            bar = tqdm(total=model.n_heads * len(layers), unit="head", disable=args.quiet or args.json or None,
                       file=sys.stderr, desc=f"certifying {model.name}"[:30])
            try:
                name, certified = certify_model(args.model, layers, args.jobs, args.pre_norm_qk, bar.update,
                                                model=model, n_heads=args.n_heads, n_kv_heads=args.n_kv_heads)
            finally:
                bar.close()
            prefix, certs = "", False
        table_model = _pick_table_model(models, args.table_model, name)
        hs = sorted(certified.values(), key=lambda h: (h.layer, h.head))
        if hs:
            from ..heads.report import model_data

            report_models.append(model_data([h.extra["row"] for h in hs], name, hs[0].N, hs[0].n, prefix, certs))
    a = audit(rows, em, certified, table_model, name)
    if certified is not None:
        ks = [r["kappa"] for r in a.rows if r.get("kappa")]
        if ks:
            from ..compare.errormodel import U32, U64
            from ..compare.model import C_QR

            N = max(h.N for h in certified.values())
            worst = max(ks)
            ok = C_QR * N * U64 * worst <= (em.safety - 1) * U32
            a.notes.append(f"float64 stage 1 (QR, products): max κ = ‖W_K‖‖W_Q‖/‖L‖ = {worst:.3g}; "
                           f"{C_QR:g}·N·u64·κ {'≤' if ok else '>'} (σ − 1)·u32"
                           + ("" if ok else ": the error model's assumption fails, raise --safety"))
    write_csv(a, out / "compare.csv")
    if not args.json:
        for line in summary_lines(a):
            print(line)
    wrote = [f"{out}/compare.csv"]
    if not args.no_report:
        from ..heads.report import write_report

        title = f"compare {Path(args.table).name}" + (f" with {name}" if name else "")
        write_report(out / "report.html", report_models, title, report_section(a))
        wrote.append("report.html")
    code = 1 if a.contradicts else 0
    if args.json:
        from ._util import print_json

        print_json({**json_doc(a), "table": str(args.table),
                    "wrote": [str(out / Path(w).name) for w in wrote], "exit": code})
    else:
        print("wrote " + ", ".join(wrote))
    return code
