"""Would a larger cap bring DD's and SLDD's outer loops into their regime at ``cpu`` settings?

``dd_unrolled`` caps its 37 DD / SLDD outer loops at 200 (the four regimes) and 300 (the sizes study) steps,
with the plateau stop on. This script runs the same loops (``params.yaml``'s ``cpu`` settings, the poisoning
run left out) with every cap raised to ``--cap``, and reports per run where it stopped, whether its curve
passes the plateau test (:func:`compendium.core.plateau.is_plateau`) and whether that plateau is a collapse
(:func:`compendium.pipeline.checks.unrolled.rise_above_best`). At a cap of 1,500 it takes about 27 minutes on
2 cores.

    python benchmarks/dd_caps.py --cap 1500 [--out benchmarks/dd_caps_1500.json] [--workers 2]
    python benchmarks/dd_caps.py --table benchmarks/dd_caps_1500.json   # the table again, from the curves

``--lr-img`` / ``--init-lr`` replace the ``cpu`` image rate and initial step size (DD's own: 0.01 and 0.02),
``--sl-cap`` gives the sizes study its own cap, ``--only`` picks runs by name, and ``--no-stop`` turns the
plateau stop off so that every curve runs to its cap; the table's "first stop" column then says where the
stage's stop (``plateau_every`` / ``min_iterations`` of ``params.yaml``) would have ended the run, and whether
the curve up to there is a collapse.

    python benchmarks/dd_caps.py --cap 2500 --sl-cap 3000 --lr-img 0.01 --init-lr 0.02 --no-stop \
        --only "DD random" "DD fixed" --out benchmarks/dd_caps_lr001.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from compendium.core import plateau
from compendium.core.parallel import run_calls
from compendium.distill.unrolled import dd_experiment as experiment
from compendium.pipeline import params
from compendium.pipeline.checks import unrolled as checks

KEYS = (
    "seed",
    "arch",
    "init",
    "size",
    "steps",
    "epochs",
    "batch_real",
    "lr_img",
    "lr_label",
    "lr_lr",
    "init_lr",
    "label_own",
    "sl_sizes",
    "sl_epochs",
    "similar_groups",
    "poison_attacked",
    "poison_target",
    "poison_size",
    "poison_iterations",
    "poison_lr",
    "fixed_seeds",
    "sl_seeds",
    "sl_random_seeds",
    "regimes",
    "plateau_every",
    "min_iterations",
)


def run(
    cap: int, workers: int, sl_cap: int | None = None, only: list[str] | None = None, no_stop: bool = False, **override
) -> dict:
    """The loops of ``dd_unrolled`` at ``cpu`` settings (``override``: other values of :data:`KEYS`), the four
    regimes capped at ``cap`` and the sizes study at ``sl_cap`` (default ``cap``); ``only``: these runs."""
    p = {**params.stage_params("dd_unrolled", scale="cpu"), **override}
    if no_stop:
        p.update(plateau_every=0, min_iterations=0)
    d = experiment.load_splits(p["seed"], p["val_n"], p["test_n"], p["dataset"], p["data_root"])
    pools = experiment.pretrain_pools(
        d,
        arch=p["arch"],
        init=p["init"],
        pool_size=p["pool_size"],
        pool_eval=p["pool_eval"],
        pretrain_steps=p["pretrain_steps"],
        poison_pool=p["poison_pool"],
        ref_steps=p["ref_steps"],
        workers=workers,
        device="cpu",
    )
    names, calls = experiment.distill_calls(
        d, pools, iterations=cap, sl_iterations=sl_cap or cap, device="cpu", **{k: p[k] for k in KEYS}
    )
    keep = [i for i, n in enumerate(names) if n != "poison" and (not only or n in only)]
    if only and len(keep) != len(only):
        raise SystemExit(f"--only: no run named {sorted(set(only) - set(names))}; the runs: {names}")
    t0 = time.perf_counter()
    res = run_calls([calls[i] for i in keep], workers=workers)
    print(f"{len(keep)} runs in {time.perf_counter() - t0:.0f} s")
    return {
        names[i]: {"iterations": len(r.loss_trace), "seconds": r.seconds, "curve": [float(x) for x in r.loss_trace]}
        for i, r in zip(keep, res)
    }


def first_stop(curve: list[float], every: int, min_steps: int) -> tuple[int, bool] | None:
    """Where the stage's plateau stop (:func:`compendium.core.plateau.stop_at_plateau` every ``every`` steps
    from ``min_steps``) first fires on ``curve``: ``(steps, collapsed)``, collapsed when the curve up to there
    rises more than :data:`~compendium.pipeline.checks.unrolled.COLLAPSE_RISE` above its best window (the
    regime check then rejects it); None if it never fires.

    >>> first_stop([2.0 - min(i, 20) / 20 for i in range(200)], 25, 50)
    (50, False)
    """
    for n in range(every, len(curve) + 1, every) if every > 0 else ():
        if plateau.stop_at_plateau(curve[:n], every, min_steps):
            rise = checks.rise_above_best(curve[:n])
            return n, rise is not None and rise > checks.COLLAPSE_RISE
    return None


def left_after(curve: list[float], n: int) -> str:
    """How much of the curve's decrease came after step ``n``: the curve's level at ``n`` (the mean of the plateau
    test's last window there, a fifth of the ``n`` steps) minus its final level (the mean of the last 100 steps), as
    a share of the first 50 steps' mean minus the final level ("" for a curve too short).

    >>> left_after([2.0 - i / 100 for i in range(200)], 100)
    ', then 48% more'
    """
    if len(curve) < 150 or n < 15:
        return ""
    first, last = float(np.mean(curve[:50])), float(np.mean(curve[-100:]))
    at = float(np.mean(curve[n - max(3, n // 5) : n]))
    return "" if first == last else f", then {(at - last) / (first - last):.0%} more"


def table(runs: dict, every: int = 0, min_steps: int = 0) -> str:
    """One row per run; with ``every`` > 0 a "first stop" column (:func:`first_stop`)."""
    stop = every > 0
    lines = [
        "| run | steps | seconds | plateau | trend per window (share of the decrease) | collapse |"
        + (" first stop |" if stop else ""),
        "|---|---:|---:|---|---|---|" + ("---|" if stop else ""),
    ]
    for name, v in runs.items():
        c = v["curve"]
        ti, rise = plateau.trend_interval(c), checks.rise_above_best(c)
        trend = "n/a" if ti is None else f"{ti[0]:+.1%} ± {ti[1]:.1%}"
        rise_s = "n/a" if rise is None else ("yes" if rise > checks.COLLAPSE_RISE else "no") + f" ({rise:.0%})"
        row = (
            f"| {name} | {v['iterations']:,} | {v['seconds']:.0f} | {'yes' if plateau.is_plateau(c) else 'no'} "
            f"| {trend} | {rise_s} |"
        )
        if stop:
            fs = first_stop(c, every, min_steps)
            row += " never |" if fs is None else f" {fs[0]:,}{' (a collapse)' if fs[1] else ''}{left_after(c, fs[0])} |"
        lines.append(row)
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cap", type=int, default=1500)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sl-cap", type=int, help="cap of the sizes study's runs (default --cap)")
    ap.add_argument("--lr-img", type=float, help="image rate (default: the cpu profile's)")
    ap.add_argument("--init-lr", type=float, help="initial inner step size (default: the cpu profile's)")
    ap.add_argument(
        "--only", nargs="+", metavar="RUN", help='these runs only (names as the stage gives them: "DD random")'
    )
    ap.add_argument("--no-stop", action="store_true", help="plateau stop off: every curve runs to its cap")
    ap.add_argument("--table", type=Path, help="print the table of a saved run instead of running")
    ap.add_argument("--stop-from", type=int, help="the first-stop column's min_iterations (default: the cpu profile's)")
    a = ap.parse_args()
    p = params.stage_params("dd_unrolled", scale="cpu")
    every, min_steps = p["plateau_every"], p["min_iterations"] if a.stop_from is None else a.stop_from
    if a.table:
        print(table(json.loads(a.table.read_text()), every, min_steps))
        return
    override = {k: v for k, v in (("lr_img", a.lr_img), ("init_lr", a.init_lr)) if v is not None}
    runs = run(a.cap, a.workers, a.sl_cap, a.only, a.no_stop, **override)
    out = a.out or Path(f"benchmarks/dd_caps_{a.cap}.json")
    out.write_text(json.dumps(runs))
    print(table(runs, every, min_steps))


if __name__ == "__main__":
    main()
