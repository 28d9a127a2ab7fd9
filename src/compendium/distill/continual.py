"""Class-incremental learning with a distilled memory (DWA Appendix A.2.4 / Table 10; DC's continual
learning experiment): GDumb (Prabhu, Torr & Dokania, ECCV 2020) keeps a class-balanced memory and, after
each task, trains a fresh model from scratch on the memory of every class seen so far, then tests on
the test images of those classes. With a distilled set as the memory, task t's learner is a student
trained on the set restricted to the first t class groups, with its labels (and the teacher's logits,
for online relabelling) restricted to the seen classes, so no unseen class leaks in.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import torch
from torch import nn

from compendium.distill.sets import DistilledSet


def task_classes(num_classes: int, tasks: int, order: Sequence[int] | None = None) -> list[tuple[int, ...]]:
    """The classes seen after each of ``tasks`` equal tasks (cumulative): for 10 classes and 5 tasks,
    (0, 1), (0, 1, 2, 3), ... in ``order`` (default 0..C-1)."""
    order = list(range(num_classes)) if order is None else [int(c) for c in order]
    if sorted(order) != list(range(num_classes)):
        raise ValueError(f"order must be a permutation of 0..{num_classes - 1}, got {order}")
    if tasks < 1 or num_classes % tasks:
        raise ValueError(f"{num_classes} classes do not split into {tasks} equal tasks")
    step = num_classes // tasks
    return [tuple(order[: step * (t + 1)]) for t in range(tasks)]


class ClassSubset(nn.Module):
    """A classifier's logits restricted to ``classes`` (in that order): the teacher of a task that has
    seen only those classes."""

    def __init__(self, model: nn.Module, classes: Sequence[int]):
        super().__init__()
        self.model = model
        self.register_buffer("index", torch.as_tensor(list(classes), dtype=torch.long), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x).index_select(1, self.index.to(x.device))


def _remap(labels: torch.Tensor, classes: Sequence[int], num_classes: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(mask of labels in ``classes``, their index in ``classes``)."""
    lut = torch.full((num_classes,), -1, dtype=torch.long)
    lut[torch.as_tensor(list(classes), dtype=torch.long)] = torch.arange(len(classes))
    new = lut[labels]
    return new >= 0, new


def seen_view(
    dset: DistilledSet, classes: Sequence[int], teacher: nn.Module | None = None
) -> tuple[DistilledSet, nn.Module | None]:
    """The memory after a task: the images of ``classes``, labels renumbered 0..k-1 in that order (soft
    labels restricted and renormalised), and the teacher restricted to the same classes."""
    classes = [int(c) for c in classes]
    if len(set(classes)) != len(classes) or not classes or min(classes) < 0 or max(classes) >= dset.num_classes:
        raise ValueError(f"classes must be distinct labels in [0, {dset.num_classes}), got {classes}")
    keep, new = _remap(dset.labels, classes, dset.num_classes)
    if int(keep.sum()) == 0:
        raise ValueError(f"the set {dset.method!r} has no image of classes {classes}")
    soft = None
    if dset.soft_labels is not None:
        s = dset.soft_labels[keep][:, classes]
        soft = s / s.sum(1, keepdim=True).clamp_min(1e-12)
    src = dset.source_index[keep] if dset.source_index is not None else None
    view = dataclasses.replace(
        dset,
        images=dset.images[keep],
        labels=new[keep],
        num_classes=len(classes),
        params={**dset.params, "classes": classes},
        soft_labels=soft,
        source_index=src,
    )
    return view, (ClassSubset(teacher, classes) if teacher is not None else None)


def test_view(
    images: torch.Tensor, labels: torch.Tensor, classes: Sequence[int], num_classes: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The test images of ``classes`` with labels renumbered as :func:`seen_view`."""
    num_classes = int(labels.max()) + 1 if num_classes is None else num_classes
    keep, new = _remap(labels, classes, num_classes)
    return images[keep], new[keep]


def class_prefix(dset: DistilledSet, ipc: int) -> DistilledSet:
    """The first ``ipc`` images of every class of ``dset`` (in their order), as an ipc-``ipc`` set: the memory
    of DWA's Table 10 (Du et al., NeurIPS 2024), where every ipc index of an SRe2L / DWA set is an
    independent batch, so the prefix is itself a set of that ipc."""
    keep = torch.cat([torch.nonzero(dset.labels == c).flatten()[:ipc] for c in range(dset.num_classes)]).sort().values
    return DistilledSet(
        dset.images[keep],
        dset.labels[keep],
        dset.num_classes,
        dset.mean,
        dset.std,
        dset.method,
        dset.dataset,
        {**dset.params, "ipc": ipc},
        dset.seed,
    )
