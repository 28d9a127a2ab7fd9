from compendium.pipeline.schemas import DATASET, SEED_MAX, dataset_problems
from compendium.pipeline.schemas._rela import LAMBDA_SCHEDULES, METHODS, priors_param
from compendium.pipeline.spec import Param

SECTION = "rela_smoke"
DATA = ("fashion-mnist",)
SCHEMA = {
    "seeds": Param(
        "list[int]", "training seeds (the honest statistic is over these)", low=0, high=SEED_MAX, nonempty=True
    ),
    **DATASET,
    "width": Param("int", "Conv-3 width (must match the priors stage)", low=4, high=1024),
    "depth": Param("int", "ConvNet depth (must match the priors stage)", low=1, high=6),
    "norm": Param(
        "str",
        "normalisation layer (must match the priors stage)",
        choices=("batch", "instance", "group", "layer", "none"),
    ),
    "global_pool": Param("bool", "globally pooled features (must match the priors stage)"),
    "method": Param("str", "SSL method", choices=METHODS),
    "head_mult": Param("float", "width multiplier of the projection/prediction heads", low=0.01, high=4.0),
    "budget": Param("float", "training budget r: each epoch uses a fresh random r x |D| subset", low=0.001, high=1.0),
    "epochs": Param("int", "pre-training epochs", low=1, high=1000),
    "batch_size": Param("int", "pre-training batch size", low=8, high=16_384),
    "lr": Param("float", "AdamW learning rate", low=0.0, high=1.0),
    "weight_decay": Param("float", "AdamW weight decay", low=0.0, high=1.0),
    "priors": priors_param("ReLA priors (each needs targets from the priors stage)"),
    "schedule": Param(
        "str", "lambda schedule: the camera-ready switch or v1's continuous weight", choices=LAMBDA_SCHEDULES
    ),
    "fraction_arm": Param(
        "float",
        "w of an extra arm with the code's epoch-fraction schedule on the last prior (0: none)",
        low=0.0,
        high=1.0,
    ),
    "transfer_trainable": Param("bool", "W, b trained (paper) or frozen at random init (released code)"),
    "rela_code_extras": Param("bool", "the code's colour jitter and grayscale in ReLA's weak views"),
    "knn_every": Param("int", "epochs between kNN points of the learning curves", low=1, high=1000),
    "knn_train": Param("int", "training images of the kNN monitor", low=10, high=60000),
    "knn_test": Param("int", "test images of the kNN monitor", low=10, high=10000),
    "probe_epochs": Param("int", "linear-probe epochs", low=1, high=1000),
    "probe_batch_size": Param("int", "linear-probe batch size", low=1, high=16_384),
    "probe_lr": Param("float", "linear-probe Adam learning rate", low=0.0, high=1.0),
    "probe_standardize": Param(
        "bool", "z-score the frozen features before the probe (false: the paper's raw features)"
    ),
    "compile": Param("bool", "torch.compile the training step"),
    "cpu_bf16": Param(
        "bool",
        "bf16 autocast of the SSL pre-training on the CPU (AMX / AVX512-BF16 CPUs: 1.5x on the BYOL step; false: fp32)",
    ),
    "device": Param("str", "auto (CUDA when present), cpu or cuda", choices=("auto", "cpu", "cuda")),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}


def check(values: dict) -> list[str]:
    """A non-shipped dataset needs ``data_root`` (before any compute)."""
    return dataset_problems(values)
