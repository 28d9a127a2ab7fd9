"""DD-Ranking's IOR / HLR table of a stage: :func:`ior_hlr_table`, the per-cell paired intervals over matched seeds
(:meth:`compendium.verdicts.claims.Effect.paired`) of :func:`compendium.distill.ranking.matched_runs`' per-seed
runs. A module of its own, light to import (it trains nothing): stages that build their arms themselves (dd_unrolled,
dd_text) import only this; :mod:`compendium.pipeline.ranking` builds and evaluates the arms of the others and
re-exports :func:`ior_hlr_table`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from compendium.distill import ranking
from compendium.verdicts.claims import Effect

NO_TEACHER = "IOR not defined (no teacher)"
ONE_SEED = "one seed: no interval (n = 1)"


def ior_hlr_table(
    frame: pd.DataFrame,
    keys: Sequence[str] = ("method", "ipc"),
    by: Sequence[str] = (),
    weight: float = ranking.DEFAULT_WEIGHT,
    *,
    full_by: Sequence[str] | None = None,
    ior_defined: bool = True,
    note: str = "",
) -> pd.DataFrame:
    """One row per (``keys``, ``by``): the matched seeds, the mean accuracy of the four arms (syn under the
    method's evaluation, random real under it, syn hard, full hard), IOR and HLR with the 95% interval of
    the paired difference over the matched seeds (:meth:`Effect.paired`), and the label-robust score (the
    mean of the per-seed scores, as DD-Ranking reports it, with the t interval of that mean). Accuracies,
    IOR and HLR are fractions (accuracies in [0, 1] are required: :func:`~compendium.distill.ranking.as_fractions`),
    LRS lies in [0, 1]; an interval is NaN with one seed. ``frame``: as
    :func:`compendium.distill.ranking.matched_runs` takes it, as do ``full_by`` and ``ior_defined`` (``False``: IOR, its
    interval and LRS are NaN, the note says IOR is not defined). A ``note`` column appears when a row has one:
    ``note``, "IOR not defined (no teacher)" without IOR, "one seed: no interval (n = 1)"."""
    runs = ranking.matched_runs(frame, keys, by, weight, full_by=full_by, ior_defined=ior_defined)
    group = [*keys, *by, "evaluation"]
    rows = []
    for gkey, g in runs.groupby(group, sort=False, dropna=False):
        per = {c: dict(zip(g["seed"], g[c])) for c in ranking.RUN_COLUMNS}
        hlr = Effect.paired("HLR", per["full hard"], per["syn hard"])
        effects = {
            "IOR": Effect.paired("IOR", per["syn"], per["random"]) if ior_defined else None,
            "HLR": hlr,
            "LRS": Effect("LRS", tuple(g["LRS"]), tuple(g["seed"])) if ior_defined else None,
        }
        row = dict(zip(group, gkey))
        row.update(
            {
                "seeds": ", ".join(str(s) for s in hlr.seeds),
                "n": hlr.n,
                **{f"acc {c}": float(g[c].mean()) for c in ("syn", "random", "syn hard", "full hard")},
            }
        )
        for name, eff in effects.items():
            lo, hi = eff.interval if eff is not None else (math.nan, math.nan)
            row.update({name: eff.mean if eff is not None else math.nan, f"{name} low": lo, f"{name} high": hi})
        notes = [note] + ([NO_TEACHER] if not ior_defined else []) + ([ONE_SEED] if hlr.n == 1 else [])
        row["note"] = "; ".join(n for n in notes if n)
        rows.append(row)
    out = pd.DataFrame(rows)
    return out if out.empty or out["note"].astype(bool).any() else out.drop(columns="note")
