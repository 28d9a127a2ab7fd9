"""Backbones: every one maps ``[B, C, H, W]`` images to ``[B, feature_dim]`` features.

* ``convnet``: the dataset-distillation ConvNet family (Gidaris & Komodakis 2018; DC, Zhao et al.
  2021): ``depth`` x [conv 3x3 (``width``) -> norm -> activation -> pool 2x2]; the features are
  the flattened last map (as DC) or its global average (``global_pool=True``). ``first_padding=3``
  is DC's own network on 1-channel 28-px inputs (28 -> 32 px; :func:`dc_first_padding`).
* ``resnet18`` / ``resnet50`` / ``resnet101`` (He et al. 2016) built from torchvision's blocks, with the
  small-image stem (3x3 conv, stride 1, no max-pool: the "modified" ResNet of ReLA's code) or the
  ImageNet stem, and a width multiplier on every stage (1.0 = the real network).
* ``mobilenet_v2`` (Sandler et al. 2018) and ``efficientnet_b0`` (Tan & Le 2019) from
  torchvision, with their own width multipliers; the stem stride is 1 for inputs below 64 px.
* ``vit_tiny`` (ViT-Ti/16, Touvron et al. 2021: 12 layers, 3 heads, 192-d) from torchvision's
  VisionTransformer, the patch size adapted to small inputs (16 at 224 px, 4 at 28-32 px);
  the width multiplier scales the hidden size, ``depth`` the number of layers.

Students of the cross-architecture matrix (DC, Zhao et al. 2021, §4 "cross-architecture
generalization"; DWA, Du et al. 2024, Tables 4 and 9):

* ``mlp``, ``lenet``, ``alexnet``, ``vgg11``: DC's small-image networks (its ``networks.py``: MLP,
  LeNet, AlexNet/AlexNetBN, VGG11/VGG11BN) without their linear heads; ``vgg16`` (configuration D) built
  the same way, DWA Table 4's VGG-16.
* ``shufflenet_v2`` (Ma et al. 2018) from torchvision's x1.0 stages, with a width multiplier and
  the same small-image stem rule as the mobile networks.
* ``vit_bn``: ViT-Tiny with every LayerNorm replaced by a token BatchNorm and one more BN between
  the two FFN linears (SRe2L's "ViT-BN", used by DWA's Table 9), so that BN-statistic matching
  (DWA §3.1, Eq. 4) can hook it; :func:`bn_input_stats` gives the statistics such a hook needs.

Every constructor takes ``in_channels`` (1 for Fashion-MNIST) and ``image_size``; the ``cpu``
profile uses reduced widths (a full ResNet-18 trains at only ~40 img/s on 2 cores at 28 px).
"""

from __future__ import annotations

import math
from typing import Callable

import torch
from torch import nn


class Backbone(nn.Module):
    """A feature extractor with a known ``feature_dim`` (features are flat vectors)."""

    def __init__(self, body: nn.Module, feature_dim: int, name: str):
        super().__init__()
        self.body = body
        self.feature_dim = int(feature_dim)
        self.name = name

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flatten(self.body(x), 1)


def _norm(kind: str, channels: int, spatial: int) -> nn.Module:
    if kind == "batch":
        return nn.BatchNorm2d(channels)
    if kind == "instance":  # DC's "instancenorm" is GroupNorm with one group per channel
        return nn.GroupNorm(channels, channels, affine=True)
    if kind == "layer":
        return nn.LayerNorm([channels, spatial, spatial])
    if kind == "group":
        return nn.GroupNorm(min(4, channels), channels)
    if kind == "none":
        return nn.Identity()
    raise ValueError(f"unknown normalization {kind!r}")


def _activation(kind: str) -> nn.Module:
    return {
        "relu": nn.ReLU(inplace=True),
        "sigmoid": nn.Sigmoid(),
        "leaky_relu": nn.LeakyReLU(0.01, inplace=True),
        "gelu": nn.GELU(),
    }[kind]


DC_MNIST_FIRST_PADDING = 3  # DC/DSA/DM's ConvNet on 1-channel 28-px inputs: 28 -> 32 px


def dc_first_padding(in_channels: int, image_size: int) -> int:
    """Padding of the first conv of the official DC/DSA/DM ConvNet (VICO-UoE/DatasetCondensation
    ``networks.py`` ``ConvNet._make_layers``: ``padding=3 if channel == 1 and d == 0``, with the
    feature shape computed at 32 px when ``im_size[0] == 28``): 3 for 1-channel 28-px inputs
    (MNIST, Fashion-MNIST), otherwise 1."""
    return DC_MNIST_FIRST_PADDING if in_channels == 1 and image_size == 28 else 1


def convnet(
    in_channels: int = 1,
    image_size: int = 28,
    width: int = 128,
    depth: int = 3,
    norm: str = "instance",
    activation: str = "relu",
    pooling: str = "avg",
    global_pool: bool = False,
    first_padding: int = 1,
) -> Backbone:
    """The DC-style ConvNet (Conv-3 by default); ``pooling`` in {avg, max, none}.

    ``first_padding`` pads the first 3x3 conv (the later ones pad 1). The default 1 keeps the input
    size; 3 is the official DC/DSA/DM network on 1-channel 28-px inputs (:func:`dc_first_padding`):
    28 -> 32 px, so Conv-3 ends in a 4x4 map (``16 * width`` features: 2,048 at width 128) instead
    of 3x3 (``9 * width``)."""
    if pooling not in ("avg", "max", "none"):
        raise ValueError(f"unknown pooling {pooling!r}")
    if first_padding < 0:
        raise ValueError(f"first_padding must be >= 0, got {first_padding}")
    layers: list[nn.Module] = []
    c, s = in_channels, image_size + 2 * first_padding - 2
    for i in range(depth):
        layers += [
            nn.Conv2d(c, width, 3, padding=first_padding if i == 0 else 1),
            _norm(norm, width, s),
            _activation(activation),
        ]
        if pooling != "none":
            layers.append(nn.AvgPool2d(2) if pooling == "avg" else nn.MaxPool2d(2))
            s //= 2
        c = width
    if global_pool:
        layers.append(nn.AdaptiveAvgPool2d(1))
        dim = width
    else:
        dim = width * s * s
    return Backbone(nn.Sequential(*layers), dim, f"convnet{depth}")


def _scaled(c: int, mult: float, divisor: int = 8) -> int:
    return max(divisor, int(round(c * mult / divisor)) * divisor)


def _scaled_resnet_class():
    """The :class:`ScaledResNet` class, made on first use (torchvision is imported lazily) and kept as a
    module attribute, so that models pickle (worker processes receive teachers)."""
    cls = globals().get("_ScaledResNet")
    if cls is None:
        from torchvision.models.resnet import ResNet

        class ScaledResNet(ResNet):
            """torchvision's ResNet with widths scaled by ``width_mult`` and a small-image or ImageNet stem,
            headless."""

            def __init__(self, block, layers, in_channels: int, width_mult: float, stem: str, stem_stride: int = 1):
                nn.Module.__init__(self)
                self._norm_layer = nn.BatchNorm2d
                self.dilation, self.groups, self.base_width = 1, 1, 64
                widths = [_scaled(w, width_mult) for w in (64, 128, 256, 512)]
                self.inplanes = widths[0]
                if stem == "small":  # 3x3 conv, no max-pool; stride 2 is ~2.7x cheaper at 28-32 px
                    self.conv1 = nn.Conv2d(in_channels, widths[0], 3, stem_stride, 1, bias=False)
                    self.maxpool = nn.Identity()
                elif stem == "imagenet":
                    self.conv1 = nn.Conv2d(in_channels, widths[0], 7, 2, 3, bias=False)
                    self.maxpool = nn.MaxPool2d(3, 2, 1)
                else:
                    raise ValueError(f"unknown stem {stem!r}")
                self.bn1 = nn.BatchNorm2d(widths[0])
                self.relu = nn.ReLU(inplace=True)
                self.layer1 = self._make_layer(block, widths[0], layers[0])
                self.layer2 = self._make_layer(block, widths[1], layers[1], stride=2)
                self.layer3 = self._make_layer(block, widths[2], layers[2], stride=2)
                self.layer4 = self._make_layer(block, widths[3], layers[3], stride=2)
                self.avgpool = nn.AdaptiveAvgPool2d(1)
                self.fc = nn.Identity()
                for m in self.modules():
                    if isinstance(m, nn.Conv2d):
                        nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    elif isinstance(m, nn.BatchNorm2d):
                        nn.init.ones_(m.weight)
                        nn.init.zeros_(m.bias)
                self.out_dim = widths[3] * block.expansion

        ScaledResNet.__module__, ScaledResNet.__qualname__ = __name__, "ScaledResNet"
        globals()["_ScaledResNet"] = cls = ScaledResNet
    return cls


def __getattr__(name: str):  # PEP 562: ``compendium.core.models.ScaledResNet`` for pickle
    if name == "ScaledResNet":
        return _scaled_resnet_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: From this input size on a ResNet whose ``stem`` is not given takes torchvision's ImageNet stem (7x7 stride 2 +
#: max-pool), as SRe2L and DWA train and evaluate ResNets on ImageNet-1K at 224 px; below it the CIFAR stem (3x3
#: stride 1, no max-pool), which DWA also uses on Tiny-ImageNet at 64 px.
IMAGENET_STEM_FROM = 128


def resnet_stem(image_size: int, stem: str | None) -> str:
    """``stem`` when given, else the stem of :data:`IMAGENET_STEM_FROM`'s rule."""
    return stem if stem is not None else ("imagenet" if image_size >= IMAGENET_STEM_FROM else "small")


def _resnet(
    block,
    layers,
    in_channels: int,
    image_size: int,
    width_mult: float,
    stem: str | None,
    stem_stride: int | None = None,
) -> Backbone:
    if stem is None:
        stem = resnet_stem(image_size, None)
        if stem == "imagenet":
            stem_stride = None  # the small stem's stride has no say over the ImageNet stem
    if stem_stride is not None and stem != "small":
        raise ValueError("stem_stride applies to the small-image stem only")
    if stem_stride not in (None, 1, 2):
        raise ValueError(f"stem_stride must be 1 or 2, got {stem_stride}")
    net = _scaled_resnet_class()(block, layers, in_channels, width_mult, stem, stem_stride or 1)
    return Backbone(net, net.out_dim, "resnet")


def resnet18(
    in_channels: int = 3,
    image_size: int = 32,
    width_mult: float = 1.0,
    stem: str | None = None,
    stem_stride: int | None = None,
) -> Backbone:
    """ResNet-18 (He et al. 2016), headless. ``stem``: ``small`` (3x3 conv, no max-pool: the CIFAR variant
    of SRe2L/DWA/ReLA) or ``imagenet`` (7x7 stride 2 + max-pool); None: by the input size
    (:data:`IMAGENET_STEM_FROM`). ``stem_stride`` 2 makes the small stem stride 2 (total stride 16): the reduced
    ``cpu`` profile's cheaper variant (None/1: the papers')."""
    from torchvision.models.resnet import BasicBlock

    b = _resnet(BasicBlock, [2, 2, 2, 2], in_channels, image_size, width_mult, stem, stem_stride)
    b.name = "resnet18"
    return b


def resnet50(
    in_channels: int = 3,
    image_size: int = 224,
    width_mult: float = 1.0,
    stem: str | None = None,
    stem_stride: int | None = None,
) -> Backbone:
    """ResNet-50 (He et al. 2016, bottleneck blocks 3-4-6-3), headless; ``stem`` and ``stem_stride`` as
    :func:`resnet18` (by default the ImageNet stem at 224 px, the small one at 32-64 px: DWA's Tables 4 and 9)."""
    from torchvision.models.resnet import Bottleneck

    b = _resnet(Bottleneck, [3, 4, 6, 3], in_channels, image_size, width_mult, stem, stem_stride)
    b.name = "resnet50"
    return b


def resnet101(
    in_channels: int = 3,
    image_size: int = 224,
    width_mult: float = 1.0,
    stem: str | None = None,
    stem_stride: int | None = None,
) -> Backbone:
    """ResNet-101 (He et al. 2016, bottleneck blocks 3-4-23-3), headless, as :func:`resnet50` (DWA Table 9)."""
    from torchvision.models.resnet import Bottleneck

    b = _resnet(Bottleneck, [3, 4, 23, 3], in_channels, image_size, width_mult, stem, stem_stride)
    b.name = "resnet101"
    return b


def _replace_stem_conv(conv: nn.Conv2d, in_channels: int, stride: int) -> nn.Conv2d:
    return nn.Conv2d(in_channels, conv.out_channels, conv.kernel_size, stride, conv.padding, bias=conv.bias is not None)


def _stem_stride(image_size: int, stem_stride: int | None) -> int:
    """Stride of the first convolution: 1 below 64 px (the usual CIFAR adaptation), else torchvision's 2.
    An explicit ``stem_stride=2`` at small inputs keeps ImageNet's total stride 32 (~1.5-2x cheaper)."""
    if stem_stride is None:
        return 1 if image_size < 64 else 2
    if stem_stride not in (1, 2):
        raise ValueError(f"stem_stride must be 1 or 2, got {stem_stride}")
    return stem_stride


def _depth(n: int, depth_mult: float) -> int:
    """Blocks of a stage at ``depth_mult`` (EfficientNet's rounding: ceil, at least 1)."""
    if depth_mult <= 0:
        raise ValueError(f"depth_mult must be > 0, got {depth_mult}")
    return max(1, math.ceil(n * depth_mult))


MOBILENET_V2_SETTING = (
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
)  # torchvision's (t, c, n, s)


def mobilenet_v2(
    in_channels: int = 3,
    image_size: int = 32,
    width_mult: float = 1.0,
    stem_stride: int | None = None,
    depth_mult: float = 1.0,
) -> Backbone:
    """torchvision's MobileNet-V2, headless; ``depth_mult`` scales the blocks per stage (1.0: the paper's)."""
    from torchvision.models import mobilenet_v2 as tv

    setting = [[t, c, _depth(n, depth_mult), s] for t, c, n, s in MOBILENET_V2_SETTING]
    net = tv(weights=None, width_mult=width_mult, inverted_residual_setting=setting)
    first = net.features[0][0]
    net.features[0][0] = _replace_stem_conv(first, in_channels, _stem_stride(image_size, stem_stride))
    body = nn.Sequential(net.features, nn.AdaptiveAvgPool2d(1))
    return Backbone(body, net.last_channel, "mobilenet_v2")


def efficientnet_b0(
    in_channels: int = 3,
    image_size: int = 32,
    width_mult: float = 1.0,
    stem_stride: int | None = None,
    depth_mult: float = 1.0,
) -> Backbone:
    """torchvision's EfficientNet-B0, headless; ``depth_mult`` as torchvision's (1.0: B0's depth)."""
    from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf

    _depth(1, depth_mult)
    setting, last = _efficientnet_conf("efficientnet_b0", width_mult=width_mult, depth_mult=depth_mult)
    net = EfficientNet(setting, dropout=0.2, last_channel=last)
    first = net.features[0][0]
    net.features[0][0] = _replace_stem_conv(first, in_channels, _stem_stride(image_size, stem_stride))
    body = nn.Sequential(net.features, nn.AdaptiveAvgPool2d(1))
    dim = net.classifier[1].in_features
    return Backbone(body, dim, "efficientnet_b0")


def vit_patch_size(image_size: int) -> int:
    """16 at ImageNet resolution (ViT-Ti/16); smaller inputs keep about 7-8 patches per side."""
    if image_size >= 224:
        return 16
    for p in (8, 4, 2):
        if image_size % p == 0 and image_size // p >= 7:
            return p
    return 1


class _ViTFeatures(nn.Module):
    def __init__(self, vit):
        super().__init__()
        self.vit = vit

    def forward(self, x):
        x = self.vit._process_input(x)
        cls = self.vit.class_token.expand(x.shape[0], -1, -1)
        x = self.vit.encoder(torch.cat([cls, x], dim=1))
        return x[:, 0]


def _vision_transformer(
    in_channels: int, image_size: int, width_mult: float, depth: int, patch_size: int | None, **extra
):
    """torchvision's VisionTransformer at ViT-Ti/16 proportions (3 heads, MLP 4x), headless."""
    from torchvision.models.vision_transformer import VisionTransformer

    heads = 3
    hidden = max(heads * 8, int(round(192 * width_mult / (heads * 8))) * heads * 8)
    patch = patch_size or vit_patch_size(image_size)
    if image_size % patch:
        raise ValueError(f"image size {image_size} is not a multiple of the patch size {patch}")
    vit = VisionTransformer(
        image_size=image_size,
        patch_size=patch,
        num_layers=depth,
        num_heads=heads,
        hidden_dim=hidden,
        mlp_dim=4 * hidden,
        **extra,
    )
    if in_channels != 3:
        vit.conv_proj = nn.Conv2d(in_channels, hidden, patch, patch)
        fan_in = in_channels * patch * patch
        nn.init.trunc_normal_(vit.conv_proj.weight, std=math.sqrt(1 / fan_in))
        nn.init.zeros_(vit.conv_proj.bias)
    vit.heads = nn.Identity()
    return vit, hidden


def vit_tiny(
    in_channels: int = 3, image_size: int = 32, width_mult: float = 1.0, depth: int = 12, patch_size: int | None = None
) -> Backbone:
    vit, hidden = _vision_transformer(in_channels, image_size, width_mult, depth, patch_size)
    return Backbone(_ViTFeatures(vit), hidden, "vit_tiny")


# --- students of the cross-architecture matrix (DC §4; DWA Tables 4 and 9) ---------------------------


def _check_size(name: str, image_size: int, smallest: int) -> None:
    if image_size < smallest:
        raise ValueError(f"{name} needs image_size >= {smallest}, got {image_size}")


def mlp(in_channels: int = 1, image_size: int = 28, width: int = 128, depth: int = 3) -> Backbone:
    """DC's MLP: flatten -> (``depth`` - 1) x [Linear(``width``) -> ReLU]. ``depth`` counts the Linear
    layers of the whole classifier, the head the trainer adds included, as in DC's 3-layer MLP
    (784-128-128-C); the features are the last hidden layer (``width``-d)."""
    if depth < 2 or width < 1:
        raise ValueError(f"mlp needs depth >= 2 and width >= 1, got depth={depth}, width={width}")
    layers: list[nn.Module] = [nn.Flatten()]
    d = in_channels * image_size * image_size
    for _ in range(depth - 1):
        layers += [nn.Linear(d, width), nn.ReLU(inplace=True)]
        d = width
    return Backbone(nn.Sequential(*layers), width, f"mlp{depth}")


def lenet(in_channels: int = 1, image_size: int = 28) -> Backbone:
    """DC's LeNet (LeCun et al. 1998): conv 6@5x5 -> ReLU -> max-pool, conv 16@5x5 -> ReLU ->
    max-pool, fc 120 -> ReLU, fc 84 -> ReLU; the features are the 84-d output. The first conv pads
    2 at 28 px (DC pads 1-channel inputs), so 28 and 32 px both reach a 16x5x5 map."""
    pad = 2 if image_size == 28 else 0
    s = ((image_size + 2 * pad - 4) // 2 - 4) // 2
    if s < 1:
        raise ValueError(f"lenet needs image_size >= 16, got {image_size}")
    body = nn.Sequential(
        nn.Conv2d(in_channels, 6, 5, padding=pad),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * s * s, 120),
        nn.ReLU(inplace=True),
        nn.Linear(120, 84),
        nn.ReLU(inplace=True),
    )
    return Backbone(body, 84, "lenet")


def alexnet(in_channels: int = 1, image_size: int = 28, width_mult: float = 1.0, norm: str = "none") -> Backbone:
    """DC's small-image AlexNet (``norm='batch'`` is its AlexNetBN): conv 128@5x5 -> pool, conv
    192@5x5 -> pool, conv 256@3x3, conv 192@3x3, conv 192@3x3 -> pool, each conv followed by
    [norm] -> ReLU; widths scaled by ``width_mult``. The first conv pads 4 at 28 px (2 otherwise),
    so 28 and 32 px both end in a 4x4 map (features 192 x 4 x 4 at full width)."""
    widths = [_scaled(c, width_mult) for c in (128, 192, 256, 192, 192)]
    pad = 4 if image_size == 28 else 2
    s = image_size + 2 * pad - 4
    _check_size("alexnet", s, 8)
    layers: list[nn.Module] = []
    c = in_channels
    for i, (w, k) in enumerate(zip(widths, (5, 5, 3, 3, 3))):
        layers += [nn.Conv2d(c, w, k, padding=pad if i == 0 else k // 2), _norm(norm, w, s), nn.ReLU(inplace=True)]
        if i in (0, 1, 4):
            layers.append(nn.MaxPool2d(2))
            s //= 2
        c = w
    return Backbone(nn.Sequential(*layers), c * s * s, "alexnet")


VGG11_CONFIG: tuple = (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M")
VGG16_CONFIG: tuple = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M")


def _vgg(config: tuple, name: str, in_channels: int, image_size: int, width_mult: float, norm: str) -> Backbone:
    """A VGG of ``config`` as DC builds VGG-11 for small images (see :func:`vgg11`)."""
    pad = 3 if image_size == 28 else 1
    s = image_size + 2 * pad - 2
    layers: list[nn.Module] = []
    c = in_channels
    for v in config:
        if v == "M":
            if s >= 2:
                layers.append(nn.MaxPool2d(2))
                s //= 2
            continue
        w = _scaled(v, width_mult)
        layers += [nn.Conv2d(c, w, 3, padding=pad if not layers else 1), _norm(norm, w, s), nn.ReLU(inplace=True)]
        c = w
    return Backbone(nn.Sequential(*layers), c * s * s, name)


def vgg11(in_channels: int = 1, image_size: int = 28, width_mult: float = 1.0, norm: str = "instance") -> Backbone:
    """VGG-11 (Simonyan & Zisserman 2015, configuration A) as DC builds it for small images: every
    conv 3x3 -> norm -> ReLU, no classifier MLP (DC's 'VGG11' is ``norm='instance'``, 'VGG11BN' is
    ``norm='batch'``). Widths are scaled by ``width_mult``.

    28 px: as DC, the first conv pads 3 (28 -> 32), so the five 2x2 pools end at 1x1. Any pool that
    would take a map below 1x1 (inputs under 32 px other than 28) is dropped; the features are the
    flattened last map (512 at 28-32 px and full width)."""
    return _vgg(VGG11_CONFIG, "vgg11", in_channels, image_size, width_mult, norm)


def vgg16(in_channels: int = 3, image_size: int = 32, width_mult: float = 1.0, norm: str = "batch") -> Backbone:
    """VGG-16 (Simonyan & Zisserman 2015, configuration D) built as :func:`vgg11`, with BatchNorm by default:
    the VGG-16 student of DWA's Table 4 (Du et al., NeurIPS 2024)."""
    return _vgg(VGG16_CONFIG, "vgg16", in_channels, image_size, width_mult, norm)


SHUFFLENET_V2_X1_0: tuple[tuple[int, int, int], tuple[int, int, int, int, int]] = ((4, 8, 4), (24, 116, 232, 464, 1024))


def shufflenet_v2(
    in_channels: int = 3,
    image_size: int = 32,
    width_mult: float = 1.0,
    stem_stride: int | None = None,
    depth_mult: float = 1.0,
    stages_out_channels: tuple[int, ...] | None = None,
) -> Backbone:
    """ShuffleNetV2 x1.0 (Ma et al. 2018) from torchvision's blocks, headless. All five
    ``stages_out_channels`` are scaled by ``width_mult`` to multiples of 4, so every stride-1 unit
    splits its channels into two even halves (torchvision's constraint inp == 2 x branch). Stem as
    :func:`_stem_stride`: stride 1 and no max-pool below 64 px (total stride 8); stride 2 keeps
    torchvision's conv stride 2 plus max-pool (total stride 32). ``depth_mult`` scales the units per
    stage (1.0: x1.0's 4 / 8 / 4). ``stages_out_channels`` gives torchvision's five channel counts exactly
    instead of scaling x1.0's (``(24, 48, 96, 192, 1024)``: ShuffleNetV2 0.5x, G-VBSM's ImageNet backbone,
    whose pretrained weights :func:`compendium.distill.teachers.import_torchvision` loads); ``width_mult`` is
    then unused."""
    from torchvision.models.shufflenetv2 import ShuffleNetV2

    repeats, channels = SHUFFLENET_V2_X1_0
    repeats = [_depth(n, depth_mult) for n in repeats]
    if stages_out_channels is not None:
        if len(stages_out_channels) != 5:
            raise ValueError(f"stages_out_channels needs 5 channel counts, got {stages_out_channels}")
        stages = [int(c) for c in stages_out_channels]
    else:
        stages = [_scaled(c, width_mult, divisor=4) for c in channels]
    net = ShuffleNetV2(list(repeats), stages)
    stride = _stem_stride(image_size, stem_stride)
    net.conv1[0] = _replace_stem_conv(net.conv1[0], in_channels, stride)
    if stride == 1:
        net.maxpool = nn.Identity()
    net.fc = nn.Identity()
    return Backbone(net, stages[-1], "shufflenet_v2")


class TokenBatchNorm(nn.BatchNorm1d):
    """BatchNorm over the embedding dimension of ``[B, T, D]`` tokens: per channel, statistics pool
    the batch and the tokens (SRe2L's ViT-BN). A :class:`torch.nn.BatchNorm1d` subclass, so it is a
    ``torch.nn.modules.batchnorm._BatchNorm`` with ``running_mean`` / ``running_var`` of size D;
    its input's channel axis is the *last* one (see :func:`bn_input_stats`)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 3:
            raise ValueError(f"TokenBatchNorm expects [B, T, D] tokens, got shape {tuple(x.shape)}")
        return super().forward(x.reshape(-1, x.shape[-1])).reshape(x.shape)


def bn_channels_first(module: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """A BN layer's input with its channels on axis 1 (a view): :class:`TokenBatchNorm`'s ``[B, T, D]``
    tokens become ``[1, D, B * T]``; the input of ``BatchNorm1d/2d/3d`` is returned as it is."""
    return x.reshape(-1, x.shape[-1]).T.unsqueeze(0) if isinstance(module, TokenBatchNorm) else x


def bn_input_stats(module: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-channel mean and biased variance of a BN layer's input, as BN-statistic matching compares
    them with ``running_mean`` / ``running_var`` (SRe2L / DWA Eq. 4): channels are axis 1 for
    ``BatchNorm1d/2d/3d`` and the last axis for :class:`TokenBatchNorm` (:func:`bn_channels_first`)."""
    if not isinstance(module, nn.modules.batchnorm._BatchNorm):
        raise ValueError(f"not a BatchNorm layer: {type(module).__name__}")
    flat = bn_channels_first(module, x).transpose(0, 1).flatten(1).T
    return flat.mean(0), flat.var(0, unbiased=False)


def vit_bn(
    in_channels: int = 3,
    image_size: int = 32,
    width_mult: float = 1.0,
    depth: int = 12,
    patch_size: int | None = None,
    ffn_bn: bool = True,
) -> Backbone:
    """ "ViT-BN" (SRe2L, Yin et al. 2023, Appendix; DWA Appendix A.2.3 / Table 9): :func:`vit_tiny`
    with every LayerNorm (the two in each block and the encoder's last) replaced by a
    :class:`TokenBatchNorm`, and, with ``ffn_bn``, one more between the FFN's first linear and its
    GELU. No LayerNorm is left; every norm is a ``_BatchNorm`` that a BN-matching hook can find."""
    vit, hidden = _vision_transformer(in_channels, image_size, width_mult, depth, patch_size, norm_layer=TokenBatchNorm)
    if ffn_bn:
        for block in vit.encoder.layers:
            fc1, *rest = list(block.mlp)
            block.mlp = nn.Sequential(fc1, TokenBatchNorm(fc1.out_features), *rest)
    return Backbone(_ViTFeatures(vit), hidden, "vit_bn")


BACKBONES: dict[str, Callable[..., Backbone]] = {
    "convnet": convnet,
    "resnet18": resnet18,
    "resnet50": resnet50,
    "resnet101": resnet101,
    "mobilenet_v2": mobilenet_v2,
    "efficientnet_b0": efficientnet_b0,
    "vit_tiny": vit_tiny,
    "mlp": mlp,
    "lenet": lenet,
    "alexnet": alexnet,
    "vgg11": vgg11,
    "vgg16": vgg16,
    "shufflenet_v2": shufflenet_v2,
    "vit_bn": vit_bn,
}


def build(name: str, **kwargs) -> Backbone:
    """A backbone by name (see :data:`BACKBONES`) with its keyword arguments."""
    if name not in BACKBONES:
        raise ValueError(f"unknown backbone {name!r}; known: {sorted(BACKBONES)}")
    return BACKBONES[name](**kwargs)


#: oneDNN's CPU 1x1 convolution, backward by weights in channels_last (NHWC) with fewer input channels than its
#: channel block, overruns a workspace (oneDNN issue #6035). Measured on this project's AVX-512 machines with torch
#: 2.15: a strided 1x1 convolution with fewer than 16 input channels corrupts the heap from 56 px inputs on (an abort
#: or a segmentation fault); up to 48 px its gradients equal the contiguous layout's.
ONEDNN_1X1_CHANNEL_BLOCK, ONEDNN_1X1_SAFE_SIZE = 16, 48


def channels_last_safe(module: nn.Module, image_size: int, device: str | torch.device = "cpu") -> bool:
    """Whether training ``module`` in channels_last avoids the oneDNN defect above: always off the CPU and
    below :data:`ONEDNN_1X1_SAFE_SIZE`; else only without a strided 1x1 convolution of fewer than
    :data:`ONEDNN_1X1_CHANNEL_BLOCK` input channels (a narrow ResNet's shortcut)."""
    if torch.device(device).type != "cpu" or image_size <= ONEDNN_1X1_SAFE_SIZE:
        return True
    return not any(
        isinstance(m, nn.Conv2d)
        and m.kernel_size == (1, 1)
        and m.stride != (1, 1)
        and m.in_channels < ONEDNN_1X1_CHANNEL_BLOCK
        for m in module.modules()
    )


def count_parameters(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())
