from compendium.pipeline.schemas import SEED_MAX
from compendium.pipeline.spec import Param

SECTION = "theory_targets"
DATA = ()
SCHEMA = {
    "seed": Param("int", "seed of the data streams", low=0, high=SEED_MAX),
    "seeds": Param("int", "training seeds per rho", low=1, high=100),
    "rhos": Param("list[float]", "rho grid of panel (b)", low=0.0, high=1.0, nonempty=True),
    "trajectory_rhos": Param(
        "list[float]", "the three rho of the landscape panel (a)", low=0.0, high=1.0, nonempty=True
    ),
    "teacher_sigma": Param("float", "Sigma of the teacher's training data (paper: 0.1, Fig. 2(c))", low=0.01, high=2.0),
    "train_sigma": Param("float", "Sigma of the relabelled samples (paper: 1)", low=0.01, high=3.0),
    "steps": Param("int", "SGD steps (batch 1)", low=10, high=100000),
    "lr": Param("float", "SGD learning rate", low=0.0, high=1.0),
    "momentum": Param("float", "SGD momentum", low=0.0, high=0.999),
    "val_size": Param("int", "validation samples", low=100, high=1_000_000),
    "eval_every": Param("int", "steps between validation points of the curves", low=1, high=100_000),
    "grid": Param("int", "landscape grid points per axis", low=5, high=201),
    "mc_samples": Param(
        "int", "Monte Carlo samples for the gradient-noise variance V(rho)", low=1000, high=100_000_000
    ),
    "mc_reps": Param("int", "chains for the linear model's stationary error", low=100, high=10_000_000),
    "mc_eta": Param("float", "step size of the linear model", low=0.001, high=0.99),
    "mc_steps": Param("int", "steps of the linear model", low=1, high=100_000),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}
