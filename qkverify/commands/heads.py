"""`qkverify heads [MODEL]`: certify every attention head of a model.

Per head (Theorem 3, Lemma 10, Def 6, Lemma 2): exact rank of M with a
minor witness, the exact signature (charpoly of ½JG + Descartes), certified
eigenvalue enclosures, a exactly, b, c, d as certified intervals with exact
face decisions, pairing quantities, and the authors' float64 pipeline beside
them with a flag wherever it would decide differently.  Writes a CSV and a
JSON table, one compact certificate per head and a PNG into
``certificates/heads/<model>/`` (or ``--out``).
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

from ..errors import QKInputError

NAME = "heads"
HELP = "certify every attention head of a model (default: all-MiniLM-L6-v2): signature, profile, pairing"


def add_arguments(p) -> None:
    """Register the options of ``qkverify heads`` on an argparse parser."""
    p.add_argument("model", nargs="?", default=None,
                   help="weights (.safetensors file/dir, .gguf, TransformerLens .npz) or a known model "
                        "(all-MiniLM-L6-v2 [default], SmolLM2-135M-Instruct)")
    p.add_argument("--out", default=None, help="output directory (default certificates/heads/<model>/)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--layers", default=None, help="layers to certify, e.g. 0,2,4-5 (default all)")
    p.add_argument("--digits", type=int, default=9,
                   help="relative width of the b, c, d enclosures is at most 10^-digits (default 9)")
    p.add_argument("--n-heads", type=int, default=None, help="head count for safetensors without config.json")
    p.add_argument("--n-kv-heads", type=int, default=None, help="KV head count (grouped-query) without config.json")
    p.add_argument("--pre-norm-qk", action="store_true",
                   help="accept a model that normalises q and k after the projections (q_norm/k_norm: Qwen3, "
                        "OLMo2, Gemma 3), whose score is not a fixed bilinear form, and analyse the "
                        "pre-normalisation W_Kᵀ W_Q (every output labels it score = pre_norm_qk); refused without")
    p.add_argument("--biaffine-vectors", action="store_true",
                   help="with query/key biases, write the exact linear terms W_Kᵀ b_Q and W_Qᵀ b_K in full into "
                        "heads.json (default: their exact squared norms and SHA-256)")
    p.add_argument("--exact-signature", choices=("all", "first", "none"), default="first",
                   help="exact charpoly(½JG)+Descartes signature on all heads, the first head only (default), or none "
                        "; other heads: exact rank witness + certified enclosures of the 2n nonzero eigenvalues")
    p.add_argument("--direct", choices=("first", "none", "all"), default="first",
                   help="also the direct N x N exact route (charpoly of S) on the first head (default), none or all")
    p.add_argument("--enclosure", choices=("fast", "arb"), default="fast",
                   help="verified eigenvalue route: float64 midpoint-radius (fast, default) or arb balls")
    p.add_argument("--cut", type=float, default=1e-9, help="relative eigenvalue cut of the float64 comparison (default 1e-9)")
    p.add_argument("--full-witness", action="store_true", help="put full charpoly coefficients in the certificates")
    p.add_argument("--no-certificates", action="store_true", help="tables and picture only")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG")
    p.add_argument("--force", action="store_true", help="replace different existing certificates")
    p.add_argument("--quiet", action="store_true", help="no table on stdout, no progress bar")


def _slug(name: str) -> str:
    """File-system-safe model name for the default output directory."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "model"


def default_out(model_name: str, root: str | Path = "certificates") -> Path:
    """The default output folder ``<root>/heads/<model slug>/``."""
    return Path(root) / "heads" / _slug(model_name)


def check_readable(spec: str | None) -> None:
    """Open every weights file a model spec names (a file, or the
    ``.safetensors``/``.gguf``/``.npz``/``config.json`` files of a folder)
    and read one byte, so that an unreadable file is a one-line error before
    any work.  Known model names are resolved the same way.  Raises
    QKInputError."""
    from ..models import resolve_model

    path, _ = resolve_model(spec)
    files = [path] if path.is_file() else sorted(
        f for f in path.iterdir() if f.suffix.lower() in (".safetensors", ".gguf", ".npz") or f.name == "config.json")
    for f in files:
        try:
            with open(f, "rb") as fh:
                fh.read(1)
        except OSError as err:
            raise QKInputError(f"{f}: cannot read ({err.strerror or err.__class__.__name__})") from None


def run(args) -> int:
    """Certify the model's heads and write tables, certificates and the PNG.

    Exit status 0 when every certified head satisfies Theorem 3 (or the
    theorem does not apply), 1 when a head contradicts it (a bug), 2 for bad
    input (QKInputError, raised by the loaders and option checks), an
    unreadable weights file or an unwritable output folder -- both found
    before any head is certified.  ``args.out_root`` (set by ``qkverify
    audit``, not a command-line option) replaces ``certificates`` in the
    default output folder."""
    from ..io.outputs import probe_output_dir
    from ..models import load_model, parse_layers

    if args.jobs < 1:
        raise QKInputError("--jobs must be at least 1")
    if not 1 <= args.digits <= 200:
        raise QKInputError("--digits must be between 1 and 200")
    if not 0 < args.cut < 1:
        raise QKInputError("--cut must be in (0, 1)")
    layers = parse_layers(args.layers)
    if args.out:
        probe_output_dir(args.out)
    check_readable(args.model)
    model = load_model(args.model, args.n_heads, args.n_kv_heads, pre_norm_qk=args.pre_norm_qk)
    if layers is not None:
        bad = [l for l in layers if l >= model.n_layers]
        if bad:
            raise QKInputError(f"--layers: {model.name} has layers 0..{model.n_layers - 1}, not {bad[0]}")
    out = Path(args.out) if args.out else default_out(model.name, getattr(args, "out_root", None) or "certificates")
    probe_output_dir(out)
    rows, results = certify_model(model, layers, args)
    meta = model.describe()
    meta["layers"] = layers if layers is not None else list(range(model.n_layers))
    from ..heads.output import plot, summary_lines, write_csv, write_json

    write_csv(rows, out / "heads.csv")
    write_json(rows, meta, out / "heads.json")
    n_cert = 0
    if not args.no_certificates:
        from ..certificates import write
        from ..heads.output import certificate_for

        for res, src in results:
            cert = certificate_for(res, src, meta)
            write(cert, out / f"L{res['row']['layer']:02d}H{res['row']['head']:02d}.json", force=args.force)
            n_cert += 1
    if not args.no_plot:
        plot(rows, out / "heads.png", f"{model.name}: {len(rows)} heads (N = {model.d_model}, n = {model.d_head})",
             model.d_model)
    if not args.quiet:
        for line in summary_lines(rows):
            print(line)
    for line in _model_notes(meta):
        print(line)
    dis = [r for r in rows if r.get("float64_disagrees")]
    holds = sum(1 for r, _ in results if r["verdict"] == "holds")
    print(f"{model.name}: {len(rows)} heads; Theorem 3 signature (n, n, N−2n) certified on {holds}; "
          f"float64 disagrees on {len(dis)}" + (": " + ", ".join(f"L{r['layer']}H{r['head']}" for r in dis) if dis else ""))
    print(f"wrote {out}/heads.csv, heads.json" + ("" if args.no_plot else ", heads.png")
          + (f", {n_cert} certificates" if n_cert else ""))
    bad = [r for r, _ in results if r["verdict"] == "fails"]
    return 1 if bad else 0


def _model_notes(meta: dict) -> list[str]:
    """What the analysed matrix is, when it is not the model's whole score."""
    out = []
    score = str(meta.get("score") or "")
    if "pre_norm_qk" in score:
        out.append(f"note: {meta.get('qk_norm')}: the score is not a fixed bilinear form; every head above is the "
                   "PRE-NORMALISATION W_Kᵀ W_Q (score = pre_norm_qk in heads.csv/heads.json)")
    if "biaffine" in score:
        out.append("note: query/key biases present: the score is biaffine (Lemma 1) and the analysis is of its "
                   "bilinear part W_Kᵀ W_Q; the linear terms and constant are per head in heads.json (biaffine)")
    return out


def _record_worker(args):  # top-level for pickling
    """Certify one head and add the loader's per-head columns (score,
    positional, layout, biaffine components) to its row."""
    from ..heads.certify import _worker

    rec, opt, vectors = args
    res = _worker((rec, opt))
    res["row"].update(rec.table_fields(vectors))
    return res


def certify_model(model, layers, args) -> tuple[list[dict], list[tuple[dict, dict]]]:
    """Run the per-head certification (optionally in a process pool) with a
    progress bar; returns (rows sorted by layer/head, [(result, source)])."""
    from tqdm import tqdm

    from ..heads.certify import HeadOptions

    total = model.n_selected(layers)
    vectors = bool(getattr(args, "biaffine_vectors", False))

    def opts(first: bool) -> HeadOptions:
        return HeadOptions(
            digits=args.digits, enclosure=args.enclosure,
            charpoly=args.exact_signature == "all" or (args.exact_signature == "first" and first),
            direct=args.direct == "all" or (args.direct == "first" and first),
            compare_float=True, full_witness=args.full_witness, cut=args.cut)

    results: list[tuple[dict, dict]] = []
    bar = tqdm(total=total, unit="head", disable=args.quiet or None, file=sys.stderr, desc=model.name[:30])
    first = True
    t0 = time.perf_counter()
    try:
        if args.jobs == 1:
            for rec in model.heads(layers):
                res = _record_worker((rec, opts(first), vectors))
                first = False
                results.append((res, rec.source))
                bar.update(1)
        else:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor, as_completed

            os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
            os.environ.setdefault("OMP_NUM_THREADS", "1")
            ctx = mp.get_context("spawn")
            with ProcessPoolExecutor(max_workers=args.jobs, mp_context=ctx) as ex:
                sel = list(range(model.n_layers)) if layers is None else layers
                for l in sel:
                    futs = {}
                    for rec in model.heads([l]):
                        futs[ex.submit(_record_worker, (rec, opts(first), vectors))] = rec.source
                        first = False
                    for f in as_completed(futs):
                        results.append((f.result(), futs[f]))
                        bar.update(1)
    finally:
        bar.close()
    results.sort(key=lambda t: (t[0]["row"]["layer"], t[0]["row"]["head"]))
    rows = [r["row"] for r, _ in results]
    if not args.quiet:
        dt = time.perf_counter() - t0
        sys.stderr.write(f"{len(rows)} heads in {dt:.2f} s ({1e3 * dt / max(len(rows), 1):.1f} ms/head wall)\n")
    return rows, results
