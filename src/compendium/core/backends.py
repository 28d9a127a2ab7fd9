"""Where :func:`compendium.core.parallel.run_calls` runs a stage's independent calls, chosen per run by the
environment (no stage or parameter changes, so DVC sees the same stage):

``COMPENDIUM_BACKEND=local`` (default)
    the local pool of spawned single-threaded processes (``workers`` of them; 0 runs the calls here).
``COMPENDIUM_BACKEND=gpus``
    one spawned worker per GPU of this machine, each seeing only its own (``CUDA_VISIBLE_DEVICES`` set in the
    worker before CUDA starts), so a stage whose calls each use "the" GPU (``device: auto`` or ``cuda``) keeps
    every GPU busy. ``COMPENDIUM_GPUS=0,2`` chooses the GPUs (default: every visible one).
``COMPENDIUM_BACKEND=submitit``
    one job per call through `submitit <https://github.com/facebookincubator/submitit>`_: a SLURM job array on
    a cluster, local subprocesses elsewhere. ``COMPENDIUM_SUBMITIT`` holds the executor's settings as JSON:
    ``folder`` (its logs and pickles; default ``build/submitit``), ``cluster`` (``slurm``, ``local`` or
    ``debug``; default: SLURM where ``sbatch`` exists, else local) and any of submitit's parameters, e.g.
    ``{"slurm_partition": "gpu", "gpus_per_node": 1, "timeout_min": 240, "slurm_array_parallelism": 16}``.

Why submitit for clusters: these calls are coarse (minutes to hours each), independent and seeded, and the
clusters ML researchers share run SLURM. submitit submits plain Python calls as SLURM jobs with no scheduler
service to run (Ray and Dask need one, and their strength, many small tasks sharing data in memory, is not
what these calls need); its local executor runs the same pickled call in a subprocess, so the CPU tests
exercise the cluster path.

Every backend runs the same ``(function, args, kwargs)`` calls, each with the pool's initializer in its
process and one CPU thread, so results do not depend on the backend (the tests compare a stage's rows across
all three). Results come back in the order of the calls and resume records are written by the caller as each
call completes, as with the local pool.

Example (a stage on every GPU of a machine, then on a cluster)::

    COMPENDIUM_BACKEND=gpus dvc repro -s rela_budget
    COMPENDIUM_BACKEND=submitit COMPENDIUM_SUBMITIT='{"slurm_partition": "gpu", "gpus_per_node": 1}' \\
        dvc repro -s rela_budget
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import sys
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any, Callable

import submitit
import torch

BACKEND_ENV = "COMPENDIUM_BACKEND"
GPUS_ENV = "COMPENDIUM_GPUS"
SUBMITIT_ENV = "COMPENDIUM_SUBMITIT"
NAMES = ("local", "gpus", "submitit")


def chosen() -> str:
    """The backend ``COMPENDIUM_BACKEND`` names (default ``local``); an unknown name is an error naming the
    variable and the choices."""
    name = os.environ.get(BACKEND_ENV, "").strip() or "local"
    if name not in NAMES:
        raise ValueError(f"{BACKEND_ENV}={name!r}: choose one of {', '.join(NAMES)} (or unset it for local)")
    return name


def gpu_ids() -> list[str]:
    """The GPUs of the ``gpus`` backend, as ``CUDA_VISIBLE_DEVICES`` entries: ``COMPENDIUM_GPUS`` where set (ids as
    this process sees them), else every visible GPU. A parent restricted by ``CUDA_VISIBLE_DEVICES`` keeps its
    restriction (id 0 is the first GPU it sees)."""
    spec = os.environ.get(GPUS_ENV, "").strip()
    if spec:
        try:
            ids = [int(v) for v in spec.split(",") if v.strip()]
        except ValueError:
            raise ValueError(f"{GPUS_ENV}={spec!r}: give GPU ids separated by commas, e.g. 0,1") from None
    else:
        ids = list(range(torch.cuda.device_count()))
    if not ids:
        raise RuntimeError(
            f"{BACKEND_ENV}=gpus, but no GPU is visible; set {GPUS_ENV} (e.g. 0,1) or use the local backend"
        )
    if len(set(ids)) != len(ids) or min(ids) < 0:
        raise ValueError(f"{GPUS_ENV}={spec!r}: ids must be distinct and >= 0")
    parent = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    if parent:
        if max(ids) >= len(parent):
            raise ValueError(f"{GPUS_ENV}={spec!r}: CUDA_VISIBLE_DEVICES={','.join(parent)} shows {len(parent)} GPUs")
        return [parent[i] for i in ids]
    return [str(i) for i in ids]


def _gpu_worker_init(devices, init: Callable, initargs: tuple) -> None:
    os.environ["CUDA_VISIBLE_DEVICES"] = devices.get()  # before anything in this worker starts CUDA
    init(*initargs)


def submitit_settings() -> dict:
    """``COMPENDIUM_SUBMITIT`` as a dict (``folder`` and ``cluster`` filled in); bad JSON is an error naming it."""
    raw = os.environ.get(SUBMITIT_ENV, "").strip()
    try:
        settings = json.loads(raw) if raw else {}
    except json.JSONDecodeError as e:
        raise ValueError(f"{SUBMITIT_ENV} is not JSON ({e}): {raw!r:.200}") from None
    if not isinstance(settings, dict):
        raise ValueError(f"{SUBMITIT_ENV} must be a JSON object, got {raw!r:.200}")
    settings.setdefault("folder", os.path.join("build", "submitit"))
    settings.setdefault("cluster", "slurm" if shutil.which("sbatch") else "local")
    return settings


def _in_job(sys_path: list[str], payload: bytes) -> Any:
    """One call in its submitit job: the submitting process's import path first (so a call defined where only it
    imports from, a test module say, is found, as spawned pool workers find it), then the pool's initializer, as a
    pool worker would run it, then the call."""
    sys.path[:0] = [p for p in sys_path if p not in sys.path]
    init, initargs, fn, args, kwargs = pickle.loads(payload)
    init(*initargs)
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - carried back whole, raised where the result is asked for
        return _Raised(e)


class _Raised:
    """A call's own exception, brought back from its job (submitit would wrap it in its FailedJobError)."""

    def __init__(self, error: Exception):
        self.error = error


class SubmititPool:
    """An executor over submitit: ``submit`` returns a :class:`Future`; the calls submitted since the last
    :meth:`flush` go out as one job array there (or at exit); jobs not finished when the block exits on an error
    are cancelled."""

    def __init__(self, init: Callable, initargs: tuple, settings: dict | None = None):
        s = dict(settings if settings is not None else submitit_settings())
        folder, cluster = s.pop("folder"), s.pop("cluster")
        self._ex = submitit.AutoExecutor(folder=folder, cluster=cluster)
        if cluster == "local":  # submitit's local jobs run `python -m submitit...` with this interpreter
            self._ex._executor.python = sys.executable  # noqa: SLF001
        if s:
            self._ex.update_parameters(**s)
        self._init, self._initargs = init, initargs
        self._pending: list[tuple[Future, tuple]] = []
        self._jobs: list = []
        self._waiters = ThreadPoolExecutor(max_workers=32)

    def submit(self, fn: Callable, *args, **kwargs) -> Future:
        f: Future = Future()
        payload = pickle.dumps((self._init, self._initargs, fn, args, kwargs))  # fails here if it cannot travel
        self._pending.append((f, (list(sys.path), payload)))
        return f

    def flush(self) -> None:
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        with self._ex.batch():
            jobs = [self._ex.submit(_in_job, *call) for _, call in pending]
        self._jobs.extend(jobs)
        for (f, _), job in zip(pending, jobs):
            self._waiters.submit(_relay, job, f)

    def __enter__(self) -> SubmititPool:
        return self

    def __exit__(self, kind, *_) -> None:
        self.flush()
        if kind is not None:
            for job in self._jobs:
                if not job.done():
                    job.cancel(check=False)
        self._waiters.shutdown(wait=kind is None)


def _relay(job, f: Future) -> None:
    try:
        r = job.result()
        f.set_exception(r.error) if isinstance(r, _Raised) else f.set_result(r)
    except BaseException as e:  # noqa: BLE001 - the call's own error, raised where the result is asked for
        f.set_exception(e)


def executor(name: str, init: Callable, initargs: tuple):
    """The executor of backend ``name`` other than ``local`` (whose pool :mod:`compendium.core.parallel` makes):
    every worker or job runs ``init(*initargs)`` first. Call :func:`flush` after submitting."""
    if name == "gpus":
        ids = gpu_ids()
        ctx = torch.multiprocessing.get_context("spawn")
        devices = ctx.Queue()
        for i in ids:
            devices.put(i)
        return ProcessPoolExecutor(
            len(ids), mp_context=ctx, initializer=_gpu_worker_init, initargs=(devices, init, initargs)
        )
    if name == "submitit":
        return SubmititPool(init, initargs)
    raise ValueError(f"no executor for backend {name!r}; known: {', '.join(NAMES)}")


def flush(ex) -> None:
    """Send what ``ex`` holds back (a :class:`SubmititPool`'s job array); nothing for a process pool."""
    if isinstance(ex, SubmititPool):
        ex.flush()
