"""Each stage's measured time: papermill's duration of its executed notebook, with the parameters it ran with.

``reports/stage_minutes.json`` keeps, per notebook stage, the minutes and the (papermill-injected) parameters
of the last executed notebook seen. ``python -m compendium.pipeline.timings`` folds the executed notebooks
under ``reports/notebooks/`` into it, and ``make repro`` runs it after ``dvc repro``.

The record lives in git, outside the DVC graph, on purpose. The executed notebooks are DVC-cached outputs:
a clone without the cache has none of them, and a rerun of a few stages makes only those. A summary that
read the notebooks would need every stage rerun to refresh one; this record keeps every other stage's last
measured time instead, so the summary, the ledger and the README follow a partial rerun.

Example::

    from compendium.pipeline import timings
    timings.update()                        # after `dvc repro`: fold in the notebooks present
    sum(timings.minutes().values())         # the pipeline's measured minutes
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from compendium.core import paths
from compendium.pipeline import nbclean

FILE = "stage_minutes.json"


def from_notebooks(notebooks: Path) -> dict[str, dict]:
    """``{stage: {"minutes", "parameters"}}`` of the executed notebooks in ``notebooks`` that record a
    papermill duration."""
    out = {}
    for nb in sorted(Path(notebooks).glob("*.ipynb")):
        meta = json.loads(nb.read_text()).get("metadata", {}).get("papermill", {})
        if meta.get("duration") is not None:
            out[nb.stem] = {
                "minutes": round(float(meta["duration"]) / 60, 2),
                "parameters": dict(meta.get("parameters") or {}),
            }
    return out


def read(reports: Path | None = None) -> dict[str, dict]:
    """The record (``{}`` when there is none yet)."""
    f = (reports or paths.REPORTS) / FILE
    return json.loads(f.read_text()) if f.is_file() else {}


def minutes(reports: Path | None = None) -> dict[str, float]:
    """``{stage: minutes}`` from the record."""
    return {st: float(r["minutes"]) for st, r in read(reports).items()}


def update(reports: Path | None = None, stages: list[str] | None = None) -> dict[str, dict]:
    """Fold the executed notebooks under ``reports/notebooks/`` into the record and write it. ``stages``: the
    pipeline's notebook stages; an entry of any other (a stage since removed) is dropped."""
    reports = reports or paths.REPORTS
    rec = {**read(reports), **from_notebooks(reports / paths.EXECUTED)}
    if stages is not None:
        rec = {st: r for st, r in rec.items() if st in set(stages)}
    reports.mkdir(parents=True, exist_ok=True)
    (reports / FILE).write_text(json.dumps(dict(sorted(rec.items())), indent=1, sort_keys=True, default=str) + "\n")
    return rec


def main(argv: list[str] | None = None) -> int:
    rec = update(stages=nbclean.pipeline_order())
    total = sum(r["minutes"] for r in rec.values())
    print(f"[timings] {len(rec)} stages, {total:.1f} min of notebooks -> {paths.REPORTS / FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
