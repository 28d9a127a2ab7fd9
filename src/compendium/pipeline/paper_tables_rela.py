"""ReLA's printed numbers that ``rela_budget`` shows beside ours (always labelled "paper"): the camera-ready
Table 1's CIFAR-10 cells, its gap closures and its budget curves, per prior in the column the prior stands
in for (:func:`compendium.pipeline.paper_tables.paper_column`)."""

from __future__ import annotations

import pandas as pd

from compendium.pipeline import paper_tables as PT


def paper_table1(priors: list, budgets: list) -> pd.DataFrame:
    """The camera-ready Table 1's CIFAR-10 cells beside ours: per budget BYOL and, per prior, the
    column it stands in for (:func:`compendium.pipeline.paper_tables.paper_column`), BYOL* on the
    first row; empty where the paper has no such cell (it ran 10, 20 and 50%)."""
    rows = []
    for b in budgets:
        pct = f"{round(100 * b)}"
        prow = {
            "budget": f"{b:.0%}",
            "BYOL": PT.cell("v2_table1", {"Data": "CF-10", "%": pct}, "BYOL") if pct in ("10", "20", "50") else "",
        }
        for p in priors:
            col = PT.paper_column(p)
            prow[f"+ReLA {col}"] = (
                PT.cell("v2_table1", {"Data": "CF-10", "%": pct}, col) if col and pct in ("10", "20", "50") else ""
            )
        prow["BYOL*"] = PT.cell("v2_table1", {"Data": "CF-10", "%": "10"}, "BYOL*") if b == budgets[0] else ""
        rows.append(prow)
    return pd.DataFrame(rows)


def paper_gap_closures(priors: list, budgets: list) -> list[float]:
    """The camera-ready Table 1's CIFAR-10 gap closure (ReLA@r − BYOL@r) / (BYOL* − BYOL@r) of the column
    each prior stands in for, in the order of :func:`gap_closures` (prior, then budget); NaN where the
    paper has no cell."""
    v = lambda c, pct: PT.value(PT.cell("v2_table1", {"Data": "CF-10", "%": pct}, c))
    return [
        (v(PT.paper_column(p), pct) - v("BYOL", pct)) / (v("BYOL*", "10") - v("BYOL", pct))
        if PT.paper_column(p) and pct in ("10", "20", "50")
        else float("nan")
        for p in priors
        for pct in (f"{round(100 * b)}" for b in budgets)
    ]


def paper_budget_curves(priors: list) -> tuple[list[tuple[str, str, list, list]], float]:
    """The camera-ready Table 1's CIFAR-10 rows as curves: (our column, the paper's column, budgets in
    %, accuracies) for BYOL and each prior's analogue (a prior without one has no curve), and BYOL*."""
    paper = PT.table("v2_table1")
    paper = paper[paper["Data"] == "CF-10"]
    curves = [
        (c, pc, paper["%"].astype(float), [PT.value(v) for v in paper[pc]])
        for c, pc in [("BYOL", "BYOL")] + [(PT.prior_label(p), PT.paper_column(p)) for p in priors]
        if pc is not None
    ]
    return curves, PT.value(paper["BYOL*"].iloc[0])
