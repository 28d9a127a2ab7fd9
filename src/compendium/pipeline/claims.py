"""The claims ledger: one row per claim of a paper, with our check, whether the run tests it, and
the verdict of one rule.

Each stage that checks claims writes its rows with :meth:`compendium.pipeline.report.Reporter.claims`
(``reports/claims/<stage>.csv``); the ``claims_ledger`` stage gathers every stage's rows into
``reports/claims.csv`` and ``reports/claims.md``.

Two kinds of check:

* exact or Monte-Carlo checks of a statement (a lemma, an equation): :func:`verdict_kw` turns the
  computed outcome into ``holds`` / ``fails`` / ``holds only under a condition``;
* comparisons of trained arms (A beats B): :func:`decide` is the one verdict rule. It takes the
  paired differences over matched seeds (:class:`Effect`) and the run's own :class:`Precondition`
  report (did the method reach its regime, is the baseline above an untrained network, do the arms
  share one evaluation) and answers

  ==========================  ================================================================
  ``not tested at this scale``  a precondition is unmet, or fewer than ``min_seeds`` matched seeds;
                                the row names the precondition and the setting that would meet it
  ``holds``                    every effect's 95% interval lies above ``-margin``
  ``fails``                    no effect holds and some effect's interval lies below ``-margin``
  ``holds only under a
  condition``                  some effects hold and others fail; the condition names where it holds
  ``inconclusive``             otherwise: an effect lies within its noise
  ==========================  ================================================================

  With at least ``2 * min_seeds`` matched seeds the rule also judges the two disjoint halves of the
  seeds on their own, and a verdict the halves disagree on is ``inconclusive``: a verdict must
  survive a rerun on other seeds.

A verdict is computed, never typed.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import optimize, stats

from compendium.core import plateau
from compendium.pipeline.tables import markdown_table

HOLDS = "holds"
FAILS = "fails"
CONDITIONAL = "holds only under a condition"
INCONCLUSIVE = "inconclusive"
NOT_TESTED = "not tested at this scale"
VERDICTS = (HOLDS, FAILS, CONDITIONAL, INCONCLUSIVE, NOT_TESTED)
COLUMNS = ("paper", "version", "location", "claim", "check", "verdict", "condition", "tested", "preconditions",
           "seeds", "effect", "interval", "mde", "scale", "ours", "paper_numbers", "stage")

#: One name per paper. Keys are the names rows may use; values the name the ledger shows.
PAPERS = {
    "ReLA": "ReLA", "DWA": "DWA", "SSDD": "SSDD", "KRR-ST": "SSDD",
    "DC": "DC", "DSA": "DSA", "DM": "DM", "KIP": "KIP", "DD": "DD",
    "SLDD/TDD": "SLDD/TDD", "SLDD": "SLDD/TDD", "TDD": "SLDD/TDD",
    "LD": "LD", "GTN": "GTN", "Mnemonics": "Mnemonics", "SRe2L": "SRe2L", "RDED": "RDED",
}

CONFIDENCE = 0.95  # two-sided interval of a paired difference
POWER = 0.80       # the power at which the minimal detectable effect is stated
MIN_SEEDS = 3


def canonical_paper(name: str) -> str:
    """The ledger's one name of a paper: ``"DC (Zhao et al.)"`` and ``"DC"`` are both ``"DC"``."""
    key = name.split(" (")[0].strip()
    if key not in PAPERS:
        raise ValueError(f"unknown paper {name!r}: add it to compendium.pipeline.claims.PAPERS ({sorted(PAPERS)})")
    return PAPERS[key]


@dataclass(frozen=True)
class Claim:
    """One ledger row. ``paper_numbers`` only ever holds numbers printed in the paper.

    ``tested`` is ``"yes"`` when the run is in the regime the claim is about (every precondition
    met, enough matched seeds); the columns from ``preconditions`` to ``mde`` are filled by
    :func:`decide` for comparisons and stay empty for exact checks. ``scale`` and ``stage`` are set
    by :meth:`compendium.pipeline.report.Reporter.claims`.
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

    def __post_init__(self) -> None:
        object.__setattr__(self, "paper", canonical_paper(self.paper))
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.verdict in (CONDITIONAL, NOT_TESTED) and not self.condition:
            raise ValueError(f"{self.location}: a verdict {self.verdict!r} must state its condition")
        if (self.tested == "no") != (self.verdict == NOT_TESTED):
            raise ValueError(f"{self.location}: tested={self.tested!r} contradicts verdict {self.verdict!r}")
        for f in ("paper", "location", "claim", "check", "ours"):
            if not getattr(self, f).strip():
                raise ValueError(f"{self.location or '?'}: field {f!r} is empty")


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
# Comparisons: effects over matched seeds, preconditions, and the verdict rule


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


def _t(q: float, df: int) -> float:
    return float(stats.t.ppf(q, df))


@functools.lru_cache(maxsize=None)
def _noncentrality(df: int) -> float:
    """The noncentrality at which a one-sided t test at the interval's level has power ``POWER``."""
    crit = _t(0.5 + CONFIDENCE / 2, df)
    return float(optimize.brentq(lambda nc: stats.nct.sf(crit, df, nc) - POWER, 0.0, 100.0))


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
        return _t(0.5 + CONFIDENCE / 2, self.n - 1) * self.sd / math.sqrt(self.n)

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
        return _noncentrality(self.n - 1) * self.sd / math.sqrt(self.n)

    def halves(self) -> tuple[Effect, Effect]:
        """The effect on the first and on the second half of its seeds (disjoint seed sets)."""
        h = self.n // 2
        return (Effect(self.label, self.deltas[:h], self.seeds[:h], self.unit),
                Effect(self.label, self.deltas[h:2 * h], self.seeds[h:2 * h], self.unit))

    def judge(self, margin: float = 0.0) -> str:
        """``holds`` / ``fails`` / ``inconclusive`` of the claim "A − B > −margin" for this effect."""
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
        return (f"{self.label}: {f.format(u * self.mean)} [{f.format(u * lo)}, {f.format(u * hi)}]"
                if math.isfinite(lo) else f"{self.label}: {f.format(u * self.mean)} (n = 1)")


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
        ss = sum((e.n - 1) * e.sd ** 2 for e in self.per_unit if e.n > 1)
        df = sum(e.n - 1 for e in self.per_unit if e.n > 1)
        return math.sqrt(ss / df) if df else float("nan")

    @property
    def between_sd(self) -> float:
        """SD of the units' mean effects (each over its evaluation seeds)."""
        return self.across_units.sd


def nested_effect(label: str, deltas: Mapping[tuple, float], unit: float = 100.0) -> NestedEffect:
    """:class:`NestedEffect` of ``{(replication unit, evaluation seed): A − B}``."""
    units = sorted({u for u, _ in deltas})
    per = tuple(Effect(f"{label} (unit {u})", tuple(deltas[(u, s)] for s in sorted(s for v, s in deltas if v == u)),
                       tuple(sorted(s for v, s in deltas if v == u)), unit) for u in units)
    return NestedEffect(label, per, Effect(label, tuple(e.mean for e in per), tuple(units), unit))


def _combine(per: Sequence[str], labels: Sequence[str]) -> tuple[str, str]:
    if all(v == HOLDS for v in per):
        return HOLDS, ""
    held = [lab for lab, v in zip(labels, per) if v == HOLDS]
    failed = [lab for lab, v in zip(labels, per) if v == FAILS]
    if failed and held:
        return CONDITIONAL, f"holds for {', '.join(held)}; fails for {', '.join(failed)}"
    if failed:
        return FAILS, ""
    return INCONCLUSIVE, ""


def decide(effects: Effect | Iterable[Effect], preconditions: Iterable[Precondition] = (), *,
           margin: float = 0.0, min_seeds: int = MIN_SEEDS, digits: int = 1) -> dict:
    """The verdict rule for a comparison claim "A beats B" (every effect ``A − B > −margin``; a
    positive ``margin`` states a non-inferiority claim such as "does not hurt by more than 0.5").

    Returns the keyword arguments of :class:`Claim` for the verdict and the columns ``tested``,
    ``preconditions``, ``seeds``, ``effect``, ``interval``, ``mde`` (see the module docstring).
    """
    effects = [effects] if isinstance(effects, Effect) else list(effects)
    if not effects:
        raise ValueError("decide needs at least one effect")
    if margin < 0 or not math.isfinite(margin):
        raise ValueError(f"margin must be finite and >= 0, got {margin}")
    if min_seeds < 2:
        raise ValueError(f"min_seeds must be >= 2 (an interval needs a spread), got {min_seeds}")
    pre = list(preconditions)
    n_min = min(e.n for e in effects)
    pre.append(Precondition(
        f">= {min_seeds} matched seeds", n_min >= min_seeds, f"{n_min} matched",
        f"{min_seeds} matched seeds on every arm"))

    seeds = sorted(set().union(*(e.seeds for e in effects)))
    fmt = f"{{:+.{digits}f}}"
    kw = {
        "preconditions": "; ".join(str(p) for p in pre),
        "seeds": ",".join(str(s) for s in seeds) if all(e.seeds == effects[0].seeds for e in effects)
        else "; ".join(f"{e.label}: {','.join(map(str, e.seeds))}" for e in effects),
        "effect": "; ".join(f"{e.label}: {fmt.format(e.unit * e.mean)}" for e in effects),
        "interval": "; ".join(
            f"{e.label}: [{fmt.format(e.unit * e.interval[0])}, {fmt.format(e.unit * e.interval[1])}]"
            for e in effects if math.isfinite(e.half_width)),
        "mde": "; ".join(f"{e.label}: {e.unit * e.mde:.{digits}f}" for e in effects if math.isfinite(e.mde)),
    }
    unmet = [p for p in pre if not p.met]
    if unmet:
        return {**kw, "verdict": NOT_TESTED, "tested": "no",
                "condition": "; ".join(f"{p.name} unmet ({p.measured}); would need {p.needs}" for p in unmet)}
    labels = [e.label for e in effects]
    v, cond = _combine([e.judge(margin) for e in effects], labels)
    if all(e.n >= 2 * min_seeds for e in effects):
        halves = [e.halves() for e in effects]
        va, _ = _combine([a.judge(margin) for a, _ in halves], labels)
        vb, _ = _combine([b.judge(margin) for _, b in halves], labels)
        if not (va == vb == v):
            return {**kw, "verdict": INCONCLUSIVE, "tested": "yes",
                    "condition": f"the disjoint seed halves disagree ({va} vs {vb}; all seeds: {v})"}
    return {**kw, "verdict": v, "tested": "yes", "condition": cond}


def not_tested(preconditions: Iterable[Precondition]) -> dict:
    """Claim keywords for a check that cannot run at this scale at all (no effect to measure), e.g.
    an arm the stage does not run: every unmet precondition named with the setting it needs."""
    unmet = [p for p in preconditions if not p.met]
    if not unmet:
        raise ValueError("not_tested needs at least one unmet precondition")
    return {"verdict": NOT_TESTED, "tested": "no", "preconditions": "; ".join(str(p) for p in preconditions),
            "condition": "; ".join(f"{p.name} unmet ({p.measured}); would need {p.needs}" for p in unmet)}


def combine_runs(a: str, b: str) -> str:
    """The verdict of two runs on disjoint seed sets: the shared verdict, ``inconclusive`` when they
    disagree (a verdict that flips on a rerun is not a verdict); ``not tested`` stays not tested."""
    for v in (a, b):
        if v not in VERDICTS:
            raise ValueError(f"unknown verdict {v!r}")
    if NOT_TESTED in (a, b):
        return NOT_TESTED
    return a if a == b else INCONCLUSIVE


# ---------------------------------------------------------------------------------------------
# Preconditions computed from a run


def reached(name: str, value: float, target: float, needs: str, fmt: str = "{:g}") -> Precondition:
    """``value >= target`` (e.g. iterations run against the paper's count)."""
    return Precondition(name, value >= target, f"{fmt.format(value)} of {fmt.format(target)}", needs)


def above(name: str, value: float, reference: float, needs: str, margin: float = 0.0,
          fmt: str = "{:.1%}") -> Precondition:
    """``value > reference + margin`` (e.g. a trained baseline above the untrained network, a distilled
    set above its own initialisation)."""
    return Precondition(name, value > reference + margin,
                        f"{fmt.format(value)} vs {fmt.format(reference)}", needs)


def below_ceiling(name: str, value: float, ceiling: float, headroom: float, needs: str,
                  fmt: str = "{:.1%}") -> Precondition:
    """The evaluation is not at its ceiling: ``ceiling − value >= headroom``."""
    return Precondition(name, ceiling - value >= headroom,
                        f"{fmt.format(value)}, ceiling {fmt.format(ceiling)}", needs)


def plateaued(name: str, curve: Sequence[float], needs: str, window: int | None = None,
              rel_tol: float = plateau.REL_TOL) -> Precondition:
    """An optimisation reached a plateau (:func:`compendium.core.plateau.is_plateau`): the 90% interval of the
    remaining trend over one window (a least-squares line through the last two windows, default a fifth of
    the curve each, as a fraction of the curve's total decrease) lies within ``±rel_tol``. Curves shorter
    than two windows of 3 have not plateaued (there is nothing to see)."""
    ti = plateau.trend_interval(curve, window)
    if ti is None:
        n = int(np.isfinite(np.asarray(list(curve), dtype=float)).sum())
        return Precondition(name, False, f"{n} points logged", needs)
    met = plateau.is_plateau(curve, rel_tol, window)
    return Precondition(name, met, f"trend over the last window {ti[0]:+.1%} ± {ti[1]:.1%} (s.e.) of the total decrease, "
                        f"90% interval {'within' if met else 'not within'} ±{rel_tol:.0%}", needs)


def same_evaluation(name: str, settings: Mapping[str, Mapping], needs: str) -> Precondition:
    """The compared arms share one evaluation: every arm's evaluation settings are equal."""
    vals = list(settings.values())
    diff = sorted({k for v in vals for k in v if any(w.get(k) != v.get(k) for w in vals)})
    return Precondition(name, not diff, "identical" if not diff else
                        "differ in " + ", ".join(f"{k} ({', '.join(f'{a}: {s.get(k)}' for a, s in settings.items())})"
                                                 for k in diff), needs)


# ---------------------------------------------------------------------------------------------
# The ledger


def to_frame(rows):
    return pd.DataFrame([asdict(r) for r in rows], columns=list(COLUMNS))


def read_all(folder: Path):
    """Every stage's rows from ``folder/*.csv``, in stage-name order."""
    files = sorted(Path(folder).glob("*.csv"))
    if not files:
        return pd.DataFrame(columns=list(COLUMNS))
    frames = []
    for f in files:
        frame = pd.read_csv(f, dtype=str, keep_default_na=False)
        missing = set(COLUMNS) - set(frame.columns)
        if missing:
            raise ValueError(f"{f} lacks columns {sorted(missing)}: rerun its stage")
        frames.append(frame)
    df = pd.concat(frames, ignore_index=True)
    bad = sorted(set(df["verdict"]) - set(VERDICTS))
    if bad:
        raise ValueError(f"unknown verdicts {bad} under {folder}")
    return df[list(COLUMNS)]


def summary(ledger) -> pd.DataFrame:
    """Verdict counts per paper (one column per verdict, the tested share beside)."""
    if not len(ledger):
        return pd.DataFrame(columns=["paper", *VERDICTS, "claims", "tested"])
    t = pd.crosstab(ledger["paper"], ledger["verdict"]).reindex(columns=list(VERDICTS), fill_value=0)
    t["claims"] = t.sum(axis=1)
    t["tested"] = ledger.groupby("paper")["tested"].apply(lambda s: int((s == "yes").sum()))
    return t.reset_index()


def not_tested_list(ledger) -> pd.DataFrame:
    """The claims this run cannot test, each with the unmet precondition and the setting it needs."""
    nt = ledger[ledger["verdict"] == NOT_TESTED]
    return nt[["paper", "location", "claim", "condition", "stage"]].reset_index(drop=True)


def render_markdown(ledger, title: str = "Claims ledger") -> str:
    """``claims.md``: verdict counts per paper, then one section per paper with each claim's verdict,
    effect and interval over matched seeds, and the condition or unmet precondition."""
    md = [f"# {title}", "",
          "Generated by the `claims_ledger` stage from `reports/claims/<stage>.csv`; do not edit by hand.",
          "Paper numbers are the paper's; *ours* are computed by the stage named in each row. Comparisons",
          "are judged by one rule (`compendium.pipeline.claims.decide`): paired differences over matched seeds, a 95%",
          "t interval, at least 3 seeds, and the run's preconditions (the method in its regime, the baseline",
          "above an untrained network, one shared evaluation); otherwise *not tested at this scale*.", ""]
    if not len(ledger):
        return "\n".join(md + ["_No claims have been checked yet._", ""])
    md += ["## Verdicts per paper", "", markdown_table(summary(ledger)), ""]
    cols = ["location", "claim", "verdict", "effect", "interval", "seeds", "condition", "ours", "paper_numbers", "stage"]
    for paper, rows in ledger.groupby("paper", sort=True):
        md += [f"## {paper}", "", markdown_table(rows[cols]), ""]
    return "\n".join(md)


def changes(before, after) -> pd.DataFrame:
    """Claims whose verdict differs between two ledgers (matched on paper, location and claim)."""
    key = ["paper", "location", "claim"]
    m = before[key + ["verdict"]].merge(after[key + ["verdict"]], on=key, how="inner", suffixes=(" before", " after"))
    return m[m["verdict before"] != m["verdict after"]].reset_index(drop=True)
