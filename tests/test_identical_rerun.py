"""An identical rerun leaves DVC as it was, asked of DVC itself in a copy of the repository: ``rela_budget`` and
``dd_labels`` (with ``priors`` upstream) run at ``scale: smoke``, run again from scratch (``-f``, resume records
removed), and every product another stage may read (tables, claims, figures, checkpoints) keeps its hash; only the
timings, the metrics (the stage's numbers with its run times, for ``dvc metrics diff``), the executed notebook and its
page may differ, no stage reads those, and no stage is stale that was not before."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
import yaml

from compendium.core import paths, volatile
from test_extending import copy_repository

STAGES = ("rela_budget", "dd_labels")
#: What differs between two identical runs, and no stage reads (dvc.yaml: no stage depends on these).
VOLATILE = ("reports/timings/", "reports/metrics/", "reports/notebooks/", "reports/html/")


def test_no_stage_reads_what_an_identical_rerun_changes():
    stages = yaml.safe_load((paths.DVC_YAML).read_text())["stages"]
    readers = {(n, d) for n, st in stages.items() for d in st.get("deps", []) if str(d).startswith(VOLATILE)}
    cost_tables = {(n, f"reports/timings/{u}") for n, ups in volatile.TIMING_READERS.items() for u in ups}
    assert readers == cost_tables


def _dvc(copy, *args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "dvc", *args], cwd=copy, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, f"dvc {' '.join(args)}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def _outs(copy) -> dict:
    lock = yaml.safe_load((copy / "dvc.lock").read_text())["stages"]
    return {o["path"]: o["md5"] for s in ("priors", *STAGES) for o in lock[s]["outs"]}


@pytest.mark.slow
def test_an_identical_rerun_of_rela_budget_and_dd_labels_leaves_every_stage_as_it_was(tmp_path):
    copy = copy_repository(tmp_path / "repo")
    params = copy / "params.yaml"
    params.write_text(params.read_text().replace("\nscale: cpu\n", "\nscale: smoke\n", 1))
    assert yaml.safe_load(params.read_text())["scale"] == "smoke"
    _dvc(copy, "repro", *STAGES)
    first, status = _outs(copy), json.loads(_dvc(copy, "status", "--json") or "{}")
    assert not any(s.split(":")[-1] in ("priors", *STAGES) for s in status), status
    shutil.rmtree(copy / "build" / "resume", ignore_errors=True)  # recompute every call, do not replay
    _dvc(copy, "repro", "-f", "-s", *STAGES)
    second = _outs(copy)
    changed = sorted(p for p in first if first[p] != second.get(p))
    assert changed and all(p.startswith(VOLATILE) for p in changed), f"changed by an identical rerun: {changed}"
    assert json.loads(_dvc(copy, "status", "--json") or "{}") == status
