from compendium.pipeline.schemas import SEED_MAX
from compendium.pipeline.spec import Param

SECTION = "theory_samples"
DATA = ()
SCHEMA = {
    "seed": Param("int", "seed of the data streams", low=0, high=SEED_MAX),
    "seeds": Param("int", "training seeds (model initialisations) per Sigma", low=1, high=100),
    "sigmas": Param("list[float]", "Sigma grid of panel (b)", low=0.01, high=2.0, nonempty=True),
    "trajectory_sigmas": Param(
        "list[float]", "the three Sigma of the landscape panel (a)", low=0.01, high=2.0, nonempty=True
    ),
    "steps": Param("int", "SGD steps (batch 1)", low=10, high=100000),
    "lr": Param("float", "SGD learning rate (paper: 0.002)", low=0.0, high=1.0),
    "momentum": Param("float", "SGD momentum (paper: 0.98)", low=0.0, high=0.999),
    "val_size": Param("int", "validation samples", low=100, high=1_000_000),
    "eval_every": Param("int", "steps between validation points of the curves", low=1, high=100_000),
    "grid": Param("int", "landscape grid points per axis", low=5, high=201),
    "mc_reps": Param("int", "Monte Carlo chains for Theorem 1's linear model", low=100, high=10_000_000),
    "mc_eta": Param("float", "step size of the linear model's SGD", low=0.001, high=0.99),
    "mc_steps": Param("int", "steps of the linear model's SGD", low=1, high=100_000),
    "linear_sigmas": Param("list[float]", "Sigma grid of the linear-model checks", low=0.01, high=3.0, nonempty=True),
    "boundary_samples": Param(
        "int", "samples per Sigma for the logistic-regression boundary (App E)", low=100, high=10_000_000
    ),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}
