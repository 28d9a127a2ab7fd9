from ..params import P
from . import DD_EVAL, DD_HARD

SECTION = "dd_matching"
DATA = ("fashion-mnist",)
SCHEMA = {
    **DD_EVAL,
    **DD_HARD,
    "methods": P("list[str]", "matching methods", nonempty=True, choices=("dc", "dsa", "dm")),
    "width": P("int", "ConvNet width of the matching networks (instance norm)", low=4, high=1024),
    "iterations": P("int", "DC/DSA outer iterations (1000 in the papers)", low=1, high=100000),
    "dm_iterations": P("int", "DM iterations (20000 in the paper)", low=1, high=100000),
    "loops_ipc10": P("list[int]", "DC/DSA (outer, inner) loops at ipc 10 (the code: 10, 50)", low=1, high=1000),
    "loops_ipc50": P("list[int]", "DC/DSA (outer, inner) loops at ipc 50 (the code: 50, 10)", low=1, high=1000),
    "batch_real": P("int", "real images per class per matching step (256 in the code)", low=1, high=6000),
    "dsa_eval": P("bool", "evaluate DSA and DM sets with DSA augmentation (as their papers)"),
}
