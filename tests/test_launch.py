"""compendium.core.launch: a stage's long training under torchrun (two gloo processes on the CPU here), its result
handed back from rank 0, and the check that the ranks ended with the same network."""

import json
from pathlib import Path

import pytest
import torch
from torch import nn

from compendium.core import augment, launch, models
from compendium.distill import evaluate as E
from compendium.rela import replicates
from compendium.ssl import methods, train


def _data(n=64, c=1, size=12, classes=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (n, c, size, size), dtype=torch.uint8, generator=g), torch.arange(n) % classes


def test_one_process_is_a_plain_call():
    assert launch.call(max, (3, 7)) == 7
    with pytest.raises(ValueError, match="nproc"):
        launch.call(max, (3, 7), nproc=0)


def test_only_importable_functions_can_run_under_torchrun():
    with pytest.raises(ValueError, match="importable"):
        launch.call(lambda: 0, nproc=2)
    assert launch._resolve(launch._name(E.whole_dataset_upper_bound)) is E.whole_dataset_upper_bound


def test_ranks_that_disagree_are_named():
    a, b = nn.Linear(3, 2), nn.Linear(3, 2)
    b.load_state_dict(a.state_dict())
    assert launch.ranks_agree([{"model": a, "acc": 0.1}, {"model": b, "acc": 0.2}]) == []
    with torch.no_grad():
        b.bias.add_(1.0)
    assert launch.ranks_agree([{"model": a}, {"model": b}]) == ["model.bias"]
    assert launch.ranks_agree([a, b]) == ["result.bias"]


def test_a_teacher_trains_under_ddp_in_two_processes():
    x, y = _data()
    cfg = E.EvalConfig(
        arch="convnet",
        arch_kwargs={"width": 8, "depth": 2, "norm": "batch"},
        epochs=2,
        batch_size=16,
        lr=1e-3,
        augmentation="crop_flip",
        label_mode="hard",
        eval_every=1,
        device="cpu",
    )
    kw = dict(mean=(0.5,), std=(0.25,), num_classes=4, return_model=True)
    r = launch.call(E.whole_dataset_upper_bound, (x, y, x, y, cfg, 0), kw, nproc=2, timeout=300)
    assert isinstance(r["model"], nn.Module) and 0.0 <= r["final_acc"] <= 1.0
    assert r["steps"] == 2 * 64 // 16  # the global schedule: each step one batch of 16, 8 images per rank
    one = E.whole_dataset_upper_bound(x, y, x, y, cfg, 0, **kw)
    assert one["steps"] == r["steps"]
    assert launch.ranks_agree([one["model"], r["model"]])  # the sharded run is its own, not a copy of one process's
    with pytest.raises(launch.LaunchError, match="exited"):  # a batch that does not split into the ranks
        launch.call(E.whole_dataset_upper_bound, (x, y, x, y, cfg.replace(batch_size=15), 0), kw, nproc=2, timeout=300)


def test_byol_and_its_prior_file_under_ddp(tmp_path):
    x, _ = _data(n=64, size=16)
    kwargs = dict(in_channels=1, image_size=16, width=8, depth=2, norm="batch", global_pool=True)
    out = tmp_path / "priors" / "byol.pt"
    record, seconds, loss = launch.call(
        replicates.train_byol,
        (x, kwargs, (0.5,), (0.25,)),
        dict(epochs=1, batch_size=16, seed=0, out=out, device="cpu", name="t"),
        nproc=2,
        timeout=300,
    )
    assert record["epochs"] == 1 and loss == loss and out.is_file()
    assert json.loads(Path(f"{out}.json").read_text())["train"]["method"] == "byol"  # written by rank 0
    method = methods.build("barlow_twins", models.build("convnet", **kwargs), head_mult=0.125)
    cfg = train.PretrainConfig(epochs=1, batch_size=16, device="cpu", log_prefix="")
    r = launch.call(
        train.pretrained, (method, x, cfg, augment.preset("barlow_twins", size=16), [0.5], [0.25]), nproc=2, timeout=300
    )
    assert len(r["history"].epochs) == 1 and isinstance(r["model"].backbone, nn.Module)
