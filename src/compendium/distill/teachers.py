"""Teachers ("squeeze", SRe2L/DWA Sec. 2): a network trained on the whole real training set, saved with
what is needed to rebuild it; it is also the whole-dataset upper bound of its architecture and the
observer of RDED, the relabeller of SRe2L/RDED/DWA/ReLA and the inverted model of SRe2L/DWA.

A teacher file holds only what an identical rerun reproduces (no timings, dates, hosts or process ids
in its ``record``: :func:`compendium.core.volatile.volatile_keys`), so it is byte-identical across identical runs and a
rerun of
``dd_teachers`` leaves the distillation stages that read ``models/teachers/`` up to date. The stage's
timings go to ``reports/timings/dd_teachers.json`` (a DVC output no stage depends on).

On ImageNet-1K the papers do not train their teachers: SRe2L and DWA invert torchvision's pretrained ResNet-18
(``IMAGENET1K_V1``), G-VBSM adds MobileNet-V2 and ShuffleNetV2 0.5x. :func:`import_torchvision` loads such a file
from a local folder (nothing downloads) into this library's architecture of the same name, so every stage reads
it like a trained teacher."""

from __future__ import annotations

import copy
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from compendium.core import data, volatile
from compendium.core.device import pick_device
from compendium.distill import evaluate as E


class TeacherError(FileNotFoundError):
    """A missing or unreadable teacher file."""


#: The dataset a teacher file without a ``dataset`` entry was trained on (the shipped default).
DEFAULT_DATASET = "fashion-mnist"


def save(
    model: nn.Sequential,
    path: str | Path,
    cfg: E.EvalConfig,
    image_shape,
    num_classes: int,
    mean,
    std,
    record: dict,
    dataset: str = DEFAULT_DATASET,
) -> Path:
    """Write the teacher to ``path`` (atomically: a temporary file of the same stem, then a rename):
    architecture, input shape, normalisation, ``record`` (how it was trained and its test accuracy)
    and the weights. Identical arguments give a byte-identical file (``torch.save`` of the same
    tensors under the same file stem is byte-stable), so ``record`` must not hold timings, dates,
    hosts or process ids (:func:`compendium.core.volatile.volatile_keys`; a :class:`ValueError` names them): the stage
    reports
    those in ``reports/timings/dd_teachers.json``. ``dataset`` is stored only when it is not
    :data:`DEFAULT_DATASET` (so a Fashion-MNIST teacher's file does not change)."""
    path = Path(path)
    bad = volatile.volatile_keys(record)
    if bad:
        raise ValueError(
            f"teachers.save({path}): the record's {bad} differ between identical runs and would change "
            f"{path}, which the distillation stages depend on; leave them out of `record` and write "
            "them to reports/timings/dd_teachers.json instead"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save(
        {
            "arch": cfg.arch,
            "arch_kwargs": dict(cfg.arch_kwargs),
            "image_shape": list(image_shape),
            "num_classes": int(num_classes),
            "mean": list(mean),
            "std": list(std),
            "record": dict(record),
            **({} if dataset == DEFAULT_DATASET else {"dataset": dataset}),
            "state": model.state_dict(),
        },
        tmp,
    )
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
        raise TeacherError(
            f"{path} was trained on {d['dataset']!r}, not {dataset!r}: set the same `dataset` in "
            "dd_teachers and in this stage, and rerun dd_teachers"
        )
    cfg = E.EvalConfig(arch=d["arch"], arch_kwargs=d["arch_kwargs"])
    net = E.build_student(cfg, tuple(d["image_shape"]), d["num_classes"])
    net.load_state_dict(d["state"])
    meta = {k: v for k, v in d.items() if k != "state"}
    return net.eval(), meta


@dataclass(frozen=True)
class TorchvisionWeights:
    """A torchvision ImageNet-1K checkpoint this library can load: its file name as torchvision distributes it,
    the ``models.build`` keyword arguments of the same network at 224 px, and how its keys map to
    :func:`compendium.distill.evaluate.build_student`'s (``(torchvision prefix, our prefix)`` pairs; the first match
    wins)."""

    file: str
    arch_kwargs: dict
    prefixes: tuple[tuple[str, str], ...]


_RESNET_KEYS = (("fc.", "1."), ("", "0.body."))
#: The teachers the papers take pretrained on ImageNet-1K (torchvision's ``IMAGENET1K_V1`` files): SRe2L's and
#: DWA's ResNet-18, and G-VBSM's MobileNet-V2 and ShuffleNetV2 0.5x.
TORCHVISION: dict[str, TorchvisionWeights] = {
    "resnet18": TorchvisionWeights("resnet18-f37072fd.pth", {"width_mult": 1.0, "stem": "imagenet"}, _RESNET_KEYS),
    "mobilenet_v2": TorchvisionWeights(
        "mobilenet_v2-b0353104.pth", {"width_mult": 1.0}, (("classifier.1.", "1."), ("features.", "0.body.0."))
    ),
    "shufflenet_v2": TorchvisionWeights(
        "shufflenetv2_x0.5-f707e7126e.pth", {"stages_out_channels": [24, 48, 96, 192, 1024]}, _RESNET_KEYS
    ),
}


def _map_key(key: str, prefixes: tuple[tuple[str, str], ...]) -> str:
    for theirs, ours in prefixes:
        if key.startswith(theirs):
            return ours + key[len(theirs) :]
    return key


def _check_torchvision_hash(path: Path) -> None:
    """torchvision names its files ``<name>-<first hex digits of the SHA-256>.pth``: a file under such a name
    whose digest does not start with them is truncated or another file (a :class:`TeacherError`)."""
    m = re.search(r"-([0-9a-f]{8,})\.pth$", path.name)
    if not m:
        return
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    if not h.hexdigest().startswith(m.group(1)):
        raise TeacherError(
            f"{path}: its SHA-256 does not start with {m.group(1)}, as torchvision's file of that name "
            "does (truncated or another file); copy torchvision's file again"
        )


def import_torchvision(
    arch: str, path: str | Path, image_size: int = 224, num_classes: int = 1000
) -> tuple[nn.Sequential, E.EvalConfig]:
    """A torchvision ImageNet-1K checkpoint (:data:`TORCHVISION`) loaded into this library's ``arch`` (eval mode,
    CPU) with the :class:`EvalConfig` that rebuilds it (what :func:`save` stores). Every key must match in name
    and shape; a missing, corrupt or mismatched file raises a :class:`TeacherError` naming it. Example::

        net, cfg = import_torchvision("resnet18", "../weights/resnet18-f37072fd.pth")
        save(net, "models/teachers/resnet18.pt", cfg, (3, 224, 224), 1000, data.IMAGENET_MEAN,
             data.IMAGENET_STD, {"imported": "resnet18-f37072fd.pth"}, "imagenet")
    """
    if arch not in TORCHVISION:
        raise ValueError(f"no torchvision ImageNet-1K weights are known for {arch!r}; known: {sorted(TORCHVISION)}")
    tv, path = TORCHVISION[arch], Path(path)
    if not path.is_file():
        raise TeacherError(
            f"no torchvision weights at {path} (teacher {arch}): put torchvision's ImageNet-1K file "
            f"{tv.file} there (nothing is downloaded; it is the file torchvision keeps under "
            "~/.cache/torch/hub/checkpoints/), or leave the teacher out of `imported_teachers` to train it"
        )
    _check_torchvision_hash(path)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001
        raise TeacherError(f"{path} is not a readable torchvision checkpoint ({type(e).__name__}: {e})") from e
    state = state.get("state_dict", state) if isinstance(state, dict) else state
    if not isinstance(state, dict):
        raise TeacherError(f"{path}: expected a state dict, got {type(state).__name__}")
    mapped = {_map_key(k, tv.prefixes): v for k, v in state.items()}
    cfg = E.EvalConfig(arch=arch, arch_kwargs=dict(tv.arch_kwargs))
    net = E.build_student(cfg, (3, image_size, image_size), num_classes)
    ours = net.state_dict()
    missing, extra = sorted(set(ours) - set(mapped)), sorted(set(mapped) - set(ours))
    wrong = sorted(k for k in set(ours) & set(mapped) if ours[k].shape != mapped[k].shape)
    if missing or extra or wrong:
        raise TeacherError(
            f"{path} does not fit {arch} with {num_classes} classes: missing {missing[:4]}, "
            f"unexpected {extra[:4]}, other shapes {wrong[:4]} (is it torchvision's {tv.file}?)"
        )
    net.load_state_dict(mapped)
    return net.eval(), cfg


def save_imported(
    arch: str,
    weights_dir: str | Path,
    path: str | Path,
    test_images_u8: torch.Tensor,
    test_labels: torch.Tensor,
    num_classes: int,
    mean,
    std,
    dataset: str = "imagenet",
) -> tuple[nn.Sequential, float]:
    """``dd_teachers``' imported teacher: torchvision's file of ``arch`` in ``weights_dir``
    (:func:`import_torchvision`, at the test images' size), its top-1 accuracy on the test split, saved to ``path``
    as a teacher (its record: the file's name and that accuracy). Returns the network and the accuracy."""
    file = Path(weights_dir) / TORCHVISION[arch].file if arch in TORCHVISION else Path(weights_dir)
    net, cfg = import_torchvision(arch, file, test_images_u8.shape[-1], num_classes)
    acc = E.top1_accuracy(net, test_images_u8, test_labels, mean, std)
    save(
        net,
        path,
        cfg,
        tuple(test_images_u8.shape[1:]),
        num_classes,
        mean,
        std,
        {"imported": file.name, "test_acc": acc},
        dataset,
    )
    return net, acc


def teacher_data(
    meta: dict, dataset: str, data_root: str | Path = "", resolution: int = 0, train_per_class: int = 0
) -> tuple[data.ImageDataset, data.ImageDataset]:
    """The training and test splits a stage reads beside a teacher (:func:`compendium.core.data.train_test`), with a
    :class:`TeacherError` when their images are not the size the teacher (``meta`` from :func:`load`) was made
    for: a stage of the chain that reads an ImageNet-style folder at another ``resolution`` than ``dd_teachers``."""
    tr, te = data.train_test(dataset, data_root, resolution, train_per_class)[:2]
    want = list(meta.get("image_shape", tr.images.shape[1:]))
    if list(tr.images.shape[1:]) != want:
        raise TeacherError(
            f"the teacher takes {want} images, but {dataset!r} is read as {list(tr.images.shape[1:])}: "
            "set the same `resolution` in this stage as in dd_teachers (and rerun dd_teachers after "
            "changing it there)"
        )
    return tr, te


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
    out = torch.cat([backbone(images[i : i + batch_size]).float() for i in range(0, len(images), batch_size)])
    backbone.train(was)
    return out
