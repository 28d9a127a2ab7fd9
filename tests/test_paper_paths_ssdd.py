"""The SSDD stages' paper path (Yu, Yao & Chiu, ICLR 2025): at ``scale: paper`` the three stages resolve
to the paper's CIFAR-100 setting (Sec. 4, App. A.1, Table 5), the ``cpu`` default resolves to the same
calls as before, and each stage's paper path runs a step or two on a tiny CIFAR-100 folder in its real
on-disk format."""

import pytest
import torch

from compendium.core import augment, data, models
from compendium.distill import ssdd
from compendium.distill.ssdd import experiments
from compendium.pipeline.schemas import ssdd_distill, ssdd_eval, ssdd_teacher
from compendium.ssl import methods as ssl_methods
from compendium.ssl import train
from conftest import params_at, params_file, write_fake_imagenette, write_fake_tiny_imagenet

pytestmark = pytest.mark.usefixtures("one_thread")

SCHEMAS = {"ssdd_teacher": ssdd_teacher, "ssdd_distill": ssdd_distill, "ssdd_eval": ssdd_eval}


at, _raw = params_at, params_file


# --- the configuration -------------------------------------------------------------------------------


def test_paper_scale_is_the_papers_cifar100_setting():
    t, d, e = at("paper", "ssdd_teacher"), at("paper", "ssdd_distill"), at("paper", "ssdd_eval")
    assert {t["dataset"], d["dataset"], e["dataset"]} == {"cifar100"}  # Sec. 4: CIFAR-100 source
    assert t["data_root"] and t["data_root"] == d["data_root"] == e["data_root"]
    # App. A.1: a Barlow Twins ResNet-18 teacher, 512-d representation, on the whole source set
    assert t["arch"] == "resnet18" and t["width"] == 64 and t["lambd"] == 0.005
    assert t["train_n"] == t["pool_n"] == 50_000
    kw = experiments.teacher_kwargs(t["arch"], t["width"], 3, 32)
    assert kw == {"in_channels": 3, "image_size": 32, "width_mult": 1.0, "stem": "small"}
    # Sec. 4 / Table 5: N = 100, U = V = 2N, image bases 3x16x16 (s = 2), rotations, Q of hidden 4
    assert d["budget_n"] == e["budget_n"] == 100 and d["budgets"] == e["budgets"] == [25, 50, 100]
    assert d["basis_mult"] == 2 and d["s"] == 2 and d["augmentation"] == "rotation" and d["hidden"] == 4
    # App. A.1: L = 10, Z = 1,000, AdamW lr 1e-3 for 30,000 outer steps; KRR-ST code: 1,024 real images
    assert (d["pool_size"], d["pool_steps"], d["lr"], d["steps"], d["real_batch"]) == (10, 1000, 0.001, 30000, 1024)
    # App. A.1 / Table 5: 1,000 pre-training epochs, SGD lr 0.1, weight decay 1e-3 at N = 100; 3 runs
    assert (e["pre_epochs"], e["pre_lr"], e["pre_wd"]) == (1000, 0.1, 0.001) and e["seeds"] == [0, 1, 2]
    assert e["probe_train_n"] == 50_000 and e["probe_test_n"] == 10_000
    plan_uv = min(d["basis_mult"] * d["budget_n"], 3 * (32 // d["s"]) ** 2, 512)
    assert plan_uv == 200  # Table 5: U = V = 200 at N = 100
    for stage, mod in SCHEMAS.items():
        assert mod.check(at("paper", stage)) == [], stage


def test_cpu_default_keys_keep_todays_behaviour():
    t, d, e = at("cpu", "ssdd_teacher"), at("cpu", "ssdd_distill"), at("cpu", "ssdd_eval")
    assert (t["dataset"], t["data_root"], t["arch"]) == ("fashion-mnist", "", "convnet")
    assert (d["dataset"], d["data_root"], e["dataset"], e["data_root"]) == ("fashion-mnist", "", "fashion-mnist", "")
    assert experiments.teacher_kwargs("convnet", 16) == dict(
        in_channels=1, image_size=28, width=16, depth=3, norm="batch", global_pool=False
    )
    assert experiments.probe_spec(train_n=5000, test_n=2000, low_per_class=10, epochs=20, seed=0) == ssdd.ProbeSpec(
        train_n=5000, test_n=2000, low_per_class=10, epochs=20, seed=0
    )
    assert experiments.source_stats() == (experiments.MEAN, experiments.STD)
    inner = experiments.inner_spec(torch.zeros(2, 1, 28, 28), 16)
    assert inner == {"arch": "convnet", "kwargs": dict(in_channels=1, image_size=28, width=16, depth=3, norm="batch")}
    assert set(experiments.cache_record(torch.arange(2), {}, 0, {})) == {"index", "targets", "seed", "specs"}
    assert experiments.student_kwargs(["convnet"], width=16)["convnet"]["in_channels"] == 1
    for stage, mod in SCHEMAS.items():
        assert mod.check(at("cpu", stage)) == [], stage


@pytest.mark.parametrize("stage", list(SCHEMAS))
def test_a_non_shipped_source_needs_data_root_before_any_compute(stage):
    values = dict(at("paper", stage), data_root="")
    errs = SCHEMAS[stage].check(values)
    assert any(e.startswith("data_root:") and "cifar100" in e and "set `data_root`" in e for e in errs), errs


def test_other_paper_checks_name_their_key():
    t = at("paper", "ssdd_teacher")
    assert any(e.startswith("pool_n:") for e in ssdd_teacher.check(dict(t, pool_n=50_001)))
    assert any(e.startswith("untrained_seeds:") for e in ssdd_teacher.check(dict(t, untrained_seeds=[3, 3])))
    assert ssdd_teacher.check(dict(t, untrained_seeds=[0, 1])) == []
    assert at("paper", "ssdd_distill")["matching_methods"] == []  # the paper profile makes no DSA / DM set of its own


# --- the paper path on a tiny CIFAR-100 --------------------------------------------------------------


def test_the_three_stages_paper_path_runs_on_a_tiny_cifar100(fake_cifar100, monkeypatch, tmp_path):
    root, name = fake_cifar100, "cifar100"
    # ssdd_teacher: a ResNet-18 (tiny width) trained with Barlow Twins on the source, its own probe
    tr = experiments.source_train(name, root)
    assert tr.images.shape == (200, 3, 32, 32) and tr.num_classes == 100
    MEAN, STD = experiments.source_stats(name, root)
    assert len(MEAN) == len(STD) == 3
    KW = experiments.teacher_kwargs("resnet18", 8, tr.images.shape[1], tr.images.shape[2])
    torch.manual_seed(0)
    bb = models.build("resnet18", **KW)
    assert bb.feature_dim == 64  # 8 x the first-stage width
    method = ssl_methods.build("barlow_twins", bb, head_mult=0.01, lambd=0.005)
    cfg = train.PretrainConfig(epochs=1, batch_size=32, seed=0, device="cpu", bf16=False, channels_last=False)
    train.pretrain(
        method, tr.images[:64], cfg, augment.preset("barlow_twins", size=32, small_images=True), list(MEAN), list(STD)
    )
    bb = bb.cpu().eval()
    spec = experiments.probe_spec(name, root, train_n=200, test_n=100, low_per_class=1, epochs=1)
    assert spec.targets == ("cifar100",)
    acc = ssdd.probe(bb, spec, 0)
    assert set(acc) == {"cifar100", "cifar100 low-label"} and all(0.0 <= v <= 1.0 for v in acc.values())
    assert ssdd.features(ssdd.pooled(bb), torch.zeros(2, 3, 32, 32)).shape == (2, 64)
    index = data.subset_indices(len(tr), 200, 0)
    real = experiments.pool_images(index, name, root)
    teacher = ssdd.Teacher(bb, "barlow_twins", MEAN, STD)
    targets = {"barlow_twins": teacher(real)}
    cache = experiments.cache_record(index, targets, 0, {"barlow_twins": "x"}, name)
    assert cache["dataset"] == name
    torch.save(cache, tmp_path / "targets.pt")
    monkeypatch.setattr(experiments.paths, "find_artifact", lambda rel: tmp_path / "targets.pt")
    assert experiments.teacher_cache(name)["dataset"] == name
    with pytest.raises(ssdd.SSDDError, match="dataset"):
        experiments.teacher_cache("fashion-mnist")

    # ssdd_distill: SSDD and KRR-ST at a budget of 2 images (bases at 3N so that m fits the tiny pool), the inner
    # ConvNet-3 at 32 px, 3 channels
    inner = experiments.inner_spec(real, 8)
    assert inner["kwargs"]["in_channels"] == 3 and inner["kwargs"]["depth"] == 3
    plan = experiments.DistillPlan(
        budget_n=2,
        budgets=[2],
        basis_mult=3,
        s=2,
        augmentation="rotation",
        hidden=4,
        approx_variants=[],
        approx_steps=3,
        ablation_augmentations=[],
        ablation_inits=[],
        free_teachers=[],
        steps=2,
        lr=1e-3,
        krrst_lr=1e-4,
        seed=0,
        d_img=real[0].numel(),
        d_xb=3 * 16 * 16,
        dims={"barlow_twins": 64},
    )
    jobs = [experiments.job(plan, "SSDD", "ssdd", 2), experiments.job(plan, "KRR-ST", "krr_st", 2)]
    assert jobs[0]["budget"] == 2 * 3072 and jobs[0]["u"] == 6
    dcfg = ssdd.DistillConfig(steps=2, real_batch=16, pool=ssdd.PoolConfig(size=2, max_steps=3), seed=0)
    made = experiments.synthesize_all(jobs, real, targets, {"barlow_twins": teacher}, inner, dcfg, workers=0)
    sets = {ts.extra["name"]: ts for ts in made}
    assert sets["SSDD"].images.shape[1:] == (3, 32, 32) and sets["SSDD"].targets.shape[1] == 64
    assert all(ts.floats <= ts.params["budget"] for ts in made)

    # ssdd_eval: a ConvNet student pre-trained on the SSDD set, probed on CIFAR-100; the full-data control
    arch = experiments.student_kwargs(["convnet"], 3, 32, width=8)
    pre = ssdd.PretrainConfig(epochs=1, batch_size=256, lr=0.1, momentum=0.9, weight_decay=1e-3)
    res = ssdd.evaluate_set(sets["SSDD"].images, sets["SSDD"].targets, "convnet", arch["convnet"], pre, spec, 0)
    assert set(res["acc"]) == {"cifar100", "cifar100 low-label"}
    full = experiments.full_data_set(index, 10, teacher, name, root)
    assert full.images.shape == (10, 3, 32, 32) and full.targets.shape == (10, 64)


@pytest.mark.parametrize(
    "name, write, size, depth, method, basis_mult",
    [
        ("tiny-imagenet", write_fake_tiny_imagenet, 64, 4, "ssdd", 12),  # bases leave m = 31 images of a 48-image pool
        ("imagenette", write_fake_imagenette, 128, 5, "krr_st", 2),
    ],
)  # KRR-ST stores its 2 images whole
def test_the_distillation_path_at_64_and_128_px(name, write, size, depth, method, basis_mult, tmp_path):
    """SSDD's Tiny-ImageNet (Tables 6, 7) and ImageNette (Table 9) sources: 64 and 128 px, s = 4 and 8 (images to 16 px
    bases), approximation networks of hidden width 16, a 4- and 5-block ConvNet inside and as the student."""
    root = write(tmp_path / "ext", per_class=12)
    tr = experiments.source_train(name, str(root))
    assert tr.images.shape[1:] == (3, size, size) and experiments.convnet_depth(size) == depth
    MEAN, STD = experiments.source_stats(name, str(root))
    torch.manual_seed(0)
    bb = models.build("resnet18", **experiments.teacher_kwargs("resnet18", 8, 3, size))
    teacher = ssdd.Teacher(bb.eval(), "barlow_twins", MEAN, STD)
    real = experiments.pool_images(torch.arange(len(tr)), name, str(root))
    targets = {"barlow_twins": teacher(real)}
    inner = experiments.inner_spec(real, 8)
    assert inner["kwargs"]["depth"] == depth and inner["kwargs"]["image_size"] == size
    s = size // 16
    plan = experiments.DistillPlan(
        budget_n=2,
        budgets=[2],
        basis_mult=basis_mult,
        s=s,
        augmentation="rotation",
        hidden=16,
        approx_variants=[],
        approx_steps=2,
        ablation_augmentations=[],
        ablation_inits=[],
        free_teachers=[],
        steps=2,
        lr=1e-3,
        krrst_lr=1e-4,
        seed=0,
        d_img=real[0].numel(),
        d_xb=3 * 16 * 16,
        dims={"barlow_twins": 64},
    )
    dcfg = ssdd.DistillConfig(steps=2, real_batch=4, pool=ssdd.PoolConfig(size=2, max_steps=2), seed=0)
    made = experiments.synthesize_all(
        [experiments.job(plan, method, method, 2)], real, targets, {"barlow_twins": teacher}, inner, dcfg, workers=0
    )
    assert made[0].images.shape[1:] == (3, size, size) and made[0].floats <= made[0].params["budget"]
    arch = experiments.student_kwargs(["convnet"], 3, size, width=8)
    assert arch["convnet"]["depth"] == depth and arch["convnet"]["global_pool"]
    spec = experiments.probe_spec(name, str(root), train_n=len(tr), test_n=4, low_per_class=1, epochs=1)
    pre = ssdd.PretrainConfig(epochs=1, batch_size=8, lr=0.1, momentum=0.9, weight_decay=1e-3)
    res = ssdd.evaluate_set(made[0].images, made[0].targets, "convnet", arch["convnet"], pre, spec, 0)
    assert all(0.0 <= v <= 1.0 for v in res["acc"].values())
