from compendium.pipeline.schemas import SEED_MAX
from compendium.pipeline.spec import Param

SECTION = "theory_information"
DATA = ()
SCHEMA = {
    "seed": Param("int", "seed", low=0, high=SEED_MAX),
    "sigmas": Param("list[float]", "Sigma grid for the information curves", low=0.01, high=10.0, nonempty=True),
    "bins": Param("list[int]", "bin counts of the discrete NMI", low=2, high=10_000, nonempty=True),
    "mc_samples": Param("int", "Monte Carlo samples (MI check, C.6)", low=1000, high=100_000_000),
    "rhos": Param("list[float]", "rho grid of v1 App C.6", low=0.0, high=1.0, nonempty=True),
    "random_maps": Param("int", "random maps of the Theorem 3 check", low=10, high=1_000_000),
    "frobenius_draws": Param("int", "Monte Carlo draws of E||X||_F", low=100, high=100_000_000),
    "ntk_n": Param("int", "size of the NTK check's kernel", low=2, high=500),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}
