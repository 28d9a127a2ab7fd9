"""What the ReLA stages' schemas share and read from the ReLA and SSL wings: the SSL methods, the lambda
schedules and the prior specs a stage may name (the stages outside ReLA import none of this)."""

from compendium.pipeline.spec import Param
from compendium.rela import scaled_switch
from compendium.rela.priors import spec_problem
from compendium.rela.schedule import ADAPTIVE
from compendium.ssl.methods import METHODS as SSL_METHODS

METHODS = tuple(SSL_METHODS)  # the SSL methods the trainer knows, in its order
LAMBDA_SCHEDULES = ADAPTIVE  # the lambda schedules a stage may choose (the others are ablation arms)
SCHEDULES = (*LAMBDA_SCHEDULES, scaled_switch.NAME)  # + the camera-ready switch with EMAs scaled to the run


def priors_param(doc: str) -> Param:
    """A stage's list of ReLA priors: each one a prior spec (:func:`compendium.rela.priors.spec_problem`)."""
    return Param("list[str]", doc, nonempty=True, validate=spec_problem)
