"""Figures of the ReLA stages: the grouped bars of camera-ready Tables 2 and 3, the ablation panels of
v1 / camera-ready Fig. 4b, the training dynamics of camera-ready Fig. 5 (App. J) and the smoke run's
learning curves.

Bars start at zero; error bars are ±1 std over seeds (drawn only where a cell ran more than one seed);
a paper's printed value, where the notebook passes one for the same cell, is a black tick across the
bar. Legends sit outside the axes at the style's legend size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

LEGEND_SIZE = 10


def _below(ax, handles=None, ncol: int = 1, pad: float = 0.2):
    """A legend under ``ax`` (outside the axes), at :data:`LEGEND_SIZE`."""
    kw = {"handles": handles} if handles is not None else {}
    return ax.legend(
        **kw, loc="upper center", bbox_to_anchor=(0.5, -pad), ncol=ncol, fontsize=LEGEND_SIZE, frameon=False
    )


def grouped_bars(
    stats: pd.DataFrame,
    group_col: str,
    series_col: str,
    groups: Sequence[str],
    series: Sequence[str],
    *,
    labels: Mapping[str, str] | None = None,
    paper: Mapping[tuple, float] | None = None,
    paper_label: str = "paper",
    title: str = "",
    ylabel: str = "linear probe (%)",
    figsize=(11, 4),
):
    """Grouped bars from zero (camera-ready Tables 2 and 3): for each ``group`` (x) one bar per ``series``
    (colour), the seed mean of ``stats`` (:func:`compendium.rela.experiment.seed_stats`: ``mean``,
    ``std``, ``count`` as fractions) in %, ±1 std over seeds where a cell has more than one seed.

    ``paper``: ``{(group, series): %}``, the paper's printed value of the same cell, drawn as a black
    tick across the bar and labelled ``paper_label``; cells it lacks get no tick."""
    labels = dict(labels or {})
    paper = dict(paper or {})
    st = stats.set_index([group_col, series_col])
    fig, ax = plt.subplots(figsize=figsize)
    xs = np.arange(len(groups))
    w = 0.8 / len(series)
    n_max = 1
    for i, s in enumerate(series):
        x = xs + (i - (len(series) - 1) / 2) * w
        mu = np.array([100 * st.loc[(g, s), "mean"] for g in groups])
        n = np.array([int(st.loc[(g, s), "count"]) for g in groups])
        sd = np.array([100 * st.loc[(g, s), "std"] if k > 1 else 0.0 for g, k in zip(groups, n)])
        n_max = max(n_max, int(n.max()))
        ax.bar(
            x,
            mu,
            w,
            yerr=sd if (n > 1).any() else None,
            capsize=3,
            label=labels.get(s, s),
            error_kw={"elinewidth": 1.2},
        )
        for xi, g in zip(x, groups):
            if (g, s) in paper:
                ax.hlines(paper[(g, s)], xi - 0.45 * w, xi + 0.45 * w, color="k", lw=2.5, zorder=5)
    ax.set_xticks(xs, list(groups))
    ax.set_ylim(bottom=0)
    ax.set(ylabel=ylabel, title=title)
    handles, _ = ax.get_legend_handles_labels()
    if paper:
        handles.append(Line2D([], [], color="k", lw=2.5, label=paper_label))
    noise = f"error bars: ±1 std over seeds (up to {n_max})" if n_max > 1 else "one seed: no error bars"
    handles.append(Line2D([], [], color="none", label=noise))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=LEGEND_SIZE, frameon=False)
    fig.tight_layout()
    return fig


def _split(arm: str) -> tuple[str, str]:
    """``"<prior>: <schedule>"`` -> (prior, schedule)."""
    prior, _, sched = arm.partition(": ")
    return prior, sched


def training_dynamics(trace: pd.DataFrame, switch_steps: Mapping[str, float | None], *, ssl_name: str = "BYOL"):
    """Camera-ready Fig. 5 (App. J): per arm (``"<prior>: <schedule>"``), the ReLA loss, the SSL loss and
    λ with the switch criterion ρ over the optimizer steps of ``trace`` (columns arm, step, lam,
    rela_loss, ssl_loss, rho). Colour = schedule, line style = prior; one legend under the panels;
    dash-dotted verticals: the steps at which a switch fired (``switch_steps``)."""
    arms = list(dict.fromkeys(trace["arm"]))
    priors = list(dict.fromkeys(_split(a)[0] for a in arms))
    scheds = list(dict.fromkeys(_split(a)[1] for a in arms))
    colour = {s: f"C{i}" for i, s in enumerate(scheds)}
    styles = ["-", "--", ":", "-."]
    style = {p: styles[i % len(styles)] for i, p in enumerate(priors)}
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.2))
    for arm in arms:
        d = trace[trace["arm"] == arm]
        p, s = _split(arm)
        kw = {"color": colour[s], "ls": style[p]}
        if "rela_loss" in d and d["rela_loss"].notna().any():
            axes[0].plot(d["step"], d["rela_loss"], lw=0.9, **kw)
        if "ssl_loss" in d and d["ssl_loss"].notna().any():
            axes[1].plot(d["step"], d["ssl_loss"], lw=0.9, **kw)
        axes[2].plot(d["step"], d["lam"], lw=2.0, **kw)
        if "rho" in d and d["rho"].notna().any():
            axes[2].plot(d["step"], d["rho"], lw=0.9, alpha=0.7, **kw)
        sw = switch_steps.get(arm)
        if sw is not None and not pd.isna(sw):
            for ax in axes:
                ax.axvline(sw, color=colour[s], ls="-.", lw=0.8)
    axes[2].axhline(0.995, color="0.4", lw=0.8)
    axes[0].set(xlabel="step", ylabel="ReLA loss", title="(a) ReLA loss")
    axes[1].set(xlabel="step", ylabel=f"{ssl_name} loss", title=f"(b) {ssl_name} loss (when computed)")
    axes[2].set(xlabel="step", ylabel="λ, ρ", title="(c) λ (thick) and switch criterion ρ (thin)", ylim=(-0.05, 1.05))
    handles = (
        [Line2D([], [], color=colour[s], lw=2, label=s) for s in scheds]
        + [Line2D([], [], color="k", ls=style[p], lw=1.2, label=f"prior: {p}") for p in priors]
        + [
            Line2D([], [], color="0.4", ls="-.", lw=0.8, label="switch step"),
            Line2D([], [], color="0.4", lw=0.8, label="ρ = 0.995 (switch threshold)"),
        ]
    )
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.legend(
        handles=handles,
        loc="lower center",
        bbox_to_anchor=(0.5, 0.0),
        ncol=min(len(handles), 4),
        fontsize=LEGEND_SIZE,
        frameon=False,
    )
    return fig


def learning_curves(
    curves: pd.DataFrame,
    steps: pd.DataFrame,
    results: pd.DataFrame,
    arms: Sequence[str],
    seeds: Sequence[int],
    *,
    budget: float,
    method: str = "byol",
):
    """The smoke run (camera-ready Fig. 5's quantities at smoke scale): (a) the kNN monitor per epoch,
    mean ±1 std over seeds, untrained dotted; (b) the ReLA arms' losses (solid: ReLA loss, dashed: the
    SSL loss), ρ on the right axis (dotted) and the switch steps, for the first seed. Legends under
    the panels."""
    m_ = method.upper()
    colours = {arm: f"C{i}" for i, arm in enumerate(arms)}
    fig, axes = plt.subplots(1, 2, figsize=(13, 6.2))
    for arm, d in curves.groupby("arm", sort=False):
        m = d.groupby("epoch")["knn"].agg(["mean", "std"]).reset_index()
        axes[0].plot(m["epoch"], 100 * m["mean"], "o-", ms=3, color=colours[arm], label=arm)
        if len(seeds) > 1:
            axes[0].fill_between(
                m["epoch"], 100 * (m["mean"] - m["std"]), 100 * (m["mean"] + m["std"]), alpha=0.2, color=colours[arm]
            )
    base = 100 * results[results["arm"] == "untrained"]["kNN"].mean()
    axes[0].axhline(base, color="k", ls=":", lw=1, label="untrained")
    band = ", band: ±1 std over seeds" if len(seeds) > 1 else ""
    axes[0].set(xlabel="epoch", ylabel="kNN accuracy (%)", title=f"(a) kNN monitor, budget {budget:g}{band}")
    _below(axes[0], pad=0.14)
    rela = steps[steps["arm"].str.contains("ReLA") & (steps["seed"] == seeds[0])] if len(steps) else steps
    ax, ax_rho = axes[1], None
    handles = []
    for arm, d in rela.groupby("arm", sort=False):
        c = colours.get(arm, "0.3")
        ax.plot(d["step"], d["rela_loss"], lw=0.8, color=c)
        handles.append(Line2D([], [], color=c, lw=2, label=arm))
        if "ssl_loss" in d and d["ssl_loss"].notna().any():
            ax.plot(d["step"], d["ssl_loss"], lw=0.8, ls="--", color=c)
        if "rho" in d and d["rho"].notna().any():
            ax_rho = ax_rho or ax.twinx()
            ax_rho.grid(False)
            ax_rho.plot(d["step"], d["rho"], lw=1.2, ls=":", color=c)
        sw = results[(results["arm"] == arm) & (results["seed"] == seeds[0])]["switch step"]
        if len(sw) and pd.notna(sw.iloc[0]):
            ax.axvline(sw.iloc[0], color=c, ls="-.", lw=1)
            ax.text(
                sw.iloc[0],
                0.98,
                f" switch at {int(sw.iloc[0])}",
                color=c,
                fontsize=LEGEND_SIZE,
                va="top",
                transform=ax.get_xaxis_transform(),
            )
    if ax_rho is not None:
        ax_rho.axhline(0.995, color="gray", lw=0.8)
        ax_rho.set(ylabel="ρ (dotted; switch at 0.995)", ylim=(0, 1.02))
    handles += [
        Line2D([], [], color="k", lw=0.8, label="ReLA loss"),
        Line2D([], [], color="k", lw=0.8, ls="--", label=f"{m_} loss"),
        Line2D([], [], color="k", lw=1.2, ls=":", label="ρ = exp(−max(ℓ_s − ℓ_f, 0)), right axis"),
    ]
    ax.set(
        xlabel="optimizer step", ylabel="loss", title=f"(b) losses, switch criterion and switch steps (seed {seeds[0]})"
    )
    _below(ax, handles=handles, pad=0.14)
    fig.tight_layout()
    return fig


SWITCHES = ("switch", "switch_scaled")  # the one-way switches a "+ReLA" arm runs (rela.schedule, rela.scaled_switch)


def ablation_roles(runs: pd.DataFrame) -> pd.Series:
    """Each run's place in :func:`ablation_panels`, read from its record's columns (not its name):
    ``untrained``, ``ssl`` (the SSL baseline: no prior), ``dynamic`` / ``static`` (a switch with the
    code's defaults and that subset), ``constant`` (a constant λ, ``w`` its value), ``first`` (ReLA for
    the first ``w`` of the steps) and ``other`` (any further arm: v1's continuous λ, W and b frozen, the
    paper's target order, or an arm added later, drawn as its own line so that none goes missing)."""

    def role(r):
        if bool(r["untrained"]):
            return "untrained"
        if not isinstance(r["prior"], str) or not r["prior"]:
            return "ssl"
        if r["schedule"] in ("constant", "first"):
            return r["schedule"]
        default = bool(r["transfer_trainable"]) and r["order"] == "code"
        if r["schedule"] in SWITCHES and default and r["budget_mode"] in ("dynamic", "static"):
            return r["budget_mode"]
        return "other"

    return runs.apply(role, axis=1)


def ablation_panels(runs: pd.DataFrame, *, budget: float):
    """The ablations from the run's records (``runs``: one row per arm and seed, with the arm's
    ``prior``, ``prior label``, ``schedule``, ``w``, ``budget_mode``, ``transfer_trainable``, ``order``,
    ``untrained`` and its ``probe``; :func:`ablation_roles` places each arm): (a) static vs dynamic
    subset under the switch, bars from zero, mean ±1 std over the seeds; (b) constant λ against λ, with
    the switch and every further arm of the prior as a horizontal line (v1 Fig. 4b); (c) ReLA for the
    first w of the steps vs the switch, w = 0 being the SSL baseline and w = 1 constant λ = 1 where it
    ran (camera-ready Fig. 4b). (b) and (c) read the first seed. Priors, λ values, fractions and seeds
    are the ones the records hold. Arms are named ``"<prior label>: <variant>"``; legends under the
    panels."""
    runs = runs.assign(role=ablation_roles(runs))
    s0 = runs["seed"].iloc[0]
    first = runs[runs["seed"] == s0]
    labels = list(dict.fromkeys(runs.loc[runs["prior label"].notna() & (runs["prior label"] != ""), "prior label"]))
    for L in labels:
        if not ((first["role"] == "dynamic") & (first["prior label"] == L)).any():
            raise ValueError(
                f"ablation_panels: no switch with the code's defaults for prior {L!r} on seed {s0}: nothing to compare"
            )
    ssl = runs.loc[runs["role"] == "ssl", "arm"].iloc[0]
    fig, axes = plt.subplots(1, 3, figsize=(16, 6.2))

    def stat(role, label=None):
        v = runs[(runs["role"] == role) & ((runs["prior label"] == label) if label else True)]["probe"]
        return float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0

    def one(role, label, w=None):
        d = first[(first["role"] == role) & (first["prior label"] == label)]
        d = d if w is None else d[np.isclose(d["w"], w)]
        return float(d["probe"].iloc[0])

    ax = axes[0]
    xs = np.arange(len(labels))
    sta = [stat("static", L) for L in labels]
    dyn = [stat("dynamic", L) for L in labels]
    n = max(int(((runs["role"] == "dynamic") & (runs["prior label"] == L)).sum()) for L in labels)
    for off, vals, lab in ((-0.2, sta, "static subset"), (0.2, dyn, "dynamic subset")):
        ax.bar(
            xs + off,
            [100 * m for m, _ in vals],
            0.4,
            yerr=[100 * s for _, s in vals] if n > 1 else None,
            capsize=3,
            label=lab,
        )
    for x, (a, sa), (b, sb) in zip(xs, sta, dyn):
        ax.text(
            x, 100 * max(a + sa, b + sb) + 1, f"{100 * (b - a):+.1f}", ha="center", va="bottom", fontsize=LEGEND_SIZE
        )
    ax.axhline(100 * stat("ssl")[0], color="k", ls=":", lw=1, label=ssl)
    ax.axhline(100 * stat("untrained")[0], color="gray", ls="--", lw=1, label="untrained")
    ax.set_xticks(xs, list(labels))
    ax.set_ylim(0, 100 * max(m + s for m, s in sta + dyn) + 8)  # room for the differences above the bars
    noise = f"mean ±1 std of {n} seeds" if n > 1 else "1 seed"
    ax.set(ylabel="linear probe (%)", title=f"(a) static vs dynamic subset (budget {budget:.0%}, {noise})")
    _below(ax, ncol=2, pad=0.1)
    ssl0 = float(first.loc[first["role"] == "ssl", "probe"].iloc[0])
    ax = axes[1]
    styles = ("--", ":", (0, (5, 1, 1, 1)), (0, (1, 3)))
    for i, L in enumerate(labels):
        c = f"C{i}"
        const = first[(first["role"] == "constant") & (first["prior label"] == L)].sort_values("w", kind="stable")
        ax.plot(const["w"], 100 * const["probe"], "o-", color=c, label=f"{L}: constant λ")
        others = first[(first["role"] == "other") & (first["prior label"] == L)]
        for j, (arm, p) in enumerate(zip(others["arm"], others["probe"])):
            ax.axhline(100 * p, color=c, ls=styles[j % len(styles)], lw=1, label=arm)
        ax.axhline(100 * one("dynamic", L), color=c, ls="-.", lw=1, label=f"{L}: adaptive switch")
    ax.axhline(100 * ssl0, color="k", ls=":", lw=1, label=ssl)
    ax.set(
        xlabel="constant λ (weight of the ReLA loss at every step)",
        ylabel="linear probe (%)",
        title=f"(b) constant λ vs adaptive (v1 Fig. 4b), seed {s0}",
    )
    _below(ax, pad=0.14)
    ax = axes[2]
    for i, L in enumerate(labels):
        c = f"C{i}"
        fw = first[(first["role"] == "first") & (first["prior label"] == L)].sort_values("w", kind="stable")
        const1 = first[(first["role"] == "constant") & (first["prior label"] == L) & np.isclose(first["w"], 1.0)]
        ws = [0.0, *fw["w"], *([1.0] if len(const1) else [])]
        ys = [ssl0, *fw["probe"], *const1["probe"].iloc[:1]]
        ax.plot([100 * w for w in ws], [100 * y for y in ys], "o-", color=c, label=f"{L}: ReLA for the first w")
        ax.axhline(100 * one("dynamic", L), color=c, ls="--", lw=1, label=f"{L}: adaptive (switch)")
    ax.set(
        xlabel="w: share of the steps trained by ReLA (%)",
        ylabel="linear probe (%)",
        title=f"(c) first-w strategies vs adaptive (camera-ready Fig. 4b), seed {s0}",
    )
    _below(ax, pad=0.14)
    fig.tight_layout()
    return fig


def regime_curves(curves: pd.DataFrame, budget: float = 0.1, chosen: Mapping | None = None):
    """The regime study's learning curves: probe accuracy (points) of BYOL's frozen features against its
    epochs, one panel per (feature view, labelled images), a line per width (mean over seeds, band: min-max
    over seeds), epoch 0 being the untrained network. ``chosen``: the chosen regime's width and full budget E,
    marked at E and at ``budget`` * E."""
    panels = sorted(curves.groupby(["view", "labels"]).groups, key=lambda k: (k[0] != "pooled", -k[1]))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.8), sharey=False, squeeze=False)
    widths = sorted(curves["width"].unique())
    for ax, (view, n) in zip(axes[0], panels):
        g = curves[(curves["view"] == view) & (curves["labels"] == n)]
        for w in widths:
            acc = g[g["width"] == w].pivot_table(index="epoch", columns="seed", values="probe") * 100
            (line,) = ax.plot(
                acc.index,
                acc.mean(1),
                "o-",
                ms=3,
                label=f"width {w} ({acc.shape[1]} seed{'' if acc.shape[1] == 1 else 's'})",
            )
            ax.fill_between(acc.index, acc.min(1), acc.max(1), color=line.get_color(), alpha=0.2, lw=0)
            if (
                chosen is not None
                and int(chosen["width"]) == w
                and view == chosen.get("view")
                and n == chosen.get("labels")
            ):
                for e in (chosen["full epochs"], chosen["full epochs"] * budget):
                    if e in acc.index:
                        ax.plot([e], [acc.loc[e].mean()], "k*", ms=12)
        ax.set_title(f"{view} features, probe on {n:,} labels")
        ax.set_xlabel("BYOL epochs (0 = untrained)")
        ax.set_ylabel("linear probe, test accuracy (%)")
    _below(axes[0][0], ncol=1)
    fig.tight_layout()
    return fig
