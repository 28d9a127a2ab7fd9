from compendium.pipeline.spec import Param

SECTION = "claims_ledger"
DATA = ()
SCHEMA = {
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}
