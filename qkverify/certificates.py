"""Certificate files: JSON validated by ``schema/certificate.schema.json``.

A certificate records the exact input (``"p/q"`` strings, or the SHA-256 of a
weights file plus tensor names and slices), the claim and its Lean
declarations, the padding convention, the verdict, the evidence level, and a
list of witnesses that ``qkverify verify`` re-checks without the producer
code.  Files are canonical JSON (sorted keys, fixed indentation, no
timestamps): the same input gives byte-identical files.  Writes are atomic
(temporary file + rename) and never replace a different existing file unless
``force`` is given.

Witness kinds (field ``kind``; ``matrix`` names a matrix the verifier derives
from the input, see DERIVED_MATRICES):

* ``inertia_charpoly``: ``matrix``, ``scale`` D, ``charpoly`` (ascending
  integer coefficients of charpoly(D·X)), ``sign_changes_pos``,
  ``sign_changes_neg``, ``zero_multiplicity``, and ``inertia`` {n_pos, n_neg, n_zero}
* ``inertia_ldlt``: ``matrix``, ``perm``, ``L`` (strictly lower rows), ``D``
  blocks, ``inertia``
* ``rank``: ``matrix``, ``scale``, ``rank``, ``minor_rows``, ``minor_cols``,
  ``prime``, ``minor_mod_p``, ``left_kernel``, ``kernel_cols``,
  ``kernel_minor_mod_p``, ``kernel_prime``
* ``eigenvalues``: ``matrix``, ``scale`` D, list ``roots`` of {``poly``,
  ``root_index``, ``interval``, ``multiplicity``} (roots of charpoly(D·X))
* ``profile``: ``padding`` and ``values`` (exact / algebraic / interval
  a, b, c, d, the fibers, α and β as exact eigenvalues: rationals or
  irreducible polynomial + root index + isolating interval); ``order`` (sign
  of α_j − β_j, −1/0/1)
* ``fiber_decomposition``: ``face`` ("c" or "d"), ``exact`` true with ``H``,
  ``P`` rational rows, or false with interval matrices
* ``identity``: named exact values (``"p/q"``) and the equalities that
  relate them, e.g. ‖L‖² = ‖S‖² + ‖T‖²
* ``counterexample``: the failing exact evaluation (search/probes)
"""

from __future__ import annotations

import hashlib
import json
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

from .errors import CertificateExists, QKInputError
from .io.outputs import atomic_write_bytes

FORMAT = "qkverify-certificate/1"
SCHEMA_PATH = Path(__file__).with_name("schema") / "certificate-1.schema.json"

#: matrices a witness may name; the verifier derives them from the input
DERIVED_MATRICES = {
    "L": "the matrix input, or W_Kᵀ W_Q for a head",
    "S": "sym_part(L) = (L + Lᵀ)/2",
    "T": "skew_part(L) = (L − Lᵀ)/2",
    "M": "stacked map [W_K; W_Q] (2n x N)",
    "G": "M Mᵀ (2n x 2n)",
    "half_JG": "½ J G with J = [[0, I_n], [I_n, 0]]",
    "gram_in_basis": "Bᵀ S B for the basis B given inline in the witness (``basis``)",
    "UtLU": "Uᵀ L U for the orthogonal U of the input",
    "inline": "the matrix given inline in the witness (``rows``)",
}

_DEPS = ("python-flint", "sympy", "mpmath", "numpy", "jsonschema", "hypothesis")


def tool_versions() -> dict[str, str]:
    """Versions of qkverify and its dependencies (recorded in certificates)."""
    from . import __version__

    out = {"qkverify": __version__, "python": platform.python_version()}
    for d in _DEPS:
        try:
            out[d] = metadata.version(d)
        except metadata.PackageNotFoundError:
            out[d] = "not installed"
    return out


def load_schema() -> dict:
    """The shipped certificate JSON Schema (qkverify/schema/certificate.schema.json)."""
    return json.loads(SCHEMA_PATH.read_text())


def validate(cert: dict) -> None:
    """Validate against the shipped JSON Schema; QKInputError with the first
    violation's path and message."""
    import jsonschema

    v = jsonschema.Draft202012Validator(load_schema())
    errs = sorted(v.iter_errors(cert), key=lambda e: list(e.absolute_path))
    if errs:
        e = errs[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        raise QKInputError(f"certificate schema violation at {where}: {e.message}")


def build(
    claim,
    input_json: dict,
    result,
    name: str | None = None,
) -> dict:
    """Assemble a certificate dict from a Claim, the input's JSON form
    (``MatrixInput.to_json()`` etc., plus ``kind``) and a Result."""
    cert: dict[str, Any] = {
        "format": FORMAT,
        "claim": {
            "id": claim.id,
            "label": claim.label,
            "lean_decls": list(claim.lean_decls),
        },
        "input": input_json,
        "convention": result.convention,
        "verdict": result.verdict,
        "evidence": result.evidence,
        "reason": result.reason,
        "values": result.values,
        "witnesses": result.witness.get("witnesses", []) if isinstance(result.witness, dict) else [],
        "tool": tool_versions(),
    }
    if name:
        cert["name"] = name
    return cert


def canonical_bytes(cert: dict) -> bytes:
    """Canonical UTF-8 JSON (sorted keys, indent 1, trailing newline): byte-identical for equal certificates."""
    return (json.dumps(cert, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def write(cert: dict, path: str | Path, force: bool = False, check_schema: bool = True) -> str:
    """Write ``cert`` atomically at ``path``.

    Returns ``"written"``, ``"unchanged"`` (identical file already there),
    ``"tool versions updated"`` or ``"replaced"`` (different file,
    ``force``).  Raises CertificateExists when a different certificate exists
    and ``force`` is False, QKInputError (one line) when the folder cannot be
    created or written.  The bytes go through
    :func:`qkverify.io.outputs.atomic_write_bytes`: a hidden temporary named
    ``.<name>.<host>.<pid>.<random>.tmp`` renamed over ``path``; temporaries
    that a killed writer left in the folder are removed first (only those of
    that pattern whose pid is dead and which predate this process).
    """
    if check_schema:
        validate2(cert) if cert.get("format") == FORMAT2 else validate(cert)
    data = canonical_bytes(cert)
    p = Path(path)
    status = "written"
    if p.is_dir():
        raise QKInputError(f"{p}: is a directory, expected a certificate file")
    if p.exists():
        try:
            old = p.read_bytes()
        except OSError as err:
            raise QKInputError(f"{p}: cannot read the existing certificate ({err.strerror})") from None
        if old == data:
            return "unchanged"
        if not force and _differs_only_in_tool(old, cert):
            force = True  # same mathematics, newer dependency versions: reported, not silent
            status = "tool versions updated"
        if not force:
            raise CertificateExists(f"{p}: a different certificate exists; use --force to replace it")
        if status == "written":
            status = "replaced"
    atomic_write_bytes(p, data)  # temporary + fsync + rename; stale temporaries cleaned
    return status


def _differs_only_in_tool(old: bytes, cert: dict) -> bool:
    try:
        prev = json.loads(old)
    except ValueError:
        return False
    if not isinstance(prev, dict):
        return False
    a = {k: v for k, v in prev.items() if k != "tool"}
    b = {k: v for k, v in cert.items() if k != "tool"}
    return a == b


def input_digest(input_json: dict) -> str:
    """Short stable name for an input: first 16 hex digits of its SHA-256."""
    return hashlib.sha256(json.dumps(input_json, sort_keys=True).encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------
# format 2 (docs/CERTIFICATES.md): per-declaration records and witnesses

FORMAT2 = "qkverify-certificate/2"
SCHEMA2_PATH = Path(__file__).with_name("schema") / "certificate.schema.json"


def validate2(cert: dict) -> None:
    """Validate a format-2 certificate against the shipped schema (QKInputError naming the first violation)."""
    import jsonschema

    v = jsonschema.Draft202012Validator(json.loads(SCHEMA2_PATH.read_text()))
    errs = sorted(v.iter_errors(cert), key=lambda e: [str(p) for p in e.absolute_path])
    if errs:
        e = errs[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        raise QKInputError(f"certificate schema violation at {where}: {e.message[:300]}")


def build2(statement: str, input_json: dict, witnesses: list[dict], declarations: list[dict],
           verdict: str, evidence: str, display: dict) -> dict:
    """Assemble a format-2 certificate; ``display`` is display-only (never re-checked)."""
    return {
        "format": FORMAT2,
        "statement": statement,
        "input": input_json,
        "witnesses": witnesses,
        "declarations": declarations,
        "verdict": verdict,
        "evidence": evidence,
        "display": display,
        "tool": tool_versions(),
    }
