import pytest
import torch

from compendium.core import models
from compendium.ssl import methods as M


def _backbone():
    return models.convnet(1, 16, width=8, depth=2, norm="batch")


@pytest.mark.parametrize("name", sorted(M.METHODS))
def test_every_method_trains_one_step_and_declares_all_its_parameters(name):
    torch.manual_seed(0)
    kw = {"queue_size": 64} if name == "moco" else {}
    m = M.build(name, _backbone(), head_mult=1 / 32, **kw)
    opt = torch.optim.AdamW([g for g in m.learnable_params()], lr=1e-3)
    M.check_optimizer_covers(m, opt)
    x1, x2 = torch.randn(8, 1, 16, 16), torch.randn(8, 1, 16, 16)
    before = [p.detach().clone() for p in m.backbone.parameters()]
    loss, logs = m.loss(x1, x2)
    assert torch.isfinite(loss) and "ssl_loss" in logs
    opt.zero_grad()
    loss.backward()
    opt.step()
    m.momentum_update(M.cosine_momentum(1, 10, m.momentum_base or 0.99))
    assert any(not torch.equal(a, b) for a, b in zip(before, m.backbone.parameters()))
    for online, target in m.momentum_pairs():
        assert all(not p.requires_grad for p in target.parameters())


def test_missing_parameters_are_caught():
    m = M.build("byol", _backbone(), head_mult=1 / 32)
    opt = torch.optim.AdamW(m.backbone.parameters())
    with pytest.raises(ValueError, match="projector"):
        M.check_optimizer_covers(m, opt)


def test_rela_transfer_trainable_or_frozen():
    m = M.build("byol", _backbone(), head_mult=1 / 32)
    r = M.ReLA(m, target_dim=5, transfer_trainable=True)
    names = [g["name"] for g in r.learnable_params()]
    assert "transfer" in names
    M.check_optimizer_covers(r, torch.optim.AdamW(r.learnable_params()))
    frozen = M.ReLA(M.build("byol", _backbone(), head_mult=1 / 32), target_dim=5, transfer_trainable=False)
    assert "transfer" not in [g["name"] for g in frozen.learnable_params()]
    M.check_optimizer_covers(frozen, torch.optim.AdamW(frozen.learnable_params()))
    w0 = frozen.transfer.weight.detach().clone()
    opt = torch.optim.AdamW(frozen.learnable_params(), lr=1e-2)
    x = torch.randn(8, 1, 16, 16)
    loss, _ = frozen.rela_loss(x, x, torch.randn(8, 5))
    loss.backward()
    opt.step()
    assert torch.equal(w0, frozen.transfer.weight)


def test_ema_and_cosine_momentum():
    a, b = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    M.ema_update(a, b, 0.0)
    assert torch.equal(a.weight, b.weight)
    assert M.cosine_momentum(0, 100, 0.99) == pytest.approx(0.99)
    assert M.cosine_momentum(100, 100, 0.99) == pytest.approx(1.0)


def test_moco_queue_rotates():
    m = M.build("moco", _backbone(), head_mult=1 / 32, queue_size=20)
    x = torch.randn(8, 1, 16, 16)
    m.loss(x, x)
    assert int(m.queue_ptr) == 16
    m.loss(x, x)
    assert int(m.queue_ptr) == 12


@pytest.mark.parametrize("name", sorted(M.METHODS))
def test_every_method_trains_under_bf16_autocast(name):
    """The CPU bf16 path (and CUDA's): a method whose state mixes with bf16 activations must keep working
    (MoCo's fp32 queue once refused the bf16 keys)."""
    torch.manual_seed(0)
    kw = {"queue_size": 64} if name == "moco" else {}
    m = M.build(name, _backbone(), head_mult=1 / 32, **kw)
    x1, x2 = torch.randn(8, 1, 16, 16), torch.randn(8, 1, 16, 16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss, _ = m.loss(x1, x2)
    loss.backward()
    assert torch.isfinite(loss)
    assert all(p.dtype == torch.float32 for p in m.parameters())
    if name == "moco":
        assert m.queue.dtype == torch.float32 and torch.allclose(m.queue[:16].norm(dim=1), torch.ones(16))
