"""The papers' self-supervised protocol as one call: pre-train a student at a budget, plainly or
with ReLA, then probe its frozen features (camera-ready Sec. 5, Tables 8-9; v1 Sec. 5, Tables 9-10).

* :class:`Setup`: what every arm of an experiment shares (the training set D, the test set, the
  optimiser and probe settings).
* :class:`Arm`: one cell of a table: the method, the student, the budget, and for ReLA the prior,
  the lambda schedule and the ablation switches (static subset, frozen W and b, target order).
* :func:`dataset_setup`: D as the ``priors`` stage chose it, the test set, and the
  :class:`compendium.rela.targets.TargetBank` of its targets.
* :func:`frozen_probe`: the linear probe of a frozen backbone (students and priors alike).
* :func:`run`: trains one arm and returns its row (probe accuracy, the paper's last-3 statistic,
  steps, switch step, seconds), its per-step trace and, on request, the trained backbone.
* :func:`check_priors`: every prior checkpoint and target file the arms will read, checked before
  the first arm trains (:func:`run_many` calls it first).
"""

from __future__ import annotations

import copy
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from compendium.core import augment, data, models, probe, resume
from compendium.core.device import pick_device
from compendium.core.parallel import run_calls
from compendium.core.progress import say
from compendium.rela import priors, scaled_switch, schedule, targets
from compendium.rela.targets import TargetBank
from compendium.ssl import methods, train

SCHEDULES = (*schedule.KINDS, scaled_switch.NAME)


@dataclass
class Setup:
    images: torch.Tensor  # D: uint8 [N, C, H, W]
    labels: torch.Tensor
    test_images: torch.Tensor
    test_labels: torch.Tensor
    mean: tuple
    std: tuple
    epochs: int = 3  # the full (100%) budget's epochs
    batch_size: int = 128
    lr: float = 1e-3
    weight_decay: float = 0.01
    head_mult: float = 1.0
    probe_epochs: int = 30
    probe_lr: float = 1e-3
    probe_batch_size: int = 256
    rela_code_extras: bool = True
    device: str = "auto"
    num_classes: int = 10
    probe_train: int = 0  # images of D the probe trains on (0: all), a fixed random subset
    probe_standardize: bool = False  # z-score the features with the probe-training statistics first
    cpu_bf16: bool = False  # bf16 autocast of pre-training on the CPU (ssl.train.PretrainConfig)

    @property
    def size(self) -> int:
        return int(self.images.shape[-1])


@dataclass
class Arm:
    """One trained model. ``prior`` empty: the plain method; ``untrained``: the random student,
    BN statistics estimated from D, probed as is."""

    name: str
    method: str = "byol"
    arch: str = "convnet"
    arch_kwargs: dict = field(default_factory=dict)
    budget: float = 0.1
    seed: int = 0
    prior: str = ""
    # switch (camera-ready) | switch_scaled (its EMAs scaled to the run) | v1 | epochs / first (ReLA for the first w of
    schedule: str = "switch"
    #                                   the epochs / steps) | constant (lambda = w)
    w: float = 0.0
    budget_mode: str = "dynamic"  # dynamic (fresh subset each epoch, code) | static (v1 Fig. 4a)
    transfer_trainable: bool = True  # paper; False = the released code (W, b frozen)
    order: str = "code"  # target pre-processing: code (PCA then z-score) | paper
    untrained: bool = False
    head_mult: float | None = None  # None: the setup's
    reuse: str = ""  # a ``trained:`` prior that *is* this arm's result (see :func:`reusable`)

    def __post_init__(self):
        if self.schedule not in SCHEDULES:
            raise ValueError(f"arm {self.name!r}: unknown schedule {self.schedule!r}; known: {SCHEDULES}")
        if not 0 < self.budget <= 1:
            raise ValueError(f"arm {self.name!r}: budget must be in (0, 1], got {self.budget}")
        if self.budget_mode not in ("dynamic", "static"):
            raise ValueError(f"arm {self.name!r}: budget_mode must be dynamic or static")

    def student_kwargs(self, setup: Setup) -> dict:
        return {"in_channels": int(setup.images.shape[1]), "image_size": setup.size, **self.arch_kwargs}

    def make_schedule(self, setup: Setup):
        if self.schedule == "epochs":
            return schedule.make("epochs", w=self.w, epochs=setup.epochs)
        if self.schedule == "first":
            per_epoch = train.BudgetSampler(len(setup.images), self.budget).steps_per_epoch(setup.batch_size)
            return schedule.make("first", w=self.w, total=max(1, setup.epochs * per_epoch))
        if self.schedule == "constant":
            return schedule.make("constant", value=self.w)
        if self.schedule == scaled_switch.NAME:  # one time scale for every budget, as the paper's constants are
            full = train.BudgetSampler(len(setup.images), 1.0).steps_per_epoch(setup.batch_size) * setup.epochs
            return scaled_switch.scaled(scaled_switch.time_scale(full))
        return schedule.make(self.schedule)


def train_record(arm: Arm, setup: Setup) -> dict:
    """What identifies a plain pre-training run: compared with a prior's ``train`` record."""
    return {
        "method": arm.method,
        "epochs": setup.epochs,
        "batch_size": setup.batch_size,
        "lr": setup.lr,
        "weight_decay": setup.weight_decay,
        "head_mult": setup.head_mult if arm.head_mult is None else arm.head_mult,
        "budget": arm.budget,
        "seed": arm.seed,
        "images": int(setup.images.shape[0]),
        **({"cpu_bf16": True} if setup.cpu_bf16 else {}),
    }  # an fp32 run's record is as before the flag


def reusable(spec: str, arm: Arm, setup: Setup) -> bool:
    """Whether the ``trained:`` prior ``spec`` was trained exactly as ``arm`` would be (same method,
    schedule, data size, seed and architecture), so that the arm can reuse it instead of training.
    The paper's CF10-T is its BYOL* run; here the `priors` stage's BYOL prior is BYOL* seed 0."""
    if arm.prior or arm.untrained or not spec.startswith("trained:"):
        return False
    try:
        meta_file = Path(f"{priors._trained_file(spec, spec.partition(':')[2])}.json")
    except priors.PriorError:  # missing: not reusable; :func:`check_priors` reports it with the fix
        return False
    if not meta_file.is_file():
        return False
    meta = json.loads(meta_file.read_text())
    train_meta = {k: v for k, v in meta.get("train", {}).items() if k != "seconds"}
    return (
        meta.get("arch") == arm.arch
        and meta.get("kwargs") == arm.student_kwargs(setup)
        and train_meta == train_record(arm, setup)
    )


def build_student(arm: Arm, setup: Setup) -> models.Backbone:
    """The student's initial backbone; seeded so that the ``rand`` prior at the same seed is a copy of it."""
    torch.manual_seed(arm.seed)
    return models.build(arm.arch, **arm.student_kwargs(setup))


@dataclass
class Result:
    row: dict
    steps: list
    backbone: models.Backbone | None = None
    targets_made: list = field(default_factory=list)  # targets this run had to make (rand of a new student)


def frozen_probe(backbone: models.Backbone, setup: Setup, seed: int) -> probe.ProbeResult:
    """The linear probe on frozen, un-augmented features of D (train) and the test set.

    ``probe_standardize``: a short probe on raw features is not converged when the features are
    small (an untrained or BYOL Conv-3 has feature std ~0.2), and then it ranks networks by their
    feature scale, not by what the features hold. Z-scoring first (as a BatchNorm without affine in
    front of the probe, MAE's protocol) removes that confounder; the paper's own probe (Adam 3e-4,
    100 epochs, raw features) is the ``paper`` profile."""
    dev = pick_device(setup.device)
    images, labels = setup.images, setup.labels
    if 0 < setup.probe_train < len(images):
        keep = torch.randperm(len(images), generator=torch.Generator().manual_seed(12345))[: setup.probe_train]
        images, labels = images[keep], labels[keep]
    f_tr = probe.extract_features(backbone, images, setup.mean, setup.std, device=dev)
    f_te = probe.extract_features(backbone, setup.test_images, setup.mean, setup.std, device=dev)
    return probe.linear_probe(
        f_tr,
        labels,
        f_te,
        setup.test_labels,
        setup.num_classes,
        epochs=setup.probe_epochs,
        lr=setup.probe_lr,
        batch_size=setup.probe_batch_size,
        seed=seed,
        standardize=setup.probe_standardize,
    )


def run(
    arm: Arm,
    setup: Setup,
    bank: TargetBank | None = None,
    keep_backbone: bool = False,
    log: bool = True,
    checkpoint: str = "",
) -> Result:
    """Train ``arm`` (at ``arm.budget`` of ``setup.epochs`` full epochs) and probe it. ``checkpoint``: a
    per-epoch checkpoint file that the training resumes from exactly when it exists ("" = none)."""
    t0 = time.perf_counter()
    kwargs = arm.student_kwargs(setup)
    bb = build_student(arm, setup)
    made = []
    steps, switch, n_steps, train_seconds = [], None, 0, 0.0
    if arm.untrained:
        probe.recalibrate_bn(bb, setup.images, setup.mean, setup.std, device=pick_device(setup.device))
    elif arm.reuse:
        if not reusable(arm.reuse, arm, setup):
            raise ValueError(f"arm {arm.name!r}: {arm.reuse} was not trained as this arm would be; train it instead")
        prior = priors.load(arm.reuse)
        bb.load_state_dict(prior.model.state_dict())
        meta = json.loads(Path(f"{priors._trained_file(arm.reuse, arm.reuse.partition(':')[2])}.json").read_text())
        per_epoch = train.BudgetSampler(len(setup.images), arm.budget).steps_per_epoch(setup.batch_size)
        # the prior's training time is in the priors stage's timings, not in its sidecar: not counted here
        n_steps, train_seconds = setup.epochs * per_epoch, float(meta["train"].get("seconds", float("nan")))
    else:
        model = methods.build(arm.method, bb, head_mult=setup.head_mult if arm.head_mult is None else arm.head_mult)
        extra = {}
        if arm.prior:
            if bank is None:
                raise ValueError(f"arm {arm.name!r} needs ReLA targets: pass a TargetBank")
            n_made = len(getattr(bank, "made", []))
            target_values = bank.get(arm.prior, bb, arm.arch, kwargs, arm.seed, arm.order)
            made = list(getattr(bank, "made", [])[n_made:])
            model = methods.ReLA(model, target_values.shape[1], transfer_trainable=arm.transfer_trainable)
            extra = dict(
                targets=target_values,
                schedule=arm.make_schedule(setup),
                rela_views=augment.preset("rela_weak", size=setup.size, code_extras=setup.rela_code_extras),
            )
        cfg = train.PretrainConfig(
            epochs=setup.epochs,
            batch_size=setup.batch_size,
            lr=setup.lr,
            weight_decay=setup.weight_decay,
            budget=arm.budget,
            budget_mode=arm.budget_mode,
            seed=arm.seed,
            device=setup.device,
            log_prefix=arm.name if log else "",
            checkpoint=checkpoint,
            cpu_bf16=setup.cpu_bf16,
        )
        hist = train.pretrain(
            model,
            setup.images,
            cfg,
            augment.preset(arm.method, size=setup.size, small_images=setup.size < 64),
            setup.mean,
            setup.std,
            **extra,
        )
        steps, switch, n_steps = hist.steps, hist.switch_step, len(hist.steps)
        train_seconds = sum(e["seconds"] for e in hist.epochs)
    bb = bb.cpu().to(memory_format=torch.contiguous_format)
    res = frozen_probe(bb, setup, arm.seed)
    last3 = res.last_k(3)
    row = {
        "arm": arm.name,
        **{k: v for k, v in asdict(arm).items() if k not in ("name", "arch_kwargs")},
        "width": json.dumps(arm.arch_kwargs, sort_keys=True),
        "feature dim": bb.feature_dim,
        "probe": res.final,
        "probe last-3 mean": last3[0],
        "probe last-3 std": last3[1],
        "steps": n_steps,
        "switch step": switch,
        "train seconds": train_seconds,
        "reused": arm.reuse,
        "total seconds": time.perf_counter() - t0,
    }
    if log:
        say(f"[{arm.name}] seed {arm.seed}: probe {res.final:.4f}  {n_steps} steps  ({row['total seconds']:.0f} s)")
    return Result(row, steps, copy.deepcopy(bb) if keep_backbone else None, made)


def gap_closure(rela_acc: float, low_acc: float, full_acc: float) -> float:
    """(ReLA@r - BYOL@r) / (BYOL@100% - BYOL@r): the share of the budget gap that ReLA closes."""
    gap = full_acc - low_acc
    if gap <= 0:
        raise ValueError(f"no gap to close: full-budget accuracy {full_acc} <= low-budget {low_acc}")
    return (rela_acc - low_acc) / gap


def matching_budget(budgets, accs, target: float) -> float | None:
    """The smallest budget whose accuracy reaches ``target`` (camera-ready Fig. 4c), else None."""
    for b, a in sorted(zip(budgets, accs)):
        if a >= target:
            return float(b)
    return None


# --- running many arms: a pool of single-threaded worker processes -------------------------------
# Small CPU models are bound by per-operator overhead, not by arithmetic: one thread trains them
# almost as fast as two (Conv-3 width 16: 1,640 vs 1,980 img/s; ResNet-18 x0.125: 346 vs 338), so two
# single-threaded workers nearly double the throughput of a 2-core machine. Every arm runs in a worker
# with one thread whatever the number of workers, so results do not depend on `workers`.

_WORKER: dict = {}


def _init_worker(setup: Setup) -> None:
    _WORKER["setup"] = setup
    # in a resumable stage run, each arm keeps a per-epoch checkpoint named after the arm and its inputs
    _WORKER["setup digest"] = resume.digest(setup) if resume.env_dir() is not None else ""


def _run_in_worker(arm: Arm, target_values: torch.Tensor | None, keep_backbone: bool) -> Result:
    if target_values is not None:
        bank = _FixedTargets(target_values)
    elif arm.prior:  # not in the index: this worker makes them (in parallel with the other arms)
        bank = TargetBank(_WORKER["setup"])
    else:
        bank = None
    ckpt = ""
    if _WORKER.get("setup digest"):
        key = resume.digest((arm, target_values, keep_backbone, _WORKER["setup digest"]))
        ckpt = resume.checkpoint_file(f"{arm.name}-seed{arm.seed}-{key[:16]}")
    result = run(arm, _WORKER["setup"], bank, keep_backbone=keep_backbone, checkpoint=ckpt)
    if ckpt:
        Path(ckpt).unlink(missing_ok=True)  # the call's result is stored in its place
    return result


class _FixedTargets:
    made: list = []

    def __init__(self, values):
        self.values = values

    def get(self, *args, **kwargs):
        return self.values


def cost(arm: Arm) -> float:
    """A rough relative cost, to start the longest arms first."""
    per_arch = {"convnet": 1.0, "resnet18": 5.0, "mobilenet_v2": 7.0, "efficientnet_b0": 11.0, "vit_tiny": 6.0}
    c = 0.2 if arm.untrained else arm.budget * (0.7 if arm.prior and arm.schedule in scaled_switch.SWITCHES else 1.0)
    return c * per_arch.get(arm.arch, 5.0) + 0.05


REMAKE_PRIORS = "dvc repro priors"


def _serves(entry: dict, spec: str) -> bool:
    """Whether the index ``entry`` may hold the targets of prior ``spec`` (``rand:<arch>``: the
    random network of that architecture)."""
    return entry.get("prior") == spec or (entry.get("prior") == "rand" and spec == f"rand:{entry.get('arch')}")


def _first_line(e: Exception) -> str:
    return (str(e).strip().splitlines() or [""])[0][:200]


def check_priors(arms: list[Arm], setup: Setup, bank: TargetBank | None = None, also: tuple | list = ()) -> None:
    """Check every input of the ``priors`` stage that ``arms`` will read, before any of them trains,
    and raise one :class:`compendium.rela.priors.PriorError` listing each problem with its file and
    the fix (``dvc repro priors`` for what that stage makes):

    * the target files of the index (``bank``) for each arm's prior exist and can be read, and a
      ``rand:<arch>`` prior (camera-ready Table 2's one random network for all students) is there;
    * every checkpoint prior (an arm's ``prior`` or ``reuse``, and ``also``: priors a stage reads
      after training, e.g. to probe them) exists, loads into the architecture its sidecar names, can
      be fed D's channels, and has the feature dimension its targets in the index were made from.

    Nothing is trained; the global random state is left as it was, so results do not change."""
    problems: list[str] = []
    remake = f"remake it with `{REMAKE_PRIORS}`"
    for a in arms:
        if a.prior and bank is None:
            raise ValueError(f"arm {a.name!r} needs ReLA targets: pass a TargetBank")
    entries = list(getattr(bank, "entries", None) or [])
    index_dir = getattr(bank, "index_dir", None)
    wanted = {a.prior for a in arms if a.prior}
    unreadable = set()
    for e in entries:
        spec = e.get("prior")
        if any(_serves(e, w) for w in wanted):
            f = Path(index_dir) / str(e.get("file"))
            if not f.is_file():
                problems.append(f"{f} (targets of prior {spec!r}) is missing: {remake}")
                unreadable.update({spec, f"rand:{e.get('arch')}"} if spec == "rand" else {spec})
    with torch.random.fork_rng(devices=[]):
        for a in arms:
            if not a.prior or a.prior in unreadable:
                continue
            try:
                found = bank.lookup(a.prior, build_student(a, setup), a.arch, a.student_kwargs(setup), a.seed, a.order)
            except Exception as e:  # noqa: BLE001 - any unreadable file is reported with its prior and the fix
                files = [str(Path(index_dir) / str(x.get("file"))) for x in entries if _serves(x, a.prior)] or [
                    str(index_dir)
                ]
                problems.append(
                    f"{', '.join(files)} (targets of prior {a.prior!r}) cannot be read "
                    f"({type(e).__name__}: {_first_line(e)}): {remake}"
                )
                unreadable.add(a.prior)
                continue
            if found is None and a.prior.startswith("rand:"):
                problems.append(
                    f"prior {a.prior!r} (arm {a.name!r}, seed {a.seed}, order {a.order}): the priors stage's "
                    f"targets in {index_dir} hold no such random network; add `rand` with that seed and "
                    f"order to the priors stage and run `{REMAKE_PRIORS}`"
                )
                unreadable.add(a.prior)
        checkpoints = dict.fromkeys(
            [a.prior for a in arms if a.prior and not a.prior.startswith("rand")]
            + [a.reuse for a in arms if a.reuse]
            + [p for p in also if not p.startswith("rand")]
        )
        channels = int(setup.images.shape[1])
        for spec in checkpoints:
            try:
                prior = priors.load(spec, mean=setup.mean, std=setup.std)
            except priors.PriorError as e:
                problems.append(f"{e}" + (f"; {remake}" if spec.startswith("trained:") else ""))
                continue
            except Exception as e:  # noqa: BLE001 - a damaged checkpoint or sidecar
                problems.append(
                    f"prior {spec!r}: its checkpoint cannot be read ({type(e).__name__}: {_first_line(e)})"
                    + (f"; {remake}" if spec.startswith("trained:") else "")
                )
                continue
            if channels != prior.in_channels and 1 not in (channels, prior.in_channels):
                problems.append(
                    f"prior {spec!r} takes {prior.in_channels} channels, D has {channels}: "
                    "use a prior trained on images with as many channels (or grey images)"
                )
            dims = sorted({e["prior_dim"] for e in entries if e.get("prior") == spec and "prior_dim" in e})
            if dims and prior.feature_dim not in dims:
                problems.append(
                    f"prior {spec!r} has {prior.feature_dim} features, but its targets in {index_dir} were "
                    f"made from a prior with {dims[0]}: the checkpoint and the targets are out of step; "
                    f"remake both with `{REMAKE_PRIORS}`"
                )
    if problems:
        raise priors.PriorError(
            f"{len(problems)} input(s) of the priors stage that these arms need are missing or "
            "broken (checked before any arm trains):\n" + "\n".join(f"  - {x}" for x in problems)
        )


def run_many(
    arms: list[Arm], setup: Setup, bank: TargetBank | None = None, workers: int = 2, keep_backbones: bool = False
) -> list[Result]:
    """Run every arm; results in the order of ``arms``. ``workers`` = 0 runs them here, one after the
    other (the choice for a GPU); otherwise in that many single-threaded processes. ReLA targets are
    read here, once per prior, and handed to the workers; targets that must be made (the ``rand``
    prior of a new student, another target order) are made by the call that needs them. ``bank.made`` lists every
    target made. The priors' checkpoints and target
    files are checked first (:func:`check_priors`): a missing one stops the call before any arm trains."""
    if workers < 0:
        raise ValueError(f"workers must be >= 0, got {workers}")
    names = [a.name + f"/seed{a.seed}" for a in arms]
    if len(set(names)) != len(names):
        raise ValueError(
            "two arms share a name and a seed: " + ", ".join(sorted({n for n in names if names.count(n) > 1}))
        )
    check_priors(arms, setup, bank)  # a missing or broken input stops the stage before any arm trains
    found = []
    for a in arms:
        if a.prior:
            found.append(
                bank.lookup(a.prior, build_student(a, setup), a.arch, a.student_kwargs(setup), a.seed, a.order)
            )
        else:
            found.append(None)
    calls = [(_run_in_worker, (a, t, keep_backbones), {}) for a, t in zip(arms, found)]
    if workers == 0:
        _init_worker(setup)
        # the initializer serves a backend other than local (COMPENDIUM_BACKEND)
        out = run_calls(calls, 0, initializer=_init_worker, initargs=(setup,), resume_context=setup)
    else:
        out = run_calls(
            calls,
            workers,
            costs=[cost(a) for a in arms],
            initializer=_init_worker,
            initargs=(setup,),
            resume_context=setup,
        )
    if bank is not None:
        for i in sorted(range(len(arms)), key=lambda i: -cost(arms[i])):
            bank.made.extend(out[i].targets_made)
    return out


def dataset_setup(
    index_file: Path, dataset: str = "fashion-mnist", data_root: str | Path = "", **settings
) -> tuple[Setup, TargetBank]:
    """D = the training images of ``dataset`` the ``priors`` stage made its targets for (its
    ``indices``), the full test set, and the bank of those targets. ``settings``: :class:`Setup`
    fields. ``probe_train`` > 0 trains the probe on that many images of D (a fixed random subset)."""
    index_file = Path(index_file)
    index = targets.read_index(index_file)
    made_for = index["dataset"]
    if made_for != dataset:
        raise ValueError(
            f"the priors stage made its targets for {made_for!r}, this stage asks for {dataset!r}: "
            f"set the same `dataset` in params.yaml's priors section and rerun it"
        )
    idx = torch.tensor(index["indices"])
    tr, te = data.load_dataset(dataset, "train", data_root), data.load_dataset(dataset, "test", data_root)
    mean, std = tuple(index["mean"]), tuple(index["std"])  # the priors stage's normalisation
    settings.setdefault("num_classes", tr.num_classes)
    setup = Setup(tr.images[idx], tr.labels[idx], te.images, te.labels, mean, std, **settings)
    return setup, TargetBank(setup, index_file)


def seed_stats(results, keys: list[str], value: str = "probe"):
    """Mean, std over seeds (sample std; 0 for one seed) and the seed count, per group of ``keys``."""
    g = results.groupby(keys, sort=False)[value]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out["std"] = out["std"].fillna(0.0)
    return out


def cell_text(mean: float, std: float, n: int, scale: float = 100.0) -> str:
    """``m ± s (n seeds)``; a single seed prints without ±."""
    if n <= 1:
        return f"{scale * mean:.1f} (1 seed)"
    return f"{scale * mean:.1f} ± {scale * std:.1f} ({n} seeds)"


def mark(values: dict, full: float | None) -> dict:
    """The paper's marks on one budget row: bold the best, underline what beats the full budget.
    ``values``: column -> mean; returns column -> marked text fragment wrappers (prefix, suffix)."""
    best = max(values.values()) if values else None
    out = {}
    for k, v in values.items():
        pre, post = "", ""
        if full is not None and v > full:
            pre, post = "<u>", "</u>"
        if v == best:
            pre, post = "**" + pre, post + "**"
        out[k] = (pre, post)
    return out
