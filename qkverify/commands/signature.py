"""`qkverify signature FILE`: exact inertia of a symmetric matrix or of a
head's form S = sym_part(W_Kᵀ W_Q) (Theorem 3)."""

from __future__ import annotations

from ..claims.common import inertia_both
from ..io.inputs import HeadInput, input_from_document
from ..errors import QKInputError
from ..exact.matrix import is_symmetric, sym_part
from ..exact.rational import read_input_file
from ._util import print_json

NAME = "signature"
HELP = "exact signature (n_pos, n_neg, n_zero) of a symmetric matrix or of a head's symmetric form"


def add_arguments(p) -> None:
    p.add_argument("file", help="symmetric matrix (JSON / .npy) or a head {\"W_Q\": …, \"W_K\": …}; - reads "
                                "standard input")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def run(args) -> int:
    doc = read_input_file(args.file)
    inp = input_from_document(doc, None, args.file)
    if isinstance(inp, HeadInput):
        S = sym_part(inp.L)
        what = f"head form S = sym_part(W_Kᵀ W_Q), d_model = {inp.N}, d_head = {inp.n}"
    else:
        S = inp.L
        if not is_symmetric(S):
            raise QKInputError(f"{args.file}: matrix is not symmetric (give a symmetric matrix or a head)")
        what = f"symmetric {S.nrows()}×{S.nrows()} matrix"
    inn, _ = inertia_both(S, "S", S.nrows() <= 48)
    methods = "charpoly + Descartes, LDLᵀ" if S.nrows() <= 48 else "charpoly + Descartes"
    if args.json:
        print_json(dict(inn.to_json(), evidence="exact", methods=methods))
    else:
        print(f"signature (n_pos, n_neg, n_zero) = ({inn.n_pos}, {inn.n_neg}, {inn.n_zero})  [exact]")
        print(f"  of the {what}")
        print(f"  methods: {methods}")
    return 0
