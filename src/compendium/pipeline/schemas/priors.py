from compendium.pipeline.schemas import DATASET, PROTOCOL
from compendium.pipeline.spec import Param

SECTION = "priors"
DATA = ("fashion-mnist",)
SCHEMA = {
    "seed": Param("int", "seed of the supervised prior and of the rand prior's initialisation", low=0),
    **DATASET,
    "cross_dataset": Param("str", "dataset of the cross-dataset BYOL prior (digits at cpu scale, shipped)",
                       choices=("digits", "fashion-mnist", "cifar10", "cifar100", "tiny-imagenet", "imagenet")),
    **{k: PROTOCOL[k] for k in ("width", "depth", "norm", "global_pool")},
    "sup_epochs": Param("int", "epochs of the supervised prior", low=1, high=500),
    "sup_batch_size": Param("int", "batch size of the supervised prior", low=8),
    "sup_lr": Param("float", "Adam learning rate of the supervised prior", low=0.0, high=1.0),
    "train_n": Param("int", "training images of `dataset` used: D (60000 = all of Fashion-MNIST)", low=100, high=2_000_000),
    "byol_epochs": Param("int", "epochs of the BYOL prior on `dataset` (full budget: BYOL* seed 0)", low=1, high=1000),
    "cross_byol_epochs": Param("int", "epochs of the BYOL prior on `cross_dataset`", low=1, high=5000),
    "byol_batch_size": Param("int", "batch size of the BYOL priors", low=8),
    "priors": Param("list[str]", "priors to make targets for: rand, trained:<file>", nonempty=True),
    "order": Param("str", "target map: PCA then z-score (code) or z-score then PCA (paper eq. 10)",
               choices=("code", "paper", "correlation")),
    "batch_size": Param("int", "inference batch of the target generation", low=1),
    "device": Param("str", "auto (CUDA when present), cpu or cuda", choices=("auto", "cpu", "cuda")),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}
