"""DD / SLDD (dd_unrolled) and label distillation (dd_labels) at ``scale: paper`` read MNIST, their papers'
dataset, and GTN with the NAS ground truth (dd_gtn, dd_nas) CIFAR-10, from ``data_root``; the ``cpu`` default stays
on Fashion-MNIST; and each paper path runs a step or two on a tiny folder in the dataset's distributed format."""

import pytest

from compendium.core.probe import to_float
from compendium.distill.unrolled import dd as D
from compendium.distill.unrolled import dd_experiment, gtn_experiment, ld_experiment, nas
from compendium.distill.unrolled import gtn as G
from compendium.pipeline import paper_hparams
from compendium.pipeline.schemas import dd_gtn, dd_labels, dd_nas, dd_unrolled
from conftest import params_at, params_file

pytestmark = pytest.mark.usefixtures("one_thread")

SCHEMAS = {"dd_unrolled": dd_unrolled, "dd_labels": dd_labels}


at, _raw = params_at, params_file


@pytest.mark.parametrize("stage", list(SCHEMAS))
def test_paper_scale_reads_mnist_and_cpu_stays_on_fashion_mnist(stage):
    v = at("paper", stage)
    assert (v["dataset"], bool(v["data_root"])) == ("mnist", True) and SCHEMAS[stage].check(v) == []
    assert paper_hparams.compare(_raw()).set_index(["stage", "key"]).loc[(stage, "dataset"), "status"] == "matches"
    c = at("cpu", stage)
    assert (c["dataset"], c["data_root"]) == ("fashion-mnist", "") and SCHEMAS[stage].check(c) == []
    assert any(e.startswith("data_root:") for e in SCHEMAS[stage].check(dict(v, data_root="")))


def test_dd_paper_path_on_a_tiny_mnist(fake_mnist):
    d = dd_experiment.load_splits(0, 5, 10, "mnist", fake_mnist)
    assert d.X_u8.shape == (25, 1, 28, 28) and d.x_test.shape == (10, 1, 28, 28) and d.tr.name == "mnist"
    assert d.dg.images.shape[1:] == (1, 28, 28)  # the digits: the pre-trained pool's other dataset
    pool = [D.pretrain_job(1000, d.dg.images, d.dg.labels, d.MEAN, d.STD, 1, batch=8)]
    cfg = dict(size=10, steps=1, epochs=1, iterations=1, batch_real=8, seed=0)
    for regime in ("fixed", "random_pretrained"):
        r = D.distill_job(regime, cfg, d.X_u8, d.Y, d.MEAN, d.STD, pool=pool)
        assert r.images.shape == (10, 1, 28, 28)


def test_ld_paper_path_on_a_tiny_mnist(fake_mnist):
    tr, te, dg, MEAN, STD, T_X, T_Y, within, cross = ld_experiment.load_bases(1, 20, "mnist", fake_mnist)
    assert tr.name == "mnist" and T_X.shape == (20, 1, 28, 28) and within[0].shape == (10, 1, 28, 28)
    names, calls = ld_experiment.distill_calls(
        within,
        cross,
        T_X,
        T_Y,
        MEAN,
        STD,
        cross_variants=["rr"],
        arch="lenet",
        inner_batch=10,
        target_batch=8,
        label_lr=0.01,
        model_lr=1e-3,
        patience=5,
        window=5,
        rr_steps=2,
        lam=1.0,
        alpha=0.01,
        so_steps=2,
        inner_lr=0.01,
        inner_steps=1,
        dataset="mnist",
    )
    assert names == [("within", "rr"), ("within", "second_order"), ("cross", "rr")]
    made = [fn(*args, **kw) for fn, args, kw in calls]
    assert [m.dataset for m in made] == ["mnist", "mnist", "digits->mnist"]
    assert all(m.soft_labels.shape == (10, 10) for m in made)
    assert to_float(te.images, MEAN, STD).shape == (10, 1, 28, 28)


def test_three_channel_data_is_refused_with_the_key(fake_cifar10):
    with pytest.raises(ValueError, match="dataset: DD's learner takes 1 x 28 x 28"):
        dd_experiment.load_splits(0, 5, 5, "cifar10", fake_cifar10)
    with pytest.raises(ValueError, match="dataset: LD's cross-dataset bases"):
        ld_experiment.load_bases(1, 10, "cifar10", fake_cifar10)


@pytest.mark.parametrize("stage", ["dd_gtn", "dd_nas"])
def test_gtn_and_nas_read_cifar10_at_paper_scale(stage):
    v, c = at("paper", stage), at("cpu", stage)
    assert (v["dataset"], v["data_root"]) == ("cifar10", at("paper", "dd_matching")["data_root"])
    assert at("paper", "dd_matching")["dataset"] == "cifar10"  # the DC / DSA / DM proxies come from there
    assert paper_hparams.compare(_raw()).set_index(["stage", "key"]).loc[(stage, "dataset"), "status"] == "matches"
    mod = {"dd_gtn": dd_gtn, "dd_nas": dd_nas}[stage]
    assert mod.check(v) == [] and (c["dataset"], c["data_root"]) == ("fashion-mnist", "") and mod.check(c) == []
    assert any(e.startswith("data_root:") for e in mod.check(dict(v, data_root="")))


def test_gtn_and_nas_paper_path_on_a_tiny_cifar10(fake_cifar10, tmp_path):
    d = gtn_experiment.load_splits(4, 10, "cifar10", fake_cifar10)
    assert d.fit_x.shape == (16, 3, 32, 32) and len(d.MEAN) == 3
    code = nas.search_space(2, 0)[0]
    gt = nas.ground_truth_job(code, d.fit_x, d.fit_y, d.te.images, d.te.labels, d.MEAN, d.STD, 2, 8, 1e-3)
    assert 0.0 <= gt["acc"] <= 1.0 and gt["test images"] == 10
    proxies = gtn_experiment.random_proxies(d.tr, 1, d.MEAN, d.STD, [0])
    assert proxies[0].dataset == "cifar10" and proxies[0].images.shape == (10, 3, 32, 32)
    row = nas.set_proxy_job(code, "random", proxies[0], d.te.images, d.te.labels, 2, 8, 1e-3)
    assert 0.0 <= row["acc"] <= 1.0
    dc = proxies[0]
    dc.save(tmp_path / "dc_ipc1.pt")
    got = gtn_experiment.load_proxy_sets({"dc": tmp_path / "dc_ipc1.pt"}, proxies, "cifar10", (3, 32, 32))
    assert set(got) == {("random", 0), ("DC", 0)}
    cfg = G.GTNConfig(steps=2, batch_size=10, noise_dim=4, hidden=8, iterations=1, learners=[nas.parse_code(code)])
    out = G.run(d.fit_x, d.fit_y, cfg, d.MEAN, d.STD, nas.parse_code(code), [0], d.x_test, d.te_y)
    assert out["gtn"].generator.image_shape == (3, 32, 32) and len(out["accs"]) == 1
