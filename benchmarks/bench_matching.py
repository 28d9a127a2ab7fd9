"""Seconds per outer iteration of DC, DSA and DM on these machines, at the loops that decide their cost.

DC (Zhao et al., ICLR 2021) and DSA (Zhao & Bilen, ICML 2021) at ipc 10 with the code's loops (outer 10,
inner 50) and DM (Zhao & Bilen, WACV 2023) at ipc 10, on Fashion-MNIST with the `dd_matching` stage's
ConvNet (instance norm) and real batch; each figure is the mean over ``--iterations`` outer iterations after
one warm-up iteration. The product with an iteration count is the synthesis time of one set, e.g. the
papers' 1,000 (DC, DSA) and 20,000 (DM).

    python benchmarks/bench_matching.py [--iterations 2] [--widths 32 16] [--threads 2]
"""

from __future__ import annotations

import argparse
import time

import torch

from compendium.core import data
from compendium.distill.matching import dsa, synthesis


def seconds_per_iteration(
    method: str, width: int, iterations: int, *, ipc: int = 10, loops=(10, 50), batch_real: int = 64
) -> float:
    tr = data.load_fashion_mnist("train")
    mean, std = (data.FASHION_MNIST_MEAN,), (data.FASHION_MNIST_STD,)
    common = dict(arch_kwargs={"width": width, "depth": 3, "norm": "instance"}, batch_real=batch_real, seed=0)
    if method == "dm":

        def run(n):
            return synthesis.dm_synthesize(tr.images, tr.labels, ipc, 10, mean, std, iterations=n, **common)
    else:
        strategy = dsa.default_strategy("fashion-mnist") if method == "dsa" else None

        def run(n):
            return synthesis.dc_synthesize(
                tr.images,
                tr.labels,
                ipc,
                10,
                mean,
                std,
                iterations=n,
                outer_loop=loops[0],
                inner_loop=loops[1],
                dsa_strategy=strategy,
                **common,
            )

    run(1)  # warm-up: data to float, allocator, kernels
    t0 = time.perf_counter()
    run(iterations)
    return (time.perf_counter() - t0) / iterations


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=2, help="timed outer iterations (DM: x25)")
    ap.add_argument("--widths", type=int, nargs="+", default=[32, 16])
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    print("| method | width | loops | s / iteration | 1,000 iterations | 20,000 iterations |")
    print("|---|---:|---|---:|---:|---:|")
    for w in args.widths:
        for m in ("dc", "dsa", "dm"):
            n = args.iterations * (25 if m == "dm" else 1)
            s = seconds_per_iteration(m, w, n)
            loops = "-" if m == "dm" else "(10, 50)"
            print(
                f"| {m.upper()} | {w} | {loops} | {s:.3f} | {s * 1000 / 3600:.2f} h | {s * 20000 / 3600:.2f} h |",
                flush=True,
            )


if __name__ == "__main__":
    main()
