"""Built-in §1 inputs (attention functions, biaffine scores, forms, transformers): exact
instances chosen so that every declaration is evaluated, and some on inputs where a
definition's value is false or a hypothesis fails.

* Rational rotations: cos/sin from Pythagorean triples (3,4,5), (5,12,13), (8,15,17), so the
  RoPE forms B_d(u, v) = ⟨R^d W_K u, W_Q v⟩ are rational and T_d = S^d is exact.
* ALiBi: the distance penalty −m·d is the constant term D of a biaffine score (Lemma 1); on the
  bilinear parts alone the forms do not depend on d (T_d = 1: RoPE-like with S = 1, the position
  is invisible to Definition 3); homogenised with an offset c (B̂_d = diag(G, c − m·d)) the
  family is not RoPE-like for k ≥ 3 (the penalty is affine in d, not multiplicative); with c = 0
  B̂_0 is degenerate and Definition 3 does not apply.
"""

from __future__ import annotations

from flint import fmpq, fmpq_mat

from ..exact.matrix import to_str_rows
from ..io.attention_inputs import KindInput, make_input
from ..math.attention import rope_forms, rotation

PYTHAGOREAN = [(fmpq(3, 5), fmpq(4, 5)), (fmpq(5, 13), fmpq(12, 13)), (fmpq(8, 17), fmpq(15, 17))]


def _m(rows) -> fmpq_mat:
    return fmpq_mat([[fmpq(*map(int, str(x).split("/"))) if "/" in str(x) else fmpq(int(x)) for x in r] for r in rows])


def rope_instance(W_Q, W_K, pairs, cs, k: int) -> dict:
    """The ``forms`` document of B_d(u, v) = ⟨R^d W_K u, W_Q v⟩, d < k, with the predicted S."""
    WQ, WK = _m(W_Q), _m(W_K)
    R = rotation(pairs, cs, WQ.nrows())
    Gs, S = rope_forms(WQ, WK, R, k)
    return {"kind": "forms", "B": [to_str_rows(G) for G in Gs], "S": to_str_rows(S)}


def _alibi(G, c, m, k: int) -> dict:
    G = _m(G)
    n = G.nrows()
    Bs = []
    for d in range(k):
        H = fmpq_mat(n + 1, n + 1)
        for i in range(n):
            for j in range(n):
                H[i, j] = G[i, j]
        H[n, n] = fmpq(c) - fmpq(m) * d
        Bs.append(to_str_rows(H))
    return {"kind": "forms", "B": Bs}


def _af(scores, potential, weights, k=3, N=2) -> dict:
    return {"kind": "attention_function", "k": k, "N": N, "scores": scores, "potential": potential, "weights": weights}


BIL = ["x0_0*x2_0 + 2*x0_1*x2_1", "x1_0*x2_0 + 2*x1_1*x2_1", "x2_0*x2_0 + 2*x2_1*x2_1"]

DOCS = {
    # Definition 3 / Proposition 1
    "rope_rational_2x2_k5": rope_instance([[1, 0], [0, 1]], [[1, 0], [0, 1]], [(0, 1)], PYTHAGOREAN[:1], 5),
    "rope_rational_two_pairs_k6": rope_instance([[2, 1, 0, 0], [0, 1, 0, 1], [1, 0, 1, 0], [0, 0, 1, 3]],
                                                [[1, 0, 1, 0], [0, 2, 0, 0], [1, 1, 2, 0], [0, 0, 0, 1]],
                                                [(0, 1), (2, 3)], PYTHAGOREAN[1:], 6),
    "rope_rational_three_pairs_k4": rope_instance([[1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 1, 0, 0, 1],
                                                   [0, 0, 0, 1, 0, 0], [1, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1]],
                                                  [[1, 1, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0],
                                                   [0, 0, 0, 1, 1, 0], [0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1]],
                                                  [(0, 3), (1, 4), (2, 5)], PYTHAGOREAN, 4),
    "alibi_bilinear_parts_k4": {"kind": "forms", "B": [[["1", "2"], ["0", "1"]]] * 4, "S": [["1", "0"], ["0", "1"]]},
    "alibi_homogenised_offset_k4": _alibi([[1, 2], [0, 1]], 1, "1/2", 4),
    "alibi_homogenised_no_offset_k3": _alibi([[1, 2], [0, 1]], 0, "1/2", 3),
    "forms_not_rope_like_k3": {"kind": "forms", "B": [[["1", "0"], ["0", "1"]], [["1", "1"], ["0", "1"]], [["0", "1"], ["1", "0"]]],
                               "S": [["1", "1"], ["0", "1"]]},
    # Definitions 1 and 2
    "softmax_bilinear_k3": _af(BIL, {"log_sum_exp": "1"}, {"softmax": {"scores": [f"{s} + x2_0**2" for s in BIL], "tau": "1"}}),
    "softmax_wrong_weights_k3": _af(BIL, {"log_sum_exp": "1"}, {"softmax": {"scores": ["x0_0*x2_0", "x1_0", "0"], "tau": "1"}}),
    "softmax_temperature_2": _af(BIL, {"log_sum_exp": "2"}, {"softmax": {"scores": BIL, "tau": "2"}}),
    "uniform_linear_potential": _af(["x0_0 + x1_1", "x2_0**3", "1"], {"quadratic": {"Q": [["0"] * 3] * 3, "b": ["1/3"] * 3}},
                                    {"polynomial": ["1/3", "1/3", "1/3"]}),
    "quadratic_indefinite": _af(BIL, {"quadratic": {"Q": [["1", "0", "0"], ["0", "-1", "0"], ["0", "0", "0"]], "b": ["0", "0", "1"]}},
                                {"polynomial": [BIL[0], f"-({BIL[1]})", "1"]}),
    "user_potential_quartic": _af(BIL, {"expression": "s0**4 + s1**2 + 2*s2**2"},
                                  {"polynomial": ["0", "0", "1"]}),
    "negative_temperature": _af(BIL, {"log_sum_exp": "-1"}, {"softmax": {"scores": BIL, "tau": "-1"}}),
    "rational_score": _af(["1/(1 + x0_0**2)", "x1_0*x2_0", "x2_0*x2_1"], {"log_sum_exp": "1"},
                          {"softmax": {"scores": ["1/(1 + x0_0**2)", "x1_0*x2_0", "x2_0*x2_1"], "tau": "1"}}),
    # Lemma 1
    "biaffine_hand_N2": {"kind": "biaffine", "N": 2, "P": "2*u0*v1 - u1*v0 + 3*u0 - v1/2 + 5",
                         "decomposition": {"B": [["0", "2"], ["-1", "0"]], "L": ["3", "0"], "R": ["0", "-1/2"], "D": "5"}},
    "biaffine_alibi_distance_3": {"kind": "biaffine", "N": 2, "P": "u0*v0 + 2*u0*v1 + u1*v1 - 3*(1/2)",
                                  "decomposition": {"B": [["1", "2"], ["0", "1"]], "L": ["0", "0"], "R": ["0", "0"], "D": "-3/2"}},
    "biaffine_qk_bias_N2": {"kind": "biaffine", "N": 2, "P": "(u0 + 1)*(v0 - 2*v1) + (u1 - 1/3)*(v1 + 1)"},
    "biaffine_wrong_decomposition": {"kind": "biaffine", "N": 1, "P": "u0*v0 + u0",
                                     "decomposition": {"B": [["1"]], "L": ["0"], "R": ["1"], "D": "0"}},
    "bidegree_2_1": {"kind": "biaffine", "N": 2, "P": "u0**2*v0 + u1"},
}

#: transformers (Definitions 4–5, Propositions 2–3)
_WQ, _WK = [["1", "0"], ["1/2", "1"]], [["0", "1"], ["1", "-1"]]
_X = [["1", "0"], ["1/2", "-1"], ["-1", "2"]]
_MLP = {"W_1": [["1", "-1"], ["2", "0"], ["0", "1"]], "W_2": [["1", "0", "-1"], ["1/2", "1", "0"]], "act": "relu"}
TRANSFORMERS = {
    "two_heads_relu_l2": {"kind": "transformer", "x": _X, "norm": "l2", "L": "4", "M": _MLP, "squarings": 3,
                          "heads": [{"W_Q": _WQ, "W_K": _WK, "W_V": [["1", "0"], ["0", "1"]], "W_O": [["1/2", "0"], ["0", "1/2"]]},
                                    {"W_Q": [["1", "1"]], "W_K": [["2", "0"]], "scale": "1/2", "W_V": [["1", "2"]],
                                     "W_O": [["1"], ["-1"]]}]},
    "two_heads_relu_linf": {"kind": "transformer", "x": _X, "norm": "linf", "L": "9", "M": _MLP,
                            "heads": [{"W_Q": _WQ, "W_K": _WK, "W_V": [["1", "0"], ["0", "1"]], "W_O": [["1/2", "0"], ["0", "1/2"]]},
                                      {"weights": [["1/2", "1/2", "0"], ["1/3", "1/3", "1/3"], ["0", "0", "1"]],
                                       "W_V": [["1", "2"]], "W_O": [["1"], ["-1"]]}]},
    "causal_head_gelu_l2": {"kind": "transformer", "x": _X, "norm": "l2", "L": "7/2",
                            "M": {"W_1": [["1", "1"], ["0", "1"]], "W_2": [["1", "0"], ["-1", "1"]], "act": "gelu"},
                            "heads": [{"W_Q": _WQ, "W_K": _WK, "causal": True, "W_V": [["1", "0"], ["1", "1"]],
                                       "W_O": [["1", "0"], ["0", "1"]]}]},
    "fixed_weights_not_convex": {"kind": "transformer", "x": _X, "norm": "linf", "L": "0", "M": None,
                                 "heads": [{"weights": [["1", "0", "0"], ["2", "-1", "0"], ["0", "1", "0"]], "causal": True,
                                            "W_V": [["1", "0"], ["0", "1"]], "W_O": [["1", "0"], ["0", "1"]]}]},
    "mlp_with_bias": {"kind": "transformer", "x": _X, "norm": "l2", "L": "100",
                      "M": dict(_MLP, b_2=["1", "0"]),
                      "heads": [{"W_Q": _WQ, "W_K": _WK, "W_V": [["1", "0"], ["0", "1"]], "W_O": [["1", "0"], ["0", "1"]]}]},
    "qkv_positions_n4": {"kind": "transformer", "x": [["1", "0", "2"], ["0", "1", "-1"], ["1/2", "1", "0"]], "norm": "l2",
                         "L": "4", "M": {"W_1": [["1", "0", "0"], ["0", "1", "1"]], "W_2": [["1", "0"], ["0", "1"], ["1", "-1"]],
                                         "act": "relu"},
                         "positions": [["0", "0", "1"], ["1", "0", "0"], ["0", "1", "0"]], "alpha": ["2", "1/2", "-1"],
                         "heads": [{"W_Q": [["1", "0", "1"], ["0", "1", "0"], ["1", "1", "0"], ["0", "0", "1"]],
                                    "W_K": [["0", "1", "0"], ["1", "0", "1"], ["0", "0", "2"], ["1", "1", "1"]], "causal": True,
                                    "W_V": [["1", "0", "0"], ["0", "1", "0"], ["0", "0", "1"]],
                                    "W_O": [["1/2", "0", "0"], ["0", "1/2", "0"], ["0", "0", "1/3"]]}]},
    "qkv_positions_n2": {"kind": "transformer", "x": _X, "norm": "linf", "L": "2",
                         "M": {"W_1": [["1", "0"], ["0", "1"]], "W_2": [["1", "0"], ["0", "1"]], "act": "identity"},
                         "positions": [["1", "0"], ["0", "1"], ["1", "1"]], "alpha": ["3", "1", "0"],
                         "heads": [{"W_Q": _WQ, "W_K": _WK, "causal": True, "W_V": [["1", "0"], ["0", "1"]],
                                    "W_O": [["1", "0"], ["0", "1"]]}]},
}


def cases() -> list[tuple[str, KindInput]]:
    """All §1 suite inputs as (name, input)."""
    return [(name, make_input(doc, name)) for name, doc in {**DOCS, **TRANSFORMERS}.items()]


__all__ = ["cases", "rope_instance", "DOCS", "TRANSFORMERS"]
