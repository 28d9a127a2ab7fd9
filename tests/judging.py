"""Test helper: a check module whose claim rows come back judged (the verdict of all seeds), as the claims
ledger would decide them, so that a test of a check's effects and regime reads ``row.verdict``."""

from compendium.verdicts import rule
from compendium.verdicts.claims import Claim


def judge(x):
    if isinstance(x, Claim):
        return rule.judged(x, all_seeds=True)
    if isinstance(x, list) and x and all(isinstance(r, Claim) for r in x):
        return [judge(r) for r in x]
    return x


class Judged:
    """``Judged(module)``: the module, with every function's claim rows judged."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        v = getattr(self._module, name)
        if callable(v) and not isinstance(v, type):

            def call(*a, **k):
                return judge(v(*a, **k))

            return call
        return v
