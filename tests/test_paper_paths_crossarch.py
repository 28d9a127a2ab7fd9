"""dd_crossarch's paper path: it has no `dataset` key of its own, because it evaluates each set on the dataset the
set was made from (at ``scale: paper`` dd_matching's DC / DSA / DM sets on CIFAR-10, dd_dc_arch's DC Table 2 set
on MNIST, dd_inversion's and dd_dwa's SRe2L / DWA sets on CIFAR-100 with CIFAR-100 teachers), read from its
``data_root``. Here the evaluation runs a step or two on tiny fake folders of the three datasets at once."""

import pandas as pd
import pytest
import torch

from compendium.verdicts import rule
from compendium.core import data, models
from compendium.distill import evaluate as E, runner, teachers, zoo
from compendium.distill.sets import from_real
from compendium.pipeline import paper_hparams
from compendium.distill import records as R
from compendium.pipeline.checks import labelled as L
from compendium.pipeline.schemas import dd_crossarch
from conftest import params_at, params_file, read_unverified, write_fake_cifar10, write_fake_cifar100, write_fake_mnist

pytestmark = pytest.mark.usefixtures("one_thread")


def test_paper_scale_reads_its_sources_datasets_from_the_same_data_root():
    v = params_at("paper", "dd_crossarch")
    assert dd_crossarch.check(v) == [] and "dataset" not in v
    sources = {st: params_at("paper", st) for st in ("dd_matching", "dd_dc_arch", "dd_inversion", "dd_dwa")}
    assert {st: s["dataset"] for st, s in sources.items()} == {
        "dd_matching": "cifar10",
        "dd_dc_arch": "mnist",
        "dd_inversion": "cifar100",
        "dd_dwa": "cifar100",
    }
    assert {s["data_root"] for s in sources.values()} == {v["data_root"]}
    assert 32 % v["zoo_vit_patch"] == 0 and params_at("cpu", "dd_crossarch")["data_root"] == ""
    row = paper_hparams.compare(params_file()).set_index(["stage", "key"]).loc[("dd_crossarch", "dataset")]
    assert row["status"].startswith(
        "differs (gap: no `dataset` key: each set is evaluated on the dataset it was made from"
    )


@pytest.fixture
def three_datasets(tmp_path, monkeypatch):
    root = tmp_path / "ext"
    write_fake_cifar10(root), write_fake_cifar100(root), write_fake_mnist(root)
    for name in ("cifar10", "cifar100"):
        read_unverified(monkeypatch, name)
    return root, {n: data.train_test(n, root) for n in ("cifar10", "cifar100", "mnist")}


def _set(ds, name, method, ipc=1):
    tr, _, mean, std = ds[name]
    idx = torch.cat([torch.nonzero(tr.labels == c).flatten()[:ipc] for c in range(tr.num_classes)])
    return from_real(
        tr.images,
        tr.labels,
        idx,
        tr.num_classes,
        mean,
        std,
        method,
        dataset=name,
        params={"init_index": idx.tolist(), "iterations": 2},
    )


def test_each_set_is_evaluated_on_its_own_dataset(three_datasets, tmp_path):
    root, ds = three_datasets
    dc, t2, dwa = _set(ds, "cifar10", "DC"), _set(ds, "mnist", "DC"), _set(ds, "cifar100", "DWA")
    assert (dc.images.shape[1:], t2.images.shape[1:], dwa.num_classes) == ((3, 32, 32), (1, 28, 28), 100)
    # a CIFAR-100 teacher labels the DWA set; one of another dataset is refused by name
    tr, te, mean, std = ds["cifar100"]
    base = E.EvalConfig(
        arch="convnet",
        arch_kwargs={"width": 8, "depth": 3, "norm": "instance"},
        steps=2,
        batch_size=16,
        lr=1e-3,
        augmentation="crop_flip",
        label_mode="hard",
        temperature=4.0,
        device="cpu",
    )
    r = E.whole_dataset_upper_bound(
        tr.images,
        tr.labels,
        te.images,
        te.labels,
        base.replace(steps=None, epochs=1),
        0,
        mean=mean,
        std=std,
        num_classes=100,
        return_model=True,
    )
    teachers.save(r["model"], tmp_path / "convnet.pt", base, (3, 32, 32), 100, mean, std, {"epochs": 1}, "cifar100")
    teacher = teachers.load(tmp_path / "convnet.pt", dwa.dataset)[0]
    with pytest.raises(teachers.TeacherError, match="dataset"):
        teachers.load(tmp_path / "convnet.pt", dc.dataset)
    train, tests = runner.datasets_of([dc, None, t2, dwa], root, test_n=0)
    assert sorted(train) == sorted(tests) == ["cifar10", "cifar100", "mnist"]
    assert torch.equal(tests["mnist"][1], ds["mnist"][1].labels) and train["cifar100"].num_classes == 100
    jobs = [
        runner.Job(
            {"method": m},
            d,
            base.replace(**E.crop_flip(d.dataset, d.images.shape[-1]), label_mode="teacher" if m == "dwa" else "hard"),
            0,
            teacher if m == "dwa" else None,
        )
        for m, d in (("dc", dc), ("dc table2", t2), ("dwa", dwa))
    ]
    assert [j.cfg.flip for j in jobs] == [True, False, True] and jobs[0].cfg.crop_padding == 4
    rows = runner.evaluate_by_dataset(jobs, tests, workers=0)
    assert [r["method"] for r in rows] == ["dc", "dc table2", "dwa"] and all(0 <= r["acc"] <= 1 for r in rows)
    # with one dataset it is evaluate_many, to the same rows
    one = runner.evaluate_many(jobs[:1], *tests["cifar10"], workers=0)
    assert [r["acc"] for r in one] == [rows[0]["acc"]]
    with pytest.raises(ValueError, match="no test split for the dataset"):
        runner.evaluate_by_dataset(jobs, {"cifar10": tests["cifar10"]}, workers=0)


def test_the_regimes_read_each_sets_own_real_images(three_datasets):
    _, ds = three_datasets
    dc, t2 = _set(ds, "cifar10", "DC"), _set(ds, "mnist", "DC")
    images = {n: tr.images for n, (tr, *_) in ds.items()}
    assert R.displacement(dc, images["cifar10"]) == pytest.approx(0.0, abs=1e-3)  # a set of its own real images
    res = pd.DataFrame(
        [
            {"method": m, "distilled by": "convnet", "student": a, "ipc": 1, "seed": s, "acc": 0.1}
            for m in ("dc", R.DC_TABLE2, R.init_name(R.DC_TABLE2))
            for a in ("mlp", "convnet")
            for s in (0, 1, 2)
        ]
    )
    rows = L.crossarch_claims(
        res,
        pd.DataFrame(),
        R.set_facts({("dc", "convnet", 1): dc, (R.DC_TABLE2, "convnet", 1): t2}, images),
        ipc=1,
        matrix_methods=["dc"],
        matrix_archs=["mlp", "convnet"],
        table4=[],
        table9=[],
        table2_archs=["mlp", "convnet"],
        table2_ipc=1,
    )
    row = rule.judged(rows[0])  # the ledger's columns (the stage records the evidence)
    assert [r.location for r in rows] == ["cross-architecture"] and "moved 0.0 grey levels" in row.preconditions


def test_the_papers_students_of_tables_4_and_9_build_at_32_px():
    v = params_at("paper", "dd_crossarch")
    assert {"vgg16", "resnet50"} <= set(v["table4_archs"]) and {"resnet50", "resnet101"} <= set(v["table9_archs"])
    for name in ("vgg16", "resnet50", "resnet101"):
        net = models.build(
            name, in_channels=3, image_size=32, **zoo.arch_kwargs(name, width_mult=0.0625, stem_stride=1)
        )
        assert net(torch.randn(2, 3, 32, 32)).shape == (2, net.feature_dim) and name in zoo.LABELS
    depth = {
        n: sum(
            isinstance(m, torch.nn.Conv2d)
            for m in models.build(n, in_channels=3, image_size=32, width_mult=0.0625).modules()
        )
        for n in ("vgg11", "vgg16")
    }
    assert depth == {"vgg11": 8, "vgg16": 13}
