"""benchmarks/stage_profile.py: the ledger rows each stage judges, beside its minutes."""

import importlib.util
from pathlib import Path

import pandas as pd

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "stage_profile.py"


def _mod():
    spec = importlib.util.spec_from_file_location("stage_profile", SCRIPT)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def test_ledger_counts_per_judging_stage():
    ledger = pd.DataFrame(
        {"stage": ["a", "a", "a", "b"], "tested": ["yes", "no", "yes", "yes"], "preconditions": ["p", "p", None, None]}
    )
    got = _mod().ledger_counts(ledger)
    assert got.loc["a"].tolist() == ["2 / 3", "1 / 2"]  # one exact check (no preconditions), two comparisons
    assert got.loc["b"].tolist() == ["1 / 1", "–"]
