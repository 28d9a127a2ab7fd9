"""Ledger rows of the theory stages (compendium.pipeline.checks.theory) on small synthetic tables
whose verdicts are known."""

import numpy as np
import pandas as pd
import pytest

from compendium.pipeline.checks import theory as checks
from compendium.verdicts.claims import CONDITIONAL, FAILS, HOLDS
from compendium.theory import gaussian

SIG = [0.1, 0.5, 1.0]


def _samples_inputs(argmin=0.1, lin_se=1.0, lr_t=1.5):
    tr = {"monotone_from": 0.1, "significant_decreases": 0, "spearman": 1.0, "argmin": argmin, "mean": [0.1, 0.2, 0.3]}
    lin = pd.DataFrame(
        {
            "sigma": SIG,
            "MC E[(θ_T-θ*)²]": [1.0, 2.0, 3.0],
            "closed form (camera-ready B.3)": [1.0, 2.0, 3.0],
            "closed - MC (s.e.)": [lin_se] * 3,
            "v1 printed (A.3)": [0.1] * 3,
            "v1 - MC (s.e.)": [10.0] * 3,
        }
    )
    risk = pd.DataFrame(
        {
            "sigma": SIG,
            "quadratic excess ½E(θ-θ*)²": [1.0, 2.0, 3.0],
            "0-1 excess on G'(Σ)": [0.3, 0.1, 0.2],
            "0-1 excess on G (Σ=0.5)": [0.1, 0.2, 0.3],
        }
    )
    bnd = pd.DataFrame(
        {"sigma": SIG, "logistic regression t": [lr_t, 1.5, 1.5], "MLP t (mean over seeds)": [1.4, 1.5, 1.6]}
    )
    ggb = pd.DataFrame(
        {
            "beta": [1.0, 1.0, 3.0, 3.0],
            "sigma": [0.1, 0.5] * 2,
            "E[ξ] (quadrature)": [0.0] * 4,
            "E[ξ²] (quadrature)": [1.0] * 4,
            "E[ξ²] (B.3)": [1.0] * 4,
            "closed - MC (s.e.)": [0.5] * 4,
            "0-1 excess on G": [0.1, 0.2, 0.1, 0.3],
        }
    )
    ggc = pd.DataFrame(
        {
            "beta": [1.0, 3.0],
            "argmin": [-1.5, -1.5],
            "min_excess": [0.0, 0.0],
            "C1": [2.0, 1.0],
            "limit": [2.0, 0.9],
            "printed_vs_exact": [0.0, 0.0],
        }
    )
    return tr, lin, risk, bnd, ggb, ggc


def _samples(**kw):
    return checks.samples_claims(
        *_samples_inputs(**kw),
        sigmas=SIG,
        linear_sigmas=SIG,
        steps=10,
        seeds=2,
        mc_reps=100,
        mc_eta=0.05,
        mc_steps=5,
        boundary_samples=100,
    )


def test_samples_claims_verdicts():
    rows = _samples()
    assert [c.verdict for c in rows] == [HOLDS, HOLDS, FAILS, CONDITIONAL, HOLDS, HOLDS, HOLDS, HOLDS]
    assert rows[0].location == "Thm 1; Fig. 2(b) (v1 Fig. 1(b))" and "Σ=0.1: 0.1000" in rows[0].ours
    bad = _samples(argmin=0.5, lin_se=5.0, lr_t=1.6)
    assert bad[0].verdict == CONDITIONAL and "for Σ ≥ 0.1" in bad[0].condition
    assert bad[1].verdict == FAILS and bad[4].verdict == FAILS


def test_rho_decreasing_rule():
    t = {"significant_increases": 0, "spearman": -0.9, "argmin": 1.0}
    assert checks.rho_decreasing(t, [0.0, 0.5, 1.0])
    assert not checks.rho_decreasing(t | {"significant_increases": 1}, [0.0, 0.5, 1.0])
    assert not checks.rho_decreasing(t | {"argmin": 0.5}, [0.0, 0.5, 1.0])
    assert not checks.rho_decreasing(t | {"spearman": -0.2}, [0.0, 0.5, 1.0])


def test_targets_claims_verdicts():
    rhos = [0.0, 0.5, 1.0]
    good = {"significant_increases": 0, "spearman": -1.0, "argmin": 1.0}
    trends = {"G": good, "G'": good | {"argmin": 0.5}}
    labels = {"G": "primary", "G'": "relabelled"}
    final = pd.DataFrame(
        {"validation": ["G"] * 3 + ["G'"] * 3, "rho": rhos * 2, "loss_mean": [3.0, 2.0, 1.0, 3.0, 1.0, 2.0]}
    )
    noise = pd.DataFrame(
        {
            "sigma": [1.0] * 3,
            "rho": rhos,
            "closed - MC (s.e.)": [0.1] * 3,
            "MC s.e.": [0.01] * 3,
            "E|x-y'+θ*| (MC)": [1.0, 0.8, 0.6],
        }
    )
    stat = pd.DataFrame({"rho": rhos, "diff (s.e.)": [0.5] * 3})
    stars = {1.0: gaussian.theorem2_rho_star(1.0)}
    rows = checks.targets_claims(
        trends,
        final,
        labels,
        noise,
        stat,
        stars,
        {1.0: 0.2},
        rhos=rhos,
        train_sigma=1.0,
        steps=10,
        seeds=2,
        mc_samples=100,
        mc_reps=100,
    )
    assert rows[0].verdict == CONDITIONAL and rows[0].condition == "when validated on G; not on G'"
    assert [c.verdict for c in rows[1:]] == [HOLDS, HOLDS if stars[1.0] >= 1 else FAILS, HOLDS, HOLDS, FAILS]
    bowed = noise.assign(**{"E|x-y'+θ*| (MC)": [1.0, 1.5, 0.6]})
    rows = checks.targets_claims(
        trends,
        final,
        labels,
        bowed,
        stat,
        stars,
        {1.0: -0.1},
        rhos=rhos,
        train_sigma=1.0,
        steps=10,
        seeds=2,
        mc_samples=100,
        mc_reps=100,
    )
    assert [c.verdict for c in rows[3:]] == [FAILS, FAILS, HOLDS]


def _info_inputs(eq24=(2.0, 0.9, 0.7)):
    info = pd.DataFrame(
        {
            "sigma": SIG,
            "eq. (24)": list(eq24),
            "true I(X;Y) nats (quadrature)": [np.log(2), 0.5, 0.3],
            "true I / log 2": [1.0, 0.7, 0.4],
            "binned NMI, K=10": [0.9, 0.6, 0.3],
            "I Monte Carlo": [np.log(2), 0.5, 0.3],
            "MC s.e.": [0.01] * 3,
        }
    )
    c6 = pd.DataFrame(
        {
            "teacher": ["sign", "sign", "soft", "soft"],
            "bins": [10] * 4,
            "rho": [0.0, 1.0] * 2,
            "NMI(X_binned, y'_binned)": [0.1, 0.3, 0.1, 0.95],
        }
    )
    thm3 = {"all ≤ 1": True, "= 1 iff injective": True, "max NMI": 1.0, "injective maps": 3}
    fro = pd.DataFrame({"diff (s.e.)": [0.5, -1.0]})
    tvt = pd.DataFrame(
        {"sigma'": [0.1], "max |ε_G − ε_G'| over thresholds": [0.1], "D_TV(G', G)": [0.2], "bound holds": [True]}
    )
    ntk = {"relative_error": 1e-9, "hitting_time": 1.0, "bound": 2.0}
    lem = {
        "lemma1_printed_holds": False,
        "l1d": {
            "tv": [0.1, 0.2],
            "printed_holds_all": 0,
            "max_ratio_all": 2.0,
            "printed_holds_thr": 1,
            "half_holds": 2,
        },
        "l1g": {
            "tv": [0.3],
            "printed_holds": 0,
            "min_ratio": 1.5,
            "max_ratio": 2.0,
            "example": {"d_thr": 0.7, "tv": 0.38},
            "half_holds": 1,
        },
        "l4": {"triples": 5, "max_gap": -0.1, "violations": 0},
        "l4s": {"01": {"best_gap": 0.0}, "mse": {"best_gap": 0.25}},
        "t5g": {"cases": 4, "nmi_ordered": 3, "nmi_cases": 4, "max_nmi_increase": 0.1, "mi_ordered": 4},
        "t5d": {"nmi_full": 0.4, "nmi_reduced": 0.6},
    }
    return info, {"equals_one": 0.2, "singular": 0.1}, c6, thm3, fro, {"d=1": True}, tvt, ntk, lem


def test_information_claims_verdicts():
    rows = checks.information_claims(*_info_inputs(), bins=[10], mc_samples=100, random_maps=5, ntk_n=4)
    assert [c.verdict for c in rows] == [
        FAILS,
        FAILS,
        HOLDS,
        CONDITIONAL,
        HOLDS,
        HOLDS,
        HOLDS,
        HOLDS,
        FAILS,
        HOLDS,
        FAILS,
    ]
    assert "3/3" in rows[8].ours  # ½ d_H ≤ D_TV on every pair
    rows = checks.information_claims(
        *_info_inputs(eq24=(0.9, 0.8, 0.7)), bins=[10], mc_samples=100, random_maps=5, ntk_n=4
    )
    assert rows[0].verdict == HOLDS


def _aug_inputs(mix=(0.4, 0.3, 0.1), spread=(1.0, 2.0)):
    ana = pd.DataFrame(
        {
            "alpha": [0.0, 1.0, 2.0],
            "exact overlap ∫min(p1,p2)": [0.1, 0.2, 0.3],
            "Monte Carlo": [0.1, 0.2, 0.3],
            "MC s.e.": [0.01] * 3,
            "paper formula O(α)": [0.9, 0.8, 0.7],
        }
    )
    measures = pd.DataFrame(
        {
            "setting": ["min scale 0.08", "min scale 0.5", "no augmentation"],
            "min_scale": [0.08, 0.5, 1.0],
            "augmented": [True, True, False],
            "knn_mixing": list(mix),
            "intra_class_spread": list(spread) + [3.0],
        }
    )
    fig6 = pd.DataFrame(
        {
            "min_scale": [0.08, 1.0],
            "confusable with another class": [0.2, 0.0],
            "target cos distance (those pairs)": [0.3, 0.0],
            "prior cos distance of the two views": [0.1, 0.0],
            "target cos distance (all cross-class pairs)": [0.4, 0.4],
        }
    )
    return ana, measures, fig6


def test_augmentation_claims_verdicts_and_flags():
    kw = dict(classes=[0, 6], n_images=4, per_class=2, views=1, mc_samples=100)
    rows, flags = checks.augmentation_claims(*_aug_inputs(), ["a"] * 10, **kw)
    assert [c.verdict for c in rows] == [HOLDS, FAILS, HOLDS, HOLDS, HOLDS]
    assert flags == {"exact_overlap_increasing": True, "paper_formula_increasing": False}
    rows, _ = checks.augmentation_claims(
        *_aug_inputs(mix=(0.1, 0.9, 0.05), spread=(2.0, 1.0)), ["a"] * 10, **kw | {"per_class": 500}
    )
    assert rows[0].verdict == CONDITIONAL and rows[3].verdict == FAILS


def _dwa_inputs(lowered=(0.9, 0.2)):
    t2 = pd.DataFrame(
        [
            {
                "paper / autograd (median)": 6 / 7,
                "max rel |autograd − exact|": 1e-12,
                "opposing gradients where the paper predicts them": 1.0,
                "sign(paper) = sign(autograd)": 1.0,
                "fraction of instances with opposing gradients": 0.3,
            }
        ]
    )
    multi = pd.DataFrame([{"closed-form sign = autograd sign": 1.0, "fraction with opposing gradients": 0.2}])
    t4 = pd.DataFrame(
        {
            "teacher": ["reg", "reg", "long", "long"],
            "rho": [0.001, 0.1] * 2,
            "frac_rest_lowered": list(lowered) + [0.1, 0.1],
            "ratio_median": [-0.9, 0.5, 2.0, 3.0],
            "dL_rest": [-1.0, 1.0, 1.0, 2.0],
            "random_dL_rest": [0.5, 0.5, 0.5, 0.5],
            "dL_rest_per_sample": [-0.01, 0.01, 0.02, 0.03],
        }
    )
    t1 = pd.DataFrame(
        {
            "init_std": [0.1, 0.1, 1.0, 1.0],
            "lambda_mean": [1.0] * 4,
            "lambda_var": [0.0, 1.0] * 2,
            "Var(S)": [0.01, 0.5, 1.0, 0.6],
            "Var(init)": [0.01, 0.01, 1.0, 1.0],
            "Var(real data)": [0.7] * 4,
        }
    )
    t3_sum = pd.DataFrame(
        {
            "sigma_theta": [0.01, 0.1],
            "measured / implicit": [1.0, 1.1],
            "eq. 9 uncancelled share": [0.9, 0.9],
            "eq. 10 / measured": [5.0, 5.0],
        }
    )
    return t2, 10, multi, t4, t1, t3_sum, [{"P": 50, "d": 4}]


def test_dwa_claims_verdicts_and_metrics():
    kw = dict(batches=3, batch_size=7, channels=4, classes=4, draws=3, ascent_steps=2, rhos=[0.001, 0.1])
    rows = checks.dwa_claims(*_dwa_inputs(), **kw)
    assert [c.verdict for c in rows] == [FAILS, HOLDS, HOLDS, CONDITIONAL, CONDITIONAL, HOLDS, FAILS, CONDITIONAL]
    assert rows[3].condition == "small ρ and a teacher whose weights stay bounded (reg: up to ρ = 0.001)"
    assert rows[7].condition == "small ρ (reg: up to ρ = 0.001)"
    rows = checks.dwa_claims(*_dwa_inputs(lowered=(0.9, 0.8)), **kw)
    assert "reg: up to ρ = 0.1" in rows[3].condition
    t2, _, _, t4, *_ = _dwa_inputs()
    m = checks.dwa_metrics(t2, t4, "reg")
    assert m["t4_ratio_smallest_rho"] == {"long": 2.0, "reg": -0.9}
    assert m["t4_dL_rest_per_sample_smallest_rho_regularised"] == -0.01
    assert m["eq20_over_autograd"] == pytest.approx(6 / 7)
