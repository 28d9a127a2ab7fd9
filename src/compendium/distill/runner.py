"""Many evaluations of distilled sets at once: single-threaded worker processes (spawned), each
evaluation seeded on its own, so the results do not depend on the number of workers (as
:func:`compendium.rela.experiment.run_many` for the ReLA arms)."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import torch
from torch import nn

from compendium.core import data, paths
from compendium.core.parallel import run_calls
from compendium.distill import evaluate as E
from compendium.distill.continual import test_view
from compendium.distill.matching import dsa
from compendium.distill.sets import DistilledSet

_TEST: tuple[torch.Tensor, torch.Tensor] | None = None


@dataclass
class Job:
    """One student trained on one set with one seed; ``key`` names the table cell it belongs to."""

    key: dict
    dset: DistilledSet
    cfg: E.EvalConfig
    seed: int = 0
    teacher: nn.Module | None = None
    cost: float = field(default=0.0, compare=False)  # a scheduling hint (bigger first)
    classes: tuple[int, ...] | None = None  # test on these classes only, renumbered (continual)


def _init(test_images: torch.Tensor, test_labels: torch.Tensor, threads: int) -> None:
    global _TEST
    torch.set_num_threads(threads)
    _TEST = (test_images, test_labels)


def _test_for(job: Job, images: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    if job.classes is None:
        return images, labels

    return test_view(images, labels, job.classes)


def _one(job: Job) -> dict:
    assert _TEST is not None
    t0 = time.perf_counter()
    r = E.evaluate(job.dset, *_test_for(job, *_TEST), job.cfg, job.seed, job.teacher)
    return {
        **job.key,
        "seed": job.seed,
        "acc": r["final_acc"],
        "best acc": r["best_acc"],
        "steps": r["steps"],
        "train seconds": r["train_seconds"],
        "seconds": time.perf_counter() - t0,
    }


def evaluate_many(
    jobs: list[Job],
    test_images: torch.Tensor,
    test_labels: torch.Tensor,
    workers: int = 2,
    resume_dir: str | os.PathLike | None = None,
) -> list[dict]:
    """Rows (``key`` + seed, final and best accuracy, steps, seconds) in the order of ``jobs``. Every job's
    config is checked first, so a bad one fails before any training. ``workers`` 0: in this process.

    ``resume_dir`` (default: the folder ``COMPENDIUM_RESUME_DIR`` names, else none): each finished job's
    row is stored there and a job already stored is not trained again (:mod:`compendium.core.resume`;
    a job counts as the same when the job, its ``cost`` included, and the test set are), so a stage
    interrupted midway resumes at the jobs it had not finished, to the same rows (a stored row keeps its
    first run's seconds). The rows do not depend on ``workers`` either way."""
    for j in jobs:
        E._check_inputs(j.dset, *_test_for(j, test_images, test_labels), j.cfg, j.teacher)
    calls = [(_one, (j,), {}) for j in jobs]
    context = ("test set", test_images, test_labels)  # what _init holds, without its thread count
    if workers <= 0:
        _init(test_images, test_labels, torch.get_num_threads())
        init = dict(initializer=_init, initargs=(test_images, test_labels, 1))  # for a backend other than local
        return run_calls(calls, 0, **init, resume_dir=resume_dir, resume_context=context)
    return run_calls(
        calls,
        workers,
        costs=[j.cost for j in jobs],
        initializer=_init,
        initargs=(test_images, test_labels, 1),
        resume_dir=resume_dir,
        resume_context=context,
    )


def datasets_of(
    sets, data_root: str | os.PathLike = "", test_n: int = 0, resolution: int = 0, train_per_class: int = 0
) -> tuple[dict[str, data.ImageDataset], dict[str, tuple[torch.Tensor, torch.Tensor]]]:
    """The training split and the test images and labels (:func:`E.test_subset` of ``test_n``) of every dataset the
    ``sets`` were made from (``None`` entries skipped), by name: what :func:`evaluate_by_dataset` and the sets'
    real-image references need. Non-shipped datasets are read from ``data_root`` (:func:`data.train_test`, with
    ``resolution`` and ``train_per_class`` for the ImageNet-style folders)."""
    train, tests = {}, {}
    for name in sorted({d.dataset for d in sets if d is not None}):
        train[name], te, _, _ = data.train_test(name, data_root, resolution, train_per_class)
        tests[name] = E.test_subset(te.images, te.labels, test_n)
    return train, tests


def evaluate_by_dataset(
    jobs: list[Job],
    tests: Mapping[str, tuple[torch.Tensor, torch.Tensor]],
    workers: int = 2,
    resume_dir: str | os.PathLike | None = None,
) -> list[dict]:
    """:func:`evaluate_many` for jobs whose sets come from several datasets: each set (``job.dset.dataset``) is
    tested on ``tests[its dataset]`` (images, labels). Rows in the order of ``jobs``; every job is checked
    before any trains. With one dataset it is :func:`evaluate_many`, to the same rows."""
    missing = sorted({j.dset.dataset for j in jobs} - set(tests))
    if missing:
        raise ValueError(f"no test split for the dataset(s) {missing} of the sets; tests has {sorted(tests)}")
    for j in jobs:
        E._check_inputs(j.dset, *_test_for(j, *tests[j.dset.dataset]), j.cfg, j.teacher)
    rows: list[dict | None] = [None] * len(jobs)
    for name in dict.fromkeys(j.dset.dataset for j in jobs):
        idx = [k for k, j in enumerate(jobs) if j.dset.dataset == name]
        for k, r in zip(idx, evaluate_many([jobs[k] for k in idx], *tests[name], workers, resume_dir)):
            rows[k] = r
    return rows


def summarise(rows: list[dict], keys: list[str]):
    """Mean and sample std of the final accuracy over seeds per cell (a pandas DataFrame), with the cell text."""
    import pandas as pd

    df = pd.DataFrame(rows)
    g = df.groupby(keys, sort=False)["acc"]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out["std"] = out["std"].fillna(0.0)
    out["cell"] = [E.cell_text(m, s, c) for m, s, c in zip(out["mean"], out["std"], out["count"])]
    return out


def cell_txt(cells: dict, key, n: int | None = None, missing: str = "–") -> str:
    """The text of one table cell from ``cells`` (key -> (mean, std, ...) of the final accuracy over seeds,
    as :func:`summarise` gives per row): ``'82.3 ± 0.4'`` (:func:`~compendium.distill.evaluate.cell_text`;
    ``n`` 1: no spread), ``missing`` where the key was not run."""
    if key not in cells:
        return missing
    return E.cell_text(cells[key][0], cells[key][1], n=n)


def cell_mean(cells: dict, key) -> float:
    """The mean accuracy of one cell of ``cells`` (as :func:`cell_txt`), NaN where the key was not run."""
    return cells[key][0] if key in cells else float("nan")


def dsa_eval_augment(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """DSA's evaluation augmentation (the full default strategy, one family per batch, per-image
    parameters) as an :class:`~compendium.distill.evaluate.EvalConfig` ``dsa`` hook (picklable)."""
    return dsa.augment_independent(x, generator=generator)


def published_tables():
    """Where the other stages' published tables are: ``reports/tables`` for the pipeline, else (a run of
    nbrun with another ``--output-root``: the tests, the faithful profile's ``reports/faithful``) that
    root's ``tables`` (:func:`compendium.core.paths.published_root`)."""
    return paths.published_root() / paths.TABLES


def published_timings():
    """Where the other stages' tables as measured (wall-clock columns included) are: ``timings`` beside
    :func:`published_tables`. Only a stage whose product is itself a table of costs reads them (and says so
    in dvc.yaml), since they change on every rerun (:mod:`compendium.core.volatile`)."""
    return paths.published_root() / paths.TIMINGS
