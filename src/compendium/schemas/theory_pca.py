from ..params import P

SECTION = "theory_pca"
DATA = ("fashion-mnist",)
SCHEMA = {
    "seed": P("int", "seed", low=0),
    "n_random": P("int", "rows of the random matrices", low=10),
    "d_random": P("int", "columns of the random matrices", low=2),
    "k": P("int", "principal components kept", low=1),
    "batch": P("int", "batch size of the streaming PCA (an uneven last batch is intended)", low=1),
    "real_n": P("int", "Fashion-MNIST training images used for the real feature matrices", low=100, high=60000),
    "conv_width": P("int", "width of the seeded random Conv-3 whose features are the second real matrix", low=4),
    "timing_ns": P("list[int]", "row counts for the timing of the streaming PCA", low=100, nonempty=True),
    "dpi": P("int", "PNG resolution", low=50, high=150),
}
