"""Teacher inversion: SRe2L, DWA and RDED, all producing a :class:`~.sets.DistilledSet`.

* **SRe2L** (Yin, Xing, Shen, NeurIPS 2023): "squeeze -> recover -> relabel". Recover
  optimises synthetic pixels against a frozen BN teacher with cross-entropy plus the BatchNorm
  statistic loss (:func:`recover`): Adam lr 0.25, betas (0.5, 0.9), cosine decay to 0, 1,000
  iterations at paper scale, random-roll jitter, pixels clipped to the valid range, last iterate kept.
  Initialisation N(0, 1) in normalised space, coupled BN weights (``r_var = 1``).
* **DWA** (Du et al., NeurIPS 2024): SRe2L with real-image initialisation (one
  random real image per class per ipc index), a decoupled variance weight (``r_var = 11``) and the
  directed weight adjustment of §3.3 (:func:`weight_adjustment`, K = 12 normalised CE-ascent steps of
  total length rho = 15e-3 on the jittered initial batch, once at t = 0 on a fresh teacher copy per
  ipc index). ``weight_adjust='random'`` is Table 3's Gaussian arm (its sigma is not given: we draw
  N(0, I) over every parameter and rescale it to global norm rho).
* **RDED** (Sun, Shi, Yu, Lin, CVPR 2024, "On the Diversity and Realism of Distilled Dataset"):
  no optimisation. Random square crops of real class images are scored by the observer (teacher) with
  -CE (realism), the best crop of each image is kept, the top ``ipc * factor**2`` crops of a class are
  downsized and stitched ``factor x factor`` into full-resolution images (:func:`rded_select`,
  :func:`stitch`), then relabelled by the teacher. The paper relabels region-wise (soft labels per
  patch); we store image-level soft labels (documented deviation).
* :func:`feature_distance`: DWA's diversity metric D_fea (App. A.2.2, Eq. 21) with our normalisation
  for its Fig. 4 (the paper leaves it undefined).

Behaviour taken from DWA's code where the paper is silent, all reproduced here:
the BN statistics are those of the *input* of every BatchNorm layer (per-channel mean and biased
variance over all dims but the channel), the per-layer term is ``||mu - mu_run||_2 + r_var ||var -
var_run||_2`` with unsquared norms, the total is ``CE + r_bn * sum_l m_l * term_l`` with r_bn = 0.01 and
m_1 = 10 on the first BN layer (module order), weight-adjustment steps are normalised by the global
gradient norm (so ``||delta|| <= rho``) and cover every parameter including the BN affine ones, and the
BN terms are then evaluated through the *perturbed* network (Eq. 16 would use the unperturbed one).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from functools import partial
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call
from torch.nn.modules.batchnorm import _BatchNorm

from compendium.core import augment
from compendium.core.models import bn_channels_first
from compendium.core.probe import to_float
from compendium.distill import sets
from compendium.distill.sets import DistilledSet
from compendium.theory.dwa import directed_adjustment

WEIGHT_ADJUST = (None, "directed", "random")
INITS = ("noise", "real")
RDED_SCORE_MODES = ("full", "padded")
#: which sets are synthesised once per evaluation seed (seed s's students then train on seed s's set, so an
#: interval over seeds covers the synthesis's randomness too): every ipc, only the Table 3 ladder's, or none
REPLICATE_MODES = ("all", "ladder", "none")


def replicated_ipcs(mode: str, ipcs: Sequence[int], ladder_ipc: int) -> set[int]:
    """The ipcs whose sets are synthesised once per evaluation seed under ``mode`` (:data:`REPLICATE_MODES`);
    the others are synthesised once, with seed 0, and every student trains on that set.

    >>> sorted(replicated_ipcs("all", [1, 10, 50], 1)), sorted(replicated_ipcs("ladder", [1, 10, 50], 1))
    ([1, 10, 50], [1])
    >>> replicated_ipcs("none", [1, 10], 1)
    set()
    """
    if mode not in REPLICATE_MODES:
        raise ValueError(f"replicate_syntheses must be one of {REPLICATE_MODES}, got {mode!r}")
    return {"all": set(ipcs) | {ladder_ipc}, "ladder": {ladder_ipc}, "none": set()}[mode]


# ---------------------------------------------------------------- BN statistic loss (DWA Eq. 4 / code)


@dataclass
class BNLoss:
    """The BN statistic loss of one forward pass.

    ``total = sum_l m_l (mean_l + r_var var_l)``; ``mean = sum_l m_l mean_l`` and ``var = sum_l m_l var_l``
    (the latter *not* multiplied by r_var), so ``total = mean + r_var * var``. ``per_layer_mean`` and
    ``per_layer_var`` are the unweighted per-layer norms ||mu_l - mu_run||_2 and ||var_l - var_run||_2."""

    total: torch.Tensor
    mean: torch.Tensor
    var: torch.Tensor
    per_layer_mean: torch.Tensor
    per_layer_var: torch.Tensor


def batchnorm_layers(model: nn.Module) -> list[_BatchNorm]:
    """Every BatchNorm module (1-d, 2-d, 3-d, SyncBN) in module order, as DWA's code lists its hooks."""
    return [m for m in model.modules() if isinstance(m, _BatchNorm)]


class BNStatHook:
    """Forward pre-hooks on the input of every BatchNorm layer of ``model`` (DWA code).

    Use as a context manager; the hooks are removed on exit (also after an exception). Each forward
    records, per layer, the per-channel mean and biased variance of the layer's input over all dims
    but dim 1; :meth:`loss` compares them with the layer's running statistics."""

    def __init__(self, model: nn.Module):
        self.layers = batchnorm_layers(model)
        if not self.layers:
            raise ValueError("the model has no BatchNorm layer: the BN statistic loss needs one")
        for m in self.layers:
            if m.running_mean is None or m.running_var is None:
                raise ValueError(f"{type(m).__name__} has no running statistics (track_running_stats=False)")
        self.stats: list[tuple[torch.Tensor, torch.Tensor] | None] = [None] * len(self.layers)
        self._handles: list = []

    def _record(self, i: int, module: nn.Module, inputs: tuple) -> None:
        x = bn_channels_first(module, inputs[0])  # ViT-BN tokens carry their channels last
        dims = (0, *range(2, x.ndim))
        mean = x.mean(dims, keepdim=True)
        var = (x - mean).pow(2).mean(dims)  # biased variance, as BN normalises (two-pass: ~2x var_mean on CPU)
        self.stats[i] = (mean.flatten(), var)

    def __enter__(self) -> "BNStatHook":
        self.remove()
        self._handles = [m.register_forward_pre_hook(partial(self._record, i)) for i, m in enumerate(self.layers)]
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def remove(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []

    def loss(self, r_var: float = 1.0, first_multiplier: float = 10.0) -> BNLoss:
        """DWA's per-layer term ``m_l (||mu_l - mu_run||_2 + r_var ||var_l - var_run||_2)`` summed over the
        layers seen in the last forward (m_1 = ``first_multiplier`` on the first BN in module order)."""
        if any(s is None for s in self.stats):
            missing = [i for i, s in enumerate(self.stats) if s is None]
            raise ValueError(f"BN layers {missing} saw no input: run a forward pass inside the hook first")
        dm = torch.stack([(mu - m.running_mean).norm() for (mu, _), m in zip(self.stats, self.layers)])
        dv = torch.stack([(var - m.running_var).norm() for (_, var), m in zip(self.stats, self.layers)])
        mult = torch.ones_like(dm)
        mult[0] = first_multiplier
        mean_part, var_part = (mult * dm).sum(), (mult * dv).sum()
        return BNLoss(mean_part + r_var * var_part, mean_part, var_part, dm, dv)


def bn_statistic_loss(
    model: nn.Module, x: torch.Tensor, r_var: float = 1.0, first_multiplier: float = 10.0
) -> tuple[torch.Tensor, BNLoss]:
    """One forward of ``model`` on ``x`` with :class:`BNStatHook`: returns (logits, :class:`BNLoss`)."""
    with BNStatHook(model) as hook:
        logits = model(x)
    return logits, hook.loss(r_var, first_multiplier)


# ---------------------------------------------------------------- weight adjustment (DWA §3.3, Eq. 12)


class _FlatModule:
    """``theory.dwa.FlatMLP``'s interface (``summed_loss`` of a flat parameter vector) for any module,
    so :func:`~compendium.theory.dwa.directed_adjustment` runs on real networks."""

    def __init__(self, model: nn.Module):
        self.model = model
        self.names = [n for n, _ in model.named_parameters()]
        self.shapes = [p.shape for _, p in model.named_parameters()]

    def unflatten(self, theta: torch.Tensor) -> dict[str, torch.Tensor]:
        parts = torch.split(theta, [math.prod(s) for s in self.shapes])
        return {n: p.view(s) for n, p, s in zip(self.names, parts, self.shapes)}

    def summed_loss(self, theta: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(functional_call(self.model, self.unflatten(theta), (x,)), y, reduction="sum")


def flat_parameters(model: nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def weight_adjustment(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    rho: float = 15e-3,
    K: int = 12,
    mode: str = "directed",
    generator: torch.Generator | None = None,
) -> tuple[nn.Module, float]:
    """A perturbed **copy** of ``model`` (the argument is untouched) and the global L2 norm of the delta.

    * ``directed`` (DWA Alg. 1 line 8 as its code does it): K steps
      theta <- theta + (rho/K) g / (||g||_2 + 1e-12), g the gradient of the CE on (x, y) over *all*
      parameters (global norm), in eval mode (BN running statistics fixed). Computed by
      :func:`compendium.theory.dwa.directed_adjustment` on the summed CE; the code uses the mean CE, which
      gives the same normalised steps. ``||delta|| <= rho``, with equality for K = 1.
    * ``random`` (DWA Table 3's Gaussian arm; its sigma is unpublished): delta ~ N(0, I) over all
      parameters, rescaled to global norm exactly ``rho``; deterministic given ``generator``.
    """
    if mode not in ("directed", "random"):
        raise ValueError(f"unknown weight adjustment {mode!r}; known: directed, random")
    if rho < 0 or int(K) != K or K < 1:
        raise ValueError(f"need rho >= 0 and an integer K >= 1, got rho={rho}, K={K}")
    adjusted = copy.deepcopy(model).eval()
    theta = flat_parameters(adjusted)
    if mode == "directed":
        with torch.enable_grad():
            delta = directed_adjustment(_FlatModule(adjusted), theta, x, y, rho, int(K)).detach()
    else:
        g = generator if generator is not None else torch.Generator().manual_seed(0)
        noise = torch.randn(theta.shape, generator=g, dtype=theta.dtype).to(theta.device)
        delta = noise * (rho / noise.norm().clamp_min(1e-30))
    torch.nn.utils.vector_to_parameters(theta + delta, adjusted.parameters())
    return adjusted, float(delta.norm())


# ---------------------------------------------------------------- recover (SRe2L / DWA Alg. 1)


def pixel_bounds(mean: Sequence[float], std: Sequence[float]) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-channel (min, max) of valid pixels [0, 1] in normalised space: ((0 - m)/s, (1 - m)/s)."""
    m, s = torch.as_tensor(mean, dtype=torch.float32), torch.as_tensor(std, dtype=torch.float32)
    return -m / s, (1 - m) / s


def cosine_lr(base: float, t: int, total: int) -> float:
    """SRe2L's cosine policy without warm-up: 0.5 base (1 + cos(pi t / total))."""
    return 0.5 * base * (1 + math.cos(math.pi * t / total))


#: Datasets whose recovery crops and flips before the jitter (DWA Tables 7 and 8, Tiny-ImageNet and ImageNet-1K:
#: RandomResizedCrop + RandomHorizontalFlip; SRe2L's "multi-crop"); CIFAR's (Table 6) is the jitter alone.
CROP_FLIP_RECOVERY = ("tiny-imagenet", "imagenet")
#: The RandomResizedCrop scale of that recovery: torchvision's default, which DWA's and SRe2L's code keep.
RECOVERY_CROP_SCALE = (0.08, 1.0)


def recovery_augmentation(dataset: str) -> dict:
    """``flip`` and ``crop_scale`` of :func:`recover` for ``dataset``: crop and flip on the ImageNet-style
    datasets (:data:`CROP_FLIP_RECOVERY`), neither elsewhere (the jitter alone, as DWA's CIFAR code)."""
    on = dataset in CROP_FLIP_RECOVERY
    return {"flip": on, "crop_scale": RECOVERY_CROP_SCALE if on else None}


def jitter_batch(
    x: torch.Tensor,
    jitter: int,
    flip: bool,
    crop_scale: tuple[float, float] | None,
    generator: torch.Generator,
    device_generator: torch.Generator | None = None,
) -> torch.Tensor:
    """The recover-time augmentation: optional batched RandomResizedCrop (ImageNet's "multi-crop", one box
    per image), optional whole-batch horizontal flip (p = 0.5), then one random roll of (u, v) pixels,
    u, v ~ U{0..jitter}, for the whole batch (DeepInversion/SRe2L/DWA jitter)."""
    if crop_scale is not None:
        x = augment.random_resized_crop(x, x.shape[-1], crop_scale, generator=device_generator or generator)
    if flip and bool(torch.rand(1, generator=generator) < 0.5):
        x = x.flip(-1)
    if jitter > 0:
        u, v = torch.randint(0, jitter + 1, (2,), generator=generator).tolist()
        x = torch.roll(x, shifts=(u, v), dims=(-2, -1))
    return x


@dataclass
class Recovery:
    """The last iterate (normalised, on the teacher's device), per-iteration losses ``history`` [T, 4]
    with columns (total, ce, bn_mean, bn_var) (bn parts as in :class:`BNLoss`), and the weight adjustment's
    norm (0 without one)."""

    images: torch.Tensor
    history: torch.Tensor
    delta_norm: float = 0.0

    COLUMNS = ("total", "ce", "bn_mean", "bn_var")


def _check_recover(teacher, init_images, labels, iterations, weight_adjust, clip_range) -> None:
    if not isinstance(init_images, torch.Tensor) or init_images.ndim != 4 or not init_images.is_floating_point():
        raise ValueError("init_images must be a float tensor [B, C, H, W] in normalised space")
    if labels.shape != (init_images.shape[0],):
        raise ValueError(f"labels {tuple(labels.shape)} do not match {init_images.shape[0]} images")
    if int(iterations) != iterations or iterations < 0:
        raise ValueError(f"iterations must be an integer >= 0, got {iterations}")
    if weight_adjust not in WEIGHT_ADJUST:
        raise ValueError(f"unknown weight_adjust {weight_adjust!r}; known: {WEIGHT_ADJUST}")
    if clip_range is not None:
        lo, hi = clip_range
        if lo.numel() not in (1, init_images.shape[1]) or hi.shape != lo.shape or (lo > hi).any():
            raise ValueError("clip_range must be per-channel (min, max) tensors with min <= max")
    if not batchnorm_layers(teacher):
        raise ValueError("the teacher has no BatchNorm layer: SRe2L/DWA recovery needs BN statistics")


def recover(
    teacher: nn.Module,
    init_images: torch.Tensor,
    labels: torch.Tensor,
    *,
    iterations: int = 1000,
    lr: float = 0.25,
    betas: tuple[float, float] = (0.5, 0.9),
    r_bn: float = 0.01,
    r_var: float = 1.0,
    first_multiplier: float = 10.0,
    jitter: int = 2,
    flip: bool = False,
    crop_scale: tuple[float, float] | None = None,
    weight_adjust: str | None = None,
    rho: float = 15e-3,
    K: int = 12,
    clip_range: tuple[torch.Tensor, torch.Tensor] | None = None,
    generator: torch.Generator | None = None,
) -> Recovery:
    """SRe2L's recover / DWA's Algorithm 1 inner loop for one batch.

    Minimises CE(f(A(X)), y) + r_bn sum_l m_l (||mu_l - mu_run||_2 + r_var ||var_l - var_run||_2) over the
    pixels X (Eq. 16 with the code's weights) with Adam(lr, betas, eps 1e-8) and cosine decay, clipping X
    to ``clip_range`` after every step. ``weight_adjust`` perturbs a copy of the teacher once, at t = 0, on
    the jittered initial batch; the caller's teacher is never modified. Returns the last iterate."""
    _check_recover(teacher, init_images, labels, iterations, weight_adjust, clip_range)
    gen = generator if generator is not None else torch.Generator().manual_seed(0)
    dev = next(teacher.parameters()).device
    dev_gen = None
    if crop_scale is not None and dev.type != "cpu":
        dev_gen = torch.Generator(device=dev).manual_seed(int(torch.randint(2**62, (1,), generator=gen)))
    x = init_images.detach().to(dev, torch.float32).clone()
    y = labels.to(dev)
    lo = hi = None
    if clip_range is not None:
        lo, hi = (b.to(dev, torch.float32).view(1, -1, 1, 1) for b in clip_range)
    if iterations == 0:
        return Recovery(x, torch.zeros(0, 4), 0.0)

    x.requires_grad_(True)
    x_a = jitter_batch(x, jitter, flip, crop_scale, gen, dev_gen)  # iteration 0's view, also used by the adjustment
    delta_norm = 0.0
    if weight_adjust is None:
        model = copy.deepcopy(teacher)
    else:
        model, delta_norm = weight_adjustment(teacher, x_a.detach(), y, rho, K, weight_adjust, gen)
    model.eval().requires_grad_(False)

    opt = torch.optim.Adam([x], lr=lr, betas=betas, eps=1e-8)
    rows = []
    with BNStatHook(model) as hook:
        for t in range(iterations):
            for group in opt.param_groups:
                group["lr"] = cosine_lr(lr, t, iterations)
            if t > 0:
                x_a = jitter_batch(x, jitter, flip, crop_scale, gen, dev_gen)
            ce = F.cross_entropy(model(x_a), y)
            bn = hook.loss(r_var, first_multiplier)
            loss = ce + r_bn * bn.total
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if lo is not None:
                with torch.no_grad():
                    x.copy_(torch.maximum(torch.minimum(x, hi), lo))
            rows.append(torch.stack([loss, ce, bn.mean, bn.var]).detach())
    return Recovery(x.detach(), torch.stack(rows).cpu(), delta_norm)


# ---------------------------------------------------------------- relabel


@torch.no_grad()
def teacher_soft_labels(
    teacher: nn.Module, images: torch.Tensor, temperature: float = 1.0, batch_size: int = 512
) -> torch.Tensor:
    """softmax(teacher(x) / T) in eval mode, batched; float32 on CPU. The relabel stage of SRe2L/DWA/RDED
    as a static, image-level label (the papers relabel online or region-wise at training time)."""
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    was = teacher.training
    teacher.eval()
    dev = next(teacher.parameters()).device
    out = [
        F.softmax(teacher(images[i : i + batch_size].to(dev)).float() / temperature, 1).cpu()
        for i in range(0, len(images), batch_size)
    ]
    teacher.train(was)
    return torch.cat(out)


def soft_relabel(teacher: nn.Module, x: torch.Tensor, temperature: float | None, num_classes: int):
    """The teacher's image-level soft labels of ``x`` at ``temperature`` (None without one), checked against
    ``num_classes``."""
    if not temperature:
        return None
    soft = teacher_soft_labels(teacher, x, temperature)
    if soft.shape[1] != num_classes:
        raise ValueError(f"the teacher has {soft.shape[1]} outputs but num_classes={num_classes}")
    return soft


# ---------------------------------------------------------------- SRe2L / DWA synthesis


def check_real_images(images_u8: torch.Tensor, labels: torch.Tensor, ipc: int) -> int:
    """Check the real images (uint8 [N, C, H, W]), their labels and ``ipc`` before a synthesis; the number of
    classes the labels imply."""
    if not isinstance(images_u8, torch.Tensor) or images_u8.dtype != torch.uint8 or images_u8.ndim != 4:
        raise ValueError("images_u8 must be a uint8 tensor [N, C, H, W]")
    if labels.shape != (images_u8.shape[0],):
        raise ValueError(f"labels {tuple(labels.shape)} do not match {images_u8.shape[0]} images")
    if isinstance(ipc, bool) or int(ipc) != ipc or ipc < 1:
        raise ValueError(f"ipc must be an integer >= 1, got {ipc}")
    return int(labels.max()) + 1


def _index_seed(seed: int, *index: int) -> int:
    """A distinct seed per (seed, ipc index, class chunk): an ipc-k set is a prefix of the ipc-(k+1) set."""
    s = seed
    for i in index:
        s = (s * 1_000_003 + i + 1) % (2**62)
    return s


def real_init_index(labels: torch.Tensor, classes: Sequence[int], ipc: int, seed: int) -> torch.Tensor:
    """[C, ipc] indices of distinct random real images per class (one seeded permutation per class, so
    index i is the same image whatever the ipc). DWA: one random real image per class per ipc index."""
    g = torch.Generator().manual_seed(seed)
    rows = []
    for c in classes:
        pool = torch.nonzero(labels == c).flatten()
        if len(pool) < ipc:
            raise ValueError(f"class {c} has {len(pool)} real images, fewer than ipc={ipc}")
        rows.append(pool[torch.randperm(len(pool), generator=g)[:ipc]])
    return torch.stack(rows)


def inversion_synthesize(
    teacher: nn.Module,
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    ipc: int,
    mean: Sequence[float],
    std: Sequence[float],
    *,
    method: str = "sre2l",
    num_classes: int | None = None,
    init: str = "noise",
    iterations: int = 1000,
    lr: float = 0.25,
    betas: tuple[float, float] = (0.5, 0.9),
    r_bn: float = 0.01,
    r_var: float = 1.0,
    first_multiplier: float = 10.0,
    jitter: int = 2,
    flip: bool = False,
    crop_scale: tuple[float, float] | None = None,
    weight_adjust: str | None = None,
    rho: float = 15e-3,
    K: int = 12,
    classes_per_batch: int | None = None,
    relabel_temperature: float | None = 1.0,
    clip: bool = True,
    seed: int = 0,
    dataset: str = "fashion-mnist",
) -> DistilledSet:
    """SRe2L/DWA synthesis: for each ipc index, a fresh teacher copy and one batch of one image
    per class (``classes_per_batch`` splits the classes into chunks, each with its own fresh copy; DWA's
    ImageNet code instead keeps one perturbed teacher across the chunks of an ipc index), recovered by
    :func:`recover`; the last iterates are the set. Every argument is recorded in ``params``, with the
    per-batch adjustment norms, ``||theta_T||``, the per-batch final losses and ``loss_curve``, the total
    recovery loss per iteration averaged over the batches (empty with ``iterations=0``).

    ``init``: ``noise`` (N(0, 1) in normalised space, SRe2L) or ``real`` (DWA). Arms C-G of DWA Table 3:
    C = defaults; D = ``init='real'``; E = D + ``r_var=11``; F = E + ``weight_adjust='random'``;
    G = E + ``weight_adjust='directed'`` (= :func:`dwa_synthesize`). ``iterations=0`` with real init is
    arm B's image set (a random real subset)."""
    inferred = check_real_images(images_u8, labels, ipc)
    if init not in INITS:
        raise ValueError(f"unknown init {init!r}; known: {INITS}")
    C = int(num_classes or inferred)
    if inferred > C:
        raise ValueError(f"labels go up to {inferred - 1} but num_classes={C}")
    step = int(classes_per_batch or C)
    if step < 1:
        raise ValueError(f"classes_per_batch must be >= 1, got {classes_per_batch}")
    chunks = [torch.arange(s, min(s + step, C)) for s in range(0, C, step)]
    picks = real_init_index(labels, range(C), ipc, seed) if init == "real" else None
    clip_range = pixel_bounds(mean, std) if clip else None
    dev = next(teacher.parameters()).device
    kw = dict(
        iterations=iterations,
        lr=lr,
        betas=betas,
        r_bn=r_bn,
        r_var=r_var,
        first_multiplier=first_multiplier,
        jitter=jitter,
        flip=flip,
        crop_scale=crop_scale,
        weight_adjust=weight_adjust,
        rho=rho,
        K=K,
        clip_range=clip_range,
    )
    images, ys, norms, finals, curves = [], [], [], [], []
    with sets.measure(dev) as cost:
        for i in range(ipc):
            for j, chunk in enumerate(chunks):
                g = torch.Generator().manual_seed(_index_seed(seed, i, j))
                if init == "noise":
                    x0 = torch.randn(len(chunk), *images_u8.shape[1:], generator=g)
                else:
                    x0 = to_float(images_u8[picks[chunk, i]], mean, std)
                rec = recover(teacher, x0, chunk, generator=g, **kw)
                images.append(rec.images.cpu())
                ys.append(chunk)
                norms.append(rec.delta_norm)
                finals.append(float(rec.history[-1, 0]) if len(rec.history) else float("nan"))
                curves.append(rec.history[:, 0])
        x = torch.cat(images)
        soft = soft_relabel(teacher, x, relabel_temperature, C)
    params = {
        **{k: v for k, v in kw.items() if k != "clip_range"},
        "betas": list(betas),
        "crop_scale": list(crop_scale) if crop_scale else None,
        "init": init,
        "ipc": int(ipc),
        "clip": clip,
        "classes_per_batch": step,
        "relabel_temperature": relabel_temperature,
        "relabel": f"teacher softmax(z/{relabel_temperature}), image level" if soft is not None else None,
        "theta_norm": float(flat_parameters(teacher).norm()),
        "delta_norms": norms,
        "final_losses": finals,
        "loss_curve": torch.stack(curves).mean(0).tolist(),
        "init_index": picks.T.reshape(-1).tolist() if picks is not None else None,
    }
    return DistilledSet(
        x,
        torch.cat(ys),
        C,
        tuple(mean),
        tuple(std),
        method,
        dataset,
        params,
        seed,
        soft,
        cost.seconds,
        cost.peak_memory_bytes,
    )


def sre2l_synthesize(
    teacher: nn.Module, images_u8: torch.Tensor, labels: torch.Tensor, ipc: int, mean, std, **kw
) -> DistilledSet:
    """SRe2L (arm C): N(0, 1) init, coupled BN weights (r_var = 1), no weight adjustment; any argument of
    :func:`inversion_synthesize` may be overridden."""
    base = dict(method="sre2l", init="noise", r_var=1.0, weight_adjust=None)
    return inversion_synthesize(teacher, images_u8, labels, ipc, mean, std, **{**base, **kw})


def dwa_synthesize(
    teacher: nn.Module, images_u8: torch.Tensor, labels: torch.Tensor, ipc: int, mean, std, **kw
) -> DistilledSet:
    """DWA (arm G): real init, decoupled r_var = 11 (lambda_var = 0.11), directed adjustment K = 12,
    rho = 15e-3; ``weight_adjust='random'`` gives Table 3's Gaussian arm (F)."""
    base = dict(method="dwa", init="real", r_var=11.0, weight_adjust="directed", rho=15e-3, K=12)
    return inversion_synthesize(teacher, images_u8, labels, ipc, mean, std, **{**base, **kw})


# ---------------------------------------------------------------- RDED (Sun et al., CVPR 2024)


@torch.no_grad()
def _logits(model: nn.Module, x: torch.Tensor, batch_size: int) -> torch.Tensor:
    dev = next(model.parameters()).device
    return torch.cat([model(x[i : i + batch_size].to(dev)).float().cpu() for i in range(0, len(x), batch_size)])


def _pad_to(x: torch.Tensor, h: int, w: int) -> torch.Tensor:
    """Centre ``x`` on a zero canvas of h x w (zero = the dataset mean in normalised space)."""
    dh, dw = h - x.shape[-2], w - x.shape[-1]
    return F.pad(x, (dw // 2, dw - dw // 2, dh // 2, dh - dh // 2))


@dataclass
class RdedSelection:
    """The chosen crops of one class, best (lowest CE) first; ``scores`` their CE; ``source`` the index (into
    the images given) each comes from; ``candidate_ce`` [m, N'] the CE of every candidate crop."""

    crops: torch.Tensor
    scores: torch.Tensor
    source: torch.Tensor
    candidate_ce: torch.Tensor
    candidate_crops: torch.Tensor


def rded_select(
    observer: nn.Module,
    images: torch.Tensor,
    label: int,
    n: int,
    *,
    factor: int = 2,
    candidates_per_image: int = 5,
    scale: tuple[float, float] = (0.08, 1.0),
    score_mode: str = "full",
    generator: torch.Generator | None = None,
    batch_size: int = 512,
) -> RdedSelection:
    """RDED's selection for one class: ``candidates_per_image`` random square RandomResizedCrops of every
    image (normalised float [N', C, H, W]), each scored by the observer's CE to ``label`` (realism score
    = -CE); the best crop of each image is kept and the ``n`` best images' crops are returned (so the n
    crops come from n distinct images; needs N' >= n).

    ``score_mode='full'`` (the paper): crops at full resolution, scored as they are, downsized later by
    :func:`stitch`. ``'padded'`` (RDED's code): crops drawn directly at H // factor and scored zero-padded
    (centred) on a full-size canvas."""
    if score_mode not in RDED_SCORE_MODES:
        raise ValueError(f"unknown score_mode {score_mode!r}; known: {RDED_SCORE_MODES}")
    m, N = int(candidates_per_image), images.shape[0]
    if m < 1 or n < 1 or N < n:
        raise ValueError(f"need candidates_per_image >= 1 and at least n={n} images, got m={m}, N'={N}")
    h, w = images.shape[-2:]
    size = h if score_mode == "full" else h // factor
    reps = images.repeat(m, 1, 1, 1)  # [m * N'] in (candidate, image) order
    crops = augment.random_resized_crop(reps, size, scale, ratio=(1.0, 1.0), generator=generator)
    scored = crops if score_mode == "full" else _pad_to(crops, h, w)
    y = torch.full((m * N,), int(label), dtype=torch.int64)
    ce = F.cross_entropy(_logits(observer, scored, batch_size), y, reduction="none").view(m, N)
    best_ce, best = ce.min(0)  # per image: its most realistic crop
    order = torch.argsort(best_ce, stable=True)[:n]  # the n most realistic images
    crops = crops.view(m, N, *crops.shape[1:])
    return RdedSelection(crops[best[order], order], best_ce[order], order, ce, crops)


def stitch(crops: torch.Tensor, factor: int, height: int, width: int | None = None) -> torch.Tensor:
    """[n * factor**2, C, h, w] crops -> [n, C, height, width] images of factor x factor cells (RDED's
    mix_images): cell k (row-major) of image i is crop k * n + i, resized (bilinear, antialiased) to the
    cell; cells of an uneven split are one pixel larger at the top/left, as RDED's code."""
    width = width or height
    k2 = factor * factor
    if crops.shape[0] % k2:
        raise ValueError(f"{crops.shape[0]} crops are not a multiple of factor**2 = {k2}")
    n = crops.shape[0] // k2
    hs = [height // factor + (1 if r < height % factor else 0) for r in range(factor)]
    ws = [width // factor + (1 if r < width % factor else 0) for r in range(factor)]
    out = crops.new_zeros(n, crops.shape[1], height, width)
    k, top = 0, 0
    for hr in hs:
        left = 0
        for wr in ws:
            part = crops[k * n : (k + 1) * n]
            if part.shape[-2:] != (hr, wr):
                part = F.interpolate(part, size=(hr, wr), mode="bilinear", align_corners=False, antialias=True)
            out[:, :, top : top + hr, left : left + wr] = part
            left += wr
            k += 1
        top += hr
    return out


def rded_synthesize(
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    teacher: nn.Module,
    ipc: int,
    mean: Sequence[float],
    std: Sequence[float],
    *,
    num_classes: int | None = None,
    factor: int = 2,
    candidates_per_image: int = 5,
    images_per_class: int = 300,
    scale: tuple[float, float] = (0.08, 1.0),
    score_mode: str = "full",
    relabel_temperature: float | None = 1.0,
    seed: int = 0,
    batch_size: int = 512,
    dataset: str = "fashion-mnist",
) -> DistilledSet:
    """RDED: per class, ``images_per_class`` random real images (RDED's mipc, 300 in its scripts), ``m =
    candidates_per_image`` crops each (num_crop 5), the ipc * factor**2 most realistic crops (observer CE),
    stitched factor x factor into ipc full-resolution images; then teacher soft labels (image level; the
    paper's are region level). RDED's own CIFAR-10 scripts use factor 1 (then an image is one crop)."""
    inferred = check_real_images(images_u8, labels, ipc)
    if int(factor) != factor or factor < 1:
        raise ValueError(f"factor must be an integer >= 1, got {factor}")
    C = int(num_classes or inferred)
    if inferred > C:
        raise ValueError(f"labels go up to {inferred - 1} but num_classes={C}")
    n = ipc * factor * factor
    if images_per_class < n:
        raise ValueError(f"images_per_class={images_per_class} < ipc * factor**2 = {n}")
    g = torch.Generator().manual_seed(seed)
    dev = next(teacher.parameters()).device
    H, W = images_u8.shape[-2:]
    out, ys, sources = [], [], []
    with sets.measure(dev) as cost:
        for c in range(C):
            pool = torch.nonzero(labels == c).flatten()
            if len(pool) < n:
                raise ValueError(f"class {c} has {len(pool)} real images, fewer than ipc * factor**2 = {n}")
            pool = pool[torch.randperm(len(pool), generator=g)[:images_per_class]]
            sel = rded_select(
                teacher,
                to_float(images_u8[pool], mean, std),
                c,
                n,
                factor=factor,
                candidates_per_image=candidates_per_image,
                scale=scale,
                score_mode=score_mode,
                generator=g,
                batch_size=batch_size,
            )
            out.append(stitch(sel.crops, factor, H, W))
            ys.append(torch.full((ipc,), c, dtype=torch.int64))
            sources.append(pool[sel.source].tolist())
        x = torch.cat(out)
        soft = soft_relabel(teacher, x, relabel_temperature, C)
    params = {
        "factor": int(factor),
        "candidates_per_image": int(candidates_per_image),
        "images_per_class": int(images_per_class),
        "scale": list(scale),
        "score_mode": score_mode,
        "ipc": int(ipc),
        "relabel_temperature": relabel_temperature,
        "relabel": f"teacher softmax(z/{relabel_temperature}), image level" if soft is not None else None,
        "crop_sources": sources,
    }
    return DistilledSet(
        x,
        torch.cat(ys),
        C,
        tuple(mean),
        tuple(std),
        "rded",
        dataset,
        params,
        seed,
        soft,
        cost.seconds,
        cost.peak_memory_bytes,
    )


# ---------------------------------------------------------------- diversity metric (DWA App. A.2.2)


def feature_distance(
    features: torch.Tensor,
    labels: torch.Tensor,
    num_classes: int | None = None,
    reference_features: torch.Tensor | None = None,
    reference_labels: torch.Tensor | None = None,
    normalise: bool = True,
) -> torch.Tensor:
    """DWA's class-wise feature distance (App. A.2.2, Eq. 21), one value per class ([C], NaN where a class
    has no sample).

    Raw (``normalise=False``): D^c = sum_i sum_j ||g_i - g_j||_2^2 over the ipc_c synthetic features of class
    c, computed as 2 n_c sum_i ||g_i - mean_c||^2 (the same sum, O(n d)).
    Normalised (default; ours, as the paper leaves Fig. 4's normalisation undefined): D^c / n_c^2 / s_c,
    i.e. the mean pairwise squared distance divided by s_c = mean_{r in real class c} ||g(r)||^2 when
    reference features are given (s_c = 1 otherwise). Features are flattened; computed in float64."""
    f = features.reshape(features.shape[0], -1).double()
    if labels.shape != (f.shape[0],):
        raise ValueError(f"labels {tuple(labels.shape)} do not match {f.shape[0]} features")
    C = int(num_classes or int(labels.max()) + 1)
    counts = torch.bincount(labels, minlength=C).double()
    sums = torch.zeros(C, f.shape[1], dtype=torch.float64).index_add_(0, labels, f)
    centred = f - (sums / counts.clamp_min(1).unsqueeze(1))[labels]
    scatter = torch.zeros(C, dtype=torch.float64).index_add_(0, labels, centred.pow(2).sum(1))
    d = 2 * counts * scatter
    d = torch.where(counts > 0, d, torch.full_like(d, float("nan")))
    if not normalise:
        return d
    d = d / counts.pow(2)
    if reference_features is not None:
        if reference_labels is None:
            raise ValueError("reference_features need reference_labels")
        r = reference_features.reshape(reference_features.shape[0], -1).double()
        rc = torch.bincount(reference_labels, minlength=C).double()
        rs = torch.zeros(C, dtype=torch.float64).index_add_(0, reference_labels, r.pow(2).sum(1))
        d = d / (rs / rc)
    return d
