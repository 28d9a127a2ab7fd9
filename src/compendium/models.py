"""Backbones: every one maps ``[B, C, H, W]`` images to ``[B, feature_dim]`` features.

* ``convnet``: the dataset-distillation ConvNet family (Gidaris & Komodakis 2018; DC, Zhao et al.
  2021): ``depth`` x [conv 3x3 (``width``) -> norm -> activation -> pool 2x2]; the features are
  the flattened last map (as DC) or its global average (``global_pool=True``).
* ``resnet18`` / ``resnet50`` (He et al. 2016) built from torchvision's blocks, with the
  small-image stem (3x3 conv, stride 1, no max-pool: the "modified" ResNet of ReLA's code) or the
  ImageNet stem, and a width multiplier on every stage (1.0 = the real network).
* ``mobilenet_v2`` (Sandler et al. 2018) and ``efficientnet_b0`` (Tan & Le 2019) from
  torchvision, with their own width multipliers; the stem stride is 1 for inputs below 64 px.
* ``vit_tiny`` (ViT-Ti/16, Touvron et al. 2021: 12 layers, 3 heads, 192-d) from torchvision's
  VisionTransformer, the patch size adapted to small inputs (16 at 224 px, 4 at 28-32 px);
  the width multiplier scales the hidden size, ``depth`` the number of layers.

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
    return {"relu": nn.ReLU(inplace=True), "sigmoid": nn.Sigmoid(), "leaky_relu": nn.LeakyReLU(0.01, inplace=True),
            "gelu": nn.GELU()}[kind]


def convnet(in_channels: int = 1, image_size: int = 28, width: int = 128, depth: int = 3,
            norm: str = "instance", activation: str = "relu", pooling: str = "avg",
            global_pool: bool = False) -> Backbone:
    """The DC-style ConvNet (Conv-3 by default); ``pooling`` in {avg, max, none}."""
    if pooling not in ("avg", "max", "none"):
        raise ValueError(f"unknown pooling {pooling!r}")
    layers: list[nn.Module] = []
    c, s = in_channels, image_size
    for _ in range(depth):
        layers += [nn.Conv2d(c, width, 3, padding=1), _norm(norm, width, s), _activation(activation)]
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


def _resnet(block, layers, in_channels: int, image_size: int, width_mult: float, stem: str) -> Backbone:
    from torchvision.models.resnet import ResNet

    class ScaledResNet(ResNet):
        def __init__(self):
            nn.Module.__init__(self)
            self._norm_layer = nn.BatchNorm2d
            self.dilation, self.groups, self.base_width = 1, 1, 64
            widths = [_scaled(w, width_mult) for w in (64, 128, 256, 512)]
            self.inplanes = widths[0]
            if stem == "small":
                self.conv1 = nn.Conv2d(in_channels, widths[0], 3, 1, 1, bias=False)
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

    net = ScaledResNet()
    return Backbone(net, net.out_dim, "resnet")


def resnet18(in_channels: int = 3, image_size: int = 32, width_mult: float = 1.0, stem: str = "small") -> Backbone:
    from torchvision.models.resnet import BasicBlock

    b = _resnet(BasicBlock, [2, 2, 2, 2], in_channels, image_size, width_mult, stem)
    b.name = "resnet18"
    return b


def resnet50(in_channels: int = 3, image_size: int = 224, width_mult: float = 1.0, stem: str = "imagenet") -> Backbone:
    from torchvision.models.resnet import Bottleneck

    b = _resnet(Bottleneck, [3, 4, 6, 3], in_channels, image_size, width_mult, stem)
    b.name = "resnet50"
    return b


def _replace_stem_conv(conv: nn.Conv2d, in_channels: int, small: bool) -> nn.Conv2d:
    stride = 1 if small else conv.stride
    return nn.Conv2d(in_channels, conv.out_channels, conv.kernel_size, stride, conv.padding, bias=conv.bias is not None)


def mobilenet_v2(in_channels: int = 3, image_size: int = 32, width_mult: float = 1.0) -> Backbone:
    from torchvision.models import mobilenet_v2 as tv

    net = tv(weights=None, width_mult=width_mult)
    first = net.features[0][0]
    net.features[0][0] = _replace_stem_conv(first, in_channels, image_size < 64)
    body = nn.Sequential(net.features, nn.AdaptiveAvgPool2d(1))
    return Backbone(body, net.last_channel, "mobilenet_v2")


def efficientnet_b0(in_channels: int = 3, image_size: int = 32, width_mult: float = 1.0) -> Backbone:
    from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf

    setting, last = _efficientnet_conf("efficientnet_b0", width_mult=width_mult, depth_mult=1.0)
    net = EfficientNet(setting, dropout=0.2, last_channel=last)
    first = net.features[0][0]
    net.features[0][0] = _replace_stem_conv(first, in_channels, image_size < 64)
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


def vit_tiny(in_channels: int = 3, image_size: int = 32, width_mult: float = 1.0, depth: int = 12,
             patch_size: int | None = None) -> Backbone:
    from torchvision.models.vision_transformer import VisionTransformer

    heads = 3
    hidden = max(heads * 8, int(round(192 * width_mult / (heads * 8))) * heads * 8)
    patch = patch_size or vit_patch_size(image_size)
    if image_size % patch:
        raise ValueError(f"image size {image_size} is not a multiple of the patch size {patch}")
    vit = VisionTransformer(image_size=image_size, patch_size=patch, num_layers=depth, num_heads=heads,
                            hidden_dim=hidden, mlp_dim=4 * hidden)
    if in_channels != 3:
        vit.conv_proj = nn.Conv2d(in_channels, hidden, patch, patch)
        fan_in = in_channels * patch * patch
        nn.init.trunc_normal_(vit.conv_proj.weight, std=math.sqrt(1 / fan_in))
        nn.init.zeros_(vit.conv_proj.bias)
    vit.heads = nn.Identity()
    return Backbone(_ViTFeatures(vit), hidden, "vit_tiny")


BACKBONES: dict[str, Callable[..., Backbone]] = {
    "convnet": convnet,
    "resnet18": resnet18,
    "resnet50": resnet50,
    "mobilenet_v2": mobilenet_v2,
    "efficientnet_b0": efficientnet_b0,
    "vit_tiny": vit_tiny,
}


def build(name: str, **kwargs) -> Backbone:
    """A backbone by name (see :data:`BACKBONES`) with its keyword arguments."""
    if name not in BACKBONES:
        raise ValueError(f"unknown backbone {name!r}; known: {sorted(BACKBONES)}")
    return BACKBONES[name](**kwargs)


def count_parameters(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())
