"""DSA: gradient matching under differentiable Siamese augmentation (Zhao & Bilen, ICML 2021): DC's loop with
the same augmentation drawn for the real and the synthetic batch of a class; evaluated with that augmentation.
The implementation is DC's, :func:`compendium.distill.matching.synthesis.dc_synthesize` with a strategy."""

from __future__ import annotations

from compendium.distill.methods.dc import DC


class DSA(DC):
    name = "dsa"
    dsa_evaluation = True

    def config(self, ipc: int, values: dict) -> dict:
        """DC's configuration with the stage's ``dsa_strategy`` (the dataset's default strategy)."""
        return {**super().config(ipc, values), "dsa_strategy": values["dsa_strategy"]}

    def problems(self, ipc: int, cfg: dict) -> list[str]:
        missing = (
            []
            if cfg.get("dsa_strategy")
            else ["dsa_strategy: DSA needs one (e.g. 'color_crop_cutout_flip_scale_rotate')"]
        )
        return super().problems(ipc, cfg) + missing
