"""The pipeline: parameter schemas and checks, the notebook runner, report writing, the claims ledger
and its checks, the stage dependencies. Imports every wing below it."""
