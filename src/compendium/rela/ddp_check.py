"""A tiny DistributedDataParallel run to prove the training loop under ``torchrun``.

``torchrun --nproc_per_node 2 -m compendium.rela.ddp_check OUT_DIR`` trains BYOL+ReLA on random
images for a few steps (gloo on CPU, NCCL on GPUs) and writes each rank's final parameters to
``OUT_DIR/rank<k>.pt``; the test checks that the ranks agree.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from compendium.core import models
from compendium.core.device import init_distributed
from compendium.rela import schedule as rela_schedule
from compendium.ssl import methods, train


def views(x, g):
    flip = torch.rand(x.shape[0], generator=g, device=x.device) < 0.5
    return torch.where(flip.view(-1, 1, 1, 1), x.flip(-1), x), x + 0.05 * torch.randn(
        x.shape, generator=g, device=x.device
    )


def main(argv=None) -> int:
    out = Path((argv or sys.argv[1:])[0])
    rank, world = init_distributed()
    torch.manual_seed(0)
    images = torch.randint(0, 256, (64, 1, 12, 12), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))
    model = methods.ReLA(
        methods.build("byol", models.convnet(1, 12, width=8, depth=2, norm="batch"), head_mult=1 / 32), 4
    )
    sched = rela_schedule.make("epochs", w=0.5, epochs=2)
    cfg = train.PretrainConfig(epochs=2, batch_size=16, device="cpu" if not torch.cuda.is_available() else "auto")
    hist = train.pretrain(
        model,
        images,
        cfg,
        views,
        0.5,
        0.25,
        targets=torch.randn(64, 4, generator=torch.Generator().manual_seed(1)),
        schedule=sched,
    )
    out.mkdir(parents=True, exist_ok=True)
    torch.save(
        {"params": [p.detach().cpu() for p in model.parameters()], "world": world, "steps": len(hist.steps)},
        out / f"rank{rank}.pt",
    )
    if world > 1:
        torch.distributed.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
