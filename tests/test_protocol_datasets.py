"""D as a named dataset (the `dataset` and `data_root` keys of the priors and rela_* stages)."""

import json

import numpy as np
import pytest
import torch

from compendium.core import data
from conftest import read_unverified, write_fake_cifar10
from compendium.rela import experiment, targets


@pytest.fixture
def cifar_root(tmp_path, monkeypatch):
    write_fake_cifar10(tmp_path / "ext", per_class_train=6, per_class_test=2)
    read_unverified(monkeypatch, "cifar10")  # these files are not the official ones
    return tmp_path / "ext"


def _index(path, dataset, n, mean=(0.5,), std=(0.25,)):
    return targets.write_index(path, dataset=dataset, mean=mean, std=std, indices=range(n), targets=[])


def test_datasets_that_are_not_shipped_need_a_data_root(tmp_path):
    with pytest.raises(ValueError, match="data_root"):
        data.load_dataset("cifar10", "train")
    with pytest.raises(ValueError, match="unknown dataset"):
        data.load_dataset("svhn", "train", tmp_path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        data.load_dataset("cifar10", "train", tmp_path / "nowhere")
    assert data.dataset_tag("fashion-mnist") == "fmnist" and data.dataset_tag("tiny-imagenet") == "tinyimagenet"


def test_normalisation_is_the_usual_constants_for_fashion_mnist_else_the_data_own():
    x = torch.randint(0, 256, (40, 3, 4, 4), dtype=torch.uint8)
    assert data.normalisation("fashion-mnist", x) == ((data.FASHION_MNIST_MEAN,), (data.FASHION_MNIST_STD,))
    mean, std = data.normalisation("cifar10", x)
    ref = x.double().div(255).permute(1, 0, 2, 3).reshape(3, -1)
    assert np.allclose(mean, ref.mean(1).numpy()) and np.allclose(std, ref.std(1, unbiased=False).numpy())


def test_a_cifar_setup_trains_three_channel_students(cifar_root, tmp_path):
    idx_file = _index(tmp_path / "index.json", "cifar10", 48, (0.5, 0.4, 0.3), (0.2, 0.2, 0.2))
    s, bank = experiment.dataset_setup(
        idx_file, "cifar10", cifar_root, epochs=1, batch_size=16, head_mult=0.1, probe_epochs=1, device="cpu"
    )
    assert s.images.shape == (48, 3, 32, 32) and s.test_images.shape == (20, 3, 32, 32)
    assert s.num_classes == 10 and s.mean == (0.5, 0.4, 0.3) and s.size == 32
    arm = experiment.Arm("b", arch_kwargs=dict(width=4, depth=2, norm="batch", global_pool=True), budget=1.0)
    assert arm.student_kwargs(s)["in_channels"] == 3
    r = experiment.run(arm, s)
    assert r.row["steps"] == 3 and 0 <= r.row["probe"] <= 1
    rr = experiment.run(experiment.Arm("r", arch_kwargs=arm.arch_kwargs, budget=1.0, prior="rand"), s, bank)
    assert rr.row["steps"] == 3 and bank.made


def test_a_stage_refuses_targets_made_for_another_dataset(cifar_root, tmp_path):
    idx_file = _index(tmp_path / "index.json", "cifar10", 10)
    with pytest.raises(ValueError, match="made its targets for 'cifar10'"):
        experiment.dataset_setup(idx_file, "fashion-mnist")
    # an index of another format (here: one written before it had a version) is refused with the fix
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"dataset": "cifar10", "indices": [0, 1], "targets": []}))
    with pytest.raises(ValueError, match=r"old\.json has no version.*dvc repro priors"):
        experiment.dataset_setup(old, "cifar10", cifar_root)
