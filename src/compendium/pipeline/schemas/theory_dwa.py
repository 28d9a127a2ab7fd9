from compendium.pipeline.schemas import SEED_MAX
from compendium.pipeline.spec import Param

SECTION = "theory_dwa"
DATA = ()
SCHEMA = {
    "seed": Param("int", "seed", low=0, high=SEED_MAX),
    "batch_size": Param("int", "|S|, synthetic instances per batch of the scalar check (App. A.1)", low=2, high=10000),
    "batches": Param("int", "random (batch, target statistics) draws of the sign checks", low=10, high=1_000_000),
    "channels": Param("int", "channels of the multi-channel (eq. 4) check", low=2, high=4096),
    "classes": Param("int", "classes of the Gaussian-mixture toy of T4", low=2, high=100),
    "dim": Param("int", "input dimension of the toy", low=1, high=1024),
    "per_class": Param("int", "points per class", low=5, high=100_000),
    "spread": Param("float", "std of the class means (class overlap grows as it shrinks)", low=0.01, high=100.0),
    "hidden": Param("int", "hidden width of the tanh MLP teacher", low=1, high=4096),
    "weight_decay": Param("float", "weight decay of the regularised teacher (on the mean loss)", low=0.0, high=1.0),
    "adam_steps": Param("int", "Adam steps of the trained teachers", low=1, high=100_000),
    "lbfgs_steps": Param("int", "L-BFGS iterations after Adam", low=0, high=100_000),
    "early_steps": Param("int", "Adam steps of the early-stopped teacher", low=1, high=100_000),
    "rhos": Param("list[float]", "total lengths rho of the directed adjustment", low=0.0, high=10.0, nonempty=True),
    "ascent_steps": Param("int", "K, normalised ascent steps (DWA: 12)", low=1, high=1000),
    "draws": Param("int", "random batches B per teacher", low=1, high=10_000),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}
