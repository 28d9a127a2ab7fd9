"""Whether an optimisation's logged curve has reached a plateau.

One test serves both the early stop of an outer loop (:func:`stop_at_plateau`, used by DD's, SLDD's and TDD's
outer loops) and the ledger's regime precondition (:func:`compendium.pipeline.claims.plateaued`), so a run stopped at its plateau
passes the precondition by construction.

Example:
    >>> trend_ratio([2.0 - min(i, 20) / 20 for i in range(60)]) <= 0.02
    True
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: the default tolerance: the remaining trend over one window, as a fraction of the total decrease
REL_TOL = 0.02


def trend_ratio(curve: Sequence[float], window: int | None = None) -> float | None:
    """The least-squares slope over the last two windows (default a fifth of the curve each), projected over
    one window, as a fraction of the curve's total decrease (first window's mean minus the last's). A line
    fitted through ``2 * window`` points is far less noisy than the difference of two window means, so a
    noisy curve that is still falling is not mistaken for a flat one. ``None`` for a curve shorter than two
    windows of 2 (nothing to see). Non-finite points are dropped."""
    c = np.asarray(list(curve), dtype=float)
    c = c[np.isfinite(c)]
    w = window or max(2, len(c) // 5)
    if len(c) < 2 * w or w < 2:
        return None
    tail = c[-2 * w:]
    slope = np.polyfit(np.arange(tail.size, dtype=float), tail, 1)[0]
    total = abs(c[:w].mean() - c[-w:].mean()) or 1e-12
    return float(abs(slope) * w / total)


def is_plateau(curve: Sequence[float], rel_tol: float = REL_TOL, window: int | None = None) -> bool:
    """``curve`` has plateaued: its :func:`trend_ratio` is known and at most ``rel_tol``."""
    r = trend_ratio(curve, window)
    return r is not None and r <= rel_tol


def stop_at_plateau(curve: Sequence[float], every: int, min_steps: int = 0, rel_tol: float = REL_TOL) -> bool:
    """The early stop of an outer loop: with ``every`` > 0, at every ``every``-th logged step from
    ``min_steps`` on, whether ``curve`` passes :func:`is_plateau` (the test the ledger's regime
    precondition applies, so a run stopped here passes it by construction). ``every`` = 0: never.

    >>> falling = [2.0 - min(i, 20) / 20 for i in range(60)]
    >>> stop_at_plateau(falling, 25), stop_at_plateau(falling, 20), stop_at_plateau(falling, 0)
    (False, True, False)
    """
    if every < 0 or min_steps < 0:
        raise ValueError(f"every and min_steps must be >= 0, got {every}, {min_steps}")
    n = len(curve)
    if every == 0 or n < max(min_steps, 1) or n % every:
        return False
    return is_plateau(curve, rel_tol)
