from ..params import P

SECTION = "theory_ssdd"
DATA = ()
SCHEMA = {
    "seed": P("int", "seed", low=0),
    "problems": P("int", "random toy problems (seeds) of the bias check", low=2),
    "d": P("int", "input dimension", low=2, high=1024),
    "m": P("int", "synthetic points", low=1, high=4096),
    "k": P("int", "target dimension", low=1, high=256),
    "n_real": P("int", "real points of the outer loss", low=2),
    "views": P("int", "predefined views: identity + views-1 feature permutations (A + 1 in SSDD)", low=2, high=64),
    "lam": P("float", "ridge coefficient of the inner problem", low=1e-8),
    "lams": P("list[float]", "ridge coefficients of the sweep", low=1e-8, nonempty=True),
    "ms": P("list[int]", "synthetic-set sizes of the sweep", low=1, nonempty=True),
    "mc_draws": P("int", "sampled-view gradients averaged in the Monte Carlo panel", low=10),
    "descent_steps": P("int", "outer gradient-descent steps per estimator", low=1),
    "descent_lr": P("float", "outer step size", low=0.0),
    "dpi": P("int", "PNG resolution", low=50, high=150),
}
