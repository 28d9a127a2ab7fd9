"""Claim checks: for each family of stages, the preconditions under which a run tests a paper's claim
(the method reached its regime, the baseline trained, the arms share one evaluation), computed from
the run's own records, and the assembly of the family's ledger rows (see :mod:`compendium.verdicts.claims`)."""
