from compendium.pipeline.schemas import SEED_MAX
from compendium.pipeline.spec import Param

SECTION = "theory_ssdd"
DATA = ()
SCHEMA = {
    "seed": Param("int", "seed", low=0, high=SEED_MAX),
    "problems": Param("int", "random toy problems (seeds) of the bias check", low=2, high=100_000),
    "d": Param("int", "input dimension", low=2, high=1024),
    "m": Param("int", "synthetic points", low=1, high=4096),
    "k": Param("int", "target dimension", low=1, high=256),
    "n_real": Param("int", "real points of the outer loss", low=2, high=100_000),
    "views": Param("int", "predefined views: identity + views-1 feature permutations (A + 1 in SSDD)", low=2, high=64),
    "lam": Param("float", "ridge coefficient of the inner problem", low=1e-8, high=1e6),
    "lams": Param("list[float]", "ridge coefficients of the sweep", low=1e-8, high=1e6, nonempty=True),
    "ms": Param("list[int]", "synthetic-set sizes of the sweep", low=1, high=4096, nonempty=True),
    "mc_draws": Param("int", "sampled-view gradients averaged in the Monte Carlo panel", low=10, high=10_000_000),
    "descent_steps": Param("int", "outer gradient-descent steps per estimator", low=1, high=100_000),
    "descent_lr": Param("float", "outer step size", low=0.0, high=10.0),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}
