"""Dataset distillation (Wang et al. 2018), soft-label DD (Sucholutsky & Schonlau 2021) and DD's data
poisoning, on the differentiable inner loop of :mod:`compendium.distill.unrolled.unroll`.

* :func:`distill`: Algorithm 1 (DD) and Algorithm 1a (SLDD): distilled images x~ (and, with
  ``learn_labels``, label logits y~), one learned step size per inner step and epoch (DD's multi-step,
  multi-epoch extension: rates not tied across epochs), optimised so that ``steps x epochs`` GD steps
  from theta_0 ~ p(theta_0) minimise the real-data loss. ``sampler`` is p(theta_0): the notes' four
  regimes are :func:`fixed_init`, :func:`random_init` (Xavier), and a fixed or random draw from a pool
  of networks pre-trained on another dataset (:func:`pool_init`).
* ``relabel`` turns the objective into DD's L_{K->T} poisoning loss (real images of class K are
  scored against label T, the others against their own labels): :func:`poison_map`.
* :func:`train_with` / :func:`accuracy`: the evaluation (the same schedule of GD steps from an unseen
  theta_0, with the learned rates or a constant one); :func:`knn_accuracy`: SLDD's non-neural learner.
* :func:`label_init`: SLDD's label initialisation, one-hot-like ("separate") or sharing mass within
  groups of similar classes ("shared"), the notes' open question.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from compendium.core import plateau
from compendium.core.probe import to_float
from compendium.core.progress import Rate, say
from compendium.distill.networks import build_network
from compendium.distill.sets import load_tensors, save_tensors
from compendium.distill.unrolled import unroll as U

Params = U.Params
Sampler = Callable[[int], Params]


# ---------------------------------------------------------------------------------------------- networks


def classifier(
    seed: int, arch: str = "lenet", arch_kwargs: dict | None = None, init: str = "default", num_classes: int = 10
) -> nn.Module:
    """DD's learner (LeNet on MNIST-like data) with a seeded initialisation: PyTorch's default
    (Kaiming-uniform) or ``xavier`` (SLDD's random init: Xavier-uniform weights, zero biases)."""
    net = build_network(1, 28, num_classes, seed, arch, arch_kwargs)
    if init == "xavier":
        g = torch.Generator().manual_seed(int(seed) + 7919)
        with torch.no_grad():
            for m in net.modules():
                if isinstance(m, (nn.Conv2d, nn.Linear)):
                    fan_in, fan_out = nn.init._calculate_fan_in_and_fan_out(m.weight)
                    a = (6.0 / (fan_in + fan_out)) ** 0.5
                    m.weight.copy_(torch.rand(m.weight.shape, generator=g) * 2 * a - a)
                    if m.bias is not None:
                        m.bias.zero_()
    elif init != "default":
        raise ValueError(f"init must be 'default' or 'xavier', got {init!r}")
    return net


def fixed_init(params: Params) -> Sampler:
    """The fixed-initialisation regime: every outer step starts from the same theta_0."""
    return lambda it: params


def random_init(arch: str = "lenet", arch_kwargs: dict | None = None, init: str = "xavier", seed: int = 0) -> Sampler:
    """The random-initialisation regime: a fresh theta_0 ~ p(theta_0) per outer step (seeds
    ``seed * 100_003 + it``, so evaluation seeds drawn elsewhere stay unseen)."""
    return lambda it: U.initial_params(classifier(seed * 100_003 + it + 1, arch, arch_kwargs, init))


def pool_init(pool: Sequence[Params], seed: int = 0) -> Sampler:
    """A draw from a pool of pre-trained networks per outer step (one network: the fixed pre-trained regime)."""
    if not pool:
        raise ValueError("the pool of pre-trained networks is empty")
    g = torch.Generator().manual_seed(seed)
    order = [int(i) for i in torch.randint(len(pool), (100_000,), generator=g)]
    return lambda it: pool[order[it % len(order)]]


# ------------------------------------------------------------------------------------------------ labels


def label_init(
    labels: torch.Tensor,
    num_classes: int,
    mode: str = "separate",
    own: float = 0.9,
    groups: Sequence[Sequence[int]] = (),
) -> torch.Tensor:
    """SLDD's y~_0 as a label distribution per distilled image. ``separate``: ``own`` on the image's class,
    the rest spread evenly; ``shared``: ``own`` on the class, half the rest spread over the other members of
    its group of similar classes (e.g. Fashion-MNIST's tops 0/2/4/6), half over all other classes."""
    if not 0 < own <= 1:
        raise ValueError(f"own must be in (0, 1], got {own}")
    n, C = len(labels), num_classes
    rest = 1.0 - own
    p = torch.full((n, C), rest / max(C - 1, 1))
    if mode == "shared":
        group_of = {c: [m for m in g if m != c] for g in groups for c in g}
        for i, c in enumerate(labels.tolist()):
            mates = group_of.get(c, [])
            if mates:
                others = [k for k in range(C) if k != c and k not in mates]
                p[i] = 0.0
                p[i, mates] = rest / 2 / len(mates)
                p[i, others] = rest / 2 / max(len(others), 1)
    elif mode != "separate":
        raise ValueError(f"label init mode must be 'separate' or 'shared', got {mode!r}")
    p[torch.arange(n), labels] = own
    return p


def poison_map(labels: torch.Tensor, attacked: int, target: int) -> torch.Tensor:
    """DD's L_{K->T}: the real labels with class K replaced by T (K's images should be predicted T,
    every other image its own class)."""
    return torch.where(labels == attacked, torch.full_like(labels, target), labels)


# ------------------------------------------------------------------------------------------------ distill


@dataclass
class DDConfig:
    """One DD / SLDD run. ``size`` distilled images with labels ``arange(size) % C`` (class-cyclic, so each of
    the ``steps`` batches holds consecutive classes), ``steps x epochs`` inner GD steps."""

    size: int = 100
    steps: int = 10
    epochs: int = 3
    iterations: int = 200
    batch_real: int = 256
    lr_img: float = 0.01
    lr_label: float = 0.01
    lr_lr: float = 0.01
    init_lr: float = 0.02
    learn_labels: bool = False
    label_mode: str = "separate"
    label_own: float = 0.9
    groups: tuple = ()
    thetas_per_iter: int = 1
    seed: int = 0
    #: stop at a measured plateau of the outer loss: every ``plateau_every`` outer steps (from
    #: ``min_iterations`` on) the trace is tested with the claims' criterion
    #: (:func:`compendium.core.plateau.is_plateau`: the 90% interval of the remaining trend within ±5% of
    #: the total decrease); ``iterations`` is then the cap. 0: run all ``iterations``.
    plateau_every: int = 0
    min_iterations: int = 0


@dataclass
class DDResult:
    images: torch.Tensor  # [M, 1, 28, 28], normalised
    labels: torch.Tensor  # int64 [M]: the class each image was initialised for
    targets: torch.Tensor  # int64 [M] (DD) or float [M, C] label distributions (SLDD)
    lrs: torch.Tensor  # [steps * epochs]
    loss_trace: list = field(default_factory=list)
    config: dict = field(default_factory=dict)
    seconds: float = 0.0

    def save(self, path: str | Path) -> Path:
        """Write the set through :func:`compendium.distill.sets.save_tensors` (kind ``"unrolled"``), without
        its wall-clock ``seconds`` (NaN once loaded), so that an identical rerun rewrites it byte for byte."""
        return save_tensors(
            path,
            KIND,
            {"images": self.images, "labels": self.labels, "targets": self.targets, "lrs": self.lrs},
            {"loss_trace": [float(v) for v in self.loss_trace], "config": self.config},
        )

    @classmethod
    def load(cls, path: str | Path) -> "DDResult":
        """Read a set written by :meth:`save` (``groups`` of the config back as tuples)."""
        t, meta = load_tensors(path, KIND)
        config = dict(meta["config"])
        if "groups" in config:
            config["groups"] = tuple(tuple(g) for g in config["groups"])
        return cls(
            t["images"],
            t["labels"],
            t["targets"],
            t["lrs"],
            meta["loss_trace"],
            config,
            float(meta.get("seconds", math.nan)),
        )


KIND = "unrolled"  # the set type of DD / SLDD results in the one set file format


def _check(cfg: DDConfig, num_classes: int) -> None:
    if cfg.size < 1 or cfg.steps < 1 or cfg.epochs < 1 or cfg.iterations < 0:
        raise ValueError(f"size, steps, epochs must be >= 1 and iterations >= 0: {cfg}")
    if cfg.size % cfg.steps:
        raise ValueError(f"{cfg.size} distilled images do not split into {cfg.steps} equal steps")
    if not cfg.learn_labels and cfg.size < num_classes:
        raise ValueError(
            f"hard-label DD needs at least one image per class ({cfg.size} < {num_classes}); "
            "fewer images than classes need learned labels (SLDD)"
        )
    if cfg.init_lr <= 0:
        raise ValueError(f"init_lr must be > 0, got {cfg.init_lr}")
    if cfg.plateau_every < 0 or cfg.min_iterations < 0:
        raise ValueError(f"plateau_every and min_iterations must be >= 0: {cfg}")


def _softplus_inv(v: float) -> float:
    return float(torch.tensor(v).expm1().log())


def plateau_reached(trace: Sequence[float], cfg: DDConfig) -> bool:
    """The early stop of :func:`distill` (:func:`compendium.core.plateau.stop_at_plateau` with the config's
    ``plateau_every`` and ``min_iterations``)."""
    return plateau.stop_at_plateau(trace, cfg.plateau_every, cfg.min_iterations)


def distill(
    model: nn.Module,
    sampler: Sampler,
    x_real: torch.Tensor,
    y_real: torch.Tensor,
    cfg: DDConfig,
    num_classes: int = 10,
    relabel: Callable[[torch.Tensor], torch.Tensor] | None = None,
    log_every: int = 0,
    device: str = "cpu",
) -> DDResult:
    """DD (Alg. 1, multi-step and multi-epoch) or SLDD (Alg. 1a, ``cfg.learn_labels``). ``model`` only
    supplies the architecture (its weights come from ``sampler``); ``x_real`` normalised float training
    images, ``y_real`` their labels; ``relabel`` maps a real label batch to the objective's labels (DD's
    poisoning loss). Adam on x~, y~ and the softplus-parameterised rates (DD's code: Adam, betas 0.5/0.999).
    The unrolled steps run on ``device`` (every random draw on the CPU, so a device changes no draw); the
    result is on the CPU."""
    import time

    _check(cfg, num_classes)
    if x_real.shape[0] != y_real.shape[0] or x_real.shape[0] < 2:
        raise ValueError("x_real and y_real must hold the same number (>= 2) of real images")
    t0 = time.perf_counter()
    dev = torch.device(device)
    model, x_real, y_real = model.to(dev), x_real.to(dev), y_real.to(dev)
    g = torch.Generator().manual_seed(cfg.seed)
    labels = torch.arange(cfg.size) % num_classes
    labels_dev = labels.to(dev)  # DD's hard targets, once on the device
    x = torch.randn((cfg.size, *x_real.shape[1:]), generator=g).to(dev).requires_grad_()
    raw_lr = torch.full((cfg.steps * cfg.epochs,), _softplus_inv(cfg.init_lr), device=dev).requires_grad_()
    groups = [{"params": [x], "lr": cfg.lr_img}, {"params": [raw_lr], "lr": cfg.lr_lr}]
    y_logit = None
    if cfg.learn_labels:
        y_logit = (
            label_init(labels, num_classes, cfg.label_mode, cfg.label_own, cfg.groups).log().to(dev).requires_grad_()
        )
        groups.append({"params": [y_logit], "lr": cfg.lr_label})
    opt = torch.optim.Adam(groups, betas=(0.5, 0.999))
    trace = []
    n_real = x_real.shape[0]
    rate = Rate(cfg.iterations)
    for it in range(cfg.iterations):
        idx = torch.randint(n_real, (min(cfg.batch_real, n_real),), generator=g)
        xr, yr = x_real[idx], y_real[idx]
        if relabel is not None:
            yr = relabel(yr)
        targets = y_logit.softmax(1) if y_logit is not None else labels_dev
        lrs = F.softplus(raw_lr)
        loss = 0.0
        for j in range(cfg.thetas_per_iter):
            theta = {k: v.to(dev) for k, v in sampler(it * cfg.thetas_per_iter + j).items()}
            params = U.unroll(model, theta, U.dd_batches(x, targets, cfg.steps, cfg.epochs), lrs)
            loss = loss + U.outer_loss(model, params, xr, yr) / cfg.thetas_per_iter
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        trace.append(float(loss.detach()))
        if log_every and (it + 1) % log_every == 0:
            say(f"[dd] {it + 1}/{cfg.iterations} loss {trace[-1]:.4f}  {rate.update(it + 1)}")
        if plateau_reached(trace, cfg):
            break
    targets = y_logit.detach().softmax(1).cpu() if y_logit is not None else labels.clone()
    return DDResult(
        x.detach().cpu(),
        labels,
        targets,
        F.softplus(raw_lr).detach().cpu(),
        trace,
        asdict(cfg),
        time.perf_counter() - t0,
    )


# --------------------------------------------------------------------------------------------- evaluation


def train_with(
    model: nn.Module, theta0: Params, x: torch.Tensor, targets: torch.Tensor, lrs: torch.Tensor, steps: int, epochs: int
) -> Params:
    """DD's evaluation: the ``steps x epochs`` GD steps of the distilled schedule from ``theta0`` (no
    graph kept). ``lrs``: the learned rates, or a constant rate repeated."""
    with torch.enable_grad():
        p = U.unroll(model, theta0, U.dd_batches(x, targets, steps, epochs), lrs.detach(), truncate=1)
    return {k: v.detach() for k, v in p.items()}


@torch.no_grad()
def predict(model: nn.Module, params: Params, x: torch.Tensor, batch: int = 2048) -> torch.Tensor:
    buffers = dict(model.named_buffers())
    return torch.cat(
        [functional_call(model, {**params, **buffers}, (x[i : i + batch],)).argmax(1) for i in range(0, len(x), batch)]
    )


def accuracy(model: nn.Module, params: Params, x: torch.Tensor, y: torch.Tensor) -> float:
    return float((predict(model, params, x) == y).float().mean())


def class_accuracy(pred: torch.Tensor, y: torch.Tensor, num_classes: int) -> torch.Tensor:
    """Per-class recall (NaN where a class has no test image)."""
    out = torch.full((num_classes,), float("nan"))
    for c in range(num_classes):
        m = y == c
        if m.any():
            out[c] = (pred[m] == c).float().mean()
    return out


def knn_accuracy(
    x_train: torch.Tensor,
    y_train: torch.Tensor,
    x_test: torch.Tensor,
    y_test: torch.Tensor,
    k: int = 1,
    batch: int = 2048,
) -> float:
    """SLDD's non-neural learner: k-nearest neighbours (Euclidean, pixel space; majority vote, ties to the
    nearest) trained on the (distilled) set. Soft labels vote with their argmax."""
    if y_train.is_floating_point():
        y_train = y_train.argmax(1)
    if not 1 <= k <= len(x_train):
        raise ValueError(f"k must be in [1, {len(x_train)}], got {k}")
    a = x_train.flatten(1)
    C = int(max(int(y_train.max()), int(y_test.max()))) + 1
    correct = 0
    for i in range(0, len(x_test), batch):
        d = torch.cdist(x_test[i : i + batch].flatten(1), a)
        nn_idx = d.topk(k, largest=False).indices
        votes = F.one_hot(y_train[nn_idx], C).float()
        votes += torch.linspace(1e-3, 0, k).view(1, k, 1)  # nearer neighbours break ties
        correct += int((votes.sum(1).argmax(1) == y_test[i : i + batch]).sum())
    return correct / len(x_test)


def fit(
    model: nn.Module,
    theta0: Params,
    x: torch.Tensor,
    y: torch.Tensor,
    steps: int,
    batch: int = 128,
    lr: float = 1e-3,
    seed: int = 0,
    device: str = "cpu",
) -> Params:
    """Ordinary (non-unrolled) Adam training, for the pre-trained pools and the whole-data reference, on
    ``device`` (the batches drawn on the CPU); the trained weights on the CPU."""
    dev = torch.device(device)
    net, x, y = model.to(dev), x.to(dev), y.to(dev)
    with torch.no_grad():
        for k, p in net.named_parameters():
            p.copy_(theta0[k])
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    g = torch.Generator().manual_seed(seed)
    net.train()
    for _ in range(steps):
        idx = torch.randint(len(x), (batch,), generator=g)
        loss = F.cross_entropy(net(x[idx]), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return {k: v.cpu() for k, v in U.initial_params(net).items()}


# ------------------------------------------------------------------ jobs (picklable, for core.parallel.run_calls)

REGIMES = ("fixed", "random", "fixed_pretrained", "random_pretrained")


def _real(images_u8: torch.Tensor, mean, std) -> torch.Tensor:
    return to_float(images_u8, mean, std)


def pretrain_job(
    seed: int,
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    mean,
    std,
    steps: int,
    batch: int = 128,
    lr: float = 1e-3,
    arch: str = "lenet",
    init: str = "xavier",
    device: str = "cpu",
) -> Params:
    """One network of a pre-trained pool: ``steps`` Adam steps from the seeded ``init`` on the given data
    (on ``device``)."""
    net = classifier(seed, arch, None, init)
    return fit(net, U.initial_params(net), _real(images_u8, mean, std), labels, steps, batch, lr, seed, device)


def sampler_for(
    regime: str,
    *,
    pool: Sequence[Params] | None = None,
    fixed_seed: int = 0,
    init: str = "xavier",
    arch: str = "lenet",
    seed: int = 0,
) -> Sampler:
    """p(theta_0) of the notes' four regimes: one fixed random init, fresh random inits, one fixed pre-trained
    network (``pool[0]``), or a random member of the pre-trained ``pool``."""
    if regime == "fixed":
        return fixed_init(U.initial_params(classifier(fixed_seed, arch, None, init)))
    if regime == "random":
        return random_init(arch, None, init, seed)
    if regime in ("fixed_pretrained", "random_pretrained"):
        if not pool:
            raise ValueError(f"regime {regime!r} needs a pool of pre-trained networks")
        return pool_init(pool[:1] if regime == "fixed_pretrained" else pool, seed)
    raise ValueError(f"regime must be one of {REGIMES}, got {regime!r}")


def distill_job(
    regime: str,
    cfg: dict,
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    mean,
    std,
    *,
    pool: Sequence[Params] | None = None,
    fixed_seed: int = 0,
    init: str = "xavier",
    arch: str = "lenet",
    poison: tuple[int, int] | None = None,
    device: str = "cpu",
) -> DDResult:
    """One DD / SLDD / poisoning run under a regime, from picklable arguments (``poison = (K, T)``), on
    ``device``."""
    c = DDConfig(**cfg)
    sampler = sampler_for(regime, pool=pool, fixed_seed=fixed_seed, init=init, arch=arch, seed=c.seed)
    relabel = None if poison is None else (lambda y: poison_map(y, *poison))
    return distill(classifier(0, arch), sampler, _real(images_u8, mean, std), labels, c, relabel=relabel, device=device)


def eval_thetas(
    arch: str,
    thetas: Sequence[Params],
    x: torch.Tensor,
    targets: torch.Tensor,
    lrs: torch.Tensor,
    steps: int,
    epochs: int,
    x_test: torch.Tensor,
    y_test: torch.Tensor,
) -> list[float]:
    """Test accuracy after the distilled schedule from each theta_0 in ``thetas`` (unseen inits / networks)."""
    net = classifier(0, arch)
    return [accuracy(net, train_with(net, th, x, targets, lrs, steps, epochs), x_test, y_test) for th in thetas]


def best_constant_lr(
    arch: str,
    thetas: Sequence[Params],
    x: torch.Tensor,
    targets: torch.Tensor,
    steps: int,
    epochs: int,
    x_val: torch.Tensor,
    y_val: torch.Tensor,
    grid: Sequence[float],
) -> float:
    """The baselines' step size: the constant rate of ``grid`` with the best mean validation accuracy (DD's
    baselines train with the same number of steps; their rate is tuned, not learned)."""
    if not grid:
        raise ValueError("empty learning-rate grid")
    n = steps * epochs
    scores = [
        sum(eval_thetas(arch, thetas, x, targets, torch.full((n,), float(lr)), steps, epochs, x_val, y_val))
        for lr in grid
    ]
    return float(grid[max(range(len(grid)), key=scores.__getitem__)])


def class_cyclic(images: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A set reordered class-cyclically (0, 1, ..., C-1, 0, 1, ...), the layout of the distilled sets, so that
    DD's per-step batches of a real baseline hold one image of each class."""
    rank = torch.zeros_like(labels)
    for c in labels.unique():
        m = labels == c
        rank[m] = torch.arange(int(m.sum()))
    order = torch.argsort(rank * (int(labels.max()) + 1) + labels)
    return images[order], labels[order]


def baseline_accuracies(
    arch: str,
    sets: dict,
    candidates: Sequence,
    tune: Sequence[Params],
    thetas: Sequence[Params],
    steps: int,
    epochs: int,
    x_val: torch.Tensor,
    y_val: torch.Tensor,
    x_test: torch.Tensor,
    y_test: torch.Tensor,
    grid: Sequence[float],
) -> dict:
    """DD's baselines (Wang et al. 2018, "Baselines": random real, k-means, average real, optimised real) from
    each theta_0 in ``thetas``. Every set of ``sets`` (``{name: set with .images / .labels}``) is reordered
    class-cyclically and trained by the ``steps x epochs`` GD steps at the best constant rate of ``grid`` on
    the validation split (tuned from ``tune``, :func:`best_constant_lr`); "optimised real" is the best of
    ``candidates`` on validation at random real's rate. Returns ``{name: (test accuracy per theta_0, rate)}``."""
    out, lr_rand = {}, None
    for name, s in sets.items():
        x, y = class_cyclic(s.images, s.labels)
        lr = best_constant_lr(arch, tune, x, y, steps, epochs, x_val, y_val, grid)
        lr_rand = lr if name == "random real" else lr_rand
        out[name] = (
            eval_thetas(arch, thetas, x, y, torch.full((steps * epochs,), lr), steps, epochs, x_test, y_test),
            lr,
        )
    if candidates:
        if lr_rand is None:
            raise ValueError("'optimised real' uses random real's rate: include a 'random real' set")
        lrs = torch.full((steps * epochs,), lr_rand)
        val = [
            sum(v) / len(v)
            for v in (
                eval_thetas(arch, tune, *class_cyclic(c.images, c.labels), lrs, steps, epochs, x_val, y_val)
                for c in candidates
            )
        ]
        best = candidates[max(range(len(val)), key=val.__getitem__)]
        out["optimised real"] = (
            eval_thetas(arch, thetas, *class_cyclic(best.images, best.labels), lrs, steps, epochs, x_test, y_test),
            lr_rand,
        )
    return out
