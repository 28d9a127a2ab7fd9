"""Mnemonics training and the class-incremental protocol (compendium.distill.unrolled.mnemonics)."""

import math

import pytest
import torch
import torch.nn.functional as F

from compendium.distill.networks import build_network
from compendium.distill.sets import DistilledSet
from compendium.distill.unrolled import mnemonics as MN

torch.set_num_threads(1)


def tiny_net(classes=3, size=8, seed=0):
    return build_network(1, size, classes, seed, "convnet", {"width": 4, "depth": 1, "norm": "instance"})


def blobs(n_per_class, classes=3, size=8, seed=0):
    """Images whose class is a bright quadrant-ish pattern plus noise."""
    g = torch.Generator().manual_seed(seed)
    protos = torch.randn(classes, 1, size, size, generator=g) * 2
    y = torch.arange(classes).repeat_interleave(n_per_class)
    x = protos[y] + 0.5 * torch.randn(len(y), 1, size, size, generator=g)
    return x, y


# --------------------------------------------------------------------------------------------------
# protocol


def test_phase_schedule_five_plus_one_by_five():
    s = MN.phase_schedule(10, 5, 1)
    assert s == [(0, 1, 2, 3, 4), (5,), (6,), (7,), (8,), (9,)]
    assert MN.seen_counts(s) == [5, 6, 7, 8, 9, 10]
    assert MN.memory_sizes(s, 10) == [0, 50, 60, 70, 80, 90]
    assert MN.phase_schedule(10, 4, 2) == [(0, 1, 2, 3), (4, 5), (6, 7), (8, 9)]
    with pytest.raises(ValueError):
        MN.phase_schedule(10, 5, 2)
    with pytest.raises(ValueError):
        MN.phase_schedule(10, 11, 1)


def test_positions_follow_the_class_order():
    order = [3, 0, 1, 2]
    assert MN.positions(torch.tensor([3, 0, 2, 1]), order).tolist() == [0, 1, 3, 2]
    with pytest.raises(ValueError):
        MN.positions(torch.tensor([0]), [0, 0, 1])


# --------------------------------------------------------------------------------------------------
# the model-level loss


def test_model_loss_lambda_one_is_cross_entropy_over_seen_classes():
    g = torch.Generator().manual_seed(0)
    logits, teacher = torch.randn(6, 10, generator=g), torch.randn(6, 10, generator=g)
    y = torch.tensor([0, 1, 2, 3, 4, 5])
    ce = F.cross_entropy(logits[:, :6], y)
    assert torch.allclose(MN.model_loss(logits, y, 6, teacher, 5, lam=1.0, temperature=2.0), ce)
    assert torch.allclose(MN.model_loss(logits, y, 6), ce)  # phase 0: no teacher
    mixed = MN.model_loss(logits, y, 6, teacher, 5, lam=0.3, temperature=2.0)
    kd = MN.distillation_loss(logits[:, :5], teacher[:, :5], 2.0)
    assert torch.allclose(mixed, 0.3 * ce + 0.7 * kd)
    with pytest.raises(ValueError):
        MN.model_loss(logits, y, 6, teacher, 5, lam=1.5)


def test_distillation_is_zero_for_the_teacher_itself_and_the_scaled_kl_otherwise():
    g = torch.Generator().manual_seed(1)
    t, s = torch.randn(8, 5, generator=g), torch.randn(8, 5, generator=g)
    assert MN.distillation_loss(t.clone(), t, 3.0).abs() < 1e-6
    T = 3.0
    ref = F.kl_div(F.log_softmax(s / T, 1), F.softmax(t / T, 1), reduction="batchmean") * T * T
    got = MN.distillation_loss(s, t, T)
    assert got > 0 and torch.allclose(got, ref, atol=1e-6)
    s.requires_grad_(True)
    MN.distillation_loss(s, t, T).backward()
    assert s.grad.abs().sum() > 0


# --------------------------------------------------------------------------------------------------
# metrics


def test_average_incremental_accuracy_and_forgetting_on_a_hand_made_matrix():
    nan = float("nan")
    # 3 phases: classes {0,1}, then 2, then 3
    acc = torch.tensor([[0.8, 0.6, nan, nan], [0.7, 0.5, 0.9, nan], [0.4, 0.6, 0.3, 1.0]])
    seen = [2, 3, 4]
    assert MN.phase_accuracy(acc, seen) == pytest.approx([0.7, 0.7, 0.575])
    assert MN.average_incremental_accuracy(acc, seen) == pytest.approx((0.7 + 0.7 + 0.575) / 3)
    # class 0: max(0.8, 0.7) - 0.4; class 1: max(0.6, 0.5) - 0.6; class 2: 0.9 - 0.3
    assert MN.forgetting(acc, seen) == pytest.approx((0.4 + 0.0 + 0.6) / 3)
    assert math.isnan(MN.forgetting(acc[:1], [2]))
    with pytest.raises(ValueError):
        MN.average_incremental_accuracy(acc, [2, 4, 4])  # phase 1 would see an unmeasured class


def test_forgetting_can_be_negative_when_accuracy_rises():
    acc = torch.tensor([[0.2, float("nan")], [0.5, 0.9]])
    assert MN.forgetting(acc, [1, 2]) == pytest.approx(-0.3)


# --------------------------------------------------------------------------------------------------
# selection


def test_herding_picks_the_point_nearest_the_mean_then_balances():
    # class 0 at rows 0..2: (1,0), (0,1), (1,1)/sqrt2; class 1 at rows 3..4
    f = torch.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0], [5.0, 0.0], [0.0, 3.0]])
    y = torch.tensor([0, 0, 0, 1, 1])
    picked = MN.herding_exemplars(f, y, [0], 2)
    assert picked.tolist() == [2, 0]  # the diagonal is nearest the mean; then the first of a tie
    assert MN.herding_exemplars(f, y, [1], 1).tolist() == [3]  # tie between the two: the first


def test_random_exemplars_and_balanced_batches():
    y = torch.tensor([0] * 7 + [1] * 3 + [2] * 5)
    g = torch.Generator().manual_seed(0)
    pick = MN.random_exemplars(y, [2, 0], 3, g)
    assert y[pick].tolist() == [2, 2, 2, 0, 0, 0] and len(set(pick.tolist())) == 6
    with pytest.raises(ValueError):
        MN.random_exemplars(y, [1], 4, g)
    b = MN.balanced_batch(y, 12, torch.Generator().manual_seed(0))
    assert torch.bincount(y[b]).tolist() == [4, 3, 4]
    assert len(set(b.tolist())) == len(b)
    a, bb = MN.ab_split(y)
    assert sorted(a.tolist() + bb.tolist()) == list(range(len(y)))
    assert torch.bincount(y[a]).tolist() == [4, 2, 3] and torch.bincount(y[bb]).tolist() == [3, 1, 2]


def test_stratified_subset_is_seeded_and_balanced():
    y = torch.arange(4).repeat(50)
    a, b = MN.stratified_subset(y, 10, 4, 3), MN.stratified_subset(y, 10, 4, 3)
    assert torch.equal(a, b) and torch.bincount(y[a]).tolist() == [10] * 4
    assert not torch.equal(a, MN.stratified_subset(y, 10, 4, 4))


# --------------------------------------------------------------------------------------------------
# the exemplar level


def test_exemplar_step_lowers_the_validation_loss_and_changes_only_the_exemplars():
    model = tiny_net()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    val_x, val_y = blobs(20, seed=1)
    g = torch.Generator().manual_seed(2)
    ex = (0.3 * torch.randn(6, 1, 8, 8, generator=g)).requires_grad_(True)
    ex_y = torch.arange(3).repeat_interleave(2)
    init = ex.detach().clone()
    opt = torch.optim.Adam([ex], lr=0.1)
    kw = dict(n_seen=3, inner_steps=3, inner_lr=0.5)
    first = MN.mnemonics_loss(model, ex, ex_y, val_x, val_y, **kw).item()
    losses = [MN.exemplar_step(model, ex, ex_y, opt, val_x, val_y, **kw) for _ in range(15)]
    last = MN.mnemonics_loss(model, ex, ex_y, val_x, val_y, **kw).item()
    assert losses[0] == pytest.approx(first, rel=1e-5)
    assert last < first - 0.05
    assert not torch.allclose(ex.detach(), init)
    for k, v in model.state_dict().items():
        assert torch.equal(v, before[k]), k
    assert all(p.grad is None for p in model.parameters())


def test_exemplar_step_uses_the_fixed_old_exemplars_and_rejects_non_leaves():
    model = tiny_net()
    val_x, val_y = blobs(5, seed=1)
    ex = torch.zeros(3, 1, 8, 8, requires_grad=True)
    ex_y = torch.tensor([2, 2, 2])
    kw = dict(n_seen=3, inner_steps=2, inner_lr=0.5)
    alone = MN.mnemonics_loss(model, ex, ex_y, val_x, val_y, **kw)
    with_old = MN.mnemonics_loss(model, ex, ex_y, val_x, val_y, fixed_x=val_x[:10], fixed_y=val_y[:10], **kw)
    assert not torch.allclose(alone, with_old)
    with pytest.raises(ValueError):
        MN.exemplar_step(model, ex * 1.0, ex_y, torch.optim.SGD([ex], lr=0.1), val_x, val_y, **kw)


def test_optimise_and_adjust_exemplars_keep_shapes_and_labels():
    model = tiny_net()
    x, y = blobs(6, seed=3)
    g = torch.Generator().manual_seed(0)
    new, trace = MN.optimise_exemplars(model, x[:6], y[:6], x, y, 3, 3, 0.05, 2, 0.5, 9, g)
    assert new.shape == (6, 1, 8, 8) and len(trace) == 3 and not new.requires_grad
    same, empty = MN.optimise_exemplars(model, x[:6], y[:6], x, y, 3, 0, 0.05, 2, 0.5, 9, g)
    assert torch.equal(same, x[:6]) and empty == []
    adj = MN.adjust_old_exemplars(model, x, y, 3, 2, 0.05, 2, 0.5)
    assert adj.shape == x.shape and not torch.allclose(adj, x)
    assert torch.equal(MN.adjust_old_exemplars(model, x, y, 3, 0, 0.05, 2, 0.5), x)


# --------------------------------------------------------------------------------------------------
# the run


def _run(methods, seed=0, **over):
    x, y = blobs(12, classes=4, seed=5)
    tx, ty = blobs(6, classes=4, seed=6)
    sets = {"dc": (x[::3].clone(), y[::3].clone())}  # 4 per class
    kw = dict(
        num_classes=4,
        base=2,
        increment=1,
        memory=3,
        train_per_class=12,
        width=4,
        depth=1,
        base_steps=6,
        inc_steps=3,
        batch=8,
        mn_iterations=2,
        mn_inner_steps=1,
        mn_val_batch=8,
    )
    cfg = MN.CILConfig(**{**kw, **over})
    return MN.run_incremental(x, y, tx, ty, methods, cfg, seed, sets, keep_exemplars=True)


def test_run_incremental_shapes_determinism_and_shared_phase_zero():
    r = _run(["random", "herding", "mnemonics", "dc", "none"], mn_adjust_iterations=1)
    for m, acc in r["acc"].items():
        assert acc.shape == (3, 4)
        assert torch.isnan(acc[0, 2:]).all() and torch.isnan(acc[1, 3:]).all() and torch.isfinite(acc[2]).all()
        assert torch.allclose(
            acc[0], r["acc"]["random"][0], equal_nan=True
        )  # phase 0 is the same network for every method
        assert r["aia"][m] == pytest.approx(MN.average_incremental_accuracy(acc, [2, 3, 4]))
    init, opt, lab = r["exemplars"][0]
    assert init.shape == opt.shape == (6, 1, 8, 8) and lab.tolist() == [0, 0, 0, 1, 1, 1]
    assert not torch.allclose(init, opt)
    r2 = _run(["random", "mnemonics"], mn_adjust_iterations=1)
    assert torch.allclose(r2["acc"]["mnemonics"], r["acc"]["mnemonics"], equal_nan=True)
    assert torch.allclose(r2["acc"]["random"], r["acc"]["random"], equal_nan=True)


def test_run_incremental_validates_before_training():
    with pytest.raises(ValueError, match="unknown exemplar method"):
        _run(["dsa"])
    with pytest.raises(ValueError, match="running statistics"):
        _run(["random"], norm="batch")
    with pytest.raises(ValueError, match="memory"):
        _run(["random"], memory=20)
    with pytest.raises(ValueError, match="fewer than the memory"):
        _run(["dc"], memory=5)  # the set has 4 images per class


def test_as_memory_set_renormalises_and_maps_positions():
    img = torch.rand(4, 1, 2, 2)
    d = DistilledSet(
        images=(img - 0.5) / 0.25,
        labels=torch.tensor([0, 1, 2, 2]),
        num_classes=3,
        mean=(0.5,),
        std=(0.25,),
        method="x",
    )
    x, y = MN.as_memory_set(d, [2, 0, 1], 0.3, 0.4)
    assert torch.allclose(x, (img - 0.3) / 0.4, atol=1e-6)
    assert y.tolist() == [1, 2, 0, 0]
    x2, _ = MN.as_memory_set(d, [0, 1, 2], 0.5, 0.25)
    assert torch.equal(x2, d.images)
