"""The power plan: for each comparison, the matched seeds that make its verdict decidable and replicable.

A comparison's effect A − B has a spread σ of its paired differences, measured on the seeds a run made (the
pilot). With n seeds, the minimal detectable effect at 80% power is ``nc(n − 1) · σ / √n``
(:attr:`compendium.verdicts.claims.Effect.mde`, the noncentral t). The plan asks, per half, the smallest n (at
least ``min_seeds``) whose MDE is at most the claim's smallest effect of interest δ: then a true effect of δ is
detected, and a true zero is declared absent (the interval below δ), each with probability about 80%. The
replication rule judges two disjoint halves, so the plan's seeds are twice that. A claim of several cells takes
its noisiest cell. A claim without δ (a metric with no natural scale) is planned for replication alone.

:func:`plan` computes it from the ledger's evidence; ``python -m compendium.verdicts.power --write`` writes it
to ``power_plan.csv`` beside this module, with the CPU-minutes those seeds cost: the recording stages' measured
minutes, of which the share their seeds drive (:func:`seed_share`, from the stages' own timing records) is scaled by
planned / run seeds and the rest (a distillation, a synthesis shared by every seed) is paid once. The ledger shows it
per row; the file is committed before the runs it governs.

    >>> seeds_per_half(sd=0.01, sesoi=0.01)   # σ = δ: 10 seeds per half
    10
    >>> seeds_per_half(sd=0.001, sesoi=0.01)  # a quiet effect: the floor of 3
    3
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import pandas as pd

from compendium.core import paths
from compendium.core.tables import markdown_table
from compendium.verdicts import registry as reg
from compendium.verdicts.claims import MAX_SEEDS, Evidence, seeds_per_half
from compendium.verdicts.funding import FILE, FUNDED, read

#: stages whose claims read the tables of other stages (the cost of a seed is theirs)
RECORDS = {"dd_tables": ("dd_teachers", "dd_coresets", "dd_inversion", "dd_matching", "dd_kip")}
#: per paper, the set stages whose records its rows of ``dd_tables`` read (a rerun for them needs no other set stage)
TABLE_SOURCES = {
    "DC": ("dd_coresets", "dd_matching"),
    "DSA": ("dd_coresets", "dd_matching"),
    "DWA": ("dd_inversion",),
    "ReLA": ("dd_inversion",),
    "KIP": ("dd_kip",),
}
FAITHFUL_ESTIMATE = paths.ROOT / "benchmarks" / "faithful_estimate.md"
PAPER_ESTIMATE = paths.ROOT / "benchmarks" / "paper_estimate.md"
SUMMARY = paths.ROOT / "benchmarks" / "power_plan.md"
COLUMNS = (
    "id",
    "stage",
    "records",
    "sd",
    "seeds_run",
    "sesoi",
    "seeds_per_half",
    "seeds_planned",
    "cpu_min_run",
    "cpu_min_planned",
    "faithful_min_planned",
    "fits_cpu",
    "funded",
    "seeds_key",
    "seed_share",
    "unmet",
)
#: per stage, its timing records (``reports/timings/<stage>/<file>``) of work done once whatever the seed count: one
#: label distillation per variant, one synthesis per set (unless the stage replicates its syntheses per seed,
#: ``replicate_syntheses``), one DC synthesis per architecture, one coreset selection per set. (``dd_dwa``'s
#: syntheses are not: its Fig. 1 and Fig. 4 sets are synthesised per seed.)
ONCE = {
    "dd_labels": ("distillation.csv",),
    "dd_dc_arch": ("dc_architectures.csv",),
    "dd_inversion": ("synthesis_cost.csv",),
    "dd_matching": ("synthesis_cost.csv",),
    "dd_coresets": ("selection_cost.csv",),
}
#: a timing record's column of worker-seconds per row, first match wins (a file's columns overlap: train ⊂ total)
SECONDS = ("total seconds", "seconds", "train seconds", "synthesis seconds", "cpu seconds")
#: stages that judge records made outside ``dvc repro`` by resumable protocols (``python -m compendium.distill.
#: dc_protocol``, ``labelled_protocol``): the stage's minutes are not what a seed costs, so the plan gives no
#: minutes for their comparisons and the ledger points to the command and cost per seed their checks name
OUTSIDE_DVC = {"dd_regime": "made outside `dvc repro` by the command its check names, at the cost per seed it gives"}
#: the ``funded`` value of a comparison the default run has minutes for but does not run yet: a plan written with
#: ``--keep-funding`` (its stages cannot be rerun when the plan is); ``compendium.verdicts.funding`` enforces only
#: :data:`FUNDED`, so nothing refuses fewer seeds
PROPOSED = "proposed"
#: the papers whose claims the compendium is about: funded first (:func:`allocate`)
CENTRAL = ("ReLA", "DWA", "DC", "DSA", "SSDD")


def claim_plan(ev: Evidence, sesoi: float | None) -> tuple[float, int, int]:
    """(the largest σ over the claim's cells in display units, seeds run, seeds per half) of one comparison;
    σ NaN when no cell has two seeds."""
    sds = [(e.unit * e.sd, e.n, (sesoi / e.unit if sesoi is not None else None), e.sd) for e in ev.effects if e.n >= 2]
    n_run = min((e.n for e in ev.effects), default=0)
    if not sds:
        return float("nan"), n_run, ev.min_seeds
    per = max(seeds_per_half(sd_raw, s, ev.min_seeds) for _, _, s, sd_raw in sds)
    return max(s for s, *_ in sds), n_run, per


def _seed_column(columns) -> bool:
    """A per-seed record: a column ``seed`` or ``<what> seed`` (``meta seed``), one row per seeded call."""
    return any(c == "seed" or c.endswith(" seed") for c in columns)


def seed_share(timings: Path, once: Iterable[str] = (), replicated: bool = False) -> float:
    """The share of a stage's timed work that its seeds drive, from its timing records (``timings``: the folder
    ``reports/timings/<stage>/``): worker-seconds of the records with a per-seed column over those plus the
    worker-seconds of the records of work done once (``once``: file names, :data:`ONCE`; counted as per-seed
    when ``replicated``: the stage synthesises once per seed). Other records (summaries, overhead tables) repeat
    rows of these and are left out. 1.0 where nothing per-seed is timed: every minute scales with the seeds.

    Work no record times (data loading, test passes, figures) is paid once but sits in neither sum, so the share
    is an upper bound and a plan's minutes err high.

        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp())
        >>> _ = (d / "results.csv").write_text("seed,acc,seconds\\n0,0.7,10\\n1,0.7,10\\n")
        >>> _ = (d / "distillation.csv").write_text("variant,seconds\\nrr,60\\n")
        >>> seed_share(d, once=["distillation.csv"])
        0.25
        >>> seed_share(d, once=["distillation.csv"], replicated=True), seed_share(d / "none")
        (1.0, 1.0)
    """
    seeded = fixed = 0.0
    for f in sorted(Path(timings).glob("*.csv")) if Path(timings).is_dir() else ():
        frame = pd.read_csv(f)
        col = next((c for c in SECONDS if c in frame.columns), None)
        if col is None:
            continue
        sec = float(pd.to_numeric(frame[col], errors="coerce").fillna(0.0).sum())
        if _seed_column(frame.columns) or (f.name in set(once) and replicated):
            seeded += sec
        elif f.name in set(once):
            fixed += sec
    return seeded / (seeded + fixed) if seeded > 0 else 1.0


def seed_shares(reports: Path, stage_parameters: Mapping[str, Mapping]) -> dict[str, float]:
    """:func:`seed_share` of every stage in ``stage_parameters`` (stage -> the parameters its timing records were
    made with, ``stage_minutes.json``'s), its syntheses per seed where ``replicate_syntheses`` says so."""
    return {
        st: round(
            seed_share(
                reports / "timings" / st,
                ONCE.get(st, ()),
                str(pars.get("replicate_syntheses", "none")).lower() not in ("none", "false", "0", ""),
            ),
            3,
        )
        for st, pars in stage_parameters.items()
    }


def seeded_minutes(minutes: float, share: float, factor: float) -> float:
    """A stage's minutes with its seeds scaled by ``factor``: the seeded ``share`` scales, the rest is paid once.

    >>> seeded_minutes(20.0, 0.25, 3.0)   # 15 fixed + 5 x 3
    30.0
    """
    return minutes * (1.0 - share + share * factor)


def plan(
    evidence: pd.DataFrame,
    registry: reg.Registry,
    minutes: Mapping[str, float],
    faithful_minutes: Mapping[str, float],
    records: Mapping[str, Iterable[str]],
    budget_min: float,
    shares: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """One row per comparison of ``evidence`` (its ``id`` and ``evidence`` columns, as the ``claims_ledger`` stage
    records them in ``evidence.csv``): σ, seeds run, seeds per half and planned,
    and the CPU-minutes: ``minutes`` / ``faithful_minutes`` per stage (measured at ``cpu``; estimated at
    ``faithful``), summed over the claim's recording stages (``records``: claim id -> stages), their seeded share
    (``shares``: stage -> :func:`seed_share`, 1.0 where absent) scaled by planned / run seeds
    (:func:`seeded_minutes`). ``fits_cpu``: the planned minutes of the claim's stages fit ``budget_min``.
    ``unmet``: what stands between the claim and a test besides its seeds (its run's regime checks that fail, and
    the work outside ``dvc repro`` each further seed needs, the declaration's ``seed_cost``); empty where seeds
    alone decide it."""
    shares = shares or {}
    rows = []
    for _, r in evidence.iterrows():
        d = registry.by_id[r["id"]]
        ev = Evidence.from_json(r["evidence"])
        sd, n_run, per = claim_plan(ev, d.smallest_effect)
        planned = 2 * per
        stages = list(records.get(d.id, [d.stage]))
        scale = planned / n_run if n_run else float("nan")
        run = sum(float(minutes.get(s, float("nan"))) for s in stages)
        cpu = sum(seeded_minutes(float(minutes.get(s, float("nan"))), shares.get(s, 1.0), scale) for s in stages)
        faithful = sum(
            seeded_minutes(float(faithful_minutes.get(s, float("nan"))), shares.get(s, 1.0), scale) for s in stages
        )
        outside = d.stage in OUTSIDE_DVC
        unmet = [p.name for p in ev.preconditions if not p.met]
        if d.seed_cost:
            unmet.append(f"each further seed needs {d.seed_cost}")
        rows.append(
            {
                "id": d.id,
                "stage": d.stage,
                "records": " ".join(stages),
                "sd": round(sd, 3),
                "seeds_run": n_run,
                "sesoi": d.smallest_effect if d.smallest_effect is not None else "",
                "seeds_per_half": per if per <= MAX_SEEDS else f">{MAX_SEEDS}",
                "seeds_planned": planned if per <= MAX_SEEDS else f">{2 * MAX_SEEDS}",
                "cpu_min_run": round(run, 1),
                "cpu_min_planned": round(cpu, 1) if per <= MAX_SEEDS and not outside else "",
                "faithful_min_planned": round(faithful, 1) if per <= MAX_SEEDS and not outside else "",
                "fits_cpu": bool(per <= MAX_SEEDS and cpu <= budget_min and not outside),
                "funded": "",
                "seeds_key": d.seeds_key,
                "seed_share": " ".join(f"{shares.get(s, 1.0):g}" for s in stages),
                "unmet": "; ".join(unmet),
            }
        )
    return pd.DataFrame(rows, columns=list(COLUMNS))


def fundable(plan_frame: pd.DataFrame) -> pd.Series:
    """Per comparison of a plan: its seeds fit the budget on their own (``fits_cpu``) and nothing but seeds stands
    between it and a test (``unmet`` empty; a plan without that column counts every fitting comparison)."""
    fits = plan_frame["fits_cpu"].astype(str).isin(["True", "true"])
    if "unmet" not in plan_frame:
        return fits
    return fits & plan_frame["unmet"].fillna("").astype(str).eq("")


def allocate(
    plan_frame: pd.DataFrame,
    minutes: Mapping[str, float],
    budget_min: float,
    paper_of: Callable[[str], str],
    shares: Mapping[str, float] | None = None,
) -> tuple[pd.DataFrame, float]:
    """Which comparisons the default run funds: starting from the run as it is (``minutes`` per stage, summed),
    add the comparisons whose plan fits ``fits_cpu`` and whom seeds alone would decide (``unmet`` empty: seeds spent
    on a run outside its claim's regime test nothing), central papers (:data:`CENTRAL`) first and the cheapest
    extra minutes first within each group, while the whole run stays within ``budget_min``. A stage shared by
    funded claims runs once, at the largest seed count any of them asks. Returns the plan with ``funded`` set to
    :data:`FUNDED` for those, and the run's planned minutes. ``shares``: as in :func:`plan`."""
    shares = shares or {}
    out = plan_frame.copy()
    factor: dict[str, float] = {}  # stage -> planned seeds / run seeds, as funded so far
    spent = float(sum(minutes.values()))

    def extra(r) -> float:
        f = float(r["seeds_planned"]) / float(r["seeds_run"])
        return sum(
            max(0.0, float(minutes.get(s, 0.0)) * shares.get(s, 1.0) * (f - factor.get(s, 1.0)))
            for s in str(r["records"]).split()
        )

    cand = out[fundable(out)]
    order = sorted(
        cand.index, key=lambda i: (paper_of(cand.at[i, "id"]) not in CENTRAL, extra(cand.loc[i]), cand.at[i, "id"])
    )
    for i in order:
        r = out.loc[i]
        e = extra(r)
        if spent + e <= budget_min:
            spent += e
            f = float(r["seeds_planned"]) / float(r["seeds_run"])
            for s in str(r["records"]).split():
                factor[s] = max(factor.get(s, 1.0), f)
            out.at[i, "funded"] = FUNDED
    return out, spent


def freeze(new: pd.DataFrame, old: pd.DataFrame) -> pd.DataFrame:
    """Pre-registration: a comparison the committed plan ``old`` funds keeps its planned seeds and costs (the runs it
    governs may be made, or under way; a plan recomputed from their spreads would be chosen after seeing them)."""
    if old is None or not len(old) or "funded" not in old:
        return new
    keep = {r["id"]: r for _, r in old.iterrows() if str(r.get("funded", "")) == FUNDED}
    out = new.copy()
    for i, r in out.iterrows():
        if r["id"] in keep:
            for c in (
                "seeds_per_half",
                "seeds_planned",
                "cpu_min_planned",
                "faithful_min_planned",
                "fits_cpu",
                "funded",
            ):
                out.at[i, c] = keep[r["id"]][c]
    return out


def hold_funding(plan_frame: pd.DataFrame, old: pd.DataFrame) -> pd.DataFrame:
    """A plan written with ``--keep-funding``: the comparisons ``old`` (the committed plan) funds stay funded, as do
    those whose planned seeds the run already has; the others the allocation would fund anew are marked
    :data:`PROPOSED` (the run they ask cannot be made when the plan is written), so no stage refuses its present
    seeds and the ledger says the minutes are there.

        >>> new = pd.DataFrame({"id": ["a", "b", "c", "d"], "funded": [FUNDED, FUNDED, "", FUNDED],
        ...                     "seeds_run": [3, 3, 3, 6], "seeds_planned": ["8", "8", "8", "6"]})
        >>> list(hold_funding(new, pd.DataFrame({"id": ["a"], "funded": [FUNDED]}))["funded"])
        ['cpu', 'proposed', '', 'cpu']
    """
    kept = set(old.loc[old["funded"].astype(str) == FUNDED, "id"]) if len(old) and "funded" in old else set()
    out = plan_frame.copy()
    have = pd.to_numeric(out["seeds_planned"], errors="coerce") <= pd.to_numeric(out["seeds_run"], errors="coerce")
    new = (out["funded"].astype(str) == FUNDED) & ~out["id"].isin(kept) & ~have
    out.loc[new, "funded"] = PROPOSED
    return out


def write_summary(
    plan_frame: pd.DataFrame,
    papers: pd.DataFrame,
    total: Mapping,
    budget_min: float,
    run_min: float,
    planned_min: float,
) -> None:
    """``benchmarks/power_plan.md``: the plan per paper and in all, for a reader."""
    n = len(plan_frame)
    spread = int(pd.to_numeric(plan_frame["sd"], errors="coerce").notna().sum())
    capped = int(plan_frame["seeds_planned"].astype(str).str.startswith(">").sum())
    outside = int(plan_frame["stage"].isin(list(OUTSIDE_DVC)).sum())
    fits = int(plan_frame["fits_cpu"].astype(str).isin(["True", "true"]).sum())
    ready = int(fundable(plan_frame).sum())
    funded = plan_frame[plan_frame["funded"].astype(str) == FUNDED]
    proposed = plan_frame[plan_frame["funded"].astype(str) == PROPOSED]
    text = [
        "# The power plan",
        "",
        "Generated by `python -m compendium.verdicts.power --write` from the last run's evidence "
        "(`reports/tables/claims_ledger/evidence.csv`); do not edit by hand. Per comparison "
        "(`src/compendium/verdicts/power_plan.csv`): the seeds per seed set that bring its minimal detectable "
        "effect (80% power) down to its smallest effect of interest, twice that for the two disjoint sets the "
        "verdict must be replicated on, and the CPU-minutes of its recording stages: the share of their timed work "
        "that their seeds drive (column `seed_share`, from the stages' timing records) scaled by planned / run seeds, "
        "the rest (a distillation or synthesis shared by every seed) paid once.",
        "",
        f"{n} comparisons, {spread} of them with a measured spread (two seeds or more); {capped} need more than "
        f"{2 * MAX_SEEDS} seeds; {fits} fit a `cpu` budget of {budget_min:.0f} minutes on their own, {ready} of them "
        "with nothing but seeds between them and a test (column `unmet`: the regime checks their run fails, or work "
        f"outside `dvc repro` each seed needs; the plan funds only those); {outside} are "
        "judged from records made outside `dvc repro` (the protocols of `dd_regime`), whose seeds the plan does not "
        "price in stage minutes: their checks name the command and its cost per seed.",
        "",
        "**Funded at `cpu`** (the default run must run them at their planned seeds; `python -m "
        "compendium.pipeline.params` and every stage run refuse fewer): "
        + (
            ", ".join(f"`{i}` ({n} seeds)" for i, n in zip(funded["id"], funded["seeds_planned"]))
            if len(funded)
            else "none"
        )
        + (
            ". **Proposed** (the free minutes fund them, but this plan was written with `--keep-funding`: their "
            "stages could not be rerun when it was, so the default run keeps its seeds until a plan without that "
            "flag funds them and the stages run): "
            + ", ".join(f"`{i}` ({n} seeds)" for i, n in zip(proposed["id"], proposed["seeds_planned"]))
            if len(proposed)
            else ""
        )
        + f". The default run as it is takes {run_min:.0f} of its {budget_min:.0f} minutes "
        f"(the stages' last measured minutes); with the funded{' and proposed' if len(proposed) else ''} seeds, "
        f"{planned_min:.0f}. A comparison that fits "
        "on its own but is not funded is *not tested at this scale* until time is freed for it; the plan funds "
        "the central papers' claims first (" + ", ".join(CENTRAL) + "), the cheapest first. A funded comparison "
        "keeps its planned seeds when the plan is rewritten (pre-registration; `--replan` recomputes them).",
        "",
        "Per paper (a stage shared by several claims is counted once, at the largest scale any of them asks):",
        "",
        markdown_table(papers),
        "",
        f"The whole plan (every stage once, at the largest scale any comparison asks of it): **{total['cpu min']:,.0f} "
        f"CPU-minutes at `cpu`** and **{total['faithful min']:,.0f} at `faithful`** on 2 cores.",
        "",
    ]
    SUMMARY.write_text("\n".join(text))


def recording_stages(ledger: pd.DataFrame) -> dict[str, tuple[str, ...]]:
    """claim id -> the stages whose records its verdict reads (whose seeds it costs)."""
    return {r["id"]: RECORDS.get(r["stage"], (r["stage"],)) for _, r in ledger.iterrows()}


def estimated_reads(path: Path = FAITHFUL_ESTIMATE) -> dict[str, set[str]]:
    """Per stage, the stages it reads, as ``benchmarks/faithful_estimate.md`` records them from dvc.yaml (its
    ``reads`` column; ``python -m compendium.pipeline.faithful --dry-run --write`` writes it)."""
    out: dict[str, set[str]] = {}
    if not Path(path).is_file():
        return out
    for line in Path(path).read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and re.fullmatch(r"\w+", cells[0]) and cells[0] != "stage" and cells[0] not in out:
            out[cells[0]] = set(cells[1].split()) - {"–"}
    return out


def family(stage: str) -> str:
    """A stage's family: the prefix of its name (``dd``, ``ssdd``, ``theory``), ``rela`` for ``priors`` too."""
    return "rela" if stage == "priors" else stage.split("_")[0]


def rerun_stages(claims: pd.DataFrame, reads: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """claim id -> the stages a rerun of its verdict at other lengths runs: its stage (for a row of ``dd_tables``, the
    set stages its paper's rows read, :data:`TABLE_SOURCES`, and ``dd_tables``) and every stage of the same
    :func:`family` upstream of them (``reads``: stage -> the stages it reads, :func:`estimated_reads`). Another
    family's products it reads (SSDD's DM baseline sets) are taken as they are.

        >>> reads = {"dd_tables": {"dd_inversion", "dd_matching"}, "dd_inversion": {"dd_teachers"}}
        >>> row = {"id": "x", "paper": "DWA", "stage": "dd_tables"}
        >>> sorted(rerun_stages(pd.DataFrame([row]), reads)["x"])
        ['dd_inversion', 'dd_tables', 'dd_teachers']
    """
    out = {}
    for _, r in claims.iterrows():
        todo = [r["stage"], *TABLE_SOURCES.get(r["paper"], ())] if r["stage"] == "dd_tables" else [r["stage"]]
        seen: set[str] = set()
        while todo:
            s = todo.pop()
            if s not in seen:
                seen.add(s)
                todo += [
                    u
                    for u in reads.get(s, ())
                    if family(u) == family(s) and not (s == "dd_tables" and u in RECORDS["dd_tables"])
                ]
        out[r["id"]] = seen
    return out


def estimated_minutes(path: Path = FAITHFUL_ESTIMATE) -> dict[str, float]:
    """Per stage, a profile's estimated minutes: the last column of the first table of ``benchmarks/
    faithful_estimate.md`` (the default) or ``benchmarks/paper_estimate.md`` (:data:`PAPER_ESTIMATE`)."""
    out = {}
    if not Path(path).is_file():
        return out
    for line in Path(path).read_text().splitlines():
        m = re.match(r"\| (\w+) \|.*\| ([\d.,]+) (min|h) \|\s*$", line)
        if m and m.group(1) not in out:
            v = float(m.group(2).replace(",", ""))
            out[m.group(1)] = v * 60 if m.group(3) == "h" else v
    return out


def plan_inputs(reports: Path) -> tuple[Mapping[str, float], Mapping[str, float]]:
    """(cpu minutes per stage from ``stage_minutes.json``, faithful estimate per stage)."""
    return _minutes(reports), estimated_minutes()


def _stage_records(reports: Path) -> dict:
    """``stage_minutes.json``'s entry per stage (a mapping with ``minutes`` and ``parameters``, or bare minutes)."""
    data = json.loads((reports / "stage_minutes.json").read_text())
    return data.get("stages", data)


def stage_parameters(reports: Path) -> dict[str, dict]:
    """stage -> the parameters of its last measured run (``stage_minutes.json``)."""
    return {
        s: dict(v.get("parameters") or {}) if isinstance(v, Mapping) else {} for s, v in _stage_records(reports).items()
    }


def _minutes(reports: Path) -> dict[str, float]:
    return {s: float(v["minutes"] if isinstance(v, Mapping) else v) for s, v in _stage_records(reports).items()}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help=f"write {FILE.name} (else print it)")
    ap.add_argument("--budget", type=float, default=240.0, help="the cpu profile's budget in minutes (default 240)")
    ap.add_argument("--replan", action="store_true", help="recompute the funded comparisons' seeds too (see freeze)")
    ap.add_argument(
        "--keep-funding",
        action="store_true",
        help="fund nothing new: what the free minutes would fund is marked proposed (see hold_funding)",
    )
    a = ap.parse_args(argv)
    reports = paths.REPORTS
    ev = pd.read_csv(reports / "tables" / "claims_ledger" / "evidence.csv", dtype=str, keep_default_na=False)
    minutes, faithful = plan_inputs(reports)
    shares = seed_shares(reports, stage_parameters(reports))
    registry = reg.load()
    p = plan(ev, registry, minutes, faithful, recording_stages(ev), a.budget, shares)
    p = p if a.replan else freeze(p, read())
    p["funded"] = ""
    p, planned_min = allocate(p, minutes, a.budget, lambda i: registry.by_id[i].paper, shares)
    if a.keep_funding:
        p = hold_funding(p, read())
    papers = by_paper(p, lambda i: registry.by_id[i].paper)
    whole = by_paper(p, lambda i: "all")
    total = whole.iloc[0] if len(whole) else {"cpu min": 0.0, "faithful min": 0.0}
    if a.write:
        p.to_csv(FILE, index=False)
        write_summary(p, papers, total, a.budget, float(sum(minutes.values())), planned_min)
        print(f"wrote {FILE} ({len(p)} comparisons) and {SUMMARY.relative_to(paths.ROOT)}")
    else:
        print(p.to_string())
    print(papers.to_string(index=False))


def by_paper(plan_frame: pd.DataFrame, paper_of: Callable[[str], str]) -> pd.DataFrame:
    """Per paper (``paper_of``: claim id -> the group to cost together), what running its plan costs: the planned
    minutes of each set of recording stages at the largest any of the paper's comparisons asks, summed over those
    sets (stages shared by several claims run once). Comparisons beyond :data:`MAX_SEEDS` are counted, not costed."""
    cols = ["paper", "comparisons", "seeds planned (largest)", "beyond the cap", "cpu min", "faithful min"]
    if not len(plan_frame):
        return pd.DataFrame(columns=cols)
    p = plan_frame.assign(paper=plan_frame["id"].map(paper_of))
    rows = []
    for paper, g in p.groupby("paper"):
        ok = g[~g["seeds_planned"].astype(str).str.startswith(">")]
        priced = ok[ok["cpu_min_planned"].astype(str) != ""]
        cost = priced.assign(
            cpu=pd.to_numeric(priced["cpu_min_planned"]), faithful=pd.to_numeric(priced["faithful_min_planned"])
        )
        per_stages = cost.groupby("records")[["cpu", "faithful"]].max()
        rows.append(
            {
                "paper": paper,
                "comparisons": len(g),
                "seeds planned (largest)": int(pd.to_numeric(ok["seeds_planned"]).max()) if len(ok) else "",
                "beyond the cap": int(len(g) - len(ok)),
                "cpu min": round(float(per_stages["cpu"].sum()), 1),
                "faithful min": round(float(per_stages["faithful"].sum()), 1),
            }
        )
    return pd.DataFrame(rows, columns=cols)


if __name__ == "__main__":
    main()
