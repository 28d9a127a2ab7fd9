from compendium.pipeline.schemas import DD_DATASET, DD_EVAL, DD_HARD, SEED_MAX, dataset_problems
from compendium.pipeline.spec import Param

SECTION = "dd_kip"
DATA = ("fashion-mnist",)
SCHEMA = {
    **DD_DATASET,
    **DD_EVAL,
    **DD_HARD,
    "kernels": Param(
        "list[str]", "kernels: fc (= ntk), nngp, rbf", nonempty=True, choices=("fc", "ntk", "nngp", "rbf")
    ),
    "depth": Param("int", "hidden layers of the fully-connected kernels", low=0, high=20),
    "rbf_gamma": Param("float", "RBF gamma (exp(-gamma |x - z|^2 / d))", low=1e-6, high=1e6),
    "reg": Param("float", "KRR ridge (relative to the mean diagonal)", low=0.0, high=1.0),
    "iterations": Param("int", "KIP Adam steps", low=1, high=100000),
    "target_batch": Param("int", "KIP target batch", low=10, high=60000),
    "lr": Param("float", "KIP Adam learning rate", low=0.0, high=10.0),
    "p_corrupt": Param("list[float]", "KIP_p corruption fractions (0: plain KIP)", low=0.0, high=0.99, nonempty=True),
    "ls_target": Param("int", "LS target set size", low=10, high=60000),
    "krr_seeds": Param(
        "list[int]",
        "seeds of the KIP and LS syntheses compared by KRR (each draws the real images KIP starts from and LS labels)",
        low=0,
        high=SEED_MAX,
        nonempty=True,
    ),
}


def check(values: dict) -> list[str]:
    """A non-shipped dataset needs ``data_root`` (before any compute)."""
    return dataset_problems(values)
