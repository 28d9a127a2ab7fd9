from ..params import P
from . import PROTOCOL

SECTION = "priors"
DATA = ("fashion-mnist",)
SCHEMA = {
    "seed": P("int", "seed of the supervised prior and of the rand prior's initialisation", low=0),
    **{k: PROTOCOL[k] for k in ("width", "depth", "norm", "global_pool")},
    "sup_epochs": P("int", "epochs of the supervised prior", low=1, high=500),
    "sup_batch_size": P("int", "batch size of the supervised prior", low=8),
    "sup_lr": P("float", "Adam learning rate of the supervised prior", low=0.0, high=1.0),
    "train_n": P("int", "Fashion-MNIST training images used (60000 = all)", low=100, high=60000),
    "byol_epochs": P("int", "epochs of the BYOL prior on Fashion-MNIST (full budget)", low=1, high=1000),
    "digits_byol_epochs": P("int", "epochs of the BYOL prior on the digits (cross-dataset)", low=1, high=5000),
    "byol_batch_size": P("int", "batch size of the BYOL priors", low=8),
    "priors": P("list[str]", "priors to make targets for: rand, trained:<file>", nonempty=True),
    "order": P("str", "target map: PCA then z-score (code) or z-score then PCA (paper eq. 10)",
               choices=("code", "paper", "correlation")),
    "batch_size": P("int", "inference batch of the target generation", low=1),
    "device": P("str", "auto (CUDA when present), cpu or cuda", choices=("auto", "cpu", "cuda")),
    "dpi": P("int", "PNG resolution", low=50, high=150),
}
