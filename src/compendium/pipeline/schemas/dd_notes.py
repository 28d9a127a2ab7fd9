from compendium.pipeline.spec import Param

SECTION = "dd_notes"
DATA = ()
SCHEMA = {
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}
