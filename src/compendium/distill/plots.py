"""Figures shared by the distillation notebooks."""

from __future__ import annotations

import torch

from compendium.core import viz
from compendium.distill.sets import DistilledSet


def show_set(ax, dset: DistilledSet, classes, per_class: int = 10, title: str = ""):
    """One row per class of up to ``per_class`` images of the set (the first ones), in pixel space."""
    per_class = min(per_class, dset.ipc)
    idx = torch.cat([torch.nonzero(dset.labels == c).flatten()[:per_class] for c in range(dset.num_classes)])
    imgs = (dset.pixels()[idx] * 255).round().to(torch.uint8)
    grid = viz.image_grid(imgs, nrow=per_class)
    h = imgs.shape[2] + 1
    ax.imshow(grid.squeeze(-1) if grid.shape[-1] == 1 else grid, cmap="gray_r" if grid.shape[-1] == 1 else None,
              interpolation="nearest")
    ax.set_yticks([1 + h * i + h / 2 - 1 for i in range(dset.num_classes)], list(classes), fontsize=6)
    ax.set_xticks([])
    ax.grid(False)
    ax.set_title(title or f"{dset.method} (ipc {dset.ipc})", fontsize=8)
    return ax
