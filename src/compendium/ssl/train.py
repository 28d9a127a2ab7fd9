"""Self-supervised pre-training with optional ReLA, on in-memory uint8 images.

One loop serves the baseline and ReLA alike (camera-ready Algorithm 1):

* each epoch draws its examples through :class:`BudgetSampler` (budget r =
  r x the full step count, dynamic or static subset);
* a batch is moved to the device once and augmented there, as a whole, by the view functions
  (``ssl_views`` for the method, ``rela_views`` for ReLA's weak views);
* the lambda schedule (:mod:`compendium.rela.schedule`) decides which losses are computed:
  ``L = lam L_ReLA + (1 - lam) L_SSL``;
* the momentum encoders are updated after every step (in the ReLA phase too, as the code);
* one progress line per epoch, a checkpoint per epoch, and :func:`pretrain` resumes from it to
  the same result;
* device ``auto``: CUDA with bf16 autocast when present, else CPU fp32; ``cpu_bf16`` autocasts on the CPU too
  where the CPU has native bf16 (oneDNN's AMX / AVX512-BF16 kernels: 1.5x on the ``cpu`` profile's BYOL step on
  these machines, where the 4096-wide heads' matrix products dominate; convolutions and normalisations keep fp32
  weights and optimiser state) and runs fp32 elsewhere, where bf16 is emulated and gains little or loses
  (:func:`compendium.core.device.cpu_bf16_native`); the run says so.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Protocol

import torch

from compendium.core import augment, models, resume
from compendium.core.progress import Rate, say
from compendium.core.device import cpu_bf16_native, init_distributed, pick_device, sync_buffers
from compendium.core.probe import to_float
from compendium.ssl.methods import ReLA, SSLMethod, check_optimizer_covers, cosine_momentum

Views = Callable[[torch.Tensor, torch.Generator], tuple[torch.Tensor, torch.Tensor]]


class Schedule(Protocol):
    """ReLA's loss weighting as the trainer sees it (implemented by :mod:`compendium.rela.schedule`):
    ``L = lam * L_ReLA + (1 - lam) * L_SSL`` for the coming step."""

    @property
    def lam(self) -> float: ...

    switch_step: int | None  # the last ReLA-phase step once the switch has fired, else None

    def update(self, rela_loss: float | None, epoch: int | None = None) -> None:
        """Called once per step, after the step's losses (``rela_loss`` None outside the ReLA phase)."""

    def step_logs(self) -> dict:
        """What to log for the step just updated (e.g. the switch criterion)."""

    def end_epoch(self, epoch: int) -> None:
        """``epoch`` epochs are done."""

    def state_dict(self) -> dict: ...

    def load_state_dict(self, state: dict) -> None: ...


class BudgetSampler:
    """ReLA's budget semantics (the released code): each epoch trains on a uniformly random
    subset of ``floor(ratio * n)`` examples drawn without replacement, redrawn every epoch
    (``dynamic``) or drawn once (``static``). The step count therefore scales with the ratio."""

    def __init__(self, n: int, ratio: float, mode: str = "dynamic", seed: int = 0):
        if not 0 < ratio <= 1:
            raise ValueError(f"budget ratio must be in (0, 1], got {ratio}")
        if mode not in ("dynamic", "static"):
            raise ValueError(f"mode must be 'dynamic' or 'static', got {mode!r}")
        self.n, self.ratio, self.mode = n, ratio, mode
        self.size = max(1, int(ratio * n))
        self.generator = torch.Generator().manual_seed(seed)
        self._static = torch.randperm(n, generator=self.generator)[: self.size] if mode == "static" else None

    def epoch_indices(self) -> torch.Tensor:
        """The (shuffled) indices of the coming epoch."""
        if self._static is not None:
            return self._static[torch.randperm(self.size, generator=self.generator)]
        return torch.randperm(self.n, generator=self.generator)[: self.size]

    def batches(self, batch_size: int, drop_last: bool = True):
        idx = self.epoch_indices()
        stop = (len(idx) // batch_size) * batch_size if drop_last else len(idx)
        for i in range(0, stop, batch_size):
            yield idx[i : i + batch_size]

    def steps_per_epoch(self, batch_size: int, drop_last: bool = True) -> int:
        return self.size // batch_size if drop_last else -(-self.size // batch_size)


@dataclass
class PretrainConfig:
    epochs: int = 10
    batch_size: int = 256
    lr: float = 1e-3
    weight_decay: float = 0.01
    budget: float = 1.0
    budget_mode: str = "dynamic"
    seed: int = 0
    device: str = "auto"
    bf16: bool = True  # autocast on CUDA
    cpu_bf16: bool = False  # autocast on the CPU as well, where it has native bf16 (AMX / AVX512-BF16); else fp32
    momentum_schedule: str = "constant"  # constant (ReLA code) | cosine (BYOL paper)
    compile: bool = False
    channels_last: bool = True  # NHWC convolutions: ~1.6x on these CPUs for Conv-3
    checkpoint: str = ""  # path of the per-epoch checkpoint ("" = none)
    log_prefix: str = "pretrain"


@dataclass
class History:
    epochs: list = field(default_factory=list)  # one dict per epoch
    steps: list = field(default_factory=list)  # one dict per step: losses and lambda
    switch_step: int | None = None


def _mean_over_ranks(value: torch.Tensor, world: int) -> float:
    """The ReLA loss averaged over processes, so every rank's lambda schedule agrees (code)."""
    if world > 1:
        v = value.detach().float().clone()
        torch.distributed.all_reduce(v)
        return float(v) / world
    return float(value)


def _state(model, opt, sampler, schedule, history, epoch, gen):
    return {
        "model": model.state_dict(),
        "opt": opt.state_dict(),
        "epoch": epoch,
        "sampler_gen": sampler.generator.get_state(),
        "aug_gen": gen.get_state(),
        "schedule": None if schedule is None else schedule.state_dict(),
        "history": asdict(history),
        "torch_rng": torch.get_rng_state(),
    }


def autocasts(device: torch.device, cfg: PretrainConfig) -> bool:
    """Whether :func:`pretrain` runs its forward passes under bf16 autocast on ``device``: on CUDA with ``bf16``;
    on the CPU with ``cpu_bf16`` too, and only where the CPU has native bf16 (otherwise fp32, said once)."""
    if not cfg.bf16 or device.type not in ("cuda", "cpu"):
        return False
    if device.type == "cuda":
        return True
    if not cfg.cpu_bf16:
        return False
    if cpu_bf16_native():
        return True
    if not _SAID["no native bf16"]:
        _SAID["no native bf16"] = True
        say("cpu_bf16: this CPU has no native bf16 (AMX / AVX512-BF16), where bf16 is emulated: pre-training in fp32")
    return False


_SAID = {"no native bf16": False}


def pretrain(
    model: SSLMethod | ReLA,
    images: torch.Tensor,
    cfg: PretrainConfig,
    ssl_views: Views,
    mean,
    std,
    targets: torch.Tensor | None = None,
    rela_views: Views | None = None,
    schedule: Schedule | None = None,
    on_epoch: Callable[[int, SSLMethod | ReLA], dict] | None = None,
) -> History:
    """Train ``model`` on ``images`` (``uint8 [N, C, H, W]``); ReLA needs ``targets`` ``[N, n]``
    and a ``schedule``. ``on_epoch(epoch, model)`` may return metrics to log (e.g. kNN accuracy)."""
    is_rela = isinstance(model, ReLA)
    if is_rela and (targets is None or schedule is None):
        raise ValueError("ReLA needs targets and a lambda schedule")
    if targets is not None and targets.shape[0] != images.shape[0]:
        raise ValueError(f"{targets.shape[0]} targets for {images.shape[0]} images")
    rank, world = init_distributed()
    device = pick_device(cfg.device)
    torch.manual_seed(cfg.seed)
    model.to(device)
    nhwc = cfg.channels_last and models.channels_last_safe(model, images.shape[-1], device)
    fmt = torch.channels_last if nhwc else torch.contiguous_format
    if nhwc:
        model.to(memory_format=torch.channels_last)
    if world > 1 and cfg.batch_size % world:
        raise ValueError(f"batch size {cfg.batch_size} is not divisible by {world} processes")
    opt = torch.optim.AdamW(model.learnable_params(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    check_optimizer_covers(model, opt)
    sampler = BudgetSampler(images.shape[0], cfg.budget, cfg.budget_mode, seed=cfg.seed)
    gen = torch.Generator(device=device).manual_seed(cfg.seed + 1)
    history, start = History(), 0
    ckpt = Path(cfg.checkpoint) if cfg.checkpoint else None
    state = None
    if ckpt and ckpt.is_file():
        try:  # signed by this machine's runs (never a planted pickle); a damaged one is dropped, the run restarts
            state = resume.load_signed(ckpt, map_location=device)
        except Exception as e:
            say(
                f"[{cfg.log_prefix}] ignoring the checkpoint {ckpt} ({type(e).__name__}: {str(e):.200}); "
                "training from epoch 0"
            )
            ckpt.unlink(missing_ok=True)
    if state is not None:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sampler.generator.set_state(state["sampler_gen"])
        gen.set_state(state["aug_gen"])
        torch.set_rng_state(state["torch_rng"])
        if schedule is not None and state["schedule"] is not None:
            schedule.load_state_dict(state["schedule"])
        history = History(**state["history"])
        start = state["epoch"]
        say(f"[{cfg.log_prefix}] resumed after epoch {start} from {ckpt}")
    method = model.method if is_rela else model
    momentum_base = method.momentum_base
    steps_per_epoch = sampler.steps_per_epoch(cfg.batch_size)
    total_steps = cfg.epochs * max(steps_per_epoch, 1)
    use_amp = autocasts(device, cfg)
    m = model
    if world > 1:  # every rank sees the same global batch order and takes its own slice of it
        from torch.nn.parallel import DistributedDataParallel

        m = DistributedDataParallel(model, find_unused_parameters=True)
    m = torch.compile(m) if cfg.compile else m
    mean_t = torch.as_tensor(mean, device=device).view(1, -1, 1, 1)
    std_t = torch.as_tensor(std, device=device).view(1, -1, 1, 1)
    images_dev = images.to(device)
    targets_dev = targets.to(device) if targets is not None else None

    rate = Rate(cfg.epochs, start)
    for epoch in range(start, cfg.epochs):
        model.train()
        t0, n_seen, sums = time.perf_counter(), 0, {"loss": 0.0}
        for idx in sampler.batches(cfg.batch_size):
            idx = idx[rank::world].to(device)
            x = images_dev[idx].float().div_(255.0).contiguous(memory_format=fmt)
            lam = schedule.lam if schedule is not None else 0.0
            logs = {"lam": lam}
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_amp):
                loss = torch.zeros((), device=device)
                rela_value = None
                if is_rela and lam > 0:
                    v1, v2 = (rela_views or ssl_views)(x, gen)
                    v1, v2 = v1.contiguous(memory_format=fmt), v2.contiguous(memory_format=fmt)
                    lr_, lg = m((v1 - mean_t) / std_t, (v2 - mean_t) / std_t, targets_dev[idx])
                    loss = loss + lam * lr_
                    rela_value = _mean_over_ranks(lg["rela_loss"], world)
                    logs["rela_loss"] = rela_value
                if not is_rela or lam < 1:
                    v1, v2 = ssl_views(x, gen)
                    v1, v2 = v1.contiguous(memory_format=fmt), v2.contiguous(memory_format=fmt)
                    ls, lg = m((v1 - mean_t) / std_t, (v2 - mean_t) / std_t)
                    loss = loss + (1 - lam) * ls
                    logs["ssl_loss"] = float(lg["ssl_loss"])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step = len(history.steps) + 1
            if momentum_base:
                tau = (
                    momentum_base
                    if cfg.momentum_schedule == "constant"
                    else cosine_momentum(step, total_steps, momentum_base)
                )
                model.momentum_update(tau)
            if schedule is not None:
                schedule.update(rela_value, epoch=epoch)
                logs.update(schedule.step_logs())
                if schedule.switch_step and history.switch_step is None:
                    history.switch_step = schedule.switch_step
            logs["loss"] = float(loss.detach())
            logs["step"] = step
            history.steps.append(logs)
            sums["loss"] += logs["loss"] * len(idx)
            n_seen += len(idx)
        if schedule is not None:
            schedule.end_epoch(epoch + 1)
        record = {
            "epoch": epoch + 1,
            "loss": sums["loss"] / max(n_seen, 1),
            "images": n_seen,
            "seconds": time.perf_counter() - t0,
            "lam": schedule.lam if schedule is not None else 0.0,
        }
        sync_buffers(model)  # under torchrun: rank 0's BatchNorm statistics on every rank (checkpoint, result)
        if on_epoch is not None:
            record.update(on_epoch(epoch + 1, model) or {})
        history.epochs.append(record)
        extras = "  ".join(f"{k} {v:.4g}" for k, v in record.items() if k not in ("epoch", "images", "seconds"))
        if rank == 0 and cfg.log_prefix:
            say(
                f"[{cfg.log_prefix}] epoch {epoch + 1}/{cfg.epochs}  {extras}  {rate.update(epoch + 1, world * n_seen)}"
            )
        if ckpt and rank == 0:
            resume.save_signed(_state(model, opt, sampler, schedule, history, epoch + 1, gen), ckpt)
    return history


@dataclass
class SupervisedConfig:
    epochs: int = 3
    batch_size: int = 256
    lr: float = 1e-3
    weight_decay: float = 0.0
    crop_scale: float = 0.8  # RandomResizedCrop min scale (1.0: no crop)
    flip: bool = True
    seed: int = 0
    device: str = "auto"
    log_prefix: str = "supervised"


def pretrained(
    model: SSLMethod | ReLA, images: torch.Tensor, cfg: PretrainConfig, ssl_views: Views, mean, std, **kwargs
) -> dict:
    """:func:`pretrain` returning ``{"model": model, "history": History}``: the form that
    :func:`compendium.core.launch.call` runs under ``torchrun`` and hands back (rank 0's trained model)."""
    return {"model": model, "history": pretrain(model, images, cfg, ssl_views, mean, std, **kwargs)}


def train_classifier(
    backbone: torch.nn.Module,
    images: torch.Tensor,
    labels: torch.Tensor,
    num_classes: int,
    cfg: SupervisedConfig,
    mean,
    std,
    test: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> list[dict]:
    """Supervised training of ``backbone`` + a linear head (Adam, cross-entropy, batched crop + flip on the
    device): the supervised prior of ReLA-D and DWA's teacher. Returns one record per epoch (with the
    test accuracy when ``test`` is given); the head is discarded, the backbone is trained in place."""
    device = pick_device(cfg.device)
    torch.manual_seed(cfg.seed)
    head = torch.nn.Linear(backbone.feature_dim, num_classes)
    net = torch.nn.Sequential(backbone, head).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    gen = torch.Generator(device=device).manual_seed(cfg.seed + 1)
    order = torch.Generator().manual_seed(cfg.seed)
    x_all, y_all = images.to(device), labels.to(device)
    mean_t = torch.as_tensor(mean, device=device).view(1, -1, 1, 1)
    std_t = torch.as_tensor(std, device=device).view(1, -1, 1, 1)
    records, rate = [], Rate(cfg.epochs)
    for epoch in range(cfg.epochs):
        net.train()
        t0, total, seen = time.perf_counter(), 0.0, 0
        perm = torch.randperm(len(y_all), generator=order).to(device)
        for i in range(0, len(perm) - cfg.batch_size + 1, cfg.batch_size):
            idx = perm[i : i + cfg.batch_size]
            x = x_all[idx].float().div_(255.0)
            if cfg.crop_scale < 1.0 or cfg.flip:
                x = augment.random_resized_crop(
                    x, None, (cfg.crop_scale, 1.0), flip_p=0.5 if cfg.flip else 0.0, generator=gen
                )
            loss = torch.nn.functional.cross_entropy(net((x - mean_t) / std_t), y_all[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
            seen += len(idx)
        rec = {"epoch": epoch + 1, "loss": total / max(seen, 1), "seconds": time.perf_counter() - t0}
        if test is not None:
            net.eval()
            with torch.no_grad():
                correct = 0
                for j in range(0, len(test[1]), 1024):
                    xb = to_float(test[0][j : j + 1024].to(device), mean, std)
                    correct += int((net(xb).argmax(1).cpu() == test[1][j : j + 1024]).sum())
            rec["test_acc"] = correct / len(test[1])
        records.append(rec)
        say(
            f"[{cfg.log_prefix}] epoch {epoch + 1}/{cfg.epochs}  "
            + "  ".join(f"{k} {v:.4g}" for k, v in rec.items() if k not in ("epoch", "seconds"))
            + f"  {rate.update(epoch + 1, seen)}"
        )
    backbone.to("cpu")
    return records
