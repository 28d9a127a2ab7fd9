"""Mnemonics training (Liu, Su, Liu, Schiele & Sun, CVPR 2020, "Mnemonics Training: Multi-Class
Incremental Learning without Forgetting"; the reading notes' Mnemonics section) and the continual-learning
use of distilled sets as the exemplar memory (DC Sec. 4 / DSA Sec. 4 "continual learning": "condensed
images are more data-efficient than herding").

Class-incremental protocol (LUCIR, Hou et al. 2019, as the notes' "benchmark protocol"): half of the
classes in phase 0, then ``increment`` new classes per phase. One network with a full classifier head
whose logits are masked to the classes seen so far. Each phase trains the previous phase's network on
the new classes' data D_i plus the memory of old-class exemplars E_{0:i-1} with the model-level loss
(notes, "Model level")::

    L_all = lambda * L_c(Theta_i; E_{0:i-1} u D_i) + (1 - lambda) * L_d(Theta_i; Theta_{i-1}; E_{0:i-1} u D_i)

L_c the cross-entropy over the seen classes, L_d knowledge distillation (Hinton, temperature T, KL form
scaled by T^2) from the frozen previous-phase network on the old-class logits. After training, m
exemplars of each new class join the memory (fixed memory per class):

* ``random``: m random images of D_i per class;
* ``herding``: iCaRL's herding (:func:`compendium.distill.coresets.herding_order`) on the current
  network's L2-normalised features;
* ``mnemonics``: the exemplar-level problem (notes, "Exemplar level", steps 1-3)::

      min_eps L_c(Theta'_i(eps); D_i)   s.t.   Theta'_i(eps) = Theta_i - a few SGD steps on eps

  eps initialised by a random subset of D_i (the ``random`` method's exemplars), the temporary
  network unrolled differentiably (:func:`compendium.distill.unrolled.unroll.unroll`) and the validation loss
  back-propagated into the exemplar pixels (:func:`exemplar_step`). Here the temporary network trains on
  the new exemplars together with the (fixed) old ones, and the validation batches are class-balanced
  draws from D_i and the old exemplars, so that the objective spans every seen class (with one class per
  phase, a validation on D_i alone only rewards a bias towards that class; the authors' released code
  also validates on the new data and the old exemplars). Old exemplars are adjusted by the notes' A/B
  split (:func:`adjust_old_exemplars`): each half validates the other;
* a distilled set (DC, DSA, DM, DWA): the set's first m images of each new class. Those sets were
  distilled from the whole training set, an advantage over exemplars drawn in the phase.

Metrics: the accuracy matrix A[i, c] (phase i, class c; NaN before c is seen), the average incremental
accuracy (mean over phases of the accuracy on every seen class) and forgetting (mean over the classes
seen before the last phase of max_{i < last} A[i, c] - A[last, c]).

The networks here must not track BatchNorm statistics (the unrolled temporary network): use
``norm="instance"`` (GroupNorm per channel) or ``"none"``.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from compendium.distill import coresets
from compendium.distill.networks import build_network
from compendium.distill.unrolled.unroll import check_no_running_stats, initial_params, outer_loss, unroll

EXEMPLAR_METHODS = ("random", "herding", "mnemonics", "none")


# --------------------------------------------------------------------------------------------------
# protocol


def phase_schedule(num_classes: int = 10, base: int = 5, increment: int = 1) -> list[tuple[int, ...]]:
    """The new classes (positions 0..C-1 in the class order) of each phase: ``base`` in phase 0, then
    ``increment`` per phase (LUCIR: half of the classes first). 10, 5, 1 -> (0..4), (5,), ..., (9,)."""
    if not 1 <= base <= num_classes or increment < 1 or (num_classes - base) % increment:
        raise ValueError(f"{num_classes} classes do not split into a base of {base} plus phases of {increment}")
    out = [tuple(range(base))]
    for s in range(base, num_classes, increment):
        out.append(tuple(range(s, s + increment)))
    return out


def seen_counts(schedule: Sequence[Sequence[int]]) -> list[int]:
    """Classes seen after each phase."""
    n, out = 0, []
    for new in schedule:
        n += len(new)
        out.append(n)
    return out


def memory_sizes(schedule: Sequence[Sequence[int]], per_class: int) -> list[int]:
    """Exemplars in the memory at the start of each phase (``per_class`` per old class): 0, 5m, 6m, ..."""
    return [0] + [per_class * n for n in seen_counts(schedule)[:-1]]


# --------------------------------------------------------------------------------------------------
# the model-level loss


def distillation_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """L_d: T^2 KL(softmax(t / T) || softmax(s / T)), batch mean (Hinton et al.; the KD term of LUCIR /
    Mnemonics' model level), on the old classes' logits. Zero when the student equals the teacher."""
    if student_logits.shape != teacher_logits.shape:
        raise ValueError(
            f"student {tuple(student_logits.shape)} and teacher {tuple(teacher_logits.shape)} logits differ"
        )
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    T = float(temperature)
    log_p = F.log_softmax(teacher_logits.detach() / T, 1)
    log_q = F.log_softmax(student_logits / T, 1)
    return (log_p.exp() * (log_p - log_q)).sum(1).mean() * T * T


def model_loss(
    logits: torch.Tensor,
    labels: torch.Tensor,
    n_seen: int,
    teacher_logits: torch.Tensor | None = None,
    n_old: int = 0,
    lam: float = 0.5,
    temperature: float = 2.0,
) -> torch.Tensor:
    """L_all = lam L_c + (1 - lam) L_d: cross-entropy over the first ``n_seen`` logits and KD from the
    teacher on the first ``n_old`` (the old classes). Without a teacher (phase 0) or old classes: L_c."""
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lambda must be in [0, 1], got {lam}")
    ce = F.cross_entropy(logits[:, :n_seen], labels)
    if teacher_logits is None or n_old == 0:
        return ce
    return lam * ce + (1.0 - lam) * distillation_loss(logits[:, :n_old], teacher_logits[:, :n_old], temperature)


# --------------------------------------------------------------------------------------------------
# metrics


def _check_matrix(acc: torch.Tensor, seen: Sequence[int]) -> torch.Tensor:
    acc = torch.as_tensor(acc, dtype=torch.float64)
    if acc.ndim != 2 or acc.shape[0] != len(seen):
        raise ValueError(f"accuracy matrix must be [phases={len(seen)}, classes], got {tuple(acc.shape)}")
    for i, n in enumerate(seen):
        if not torch.isfinite(acc[i, :n]).all():
            raise ValueError(f"phase {i}: accuracies of the {n} seen classes must be finite")
    return acc


def phase_accuracy(acc: torch.Tensor, seen: Sequence[int]) -> list[float]:
    """Accuracy on the test images of every seen class after each phase (class-balanced test sets:
    the mean of the per-class accuracies)."""
    acc = _check_matrix(acc, seen)
    return [float(acc[i, :n].mean()) for i, n in enumerate(seen)]


def average_incremental_accuracy(acc: torch.Tensor, seen: Sequence[int]) -> float:
    """Mean over phases of :func:`phase_accuracy` (Rebuffi et al.; LUCIR's and Mnemonics' metric)."""
    return float(sum(phase_accuracy(acc, seen)) / len(seen))


def forgetting(acc: torch.Tensor, seen: Sequence[int]) -> float:
    """Mean over the classes seen before the last phase of (best earlier accuracy - final accuracy)
    (Chaudhry et al. 2018). NaN with a single phase."""
    acc = _check_matrix(acc, seen)
    if len(seen) < 2:
        return float("nan")
    last = len(seen) - 1
    drops = []
    for c in range(seen[-2]):
        first = next(i for i, n in enumerate(seen) if c < n)
        drops.append(float(acc[first:last, c].max() - acc[last, c]))
    return sum(drops) / len(drops)


# --------------------------------------------------------------------------------------------------
# exemplar level (Mnemonics)


def _masked_ce(n_seen: int):
    def loss(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits[:, :n_seen], y)

    return loss


def mnemonics_loss(
    model: nn.Module,
    ex_x: torch.Tensor,
    ex_y: torch.Tensor,
    val_x: torch.Tensor,
    val_y: torch.Tensor,
    n_seen: int,
    inner_steps: int,
    inner_lr: float,
    fixed_x: torch.Tensor | None = None,
    fixed_y: torch.Tensor | None = None,
) -> torch.Tensor:
    """L_c(Theta'(eps); D): a temporary copy of ``model`` trained by ``inner_steps`` full-batch SGD steps
    (rate ``inner_lr``) on the exemplars ``ex_x`` (plus the fixed ``fixed_x``), then its cross-entropy on
    the validation batch, all over the first ``n_seen`` logits. Differentiable in ``ex_x``; ``model``'s
    own weights are copied (detached), never changed."""
    if inner_steps < 1:
        raise ValueError(f"inner_steps must be >= 1, got {inner_steps}")
    x, y = ex_x, ex_y
    if fixed_x is not None and len(fixed_x):
        x, y = torch.cat([ex_x, fixed_x.detach()]), torch.cat([ex_y, fixed_y])
    loss_fn = _masked_ce(n_seen)
    params = unroll(
        model,
        initial_params(model),
        [(x, y)] * inner_steps,
        torch.full((inner_steps,), float(inner_lr)),
        loss_fn=loss_fn,
    )
    return outer_loss(model, params, val_x, val_y, loss_fn=loss_fn)


def exemplar_step(
    model: nn.Module,
    ex_x: torch.Tensor,
    ex_y: torch.Tensor,
    opt: torch.optim.Optimizer,
    val_x: torch.Tensor,
    val_y: torch.Tensor,
    n_seen: int,
    inner_steps: int,
    inner_lr: float,
    fixed_x: torch.Tensor | None = None,
    fixed_y: torch.Tensor | None = None,
) -> float:
    """One exemplar-level update (notes, Exemplar level step 3): the gradient of :func:`mnemonics_loss`
    with respect to the exemplar pixels ``ex_x`` (a leaf that ``opt`` optimises), one ``opt`` step.
    Returns the validation loss before the step."""
    if not ex_x.requires_grad or not ex_x.is_leaf:
        raise ValueError("ex_x must be a leaf tensor with requires_grad (the parameters of the exemplars)")
    opt.zero_grad(set_to_none=True)
    loss = mnemonics_loss(model, ex_x, ex_y, val_x, val_y, n_seen, inner_steps, inner_lr, fixed_x, fixed_y)
    (g,) = torch.autograd.grad(loss, [ex_x])
    ex_x.grad = g
    opt.step()
    return float(loss.detach())


def balanced_batch(labels: torch.Tensor, n: int, generator: torch.Generator) -> torch.Tensor:
    """Positions of a class-balanced random batch: ceil(n / classes) images of every class present
    (all of a class that has fewer)."""
    classes = torch.unique(labels)
    per = -(-int(n) // len(classes))
    out = []
    for c in classes.tolist():
        idx = torch.nonzero(labels == c).flatten()
        out.append(idx[torch.randperm(len(idx), generator=generator)[:per].to(idx.device)])
    return torch.cat(out)


def optimise_exemplars(
    model: nn.Module,
    init_x: torch.Tensor,
    ex_y: torch.Tensor,
    val_x: torch.Tensor,
    val_y: torch.Tensor,
    n_seen: int,
    iterations: int,
    lr: float,
    inner_steps: int,
    inner_lr: float,
    val_batch: int,
    generator: torch.Generator,
    fixed_x: torch.Tensor | None = None,
    fixed_y: torch.Tensor | None = None,
) -> tuple[torch.Tensor, list[float]]:
    """Mnemonics exemplars: ``iterations`` :func:`exemplar_step` updates (Adam, rate ``lr``, on the
    normalised pixels) from ``init_x``, each validated on a class-balanced batch of about ``val_batch``
    images of the validation data ``val_x`` (:func:`balanced_batch`, drawn with ``generator``). Returns
    the exemplars (detached) and the loss trace."""
    check_no_running_stats(model)
    ex = init_x.detach().clone().requires_grad_(True)
    if iterations <= 0:
        return ex.detach(), []
    opt = torch.optim.Adam([ex], lr=lr)
    trace = []
    for _ in range(iterations):
        idx = balanced_batch(val_y, val_batch, generator)
        trace.append(
            exemplar_step(model, ex, ex_y, opt, val_x[idx], val_y[idx], n_seen, inner_steps, inner_lr, fixed_x, fixed_y)
        )
    return ex.detach(), trace


def ab_split(labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Positions of the A and B halves of a memory: every class's exemplars alternately (A gets the
    extra one of an odd class)."""
    a, b = [], []
    for c in torch.unique(labels).tolist():
        m = torch.nonzero(labels == c).flatten()
        a.append(m[0::2])
        b.append(m[1::2])
    return torch.cat(a), torch.cat(b)


def adjust_old_exemplars(
    model: nn.Module,
    mem_x: torch.Tensor,
    mem_y: torch.Tensor,
    n_seen: int,
    iterations: int,
    lr: float,
    inner_steps: int,
    inner_lr: float,
) -> torch.Tensor:
    """The notes' adjustment of old exemplars: split E_{0:i-1} into A and B; optimise A with B as the
    validation set (the temporary network trained on A), then B with A. Returns the adjusted memory."""
    if iterations <= 0 or len(mem_x) < 2:
        return mem_x
    a, b = ab_split(mem_y)
    if len(b) == 0:
        return mem_x
    out = mem_x.clone()
    g = torch.Generator().manual_seed(0)  # the validation batches are the whole other half (order only)
    new_a, _ = optimise_exemplars(
        model, out[a], mem_y[a], out[b], mem_y[b], n_seen, iterations, lr, inner_steps, inner_lr, len(b), g
    )
    out[a] = new_a
    new_b, _ = optimise_exemplars(
        model, out[b], mem_y[b], out[a], mem_y[a], n_seen, iterations, lr, inner_steps, inner_lr, len(a), g
    )
    out[b] = new_b
    return out


# --------------------------------------------------------------------------------------------------
# selection of the other methods


def random_exemplars(labels: torch.Tensor, classes: Sequence[int], m: int, generator: torch.Generator) -> torch.Tensor:
    """Positions of ``m`` random images of each class (in ``classes`` order)."""
    out = []
    for c in classes:
        idx = torch.nonzero(labels == c).flatten()
        if len(idx) < m:
            raise ValueError(f"class {c} has {len(idx)} images, fewer than the memory of {m}")
        out.append(idx[torch.randperm(len(idx), generator=generator)[:m]])
    return torch.cat(out)


@torch.no_grad()
def features(model: nn.Module, x: torch.Tensor, batch: int = 500) -> torch.Tensor:
    """The backbone's features (``model[0]`` of a :func:`build_network` network)."""
    model.eval()
    return torch.cat([model[0](x[i : i + batch]) for i in range(0, len(x), batch)])


def herding_exemplars(feats: torch.Tensor, labels: torch.Tensor, classes: Sequence[int], m: int) -> torch.Tensor:
    """Positions of each class's ``m`` herding exemplars (iCaRL: L2-normalised features), in herding order."""
    f = F.normalize(feats.double(), dim=1)
    out = []
    for c in classes:
        idx = torch.nonzero(labels == c).flatten()
        out.append(idx[coresets.herding_order(f[idx], m)])
    return torch.cat(out)


# --------------------------------------------------------------------------------------------------
# the class-incremental run


@dataclasses.dataclass(frozen=True)
class CILConfig:
    """One class-incremental run. Sizes: ``train_per_class`` images of each class are D (a stratified
    subset of the training set), ``memory`` exemplars per old class."""

    num_classes: int = 10
    base: int = 5
    increment: int = 1
    memory: int = 10
    train_per_class: int = 100
    width: int = 16
    depth: int = 3
    norm: str = "instance"
    base_steps: int = 150
    inc_steps: int = 40
    batch: int = 64
    lr: float = 0.01
    momentum: float = 0.9
    weight_decay: float = 5e-4
    lam: float = 0.5
    temperature: float = 2.0
    mn_iterations: int = 10
    mn_lr: float = 0.05
    mn_inner_steps: int = 3
    mn_inner_lr: float = 0.05
    mn_val_batch: int = 128
    mn_adjust_iterations: int = 0
    device: str = "cpu"

    def validate(self) -> None:
        phase_schedule(self.num_classes, self.base, self.increment)
        if self.norm == "batch":
            raise ValueError(
                "norm='batch' tracks running statistics; Mnemonics unrolls the network (use instance/none)"
            )
        if self.memory < 1 or self.train_per_class < self.memory:
            raise ValueError(f"need 1 <= memory ({self.memory}) <= train_per_class ({self.train_per_class})")
        for k in ("base_steps", "inc_steps", "batch"):
            if getattr(self, k) < 1:
                raise ValueError(f"{k} must be >= 1")


def stratified_subset(labels: torch.Tensor, per_class: int, num_classes: int, seed: int) -> torch.Tensor:
    """Positions of ``per_class`` random images of every class (seeded; sorted)."""
    g = torch.Generator().manual_seed(int(seed))
    return random_exemplars(labels, range(num_classes), per_class, g).sort().values


def _train_phase(
    model: nn.Module,
    teacher: nn.Module | None,
    x: torch.Tensor,
    y: torch.Tensor,
    n_seen: int,
    n_old: int,
    steps: int,
    cfg: CILConfig,
    g: torch.Generator,
) -> list[float]:
    opt = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay)
    model.train()
    losses, perm, pos = [], torch.randperm(len(x), generator=g), 0
    for _ in range(steps):
        if pos + cfg.batch > len(x):
            perm, pos = torch.randperm(len(x), generator=g), 0
        idx = perm[pos : pos + cfg.batch]
        pos += cfg.batch
        xb, yb = x[idx], y[idx]
        t = None
        if teacher is not None and n_old:
            with torch.no_grad():
                t = teacher(xb)
        loss = model_loss(model(xb), yb, n_seen, t, n_old, cfg.lam, cfg.temperature)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return losses


@torch.no_grad()
def class_accuracy(
    model: nn.Module, x: torch.Tensor, y: torch.Tensor, n_seen: int, num_classes: int, batch: int = 1000
) -> torch.Tensor:
    """Per-class accuracy over the first ``n_seen`` logits on the test images of the seen classes (NaN for
    the unseen classes)."""
    model.eval()
    keep = y < n_seen
    x, y = x[keep], y[keep]
    pred = torch.cat([model(x[i : i + batch])[:, :n_seen].argmax(1) for i in range(0, len(x), batch)])
    out = torch.full((num_classes,), float("nan"), dtype=torch.float64)
    for c in range(n_seen):
        m = y == c
        out[c] = (pred[m] == c).double().mean() if m.any() else float("nan")
    return out


def _memory_from_set(sets: dict, name: str, classes: Sequence[int], m: int) -> tuple[torch.Tensor, torch.Tensor]:
    xs, ys = sets[name]
    out_x, out_y = [], []
    for c in classes:
        idx = torch.nonzero(ys == c).flatten()
        if len(idx) < m:
            raise ValueError(
                f"the {name} set has {len(idx)} images of class position {c}, fewer than the memory of {m}"
            )
        out_x.append(xs[idx[:m]])
        out_y.append(ys[idx[:m]])
    return torch.cat(out_x), torch.cat(out_y)


def run_incremental(
    train_x: torch.Tensor,
    train_y: torch.Tensor,
    test_x: torch.Tensor,
    test_y: torch.Tensor,
    methods: Sequence[str],
    cfg: CILConfig,
    seed: int,
    sets: dict | None = None,
    keep_exemplars: bool = False,
) -> dict:
    """Every exemplar method of ``methods`` on one seed: phase 0 is trained once (it does not depend on
    the memory) and copied into each method's run; each method then selects its phase-0 exemplars and
    runs phases 1.. . Data: normalised float images, labels as class positions 0..C-1 in the class order
    (phase 0 = positions 0..base-1). ``sets``: {name: (images, labels)} of the distilled memories
    (labels as positions). Returns {"acc": {method: [phases, C] matrix}, "aia", "forgetting",
    "seconds", "mn_trace", and with ``keep_exemplars`` the Mnemonics exemplars and their initialisations}."""
    cfg.validate()
    sets = sets or {}
    for m in methods:
        if m not in EXEMPLAR_METHODS and m not in sets:
            raise ValueError(
                f"unknown exemplar method {m!r}: not one of {EXEMPLAR_METHODS} nor a given set ({sorted(sets)})"
            )
        if m in sets:
            counts = torch.bincount(sets[m][1].cpu(), minlength=cfg.num_classes)
            if int(counts.min()) < cfg.memory:
                raise ValueError(
                    f"the {m} set has {int(counts.min())} images of some class, fewer than the memory of "
                    f"{cfg.memory} per class"
                )
    dev = torch.device(cfg.device)
    train_x, train_y, test_x, test_y = train_x.to(dev), train_y.to(dev), test_x.to(dev), test_y.to(dev)
    sched = phase_schedule(cfg.num_classes, cfg.base, cfg.increment)
    seen = seen_counts(sched)
    t0, c0 = time.perf_counter(), time.process_time()
    base = build_network(
        train_x.shape[1],
        train_x.shape[-1],
        cfg.num_classes,
        seed,
        "convnet",
        {"width": cfg.width, "depth": cfg.depth, "norm": cfg.norm},
    ).to(dev)
    g = torch.Generator().manual_seed(int(seed) * 1000 + 1)
    m0 = torch.isin(train_y, torch.tensor(sched[0], device=dev))
    _train_phase(base, None, train_x[m0], train_y[m0], seen[0], 0, cfg.base_steps, cfg, g)
    acc0 = class_accuracy(base, test_x, test_y, seen[0], cfg.num_classes)
    base_seconds = time.perf_counter() - t0
    out = {
        "acc": {},
        "aia": {},
        "forgetting": {},
        "seconds": {},
        "mn_trace": [],
        "seed": int(seed),
        "base_seconds": base_seconds,
        "exemplars": {},
    }
    for method in methods:
        t1 = time.perf_counter()
        model = copy.deepcopy(base)
        mem_x = train_x.new_zeros((0, *train_x.shape[1:]))
        mem_y = train_y.new_zeros((0,))
        rows = [acc0]
        for i, new in enumerate(sched):
            n_old, n_seen = (seen[i - 1] if i else 0), seen[i]
            mask = torch.isin(train_y, torch.tensor(new, device=dev))
            d_x, d_y = train_x[mask], train_y[mask]
            if i:
                teacher = copy.deepcopy(model).eval()
                for p in teacher.parameters():
                    p.requires_grad_(False)
                gp = torch.Generator().manual_seed(int(seed) * 1000 + 100 + i)
                _train_phase(
                    model,
                    teacher,
                    torch.cat([d_x, mem_x]),
                    torch.cat([d_y, mem_y]),
                    n_seen,
                    n_old,
                    cfg.inc_steps,
                    cfg,
                    gp,
                )
                rows.append(class_accuracy(model, test_x, test_y, n_seen, cfg.num_classes))
            if i == len(sched) - 1 or method == "none":
                continue
            # exemplars of the new classes (same random draw for random and Mnemonics' initialisation)
            gs = torch.Generator().manual_seed(int(seed) * 1000 + 500 + i)
            if method in ("random", "mnemonics"):
                pick = random_exemplars(d_y.cpu(), new, cfg.memory, gs).to(dev)
                ex_x, ex_y = d_x[pick], d_y[pick]
                if method == "mnemonics":
                    init = ex_x
                    if i and cfg.mn_adjust_iterations:
                        mem_x = adjust_old_exemplars(
                            model,
                            mem_x,
                            mem_y,
                            n_seen,
                            cfg.mn_adjust_iterations,
                            cfg.mn_lr,
                            cfg.mn_inner_steps,
                            cfg.mn_inner_lr,
                        )
                    # validation: the phase's real data D_i and the old exemplars (class-balanced batches)
                    ex_x, trace = optimise_exemplars(
                        model,
                        init,
                        ex_y,
                        torch.cat([d_x, mem_x]),
                        torch.cat([d_y, mem_y]),
                        n_seen,
                        cfg.mn_iterations,
                        cfg.mn_lr,
                        cfg.mn_inner_steps,
                        cfg.mn_inner_lr,
                        cfg.mn_val_batch,
                        gs,
                        mem_x,
                        mem_y,
                    )
                    out["mn_trace"].append(trace)
                    if keep_exemplars:
                        out["exemplars"][i] = (init.cpu(), ex_x.cpu(), ex_y.cpu())
            elif method == "herding":
                pick = herding_exemplars(features(model, d_x).cpu(), d_y.cpu(), new, cfg.memory).to(dev)
                ex_x, ex_y = d_x[pick], d_y[pick]
            else:
                sx, sy = sets[method]
                ex_x, ex_y = _memory_from_set({method: (sx.to(dev), sy.to(dev))}, method, new, cfg.memory)
            mem_x, mem_y = torch.cat([mem_x, ex_x.detach()]), torch.cat([mem_y, ex_y])
        acc = torch.stack(rows)
        out["acc"][method] = acc
        out["aia"][method] = average_incremental_accuracy(acc, seen)
        out["forgetting"][method] = forgetting(acc, seen)
        out["seconds"][method] = time.perf_counter() - t1
    out["cpu_seconds"] = time.process_time() - c0  # this process's CPU time (the wall time on an idle core)
    return out


def positions(labels: torch.Tensor, order: Sequence[int]) -> torch.Tensor:
    """Class labels as positions in the class ``order`` (phase 0 = the first ``base`` of the order)."""
    order = [int(c) for c in order]
    if sorted(order) != list(range(len(order))):
        raise ValueError(f"order must be a permutation of 0..{len(order) - 1}, got {order}")
    lut = torch.empty(len(order), dtype=torch.long)
    lut[torch.tensor(order)] = torch.arange(len(order))
    return lut[labels]


def as_memory_set(dset, order: Sequence[int], mean, std) -> tuple[torch.Tensor, torch.Tensor]:
    """A :class:`~compendium.distill.sets.DistilledSet` as (images in the stage's normalisation ``mean`` / ``std``,
    one value per channel or one for all, labels as positions in ``order``); hard labels (a soft-labelled set such as
    DWA's keeps
    only its class)."""
    mean, std = (tuple(map(float, v)) if hasattr(v, "__len__") else (float(v),) for v in (mean, std))
    x = dset.images.float()
    if tuple(dset.mean) != mean or tuple(dset.std) != std:  # renormalise
        x = (
            x * torch.tensor(dset.std).view(1, -1, 1, 1)
            + torch.tensor(dset.mean).view(1, -1, 1, 1)
            - torch.tensor(mean).view(1, -1, 1, 1)
        ) / torch.tensor(std).view(1, -1, 1, 1)
    if dset.num_classes != len(order):
        raise ValueError(f"the {dset.method} set has {dset.num_classes} classes, the class order {len(order)}")
    return x, positions(dset.labels, order)
