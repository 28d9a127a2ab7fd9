"""DD / SLDD / poisoning (compendium.distill.unrolled.dd): the learned-rate and soft-label updates, the regimes'
samplers, the label initialisation of the similar-classes experiment, kNN and the baselines' layout."""

import pytest
import torch

from compendium.distill.unrolled import dd as D
from compendium.verdicts import claims
from compendium.distill.unrolled import unroll as U


def _toy(n=400, seed=0, classes=3):
    """Images whose class is a bright band at a class-specific row range (learnable in a few steps)."""
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(n) % classes
    x = 0.3 * torch.randn((n, 1, 28, 28), generator=g)
    for c in range(classes):
        x[y == c, :, 4 + 8 * c : 10 + 8 * c, :] += 2.0
    return x, y


def test_label_init_separate_and_shared():
    labels = torch.tensor([0, 2, 5, 1])
    sep = D.label_init(labels, 10, "separate", own=0.9)
    assert torch.allclose(sep.sum(1), torch.ones(4))
    assert torch.allclose(sep[torch.arange(4), labels], torch.full((4,), 0.9))
    sh = D.label_init(labels, 10, "shared", own=0.6, groups=[[0, 2, 4, 6], [5, 7, 9]])
    assert torch.allclose(sh.sum(1), torch.ones(4))
    # image of class 0: 0.2 spread over its mates 2, 4, 6; 0.2 over the six other classes
    assert sh[0, 2] == pytest.approx(0.2 / 3) and sh[0, 1] == pytest.approx(0.2 / 6)
    # class 1 belongs to no group: like "separate"
    assert torch.allclose(sh[3], D.label_init(labels[3:], 10, "separate", own=0.6)[0])
    with pytest.raises(ValueError):
        D.label_init(labels, 10, "mixed")


def test_poison_map():
    y = torch.tensor([7, 1, 7, 5])
    assert D.poison_map(y, 7, 5).tolist() == [5, 1, 5, 5]


def test_samplers():
    p0 = U.initial_params(D.classifier(0))
    fixed = D.fixed_init(p0)
    assert fixed(0) is fixed(5)
    rnd = D.random_init(seed=3)
    a, b, a2 = rnd(0), rnd(1), D.random_init(seed=3)(0)
    k = next(iter(a))
    assert not torch.equal(a[k], b[k]) and torch.equal(a[k], a2[k])
    pool = D.pool_init([p0, U.initial_params(D.classifier(1))], seed=0)
    assert {id(pool(i)) for i in range(20)} == {id(x) for x in pool.__closure__[1].cell_contents} or len(
        {id(pool(i)) for i in range(20)}
    ) == 2
    with pytest.raises(ValueError):
        D.sampler_for("fixed_pretrained", pool=[])
    with pytest.raises(ValueError):
        D.sampler_for("warm")


def test_xavier_init_is_seeded_and_scaled():
    a, b = D.classifier(4, init="xavier"), D.classifier(4, init="xavier")
    for (n, p), q in zip(a.named_parameters(), b.parameters()):
        assert torch.equal(p, q)
        if n.endswith("bias"):
            assert (p == 0).all()
    w = dict(a.named_parameters())["0.body.0.weight"]
    bound = (6 / (1 * 25 + 6 * 25)) ** 0.5
    assert w.abs().max() <= bound and w.abs().max() > 0.8 * bound


def test_config_errors():
    x, y = _toy(20)
    with pytest.raises(ValueError, match="at least one image per class"):
        D.distill(D.classifier(0), D.random_init(), x, y, D.DDConfig(size=5, steps=1, iterations=1), num_classes=10)
    with pytest.raises(ValueError, match="equal steps"):
        D.distill(D.classifier(0), D.random_init(), x, y, D.DDConfig(size=10, steps=3, iterations=1))


def test_plateau_stop_checks_every_k_steps_with_the_claims_test():
    plateaued = claims.plateaued
    flat = [2.0 - 1.0 * min(i, 20) / 20 for i in range(60)]  # falls for 20 steps, then flat
    falling = [2.0 - i / 60 for i in range(60)]
    on = D.DDConfig(plateau_every=10, min_iterations=30)
    assert plateaued("x", flat, "n").met and not plateaued("x", falling, "n").met
    assert D.plateau_reached(flat[:60], on) and not D.plateau_reached(flat[:59], on)  # only every 10th step
    assert not D.plateau_reached(flat[:20], on)  # before min_iterations
    assert not D.plateau_reached(falling, on)
    assert not D.plateau_reached(flat, D.DDConfig())  # off by default
    with pytest.raises(ValueError, match="plateau_every"):
        D._check(D.DDConfig(size=10, steps=1, plateau_every=-1), 10)


def test_distill_stops_at_a_plateau_within_its_cap():
    x, y = _toy()
    net = D.classifier(0, num_classes=3)
    theta = U.initial_params(D.classifier(0, num_classes=3, init="xavier"))
    cfg = dict(size=6, steps=2, epochs=2, iterations=400, batch_real=64, lr_img=0.1, init_lr=0.05)
    r = D.distill(net, D.fixed_init(theta), x, y, D.DDConfig(**cfg, plateau_every=10, min_iterations=20), num_classes=3)
    n = len(r.loss_trace)
    assert 20 <= n < 400 and n % 10 == 0 and D.plateau_reached(r.loss_trace, D.DDConfig(plateau_every=10))
    r_cap = D.distill(
        net, D.fixed_init(theta), x, y, D.DDConfig(**dict(cfg, iterations=15), plateau_every=10), num_classes=3
    )
    assert len(r_cap.loss_trace) <= 15


def test_dd_learns_images_and_rates_and_is_deterministic():
    torch.manual_seed(0)
    x, y = _toy()
    net = D.classifier(0, num_classes=3)
    theta = U.initial_params(D.classifier(0, num_classes=3, init="xavier"))
    cfg = D.DDConfig(size=6, steps=2, epochs=2, iterations=25, batch_real=64, lr_img=0.1, init_lr=0.05)
    r = D.distill(net, D.fixed_init(theta), x, y, cfg, num_classes=3)
    assert r.lrs.shape == (4,) and (r.lrs > 0).all()
    assert not torch.allclose(r.lrs, torch.full((4,), 0.05))  # the step sizes were learned
    assert sum(r.loss_trace[-5:]) / 5 < r.loss_trace[0] - 0.3  # the outer loss fell
    xt, yt = _toy(300, seed=1)
    acc = D.accuracy(net, D.train_with(net, theta, r.images, r.targets, r.lrs, 2, 2), xt, yt)
    noise_acc = D.accuracy(net, D.train_with(net, theta, torch.randn(6, 1, 28, 28), r.labels, r.lrs, 2, 2), xt, yt)
    assert acc > 0.9 and acc > noise_acc + 0.2
    r2 = D.distill(net, D.fixed_init(theta), x, y, cfg, num_classes=3)
    assert torch.equal(r.images, r2.images) and torch.equal(r.lrs, r2.lrs)


def test_distill_and_fit_run_on_their_device(request):
    x, y = _toy(120)
    theta = U.initial_params(D.classifier(0, num_classes=3, init="xavier"))
    cfg = D.DDConfig(size=3, steps=1, epochs=2, iterations=4, batch_real=32, learn_labels=True)
    ref = D.distill(D.classifier(0, num_classes=3), D.fixed_init(theta), x, y, cfg, num_classes=3)
    ref_fit = D.fit(D.classifier(0, num_classes=3), theta, x, y, steps=3, batch=16)
    moves = request.getfixturevalue("module_moves")  # recorded from here on
    r = D.distill(D.classifier(0, num_classes=3), D.fixed_init(theta), x, y, cfg, num_classes=3, device="cpu")
    fitted = D.fit(D.classifier(0, num_classes=3), theta, x, y, steps=3, batch=16, device="cpu")
    assert [m[1] for m in moves] == ["cpu", "cpu"], moves  # the learner of the unroll, then the fitted network
    assert r.loss_trace == ref.loss_trace and torch.equal(r.targets, ref.targets) and r.images.device.type == "cpu"
    assert all(torch.equal(fitted[k], ref_fit[k]) for k in ref_fit)


def test_sldd_learns_labels_as_distributions():
    x, y = _toy()
    net = D.classifier(0, num_classes=3)
    theta = U.initial_params(D.classifier(0, num_classes=3, init="xavier"))
    cfg = D.DDConfig(size=2, steps=1, epochs=2, iterations=15, batch_real=64, learn_labels=True, lr_label=0.1)
    r = D.distill(net, D.fixed_init(theta), x, y, cfg, num_classes=3)  # 2 images for 3 classes: only with labels
    assert r.targets.shape == (2, 3) and r.targets.is_floating_point()
    assert torch.allclose(r.targets.sum(1), torch.ones(2)) and (r.targets >= 0).all()
    start = D.label_init(r.labels, 3, "separate", 0.9)
    assert (r.targets - start).abs().max() > 0.01  # the labels moved
    assert sum(r.loss_trace[-3:]) / 3 < r.loss_trace[0]


def test_poisoning_objective_targets_the_mapped_labels():
    x, y = _toy()
    net = D.classifier(0, num_classes=3)
    trained = D.fit(net, U.initial_params(D.classifier(0, num_classes=3)), x, y, steps=60, batch=64, lr=3e-3)
    xt, yt = _toy(300, seed=2)
    assert D.accuracy(net, trained, xt, yt) > 0.9
    cfg = D.DDConfig(size=3, steps=1, epochs=1, iterations=30, batch_real=96, lr_img=0.05, init_lr=0.01)
    r = D.distill(net, D.fixed_init(trained), x, y, cfg, num_classes=3, relabel=lambda t: D.poison_map(t, 0, 1))
    after = D.predict(net, D.train_with(net, trained, r.images, r.targets, r.lrs, 1, 1), xt)
    assert (after[yt == 0] == 1).float().mean() > 0.5  # class 0 now predicted as 1
    assert (after[yt == 2] == 2).float().mean() > 0.8  # class 2 kept


def test_knn_accuracy():
    xtr = torch.tensor([[0.0, 0.0], [10.0, 10.0], [0.0, 1.0]]).view(3, 1, 1, 2)
    ytr = torch.tensor([0, 1, 0])
    xte = torch.tensor([[0.2, 0.1], [9.0, 9.5], [5.5, 5.5]]).view(3, 1, 1, 2)
    assert D.knn_accuracy(xtr, ytr, xte, torch.tensor([0, 1, 1])) == pytest.approx(1.0)
    assert D.knn_accuracy(xtr, ytr, xte, torch.tensor([0, 1, 1]), k=3) == pytest.approx(1 / 3)  # majority: class 0
    soft = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
    assert D.knn_accuracy(xtr, soft, xte, torch.tensor([0, 1, 1])) == pytest.approx(1.0)


def test_class_cyclic_and_class_accuracy():
    labels = torch.tensor([0, 0, 1, 1, 2, 2])
    x = torch.arange(6).float().view(6, 1, 1, 1)
    xc, yc = D.class_cyclic(x, labels)
    assert yc.tolist() == [0, 1, 2, 0, 1, 2] and xc.flatten().tolist() == [0, 2, 4, 1, 3, 5]
    acc = D.class_accuracy(torch.tensor([0, 1, 1, 1]), torch.tensor([0, 0, 1, 1]), 3)
    assert acc[0] == 0.5 and acc[1] == 1.0 and torch.isnan(acc[2])


def test_best_constant_lr_picks_the_grid_value_that_trains():
    x, y = _toy(60)
    thetas = [U.initial_params(D.classifier(1, num_classes=3, init="xavier"))]
    xv, yv = _toy(200, seed=3)
    lr = D.best_constant_lr("lenet", thetas, x[:6], y[:6], 1, 3, xv, yv, [1e-6, 0.1])
    assert lr == 0.1
