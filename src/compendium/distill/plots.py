"""Figures shared by the distillation notebooks."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import torch
from matplotlib.lines import Line2D

from compendium.core import viz
from compendium.distill.sets import DistilledSet


def show_set(ax, dset: DistilledSet, classes, per_class: int = 10, title: str = ""):
    """One row per class of up to ``per_class`` images of the set (the first ones), in pixel space."""
    per_class = min(per_class, dset.ipc)
    idx = torch.cat([torch.nonzero(dset.labels == c).flatten()[:per_class] for c in range(dset.num_classes)])
    imgs = (dset.pixels()[idx] * 255).round().to(torch.uint8)
    grid = viz.image_grid(imgs, nrow=per_class)
    h = imgs.shape[2] + 1
    ax.imshow(
        grid.squeeze(-1) if grid.shape[-1] == 1 else grid,
        cmap="gray_r" if grid.shape[-1] == 1 else None,
        interpolation="nearest",
    )
    ax.set_yticks([1 + h * i + h / 2 - 1 for i in range(dset.num_classes)], list(classes), fontsize=6)
    ax.set_xticks([])
    ax.grid(False)
    ax.set_title(title or f"{dset.method} (ipc {dset.ipc})", fontsize=8)
    return ax


def logit_tsne(e_real, e_s, e_d, ipc: int):
    """DWA Fig. 1 (Du et al., NeurIPS 2024): the t-SNE of the teacher's logits, SRe2L's (dots) and DWA's
    (stars) sets over the density of the real images (contours)."""
    fig, ax = plt.subplots(figsize=(6.2, 5.2))
    sns.kdeplot(x=e_real[:, 0], y=e_real[:, 1], levels=8, color="0.5", linewidths=0.8, ax=ax)
    ax.scatter(e_s[:, 0], e_s[:, 1], s=10, c="tab:blue", label=f"SRe2L (ipc {ipc})", alpha=0.8)
    ax.scatter(e_d[:, 0], e_d[:, 1], s=26, c="tab:red", marker="*", label=f"DWA (ipc {ipc})", alpha=0.8)
    ax.set(title="DWA Fig. 1 (ours): teacher logits, t-SNE; contours = real data", xticks=[], yticks=[])
    ax.legend(loc="upper right")
    return fig


def lambda_sweep(sweep, sweep_ipc: int, n_seeds: int):
    """DWA Fig. 3: accuracy over λ_var, coupled vs decoupled BN weights, one panel per method, ±1 std."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
    for ax, m in zip(axes, ("sre2l", "dwa")):
        for how, c in (("coupled", "tab:gray"), ("decoupled", "tab:red")):
            d_ = sweep[(sweep["method"] == m) & (sweep["weights"] == how)]
            ax.plot(d_["lambda"], 100 * d_["mean"], "o-", color=c, label=f"{how} var")
            ax.fill_between(
                d_["lambda"], 100 * (d_["mean"] - d_["std"]), 100 * (d_["mean"] + d_["std"]), color=c, alpha=0.2
            )
        ax.set(
            title={"sre2l": "(a) SRe2L", "dwa": "(b) DWA"}[m],
            xlabel="λ_var",
            ylabel="test accuracy (%)" if m == "sre2l" else "",
        )
        ax.legend()
    fig.suptitle(f"DWA Fig. 3 (ours): ipc {sweep_ipc}, {n_seeds} seeds, ±1 std; paper optimum λ_var = 0.11 (CIFAR-100)")
    fig.tight_layout()
    return fig


def feature_distance_bars(f4, lam: float, ipc: int):
    """DWA Fig. 4: the normalised feature distance per class, one bar per method and weighting."""
    fig, ax = plt.subplots(figsize=(7, 3.2))
    sns.barplot(data=f4, x="class", y="feature distance", hue=f4["method"] + " " + f4["weights"], ax=ax, errorbar=None)
    ax.set(title=f"DWA Fig. 4 (ours): normalised feature distance per class, λ = {lam:g}, ipc {ipc}")
    ax.legend(fontsize=9, ncols=2)
    fig.tight_layout()
    return fig


def grid_heatmap(grid, none: tuple[float, float], ipc: int):
    """DWA Fig. 5: accuracy over the K × ρ grid minus the no-adjustment arm (ρ = 0), in points, each cell
    annotated "Δ ± s", s the std over seeds of the paired per-seed difference (``grid``: columns K, rho,
    delta, delta std, seeds, as :func:`compendium.distill.dwa_experiments.grid_table` returns);
    ``none``: the no-adjustment arm's mean and std over seeds (fractions,
    :func:`compendium.distill.dwa_experiments.seed_cell`)."""
    delta = 100 * grid.pivot(index="K", columns="rho", values="delta")
    sd = 100 * grid.pivot(index="K", columns="rho", values="delta std")
    n = int(grid["seeds"].min())
    annot = np.vectorize(lambda m, s: f"{m:+.1f} ± {s:.1f}".replace("-", "−"))(delta.to_numpy(), sd.to_numpy())
    lim = max(float(np.abs(delta.to_numpy()).max()), 1e-9)
    fig, ax = plt.subplots(figsize=(5.6, 3.9))
    sns.heatmap(
        delta,
        annot=annot,
        fmt="",
        cmap="RdBu",
        center=0,
        vmin=-lim,
        vmax=lim,
        ax=ax,
        annot_kws={"fontsize": 11},
        cbar_kws={"label": f"Δ vs ρ = 0 (points); ± = std of the\npaired Δ over {n} seeds"},
    )
    mu0, sd0 = none
    ax.set(
        title=f"DWA Fig. 5 (ours): ipc {ipc}; ρ = 0 gives {100 * mu0:.1f} ± {100 * sd0:.1f}% ({n} seeds)",
        xlabel="ρ",
        ylabel="K",
    )
    ax.title.set_fontsize(10)
    fig.tight_layout()
    return fig


def probe_bars(
    run,
    order,
    targets,
    *,
    budget_n: int,
    highlight: str = "SSDD",
    baseline: str = "untrained",
    paper: dict | None = None,
    paper_target: str | None = None,
    paper_label: str = "paper",
):
    """SSDD Table 1's first column as bars: a ConvNet student pre-trained on each set of ``order``, its
    linear-probe accuracy per target (one panel each), bars from zero, ±1 std over seeds; ``run`` gives
    ``mean(name, target=)`` and ``sd(name, target=)`` as fractions. ``paper`` ``{name: %}``: the
    paper's printed value of the same cell, a black tick across the bar in the ``paper_target`` panel."""
    paper = dict(paper or {})
    fig, axes = plt.subplots(
        1, len(targets), figsize=(3.8 * len(targets), 0.34 * len(order) + 2.2), sharey=True, squeeze=False
    )
    axes = axes[0]
    top = 0.0
    for ax, t in zip(axes, targets):
        mu = [100 * run.mean(n, target=t) for n in order]
        sd = [100 * run.sd(n, target=t) for n in order]
        ax.barh(
            order,
            mu,
            xerr=sd,
            capsize=2,
            color=["tab:red" if n == highlight else "tab:gray" if n == baseline else "tab:blue" for n in order],
        )
        ax.axvline(100 * run.mean(baseline, target=t), color="k", lw=0.8, ls="--")
        if t == paper_target:
            for i, n in enumerate(order):
                if n in paper:
                    ax.vlines(paper[n], i - 0.42, i + 0.42, color="k", lw=2.5, zorder=5)
        top = max(top, max(m + s for m, s in zip(mu, sd)), max(paper.values(), default=0.0))
        ax.set(xlabel="linear probe accuracy (%)", title=t)
    for ax in axes:
        ax.set_xlim(0, min(100.0, 1.05 * top))
    axes[0].invert_yaxis()
    handles = [Line2D([], [], color="k", lw=0.8, ls="--", label=f"{baseline} student")]
    if paper and paper_target in targets:
        handles.append(Line2D([], [], color="k", lw=2.5, label=paper_label))
    fig.suptitle(f"ConvNet student pre-trained on each set (N = {budget_n}); bars: mean ±1 std over seeds", fontsize=11)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=10, frameon=False)
    return fig
