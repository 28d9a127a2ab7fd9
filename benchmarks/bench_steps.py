"""Seconds per step of each dominant training loop of the pipeline, on CPU or one CUDA GPU, on synthetic data.

One step (or outer iteration) of every loop that decides a stage's cost, run through the library's own code
(``compendium``'s models, losses, optimisers and distillation functions; nothing is re-implemented here) on
random tensors of the right shapes, so it needs no dataset files:

* ``byol``: one BYOL (Grill et al., NeurIPS 2020) training step of :func:`compendium.ssl.train.pretrain`,
  the batched on-device augmentation of ``augment.preset("byol")`` included (bf16 autocast on CUDA, as the
  loop does), as in ReLA's pre-training (Zhang et al., "ReLA") stages ``priors`` / ``rela_*``;
* ``student``: one optimiser step of :func:`compendium.distill.evaluate.evaluate`, the student training of
  every labeled-distillation evaluation and of the ``dd_teachers`` teachers (AdamW, crop + flip, hard
  labels): the ConvNet student, ResNet-18 (He et al., CVPR 2016), and the paper-scale ConvNet;
* ``recovery``: one recovery iteration of SRe2L (Yin et al., NeurIPS 2023) / DWA (Du et al., NeurIPS
  2024), :func:`compendium.distill.inversion.sre2l_synthesize` at ipc 10 (10 batches of one image per
  class: DWA's per-iteration cost is the same, its one-off weight adjustment comes on top);
* ``dc``, ``dsa``, ``dm``: one outer iteration of DC (Zhao et al., ICLR 2021) and DSA (Zhao & Bilen, ICML
  2021) with the code's ipc-10 loops (outer 10, inner 50), and of DM (Zhao & Bilen, WACV 2023), through
  :mod:`compendium.distill.matching.synthesis` on 6,000 real images;
* ``dd``: one outer iteration of unrolled DD (Wang et al., 2018), :func:`compendium.distill.unrolled.dd.distill_job`
  (LeNet, 100 images, 10 steps x 2 epochs at ``cpu``, x 3 epochs as the paper), fresh random theta_0 each step;
* ``krr``: one outer step of KRR-ST (Lee et al., ICLR 2024) and SSDD (Yu et al., ICLR 2025),
  :func:`compendium.distill.ssdd.distill` at the ``ssdd_distill`` stage's ``cpu`` settings (the pool's
  initial training excluded: the steps are timed between the loop's own progress lines).
* ``gtn``: one meta step of a generative teaching network (Such et al., ICML 2020),
  :func:`compendium.distill.unrolled.gtn.meta_train` at ``dd_gtn``'s settings: a fresh learner drawn from the pool,
  T generated batches unrolled with the learned lr and momentum, the real-batch loss back through them (T = 5 at
  ``cpu``, 32 at ``faithful`` and in the paper).

Shapes: ``cpu`` is the pipeline's default profile (Fashion-MNIST 1x28x28, reduced widths), ``paper`` the
papers' networks and batches (``params.yaml``'s ``scales.paper``). Each case is built, warmed up (1-2 steps),
timed once for one step and, when that took under half of ``--target-seconds``, again for N steps with N
chosen to take about ``--target-seconds``; on CUDA the device is synchronised before every clock read.
Every case runs on ``--device`` (``dd`` and ``krr`` through the ``device`` argument their stages pass in the
notebook's own process), the CPU ones with ``--threads`` threads. A markdown table is printed as rows arrive; ``--out``
writes the rows as JSON
(rewritten after every row, so a timeout keeps what was measured).

    python benchmarks/bench_steps.py [--device auto|cpu|cuda] [--threads 2] [--only byol dc ...]
                                     [--shapes cpu paper] [--quick] [--out build/benchmarks/bench_steps.json]

``--quick`` is a CPU smoke check (about a minute): ``cpu`` shapes only, one timed step, and DC/DSA with the
``cpu`` stage's loops (2, 5) instead of (10, 50).

``--count`` times nothing: it runs each case on the CPU under PyTorch's dispatcher and counts, per step, the ATen
operators it calls (on a GPU each is at least one kernel launch) and their floating-point operations
(``torch.utils.flop_counter``), as the difference between a 2-step and a 1-step run (so the set-up cancels). With the
GPU timings of the other cases these counts fit a two-term model of a GPU step (per-operator latency plus FLOPs at a
sustained rate, :mod:`compendium.pipeline.paper_estimate`), which gives the loops no GPU has timed their estimate.

    python benchmarks/bench_steps.py --count [--only dd krr] [--out benchmarks/bench_counts.json]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

LOOPS = ("byol", "student", "recovery", "dc", "dsa", "dm", "dd", "krr", "gtn")
SHAPES = ("cpu", "paper")
FORBIDDEN = ("papermill", "dvc", "nbformat", "nbclient", "jupyter_client", "IPython")
FMNIST = ((0.2860,), (0.3530,))  # compendium.core.data's constants
CIFAR10 = ((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))  # what the paper profile's data has
#: every compendium module the loops use (imported lazily by the builders; :func:`import_library` loads them all)
LIBRARY_MODULES = (
    "compendium.core.augment",
    "compendium.core.models",
    "compendium.ssl.methods",
    "compendium.ssl.train",
    "compendium.distill.evaluate",
    "compendium.distill.sets",
    "compendium.distill.inversion",
    "compendium.distill.matching.dsa",
    "compendium.distill.matching.synthesis",
    "compendium.distill.unrolled.dd",
    "compendium.distill.unrolled.gtn",
    "compendium.distill.unrolled.nas",
    "compendium.distill.ssdd",
)
ROW_KEYS = ("loop", "shape", "variant", "config", "device", "torch", "seconds_per_step", "steps", "peak_cuda_mib")


@dataclass
class Case:
    """One measurement. ``run(n)`` executes ``n`` steps of the loop and returns their seconds (device
    synchronised, set-up excluded where the library lets it be); ``warmup()`` runs 1-2 steps first."""

    loop: str
    shape: str
    variant: str
    config: str
    run: Callable[[int], float]
    warmup: Callable[[], object] | None = None
    max_steps: int = 1000


def sync(dev: torch.device) -> None:
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def wall(dev: torch.device, fn: Callable[[], object]) -> float:
    sync(dev)
    t = time.perf_counter()
    fn()
    sync(dev)
    return time.perf_counter() - t


def rand_u8(n: int, shape: tuple, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, 256, (n, *shape), generator=torch.Generator().manual_seed(seed), dtype=torch.uint8)


def class_labels(n: int, c: int = 10) -> torch.Tensor:
    return torch.arange(n) % c


@contextlib.contextmanager
def progress_stamps(module):
    """The times of ``module``'s progress lines (its ``say``): with ``log_every=1`` one per finished step, so
    the steps are timed without the loop's set-up. Only the logging call is replaced."""
    stamps: list[float] = []
    orig = module.say
    module.say = lambda *a, **k: stamps.append(time.perf_counter())
    try:
        yield stamps
    finally:
        module.say = orig


# --------------------------------------------------------------------------------------------- the loops


def byol_cases(shape: str, dev: torch.device, quick: bool) -> list[Case]:
    from compendium.core import augment, models
    from compendium.ssl import methods, train

    if shape == "cpu":  # priors / rela_budget: Conv-3 width 16, BN, globally pooled, batch 128, Fashion-MNIST
        c, size, width, batch, (mean, std) = 1, 28, 16, 128, FMNIST
    else:  # rela_budget.scales.paper: width 128, batch 128 (not overridden), CIFAR-10
        c, size, width, batch, (mean, std) = 3, 32, 128, 128, CIFAR10
    views = augment.preset("byol", size=size, small_images=size < 64)
    pool: dict[int, torch.Tensor] = {}

    def run(n: int) -> float:
        if n not in pool:
            pool.clear()
            pool[n] = rand_u8(n * batch, (c, size, size))
        torch.manual_seed(0)
        model = methods.build(
            "byol", models.convnet(c, size, width=width, depth=3, norm="batch", global_pool=True), head_mult=1.0
        )
        cfg = train.PretrainConfig(
            epochs=1, batch_size=batch, lr=1e-3, weight_decay=0.01, device=str(dev), log_prefix=""
        )
        hist = train.pretrain(model, pool[n], cfg, views, mean, std)
        return hist.epochs[0]["seconds"]  # the epoch's loop only; a float(loss) per step synchronises CUDA

    return [
        Case(
            "byol",
            shape,
            "byol",
            f"convnet w{width} bn gap, {c}x{size}x{size}, batch {batch}, AdamW"
            + (", bf16 autocast" if dev.type == "cuda" else ""),
            run,
            warmup=lambda: run(2),
        )
    ]


def student_cases(shape: str, dev: torch.device, quick: bool) -> list[Case]:
    from compendium.distill import evaluate as E
    from compendium.distill.sets import DistilledSet

    if shape == "cpu":
        specs = [  # dd_coresets / dd_inversion / dd_matching students (eval_width 16), dd_teachers' cpu ResNet-18
            ("convnet", {"width": 16, "depth": 3, "norm": "batch"}, 1, 28, 128, FMNIST, "convnet w16 bn"),
            ("resnet18", {"width_mult": 0.125, "stem_stride": 2}, 1, 28, 128, FMNIST, "resnet18 x0.125 stem/2"),
        ]
    else:
        specs = [  # dd_teachers.scales.paper ResNet-18; dd_matching.scales.paper's student on CIFAR-sized input
            ("resnet18", {"width_mult": 1.0, "stem_stride": 1}, 1, 28, 128, FMNIST, "resnet18 x1"),
            ("convnet", {"width": 128, "depth": 3, "norm": "instance"}, 3, 32, 256, CIFAR10, "convnet w128 in"),
        ]
    cases = []
    for arch, kw, c, size, batch, (mean, std), name in specs:
        g = torch.Generator().manual_seed(0)
        dset = DistilledSet(torch.randn(1000, c, size, size, generator=g), class_labels(1000), 10, mean, std, "bench")
        test = (rand_u8(20, (c, size, size)), class_labels(20))

        def run(n: int, arch=arch, kw=kw, batch=batch, dset=dset, test=test) -> float:
            cfg = E.EvalConfig(
                arch=arch,
                arch_kwargs=kw,
                steps=n,
                batch_size=batch,
                lr=1e-3,
                augmentation="crop_flip",
                label_mode="hard",
                device=str(dev),
            )
            return E.evaluate(dset, *test, cfg, seed=0)["train_seconds"]  # steps only, test pass excluded

        cases.append(
            Case(
                "student",
                shape,
                arch,
                f"{name}, {c}x{size}x{size}, batch {batch}, AdamW, crop+flip, hard labels",
                run,
                warmup=lambda run=run: run(2),
            )
        )
    return cases


def recovery_cases(shape: str, dev: torch.device, quick: bool) -> list[Case]:
    from compendium.distill import evaluate as E
    from compendium.distill import inversion as I

    width = 32 if shape == "cpu" else 128  # dd_teachers' ConvNet teacher (convnet_width), random weights
    teacher = (
        E.build_student(
            E.EvalConfig(arch="convnet", arch_kwargs={"width": width, "depth": 3, "norm": "batch"}),
            (1, 28, 28),
            10,
            seed=0,
        )
        .to(dev)
        .eval()
    )
    images, labels = rand_u8(200, (1, 28, 28)), class_labels(200)
    mean, std = FMNIST

    def run(n: int) -> float:
        return wall(
            dev,
            lambda: I.sre2l_synthesize(teacher, images, labels, 10, mean, std, iterations=n, lr=0.25, jitter=2, seed=0),
        )

    return [
        Case(
            "recovery",
            shape,
            "sre2l/dwa",
            f"convnet w{width} bn teacher, 1x28x28, ipc 10 x 10 classes (10 batches of 10 per iteration)",
            run,
            warmup=lambda: run(2),
        )
    ]


def matching_cases(method: str, shape: str, dev: torch.device, quick: bool) -> list[Case]:
    from compendium.distill.matching import dsa, synthesis

    if shape == "cpu":  # dd_matching (cpu): width 32, real batch 64, Fashion-MNIST
        c, size, width, batch_real, (mean, std) = 1, 28, 32, 64, FMNIST
    else:  # dd_matching.scales.paper: width 128, real batch 256, CIFAR-10-sized
        c, size, width, batch_real, (mean, std) = 3, 32, 128, 256, CIFAR10
    images, labels = rand_u8(6000, (c, size, size)), class_labels(6000)
    common = dict(
        arch_kwargs={"width": width, "depth": 3, "norm": "instance"}, batch_real=batch_real, seed=0, device=str(dev)
    )
    net = f"convnet w{width} in, {c}x{size}x{size}, 6,000 real, ipc 10, real batch {batch_real}"
    if method == "dm":

        def run(n: int) -> float:
            return wall(dev, lambda: synthesis.dm_synthesize(images, labels, 10, 10, mean, std, iterations=n, **common))

        return [Case("dm", shape, "dm", net, run, warmup=lambda: run(2), max_steps=2000)]
    loops = (2, 5) if quick else (10, 50)
    strategy = dsa.default_strategy("fashion-mnist" if shape == "cpu" else "cifar10") if method == "dsa" else None

    def run(n: int, loops=loops) -> float:
        return wall(
            dev,
            lambda: synthesis.dc_synthesize(
                images,
                labels,
                10,
                10,
                mean,
                std,
                iterations=n,
                outer_loop=loops[0],
                inner_loop=loops[1],
                dsa_strategy=strategy,
                **common,
            ),
        )

    # warm-up: one iteration with loops (2, 1) runs every kernel of the real one (outer step, inner epoch)
    return [Case(method, shape, method, f"{net}, loops {loops}", run, warmup=lambda: run(1, (2, 1)), max_steps=20)]


def dd_cases(shape: str, dev: torch.device, quick: bool) -> list[Case]:
    from compendium.distill.unrolled import dd

    epochs = 2 if shape == "cpu" else 3  # dd_unrolled: epochs 2 (cpu), 3 (paper / DD)
    images, labels = rand_u8(2000, (1, 28, 28)), class_labels(2000)
    base = dict(
        size=100,
        steps=10,
        epochs=epochs,
        batch_real=256,
        lr_img=0.1 if shape == "cpu" else 0.01,
        lr_label=0.05,
        lr_lr=0.01,
        init_lr=0.05 if shape == "cpu" else 0.02,
        seed=0,
    )

    def run(n: int) -> float:
        res = dd.distill_job(
            "random", {**base, "iterations": n}, images, labels, *FMNIST, arch="lenet", init="xavier", device=str(dev)
        )
        return res.seconds

    return [
        Case(
            "dd",
            shape,
            "dd",
            f"lenet, 100 images, 10 steps x {epochs} epochs, real batch 256, random theta_0",
            run,
            warmup=lambda: run(1),
        )
    ]


def krr_cases(shape: str, dev: torch.device, quick: bool) -> list[Case]:
    from compendium.core import models
    from compendium.distill import ssdd

    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    if shape == "cpu":
        # ssdd_distill (cpu): N = 10, U = V = 2N, s = 2, rotation, inner ConvNet width 16 (bn), real batch 128,
        # pool 4 x 30 steps, lr 0.01; the teacher a random Conv-3 width 16 (flattened 144-d, as ssdd_teacher's)
        c, size, width, n_budget, batch = 1, 28, 16, 10, 128
        teacher = ssdd.Teacher(models.convnet(1, 28, width=16, depth=3, norm="batch"), "rand")
    else:
        # ssdd_distill.scales.paper: CIFAR-100-sized, N = 100, inner ConvNet width 128, real batch 1024; the teacher
        # ssdd_teacher's ResNet-18 (512-d features); the pool kept at 4 x 30 (its size does not change a step's work)
        c, size, width, n_budget, batch = 3, 32, 128, 100, 1024
        teacher = ssdd.Teacher(models.resnet18(3, 32, width_mult=1.0), "rand")
    real = torch.randn(2 * batch, c, size, size, generator=g)
    with torch.no_grad():
        targets = torch.cat([teacher(real[i : i + 256]) for i in range(0, len(real), 256)])
    d_img, d_y, s, aug = c * size * size, targets.shape[1], 2, "rotation"
    d_xb = c * (size // s) ** 2
    uv = min(2 * n_budget, d_xb, d_y)
    inner = dict(in_channels=c, image_size=size, width=width, depth=3, norm="batch")
    cfg = ssdd.DistillConfig(
        lr=0.01, real_batch=batch, lam_rel=1e-6, pool=ssdd.PoolConfig(size=4, max_steps=30), seed=0, log_every=1
    )
    m_free = ssdd.free_images_for_budget(n_budget * d_img, d_img, d_y, False)
    m_ssdd = ssdd.images_for_budget(n_budget * d_img, uv, uv, d_xb, d_y, ssdd.num_views(aug), "q", 4)

    def make(method):
        if method == "krr_st":
            idx = torch.randperm(len(real), generator=torch.Generator().manual_seed(0))[:m_free]
            return ssdd.FreeSet(real[idx], targets[idx], "none")
        return ssdd.init_basis_set(real, targets, teacher, m_ssdd, uv, uv, s, aug, "pca", 0)

    cases = []
    for method, m, lr in (("krr_st", m_free, 0.01), ("ssdd", m_ssdd, 0.01)):

        def run(n: int, method=method, lr=lr) -> float:
            synset = make(method)
            factory = ssdd.inner_factory("convnet", inner, d_y, 0)
            with progress_stamps(ssdd) as stamps:
                ssdd.distill(
                    synset, real, targets, factory, dataclasses.replace(cfg, steps=n + 1, lr=lr, device=str(dev))
                )
            return stamps[-1] - stamps[0]  # n steps after the first one; the pool's initial training excluded

        extra = f"{m} free images" if method == "krr_st" else f"m {m}, U = V = {uv}, s {s}, {aug}"
        cases.append(
            Case(
                "krr",
                shape,
                method,
                f"{extra}, {c}x{size}x{size}, inner convnet w{width} bn, real batch {batch}, pool 4 x 30",
                run,
                warmup=lambda run=run: run(1),
            )
        )
    return cases


def gtn_cases(shape: str, dev: torch.device, quick: bool) -> list[Case]:
    from compendium.distill.unrolled import gtn, nas

    if shape == "cpu":
        # dd_gtn (cpu / faithful): Fashion-MNIST, generator hidden 128, 20 images per inner step, real batch 128,
        # the learner drawn from two width-8 ConvNets; T = 5 inner steps at cpu, 32 at faithful (and the papers)
        c, size, n_cls, mean_std = 1, 28, 10, FMNIST
        base = dict(
            batch_size=20,
            noise_dim=32,
            hidden=128,
            real_batch=128,
            learners=[nas.parse_code(k) for k in ("w8-d2-relu-instance-avg", "w8-d1-relu-none-max")],
        )
        steps = (5, 32)
    else:
        # dd_gtn.scales.paper: CIFAR-10-sized, hidden 1024, 130 images per step, real batch 512, T = 32
        c, size, n_cls, mean_std = 3, 32, 10, CIFAR10
        base = dict(
            batch_size=130,
            noise_dim=64,
            hidden=1024,
            real_batch=512,
            learners=[
                nas.parse_code(k)
                for k in ("w32-d2-relu-instance-avg", "w32-d3-leaky_relu-instance-avg", "w16-d2-relu-none-max")
            ],
        )
        steps = (32,)
    images, labels = rand_u8(2000, (c, size, size)), class_labels(2000, n_cls)
    cases = []
    for t in steps:
        cfg = gtn.GTNConfig(
            steps=t, meta_lr=0.01, hyper_lr=0.01, init_lr=0.1, init_momentum=0.5, weight_norm=True, seed=0, **base
        )

        def run(n: int, cfg=cfg) -> float:
            return gtn.meta_train(
                images, labels, dataclasses.replace(cfg, iterations=n), *mean_std, n_cls, device=str(dev)
            )["seconds"]

        cases.append(
            Case(
                "gtn",
                shape,
                f"gtn T{t}",
                f"{len(base['learners'])} learners, T = {t} x "
                f"{base['batch_size']} images, hidden {base['hidden']}, real batch {base['real_batch']}, WN",
                run,
                warmup=lambda run=run: run(1),
                max_steps=300,
            )
        )
    return cases


BUILDERS: dict[str, Callable[[str, torch.device, bool], list[Case]]] = {
    "byol": byol_cases,
    "student": student_cases,
    "recovery": recovery_cases,
    "dc": lambda s, d, q: matching_cases("dc", s, d, q),
    "dsa": lambda s, d, q: matching_cases("dsa", s, d, q),
    "dm": lambda s, d, q: matching_cases("dm", s, d, q),
    "dd": dd_cases,
    "krr": krr_cases,
    "gtn": gtn_cases,
}
CPU_SHAPE_ONLY: tuple[str, ...] = ()  # loops timed at the cpu shapes only (none)


# ------------------------------------------------------------------------------------------- measuring


def device_name(dev: torch.device) -> str:
    return torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"


def measure(case: Case, dev: torch.device, quick: bool, target: float) -> tuple[float, int, float | None]:
    """(seconds per step, steps timed, peak CUDA MiB or None) of ``case``."""
    cuda = dev.type == "cuda"
    (case.warmup or (lambda: case.run(1)))()
    if cuda:
        torch.cuda.reset_peak_memory_stats(dev)
    n, total = 1, case.run(1)
    if not quick and total < target / 2:
        n = int(min(case.max_steps, max(2, round(target / max(total, 1e-6)))))
        if cuda:
            torch.cuda.reset_peak_memory_stats(dev)
        total = case.run(n)
    peak = torch.cuda.max_memory_allocated(dev) / 2**20 if cuda else None
    return total / n, n, peak


class OperatorCounter(TorchDispatchMode):
    """Counts the ATen operators dispatched while it is active (forward, backward and optimiser alike)."""

    def __init__(self):
        super().__init__()
        self.ops = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops += 1
        return func(*args, **(kwargs or {}))


def counted(fn: Callable[[], object]) -> tuple[int, int]:
    """(ATen operators, FLOPs) of ``fn()``."""
    ops, flops = OperatorCounter(), FlopCounterMode(display=False)
    with flops, ops:
        fn()
    return ops.ops, int(flops.get_total_flops())


def count(case: Case) -> tuple[int, int]:
    """(operators, FLOPs) of one step of ``case``: a 2-step run's counts less a 1-step run's, after the warm-up."""
    (case.warmup or (lambda: case.run(1)))()
    one, two = counted(lambda: case.run(1)), counted(lambda: case.run(2))
    return two[0] - one[0], two[1] - one[1]


def count_all(loops, shapes, quick: bool = False, out: Path | None = None, printer=print) -> list[dict]:
    """:func:`count` of every (loop, shape) case on the CPU; a failing case becomes a row with ``error``."""
    rows: list[dict] = []
    printer("| loop | shape | variant | operators / step | GFLOP / step |")
    printer("|---|---|---|---:|---:|")
    dev = torch.device("cpu")
    for loop in loops:
        for shape in shapes:
            try:
                cases = BUILDERS[loop](shape, dev, quick)
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                rows.append({"loop": loop, "shape": shape, "variant": loop, "error": f"{type(e).__name__}: {e}"})
                continue
            for case in cases:
                row = {
                    "loop": loop,
                    "shape": shape,
                    "variant": case.variant,
                    "config": case.config,
                    "torch": torch.__version__,
                }
                try:
                    ops, flops = count(case)
                    row.update(ops_per_step=ops, flops_per_step=flops)
                    printer(f"| {loop} | {shape} | {case.variant} | {ops:,} | {flops / 1e9:,.2f} |")
                except Exception as e:  # noqa: BLE001
                    traceback.print_exc()
                    row["error"] = f"{type(e).__name__}: {e}"
                rows.append(row)
                if out is not None:
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_text(json.dumps(rows, indent=1) + "\n")
    return rows


def fmt_row(r: dict) -> str:
    sec = r.get("seconds_per_step")
    t = "error: " + r["error"] if sec is None else (f"{sec * 1e3:.2f} ms" if sec < 1 else f"{sec:.3f} s")
    peak = "-" if r.get("peak_cuda_mib") is None else f"{r['peak_cuda_mib']:.0f}"
    return (
        f"| {r['loop']} | {r['shape']} | {r['variant']} | {r['config']} | {r['device']} | {t} | "
        f"{r.get('steps', '-')} | {peak} |"
    )


def import_library() -> None:
    import importlib

    for name in LIBRARY_MODULES:
        importlib.import_module(name)


def forbidden_modules() -> list[str]:
    """Pipeline-only packages this benchmark must not pull in (they are absent on the GPU machines)."""
    return sorted(m for m in sys.modules if m.split(".")[0] in FORBIDDEN)


def run_all(
    loops, shapes, dev: torch.device, quick: bool = False, target: float = 3.0, out: Path | None = None, printer=print
) -> list[dict]:
    """Measure every (loop, shape) case; a failing case becomes a row with ``error`` and the run goes on."""
    rows: list[dict] = []
    printer("| loop | shape | variant | config | device | s / step | steps | peak CUDA MiB |")
    printer("|---|---|---|---|---|---:|---:|---:|")
    for loop in loops:
        for shape in shapes:
            if shape != "cpu" and loop in CPU_SHAPE_ONLY:
                continue
            base = {"loop": loop, "shape": shape, "variant": loop, "config": "", "torch": torch.__version__}
            try:
                cases = BUILDERS[loop](shape, dev, quick)
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                cases = []
                rows.append(
                    {
                        **base,
                        "device": device_name(dev),
                        "seconds_per_step": None,
                        "steps": 0,
                        "peak_cuda_mib": None,
                        "error": f"{type(e).__name__}: {e}",
                    }
                )
                printer(fmt_row(rows[-1]))
            for case in cases:
                row = {**base, "variant": case.variant, "config": case.config, "device": device_name(dev)}
                try:
                    sec, n, peak = measure(case, dev, quick, target)
                    row.update(seconds_per_step=sec, steps=n, peak_cuda_mib=peak)
                except Exception as e:  # noqa: BLE001
                    traceback.print_exc()
                    row.update(seconds_per_step=None, steps=0, peak_cuda_mib=None, error=f"{type(e).__name__}: {e}")
                rows.append(row)
                printer(fmt_row(row))
                if out is not None:
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_text(json.dumps(rows, indent=1) + "\n")
            del cases
            if dev.type == "cuda":
                torch.cuda.empty_cache()
    return rows


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    ap.add_argument(
        "--threads", type=int, default=2, help="torch CPU threads (also for the CPU-only loops on a GPU machine)"
    )
    ap.add_argument(
        "--only", nargs="+", choices=LOOPS, default=list(LOOPS), metavar="NAME", help=f"loops: {' '.join(LOOPS)}"
    )
    ap.add_argument("--shapes", nargs="+", choices=SHAPES, default=None, help="default: both (--quick: cpu)")
    ap.add_argument(
        "--quick", action="store_true", help="CPU smoke check: cpu shapes, one timed step, DC/DSA loops (2, 5)"
    )
    ap.add_argument("--target-seconds", type=float, default=3.0, help="about how long each timed measurement runs")
    ap.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    ap.add_argument("--count", action="store_true", help="count operators and FLOPs per step on the CPU (no timing)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.count:
        shapes = args.shapes or list(SHAPES)
        return count_all(args.only, shapes, args.quick, args.out, printer=lambda s: print(s, flush=True))
    if args.device == "auto":
        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        dev = torch.device(args.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        ap.error("--device cuda but CUDA is not available")
    shapes = args.shapes or (["cpu"] if args.quick else list(SHAPES))
    print(
        f"torch {torch.__version__}, device {device_name(dev)}, {torch.get_num_threads()} CPU threads, "
        f"loops {' '.join(args.only)}, shapes {' '.join(shapes)}{', quick' if args.quick else ''}",
        flush=True,
    )
    t0 = time.perf_counter()
    rows = run_all(
        args.only, shapes, dev, args.quick, args.target_seconds, args.out, printer=lambda s: print(s, flush=True)
    )
    bad = forbidden_modules()
    print(
        f"\n{len(rows)} rows in {time.perf_counter() - t0:.0f} s; pipeline-only modules imported: {bad or 'none'}"
        + (f"; written {args.out}" if args.out else ""),
        flush=True,
    )
    return rows


if __name__ == "__main__":
    main()
