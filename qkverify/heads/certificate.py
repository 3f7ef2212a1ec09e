"""Format-2 certificates of a real head (docs/CERTIFICATES.md).

A head's certificate names its weights (each tensor: file, SHA-256, rows / columns /
index) instead of holding the matrices; the kernel reads them itself.  Two statements
are certified per head, each declaration with its own Lean hypotheses:

* Theorem 3 (``heads_have_balanced_attention``): ``Nondegenerate``, ``finrank_radical``,
  ``signature``, ``heads_have_balanced_attention`` -- from the rank witness of
  M = [W_K; W_Q] and the ``cells`` witness of X = J·Z·Zᵀ;
* Definition 6 (``profile``): ``profileA`` (exact, from exact traces) and ``profileB``,
  ``profileC``, ``profileD``, ``profile`` (enclosures computed from the cells).

Everything in them is a function of the exact weights (the cells are deterministic,
:mod:`qkverify.heads.cells`); the authors' float64 figures live only in the tables.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..claims.evaluate import evaluate
from .cells import HeadSpectrum


def _tensor_ref(t: dict, source: dict) -> dict:
    """A loader's tensor reference in the certificate's form (file and SHA-256 per tensor)."""
    out = {"role": t["role"], "name": t["name"], "file": t.get("file", source.get("file", "")),
           "sha256": t.get("file_sha256", t.get("sha256", source.get("sha256", "")))}
    arch = str(source.get("arch", ""))
    if arch.startswith("gguf:"):
        out["format"] = "gguf"
        out["transform"] = ("dequantize; undo llama.cpp RoPE row permutation" if t.get("rope_heads")
                            else "dequantize")
    elif "index" in t:
        out["format"] = "npz"
    for k in ("rows", "cols", "index"):
        if k in t:
            out[k] = [int(x) for x in t[k]]
    return out


def _rank_v2(w: dict, e: int) -> dict:
    """The rank witness of M in the kernel's form: rank 2n from the cells witness, or a minor
    of s·Z, Z = M·2^(−e) (with left-kernel vectors when rank M < 2n)."""
    if w.get("from") == "cells":
        return {"kind": "rank", "of": "M", "rank": int(w["rank"]), "from": "cells"}
    scale = w.get("scale", "1")
    if isinstance(scale, str) and scale.startswith("2^"):
        s = 1  # the full-rank route computes the minor of Z itself
    else:  # the exact route: scale D with D·M integral, so (D·2^e)·Z = D·M
        s = int(scale) * 2**e if e >= 0 else int(scale) // 2 ** (-e)
    out = {"kind": "rank", "of": "M", "scale": str(s), "rank": int(w["rank"]), "rows": list(w["minor_rows"]),
           "cols": list(w["minor_cols"]), "prime": str(w["prime"]), "minor_mod_p": str(w["minor_mod_p"])}
    if w.get("left_kernel"):
        out.update(kernel=[[str(v) for v in y] for y in w["left_kernel"]], kernel_cols=list(w["kernel_cols"]),
                   kernel_minor_mod_p=str(w["kernel_minor_mod_p"]),
                   kernel_prime=str(w.get("kernel_prime") or w["prime"]))
    return out


@dataclass
class WeightsHead:
    """A real head as a format-2 input (kind ``weights``)."""

    n: int
    N: int
    tensors: list
    rank_witness: dict
    rank_M: int
    spectrum: HeadSpectrum
    display: dict = field(default_factory=dict)

    kind2 = "weights"

    @property
    def cells_witness(self) -> dict:
        return self.spectrum.witness()

    @property
    def signature(self) -> tuple[int, int, int]:
        hs = self.spectrum
        return hs.n_pos, hs.n_neg, hs.n_zero

    def to_json2(self) -> dict:
        """The format-2 certificate input object."""
        return {"kind": "weights", "n": self.n, "N": self.N, "tensors": self.tensors}


def weights_head(res: dict, source: dict, hints: dict | None = None) -> WeightsHead:
    """The format-2 input of a head certified by :func:`qkverify.heads.certify.certify_head`
    (``hints``: file name -> path_hint, see :func:`path_hints`)."""
    hs: HeadSpectrum = res["spectrum"]
    rank_w = next(w for w in res["witnesses"] if w.get("kind") == "rank")
    row = res["row"]
    refs = tensor_refs(source)
    for t in refs:
        if hints and hints.get(t["file"]):
            t["path_hint"] = hints[t["file"]]
    return WeightsHead(int(row["n"]), int(row["N"]), refs, _rank_v2(rank_w, hs.scale_exponent),
                       int(rank_w["rank"]), hs)


def path_hints(source: dict, weights_dir: Path | str | None, cert_dir: Path | str | None) -> dict:
    """{file name: path_hint} for the weights files a head's tensors name: the file's path
    relative to the certificate's directory, POSIX separators (DESIGN.md, Weights).  A hint only:
    the kernel opens the file there only if its SHA-256 is the recorded one.  None for files of
    an installed model package (the kernel looks there anyway, and a path into site-packages
    would make the shipped certificates differ between machines)."""
    if weights_dir is None or cert_dir is None:
        return {}
    out = {}
    wd, cd = _resolved(os.fspath(weights_dir), os.fspath(cert_dir), os.getcwd())
    for t in source.get("tensors", []):
        name = t.get("file", source.get("file", ""))
        hint = _hint(wd, cd, name) if name else None
        if hint is not None:
            out[name] = hint
    return out


@functools.lru_cache(maxsize=64)
def _resolved(weights_dir: str, cert_dir: str, cwd: str) -> tuple[str, str]:
    """Both folders resolved (cached per run: resolving walks every component with system calls;
    ``cwd`` keys a relative folder)."""
    return str(Path(weights_dir).resolve()), str(Path(cert_dir).resolve())


@functools.lru_cache(maxsize=256)
def _hint(weights_dir: str, cert_dir: str, name: str) -> str | None:
    """The path_hint of one file, from resolved folders (cached: a run asks for the same few files
    on every head)."""
    from ..models.installed import default_weights_dirs

    wd = Path(weights_dir)
    installed = [Path(d).resolve() for d in default_weights_dirs()]
    if any(wd == d or d in wd.parents for d in installed):
        return None
    hint = Path(os.path.relpath(wd / name, cert_dir)).as_posix()
    # a path the schema cannot hold (a backslash or control character in a folder's name, over
    # 1024 characters) gets no hint: the hint is optional, the certificate must stay valid
    return hint if _HINT.fullmatch(hint) else None


#: what the schema's ``path_hint`` admits: relative, no backslash or control character, ≤ 1024
_HINT = re.compile(r"[^/\\\x00-\x1f][^\\\x00-\x1f]{0,1023}")


#: the head's statements and the suffix of their certificate files (L00H00.json, L00H00.profile.json)
STATEMENTS = (("heads_have_balanced_attention", ""), ("profile", ".profile"))


#: the row's exact values: never in a certificate's display (display holds labels and float
#: figures only, issue 18); the records state them (profileA) and the kernel re-derives them, and
#: a rerun that resumes a head takes them back from the records (:func:`exact_fields`)
EXACT_ROW_KEYS = ("a_exact", "symmetric_energy_exact", "random_baseline")


def display_row(values: dict) -> dict:
    """The head's row as a certificate displays it: without its exact values."""
    return {k: v for k, v in values.items() if k not in EXACT_ROW_KEYS}


def exact_fields(row: dict, profile_cert: dict) -> dict:
    """The exact values of a head's row, re-derived from its Definition 6 certificate: a from
    the profileA record, 1 − a, and the random baseline (N + 1)/(2N) (a row without ``a`` --
    L = 0 -- has none)."""
    from fractions import Fraction

    if "a" not in row:
        return {}
    a = next(Fraction(d["value"]["exact"]) for d in profile_cert["declarations"] if d["check"] == "profileA")
    N = int(row["N"])
    fs = lambda x: str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"  # noqa: E731
    return {"a_exact": fs(a), "symmetric_energy_exact": fs(1 - a), "random_baseline": fs(Fraction(N + 1, 2 * N))}


def with_exact(values: dict, exact: dict) -> dict:
    """``values`` with the exact fields put back where the producer's row has them (each after
    its float: a, symmetric_energy, then the baseline)."""
    after = {"a": ("a_exact",), "symmetric_energy": ("symmetric_energy_exact", "random_baseline")}
    out: dict = {}
    for k, v in values.items():
        out[k] = v
        for e in after.get(k, ()):
            if e in exact:
                out[e] = exact[e]
    return out


def certificates_for(res: dict, source: dict, values: dict, weights_dir: Path | str | None = None,
                     cert_dir: Path | str | None = None) -> list[tuple[str, dict]]:
    """(file suffix, certificate) for Theorem 3 and Definition 6 on this head.  ``values`` (the
    head's table row without its float64 columns, and the producer options) go into the
    display without their exact values (:func:`display_row`), where a rerun finds them to
    resume.  With ``weights_dir`` (the directory of the weights files) and ``cert_dir`` (where
    the certificates are written) each tensor records a ``path_hint`` (:func:`path_hints`)."""
    row = res["row"]
    inp = weights_head(res, source, path_hints(source, weights_dir, cert_dir))
    disp = {"name": f"{row['model']} layer {row['layer']} head {row['head']}", "model": row["model"],
            "layer": row["layer"], "head": row["head"], "kv_head": row["kv_head"],
            "arch": source.get("arch", ""), "row": display_row(values)}
    return [(suffix, evaluate(st, inp).certificate(disp)) for st, suffix in STATEMENTS]


def tensor_refs(source: dict) -> list[dict]:
    """The certificate's tensor references of a head record's ``source``."""
    return [_tensor_ref(t, source) for t in source.get("tensors", [])]
