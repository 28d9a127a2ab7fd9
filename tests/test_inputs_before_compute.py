"""A stage's inputs are checked before its compute starts: the prior checkpoints and target files
that the ReLA arms read (:func:`compendium.rela.experiment.check_priors`, run by ``run_many`` before
any arm trains), the shipped data files a stage reads (its schema's ``DATA``, verified by ``nbrun``
before the kernel starts), and the smoke-scale supervised prior, which must learn so that the smoke
pipeline can notice a broken one."""

import json

import pytest
import torch

from compendium.core import data, models
from compendium.pipeline import params
from compendium.rela import experiment, priors, targets
from compendium.ssl import train
from conftest import requires_data

KW = dict(width=4, depth=2, norm="batch", global_pool=True)
STUDENT = {"in_channels": 1, "image_size": 12, **KW}


def tiny_setup(n=64):
    g = torch.Generator().manual_seed(0)
    images = torch.randint(0, 256, (n, 1, 12, 12), generator=g, dtype=torch.uint8)
    labels = torch.arange(n) % 4
    return experiment.Setup(
        images,
        labels,
        images[:32],
        labels[:32],
        (0.5,),
        (0.25,),
        epochs=1,
        batch_size=16,
        head_mult=0.1,
        probe_epochs=1,
        num_classes=4,
        device="cpu",
    )


def _stage(tmp_path, s, *, checkpoint=True, sidecar_kwargs=None, target_file=True, prior_dim=None):
    """A priors stage's outputs in ``tmp_path``: one trained prior and its targets in the index."""
    ckpt = tmp_path / "priors" / "p.pt"
    torch.manual_seed(0)
    bb = models.build("convnet", **STUDENT)
    if checkpoint:
        priors.save_backbone(bb, ckpt, "convnet", STUDENT, s.mean, s.std, 12)
        if sidecar_kwargs is not None:  # the sidecar names another architecture than the weights are
            meta = json.loads(ckpt.with_name("p.pt.json").read_text())
            meta["kwargs"] = {**meta["kwargs"], **sidecar_kwargs}
            ckpt.with_name("p.pt.json").write_text(json.dumps(meta))
    spec = f"trained:{ckpt}"
    if target_file:
        torch.save({"values": torch.randn(len(s.images), bb.feature_dim)}, tmp_path / "t.pt")
    entry = {
        "prior": spec,
        "file": "t.pt",
        "n": bb.feature_dim,
        "prior_dim": prior_dim or bb.feature_dim,
        "order": "code",
        "seed": 0,
        "student": STUDENT,
        "arch": "convnet",
    }
    index = targets.write_index(
        tmp_path / "index.json",
        dataset="fashion-mnist",
        mean=s.mean,
        std=s.std,
        indices=list(range(len(s.images))),
        targets=[entry],
    )
    return spec, targets.TargetBank(s, index)


def _arms(spec):
    return [
        experiment.Arm("BYOL", arch_kwargs=KW, budget=0.5),
        experiment.Arm("ReLA", arch_kwargs=KW, budget=0.5, prior=spec),
    ]


@pytest.fixture
def no_training(monkeypatch):
    """``experiment.run`` records the arms it was asked to train instead of training them."""
    ran = []
    monkeypatch.setattr(
        experiment, "run", lambda arm, *a, **k: ran.append(arm.name) or experiment.Result({}, [], None, [])
    )
    return ran


def test_good_inputs_pass_and_leave_the_random_state_alone(tmp_path, no_training):
    s = tiny_setup()
    spec, bank = _stage(tmp_path, s)
    torch.manual_seed(123)
    before = torch.rand(3)
    torch.manual_seed(123)
    experiment.check_priors(_arms(spec), s, bank, also=[spec, "rand"])
    assert torch.equal(torch.rand(3), before)
    experiment.run_many(_arms(spec), s, bank, workers=0)
    assert no_training == ["BYOL", "ReLA"]


@pytest.mark.parametrize(
    "broken", ["missing checkpoint", "missing sidecar", "wrong architecture", "damaged checkpoint", "stale targets"]
)
def test_a_broken_prior_checkpoint_stops_the_stage_before_any_arm_trains(tmp_path, no_training, broken):
    s = tiny_setup()
    spec, bank = _stage(
        tmp_path,
        s,
        checkpoint=broken != "missing checkpoint",
        sidecar_kwargs={"width": 8} if broken == "wrong architecture" else None,
        prior_dim=99 if broken == "stale targets" else None,
    )
    ckpt = tmp_path / "priors" / "p.pt"
    if broken == "missing sidecar":
        ckpt.with_name("p.pt.json").unlink()
    if broken == "damaged checkpoint":
        ckpt.write_bytes(ckpt.read_bytes()[:100])
    with pytest.raises(priors.PriorError) as err:
        experiment.run_many(_arms(spec), s, bank, workers=0)
    assert no_training == []
    msg = str(err.value)
    assert "p.pt" in msg and "dvc repro priors" in msg and "before any arm trains" in msg
    if broken == "stale targets":
        assert "99" in msg and "out of step" in msg


def test_a_missing_checkpoint_is_not_reusable_and_is_reported_with_the_fix(tmp_path, no_training):
    """rela_budget asks whether BYOL* can reuse the same-dataset prior while it builds its arms: a
    missing checkpoint is then "no", and the check before training names the file and the fix."""
    s = tiny_setup()
    spec = f"trained:{tmp_path / 'priors' / 'gone.pt'}"
    full = experiment.Arm("BYOL 100%", arch_kwargs=KW, budget=1.0)
    assert not experiment.reusable(spec, full, s)
    with pytest.raises(priors.PriorError, match=r"gone\.pt.*dvc repro priors"):
        experiment.check_priors([full], s, None, also=[spec])


def test_a_prior_read_only_after_training_is_checked_too(tmp_path):
    """A stage probes its priors after the arms trained (rela_budget's prior quality): ``also``."""
    s = tiny_setup()
    spec, bank = _stage(tmp_path, s)
    missing = f"trained:{tmp_path / 'priors' / 'other.pt'}"
    with pytest.raises(priors.PriorError, match=r"other\.pt.*dvc repro priors"):
        experiment.check_priors(_arms(spec), s, bank, also=[missing])


def test_a_missing_target_file_names_it_and_the_fix_before_any_arm_trains(tmp_path, no_training):
    s = tiny_setup()
    spec, bank = _stage(tmp_path, s, target_file=False)
    with pytest.raises(priors.PriorError, match=r"t\.pt \(targets of prior .*\) is missing.*dvc repro priors"):
        experiment.run_many(_arms(spec), s, bank, workers=0)
    assert no_training == []
    (tmp_path / "t.pt").write_bytes(b"not a torch file")
    with pytest.raises(priors.PriorError, match=r"t\.pt \(targets of prior .*\) cannot be read.*dvc repro priors"):
        experiment.run_many(_arms(spec), s, bank, workers=0)
    assert no_training == []


def test_a_random_network_of_another_architecture_must_be_in_the_index(tmp_path, no_training):
    s = tiny_setup()
    _, bank = _stage(tmp_path, s)
    arm = experiment.Arm("r", arch="resnet18", arch_kwargs=dict(width_mult=0.125), prior="rand:convnet")
    with pytest.raises(priors.PriorError, match=r"rand:convnet.*no such random network.*dvc repro priors"):
        experiment.run_many([experiment.Arm("BYOL", arch_kwargs=KW, budget=0.5), arm], s, bank, workers=0)
    assert no_training == []


def test_verify_refuses_a_name_that_is_not_a_shipped_dataset(tiny_data):
    with pytest.raises(ValueError, match=r"'digit'.*not shipped datasets"):
        data.verify(("digit",), tiny_data)


@pytest.mark.parametrize("scale", params.SCALES)
def test_every_rela_stage_verifies_the_shipped_datasets_it_reads(scale):
    """The priors stage reads `dataset` and `cross_dataset` (the digits at cpu scale): both, when
    shipped, must be in its DATA, which nbrun verifies before the kernel starts."""
    for stage in ("priors", "rela_budget", "rela_arch", "rela_methods", "rela_ablations"):
        values = params.stage_params(stage, scale=scale)
        read = {values[k] for k in ("dataset", "cross_dataset") if k in values} & set(data.SHIPPED)
        declared = set(params.stage_module(stage).DATA)
        assert read <= declared, f"{stage} at {scale} reads {sorted(read - declared)} without verifying it first"


@requires_data
def test_the_smoke_supervised_prior_learns(one_thread):
    """At smoke scale the supervised prior is trained as the priors notebook trains it; its test
    accuracy must be well above chance (0.1), else the smoke pipeline cannot notice a broken prior.
    (1 epoch of 2,000 images at batch 256 was 7 steps: the loss stayed at ln 10 and the accuracy at 0.10.)"""
    v = params.stage_params("priors", scale="smoke")
    tr, te = data.load_dataset(v["dataset"], "train"), data.load_dataset(v["dataset"], "test")
    idx = data.subset_indices(len(tr), v["train_n"], v["seed"])
    images, labels = tr.images[idx], tr.labels[idx]
    mean, std = data.normalisation(v["dataset"], images)
    kw = dict(
        in_channels=1, image_size=28, width=v["width"], depth=v["depth"], norm=v["norm"], global_pool=v["global_pool"]
    )
    torch.manual_seed(v["seed"])
    sup = models.build("convnet", **kw)
    test = data.subset_indices(len(te), 2000, 0)
    records = train.train_classifier(
        sup,
        images,
        labels,
        tr.num_classes,
        train.SupervisedConfig(
            epochs=v["sup_epochs"], batch_size=v["sup_batch_size"], lr=v["sup_lr"], seed=v["seed"], device="cpu"
        ),
        list(mean),
        list(std),
        test=(te.images[test], te.labels[test]),
    )
    assert records[-1]["test_acc"] > 0.3
