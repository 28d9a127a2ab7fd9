from compendium.pipeline.schemas import SEED_MAX
from compendium.pipeline.spec import Param

SECTION = "theory_augmentation"
DATA = ("fashion-mnist",)
SCHEMA = {
    "seed": Param("int", "seed", low=0, high=SEED_MAX),
    "delta_mu": Param("float", "distance between the class means of the analytic model", low=0.0, high=100.0),
    "sigma2": Param("float", "class variance of the analytic model", low=1e-6, high=100.0),
    "k": Param("float", "augmentation noise variance per unit of intensity", low=1e-6, high=100.0),
    "alphas": Param(
        "list[float]", "augmentation intensities of the analytic model", low=0.0, high=100.0, nonempty=True
    ),
    "mc_samples": Param("int", "Monte Carlo samples per intensity", low=1000, high=100_000_000),
    "classes": Param(
        "list[int]", "the two Fashion-MNIST classes compared (default T-shirt/top vs Shirt)", low=0, high=9
    ),
    "per_class": Param("int", "images per class", low=10, high=6000),
    "views": Param("int", "augmented views per image", low=1, high=16),
    "min_scales": Param(
        "list[float]", "RandomResizedCrop min scales (no augmentation is added)", low=0.01, high=1.0, nonempty=True
    ),
    "knn_k": Param("int", "neighbours of the class-mixing rate", low=1, high=1000),
    "perplexity": Param("float", "t-SNE perplexity", low=2.0, high=500.0),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}
