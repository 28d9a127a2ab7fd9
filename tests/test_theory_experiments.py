"""Table assembly of the theory stages (compendium.theory.experiments) and their shared figure panels
(compendium.theory.plots)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import torch

from compendium.theory import dwa, experiments, gaussian, plots


class _Sweep:
    def __init__(self, losses):
        self.losses = losses

    def final_loss(self, name):
        return self.losses[name]


def test_final_loss_rows_mean_and_std_over_seeds():
    fl = np.array([[1.0, 3.0], [2.0, 2.0]])
    rows = experiments.final_loss_rows(_Sweep({"G": fl, "G'": fl + 1}), ("G", "G'"), "sigma", [0.1, 0.5], seeds=2)
    assert [(r["validation"], r["sigma"]) for r in rows] == [("G", 0.1), ("G", 0.5), ("G'", 0.1), ("G'", 0.5)]
    assert rows[0]["loss_mean"] == 2.0 and rows[0]["loss_std"] == pytest.approx(np.sqrt(2.0))
    assert rows[1]["loss_std"] == 0.0 and rows[2]["loss_mean"] == 3.0
    single = experiments.final_loss_rows(_Sweep({"G": fl[:, :1]}), ["G"], "rho", [0.0, 1.0], seeds=1)
    assert [r["loss_std"] for r in single] == [0.0, 0.0] and single[1]["rho"] == 1.0


def test_boundary_rows_bayes_and_logistic_cross_at_the_midpoint():
    sweep = gaussian.sigma_sweep([0.1, 0.5], [0, 1], 20, 200, 0, eval_every=20)
    bnd = experiments.boundary_rows(sweep.result.final, [0.1, 0.5], 2, 4000, 0)
    assert [r["sigma"] for r in bnd] == [0.1, 0.5]
    for r in bnd:
        assert r["Bayes crossing t"] == pytest.approx(1.5)
        assert abs(r["logistic regression t"] - 1.5) < 0.05
        assert set(r) == {
            "sigma",
            "Bayes crossing t",
            "logistic regression t",
            "MLP t (mean over seeds)",
            "MLP t (std)",
        }
    again = experiments.boundary_rows(sweep.result.final, [0.1, 0.5], 2, 4000, 0)
    assert pd.DataFrame(again).equals(pd.DataFrame(bnd))


def test_noise_variance_table_matches_the_closed_form():
    noise = experiments.noise_variance_table([0.0, 0.5, 1.0], [0.5, 1.0], 20000, torch.Generator().manual_seed(3))
    assert list(zip(noise.sigma, noise.rho)) == [(s, r) for s in (0.5, 1.0) for r in (0.0, 0.5, 1.0)]
    for r in noise.itertuples():
        assert r[3] == pytest.approx(float(gaussian.theorem2_variance(r.rho, r.sigma)))
    assert (noise["closed - MC (s.e.)"].abs() < 5).all()
    np.testing.assert_allclose(
        noise["closed - MC (s.e.)"], (noise["V closed form"] - noise["V Monte Carlo"]) / noise["MC s.e."]
    )


def test_stationary_error_table_against_the_sgd_chains():
    stat = experiments.stationary_error_table([0.0, 1.0], 1.0, 0.05, 60, 2000, 0)
    assert list(stat.rho) == [0.0, 1.0]
    q = 0.95**120
    for r in stat.itertuples():
        assert stat.loc[r.Index, "η/(2−η)(1−(1−η)^{2T}) V(ρ)"] == pytest.approx(
            0.05 / 1.95 * (1 - q) * float(gaussian.theorem2_variance(r.rho, 1.0))
        )
    assert (stat["diff (s.e.)"].abs() < 5).all()


def test_teacher_sweep_rows_per_teacher_rho_and_draw():
    x, y = dwa.gaussian_mixture(3, 2, 6, spread=1.0, seed=0)
    net = dwa.FlatMLP(2, 4, 3)
    teachers = {
        "a": dict(weight_decay=0.0, adam_steps=5, lbfgs_steps=0),
        "b": dict(weight_decay=1e-3, adam_steps=5, lbfgs_steps=2),
    }
    rows, effects, thetas = experiments.teacher_sweep(net, x, y, teachers, [0.001, 0.1], 1, 2, 0)
    assert [r["teacher"] for r in rows] == ["a", "b"] and list(thetas) == ["a", "b"]
    assert len(effects) == 2 * 2 * 1 and list(effects["teacher"].unique()) == ["a", "b"]
    assert rows[0]["‖θ‖"] == pytest.approx(float(thetas["a"].norm()))
    assert 0.0 <= rows[1]["train accuracy"] <= 1.0


def test_perturbation_tables_ratios_and_medians():
    rows = [
        {
            "class": c,
            "sigma_theta": s,
            "measured beta": m,
            "beta implicit": 2.0,
            "beta eq. 10 (pinv)": 4.0,
            "eq. 9 uncancelled share": 0.5,
        }
        for c, s, m in ((0, 0.1, 1.0), (1, 0.1, 3.0), (0, 1.0, 2.0), (1, 1.0, 2.0))
    ]
    per_class, summary = experiments.perturbation_tables(
        rows, [{"class": 0, "P": 9, "d": 2}, {"class": 1, "P": 9, "d": 2}]
    )
    assert sorted(per_class["measured / implicit"]) == [0.5, 1.0, 1.0, 1.5]
    assert "P" in per_class.columns
    assert list(summary.sigma_theta) == [0.1, 1.0]
    assert list(summary["measured beta"]) == [2.0, 2.0]
    assert list(summary["eq. 10 / measured"]) == [pytest.approx((4.0 + 4.0 / 3) / 2), 2.0]


def test_landscape_and_band_panels_draw_one_line_per_trajectory():
    a, b = np.meshgrid(np.linspace(-1, 1, 5), np.linspace(-1, 1, 5))
    pnl = {"a": a, "b": b, "loss": np.exp(a**2 + b**2), "coords": np.random.default_rng(0).normal(size=(4, 3, 2))}
    fig, ax = plt.subplots()
    plots.draw_landscape(fig, ax, pnl, ["x", "y", "z"])
    assert [l.get_label() for l in ax.lines if not l.get_label().startswith("_")] == ["x", "y", "z"]
    assert len(ax.lines) == 9
    fig2, ax2 = plt.subplots()
    plots.draw_landscape(fig2, ax2, pnl, ["x", "y"], mark_start=False)
    assert len(ax2.lines) == 4
    plots.draw_band(ax2, np.array([0.0, 1.0]), np.array([1.0, 2.0]), np.array([0.1, 0.2]))
    np.testing.assert_allclose(ax2.lines[-1].get_ydata(), [1.0, 2.0])
    plt.close("all")
