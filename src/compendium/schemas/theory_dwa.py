from ..params import P

SECTION = "theory_dwa"
DATA = ()
SCHEMA = {
    "seed": P("int", "seed", low=0),
    "batch_size": P("int", "|S|, synthetic instances per batch of the scalar check (App. A.1)", low=2, high=10000),
    "batches": P("int", "random (batch, target statistics) draws of the sign checks", low=10),
    "channels": P("int", "channels of the multi-channel (eq. 4) check", low=2, high=4096),
    "classes": P("int", "classes of the Gaussian-mixture toy of T4", low=2, high=100),
    "dim": P("int", "input dimension of the toy", low=1, high=1024),
    "per_class": P("int", "points per class", low=5),
    "spread": P("float", "std of the class means (class overlap grows as it shrinks)", low=0.01),
    "hidden": P("int", "hidden width of the tanh MLP teacher", low=1, high=4096),
    "weight_decay": P("float", "weight decay of the regularised teacher (on the mean loss)", low=0.0),
    "adam_steps": P("int", "Adam steps of the trained teachers", low=1),
    "lbfgs_steps": P("int", "L-BFGS iterations after Adam", low=0),
    "early_steps": P("int", "Adam steps of the early-stopped teacher", low=1),
    "rhos": P("list[float]", "total lengths rho of the directed adjustment", low=0.0, nonempty=True),
    "ascent_steps": P("int", "K, normalised ascent steps (DWA: 12)", low=1, high=1000),
    "draws": P("int", "random batches B per teacher", low=1),
    "dpi": P("int", "PNG resolution", low=50, high=150),
}
