"""Run the per-head certification over a model: in this process, in a pool of
local processes, or on a Dask cluster (``dask.distributed``), with the same
results byte for byte.

Work units are layers.  A task carries a :class:`ModelRef` -- the weights
path, its SHA-256 and the loader's options, never arrays -- and a layer
index; the process that runs it opens the checkpoint itself (memory-mapped,
once per process), checks the SHA-256 and reads that layer's tensor slices
(the names and row/column slices each head record lists in its ``source``).
Results (rows, witnesses, the deterministic :class:`~.cells.HeadSpectrum`)
come back to the caller, which writes certificates as they arrive, so an
interrupted run keeps every finished head and a rerun resumes from them
(:func:`reusable_result`).

On Dask a task that dies with its worker is retried (``retries``); the
scheduler reschedules the tasks of a lost worker.  ``--scheduler local:K``
starts a LocalCluster of K single-threaded worker processes;
``--scheduler tcp://HOST:PORT`` connects to a running scheduler whose
workers see the weights at the same path (shared filesystem) -- see the
README.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import uuid
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from ..errors import QKInputError
from ..models import load_model
from .budget import Budget, charpoly_cost
from .certify import FLOAT_KEYS, HeadOptions, certify_head, float_columns

#: certificates record the producer options that shaped them under this key of ``values``
OPTIONS_KEY = "producer_options"


@dataclass(frozen=True)
class ModelRef:
    """What a worker needs to open the model itself (picklable, no arrays)."""

    spec: str
    sha256: str
    n_heads: int | None = None
    n_kv_heads: int | None = None
    name: str | None = None
    pre_norm_qk: bool = False
    options: tuple = ()          # further loader options, sorted (key, value) pairs (Model.options)


@dataclass
class RunConfig:
    """Options of a run (picklable): per-head settings plus which head gets
    the exact cross-checks ("first" = the first selected head of the model)."""

    digits: int = 9
    exact_signature: str = "first"       # all / first / none
    direct: str = "first"                # all / first / none
    full_witness: bool = False
    cut: float = 1e-9
    budget: Budget = field(default_factory=Budget)
    biaffine_vectors: bool = False
    #: estimated seconds the optional exact cross-checks of the first head may take (charpoly of the
    #: 2n x 2n matrix, the direct N x N route): a one-head run at a survey shape stays within seconds
    check_seconds: float = 5.0
    #: run the authors' float64 pipeline beside every head (display columns float64_*); off by
    #: default: it costs as much as the authors' whole survey again
    compare_float: bool = False

    def head_options(self, first: bool) -> HeadOptions:
        """HeadOptions for one head (first = the first head of the model)."""
        return HeadOptions(
            digits=self.digits,
            charpoly=self.exact_signature == "all" or (self.exact_signature == "first" and first),
            direct=self.direct == "all" or (self.direct == "first" and first),
            compare_float=self.compare_float, full_witness=self.full_witness, cut=self.cut, budget=self.budget,
            witnesses=False,           # the format-1 witnesses: no certificate reads them
            check_budget=Budget(min(self.check_seconds, self.budget.seconds), self.budget.bytes, self.budget.force))

    def fingerprint(self, first: bool) -> str:
        """The options that shape a head's certificate, as one deterministic string."""
        o = self.head_options(first)
        return (f"digits={o.digits};charpoly={int(o.charpoly)};direct={int(o.direct)};"
                f"full_witness={int(o.full_witness)};budget_seconds={self.budget.seconds:g};"
                f"budget_bytes={self.budget.bytes:g};force_routes={int(self.budget.force)};"
                f"check_seconds={self.check_seconds:g}")


_MODELS: dict = {}


def register(ref: ModelRef, model) -> None:
    """Let this process reuse a model it has already opened for ``ref``."""
    _MODELS[ref] = model


def _open(ref: ModelRef):
    """The model of ``ref``, opened once per process (memory-mapped), its
    SHA-256 checked against the task's."""
    if ref in _MODELS:
        return _MODELS[ref]
    if len(_MODELS) >= 4:
        _MODELS.clear()
    model = load_model(ref.spec, ref.n_heads, ref.n_kv_heads, name=ref.name, pre_norm_qk=ref.pre_norm_qk,
                       **dict(ref.options))
    _MODELS[ref] = model
    if ref.sha256 and model.sha256 != ref.sha256:
        raise QKInputError(f"{ref.spec}: SHA-256 {model.sha256[:12]}… differs from the task's {ref.sha256[:12]}… "
                           "(the worker sees other weights at this path)")
    return model


def certify_layer(ref: ModelRef, layer: int, cfg: RunConfig, first: tuple[int, int] | None,
                  heads: tuple[int, ...] | None = None) -> list[dict]:
    """Certify the heads of one layer (all, or those listed), reading the
    layer from the weights file itself.  A Dask / process-pool task."""
    die = os.environ.get("QKVERIFY_TEST_DIE_ONCE")
    if die and os.path.exists(die):          # test hook: a worker that dies mid-run
        try:
            os.remove(die)
        except OSError:
            pass
        else:
            os._exit(1)
    model = _open(ref)
    out = []
    for rec in model.layer_heads(layer):
        if heads is not None and rec.head not in heads:
            continue
        is_first = first == (rec.layer, rec.head)
        res = certify_head(rec, cfg.head_options(is_first))
        # the loader's per-head columns (score, positional, layout, biaffine parts): tables only
        res["row"].update(rec.table_fields(cfg.biaffine_vectors))
        res["row"]["_options"] = cfg.fingerprint(is_first)
        res["source"] = rec.source
        out.append(res)
    return out


def reusable_result(path: Path, rec, cfg: RunConfig, first: bool) -> dict | None:
    """The result of a head from its certificate already on disk, when that
    certificate is for the same weights (SHA-256, tensor slices, layer,
    head) and the same producer options; the display-only float64 columns
    are recomputed (they are never in a certificate).  None otherwise."""
    try:
        cert = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    from .certificate import STATEMENTS, tensor_refs

    try:
        inp, disp, values = cert["input"], cert["display"], cert["display"]["row"]
        recorded = [{k: v for k, v in t.items() if k != "path_hint"} for t in inp.get("tensors") or []]
        same = (recorded == tensor_refs(rec.source) and disp.get("layer") == rec.layer
                and disp.get("head") == rec.head and values.get(OPTIONS_KEY) == cfg.fingerprint(first)
                and all(Path(str(path).replace(".json", f"{sfx}.json")).is_file() for _, sfx in STATEMENTS))
    except (KeyError, TypeError, AttributeError):
        return None
    if not same:
        return None
    try:  # the exact values are not in the display (issue 18): from the Definition 6 certificate's records
        from .certificate import exact_fields, with_exact

        prof = json.loads(Path(str(path).replace(".json", ".profile.json")).read_text(encoding="utf-8"))
        values = with_exact(values, exact_fields(values, prof))
    except (OSError, ValueError, KeyError, StopIteration, TypeError):
        return None
    row = {k: v for k, v in values.items() if k != OPTIONS_KEY}
    if cfg.compare_float:
        float_columns(rec, row, cfg.cut)
    row.update(rec.table_fields(cfg.biaffine_vectors))
    row["_options"] = values[OPTIONS_KEY]
    return {"row": row, "spectrum": None, "witnesses": cert["witnesses"], "values": dict(values),
            "verdict": cert["verdict"], "reason": "", "evidence": cert["evidence"],
            "seconds": 0.0, "stats": {"resumed": 1}, "source": rec.source, "resumed": True, "certificate": cert}


def _layer_jobs(model, layers: list[int] | None) -> list[int]:
    return list(range(model.n_layers)) if layers is None else list(layers)


def _plan(model, layers, cfg: RunConfig, existing: Callable[[int, int], Path | None],
          on_result: Callable[[dict], None],
          heads: tuple[int, ...] | None = None) -> tuple[list[tuple[int, tuple[int, ...]]], tuple[int, int] | None]:
    """Resume: heads whose certificate on disk is reusable are reported at
    once (their layer is read here only when such a certificate exists);
    returns the (layer, heads) still to certify and the first head.
    ``heads`` selects head indices within every selected layer (None: all)."""
    sel = _layer_jobs(model, layers)
    wanted = [h for h in range(model.n_heads) if heads is None or h in heads]
    first = (sel[0], wanted[0]) if sel and wanted else None
    todo = []
    for l in sel:
        paths = {h: existing(l, h) for h in wanted}
        need = [h for h, p in paths.items() if p is None]
        if len(need) < len(wanted):
            need = []
            for rec in model.layer_heads(l):
                if rec.head not in paths:
                    continue
                p = paths.get(rec.head)
                r = reusable_result(p, rec, cfg, first == (rec.layer, rec.head)) if p is not None else None
                if r is not None:
                    on_result(r)
                else:
                    need.append(rec.head)
        if need:
            todo.append((l, tuple(need)))
    return todo, first


#: below this estimated work a process pool costs more (spawning, imports) than it saves
POOL_MIN_SECONDS = 4.0


def estimated_seconds(model, todo: list, cfg: RunConfig) -> float:
    """A rough, deterministic estimate of the work left: per head about
    0.9 ns·N·(2n)² + 30 ms (fitted at the survey shapes), plus the exact
    routes of the first head that fit the budget."""
    N, n = model.d_model, model.d_head
    heads = sum(len(h) for _, h in todo)
    sec = heads * (0.9e-9 * N * (2 * n) ** 2 + 0.03)
    bits = 60                      # typical bit length of Z Zᵀ's entries for float32 weights
    for m, on in ((N, cfg.direct != "none"), (2 * n, cfg.exact_signature != "none")):
        if on:
            t, b = charpoly_cost(m, bits)
            if cfg.budget.force or (t <= cfg.budget.seconds and b <= cfg.budget.bytes):
                sec += t
    return sec


def run_local(ref: ModelRef, model, layers: list[int] | None, cfg: RunConfig, jobs: int,
              existing: Callable[[int, int], Path | None], on_result: Callable[[dict], None],
              heads: tuple[int, ...] | None = None) -> None:
    """Certify every selected head in this process (jobs = 1) or in a pool of
    ``jobs`` processes (one task per layer; the workers open the weights
    themselves).  ``existing(layer, head)`` names a certificate already on
    disk (or None); ``on_result`` receives each result as it is ready;
    ``heads`` selects head indices within each layer (None: all)."""
    todo, first = _plan(model, layers, cfg, existing, on_result, heads)
    if jobs <= 1 or estimated_seconds(model, todo, cfg) < POOL_MIN_SECONDS:
        for l, hs in todo:
            for res in certify_layer(ref, l, cfg, first, hs):
                on_result(res)
        return
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    ctx = mp.get_context("spawn")
    # one task per (layer, head group): small layers are split so every process has work
    tasks = []
    for l, hs in todo:
        per = max(1, -(-len(hs) // max(1, jobs // max(1, len(todo)))))
        tasks.extend((l, hs[i:i + per]) for i in range(0, len(hs), per))
    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as ex:
            futs = [ex.submit(certify_layer, ref, l, cfg, first, hs) for l, hs in tasks]
            for f in as_completed(futs):
                for res in f.result():
                    on_result(res)
    except BrokenProcessPool:
        raise QKInputError("a worker process died (out of memory?); rerun with fewer --jobs "
                           "(finished heads are kept and resumed)") from None


def start_client(address: str):
    """A dask.distributed Client for ``local:K`` (a LocalCluster of K
    single-threaded worker processes) or a scheduler address.  Returns
    (client, cluster or None).  QKInputError when dask is missing or the
    address is malformed / unreachable."""
    try:                                   # dask is imported only when a cluster is asked for (heavy)
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise QKInputError("--scheduler needs dask.distributed (pip install distributed)") from None
    if address.startswith("local:"):
        try:
            k = int(address.split(":", 1)[1])
        except ValueError:
            raise QKInputError(f"--scheduler {address}: expected local:K with K a number of workers") from None
        if k < 1:
            raise QKInputError("--scheduler local:K needs K ≥ 1")
        cluster = LocalCluster(n_workers=k, threads_per_worker=1, processes=True, dashboard_address=None,
                               env={"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
        return Client(cluster), cluster
    try:
        return Client(address, timeout="20s"), None
    except (OSError, TimeoutError, ValueError) as err:
        raise QKInputError(f"--scheduler {address}: cannot connect ({err.__class__.__name__}: {err})") from None


def run_dask(client, ref: ModelRef, model, layers: list[int] | None, cfg: RunConfig,
             existing: Callable[[int, int], Path | None], on_result: Callable[[dict], None],
             retries: int = 3, heads: tuple[int, ...] | None = None) -> None:
    """Certify every selected head on a Dask cluster: one task per layer
    (carrying the ModelRef, never arrays), retried when its worker dies."""
    from dask.distributed import as_completed           # only with a cluster (heavy)

    try:
        from distributed.scheduler import KilledWorker
    except ImportError:                       # pragma: no cover - older layouts
        KilledWorker = RuntimeError
    todo, first = _plan(model, layers, cfg, existing, on_result, heads)
    tag = uuid.uuid4().hex[:8]
    futs = [client.submit(certify_layer, ref, l, cfg, first, hs, key=f"qkverify-{tag}-L{l}",
                          retries=retries, pure=False) for l, hs in todo]
    try:
        for f in as_completed(futs):
            for res in f.result():
                on_result(res)
    except KilledWorker as err:
        raise QKInputError(f"Dask workers died on every try of a task ({err.__class__.__name__}; out of memory?); "
                           "finished heads are kept: a rerun resumes") from None


def strip_private(row: dict) -> dict:
    """The row without keys that start with an underscore (bookkeeping)."""
    return {k: v for k, v in row.items() if not k.startswith("_")}


def certificate_values(res: dict) -> dict:
    """What a certificate's ``values`` hold: the head's certified values
    (the row as :func:`certify_head` made it, without display-only float64
    columns or the loader's table fields), plus the producer options that
    shaped it."""
    vals = {k: v for k, v in res["values"].items() if k not in FLOAT_KEYS and not k.startswith("_")}
    vals[OPTIONS_KEY] = res["row"].get("_options", "")
    return vals


def iter_sorted(results: Iterable[dict]) -> list[dict]:
    """Results in (layer, head) order."""
    return sorted(results, key=lambda r: (r["row"]["layer"], r["row"]["head"]))
