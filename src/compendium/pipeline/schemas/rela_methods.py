from compendium.pipeline.schemas import DATASET, LAMBDA_SCHEDULES, METHODS, PROTOCOL, SEED_MAX, priors_param
from compendium.pipeline.spec import Param
from compendium.rela import scaled_switch

SCHEDULES = (*LAMBDA_SCHEDULES, scaled_switch.NAME)   # + the camera-ready switch with EMAs scaled to the run

SECTION = "rela_methods"
DATA = ("fashion-mnist",)
SCHEMA = {
    "seeds": Param("list[int]", "training seeds", low=0, high=SEED_MAX, nonempty=True),
    **DATASET,
    **PROTOCOL,
    "methods": Param("list[str]", "SSL methods (Table 3 columns)", nonempty=True, choices=METHODS),
    "budget": Param("float", "training budget of every cell", low=0.001, high=1.0),
    "priors": priors_param("ReLA priors: Rand. and the strong prior (each needs targets from the priors stage)"),
    "schedule": Param("str", "lambda schedule", choices=SCHEDULES),
}
