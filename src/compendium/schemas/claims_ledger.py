from ..params import P

SECTION = "claims_ledger"
DATA = ()
SCHEMA = {
    "order": P("str", "sort the ledger by paper or by the stage that checked the claim",
               choices=("paper", "stage")),
}
