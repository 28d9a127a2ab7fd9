"""What an identical rerun does not reproduce: timings, wall-clock dates, hosts, process ids.

A file that a downstream stage depends on (a checkpoint, its sidecar, a target file, a table another
stage reads) must hold none of these, so that a rerun with the same parameters writes it byte for byte
and DVC finds nothing stale downstream. A stage reports its timings in ``reports/timings/<stage>.json``
instead (:meth:`compendium.pipeline.report.Report.timings`), an output no stage depends on.

Example::

    >>> volatile_keys({"epochs": 3, "train_seconds": 4.2, "info": {"host": "a"}})
    ['train_seconds', 'info.host']
"""

from __future__ import annotations

import re

#: Words that mark a key as something that differs between two identical runs (a key is split into
#: words at every non-alphanumeric character: ``train_seconds`` -> ``train``, ``seconds``).
VOLATILE_WORDS = frozenset(
    {
        "seconds",
        "secs",
        "time",
        "times",
        "timing",
        "timings",
        "timestamp",
        "date",
        "datetime",
        "elapsed",
        "duration",
        "wall",
        "host",
        "hostname",
        "pid",
        "uuid",
    }
)


def volatile_keys(record, prefix: str = "") -> list[str]:
    """The keys of ``record`` (nested dicts included, as ``outer.inner``) whose words include one of
    :data:`VOLATILE_WORDS`: values an identical rerun would not reproduce."""
    found = []
    for k, v in record.items() if isinstance(record, dict) else ():
        name = f"{prefix}{k}"
        if VOLATILE_WORDS & set(re.split(r"[^a-z0-9]+", str(k).lower())):
            found.append(name)
        found += volatile_keys(v, f"{name}.")
    return found
