from compendium.pipeline.spec import Param

SECTION = "dd_regime"
DATA = ()  # the stage reads the committed records, not the data
SCHEMA = {
    "plateau_gain": Param(
        "float",
        "points: a schedule has plateaued when 4x its length gains less than this (mean over seeds)",
        low=0.0,
        high=100.0,
    ),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}
