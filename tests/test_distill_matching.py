import math

import pytest
import torch

from compendium.distill import networks
from compendium.distill.matching import dsa
from compendium.distill.matching import synthesis as matching
from compendium.distill.matching.dsa import Draw, DSAParams
from compendium.distill.sets import DistilledSet


def gradient_match_loss(net, real, syn, kind: str = "ours", create_graph: bool = False):
    """The DC objective (eq. 10) written plainly, per class: the reference the synthesis loop must match. DC eq. 10 at one network: sum over classes c of D(grad L(S_c), grad L(T_c)), ``real[c]`` and
    ``syn[c]`` being the (already augmented) batches of class c."""
    if len(real) != len(syn):
        raise ValueError(f"{len(real)} real vs {len(syn)} synthetic class batches")
    total = torch.zeros((), device=syn[0].device)
    for c, (xr, xs) in enumerate(zip(real, syn)):
        gr = [g.detach() for g in matching.class_gradients(net, xr, c)]
        total = total + matching.gradient_distance(matching.class_gradients(net, xs, c, create_graph), gr, kind)
    return total


TINY = {"width": 8, "depth": 2, "norm": "instance"}
MEAN, STD = (0.5,), (0.25,)


pytestmark = pytest.mark.usefixtures("one_thread")


def _toy(per_class: int = 24, classes: int = 3, size: int = 8, channels: int = 1, seed: int = 0):
    """uint8 images: a random prototype per class plus noise (classes are separable)."""
    g = torch.Generator().manual_seed(seed)
    protos = torch.rand(classes, channels, size, size, generator=g) * 200 + 25
    y = torch.arange(classes).repeat_interleave(per_class)
    x = protos[y] + 30 * torch.randn(len(y), channels, size, size, generator=g)
    return x.clamp(0, 255).to(torch.uint8), y


def _norm(x_u8):
    return (x_u8.float() / 255 - MEAN[0]) / STD[0]


# ----------------------------------------------------------------------------------------------- distances


def test_distance_hand_computed():
    a = [torch.tensor([[1.0, 0.0], [0.0, 1.0]]), torch.tensor([1.0, 2.0])]
    b = [torch.tensor([[1.0, 1.0], [0.0, -1.0]]), torch.tensor([-5.0, 7.0])]
    # rows: 1 - 1/sqrt2 and 1 - (-1) = 2; the 1-d tensor (a bias) is skipped
    assert matching.gradient_distance(a, b).item() == pytest.approx(3 - 1 / math.sqrt(2), abs=1e-5)
    va, vb = torch.tensor([1.0, 0, 0, 1, 1, 2]), torch.tensor([1.0, 1, 0, -1, -5, 7])
    assert matching.gradient_distance(a, b, "mse").item() == pytest.approx(float(((va - vb) ** 2).sum()))
    cos = float(va @ vb / (va.norm() * vb.norm()))
    assert matching.gradient_distance(a, b, "cos").item() == pytest.approx(1 - cos, abs=1e-6)


def test_distance_reshapes_conv_and_layernorm_per_output_channel():
    g = torch.Generator().manual_seed(0)
    conv_a, conv_b = torch.randn(4, 3, 3, 3, generator=g), torch.randn(4, 3, 3, 3, generator=g)
    ln_a, ln_b = torch.randn(2, 5, 5, generator=g), torch.randn(2, 5, 5, generator=g)

    def manual(x, y):
        return sum(
            1 - float(torch.dot(x[i].flatten(), y[i].flatten()) / (x[i].norm() * y[i].norm()))
            for i in range(x.shape[0])
        )

    got = matching.gradient_distance([conv_a, ln_a], [conv_b, ln_b]).item()
    assert got == pytest.approx(manual(conv_a, conv_b) + manual(ln_a, ln_b), abs=1e-5)


def test_distance_zero_symmetric_and_channel_scale_invariant():
    g = torch.Generator().manual_seed(1)
    a = [torch.randn(6, 2, 3, 3, generator=g), torch.randn(6, generator=g), torch.randn(3, 24, generator=g)]
    b = [torch.randn_like(t) for t in a]
    assert matching.gradient_distance(a, a).item() == pytest.approx(0.0, abs=1e-5)
    assert matching.gradient_distance(a, b).item() == pytest.approx(matching.gradient_distance(b, a).item())
    scales = [torch.rand(t.shape[0], generator=g) * 10 + 0.1 for t in a]
    b_scaled = [t * s.view(-1, *[1] * (t.ndim - 1)) for t, s in zip(b, scales)]
    assert matching.gradient_distance(a, b_scaled).item() == pytest.approx(
        matching.gradient_distance(a, b).item(), abs=1e-4
    )
    # a negative channel scale is not invariant: that row's cosine flips sign
    b_neg = [b[0] * -1, b[1], b[2]]
    assert matching.gradient_distance(a, b_neg).item() != pytest.approx(matching.gradient_distance(a, b).item())
    # 1-d tensors never count in 'ours'
    only_bias = [torch.randn(6, generator=g)], [torch.randn(6, generator=g)]
    assert matching.gradient_distance(*only_bias).item() == 0.0


def test_distance_bad_input():
    with pytest.raises(ValueError, match="unknown gradient distance"):
        matching.gradient_distance([torch.ones(2, 2)], [torch.ones(2, 2)], "l1")
    with pytest.raises(ValueError, match="shapes differ"):
        matching.gradient_distance([torch.ones(2, 2)], [torch.ones(2, 3)])
    with pytest.raises(ValueError, match="length"):
        matching.gradient_distance([torch.ones(2, 2)], [])


# ----------------------------------------------------------------------------------------------- DSA


def _imgs(n=4, c=3, size=8, seed=0):
    return torch.randn(n, c, size, size, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("strategy", list(dsa.FAMILIES) + [dsa.DEFAULT_STRATEGY])
@pytest.mark.parametrize("mode", ["single", "multiple"])
def test_siamese_same_seed_is_one_affine_map(strategy, mode):
    p = DSAParams(mode=mode)
    a, b = _imgs(4, seed=1), _imgs(4, seed=2)
    for seed in range(4):
        t = lambda x: dsa.augment(x, strategy, p, seed)  # noqa: E731
        # every family is affine in x, so T(a + b) + T(0) = T(a) + T(b) iff both calls used the same map
        assert torch.allclose(t(a + b) + t(torch.zeros_like(a)), t(a) + t(b), atol=1e-5)
        assert torch.equal(t(a), t(a))


def test_siamese_map_does_not_depend_on_batch_size_and_is_shared_across_the_batch():
    real, syn = _imgs(7, seed=3), _imgs(2, seed=4)
    for seed in range(6):
        both = dsa.augment(torch.cat([real, syn]), dsa.DEFAULT_STRATEGY, None, seed)
        assert torch.allclose(both[:7], dsa.augment(real, dsa.DEFAULT_STRATEGY, None, seed), atol=1e-6)
        assert torch.allclose(both[7:], dsa.augment(syn, dsa.DEFAULT_STRATEGY, None, seed), atol=1e-6)
    same = _imgs(1, seed=5).repeat(6, 1, 1, 1)
    out = dsa.augment(same, "rotate", None, 11)
    assert torch.allclose(out, out[:1].expand_as(out))
    indep = dsa.augment_independent(same, "rotate", None, torch.Generator().manual_seed(0))
    assert not torch.allclose(indep[0], indep[1])  # per-image angles


def test_different_seeds_give_different_maps():
    x = _imgs(2, seed=6)
    outs = [dsa.augment(x, dsa.DEFAULT_STRATEGY, None, s) for s in range(12)]
    distinct = {tuple(o.flatten()[:50].tolist()) for o in outs}
    assert len(distinct) >= 10
    fams = {
        dsa.sample(dsa.DEFAULT_STRATEGY, DSAParams(), 1, (8, 8), torch.Generator().manual_seed(s)).families
        for s in range(80)
    }
    assert fams == {(f,) for f in dsa.FAMILIES}  # single mode: one family per call, all reachable


def test_families_closed_forms():
    p = DSAParams()
    x = _imgs(2, c=3, size=8, seed=7)
    one = lambda **v: Draw(tuple(v.pop("fams")), {k: torch.as_tensor(t) for k, t in v.items()}, 1)  # noqa: E731
    assert torch.equal(dsa.apply(x, one(fams=["flip"], flip=[True]), p), x.flip(3))
    assert torch.equal(dsa.apply(x, one(fams=["flip"], flip=[False]), p), x)
    # crop: out[i, j] = x[i + dy, j + dx], zero outside
    out = dsa.apply(x, one(fams=["crop"], shift_y=[1], shift_x=[-2]), p)
    want = torch.zeros_like(x)
    want[:, :, :7, 2:] = x[:, :, 1:, :6]
    assert torch.equal(out, want)
    # cutout: a 4x4 square centred (code convention: top-left = centre - size // 2) at (5, 2)
    out = dsa.apply(x, one(fams=["cutout"], cut_y=[5], cut_x=[2]), p)
    want = x.clone()
    want[:, :, 3:7, 0:4] = 0
    assert torch.equal(out, want)
    # scale 1 and rotation 0 are the identity; a 90-degree rotation permutes pixels exactly
    assert torch.allclose(dsa.apply(x, one(fams=["scale"], sx=[1.0], sy=[1.0]), p), x, atol=1e-6)
    assert torch.allclose(dsa.apply(x, one(fams=["rotate"], angle=[0.0]), p), x, atol=1e-6)
    assert torch.allclose(
        dsa.apply(x, one(fams=["rotate"], angle=[math.pi / 2]), p), torch.rot90(x, 1, (2, 3)), atol=1e-5
    )
    # colour: brightness, then saturation (channel mean), then contrast (image mean)
    out = dsa.apply(x, one(fams=["color"], brightness=[0.8], saturation=[0.25], contrast=[0.1]), p)
    z = x + 0.3 * p.brightness
    mc = z.mean(1, keepdim=True)
    z = (z - mc) * (0.25 * p.saturation) + mc
    mi = z.mean((1, 2, 3), keepdim=True)
    assert torch.allclose(out, (z - mi) * (0.1 + p.contrast) + mi, atol=1e-6)


def test_gradients_flow_through_augment():
    x = _imgs(3, seed=8).requires_grad_(True)
    w = _imgs(3, seed=9)
    for seed in range(5):
        x.grad = None
        (dsa.augment(x, dsa.DEFAULT_STRATEGY, DSAParams(mode="multiple"), seed) * w).sum().backward()
        assert x.grad is not None and x.grad.abs().sum() > 0
        # affine T: <T(x) - T(0), w> = <x, grad_x <T(x), w>>
        with torch.no_grad():
            lin = dsa.augment(x, dsa.DEFAULT_STRATEGY, DSAParams(mode="multiple"), seed) - dsa.augment(
                torch.zeros_like(x), dsa.DEFAULT_STRATEGY, DSAParams(mode="multiple"), seed
            )
        assert float((lin * w).sum()) == pytest.approx(float((x.detach() * x.grad).sum()), rel=1e-4, abs=1e-4)


def test_strategy_parsing_and_defaults():
    assert "flip" not in dsa.default_strategy("mnist") and "flip" not in dsa.default_strategy("SVHN")
    assert dsa.default_strategy("fashion-mnist") == dsa.DEFAULT_STRATEGY == "color_crop_cutout_flip_scale_rotate"
    assert dsa.parse_strategy("none") == () and dsa.parse_strategy(None) == ()
    x = _imgs(2)
    assert dsa.augment(x, "none", None, 0) is x
    with pytest.raises(ValueError, match="unknown DSA"):
        dsa.parse_strategy("crop_blur")
    with pytest.raises(ValueError, match="mode"):
        DSAParams(mode="S")
    with pytest.raises(ValueError, match="cannot be applied"):
        dsa.apply(x, dsa.sample("rotate", DSAParams(), 3, (8, 8), torch.Generator()), DSAParams())
    with pytest.raises(ValueError, match="float images"):
        dsa.augment(torch.zeros(2, 8, 8), "crop", None, 0)


# ----------------------------------------------------------------------------------------------- DC / DSA


def _dc(x, y, **kw):
    base = dict(arch_kwargs=TINY, iterations=6, batch_real=16, seed=0, lr_img=1.0)
    return matching.dc_synthesize(x, y, kw.pop("ipc", 2), 3, MEAN, STD, **{**base, **kw})


def _mean_dc_loss(images, x_u8, y, nets=4, dsa_strategy=None):
    """The DC objective at fixed, seeded random networks and the whole (tiny) real set per class."""
    total = 0.0
    ipc = len(images) // 3
    for k in range(nets):
        net = networks.build_network(1, 8, 3, 1000 + k, arch_kwargs=TINY)
        real = [_norm(x_u8[y == c]) for c in range(3)]
        syn = [images[c * ipc : (c + 1) * ipc] for c in range(3)]
        if dsa_strategy:
            real = [dsa.augment(r, dsa_strategy, None, 50 + k * 3 + c) for c, r in enumerate(real)]
            syn = [dsa.augment(s, dsa_strategy, None, 50 + k * 3 + c) for c, s in enumerate(syn)]
        total += float(gradient_match_loss(net, real, syn))
    return total / nets


@pytest.mark.parametrize("strategy", [None, "crop_flip"])
def test_a_stopped_matching_run_resumes_bit_for_bit(tmp_path, strategy):
    x, y = _toy()
    loops = dict(outer_loop=2, inner_loop=1, dsa_strategy=strategy)
    whole = _dc(x, y, **loops)
    state = tmp_path / "state.pt"
    first = _dc(x, y, stop_at=3, state_file=state, state_every=1, **loops)
    assert first.params["iterations"] == 3 and torch.load(state, weights_only=True)["done"] == 3
    assert torch.equal(first.images, _dc(x, y, iterations=3, **loops).images)  # a snapshot is a shorter run
    resumed = _dc(x, y, state_file=state, **loops)
    assert torch.equal(resumed.images, whole.images)
    assert resumed.params["loss_trace"] == whole.params["loss_trace"]
    with pytest.raises(ValueError, match="another run"):
        _dc(x, y, state_file=state, ipc=1, **loops)
    with pytest.raises(ValueError, match="more than stop_at"):
        _dc(x, y, state_file=state, stop_at=2, **loops)
    state.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="delete it"):
        _dc(x, y, state_file=state, **loops)


@pytest.mark.parametrize("strategy", [None, "crop_flip"])
def test_dc_and_dsa_decrease_the_gradient_matching_loss(strategy):
    x, y = _toy()
    start = _dc(x, y, iterations=0, outer_loop=1, inner_loop=0, dsa_strategy=strategy)
    end = _dc(x, y, iterations=8, outer_loop=2, inner_loop=1, dsa_strategy=strategy)
    assert end.method == ("dsa" if strategy else "dc")
    before = _mean_dc_loss(start.images, x, y, dsa_strategy=strategy)
    after = _mean_dc_loss(end.images, x, y, dsa_strategy=strategy)
    assert after < 0.9 * before, (before, after)
    assert len(end.params["loss_trace"]) == 8  # one value per iteration (fewer than 200)


def test_dc_init_real_output_format_and_params():
    x, y = _toy()
    s = _dc(x, y, ipc=10, iterations=0)
    assert isinstance(s, DistilledSet) and s.ipc == 10 and s.per_class.tolist() == [10, 10, 10]
    assert s.labels.tolist() == sum([[c] * 10 for c in range(3)], [])
    idx = torch.tensor(s.params["init_index"])
    assert torch.allclose(s.images, _norm(x[idx]))  # init='real': S_0 = real images
    assert (y[idx] == s.labels).all() and len(set(idx.tolist())) == 30
    assert (s.params["outer_loop"], s.params["inner_loop"]) == (10, 50)  # the code's get_loops(10)
    assert s.params["arch_kwargs"]["width"] == 8 and s.params["arch_kwargs"]["norm"] == "instance"
    assert s.params["lr_img"] == 1.0 and s.params["dsa_strategy"] == "none" and s.mean == MEAN
    assert matching.dc_loops(1) == (1, 1) and matching.dc_loops(50) == (50, 10)
    noise = _dc(x, y, ipc=1, iterations=0, init="noise")
    assert noise.params["init_index"] is None and abs(float(noise.images.std()) - 1) < 0.5


def test_dc_is_deterministic_and_seeded():
    x, y = _toy()
    kw = dict(iterations=2, outer_loop=2, inner_loop=1, dsa_strategy="color_crop_cutout_flip_scale_rotate")
    a, b, c = _dc(x, y, **kw), _dc(x, y, **kw), _dc(x, y, **{**kw, "seed": 1})
    assert torch.equal(a.images, b.images) and a.params == b.params
    assert not torch.allclose(a.images, c.images)
    assert a.synthesis_seconds > 0 and a.peak_memory_bytes >= 0


def test_dc_inner_loop_trains_the_network():
    x, y = _toy()
    net = networks.build_network(1, 8, 3, 0, arch_kwargs=TINY)
    xs, ys = _norm(x), y
    ce = lambda: float(torch.nn.functional.cross_entropy(net(xs), ys).detach())  # noqa: E731
    before = ce()
    matching._train_on_synthetic(
        net,
        torch.optim.SGD(net.parameters(), lr=0.05),
        xs,
        ys,
        20,
        256,
        None,
        DSAParams(),
        torch.Generator().manual_seed(0),
    )
    assert ce() < 0.5 * before


def test_dc_batchnorm_statistics_frozen_from_real_data():
    x, y = _toy()
    s = _dc(x, y, ipc=1, iterations=1, arch_kwargs={**TINY, "norm": "batch"})
    assert torch.isfinite(s.images).all() and s.params["arch_kwargs"]["norm"] == "batch"
    net = networks.build_network(1, 8, 3, 0, arch_kwargs={**TINY, "norm": "batch"})
    matching._freeze_batchnorm(
        net,
        x,
        matching.ClassSampler(y, 3),
        3,
        torch.tensor(MEAN).view(1, -1, 1, 1),
        torch.tensor(STD).view(1, -1, 1, 1),
        torch.Generator(),
        "cpu",
    )
    bns = [m for m in net.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    assert bns and all(not m.training for m in bns) and all(m.num_batches_tracked == 1 for m in bns)


def test_dc_bad_input():
    x, y = _toy()
    with pytest.raises(ValueError, match="ipc"):
        _dc(x, y, ipc=0)
    with pytest.raises(ValueError, match="init"):
        _dc(x, y, init="kmeans")
    with pytest.raises(ValueError, match="uint8"):
        _dc(x.float(), y)
    with pytest.raises(ValueError, match="labels"):
        _dc(x, y[:-1])
    with pytest.raises(ValueError, match="distance"):
        _dc(x, y, distance="l1")
    with pytest.raises(ValueError, match="unknown DSA"):
        _dc(x, y, dsa_strategy="blur")
    with pytest.raises(ValueError, match="no default DC loops"):
        _dc(x, y, ipc=7)
    with pytest.raises(ValueError, match="needs 30"):
        _dc(x, y, ipc=30, outer_loop=1, inner_loop=1)


def _spy_builds(monkeypatch):
    """Record the backbones that the DC/DSA/DM loops build (through ``models.build``)."""
    built = []
    real_build = networks.models.build

    def spy(name, **kw):
        net = real_build(name, **kw)
        built.append(net)
        return net

    monkeypatch.setattr(networks.models, "build", spy)
    return built


@pytest.mark.parametrize("method", ["dc", "dsa", "dm"])
def test_dc_dsa_dm_match_on_the_official_convnet_at_1x28x28(monkeypatch, method):
    """On 1-channel 28-px images the authors' ConvNet (VICO-UoE/DatasetCondensation networks.py) pads
    its first conv by 3 (28 -> 32 px): Conv-3 features are 16 x width (2,048 at width 128)."""
    x, y = _toy(per_class=4, size=28)
    tiny = {"width": 4, "depth": 3, "norm": "instance"}
    built = _spy_builds(monkeypatch)
    if method == "dm":
        out = matching.dm_synthesize(x, y, 1, 3, MEAN, STD, arch_kwargs=tiny, iterations=1, batch_real=4, seed=0)
    else:
        out = matching.dc_synthesize(
            x,
            y,
            1,
            3,
            MEAN,
            STD,
            arch_kwargs=tiny,
            iterations=1,
            outer_loop=1,
            inner_loop=0,
            batch_real=4,
            seed=0,
            dsa_strategy="crop_flip" if method == "dsa" else None,
        )
    assert built, "the loop built no network"
    for net in built:
        convs = [m for m in net.modules() if isinstance(m, torch.nn.Conv2d)]
        assert convs[0].padding == (3, 3) and all(c.padding == (1, 1) for c in convs[1:])
        assert net.feature_dim == 16 * 4
    assert out.params["arch_kwargs"]["first_padding"] == 3
    kw = networks.matching_arch_kwargs("convnet", None, 1, 28)
    assert kw["first_padding"] == 3 and networks.build_network(1, 28, None, 0, arch_kwargs=kw).feature_dim == 2048
    # other inputs, an explicit choice, and the shared builder of the other stages keep the 1-px padding
    assert networks.matching_arch_kwargs("convnet", None, 3, 32)["first_padding"] == 1
    assert networks.matching_arch_kwargs("convnet", {"first_padding": 1}, 1, 28)["first_padding"] == 1
    assert "first_padding" not in networks.matching_arch_kwargs("lenet", None, 1, 28)
    assert networks.build_network(1, 28, None, 0).feature_dim == 128 * 3 * 3


# ----------------------------------------------------------------------------------------------- DM


def test_class_means_and_batched_embedding_loss_match_per_class_computation():
    g = torch.Generator().manual_seed(0)
    f, yy = torch.randn(10, 4, generator=g), torch.tensor([0, 1, 2, 0, 1, 2, 2, 2, 0, 1])
    means = matching.class_means(f, yy, 3)
    for c in range(3):
        assert torch.allclose(means[c], f[yy == c].mean(0))
    x, y = _toy()
    embed = networks.build_network(1, 8, None, 3, arch_kwargs=TINY)
    syn = _norm(x[::8])
    ys = y[::8]
    batched = matching.embedding_match_loss(embed, _norm(x), y, syn, ys, 3)
    per_class = sum(((embed(_norm(x[y == c])).mean(0) - embed(syn[ys == c]).mean(0)) ** 2).sum() for c in range(3))
    assert float(batched.detach()) == pytest.approx(float(per_class.detach()), rel=1e-5)


def _mean_dm_loss(images, x_u8, y, nets=4):
    ipc = len(images) // 3
    ys = torch.arange(3).repeat_interleave(ipc)
    total = 0.0
    for k in range(nets):
        embed = networks.build_network(1, 8, None, 2000 + k, arch_kwargs=TINY)
        with torch.no_grad():
            total += float(matching.embedding_match_loss(embed, _norm(x_u8), y, images, ys, 3))
    return total / nets


def _dm(x, y, **kw):
    base = dict(arch_kwargs=TINY, iterations=20, batch_real=16, seed=0)
    return matching.dm_synthesize(x, y, kw.pop("ipc", 2), 3, MEAN, STD, **{**base, **kw})


def test_dm_decreases_the_embedding_mean_distance():
    x, y = _toy()
    start, end = _dm(x, y, iterations=0), _dm(x, y)
    assert end.method == "dm" and end.ipc == 2 and end.params["dsa_strategy"] == dsa.DEFAULT_STRATEGY
    before, after = _mean_dm_loss(start.images, x, y), _mean_dm_loss(end.images, x, y)
    assert after < 0.7 * before, (before, after)
    assert torch.allclose(start.images, _norm(x[torch.tensor(start.params["init_index"])]))


def test_dm_deterministic_and_augmentation_matters():
    x, y = _toy()
    a, b = _dm(x, y, iterations=3), _dm(x, y, iterations=3)
    assert torch.equal(a.images, b.images) and a.params == b.params
    plain = _dm(x, y, iterations=3, dsa_strategy=None)
    assert plain.params["dsa_strategy"] == "none" and plain.params["dsa_params"] is None
    assert not torch.allclose(a.images, plain.images)
    assert a.params["lr_img"] == 1.0 and a.params["batch_real"] == 16 and a.params["iterations"] == 3
    with pytest.raises(ValueError, match="ipc"):
        _dm(x, y, ipc=0)
