"""The stages' measured minutes (compendium.pipeline.timings): folded in from executed notebooks, kept from a
stage's last run when its notebook is absent (a clone without DVC's cache), dropped for a removed stage."""

import json

from compendium.core import paths
from compendium.pipeline import nbclean, timings


def _notebook(folder, stage, seconds, **params):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stage}.ipynb").write_text(
        json.dumps({"metadata": {"papermill": {"duration": seconds, "parameters": params}}})
    )


def test_update_folds_in_the_notebooks_present_and_keeps_the_others(tmp_path):
    (tmp_path / timings.FILE).write_text(
        json.dumps(
            {
                "dd_kip": {"minutes": 2.0, "parameters": {"iterations": 5}},
                "old_stage": {"minutes": 1.0, "parameters": {}},
            }
        )
    )
    _notebook(tmp_path / paths.EXECUTED, "rela_budget", 90.0, epochs=3)
    rec = timings.update(tmp_path, stages=["dd_kip", "rela_budget"])
    assert rec == {
        "dd_kip": {"minutes": 2.0, "parameters": {"iterations": 5}},
        "rela_budget": {"minutes": 1.5, "parameters": {"epochs": 3}},
    }
    assert timings.read(tmp_path) == rec and timings.minutes(tmp_path) == {"dd_kip": 2.0, "rela_budget": 1.5}
    # a rerun replaces the stage's entry with its new notebook's
    _notebook(tmp_path / paths.EXECUTED, "dd_kip", 30.0, iterations=50)
    assert timings.update(tmp_path)["dd_kip"] == {"minutes": 0.5, "parameters": {"iterations": 50}}


def test_a_notebook_without_a_papermill_duration_is_not_a_measurement(tmp_path):
    nb = tmp_path / paths.EXECUTED
    nb.mkdir()
    (nb / "x.ipynb").write_text(json.dumps({"metadata": {}}))
    assert timings.from_notebooks(nb) == {} and timings.read(tmp_path) == {}


def test_the_committed_record_has_every_pipeline_stage_with_its_parameters():
    rec = timings.read()
    assert set(rec) == set(nbclean.pipeline_order())
    assert all(r["minutes"] > 0 and r["parameters"] for r in rec.values())
