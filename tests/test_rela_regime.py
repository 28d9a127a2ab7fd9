"""The regime study behind ReLA's tables: curves, their records, and the choice read off them."""

import json

import pandas as pd
import pytest
import torch
import yaml

from compendium.core import data, paths
from compendium.rela import regime


def _sets(n=64, n_test=32):
    g = torch.Generator().manual_seed(0)
    labels = torch.arange(n) % 10
    images = (torch.rand(n, 1, 28, 28, generator=g) * 60 + labels.view(-1, 1, 1, 1) * 19).to(torch.uint8)
    t_labels = torch.arange(n_test) % 10
    t_images = (torch.rand(n_test, 1, 28, 28, generator=g) * 60 + t_labels.view(-1, 1, 1, 1) * 19).to(torch.uint8)
    names = tuple(str(i) for i in range(10))
    return (
        data.ImageDataset("toy", "train", images, labels, names),
        data.ImageDataset("toy", "test", t_images, t_labels, names),
    )


TINY = regime.Plan(
    widths=(4,), seeds=(0, 1), epochs=2, probe_at=(1, 2), batch_size=16, probe_train=(40, 20), probe_epochs=2
)


def test_a_curve_probes_the_untrained_network_and_each_listed_epoch():
    df = regime.curve(4, 0, TINY, datasets=_sets())
    assert sorted(df["epoch"].unique()) == [0, 1, 2]
    assert set(df["view"]) == {"pooled", "flat"} and set(df["labels"]) == {40, 20}
    assert len(df) == 3 * 2 * 2 and df["probe"].between(0, 1).all()
    assert (df.loc[df["epoch"] == 0, "train seconds"] == 0).all() and (
        df.loc[df["epoch"] == 2, "train seconds"] > 0
    ).all()
    # the same seed gives the same untrained network and probe
    again = regime.curve(4, 0, regime.Plan(**{**TINY.__dict__, "epochs": 1, "probe_at": (1,)}), datasets=_sets())
    pd.testing.assert_frame_equal(
        df[df["epoch"] == 0].reset_index(drop=True), again[again["epoch"] == 0].reset_index(drop=True)
    )


def _curves(gains: dict, untrained=(0.70, 0.71, 0.69), minutes_per_epoch=1.0):
    """Synthetic records: width -> {epoch: gain over the untrained network per seed}."""
    rows = []
    for width, by_epoch in gains.items():
        for s, u in enumerate(untrained):
            rows.append(
                {
                    "width": width,
                    "seed": s,
                    "epoch": 0,
                    "view": "pooled",
                    "labels": 100,
                    "probe": u,
                    "train seconds": 0.0,
                }
            )
            for e, g in by_epoch.items():
                rows.append(
                    {
                        "width": width,
                        "seed": s,
                        "epoch": e,
                        "view": "pooled",
                        "labels": 100,
                        "probe": u + g[s],
                        "train seconds": 60.0 * minutes_per_epoch * e * width / 16,
                    }
                )
    return pd.DataFrame(rows)


def test_the_choice_is_the_cheapest_regime_whose_intervals_clear_both_goals():
    curves = _curves(
        {
            16: {1: (0.01, 0.03, -0.01), 10: (0.08, 0.09, 0.085), 2: (0.03, 0.031, 0.029), 20: (0.12, 0.125, 0.121)},
            32: {1: (0.03, 0.031, 0.032), 10: (0.12, 0.13, 0.125)},
        }
    )
    table = regime.regimes(curves, regime.Goals(full_gain=0.10, low_gain=0.0, budget=0.1))
    by = table.set_index(["width", "full epochs"])
    assert not by.loc[(16, 10), "meets goals"]  # full gain below 10 points and 10% not above untrained
    assert by.loc[(16, 20), "meets goals"] and by.loc[(32, 10), "meets goals"]
    assert by.loc[(16, 20), "gap"] == pytest.approx(0.122 - 0.030)  # BYOL(20) - BYOL(2), paired by seed
    chosen = regime.choose(table, "pooled", 100)
    assert (chosen["width"], chosen["full epochs"]) == (16, 20)  # both cost 20 minutes: the narrower network
    assert regime.choose(table[table["width"] == 16].assign(**{"meets goals": False}), "pooled", 100) is None


def test_records_of_other_settings_are_refused_before_any_run(tmp_path):
    (tmp_path / regime.PLAN_FILE).write_text(json.dumps({**TINY.settings(), "epochs": 5}))
    with pytest.raises(ValueError, match="epochs"):
        regime.run_pieces(TINY, root=tmp_path, checkpoints=tmp_path / "ckpt")


def _fake_curve(calls: list):
    """A stand-in for :func:`regime.curve` that records each call's (width, seed, plan, checkpoint) and returns one
    probe row."""

    def fake(w, s, plan, checkpoint=""):
        calls.append((w, s, plan, checkpoint))
        row = {"width": w, "seed": s, "epoch": 0, "view": "pooled", "labels": 40, "probe": 0.5, "train seconds": 0.0}
        return pd.DataFrame([row])

    return fake


def test_pieces_write_one_record_per_curve_and_skip_the_ones_written(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(regime, "curve", _fake_curve(calls))
    regime.run_pieces(TINY, root=tmp_path, checkpoints=tmp_path / "ckpt")
    assert [c[:2] for c in calls] == [(4, 0), (4, 1)] and json.loads(
        (tmp_path / regime.PLAN_FILE).read_text()
    ) == TINY.settings()
    regime.run_pieces(TINY, root=tmp_path, checkpoints=tmp_path / "ckpt")
    assert [c[:2] for c in calls] == [(4, 0), (4, 1)] and len(regime.load(tmp_path)) == 2


def test_the_committed_curves_are_those_of_params_yaml():
    values = yaml.safe_load(paths.PARAMS.read_text())["rela_regime"]
    plan = regime.Plan.from_params(values)
    regime.check_records(plan)
    curves = regime.load()
    assert set(zip(curves["width"], curves["seed"])) <= set(plan.curves())
    for (w, s), g in curves.groupby(["width", "seed"]):
        assert sorted(g["epoch"].unique()) == [0, *plan.for_curve(w, s).probe_at], (w, s)


def test_confirmation_curves_stop_early_and_run_with_the_plans_settings(tmp_path, monkeypatch):
    plan = regime.Plan(widths=(16, 32), seeds=(0, 1), epochs=30, probe_at=(1, 2, 10, 20, 30), confirm_width=16,
                       confirm_seeds=(1, 2, 3), confirm_epochs=20)  # fmt: skip
    assert plan.curves() == [(16, 0), (16, 1), (32, 0), (32, 1), (16, 2), (16, 3)]  # (16, 1) already runs 30
    assert plan.for_curve(16, 1) is plan and plan.for_curve(32, 0) is plan
    short = plan.for_curve(16, 2)
    assert short.epochs == 20 and short.probe_at == (1, 2, 10, 20) and short.settings()["lr"] == plan.lr
    # which curves stop early is not a setting of the folder: adding confirmation seeds refuses no record
    assert (
        plan.settings() == regime.Plan(widths=(16, 32), seeds=(0, 1), epochs=30, probe_at=(1, 2, 10, 20, 30)).settings()
    )
    with pytest.raises(ValueError, match="confirm_epochs in 1..epochs"):
        regime.Plan(epochs=30, confirm_width=16, confirm_seeds=(5,), confirm_epochs=40)
    runs = []
    monkeypatch.setattr(regime, "curve", _fake_curve(runs))
    regime.run_pieces(plan, root=tmp_path, checkpoints=tmp_path / "ckpt", only=[(16, 1), (16, 2)])
    assert [(w, s, p.epochs) for w, s, p, _ in runs] == [(16, 1, 30), (16, 2, 20)] and "_e20_" in runs[1][3]
    st = regime.status(plan, regime.load(tmp_path)).set_index("epochs")
    assert st.loc[30, "curves committed"].tolist() == [1, 0] and st.loc[20, "curves planned"] == 2


def test_when_no_regime_meets_both_goals_the_nearest_ones_are_named():
    curves = _curves(
        {16: {1: (0.02, 0.03, 0.025), 10: (0.06, 0.07, 0.065)}, 32: {1: (0.0, 0.02, -0.02), 10: (0.08, 0.085, 0.082)}}
    )
    table = regime.regimes(curves, regime.Goals(full_gain=0.10))
    assert regime.choose(table, "pooled", 100) is None
    near = regime.nearest(table, "pooled", 100)
    assert near["largest full gain"]["width"] == 32
    assert near["cheapest with the low budget above untrained"]["width"] == 16


def test_where_no_regime_meets_the_goals_the_candidate_is_the_cheapest_whose_means_do():
    # width 16: means +10.5 / +2.0 (spread of about 1 point); width 32: means +8.2, below the goal
    curves = _curves(
        {16: {1: (0.01, 0.03, 0.02), 10: (0.095, 0.115, 0.105)}, 32: {1: (0.0, 0.02, -0.02), 10: (0.08, 0.085, 0.082)}}
    )
    goals = regime.Goals(full_gain=0.10)
    table = regime.regimes(curves, goals)
    assert not table["meets goals"].any()
    c = regime.candidate(table, goals)
    assert c["width"] == 16 and c["full epochs"] == 10 and c["seeds needed"] > 3
    assert c["added minutes"] == (c["seeds needed"] - 3) * c["train minutes"]
    text = regime.candidate_text(c)
    assert (
        "pooled features with 100 probe labels, width 16, 10 epochs" in text
        and f"{int(c['seeds needed'])} seeds" in text
    )
    # a mean below its goal is never a candidate; neither is a spread measured on one seed
    assert regime.seeds_to_clear(0.09, 0.08, 0.10, 5, 0.10) is None
    assert regime.seeds_to_clear(0.12, float("nan"), float("nan"), 1, 0.10) is None
    assert (
        regime.candidate(regime.regimes(_curves({16: {1: (0.0, 0.01, 0.0), 10: (0.05, 0.06, 0.05)}}), goals), goals)
        is None
    )
    # the more seeds already run, the fewer needed; the interval's own seeds are the floor
    assert regime.seeds_to_clear(0.11, 0.105, 0.115, 5, 0.10) == 5
    easy = regime.Goals(full_gain=0.05, low_gain=-0.01)  # width 16 meets both by its lower bounds
    met = regime.candidate(regime.regimes(curves, easy), easy)
    assert met["added minutes"] == 0 and regime.candidate_text(met).endswith("meets both goals by its lower bounds")
    rows = regime.stage_regimes(table, {"rela_budget": {"view": "pooled", "labels": 100, "width": 16, "full epochs": 10,
                                                        "budget": 0.1}}, goals)  # fmt: skip
    assert rows["candidate"].iloc[0] == text and rows["confirmation"].iloc[0] == ""
    target = {"view": "pooled", "labels": 100, "width": 16, "full epochs": 10}
    st = {"view": "pooled", "labels": 100, "width": 16, "full epochs": 10, "budget": 0.1}
    confirmed = regime.stage_regimes(table, {"rela_budget": st}, goals, target)["confirmation"].iloc[0]
    assert confirmed.startswith("the confirmation plan's regime") and confirmed.endswith("does not meet the goals")
    assert regime.confirmation(table, {**target, "width": 64}, goals) == ""  # no curve there
    # a confirmation that failed ends the search: no further candidate read off the same seeds
    assert regime.confirmation_failed(confirmed)
    assert regime.stage_regimes(table, {"rela_budget": st}, goals, target)["candidate"].iloc[0] == ""
    assert regime.way_on(table, goals, target).endswith("does not meet the goals, so no regime on two cores is known")
    assert regime.way_on(table, goals) == text and regime.way_on(regime.regimes(curves, easy), easy, target).endswith(
        "lower bounds"
    )
