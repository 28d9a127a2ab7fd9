"""The contract every labelled distillation method keeps, in the shape of solo-learn's method classes: one
class per method (one file), registered in its family's ``METHODS`` (one line), called one way.

A method declares its name, its label in tables, the paper it follows and that paper's settings (each once,
with where it says so), whether it distils against a trained teacher, and how a stage's parameters become its
own configuration (:meth:`DistillMethod.config`). :meth:`DistillMethod.synthesize` checks that configuration
(:meth:`DistillMethod.problems`) before any compute and returns a
:class:`~compendium.distill.sets.DistilledSet`.

Example (a method of the dd_matching family, on a toy pool)::

    >>> import torch
    >>> from compendium.distill.methods import matching
    >>> pool = Pool(torch.randint(0, 256, (20, 1, 8, 8), dtype=torch.uint8), torch.arange(20) % 2, (0.5,), (0.25,))
    >>> dm = matching.METHODS["dm"]
    >>> cfg = dm.config(1, {"dm_iterations": 2, "width": 4, "batch_real": 4})
    >>> dm.synthesize(pool, 1, **cfg).images.shape
    torch.Size([2, 1, 8, 8])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import nn

from compendium.distill.methods.papers import PAPERS, PaperSetting
from compendium.distill.sets import DistilledSet


@dataclass(frozen=True)
class Pool:
    """The real training images a method distils from: ``images`` uint8 N x C x H x W, ``labels`` int64 [N], the
    normalisation (``mean``, ``std``), the class count (default: the largest label + 1) and the dataset's name."""

    images: torch.Tensor
    labels: torch.Tensor
    mean: tuple[float, ...]
    std: tuple[float, ...]
    num_classes: int = 0
    dataset: str = "fashion-mnist"

    def __post_init__(self) -> None:
        if not self.num_classes:
            object.__setattr__(self, "num_classes", int(self.labels.max()) + 1)


class DistillMethod:
    """A labelled distillation method. Subclasses set the class attributes and implement :meth:`config` and
    :meth:`run`; :meth:`problems` adds the method's own checks to the shared ones. A method named in
    :data:`~compendium.distill.methods.papers.PAPERS` takes its label, paper and settings from there."""

    def __init_subclass__(cls, **kw) -> None:
        super().__init_subclass__(**kw)
        paper = PAPERS.get(cls.__dict__.get("name", ""))
        if paper is not None:
            for attr, value in (("label", paper.label), ("paper", paper.cite), ("settings", paper.settings)):
                if attr not in cls.__dict__:
                    setattr(cls, attr, value)

    name: ClassVar[str]  # the key in params.yaml's ``methods`` lists and in set file names
    label: ClassVar[str]  # the name in tables and figures
    paper: ClassVar[str]  # the paper the method follows
    family: ClassVar[str]  # the stage that synthesises it (its set files: distilled/<family>/<name>_ipc<k>.pt)
    needs_teacher: ClassVar[bool] = False  # distils against a trained teacher (passed to synthesize)
    dsa_evaluation: ClassVar[bool] = False  # its paper trains the evaluation students with DSA augmentation
    #: The paper's settings of the method's own loop and optimiser, by the configuration key that takes them.
    settings: ClassVar[dict[str, PaperSetting]] = {}
    #: Configuration key -> the stage key that sets it, where the names differ (so a problem names the stage key).
    stage_keys: ClassVar[dict[str, str]] = {}

    def config(self, ipc: int, values: dict) -> dict:
        """This method's keyword arguments for one synthesis of ``ipc`` images per class, from a stage's
        ``values`` (its parameters and what the stage derived from them: the device, the DSA strategy)."""
        raise NotImplementedError

    def problems(self, ipc: int, cfg: dict) -> list[str]:
        """What is wrong with ``cfg`` for this method (empty when nothing), found before any compute; each problem
        begins with the configuration key it concerns (``"key: ..."``)."""
        return []

    def stage_problems(self, values: dict) -> list[str]:
        """What is wrong with a stage's ``values`` for this method, at each of its ``ipcs``, each problem naming the
        stage key (:attr:`stage_keys`): the schema's check calls this before any compute (a method whose
        configuration needs run-time inputs overrides it)."""
        found: dict[str, list[int]] = {}
        for ipc in values["ipcs"]:
            for p in self.problems(ipc, self.config(ipc, values)):
                key, _, rest = p.partition(": ")
                found.setdefault(f"{self.stage_keys.get(key, key)}: {rest}", []).append(ipc)
        return [f"{p} ({self.name} at ipc {', '.join(map(str, ipcs))})" for p, ipcs in found.items()]

    def run(self, pool: Pool, ipc: int, teacher: nn.Module | None, **cfg) -> DistilledSet:
        raise NotImplementedError

    def synthesize(self, pool: Pool, ipc: int, teacher: nn.Module | None = None, **cfg) -> DistilledSet:
        """The distilled set of ``ipc`` images per class of ``pool`` (``teacher``: the trained network the
        method distils against, where it needs one). The configuration is checked first."""
        found = list(self.problems(ipc, cfg))
        if int(ipc) != ipc or ipc < 1:
            found.append(f"ipc must be a positive integer, got {ipc!r}")
        if self.needs_teacher and teacher is None:
            found.append("it distils against a trained teacher: pass teacher=")
        if found:
            raise ValueError(f"{self.name}: " + "; ".join(found))
        return self.run(pool, int(ipc), teacher, **cfg)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.paper})"


def registry(*methods: DistillMethod) -> dict[str, DistillMethod]:
    """A family's ``METHODS``: name -> method, in the given order; a repeated name or a missing attribute is
    refused."""
    out: dict[str, DistillMethod] = {}
    for m in methods:
        missing = [a for a in ("name", "label", "paper", "family") if not getattr(m, a, None)]
        if missing:
            raise TypeError(f"{type(m).__name__} does not declare {missing}")
        if m.name in out:
            raise ValueError(f"two methods are named {m.name!r}")
        out[m.name] = m
    return out
