"""The run records of ReLA's comparison stages, and what is computed from them.

Every trained or probed arm of ``rela_budget``, ``rela_arch``, ``rela_methods`` and ``rela_ablations`` leaves
one row (:func:`compendium.rela.experiment.run`) with at least ``seed``, ``prior`` (empty, or NaN once read
back from CSV, for the plain method), ``untrained``, ``budget``, ``probe``, ``steps``, ``switch step``,
``schedule`` and ``w``. This module selects from such a ``runs`` frame, counts the steps each run trained on
its SSL loss, and computes the two results camera-ready Table 1 and Fig. 4c report from them: the gap
closure and the matching budget. Both read only runs whose SSL phase ran: a "+ReLA" run whose λ switch never
fired trained on the ReLA loss alone and is not the paper's BYOL + ReLA (camera-ready Algorithm 1).

The stages write their ``runs`` exactly with a ``settings`` table (:mod:`compendium.core.records`), so that
``claims_ledger`` judges them from the files (:mod:`compendium.pipeline.checks.rela`).

Example::

    >>> import pandas as pd
    >>> r = pd.DataFrame([{"seed": 0, "prior": "rand", "untrained": False, "budget": 0.1, "probe": 0.7,
    ...                    "steps": 4000, "switch step": 1000.0, "schedule": "switch", "w": 0.0}])
    >>> ssl_phase_steps(r.iloc[0]), probes(r, prior="rand", budget=0.1)
    (3000, {0: 0.7})
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from compendium.rela.experiment import matching_budget


def normalized(runs: pd.DataFrame) -> pd.DataFrame:
    """``runs`` with ``prior`` as a string ("" for the plain method, also where a CSV read it back as NaN)."""
    return runs.assign(prior=runs["prior"].fillna("").astype(str))


def seed_text(seeds: Iterable) -> str:
    """Seeds as a short text: ``0-4`` for a run of three or more, else ``0,2``."""
    s = sorted(int(x) for x in seeds)
    if len(s) > 2 and s == list(range(s[0], s[-1] + 1)):
        return f"{s[0]}-{s[-1]}"
    return ",".join(map(str, s))


def select(runs: pd.DataFrame, **where) -> pd.DataFrame:
    """The rows whose columns equal the given values (floats compared with a tolerance)."""
    sel = normalized(runs)
    for k, v in where.items():
        col = sel[k]
        sel = sel[np.isclose(col.astype(float), v)] if isinstance(v, float) else sel[col == v]
    return sel


def probes(runs: pd.DataFrame, **where) -> dict:
    """seed -> probe of the rows matching ``where`` (one row per seed)."""
    sel = select(runs, **where)
    if sel["seed"].duplicated().any():
        raise ValueError(f"{where}: more than one row per seed")
    return {int(s): float(p) for s, p in zip(sel["seed"], sel["probe"])}


def ssl_phase_steps(row: Mapping) -> int:
    """Optimizer steps in which the SSL loss had weight > 0, from the run's records: every step of a
    plain run, of v1's continuous λ (λ <= 0.8, v1 Algorithm 1) and of a constant λ < 1; the steps
    after the switch step of a one-way switch (the camera-ready rule, "first w"), none if it never fired."""
    steps = int(row["steps"])
    prior = row.get("prior")
    if row.get("untrained"):
        return 0
    if prior is None or (isinstance(prior, float) and math.isnan(prior)) or prior == "":
        return steps
    schedule = row["schedule"]
    if schedule == "v1":
        return steps
    if schedule == "constant":
        return steps if float(row["w"]) < 1 else 0
    switch = row.get("switch step")
    if switch is None or pd.isna(switch):
        return 0
    return steps - int(switch)


def ssl_phase_seeds(runs: pd.DataFrame, prior: str, budget: float) -> set:
    """The seeds on which the +ReLA arm (``prior``, ``budget``) trained some steps on the SSL loss."""
    sel = select(runs, prior=prior, untrained=False, budget=float(budget))
    return {int(r["seed"]) for _, r in sel.iterrows() if ssl_phase_steps(r) > 0}


def byol(runs: pd.DataFrame, budget: float) -> dict:
    """seed -> probe of plain BYOL at ``budget`` (1.0: BYOL*)."""
    return probes(runs, prior="", untrained=False, budget=float(budget))


def rela(runs: pd.DataFrame, prior: str, budget: float) -> dict:
    """seed -> probe of BYOL + ReLA with ``prior`` at ``budget``."""
    return probes(runs, prior=prior, untrained=False, budget=float(budget))


def untrained(runs: pd.DataFrame, **where) -> dict:
    """seed -> probe of the untrained network."""
    return probes(runs, untrained=True, **where)


def mean_over(d: Mapping, seeds) -> float:
    return float(np.mean([d[s] for s in seeds]))


def gap_closures(runs: pd.DataFrame, priors: list, budgets: list, *, label: Callable[[str], str]) -> pd.DataFrame:
    """(ReLA@r − BYOL@r) / (BYOL* − BYOL@r) per prior and budget on the seeds all three arms ran and
    the +ReLA run reached its SSL phase (camera-ready Table 1; the paper's CF-10 cells give
    (81.1 − 58.3) / (82.7 − 58.3) = 93%). A run whose switch never fired is not the paper's method:
    its cell stays empty, and ``ReLA-only seeds`` counts the runs left out. ``label``: a prior's name in
    the table."""
    out, full = [], byol(runs, 1.0)
    for p in priors:
        for b in budgets:
            r, lo = rela(runs, p, b), byol(runs, b)
            ran = sorted(set(r) & set(lo) & set(full))
            seeds = sorted(set(ran) & ssl_phase_seeds(runs, p, b))
            gap = mean_over(full, seeds) - mean_over(lo, seeds) if seeds else float("nan")
            out.append(
                {
                    "prior": label(p),
                    "budget": f"{b:.0%}",
                    "seeds": seed_text(seeds),
                    "ReLA-only seeds": len(ran) - len(seeds),
                    "gap closure (ours)": (mean_over(r, seeds) - mean_over(lo, seeds)) / gap
                    if gap > 0
                    else float("nan"),
                }
            )
    return pd.DataFrame(out)


def matching_budgets(cells: Mapping[float, Mapping], target: Mapping) -> dict:
    """Per seed, the budget at which the probe reaches that seed's ``target`` (camera-ready Fig. 4c read per seed):
    ``cells`` maps a budget to seed -> probe. Linear in the probe between the last grid budget below the target and
    the first at or above it; the smallest budget of the grid when that one already reaches it (an upper bound).
    Seeds that never reach it in the grid are left out.

    >>> matching_budgets({0.1: {0: 0.70}, 0.2: {0: 0.80}}, {0: 0.75})
    {0: 0.15000000000000002}
    """
    grid = sorted(cells)
    out = {}
    for s, t in target.items():
        prev = None
        for b in grid:
            v = cells[b].get(s)
            if v is None:
                break
            if v >= t:
                out[s] = b if prev is None else prev[0] + (b - prev[0]) * (t - prev[1]) / (v - prev[1])
                break
            prev = (b, v)
    return out


def cost_table(runs: pd.DataFrame, priors: list, budgets: list, *, label: Callable[[str], str]) -> pd.DataFrame:
    """The smallest budget whose probe reaches BYOL* (camera-ready Fig. 4c), per arm, on the seeds
    where the arm ran every budget and BYOL* ran too, and (+ReLA) reached its SSL phase at every
    budget; training seconds are means over those seeds, where ``runs`` has them (the stage's own runs; the
    published ``runs`` table does not: :mod:`compendium.core.volatile`). Arms are named ``BYOL`` and
    ``+ReLA <label>``."""
    r, full, rows = normalized(runs), byol(runs, 1.0), []
    timed = "train seconds" in r.columns
    r = r[~r["untrained"].astype(bool)]
    for p in [""] + list(priors):
        cells = [probes(runs, prior=p, untrained=False, budget=float(b)) for b in budgets]
        seeds = set(full).intersection(*cells)
        if p:
            seeds = seeds.intersection(*[ssl_phase_seeds(runs, p, b) for b in budgets])
        seeds = sorted(seeds)
        mb = matching_budget(budgets, [mean_over(c, seeds) for c in cells], mean_over(full, seeds)) if seeds else None
        sec = lambda q, b: float(
            r[(r["prior"] == q) & np.isclose(r["budget"], b) & r["seed"].isin(seeds)]["train seconds"].mean()
        )
        row = {"arm": "BYOL" if not p else f"+ReLA {label(p)}", "seeds": seed_text(seeds), "matching budget": mb}
        if timed:
            row["train seconds at that budget"] = sec(p, mb) if mb is not None else float("nan")
            row["BYOL* train seconds"] = sec("", 1.0)
        rows.append(row)
    return pd.DataFrame(rows)
