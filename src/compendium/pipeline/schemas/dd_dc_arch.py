from compendium.pipeline.schemas import DD_DATASET, DD_HARD, DD_RUN, dataset_problems
from compendium.pipeline.spec import Param

SECTION = "dd_dc_arch"
DATA = ("fashion-mnist",)
SCHEMA = {
    **DD_DATASET,
    **DD_RUN,
    **DD_HARD,
    "ipc": Param("int", "images per class", low=1, high=1000),
    "variants": Param(
        "list[str]",
        "ConvNet variants (must include default)",
        nonempty=True,
        choices=("default", "sigmoid", "leaky_relu", "max_pool", "no_norm", "batch_norm", "layer_norm", "group_norm"),
    ),
    "width": Param("int", "ConvNet width (condensing and training)", low=4, high=1024),
    "iterations": Param("int", "DC outer iterations (1000 in the paper)", low=1, high=100000),
    "loops": Param(
        "list[int]", "DC (outer, inner) loops (the code: 1, 1 at ipc 1; 10, 50 at ipc 10)", low=1, high=1000
    ),
    "batch_real": Param("int", "real images per class per matching step (256 in the code)", low=1, high=6000),
    "dsa": Param(
        "bool",
        "condense DSA with the default ConvNet too (shown on the page; DSA's ipc-1 claim is judged from dd_regime's "
        "DSA runs)",
    ),
    "coresets": Param(
        "list[str]",
        "dd_coresets' sets at `ipc` evaluated beside DC's default set (DC's Table 1 cell)",
        choices=(
            "random",
            "herding (teacher)",
            "k_center (teacher)",
            "forgetting",
            "herding (prior)",
            "k_center (prior)",
            "kmeans",
            "average",
        ),
    ),
}


def check(values: dict) -> list[str]:
    """DC (Zhao et al., ICLR 2021)'s architecture ablation compares every variant with DC's default
    ConvNet, so the default must be among the variants; a non-shipped dataset needs ``data_root``."""
    errs = dataset_problems(values)
    if "default" not in values["variants"]:
        errs.append(
            f"variants: {values['variants']} must include 'default' (DC's ConvNet, the reference of every variant)"
        )
    return errs
