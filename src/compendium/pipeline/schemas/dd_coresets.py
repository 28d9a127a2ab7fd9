from compendium.pipeline.schemas import IMAGE_FOLDER, DD_DATASET, DD_EVAL, DD_HARD, dataset_problems
from compendium.pipeline.spec import Param

SECTION = "dd_coresets"
DATA = ("fashion-mnist",)
SCHEMA = {
    **DD_DATASET,
    **IMAGE_FOLDER,
    **DD_EVAL,
    **DD_HARD,
    "methods": Param(
        "list[str]",
        "coresets and simple baselines",
        nonempty=True,
        choices=("random", "herding", "k_center", "forgetting", "kmeans", "kmeans_nearest", "average"),
    ),
    "feature_spaces": Param(
        "list[str]", "feature spaces of herding and k-center", nonempty=True, choices=("teacher", "prior")
    ),
    "forgetting_epochs": Param("int", "epochs of the network that records forgetting events (>= 2)", low=2, high=200),
    "pool_n": Param(
        "int",
        "training images the methods choose from (at least the training set's size: all of it)",
        low=100,
        high=2_000_000,
    ),
    "rela_students": Param(
        "list[str]", "students of ReLA's labeled-distillation cells", nonempty=True, choices=("convnet", "resnet18")
    ),
    "eval_resnet_width_mult": Param("float", "ResNet-18 student width multiplier", low=0.01, high=4.0),
    "eval_resnet_stem_stride": Param(
        "int", "stride of the ResNet-18 student's 3x3 stem (1 at paper scale)", choices=(1, 2)
    ),
    "temperature": Param("float", "temperature of the online teacher labels", low=0.01, high=100.0),
    "rela_steps": Param(
        "int",
        "optimiser steps of ReLA's students (teacher labels) and their ceiling: dd_inversion's "
        "eval_steps, so ReLA Table 5 shares SRe2L's and RDED's evaluation",
        low=1,
        high=100_000,
    ),
}


def check(values: dict) -> list[str]:
    """A non-shipped dataset needs ``data_root``; the teacher whose features and labels the methods use is read
    with the same ``dataset`` (``dd_teachers``), which the notebook checks against the teacher file."""
    return dataset_problems(values)
