from ..params import P
from . import DATASET, METHODS, PROTOCOL

SECTION = "rela_methods"
DATA = ("fashion-mnist",)
SCHEMA = {
    "seeds": P("list[int]", "training seeds", low=0, nonempty=True),
    **DATASET,
    **PROTOCOL,
    "methods": P("list[str]", "SSL methods (Table 3 columns)", nonempty=True, choices=METHODS),
    "budget": P("float", "training budget of every cell", low=0.001, high=1.0),
    "priors": P("list[str]", "ReLA priors: Rand. and the strong prior (each needs targets from the priors stage)", nonempty=True),
    "schedule": P("str", "lambda schedule", choices=("switch", "v1")),
}
