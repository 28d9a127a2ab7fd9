"""The paper figures' drawing functions: bars from zero with seed error bars and the papers' values,
legible legends outside the data, full class names (compendium.rela.plots, compendium.distill.plots,
compendium.distill.unrolled.figures, compendium.pipeline.paper_tables' cell look-ups)."""

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from compendium.distill import plots as distill_plots
from compendium.pipeline import paper_tables as PT
from compendium.pipeline.checks import ssdd as ssdd_checks
from compendium.rela import plots as rela_plots

matplotlib.use("Agg")


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _stats(groups, series, n=2):
    return pd.DataFrame(
        [
            {"g": g, "s": s, "mean": 0.6 + 0.05 * i + 0.01 * j, "std": 0.02, "count": n}
            for i, g in enumerate(groups)
            for j, s in enumerate(series)
        ]
    )


def test_paper_table2_and_table3_cells_are_the_printed_ones():
    c2 = PT.table2_cells(["ConvNet", "ViT-Tiny"], ["rand:convnet", "trained:priors/fmnist_supervised.pt"])
    assert c2[("ViT-Tiny", "Original (BYOL)")] == PT.value(
        PT.cell("v2_table2", {"Data": "CF-10", "Arch": "ViT T/16"}, "Original")
    )
    assert ("ViT-Tiny", "+ReLA Rand. (random Conv-3)") in c2
    assert not any(k[0] == "ConvNet" for k in c2)  # no paper row
    assert not any("strong" in k[1] for k in c2)  # its analogue (CLIP-RN50) is no Table 2 column
    c3 = PT.table3_cells(["SimCLR"], ["rand", "trained:priors/fmnist_supervised.pt"])
    assert c3[("SimCLR", "strong (supervised)")] == PT.value(
        PT.cell("v2_table3", {"Data": "CF-10", "Variant": "CLIP-RN50"}, "SimCLR")
    )
    assert set(c3) == {("SimCLR", "Original"), ("SimCLR", "Rand."), ("SimCLR", "strong (supervised)")}


def test_grouped_bars_start_at_zero_with_seed_error_bars_and_paper_ticks():
    groups, series = ["A", "B"], ["x", "y"]
    fig = rela_plots.grouped_bars(
        _stats(groups, series), "g", "s", groups, series, paper={("A", "x"): 50.0}, paper_label="paper (CIFAR-10)"
    )
    ax = fig.axes[0]
    assert ax.get_ylim()[0] == 0
    assert len(ax.patches) == 4 and all(p.get_y() == 0 for p in ax.patches)
    bars = [c for c in ax.containers if isinstance(c, matplotlib.container.BarContainer)]
    assert len(bars) == 2 and all(c.errorbar is not None for c in bars)
    ticks = [
        c
        for c in ax.collections
        if isinstance(c, matplotlib.collections.LineCollection) and np.allclose(c.get_segments()[0][:, 1], 50.0)
    ]
    assert len(ticks) == 1
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "paper (CIFAR-10)" in texts and any("±1 std over seeds" in t for t in texts)
    assert all(t.get_fontsize() >= 10 for t in ax.get_legend().get_texts())
    one = rela_plots.grouped_bars(_stats(groups, series, n=1), "g", "s", groups, series).axes[0]
    assert all(c.errorbar is None for c in one.containers if isinstance(c, matplotlib.container.BarContainer))
    assert one.get_ylim()[0] == 0


def _trace():
    rows = []
    for arm in ("Rand.: switch (camera-ready)", "Rand.: v1 continuous", "strong: switch (camera-ready)"):
        for step in range(1, 6):
            rows.append(
                {
                    "arm": arm,
                    "step": step,
                    "lam": 1.0,
                    "rela_loss": 1.0 / step,
                    "ssl_loss": np.nan if "switch" in arm else 2.0 / step,
                    "rho": 0.5 if "switch" in arm else np.nan,
                }
            )
    return pd.DataFrame(rows)


def test_training_dynamics_has_one_legible_legend_of_schedules_and_priors():
    fig = rela_plots.training_dynamics(_trace(), {"Rand.: switch (camera-ready)": 3})
    assert all(ax.get_legend() is None for ax in fig.axes)
    (leg,) = fig.legends
    texts = [t.get_text() for t in leg.get_texts()]
    assert {"switch (camera-ready)", "v1 continuous", "prior: Rand.", "prior: strong"} <= set(texts)
    assert min(t.get_fontsize() for t in leg.get_texts()) >= 10


def test_learning_curves_legends_are_legible_and_below_the_axes():
    curves = pd.DataFrame(
        [
            {"arm": a, "epoch": e, "seed": s, "knn": 0.6 + 0.01 * e}
            for a in ("BYOL", "BYOL + ReLA (rand)")
            for e in (0, 1)
            for s in (0, 1)
        ]
    )
    steps = _trace().assign(arm="BYOL + ReLA (rand)", seed=0)
    results = pd.DataFrame(
        [
            {"arm": a, "seed": s, "kNN": 0.6, "switch step": 3 if "ReLA" in a else np.nan}
            for a in ("untrained", "BYOL", "BYOL + ReLA (rand)")
            for s in (0, 1)
        ]
    )
    fig = rela_plots.learning_curves(curves, steps, results, ["BYOL", "BYOL + ReLA (rand)"], [0, 1], budget=0.1)
    for ax in fig.axes[:2]:
        leg = ax.get_legend()
        assert leg is not None and min(t.get_fontsize() for t in leg.get_texts()) >= 10
        assert leg.get_bbox_to_anchor().y0 < ax.get_window_extent().y0  # under the axes, off the curves


def _ablation_runs(labels, lambdas, fractions, seeds, *, v1=True, extra=()):
    """Records shaped as ``rela_ablations`` writes them: one row per arm and seed with its schedule's columns."""
    base = {"budget_mode": "dynamic", "transfer_trainable": True, "order": "code", "untrained": False, "w": 0.0}
    rows = [
        {**base, "arm": "untrained", "prior": None, "prior label": "", "schedule": "switch", "untrained": True},
        {**base, "arm": "BYOL", "prior": None, "prior label": "", "schedule": "switch"},
    ]
    for L in labels:
        arm = {**base, "prior": L.lower(), "prior label": L}
        rows += [
            {**arm, "arm": f"{L}: adaptive switch", "schedule": "switch_scaled"},
            {**arm, "arm": f"{L}: switch, static subset", "schedule": "switch_scaled", "budget_mode": "static"},
        ]
        rows += [{**arm, "arm": f"{L}: v1 continuous", "schedule": "v1"}] if v1 else []
        rows += [{**arm, "arm": f"{L}: constant λ={lam:g}", "schedule": "constant", "w": lam} for lam in lambdas]
        rows += [
            {**arm, "arm": f"{L}: first {w:.0%} ReLA", "schedule": "first", "w": w} for w in fractions if 0 < w < 1
        ]
        rows += [{**arm, "arm": f"{L}: {name}", "schedule": sched} for name, sched in extra]
    return pd.DataFrame(
        [{**r, "seed": s, "probe": 0.7 + 0.01 * s + 0.001 * i} for s in seeds for i, r in enumerate(rows)]
    )


def _legend_texts(fig):
    return [t.get_text() for ax in fig.axes for t in ax.get_legend().get_texts()]


def test_ablation_panels_bars_from_zero_and_legends_under_the_panels():
    labels, lambdas, fractions, seeds = ["Rand.", "strong"], [0.5, 1.0], [0.0, 0.5, 1.0], [0, 1]
    runs = _ablation_runs(labels, lambdas, fractions, seeds)
    fig = rela_plots.ablation_panels(runs, budget=0.1)
    assert fig.axes[0].get_ylim()[0] == 0 and "±1 std of 2 seeds" in fig.axes[0].get_title()
    for ax in fig.axes:
        assert min(t.get_fontsize() for t in ax.get_legend().get_texts()) >= 10
    const = fig.axes[1].get_lines()[0]  # λ on x, the first seed's probes on y
    assert list(const.get_xdata()) == lambdas and "seed 0" in fig.axes[1].get_title()
    first_w = [ln for ln in fig.axes[2].get_lines() if len(ln.get_xdata()) > 1][0]
    assert list(first_w.get_xdata()) == [0.0, 50.0, 100.0]  # w = 0 is BYOL, w = 1 constant λ = 1
    lean = _ablation_runs(labels, lambdas, fractions, seeds, v1=False)  # descriptive arms left out: no v1 line
    texts = [t.get_text() for t in rela_plots.ablation_panels(lean, budget=0.1).axes[1].get_legend().get_texts()]
    assert not any("v1" in t for t in texts) and sum("constant λ" in t for t in texts) == 2


def test_ablation_panels_draw_every_arm_of_the_records_an_added_one_included():
    labels = ["Rand.", "strong"]
    runs = _ablation_runs(labels, [0.2, 1.0], [0.0, 0.2, 0.6, 1.0], [0], extra=[("cosine λ", "cosine")])
    roles = rela_plots.ablation_roles(runs)
    assert dict(zip(runs["arm"], roles))["strong: cosine λ"] == "other"
    assert dict(zip(runs["arm"], roles))["Rand.: switch, static subset"] == "static"
    texts = _legend_texts(rela_plots.ablation_panels(runs, budget=0.1))
    assert "Rand.: cosine λ" in texts and "strong: cosine λ" in texts  # an arm no list names is still drawn
    assert "Rand.: v1 continuous" in texts
    frozen = runs.assign(transfer_trainable=runs["arm"] != "strong: adaptive switch")  # not the code's defaults
    with pytest.raises(ValueError, match="'strong'"):  # no switch with the code's defaults left for that prior
        rela_plots.ablation_panels(frozen, budget=0.1)


class _Run:
    """The two read-outs :func:`compendium.distill.plots.probe_bars` needs."""

    def mean(self, name, target=None):
        return {"SSDD": 0.6, "untrained": 0.5}[name] + (0.05 if target == "b" else 0.0)

    def sd(self, name, target=None):
        return 0.02


def test_probe_bars_start_at_zero_and_tick_the_paper_in_its_panel():
    fig = distill_plots.probe_bars(
        _Run(),
        ["SSDD", "untrained"],
        ["a", "b"],
        budget_n=10,
        paper={"SSDD": 52.4},
        paper_target="a",
        paper_label="paper (CIFAR-100)",
    )
    a, b = fig.axes[:2]
    assert a.get_xlim()[0] == 0 and b.get_xlim()[0] == 0
    assert all(p.get_x() == 0 for p in a.patches)
    ticks = [
        c
        for c in a.collections
        if isinstance(c, matplotlib.collections.LineCollection) and np.allclose(c.get_segments()[0][:, 0], 52.4)
    ]
    assert len(ticks) == 1 and not any(
        isinstance(c, matplotlib.collections.LineCollection) and np.allclose(c.get_segments()[0][:, 0], 52.4)
        for c in b.collections
    )
    assert "paper (CIFAR-100)" in [t.get_text() for t in fig.legends[0].get_texts()]


def test_ssdd_paper_convnet_column_is_table1s_first():
    p = ssdd_checks.paper_t1_convnet()
    assert p["SSDD"] == float(ssdd_checks.PAPER_T1["SSDD"].split(" / ")[0]) and set(p) == set(ssdd_checks.PAPER_T1)
