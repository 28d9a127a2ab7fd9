"""dd_mnemonics' paper path: at ``scale: paper`` the stage runs Mnemonics' CIFAR-100 under the LUCIR protocol (50 base
classes, then 2 per phase; 5 and 10 per phase as the fewer-phase runs) with DWA's CIFAR-100 memory, and the ``cpu``
default stays on Fashion-MNIST; the class-incremental run goes a step on a tiny CIFAR-100 folder."""

import matplotlib
import matplotlib.pyplot

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402

from compendium.core import data  # noqa: E402
from compendium.core.probe import to_float  # noqa: E402
from compendium.distill.sets import SetError, from_real  # noqa: E402
from compendium.distill.unrolled import figures, mnemonics as MN, mnemonics_experiment as X  # noqa: E402
from compendium.pipeline import paper_hparams  # noqa: E402
from compendium.pipeline.schemas import dd_mnemonics  # noqa: E402
from conftest import params_at, params_file  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")


def test_paper_scale_is_cifar100_under_the_lucir_protocol():
    v = params_at("paper", "dd_mnemonics")
    assert (v["dataset"], v["base_classes"], v["increment"], v["phase_increments"]) == ("cifar100", 50, 2, [5, 10])
    assert v["data_root"] == params_at("paper", "dd_inversion")["data_root"] and dd_mnemonics.check(v) == []
    assert not {"dc", "dsa", "dm"} & set(v["methods"]) and params_at("paper", "dd_inversion")["dataset"] == "cifar100"
    rows = paper_hparams.compare(params_file()).set_index(["stage", "key"])
    assert rows.loc[("dd_mnemonics", "dataset"), "status"] == "matches"
    cpu = params_at("cpu", "dd_mnemonics")
    assert (cpu["dataset"], cpu["data_root"], cpu["base_classes"], cpu["increment"]) == ("fashion-mnist", "", 5, 1)


def test_the_schema_names_a_phase_split_that_does_not_fit_and_a_missing_data_root():
    v = params_at("paper", "dd_mnemonics")
    errs = dd_mnemonics.check(dict(v, increment=3, data_root=""))
    assert any(e.startswith("increment: 3 does not split the 50 classes") for e in errs)
    assert any(e.startswith("data_root:") for e in errs)


def test_class_incremental_cifar100_with_a_dwa_memory(fake_cifar100):
    tr, te, MEAN, STD = data.train_test("cifar100", fake_cifar100)
    order = list(range(tr.num_classes))
    idx = torch.arange(0, len(tr), 2)  # one image per class: a stand-in for DWA's set, in another normalisation
    dwa = from_real(tr.images, tr.labels, idx, 100, (0.5, 0.5, 0.5), (0.25, 0.25, 0.25), "dwa", dataset="cifar100")
    x, y = MN.as_memory_set(dwa, order, MEAN, STD)
    assert x.shape == (100, 3, 32, 32) and torch.allclose(x, to_float(tr.images[idx], MEAN, STD), atol=1e-5)
    cfg = MN.CILConfig(
        num_classes=100,
        base=50,
        increment=25,
        memory=1,
        train_per_class=2,
        width=8,
        depth=2,
        base_steps=1,
        inc_steps=1,
        batch=16,
        mn_iterations=1,
        mn_inner_steps=1,
        mn_val_batch=16,
    )
    tx, ty = to_float(te.images, MEAN, STD), MN.positions(te.labels, order)
    ((call, args, kw),) = X.memory_calls(
        tr,
        tx,
        ty,
        ["random", "herding", "mnemonics", "dwa", "none"],
        cfg,
        [0],
        {"dwa": (x, y)},
        order,
        MEAN,
        STD,
        keep_first=True,
    )
    out = call(*args, **kw)
    assert {m: tuple(a.shape) for m, a in out["acc"].items()} == {
        m: (3, 100) for m in ("random", "herding", "mnemonics", "dwa", "none")
    }
    init, opt_x, lab = out["exemplars"][0]
    fig = figures.mnemonics_exemplars(init, opt_x, lab, [0, 1], ["a", "b"], 1, MEAN, STD)  # colour images
    assert len(fig.axes) == 3
    matplotlib.pyplot.close(fig)


def test_a_memory_of_another_dataset_is_refused(tmp_path, monkeypatch):
    d = from_real(
        torch.zeros(10, 1, 28, 28, dtype=torch.uint8), torch.arange(10), torch.arange(10), 10, (0.5,), (0.5,), "dwa"
    )
    d.save(tmp_path / "dwa.pt")
    monkeypatch.setattr(X.paths, "find_artifact", lambda rel: tmp_path / "dwa.pt")
    with pytest.raises(SetError, match="dataset"):
        X.load_memory_sets(["dwa"], list(range(10)), (0.5,), (0.5,), dataset="cifar100")
