"""Neural-architecture-search proxies (the reading notes: DC "NAS", DSA "Neural Architecture Search",
GTN's aim): rank a space of small ConvNets by cheap training on a small set and
compare the ranking with the one of a (longer) training on the whole training set.

* The space (DC's NAS space, reduced): ``compendium.core.models.convnet`` kwargs over width, depth, activation,
  normalisation and pooling; an architecture is named by a code ``"w16-d2-relu-instance-avg"``
  (:func:`arch_code`, :func:`parse_code`); :func:`search_space` is a seeded, deterministic sample of
  distinct codes. BatchNorm is left out: the GTN proxy trains for a handful of steps, after which
  BatchNorm's running statistics would not have converged, and every proxy must treat every
  architecture alike.
* Jobs (module-level, for :func:`compendium.core.parallel.run_calls`): :func:`ground_truth_job` (the
  architecture trained on real training images for many steps), :func:`set_proxy_job` (trained briefly
  on a :class:`~compendium.distill.sets.DistilledSet`: random real, DC, DSA, DM) and
  :func:`gtn_proxy_job` (T steps on a GTN's curriculum with its learned lr and momentum). Each returns
  the test accuracy, the training wall seconds (tests excluded) and the job's CPU seconds (build, train and
  one test pass; robust to other load on the machine), so that the proxy's share of the search time can be
  measured.
* Scoring: Spearman's rank correlation with average ranks for ties (:func:`spearman`), a bootstrap over
  architectures for the noise of a difference of two correlations (:func:`bootstrap_rho_delta`) and the
  proxy's top-1 pick with its ground-truth rank (:func:`proxy_scores`).
"""

from __future__ import annotations

import itertools
import time
from typing import Sequence

import numpy as np
import scipy.stats
import torch

from compendium.core.probe import to_float
from compendium.distill import evaluate as E
from compendium.distill.unrolled import gtn as G

SPACE = {
    "width": (8, 16),
    "depth": (1, 2, 3),
    "activation": ("relu", "leaky_relu", "sigmoid"),
    "norm": ("instance", "group", "layer", "none"),
    "pooling": ("avg", "max"),
}
_KEYS = ("width", "depth", "activation", "norm", "pooling")


def arch_code(kw: dict) -> str:
    """``{"width": 16, "depth": 2, ...}`` -> ``"w16-d2-relu-instance-avg"``."""
    return f"w{kw['width']}-d{kw['depth']}-{kw['activation']}-{kw['norm']}-{kw['pooling']}"


def parse_code(code: str) -> dict:
    """The ConvNet kwargs of a code (inverse of :func:`arch_code`); a ValueError names a bad part."""
    parts = code.split("-")
    if len(parts) != 5 or not parts[0].startswith("w") or not parts[1].startswith("d"):
        raise ValueError(f"architecture code {code!r} is not 'w<width>-d<depth>-<activation>-<norm>-<pooling>'")
    try:
        width, depth = int(parts[0][1:]), int(parts[1][1:])
    except ValueError as e:
        raise ValueError(f"bad width / depth in {code!r}") from e
    kw = {"width": width, "depth": depth, "activation": parts[2], "norm": parts[3], "pooling": parts[4]}
    if width < 1 or not 1 <= depth <= 4:
        raise ValueError(f"{code!r}: need width >= 1 and depth in 1..4")
    for k in ("activation", "norm", "pooling"):
        allowed = {
            "activation": ("relu", "leaky_relu", "sigmoid", "gelu"),
            "norm": ("instance", "group", "layer", "none", "batch"),
            "pooling": ("avg", "max"),
        }[k]
        if kw[k] not in allowed:
            raise ValueError(f"{code!r}: unknown {k} {kw[k]!r}; known: {allowed}")
    return kw


def search_space(n: int = 24, seed: int = 0, space: dict | None = None) -> list[str]:
    """``n`` distinct architecture codes: the product of ``space``'s values in a seeded random order,
    the first ``n`` (deterministic; all of them when ``n`` is the product's size)."""
    space = space or SPACE
    combos = [dict(zip(_KEYS, v)) for v in itertools.product(*(space[k] for k in _KEYS))]
    if not 1 <= n <= len(combos):
        raise ValueError(f"n must be in [1, {len(combos)}] for this space, got {n}")
    perm = torch.randperm(len(combos), generator=torch.Generator().manual_seed(seed)).tolist()
    return [arch_code(combos[i]) for i in perm[:n]]


# --- ranks ------------------------------------------------------------------------------------------

rankdata = scipy.stats.rankdata  # 1-based ranks, ties sharing their average rank


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rho: Pearson's correlation of the average ranks (NaN when either side is constant)."""
    if len(a) != len(b) or len(a) < 2:
        raise ValueError(f"need two sequences of the same length >= 2, got {len(a)} and {len(b)}")
    ra, rb = rankdata(a), rankdata(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    den = np.sqrt((ra**2).sum() * (rb**2).sum())
    return float((ra * rb).sum() / den) if den > 0 else float("nan")


def bootstrap_rho_delta(
    gt: Sequence[float], a: Sequence[float], b: Sequence[float] | None = None, n_boot: int = 1000, seed: int = 0
) -> float:
    """Std over bootstrap resamples of the architectures of rho(a, gt) - rho(b, gt) (``b`` None: of
    rho(a, gt) alone): the noise of a comparison of two proxies on the same search space."""
    gt, a = np.asarray(gt, float), np.asarray(a, float)
    b = None if b is None else np.asarray(b, float)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_boot):
        i = rng.integers(0, len(gt), len(gt))
        d = spearman(a[i], gt[i]) - (spearman(b[i], gt[i]) if b is not None else 0.0)
        if np.isfinite(d):
            out.append(d)
    return float(np.std(out, ddof=1)) if len(out) > 1 else float("nan")


def proxy_scores(codes: Sequence[str], gt: Sequence[float], proxy: Sequence[float]) -> dict:
    """rho with the ground truth, the proxy's top-1 architecture, its ground-truth rank (1 = best) and
    accuracy, and the regret (best ground-truth accuracy minus the pick's)."""
    gt, proxy = np.asarray(gt, float), np.asarray(proxy, float)
    pick = int(np.argmax(proxy))
    gt_rank = len(gt) + 1 - rankdata(gt)  # 1 = the best (ties share)
    return {
        "rho": spearman(proxy, gt),
        "top1": codes[pick],
        "top1 gt rank": float(gt_rank[pick]),
        "top1 gt acc": float(gt[pick]),
        "regret": float(gt.max() - gt[pick]),
    }


# --- jobs -------------------------------------------------------------------------------------------


def channels_last(kw: dict) -> bool:
    """Whether a ConvNet of the space trains faster in NHWC on CPU: the norm-free and BatchNorm ones do (about
    1.5x), the GroupNorm-based ones (instance, group, layer norm) run about 2.5x slower (measured on 2 cores,
    width 16, batch 64), so they keep NCHW."""
    return kw["norm"] in ("none", "batch")


def ground_truth_job(
    code: str,
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    test_u8: torch.Tensor,
    test_labels: torch.Tensor,
    mean,
    std,
    steps: int,
    batch_size: int,
    lr: float,
    seed: int = 0,
) -> dict:
    """The architecture trained on real training images (``steps`` AdamW steps of ``batch_size``, cosine,
    no augmentation) and tested: the ground truth of the search."""
    kw = parse_code(code)
    cfg = E.EvalConfig(
        arch="convnet",
        arch_kwargs=kw,
        steps=steps,
        batch_size=batch_size,
        lr=lr,
        augmentation="none",
        label_mode="hard",
        device="cpu",
        channels_last=channels_last(kw),
    )
    c0 = time.process_time()
    r = E.whole_dataset_upper_bound(images_u8, labels, test_u8, test_labels, cfg, seed, mean=mean, std=std)
    return {
        "arch": code,
        "proxy": "ground truth",
        "seed": seed,
        "acc": r["final_acc"],
        "train seconds": r["train_seconds"],
        "cpu seconds": time.process_time() - c0,
        "images seen": steps * batch_size,
        "test images": int(len(test_labels)),
    }


def set_proxy_job(
    code: str,
    name: str,
    dset,
    test_u8: torch.Tensor,
    test_labels: torch.Tensor,
    steps: int,
    batch_size: int,
    lr: float,
    seed: int = 0,
    replicate: int = 0,
) -> dict:
    """The architecture trained briefly on a small set (random real, DC, DSA, DM; hard labels, AdamW);
    ``replicate`` names which instance of the proxy the set is (its synthesis or sampling seed)."""
    kw = parse_code(code)
    cfg = E.EvalConfig(
        arch="convnet",
        arch_kwargs=kw,
        steps=steps,
        batch_size=batch_size,
        lr=lr,
        augmentation="none",
        label_mode="hard",
        device="cpu",
        channels_last=channels_last(kw),
    )
    c0 = time.process_time()
    r = E.evaluate(dset, test_u8, test_labels, cfg, seed)
    return {
        "arch": code,
        "proxy": name,
        "seed": replicate,
        "acc": r["final_acc"],
        "train seconds": r["train_seconds"],
        "cpu seconds": time.process_time() - c0,
        "images seen": steps * min(batch_size, len(dset)),
    }


def gtn_proxy_job(
    code: str, name: str, gtn, test_u8: torch.Tensor, test_labels: torch.Tensor, seed: int = 0, replicate: int = 0
) -> dict:
    """The architecture trained for the GTN's T steps on its curriculum with its learned lr and momentum
    (WN on the learner iff the GTN was meta-trained with it); ``replicate``: the GTN's meta-training seed."""
    c0 = time.process_time()
    net = G.make_learner(parse_code(code), 1_000_003 + seed, gtn.weight_norm, tuple(test_u8.shape[1:]), gtn.num_classes)
    t0 = time.perf_counter()
    batches = G.gtn_batches(gtn, seed)
    G.train_learner(net, batches, gtn.lr.item(), gtn.momentum.item())
    seconds = time.perf_counter() - t0
    acc = G.test_accuracy(net, to_float(test_u8, gtn.mean, gtn.std), test_labels)
    return {
        "arch": code,
        "proxy": name,
        "seed": replicate,
        "acc": acc,
        "train seconds": seconds,
        "cpu seconds": time.process_time() - c0,
        "images seen": sum(len(y) for _, y in batches),
    }


def gtn_job(*args, **kwargs) -> dict:
    """:func:`compendium.distill.unrolled.gtn.run` (meta-train + evaluate one GTN), so that the GTN runs share one
    worker pool with the NAS trainings."""
    return G.run(*args, **kwargs)


def real_arm_job(*args, **kwargs) -> dict:
    """:func:`compendium.distill.unrolled.gtn.real_arm` in the same pool."""
    return G.real_arm(*args, **kwargs)
