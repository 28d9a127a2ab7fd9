"""dd_coresets' paper path: at ``scale: paper`` the coresets, class averages, k-means and ReLA's random real images are
chosen from CIFAR-100, the dataset of dd_teachers' teacher (whose features and labels the methods use), so ReLA's
Table 5 arm sits beside dd_inversion's SRe2L / DWA / RDED on one dataset; the ``cpu`` default stays on Fashion-MNIST.
(DC's Table 1 cell against the coresets is judged from DC's own protocol, :mod:`compendium.distill.dc_protocol`.)"""

import pytest
import torch

from compendium.core import data, models, probe
from compendium.distill import coresets, teachers
from compendium.distill.sets import DistilledSet, SetError
from compendium.pipeline.checks import labelled as _L
from judging import Judged

L = Judged(_L)
from compendium.pipeline.schemas import dd_coresets
from conftest import params_at

pytestmark = pytest.mark.usefixtures("one_thread")


def test_paper_scale_selects_from_the_teachers_dataset():
    v = params_at("paper", "dd_coresets")
    t, inv = params_at("paper", "dd_teachers"), params_at("paper", "dd_inversion")
    assert v["dataset"] == t["dataset"] == inv["dataset"] == "cifar100"
    assert v["data_root"] == t["data_root"] and dd_coresets.check(v) == []
    assert v["pool_n"] >= 50_000  # all of CIFAR-100's training images
    cpu = params_at("cpu", "dd_coresets")
    assert (cpu["dataset"], cpu["data_root"]) == ("fashion-mnist", "")
    errs = dd_coresets.check(dict(v, data_root=""))
    assert len(errs) == 1 and errs[0].startswith("data_root:")
    assert params_at("paper", "dd_dc_arch")["coresets"] == [] and params_at("cpu", "dd_dc_arch")["coresets"]


def test_every_method_selects_from_a_tiny_cifar100(fake_cifar100, tmp_path):
    tr, te, MEAN, STD = data.train_test("cifar100", fake_cifar100)
    assert tr.images.shape == (200, 3, 32, 32) and tr.num_classes == 100
    torch.manual_seed(0)
    net = models.build("convnet", in_channels=3, image_size=32, width=4, depth=3, norm="batch")
    probe.recalibrate_bn(net, tr.images, MEAN, STD)
    feats = {"prior": teachers.features(torch.nn.Sequential(net), probe.to_float(tr.images, MEAN, STD))}
    methods = ["random", "herding", "k_center", "forgetting", "kmeans", "average"]
    sets, rows = coresets.select_grid(
        tr.images,
        tr.labels,
        [1],
        methods,
        ["prior"],
        feats,
        MEAN,
        STD,
        forgetting_epochs=2,
        device="cpu",
        folder=tmp_path,
        num_classes=tr.num_classes,
        dataset="cifar100",
    )
    assert len(sets) == len(methods) and all(r["images"] == 100 for r in rows)
    for d in sets.values():
        assert (d.dataset, d.num_classes, tuple(d.images.shape)) == ("cifar100", 100, (100, 3, 32, 32))
        assert torch.equal(d.labels.sort().values, torch.arange(100))
    f = tmp_path / coresets.set_file("herding (prior)", 1)
    assert DistilledSet.load(f, "cifar100").method == "herding"
    with pytest.raises(SetError, match="dataset"):  # a stage on another dataset refuses them by name
        DistilledSet.load(f, "mnist")
