"""Text dataset distillation (TDD; Sucholutsky & Schonlau, "Soft-Label Dataset Distillation and Text
Dataset Distillation", Alg. 1a applied to embedded text, §3.3; the reading notes' SLDD/TDD section).

A distilled set is M sentence matrices ``x~ [M, L, d]`` in the token-embedding space of
:mod:`compendium.core.text`, soft labels ``y~`` (label logits, softmaxed into the inner loss's target
distributions) and one learned step size per inner step. Each outer iteration draws initial weights
theta_0 (a fresh Xavier initialization, the paper's random-init variant, or always the same one: the
fixed-init variant), trains the learner through ``steps x epochs`` SGD steps on the distilled batches
with :func:`compendium.distill.unrolled.unroll.unroll`, and updates x~, y~ and the step sizes by Adam on the
real-data loss of the trained weights (DD's Alg. 1 line 9 / SLDD's Alg. 1a line 10).

* :func:`tdd_loss`: the outer objective of one theta_0 (a pure function of the distilled tensors).
* :func:`distill_text`: the optimisation; ``soft=False`` is plain DD (fixed one-hot labels),
  ``learn_x=False`` learns only the step sizes of a fixed set (DD's "random real" with learned rates).
* :func:`train_schedule` / :func:`eval_schedule`: DD's evaluation, a learner trained by the distilled
  schedule (its batches, labels and learned rates) from a fresh (or the fixed) initialization.
* :func:`eval_adam`: a fixed Adam recipe for any set (cross-learner evaluation, baselines, full data);
  :func:`evaluate_set` / :func:`adam_rows`: the rows of one set's evaluations (worker entry points).
* :func:`class_balanced_real`: random real sentences, ``ipc`` per class (the notes' random-real baseline).

With ``plateau_every`` > 0 the outer loop stops at a measured plateau of its loss, tested with the claims'
criterion (:func:`compendium.core.plateau.is_plateau`) as DD's loop does; ``iterations`` is then the cap.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F

from compendium.core import plateau, text
from compendium.distill.kernel import class_balanced_index
from compendium.distill.sets import load_tensors, save_tensors
from compendium.distill.unrolled.unroll import dd_batches, initial_params, outer_loss, unroll


@dataclass
class TextDistilled:
    """A distilled text set: ``x [M, L, d]`` ordered so that each of the ``steps`` batches holds
    ``ipc / steps`` sentences of every class, label logits ``[M, C]`` (``soft``) or int labels, and one
    step size per inner step (``steps * epochs``)."""

    x: torch.Tensor
    labels: torch.Tensor
    lrs: torch.Tensor
    steps: int
    epochs: int
    arch: str
    arch_kwargs: dict
    init: str = "random"
    init_seed: int = 0
    soft: bool = True
    method: str = "TDD"
    losses: list = field(default_factory=list)
    seconds: float = 0.0

    @property
    def num_classes(self) -> int:
        return self.labels.shape[1] if self.soft else int(self.labels.max()) + 1

    def targets(self) -> torch.Tensor:
        """The inner loss's targets: softmax(label logits) (SLDD) or the int labels (DD)."""
        return F.softmax(self.labels, 1) if self.soft else self.labels

    def hard_labels(self) -> torch.Tensor:
        return self.labels.argmax(1) if self.soft else self.labels

    def batches(self):
        return dd_batches(self.x, self.targets(), self.steps, self.epochs)

    def state(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def save(self, path) -> Path:
        """Write the set through :func:`compendium.distill.sets.save_tensors` (kind ``"text"``)."""
        st = self.state()
        tensors = {k: st.pop(k) for k in _TENSORS}
        st["losses"] = [float(v) for v in st["losses"]]
        st["seconds"] = float(st["seconds"])
        return save_tensors(path, KIND, tensors, st)

    @classmethod
    def load(cls, path) -> "TextDistilled":
        """Read a set written by :meth:`save` (list-valued learner kwargs, e.g. ``widths``, back as tuples)."""
        tensors, meta = load_tensors(path, KIND)
        meta["arch_kwargs"] = {k: tuple(v) if isinstance(v, list) else v for k, v in meta["arch_kwargs"].items()}
        return cls(**tensors, **meta)


KIND = "text"  # the set type of text DD in the one set file format
_TENSORS = ("x", "labels", "lrs")


def class_interleaved(labels_per_step: int, num_classes: int, steps: int) -> torch.Tensor:
    """The class of each distilled sample: ``steps`` blocks, each ``labels_per_step`` copies of
    ``0..C-1`` (so :func:`dd_batches`' equal chunks are class-balanced)."""
    return torch.arange(num_classes).repeat(labels_per_step * steps)


def class_balanced_real(y: torch.Tensor, ipc: int, num_classes: int, seed: int) -> torch.Tensor:
    """Indices of ``ipc`` random real samples per class (seeded;
    :func:`compendium.distill.kernel.class_balanced_index`),
    in the class-interleaved order of :func:`class_interleaved`."""
    counts = torch.bincount(y, minlength=num_classes)
    if int(counts.min()) < ipc:
        c = int(counts.argmin())
        raise ValueError(f"class {c} has {int(counts[c])} samples, fewer than ipc={ipc}")
    idx = class_balanced_index(y, ipc, num_classes, torch.Generator().manual_seed(seed))
    return idx.view(num_classes, ipc).t().reshape(-1)  # sample k of every class, then k+1


def _check(ipc: int, steps: int, epochs: int) -> None:
    if ipc < 1 or steps < 1 or epochs < 1:
        raise ValueError(f"ipc, steps and epochs must be >= 1, got {ipc}, {steps}, {epochs}")
    if ipc % steps:
        raise ValueError(f"ipc={ipc} does not split into {steps} class-balanced batches")


def tdd_loss(model, theta0, x_syn, targets, lrs, steps: int, epochs: int, x_real, y_real) -> torch.Tensor:
    """SLDD Alg. 1a lines 7-8 for one theta_0: train through ``steps * epochs`` SGD steps on the
    distilled batches with rates ``lrs``, then the real-data loss of the trained weights."""
    params = unroll(model, theta0, dd_batches(x_syn, targets, steps, epochs), lrs)
    return outer_loss(model, params, x_real, y_real)


def _theta0(model, init: str, init_seed: int, draw: int, seed: int):
    s = init_seed if init == "fixed" else 1_000_003 * (seed + 1) + draw
    return initial_params(text.xavier_init_(model, torch.Generator().manual_seed(s)))


def distill_text(
    x_train: torch.Tensor,
    y_train: torch.Tensor,
    num_classes: int,
    ipc: int,
    arch: str = "textconvnet",
    arch_kwargs: dict | None = None,
    init: str = "random",
    init_seed: int = 0,
    iterations: int = 200,
    steps: int = 1,
    epochs: int = 3,
    lr0: float = 0.01,
    outer_lr: float = 0.01,
    real_batch: int = 128,
    inits_per_iter: int = 1,
    soft: bool = True,
    learn_x: bool = True,
    x_init: str = "noise",
    label_init: float = 1.0,
    seed: int = 0,
    lr_lr: float | None = None,
    method: str | None = None,
    plateau_every: int = 0,
    min_iterations: int = 0,
) -> TextDistilled:
    """TDD (SLDD Alg. 1a on ``[L, d]`` sentence matrices).

    ``init`` "random": a fresh Xavier theta_0 per outer iteration (``inits_per_iter`` of them, losses
    summed as Alg. 1a's sum over j); "fixed": always the Xavier draw of ``init_seed``. ``x_init``
    "noise": Gaussian entries with the std of the real token rows, "real": random real sentences
    (``learn_x=False`` keeps them: only the rates, and the labels if ``soft``, are learned). Labels start
    as ``label_init`` times one-hot logits. Adam (``outer_lr``) on x~, the label logits and log step
    sizes (initialised at ``lr0``; their own Adam rate ``lr_lr``, default ``outer_lr``); real batches of
    ``real_batch`` drawn per iteration. ``plateau_every`` > 0: every ``plateau_every``-th iteration from
    ``min_iterations`` on, stop once the loss trace passes the claims' plateau test (``iterations`` caps it).
    """
    _check(ipc, steps, epochs)
    if plateau_every < 0 or min_iterations < 0:
        raise ValueError(f"plateau_every and min_iterations must be >= 0, got {plateau_every}, {min_iterations}")
    if init not in ("random", "fixed"):
        raise ValueError(f"init must be 'random' or 'fixed', got {init!r}")
    if x_init not in ("noise", "real"):
        raise ValueError(f"x_init must be 'noise' or 'real', got {x_init!r}")
    if not learn_x and x_init != "real":
        raise ValueError("learn_x=False keeps x~ as initialised: use x_init='real'")
    if x_train.dim() != 3 or len(x_train) != len(y_train):
        raise ValueError(f"x_train must be [N, L, d] with one label each, got {tuple(x_train.shape)}")
    arch_kwargs = dict(arch_kwargs or {})
    g = torch.Generator().manual_seed(seed)
    labels = class_interleaved(ipc // steps, num_classes, steps)
    if x_init == "real":
        x = x_train[class_balanced_real(y_train, ipc, num_classes, seed)].clone()
    else:
        rows = x_train.reshape(-1, x_train.shape[2])
        std = rows[rows.abs().sum(1) > 0].std()  # entry std of the real (non-padding) token rows
        x = torch.randn((len(labels),) + tuple(x_train.shape[1:]), generator=g) * std
    y_param = (F.one_hot(labels, num_classes).float() * label_init) if soft else labels
    log_lrs = torch.full((steps * epochs,), float(torch.log(torch.tensor(lr0))))
    groups = [{"params": [log_lrs], "lr": outer_lr if lr_lr is None else lr_lr}]
    groups += [{"params": [t]} for t, on in ((x, learn_x), (y_param, soft)) if on]
    for grp in groups:
        grp["params"][0].requires_grad_(True)
    opt = torch.optim.Adam(groups, lr=outer_lr)
    model = text.build_learner(arch, x_train.shape[2], num_classes, seed=0, **arch_kwargs)
    losses, draw, t0 = [], 0, time.perf_counter()
    for _ in range(iterations):
        idx = torch.randperm(len(x_train), generator=g)[:real_batch]
        targets = F.softmax(y_param, 1) if soft else y_param
        total = 0.0
        for _ in range(inits_per_iter):
            theta0 = _theta0(model, init, init_seed, draw, seed)
            draw += 1
            total = total + tdd_loss(
                model, theta0, x, targets, log_lrs.exp(), steps, epochs, x_train[idx], y_train[idx]
            )
        opt.zero_grad(set_to_none=True)
        total.backward()
        opt.step()
        losses.append(float(total.detach()) / inits_per_iter)
        if plateau.stop_at_plateau(losses, plateau_every, min_iterations):
            break
    return TextDistilled(
        x.detach(),
        y_param.detach(),
        log_lrs.detach().exp(),
        steps,
        epochs,
        arch,
        arch_kwargs,
        init,
        init_seed,
        soft,
        method or ("TDD" if learn_x else "real + learned rates"),
        losses,
        time.perf_counter() - t0,
    )


def train_schedule(model, batches, lrs) -> dict:
    """DD's evaluation training: plain SGD through the distilled schedule (no graph kept)."""
    params = initial_params(model)
    for (xb, yb), lr in zip(batches, lrs):
        params = {k: v.detach().requires_grad_() for k, v in params.items()}
        loss = outer_loss(model, params, xb, yb)
        grads = torch.autograd.grad(loss, list(params.values()))
        params = {k: v.detach() - float(lr) * g for (k, v), g in zip(params.items(), grads)}
    with torch.no_grad():
        for k, p in model.named_parameters():
            p.copy_(params[k])
    return params


def eval_schedule(
    ds: TextDistilled, x_test: torch.Tensor, y_test: torch.Tensor, seed: int, arch: str | None = None
) -> float:
    """Test accuracy of a learner trained by ``ds``'s schedule: from the fixed theta_0 when ``ds`` was
    distilled with a fixed init (the paper's fixed-init evaluation), else from the Xavier draw of ``seed``
    (unseen by the distillation, whose draws come from a different seed stream)."""
    arch = arch or ds.arch
    model = text.build_learner(
        arch, ds.x.shape[2], ds.num_classes, seed=0, **(ds.arch_kwargs if arch == ds.arch else {})
    )
    init_seed = ds.init_seed if ds.init == "fixed" else 7_000_001 + seed
    text.xavier_init_(model, torch.Generator().manual_seed(init_seed))
    train_schedule(model, ds.batches(), ds.lrs)
    return text.accuracy(model, x_test, y_test)


def eval_adam(
    x: torch.Tensor,
    y: torch.Tensor,
    arch: str,
    arch_kwargs: dict,
    x_test: torch.Tensor,
    y_test: torch.Tensor,
    num_classes: int,
    seed: int,
    steps: int,
    lr: float = 1e-3,
    batch: int = 64,
) -> float:
    """Test accuracy of a fresh learner (Xavier draw of ``seed``) trained by :func:`compendium.core.text.train_adam`."""
    model = text.build_learner(arch, x.shape[2], num_classes, seed=7_000_001 + seed, **arch_kwargs)
    text.train_adam(model, x, y, steps, lr=lr, batch=batch, seed=seed)
    return text.accuracy(model, x_test, y_test)


# ----------------------------------------------------------------------------- worker entry points


def distill_job(*args, **kwargs) -> TextDistilled:
    """:func:`distill_text` for :func:`compendium.core.parallel.run_calls`."""
    return distill_text(*args, **kwargs)


def with_real(ds: TextDistilled, x_real: torch.Tensor, y_real: torch.Tensor) -> TextDistilled:
    """Random real sentences (hard labels) in ``ds``'s place: the same schedule, learned step sizes and
    theta_0 regime (the random-real baseline at equal size under DD's evaluation)."""
    return TextDistilled(
        x_real,
        y_real,
        ds.lrs,
        ds.steps,
        ds.epochs,
        ds.arch,
        ds.arch_kwargs,
        ds.init,
        ds.init_seed,
        soft=False,
        method="random real",
    )


HARD_SUFFIX = "(argmax hard labels)"  # the method name's suffix of a set's hard-label version


def with_hard_labels(ds: TextDistilled) -> TextDistilled:
    """The same sentences with the argmax of their learned labels as hard labels, the same schedule, learned
    step sizes and theta_0 regime (DD-Ranking's syn-hard arm of a soft-label set); method ``"<method> (argmax
    hard labels)"``. Kept as label logits log(one-hot) (0 / -inf: the targets are exactly one-hot, the loss
    the cross-entropy), so the learner keeps all C outputs even where an argmax never picks a class."""
    onehot = F.one_hot(ds.hard_labels(), ds.num_classes).float()
    return TextDistilled(**{**ds.state(), "labels": onehot.log(), "soft": True, "method": f"{ds.method} {HARD_SUFFIX}"})


def evaluate_set(
    ds: TextDistilled,
    row: dict,
    x_test,
    y_test,
    seeds,
    real: dict | None = None,
    learners: dict | None = None,
    adam: dict | None = None,
) -> list[dict]:
    """Test accuracies of one distilled set, one row each (``row`` + set (``ds.method``), method (of the
    sentences trained on), protocol, theta0, learner, seed, acc):

    * ``schedule``: a learner of ``ds.arch`` trained by the set's own schedule (DD's evaluation), from its
      fixed theta_0 (fixed-init sets; once) and from fresh Xavier draws (every seed);
    * ``schedule`` on ``real[seed] = (x, y)`` (random real sentences through the same schedule and theta_0;
      their ``method`` is "random real");
    * ``adam``: each learner of ``learners`` ``{name: kwargs}`` trained by :func:`eval_adam` (``adam``:
      steps, lr, batch) on the sentences with their soft-label targets, per seed.
    """
    out = []

    def add(method, protocol, theta0, learner, seed, acc):
        out.append(
            {
                **row,
                "set": ds.method,
                "method": method,
                "protocol": protocol,
                "theta0": theta0,
                "learner": learner,
                "seed": seed,
                "acc": acc,
            }
        )

    if ds.init == "fixed":
        add(ds.method, "schedule", "fixed", ds.arch, 0, eval_schedule(ds, x_test, y_test, 0))
    fresh = TextDistilled(**{**ds.state(), "init": "random"})
    for s in seeds:
        add(ds.method, "schedule", "fresh", ds.arch, s, eval_schedule(fresh, x_test, y_test, s))
        if real is not None:
            rs = with_real(ds, *real[s])
            add(
                "random real",
                "schedule",
                "fixed" if ds.init == "fixed" else "fresh",
                ds.arch,
                s,
                eval_schedule(rs, x_test, y_test, s),
            )
        for name, kw in (learners or {}).items():
            add(
                ds.method,
                "adam",
                "fresh",
                name,
                s,
                eval_adam(ds.x, ds.targets(), name, kw, x_test, y_test, ds.num_classes, s, **adam),
            )
    return out


def adam_rows(row: dict, sets: dict, learners: dict, x_test, y_test, num_classes: int, adam: dict) -> list[dict]:
    """:func:`eval_adam` of fixed sets (random real, full train): ``sets`` ``{seed: (x, y)}``, every learner
    ``{name: kwargs}`` per seed."""
    return [
        {
            **row,
            "protocol": "adam",
            "theta0": "fresh",
            "learner": name,
            "seed": s,
            "acc": eval_adam(x, y, name, kw, x_test, y_test, num_classes, s, **adam),
        }
        for name, kw in learners.items()
        for s, (x, y) in sets.items()
    ]
