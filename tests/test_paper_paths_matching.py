"""The matching family's paper path: at ``scale: paper`` dd_matching (DC / DSA / DM) and dd_kip (KIP, LS) resolve
to CIFAR-10 and dd_dc_arch (DC's ConvNet ablation) to MNIST, the datasets of their papers' tables; the ``cpu``
default stays on the shipped Fashion-MNIST with the same calls; and each stage's paper path runs a step or two on a
tiny folder in the dataset's real on-disk format (CIFAR-10's python pickles, MNIST's gzipped IDX files)."""

import pytest
import torch

from compendium.core import data, models
from compendium.core.probe import to_float
from compendium.distill import evaluate as E
from compendium.distill import kernel, networks, runner
from compendium.distill.matching import dsa, synthesis
from compendium.distill.methods import matching
from compendium.distill.methods.base import Pool
from compendium.distill.sets import DistilledSet, SetError
from compendium.pipeline import paper_hparams
from compendium.pipeline.schemas import dd_dc_arch, dd_kip, dd_matching
from conftest import params_at, params_file

pytestmark = pytest.mark.usefixtures("one_thread")

SCHEMAS = {"dd_matching": dd_matching, "dd_kip": dd_kip, "dd_dc_arch": dd_dc_arch}
PAPER_DATASET = {"dd_matching": "cifar10", "dd_kip": "cifar10", "dd_dc_arch": "mnist"}


at, _raw = params_at, params_file


# --- the configuration -------------------------------------------------------------------------------


@pytest.mark.parametrize("stage", list(SCHEMAS))
def test_paper_scale_reads_the_papers_dataset(stage):
    v = at("paper", stage)
    assert v["dataset"] == PAPER_DATASET[stage] and v["data_root"]
    assert SCHEMAS[stage].check(v) == []
    # the recorded paper table says the same, so the coverage table counts the key as matching
    rows = paper_hparams.compare(_raw()).set_index(["stage", "key"])
    assert rows.loc[(stage, "dataset"), "status"] == "matches"


def test_paper_scale_keeps_the_papers_networks_and_loops():
    m, a, k = at("paper", "dd_matching"), at("paper", "dd_dc_arch"), at("paper", "dd_kip")
    assert (m["width"], m["iterations"], m["dm_iterations"], m["batch_real"]) == (128, 1000, 20000, 256)
    assert (m["loops_ipc10"], m["loops_ipc50"]) == ([10, 50], [50, 10])
    assert (a["width"], a["iterations"], a["loops"], a["ipc"]) == (128, 1000, [1, 1], 1)
    assert k["ls_target"] <= 50_000  # LS's targets fit CIFAR-10's training split


@pytest.mark.parametrize("stage", list(SCHEMAS))
def test_cpu_default_stays_on_fashion_mnist(stage):
    v = at("cpu", stage)
    assert (v["dataset"], v["data_root"]) == ("fashion-mnist", "")
    assert SCHEMAS[stage].check(v) == []


@pytest.mark.parametrize("stage", list(SCHEMAS))
def test_a_non_shipped_dataset_needs_data_root_before_any_compute(stage):
    errs = SCHEMAS[stage].check(dict(at("paper", stage), data_root=""))
    assert any(e.startswith("data_root:") and PAPER_DATASET[stage] in e and "set `data_root`" in e for e in errs), errs


def test_fashion_mnist_keeps_its_constants_and_augmentation():
    assert data.normalisation("fashion-mnist", torch.zeros(1, 1, 28, 28, dtype=torch.uint8)) == (
        (data.FASHION_MNIST_MEAN,),
        (data.FASHION_MNIST_STD,),
    )
    default = E.EvalConfig()
    assert E.crop_flip("fashion-mnist", 28) == {"crop_padding": default.crop_padding, "flip": default.flip}
    assert E.crop_flip("cifar10", 32) == {"crop_padding": 4, "flip": True}
    assert E.crop_flip("mnist", 28) == {"crop_padding": 2, "flip": False}
    assert (
        dsa.default_strategy("mnist") == dsa.DIGIT_STRATEGY and dsa.default_strategy("cifar10") == dsa.DEFAULT_STRATEGY
    )


# --- the readers -------------------------------------------------------------------------------------


@pytest.mark.parametrize("gz", [True, False])
def test_mnist_reads_its_distributed_idx_files(tmp_path, gz):
    from conftest import write_fake_mnist

    root = write_fake_mnist(tmp_path / "ext", gz=gz)
    tr, te, mean, std = data.train_test("mnist", root)
    assert tr.images.shape == (30, 1, 28, 28) and te.images.shape == (10, 1, 28, 28) and tr.num_classes == 10
    assert tr.labels.tolist() == [c for c in range(10) for _ in range(3)]
    assert len(mean) == len(std) == 1 and 0.4 < mean[0] < 0.6  # uniform random pixels
    # a plain folder of the four files is read too
    plain = tmp_path / "plain"
    (plain).mkdir()
    for f in (root / "MNIST" / "raw").iterdir():
        (plain / f.name).write_bytes(f.read_bytes())
    assert torch.equal(data.load_mnist(plain, "test").images, te.images)


def test_mnist_errors_name_the_file(tmp_path):
    from conftest import write_fake_mnist

    with pytest.raises(data.DataError, match="train-images-idx3-ubyte"):
        data.load_mnist(tmp_path, "train")
    root = write_fake_mnist(tmp_path / "ext")
    f = root / "MNIST" / "raw" / "t10k-images-idx3-ubyte.gz"
    f.write_bytes(f.read_bytes()[:20])
    with pytest.raises(data.DataError, match="t10k-images-idx3-ubyte.gz"):
        data.load_mnist(root, "test")
    with pytest.raises(ValueError, match="set `data_root`"):
        data.train_test("mnist", "")


def test_a_set_of_another_dataset_is_refused(tmp_path):
    d = DistilledSet(torch.zeros(10, 1, 28, 28), torch.arange(10), 10, (0.5,), (0.5,), "random", "fashion-mnist")
    d.save(tmp_path / "r.pt")
    assert DistilledSet.load(tmp_path / "r.pt", "fashion-mnist").dataset == "fashion-mnist"
    with pytest.raises(SetError, match="set the same `dataset`"):
        DistilledSet.load(tmp_path / "r.pt", "mnist")


# --- the paper paths on tiny folders -------------------------------------------------------------------


def _student(dataset, tr, steps=2):
    return E.EvalConfig(
        arch="convnet",
        arch_kwargs={"width": 8, "depth": 3, "norm": "batch"},
        steps=steps,
        batch_size=8,
        lr=1e-3,
        augmentation="crop_flip",
        **E.crop_flip(dataset, tr.images.shape[-1]),
        label_mode="hard",
        device="cpu",
    )


def test_dd_matching_paper_path_on_a_tiny_cifar10(fake_cifar10):
    tr, te, MEAN, STD = data.train_test("cifar10", fake_cifar10)
    assert tr.images.shape == (20, 3, 32, 32) and len(MEAN) == 3
    strategy = dsa.default_strategy("cifar10")
    values = dict(width=8, batch_real=2, dataset="cifar10", device="cpu", iterations=1, dm_iterations=1)
    values.update(loops_ipc10=[1, 1], loops_ipc50=[1, 1], dsa_strategy=strategy)
    pool = Pool(tr.images, tr.labels, MEAN, STD, tr.num_classes, "cifar10")
    made = {m: M.synthesize(pool, 1, **M.config(1, values)) for m, M in matching.METHODS.items()}
    for m, d in made.items():
        assert d.images.shape == (10, 3, 32, 32) and d.dataset == "cifar10" and len(d.mean) == 3, m
    # DC's ConvNet keeps 32 px inputs as they are (the 3-px first padding is for 28-px digits)
    assert models.dc_first_padding(3, 32) == 1 and models.dc_first_padding(1, 28) == 3
    net = networks.build_network(3, 32, 10, 0, "convnet", {"width": 8, "depth": 3, "norm": "instance"})
    assert net(torch.zeros(2, 3, 32, 32)).shape == (2, 10)
    jobs = [runner.Job({"method": m}, d, _student("cifar10", tr), 0, cost=2) for m, d in made.items()]
    rows = runner.evaluate_many(jobs, te.images, te.labels, workers=0)
    assert [r["method"] for r in rows] == ["dc", "dsa", "dm"] and all(0.0 <= r["acc"] <= 1.0 for r in rows)


def test_dd_kip_paper_path_on_a_tiny_cifar10(fake_cifar10):
    tr, te, MEAN, STD = data.train_test("cifar10", fake_cifar10)
    kip = kernel.kip_synthesize(
        tr.images,
        tr.labels,
        1,
        10,
        MEAN,
        STD,
        kernel="rbf",
        gamma=1.0,
        reg=1e-6,
        iterations=2,
        target_batch=10,
        lr=0.01,
        learn_labels=True,
        seed=0,
        dataset="cifar10",
    )
    ls = kernel.ls_synthesize(
        tr.images,
        tr.labels,
        1,
        10,
        MEAN,
        STD,
        kernel="rbf",
        gamma=1.0,
        reg=1e-6,
        target_size=20,
        seed=0,
        dataset="cifar10",
    )
    assert kip.images.shape == ls.images.shape == (10, 3, 32, 32) and kip.dataset == ls.dataset == "cifar10"
    x_test = to_float(te.images, MEAN, STD).flatten(1)
    k = kernel.make_kernel(gamma=1.0, name="rbf")
    acc = kernel.krr_accuracy(kip.images.flatten(1), kernel.support_targets(kip), x_test, te.labels, k, 1e-6)
    assert 0.0 <= acc <= 1.0
    (row,) = runner.evaluate_many(
        [runner.Job({"method": "KIP"}, kip, _student("cifar10", tr), 0, cost=2)], te.images, te.labels, workers=0
    )
    assert 0.0 <= row["acc"] <= 1.0


def test_dd_dc_arch_paper_path_on_a_tiny_mnist(fake_mnist, tmp_path):
    tr, te, MEAN, STD = data.train_test("mnist", fake_mnist)
    assert tr.images.shape == (30, 1, 28, 28)
    arch = {"width": 8, "depth": 3, "activation": "leaky_relu", "pooling": "max", "norm": "layer"}
    dc = synthesis.dc_synthesize(
        tr.images,
        tr.labels,
        1,
        10,
        MEAN,
        STD,
        arch_kwargs=arch,
        iterations=1,
        outer_loop=1,
        inner_loop=1,
        batch_real=2,
        seed=0,
        dataset="mnist",
    )
    ds = synthesis.dc_synthesize(
        tr.images,
        tr.labels,
        1,
        10,
        MEAN,
        STD,
        arch_kwargs=arch,
        iterations=1,
        outer_loop=1,
        inner_loop=1,
        batch_real=2,
        seed=0,
        dsa_strategy=dsa.default_strategy("mnist"),
        dataset="mnist",
    )
    assert dc.dataset == ds.dataset == "mnist" and "flip" not in ds.params["dsa_strategy"]
    assert dc.params["arch_kwargs"]["first_padding"] == 3  # DC's network on 28-px digits
    # the coresets it compares with must come from the same dataset
    dc.save(tmp_path / "random_ipc1.pt")
    assert DistilledSet.load(tmp_path / "random_ipc1.pt", "mnist").dataset == "mnist"
    with pytest.raises(SetError, match="dataset"):
        DistilledSet.load(tmp_path / "random_ipc1.pt", "fashion-mnist")
    cfg = _student("mnist", tr).replace(arch_kwargs=arch)
    assert cfg.flip is False
    (row,) = runner.evaluate_many([runner.Job({"set": "DC"}, dc, cfg, 0, cost=2)], te.images, te.labels, workers=0)
    assert 0.0 <= row["acc"] <= 1.0
