"""How transportable one representation is to another: linear CKA and the linear-map transport score
(ReLA's representation-similarity analysis)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from compendium.core.pca import TargetMap


def linear_cka(x: torch.Tensor, y: torch.Tensor) -> float:
    """Linear CKA (Kornblith et al. 2019, eq. 5): ||Y'X||_F^2 / (||X'X||_F ||Y'Y||_F) on centred
    features; 1 for representations equal up to rotation and isotropic scale."""
    x = x.double() - x.double().mean(0)
    y = y.double() - y.double().mean(0)
    num = (y.T @ x).pow(2).sum()
    den = (x.T @ x).pow(2).sum().sqrt() * (y.T @ y).pow(2).sum().sqrt()
    return float(num / den) if den > 0 else 0.0


def transport_similarity(
    src_fit: torch.Tensor, tgt_fit: torch.Tensor, src_eval: torch.Tensor, tgt_eval: torch.Tensor, ridge: float = 1e-3
) -> float:
    """How well a linear map carries the source representation to the target's (camera-ready
    Def. 4, D_Rep, with the 0-1 loss replaced by our resolution):
    the target features are PCA-standardised (as ReLA's targets, eq. 10), a ridge map W, b is fitted
    from the source on ``*_fit``, and the score is the mean cosine similarity between W phi_S(x) + b
    and the standardised target on the held-out ``*_eval`` (1 = perfectly transportable).
    1 - score is our D_Rep."""
    n = min(tgt_fit.shape[1], src_fit.shape[1])
    tmap = TargetMap.fit([tgt_fit.double()], n, "code")
    t_fit, t_eval = tmap.transform(tgt_fit.double()), tmap.transform(tgt_eval.double())
    mu, sd = src_fit.double().mean(0), src_fit.double().std(0).clamp_min(1e-8)
    a = torch.cat([(src_fit.double() - mu) / sd, torch.ones(len(src_fit), 1, dtype=torch.float64)], 1)
    reg = ridge * len(a) * torch.eye(a.shape[1], dtype=torch.float64)
    reg[-1, -1] = 0
    w = torch.linalg.solve(a.T @ a + reg, a.T @ t_fit)
    b = torch.cat([(src_eval.double() - mu) / sd, torch.ones(len(src_eval), 1, dtype=torch.float64)], 1)
    return float(F.cosine_similarity(b @ w, t_eval, dim=1).mean())
