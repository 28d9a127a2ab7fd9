from compendium.pipeline.schemas import DD_DATASET, DD_EVAL, DD_HARD, dataset_problems
from compendium.pipeline.spec import Param

SECTION = "dd_matching"
DATA = ("fashion-mnist",)
SCHEMA = {
    **DD_DATASET,
    **DD_EVAL,
    **DD_HARD,
    "methods": Param("list[str]", "matching methods", nonempty=True, choices=("dc", "dsa", "dm")),
    "width": Param("int", "ConvNet width of the matching networks (instance norm)", low=4, high=1024),
    "iterations": Param("int", "DC/DSA outer iterations (1000 in the papers)", low=1, high=100000),
    "dm_iterations": Param("int", "DM iterations (20000 in the paper)", low=1, high=100000),
    "loops_ipc10": Param("list[int]", "DC/DSA (outer, inner) loops at ipc 10 (the code: 10, 50)", low=1, high=1000),
    "loops_ipc50": Param("list[int]", "DC/DSA (outer, inner) loops at ipc 50 (the code: 50, 10)", low=1, high=1000),
    "batch_real": Param("int", "real images per class per matching step (256 in the code)", low=1, high=6000),
    "dsa_eval": Param("bool", "evaluate DSA and DM sets with DSA augmentation (as their papers)"),
}


def check(values: dict) -> list[str]:
    """A non-shipped dataset needs ``data_root`` (before any compute)."""
    return dataset_problems(values)
