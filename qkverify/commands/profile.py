"""`qkverify profile FILE`: the exact profile π(L) = (a, b, c, d) (Def 6)."""

from __future__ import annotations

from ..io.inputs import load_input
from ..errors import QKInputError
from ..exact.rational import fmpq_str
from ..math.profile import compute_profile
from ._util import print_json

NAME = "profile"
HELP = "exact profile π(L) = (a,b,c,d) of a square matrix (or a head's L = W_Kᵀ W_Q)"


def add_arguments(p) -> None:
    p.add_argument("file", help="JSON (nested list, {\"L\": …}, {\"W_Q\": …, \"W_K\": …}) or .npy")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--digits", type=int, default=20, help="digits of the certified intervals (default 20)")
    p.add_argument("--padding", choices=("blueprint", "lean"), default="blueprint",
                   help="pad α, β to equal length (blueprint) or to length N (Lean)")


def run(args) -> int:
    if args.digits < 1 or args.digits > 10000:
        raise QKInputError("--digits must be between 1 and 10000")
    inp = load_input(args.file, "matrix")
    try:
        p = compute_profile(inp.L, args.padding)
    except QKInputError as err:
        raise QKInputError(f"{args.file}: {err}") from None
    out = p.to_json(args.digits)
    if args.json:
        print_json(out)
        return 0
    print(f"π(L) for a {p.N}x{p.N} matrix ({args.padding} padding); evidence: "
          + ("exact" if p.exact_complete else "exact decisions, certified values"))
    for k in "abcd":
        c = out[k]
        if c["exact"] is not None:
            s = c["exact"]
        elif c["algebraic"] is not None:
            s = f"root {c['algebraic']['root_index']} of {' '.join(c['algebraic']['poly'])} (ascending coeffs) ∈ [{c['interval'][0]}, {c['interval'][1]}]"
        else:
            s = f"∈ [{c['interval'][0]}, {c['interval'][1]}] (certified)"
        print(f"  {k} = {s}")
    th = out["Theta"]
    print("  in Θ = {a = b, cd = 0} (rank-one locus, Prop 4): "
          + {True: "yes", False: "no", None: "undecided"}[th["member"]])
    faces = [k for k, v in out["fibers"].items() if v]
    print("  on faces: " + (", ".join(faces) if faces else "none (interior)"))
    def ev(x):
        return fmpq_str(x.rational) if x.is_rational else x.to_arb(80).str(12, radius=False)

    print("  α (positive eigenvalues of S, padded): " + (", ".join(ev(x) for x in p.alpha) or "none"))
    print("  β (|negative eigenvalues| of S, padded): " + (", ".join(ev(x) for x in p.beta) or "none"))
    inn = out["inertia"]
    print(f"  inertia of S: ({inn['n_pos']}, {inn['n_neg']}, {inn['n_zero']})")
    return 0
