"""The one verdict rule for comparison claims ("A beats B"), applied by the ``claims_ledger`` stage alone.

Each effect of a claim is a paired difference A − B over matched seeds (:class:`compendium.verdicts.claims.Effect`)
with its 95% t interval. With ``margin`` m (0 for "A beats B", > 0 for "A is not worse than B by more than m") and
the claim's smallest effect of interest δ (its declaration), an effect is

==================  =================================================================================
``holds``           the interval lies above −m
``fails``           the interval lies below −m (B beats A), or, for a superiority claim (m = 0), below δ:
                    every advantage of the size that matters is excluded ("the claimed advantage is absent")
``inconclusive``    otherwise
==================  =================================================================================

and a claim of several effects (cells) *holds* when all hold, *fails* when some fail and none holds, *holds only
under a condition* when some hold and others fail. *not tested at this scale* when a regime check is unmet or an
arm has fewer than ``min_seeds`` matched seeds.

The second half of the fails rule is the "minimum-effect" half of an equivalence test (two one-sided tests,
TOST): the claim's advantage is declared absent when the upper end of the 95% interval lies below δ, a one-sided
test at 2.5%, stricter than TOST's usual 5%. An effect whose interval lies above 0 but below δ still *holds*: the
claim states a direction; the row shows δ beside the interval so a reader sees the size.

**Replication.** Every verdict must be reached again on two disjoint seed sets of the same run (the seeds in
order, split in halves; each half needs ``min_seeds``): it stands only where both halves give the verdict of all
seeds, and a verdict the halves do not both reach is *inconclusive*. A run with fewer than ``2 * min_seeds``
matched seeds has no disjoint set to replicate on, so it is not a test of the claim: *not tested at this scale*,
with the verdict of all its seeds kept beside. The row keeps all three (``verdict_all_seeds``,
``verdict_seeds_a``, ``verdict_seeds_b``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace

from compendium.verdicts.claims import (
    CONDITIONAL,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_TESTED,
    VERDICTS,
    Claim,
    Effect,
    Evidence,
    Precondition,
    compare,
)

DECIDED = (HOLDS, FAILS, CONDITIONAL)
#: the ledger columns :func:`decide` fills
COLUMNS = (
    "verdict",
    "condition",
    "tested",
    "preconditions",
    "seeds",
    "effect",
    "interval",
    "mde",
    "verdict_all_seeds",
    "verdict_seeds_a",
    "verdict_seeds_b",
    "replication",
)


def judge_effect(e: Effect, margin: float = 0.0, sesoi: float | None = None) -> tuple[str, str]:
    """(verdict, why) of one effect; ``sesoi`` in the effect's display units (points for accuracies)."""
    lo, hi = e.interval
    if not math.isfinite(lo):
        return INCONCLUSIVE, ""
    if lo > -margin:
        return HOLDS, ""
    if hi < -margin:
        return FAILS, "reversed"
    if margin == 0 and sesoi is not None and sesoi > 0 and hi < sesoi / e.unit:
        return FAILS, f"absent: upper bound {e.unit * hi:+.2g} < {sesoi:g}"
    return INCONCLUSIVE, ""


def _combine(per: Sequence[tuple[str, str]], labels: Sequence[str]) -> tuple[str, str]:
    verdicts = [v for v, _ in per]
    absent = [f"{lab} ({why[len('absent: ') :]})" for lab, (v, why) in zip(labels, per) if why.startswith("absent")]
    note = (
        f"the claimed advantage is absent (below the smallest effect of interest) for {', '.join(absent)}"
        if absent
        else ""
    )
    if all(v == HOLDS for v in verdicts):
        return HOLDS, ""
    held = [lab for lab, v in zip(labels, verdicts) if v == HOLDS]
    failed = [lab for lab, v in zip(labels, verdicts) if v == FAILS]
    if failed and held:
        return CONDITIONAL, "; ".join(
            x for x in (f"holds for {', '.join(held)}; fails for {', '.join(failed)}", note) if x
        )
    if failed:
        return FAILS, note
    return INCONCLUSIVE, ""


def _verdict_of(effects: Sequence[Effect], margin: float, sesoi: float | None) -> tuple[str, str]:
    return _combine([judge_effect(e, margin, sesoi) for e in effects], [e.label for e in effects])


def decide(
    evidence: Evidence | Effect | Iterable[Effect],
    preconditions: Iterable[Precondition] = (),
    *,
    sesoi: float | None = None,
    margin: float | None = None,
    min_seeds: int | None = None,
    digits: int | None = None,
) -> dict:
    """The ledger columns (:data:`COLUMNS`) of a comparison. ``evidence``: what its stage recorded
    (:class:`Evidence`), or effects (with ``preconditions``, ``margin``, ``min_seeds``, ``digits``) to judge
    directly. ``sesoi``: the claim's smallest effect of interest, in display units."""
    if not isinstance(evidence, Evidence):
        kw = {k: v for k, v in (("margin", margin), ("min_seeds", min_seeds), ("digits", digits)) if v is not None}
        evidence = Evidence.from_json(compare(evidence, preconditions, **kw)["evidence"])
    elif any(v is not None for v in (margin, min_seeds, digits)) or list(preconditions):
        raise ValueError("give the margin, seeds, digits and preconditions in the evidence, not beside it")
    ev = evidence
    effects, pre, k = list(ev.effects), list(ev.preconditions), ev.min_seeds
    if sesoi is not None and (not math.isfinite(sesoi) or sesoi < 0):
        raise ValueError(f"the smallest effect of interest must be finite and >= 0, got {sesoi}")
    n_min = min((e.n for e in effects), default=0)
    if effects:
        pre.append(
            Precondition(f">= {k} matched seeds", n_min >= k, f"{n_min} matched", f"{k} matched seeds on every arm")
        )
    fmt = f"{{:+.{ev.digits}f}}"
    seeds = sorted({s for e in effects for s in e.seeds}, key=lambda s: (str(type(s)), s))
    out = {
        "preconditions": "; ".join(str(p) for p in pre),
        "seeds": (
            ",".join(str(s) for s in seeds)
            if all(e.seeds == effects[0].seeds for e in effects)
            else "; ".join(f"{e.label}: {','.join(map(str, e.seeds))}" for e in effects)
        )
        if effects
        else "",
        "effect": "; ".join(f"{e.label}: {fmt.format(e.unit * e.mean)}" for e in effects),
        "interval": "; ".join(
            f"{e.label}: [{fmt.format(e.unit * e.interval[0])}, {fmt.format(e.unit * e.interval[1])}]"
            for e in effects
            if math.isfinite(e.half_width)
        ),
        "mde": "; ".join(f"{e.label}: {e.unit * e.mde:.{ev.digits}f}" for e in effects if math.isfinite(e.mde)),
        "verdict_all_seeds": "",
        "verdict_seeds_a": "",
        "verdict_seeds_b": "",
        "replication": "",
    }
    unmet = [p for p in pre if not p.met]
    if unmet or not effects:
        if not unmet:
            raise ValueError("a comparison without effects needs an unmet precondition")
        return {
            **out,
            "verdict": NOT_TESTED,
            "tested": "no",
            "condition": "; ".join(f"{p.name} unmet ({p.measured}); would need {p.needs}" for p in unmet),
        }
    v, cond = _verdict_of(effects, ev.margin, sesoi)
    out["verdict_all_seeds"] = v
    if n_min < 2 * k:  # no disjoint seed set to replicate on: the run is not a test of the claim
        out["replication"] = f"not possible: {n_min} seeds, two disjoint sets of >= {k} need >= {2 * k}"
        return {
            **out,
            "verdict": NOT_TESTED,
            "tested": "no",
            "condition": f"replication on a disjoint seed set unmet ({n_min} matched seeds; all of them give "
            f"'{v}'" + (f": {cond}" if cond else "") + f"); would need >= {2 * k} matched seeds",
        }
    halves = [e.halves() for e in effects]
    va, _ = _verdict_of([a for a, _ in halves], ev.margin, sesoi)
    vb, _ = _verdict_of([b for _, b in halves], ev.margin, sesoi)
    out.update(verdict_seeds_a=va, verdict_seeds_b=vb)
    if v in DECIDED and not va == vb == v:
        out["replication"] = "not replicated"
        return {
            **out,
            "verdict": INCONCLUSIVE,
            "tested": "yes",
            "condition": f"not replicated: the disjoint seed sets give '{va}' and '{vb}' (all seeds: '{v}'"
            + (f"; {cond}" if cond else "")
            + ")",
        }
    out["replication"] = "replicated" if v in DECIDED else "undecided"
    return {**out, "verdict": v, "tested": "yes", "condition": cond}


def decided(verdict: str) -> bool:
    if verdict not in VERDICTS:
        raise ValueError(f"unknown verdict {verdict!r}")
    return verdict in DECIDED


def judged(claim: Claim, sesoi: float | None = None, all_seeds: bool = False) -> Claim:
    """``claim`` with the rule's columns filled from its evidence (an exact check is returned as is).
    ``all_seeds``: the verdict of all seeds instead of the standing (replicated) one, e.g. to test a check's
    effects and regime on a three-seed fixture."""
    if not claim.evidence:
        return claim
    cols = decide(Evidence.from_json(claim.evidence), sesoi=sesoi)
    if all_seeds and cols["verdict_all_seeds"]:
        cols = {
            **cols,
            "verdict": cols["verdict_all_seeds"],
            "tested": "yes",
            "condition": "" if cols["verdict_all_seeds"] in (HOLDS, FAILS, INCONCLUSIVE) else cols["condition"],
        }
        if cols["verdict"] == CONDITIONAL:
            cols["condition"] = _verdict_of(
                list(Evidence.from_json(claim.evidence).effects), Evidence.from_json(claim.evidence).margin, sesoi
            )[1]
    return replace(
        claim,
        evidence="",
        **{
            k: cols[k]
            for k in ("verdict", "condition", "tested", "preconditions", "seeds", "effect", "interval", "mde")
        },
    )
