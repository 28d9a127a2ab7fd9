"""Progress reporting that reads well both in papermill's log and for a person at a notebook.

Under the pipeline (``nbrun`` sets ``TQDM_DISABLE=1``) long loops print one plain line per epoch,
which papermill's ``log_output`` streams to the DVC console; interactively they show a tqdm bar.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Iterable, Iterator, TypeVar

T = TypeVar("T")


def interactive() -> bool:
    """True when a person watches (no ``TQDM_DISABLE`` set by the pipeline or CI)."""
    return not os.environ.get("TQDM_DISABLE") and not os.environ.get("CI")


def bar(iterable: Iterable[T], desc: str = "", total: int | None = None) -> Iterable[T]:
    """A tqdm bar interactively; the iterable itself otherwise."""
    if interactive():
        from tqdm.auto import tqdm

        return tqdm(iterable, desc=desc, total=total, leave=False)
    return iterable


class EpochLogger:
    """``log(epoch, **metrics)`` prints ``[desc] epoch 3/10  loss 0.1234  acc 0.8812  (4.1 s)``."""

    def __init__(self, desc: str, epochs: int, stream=None):
        self.desc, self.epochs, self.stream = desc, epochs, stream or sys.stdout
        self.t0 = time.perf_counter()

    def format(self, epoch: int, **metrics) -> str:
        width = len(str(self.epochs))
        parts = [f"[{self.desc}] epoch {epoch:>{width}}/{self.epochs}"]
        parts += [f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in metrics.items()]
        parts.append(f"({time.perf_counter() - self.t0:.1f} s)")
        return "  ".join(parts)

    def log(self, epoch: int, **metrics) -> str:
        line = self.format(epoch, **metrics)
        print(line, file=self.stream, flush=True)
        return line


def epochs(n: int, desc: str) -> Iterator[tuple[int, EpochLogger]]:
    """``for epoch, log in epochs(10, "byol"): ...; log.log(epoch, loss=...)``."""
    logger = EpochLogger(desc, n)
    for e in bar(range(1, n + 1), desc=desc, total=n):
        yield e, logger
