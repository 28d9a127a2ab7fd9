"""Coreset selection and the simple DD-style baselines. Every method returns a
:class:`~compendium.distill.sets.DistilledSet` with exactly ``ipc`` images per class, its cost measured
by :func:`~compendium.distill.sets.measure`.

Coresets (real images, ``source_index`` set; DC's Table 1 baselines):

* :func:`random_real`: a seeded uniform subset per class (DD/SLDD's "random real").
* :func:`herding`: greedy mean matching in a given feature space (Welling 2009; as in DC and
  iCaRL, Rebuffi et al. 2017 Alg. 4): step k picks the unchosen x minimising
  ``||mu - (S_{k-1} + x) / k||``.
* :func:`k_center`: greedy farthest-point selection (Sener & Savarese 2018, Alg. 1), started at
  the sample closest to the class mean.
* :func:`forgetting`: the examples forgotten most often while a small ConvNet trains
  (Toneva et al. 2019, Sec. 2-3); never-learned examples rank first.
* :func:`kmeans_nearest`: the real image nearest to each per-class k-means centroid.

Synthetic baselines (no ``source_index``; DD/SLDD's baselines):

* :func:`kmeans_centroids`: the per-class k-means centroids (k = ipc) in pixel space.
* :func:`class_average`: the per-class mean image (DD's "average real"); for ipc > 1 the means of
  ipc random disjoint splits of the class.

:func:`select` dispatches by name. The pure index functions (``*_indices``, :func:`herding_order`,
:func:`k_center_order`, :func:`count_forgetting_events`, :func:`kmeans`) are usable on their own.
Features for herding and k-center are the caller's (a trained teacher, a free prior, pixels): pass
them as a tensor, or pass ``feature_fn`` (a callable on the uint8 images, or a backbone, which is run
through :func:`compendium.core.probe.extract_features`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Union

import torch
import torch.nn.functional as F

from compendium.core import models
from compendium.core.probe import extract_features, to_float
from compendium.distill import sets
from compendium.distill.sets import DistilledSet

FeatureFn = Union[Callable[[torch.Tensor], torch.Tensor], torch.nn.Module]


# ----------------------------------------------------------------------------------------------------------
# input checks and per-class plumbing


def _check_labels(labels: torch.Tensor, n: int, ipc: int, num_classes: int) -> torch.Tensor:
    """Labels as int64 [n]; ``ipc`` at least 1 and at most the smallest class's size."""
    if not isinstance(ipc, int) or isinstance(ipc, bool) or ipc < 1:
        raise ValueError(f"ipc must be an integer >= 1, got {ipc!r}")
    if not isinstance(num_classes, int) or num_classes < 1:
        raise ValueError(f"num_classes must be an integer >= 1, got {num_classes!r}")
    labels = torch.as_tensor(labels)
    if labels.ndim != 1 or labels.shape[0] != n:
        raise ValueError(f"labels must be a vector of {n} class ids, got shape {tuple(labels.shape)}")
    if labels.is_floating_point() or labels.dtype == torch.bool:
        raise ValueError(f"labels must be integer class ids, got {labels.dtype}")
    labels = labels.long()
    if n == 0:
        raise ValueError("no examples to select from")
    if int(labels.min()) < 0 or int(labels.max()) >= num_classes:
        raise ValueError(f"labels outside [0, {num_classes})")
    counts = torch.bincount(labels.cpu(), minlength=num_classes)
    small = (counts < ipc).nonzero().flatten().tolist()
    if small:
        c = small[0]
        raise ValueError(
            f"ipc={ipc} is larger than class {c}'s size {int(counts[c])}"
            f"{f' (and {len(small) - 1} more classes)' if len(small) > 1 else ''}"
        )
    return labels


def _check_images(images_u8: torch.Tensor) -> None:
    if not isinstance(images_u8, torch.Tensor) or images_u8.dtype != torch.uint8 or images_u8.ndim != 4:
        raise ValueError(
            f"images must be a uint8 tensor N x C x H x W, got "
            f"{getattr(images_u8, 'dtype', type(images_u8))} {tuple(getattr(images_u8, 'shape', ()))}"
        )


def _check_features(features: torch.Tensor, n: int | None = None) -> torch.Tensor:
    """Features as a finite 2-d tensor with ``n`` rows (any ``n`` when None)."""
    if not isinstance(features, torch.Tensor) or features.ndim != 2 or (n is not None and features.shape[0] != n):
        raise ValueError(
            f"features must be a tensor [{'N' if n is None else n}, d], got {tuple(getattr(features, 'shape', ()))}"
        )
    if not torch.isfinite(features).all():
        raise ValueError("features contain non-finite values")
    return features


def _class_members(labels: torch.Tensor, num_classes: int) -> list[torch.Tensor]:
    """Indices of each class's examples, in dataset order: one sort of the unique keys label * n + index
    (unique keys, so the order is well defined without a stable sort, which is slow on CPU)."""
    labels = labels.cpu()
    n = labels.shape[0]
    order = torch.sort(labels * n + torch.arange(n)).values % n
    counts = torch.bincount(labels, minlength=num_classes).tolist()
    return list(torch.split(order, counts))


def _per_class(
    labels: torch.Tensor, num_classes: int, pick: Callable[[int, torch.Tensor], torch.Tensor]
) -> torch.Tensor:
    """Global indices, class by class: ``pick(c, members)`` returns positions into ``members``."""
    out = [members[pick(c, members).cpu()] for c, members in enumerate(_class_members(labels, num_classes))]
    return torch.cat(out)


def _resolve_features(
    features: torch.Tensor | None, feature_fn: FeatureFn | None, images_u8: torch.Tensor, mean, std
) -> torch.Tensor:
    """The given features, or ``feature_fn``'s on the uint8 images (a module goes through
    :func:`compendium.core.probe.extract_features`, in eval mode, batched)."""
    if features is not None and feature_fn is not None:
        raise ValueError("pass either features or feature_fn, not both")
    if features is None:
        if feature_fn is None:
            raise ValueError("this method needs a feature space: pass features=[N, d] or feature_fn")
        if isinstance(feature_fn, torch.nn.Module):
            features = extract_features(feature_fn, images_u8, mean, std)
        else:
            features = feature_fn(images_u8)
    features = torch.as_tensor(features)
    return _check_features(features.flatten(1) if features.ndim > 2 else features, images_u8.shape[0])


def _synthetic(
    pixels: torch.Tensor, labels: torch.Tensor, num_classes: int, mean, std, method: str, **kw
) -> DistilledSet:
    """A synthetic set from images in [0, 1] pixel space (normalised here, as :func:`sets.from_real`)."""
    m = torch.as_tensor(mean, dtype=torch.float32).view(1, -1, 1, 1)
    s = torch.as_tensor(std, dtype=torch.float32).view(1, -1, 1, 1)
    return DistilledSet(
        ((pixels.float().cpu() - m) / s).contiguous(),
        labels.long().cpu(),
        num_classes,
        tuple(mean),
        tuple(std),
        method,
        **kw,
    )


def _coreset(images_u8, labels, index, num_classes, mean, std, method, cost, seed, params, dataset) -> DistilledSet:
    return sets.from_real(
        images_u8.cpu(),
        labels.cpu(),
        index.cpu(),
        num_classes,
        mean,
        std,
        method,
        dataset=dataset,
        params=params,
        seed=seed,
        synthesis_seconds=cost.seconds,
        peak_memory_bytes=cost.peak_memory_bytes,
    )


# ----------------------------------------------------------------------------------------------------------
# random


def random_indices(labels: torch.Tensor, ipc: int, num_classes: int, seed: int = 0) -> torch.Tensor:
    """``ipc`` distinct indices per class, uniformly at random (one seeded generator, classes in order)."""
    labels = _check_labels(labels, torch.as_tensor(labels).shape[0], ipc, num_classes)
    g = torch.Generator().manual_seed(seed)
    return _per_class(labels, num_classes, lambda c, m: torch.randperm(len(m), generator=g)[:ipc])


def random_real(
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    ipc: int,
    num_classes: int,
    mean,
    std,
    seed: int = 0,
    dataset: str = "fashion-mnist",
) -> DistilledSet:
    """A seeded random subset of ``ipc`` real images per class (DC's "random"; DD's "random real")."""
    _check_images(images_u8)
    with sets.measure() as cost:
        idx = random_indices(_check_labels(labels, images_u8.shape[0], ipc, num_classes), ipc, num_classes, seed)
    return _coreset(images_u8, labels, idx, num_classes, mean, std, "random", cost, seed, {"ipc": ipc}, dataset)


# ----------------------------------------------------------------------------------------------------------
# herding


def herding_order(x: torch.Tensor, k: int) -> torch.Tensor:
    """Herding on one class (Welling 2009; Rebuffi et al. 2017, Alg. 4): positions of ``k`` distinct
    rows of ``x`` [n, d]; step j (1-based) picks the unchosen x minimising ``||mu - (S + x) / j||``,
    S the sum of the rows chosen so far, mu the mean of all rows.

    Since ``||j mu - S - x||^2 = ||x||^2 - 2 x.(j mu - S) + const``, a step is one mat-vec. float64, so
    the argmin (first index on ties) does not depend on rounding."""
    x = x.double()
    n = x.shape[0]
    if not 1 <= k <= n:
        raise ValueError(f"cannot herd {k} of {n} samples")
    mu, sq = x.mean(0), x.pow(2).sum(1)
    total = torch.zeros_like(mu)
    taken = torch.zeros(n, dtype=torch.bool, device=x.device)
    order = torch.empty(k, dtype=torch.int64)
    for j in range(1, k + 1):
        score = sq - 2.0 * (x @ (j * mu - total))
        score.masked_fill_(taken, float("inf"))
        i = int(score.argmin())
        order[j - 1], taken[i] = i, True
        total += x[i]
    return order


def herding_indices(
    features: torch.Tensor, labels: torch.Tensor, ipc: int, num_classes: int, normalize: bool = False
) -> torch.Tensor:
    """Herding per class; ``normalize`` L2-normalises the features first (as iCaRL)."""
    features = _check_features(features)
    labels = _check_labels(labels, features.shape[0], ipc, num_classes)
    f = F.normalize(features.double(), dim=1) if normalize else features
    return _per_class(labels, num_classes, lambda c, m: herding_order(f[m.to(f.device)], ipc))


def herding(
    features: torch.Tensor | None,
    labels: torch.Tensor,
    ipc: int,
    images_u8: torch.Tensor,
    num_classes: int,
    mean,
    std,
    feature_fn: FeatureFn | None = None,
    normalize: bool = False,
    seed: int = 0,
    dataset: str = "fashion-mnist",
) -> DistilledSet:
    """Herding coreset (DC's baseline) in the caller's feature space; images in herding order per class.
    ``features=None`` with ``feature_fn``: features computed here, their cost included. Deterministic
    (``seed`` is only recorded)."""
    _check_images(images_u8)
    labels = _check_labels(labels, images_u8.shape[0], ipc, num_classes)
    with sets.measure() as cost:
        f = _resolve_features(features, feature_fn, images_u8, mean, std)
        idx = herding_indices(f, labels, ipc, num_classes, normalize)
    params = {
        "ipc": ipc,
        "feature_dim": int(f.shape[1]),
        "features": "given" if features is not None else "feature_fn",
        "normalize": normalize,
    }
    return _coreset(images_u8, labels, idx, num_classes, mean, std, "herding", cost, seed, params, dataset)


# ----------------------------------------------------------------------------------------------------------
# k-center


def k_center_order(x: torch.Tensor, k: int) -> torch.Tensor:
    """Greedy k-center on one class (Sener & Savarese 2018, Alg. 1; Gonzalez's 2-approximation):
    positions of ``k`` distinct rows of ``x`` [n, d].

    Start rule: the row closest to the class mean (deterministic; the paper starts from an initial
    labelled pool, which a coreset of one class does not have). Each later step takes the row
    farthest (Euclidean) from its nearest chosen centre; the nearest-centre distances of all rows are
    updated by one mat-vec per step (O(n d)). float64, first index on ties."""
    x = x.double()
    n = x.shape[0]
    if not 1 <= k <= n:
        raise ValueError(f"cannot choose {k} centres from {n} samples")
    order = torch.empty(k, dtype=torch.int64)
    sq = x.pow(2).sum(1)
    i = int((x - x.mean(0)).pow(2).sum(1).argmin())
    dmin = torch.full((n,), float("inf"), dtype=x.dtype, device=x.device)
    for j in range(k):
        order[j] = i
        dmin = torch.minimum(dmin, sq - 2.0 * (x @ x[i]) + sq[i])  # ||x - x_i||^2 by one mat-vec
        dmin[i] = -1.0  # chosen: never again (also guards duplicate rows at distance 0)
        if j + 1 < k:
            i = int(dmin.argmax())
    return order


def k_center_indices(features: torch.Tensor, labels: torch.Tensor, ipc: int, num_classes: int) -> torch.Tensor:
    features = _check_features(features)
    labels = _check_labels(labels, features.shape[0], ipc, num_classes)
    return _per_class(labels, num_classes, lambda c, m: k_center_order(features[m.to(features.device)], ipc))


def k_center(
    features: torch.Tensor | None,
    labels: torch.Tensor,
    ipc: int,
    images_u8: torch.Tensor,
    num_classes: int,
    mean,
    std,
    feature_fn: FeatureFn | None = None,
    seed: int = 0,
    dataset: str = "fashion-mnist",
) -> DistilledSet:
    """K-Center coreset (DC's baseline) in the caller's feature space; deterministic (``seed`` recorded)."""
    _check_images(images_u8)
    labels = _check_labels(labels, images_u8.shape[0], ipc, num_classes)
    with sets.measure() as cost:
        f = _resolve_features(features, feature_fn, images_u8, mean, std)
        idx = k_center_indices(f, labels, ipc, num_classes)
    params = {
        "ipc": ipc,
        "feature_dim": int(f.shape[1]),
        "features": "given" if features is not None else "feature_fn",
        "start": "closest_to_class_mean",
    }
    return _coreset(images_u8, labels, idx, num_classes, mean, std, "k_center", cost, seed, params, dataset)


# ----------------------------------------------------------------------------------------------------------
# forgetting


def count_forgetting_events(correct_history: torch.Tensor) -> torch.Tensor:
    """Forgetting events per example (Toneva et al. 2019, Sec. 2): the number of presentations t at
    which an example that was classified correctly at presentation t-1 is misclassified.

    ``correct_history``: bool [presentations, N]. Examples never classified correctly are "forgotten
    an infinite number of times" in the paper; here they get ``presentations``, more than any learned
    example can reach (at most floor(presentations / 2)). Returns int64 [N]."""
    h = torch.as_tensor(correct_history)
    if h.ndim != 2 or h.dtype != torch.bool:
        raise ValueError(f"correct_history must be a bool tensor [presentations, N], got {h.dtype} {tuple(h.shape)}")
    events = (h[:-1] & ~h[1:]).sum(0)
    return torch.where(h.any(0), events, torch.full_like(events, h.shape[0]))


def top_score_indices(
    scores: torch.Tensor, labels: torch.Tensor, ipc: int, num_classes: int, seed: int = 0
) -> torch.Tensor:
    """Per class, the ``ipc`` examples with the highest score; ties broken by a seeded random order."""
    labels = _check_labels(labels, scores.shape[0], ipc, num_classes)
    g = torch.Generator().manual_seed(seed)

    def pick(c: int, m: torch.Tensor) -> torch.Tensor:
        shuffle = torch.randperm(len(m), generator=g)
        ranked = torch.sort(scores[m][shuffle], descending=True, stable=True).indices
        return shuffle[ranked[:ipc]]

    return _per_class(labels, num_classes, pick)


@dataclass
class ForgettingConfig:
    """The small network that records forgetting events: Conv-3 (``models.build('convnet')``, instance
    norm as DC's ConvNet; on CPU also faster than batch norm here), SGD with momentum, no augmentation;
    every example is presented once per epoch (seeded order). Defaults: 5 epochs at width 16, about
    22 CPU-s per Fashion-MNIST epoch (1 thread), within our budget of about 5 full epochs."""

    epochs: int = 5
    width: int = 16
    norm: str = "instance"
    batch_size: int = 128
    lr: float = 0.01
    momentum: float = 0.9
    device: str = "cpu"  # "auto": CUDA when present

    def torch_device(self) -> torch.device:
        if self.device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return torch.device(self.device)


def forgetting_history(
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    num_classes: int,
    mean,
    std,
    cfg: ForgettingConfig = ForgettingConfig(),
    seed: int = 0,
) -> torch.Tensor:
    """Train a Conv-3 for ``cfg.epochs`` epochs and return bool [epochs, N]: whether each example was
    classified correctly when it was presented (the training forward pass before the step, as
    Toneva et al.'s code records it)."""
    _check_images(images_u8)
    labels = _check_labels(labels, images_u8.shape[0], 1, num_classes)
    if cfg.epochs < 2:
        raise ValueError(f"forgetting needs at least 2 epochs (events are transitions), got {cfg.epochs}")
    dev = cfg.torch_device()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        backbone = models.build(
            "convnet",
            in_channels=images_u8.shape[1],
            image_size=images_u8.shape[-1],
            width=cfg.width,
            depth=3,
            norm=cfg.norm,
        )
        head = torch.nn.Linear(backbone.feature_dim, num_classes)
    net = torch.nn.Sequential(backbone, head).to(dev).train()
    opt = torch.optim.SGD(net.parameters(), lr=cfg.lr, momentum=cfg.momentum)
    order = torch.Generator().manual_seed(seed)
    x_all, y_all = images_u8.to(dev), labels.to(dev)
    n = y_all.shape[0]
    history = torch.zeros(cfg.epochs, n, dtype=torch.bool)
    for epoch in range(cfg.epochs):
        perm = torch.randperm(n, generator=order)
        for i in range(0, n, cfg.batch_size):
            idx = perm[i : i + cfg.batch_size]
            idx_d = idx.to(dev)
            logits = net(to_float(x_all[idx_d], mean, std))
            y = y_all[idx_d]
            history[epoch, idx] = (logits.detach().argmax(1) == y).cpu()
            loss = F.cross_entropy(logits, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    return history


def forgetting(
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    ipc: int,
    num_classes: int,
    mean,
    std,
    seed: int = 0,
    cfg: ForgettingConfig = ForgettingConfig(),
    history: torch.Tensor | None = None,
    dataset: str = "fashion-mnist",
) -> DistilledSet:
    """Forgetting coreset (Toneva et al. 2019; DC's baseline): per class the ``ipc`` examples with the
    most forgetting events (never-learned first), ties in a seeded random order. ``history`` (bool
    [presentations, N]) skips the training, e.g. to share one run across ipc values."""
    _check_images(images_u8)
    labels = _check_labels(labels, images_u8.shape[0], ipc, num_classes)
    with sets.measure(cfg.torch_device()) as cost:
        if history is None:
            history = forgetting_history(images_u8, labels, num_classes, mean, std, cfg, seed)
        elif history.ndim != 2 or history.shape[1] != images_u8.shape[0]:
            raise ValueError(f"history must be [presentations, {images_u8.shape[0]}], got {tuple(history.shape)}")
        counts = count_forgetting_events(history)
        idx = top_score_indices(counts, labels, ipc, num_classes, seed)
    params = {
        "ipc": ipc,
        "presentations": int(history.shape[0]),
        "width": cfg.width,
        "norm": cfg.norm,
        "never_learned": int((~history.any(0)).sum()),
        "mean_events": float(counts.float().mean()),
    }
    return _coreset(images_u8, labels, idx, num_classes, mean, std, "forgetting", cost, seed, params, dataset)


# ----------------------------------------------------------------------------------------------------------
# k-means and class averages


@dataclass
class KMeansResult:
    centroids: torch.Tensor  # [k, d]
    assign: torch.Tensor  # int64 [n]
    inertia: float  # sum of squared distances to the assigned centroid
    iterations: int


def _sqdist(x: torch.Tensor, c: torch.Tensor, x_sq: torch.Tensor) -> torch.Tensor:
    """Squared Euclidean distances [n, k] by one matmul: ||x||^2 - 2 x.c + ||c||^2, clamped at 0."""
    return torch.addmm(x_sq[:, None] + c.pow(2).sum(1)[None, :], x, c.T, alpha=-2.0).clamp_min_(0.0)


def kmeans_pp_init(x: torch.Tensor, k: int, generator: torch.Generator) -> torch.Tensor:
    """k-means++ seeding (Arthur & Vassilvitskii 2007, Sec. 2.2): positions of ``k`` distinct rows; the
    first uniform, each next one drawn with probability proportional to D(x)^2."""
    n = x.shape[0]
    if not 1 <= k <= n:
        raise ValueError(f"cannot seed {k} centroids from {n} samples")
    chosen = torch.empty(k, dtype=torch.int64)
    chosen[0] = int(torch.randint(n, (1,), generator=generator))
    x = x.double()
    sq = x.pow(2).sum(1)

    def dist2(i: int) -> torch.Tensor:  # ||x - x_i||^2 by one mat-vec
        return (sq - 2.0 * (x @ x[i]) + sq[i]).clamp_min_(0.0).cpu()

    d2 = dist2(int(chosen[0]))
    d2[chosen[0]] = 0.0
    for j in range(1, k):
        w = d2.clone()
        if float(w.sum()) <= 0.0:  # all remaining rows duplicate a centroid: uniform over the unchosen
            w = torch.ones(n, dtype=torch.float64)
            w[chosen[:j]] = 0.0
        i = int(torch.multinomial(w, 1, generator=generator))
        chosen[j] = i
        d2 = torch.minimum(d2, dist2(i))
        d2[chosen[: j + 1]] = 0.0
    return chosen


def kmeans(x: torch.Tensor, k: int, generator: torch.Generator, max_iter: int = 100, tol: float = 1e-4) -> KMeansResult:
    """Lloyd's k-means (Lloyd 1982) from k-means++ seeds: batched assignment (one matmul) and update
    (index_add). Stops when the assignment no longer changes, when the summed squared centroid shift
    falls to ``tol`` x the mean per-feature variance (scikit-learn's rule; ``tol=0``: exact
    convergence only), or after ``max_iter`` updates. An empty cluster is re-seeded at the row
    farthest from its centroid."""
    x = x.float()
    x_sq = x.pow(2).sum(1)
    tol_abs = float(tol * x.var(0, unbiased=False).mean()) if x.shape[0] > 1 else 0.0
    c = x[kmeans_pp_init(x, k, generator).to(x.device)].clone()
    dmin, assign = _sqdist(x, c, x_sq).min(1)
    it = 0
    for it in range(1, max_iter + 1):
        counts = torch.bincount(assign, minlength=k)
        sums = torch.zeros_like(c).index_add_(0, assign, x)
        new_c = sums / counts.clamp_min(1)[:, None].to(x.dtype)
        empty = (counts == 0).nonzero().flatten()
        if len(empty):
            new_c[empty] = x[dmin.topk(len(empty)).indices]
        shift = float((new_c - c).pow(2).sum())
        c = new_c
        new_dmin, new_assign = _sqdist(x, c, x_sq).min(1)
        done = not len(empty) and (torch.equal(new_assign, assign) or shift <= tol_abs)
        dmin, assign = new_dmin, new_assign
        if done:
            break
    inertia = float((x - c[assign]).pow(2).sum())
    return KMeansResult(c, assign, inertia, it)


def _kmeans_per_class(
    images_u8: torch.Tensor, labels: torch.Tensor, ipc: int, num_classes: int, seed: int, max_iter: int, tol: float
) -> list[tuple[torch.Tensor, KMeansResult]]:
    g = torch.Generator().manual_seed(seed)
    out = []
    for members in _class_members(labels, num_classes):
        x = images_u8[members].flatten(1).float().div_(255.0)
        out.append((members, kmeans(x, ipc, g, max_iter, tol)))
    return out


def kmeans_centroids(
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    ipc: int,
    num_classes: int,
    mean,
    std,
    seed: int = 0,
    max_iter: int = 100,
    tol: float = 1e-4,
    dataset: str = "fashion-mnist",
) -> DistilledSet:
    """DD/SLDD's "k-means" baseline: per class, k-means (k = ipc) of the images in [0, 1] pixel space,
    and the set's images are the centroids (synthetic). ipc = 1 gives the class mean."""
    _check_images(images_u8)
    labels = _check_labels(labels, images_u8.shape[0], ipc, num_classes)
    with sets.measure() as cost:
        fits = _kmeans_per_class(images_u8, labels, ipc, num_classes, seed, max_iter, tol)
    pixels = torch.cat([r.centroids for _, r in fits]).view(-1, *images_u8.shape[1:])
    y = torch.arange(num_classes).repeat_interleave(ipc)
    params = {
        "ipc": ipc,
        "space": "pixels",
        "init": "k-means++",
        "max_iter": max_iter,
        "tol": tol,
        "inertia": [r.inertia for _, r in fits],
        "iterations": [r.iterations for _, r in fits],
    }
    return _synthetic(
        pixels,
        y,
        num_classes,
        mean,
        std,
        "kmeans",
        dataset=dataset,
        params=params,
        seed=seed,
        synthesis_seconds=cost.seconds,
        peak_memory_bytes=cost.peak_memory_bytes,
    )


def nearest_distinct(x: torch.Tensor, centroids: torch.Tensor) -> torch.Tensor:
    """For each centroid in turn, the nearest row of ``x`` not already taken (so no duplicates)."""
    d = torch.cdist(centroids.double(), x.double())
    out = torch.empty(len(centroids), dtype=torch.int64)
    for j in range(len(centroids)):
        i = int(d[j].argmin())
        out[j] = i
        d[:, i] = float("inf")
    return out


def kmeans_nearest(
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    ipc: int,
    num_classes: int,
    mean,
    std,
    seed: int = 0,
    max_iter: int = 100,
    tol: float = 1e-4,
    dataset: str = "fashion-mnist",
) -> DistilledSet:
    """A real-image k-means coreset: per class, the real image nearest (pixel space) to each centroid,
    without repeats (:func:`nearest_distinct`)."""
    _check_images(images_u8)
    labels = _check_labels(labels, images_u8.shape[0], ipc, num_classes)
    with sets.measure() as cost:
        fits = _kmeans_per_class(images_u8, labels, ipc, num_classes, seed, max_iter, tol)
        idx = torch.cat(
            [m[nearest_distinct(images_u8[m].flatten(1).float().div_(255.0), r.centroids)] for m, r in fits]
        )
    params = {
        "ipc": ipc,
        "space": "pixels",
        "init": "k-means++",
        "max_iter": max_iter,
        "tol": tol,
        "inertia": [r.inertia for _, r in fits],
    }
    return _coreset(images_u8, labels, idx, num_classes, mean, std, "kmeans_nearest", cost, seed, params, dataset)


def class_average(
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    ipc: int,
    num_classes: int,
    mean,
    std,
    seed: int = 0,
    dataset: str = "fashion-mnist",
) -> DistilledSet:
    """DD's "average real" baseline: ipc = 1 is each class's mean image. For ipc > 1 each class is
    shuffled (seeded) and cut into ``ipc`` disjoint near-equal parts, and each part's mean is one
    image (so all ipc images are near the class mean; k-means is the spread-out alternative)."""
    _check_images(images_u8)
    labels = _check_labels(labels, images_u8.shape[0], ipc, num_classes)
    g = torch.Generator().manual_seed(seed)
    with sets.measure() as cost:
        means = []
        for members in _class_members(labels, num_classes):
            perm = members[torch.randperm(len(members), generator=g)] if ipc > 1 else members
            x = images_u8[perm].float().div_(255.0)
            means += [part.mean(0) for part in torch.tensor_split(x, ipc)]
        pixels = torch.stack(means)
    y = torch.arange(num_classes).repeat_interleave(ipc)
    params = {"ipc": ipc, "split": "random disjoint, near-equal" if ipc > 1 else "whole class"}
    return _synthetic(
        pixels,
        y,
        num_classes,
        mean,
        std,
        "average",
        dataset=dataset,
        params=params,
        seed=seed,
        synthesis_seconds=cost.seconds,
        peak_memory_bytes=cost.peak_memory_bytes,
    )


# ----------------------------------------------------------------------------------------------------------
# dispatcher

METHODS: dict[str, Callable[..., DistilledSet]] = {
    "random": random_real,
    "herding": herding,
    "k_center": k_center,
    "forgetting": forgetting,
    "kmeans": kmeans_centroids,
    "kmeans_nearest": kmeans_nearest,
    "average": class_average,
}
FEATURE_METHODS = ("herding", "k_center")
_ALIASES = {
    "random_real": "random",
    "kcenter": "k_center",
    "kmeans_centroids": "kmeans",
    "class_average": "average",
    "average_real": "average",
}


def select(
    name: str,
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    ipc: int,
    num_classes: int,
    mean,
    std,
    *,
    seed: int = 0,
    features: torch.Tensor | None = None,
    feature_fn: FeatureFn | None = None,
    **kw,
) -> DistilledSet:
    """A coreset or simple baseline by name (:data:`METHODS`; ``-`` and ``_`` alike). ``features`` or
    ``feature_fn`` are required by herding and k-center and refused by the others; ``kw`` goes to the
    method (e.g. ``cfg`` for forgetting, ``max_iter`` for k-means)."""
    key = str(name).lower().replace("-", "_")
    key = _ALIASES.get(key, key)
    if key not in METHODS:
        raise ValueError(f"unknown coreset method {name!r}; known: {sorted(METHODS)}")
    _check_images(images_u8)
    labels = _check_labels(labels, images_u8.shape[0], ipc, num_classes)
    if key in FEATURE_METHODS:
        return METHODS[key](
            features, labels, ipc, images_u8, num_classes, mean, std, feature_fn=feature_fn, seed=seed, **kw
        )
    if features is not None or feature_fn is not None:
        raise ValueError(f"{key} does not use features (only {', '.join(FEATURE_METHODS)} do)")
    return METHODS[key](images_u8, labels, ipc, num_classes, mean, std, seed=seed, **kw)


def set_file(name: str, ipc: int) -> str:
    """The file of one selected set: ``"herding (teacher)"`` at ipc 1 -> ``herding_teacher_ipc1.pt``.

    >>> set_file("k_center (prior)", 10)
    'k_center_prior_ipc10.pt'
    """
    return f"{re.sub(r'[^0-9A-Za-z]+', '_', name).strip('_')}_ipc{ipc}.pt"


def select_grid(
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    ipcs,
    methods,
    feature_spaces,
    features: dict,
    mean,
    std,
    *,
    forgetting_epochs: int,
    device: str = "auto",
    folder=None,
    num_classes: int = 10,
    dataset: str = "fashion-mnist",
) -> tuple[dict, list[dict]]:
    """Every method at every ipc (the ``dd_coresets`` stage; the coreset rows of DC's Table 1, Zhao et al.,
    ICLR 2021): herding and k-center once per feature space of ``features`` (named ``"method (space)"``),
    forgetting from one recorded history (seed 0) shared by all ipcs. ``(name, ipc) -> set`` and one cost row
    per set; each set is saved under ``folder`` (when given) as :func:`set_file`, recording ``dataset``."""
    sets_, rows = {}, []
    hist = None
    for ipc in ipcs:
        for m in methods:
            spaces = feature_spaces if m in FEATURE_METHODS else [None]
            for space in spaces:
                name = m if space is None else f"{m} ({space})"
                kw = {"features": features[space]} if space else {}
                if m == "forgetting":
                    cfg = ForgettingConfig(epochs=forgetting_epochs, device=device)
                    if hist is None:
                        hist = forgetting_history(images_u8, labels, num_classes, mean, std, cfg, seed=0)
                    kw = {"cfg": cfg, "history": hist}
                d = select(m, images_u8, labels, ipc, num_classes, mean, std, seed=0, dataset=dataset, **kw)
                d.params["pool"] = len(images_u8)  # the real images it chose from
                sets_[(name, ipc)] = d
                if folder is not None:
                    d.save(folder / set_file(name, ipc))
                rows.append(
                    {
                        "method": name,
                        "ipc": ipc,
                        "images": len(d),
                        "seconds": d.synthesis_seconds,
                        "peak MB": d.peak_memory_bytes / 2**20,
                    }
                )
    return sets_, rows
