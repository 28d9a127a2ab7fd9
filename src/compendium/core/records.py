"""What a stage records for a later stage to judge: tables written exactly, and the settings it ran.

A heavy stage runs and evaluates; a light stage reads its tables back and judges. So that the verdict is the
one the heavy stage's objects would give, the tables a judge reads are written with :data:`EXACT` (every
float as its shortest exact repr), and the settings the judge needs (the arms, budgets, priors the stage ran)
go to a ``settings`` table of JSON values (:func:`settings_table`), read back by :func:`read_settings`.

Example::

    >>> t = settings_table(budgets=[0.1, 0.5], prior="rand")
    >>> read_settings(t.astype(str))
    {'budgets': [0.1, 0.5], 'prior': 'rand'}
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np
import pandas as pd

#: The ``float_format`` of the tables a judge reads back (:meth:`compendium.pipeline.report.Reporter.table`):
#: None writes every float as its shortest exact repr, so the verdicts read the values the stage computed
#: (the reading tables' default, 4 significant digits, would round accuracies such as 457/600).
EXACT = None


def _plain(v):
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    return v


def settings_table(**values) -> pd.DataFrame:
    """A stage's settings that its judge needs, one row per name with the value as JSON, so that lists,
    mappings and numbers read back exactly (:func:`read_settings`)."""
    return pd.DataFrame(
        [{"name": k, "value": json.dumps(_plain(v))} for k, v in values.items()], columns=["name", "value"]
    )


def read_settings(table: pd.DataFrame) -> dict:
    """The values :func:`settings_table` wrote (read the CSV with ``dtype=str``)."""
    return {str(n): json.loads(v) for n, v in zip(table["name"], table["value"])}
