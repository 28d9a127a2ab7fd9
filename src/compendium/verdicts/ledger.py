"""The claims ledger: every declared claim, judged once, keyed by its id (``reports/claims.csv`` and ``claims.md``).

:func:`assemble` takes the rows the stages wrote (exact checks with their verdicts, comparisons with their
:class:`~compendium.verdicts.claims.Evidence`), matches each to its declaration (:mod:`compendium.verdicts.registry`:
id, wording, smallest effect of interest), decides every comparison by :func:`compendium.verdicts.rule.decide`
(two-sided, replicated on two disjoint seed sets) and joins the committed power plan
(:mod:`compendium.verdicts.power`: the seeds each comparison needs and what they cost). A declared claim whose stage
wrote no row at this scale is listed as not tested, naming the stage.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from compendium.core import paths
from compendium.core.tables import markdown_table
from compendium.verdicts import power, registry as reg, rule
from compendium.verdicts.funding import FUNDED
from compendium.verdicts.claims import INCONCLUSIVE, NOT_TESTED, STAGE_COLUMNS, VERDICTS, Evidence

#: the check of a declared claim whose stage wrote no row at this scale
NOT_RUN = "(not run at this scale)"
COLUMNS = (
    "id",
    "paper",
    "version",
    "location",
    "claim",
    "check",
    "verdict",
    "condition",
    "tested",
    "replication",
    "verdict_all_seeds",
    "verdict_seeds_a",
    "verdict_seeds_b",
    "sesoi",
    "sesoi_source",
    "effect",
    "interval",
    "mde",
    "seeds",
    "seeds_planned",
    "cpu_min_planned",
    "faithful_min_planned",
    "preconditions",
    "scale",
    "ours",
    "paper_numbers",
    "stage",
)
#: the evidence of a row a stage wrote before comparisons recorded their evidence: its verdict is not this rule's
LEGACY = "legacy"


def to_frame(rows) -> pd.DataFrame:
    """A stage's rows (:class:`~compendium.verdicts.claims.Claim`) as its CSV holds them."""
    return pd.DataFrame([r.record() for r in rows], columns=list(STAGE_COLUMNS))


def read_stage_rows(files: Iterable[Path]) -> pd.DataFrame:
    """The rows that stages wrote (``reports/claims/<stage>.csv``)."""
    frames = []
    for f in files:
        frame = pd.read_csv(f, dtype=str, keep_default_na=False)
        if "evidence" not in frame.columns:  # written before the evidence was recorded: its comparisons need a rerun
            frame["evidence"] = LEGACY
        missing = set(STAGE_COLUMNS) - set(frame.columns)
        if missing:
            raise ValueError(f"{f} lacks columns {sorted(missing)}: rerun its stage (`dvc repro {Path(f).stem}`)")
        frames.append(frame[list(STAGE_COLUMNS)])
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(STAGE_COLUMNS))


def _sesoi_text(d: reg.Declaration) -> str:
    s = d.smallest_effect
    return "" if s is None else f"{s:g}"


def assemble(stage_rows: pd.DataFrame, registry: reg.Registry, plan: pd.DataFrame | None = None) -> pd.DataFrame:
    """The ledger: one row per declared claim, in registry order (see the module docstring)."""
    decls = reg.match(registry, stage_rows.to_dict("records"))
    plan_by = {} if plan is None or not len(plan) else plan.set_index("id").to_dict("index")
    out = []
    for (_, r), d in zip(stage_rows.iterrows(), decls):
        if d is None:
            out.append(_undeclared(r))
            continue
        row = {c: r.get(c, "") for c in STAGE_COLUMNS if c != "evidence"}
        row.update(
            id=d.id,
            paper=d.paper,
            version=d.version,
            location=d.location,
            claim=d.claim,
            sesoi=_sesoi_text(d),
            sesoi_source=d.smallest_effect_source if d.kind == "comparison" else "",
        )
        if r["evidence"] == LEGACY:
            if d.kind == "comparison":
                row.update(
                    verdict=NOT_TESTED,
                    tested="no",
                    preconditions="",
                    effect="",
                    interval="",
                    mde="",
                    seeds="",
                    condition=f"its stage's rows predate the recorded evidence this rule decides from; would "
                    f"need `dvc repro {d.stage}` (its verdict then was '{r['verdict']}')",
                )
        elif r["evidence"]:
            ev = Evidence.from_json(r["evidence"])
            if ev.margin > 0 and not (d.sesoi is not None and abs(d.sesoi - 100 * ev.margin) < 1e-9):
                raise ValueError(
                    f"{d.id}: its check's non-inferiority margin is {100 * ev.margin:g} points, its "
                    f"declared sesoi {d.sesoi}: declare the margin as its sesoi in {reg.FILE.name}"
                )
            row.update(rule.decide(ev, sesoi=d.smallest_effect))
            p = plan_by.get(d.id, {})
            row.update(
                seeds_planned=p.get("seeds_planned", ""),
                cpu_min_planned=p.get("cpu_min_planned", ""),
                faithful_min_planned=p.get("faithful_min_planned", ""),
            )
            row.update(under_powered(row, p, d.seed_cost))
        out.append(row)
    seen = {row["id"] for row in out}
    for d in registry.declarations:
        if d.id not in seen:
            out.append(
                {
                    "id": d.id,
                    "paper": d.paper,
                    "version": d.version,
                    "location": d.location,
                    "claim": d.claim,
                    "check": NOT_RUN,
                    "verdict": NOT_TESTED,
                    "tested": "no",
                    "condition": f"its stage {d.stage} wrote no row at this scale; would need that stage run",
                    "ours": "",
                    "stage": d.stage,
                    "sesoi": _sesoi_text(d),
                }
            )
    order = {d.id: i for i, d in enumerate(registry.declarations)}
    order.update({row["id"]: len(order) + i for i, row in enumerate(out) if row["id"] not in order})
    df = pd.DataFrame(out).reindex(columns=list(COLUMNS)).astype(object).fillna("")
    bad = sorted(set(df["verdict"]) - set(VERDICTS))
    if bad:
        raise ValueError(f"unknown verdicts {bad}")
    return df.sort_values("id", key=lambda s: s.map(order)).reset_index(drop=True)


def under_powered(row: Mapping, plan_row: Mapping, seed_cost: str = "") -> dict:
    """What the power plan says of a comparison its run does not decide: a run without a disjoint seed set to
    replicate on gets the seeds and cost the plan asks; an undecided replicable one whose plan does not fit its
    scale's budget is not tested at this scale (under-powered), one whose plan fits says how many seeds it asks, as
    does one decided on all its seeds but not on each disjoint half (its halves need the plan's seeds).
    ``seed_cost``: what each further seed needs outside ``dvc repro`` (the declaration's), added to the plan's
    stage minutes: such seeds never fit the default run on their own."""
    no_replica = row.get("verdict") == NOT_TESTED and str(row.get("replication", "")).startswith("not possible")
    undecided = row.get("verdict") == INCONCLUSIVE and row.get("verdict_all_seeds") == INCONCLUSIVE
    split = row.get("verdict") == INCONCLUSIVE and not undecided  # decided on all seeds, not on each half
    if not plan_row or not (no_replica or undecided or split):
        return {}
    need = (
        f"the power plan asks {plan_row['seeds_planned']} matched seeds (two sets of {plan_row['seeds_per_half']}) "
        f"to bring the minimal detectable effect to the smallest effect of interest ({row.get('sesoi')})"
    )
    outside = power.OUTSIDE_DVC.get(str(plan_row.get("stage", "")))
    cost = (
        f"{plan_row['cpu_min_planned']} CPU-minutes at cpu, {plan_row['faithful_min_planned']} at faithful"
        if plan_row.get("cpu_min_planned")
        else "beyond any budget of this compendium"
    )
    fits = str(plan_row.get("fits_cpu")) in ("True", "true") and not seed_cost
    if seed_cost:
        cost += f", and each seed beyond those run needs {seed_cost}"
    unmet = str(plan_row.get("unmet", "") or "")
    if str(plan_row.get("funded", "")) == FUNDED:
        cost += " (funded: the default run runs these seeds)"
    elif str(plan_row.get("funded", "")) == power.PROPOSED:
        cost += (
            " (the default run has the minutes for it; funding it awaits a rerun of its stages: "
            "benchmarks/power_plan.md)"
        )
    elif fits and unmet:
        cost += f" (not funded: seeds alone would not test it, {unmet} unmet: benchmarks/power_plan.md)"
    elif fits:
        cost += (
            " (it fits the cpu budget on its own, but the default run has no minutes left for it: "
            "benchmarks/power_plan.md)"
        )
    costs = (
        f"{_beyond(plan_row)} are {outside}"
        if outside and not plan_row.get("cpu_min_planned")
        else f"that costs {cost}"
    )
    if no_replica or fits or split:
        return {"condition": "; ".join(x for x in (row.get("condition", ""), f"{need}; {costs}") if x)}
    return {
        "verdict": NOT_TESTED,
        "tested": "no",
        "condition": f"under-powered at this scale (spread of the paired differences {plan_row['sd']} points over "
        f"{plan_row['seeds_run']} seeds): {need}; {costs}",
    }


def _beyond(plan_row: Mapping) -> str:
    """The plan's seeds not yet run, as a ledger phrase: "its 23 seeds beyond the 3 run" (a row whose seeds are made
    outside ``dvc repro`` one synthesis at a time, so that the reader can multiply by the cost per seed)."""
    try:
        planned, run = int(plan_row["seeds_planned"]), int(plan_row["seeds_run"])
    except (KeyError, TypeError, ValueError):
        return "its seeds"
    return f"its {planned - run} seeds beyond the {run} run" if planned > run else "its seeds"


UNDECLARED = "undeclared."


def _undeclared(r: Mapping) -> dict:
    """A row no declaration matches (its stage words the claim differently at this scale, or a new check): shown,
    judged without a smallest effect, and named so that it can be declared."""
    key = "|".join((r["paper"], r["location"], r["claim"]))
    row = {c: r.get(c, "") for c in STAGE_COLUMNS if c != "evidence"}
    row["id"] = UNDECLARED + hashlib.md5(key.encode()).hexdigest()[:8]
    if r["evidence"] and r["evidence"] != LEGACY:
        row.update(rule.decide(Evidence.from_json(r["evidence"])))
    row["condition"] = "; ".join(
        x for x in (f"not in {reg.FILE.name}: declare it (id, metric, smallest effect)", row.get("condition", "")) if x
    )
    return row


def undeclared(ledger: pd.DataFrame) -> pd.DataFrame:
    """The rows no declaration matched."""
    return ledger[ledger["id"].astype(str).str.startswith(UNDECLARED)][["id", "paper", "location", "claim", "stage"]]


def evidence_frame(stage_rows: pd.DataFrame, registry: reg.Registry) -> pd.DataFrame:
    """id and evidence of every comparison (what :func:`compendium.verdicts.power.plan` reads)."""
    decls = reg.match(registry, stage_rows.to_dict("records"))
    return pd.DataFrame(
        [
            {"id": d.id, "stage": d.stage, "evidence": r["evidence"]}
            for (_, r), d in zip(stage_rows.iterrows(), decls)
            if d is not None and r["evidence"] not in ("", LEGACY)
        ],
        columns=["id", "stage", "evidence"],
    )


def is_comparison(ledger: pd.DataFrame) -> pd.Series:
    """The rows that compare trained arms (they carry a smallest effect of interest or a verdict of all seeds)."""

    def col(c):
        return ledger[c].astype(str) if c in ledger.columns else pd.Series("", index=ledger.index)

    return col("verdict_all_seeds").ne("") | col("sesoi_source").ne("")


def summary(ledger: pd.DataFrame) -> pd.DataFrame:
    """Per paper: verdict counts, then the comparisons: how many, tested in their regime, decided, decided on all
    seeds but not replicated, and replicated."""
    cols = ["paper", *VERDICTS, "claims", "comparisons", "tested", "decided (all seeds)", "replicated"]
    if not len(ledger):
        return pd.DataFrame(columns=cols)
    t = pd.crosstab(ledger["paper"], ledger["verdict"]).reindex(columns=list(VERDICTS), fill_value=0)
    t["claims"] = t.sum(axis=1)
    comp = ledger[is_comparison(ledger)]

    def count(paper, col, ok):
        rows = comp[comp["paper"] == paper]
        return sum(bool(ok(v)) for v in rows[col].astype(str)) if col in rows.columns else 0

    papers = list(t.index)
    t["comparisons"] = [int((comp["paper"] == p).sum()) for p in papers]
    t["tested"] = [count(p, "tested", lambda v: v == "yes") for p in papers]
    t["decided (all seeds)"] = [count(p, "verdict_all_seeds", lambda v: v in rule.DECIDED) for p in papers]
    t["replicated"] = [count(p, "replication", lambda v: v == "replicated") for p in papers]
    return t.reset_index()[cols]


#: the committed extrapolations a rerun's cost is summed from, as the condition names them
ESTIMATES = ", ".join(str(f.relative_to(paths.ROOT)) for f in (power.FAITHFUL_ESTIMATE, power.PAPER_ESTIMATE))
#: a condition that already says what its run costs (the power plan's seeds, a study's hours per seed)
COSTED = re.compile(r"costs|CPU-minutes|GPU-hours|about [\d.,]+ (?:h|min)\b")


def with_rerun_costs(
    ledger: pd.DataFrame, stages: Mapping[str, set[str]], estimates: Mapping[str, Mapping[str, float]]
) -> pd.DataFrame:
    """Each comparison not tested at this scale whose condition does not say what its run costs gets the cost of
    rerunning what its verdict reads at the papers' lengths (not one judged from records made outside
    ``dvc repro``, :data:`compendium.verdicts.power.OUTSIDE_DVC`: its stage's family did not make them): per
    profile (``estimates``: its words -> minutes per stage, the committed extrapolations :data:`ESTIMATES`), the sum
    over ``stages[id]``
    (:func:`compendium.verdicts.power.rerun_stages`). The condition names the setting; this says what running it costs.

        >>> row = {"id": "x", "verdict": NOT_TESTED, "sesoi_source": "paper", "condition": "would need 30,000 steps"}
        >>> est = {"`faithful` (2 cores)": {"a": 90, "b": 30}, "`paper` (one GPU)": {"a": 6, "b": 3}}
        >>> print(with_rerun_costs(pd.DataFrame([row]), {"x": {"a", "b"}}, est).loc[0, "condition"])
        would need 30,000 steps; at the papers' lengths, rerunning the 2 stages of its family behind its verdict \
(the longest: a) costs about 2.0 h at `faithful` (2 cores) or about 0.1 h at `paper` (one GPU) (extrapolations: \
benchmarks/faithful_estimate.md, benchmarks/paper_estimate.md)
    """
    out = ledger.copy()
    outside = out["stage"].isin(list(power.OUTSIDE_DVC)) if "stage" in out else False
    rows = out.index[is_comparison(out) & (out["verdict"] == NOT_TESTED) & ~outside]
    for i in rows:
        cond = str(out.at[i, "condition"])
        chain = stages.get(out.at[i, "id"], set())
        if COSTED.search(cond) or not chain:
            continue
        costs = []
        for words, minutes in estimates.items():
            known = [s for s in chain if s in minutes]
            if known:
                costs.append(f"about {sum(minutes[s] for s in known) / 60:.1f} h at {words}")
        if not costs:
            continue
        timed = {s: max(float(m.get(s, 0.0)) for m in estimates.values()) for s in chain}
        longest = max(sorted(timed), key=timed.get)
        out.at[i, "condition"] = (
            f"{cond}; at the papers' lengths, rerunning the {len(chain)} stages of its family behind its verdict (the "
            f"longest: {longest}) costs {' or '.join(costs)} (extrapolations: {ESTIMATES})"
        )
    return out


def not_tested_list(ledger: pd.DataFrame) -> pd.DataFrame:
    """The claims this run cannot test, each with the unmet precondition and the setting it needs."""
    nt = ledger[ledger["verdict"] == NOT_TESTED]
    return nt[["id", "paper", "location", "claim", "condition", "stage"]].reset_index(drop=True)


def render_markdown(ledger: pd.DataFrame, title: str = "Claims ledger") -> str:
    """``claims.md``: counts per paper, then one section per paper with each claim's verdict, effect, interval,
    smallest effect of interest, replication and the condition or unmet precondition."""
    md = [
        f"# {title}",
        "",
        "Generated by the `claims_ledger` stage from the stages' records and the claims registry "
        "(`src/compendium/verdicts/registry.yaml`); do not edit by hand.",
        "Paper numbers are the paper's; *ours* are computed by the stage named in each row. Comparisons are judged",
        "by one rule (`compendium.verdicts.rule.decide`): paired differences over matched seeds, a 95% t interval",
        "that excludes zero (holds / fails) or every effect of the smallest size of interest (fails: the advantage",
        "is absent), the run's regime checks, and the same verdict on two disjoint seed sets (else inconclusive).",
        "",
    ]
    if not len(ledger):
        return "\n".join(md + ["_No claims have been checked yet._", ""])
    md += ["## Verdicts per paper", "", markdown_table(summary(ledger)), ""]
    cols = [
        "id",
        "location",
        "claim",
        "verdict",
        "effect",
        "interval",
        "sesoi",
        "replication",
        "seeds",
        "seeds_planned",
        "condition",
        "ours",
        "paper_numbers",
        "stage",
    ]
    for paper, rows in ledger.groupby("paper", sort=True):
        md += [f"## {paper}", "", markdown_table(rows[cols]), ""]
    return "\n".join(md)


def changes(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """Claims whose verdict differs between two ledgers (matched on id)."""
    m = before[["id", "verdict"]].merge(after[["id", "verdict"]], on="id", how="inner", suffixes=(" before", " after"))
    return m[m["verdict before"] != m["verdict after"]].reset_index(drop=True)
