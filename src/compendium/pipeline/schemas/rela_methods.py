from compendium.pipeline.schemas import DATASET, LAMBDA_SCHEDULES, METHODS, PROTOCOL
from compendium.pipeline.spec import Param

SECTION = "rela_methods"
DATA = ("fashion-mnist",)
SCHEMA = {
    "seeds": Param("list[int]", "training seeds", low=0, nonempty=True),
    **DATASET,
    **PROTOCOL,
    "methods": Param("list[str]", "SSL methods (Table 3 columns)", nonempty=True, choices=METHODS),
    "budget": Param("float", "training budget of every cell", low=0.001, high=1.0),
    "priors": Param("list[str]", "ReLA priors: Rand. and the strong prior (each needs targets from the priors stage)", nonempty=True),
    "schedule": Param("str", "lambda schedule", choices=LAMBDA_SCHEDULES),
}
