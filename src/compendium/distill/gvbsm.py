"""G-VBSM (Shao, Yin, Zhou, Zhang & Shen, CVPR 2024, "Generalized Large-Scale Data Condensation via Various
Backbone and Statistical Matching"): the recovery of its CIFAR code, producing a :class:`~.sets.DistilledSet`.

ReLA's Table 5 compares it beside SRe2L and RDED without describing it; what follows is the authors' CIFAR-10 /
CIFAR-100 recovery script (``data_synthesis_with_svd_with_db_with_all_statistic.py`` and its ``recover.sh``):

* **various backbones**: several trained networks, one per iteration in turn (iteration t uses backbone
  ``t mod K``, the count running on across batches);
* **generalized statistical matching** (GSM): ``r_bn * sum_l m_l term_l`` over the layers of that backbone in module
  order (``m_1`` = ``first_multiplier`` on the first, 1 elsewhere). A BatchNorm layer's term is
  ``||var_run - v||_2 + ||mu_run - mu||_2`` on its input's per-channel biased variance and mean; a convolution's
  term compares its input's per-channel mean and variance and the mean and variance of every 4x4 patch position
  (the map resized bilinearly to a multiple of 4) with the same statistics of the real training set
  (:func:`conv_statistics`, measured once per backbone under RandomCrop(pad 4) + flip). Each convolution's term is
  dropped (zero) with probability ``drop_rate`` per forward;
* the statistics compared are moving averages over the iterations (momentum ``momentum``, the code's
  ``training_momentum`` alpha) carrying the current batch's gradient: value ``ema``, gradient of the batch's own
  statistic (``ema + s - s.detach()``);
* a spectrum term, ``nuc_norm * sum_c KL(softmax(lambda_c / tau) || softmax(lambda_c))`` over the eigenvalues
  ``lambda_c`` of each class's Gram matrix of its flattened augmented images in the batch, which flattens the
  spectrum (diversity within a class);
* CE on the augmented batch (RandomCrop(pad 4) and a flip drawn once for the whole batch, as torchvision's
  transforms on a batch tensor, then a random roll of up to ``jitter`` pixels), Adam (betas 0.5, 0.9, cosine
  decay), pixels clipped to the valid range after every step; N(0, 1) initialisation; batches of ``batch_size``
  images holding every ipc index of one class after another; the last iterate is kept.

Differences, stated: the code draws the drops, crops and rolls with Python's and torch's global generators, we with
one seeded generator; its eigenvalues come from ``torch.linalg.eigvals`` of the (symmetric) Gram matrix, ours from
``eigvalsh`` (the same values); it pools the images to 32 x 32 before the Gram matrix (the identity at CIFAR's size),
we keep their own size; its statistics loader shuffles the real images, :func:`conv_statistics` takes them in order
(the same means; the batch variances average over other batches); it saves the images as 8-bit PNGs, we keep the
float iterate; its relabelling
ensemble belongs to the post-training, which ReLA Table 5 replaces by one shared post-training (the caller's
``relabel_teacher``, the SRe2L / RDED teacher).

Example:
    >>> import torch
    >>> from compendium.distill import evaluate as E
    >>> nets = [E.build_student(E.EvalConfig(arch="convnet", arch_kwargs={"width": 4, "depth": 2, "norm": "batch"}),
    ...                         (1, 8, 8), 2, seed=s).eval() for s in (0, 1)]
    >>> x, y = torch.randint(0, 256, (8, 1, 8, 8), dtype=torch.uint8), torch.arange(8) % 2
    >>> stats = [conv_statistics(n, x, (0.5,), (0.5,)) for n in nets]
    >>> d = gvbsm_synthesize(nets, stats, x, y, 2, (0.5,), (0.5,), iterations=2, batch_size=4)
    >>> tuple(d.images.shape), d.labels.tolist(), d.method
    ((4, 1, 8, 8), [0, 0, 1, 1], 'gvbsm')
"""

from __future__ import annotations

from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm

from compendium.core import augment
from compendium.core.models import bn_channels_first
from compendium.core.probe import to_float
from compendium.distill import sets
from compendium.distill.evaluate import pad_value, random_crop
from compendium.distill.inversion import check_real_images, cosine_lr, jitter_batch, pixel_bounds, soft_relabel
from compendium.distill.sets import DistilledSet

#: The code's defaults for CIFAR-10 / CIFAR-100 (``recover.sh`` and the script's arguments).
DEFAULTS = dict(
    iterations=4000,
    lr=0.05,
    r_bn=0.01,
    first_multiplier=10.0,
    nuc_norm=1.0,
    tau=4.0,
    momentum=0.8,
    drop_rate=0.4,
    batch_size=100,
)
PATCH = 4  # the side of a statistics patch


def _channel_stats(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-channel mean and biased variance over every dim but 1."""
    dims = (0, *range(2, x.ndim))
    return x.mean(dims), x.var(dims, unbiased=False)


def _patch_stats(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and biased variance of each 4x4 patch position over batch, channels and its 16 pixels, the map first
    resized bilinearly to the next multiples of 4 (the code's ``div_four_mul``; identity when already one)."""
    b, c, h, w = x.shape
    nh, nw = -(-h // PATCH) * PATCH, -(-w // PATCH) * PATCH
    if (nh, nw) != (h, w):
        x = F.interpolate(x, (nh, nw), mode="bilinear")
    u, v = nh // PATCH, nw // PATCH
    p = x.reshape(b, c, u, PATCH, v, PATCH).permute(2, 4, 0, 1, 3, 5).reshape(u * v, -1)
    return p.mean(1), p.var(1, unbiased=False)


def matched_layers(model: nn.Module) -> list[nn.Module]:
    """The layers GSM matches, in module order: every BatchNorm and every 2-d convolution."""
    return [m for m in model.modules() if isinstance(m, (_BatchNorm, nn.Conv2d))]


@torch.no_grad()
def conv_statistics(
    model: nn.Module,
    images_u8: torch.Tensor,
    mean,
    std,
    *,
    batch_size: int = 64,
    crop_padding: int = 4,
    flip: bool = True,
    seed: int = 0,
) -> list[dict]:
    """The real training set's statistics of every convolution's input of ``model`` (eval mode), in module order:
    ``{"mean", "var"}`` per channel and ``{"patch_mean", "patch_var"}`` per 4x4 patch position, each the average
    of the batches' statistics weighted by their sizes (the code's running sums), the images seen under
    RandomCrop(``crop_padding``) and a horizontal flip as the code's data loader shows them."""
    convs = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
    if not convs:
        raise ValueError("the model has no convolution: GSM's statistics need one")
    n = images_u8.shape[0]
    acc: list[dict] = [{} for _ in convs]

    def record(i, module, inputs):
        x = inputs[0].float()
        bs = x.shape[0]
        for k, t in zip(("mean", "var", "patch_mean", "patch_var"), (*_channel_stats(x), *_patch_stats(x))):
            acc[i][k] = acc[i].get(k, 0.0) + t * (bs / n)

    dev = next(model.parameters()).device
    was = model.training
    model.eval()
    g = torch.Generator(device="cpu").manual_seed(seed)
    handles = [m.register_forward_pre_hook(lambda mod, inp, i=i: record(i, mod, inp)) for i, m in enumerate(convs)]
    try:
        fill = pad_value(mean, std)
        for s in range(0, n, batch_size):
            x = to_float(images_u8[s : s + batch_size], mean, std)
            x = random_crop(x, crop_padding, fill, generator=g)
            if flip:
                x = augment.horizontal_flip(x, 0.5, generator=g)
            model(x.to(dev))
    finally:
        for h in handles:
            h.remove()
        model.train(was)
    return [{k: v.detach().to(dev) for k, v in a.items()} for a in acc]


class GSMHooks:
    """Forward pre-hooks on every BatchNorm and convolution of one backbone (G-VBSM's BNFeatureHook and
    ConvFeatureHook): each forward sets :attr:`terms`, one term per layer in module order (0 for a dropped
    convolution), against the running statistics (BN) or ``conv_stats`` (convolutions). The moving averages
    persist across forwards, as the code's hook objects do across iterations and batches."""

    def __init__(
        self,
        model: nn.Module,
        conv_stats: Sequence[dict],
        momentum: float,
        drop_rate: float,
        generator: torch.Generator,
    ):
        self.layers = matched_layers(model)
        convs = [m for m in self.layers if isinstance(m, nn.Conv2d)]
        if len(conv_stats) != len(convs):
            raise ValueError(f"{len(conv_stats)} convolution statistics for {len(convs)} convolutions")
        if not any(isinstance(m, _BatchNorm) for m in self.layers):
            raise ValueError("the backbone has no BatchNorm layer: G-VBSM matches BN statistics")
        it = iter(conv_stats)
        self.targets = [next(it) if isinstance(m, nn.Conv2d) else None for m in self.layers]
        self.momentum, self.drop_rate, self.generator = float(momentum), float(drop_rate), generator
        self.ema: list[dict | None] = [None] * len(self.layers)
        self.terms: list[torch.Tensor | None] = [None] * len(self.layers)
        self._handles: list = []

    def _ema(self, i: int, stats: dict) -> dict:
        """The moving averages' values with the current statistics' gradients (``ema + s - s.detach()``)."""
        with torch.no_grad():
            prev = self.ema[i]
            self.ema[i] = (
                {k: v.detach().clone() for k, v in stats.items()}
                if prev is None
                else {k: self.momentum * prev[k] + (1 - self.momentum) * v.detach() for k, v in stats.items()}
            )
        return {k: self.ema[i][k] + v - v.detach() for k, v in stats.items()}

    def _record(self, i: int, module: nn.Module, inputs: tuple) -> None:
        x = inputs[0]
        if isinstance(module, _BatchNorm):
            mu, var = _channel_stats(bn_channels_first(module, x))
            s = self._ema(i, {"mean": mu, "var": var})
            self.terms[i] = (module.running_var - s["var"]).norm() + (module.running_mean - s["mean"]).norm()
            return
        if float(torch.rand(1, generator=self.generator)) > 1.0 - self.drop_rate:  # the code's drop
            self.terms[i] = x.new_zeros(())
            return
        mu, var = _channel_stats(x)
        pm, pv = _patch_stats(x)
        s = self._ema(i, {"mean": mu, "var": var, "patch_mean": pm, "patch_var": pv})
        t = self.targets[i]
        self.terms[i] = sum((t[k] - s[k]).norm() for k in ("var", "mean", "patch_mean", "patch_var"))

    def __enter__(self) -> "GSMHooks":
        self._handles = [
            m.register_forward_pre_hook(lambda mod, inp, i=i: self._record(i, mod, inp))
            for i, m in enumerate(self.layers)
        ]
        return self

    def __exit__(self, *exc) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []

    def loss(self, first_multiplier: float) -> torch.Tensor:
        """``sum_l m_l term_l`` of the last forward, ``m_1`` = ``first_multiplier``."""
        if any(t is None for t in self.terms):
            raise ValueError("run a forward pass inside the hooks first")
        return sum(t * (first_multiplier if i == 0 else 1.0) for i, t in enumerate(self.terms))


def spectrum_loss(x: torch.Tensor, labels: torch.Tensor, tau: float) -> torch.Tensor:
    """``sum_c KL(softmax(lambda_c / tau) || softmax(lambda_c))`` over the classes of the batch, ``lambda_c`` the
    eigenvalues of the Gram matrix of class c's flattened images (the target side without gradient). A class with
    one image contributes 0."""
    flat = x.flatten(1)
    total = flat.new_zeros(())
    for c in labels.unique():
        xc = flat[labels == c]
        lam = torch.linalg.eigvalsh(xc @ xc.T)
        total = total + F.kl_div(lam.log_softmax(-1), (lam / tau).softmax(-1).detach(), reduction="sum")
    return total


def _augment(x: torch.Tensor, padding: int, jitter: int, g: torch.Generator) -> torch.Tensor:
    """RandomCrop(pad ``padding``, zero fill) drawn once for the whole batch, then SRe2L's whole-batch flip and roll of
    up to ``jitter`` pixels (:func:`compendium.distill.inversion.jitter_batch`): the code's recovery augmentation on a
    batch tensor."""
    if padding:
        h, w = x.shape[-2:]
        oy, ox = torch.randint(0, 2 * padding + 1, (2,), generator=g).tolist()
        x = F.pad(x, (padding,) * 4)[:, :, oy : oy + h, ox : ox + w]
    return jitter_batch(x, jitter, True, None, g)


def gvbsm_synthesize(
    backbones: Sequence[nn.Module],
    conv_stats: Sequence[Sequence[dict]],
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    ipc: int,
    mean,
    std,
    *,
    num_classes: int | None = None,
    iterations: int = DEFAULTS["iterations"],
    lr: float = DEFAULTS["lr"],
    r_bn: float = DEFAULTS["r_bn"],
    first_multiplier: float = DEFAULTS["first_multiplier"],
    nuc_norm: float = DEFAULTS["nuc_norm"],
    tau: float = DEFAULTS["tau"],
    momentum: float = DEFAULTS["momentum"],
    drop_rate: float = DEFAULTS["drop_rate"],
    batch_size: int = DEFAULTS["batch_size"],
    crop_padding: int = 4,
    jitter: int | None = None,
    relabel_teacher: nn.Module | None = None,
    relabel_temperature: float | None = 1.0,
    seed: int = 0,
    dataset: str = "fashion-mnist",
) -> DistilledSet:
    """G-VBSM's set of ``ipc`` images per class recovered against ``backbones`` (trained, with BatchNorm), whose
    convolution statistics of the real images are ``conv_stats`` (:func:`conv_statistics`, one list per backbone).
    ``jitter`` defaults to the image side (the code's 32 at 32 px); ``relabel_teacher`` (default: the first
    backbone) gives the soft labels (:func:`compendium.distill.inversion.teacher_soft_labels`). Every argument is
    recorded in ``params``, with ``loss_curve``, the total loss per iteration averaged over the batches."""
    inferred = check_real_images(images_u8, labels, ipc)
    C = int(num_classes or inferred)
    if not backbones or len(conv_stats) != len(backbones):
        raise ValueError(f"{len(backbones)} backbones and {len(conv_stats)} statistics lists: give one per backbone")
    if not 0.0 <= drop_rate < 1.0 or not 0.0 <= momentum < 1.0 or tau <= 0 or batch_size < 1 or iterations < 1:
        raise ValueError("need 0 <= drop_rate < 1, 0 <= momentum < 1, tau > 0, batch_size >= 1, iterations >= 1")
    c, h, w = images_u8.shape[1:]
    jitter = w if jitter is None else int(jitter)
    dev = next(backbones[0].parameters()).device
    for b in backbones:
        b.eval().requires_grad_(False)
    g = torch.Generator().manual_seed(seed)
    hooks = [GSMHooks(b, s, momentum, drop_rate, g) for b, s in zip(backbones, conv_stats)]  # kept across batches
    lo, hi = (t.to(dev).view(1, -1, 1, 1) for t in pixel_bounds(mean, std))
    order = torch.arange(C).repeat_interleave(ipc)  # every ipc index of class 0, then class 1, ...
    images, curves, step = [], [], 0
    with sets.measure(dev) as cost:
        for s in range(0, len(order), batch_size):
            y = order[s : s + batch_size].to(dev)
            x = torch.randn(len(y), c, h, w, generator=g).to(dev).requires_grad_(True)
            opt = torch.optim.Adam([x], lr=lr, betas=(0.5, 0.9), eps=1e-8)
            curve = []
            for t in range(iterations):
                for group in opt.param_groups:
                    group["lr"] = cosine_lr(lr, t, iterations)
                xa = _augment(x, crop_padding, jitter, g)
                k = step % len(backbones)  # the backbones in turn, the count running on across batches
                step += 1
                with hooks[k]:
                    logits = backbones[k](xa)
                loss = F.cross_entropy(logits, y) + r_bn * hooks[k].loss(first_multiplier)
                if nuc_norm:
                    loss = loss + nuc_norm * spectrum_loss(xa, y, tau)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                with torch.no_grad():
                    x.copy_(torch.maximum(torch.minimum(x, hi), lo))
                curve.append(loss.detach())  # no device sync per iteration
            images.append(x.detach().cpu())
            curves.append(torch.stack(curve).float().cpu())
        out = torch.cat(images)
        soft = soft_relabel(
            relabel_teacher if relabel_teacher is not None else backbones[0], out.to(dev), relabel_temperature, C
        )
    params = {
        "backbones": [type(b[0] if isinstance(b, nn.Sequential) else b).__name__ for b in backbones],
        "iterations": iterations,
        "lr": lr,
        "r_bn": r_bn,
        "first_multiplier": first_multiplier,
        "nuc_norm": nuc_norm,
        "tau": tau,
        "momentum": momentum,
        "drop_rate": drop_rate,
        "batch_size": batch_size,
        "crop_padding": crop_padding,
        "jitter": jitter,
        "ipc": int(ipc),
        "init": "noise",
        "relabel_temperature": relabel_temperature,
        "loss_curve": torch.stack([cv[: min(map(len, curves))] for cv in curves]).mean(0).tolist(),
    }
    return DistilledSet(
        out,
        order.clone(),
        C,
        tuple(mean),
        tuple(std),
        "gvbsm",
        dataset,
        params,
        seed,
        soft,
        cost.seconds,
        cost.peak_memory_bytes,
    )
