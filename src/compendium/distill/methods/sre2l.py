"""SRe2L: squeeze, recover and relabel (Yin, Xing & Shen, NeurIPS 2023): images recovered from noise against a
trained teacher's batch-norm statistics, then relabelled by the teacher (arm C of DWA's Table 3). The
implementation is :func:`compendium.distill.inversion.sre2l_synthesize`."""

from __future__ import annotations

from compendium.distill import inversion
from compendium.distill.methods.base import DistillMethod


def recovery(values: dict) -> dict:
    """The keyword arguments the recovery methods share: ``iterations`` Adam steps at ``lr`` (cosine), the
    random-roll ``jitter``, ``classes_per_batch`` (0: all classes in one batch), crop and flip on the
    ImageNet-style datasets (:func:`~compendium.distill.inversion.recovery_augmentation`), seed 0."""
    dataset = values.get("dataset", "fashion-mnist")
    return dict(
        iterations=values["iterations"],
        lr=values["lr"],
        jitter=values["jitter"],
        seed=values.get("seed", 0),
        dataset=dataset,
        classes_per_batch=values.get("classes_per_batch") or None,
        **inversion.recovery_augmentation(dataset),
    )


def recovery_problems(cfg: dict) -> list[str]:
    it, lr = cfg.get("iterations"), cfg.get("lr")
    found = [] if isinstance(it, int) and it >= 0 else [f"iterations: must be >= 0, got {it!r}"]
    return found + ([] if isinstance(lr, (int, float)) and lr > 0 else [f"lr: must be > 0, got {lr!r}"])


class SRe2L(DistillMethod):
    name, family = "sre2l", "inversion"
    needs_teacher = True

    def config(self, ipc: int, values: dict) -> dict:
        return recovery(values)

    def problems(self, ipc: int, cfg: dict) -> list[str]:
        return recovery_problems(cfg)

    def run(self, pool, ipc, teacher, **cfg):
        return inversion.sre2l_synthesize(teacher, pool.images, pool.labels, ipc, pool.mean, pool.std, **cfg)
