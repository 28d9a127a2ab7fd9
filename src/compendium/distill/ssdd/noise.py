"""How noisy SSDD's evaluation is at our scale, and which evaluation lets its comparisons be decided.

SSDD's Table 1 (and KRR-ST's) evaluates a distilled set by pre-training a fresh ConvNet on it (regression onto
the set's targets) and probing the network's frozen features linearly. At our ``cpu`` scale the student is a
Conv-3 of width 16 with globally pooled (16-d) features, tested on 2,000 images; its comparisons then carry
the spread of three sources: the student's random initialisation (a 16-d pooled random feature varies a lot
from seed to seed), the probe's own seed, and the test subset's binomial noise. This module measures the
paired spread of the comparisons the ledger makes, under evaluation variants that change one source at a
time (the whole test set; wider students), with every variant seeded alike:

* :data:`VARIANTS`: the evaluations compared (the pipeline's first);
* :func:`run_pieces`: per (variant, seed), every set of :data:`SETS` evaluated with
  :func:`compendium.distill.ssdd.evaluate_set`, written to ``reports/regime/ssdd_eval/`` as it finishes
  (``python -m compendium.distill.ssdd.noise --hours 1``; resumable, committed);
* :func:`paired_spread`: per variant and comparison, the mean paired difference and its standard deviation
  over seeds, the quantity a power plan needs.

Example:
    >>> sorted(VARIANTS)[:2]
    ['pipeline: width 16, 2,000 test images', 'whole test set: width 16']
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import pandas as pd
import torch

from compendium.core import paths
from compendium.core.progress import say
from compendium.distill import ssdd
from compendium.distill.ssdd import experiments

RECORDS = paths.REPORTS / "regime" / "ssdd_eval"
#: evaluation variants: the student's width and the probe's test images (the rest as the pipeline's)
VARIANTS = {
    "pipeline: width 16, 2,000 test images": {"width": 16, "test_n": 2000},
    "whole test set: width 16": {"width": 16, "test_n": 10000},
    "whole test set: width 32": {"width": 32, "test_n": 10000},
    "whole test set: width 64": {"width": 64, "test_n": 10000},
}
SETS = ("SSDD", "KRR-ST", "Random", experiments.UNTRAINED)
#: the comparisons (A, B) whose paired differences A - B the ledger's SSDD claims read
COMPARISONS = (
    ("SSDD", "KRR-ST"),
    ("SSDD", "Random"),
    ("KRR-ST", "Random"),
    ("SSDD", experiments.UNTRAINED),
    ("Random", experiments.UNTRAINED),
)
#: the pipeline's ssdd_eval settings this study keeps fixed (params.yaml, cpu)
PRETRAIN = {"epochs": 100, "batch_size": 256, "lr": 0.1, "momentum": 0.9, "weight_decay": 0.001}
PROBE = {"train_n": 5000, "low_per_class": 10, "epochs": 20, "lr": 0.003}


def record_file(variant: str, seed: int, root: Path = RECORDS) -> Path:
    slug = "".join(c if c.isalnum() else "-" for c in variant).strip("-")
    return Path(root) / f"{slug}__seed{seed}.csv"


def evaluate_variant(variant: str, seed: int, sets: dict) -> pd.DataFrame:
    """Every set of :data:`SETS` under ``variant`` on ``seed``: one row per set with each probe's accuracy."""
    v = VARIANTS[variant]
    arch = experiments.student_kwargs(["convnet"], 1, 28, width=v["width"])["convnet"]
    spec = experiments.probe_spec(test_n=v["test_n"], **PROBE)
    pre = ssdd.PretrainConfig(**PRETRAIN)
    rows = []
    for name in SETS:
        x, y = (None, None) if name == experiments.UNTRAINED else (sets[name].images, sets[name].targets)
        r = ssdd.evaluate_set(x, y, "convnet", arch, pre, spec, seed)
        rows.append(
            {
                "variant": variant,
                "set": name,
                "seed": seed,
                **{f"acc {k}": a for k, a in r["acc"].items()},
                "seconds": r["seconds"],
            }
        )
    return pd.DataFrame(rows)


def run_pieces(seeds, hours: float = 0.0, root: Path = RECORDS, variants=None) -> list[Path]:
    """Every missing (variant, seed) record, seeds in order (so that each seed completes the variants first);
    start no new one after ``hours`` (0: no limit)."""
    sets = experiments.load_sets([s for s in SETS if s != experiments.UNTRAINED])
    t0, written = time.perf_counter(), []
    todo = [(v, s) for s in seeds for v in (variants or VARIANTS) if not record_file(v, s, root).is_file()]
    say(f"ssdd evaluation noise: {len(todo)} records to make")
    for v, s in todo:
        if hours and time.perf_counter() - t0 > hours * 3600:
            break
        df = evaluate_variant(v, s, sets)
        out = record_file(v, s, root)
        out.parent.mkdir(parents=True, exist_ok=True)
        df.to_csv(out.with_suffix(".tmp"), index=False)
        out.with_suffix(".tmp").replace(out)
        written.append(out)
        say(
            f"[{v}] seed {s}: "
            + "  ".join(f"{n} {a:.3f}" for n, a in zip(df["set"], df["acc fashion-mnist"]))
            + f"  ({df['seconds'].sum():.0f} s)"
        )
    return written


def load(root: Path = RECORDS) -> pd.DataFrame:
    files = sorted(Path(root).glob("*__seed*.csv"))
    return pd.concat([pd.read_csv(f) for f in files], ignore_index=True) if files else pd.DataFrame()


def paired_spread(records: pd.DataFrame, probe: str = "acc fashion-mnist") -> pd.DataFrame:
    """Per variant and comparison of :data:`COMPARISONS`: the seeds, the mean paired difference and the standard
    deviation of the paired differences (points), and the spread of each arm alone."""
    rows = []
    for variant, g in records.groupby("variant", sort=False):
        acc = g.pivot_table(index="seed", columns="set", values=probe) * 100
        for a, b in COMPARISONS:
            if a not in acc or b not in acc:
                continue
            d = (acc[a] - acc[b]).dropna()
            rows.append(
                {
                    "variant": variant,
                    "comparison": f"{a} − {b}",
                    "seeds": len(d),
                    "mean difference": float(d.mean()) if len(d) else math.nan,
                    "sd of paired differences": float(d.std(ddof=1)) if len(d) > 1 else math.nan,
                    f"sd of {a}": float(acc[a].std(ddof=1)),
                    f"sd of {b}": float(acc[b].std(ddof=1)),
                }
            )
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1 (default 10)")
    ap.add_argument("--hours", type=float, default=0.0)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    run_pieces(range(a.seeds), a.hours)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
