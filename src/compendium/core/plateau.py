"""Whether an optimisation's logged curve has reached a plateau.

One test serves both the early stop of an outer loop (:func:`stop_at_plateau`, used by DD's, SLDD's, TDD's
and GTN's outer loops) and the ledger's regime precondition (:func:`compendium.verdicts.claims.plateaued`),
so a run stopped at its plateau passes the precondition by construction.

The test is an equivalence test on the remaining trend (two one-sided tests, Schuirmann 1987): a
least-squares line through the last two windows gives the trend over one window as a fraction of the
curve's total decrease, with its standard error; the curve has plateaued when the 90% interval of that
trend lies within ``±REL_TOL``. A noisy or oscillating curve whose point estimate happens to be near zero
does not pass (an early stop tested every few steps would otherwise fire on the first lucky dip), while
a smooth curve with a small remaining trend does.

Example:
    >>> is_plateau([2.0 - min(i, 20) / 20 for i in range(60)])
    True
    >>> is_plateau([1.0 - 0.01 * i for i in range(60)])   # still falling
    False
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: the equivalence margin: the remaining trend over one window, as a fraction of the total decrease
REL_TOL = 0.05
#: the one-sided normal quantile of the two one-sided tests at 5% each (a 90% interval)
Z = 1.645


def trend_interval(curve: Sequence[float], window: int | None = None) -> tuple[float, float] | None:
    """The least-squares slope over the last two windows (default a fifth of the curve each), projected over
    one window, as a signed fraction of the curve's total decrease (first window's mean minus the last's;
    negative: still falling), and its standard error (from the line's residuals). ``None`` for a curve
    shorter than two windows of 3 (nothing to see). Non-finite points are dropped."""
    c = np.asarray(list(curve), dtype=float)
    c = c[np.isfinite(c)]
    w = window or max(3, len(c) // 5)
    if len(c) < 2 * w or w < 3:
        return None
    tail = c[-2 * w :]
    t = np.arange(tail.size, dtype=float)
    slope, icpt = np.polyfit(t, tail, 1)
    resid = tail - (icpt + slope * t)
    se = np.sqrt((resid**2).sum() / (tail.size - 2) / ((t - t.mean()) ** 2).sum())
    total = abs(c[:w].mean() - c[-w:].mean()) or 1e-12
    return float(slope * w / total), float(se * w / total)


def trend_ratio(curve: Sequence[float], window: int | None = None) -> float | None:
    """The size of the remaining trend (:func:`trend_interval`'s point estimate, absolute); ``None`` as there."""
    ti = trend_interval(curve, window)
    return None if ti is None else abs(ti[0])


def is_plateau(curve: Sequence[float], rel_tol: float = REL_TOL, window: int | None = None) -> bool:
    """``curve`` has plateaued: its :func:`trend_interval` is known and its 90% interval lies within
    ``±rel_tol`` (``|trend| + Z * se <= rel_tol``)."""
    ti = trend_interval(curve, window)
    return ti is not None and abs(ti[0]) + Z * ti[1] <= rel_tol


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
