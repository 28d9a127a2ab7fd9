"""The freshly initialised networks the synthesis loops train and match on (DC's ConvNet defaults;
the official DC/DSA/DM first-conv padding), shared by the matching and unrolled families."""

from __future__ import annotations

import torch
from torch import nn

from compendium.core import models

DEFAULT_ARCH = {"width": 128, "depth": 3, "norm": "instance", "activation": "relu", "pooling": "avg"}


def _arch_kwargs(arch: str, arch_kwargs: dict | None) -> dict:
    """The ConvNet defaults (DC's Conv-3: width 128, instance norm, ReLU, avg-pool) under the given overrides."""
    return {**DEFAULT_ARCH, **(arch_kwargs or {})} if arch == "convnet" else dict(arch_kwargs or {})


def matching_arch_kwargs(arch: str, arch_kwargs: dict | None, in_channels: int, image_size: int) -> dict:
    """The networks DC, DSA and DM match on: :func:`_arch_kwargs`, and for the ConvNet the official
    first-conv padding (VICO-UoE/DatasetCondensation ``networks.py``: 3 on 1-channel 28-px inputs, so
    28 -> 32 px and Conv-3's features are ``16 * width``-d; :func:`compendium.core.models.dc_first_padding`)
    unless ``arch_kwargs`` sets ``first_padding`` itself."""
    kw = _arch_kwargs(arch, arch_kwargs)
    if arch == "convnet":
        kw.setdefault("first_padding", models.dc_first_padding(in_channels, image_size))
    return kw


def build_network(
    in_channels: int,
    image_size: int,
    num_classes: int | None,
    seed: int,
    arch: str = "convnet",
    arch_kwargs: dict | None = None,
) -> nn.Module:
    """A freshly initialised backbone (``num_classes=None``: the embedding network of DM) or backbone +
    linear head (DC), its default initialisation drawn under ``seed`` without touching the global RNG."""
    kw = _arch_kwargs(arch, arch_kwargs)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        body = models.build(arch, in_channels=in_channels, image_size=image_size, **kw)
        if num_classes is None:
            return body
        return nn.Sequential(body, nn.Linear(body.feature_dim, num_classes))
