"""The labelled distillation methods' contract (``compendium.distill.methods``): one registry per family, one call
signature, each method's configuration checked before any compute, the papers' settings in one place; each
method through the contract makes exactly the set its implementation makes when called directly."""

import pytest
import torch

from compendium.distill import evaluate as E
from compendium.distill import gvbsm as G
from compendium.distill import inversion as I
from compendium.distill.matching import synthesis
from compendium.distill.methods import inversion, matching, papers
from compendium.distill.methods.base import DistillMethod, Pool, registry
from compendium.pipeline import params
from compendium.pipeline.checks import labelled, unrolled
from compendium.pipeline.schemas import dd_inversion, dd_matching

pytestmark = pytest.mark.usefixtures("one_thread")

MEAN, STD = (0.5,), (0.25,)
FAMILIES = {"matching": matching.METHODS, "inversion": inversion.METHODS}


def _pool(n=12, size=8, classes=3):
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, 256, (n, 1, size, size), generator=g, dtype=torch.uint8)
    return Pool(x, torch.arange(n) % classes, MEAN, STD, classes, "fashion-mnist")


def _net(seed=0, classes=3, size=8):
    kw = {"width": 4, "depth": 2, "norm": "batch"}
    return E.build_student(E.EvalConfig(arch="convnet", arch_kwargs=kw), (1, size, size), classes, seed=seed).eval()


def _values(stage):
    return params.resolve(dict(params.load(), scale="smoke"), stage)


def _same(a, b):
    assert torch.equal(a.images, b.images) and torch.equal(a.labels, b.labels)
    assert (a.soft_labels is None) == (b.soft_labels is None)
    assert a.soft_labels is None or torch.equal(a.soft_labels, b.soft_labels)
    strip = ("synthesis_seconds", "seconds")
    assert {k: v for k, v in a.params.items() if k not in strip} == {
        k: v for k, v in b.params.items() if k not in strip
    }


def test_each_family_registers_its_methods_with_their_papers():
    assert list(matching.METHODS) == ["dc", "dsa", "dm"]
    assert list(inversion.METHODS) == ["sre2l", "dwa", "rded", "gvbsm"]
    for family, methods in FAMILIES.items():
        for name, m in methods.items():
            assert m.name == name and m.family == family and m.label and m.paper, m
            assert m.label == papers.PAPERS[name].label and m.settings is papers.PAPERS[name].settings


def test_the_stages_choices_and_the_judges_paper_iterations_come_from_the_registry():
    assert dd_matching.SCHEMA["methods"].choices == ("dc", "dsa", "dm")
    assert dd_inversion.SCHEMA["methods"].choices == ("sre2l", "dwa", "rded", "gvbsm")
    assert labelled.PAPER_ITERATIONS["DM"] == 20000 == papers.iterations("DM") == unrolled.MATCHING_ITERATIONS["dm"]
    assert labelled.PAPER_ITERATIONS["G-VBSM"] == 4000 and labelled.PAPER_ITERATIONS["DWA"] == 1000


def test_matching_methods_through_the_contract_equal_their_implementations():
    pool, v = _pool(), dict(_values("dd_matching"), width=4, iterations=1, dm_iterations=2, batch_real=4)
    v.update(dsa_strategy="color_crop", device="cpu")
    common = dict(
        arch_kwargs={"width": 4, "depth": 3, "norm": "instance"}, batch_real=4, seed=0, dataset="fashion-mnist"
    )
    common["device"] = "cpu"
    loops = dict(iterations=1, outer_loop=1, inner_loop=1)
    direct = {
        "dc": synthesis.dc_synthesize(pool.images, pool.labels, 1, 3, MEAN, STD, **common, **loops, dsa_strategy=None),
        "dsa": synthesis.dc_synthesize(
            pool.images, pool.labels, 1, 3, MEAN, STD, **common, **loops, dsa_strategy="color_crop"
        ),
        "dm": synthesis.dm_synthesize(pool.images, pool.labels, 1, 3, MEAN, STD, **common, iterations=2),
    }
    for name, m in matching.METHODS.items():
        _same(m.synthesize(pool, 1, **m.config(1, v)), direct[name])
    # DC's loops by ipc: 1 at ipc 1, loops_ipc10 at 10 and at any ipc without its own, loops_ipc50 at 50
    v = dict(v, loops_ipc10=[10, 50], loops_ipc50=[50, 10])
    dc = matching.METHODS["dc"]
    assert [(dc.config(i, v)["outer_loop"], dc.config(i, v)["inner_loop"]) for i in (1, 10, 20, 50)] == [
        (1, 1),
        (10, 50),
        (10, 50),
        (50, 10),
    ]


def test_inversion_methods_and_the_ladder_through_the_contract_equal_their_implementations():
    pool, teacher = _pool(), _net()
    v = dict(_values("dd_inversion"), iterations=2, rded_images_per_class=4, rded_factor=1, gvbsm_iterations=2)
    v.update(num_classes=3, crop_padding=1)
    v.update(backbones=[_net(1)], conv_stats=[G.conv_statistics(_net(1), pool.images, MEAN, STD)])
    common = dict(
        iterations=2,
        lr=v["lr"],
        jitter=v["jitter"],
        seed=0,
        dataset="fashion-mnist",
        classes_per_batch=None,
        flip=False,
        crop_scale=None,
    )
    x, y = pool.images, pool.labels
    direct = {
        "sre2l": I.sre2l_synthesize(teacher, x, y, 1, MEAN, STD, **common),
        "dwa": I.dwa_synthesize(
            teacher, x, y, 1, MEAN, STD, **common, rho=v["rho"], K=v["K"], r_var=float(v["dwa_r_var"])
        ),
        "rded": I.rded_synthesize(
            x, y, teacher, 1, MEAN, STD, factor=1, images_per_class=4, seed=0, dataset="fashion-mnist"
        ),
        "gvbsm": G.gvbsm_synthesize(
            v["backbones"],
            v["conv_stats"],
            x,
            y,
            1,
            MEAN,
            STD,
            iterations=2,
            lr=v["gvbsm_lr"],
            relabel_teacher=teacher,
            seed=0,
            dataset="fashion-mnist",
            num_classes=3,
            crop_padding=1,
        ),
        "D: real init": I.inversion_synthesize(teacher, x, y, 1, MEAN, STD, **common, method="sre2l+real", init="real"),
        "F: + random adjust": I.dwa_synthesize(
            teacher, x, y, 1, MEAN, STD, **common, method="dwa-random", weight_adjust="random", rho=v["rho"]
        ),
    }
    arms = {m: (m, {}) for m in inversion.METHODS} | inversion.ladder(v)
    for arm, want in direct.items():
        name, over = arms[arm]
        m = inversion.METHODS[name]
        _same(m.synthesize(pool, 1, teacher, **{**m.config(1, v), **over}), want)


def test_a_bad_configuration_is_refused_before_any_compute(monkeypatch):
    dm = matching.METHODS["dm"]
    monkeypatch.setattr(type(dm), "run", lambda *a, **k: pytest.fail("computed"))
    with pytest.raises(ValueError, match="dm: iterations: must be >= 1"):
        dm.synthesize(_pool(), 1, iterations=0)
    with pytest.raises(ValueError, match="ipc must be a positive integer"):
        dm.synthesize(_pool(), 0, iterations=1)
    sre2l = inversion.METHODS["sre2l"]
    with pytest.raises(ValueError, match="pass teacher="):
        sre2l.synthesize(_pool(), 1, **sre2l.config(1, _values("dd_inversion")))


def test_the_stage_checks_name_the_stage_key():
    v = _values("dd_matching")
    assert dd_matching.check(v) == []
    (msg,) = dd_matching.check(dict(v, methods=["dc", "dm"], loops_ipc10=[0, 5]))
    assert msg.startswith("loops_ipc10 / loops_ipc50: must be >= 1") and "(dc at ipc 10)" in msg
    v = _values("dd_inversion")
    assert dd_inversion.check(v) == []
    (msg,) = dd_inversion.check(dict(v, rho=-1.0))
    assert msg.startswith("rho: must be >= 0") and "(dwa at ipc 1, 10)" in msg
    (msg,) = dd_inversion.check(dict(v, dwa_r_var=11.0, methods=["gvbsm"], gvbsm_iterations=0))
    assert msg.startswith("gvbsm_iterations:")


def test_a_new_method_is_one_class_and_one_registry_line():
    class Copy(DistillMethod):
        """A toy method: the first ``ipc`` real images of each class."""

        name, label, paper, family = "first", "First", "a toy", "matching"

        def config(self, ipc, values):
            return {}

        def run(self, pool, ipc, teacher, **cfg):
            keep = torch.cat([(pool.labels == c).nonzero()[:ipc, 0] for c in range(pool.num_classes)])
            return synthesis.DistilledSet(
                (pool.images[keep].float() / 255 - 0.5) / 0.25,
                pool.labels[keep],
                pool.num_classes,
                pool.mean,
                pool.std,
                "first",
                pool.dataset,
            )

    methods = registry(*matching.METHODS.values(), Copy())
    assert list(methods) == ["dc", "dsa", "dm", "first"]
    assert methods["first"].synthesize(_pool(), 2).images.shape == (6, 1, 8, 8)
    assert methods["first"].stage_problems({"ipcs": [1, 10]}) == []
    with pytest.raises(ValueError, match="two methods are named 'dc'"):
        registry(*matching.METHODS.values(), matching.METHODS["dc"])
