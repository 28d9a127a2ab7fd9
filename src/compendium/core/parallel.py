"""One worker pool for independent, seeded jobs: spawned single-threaded processes (two of them use both
cores of a small CPU better than one two-threaded process for these small networks), results in the order
given, the costliest started first.

Example::

    from compendium.core.parallel import run_calls
    rows = run_calls([(synthesize, (images, labels), {"seed": s}) for s in seeds], workers=2)

Each call is ``(function, args, kwargs)`` with a module-level function (spawned workers import it by
reference), so a typo is an error here, not a failing worker.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Sequence

import torch

Call = tuple[Callable[..., Any], tuple, dict]


def _worker_init(initializer: Callable | None, initargs: tuple) -> None:
    torch.set_num_threads(1)
    if initializer is not None:
        initializer(*initargs)


def run_calls(calls: Sequence[Call], workers: int = 2, costs: Sequence[float] | None = None,
              initializer: Callable | None = None, initargs: tuple = ()) -> list:
    """``fn(*args, **kwargs)`` for each call, in single-threaded spawned workers, results in the order of
    ``calls``. ``costs`` (bigger first) orders the submissions only. ``initializer(*initargs)`` runs once in
    each worker (after it is set to one thread), e.g. to hold a test set every job reads. ``workers`` 0:
    the calls run here, one after the other, without the initializer (the choice for a GPU)."""
    if workers < 0:
        raise ValueError(f"workers must be >= 0, got {workers}")
    for i, call in enumerate(calls):
        if len(call) != 3 or not callable(call[0]):
            raise ValueError(f"call {i} is not (function, args, kwargs): {call!r:.200}")
    if costs is not None and len(costs) != len(calls):
        raise ValueError(f"{len(costs)} costs for {len(calls)} calls")
    if workers == 0:
        return [fn(*args, **kwargs) for fn, args, kwargs in calls]
    order = sorted(range(len(calls)), key=lambda i: -costs[i]) if costs is not None else range(len(calls))
    out: list = [None] * len(calls)
    ctx = torch.multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_worker_init, initargs=(initializer, initargs)) as ex:
        futures = {i: ex.submit(calls[i][0], *calls[i][1], **calls[i][2]) for i in order}
        for i, f in futures.items():
            out[i] = f.result()
    return out
