"""The papers' training configurations (the ``paper`` profile of the ReLA experiments).

Camera-ready Table 8 / v1 Table 9 and the released code (spec rela.md §4.2, §7.10): 100 epochs,
AdamW lr 1e-3, weight decay 0.01, batch 128 on CIFAR-10/100 and Tiny-ImageNet, 512 on ImageNet-1K
(code; v1 prints 256); ResNet-18 with the small-image stem at 32/64 px, ResNet-50 with the ImageNet
stem at 224 px; the cross-architecture students (MobileNet-V2, EfficientNet-B0, ViT-Tiny) at CIFAR
scale. Linear probe: Adam 3e-4, 100 epochs, batch 128 (1024 on ImageNet-1K).

:func:`build` makes the SSL method (optionally wrapped in ReLA-F) of a configuration, and
:func:`fake_batch` a uint8 batch of the configuration's image shape, so a test can run one real step
of every paper-scale configuration without its data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from . import models
from .ssl import methods as M


@dataclass(frozen=True)
class PaperConfig:
    dataset: str
    arch: str
    image_size: int
    num_classes: int
    batch_size: int
    arch_kwargs: dict = field(default_factory=dict)
    in_channels: int = 3
    epochs: int = 100
    lr: float = 1e-3
    weight_decay: float = 0.01
    probe_epochs: int = 100
    probe_lr: float = 3e-4
    probe_batch_size: int = 128


PAPER: dict[str, PaperConfig] = {
    "cifar10-resnet18": PaperConfig("cifar10", "resnet18", 32, 10, 128, {"stem": "small"}),
    "cifar100-resnet18": PaperConfig("cifar100", "resnet18", 32, 100, 128, {"stem": "small"}),
    "tiny-imagenet-resnet18": PaperConfig("tiny-imagenet", "resnet18", 64, 200, 128, {"stem": "small"}),
    "imagenet-resnet50": PaperConfig("imagenet", "resnet50", 224, 1000, 512, {"stem": "imagenet"},
                                     probe_batch_size=1024),
    "cifar10-mobilenet_v2": PaperConfig("cifar10", "mobilenet_v2", 32, 10, 128),
    "cifar10-efficientnet_b0": PaperConfig("cifar10", "efficientnet_b0", 32, 10, 128),
    "cifar10-vit_tiny": PaperConfig("cifar10", "vit_tiny", 32, 10, 128),
}


def backbone(cfg: PaperConfig, width_mult: float = 1.0) -> models.Backbone:
    return models.build(cfg.arch, in_channels=cfg.in_channels, image_size=cfg.image_size, width_mult=width_mult,
                        **cfg.arch_kwargs)


def build(cfg: PaperConfig, method: str = "byol", rela_target_dim: int | None = None, width_mult: float = 1.0):
    """The SSL method of ``cfg`` at full head size, wrapped in ReLA-F when ``rela_target_dim`` is given
    (the code uses n = min(student dim, prior dim): 512 for ResNet-18, 2048 for ResNet-50)."""
    m = M.build(method, backbone(cfg, width_mult))
    return M.ReLA(m, rela_target_dim) if rela_target_dim else m


def fake_batch(cfg: PaperConfig, n: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (n, cfg.in_channels, cfg.image_size, cfg.image_size), dtype=torch.uint8, generator=g)
