from ..params import P

SECTION = "theory_targets"
DATA = ()
SCHEMA = {
    "seed": P("int", "seed of the data streams", low=0),
    "seeds": P("int", "training seeds per rho", low=1, high=100),
    "rhos": P("list[float]", "rho grid of panel (b)", low=0.0, high=1.0, nonempty=True),
    "trajectory_rhos": P("list[float]", "the three rho of the landscape panel (a)", low=0.0, high=1.0, nonempty=True),
    "teacher_sigma": P("float", "Sigma of the teacher's training data (paper: 0.1, Fig. 2(c))", low=0.01, high=2.0),
    "train_sigma": P("float", "Sigma of the relabelled samples (paper: 1)", low=0.01, high=3.0),
    "steps": P("int", "SGD steps (batch 1)", low=10, high=100000),
    "lr": P("float", "SGD learning rate", low=0.0),
    "momentum": P("float", "SGD momentum", low=0.0, high=0.999),
    "val_size": P("int", "validation samples", low=100),
    "eval_every": P("int", "steps between validation points of the curves", low=1),
    "grid": P("int", "landscape grid points per axis", low=5, high=201),
    "mc_samples": P("int", "Monte Carlo samples for the gradient-noise variance V(rho)", low=1000),
    "mc_reps": P("int", "chains for the linear model's stationary error", low=100),
    "mc_eta": P("float", "step size of the linear model", low=0.001, high=0.99),
    "mc_steps": P("int", "steps of the linear model", low=1),
    "dpi": P("int", "PNG resolution", low=50, high=150),
}
