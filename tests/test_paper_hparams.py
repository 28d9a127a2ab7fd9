"""The ``paper`` profile against the papers' own hyper-parameters (``compendium.pipeline.paper_hparams``):
every recorded key exists, every one resolves to the paper's value or is a recorded gap, and a drifted
value is caught."""

import copy
import doctest

import pytest

from compendium.core import paths
from compendium.pipeline import paper_hparams
from compendium.pipeline.paper_hparams import GAPS, PAPER_HPARAMS, compare, coverage_markdown
from compendium.pipeline.params import OVERRIDES_KEY, load, stage_module


@pytest.fixture(scope="module")
def params():
    return load(paths.PARAMS)


def drifted(table) -> list[str]:
    """The rows that neither match the paper nor are a recorded gap, each naming stage, key, ours, paper."""
    bad = table[table["status"] == "differs"]
    return [
        f"{r.stage}.{r.key}: ours {r.ours!r} at scale paper, the paper {r.paper!r} ({r.source})"
        for r in bad.itertuples()
    ]


def test_every_recorded_key_is_a_key_of_its_stage(params):
    unknown = []
    for stage, settings in PAPER_HPARAMS.items():
        schema = stage_module(stage).SCHEMA
        paper_overrides = params[stage].get(OVERRIDES_KEY, {}).get("paper", {})
        unknown += [f"{stage}.{key}" for key in settings if key not in schema and key not in paper_overrides]
    assert not unknown, f"keys that no stage schema has: {unknown}"


def test_every_gap_names_a_recorded_stage():
    assert set(GAPS) <= set(PAPER_HPARAMS), sorted(set(GAPS) - set(PAPER_HPARAMS))
    assert all(reason.strip() for gaps in GAPS.values() for reason in gaps.values())


def test_the_paper_profile_matches_the_papers_or_names_the_gap(params):
    problems = drifted(compare(params))
    assert not problems, (
        "params.yaml's paper profile differs from the paper where no gap is recorded "
        "(restore the value, or add the key to paper_hparams.GAPS with the reason):\n  " + "\n  ".join(problems)
    )


def test_no_recorded_gap_has_closed(params):
    table = compare(params).set_index(["stage", "key"])
    closed = [
        f"{stage}.{key}"
        for stage, gaps in GAPS.items()
        for key in gaps
        if key in PAPER_HPARAMS[stage] and table.loc[(stage, key), "status"] == "matches"
    ]
    assert not closed, f"these keys now match the paper; remove them from paper_hparams.GAPS: {closed}"


def test_a_drifted_value_is_reported_as_differs(params):
    table = compare(params)
    stage, key = "dd_dwa", "iterations"
    assert table.set_index(["stage", "key"]).loc[(stage, key), "status"] == "matches"
    drift = copy.deepcopy(params)
    drift[stage].setdefault(OVERRIDES_KEY, {}).setdefault("paper", {})[key] = 999
    rows = compare(drift).set_index(["stage", "key"])
    assert rows.loc[(stage, key), "status"] == "differs"
    assert drifted(compare(drift)) == [
        f"{stage}.{key}: ours 999 at scale paper, the paper 1000 ({PAPER_HPARAMS[stage][key].source})"
    ]
    assert compare(params).equals(table), "compare must not change the params it is given"


def test_every_matched_key_is_caught_when_it_drifts(params):
    table = compare(params)
    for row in table[table["status"] == "matches"].itertuples():
        drift = copy.deepcopy(params)
        drift[row.stage].setdefault(OVERRIDES_KEY, {}).setdefault("paper", {})[row.key] = "drifted"
        status = compare(drift).set_index(["stage", "key"]).loc[(row.stage, row.key), "status"]
        assert status != "matches", f"{row.stage}.{row.key}"


def test_coverage_table_has_a_row_per_stage(params):
    text = coverage_markdown(params)
    assert text.count("\n") == len(PAPER_HPARAMS) + 1
    for stage in PAPER_HPARAMS:
        assert f"| `{stage}` |" in text


def test_doctests():
    result = doctest.testmod(paper_hparams)
    assert result.attempted > 0 and result.failed == 0
