import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from compendium.core.probe import to_float
from compendium.distill import inversion as inv
from compendium.distill.sets import DistilledSet

MEAN, STD = (0.3, 0.5), (0.4, 0.2)


pytestmark = pytest.mark.usefixtures("one_thread")


def tiny_net(c_in: int = 2, size: int = 8, classes: int = 3, seed: int = 0, dtype=torch.float32) -> nn.Sequential:
    """Conv-BN2d-ReLU x2, pool, Linear-BN1d-ReLU-Linear with non-trivial running statistics, eval mode."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        net = nn.Sequential(
            nn.Conv2d(c_in, 4, 3, padding=1),
            nn.BatchNorm2d(4),
            nn.ReLU(),
            nn.Conv2d(4, 4, 3, padding=1),
            nn.BatchNorm2d(4),
            nn.ReLU(),
            nn.AvgPool2d(2),
            nn.Flatten(),
            nn.Linear(4 * (size // 2) ** 2, 6),
            nn.BatchNorm1d(6),
            nn.ReLU(),
            nn.Linear(6, classes),
        )
        for m in net.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                m.running_mean.normal_(0, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.data.uniform_(0.5, 1.5)
                m.bias.data.normal_(0, 0.1)
    return net.to(dtype).eval()


def bn_inputs(net: nn.Sequential, x: torch.Tensor) -> list[torch.Tensor]:
    """The input of every BN layer, by running the flat Sequential by hand (no hooks)."""
    out = []
    for layer in net:
        if isinstance(layer, nn.modules.batchnorm._BatchNorm):
            out.append(x)
        x = layer(x)
    return out


@torch.no_grad()
def reference_terms(net, x):
    dm, dv = [], []
    bns = [m for m in net if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for inp, bn in zip(bn_inputs(net, x), bns):
        dims = [0] + list(range(2, inp.ndim))
        mu = inp.mean(dims)
        var = ((inp - mu.view(1, -1, *[1] * (inp.ndim - 2))) ** 2).mean(dims)  # biased variance
        dm.append(float((mu - bn.running_mean).norm()))
        dv.append(float((var - bn.running_var).norm()))
    return torch.tensor(dm, dtype=torch.float64), torch.tensor(dv, dtype=torch.float64)


def no_hooks(net) -> bool:
    return all(len(m._forward_pre_hooks) == 0 for m in net.modules())


# ---------------------------------------------------------------- BN statistic loss


def test_bn_loss_is_zero_when_batch_statistics_equal_running_statistics():
    net = tiny_net(dtype=torch.float64)
    x = torch.randn(7, 2, 8, 8, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    # set each layer's running stats to its input's batch stats, in forward order (later inputs depend on earlier)
    bns = [m for m in net if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for i, bn in enumerate(bns):
        with torch.no_grad():
            inp = bn_inputs(net, x)[i]
        dims = [0] + list(range(2, inp.ndim))
        bn.running_mean.copy_(inp.mean(dims))
        bn.running_var.copy_(inp.var(dims, unbiased=False))
    _, loss = inv.bn_statistic_loss(net, x, r_var=11.0, first_multiplier=10.0)
    assert max(float(loss.total.detach()), float(loss.mean.detach()), float(loss.var.detach())) < 1e-10
    with torch.no_grad():
        _, loss2 = inv.bn_statistic_loss(net, x + 0.1 * torch.randn_like(x), r_var=11.0)
        _, loss3 = inv.bn_statistic_loss(net, 1.5 * x)  # rescaled input: the variance part must see it
    assert float(loss2.total) > 1e-3
    assert float(loss3.var) > 1e-3


@torch.no_grad()
def test_bn_loss_matches_hand_computation_and_weights_act_where_they_should():
    net = tiny_net(dtype=torch.float64)
    x = torch.randn(5, 2, 8, 8, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    dm, dv = reference_terms(net, x)
    assert len(dm) == 3  # two BatchNorm2d and one BatchNorm1d are all hooked
    _, l = inv.bn_statistic_loss(net, x, r_var=1.0, first_multiplier=1.0)
    assert torch.allclose(l.per_layer_mean, dm, rtol=1e-10) and torch.allclose(l.per_layer_var, dv, rtol=1e-10)
    assert float(l.total) == pytest.approx(float(dm.sum() + dv.sum()), rel=1e-10)
    # r_var scales only the variance part
    _, a = inv.bn_statistic_loss(net, x, r_var=3.0, first_multiplier=10.0)
    _, b = inv.bn_statistic_loss(net, x, r_var=11.0, first_multiplier=10.0)
    assert float(a.mean) == pytest.approx(float(b.mean), rel=1e-12)
    assert float(a.var) == pytest.approx(float(b.var), rel=1e-12)
    assert float(b.total - a.total) == pytest.approx(8.0 * float(a.var), rel=1e-10)
    # the first-layer multiplier acts on the first BN only
    m = torch.tensor([10.0, 1.0, 1.0], dtype=torch.float64)
    assert float(a.mean) == pytest.approx(float((m * dm).sum()), rel=1e-10)
    assert float(a.total) == pytest.approx(float((m * (dm + 3.0 * dv)).sum()), rel=1e-10)
    _, c = inv.bn_statistic_loss(net, x, r_var=3.0, first_multiplier=1.0)
    assert float(a.total - c.total) == pytest.approx(9.0 * float(dm[0] + 3.0 * dv[0]), rel=1e-10)


def test_hooks_are_removed_and_bad_models_refused():
    net = tiny_net()
    x = torch.randn(4, 2, 8, 8)
    inv.bn_statistic_loss(net, x)
    assert no_hooks(net)
    with pytest.raises(RuntimeError):
        with inv.BNStatHook(net):
            assert not no_hooks(net)
            raise RuntimeError("boom")
    assert no_hooks(net)
    with pytest.raises(ValueError, match="no BatchNorm"):
        inv.BNStatHook(nn.Sequential(nn.Flatten(), nn.Linear(4, 2)))
    with inv.BNStatHook(net) as hook, pytest.raises(ValueError, match="saw no input"):
        hook.loss()


# ---------------------------------------------------------------- weight adjustment


def _ce(net, x, y) -> float:
    with torch.no_grad():
        return float(F.cross_entropy(net(x), y))


def _batch(seed=3, n=6, classes=3):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 2, 8, 8, generator=g), torch.arange(n) % classes


def test_directed_adjustment_one_step_is_a_normalised_gradient_step_of_size_rho():
    net = tiny_net()
    x, y = _batch()
    adj, norm = inv.weight_adjustment(net, x, y, rho=0.05, K=1, mode="directed")
    ref = copy.deepcopy(net)
    grads = torch.autograd.grad(F.cross_entropy(ref(x), y), list(ref.parameters()))
    g = torch.cat([t.reshape(-1) for t in grads])
    expected = inv.flat_parameters(net) + 0.05 * g / g.norm()
    assert torch.allclose(inv.flat_parameters(adj), expected, atol=1e-6)
    assert norm == pytest.approx(0.05, rel=1e-4)
    assert norm == pytest.approx(float((inv.flat_parameters(adj) - inv.flat_parameters(net)).norm()), rel=1e-4)


def test_directed_adjustment_bounded_ascends_and_leaves_teacher_alone():
    net = tiny_net()
    before = copy.deepcopy(net.state_dict())
    x, y = _batch()
    rho = 0.2
    adj, norm = inv.weight_adjustment(net, x, y, rho=rho, K=12, mode="directed")
    assert 0.5 * rho < norm <= rho * (1 + 1e-5)
    assert _ce(adj, x, y) > _ce(net, x, y) + 1e-3
    rnd, rnorm = inv.weight_adjustment(
        net, x, y, rho=rho, K=12, mode="random", generator=torch.Generator().manual_seed(0)
    )
    assert rnorm == pytest.approx(rho, rel=1e-5)
    assert _ce(adj, x, y) - _ce(net, x, y) > _ce(rnd, x, y) - _ce(net, x, y)  # directed beats a random direction
    for k, v in net.state_dict().items():
        assert torch.equal(v, before[k]), k
    assert adj is not net and not adj.training


def test_random_adjustment_has_norm_rho_and_is_seeded():
    net = tiny_net()
    x, y = _batch()
    a, na = inv.weight_adjustment(net, x, y, 0.03, mode="random", generator=torch.Generator().manual_seed(5))
    b, _ = inv.weight_adjustment(net, x, y, 0.03, mode="random", generator=torch.Generator().manual_seed(5))
    c, _ = inv.weight_adjustment(net, x, y, 0.03, mode="random", generator=torch.Generator().manual_seed(6))
    d = inv.flat_parameters(a) - inv.flat_parameters(net)
    assert na == pytest.approx(0.03, rel=1e-5) and float(d.norm()) == pytest.approx(0.03, rel=1e-3)
    assert torch.equal(inv.flat_parameters(a), inv.flat_parameters(b))
    assert not torch.equal(inv.flat_parameters(a), inv.flat_parameters(c))
    with pytest.raises(ValueError, match="unknown weight adjustment"):
        inv.weight_adjustment(net, x, y, 0.03, mode="sam")
    with pytest.raises(ValueError, match="K >= 1"):
        inv.weight_adjustment(net, x, y, 0.03, K=0)


# ---------------------------------------------------------------- recover


def _objective(net, x, y, r_bn=0.01, r_var=1.0) -> float:
    with torch.no_grad():
        logits, bn = inv.bn_statistic_loss(net, x, r_var=r_var)
        return float(F.cross_entropy(logits, y) + r_bn * bn.total)


def test_recover_lowers_ce_plus_bn_and_respects_the_pixel_range():
    net = tiny_net()
    net[-1].weight.data *= 5  # logits able to reach a low CE
    before = copy.deepcopy(net.state_dict())
    y = torch.arange(3)
    x0 = torch.randn(3, 2, 8, 8, generator=torch.Generator().manual_seed(0))
    lo, hi = inv.pixel_bounds(MEAN, STD)
    rec = inv.recover(
        net,
        x0,
        y,
        iterations=40,
        lr=0.25,
        r_bn=0.01,
        jitter=0,
        clip_range=(lo, hi),
        generator=torch.Generator().manual_seed(0),
    )
    assert rec.history.shape == (40, 4) and rec.delta_norm == 0.0
    start = x0.clamp(lo.view(1, -1, 1, 1), hi.view(1, -1, 1, 1))
    assert _objective(net, rec.images, y) < 0.6 * _objective(net, start, y)  # independent re-evaluation
    with torch.no_grad():
        bn_end, bn_start = inv.bn_statistic_loss(net, rec.images)[1], inv.bn_statistic_loss(net, start)[1]
    assert float(bn_end.total) < float(bn_start.total)
    assert rec.history[-5:, 0].mean() < rec.history[:5, 0].mean()
    # total = ce + r_bn (mean + r_var var), per iteration
    h = rec.history
    assert torch.allclose(h[:, 0], h[:, 1] + 0.01 * (h[:, 2] + h[:, 3]), rtol=1e-5)
    for c in range(2):
        assert rec.images[:, c].min() >= lo[c] - 1e-6 and rec.images[:, c].max() <= hi[c] + 1e-6
    assert (rec.images[:, 1].max() - hi[1]).abs() < 1e-6 or (rec.images[:, 1].min() - lo[1]).abs() < 1e-6
    for k, v in net.state_dict().items():
        assert torch.equal(v, before[k])
    assert no_hooks(net)


def test_recover_is_deterministic_and_weight_adjustment_stays_on_a_copy():
    net = tiny_net()
    before = copy.deepcopy(net.state_dict())
    y = torch.arange(3)
    x0 = torch.randn(3, 2, 8, 8, generator=torch.Generator().manual_seed(1))
    kw = dict(
        iterations=5,
        lr=0.05,
        jitter=2,
        flip=True,
        weight_adjust="directed",
        rho=0.1,
        K=4,
        clip_range=inv.pixel_bounds(MEAN, STD),
    )
    a = inv.recover(net, x0, y, generator=torch.Generator().manual_seed(9), **kw)
    b = inv.recover(net, x0, y, generator=torch.Generator().manual_seed(9), **kw)
    c = inv.recover(net, x0, y, generator=torch.Generator().manual_seed(8), **kw)
    assert torch.equal(a.images, b.images) and not torch.equal(a.images, c.images)
    assert 0 < a.delta_norm <= 0.1 * (1 + 1e-5)
    for k, v in net.state_dict().items():
        assert torch.equal(v, before[k])
    same = inv.recover(net, x0, y, iterations=0)
    assert torch.equal(same.images, x0) and same.history.shape == (0, 4)
    with pytest.raises(ValueError, match="do not match"):
        inv.recover(net, x0, torch.arange(2))
    with pytest.raises(ValueError, match="unknown weight_adjust"):
        inv.recover(net, x0, y, weight_adjust="gaussian")


# ---------------------------------------------------------------- SRe2L / DWA sets


def _real(classes=3, per_class=6, size=8, c=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randint(0, 256, (classes * per_class, c, size, size), generator=g, dtype=torch.uint8),
        torch.arange(classes).repeat(per_class),
    )


def test_sre2l_and_dwa_sets_have_ipc_per_class_and_record_params(tmp_path):
    net = tiny_net()
    xu, yu = _real()
    s = inv.sre2l_synthesize(net, xu, yu, 2, MEAN, STD, iterations=3, seed=1)
    d = inv.dwa_synthesize(net, xu, yu, 2, MEAN, STD, iterations=3, seed=1, K=3)
    for ds, method in ((s, "sre2l"), (d, "dwa")):
        assert isinstance(ds, DistilledSet) and ds.method == method
        assert ds.per_class.tolist() == [2, 2, 2] and ds.images.shape == (6, 2, 8, 8)
        assert ds.soft_labels is not None and torch.allclose(ds.soft_labels.sum(1), torch.ones(6))
        assert ds.synthesis_seconds > 0 and len(ds.params["delta_norms"]) == 2
    assert (s.params["init"], s.params["r_var"], s.params["weight_adjust"]) == ("noise", 1.0, None)
    assert (d.params["init"], d.params["r_var"], d.params["weight_adjust"]) == ("real", 11.0, "directed")
    assert d.params["K"] == 3 and d.params["rho"] == 15e-3
    assert all(0 < n <= 0.015 * (1 + 1e-5) for n in d.params["delta_norms"])
    assert d.params["r_bn"] == 0.01 and d.params["first_multiplier"] == 10.0 and d.params["lr"] == 0.25
    # deterministic; the ipc-1 set is the ipc-2 set's first batch (per-ipc-index seeding)
    s2 = inv.sre2l_synthesize(net, xu, yu, 2, MEAN, STD, iterations=3, seed=1)
    s1 = inv.sre2l_synthesize(net, xu, yu, 1, MEAN, STD, iterations=3, seed=1)
    assert torch.equal(s.images, s2.images) and torch.equal(s1.images, s.images[:3])
    back = DistilledSet.load(d.save(tmp_path / "dwa.pt"))  # params are JSON: the set round-trips
    assert back.params == d.params and torch.equal(back.images, d.images)
    # arm F: random adjustment via an argument
    f = inv.dwa_synthesize(net, xu, yu, 1, MEAN, STD, iterations=2, weight_adjust="random", method="dwa-random")
    assert f.params["weight_adjust"] == "random" and f.params["delta_norms"][0] == pytest.approx(0.015, rel=1e-5)


def test_real_initialisation_uses_distinct_real_images_of_the_class():
    net = tiny_net()
    xu, yu = _real()
    d = inv.dwa_synthesize(net, xu, yu, 3, MEAN, STD, iterations=0, seed=4)
    real = to_float(xu, MEAN, STD)
    idx = torch.tensor(d.params["init_index"])
    assert torch.equal(d.images, real[idx]) and torch.equal(yu[idx], d.labels)
    assert len(set(idx.tolist())) == 9
    with pytest.raises(ValueError, match="fewer than ipc"):
        inv.dwa_synthesize(net, xu, yu, 7, MEAN, STD, iterations=0)
    with pytest.raises(ValueError, match="ipc must be"):
        inv.sre2l_synthesize(net, xu, yu, 0, MEAN, STD)
    with pytest.raises(ValueError, match="unknown init"):
        inv.sre2l_synthesize(net, xu, yu, 1, MEAN, STD, init="zeros")
    with pytest.raises(ValueError, match="do not match"):
        inv.sre2l_synthesize(net, xu, yu[:-1], 1, MEAN, STD)
    with pytest.raises(ValueError, match="teacher has 3 outputs"):
        inv.sre2l_synthesize(net, xu, yu, 1, MEAN, STD, num_classes=4, iterations=0)
    with pytest.raises(ValueError, match="num_classes=2"):
        inv.rded_synthesize(xu, yu, net, 1, MEAN, STD, num_classes=2, images_per_class=4)


# ---------------------------------------------------------------- RDED


def _constant_images(classes=3, per_class=8, size=8):
    """Image j is constant at a distinct grey level, so any crop of it is that constant."""
    n = classes * per_class
    levels = torch.linspace(10, 245, n).round().to(torch.uint8)
    return levels.view(n, 1, 1, 1).expand(n, 2, size, size).contiguous(), torch.arange(classes).repeat(per_class)


def test_rded_quadrants_are_crops_of_distinct_real_images_of_the_class():
    net = tiny_net()
    xu, yu = _constant_images()
    ds = inv.rded_synthesize(xu, yu, net, 2, MEAN, STD, factor=2, candidates_per_image=3, images_per_class=8)
    assert ds.images.shape == (6, 2, 8, 8) and ds.per_class.tolist() == [2, 2, 2] and ds.method == "rded"
    real = to_float(xu, MEAN, STD)
    for img, c in zip(ds.images, ds.labels):
        used = []
        for r in (0, 4):
            for q in (0, 4):
                cell = img[:, r : r + 4, q : q + 4]
                assert torch.allclose(cell, cell[:, :1, :1].expand_as(cell), atol=1e-5)  # a constant crop
                match = [
                    j
                    for j in torch.nonzero(yu == c).flatten().tolist()
                    if torch.allclose(real[j, :, 0, 0], cell[:, 0, 0], atol=1e-4)
                ]
                assert len(match) == 1  # it is a crop of an image of the right class
                used.append(match[0])
        assert len(set(used)) == 4
    assert all(len(s) == 8 for s in ds.params["crop_sources"])


def test_rded_keeps_the_observer_preferred_crops():
    net = tiny_net()
    g = torch.Generator().manual_seed(0)
    imgs = torch.randn(10, 2, 8, 8, generator=g)
    sel = inv.rded_select(net, imgs, 1, 4, factor=2, candidates_per_image=3, generator=g)
    assert sel.crops.shape == (4, 2, 8, 8) and len(set(sel.source.tolist())) == 4
    best = sel.candidate_ce.min(0).values
    rejected = torch.ones(10, dtype=torch.bool)
    rejected[sel.source] = False
    assert sel.scores.max() <= best[rejected].min()  # chosen images beat the rejected ones
    assert torch.equal(sel.scores, best[sel.source])  # each chosen crop is its image's best candidate
    assert torch.all(sel.scores[:-1] <= sel.scores[1:])
    with torch.no_grad():  # the scores are the observer's CE of the returned crops
        ce = F.cross_entropy(net(sel.crops), torch.full((4,), 1), reduction="none")
    assert torch.allclose(ce, sel.scores, atol=1e-5)
    pad = inv.rded_select(net, imgs, 1, 4, factor=2, score_mode="padded", generator=g)
    assert pad.crops.shape == (4, 2, 4, 4)
    with pytest.raises(ValueError, match="unknown score_mode"):
        inv.rded_select(net, imgs, 1, 4, score_mode="centre")


def test_stitch_places_crop_k_n_plus_i_in_cell_k_of_image_i():
    n, factor = 2, 2
    crops = torch.arange(n * 4, dtype=torch.float32).view(-1, 1, 1, 1).expand(-1, 1, 3, 3).contiguous()
    out = inv.stitch(crops, factor, 7)  # uneven: cells of 4 then 3 pixels
    assert out.shape == (2, 1, 7, 7)
    for i in range(n):
        assert out[i, 0, 0, 0] == i and out[i, 0, 0, 6] == n + i and out[i, 0, 6, 0] == 2 * n + i
        assert out[i, 0, 6, 6] == 3 * n + i and out[i, 0, 3, 3] == i and out[i, 0, 4, 4] == 3 * n + i
    with pytest.raises(ValueError, match="multiple of factor"):
        inv.stitch(crops[:3], 2, 8)


# ---------------------------------------------------------------- feature distance


def test_feature_distance_is_eq21_and_grows_with_spread():
    g = torch.Generator().manual_seed(0)
    f = torch.randn(12, 5, generator=g)
    y = torch.tensor([0, 1, 2] * 4)
    raw = inv.feature_distance(f, y, num_classes=4, normalise=False)
    for c in range(3):
        fc = f[y == c].double()
        brute = sum(float((fc[i] - fc[j]).pow(2).sum()) for i in range(4) for j in range(4))
        assert float(raw[c]) == pytest.approx(brute, rel=1e-10)
    assert torch.isnan(raw[3])
    ref = torch.randn(30, 5, generator=g) * 2
    ry = torch.arange(30) % 4
    norm = inv.feature_distance(f, y, 4, ref, ry)
    s = torch.stack([ref[ry == c].double().pow(2).sum(1).mean() for c in range(4)])
    assert torch.allclose(norm[:3], raw[:3] / 16 / s[:3])
    collapsed = f[y == 0][:1].repeat(4, 1) + 1e-3 * torch.randn(4, 5, generator=g)
    spread = collapsed + torch.randn(4, 5, generator=g)
    zeros = torch.zeros(4, dtype=torch.int64)
    assert inv.feature_distance(spread, zeros)[0] > 100 * inv.feature_distance(collapsed, zeros)[0]


def test_bn_hook_reads_vit_bn_tokens_on_their_channel_axis():
    """ViT-BN's TokenBatchNorm has its channels last: the hook's statistics match models.bn_input_stats."""
    from compendium.core import models

    net = torch.nn.Sequential(models.build("vit_bn", in_channels=1, image_size=28, width_mult=0.125, depth=1))
    bn = inv.batchnorm_layers(net)[0]
    seen = {}
    h = bn.register_forward_pre_hook(lambda m, inp: seen.__setitem__("x", inp[0]))
    x = torch.randn(3, 1, 28, 28)
    with inv.BNStatHook(net) as hook:
        net(x)
        mu, var = hook.stats[0]
        assert all(s[0].shape == m.running_mean.shape for s, m in zip(hook.stats, hook.layers))
    h.remove()
    m2, v2 = models.bn_input_stats(bn, seen["x"])
    assert torch.allclose(mu, m2, atol=1e-6) and torch.allclose(var, v2, atol=1e-6)
