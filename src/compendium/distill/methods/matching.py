"""The dd_matching family's registry: DC, DSA and DM (one line each)."""

from compendium.distill.methods.base import registry
from compendium.distill.methods.dc import DC
from compendium.distill.methods.dm import DM
from compendium.distill.methods.dsa import DSA

METHODS = registry(DC(), DSA(), DM())
