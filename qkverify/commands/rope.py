"""`qkverify rope MODEL|FILE`: Definition 3 and Proposition 1 (RoPE-like forms) on a real head or
on a ``forms`` file.  Exit 0 when the head read with its convention satisfies T_d = S^d for d < k
and the other pairing fails it (or the file's statements hold), 1 otherwise, 3 undecided,
2 bad input."""

from __future__ import annotations

from pathlib import Path

from .. import certificates
from ..errors import QKInputError
from ..io.outputs import default_out
from ._util import CAPS, check_range, echo, print_json

NAME = "rope"
HELP = "RoPE-like check (Def 3, Prop 1) of a real head (T_d = S^d, both pairings) or of a forms file"


def add_arguments(p) -> None:
    p.add_argument("target", help="model name or weights path (GGUF / safetensors), or a JSON forms input "
                                  "(- reads it from standard input)")
    p.add_argument("--layer", type=int, default=0, help="layer of the real head (default 0)")
    p.add_argument("--head", type=int, default=0, help="head of the real head (default 0)")
    p.add_argument("--k", type=int, default=8,
                   help=f"number of distances d = 0 … k−1, 1..{CAPS['k']} (default 8)")
    p.add_argument("--pairing", choices=("half_split", "interleaved"),
                   help="read the head with this pairing only (default: the loader's, then the other one)")
    p.add_argument("--out", help="folder of the certificates (default ./qkverify-out/rope)")
    p.add_argument("--no-cert", action="store_true", help="do not write certificates")
    p.add_argument("--force", action="store_true", help="replace different existing certificates")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _write(runs, out: str | None, name: str, force: bool) -> list[str]:
    """Write each run's certificate to ``out/<statement>/<name>.json`` (nothing when ``out`` is None)."""
    paths = []
    for run in runs if out else []:
        path = Path(out) / run.statement.id / f"{name}.json"
        certificates.write(run.certificate({"name": name}), path, force=force)
        paths.append(str(path))
    return paths


def _forms(args) -> int:
    from ..claims.evaluate import evaluate
    from ..io.inputs import load_input

    inp = load_input(args.target)
    if inp.kind2 not in ("forms", "rope_weights"):
        raise QKInputError(f"{args.target}: a forms or rope_weights input is needed, not {inp.kind2}")
    runs = []
    # a real head (rope_weights) has no exact T_d: only Proposition 1's S = T_1 is evaluated there
    for st in ("IsRoPELike", "isRoPELike_iff") if inp.kind2 == "forms" else ("isRoPELike_iff",):
        try:
            runs.append(evaluate(st, inp))
        except QKInputError as err:
            if inp.kind2 == "forms" and "h0" in str(err):
                raise QKInputError(f"{args.target}: B_0 is singular, so L_0 has no inverse and T_d = L_0⁻¹ L_d "
                                   "is not defined (Definition 3 needs B_0 nondegenerate)") from None
            raise
    paths = _write(runs, args.out, "stdin" if args.target == "-" else Path(args.target).stem, args.force)
    recs = [r for run in runs for r in run.records]
    from ..claims.evaluate import verdict_of

    verdict = verdict_of([r.conclusion for r in recs])
    if args.json:
        print_json({"target": args.target, "verdict": verdict, "declarations": [r.to_json() for r in recs],
                    "certificates": paths})
    else:
        for r in recs:
            v = r.result.value
            extra = f" (value: {str(v['bool']).lower()})" if v and "bool" in v else ""
            print(f"  {r.meta.check}: {r.conclusion} [{r.result.evidence}]{extra}")
        print(f"{args.target}: {verdict}" + (f"; certificates in {args.out}/" if paths else ""))
    return {"holds": 0, "consistent": 0, "inconsistent": 0, "fails": 1, "undecided": 3}[verdict]


def run(args) -> int:
    from ..models.rope import check_head

    check_range("--k", args.k, 1, CAPS["k"])
    if args.layer < 0 or args.head < 0:
        raise QKInputError("--layer and --head must be at least 0")
    if args.no_cert:
        args.out = None
    elif args.out is None:
        args.out = str(default_out("rope"))
    if args.out:
        from ..io.outputs import probe_output_dir

        probe_output_dir(args.out)
    p = Path(args.target)
    if args.target == "-" or (p.is_file() and p.suffix == ".json"):
        return _forms(args)
    res = check_head(args.target, args.layer, args.head, args.k, args.pairing)
    info, ok = res["info"], True
    paths = []
    for i, rd in enumerate(res["readings"]):
        name = f"{info['model']}_L{args.layer:02d}H{args.head:02d}_{rd['pairing']}_k{args.k}"
        paths += _write(rd["runs"], args.out, name, args.force)
        want = "holds" if i == 0 else "fails"
        ok = ok and rd["verdict"] == want
    if args.json:
        print_json({"model": info["model"], "layer": args.layer, "head": args.head, "kv_head": info["kv_head"],
                    "d_head": info["n"], "d_model": info["N"], "k": args.k,
                    "runtime": res["input"]["runtime"], "cols": res["input"]["cols"],
                    "readings": [{"pairing": rd["pairing"], "reading": rd["reading"], "T_d_eq_S_pow_d": rd["verdict"],
                                  "evidence": rd["evidence"], "numbers": rd["numbers"],
                                  "declarations": [r.to_json() for run in rd["runs"] for r in run.records]}
                                 for rd in res["readings"]], "ok": ok, "certificates": paths})
        return 0 if ok else 1
    rt = res["input"]["runtime"]
    echo(f"{info['model']}, layer {args.layer}, head {args.head} (kv_head {info['kv_head']}): d_head = {info['n']}, "
         f"d_model = {info['N']}, distances d = 0 … {args.k - 1}",
         f"runtime rotation R_d: {rt['pairing']} pairs of the stored rows, base {rt['base']}, "
         f"{rt['rotary_dim']} rotary dimensions; forms B_d(u, v) = ⟨R_d W_K u, W_Q v⟩ on the "
         f"{len(res['input']['cols'])} coordinates of H where B_0 is nondegenerate")
    # Definition 3 and Proposition 1 are about the score function, the same whatever reading of the rows
    fn = {}
    for rd in res["readings"]:
        for run in rd["runs"]:
            for rec in run.records:
                if rec.meta.check != "eq_ropeT_one_of_forall":
                    v = rec.result.value  # a definition shows its value
                    extra = f" (value: {str(v['bool']).lower()})" if v and "bool" in v else ""
                    fn.setdefault(rec.meta.check, set()).add((rec.conclusion, rec.result.evidence, extra))
    print("the score function (the same for every reading of the rows):")
    for check, got in fn.items():
        label = {"IsRoPELike": "Definition 3, T_{d+e} = T_d T_e", "isRoPELike_iff": "Proposition 1"}.get(check, "")
        print(f"  {check} ({label}): " + "; ".join(f"{c} [{e}]{x}" for c, e, x in sorted(got)))
    if not fn:
        echo("  IsRoPELike (Definition 3) and isRoPELike_iff (Proposition 1): not evaluated on a real head: "
             "T_d = B_0⁻¹ B_d has transcendental entries (cos dθ, sin dθ) and an equality of reals is never "
             "decided by enclosures; `qkverify rope FORMS.json` evaluates both on rational forms")
    print(f"each reading's rotation S against T_1 = L_0⁻¹ L_1 (eq_ropeT_one_of_forall: T_d = S^d for d < {args.k}):")
    for i, rd in enumerate(res["readings"]):
        nums = rd["numbers"]
        who = "the loader's reading" if i == 0 and args.pairing is None else (
            "the other pairing" if i else "the pairing asked for")
        line = f"  {rd['pairing']} ({who}): T_d = S^d {rd['verdict']} [{rd['evidence']}]"
        if nums.get("separated_entries_of_T1_minus_S"):
            ex = nums["example"]
            line += (f": {nums['separated_entries_of_T1_minus_S']} entries of T_1 − S exclude 0, e.g. entry "
                     f"({ex['entry'][0]}, {ex['entry'][1]}): T_1 ≈ {ex['T1']}, S ≈ {ex['S']}")
        elif rd["verdict"] != "holds" and nums.get("max_abs_T_d_minus_S_pow_d_upper"):
            line += f": max |T_d − S^d| ≤ {nums.get('max_abs_T_d_minus_S_pow_d_upper')}"
        echo(line)
    if len(res["readings"]) > 1:
        verdict = ("the loader's reading passes and the other pairing fails, as it must" if ok else
                   "FAILED: the loader's reading should pass and the other pairing fail")
    else:
        verdict = "holds" if ok else "FAILS"
    echo("result: " + verdict + (f"; certificates in {args.out}/" if paths else ""))
    return 0 if ok else 1
