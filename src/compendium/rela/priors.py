"""Prior models for ReLA-D: where the targets come from (camera-ready §4.1).

A prior is named by a spec string:

* ``rand:<arch>`` (or ``rand``: the student's own architecture): a seeded random initialisation
  (the paper's "Rand."). In the released code the cache of random targets ignored the seed and the
  architecture; here both are part of the key (:func:`cache_key`).
* ``trained:<path>``: a checkpoint written by a pipeline stage with :func:`save_backbone` (a
  state_dict plus the constructor's arguments in a JSON sidecar), e.g. BYOL on Fashion-MNIST. A
  relative path is looked up under ``models/`` first (``trained:priors/fmnist_supervised.pt``).
  Both files hold only what an identical rerun reproduces (no timings, dates, hosts or process ids:
  :func:`compendium.core.volatile.volatile_keys`), so they are byte-identical across identical runs and a rerun of the
  stage
  that writes them leaves the stages that read them up to date. A stage's timings go to its
  ``reports/timings/<stage>.json`` (a DVC output no stage depends on).
* ``torchvision:<arch>@<file>``: a torchvision classification model (``resnet18``, ``resnet50``, ...)
  with weights from a local state_dict file; the classifier is dropped.
* ``open_clip:<model>@<file>``: an OpenCLIP image encoder with weights from a local file (needs
  the ``open_clip_torch`` package; not a dependency of this compendium).

Nothing downloads at run time: a missing file is a :class:`PriorError` naming it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from compendium.core import models, paths, volatile
from compendium.core.prior_roles import ROLE, TRAINED_ROLES, role_problem, trained_names, trained_specs  # noqa: F401


class PriorError(RuntimeError):
    """A prior cannot be built: unknown kind, missing or incompatible weights."""


@dataclass
class Prior:
    """A frozen feature extractor with the input size and normalisation it expects."""

    name: str
    model: nn.Module
    feature_dim: int
    input_size: int
    in_channels: int
    mean: tuple[float, ...]
    std: tuple[float, ...]


IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)

#: The kinds of prior a spec string may name (module docstring).
KINDS = ("rand", "trained", "torchvision", "open_clip")
#: The roles of the trained priors the ``priors`` stage makes, each after a dataset (camera-ready Table 1's columns:
#: the strong prior, the same-dataset prior, BYOL* on D, and the cross-dataset one).
_SPEC_FORMS = "rand, rand:<arch>, trained:<file>, role:<role>, torchvision:<arch>@<file> or open_clip:<model>@<file>"


def spec_problem(spec: str) -> str | None:
    """Why ``spec`` does not name a prior, or None. Only the form is checked (the kind, the backbone
    of ``rand:<arch>``, the parts of the others): that the files exist is checked before the stage
    trains anything (:func:`compendium.rela.experiment.check_priors`)."""
    if str(spec).startswith(ROLE):  # a trained prior by its role, resolved with the parameters
        return role_problem(spec)
    kind, sep, rest = str(spec).partition(":")
    if kind not in KINDS:
        return f"{spec!r}: unknown prior kind {kind!r}; a prior is {_SPEC_FORMS}"
    if kind == "rand" and sep and rest not in models.BACKBONES:
        return f"{spec!r}: no backbone {rest!r} (known: {sorted(models.BACKBONES)})"
    if kind == "trained" and not rest.strip():
        return f"{spec!r}: trained: needs the checkpoint's file (trained:priors/<name>.pt)"
    if kind in ("torchvision", "open_clip"):
        name, at, file = rest.partition("@")
        if not (name and at and file):
            return f"{spec!r}: a {kind} prior is {kind}:<{'arch' if kind == 'torchvision' else 'model'}>@<weights file>"
    return None


def save_backbone(
    backbone: models.Backbone,
    path: Path,
    arch: str,
    kwargs: dict,
    mean,
    std,
    input_size: int,
    train: dict | None = None,
) -> None:
    """Write ``<path>`` (state_dict) and ``<path>.json`` (how to rebuild it) for ``trained:`` priors.
    ``train``: how it was trained (method, epochs, batch size, ...), so that a stage can reuse it as
    the run it would otherwise repeat (BYOL* seed 0 is the same-dataset prior).

    Identical arguments give byte-identical files (``torch.save`` of the same tensors to the same
    file name is byte-stable; the JSON is key-sorted), so an identical rerun changes nothing that a
    downstream stage depends on. Hence ``train`` must not hold timings, dates, hosts or process ids
    (:func:`compendium.core.volatile.volatile_keys`; a :class:`ValueError` names them): the stage reports those in
    ``reports/timings/<stage>.json``."""
    path = Path(path)
    bad = volatile.volatile_keys(train or {})
    if bad:
        raise ValueError(
            f"save_backbone({path}): the train record's {bad} differ between identical runs and would "
            f"change {path}.json, which downstream stages depend on; leave them out of `train` and "
            "write them to the stage's reports/timings/<stage>.json instead"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(backbone.state_dict(), path)
    meta = {"arch": arch, "kwargs": kwargs, "mean": list(mean), "std": list(std), "input_size": input_size}
    if train is not None:
        meta["train"] = train
    Path(f"{path}.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")


def _frozen(model: nn.Module) -> nn.Module:
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def _local_file(spec: str, file: str) -> Path:
    p = paths.resolve(file)
    if not p.is_file():
        raise PriorError(
            f"prior {spec!r}: weights file {p} is missing (priors are never downloaded at run "
            "time; put the file there or change the prior in params.yaml)"
        )
    return p


def _trained_file(spec: str, file: str) -> Path:
    """``trained:`` paths: absolute as is; relative ones under ``models/`` (a stage's artifacts, see
    :func:`compendium.core.paths.find_artifact`), else relative to the repository root."""
    if not Path(file).is_absolute():
        art = paths.find_artifact(file)
        if art.is_file():
            return art
        if not paths.resolve(file).is_file():
            raise PriorError(
                f"prior {spec!r}: weights file {art} is missing; it is written by the stage that "
                "trains this prior (run `dvc repro`), or give an absolute path"
            )
    return _local_file(spec, file)


def load(
    spec: str,
    *,
    student_arch: str | None = None,
    student_kwargs: dict | None = None,
    seed: int = 0,
    mean=None,
    std=None,
) -> Prior:
    """Build the prior named by ``spec`` (see the module docstring)."""
    kind, _, rest = spec.partition(":")
    if kind == "rand":
        arch = rest or student_arch
        if arch is None:
            raise PriorError("prior 'rand' needs the student's architecture (or 'rand:<arch>')")
        kw = dict(student_kwargs or {})
        torch.manual_seed(seed)
        bb = models.build(arch, **kw)
        return Prior(
            f"rand:{arch}",
            _frozen(bb),
            bb.feature_dim,
            kw.get("image_size", 32),
            kw.get("in_channels", 3),
            tuple(mean or (0.5,)),
            tuple(std or (0.5,)),
        )
    if kind == "trained":
        p = _trained_file(spec, rest)
        meta_file = Path(f"{p}.json")
        if not meta_file.is_file():
            raise PriorError(f"prior {spec!r}: {meta_file} (how to rebuild the backbone) is missing")
        meta = json.loads(meta_file.read_text())
        bb = models.build(meta["arch"], **meta["kwargs"])
        try:
            bb.load_state_dict(torch.load(p, map_location="cpu", weights_only=True))
        except RuntimeError as e:
            raise PriorError(f"prior {spec!r}: the weights in {p} do not fit {meta['arch']}: {e}") from e
        return Prior(
            spec,
            _frozen(bb),
            bb.feature_dim,
            meta["input_size"],
            meta["kwargs"].get("in_channels", 3),
            tuple(meta["mean"]),
            tuple(meta["std"]),
        )
    if kind == "torchvision":
        arch, _, file = rest.partition("@")
        import torchvision

        if not hasattr(torchvision.models, arch):
            raise PriorError(f"prior {spec!r}: torchvision has no model {arch!r}")
        p = _local_file(spec, file)
        net = getattr(torchvision.models, arch)(weights=None)
        try:
            net.load_state_dict(torch.load(p, map_location="cpu", weights_only=True))
        except RuntimeError as e:
            raise PriorError(f"prior {spec!r}: the weights in {p} do not fit torchvision's {arch}: {e}") from e
        dim = _drop_classifier(net)
        return Prior(spec, _frozen(net), dim, 224, 3, IMAGENET_MEAN, IMAGENET_STD)
    if kind == "open_clip":
        model_name, _, file = rest.partition("@")
        p = _local_file(spec, file)
        try:
            import open_clip
        except ImportError as e:
            raise PriorError(f"prior {spec!r} needs the open_clip_torch package (pip install open_clip_torch)") from e
        clip, _, _ = open_clip.create_model_and_transforms(model_name, pretrained=str(p))
        visual = clip.visual
        size = visual.image_size[0] if isinstance(visual.image_size, (tuple, list)) else visual.image_size
        # the ReLA code normalises CLIP's input with ImageNet statistics; we do the same
        return Prior(spec, _frozen(_CLIPImage(clip)), clip.visual.output_dim, size, 3, IMAGENET_MEAN, IMAGENET_STD)
    raise PriorError(f"unknown prior kind {kind!r} in {spec!r}; use rand, trained, torchvision or open_clip")


class _CLIPImage(nn.Module):
    def __init__(self, clip):
        super().__init__()
        self.clip = clip

    def forward(self, x):
        return self.clip.encode_image(x)


def _drop_classifier(net: nn.Module) -> int:
    for attr in ("fc", "classifier", "heads", "head"):
        if hasattr(net, attr):
            head = getattr(net, attr)
            linear = (
                head if isinstance(head, nn.Linear) else next(m for m in head.modules() if isinstance(m, nn.Linear))
            )
            setattr(net, attr, nn.Identity())
            return linear.in_features
    raise PriorError(f"cannot find the classifier of {type(net).__name__}")


def cache_key(spec: str, dataset: str, seed: int, **options) -> str:
    """A file-name-safe key for cached targets: the prior, the dataset, the seed and every option."""
    text = json.dumps({"prior": spec, "dataset": dataset, "seed": seed, **options}, sort_keys=True)
    short = "".join(c if c.isalnum() else "-" for c in spec)[:40]
    return f"{dataset}_{short}_s{seed}_{hashlib.sha1(text.encode()).hexdigest()[:10]}"
