"""Augmentation and class overlap (ReLA camera-ready App M, Thm 4; v1 App O, Thm 6, Figs. 6-9).

Model: two classes with 1-D Gaussian samples of std sigma and means Delta mu apart. Augmentation
adds independent noise of variance k alpha, so each class becomes N(mu_i, sigma^2 + k alpha).

* :func:`paper_overlap`: the paper's approximation O(alpha) = 2 Phi(Delta mu / sqrt(2 (sigma^2 + k alpha))) - 1.
* :func:`exact_overlap`: the overlap coefficient, the integral of min(p1, p2) = 2 Phi(-Delta mu / (2 sigma_alpha)).
* :func:`mc_overlap`: Monte Carlo of the same integral, E_{x ~ p1}[min(1, p2(x)/p1(x))].

For real data, the overlap is measured in the original feature space (not in a t-SNE layout):
the k-nearest-neighbour class-mixing rate, the silhouette score and the intra-class spread.

Camera-ready Fig. 6 / Remark 2 (v1 Fig. 5), "similar views targeting different targets":
:func:`view_target_conflicts` counts the random-crop views that are closer to a view of an image of
another class than to their own sibling view, and compares the targets of such pairs (the label, and
the stored target of an untrained prior, :func:`random_prior`).
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.stats import norm

from compendium.core import augment
from compendium.theory.threads import single_thread


def paper_overlap(alpha, delta_mu: float = 1.0, sigma2: float = 0.25, k: float = 1.0):
    a = np.asarray(alpha, dtype=float)
    return 2 * norm.cdf(delta_mu / np.sqrt(2 * (sigma2 + k * a))) - 1


def exact_overlap(alpha, delta_mu: float = 1.0, sigma2: float = 0.25, k: float = 1.0):
    a = np.asarray(alpha, dtype=float)
    return 2 * norm.cdf(-delta_mu / (2 * np.sqrt(sigma2 + k * a)))


def mc_overlap(
    alpha: float, delta_mu: float = 1.0, sigma2: float = 0.25, k: float = 1.0, n: int = 200000, seed: int = 0
) -> tuple[float, float]:
    """Monte Carlo of the overlap coefficient and its standard error."""
    rng = np.random.default_rng(seed)
    s = np.sqrt(sigma2 + k * alpha)
    x = rng.normal(0.0, s, n)
    ratio = np.minimum(1.0, norm.pdf(x, delta_mu, s) / norm.pdf(x, 0.0, s))
    return float(ratio.mean()), float(ratio.std() / np.sqrt(n))


def knn_mixing_rate(x: np.ndarray, y: np.ndarray, k: int = 10, groups: np.ndarray | None = None) -> float:
    """Mean fraction of each point's ``k`` nearest neighbours from another class. Neighbours in the
    point's own ``group`` (itself, and other views of the same source image) are skipped, so that
    duplicated clean views do not count as same-class neighbours."""
    from sklearn.neighbors import NearestNeighbors

    groups = np.arange(len(x)) if groups is None else np.asarray(groups)
    extra = int(np.bincount(np.unique(groups, return_inverse=True)[1]).max())
    nn = NearestNeighbors(n_neighbors=min(len(x), k + extra)).fit(x)
    _, idx = nn.kneighbors(x)
    rates = []
    for i in range(len(x)):
        keep = idx[i][groups[idx[i]] != groups[i]][:k]
        rates.append(np.mean(y[keep] != y[i]))
    return float(np.mean(rates))


def class_spread(x: np.ndarray, y: np.ndarray) -> float:
    """Mean Euclidean distance of points to their class centroid."""
    return float(np.mean([np.linalg.norm(x[y == c] - x[y == c].mean(0), axis=1).mean() for c in np.unique(y)]))


def overlap_measures(x: np.ndarray, y: np.ndarray, k: int = 10, groups: np.ndarray | None = None) -> dict:
    from sklearn.metrics import silhouette_score

    return {
        "knn_mixing": knn_mixing_rate(x, y, k, groups),
        "silhouette": float(silhouette_score(x, y)),
        "intra_class_spread": class_spread(x, y),
    }


def augmented_views(images: torch.Tensor, min_scale: float | None, views: int, seed: int) -> torch.Tensor:
    """``views`` RandomResizedCrop(min_scale, 1) views of uint8 images, flattened to ``[n * views, H W C]``
    in [0, 1]; ``min_scale=None`` returns the clean images once per view."""
    x = images.float() / 255.0
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(views):
        v = x if min_scale is None else augment.random_resized_crop(x, scale=(min_scale, 1.0), generator=g)
        out.append(v.reshape(v.shape[0], -1))
    return torch.stack(out, 1).reshape(-1, out[0].shape[1])


def random_prior(seed: int, in_channels: int = 1, width: int = 32, depth: int = 3) -> torch.nn.Module:
    """An untrained, seeded Conv-3 (3x3 conv, instance norm, ReLU, 2x2 average pool per block; the
    flattened last block is the target): ReLA's "Rand." prior."""
    from torch import nn

    g = torch.Generator().manual_seed(seed)
    layers, c = [], in_channels
    for _ in range(depth):
        conv = nn.Conv2d(c, width, 3, padding=1)
        bound = 1 / np.sqrt(c * 9)  # PyTorch's default (kaiming-uniform with a = sqrt(5)) bound, from our generator
        with torch.no_grad():
            conv.weight.uniform_(-bound, bound, generator=g)
            conv.bias.uniform_(-bound, bound, generator=g)
        layers += [conv, nn.GroupNorm(width, width), nn.ReLU(), nn.AvgPool2d(2)]
        c = width
    return nn.Sequential(*layers, nn.Flatten()).eval()


@single_thread()
def prior_targets(prior: torch.nn.Module, images: torch.Tensor) -> torch.Tensor:
    """ReLA's stored targets psi(x) of the clean uint8 images ``[n, C, H, W]``, L2-normalised (the
    ReLA loss is a cosine loss, so only directions matter)."""
    with torch.no_grad():
        return torch.nn.functional.normalize(prior(images.float() / 255.0), dim=1)


@single_thread()
def view_target_conflicts(
    images: torch.Tensor,
    labels: np.ndarray,
    targets: torch.Tensor,
    min_scale: float | None,
    seed: int,
    prior: torch.nn.Module,
) -> dict:
    """ReLA camera-ready Fig. 6 / Remark 2 (v1 Fig. 5): augmentation gives similar views different targets.

    Two RandomResizedCrop(min_scale, 1) views of every image (``min_scale=None``: the clean image twice).
    A view is *confusable* when a view of another image is closer to it (pixel L2) than its own sibling
    view, which has the same target. Targets: the human label, and ReLA's stored target psi(clean image)
    (``targets``, from :func:`prior_targets`). For confusable views whose look-alike comes from another
    class we report the cosine distance of the two targets, next to the prior's cosine distance between
    the two views themselves (how different psi finds the inputs) and between random cross-class targets."""
    n = len(labels)
    v = augmented_views(images, min_scale, 2, seed)  # [2n, HWC], image-major
    img = np.repeat(np.arange(n), 2)
    d = torch.cdist(v, v).numpy()
    d_sib = d[np.arange(2 * n), np.arange(2 * n) ^ 1]
    d[img[:, None] == img[None, :]] = np.inf
    nn_idx = d.argmin(1)
    d_nn = d[np.arange(2 * n), nn_idx]
    confusable = d_nn < d_sib
    hit = confusable & (labels[img[nn_idx]] != labels[img])
    pairs = np.flatnonzero(hit)
    cos_t = 1 - (targets @ targets.T).numpy()
    out = {
        "min_scale": 1.0 if min_scale is None else min_scale,
        "views": 2 * n,
        "confusable share": float(confusable.mean()),
        "confusable with another class": float(hit.mean()),
        "confusable pairs": int(hit.sum()),
        "target cos distance (all cross-class pairs)": float(cos_t[labels[:, None] != labels[None, :]].mean()),
        "target cos distance (those pairs)": float("nan"),
        "prior cos distance of the two views": float("nan"),
        "pixel distance to look-alike / to sibling": float("nan"),
        "example": (-1, -1, -1),
    }
    if len(pairs):
        c, h, w = images.shape[1:]
        with torch.no_grad():
            pv = torch.nn.functional.normalize(
                prior(v.reshape(2 * n, c, h, w)[np.concatenate([pairs, nn_idx[pairs]])]), dim=1
            )
        out.update(
            {
                "target cos distance (those pairs)": float(cos_t[img[pairs], img[nn_idx[pairs]]].mean()),
                "prior cos distance of the two views": float((1 - (pv[: len(pairs)] * pv[len(pairs) :]).sum(1)).mean()),
                "pixel distance to look-alike / to sibling": float(np.median(d_nn[pairs] / d_sib[pairs])),
            }
        )
        a = int(pairs[np.argmin(d_nn[pairs])])  # the most alike pair of views with different targets
        out["example"] = (a, a ^ 1, int(nn_idx[a]))  # a view, its sibling, its look-alike from the other class
    return out
