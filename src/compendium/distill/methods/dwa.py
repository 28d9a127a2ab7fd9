"""DWA: diversity-driven weight adjustment (Du et al., NeurIPS 2024): SRe2L's recovery from real images, the
variance term of the batch-norm loss decoupled (r_var), and before each batch the teacher's weights moved K
ascent steps within a norm rho (arm G of its Table 3). The implementation is
:func:`compendium.distill.inversion.dwa_synthesize`."""

from __future__ import annotations

from compendium.distill import inversion
from compendium.distill.methods.sre2l import SRe2L, recovery


class DWA(SRe2L):
    name = "dwa"

    stage_keys = {"r_var": "dwa_r_var"}

    def config(self, ipc: int, values: dict) -> dict:
        """The shared recovery with the stage's ``rho``, ``K`` and variance weight ``dwa_r_var``."""
        return {**recovery(values), "rho": values["rho"], "K": values["K"], "r_var": float(values["dwa_r_var"])}

    def problems(self, ipc: int, cfg: dict) -> list[str]:
        found = super().problems(ipc, cfg)
        if cfg.get("weight_adjust", "directed") == "directed" and not (
            isinstance(cfg.get("K", 12), int) and cfg.get("K", 12) >= 1
        ):
            found.append(f"K: must be >= 1, got {cfg.get('K')!r}")
        return found + ([] if cfg.get("rho", 0.015) >= 0 else [f"rho: must be >= 0, got {cfg.get('rho')!r}"])

    def run(self, pool, ipc, teacher, **cfg):
        return inversion.dwa_synthesize(teacher, pool.images, pool.labels, ipc, pool.mean, pool.std, **cfg)
