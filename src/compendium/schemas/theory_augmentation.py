from ..params import P

SECTION = "theory_augmentation"
DATA = ("fashion-mnist",)
SCHEMA = {
    "seed": P("int", "seed", low=0),
    "delta_mu": P("float", "distance between the class means of the analytic model", low=0.0),
    "sigma2": P("float", "class variance of the analytic model", low=1e-6),
    "k": P("float", "augmentation noise variance per unit of intensity", low=1e-6),
    "alphas": P("list[float]", "augmentation intensities of the analytic model", low=0.0, nonempty=True),
    "mc_samples": P("int", "Monte Carlo samples per intensity", low=1000),
    "classes": P("list[int]", "the two Fashion-MNIST classes compared (default T-shirt/top vs Shirt)", low=0, high=9),
    "per_class": P("int", "images per class", low=10),
    "views": P("int", "augmented views per image", low=1, high=16),
    "min_scales": P("list[float]", "RandomResizedCrop min scales (no augmentation is added)", low=0.01, high=1.0, nonempty=True),
    "knn_k": P("int", "neighbours of the class-mixing rate", low=1),
    "perplexity": P("float", "t-SNE perplexity", low=2.0),
    "dpi": P("int", "PNG resolution", low=50, high=150),
}
