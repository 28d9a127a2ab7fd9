"""Small plotting helpers shared by the notebooks."""

from __future__ import annotations

import torch


def class_sample_index(labels: torch.Tensor, per_class: int, seed: int = 0) -> torch.Tensor:
    """``per_class`` seeded random indices of each class, class-major order."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for c in range(int(labels.max()) + 1):
        idx = torch.nonzero(labels == c).flatten()
        if len(idx) < per_class:
            raise ValueError(f"class {c} has {len(idx)} images, fewer than {per_class}")
        out.append(idx[torch.randperm(len(idx), generator=g)[:per_class]])
    return torch.cat(out)


def image_grid(images: torch.Tensor, nrow: int, pad: int = 1, pad_value: int = 255) -> torch.Tensor:
    """Tile ``uint8 [N, C, H, W]`` images into one ``[H', W', C]`` array row-major, ``nrow`` per row."""
    n, c, h, w = images.shape
    rows = (n + nrow - 1) // nrow
    grid = torch.full((c, rows * (h + pad) + pad, nrow * (w + pad) + pad), pad_value, dtype=images.dtype)
    for i in range(n):
        r, k = divmod(i, nrow)
        grid[:, pad + r * (h + pad) : pad + r * (h + pad) + h, pad + k * (w + pad) : pad + k * (w + pad) + w] = images[
            i
        ]
    return grid.permute(1, 2, 0)


def show_class_grid(ax, images: torch.Tensor, labels: torch.Tensor, classes, per_class: int, seed: int = 0):
    """One row per class of ``per_class`` random images, class names on the left."""
    idx = class_sample_index(labels, per_class, seed)
    grid = image_grid(images[idx], nrow=per_class)
    h = images.shape[2] + 1
    ax.imshow(
        grid.squeeze(-1) if grid.shape[-1] == 1 else grid,
        cmap="gray_r" if grid.shape[-1] == 1 else None,
        interpolation="nearest",
    )
    ax.set_yticks([1 + h * i + h / 2 - 1 for i in range(len(classes))], list(classes))
    ax.set_xticks([])
    ax.grid(False)
    return ax
