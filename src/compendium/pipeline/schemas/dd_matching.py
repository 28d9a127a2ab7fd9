from compendium.pipeline.schemas import DD_DATASET, DD_EVAL, DD_HARD, dataset_problems
from compendium.distill.methods.matching import METHODS
from compendium.pipeline.spec import Param

SECTION = "dd_matching"
DATA = ("fashion-mnist",)
SCHEMA = {
    **DD_DATASET,
    **DD_EVAL,
    **DD_HARD,
    "methods": Param(
        "list[str]", "matching methods (the family's registered methods)", nonempty=True, choices=tuple(METHODS)
    ),
    "width": Param("int", "ConvNet width of the matching networks (instance norm)", low=4, high=1024),
    "iterations": Param(
        "int",
        f"DC/DSA outer iterations ({METHODS['dc'].settings['iterations'].value} in the papers)",
        low=1,
        high=100000,
    ),
    "dm_iterations": Param(
        "int", f"DM iterations ({METHODS['dm'].settings['iterations'].value} in the paper)", low=1, high=100000
    ),
    "loops_ipc10": Param("list[int]", "DC/DSA (outer, inner) loops at ipc 10 (the code: 10, 50)", low=1, high=1000),
    "loops_ipc50": Param("list[int]", "DC/DSA (outer, inner) loops at ipc 50 (the code: 50, 10)", low=1, high=1000),
    "batch_real": Param("int", "real images per class per matching step (256 in the code)", low=1, high=6000),
    "dsa_eval": Param("bool", "evaluate DSA and DM sets with DSA augmentation (as their papers)"),
}


def check(values: dict) -> list[str]:
    """A non-shipped dataset needs ``data_root``; each method's configuration at each ipc passes the method's own
    checks (before any compute)."""
    shared = {**values, "dsa_strategy": "the dataset's"}  # the stage derives the strategy from the dataset
    return dataset_problems(values) + [p for m in values["methods"] for p in METHODS[m].stage_problems(shared)]
