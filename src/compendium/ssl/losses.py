"""Self-supervised losses as pure functions (no state; queues and centres are passed in).

Each docstring names the paper and equation. ``z``/``p`` are ``[B, D]`` batches of the two views.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def negative_cosine(p: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """Mean of ``-cos(p, z)`` over the batch; ``z`` is treated as a constant (stop-gradient)."""
    return -F.cosine_similarity(p, z.detach(), dim=-1).mean()


def byol_loss(p1: torch.Tensor, p2: torch.Tensor, z1: torch.Tensor, z2: torch.Tensor) -> torch.Tensor:
    """BYOL (Grill et al. 2020, eq. 2 symmetrised): ``2 - 2 cos(q(z_online), z'_target)`` averaged
    over both orderings; ``p`` are the online predictions, ``z`` the target projections. Its value
    is in [0, 4]; 0 when each prediction is aligned with the other view's target."""
    l12 = 2 - 2 * F.cosine_similarity(p1, z2.detach(), dim=-1)
    l21 = 2 - 2 * F.cosine_similarity(p2, z1.detach(), dim=-1)
    return 0.5 * (l12 + l21).mean()


def simsiam_loss(p1: torch.Tensor, p2: torch.Tensor, z1: torch.Tensor, z2: torch.Tensor) -> torch.Tensor:
    """SimSiam (Chen & He 2021, eq. 3-4): ``D(p1, sg(z2))/2 + D(p2, sg(z1))/2`` with
    ``D = -cos``; its minimum is -1."""
    return 0.5 * (negative_cosine(p1, z2) + negative_cosine(p2, z1))


def nt_xent_loss(z1: torch.Tensor, z2: torch.Tensor, temperature: float = 0.5) -> torch.Tensor:
    """SimCLR's NT-Xent (Chen et al. 2020, eq. 1): for each of the 2B views, cross-entropy of
    its positive (the other view of the same image) against the 2B - 2 negatives, on cosine
    similarities divided by ``temperature``; averaged over all 2B anchors."""
    b = z1.shape[0]
    z = F.normalize(torch.cat([z1, z2]), dim=-1)
    sim = z @ z.t() / temperature
    sim.fill_diagonal_(float("-inf"))
    target = torch.cat([torch.arange(b, 2 * b), torch.arange(0, b)]).to(z.device)
    return F.cross_entropy(sim, target)


def infonce_queue_loss(q: torch.Tensor, k: torch.Tensor, queue: torch.Tensor, temperature: float = 0.2) -> torch.Tensor:
    """MoCo (He et al. 2020, eq. 1; v2: Chen et al. 2020): InfoNCE of the query ``q`` against its key
    ``k`` (positive, stop-gradient) and the ``queue`` ``[K, D]`` of past keys (negatives)."""
    q = F.normalize(q, dim=-1)
    k = F.normalize(k.detach(), dim=-1)
    neg = F.normalize(queue.detach(), dim=-1)
    logits = torch.cat([(q * k).sum(-1, keepdim=True), q @ neg.t()], dim=1) / temperature
    return F.cross_entropy(logits, torch.zeros(q.shape[0], dtype=torch.long, device=q.device))


def barlow_twins_loss(z1: torch.Tensor, z2: torch.Tensor, lambd: float = 5e-3, eps: float = 1e-5) -> torch.Tensor:
    """Barlow Twins (Zbontar et al. 2021, eq. 1-2): standardise each dimension over the batch,
    form the cross-correlation ``C``, and return ``sum_i (1 - C_ii)^2 + lambd sum_{i != j} C_ij^2``.

    The standardisation is the official code's (facebookresearch/barlowtwins ``main.py``:
    ``nn.BatchNorm1d(D, affine=False)`` in training mode): ``(z - mean) / sqrt(var + eps)`` with
    the biased batch variance and ``eps = 1e-5``; ``C = bn(z1)^T bn(z2) / B``."""
    n = z1.shape[0]

    def standardise(z):
        return (z - z.mean(0)) / torch.sqrt(z.var(0, unbiased=False) + eps)

    c = standardise(z1).t() @ standardise(z2) / n
    on = (torch.diagonal(c) - 1).pow(2).sum()
    off = c.pow(2).sum() - torch.diagonal(c).pow(2).sum()
    return on + lambd * off


def vicreg_loss(
    z1: torch.Tensor,
    z2: torch.Tensor,
    sim_weight: float = 25.0,
    var_weight: float = 25.0,
    cov_weight: float = 1.0,
    gamma: float = 1.0,
    eps: float = 1e-4,
) -> torch.Tensor:
    """VICReg (Bardes et al. 2022, eq. 1-6): ``sim * MSE(z1, z2) + var * [v(z1) + v(z2)] / 2 +
    cov * [c(z1) + c(z2)]`` with the hinge on the per-dimension std ``v = mean relu(gamma - sqrt(var
    + eps))`` (unbiased variance) and the off-diagonal covariance ``c = sum_{i != j} Cov_ij^2 / D``
    (``Cov`` over ``B - 1``).

    The weighting follows the official code (facebookresearch/vicreg ``main_vicreg.py``:
    ``std_loss = mean(relu(1 - std_x)) / 2 + mean(relu(1 - std_y)) / 2``, the covariance terms of
    the two branches summed, ``repr_loss = F.mse_loss(x, y)``): the variance term is the *mean* of
    the two branches, so the paper's 25 / 25 / 1 coefficients apply as they do there."""
    inv = F.mse_loss(z1, z2)

    def variance(z):
        return F.relu(gamma - torch.sqrt(z.var(0) + eps)).mean()

    def covariance(z):
        n, d = z.shape
        zc = z - z.mean(0)
        cov = zc.t() @ zc / (n - 1)
        return (cov.pow(2).sum() - torch.diagonal(cov).pow(2).sum()) / d

    return (
        sim_weight * inv
        + var_weight * (variance(z1) + variance(z2)) / 2
        + cov_weight * (covariance(z1) + covariance(z2))
    )


def dino_loss(
    student: torch.Tensor,
    teacher: torch.Tensor,
    center: torch.Tensor,
    student_temp: float = 0.1,
    teacher_temp: float = 0.04,
) -> torch.Tensor:
    """DINO (Caron et al. 2021, eq. 1-2) for two global views: cross-entropy
    ``-P_t(x_i) . log P_s(x_j)`` for i != j, where ``P_t = softmax((t - center)/teacher_temp)``
    (stop-gradient) and ``P_s = softmax(s / student_temp)``. ``student``/``teacher`` are
    ``[2, B, K]`` (view, batch, prototypes)."""
    t = F.softmax((teacher.detach() - center) / teacher_temp, dim=-1)
    log_s = F.log_softmax(student / student_temp, dim=-1)
    total, terms = 0.0, 0
    for i in range(t.shape[0]):
        for j in range(log_s.shape[0]):
            if i != j:
                total = total + (-(t[i] * log_s[j]).sum(-1)).mean()
                terms += 1
    return total / terms


def dino_center_update(center: torch.Tensor, teacher: torch.Tensor, momentum: float = 0.9) -> torch.Tensor:
    """DINO's centre: EMA of the teacher's batch mean output (eq. 4). Returns the new centre."""
    return center * momentum + teacher.detach().reshape(-1, teacher.shape[-1]).mean(0) * (1 - momentum)


@torch.no_grad()
def sinkhorn_knopp(scores: torch.Tensor, epsilon: float = 0.05, iterations: int = 3) -> torch.Tensor:
    """SwAV's equipartition (Caron et al. 2020, eq. 3 and App. A.1): from prototype scores
    ``[B, K]``, ``Q = exp(scores/epsilon)`` alternately normalised so that prototypes share the
    batch equally (rows of Q^T sum to 1/K) and each sample's codes sum to 1 (returned ``[B, K]``)."""
    q = torch.exp((scores - scores.max()) / epsilon).t()  # K x B
    q /= q.sum()
    k, b = q.shape
    for _ in range(iterations):
        q /= q.sum(dim=1, keepdim=True)
        q /= k
        q /= q.sum(dim=0, keepdim=True)
        q /= b
    return (q * b).t()


def swav_loss(
    scores1: torch.Tensor, scores2: torch.Tensor, temperature: float = 0.1, epsilon: float = 0.05, iterations: int = 3
) -> torch.Tensor:
    """SwAV swapped prediction (Caron et al. 2020, eq. 1-2): codes ``q`` of each view from
    Sinkhorn-Knopp (no gradient) are predicted from the other view's scores:
    ``-1/2 [q2 . log softmax(s1/T) + q1 . log softmax(s2/T)]`` averaged over the batch."""
    q1 = sinkhorn_knopp(scores1, epsilon, iterations)
    q2 = sinkhorn_knopp(scores2, epsilon, iterations)
    l1 = -(q2 * F.log_softmax(scores1 / temperature, dim=-1)).sum(-1).mean()
    l2 = -(q1 * F.log_softmax(scores2 / temperature, dim=-1)).sum(-1).mean()
    return 0.5 * (l1 + l2)


def rela_loss(pred1: torch.Tensor, pred2: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """ReLA-F (camera-ready eq. 9): ``1 - cos(W phi(x) + b, y)`` averaged over the two weak views,
    both regressed onto the same stored target ``y`` of the clean image."""
    return 0.5 * (
        (1 - F.cosine_similarity(pred1, target, dim=-1)).mean()
        + (1 - F.cosine_similarity(pred2, target, dim=-1)).mean()
    )
