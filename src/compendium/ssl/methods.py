"""The eight self-supervised methods of the ReLA paper, solo-learn style.

A method owns a backbone and its heads and declares

* ``learnable_params()``: parameter groups for the optimizer (subclasses extend the parent's list);
* ``momentum_pairs()``: (online, target) module pairs that the EMA update keeps in step.

:func:`check_optimizer_covers` then asserts that every trainable parameter of the method is in
the optimizer. That is the omission of the released ReLA code, whose linear map W, b never reached
the optimizer.

``loss(x1, x2)`` takes two augmented views and returns ``(loss, logs)``. Head sizes follow each
paper, scaled by ``head_mult`` for the ``cpu`` profile (1.0 at ``paper`` scale).
"""

from __future__ import annotations

import copy
import math

import torch
from torch import nn

from compendium.ssl import losses as L


def mlp(dims: list[int], batch_norm: bool = True, last_bn: bool = False, last_bn_affine: bool = True) -> nn.Sequential:
    """Linear -> BN -> ReLU blocks, the last block linear only (optionally with BN)."""
    layers: list[nn.Module] = []
    for i in range(len(dims) - 1):
        last = i == len(dims) - 2
        layers.append(nn.Linear(dims[i], dims[i + 1], bias=not (batch_norm and (not last or last_bn))))
        if not last:
            if batch_norm:
                layers.append(nn.BatchNorm1d(dims[i + 1]))
            layers.append(nn.ReLU(inplace=True))
        elif last_bn:
            layers.append(nn.BatchNorm1d(dims[i + 1], affine=last_bn_affine))
    return nn.Sequential(*layers)


def _h(n: int, mult: float) -> int:
    return max(16, int(round(n * mult)))


def cosine_momentum(step: int, total: int, base: float) -> float:
    """BYOL's schedule (Grill et al. 2020, §3.2): tau = 1 - (1 - base)(cos(pi k/K) + 1)/2."""
    return 1 - (1 - base) * (math.cos(math.pi * min(step, total) / max(total, 1)) + 1) / 2


@torch.no_grad()
def ema_update(online: nn.Module, target: nn.Module, tau: float) -> None:
    for po, pt in zip(online.parameters(), target.parameters()):
        pt.mul_(tau).add_(po.detach(), alpha=1 - tau)
    for bo, bt in zip(online.buffers(), target.buffers()):
        bt.copy_(bo)


def _frozen_copy(module: nn.Module) -> nn.Module:
    c = copy.deepcopy(module)
    for p in c.parameters():
        p.requires_grad_(False)
    return c


class SSLMethod(nn.Module):
    """Base class: a backbone plus method heads."""

    name = "base"
    momentum_base = 0.0  # 0: no momentum encoder

    def __init__(self, backbone: nn.Module):
        super().__init__()
        self.backbone = backbone
        self.feature_dim = backbone.feature_dim

    def learnable_params(self) -> list[dict]:
        return [{"name": "backbone", "params": list(self.backbone.parameters())}]

    def momentum_pairs(self) -> list[tuple[nn.Module, nn.Module]]:
        return []

    @torch.no_grad()
    def momentum_update(self, tau: float) -> None:
        for online, target in self.momentum_pairs():
            ema_update(online, target, tau)

    def loss(self, x1: torch.Tensor, x2: torch.Tensor) -> tuple[torch.Tensor, dict]:
        raise NotImplementedError

    def forward(self, x1: torch.Tensor, x2: torch.Tensor):
        """``loss`` as the module's forward, so DistributedDataParallel syncs its gradients."""
        return self.loss(x1, x2)


def check_optimizer_covers(method: nn.Module, optimizer: torch.optim.Optimizer) -> None:
    """Every parameter that requires grad must be in ``optimizer`` (and none twice)."""
    in_opt = [p for g in optimizer.param_groups for p in g["params"]]
    ids = [id(p) for p in in_opt]
    if len(ids) != len(set(ids)):
        raise ValueError("a parameter appears twice in the optimizer")
    missing = [n for n, p in method.named_parameters() if p.requires_grad and id(p) not in set(ids)]
    if missing:
        raise ValueError(f"trainable parameters missing from the optimizer: {missing[:8]}")


class BYOL(SSLMethod):
    """BYOL (Grill et al. 2020): online projector + predictor, EMA target; heads d -> 2d -> 256
    (ReLA code) at ``head_mult`` 1, momentum 0.99 (constant, as the ReLA code) or cosine."""

    name = "byol"
    momentum_base = 0.99

    def __init__(self, backbone, head_mult: float = 1.0, out_dim: int = 256):
        super().__init__(backbone)
        d, o = self.feature_dim, _h(out_dim, head_mult)
        self.projector = mlp([d, _h(2 * d, head_mult), o])
        self.predictor = mlp([o, _h(2 * d, head_mult), o])
        self.backbone_target = _frozen_copy(self.backbone)
        self.projector_target = _frozen_copy(self.projector)

    def learnable_params(self):
        return super().learnable_params() + [
            {"name": "projector", "params": list(self.projector.parameters())},
            {"name": "predictor", "params": list(self.predictor.parameters())},
        ]

    def momentum_pairs(self):
        return [(self.backbone, self.backbone_target), (self.projector, self.projector_target)]

    def loss(self, x1, x2):
        z1, z2 = self.projector(self.backbone(x1)), self.projector(self.backbone(x2))
        p1, p2 = self.predictor(z1), self.predictor(z2)
        with torch.no_grad():
            t1 = self.projector_target(self.backbone_target(x1))
            t2 = self.projector_target(self.backbone_target(x2))
        loss = L.byol_loss(p1, p2, t1, t2)
        return loss, {"ssl_loss": loss.detach()}


class SimSiam(SSLMethod):
    """SimSiam (Chen & He 2021): 3-layer projector (BN on the output), 2-layer bottleneck predictor."""

    name = "simsiam"

    def __init__(self, backbone, head_mult: float = 1.0, out_dim: int = 2048, pred_dim: int = 512):
        super().__init__(backbone)
        o, h = _h(out_dim, head_mult), _h(pred_dim, head_mult)
        self.projector = mlp([self.feature_dim, o, o, o], last_bn=True, last_bn_affine=False)
        self.predictor = mlp([o, h, o])

    def learnable_params(self):
        return super().learnable_params() + [
            {"name": "projector", "params": list(self.projector.parameters())},
            {"name": "predictor", "params": list(self.predictor.parameters())},
        ]

    def loss(self, x1, x2):
        z1, z2 = self.projector(self.backbone(x1)), self.projector(self.backbone(x2))
        loss = L.simsiam_loss(self.predictor(z1), self.predictor(z2), z1, z2)
        return loss, {"ssl_loss": loss.detach()}


class SimCLR(SSLMethod):
    """SimCLR (Chen et al. 2020): projector d -> d -> 128, NT-Xent at temperature 0.5."""

    name = "simclr"

    def __init__(self, backbone, head_mult: float = 1.0, out_dim: int = 128, temperature: float = 0.5):
        super().__init__(backbone)
        self.projector = mlp([self.feature_dim, self.feature_dim, _h(out_dim, head_mult)])
        self.temperature = temperature

    def learnable_params(self):
        return super().learnable_params() + [{"name": "projector", "params": list(self.projector.parameters())}]

    def loss(self, x1, x2):
        loss = L.nt_xent_loss(self.projector(self.backbone(x1)), self.projector(self.backbone(x2)), self.temperature)
        return loss, {"ssl_loss": loss.detach()}


class BarlowTwins(SSLMethod):
    """Barlow Twins (Zbontar et al. 2021): 3-layer projector of width 8192 (2048 here at
    ``head_mult`` 1, as lightly's CIFAR benchmark), lambda 5e-3."""

    name = "barlow_twins"

    def __init__(self, backbone, head_mult: float = 1.0, width: int = 2048, lambd: float = 5e-3):
        super().__init__(backbone)
        w = _h(width, head_mult)
        self.projector = mlp([self.feature_dim, w, w, w])
        self.lambd = lambd

    def learnable_params(self):
        return super().learnable_params() + [{"name": "projector", "params": list(self.projector.parameters())}]

    def loss(self, x1, x2):
        loss = L.barlow_twins_loss(self.projector(self.backbone(x1)), self.projector(self.backbone(x2)), self.lambd)
        return loss, {"ssl_loss": loss.detach()}


class VICReg(SSLMethod):
    """VICReg (Bardes et al. 2022): 3-layer expander (8192 in the paper, 2048 at ``head_mult`` 1),
    weights 25 / 25 / 1."""

    name = "vicreg"

    def __init__(self, backbone, head_mult: float = 1.0, width: int = 2048):
        super().__init__(backbone)
        w = _h(width, head_mult)
        self.projector = mlp([self.feature_dim, w, w, w])

    def learnable_params(self):
        return super().learnable_params() + [{"name": "projector", "params": list(self.projector.parameters())}]

    def loss(self, x1, x2):
        loss = L.vicreg_loss(self.projector(self.backbone(x1)), self.projector(self.backbone(x2)))
        return loss, {"ssl_loss": loss.detach()}


class MoCo(SSLMethod):
    """MoCo v2 (Chen et al. 2020): projector d -> d -> 128 on query and EMA key encoders,
    a queue of ``queue_size`` keys, temperature 0.2, momentum 0.99, symmetrised loss."""

    name = "moco"
    momentum_base = 0.99

    def __init__(
        self, backbone, head_mult: float = 1.0, out_dim: int = 128, queue_size: int = 4096, temperature: float = 0.2
    ):
        super().__init__(backbone)
        o = _h(out_dim, head_mult)
        self.projector = mlp([self.feature_dim, self.feature_dim, o], batch_norm=False)
        self.backbone_target = _frozen_copy(self.backbone)
        self.projector_target = _frozen_copy(self.projector)
        self.temperature = temperature
        self.register_buffer("queue", nn.functional.normalize(torch.randn(queue_size, o), dim=1))
        self.register_buffer("queue_ptr", torch.zeros((), dtype=torch.long))

    def learnable_params(self):
        return super().learnable_params() + [{"name": "projector", "params": list(self.projector.parameters())}]

    def momentum_pairs(self):
        return [(self.backbone, self.backbone_target), (self.projector, self.projector_target)]

    @torch.no_grad()
    def _enqueue(self, keys: torch.Tensor) -> None:
        n, k = self.queue.shape[0], keys.shape[0]
        idx = (self.queue_ptr + torch.arange(k, device=keys.device)) % n
        # under bf16 autocast the keys are bf16; the queue keeps fp32 (it is a buffer, as the weights)
        self.queue[idx] = nn.functional.normalize(keys.float(), dim=1)
        self.queue_ptr.copy_((self.queue_ptr + k) % n)

    def loss(self, x1, x2):
        q1, q2 = self.projector(self.backbone(x1)), self.projector(self.backbone(x2))
        with torch.no_grad():
            k1 = self.projector_target(self.backbone_target(x1))
            k2 = self.projector_target(self.backbone_target(x2))
        queue = self.queue.clone()
        loss = 0.5 * (
            L.infonce_queue_loss(q1, k2, queue, self.temperature)
            + L.infonce_queue_loss(q2, k1, queue, self.temperature)
        )
        self._enqueue(torch.cat([k1, k2]))
        return loss, {"ssl_loss": loss.detach()}


class DINO(SSLMethod):
    """DINO (Caron et al. 2021) with two global crops: head d -> 2048 -> 2048 -> 256 (l2-normalised)
    -> weight-normalised prototypes (65,536 in the paper; 2048 as the ReLA code / lightly's CIFAR
    benchmark), student temperature 0.1, teacher 0.04, centre momentum 0.9, EMA 0.99."""

    name = "dino"
    momentum_base = 0.99

    def __init__(
        self, backbone, head_mult: float = 1.0, hidden: int = 2048, bottleneck: int = 256, prototypes: int = 2048
    ):
        super().__init__(backbone)
        self.head = DINOHead(
            self.feature_dim, _h(hidden, head_mult), _h(bottleneck, head_mult), _h(prototypes, head_mult)
        )
        self.backbone_target = _frozen_copy(self.backbone)
        self.head_target = _frozen_copy(self.head)
        self.register_buffer("center", torch.zeros(self.head.out_dim))

    def learnable_params(self):
        return super().learnable_params() + [{"name": "head", "params": list(self.head.parameters())}]

    def momentum_pairs(self):
        return [(self.backbone, self.backbone_target), (self.head, self.head_target)]

    def loss(self, x1, x2):
        s = torch.stack([self.head(self.backbone(x1)), self.head(self.backbone(x2))])
        with torch.no_grad():
            t = torch.stack([self.head_target(self.backbone_target(x1)), self.head_target(self.backbone_target(x2))])
        loss = L.dino_loss(s, t, self.center)
        self.center.copy_(L.dino_center_update(self.center, t))
        return loss, {"ssl_loss": loss.detach()}


class DINOHead(nn.Module):
    def __init__(self, in_dim: int, hidden: int, bottleneck: int, out_dim: int):
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, bottleneck)
        )
        self.last = nn.utils.parametrizations.weight_norm(nn.Linear(bottleneck, out_dim, bias=False))
        self.out_dim = out_dim

    def forward(self, x):
        return self.last(nn.functional.normalize(self.mlp(x), dim=-1))


class SwAV(SSLMethod):
    """SwAV (Caron et al. 2020) with two crops: projector d -> 2048 -> 128, 3000 prototypes
    (normalised each step), temperature 0.1, Sinkhorn-Knopp epsilon 0.05 x 3 iterations."""

    name = "swav"

    def __init__(
        self,
        backbone,
        head_mult: float = 1.0,
        hidden: int = 2048,
        out_dim: int = 128,
        prototypes: int = 3000,
        temperature: float = 0.1,
    ):
        super().__init__(backbone)
        o = _h(out_dim, head_mult)
        self.projector = mlp([self.feature_dim, _h(hidden, head_mult), o])
        self.prototypes = nn.Linear(o, _h(prototypes, head_mult), bias=False)
        self.temperature = temperature

    def learnable_params(self):
        return super().learnable_params() + [
            {"name": "projector", "params": list(self.projector.parameters())},
            {"name": "prototypes", "params": list(self.prototypes.parameters())},
        ]

    def loss(self, x1, x2):
        with torch.no_grad():
            self.prototypes.weight.copy_(nn.functional.normalize(self.prototypes.weight, dim=1))
        z1 = nn.functional.normalize(self.projector(self.backbone(x1)), dim=1)
        z2 = nn.functional.normalize(self.projector(self.backbone(x2)), dim=1)
        loss = L.swav_loss(self.prototypes(z1), self.prototypes(z2), self.temperature)
        return loss, {"ssl_loss": loss.detach()}


METHODS = {m.name: m for m in (BYOL, SimCLR, BarlowTwins, DINO, MoCo, SimSiam, SwAV, VICReg)}


def build(name: str, backbone: nn.Module, **kwargs) -> SSLMethod:
    if name not in METHODS:
        raise ValueError(f"unknown SSL method {name!r}; known: {sorted(METHODS)}")
    return METHODS[name](backbone, **kwargs)


class ReLA(nn.Module):
    """ReLA-F around any method (camera-ready eq. 9): a linear map W, b from the backbone's
    features to the target dimension, trained jointly (paper) or frozen at its random
    initialisation (``transfer_trainable=False``: the released code's behaviour)."""

    def __init__(self, method: SSLMethod, target_dim: int, transfer_trainable: bool = True):
        super().__init__()
        self.method = method
        self.transfer = nn.Linear(method.feature_dim, target_dim)
        self.transfer.requires_grad_(transfer_trainable)
        self.transfer_trainable = transfer_trainable

    def learnable_params(self):
        groups = self.method.learnable_params()
        if self.transfer_trainable:
            groups = groups + [{"name": "transfer", "params": list(self.transfer.parameters())}]
        return groups

    def momentum_pairs(self):
        return self.method.momentum_pairs()

    def momentum_update(self, tau: float) -> None:
        self.method.momentum_update(tau)

    def rela_loss(self, x1, x2, target):
        bb = self.method.backbone
        loss = L.rela_loss(self.transfer(bb(x1)), self.transfer(bb(x2)), target)
        return loss, {"rela_loss": loss.detach()}

    def ssl_loss(self, x1, x2):
        return self.method.loss(x1, x2)

    def forward(self, x1, x2, target=None):
        """The ReLA loss when a target is given, else the method's loss (DDP goes through here)."""
        return self.rela_loss(x1, x2, target) if target is not None else self.ssl_loss(x1, x2)
