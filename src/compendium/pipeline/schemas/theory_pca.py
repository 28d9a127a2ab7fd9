from compendium.pipeline.schemas import SEED_MAX
from compendium.pipeline.spec import Param

SECTION = "theory_pca"
DATA = ("fashion-mnist",)
SCHEMA = {
    "seed": Param("int", "seed", low=0, high=SEED_MAX),
    "n_random": Param("int", "rows of the random matrices", low=10, high=1_000_000),
    "d_random": Param("int", "columns of the random matrices", low=2, high=4096),
    "k": Param("int", "principal components kept", low=1, high=4096),
    "batch": Param("int", "batch size of the streaming PCA (an uneven last batch is intended)", low=1, high=1_000_000),
    "real_n": Param("int", "Fashion-MNIST training images used for the real feature matrices", low=100, high=60000),
    "conv_width": Param(
        "int", "width of the seeded random Conv-3 whose features are the second real matrix", low=4, high=1024
    ),
    "timing_ns": Param(
        "list[int]", "row counts for the timing of the streaming PCA", low=100, high=1_000_000, nonempty=True
    ),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}
