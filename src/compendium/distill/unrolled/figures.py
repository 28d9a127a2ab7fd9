"""Figures of the unrolled family's stages (DD / SLDD, label distillation, text DD, GTN and NAS, Mnemonics).
Each returns a matplotlib figure; the notebook saves and shows it."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

from compendium.core import viz
from compendium.distill import plots


def dd_regime_images(res: dict, regimes, mean: float, std: float):
    """DD's first inner step's images (classes 0-9) of each initialisation regime, one row per regime."""
    fig, axes = plt.subplots(len(regimes), 1, figsize=(6.5, 1.0 * len(regimes) + 0.4))
    for ax, r in zip(axes, regimes):
        imgs = res[f"DD {r}"].images[:10] * std + mean
        ax.imshow(torch.cat(list(imgs[:, 0].clamp(0, 1)), 1).numpy(), cmap="gray", vmin=0, vmax=1)
        ax.set_axis_off()
        ax.set_title(f"DD, {r.replace('_', ' ')} init: first step's images (classes 0-9)", fontsize=8)
    fig.tight_layout()
    return fig


def labelled_sets(res: dict, shown, classes, mean: float, std: float):
    """The images of the runs ``shown`` (``[(key, row name)]``), titled by their class or their top-2 label
    probabilities (soft labels), with the classes' full names."""
    n_col = max(len(res[k].images) for k, _ in shown)
    fig, axes = plt.subplots(len(shown), n_col, figsize=(1.2 * n_col, 1.45 * len(shown) + 0.2), squeeze=False)
    for row, (key, name) in zip(axes, shown):
        r = res[key]
        for j, ax in enumerate(row):
            ax.set_axis_off()
            if j >= len(r.images):
                continue
            ax.imshow((r.images[j, 0] * std + mean).clamp(0, 1).numpy(), cmap="gray", vmin=0, vmax=1)
            if r.targets.is_floating_point():
                top = r.targets[j].topk(2)
                ax.set_title(
                    f"{classes[int(top.indices[0])]} {float(top.values[0]):.2f}\n"
                    f"{classes[int(top.indices[1])]} {float(top.values[1]):.2f}",
                    fontsize=8,
                )
            else:
                ax.set_title(classes[int(r.targets[j])], fontsize=8)
        row[0].text(-0.15, 0.5, name, transform=row[0].transAxes, ha="right", va="center", fontsize=9)
    fig.tight_layout()
    return fig


def poisoning_bars(poison, title: str):
    """Mean poisoning metrics per data arm (before, DD poison, label-flipped real)."""
    fig, ax = plt.subplots(figsize=(8.4, 2.8))
    mean_p = poison.groupby("data", sort=False)[["acc on K", "K predicted as T", "acc on other classes"]].mean()
    mean_p.T.plot.bar(ax=ax, rot=0)
    ax.set_ylabel("fraction of test images")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    return fig


def learned_labels(show: dict, true_of: dict, classes, num_classes: int, k: int = 6):
    """Base images with their learned label distributions (title: source label, then the top-2 learned classes;
    bars: the distribution, the true class in red for the within-dataset base)."""
    fig, axes = plt.subplots(
        2 * len(show),
        k,
        figsize=(1.6 * k, 3.4 * len(show)),
        squeeze=False,
        gridspec_kw={"height_ratios": [1.0, 0.4] * len(show)},
    )
    for r, (b, d) in enumerate(show.items()):
        idx = torch.arange(0, len(d), max(1, len(d) // k))[:k]
        px, src = d.pixels(), (classes if b == "within" else [str(i) for i in range(10)])
        true = true_of[b]
        for j, i in enumerate(idx.tolist()):
            p = d.soft_labels[i]
            top = torch.topk(p, 2)
            ax = axes[2 * r, j]
            ax.imshow(px[i, 0], cmap="gray_r", interpolation="nearest")
            ax.set_xticks([]), ax.set_yticks([])
            ax.set_title(
                f"{src[int(true[i])]}\n" + "\n".join(f"{classes[int(c)]} {float(v):.2f}" for v, c in zip(*top)),
                fontsize=8,
            )
            bx_ = axes[2 * r + 1, j]
            bx_.bar(
                range(num_classes),
                p.numpy(),
                color=["C3" if c == int(true[i]) and b == "within" else "C0" for c in range(num_classes)],
            )
            bx_.set_ylim(0, 1), bx_.set_xticks(range(num_classes)), bx_.set_xticklabels(range(num_classes), fontsize=6)
            bx_.tick_params(labelsize=6)
        axes[2 * r, 0].set_ylabel("within\n(Fashion-MNIST)" if b == "within" else "cross\n(digits base)", fontsize=9)
    fig.suptitle(
        "LD-RR labels of base images (title: source label, then the top-2 learned classes;\n"
        "bars: the learned distribution over classes 0-9)",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


def steps_curve(flex, arch: str):
    """Accuracy of the learned and the true labels against the learner's number of Adam steps."""
    fm = flex[(flex.student == arch) & (flex.optimizer == "adam")].sort_values("mult")
    fig, ax = plt.subplots(figsize=(4.6, 3.0))
    for col, sd, lab in (("ld_mean", "ld_std", "LD-RR labels"), ("true_mean", "true_std", "true one-hot labels")):
        ax.errorbar(fm["steps"], 100 * fm[col], yerr=100 * fm[sd], marker="o", ms=3, capsize=2, label=lab)
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(sorted(set(fm["steps"]))))  # the steps run, unclipped
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel(f"{arch} training steps (Adam)", fontsize=9)
    ax.set_ylabel("test accuracy (%)", fontsize=9)
    ax.tick_params(labelsize=8)
    ax.legend(fontsize=9)
    fig.tight_layout()
    return fig


def text_accuracy_and_loss(sched, sets, *, chance: float, num_classes: int, first_seed: int, ipc0: int):
    """Left: accuracy under each set's own schedule (TDD, DD, random real); right: the outer loss of the TDD
    runs at the smallest ipc (moving average of 5)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    g = (
        sched.groupby(["distilled with", "init", "ipc", "theta0", "method"], sort=False)["acc"]
        .agg(["mean", "std"])
        .reset_index()
    )
    g["label"] = [
        f"{w} {i} ipc{p}\nθ0 {t}" for w, i, p, t in zip(g["distilled with"], g["init"], g["ipc"], g["theta0"])
    ]
    labels = list(dict.fromkeys(g["label"]))
    for k, (m, col) in enumerate([("TDD", "C0"), ("DD (hard labels)", "C2"), ("random real", "C7")]):
        sub = g[g["method"] == m].set_index("label").reindex(labels)
        axes[0].bar(
            np.arange(len(labels)) + (k - 1) * 0.27, sub["mean"], 0.27, yerr=sub["std"].fillna(0), color=col, label=m
        )
    axes[0].axhline(chance, color="k", ls=":", lw=1, label="chance")
    axes[0].set_xticks(range(len(labels)), labels, fontsize=8, rotation=60, ha="right")
    axes[0].set_ylabel("test accuracy")
    axes[0].set_title("own schedule (DD protocol)", fontsize=10)
    axes[0].set_ylim(0, 1.3 * axes[0].get_ylim()[1])  # headroom for the legend above the bars
    axes[0].legend(fontsize=9, loc="upper center", ncol=4)
    for r, d in sets:
        if r["method"] == "TDD" and r["rep"] == first_seed and r["ipc"] == ipc0:
            loss = np.convolve(d.losses, np.ones(5) / 5, mode="valid") if len(d.losses) >= 5 else d.losses
            axes[1].plot(loss, label=f"{r['distilled with']} {r['init']}")
    axes[1].axhline(np.log(num_classes), color="k", ls=":", lw=1)
    axes[1].set_xlabel("outer iteration")
    axes[1].set_ylabel("real-data loss after the unroll")
    axes[1].legend(fontsize=9)
    fig.tight_layout()
    return fig


def gtn_images_and_meta_loss(sets_show, classes, per_class: int, arm_curves: list):
    """Two GTN curricula as image grids (columns: curriculum order) and the meta-loss curves of the arms
    (``arm_curves``: ``[(label, colour, array [runs, steps])]``; mean with the min-max band)."""
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.6), gridspec_kw={"width_ratios": [1, 1, 1.3]})
    for ax, (d, title) in zip(axes[:2], sets_show):
        plots.show_set(
            ax,
            d,
            classes if ax is axes[0] else [""] * 10,
            per_class=per_class,
            title=f"{title}\n(columns: curriculum order)",
        )
    for label, col, cur in arm_curves:
        axes[2].plot(np.nanmean(cur, 0), color=col, label=label)
        axes[2].fill_between(range(cur.shape[1]), np.nanmin(cur, 0), np.nanmax(cur, 0), color=col, alpha=0.15)
    axes[2].set_xlabel("outer step")
    axes[2].set_ylabel("meta-loss (moving average)")
    axes[2].legend(fontsize=9)
    fig.tight_layout()
    return fig


def nas_scatter(acc_by_proxy: dict, gt, spearman):
    """Proxy accuracy against ground-truth accuracy per proxy, titled with Spearman's rho."""
    fig, axes = plt.subplots(1, len(acc_by_proxy), figsize=(2.1 * len(acc_by_proxy), 2.3), sharey=True)
    for ax, (p, acc) in zip(np.atleast_1d(axes), acc_by_proxy.items()):
        ax.scatter(acc, gt, s=10)
        ax.set_title(f"{p}: ρ = {spearman(acc, gt):.2f}", fontsize=8)
        ax.set_xlabel("proxy acc", fontsize=7)
    np.atleast_1d(axes)[0].set_ylabel("ground-truth acc", fontsize=7)
    fig.tight_layout()
    return fig


def accuracy_per_phase(curve, methods, title: str):
    """Accuracy on the seen classes after each phase, one line per exemplar method (Mnemonics bold)."""
    fig, ax = plt.subplots(figsize=(5.2, 3.2))
    for m in methods:
        ax.plot(curve.index, 100 * curve[m], marker="o", ms=3, lw=1.2 if m != "mnemonics" else 2.2, label=m)
    ax.set_xlabel("classes seen")
    ax.set_ylabel("test accuracy on seen classes (%)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    return fig


def mnemonics_exemplars(init, opt_x, lab, classes_shown, class_names, show: int, mean, std):
    """The random initialisation, the optimised Mnemonics exemplars and their change (stretched to the grey
    range), ``show`` per class of ``classes_shown``; ``mean`` / ``std`` one value per channel or one for all."""
    pick = torch.cat([torch.nonzero(lab == c).flatten()[:show] for c in classes_shown])
    m, s = (
        torch.tensor(tuple(map(float, v)) if hasattr(v, "__len__") else (float(v),)).view(1, -1, 1, 1)
        for v in (mean, std)
    )
    std = float(s.mean())

    def to_u8(z):
        return ((z * s + m).clamp(0, 1) * 255).round().to(torch.uint8)

    diff = opt_x[pick] - init[pick]
    amp = 0.5 / max(float(diff.abs().max()), 1e-8)  # the change, stretched to the grey range
    panels = (to_u8(init[pick]), to_u8(opt_x[pick]), ((0.5 + amp * diff).clamp(0, 1) * 255).round().to(torch.uint8))
    titles = ("random initialisation", "Mnemonics exemplars", f"change, stretched x{amp / std:.0f}")
    fig, axes = plt.subplots(1, 3, figsize=(6.6, 2.6))
    for ax, imgs, title in zip(axes, panels, titles):
        grid = viz.image_grid(imgs, nrow=show, pad_value=255 if ax is not axes[2] else 128)
        if grid.shape[-1] == 1:
            ax.imshow(grid.squeeze(-1), cmap="gray_r" if ax is not axes[2] else "coolwarm", interpolation="nearest")
        else:  # colour images as they are
            ax.imshow(grid.numpy(), interpolation="nearest")
        ax.set_title(title, fontsize=8)
        ax.set_xticks([])
        h = imgs.shape[2] + 1
        ax.set_yticks(
            [1 + h * i + h / 2 - 1 for i in range(len(classes_shown))],
            class_names if ax is axes[0] else [""] * len(classes_shown),
            fontsize=6,
        )
        ax.grid(False)
    fig.tight_layout()
    return fig
