"""Where each stage's time goes: the per-stage profile of each stage's last run (no new compute).

Reads the measured minutes per stage (`reports/stage_minutes.json`, papermill's duration of each stage's
last run) and every stage table that logs optimizer steps and training seconds per run
(`reports/tables/<stage>/*.csv` with `steps` and `train seconds` columns: the ReLA stages' runs, the
distillation stages' student evaluations). Per stage and kind of run it writes the runs, the steps,
the seconds per step and the share of the stage's wall time those runs took (training seconds summed
over runs / (stage seconds x workers); stages run 2 workers on 2 cores, so a share near 100% means the
stage is its runs). Beside each stage's minutes it counts the ledger rows the stage judges (`reports/claims.csv`:
tested / all, and of those the comparisons of trained arms); a stage that only feeds others (`priors`,
`dd_teachers`, `dd_inversion`, `dd_nas`) judges none itself. Writes `benchmarks/stage_profile.md`.

    python benchmarks/stage_profile.py [--workers 2]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from compendium.pipeline import timings

ROOT = Path(__file__).resolve().parents[1]
KIND_COLUMNS = ("method", "arch", "student", "schedule", "labels")  # what tells runs apart, where present


def kind_of(frame: pd.DataFrame) -> pd.Series:
    """A run's kind: the values of the columns in :data:`KIND_COLUMNS` the table has, joined; ReLA runs
    are split into plain, +ReLA and untrained."""
    parts = []
    if "prior" in frame:
        parts.append(frame["prior"].fillna("").map(lambda p: "+ReLA" if p else "plain"))
    if "untrained" in frame:
        parts.append(frame["untrained"].map(lambda u: "untrained" if u else ""))
    for c in KIND_COLUMNS:
        if c in frame:
            col = frame[c].astype(str)
            if c == "schedule" and "prior" in frame:  # a plain run has no λ schedule
                col = col.where(frame["prior"].fillna("").astype(bool), "")
            parts.append(col)
    if not parts:
        return pd.Series(["all"] * len(frame), index=frame.index)
    out = parts[0].astype(str)
    for p in parts[1:]:
        out = out + " " + p.astype(str)
    return out.str.split().str.join(" ")


def stage_rows(stage: str, minutes: float, workers: int) -> list[dict]:
    rows = []
    for csv in sorted((ROOT / "reports" / "tables" / stage).glob("*.csv")):
        t = pd.read_csv(csv)
        if not {"steps", "train seconds"} <= set(t.columns):
            continue
        t = t[t["steps"].fillna(0) > 0]
        for kind, g in t.groupby(kind_of(t)):
            sec, steps = float(g["train seconds"].sum()), int(g["steps"].sum())
            rows.append(
                {
                    "stage": stage,
                    "table": csv.stem,
                    "kind": kind,
                    "runs": len(g),
                    "steps": steps,
                    "s/step": sec / steps if steps else float("nan"),
                    "train s": sec,
                    "share of stage": sec / (60 * minutes * workers) if minutes else float("nan"),
                }
            )
    return rows


def ledger_counts(ledger: pd.DataFrame) -> pd.DataFrame:
    """Per judging stage: ledger rows tested / all, and comparisons of trained arms (rows with
    preconditions) tested / all, as ``"t / n"`` strings."""
    led = ledger.assign(tested=ledger["tested"].eq("yes"), comparison=ledger["preconditions"].fillna("").ne(""))
    out = {}
    for st, g in led.groupby("stage"):
        c = g[g["comparison"]]
        out[st] = {
            "ledger rows (tested / all)": f"{int(g['tested'].sum())} / {len(g)}",
            "comparisons (tested / all)": f"{int(c['tested'].sum())} / {len(c)}" if len(c) else "–",
        }
    return pd.DataFrame.from_dict(out, orient="index")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    head = json.loads((ROOT / "reports" / "summary" / "headlines.json").read_text())
    minutes = timings.minutes()
    total = sum(minutes.values())
    rows = [r for s, m in minutes.items() for r in stage_rows(s, m, args.workers)]
    prof = pd.DataFrame(rows)
    stages = pd.DataFrame(
        [
            {"stage": s, "minutes": m, "share of the pipeline": m / total}
            for s, m in sorted(minutes.items(), key=lambda kv: -kv[1])
        ]
    )
    counts = ledger_counts(pd.read_csv(ROOT / "reports" / "claims.csv"))
    stages = stages.join(counts, on="stage").fillna({c: "–" for c in counts.columns})
    lines = [
        "# Per-stage profile",
        "",
        f"Each stage's last run at scale `{head['scale']}` ({total:.1f} min of notebooks on 2 cores; "
        f"`reports/{timings.FILE}`); written by `python benchmarks/stage_profile.py`.",
        "",
        "## Minutes per stage",
        "",
        stages.to_markdown(index=False, floatfmt=".2f"),
        "",
        "## Runs that log steps and training seconds",
        "",
        f"`share of stage`: training seconds summed over the runs / (stage seconds x {args.workers} workers).",
        "",
        prof.to_markdown(index=False, floatfmt=".3f") if len(prof) else "(none)",
        "",
    ]
    out = ROOT / "benchmarks" / "stage_profile.md"
    out.write_text("\n".join(lines))
    print(f"wrote {out.relative_to(ROOT)}: {len(stages)} stages, {len(prof)} run kinds")


if __name__ == "__main__":
    main()
