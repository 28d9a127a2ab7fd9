"""DM: dataset condensation with distribution matching (Zhao & Bilen, WACV 2023): synthetic images whose mean
embedding under fresh random networks matches the real class's. The implementation is
:func:`compendium.distill.matching.synthesis.dm_synthesize` (the code's ``main_DM.py`` defaults)."""

from __future__ import annotations

from compendium.distill.matching import synthesis
from compendium.distill.methods.base import DistillMethod
from compendium.distill.methods.dc import matching_network


class DM(DistillMethod):
    name, family = "dm", "matching"
    dsa_evaluation = True

    stage_keys = {"iterations": "dm_iterations"}

    def config(self, ipc: int, values: dict) -> dict:
        """``dm_iterations`` iterations on the shared matching network (DSA's full strategy, DM's default)."""
        return {**matching_network(values), "iterations": values["dm_iterations"]}

    def problems(self, ipc: int, cfg: dict) -> list[str]:
        it = cfg.get("iterations")
        return [] if isinstance(it, int) and it >= 1 else [f"iterations: must be >= 1, got {it!r}"]

    def run(self, pool, ipc, teacher, **cfg):
        return synthesis.dm_synthesize(pool.images, pool.labels, ipc, pool.num_classes, pool.mean, pool.std, **cfg)
