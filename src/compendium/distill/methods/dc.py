"""DC: dataset condensation with gradient matching (Zhao, Mopuri & Bilen, ICLR 2021, Algorithm 1):
synthetic images whose training gradients on fresh networks match those of real batches, class by class.
The implementation is :func:`compendium.distill.matching.synthesis.dc_synthesize`."""

from __future__ import annotations

from compendium.distill.matching import synthesis
from compendium.distill.methods.base import DistillMethod


def matching_network(values: dict) -> dict:
    """The keyword arguments the matching family shares: the ConvNet of 3 blocks with instance norm at the stage's
    ``width`` (DC's and DM's default network), the real images per class per step, the device, seed 0."""
    return dict(
        arch_kwargs={"width": values["width"], "depth": 3, "norm": "instance"},
        batch_real=values["batch_real"],
        seed=values.get("seed", 0),
        dataset=values.get("dataset", "fashion-mnist"),
        device=values.get("device", "cpu"),
    )


class DC(DistillMethod):
    name, family = "dc", "matching"
    stage_keys = {"outer_loop": "loops_ipc10 / loops_ipc50", "inner_loop": "loops_ipc10 / loops_ipc50"}

    def config(self, ipc: int, values: dict) -> dict:
        """``iterations`` outer iterations with the (outer, inner) loops of the ipc: 1 at ipc 1, ``loops_ipc10``
        at ipc 10 and any other ipc, ``loops_ipc50`` at ipc 50 (DC's code has its own table for 20-40)."""
        o, i = {1: (1, 1), 10: tuple(values["loops_ipc10"]), 50: tuple(values["loops_ipc50"])}.get(
            ipc, tuple(values["loops_ipc10"])
        )
        return {
            **matching_network(values),
            "iterations": values["iterations"],
            "outer_loop": o,
            "inner_loop": i,
            "dsa_strategy": None,  # DC matches without augmentation; DSA (its subclass) with a strategy
        }

    def problems(self, ipc: int, cfg: dict) -> list[str]:
        return [
            f"{k}: must be >= 1, got {cfg.get(k)!r}"
            for k in ("iterations", "outer_loop", "inner_loop")
            if not isinstance(cfg.get(k), int) or cfg[k] < 1
        ]

    def run(self, pool, ipc, teacher, **cfg):
        return synthesis.dc_synthesize(pool.images, pool.labels, ipc, pool.num_classes, pool.mean, pool.std, **cfg)
