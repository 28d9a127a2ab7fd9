from ..params import P
from . import DATASET, PROTOCOL

SECTION = "rela_budget"
DATA = ("fashion-mnist",)
SCHEMA = {
    "seeds": P("list[int]", "seeds of the headline cells (the first seed runs every cell)", low=0, nonempty=True),
    "full_seeds": P("int", "BYOL* (100%) runs on the first full_seeds of seeds", low=1, high=100),
    **DATASET,
    **PROTOCOL,
    "budgets": P("list[float]", "training budgets below 100% (Table 1 rows)", low=0.001, high=0.999, nonempty=True),
    "priors": P("list[str]", "ReLA priors (each needs targets from the priors stage)", nonempty=True),
    "same_dataset_prior": P("str", "the prior of the headline gap closure (BYOL* of the priors stage)", nonempty=True),
    "cross_dataset_prior": P("str", "the prior of the half-cost claim (trained on another dataset)", nonempty=True),
    "headline_budget": P("float", "the budget of the headline cells (one of budgets)", low=0.001, high=0.999),
    "schedule": P("str", "lambda schedule", choices=("switch", "v1")),
    "similarity_images": P("int", "test images of the representation-similarity matrix", low=20, high=10000),
    "gap_goal": P("float", "the gap-closure goal of the headline claim", low=0.0, high=1.0),
    "cost_goal": P("float", "the budget at or below which ReLA should match BYOL*", low=0.0, high=1.0),
}
