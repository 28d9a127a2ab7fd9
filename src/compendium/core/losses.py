"""Losses shared by several wings."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def soft_cross_entropy(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Cross-entropy with hard labels (integer ``target``) or with a label distribution (float ``target``,
    rows summing to 1, as soft-label DD's softmaxed labels)."""
    if not target.is_floating_point():
        return F.cross_entropy(logits, target)
    return -(target * F.log_softmax(logits, 1)).sum(1).mean()
