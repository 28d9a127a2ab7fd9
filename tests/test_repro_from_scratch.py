"""benchmarks/repro_from_scratch.py: it reads a run's log and the clone's stage minutes into the record it publishes."""

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "repro_from_scratch.py"


@pytest.fixture(scope="module")
def mod():
    spec = importlib.util.spec_from_file_location("repro_from_scratch", SCRIPT)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


LOG = """repro_start 1000
Running stage 'clean_notebooks@priors':
> mkdir -p build/nb
Running stage 'priors':
> python -m compendium.pipeline.nbrun priors
Running stage 'rela_budget':
repro_end 7000 rc 0
"""


def test_parse_log_reads_start_end_status_and_stages(mod):
    got = mod.parse_log(LOG)
    assert (got["start"], got["end"], got["rc"]) == (1000, 7000, 0)
    assert got["stages"] == ["clean_notebooks@priors", "priors", "rela_budget"]
    # the shell variant of the log (start <epoch> <date> ... dvc_rc <rc> end <epoch> <date>)
    shell = "start 50 Fri\nRunning stage 'a':\ndvc_rc 1 end 650 Fri\n"
    assert mod.parse_log(shell) == {"start": 50, "end": 650, "rc": 1, "stages": ["a"]}


def test_parse_log_without_an_end_stops(mod):
    with pytest.raises(SystemExit, match="no start / end"):
        mod.parse_log("repro_start 1000\nRunning stage 'priors':\n")


def test_summarize_splits_the_wall_time(mod, tmp_path):
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "stage_minutes.json").write_text(
        json.dumps({"priors": {"minutes": 60.0, "parameters": {}}, "rela_budget": {"minutes": 30.0, "parameters": {}}})
    )
    log = tmp_path / "run.log"
    log.write_text(LOG)
    rec = mod.summarize(tmp_path, [log])
    assert rec["wall_minutes"] == 100.0 and rec["notebook_minutes"] == 90.0 and rec["other_minutes"] == 10.0
    assert rec["longest_stage"] == "priors" and list(rec["stage_minutes"]) == ["priors", "rela_budget"]
    page = mod.markdown(rec)
    assert "| `dvc repro`, wall time (exit status 0, 3 stages) | 100.0 |" in page


def test_run_refuses_an_existing_directory(mod, tmp_path):
    with pytest.raises(SystemExit, match="fresh clone"):
        mod.run(tmp_path, None, tmp_path / "log")


def test_a_resumed_run_sums_its_parts_less_the_failed_attempt(mod, tmp_path):
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "stage_minutes.json").write_text(
        json.dumps({"dd_dwa": {"minutes": 10.0, "parameters": {}}})
    )
    first = tmp_path / "1.log"
    first.write_text(
        "repro_start 0\nRunning stage 'dd_dwa':\n[nbrun] stage 'dd_dwa' (cpu) done in 600.0 s; 3 files\n"
        "ERROR: failed to reproduce 'dd_dwa': output 'models/distilled/dwa' does not exist\nrepro_end 3000 rc 255\n"
    )
    second = tmp_path / "2.log"
    second.write_text("repro_start 4000\nRunning stage 'dd_dwa':\nrepro_end 5200 rc 0\n")
    assert mod.parse_log(first.read_text())["failed_seconds"] == 600.0
    rec = mod.summarize(tmp_path, [first, second])
    assert rec["wall_minutes"] == (3000 + 1200 - 600) / 60 and rec["parts"] == 2
    assert rec["failed_attempts"] == ["dd_dwa (10.0 min, not counted)"]
    assert "2 parts, resumed after dd_dwa (10.0 min, not counted)" in mod.markdown(rec)
    with pytest.raises(SystemExit, match="resume it"):
        mod.summarize(tmp_path, [first])


def test_an_interrupted_run_and_its_note_are_named(mod, tmp_path):
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "stage_minutes.json").write_text(json.dumps({"dd_gtn": {"minutes": 5.0, "parameters": {}}}))
    first = tmp_path / "1.log"
    first.write_text("repro_start 0\nRunning stage 'dd_gtn':\nrepro_end 600 rc -9\n")
    second = tmp_path / "2.log"
    second.write_text("repro_start 1000\nRunning stage 'dd_gtn':\nrepro_end 1300 rc 0\n")
    rec = mod.summarize(tmp_path, [first, second], note="Tests ran beside it.")
    assert rec["wall_minutes"] == 15.0 and rec["failed_attempts"] == []
    page = mod.markdown(rec)
    assert "1 stages; 2 parts) | 15.0 |" in page and "Tests ran beside it." in page
    assert "Nothing else ran" not in page
    assert "Nothing else ran on the machine." in mod.markdown(mod.summarize(tmp_path, [second]))
