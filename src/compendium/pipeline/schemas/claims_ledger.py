from compendium.pipeline.spec import Param

SECTION = "claims_ledger"
DATA = ()
SCHEMA = {
    "dpi": Param("int", "PNG resolution", low=50, high=150),
    "gap_goal": Param(
        "float",
        'the gap closure that ReLA Table 1\'s "nearly reaches" claim asks of ReLA at its headline '
        "budget (judged here; rela_budget records the runs)",
        low=0.0,
        high=1.0,
    ),
}
