"""Would a larger cap bring DD's and SLDD's outer loops into their regime at ``cpu`` settings?

``dd_unrolled`` caps its 37 DD / SLDD outer loops at 200 (the four regimes) and 300 (the sizes study) steps,
with the plateau stop on. This script runs the same loops (``params.yaml``'s ``cpu`` settings, the poisoning
run left out) with every cap raised to ``--cap``, and reports per run where it stopped, whether its curve
passes the plateau test (:func:`compendium.core.plateau.is_plateau`) and whether that plateau is a collapse
(:func:`compendium.pipeline.checks.unrolled.rise_above_best`). At a cap of 1,500 it takes about 27 minutes on
2 cores.

    python benchmarks/dd_caps.py --cap 1500 [--out benchmarks/dd_caps_1500.json] [--workers 2]
    python benchmarks/dd_caps.py --table benchmarks/dd_caps_1500.json   # the table again, from the curves
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from compendium.core import plateau
from compendium.core.parallel import run_calls
from compendium.distill.unrolled import dd_experiment as experiment
from compendium.pipeline import params
from compendium.pipeline.checks import unrolled as checks

KEYS = ("seed", "arch", "init", "size", "steps", "epochs", "batch_real", "lr_img", "lr_label", "lr_lr", "init_lr",
        "label_own", "sl_sizes", "sl_epochs", "similar_groups", "poison_attacked", "poison_target", "poison_size",
        "poison_iterations", "poison_lr", "fixed_seeds", "plateau_every", "min_iterations")


def run(cap: int, workers: int) -> dict:
    p = params.stage_params("dd_unrolled", scale="cpu")
    d = experiment.load_splits(p["seed"], p["val_n"], p["test_n"], p["dataset"], p["data_root"])
    pools = experiment.pretrain_pools(d, arch=p["arch"], init=p["init"], pool_size=p["pool_size"], pool_eval=p["pool_eval"],
                                      pretrain_steps=p["pretrain_steps"], poison_pool=p["poison_pool"],
                                      ref_steps=p["ref_steps"], workers=workers, device="cpu")
    names, calls = experiment.distill_calls(d, pools, iterations=cap, sl_iterations=cap, device="cpu", **{k: p[k] for k in KEYS})
    keep = [i for i, n in enumerate(names) if n != "poison"]
    t0 = time.perf_counter()
    res = run_calls([calls[i] for i in keep], workers=workers)
    print(f"{len(keep)} runs in {time.perf_counter() - t0:.0f} s")
    return {names[i]: {"iterations": len(r.loss_trace), "seconds": r.seconds, "curve": [float(x) for x in r.loss_trace]}
            for i, r in zip(keep, res)}


def table(runs: dict) -> str:
    lines = ["| run | steps | seconds | plateau | trend per window (share of the decrease) | collapse |",
             "|---|---:|---:|---|---|---|"]
    for name, v in runs.items():
        c = v["curve"]
        ti, rise = plateau.trend_interval(c), checks.rise_above_best(c)
        trend = "n/a" if ti is None else f"{ti[0]:+.1%} ± {ti[1]:.1%}"
        rise_s = "n/a" if rise is None else ("yes" if rise > checks.COLLAPSE_RISE else "no") + f" ({rise:.0%})"
        lines.append(f"| {name} | {v['iterations']:,} | {v['seconds']:.0f} | {'yes' if plateau.is_plateau(c) else 'no'} "
                     f"| {trend} | {rise_s} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cap", type=int, default=1500)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--table", type=Path, help="print the table of a saved run instead of running")
    a = ap.parse_args()
    if a.table:
        print(table(json.loads(a.table.read_text())))
        return
    runs = run(a.cap, a.workers)
    out = a.out or Path(f"benchmarks/dd_caps_{a.cap}.json")
    out.write_text(json.dumps(runs))
    print(table(runs))


if __name__ == "__main__":
    main()
