"""The ``dd_labels`` stage's experiment: label distillation (Bohdal, Yang & Hospedales 2020, "Flexible Dataset
Distillation: Learn Labels Instead of Images"): the labels of fixed real base images learned by the RR variant
(Algorithm 1) and the second-order variant, within Fashion-MNIST and across datasets (digits as the base), and the
flexibility of the learned labels (other students, SGD, other training lengths).

* :func:`distill_calls`: the distillation runs (RR / second-order, within / cross).
* :func:`runs_table` / :func:`target_loss_curves` / :func:`label_drift_curves`: what the runs learned.
* :func:`eval_config`, :func:`label_sets`, :func:`flex_cells`, :func:`eval_jobs`: the students' evaluations.
* :func:`main_table`, :func:`flexibility_table`, :func:`metrics`: the published tables and metrics.
"""

from __future__ import annotations

import pandas as pd
import torch

from compendium.core import data
from compendium.distill import evaluate as E
from compendium.distill import runner
from compendium.distill.unrolled import ld

NUM_CLASSES = 10


def load_bases(base_per_class: int, target_n: int, dataset: str = "fashion-mnist", data_root: str = ""):
    """``(tr, te, dg, MEAN, STD, T_X, T_Y, within, cross)``: the target ``dataset`` (Fashion-MNIST, shipped, or
    LD's MNIST from ``data_root``), the digits (28 px), the target pool (a seeded subset of ``target_n``
    training images) and the class-balanced base images ``(x, y, index)`` of the target (within) and the digits
    (cross; LD's EMNIST -> MNIST stands here), both normalised with the target's statistics (the learner is
    tested on the target)."""
    tr, te, mean, std = data.train_test(dataset, data_root)
    if tuple(tr.images.shape[1:]) != (1, 28, 28) or tr.num_classes != NUM_CLASSES:
        raise ValueError(
            f"dataset: LD's cross-dataset bases are 28-px digits; {dataset!r} has {tuple(tr.images.shape[1:])} "
            f"images of {tr.num_classes} classes (use fashion-mnist or mnist)"
        )
    dg = data.load_digits("train", size=28)
    pool = torch.randperm(len(tr.labels), generator=torch.Generator().manual_seed(12345))[:target_n]
    within = ld.base_examples(tr.images, tr.labels, base_per_class, NUM_CLASSES, mean, std, seed=0)
    cross = ld.base_examples(dg.images, dg.labels, base_per_class, NUM_CLASSES, mean, std, seed=0)
    return tr, te, dg, mean, std, tr.images[pool], tr.labels[pool], within, cross


def distill_calls(
    within,
    cross,
    T_X,
    T_Y,
    mean,
    std,
    *,
    cross_variants,
    arch: str,
    inner_batch: int,
    target_batch: int,
    label_lr: float,
    model_lr: float,
    patience: int,
    window: int,
    rr_steps: int,
    lam: float,
    alpha: float,
    so_steps: int,
    inner_lr: float,
    inner_steps: int,
    dataset: str = "fashion-mnist",
    device: str = "cpu",
) -> tuple[list, list]:
    """``(names, calls)``: RR (:func:`ld.distill_rr`) and second-order (:func:`ld.distill_second_order`) on the
    within base, and the ``cross_variants`` on the digits base; names are ``(base, variant)``; the sets record
    ``dataset`` (the target) and ``digits->dataset``. ``device``: where each run trains (the stage's GPU when it
    runs them in its own process)."""
    common = dict(
        arch=arch,
        inner_batch=inner_batch,
        target_batch=target_batch,
        label_lr=label_lr,
        model_lr=model_lr,
        patience=patience,
        window=window,
        seed=0,
        device=device,
    )
    rr = dict(steps=rr_steps, lam=lam, alpha=alpha, **common)
    so = dict(steps=so_steps, inner_lr=inner_lr, inner_steps=inner_steps, **common)
    calls, names = [], []
    for base, (bx, bi, ds) in {
        "within": (within[0], within[2], dataset),
        "cross": (cross[0], cross[2], f"digits->{dataset}"),
    }.items():
        for v in ("rr", "second_order"):
            if base == "cross" and v not in cross_variants:
                continue
            fn, kw = (ld.distill_rr, rr) if v == "rr" else (ld.distill_second_order, so)
            calls.append((fn, (bx, T_X, T_Y, NUM_CLASSES, mean, std), dict(**kw, dataset=ds, source_index=bi)))
            names.append((base, v))
    return names, calls


def runs_table(made: dict, by_in: torch.Tensor, by_cr: torch.Tensor) -> pd.DataFrame:
    """One row per distillation run: steps, seconds, resets, steps to overfit each T_i, first / last target loss, the
    labels' mean entropy and (within) how often their argmax is the true label."""
    rows = []
    for (base, v), d in made.items():
        true = by_in if base == "within" else by_cr
        p = d.params
        rows.append(
            {
                "base": base,
                "variant": v,
                "steps": p["steps"],
                "seconds": d.synthesis_seconds,
                "resets": p["resets"],
                "steps to overfit T_i": " ".join(map(str, p["times_to_overfit"])) or "-",
                "first target loss": p["target_loss"][0],
                "last target loss": p["target_loss"][-1],
                "label entropy (nats)": float(ld.label_entropy(d.soft_labels).mean()),
                "argmax = true label": float((d.labels == true).float().mean()) if base == "within" else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def target_loss_curves(made: dict) -> pd.DataFrame:
    """The compact target-loss curves (window means) of every run; the claims' plateau test reads them."""
    return pd.DataFrame(
        [
            {"run": f"{v} {base}", "iteration": i, "loss": x}
            for (base, v), d in made.items()
            for i, x in enumerate(d.params["target_loss"])
        ],
        columns=["run", "iteration", "loss"],
    )


def true_label_sets(made: dict, by_in: torch.Tensor, by_cr: torch.Tensor) -> tuple:
    """``(onehot, mapped)``: the within base images with their true one-hot labels (the paper's baseline) and the
    digits base with the arbitrary mapping digit k -> class k (None without a cross run)."""
    onehot = ld.with_labels(made[("within", "rr")], by_in, "true labels")
    ref_cr = next(d for (b, _), d in made.items() if b == "cross") if any(b == "cross" for b, _ in made) else None
    mapped = ld.with_labels(ref_cr, by_cr, "digit k -> class k") if ref_cr is not None else None
    return onehot, mapped


def eval_config(
    student: str = "lenet",
    optimizer: str = "adam",
    mult: float = 1.0,
    *,
    eval_width: int,
    eval_steps: int,
    eval_batch: int,
    eval_lr: float,
    eval_sgd_lr: float,
    device: str,
) -> E.EvalConfig:
    """A student's recipe: Adam (constant ``eval_lr``) or SGD with momentum (``eval_sgd_lr``) for
    ``mult * eval_steps`` steps, no augmentation, soft labels."""
    kw = {
        "lenet": {},
        "mlp": {"width": 128, "depth": 3},
        "convnet": {"width": eval_width, "depth": 3, "norm": "instance"},
    }[student]
    return E.EvalConfig(
        arch=student,
        arch_kwargs=kw,
        steps=max(1, int(round(mult * eval_steps))),
        batch_size=eval_batch,
        optimizer="adamw" if optimizer == "adam" else "sgd",
        weight_decay=0.0,
        lr=eval_lr if optimizer == "adam" else eval_sgd_lr,
        momentum=0.9,
        schedule="constant",
        augmentation="none",
        flip=False,
        label_mode="soft",
        device=device,
        channels_last=False,
    )


def label_sets(made: dict, onehot, mapped, cross_variants) -> dict:
    """``{(base, labels): set}``: LD-RR, LD second-order and the true labels (within), the cross variants and the
    arbitrary mapping digit k -> class k (cross)."""
    sets = {
        ("within", "LD-RR"): made[("within", "rr")],
        ("within", "LD second-order"): made[("within", "second_order")],
        ("within", "true labels"): onehot,
    }
    for v in cross_variants:
        sets[("cross", "LD-RR" if v == "rr" else "LD second-order")] = made[("cross", v)]
    if mapped is not None:
        sets[("cross", "digit k -> class k")] = mapped
    return sets


def flex_cells(arch: str, archs, step_mults) -> list[tuple]:
    """The flexibility grid ``(student, optimizer, mult)``: the distillation setup first, then other students,
    SGD, and the other step multiples."""
    return (
        [("lenet", "adam", 1.0)]
        + [(a, "adam", 1.0) for a in archs if a != arch]
        + [(arch, "sgd", 1.0)]
        + [(arch, "adam", m) for m in step_mults if m != 1.0]
    )


def eval_jobs(sets: dict, flex: list, seeds, config_for, eval_steps: int) -> list:
    """One :class:`runner.Job` per (set, cell, seed): the whole flexibility grid for LD-RR and the true labels
    (within), the first cell for the others; ``config_for(student, optimizer, mult)`` gives the recipe."""
    jobs = []
    for (base, name), d in sets.items():
        cells = flex if (base, name) in {("within", "LD-RR"), ("within", "true labels")} else flex[:1]
        for student, opt, mult in cells:
            cost = mult * eval_steps * {"lenet": 1.0, "mlp": 0.15, "convnet": 1.5}[student]
            jobs += [
                runner.Job(
                    {"base": base, "labels": name, "student": student, "optimizer": opt, "mult": mult},
                    d,
                    config_for(student, opt, mult),
                    s,
                    cost=cost,
                )
                for s in seeds
            ]
    return jobs


def main_table(summary: pd.DataFrame, arch: str) -> tuple[pd.DataFrame, dict]:
    """``(main, cells)``: the distillation setup's rows (``arch``, Adam, 1x) and every cell's (mean, std)."""
    cells = {
        (r["base"], r["labels"], r["student"], r["optimizer"], r["mult"]): (r["mean"], r["std"])
        for _, r in summary.iterrows()
    }
    main = summary[(summary.student == arch) & (summary.optimizer == "adam") & (summary["mult"] == 1.0)]
    return main[["base", "labels", "mean", "std", "cell"]].reset_index(drop=True), cells


def flexibility_table(cells: dict, flex: list, eval_steps: int) -> pd.DataFrame:
    """The learned LD-RR labels against the true labels in every cell of the flexibility grid (gain in points)."""
    rows = []
    for student, opt, mult in flex:
        a, b = cells[("within", "LD-RR", student, opt, mult)], cells[("within", "true labels", student, opt, mult)]
        rows.append(
            {
                "student": student,
                "optimizer": opt,
                "steps": int(round(mult * eval_steps)),
                "mult": mult,
                "LD-RR": E.cell_text(*a),
                "true labels": E.cell_text(*b),
                "gain (points)": 100 * (a[0] - b[0]),
                "ld_mean": a[0],
                "true_mean": b[0],
                "ld_std": a[1],
                "true_std": b[1],
            }
        )
    return pd.DataFrame(rows)


def metrics(main: pd.DataFrame, flex: pd.DataFrame, runs: pd.DataFrame, res: pd.DataFrame) -> dict:
    """The stage's metrics (without the wall time)."""
    return {
        "main": {f"{r['base']} {r['labels']}": {"mean": r["mean"], "std": r["std"]} for _, r in main.iterrows()},
        "flexibility_gain": {
            f"{r['student']} {r['optimizer']} {r['mult']:g}x": r["gain (points)"] / 100 for _, r in flex.iterrows()
        },
        "distillation_seconds": {f"{r['base']} {r['variant']}": r["seconds"] for _, r in runs.iterrows()},
        "resets": {f"{r['base']} {r['variant']}": r["resets"] for _, r in runs.iterrows()},
        "eval_seconds_total": float(res["seconds"].sum()),
    }


def label_drift_curves(made: dict) -> pd.DataFrame:
    """The compact label-drift curves (:func:`ld.label_drift`, window means) of every run, in the layout of
    :func:`target_loss_curves`: the labels' convergence, LD's own stopping rule."""
    return pd.DataFrame(
        [
            {"run": f"{v} {base}", "iteration": i, "loss": x}
            for (base, v), d in made.items()
            for i, x in enumerate(d.params.get("label_drift", []))
        ],
        columns=["run", "iteration", "loss"],
    )
