"""Helpers for forging certificates by hand: a weights head written to a safetensors file, a
format-3 certificate around hand-written records, and the kernel's answer."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from kernel_fixtures import mutate

FORMAT = "qkverify-certificate/3"
A, MT = "Appendices.", "Appendices.MainText."


def weights_file(path: Path, wq, wk) -> str:
    """A safetensors file with ``q.weight`` and ``k.weight`` ([n, N], float32); its SHA-256."""
    from safetensors.numpy import save_file

    save_file({"q.weight": np.array(wq, np.float32), "k.weight": np.array(wk, np.float32)}, str(path))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def weights_input(directory: Path, wq, wk, name: str = "model.safetensors") -> dict:
    sha = weights_file(directory / name, wq, wk)
    n, N = len(wq), len(wq[0])
    return {"kind": "weights", "n": n, "N": N,
            "tensors": [{"role": "W_Q", "name": "q.weight", "file": name, "sha256": sha, "rows": [0, n]},
                        {"role": "W_K", "name": "k.weight", "file": name, "sha256": sha, "rows": [0, n]}]}


def record(name: str, conclusion: str, evidence: str = "exact", hypotheses: dict | None = None, **extra) -> dict:
    short = name.replace(MT, "").replace(A, "")
    return {"name": name, "check": short, "hypotheses": hypotheses or {}, "conclusion": conclusion,
            "evidence": evidence, **extra}


def certificate(statement: str, inp: dict, witnesses: list, records: list, verdict: str | None = None,
                evidence: str | None = None) -> dict:
    """A format-3 certificate; verdict and evidence follow the records unless given."""
    from qkverify.kernel.check import verdict_of

    order = ("exact", "certified", "empirical")
    return {"format": FORMAT, "statement": statement, "input": inp, "witnesses": witnesses,
            "declarations": records, "verdict": verdict or verdict_of([r["conclusion"] for r in records]),
            "evidence": evidence or max((r["evidence"] for r in records), key=order.index, default="exact"),
            "display": {"label": "forged"}, "tool": {}}


def verify(doc: dict, base: Path | None = None, dirs: list | None = None):
    """The kernel's outcome; with QKV_DUMP_FORGERIES=DIR each document is also written there
    (beside a copy of its weights files) so that another kernel can be run on the same attempts."""
    from qkverify.kernel import verify_document

    dump = os.environ.get("QKV_DUMP_FORGERIES")
    if dump:
        import shutil

        d = Path(dump) / f"{len(list(Path(dump).glob('*'))):04d}"
        d.mkdir(parents=True)
        (d / "c.json").write_text(json.dumps(doc))
        for f in (base.iterdir() if base else ()):
            if f.is_file() and f.suffix in (".safetensors", ".npz", ".gguf"):
                shutil.copy(f, d / f.name)
    return verify_document(json.loads(json.dumps(doc)), str(base / "c.json") if base else "<forged>", base, dirs or [])


#: a copy of ``doc`` with the value at ``path`` replaced (the kernel fixtures' helper)
edit = mutate
