"""The claims registry: every claim the compendium checks, declared once in ``registry.yaml``.

A declaration gives the claim a stable ``id`` and states its paper, version, location and wording (what the
ledger shows), the stage whose recorded tables it is checked from, its kind (``comparison`` of trained arms or
``exact`` check of a statement), the metric its effects are in, and, for a comparison, its smallest effect of
interest (``sesoi``, in the metric's display units) with where that number comes from (``sesoi_source``), and the
parameter of its recording stages that lists its matched seeds (``seeds_key``, default ``seeds``: what the power
plan sets when it funds the claim), and where each further seed also needs work made outside ``dvc repro`` (a
synthesis per seed of a resumable protocol), what that costs (``seed_cost``: the command and its time a seed),
which the ledger adds to the plan's stage minutes. A
comparison without its own ``sesoi`` takes the metric's default (:data:`METRICS`); a metric without a natural
scale has none, and such a claim can hold or fail (reversed) but never be declared absent.

The ``claims_ledger`` stage reads every stage's rows, finds each row's declaration (:func:`match`) and refuses a
row without one, a claim written twice, or a comparison whose non-inferiority margin disagrees with its
declared ``sesoi``. Stages never read this file, so a change to one declaration reruns the ledger alone.

Example::

    >>> reg = load()
    >>> d = reg.by_id["rela.table-1-rand-column.even-randomly-initialised-network"]
    >>> (d.paper, d.kind, d.metric, d.smallest_effect)
    ('ReLA', 'comparison', 'accuracy', 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import yaml

from compendium.verdicts.claims import canonical_paper

FILE = Path(__file__).with_name("registry.yaml")
KINDS = ("comparison", "exact")

#: The default smallest effect of interest per metric (display units), with its reason; None: no natural scale.
METRICS: dict[str, tuple[float | None, str]] = {
    "accuracy": (
        1.0,
        "default for top-1 accuracy: 1 point, the smallest gain these papers' tables report as a "
        "gain (their per-seed spreads are 0.1-1 point)",
    ),
    "rank correlation": (0.1, "default for a rank correlation: 0.1 of Spearman's ρ"),
    "similarity": (0.01, "default for a similarity on [0, 1]: 0.01"),
    "budget share": (
        10.0,
        "default for a training budget: 10 points of the full budget (the step of the papers' budget grids)",
    ),
    "loss": (None, "a loss or spread without a natural scale: direction only (no smallest effect, never 'absent')"),
    "none": (None, "an exact check: no effect"),
}


@dataclass(frozen=True)
class Declaration:
    id: str
    paper: str
    version: str
    location: str
    claim: str
    stage: str
    kind: str
    metric: str
    sesoi: float | None = None
    sesoi_source: str = ""
    seeds_key: str = "seeds"  # the recording stages' parameter that lists the comparison's matched seeds
    headline: bool = False  # one of its paper's central claims: the README's first screen names its verdict
    seed_cost: str = ""  # what each further seed needs outside `dvc repro` (a command and its time), if anything

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.id}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.metric not in METRICS:
            raise ValueError(f"{self.id}: metric must be one of {sorted(METRICS)}, got {self.metric!r}")
        if (self.kind == "exact") != (self.metric == "none"):
            raise ValueError(f"{self.id}: an exact check has metric 'none', a comparison a metric with a scale")
        if self.sesoi is not None and (not math.isfinite(self.sesoi) or self.sesoi <= 0):
            raise ValueError(f"{self.id}: sesoi must be a positive number, got {self.sesoi!r}")
        if not isinstance(self.headline, bool):
            raise ValueError(f"{self.id}: headline is true or false, got {self.headline!r}")
        if self.sesoi is not None and not self.sesoi_source:
            raise ValueError(f"{self.id}: a sesoi of its own states where it comes from (sesoi_source)")
        object.__setattr__(self, "paper", canonical_paper(self.paper))

    @property
    def key(self) -> tuple[str, str, str]:
        return self.paper, self.location, self.claim

    @property
    def smallest_effect(self) -> float | None:
        """The smallest effect of interest: the claim's own, else its metric's default."""
        return self.sesoi if self.sesoi is not None else METRICS[self.metric][0]

    @property
    def smallest_effect_source(self) -> str:
        return self.sesoi_source if self.sesoi is not None else METRICS[self.metric][1]


@dataclass(frozen=True)
class Registry:
    declarations: tuple[Declaration, ...]

    def __post_init__(self) -> None:
        for what, keys in (("id", [d.id for d in self.declarations]), ("claim", [d.key for d in self.declarations])):
            dup = sorted({str(k) for k in keys if keys.count(k) > 1})
            if dup:
                raise ValueError(f"{FILE.name}: declared twice ({what}): {dup[:3]}")

    @cached_property
    def by_id(self) -> dict[str, Declaration]:
        return {d.id: d for d in self.declarations}

    @cached_property
    def by_key(self) -> dict[tuple[str, str, str], Declaration]:
        return {d.key: d for d in self.declarations}

    def stages(self) -> list[str]:
        return sorted({d.stage for d in self.declarations})


def load(path: Path = FILE) -> Registry:
    """The declarations of ``path`` (a YAML list of mappings)."""
    items = yaml.safe_load(Path(path).read_text())
    if not isinstance(items, list):
        raise ValueError(f"{path}: expected a list of claim declarations")
    fields = set(Declaration.__dataclass_fields__)
    out = []
    for i, item in enumerate(items):
        bad = set(item) - fields
        missing = {"id", "paper", "version", "location", "claim", "stage", "kind", "metric"} - set(item)
        if bad or missing:
            raise ValueError(
                f"{path}: declaration {i} ({item.get('id', '?')}): unknown keys {sorted(bad)}, "
                f"missing {sorted(missing)}"
            )
        out.append(
            Declaration(
                **{k: (str(v) if k not in ("sesoi", "headline") and v is not None else v) for k, v in item.items()}
            )
        )
    return Registry(tuple(out))


def match(registry: Registry, rows: Iterable[Mapping]) -> list[Declaration | None]:
    """The declaration of each row (matched on paper, location and claim), None for a row that has none (the ledger
    shows it as undeclared, naming what to add); a claim written twice or written as the wrong kind is an error. (A
    declared claim without a row is the ledger's to show.)"""
    out: list[Declaration | None] = []
    for r in rows:
        d = registry.by_key.get((canonical_paper(r["paper"]), r["location"], r["claim"]))
        if d is not None:
            if r.get("stage") and r["stage"] != d.stage:
                raise ValueError(f"{d.id}: declared for stage {d.stage!r}, written by {r['stage']!r}")
            kind = "comparison" if r.get("evidence") else "exact"
            if kind != d.kind and r.get("evidence") != "legacy":
                raise ValueError(f"{d.id}: declared a {d.kind} claim, its stage wrote a {kind} row")
        out.append(d)
    seen = [d.id for d in out if d is not None]
    dup = sorted({i for i in seen if seen.count(i) > 1})
    if dup:
        raise ValueError(f"claims written twice: {dup}")
    return out
