"""Benchmarks of the library (not timed tests): ``python benchmarks/bench_library.py [--quick]``.

1. SSL training throughput, end to end (augmentation included), of this library's loop (batched
   augmentation on the device, channels_last, optional torch.compile) against the lightly-style
   pipeline of the same model: per-sample PIL transforms in a 2-worker DataLoader. Also the achieved
   GFLOP/s of the step (FLOPs counted by torch.utils.flop_counter) as a fraction of the measured fp32
   GEMM peak.
2. ReLA-D target generation time divided by the time of one training epoch on the same data (the
   paper: the synthesis costs no more than one epoch of inference).
3. Peak memory of target generation at 1x and 10x the dataset size, net of the input images and the
   output targets, streaming (two passes) against holding the raw features (one pass). Each size runs
   in a fresh process so that ru_maxrss is its own.

Results go to stdout and to ``build/benchmarks/bench_library.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import torch

from compendium.core import augment, data, models, paths
from compendium.rela import priors, targets
from compendium.ssl import train
from compendium.ssl import methods as M

MEAN, STD = data.FASHION_MNIST_MEAN, data.FASHION_MNIST_STD


def gemm_peak(n: int = 2048, reps: int = 10) -> float:
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * n**3 * reps / (time.perf_counter() - t) / 1e9


def student(width: int):
    torch.manual_seed(0)
    return M.build("byol", models.convnet(1, 28, width=width, depth=3, norm="batch", global_pool=True))


def step_flops(width: int, batch: int) -> float:
    from torch.utils.flop_counter import FlopCounterMode

    m = student(width)
    x1, x2 = torch.randn(batch, 1, 28, 28), torch.randn(batch, 1, 28, 28)
    with FlopCounterMode(display=False) as fc:
        loss, _ = m(x1, x2)
        loss.backward()
    return float(fc.get_total_flops())


def ours(images, width, batch, steps, compile_):
    m = student(width)
    cfg = train.PretrainConfig(
        epochs=1,
        batch_size=batch,
        budget=min(1.0, steps * batch / len(images)),
        device="cpu",
        compile=compile_,
        log_prefix="ours",
    )
    views = augment.preset("byol", size=28)
    if compile_:  # compile outside the timed epoch
        train.pretrain(
            student(width),
            images[: 4 * batch],
            train.PretrainConfig(epochs=1, batch_size=batch, device="cpu", compile=True, log_prefix="warm-up"),
            views,
            MEAN,
            STD,
        )
    h = train.pretrain(m, images, cfg, views, MEAN, STD)
    return h.epochs[0]["images"] / h.epochs[0]["seconds"]


class _PILDataset(torch.utils.data.Dataset):
    def __init__(self, images):
        import torchvision.transforms as T

        self.images = images
        view = T.Compose(
            [
                T.RandomResizedCrop(28),
                T.RandomHorizontalFlip(),
                T.RandomApply([T.ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8),
                T.RandomGrayscale(0.2),
                T.RandomSolarize(128, p=0.1),
                T.ToTensor(),
                T.Normalize((MEAN,), (STD,)),
            ]
        )
        self.view = view

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        from PIL import Image

        img = Image.fromarray(self.images[i, 0].numpy(), mode="L")
        return self.view(img), self.view(img)


def lightly_style(images, width, batch, steps, workers=2):
    m = student(width)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.01)
    loader = torch.utils.data.DataLoader(
        _PILDataset(images),
        batch_size=batch,
        shuffle=True,
        num_workers=workers,
        drop_last=True,
        persistent_workers=False,
    )
    it = iter(loader)
    next(it)  # workers started
    t, n = time.perf_counter(), 0
    for _ in range(steps):
        v1, v2 = next(it)
        loss, _ = m(v1, v2)
        opt.zero_grad()
        loss.backward()
        opt.step()
        m.momentum_update(0.99)
        n += len(v1)
    return n / (time.perf_counter() - t)


def memory_child(n_images: int, store: bool, width: int) -> None:
    """Run in a fresh process: make targets for n_images and print the peak RSS numbers."""
    torch.set_num_threads(2)
    base = data.load_fashion_mnist("train").images
    reps = -(-n_images // len(base))
    images = base.repeat(reps, 1, 1, 1)[:n_images].contiguous()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    p = priors.load(
        "rand:convnet",
        student_kwargs=dict(in_channels=1, image_size=28, width=width, depth=3, norm="batch", global_pool=False),
        mean=(MEAN,),
        std=(STD,),
    )
    t = targets.make_targets(p, images, 32, batch_size=512, store_features=store)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(
        json.dumps(
            {
                "n": n_images,
                "store_features": store,
                "rss_before_mb": before / 2**20,
                "peak_mb": peak / 2**20,
                "growth_mb": (peak - before) / 2**20,
                "output_mb": t.values.numel() * 4 / 2**20,
                "feature_dim": p.feature_dim,
                "seconds": t.seconds["total"],
            }
        )
    )


def memory_runs(args) -> list[dict]:
    """3. peak memory at 1x and 10x the dataset, each in a fresh process."""
    mem = []
    for n in (60000, 600000):
        for store in (False, True):
            r = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--memory-child",
                    str(n),
                    "1" if store else "0",
                    "--mem-width",
                    str(args.mem_width),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            mem.append(json.loads(r.stdout.strip().splitlines()[-1]))
            print(mem[-1], flush=True)
    return mem


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer steps (a minute or two)")
    ap.add_argument("--width", type=int, default=32)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--compile", action="store_true", help="also time the library under torch.compile")
    ap.add_argument("--memory-child", nargs=2, metavar=("N", "STORE"))
    ap.add_argument("--mem-width", type=int, default=8, help="prior width of the memory runs (memory, not speed)")
    ap.add_argument("--only-memory", action="store_true")
    args = ap.parse_args()
    if args.memory_child:
        memory_child(int(args.memory_child[0]), args.memory_child[1] == "1", args.mem_width)
        return
    torch.set_num_threads(2)
    steps = 15 if args.quick else 40
    images = data.load_fashion_mnist("train").images
    out = {"threads": torch.get_num_threads(), "width": args.width, "batch": args.batch}
    if args.only_memory:
        out["memory"] = memory_runs(args)
        return
    out["gemm_peak_gflops"] = gemm_peak()
    flops = step_flops(args.width, args.batch)
    out["step_gflop"] = flops / 1e9
    out["lightly_style_img_s"] = lightly_style(images, args.width, args.batch, steps)
    out["ours_eager_img_s"] = ours(images, args.width, args.batch, steps, False)
    if args.compile:
        out["ours_compiled_img_s"] = ours(images, args.width, args.batch, steps, True)
    best = max(out.get("ours_compiled_img_s", 0), out["ours_eager_img_s"])
    out["speedup"] = best / out["lightly_style_img_s"]
    out["achieved_gflops"] = best / args.batch * flops / 1e9
    out["fraction_of_gemm_peak"] = out["achieved_gflops"] / out["gemm_peak_gflops"]
    print(json.dumps(out, indent=1), flush=True)

    # 2. target generation vs one epoch (flattened Conv-3 features, 288-d, as a ReLA-D prior)
    p = priors.load(
        "rand:convnet",
        student_kwargs=dict(in_channels=1, image_size=28, width=args.width, depth=3, norm="batch", global_pool=False),
        mean=(MEAN,),
        std=(STD,),
    )
    t = targets.make_targets(p, images, 32, batch_size=512)
    epoch_s = len(images) / best
    out["targets_seconds"] = t.seconds["total"]
    out["epoch_seconds_at_best_throughput"] = epoch_s
    out["targets_over_epoch"] = t.seconds["total"] / epoch_s
    print(
        f"targets {t.seconds['total']:.1f} s for {len(images)} images; one BYOL epoch {epoch_s:.1f} s "
        f"-> ratio {out['targets_over_epoch']:.2f}",
        flush=True,
    )

    out["memory"] = memory_runs(args)
    dest = paths.BUILD / "benchmarks" / "bench_library.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(out, indent=1) + "\n")
    print(f"written {dest}")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    main()
