"""Gradient matching (DC, DSA) and distribution matching (DM) for labeled dataset distillation.

* **DC** (Zhao, Mopuri & Bilen, ICLR 2021, Algorithm 1): learn synthetic images S so that, on random
  networks along their training path, the per-class gradient of the loss on S matches that on a real
  batch, with the layer-wise distance of Sec. 3.2 (:func:`gradient_distance`).
* **DSA** (Zhao & Bilen, ICML 2021): DC with one Siamese differentiable augmentation applied to the
  real and the synthetic batch of each class (:mod:`.dsa`); ``dsa_strategy`` switches DC to DSA.
* **DM** (Zhao & Bilen, WACV 2023, eq. 4-5): match the mean embedding (the features before the
  classifier) of real and synthetic images per class, under the same Siamese augmentation, on a fresh
  randomly initialised network at every iteration; no bi-level loop.

The ConvNet they match on is the authors' (:func:`matching_arch_kwargs`): on 1-channel 28-px inputs its
first conv pads 3 (28 -> 32 px, ``16 * width`` features), as their ``networks.py`` ConvNet does.

Loop names follow the authors' code (``main.py``), which maps onto the paper's Algorithm 1 as:
``iterations`` = the paper's K outer loops (a fresh network each), ``outer_loop`` = its T steps
(one update of S each), ``inner_loop`` = its varsigma_theta network updates between them (each one
pass over the whole synthetic set, in batches of ``batch_train``). Defaults per ipc are the code's
``get_loops``: (outer, inner) = (1, 1) ipc 1, (10, 50) ipc 10, (50, 10) ipc 50.

All randomness (initial real images, real batches, network initialisations, augmentation seeds, the
inner loop's shuffles) comes from one generator seeded with ``seed``; a run is reproducible on a
given device and thread count. Real images stay uint8 on the device and are normalised per batch.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from compendium.core.progress import Rate, say
from compendium.distill.matching import dsa as dsa_mod
from compendium.distill.networks import build_network, matching_arch_kwargs
from compendium.distill.sets import DistilledSet, measure

DC_LOOPS = {1: (1, 1), 10: (10, 50), 20: (20, 25), 30: (30, 20), 40: (40, 15), 50: (50, 10)}
DISTANCES = ("ours", "mse", "cos")
_EPS = 1e-6  # the code's epsilon in the cosine denominator
_TRACE_POINTS = 200


# --------------------------------------------------------------------------------------------------
# distances


def _rows(t: torch.Tensor) -> torch.Tensor:
    """A gradient as [output channels, rest]: conv [out, in*k*k], linear [out, in], layer-norm [C, H*W]."""
    return t.reshape(t.shape[0], -1)


def layer_distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """DC Sec. 3.2: d(A, B) = sum_i (1 - A_i.B_i / (|A_i| |B_i|)) over output channels i; 0 for 1-d tensors
    (biases and normalisation scales/shifts), exactly as the code's ``distance_wb`` returns 0 for them."""
    if a.ndim <= 1:
        return a.new_zeros(())
    ra, rb = _rows(a), _rows(b)
    cos = (ra * rb).sum(-1) / (ra.norm(dim=-1) * rb.norm(dim=-1) + _EPS)
    return (1 - cos).sum()


def gradient_distance(
    grads_a: Sequence[torch.Tensor], grads_b: Sequence[torch.Tensor], kind: str = "ours"
) -> torch.Tensor:
    """Distance between two lists of per-parameter gradients (DC eq. 10 and Sec. 3.2).

    * ``ours``: sum over parameter tensors of :func:`layer_distance` (1-d tensors skipped);
    * ``mse``: squared L2 distance of the flattened, concatenated gradients (all tensors);
    * ``cos``: 1 - cosine of the flattened, concatenated gradients (all tensors).
    """
    if kind not in DISTANCES:
        raise ValueError(f"unknown gradient distance {kind!r}; known: {list(DISTANCES)}")
    if len(grads_a) != len(grads_b) or not grads_a:
        raise ValueError(f"gradient lists differ in length or are empty: {len(grads_a)} vs {len(grads_b)}")
    for ga, gb in zip(grads_a, grads_b):
        if ga.shape != gb.shape:
            raise ValueError(f"gradient shapes differ: {tuple(ga.shape)} vs {tuple(gb.shape)}")
    if kind == "ours":
        return torch.stack([layer_distance(ga, gb) for ga, gb in zip(grads_a, grads_b)]).sum()
    va = torch.cat([g.reshape(-1) for g in grads_a])
    vb = torch.cat([g.reshape(-1) for g in grads_b])
    if kind == "mse":
        return ((va - vb) ** 2).sum()
    return 1 - (va * vb).sum() / (va.norm() * vb.norm() + _EPS)


# --------------------------------------------------------------------------------------------------
# networks and data


def _has_batchnorm(net: nn.Module) -> bool:
    return any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in net.modules())


class ClassSampler:
    """Random real batches per class, without replacement within a batch (the code's ``get_images``)."""

    def __init__(self, labels: torch.Tensor, num_classes: int):
        self.order = torch.argsort(labels, stable=True)
        self.counts = torch.bincount(labels, minlength=num_classes)
        self.starts = torch.cumsum(self.counts, 0) - self.counts

    def indices(self, c: int, n: int, g: torch.Generator) -> torch.Tensor:
        k = int(self.counts[c])
        return self.order[int(self.starts[c]) + torch.randperm(k, generator=g)[: min(n, k)]]


def _normaliser(mean, std, channels: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    m = torch.as_tensor(mean, dtype=torch.float32, device=device).view(1, -1, 1, 1)
    s = torch.as_tensor(std, dtype=torch.float32, device=device).view(1, -1, 1, 1)
    if m.shape[1] not in (1, channels) or s.shape != m.shape:
        raise ValueError(f"mean/std have {m.shape[1]}/{s.shape[1]} channels for {channels}-channel images")
    return m, s


def _validate(
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    ipc: int,
    num_classes: int,
    init: str,
    iterations: int,
    batch_real: int,
) -> None:
    if not isinstance(images_u8, torch.Tensor) or images_u8.dtype != torch.uint8 or images_u8.ndim != 4:
        raise ValueError(
            f"images must be uint8 [N, C, H, W], got {getattr(images_u8, 'dtype', type(images_u8))} "
            f"{tuple(getattr(images_u8, 'shape', ()))}"
        )
    if labels.dtype != torch.int64 or labels.shape != (images_u8.shape[0],):
        raise ValueError(f"labels must be int64 [{images_u8.shape[0]}], got {labels.dtype} {tuple(labels.shape)}")
    if ipc < 1:
        raise ValueError(f"ipc must be >= 1, got {ipc}")
    if num_classes < 2 or int(labels.min()) < 0 or int(labels.max()) >= num_classes:
        raise ValueError(f"labels must lie in [0, {num_classes}) with num_classes >= 2")
    if init not in ("real", "noise"):
        raise ValueError(f"init must be 'real' or 'noise', got {init!r}")
    if iterations < 0 or batch_real < 1:
        raise ValueError(f"iterations must be >= 0 and batch_real >= 1, got {iterations}, {batch_real}")
    counts = torch.bincount(labels, minlength=num_classes)
    need = ipc if init == "real" else 1
    if int(counts.min()) < need:
        raise ValueError(f"class {int(counts.argmin())} has {int(counts.min())} images; init={init!r} needs {need}")


def _initial_images(
    images_u8, sampler: ClassSampler, ipc: int, num_classes: int, init: str, m, s, g: torch.Generator, device
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """S_0: ``ipc`` random real images per class (init='real'), or N(0, 1) noise in normalised space."""
    if init == "real":
        idx = torch.cat([sampler.indices(c, ipc, g) for c in range(num_classes)])
        x = (images_u8[idx.to(images_u8.device)].to(device).float().div_(255.0) - m) / s
        return x.contiguous(), idx
    _, c, h, w = images_u8.shape
    return torch.randn(num_classes * ipc, c, h, w, generator=g).to(device), None


def _floats(v) -> tuple[float, ...]:
    return tuple(float(x) for x in torch.as_tensor(v, dtype=torch.float64).reshape(-1))


def _seed(g: torch.Generator) -> int:
    return int(torch.randint(2**31 - 1, (1,), generator=g))


def _trace(values: list[float]) -> list[float]:
    """At most ~200 window means of a per-iteration loss trace (for the stored params)."""
    if not values:
        return []
    k = max(1, math.ceil(len(values) / _TRACE_POINTS))
    return [round(sum(values[i : i + k]) / len(values[i : i + k]), 6) for i in range(0, len(values), k)]


def _log(tag: str, it: int, total: int, loss: float, every: int, rate: Rate) -> None:
    if every and (it % every == 0 or it == total - 1):
        say(f"[{tag}] iteration {it + 1}/{total}  loss {loss:.4f}  {rate.update(it + 1)}")


# --------------------------------------------------------------------------------------------------
# DC / DSA


def class_gradients(net: nn.Module, x: torch.Tensor, c: int, create_graph: bool = False) -> tuple[torch.Tensor, ...]:
    """Gradient of the mean cross-entropy of ``x`` (all of class ``c``) w.r.t. the network's parameters."""
    params = [p for p in net.parameters() if p.requires_grad]
    y = torch.full((x.shape[0],), c, dtype=torch.long, device=x.device)
    loss = F.cross_entropy(net(x), y)
    return torch.autograd.grad(loss, params, create_graph=create_graph)


def _freeze_batchnorm(
    net: nn.Module, images_u8, sampler: ClassSampler, num_classes: int, m, s, g: torch.Generator, device
) -> None:
    """The code's BatchNorm handling: statistics from 16 real images per class, then frozen (eval)."""
    idx = torch.cat([sampler.indices(c, 16, g) for c in range(num_classes)])
    net.train()
    with torch.no_grad():
        net((images_u8[idx.to(images_u8.device)].to(device).float().div_(255.0) - m) / s)
    for mod in net.modules():
        if isinstance(mod, nn.modules.batchnorm._BatchNorm):
            mod.eval()


def _train_on_synthetic(
    net: nn.Module,
    opt: torch.optim.Optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    epochs: int,
    batch: int,
    strategy: str | None,
    params: dsa_mod.DSAParams,
    g: torch.Generator,
) -> None:
    """DC's network update: ``epochs`` passes over the whole synthetic set (shuffled, last batch kept);
    DSA trains on independently augmented images (the code's ``epoch(..., aug=True)``)."""
    net.train()
    for _ in range(epochs):
        perm = torch.randperm(len(y), generator=g).to(x.device)
        for i in range(0, len(y), batch):
            idx = perm[i : i + batch]
            xb = x[idx]
            if strategy:
                xb = dsa_mod.augment_independent(xb, strategy, params, g)
            loss = F.cross_entropy(net(xb), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()


def dc_loops(ipc: int) -> tuple[int, int]:
    """(outer_loop, inner_loop) of the authors' code for ``ipc`` (defined for 1, 10, 20, 30, 40, 50)."""
    if ipc not in DC_LOOPS:
        raise ValueError(
            f"no default DC loops for ipc={ipc}; pass outer_loop and inner_loop (known: {sorted(DC_LOOPS)})"
        )
    return DC_LOOPS[ipc]


def dc_synthesize(
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    ipc: int,
    num_classes: int,
    mean,
    std,
    *,
    arch: str = "convnet",
    arch_kwargs: dict | None = None,
    iterations: int = 1000,
    outer_loop: int | None = None,
    inner_loop: int | None = None,
    batch_real: int = 256,
    batch_train: int = 256,
    lr_img: float = 0.1,
    lr_net: float = 0.01,
    init: str = "real",
    dsa_strategy: str | None = None,
    dsa_params: dsa_mod.DSAParams | None = None,
    distance: str = "ours",
    seed: int = 0,
    device: str = "cpu",
    dataset: str = "fashion-mnist",
    log_every: int = 0,
    state_file=None,
    state_every: int = 0,
    stop_at: int | None = None,
) -> DistilledSet:
    """DC (Algorithm 1) or, with ``dsa_strategy``, DSA: ``iterations`` fresh networks; on each,
    ``outer_loop`` times: sum over classes of the gradient distance between a real batch (``batch_real``)
    and the class's synthetic images (second-order through ``create_graph``), one SGD step (momentum 0.5,
    ``lr_img``) on the images, then (except after the last) ``inner_loop`` epochs of SGD (``lr_net``) of
    the network on the whole synthetic set. Images start from real samples (``init='real'``) or noise.
    The per-iteration loss (averaged over classes and outer loops, as the code prints it) is stored as
    ``params['loss_trace']`` (window means).

    Long runs resume: with ``state_file``, the run's state (images, their optimiser's momentum, the generator,
    the losses so far) is written there every ``state_every`` iterations and at the end, and a run that finds the
    file goes on from it (:func:`load_state`), bit for bit as if it had not stopped. ``stop_at`` returns after that
    many iterations: nothing in an iteration depends on ``iterations``, so the set is the one a run of
    ``stop_at`` iterations gives (the snapshots of one run along its path)."""
    _validate(images_u8, labels, ipc, num_classes, init, iterations, batch_real)
    stop = iterations if stop_at is None else int(stop_at)
    if not 0 <= stop <= iterations:
        raise ValueError(f"stop_at must be in 0..iterations ({iterations}), got {stop_at}")
    if distance not in DISTANCES:
        raise ValueError(f"unknown gradient distance {distance!r}; known: {list(DISTANCES)}")
    strategy = "_".join(dsa_mod.parse_strategy(dsa_strategy)) or None
    dparams = dsa_params or dsa_mod.DSAParams()
    if outer_loop is None or inner_loop is None:
        d_outer, d_inner = dc_loops(ipc)
        outer_loop = d_outer if outer_loop is None else outer_loop
        inner_loop = d_inner if inner_loop is None else inner_loop
    if outer_loop < 1 or inner_loop < 0 or batch_train < 1:
        raise ValueError(
            f"need outer_loop >= 1, inner_loop >= 0, batch_train >= 1; got {outer_loop}, {inner_loop}, {batch_train}"
        )
    dev = torch.device(device)
    _, ch, h, w = images_u8.shape
    m, s = _normaliser(mean, std, ch, dev)
    method = "dsa" if strategy else "dc"
    net_kw = matching_arch_kwargs(arch, arch_kwargs, ch, h)
    g = torch.Generator().manual_seed(int(seed))
    sampler = ClassSampler(labels.cpu(), num_classes)
    losses: list[float] = []
    with measure(dev) as cost:
        real_u8 = images_u8.to(dev)
        x0, init_idx = _initial_images(real_u8, sampler, ipc, num_classes, init, m, s, g, dev)
        syn = x0.clone().requires_grad_(True)
        y_syn = torch.arange(num_classes, device=dev).repeat_interleave(ipc)
        opt_img = torch.optim.SGD([syn], lr=lr_img, momentum=0.5)
        start = 0
        if state_file is not None and Path(state_file).is_file():
            start, losses = load_state(state_file, syn, opt_img, g, (ipc, outer_loop, inner_loop, batch_real))
            if start > stop:
                raise ValueError(f"{state_file}: holds {start} iterations, more than stop_at={stop}; delete it")
        rate = Rate(iterations, start)
        for it in range(start, stop):
            net = build_network(ch, h, num_classes, _seed(g), arch, net_kw).to(dev)
            net.train()
            opt_net = torch.optim.SGD(net.parameters(), lr=lr_net)
            it_loss = torch.zeros((), device=dev)
            for ol in range(outer_loop):
                if _has_batchnorm(net):
                    _freeze_batchnorm(net, real_u8, sampler, num_classes, m, s, g, dev)
                grad_img = torch.zeros_like(syn)
                for c in range(num_classes):
                    xr = (real_u8[sampler.indices(c, batch_real, g).to(dev)].float().div_(255.0) - m) / s
                    xs = syn[c * ipc : (c + 1) * ipc]
                    if strategy:
                        aseed = _seed(g)
                        xr = dsa_mod.augment(xr, strategy, dparams, aseed)
                        xs = dsa_mod.augment(xs, strategy, dparams, aseed)
                    gr = [t.detach() for t in class_gradients(net, xr, c)]
                    gs = class_gradients(net, xs, c, create_graph=True)
                    loss_c = gradient_distance(gs, gr, distance)
                    grad_img += torch.autograd.grad(loss_c, syn)[0]
                    it_loss += loss_c.detach()
                opt_img.zero_grad(set_to_none=True)
                syn.grad = grad_img
                opt_img.step()
                if ol == outer_loop - 1:
                    break
                _train_on_synthetic(net, opt_net, syn.detach(), y_syn, inner_loop, batch_train, strategy, dparams, g)
            losses.append(float(it_loss) / (num_classes * outer_loop))
            _log(method, it, iterations, losses[-1], log_every, rate)
            if state_file is not None and (it + 1 == stop or (state_every and (it + 1) % state_every == 0)):
                save_state(state_file, it + 1, syn, opt_img, g, losses, (ipc, outer_loop, inner_loop, batch_real))
    out_params = {
        "ipc": ipc,
        "iterations": stop,
        "outer_loop": outer_loop,
        "inner_loop": inner_loop,
        "batch_real": batch_real,
        "batch_train": batch_train,
        "lr_img": lr_img,
        "lr_net": lr_net,
        "init": init,
        "distance": distance,
        "dsa_strategy": strategy or "none",
        "dsa_params": dparams.as_dict() if strategy else None,
        "arch": arch,
        "arch_kwargs": net_kw,
        "device": str(dev),
        "loss_trace": _trace(losses),
        "init_index": None if init_idx is None else init_idx.tolist(),
    }
    return DistilledSet(
        syn.detach().cpu(),
        y_syn.cpu(),
        num_classes,
        _floats(mean),
        _floats(std),
        method,
        dataset,
        out_params,
        int(seed),
        synthesis_seconds=cost.seconds,
        peak_memory_bytes=cost.peak_memory_bytes,
    )


def save_state(file, done: int, syn: torch.Tensor, opt_img, g: torch.Generator, losses, shape: tuple) -> None:
    """A matching run's state after ``done`` iterations, written atomically (tensors and numbers only, so that
    :func:`load_state` reads it with ``weights_only=True``)."""
    file = Path(file)
    file.parent.mkdir(parents=True, exist_ok=True)
    momentum = opt_img.state[syn].get("momentum_buffer") if syn in opt_img.state else None
    state = {
        "done": int(done),
        "images": syn.detach().cpu().clone(),
        "momentum": None if momentum is None else momentum.detach().cpu().clone(),
        "generator": g.get_state(),
        "losses": torch.tensor(losses, dtype=torch.float64),
        "shape": torch.tensor(shape),
    }
    tmp = file.with_name(file.name + ".tmp")
    torch.save(state, tmp)
    tmp.replace(file)


def load_state(file, syn: torch.Tensor, opt_img, g: torch.Generator, shape: tuple) -> tuple[int, list[float]]:
    """Restore :func:`save_state`'s file into the run (images, momentum, generator); the iterations done and the
    losses so far. A file of another run (other ipc or loops) is refused, naming it."""
    try:
        state = torch.load(file, weights_only=True)
    except Exception as e:
        raise ValueError(f"{file}: not a readable matching state ({type(e).__name__}); delete it to start over") from e
    if tuple(state["shape"].tolist()) != tuple(shape) or state["images"].shape != syn.shape:
        raise ValueError(
            f"{file}: the state of another run (ipc, outer, inner, batch_real = {tuple(state['shape'].tolist())}, "
            f"this one {tuple(shape)}); delete it or choose another state file"
        )
    with torch.no_grad():
        syn.copy_(state["images"].to(syn.device))
    if state["momentum"] is not None:
        opt_img.state[syn]["momentum_buffer"] = state["momentum"].to(syn.device).clone()
    g.set_state(state["generator"])
    return int(state["done"]), state["losses"].tolist()


# --------------------------------------------------------------------------------------------------
# DM


def class_means(features: torch.Tensor, y: torch.Tensor, num_classes: int) -> torch.Tensor:
    """Per-class mean of ``features`` [N, d] (one scatter-add; every class must be present)."""
    sums = features.new_zeros(num_classes, features.shape[1]).index_add_(0, y, features)
    counts = torch.bincount(y, minlength=num_classes).to(features.dtype).clamp_min(1)
    return sums / counts[:, None]


def embedding_match_loss(
    embed: nn.Module,
    real_x: torch.Tensor,
    real_y: torch.Tensor,
    syn_x: torch.Tensor,
    syn_y: torch.Tensor,
    num_classes: int,
) -> torch.Tensor:
    """DM eq. 4-5: sum over classes of || mean psi(A(T_c)) - mean psi(A(S_c)) ||^2 (inputs already augmented;
    the real side carries no gradient). One forward pass per side for all classes."""
    with torch.no_grad():
        mr = class_means(embed(real_x), real_y, num_classes)
    ms = class_means(embed(syn_x), syn_y, num_classes)
    return ((mr - ms) ** 2).sum()


def dm_synthesize(
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    ipc: int,
    num_classes: int,
    mean,
    std,
    *,
    arch: str = "convnet",
    arch_kwargs: dict | None = None,
    iterations: int = 20000,
    batch_real: int = 256,
    lr_img: float = 1.0,
    init: str = "real",
    dsa_strategy: str | None = dsa_mod.DEFAULT_STRATEGY,
    dsa_params: dsa_mod.DSAParams | None = None,
    seed: int = 0,
    device: str = "cpu",
    dataset: str = "fashion-mnist",
    log_every: int = 0,
) -> DistilledSet:
    """DM (Zhao & Bilen, WACV 2023; the code's ``main_DM.py`` defaults: 20k iterations, lr_img 1,
    batch_real 256, init real, the full DSA strategy): per iteration a fresh, frozen, randomly initialised
    embedding network; for each class one Siamese augmentation seed shared by its real batch and its
    synthetic images; :func:`embedding_match_loss`; one SGD step (momentum 0.5) on the images. All classes
    go through the network in one forward pass per side (exact for per-sample normalisations; for batch
    norm it is the code's ConvNetBN branch)."""
    _validate(images_u8, labels, ipc, num_classes, init, iterations, batch_real)
    strategy = "_".join(dsa_mod.parse_strategy(dsa_strategy)) or None
    dparams = dsa_params or dsa_mod.DSAParams()
    dev = torch.device(device)
    _, ch, h, w = images_u8.shape
    m, s = _normaliser(mean, std, ch, dev)
    net_kw = matching_arch_kwargs(arch, arch_kwargs, ch, h)
    g = torch.Generator().manual_seed(int(seed))
    sampler = ClassSampler(labels.cpu(), num_classes)
    losses: list[float] = []
    with measure(dev) as cost:
        real_u8 = images_u8.to(dev)
        x0, init_idx = _initial_images(real_u8, sampler, ipc, num_classes, init, m, s, g, dev)
        syn = x0.clone().requires_grad_(True)
        y_syn = torch.arange(num_classes, device=dev).repeat_interleave(ipc)
        opt_img = torch.optim.SGD([syn], lr=lr_img, momentum=0.5)
        rate = Rate(iterations)
        for it in range(iterations):
            embed = build_network(ch, h, None, _seed(g), arch, net_kw).to(dev)
            embed.requires_grad_(False)
            embed.train()
            idx = [sampler.indices(c, batch_real, g) for c in range(num_classes)]
            y_real = torch.cat([torch.full((len(i),), c, dtype=torch.long) for c, i in enumerate(idx)]).to(dev)
            xr = (real_u8[torch.cat(idx).to(dev)].float().div_(255.0) - m) / s
            xs = syn
            if strategy:
                seeds = [_seed(g) for _ in range(num_classes)]
                xr = torch.cat(
                    [
                        dsa_mod.augment(part, strategy, dparams, sd)
                        for part, sd in zip(xr.split([len(i) for i in idx]), seeds)
                    ]
                )
                xs = torch.cat(
                    [dsa_mod.augment(part, strategy, dparams, sd) for part, sd in zip(syn.split(ipc), seeds)]
                )
            loss = embedding_match_loss(embed, xr, y_real, xs, y_syn, num_classes)
            opt_img.zero_grad(set_to_none=True)
            loss.backward()
            opt_img.step()
            losses.append(float(loss.detach()) / num_classes)
            _log("dm", it, iterations, losses[-1], log_every, rate)
    out_params = {
        "ipc": ipc,
        "iterations": iterations,
        "batch_real": batch_real,
        "lr_img": lr_img,
        "init": init,
        "dsa_strategy": strategy or "none",
        "dsa_params": dparams.as_dict() if strategy else None,
        "arch": arch,
        "arch_kwargs": net_kw,
        "device": str(dev),
        "loss_trace": _trace(losses),
        "init_index": None if init_idx is None else init_idx.tolist(),
    }
    return DistilledSet(
        syn.detach().cpu(),
        y_syn.cpu(),
        num_classes,
        _floats(mean),
        _floats(std),
        "dm",
        dataset,
        out_params,
        int(seed),
        synthesis_seconds=cost.seconds,
        peak_memory_bytes=cost.peak_memory_bytes,
    )
