"""The shared evaluation of labeled dataset distillation: train a fresh student on a
:class:`~compendium.distill.sets.DistilledSet` and report its test accuracy.

One protocol for every method (the post-training protocol dominates the published numbers,
so every set goes through this one loop):

* student = ``models.build(arch)`` backbone + ``Linear(feature_dim, num_classes)``, initialised from the
  seed; optimiser AdamW or SGD, cosine / constant / step (DC: x0.1 at half) learning rate per step;
* augmentation on whole batches on the device: none, ``crop_flip`` (RandomCrop with zero-pixel padding +
  horizontal flip, as torchvision's ``RandomCrop(pad)`` before ``Normalize``), or ``dsa``: any callable
  ``augment(x, generator)`` on normalised images (a DSA module written elsewhere plugs in here);
  then mixup (one Beta(alpha, alpha) weight per batch, Zhang et al. 2018; alpha 0 = off);
* labels: ``hard`` (cross-entropy on the set's labels), ``soft`` (the set's stored soft labels:
  KL(p || softmax(z_s / T))), or ``teacher``: online relabelling as SRe2L / RDED / DWA evaluate:
  the teacher sees the SAME augmented and mixed batch as the student and
  the loss is KL(softmax(z_t / T) || softmax(z_s / T)) = ``kl_div(log_softmax(z_s/T), softmax(z_t/T))``,
  batch mean, optionally x T^2 (Hinton et al. 2015); teacher in eval mode by default;
* length: ``epochs`` (one epoch = one pass over a fresh permutation, the last batch partial, batches of
  ``min(batch_size, N)``: the papers' "400 epochs x batch 128" on 100 images is 400 steps of 100 images),
  or ``steps`` (a fixed number of optimiser steps; the index stream is a
  concatenation of fresh permutations cut into full batches, so every image is drawn equally often up to
  one, and a batch larger than the set holds repeats, each with its own augmentation);
* test accuracy of the final student (the honest number) and the best over the optional
  periodic evaluations (parity with the official validators, which print the best).

Accuracies are fractions in [0, 1]; :func:`evaluate_seeds` gives mean and *sample* std over seeds
(``evaluation.seed_summary``) and a percent cell text ``"82.3 ± 0.4"``. SLDD's metrics (Sucholutsky &
Schonlau 2021): the distillation ratio r_M (:func:`distillation_ratio`) and the A%
distillation size d_A (:func:`distillation_size`).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from compendium.core import augment as aug
from compendium.core import data
from compendium.core import models
from compendium.core.device import distributed_rank, pick_device, sync_buffers
from compendium.core.probe import seed_summary, to_float
from compendium.core.progress import Rate, say
from compendium.distill.sets import DistilledSet

OPTIMIZERS = ("adamw", "sgd")
SCHEDULES = ("cosine", "constant", "step")
AUGMENTATIONS = ("none", "crop_flip", "dsa")
LABEL_MODES = ("hard", "soft", "teacher")

Augment = Callable[[torch.Tensor, torch.Generator], torch.Tensor]


def crop_flip(dataset: str, image_size: int) -> dict:
    """``crop_padding`` and ``flip`` of the ``crop_flip`` augmentation for a dataset (:class:`EvalConfig`
    keys): a 4-px padded crop at 32 px and 2 px at 28 px, and no horizontal flip on digit datasets
    (:data:`compendium.core.data.DIGIT_DATASETS`)."""
    return {"crop_padding": 4 if image_size >= 32 else 2, "flip": dataset.lower() not in data.DIGIT_DATASETS}


@dataclass
class EvalConfig:
    """How a student is trained on a distilled set. Defaults: the Fashion-MNIST CPU protocol (Conv-3 width
    32, AdamW 1e-3 / wd 0.01, cosine, RandomCrop(pad 2) + flip)."""

    arch: str = "convnet"
    arch_kwargs: dict = field(default_factory=lambda: {"width": 32, "depth": 3, "norm": "instance"})
    epochs: int = 300
    steps: int | None = None  # fixed optimiser steps; replaces epochs when set
    batch_size: int = 64
    optimizer: str = "adamw"  # adamw | sgd
    lr: float = 1e-3
    weight_decay: float = 0.01
    momentum: float = 0.9  # sgd only
    schedule: str = "cosine"  # cosine | constant | step (x0.1 at half, DC)
    augmentation: str = "crop_flip"  # none | crop_flip | dsa
    crop_padding: int = 2  # RandomCrop padding in pixels (4 at 32 px, 2 at 28 px)
    flip: bool = True  # horizontal flip in crop_flip (off for digits, DSA's note)
    dsa: Augment | None = None  # augment(x, generator) -> x for augmentation 'dsa'
    mixup_alpha: float = 0.0  # 0 = off; DWA's CIFAR validator 0.8
    label_mode: str = "hard"  # hard | soft | teacher
    temperature: float = 1.0  # T of the soft / teacher KL (DWA CIFAR 30, ImageNet 20)
    t2_scale: bool = False  # multiply the KL by T^2 (DWA's Tiny validator does, CIFAR does not)
    teacher_train_mode: bool = False  # True: teacher BN on batch statistics (DWA's CIFAR validator)
    eval_every: int = 0  # test every k epochs (steps mode: k * ceil(N / batch) steps); 0 = end only
    eval_every_steps: int = 0  # or every k optimiser steps
    eval_batch_size: int = 1024
    channels_last: bool = True  # NHWC convolutions (faster on CPU for the ConvNets)
    device: str = "auto"  # auto: CUDA when present, else CPU

    def replace(self, **kw) -> "EvalConfig":
        return dataclasses.replace(self, **kw)

    def record(self) -> dict:
        """JSON-friendly settings (the DSA hook by its name), for result files."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["arch_kwargs"] = dict(self.arch_kwargs)
        d["dsa"] = None if self.dsa is None else getattr(self.dsa, "__name__", type(self.dsa).__name__)
        return d


def preset(name: str, **overrides) -> EvalConfig:
    """Named protocols: ``dc`` (DC/DSA: SGD 0.01, momentum 0.9, wd 5e-4, 300 epochs, batch 256, lr x0.1 at
    half, no augmentation, hard labels), ``dwa`` (DWA CIFAR validator, Table 6 + code: AdamW 1e-3, wd 0.01,
    cosine, 400 epochs, batch 128, crop + flip, mixup 0.8, online teacher at T = 30) and ``dwa_steps`` (the
    same with a fixed 3000 steps of batch 64)."""
    base = {
        "dc": dict(
            optimizer="sgd",
            lr=0.01,
            momentum=0.9,
            weight_decay=5e-4,
            epochs=300,
            batch_size=256,
            schedule="step",
            augmentation="none",
            label_mode="hard",
        ),
        "dwa": dict(
            optimizer="adamw",
            lr=1e-3,
            weight_decay=0.01,
            epochs=400,
            batch_size=128,
            schedule="cosine",
            augmentation="crop_flip",
            mixup_alpha=0.8,
            label_mode="teacher",
            temperature=30.0,
        ),
        "dwa_steps": dict(
            optimizer="adamw",
            lr=1e-3,
            weight_decay=0.01,
            steps=3000,
            batch_size=64,
            schedule="cosine",
            augmentation="crop_flip",
            mixup_alpha=0.8,
            label_mode="teacher",
            temperature=30.0,
        ),
    }
    if name not in base:
        raise ValueError(f"unknown evaluation preset {name!r}; known: {sorted(base)}")
    return EvalConfig(**{**base[name], **overrides})


# --- checks -------------------------------------------------------------------------------------------


def validate_config(cfg: EvalConfig) -> None:
    """Every setting in range, or a ValueError naming it (before any training)."""
    if cfg.arch not in models.BACKBONES:
        raise ValueError(f"unknown arch {cfg.arch!r}; known: {sorted(models.BACKBONES)}")
    if cfg.optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {cfg.optimizer!r}; known: {OPTIMIZERS}")
    if cfg.schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {cfg.schedule!r}; known: {SCHEDULES}")
    if cfg.augmentation not in AUGMENTATIONS:
        raise ValueError(f"unknown augmentation {cfg.augmentation!r}; known: {AUGMENTATIONS}")
    if cfg.augmentation == "dsa" and not callable(cfg.dsa):
        raise ValueError("augmentation 'dsa' needs cfg.dsa = augment(x, generator)")
    if cfg.label_mode not in LABEL_MODES:
        raise ValueError(f"unknown label mode {cfg.label_mode!r}; known: {LABEL_MODES}")
    if cfg.steps is not None and cfg.steps < 1:
        raise ValueError(f"steps must be >= 1 (or None for epochs), got {cfg.steps}")
    if cfg.steps is None and cfg.epochs < 1:
        raise ValueError(f"epochs must be >= 1, got {cfg.epochs}")
    for name in ("batch_size", "eval_batch_size"):
        if getattr(cfg, name) < 1:
            raise ValueError(f"{name} must be >= 1, got {getattr(cfg, name)}")
    for name in ("eval_every", "eval_every_steps", "crop_padding"):
        if getattr(cfg, name) < 0:
            raise ValueError(f"{name} must be >= 0, got {getattr(cfg, name)}")
    if cfg.eval_every and cfg.eval_every_steps:
        raise ValueError("set eval_every (epochs) or eval_every_steps, not both")
    if not cfg.lr > 0 or cfg.weight_decay < 0 or not 0 <= cfg.momentum < 1:
        raise ValueError(
            f"need lr > 0, weight_decay >= 0, 0 <= momentum < 1; got {cfg.lr}, {cfg.weight_decay}, {cfg.momentum}"
        )
    if cfg.mixup_alpha < 0:
        raise ValueError(f"mixup_alpha must be >= 0, got {cfg.mixup_alpha}")
    if not cfg.temperature > 0:
        raise ValueError(f"temperature must be > 0, got {cfg.temperature}")


def _check_test(test_images_u8: torch.Tensor, test_labels: torch.Tensor, image_shape: tuple, num_classes: int):
    if not isinstance(test_images_u8, torch.Tensor) or test_images_u8.dtype != torch.uint8:
        got = getattr(test_images_u8, "dtype", type(test_images_u8))
        raise ValueError(f"test images must be a uint8 tensor, got {got}")
    if test_images_u8.ndim != 4 or tuple(test_images_u8.shape[1:]) != tuple(image_shape):
        raise ValueError(
            f"test images have shape {tuple(test_images_u8.shape)}, the training images "
            f"[N, {', '.join(map(str, image_shape))}]"
        )
    if test_labels.shape != (test_images_u8.shape[0],) or test_labels.dtype != torch.int64:
        raise ValueError(
            f"test labels must be int64 [{test_images_u8.shape[0]}], got {test_labels.dtype} {tuple(test_labels.shape)}"
        )
    if len(test_labels) == 0 or int(test_labels.min()) < 0 or int(test_labels.max()) >= num_classes:
        raise ValueError(f"test labels empty or outside [0, {num_classes})")


def _check_inputs(dset: DistilledSet, test_images_u8, test_labels, cfg: EvalConfig, teacher) -> None:
    validate_config(cfg)
    if not isinstance(dset, DistilledSet):
        raise ValueError(f"expected a DistilledSet, got {type(dset).__name__}")
    if cfg.label_mode == "teacher" and teacher is None:
        raise ValueError("label mode 'teacher' needs a teacher")
    if cfg.label_mode == "soft" and dset.soft_labels is None:
        raise ValueError(f"label mode 'soft' but the set {dset.method!r} has no soft labels (see relabel())")
    if cfg.label_mode == "teacher":
        _check_teacher(teacher, dset.images[:2], dset.num_classes)
    _check_test(test_images_u8, test_labels, tuple(dset.images.shape[1:]), dset.num_classes)


@torch.no_grad()
def _check_teacher(teacher, x: torch.Tensor, num_classes: int) -> None:
    """The teacher maps normalised images to ``[B, num_classes]`` logits (one eval-mode forward of two
    images on the teacher's own device; its mode is restored)."""
    if not isinstance(teacher, nn.Module):
        raise ValueError(f"the teacher must be an nn.Module mapping images to logits, got {type(teacher).__name__}")
    p = next(teacher.parameters(), None)
    was = teacher.training
    teacher.eval()
    try:
        out = teacher(x.to(p.device if p is not None else "cpu"))
    finally:
        teacher.train(was)
    if not isinstance(out, torch.Tensor) or out.shape != (x.shape[0], num_classes):
        raise ValueError(
            f"the teacher maps images to {tuple(getattr(out, 'shape', ()))}, expected [B, {num_classes}] logits"
        )


# --- pieces -------------------------------------------------------------------------------------------


def build_student(
    cfg: EvalConfig, image_shape: tuple[int, int, int], num_classes: int, seed: int | None = None
) -> nn.Sequential:
    """Backbone ``models.build(cfg.arch, in_channels, image_size, **arch_kwargs)`` + Linear head; the
    global RNG is seeded with ``seed`` first when given (the initialisation is the seed's)."""
    if cfg.arch not in models.BACKBONES:
        raise ValueError(f"unknown arch {cfg.arch!r}; known: {sorted(models.BACKBONES)}")
    c, h, w = image_shape
    if h != w:
        raise ValueError(f"square images expected, got {h}x{w}")
    if seed is not None:
        torch.manual_seed(seed)
    try:
        backbone = models.build(cfg.arch, **{"in_channels": c, "image_size": h, **cfg.arch_kwargs})
    except TypeError as e:  # unknown keyword for this architecture
        raise ValueError(f"bad arch_kwargs for {cfg.arch!r}: {e}") from e
    return nn.Sequential(backbone, nn.Linear(backbone.feature_dim, num_classes))


def batch_schedule(
    n: int, batch_size: int, generator: torch.Generator, epochs: int | None = None, steps: int | None = None
) -> Iterator[torch.Tensor]:
    """Index batches (CPU int64). ``epochs``: per epoch one fresh permutation cut into batches of
    ``batch_size`` (the last one partial), ``ceil(n / batch_size)`` steps per epoch. ``steps``: exactly
    ``steps`` batches of exactly ``batch_size`` from a stream of concatenated fresh permutations (no
    sampling with replacement: every index is drawn equally often up to one)."""
    if (epochs is None) == (steps is None):
        raise ValueError("give epochs or steps")
    if steps is None:
        for _ in range(epochs):
            perm = torch.randperm(n, generator=generator)
            yield from perm.split(batch_size)
        return
    pending = torch.empty(0, dtype=torch.int64)
    for _ in range(steps):
        if len(pending) < batch_size:
            need = -(-(batch_size - len(pending)) // n)
            pending = torch.cat([pending] + [torch.randperm(n, generator=generator) for _ in range(need)])
        yield pending[:batch_size]
        pending = pending[batch_size:]


def total_steps(n: int, cfg: EvalConfig) -> int:
    """The number of optimiser steps ``cfg`` takes on ``n`` images."""
    return cfg.steps if cfg.steps is not None else cfg.epochs * math.ceil(n / cfg.batch_size)


def lr_at(step: int, total: int, cfg: EvalConfig) -> float:
    """Learning rate of 0-based ``step``: cosine from lr to 0 over ``total`` steps, constant, or DC's
    x0.1 from half of the run on."""
    if cfg.schedule == "cosine":
        return cfg.lr * 0.5 * (1 + math.cos(math.pi * step / total))
    if cfg.schedule == "step":
        return cfg.lr * (0.1 if step >= total // 2 else 1.0)
    return cfg.lr


def pad_value(mean, std, device=None) -> torch.Tensor:
    """The normalised value of a black pixel per channel, ``[1, C, 1, 1]`` (what RandomCrop's zero
    padding becomes after Normalize)."""
    m = torch.as_tensor(mean, dtype=torch.float32, device=device).view(1, -1, 1, 1)
    s = torch.as_tensor(std, dtype=torch.float32, device=device).view(1, -1, 1, 1)
    return -m / s


def random_crop(
    x: torch.Tensor, padding: int, fill: torch.Tensor | float = 0.0, generator: torch.Generator | None = None
) -> torch.Tensor:
    """torchvision's ``RandomCrop(size, padding)`` for a whole batch: pad every side with ``fill`` and cut
    a window of the original size at a per-image uniform offset in [0, 2 * padding]; one gather."""
    if padding == 0:
        return x
    b, c, h, w = x.shape
    fill = torch.as_tensor(fill, dtype=x.dtype, device=x.device).reshape(1, -1, 1, 1)
    xp = F.pad(x - fill, (padding,) * 4) + fill
    oy = torch.randint(0, 2 * padding + 1, (b,), generator=generator, device=x.device)
    ox = torch.randint(0, 2 * padding + 1, (b,), generator=generator, device=x.device)
    rows = (oy[:, None] + torch.arange(h, device=x.device))[:, :, None]  # [b, h, 1]
    cols = (ox[:, None] + torch.arange(w, device=x.device))[:, None, :]  # [b, 1, w]
    out = xp[torch.arange(b, device=x.device)[:, None, None], :, rows, cols]  # [b, h, w, c]
    return out.permute(0, 3, 1, 2)


def mixup(
    x: torch.Tensor, alpha: float, rng: np.random.Generator, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor | None, float]:
    """Mixup (Zhang et al. 2018): ``lam x + (1 - lam) x[perm]`` with one ``lam ~ Beta(alpha, alpha)`` per
    batch, as the SRe2L / DWA validators. Returns ``(x_mixed, perm, lam)``; ``alpha = 0`` returns the batch
    itself, ``None`` and 1."""
    if alpha <= 0:
        return x, None, 1.0
    lam = float(rng.beta(alpha, alpha))
    perm = torch.randperm(x.shape[0], generator=generator, device=x.device)
    return lam * x + (1 - lam) * x[perm], perm, lam


def kd_loss(
    student_logits: torch.Tensor, target_probs: torch.Tensor, temperature: float = 1.0, t2_scale: bool = False
) -> torch.Tensor:
    """KL(p || softmax(z_s / T)), batch mean (``kl_div(log_softmax(z_s/T), p, 'batchmean')``), x T^2 when
    asked (Hinton et al. 2015 §2)."""
    loss = F.kl_div(F.log_softmax(student_logits / temperature, 1), target_probs, reduction="batchmean")
    return loss * temperature**2 if t2_scale else loss


@torch.no_grad()
def top1_accuracy(
    net: nn.Module,
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    mean,
    std,
    batch_size: int = 1024,
    device: str | torch.device = "cpu",
    channels_last: bool = False,
) -> float:
    """Top-1 accuracy of ``net`` in eval mode on uint8 images normalised with ``mean`` / ``std``."""
    was = net.training
    net.eval()
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    correct = torch.zeros((), dtype=torch.int64, device=device)
    for i in range(0, len(labels), batch_size):
        x = to_float(images_u8[i : i + batch_size].to(device), mean, std).contiguous(memory_format=fmt)
        correct += (net(x).argmax(1) == labels[i : i + batch_size].to(device)).sum()
    net.train(was)
    return int(correct) / len(labels)


# --- the training loop --------------------------------------------------------------------------------


def _fit(
    train_x: torch.Tensor,
    train_y: torch.Tensor,
    soft: torch.Tensor | None,
    num_classes: int,
    mean,
    std,
    test_images_u8: torch.Tensor,
    test_labels: torch.Tensor,
    cfg: EvalConfig,
    seed: int,
    teacher: nn.Module | None,
    return_model: bool,
    log: str,
) -> dict:
    """Train a fresh student on ``train_x`` (normalised float, or uint8 normalised batch by batch)."""
    device = pick_device(cfg.device)
    n = train_x.shape[0]
    rank, world = distributed_rank()
    if world > 1 and cfg.batch_size % world:
        raise ValueError(f"batch_size {cfg.batch_size} must divide into the {world} processes of the torchrun job")
    devices = []
    if device.type == "cuda":
        devices = [device.index if device.index is not None else torch.cuda.current_device()]
    with torch.random.fork_rng(devices=devices):  # the caller's global RNG is left as it was
        net = build_student(cfg, tuple(train_x.shape[1:]), num_classes, seed)
        nhwc = cfg.channels_last and models.channels_last_safe(net, train_x.shape[-1], device)
        fmt = torch.channels_last if nhwc else torch.contiguous_format
        net = net.to(device).to(memory_format=fmt)
        step_net = (
            net
            if world == 1
            else DistributedDataParallel(  # under torchrun: gradients averaged over ranks
                net, device_ids=[device.index] if device.type == "cuda" else None
            )
        )
        t_net = None
        if cfg.label_mode == "teacher":
            t_net = copy.deepcopy(teacher).to(device)  # never moves or mutates the caller's teacher
            for p in t_net.parameters():
                p.requires_grad_(False)
            t_net.train(cfg.teacher_train_mode)
        # fused kernels: one pass over all parameters (10-20% of a small student's CPU step)
        if cfg.optimizer == "adamw":
            opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, fused=True)
        else:
            opt = torch.optim.SGD(
                net.parameters(), lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay, fused=True
            )

        x_dev, y_dev = train_x.to(device), train_y.to(device)
        soft_dev = soft.to(device) if soft is not None else None
        fill = pad_value(mean, std, device)
        order = torch.Generator().manual_seed(seed)
        gen = torch.Generator(device=device).manual_seed(seed + 1 + 7919 * rank)  # each rank its own augmentations
        beta_rng = np.random.default_rng(seed + 2)
        total = total_steps(n, cfg)
        spe = math.ceil(n / cfg.batch_size)  # steps per epoch (one pass over the set)
        every = cfg.eval_every_steps or cfg.eval_every * spe
        history: list[dict] = []
        loss_sum, loss_n = torch.zeros((), device=device), 0
        train_seconds, step = 0.0, 0
        batches = batch_schedule(n, cfg.batch_size, order, epochs=None if cfg.steps else cfg.epochs, steps=cfg.steps)
        _sync(device)
        t0 = time.perf_counter()
        rate = Rate(total)
        net.train()
        for idx in batches:
            idx = idx[rank::world].to(device)  # every rank the same global batch order, its own slice of it
            x = x_dev[idx]
            x = x if x.is_floating_point() else to_float(x, mean, std)
            if cfg.augmentation == "crop_flip":
                x = random_crop(x, cfg.crop_padding, fill, gen)
                x = aug.horizontal_flip(x, 0.5, gen) if cfg.flip else x
            elif cfg.augmentation == "dsa":
                x = cfg.dsa(x, gen)
            x, perm, lam = mixup(x, cfg.mixup_alpha, beta_rng, gen)
            x = x.contiguous(memory_format=fmt)
            z = step_net(x)
            if cfg.label_mode == "hard":
                y = y_dev[idx]
                loss = F.cross_entropy(z, y)
                if perm is not None:
                    loss = lam * loss + (1 - lam) * F.cross_entropy(z, y[perm])
            elif cfg.label_mode == "soft":
                p = soft_dev[idx]
                p = p if perm is None else lam * p + (1 - lam) * p[perm]
                loss = kd_loss(z, p, cfg.temperature, cfg.t2_scale)
            else:
                with torch.no_grad():
                    p = F.softmax(t_net(x) / cfg.temperature, 1)
                loss = kd_loss(z, p, cfg.temperature, cfg.t2_scale)
            for group in opt.param_groups:
                group["lr"] = lr_at(step, total, cfg)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            loss_sum += loss.detach()
            loss_n += 1
            if (every and step % every == 0) or step == total:
                _sync(device)
                train_seconds += time.perf_counter() - t0
                sync_buffers(net)  # under torchrun: rank 0's BatchNorm statistics on every rank
                acc = top1_accuracy(net, test_images_u8, test_labels, mean, std, cfg.eval_batch_size, device, nhwc)
                rec = {"step": step, "epoch": step / spe, "train_loss": float(loss_sum) / loss_n, "test_acc": acc}
                history.append(rec)
                loss_sum, loss_n = torch.zeros((), device=device), 0
                if log and rank == 0:
                    say(
                        f"[{log}] step {step}/{total}  loss {rec['train_loss']:.4f}  test acc {acc:.4f}  "
                        f"{rate.update(step)}"
                    )
                _sync(device)
                t0 = time.perf_counter()
    best = max(history, key=lambda r: r["test_acc"])
    out = {
        "final_acc": history[-1]["test_acc"],
        "best_acc": best["test_acc"],
        "best_step": best["step"],
        "train_seconds": train_seconds,
        "steps": step,
        "epochs": step / spe,
        "final_loss": history[-1]["train_loss"],
        "history": history,
        "seed": seed,
        "arch": cfg.arch,
        "label_mode": cfg.label_mode,
        "n_train": n,
        "device": str(device),
    }
    if return_model:
        out["model"] = net.cpu().to(memory_format=torch.contiguous_format).eval()
    return out


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# --- public evaluation --------------------------------------------------------------------------------


def evaluate(
    dset: DistilledSet,
    test_images_u8: torch.Tensor,
    test_labels: torch.Tensor,
    cfg: EvalConfig,
    seed: int = 0,
    teacher: nn.Module | None = None,
    return_model: bool = False,
    log: str = "",
) -> dict:
    """Train a fresh student (seeded init, batch order, augmentation and mixup) on ``dset`` and test it.

    Returns ``final_acc`` and ``best_acc`` (fractions; best over the periodic evaluations and the final
    one), ``best_step``, ``train_seconds`` (optimisation only, test passes excluded), ``steps``,
    ``epochs`` (passes over the set), ``final_loss``, the ``history`` of evaluations and, with
    ``return_model``, the trained student (CPU, eval mode). Test images are uint8, normalised with the
    set's mean and std. Every bad input is a ValueError before training."""
    _check_inputs(dset, test_images_u8, test_labels, cfg, teacher)
    soft = dset.soft_labels if cfg.label_mode == "soft" else None
    return _fit(
        dset.images,
        dset.labels,
        soft,
        dset.num_classes,
        dset.mean,
        dset.std,
        test_images_u8,
        test_labels,
        cfg,
        seed,
        teacher,
        return_model,
        log,
    )


def cell_text(mean: float, std: float, n: int | None = None) -> str:
    """Percent, one decimal: ``'82.3 ± 0.4'``; a single run (``n`` 1) has no spread: ``'82.3'``."""
    if n == 1:
        return f"{100 * mean:.1f}"
    return f"{100 * mean:.1f} ± {100 * std:.1f}"


def evaluate_seeds(
    dset: DistilledSet,
    test_images_u8: torch.Tensor,
    test_labels: torch.Tensor,
    cfg: EvalConfig,
    seeds=(0, 1, 2),
    teacher: nn.Module | None = None,
    log: str = "",
) -> dict:
    """:func:`evaluate` once per seed. ``accs`` / ``best_accs`` per seed, their ``mean`` and ``std`` (the
    *sample* standard deviation, n - 1, over seeds: the spread of a new evaluation run; 0 for one seed),
    ``best_mean`` / ``best_std`` and ``cell_text`` (final accuracy, percent)."""
    seeds = tuple(seeds)
    if not seeds:
        raise ValueError("no seeds")
    _check_inputs(dset, test_images_u8, test_labels, cfg, teacher)
    runs = [evaluate(dset, test_images_u8, test_labels, cfg, s, teacher, log=log) for s in seeds]
    return _summary(runs, seeds)


def _summary(runs: list[dict], seeds) -> dict:
    accs = [r["final_acc"] for r in runs]
    best = [r["best_acc"] for r in runs]
    mean, std = seed_summary(accs)
    best_mean, best_std = seed_summary(best)
    return {
        "seeds": list(seeds),
        "accs": accs,
        "best_accs": best,
        "mean": mean,
        "std": std,
        "best_mean": best_mean,
        "best_std": best_std,
        "cell_text": cell_text(mean, std),
        "train_seconds": float(np.mean([r["train_seconds"] for r in runs])),
        "steps": runs[0]["steps"],
        "runs": runs,
    }


def whole_dataset_upper_bound(
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    test_images_u8: torch.Tensor,
    test_labels: torch.Tensor,
    cfg: EvalConfig,
    seed: int = 0,
    *,
    mean,
    std,
    num_classes: int | None = None,
    return_model: bool = False,
    log: str = "",
) -> dict:
    """The same student trained on the whole real training set (uint8, normalised batch by batch) with
    hard labels: the upper bound of every distilled set. ``cfg`` may be a cheaper one (fewer epochs);
    its label mode is forced to ``hard``."""
    cfg = cfg.replace(label_mode="hard")
    validate_config(cfg)
    if not isinstance(images_u8, torch.Tensor) or images_u8.dtype != torch.uint8 or images_u8.ndim != 4:
        raise ValueError("training images must be a uint8 tensor N x C x H x W")
    if labels.shape != (images_u8.shape[0],) or labels.dtype != torch.int64:
        raise ValueError(f"labels must be int64 [{images_u8.shape[0]}], got {labels.dtype} {tuple(labels.shape)}")
    num_classes = num_classes or int(labels.max()) + 1
    if int(labels.min()) < 0 or int(labels.max()) >= num_classes:
        raise ValueError(f"labels outside [0, {num_classes})")
    _check_test(test_images_u8, test_labels, tuple(images_u8.shape[1:]), num_classes)
    return _fit(
        images_u8,
        labels,
        None,
        num_classes,
        tuple(mean) if hasattr(mean, "__len__") else (mean,),
        tuple(std) if hasattr(std, "__len__") else (std,),
        test_images_u8,
        test_labels,
        cfg,
        seed,
        None,
        return_model,
        log,
    )


def distillation_ratio(acc: float, whole_acc: float) -> float:
    """SLDD's distillation ratio r_M = acc(M distilled samples) / acc(whole data), as a fraction (the
    paper prints 100 r_M %)."""
    if not whole_acc > 0:
        raise ValueError(f"whole-data accuracy must be > 0, got {whole_acc}")
    return acc / whole_acc


def distillation_size(sizes, accs, whole_acc: float, A: float) -> int | None:
    """SLDD's A% distillation size d_A: the smallest set size whose accuracy reaches ``A`` percent of the
    whole-data accuracy (``acc >= A / 100 * whole_acc``, up to 1e-12 so that rounding in the product does
    not decide); None when no size does. No interpolation. ``A`` is in percent (90, not 0.9)."""
    sizes, accs = list(sizes), list(accs)
    if len(sizes) != len(accs) or not sizes:
        raise ValueError(f"need as many accuracies as sizes (>= 1), got {len(sizes)} and {len(accs)}")
    if not A > 0:
        raise ValueError(f"A is a percentage > 0, got {A}")
    if not whole_acc > 0:
        raise ValueError(f"whole-data accuracy must be > 0, got {whole_acc}")
    reached = [s for s, a in zip(sizes, accs) if a >= A / 100 * whole_acc - 1e-12]
    return min(reached) if reached else None


def test_subset(images_u8: torch.Tensor, labels: torch.Tensor, n: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """The first ``n // C`` test images of every class, in their original order (``n`` 0 or >= the test set:
    all of it). A class-balanced, seed-free subset, so every stage tests on the same images; the cpu
    profile uses it to spend its time on training rather than on testing."""
    if n < 0:
        raise ValueError(f"test_n must be >= 0, got {n}")
    if n == 0 or n >= len(labels):
        return images_u8, labels
    C = int(labels.max()) + 1
    if n < C:
        raise ValueError(f"test_n = {n} is below the number of classes ({C})")
    keep = torch.zeros(len(labels), dtype=torch.bool)
    for c in range(C):
        keep[torch.nonzero(labels == c).flatten()[: n // C]] = True
    return images_u8[keep], labels[keep]


@torch.no_grad()
def relabel(
    dset: DistilledSet, teacher: nn.Module, T: float = 1.0, batch_size: int = 512, device: str = "auto"
) -> DistilledSet:
    """The same set with soft labels ``softmax(teacher(x) / T)`` on the un-augmented images (offline,
    FKD-style; for the ``soft`` mode and for storage). The teacher runs in eval mode on a copy."""
    if not T > 0:
        raise ValueError(f"temperature must be > 0, got {T}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    dev = pick_device(device)
    t_net = copy.deepcopy(teacher).to(dev).eval()
    logits = torch.cat(
        [t_net(dset.images[i : i + batch_size].to(dev)).float().cpu() for i in range(0, len(dset), batch_size)]
    )
    if logits.shape != (len(dset), dset.num_classes):
        raise ValueError(
            f"the teacher maps the set to {tuple(logits.shape)}, expected [{len(dset)}, {dset.num_classes}]"
        )
    return dset.with_soft_labels(F.softmax(logits / T, 1), f"teacher softmax, T={T}")
