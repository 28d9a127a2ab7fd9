from compendium.pipeline.schemas import DATASET, PROTOCOL, SEED_MAX
from compendium.pipeline.schemas._rela import SCHEDULES, priors_param
from compendium.pipeline.spec import Param

SECTION = "rela_budget"
DATA = ("fashion-mnist",)
SCHEMA = {
    "seeds": Param(
        "list[int]",
        "seeds of the headline cells (the first grid_seeds run every cell)",
        low=0,
        high=SEED_MAX,
        nonempty=True,
    ),
    "full_seeds": Param("int", "BYOL* (100%) runs on the first full_seeds of seeds", low=1, high=100),
    "grid_seeds": Param("int", "every cell of the grid runs on the first grid_seeds of seeds", low=1, high=100),
    **DATASET,
    **PROTOCOL,
    "cpu_bf16": Param(
        "bool",
        "bf16 autocast of the SSL pre-training on the CPU (AMX / AVX512-BF16 CPUs: 1.5x on the BYOL step; false: fp32)",
    ),
    "budgets": Param("list[float]", "training budgets below 100% (Table 1 rows)", low=0.001, high=0.999, nonempty=True),
    "priors": priors_param("ReLA priors (each needs targets from the priors stage)"),
    "same_dataset_prior": Param(
        "str", "the prior of the headline gap closure (BYOL* of the priors stage)", nonempty=True
    ),
    "cross_dataset_prior": Param("str", "the prior of the half-cost claim (trained on another dataset)", nonempty=True),
    "headline_budget": Param("float", "the budget of the headline cells (one of budgets)", low=0.001, high=0.999),
    "schedule": Param("str", "lambda schedule", choices=SCHEDULES),
    "variant_schedule": Param(
        "str",
        "a second lambda schedule for the same-dataset prior at the headline budget, every seed ('' for none)",
        choices=("", *SCHEDULES),
    ),
    "similarity_images": Param("int", "test images of the representation-similarity matrix", low=20, high=10000),
    "cost_goal": Param("float", "the budget at or below which ReLA should match BYOL*", low=0.0, high=1.0),
    "per_seed_priors": Param(
        "bool",
        "a student on seed s reads each trained prior's replicate on the next seed of `seeds` "
        "(the priors stage's replicate_seeds), never its own BYOL* reference; needs 2 seeds or more",
    ),
    "prior_only": Param(
        "bool",
        "beside each +ReLA arm, the same prior with lambda = 1 throughout (regression onto the "
        "prior alone), so that what the prior gives and what the SSL phase adds are told apart",
    ),
    "cost_goal_cell": Param(
        "bool",
        "run + ReLA with the cross-dataset prior at cost_goal on the grid seeds when budgets leave "
        "that budget out (the half-cost claim's one cell, without the budget's whole row)",
    ),
}


def check(values: dict) -> list[str]:
    """The headline cells (camera-ready Table 1's gap closure and the half-cost claim) are cells of the
    table: their priors and budget must be among ``priors`` and ``budgets``."""
    errs = []
    for key in ("same_dataset_prior", "cross_dataset_prior"):
        if values[key] not in values["priors"]:
            errs.append(f"{key}: {values[key]!r} must be one of `priors` {values['priors']}; add it there")
    if values["headline_budget"] not in values["budgets"]:
        errs.append(
            f"headline_budget: {values['headline_budget']} must be one of `budgets` {values['budgets']}; add it there"
        )
    if values["per_seed_priors"] and len(set(values["seeds"])) < 2:
        errs.append(
            f"per_seed_priors: true needs 2 seeds or more (seeds: {values['seeds']}); add a seed or set it false"
        )
    if values["variant_schedule"] == values["schedule"]:
        errs.append(f"variant_schedule: {values['variant_schedule']!r} is the stage's own schedule; use another or ''")
    return errs
