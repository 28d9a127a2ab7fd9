"""Self-supervised dataset distillation: KRR-ST (Lee et al., ICLR 2024) and SSDD-PAA (Yu, Yao, Chiu,
ICLR 2025, "Boost self-supervised dataset distillation via parameterization, predefined augmentation,
and approximation"). Both share this code.

* :func:`krr_predict`: the closed-form KRR head of the outer loss (SSDD Eq. 3; KRR-ST code:
  ``lambda = 1e-6 tr(K)`` with the trace detached, a bias column of ones).
* :func:`views`: the predefined augmentations (Sec. 3.3, Table 12: rotation, jigsaw, crop),
  differentiable and deterministic, enumerated in the outer loss.
* :class:`FreeSet` (KRR-ST: free images and free targets) and :class:`BasisSet` (SSDD: images and
  targets as coefficients over PCA-initialised bases, Sec. 3.2; targets of the augmented views
  ``C^y_a``, Sec. 3.3); both ``build()`` the training pairs ``(X~, Y~)``.
* :class:`ModelPool`: KRR-ST's pool of partially trained inner models.
* :func:`distill`: Algorithm 1 (outer AdamW on the set, linear decay; one pool model per step).
* :class:`Approx` / :func:`fit_approx`: the approximation networks ``Q_a`` (Sec. 3.4) and the
  Table 11 alternatives (same / bias / ideal).
* :func:`ssdd_floats`, :func:`images_for_budget`, :func:`free_images_for_budget`: the storage budget
  in floats (both accounting modes of the baselines).
* :class:`TargetSet`: the released set (images, regression targets, method, params, cost) on disk, in
  the one set format (:func:`compendium.distill.sets.save_tensors`, kind ``targets``).
* :mod:`compendium.distill.ssdd.experiments`: the stages' orchestration (jobs, tables, evaluations).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from compendium.core import data, models
from compendium.core.probe import linear_probe, to_float
from compendium.core.progress import Rate, say
from compendium.distill import coresets
from compendium.distill.sets import SetError, load_tensors, measure, save_tensors

AUGMENTATIONS = ("none", "rotation", "jigsaw", "crop")
APPROX_MODES = ("same", "bias", "q", "ideal")
INITS = ("pca", "real", "random")


class SSDDError(ValueError):
    """A bad SSDD / KRR-ST configuration or set file."""


# --- the KRR head (Eq. 3) ----------------------------------------------------------------------


def with_bias(f: torch.Tensor) -> torch.Tensor:
    """``[f, 1]``: the bias column of KRR-ST's features."""
    return torch.cat([f, torch.ones(f.shape[0], 1, dtype=f.dtype, device=f.device)], 1)


def krr_predict(
    f_query: torch.Tensor,
    f_syn: torch.Tensor,
    y_syn: torch.Tensor,
    lam_rel: float = 1e-6,
    bias: bool = True,
    detach_trace: bool = True,
) -> torch.Tensor:
    """KRR prediction at ``f_query`` from the synthetic pairs (dual form, SSDD Eq. 3):
    ``F_q F_s^T (F_s F_s^T + lam I)^{-1} Y_s`` with ``lam = lam_rel * tr(F_s F_s^T)`` (the trace
    detached, as KRR-ST's code, unless ``detach_trace`` is False) and, with ``bias``, a column of ones
    appended to both feature matrices."""
    if f_query.shape[1] != f_syn.shape[1] or f_syn.shape[0] != y_syn.shape[0]:
        raise SSDDError(f"shapes: query {tuple(f_query.shape)}, syn {tuple(f_syn.shape)}, targets {tuple(y_syn.shape)}")
    fs, fq = (with_bias(f_syn), with_bias(f_query)) if bias else (f_syn, f_query)
    k = fs @ fs.T
    lam = lam_rel * (torch.trace(k).detach() if detach_trace else torch.trace(k))
    alpha = torch.linalg.solve(k + lam * torch.eye(k.shape[0], dtype=k.dtype, device=k.device), y_syn)
    return (fq @ fs.T) @ alpha


def krr_predict_primal(
    f_query: torch.Tensor, f_syn: torch.Tensor, y_syn: torch.Tensor, lam_rel: float = 1e-6, bias: bool = True
) -> torch.Tensor:
    """The same prediction in primal form, ``F_q (F_s^T F_s + lam I)^{-1} F_s^T Y_s`` (the ridge
    head W*; equal to :func:`krr_predict` by the push-through identity)."""
    fs, fq = (with_bias(f_syn), with_bias(f_query)) if bias else (f_syn, f_query)
    lam = lam_rel * (fs * fs).sum().detach()  # tr(F_s F_s^T) = tr(F_s^T F_s)
    g = fs.T @ fs
    w = torch.linalg.solve(g + lam * torch.eye(g.shape[0], dtype=g.dtype, device=g.device), fs.T @ y_syn)
    return fq @ w


# --- predefined augmentations (Sec. 3.3, Table 12) ---------------------------------------------------------


def num_views(kind: str) -> int:
    """A, the number of augmented views besides the original."""
    if kind not in AUGMENTATIONS:
        raise SSDDError(f"unknown augmentation {kind!r}; known: {AUGMENTATIONS}")
    return {"none": 0, "rotation": 3, "jigsaw": 3, "crop": 5}[kind]


def crop_size(size: int) -> int:
    """The crop side of Table 12's crop views: 20/32 of the image side (18 px at 28 px)."""
    return max(1, int(round(size * 20 / 32)))


def views(x: torch.Tensor, kind: str) -> list[torch.Tensor]:
    """The A predefined views of ``x`` ``[B, C, H, W]`` (differentiable, deterministic):

    * rotation: by 90, 180, 270 degrees;
    * jigsaw: 2x2 patches; swap left/right, top/bottom, both (H, W even);
    * crop: the four corner crops and the centre crop of side :func:`crop_size`, resized bilinearly
      back to H x W (5 views)."""
    a = num_views(kind)
    if a == 0:
        return []
    if x.dim() != 4:
        raise SSDDError(f"views expects [B, C, H, W], got {tuple(x.shape)}")
    h, w = x.shape[-2:]
    if kind == "rotation":
        if h != w:
            raise SSDDError("rotation views need square images")
        return [torch.rot90(x, k, (2, 3)) for k in (1, 2, 3)]
    if kind == "jigsaw":
        if h % 2 or w % 2:
            raise SSDDError(f"jigsaw views need even sides, got {h}x{w}")
        lr = torch.cat([x[..., w // 2 :], x[..., : w // 2]], -1)
        tb = torch.cat([x[..., h // 2 :, :], x[..., : h // 2, :]], -2)
        both = torch.cat([lr[..., h // 2 :, :], lr[..., : h // 2, :]], -2)
        return [lr, tb, both]
    c = crop_size(min(h, w))
    tops = [(0, 0), (0, w - c), (h - c, 0), (h - c, w - c), ((h - c) // 2, (w - c) // 2)]
    return [
        F.interpolate(x[..., t : t + c, l : l + c], size=(h, w), mode="bilinear", align_corners=False) for t, l in tops
    ]


def augment_set(x: torch.Tensor, kind: str) -> torch.Tensor:
    """``X~ = [X, tau_1(X), ..., tau_A(X)]`` (Sec. 3.3), ``[(A + 1) B, C, H, W]``."""
    return torch.cat([x] + views(x, kind))


# --- storage budget in floats (Sec. 4, Table 5) ------------------------------------------------------


def approx_floats(mode: str, v: int, a: int, hidden: int = 4, m: int = 0) -> int:
    """Floats of the augmented targets' model: ``q`` = A two-layer MLPs V -> hidden -> V with biases;
    ``bias`` = A vectors of V; ``same`` = 0; ``ideal`` = every ``C^y_a`` (A m V)."""
    if mode not in APPROX_MODES:
        raise SSDDError(f"unknown approximation mode {mode!r}; known: {APPROX_MODES}")
    return {"same": 0, "bias": a * v, "q": a * (v * hidden + hidden + hidden * v + v), "ideal": a * m * v}[mode]


def ssdd_floats(m: int, u: int, v: int, d_xb: int, d_y: int, a: int, approx: str = "q", hidden: int = 4) -> int:
    """Stored floats of an SSDD set: ``B^x`` (U d_xb) + ``B^y`` (V d_y) + ``C^x, C^y`` (m (U + V)) +
    the augmented targets' model (:func:`approx_floats`)."""
    return u * d_xb + v * d_y + m * (u + v) + approx_floats(approx, v, a, hidden, m)


def images_for_budget(
    budget: int, u: int, v: int, d_xb: int, d_y: int, a: int, approx: str = "q", hidden: int = 4
) -> int:
    """The largest m whose :func:`ssdd_floats` fits ``budget`` (the paper fills the budget; m is
    never stated). Raises if not even one image fits."""
    per = u + v + (a * v if approx == "ideal" else 0)
    fixed = u * d_xb + v * d_y + (0 if approx == "ideal" else approx_floats(approx, v, a, hidden))
    m = (budget - fixed) // per
    if m < 1:
        raise SSDDError(f"a budget of {budget} floats holds no image with U={u}, V={v} (bases {fixed} floats)")
    return int(m)


def free_floats(m: int, d_img: int, d_y: int, count_targets: bool) -> int:
    """Floats of m free images (KRR-ST, random, k-means) with their targets counted or not."""
    return m * (d_img + (d_y if count_targets else 0))


def free_images_for_budget(budget: int, d_img: int, d_y: int, count_targets: bool) -> int:
    """m for a free-image set at ``budget`` floats, in one of the two accounting modes."""
    m = budget // (d_img + (d_y if count_targets else 0))
    if m < 1:
        raise SSDDError(f"a budget of {budget} floats holds no image of {d_img} floats")
    return int(m)


# --- PCA bases ------------------------------------------------------------------------------------


def pca_basis(x: torch.Tensor, k: int, center: bool = False) -> torch.Tensor:
    """The top-k principal directions of the rows of ``x`` as orthonormal rows ``[k, d]``; uncentred
    (the paper's ``X = C B`` has no mean term) unless ``center``."""
    if not 1 <= k <= min(x.shape):
        raise SSDDError(f"k={k} components from a {tuple(x.shape)} matrix")
    xx = x - x.mean(0) if center else x
    _, _, vh = torch.linalg.svd(xx.double(), full_matrices=False)
    return vh[:k].to(x.dtype)


def project(y: torch.Tensor, basis: torch.Tensor) -> torch.Tensor:
    """Least-squares coefficients ``C`` with ``C B ~ y`` (``y B^T`` for orthonormal rows)."""
    return y @ torch.linalg.pinv(basis)


def downsample(x: torch.Tensor, s: int) -> torch.Tensor:
    if s == 1:
        return x
    return F.interpolate(x, scale_factor=1 / s, mode="bilinear", align_corners=False, antialias=True)


def upsample(x: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
    """D(., s): bilinear upsampling (differentiable)."""
    if tuple(x.shape[-2:]) == tuple(size):
        return x
    return F.interpolate(x, size=size, mode="bilinear", align_corners=False)


# --- the two set parameterisations -----------------------------------------------------------


class FreeSet(nn.Module):
    """KRR-ST's set: m free images and m free targets (initialised from real images and the teacher's
    representations of them); optional predefined views share the original's target."""

    method = "krr_st"

    def __init__(self, images: torch.Tensor, targets: torch.Tensor, augmentation: str = "none"):
        super().__init__()
        num_views(augmentation)
        self.x = nn.Parameter(images.detach().clone().float())
        self.y = nn.Parameter(targets.detach().clone().float())
        self.augmentation = augmentation

    @property
    def m(self) -> int:
        return self.x.shape[0]

    def images(self) -> torch.Tensor:
        return self.x

    def targets(self) -> torch.Tensor:
        return self.y

    def build(self) -> tuple[torch.Tensor, torch.Tensor]:
        a = num_views(self.augmentation)
        return augment_set(self.x, self.augmentation), self.y.repeat(a + 1, 1)

    def floats(self, count_targets: bool = True) -> int:
        return free_floats(self.m, self.x[0].numel(), self.y.shape[1], count_targets)


class BasisSet(nn.Module):
    """SSDD's set (Sec. 3.2-3.3): ``X_s = D(C^x B^x, s)``, ``Y_s = C^y B^y`` and the augmented views'
    targets ``C^y_a B^y``; every factor is learned."""

    method = "ssdd"

    def __init__(
        self,
        bx: torch.Tensor,
        cx: torch.Tensor,
        by: torch.Tensor,
        cy: torch.Tensor,
        cya: torch.Tensor,
        image_shape: tuple[int, int, int],
        s: int,
        augmentation: str = "rotation",
    ):
        super().__init__()
        a = num_views(augmentation)
        c, h, w = image_shape
        if h % s or w % s:
            raise SSDDError(f"downscale factor {s} does not divide {h}x{w}")
        if bx.shape[1] != c * (h // s) * (w // s) or cx.shape[1] != bx.shape[0] or cy.shape[1] != by.shape[0]:
            raise SSDDError(
                f"basis shapes: Bx {tuple(bx.shape)}, Cx {tuple(cx.shape)}, By {tuple(by.shape)}, Cy {tuple(cy.shape)}"
            )
        if cx.shape[0] != cy.shape[0] or tuple(cya.shape) != (a, cy.shape[0], by.shape[0]):
            raise SSDDError(
                f"coefficients: Cx {tuple(cx.shape)}, Cy {tuple(cy.shape)}, Cya {tuple(cya.shape)} (A = {a})"
            )
        self.bx, self.cx = nn.Parameter(bx.detach().clone().float()), nn.Parameter(cx.detach().clone().float())
        self.by, self.cy = nn.Parameter(by.detach().clone().float()), nn.Parameter(cy.detach().clone().float())
        self.cya = nn.Parameter(cya.detach().clone().float())
        self.image_shape, self.s, self.augmentation = tuple(image_shape), int(s), augmentation

    @property
    def m(self) -> int:
        return self.cx.shape[0]

    def images(self) -> torch.Tensor:
        c, h, w = self.image_shape
        low = (self.cx @ self.bx).reshape(self.m, c, h // self.s, w // self.s)
        return upsample(low, (h, w))

    def targets(self) -> torch.Tensor:
        return self.cy @ self.by

    def build(self) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.images()
        ys = [self.cy @ self.by] + [self.cya[a] @ self.by for a in range(self.cya.shape[0])]
        return augment_set(x, self.augmentation), torch.cat(ys)

    def floats(self, approx: str = "q", hidden: int = 4) -> int:
        return ssdd_floats(
            self.m,
            self.bx.shape[0],
            self.by.shape[0],
            self.bx.shape[1],
            self.by.shape[1],
            self.cya.shape[0],
            approx,
            hidden,
        )


def init_basis_set(
    real: torch.Tensor,
    real_targets: torch.Tensor,
    teacher: Callable[[torch.Tensor], torch.Tensor],
    m: int,
    u: int,
    v: int,
    s: int,
    augmentation: str = "rotation",
    init: str = "pca",
    seed: int = 0,
    center: bool = False,
) -> BasisSet:
    """SSDD's initialisation (Sec. 3.2-3.3, Table 4) from normalised real images ``[n, C, H, W]`` and the
    teacher's representations of them:

    * ``pca`` (III): B^x = top-U PCs of the downsampled images, B^y = top-V PCs of the targets;
      C^x, C^y = projections of m random real images and of their targets;
    * ``real`` (II): B^x = U random downsampled real images, B^y = the targets of V random real
      images; C^x, C^y ~ N(0, 1);
    * ``random`` (I): bases and coefficients ~ N(0, 1).

    C^y_a = the projection onto B^y of the teacher's representation of the a-th view of the initial
    reconstructed images, for every init."""
    if init not in INITS:
        raise SSDDError(f"unknown init {init!r}; known: {INITS}")
    n, c, h, w = real.shape
    if m > n:
        raise SSDDError(f"m={m} images from a pool of {n}")
    g = torch.Generator().manual_seed(seed)
    xd = downsample(real, s).reshape(n, -1)
    idx = torch.randperm(n, generator=g)[:m]
    if init == "pca":
        bx, by = pca_basis(xd, u, center), pca_basis(real_targets, v, center)
        cx, cy = project(xd[idx], bx), project(real_targets[idx], by)
    elif init == "real":
        bx = xd[torch.randperm(n, generator=g)[:u]].clone()
        by = real_targets[torch.randperm(n, generator=g)[:v]].clone()
        cx, cy = torch.randn(m, u, generator=g), torch.randn(m, v, generator=g)
    else:
        bx, by = torch.randn(u, xd.shape[1], generator=g), torch.randn(v, real_targets.shape[1], generator=g)
        cx, cy = torch.randn(m, u, generator=g), torch.randn(m, v, generator=g)
    a = num_views(augmentation)
    cya = torch.zeros(a, m, v)
    probe = BasisSet(bx, cx, by, cy, cya, (c, h, w), s, augmentation)
    if a:
        with torch.no_grad():
            x0 = probe.images()
            cya = torch.stack([project(teacher(vw).float(), by) for vw in views(x0, augmentation)])
        probe = BasisSet(bx, cx, by, cy, cya, (c, h, w), s, augmentation)
    return probe


# --- the inner models (KRR-ST's model pool) --------------------------------------------------------


class InnerModel(nn.Module):
    """A backbone and a linear head to the target dimension (trained by MSE, Eq. 2)."""

    def __init__(self, backbone: nn.Module, d_y: int):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Linear(backbone.feature_dim, d_y)

    def forward(self, x):
        return self.head(self.backbone(x))


@dataclass
class PoolConfig:
    size: int = 10  # L
    max_steps: int = 1000  # Z
    lr: float = 0.1
    momentum: float = 0.9
    weight_decay: float = 1e-3  # KRR-ST code


class ModelPool:
    """L inner models, model l trained online for z_l steps by full-batch SGD on the current set and
    re-initialised when z_l reaches Z (KRR-ST; SSDD Sec. 3.1). The initial z_l ~ U{1, Z-1}."""

    def __init__(
        self, factory: Callable[[int], nn.Module], cfg: PoolConfig, x: torch.Tensor, y: torch.Tensor, seed: int = 0
    ):
        if cfg.size < 1 or cfg.max_steps < 2:
            raise SSDDError(f"pool needs size >= 1 and max_steps >= 2, got {cfg}")
        self.factory, self.cfg = factory, cfg
        self.g = torch.Generator().manual_seed(seed)
        self._births = 0
        self.models, self.opts, self.z = [], [], []
        for _ in range(cfg.size):
            net, opt = self._new()
            z = int(torch.randint(1, cfg.max_steps, (1,), generator=self.g))
            for _ in range(z):
                self._sgd(net, opt, x, y)
            self.models.append(net), self.opts.append(opt), self.z.append(z)
        self.initial_steps = sum(self.z)

    def _new(self):
        net = self.factory(self._births)
        self._births += 1
        opt = torch.optim.SGD(
            net.parameters(), lr=self.cfg.lr, momentum=self.cfg.momentum, weight_decay=self.cfg.weight_decay
        )
        return net, opt

    @staticmethod
    def _sgd(net, opt, x, y):
        net.train()
        loss = F.mse_loss(net(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    def sample(self) -> int:
        return int(torch.randint(0, len(self.models), (1,), generator=self.g))

    def update(self, j: int, x: torch.Tensor, y: torch.Tensor) -> None:
        """After an outer step: one more inner step for model j, or a fresh model once z_j = Z."""
        if self.z[j] < self.cfg.max_steps:
            self._sgd(self.models[j], self.opts[j], x, y)
            self.z[j] += 1
        else:
            self.models[j], self.opts[j] = self._new()
            self.z[j] = 0


# --- distillation (Algorithm 1) ------------------------------------------------------------------


@dataclass
class DistillConfig:
    steps: int = 30000
    lr: float = 1e-3
    final_lr_factor: float = 1e-3  # linear decay to this fraction (KRR-ST code)
    real_batch: int = 1024
    lam_rel: float = 1e-6
    pool: PoolConfig = field(default_factory=PoolConfig)
    seed: int = 0
    log_every: int = 0
    device: str = "cpu"  # where the set, the real batches and the pool train (the stage's GPU at paper scale)


def outer_loss(
    synset: nn.Module, backbone: nn.Module, x_real: torch.Tensor, y_real: torch.Tensor, lam_rel: float = 1e-6
) -> torch.Tensor:
    """Eq. 3: MSE between the real batch's targets and the KRR prediction from the built set."""
    xs, ys = synset.build()
    was = backbone.training
    backbone.eval()  # KRR-ST: the pool model in eval mode (BN running statistics)
    with torch.no_grad():
        fr = backbone(x_real)
    fs = backbone(xs)
    backbone.train(was)
    return F.mse_loss(krr_predict(fr, fs, ys, lam_rel), y_real)


def distill(
    synset: nn.Module,
    real: torch.Tensor,
    real_targets: torch.Tensor,
    factory: Callable[[int], nn.Module],
    cfg: DistillConfig,
) -> dict:
    """Algorithm 1 (KRR-ST's, with SSDD's set): for ``cfg.steps`` outer steps, sample a pool model,
    take an AdamW step on every factor of ``synset`` against Eq. 3 on a random real batch (targets
    precomputed), then advance that pool model. Returns the loss history and the cost."""
    if real.shape[0] != real_targets.shape[0]:
        raise SSDDError(f"{real.shape[0]} real images, {real_targets.shape[0]} targets")
    if cfg.steps < 0 or cfg.real_batch < 1 or not 0 < cfg.final_lr_factor <= 1:
        raise SSDDError(f"bad distillation config {cfg}")
    torch.manual_seed(cfg.seed)
    t0 = time.perf_counter()
    dev, home = torch.device(cfg.device), next(synset.parameters()).device
    synset.to(dev)  # in place; back to ``home`` at the end
    real, real_targets = real.to(dev), real_targets.to(dev)
    with torch.no_grad():
        x0, y0 = synset.build()
    pool = ModelPool(lambda i: factory(i).to(dev), cfg.pool, x0, y0, seed=cfg.seed)
    opt = torch.optim.AdamW(synset.parameters(), lr=cfg.lr)
    total = max(cfg.steps, 1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: 1 - (1 - cfg.final_lr_factor) * min(t, total) / total)
    g = torch.Generator().manual_seed(cfg.seed + 1)
    n = real.shape[0]
    losses = []
    rate = Rate(cfg.steps)
    for t in range(cfg.steps):
        j = pool.sample()
        idx = torch.randint(0, n, (min(cfg.real_batch, n),), generator=g)
        loss = outer_loss(synset, pool.models[j].backbone, real[idx], real_targets[idx], cfg.lam_rel)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        with torch.no_grad():
            xs, ys = synset.build()
        pool.update(j, xs, ys)
        if cfg.log_every and (t + 1) % cfg.log_every == 0:
            say(
                f"[distill {synset.method}] step {t + 1}/{cfg.steps}  outer loss {losses[-1]:.4f}  {rate.update(t + 1)}"
            )
    synset.to(home)
    return {"losses": losses, "seconds": time.perf_counter() - t0, "pool_initial_steps": pool.initial_steps}


# --- approximation networks (Sec. 3.4, Table 11) ----------------------------------------------------


class Approx(nn.Module):
    """The augmented views' coefficient shifts ``C^y_a - C^y`` predicted from ``C^y``:
    ``q`` = one 2-layer MLP per view (V -> hidden -> V, ReLU); ``bias`` = one learned vector per view;
    ``same`` = zero shift; ``ideal`` = the stored shifts themselves (ignores the budget)."""

    def __init__(self, mode: str, v: int, a: int, hidden: int = 4, ideal: torch.Tensor | None = None):
        super().__init__()
        if mode not in APPROX_MODES:
            raise SSDDError(f"unknown approximation mode {mode!r}; known: {APPROX_MODES}")
        self.mode, self.v, self.a, self.hidden = mode, v, a, hidden
        if mode == "q":
            self.nets = nn.ModuleList(
                nn.Sequential(nn.Linear(v, hidden), nn.ReLU(), nn.Linear(hidden, v)) for _ in range(a)
            )
        elif mode == "bias":
            self.bias = nn.Parameter(torch.zeros(a, v))
        elif mode == "ideal":
            if ideal is None or ideal.shape[0] != a or ideal.shape[2] != v:
                raise SSDDError("ideal mode needs the [A, m, V] shifts")
            self.register_buffer("shifts", ideal.detach().clone())

    def forward(self, cy: torch.Tensor) -> torch.Tensor:
        """``[A, m, V]`` shifts."""
        m = cy.shape[0]
        if self.mode == "q":
            return torch.stack([net(cy) for net in self.nets])
        if self.mode == "bias":
            return self.bias[:, None, :].expand(self.a, m, self.v)
        if self.mode == "ideal":
            return self.shifts
        return cy.new_zeros(self.a, m, self.v)

    def floats(self, m: int = 0) -> int:
        return approx_floats(self.mode, self.v, self.a, self.hidden, m)


def parse_approx(name: str) -> tuple[str, int]:
    """``"same"``, ``"bias"``, ``"ideal"`` or ``"q<hidden>"`` (e.g. ``"q4"``) as ``(mode, hidden)``."""
    if name in ("same", "bias", "ideal"):
        return name, 0
    if name.startswith("q") and name[1:].isdigit() and int(name[1:]) >= 1:
        return "q", int(name[1:])
    raise SSDDError(f"unknown approximation variant {name!r}: same, bias, ideal or q<hidden>")


def fit_approx(
    cy: torch.Tensor,
    cya: torch.Tensor,
    mode: str = "q",
    hidden: int = 4,
    steps: int = 2000,
    lr: float = 1e-2,
    seed: int = 0,
) -> tuple[Approx, float]:
    """Fit :class:`Approx` to ``C^y_a - C^y`` by full-batch Adam on the MSE (Sec. 3.4; the paper does not
    give the optimiser). Returns the model and its final MSE in coefficient space (Table 11's MSE)."""
    cy, target = cy.detach(), (cya - cy[None]).detach()
    torch.manual_seed(seed)
    model = Approx(mode, cy.shape[1], cya.shape[0], hidden, ideal=target if mode == "ideal" else None)
    params = list(model.parameters())
    if params:
        opt = torch.optim.Adam(params, lr=lr)
        for _ in range(steps):
            loss = F.mse_loss(model(cy), target)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    with torch.no_grad():
        mse = float(F.mse_loss(model(cy), target))
    return model, mse


def release(synset: BasisSet, approx: Approx) -> tuple[torch.Tensor, torch.Tensor]:
    """The released pairs (Sec. 3.4): ``X~ = [X_s, tau_a(X_s)]``, ``Y~ = [Y_s, Y_s + Q_a(C^y) B^y]``."""
    with torch.no_grad():
        x = augment_set(synset.images(), synset.augmentation)
        ys = synset.cy @ synset.by
        shifts = approx(synset.cy)
        y = torch.cat([ys] + [ys + shifts[a] @ synset.by for a in range(shifts.shape[0])])
    return x.detach(), y.detach()


# --- the released set on disk ------------------------------------------------------------------


@dataclass
class TargetSet:
    """Images (normalised float) and regression targets, with what made them."""

    images: torch.Tensor
    targets: torch.Tensor
    method: str
    floats: int
    params: dict = field(default_factory=dict)
    seed: int = 0
    synthesis_seconds: float = 0.0
    peak_memory_mb: float = 0.0
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.images.dim() != 4 or self.targets.dim() != 2 or self.images.shape[0] != self.targets.shape[0]:
            raise SSDDError(
                f"a target set needs [n, C, H, W] images and [n, d] targets, got "
                f"{tuple(self.images.shape)} and {tuple(self.targets.shape)}"
            )
        if not (torch.isfinite(self.images).all() and torch.isfinite(self.targets).all()):
            raise SSDDError(f"{self.method}: non-finite images or targets")

    def save(self, path: str | Path) -> Path:
        """Write the set with :func:`compendium.distill.sets.save_tensors` (kind ``targets``): images,
        targets and the tensors of ``extra`` (SSDD's bases) as tensors, the rest as JSON meta, except the
        synthesis time and peak memory (a loaded set has NaN and 0: the making stage's tables report them)."""
        tensors = {"images": self.images, "targets": self.targets}
        tensors.update({f"extra.{k}": v for k, v in self.extra.items() if isinstance(v, torch.Tensor)})
        meta = {
            k: v
            for k, v in asdict(self).items()  # timings vary between identical runs: not in the file
            if k not in ("images", "targets", "extra", "synthesis_seconds", "peak_memory_mb")
        }
        meta["extra"] = {k: v for k, v in self.extra.items() if not isinstance(v, torch.Tensor)}
        meta["extra_order"] = list(self.extra)
        return save_tensors(path, "targets", tensors, meta)

    @classmethod
    def load(cls, path: str | Path) -> "TargetSet":
        """Read a set written by :meth:`save` (:func:`compendium.distill.sets.load_tensors`)."""
        path = Path(path)
        if not path.is_file():
            raise SSDDError(f"no target set at {path}: the `ssdd_distill` stage makes it")
        try:
            d, meta = load_tensors(path, "targets")
        except SetError as e:
            raise SSDDError(f"{path} is not a readable target set ({e})") from e
        extra = {k: d[f"extra.{k}"] if f"extra.{k}" in d else meta["extra"][k] for k in meta.pop("extra_order")}
        meta.pop("extra")
        meta.setdefault("synthesis_seconds", math.nan)
        return cls(d["images"], d["targets"], extra=extra, **meta)


# --- evaluation: pre-train a fresh student on the pairs, then probe (Sec. 4) -----------------------


@dataclass
class PretrainConfig:
    epochs: int = 1000
    batch_size: int = 256
    lr: float = 0.1
    momentum: float = 0.9
    weight_decay: float = 1e-3
    seed: int = 0
    device: str = "cpu"  # where the student trains (the stage's GPU at paper scale)


def pretrain_student(backbone: nn.Module, x: torch.Tensor, y: torch.Tensor, cfg: PretrainConfig) -> dict:
    """Regress a fresh ``backbone`` + linear head onto the targets (MSE, SGD with momentum, no
    augmentation: KRR-ST's test.py pretraining). The backbone is trained in place, on ``cfg.device`` (it stays
    there); returns the losses."""
    if x.shape[0] != y.shape[0]:
        raise SSDDError(f"{x.shape[0]} images, {y.shape[0]} targets")
    torch.manual_seed(cfg.seed)
    dev = torch.device(cfg.device)
    net = InnerModel(backbone, y.shape[1]).to(dev)
    x, y = x.to(dev), y.to(dev)
    opt = torch.optim.SGD(net.parameters(), lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay)
    g = torch.Generator().manual_seed(cfg.seed + 1)
    n = x.shape[0]
    losses = []
    t0 = time.perf_counter()
    net.train()
    for _ in range(cfg.epochs):
        perm = torch.randperm(n, generator=g)
        for i in range(0, n, cfg.batch_size):
            idx = perm[i : i + cfg.batch_size]
            if len(idx) < 2:
                continue  # BatchNorm needs two samples
            loss = F.mse_loss(net(x[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        losses.append(float(loss.detach()))
        if not math.isfinite(losses[-1]):
            raise SSDDError(f"pretraining diverged (loss {losses[-1]}); lower the lr")
    return {"losses": losses, "seconds": time.perf_counter() - t0}


# --- teachers and probes ------------------------------------------------------------------------


class Teacher:
    """A frozen feature extractor as the source of targets: images normalised with the source data's
    ``mean``/``std`` are re-normalised with the network's own (a free prior keeps its own statistics)."""

    def __init__(
        self,
        net: nn.Module,
        name: str,
        src_mean=(0.0,),
        src_std=(1.0,),
        own_mean=None,
        own_std=None,
        batch_size: int = 1024,
    ):
        self.net = net.eval()
        for p in self.net.parameters():
            p.requires_grad_(False)
        self.name, self.batch_size = name, batch_size
        sm, ss = torch.tensor(src_mean).view(1, -1, 1, 1), torch.tensor(src_std).view(1, -1, 1, 1)
        om = sm if own_mean is None else torch.tensor(own_mean).view(1, -1, 1, 1)
        os_ = ss if own_std is None else torch.tensor(own_std).view(1, -1, 1, 1)
        self.scale, self.shift = ss / os_, (sm - om) / os_  # x_own = x * scale + shift

    @torch.no_grad()
    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        out = [
            self.net(x[i : i + self.batch_size] * self.scale + self.shift).float()
            for i in range(0, x.shape[0], self.batch_size)
        ]
        return torch.cat(out)


@torch.no_grad()
def features(backbone: nn.Module, x: torch.Tensor, batch_size: int = 1024) -> torch.Tensor:
    """Frozen features (eval mode) of normalised float images, computed on the backbone's device and
    returned on the CPU."""
    was = backbone.training
    backbone.eval()
    dev = next(backbone.parameters()).device
    out = torch.cat([backbone(x[i : i + batch_size].to(dev)).float().cpu() for i in range(0, x.shape[0], batch_size)])
    backbone.train(was)
    return out


class _Pooled(nn.Module):
    """A body whose output is averaged over positions when it is a feature map, flattened as is when it is
    already pooled (a ResNet-18's features: SSDD App. A.1's teacher)."""

    def __init__(self, body: nn.Module):
        super().__init__()
        self.body = body

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f = self.body(x)
        return torch.flatten(F.adaptive_avg_pool2d(f, 1) if f.dim() == 4 else f, 1)


def pooled(net: nn.Module) -> nn.Module:
    """``net``'s feature map averaged over positions (its ``body``, global average pooling, flattened):
    the features the globally pooled students are probed on (Sec. 4), for the teacher's own probe. A
    network whose features are already pooled (a ResNet-18) gives them unchanged."""
    if str(getattr(net, "name", "")).startswith("convnet"):
        return nn.Sequential(net.body, nn.AdaptiveAvgPool2d(1), nn.Flatten()).eval()
    return _Pooled(net.body).eval()


@dataclass(frozen=True)
class ProbeSpec:
    """The linear probes of Sec. 4 at our scale: Fashion-MNIST (``train_n`` / ``test_n`` class-mixed
    images; ``low_per_class`` labels per class for the low-label probe) and the digits (its split),
    both at 28 px and normalised with Fashion-MNIST's statistics (the source's); z-scored frozen
    features, Adam (``epochs``, ``lr``, ``batch_size``). Any other target of ``targets`` (a
    ``compendium.core.data.load_dataset`` name, e.g. ``cifar100``: SSDD Table 2's source-as-target probe)
    is read from ``data_root`` and normalised with its training images' own statistics, with its own
    low-label probe."""

    train_n: int = 10000
    test_n: int = 2000
    low_per_class: int = 10
    epochs: int = 20
    lr: float = 3e-3
    batch_size: int = 256
    seed: int = 0
    targets: tuple = ("fashion-mnist", "digits")
    data_root: str = ""


_PROBE_CACHE: dict = {}


def probe_data(spec: ProbeSpec) -> dict:
    """``{name: (train_x, train_y, test_x, test_y)}`` for every probe of ``spec`` (cached per process)."""
    if spec in _PROBE_CACHE:
        return _PROBE_CACHE[spec]
    mean, std = (data.FASHION_MNIST_MEAN,), (data.FASHION_MNIST_STD,)
    g = torch.Generator().manual_seed(spec.seed)
    out = {}
    if "fashion-mnist" in spec.targets:
        tr, te = data.load_fashion_mnist("train"), data.load_fashion_mnist("test")
        i = torch.randperm(len(tr), generator=g)[: spec.train_n]
        j = torch.randperm(len(te), generator=g)[: spec.test_n]
        trx, tr_y, tex, te_y = (
            to_float(tr.images[i], mean, std),
            tr.labels[i],
            to_float(te.images[j], mean, std),
            te.labels[j],
        )
        out["fashion-mnist"] = (trx, tr_y, tex, te_y)
        if spec.low_per_class:
            low = torch.cat([torch.nonzero(tr_y == c).flatten()[: spec.low_per_class] for c in range(10)])
            out["fashion-mnist low-label"] = (trx[low], tr_y[low], tex, te_y)
    if "digits" in spec.targets:
        tr, te = data.load_digits("train"), data.load_digits("test")
        out["digits"] = (to_float(tr.images, mean, std), tr.labels, to_float(te.images, mean, std), te.labels)
    for name in spec.targets:
        if name in ("fashion-mnist", "digits"):
            continue
        tr, te, m, s = data.train_test(name, spec.data_root)
        i = torch.randperm(len(tr), generator=g)[: spec.train_n]
        j = torch.randperm(len(te), generator=g)[: spec.test_n]
        trx, tr_y, tex, te_y = to_float(tr.images[i], m, s), tr.labels[i], to_float(te.images[j], m, s), te.labels[j]
        out[name] = (trx, tr_y, tex, te_y)
        if spec.low_per_class:
            low = torch.cat([torch.nonzero(tr_y == c).flatten()[: spec.low_per_class] for c in range(tr.num_classes)])
            out[f"{name} low-label"] = (trx[low], tr_y[low], tex, te_y)
    _PROBE_CACHE[spec] = out
    return out


def probe(backbone: nn.Module, spec: ProbeSpec, seed: int = 0) -> dict:
    """Top-1 test accuracy of a linear probe on ``backbone``'s frozen features, per probe of ``spec``."""
    accs = {}
    cache: dict = {}

    def feats(x):
        if id(x) not in cache:
            cache[id(x)] = features(backbone, x)
        return cache[id(x)]

    for name, (trx, tr_y, tex, te_y) in probe_data(spec).items():
        low = name.endswith("low-label")
        classes = max(10, int(torch.cat([tr_y, te_y]).max()) + 1)  # 10 for Fashion-MNIST and the digits
        res = linear_probe(
            feats(trx),
            tr_y,
            feats(tex),
            te_y,
            classes,
            epochs=max(spec.epochs, 100) if low else spec.epochs,
            lr=spec.lr,
            batch_size=spec.batch_size,
            seed=seed,
            standardize=True,
        )
        accs[name] = res.final
    return accs


def evaluate_set(
    images: torch.Tensor,
    targets: torch.Tensor | None,
    arch: str,
    arch_kwargs: dict,
    pre: PretrainConfig,
    spec: ProbeSpec,
    seed: int = 0,
) -> dict:
    """Sec. 4's evaluation of one set: a fresh ``arch`` (seeded) regressed onto the targets
    (:func:`pretrain_student`; ``targets`` None = no pre-training, the untrained control), then
    :func:`probe`. Picklable arguments, for :func:`compendium.core.parallel.run_calls`."""
    torch.manual_seed(seed)
    bb = models.build(arch, **arch_kwargs).to(pre.device)  # built (seeded) on the CPU, then moved: the same weights
    t0 = time.perf_counter()
    losses = []
    if targets is not None:
        losses = pretrain_student(bb, images, targets, PretrainConfig(**{**asdict(pre), "seed": seed}))["losses"]
    pre_s = time.perf_counter() - t0
    accs = probe(bb, spec, seed)
    return {
        "acc": accs,
        "pretrain_seconds": pre_s,
        "final_loss": losses[-1] if losses else float("nan"),
        "seconds": time.perf_counter() - t0,
    }


# --- one synthesis per job (the ssdd_distill stage) ---------------------------------------------------


def inner_factory(arch: str, arch_kwargs: dict, d_y: int, seed: int) -> Callable[[int], nn.Module]:
    """Fresh inner models for the pool (model i seeded ``seed * 1000 + i``)."""

    def make(i: int) -> nn.Module:
        torch.manual_seed(seed * 1000 + i)
        return InnerModel(models.build(arch, **arch_kwargs), d_y)

    return make


def synthesize(
    job: dict, real: torch.Tensor, real_targets: torch.Tensor, teacher: Teacher, inner: dict, cfg: DistillConfig
) -> list[TargetSet]:
    """One set (or, for SSDD, one per approximation variant of the same distillation) for ``job``:

    * ``random`` / ``kmeans``: m real images with teacher targets (k-means in target space: the
      centroid as target and the nearest pool image as input);
    * ``krr_st``: :class:`FreeSet` distilled by :func:`distill`;
    * ``ssdd``: :func:`init_basis_set` (``init``), :func:`distill` unless ``steps`` is 0 (the T = 0
      control), then :func:`fit_approx` per ``approx`` variant ``[mode, hidden]``.

    ``job`` keys: name, method, budget (floats), count_targets (free sets), augmentation, init, u, v,
    s, approx, approx_steps, steps, lr, seed. m fills the budget (:func:`images_for_budget`)."""
    method, budget = job["method"], int(job["budget"])
    n, c, h, w = real.shape
    d_img, d_y = c * h * w, real_targets.shape[1]
    seed = int(job.get("seed", 0))
    g = torch.Generator().manual_seed(seed)
    params = {k: v for k, v in job.items() if k != "name"}
    with measure("cpu") as cost:
        if method in ("random", "kmeans", "krr_st"):
            m = free_images_for_budget(budget, d_img, d_y, bool(job.get("count_targets", False)))
            if method == "kmeans":
                km = coresets.kmeans(real_targets.double(), m, g)
                y0 = km.centroids.float()
                idx = torch.cdist(y0, real_targets).argmin(1)
            else:
                idx = torch.randperm(n, generator=g)[:m]
                y0 = real_targets[idx]
            fs = FreeSet(real[idx], y0, "none")
            hist = {}
            if method == "krr_st":
                factory = inner_factory(inner["arch"], inner["kwargs"], d_y, seed)
                hist = distill(
                    fs,
                    real,
                    real_targets,
                    factory,
                    replace(cfg, steps=int(job["steps"]), lr=float(job["lr"]), seed=seed),
                )
            variants = [
                ("", fs.x.detach().clone(), fs.y.detach().clone(), fs.floats(bool(job.get("count_targets", False))), {})
            ]
        elif method == "ssdd":
            a = num_views(job["augmentation"])
            u, v, s = int(job["u"]), int(job["v"]), int(job["s"])
            d_xb = c * (h // s) * (w // s)
            approx = [tuple(x) for x in job.get("approx", [["q", 4]])] if a else [("same", 0)]
            main_mode, main_hidden = approx[0]
            m = images_for_budget(budget, u, v, d_xb, d_y, a, main_mode, int(main_hidden))
            bs = init_basis_set(
                real, real_targets, teacher, m, u, v, s, job["augmentation"], job.get("init", "pca"), seed
            )
            hist = {}
            if int(job["steps"]) > 0:
                factory = inner_factory(inner["arch"], inner["kwargs"], d_y, seed)
                hist = distill(
                    bs,
                    real,
                    real_targets,
                    factory,
                    replace(cfg, steps=int(job["steps"]), lr=float(job["lr"]), seed=seed),
                )
            variants = []
            for mode, hidden in approx:
                if a:
                    ap, mse = fit_approx(
                        bs.cy, bs.cya, mode, int(hidden), int(job.get("approx_steps", 2000)), seed=seed
                    )
                    x, y = release(bs, ap)
                else:
                    mse, (x, y) = float("nan"), (bs.images().detach(), bs.targets().detach())
                tag = "" if (mode, hidden) == approx[0] else (f"{mode}{hidden}" if mode == "q" else mode)
                variants.append(
                    (
                        tag,
                        x,
                        y,
                        bs.floats(mode, int(hidden)),
                        {"approx": mode, "hidden": int(hidden), "approx_mse": mse},
                    )
                )
            extra_basis = {"bx": bs.bx.detach().clone(), "by": bs.by.detach().clone(), "m": m}
        else:
            raise SSDDError(f"unknown method {method!r}")
    out = []
    for tag, x, y, floats, extra in variants:
        ex = {
            "name": job["name"] + (f" / {tag}" if tag else ""),
            "m": int(x.shape[0]) // (num_views(job.get("augmentation", "none")) + 1)
            if method == "ssdd"
            else int(x.shape[0]),
            "losses": hist.get("losses", []),
            "pool_initial_steps": hist.get("pool_initial_steps", 0),
            **extra,
        }
        if method == "ssdd" and not tag:
            ex.update(extra_basis)
        out.append(TargetSet(x, y, method, int(floats), params, seed, cost.seconds, cost.peak_memory_bytes / 2**20, ex))
    return out
