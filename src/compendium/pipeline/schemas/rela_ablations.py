from compendium.pipeline.schemas import DATASET, PROTOCOL, SEED_MAX, priors_param
from compendium.pipeline.spec import Param

SECTION = "rela_ablations"
DATA = ("fashion-mnist",)
SCHEMA = {
    "seeds": Param("list[int]", "the first runs every arm, the others the untrained network, BYOL and both subsets of the switch (v1 Fig. 4a, seed noise)", low=0, high=SEED_MAX, nonempty=True),
    **DATASET,
    **PROTOCOL,
    "budget": Param("float", "training budget of every arm", low=0.001, high=1.0),
    "priors": priors_param("a weak and a strong prior (each needs targets from the priors stage)"),
    "lambdas": Param("list[float]", "constant lambda values (v1 Fig. 4b)", low=0.0, high=1.0, nonempty=True),
    "fractions": Param("list[float]", "w of the first-w strategies (camera-ready Fig. 4b)", low=0.0, high=1.0, nonempty=True),
}
