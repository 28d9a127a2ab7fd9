"""One module per pipeline stage: ``SECTION`` (its params.yaml section and notebook name),
``SCHEMA`` (its keys, see :class:`compendium.pipeline.spec.Param`) and ``DATA`` (the shipped datasets it
reads, checked before the notebook starts); optionally ``check(values) -> list[str]``, the stage's
checks across keys on the resolved values (each problem names its key and the fix), also run before
the notebook starts.

What every stage shares lives here and imports no family's code, so that a change to one family's library
stales only the stages that run it; what only the ReLA stages share (their SSL methods, lambda schedules and
priors, read from the ReLA and SSL wings) is in :mod:`compendium.pipeline.schemas._rela`. A module whose
name starts with ``_`` is shared, not a stage's."""

from compendium.core import data
from compendium.pipeline.spec import Param


#: The largest seed a stage accepts: 2**31 - 1, which NumPy, PyTorch and Python's random all take.
SEED_MAX = 2**31 - 1

DATASETS = ("fashion-mnist", "mnist", "cifar10", "cifar100", "tiny-imagenet", "imagenet", "imagenette")

# Which dataset D is (the ReLA experiment stages and the priors stage).
DATASET = {
    "dataset": Param(
        "str",
        "D: fashion-mnist (shipped) or a dataset read from data_root (must match the priors stage)",
        choices=DATASETS,
    ),
    "data_root": Param(
        "str", "folder holding the non-shipped datasets (relative to the project root); '' for the shipped ones"
    ),
}

# The dataset of a labelled-distillation stage (``dd_*``): the papers' own at ``scale: paper``.
DD_DATASET = {
    "dataset": Param(
        "str",
        "the dataset: fashion-mnist (shipped) or one read from data_root (the papers: mnist, cifar10, "
        "...); the same in every stage whose sets or teachers this one reads",
        choices=DATASETS,
    ),
    "data_root": Param(
        "str", "folder holding the non-shipped datasets (relative to the project root); '' for the shipped ones"
    ),
}


# How an ImageNet-style folder (tiny-imagenet, imagenet, imagenette) is read by the stages of the DWA chain: ImageNet-1K
# at 224 px does not fit in memory whole, so its training split is a per-class pool (the papers' teachers come
# pretrained; the pool serves the real-image references, initialisations and random subsets).
IMAGE_FOLDER = {
    "resolution": Param(
        "int",
        "decoded size of an ImageNet-style folder, both splits (0: the reader's own: 64 px for "
        "tiny-imagenet / imagenet, 128 for imagenette; 224: ImageNet-1K as SRe2L and DWA); the same in "
        "every stage of the chain",
        low=0,
        high=512,
    ),
    "train_per_class": Param(
        "int",
        "training images kept per class of an ImageNet-style folder, the first in sorted "
        "order (0: all); the same in every stage of the chain",
        low=0,
        high=1300,
    ),
}


def dataset_problems(values: dict) -> list[str]:
    """A dataset that is not shipped needs ``data_root`` (checked before any compute)."""
    name = values.get("dataset", "fashion-mnist")
    if name not in data.SHIPPED and not values.get("data_root"):
        return [
            f"data_root: dataset {name!r} is not shipped with the compendium; set `data_root` (params.yaml, "
            f"this section) to the folder that holds it (e.g. the folder with cifar-10-batches-py/), or use "
            f"dataset: fashion-mnist"
        ]
    return []


# The keys every ReLA experiment stage shares (compendium.rela.experiment.Setup and the Conv-3 student).
PROTOCOL = {
    "width": Param("int", "Conv-3 width of the student (must match the priors stage)", low=4, high=1024),
    "depth": Param("int", "ConvNet depth (must match the priors stage)", low=1, high=6),
    "norm": Param(
        "str",
        "normalisation layer (must match the priors stage)",
        choices=("batch", "instance", "group", "layer", "none"),
    ),
    "global_pool": Param("bool", "globally pooled features (must match the priors stage)"),
    "epochs": Param("int", "epochs of the full (100%) budget; a budget r trains r of its steps", low=1, high=1000),
    "batch_size": Param("int", "pre-training batch size", low=8, high=16_384),
    "lr": Param("float", "AdamW learning rate (constant, as the code)", low=0.0, high=1.0),
    "weight_decay": Param("float", "AdamW weight decay", low=0.0, high=1.0),
    "head_mult": Param("float", "width multiplier of the projection/prediction heads", low=0.01, high=4.0),
    "rela_code_extras": Param("bool", "the code's colour jitter and grayscale in ReLA's weak views"),
    "probe_train": Param("int", "images of D the linear probe trains on (0: all)", low=0, high=2_000_000),
    "probe_standardize": Param(
        "bool", "z-score the frozen features before the probe (false: the paper's raw features)"
    ),
    "probe_epochs": Param("int", "linear-probe epochs", low=1, high=1000),
    "probe_batch_size": Param("int", "linear-probe batch size", low=1, high=16_384),
    "probe_lr": Param("float", "linear-probe Adam learning rate", low=0.0, high=1.0),
    "workers": Param(
        "int", "single-threaded worker processes (0: run in the notebook's process, for a GPU)", low=0, high=64
    ),
    "device": Param("str", "auto (CUDA when present), cpu or cuda", choices=("auto", "cpu", "cuda")),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}

# The evaluation keys shared by the labeled-distillation stages (compendium.distill.evaluate).
DD_RUN = {
    "seeds": Param("list[int]", "evaluation seeds (a fresh student per seed)", low=0, high=SEED_MAX, nonempty=True),
    "eval_steps": Param("int", "optimiser steps of every student", low=1, high=100_000),
    "eval_batch": Param("int", "student batch size", low=1, high=4096),
    "eval_lr": Param("float", "student AdamW learning rate (cosine)", low=0.0, high=1.0),
    "test_n": Param("int", "class-balanced test images every student is tested on (0: all 10,000)", low=0, high=10_000),
    "workers": Param("int", "single-threaded worker processes (0: in the notebook's process)", low=0, high=64),
    "device": Param("str", "auto (CUDA when present), cpu or cuda", choices=("auto", "cpu", "cuda")),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}
# Stages whose sets carry hard labels: their students' own batch size (a reduction of ours).
DD_HARD = {
    "eval_batch_hard": Param(
        "int",
        "batch size of the hard-label students (cpu: 32, within seed noise of 64 for hard "
        "labels and half the cost; online-teacher students keep eval_batch)",
        low=1,
        high=4096,
    ),
}
DD_EVAL = {
    **DD_RUN,
    "ipcs": Param("list[int]", "images per class", low=1, high=1000, nonempty=True),
    "eval_width": Param("int", "width of the Conv-3 student (BatchNorm)", low=4, high=1024),
}
