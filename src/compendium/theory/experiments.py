"""Table assembly of the theory stages: the loops over swept values, seeds and teachers that turn the
drivers of :mod:`compendium.theory.gaussian` and :mod:`compendium.theory.dwa` into result tables.

* ReLA Theorem 1 / Figure 2(b) and Theorem 2 / Figure 3(b): final validation loss per swept value
  (:func:`final_loss_rows`); App E (v1 App G): the decision boundary on the diagonal against Sigma
  (:func:`boundary_rows`); the proof model of Theorem 2 (App C): the gradient-noise variance V(rho)
  (:func:`noise_variance_table`) and the stationary error of its SGD (:func:`stationary_error_table`).
* DWA (NeurIPS 2024) Sec. 3.3, eqs. 12-15: the directed-adjustment sweep over teachers
  (:func:`teacher_sweep`); Sec. 3.2, eqs. 9-11: the per-class and summary tables of the random
  perturbation (:func:`perturbation_tables`).

Every function keeps the order of its random draws, so its tables are reproducible bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch
from sklearn.linear_model import LogisticRegression

from compendium.theory import dwa, gaussian


def final_loss_rows(sweep: gaussian.Sweep, names, key: str, values, seeds: int) -> list[dict]:
    """Mean and standard deviation over seeds of the final validation loss of a sweep (ReLA Fig. 2(b)
    and Fig. 3(b)): one row per validation set ``name`` and swept value (column ``key``); the standard
    deviation is 0 for a single seed."""
    rows = []
    for name in names:
        fl = sweep.final_loss(name)
        for i, s in enumerate(values):
            rows.append(
                {
                    "validation": name,
                    key: s,
                    "loss_mean": fl[i].mean(),
                    "loss_std": fl[i].std(ddof=1) if seeds > 1 else 0.0,
                }
            )
    return rows


def boundary_rows(final, sigmas, n_seeds: int, boundary_samples: int, seed: int) -> list[dict]:
    """ReLA App E (v1 App G): where the Bayes rule, a logistic regression fitted on
    ``boundary_samples`` fresh samples (seed ``seed + 50 + i`` for the i-th Sigma) and the trained MLPs
    ``final`` (value-major over ``sigmas`` and ``n_seeds`` seeds) cross 0.5 on the diagonal x1 = x2 = t."""
    bnd = []
    mlp_t = gaussian.diagonal_boundary(final).reshape(len(sigmas), n_seeds).numpy()
    for i, s in enumerate(sigmas):
        x, y = gaussian.sample_mixture(boundary_samples, s, torch.Generator().manual_seed(seed + 50 + i))
        lr_fit = LogisticRegression(C=1e6, max_iter=2000).fit(x.numpy(), y.numpy())
        w, b = gaussian.bayes_offset(sigma=s)
        bnd.append(
            {
                "sigma": s,
                "Bayes crossing t": gaussian.diagonal_crossing(w, b),
                "logistic regression t": gaussian.diagonal_crossing(lr_fit.coef_[0], float(lr_fit.intercept_[0])),
                "MLP t (mean over seeds)": float(np.nanmean(mlp_t[i])),
                "MLP t (std)": float(np.nanstd(mlp_t[i])),
            }
        )
    return bnd


def noise_variance_table(rhos, sigmas, mc_samples: int, gen: torch.Generator) -> pd.DataFrame:
    """ReLA Thm 2 proof model (App C): the exact gradient-noise variance V(rho) against Monte Carlo
    (``mc_samples`` draws from ``gen``, Sigma-major), with the difference in standard errors."""
    rows = []
    for s in sigmas:
        for r in rhos:
            v_mc, abs_mc, se = gaussian.theorem2_noise_mc(r, s, mc_samples, gen)
            rows.append(
                {
                    "sigma": s,
                    "rho": r,
                    "V closed form": float(gaussian.theorem2_variance(r, s)),
                    "V Monte Carlo": v_mc,
                    "MC s.e.": se,
                    "E|x-y'+θ*| (MC)": abs_mc,
                }
            )
    noise = pd.DataFrame(rows)
    noise["closed - MC (s.e.)"] = (noise["V closed form"] - noise["V Monte Carlo"]) / noise["MC s.e."]
    return noise


def stationary_error_table(
    rhos, train_sigma: float, mc_eta: float, mc_steps: int, mc_reps: int, seed: int
) -> pd.DataFrame:
    """ReLA Thm 2 proof model (App C): the error E[(theta_T - theta*)^2] of ``mc_reps`` SGD chains
    (started at theta_0 = -1.5, a fresh generator seeded ``seed + 13`` per rho) against
    eta/(2-eta) (1-(1-eta)^{2T}) V(rho)."""
    stat = []
    for r in rhos:
        th = gaussian.linear_sgd_mc(
            train_sigma, mc_eta, mc_steps, -1.5, mc_reps, torch.Generator().manual_seed(seed + 13), rho=r
        )
        sq = (th + 1.5) ** 2
        q = (1 - mc_eta) ** (2 * mc_steps)
        stat.append(
            {
                "rho": r,
                "MC E[(θ_T-θ*)²]": float(sq.mean()),
                "MC s.e.": float(sq.std() / math.sqrt(mc_reps)),
                "η/(2−η)(1−(1−η)^{2T}) V(ρ)": mc_eta
                / (2 - mc_eta)
                * (1 - q)
                * float(gaussian.theorem2_variance(r, train_sigma)),
            }
        )
    stat = pd.DataFrame(stat)
    stat["diff (s.e.)"] = (stat["η/(2−η)(1−(1−η)^{2T}) V(ρ)"] - stat["MC E[(θ_T-θ*)²]"]) / stat["MC s.e."]
    return stat


def teacher_sweep(net: dwa.FlatMLP, x, y, teachers: dict, rhos, draws: int, ascent_steps: int, seed: int):
    """DWA Sec. 3.3, eqs. 12-15: train each teacher (``teachers`` maps a name to the keyword arguments
    of :func:`compendium.theory.dwa.train_teacher`) and measure the directed adjustment on it.

    Returns ``(teacher_rows, effects, thetas)``: one row per teacher (gradient norms, ‖θ‖, accuracy,
    mean CE), the DataFrame of :func:`compendium.theory.dwa.adjustment_effects` rows tagged with the
    teacher, and the trained parameters by name."""
    effects, teacher_rows, thetas = [], [], {}
    for name, kw in teachers.items():
        theta, g_obj, g_sum = dwa.train_teacher(net, x, y, seed=seed, **kw)
        thetas[name] = theta
        teacher_rows.append(
            {
                "teacher": name,
                "‖∇ training objective‖": g_obj,
                "‖∇ Σℓ‖ (what eq. 13 needs = 0)": g_sum,
                "‖θ‖": float(theta.norm()),
                "train accuracy": float((net(theta, x).argmax(1) == y).double().mean()),
                "mean CE": float(net.summed_loss(theta, x, y)) / len(y),
            }
        )
        for r in dwa.adjustment_effects(net, theta, x, y, rhos, draws=draws, steps=ascent_steps, seed=seed + 1):
            effects.append({"teacher": name, **r})
    return teacher_rows, pd.DataFrame(effects), thetas


def perturbation_tables(t3_rows, t3_class) -> tuple[pd.DataFrame, pd.DataFrame]:
    """DWA Sec. 3.2, eqs. 9-11: join the per-draw rows of
    :func:`compendium.theory.dwa.perturbation_response` with its per-class rows, add the ratios of
    measured to implicit-function β and of eq. 10's β to the measured one, and take the median over
    classes per σ_θ. Returns ``(per_class, summary)``."""
    t3 = pd.DataFrame(t3_rows).merge(pd.DataFrame(t3_class), on="class")
    t3["measured / implicit"] = t3["measured beta"] / t3["beta implicit"]
    t3["eq. 10 / measured"] = t3["beta eq. 10 (pinv)"] / t3["measured beta"]
    t3_sum = (
        t3.groupby("sigma_theta")[
            [
                "measured beta",
                "beta implicit",
                "beta eq. 10 (pinv)",
                "measured / implicit",
                "eq. 10 / measured",
                "eq. 9 uncancelled share",
            ]
        ]
        .median()
        .reset_index()
    )
    return t3, t3_sum
