"""G-VBSM: generalized various backbone and statistical matching (Shao et al., CVPR 2024): recovery against
the batch-norm and convolution statistics of several backbones in turn, relabelled by the teacher. The
implementation is :func:`compendium.distill.gvbsm.gvbsm_synthesize`; the backbones and their convolution
statistics of the real images (:func:`compendium.distill.gvbsm.conv_statistics`) come with the configuration."""

from __future__ import annotations

from compendium.distill import gvbsm
from compendium.distill.methods.base import DistillMethod


class GVBSM(DistillMethod):
    name, family = "gvbsm", "inversion"
    needs_teacher = True  # the relabelling teacher

    def config(self, ipc: int, values: dict) -> dict:
        """``gvbsm_iterations`` at ``gvbsm_lr``, with the stage's ``backbones`` and their ``conv_stats``, the
        class count and the crop padding of the dataset's evaluation crop."""
        return dict(
            backbones=values["backbones"],
            conv_stats=values["conv_stats"],
            iterations=values["gvbsm_iterations"],
            lr=values["gvbsm_lr"],
            seed=values.get("seed", 0),
            dataset=values.get("dataset", "fashion-mnist"),
            num_classes=values["num_classes"],
            crop_padding=values["crop_padding"],
        )

    def problems(self, ipc: int, cfg: dict) -> list[str]:
        b, s = cfg.get("backbones") or (), cfg.get("conv_stats") or ()
        found = (
            []
            if len(b) >= 1 and len(b) == len(s)
            else [f"backbones: needs one or more, each with its convolution statistics, got {len(b)} and {len(s)}"]
        )
        it = cfg.get("iterations")
        return found + ([] if isinstance(it, int) and it >= 1 else [f"iterations: must be >= 1, got {it!r}"])

    def stage_problems(self, values: dict) -> list[str]:
        """The stage's iteration count (the backbones and their statistics are made at run time)."""
        it = values["gvbsm_iterations"]
        return [] if isinstance(it, int) and it >= 1 else [f"gvbsm_iterations: must be >= 1, got {it!r} (gvbsm)"]

    def run(self, pool, ipc, teacher, *, backbones, conv_stats, **cfg):
        return gvbsm.gvbsm_synthesize(
            backbones, conv_stats, pool.images, pool.labels, ipc, pool.mean, pool.std, relabel_teacher=teacher, **cfg
        )
