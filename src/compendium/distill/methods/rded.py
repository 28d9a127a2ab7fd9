"""RDED: realistic and diverse dataset distillation (Sun et al., CVPR 2024): the real crops a teacher scores as
most realistic, stitched into full images and relabelled by the teacher. The implementation is
:func:`compendium.distill.inversion.rded_synthesize`."""

from __future__ import annotations

from compendium.distill import inversion
from compendium.distill.methods.base import DistillMethod


class RDED(DistillMethod):
    name, family = "rded", "inversion"
    needs_teacher = True

    stage_keys = {"factor": "rded_factor", "images_per_class": "rded_images_per_class"}

    def config(self, ipc: int, values: dict) -> dict:
        return dict(
            factor=values["rded_factor"],
            images_per_class=values["rded_images_per_class"],
            seed=values.get("seed", 0),
            dataset=values.get("dataset", "fashion-mnist"),
        )

    def problems(self, ipc: int, cfg: dict) -> list[str]:
        f, n = cfg.get("factor"), cfg.get("images_per_class")
        found = [] if isinstance(f, int) and f >= 1 else [f"factor: must be an integer >= 1, got {f!r}"]
        if not (isinstance(n, int) and n >= 1):
            found.append(f"images_per_class: must be >= 1, got {n!r}")
        elif isinstance(f, int) and f >= 1 and n < ipc * f * f:  # each crop of an image from another scored image
            found.append(
                f"images_per_class: {n} < ipc * factor^2 = {ipc * f * f} crops to "
                "choose from; raise it or lower ipcs / rded_factor"
            )
        return found

    def run(self, pool, ipc, teacher, **cfg):
        return inversion.rded_synthesize(pool.images, pool.labels, teacher, ipc, pool.mean, pool.std, **cfg)
