"""The cross-key checks of the ReLA stages' parameters (each schema module's ``check``), on the
project's own parameters at every scale and on broken ones."""

import pytest

from compendium.pipeline import params
from compendium.pipeline.schemas import priors, rela_arch, rela_budget


def values(section, scale="smoke", **change):
    p = params.load()
    p["scale"] = scale
    return {"scale": scale, **params.resolve(p, section), **change}


@pytest.mark.parametrize("scale", params.SCALES)
def test_the_project_parameters_pass(scale):
    for module in (priors, rela_arch, rela_budget):
        assert module.check(values(module.SECTION, scale)) == []


def test_priors_check():
    errs = priors.check(values("priors", priors=["rand", "trained:priors/cifar10_byol.pt"]))
    assert len(errs) == 1 and errs[0].startswith("priors: ['trained:priors/cifar10_byol.pt']")
    errs = priors.check(values("priors", cross_dataset="fashion-mnist", dataset="fashion-mnist"))
    assert any(e.startswith("cross_dataset:") for e in errs)
    errs = priors.check(values("priors", train_n=60_001, dataset="fashion-mnist"))
    assert errs == ["train_n: 60001 > the 60000 training images of fashion-mnist; lower train_n"]


def test_rela_budget_check():
    v = values("rela_budget")
    errs = rela_budget.check({**v, "same_dataset_prior": "trained:priors/other.pt"})
    assert len(errs) == 1 and errs[0].startswith("same_dataset_prior: ")
    errs = rela_budget.check({**v, "cross_dataset_prior": "x", "headline_budget": 0.33})
    assert [e.split(":")[0] for e in errs] == ["cross_dataset_prior", "headline_budget"]


def test_rela_arch_check():
    errs = rela_arch.check(values("rela_arch", students=["convnet", "alexnet"]))
    assert errs == [
        "students: unknown ['alexnet']; known: ['convnet', 'resnet18', 'mobilenet_v2', 'efficientnet_b0', 'vit_tiny']"
    ]


def test_priors_check_refuses_a_replicate_of_the_priors_own_seed_or_a_repeated_one():
    for bad in ([0, 1], [1, 1]):
        errs = priors.check(values("priors", seed=0, replicate_seeds=bad))
        assert len(errs) == 1 and errs[0].startswith("replicate_seeds:")
    assert priors.check(values("priors", seed=0, replicate_seeds=[])) == []
