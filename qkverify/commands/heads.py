"""`qkverify heads [MODEL…]`: certify every attention head of one or more models.

Per head (Theorem 3, Lemma 10, Def 6, Lemma 2): exact rank of M with a
minor witness, the deterministic cells of the nonzero spectrum of S (the
signature, α_j vs β_j, the faces, b, c, d, pairing quantities read from
them), exact a, the exact charpoly signature and the direct N x N route on
the first head when they fit the budget, and the authors' float64 pipeline
beside them (display only) with a flag wherever it would decide differently.
Writes a CSV and a JSON table, one compact certificate per head (as soon as
the head is done, so a rerun resumes) and a PNG into
``./qkverify-out/heads/<model>/`` (or ``--out``); with several models also a
combined ``survey.csv`` (the authors' column names) and ``survey_summary.json``.
``--scheduler`` runs the heads on a Dask cluster (see the README).
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import time
from pathlib import Path

from ..errors import QKInputError

#: cap on --jobs (a process each; more than this is a typing slip, not a machine)
MAX_JOBS = 64

NAME = "heads"
HELP = "certify every attention head of one or more models (default: all-MiniLM-L6-v2): signature, profile, pairing"


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def add_arguments(p) -> None:
    """Register the options of ``qkverify heads`` on an argparse parser."""
    p.add_argument("model", nargs="*", default=None,
                   help="weights (.safetensors file/dir, .gguf, TransformerLens .npz), a known model "
                        "(all-MiniLM-L6-v2 [default], SmolLM2-135M-Instruct) or a Hugging Face hub id (org/name) "
                        "held by the local Hugging Face cache (never downloaded); several give a combined table")
    p.add_argument("--out", default=None,
                   help="output directory (default ./qkverify-out/heads/<model>/; with several models "
                        "<out>/<model>/ and the combined table in <out>, default ./qkverify-out/heads)")
    p.add_argument("--jobs", type=int, default=None,
                   help=f"worker processes, 1..{MAX_JOBS} (default: the cores available, {_cores()})")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the heads on a Dask cluster: a scheduler address (tcp://host:8786) or local:K "
                        "for a LocalCluster of K worker processes")
    p.add_argument("--layers", default=None, help="layers to certify, e.g. 0,2,4-5 (default all)")
    p.add_argument("--heads", default=None, metavar="LIST",
                   help="heads to certify within each selected layer, e.g. 0,3-5 (default all)")
    p.add_argument("--digits", type=int, default=9,
                   help="width of the b, c, d enclosures at most 10^-digits relative to the value, or to "
                        "10^-6·(1 − a) for smaller values (default 9)")
    p.add_argument("--n-heads", type=int, default=None, help="head count for safetensors without config.json")
    p.add_argument("--n-kv-heads", type=int, default=None, help="KV head count (grouped-query) without config.json")
    p.add_argument("--pre-norm-qk", action="store_true",
                   help="accept a model that normalises q and k after the projections (q_norm/k_norm: Qwen3, "
                        "OLMo2, Gemma 3), whose score is not a fixed bilinear form, and analyse the "
                        "pre-normalisation W_Kᵀ W_Q (every output labels it score = pre_norm_qk); refused without")
    p.add_argument("--pre-softcap", action="store_true",
                   help="accept a model that soft-caps its attention logits (Gemma 2: score = c·tanh(s/c)) and "
                        "analyse the bilinear form s inside the cap (labelled score = pre_softcap); refused without")
    p.add_argument("--layout", metavar="FILE", default=None,
                   help="a layout file (TOML or JSON: tensor-name templates per layer, fused order, key head of "
                        "each query head; see the README, Models) for a safetensors checkpoint whose model_type "
                        "qkverify has no layout for")
    p.add_argument("--biaffine-vectors", action="store_true",
                   help="with query/key biases, write the exact linear terms W_Kᵀ b_Q and W_Qᵀ b_K in full into "
                        "heads.json (default: their exact squared norms and SHA-256)")
    p.add_argument("--exact-signature", choices=("all", "first", "none"), default="first",
                   help="exact charpoly(½JG)+Descartes signature on all heads, the model's first head L0H0 only "
                        "(default; when selected), or none; "
                        "a cross-check: the signature is certified on every head by the rank witness and the cells. "
                        "Estimated cost 0.15 s·(2n/64)^3.5 (about 2 s at d_head 64, 25 s at d_head 128); it runs "
                        "when the estimate is within --check-seconds")
    p.add_argument("--direct", choices=("first", "none", "all"), default="first",
                   help="also the direct N x N exact route (charpoly of S) on the model's first head L0H0 (default; "
                        "when selected), none or all; "
                        "estimated 0.15 s·(N/64)^3.5 (about 70 s at N = 384, hours at N ≥ 2048), so it runs only "
                        "when the estimate is within --check-seconds")
    p.add_argument("--check-seconds", type=float, default=5.0,
                   help="estimated seconds each optional exact cross-check (--exact-signature, --direct) may take on "
                        "a head (default 5, so one survey-size head finishes in seconds; inf = within --budget-seconds)")
    p.add_argument("--budget-seconds", type=float, default=None,
                   help="estimated time one exact route (a charpoly) may take on one head (default 120; inf = no limit)")
    p.add_argument("--budget-memory", type=float, default=None,
                   help="estimated memory in GiB one exact route may take on one head (default 2; inf = no limit)")
    p.add_argument("--force-routes", action="store_true", help="run every exact route whatever its estimated cost")
    p.add_argument("--compare-float", action="store_true",
                   help="also run the authors' float64 pipeline on every head (display columns float64_*, and a flag "
                        "where it would decide a count or a face differently); it costs about the authors' whole "
                        "pipeline again per head, so it is off by default")
    p.add_argument("--cut", type=float, default=1e-9, help="relative eigenvalue cut of the float64 comparison (default 1e-9)")
    p.add_argument("--full-witness", action="store_true", help="put full charpoly coefficients in the certificates")
    p.add_argument("--no-certificates", action="store_true", help="tables and picture only")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG")
    p.add_argument("--no-report", action="store_true",
                   help="skip report.html (the interactive page: every head on the simplex, hover, certificate links)")
    p.add_argument("--force", action="store_true", help="recompute every head and replace different existing certificates")
    p.add_argument("--no-resume", action="store_true",
                   help="recompute every head even when its certificate (same weights, same options) is already "
                        "there; a different result is then refused unless --force")
    p.add_argument("--quiet", action="store_true", help="no table on stdout, no progress bar")
    p.add_argument("--json", action="store_true",
                   help="print one JSON document (the heads.json table, the Theorem 3 summary and the files "
                        "written) instead of the text summary")


def _slug(name: str) -> str:
    """File-system-safe model name for the default output directory."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "model"


def default_out(model_name: str, root: str | Path | None = None) -> Path:
    """The default output folder ``<root>/heads/<model slug>/`` (root: ``./qkverify-out``)."""
    from ..io.outputs import DEFAULT_ROOT

    return Path(root if root is not None else DEFAULT_ROOT) / "heads" / _slug(model_name)


def check_readable(spec: str | None) -> None:
    """Open every weights file a model spec names (a file, or the
    ``.safetensors``/``.gguf``/``.npz``/``config.json`` files of a folder)
    and read one byte, so that an unreadable file is a one-line error before
    any work.  Known model names are resolved the same way.  Raises
    QKInputError."""
    from ..models import resolve_model

    path, _ = resolve_model(spec)
    files = [path] if not path.is_dir() else sorted(
        f for f in path.iterdir() if f.suffix.lower() in (".safetensors", ".gguf", ".npz") or f.name == "config.json")
    for f in files:
        try:
            with open(f, "rb") as fh:
                fh.read(1)
        except OSError as err:
            raise QKInputError(f"{f}: cannot read ({err.strerror or err.__class__.__name__})") from None


def _model_notes(meta: dict) -> list[str]:
    """What the analysed matrix is, when it is not the model's whole score."""
    out = []
    score = str(meta.get("score") or "")
    if "pre_norm_qk" in score:
        out.append(f"note: {meta.get('qk_norm')}: the score is not a fixed bilinear form; every head above is the "
                   "PRE-NORMALISATION W_Kᵀ W_Q (score = pre_norm_qk in heads.csv/heads.json)")
    if "pre_softcap" in score:
        out.append(f"note: {meta.get('softcap')}: every head above is the bilinear form s INSIDE the cap "
                   "(score = pre_softcap in heads.csv/heads.json)")
    if "biaffine" in score:
        out.append("note: query/key biases present: the score is biaffine (Lemma 1) and the analysis is of its "
                   "bilinear part W_Kᵀ W_Q; the linear terms and constant are per head in heads.json (biaffine)")
    return out


def _folder_name(spec: str | None) -> str | None:
    """The model name for a directory given on the command line: its
    config.json's ``_name_or_path`` (last part) or the folder's own name --
    not the stem of a file inside it."""
    if spec is None:
        return None
    from ..models.hub import hub_name

    if hub_name(spec):                 # a Hugging Face cache folder or snapshot: its org/name
        return hub_name(spec)
    p = Path(spec)
    if not p.is_dir():
        return None
    cfg = p / "config.json"
    if cfg.is_file():
        from ..models.safetensors_io import read_json_file

        try:
            name = read_json_file(cfg).get("_name_or_path")
        except (QKInputError, AttributeError):
            name = None
        if isinstance(name, str) and name.strip():
            return name.strip().rstrip("/").split("/")[-1]
    return p.resolve().name


def _budget(args):
    from ..heads.budget import DEFAULT_BYTES, DEFAULT_SECONDS, Budget

    sec = DEFAULT_SECONDS if args.budget_seconds is None else args.budget_seconds
    mem = DEFAULT_BYTES if args.budget_memory is None else args.budget_memory * 2**30
    if not (sec > 0 and mem > 0) or math.isnan(sec) or math.isnan(mem):
        raise QKInputError("--budget-seconds and --budget-memory must be positive")
    return Budget(sec, mem, args.force_routes)


def _check_args(args) -> None:
    from ._util import check_range, parse_indices

    if args.jobs is None:
        args.jobs = _cores()
    check_range("--jobs", args.jobs, 1, MAX_JOBS)
    args.head_sel = parse_indices(getattr(args, "heads", None), "--heads")
    if not 1 <= args.digits <= 200:
        raise QKInputError("--digits must be between 1 and 200")
    if not 0 < args.cut < 1:
        raise QKInputError("--cut must be in (0, 1)")
    cs = getattr(args, "check_seconds", 5.0)
    if not cs > 0:
        raise QKInputError("--check-seconds must be positive (inf: within --budget-seconds)")


def run(args) -> int:
    """Certify the models' heads and write tables, certificates and the PNG.

    Exit status 0 when every certified head satisfies Theorem 3 (or the
    theorem does not apply), 1 when a head contradicts it (a bug), 2 for bad
    input (QKInputError, raised by the loaders and option checks), an
    unreadable weights file or an unwritable output folder -- both found
    before any head is certified -- and for running out of memory (one
    line).  ``args.out_root`` (set by ``qkverify audit``, not a command-line
    option) replaces ``certificates`` in the default output folder."""
    _check_args(args)
    try:
        return _run(args)
    except MemoryError:
        raise QKInputError("out of memory; lower --jobs, the budget (--budget-memory) or the model size "
                           "(finished heads are kept: a rerun resumes)") from None


def _run(args) -> int:
    from ..heads.output import model_summary, write_survey
    from ..heads.run import RunConfig
    from ..models import parse_layers

    from ..io.outputs import probe_output_dir

    specs = args.model or [None]
    layers = parse_layers(args.layers)
    cfg = RunConfig(digits=args.digits, exact_signature=args.exact_signature, direct=args.direct,
                    full_witness=args.full_witness, cut=args.cut, budget=_budget(args),
                    biaffine_vectors=bool(getattr(args, "biaffine_vectors", False)),
                    compare_float=bool(getattr(args, "compare_float", False)),
                    check_seconds=float(getattr(args, "check_seconds", 5.0)))
    if args.out:
        probe_output_dir(args.out)
    for spec in specs:
        check_readable(spec)
    client = cluster = None
    if args.scheduler:
        from ..heads.run import start_client

        client, cluster = start_client(args.scheduler)
    try:
        multi = len(specs) > 1
        from ..io.outputs import DEFAULT_ROOT, atomic_write_json

        root = getattr(args, "out_root", None) or DEFAULT_ROOT
        base = Path(args.out) if args.out else Path(root) / "heads"
        all_rows: list[dict] = []
        summary: dict = {}
        docs: list[dict] = []
        code = 0
        for spec in specs:
            c, rows, name, doc = _one_model(spec, layers, cfg, args, base, multi, client)
            code = max(code, c)
            all_rows.extend(rows)
            summary[name] = model_summary(rows)
            docs.append(doc)
        if multi:
            write_survey(all_rows, base / "survey.csv")
            if not getattr(args, "no_report", False):
                _survey_report(all_rows, specs, base, args)
            atomic_write_json(base / "survey_summary.json", summary)
            if not args.json:
                for name, s in summary.items():
                    sigs = ", ".join(f"{k}: {v}" for k, v in sorted(s["signatures"].items()))
                    f = s["faces"]
                    print(f"{name}: {s['heads']} heads; signatures {sigs}; exact faces b=0 {f['b=0']}, "
                          f"c=0 {f['c=0']}, d=0 {f['d=0']}, undecided {f['undecided']}; float64 disagrees on "
                          f"{s['float64_disagrees']}")
                print(f"wrote {base}/survey.csv, survey_summary.json ({len(all_rows)} heads of {len(specs)} models)")
        if args.json:
            from ._util import print_json

            print_json(docs[0] if not multi else {"models": docs, "survey_summary": summary,
                                                   "files": [str(base / "survey.csv"),
                                                             str(base / "survey_summary.json")]})
        return code
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()


def _survey_report(all_rows: list[dict], specs, base: Path, args) -> None:
    """One report.html for several models (a model selector), linking to <model>/LxxHyy.json."""
    from ..heads.report import model_data, write_report

    models, order = {}, []
    for r in all_rows:
        if r["model"] not in models:
            order.append(r["model"])
            models[r["model"]] = []
        models[r["model"]].append(r)
    data = [model_data(models[m], m, int(models[m][0]["N"]), int(models[m][0]["n"]), _slug(m) + "/",
                       not args.no_certificates) for m in order]
    write_report(base / "report.html", data, f"{len(order)} models, {len(all_rows)} heads")
    if not args.json:  # --json: one document on stdout, nothing else
        print(f"wrote {base}/report.html (one page, a model selector)")


def _one_model(spec, layers, cfg, args, base: Path, multi: bool, client) -> tuple[int, list[dict], str, dict]:
    from ..certificates import write_all
    from ..heads.certificate import certificates_for
    from ..heads.output import plot, summary_lines, table_document, theorem3_summary, write_csv, write_json
    from ..heads.run import ModelRef, certificate_values, iter_sorted, register, run_dask, run_local, strip_private
    from ..io.outputs import probe_output_dir
    from ..io.text import echo, progress
    from ..models import load_model

    pre_norm = bool(getattr(args, "pre_norm_qk", False))
    model = load_model(spec, args.n_heads, args.n_kv_heads, name=_folder_name(spec), pre_norm_qk=pre_norm,
                       pre_softcap=bool(getattr(args, "pre_softcap", False)), layout=getattr(args, "layout", None))
    if layers is not None:
        bad = [l for l in layers if l >= model.n_layers]
        if bad:
            raise QKInputError(f"--layers: {model.name} has layers 0..{model.n_layers - 1}, not {bad[0]}")
    sel = getattr(args, "head_sel", None)
    if sel is not None:
        bad = [h for h in sel if h >= model.n_heads]
        if bad:
            raise QKInputError(f"--heads: {model.name} has heads 0..{model.n_heads - 1}, not {bad[0]}")
    if multi or not args.out:
        out = base / _slug(model.name)
    else:
        out = Path(args.out)
    probe_output_dir(out)
    meta = model.describe()
    meta["layers"] = layers if layers is not None else list(range(model.n_layers))
    if sel is not None:
        meta["heads"] = list(sel)
    ref = ModelRef(str(model.path), model.sha256, args.n_heads, args.n_kv_heads, model.name, pre_norm,
                   tuple(sorted(model.options.items())))
    register(ref, model)
    results: list[dict] = []
    n_cert = 0
    total = model.n_selected(layers) if sel is None else (len(meta["layers"]) * len(sel))
    bar = progress(total=total, unit="head", desc=model.name[:30], quiet=args.quiet or args.json)

    def existing(l: int, h: int):
        if args.force or args.no_certificates or args.no_resume:
            return None
        p = out / f"L{l:02d}H{h:02d}.json"
        return p if p.is_file() else None

    wdir = Path(model.path) if Path(model.path).is_dir() else Path(model.path).parent

    def on_result(res: dict) -> None:
        nonlocal n_cert
        if not args.no_certificates and not res.get("resumed"):
            res["values"] = certificate_values(res)
            r = res["row"]
            # the schema (the contract with the kernel) is checked on the run's first head; every head's
            # certificates have the same shape, and the per-head check cost more than the head itself
            # both written together: the text of what they share (cells witness, display row) is made once
            stem = f"L{r['layer']:02d}H{r['head']:02d}"
            write_all([(cert, out / f"{stem}{suffix}.json")
                       for suffix, cert in certificates_for(res, res["source"], res["values"], wdir, out)],
                      force=args.force, check_schema=n_cert == 0)
        if not args.no_certificates:
            n_cert += 1
        results.append(res)
        bar.update(1)

    t0 = time.perf_counter()
    try:
        if client is not None:
            run_dask(client, ref, model, layers, cfg, existing, on_result, heads=sel)
        else:
            run_local(ref, model, layers, cfg, args.jobs, existing, on_result, heads=sel)
    finally:
        bar.close()
    results = iter_sorted(results)
    rows = [strip_private(r["row"]) for r in results]
    resumed = sum(1 for r in results if r.get("resumed"))
    if not args.quiet and not args.json:
        dt = time.perf_counter() - t0
        sys.stderr.write(f"{len(rows)} heads in {dt:.2f} s ({1e3 * dt / max(len(rows), 1):.1f} ms/head wall)"
                         + (f"; {resumed} resumed from certificates" if resumed else "") + "\n")
    write_csv(rows, out / "heads.csv")
    write_json(rows, meta, out / "heads.json")
    files = [str(out / "heads.csv"), str(out / "heads.json")]
    if not args.no_plot:
        plot(rows, out / "heads.png", f"{model.name}: {len(rows)} heads (d_model = {model.d_model}, "
             f"d_head = {model.d_head})", model.d_model)
        files.append(str(out / "heads.png"))
    if not getattr(args, "no_report", False):
        from ..heads.report import model_data, write_report

        write_report(out / "report.html", [model_data(rows, model.name, model.d_model, model.d_head, "",
                                                      not args.no_certificates, meta)],
                     f"{model.name}: {len(rows)} heads (d_model = {model.d_model}, d_head = {model.d_head})")
        files.append(str(out / "report.html"))
    thm3, not_applicable = theorem3_summary(results)
    dis = [r for r in rows if r.get("float64_disagrees")]
    skipped = sorted({n for r in rows for n in str(r.get("notes", "")).split("; ") if "skipped" in n})
    notes = _model_notes(meta) + [f"note: {s}" for s in skipped[:3]]
    certs = (f" and the certificates of {n_cert} heads (Theorem 3 and Definition 6: LxxHyy.json, "
             "LxxHyy.profile.json)") if n_cert else ""
    if args.json:
        doc = table_document(rows, meta)
        doc.update({"theorem_3": {"summary": thm3, "certified": sum(1 for r in results if r["verdict"] == "holds"),
                                  "not_applicable": not_applicable},
                    "float64_compared": bool(getattr(args, "compare_float", False)),
                    "float64_disagrees": [f"L{r['layer']}H{r['head']}" for r in dis], "notes": notes,
                    "out": str(out), "files": files, "certificates": n_cert})
    else:
        doc = {}
        if not args.quiet:
            for line in summary_lines(rows):
                print(line)
        echo(*notes)
        compared = bool(getattr(args, "compare_float", False))
        echo(f"{model.name}: {len(rows)} heads. {thm3}.",
             (f"float64 (the authors' pipeline, display only) disagrees on {len(dis)}"
              + (": " + ", ".join(f"L{r['layer']}H{r['head']}" for r in dis[:10]) if dis else "")
              + (" …" if len(dis) > 10 else "")) if compared
             else "float64 pipeline not compared (--compare-float runs the authors' pipeline beside the heads)",
             f"wrote {out}/: heads.csv (every column), heads.json" + ("" if args.no_plot else ", heads.png")
             + ("" if getattr(args, "no_report", False) else ", report.html") + certs)
    bad = [r for r in results if r["verdict"] == "fails"]
    return (1 if bad else 0), rows, model.name, doc
