"""The trusted kernel of ``qkverify verify``: an independent re-check of a
certificate file.

This module is deliberately self-contained.  It imports only the Python
standard library, python-flint (exact integers/rationals/polynomials/matrices
and Arb balls) and jsonschema (with the shipped schema file
``schema/certificate.schema.json``).  It imports no other qkverify module --
not the producers in ``qkverify.exact``, not the claims, not even
``qkverify.errors`` -- so a bug in the code that *produces* a certificate
cannot make the code that *checks* it agree by accident.  See TRUST.md.

What the kernel does with a certificate (all decisions exact; Arb balls are
used only as rigorous enclosures, never rounded to floats):

1. reads the file under size/digit/dimension limits and validates it against
   the JSON Schema (duplicate keys, NaN/Infinity and oversized numbers are
   refused before that);
2. rebuilds the exact input (``"p/q"`` matrices, or a weights file: hashed
   again when reachable and, for .safetensors, read by the kernel's own
   standard-library reader -- W_Q, W_K rebuilt exactly from the IEEE bit
   patterns of the recorded tensor slices, see :func:`head_matrix` and
   :func:`partial_weights`; GGUF/.npz weights stay partially re-checked) and
   re-derives the named matrices L, S, T, M, G, half_JG, gram_in_basis, UtLU,
   inline;
3. re-checks every witness: characteristic polynomials recomputed with FLINT
   and their Descartes sign counts; LDLᵀ factors multiplied back out; rank
   minors recomputed and reduced mod the stated prime, left-kernel vectors
   multiplied out; isolating intervals re-verified by exact sign evaluation
   and Sturm sequences; profile values recomputed from the re-verified
   eigenvalues (exact rational values re-proved, decimal intervals checked to
   contain the exact value); fiber decompositions re-checked exactly (exact
   H, P) or re-enclosed from spectral projectors (interval H, P);
4. re-evaluates the claim's conclusion with its own arithmetic (one rule per
   claim id, ``CLAIM_RULES``) and requires the certificate's verdict, evidence
   level, convention, named checks and displayed values to agree.

Any disagreement makes the certificate *invalid* and names the failing check.
Public entry points: :func:`verify_file`, :func:`verify_document`,
:func:`expand_paths`.  Errors: :class:`VerifierInputError` (the input cannot
be read at all; the CLI exits 2).  SPEC: "What a certificate must let a
reader re-check".
"""

from __future__ import annotations

import functools
import glob
import hashlib
import json
import math
import os
import re
import sys
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import jsonschema
from flint import arb, arb_mat, ctx as FCTX, fmpq, fmpq_mat, fmpq_poly, fmpz, fmpz_mat, fmpz_poly

FORMAT = "qkverify-certificate/1"
SCHEMA_PATH = Path(__file__).resolve().parents[1] / "schema" / "certificate-1.schema.json"

# ---------------------------------------------------------------------------
# limits (a hostile file must not exhaust memory or time)

#: largest certificate file read (bytes)
MAX_FILE_BYTES = 16 * 1024 * 1024
#: largest number of decimal digits in one integer (numerator, denominator, JSON int)
MAX_DIGITS = 4000
#: largest matrix side
MAX_DIM = 256
#: largest polynomial degree in a witness
MAX_DEGREE = 512
#: most witnesses in one certificate
MAX_WITNESSES = 256
#: most bits of precision the kernel will spend to separate or enclose a value
MAX_BITS = 8192
#: most distinct conjugates (degree bound) for an exact zero test of an algebraic expression
MAX_CONJUGATES = 5040

#: extra directories searched for a weights file named by a certificate
#: (``qkverify verify --weights DIR``); the file name recorded is matched
WEIGHTS_DIRS: list[str] = []

# ---------------------------------------------------------------------------
# errors


class VerifierInputError(Exception):
    """The input cannot be read at all (missing file, unreadable, not UTF-8,
    not JSON, over the file-size limit).  The CLI prints the one-line message
    and exits with status 2."""


class CheckFailed(Exception):
    """A re-check failed: ``check`` names it, ``why`` says what differs."""

    def __init__(self, check: str, why: str):
        super().__init__(f"{check}: {why}")
        self.check = check
        self.why = why


def _fail(check: str, why: str):
    raise CheckFailed(check, why)


def _require(cond: bool, check: str, why: str) -> None:
    if not cond:
        raise CheckFailed(check, why)


# ---------------------------------------------------------------------------
# reading


class _DupKey(Exception):
    pass


def _pairs(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise _DupKey(k)
        out[k] = v
    return out


def _parse_int(s: str) -> int:
    if len(s.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"JSON integer with more than {MAX_DIGITS} digits")
    return int(s)


def _parse_float(s: str) -> float:
    if len(s) > 64:
        raise ValueError("JSON number literal too long")
    return float(s)


def _bad_constant(name: str):
    raise ValueError(f"JSON constant {name} is not a number")


def load_text(text: str) -> Any:
    """Parse certificate JSON strictly: no duplicate keys, no NaN/Infinity,
    integers of at most MAX_DIGITS digits.  Raises CheckFailed("json", ...)
    for a document that parses but breaks these rules, VerifierInputError for
    text that is not JSON."""
    try:
        return json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_int=_parse_int,
            parse_float=_parse_float,
            parse_constant=_bad_constant,
        )
    except _DupKey as err:
        raise CheckFailed("json", f"duplicate key {err.args[0]!r}") from None
    except json.JSONDecodeError as err:
        raise VerifierInputError(f"not valid JSON ({err.msg} at line {err.lineno} column {err.colno})") from None
    except ValueError as err:
        raise CheckFailed("json", str(err)) from None
    except RecursionError:
        raise CheckFailed("json", "JSON nested too deeply") from None


def read_file(path: str | Path) -> Any:
    """Read and parse one certificate file (limits as above)."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise VerifierInputError("no such file") from None
    except OSError as err:
        raise VerifierInputError(f"cannot stat ({err.strerror})") from None
    if p.is_dir():
        raise VerifierInputError("is a directory")
    if st.st_size > MAX_FILE_BYTES:
        raise VerifierInputError(f"{st.st_size} bytes exceeds the limit of {MAX_FILE_BYTES}")
    try:
        data = p.read_bytes()
    except OSError as err:
        raise VerifierInputError(f"cannot read ({err.strerror})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise VerifierInputError("not UTF-8 text") from None
    if not text.strip():
        raise VerifierInputError("empty file")
    return load_text(text)


@functools.lru_cache(maxsize=1)
def _validator():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def check_schema(doc: Any) -> None:
    """Validate against the shipped JSON Schema; CheckFailed("schema") names
    the first violation (by JSON path)."""
    errs = sorted(_validator().iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path])
    if errs:
        e = errs[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        msg = e.message if len(e.message) <= 160 else e.message[:157] + "..."
        _fail("schema", f"at {where}: {msg}")


# ---------------------------------------------------------------------------
# scalar parsing (witness fields)

_RAT_RE = re.compile(r"^(-?[0-9]+)(?:/([0-9]+))?$")
_INT_RE = re.compile(r"^-?[0-9]+$")
_DEC_RE = re.compile(r"^(-?)([0-9]+)(?:\.([0-9]+))?(?:e(-?[0-9]{1,6}))?$")


def _digits_ok(s: str, where: str) -> None:
    if len(s) > 2 * MAX_DIGITS + 2:
        _fail("limits", f"{where}: number with more than {MAX_DIGITS} digits")


def rat(x: Any, where: str) -> fmpq:
    """Exact rational from a ``"p"`` / ``"p/q"`` string (q ≥ 1)."""
    if not isinstance(x, str):
        _fail("format", f"{where}: expected a rational string \"p/q\", got {type(x).__name__}")
    _digits_ok(x, where)
    m = _RAT_RE.match(x)
    if not m:
        _fail("format", f"{where}: {x[:40]!r} is not a rational \"p/q\"")
    if len(m.group(1)) > MAX_DIGITS + 1 or (m.group(2) and len(m.group(2)) > MAX_DIGITS):
        _fail("limits", f"{where}: integer with more than {MAX_DIGITS} digits")
    p = fmpz(m.group(1))
    q = fmpz(m.group(2)) if m.group(2) else fmpz(1)
    if q == 0:
        _fail("format", f"{where}: zero denominator")
    return fmpq(p, q)


def zint(x: Any, where: str) -> fmpz:
    """Exact integer from an integer string (or a JSON integer)."""
    if isinstance(x, bool):
        _fail("format", f"{where}: expected an integer, got a boolean")
    if isinstance(x, int):
        return fmpz(x)
    if not isinstance(x, str) or not _INT_RE.match(x):
        _fail("format", f"{where}: expected an integer string, got {str(x)[:40]!r}")
    if len(x.lstrip("-")) > MAX_DIGITS:
        _fail("limits", f"{where}: integer with more than {MAX_DIGITS} digits")
    return fmpz(x)


def pyint(x: Any, where: str, lo: int | None = None, hi: int | None = None) -> int:
    """A JSON integer (not a boolean, not a string) within [lo, hi]."""
    if isinstance(x, bool) or not isinstance(x, int):
        _fail("format", f"{where}: expected a JSON integer, got {type(x).__name__}")
    if lo is not None and x < lo:
        _fail("format", f"{where}: {x} < {lo}")
    if hi is not None and x > hi:
        _fail("format", f"{where}: {x} > {hi}")
    return x


def dec(x: Any, where: str) -> fmpq:
    """Exact rational value of a decimal string such as ``"-0.0125"`` (or a
    ``"p/q"`` string)."""
    if not isinstance(x, str):
        _fail("format", f"{where}: expected a decimal string, got {type(x).__name__}")
    _digits_ok(x, where)
    m = _DEC_RE.match(x)
    if not m:
        return rat(x, where)
    sign = -1 if m.group(1) else 1
    ip, fp = m.group(2), m.group(3) or ""
    e = int(m.group(4) or 0) - len(fp)
    v = fmpq(sign * fmpz(ip + fp))
    return v * fmpz(10) ** e if e >= 0 else v / fmpz(10) ** (-e)


def boolean(x: Any, where: str) -> bool:
    """A JSON boolean (CheckFailed otherwise)."""
    if not isinstance(x, bool):
        _fail("format", f"{where}: expected true/false")
    return x


def jlist(x: Any, where: str, n: int | None = None) -> list:
    """A JSON list, of length n when given (CheckFailed otherwise)."""
    if not isinstance(x, list):
        _fail("format", f"{where}: expected a list")
    if n is not None and len(x) != n:
        _fail("format", f"{where}: expected {n} entries, got {len(x)}")
    return x


def jdict(x: Any, where: str) -> dict:
    """A JSON object (CheckFailed otherwise)."""
    if not isinstance(x, dict):
        _fail("format", f"{where}: expected an object")
    return x


def only_keys(d: dict, allowed: set, where: str) -> None:
    """CheckFailed naming any field of d outside ``allowed`` (unknown fields are not re-checked, so they are refused)."""
    extra = set(d) - allowed
    if extra:
        _fail("format", f"{where}: unexpected field(s) {sorted(extra)}")


def ratmat(rows: Any, where: str) -> fmpq_mat:
    """Exact matrix from rows of rational strings (non-empty, rectangular,
    at most MAX_DIM x MAX_DIM)."""
    rows = jlist(rows, where)
    if not rows:
        _fail("format", f"{where}: empty matrix")
    if len(rows) > MAX_DIM:
        _fail("limits", f"{where}: {len(rows)} rows exceed the limit {MAX_DIM}")
    ncols = None
    out = []
    for i, r in enumerate(rows):
        r = jlist(r, f"{where}[{i}]")
        if ncols is None:
            ncols = len(r)
            if ncols == 0 or ncols > MAX_DIM:
                _fail("limits", f"{where}: {ncols} columns (limit 1..{MAX_DIM})")
        elif len(r) != ncols:
            _fail("format", f"{where}: ragged rows ({ncols} vs {len(r)} entries)")
        out.append([rat(v, f"{where}[{i}][{j}]") for j, v in enumerate(r)])
    return fmpq_mat(out)


def qstr(q) -> str:
    """Canonical ``"p/q"`` text of a rational (for messages)."""
    q = fmpq(q)
    return str(q.p) if q.q == 1 else f"{q.p}/{q.q}"


# ---------------------------------------------------------------------------
# exact linear algebra helpers


def sym(A: fmpq_mat) -> fmpq_mat:
    """S = (A + Aᵀ)/2, exact (SPEC Def A1, Lean ``symPart``)."""
    return (A + A.transpose()) * fmpq(1, 2)


def skew(A: fmpq_mat) -> fmpq_mat:
    """T = (A − Aᵀ)/2, exact (SPEC Def A1, Lean ``skewPart``)."""
    return (A - A.transpose()) * fmpq(1, 2)


def frob(A: fmpq_mat) -> fmpq:
    """‖A‖² = Σ a_ij², exact (Lean ``frobSq``)."""
    s = fmpq(0)
    for x in A.entries():
        s += x * x
    return s


def tr(A: fmpq_mat) -> fmpq:
    """Trace of a square matrix, exact."""
    s = fmpq(0)
    for i in range(A.nrows()):
        s += A[i, i]
    return s


def eye(n: int) -> fmpq_mat:
    """The n x n identity (fmpq_mat)."""
    I = fmpq_mat(n, n)
    for i in range(n):
        I[i, i] = 1
    return I


def is_sym(A: fmpq_mat) -> bool:
    """A = Aᵀ (exact)."""
    return A.nrows() == A.ncols() and A == A.transpose()


def is_antisym(A: fmpq_mat) -> bool:
    """A = −Aᵀ (exact)."""
    return A.nrows() == A.ncols() and A == -A.transpose()


def mat_key(A: fmpq_mat) -> tuple:
    """Hashable exact identity of a matrix (shape and entries), used to share re-checked facts."""
    return (A.nrows(), A.ncols(), tuple(str(x) for x in A.entries()))


def integer_matrix(A: fmpq_mat, D: fmpz, check: str) -> fmpz_mat:
    """D·A as an integer matrix; CheckFailed if D·A is not integral."""
    B, den = (A * fmpq(D)).numer_denom()
    _require(den == 1, check, f"scale {D} does not clear the denominators of the matrix")
    return B


def coeffs(p) -> list:
    """Ascending coefficient list of a FLINT polynomial."""
    return list(p.coeffs())


def sign_changes(cs: list) -> int:
    """Number of sign changes of a coefficient sequence, zeros skipped (Descartes)."""
    prev, n = 0, 0
    for c in cs:
        s = (c > 0) - (c < 0)
        if s == 0:
            continue
        if prev and s != prev:
            n += 1
        prev = s
    return n


def poly_from(x: Any, where: str) -> fmpz_poly:
    """Integer polynomial from ascending integer strings (at most MAX_DEGREE); CheckFailed otherwise."""
    cs = jlist(x, where)
    if not cs or len(cs) > MAX_DEGREE + 1:
        _fail("limits", f"{where}: polynomial with {len(cs)} coefficients (limit 1..{MAX_DEGREE + 1})")
    return fmpz_poly([zint(c, f"{where}[{i}]") for i, c in enumerate(cs)])


def normalize(f: fmpz_poly) -> fmpz_poly:
    """Primitive part with positive leading coefficient."""
    c = f.content()
    if c != 0 and c != 1:
        f = fmpz_poly([x // c for x in f.coeffs()])
    if f.leading_coefficient() < 0:
        f = -f
    return f


def reflect(f: fmpz_poly) -> fmpz_poly:
    """f(−x), normalised."""
    return normalize(fmpz_poly([c if k % 2 == 0 else -c for k, c in enumerate(f.coeffs())]))


def rescale(f: fmpz_poly, D: fmpz) -> fmpz_poly:
    """Normalised polynomial whose roots are (roots of f)/D, for D > 0:
    f(D·x)."""
    return normalize(fmpz_poly([c * D**k for k, c in enumerate(f.coeffs())]))


def is_irreducible_normalized(f: fmpz_poly) -> bool:
    """f primitive, positive leading coefficient, irreducible over Z (FLINT
    factorisation)."""
    if f.degree() < 1 or f.leading_coefficient() <= 0 or f.content() != 1:
        return False
    c, facs = f.factor()
    return c == 1 and len(facs) == 1 and facs[0][1] == 1


def multiplicity(g: fmpz_poly, p: fmpz_poly) -> int:
    """Largest e with g^e | p (g non-constant, p ≠ 0), exact."""
    e = 0
    q = fmpq_poly(p)
    gq = fmpq_poly(g)
    while q.degree() >= gq.degree():
        qq, r = divmod(q, gq)
        if not r.is_zero():
            break
        q = qq
        e += 1
    return e


def poly_sign_at(f, x: fmpq) -> int:
    """Exact sign of f(x) at a rational x."""
    v = f(x)
    return (v > 0) - (v < 0)


# -- Sturm sequences --------------------------------------------------------


@functools.lru_cache(maxsize=2048)
def _sturm(cs: tuple) -> tuple:
    f = fmpq_poly([fmpq(c) for c in cs])
    seq = [f, f.derivative()]
    while not seq[-1].is_zero() and seq[-1].degree() > 0:
        r = -(seq[-2] % seq[-1])
        if r.is_zero():
            break
        # make the remainder primitive (scaling by a positive constant keeps signs)
        seq.append(r)
    return tuple(s for s in seq if not s.is_zero())


def _variations(seq: tuple, x: fmpq | None, at: int = 0) -> int:
    """Sign variations of the Sturm sequence at x (at = −1: −∞, +1: +∞)."""
    signs = []
    for s in seq:
        if x is None:
            lc = s.leading_coefficient()
            v = (lc > 0) - (lc < 0)
            if at < 0 and s.degree() % 2 == 1:
                v = -v
        else:
            v = poly_sign_at(s, x)
        if v:
            signs.append(v)
    return sum(1 for a, b in zip(signs, signs[1:]) if a != b)


def sturm_count(f: fmpz_poly, lo: fmpq | None, hi: fmpq | None) -> int:
    """Number of distinct real roots of f in (lo, hi] (None = ±∞), by
    Sturm's theorem; f must be square-free and non-constant."""
    seq = _sturm(tuple(int(c) for c in f.coeffs()))
    vlo = _variations(seq, lo, -1)
    vhi = _variations(seq, hi, +1)
    return vlo - vhi


def is_squarefree(f: fmpz_poly) -> bool:
    """gcd(f, f′) = 1 (exact)."""
    return f.degree() >= 1 and fmpq_poly(f).gcd(fmpq_poly(f.derivative())).degree() == 0


def all_roots_real(p: fmpz_poly) -> bool:
    """Exact: every complex root of p is real (square-free factorisation +
    Sturm count on each factor)."""
    _, facs = p.factor_squarefree()
    for g, _e in facs:
        if g.degree() >= 1 and sturm_count(g, None, None) != g.degree():
            return False
    return True


def cauchy_bound(f: fmpz_poly) -> fmpq:
    """Every complex root z of f has |z| ≤ 1 + max|c_i/c_n| (Cauchy)."""
    cs = [fmpq(c) for c in f.coeffs()]
    lc = abs(cs[-1])
    return 1 + max((abs(c) / lc for c in cs[:-1]), default=fmpq(0))


# ---------------------------------------------------------------------------
# exact real algebraic numbers


class Alg:
    """A real algebraic number, exact: root number ``idx`` (0-based,
    ascending) of the irreducible, primitive polynomial ``f`` (positive
    leading coefficient), isolated by the rational interval [lo, hi]
    (lo == hi only for a rational).  Construct with :func:`make_alg`, which
    re-verifies the isolation; equality is exact: two such numbers are equal
    iff their polynomials and indices are."""

    __slots__ = ("f", "idx", "lo", "hi")

    def __init__(self, f: fmpz_poly, idx: int, lo: fmpq, hi: fmpq):
        self.f, self.idx, self.lo, self.hi = f, idx, lo, hi

    @property
    def key(self) -> tuple:
        return (tuple(int(c) for c in self.f.coeffs()), self.idx)

    @property
    def rational(self) -> fmpq | None:
        if self.f.degree() != 1:
            return None
        c0, c1 = self.f.coeffs()
        return fmpq(-c0, c1)

    def sign(self) -> int:
        q = self.rational
        if q is not None:
            return (q > 0) - (q < 0)
        if self.lo > 0:
            return 1
        if self.hi < 0:
            return -1
        # irreducible of degree ≥ 2: 0 is not a root; lo, hi are not roots
        return 1 if poly_sign_at(self.f, fmpq(0)) * poly_sign_at(self.f, self.hi) < 0 else -1

    def refine(self, width: fmpq) -> "Alg":
        """Bisect exactly until hi − lo ≤ width."""
        if self.rational is not None:
            return self
        f = self.f
        s_lo = poly_sign_at(f, self.lo)
        steps = 0
        while self.hi - self.lo > width:
            mid = (self.lo + self.hi) / 2
            s = poly_sign_at(f, mid)
            if s == 0:  # impossible for an irreducible polynomial of degree ≥ 2
                raise ArithmeticError("irreducible polynomial vanished at a rational")
            if s == s_lo:
                self.lo = mid
            else:
                self.hi = mid
            steps += 1
            if steps > MAX_BITS + 64:
                _fail("limits", f"refinement beyond {MAX_BITS} bits")
        return self

    def ball(self, prec: int) -> arb:
        """Rigorous Arb enclosure of about ``prec`` bits."""
        q = self.rational
        if q is not None:
            return arb(q)
        mag = max(abs(self.lo), abs(self.hi), fmpq(1))
        self.refine(mag / fmpq(2) ** prec)
        return arb(self.lo).union(arb(self.hi))

    def neg(self) -> "Alg":
        q = self.rational
        if q is not None:
            return rational_alg(-q)
        g = reflect(self.f)
        nreal = sturm_count(self.f, None, None)
        return Alg(g, nreal - 1 - self.idx, -self.hi, -self.lo)

    def scaled(self, D: fmpz) -> "Alg":
        """self / D for an integer D > 0."""
        q = self.rational
        if q is not None:
            return rational_alg(q / D)
        return Alg(rescale(self.f, D), self.idx, self.lo / D, self.hi / D)

    def __repr__(self) -> str:
        q = self.rational
        return f"Alg({qstr(q)})" if q is not None else f"Alg(root {self.idx} of {self.f} in [{self.lo}, {self.hi}])"


def rational_alg(q: fmpq) -> Alg:
    """The rational q as an Alg (degree-1 polynomial, degenerate interval)."""
    q = fmpq(q)
    return Alg(normalize(fmpz_poly([-q.p, q.q])), 0, q, q)


def make_alg(f: fmpz_poly, idx: int, lo: fmpq, hi: fmpq, where: str) -> Alg:
    """Re-verify that [lo, hi] isolates root ``idx`` (ascending among the real
    roots) of the irreducible normalised f, and return it as an Alg.

    Checks: f irreducible, primitive, leading coefficient > 0; lo ≤ hi; if
    lo == hi then f(lo) = 0 (so f has degree 1) and idx == 0; otherwise f(lo),
    f(hi) ≠ 0 with opposite signs, exactly one root in (lo, hi) (Sturm) and
    exactly idx real roots below lo (Sturm)."""
    chk = "isolating interval"
    _require(is_irreducible_normalized(f), chk, f"{where}: polynomial {f} is not irreducible, primitive with positive leading coefficient")
    _require(lo <= hi, chk, f"{where}: interval [{lo}, {hi}] is empty")
    if lo == hi:
        _require(f(lo) == 0, chk, f"{where}: {qstr(lo)} is not a root of {f}")
        _require(idx == 0, chk, f"{where}: root index {idx} of a degree-1 polynomial")
        return Alg(f, 0, lo, hi)
    slo, shi = poly_sign_at(f, lo), poly_sign_at(f, hi)
    _require(slo != 0 and shi != 0, chk, f"{where}: an endpoint of [{lo}, {hi}] is a root")
    _require(slo != shi, chk, f"{where}: no sign change of {f} on the interval")
    _require(sturm_count(f, lo, hi) == 1, chk, f"{where}: the interval holds more than one root of {f}")
    below = sturm_count(f, None, lo)
    _require(below == idx, chk, f"{where}: the interval isolates root {below}, not root {idx}")
    return Alg(f, idx, lo, hi)


def alg_cmp(a: Alg, b: Alg) -> int:
    """Exact comparison −1/0/1.  Different normalised irreducible polynomials
    have no common root, so their roots differ and bisection separates them."""
    qa, qb = a.rational, b.rational
    if qa is not None and qb is not None:
        return (qa > qb) - (qa < qb)
    if a.f == b.f:
        return (a.idx > b.idx) - (a.idx < b.idx)
    for _ in range(4 * MAX_BITS):
        if a.hi < b.lo:
            return -1
        if b.hi < a.lo:
            return 1
        for x, other in ((a, b), (b, a)):
            q = other.rational
            if q is not None and x.rational is None and x.lo <= q <= x.hi:
                # q is not a root of x.f (irreducible, degree ≥ 2): cut at q
                if poly_sign_at(x.f, q) == poly_sign_at(x.f, x.lo):
                    x.lo = q
                else:
                    x.hi = q
        for x in (a, b):
            if x.rational is None:
                x.refine((x.hi - x.lo) / 4)
    _fail("limits", "could not separate two algebraic numbers within the precision limit")


def own_real_roots(f: fmpz_poly) -> list[Alg]:
    """All real roots of an irreducible normalised f, ascending, isolated by
    exact Sturm bisection (kernel's own isolation, no producer code)."""
    if f.degree() == 1:
        c0, c1 = f.coeffs()
        return [rational_alg(fmpq(-c0, c1))]
    R = cauchy_bound(f)
    out = []
    stack = [(-R, R)]
    while stack:
        lo, hi = stack.pop()
        n = sturm_count(f, lo, hi)
        if n == 0:
            continue
        if n == 1 and poly_sign_at(f, lo) != 0 and poly_sign_at(f, hi) != 0:
            out.append((lo, hi))
            continue
        mid = (lo + hi) / 2
        stack.append((lo, mid))
        stack.append((mid, hi))
        if len(stack) > 10 * MAX_DEGREE:
            _fail("limits", "root isolation did not converge")
    out.sort(key=lambda t: t[0])
    return [Alg(f, k, lo, hi) for k, (lo, hi) in enumerate(out)]


# ---------------------------------------------------------------------------
# exact zero test of an integer polynomial expression in algebraic integers


def _degree_bound(algs: list[Alg]) -> int:
    """Upper bound on [Q(algs) : Q]: for each polynomial f of degree d with k
    distinct roots involved, d(d−1)…(d−k+1) (tower law)."""
    by_poly: dict = {}
    for a in algs:
        if a.rational is None:
            by_poly.setdefault(tuple(int(c) for c in a.f.coeffs()), set()).add(a.idx)
    deg = 1
    for cs, idxs in by_poly.items():
        d = len(cs) - 1
        for i in range(len(idxs)):
            deg *= d - i
        if deg > MAX_CONJUGATES:
            return deg
    return deg


def decide_zero(F: Callable[[list], Any], algs: list[Alg]) -> bool | None:
    """Decide exactly whether x = F(algs) is zero, where F is an integer
    polynomial expression (only +, −, × and integer constants) and every
    element of ``algs`` is an algebraic integer (root of a monic integer
    polynomial) or a rational.

    Rational inputs only: exact evaluation.  Otherwise (gap argument): x is an
    algebraic integer of degree ≤ g (tower bound); every conjugate of x is
    F evaluated at conjugates of the inputs, which lie in |z| ≤ R (Cauchy),
    so |conj| ≤ B with B an Arb bound of F over those discs; if x ≠ 0 its
    norm is a nonzero integer, hence |x| ≥ B^{−(g−1)}.  An enclosure of x
    that excludes 0 proves x ≠ 0; one inside (−B^{−(g−1)}, B^{−(g−1)}) proves
    x = 0.  Returns None when the degree bound or precision limit is hit."""
    if all(a.rational is not None for a in algs):
        v = F([a.rational for a in algs])
        return v == 0
    for a in algs:
        q = a.rational
        if (q is None and a.f.leading_coefficient() != 1) or (q is not None and q.q != 1):
            return None  # not an algebraic integer: the gap argument does not apply
    g = _degree_bound(algs)
    if g > MAX_CONJUGATES:
        return None
    old = FCTX.prec
    try:
        FCTX.prec = 64
        discs = []
        for a in algs:
            q = a.rational
            if q is not None:
                discs.append(arb(q))
            else:
                R = cauchy_bound(a.f)
                discs.append(arb(0, arb(R).upper()))
        Bball = abs(F(discs))
        B = _arb_upper_q(Bball) + 1
        bb = int(B.p // B.q + 1).bit_length()  # 2^bb ≥ B
        gap_bits = (g - 1) * bb  # a nonzero x has |x| ≥ B^{-(g-1)} ≥ 2^{-gap_bits}
        prec = 64
        while prec <= MAX_BITS:
            FCTX.prec = prec + bb + 32
            x = F([a.ball(prec + bb + 32) for a in algs])
            if not x.contains(0):
                return False
            if _arb_upper_q(abs(x)) < fmpq(1, 2 ** gap_bits):
                return True
            if prec > gap_bits + 64:
                return None  # cannot happen for a correct degree bound; be safe
            prec *= 2
        return None
    finally:
        FCTX.prec = old


def _arb_upper_q(x: arb) -> fmpq:
    """Exact rational upper bound of |x| for an Arb ball."""
    m, e = x.mid().man_exp()
    r, er = x.rad().man_exp()
    mid = abs(fmpq(int(m)) * _p2(int(e)))
    rad = fmpq(int(r)) * _p2(int(er))
    return mid + rad


def _p2(e: int) -> fmpq:
    return fmpq(2) ** e if e >= 0 else fmpq(1, 2 ** (-e))


def arb_bounds_q(x: arb) -> tuple[fmpq, fmpq]:
    """Exact rational endpoints [mid − rad, mid + rad] of an Arb ball."""
    m, e = x.mid().man_exp()
    r, er = x.rad().man_exp()
    mid = fmpq(int(m)) * _p2(int(e))
    rad = fmpq(int(r)) * _p2(int(er))
    return mid - rad, mid + rad


def enclosure_within(value: Callable[[int], arb], lo: fmpq, hi: fmpq, check: str, what: str) -> None:
    """Require the real number enclosed by value(prec) to lie in [lo, hi]:
    refine until its enclosure fits inside (valid) or misses it (invalid)."""
    _require(lo <= hi, check, f"{what}: interval [{lo}, {hi}] is empty")
    prec = 64
    while prec <= MAX_BITS:
        old = FCTX.prec
        try:
            FCTX.prec = prec
            x = value(prec)
        finally:
            FCTX.prec = old
        a, b = arb_bounds_q(x)
        if lo <= a and b <= hi:
            return
        if b < lo or a > hi:
            _fail(check, f"{what}: the exact value lies outside the stated interval [{_short(lo)}, {_short(hi)}]")
        prec *= 2
    _fail(check, f"{what}: could not confirm the stated interval within {MAX_BITS} bits")


def _short(q: fmpq) -> str:
    s = qstr(q)
    if len(s) <= 40:
        return s
    return format(float(q), ".17g") + "…"


# ---------------------------------------------------------------------------
# spectra


@dataclass
class Spectrum:
    """Exact real spectrum of a matrix X with real eigenvalues: the roots of
    charpoly(D·X) (algebraic integers), so eigenvalue = root / D.

    roots -- distinct nonzero roots with multiplicities
    pos   -- positive roots with multiplicity, decreasing
    neg   -- negative roots with multiplicity, most negative first
    zero  -- multiplicity of the eigenvalue 0
    """

    D: fmpz
    N: int
    zero: int
    roots: list
    pos: list
    neg: list
    source: str


def _sorted_spectrum(D: fmpz, N: int, zero: int, roots: list, source: str) -> Spectrum:
    expanded = [a for a, m in roots for _ in range(m)]
    pos = [a for a in expanded if a.sign() > 0]
    neg = [a for a in expanded if a.sign() < 0]
    key = functools.cmp_to_key(alg_cmp)
    pos.sort(key=key, reverse=True)
    neg.sort(key=key)
    return Spectrum(D, N, zero, roots, pos, neg, source)


def own_spectrum(X: fmpq_mat) -> Spectrum:
    """Spectrum of a square rational X whose eigenvalues are all real,
    computed by the kernel itself: FLINT charpoly and factorisation, Sturm
    isolation.  CheckFailed if some eigenvalue is not real."""
    B, D = X.numer_denom()
    p = B.charpoly()
    N = X.nrows()
    cs = coeffs(p)
    z = next(i for i, c in enumerate(cs) if c != 0)
    rest = fmpz_poly(cs[z:])
    roots = []
    if rest.degree() > 0:
        _, facs = rest.factor()
        for f, e in facs:
            f = normalize(f)
            rs = own_real_roots(f)
            _require(len(rs) == f.degree(), "spectrum", "matrix has a non-real eigenvalue")
            roots.extend((r, int(e)) for r in rs)
    return _sorted_spectrum(fmpz(D), N, z, roots, "kernel")


# ---------------------------------------------------------------------------
# weights files: a small safetensors reader (standard library only)
#
# A .safetensors file is an 8-byte little-endian header length h, h bytes of
# JSON mapping tensor names to {"dtype", "shape", "data_offsets": [s, e]},
# then the raw little-endian tensor data (offsets relative to byte 8 + h).
# Every IEEE binary float is an exact dyadic rational: with sign s, biased
# exponent field E (w bits) and fraction field F (t bits), a finite value is
# (−1)^s · m · 2^(max(E, 1) − bias − t) with m = F + 2^t·[E > 0].  The kernel
# reads the bit patterns with ``array`` and builds these integers directly;
# no float arithmetic is done.  E = 2^w − 1 (Inf/NaN) is refused.

#: largest safetensors JSON header (bytes)
MAX_WEIGHTS_HEADER = 100 * 1024 * 1024
#: largest single tensor the kernel reads (bytes)
MAX_TENSOR_BYTES = 1 << 32
#: most entries of W_Q and W_K together that the kernel converts to integers
MAX_HEAD_ENTRIES = 1 << 22
#: weights files up to this size are read into memory once, hashed, and the
#: tensors are cut from the very bytes that were hashed; larger files are
#: streamed (hashed again) each time a certificate needs tensors from them
WEIGHTS_MEMORY_BYTES = 1 << 30

#: dtype -> (bytes, exponent bits, fraction bits, array typecode of the raw bits)
_FLOAT_FORMATS = {"F64": (8, 11, 52, "Q"), "F32": (4, 8, 23, "I"), "F16": (2, 5, 10, "H"), "BF16": (2, 8, 7, "H")}


class WeightsFormatError(Exception):
    """The weights file is not one the kernel reads (not safetensors, a
    dtype other than F64/F32/F16/BF16, a slice it cannot take): the
    certificate stays partially re-checked, it is not refuted."""


class _WeightsFile:
    """One weights file: its SHA-256 and, for a safetensors file, its header.
    ``blob`` holds the whole file when it is at most WEIGHTS_MEMORY_BYTES."""

    def __init__(self, path: Path):
        self.path = path
        st = path.stat()
        self.size = st.st_size
        self.ident = (str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ino)
        self.blob: bytes | None = None
        self.header: dict | None = None
        self.format_problem = ""
        self.data_start = 0
        with open(path, "rb") as fh:
            if self.size <= WEIGHTS_MEMORY_BYTES:
                self.blob = fh.read()
                self.sha256 = hashlib.sha256(self.blob).hexdigest()
                head = self.blob[:8]
            else:
                head = fh.read(8)
                fh.seek(0)
                h = hashlib.sha256()
                for chunk in iter(lambda: fh.read(1 << 22), b""):
                    h.update(chunk)
                self.sha256 = h.hexdigest()
        self._parse_header(head)

    def _parse_header(self, head: bytes) -> None:
        if head[:4] == b"GGUF":
            self.format_problem = ("a GGUF file (quantised blocks): the kernel does not dequantise GGUF, so its "
                                   "tensors are not re-read")
            return
        if len(head) < 8:
            self.format_problem = "too short to be a safetensors file"
            return
        hlen = int.from_bytes(head, "little")
        if hlen < 2 or hlen > MAX_WEIGHTS_HEADER or 8 + hlen > self.size:
            self.format_problem = "not a safetensors file (bad header length)"
            return
        if self.blob is not None:
            raw = self.blob[8:8 + hlen]
        else:
            with open(self.path, "rb") as fh:
                fh.seek(8)
                raw = fh.read(hlen)
        try:
            header = json.loads(raw.decode("utf-8"), object_pairs_hook=_pairs, parse_constant=_bad_constant)
        except (UnicodeDecodeError, ValueError, _DupKey, RecursionError):
            self.format_problem = "not a safetensors file (header is not strict JSON)"
            return
        if not isinstance(header, dict):
            self.format_problem = "not a safetensors file (header is not a JSON object)"
            return
        header.pop("__metadata__", None)
        self.header = header
        self.data_start = 8 + hlen

    def tensor_info(self, name: str) -> tuple[str, list[int], int, int]:
        """(dtype, shape, start, end) of tensor ``name`` with the offsets made
        absolute and checked against the file size and the shape."""
        info = self.header.get(name)
        if not isinstance(info, dict):
            raise WeightsFormatError(f"no tensor named {name!r} in {self.path.name}")
        dt, shape, offs = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if dt not in _FLOAT_FORMATS:
            raise WeightsFormatError(f"tensor {name} has dtype {dt!r}; the kernel reads F64/F32/F16/BF16 only")
        _require(isinstance(shape, list) and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                                 for s in shape), "weights", f"tensor {name}: malformed shape")
        _require(isinstance(offs, list) and len(offs) == 2 and all(isinstance(s, int) and not isinstance(s, bool)
                                                                  for s in offs), "weights",
                 f"tensor {name}: malformed data_offsets")
        count = 1
        for s in shape:
            count *= s
        nbytes = count * _FLOAT_FORMATS[dt][0]
        _require(nbytes <= MAX_TENSOR_BYTES, "limits", f"tensor {name}: {nbytes} bytes exceed {MAX_TENSOR_BYTES}")
        s, e = offs
        _require(0 <= s <= e and e - s == nbytes and self.data_start + e <= self.size, "weights",
                 f"tensor {name}: data_offsets {offs} disagree with its shape {shape} or the file size")
        return dt, shape, self.data_start + s, self.data_start + e

    def read_ranges(self, ranges: list[tuple[int, int]], expect_sha: str) -> list[bytes]:
        """The bytes of each absolute [start, end) range, cut from the hashed
        bytes (in memory) or from a fresh streaming pass that is hashed again
        and must still give ``expect_sha``."""
        if self.blob is not None:
            return [self.blob[a:b] for a, b in ranges]
        out = [bytearray() for _ in ranges]
        h = hashlib.sha256()
        pos = 0
        with open(self.path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 22), b""):
                h.update(chunk)
                end = pos + len(chunk)
                for k, (a, b) in enumerate(ranges):
                    lo, hi = max(a, pos), min(b, end)
                    if lo < hi:
                        out[k] += chunk[lo - pos:hi - pos]
                pos = end
        _require(h.hexdigest() == expect_sha, "input", f"{self.path.name} changed while it was being read")
        return [bytes(x) for x in out]


#: one weights file kept between certificates (a directory of heads shares it)
_WEIGHTS_CACHE: dict = {}


def open_weights(path: Path) -> _WeightsFile:
    """Hash (and for small files read) a weights file once per run; the cache
    is keyed by the resolved path, size, modification time and inode."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ino)
    wf = _WEIGHTS_CACHE.get(key)
    if wf is None:
        _WEIGHTS_CACHE.clear()
        wf = _WeightsFile(path)
        _WEIGHTS_CACHE[wf.ident] = wf
    return wf


def float_bits_to_dyadic(raw: bytes, dtype: str) -> tuple[list[int], list[int]]:
    """Exact values of little-endian IEEE floats: (mantissas, exponents) with
    value_i = mantissas[i] · 2^exponents[i] (mantissas signed integers).
    CheckFailed("weights") on Inf/NaN."""
    size, wexp, tfrac, code = _FLOAT_FORMATS[dtype]
    a = array(code)
    _require(a.itemsize == size, "weights", f"platform array type {code!r} is not {size} bytes")
    a.frombytes(raw)
    if sys.byteorder != "little":
        a.byteswap()
    emask = (1 << wexp) - 1
    fmask = (1 << tfrac) - 1
    hidden = 1 << tfrac
    sbit = 1 << (wexp + tfrac)
    off = (1 << (wexp - 1)) - 1 + tfrac
    mans: list[int] = []
    exps: list[int] = []
    for u in a:
        E = (u >> tfrac) & emask
        _require(E != emask, "weights", "the weights contain Inf or NaN, which are not rational numbers")
        m = u & fmask
        if E:
            m |= hidden
        else:
            E = 1
        mans.append(-m if u & sbit else m)
        exps.append(E - off)
    return mans, exps


def _common_scale(parts: list[tuple[list[int], list[int]]]) -> tuple[list[list[int]], int]:
    """Integers Z_k and one exponent e0 with part_k = Z_k · 2^e0 exactly,
    the common power of two removed (some entry of some Z_k is odd, or all
    are zero and e0 = 0)."""
    emin = None
    for mans, exps in parts:
        for m, x in zip(mans, exps):
            if m and (emin is None or x < emin):
                emin = x
    if emin is None:
        return [[0] * len(m) for m, _ in parts], 0
    Zs = [[m << (x - emin) if m else 0 for m, x in zip(mans, exps)] for mans, exps in parts]
    orv = 0
    for Z in Zs:
        for v in Z:
            orv |= v
    t = (orv & -orv).bit_length() - 1
    if t > 0:
        Zs = [[v >> t for v in Z] for Z in Zs]
    return Zs, emin + t


def head_matrix(wf: _WeightsFile, tensors: list, n: int, N: int) -> tuple[list[int], int]:
    """M = [W_K; W_Q] (2n x N, row-major Python ints Z) and e0 with
    M = Z·2^e0 exactly, read from the safetensors file as the certificate's
    ``input.tensors`` record it: ``rows [a, b]`` of a ``[out, in]`` tensor
    (torch Linear; BERT/Llama heads are rows h·d:(h+1)·d), or ``cols [a, b]``
    of an ``[in, out]`` tensor with ``transform: "transpose"`` (GPT-2
    Conv1D).  WeightsFormatError for what the kernel does not read (other
    transforms, index-addressed tensors, other dtypes); CheckFailed for
    slices that do not fit the tensor or the stated n x N."""
    if wf.header is None:
        raise WeightsFormatError(wf.format_problem)
    _require(2 * n * N <= MAX_HEAD_ENTRIES, "limits", f"2n·N = {2 * n * N} entries exceed {MAX_HEAD_ENTRIES}")
    got: dict = {}
    for i, t in enumerate(tensors):
        where = f"input.tensors[{i}]"
        t = jdict(t, where)
        role = t.get("role")
        _require(role in ("W_Q", "W_K") and role not in got, "input", f"{where}: role must be W_Q or W_K, once each")
        extra = set(t) - {"role", "name", "rows", "cols", "layout", "transform", "sha256"}
        if extra:
            raise WeightsFormatError(f"{where}: fields {sorted(extra)} describe a transform the kernel does not apply")
        name = t.get("name")
        _require(isinstance(name, str), "input", f"{where}: tensor name missing")
        dt, shape, start, end = wf.tensor_info(name)
        if len(shape) != 2:
            raise WeightsFormatError(f"tensor {name} has shape {shape}, not a matrix")
        R, C = shape
        size = _FLOAT_FORMATS[dt][0]
        if "rows" in t and "cols" not in t:
            _require(t.get("transform") is None, "input", f"{where}: a row slice takes no transform")
            _require(t.get("layout", "linear[out,in]") == "linear[out,in]", "input", f"{where}: rows of a {t.get('layout')} tensor")
            a, b = (pyint(v, f"{where}.rows", 0, R) for v in jlist(t["rows"], f"{where}.rows", 2))
            _require(b - a == n and C == N, "input", f"{where}: rows {a}:{b} of {name} {shape} are not n x N = {n} x {N}")
            (raw,) = wf.read_ranges([(start + a * C * size, start + b * C * size)], wf.sha256)
            got[role] = float_bits_to_dyadic(raw, dt)
        elif "cols" in t and "rows" not in t:
            _require(t.get("transform") == "transpose", "input", f"{where}: a column slice must be transposed")
            _require(t.get("layout", "conv1d[in,out]") == "conv1d[in,out]", "input", f"{where}: cols of a {t.get('layout')} tensor")
            a, b = (pyint(v, f"{where}.cols", 0, C) for v in jlist(t["cols"], f"{where}.cols", 2))
            _require(b - a == n and R == N, "input", f"{where}: cols {a}:{b} of {name} {shape} are not N x n = {N} x {n}")
            _require(R * C * size <= 4 * MAX_HEAD_ENTRIES * 8, "limits", f"tensor {name} too large to transpose")
            (raw,) = wf.read_ranges([(start, end)], wf.sha256)
            mans, exps = float_bits_to_dyadic(raw, dt)
            got[role] = ([mans[r * C + c] for c in range(a, b) for r in range(R)],
                         [exps[r * C + c] for c in range(a, b) for r in range(R)])
        else:
            raise WeightsFormatError(f"{where}: neither rows nor cols (e.g. an index into a stacked array)")
    _require(set(got) == {"W_Q", "W_K"}, "input", "input.tensors must name W_Q and W_K")
    (ZK, ZQ), e0 = _common_scale([got["W_K"], got["W_Q"]])
    return ZK + ZQ, e0


# ---------------------------------------------------------------------------
# the certificate context: input, derived matrices, re-checked facts


@dataclass
class Outcome:
    """Result of verifying one certificate file.

    status  -- ``valid`` / ``invalid`` / ``unreadable`` / ``partial`` (a
               weights input: everything checkable without the weights passed,
               the conclusion itself was not re-derived; see not_checked)
    check   -- the failing check's name (invalid/unreadable)
    reason  -- one line: why it failed
    checked -- what was re-checked (short phrases)
    not_checked -- what could not be re-checked and why
    """

    path: str
    status: str
    check: str = ""
    reason: str = ""
    claim: str = ""
    verdict: str = ""
    checked: list = field(default_factory=list)
    not_checked: list = field(default_factory=list)

    def line(self) -> str:
        if self.status == "partial":
            return (f"{self.path}: partially re-checked ({self.claim}: {self.verdict}; {len(self.checked)} checks "
                    f"passed; {len(self.not_checked)} items NOT re-checked, e.g. {self.not_checked[-1]})")
        if self.status == "valid":
            extra = f"; not re-checked: {'; '.join(self.not_checked)}" if self.not_checked else ""
            return f"{self.path}: valid ({self.claim}: {self.verdict}; {len(self.checked)} checks){extra}"
        if self.status == "unreadable":
            return f"{self.path}: unreadable: {self.reason}"
        if self.status == "skipped":
            return f"{self.path}: skipped: {self.reason}"
        return f"{self.path}: invalid: [{self.check}] {self.reason}"


class Unavailable(Exception):
    """A matrix cannot be derived (weights file not reachable)."""


class Ctx:
    """Everything the kernel knows about one certificate."""

    def __init__(self, cert: dict, base_dir: Path | None):
        self.cert = cert
        self.base_dir = base_dir
        self.checked: list[str] = []
        self.not_checked: list[str] = []
        self.inp = cert["input"]
        self.kind = self.inp["kind"]
        self.L: fmpq_mat | None = None
        self.U: fmpq_mat | None = None
        self.W_Q: fmpq_mat | None = None
        self.W_K: fmpq_mat | None = None
        self.n: int | None = None
        self.available = True
        self._cache: dict = {}
        self.spectra: dict = {}
        self.inertia: dict = {}
        self.rank: dict = {}
        self.profiles: dict = {}
        self.witness_facts: list[dict] = []
        self.consumed: set[int] = set()
        self.undecided: list[str] = []
        self.hZ: fmpz_mat | None = None
        self.weights_gaps: list[str] = []
        self.he0 = 0
        self._read_input()

    def ok(self, what: str) -> None:
        self.checked.append(what)

    # -- input ----------------------------------------------------------
    def _read_input(self) -> None:
        inp, k = self.inp, self.kind
        allowed = {
            "matrix": {"kind", "L", "n"},
            "head": {"kind", "W_Q", "W_K", "n"},
            "orthogonal": {"kind", "L", "U", "n"},
            "weights": {"kind", "sha256", "file", "tensors", "n", "N", "model", "layer", "head", "kv_head",
                        "arch", "head_convention"},
        }
        if k in allowed:
            only_keys(inp, allowed[k], "input")
        if "n" in inp and k != "weights":
            self.n = pyint(inp["n"], "input.n", 0, MAX_DIM)
        if k == "matrix":
            _require("L" in inp, "input", "matrix input without L")
            self.L = ratmat(inp["L"], "input.L")
            _require(self.L.nrows() == self.L.ncols(), "input", "L is not square")
        elif k == "orthogonal":
            _require("L" in inp and "U" in inp, "input", "orthogonal input needs L and U")
            self.L = ratmat(inp["L"], "input.L")
            self.U = ratmat(inp["U"], "input.U")
            N = self.L.nrows()
            _require(self.L.ncols() == N, "input", "L is not square")
            _require(self.U.nrows() == N and self.U.ncols() == N, "input", "U and L differ in size")
        elif k == "head":
            _require("W_Q" in inp and "W_K" in inp, "input", "head input needs W_Q and W_K")
            self.W_Q = ratmat(inp["W_Q"], "input.W_Q")
            self.W_K = ratmat(inp["W_K"], "input.W_K")
            _require(
                (self.W_Q.nrows(), self.W_Q.ncols()) == (self.W_K.nrows(), self.W_K.ncols()),
                "input", "W_Q and W_K differ in shape",
            )
            _require(self.n is None or self.n == self.W_Q.nrows(), "input", "input.n differs from the rows of W_Q")
            self.n = self.W_Q.nrows()
            self.L = self.W_K.transpose() * self.W_Q
        elif k == "weights":
            self.available = False
            self._check_weights()
        else:
            self.available = False
        if self.L is not None:
            self.ok(f"input {k} parsed exactly ({self.L.nrows()}x{self.L.ncols()})")

    def _check_weights(self) -> None:
        inp = self.inp
        _require(isinstance(inp.get("sha256"), str), "input", "weights input without sha256")
        self.n = pyint(inp.get("n"), "input.n", 1, 1 << 20)
        self.N = pyint(inp.get("N"), "input.N", 1, 1 << 24)
        for i, t in enumerate(jlist(inp.get("tensors"), "input.tensors")):
            t = jdict(t, f"input.tensors[{i}]")
            if "sha256" in t:
                _require(t["sha256"] == inp["sha256"], "input", f"input.tensors[{i}].sha256 differs from input.sha256")
        f = inp.get("file")
        if not isinstance(f, str) or not f:
            self.not_checked.append("weights file hash (no file name recorded)")
            return
        cands = [Path(f)]
        if WEIGHTS_DIRS:
            cands.extend(Path(d) / Path(f).name for d in WEIGHTS_DIRS)
        if self.base_dir is not None and not Path(f).is_absolute():
            cands.append(self.base_dir / f)
        path = next((c for c in cands if c.is_file()), None)
        if path is None:
            self.not_checked.append(f"weights file {f} not reachable (pass --weights DIR): its hash and the "
                                    "matrices derived from it")
            return
        try:
            wf = open_weights(path)
        except OSError as err:
            self.not_checked.append(f"weights file {path} unreadable ({err.strerror}): its hash and the matrices")
            return
        _require(wf.sha256 == inp["sha256"], "input", f"SHA-256 of {f} differs from the certificate's")
        self.ok(f"weights file {f}: SHA-256 matches")
        try:
            Z, e0 = head_matrix(wf, jlist(inp.get("tensors"), "input.tensors"), self.n, self.N)
        except WeightsFormatError as err:
            self.not_checked.append(f"tensors of the weights file: {err}")
            return
        self.hZ = fmpz_mat(2 * self.n, self.N, Z)
        self.he0 = e0
        self.ok(f"W_Q, W_K rebuilt exactly from {f} (M = [W_K; W_Q] = Z·2^{e0}, {2 * self.n}x{self.N})")

    # -- derived matrices ------------------------------------------------
    def matrix(self, name: str, w: dict | None = None) -> fmpq_mat:
        """The matrix a witness names (DERIVED_MATRICES), derived from the
        exact input.  Raises Unavailable when the input has no matrices."""
        if name == "inline":
            _require(w is not None and "rows" in w, "witness", "inline matrix without rows")
            return ratmat(w["rows"], "witness.rows")
        if not self.available or self.L is None:
            raise Unavailable(name)
        if name in self._cache and name != "gram_in_basis":
            return self._cache[name]
        L = self.L
        N = L.nrows()
        if name == "L":
            X = L
        elif name == "S":
            X = sym(L)
        elif name == "T":
            X = skew(L)
        elif name in ("M", "G", "half_JG"):
            _require(self.kind == "head", "witness", f"matrix {name} needs a head input")
            M = fmpq_mat(self.W_K.tolist() + self.W_Q.tolist())
            if name == "M":
                X = M
            else:
                G = M * M.transpose()
                if name == "G":
                    X = G
                else:
                    n = self.W_Q.nrows()
                    J = fmpq_mat(2 * n, 2 * n)
                    for i in range(n):
                        J[i, n + i] = 1
                        J[n + i, i] = 1
                    X = J * G * fmpq(1, 2)
        elif name == "UtLU":
            _require(self.U is not None, "witness", "UtLU needs an orthogonal input")
            X = self.U.transpose() * L * self.U
        elif name == "gram_in_basis":
            _require(w is not None and "basis" in w, "witness", "gram_in_basis without basis")
            Bm = ratmat(w["basis"], "witness.basis")
            _require(Bm.nrows() == N and Bm.ncols() == N, "witness", "basis is not N x N")
            _require(Bm.det() != 0, "witness", "basis matrix is singular (not a basis)")
            return Bm.transpose() * sym(L) * Bm
        else:
            _fail("witness", f"unknown matrix name {name!r}")
        self._cache[name] = X
        return X

    def spectrum_of(self, X: fmpq_mat) -> Spectrum:
        k = mat_key(X)
        if k not in self.spectra:
            self.spectra[k] = own_spectrum(X)
            self.ok("spectrum computed by the kernel (charpoly, factorisation, Sturm isolation)")
        return self.spectra[k]

    def profile_of(self, X: fmpq_mat, padding: str) -> "KProfile":
        k = (mat_key(X), padding)
        if k not in self.profiles:
            self.profiles[k] = KProfile(X, padding, self.spectrum_of(sym(X)))
        return self.profiles[k]


# ---------------------------------------------------------------------------
# the profile, recomputed from an exact spectrum


@dataclass
class KCoord:
    """One profile coordinate: value = F(algs)·K with F an integer
    polynomial expression in the algebraic-integer roots ``algs`` (scaled
    eigenvalues of D·S) and K rational; ``zero`` decided structurally (a sum
    of strictly positive terms is zero iff it is empty)."""

    name: str
    zero: bool
    F: Callable[[list], Any] | None
    algs: list
    K: fmpq
    exact: fmpq | None  # known when every input is rational (or for a)
    proven: fmpq | None = None  # a rational value proved equal (gap argument)

    def ball(self, prec: int) -> arb:
        if self.exact is not None:
            return arb(self.exact)
        if self.proven is not None:
            return arb(self.proven)
        return self.F([a.ball(prec) for a in self.algs]) * arb(self.K)


class KProfile:
    """π(X) = (a, b, c, d) for square rational X ≠ 0 (SPEC Def 6, Lean
    profileA..D), recomputed from the exact spectrum of S = sym(X).

    padding ``lean`` pads α, β to length N; ``blueprint`` to equal length."""

    def __init__(self, X: fmpq_mat, padding: str, spec: Spectrum):
        _require(padding in ("lean", "blueprint"), "profile", f"unknown padding {padding!r}")
        self.N = X.nrows()
        self.padding = padding
        self.fL = frob(X)
        _require(self.fL != 0, "profile", "the matrix is 0: it has no profile")
        self.fS = frob(sym(X))
        self.fT = frob(skew(X))
        self.spec = spec
        D = spec.D
        m = self.N if padding == "lean" else max(len(spec.pos), len(spec.neg))
        self.m = m
        self.A = [spec.pos[j] if j < len(spec.pos) else None for j in range(m)]
        self.B = [spec.neg[j] if j < len(spec.neg) else None for j in range(m)]  # negative roots
        self.Bpos = [b.neg() if b is not None else None for b in self.B]  # |negative roots|
        self.order = []
        for a, b in zip(self.A, self.Bpos):
            if a is None and b is None:
                self.order.append(0)
            elif a is None:
                self.order.append(-1)
            elif b is None:
                self.order.append(1)
            else:
                self.order.append(alg_cmp(a, b))
        self.inertia = (len(spec.pos), len(spec.neg), spec.zero)
        scale = fmpq(D) ** 2 * self.fL
        both = [j for j in range(m) if self.A[j] is not None and self.B[j] is not None]
        jp = [j for j in range(m) if self.order[j] > 0]
        jm = [j for j in range(m) if self.order[j] < 0]
        self.coords = {
            "a": KCoord("a", self.fT == 0, None, [], fmpq(1), self.fT / self.fL),
            "b": self._coord("b", both, "prod", 2 / scale),
            "c": self._coord("c", jp, "diff", 1 / scale),
            "d": self._coord("d", jm, "diff", 1 / scale),
        }

    def _coord(self, name: str, js: list, form: str, K: fmpq) -> KCoord:
        if not js:
            return KCoord(name, True, None, [], K, fmpq(0))
        algs: list[Alg] = []
        index: dict = {}

        def slot(a: Alg | None):
            if a is None:
                return None
            if a.key not in index:
                index[a.key] = len(algs)
                algs.append(a)
            return index[a.key]

        terms = [(slot(self.A[j]), slot(self.Bpos[j])) for j in js]

        def F(v, terms=terms, form=form):
            s = 0
            for i, k in terms:
                x = v[i] if i is not None else 0
                y = v[k] if k is not None else 0
                s = s + (x * y if form == "prod" else (x - y) * (x - y))
            return s

        exact = None
        if all(a.rational is not None for a in algs):
            exact = fmpq(F([a.rational for a in algs])) * K
        return KCoord(name, False, F, algs, K, exact)

    def fibers(self) -> dict:
        z = {k: c.zero for k, c in self.coords.items()}
        one = {k: all(z[o] for o in "abcd" if o != k) for k in "abcd"}
        out = {}
        for k in "abcd":
            out[f"{k}=0"] = z[k]
            out[f"{k}=1"] = one[k]
        return out

    def alpha(self, j: int) -> Alg:
        a = self.A[j]
        return rational_alg(fmpq(0)) if a is None else a.scaled(self.spec.D)

    def beta(self, j: int) -> Alg:
        b = self.Bpos[j]
        return rational_alg(fmpq(0)) if b is None else b.scaled(self.spec.D)


def prove_coord_equals(kc: KCoord, q: fmpq, check: str, what: str) -> None:
    """Prove kc's exact value equals the rational q (or fail)."""
    if kc.exact is not None:
        _require(kc.exact == q, check, f"{what}: exact value is {qstr(kc.exact)}, the certificate says {qstr(q)}")
        return
    kp, kq = kc.K.p, kc.K.q
    qp, qq = q.p, q.q

    def G(v):
        return kc.F(v) * (kp * qq) - qp * kq

    r = decide_zero(G, kc.algs)
    if r is None:
        _fail(check, f"{what}: could not prove the exact value {qstr(q)} within the limits")
    _require(r, check, f"{what}: the exact value is not {qstr(q)}")
    kc.proven = q


def prove_coord_algebraic(kc: KCoord, alg: Alg, check: str, what: str) -> None:
    """Prove kc's value is the algebraic number alg: g(value) = 0 exactly and
    value ∈ alg's isolating interval."""
    if kc.exact is not None:
        _require(alg.rational is not None and alg.rational == kc.exact, check,
                 f"{what}: exact value is the rational {qstr(kc.exact)}")
        return
    g = coeffs(alg.f)
    n = len(g) - 1
    kp, kq = kc.K.p, kc.K.q

    def G(v):
        x = kc.F(v) * kp
        s = 0
        pw = 1
        for i, gi in enumerate(g):
            s = s + pw * (gi * kq ** (n - i))
            pw = pw * x
        return s

    r = decide_zero(G, kc.algs)
    if r is None:
        _fail(check, f"{what}: could not prove the algebraic value within the limits")
    _require(r, check, f"{what}: the value is not a root of the stated polynomial")
    enclosure_within(kc.ball, alg.lo, alg.hi, check, what)


def alg_from_json(x: Any, where: str) -> Alg:
    """Parse and re-verify {poly, root_index, interval} as an isolated real algebraic number (make_alg)."""
    d = jdict(x, where)
    only_keys(d, {"poly", "root_index", "interval"}, where)
    f = poly_from(d.get("poly"), f"{where}.poly")
    idx = pyint(d.get("root_index"), f"{where}.root_index", 0, MAX_DEGREE)
    iv = jlist(d.get("interval"), f"{where}.interval", 2)
    return make_alg(f, idx, rat(iv[0], f"{where}.interval[0]"), rat(iv[1], f"{where}.interval[1]"), where)


def check_interval_field(value: Callable[[int], arb], iv: Any, check: str, what: str) -> None:
    """Require the value enclosed by value(prec) to lie in the decimal interval [lo, hi] given as JSON."""
    iv = jlist(iv, f"{what}.interval", 2)
    enclosure_within(value, dec(iv[0], what), dec(iv[1], what), check, what)


def check_coord_json(kc: KCoord, cj: Any, where: str) -> bool:
    """Compare a claimed coordinate {exact, algebraic, interval}; returns
    True when an exact (rational or algebraic) value was claimed."""
    chk = f"profile {kc.name}"
    cj = jdict(cj, where)
    only_keys(cj, {"exact", "algebraic", "interval"}, where)
    ex, al = cj.get("exact"), cj.get("algebraic")
    claimed = False
    if ex is not None:
        _require(al is None, chk, f"{where}: both an exact and an algebraic value")
        prove_coord_equals(kc, rat(ex, f"{where}.exact"), chk, where)
        claimed = True
    elif al is not None:
        a = alg_from_json(al, f"{where}.algebraic")
        prove_coord_algebraic(kc, a, chk, where)
        claimed = True
    else:
        _require(not kc.zero, chk, f"{where}: the coordinate is exactly 0 but no exact value is given")
    if "interval" in cj:
        v = _coord_value(kc)
        if v is not None:
            iv = jlist(cj["interval"], f"{where}.interval", 2)
            lo, hi = dec(iv[0], where), dec(iv[1], where)
            _require(lo <= v <= hi, chk, f"{where}: the exact value {qstr(v)} is outside the stated interval")
        else:
            check_interval_field(kc.ball, cj["interval"], chk, where)
    return claimed


def check_eigen_json(a: Alg, cj: Any, where: str) -> None:
    """Compare a claimed α_j / β_j entry with the kernel's exact value a
    (an unscaled eigenvalue, or 0)."""
    chk = "profile eigenvalue"
    cj = jdict(cj, where)
    only_keys(cj, {"exact", "algebraic", "interval"}, where)
    ex, al = cj.get("exact"), cj.get("algebraic")
    if ex is not None:
        _require(al is None, chk, f"{where}: both an exact and an algebraic value")
        q = rat(ex, f"{where}.exact")
        _require(a.rational is not None and a.rational == q, chk, f"{where}: the eigenvalue is not {qstr(q)}")
    else:
        _require(al is not None, chk, f"{where}: neither an exact nor an algebraic value")
        b = alg_from_json(al, f"{where}.algebraic")
        _require(alg_cmp(a, b) == 0, chk, f"{where}: the stated algebraic number is not the eigenvalue")
    if "interval" in cj:
        check_interval_field(a.ball, cj["interval"], chk, where)


def check_profile_json(kp: KProfile, pj: Any, where: str) -> None:
    """Re-check a full profile JSON (Profile.to_json) against the kernel's."""
    chk = "profile"
    pj = jdict(pj, where)
    only_keys(pj, {"N", "padding", "a", "b", "c", "d", "fibers", "Theta", "alpha", "beta", "inertia",
                   "exact_complete"}, where)
    _require(pyint(pj.get("N"), f"{where}.N") == kp.N, chk, f"{where}.N is not {kp.N}")
    _require(pj.get("padding") == kp.padding, chk, f"{where}.padding is not {kp.padding!r}")
    complete = True
    for name in "abcd":
        complete &= check_coord_json(kp.coords[name], pj.get(name), f"{where}.{name}")
    if "exact_complete" in pj:
        _require(boolean(pj["exact_complete"], f"{where}.exact_complete") == complete, chk,
                 f"{where}.exact_complete is {pj['exact_complete']} but the exact values given say {complete}")
    fib = jdict(pj.get("fibers"), f"{where}.fibers")
    kf = kp.fibers()
    _require(set(fib) == set(kf), chk, f"{where}.fibers: keys differ from the eight faces/vertices")
    for k, v in kf.items():
        _require(boolean(fib[k], f"{where}.fibers.{k}") == v, chk, f"{where}.fibers[{k}] should be {v}")
    if "Theta" in pj:
        check_theta_json(kp, pj["Theta"], f"{where}.Theta")
    al = jlist(pj.get("alpha"), f"{where}.alpha", kp.m)
    be = jlist(pj.get("beta"), f"{where}.beta", kp.m)
    for j in range(kp.m):
        check_eigen_json(kp.alpha(j), al[j], f"{where}.alpha[{j}]")
        check_eigen_json(kp.beta(j), be[j], f"{where}.beta[{j}]")
    check_inertia_json(kp.inertia, pj.get("inertia"), f"{where}.inertia", chk)


def _coord_equals_rational(k: KCoord, q: fmpq) -> bool:
    """Exact test of value(k) = q (gap argument through decide_zero)."""
    if k.zero:
        return q == 0
    if k.exact is not None:
        return k.exact == q
    if k.proven is not None:
        return k.proven == q
    Kp, Kq, qp, qq = k.K.p, k.K.q, q.p, q.q

    def G(v):
        return k.F(v) * (Kp * qq) - qp * Kq

    r = decide_zero(G, k.algs)
    if r is None:
        _fail("limits", f"cannot decide whether {k.name} equals {qstr(q)} within the limits")
    return r


def check_theta_json(kp: KProfile, x: Any, where: str) -> None:
    """Membership of π in Θ = {a = b, cd = 0} (Prop 4): the kernel decides
    a = b exactly (a is rational) and cd = 0 from its structural zeros; a
    claimed ``null`` (undecided) is accepted only with a consistent member."""
    chk = "profile Theta"
    d = jdict(x, where)
    only_keys(d, {"a=b", "cd=0", "member"}, where)
    cd0 = kp.coords["c"].zero or kp.coords["d"].zero
    _require(boolean(d.get("cd=0"), f"{where}.cd=0") == cd0, chk, f"{where}: cd = 0 should be {cd0}")
    a = kp.coords["a"].exact
    _require(a is not None, chk, "the kernel's a is not rational")
    ab_claim = d.get("a=b")
    if ab_claim is None:
        ab = None
    else:
        ab = _coord_equals_rational(kp.coords["b"], a)
        _require(boolean(ab_claim, f"{where}.a=b") == ab, chk, f"{where}: a = b should be {ab}")
    member = d.get("member")
    if ab is None:
        _require(member is None or (member is False and not cd0), chk, f"{where}.member inconsistent with a=b undecided")
    else:
        _require(member is not None and boolean(member, f"{where}.member") == (ab and cd0), chk,
                 f"{where}.member should be {ab and cd0}")


def check_inertia_json(t: tuple, x: Any, where: str, chk: str) -> None:
    """Compare a JSON {n_pos, n_neg, n_zero} with the kernel's inertia triple t."""
    d = jdict(x, where)
    only_keys(d, {"n_pos", "n_neg", "n_zero"}, where)
    got = (pyint(d.get("n_pos"), where), pyint(d.get("n_neg"), where), pyint(d.get("n_zero"), where))
    _require(got == tuple(t), chk, f"{where}: inertia {got} but the matrix has {tuple(t)}")


# ---------------------------------------------------------------------------
# witness checkers (generic: their meaning does not depend on the claim)


def _real_rooted_reason(X: fmpq_mat, p: fmpz_poly) -> str:
    """Why every eigenvalue of X is real (needed for Descartes to be exact)."""
    if is_sym(X):
        return "symmetric (spectral theorem)"
    if all_roots_real(p):
        return "all roots real (Sturm)"
    _fail("inertia_charpoly", "the characteristic polynomial has non-real roots: sign changes do not give an inertia")


def w_inertia_charpoly(ctx: Ctx, w: dict, where: str) -> dict:
    """Re-check an ``inertia_charpoly`` witness: charpoly of scale·X recomputed (FLINT) and compared, real-rootedness justified (symmetric X, or Sturm), Descartes counts recomputed; records the inertia of X."""
    chk = "inertia_charpoly"
    only_keys(w, {"kind", "matrix", "scale", "charpoly", "sign_changes_pos", "sign_changes_neg",
                  "zero_multiplicity", "inertia", "basis", "rows"}, where)
    name = w.get("matrix")
    X = ctx.matrix(name, w)
    N = X.nrows()
    _require(X.ncols() == N, chk, f"{where}: matrix {name} is not square")
    D = zint(w.get("scale"), f"{where}.scale")
    _require(D > 0, chk, f"{where}: scale must be positive")
    B = integer_matrix(X, D, chk)
    p = B.charpoly()
    given = [zint(c, f"{where}.charpoly[{i}]") for i, c in enumerate(jlist(w.get("charpoly"), f"{where}.charpoly"))]
    _require(given == coeffs(p), chk, f"{where}: charpoly of {D}·{name} differs from the recomputed one")
    why = _real_rooted_reason(X, p)
    cs = coeffs(p)
    z = next(i for i, c in enumerate(cs) if c != 0)
    pos = sign_changes(cs)
    neg = sign_changes([c if k % 2 == 0 else -c for k, c in enumerate(cs)])
    _require(pos + neg + z == N, chk, f"{where}: Descartes counts do not add up to {N}")
    for key, v in (("sign_changes_pos", pos), ("sign_changes_neg", neg), ("zero_multiplicity", z)):
        _require(pyint(w.get(key), f"{where}.{key}") == v, chk, f"{where}.{key} should be {v}")
    check_inertia_json((pos, neg, z), w.get("inertia"), f"{where}.inertia", chk)
    ctx.inertia[mat_key(X)] = (pos, neg, z)
    ctx.ok(f"inertia of {name} {(pos, neg, z)} by charpoly sign changes ({why})")
    return {"matrix": name, "inertia": (pos, neg, z), "X": X}


def w_inertia_ldlt(ctx: Ctx, w: dict, where: str) -> dict:
    """Re-check an ``inertia_ldlt`` witness: P X Pᵀ = L D Lᵀ multiplied out exactly with L unit lower triangular, D from 1x1, [[0,b],[b,0]] and zero blocks; inertia read off D (Sylvester)."""
    chk = "inertia_ldlt"
    only_keys(w, {"kind", "matrix", "perm", "L", "D", "inertia", "basis", "rows"}, where)
    name = w.get("matrix")
    X = ctx.matrix(name, w)
    N = X.nrows()
    _require(X.ncols() == N, chk, f"{where}: matrix {name} is not square")
    perm = [pyint(v, f"{where}.perm", 0, N - 1) for v in jlist(w.get("perm"), f"{where}.perm", N)]
    _require(sorted(perm) == list(range(N)), chk, f"{where}: perm is not a permutation of 0..{N - 1}")
    rows = jlist(w.get("L"), f"{where}.L", N)
    Lm = eye(N)
    for i, r in enumerate(rows):
        r = jlist(r, f"{where}.L[{i}]", i)
        for j, v in enumerate(r):
            Lm[i, j] = rat(v, f"{where}.L[{i}][{j}]")
    Dm = fmpq_mat(N, N)
    pos = neg = zero = 0
    k = 0
    for bi, blk in enumerate(jlist(w.get("D"), f"{where}.D")):
        bw = f"{where}.D[{bi}]"
        blk = jdict(blk, bw)
        size = pyint(blk.get("size"), f"{bw}.size", 1, N)
        _require(k + size <= N, chk, f"{bw}: blocks exceed size {N}")
        if blk.get("zero") is True:
            only_keys(blk, {"size", "zero"}, bw)
            zero += size
        elif size == 1:
            only_keys(blk, {"size", "value"}, bw)
            v = rat(blk.get("value"), f"{bw}.value")
            Dm[k, k] = v
            pos += v > 0
            neg += v < 0
            zero += v == 0
        elif size == 2:
            only_keys(blk, {"size", "offdiag"}, bw)
            b = rat(blk.get("offdiag"), f"{bw}.offdiag")
            Dm[k, k + 1] = Dm[k + 1, k] = b
            if b != 0:
                pos += 1
                neg += 1
            else:
                zero += 2
        else:
            _fail(chk, f"{bw}: a block of size {size} must be a zero block")
        k += size
    _require(k == N, chk, f"{where}: D blocks cover {k} of {N} rows")
    PXP = fmpq_mat([[X[perm[i], perm[j]] for j in range(N)] for i in range(N)])
    _require(PXP == Lm * Dm * Lm.transpose(), chk, f"{where}: P·{name}·Pᵀ ≠ L·D·Lᵀ")
    t = (int(pos), int(neg), int(zero))
    check_inertia_json(t, w.get("inertia"), f"{where}.inertia", chk)
    ctx.inertia[mat_key(X)] = t
    ctx.ok(f"inertia of {name} {t} by LDLᵀ multiplied back out (Sylvester)")
    return {"matrix": name, "inertia": t, "X": X}


def _det_int(B: fmpz_mat, rows: list, cols: list) -> fmpz:
    if not rows:
        return fmpz(1)
    return fmpz_mat([[B[i, j] for j in cols] for i in rows]).det()


def w_rank(ctx: Ctx, w: dict, where: str) -> dict:
    """Re-check a ``rank`` witness: the r x r minor of scale·X recomputed over Z and reduced mod the stated prime (nonzero ⇒ rank ≥ r); the left-kernel vectors multiplied out and their own minor nonzero mod its prime (⇒ rank ≤ r)."""
    chk = "rank"
    only_keys(w, {"kind", "matrix", "scale", "rank", "minor_rows", "minor_cols", "prime", "minor_mod_p",
                  "left_kernel", "kernel_cols", "kernel_minor_mod_p", "kernel_prime", "rows"}, where)
    name = w.get("matrix")
    X = ctx.matrix(name, w)
    R, C = X.nrows(), X.ncols()
    D = zint(w.get("scale"), f"{where}.scale")
    _require(D > 0, chk, f"{where}: scale must be positive")
    B = integer_matrix(X, D, chk)
    r = pyint(w.get("rank"), f"{where}.rank", 0, min(R, C))
    rows = [pyint(v, f"{where}.minor_rows", 0, R - 1) for v in jlist(w.get("minor_rows"), f"{where}.minor_rows", r)]
    cols = [pyint(v, f"{where}.minor_cols", 0, C - 1) for v in jlist(w.get("minor_cols"), f"{where}.minor_cols", r)]
    _require(len(set(rows)) == r and len(set(cols)) == r, chk, f"{where}: repeated minor indices")
    p = zint(w.get("prime"), f"{where}.prime")
    _require(p >= 2 and p.is_prime(), chk, f"{where}: {p} is not a prime")
    mm = zint(w.get("minor_mod_p"), f"{where}.minor_mod_p")
    det = _det_int(B, rows, cols)
    _require(0 < mm < p, chk, f"{where}: minor_mod_p must be a nonzero residue")
    _require(det % p == mm, chk, f"{where}: the minor is {det % p} mod p, not {mm}")
    # rank ≤ r: R − r independent integer vectors y with yᵀB = 0
    ker = jlist(w.get("left_kernel"), f"{where}.left_kernel", R - r)
    kcols = jlist(w.get("kernel_cols"), f"{where}.kernel_cols", R - r)
    if R - r:
        Y = fmpz_mat([[zint(v, f"{where}.left_kernel[{i}]") for v in jlist(y, f"{where}.left_kernel[{i}]", R)]
                      for i, y in enumerate(ker)])
        _require((Y * B).is_zero(), chk, f"{where}: a left-kernel vector y has yᵀ·({D}·{name}) ≠ 0")
        kc = [pyint(v, f"{where}.kernel_cols", 0, R - 1) for v in kcols]
        _require(len(set(kc)) == len(kc), chk, f"{where}: repeated kernel_cols")
        kp = p
        if w.get("kernel_prime") is not None:
            kp = zint(w.get("kernel_prime"), f"{where}.kernel_prime")
            _require(kp >= 2 and kp.is_prime(), chk, f"{where}: kernel_prime {kp} is not a prime")
        km = zint(w.get("kernel_minor_mod_p"), f"{where}.kernel_minor_mod_p")
        kdet = fmpz_mat([[Y[i, j] for j in kc] for i in range(R - r)]).det()
        _require(0 < km < kp, chk, f"{where}: kernel_minor_mod_p must be a nonzero residue")
        _require(kdet % kp == km, chk, f"{where}: the kernel minor is {kdet % kp} mod its prime, not {km}")
    else:
        _require(w.get("kernel_minor_mod_p") is None and w.get("kernel_prime") is None, chk,
                 f"{where}: a kernel minor given for a full-row-rank matrix")
    ctx.rank[mat_key(X)] = r
    ctx.ok(f"rank {name} = {r} (nonzero {r}x{r} minor mod p; {R - r} independent left-kernel vectors)")
    return {"matrix": name, "rank": r, "X": X}


def w_eigenvalues(ctx: Ctx, w: dict, where: str) -> dict:
    """Re-check an ``eigenvalues`` witness: every root's polynomial irreducible and dividing charpoly(scale·X) exactly ``multiplicity`` times, every interval isolating its root (Sturm), the multiplicities (with zero_multiplicity) adding up to N; records the exact spectrum."""
    chk = "eigenvalues"
    only_keys(w, {"kind", "matrix", "scale", "roots", "zero_multiplicity", "rows", "basis"}, where)
    name = w.get("matrix")
    X = ctx.matrix(name, w)
    N = X.nrows()
    _require(X.ncols() == N, chk, f"{where}: matrix {name} is not square")
    D = zint(w.get("scale"), f"{where}.scale")
    _require(D > 0, chk, f"{where}: scale must be positive")
    B = integer_matrix(X, D, chk)
    p = B.charpoly()
    cs = coeffs(p)
    z = next(i for i, c in enumerate(cs) if c != 0)
    _require(pyint(w.get("zero_multiplicity"), f"{where}.zero_multiplicity") == z, chk,
             f"{where}: eigenvalue 0 has multiplicity {z}")
    roots = []
    seen = set()
    total = z
    for i, r in enumerate(jlist(w.get("roots"), f"{where}.roots")):
        rw = f"{where}.roots[{i}]"
        r = jdict(r, rw)
        only_keys(r, {"poly", "root_index", "interval", "multiplicity"}, rw)
        a = alg_from_json({k: r.get(k) for k in ("poly", "root_index", "interval")}, rw)
        _require(not (a.rational is not None and a.rational == 0), chk, f"{rw}: 0 belongs in zero_multiplicity")
        mult = pyint(r.get("multiplicity"), f"{rw}.multiplicity", 1, N)
        _require(multiplicity(a.f, p) == mult, chk, f"{rw}: multiplicity in charpoly(D·X) is {multiplicity(a.f, p)}, not {mult}")
        _require(a.key not in seen, chk, f"{rw}: root listed twice")
        seen.add(a.key)
        roots.append((a, mult))
        total += mult
    _require(total == N, chk, f"{where}: the roots account for {total} of {N} eigenvalues")
    spec = _sorted_spectrum(D, N, z, roots, "witness")
    ctx.spectra[mat_key(X)] = spec
    ctx.ok(f"spectrum of {name}: {len(roots)} distinct nonzero roots re-isolated (Sturm), multiplicities divide charpoly")
    return {"matrix": name, "spectrum": spec, "X": X}


def w_trace_powers(ctx: Ctx, w: dict, where: str) -> dict:
    """Re-check a ``trace_powers`` witness (Lemma 10): tr(S^k) and the characteristic polynomials of S and ½JG recomputed exactly."""
    chk = "trace_powers"
    only_keys(w, {"kind", "matrix", "traces", "charpoly_S", "charpoly_half_JG"}, where)
    _require(w.get("matrix") == "S", chk, f"{where}: trace_powers is about S")
    S = ctx.matrix("S")
    H = ctx.matrix("half_JG")
    traces = jlist(w.get("traces"), f"{where}.traces")
    _require(len(traces) <= MAX_DIM * 2, "limits", f"{where}: too many traces")
    Sk, Hk = eye(S.nrows()), eye(H.nrows())
    eq = []
    for k, t in enumerate(traces, start=1):
        Sk, Hk = Sk * S, Hk * H
        _require(rat(t, f"{where}.traces[{k - 1}]") == tr(Sk), chk, f"{where}: tr(S^{k}) is {qstr(tr(Sk))}")
        eq.append(tr(Sk) == tr(Hk))
    cpS = [rat(c, f"{where}.charpoly_S") for c in jlist(w.get("charpoly_S"), f"{where}.charpoly_S")]
    cpH = [rat(c, f"{where}.charpoly_half_JG") for c in jlist(w.get("charpoly_half_JG"), f"{where}.charpoly_half_JG")]
    _require(cpS == coeffs(S.charpoly()), chk, f"{where}: charpoly_S differs from the recomputed one")
    _require(cpH == coeffs(H.charpoly()), chk, f"{where}: charpoly_half_JG differs from the recomputed one")
    ctx.ok(f"tr(S^k), k = 1..{len(traces)}, and both characteristic polynomials recomputed")
    return {"matrix": "S", "ntraces": len(traces), "traces_equal": eq}


def w_profile(ctx: Ctx, w: dict, where: str) -> dict:
    """Re-check a ``profile`` witness (Def 6): the profile of the named matrix recomputed from its exact spectrum with the stated padding; order, α, β, a..d, fibers and inertia compared."""
    only_keys(w, {"kind", "matrix", "padding", "values", "order"}, where)
    name = w.get("matrix")
    X = ctx.matrix(name, w)
    _require(X.nrows() == X.ncols(), "profile", f"{where}: matrix {name} is not square")
    padding = w.get("padding")
    kp = ctx.profile_of(X, padding)
    order = [pyint(v, f"{where}.order", -1, 1) for v in jlist(w.get("order"), f"{where}.order", kp.m)]
    _require(order == kp.order, "profile order", f"{where}: order (sign of α_j − β_j) should be {kp.order}")
    check_profile_json(kp, w.get("values"), f"{where}.values")
    ctx.ok(f"profile of {name} ({padding} padding) recomputed from the exact spectrum; α, β, order, a..d, fibers match")
    return {"matrix": name, "profile": kp, "X": X}


def _charpoly_symmetric_about_zero(X: fmpq_mat) -> bool:
    cs = coeffs(X.charpoly())
    refl = [c if k % 2 == 0 else -c for k, c in enumerate(cs)]
    return refl == cs or refl == [-c for c in cs]


def _psd(X: fmpq_mat) -> bool:
    """Symmetric X ⪰ 0 ⇔ no negative eigenvalue ⇔ charpoly(−x) has no sign
    change (Descartes, exact for real-rooted polynomials)."""
    if not is_sym(X):
        return False
    cs = coeffs(X.numer_denom()[0].charpoly())
    return sign_changes([c if k % 2 == 0 else -c for k, c in enumerate(cs)]) == 0


def _pairing(kp: KProfile) -> dict | None:
    """Partner of each distinct nonzero eigenvalue (key → partner key or
    None) in the padded pairing; None when some copies of one eigenvalue have
    different partners (the eigenspace would have to be split)."""
    partner: dict = {}
    for a, b in zip(kp.A, kp.B):
        for r, o in ((a, b), (b, a)):
            if r is None:
                continue
            ok = None if o is None else o.key
            if r.key in partner and partner[r.key] != ok:
                return None
            partner[r.key] = ok
    return partner


def canonical_HP(kp: KProfile, face: str, S: fmpq_mat, prec: int) -> tuple:
    """Arb enclosures of the canonical H, P of Theorem 4 (face d: S = H + P,
    face c: S = H − P) built from the spectral projectors
    E_λ = Π_{μ≠λ} (S − μI)/(λ − μ) of the distinct eigenvalues; both are
    polynomials in S, hence commute with S and each other, and their
    spectra are read off the exact pairing."""
    old = FCTX.prec
    FCTX.prec = prec
    try:
        return _canonical_HP(kp, face, S, prec)
    finally:
        FCTX.prec = old


def _canonical_HP(kp: KProfile, face: str, S: fmpq_mat, prec: int) -> tuple:
    partner = _pairing(kp)
    D = kp.spec.D
    N = S.nrows()
    vals = {}
    for a, _m in kp.spec.roots:
        vals[a.key] = a.ball(prec) / D
    keys = list(vals)
    if kp.spec.zero:
        vals[("zero",)] = arb(0)
    Sa = arb_mat(S.tolist())
    I = arb_mat(N, N)
    for i in range(N):
        I[i, i] = 1
    E = {}
    for k, lam in vals.items():
        Mx = I
        for k2, mu in vals.items():
            if k2 != k:
                Mx = Mx * (Sa - I * mu) * (1 / (lam - mu))
        E[k] = Mx
    pos_keys = {a.key for a in kp.spec.pos}
    H = arb_mat(N, N)
    P = arb_mat(N, N)
    for k in keys:
        lam = vals[k]
        ok = partner.get(k)
        mu = vals[ok] if ok is not None else arb(0)
        if face == "d":
            if k in pos_keys:
                H += E[k] * (-mu)
                P += E[k] * (lam + mu)
            else:
                H += E[k] * lam
        else:
            if k in pos_keys:
                H += E[k] * lam
            else:
                H += E[k] * (-mu)
                P += E[k] * (-(lam + mu))
    return Sa, H, P


def w_fiber(ctx: Ctx, w: dict, where: str) -> dict:
    """Theorem 4 items 3/4: S = H ± P on the face d = 0 (+) / c = 0 (−)."""
    chk = "fiber_decomposition"
    only_keys(w, {"kind", "face", "exact", "H", "P", "checks", "precision_bits", "reason"}, where)
    face = w.get("face")
    _require(face in ("c", "d"), chk, f"{where}: face must be 'c' or 'd'")
    L = ctx.matrix("L")
    S = sym(L)
    N = S.nrows()
    kp = ctx.profile_of(L, "lean")
    _require(kp.coords[face].zero, chk, f"{where}: a decomposition for the face {face} = 0, but {face} ≠ 0")
    target = kp.coords["c" if face == "d" else "d"]
    tname = "c" if face == "d" else "d"
    sign = 1 if face == "d" else -1
    exact = boolean(w.get("exact"), f"{where}.exact")
    if exact:
        H = ratmat(w.get("H"), f"{where}.H")
        P = ratmat(w.get("P"), f"{where}.P")
        _require(H.nrows() == N and H.ncols() == N and P.nrows() == N and P.ncols() == N, chk,
                 f"{where}: H and P must be {N}x{N}")
        fP, fL = frob(P), frob(L)
        try:
            prove_coord_equals(target, fP / fL, chk, f"{where}: ‖P‖²/‖L‖² vs {tname}")
            norm_ok = True
        except CheckFailed:
            norm_ok = False
        checks = {
            "S = H ± P": S == H + P * sign,
            "H symmetric": is_sym(H),
            "spectrum of H symmetric about 0": _charpoly_symmetric_about_zero(H),
            "P positive semidefinite": _psd(P),
            "SH = HS": S * H == H * S,
            "SP = PS": S * P == P * S,
            "HP = PH": H * P == P * H,
            f"‖P‖² = {tname}‖L‖²": norm_ok,
        }
        compare_checks(checks, w.get("checks"), f"{where}.checks")
        ctx.ok(f"exact fiber decomposition on {face} = 0: S = H {'+' if sign > 0 else '−'} P, commutation, "
               f"spectra and ‖P‖² re-checked")
        return {"face": face, "exact": True, "checks": checks, "evidence": "exact"}
    partner = _pairing(kp)
    if "H" not in w and "P" not in w:
        _require("reason" in w, chk, f"{where}: neither H, P nor a reason")
        irr = any(a.rational is None for a, _ in kp.spec.roots)
        _require(partner is None and irr, chk,
                 f"{where}: said undecidable, but the eigenspaces need no irrational split")
        ctx.ok(f"decomposition on {face} = 0 left undecided: an irrational eigenspace would need splitting (confirmed)")
        return {"face": face, "exact": False, "checks": {}, "evidence": "undecided"}
    _require(partner is not None, chk, f"{where}: interval H, P need an eigenspace-respecting pairing")
    pyint(w.get("precision_bits"), f"{where}.precision_bits", 1, 1 << 20)
    Hi = jlist(w.get("H"), f"{where}.H", N)
    Pi = jlist(w.get("P"), f"{where}.P", N)
    box = {}
    for nm, Mi in (("H", Hi), ("P", Pi)):
        for i in range(N):
            row = jlist(Mi[i], f"{where}.{nm}[{i}]", N)
            for j in range(N):
                iv = jlist(row[j], f"{where}.{nm}[{i}][{j}]", 2)
                box[nm, i, j] = (dec(iv[0], f"{where}.{nm}[{i}][{j}]"), dec(iv[1], f"{where}.{nm}[{i}][{j}]"))
    cache = {}

    def hp(prec):
        if prec not in cache:
            cache[prec] = canonical_HP(kp, face, S, prec)
        return cache[prec]

    for (nm, i, j), (lo, hi) in box.items():
        idx = 1 if nm == "H" else 2
        enclosure_within(lambda prec, idx=idx, i=i, j=j: hp(prec)[idx][i, j], lo, hi, chk,
                         f"{where}.{nm}[{i}][{j}] (canonical spectral {nm})")
    Sa, H, P = hp(256)
    old = FCTX.prec
    FCTX.prec = 256
    R = Sa - H - P * sign
    comm = [Sa * H - H * Sa, Sa * P - P * Sa, H * P - P * H]
    normP = sum((P[i, j] * P[i, j] for i in range(N) for j in range(N)), arb(0))
    checks = {
        "S = H ± P (enclosure contains 0)": all(R[i, j].contains(0) for i in range(N) for j in range(N)),
        "commutators contain 0": all(C[i, j].contains(0) for C in comm for i in range(N) for j in range(N)),
        "‖P‖² enclosure meets the profile's": normP.overlaps(target.ball(256) * arb(frob(L))),
        "P ⪰ 0 and H spectrum symmetric (by construction from exact eigenvalue pairing)": True,
    }
    FCTX.prec = old
    compare_checks(checks, w.get("checks"), f"{where}.checks")
    ctx.ok(f"interval H, P on {face} = 0 contain the canonical spectral H, P (polynomials in S, so they commute "
           f"with S and each other; P ⪰ 0 and H's symmetric spectrum follow from the exact pairing)")
    return {"face": face, "exact": False, "checks": checks, "evidence": "certified"}


GENERIC_WITNESSES = {
    "inertia_charpoly": w_inertia_charpoly,
    "inertia_ldlt": w_inertia_ldlt,
    "rank": w_rank,
    "eigenvalues": w_eigenvalues,
    "trace_powers": w_trace_powers,
    "profile": w_profile,
    "fiber_decomposition": w_fiber,
}


# ---------------------------------------------------------------------------
# claim rules: the kernel's own evaluation of each claim's conclusion


@dataclass
class RuleResult:
    """What the kernel concludes about the claim on this input.

    checks -- label → bool, the kernel's value of every named check the
              producer may report (certificate checks must agree)
    values -- key of the certificate's ``values`` → validator(x, where)
    """

    verdict: str
    evidence: str
    convention: Any
    checks: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)


def _facts(ctx: Ctx, kind: str) -> list[tuple[int, dict, dict]]:
    return [(i, ctx.cert["witnesses"][i], f) for i, f in enumerate(ctx.witness_facts)
            if f is not None and ctx.cert["witnesses"][i].get("kind") == kind]


def _identity_witnesses(ctx: Ctx) -> list[tuple[int, dict]]:
    return [(i, w) for i, w in enumerate(ctx.cert["witnesses"]) if w.get("kind") == "identity"]


def _eq_rat(expected: fmpq, chk: str):
    def v(x, where):
        _require(rat(x, where) == expected, chk, f"{where} should be {qstr(expected)}")
    return v


def _eq_int(expected: int, chk: str):
    def v(x, where):
        _require(pyint(x, where) == expected, chk, f"{where} should be {expected}")
    return v


def _eq_inertia(t: tuple, chk: str):
    def v(x, where):
        check_inertia_json(t, x, where, chk)
    return v


def _profile_validator(kp: KProfile):
    def v(x, where):
        check_profile_json(kp, x, where)
    return v


def _checks_validator(rr_checks_ref: dict):
    def v(x, where):
        compare_checks(rr_checks_ref, x, where)
    return v


def compare_checks(kchecks: dict, x: Any, where: str) -> None:
    """Every named check in the certificate must be one the kernel evaluated,
    with the same truth value."""
    d = jdict(x, where)
    for label, val in d.items():
        b = boolean(val, f"{where}[{label!r}]")
        _require(label in kchecks, "checks", f"{where}: check {label!r} is not one the kernel can re-derive")
        _require(b == kchecks[label], "checks", f"{where}[{label!r}] is {b}, the kernel finds {kchecks[label]}")


def _inertia_of(ctx: Ctx, X: fmpq_mat) -> tuple:
    k = mat_key(X)
    if k in ctx.inertia:
        return ctx.inertia[k]
    sp = ctx.spectrum_of(X)
    t = (len(sp.pos), len(sp.neg), sp.zero)
    ctx.inertia[k] = t
    return t


def _rank_of(ctx: Ctx, X: fmpq_mat) -> int:
    k = mat_key(X)
    if k not in ctx.rank:
        ctx.rank[k] = X.rank()
        ctx.ok("rank computed by the kernel (FLINT rref)")
    return ctx.rank[k]


def _coord_value(kc: KCoord) -> fmpq | None:
    return kc.exact if kc.exact is not None else getattr(kc, "proven", None)


def _coord_is(kc: KCoord, q: fmpq) -> bool:
    """Exact test kc == q (CheckFailed "limits" when undecidable)."""
    if kc.exact is not None:
        return kc.exact == q
    kp, kq = kc.K.p, kc.K.q
    r = decide_zero(lambda v: kc.F(v) * (kp * q.q) - q.p * kq, kc.algs)
    if r is None:
        _fail("limits", f"cannot decide whether {kc.name} = {qstr(q)} within the limits")
    return r


def _coords_equal(k1: KCoord, k2: KCoord) -> bool:
    if k1.zero or k2.zero:
        return k1.zero and k2.zero
    if k1.exact is not None and k2.exact is not None:
        return k1.exact == k2.exact
    algs: list = []
    idx: dict = {}
    for a in k1.algs + k2.algs:
        if a.key not in idx:
            idx[a.key] = len(algs)
            algs.append(a)
    m1 = [idx[a.key] for a in k1.algs]
    m2 = [idx[a.key] for a in k2.algs]
    p1, q1, p2, q2 = k1.K.p, k1.K.q, k2.K.p, k2.K.q

    def G(v):
        return k1.F([v[i] for i in m1]) * (p1 * q2) - k2.F([v[i] for i in m2]) * (p2 * q1)

    r = decide_zero(G, algs)
    if r is None:
        _fail("limits", f"cannot decide whether two values of {k1.name} agree within the limits")
    return r


def _lean_div(x: fmpq, y: fmpq) -> fmpq:
    return fmpq(0) if y == 0 else x / y


def _consume_identity(ctx: Ctx, check_fn) -> None:
    for i, w in _identity_witnesses(ctx):
        check_fn(w, f"witnesses[{i}]")
        ctx.consumed.add(i)


# -- Def A1 ------------------------------------------------------------------

def rule_symPart(ctx: Ctx) -> RuleResult:
    """Def A1 (Lean ``symPart``/``skewPart``): L = S + T, S symmetric, T antisymmetric."""
    L = ctx.matrix("L")
    S, T = sym(L), skew(L)
    checks = {"L = S + T": L == S + T, "S symmetric": is_sym(S), "T antisymmetric": is_antisym(T)}

    def idw(w, where):
        only_keys(w, {"kind", "matrix", "S", "T", "checks"}, where)
        _require(w.get("matrix") == "L", "identity", f"{where}: matrix should be L")
        _require(ratmat(w.get("S"), f"{where}.S") == S, "identity", f"{where}.S is not (L + Lᵀ)/2")
        _require(ratmat(w.get("T"), f"{where}.T") == T, "identity", f"{where}.T is not (L − Lᵀ)/2")
        compare_checks(checks, w.get("checks"), f"{where}.checks")

    _consume_identity(ctx, idw)
    ctx.ok("S = (L+Lᵀ)/2 and T = (L−Lᵀ)/2 recomputed")
    return RuleResult("holds" if all(checks.values()) else "fails", "exact", None, checks,
                      {"checks": _checks_validator(checks)})


# -- Lemma 5 ------------------------------------------------------------------

def rule_lemma5(ctx: Ctx) -> RuleResult:
    """Lemma 5 (Lean ``frobSq_eq_frobSq_symPart_add_frobSq_skewPart`` …): the energy identities, with Lean's x/0 = 0 for the divided forms."""
    L = ctx.matrix("L")
    S, T = sym(L), skew(L)
    fL, fS, fT = frob(L), frob(S), frob(T)
    t2 = tr(L * L)
    h = fmpq(1, 2)
    checks = {
        "‖L‖² = ‖S‖² + ‖T‖²": fL == fS + fT,
        "‖S‖² = ½‖L‖² + ½tr(L²)": fS == h * fL + h * t2,
        "‖T‖² = ½‖L‖² − ½tr(L²)": fT == h * fL - h * t2,
        "‖S‖²/‖L‖² = ½ + tr(L²)/(2‖L‖²)": _lean_div(fS, fL) == h + _lean_div(t2, 2 * fL),
        "‖T‖²/‖L‖² = ½ − tr(L²)/(2‖L‖²)": _lean_div(fT, fL) == h - _lean_div(t2, 2 * fL),
    }
    vals = {"frobSq_L": fL, "frobSq_S": fS, "frobSq_T": fT, "trace_L_sq": t2}
    vv = {k: _eq_rat(v, "identity") for k, v in vals.items()}

    def idw(w, where):
        only_keys(w, {"kind", "matrix", "values", "checks"}, where)
        _require(w.get("matrix") == "L", "identity", f"{where}: matrix should be L")
        d = jdict(w.get("values"), f"{where}.values")
        _require(set(d) == set(vals), "identity", f"{where}.values: expected keys {sorted(vals)}")
        for k, f in vv.items():
            f(d[k], f"{where}.values.{k}")
        compare_checks(checks, w.get("checks"), f"{where}.checks")

    _consume_identity(ctx, idw)
    ctx.ok("‖L‖², ‖S‖², ‖T‖², tr(L²) recomputed exactly")
    return RuleResult("holds" if all(checks.values()) else "fails", "exact", None, checks, vv)


# -- Def 6 ---------------------------------------------------------------------

def rule_profile(ctx: Ctx) -> RuleResult:
    """Def 6 (Lean ``profileA..D``): the blueprint and Lean paddings give the same profile."""
    L = ctx.matrix("L")
    if frob(L) == 0:
        def lean(x, where):
            _require(jlist(x, where, 4) == ["0", "0", "0", "0"], "values", f"{where} should be four zeros")
        return RuleResult("fails", "exact", "lean", {}, {"lean": lean})
    pb = ctx.profile_of(L, "blueprint")
    pl = ctx.profile_of(L, "lean")
    m = pb.m
    same_structure = pb.order == pl.order[:m] and all(o == 0 for o in pl.order[m:])
    same = {}
    for k in "abcd":
        same[k] = same_structure and _coords_equal(pb.coords[k], pl.coords[k])

    def agrees(x, where):
        d = jdict(x, where)
        _require(set(d) == set("abcd"), "values", f"{where}: expected keys a, b, c, d")
        for k in "abcd":
            _require(boolean(d[k], f"{where}.{k}") == same[k], "profile", f"{where}.{k} should be {same[k]}")

    ctx.ok("blueprint and Lean paddings compared term by term")
    return RuleResult("holds" if all(same.values()) else "fails", "exact", "blueprint and lean", {},
                      {"blueprint": _profile_validator(pb), "lean_agrees": agrees})


# -- Theorem 4 -------------------------------------------------------------------

def rule_theorem4(ctx: Ctx) -> RuleResult:
    """Theorem 4 (Lean file SimplexFaces): nonnegativity, sum 1, the eight fibers and the decompositions S = H ± P on d = 0 / c = 0."""
    L = ctx.matrix("L")
    if frob(L) == 0:
        checks = {"sum = 1": False}

        def idw(w, where):
            only_keys(w, {"kind", "matrix", "values", "checks"}, where)
            d = jdict(w.get("values"), f"{where}.values")
            _require(d == {"a": "0", "b": "0", "c": "0", "d": "0"}, "identity", f"{where}.values should be zeros")
            compare_checks(checks, w.get("checks"), f"{where}.checks")

        _consume_identity(ctx, idw)
        zero = {k: _eq_rat(fmpq(0), "values") for k in ("a", "b", "c", "d", "sum")}
        return RuleResult("fails", "exact", "lean", checks, zero)
    p = ctx.profile_of(L, "lean")
    S = sym(L)
    inn = _inertia_of(ctx, S)
    _require(inn == p.inertia, "inertia", "witnessed inertia of S differs from its spectrum")
    fL, fS, fT = p.fL, p.fS, p.fT
    f = p.fibers()
    psd, nsd = inn[1] == 0, inn[0] == 0
    symL, antiL = is_sym(L), is_antisym(L)
    checks = {
        "a ≥ 0": p.coords["a"].exact >= 0,
        "b ≥ 0": all(a is None or a.sign() > 0 for a in p.A) and all(b is None or b.sign() > 0 for b in p.Bpos),
        "c ≥ 0": True,  # sum of squares of real numbers
        "d ≥ 0": True,
        "(‖S‖² + ‖T‖²)/‖L‖² = 1 (power-sum form)": fS + fT == fL,
        "a = 0 ⇔ L symmetric": f["a=0"] == symL,
        "a = 1 ⇔ L antisymmetric": f["a=1"] == antiL,
        "b = 0 ⇔ S semidefinite": f["b=0"] == (psd or nsd),
        "b = 1 ⇔ L symmetric and α = β": f["b=1"] == (symL and all(o == 0 for o in p.order)),
        "d = 0 ⇔ α_j ≥ β_j ∀j": f["d=0"] == all(o >= 0 for o in p.order),
        "d = 1 ⇔ L symmetric negative semidefinite": f["d=1"] == (symL and nsd),
        "c = 0 ⇔ β_j ≥ α_j ∀j": f["c=0"] == all(o <= 0 for o in p.order),
        "c = 1 ⇔ L symmetric positive semidefinite": f["c=1"] == (symL and psd),
    }
    # exact values: rational when all eigenvalues involved are; otherwise the
    # rational values the certificate claims were proved when its profile
    # witness was re-checked (KCoord.proven)
    vals = []
    for k in "abcd":
        kc = p.coords[k]
        v = _coord_value(kc)
        vals.append(v)
        checks[f"{k} exact value consistent with face"] = True if v is None else ((v == 0) == kc.zero)
    if all(v is not None for v in vals):
        checks["a + b + c + d = 1 (exact values)"] = sum(vals, fmpq(0)) == 1
    evidence = "exact"
    undecided = False
    fibers_w = _facts(ctx, "fiber_decomposition")
    for face in ("d", "c"):
        if not f[f"{face}=0"]:
            _require(not any(fw["face"] == face for _, _, fw in fibers_w), "fiber_decomposition",
                     f"a decomposition for {face} = 0 although {face} ≠ 0")
            continue
        got = [fw for _, _, fw in fibers_w if fw["face"] == face]
        _require(len(got) == 1, "fiber_decomposition", f"{face} = 0 needs exactly one decomposition witness")
        fw = got[0]
        if fw["evidence"] == "undecided":
            undecided = True
            continue
        if fw["evidence"] == "certified":
            evidence = "certified"
        for k, v in fw["checks"].items():
            checks[f"{face}=0 decomposition: {k}"] = v
    ok = all(checks.values())
    verdict = "undecided" if ok and undecided else ("holds" if ok else "fails")
    ctx.ok("Theorem 4: nonnegativity, sum, the eight fibers and the decompositions re-derived")
    return RuleResult(verdict, evidence, "lean", checks,
                      {"profile": _profile_validator(p), "checks": _checks_validator(checks)})


# -- Lemma 4 -------------------------------------------------------------------

def rule_lemma4(ctx: Ctx) -> RuleResult:
    """Lemma 4 (Lean ``profile_scale`` …): a(S) = 0, 1 − a = ‖S‖²/‖L‖², (b,c,d)(L) = (1 − a)(b,c,d)(S)."""
    L = ctx.matrix("L")
    S = sym(L)
    fL, fS = frob(L), frob(S)
    if fS == 0:
        if fL == 0:
            return RuleResult("holds", "exact", "lean", {}, {"note": lambda x, where: _require(
                x == "L = 0", "values", f"{where} should be 'L = 0'")})
        pL = ctx.profile_of(L, "lean")
        checks = {
            "(b,c,d)(L) = (1−a)(b,c,d)(S) with π(S) = 0": all(pL.coords[k].zero for k in "bcd"),
            "a(S) = 0": True,  # π(0) = (0,0,0,0) with Lean's x/0 = 0
            "1 − a = ‖S‖²/‖L‖²": 1 - pL.coords["a"].exact == fS / fL,
        }
        return RuleResult("holds" if all(checks.values()) else "fails", "exact", "lean", checks,
                          {"checks": _checks_validator(checks)})
    pL = ctx.profile_of(L, "lean")
    pS = ctx.profile_of(S, "lean")
    one_minus_a = 1 - pL.coords["a"].exact
    checks = {"a(S) = 0": pS.coords["a"].exact == 0, "1 − a = ‖S‖²/‖L‖²": one_minus_a == fS / fL}
    for k in "bcd":
        cL, cS = pL.coords[k], pS.coords[k]
        # both coordinates are F(α, β)·K with the same F (S and sym(S) = S
        # have the same spectrum); K_L / K_S = ‖S‖²/‖L‖² exactly
        same_F = pL.order == pS.order and cL.zero == cS.zero
        exact_rel = cL.zero or (cS.K * one_minus_a == cL.K)
        v = same_F and (cL.zero == cS.zero) and exact_rel
        checks[f"{k}(L) = (1−a)·{k}(S)"] = v
        checks[f"{k}(L) = (1−a)·{k}(S) (same exact α, β)"] = v
    ctx.ok("Lemma 4: a(S) = 0, 1 − a = ‖S‖²/‖L‖² and (b,c,d)(L) = (1−a)(b,c,d)(S) re-derived")
    return RuleResult("holds" if all(checks.values()) else "fails", "exact", "lean", checks,
                      {"profile_L": _profile_validator(pL), "profile_S": _profile_validator(pS),
                       "checks": _checks_validator(checks)})


# -- profile_conj ----------------------------------------------------------------

def rule_profile_conj(ctx: Ctx) -> RuleResult:
    """profile_conj: π(UᵀLU) = π(L) with Lean's π(0) = 0 (U orthogonal; the
    hypothesis is reported).  Each coordinate pair is compared exactly (equal
    spectra of the symmetric parts and equal norms settle all four at once;
    otherwise the gap argument)."""
    L, U = ctx.matrix("L"), ctx.U
    _require(U is not None, "input", "profile_conj needs an orthogonal input")
    orth = U.transpose() * U == eye(U.nrows())
    ctx.ok(f"hypothesis UᵀU = I: {'holds' if orth else 'FAILS'}")
    C = ctx.matrix("UtLU")
    S, SC = sym(L), sym(C)
    cpS, cpC = S.charpoly(), SC.charpoly()
    same_spectrum = cpS == cpC
    same_norms = frob(C) == frob(L) and frob(skew(C)) == frob(skew(L))
    ident = {"equal charpolys of the symmetric parts": same_spectrum, "equal norms": same_norms}

    def idw(w, where):
        only_keys(w, {"kind", "matrix", "checks", "charpoly_S", "charpoly_UtSU"}, where)
        _require(w.get("matrix") == "UtLU", "identity", f"{where}: matrix should be UtLU")
        a = [rat(c, f"{where}.charpoly_S") for c in jlist(w.get("charpoly_S"), f"{where}.charpoly_S")]
        b = [rat(c, f"{where}.charpoly_UtSU") for c in jlist(w.get("charpoly_UtSU"), f"{where}.charpoly_UtSU")]
        _require(a == coeffs(cpS), "identity", f"{where}.charpoly_S differs from the recomputed one")
        _require(b == coeffs(cpC), "identity", f"{where}.charpoly_UtSU differs from the recomputed one")
        compare_checks(ident, w.get("checks"), f"{where}.checks")

    _consume_identity(ctx, idw)
    zL, zC = frob(L) == 0, frob(C) == 0
    if zL or zC:
        return RuleResult("holds" if zL and zC else "fails", "exact", "lean", {},
                          {"pi_L_zero": lambda x, w: _require(boolean(x, w) == zL, "values", f"{w} should be {zL}"),
                           "pi_UtLU_zero": lambda x, w: _require(boolean(x, w) == zC, "values", f"{w} should be {zC}")})
    p1 = ctx.profile_of(L, "lean")
    p2 = ctx.profile_of(C, "lean")
    checks: dict = {}
    eq: dict = {}
    for k in "abcd":
        # π depends only on the spectrum of the symmetric part, ‖L‖² and ‖T‖²
        eq[k] = True if (same_spectrum and same_norms) else _coords_equal(p1.coords[k], p2.coords[k])
        checks[f"{k}(UᵀLU) = {k}(L)"] = eq[k]
        if same_spectrum and same_norms:
            checks[f"{k}(UᵀLU) = {k}(L) (equal spectra and norms)"] = True
    verdict = "holds" if all(eq.values()) else "fails"
    # evidence: 'exact' when every failing pair carries exact values in the
    # certificate's two profiles, 'certified' when it was told apart by enclosures
    vals = ctx.cert.get("values", {})

    def has_exact(pj, k):
        c = pj.get(k) if isinstance(pj, dict) else None
        return isinstance(c, dict) and (c.get("exact") is not None or c.get("algebraic") is not None)

    evidence = "exact"
    for k in "abcd":
        if not eq[k] and not (has_exact(vals.get("profile_L"), k) and has_exact(vals.get("profile_UtLU"), k)):
            evidence = "certified"
    ctx.ok("profile_conj: charpolys, norms and the four coordinates of UᵀLU and L compared exactly")
    return RuleResult(verdict, evidence, "lean", checks,
                      {"profile_L": _profile_validator(p1), "profile_UtLU": _profile_validator(p2),
                       "checks": _checks_validator(checks)})


# -- Prop 4 --------------------------------------------------------------------------

def _theta(v: list) -> bool:
    a, b, c, d = v
    return a == b and c * d == 0 and min(v) >= 0 and sum(v, fmpq(0)) == 1


def rule_prop4(ctx: Ctx) -> RuleResult:
    """Prop 4 (Lean ``profile_rank_one``, ``profiles_rank_one_eq_Theta``): the rank-one formula and Θ."""
    L = ctx.matrix("L")
    N = L.nrows()
    if frob(L) == 0:
        return RuleResult("fails", "exact", "lean", {}, {})
    r = _rank_of(ctx, L)
    ctx.ok(f"hypothesis rank L = 1: {'holds' if r == 1 else 'fails (rank ' + str(r) + ')'}")
    p = ctx.profile_of(L, "lean")
    t = tr(L)
    t2 = t * t / frob(L)
    pred = [(1 - t2) / 2, (1 - t2) / 2, t2 if t > 0 else fmpq(0), t2 if t < 0 else fmpq(0)]
    match = all(_coord_is(p.coords[k], q) for k, q in zip("abcd", pred))
    got = [_coord_value(p.coords[k]) for k in "abcd"]
    if match:
        got = pred
    checks = {
        "π(L) = ((1−t²)/2, (1−t²)/2, t₊², t₋²)": match,
        "π(L) ∈ Θ": all(g is not None for g in got) and _theta(got),
    }
    if N >= 2:
        E = fmpq_mat(N, N)
        E[0, 1] = 1
        pe = KProfile(E, "lean", own_spectrum(sym(E)))
        checks["Θ ∋ (1/2,1/2,0,0) is realised by e₁e₂ᵀ (set equality)"] = all(
            _coord_is(pe.coords[k], q) for k, q in zip("abcd", (fmpq(1, 2), fmpq(1, 2), fmpq(0), fmpq(0))))
    else:
        checks["Θ ∋ (1/2,1/2,0,0) is realised in dimension N (set equality)"] = False

    def predicted(x, where):
        xs = jlist(x, where, 4)
        _require([rat(v, where) for v in xs] == pred, "identity", f"{where} should be {[qstr(q) for q in pred]}")

    def idw(w, where):
        only_keys(w, {"kind", "matrix", "checks", "predicted"}, where)
        _require(w.get("matrix") == "L", "identity", f"{where}: matrix should be L")
        predicted(w.get("predicted"), f"{where}.predicted")
        compare_checks(checks, w.get("checks"), f"{where}.checks")

    _consume_identity(ctx, idw)
    ctx.ok("Prop 4: t² = tr(L)²/‖L‖², the predicted profile and membership in Θ re-derived")
    return RuleResult("holds" if all(checks.values()) else "fails", "exact", "lean", checks,
                      {"profile": _profile_validator(p), "predicted": predicted, "N": _eq_int(N, "values"),
                       "checks": _checks_validator(checks)})


# -- Lemma 2 -----------------------------------------------------------------------

def _exact_sqrt(q: fmpq) -> fmpq | None:
    if q < 0:
        return None
    a, b = fmpz(q.p), fmpz(q.q)
    ra, rb = a.isqrt(), b.isqrt()
    return fmpq(ra, rb) if ra * ra == a and rb * rb == b else None


def rule_lemma2(ctx: Ctx) -> RuleResult:
    """Lemma 2 (Lean ``pairing_bound``): 𝒫 ≤ 1 − |1−ρ|/√(1+ρ²), the equality case decided exactly."""
    L = ctx.matrix("L")
    S = sym(L)
    fS = frob(S)
    if fS == 0:
        return RuleResult("fails", "exact", None, {}, {})
    sp = ctx.spectrum_of(S)
    if not sp.pos:
        return RuleResult("fails", "exact", None, {}, {})
    D = sp.D
    m = max(len(sp.pos), len(sp.neg))
    A = [sp.pos[j] if j < len(sp.pos) else None for j in range(m)]
    B = [sp.neg[j].neg() if j < len(sp.neg) else None for j in range(m)]
    rational = all(a.rational is not None for a, _ in sp.roots)

    def quantities(prec: int) -> dict:
        old = FCTX.prec
        try:
            FCTX.prec = prec
            a = [x.ball(prec) / D if x is not None else arb(0) for x in A]
            b = [x.ball(prec) / D if x is not None else arb(0) for x in B]
            pp = sum((x * x for x in a), arb(0))
            mm = sum((x * x for x in b), arb(0))
            pm = sum((x * y for x, y in zip(a, b)), arb(0))
            S2 = arb(fS)
            diff = sum(((x - y) * (x - y) for x, y in zip(a, b)), arb(0))
            P = 1 - diff.nonnegative_part().sqrt() / S2.sqrt()
            rho = (mm / pp).nonnegative_part().sqrt()
            bound = 1 - ((1 - rho) * (1 - rho)).nonnegative_part().sqrt() / (1 + rho * rho).sqrt()
            alt = 1 - (1 - 2 * pm / S2).nonnegative_part().sqrt()
            return {"pairing": P, "rho": rho, "bound": bound, "gap": bound - P, "alt": alt}
        finally:
            FCTX.prec = old

    exact: dict = {}
    if rational:
        a = [x.rational / D if x is not None else fmpq(0) for x in A]
        b = [x.rational / D if x is not None else fmpq(0) for x in B]
        pp = sum((x * x for x in a), fmpq(0))
        mm = sum((x * x for x in b), fmpq(0))
        diff = sum(((x - y) ** 2 for x, y in zip(a, b)), fmpq(0))
        r1 = _exact_sqrt(diff / fS)
        rho = _exact_sqrt(mm / pp)
        if r1 is not None:
            exact["pairing"] = 1 - r1
        if rho is not None:
            exact["rho"] = rho
            r2 = _exact_sqrt((1 - rho) ** 2 / (1 + rho * rho))
            if r2 is not None:
                exact["bound"] = 1 - r2
    # equality case λ₋ = ρλ₊, decided exactly: β_j α_1 = β_1 α_j for all j
    # (and λ₋ = 0 is proportional with ρ = 0)
    if not sp.neg:
        proportional = True
    elif len(sp.pos) != len(sp.neg):
        proportional = False
    else:
        proportional = True
        for j in range(1, m):
            algs = [A[0], A[j], B[0], B[j]]
            r = decide_zero(lambda v: v[3] * v[0] - v[2] * v[1], algs)
            if r is None:
                _fail("limits", "cannot decide the equality case λ₋ = ρλ₊ within the limits")
            if not r:
                proportional = False
                break
    checks = {"‖S‖² = ‖λ₊‖² + ‖λ₋‖² (power sum, exact)": tr(S * S) == fS}
    q = quantities(256)
    checks["𝒫 = 1 − √(1 − 2⟨λ₊,λ₋⟩/‖S‖²) (enclosures meet)"] = q["pairing"].overlaps(q["alt"])
    if proportional:
        # λ₋ = ρλ₊ gives ‖λ₊ − λ₋‖ = |1−ρ|‖λ₊‖ and ‖S‖ = √(1+ρ²)‖λ₊‖: 𝒫 = bound exactly
        exact["gap"] = fmpq(0)
        checks["λ₋ = ρλ₊ exactly, so 𝒫 = bound (equality case)"] = True
        verdict, evidence = "holds", "exact"
    else:
        prec, verdict = 64, None
        while prec <= MAX_BITS:
            g = quantities(prec)["gap"]
            if g > 0:
                checks["𝒫 < bound (certified)"] = True
                verdict = "holds"
                break
            if g < 0:
                checks["𝒫 ≤ bound"] = False
                verdict = "fails"
                break
            prec *= 2
        evidence = "certified"
        if verdict is None:
            verdict = "undecided"

    def validator(name):
        def v(x, where):
            iv = jlist(x, where, 2)
            lo, hi = dec(iv[0], where), dec(iv[1], where)
            if name in exact:
                _require(lo <= exact[name] <= hi, "enclosure", f"{where}: the exact value {qstr(exact[name])} is outside")
            else:
                enclosure_within(lambda prec: quantities(prec)[name], lo, hi, "enclosure", where)
        return v

    vv = {k: validator(k) for k in ("pairing", "rho", "bound", "gap")}

    def encw(w, where):
        only_keys(w, {"kind", "matrix", "precision_bits", "values"}, where)
        _require(w.get("matrix") == "S", "enclosure", f"{where}: matrix should be S")
        pyint(w.get("precision_bits"), f"{where}.precision_bits", 1, 1 << 20)
        d = jdict(w.get("values"), f"{where}.values")
        _require(set(d) == set(vv), "enclosure", f"{where}.values: expected keys {sorted(vv)}")
        for k, f in vv.items():
            f(d[k], f"{where}.values.{k}")

    for i, w in enumerate(ctx.cert["witnesses"]):
        if w.get("kind") == "enclosure":
            encw(w, f"witnesses[{i}]")
            ctx.consumed.add(i)
    ctx.ok("Lemma 2: 𝒫, ρ, bound and gap re-enclosed; equality case decided exactly")
    if not all(checks.values()):
        verdict = "fails"
    return RuleResult(verdict, evidence, None, checks, vv)


# -- Lemma 3 -------------------------------------------------------------------------

def rule_lemma3(ctx: Ctx) -> RuleResult:
    """Lemma 3 (Lean ``rank_balance``): at most n positive and n negative eigenvalues of S."""
    L = ctx.matrix("L")
    _require(ctx.n is not None, "input", "Lemma 3 needs input.n")
    n = ctx.n
    r = _rank_of(ctx, L)
    ctx.ok(f"hypothesis rank L ≤ n: {'holds' if r <= n else 'fails'} (rank {r}, n {n})")
    inn = _inertia_of(ctx, sym(L))
    checks = {
        "S has at most n positive eigenvalues": inn[0] <= n,
        "S has at most n negative eigenvalues": inn[1] <= n,
        "every positive-definite subspace of S has dimension ≤ n": inn[0] <= n,
    }
    return RuleResult("holds" if all(checks.values()) else "fails", "exact", None, checks,
                      {"n": _eq_int(n, "values"), "rank_L": _eq_int(r, "values"),
                       "inertia": _eq_inertia(inn, "values"), "checks": _checks_validator(checks)})


# -- Theorem 3 -----------------------------------------------------------------------

def _half_J(n: int) -> fmpq_mat:
    J = fmpq_mat(2 * n, 2 * n)
    for i in range(n):
        J[i, n + i] = 1
        J[n + i, i] = 1
    return J


def rule_theorem3(ctx: Ctx) -> RuleResult:
    """Theorem 3 (Lean ``heads_have_balanced_attention``): rank M = 2n, rad S = ker J, signature (n, n, N − 2n) in the standard and in the witnessed basis."""
    _require(ctx.kind == "head", "input", "Theorem 3 needs a head input")
    M = ctx.matrix("M")
    n, N = ctx.n, M.ncols()
    S = ctx.matrix("S")
    r = _rank_of(ctx, M)
    inn = _inertia_of(ctx, S)
    target = (n, n, N - 2 * n)
    grams = [f for _, _, f in _facts(ctx, "inertia_charpoly") + _facts(ctx, "inertia_ldlt")
             if f["matrix"] == "gram_in_basis"]
    checks = {
        "stacked map surjective (rank M = 2n)": r == 2 * n,
        # S = ½MᵀJM exactly, so M v = 0 ⇒ S v = 0
        "ker J ⊆ radical of S": S == M.transpose() * _half_J(n) * M * fmpq(1, 2),
        "dim radical = dim ker J": inn[2] == N - r,
        "dim ker J + 2n = N": (N - r) + 2 * n == N,
        "signature (n, n, N−2n) in the standard basis": inn == target,
    }
    vals = {"n": _eq_int(n, "values"), "N": _eq_int(N, "values"), "rank_M": _eq_int(r, "values"),
            "signature": _eq_inertia(inn, "values")}
    if grams:
        g = grams[0]["inertia"]
        _require(all(x["inertia"] == g for x in grams), "inertia", "gram_in_basis witnesses disagree")
        checks["signature (n, n, N−2n) in a random rational basis"] = g == target
        vals["signature_random_basis"] = _eq_inertia(g, "values")
        ctx.ok("Sylvester: the Gram matrix in the witnessed basis has the same signature")
    vals["checks"] = _checks_validator(checks)
    ctx.ok("Theorem 3: rank M, S = ½MᵀJM, radical dimension and signature re-derived")
    return RuleResult("holds" if all(checks.values()) else "fails", "exact", None, checks, vals)


# -- Lemma 10 ---------------------------------------------------------------------------

def rule_lemma10(ctx: Ctx) -> RuleResult:
    """Lemma 10 (Lean ``GramForm.*``): S = ½MᵀJM, traces of powers, ‖S‖² = ¼tr((JG)²), charpoly(S) = x^(N−2n)·charpoly(½JG), inertia of ½JG."""
    _require(ctx.kind == "head", "input", "Lemma 10 needs a head input")
    M = ctx.matrix("M")
    n, N = ctx.n, M.ncols()
    S, H = ctx.matrix("S"), ctx.matrix("half_JG")
    J = _half_J(n)
    G = ctx.matrix("G")
    checks = {"S = ½MᵀJM": S == M.transpose() * J * M * fmpq(1, 2)}
    Sk, Hk = eye(N), eye(2 * n)
    alleq = True
    for k in range(1, 2 * n + 1):
        Sk, Hk = Sk * S, Hk * H
        if tr(Sk) != tr(Hk):
            checks[f"tr(S^{k}) = tr((½JG)^{k})"] = False
            alleq = False
    checks[f"tr(S^k) = tr((½JG)^k) for k = 1..{2 * n}"] = alleq
    JG = J * G
    checks["‖S‖² = ¼ tr((JG)²)"] = frob(S) == tr(JG * JG) / 4
    x = fmpq_poly([0, 1])
    cp = N >= 2 * n and S.charpoly() == x ** (N - 2 * n) * H.charpoly()
    checks["charpoly(S) = x^(N−2n) · charpoly(½JG)"] = cp
    inv = H.det() != 0
    checks["½JG invertible (no zero in its spectrum)"] = inv
    checks["nonzero spectrum of S = spectrum of ½JG (multisets)"] = cp and inv
    innH = _inertia_of(ctx, H)  # witnessed (charpoly of ½JG) or the kernel's own spectrum
    checks["normalised nonzero spectrum in Λ_n (n negative, n positive)"] = innH == (n, n, 0)
    for _, w, f in _facts(ctx, "trace_powers"):
        _require(f["ntraces"] == 2 * n, "trace_powers", f"expected 2n = {2 * n} traces")
    ctx.ok("Lemma 10: S = ½MᵀJM, traces of powers, ‖S‖², charpoly identity and inertia of ½JG re-derived")
    return RuleResult("holds" if all(checks.values()) else "fails", "exact", None, checks,
                      {"n": _eq_int(n, "values"), "N": _eq_int(N, "values"),
                       "inertia_half_JG": _eq_inertia(innH, "values"), "checks": _checks_validator(checks)})


# -- weights inputs: what can be re-checked without the weights -----------------

_POW2 = re.compile(r"^2\^\{?(-?[0-9]+)\}?$")


def _scale_any(x: Any, where: str) -> fmpq:
    """A scale written as an integer string or as a power of two ``2^k``."""
    if isinstance(x, str):
        m = _POW2.match(x)
        if m:
            k = int(m.group(1))
            _require(abs(k) <= 4 * MAX_DIGITS, "limits", f"{where}: exponent too large")
            return _p2(k)
    return fmpq(zint(x, where))


def _pattern_counts(pattern: str, where: str) -> tuple[int, int, int]:
    _require(set(pattern) <= set("+-0"), "inertia_charpoly", f"{where}: sign_pattern may only hold + - 0")
    signs = [1 if ch == "+" else -1 if ch == "-" else 0 for ch in pattern]
    z = next((i for i, v in enumerate(signs) if v), len(signs))
    pos = sign_changes(signs)
    neg = sign_changes([v if k % 2 == 0 else -v for k, v in enumerate(signs)])
    return pos, neg, z


# -- weights inputs: exact head data rebuilt from a safetensors file ----------------

_TIMES_RE = re.compile(r"times 2\^\{?(-?[0-9]+)\}? are the true ones")


class _HeadExact:
    """Exact data of one head rebuilt by the kernel from the weights file.

    Z (fmpz_mat, 2n x N) and e0 with M = [W_K; W_Q] = Z·2^e0; G = Z Zᵀ (so
    MMᵀ = G·4^e0); P = charpoly(J·G) (fmpz_poly of degree 2n, J swaps the two
    n-blocks).  The roots of P are 2·4^(−e0) times the eigenvalues of ½J·MMᵀ.
    They are all real: J·G = (JZ)·Zᵀ has the nonzero spectrum of Zᵀ·(JZ),
    which is symmetric (Sylvester's determinant identity + the spectral
    theorem), so Descartes' rule of signs counts the roots exactly, with
    multiplicity, on P itself and on every Taylor shift P(a + t).
    """

    def __init__(self, Z: fmpz_mat, e0: int, n: int):
        self.Z, self.e0, self.n = Z, e0, n
        self.G = Z * Z.transpose()
        n2 = 2 * n
        JG = fmpz_mat(n2, n2)
        for i in range(n2):
            src = i + n if i < n else i - n
            for j in range(n2):
                JG[i, j] = self.G[src, j]
        self.P = JG.charpoly()
        cs = coeffs(self.P)
        self.cs = cs
        self.z = next(i for i, c in enumerate(cs) if c != 0)
        self.pos = sign_changes(cs)
        self.neg = sign_changes([c if k % 2 == 0 else -c for k, c in enumerate(cs)])
        _require(self.pos + self.neg + self.z == n2, "inertia_charpoly",
                 "charpoly(J·G) is not real-rooted (a kernel invariant failed)")
        self._above: dict = {}
        self._content: fmpz | None = None

    def content(self) -> fmpz:
        """gcd of the entries of Z (0 for Z = 0)."""
        if self._content is None:
            g = 0
            for v in self.Z.entries():
                g = math.gcd(g, int(v))
                if g == 1:
                    break
            self._content = fmpz(g)
        return self._content

    def above(self, x: fmpq) -> tuple[int, int]:
        """(number of roots of P greater than x, multiplicity of x as a root),
        with multiplicity: Descartes' rule on Q(p + t), Q(y) = q^d·P(y/q)
        (roots q·r) for x = p/q (q > 0), so that the roots t = q·r − p are
        positive exactly when r > x; exact because P is real-rooted."""
        x = fmpq(x)
        r = self._above.get(x)
        if r is None:
            d = len(self.cs) - 1
            Q = fmpz_poly([c * x.q ** (d - k) for k, c in enumerate(self.cs)]) if x.q != 1 else self.P
            sh = coeffs(Q(fmpz_poly([x.p, 1])))
            z = next(i for i, c in enumerate(sh) if c != 0)
            r = (sign_changes(sh), z)
            self._above[x] = r
        return r

    def ge_nonzero(self, x: fmpq) -> int:
        """Number of nonzero roots ≥ x (with multiplicity)."""
        g, m = self.above(x)
        return g + m - (self.z if x <= 0 else 0)

    def gt_nonzero(self, x: fmpq) -> int:
        """Number of nonzero roots > x (with multiplicity)."""
        g, _ = self.above(x)
        return g - (self.z if x < 0 else 0)

    def holds_rank(self, j: int, lo: fmpq, hi: fmpq) -> bool:
        """The j-th largest nonzero root (0-based, with multiplicity) lies in [lo, hi]."""
        return lo <= hi and self.ge_nonzero(lo) >= j + 1 and self.gt_nonzero(hi) <= j

    def refine(self, j: int, lo: fmpq, hi: fmpq, steps: int) -> tuple[fmpq, fmpq]:
        """Bisect [lo, hi] ∋ (j-th largest nonzero root) ``steps`` times."""
        for _ in range(steps):
            m = (lo + hi) / 2
            if self.ge_nonzero(m) >= j + 1:
                lo = m
            else:
                hi = m
        return lo, hi

    def traces(self) -> tuple[fmpz, fmpz]:
        """(tr(G_KK G_QQ), tr(G_KQ G_KQ)) = (‖L‖², tr L²)·4^(−2·e0)... i.e.
        ‖L‖² = first·2^(4·e0), tr(L²) = second·2^(4·e0) (L = W_Kᵀ W_Q)."""
        n, G = self.n, self.G
        fL = fmpz(0)
        t2 = fmpz(0)
        for i in range(n):
            for j in range(n):
                fL += G[i, j] * G[n + j, n + i]
                t2 += G[i, n + j] * G[j, n + i]
        return fL, t2


def _scaled_charpoly(cs: list, f: fmpq, where: str) -> list:
    """Coefficients of charpoly(f·X) from those of charpoly(X): c_k·f^(d−k);
    they must be integers (an integer matrix f·X)."""
    d = len(cs) - 1
    out = []
    for k, c in enumerate(cs):
        v = fmpq(c) * f ** (d - k)
        _require(v.q == 1, "inertia_charpoly", f"{where}: the scale does not make the matrix integral")
        out.append(int(v.p))
    return out


def _pattern(cs: list) -> str:
    return "".join("+" if c > 0 else "-" if c < 0 else "0" for c in cs)


def _head_exponent(cert: dict) -> int | None:
    """The producer's exponent e (M = Z·2^e) as the witnesses state it:
    enclosure ``exponent_e``, the identity's "values times 2^(4e) are the
    true ones", the ½JG charpoly scale 2^(1−2e).  They must agree."""
    cands: list[tuple[str, int]] = []
    for i, w in enumerate(cert["witnesses"]):
        k = w.get("kind")
        if k == "enclosure" and "exponent_e" in w:
            cands.append((f"witnesses[{i}].exponent_e", pyint(w["exponent_e"], f"witnesses[{i}].exponent_e")))
        elif k == "identity" and isinstance(w.get("scale"), str) and _TIMES_RE.search(w["scale"]):
            v = int(_TIMES_RE.search(w["scale"]).group(1))
            _require(v % 4 == 0, "identity", f"witnesses[{i}].scale: 2^{v} is not 2^(4e)")
            cands.append((f"witnesses[{i}].scale", v // 4))
        elif k == "inertia_charpoly" and w.get("matrix") == "half_JG" and isinstance(w.get("scale"), str):
            m = _POW2.match(w["scale"])
            if m:
                v = int(m.group(1))
                _require((1 - v) % 2 == 0, "inertia_charpoly", f"witnesses[{i}].scale: 2^{v} is not 2^(1−2e)")
                cands.append((f"witnesses[{i}].scale", (1 - v) // 2))
    for where, e in cands[1:]:
        _require(e == cands[0][1], "scale", f"{where} gives e = {e}, {cands[0][0]} gives e = {cands[0][1]}")
    if cands:
        _require(abs(cands[0][1]) <= 4 * MAX_DIGITS, "limits", "exponent e too large")
    return cands[0][1] if cands else None


def _order_symbol(H: _HeadExact, a: tuple | None, b: tuple | None) -> tuple[str, tuple | None, tuple | None]:
    """Exact comparison of α_j and β_j from rank-matched intervals
    a = (j_a, lo, hi) of a positive root and b = (j_b, lo, hi) of the root
    −β_j (x units); None stands for a padded zero.  Overlapping intervals
    are bisected (each step an exact Descartes count).  Returns (symbol,
    a, b) with '?' when 256 bisections do not separate them."""
    if a is None and b is None:
        return "=", a, b
    if b is None:
        return ">", a, b
    if a is None:
        return "<", a, b
    for _ in range(64):
        ja, alo, ahi = a
        jb, blo, bhi = b          # −β ∈ [blo, bhi]  ⇔  β ∈ [−bhi, −blo]
        if alo > -blo:
            return ">", a, b
        if ahi < -bhi:
            return "<", a, b
        alo, ahi = H.refine(ja, alo, ahi, 4)
        blo, bhi = H.refine(jb, blo, bhi, 4)
        a, b = (ja, alo, ahi), (jb, blo, bhi)
    return "?", a, b


def _contain(name: str, kernel: tuple, stated: tuple) -> int:
    """+1 the kernel's enclosure lies in the stated interval, −1 they are
    disjoint (the stated interval misses the exact value), 0 undecided yet."""
    (klo, khi), (slo, shi) = kernel, stated
    _require(slo <= shi, "values", f"values.{name}: empty interval")
    if slo <= klo and khi <= shi:
        return 1
    if khi < slo or klo > shi:
        return -1
    return 0


def _arb_q(lo: fmpq, hi: fmpq) -> arb:
    return arb(lo).union(arb(hi))


def _profile_enclosures(ivs: list, nposr: int, order: list, fL: fmpq, fS: fmpq) -> dict:
    """Exact rational (b, c, d) and Arb (𝒫, ρ, bound, gap) enclosures from
    rank-matched eigenvalue intervals of ½J(Z Zᵀ) (any common positive unit
    u with u²·fL = ‖L‖², u²·fS = ‖S‖²).  ivs: (lo, hi) decreasing, the
    first nposr positive, the rest negative; order: the kernel's α_j vs β_j
    symbols.  Monotonicity gives exact bounds for b, c, d (α, β > 0)."""
    pos = ivs[:nposr]
    neg = [(-hi, -lo) for lo, hi in reversed(ivs[nposr:])]
    m = max(len(pos), len(neg))
    zero = (fmpq(0), fmpq(0))
    al = pos + [zero] * (m - len(pos))
    be = neg + [zero] * (m - len(neg))
    blo = bhi = clo = chi = dlo = dhi = s2lo = s2hi = fmpq(0)
    for j in range(m):
        (a0, a1), (b0, b1) = al[j], be[j]
        blo += a0 * b0
        bhi += a1 * b1
        o = order[j]
        if o == ">":
            lo_, hi_ = a0 - b1, a1 - b0
        elif o == "<":
            lo_, hi_ = b0 - a1, b1 - a0
        else:
            lo_, hi_ = fmpq(0), max(a1 - b0, b1 - a0, fmpq(0))
        sq = (lo_ * lo_ if o in "<>" else fmpq(0), hi_ * hi_ if o != "=" else fmpq(0))
        s2lo += sq[0]
        s2hi += sq[1]
        if o == ">":
            clo, chi = clo + sq[0], chi + sq[1]
        elif o == "<":
            dlo, dhi = dlo + sq[0], dhi + sq[1]
        elif o == "?":
            chi, dhi = chi + sq[1], dhi + sq[1]
    out = {"b": (2 * blo / fL, 2 * bhi / fL), "c": (clo / fL, chi / fL), "d": (dlo / fL, dhi / fL)}
    old = FCTX.prec
    FCTX.prec = 256
    try:
        pair = 1 - _arb_q(s2lo / fS, s2hi / fS).sqrt()
        out["pairing"] = arb_bounds_q(pair)
        if pos:
            na_lo = sum((x * x for x, _ in al), fmpq(0))
            na_hi = sum((y * y for _, y in al), fmpq(0))
            nb_lo = sum((x * x for x, _ in be), fmpq(0))
            nb_hi = sum((y * y for _, y in be), fmpq(0))
            rho = _arb_q(nb_lo / na_hi, nb_hi / na_lo).sqrt()
            bound = 1 - abs(1 - rho) / (1 + rho * rho).sqrt()
            out["rho"] = arb_bounds_q(rho)
            out["pairing_bound"] = arb_bounds_q(bound)
            out["pairing_gap"] = arb_bounds_q(bound - pair)
    finally:
        FCTX.prec = old
    return out


def partial_weights(ctx: Ctx) -> None:
    """Re-check a certificate whose input is a weights file (the heads
    format of ``qkverify heads``).

    Always (self-contained): Descartes counts from the recorded sign pattern
    (or full coefficients, against their SHA-256), the exact energy
    identities, the consistency of the recorded signature, rank, faces and
    intervals with each other and with the verdict.

    When the weights file was found, its SHA-256 matches and the kernel could
    rebuild M = [W_K; W_Q] exactly (``ctx.hZ``, a safetensors file; see
    :func:`head_matrix`), everything else is re-derived too:

    * rank: the stated minor of scale·M recomputed over Z and reduced mod p
      (left-kernel vectors multiplied out when rank < 2n);
    * charpoly(½JG): recomputed with FLINT (as charpoly(J·Z Zᵀ), rescaled by
      the stated power of two) and compared with the coefficients, their
      SHA-256 and the sign pattern; the S (N x N) witness's inertia follows
      from ½JG's (Sylvester: Mᵀ(½JM) and (½JM)Mᵀ share the nonzero spectrum);
    * ‖L‖² = tr(G_KK G_QQ), tr(L²) = tr(G_KQ G_KQ) exactly;
    * each enclosure interval contains *its* eigenvalue: the j-th listed
      interval holds the j-th largest nonzero root of charpoly(J·Z Zᵀ)
      counted with multiplicity (exact Descartes counts on Taylor shifts,
      exact for a real-rooted polynomial), and there are exactly as many
      intervals as nonzero roots -- a bijection, so the signature read off
      intervals excluding 0 is the true one;
    * the profile order α_j vs β_j (separated intervals, bisected exactly
      where they overlap), and the intervals of b, c, d, 𝒫, ρ and the
      Lemma 2 bound and gap (exact rational / Arb enclosures from the
      verified eigenvalue intervals, refined by bisection until they fit).

    What cannot be re-derived is listed in ``ctx.not_checked``; an item that
    bears on the conclusion is also listed in ``ctx.weights_gaps`` and keeps
    the certificate partial.  Serves SPEC Theorem 3, Lemma 10, Def 6, Lemma 2.
    """
    cert = ctx.cert
    cid = cert["claim"]["id"]
    n, N = ctx.n, ctx.N
    nc = ctx.not_checked
    gaps = ctx.weights_gaps
    H = None
    if ctx.hZ is not None:
        _require(2 * n <= MAX_DEGREE, "limits", f"2n = {2 * n} exceeds the degree limit {MAX_DEGREE}")
        H = _HeadExact(ctx.hZ, ctx.he0, n)
        ctx.ok(f"charpoly(J·Z Zᵀ) recomputed by the kernel (degree {2 * n}); ½JG is real-rooted (Sylvester)")
    full = H is not None

    def gap(msg: str) -> None:
        nc.append(msg)
        gaps.append(msg)

    facts: dict = {}
    e_head = _head_exponent(cert) if full else None
    for i, w in enumerate(cert["witnesses"]):
        where = f"witnesses[{i}]"
        kind = w.get("kind")
        if kind == "rank":
            r = pyint(w.get("rank"), f"{where}.rank", 0, 1 << 20)
            rows = jlist(w.get("minor_rows"), f"{where}.minor_rows", r)
            cols = jlist(w.get("minor_cols"), f"{where}.minor_cols", r)
            _require(len(set(rows)) == r and len(set(cols)) == r, "rank", f"{where}: repeated minor indices")
            _require(all(0 <= pyint(v, where) < 2 * n for v in rows), "rank", f"{where}: row index out of range")
            _require(all(0 <= pyint(v, where) < N for v in cols), "rank", f"{where}: column index out of range")
            p = zint(w.get("prime"), f"{where}.prime")
            _require(p >= 2 and p.is_prime(), "rank", f"{where}: {p} is not a prime")
            mm = zint(w.get("minor_mod_p"), f"{where}.minor_mod_p")
            _require(0 < mm < p, "rank", f"{where}: minor_mod_p must be a nonzero residue")
            q = _scale_any(w.get("scale"), f"{where}.scale")
            _require(r == 2 * n or w.get("left_kernel"), "rank", f"{where}: rank < 2n without a left kernel")
            _require(w.get("matrix", "M") == "M", "rank", f"{where}: the heads rank witness is about M")
            facts["rank"] = r
            if not full:
                gap(f"{where}: the {r}x{r} minor's value (needs the weights)")
                continue
            _require(q > 0, "rank", f"{where}: scale must be positive")
            f = q * _p2(ctx.he0)                       # scale·M = Z·f must be an integer matrix
            _require((fmpq(H.content()) * f).q == 1, "rank", f"{where}: scale·M is not an integer matrix")
            sub = fmpz_mat([[H.Z[a, b] for b in cols] for a in rows]) if r else None
            det = fmpq(sub.det() if r else 1) * f ** r
            _require(det.q == 1 and int(det.p) % int(p) == int(mm), "rank",
                     f"{where}: the minor is {int(det.p) % int(p) if det.q == 1 else '?'} mod p, not {mm}")
            if r < 2 * n:
                R = 2 * n
                ker = jlist(w.get("left_kernel"), f"{where}.left_kernel", R - r)
                Y = fmpz_mat([[zint(v, f"{where}.left_kernel[{k}]") for v in jlist(y, f"{where}.left_kernel[{k}]", R)]
                              for k, y in enumerate(ker)])
                _require((Y * H.Z).is_zero(), "rank", f"{where}: a left-kernel vector y has yᵀM ≠ 0")
                kc = [pyint(v, f"{where}.kernel_cols", 0, R - 1)
                      for v in jlist(w.get("kernel_cols"), f"{where}.kernel_cols", R - r)]
                _require(len(set(kc)) == len(kc), "rank", f"{where}: repeated kernel_cols")
                kp = zint(w["kernel_prime"], f"{where}.kernel_prime") if w.get("kernel_prime") is not None else p
                _require(kp >= 2 and kp.is_prime(), "rank", f"{where}: kernel prime {kp} is not a prime")
                km = zint(w.get("kernel_minor_mod_p"), f"{where}.kernel_minor_mod_p")
                kdet = fmpz_mat([[Y[a, b] for b in kc] for a in range(R - r)]).det()
                _require(0 < km < kp and kdet % kp == km, "rank", f"{where}: the kernel minor is {kdet % kp}, not {km}")
            else:
                _require(not w.get("left_kernel") and w.get("kernel_minor_mod_p") is None, "rank",
                         f"{where}: a kernel given for a full-row-rank M")
            ctx.ok(f"{where}: rank M = {r} (the {r}x{r} minor of scale·M recomputed from the weights, nonzero mod p)")
        elif kind == "inertia_charpoly":
            deg = pyint(w.get("degree"), f"{where}.degree", 1, 1 << 24)
            t = (pyint(w.get("sign_changes_pos"), where), pyint(w.get("sign_changes_neg"), where),
                 pyint(w.get("zero_multiplicity"), where))
            check_inertia_json(t, w.get("inertia"), f"{where}.inertia", "inertia_charpoly")
            _require(sum(t) == deg, "inertia_charpoly", f"{where}: Descartes counts do not add up to {deg}")
            s = _scale_any(w.get("scale"), f"{where}.scale")
            if "charpoly" in w:
                cs = [zint(c, f"{where}.charpoly") for c in jlist(w["charpoly"], f"{where}.charpoly", deg + 1)]
                if "charpoly_sha256" in w:
                    text = ",".join(str(c) for c in cs)
                    _require(hashlib.sha256(text.encode()).hexdigest() == w["charpoly_sha256"], "inertia_charpoly",
                             f"{where}: charpoly_sha256 does not match the coefficients")
                got = (sign_changes(cs), sign_changes([c if k % 2 == 0 else -c for k, c in enumerate(cs)]),
                       next(i for i, c in enumerate(cs) if c != 0))
                _require(got == t, "inertia_charpoly", f"{where}: the coefficients give {got}")
            if "sign_pattern" in w:
                pat = w["sign_pattern"]
                _require(isinstance(pat, str) and len(pat) == deg + 1, "inertia_charpoly",
                         f"{where}: sign_pattern must have degree + 1 = {deg + 1} symbols")
                got = _pattern_counts(pat, where)
                _require(got == t, "inertia_charpoly", f"{where}: the sign pattern gives {got}, not {t}")
                ctx.ok(f"{where}: Descartes counts {t} recomputed from the recorded sign pattern")
            mat = w.get("matrix")
            if mat == "half_JG":
                _require(deg == 2 * n, "inertia_charpoly", f"{where}: ½JG is 2n x 2n")
                facts["half_JG"] = t
                facts["exact_signature"] = True
            elif mat == "S":
                _require(deg == N, "inertia_charpoly", f"{where}: S is N x N")
                facts["S"] = t
            else:
                _fail("inertia_charpoly", f"{where}: matrix {mat!r} is not ½JG or S")
            if not full:
                gap(f"{where}: that the polynomial is charpoly({mat}) (needs the weights)")
                continue
            _require(s > 0, "inertia_charpoly", f"{where}: scale must be positive")
            kt = (H.pos, H.neg, 2 * n - H.pos - H.neg) if mat == "half_JG" else (H.pos, H.neg, N - H.pos - H.neg)
            _require(t == kt, "inertia_charpoly", f"{where}: the weights give inertia {kt}, not {t}")
            has_poly = any(k in w for k in ("charpoly", "charpoly_sha256", "sign_pattern"))
            if mat == "half_JG":
                # s·½JG = s·½·J·(Z Zᵀ)·4^e0 = f·(J·G)
                cs = _scaled_charpoly(H.cs, s * _p2(2 * ctx.he0) / 2, where)
            elif has_poly:
                _require(N <= MAX_DEGREE, "limits", f"{where}: charpoly of the {N}x{N} S exceeds the degree limit")
                ZtJZ = H.Z.transpose() * fmpz_mat([[H.Z[(a + n) % (2 * n), b] for b in range(N)]
                                                    for a in range(2 * n)])
                cs = _scaled_charpoly(coeffs(ZtJZ.charpoly()), s * _p2(2 * ctx.he0) / 2, where)   # S = ½ZᵀJZ·4^e0
            if has_poly:
                if "charpoly" in w:
                    _require([int(c) for c in w["charpoly"]] == cs, "inertia_charpoly",
                             f"{where}: the coefficients differ from charpoly({mat}) of the weights")
                if "charpoly_sha256" in w:
                    text = ",".join(str(c) for c in cs)
                    _require(hashlib.sha256(text.encode()).hexdigest() == w["charpoly_sha256"], "inertia_charpoly",
                             f"{where}: charpoly_sha256 is not the SHA-256 of charpoly({s}·{mat}) of the weights")
                if "sign_pattern" in w:
                    _require(w["sign_pattern"] == _pattern(cs), "inertia_charpoly",
                             f"{where}: sign_pattern differs from charpoly({mat}) of the weights")
                ctx.ok(f"{where}: charpoly({mat}) recomputed from the weights; coefficients/SHA-256/sign pattern agree")
            else:
                ctx.ok(f"{where}: inertia of S {t} from ½JG's (Lemma 10: nonzero spectra of Mᵀ(½JM) and (½JM)Mᵀ agree)")
        elif kind == "identity":
            d = jdict(w.get("values"), f"{where}.values")
            fL, t2 = rat(d.get("frob_L"), where), rat(d.get("trace_L2"), where)
            fS, fT, a = rat(d.get("frob_S"), where), rat(d.get("frob_T"), where), rat(d.get("a"), where)
            _require(fS == (fL + t2) / 2, "identity", f"{where}: frob_S ≠ (frob_L + trace_L2)/2")
            _require(fT == (fL - t2) / 2, "identity", f"{where}: frob_T ≠ (frob_L − trace_L2)/2")
            _require(fL != 0 and a == fT / fL, "identity", f"{where}: a ≠ frob_T/frob_L")
            facts["a"] = a
            facts["frob"] = (fL, fS)
            ctx.ok(f"{where}: ‖S‖², ‖T‖², a = ‖T‖²/‖L‖² re-derived from ‖L‖² and tr(L²)")
            if not full:
                gap(f"{where}: ‖L‖² and tr(L²) themselves (need the weights)")
                continue
            _require(e_head is not None, "identity", f"{where}: no witness states the exponent e (M = Z·2^e)")
            kL, kt2 = H.traces()
            unit = _p2(4 * (ctx.he0 - e_head))        # true = value·2^(4e) = k·2^(4·e0)
            _require(fL == fmpq(kL) * unit, "identity", f"{where}: frob_L is not ‖L‖²·2^(−4e) of the weights")
            _require(t2 == fmpq(kt2) * unit, "identity", f"{where}: trace_L2 is not tr(L²)·2^(−4e) of the weights")
            ctx.ok(f"{where}: ‖L‖² and tr(L²) recomputed exactly from the weights")
        elif kind == "enclosure":
            ev = jlist(w.get("eigenvalues"), f"{where}.eigenvalues")
            ivs = [(dec(e[0], where), dec(e[1], where)) for e in (jlist(x, where, 2) for x in ev)]
            _require(all(lo <= hi for lo, hi in ivs), "enclosure", f"{where}: an empty interval")
            facts["eig_intervals"] = ivs
            if not full:
                gap(f"{where}: that the intervals enclose the eigenvalues (need the weights)")
                continue
            _require(w.get("matrix", "half_JG") == "half_JG", "enclosure", f"{where}: enclosures of ½JG expected")
            _require(e_head is not None, "enclosure", f"{where}: no witness states the exponent e (M = Z·2^e)")
            k = 2 * n - H.z
            _require(len(ivs) == k, "enclosure", f"{where}: {len(ivs)} intervals, but ½JG has {k} nonzero eigenvalues")
            u = 2 * _p2(2 * (e_head - ctx.he0))     # μ (eigenvalue of ½J(Z_e Z_eᵀ)) ↦ root of charpoly(J·G)
            xs = [(lo * u, hi * u) for lo, hi in ivs]
            for j, (lo, hi) in enumerate(xs):
                _require(H.holds_rank(j, lo, hi), "enclosure",
                         f"{where}: interval {j} [{ev[j][0]}, {ev[j][1]}] does not contain the {j + 1}-th largest "
                         "nonzero eigenvalue of ½JG")
            facts["x_intervals"] = xs
            facts["unit"] = u
            ctx.ok(f"{where}: each of the {k} intervals holds its eigenvalue of ½JG (rank-matched, exact "
                   "Descartes counts on Taylor shifts of the charpoly)")
        elif kind == "profile":
            order = [x for x in jlist(w.get("order"), f"{where}.order")]
            _require(all(o in ("<", ">", "=", "?") for o in order), "profile", f"{where}: order symbols are < > = ?")
            facts["order"] = order
            if not full:
                gap(f"{where}: the order α_j vs β_j (needs the weights)")
        elif kind == "comparison":
            nc.append(f"{where}: float64 comparison (informational; floats decide nothing)")
        else:
            gap(f"{where}: {kind} witness (not a kind the kernel re-checks for a weights input)")
    v = cert.get("values", {})
    if cid != "heads_have_balanced_attention":
        gap(f"the conclusion of {cid} (no kernel rule for a weights input)")
        return
    # consistency of the recorded facts with each other and with the verdict
    sig = facts.get("S")
    if "half_JG" in facts:
        hp, hn, hz = facts["half_JG"]
        _require(hz == 0 or facts.get("rank", 2 * n) < 2 * n, "inertia_charpoly", "½JG singular although rank M = 2n")
        sig = sig or (hp, hn, N - hp - hn)
        _require(sig == (hp, hn, N - hp - hn), "inertia_charpoly", "the S and ½JG witnesses disagree (Lemma 10)")
        ctx.ok("signature of S from ½JG (Lemma 10: nonzero spectra agree, x^(N−2n) factor)")
    if sig is None and "eig_intervals" in facts and facts.get("rank") == 2 * n:
        # certified signature: 2n enclosures of the nonzero eigenvalues, each
        # excluding 0, and rank M = 2n (so exactly N − 2n zeros, Lemma 10)
        ivs = facts["eig_intervals"]
        _require(len(ivs) == 2 * n, "enclosure", f"the enclosure witness has {len(ivs)} intervals, not 2n = {2 * n}")
        _require(all(lo > 0 or hi < 0 for lo, hi in ivs), "enclosure",
                 "an eigenvalue enclosure contains 0: the signature is not decided by it")
        pos = sum(1 for lo, _ in ivs if lo > 0)
        sig = (pos, 2 * n - pos, N - 2 * n)
        ctx.ok("signature counted from 2n enclosures separated from 0 with rank M = 2n")
    _require(sig is not None and "rank" in facts, "witness", "the heads certificate lacks a rank or inertia witness")
    if full:
        _require(sig == (H.pos, H.neg, N - H.pos - H.neg), "enclosure",
                 f"the recorded signature {sig} is not the weights' ({H.pos}, {H.neg}, {N - H.pos - H.neg})")
        want_ev = "exact" if facts.get("exact_signature") else "certified"
        _require(cert["evidence"] == want_ev, "evidence",
                 f"certificate says {cert['evidence']!r}, its signature witness gives {want_ev!r}")
    for key, want in (("n_pos", sig[0]), ("n_neg", sig[1]), ("n_zero", sig[2]), ("rank_M", facts["rank"]),
                      ("n", n), ("N", N)):
        if key in v:
            _require(pyint(v[key], f"values.{key}") == want, "values", f"values.{key} should be {want}")
    if "a" in facts:
        a = facts["a"]
        if "a_exact" in v:
            _require(rat(v["a_exact"], "values.a_exact") == a, "values", "values.a_exact differs from the identity")
        if "symmetric_energy_exact" in v:
            _require(rat(v["symmetric_energy_exact"], "values") == 1 - a, "values", "symmetric_energy_exact ≠ 1 − a")
        base = fmpq(N + 1, 2 * N)
        if "random_baseline" in v:
            _require(rat(v["random_baseline"], "values") == base, "values", "random_baseline ≠ (N+1)/(2N)")
        if "energy_above_baseline" in v:
            _require(boolean(v["energy_above_baseline"], "values") == (1 - a > base), "values",
                     "energy_above_baseline disagrees with 1 − a vs (N+1)/(2N)")
        bcd = []
        for k in ("b", "c", "d"):
            if f"{k}_lo" in v and v[f"{k}_lo"] != "":
                bcd.append((dec(v[f"{k}_lo"], f"values.{k}_lo"), dec(v[f"{k}_hi"], f"values.{k}_hi")))
        if len(bcd) == 3:
            lo = sum((x for x, _ in bcd), fmpq(0))
            hi = sum((y for _, y in bcd), fmpq(0))
            _require(lo <= 1 - a <= hi, "values", "b + c + d intervals do not contain 1 − a (Theorem 4)")
            ctx.ok("b + c + d intervals contain the exact 1 − a")
    order = facts.get("order")
    if order is not None:
        _require(len(order) == max(sig[0], sig[1]), "profile", "order has the wrong length")
        if full and "x_intervals" in facts:
            _check_order_and_profile(ctx, H, facts, sig, order, v)
        elif full:
            gap("the profile order and intervals (no verified enclosure witness)")
        for face, bad in (("face_c0", ">"), ("face_d0", "<")):
            if face in v:
                want = False if bad in order else ("undecided" if "?" in order else True)
                _require(v[face] == want, "values", f"values.{face} should be {want}")
        if "face_b0" in v:
            _require(v["face_b0"] == (sig[0] == 0 or sig[1] == 0), "values", "values.face_b0 disagrees with the signature")
    ivs = facts.get("eig_intervals")
    if ivs is not None:
        _require(len(ivs) == sig[0] + sig[1], "enclosure", "the enclosure lists the wrong number of eigenvalues")
        npos = sum(1 for lo, hi in ivs if lo > 0)
        nneg = sum(1 for lo, hi in ivs if hi < 0)
        _require(npos == sig[0] and nneg == sig[1], "enclosure", "the enclosed eigenvalue signs disagree with the signature")
    r = facts["rank"]
    verdict = "holds" if (r == 2 * n and sig == (n, n, N - 2 * n)) else ("fails" if r == 2 * n else "undecided")
    _require(cert["verdict"] == verdict, "verdict",
             f"certificate says {cert['verdict']!r}, its recorded rank and signature give {verdict!r}")
    if full and not gaps:
        ctx.ok(f"verdict {verdict!r}: rank M = {r} and signature {sig} re-derived from the weights")
        nc.append("displayed floats (b, c, d, 𝒫, ρ, λ_max, λ_min, float64_*; display only, they decide nothing)")
    else:
        ctx.ok(f"verdict {verdict!r} consistent with the recorded rank {r} and signature {sig}")
        if not full:
            gap("displayed floats and the intervals of b, c, d, 𝒫, ρ (need the weights)")
            gap("the conclusion itself: rank M and the signature were not recomputed (need the weights)")


def _check_order_and_profile(ctx: Ctx, H: _HeadExact, facts: dict, sig: tuple, order: list, v: dict) -> None:
    """With verified rank-matched intervals: decide α_j vs β_j and compare
    with the recorded order; check that the stated b, c, d, 𝒫, ρ, bound and
    gap intervals contain the exact values (kernel enclosures refined by
    exact bisection until they fit or miss, at most 12 rounds)."""
    xs = list(facts["x_intervals"])
    npos = sig[0]
    m = len(order)
    korder = []
    for j in range(m):
        a = (j, *xs[j]) if j < npos else None
        jb = len(xs) - 1 - j
        b = (jb, *xs[jb]) if j < len(xs) - npos else None
        sym_, a, b = _order_symbol(H, a, b)
        if a is not None:
            xs[a[0]] = (a[1], a[2])
        if b is not None:
            xs[b[0]] = (b[1], b[2])
        o = order[j]
        if sym_ in "<>":
            _require(o in (sym_, "?"), "profile", f"order[{j}] is {o!r}, the weights give α_j {sym_} β_j")
        else:
            _require(o in ("=", "?"), "profile", f"order[{j}] is {o!r}, but the kernel cannot separate α_j and β_j")
            if o == "=":
                ctx.weights_gaps.append(f"order[{j}] '=': equality of α_j and β_j is not re-proved")
                ctx.not_checked.append(ctx.weights_gaps[-1])
        korder.append(o if o in ("=", "?") else sym_)
    ctx.ok(f"profile order α_j vs β_j decided from the verified intervals ({m} pairs)")
    fL, fS = facts["frob"]
    u = facts["unit"]            # x = u·μ;  μ²/frob_L are the profile's terms
    names = [k for k in ("b", "c", "d", "pairing", "rho", "pairing_bound", "pairing_gap")
             if v.get(f"{k}_lo", "") != "" and f"{k}_hi" in v]
    if not names:
        return
    stated = {k: (dec(v[f"{k}_lo"], f"values.{k}_lo"), dec(v[f"{k}_hi"], f"values.{k}_hi")) for k in names}
    for rnd in range(13):
        mu = [(lo / u, hi / u) for lo, hi in xs]
        enc = _profile_enclosures(mu, npos, korder, fL, fS)
        res = {}
        for k in names:
            _require(k in enc, "values", f"values.{k}: no such quantity for this head")
            res[k] = _contain(k, enc[k], stated[k])
            _require(res[k] >= 0, "values", f"values.{k}: the exact value lies outside [{v[f'{k}_lo']}, {v[f'{k}_hi']}]")
        if all(x == 1 for x in res.values()):
            ctx.ok(f"intervals of {', '.join(names)} contain the exact values (from the verified eigenvalues"
                   + (f", {rnd} refinement rounds)" if rnd else ")"))
            return
        xs = [H.refine(j, lo, hi, 6) for j, (lo, hi) in enumerate(xs)]
    bad = [k for k, x in res.items() if x != 1]
    _fail("values", f"could not confirm the intervals of {', '.join(bad)} within the refinement limit")


# -- hypotheses (reported by counterexample witnesses) ----------------------------

def _hyp_table(ctx: Ctx) -> dict[str, Callable[[], bool]]:
    """Kernel evaluation of every named hypothesis of the claims (exact)."""
    def L():
        return ctx.matrix("L")

    def M_rank():
        return _rank_of(ctx, ctx.matrix("M")) == 2 * ctx.n

    return {
        "L_ne_zero": lambda: frob(L()) != 0,
        "S_ne_zero": lambda: frob(sym(L())) != 0,
        "U_orthogonal": lambda: ctx.U is not None and ctx.U.transpose() * ctx.U == eye(ctx.U.nrows()),
        "rank_one": lambda: _rank_of(ctx, L()) == 1,
        "N_ge_2": lambda: L().nrows() >= 2,
        "rank_le_n": lambda: ctx.n is not None and _rank_of(ctx, L()) <= ctx.n,
        "stacked_surjective": M_rank,
        "M_surjective": M_rank,
        "n_ge_1": lambda: ctx.n is not None and ctx.n >= 1,
        "lamPlus_ne_zero": lambda: len(ctx.spectrum_of(sym(L())).pos) > 0,
    }


def check_counterexamples(ctx: Ctx, rr: RuleResult) -> None:
    """``counterexample`` witnesses (search / hypothesis probes): the failing
    checks must be checks the kernel finds false, the hypotheses' truth
    values on the input are re-evaluated, and the dropped hypothesis must be
    false.  The search provenance (budget, seed, …) is not re-checked: it
    says how the input was found, not what the certificate proves."""
    table = None
    for i, w in enumerate(ctx.cert["witnesses"]):
        if w.get("kind") != "counterexample":
            continue
        where = f"witnesses[{i}]"
        chk = "counterexample"
        only_keys(w, {"kind", "dropped_hypothesis", "failed_checks", "hypotheses_on_input", "mode", "reason",
                      "recheck", "search"}, where)
        _require(rr.verdict == "fails", chk, f"{where}: a counterexample, but the kernel finds {rr.verdict!r}")
        bad = {k for k, v in rr.checks.items() if not v}
        fc = jlist(w.get("failed_checks", []), f"{where}.failed_checks")
        for label in fc:
            _require(label in bad, chk, f"{where}.failed_checks: {label!r} is not a check the kernel finds false")
        _require(bool(fc) or not bad, chk, f"{where}.failed_checks is empty but the kernel finds failing checks")
        table = table or _hyp_table(ctx)
        hyps = jdict(w.get("hypotheses_on_input", {}), f"{where}.hypotheses_on_input")
        for name, val in hyps.items():
            _require(name in table, chk, f"{where}: hypothesis {name!r} is not one the kernel can evaluate")
            got = table[name]()
            _require(boolean(val, f"{where}.hypotheses_on_input.{name}") == got, chk,
                     f"{where}: hypothesis {name!r} is {got} on this input, not {val}")
        if "dropped_hypothesis" in w:
            dh = w["dropped_hypothesis"]
            _require(hyps.get(dh) is False, chk, f"{where}: the dropped hypothesis {dh!r} must be false on the input")
        _require(w.get("mode", "search") in ("search", "probe"), chk, f"{where}.mode must be 'search' or 'probe'")
        for k in ("reason", "recheck"):
            _require(isinstance(w.get(k, ""), str), chk, f"{where}.{k} should be text")
        if "search" in w:
            jdict(w["search"], f"{where}.search")
            ctx.not_checked.append(f"{where}.search: how the counterexample was found (provenance only)")
        ctx.consumed.add(i)
        ctx.ok(f"counterexample: failing checks and hypotheses ({', '.join(f'{k}={v}' for k, v in hyps.items())}) "
               "re-evaluated")


CLAIM_RULES: dict[str, Callable[[Ctx], RuleResult]] = {
    "symPart": rule_symPart,
    "frobSq_eq_frobSq_symPart_add_frobSq_skewPart": rule_lemma5,
    "profile": rule_profile,
    "profile_sum_eq_one": rule_theorem4,
    "profile_scale": rule_lemma4,
    "profile_conj": rule_profile_conj,
    "profile_rank_one": rule_prop4,
    "pairing_bound": rule_lemma2,
    "rank_balance": rule_lemma3,
    "heads_have_balanced_attention": rule_theorem3,
    "GramForm.charpoly_roots_filter_ne_zero": rule_lemma10,
}


# ---------------------------------------------------------------------------
# driver


def _verify(cert: dict, base_dir: Path | None) -> Ctx:
    check_schema(cert)
    ws = cert["witnesses"]
    _require(len(ws) <= MAX_WITNESSES, "limits", f"{len(ws)} witnesses exceed the limit {MAX_WITNESSES}")
    cid = cert["claim"]["id"]
    rule = CLAIM_RULES.get(cid)
    _require(rule is not None or cert["input"]["kind"] == "weights", "claim",
             f"no kernel rule for claim {cid!r}: its conclusion cannot be re-checked")
    ctx = Ctx(cert, base_dir)
    ctx.partial = False
    if ctx.kind == "weights":
        partial_weights(ctx)
        ctx.partial = bool(ctx.weights_gaps)
        return ctx
    ctx.witness_facts = [None] * len(ws)
    # eigenvalue witnesses first: later witnesses reuse the verified spectra
    order = sorted(range(len(ws)), key=lambda i: 0 if ws[i].get("kind") == "eigenvalues" else 1)
    for i in order:
        w = ws[i]
        fn = GENERIC_WITNESSES.get(w.get("kind"))
        if fn is None:
            continue
        try:
            ctx.witness_facts[i] = fn(ctx, w, f"witnesses[{i}]")
        except Unavailable as err:
            ctx.not_checked.append(f"witnesses[{i}] ({w.get('kind')} of {err.args[0]}): matrix not derivable")
            ctx.witness_facts[i] = None
        ctx.consumed.add(i)
    if not ctx.available:
        ctx.not_checked.append(f"the conclusion of {cid} (the matrices are not available to the kernel)")
        _fail("input", "input matrices are not available to the kernel: "
              + "; ".join(ctx.not_checked))
    rr = rule(ctx)
    check_counterexamples(ctx, rr)
    left = [i for i in range(len(ws)) if i not in ctx.consumed]
    if left:
        _fail("witness", f"witnesses[{left[0]}] of kind {ws[left[0]].get('kind')!r} is not one the "
              f"kernel re-checks for {cid}")
    _require(cert["verdict"] == rr.verdict, "verdict",
             f"certificate says {cert['verdict']!r}, the re-checked witnesses give {rr.verdict!r}")
    _require(cert["evidence"] == rr.evidence, "evidence",
             f"certificate says {cert['evidence']!r}, the kernel establishes {rr.evidence!r}")
    _require(cert.get("convention") == rr.convention, "convention",
             f"certificate says {cert.get('convention')!r}, the claim uses {rr.convention!r}")
    values = cert.get("values", {})
    for k, v in values.items():
        f = rr.values.get(k)
        _require(f is not None, "values", f"values.{k} is not a value the kernel re-derives for {cid}")
        f(v, f"values.{k}")
    ctx.ok(f"verdict {rr.verdict!r} and evidence {rr.evidence!r} agree with the kernel")
    return ctx


def verify_document(cert: Any, path: str = "<certificate>", base_dir: Path | None = None) -> Outcome:
    """Verify a parsed certificate; never raises for bad content (returns an
    invalid Outcome naming the failing check)."""
    claim = verdict = ""
    if isinstance(cert, dict):
        c = cert.get("claim")
        claim = c.get("id", "") if isinstance(c, dict) else ""
        verdict = cert.get("verdict", "") if isinstance(cert.get("verdict"), str) else ""
    old = FCTX.prec
    try:
        kctx = _verify(cert, base_dir)
        return Outcome(path, "partial" if kctx.partial else "valid", claim=claim, verdict=verdict,
                       checked=list(dict.fromkeys(kctx.checked)), not_checked=list(dict.fromkeys(kctx.not_checked)))
    except CheckFailed as err:
        return Outcome(path, "invalid", err.check, err.why, claim, verdict)
    except (ArithmeticError, ValueError, TypeError, KeyError, IndexError, ZeroDivisionError) as err:
        # malformed content that slipped past the field checks
        return Outcome(path, "invalid", "format", f"{type(err).__name__}: {str(err)[:200]}", claim, verdict)
    except RecursionError:
        return Outcome(path, "invalid", "limits", "structure nested too deeply", claim, verdict)
    except Unavailable as err:
        return Outcome(path, "invalid", "input", f"matrix {err.args[0]} cannot be derived from this input", claim,
                       verdict)
    finally:
        FCTX.prec = old


def verify_file(path: str | Path, skip_non_certificates: bool = False) -> Outcome:
    """Read and verify one certificate file.  With ``skip_non_certificates``
    (directory and glob scans) a JSON object with neither ``format`` nor
    ``claim`` (e.g. a summary table written beside certificates) gives the
    status ``skipped`` instead of a schema violation."""
    p = Path(path)
    try:
        doc = read_file(p)
    except VerifierInputError as err:
        return Outcome(str(path), "unreadable", "read", str(err))
    except CheckFailed as err:
        return Outcome(str(path), "invalid", err.check, err.why)
    if skip_non_certificates and isinstance(doc, dict) and "format" not in doc and "claim" not in doc:
        return Outcome(str(path), "skipped", "", "not a certificate (no format or claim field)")
    return verify_document(doc, str(path), p.parent)


def expand_paths(args: list[str]) -> tuple[list[tuple[Path, bool]], list[str]]:
    """Files named by ``args``: files as given, directories searched
    recursively for ``*.json``, glob patterns (``**`` allowed) expanded.
    Returns (files, problems): files as (path, found_by_scan) and problems
    naming args that matched nothing."""
    files: list[tuple[Path, bool]] = []
    problems: list[str] = []
    for a in args:
        p = Path(a)
        if p.is_dir():
            found = sorted(q for q in p.rglob("*.json") if q.is_file())
            if not found:
                problems.append(f"{a}: directory holds no .json certificate")
            files.extend((q, True) for q in found)
        elif p.exists():
            files.append((p, False))
        elif any(ch in a for ch in "*?["):
            found = sorted(Path(x) for x in glob.glob(a, recursive=True) if os.path.isfile(x))
            if not found:
                problems.append(f"{a}: pattern matches no file")
            files.extend((q, True) for q in found)
        else:
            problems.append(f"{a}: no such file or directory")
    seen = set()
    out = []
    for f, scanned in files:
        k = str(f.resolve())
        if k not in seen:
            seen.add(k)
            out.append((f, scanned))
    return out, problems
