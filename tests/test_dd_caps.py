"""benchmarks/dd_caps.py: its loops are dd_unrolled's at the cpu settings, and its table marks a plateau that
follows a collapse."""

import json
from pathlib import Path

from compendium.pipeline import params
from conftest import benchmark_script

ROOT = Path(__file__).resolve().parents[1]


def _script():
    return benchmark_script("dd_caps")


def test_it_reads_every_setting_it_passes_from_dd_unrolleds_cpu_params():
    p = params.stage_params("dd_unrolled", scale="cpu")
    assert set(_script().KEYS) <= set(p)


def test_the_table_marks_a_collapse_and_a_converged_plateau():
    converged = [2.3 - 1.3 * min(i, 100) / 100 for i in range(400)]
    collapsed = converged[:150] + [2.3] * 250
    rows = (
        _script()
        .table(
            {
                "ok": {"iterations": 400, "seconds": 1.0, "curve": converged},
                "dead": {"iterations": 400, "seconds": 1.0, "curve": collapsed},
                "short": {"iterations": 2, "seconds": 0.1, "curve": [2.3, 2.2]},
            }
        )
        .splitlines()
    )
    assert rows[2].startswith("| ok | 400 |") and "| yes |" in rows[2] and rows[2].endswith("| no (0%) |")
    assert rows[3].startswith("| dead |") and rows[3].endswith("| yes (100%) |")
    assert rows[4].endswith("| no | n/a | n/a |")


def test_the_saved_run_has_the_stages_37_loops():
    runs = json.loads((ROOT / "benchmarks" / "dd_caps_1500.json").read_text())
    assert len(runs) == 37 and "poison" not in runs and max(v["iterations"] for v in runs.values()) == 1500


def test_first_stop_is_where_the_stages_plateau_stop_fires_and_flags_a_collapse():
    s = _script()
    falling = [2.0 - min(i, 20) / 20 for i in range(200)]
    assert s.first_stop(falling, 25, 50) == (50, False)
    assert s.first_stop(falling, 25, 100) == (100, False)
    assert s.first_stop([1.0 - 0.01 * i for i in range(200)], 25, 0) is None  # still falling
    assert s.first_stop(falling, 0, 0) is None  # stop off
    risen = [2.0 - min(i, 20) / 20 for i in range(60)] + [1.9] * 140  # fell, then settled high
    fs = s.first_stop(risen, 25, 100)
    assert fs is not None and fs[1] is True


def test_the_table_gives_the_first_stop_column_only_with_a_stop_rule():
    runs = {"ok": {"iterations": 200, "seconds": 1.0, "curve": [2.0 - min(i, 20) / 20 for i in range(200)]}}
    assert "first stop" not in _script().table(runs)
    assert _script().table(runs, 25, 50).splitlines()[2].endswith("| 50, then 0% more |")
