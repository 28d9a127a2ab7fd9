"""The evaluation architectures of the cross-architecture tables (DC/DSA's matrix: MLP, LeNet, ConvNet,
AlexNet, VGG-11, ResNet-18; DWA Tables 4, 5 and 9: MobileNet-V2, ShuffleNet-V2, EfficientNet-B0, ViT,
VGG-16, ResNet-50 and ResNet-101; the ResNets with the small stem below 128 px and torchvision's from 128 px on,
:func:`compendium.core.models.resnet_stem`),
with one knob set for the reduced widths of the ``cpu`` profile: ``width`` for the ConvNet (128 at
``paper`` scale), ``width_mult`` for every torchvision-style family (1.0 at ``paper`` scale; MobileNet-V2
and ViT get twice it, since they are the narrowest per multiplier), ``vit_depth`` (12 at paper scale)
``vit_patch`` (None: 4 at 28 px, as paper scale; 7 is ~2.4x cheaper) and ``stem_stride`` for the
ImageNet-stem families and ResNet-18's small stem (2 cuts their cost 1.5-2.7x at 28 px; 1 at paper
scale) and ``depth_mult`` for the blocks per stage of MobileNet-V2, EfficientNet-B0 and ShuffleNet-V2
(0.5: 11 / 10 / 8 blocks instead of 17 / 16 / 16, ~1.6x cheaper; 1.0 at paper scale).
AlexNet and VGG-11 use BatchNorm (DC's AlexNetBN / VGG11BN) so that short schedules train."""

from __future__ import annotations

from typing import Sequence

from compendium.distill.evaluate import EvalConfig

ZOO = (
    "mlp",
    "lenet",
    "convnet",
    "alexnet",
    "vgg11",
    "resnet18",
    "mobilenet_v2",
    "efficientnet_b0",
    "shufflenet_v2",
    "vit_tiny",
    "vgg16",
    "resnet50",
    "resnet101",
)
LABELS = {
    "mlp": "MLP",
    "lenet": "LeNet",
    "convnet": "ConvNet",
    "alexnet": "AlexNet-BN",
    "vgg11": "VGG-11-BN",
    "resnet18": "ResNet-18",
    "mobilenet_v2": "MobileNet-V2",
    "efficientnet_b0": "EfficientNet-B0",
    "shufflenet_v2": "ShuffleNet-V2",
    "vit_tiny": "ViT-Tiny",
    "vit_bn": "ViT-BN",
    "vgg16": "VGG-16-BN",
    "resnet50": "ResNet-50",
    "resnet101": "ResNet-101",
}
RELATIVE_COST = {
    "mlp": 0.3,
    "lenet": 0.4,
    "convnet": 1.0,
    "alexnet": 1.5,
    "vgg11": 2.0,
    "resnet18": 3.0,
    "mobilenet_v2": 2.5,
    "efficientnet_b0": 3.5,
    "shufflenet_v2": 2.5,
    "vit_tiny": 2.0,
    "vit_bn": 2.0,
    "vgg16": 3.5,
    "resnet50": 6.0,
    "resnet101": 11.0,
}


def arch_kwargs(
    name: str,
    *,
    width: int = 16,
    width_mult: float = 0.125,
    vit_depth: int = 4,
    stem_stride: int = 2,
    mlp_width: int = 128,
    vit_patch: int | None = None,
    depth_mult: float = 1.0,
) -> dict:
    """``models.build`` keyword arguments of one zoo architecture at the given reduced scale."""
    table = {
        "mlp": {"width": mlp_width, "depth": 3},
        "lenet": {},
        "convnet": {"width": width, "depth": 3, "norm": "batch"},
        "alexnet": {"width_mult": width_mult, "norm": "batch"},
        "vgg11": {"width_mult": width_mult, "norm": "batch"},
        "resnet18": {"width_mult": width_mult, "stem_stride": stem_stride},
        "mobilenet_v2": {"width_mult": min(1.0, 2 * width_mult), "stem_stride": stem_stride, "depth_mult": depth_mult},
        "efficientnet_b0": {"width_mult": width_mult, "stem_stride": stem_stride, "depth_mult": depth_mult},
        "shufflenet_v2": {"width_mult": width_mult * 2, "stem_stride": stem_stride, "depth_mult": depth_mult},
        "vit_tiny": {"width_mult": min(1.0, 2 * width_mult), "depth": vit_depth, "patch_size": vit_patch},
        "vit_bn": {"width_mult": min(1.0, 2 * width_mult), "depth": vit_depth, "patch_size": vit_patch},
        "vgg16": {"width_mult": width_mult, "norm": "batch"},
        "resnet50": {"width_mult": width_mult, "stem_stride": stem_stride},  # the small stem below 128 px
        "resnet101": {"width_mult": width_mult, "stem_stride": stem_stride},
    }
    if name not in table:
        raise ValueError(f"unknown zoo architecture {name!r}; known: {sorted(table)}")
    return dict(table[name])


def configs(names: Sequence[str], base: EvalConfig, **scale) -> dict[str, EvalConfig]:
    """One :class:`EvalConfig` per architecture: ``base`` (steps, optimiser, labels) with its arch."""
    return {n: base.replace(arch=n, arch_kwargs=arch_kwargs(n, **scale)) for n in names}


#: DC's own evaluation networks (Zhao et al. 2021, Table 2: ConvNet, LeNet, AlexNet, VGG-11, MLP; its code's
#: ConvNet and VGG-11 use instance norm, its AlexNet none): a student trained on one image per class sees a
#: 10-image batch, whose batch statistics the zoo's BatchNorm variants would learn from. ResNet-18 is left
#: out: ours has BatchNorm only (DC's uses instance norm).
DC_ARCHS = {
    "mlp": {},
    "lenet": {},
    "convnet": {"norm": "instance"},
    "alexnet": {"norm": "none"},
    "vgg11": {"norm": "instance"},
}
#: Their names in tables: DC's AlexNet and VGG-11 carry no BatchNorm (the zoo's ``LABELS`` say "-BN").
DC_LABELS = {n: {"alexnet": "AlexNet", "vgg11": "VGG-11"}.get(n, LABELS[n]) for n in DC_ARCHS}


def dc_configs(names: Sequence[str], base: EvalConfig, **scale) -> dict[str, EvalConfig]:
    """:func:`configs` of DC's evaluation networks (:data:`DC_ARCHS`) at the same scale."""
    unknown = [n for n in names if n not in DC_ARCHS]
    if unknown:
        raise ValueError(f"not among DC's evaluation networks {sorted(DC_ARCHS)}: {unknown}")
    return {
        n: c.replace(arch_kwargs={**c.arch_kwargs, **DC_ARCHS[n]}) for n, c in configs(names, base, **scale).items()
    }
