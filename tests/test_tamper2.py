"""Tamper test of the witness kernel over every format-2 certificate (issue 8, item 8).

The certificates: every format-2 certificate under ``certificates/`` (the audit's, the probes'
counterexamples) and a hand-made weights certificate (``kernel_fixtures``).  Each is mutated
one way at a time and re-verified; every mutation that changes what the certificate asserts
must be rejected (status other than ``valid``).  Mutations (deterministic):

* numbers: every rational string's numerator ±1, every JSON integer ±1, every decimal
  enclosure widened by one unit in its last digit (``widen``) or collapsed onto its other
  endpoint (``collapse``);
* strings: every enum-valued string (statement, declaration name, check id, input and witness
  kind, ``of``, face, role, conclusion, evidence, verdict) replaced by each other allowed value
  (sampled), the weights file's SHA-256 changed;
* booleans: flipped;
* structure: a witness duplicated, removed, taken from another certificate, the witnesses
  reordered; a declaration duplicated, removed, the declarations reordered; an extra field in
  the input, a declaration, a witness and at the top level; a hypothesis binder renamed; a
  dropped binder added or removed;
* a weaker statement: every conclusion ``undecided`` (and the verdict with it).

Oracles for mutations the kernel accepts -- independent of the producer where possible:

* ``reorder`` (witnesses, declarations), ``widen`` (the interval contains the original, which
  contains the value), ``weaken`` (undecided is true of anything), ``locator`` (the weights
  file's name: the file is found by its SHA-256), ``dropped`` added for a true hypothesis (the
  record states the same facts): the certificate still asserts only true things;
* a mutated *input*, or a declaration removed: accepted only if the certificate is exactly what
  the producer writes for that input and those declarations (display and tool aside) -- a
  true certificate about another input, or a subset of the declarations;
* a mutated *witness* field: accepted only if the witness still proves the same fact, re-derived
  here with sympy (isolating intervals that still isolate the same roots; a rank witness whose
  minors are still nonzero);
* anything else accepted is a miss.

The default run samples deterministically, by count and never by time, so its verdict is the
same on every machine: per certificate the top-level fields, one mutation of each structural
kind, then a fixed-seed sample of booleans, strings and numbers, then the other structural
ones, cut at ``PER_CERT`` mutations; ``QKV_TAMPER2_FULL=1`` runs every mutation.

Issue 18 (item 8): the three "meaning-changing" mutations a fresh clone used to report accepted
(an eigenvector scaled; a zero head's spectrum witness with another scale, or with a factor
2x in place of x) state the same facts: the oracle, not the kernel, was wrong -- it could not
re-derive ½JG (a head's ``half_JG``) nor an eigenvector; both are re-derived here now.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from functools import partial
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import sympy

import kernel_fixtures as K
from qkverify.kernel import verify_document
from qkverify.kernel.check import INTERNAL
from qkverify.kernel.jsonio import schema
from qkverify.models.installed import default_weights_dirs

FULL = os.environ.get("QKV_TAMPER2_FULL") == "1"
#: numeric mutations kept per certificate (default run)
NUMERIC_PER_CERT = int(os.environ.get("QKV_TAMPER2_SAMPLE", "8"))

_RAT = re.compile(r"^(-?[0-9]+)(?:/([0-9]+))?$")
_DEC = re.compile(r"^(-?)([0-9]+)(?:\.([0-9]+))?(?:e(-?[0-9]+))?$")


@dataclass
class Mut:
    cat: str          # category (reported)
    path: tuple       # where
    desc: str
    make: Any = field(repr=False)  # the mutated document, or a function of no argument making it
    oracle: str = "must"  # must / input / subset / witness / harmless

    @property
    def doc(self) -> dict:
        """The mutated document (a large certificate has thousands of candidate mutations, of
        which the sampled run tries a few: each is copied only when tried)."""
        if callable(self.make):
            self.make = self.make()
        return self.make


# ---------------------------------------------------------------------------
# the certificates


#: where ``qkverify verify`` looks for a weights file (commands/verify.py): the installed default
#: models' directories, besides the working directory and the certificate's own directory (the
#: ``base_dir`` verify_file passes); the file is used only if its SHA-256 is the certificate's
DIRS = default_weights_dirs()


@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    d = tmp_path_factory.mktemp("weights")
    w = K.weights_certificate(d)
    out = [(n, c, (K.ROOT / n).parent) for n, c in K.shipped_format2() if not c["statement"].startswith("user.")]
    if not out:
        out = [(n, c, None) for n, c in K.suite_format2()]
    return out + [("<hand-made weights head>", w, d)]


#: certificates read from a weights file, of one statement and input kind in one directory (the
#: 72 heads of a model, a layer under two norms ...), are mutated this many (the first by name;
#: FULL: all): each costs seconds per mutation.  Every one is still verified unmutated above.
WEIGHTS_PER_SHAPE = 1
#: any other certificates of one statement and input kind in one directory are mutated this many
#: (the first by name; FULL: all) -- the probes' 25 profile_sum_eq_one matrices are one shape of
#: certificate, and a fixed count keeps the suite's time in bounds (issue 19)
CERTS_PER_SHAPE = 4


def _reads_weights(c: dict) -> bool:
    inp = c["input"]
    return "file" in inp or any(isinstance(t, dict) and "file" in t for t in inp.get("tensors", []))


@pytest.fixture(scope="module")
def tampered(certificates):
    """The certificates the tamper test mutates: all (FULL), else per (directory, statement, input
    kind) the first WEIGHTS_PER_SHAPE of those read from a weights file, CERTS_PER_SHAPE of the others."""
    seen: dict[tuple, int] = {}
    out = []
    for n, c, d in sorted(certificates, key=lambda t: t[0]):
        if not FULL:
            key = (str(d), c["statement"], c["input"]["kind"])
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > (WEIGHTS_PER_SHAPE if _reads_weights(c) else CERTS_PER_SHAPE):
                continue
        out.append((n, c, d))
    return out


# ---------------------------------------------------------------------------
# mutations


def _walk(doc, path=()):
    """(path, value) of every leaf outside display and tool."""
    if path in (("display",), ("tool",)):
        return
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _walk(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _walk(v, path + (i,))
    else:
        yield path, doc


def _enum_values(path: tuple, value: str, doc: dict) -> list[str]:
    s = schema()["$defs"]
    key = path[-1]
    if path == ("statement",):
        return s["statement"]["enum"]
    if path[0] == "declarations" and key == "name":
        return s["decl_name"]["enum"]
    if path[0] == "declarations" and key == "check":
        return s["check_id"]["enum"]
    if key == "conclusion":
        return ["holds", "fails", "undecided", "consistent", "inconsistent", "computed"]
    if key == "verdict":
        return ["holds", "fails", "undecided", "consistent", "inconsistent"]
    if key == "evidence":
        return ["exact", "certified", "empirical"]
    if path == ("input", "kind"):
        return schema()["properties"]["input"]["properties"]["kind"]["enum"]
    if path[0] == "witnesses" and key == "kind":
        return schema()["properties"]["witnesses"]["items"]["properties"]["kind"]["enum"]
    if path[0] == "witnesses" and key == "of":
        return sorted({w.get("of") for w in doc["witnesses"] if isinstance(w.get("of"), str)} |
                      {"L", "S", "M", "gram", "V", "family", "theta", "c", "d", "JZZt", "Lgram", "S_UtLU"})
    if key == "face":
        return ["c", "d"]
    if key == "role":
        return ["W_Q", "W_K"]
    return []


def _pick(seq: list, k: int, salt: str) -> list:
    """k elements of seq, deterministic (by hash), all when FULL."""
    if FULL or len(seq) <= k:
        return list(seq)
    return sorted(seq, key=lambda x: hashlib.sha256(f"{salt}|{x!r}".encode()).hexdigest())[:k]


def _oracle_for(path: tuple) -> str:
    if path[0] == "input":
        return "locator" if path[-1] == "file" else "input"
    if path[0] == "witnesses":
        # a witness's working precision says how the kernel computes, not what is true
        return "harmless" if path[-1] == "prec" else "witness"
    return "must"


#: kept per certificate in the default run (FULL: all): strings, booleans, numbers
STRINGS_PER_CERT, BOOLEANS_PER_CERT = 10, 4
#: mutations tried per certificate (default run): a count, never a time budget
PER_CERT = 16
#: ... and of a certificate read from a weights file (the kernel reads and multiplies a real
#: model's tensors for each: about 3 s a mutation for a MiniLM layer's near_identity)
PER_WEIGHTS_CERT = 6


def mutations(name: str, doc: dict, others: list[dict]) -> list[Mut]:
    top: list[Mut] = []
    strings: list[Mut] = []
    booleans: list[Mut] = []
    numeric: list[Mut] = []
    for path, v in _walk(doc):
        key = path[-1]
        if isinstance(v, bool):
            booleans.append(Mut("boolean", path, f"{v} -> {not v}", partial(K.mutate, doc, path, not v), _oracle_for(path)))
        elif isinstance(v, int):
            for dv in (1, -1):
                numeric.append(Mut("integer", path, f"{v} -> {v + dv}", partial(K.mutate, doc, path, v + dv), _oracle_for(path)))
        elif isinstance(v, str) and _enum_values(path, v, doc):
            alts = [a for a in _enum_values(path, v, doc) if a != v]
            for a in _pick(alts, 2, f"{name}|{path}"):
                m = Mut("string", path, f"{v!r} -> {a!r}", partial(K.mutate, doc, path, a),
                        "input" if path[0] == "input" and path != ("input", "kind") else "must")
                (top if len(path) <= 2 and path[0] in ("statement", "verdict", "evidence", "input") else strings).append(m)
        elif isinstance(v, str) and key == "sha256":
            w = ("0" if v[0] != "0" else "1") + v[1:]
            top.append(Mut("string", path, "sha256 changed", partial(K.mutate, doc, path, w), "must"))
        elif isinstance(v, str) and key == "file":
            top.append(Mut("string", path, "file renamed", partial(K.mutate, doc, path, "other.safetensors"), "locator"))
        elif isinstance(v, str) and _RAT.match(v):
            m = _RAT.match(v)
            p, q = int(m.group(1)), m.group(2)
            for dp in (1, -1):
                nv = f"{p + dp}" + (f"/{q}" if q else "")
                oracle = "root" if len(path) >= 2 and path[-2] == "root" else _oracle_for(path)
                numeric.append(Mut("rational", path, f"{v} -> {nv}", partial(K.mutate, doc, path, nv), oracle))
        elif isinstance(v, str) and _DEC.match(v) and len(path) >= 2 and path[-2] == "enclosure":
            lo, hi = doc_get(doc, path[:-1])
            i = path[-1]
            wide = _ulp(v, -1 if i == 0 else 1)
            numeric.append(Mut("widen", path, f"{v} -> {wide}", partial(K.mutate, doc, path, wide), "harmless"))
            other = hi if i == 0 else lo
            if other != v:
                numeric.append(Mut("collapse", path, f"{v} -> {other}", partial(K.mutate, doc, path, other), "must"))
    # most telling first: the default run keeps the first PER_CERT of this list
    structural = _structural(name, doc, others)
    firsts = {m.cat: m for m in reversed(structural)}
    return (top + list(firsts.values()) + _pick(booleans, BOOLEANS_PER_CERT, name + "b")
            + _pick(strings, STRINGS_PER_CERT, name + "s") + _pick(numeric, NUMERIC_PER_CERT, name)
            + [m for m in structural if firsts[m.cat] is not m])


def doc_get(doc, path):
    for k in path:
        doc = doc[k]
    return doc


def _ulp(s: str, direction: int) -> str:
    """The decimal s moved by one unit of its last digit (down for −1, up for +1), as text."""
    m = _DEC.match(s)
    sign, ip, fp, ex = m.group(1), m.group(2), m.group(3) or "", m.group(4)
    digits = int(ip + fp) * (-1 if sign else 1) + direction
    body = str(abs(digits)).rjust(len(fp) + 1, "0")
    txt = ("-" if digits < 0 else "") + (body[:-len(fp)] + "." + body[-len(fp):] if fp else body)
    return txt + (f"e{ex}" if ex is not None else "")


def _structural(name: str, doc: dict, others: list[dict]) -> list[Mut]:
    out = []
    ws, ds = doc["witnesses"], doc["declarations"]
    for i in _pick(list(range(len(ws))), 2, name + "w"):
        out.append(Mut("dup-witness", ("witnesses", i), "witness duplicated",
                       K.mutate(doc, ("witnesses",), ws[:i + 1] + [ws[i]] + ws[i + 1:]), "must"))
        # a witness removed leaves the same (true) statement with less evidence: the kernel may
        # accept it only when it decides without that witness (lazy coordinates, e.g. a = 1/2 exactly)
        out.append(Mut("drop-witness", ("witnesses", i), "witness removed",
                       K.mutate(doc, ("witnesses",), ws[:i] + ws[i + 1:]), "subset"))
        out.append(Mut("extra-field", ("witnesses", i), "extra field in a witness",
                       K.mutate(doc, ("witnesses", i, "note"), "x"), "must"))
    if len(ws) > 1:
        out.append(Mut("reorder", ("witnesses",), "witnesses reversed", K.mutate(doc, ("witnesses",), ws[::-1]),
                       "harmless"))
    keys = {(w["kind"], w.get("of")) for w in ws}
    extra = next((w for o in others for w in o["witnesses"] if (w["kind"], w.get("of")) not in keys), None)
    if extra is not None:
        out.append(Mut("extra-witness", ("witnesses",), f"a {extra['kind']} witness of {extra.get('of')} added",
                       K.mutate(doc, ("witnesses",), ws + [extra]), "extra"))
    for i in _pick(list(range(len(ds))), 2, name + "d"):
        r = ds[i]
        out.append(Mut("dup-declaration", ("declarations", i), "declaration duplicated",
                       K.mutate(doc, ("declarations",), ds + [r]), "must"))
        if len(ds) > 1:
            out.append(Mut("drop-declaration", ("declarations", i), f"{r['check']} removed",
                           K.mutate(doc, ("declarations",), ds[:i] + ds[i + 1:]), "subset"))
        out.append(Mut("extra-field", ("declarations", i), "extra field in a declaration",
                       K.mutate(doc, ("declarations", i, "note"), "x"), "must"))
        for b in _pick(sorted(r["hypotheses"]), 1, name + str(i)):
            hyps = {(b + "x" if k == b else k): v for k, v in r["hypotheses"].items()}
            out.append(Mut("binder", ("declarations", i, "hypotheses", b), f"binder {b} renamed",
                           K.mutate(doc, ("declarations", i, "hypotheses"), hyps), "must"))
            dropped = r.get("dropped", [])
            if b in dropped:
                rest = [x for x in dropped if x != b]
                m = K.mutate(doc, ("declarations", i, "dropped"), rest)
                if not rest:
                    del doc_get(m, ("declarations", i))["dropped"]
                out.append(Mut("dropped", ("declarations", i, "dropped"), f"{b} no longer dropped", m,
                               "harmless" if r["hypotheses"][b] else "must"))
            elif r["hypotheses"][b]:
                out.append(Mut("dropped", ("declarations", i, "dropped"), f"{b} (true) dropped",
                               K.mutate(doc, ("declarations", i, "dropped"), dropped + [b]), "harmless"))
    if len(ds) > 1:
        out.append(Mut("reorder", ("declarations",), "declarations reversed",
                       K.mutate(doc, ("declarations",), ds[::-1]), "harmless"))
    out.append(Mut("extra-field", ("input",), "extra field in the input", K.mutate(doc, ("input", "note"), "x"), "must"))
    out.append(Mut("extra-field", (), "extra top-level field", dict(doc, note="x"), "must"))
    weak = copy.deepcopy(doc)
    for r in weak["declarations"]:
        r["conclusion"] = "undecided"
    weak["verdict"] = "undecided"
    out.append(Mut("weaken", ("declarations",), "every conclusion undecided", weak, "harmless"))
    return out


# ---------------------------------------------------------------------------
# oracles


def _canon(x):
    """A document with every rational string in lowest terms (``"5/5"`` is ``"1"``)."""
    if isinstance(x, dict):
        return {k: _canon(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_canon(v) for v in x]
    if isinstance(x, str) and _RAT.match(x):
        return str(Fraction(x))
    return x


def _strip(cert: dict) -> dict:
    return _canon({k: v for k, v in cert.items() if k not in ("display", "tool")})


def _producer_agrees(m: dict) -> bool:
    """The producer, given the mutated input and the certificate's declarations (with its dropped
    binders), writes this certificate (display and tool aside, rationals in lowest terms): a true
    certificate about another input."""
    from qkverify.claims.evaluate import evaluate
    from qkverify.errors import QKInputError
    from qkverify.search.strategies import reread

    if m["input"]["kind"] == "weights":
        return False  # no producer writes weights certificates in this format yet
    try:
        inp = reread(m["input"])
        drop = tuple(sorted({b for r in m["declarations"] for b in r.get("dropped", [])}))
        run = evaluate(m["statement"], inp, drop=drop, only=tuple(r["check"] for r in m["declarations"]))
    except (QKInputError, ArithmeticError, ValueError):
        return False
    ours = json.loads(json.dumps(run.certificate()))
    key = lambda c: json.dumps(c, sort_keys=True)  # noqa: E731
    a, b = _strip(ours), _strip(m)
    if sorted(a["declarations"], key=key) == sorted(b["declarations"], key=key) and all(
            _witness_holds(w, m, None) for w in m["witnesses"]):
        # the producer states the same declarations about the mutated input, and every witness
        # the certificate carries is re-derived with sympy for it (the producer may have chosen
        # other witnesses: e.g. another vector x with xᵀSx ≤ 0)
        return True
    return a == b or (a | {"declarations": sorted(a["declarations"], key=key), "witnesses": sorted(a["witnesses"], key=key)}
                      == b | {"declarations": sorted(b["declarations"], key=key), "witnesses": sorted(b["witnesses"], key=key)})


# -- sympy re-derivations of the witnesses (independent of the kernel and the producer) --------


X = sympy.Symbol("x")


def _M(rows) -> sympy.Matrix:
    return sympy.Matrix([[sympy.Rational(str(Fraction(v))) for v in r] for r in rows])


def _derived(inp: dict, of: str, base: Path | None) -> sympy.Matrix | None:
    """The matrix a witness is 'of', from the certificate input (docs/CERTIFICATES.md)."""
    k = inp["kind"]
    if k == "head":
        WQ, WK = _M(inp["W_Q"]), _M(inp["W_K"])
        L = WK.T * WQ
        B = _M(inp["B"]) if "B" in inp else sympy.eye(WQ.cols)
    elif k == "rank_one":
        u, v = _M([inp["u"]]).T, _M([inp["v"]]).T
        L = sympy.Rational(str(Fraction(inp["s"]))) * u * v.T
    elif k == "weights":
        import kernel_fixtures as KF

        WQ, WK = sympy.Matrix(KF.W_Q).applyfunc(sympy.nsimplify), sympy.Matrix(KF.W_K).applyfunc(sympy.nsimplify)
        L = WK.T * WQ
    elif "L" in inp:
        L = _M(inp["L"])
    elif k == "vector" and "S" in inp:  # the kernel's L of a vector input is its S (π(S), Theorem 5)
        L = _M(inp["S"])
    else:
        L = None
    if of == "half_JG" and k == "head":  # ½·J·M·Mᵀ, M = [W_K; W_Q], J swaps the two blocks
        M = WK.col_join(WQ)
        n = WQ.rows
        J = sympy.Matrix(2 * n, 2 * n, lambda i, j: 1 if abs(i - j) == n else 0)
        return J * M * M.T / 2
    S = (L + L.T) / 2 if L is not None else None
    if of == "L":
        return L
    if of == "S":
        return S
    if of == "M":
        return WK.col_join(WQ)
    if of == "gram":
        return B.T * S * B
    if of == "Lgram":
        return (WK * B).T * (WQ * B)
    if of == "V":
        return _M(inp["V"])
    if of == "S_UtLU":
        U = _M(inp["U"])
        C = U.T * L * U
        return (C + C.T) / 2
    return None


def _isolates(poly: sympy.Poly, intervals: list) -> bool:
    roots = poly.real_roots()
    last = None
    for lo, hi in intervals:
        a, b = sympy.Rational(str(Fraction(lo))), sympy.Rational(str(Fraction(hi)))
        if a > b or (last is not None and a <= last):
            return False
        if len([r for r in roots if a <= r <= b]) != 1:
            return False
        last = b
    return len(intervals) == poly.degree()


def _minor_mod(Y: sympy.Matrix, rows, cols, p: int) -> int:
    return int(Y.extract(list(rows), list(cols)).det()) % p if rows else 1 % p


def _profile(L: sympy.Matrix) -> list:
    """π(L) = (a, b, c, d) by Definition 6 with sympy (x/0 = 0)."""
    S, T = (L + L.T) / 2, (L - L.T) / 2
    n2 = sum(x ** 2 for x in L)
    if sympy.simplify(n2) == 0:
        return [0, 0, 0, 0]
    ev = [sympy.nsimplify(sympy.simplify(e)) for e, m in S.eigenvals().items() for _ in range(m)]
    al = sorted([e for e in ev if e > 0], reverse=True)
    be = sorted([-e for e in ev if e < 0], reverse=True)
    al, be = al + [0] * (len(ev) - len(al)), be + [0] * (len(ev) - len(be))
    pos = lambda x: x if x > 0 else 0  # noqa: E731
    return [sympy.simplify(v / n2) for v in (sum(x ** 2 for x in T), 2 * sum(a * b for a, b in zip(al, be)),
                                             sum(pos(a - b) ** 2 for a, b in zip(al, be)),
                                             sum(pos(b - a) ** 2 for a, b in zip(al, be)))]


def _profile_rank_one(x: sympy.Matrix, y: sympy.Matrix) -> list:
    """π(x yᵀ) in closed form: S = (xyᵀ + yxᵀ)/2 has eigenvalues (x·y ± |x||y|)/2 and 0, so with
    t² = (x·y)²/(|x|²|y|²): a = b = (1 − t²)/2, c = t² when x·y > 0, d = t² when x·y < 0."""
    dot = sympy.radsimp(sympy.expand((x.T * y)[0, 0]))
    t2 = sympy.radsimp(sympy.expand(dot ** 2) / sympy.expand((x.T * x)[0, 0] * (y.T * y)[0, 0]))
    half = (1 - t2) / 2
    return [half, half, t2 if dot > 0 else 0, t2 if dot < 0 else 0]


def _surd_vector(xs, ys, sq) -> sympy.Matrix:
    r = sympy.sqrt(sympy.Rational(str(Fraction(sq)))) if sq is not None else 0
    return sympy.Matrix([sympy.Rational(str(Fraction(a))) + sympy.Rational(str(Fraction(b))) * r
                         for a, b in zip(xs, ys or ["0"] * len(xs))])


def _witness_holds(w: dict, cert: dict, base) -> bool:
    """Does the (mutated) witness prove its fact?  Re-derived with sympy from the input."""
    inp = cert["input"]
    try:
        if w["kind"] in ("spectrum", "rank"):
            Xm = _derived(inp, w["of"], base)
            if Xm is None:
                return False
            D = int(w["scale"])
            Y = D * Xm
            if D <= 0 or any(not v.is_integer for v in Y):
                return False
        if w["kind"] == "spectrum":
            prod, lead = sympy.Poly(1, X), 1
            polys = []
            for f in w["factors"]:
                P = sympy.Poly([int(c) for c in reversed(f["poly"])], X)
                if P.degree() < 1 or sympy.degree(sympy.gcd(P, P.diff(X))) > 0 or not _isolates(P, f["roots"]):
                    return False
                polys.append(P)
                prod *= P ** f["multiplicity"]
                lead *= P.LC() ** f["multiplicity"]
            if any(sympy.degree(sympy.gcd(a, b)) > 0 for i, a in enumerate(polys) for b in polys[i + 1:]):
                return False
            return prod == sympy.Poly(Y.charpoly(X).as_expr(), X) * lead
        if w["kind"] == "rank":
            r, p = w["rank"], int(w["prime"])
            if not sympy.isprime(p) or r != Y.rank():
                return False
            m = _minor_mod(Y, w["rows"], w["cols"], p)
            if m == 0 or m != int(w["minor_mod_p"]):
                return False
            Kv = w.get("kernel", [])
            if len(Kv) != Y.rows - r:
                return False
            if Kv:
                Km = sympy.Matrix([[int(v) for v in y] for y in Kv])
                kp = int(w.get("kernel_prime", p))
                km = _minor_mod(Km, range(len(Kv)), w["kernel_cols"], kp)
                return (sympy.isprime(kp) and (Km * Y).is_zero_matrix and km != 0
                        and km == int(w["kernel_minor_mod_p"]))
            return True
        if w["kind"] == "factor":
            x = _surd_vector(w["x"], w.get("x_sqrt"), w.get("sqrt"))
            y = _surd_vector(w["y"], w.get("y_sqrt"), w.get("sqrt"))
            if x.is_zero_matrix or y.is_zero_matrix:
                return False
            if w["of"] == "L":
                return w.get("sqrt") is None and sympy.simplify(x * y.T - _derived(inp, "L", base)).is_zero_matrix
            p = [sympy.Rational(str(Fraction(v))) for v in inp["p"]]
            got = _profile_rank_one(x, y)
            return len(x) == inp["N"] and all(sympy.simplify(g - q) == 0 for g, q in zip(got, p))
        if w["kind"] == "definite" and inp["kind"] == "triple" and w["of"] == "S_QK":
            A = _M(inp["Q"]).T * _M(inp["K"])
            S = (A + A.T) / 2
            if "x" in w:  # not positive definite: x ≠ 0 with xᵀSx ≤ 0
                x = _M([w["x"]]).T
                return x.rows == S.rows and not x.is_zero_matrix and (x.T * S * x)[0, 0] <= 0
            return S.is_positive_definite  # sympy's own decision (Cholesky / eigenvalues)
        if w["kind"] == "eigenspace" and inp["kind"] == "triple" and w["of"] == "V":
            V = _M(inp["V"])
            ev = V.eigenvals()
            top = max(abs(e) for e in ev)
            lam = [e for e in ev if abs(e) == top]
            if len(lam) != 1 or not lam[0].is_rational:
                return False
            if "basis" not in w:  # a nonzero minor of V − λI of order d − m + 1: dim ker < m
                rows, cols = w["rows"], w["cols"]
                M = V - lam[0] * sympy.eye(V.rows)
                return (len(rows) == len(cols) == V.rows - ev[lam[0]] + 1 and len(set(rows)) == len(rows)
                        and len(set(cols)) == len(cols) and M.extract(rows, cols).det() != 0)
            F = _M(w["basis"]).T
            return (F.rows == V.rows and F.cols == ev[lam[0]] and F.rank() == F.cols
                    and ((V - lam[0] * sympy.eye(V.rows)) * F).is_zero_matrix)
        if w["kind"] == "croots" and inp["kind"] == "triple" and w["of"] == "V":
            P = sympy.Poly(_M(inp["V"]).charpoly(X).as_expr(), X)
            mult = {}  # multiplicity -> square-free factor whose roots have it
            for f, m in sympy.sqf_list(P)[1]:
                mult[m] = f
            seen = 0
            for fac in w["factors"]:
                f = mult.get(fac["multiplicity"])
                if f is None:
                    return False
                boxes = [(sympy.Rational(str(Fraction(lo))), sympy.Rational(str(Fraction(hi))))
                         for lo, hi in fac["real"]]
                for c in fac.get("complex", []):  # centre re + i·im, half-width r; and its mirror image
                    re, im, r = (sympy.Rational(str(Fraction(v))) for v in c)
                    if not im > r > 0:
                        return False
                    boxes += [(re - r + sympy.I * (im - r), re + r + sympy.I * (im + r)),
                              (re - r - sympy.I * (im + r), re + r - sympy.I * (im - r))]
                if len(boxes) != f.degree() or any(f.count_roots(lo, hi) != 1 for lo, hi in boxes):
                    return False
                seen += 1
            return seen == len(mult)
        if w["kind"] == "eigvec" and inp["kind"] == "triple" and w["of"] == "V":
            V = _M(inp["V"])
            ev = V.eigenvals()
            top = max(ev, key=lambda e: abs(sympy.N(e, 50)))
            if ev[top] != 1 or not (top.is_real and top > 0):
                return False
            null = (V - top * sympy.eye(V.rows)).nullspace()
            if "vector" in w:  # any nonzero multiple of the eigenvector
                v = _M([w["vector"]]).T
                return v.rows == V.rows and not v.is_zero_matrix and (V * v - top * v).is_zero_matrix
            return len(null) == 1 and 0 <= w["pivot"] < V.rows and sympy.simplify(null[0][w["pivot"]]) != 0
        if w["kind"] == "orthogonal":
            U, v = _M(w["U"]), _M(inp["v"])
            return (U.T * U == sympy.eye(U.rows)) and all(U[:, i] == v[i, :].T for i in inp["s"])
    except (ValueError, TypeError, KeyError, ZeroDivisionError):
        return False
    return False  # fiber and cells witnesses: no second derivation here, so any accepted change is a miss


def _root_still_named(orig: dict, new: dict) -> bool:
    """A stated real ``{"root": {poly, lo, hi}}`` still names the same number: the new interval
    holds exactly one root of the polynomial, the one the original interval held."""
    P = sympy.Poly([int(c) for c in reversed(new["root"]["poly"])], X)
    roots = P.real_roots()
    a0, b0 = (sympy.Rational(str(Fraction(orig["root"][k]))) for k in ("lo", "hi"))
    a, b = (sympy.Rational(str(Fraction(new["root"][k]))) for k in ("lo", "hi"))
    r0 = [r for r in roots if a0 <= r <= b0]
    r1 = [r for r in roots if a <= r <= b]
    return len(r0) == 1 and r1 == r0


# ---------------------------------------------------------------------------


def test_every_format2_certificate_is_valid(certificates):
    bad = [(n, o.check, o.reason) for n, c, d in certificates
           for o in [verify_document(c, n, d, DIRS)] if o.status != "valid"]
    assert not bad, bad


def test_tamper_rejection_rate(tampered, capsys):
    certificates = tampered
    t0 = time.process_time()
    docs = [c for _, c, _ in certificates]
    total = rejected = harmless_ok = harmless_rej = 0
    misses: list[str] = []
    crashes: list[str] = []
    by_cat: dict[str, list[int]] = {}
    for k, (name, doc, base) in enumerate(certificates):
        others = docs[k + 1:] + docs[:k]
        for j, mu in enumerate(mutations(name, doc, others)):
            if not FULL and j >= (PER_WEIGHTS_CERT if _reads_weights(doc) else PER_CERT):
                break  # a fixed count per certificate: the same mutations on every machine
            out = verify_document(mu.doc, name, base, DIRS)
            if out.check == INTERNAL:  # rejected, but by a defect of the kernel: not a finding of it
                crashes.append(f"{name}: {'/'.join(map(str, mu.path))}: {mu.desc}: {out.reason}")
            ok = out.status == "valid"
            if mu.oracle == "harmless" or (ok and mu.oracle == "locator"):
                harmless_ok += ok
                harmless_rej += not ok
                continue
            if mu.oracle == "subset":  # fewer declarations of a valid certificate: a weaker true statement
                harmless_ok += ok
                harmless_rej += not ok
                continue
            if ok and (mu.oracle == "input" and _producer_agrees(mu.doc)
                       or mu.oracle == "witness" and _witness_holds(doc_get(mu.doc, mu.path[:2]), mu.doc, base)
                       or mu.oracle == "extra" and _witness_holds(mu.doc["witnesses"][-1], mu.doc, base)
                       or mu.oracle == "root" and _root_still_named(doc_get(doc, mu.path[:-2]),
                                                                    doc_get(mu.doc, mu.path[:-2]))):
                harmless_ok += 1
                continue
            total += 1
            c = by_cat.setdefault(mu.cat, [0, 0])
            c[0] += 1
            if ok:
                misses.append(f"{name}: {'/'.join(map(str, mu.path))}: {mu.desc}")
            else:
                rejected += 1
                c[1] += 1
    spent = time.process_time() - t0
    with capsys.disabled():
        print(f"\ntamper2: {len(certificates)} format-2 certificates, {total} meaning-changing mutations, "
              f"{rejected} rejected ({100 * rejected / max(1, total):.2f}%); harmless: {harmless_ok} accepted, "
              f"{harmless_rej} rejected; {spent:.1f} s CPU{' (full run)' if FULL else ' (sampled)'}")
        print("  by category (rejected/total): " + ", ".join(f"{k} {v[1]}/{v[0]}" for k, v in sorted(by_cat.items())))
    assert not crashes, f"{len(crashes)} mutations made the kernel fail:\n" + "\n".join(crashes[:40])
    assert not misses, f"{len(misses)} meaning-changing mutations accepted:\n" + "\n".join(misses[:40])
    assert total > 1000 and rejected == total
