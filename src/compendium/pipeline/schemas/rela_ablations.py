from compendium.pipeline.schemas import DATASET, PROTOCOL, SEED_MAX
from compendium.pipeline.schemas._rela import SCHEDULES, priors_param
from compendium.pipeline.spec import Param

SECTION = "rela_ablations"
DATA = ("fashion-mnist",)
SCHEMA = {
    "seeds": Param(
        "list[int]",
        "the first schedule_seeds run every λ setting, the others the untrained network, BYOL and both subsets of the "
        "switch (v1 Fig. 4a, seed noise); W, b frozen and the paper's target order run on the first",
        low=0,
        high=SEED_MAX,
        nonempty=True,
    ),
    "schedule_seeds": Param(
        "int", "every λ setting (constant λ, first w, v1) runs on the first schedule_seeds of seeds", low=1, high=100
    ),
    "schedule": Param("str", "the adaptive λ switch of the switch arms", choices=SCHEDULES),
    **DATASET,
    **PROTOCOL,
    "cpu_bf16": Param(
        "bool",
        "bf16 autocast of the SSL pre-training on the CPU (AMX / AVX512-BF16 CPUs: 1.5x on the BYOL step; false: fp32)",
    ),
    "budget": Param("float", "training budget of every arm", low=0.001, high=1.0),
    "priors": priors_param("a weak and a strong prior (each needs targets from the priors stage)"),
    "lambdas": Param("list[float]", "constant lambda values (v1 Fig. 4b)", low=0.0, high=1.0, nonempty=True),
    "descriptive_arms": Param(
        "bool",
        "also run the arms only the figures show and no claim reads: v1's continuous λ, W and b frozen, the paper's "
        "target order",
    ),
    "fractions": Param(
        "list[float]", "w of the first-w strategies (camera-ready Fig. 4b)", low=0.0, high=1.0, nonempty=True
    ),
}
