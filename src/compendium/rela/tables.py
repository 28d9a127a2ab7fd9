"""The arms and tables of the ReLA comparison stages (camera-ready Table 1, Fig. 4a and 4c; v1 Fig. 4a-b;
camera-ready Fig. 4b), built from the rows of :func:`compendium.rela.experiment.run`.

* :func:`budget_arms`, :func:`ablation_arms`: the arms of the ``rela_budget`` and ``rela_ablations``
  stages, per seed.
* :func:`table1`: our Table 1 (mean ± std over seeds per budget and prior, bold = best at the budget,
  underlined = beats BYOL* at 100%).
* :func:`dynamics_arms`: the arms whose training dynamics camera-ready Fig. 5 shows.
* :func:`prior_probes`: each prior's own frozen features, probed as the students are.
* :func:`similarity_features`, :func:`similarity_matrices`, :func:`transport_per_seed`: camera-ready
  Fig. 4a, the transport similarity (1 − D_Rep) and linear CKA between priors and students.
* :func:`similarity_figure`: the two matrices as heat maps.
* :func:`cost_panel`: camera-ready Fig. 4c, the budget at which each arm matches BYOL*.
* :func:`budget_metrics`: the ``rela_budget`` stage's metrics.
* :func:`switch_summary`: how many ReLA runs fired the camera-ready λ switch (Algorithm 1).
* :func:`ssl_share`, :func:`prior_vs_ssl`: each run's SSL-phase share, and per "+ReLA" cell what regression onto
  the prior alone (λ = 1 throughout) gives over BYOL and what the SSL phase adds to it.

Functions that name priors take ``label``: spec -> short name (the pipeline's paper analogues).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from compendium.core import probe
from compendium.core.stats import t_interval
from compendium.core.progress import say
from compendium.rela import experiment, replicates, similarity
from compendium.rela import priors as prior_models
from compendium.rela.experiment import Arm, Result, Setup


def budget_arms(
    setup: Setup,
    arch_kwargs: dict,
    *,
    seeds: list,
    full_seeds: int,
    budgets: list,
    priors: list,
    headline_budget: float,
    same_dataset_prior: str,
    schedule: str,
    label: Callable[[str], str],
    grid_seeds: int = 1,
    variant_schedule: str = "",
    extra_cells: Sequence[tuple[str, float]] = (),
    per_seed_priors: bool = False,
    prior_only: bool = False,
) -> list[Arm]:
    """Camera-ready Table 1's arms: per seed the untrained student, BYOL* (100%) on the first
    ``full_seeds`` seeds (reusing the same-dataset prior when it is that very run, as CF10-T is BYOL*),
    and at each budget BYOL and + ReLA per prior on the first ``grid_seeds`` seeds; later seeds run
    only the headline cells (BYOL and the same-dataset prior at ``headline_budget``). With
    ``variant_schedule``, every seed also runs the same-dataset prior at the headline budget with that
    λ schedule (named by :func:`variant_name`), so both switch variants are reported side by side.
    BYOL* on a seed reuses the same-dataset prior or its seed replicate where one was trained exactly so
    (:func:`compendium.rela.replicates.byol_star_specs`).
    ``extra_cells``: ``(prior, budget)`` cells outside the grid, + ReLA on the first ``grid_seeds`` seeds
    (the one cell a claim reads, without the whole budget's column).
    ``per_seed_priors``: a seed's "+ReLA" arms read each trained prior's replicate on the next seed
    (:func:`compendium.rela.replicates.prior_for_seed`; arm names keep the prior's label, and
    :func:`compendium.rela.replicates.base_spec` maps the file back). ``prior_only``: beside each "+ReLA"
    arm of the grid (not the ``extra_cells``), the same prior with λ = 1 throughout (regression onto the prior alone,
    no SSL phase), named by
    :func:`prior_only_name`, so that what the prior gives and what the SSL phase adds are told apart."""
    arms = []

    def rela(name: str, p: str, b: float, s: int, sched: str = schedule, beside: bool = True) -> list[Arm]:
        spec = replicates.prior_for_seed(p, s, seeds) if per_seed_priors else p
        out = [Arm(name, arch_kwargs=arch_kwargs, budget=b, seed=s, prior=spec, schedule=sched)]
        if prior_only and beside and not is_variant_name(name):
            out.append(
                Arm(
                    prior_only_name(name),
                    arch_kwargs=arch_kwargs,
                    budget=b,
                    seed=s,
                    prior=spec,
                    schedule="constant",
                    w=1.0,
                )
            )
        return out

    for i, s in enumerate(seeds):
        arms.append(Arm("untrained", arch_kwargs=arch_kwargs, seed=s, untrained=True))
        if i < full_seeds:
            full = Arm("BYOL 100%", arch_kwargs=arch_kwargs, budget=1.0, seed=s)
            for spec in replicates.byol_star_specs(
                same_dataset_prior, s
            ):  # the prior is this very run, or its replicate
                if experiment.reusable(spec, full, setup):
                    full.reuse = spec
                    say(
                        f"[rela] BYOL* seed {s}: reusing {spec}, trained by the priors stage with exactly this "
                        "configuration"
                    )
                    break
            arms.append(full)
        for b in budgets:
            if b == headline_budget or i < grid_seeds:
                arms.append(Arm(f"BYOL {b:.0%}", arch_kwargs=arch_kwargs, budget=b, seed=s))
            for p in priors:
                if i < grid_seeds or (p == same_dataset_prior and b == headline_budget):
                    arms += rela(f"ReLA {label(p)} {b:.0%}", p, b, s)
        if i < grid_seeds:
            for p, b in extra_cells:
                if not any(np.isclose(b, g) for g in budgets):
                    arms += rela(f"ReLA {label(p)} {b:.0%}", p, b, s, beside=False)
        if variant_schedule:
            arms += rela(
                variant_name(f"ReLA {label(same_dataset_prior)} {headline_budget:.0%}", variant_schedule),
                same_dataset_prior,
                headline_budget,
                s,
                variant_schedule,
            )
    return arms


def prior_only_name(name: str) -> str:
    """The λ = 1 arm beside the "+ReLA" arm ``name`` (``ReLA <prior> <budget>`` -> ``prior only <prior> <budget>``)."""
    return "prior only" + name.removeprefix("ReLA") if name.startswith("ReLA") else f"prior only ({name})"


def is_prior_only_name(name: str) -> bool:
    """Whether an arm's name is a :func:`prior_only_name`."""
    return str(name).startswith("prior only")


def is_prior_only(names: pd.Series) -> pd.Series:
    """Which runs (by arm name) are :func:`prior_only_name` arms."""
    return names.map(is_prior_only_name).astype(bool)


def annotate_runs(all_runs: pd.DataFrame) -> pd.DataFrame:
    """The stage's run rows with ``prior file`` (the file each run read, a seed replicate where priors are per
    seed) beside ``prior`` (read back to the prior it stands for, :func:`compendium.rela.replicates.base_spec`)
    and each run's ``SSL-phase share`` (:func:`ssl_share`)."""
    r = all_runs.copy()
    r.insert(r.columns.get_loc("prior") + 1, "prior file", r["prior"])
    r["prior"] = r["prior"].map(lambda p: replicates.base_spec(p) if isinstance(p, str) else p)
    r["SSL-phase share"] = ssl_share(r)
    return r


def table_runs(all_runs: pd.DataFrame) -> pd.DataFrame:
    """The runs of Table 1 and its claims: the stage's own schedule (no :func:`variant_name` arm) and no
    :func:`prior_only_name` arm; ``prior`` read back to the prior a replicate stands for."""
    keep = ~is_variant(all_runs["arm"].astype(str)) & ~is_prior_only(all_runs["arm"].astype(str))
    r = all_runs[keep].copy()
    r["prior"] = r["prior"].map(lambda p: p if not isinstance(p, str) else replicates.base_spec(p))
    return r


def prior_vs_ssl(all_runs: pd.DataFrame, label: Callable[[str], str]) -> pd.DataFrame:
    """Per "+ReLA" cell with a :func:`prior_only_name` arm beside it (prior, budget): on the seeds where +ReLA,
    the prior-only arm and BYOL at that budget all ran, the three mean probes, the +ReLA arms' mean SSL-phase
    share, and two paired differences with their 95% t intervals (points): ``prior alone − BYOL`` (what
    regression onto the prior gives) and ``+ReLA − prior alone`` (what the SSL phase adds to it)."""
    r = all_runs[~is_variant(all_runs["arm"].astype(str))].copy()
    r["prior"] = r["prior"].fillna("").map(lambda p: replicates.base_spec(str(p)))
    r["SSL-phase share"] = ssl_share(r)
    only = r[is_prior_only(r["arm"].astype(str))]
    rows = []
    for (p, b), g in only.groupby(["prior", "budget"], sort=False):
        rela = r[(r["prior"] == p) & np.isclose(r["budget"], b) & ~is_prior_only(r["arm"].astype(str))]
        byol = r[(r["prior"] == "") & np.isclose(r["budget"], b) & ~r["untrained"].astype(bool)]
        po, re, by = (d.groupby("seed")["probe"].mean() for d in (g, rela, byol))
        seeds = sorted(set(po.index) & set(re.index) & set(by.index))
        if not seeds:
            continue
        row = {
            "prior": label(p),
            "budget": f"{b:.0%}",
            "seeds": len(seeds),
            "+ReLA": 100 * re[seeds].mean(),
            "prior alone (λ = 1)": 100 * po[seeds].mean(),
            "BYOL": 100 * by[seeds].mean(),
            "SSL-phase share of +ReLA": float(rela[rela["seed"].isin(seeds)]["SSL-phase share"].mean()),
        }
        for name, d in (("prior alone − BYOL", po[seeds] - by[seeds]), ("+ReLA − prior alone", re[seeds] - po[seeds])):
            m, lo, hi = t_interval(100 * d.to_numpy())
            row[name] = m
            row[f"{name}, 95% interval"] = f"[{lo:+.1f}, {hi:+.1f}]" if np.isfinite(lo) else "n < 2"
        rows.append(row)
    return pd.DataFrame(rows)


def ssl_share(runs: pd.DataFrame) -> pd.Series:
    """Per run, the share of its training steps spent in the SSL phase, weighted by the SSL loss's weight 1 − λ:
    1 for plain SSL, 0 for λ = 1 throughout and for a switch that never fired, (steps − switch step) / steps for
    the λ switch and the first-w schedules (λ = 1 until the switch, 0 after), 1 − w for a constant λ = w; NaN for
    the untrained network and for v1's continuous λ, whose steps the run rows do not hold."""
    out = []
    for _, r in runs.iterrows():
        if bool(r.get("untrained", False)):
            out.append(float("nan"))
        elif not r.get("prior"):
            out.append(1.0)
        elif r["schedule"] == "constant":
            out.append(1.0 - float(r["w"]))
        elif r["schedule"] in ("switch", "switch_scaled", "epochs", "first"):  # lambda = 1 until the switch, 0 after
            sw = r.get("switch step")
            out.append(0.0 if sw is None or pd.isna(sw) else (float(r["steps"]) - float(sw)) / float(r["steps"]))
        else:
            out.append(float("nan"))
    return pd.Series(out, index=runs.index, name="SSL-phase share")


SCHEDULE_NAMES = {"switch": "camera-ready switch", "switch_scaled": "switch, EMAs scaled to the run"}


def variant_name(name: str, schedule: str) -> str:
    """An arm's name when it runs a second λ schedule beside the stage's own."""
    return f"{name} [{SCHEDULE_NAMES.get(schedule, schedule)}]"


def is_variant_name(name: str) -> bool:
    """Whether an arm's name is a :func:`variant_name`."""
    return name.endswith("]")


def is_variant(names: pd.Series) -> pd.Series:
    """Which runs (by arm name) are :func:`variant_name` arms."""
    return names.map(is_variant_name).astype(bool)


def switch_variants(runs: pd.DataFrame) -> pd.DataFrame:
    """Both switch variants side by side, per (prior, budget) the variant arms ran at: the seeds, the
    mean probe, in how many runs the switch fired, and the SSL-phase steps."""
    var = runs[is_variant(runs["arm"])]
    out = []
    for (p, b), _ in var.groupby(["prior", "budget"]):
        same = runs[(runs["prior"] == p) & (runs["budget"] == b) & ~runs["untrained"].astype(bool)]
        for sched, d in same.groupby("schedule"):
            fired = d["switch step"].notna()
            out.append(
                {
                    "prior": p,
                    "budget": f"{b:.0%}",
                    "schedule": SCHEDULE_NAMES.get(sched, sched),
                    "seeds": ",".join(str(int(x)) for x in sorted(d["seed"])),
                    "probe mean": float(d["probe"].mean()),
                    "switch fired": f"{int(fired.sum())} of {len(d)}",
                    "switch step (mean)": float(d["switch step"].mean()) if fired.any() else float("nan"),
                    "SSL-phase steps (mean)": float((d["steps"] - d["switch step"].fillna(d["steps"])).mean()),
                }
            )
    return pd.DataFrame(out)


def ablation_arms(
    arch_kwargs: dict,
    *,
    seeds: list,
    priors: list,
    budget: float,
    lambdas: list,
    fractions: list,
    label: Callable[[str], str],
    schedule: str = "switch",
    schedule_seeds: int = 1,
    descriptive: bool = True,
) -> list[Arm]:
    """The ablations' arms (v1 Fig. 4a-b, camera-ready Fig. 4b, and W, b frozen / the paper's target
    order): every seed runs untrained, BYOL and the switch with the dynamic and the static subset;
    the first ``schedule_seeds`` also v1's continuous λ, each constant λ and each first-w schedule
    (0 < w < 1); the first seed also the switch with W and b frozen and the switch with the paper's
    target order. ``schedule``: the switch every "switch" arm runs (``switch`` or ``switch_scaled``).
    ``descriptive=False`` leaves out the arms only the figures show and no claim reads (v1's
    continuous λ, W and b frozen, the paper's target order)."""
    arms = []
    for i, seed in enumerate(seeds):
        arms.append(Arm("untrained", arch_kwargs=arch_kwargs, budget=budget, seed=seed, untrained=True))
        arms.append(Arm("BYOL", arch_kwargs=arch_kwargs, budget=budget, seed=seed))
        for p in priors:
            name = label(p)
            base = dict(arch_kwargs=arch_kwargs, budget=budget, seed=seed, prior=p)
            arms.append(Arm(f"{name}: adaptive switch", schedule=schedule, **base))
            arms.append(Arm(f"{name}: switch, static subset", schedule=schedule, budget_mode="static", **base))
            if i >= schedule_seeds:
                continue
            if descriptive:
                arms.append(Arm(f"{name}: v1 continuous", schedule="v1", **base))
            for lam in lambdas:
                arms.append(Arm(f"{name}: constant λ={lam:g}", schedule="constant", w=lam, **base))
            for w in fractions:
                if 0 < w < 1:
                    arms.append(Arm(f"{name}: first {w:.0%} ReLA", schedule="first", w=w, **base))
            if i > 0 or not descriptive:
                continue
            arms.append(Arm(f"{name}: switch, W and b frozen", schedule=schedule, transfer_trainable=False, **base))
            arms.append(Arm(f"{name}: switch, paper target order", schedule=schedule, order="paper", **base))
    return arms


def dynamics_arms(labels: list[str], fractions: list) -> list[str]:
    """Per prior label, the arms of camera-ready Fig. 5 (App. J): the switch, v1's continuous λ and
    the first first-w schedule with 0 < w < 1 (if any), without repeats."""
    show = [
        (f"{L}: {k}")
        for L in labels
        for k in (
            "adaptive switch",
            "v1 continuous",
            f"first {[w for w in fractions if 0 < w < 1][0]:.0%} ReLA"
            if any(0 < w < 1 for w in fractions)
            else "v1 continuous",
        )
    ]
    return list(dict.fromkeys(show))


def prior_probes(priors: list, setup: Setup, arch_kwargs: dict, seed: int) -> list[float]:
    """Each prior's own frozen features (its own input normalisation), linear-probed exactly as the
    students are: the quality a ReLA student can copy."""
    out = []
    student_kwargs = Arm("x", arch_kwargs=arch_kwargs).student_kwargs(setup)
    for p in priors:
        prior = prior_models.load(
            p, student_arch="convnet", student_kwargs=student_kwargs, seed=seed, mean=setup.mean, std=setup.std
        )
        pset = Setup(**{**vars(setup), "mean": prior.mean, "std": prior.std})
        out.append(experiment.frozen_probe(prior.model, pset, seed).final)
    return out


def table1(stats: pd.DataFrame, budgets: list, columns: list[str]) -> pd.DataFrame:
    """Our camera-ready Table 1: a row per budget, ``BYOL`` and ``+ReLA <column>`` cells (mean ± std
    over seeds) marked as the paper marks them, BYOL* (100%) on the first row. ``stats``:
    :func:`compendium.rela.experiment.seed_stats` over (budget, column) of the trained arms."""
    full = stats[stats["budget"] == 1.0].iloc[0]
    rows = []
    for b in budgets:
        st = stats[stats["budget"] == b].set_index("column")
        marks = experiment.mark({c: st.loc[c, "mean"] for c in columns}, full["mean"])
        row = {"budget": f"{b:.0%}"}
        for c in columns:
            pre, post = marks[c]
            row[c if c == "BYOL" else f"+ReLA {c}"] = (
                pre + experiment.cell_text(st.loc[c, "mean"], st.loc[c, "std"], int(st.loc[c, "count"])) + post
            )
        row["BYOL* (100%)"] = (
            experiment.cell_text(full["mean"], full["std"], int(full["count"])) if b == budgets[0] else ""
        )
        rows.append(row)
    return pd.DataFrame(rows)


def similarity_features(
    priors: list,
    arms: list[Arm],
    results: list[Result],
    setup: Setup,
    images: torch.Tensor,
    *,
    seed: int,
    headline_budget: float,
    arch_kwargs: dict,
    label: Callable[[str], str],
) -> dict:
    """Features of ``images`` for camera-ready Fig. 4a: each prior (``prior: <label>``), then the
    ``seed``'s trained students at the headline budget and at 100% (a reused BYOL* is its prior)."""
    feats = {}
    for p in priors:
        prior = prior_models.load(
            p,
            student_arch="convnet",
            student_kwargs=Arm("x", arch_kwargs=arch_kwargs).student_kwargs(setup),
            seed=seed,
            mean=setup.mean,
            std=setup.std,
        )
        feats[f"prior: {label(p)}"] = probe.extract_features(prior.model, images, prior.mean, prior.std)
    for a, r in zip(arms, results):
        if a.reuse or is_prior_only_name(a.name):  # a reused BYOL* is its prior, already in the matrix
            continue
        if a.seed == seed and not a.untrained and a.budget in (headline_budget, 1.0):
            feats[a.name] = probe.extract_features(r.backbone, images, setup.mean, setup.std)
    return feats


def similarity_matrices(feats: dict, half: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(names, transport, cka): the transport similarity of every source (row) to every target
    (column), its ridge map fitted on the first ``half`` images and scored on the rest, and linear CKA
    on all of them."""
    names = list(feats)
    transport = np.zeros((len(names), len(names)))
    cka = np.zeros_like(transport)
    for i, s in enumerate(names):
        for j, t in enumerate(names):
            transport[i, j] = similarity.transport_similarity(
                feats[s][:half], feats[t][:half], feats[s][half:], feats[t][half:]
            )
            cka[i, j] = similarity.linear_cka(feats[s], feats[t])
    return names, transport, cka


def similarity_frame(names: list[str], transport: np.ndarray, cka: np.ndarray) -> pd.DataFrame:
    """The two matrices as one row per (source, target)."""
    return pd.DataFrame(
        [
            {"source": s, "target": t, "transport similarity": transport[i, j], "linear CKA": cka[i, j]}
            for i, s in enumerate(names)
            for j, t in enumerate(names)
        ]
    )


def similarity_figure(names: list[str], transport: np.ndarray, cka: np.ndarray):
    """Camera-ready Fig. 4a as two heat maps, sources in rows and targets in columns."""
    fig, axes = plt.subplots(1, 2, figsize=(15, 6.6), gridspec_kw={"wspace": 0.08})
    for k, (ax, m, title) in enumerate(
        ((axes[0], transport, "transport similarity (1 − D_Rep)"), (axes[1], cka, "linear CKA"))
    ):
        im = ax.imshow(m, vmin=0, vmax=1, cmap="viridis")
        ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=7)
        ax.set_yticks(range(len(names)), names if k == 0 else [], fontsize=7)
        for i in range(len(names)):
            for j in range(len(names)):
                ax.text(
                    j, i, f"{m[i, j]:.2f}", ha="center", va="center", fontsize=6, color="w" if m[i, j] < 0.6 else "k"
                )
        ax.set(title=title, xlabel="target", ylabel="source" if k == 0 else "")
        ax.grid(False)
    fig.colorbar(im, ax=axes, shrink=0.7)
    return fig


def transport_per_seed(
    source: torch.Tensor,
    arms: list[Arm],
    results: list[Result],
    setup: Setup,
    images: torch.Tensor,
    half: int,
    *,
    headline_budget: float,
    same_dataset_prior: str,
) -> pd.DataFrame:
    """The transport similarity from ``source`` (the strongest prior's features of ``images``) to each
    headline student (BYOL and + ReLA with the same-dataset prior, every seed), ``out``, and back, ``in``."""
    rows = []
    for a, r in zip(arms, results):
        if (
            a.budget == headline_budget
            and not (a.untrained or a.reuse)
            and replicates.base_spec(a.prior) in ("", same_dataset_prior)
            and not (is_variant_name(a.name) or is_prior_only_name(a.name))
        ):  # the stage's own +ReLA arms only
            f = probe.extract_features(r.backbone, images, setup.mean, setup.std)
            rows.append(
                {
                    "seed": a.seed,
                    "student": a.name,
                    "probe": r.row["probe"],
                    "out": similarity.transport_similarity(source[:half], f[:half], source[half:], f[half:]),
                    "in": similarity.transport_similarity(f[:half], source[:half], f[half:], source[half:]),
                }
            )
    return pd.DataFrame(rows)


def switch_summary(runs: pd.DataFrame) -> str:
    """How many ReLA runs fired the λ switch, and the step counts of the runs."""
    rela_runs = runs[runs["prior"] != ""]
    fired = rela_runs["switch step"].notna()
    return (
        f"the switch fired in {int(fired.sum())} of {len(rela_runs)} ReLA runs; steps per run: "
        f"{sorted(set(int(x) for x in rela_runs['steps']))}"
    )


def cost_panel(ax, cost: pd.DataFrame, colors: list, budgets: list) -> None:
    """Camera-ready Fig. 4c on ``ax``: a bar per arm at the budget that reaches BYOL*, at 100% with
    "not within" the largest budget where none does. ``cost``: :func:`compendium.pipeline.checks.rela.cost_table`."""
    xs = np.arange(len(cost))
    vals = [100 * (v if v is not None and not pd.isna(v) else 1.0) for v in cost["matching budget"]]
    ax.bar(xs, vals, color=colors)
    for x, v, mb in zip(xs, vals, cost["matching budget"]):
        ax.text(
            x,
            v,
            "not within\n" + f"{max(budgets):.0%}" if mb is None or pd.isna(mb) else f"{v:.0f}%",
            ha="center",
            va="bottom",
            fontsize=8,
        )
    ax.axhline(100, color="k", ls="--", lw=1)
    ax.set_xticks(xs, cost["arm"], rotation=20, ha="right", fontsize=8)
    ax.set(
        ylabel="budget that reaches BYOL* (%)",
        title="(c) cost to match BYOL* (grid: " + ", ".join(f"{b:.0%}" for b in budgets) + ")",
        ylim=(0, 115),
    )


def budget_metrics(
    *,
    headline: float,
    per_seed: pd.DataFrame,
    full: pd.Series,
    untrained: pd.Series,
    cost: pd.DataFrame,
    stats: pd.DataFrame,
    runs: pd.DataFrame,
) -> dict:
    """The ``rela_budget`` stage's metrics: the headline gap closure, the transport per seed, BYOL*
    and the untrained student, the budget that matches BYOL* per arm, every Table 1 cell and the
    total training time."""
    return {
        "gap_closure": headline,
        "transport_per_seed": per_seed.to_dict("records"),
        "byol_full": {"mean": float(full["mean"]), "std": float(full["std"])},
        "untrained": float(untrained["mean"]),
        "matching_budget": {
            r["arm"]: (
                None if r["matching budget"] is None or pd.isna(r["matching budget"]) else float(r["matching budget"])
            )
            for _, r in cost.iterrows()
        },
        "cells": {
            f"{r['column']} {r['budget']:.0%}": {
                "mean": float(r["mean"]),
                "std": float(r["std"]),
                "seeds": int(r["count"]),
            }
            for _, r in stats.iterrows()
        },
        "train_seconds_total": float(runs["train seconds"].sum()),
    }
