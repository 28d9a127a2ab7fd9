"""Label distillation (Bohdal et al. 2020): the RR solve, its gradient to the labels, the pseudo-gradient
update, the overfitting detector and resets, the second-order label step, and valid label distributions."""

import pytest
import torch
import torch.nn.functional as F

from compendium.distill.networks import build_network
from compendium.distill.unrolled import ld
from compendium.distill.unrolled.unroll import initial_params, outer_loss, soft_cross_entropy, unroll

torch.set_num_threads(1)


def test_ridge_solve_equals_normal_equations_and_lstsq():
    g = torch.Generator().manual_seed(0)
    Phi = ld.add_bias(torch.randn(7, 4, generator=g, dtype=torch.float64))
    Y = torch.randn(7, 3, generator=g, dtype=torch.float64)
    lam = 0.7
    W = ld.ridge_solve(Phi, Y, lam)
    primal = torch.linalg.solve(Phi.T @ Phi + lam * torch.eye(5, dtype=torch.float64), Phi.T @ Y)
    aug = torch.cat([Phi, lam**0.5 * torch.eye(5, dtype=torch.float64)])
    lstsq = torch.linalg.lstsq(aug, torch.cat([Y, torch.zeros(5, 3, dtype=torch.float64)])).solution
    assert W.shape == (5, 3)
    assert torch.allclose(W, primal, atol=1e-10)
    assert torch.allclose(W, lstsq, atol=1e-10)
    # more features than examples (the dual form's case) still matches the primal solution
    Phi2 = torch.randn(4, 9, generator=g, dtype=torch.float64)
    W2 = ld.ridge_solve(Phi2, Y[:4], lam)
    primal2 = torch.linalg.solve(Phi2.T @ Phi2 + lam * torch.eye(9, dtype=torch.float64), Phi2.T @ Y[:4])
    assert torch.allclose(W2, primal2, atol=1e-10)


def test_ridge_solve_rejects_bad_inputs():
    with pytest.raises(ValueError, match="lambda"):
        ld.ridge_solve(torch.randn(3, 2), torch.randn(3, 2), 0.0)
    with pytest.raises(ValueError, match="targets"):
        ld.ridge_solve(torch.randn(3, 2), torch.randn(4, 2), 1.0)


def test_target_loss_gradient_through_rr_solve_matches_finite_differences():
    g = torch.Generator().manual_seed(1)
    f_b = torch.randn(5, 3, generator=g, dtype=torch.float64)
    f_t = torch.randn(6, 3, generator=g, dtype=torch.float64)
    y_t = torch.randint(0, 4, (6,), generator=g)
    W0 = torch.randn(4, 4, generator=g, dtype=torch.float64)

    def loss(logits):
        W_l = ld.ridge_solve(ld.add_bias(f_b), ld.label_distribution(logits), 0.5)
        return F.cross_entropy(ld.rr_logits(f_t, ld.pseudo_gradient_update(W0, W_l, 0.3), 1.7), y_t)

    logits = torch.randn(5, 4, generator=g, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(loss, (logits,), eps=1e-6, atol=1e-7)
    (grad,) = torch.autograd.grad(loss(logits), logits)
    assert grad.abs().max() > 1e-4  # a real signal reaches the labels


def test_pseudo_gradient_update_mixes_and_only_w_local_carries_gradient():
    W = torch.full((3, 2), 2.0, requires_grad=True)
    W_l = torch.full((3, 2), -1.0, requires_grad=True)
    out = ld.pseudo_gradient_update(W, W_l, 0.25)
    assert torch.allclose(out, torch.full((3, 2), 0.75 * 2.0 + 0.25 * -1.0))
    out.sum().backward()
    assert W.grad is None and torch.allclose(W_l.grad, torch.full((3, 2), 0.25))
    assert torch.equal(ld.pseudo_gradient_update(W.detach(), W_l.detach(), 1.0), W_l.detach())
    with pytest.raises(ValueError, match="alpha"):
        ld.pseudo_gradient_update(W, W_l, 0.0)
    with pytest.raises(ValueError, match="shape"):
        ld.pseudo_gradient_update(W, torch.zeros(2, 2), 0.5)


def test_overfit_detector_fires_after_patience_non_improving_steps():
    d = ld.OverfitDetector(patience=3)
    seq = [5.0, 4.0, 3.0, 3.5, 3.2, 3.0]  # best at step 3; steps 4, 5, 6 do not improve (3.0 is not < 3.0)
    fired = [d.update(v) for v in seq]
    assert fired == [False, False, False, False, False, True]
    assert d.times == [3] and d.steps == 0
    # after the restart its statistics are fresh: a high loss is a new minimum, not a non-improving step
    assert d.update(10.0) is False and d.steps == 1
    for v in (11.0, 12.0):
        assert d.update(v) is False
    assert d.update(13.0) is True and d.times == [3, 1]


def test_overfit_detector_smooths_over_its_window():
    d = ld.OverfitDetector(patience=2, window=2)
    # smoothed: -, 3.0, 2.0, 2.5, 2.5 -> best 2.0 at step 3, fires at step 5
    out = [d.update(v) for v in (4.0, 2.0, 2.0, 3.0, 2.0)]
    assert out == [False, False, False, False, True] and d.times == [3]
    with pytest.raises(ValueError):
        ld.OverfitDetector(patience=0)
    with pytest.raises(ValueError, match="non-finite"):
        ld.OverfitDetector(patience=1).update(float("nan"))


def test_reset_draws_new_weights_and_zero_head():
    a, sa, Wa = ld.init_rr_model(1, 28, 10, seed=0, resets=0, arch="mlp", arch_kwargs={"width": 8, "depth": 2})
    b, sb, Wb = ld.init_rr_model(1, 28, 10, seed=0, resets=1, arch="mlp", arch_kwargs={"width": 8, "depth": 2})
    a2, _, _ = ld.init_rr_model(1, 28, 10, seed=0, resets=0, arch="mlp", arch_kwargs={"width": 8, "depth": 2})
    pa, pb, pa2 = (torch.cat([p.flatten() for p in m.parameters()]) for m in (a, b, a2))
    assert not torch.allclose(pa, pb)  # a reset re-initialises Theta
    assert torch.equal(pa, pa2)  # ... reproducibly
    assert Wa.shape == (9, 10) and not Wa.any() and float(sa.detach()) == 1.0 and sa.requires_grad


def _toy(n_base=20, n_target=200, seed=0):
    """Two-class-per-pixel-block images: class c lights block c (10 classes), plus noise."""
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(n_target) % 10
    x = torch.randint(0, 60, (n_target, 1, 28, 28), generator=g).to(torch.uint8)
    for c in range(10):
        r, k = divmod(c, 5)
        x[y == c, :, 4 + 12 * r : 12 + 12 * r, 2 + 5 * k : 6 + 5 * k] = 250
    mean, std = (0.2,), (0.3,)
    from compendium.core.probe import to_float

    return to_float(x[:n_base], mean, std), x, y, mean, std


MLP = {"arch": "mlp", "arch_kwargs": {"width": 16, "depth": 2}}


def test_distill_rr_records_resets_and_gives_valid_moving_labels():
    bx, tu, ty, mean, std = _toy()
    # noisy target batches of 8: the loss stops improving within 40 steps
    d = ld.distill_rr(
        bx,
        tu,
        ty,
        10,
        mean,
        std,
        **MLP,
        steps=40,
        inner_batch=10,
        target_batch=8,
        patience=3,
        window=1,
        label_lr=0.05,
        seed=0,
    )
    s = d.soft_labels
    assert s.shape == (20, 10) and (s >= 0).all() and torch.allclose(s.sum(1), torch.ones(20))
    assert (s - 0.1).abs().max() > 0.05  # the labels moved away from uniform
    T = d.params["times_to_overfit"]
    assert d.params["resets"] >= 1 and len(T) == d.params["resets"] and all(1 <= t <= 40 for t in T)
    again = ld.distill_rr(
        bx,
        tu,
        ty,
        10,
        mean,
        std,
        **MLP,
        steps=40,
        inner_batch=10,
        target_batch=8,
        patience=3,
        window=1,
        label_lr=0.05,
        seed=0,
    )
    assert torch.equal(again.soft_labels, s)  # same seed, same labels


def test_rr_labels_learn_the_toy_task():
    bx, tu, ty, mean, std = _toy()
    d = ld.distill_rr(
        bx,
        tu,
        ty,
        10,
        mean,
        std,
        **MLP,
        steps=60,
        inner_batch=20,
        target_batch=64,
        label_lr=0.1,
        alpha=0.2,
        patience=100,
        window=5,
        seed=0,
    )
    # base image i shows class i % 10: the learned labels should put most mass there
    assert (d.soft_labels.argmax(1) == torch.arange(20) % 10).float().mean() >= 0.8


def test_second_order_label_step_lowers_the_outer_loss():
    bx, tu, ty, mean, std = _toy()
    from compendium.core.probe import to_float

    xt = to_float(tu[:100], mean, std)
    net = build_network(1, 28, 10, 0, "mlp", {"width": 16, "depth": 2})
    params = initial_params(net)
    logits = ld.uniform_logits(20, 10).requires_grad_()
    lrs = torch.tensor([0.5])
    before = ld.second_order_target_loss(net, params, bx, ld.label_distribution(logits), xt, ty[:100], lrs)
    (grad,) = torch.autograd.grad(before, logits)
    assert grad.abs().max() > 0
    with torch.no_grad():
        stepped = logits - 5.0 * grad / grad.norm()
    after = ld.second_order_target_loss(net, params, bx, ld.label_distribution(stepped), xt, ty[:100], lrs)
    assert float(after.detach()) < float(before.detach()) - 1e-4


def test_second_order_step_reuses_the_inner_gradient_for_the_model_step():
    bx, tu, ty, mean, std = _toy()
    from compendium.core.probe import to_float

    xt = to_float(tu[:100], mean, std)
    net = build_network(1, 28, 10, 0, "mlp", {"width": 16, "depth": 2})
    p_b = ld.label_distribution(
        ld.uniform_logits(20, 10) + torch.randn(20, 10, generator=torch.Generator().manual_seed(0))
    )
    for lrs in (torch.tensor([0.5]), torch.tensor([0.5, 0.2])):
        loss, grads = ld.second_order_step(net, initial_params(net), bx, p_b, xt, ty[:100], lrs)
        ref = outer_loss(net, unroll(net, initial_params(net), [(bx, p_b)] * len(lrs), lrs), xt, ty[:100])
        assert torch.allclose(loss, ref, atol=1e-6)
    net.zero_grad()
    soft_cross_entropy(net(bx), p_b).backward()  # the model's own step, as a separate pass would compute it
    assert all(torch.allclose(grads[k], p.grad, atol=1e-6) for k, p in net.named_parameters())


def test_distill_second_order_gives_valid_labels():
    bx, tu, ty, mean, std = _toy()
    d = ld.distill_second_order(
        bx,
        tu,
        ty,
        10,
        mean,
        std,
        **MLP,
        steps=15,
        inner_batch=10,
        target_batch=32,
        inner_lr=0.5,
        label_lr=0.1,
        patience=2,
        window=1,
        seed=0,
    )
    s = d.soft_labels
    assert (s >= 0).all() and torch.allclose(s.sum(1), torch.ones(20)) and (s - 0.1).abs().max() > 0.02
    assert d.method == "ld_second_order" and len(d.params["times_to_overfit"]) == d.params["resets"]


def test_both_meta_learners_run_their_learner_on_its_device(request):
    bx, tu, ty, mean, std = _toy()
    kw = dict(**MLP, steps=8, inner_batch=10, target_batch=8, patience=2, window=1, seed=0)
    ref = {f: f(bx, tu, ty, 10, mean, std, **kw) for f in (ld.distill_rr, ld.distill_second_order)}
    moves = request.getfixturevalue("module_moves")  # recorded from here on
    for f, r in ref.items():
        d = f(bx, tu, ty, 10, mean, std, **kw, device="cpu")
        assert torch.equal(d.soft_labels, r.soft_labels) and d.params["resets"] == r.params["resets"]
    # each fresh learner (one per reset, and the first) moved to the device
    assert len(moves) == sum(r.params["resets"] + 1 for r in ref.values()) and {m[1] for m in moves} == {"cpu"}, moves


def test_inputs_are_checked_before_compute():
    bx, tu, ty, mean, std = _toy()
    with pytest.raises(ValueError, match="uint8"):
        ld.distill_rr(bx, tu.float(), ty, 10, mean, std, **MLP, steps=1)
    with pytest.raises(ValueError, match="inner_batch"):
        ld.distill_rr(bx, tu, ty, 10, mean, std, **MLP, steps=1, inner_batch=21)
    with pytest.raises(ValueError, match="outside"):
        ld.distill_second_order(bx, tu, ty + 5, 10, mean, std, **MLP, steps=1)


def test_baseline_labels_and_steps_rule():
    bx, tu, ty, mean, std = _toy()
    d = ld.distill_rr(bx, tu, ty, 10, mean, std, **MLP, steps=2, inner_batch=10, target_batch=8)
    oh = ld.with_labels(d, ty[:20], "true labels")
    assert torch.equal(oh.soft_labels.argmax(1), ty[:20]) and torch.equal(oh.soft_labels.sum(1), torch.ones(20))
    assert torch.equal(oh.images, d.images)
    assert torch.allclose(ld.label_entropy(torch.full((2, 4), 0.25)), torch.full((2,), torch.log(torch.tensor(4.0))))
