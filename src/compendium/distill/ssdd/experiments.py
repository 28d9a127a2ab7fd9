"""The orchestration of the self-supervised dataset distillation stages (``ssdd_teacher``,
``ssdd_distill``, ``ssdd_eval``): KRR-ST (Lee et al., ICLR 2024) and SSDD (Yu, Yao, Chiu, ICLR 2025).

* ``ssdd_distill``: :class:`DistillPlan` and :func:`job` (one synthesis of :func:`compendium.distill.ssdd.synthesize`),
  :func:`distill_jobs` (SSDD Tables 1-4, 11, 12 and the free teachers), :func:`synthesize_all` (one worker
  pool), :func:`set_file` (the set's file name under ``models/ssdd/sets``) and :func:`sets_table`; Table 1's
  labelled baselines (DSA, DM) come from :mod:`compendium.distill.ssdd.baselines`.
* ``ssdd_eval``: :func:`load_sets`, :func:`full_data_set` (the full-data regression control),
  :func:`student_kwargs`, :func:`eval_jobs` / :func:`evaluate_all` / :func:`results_table` (SSDD Sec. 4's
  protocol for every set, student and seed) and :func:`converse` (an SSDD set as the early phase of a
  self-supervised run).

The teachers themselves (``compendium.rela.priors``) and the self-supervised trainer
(``compendium.ssl``) live in wings this one does not import: the notebooks pass them in.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd
import torch

from compendium.core import data, models, paths
from compendium.core.parallel import run_calls
from compendium.core.probe import to_float
from compendium.distill import ssdd, zoo

#: The cached targets of every teacher for the distillation pool (written by ``ssdd_teacher``).
TEACHER_CACHE = "ssdd/teacher/targets.pt"
#: The sets of ``ssdd_distill``, one file per set (:func:`set_file`).
SETS_DIR = "ssdd/sets"
MEAN, STD = (data.FASHION_MNIST_MEAN,), (data.FASHION_MNIST_STD,)
#: Table 1's methods (ConvNet student, every seed).
MAIN = ["Random", "KMeans", "DSA", "DM", "KRR-ST", "SSDD"]
#: The controls evaluated on every seed beside Table 1's methods.
CONTROLS = ["SSDD T=0 (PCA projection)", "SSDD T=0 (PCA projection) / same", "Full data (regression to the teacher)"]
UNTRAINED = "untrained"


#: The source dataset of the ``cpu`` default (shipped); the paper's is CIFAR-100 (SSDD Sec. 4, Table 1).
DEFAULT_DATASET = "fashion-mnist"


def source_train(dataset: str = DEFAULT_DATASET, data_root: str = "") -> data.ImageDataset:
    """The source's training split: Fashion-MNIST (shipped) or ``dataset`` read from ``data_root``
    (:func:`compendium.core.data.load_dataset`; CIFAR-100 in the paper, SSDD Sec. 4)."""
    if dataset == DEFAULT_DATASET:
        return data.load_fashion_mnist("train")
    return data.load_dataset(dataset, "train", data_root)


def source_stats(dataset: str = DEFAULT_DATASET, data_root: str = "") -> tuple[tuple, tuple]:
    """Per-channel mean and std of the source: Fashion-MNIST's constants (:data:`MEAN`, :data:`STD`),
    else its training images' own (:func:`compendium.core.data.normalisation`)."""
    if dataset == DEFAULT_DATASET:
        return MEAN, STD
    return data.normalisation(dataset, source_train(dataset, data_root).images)


def teacher_cache(dataset: str = DEFAULT_DATASET) -> dict:
    """``{"index", "targets", "seed", "specs"}``: the pool's indices into the source's training
    split, every teacher's targets of the pool, and each teacher's ``compendium.rela.priors`` spec
    (plus ``"dataset"`` for a source other than Fashion-MNIST). A clear error when the cache was made
    from another source than ``dataset``."""
    cache = torch.load(paths.find_artifact(TEACHER_CACHE), weights_only=True)
    made = cache.get("dataset", DEFAULT_DATASET)
    if made != dataset:
        raise ssdd.SSDDError(
            f"dataset: the ssdd_teacher stage cached targets of {made!r}, not {dataset!r}; "
            "set the same `dataset` in ssdd_teacher, ssdd_distill and ssdd_eval"
        )
    return cache


def cache_record(index: torch.Tensor, targets: dict, seed: int, specs: dict, dataset: str = DEFAULT_DATASET) -> dict:
    """The teacher cache's contents (:func:`teacher_cache`); ``"dataset"`` only for a source other than
    Fashion-MNIST (the default's file keeps its contents)."""
    out = {"index": index, "targets": targets, "seed": seed, "specs": specs}
    return out if dataset == DEFAULT_DATASET else {**out, "dataset": dataset}


def pool_images(index: torch.Tensor, dataset: str = DEFAULT_DATASET, data_root: str = "") -> torch.Tensor:
    """The distillation pool: the source's training images ``index``, normalised."""
    tr = source_train(dataset, data_root)
    mean, std = source_stats(dataset, data_root)
    return to_float(tr.images[index], mean, std)


def teacher_kwargs(arch: str, width: int, in_channels: int = 1, image_size: int = 28) -> dict:
    """``models.build`` keywords of the teacher: a ConvNet-3 of ``width`` with BatchNorm and flattened
    features (the ``cpu`` default), or a ResNet-18 with the small (CIFAR) stem and widths ``width``
    x (1, 2, 4, 8) (SSDD App. A.1: a Barlow Twins ResNet-18, 512-d representation at width 64)."""
    if arch == "convnet":
        return dict(
            in_channels=in_channels, image_size=image_size, width=width, depth=3, norm="batch", global_pool=False
        )
    if arch == "resnet18":
        return dict(in_channels=in_channels, image_size=image_size, width_mult=width / 64, stem="small")
    raise ssdd.SSDDError(f"arch: unknown teacher {arch!r}; use convnet or resnet18")


def convnet_depth(image_size: int) -> int:
    """Blocks of SSDD's ConvNet at a resolution (App. A.1): 3 up to 32 px, 4 at 64 px (Tiny-ImageNet,
    ImageNet-64), 5 at 128 px (ImageNette), 6 above (ImageNet-1K at 224 px)."""
    return 3 if image_size <= 32 else 4 if image_size <= 64 else 5 if image_size <= 128 else 6


def inner_spec(real: torch.Tensor, width: int) -> dict:
    """The inner model of the distillation (KRR-ST's, SSDD App. A.1): a ConvNet of ``width`` with
    BatchNorm and :func:`convnet_depth` blocks, at the pool's channels and size."""
    return {
        "arch": "convnet",
        "kwargs": dict(
            in_channels=real.shape[1],
            image_size=real.shape[2],
            width=width,
            depth=convnet_depth(real.shape[2]),
            norm="batch",
        ),
    }


def probe_spec(dataset: str = DEFAULT_DATASET, data_root: str = "", **kw) -> ssdd.ProbeSpec:
    """The linear probes of ``ssdd.ProbeSpec``: Fashion-MNIST and the digits for the default source,
    the source itself (its own split) otherwise (SSDD Table 2: source and target the same)."""
    if dataset == DEFAULT_DATASET:
        return ssdd.ProbeSpec(**kw)
    return ssdd.ProbeSpec(**kw, targets=(dataset,), data_root=data_root)


# --- ssdd_distill ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class DistillPlan:
    """The ``ssdd_distill`` parameters a job needs, with the image sizes (``d_img`` floats per image,
    ``d_xb`` per downsampled image) and every teacher's target dimension ``dims``."""

    budget_n: int
    budgets: Sequence[int]
    basis_mult: int
    s: int
    augmentation: str
    hidden: int
    approx_variants: Sequence[tuple]
    approx_steps: int
    ablation_augmentations: Sequence[str]
    ablation_inits: Sequence[str]
    free_teachers: Sequence[str]
    steps: int
    lr: float
    krrst_lr: float
    seed: int
    d_img: int
    d_xb: int
    dims: dict = field(default_factory=dict)


def job(plan: DistillPlan, name: str, method: str, n: int, teacher: str = "barlow_twins", **kw) -> dict:
    """One synthesis at a budget of ``n`` images' floats (:func:`compendium.distill.ssdd.synthesize`'s
    keys): U = V = ``basis_mult`` n capped by the dimensions (Table 5's "twice the budget"), KRR-ST at
    ``krrst_lr``; ``kw`` overrides."""
    d_y = plan.dims[teacher]
    uv = min(plan.basis_mult * n, plan.d_xb, d_y)
    base = dict(
        name=name,
        method=method,
        budget=n * plan.d_img,
        n=n,
        teacher=teacher,
        augmentation=plan.augmentation,
        init="pca",
        u=uv,
        v=uv,
        s=plan.s,
        approx=[["q", plan.hidden]],
        approx_steps=plan.approx_steps,
        steps=plan.steps,
        lr=plan.krrst_lr if method == "krr_st" else plan.lr,
        seed=plan.seed,
        count_targets=False,
    )
    return {**base, **kw}


def distill_jobs(plan: DistillPlan) -> list[dict]:
    """Every set of the stage: SSDD (with Table 11's approximation variants), KRR-ST, Random and
    k-means (each free-image set also with its targets counted), the T = 0 control, Table 3's no
    augmentation, Table 12's augmentations, Table 4's initialisations, Table 2's budgets and the free
    teachers."""
    hidden, N = plan.hidden, plan.budget_n
    jobs = [job(plan, "SSDD", "ssdd", N, approx=[["q", hidden]] + [list(v) for v in plan.approx_variants])]
    jobs += [
        job(plan, "KRR-ST", "krr_st", N),
        job(plan, "KRR-ST (targets counted)", "krr_st", N, count_targets=True),
        job(plan, "Random", "random", N),
        job(plan, "Random (targets counted)", "random", N, count_targets=True),
        job(plan, "KMeans", "kmeans", N),
        job(plan, "SSDD T=0 (PCA projection)", "ssdd", N, steps=0, approx=[["q", hidden], ["same", 0]]),
        job(plan, "SSDD no augmentation", "ssdd", N, augmentation="none"),
    ]
    jobs += [job(plan, f"SSDD {a}", "ssdd", N, augmentation=a) for a in plan.ablation_augmentations]
    jobs += [job(plan, f"SSDD init {i}", "ssdd", N, init=i) for i in plan.ablation_inits]
    for n in plan.budgets:
        if n != N:
            jobs += [
                job(plan, f"SSDD N={n}", "ssdd", n),
                job(plan, f"KRR-ST N={n}", "krr_st", n),
                job(plan, f"Random N={n}", "random", n),
            ]
    for t in plan.free_teachers:
        jobs += [
            job(plan, f"SSDD teacher={t}", "ssdd", N, teacher=t),
            job(plan, f"KRR-ST teacher={t}", "krr_st", N, teacher=t),
            job(plan, f"Random teacher={t}", "random", N, teacher=t),
        ]
    return jobs


def missing_teachers(free_teachers: Sequence[str], cache: dict) -> list[str]:
    """The free teachers without cached targets (``ssdd_teacher`` made the cache)."""
    return [t for t in free_teachers if t not in cache["targets"]]


def synthesize_all(
    jobs: list[dict],
    real: torch.Tensor,
    targets: dict,
    teachers: dict,
    inner: dict,
    cfg: ssdd.DistillConfig,
    workers: int = 2,
) -> list[ssdd.TargetSet]:
    """:func:`compendium.distill.ssdd.synthesize` for every job in one worker pool, the sets in the jobs'
    order (an SSDD job gives one set per approximation variant)."""
    calls = [(ssdd.synthesize, (j, real, targets[j["teacher"]], teachers[j["teacher"]], inner, cfg), {}) for j in jobs]
    return [ts for out in run_calls(calls, workers=workers) for ts in out]


def set_file(name: str) -> str:
    """The file name of set ``name`` under ``models/ssdd/sets`` (lower case, non-alphanumerics as ``_``)."""
    return "".join(c if c.isalnum() else "_" for c in name.lower()).strip("_") + ".pt"


def save_sets(made: Sequence[ssdd.TargetSet], out_dir: str | Path) -> None:
    """Write every set to ``out_dir`` under :func:`set_file` of its name."""
    for ts in made:
        ts.save(Path(out_dir) / set_file(ts.extra["name"]))


def sets_table(made: Sequence[ssdd.TargetSet]) -> pd.DataFrame:
    """One row per set: method, teacher, N, m, training pairs, floats against the budget, SSDD's U = V,
    augmentation and approximation (Table 11's MSE), the outer loss (Eq. 3) first → last, the cost."""
    rows = []
    for ts in made:
        p = ts.params
        rows.append(
            {
                "set": ts.extra["name"],
                "method": ts.method,
                "teacher": p["teacher"],
                "N": p["n"],
                "m": ts.extra["m"],
                "training pairs": len(ts.images),
                "floats": ts.floats,
                "budget": p["budget"],
                "within budget": ts.floats <= p["budget"],
                "U=V": p["u"] if ts.method == "ssdd" else "",
                "augmentation": p["augmentation"] if ts.method == "ssdd" else "none",
                "approx": f"{ts.extra.get('approx', '')}{ts.extra.get('hidden', '') or ''}"
                if ts.method == "ssdd"
                else "",
                "approx MSE": ts.extra.get("approx_mse", float("nan")),
                "outer loss first→last": (
                    f"{np.mean(ts.extra['losses'][:10]):.4f} → {np.mean(ts.extra['losses'][-10:]):.4f}"
                    if ts.extra["losses"]
                    else ""
                ),
                "synthesis s": ts.synthesis_seconds,
                "peak MB": ts.peak_memory_mb,
            }
        )
    return pd.DataFrame(rows)


def loss_curves(made: Sequence[ssdd.TargetSet]) -> pd.DataFrame:
    """The outer loss (Eq. 3) of every set that has one, one row per set and outer step (a DVC plot)."""
    rows = [
        {"set": ts.extra["name"], "step": i + 1, "loss": float(v)}
        for ts in made
        for i, v in enumerate(ts.extra["losses"])
    ]
    return pd.DataFrame(rows, columns=["set", "step", "loss"])


def sets_metrics(sets_df: pd.DataFrame) -> dict:
    """The stage's metrics: m, floats and cost per set, and whether every set but *ideal* (which stores
    every C^y_a, Table 11) fits its budget."""
    return {
        "sets": {
            r["set"]: {
                "m": int(r["m"]),
                "floats": int(r["floats"]),
                "synthesis_seconds": float(r["synthesis s"]),
                "peak_mb": float(r["peak MB"]),
            }
            for r in sets_df.to_dict("records")
        },
        "all_within_budget": bool(sets_df.loc[~sets_df["set"].str.contains("ideal"), "within budget"].all()),
    }


# --- ssdd_eval ------------------------------------------------------------------------------------


def load_sets(need: Sequence[str] = ()) -> dict:
    """``{name: TargetSet}`` of every ``ssdd_distill`` set (Table 1's DSA and DM among them where that stage
    made them); a clear error when a set of ``need`` is missing."""
    sets = {}
    for f in sorted(paths.find_artifact(SETS_DIR).glob("*.pt")):
        ts = ssdd.TargetSet.load(f)
        sets[ts.extra["name"]] = ts
    for name in need:
        if name not in sets:
            raise ssdd.SSDDError(f"no set {name!r} (the ssdd_distill stage made {sorted(sets)})")
    return sets


def full_data_set(
    index: torch.Tensor,
    n: int,
    teacher: Callable[[torch.Tensor], torch.Tensor],
    dataset: str = DEFAULT_DATASET,
    data_root: str = "",
) -> ssdd.TargetSet:
    """The full-data control: ``n`` pool images (a seed-0 permutation of ``index``) with the teacher's
    targets."""
    g = torch.Generator().manual_seed(0)
    full_idx = index[torch.randperm(len(index), generator=g)[:n]]
    full_x = pool_images(full_idx, dataset, data_root)
    return ssdd.TargetSet(full_x, teacher(full_x), "full", 0, {"n": n}, 0, 0.0, 0.0, {"name": "Full data", "m": n})


def student_kwargs(archs: Sequence[str], in_channels: int = 1, image_size: int = 28, **scale_kw) -> dict:
    """``models.build`` keywords of each student at the source's channels and size (28 px, one channel
    by default): the zoo (:func:`compendium.distill.zoo.arch_kwargs` at ``scale_kw``), the ConvNet
    globally pooled and :func:`convnet_depth` deep."""
    arch = {a: {"in_channels": in_channels, "image_size": image_size, **zoo.arch_kwargs(a, **scale_kw)} for a in archs}
    if "convnet" in arch:  # the pre-trained ConvNet has the distillation's depth at the source's size (App. A.1)
        arch["convnet"].update(global_pool=True, depth=convnet_depth(image_size))
    return arch


def eval_jobs(
    sets: dict,
    arch: dict,
    pre: ssdd.PretrainConfig,
    spec: ssdd.ProbeSpec,
    seeds: Sequence[int],
    ablation_seeds: Sequence[int],
    cross_seeds: Sequence[int],
    cross_methods: Sequence[str],
    full_data_epochs: int,
) -> list[tuple[dict, tuple]]:
    """``(key, args of evaluate_set)`` for every evaluation (SSDD Sec. 4): Table 1's methods, the
    untrained student and the controls on the ConvNet at ``seeds`` (the full-data control pre-trained
    for ``full_data_epochs``), every other set at ``ablation_seeds``, and ``cross_methods`` with the
    untrained student on every other architecture of ``arch`` at ``cross_seeds``."""
    jobs = []

    def add(name, a, seed_list, p=pre):  # "untrained": no pre-training
        x, y = (None, None) if name == UNTRAINED else (sets[name].images, sets[name].targets)
        jobs.extend(({"set": name, "arch": a, "seed": sd}, (x, y, a, arch[a], p, spec, sd)) for sd in seed_list)

    for name in MAIN + [UNTRAINED] + CONTROLS:
        if name in sets or name == UNTRAINED:
            p = (
                pre
                if not name.startswith("Full")
                else ssdd.PretrainConfig(**{**pre.__dict__, "epochs": full_data_epochs})
            )
            add(name, "convnet", seeds, p)
    for name in sorted(sets):
        if name not in MAIN + CONTROLS:
            add(name, "convnet", ablation_seeds)
    for a in arch:
        if a != "convnet":
            for name in list(cross_methods) + [UNTRAINED]:
                add(name, a, cross_seeds)
    return jobs


def evaluate_all(jobs: list[tuple[dict, tuple]], workers: int = 2) -> list[dict]:
    """:func:`compendium.distill.ssdd.evaluate_set` for every job of :func:`eval_jobs`, in one worker pool."""
    return run_calls([(ssdd.evaluate_set, args, {}) for _, args in jobs], workers=workers)


def results_table(jobs: list[tuple[dict, tuple]], results: list[dict]) -> pd.DataFrame:
    """One row per evaluation: set, arch, seed, ``acc <target>`` per probe, final loss, seconds."""
    return pd.DataFrame(
        [
            {
                **key,
                **{f"acc {k}": v for k, v in r["acc"].items()},
                "final loss": r["final_loss"],
                "seconds": r["seconds"],
            }
            for (key, _), r in zip(jobs, results)
        ]
    )


def converse(
    sets: dict,
    convnet_kwargs: dict,
    pre: ssdd.PretrainConfig,
    spec: ssdd.ProbeSpec,
    seeds: Sequence[int],
    ssl_phase: Callable[[torch.nn.Module, int], object],
) -> list[dict]:
    """The converse experiment (neither paper ran it): a ConvNet pre-trained on an SSDD set (or random
    real images with teacher targets, or nothing) as the early phase, then ``ssl_phase(backbone, seed)``
    (BYOL on real images, after ReLA); the Fashion-MNIST probe after the early phase and every probe
    at the end. One row per arm and seed."""
    rows = []
    for sd in seeds:
        for arm, set_name in (
            ("BYOL from scratch", None),
            ("early phase on the SSDD set, then BYOL", "SSDD"),
            ("early phase on random real images + teacher targets, then BYOL", "Random"),
        ):
            torch.manual_seed(sd)
            bb = models.build("convnet", **convnet_kwargs)
            t0 = time.perf_counter()
            if set_name:
                ssdd.pretrain_student(
                    bb,
                    sets[set_name].images,
                    sets[set_name].targets,
                    ssdd.PretrainConfig(**{**pre.__dict__, "seed": sd}),
                )
            early = ssdd.probe(bb, spec, sd)[spec.targets[0]]
            ssl_phase(bb, sd)
            acc = ssdd.probe(bb.cpu(), spec, sd)
            rows.append(
                {"arm": arm, "seed": sd, "after the early phase": early, **acc, "seconds": time.perf_counter() - t0}
            )
    return rows
