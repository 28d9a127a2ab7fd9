"""The distillation stages' plumbing: teachers on disk, many evaluations in worker processes."""

import pytest
import torch

from compendium.distill import evaluate as E
from compendium.distill import runner, sets
from compendium.distill import teachers as T


def _toy(n_per_class=6, size=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    labels = torch.arange(3).repeat_interleave(n_per_class)
    base = torch.zeros(3, 1, size, size)
    for c in range(3):
        base[c, 0, :, c * size // 3 : (c + 1) * size // 3] = 200
    images = (base[labels] + 30 * torch.rand(len(labels), 1, size, size, generator=g)).clamp(0, 255).to(torch.uint8)
    return images, labels


CFG = E.EvalConfig(
    arch="convnet",
    arch_kwargs={"width": 4, "depth": 2, "norm": "batch"},
    steps=8,
    batch_size=6,
    augmentation="none",
    device="cpu",
)


def test_teacher_round_trip_and_features(tmp_path):
    x, y = _toy()
    r = E.whole_dataset_upper_bound(
        x, y, x, y, CFG.replace(steps=5), 0, mean=(0.3,), std=(0.3,), num_classes=3, return_model=True
    )
    p = T.save(r["model"], tmp_path / "t.pt", CFG, (1, 8, 8), 3, (0.3,), (0.3,), {"test_acc": r["final_acc"]})
    net, meta = T.load(p)
    z = torch.randn(4, 1, 8, 8)
    assert torch.allclose(net(z), r["model"].eval()(z), atol=1e-6)
    assert meta["record"]["test_acc"] == r["final_acc"] and meta["num_classes"] == 3
    assert T.features(net, z).shape == (4, net[0].feature_dim)
    with pytest.raises(T.TeacherError, match="dd_teachers"):
        T.load(tmp_path / "missing.pt")


def test_evaluations_do_not_depend_on_the_number_of_workers():
    x, y = _toy()
    d = sets.from_real(x, y, torch.arange(0, 18, 2), 3, (0.3,), (0.3,), "random")
    jobs = [runner.Job({"method": "random", "k": k}, d, CFG, seed=k, cost=k) for k in range(3)]
    here = runner.evaluate_many(jobs, x, y, workers=0)
    pool = runner.evaluate_many(jobs, x, y, workers=2)
    assert [r["acc"] for r in here] == [r["acc"] for r in pool]
    assert [r["k"] for r in pool] == [0, 1, 2]
    summary = runner.summarise(here, ["method"])
    assert summary.loc[0, "count"] == 3 and "±" in summary.loc[0, "cell"]
    with pytest.raises(ValueError, match="teacher"):
        runner.evaluate_many([runner.Job({}, d, CFG.replace(label_mode="teacher"))], x, y, workers=0)


def test_dsa_eval_hook_keeps_shape_and_is_seeded():
    x = torch.randn(5, 1, 8, 8)
    a = runner.dsa_eval_augment(x, torch.Generator().manual_seed(3))
    b = runner.dsa_eval_augment(x, torch.Generator().manual_seed(3))
    assert a.shape == x.shape and torch.equal(a, b)
