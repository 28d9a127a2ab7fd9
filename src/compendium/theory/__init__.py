"""Numerical checks of the papers' theoretical claims (one module per topic).

Each function computes; verdicts for the claims ledger are derived from the computed numbers in
the notebooks (``compendium.verdicts.claims.verdict``), never typed in.
"""
