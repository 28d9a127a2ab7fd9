"""The ``rela_smoke`` stage: BYOL vs BYOL + ReLA at one budget with a kNN monitor per epoch (ReLA
camera-ready Sec. 4 and Algorithm 1; v1 Sec. 4 and its kNN learning curves).

* :func:`index_targets`: the ``priors`` stage's targets for each prior, checked against the student.
* :class:`Monitor`: the kNN monitor (a fixed random subset of D and of the test set) and the linear
  probe on frozen features of all of D.
* :func:`smoke_arms`: the arms (untrained, the plain method, + ReLA per prior, and the code's
  first-w-of-epochs schedule); :func:`run_smoke` trains and probes them per seed;
  :func:`probe_table` gives the paper's statistic (last 3 probe epochs of one run) beside the mean
  over seeds.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import torch

from compendium.core import augment, models, probe
from compendium.core.progress import say
from compendium.rela import schedule, targets
from compendium.ssl import methods, train


def label(spec: str) -> str:
    """A prior's short name: ``rand`` as is, a ``trained:`` file by its stem."""
    return spec if ":" not in spec else spec.rsplit("/", 1)[-1].removesuffix(".pt")


def index_targets(index_file: Path, priors: list[str], student_kwargs: dict) -> tuple[dict, dict]:
    """The index of the ``priors`` stage and ``{prior: [N, n] targets}`` for each of ``priors``, which
    must have been made for a Conv-3 student with ``student_kwargs``."""
    index_file = Path(index_file)
    index = targets.read_index(index_file)
    out = {}
    for spec in priors:
        entry = next((e for e in index["targets"] if e["prior"] == spec), None)
        if entry is None:
            raise ValueError(f"no targets for prior {spec!r} in {index_file}; add it to the `priors` stage's `priors`")
        if entry["student"] != student_kwargs:
            raise ValueError(
                f"the targets of {spec!r} were made for the student {entry['student']}, not {student_kwargs}: "
                "make the two stages' architecture keys agree"
            )
        out[spec] = targets.load_targets(index_file.parent / entry["file"])["values"]
    return index, out


@dataclass
class Monitor:
    """D (``images``, ``labels``), the test set, the kNN subsets (``knn_tr`` of D, ``knn_te`` of the
    test set) and the probe settings."""

    images: torch.Tensor
    labels: torch.Tensor
    test_images: torch.Tensor
    test_labels: torch.Tensor
    knn_tr: torch.Tensor
    knn_te: torch.Tensor
    mean: tuple
    std: tuple
    device: object
    probe_epochs: int
    probe_lr: float
    probe_batch_size: int
    probe_standardize: bool

    @classmethod
    def draw(cls, images, labels, test_images, test_labels, knn_train: int, knn_test: int, **kw) -> Monitor:
        """The kNN subsets: ``knn_train`` images of D, then ``knn_test`` test images (seed 12345)."""
        gk = torch.Generator().manual_seed(12345)
        knn_tr = torch.randperm(len(images), generator=gk)[:knn_train]
        knn_te = torch.randperm(len(test_images), generator=gk)[:knn_test]
        return cls(images, labels, test_images, test_labels, knn_tr, knn_te, **kw)

    def knn(self, backbone) -> float:
        f_tr = probe.extract_features(backbone, self.images[self.knn_tr], self.mean, self.std, device=self.device)
        f_te = probe.extract_features(backbone, self.test_images[self.knn_te], self.mean, self.std, device=self.device)
        return probe.knn_accuracy(f_tr, self.labels[self.knn_tr], f_te, self.test_labels[self.knn_te], 10)

    def linear_probe(self, backbone, seed: int) -> probe.ProbeResult:
        f_tr = probe.extract_features(backbone, self.images, self.mean, self.std, device=self.device)
        f_te = probe.extract_features(backbone, self.test_images, self.mean, self.std, device=self.device)
        return probe.linear_probe(
            f_tr,
            self.labels,
            f_te,
            self.test_labels,
            10,
            epochs=self.probe_epochs,
            lr=self.probe_lr,
            batch_size=self.probe_batch_size,
            seed=seed,
            standardize=self.probe_standardize,
        )


def student(seed: int, student_kwargs: dict) -> models.Backbone:
    """The Conv-3 student at ``seed`` (the ``rand`` prior at the same seed is a copy of it)."""
    torch.manual_seed(seed)
    return models.build("convnet", **student_kwargs)


def smoke_arms(method: str, priors: list[str], schedule_name: str, fraction_arm: float) -> list[dict]:
    """untrained, the method, + ReLA per prior, and (``fraction_arm`` > 0) + ReLA with the last prior
    for the first ``fraction_arm`` of the epochs."""
    m = method.upper()
    arms = [{"name": "untrained"}, {"name": m}]
    arms += [{"name": f"{m} + ReLA ({label(p)})", "prior": p, "schedule": schedule_name} for p in priors]
    if fraction_arm > 0:
        arms.append(
            {
                "name": f"{m} + ReLA ({label(priors[-1])}), ReLA for the first {fraction_arm:g} of epochs",
                "prior": priors[-1],
                "schedule": "epochs",
            }
        )
    return arms


def run_smoke(
    arms: list[dict],
    seeds: list[int],
    monitor: Monitor,
    target_values: dict,
    *,
    student_kwargs: dict,
    method: str,
    head_mult: float,
    transfer_trainable: bool,
    rela_code_extras: bool,
    fraction_arm: float,
    epochs: int,
    batch_size: int,
    lr: float,
    weight_decay: float,
    budget: float,
    device: str,
    compile: bool,
    knn_every: int,
    cpu_bf16: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Train and probe every arm on every seed. Returns (results: one row per run, curves: the kNN
    monitor per epoch, steps: the trainer's per-step trace)."""
    images, dev = monitor.images, monitor.device
    mean, std = monitor.mean, monitor.std
    ssl_views = augment.preset(method, size=28)
    rela_views = augment.preset("rela_weak", size=28, code_extras=rela_code_extras)
    curves, steps, results = [], [], []
    for seed in seeds:
        for spec in arms:
            arm = spec["name"]
            t0 = time.perf_counter()
            bb = student(seed, student_kwargs)
            if arm != "untrained":
                model = methods.build(method, bb, head_mult=head_mult)
                kw = {}
                if "prior" in spec:
                    model = methods.ReLA(
                        model, target_values[spec["prior"]].shape[1], transfer_trainable=transfer_trainable
                    )
                    sched = (
                        schedule.make("epochs", w=fraction_arm, epochs=epochs)
                        if spec["schedule"] == "epochs"
                        else schedule.make(spec["schedule"])
                    )
                    kw = dict(targets=target_values[spec["prior"]], rela_views=rela_views, schedule=sched)
                start = probe.recalibrate_bn(copy.deepcopy(bb), images, mean, std, device=dev)
                curves.append({"seed": seed, "arm": arm, "epoch": 0, "knn": monitor.knn(start)})

                def on_epoch(epoch, _m, seed=seed, arm=arm, bb=bb):
                    if epoch % knn_every == 0 or epoch == epochs:
                        acc = monitor.knn(bb)
                        curves.append({"seed": seed, "arm": arm, "epoch": epoch, "knn": acc})
                        return {"knn": acc}
                    return {}

                cfg = train.PretrainConfig(
                    epochs=epochs,
                    batch_size=batch_size,
                    lr=lr,
                    weight_decay=weight_decay,
                    budget=budget,
                    seed=seed,
                    device=device,
                    compile=compile,
                    log_prefix=arm,
                    cpu_bf16=cpu_bf16,
                )
                hist = train.pretrain(model, images, cfg, ssl_views, mean, std, on_epoch=on_epoch, **kw)
                for s in hist.steps:
                    steps.append({"seed": seed, "arm": arm, **s})
                switch = hist.switch_step
                n_steps = len(hist.steps)
                train_seconds = sum(e["seconds"] for e in hist.epochs)
            else:  # a random network with data-estimated BN statistics (its initial ones are mean 0, variance 1)
                probe.recalibrate_bn(bb, images, mean, std, device=dev)
                switch, n_steps, train_seconds = None, 0, 0.0
            res = monitor.linear_probe(bb.cpu(), seed)
            last3 = res.last_k(3)
            results.append(
                {
                    "seed": seed,
                    "arm": arm,
                    "schedule": spec.get("schedule", ""),
                    "probe final": res.final,
                    "probe last-3 mean": last3[0],
                    "probe last-3 std": last3[1],
                    "kNN": monitor.knn(bb),
                    "steps": n_steps,
                    "switch step": switch,
                    "train seconds": train_seconds,
                    "total seconds": time.perf_counter() - t0,
                }
            )
            say(f"[rela_smoke] seed {seed} {arm}: probe {res.final:.4f}  ({time.perf_counter() - t0:.0f} s)")
    return pd.DataFrame(results), pd.DataFrame(curves), pd.DataFrame(steps)


def probe_table(results: pd.DataFrame, arms: list[str], seeds: list[int]) -> pd.DataFrame:
    """Per arm: the paper's statistic (mean ± std over the last 3 probe epochs of the first seed's run)
    and the honest one (mean ± std over seeds), in percent, with steps, switch step and seconds."""
    rows = []
    for arm in arms:
        r = results[results["arm"] == arm]
        first = r[r["seed"] == seeds[0]].iloc[0]
        mean, std = probe.seed_summary(r["probe final"].tolist())
        rows.append(
            {
                "arm": arm,
                "paper statistic: last-3 mean (seed %d)" % seeds[0]: 100 * first["probe last-3 mean"],
                "± last-3 std": 100 * first["probe last-3 std"],
                "honest: mean over seeds": 100 * mean,
                "± std over seeds": 100 * std,
                "seeds": len(r),
                "steps": int(r["steps"].iloc[0]),
                "switch step (mean)": pd.to_numeric(r["switch step"]).mean(),
                "train seconds (mean)": r["train seconds"].mean(),
            }
        )
    return pd.DataFrame(rows)
