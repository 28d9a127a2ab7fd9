"""One worker pool for independent, seeded jobs: spawned single-threaded processes (two of them use both
cores of a small CPU better than one two-threaded process for these small networks), results in the order
given, the costliest started first.

Example::

    from compendium.core.parallel import run_calls
    rows = run_calls([(synthesize, (images, labels), {"seed": s}) for s in seeds], workers=2)

Each call is ``(function, args, kwargs)`` with a module-level function (spawned workers import it by
reference), so a typo is an error here, not a failing worker.

With a resume folder (``resume_dir``, or the one a pipeline stage's runner names) every completed call's result is
stored there (:mod:`compendium.core.resume`, which
says what counts as the same call), and a call whose result is stored is not run again: an interrupted
stage, run again, computes only the calls it had not finished, to the same results.

Where the calls run is chosen per run, without changing any stage, by ``COMPENDIUM_BACKEND``
(:mod:`compendium.core.backends`): ``local`` (the default: the pool above), ``gpus`` (one worker per visible GPU
on this machine) or ``submitit`` (one job per call on a SLURM cluster, or in local subprocesses). The calls keep
their arguments, seeds and resume records and the results their order, so a stage's tables are the same on every
backend.
"""

from __future__ import annotations

import os
import pickle
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Callable, Sequence

import torch

from compendium.core import backends, resume

Call = tuple[Callable[..., Any], tuple, dict]


def _worker_init(initializer: Callable | None, initargs: tuple) -> None:
    torch.set_num_threads(1)
    if initializer is not None:
        initializer(*initargs)


_NO_CONTEXT = object()


def run_calls(
    calls: Sequence[Call],
    workers: int = 2,
    costs: Sequence[float] | None = None,
    initializer: Callable | None = None,
    initargs: tuple = (),
    resume_dir: str | os.PathLike | None = None,
    resume_context: Any = _NO_CONTEXT,
) -> list:
    """``fn(*args, **kwargs)`` for each call, in single-threaded spawned workers, results in the order of
    ``calls``. ``costs`` (bigger first) orders the submissions only. ``initializer(*initargs)`` runs once in
    each worker (after it is set to one thread), e.g. to hold a test set every job reads. ``workers`` 0:
    the calls run here, one after the other, without the initializer (the choice for a GPU).

    Under a backend other than ``local`` (``COMPENDIUM_BACKEND``) every call runs there, ``workers`` 0
    included, each with the initializer: a caller that prepares its calls here for ``workers`` 0 passes the
    initializer too (the local backend ignores it then).

    ``resume_dir``: the folder of stored results (:mod:`compendium.core.resume`); by default the one
    ``COMPENDIUM_RESUME_DIR`` names (a pipeline stage's, set by its runner), else none (off). A
    stored call is returned from there, every other call's result is stored as it completes (a failed
    call stores nothing; with workers, the others still finish and are stored before the first failure,
    in the order of ``calls``, is raised). Each key counts ``resume_context`` besides the call: by
    default ``(initializer, initargs)``; pass what the initializer sets up instead where its arguments
    differ with ``workers`` (e.g. a thread count). Calls whose arguments do not pickle run without resume,
    with a warning."""
    if workers < 0:
        raise ValueError(f"workers must be >= 0, got {workers}")
    for i, call in enumerate(calls):
        if len(call) != 3 or not callable(call[0]):
            raise ValueError(f"call {i} is not (function, args, kwargs): {call!r:.200}")
    if costs is not None and len(costs) != len(calls):
        raise ValueError(f"{len(costs)} costs for {len(calls)} calls")
    backend = backends.chosen()  # a bad name is an error before any call runs
    if resume_dir is None:
        resume_dir = resume.env_dir()
    if resume_dir is not None:
        context = (initializer, initargs) if resume_context is _NO_CONTEXT else resume_context
        try:
            shared = resume.digest(context)  # once: a context is often large (a data set)
            keys = [resume.call_key(fn, args, kwargs, shared) for fn, args, kwargs in calls]
        except (ValueError, pickle.PicklingError, TypeError, AttributeError) as e:
            warnings.warn(f"these {len(calls)} calls run without resume: {e}", RuntimeWarning, stacklevel=2)
        else:
            return _run_resumable(calls, keys, workers, costs, initializer, initargs, resume_dir, backend)
    if backend == "local" and workers == 0:
        return [fn(*args, **kwargs) for fn, args, kwargs in calls]
    order = sorted(range(len(calls)), key=lambda i: -costs[i]) if costs is not None else range(len(calls))
    out: list = [None] * len(calls)
    with _pool(backend, workers, initializer, initargs) as ex:
        futures = {i: ex.submit(calls[i][0], *calls[i][1], **calls[i][2]) for i in order}
        backends.flush(ex)
        for i, f in futures.items():
            out[i] = f.result()
    return out


def _pool(backend: str, workers: int, initializer: Callable | None, initargs: tuple):
    """An executor whose ``submit`` returns :class:`concurrent.futures.Future`: the local pool of ``workers``
    single-threaded processes, or the chosen backend's (:func:`compendium.core.backends.executor`)."""
    if backend == "local":
        ctx = torch.multiprocessing.get_context("spawn")
        return ProcessPoolExecutor(workers, mp_context=ctx, initializer=_worker_init, initargs=(initializer, initargs))
    return backends.executor(backend, _worker_init, (initializer, initargs))


def _run_resumable(
    calls: Sequence[Call],
    keys: list[str],
    workers: int,
    costs: Sequence[float] | None,
    initializer: Callable | None,
    initargs: tuple,
    folder: str | os.PathLike,
    backend: str = "local",
) -> list:
    out: list = [resume.load(folder, call[0], k) for call, k in zip(calls, keys)]
    todo = [i for i, r in enumerate(out) if r is resume.MISSING]
    if backend == "local" and workers == 0:
        for i in todo:
            fn, args, kwargs = calls[i]
            out[i] = fn(*args, **kwargs)
            _keep(folder, fn, keys[i], out[i])
        return out
    if costs is not None:
        todo.sort(key=lambda i: -costs[i])
    failed: dict[int, BaseException] = {}
    if todo:
        with _pool(backend, workers, initializer, initargs) as ex:
            futures = {ex.submit(calls[i][0], *calls[i][1], **calls[i][2]): i for i in todo}
            backends.flush(ex)
            for f in as_completed(futures):
                i = futures[f]
                e = f.exception()
                if e is not None:
                    failed[i] = e
                    continue
                out[i] = f.result()
                _keep(folder, calls[i][0], keys[i], out[i])
    if failed:
        raise failed[min(failed)]
    return out


def _keep(folder: str | os.PathLike, fn: Callable, key: str, result: Any) -> None:
    """Store a completed call's result; one that cannot be stored (it does not pickle, the disk is
    full) is only not resumable: a warning, and the run goes on."""
    try:
        resume.store(folder, fn, key, result)
    except Exception as e:  # noqa: BLE001 - resume is an optimisation; the result is in hand
        warnings.warn(
            f"the result of {resume.function_name(fn)} is not kept for resume ({type(e).__name__}: {str(e):.200})",
            RuntimeWarning,
            stacklevel=2,
        )
