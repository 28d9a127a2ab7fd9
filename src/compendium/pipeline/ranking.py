"""DD-Ranking's IOR, HLR and label-robust score of a stage's teacher- or soft-label methods, with paired
intervals over matched seeds (:meth:`compendium.pipeline.claims.Effect.paired`).

The metrics themselves are :mod:`compendium.distill.ranking` (DD-Ranking's definitions, accuracies as
fractions); this module adds what a stage needs around them: the evaluations a stage lacks for them
(:func:`ior_hlr_jobs`: each set with hard labels, a fresh random real subset of the same size per seed
under the method's own evaluation, the same student on the real pool with hard labels), the long frame of
every arm's rows (:func:`long_frame`) and the table with the intervals (:func:`ior_hlr_table`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pandas as pd
import torch

from compendium.distill import coresets, runner
from compendium.distill import evaluate as E
from compendium.distill import ranking
from compendium.pipeline.checks import labelled as L
from compendium.pipeline.claims import Effect

RANDOM_REAL = "random real (same size)"   # the random arm's method name in the runs table


def _cost(cfg: E.EvalConfig) -> float:
    return cfg.steps * (3 if cfg.arch == "resnet18" else 1)


def ior_hlr_jobs(sets: Mapping, configs: Mapping[str, E.EvalConfig], seeds: Sequence[int], teacher,
                 images_u8: torch.Tensor, labels: torch.Tensor, mean, std) -> list[runner.Job]:
    """The evaluations IOR and HLR need beside a stage's soft/teacher-label runs of ``sets`` ((method, ipc)
    -> set), for every student of ``configs`` (student -> the stage's evaluation config) and seed:

    * each set with hard labels (HLR's syn-hard): the same config, ``label_mode`` ``"hard"``;
    * at each ipc, a class-balanced random real subset drawn with the seed (DD-Ranking draws one per
      evaluation run; :func:`compendium.distill.coresets.random_real`), evaluated with the config as is
      (IOR's rdm-any: the same label mode, teacher and temperature);
    * the same student on the real pool with hard labels (HLR's real-hard):
      :func:`compendium.pipeline.checks.labelled.ceiling_set` of ``steps x batch`` images, each drawn at
      most once, as from the whole training set.

    Keys: method, ipc, student, labels (the label mode), set (``distilled`` / ``random`` / ``full``)."""
    C = int(labels.max()) + 1
    jobs = []
    for st, cfg in configs.items():
        if not cfg.steps:
            raise ValueError(f"{st}: the real-pool arm needs a config with fixed steps (its size is steps x batch)")
        hard = cfg.replace(label_mode=ranking.HARD)
        for (m, ipc), d in sets.items():
            key = {"method": m, "ipc": ipc, "student": st, "labels": ranking.HARD, "set": ranking.DISTILLED}
            jobs += [runner.Job(key, d, hard, s, cost=_cost(cfg)) for s in seeds]
        for ipc in sorted({ipc for _, ipc in sets}):
            for s in seeds:
                rnd = coresets.random_real(images_u8, labels, ipc, C, mean, std, seed=s)
                jobs.append(runner.Job({"method": RANDOM_REAL, "ipc": ipc, "student": st, "labels": cfg.label_mode,
                                        "set": ranking.RANDOM}, rnd, cfg, s,
                                       teacher if cfg.label_mode == "teacher" else None, cost=_cost(cfg)))
        pool = L.ceiling_set(images_u8, labels, cfg.steps * cfg.batch_size, mean, std)
        jobs += [runner.Job({"method": L.CEILING, "ipc": 0, "student": st, "labels": ranking.HARD, "set": ranking.FULL},
                            pool, hard, s, cost=_cost(cfg)) for s in seeds]
    return jobs


def long_frame(results: Iterable[Mapping], extra: Iterable[Mapping], methods: Iterable[str]) -> pd.DataFrame:
    """The long frame of :func:`compendium.distill.ranking.matched_runs`: the stage's own rows of ``methods``
    (``results``: method, ipc, student, labels, seed, acc; their set is ``distilled``) and the rows of
    :func:`ior_hlr_jobs` (``extra``). Columns: method, ipc, student, evaluation, set, seed, acc."""
    own = pd.DataFrame(list(results))
    own = own[own["method"].isin(list(methods))].assign(set=ranking.DISTILLED)
    df = pd.concat([own, pd.DataFrame(list(extra))], ignore_index=True).rename(columns={"labels": "evaluation"})
    return df[["method", "ipc", "student", "evaluation", "set", "seed", "acc"]]


def ior_hlr_table(frame: pd.DataFrame, keys: Sequence[str] = ("method", "ipc"), by: Sequence[str] = (),
                  weight: float = ranking.DEFAULT_WEIGHT) -> pd.DataFrame:
    """One row per (``keys``, ``by``): the matched seeds, the mean accuracy of the four arms (syn under the
    method's evaluation, random real under it, syn hard, full hard), IOR and HLR with the 95% interval of
    the paired difference over the matched seeds (:meth:`Effect.paired`), and the label-robust score (the
    mean of the per-seed scores, as DD-Ranking reports it, with the t interval of that mean). Accuracies,
    IOR and HLR are fractions (accuracies in [0, 1] are required: :func:`~compendium.distill.ranking.as_fractions`),
    LRS lies in [0, 1]; an interval is NaN with one seed. ``frame``: as
    :func:`compendium.distill.ranking.matched_runs` takes it."""
    runs = ranking.matched_runs(frame, keys, by, weight)
    group = [*keys, *by, "evaluation"]
    rows = []
    for gkey, g in runs.groupby(group, sort=False, dropna=False):
        per = {c: dict(zip(g["seed"], g[c])) for c in ranking.RUN_COLUMNS}
        ior = Effect.paired("IOR", per["syn"], per["random"])
        hlr = Effect.paired("HLR", per["full hard"], per["syn hard"])
        lrs = Effect("LRS", tuple(g["LRS"]), tuple(g["seed"]))
        row = dict(zip(group, gkey))
        row.update({"seeds": ", ".join(str(s) for s in ior.seeds), "n": ior.n,
                    **{f"acc {c}": float(g[c].mean()) for c in ("syn", "random", "syn hard", "full hard")}})
        for name, eff in (("IOR", ior), ("HLR", hlr), ("LRS", lrs)):
            lo, hi = eff.interval
            row.update({name: eff.mean, f"{name} low": lo, f"{name} high": hi})
        rows.append(row)
    return pd.DataFrame(rows)
