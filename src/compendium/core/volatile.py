"""What an identical rerun does not reproduce: timings, wall-clock dates, hosts, process ids.

A file that a downstream stage depends on (a checkpoint, its sidecar, a target file, a table another
stage reads) must hold none of these, so that a rerun with the same parameters writes it byte for byte
and DVC finds nothing stale downstream. A stage reports its timings under ``reports/timings/`` instead,
outputs no stage depends on: ``<stage>.json`` (:meth:`compendium.pipeline.report.Reporter.timings`) and,
for a table with volatile columns, the whole table as measured in ``<stage>/<name>.csv``
(:meth:`compendium.pipeline.report.Reporter.table` writes the table without them under ``tables/``).

Example::

    >>> volatile_keys({"epochs": 3, "train_seconds": 4.2, "info": {"host": "a"}})
    ['train_seconds', 'info.host']
    >>> volatile_columns(["ipc", "synthesis s", "peak MB", "MC s.e.", "paper minutes", "images/s"])
    ['synthesis s', 'peak MB', 'images/s']
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
        "minutes",
        "hours",
        "peak",
        "rss",
    }
)

#: The only stages that read other stages' timings (``reports/timings/<upstream>``), because their product
#: is itself a table of costs: dd_gtn's NAS time fractions (dd_nas's ground-truth CPU seconds) and ssdd_eval's
#: Table 13 (the synthesis seconds of the SSDD / KRR-ST sets and of the DSA / DM sets). A rerun of an upstream
#: stage makes them stale, as it should: their costs change with it.
TIMING_READERS = {"dd_gtn": ("dd_nas",), "ssdd_eval": ("ssdd_distill", "dd_matching")}

#: A column whose unit is seconds written ``s``: ``synthesis s``, ``synthesis s (ours)``, ``images/s``
#: (not ``MC s.e.``).
_SECONDS_UNIT = re.compile(r"[\s/]s($|\s*\()")


def volatile_keys(record, prefix: str = "") -> list[str]:
    """The keys of ``record`` (nested dicts included, as ``outer.inner``) whose words include one of
    :data:`VOLATILE_WORDS`: values an identical rerun would not reproduce."""
    found = []
    for k, v in record.items() if isinstance(record, dict) else ():
        name = f"{prefix}{k}"
        if VOLATILE_WORDS & _words(k):
            found.append(name)
        found += volatile_keys(v, f"{name}.")
    return found


def _words(name) -> set[str]:
    return set(re.split(r"[^a-z0-9]+", str(name).lower()))


def volatile_column(name) -> bool:
    """Whether a table column holds values an identical rerun would not reproduce: its words include one
    of :data:`VOLATILE_WORDS` (memory peaks included) or its unit is ``s``. A column labelled as the
    paper's (``paper minutes``) is a constant, not a measurement."""
    words = _words(name)
    return "paper" not in words and bool(VOLATILE_WORDS & words or _SECONDS_UNIT.search(str(name)))


def volatile_columns(columns) -> list[str]:
    """The columns of a table (in order) that :func:`volatile_column` marks."""
    return [c for c in columns if volatile_column(c)]
