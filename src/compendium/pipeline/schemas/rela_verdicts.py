from compendium.pipeline.spec import Param

SECTION = "rela_verdicts"
DATA = ()
SCHEMA = {
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}
