from compendium.pipeline.spec import Param

SECTION = "dd_regime"
DATA = ()  # the stage reads the committed records, not the data
SCHEMA = {
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}
