"""Table cells from summarised evaluations (``runner.cell_txt`` / ``cell_mean``)."""

import math

from compendium.distill import runner


def test_cell_txt_and_mean_from_summarise():
    rows = [{"m": "a", "acc": 0.5}, {"m": "a", "acc": 0.7}, {"m": "b", "acc": 0.25}]
    s = runner.summarise(rows, ["m"])
    cells = {(r["m"],): (r["mean"], r["std"], r["count"]) for _, r in s.iterrows()}
    assert runner.cell_txt(cells, ("a",)) == "60.0 ± 14.1"
    assert runner.cell_txt(cells, ("b",)) == "25.0 ± 0.0"
    assert runner.cell_txt(cells, ("b",), n=1) == "25.0"
    assert runner.cell_txt(cells, ("c",)) == "–" and runner.cell_txt(cells, ("c",), missing="") == ""
    assert runner.cell_mean(cells, ("a",)) == 0.6 or abs(runner.cell_mean(cells, ("a",)) - 0.6) < 1e-12
    assert math.isnan(runner.cell_mean(cells, ("c",)))
