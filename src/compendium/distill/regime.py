"""Where the labelled family's teacher and students reach their plateau on 2 cores: the regime study behind DWA's
Tables 1 and 3, ReLA's Table 5 and DC / DSA's Fashion-MNIST results.

DWA, SRe2L and RDED distil from a teacher trained on the whole training set and evaluate each set by training
a fresh student on it with the teacher's labels; DC and DSA train the student with hard labels. Their claims
compare sets, so they need a teacher near its architecture's ceiling (its labels are what the students learn)
and students trained until their accuracy stops rising (a student cut short ranks sets by how fast they are
learnt, not by what they hold). This module measures both against their schedules, on Fashion-MNIST, tested on
all 10,000 test images:

* :func:`teacher_curve`: the pipeline's teacher (a ConvNet with BatchNorm, AdamW, crop + flip) trained on the
  whole training set at a constant learning rate, tested after every epoch (a constant rate shows the plateau
  a cosine schedule of that length would anneal into);
* :func:`student_curve`: the pipeline's evaluation student (a Conv-3 of width 16 with instance norm, AdamW,
  cosine, crop + flip) trained for each step count of the grid (a separate run per length: the cosine anneals
  to its own end) on the whole training set and on random real subsets of 10 and 50 images per class, with
  hard labels and with the teacher's (online, as the methods' evaluation does);
* :func:`run_pieces`: every missing record, written to ``reports/regime/labelled/`` as it finishes
  (``python -m compendium.distill.regime --hours 1``; resumable, committed); the teacher of each seed is kept
  beside the records (``teacher_w32_e20_seed<s>.pt``, about 90 KB, committed) for that seed's teacher-label
  students, so that every point of a teacher-label curve comes from one teacher on every machine. A seed whose
  teacher is not there (it was never committed) trains it again, and then recomputes that seed's teacher-label
  curves at every step count (their old records are removed as soon as the new teacher is saved), never mixing
  two teachers in one curve.

Example:
    >>> Plan().students()[:2]
    [('whole', 'hard'), ('random ipc 10', 'hard')]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import torch

from compendium.core import data, paths
from compendium.core.probe import to_float
from compendium.core.progress import say
from compendium.distill import evaluate as E
from compendium.distill.sets import DistilledSet

RECORDS = paths.REPORTS / "regime" / "labelled"
MODELS = RECORDS  # the teachers, committed beside the records


@dataclass(frozen=True)
class Plan:
    seeds: tuple = (0, 1)
    teacher_width: int = 32
    teacher_epochs: int = 20
    teacher_lr: float = 0.003
    teacher_batch: int = 128
    student_width: int = 16
    student_lr: float = 0.003
    student_batch: int = 64
    student_batch_hard: int = 32
    steps: tuple = (75, 300, 1200, 4800, 19200)
    #: longer runs where a curve still gained at the grid's end: the teacher-label student on 50 images per class
    #: gained about 1 point from 4,800 to 19,200 steps, and DWA's ipc-50 cells are judged at its plateau
    long_steps: tuple = (("random ipc 50", "teacher", (76800,)),)
    ipcs: tuple = (10, 50)
    temperature: float = 4.0

    def grid(self, curve: str, labels: str) -> list[int]:
        """The step counts of a student curve: :attr:`steps`, then its :attr:`long_steps`.

        >>> Plan().grid("random ipc 50", "teacher")[-2:], Plan().grid("whole", "hard")[-1]
        ([19200, 76800], 19200)
        """
        extra = [n for c, lb, more in self.long_steps if (c, lb) == (curve, labels) for n in more]
        return list(self.steps) + extra

    def students(self) -> list[tuple[str, str]]:
        """(training set, labels) of every student curve."""
        out = [("whole", "hard")]
        for ipc in self.ipcs:
            out += [(f"random ipc {ipc}", "hard"), (f"random ipc {ipc}", "teacher")]
        return out


_SETS: dict = {}  # (train, test) image sets in place of Fashion-MNIST's (tests)


def _data():
    tr, te = _SETS.get("sets") or (data.load_fashion_mnist("train"), data.load_fashion_mnist("test"))
    mean, std = (data.FASHION_MNIST_MEAN,), (data.FASHION_MNIST_STD,)
    return tr, te, mean, std


def teacher_config(plan: Plan, epochs: int, **kw) -> E.EvalConfig:
    return E.EvalConfig(
        arch="convnet",
        arch_kwargs=dict(width=plan.teacher_width, depth=3, norm="batch"),
        epochs=epochs,
        batch_size=plan.teacher_batch,
        lr=plan.teacher_lr,
        weight_decay=0.01,
        schedule="constant",
        augmentation="crop_flip",
        label_mode="hard",
        device="cpu",
        **E.crop_flip("fashion-mnist", 28),
        **kw,
    )


def teacher_curve(plan: Plan, seed: int) -> tuple[pd.DataFrame, torch.nn.Module]:
    """The teacher's test accuracy after every epoch of ``plan.teacher_epochs`` (constant learning rate) on all
    60,000 training images; returns the curve and the final teacher."""
    tr, te, mean, std = _data()
    cfg = teacher_config(plan, plan.teacher_epochs, eval_every=1)
    r = E.whole_dataset_upper_bound(
        tr.images,
        tr.labels,
        te.images,
        te.labels,
        cfg,
        seed,
        mean=mean,
        std=std,
        num_classes=10,
        return_model=True,
        log=f"teacher w{plan.teacher_width} s{seed}",
    )
    rows = [
        {
            "curve": "teacher",
            "labels": "hard",
            "seed": seed,
            "epoch": h["epoch"],
            "steps": h["step"],
            "test acc": h["test_acc"],
        }
        for h in r["history"]
    ]
    return pd.DataFrame(rows), r["model"]


def random_subset(tr, ipc: int, seed: int, mean, std) -> DistilledSet:
    """``ipc`` random training images per class (seeded), as a hard-label set."""
    g = torch.Generator().manual_seed(10_000 + seed)
    idx = torch.cat(
        [
            torch.nonzero(tr.labels == c).flatten()[torch.randperm(int((tr.labels == c).sum()), generator=g)[:ipc]]
            for c in range(10)
        ]
    )
    return DistilledSet(
        to_float(tr.images[idx], mean, std), tr.labels[idx], 10, mean, std, "random", seed=seed, source_index=idx
    )


def student_config(plan: Plan, steps: int, labels: str) -> E.EvalConfig:
    return E.EvalConfig(
        arch="convnet",
        arch_kwargs=dict(width=plan.student_width, depth=3, norm="instance"),
        steps=steps,
        batch_size=plan.student_batch_hard if labels == "hard" else plan.student_batch,
        lr=plan.student_lr,
        weight_decay=0.01,
        schedule="cosine",
        augmentation="crop_flip",
        label_mode=labels,
        temperature=plan.temperature,
        device="cpu",
        **E.crop_flip("fashion-mnist", 28),
    )


def student_curve(
    plan: Plan, training: str, labels: str, seed: int, teacher: torch.nn.Module | None = None, steps_grid=None
) -> pd.DataFrame:
    """The evaluation student's test accuracy after each step count of ``steps_grid`` (default ``plan.grid``;
    one run per count) on ``training`` ("whole" or "random ipc N") with ``labels`` ("hard" or "teacher")."""
    tr, te, mean, std = _data()
    rows = []
    for steps in plan.grid(training, labels) if steps_grid is None else steps_grid:
        cfg = student_config(plan, steps, labels)
        t0 = time.perf_counter()
        if training == "whole":
            r = E.whole_dataset_upper_bound(
                tr.images, tr.labels, te.images, te.labels, cfg, seed, mean=mean, std=std, num_classes=10
            )
        else:
            dset = random_subset(tr, int(training.rsplit(" ", 1)[1]), seed, mean, std)
            r = E.evaluate(dset, te.images, te.labels, cfg, seed, teacher=teacher if labels == "teacher" else None)
        rows.append(
            {
                "curve": training,
                "labels": labels,
                "seed": seed,
                "epoch": float("nan"),
                "steps": steps,
                "test acc": r["final_acc"],
                "seconds": time.perf_counter() - t0,
            }
        )
    return pd.DataFrame(rows)


def record_file(curve: str, labels: str, seed: int, root: Path = RECORDS) -> Path:
    return Path(root) / f"{curve.replace(' ', '-')}__{labels}__seed{seed}.csv"


def _write(df: pd.DataFrame, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out.with_suffix(".tmp"), index=False)
    out.with_suffix(".tmp").replace(out)


def run_pieces(plan: Plan, hours: float = 0.0, root: Path = RECORDS, models_dir: Path = MODELS) -> list[Path]:
    """Per seed: the teacher curve (its final teacher kept for the seed's teacher-label students), then every
    student curve; each record written as it finishes, a present one skipped. A student record that lacks step
    counts of the grid (the grid grew) gets only those, appended; no new run starts after ``hours``."""
    t0, written = time.perf_counter(), []
    for seed in plan.seeds:
        t_file = Path(models_dir) / f"teacher_w{plan.teacher_width}_e{plan.teacher_epochs}_seed{seed}.pt"
        jobs = [("teacher", "hard")] + plan.students()
        new_teacher = False  # the seed's teacher trained in this run: its teacher-label curves are redone whole

        def missing(curve, labels):
            out = record_file(curve, labels, seed, root)
            if not out.is_file() or (new_teacher and labels == "teacher"):
                return plan.grid(curve, labels)
            have = set(pd.read_csv(out)["steps"].astype(int)) if curve != "teacher" else set(plan.steps)
            return [n for n in plan.grid(curve, labels) if n not in have]

        for curve, labels in jobs:
            out = record_file(curve, labels, seed, root)
            students_need_teacher = any(missing(c, lb) for c, lb in jobs if lb == "teacher")
            if not missing(curve, labels) and (curve != "teacher" or t_file.is_file() or not students_need_teacher):
                continue  # done; the teacher is retrained only when a teacher-label student still needs it
            if hours and time.perf_counter() - t0 > hours * 3600:
                say(f"labelled regime: {hours} h spent; run again to go on")
                return written
            if curve == "teacher":
                df, teacher = teacher_curve(plan, seed)
                t_file.parent.mkdir(parents=True, exist_ok=True)
                torch.save(teacher.state_dict(), t_file)
                new_teacher = True
                for c, lb in jobs:  # the curves of a lost teacher go: a run cut short redoes them whole later
                    if lb == "teacher":
                        record_file(c, lb, seed, root).unlink(missing_ok=True)
            else:
                teacher = None
                if labels == "teacher":
                    teacher = E.build_student(teacher_config(plan, 1), (1, 28, 28), 10)
                    teacher.load_state_dict(torch.load(t_file, weights_only=True))
                    teacher.eval()
                df = student_curve(plan, curve, labels, seed, teacher, steps_grid=missing(curve, labels))
                if out.is_file() and not (new_teacher and labels == "teacher"):
                    df = pd.concat([pd.read_csv(out), df], ignore_index=True).sort_values("steps", kind="stable")
            _write(df, out)
            written.append(out)
            say(
                f"labelled regime: {out.name}: "
                + "  ".join(f"{s}: {a:.3f}" for s, a in zip(df["steps"], df["test acc"]))
            )
    return written


def load(root: Path = RECORDS) -> pd.DataFrame:
    files = sorted(Path(root).glob("*__seed*.csv"))
    return pd.concat([pd.read_csv(f) for f in files], ignore_index=True) if files else pd.DataFrame()


#: a schedule has plateaued when four times its length gains less than this (accuracy, mean over seeds): the
#: ``dd_regime`` page's reading and the schedule the protocols train their students for
PLATEAU_GAIN = 0.005


def plateaus(records: pd.DataFrame, gain: float = PLATEAU_GAIN) -> pd.DataFrame:
    """Per curve (training set, labels): the shortest schedule after which a longer one gains less than ``gain``
    (accuracy, mean over seeds): for the students, the step count whose 4x longer run gains less; for the
    teacher, the epoch after which no later epoch gains more. ``reached`` is False when every measured length
    still gains (the plateau lies beyond the grid); the accuracy there and at the longest length are given. Only
    the lengths measured on every seed of the curve are read (a growing grid is read once its seeds are in)."""
    rows = []
    for (curve, labels), g in records.groupby(["curve", "labels"], sort=False):
        x = "epoch" if curve == "teacher" else "steps"
        seeds = int(g["seed"].nunique())
        n = g.groupby(x)["seed"].nunique()
        g = g[g[x].isin(n[n == seeds].index)]  # a length not yet run on every seed is left out of the reading
        m = g.groupby(x)["test acc"].mean().sort_index()
        chosen = None
        for i, length in enumerate(m.index[:-1]):
            later = m.iloc[i + 1 :].max() if curve == "teacher" else m.iloc[i + 1]
            if later - m.iloc[i] < gain:
                chosen = length
                break
        rows.append(
            {
                "curve": curve,
                "labels": labels,
                "seeds": seeds,
                "unit": x,
                "plateau at": chosen if chosen is not None else m.index[-1],
                "reached": chosen is not None,
                "accuracy there": float(m.loc[chosen if chosen is not None else m.index[-1]]),
                "longest": m.index[-1],
                "accuracy at the longest": float(m.iloc[-1]),
            }
        )
    return pd.DataFrame(rows)


def piece_main(run, plan, doc: str, argv=None, parents=()) -> int:
    """The command line of a resumable record maker: ``--hours`` (no new piece after that) and ``--threads``,
    beside the maker's own options (``parents``: argparse parsers made with ``add_help=False``, shown by
    ``--help``); runs ``run(plan, hours)``."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0], parents=list(parents))
    ap.add_argument("--hours", type=float, default=0.0)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    run(plan, a.hours)
    return 0


def main(argv=None) -> int:
    """``--seeds`` chooses the seeds (default: :class:`Plan`'s; two processes on disjoint seeds use two cores);
    ``--hours`` and ``--threads`` as every record maker has them."""
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--seeds", nargs="+", type=int, help="(default: 0 1)")
    a, rest = ap.parse_known_args(argv)
    plan = Plan(seeds=tuple(a.seeds)) if a.seeds else Plan()
    return piece_main(run_pieces, plan, __doc__, rest, parents=[ap])


if __name__ == "__main__":
    raise SystemExit(main())
