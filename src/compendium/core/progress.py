"""Progress lines of long work (epochs, arms, syntheses): on the console during ``dvc repro``, never
in the rendered pages.

A stage runner (:mod:`compendium.pipeline.nbrun`) names a file in ``COMPENDIUM_PROGRESS`` for the
run; :func:`say` appends each line to it with one ``write`` on a descriptor opened with
``O_APPEND``, so the lines of the notebook's kernel and of its worker processes (they inherit the
variable) interleave whole, and the runner streams the file to its console as the lines arrive
(:class:`Follower`). Without the variable (a notebook run by hand, a test) a line is printed, as
before.

Example::

    rate = Rate(total=epochs)
    for epoch in range(epochs):
        ...
        say(f"[byol] epoch {epoch + 1}/{epochs}  loss {loss:.3f}  {rate.update(epoch + 1, n_images)}")
    # [byol] epoch 3/10  loss 1.234  4,410 img/s  40.8 s  ETA 1:35
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

PROGRESS_ENV = "COMPENDIUM_PROGRESS"


def say(message: str) -> None:
    """One progress line: to the run's progress file when a stage runner set one, else printed."""
    target = os.environ.get(PROGRESS_ENV, "").strip()
    if not target:
        print(message, flush=True)
        return
    data = (message.rstrip("\n").replace("\n", " | ") + "\n").encode()
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError:  # the runner's folder is gone (it was stopped): the line is only printed
        print(message, flush=True)
        return
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _clock(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Rate:
    """Throughput and the time left of a loop of ``total`` units (epochs, steps, arms), measured from
    its construction (or ``start``, units already done before it: a resumed run)."""

    def __init__(self, total: int, start: int = 0):
        self.total, self.start, self.t0 = int(total), int(start), time.perf_counter()

    def update(self, done: int, items: int = 0, unit: str = "img") -> str:
        """``done`` units finished so far (``start`` included); ``items`` processed in the last unit
        (images, for a throughput): "1,234 img/s  12.3 s  ETA 1:05"."""
        elapsed = time.perf_counter() - self.t0
        ran = max(done - self.start, 0)
        parts = []
        if items and ran:
            parts.append(f"{items * ran / max(elapsed, 1e-9):,.0f} {unit}/s")
        parts.append(f"{elapsed:.1f} s")
        if ran and done < self.total:
            parts.append(f"ETA {_clock(elapsed / ran * (self.total - done))}")
        return "  ".join(parts)


class Follower:
    """Streams a progress file to ``out`` (the console) from a thread while the stage runs, each line
    prefixed; stop() prints whatever is left. Use as a context manager."""

    def __init__(self, path: str | os.PathLike, prefix: str = "", out: TextIO | None = None, poll: float = 0.2):
        self.path, self.prefix, self.out, self.poll = Path(path), prefix, out, poll
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"progress {self.path.name}", daemon=True)
        self._pos, self._rest = 0, b""

    def _drain(self) -> None:
        if not self.path.is_file():
            return
        with open(self.path, "rb") as f:
            f.seek(self._pos)
            chunk = f.read()
            self._pos = f.tell()
        if not chunk:
            return
        *lines, self._rest = (self._rest + chunk).split(b"\n")
        out = self.out or sys.stdout
        for line in lines:
            out.write(f"{self.prefix}{line.decode(errors='replace')}\n")
        out.flush()

    def _run(self) -> None:
        while not self._stop.wait(self.poll):
            self._drain()

    def __enter__(self) -> "Follower":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._drain()
        if self._rest:
            (self.out or sys.stdout).write(f"{self.prefix}{self._rest.decode(errors='replace')}\n")
            self._rest = b""
