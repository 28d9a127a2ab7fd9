import math
import statistics

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from compendium.distill import evaluate as E
from compendium.distill import sets

C, S = 4, 8  # classes, image side
MEAN, STD = (0.3,), (0.4,)


def _toy(n_per_class: int, seed: int):
    """Linearly separable uint8 images: class c has a bright horizontal band at rows 2c, 2c + 1."""
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(C).repeat_interleave(n_per_class)
    x = torch.randint(0, 40, (len(y), 1, S, S), generator=g)
    rows = torch.arange(S).view(1, S, 1)
    band = (rows // 2 == y.view(-1, 1, 1)).unsqueeze(1)
    x = torch.where(band, x + 180, x)
    return x.to(torch.uint8), y


def _set(n_per_class=5, seed=0, **kw):
    x, y = _toy(n_per_class, seed)
    return sets.from_real(x, y, torch.arange(len(y)), C, MEAN, STD, "toy", **kw)


TEST_X, TEST_Y = _toy(25, 123)


pytestmark = pytest.mark.usefixtures("one_thread")


def _cfg(**kw):
    base = dict(
        arch="convnet",
        arch_kwargs={"width": 8, "depth": 2, "norm": "none"},
        steps=40,
        batch_size=8,
        lr=1e-2,
        augmentation="none",
        device="cpu",
        eval_batch_size=256,
    )
    return E.EvalConfig(**{**base, **kw})


def _params(net):
    return torch.cat([p.detach().flatten() for p in net.parameters()])


class LinearTeacher(nn.Module):
    def __init__(self, seed=5, scale=3.0):
        super().__init__()
        torch.manual_seed(seed)
        self.fc = nn.Linear(S * S, C)
        with torch.no_grad():
            self.fc.weight.mul_(scale)

    def forward(self, x):
        return self.fc(x.flatten(1))


def test_same_seed_same_accuracy_and_weights():
    d = _set()
    cfg = _cfg(augmentation="crop_flip", crop_padding=1, mixup_alpha=0.5, steps=15)
    a = E.evaluate(d, TEST_X, TEST_Y, cfg, seed=3, return_model=True)
    b = E.evaluate(d, TEST_X, TEST_Y, cfg, seed=3, return_model=True)
    c = E.evaluate(d, TEST_X, TEST_Y, cfg, seed=4, return_model=True)
    assert a["final_acc"] == b["final_acc"] and a["final_loss"] == b["final_loss"]
    assert torch.equal(_params(a["model"]), _params(b["model"]))
    assert not torch.equal(_params(a["model"]), _params(c["model"]))
    # the caller's global RNG is left untouched
    torch.manual_seed(0)
    E.evaluate(d, TEST_X, TEST_Y, cfg.replace(steps=2), seed=9)
    after = torch.rand(3)
    torch.manual_seed(0)
    assert torch.equal(after, torch.rand(3))


def test_hard_labels_on_separable_toy_reach_full_accuracy():
    r = E.evaluate(_set(), TEST_X, TEST_Y, _cfg(steps=60, eval_every_steps=20), seed=0)
    assert r["final_acc"] == 1.0 and r["best_acc"] == 1.0
    assert [h["step"] for h in r["history"]] == [20, 40, 60]
    assert r["steps"] == 60 and r["train_seconds"] > 0


def test_student_matches_independent_accuracy_count():
    r = E.evaluate(_set(), TEST_X, TEST_Y, _cfg(steps=3), seed=1, return_model=True)
    net = r["model"]
    with torch.no_grad():
        pred = net((TEST_X.float() / 255 - MEAN[0]) / STD[0]).argmax(1)
    assert r["final_acc"] == pytest.approx(float((pred == TEST_Y).float().mean()))


def test_teacher_mode_pulls_student_towards_teacher():
    d = _set()
    teacher = LinearTeacher()
    T = 2.0
    cfg = _cfg(label_mode="teacher", temperature=T, steps=80, mixup_alpha=0.8)
    with torch.no_grad():
        p_t = F.softmax(teacher(d.images) / T, 1)

    def kl(net):
        with torch.no_grad():
            return float(F.kl_div(F.log_softmax(net(d.images) / T, 1), p_t, reduction="batchmean"))

    before = kl(E.build_student(cfg, (1, S, S), C, seed=0).eval())
    r = E.evaluate(d, TEST_X, TEST_Y, cfg, seed=0, teacher=teacher, return_model=True)
    after = kl(r["model"])
    assert after < 0.25 * before
    # the caller's teacher is neither moved nor switched to eval mode
    assert teacher.training and teacher.fc.weight.device.type == "cpu"


def test_teacher_sees_the_same_augmented_batch_as_the_student():
    d = _set()
    augmented, seen = [], []

    def dsa(x, g):
        out = x + 0.1 * torch.randn(x.shape, generator=g)
        augmented.append(out.clone())
        return out

    teacher = LinearTeacher()
    teacher.register_forward_hook(lambda m, inp, out: seen.append(inp[0].clone()))
    E.evaluate(d, TEST_X, TEST_Y, _cfg(label_mode="teacher", augmentation="dsa", dsa=dsa, steps=4), teacher=teacher)
    seen = seen[1:]  # the first call is the shape check (eval mode, before training)
    assert len(seen) == len(augmented) == 4
    assert all(torch.equal(a, s) for a, s in zip(augmented, seen))


def test_soft_mode_learns_the_stored_soft_labels():
    d = _set()
    shifted = (d.labels + 1) % C  # soft labels that contradict the hard ones
    soft = torch.full((len(d), C), 0.1 / (C - 1))
    soft[torch.arange(len(d)), shifted] = 0.9
    d = d.with_soft_labels(soft, "contradicting")
    cfg = _cfg(steps=80)
    soft_run = E.evaluate(d, TEST_X, (TEST_Y + 1) % C, cfg.replace(label_mode="soft"), seed=0)
    hard_run = E.evaluate(d, TEST_X, (TEST_Y + 1) % C, cfg, seed=0)
    assert soft_run["final_acc"] >= 0.95 and hard_run["final_acc"] <= 0.05


def test_kd_loss_is_the_kl_divergence_and_t2_scales():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(6, C, generator=g)
    p = F.softmax(torch.randn(6, C, generator=g), 1)
    T = 3.0
    q = F.softmax(z / T, 1)
    manual = float((p * (p.log() - q.log())).sum(1).mean())
    assert float(E.kd_loss(z, p, T)) == pytest.approx(manual, rel=1e-5)
    assert float(E.kd_loss(z, p, T, t2_scale=True)) == pytest.approx(T * T * manual, rel=1e-5)
    assert float(E.kd_loss(p.log() * T, p, T)) == pytest.approx(0.0, abs=1e-6)


def test_distillation_ratio_and_size_on_hand_numbers():
    assert E.distillation_ratio(0.45, 0.9) == pytest.approx(0.5)
    sizes, accs = [100, 10, 50, 500], [0.80, 0.40, 0.72, 0.88]
    assert E.distillation_size(sizes, accs, 0.9, 80) == 50  # 0.72 >= 0.8 * 0.9 exactly
    assert E.distillation_size(sizes, accs, 0.9, 85) == 100  # 0.765 <= 0.80
    assert E.distillation_size(sizes, accs, 0.9, 40) == 10
    assert E.distillation_size(sizes, accs, 0.9, 99) is None  # 0.891 > 0.88
    with pytest.raises(ValueError):
        E.distillation_ratio(0.5, 0.0)
    with pytest.raises(ValueError):
        E.distillation_size([1, 2], [0.5], 0.9, 50)


def test_bad_inputs_are_refused_before_training(monkeypatch):
    def no_training(*a, **k):
        raise AssertionError("trained despite bad input")

    monkeypatch.setattr(E, "_fit", no_training)
    d = _set()
    bad = [
        (_cfg(arch="no_such_net"), {}, "unknown arch"),
        (_cfg(optimizer="rmsprop"), {}, "unknown optimizer"),
        (_cfg(label_mode="fuzzy"), {}, "unknown label mode"),
        (_cfg(label_mode="teacher"), {}, "needs a teacher"),
        (_cfg(label_mode="soft"), {}, "no soft labels"),
        (_cfg(augmentation="dsa"), {}, "needs cfg.dsa"),
        (_cfg(augmentation="autoaugment"), {}, "unknown augmentation"),
        (_cfg(schedule="linear"), {}, "unknown schedule"),
        (_cfg(steps=0), {}, "steps"),
        (_cfg(temperature=0.0), {}, "temperature"),
        (_cfg(eval_every=1, eval_every_steps=1), {}, "not both"),
        (_cfg(), {"test_images_u8": TEST_X[:, :, :6, :6]}, "test images have shape"),
        (_cfg(), {"test_images_u8": TEST_X.float()}, "uint8"),
        (_cfg(), {"test_labels": TEST_Y[:-1]}, "test labels"),
    ]
    for cfg, kw, msg in bad:
        args = {"test_images_u8": TEST_X, "test_labels": TEST_Y, **kw}
        with pytest.raises(ValueError, match=msg):
            E.evaluate(d, cfg=cfg, **args)
    with pytest.raises(ValueError, match="unknown arch"):
        E.evaluate(d, TEST_X, TEST_Y, _cfg(arch="no_such_net"))
    with pytest.raises(ValueError, match="bad arch_kwargs"):
        E.build_student(_cfg(arch_kwargs={"widthh": 4}), (1, S, S), C)
    with pytest.raises(ValueError, match="unknown evaluation preset"):
        E.preset("mtt")


def test_teacher_with_wrong_output_is_refused():
    with pytest.raises(ValueError, match="logits"):
        E.evaluate(_set(), TEST_X, TEST_Y, _cfg(label_mode="teacher", steps=1), teacher=nn.Flatten())


def test_steps_and_epochs_count_optimiser_steps():
    d = _set(n_per_class=5)  # 20 images
    calls = []

    def dsa(x, g):
        calls.append(x.shape[0])
        return x

    cfg = _cfg(augmentation="dsa", dsa=dsa, steps=None, epochs=3, batch_size=8)
    r = E.evaluate(d, TEST_X, TEST_Y, cfg)
    assert r["steps"] == 9 == E.total_steps(20, cfg) and calls == [8, 8, 4] * 3 and r["epochs"] == 3
    calls.clear()
    r = E.evaluate(d, TEST_X, TEST_Y, cfg.replace(steps=7, batch_size=32))  # batch larger than the set
    assert r["steps"] == 7 and calls == [32] * 7
    calls.clear()
    r = E.evaluate(d, TEST_X, TEST_Y, cfg.replace(epochs=2, batch_size=128))  # "400 epochs x batch 128"
    assert r["steps"] == 2 and calls == [20, 20]


def test_batch_schedule_covers_every_image_evenly():
    g = torch.Generator().manual_seed(0)
    epochs = list(E.batch_schedule(10, 4, g, epochs=2))
    assert [len(b) for b in epochs] == [4, 4, 2] * 2
    assert sorted(torch.cat(epochs[:3]).tolist()) == list(range(10))
    steps = list(E.batch_schedule(10, 4, g, steps=13))
    assert len(steps) == 13 and all(len(b) == 4 for b in steps)
    counts = torch.bincount(torch.cat(steps), minlength=10)
    assert int(counts.sum()) == 52 and int(counts.max() - counts.min()) <= 1
    big = list(E.batch_schedule(3, 7, g, steps=3))
    assert int(torch.bincount(torch.cat(big), minlength=3).min()) == 7


def test_mixup_alpha_zero_leaves_batch_unchanged_and_positive_alpha_mixes():
    x = torch.randn(6, 1, 4, 4)
    out, perm, lam = E.mixup(x, 0.0, np.random.default_rng(0))
    assert out is x and perm is None and lam == 1.0
    g = torch.Generator().manual_seed(0)
    out, perm, lam = E.mixup(x, 0.8, np.random.default_rng(0), g)
    assert 0 < lam < 1 and sorted(perm.tolist()) == list(range(6))
    assert torch.allclose(out, lam * x + (1 - lam) * x[perm])
    assert lam == pytest.approx(np.random.default_rng(0).beta(0.8, 0.8))


def test_random_crop_is_a_window_of_the_padded_image():
    b, p = 16, 2
    x = torch.arange(b * 2 * 5 * 5, dtype=torch.float32).view(b, 2, 5, 5)
    fill = torch.tensor([-1.0, -2.0]).view(1, 2, 1, 1)
    out = E.random_crop(x, p, fill, torch.Generator().manual_seed(0))
    assert out.shape == x.shape
    padded = F.pad(x - fill, (p,) * 4) + fill
    offsets = set()
    for i in range(b):
        hits = [
            (oy, ox)
            for oy in range(2 * p + 1)
            for ox in range(2 * p + 1)
            if torch.equal(out[i], padded[i, :, oy : oy + 5, ox : ox + 5])
        ]
        assert len(hits) == 1
        offsets.add(hits[0])
    assert len(offsets) > 3  # offsets differ between images
    assert torch.equal(E.random_crop(x, 0), x)
    assert torch.allclose(E.pad_value((0.5,), (0.25,)), torch.tensor(-2.0))


def test_learning_rate_schedules():
    cfg = _cfg(lr=0.1)
    assert E.lr_at(0, 10, cfg) == pytest.approx(0.1)
    assert E.lr_at(5, 10, cfg) == pytest.approx(0.05)
    assert E.lr_at(9, 10, cfg) == pytest.approx(0.05 * (1 + math.cos(0.9 * math.pi)))
    step = cfg.replace(schedule="step")
    assert [E.lr_at(s, 10, step) for s in (0, 4, 5, 9)] == pytest.approx([0.1, 0.1, 0.01, 0.01])
    assert E.lr_at(7, 10, cfg.replace(schedule="constant")) == 0.1


def test_relabel_stores_softmax_of_teacher_over_t():
    d = _set()
    teacher = LinearTeacher()
    r = E.relabel(d, teacher, T=4.0, device="cpu")
    with torch.no_grad():
        expect = F.softmax(teacher(d.images) / 4.0, 1)
    assert torch.allclose(r.soft_labels, expect, atol=1e-6)
    assert torch.equal(r.images, d.images) and torch.equal(r.labels, d.labels)
    assert "T=4.0" in r.params["relabel"] and d.soft_labels is None and teacher.training
    with pytest.raises(ValueError):
        E.relabel(d, teacher, T=0)


def test_seed_summary_and_upper_bound():
    d = _set()
    cfg = _cfg(steps=6)
    s = E.evaluate_seeds(d, TEST_X, TEST_Y, cfg, seeds=(0, 1, 2))
    assert len(s["accs"]) == 3 and s["mean"] == pytest.approx(statistics.mean(s["accs"]))
    assert s["std"] == pytest.approx(statistics.stdev(s["accs"]))  # sample std
    assert s["cell_text"] == f"{100 * s['mean']:.1f} ± {100 * s['std']:.1f}"
    assert E.cell_text(0.8234, 0.0041) == "82.3 ± 0.4"
    assert E.cell_text(0.8234, 0.0, n=1) == "82.3" and E.cell_text(0.8234, 0.0041, n=2) == "82.3 ± 0.4"
    x, y = _toy(30, 7)
    ub = E.whole_dataset_upper_bound(x, y, TEST_X, TEST_Y, cfg.replace(steps=40, label_mode="soft"), mean=MEAN, std=STD)
    assert ub["final_acc"] == 1.0 and ub["label_mode"] == "hard" and ub["n_train"] == 120


def test_teacher_in_train_mode_runs_on_a_copy():
    teacher = nn.Sequential(nn.BatchNorm2d(1), nn.Flatten(), nn.Linear(S * S, C))
    before = {k: v.clone() for k, v in teacher.state_dict().items()}
    teacher.eval()
    cfg = _cfg(label_mode="teacher", teacher_train_mode=True, steps=3)
    r = E.evaluate(_set(), TEST_X, TEST_Y, cfg, teacher=teacher)
    assert r["steps"] == 3 and not teacher.training
    assert all(torch.equal(v, before[k]) for k, v in teacher.state_dict().items())


def test_presets_and_record():
    import json

    dwa = E.preset("dwa", temperature=20.0)
    assert (dwa.label_mode, dwa.mixup_alpha, dwa.temperature, dwa.epochs, dwa.batch_size) == (
        "teacher",
        0.8,
        20.0,
        400,
        128,
    )
    assert E.preset("dc").optimizer == "sgd" and E.preset("dwa_steps").steps == 3000
    for name in ("dc", "dwa", "dwa_steps"):
        E.validate_config(E.preset(name))

    def my_dsa(x, g):
        return x

    rec = json.loads(json.dumps(E.preset("dc", augmentation="dsa", dsa=my_dsa).record()))
    assert rec["dsa"] == "my_dsa" and rec["optimizer"] == "sgd"


def test_test_subset_is_class_balanced_and_ordered():
    labels = torch.arange(3).repeat(10)
    images = torch.arange(30, dtype=torch.uint8).view(30, 1, 1, 1).expand(30, 1, 2, 2).contiguous()
    x, y = E.test_subset(images, labels, 9)
    assert torch.bincount(y).tolist() == [3, 3, 3]
    assert x[:, 0, 0, 0].tolist() == sorted(x[:, 0, 0, 0].tolist()) == list(range(9))
    assert E.test_subset(images, labels, 0)[1] is labels and len(E.test_subset(images, labels, 100)[1]) == 30
    with pytest.raises(ValueError, match="classes"):
        E.test_subset(images, labels, 2)
