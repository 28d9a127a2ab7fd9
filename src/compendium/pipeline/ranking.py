"""DD-Ranking's IOR, HLR and label-robust score of a stage's teacher- or soft-label methods, with paired
intervals over matched seeds (:meth:`compendium.verdicts.claims.Effect.paired`).

The metrics themselves are :mod:`compendium.distill.ranking` (DD-Ranking's definitions, accuracies as
fractions); this module adds what a stage needs around them: the evaluations a stage lacks for them
(:func:`ior_hlr_jobs`: each set with hard labels, a fresh random real subset of the same size per seed
under the method's own evaluation, the same student on the real pool with hard labels), the long frame of
every arm's rows (:func:`long_frame`) and the table with the intervals (:func:`ior_hlr_table`, of
:mod:`compendium.pipeline.ranking_table`, re-exported here).

The same arms derived from a stage's own evaluation jobs, whatever their keys (:func:`arm_jobs`,
:func:`arm_frame`, run and tabulated by :func:`evaluate_ior_hlr`): a ``cell`` function names each own
teacher/soft-label job's table cell (method, ipc and the ``by`` columns; ``None``: not a set of the table), and
every arm keeps that job's set, config (only the label mode changed), seeds and teacher. The random arm is
``DRAW`` (DD-Ranking's fresh class-balanced real subset per seed), ``SELF`` (the method's set *is* a random real
subset of the same size, e.g. ReLA for labelled DD: its own runs are the random arm, IOR 0 by construction) or
``NONE`` (IOR not defined: learned labels without a teacher; HLR only). :func:`reuse` takes an arm's row from
a run the stage already made with the same set, training config, seed and teacher. The stages' cells:
:func:`by_method` and :func:`dwa_cell`; label distillation (a soft-label method without a teacher, the random
arm by the stage's convention) is :func:`label_distillation`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from compendium.distill import coresets, runner
from compendium.distill import evaluate as E
from compendium.distill import ranking
from compendium.distill import records
from compendium.pipeline.ranking_table import NO_TEACHER, ONE_SEED, ior_hlr_table  # noqa: F401  (re-exported)

RANDOM_REAL = "random real (same size)"  # the random arm's method name in the runs table


def _cost(cfg: E.EvalConfig) -> float:
    return cfg.steps * (3 if cfg.arch == "resnet18" else 1)


def ior_hlr_jobs(
    sets: Mapping,
    configs: Mapping[str, E.EvalConfig],
    seeds: Sequence[int],
    teacher,
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    mean,
    std,
) -> list[runner.Job]:
    """The evaluations IOR and HLR need beside a stage's soft/teacher-label runs of ``sets`` ((method, ipc)
    -> set), for every student of ``configs`` (student -> the stage's evaluation config) and seed:

    * each set with hard labels (HLR's syn-hard): the same config, ``label_mode`` ``"hard"``;
    * at each ipc, a class-balanced random real subset drawn with the seed (DD-Ranking draws one per
      evaluation run; :func:`compendium.distill.coresets.random_real`), evaluated with the config as is
      (IOR's rdm-any: the same label mode, teacher and temperature);
    * the same student on the real pool with hard labels (HLR's real-hard):
      :func:`compendium.distill.records.ceiling_set` of ``steps x batch`` images, each drawn at
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
                jobs.append(
                    runner.Job(
                        {
                            "method": RANDOM_REAL,
                            "ipc": ipc,
                            "student": st,
                            "labels": cfg.label_mode,
                            "set": ranking.RANDOM,
                        },
                        rnd,
                        cfg,
                        s,
                        teacher if cfg.label_mode == "teacher" else None,
                        cost=_cost(cfg),
                    )
                )
        pool = records.ceiling_set(images_u8, labels, cfg.steps * cfg.batch_size, mean, std)
        jobs += [
            runner.Job(
                {"method": records.CEILING, "ipc": 0, "student": st, "labels": ranking.HARD, "set": ranking.FULL},
                pool,
                hard,
                s,
                cost=_cost(cfg),
            )
            for s in seeds
        ]
    return jobs


def long_frame(results: Iterable[Mapping], extra: Iterable[Mapping], methods: Iterable[str]) -> pd.DataFrame:
    """The long frame of :func:`compendium.distill.ranking.matched_runs`: the stage's own rows of ``methods``
    (``results``: method, ipc, student, labels, seed, acc; their set is ``distilled``) and the rows of
    :func:`ior_hlr_jobs` (``extra``). Columns: method, ipc, student, evaluation, set, seed, acc."""
    own = pd.DataFrame(list(results))
    own = own[own["method"].isin(list(methods))].assign(set=ranking.DISTILLED)
    df = pd.concat([own, pd.DataFrame(list(extra))], ignore_index=True).rename(columns={"labels": "evaluation"})
    return df[["method", "ipc", "student", "evaluation", "set", "seed", "acc"]]


SELF_NOTE = (
    "IOR 0 by construction: the set is itself a random real subset of the same size under the same "
    "labels (its own runs are the random arm)"
)
DRAW, SELF, NONE = "draw", "self", "none"  # the random arm: a fresh draw per seed, the set itself, none


# ---------------------------------------------------------------------- the arms from a stage's own jobs

Cell = Callable[[runner.Job], "Mapping | None"]


def by_method(methods: Iterable[str], columns: Sequence[str] = ("method", "ipc", "student")) -> Cell:
    """The cell of an own job whose key's ``method`` is one of ``methods``: its key's ``columns``."""
    methods = set(methods)

    def cell(job: runner.Job):
        return {c: job.key[c] for c in columns} if job.key.get("method") in methods else None

    return cell


def dwa_cell(
    jobs: Sequence[runner.Job], parts: Iterable[str] = ("sweep", "grid", "real", "inv"), min_seeds: int = 2
) -> Cell:
    """The cells of ``dd_dwa``'s teacher-label sets (its jobs' keys: ``part``, ``set``): the Fig. 3 sweep, the
    Fig. 5 grid, arm B (``real``) and dd_inversion's sets (``inv``), each evaluated on at least ``min_seeds``
    seeds (the ceiling and Table 10's class-restricted runs are not sets of the table). Method
    ``"<part>: <set>"`` (as the results table names them), ipc from the set's size, student the config's arch."""
    parts = set(parts)
    seeds: dict[tuple, set] = {}
    for j in jobs:
        seeds.setdefault((j.key.get("part"), j.key.get("set")), set()).add(j.seed)

    def cell(job: runner.Job):
        k = (job.key.get("part"), job.key.get("set"))
        if k[0] not in parts or len(seeds.get(k, ())) < min_seeds:
            return None
        return {"method": f"{k[0]}: {k[1]}", "ipc": len(job.dset) // job.dset.num_classes, "student": job.cfg.arch}

    return cell


def _hard(cfg: E.EvalConfig) -> E.EvalConfig:
    return cfg.replace(label_mode=ranking.HARD)


def _cells(jobs: Sequence[runner.Job], cell: Cell) -> list[tuple[runner.Job, dict]]:
    out = []
    for j in jobs:
        c = cell(j)
        if c is None:
            continue
        c = dict(c)
        if not {"method", "ipc"} <= set(c):
            raise ValueError(f"a cell needs 'method' and 'ipc', got {sorted(c)} for {j.key}")
        if j.cfg.label_mode == ranking.HARD:
            raise ValueError(
                f"{j.key}: IOR and HLR are for sets evaluated with soft or teacher labels, this job is hard"
            )
        out.append((j, c))
    return out


def arm_jobs(
    jobs: Sequence[runner.Job],
    cell: Cell,
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    *,
    random: str = DRAW,
    full_by: Sequence[str] = ("student",),
) -> list[runner.Job]:
    """The evaluations IOR and HLR need beside a stage's own jobs ``jobs`` (those ``cell`` names; each keeps
    its set, config, seed, teacher and cost):

    * syn-hard: each own job's set and config with hard labels, same seed;
    * rdm (``random`` ``DRAW``): per cell without its method (ipc and the other columns) and seed, a
      class-balanced random real subset of ``ipc`` images per class drawn with the seed
      (:func:`compendium.distill.coresets.random_real`, one draw per ipc and seed, shared by the cells), under
      the own jobs' config and teacher (one per such cell, else an error); ``SELF`` / ``NONE``: no job;
    * full-hard: per value of the cell's ``full_by`` columns and seed, the same student on the real pool with
      hard labels (:func:`compendium.distill.records.ceiling_set` of ``steps x batch`` images, each
      drawn at most once), the own jobs' config with hard labels (one per such value, else an error).

    Random and pool images are normalised as the own job's set. Keys: the cell's columns, ``labels`` (the
    label mode) and ``set`` (``distilled`` / ``random`` / ``full``); the random arm's method is
    :data:`RANDOM_REAL`, the full arm's :data:`~compendium.distill.records.CEILING` at ipc 0."""
    if random not in (DRAW, SELF, NONE):
        raise ValueError(f"random must be one of {(DRAW, SELF, NONE)}, got {random!r}")
    C = int(labels.max()) + 1
    out, rnd, full, draws, pools = [], {}, {}, {}, {}
    for j, c in _cells(jobs, cell):
        out.append(
            runner.Job(
                {**c, "labels": ranking.HARD, "set": ranking.DISTILLED}, j.dset, _hard(j.cfg), j.seed, cost=j.cost
            )
        )
        if random == DRAW:
            if j.cfg.label_mode != "teacher":
                raise ValueError(
                    f"{c}: a fresh random subset under {j.cfg.label_mode!r} labels needs a teacher to label "
                    "it; use random=NONE (IOR not defined) or the stage's own convention"
                )
            g = tuple((k, v) for k, v in c.items() if k != "method")
            have = rnd.setdefault(g, (j.cfg, j.teacher, j.dset.mean, j.dset.std, j.cost, set()))
            if have[0] != j.cfg or have[1] is not j.teacher:
                raise ValueError(f"{dict(g)}: the own jobs of one random arm differ in config or teacher")
            have[5].add(j.seed)
        missing = [k for k in full_by if k not in c]
        if missing:
            raise ValueError(f"full_by {missing} not in the cell {sorted(c)}")
        f = tuple((k, c[k]) for k in full_by)
        have = full.setdefault(f, (_hard(j.cfg), j.dset.mean, j.dset.std, j.cost, set()))
        if have[0] != _hard(j.cfg):
            raise ValueError(f"{dict(f) or 'the stage'}: the own jobs of one full arm differ in config")
        have[4].add(j.seed)
    for g, (cfg, teacher, mean, std, cost, seeds) in rnd.items():
        c = dict(g)
        for s in sorted(seeds):
            k = (c["ipc"], s, mean, std)
            if k not in draws:
                draws[k] = coresets.random_real(images_u8, labels, c["ipc"], C, mean, std, seed=s)
            out.append(
                runner.Job(
                    {"method": RANDOM_REAL, **c, "labels": cfg.label_mode, "set": ranking.RANDOM},
                    draws[k],
                    cfg,
                    s,
                    teacher,
                    cost=cost,
                )
            )
    for f, (cfg, mean, std, cost, seeds) in full.items():
        if not cfg.steps:
            raise ValueError(
                f"{dict(f)}: the real-pool arm needs a config with fixed steps (its size is steps x batch)"
            )
        k = (cfg.steps * cfg.batch_size, mean, std)
        if k not in pools:
            pools[k] = records.ceiling_set(images_u8, labels, k[0], mean, std)
        out += [
            runner.Job(
                {"method": records.CEILING, "ipc": 0, **dict(f), "labels": ranking.HARD, "set": ranking.FULL},
                pools[k],
                cfg,
                s,
                cost=cost,
            )
            for s in sorted(seeds)
        ]
    return out


def arm_frame(
    jobs: Sequence[runner.Job], rows, cell: Cell, extra: Iterable[Mapping], *, random: str = DRAW
) -> pd.DataFrame:
    """The long frame of :func:`compendium.distill.ranking.matched_runs` from the stage's own ``jobs`` and
    their result ``rows`` (in the order of ``jobs``, as :func:`compendium.distill.runner.evaluate_many` returns
    them; the rows ``cell`` names are the distilled arm, evaluation = the job's label mode) and the rows of
    :func:`arm_jobs` (``extra``). With ``random`` ``SELF`` the own rows are the random arm too. Columns: the
    cells', ``evaluation``, ``set``, ``seed``, ``acc``."""
    rows = pd.DataFrame(rows).to_dict("records") if not isinstance(rows, list) else rows
    if len(rows) != len(jobs):
        raise ValueError(f"{len(rows)} result rows for {len(jobs)} jobs: pass the rows in the order of the jobs")
    own = []
    for j, r in zip(jobs, rows):
        c = cell(j)
        if c is None:
            continue
        if r["seed"] != j.seed or any(r.get(k, v) != v for k, v in j.key.items()):
            raise ValueError(f"the result row {r} is not the job {j.key} (seed {j.seed})")
        base = {**c, "evaluation": j.cfg.label_mode, "seed": j.seed, "acc": r["acc"]}
        own.append({**base, "set": ranking.DISTILLED})
        if random == SELF:
            own.append({**base, "method": RANDOM_REAL, "set": ranking.RANDOM})
    ex = pd.DataFrame(list(extra)).rename(columns={"labels": "evaluation"})
    df = pd.concat([pd.DataFrame(own), ex], ignore_index=True)
    first = [c for c in df.columns if c not in ("evaluation", "set", "seed", "acc")]
    return df[first + ["evaluation", "set", "seed", "acc"]]


def _same_training(a: E.EvalConfig, b: E.EvalConfig) -> bool:
    """The same student training: equal configs, the KL's settings ignored with hard labels (unused there)."""

    def norm(c):
        return (
            c.replace(temperature=1.0, t2_scale=False, teacher_train_mode=False) if c.label_mode == ranking.HARD else c
        )

    return norm(a) == norm(b)


def _same_set(a, b) -> bool:
    if a is b:
        return True
    soft = (a.soft_labels is None and b.soft_labels is None) or (
        a.soft_labels is not None and b.soft_labels is not None and torch.equal(a.soft_labels, b.soft_labels)
    )
    return (
        a.images.shape == b.images.shape
        and soft
        and torch.equal(a.labels, b.labels)
        and torch.equal(a.images, b.images)
    )


def reuse(new: Sequence[runner.Job], done: Sequence[runner.Job], rows) -> tuple[list[runner.Job], list[dict | None]]:
    """``(to_run, reused)``: the jobs of ``new`` that no job of ``done`` already ran, and per job of ``new`` the
    row of a ``done`` job (``rows`` in its order) with the same set (equal tensors), training config
    (:func:`_same_training`), seed, teacher and test classes, under the new job's key, its ``same run as``
    naming the done job's key (``None`` where it is to run). Evaluations are seeded, so a rerun would
    reproduce the row."""
    rows = pd.DataFrame(rows).to_dict("records") if not isinstance(rows, list) else rows
    if len(rows) != len(done):
        raise ValueError(f"{len(rows)} result rows for {len(done)} done jobs")
    to_run, reused = [], []
    for n in new:
        hit = next(
            (
                i
                for i, d in enumerate(done)
                if d.seed == n.seed
                and d.teacher is n.teacher
                and d.classes == n.classes
                and _same_training(d.cfg, n.cfg)
                and _same_set(d.dset, n.dset)
            ),
            None,
        )
        if hit is None:
            to_run.append(n)
            reused.append(None)
            continue
        d, r = done[hit], rows[hit]
        reused.append(
            {
                **n.key,
                "seed": n.seed,
                **{k: v for k, v in r.items() if k not in d.key and k != "seed"},
                "same run as": ", ".join(f"{k} {v}" for k, v in d.key.items()),
            }
        )
    return to_run, reused


def evaluate_ior_hlr(
    jobs: Sequence[runner.Job],
    rows,
    cell: Cell,
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    test_images: torch.Tensor,
    test_labels: torch.Tensor,
    *,
    by: Sequence[str] = ("student",),
    full_by: Sequence[str] | None = None,
    random: str = DRAW,
    reuse_done: bool = False,
    workers: int = 2,
    note: str = "",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(table, runs)``: the arms of :func:`arm_jobs` beside the stage's own ``jobs`` (result ``rows`` in their
    order) evaluated on the test set (``reuse_done``: a run the stage already made is taken over, :func:`reuse`),
    and :func:`ior_hlr_table` over keys (method, ipc) and ``by`` (``full_by``: default ``by``; ``random``
    ``NONE``: IOR not defined; ``SELF``: the note says IOR is 0 by construction). ``runs``: the added arms' rows."""
    full_by = list(by) if full_by is None else list(full_by)
    extra = arm_jobs(jobs, cell, images_u8, labels, random=random, full_by=full_by)
    to_run, reused = reuse(extra, jobs, rows) if reuse_done else (extra, [None] * len(extra))
    ran = iter(runner.evaluate_many(to_run, test_images, test_labels, workers=workers) if to_run else [])
    runs = [r if r is not None else {**next(ran), **({"same run as": ""} if reuse_done else {})} for r in reused]
    frame = arm_frame(jobs, rows, cell, runs, random=random)
    note = "; ".join(n for n in (note, SELF_NOTE if random == SELF else "") if n)
    table = ior_hlr_table(frame, by=by, full_by=full_by, ior_defined=random != NONE, note=note)
    return table, pd.DataFrame(runs)


# ------------------------------------------------------------------------- label distillation (dd_labels)

LD_TRUE, LD_MAPPED = "true labels", "digit k -> class k"  # dd_labels' hard-label arms (within, cross)
LD_NOTE = (
    "random arm by the stage's convention: with fixed real base images the random real subset of the same "
    "size is the within base with its true one-hot labels (LD has no teacher to label a fresh draw); "
    "syn hard: the base images with their own class labels (within: true labels; cross: digit k -> class k)"
)


def label_distillation(
    rows,
    sets: Mapping[tuple, object],
    cfg: E.EvalConfig,
    seeds: Sequence[int],
    images_u8: torch.Tensor,
    labels: torch.Tensor,
    test_images: torch.Tensor,
    test_labels: torch.Tensor,
    *,
    student: str,
    optimizer: str = "adam",
    mult: float = 1.0,
    workers: int = 2,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(table, runs)`` of ``dd_labels``' learned labels (every set of ``sets`` ``{(base, labels): set}`` but
    the hard-label arms) at the distillation cell (``student``, ``optimizer``, ``mult``) of the stage's result
    ``rows`` (base, labels, student, optimizer, mult, seed, acc), with the stage's config ``cfg`` of that cell:

    * syn: the learned soft labels; syn hard: the same base images with their class labels (within: the
      "true labels" arm, cross: "digit k -> class k");
    * rdm: the stage's convention (:data:`LD_NOTE`): the within base with its true labels, for both bases;
    * full hard: the student on the real pool with hard labels under ``cfg`` (``steps x batch`` images of
      ``images_u8``, each at most once; the one added evaluation per seed, in ``runs``)."""
    df = pd.DataFrame(rows)
    df = df[(df["student"] == student) & (df["optimizer"] == optimizer) & (df["mult"] == mult) & df["seed"].isin(seeds)]
    ref = sets[("within", LD_TRUE)]
    pool = records.ceiling_set(images_u8, labels, cfg.steps * cfg.batch_size, ref.mean, ref.std)
    jobs = [
        runner.Job(
            {"method": records.CEILING, "ipc": 0, "labels": ranking.HARD, "set": ranking.FULL},
            pool,
            _hard(cfg),
            s,
            cost=cfg.steps,
        )
        for s in seeds
    ]
    runs = runner.evaluate_many(jobs, test_images, test_labels, workers=workers)

    def arm(src, name, **kw):  # the stage's rows of (src base, labels name), as an arm of the table
        return [
            {"seed": r["seed"], "acc": r["acc"], **kw}
            for r in df[(df["base"] == src) & (df["labels"] == name)].to_dict("records")
        ]

    out, randoms = [], set()
    for (base, name), d in sets.items():
        if name in (LD_TRUE, LD_MAPPED):
            continue
        hard = LD_TRUE if base == "within" else LD_MAPPED
        cell = {"method": name, "ipc": len(d) // d.num_classes, "base": base}
        out += arm(base, name, **cell, evaluation="soft", set=ranking.DISTILLED)
        out += arm(base, hard, **cell, evaluation=ranking.HARD, set=ranking.DISTILLED)
        if (cell["ipc"], base) not in randoms:  # one random arm per (ipc, base), shared by the variants
            randoms.add((cell["ipc"], base))
            out += arm("within", LD_TRUE, **{**cell, "method": RANDOM_REAL}, evaluation="soft", set=ranking.RANDOM)
    out += [
        {
            "method": records.CEILING,
            "ipc": 0,
            "base": np.nan,
            "evaluation": ranking.HARD,
            "set": ranking.FULL,
            "seed": r["seed"],
            "acc": r["acc"],
        }
        for r in runs
    ]
    table = ior_hlr_table(pd.DataFrame(out), by=["base"], full_by=[], note=LD_NOTE)
    return table, pd.DataFrame(runs)
