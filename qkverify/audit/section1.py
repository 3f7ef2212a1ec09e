"""§1 on real models for the audit: the RoPE-like check of a SmolLM2 head (read with the loader's
pairing, whose certificates are written, and with the other pairing, which must fail and is only
reported) and the near-identity bound of the default model's first layer (Euclidean and sup
norms) on the embeddings of a sentence."""

from __future__ import annotations

from pathlib import Path

from .. import certificates
from ..errors import CertificateExists, QKInputError
from .run import AuditRow

ROPE_MODEL, ROPE_K = "smollm2", 8


def _write(run, out: Path, name: str, force: bool) -> tuple[str, str]:
    path = out / run.statement.id / f"{name}.json"
    try:
        return str(path), certificates.write(run.certificate({"name": name}), path, force=force)
    except CertificateExists:
        return str(path), "refused (a different certificate exists; --force replaces it)"


def run_models(out: Path, force: bool = False, write: bool = True) -> list[AuditRow]:
    """Rows for the real-model §1 checks (a model that is not installed is a ``skipped`` row)."""
    from ..claims.evaluate import evaluate
    from ..models.layer import layer_input
    from ..models.rope import check_head

    rows: list[AuditRow] = []
    try:
        res = check_head(ROPE_MODEL, 0, 0, ROPE_K)
    except QKInputError as err:
        rows.append(AuditRow("isRoPELike_iff", "Proposition 1", ROPE_MODEL, "skipped", "-", str(err)[:160], None))
        res = None
    for i, rd in enumerate(res["readings"] if res else []):
        name = f"{res['info']['model']}_L00H00_{rd['pairing']}_k{ROPE_K}"
        expected = "holds" if i == 0 else "fails"
        for run in rd["runs"]:
            path = status = None
            if write and i == 0:
                path, status = _write(run, out, name, force)
            verdict = run.verdict if i == 0 else (
                "fails (expected: wrong pairing)" if rd["verdict"] == expected else "holds (WRONG PAIRING PASSED)")
            rows.append(AuditRow(run.statement.id, run.statement.label, name, verdict, run.evidence,
                                 f"T_d = S^d for d < {ROPE_K}: {rd['verdict']}", path, status or ""))
    for norm in ("l2", "linf"):
        try:
            inp, info = layer_input(None, 0, norm=norm)
            run = evaluate("near_identity", inp)
        except QKInputError as err:
            rows.append(AuditRow("near_identity", "Proposition 2", f"default model ({norm})", "skipped", "-",
                                 str(err)[:160], None))
            continue
        name = f"{info['model']}_L00_{norm}"
        path, status = _write(run, out, name, force) if write else (None, "")
        rows.append(AuditRow("near_identity", "Proposition 2", name, run.verdict, run.evidence,
                             f"L = {inp['L']}; LayerNorms and biases left out", path, status))
    return rows
