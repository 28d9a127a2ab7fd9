"""What a stage records about a claim: the ledger row (:class:`Claim`), and for a comparison the evidence the
judging stage decides from (:class:`Evidence`: paired effects over matched seeds and the run's own regime
checks, :class:`Precondition`).

A stage never decides a comparison. It builds the row with :func:`compare`::

    Claim(..., **compare([Effect.paired("A − B", a, b)], [above("B trained", b, untrained, "more steps")]), ours=...)

and writes it (:meth:`compendium.pipeline.report.Reporter.claims`); the ``claims_ledger`` stage reads every row,
finds the claim's declaration (:mod:`compendium.verdicts.registry`: its id, wording and smallest effect of
interest) and applies the one verdict rule (:func:`compendium.verdicts.rule.decide`). So a change to the rule or to
one declaration reruns that stage alone.

Exact checks of a statement (a lemma, an equation, a closed form against Monte Carlo) carry their verdict
(:func:`verdict_kw`): the check is the rule.

The regime checks are one library (:func:`above`, :func:`reached`, :func:`below_ceiling`, :func:`plateaued`,
:func:`same_evaluation`). Where they compare measured numbers they compare intervals, never means: an arm is
above its untrained network when the 95% t interval of its paired difference over matched seeds lies above the
margin, the same rule for every arm.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import optimize, stats

from compendium.core import plateau

HOLDS = "holds"
FAILS = "fails"
CONDITIONAL = "holds only under a condition"
INCONCLUSIVE = "inconclusive"
NOT_TESTED = "not tested at this scale"
VERDICTS = (HOLDS, FAILS, CONDITIONAL, INCONCLUSIVE, NOT_TESTED)
#: the columns a stage writes (``reports/claims/<stage>.csv``); a comparison's verdict columns stay empty there
STAGE_COLUMNS = (
    "paper",
    "version",
    "location",
    "claim",
    "check",
    "verdict",
    "condition",
    "tested",
    "preconditions",
    "seeds",
    "effect",
    "interval",
    "mde",
    "scale",
    "ours",
    "paper_numbers",
    "stage",
    "evidence",
)

#: One name per paper. Keys are the names rows may use; values the name the ledger shows.
PAPERS = {
    "ReLA": "ReLA",
    "DWA": "DWA",
    "SSDD": "SSDD",
    "KRR-ST": "SSDD",
    "DC": "DC",
    "DSA": "DSA",
    "DM": "DM",
    "KIP": "KIP",
    "DD": "DD",
    "SLDD/TDD": "SLDD/TDD",
    "SLDD": "SLDD/TDD",
    "TDD": "SLDD/TDD",
    "LD": "LD",
    "GTN": "GTN",
    "Mnemonics": "Mnemonics",
    "SRe2L": "SRe2L",
    "RDED": "RDED",
}

CONFIDENCE = 0.95  # two-sided interval of a paired difference
POWER = 0.80  # the power at which the minimal detectable effect is stated
MIN_SEEDS = 3


MAX_SEEDS = 200  # a power plan beyond this is reported as "more than 200"


def canonical_paper(name: str) -> str:
    """The ledger's one name of a paper: ``"DC (Zhao et al.)"`` and ``"DC"`` are both ``"DC"``."""
    key = name.split(" (")[0].strip()
    if key not in PAPERS:
        raise ValueError(f"unknown paper {name!r}: add it to compendium.verdicts.claims.PAPERS ({sorted(PAPERS)})")
    return PAPERS[key]


@dataclass(frozen=True)
class Claim:
    """One ledger row as a stage writes it. ``paper_numbers`` only ever holds numbers printed in the paper.

    An exact check carries its ``verdict``. A comparison carries ``evidence`` (:func:`compare`) and an empty
    ``verdict``, ``tested`` and statistics columns: the ``claims_ledger`` stage fills them by the verdict rule.
    ``scale`` and ``stage`` are set by :meth:`compendium.pipeline.report.Reporter.claims`.
    """

    paper: str
    version: str
    location: str
    claim: str
    check: str
    verdict: str
    ours: str
    paper_numbers: str = ""
    condition: str = ""
    tested: str = "yes"
    preconditions: str = ""
    seeds: str = ""
    effect: str = ""
    interval: str = ""
    mde: str = ""
    scale: str = ""
    stage: str = ""
    evidence: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "paper", canonical_paper(self.paper))
        if self.evidence:
            if self.verdict or self.tested:
                raise ValueError(
                    f"{self.location}: a comparison is decided by the claims_ledger stage, not by its stage "
                    f"(got verdict {self.verdict!r})"
                )
            Evidence.from_json(self.evidence)  # it parses
        else:
            if self.verdict not in VERDICTS:
                raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
            if self.verdict in (CONDITIONAL, NOT_TESTED) and not self.condition:
                raise ValueError(f"{self.location}: a verdict {self.verdict!r} must state its condition")
            if (self.tested == "no") != (self.verdict == NOT_TESTED):
                raise ValueError(f"{self.location}: tested={self.tested!r} contradicts verdict {self.verdict!r}")
        for f in ("paper", "location", "claim", "check", "ours"):
            if not getattr(self, f).strip():
                raise ValueError(f"{self.location or '?'}: field {f!r} is empty")

    @property
    def key(self) -> tuple[str, str, str]:
        """What the registry matches a row on: (paper, location, claim)."""
        return self.paper, self.location, self.claim

    def record(self) -> dict:
        """The row as the stage's CSV holds it."""
        return asdict(self)


# ---------------------------------------------------------------------------------------------
# Exact checks


def verdict(holds: bool, condition_holds: bool | None = None, condition: str = "") -> tuple[str, str]:
    """``(verdict, condition)`` from the outcome of an exact check.

    ``holds`` is whether the claim holds as stated. If it does not, but it does under a stated
    condition (``condition_holds``), the verdict is conditional.
    """
    if holds:
        return HOLDS, ""
    if condition_holds:
        if not condition:
            raise ValueError("state the condition under which the claim holds")
        return CONDITIONAL, condition
    return FAILS, ""


def verdict_kw(holds: bool, condition_holds: bool | None = None, condition: str = "") -> dict:
    """:func:`verdict` as keyword arguments of :class:`Claim`: ``Claim(..., **verdict_kw(ok), ours=...)``."""
    v, c = verdict(holds, condition_holds, condition)
    return {"verdict": v, "condition": c}


# ---------------------------------------------------------------------------------------------
# Comparisons: effects over matched seeds and preconditions


@dataclass(frozen=True)
class Precondition:
    """Whether this run tests the claim: ``measured`` says what the run shows, ``needs`` the setting
    that would meet the condition when it is unmet (e.g. ``"DC: 1,000 outer iterations"``)."""

    name: str
    met: bool
    measured: str
    needs: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "met", bool(self.met))
        if not self.met and not self.needs:
            raise ValueError(f"precondition {self.name!r} is unmet: state the setting that would meet it")

    def __str__(self) -> str:
        return f"{self.name}: {'met' if self.met else 'UNMET'} ({self.measured})"


def t_quantile(q: float, df: int) -> float:
    return float(stats.t.ppf(q, df))


@functools.lru_cache(maxsize=None)
def noncentrality(df: int) -> float:
    """The noncentrality at which a one-sided t test at the interval's level has power ``POWER``."""
    crit = t_quantile(0.5 + CONFIDENCE / 2, df)
    return float(optimize.brentq(lambda nc: stats.nct.sf(crit, df, nc) - POWER, 0.0, 100.0))


def seeds_per_half(sd: float, sesoi: float | None, min_seeds: int = MIN_SEEDS) -> int:
    """The smallest n >= ``min_seeds`` with MDE(n) = nc(n − 1)·sd/√n <= ``sesoi`` (same units); ``min_seeds`` when
    there is no ``sesoi`` or no spread; ``MAX_SEEDS + 1`` when even ``MAX_SEEDS`` is not enough."""
    if sesoi is None or not math.isfinite(sd) or sd <= 0:
        return min_seeds
    for n in range(max(min_seeds, 2), MAX_SEEDS + 1):
        if noncentrality(n - 1) * sd / math.sqrt(n) <= sesoi:
            return n
    return MAX_SEEDS + 1


@dataclass(frozen=True)
class Effect:
    """A paired difference A − B over matched seeds (``deltas[i]`` from ``seeds[i]``), in the units
    of the inputs; ``unit`` scales it for display (100: fractions shown as points)."""

    label: str
    deltas: tuple[float, ...]
    seeds: tuple = ()
    unit: float = 100.0

    def __post_init__(self) -> None:
        d = tuple(float(x) for x in self.deltas)
        if not d or not all(math.isfinite(x) for x in d):
            raise ValueError(f"{self.label}: deltas must be finite and non-empty, got {self.deltas!r}")
        object.__setattr__(self, "deltas", d)
        seeds = tuple(self.seeds) if self.seeds else tuple(range(len(d)))
        if len(seeds) != len(d) or len(set(seeds)) != len(seeds):
            raise ValueError(f"{self.label}: one distinct seed per delta, got seeds {self.seeds!r}")
        object.__setattr__(self, "seeds", seeds)

    @classmethod
    def paired(cls, label: str, a: Mapping, b: Mapping, unit: float = 100.0) -> Effect:
        """A − B on the seeds both arms ran (``a`` and ``b`` map seed → value). Seeds only one arm ran
        are left out: a mean over other seeds is never compared."""
        seeds = sorted(set(a) & set(b))
        if not seeds:
            raise ValueError(f"{label}: the arms share no seed ({sorted(a)} vs {sorted(b)})")
        return cls(label, tuple(float(a[s]) - float(b[s]) for s in seeds), tuple(seeds), unit)

    @property
    def n(self) -> int:
        return len(self.deltas)

    @property
    def mean(self) -> float:
        return float(np.mean(self.deltas))

    @property
    def sd(self) -> float:
        return float(np.std(self.deltas, ddof=1)) if self.n > 1 else float("nan")

    @property
    def half_width(self) -> float:
        """Half-width of the two-sided t interval (NaN with one seed)."""
        if self.n < 2:
            return float("nan")
        return t_quantile(0.5 + CONFIDENCE / 2, self.n - 1) * self.sd / math.sqrt(self.n)

    @property
    def interval(self) -> tuple[float, float]:
        return self.mean - self.half_width, self.mean + self.half_width

    @property
    def mde(self) -> float:
        """Minimal detectable effect: the true difference that a paired t-test at this noise and
        ``n`` detects (the interval excludes zero on its side) with probability ``POWER``, from the
        noncentral t distribution (NaN with one seed)."""
        if self.n < 2:
            return float("nan")
        return noncentrality(self.n - 1) * self.sd / math.sqrt(self.n)

    def halves(self) -> tuple[Effect, Effect]:
        """The effect on the first and on the second half of its seeds in seed order (two disjoint seed sets; an
        odd seed out is left out)."""
        order = sorted(range(self.n), key=lambda i: (str(type(self.seeds[i])), self.seeds[i]))
        h = self.n // 2
        a, b = order[:h], order[h : 2 * h]
        return (
            Effect(self.label, tuple(self.deltas[i] for i in a), tuple(self.seeds[i] for i in a), self.unit),
            Effect(self.label, tuple(self.deltas[i] for i in b), tuple(self.seeds[i] for i in b), self.unit),
        )

    def judge(self, margin: float = 0.0) -> str:
        """``holds`` / ``fails`` / ``inconclusive`` of "A − B > −margin" by this effect's interval alone (a
        regime check's tool; a claim's verdict is :func:`compendium.verdicts.rule.decide`'s)."""
        lo, hi = self.interval
        if not math.isfinite(lo):
            return INCONCLUSIVE
        if lo > -margin:
            return HOLDS
        if hi < -margin:
            return FAILS
        return INCONCLUSIVE

    def text(self, digits: int = 1) -> str:
        u, f = self.unit, f"{{:+.{digits}f}}"
        lo, hi = self.interval
        return (
            f"{self.label}: {f.format(u * self.mean)} [{f.format(u * lo)}, {f.format(u * hi)}]"
            if math.isfinite(lo)
            else f"{self.label}: {f.format(u * self.mean)} (n = 1)"
        )

    def as_dict(self) -> dict:
        return {
            "label": self.label,
            "deltas": list(self.deltas),
            "seeds": [_json_seed(s) for s in self.seeds],
            "unit": self.unit,
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> Effect:
        return cls(d["label"], tuple(d["deltas"]), tuple(_seed_back(s) for s in d["seeds"]), float(d["unit"]))


def _json_seed(s):
    if isinstance(s, (np.integer,)):
        return int(s)
    if isinstance(s, (np.floating,)):
        return float(s)
    if isinstance(s, tuple):
        return [_json_seed(x) for x in s]
    return s


def _seed_back(s):
    return tuple(_seed_back(x) for x in s) if isinstance(s, list) else s


@dataclass(frozen=True)
class NestedEffect:
    """A paired difference A − B measured on a grid: replication units (e.g. the seeds that synthesise a distilled
    set) times matched evaluation seeds (the students trained on each set). ``per_unit`` holds the effect over the
    evaluation seeds of each unit, what a verdict on one synthesis measures; ``across_units`` the effect over the
    units' means, whose interval also covers the synthesis's own randomness. The decomposition says which
    dominates. Example::

        >>> e = nested_effect("DWA - SRe2L", {(u, s): 0.02 * u + 0.001 * s for u in range(3) for s in range(3)})
        >>> round(e.between_sd / e.within_sd, 1)   # units spread 0.02 apart, seeds 0.001
        20.0
    """

    label: str
    per_unit: tuple[Effect, ...]
    across_units: Effect

    @property
    def within_sd(self) -> float:
        """Pooled SD of the evaluation seeds within a unit."""
        ss = sum((e.n - 1) * e.sd**2 for e in self.per_unit if e.n > 1)
        df = sum(e.n - 1 for e in self.per_unit if e.n > 1)
        return math.sqrt(ss / df) if df else float("nan")

    @property
    def between_sd(self) -> float:
        """SD of the units' mean effects (each over its evaluation seeds)."""
        return self.across_units.sd


def nested_effect(label: str, deltas: Mapping[tuple, float], unit: float = 100.0) -> NestedEffect:
    """:class:`NestedEffect` of ``{(replication unit, evaluation seed): A − B}``."""
    units = sorted({u for u, _ in deltas})
    per = tuple(
        Effect(
            f"{label} (unit {u})",
            tuple(deltas[(u, s)] for s in sorted(s for v, s in deltas if v == u)),
            tuple(sorted(s for v, s in deltas if v == u)),
            unit,
        )
        for u in units
    )
    return NestedEffect(label, per, Effect(label, tuple(e.mean for e in per), tuple(units), unit))


@dataclass(frozen=True)
class Evidence:
    """What the verdict rule decides a comparison from: the effects "A − B > −margin" (each a cell of the claim),
    the run's regime checks, and how the numbers are shown (``digits``). ``margin`` > 0 states a non-inferiority
    claim ("does not hurt by more than 0.5 points")."""

    effects: tuple[Effect, ...]
    preconditions: tuple[Precondition, ...] = ()
    margin: float = 0.0
    min_seeds: int = MIN_SEEDS
    digits: int = 1

    def __post_init__(self) -> None:
        if self.margin < 0 or not math.isfinite(self.margin):
            raise ValueError(f"margin must be finite and >= 0, got {self.margin}")
        if self.min_seeds < 2:
            raise ValueError(f"min_seeds must be >= 2 (an interval needs a spread), got {self.min_seeds}")

    def to_json(self) -> str:
        return json.dumps(
            {
                "effects": [e.as_dict() for e in self.effects],
                "preconditions": [asdict(p) for p in self.preconditions],
                "margin": self.margin,
                "min_seeds": self.min_seeds,
                "digits": self.digits,
            },
            ensure_ascii=False,
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> Evidence:
        d = json.loads(text)
        return cls(
            tuple(Effect.from_dict(e) for e in d["effects"]),
            tuple(Precondition(**p) for p in d["preconditions"]),
            float(d["margin"]),
            int(d["min_seeds"]),
            int(d["digits"]),
        )


def compare(
    effects: Effect | Iterable[Effect],
    preconditions: Iterable[Precondition] = (),
    *,
    margin: float = 0.0,
    min_seeds: int = MIN_SEEDS,
    digits: int = 1,
) -> dict:
    """The keyword arguments of :class:`Claim` for a comparison claim "A beats B" (every effect
    ``A − B > −margin``): its evidence, decided by the ``claims_ledger`` stage."""
    effects = [effects] if isinstance(effects, Effect) else list(effects)
    ev = Evidence(tuple(effects), tuple(preconditions), float(margin), int(min_seeds), int(digits))
    return {"evidence": ev.to_json(), "verdict": "", "tested": ""}


def not_tested(preconditions: Iterable[Precondition]) -> dict:
    """Claim keywords for a comparison that cannot run at this scale at all (no effect to measure), e.g. an arm
    the stage does not run: every unmet precondition named with the setting it needs."""
    pre = list(preconditions)
    if not any(not p.met for p in pre):
        raise ValueError("not_tested needs at least one unmet precondition")
    return compare([], pre)


# ---------------------------------------------------------------------------------------------
# Preconditions computed from a run: one library, intervals where numbers are compared


def reached(name: str, value: float, target: float, needs: str, fmt: str = "{:g}") -> Precondition:
    """``value >= target`` (e.g. iterations run against the paper's count: a setting, not a measurement)."""
    return Precondition(name, value >= target, f"{fmt.format(value)} of {fmt.format(target)}", needs)


def difference(label: str, values: Mapping, reference: Mapping | float, unit: float = 100.0) -> Effect | None:
    """values − reference over the seeds both hold (``reference`` a number: the same number on every seed, e.g.
    chance); None when they share no seed."""
    if not isinstance(reference, Mapping):
        reference = {s: float(reference) for s in values}
    seeds = sorted(set(values) & set(reference))
    finite = [s for s in seeds if math.isfinite(float(values[s])) and math.isfinite(float(reference[s]))]
    return Effect.paired(label, {s: values[s] for s in finite}, reference, unit) if finite else None


def clears(e: Effect | None, margin: float = 0.0) -> bool:
    """The effect's 95% interval lies above ``margin`` (one seed, or none: no interval, not cleared)."""
    return e is not None and e.n >= 2 and e.interval[0] > margin


def interval_text(e: Effect | None, digits: int = 1) -> str:
    """``+2.2 [-0.8, +5.1] (seeds 0,1,2)``, or why there is no interval."""
    if e is None:
        return "no shared seed"
    if e.n < 2:
        return f"{e.unit * e.mean:+.{digits}f} on one seed (no interval)"
    lo, hi = e.interval
    u = e.unit
    return (
        f"{u * e.mean:+.{digits}f} [{u * lo:+.{digits}f}, {u * hi:+.{digits}f}] (seeds {','.join(map(str, e.seeds))})"
    )


def above(
    name: str,
    values: Mapping,
    reference: Mapping | float,
    needs: str,
    margin: float = 0.0,
    unit: float = 100.0,
    digits: int = 1,
) -> Precondition:
    """``values`` (seed → measurement) above ``reference`` (seed → measurement, paired; or one number such as
    chance) by more than ``margin``: the 95% t interval of the paired difference lies above it. One seed gives
    no interval and is unmet. E.g. a trained baseline above the untrained network, a distilled set above its own
    initialisation.

    >>> above("BYOL above untrained", {0: .70, 1: .74, 2: .71}, {0: .69, 1: .69, 2: .70}, "more steps").met
    False
    >>> above("BYOL above untrained", {0: .79, 1: .80, 2: .81}, {0: .69, 1: .69, 2: .70}, "more steps").met
    True
    """
    e = difference(name, values, reference, unit)
    ref = f"{float(reference) * unit:.{digits}f}" if not isinstance(reference, Mapping) else "the reference"
    return Precondition(
        name,
        clears(e, margin),
        f"difference to {ref}: {interval_text(e, digits)}"
        + (f", margin {unit * margin:+.{digits}f}" if margin else ""),
        needs,
    )


def below_ceiling(
    name: str, values: Mapping, ceiling: Mapping | float, headroom: float, needs: str, unit: float = 100.0
) -> Precondition:
    """The evaluation is not at its ceiling: the interval of ``ceiling − values`` lies above ``headroom``."""
    e = (
        difference(name, ceiling, values, unit)
        if isinstance(ceiling, Mapping)
        else difference(name, {s: float(ceiling) for s in values}, values, unit)
    )
    return Precondition(
        name, clears(e, headroom), f"ceiling minus it: {interval_text(e)}, headroom {unit * headroom:.1f}", needs
    )


def plateaued(
    name: str, curve: Sequence[float], needs: str, window: int | None = None, rel_tol: float = plateau.REL_TOL
) -> Precondition:
    """An optimisation reached a plateau (:func:`compendium.core.plateau.is_plateau`): the 90% interval of the
    remaining trend over one window (a least-squares line through the last two windows, default a fifth of
    the curve each, as a fraction of the curve's total decrease) lies within ``±rel_tol``. Curves shorter
    than two windows of 3 have not plateaued (there is nothing to see)."""
    ti = plateau.trend_interval(curve, window)
    if ti is None:
        n = int(np.isfinite(np.asarray(list(curve), dtype=float)).sum())
        return Precondition(name, False, f"{n} points logged", needs)
    met = plateau.is_plateau(curve, rel_tol, window)
    return Precondition(
        name,
        met,
        f"trend over the last window {ti[0]:+.1%} ± {ti[1]:.1%} (s.e.) of the total decrease, "
        f"90% interval {'within' if met else 'not within'} ±{rel_tol:.0%}",
        needs,
    )


def same_evaluation(name: str, settings: Mapping[str, Mapping], needs: str) -> Precondition:
    """The compared arms share one evaluation: every arm's evaluation settings are equal."""
    vals = list(settings.values())
    diff = sorted({k for v in vals for k in v if any(w.get(k) != v.get(k) for w in vals)})
    return Precondition(
        name,
        not diff,
        "identical"
        if not diff
        else "differ in "
        + ", ".join(f"{k} ({', '.join(f'{a}: {s.get(k)}' for a, s in settings.items())})" for k in diff),
        needs,
    )
