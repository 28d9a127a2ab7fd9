"""What the committed power plan funds, as the stage runner checks it before a stage computes anything.

``power_plan.csv`` (written by :mod:`compendium.verdicts.power`) marks the comparisons the default run funds
(``funded`` = :data:`FUNDED`) with the seeds they need and the parameter of their recording stages that lists
those seeds (``seeds_key``). :func:`unmet` names, for one stage and its resolved parameters, every such parameter
that lists fewer seeds than the plan funds, with the fix; ``compendium.pipeline.nbrun`` refuses to run the stage
then. This module reads the plan file alone (not the registry), so the runner's sources, which every stage
depends on, do not include the claims' declarations, and the plan is no dependency of the stages it governs:
it decides what they must run, not what they compute.

    >>> import pandas as pd
    >>> p = pd.DataFrame([{"id": "x.a", "records": "s", "seeds_planned": "8", "funded": "cpu", "seeds_key": "seeds"}])
    >>> unmet("s", {"scale": "cpu", "seeds": [0, 1, 2]}, p)[0][:14]
    'seeds: 3 seeds'
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

FILE = Path(__file__).with_name("power_plan.csv")
FUNDED = "cpu"  # the ``funded`` value of a comparison the default run must run at its planned seeds


def read(path: Path = FILE) -> pd.DataFrame:
    """The committed plan (strings; empty frame when there is none)."""
    if not Path(path).is_file():
        return pd.DataFrame(columns=["id", "records", "seeds_planned", "funded", "seeds_key"])
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def required_seeds(plan_frame: pd.DataFrame) -> dict[tuple[str, str], tuple[int, list[str]]]:
    """(stage, seeds parameter) -> (the most seeds the funded comparisons ask of it, those comparisons' ids)."""
    need: dict[tuple[str, str], tuple[int, list[str]]] = {}
    for _, r in plan_frame.iterrows():
        if str(r.get("funded", "")) != FUNDED:
            continue
        key = str(r.get("seeds_key") or "seeds")
        for s in str(r["records"]).split():
            n, ids = need.get((s, key), (0, []))
            need[(s, key)] = (max(n, int(float(r["seeds_planned"]))), ids + [str(r["id"])])
    return need


def unmet(stage: str, values: Mapping, plan_frame: pd.DataFrame | None = None) -> list[str]:
    """The problems (``key: ...``, each naming the fix) of running ``stage`` with ``values`` (its resolved
    parameters) at the ``cpu`` scale: a parameter that lists fewer seeds than the committed plan funds (a list of
    seeds, or a count). Empty at the other scales."""
    if values.get("scale", "cpu") != "cpu":
        return []
    plan_frame = read() if plan_frame is None else plan_frame
    problems = []
    for (s, key), (n, ids) in sorted(required_seeds(plan_frame).items()):
        if s != stage:
            continue
        if key not in values:
            problems.append(
                f"{key}: the power plan funds {ids[0]} with {n} seeds on this parameter, which the stage "
                "does not have; declare the claim's seeds_key in src/compendium/verdicts/registry.yaml "
                "and rewrite the plan (python -m compendium.verdicts.power --write)"
            )
            continue
        v = values[key]
        have = len(v) if isinstance(v, (list, tuple)) else int(v)
        if have < n:
            problems.append(
                f"{key}: {have} seeds, but the committed power plan (src/compendium/verdicts/power_plan.csv) "
                f"funds {', '.join(ids)} with {n}; set {key} to {n} seeds (e.g. {list(range(n))})"
            )
    return problems
