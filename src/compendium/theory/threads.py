"""Running the theory checks' tiny models on one thread."""

from __future__ import annotations

import contextlib

import torch


@contextlib.contextmanager
def single_thread():
    """One intra-op thread for the duration (also a decorator). The theory checks' models and distance
    matrices are tiny, so they are bound by per-operator overhead; on a busy 2-core machine a second
    thread only adds spin-waits (measured 2x to 20x slower)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(n)
