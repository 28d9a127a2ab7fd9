"""The speed levers considered for the ``cpu`` profile, measured on the library's own loops (synthetic tensors).

Each lever is timed against the loop as the pipeline runs it, in one process, one thread (a stage's worker):

* ``compile``: one BYOL (Grill et al., NeurIPS 2020) step of :func:`compendium.ssl.train.pretrain` at the ``cpu``
  shapes (Conv-3 width 16, batch 128), eager against ``torch.compile`` (``PretrainConfig.compile``); the compile's
  own seconds are reported apart (each worker process pays them again);
* ``recovery_batch``: one SRe2L (Yin et al., NeurIPS 2023) / DWA recovery iteration
  (:func:`compendium.distill.inversion.recover`) of one batch of 10 images (the code's one image per class)
  against one batch of 100, per 10 images: what stacking the ipc indices of a set into one batch would win;
* ``recovery_layout``: the same iteration, teacher and images contiguous (as the pipeline runs it) against
  channels_last;
* ``avg_pool``: ``avg_pool2d(2)`` forward + backward on a ConvNet's first feature map, contiguous against
  channels_last (the layout the students and BYOL train in);
* ``cpu_bf16``: bf16 autocast on the CPU (``PretrainConfig.cpu_bf16``) against fp32: the BYOL step above, a
  SimCLR step with rela_methods' heads (``head_mult`` 0.25), and one supervised step of DC's instance-norm
  ConvNet student (batch 64; GroupNorm has no fast bf16 kernel here, so the students stay fp32).

    python benchmarks/bench_levers.py [--quick] [--out benchmarks/bench_levers_cpu.json]

``--quick`` (a smoke check, seconds) leaves out the compile and times few steps.
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from pathlib import Path

import torch
import torch.nn.functional as F

FMNIST = ((0.2860,), (0.3530,))


def _best(fn, repeats: int) -> float:
    """The least of ``repeats`` timings of ``fn()`` (seconds): the one least disturbed by the machine."""
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return min(out)


def byol_compile(steps: int, quick: bool) -> list[dict]:
    from compendium.core import augment, models
    from compendium.ssl import methods, train

    views = augment.preset("byol", size=28, small_images=True)
    images = torch.randint(
        0, 256, (128 * steps, 1, 28, 28), generator=torch.Generator().manual_seed(0), dtype=torch.uint8
    )
    rows = []
    for compiled in [False] if quick else [False, True]:
        torch.manual_seed(0)
        model = methods.build(
            "byol", models.convnet(1, 28, width=16, depth=3, norm="batch", global_pool=True), head_mult=1.0
        )
        cfg = train.PretrainConfig(
            epochs=1, batch_size=128, lr=1e-3, weight_decay=0.01, device="cpu", log_prefix="", compile=compiled
        )
        t = time.perf_counter()
        first = train.pretrain(model, images, cfg, views, *FMNIST).epochs[0]["seconds"]  # compiles here
        total = time.perf_counter() - t
        again = train.pretrain(model, images, cfg, views, *FMNIST).epochs[0]["seconds"]  # warm
        rows.append(
            {
                "lever": "compile",
                "arm": "torch.compile" if compiled else "eager",
                "config": "BYOL step, Conv-3 w16 BN GAP, batch 128, 1x28x28",
                "ms": 1e3 * again / steps,
                "one_off_s": max(0.0, first - again) if compiled else 0.0,
                "first_call_s": total,
            }
        )
    return rows


def _teacher():
    from compendium.distill import evaluate as E

    return E.build_student(
        E.EvalConfig(arch="convnet", arch_kwargs={"width": 32, "depth": 3, "norm": "batch"}), (1, 28, 28), 10, seed=0
    ).eval()


def recovery(iters: int, repeats: int) -> list[dict]:
    from compendium.distill import inversion as I

    teacher = _teacher()
    rows = []
    g = torch.Generator().manual_seed(0)
    for n in (10, 100):
        x, y = torch.randn(n, 1, 28, 28, generator=g), torch.arange(n) % 10
        I.recover(teacher, x, y, iterations=5)
        s = _best(lambda: I.recover(teacher, x, y, iterations=iters), repeats) / iters
        rows.append(
            {
                "lever": "recovery_batch",
                "arm": f"one batch of {n}",
                "config": "Conv-3 w32 BN teacher, 1x28x28",
                "ms": 1e3 * s,
                "ms_per_10_images": 1e3 * s * 10 / n,
            }
        )
    x, y = torch.randn(10, 1, 28, 28, generator=g), torch.arange(10)
    for cl in (False, True):
        t = copy.deepcopy(teacher).to(memory_format=torch.channels_last) if cl else teacher
        xi = x.contiguous(memory_format=torch.channels_last) if cl else x
        I.recover(t, xi, y, iterations=5)
        s = _best(lambda: I.recover(t, xi, y, iterations=iters), repeats) / iters
        rows.append(
            {
                "lever": "recovery_layout",
                "arm": "channels_last" if cl else "contiguous",
                "config": "one batch of 10, Conv-3 w32 BN teacher",
                "ms": 1e3 * s,
            }
        )
    return rows


def avg_pool(reps: int, repeats: int) -> list[dict]:
    rows = []
    for shape in ((10, 32, 28, 28), (128, 16, 28, 28)):
        for cl in (False, True):
            x = torch.randn(*shape)
            x = (x.contiguous(memory_format=torch.channels_last) if cl else x).requires_grad_(True)

            def step():
                for _ in range(reps):
                    y = F.avg_pool2d(x, 2)
                    y.backward(torch.ones_like(y))

            step()
            rows.append(
                {
                    "lever": "avg_pool",
                    "arm": "channels_last" if cl else "contiguous",
                    "config": f"avg_pool2d(2) forward + backward, {'x'.join(map(str, shape))}",
                    "ms": 1e3 * _best(step, repeats) / reps,
                }
            )
    return rows


def cpu_bf16(steps: int) -> list[dict]:
    from compendium.core import augment, models
    from compendium.ssl import methods, train

    images = torch.randint(
        0, 256, (128 * steps, 1, 28, 28), generator=torch.Generator().manual_seed(0), dtype=torch.uint8
    )
    rows = []
    for name, mult in (("byol", 1.0), ("simclr", 0.25)):
        views = augment.preset(name, size=28, small_images=True)
        for bf in (False, True, False, True):  # twice each: the second of a pair is the one kept
            torch.manual_seed(0)
            model = methods.build(
                name, models.convnet(1, 28, width=16, depth=3, norm="batch", global_pool=True), head_mult=mult
            )
            cfg = train.PretrainConfig(epochs=1, batch_size=128, device="cpu", log_prefix="", cpu_bf16=bf)
            sec = train.pretrain(model, images, cfg, views, *FMNIST).epochs[0]["seconds"]
            row = {
                "lever": "cpu_bf16",
                "arm": "bf16 autocast" if bf else "fp32",
                "config": f"{name} step, Conv-3 w16 BN GAP, head_mult {mult}, batch 128",
                "ms": 1e3 * sec / steps,
            }
            rows = [r for r in rows if (r["arm"], r["config"]) != (row["arm"], row["config"])] + [row]
    x, y = torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))
    for bf in (False, True):
        torch.manual_seed(0)
        net = models.convnet(1, 28, width=16, depth=3, norm="instance", global_pool=False)
        head = torch.nn.Linear(net.feature_dim, 10)
        opt = torch.optim.SGD([*net.parameters(), *head.parameters()], lr=0.01)

        def step():
            for _ in range(steps):
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf):
                    loss = F.cross_entropy(head(net(x)).float(), y)
                opt.zero_grad()
                loss.backward()
                opt.step()

        step()
        rows.append(
            {
                "lever": "cpu_bf16",
                "arm": "bf16 autocast" if bf else "fp32",
                "config": "supervised step, DC's Conv-3 w16 instance norm, batch 64",
                "ms": 1e3 * _best(step, 2) / steps,
            }
        )
    return rows


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke check: no compile, few steps")
    ap.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    q = args.quick
    rows = (
        byol_compile(4 if q else 150, q)
        + recovery(3 if q else 200, 1 if q else 3)
        + avg_pool(2 if q else 50, 1 if q else 3)
        + cpu_bf16(3 if q else 60)
    )
    meta = {"torch": torch.__version__, "threads": torch.get_num_threads(), "quick": q}
    for r in rows:
        print(" | ".join(f"{k}: {v:.3f}" if isinstance(v, float) else f"{k}: {v}" for k, v in r.items()), flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    return rows


if __name__ == "__main__":
    main()
