import pytest
import torch
import torchvision

from compendium.core import models

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: steady on a busy 2-core machine


@pytest.mark.parametrize(
    "name,kw,size",
    [
        ("convnet", dict(width=16, depth=3), 28),
        ("convnet", dict(width=16, depth=3, global_pool=True, norm="batch", pooling="max"), 28),
        ("convnet", dict(width=8, depth=2, norm="layer", activation="sigmoid", pooling="none"), 16),
        ("resnet18", dict(width_mult=0.125), 28),
        ("resnet18", dict(width_mult=0.125, stem="imagenet"), 64),
        ("resnet50", dict(width_mult=0.0625, stem="small"), 32),
        ("mobilenet_v2", dict(width_mult=0.25), 28),
        ("efficientnet_b0", dict(width_mult=0.25), 32),
        ("vit_tiny", dict(width_mult=0.5, depth=2), 28),
    ],
)
def test_backbones_map_images_to_feature_dim(name, kw, size):
    torch.manual_seed(0)
    net = models.build(name, in_channels=1, image_size=size, **kw).eval()
    out = net(torch.randn(2, 1, size, size))
    assert out.shape == (2, net.feature_dim)
    assert torch.isfinite(out).all()


def _tv_params(model, head):
    return models.count_parameters(model) - models.count_parameters(head)


def test_full_width_networks_are_the_real_ones():
    r18 = torchvision.models.resnet18(weights=None)
    assert models.count_parameters(models.resnet18(3, 224, stem="imagenet")) == _tv_params(r18, r18.fc)
    r50 = torchvision.models.resnet50(weights=None)
    assert models.count_parameters(models.resnet50(3, 224)) == _tv_params(r50, r50.fc)
    mb = torchvision.models.mobilenet_v2(weights=None)
    assert models.count_parameters(models.mobilenet_v2(3, 224)) == _tv_params(mb, mb.classifier)
    ef = torchvision.models.efficientnet_b0(weights=None)
    assert models.count_parameters(models.efficientnet_b0(3, 224)) == _tv_params(ef, ef.classifier)
    assert models.resnet18(3, 32).feature_dim == 512 and models.resnet50(3, 224).feature_dim == 2048
    vit = models.vit_tiny(3, 224)
    assert vit.feature_dim == 192 and len(vit.body.vit.encoder.layers) == 12
    assert vit.body.vit.patch_size == 16 and vit.body.vit.encoder.layers[0].self_attention.num_heads == 3


def test_small_stem_keeps_resolution_and_width_scales():
    small = models.resnet18(1, 28, width_mult=0.25)
    assert small.body.conv1.stride == (1, 1) and isinstance(small.body.maxpool, torch.nn.Identity)
    assert small.feature_dim == 128
    assert models.count_parameters(small) < models.count_parameters(models.resnet18(1, 28)) / 10
    assert models.vit_patch_size(28) == 4 and models.vit_patch_size(32) == 4 and models.vit_patch_size(64) == 8


def test_resnet_small_stem_stride_halves_the_resolution():
    x = torch.randn(2, 1, 28, 28)
    full, strided = models.resnet18(1, 28, width_mult=0.125), models.resnet18(1, 28, width_mult=0.125, stem_stride=2)
    assert strided.body.conv1.stride == (2, 2) and isinstance(strided.body.maxpool, torch.nn.Identity)
    assert models.count_parameters(full) == models.count_parameters(strided)
    assert full.body.layer1(full.body.conv1(x)).shape[-1] == 28
    assert strided.body.layer1(strided.body.conv1(x)).shape[-1] == 14
    assert strided(x).shape == (2, strided.feature_dim)
    with pytest.raises(ValueError, match="stem_stride"):
        models.resnet18(1, 28, stem_stride=3)
    with pytest.raises(ValueError, match="small-image stem"):
        models.resnet18(1, 28, stem="imagenet", stem_stride=2)


def test_convnet_feature_dim_matches_dc():
    assert models.convnet(3, 32, width=128, depth=3).feature_dim == 128 * 4 * 4
    assert models.convnet(1, 28, width=32, depth=3).feature_dim == 32 * 3 * 3
    with pytest.raises(ValueError):
        models.build("not_a_backbone")  # "alexnet" was the example here until it became a student
    with pytest.raises(ValueError):
        models.convnet(norm="weird")


@pytest.mark.parametrize("width", [128, 4])
def test_convnet_official_dc_padding_on_1x28x28(width):
    """DC/DSA/DM's ConvNet (VICO-UoE/DatasetCondensation networks.py): the first conv pads 3 on
    1-channel 28-px inputs (28 -> 32 px), so Conv-3's flattened features are width x 4 x 4."""
    assert models.dc_first_padding(1, 28) == 3
    assert models.dc_first_padding(3, 32) == 1 and models.dc_first_padding(1, 32) == 1
    net = models.convnet(1, 28, width=width, depth=3, first_padding=models.dc_first_padding(1, 28))
    convs = [m for m in net.modules() if isinstance(m, torch.nn.Conv2d)]
    assert [c.padding for c in convs] == [(3, 3), (1, 1), (1, 1)]
    assert net.feature_dim == 16 * width
    if width == 128:
        assert net.feature_dim == 2048
    out = net(torch.randn(2, 1, 28, 28))
    assert out.shape == (2, 16 * width)
    ln = models.convnet(1, 28, width=width, depth=3, norm="layer", first_padding=3)  # LayerNorm at 32 px, as DC
    assert ln(torch.randn(2, 1, 28, 28)).shape == (2, 16 * width)


def test_convnet_default_padding_unchanged():
    """The default (first_padding=1) is the same network as before, parameter for parameter."""
    torch.manual_seed(0)
    a = models.convnet(1, 28, width=8, depth=3)
    torch.manual_seed(0)
    b = models.convnet(1, 28, width=8, depth=3, first_padding=1)
    assert a.feature_dim == b.feature_dim == 8 * 3 * 3
    assert all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values()))
    with pytest.raises(ValueError, match="first_padding"):
        models.convnet(first_padding=-1)


def test_mobile_stem_stride_is_a_choice():
    default = models.mobilenet_v2(1, 28, width_mult=0.25)
    assert default.body[0][0][0].stride == (1, 1)
    for build in (models.mobilenet_v2, models.efficientnet_b0):
        net = build(1, 28, width_mult=0.25, stem_stride=2).eval()
        assert net.body[0][0][0].stride == (2, 2)
        assert net(torch.randn(2, 1, 28, 28)).shape == (2, net.feature_dim)
    assert models.efficientnet_b0(1, 224).body[0][0][0].stride == (2, 2)
    with pytest.raises(ValueError, match="stem_stride"):
        models.mobilenet_v2(1, 28, stem_stride=3)


# --- students of the cross-architecture matrix (issue 7) --------------------------------------------

STUDENTS = [
    ("mlp", dict(width=32)),
    ("lenet", dict()),
    ("alexnet", dict(width_mult=0.125)),
    ("alexnet", dict(width_mult=0.125, norm="batch")),
    ("vgg11", dict(width_mult=0.125)),
    ("vgg11", dict(width_mult=0.125, norm="batch")),
    ("vgg11", dict(width_mult=0.125, norm="none")),
    ("shufflenet_v2", dict(width_mult=0.25)),
    ("vit_bn", dict(width_mult=0.25, depth=2)),
]


@pytest.mark.parametrize("name,kw", STUDENTS)
@pytest.mark.parametrize("channels,size", [(1, 28), (3, 32)])
def test_students_give_finite_features_and_train_one_step(name, kw, channels, size):
    torch.manual_seed(0)
    net = models.build(name, in_channels=channels, image_size=size, **kw)
    torch.manual_seed(0)
    twin = models.build(name, in_channels=channels, image_size=size, **kw).eval()
    head = torch.nn.Linear(net.feature_dim, 10)
    x, y = torch.randn(2, channels, size, size), torch.tensor([3, 7])
    torch.testing.assert_close(net.eval()(x), twin(x), rtol=0, atol=0)  # deterministic given the seed
    feats = net.train()(x)
    assert feats.shape == (2, net.feature_dim) and torch.isfinite(feats).all()
    params = list(net.parameters()) + list(head.parameters())
    before = [p.detach().clone() for p in params]
    opt = torch.optim.SGD(params, lr=0.1)
    loss = torch.nn.functional.cross_entropy(head(feats), y)
    loss.backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in params)
    opt.step()
    changed = [not torch.equal(b, p) for b, p in zip(before, params)]
    assert sum(changed) >= len(params) // 2  # most tensors move (dead ReLUs may leave a few still)
    assert not torch.allclose(twin(x), net.eval()(x))  # the step changed the features


def _conv(c_in, c_out, k, bias=True):
    return c_out * c_in * k * k + (c_out if bias else 0)


def test_dc_networks_have_dc_parameter_counts():
    # DC's networks.py at 1x28x28, heads excluded, counted by hand
    assert models.count_parameters(models.mlp(1, 28)) == (784 * 128 + 128) + (128 * 128 + 128)
    assert models.mlp(1, 28).feature_dim == 128 and models.mlp(1, 28, width=64, depth=4).feature_dim == 64
    lenet = _conv(1, 6, 5) + _conv(6, 16, 5) + (400 * 120 + 120) + (120 * 84 + 84)
    assert models.count_parameters(models.lenet(1, 28)) == lenet
    assert models.count_parameters(models.lenet(3, 32)) == lenet + 2 * 6 * 25
    widths, kernels = (128, 192, 256, 192, 192), (5, 5, 3, 3, 3)
    alex = sum(_conv(c, w, k) for c, w, k in zip((1,) + widths[:-1], widths, kernels))
    assert models.count_parameters(models.alexnet(1, 28)) == alex
    assert models.count_parameters(models.alexnet(1, 28, norm="batch")) == alex + 2 * sum(widths)
    convs = [v for v in models.VGG11_CONFIG if v != "M"]
    vgg = sum(_conv(c, w, 3) + 2 * w for c, w in zip([1] + convs[:-1], convs))  # + instance-norm affine
    assert models.count_parameters(models.vgg11(1, 28)) == vgg
    assert models.count_parameters(models.vgg11(1, 28, norm="none")) == vgg - 2 * sum(convs)
    for c, s in ((1, 28), (3, 32)):
        assert models.alexnet(c, s).feature_dim == 192 * 4 * 4  # DC's 4x4 final map at 28 and 32 px
        assert models.vgg11(c, s).feature_dim == 512
        assert models.lenet(c, s).feature_dim == 84


def test_small_image_padding_and_pools_follow_dc():
    lenet = models.lenet(1, 28)
    assert lenet.body[0].padding == (2, 2) and models.lenet(3, 32).body[0].padding == (0, 0)
    assert models.alexnet(1, 28).body[0].padding == (4, 4) and models.alexnet(3, 32).body[0].padding == (2, 2)
    vgg28 = models.vgg11(1, 28, width_mult=0.125)
    pools = lambda n: sum(isinstance(m, torch.nn.MaxPool2d) for m in n.modules())
    assert vgg28.body[0].padding == (3, 3) and pools(vgg28) == 5
    vgg16 = models.vgg11(1, 16, width_mult=0.125).eval()  # 16 -> 1x1 after four pools: the fifth is dropped
    assert pools(vgg16) == 4 and vgg16(torch.randn(2, 1, 16, 16)).shape == (2, 64)
    vgg64 = models.vgg11(3, 64, width_mult=0.125)
    assert pools(vgg64) == 5 and vgg64.feature_dim == 64 * 2 * 2
    assert isinstance(models.vgg11(1, 28, width_mult=0.125).body[1], torch.nn.GroupNorm)
    assert isinstance(models.vgg11(1, 28, width_mult=0.125, norm="batch").body[1], torch.nn.BatchNorm2d)


def test_shufflenet_full_width_is_torchvisions():
    sn = torchvision.models.shufflenet_v2_x1_0(weights=None)
    ours = models.shufflenet_v2(3, 224)
    assert models.count_parameters(ours) == _tv_params(sn, sn.fc) and ours.feature_dim == 1024
    assert ours.body.conv1[0].stride == (2, 2) and isinstance(ours.body.maxpool, torch.nn.MaxPool2d)
    small = models.shufflenet_v2(1, 28, width_mult=0.25)
    assert small.body.conv1[0].stride == (1, 1) and isinstance(small.body.maxpool, torch.nn.Identity)
    assert small.body.conv1[0].in_channels == 1
    strided = models.shufflenet_v2(1, 28, width_mult=0.25, stem_stride=2).eval()
    assert strided.body.conv1[0].stride == (2, 2) and isinstance(strided.body.maxpool, torch.nn.MaxPool2d)
    assert strided(torch.randn(2, 1, 28, 28)).shape == (2, strided.feature_dim)
    odd = models.shufflenet_v2(1, 28, width_mult=0.3)  # channels rounded to multiples of 4: even halves
    assert all(c % 4 == 0 for c in odd.body._stage_out_channels)
    with pytest.raises(ValueError, match="stem_stride"):
        models.shufflenet_v2(1, 28, stem_stride=3)


@pytest.mark.parametrize(
    "name,kw",
    [
        ("alexnet", {}),
        ("vgg11", {}),
        ("shufflenet_v2", {}),
        ("vit_bn", dict(depth=2)),
    ],
)
def test_width_mult_shrinks_parameter_counts(name, kw):
    counts = [
        models.count_parameters(models.build(name, in_channels=1, image_size=28, width_mult=m, **kw))
        for m in (1.0, 0.5, 0.25)
    ]
    assert counts[0] > 2.5 * counts[1] > 2.5 * 2.5 * counts[2]  # ~quadratic in width


def test_vit_bn_has_only_batchnorms_with_hookable_running_stats():
    torch.manual_seed(0)
    depth = 2
    net = models.vit_bn(1, 28, width_mult=0.25, depth=depth)
    assert not any(isinstance(m, torch.nn.LayerNorm) for m in net.modules())
    bns = [m for m in net.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    assert len(bns) == 3 * depth + 1  # ln_1, ln_2, FFN BN per block, and the encoder's last norm
    assert (
        len(
            [
                m
                for m in models.vit_bn(1, 28, width_mult=0.25, depth=depth, ffn_bn=False).modules()
                if isinstance(m, models.TokenBatchNorm)
            ]
        )
        == 2 * depth + 1
    )
    seen: dict = {}
    hooks = [m.register_forward_hook(lambda m, i, o: seen.__setitem__(m, models.bn_input_stats(m, i[0]))) for m in bns]
    for m in bns:
        m.momentum = 1.0  # running stats become exactly this batch's statistics
    x = torch.randn(4, 1, 28, 28)
    net.train()(x)
    for h in hooks:
        h.remove()
    assert len(seen) == len(bns)
    for m in bns:
        mean, var = seen[m]
        n = 4 * (49 + 1)  # batch x tokens (7x7 patches + class token)
        assert mean.shape == m.running_mean.shape
        torch.testing.assert_close(m.running_mean, mean)
        torch.testing.assert_close(m.running_var, var * n / (n - 1), rtol=1e-4, atol=1e-5)
        assert not torch.allclose(m.running_var, torch.ones_like(m.running_var))
    # eval: running statistics, so a sample's features do not depend on its batch-mates
    net.eval()
    torch.testing.assert_close(net(x)[:1], net(x[:1]), rtol=1e-4, atol=1e-5)


def test_token_batchnorm_normalises_over_batch_and_tokens():
    torch.manual_seed(0)
    bn = models.TokenBatchNorm(5)
    torch.nn.init.normal_(bn.weight)
    torch.nn.init.normal_(bn.bias)
    x = torch.randn(3, 7, 5) * 4 + 2
    mean, var = x.mean((0, 1)), x.var((0, 1), unbiased=False)
    expected = (x - mean) / torch.sqrt(var + bn.eps) * bn.weight + bn.bias
    torch.testing.assert_close(bn(x), expected, rtol=1e-5, atol=1e-5)
    stats = models.bn_input_stats(bn, x)
    torch.testing.assert_close(stats[0], mean)
    torch.testing.assert_close(stats[1], var)
    img = torch.randn(3, 4, 5, 5)
    m2, v2 = models.bn_input_stats(torch.nn.BatchNorm2d(4), img)
    torch.testing.assert_close(m2, img.mean((0, 2, 3)))
    torch.testing.assert_close(v2, img.var((0, 2, 3), unbiased=False))
    with pytest.raises(ValueError, match="tokens"):
        bn(torch.randn(3, 5))
    with pytest.raises(ValueError, match="BatchNorm"):
        models.bn_input_stats(torch.nn.Linear(2, 2), x)


def test_students_reject_bad_arguments():
    with pytest.raises(ValueError, match="depth"):
        models.mlp(1, 28, depth=1)
    with pytest.raises(ValueError, match="lenet"):
        models.lenet(1, 12)
    with pytest.raises(ValueError, match="normalization"):
        models.alexnet(1, 28, norm="weird")
    with pytest.raises(ValueError, match="normalization"):
        models.vgg11(1, 28, norm="layerwise")
    with pytest.raises(ValueError, match="patch"):
        models.vit_bn(1, 30, patch_size=4)
    for name in ("mlp", "lenet", "alexnet", "vgg11", "shufflenet_v2", "vit_bn"):
        assert name in models.BACKBONES


@pytest.mark.parametrize("name", sorted(models.BACKBONES))
def test_every_backbone_pickles(name):
    """Worker processes receive models (teachers) by pickle: no backbone may hold a local class."""
    import pickle

    kw = {"resnet50": {"image_size": 32, "width_mult": 0.0625}, "mlp": {"width": 8}, "convnet": {"width": 4}}.get(
        name, {}
    )
    if name in ("resnet18", "mobilenet_v2", "efficientnet_b0", "shufflenet_v2", "alexnet", "vgg11"):
        kw = {"width_mult": 0.0625}
    if name in ("vit_tiny", "vit_bn"):
        kw = {"width_mult": 0.125, "depth": 1}
    net = models.build(name, in_channels=1, image_size=kw.pop("image_size", 28), **kw)
    back = pickle.loads(pickle.dumps(net))
    x = torch.randn(2, 1, *(2 * [32 if name == "resnet50" else 28]))
    net.eval(), back.eval()
    assert torch.equal(net(x), back(x))


def test_channels_last_is_avoided_where_onednn_corrupts_the_heap():
    """oneDNN #6035: a strided 1x1 convolution with fewer than 16 input channels, in NHWC on the CPU, from 56 px."""
    narrow = models.build("resnet18", in_channels=3, image_size=64, width_mult=0.0625, stem_stride=1)
    assert not models.channels_last_safe(narrow, 64, "cpu")
    assert models.channels_last_safe(narrow, 28, "cpu") and models.channels_last_safe(narrow, 64, "cuda")
    wide = models.build("resnet18", in_channels=3, image_size=64, width_mult=0.25, stem_stride=1)  # 16-channel shortcut
    assert models.channels_last_safe(wide, 64, "cpu")
    assert models.channels_last_safe(models.build("convnet", in_channels=3, image_size=64, width=8), 64, "cpu")


def test_resnets_take_the_imagenet_stem_from_128_px_unless_told():
    for build in (models.resnet18, models.resnet50):
        big, small = build(3, 224, width_mult=0.25), build(3, 32, width_mult=0.25)
        assert big.body.conv1.kernel_size == (7, 7) and isinstance(big.body.maxpool, torch.nn.MaxPool2d)
        assert small.body.conv1.kernel_size == (3, 3) and isinstance(small.body.maxpool, torch.nn.Identity)
    # the small stem's stride (the zoo and the students always pass one) has no say over the ImageNet stem
    assert models.resnet18(3, 224, stem_stride=1).body.conv1.stride == (2, 2)
    assert models.resnet18(3, 64, stem_stride=2).body.conv1.stride == (2, 2)  # Tiny-ImageNet: small stem
    assert models.resnet18(3, 224, stem="small").body.conv1.kernel_size == (3, 3)  # an explicit stem stands
    r18 = torchvision.models.resnet18(weights=None)
    assert models.count_parameters(models.resnet18(3, 224)) == _tv_params(r18, r18.fc)
    from compendium.distill import zoo

    kw = zoo.arch_kwargs("resnet50", width_mult=1.0, stem_stride=1)
    assert models.build("resnet50", in_channels=3, image_size=224, **kw).body.conv1.kernel_size == (7, 7)
    assert models.build("resnet50", in_channels=3, image_size=32, **kw).body.conv1.kernel_size == (3, 3)
