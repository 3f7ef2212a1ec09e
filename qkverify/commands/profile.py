"""`qkverify profile FILE`: the exact profile π(L) = (a, b, c, d) (Def 6)."""

from __future__ import annotations

from ..errors import QKInputError
from ..exact.notation import algebraic_str, root_str
from ..io.inputs import load_input
from ..math.profile import compute_profile
from ._util import echo, print_json

NAME = "profile"
HELP = "exact profile π(L) = (a,b,c,d) of a square matrix (or a head's L = W_Kᵀ W_Q)"


def add_arguments(p) -> None:
    p.add_argument("file", help="JSON (nested list, {\"L\": …}, {\"W_Q\": …, \"W_K\": …}), .npy or .npz; "
                                "- reads standard input")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--digits", type=int, default=20, help="digits of the certified intervals, 1..10000 (default 20)")
    p.add_argument("--padding", choices=("blueprint", "lean"), default="blueprint",
                   help="pad α, β to equal length (blueprint) or to length N (Lean)")


def _value(c: dict) -> dict:
    """A coordinate's JSON with its value in the one notation (``value``: p/q or
    root(poly, [lo, hi])) and a float beside it (display only)."""
    from fractions import Fraction

    if c["exact"] is not None:
        v = c["exact"]
        f = float(Fraction(v))
    elif c.get("algebraic") is not None:
        alg = c["algebraic"]
        v = root_str([int(x) for x in alg["poly"]], *alg["interval"])
        f = float((Fraction(c["interval"][0]) + Fraction(c["interval"][1])) / 2)
    else:
        v = None
        f = float((Fraction(c["interval"][0]) + Fraction(c["interval"][1])) / 2)
    return dict(c, value=v, float=f)


def run(args) -> int:
    if args.digits < 1 or args.digits > 10000:
        raise QKInputError("--digits must be between 1 and 10000")
    inp = load_input(args.file, "matrix")
    try:
        p = compute_profile(inp.L, args.padding)
    except QKInputError as err:
        raise QKInputError(f"{args.file}: {err}") from None
    raw = p.to_json(args.digits)
    out = {"d_model": raw.pop("N"), **raw}
    for k in "abcd":
        out[k] = _value(out[k])
    out["alpha"] = [dict(e, value=algebraic_str(x)) for e, x in zip(out["alpha"], p.alpha)]
    out["beta"] = [dict(e, value=algebraic_str(x)) for e, x in zip(out["beta"], p.beta)]
    out["evidence"] = "exact" if p.exact_complete else "certified"
    if args.json:
        print_json(out)
        return 0
    print(f"π(L) for a {p.N}×{p.N} matrix ({args.padding} padding); evidence: "
          + ("exact" if p.exact_complete else "exact decisions, certified values"))
    for k in "abcd":
        c = out[k]
        if c["value"] is None:
            s = f"∈ [{c['interval'][0]}, {c['interval'][1]}] (certified)"
        elif c["exact"] is not None:
            s = c["value"]
        else:
            s = f"{c['value']} ≈ {c['float']:.12g}"
        echo(f"  {k} = {s}")
    th = out["Theta"]
    print("  in Θ = {a = b, cd = 0} (rank-one locus, Prop 4): "
          + {True: "yes", False: "no", None: "undecided"}[th["member"]])
    faces = [k for k, v in out["fibers"].items() if v]
    print("  on faces: " + (", ".join(faces) if faces else "none (interior)"))

    def ev(x):
        return algebraic_str(x, approx_digits=None if x.is_rational else 8)

    for name, xs in (("α (positive eigenvalues of S, padded)", p.alpha),
                     ("β (|negative eigenvalues| of S, padded)", p.beta)):
        line = f"  {name}: " + (", ".join(ev(x) for x in xs) or "none")
        if len(line) <= 100:
            print(line)
        else:
            print(f"  {name}:")
            echo(*(f"    {ev(x)}" for x in xs))
    inn = out["inertia"]
    print(f"  inertia of S: ({inn['n_pos']}, {inn['n_neg']}, {inn['n_zero']})")
    return 0
