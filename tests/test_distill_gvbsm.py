"""G-VBSM's recovery (compendium.distill.gvbsm): the statistics it matches, its moving-average form, the
convolution drop, the spectrum term, and a run against two backbones in turn."""

import doctest

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from compendium.distill import evaluate as E
from compendium.distill import gvbsm as G

pytestmark = pytest.mark.usefixtures("one_thread")


def _net(seed, classes=2, size=8, channels=1, arch="convnet"):
    kw = {"width": 4, "depth": 2, "norm": "batch"} if arch == "convnet" else {"width_mult": 0.0625, "stem_stride": 2}
    return E.build_student(E.EvalConfig(arch=arch, arch_kwargs=kw), (channels, size, size), classes, seed=seed).eval()


def _data(n=8, size=8, classes=2):
    g = torch.Generator().manual_seed(0)
    return torch.randint(0, 256, (n, 1, size, size), generator=g, dtype=torch.uint8), torch.arange(n) % classes


def test_doctest():
    assert doctest.testmod(G).failed == 0


def test_patch_statistics_are_those_of_each_4x4_position():
    x = torch.randn(3, 2, 8, 12)
    m, v = G._patch_stats(x)
    assert m.shape == v.shape == (6,)
    for k, (i, j) in enumerate((i, j) for i in range(2) for j in range(3)):
        p = x[:, :, 4 * i : 4 * i + 4, 4 * j : 4 * j + 4]
        assert torch.allclose(m[k], p.mean()) and torch.allclose(v[k], p.var(unbiased=False), atol=1e-6)
    y = torch.randn(2, 1, 6, 6)  # resized to 8 x 8 first, as the code's div_four_mul
    assert torch.allclose(G._patch_stats(y)[0], G._patch_stats(F.interpolate(y, (8, 8), mode="bilinear"))[0])


def test_conv_statistics_in_one_batch_are_the_conv_inputs_statistics():
    net = _net(0)
    x, _ = _data()
    stats = G.conv_statistics(net, x, (0.5,), (0.5,), batch_size=64, crop_padding=0, flip=False)
    convs = [m for m in net.modules() if isinstance(m, nn.Conv2d)]
    seen = []
    hs = [c.register_forward_pre_hook(lambda mod, inp: seen.append(inp[0])) for c in convs]
    net((x.float() / 255 - 0.5) / 0.5)
    for h in hs:
        h.remove()
    assert len(stats) == len(convs) == 2
    for s, inp in zip(stats, seen):
        assert torch.allclose(s["mean"], inp.mean((0, 2, 3)), atol=1e-6)
        assert torch.allclose(s["var"], inp.var((0, 2, 3), unbiased=False), atol=1e-5)
        assert torch.allclose(s["patch_mean"], G._patch_stats(inp)[0], atol=1e-6)
    halves = G.conv_statistics(net, x, (0.5,), (0.5,), batch_size=4, crop_padding=0, flip=False)
    assert torch.allclose(halves[0]["mean"], stats[0]["mean"], atol=1e-6)  # size-weighted batch means


def test_the_statistics_are_moving_averages_with_the_current_batchs_gradient():
    net = _net(0)
    stats = G.conv_statistics(net, _data()[0], (0.5,), (0.5,))
    hooks = G.GSMHooks(net, stats, momentum=0.8, drop_rate=0.0, generator=torch.Generator().manual_seed(0))
    bn = next(i for i, m in enumerate(hooks.layers) if isinstance(m, nn.BatchNorm2d))
    layer = hooks.layers[bn]
    x1, x2 = torch.randn(4, 1, 8, 8), torch.randn(4, 1, 8, 8).requires_grad_(True)
    captured = []
    grab = layer.register_forward_pre_hook(lambda mod, inp: captured.append(inp[0].detach()))
    with hooks:
        net(x1)
        net(x2)
    grab.remove()
    v1, v2 = (c.var((0, 2, 3), unbiased=False) for c in captured)
    m1, m2 = (c.mean((0, 2, 3)) for c in captured)
    ema_v, ema_m = 0.8 * v1 + 0.2 * v2, 0.8 * m1 + 0.2 * m2
    want = (layer.running_var - ema_v).norm() + (layer.running_mean - ema_m).norm()
    assert torch.allclose(hooks.terms[bn], want, atol=1e-5)
    hooks.loss(10.0).backward()
    assert x2.grad is not None and x2.grad.abs().sum() > 0


def test_dropped_convolutions_contribute_nothing():
    net = _net(0)
    stats = G.conv_statistics(net, _data()[0], (0.5,), (0.5,))
    x = torch.randn(4, 1, 8, 8)
    for rate, zero in ((0.0, False), (0.999999, True)):
        hooks = G.GSMHooks(net, stats, 0.8, rate, torch.Generator().manual_seed(0))
        with hooks:
            net(x)
        conv_terms = [t for t, m in zip(hooks.terms, hooks.layers) if isinstance(m, nn.Conv2d)]
        assert all((float(t.detach()) == 0.0) == zero for t in conv_terms)
    with pytest.raises(ValueError, match="convolution statistics"):
        G.GSMHooks(net, stats[:1], 0.8, 0.0, torch.Generator())


def test_the_spectrum_term_vanishes_on_a_flat_spectrum():
    eye = torch.eye(4).view(4, 1, 2, 2) * 3.0  # orthogonal images of equal norm: one eigenvalue, 9, four times
    y = torch.zeros(4, dtype=torch.long)
    assert abs(float(G.spectrum_loss(eye, y, 4.0))) < 1e-6
    x = torch.randn(6, 1, 4, 4, generator=torch.Generator().manual_seed(1)).requires_grad_(True)
    y2 = torch.tensor([0, 0, 0, 1, 1, 2])  # class 2 has one image: no term
    loss = G.spectrum_loss(x, y2, 4.0)
    assert float(loss) > 0
    loss.backward()
    assert x.grad[5].abs().sum() == 0 and x.grad[:5].abs().sum() > 0


def test_recovery_uses_the_backbones_in_turn_and_keeps_pixels_valid():
    nets = [_net(0), _net(1, arch="resnet18")]
    x, y = _data()
    stats = [G.conv_statistics(n, x, (0.5,), (0.5,)) for n in nets]
    calls = []
    hs = [n.register_forward_hook(lambda mod, inp, out, i=i: calls.append(i)) for i, n in enumerate(nets)]
    d = G.gvbsm_synthesize(nets, stats, x, y, 3, (0.5,), (0.5,), iterations=3, batch_size=4, seed=5, dataset="cifar10")
    for h in hs:
        h.remove()
    assert d.labels.tolist() == [0, 0, 0, 1, 1, 1] and d.images.shape == (6, 1, 8, 8) and d.dataset == "cifar10"
    assert calls[:6] == [0, 1, 0, 1, 0, 1]  # two batches (4 + 2 images) x 3 iterations, in turn
    assert d.images.min() >= -1.0 - 1e-6 and d.images.max() <= 1.0 + 1e-6  # (0 - 0.5) / 0.5 .. (1 - 0.5) / 0.5
    assert d.soft_labels.shape == (6, 2) and torch.allclose(d.soft_labels.sum(1), torch.ones(6))
    assert d.params["iterations"] == 3 and len(d.params["loss_curve"]) == 3 and d.params["jitter"] == 8
    again = G.gvbsm_synthesize(
        nets, stats, x, y, 3, (0.5,), (0.5,), iterations=3, batch_size=4, seed=5, dataset="cifar10"
    )
    assert torch.equal(d.images, again.images)  # seeded
    with pytest.raises(ValueError, match="one per backbone"):
        G.gvbsm_synthesize(nets, stats[:1], x, y, 1, (0.5,), (0.5,), iterations=1)
