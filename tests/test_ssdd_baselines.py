"""SSDD Table 1's DSA and DM baselines made from dd_matching's settings (compendium.distill.ssdd.baselines)."""

import pytest
import torch

from compendium.distill.methods.base import Pool
from compendium.distill.sets import DistilledSet
from compendium.distill.ssdd import baselines, experiments
from compendium.pipeline import params


@pytest.mark.parametrize("scale", ["smoke", "cpu", "faithful", "paper"])
def test_the_synthesis_settings_are_dd_matchings_at_every_scale(scale):
    settings = params.stage_params("dd_matching", scale=scale)
    values = baselines.matching_values(settings, "fashion-mnist")
    for key in ("width", "batch_real", "iterations", "dm_iterations"):
        assert values[key] == settings[key]
    assert values["dsa_strategy"] and values["device"] == "cpu"


def test_a_missing_setting_is_named_before_any_compute():
    with pytest.raises(KeyError, match="iterations"):
        baselines.matching_values(
            {"width": 4, "batch_real": 4, "dm_iterations": 2, "loops_ipc10": [1, 1]}, "fashion-mnist"
        )


def test_an_unknown_method_is_named_before_any_compute():
    pool = Pool(torch.zeros(4, 1, 8, 8, dtype=torch.uint8), torch.arange(4) % 2, (0.5,), (0.25,))
    with pytest.raises(KeyError, match="mtt"):
        baselines.synthesize(["dsa", "mtt"], 1, {}, pool, workers=0)


def _set(mean, std):
    g = torch.Generator().manual_seed(0)
    return DistilledSet(
        torch.randn(4, 1, 6, 6, generator=g),
        torch.tensor([0, 0, 1, 1]),
        2,
        mean,
        std,
        "dsa",
        seed=3,
        synthesis_seconds=2.5,
        peak_memory_bytes=3 * 2**20,
    )


def test_relabel_keeps_the_pixels_when_the_normalisations_differ():
    ds = _set((0.5,), (0.25,))
    ts = baselines.relabel(ds, lambda x: x.flatten(1)[:, :2], (0.2860,), (0.3530,))
    raw_in = ds.images * 0.25 + 0.5
    raw_out = ts.images * 0.3530 + 0.2860
    torch.testing.assert_close(raw_out, raw_in)
    torch.testing.assert_close(ts.targets, ts.images.flatten(1)[:, :2])
    same = baselines.relabel(ds, lambda x: x.flatten(1)[:, :2], (0.5,), (0.25,))
    assert torch.equal(same.images, ds.images)


def test_a_relabelled_set_goes_through_ssdds_set_tables_and_files(tmp_path):
    ts = baselines.relabel(_set((0.5,), (0.25,)), lambda x: x.flatten(1)[:, :2], (0.5,), (0.25,), budget=144)
    row = experiments.sets_table([ts]).iloc[0]
    assert (row["set"], row["m"], row["floats"], row["within budget"]) == ("DSA", 4, 144, True)
    assert (row["synthesis s"], row["peak MB"]) == (2.5, 3.0)
    experiments.save_sets([ts], tmp_path)
    back = {t.extra["name"]: t for t in (type(ts).load(f) for f in tmp_path.glob("*.pt"))}
    assert torch.equal(back["DSA"].images, ts.images) and torch.equal(back["DSA"].targets, ts.targets)


def test_dsa_and_dm_are_synthesized_from_the_labelled_pool_in_one_call():
    g = torch.Generator().manual_seed(0)
    pool = Pool(
        torch.randint(0, 256, (20, 1, 8, 8), dtype=torch.uint8, generator=g), torch.arange(20) % 2, (0.5,), (0.25,)
    )
    values = baselines.matching_values(
        {
            "width": 4,
            "batch_real": 4,
            "iterations": 1,
            "dm_iterations": 1,
            "loops_ipc10": [1, 1],
            "loops_ipc50": [1, 1],
        },
        "fashion-mnist",
    )
    made = baselines.synthesize(["dsa", "dm"], 1, values, pool, workers=0)
    assert {m: (tuple(d.images.shape), d.labels.tolist(), d.method) for m, d in made.items()} == {
        "dsa": ((2, 1, 8, 8), [0, 1], "dsa"),
        "dm": ((2, 1, 8, 8), [0, 1], "dm"),
    }
