"""The cross-architecture students: every zoo member builds at 28 px, one channel, and the schema's
list of architectures is the library's."""

import pytest
import torch

from compendium.core import models
from compendium.distill import evaluate as E
from compendium.distill import zoo
from compendium.pipeline.schemas import dd_crossarch


def test_schema_lists_the_zoo():
    assert tuple(dd_crossarch.ZOO) == zoo.ZOO


@pytest.mark.parametrize("name", zoo.ZOO + ("vit_bn",))
def test_every_member_builds_and_maps_images_to_features(name):
    kw = zoo.arch_kwargs(name, width=8, width_mult=0.0625, vit_depth=1)
    net = models.build(name, in_channels=1, image_size=28, **kw)
    out = net(torch.randn(2, 1, 28, 28))
    assert out.shape == (2, net.feature_dim)
    assert name in zoo.LABELS and name in zoo.RELATIVE_COST


def test_configs_keep_the_base_protocol():
    base = E.EvalConfig(steps=7, label_mode="teacher")
    cfgs = zoo.configs(["mlp", "resnet18"], base, width_mult=0.25)
    assert cfgs["resnet18"].arch_kwargs == {"width_mult": 0.25, "stem_stride": 2} and cfgs["mlp"].steps == 7
    assert all(c.label_mode == "teacher" for c in cfgs.values())
    with pytest.raises(ValueError, match="unknown zoo"):
        zoo.arch_kwargs("lstm")


def test_scale_knobs_reach_the_students():
    kw = zoo.arch_kwargs("vit_tiny", vit_patch=7, vit_depth=2)
    vit = models.build("vit_tiny", in_channels=1, image_size=28, **kw)
    assert vit.body.vit.patch_size == 7 and len(vit.body.vit.encoder.layers) == 2
    assert zoo.arch_kwargs("vit_bn", vit_patch=7)["patch_size"] == 7
    assert zoo.arch_kwargs("vit_tiny")["patch_size"] is None  # the default patch for the input size
    r = models.build("resnet18", in_channels=1, image_size=28, **zoo.arch_kwargs("resnet18", stem_stride=1))
    assert r.body.conv1.stride == (1, 1)


@pytest.mark.parametrize("name", ["mobilenet_v2", "efficientnet_b0", "shufflenet_v2"])
def test_depth_mult_halves_the_mobile_families(name):
    import torch

    from compendium.core import models

    def blocks(net):
        return sum(1 for m in net.modules() if type(m).__name__ in ("InvertedResidual", "MBConv"))

    kw = zoo.arch_kwargs(name, width_mult=0.125, stem_stride=2)
    full = models.build(name, in_channels=1, image_size=28, **kw)
    half = models.build(name, in_channels=1, image_size=28, **{**kw, "depth_mult": 0.5})
    assert blocks(half) < blocks(full)
    assert {"mobilenet_v2": 17, "efficientnet_b0": 16, "shufflenet_v2": 16}[name] == blocks(full)
    assert half(torch.randn(2, 1, 28, 28)).shape == full(torch.randn(2, 1, 28, 28)).shape
    with pytest.raises(ValueError, match="depth_mult"):
        models.build(name, in_channels=1, image_size=28, **{**kw, "depth_mult": 0.0})


def test_dc_configs_are_dcs_own_networks():
    """DC's Table 2 students: instance-norm ConvNet and VGG-11, AlexNet without norm (no batch statistics of
    a one-image-per-class set); ResNet-18 (BatchNorm only here) is refused."""
    base = E.EvalConfig(arch="convnet", steps=10)
    cfg = zoo.dc_configs(["mlp", "convnet", "alexnet", "vgg11"], base, width=8, width_mult=0.125)
    assert cfg["convnet"].arch_kwargs == {"width": 8, "depth": 3, "norm": "instance"}
    assert cfg["alexnet"].arch_kwargs["norm"] == "none" and cfg["vgg11"].arch_kwargs["norm"] == "instance"
    assert cfg["mlp"].arch_kwargs == zoo.arch_kwargs("mlp") and cfg["convnet"].steps == 10
    with pytest.raises(ValueError, match="resnet18"):
        zoo.dc_configs(["convnet", "resnet18"], base)
    assert dd_crossarch.DC_ARCHS == tuple(zoo.DC_ARCHS)
