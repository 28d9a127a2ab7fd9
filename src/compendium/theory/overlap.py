"""Augmentation and class overlap (ReLA camera-ready App M, Thm 4; v1 App O, Thm 6, Figs. 6-9).

Model: two classes with 1-D Gaussian samples of std sigma and means Delta mu apart. Augmentation
adds independent noise of variance k alpha, so each class becomes N(mu_i, sigma^2 + k alpha).

* :func:`paper_overlap`: the paper's approximation O(alpha) = 2 Phi(Delta mu / sqrt(2 (sigma^2 + k alpha))) - 1.
* :func:`exact_overlap`: the overlap coefficient, the integral of min(p1, p2) = 2 Phi(-Delta mu / (2 sigma_alpha)).
* :func:`mc_overlap`: Monte Carlo of the same integral, E_{x ~ p1}[min(1, p2(x)/p1(x))].

For real data, the overlap is measured in the original feature space (not in a t-SNE layout):
the k-nearest-neighbour class-mixing rate, the silhouette score and the intra-class spread.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.stats import norm


def paper_overlap(alpha, delta_mu: float = 1.0, sigma2: float = 0.25, k: float = 1.0):
    a = np.asarray(alpha, dtype=float)
    return 2 * norm.cdf(delta_mu / np.sqrt(2 * (sigma2 + k * a))) - 1


def exact_overlap(alpha, delta_mu: float = 1.0, sigma2: float = 0.25, k: float = 1.0):
    a = np.asarray(alpha, dtype=float)
    return 2 * norm.cdf(-delta_mu / (2 * np.sqrt(sigma2 + k * a)))


def mc_overlap(alpha: float, delta_mu: float = 1.0, sigma2: float = 0.25, k: float = 1.0, n: int = 200000,
               seed: int = 0) -> tuple[float, float]:
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

    return {"knn_mixing": knn_mixing_rate(x, y, k, groups), "silhouette": float(silhouette_score(x, y)),
            "intra_class_spread": class_spread(x, y)}


def augmented_views(images: torch.Tensor, min_scale: float | None, views: int, seed: int) -> torch.Tensor:
    """``views`` RandomResizedCrop(min_scale, 1) views of uint8 images, flattened to ``[n * views, H W C]``
    in [0, 1]; ``min_scale=None`` returns the clean images once per view."""
    from .. import augment

    x = images.float() / 255.0
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(views):
        v = x if min_scale is None else augment.random_resized_crop(x, scale=(min_scale, 1.0), generator=g)
        out.append(v.reshape(v.shape[0], -1))
    return torch.stack(out, 1).reshape(-1, out[0].shape[1])
