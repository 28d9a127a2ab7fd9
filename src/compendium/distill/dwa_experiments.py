"""DWA's further experiments (Du et al., NeurIPS 2024): the named syntheses behind Fig. 1 (t-SNE of the
logits), Fig. 3 (the λ_var sweep, coupled vs decoupled BN weights), Fig. 4 (the feature distance, Eq. 21),
Fig. 5 (the K × ρ grid), Table 10 (class-incremental learning with a GDumb learner) and the sets of
Tables 4 and 9 distilled by other teachers; their evaluation jobs and tables.

Synthesis follows DWA's code (BN-input statistics, real init, a fresh teacher copy per ipc index, K
normalised ascent steps of total norm ρ); every set is relabelled online by the teacher that distilled it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from sklearn.manifold import TSNE

from compendium.core.parallel import run_calls
from compendium.core.progress import say
from compendium.distill import continual, inversion, runner, teachers
from compendium.distill import evaluate as E

METHODS = ("sre2l", "dwa")
PAPER_T10 = {"sre2l": [15.7, 10.6, 9.0, 7.9, 6.9], "dwa": [34.6, 25.7, 22.5, 20.2, 18.1]}  # CIFAR-100, 20..100 classes


def coupling(lam: float, how: str) -> dict:
    """The BN loss weights of Fig. 3: *coupled*, the whole BN loss weight is λ (SRe2L's r_bn, mean and
    variance together); *decoupled*, the mean term keeps 0.01 and the variance term gets λ (r_var = λ / 0.01)."""
    return dict(r_bn=lam, r_var=1.0) if how == "coupled" else dict(r_bn=0.01, r_var=lam / 0.01)


#: DWA's own λ_var (r_var = λ_var / 0.01 = 11; DWA, Sec. 4.1 and Fig. 3).
DWA_LAMBDA = 0.11


def fig4_lambda(sweep_lambdas) -> float:
    """The λ_var of Fig. 4 (and DWA's own r_var): the paper's 0.11 where swept, else the largest swept."""
    return DWA_LAMBDA if DWA_LAMBDA in sweep_lambdas else max(sweep_lambdas)


def synthesis_specs(
    common: dict,
    *,
    rho: float,
    K: int,
    cross_teachers,
    cross_ipc: int,
    cross_ipc_extra,
    sweep_lambdas,
    sweep_ipc: int,
    grid_K,
    grid_rho,
    grid_ipc: int,
    real_ipcs,
    cross_iterations: int | None = None,
    fig4_seeds=(),
    dwa_r_var: float = DWA_LAMBDA / 0.01,
    replicate_seeds: dict | None = None,
) -> dict:
    """Every named set: key -> (synthesis function, teacher name, ipc, kwargs). Keys: ``(method, teacher)``
    (Tables 4 and 9), ``("t4", method, ipc)`` (Table 4's further ResNet-18 blocks), ``("sweep", method, how, λ)``
    (Fig. 3), ``("fig4", method, how, seed)`` (Fig. 4's further syntheses at :func:`fig4_lambda`, one per
    seed of ``fig4_seeds`` other than ``common["seed"]``, whose set is the sweep's), ``("fig1", method, seed)``
    (Fig. 1's SRe2L and DWA, each with its own BN weights, at the sweep's ipc, one per seed of ``fig4_seeds``;
    the identical configurations of the sweep and of Fig. 4 are synthesised once), ``("grid", K, ρ)`` with
    ``("grid", 0, 0.0)`` the no-adjustment arm (Fig. 5), ``("real", ipc)`` (arm B: the real images DWA
    starts from, no optimisation) at each of ``real_ipcs``.

    ``cross_iterations`` (default: ``common["iterations"]``) sets the recovery iterations of the sets
    distilled by the other teachers alone, so that a profile can run Figs. 3 and 5 at the paper's 1,000
    iterations and leave Tables 4 and 9, whose foreign teachers cost about four times as much, shorter.
    ``dwa_r_var`` is DWA's variance weight of the sets of Tables 4 and 9 and of the Fig. 5 grid (λ_var = 0.01 r_var;
    11 on CIFAR and Tiny-ImageNet, 2 on ImageNet-1K, DWA Tables 6-8); Figs. 1, 3 and 4 set their own.
    ``replicate_seeds`` (``{"sweep": seeds, "grid": seeds, "real": seeds}``) adds ``("rep", s, *key)``: the set of
    ``key`` synthesised with seed ``s``, for every seed of its part other than ``common["seed"]``, which
    :func:`evaluation_jobs` gives the students of seed ``s`` (the synthesis replicated with the student)."""
    sre2l, dwa, inv = inversion.sre2l_synthesize, inversion.dwa_synthesize, inversion.inversion_synthesize
    cross_common = {**common, "iterations": common["iterations"] if cross_iterations is None else cross_iterations}
    specs = {}
    for t in cross_teachers:
        specs[("sre2l", t)] = (sre2l, t, cross_ipc, cross_common)
        specs[("dwa", t)] = (dwa, t, cross_ipc, {**cross_common, "rho": rho, "K": K, "r_var": dwa_r_var})
    for i in cross_ipc_extra if "resnet18" in cross_teachers else []:  # Table 4's further ipc blocks
        specs[("t4", "sre2l", i)] = (sre2l, "resnet18", i, cross_common)
        specs[("t4", "dwa", i)] = (dwa, "resnet18", i, {**cross_common, "rho": rho, "K": K, "r_var": dwa_r_var})
    for m in METHODS:
        for lam in sweep_lambdas:
            for how in ("coupled", "decoupled"):
                kw = {**common, **coupling(lam, how), "method": f"{m} {how} {lam:g}"}
                if m == "dwa":
                    kw.update(rho=rho, K=K)
                specs[("sweep", m, how, lam)] = (sre2l if m == "sre2l" else dwa, "convnet", sweep_ipc, kw)
    lam4 = fig4_lambda(sweep_lambdas)
    for s in fig4_seeds:
        if s != common["seed"]:
            for m in METHODS:
                for how in ("coupled", "decoupled"):
                    fn, t, ipc, kw = specs[("sweep", m, how, lam4)]
                    specs[("fig4", m, how, s)] = (fn, t, ipc, {**kw, "seed": s, "method": f"{kw['method']} seed {s}"})
    for s in fig4_seeds:  # Fig. 1 over synthesis seeds: SRe2L (coupled 0.01) and DWA (decoupled 0.11) as published
        specs[("fig1", "sre2l", s)] = (
            sre2l,
            "convnet",
            sweep_ipc,
            {**common, **coupling(0.01, "coupled"), "seed": s, "method": f"sre2l seed {s}"},
        )
        specs[("fig1", "dwa", s)] = (
            dwa,
            "convnet",
            sweep_ipc,
            {**common, **coupling(DWA_LAMBDA, "decoupled"), "rho": rho, "K": K, "seed": s, "method": f"dwa seed {s}"},
        )
    specs[("grid", 0, 0.0)] = (
        dwa,
        "convnet",
        grid_ipc,
        {**common, "weight_adjust": None, "r_var": dwa_r_var, "method": "dwa rho=0"},
    )
    for k_ in grid_K:
        for r_ in grid_rho:
            specs[("grid", k_, r_)] = (
                dwa,
                "convnet",
                grid_ipc,
                {**common, "rho": r_, "K": k_, "r_var": dwa_r_var, "method": f"dwa K={k_} rho={r_:g}"},
            )
    for i in sorted(set(real_ipcs)):
        specs[("real", i)] = (inv, "convnet", i, {**common, "iterations": 0, "init": "real", "method": "real init"})
    for key, (fn, t, ipc, kw) in list(specs.items()):
        for s in (replicate_seeds or {}).get(key[0], ()):
            if s != common["seed"]:
                specs[("rep", s, *key)] = (fn, t, ipc, {**kw, "seed": s, "method": f"{kw['method']} seed {s}"})
    return specs


def synthesize(
    specs: dict, teachers_by_name: dict, images: torch.Tensor, labels: torch.Tensor, mean, std, workers: int = 2
) -> dict:
    """Run the specs in parallel (:func:`~compendium.core.parallel.run_calls`), identical configurations
    (all but the ``method`` name) once, the biggest first (a foreign teacher counts 4 times); key -> set."""
    uniq = {}
    for key, (fn, t, ipc, kw) in specs.items():
        sig = (fn, t, ipc, tuple(sorted((k, v) for k, v in kw.items() if k != "method")))
        uniq.setdefault(sig, []).append(key)
    order = sorted(uniq, key=lambda s: -(s[2] * (4 if s[1] != "convnet" else 1)))
    calls = [(s[0], (teachers_by_name[s[1]], images, labels, s[2], mean, std), specs[uniq[s][0]][3]) for s in order]
    t0 = time.perf_counter()
    made = run_calls(calls, workers=workers)
    say(f"[dwa] {len(calls)} syntheses ({len(specs)} named) in {time.perf_counter() - t0:.1f} s wall")
    sets = {}
    for s, d in zip(order, made):
        for key in uniq[s]:
            sets[key] = d
    return sets


def save_cross_sets(sets: dict, cross_teachers, cross_ipc: int, folder: Path) -> list[str]:
    """The sets of Tables 4 and 9 (``dd_crossarch`` evaluates them): ``{method}_{teacher}_ipc{ipc}.pt``.

    The folder holds exactly this run's sets, listed in ``sets.json`` (an empty list when ``cross_teachers``
    is empty), so it exists for every configuration and never keeps a set an earlier configuration made.
    Returns the file names written."""
    named = {f"{m}_{t}_ipc{cross_ipc}.pt": sets[(m, t)] for t in cross_teachers for m in METHODS}
    named.update({f"{key[1]}_resnet18_ipc{key[2]}.pt": d for key, d in sets.items() if key[0] == "t4"})
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.pt"):
        if old.name not in named:
            old.unlink()
    for name, d in named.items():
        d.save(folder / name)
    (folder / "sets.json").write_text(json.dumps(sorted(named), indent=1) + "\n")
    return sorted(named)


def logit_tsne(teacher: torch.nn.Module, real_x: torch.Tensor, sets50: dict):
    """Fig. 1: the teacher's logits of the real images and of each set, and their joint 2-d t-SNE
    (perplexity 30, PCA init, random state 0) split into the real part and one part per set."""
    with torch.no_grad():
        teacher.eval()
        z_real = teacher(real_x)
        z_syn = {m: teacher(d.images) for m, d in sets50.items()}
    Z = torch.cat([z_real, *z_syn.values()]).numpy()
    emb = TSNE(2, perplexity=30, init="pca", random_state=0).fit_transform(Z)
    cuts = np.cumsum([len(z_real)] + [len(z) for z in z_syn.values()])[:-1]
    return z_real, z_syn, np.split(emb, cuts)


def logit_spread(z_syn: dict, sets50: dict, z_real: torch.Tensor, real_labels: torch.Tensor, ipc: int) -> pd.DataFrame:
    """Fig. 1 measured: the within-class spread of each set's logits relative to the real ones'
    (:func:`~compendium.distill.inversion.feature_distance`, mean over classes)."""
    spread = []
    for m, d in sets50.items():
        dist = inversion.feature_distance(z_syn[m], d.labels, d.num_classes, z_real, real_labels)
        spread.append(
            {"method": m, "ipc": ipc, "within-class logit spread / real (mean over classes)": float(dist.nanmean())}
        )
    return pd.DataFrame(spread)


def logit_spread_seeds(
    teacher: torch.nn.Module, sets: dict, z_real: torch.Tensor, real_labels: torch.Tensor
) -> pd.DataFrame:
    """Fig. 1 over synthesis seeds: :func:`logit_spread` of each ``("fig1", method, seed)`` set (all at the
    sweep's ipc), with a ``synthesis seed`` column."""
    fig1 = {k: d for k, d in sets.items() if k[0] == "fig1"}
    if not fig1:
        return pd.DataFrame()
    with torch.no_grad():
        teacher.eval()
        z = {k: teacher(d.images) for k, d in fig1.items()}
    d0 = next(iter(fig1.values()))
    out = logit_spread(z, fig1, z_real, real_labels, len(d0) // d0.num_classes)
    out["method"] = [k[1] for k in fig1]
    out.insert(1, "synthesis seed", [k[2] for k in fig1])
    return out


def evaluation_jobs(
    sets: dict,
    sets50: dict,
    base: E.EvalConfig,
    teacher,
    *,
    seeds,
    sweep_seeds,
    ceiling: tuple,
    tasks,
    cl_ipc: int,
    eval_steps: int,
    cl_seeds=None,
) -> list:
    """The jobs of every figure and table: the sweep (``sweep_seeds``; coupled at 0.01 is decoupled at
    0.01, evaluated once), the grid and arm B (``seeds``; seed s trains on ``sets[("rep", s, *key)]`` where
    :func:`synthesis_specs` replicated the synthesis), dd_inversion's sets (``sweep_seeds``), the
    ceiling ``(name, set)`` (``seeds``), then Table 10: per set, the first ``cl_ipc`` images per class as the
    memory, per task the classes seen so far with the teacher's labels restricted to them (``cl_seeds``,
    default ``sweep_seeds``)."""
    arms = (
        [
            (k, d, sweep_seeds if k[0] == "sweep" else seeds)
            for k, d in sets.items()  # at 0.01 coupled = decoupled
            if k[0] in ("sweep", "grid", "real") and k[2:] != ("coupled", 0.01)
        ]
        + [(("inv", m), d, sweep_seeds) for m, d in sets50.items()]
    )
    arms.append((("ceiling", ceiling[0]), ceiling[1], seeds))
    jobs = [
        runner.Job(
            {"part": k[0], "set": " / ".join(map(str, k[1:]))},
            sets.get(("rep", s, *k), d),
            base,
            s,
            teacher,
            cost=eval_steps,
        )
        for k, d, ss in arms
        for s in ss
    ]  # seed s: its own synthesis where replicated
    for m, d in sets50.items():
        mem = continual.class_prefix(d, cl_ipc)
        for t, classes in enumerate(tasks):
            view, tview = continual.seen_view(mem, classes, teacher)
            for s in sweep_seeds if cl_seeds is None else cl_seeds:
                jobs.append(
                    runner.Job(
                        {"part": "continual", "set": m, "task": t + 1, "classes": len(classes)},
                        view,
                        base,
                        s,
                        tview,
                        cost=eval_steps,
                        classes=classes,
                    )
                )
    return jobs


def seed_cell(res: pd.DataFrame, part: str, name: str) -> tuple[float, float]:
    """Mean and sample std (0 for one seed) of the final accuracy of one set of ``res`` (part, set name);
    the sweep's coupled 0.01 set is read under its decoupled name (the two coincide, evaluated once)."""
    if part == "sweep" and name.endswith(" / coupled / 0.01"):  # evaluated once, under its decoupled name
        name = name.replace(" / coupled / ", " / decoupled / ")
    r = res[(res["part"] == part) & (res["set"] == name)]["acc"]
    return float(r.mean()), float(r.std(ddof=1)) if len(r) > 1 else 0.0


def sweep_table(res: pd.DataFrame, sweep_lambdas) -> pd.DataFrame:
    """Fig. 3: mean and std per method, λ_var and coupled / decoupled weights."""
    rows = []
    for m in METHODS:
        for lam in sweep_lambdas:
            for how in ("coupled", "decoupled"):
                mu, sd = seed_cell(res, "sweep", f"{m} / {how} / {lam}")
                rows.append({"method": m, "lambda": lam, "weights": how, "mean": mu, "std": sd})
    return pd.DataFrame(rows)


def feature_distance_table(
    teacher, sets: dict, real_f: torch.Tensor, real_labels: torch.Tensor, lam: float, seed: int = 0
) -> pd.DataFrame:
    """Fig. 4: the normalised feature distance (Eq. 21) per class of the coupled and decoupled sets at λ
    ``lam``, in the teacher's feature space, one block per synthesis seed: ``seed`` is the sweep's set,
    the others Fig. 4's further syntheses (keys ``("fig4", method, how, seed)``)."""
    further = sorted({k[3] for k in sets if k[0] == "fig4"})
    f4 = []
    for s in [seed] + [s for s in further if s != seed]:
        for m in METHODS:
            for how in ("coupled", "decoupled"):
                d = sets[("sweep", m, how, lam) if s == seed else ("fig4", m, how, s)]
                dist = inversion.feature_distance(
                    teachers.features(teacher, d.images), d.labels, d.num_classes, real_f, real_labels
                )
                f4 += [
                    {
                        "method": m,
                        "weights": how,
                        "lambda": lam,
                        "synthesis seed": s,
                        "class": c,
                        "feature distance": float(v),
                    }
                    for c, v in enumerate(dist)
                ]
    return pd.DataFrame(f4)


def paired_delta(res: pd.DataFrame, part: str, name: str, ref: str) -> tuple[float, float, int]:
    """Set ``name`` minus set ``ref`` (both of ``part``), paired over the seeds both ran: the mean and the
    sample std (0 for one seed) of the per-seed differences of the final accuracy, and the seed count."""
    a, b = (res[(res["part"] == part) & (res["set"] == n)].set_index("seed")["acc"] for n in (name, ref))
    d = (a - b).dropna()
    return float(d.mean()), float(d.std(ddof=1)) if len(d) > 1 else 0.0, len(d)


def grid_table(res: pd.DataFrame, grid_K, grid_rho) -> tuple[pd.DataFrame, float]:
    """Fig. 5: mean and std per (K, ρ), the difference to the no-adjustment arm (ρ = 0) paired over
    seeds (``delta``, ``delta std``, ``seeds``), and the mean of the no-adjustment arm."""
    rows = []
    for k_ in grid_K:
        for r_ in grid_rho:
            mu, sd = seed_cell(res, "grid", f"{k_} / {r_}")
            d, d_sd, n = paired_delta(res, "grid", f"{k_} / {r_}", "0 / 0.0")
            rows.append({"K": k_, "rho": r_, "mean": mu, "std": sd, "delta": d, "delta std": d_sd, "seeds": n})
    return pd.DataFrame(rows), seed_cell(res, "grid", "0 / 0.0")[0]


def continual_table(res: pd.DataFrame, tasks) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 10: mean and std per set and task (long), and the table beside the paper's CIFAR-100 row."""
    cl = res[res["part"] == "continual"].groupby(["set", "task"])["acc"].agg(["mean", "std"]).reset_index()
    rows = []
    for m in METHODS:
        row = {"method": m}
        for t, classes in enumerate(tasks):
            r = cl[(cl["set"] == m) & (cl["task"] == t + 1)].iloc[0]
            row[f"{len(classes)} classes"] = E.cell_text(r["mean"], 0 if np.isnan(r["std"]) else r["std"])
        row["paper (CIFAR-100, 20/40/60/80/100 classes)"] = " / ".join(map(str, PAPER_T10[m]))
        rows.append(row)
    return cl, pd.DataFrame(rows)


def metrics(sweep: pd.DataFrame, grid: pd.DataFrame, none_mu: float, cl: pd.DataFrame, spread: dict, res) -> dict:
    """The stage's metrics: the figures' means, Table 10, the spread and the evaluation time (its claims are
    judged by ``dd_tables``)."""
    return {
        "fig3": {f"{r['method']} {r['weights']} {r['lambda']:g}": r["mean"] for _, r in sweep.iterrows()},
        "fig5": {f"K{int(r.K)} rho{r.rho:g}": r["mean"] for _, r in grid.iterrows()},
        "fig5_none": none_mu,
        "table10": {f"{r.set} task{int(r.task)}": r["mean"] for _, r in cl.iterrows()},
        "fig1_spread": spread,
        "eval_seconds_total": float(res["seconds"].sum()),
    }
