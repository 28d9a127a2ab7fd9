"""Teachers ("squeeze", SRe2L/DWA Sec. 2): a network trained on the whole real training set, saved with
what is needed to rebuild it; it is also the whole-dataset upper bound of its architecture and the
observer of RDED, the relabeller of SRe2L/RDED/DWA/ReLA and the inverted model of SRe2L/DWA.

A teacher file holds only what an identical rerun reproduces (no timings, dates, hosts or process ids
in its ``record``: :func:`compendium.core.volatile.volatile_keys`), so it is byte-identical across identical runs and a rerun of
``dd_teachers`` leaves the distillation stages that read ``models/teachers/`` up to date. The stage's
timings go to ``reports/timings/dd_teachers.json`` (a DVC output no stage depends on)."""

from __future__ import annotations

import copy
from pathlib import Path

import torch
from torch import nn

from compendium.core import volatile
from compendium.core.device import pick_device
from compendium.distill import evaluate as E


class TeacherError(FileNotFoundError):
    """A missing or unreadable teacher file."""


#: The dataset a teacher file without a ``dataset`` entry was trained on (the shipped default).
DEFAULT_DATASET = "fashion-mnist"


def save(model: nn.Sequential, path: str | Path, cfg: E.EvalConfig, image_shape, num_classes: int, mean, std,
         record: dict, dataset: str = DEFAULT_DATASET) -> Path:
    """Write the teacher to ``path`` (atomically: a temporary file of the same stem, then a rename):
    architecture, input shape, normalisation, ``record`` (how it was trained and its test accuracy)
    and the weights. Identical arguments give a byte-identical file (``torch.save`` of the same
    tensors under the same file stem is byte-stable), so ``record`` must not hold timings, dates,
    hosts or process ids (:func:`compendium.core.volatile.volatile_keys`; a :class:`ValueError` names them): the stage reports
    those in ``reports/timings/dd_teachers.json``. ``dataset`` is stored only when it is not
    :data:`DEFAULT_DATASET` (so a Fashion-MNIST teacher's file does not change)."""
    path = Path(path)
    bad = volatile.volatile_keys(record)
    if bad:
        raise ValueError(f"teachers.save({path}): the record's {bad} differ between identical runs and would change "
                         f"{path}, which the distillation stages depend on; leave them out of `record` and write "
                         "them to reports/timings/dd_teachers.json instead")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save({"arch": cfg.arch, "arch_kwargs": dict(cfg.arch_kwargs), "image_shape": list(image_shape),
                "num_classes": int(num_classes), "mean": list(mean), "std": list(std), "record": dict(record),
                **({} if dataset == DEFAULT_DATASET else {"dataset": dataset}), "state": model.state_dict()}, tmp)
    tmp.replace(path)
    return path


def load(path: str | Path, dataset: str | None = None) -> tuple[nn.Sequential, dict]:
    """The teacher (eval mode, CPU) and its metadata (arch, kwargs, normalisation, training record,
    ``dataset``); with ``dataset``, a :class:`TeacherError` when the teacher was trained on another one."""
    path = Path(path)
    if not path.is_file():
        raise TeacherError(f"no teacher at {path}: the `dd_teachers` stage trains it (run `dvc repro dd_teachers`)")
    try:
        d = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001
        raise TeacherError(f"{path} is not a readable teacher ({type(e).__name__}: {e})") from e
    d.setdefault("dataset", DEFAULT_DATASET)
    if dataset is not None and d["dataset"] != dataset:
        raise TeacherError(f"{path} was trained on {d['dataset']!r}, not {dataset!r}: set the same `dataset` in "
                           "dd_teachers and in this stage, and rerun dd_teachers")
    cfg = E.EvalConfig(arch=d["arch"], arch_kwargs=d["arch_kwargs"])
    net = E.build_student(cfg, tuple(d["image_shape"]), d["num_classes"])
    net.load_state_dict(d["state"])
    meta = {k: v for k, v in d.items() if k != "state"}
    return net.eval(), meta


def synthesis_device(device: str = "auto", workers: int = 0) -> torch.device:
    """Where a stage's syntheses run: ``device`` (``auto``: CUDA when present) when they run in the stage's own
    process (``workers`` 0, as the paper profile runs them), the CPU in worker processes."""
    return torch.device("cpu") if workers else pick_device(device)


def synthesis_copy(model: nn.Module, device: str = "auto", workers: int = 0) -> nn.Module:
    """The network a synthesis runs on: in the stage's own process a copy on :func:`synthesis_device`, so that
    recovery runs on the GPU while the caller's teacher stays on the CPU; in worker processes the model itself."""
    if workers:
        return model
    return copy.deepcopy(model).to(synthesis_device(device, workers))


@torch.no_grad()
def features(teacher: nn.Sequential, images: torch.Tensor, batch_size: int = 1024) -> torch.Tensor:
    """The teacher backbone's features (before the linear head) of normalised float images."""
    backbone = teacher[0]
    was = backbone.training
    backbone.eval()
    out = torch.cat([backbone(images[i:i + batch_size]).float() for i in range(0, len(images), batch_size)])
    backbone.train(was)
    return out
