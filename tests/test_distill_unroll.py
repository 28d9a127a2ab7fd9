"""The differentiable inner-training utility (compendium.distill.unrolled.unroll) against finite differences."""

import pytest
import torch
from torch import nn

from compendium.distill.unrolled import unroll as U


def _net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 3)).double()


def _data():
    g = torch.Generator().manual_seed(1)
    x_syn = torch.randn(6, 4, generator=g, dtype=torch.float64)
    y_soft = torch.softmax(torch.randn(6, 3, generator=g, dtype=torch.float64), 1)
    x_real = torch.randn(20, 4, generator=g, dtype=torch.float64)
    y_real = torch.randint(0, 3, (20,), generator=g)
    return x_syn, y_soft, x_real, y_real


def _objective(net, p0, momentum=0.5, **kw):
    def f(x_syn, y_soft, lrs):
        p = U.unroll(net, p0, U.dd_batches(x_syn, y_soft, steps=3, epochs=1), lrs, momentum=momentum, **kw)
        _, _, x_real, y_real = _data()
        return U.outer_loss(net, p, x_real, y_real)

    return f


def test_unroll_gradients_match_finite_differences():
    """Gradients of the real-data loss after 3 unrolled momentum-SGD steps, with respect to the distilled
    images, their soft labels and the learned step sizes: autograd = central differences (float64)."""
    net = _net()
    p0 = U.initial_params(net)
    x_syn, y_soft, _, _ = _data()
    lrs = torch.tensor([0.3, 0.2, 0.1], dtype=torch.float64)
    args = tuple(a.clone().requires_grad_() for a in (x_syn, y_soft, lrs))
    assert torch.autograd.gradcheck(_objective(net, p0), args, eps=1e-6, atol=1e-6)


def test_checkpointing_gives_the_same_gradient_and_truncation_a_different_one():
    net = _net()
    p0 = U.initial_params(net)
    x_syn, y_soft, _, _ = _data()
    lrs = torch.tensor([0.3, 0.2, 0.1], dtype=torch.float64)

    def grad(**kw):
        x = x_syn.clone().requires_grad_()
        lr = lrs.clone().requires_grad_()
        _objective(net, p0, **kw)(x, y_soft, lr).backward()
        return x.grad, lr.grad

    full, ck, tr = grad(), grad(checkpoint=True), grad(truncate=1)
    assert torch.allclose(full[0], ck[0]) and torch.allclose(full[1], ck[1])
    assert tr[1][0] == 0 and tr[1][1] == 0 and tr[1][2] != 0  # only the last step's rate is reached
    assert not torch.allclose(full[0], tr[0])


def test_one_step_equals_the_closed_form_sgd_update():
    net = _net()
    p0 = U.initial_params(net)
    x, y, _, _ = _data()
    p1 = U.unroll(net, p0, [(x, y)], torch.tensor([0.5], dtype=torch.float64))
    ref = U.initial_params(net, requires_grad=True)
    loss = U.soft_cross_entropy(torch.func.functional_call(net, ref, (x,)), y)
    g = torch.autograd.grad(loss, list(ref.values()))
    for (k, v), gk in zip(ref.items(), g):
        assert torch.allclose(p1[k], v - 0.5 * gk)


def test_soft_cross_entropy_equals_cross_entropy_on_one_hot():
    logits = torch.randn(5, 3)
    y = torch.tensor([0, 2, 1, 1, 0])
    assert torch.allclose(U.soft_cross_entropy(logits, y), U.soft_cross_entropy(logits, torch.eye(3)[y]))


def test_bad_inputs():
    net = _net()
    p0 = U.initial_params(net)
    x, y, _, _ = _data()
    with pytest.raises(ValueError, match="one learning rate per step"):
        U.unroll(net, p0, [(x, y)] * 2, torch.tensor([0.1], dtype=torch.float64))
    with pytest.raises(ValueError, match="equal batches"):
        U.dd_batches(x, y, steps=4)
    bn = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))
    with pytest.raises(ValueError, match="running statistics"):
        U.unroll(bn, U.initial_params(bn), [(x.float(), y.float())], torch.tensor([0.1]))
