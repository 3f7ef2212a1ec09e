"""Inputs of the §1 statements (certificate format 2 input kinds).

Each input is the JSON object the certificate records, normalised to exact
text (``"p/q"`` rationals, integers where the schema has integers) and
validated against its ``$defs`` entry of the shipped schema, so a bad file is
refused with one line naming the problem:

* ``attention_function`` -- Definitions 1 and 2: ``k``, ``N``, ``scores`` (k
  expressions in the coordinates ``x{j}_{c}``), ``potential``
  (``{"log_sum_exp": τ}`` or ``{"quadratic": {"Q", "b"}}``) and ``weights``
  (``{"softmax": {"scores", "tau"}}`` or ``{"polynomial": [...]}``);
* ``biaffine`` -- Lemma 1: ``N``, ``P`` (an expression in ``u{a}``, ``v{b}``),
  optionally a ``decomposition`` ``{"B", "L", "R", "D"}``;
* ``forms`` -- Definition 3 / Proposition 1: ``B`` (the Gram matrices of
  B_0 … B_{k−1}), optionally a candidate ``S``;
* ``rope_weights`` -- a real RoPE head named by file, SHA-256, tensors and rows;
* ``transformer`` -- Definitions 4–5, Propositions 2–3: tokens ``x``, ``heads``,
  the network ``M``, the constant ``L``, the ``norm`` on C, optionally
  ``positions`` and ``alpha`` (Proposition 3), ``file``/``sha256`` when
  matrices name tensors.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import QKInputError
from ..exact.rational import fmpq_str, parse_rational

KINDS = ("attention_function", "biaffine", "forms", "rope_weights", "transformer")
#: keys whose values are integers (or lists of integers) in the schema
INT_KEYS = {"k", "N", "rotary_dim", "squarings", "rows", "cols"}
#: keys whose string values are text, never numbers
TEXT_KEYS = {"P", "scores", "polynomial", "file", "sha256", "kind", "norm", "act", "pairing", "tensor", "name",
             "format"}
SCHEMA = Path(__file__).resolve().parents[1] / "schema" / "certificate.schema.json"


@functools.lru_cache(maxsize=1)
def _schema() -> dict:
    return json.loads(SCHEMA.read_text(encoding="utf-8"))


def _norm(x: Any, key: str = "", where: str = "input") -> Any:
    """Numbers to exact text ("p/q"), or to ints under INT_KEYS; other strings, bools and None kept."""
    if isinstance(x, dict):
        return {k: _norm(v, k, f"{where}.{k}") for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_norm(v, key, f"{where}[{i}]") for i, v in enumerate(x)]
    if isinstance(x, bool) or x is None:
        return x
    if type(x) is str:  # a JSON string: a rational like "3/4", or text (names, expressions)
        if key in TEXT_KEYS:
            return x
        try:
            q = parse_rational(x, where)
        except QKInputError:
            return x
    else:
        q = parse_rational(x, where)
    if key in INT_KEYS:
        if q.q != 1:
            raise QKInputError(f"{where}: {x!r} is not an integer")
        return int(q.p)
    return fmpq_str(q)


@dataclass(frozen=True)
class KindInput:
    """One §1 input: ``doc`` is the certificate's input object (validated)."""

    kind2: str
    doc: dict
    source: dict = field(default_factory=dict, compare=False)

    def to_json2(self) -> dict:
        """The format-2 certificate input object."""
        return self.doc

    def __getitem__(self, key: str) -> Any:
        return self.doc[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.doc.get(key, default)


def _is_zero(t: str) -> bool:
    from fractions import Fraction

    try:
        return Fraction(t) == 0
    except (ValueError, ZeroDivisionError):
        return False  # not a number: the schema names it


def make_input(doc: Any, where: str = "input", source: dict | None = None) -> KindInput:
    """Normalise and validate a §1 input document (``{"kind": …, …}``); QKInputError naming
    the first problem."""
    import jsonschema

    if not isinstance(doc, dict) or doc.get("kind") not in KINDS:
        raise QKInputError(f"{where}: a §1 input is an object with kind one of {', '.join(KINDS)}")
    d = _norm(doc, where=where)
    if d["kind"] == "attention_function":
        # log-sum-exp τ·log Σ exp(σ_j/τ) and softmax(σ/τ) need τ ≠ 0 (the schema and kernel refuse τ = 0 too)
        pot, wts = d.get("potential"), d.get("weights")
        sm = wts.get("softmax") if isinstance(wts, dict) else None
        taus = [("potential/log_sum_exp", pot.get("log_sum_exp") if isinstance(pot, dict) else None),
                ("weights/softmax/tau", sm.get("tau") if isinstance(sm, dict) else None)]
        for at, t in taus:
            if isinstance(t, str) and _is_zero(t):
                raise QKInputError(f"{where}: attention_function input at {at}: the temperature τ must be nonzero")
    sch = dict(_schema())
    sch = {"$ref": f"#/$defs/input_{d['kind']}", "$defs": sch["$defs"]}
    errs = sorted(jsonschema.Draft202012Validator(sch).iter_errors(d), key=lambda e: [str(p) for p in e.absolute_path])
    if errs:
        e = errs[0]
        at = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        raise QKInputError(f"{where}: {d['kind']} input at {at}: {e.message[:160]}")
    return KindInput(d["kind"], d, source or {})


__all__ = ["KINDS", "KindInput", "make_input"]
