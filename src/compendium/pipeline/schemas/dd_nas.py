from compendium.pipeline.schemas import DD_DATASET, DD_RUN, SEED_MAX, dataset_problems
from compendium.pipeline.spec import Param

SECTION = "dd_nas"
DATA = ("fashion-mnist",)
SCHEMA = {
    **DD_DATASET,
    **{k: DD_RUN[k] for k in ("workers", "dpi")},
    "nas_n": Param(
        "int",
        "ConvNets sampled from the search space (its 144 architectures: width, depth, activation, "
        "normalisation, pooling)",
        low=2,
        high=144,
    ),
    "nas_seed": Param("int", "seed of the search-space sample", low=0, high=SEED_MAX),
    "gt_steps": Param("int", "AdamW steps of each architecture on the whole training set", low=1, high=1_000_000),
    "gt_batch": Param("int", "batch size of the ground-truth training", low=1, high=4096),
    "gt_lr": Param("float", "AdamW learning rate (cosine) of the ground-truth training", low=0.0, high=1.0),
    "test_n": Param(
        "int", "class-balanced test images each architecture is tested on (0: all 10,000)", low=0, high=10_000
    ),
}


def check(values: dict) -> list[str]:
    """The NAS studies of DC (Zhao et al., ICLR 2021), DSA (Zhao & Bilen, ICML 2021) and GTN (Such et al., ICML
    2020) rank architectures by their accuracy after full training on the real data (``dataset``, the same as
    dd_gtn's); a non-shipped dataset needs ``data_root``."""
    return dataset_problems(values)
