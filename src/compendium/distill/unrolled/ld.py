"""Label distillation (LD): Bohdal, Yang & Hospedales 2020, "Flexible Dataset Distillation: Learn Labels
Instead of Images" (the reading notes' "Flexible DD / Label Distillation" section). The images are fixed
real *base* examples (possibly from another dataset); only their labels, distributions over the target
task's C classes, are learned so that a model trained on (base images, labels) does well on the target task.

Two meta-learners, both *online* (the model trains alongside the labels, no long inner loop):

* :func:`distill_second_order` (the paper's Sec. 3.1, eq. 1, notes "Second-order version"): one (or a
  few) differentiable SGD step(s) of the model on a base minibatch with the current labels
  (:func:`compendium.distill.unrolled.unroll.unroll`), the real target-batch loss of the stepped weights,
  back-propagated to the labels; then the model itself takes a step on the base minibatch.
* :func:`distill_rr` (Algorithm 1 of the notes, "Label distillation with ridge regression"): a feature
  extractor Theta and a closed-form ridge-regression (RR) head. Per step, the local head W_l solves RR on
  the base minibatch's features and current labels (eq. 3, :func:`ridge_solve`); the global head takes a
  pseudo-gradient step W <- (1 - alpha) W + alpha W_l (:func:`pseudo_gradient_update`); the target-batch
  loss of ``features(target) @ W`` is back-propagated *through the closed-form solve* to the labels
  (line 11), and Theta takes a step on the base minibatch's loss under the current labels (line 12).

Both reset the model when the target loss stops improving (lines 13-16, "overfitting detection"):
:class:`OverfitDetector` smooths the target loss over ``window`` steps and fires after ``patience``
steps without a new minimum; the model (and W) are re-initialised and the "time to overfit" T_i (steps
from the reset to the best smoothed loss) is recorded.

Conventions (the authors' released code, read not copied): base minibatch N_i = 50 of N = 100 base
examples, RR ridge lambda = 1 on features with a bias column in the dual (kernel) form, alpha = 0.01,
a learned scalar calibration of the RR logits (the code's ``AdjustLayer``), Adam for labels and model,
labels initialised uniform (1/C). Labels are parameterised here as logits whose softmax is the label
distribution (the brief's choice; the code clamps to [0, 1] and renormalises after each Adam step); both
keep every row a valid distribution. The code tracks the moving average of the target *error* over 50
steps with patience 50; here the target *loss*, with ``window`` and ``patience`` as parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from compendium.core.probe import to_float
from compendium.distill.coresets import random_indices
from compendium.distill.networks import build_network
from compendium.distill.sets import DistilledSet, measure
from compendium.distill.unrolled.unroll import initial_params, outer_loss, soft_cross_entropy, unroll

# ----------------------------------------------------------------------------------------------------
# small pure pieces (each unit-tested)
# ----------------------------------------------------------------------------------------------------


def add_bias(features: torch.Tensor) -> torch.Tensor:
    """``[n, d]`` features with a column of ones appended (the RR head's bias)."""
    return torch.cat([features, features.new_ones(features.shape[0], 1)], 1)


def ridge_solve(features: torch.Tensor, targets: torch.Tensor, lam: float = 1.0) -> torch.Tensor:
    """Closed-form ridge regression (the paper's eq. 3): W = argmin ||Phi W - Y||^2 + lam ||W||^2
    = Phi^T (Phi Phi^T + lam I)^-1 Y, the dual (kernel) form, cheap for a small minibatch (n << d).
    ``features`` Phi ``[n, d]`` (append the bias column first, :func:`add_bias`), ``targets`` Y ``[n, C]``;
    returns ``[d, C]``, differentiable in both."""
    if features.ndim != 2 or targets.ndim != 2 or features.shape[0] != targets.shape[0]:
        raise ValueError(
            f"features [n, d] and targets [n, C] expected, got {tuple(features.shape)} and {tuple(targets.shape)}"
        )
    if not lam > 0:
        raise ValueError(f"the ridge lambda must be > 0, got {lam}")
    n = features.shape[0]
    K = features @ features.T + lam * torch.eye(n, dtype=features.dtype, device=features.device)
    return features.T @ torch.linalg.solve(K, targets)


def pseudo_gradient_update(W: torch.Tensor, W_local: torch.Tensor, alpha: float) -> torch.Tensor:
    """Algorithm 1 line 10: W <- (1 - alpha) W + alpha W_l (the global head moves towards the
    minibatch's RR solution; ``W`` is treated as a constant, gradients flow through ``W_local``)."""
    if not 0 < alpha <= 1:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    if W.shape != W_local.shape:
        raise ValueError(f"W {tuple(W.shape)} and W_l {tuple(W_local.shape)} differ in shape")
    return (1 - alpha) * W.detach() + alpha * W_local


def rr_logits(features: torch.Tensor, W: torch.Tensor, scale: torch.Tensor | float = 1.0) -> torch.Tensor:
    """Logits of the RR head: ``scale * [features, 1] @ W`` (``scale``: the learned calibration)."""
    return scale * (add_bias(features) @ W)


def label_distribution(logits: torch.Tensor) -> torch.Tensor:
    """The labels as distributions over the classes (rows >= 0 summing to 1): softmax of the logits."""
    return F.softmax(logits, 1)


def uniform_logits(n: int, num_classes: int) -> torch.Tensor:
    """Logits of uniform labels 1/C (Algorithm 1 line 3)."""
    return torch.zeros(n, num_classes)


@dataclass
class OverfitDetector:
    """Overfitting detection (Algorithm 1 lines 13-16; notes: "measure the moving average of target
    problem accuracy, and when it has not improved for set number of iterations, reset the model").

    :meth:`update` takes the target loss of a step. The loss is averaged over the last ``window`` steps
    since the last reset; once the window is full, a smoothed value below the best so far is a new
    minimum, otherwise a non-improving step. After ``patience`` consecutive non-improving steps it fires
    (returns True), records T_i = the number of steps from the reset to the best smoothed loss in
    ``times``, and restarts its own statistics (the caller re-initialises the model)."""

    patience: int
    window: int = 1
    times: list = field(default_factory=list)
    _values: list = field(default_factory=list, repr=False)
    _best: float = math.inf
    _best_step: int = 0
    _since_best: int = 0

    def __post_init__(self) -> None:
        if self.patience < 1 or self.window < 1:
            raise ValueError(f"patience and window must be >= 1, got {self.patience}, {self.window}")

    @property
    def steps(self) -> int:
        """Steps since the last reset."""
        return len(self._values)

    def restart(self) -> None:
        self._values, self._best, self._best_step, self._since_best = [], math.inf, 0, 0

    def update(self, value: float) -> bool:
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"non-finite target loss {value}")
        self._values.append(value)
        if len(self._values) < self.window:
            return False
        smoothed = sum(self._values[-self.window :]) / self.window
        if smoothed < self._best:
            self._best, self._best_step, self._since_best = smoothed, len(self._values), 0
            return False
        self._since_best += 1
        if self._since_best < self.patience:
            return False
        self.times.append(self._best_step)
        self.restart()
        return True


def reset_seed(seed: int, resets: int) -> int:
    """The initialisation seed of the model after ``resets`` resets (a fresh draw of p(Theta) each time)."""
    return seed * 7919 + resets


def init_rr_model(
    in_channels: int,
    image_size: int,
    num_classes: int,
    seed: int,
    resets: int = 0,
    arch: str = "lenet",
    arch_kwargs: dict | None = None,
) -> tuple[nn.Module, torch.Tensor, torch.Tensor]:
    """A fresh RR learner (Algorithm 1 lines 4-5 and 14-15): feature extractor Theta ~ p(Theta) (seeded by
    ``seed`` and the reset count), the calibration scale 1 (learnable) and the global head W = 0
    ``[feature_dim + 1, C]``."""
    theta = build_network(in_channels, image_size, None, reset_seed(seed, resets), arch, arch_kwargs)
    return theta, torch.ones((), requires_grad=True), torch.zeros(theta.feature_dim + 1, num_classes)


def second_order_target_loss(
    net: nn.Module,
    params: dict,
    x_base: torch.Tensor,
    p_base: torch.Tensor,
    x_target: torch.Tensor,
    y_target: torch.Tensor,
    lrs: torch.Tensor,
) -> torch.Tensor:
    """The paper's eq. 1 objective: Theta' = Theta - lr grad L(f_Theta(x~), y~) (``len(lrs)`` steps on the
    base batch with labels ``p_base``, differentiable), then L(f_Theta'(x), y) on the target batch."""
    return second_order_step(net, params, x_base, p_base, x_target, y_target, lrs)[0]


def second_order_step(
    net: nn.Module,
    params: dict,
    x_base: torch.Tensor,
    p_base: torch.Tensor,
    x_target: torch.Tensor,
    y_target: torch.Tensor,
    lrs: torch.Tensor,
) -> tuple[torch.Tensor, dict]:
    """:func:`second_order_target_loss` and, detached, the first inner step's gradient grad_Theta
    L(f_Theta(x~), y~): the gradient of the model's own step on the same minibatch and labels, so the
    meta-learner takes it from here instead of a second forward and backward pass. The first step is
    :func:`~compendium.distill.unrolled.unroll.unroll`'s (plain SGD, no momentum), written out."""
    names = list(params)
    flat = [params[k] if params[k].requires_grad else params[k].detach().requires_grad_() for k in names]
    base_loss = soft_cross_entropy(
        functional_call(net, {**dict(zip(names, flat)), **dict(net.named_buffers())}, (x_base,)), p_base
    )
    grads = torch.autograd.grad(base_loss, flat, create_graph=True)
    stepped = {k: p - lrs[0] * g for k, p, g in zip(names, flat, grads)}
    if len(lrs) > 1:
        stepped = unroll(net, stepped, [(x_base, p_base)] * (len(lrs) - 1), lrs[1:])
    return outer_loss(net, stepped, x_target, y_target), {k: g.detach() for k, g in zip(names, grads)}


# ----------------------------------------------------------------------------------------------------
# the two meta-learners
# ----------------------------------------------------------------------------------------------------


def _check(
    base_x: torch.Tensor,
    target_u8: torch.Tensor,
    target_y: torch.Tensor,
    num_classes: int,
    steps: int,
    inner_batch: int,
    target_batch: int,
) -> None:
    if not isinstance(base_x, torch.Tensor) or base_x.ndim != 4 or not base_x.is_floating_point():
        raise ValueError(
            f"base images must be normalised float [N, C, H, W], got {getattr(base_x, 'dtype', None)} "
            f"{tuple(getattr(base_x, 'shape', ()))}"
        )
    if not isinstance(target_u8, torch.Tensor) or target_u8.dtype != torch.uint8 or target_u8.ndim != 4:
        raise ValueError("target images must be a uint8 tensor [M, C, H, W]")
    if tuple(target_u8.shape[1:]) != tuple(base_x.shape[1:]):
        raise ValueError(
            f"base images {tuple(base_x.shape[1:])} and target images {tuple(target_u8.shape[1:])} differ in shape"
        )
    if target_y.dtype != torch.int64 or target_y.shape != (target_u8.shape[0],):
        raise ValueError(f"target labels must be int64 [{target_u8.shape[0]}]")
    if int(target_y.min()) < 0 or int(target_y.max()) >= num_classes:
        raise ValueError(f"target labels outside [0, {num_classes})")
    if steps < 1 or not 1 <= inner_batch <= base_x.shape[0] or not 1 <= target_batch <= target_u8.shape[0]:
        raise ValueError(
            f"need steps >= 1, 1 <= inner_batch <= {base_x.shape[0]} and 1 <= target_batch <= "
            f"{target_u8.shape[0]}; got {steps}, {inner_batch}, {target_batch}"
        )


def _result(
    base_x,
    label_logits,
    num_classes,
    mean,
    std,
    method,
    dataset,
    params,
    seed,
    cost,
    detector,
    trace,
    resets,
    source_index,
    drift,
) -> DistilledSet:
    soft = label_distribution(label_logits.detach()).float()
    return DistilledSet(
        base_x.detach().clone(),
        soft.argmax(1),
        num_classes,
        mean,
        std,
        method,
        dataset,
        {
            **params,
            "times_to_overfit": list(detector.times),
            "resets": resets,
            "target_loss": trace,
            "label_drift": drift,
        },
        seed,
        soft,
        cost.seconds,
        cost.peak_memory_bytes,
        source_index,
    )


def label_drift(label_logits: torch.Tensor, start: torch.Tensor) -> float:
    """How far the labels have moved from their initialisation: the mean total-variation distance between
    each base image's current label distribution and its initial one (0: unchanged, 1: disjoint). The
    paper's loop runs "while labels not converged" (Bohdal et al. 2020, Algorithm 1, line 2): this curve
    flattening is that convergence, whatever the resets of the model do to the target loss.

    Example:
        >>> z = uniform_logits(4, 10)
        >>> label_drift(z, label_distribution(z))
        0.0
    """
    with torch.no_grad():
        return float(0.5 * (label_distribution(label_logits) - start).abs().sum(1).mean())


def _trace(losses: list[float], points: int = 50) -> list[float]:
    """The target loss averaged over ``points`` equal chunks of the run (a compact learning curve)."""
    k = max(1, len(losses) // points)
    return [sum(losses[i : i + k]) / len(losses[i : i + k]) for i in range(0, len(losses), k)]


def distill_rr(
    base_x: torch.Tensor,
    target_u8: torch.Tensor,
    target_y: torch.Tensor,
    num_classes: int,
    mean,
    std,
    *,
    arch: str = "lenet",
    arch_kwargs: dict | None = None,
    steps: int = 300,
    inner_batch: int = 50,
    target_batch: int = 256,
    lam: float = 1.0,
    alpha: float = 0.01,
    label_lr: float = 0.01,
    model_lr: float = 1e-3,
    calib_lr: float = 0.01,
    patience: int = 50,
    window: int = 50,
    seed: int = 0,
    dataset: str = "fashion-mnist",
    source_index: torch.Tensor | None = None,
    device: str = "cpu",
) -> DistilledSet:
    """LD with the RR pseudo-gradient (the notes' Algorithm 1). ``base_x``: the N fixed base images
    (normalised float); ``target_u8`` / ``target_y``: the labelled target set (uint8, normalised batch by
    batch with ``mean`` / ``std``). Returns a :class:`DistilledSet` of the base images with the learned
    ``soft_labels`` (labels = their argmax) and, in ``params``, the times to overfit T_i, the number of
    resets, a compact target-loss curve and a compact :func:`label_drift` curve (the labels' convergence).
    The learner, the labels and the batches live on ``device`` (every draw on the CPU); the set on the CPU."""
    _check(base_x, target_u8, target_y, num_classes, steps, inner_batch, target_batch)
    for name, v in (("lam", lam), ("label_lr", label_lr), ("model_lr", model_lr), ("calib_lr", calib_lr)):
        if not v > 0:
            raise ValueError(f"{name} must be > 0, got {v}")
    if not 0 < alpha <= 1:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    n, c, h, _ = base_x.shape
    g = torch.Generator().manual_seed(seed)
    params = dict(
        variant="rr",
        arch=arch,
        arch_kwargs=dict(arch_kwargs or {}),
        steps=steps,
        inner_batch=inner_batch,
        target_batch=target_batch,
        lam=lam,
        alpha=alpha,
        label_lr=label_lr,
        model_lr=model_lr,
        patience=patience,
        window=window,
    )
    dev = torch.device(device)
    base_dev = base_x.to(dev)
    with measure() as cost:
        label_logits = uniform_logits(n, num_classes).to(dev).requires_grad_()
        label_opt = torch.optim.Adam([label_logits], lr=label_lr)
        start = label_distribution(label_logits.detach())
        resets = 0

        def fresh():  # Theta ~ p(Theta), W <- 0, calibration 1 (lines 4-5, 14-15)
            theta, scale, W = init_rr_model(c, h, num_classes, seed, resets, arch, arch_kwargs)
            theta, scale, W = theta.to(dev), scale.detach().to(dev).requires_grad_(), W.to(dev)
            opt = torch.optim.Adam(
                [{"params": theta.parameters(), "lr": model_lr}, {"params": [scale], "lr": calib_lr}]
            )
            return theta, scale, opt, W

        theta, scale, opt, W = fresh()
        detector = OverfitDetector(patience, window)
        losses, drift = [], []
        for _ in range(steps):
            idx = torch.randperm(n, generator=g)[:inner_batch]
            t_idx = torch.randint(len(target_y), (target_batch,), generator=g)
            x_b, x_t, y_t = base_dev[idx], to_float(target_u8[t_idx].to(dev), mean, std), target_y[t_idx].to(dev)
            p_b = label_distribution(label_logits)[idx]
            f_b = theta(x_b)
            W_l = ridge_solve(add_bias(f_b), p_b, lam)  # line 9 (eq. 3)
            W_new = pseudo_gradient_update(W, W_l, alpha)  # line 10
            with torch.no_grad():  # Theta learns from the base loss only; the labels' path needs no graph here
                f_t = theta(x_t)
            loss_t = F.cross_entropy(rr_logits(f_t, W_new, scale), y_t)
            # line 11: labels <- labels - beta grad_labels L_target (through the closed-form solve)
            label_opt.zero_grad(set_to_none=True)
            (label_logits.grad,) = torch.autograd.grad(loss_t, [label_logits], retain_graph=True)
            # line 12: Theta <- Theta - beta grad_Theta L(f_{W o Theta}(x~), y~) (labels fixed)
            loss_b = soft_cross_entropy(rr_logits(f_b, W_new, scale), p_b.detach())
            opt.zero_grad(set_to_none=True)
            loss_b.backward(inputs=list(theta.parameters()) + [scale])
            label_opt.step()
            opt.step()
            W = W_new.detach()
            losses.append(float(loss_t.detach()))
            drift.append(label_drift(label_logits, start))
            if detector.update(losses[-1]):  # lines 13-16
                resets += 1
                theta, scale, opt, W = fresh()
    return _result(
        base_x,
        label_logits.cpu(),
        num_classes,
        mean,
        std,
        "ld_rr",
        dataset,
        params,
        seed,
        cost,
        detector,
        _trace(losses),
        resets,
        source_index,
        _trace(drift),
    )


def distill_second_order(
    base_x: torch.Tensor,
    target_u8: torch.Tensor,
    target_y: torch.Tensor,
    num_classes: int,
    mean,
    std,
    *,
    arch: str = "lenet",
    arch_kwargs: dict | None = None,
    steps: int = 300,
    inner_batch: int = 50,
    target_batch: int = 256,
    inner_lr: float = 0.01,
    inner_steps: int = 1,
    label_lr: float = 0.01,
    model_lr: float = 1e-3,
    patience: int = 50,
    window: int = 50,
    seed: int = 0,
    dataset: str = "fashion-mnist",
    source_index: torch.Tensor | None = None,
    device: str = "cpu",
) -> DistilledSet:
    """Second-order LD (the paper's eq. 1; notes "Second-order version"). Per step: ``inner_steps``
    differentiable SGD steps (rate ``inner_lr``) of the current model on a base minibatch with the
    current labels, Theta' = Theta - inner_lr grad L(f_Theta(x~), y~) (through
    :func:`~compendium.distill.unrolled.unroll.unroll`); the labels step on grad_labels L(f_Theta'(x), y) of a real
    target batch; then the model steps (Adam) on the base minibatch with the (detached) labels. The model
    is reset by :class:`OverfitDetector` on the target loss. Returns a :class:`DistilledSet` as
    :func:`distill_rr` (run on ``device`` as it)."""
    _check(base_x, target_u8, target_y, num_classes, steps, inner_batch, target_batch)
    for name, v in (("inner_lr", inner_lr), ("label_lr", label_lr), ("model_lr", model_lr)):
        if not v > 0:
            raise ValueError(f"{name} must be > 0, got {v}")
    if inner_steps < 1:
        raise ValueError(f"inner_steps must be >= 1, got {inner_steps}")
    n, c, h, _ = base_x.shape
    g = torch.Generator().manual_seed(seed)
    params = dict(
        variant="second_order",
        arch=arch,
        arch_kwargs=dict(arch_kwargs or {}),
        steps=steps,
        inner_batch=inner_batch,
        target_batch=target_batch,
        inner_lr=inner_lr,
        inner_steps=inner_steps,
        label_lr=label_lr,
        model_lr=model_lr,
        patience=patience,
        window=window,
    )
    dev = torch.device(device)
    base_dev = base_x.to(dev)
    with measure() as cost:
        label_logits = uniform_logits(n, num_classes).to(dev).requires_grad_()
        label_opt = torch.optim.Adam([label_logits], lr=label_lr)
        start = label_distribution(label_logits.detach())
        resets = 0

        def fresh():
            net = build_network(c, h, num_classes, reset_seed(seed, resets), arch, arch_kwargs).to(dev)
            return net, torch.optim.Adam(net.parameters(), lr=model_lr)

        net, opt = fresh()
        lrs = torch.full((inner_steps,), float(inner_lr), device=dev)
        detector = OverfitDetector(patience, window)
        losses, drift = [], []
        for _ in range(steps):
            idx = torch.randperm(n, generator=g)[:inner_batch]
            t_idx = torch.randint(len(target_y), (target_batch,), generator=g)
            x_b, x_t, y_t = base_dev[idx], to_float(target_u8[t_idx].to(dev), mean, std), target_y[t_idx].to(dev)
            p_b = label_distribution(label_logits)[idx]
            loss_t, model_grads = second_order_step(net, initial_params(net), x_b, p_b, x_t, y_t, lrs)
            label_opt.zero_grad(set_to_none=True)
            (label_logits.grad,) = torch.autograd.grad(loss_t, [label_logits])
            label_opt.step()
            drift.append(label_drift(label_logits, start))
            # the model's own step on the base minibatch with the labels (the outer loop's model update): the
            # gradient of the inner step's loss, which is that step's (same weights, minibatch and labels)
            for k, p in net.named_parameters():
                p.grad = model_grads[k]
            opt.step()
            losses.append(float(loss_t.detach()))
            if detector.update(losses[-1]):
                resets += 1
                net, opt = fresh()
    return _result(
        base_x,
        label_logits.cpu(),
        num_classes,
        mean,
        std,
        "ld_second_order",
        dataset,
        params,
        seed,
        cost,
        detector,
        _trace(losses),
        resets,
        source_index,
        _trace(drift),
    )


# ----------------------------------------------------------------------------------------------------
# base sets and baselines
# ----------------------------------------------------------------------------------------------------


def base_examples(
    images_u8: torch.Tensor, labels: torch.Tensor, per_class: int, num_classes: int, mean, std, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A seeded class-balanced choice of ``per_class`` base images per source class (the code's
    ``balanced_source``): ``(normalised float images, their source labels, their indices)``."""
    idx = random_indices(labels, per_class, num_classes, seed)
    return to_float(images_u8[idx], mean, std), labels[idx].clone(), idx


def with_labels(dset: DistilledSet, labels: torch.Tensor, method: str, num_classes: int | None = None) -> DistilledSet:
    """The same base images with one-hot ``labels`` as their soft labels (the paper's baseline: true
    labels within a dataset, the source labels mapped k -> k across datasets)."""
    C = num_classes or dset.num_classes
    labels = labels.long()
    if labels.shape != (len(dset),) or int(labels.min()) < 0 or int(labels.max()) >= C:
        raise ValueError(f"need {len(dset)} labels in [0, {C})")
    return DistilledSet(
        dset.images,
        labels,
        C,
        dset.mean,
        dset.std,
        method,
        dset.dataset,
        {"labels": method},
        dset.seed,
        F.one_hot(labels, C).float(),
        0.0,
        0,
        dset.source_index,
    )


def relabelled(dset: DistilledSet, soft: torch.Tensor, method: str) -> DistilledSet:
    """The same base images with other soft labels (e.g. the learned ones of another run)."""
    return DistilledSet(
        dset.images,
        soft.argmax(1),
        dset.num_classes,
        dset.mean,
        dset.std,
        method,
        dset.dataset,
        dict(dset.params),
        dset.seed,
        soft.float(),
        dset.synthesis_seconds,
        dset.peak_memory_bytes,
        dset.source_index,
    )


def label_entropy(soft: torch.Tensor) -> torch.Tensor:
    """Entropy (nats) of each label distribution."""
    return -(soft * soft.clamp_min(1e-12).log()).sum(1)
