from compendium.pipeline.schemas import DATASET, PROTOCOL, SEED_MAX
from compendium.pipeline.schemas._rela import METHODS, SCHEDULES, priors_param
from compendium.pipeline.spec import Param

SECTION = "rela_methods"
DATA = ("fashion-mnist",)
SCHEMA = {
    "seeds": Param("list[int]", "training seeds", low=0, high=SEED_MAX, nonempty=True),
    **DATASET,
    **PROTOCOL,
    "cpu_bf16": Param(
        "bool",
        "bf16 autocast of the SSL pre-training on the CPU (AMX / AVX512-BF16 CPUs: 1.5x on the BYOL step; false: fp32)",
    ),
    "methods": Param("list[str]", "SSL methods (Table 3 columns)", nonempty=True, choices=METHODS),
    "budget": Param("float", "training budget of every cell", low=0.001, high=1.0),
    "priors": priors_param("ReLA priors: Rand. and the strong prior (each needs targets from the priors stage)"),
    "schedule": Param("str", "lambda schedule", choices=SCHEDULES),
}
