from compendium.pipeline.spec import Param

SECTION = "claims_ledger"
DATA = ()
SCHEMA = {
    "order": Param("str", "sort the ledger by paper or by the stage that checked the claim",
               choices=("paper", "stage")),
}
