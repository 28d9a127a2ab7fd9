"""Small statistics shared by the wings: the paired t interval of a regime study or a stage's table.

Example:
    >>> m, lo, hi = t_interval([1.0, 2.0, 3.0])
    >>> round(m, 3), round(lo, 3), round(hi, 3)
    (2.0, -0.484, 4.484)
"""

from __future__ import annotations

import math

import pandas as pd
from scipy import stats


def t_interval(values, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and two-sided ``level`` t interval of paired differences (nan bounds for fewer than 2)."""
    x = pd.Series(list(values), dtype=float).dropna()
    m = float(x.mean()) if len(x) else math.nan
    if len(x) < 2:
        return m, math.nan, math.nan
    h = float(stats.t.ppf(0.5 + level / 2, len(x) - 1)) * float(x.std(ddof=1)) / math.sqrt(len(x))
    return m, m - h, m + h
