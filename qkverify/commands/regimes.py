"""`qkverify regimes [FILE | MODEL]`: which clustering regime (docs/MATH.md, Clustering regimes) applies.

* FILE, a triple ``{"Q": …, "K": …, "V": …}`` (same number formats as every input):
  V = ±I_d, QᵀK = I_d, QᵀK ≻ 0 (and its symmetric part alone), the spectrum of V, the
  top-eigenvalue condition, ⟨Qφ₁, Kφ₁⟩, good triple, paranormal V (λ, F, G), and the
  theorems of the regime table that apply with their limit geometry; one format-2
  certificate per definition statement (``--out``, default ``./qkverify-out/regimes/<file stem>/``).
* MODEL (default all-MiniLM-L6-v2; any weights the loaders read, e.g. the SmolLM2 GGUF):
  per head, the paper's check -- top-eigenvalue condition, λ₁, ⟨Qφ₁, Kφ₁⟩, good triple --
  with a CSV, a JSON table and one Definition 4.1 certificate per head
  (``./qkverify-out/regimes/<model>/``).

Exit status: 0 decided, 3 something undecided, 2 bad input.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .. import certificates
from ..errors import CertificateExists, QKInputError
from ..io.outputs import probe_output_dir
from ..exact.notation import root_str
from ..io.outputs import default_out
from ._util import CAPS, check_range, echo, parse_indices, print_json, progress, table

NAME = "regimes"
HELP = "clustering regimes of a triple (Q, K, V) or of every head of a model (good triples; docs/MATH.md)"
STATEMENTS = ("clusters_qk_positive_definite", "clusters_good_triple", "clusters_paranormal",
              "clusters_good_triple_multiplicity")


def add_arguments(p) -> None:
    """Options of ``qkverify regimes``."""
    p.add_argument("target", nargs="?", default=None,
                   help="a triple file {Q, K, V} (JSON / .npz), or weights / a known model "
                        "(all-MiniLM-L6-v2 [default], SmolLM2-135M-Instruct)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--out", default=None, help="output directory (default ./qkverify-out/regimes/<name>/)")
    p.add_argument("--no-cert", action="store_true", help="write no certificates")
    p.add_argument("--force", action="store_true", help="replace different existing certificates")
    p.add_argument("--layers", default=None, help="model: layers, e.g. 0,2,4-5 (default all)")
    p.add_argument("--heads", default=None, metavar="LIST",
                   help="model: heads within each selected layer, e.g. 0,3-5 (default all)")
    p.add_argument("--jobs", type=int, default=1, help=f"model: worker processes, 1..{CAPS['jobs']} (default 1)")
    p.add_argument("--quiet", action="store_true", help="model: no progress bar, no per-head lines")
    p.add_argument("--verify", action="store_true", help="model: re-check every certificate with the kernel")
    p.add_argument("--pre-norm-qk", action="store_true", help="model: accept q/k normalisation (see qkverify heads)")


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "model"


def _triple_doc(target: str | None):
    """The parsed document when ``target`` is a triple file (or ``-``, standard input), else None."""
    if target is None:
        return None
    if target == "-":
        from ..exact.rational import read_input_file

        doc = read_input_file("-")
        if isinstance(doc, dict) and {"Q", "K", "V"} <= set(doc):
            return doc
        raise QKInputError("-: a triple needs the keys Q, K and V (Q, K k x d, V d x d)")
    p = Path(target)
    if not p.is_file() or p.suffix.lower() not in (".json", ".npz", ".npy"):
        return None
    from ..exact.rational import read_input_file

    if p.suffix.lower() == ".npz":
        import zipfile

        import numpy as np

        try:
            with np.load(p, allow_pickle=False) as z:
                if not {"Q", "K", "V"} <= set(z.files):
                    return None
        except (OSError, ValueError, zipfile.BadZipFile):
            return None
    doc = read_input_file(p)
    if isinstance(doc, dict) and {"Q", "K", "V"} <= set(doc):
        return doc
    if p.suffix.lower() == ".json":
        raise QKInputError(f"{p}: a triple needs the keys Q, K and V (Q, K k x d, V d x d)")
    return None


def run(args) -> int:
    doc = _triple_doc(args.target)
    if doc is not None:
        return _run_triple(args, doc)
    return _run_model(args)


# ---------------------------------------------------------------------------
# a triple


def _ev(level_exact: bool) -> str:
    return "exact" if level_exact else "certified"


def _run_triple(args, doc) -> int:
    from ..claims.evaluate import evaluate
    from ..io.inputs import input_from_document
    from ..math import regimes as R

    inp = input_from_document(doc, "triple", str(args.target))
    stem = "stdin" if args.target == "-" else _slug(Path(args.target).stem)
    base = Path(args.out) if args.out else default_out("regimes", stem)
    if not args.no_cert:
        probe_output_dir(base)
    try:
        c = R.classify(R.Triple(inp.Q, inp.K, inp.V))
    except R.Undecided as err:
        raise QKInputError(f"{args.target}: the spectrum of V is out of reach ({err})") from None
    runs = {}
    for st in STATEMENTS:
        try:
            runs[st] = evaluate(st, inp)
        except QKInputError as err:  # nothing evaluable (undecided)
            runs[st] = err
    rec = {r.meta.check: r for run in runs.values() if not isinstance(run, QKInputError) for r in run.records}

    def val(check: str):
        r = rec.get(check)
        return None if r is None else {"value": r.result.value, "evidence": r.result.evidence}

    spec_exact = all(e.real for e in c.spectrum.eigs)
    d = c.definiteness
    par = c.paranormal
    regimes = []
    ev_top = _ev(spec_exact)
    for th in c.regimes():
        ev = {"3.1": "exact", "8.5": "exact", "4.2": rec["clusters.good_triple"].result.evidence,
              "5.2": _ev(spec_exact)}[th]
        regimes.append({"theorem": f"Theorem {th}", "limit": R.REGIMES[th], "evidence": ev})
    out = {
        "input": str(args.target), "d": inp.d, "k": inp.Q.nrows(),
        "regimes": regimes,
        "good_triple": {"value": c.good_triple, "evidence": rec["clusters.good_triple"].result.evidence
                        if "clusters.good_triple" in rec else ev_top},
        "top_eigenvalue": {"condition": c.top is not None,
                           "value": (val("clusters.top_eigenvalue") or {"value": None})["value"],
                           "root": _root(c), "evidence": ev_top},
        "qk_phi1": val("clusters.qk_phi1") or {
            "value": None, "evidence": ev_top if c.top is None else "undecided",
            "reason": "the top eigenvalue is not real, positive and simple" if c.top is None
            else "the enclosures do not decide"},
        "V_identity": {"value": c.V_identity, "evidence": "exact"},
        "V_minus_identity": {"value": c.V_minus_identity, "evidence": "exact"},
        "qk_identity": {"value": c.qk_identity, "evidence": "exact"},
        "qk_positive_definite": {"symmetric": d.symmetric, "symmetric_part_pd": d.sym_pd, "value": d.pd,
                                 "evidence": "exact"},
        "paranormal": None if par is None else {
            "value": par.holds, "evidence": _ev(spec_exact),
            "lambda": (val("clusters.paranormal_eigenvalue") or {"value": {"list": [None]}})["value"]["list"][0]
            if par.holds else None,
            "dim_F": par.dims[0] if par.holds else None, "dim_G": par.dims[1] if par.holds else None,
            "F": _columns(par.F), "G": _columns(par.G),
            "reason": par.reason},
        "eigenvalues": [{"value": _eig_str(c.spectrum, e), "multiplicity": e.mult, "real": e.real}
                        for e in c.spectrum.eigs],
        "notes": c.notes,
        "certificates": {},
    }
    if not args.no_cert:
        for st, run in runs.items():
            if isinstance(run, QKInputError):
                continue
            path = base / f"{st}.json"
            try:
                status = certificates.write(run.certificate({"name": "stdin" if args.target == "-" else
                                                             Path(args.target).name}), path, force=args.force)
            except CertificateExists:
                status = "refused (a different certificate exists; --force replaces it)"
            out["certificates"][st] = {"path": str(path), "status": status, "verdict": run.verdict}
    if args.json:
        print_json(out)
    else:
        _print_triple(out)
    return 3 if c.good_triple is None or (par is None) else 0


def _int_coeffs(g) -> list[int]:
    """The coefficients of a rational polynomial, scaled to coprime integers."""
    import math
    from fractions import Fraction

    cs = [Fraction(str(x)) for x in g.coeffs()]
    den = 1
    for c in cs:
        den = den * c.denominator // math.gcd(den, c.denominator)
    return [int(c * den) for c in cs]


def _eig_str(spectrum, e) -> str:
    """An eigenvalue in the one notation: p/q, root(poly, [lo, hi]) for an irrational real one,
    and ``re ± im·i`` (floats, display) for a non-real one."""
    if e.exact is not None:
        return str(e.exact)
    if e.real and e.lo is not None:
        try:
            return root_str(_int_coeffs(spectrum.factors[e.factor][0]), str(e.lo), str(e.hi))
        except ValueError:
            pass
    return e.describe()


def _root(c) -> dict | None:
    """λ₁ exactly: a rational, or the square-free factor of the characteristic polynomial it is
    a root of, with an isolating interval, and the notation root(poly, [lo, hi])."""
    if c.top is None:
        return None
    if c.top.exact is not None:
        return {"exact": str(c.top.exact), "value": str(c.top.exact)}
    g = c.spectrum.factors[c.top.factor][0]
    return {"poly": [str(x) for x in g.coeffs()], "interval": [str(c.top.lo), str(c.top.hi)],
            "value": _eig_str(c.spectrum, c.top)}


def _columns(X) -> list[list[str]] | None:
    """Basis vectors (the columns of X) as rows of exact strings."""
    if X is None:
        return None
    return [[str(x) for x in col] for col in X.transpose().tolist()] if X.ncols() else []


def _yn(b) -> str:
    return "undecided" if b is None else ("yes" if b else "no")


def _show(v: dict | None) -> str:
    if v is None:
        return "—"
    x = v["value"]
    body = x.get("exact") or ("[" + ", ".join(x["enclosure"]) + "]" if "enclosure" in x else json.dumps(x))
    return f"{body} [{v['evidence']}]"


def _print_triple(o: dict) -> None:
    echo(f"triple {o['input']}: d = {o['d']}, k = {o['k']}")
    echo(f"  V = I_d: {_yn(o['V_identity']['value'])}   V = −I_d: {_yn(o['V_minus_identity']['value'])}   "
          f"QᵀK = I_d: {_yn(o['qk_identity']['value'])}   [exact]")
    q = o["qk_positive_definite"]
    echo(f"  QᵀK ≻ 0: {_yn(q['value'])} (symmetric: {_yn(q['symmetric'])}, symmetric part PD: "
          f"{_yn(q['symmetric_part_pd'])}) [exact, LDLᵀ]")
    echo("  eigenvalues of V: " + ", ".join(f"{e['value']}" + (f" (×{e['multiplicity']})" if e["multiplicity"] > 1 else "")
                                             for e in o["eigenvalues"]))
    t = o["top_eigenvalue"]
    echo(f"  top eigenvalue real, positive, simple: {_yn(t['condition'])} [{t['evidence']}]"
          + (f"; λ₁ = {_show({'value': t['value'], 'evidence': t['evidence']})}" if t["value"] else ""))
    q1 = o["qk_phi1"]
    echo("  ⟨Qφ₁, Kφ₁⟩ (unit φ₁): " + (_show(q1) if q1["value"] else f"— ({q1['reason']})"))
    echo(f"  good triple: {_yn(o['good_triple']['value'])} [{o['good_triple']['evidence']}]")
    p = o["paranormal"]
    if p is None:
        echo("  paranormal: undecided (" + "; ".join(o["notes"]) + ")")
    else:
        extra = f": λ = {_show({'value': p['lambda'], 'evidence': p['evidence']})}, dim F = {p['dim_F']}, dim G = {p['dim_G']}" \
            if p["value"] else f" ({p['reason']})"
        echo(f"  paranormal: {_yn(p['value'])}{extra}")
    if o["regimes"]:
        for r in o["regimes"]:
            echo(f"  applies: {r['theorem']} [{r['evidence']}] -- {r['limit']}")
    else:
        echo("  no theorem of the regime table applies")
    for st, c in o["certificates"].items():
        echo(f"  certificate {st}: {c['path']} ({c['status']})")


# ---------------------------------------------------------------------------
# a model


def _classify(vh):
    from ..heads.regimes import classify_head

    return classify_head(vh)


def _run_model(args) -> int:
    from ..heads.regimes import CSV_COLUMNS
    from ..io.outputs import atomic_write_csv, atomic_write_json
    from ..models.values import open_value_model, parse_layers

    check_range("--jobs", args.jobs, 1, CAPS["jobs"])
    layers = parse_layers(args.layers)
    sel = parse_indices(args.heads, "--heads")
    model = open_value_model(args.target, pre_norm_qk=args.pre_norm_qk)
    if sel is not None and sel[-1] >= model.n_heads:
        raise QKInputError(f"--heads: {model.name} has heads 0..{model.n_heads - 1}, not {sel[-1]}")
    out = probe_output_dir(Path(args.out) if args.out else default_out("regimes", _slug(model.name)))
    rows, certs = [], {}
    per_head = not args.json and not args.quiet
    heads = [vh for vh in model.heads(layers) if sel is None or vh.head in sel]
    bar = progress(total=len(heads), desc="regimes", unit="head", quiet=args.quiet or args.json)

    def done(row, cert):
        rows.append(row)
        key = f"L{row['layer']:02d}H{row['head']:02d}"
        row["certificate"] = ""
        if cert is not None and not args.no_cert:
            path = out / f"{key}.json"
            try:
                certificates.write(cert, path, force=args.force)
            except CertificateExists:
                raise QKInputError(f"{path}: a different certificate exists; --force replaces it") from None
            row["certificate"] = str(path)
            certs[key] = path
        bar.update(1)

    if not args.json:
        echo(f"{model.name}: {model.n_layers} layers × {model.n_heads} heads, d_head = {model.d_head}, "
             f"d_model = {model.d_model}; V_m = W_O[:, m]·W_V[m, :] (biases dropped)")
    with bar:
        if args.jobs == 1:
            for vh in heads:
                done(*_classify(vh))
        else:
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(args.jobs) as pool:
                for row, cert in pool.map(_classify, heads, chunksize=1):
                    done(row, cert)
    atomic_write_csv(out / "regimes.csv", list(CSV_COLUMNS), [[r.get(k) for k in CSV_COLUMNS] for r in rows])
    good = sum(1 for r in rows if r["good_triple"] is True)
    top = sum(1 for r in rows if r["top_condition"] is True)
    und = sum(1 for r in rows if r["good_triple"] is None)
    summary = {"model": model.name, "heads": len(rows), "top_condition": top, "good_triples": good,
               "undecided": und, "csv": str(out / "regimes.csv"), "certificates": len(certs)}
    if args.verify and certs:
        from ..kernel import verify_file

        st = {}
        for key, path in certs.items():
            st[key] = verify_file(path, [str(Path(model.path).parent if Path(model.path).is_file() else model.path)])
        counts: dict[str, int] = {}
        for o in st.values():
            counts[o.status] = counts.get(o.status, 0) + 1
        summary["kernel"] = counts
        undecided = [o.reason for o in st.values() if o.status == "undecided"]
        if undecided:
            summary["kernel_note"] = undecided[0][:200]
    atomic_write_json(out / "regimes.json", json.loads(json.dumps({"summary": summary, "heads": rows}, default=str)))
    if args.json:
        print_json({"summary": summary, "heads": rows})
    else:
        shown = rows if len(rows) <= 24 else [r for r in rows if r["good_triple"] is not False]
        if per_head and shown:
            if len(shown) < len(rows):
                print(f"the {len(shown)} heads that are good triples or undecided (every head: {out / 'regimes.csv'}):")
            f = lambda x: f"{x:.6g}" if isinstance(x, float) else "—"  # noqa: E731
            print(table([[f"L{r['layer']:02d}H{r['head']:02d}", _yn(r["top_condition"]), _short(r["largest_eigenvalue"]),
                          f(r["abs_lambda2"]), f(r["qk_phi1"]), f(r["qk_phi1_scaled"]), _yn(r["good_triple"])]
                         for r in shown],
                        ["head", "top_condition", "largest_eigenvalue", "abs_lambda2", "qk_phi1", "qk_phi1_scaled",
                         "good_triple"]))
            ev = sorted({str(r["evidence"]) for r in shown})
            print("evidence: " + ", ".join(ev) + " (floats above are display values of certified enclosures)")
        echo(f"{model.name}: good triples {good} of {len(rows)} heads; top-eigenvalue condition holds for "
             f"{top}; undecided {und}",
             f"table: {out / 'regimes.csv'}; {len(certs)} certificates in {out}/")
        if "kernel" in summary:
            echo("kernel: " + ", ".join(f"{k} {v}" for k, v in sorted(summary["kernel"].items()))
                 + (f" ({summary['kernel_note']})" if "kernel_note" in summary else ""))
    return 3 if und else 0


def _short(x) -> str:
    """A display float (or complex ``a+bi``) written with 6 significant digits."""
    m = re.fullmatch(r"([-+]?[0-9.eE+-]+?)([-+][0-9.eE+-]+)i", str(x))
    try:
        if m:
            return f"{float(m.group(1)):.6g}{float(m.group(2)):+.6g}i"
        return f"{float(x):.6g}"
    except ValueError:
        return str(x)


def _row_line(r: dict) -> str:
    f = lambda x, w: f"{x:>{w}.6g}" if isinstance(x, float) else f"{'—':>{w}}"  # noqa: E731
    return (f"L{r['layer']:02d}H{r['head']:02d} {_yn(r['top_condition']):>20} {r['largest_eigenvalue']:>30} "
            f"{f(r['abs_lambda2'], 10)} {f(r['qk_phi1'], 12)} {f(r['qk_phi1_scaled'], 10)} "
            f"{_yn(r['good_triple']):>5}  {r['evidence']}")
