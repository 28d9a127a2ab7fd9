"""Differentiable inner training, the mechanism shared by DD (Wang et al. 2018, Alg. 1 and its multi-step,
multi-epoch extension), soft-label DD (Sucholutsky & Schonlau), second-order label distillation (Bohdal
et al.), GTN (Such et al.) and Mnemonics (Liu et al.): T steps of SGD with momentum from given initial
weights, written with :func:`torch.func.functional_call` so that the trained weights are a
differentiable function of the distilled images, their (soft) labels and the learned step sizes.

* :func:`unroll` runs the steps; ``truncate`` back-propagates through the last k steps only (truncated
  back-propagation, the memory knob of DD's "back-gradient" and GTN), ``checkpoint`` recomputes each
  step in the backward pass instead of storing it (:mod:`torch.utils.checkpoint`).
* :func:`soft_cross_entropy`: cross-entropy against hard labels (int) or label distributions / logits
  (float), so one loss serves DD and its soft-label and label-distillation variants.
* :func:`outer_loss`: DD's objective, the real-data loss of the unrolled weights.

The network must not keep running statistics in the unrolled steps: use networks without BatchNorm (DD's
LeNet/AlexNet have none) or BatchNorm with ``track_running_stats=False``.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch import nn
from torch.func import functional_call
from torch.utils.checkpoint import checkpoint as _checkpoint

from compendium.core.losses import soft_cross_entropy

Params = dict[str, torch.Tensor]


def initial_params(model: nn.Module, requires_grad: bool = False) -> Params:
    """A detached copy of ``model``'s parameters (the theta_0 of one unroll)."""
    return {k: v.detach().clone().requires_grad_(requires_grad) for k, v in model.named_parameters()}


def check_no_running_stats(model: nn.Module) -> None:
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.track_running_stats:
            raise ValueError(
                f"{type(m).__name__} tracks running statistics; unrolled steps would mutate them "
                "(use track_running_stats=False or a network without BatchNorm)"
            )


def _step(model, names, buffers, loss_fn, lr, momentum, create_graph, x, y, *flat):
    """One SGD-with-momentum step on flat ``(params..., velocities...)``; returns the new flat tuple."""
    n = len(names)
    params, vel = flat[:n], flat[n:]
    loss = loss_fn(functional_call(model, ({**dict(zip(names, params)), **buffers}), (x,)), y)
    grads = torch.autograd.grad(loss, params, create_graph=create_graph)
    new_v = tuple(momentum * v + g for v, g in zip(vel, grads))
    new_p = tuple(p - lr * v for p, v in zip(params, new_v))
    return new_p + new_v


def unroll(
    model: nn.Module,
    params: Params,
    batches: Sequence[tuple[torch.Tensor, torch.Tensor]],
    lrs: torch.Tensor,
    loss_fn: Callable = soft_cross_entropy,
    momentum: float | torch.Tensor = 0.0,
    truncate: int | None = None,
    checkpoint: bool = False,
) -> Params:
    """Train ``model`` functionally from ``params`` through ``len(batches)`` SGD steps, step t on
    ``batches[t]`` with learning rate ``lrs[t]`` (DD: one learned rate per step and epoch) and momentum
    (a float or a learned scalar, GTN). Gradients flow to the batches, the labels, ``lrs``, ``momentum``
    and ``params``; with ``truncate = k`` only through the last k steps (the weights before them are
    detached), with ``checkpoint`` each step is recomputed in the backward pass."""
    check_no_running_stats(model)
    if lrs.dim() != 1 or lrs.shape[0] != len(batches):
        raise ValueError(f"one learning rate per step: {len(batches)} steps, lrs of shape {tuple(lrs.shape)}")
    if truncate is not None and not 1 <= truncate <= len(batches):
        raise ValueError(f"truncate must be in [1, {len(batches)}], got {truncate}")
    names = list(params)
    buffers = dict(model.named_buffers())
    # weights that do not require grad become leaves that do (the step differentiates the loss by them)
    flat = tuple(params[k] if params[k].requires_grad else params[k].detach().requires_grad_() for k in names)
    flat = flat + tuple(torch.zeros_like(params[k]) for k in names)
    start_grad = len(batches) - (truncate or len(batches))
    for t, (x, y) in enumerate(batches):
        if t == start_grad and truncate is not None:
            flat = tuple(f.detach().requires_grad_(i < len(names)) for i, f in enumerate(flat))
        graph = t >= start_grad
        if checkpoint and graph:
            flat = _checkpoint(
                _step, model, names, buffers, loss_fn, lrs[t], momentum, True, x, y, *flat, use_reentrant=False
            )
        else:
            flat = _step(model, names, buffers, loss_fn, lrs[t], momentum, graph, x, y, *flat)
            if not graph:
                flat = tuple(f.detach().requires_grad_(i < len(names)) for i, f in enumerate(flat))
    return dict(zip(names, flat[: len(names)]))


def outer_loss(
    model: nn.Module, params: Params, x_real: torch.Tensor, y_real: torch.Tensor, loss_fn: Callable = soft_cross_entropy
) -> torch.Tensor:
    """DD's outer objective: the loss of the unrolled weights on real data."""
    return loss_fn(functional_call(model, ({**params, **dict(model.named_buffers())}), (x_real,)), y_real)


def dd_batches(
    x_syn: torch.Tensor, y_syn: torch.Tensor, steps: int, epochs: int = 1
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """DD's schedule: the distilled set split into ``steps`` equal batches, cycled for ``epochs`` epochs
    (``steps * epochs`` inner steps, each with its own learning rate)."""
    if x_syn.shape[0] % steps:
        raise ValueError(f"{x_syn.shape[0]} distilled images do not split into {steps} equal batches")
    xs, ys = x_syn.chunk(steps), y_syn.chunk(steps)
    return [(xs[s], ys[s]) for _ in range(epochs) for s in range(steps)]
