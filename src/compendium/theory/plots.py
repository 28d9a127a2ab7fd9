"""Figure panels shared by the Gaussian-mixture theory stages: the loss landscape with training
trajectories of ReLA Figure 2(a) (Theorem 1, varied Σ) and Figure 3(a) (Theorem 2, varied ρ), and the
final-loss bands of Figures 2(b) and 3(b)."""

from __future__ import annotations

import numpy as np


def draw_landscape(fig, ax, pnl: dict, labels, mark_start: bool = True) -> None:
    """Fill ``ax`` with the log10 validation loss of a landscape panel (from
    :func:`compendium.theory.gaussian.landscape_panel`) and the projected trajectories, one per entry of
    ``labels`` in the panel's trajectory order; the end point is a white star, the start a black dot
    (``mark_start``)."""
    cs = ax.contourf(pnl["a"], pnl["b"], np.log10(pnl["loss"]), levels=25, cmap="magma_r")
    fig.colorbar(cs, ax=ax, label="log10 validation MSE on G")
    for k, label in enumerate(labels):
        c = pnl["coords"][:, k]
        ax.plot(c[:, 0], c[:, 1], lw=1.5, label=label)
        if mark_start:
            ax.plot(c[0, 0], c[0, 1], "k.", ms=6)
        ax.plot(c[-1, 0], c[-1, 1], "w*", ms=10, mec="k")


def draw_band(ax, x, mean, std) -> None:
    """The mean final loss against the swept value with a ±1 standard-deviation band over seeds."""
    ax.plot(x, mean, "o-")
    ax.fill_between(x, mean - std, mean + std, alpha=0.25)
