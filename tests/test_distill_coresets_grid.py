"""Every coreset method at every ipc (``coresets.select_grid``, the ``dd_coresets`` stage)."""

import torch

from compendium.distill import coresets


def _data(per_class=5, size=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    labels = torch.arange(10).repeat_interleave(per_class)
    images = torch.randint(0, 256, (len(labels), 1, size, size), generator=g, dtype=torch.uint8)
    return images, labels


def test_select_grid_names_saves_and_matches_select(tmp_path):
    x, y = _data()
    feats = {
        "teacher": torch.randn(len(y), 4, generator=torch.Generator().manual_seed(1)),
        "prior": torch.randn(len(y), 3),
    }
    sets, rows = coresets.select_grid(
        x,
        y,
        [1, 2],
        ["random", "herding"],
        ["teacher", "prior"],
        feats,
        (0.5,),
        (0.5,),
        forgetting_epochs=2,
        device="cpu",
        folder=tmp_path,
    )
    assert list(sets) == [
        ("random", 1),
        ("herding (teacher)", 1),
        ("herding (prior)", 1),
        ("random", 2),
        ("herding (teacher)", 2),
        ("herding (prior)", 2),
    ]
    assert [r["images"] for r in rows] == [10, 10, 10, 20, 20, 20]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"{n}_ipc{i}.pt" for n in ("random", "herding_teacher", "herding_prior") for i in (1, 2)
    )  # coresets.set_file
    ref = coresets.select("herding", x, y, 2, 10, (0.5,), (0.5,), seed=0, features=feats["prior"])
    assert torch.equal(sets[("herding (prior)", 2)].images, ref.images)
