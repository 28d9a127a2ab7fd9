from ..params import P

SECTION = "theory_information"
DATA = ()
SCHEMA = {
    "seed": P("int", "seed", low=0),
    "sigmas": P("list[float]", "Sigma grid for the information curves", low=0.01, high=10.0, nonempty=True),
    "bins": P("list[int]", "bin counts of the discrete NMI", low=2, nonempty=True),
    "mc_samples": P("int", "Monte Carlo samples (MI check, C.6)", low=1000),
    "rhos": P("list[float]", "rho grid of v1 App C.6", low=0.0, high=1.0, nonempty=True),
    "random_maps": P("int", "random maps of the Theorem 3 check", low=10),
    "frobenius_draws": P("int", "Monte Carlo draws of E||X||_F", low=100),
    "ntk_n": P("int", "size of the NTK check's kernel", low=2, high=500),
    "dpi": P("int", "PNG resolution", low=50, high=150),
}
