"""Generative Teaching Networks (Such, Rawal, Lehman, Stanley & Clune, ICML 2020; the reading notes' GTN
section).

A generator G(z, y) writes training images for a learner; it is meta-trained so that a *freshly
initialised* learner, trained for T SGD-with-momentum steps on G's batches only, does well on real data
(the notes' two nested loops). Pieces, each a small function or module:

* :class:`WNLinear`: weight normalisation W = g V / ||V|| (Salimans & Kingma 2016; the notes' "WN"),
  one g per output row; :func:`weight_norm_learner` puts the same on a learner's conv / linear layers
  (``torch.nn.utils.parametrizations.weight_norm``), so that the inner SGD updates g and V.
* :class:`Generator`: an MLP on ``[z, onehot(y)]`` -> a 28x28 image in the dataset's normalised space
  (sigmoid pixels, then (p - mean) / std), WN on its layers or not. GTN's MNIST generator is a
  two-layer FC + two-layer deconvolution net; an MLP keeps the CPU profile cheap.
* :class:`Curriculum`: the generator's inputs for the T inner steps (paper Sec. 3.2, "learning a
  curriculum"): ``full`` learned z_t presented in order; ``shuffled_batch`` the learned batches in a
  random order; ``shuffled`` all learned (z, y) pairs shuffled across the batches ("all shuffled");
  ``noise`` fresh Gaussian z every step (no learned inputs). Labels: every batch class-balanced.
* :class:`GTN`: generator + curriculum + the learned inner learning rate and momentum (paper Sec. 3:
  "meta-learn the inner-loop SGD learning rate and momentum"), lr = exp(log_lr) > 0, momentum =
  sigmoid(m_raw) in (0, 1).
* :func:`meta_step`: one outer step (Alg. 1 of the paper's SM): a fresh learner (random seed, an
  architecture drawn from a pool: learner-agnostic data), T unrolled steps through
  :func:`compendium.distill.unrolled.unroll.unroll` (``momentum`` learned; ``truncate`` / ``checkpoint`` as the
  paper's gradient checkpointing), the real-batch loss, Adam on everything.
* :func:`meta_train` (a seeded run with its meta-loss curve and divergence count) and
  :func:`train_learner` / :func:`test_accuracy` (fresh learners trained on the curriculum or on real
  batches with plain ``torch.optim.SGD``, the same update as the unroll).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from compendium.core import plateau
from compendium.core.probe import to_float
from compendium.core.progress import Rate, say
from compendium.distill.networks import build_network
from compendium.distill.unrolled import unroll as U

CURRICULA = ("full", "shuffled_batch", "shuffled", "noise")


# --- weight normalisation ---------------------------------------------------------------------------


class WNLinear(nn.Module):
    """A linear layer with W = g V / ||V|| row-wise (``g`` [out, 1], ``v`` [out, in]); initialised so that
    W equals a default-initialised ``nn.Linear`` (g = ||V|| per row)."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        ref = nn.Linear(in_features, out_features)
        self.v = nn.Parameter(ref.weight.detach().clone())
        self.g = nn.Parameter(ref.weight.detach().norm(dim=1, keepdim=True))
        self.bias = nn.Parameter(ref.bias.detach().clone())

    @property
    def weight(self) -> torch.Tensor:
        return wn_weight(self.g, self.v)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight, self.bias)


def wn_weight(g: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """W = g V / ||V||, the norm over every dimension but the first (one g per output unit)."""
    return g * v / v.flatten(1).norm(dim=1).view(-1, *([1] * (v.dim() - 1)))


def weight_norm_learner(net: nn.Module) -> nn.Module:
    """WN on every Conv2d / Linear of ``net`` (in place; the effective weights are unchanged at init)."""
    from torch.nn.utils.parametrizations import weight_norm

    for m in list(net.modules()):
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            weight_norm(m)
    return net


# --- generator and curriculum -----------------------------------------------------------------------


class Generator(nn.Module):
    """G(z, y): ``[z, onehot(y)]`` -> hidden (LeakyReLU) -> hidden -> C*H*W pixels in (0, 1) (sigmoid),
    returned normalised, (p - mean) / std, as every distilled set here."""

    def __init__(
        self,
        noise_dim: int = 32,
        num_classes: int = 10,
        hidden: int = 256,
        image_shape=(1, 28, 28),
        mean=(0.2860,),
        std=(0.3530,),
        weight_norm: bool = True,
    ):
        super().__init__()
        self.noise_dim, self.num_classes, self.image_shape = noise_dim, num_classes, tuple(image_shape)
        lin = WNLinear if weight_norm else nn.Linear
        out = math.prod(self.image_shape)
        self.layers = nn.ModuleList([lin(noise_dim + num_classes, hidden), lin(hidden, hidden), lin(hidden, out)])
        c = self.image_shape[0]
        self.register_buffer(
            "mean", torch.as_tensor(mean, dtype=torch.float32).view(1, -1, 1, 1).expand(1, c, 1, 1).clone()
        )
        self.register_buffer(
            "std", torch.as_tensor(std, dtype=torch.float32).view(1, -1, 1, 1).expand(1, c, 1, 1).clone()
        )

    def forward(self, z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        h = torch.cat([z, F.one_hot(y, self.num_classes).to(z.dtype)], 1)
        for layer in self.layers[:-1]:
            h = F.leaky_relu(layer(h), 0.1)
        pixels = torch.sigmoid(self.layers[-1](h)).view(-1, *self.image_shape)
        return (pixels - self.mean) / self.std


def balanced_labels(steps: int, batch_size: int, num_classes: int) -> torch.Tensor:
    """``[steps, batch_size]`` labels, every batch ``batch_size / num_classes`` images per class."""
    if batch_size % num_classes:
        raise ValueError(f"batch_size {batch_size} is not a multiple of the {num_classes} classes")
    return (torch.arange(batch_size) % num_classes).repeat(steps, 1)


class Curriculum(nn.Module):
    """The generator's inputs (z_t, y_t) for T inner steps. ``full``: learned z_t in order; ``shuffled_batch``:
    the learned batches in a random order; ``shuffled``: every learned (z, y) pair at a random place;
    ``noise``: fresh N(0, 1) z every step (no parameters). The order / the noise come from ``generator``."""

    def __init__(
        self, steps: int, batch_size: int, noise_dim: int, num_classes: int = 10, mode: str = "full", seed: int = 0
    ):
        super().__init__()
        if mode not in CURRICULA:
            raise ValueError(f"unknown curriculum {mode!r}; known: {CURRICULA}")
        if steps < 1:
            raise ValueError(f"steps must be >= 1, got {steps}")
        self.mode, self.steps, self.batch_size, self.noise_dim = mode, steps, batch_size, noise_dim
        self.register_buffer("labels", balanced_labels(steps, batch_size, num_classes))
        if mode != "noise":
            g = torch.Generator().manual_seed(seed)
            self.z = nn.Parameter(torch.randn(steps, batch_size, noise_dim, generator=g))

    def inputs(self, generator: torch.Generator | None = None) -> list[tuple[torch.Tensor, torch.Tensor]]:
        T, B, d = self.steps, self.batch_size, self.noise_dim
        if self.mode == "noise":
            z = torch.randn(T, B, d, generator=generator).to(self.labels.device)  # drawn on the CPU (one stream)
            return [(z[t], self.labels[t]) for t in range(T)]
        if self.mode == "full":
            return [(self.z[t], self.labels[t]) for t in range(T)]
        if self.mode == "shuffled_batch":
            perm = torch.randperm(T, generator=generator)
            return [(self.z[p], self.labels[p]) for p in perm.tolist()]
        perm = torch.randperm(T * B, generator=generator)
        z, y = self.z.reshape(T * B, d)[perm].view(T, B, d), self.labels.reshape(-1)[perm].view(T, B)
        return [(z[t], y[t]) for t in range(T)]


class GTN(nn.Module):
    """Generator + curriculum + the learned inner-loop learning rate and momentum."""

    def __init__(
        self,
        steps: int = 10,
        batch_size: int = 50,
        noise_dim: int = 32,
        hidden: int = 256,
        num_classes: int = 10,
        image_shape=(1, 28, 28),
        mean=(0.2860,),
        std=(0.3530,),
        weight_norm: bool = True,
        curriculum: str = "full",
        init_lr: float = 0.02,
        init_momentum: float = 0.5,
        seed: int = 0,
    ):
        super().__init__()
        if not init_lr > 0 or not 0 < init_momentum < 1:
            raise ValueError(f"need init_lr > 0 and 0 < init_momentum < 1, got {init_lr}, {init_momentum}")
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.generator = Generator(noise_dim, num_classes, hidden, image_shape, mean, std, weight_norm)
        self.curriculum = Curriculum(steps, batch_size, noise_dim, num_classes, curriculum, seed + 1)
        self.log_lr = nn.Parameter(torch.tensor(math.log(init_lr)))
        self.m_raw = nn.Parameter(torch.tensor(math.log(init_momentum / (1 - init_momentum))))
        self.weight_norm = weight_norm
        self.mean, self.std, self.num_classes = tuple(mean), tuple(std), num_classes

    @property
    def lr(self) -> torch.Tensor:
        return self.log_lr.exp()

    @property
    def momentum(self) -> torch.Tensor:
        return torch.sigmoid(self.m_raw)

    def batches(self, generator: torch.Generator | None = None) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """The T generated batches (x_t = G(z_t, y_t), y_t), differentiable in G, z, nothing else."""
        return [(self.generator(z, y), y) for z, y in self.curriculum.inputs(generator)]


# --- learners ---------------------------------------------------------------------------------------


def make_learner(
    arch_kwargs: dict, seed: int, weight_norm: bool = False, image_shape=(1, 28, 28), num_classes: int = 10
) -> nn.Module:
    """A freshly initialised ConvNet learner (``models.convnet`` kwargs + linear head) under ``seed``,
    with WN on its layers when asked. No BatchNorm (the unrolled steps must not keep running stats)."""
    if arch_kwargs.get("norm", "instance") == "batch":
        raise ValueError("GTN learners are unrolled: use norm instance / group / layer / none, not batch")
    net = build_network(image_shape[0], image_shape[1], num_classes, seed, "convnet", arch_kwargs)
    return weight_norm_learner(net) if weight_norm else net


def train_learner(
    net: nn.Module, batches: Sequence[tuple[torch.Tensor, torch.Tensor]], lr: float, momentum: float
) -> nn.Module:
    """Plain SGD with momentum (``torch.optim.SGD``: v <- m v + g, w <- w - lr v, the unroll's update) on
    the batches in order; returns ``net`` trained (train mode)."""
    opt = torch.optim.SGD(net.parameters(), lr=float(lr), momentum=float(momentum))
    net.train()
    for x, y in batches:
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(net(x.detach()), y).backward()
        opt.step()
    return net


@torch.no_grad()
def test_accuracy(net: nn.Module, x_test: torch.Tensor, y_test: torch.Tensor, batch: int = 2000) -> float:
    """Top-1 accuracy on normalised float test images (eval mode)."""
    net.eval()
    hit = sum(
        int((net(x_test[i : i + batch]).argmax(1) == y_test[i : i + batch]).sum()) for i in range(0, len(y_test), batch)
    )
    return hit / len(y_test)


def real_batches(
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    steps: int,
    batch_size: int,
    mean,
    std,
    generator: torch.Generator,
    num_classes: int = 10,
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``steps`` class-balanced random real batches (the "real data" arm: the same T and batch size as
    the GTN's curriculum), normalised."""
    per = balanced_labels(1, batch_size, num_classes)[0]
    by_class = [torch.nonzero(labels == c).flatten() for c in range(num_classes)]
    out = []
    for _ in range(steps):
        idx = torch.stack(
            [by_class[int(c)][torch.randint(len(by_class[int(c)]), (), generator=generator)] for c in per]
        )
        out.append((to_float(images_u8[idx], mean, std), labels[idx]))
    return out


# --- meta-training ----------------------------------------------------------------------------------


@dataclass
class GTNConfig:
    """One meta-training run. ``learners``: the pool of ConvNet kwargs a fresh learner is drawn from at
    every outer step (learner agnosticism); ``weight_norm`` on the generator *and* the learners (the
    paper's WN); ``diverge_factor``: a step whose meta-loss exceeds this multiple of ln(C) (chance) or is
    not finite counts as diverged and is skipped. ``plateau_every`` > 0: every ``plateau_every``-th outer
    step from ``min_iterations`` on, stop once the meta-loss passes the claims' plateau test
    (:func:`compendium.core.plateau.stop_at_plateau`); ``iterations`` is then a cap."""

    steps: int = 10  # T inner steps
    batch_size: int = 50  # generated images per inner step
    noise_dim: int = 32
    hidden: int = 256
    curriculum: str = "full"
    weight_norm: bool = True
    iterations: int = 100  # outer (meta) steps
    meta_lr: float = 1e-3  # Adam, generator and curriculum
    hyper_lr: float = 1e-2  # Adam, log lr and momentum logit
    real_batch: int = 256  # real images of the meta-loss
    init_lr: float = 0.02
    init_momentum: float = 0.5
    truncate: int | None = None
    checkpoint: bool = False
    learners: list = field(default_factory=lambda: [{"width": 8, "depth": 2, "norm": "instance"}])
    diverge_factor: float = 3.0
    plateau_every: int = 0
    min_iterations: int = 0
    seed: int = 0

    def validate(self) -> None:
        if self.curriculum not in CURRICULA:
            raise ValueError(f"unknown curriculum {self.curriculum!r}; known: {CURRICULA}")
        for name in ("steps", "batch_size", "noise_dim", "hidden", "iterations", "real_batch"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not self.learners:
            raise ValueError("empty learner pool")
        if self.plateau_every < 0 or self.min_iterations < 0:
            raise ValueError(
                f"plateau_every and min_iterations must be >= 0, got {self.plateau_every}, {self.min_iterations}"
            )
        if not self.meta_lr > 0 or self.hyper_lr < 0:
            raise ValueError(f"need meta_lr > 0 and hyper_lr >= 0, got {self.meta_lr}, {self.hyper_lr}")


def build_gtn(cfg: GTNConfig, num_classes: int = 10, image_shape=(1, 28, 28), mean=(0.2860,), std=(0.3530,)) -> GTN:
    return GTN(
        cfg.steps,
        cfg.batch_size,
        cfg.noise_dim,
        cfg.hidden,
        num_classes,
        image_shape,
        mean,
        std,
        cfg.weight_norm,
        cfg.curriculum,
        cfg.init_lr,
        cfg.init_momentum,
        cfg.seed,
    )


def meta_optimizer(gtn: GTN, meta_lr: float, hyper_lr: float) -> torch.optim.Adam:
    """Adam on the generator and the curriculum (``meta_lr``) and on the learned inner lr / momentum
    (``hyper_lr``, in log / logit space)."""
    hyper = [gtn.log_lr, gtn.m_raw]
    rest = [p for p in gtn.parameters() if all(p is not h for h in hyper)]
    return torch.optim.Adam([{"params": rest, "lr": meta_lr}, {"params": hyper, "lr": hyper_lr}])


def meta_loss(
    gtn: GTN,
    learner: nn.Module,
    x_real: torch.Tensor,
    y_real: torch.Tensor,
    order: torch.Generator,
    truncate: int | None = None,
    checkpoint: bool = False,
) -> torch.Tensor:
    """The outer objective: the real-batch loss of ``learner`` after T unrolled steps on the GTN's batches
    with its learned lr and momentum; differentiable in G, the curriculum, lr and momentum."""
    batches = gtn.batches(order)
    params = U.initial_params(learner)
    trained = U.unroll(
        learner,
        params,
        batches,
        gtn.lr.expand(len(batches)),
        momentum=gtn.momentum,
        truncate=truncate,
        checkpoint=checkpoint,
    )
    return U.outer_loss(learner, trained, x_real, y_real)


def meta_step(
    gtn: GTN,
    opt: torch.optim.Optimizer,
    learner: nn.Module,
    x_real: torch.Tensor,
    y_real: torch.Tensor,
    order: torch.Generator,
    truncate: int | None = None,
    checkpoint: bool = False,
    max_loss: float = math.inf,
) -> float:
    """One Adam step of the GTN on one fresh learner; returns the meta-loss (before the step). A loss that
    is not finite or above ``max_loss`` is returned but not stepped on (a diverged step)."""
    opt.zero_grad(set_to_none=True)
    loss = meta_loss(gtn, learner, x_real, y_real, order, truncate, checkpoint)
    value = float(loss.detach())
    if not math.isfinite(value) or value > max_loss:
        return value
    loss.backward()
    grads_ok = all(p.grad is None or torch.isfinite(p.grad).all() for p in gtn.parameters())
    if grads_ok:
        opt.step()
    else:
        value = math.nan
    return value


def meta_train(
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    cfg: GTNConfig,
    mean,
    std,
    num_classes: int = 10,
    log_every: int = 0,
    tag: str = "",
    device: str = "cpu",
) -> dict:
    """Meta-train a GTN (seeded by ``cfg.seed``: generator init, curriculum, learner seeds and archs, real
    batches, shuffles) on ``device`` (the GTN, each learner and each real batch; every random draw stays
    on the CPU, so a device changes no draw). Returns the trained ``gtn`` (CPU), the per-step ``meta_loss``
    curve, the number of ``diverged`` steps, the final lr / momentum and the wall ``seconds``."""
    cfg.validate()
    if images_u8.dtype != torch.uint8 or images_u8.ndim != 4:
        raise ValueError("real images must be uint8 N x C x H x W")
    dev = torch.device(device)
    gtn = build_gtn(cfg, num_classes, tuple(images_u8.shape[1:]), mean, std).to(dev)  # built (seeded) on the CPU
    opt = meta_optimizer(gtn, cfg.meta_lr, cfg.hyper_lr)
    g = torch.Generator().manual_seed(10_007 * cfg.seed + 1)
    max_loss = cfg.diverge_factor * math.log(num_classes)
    curve, diverged = [], 0
    t0 = time.perf_counter()
    rate = Rate(cfg.iterations)
    for it in range(cfg.iterations):
        arch = cfg.learners[int(torch.randint(len(cfg.learners), (), generator=g))]
        learner = make_learner(
            arch,
            int(torch.randint(2**31 - 1, (), generator=g)),
            cfg.weight_norm,
            tuple(images_u8.shape[1:]),
            num_classes,
        ).to(dev)
        idx = torch.randint(len(labels), (cfg.real_batch,), generator=g)
        x_real, y_real = to_float(images_u8[idx].to(dev), mean, std), labels[idx].to(dev)
        value = meta_step(gtn, opt, learner, x_real, y_real, g, cfg.truncate, cfg.checkpoint, max_loss)
        if not math.isfinite(value) or value > max_loss:
            diverged += 1
        curve.append(value)
        if log_every and (it + 1) % log_every == 0:
            say(
                f"[gtn {tag}] {it + 1}/{cfg.iterations} meta-loss {value:.3f} lr {gtn.lr.item():.4f} "
                f"momentum {gtn.momentum.item():.3f}  {rate.update(it + 1)}"
            )
        if plateau.stop_at_plateau(curve, cfg.plateau_every, cfg.min_iterations):
            break
    return {
        "gtn": gtn.cpu().eval(),
        "meta_loss": curve,
        "diverged": diverged,
        "lr": gtn.lr.item(),
        "momentum": gtn.momentum.item(),
        "seconds": time.perf_counter() - t0,
        "config": asdict(cfg),
    }


# --- evaluation -------------------------------------------------------------------------------------


def gtn_batches(gtn: GTN, seed: int = 0) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The GTN's T batches (detached), the order / noise drawn under ``seed`` (``full``: seed-free)."""
    with torch.no_grad():
        return [(x.detach(), y) for x, y in gtn.batches(torch.Generator().manual_seed(seed))]


def evaluate_gtn(
    gtn: GTN, arch_kwargs: dict, seeds: Sequence[int], x_test: torch.Tensor, y_test: torch.Tensor
) -> list[float]:
    """Test accuracy of fresh learners (one per seed) after T steps on the GTN's curriculum with its learned
    lr and momentum (the learners carry WN iff the GTN was trained with it)."""
    accs = []
    for s in seeds:
        net = make_learner(arch_kwargs, 1_000_003 + s, gtn.weight_norm, tuple(x_test.shape[1:]), gtn.num_classes)
        accs.append(
            test_accuracy(train_learner(net, gtn_batches(gtn, s), gtn.lr.item(), gtn.momentum.item()), x_test, y_test)
        )
    return accs


def evaluate_real(
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    arch_kwargs: dict,
    steps: int,
    batch_size: int,
    lr: float,
    momentum: float,
    seeds: Sequence[int],
    x_test: torch.Tensor,
    y_test: torch.Tensor,
    mean,
    std,
    weight_norm: bool = False,
    replicate: int = 0,
) -> list[float]:
    """The real-data arm: fresh learners (the same seeds as :func:`evaluate_gtn`) trained for ``steps`` SGD
    steps on random class-balanced real batches of ``batch_size``, drawn under ``(replicate, seed)``."""
    accs = []
    for s in seeds:
        net = make_learner(arch_kwargs, 1_000_003 + s, weight_norm, tuple(x_test.shape[1:]), int(labels.max()) + 1)
        b = real_batches(
            images_u8, labels, steps, batch_size, mean, std, torch.Generator().manual_seed(7 + s + 100_003 * replicate)
        )
        accs.append(test_accuracy(train_learner(net, b, lr, momentum), x_test, y_test))
    return accs


def tune_real(
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    arch_kwargs: dict,
    steps: int,
    batch_size: int,
    lrs: Sequence[float],
    momenta: Sequence[float],
    x_val: torch.Tensor,
    y_val: torch.Tensor,
    mean,
    std,
    seeds: Sequence[int] = (100, 101),
    weight_norm: bool = False,
) -> dict:
    """The real-data arm's step size and momentum, chosen on a validation set (real training images
    held out, never the test set) over a grid: the fair counterpart of the GTN's learned ones."""
    grid = [
        (
            lr,
            m,
            sum(
                evaluate_real(
                    images_u8,
                    labels,
                    arch_kwargs,
                    steps,
                    batch_size,
                    lr,
                    m,
                    seeds,
                    x_val,
                    y_val,
                    mean,
                    std,
                    weight_norm,
                )
            )
            / len(seeds),
        )
        for lr in lrs
        for m in momenta
    ]
    lr, m, acc = max(grid, key=lambda r: r[2])
    return {"lr": lr, "momentum": m, "val_acc": acc, "grid": grid}


def real_arm(
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    arch_kwargs: dict,
    steps: int,
    batch_size: int,
    lrs: Sequence[float],
    momenta: Sequence[float],
    x_val: torch.Tensor,
    y_val: torch.Tensor,
    x_test: torch.Tensor,
    y_test: torch.Tensor,
    mean,
    std,
    seeds: Sequence[int],
    replicates: Sequence[int],
    weight_norm: bool = False,
) -> dict:
    """The real-data arm at the GTN's T and batch size: lr and momentum tuned on held-out real images
    (:func:`tune_real`), then ``len(replicates)`` replicates (fresh real batches), each the mean test
    accuracy over the learner ``seeds`` (the GTN arm's replicate is a meta-training seed)."""
    tuned = tune_real(
        images_u8,
        labels,
        arch_kwargs,
        steps,
        batch_size,
        lrs,
        momenta,
        x_val,
        y_val,
        mean,
        std,
        weight_norm=weight_norm,
    )
    reps = [
        evaluate_real(
            images_u8,
            labels,
            arch_kwargs,
            steps,
            batch_size,
            tuned["lr"],
            tuned["momentum"],
            seeds,
            x_test,
            y_test,
            mean,
            std,
            weight_norm,
            r,
        )
        for r in replicates
    ]
    return {**tuned, "accs": reps}


def run(
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    cfg: GTNConfig,
    mean,
    std,
    eval_arch: dict,
    eval_seeds: Sequence[int],
    x_test: torch.Tensor,
    y_test: torch.Tensor,
    device: str = "cpu",
) -> dict:
    """:func:`meta_train` (on ``device``) then :func:`evaluate_gtn` (a worker-friendly unit for
    :func:`compendium.core.parallel.run_calls`); ``init_accs``:
    the same learners taught by the untrained generator (the GTN's initialisation, built under the same seed)."""
    out = meta_train(images_u8, labels, cfg, mean, std, device=device)
    out["accs"] = evaluate_gtn(out["gtn"], eval_arch, eval_seeds, x_test, y_test)
    untrained = build_gtn(cfg, 10, tuple(images_u8.shape[1:]), mean, std).eval()
    out["init_accs"] = evaluate_gtn(untrained, eval_arch, eval_seeds, x_test, y_test)
    return out


def volatility(curve: Sequence[float], window: int = 10) -> float:
    """Meta-loss volatility of one run: the std of the curve around its trailing moving average over the
    second half of meta-training (finite points only; spikes and oscillations raise it)."""
    import numpy as np

    c = np.asarray(curve, float)
    s = np.asarray(smooth(curve, window))
    half = slice(len(c) // 2, None)
    r = (c - s)[half]
    r = r[np.isfinite(r)]
    return float(r.std(ddof=1)) if r.size > 1 else float("nan")


def smooth(curve: Sequence[float], window: int) -> list[float]:
    """Trailing moving average (NaNs skipped) of a meta-loss curve."""
    out = []
    for i in range(len(curve)):
        w = [v for v in curve[max(0, i - window + 1) : i + 1] if math.isfinite(v)]
        out.append(sum(w) / len(w) if w else math.nan)
    return out
