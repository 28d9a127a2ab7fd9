from compendium.pipeline.spec import Param

SECTION = "ssdd_regime"
DATA = ()  # the stage reads the committed records, not the data
SCHEMA = {
    "probe": Param(
        "str", "the probe the comparisons read", choices=("fashion-mnist", "fashion-mnist low-label", "digits")
    ),
    "sesoi": Param("float", "points: the smallest effect of interest the seeds are planned for", low=0.01, high=100.0),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}
