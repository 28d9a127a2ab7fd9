"""The ReLA stages' library side: the targets index, the smoke stage's helpers, the arms and tables of
the comparison stages (compendium.rela.smoke, compendium.rela.tables, compendium.pipeline.paper_tables_rela)
and D's subset (compendium.core.data.subset_indices)."""

import json

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import torch

from compendium.core import data
from compendium.pipeline import paper_tables as PT
from compendium.pipeline import paper_tables_rela as PTR
from compendium.rela import experiment, replicates, smoke, tables, targets

matplotlib.use("Agg")

KW = dict(width=4, depth=2, norm="batch", global_pool=True)


def tiny_setup(n=96, size=12, **kw):
    g = torch.Generator().manual_seed(0)
    images = torch.randint(0, 256, (n, 1, size, size), generator=g, dtype=torch.uint8)
    labels = torch.arange(n) % 4
    settings = dict(epochs=1, batch_size=32, head_mult=0.1, probe_epochs=2, num_classes=4, device="cpu")
    settings.update(kw)
    return experiment.Setup(images, labels, images[:32], labels[:32], (0.5,), (0.25,), **settings)


# --- the targets index ---------------------------------------------------------------------------


def test_index_round_trip_and_version(tmp_path):
    entry = {"prior": "rand", "file": "r.pt", "n": 4}
    path = targets.write_index(
        tmp_path / "t" / "index.json", dataset="digits", mean=(0.5,), std=(0.2,), indices=range(3), targets=[entry]
    )
    index = targets.read_index(path)
    assert index == {
        "version": targets.INDEX_VERSION,
        "dataset": "digits",
        "mean": [0.5],
        "std": [0.2],
        "indices": [0, 1, 2],
        "targets": [entry],
    }


@pytest.mark.parametrize(
    "body, match",
    [
        ({"dataset": "x", "indices": [], "targets": []}, "has no version"),
        ({"version": 99, "dataset": "x", "indices": [], "targets": []}, "has version 99"),
        ({"version": targets.INDEX_VERSION, "indices": []}, "lacks"),
    ],
)
def test_an_index_of_another_format_names_the_file_and_the_fix(tmp_path, body, match):
    path = tmp_path / "index.json"
    path.write_text(json.dumps(body))
    with pytest.raises(ValueError, match=match) as err:
        targets.read_index(path)
    assert str(path) in str(err.value) and "dvc repro priors" in str(err.value)
    with pytest.raises(FileNotFoundError, match="dvc repro priors"):
        targets.read_index(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="dvc repro priors"):
        targets.TargetBank(tiny_setup(), path)


def test_subset_indices_are_sorted_seeded_and_bounded():
    a = data.subset_indices(100, 10, 3)
    assert torch.equal(a, torch.randperm(100, generator=torch.Generator().manual_seed(3))[:10].sort().values)
    assert a.tolist() == sorted(set(a.tolist())) and not torch.equal(a, data.subset_indices(100, 10, 4))
    with pytest.raises(ValueError, match="at most 100"):
        data.subset_indices(100, 101, 0)


# --- the smoke stage -----------------------------------------------------------------------------


def test_smoke_labels_and_arms():
    assert smoke.label("rand") == "rand" and smoke.label("trained:priors/fmnist_supervised.pt") == "fmnist_supervised"
    arms = smoke.smoke_arms("byol", ["rand", "trained:priors/p.pt"], "switch", 0.5)
    assert [a["name"] for a in arms] == [
        "untrained",
        "BYOL",
        "BYOL + ReLA (rand)",
        "BYOL + ReLA (p)",
        "BYOL + ReLA (p), ReLA for the first 0.5 of epochs",
    ]
    assert arms[-1]["schedule"] == "epochs" and arms[2]["schedule"] == "switch"
    assert len(smoke.smoke_arms("simclr", ["rand"], "v1", 0.0)) == 3


def test_smoke_index_targets_checks_prior_and_student(tmp_path):
    student = {"in_channels": 1, "image_size": 28, **KW}
    torch.save({"values": torch.ones(3, 2)}, tmp_path / "t.pt")
    targets.write_index(
        tmp_path / "index.json",
        dataset="fashion-mnist",
        mean=(0.5,),
        std=(0.2,),
        indices=range(3),
        targets=[{"prior": "rand", "file": "t.pt", "student": student}],
    )
    index, found = smoke.index_targets(tmp_path / "index.json", ["rand"], student)
    assert index["indices"] == [0, 1, 2] and torch.equal(found["rand"], torch.ones(3, 2))
    with pytest.raises(ValueError, match="no targets for prior"):
        smoke.index_targets(tmp_path / "index.json", ["trained:x.pt"], student)
    with pytest.raises(ValueError, match="architecture keys agree"):
        smoke.index_targets(tmp_path / "index.json", ["rand"], {**student, "width": 8})


def test_run_smoke_trains_monitors_and_tabulates():
    g = torch.Generator().manual_seed(0)
    images = torch.randint(0, 256, (64, 1, 28, 28), generator=g, dtype=torch.uint8)
    labels = torch.arange(64) % 10
    monitor = smoke.Monitor.draw(
        images,
        labels,
        images[:20],
        labels[:20],
        30,
        10,
        mean=(0.5,),
        std=(0.25,),
        device="cpu",
        probe_epochs=2,
        probe_lr=0.01,
        probe_batch_size=32,
        probe_standardize=True,
    )
    assert len(monitor.knn_tr) == 30 and len(monitor.knn_te) == 10
    student_kwargs = {"in_channels": 1, "image_size": 28, **KW}
    arms = smoke.smoke_arms("byol", ["rand"], "switch", 0.5)
    tv = {"rand": torch.randn(64, smoke.student(0, student_kwargs).feature_dim)}
    results, curves, steps = smoke.run_smoke(
        arms,
        [0],
        monitor,
        tv,
        student_kwargs=student_kwargs,
        method="byol",
        head_mult=0.1,
        transfer_trainable=True,
        rela_code_extras=True,
        fraction_arm=0.5,
        epochs=2,
        batch_size=16,
        lr=1e-3,
        weight_decay=0.01,
        budget=0.5,
        device="cpu",
        compile=False,
        knn_every=1,
    )
    assert list(results["arm"]) == [a["name"] for a in arms]
    assert list(results["steps"]) == [0, 4, 4, 4] and results["switch step"].iloc[-1] == 2
    assert set(curves["epoch"]) == {0, 1, 2} and len(curves) == 3 * 3
    assert set(steps["arm"]) == {a["name"] for a in arms[1:]}
    table = smoke.probe_table(results, [a["name"] for a in arms], [0])
    r = results.iloc[1]
    assert table["honest: mean over seeds"].iloc[1] == pytest.approx(100 * r["probe final"])
    assert table["paper statistic: last-3 mean (seed 0)"].iloc[1] == pytest.approx(100 * r["probe last-3 mean"])
    assert table["± std over seeds"].iloc[1] == 0 and table["seeds"].iloc[1] == 1


# --- the comparison stages' arms and tables ------------------------------------------------------


def test_budget_arms_run_the_headline_cells_on_every_seed():
    s = tiny_setup()
    arms = tables.budget_arms(
        s,
        KW,
        seeds=[0, 1],
        full_seeds=1,
        budgets=[0.1, 0.5],
        priors=["rand", "p"],
        headline_budget=0.1,
        same_dataset_prior="p",
        schedule="switch",
        label=str.upper,
    )
    seed0 = [a.name for a in arms if a.seed == 0]
    seed1 = [a.name for a in arms if a.seed == 1]
    assert seed0 == [
        "untrained",
        "BYOL 100%",
        "BYOL 10%",
        "ReLA RAND 10%",
        "ReLA P 10%",
        "BYOL 50%",
        "ReLA RAND 50%",
        "ReLA P 50%",
    ]
    assert seed1 == ["untrained", "BYOL 10%", "ReLA P 10%"]
    assert not any(a.reuse for a in arms)


def test_budget_arms_with_per_seed_priors_never_read_the_students_own_reference_and_pair_each_arm_with_its_prior_alone():
    s = tiny_setup()
    p = "trained:priors/fmnist_byol.pt"
    arms = tables.budget_arms(
        s,
        KW,
        seeds=[0, 1, 2],
        full_seeds=1,
        budgets=[0.1],
        priors=["rand", p],
        headline_budget=0.1,
        same_dataset_prior=p,
        schedule="switch_scaled",
        label=lambda x: x[-7:],
        per_seed_priors=True,
        prior_only=True,
        variant_schedule="switch",
    )
    rela = [a for a in arms if a.name.startswith("ReLA") and a.prior != "rand"]
    assert [(a.seed, a.prior) for a in rela if not tables.is_variant_name(a.name)] == [
        (0, "trained:prior_replicates/fmnist_byol_seed1.pt"),
        (1, "trained:prior_replicates/fmnist_byol_seed2.pt"),
        (2, p),
    ]  # seed 0's prior is the priors stage's own run
    assert all(replicates.base_spec(a.prior) == p for a in rela)
    assert replicates.replicates_needed(["rand", p], [0, 1, 2]) == {p: [1, 2]}
    alone = {(a.seed, a.name): a for a in arms if a.name.startswith("prior only")}
    for a in arms:
        if a.name.startswith("ReLA") and not tables.is_variant_name(a.name):
            twin = alone[(a.seed, tables.prior_only_name(a.name))]
            assert (twin.prior, twin.budget, twin.schedule, twin.w) == (a.prior, a.budget, "constant", 1.0)
    assert len(alone) == len([a for a in arms if a.name.startswith("ReLA") and not tables.is_variant_name(a.name)])
    rand_arm = next(a for a in arms if a.name.startswith("ReLA") and a.prior == "rand")
    assert rand_arm.prior == "rand"  # Rand. is the student's own initialisation, as in the paper
    with pytest.raises(ValueError, match="two or more seeds"):
        tables.budget_arms(
            s,
            KW,
            seeds=[0],
            full_seeds=1,
            budgets=[0.1],
            priors=[p],
            headline_budget=0.1,
            same_dataset_prior=p,
            schedule="switch",
            label=str,
            per_seed_priors=True,
        )


def test_the_extra_cells_run_without_a_prior_only_arm():
    s = tiny_setup()
    arms = tables.budget_arms(
        s,
        KW,
        seeds=[0, 1],
        full_seeds=1,
        budgets=[0.1],
        priors=["rand", "p"],
        headline_budget=0.1,
        same_dataset_prior="p",
        schedule="switch",
        label=str,
        prior_only=True,
        extra_cells=[("p", 0.5)],
        grid_seeds=2,
    )
    names = {a.name for a in arms}
    assert "ReLA p 50%" in names and "prior only p 50%" not in names and "prior only p 10%" in names


def _split_runs():
    """Six seeds: BYOL at 10%, the prior alone 3 points above it, +ReLA 1 point above the prior alone (seeded noise)."""
    rng = np.random.default_rng(0)
    rows = []
    for s in range(6):
        e = rng.normal(0, 0.002, 3)
        rows += [
            {
                "arm": "BYOL 10%",
                "seed": s,
                "budget": 0.1,
                "prior": "",
                "untrained": False,
                "probe": 0.70 + e[0],
                "schedule": "switch_scaled",
                "w": 0.0,
                "steps": 100,
                "switch step": None,
            },
            {
                "arm": "prior only P 10%",
                "seed": s,
                "budget": 0.1,
                "prior": f"trained:prior_replicates/p_seed{s + 1}.pt",
                "untrained": False,
                "probe": 0.73 + e[1],
                "schedule": "constant",
                "w": 1.0,
                "steps": 100,
                "switch step": None,
            },
            {
                "arm": "ReLA P 10%",
                "seed": s,
                "budget": 0.1,
                "prior": f"trained:prior_replicates/p_seed{s + 1}.pt",
                "untrained": False,
                "probe": 0.74 + e[2],
                "schedule": "switch_scaled",
                "w": 0.0,
                "steps": 100,
                "switch step": 40,
            },
            {
                "arm": "ReLA P 10% [camera-ready switch]",
                "seed": s,
                "budget": 0.1,
                "prior": "trained:priors/p.pt",
                "untrained": False,
                "probe": 0.5,
                "schedule": "switch",
                "w": 0.0,
                "steps": 100,
                "switch step": None,
            },
        ]
    return pd.DataFrame(rows)


def test_prior_vs_ssl_separates_what_the_prior_gives_from_what_the_ssl_phase_adds():
    t = tables.prior_vs_ssl(_split_runs(), label=lambda p: "P" if p else "BYOL")
    assert len(t) == 1
    r = t.iloc[0]
    assert (r["prior"], r["budget"], r["seeds"]) == ("P", "10%", 6)
    assert r["prior alone − BYOL"] == pytest.approx(3.0, abs=0.3) and r["+ReLA − prior alone"] == pytest.approx(
        1.0, abs=0.3
    )
    lo, hi = (float(x) for x in r["+ReLA − prior alone, 95% interval"].strip("[]").split(","))
    assert 0 < lo < 1.0 < hi < 2.0  # the SSL phase adds a point, decided on 6 seeds
    assert r["SSL-phase share of +ReLA"] == pytest.approx(0.6)  # the variant arm (camera-ready switch) is left out


def test_table_runs_leave_out_variant_and_prior_only_arms_and_name_the_prior_a_replicate_stands_for():
    r = tables.table_runs(_split_runs())
    assert set(r["arm"]) == {"BYOL 10%", "ReLA P 10%"}
    assert set(r["prior"]) == {"", "trained:priors/p.pt"}


def test_the_ssl_phase_share_of_each_arm():
    runs = pd.DataFrame(
        [
            {"untrained": True, "prior": "", "schedule": "switch", "w": 0.0, "steps": 0, "switch step": None},
            {"untrained": False, "prior": "", "schedule": "switch", "w": 0.0, "steps": 100, "switch step": None},
            {"untrained": False, "prior": "p", "schedule": "switch_scaled", "w": 0.0, "steps": 100, "switch step": 24},
            {"untrained": False, "prior": "p", "schedule": "switch", "w": 0.0, "steps": 100, "switch step": None},
            {"untrained": False, "prior": "p", "schedule": "constant", "w": 1.0, "steps": 100, "switch step": None},
            {"untrained": False, "prior": "p", "schedule": "constant", "w": 0.2, "steps": 100, "switch step": None},
            {"untrained": False, "prior": "p", "schedule": "v1", "w": 0.0, "steps": 100, "switch step": None},
        ]
    )
    share = tables.ssl_share(runs)
    assert share.iloc[1:6].tolist() == pytest.approx([1.0, 0.76, 0.0, 0.0, 0.8])
    assert share.iloc[[0, 6]].isna().all()


def test_budget_arms_extra_cells_run_on_the_grid_seeds_outside_the_grid_only():
    s = tiny_setup()
    kw = dict(
        full_seeds=1,
        priors=["rand", "p"],
        headline_budget=0.1,
        same_dataset_prior="p",
        schedule="switch",
        label=str.upper,
        grid_seeds=2,
    )
    arms = tables.budget_arms(s, KW, seeds=[0, 1, 2], budgets=[0.1], extra_cells=[("rand", 0.5)], **kw)
    extra = [(a.seed, a.prior, a.budget, a.schedule) for a in arms if a.name == "ReLA RAND 50%"]
    assert extra == [(0, "rand", 0.5, "switch"), (1, "rand", 0.5, "switch")]
    inside = tables.budget_arms(s, KW, seeds=[0], budgets=[0.1, 0.5], extra_cells=[("rand", 0.5)], **kw)
    assert [a.name for a in inside].count("ReLA RAND 50%") == 1  # already a grid cell: not run twice


def test_budget_arms_grid_seeds_and_the_switch_variant():
    s = tiny_setup()
    arms = tables.budget_arms(
        s,
        KW,
        seeds=[0, 1, 2],
        full_seeds=3,
        budgets=[0.1, 0.2],
        priors=["rand", "p"],
        headline_budget=0.1,
        same_dataset_prior="p",
        schedule="switch_scaled",
        label=str.upper,
        grid_seeds=2,
        variant_schedule="switch",
    )
    by_seed = {k: [a.name for a in arms if a.seed == k] for k in (0, 1, 2)}
    variant = tables.variant_name("ReLA P 10%", "switch")
    assert by_seed[1] == [
        "untrained",
        "BYOL 100%",
        "BYOL 10%",
        "ReLA RAND 10%",
        "ReLA P 10%",
        "BYOL 20%",
        "ReLA RAND 20%",
        "ReLA P 20%",
        variant,
    ]
    assert by_seed[2] == ["untrained", "BYOL 100%", "BYOL 10%", "ReLA P 10%", variant]
    sched = {a.name: a.schedule for a in arms if a.seed == 0 and a.prior}
    assert set(sched.values()) == {"switch_scaled", "switch"} and sched[variant] == "switch"
    names = pd.Series([a.name for a in arms])
    assert list(names[tables.is_variant(names)]) == [variant] * 3
    runs = pd.DataFrame(
        [
            {
                "arm": a.name,
                "prior": a.prior,
                "budget": a.budget,
                "seed": a.seed,
                "schedule": a.schedule,
                "untrained": a.untrained,
                "steps": 460,
                "probe": 0.7 if a.schedule == "switch" else 0.74,
                "switch step": None if a.schedule == "switch" else 400,
            }
            for a in arms
            if a.prior == "p" and a.budget == 0.1
        ]
    )
    v = tables.switch_variants(runs).set_index("schedule")
    assert v.loc["camera-ready switch", "switch fired"] == "0 of 3"
    assert v.loc["camera-ready switch", "SSL-phase steps (mean)"] == 0
    assert v.loc["switch, EMAs scaled to the run", "switch fired"] == "3 of 3"
    assert v.loc["switch, EMAs scaled to the run", "SSL-phase steps (mean)"] == 60


def _in_order(wanted: list, names: list) -> bool:
    """Every name of ``wanted`` is in ``names``, in that order (other names may sit between them)."""
    it = iter(names)
    return all(any(n == w for n in it) for w in wanted)


def test_ablation_arms_run_every_setting_on_the_schedule_seeds():
    arms = tables.ablation_arms(
        KW,
        seeds=[0, 1, 2],
        priors=["rand"],
        budget=0.1,
        lambdas=[0.2],
        fractions=[0, 0.5, 1],
        label=lambda p: "R",
        schedule="switch_scaled",
        schedule_seeds=2,
    )
    n = {k: [a.name for a in arms if a.seed == k] for k in (0, 1, 2)}
    reference = ["untrained", "BYOL", "R: adaptive switch", "R: switch, static subset"]
    settings = ["R: v1 continuous", "R: constant λ=0.2", "R: first 50% ReLA"]
    # the plan's arms in their order (an arm added later may sit between them: the figures take arms from the records)
    assert _in_order(reference + settings, n[1]) and _in_order(reference, n[2]) and not set(settings) & set(n[2])
    assert _in_order(reference + settings + ["R: switch, W and b frozen", "R: switch, paper target order"], n[0])
    assert {a.schedule for a in arms if "switch" in a.name} == {"switch_scaled"}


def test_ablation_arms_repeat_the_reference_arms_on_later_seeds():
    arms = tables.ablation_arms(
        KW, seeds=[0, 1], priors=["rand"], budget=0.1, lambdas=[0.2, 1.0], fractions=[0, 0.5, 1], label=lambda p: "R"
    )
    names = [a.name for a in arms if a.seed == 0]
    assert _in_order(
        [
            "untrained",
            "BYOL",
            "R: adaptive switch",
            "R: switch, static subset",
            "R: v1 continuous",
            "R: constant λ=0.2",
            "R: constant λ=1",
            "R: first 50% ReLA",
            "R: switch, W and b frozen",
            "R: switch, paper target order",
        ],
        names,
    )
    assert [a.name for a in arms if a.seed == 1] == names[:4]
    by = {a.name: a for a in arms if a.seed == 0}
    assert by["R: switch, static subset"].budget_mode == "static" and by["R: first 50% ReLA"].w == 0.5
    assert (
        not by["R: switch, W and b frozen"].transfer_trainable and by["R: switch, paper target order"].order == "paper"
    )
    assert tables.dynamics_arms(["R"], [0, 0.5, 1]) == ["R: adaptive switch", "R: v1 continuous", "R: first 50% ReLA"]
    assert tables.dynamics_arms(["R"], [0, 1]) == ["R: adaptive switch", "R: v1 continuous"]


def test_ablation_arms_without_descriptive_arms_keep_every_arm_a_claim_reads():
    full = tables.ablation_arms(
        KW,
        seeds=[0, 1, 2],
        priors=["rand"],
        budget=0.1,
        lambdas=[0.2, 1.0],
        fractions=[0, 0.5, 1],
        label=lambda p: "R",
        schedule_seeds=3,
    )
    lean = tables.ablation_arms(
        KW,
        seeds=[0, 1, 2],
        priors=["rand"],
        budget=0.1,
        lambdas=[0.2, 1.0],
        fractions=[0, 0.5, 1],
        label=lambda p: "R",
        schedule_seeds=3,
        descriptive=False,
    )
    dropped = {(a.name, a.seed) for a in full} - {(a.name, a.seed) for a in lean}
    assert {n for n, _ in dropped} == {"R: v1 continuous", "R: switch, W and b frozen", "R: switch, paper target order"}
    assert len(dropped) == 3 + 2 and all(
        a.schedule != "v1" and a.transfer_trainable and a.order == "code" for a in lean
    )
    assert {(a.name, a.seed) for a in lean} < {(a.name, a.seed) for a in full}


def test_table1_marks_the_best_and_what_beats_the_full_budget():
    stats = pd.DataFrame(
        {
            "budget": [0.1, 0.1, 0.5, 0.5, 1.0],
            "column": ["BYOL", "A", "BYOL", "A", "BYOL"],
            "mean": [0.5, 0.6, 0.7, 0.9, 0.8],
            "std": [0.01, 0.0, 0.0, 0.0, 0.02],
            "count": [2, 1, 1, 1, 2],
        }
    )
    t = tables.table1(stats, [0.1, 0.5], ["BYOL", "A"])
    assert list(t.columns) == ["budget", "BYOL", "+ReLA A", "BYOL* (100%)"]
    assert t.iloc[0].tolist() == ["10%", "50.0 ± 1.0 (2 seeds)", "**60.0 (1 seed)**", "80.0 ± 2.0 (2 seeds)"]
    assert t.iloc[1].tolist() == ["50%", "70.0 (1 seed)", "**<u>90.0 (1 seed)</u>**", ""]


def test_similarity_matrices_and_frame():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 5, generator=g)
    feats = {"a": x, "b": 2 * x + 1, "c": torch.randn(200, 5, generator=g)}
    names, transport, cka = tables.similarity_matrices(feats, 100)
    assert names == ["a", "b", "c"] and transport.shape == (3, 3)
    assert cka[0, 1] == pytest.approx(1.0) and transport[0, 1] > 0.99 and transport[0, 2] < 0.5
    frame = tables.similarity_frame(names, transport, cka)
    assert len(frame) == 9 and frame.iloc[1]["linear CKA"] == cka[0, 1] and frame.iloc[3]["source"] == "b"
    fig = tables.similarity_figure(names, transport, cka)
    assert len(fig.axes) == 3


def test_transport_per_seed_and_prior_probes():
    s = tiny_setup()
    arms = [
        experiment.Arm("u", arch_kwargs=KW, budget=0.1, untrained=True),
        experiment.Arm("b", arch_kwargs=KW, budget=0.1, seed=1),
        experiment.Arm("o", arch_kwargs=KW, budget=0.5),
    ]
    results = [experiment.Result({"probe": 0.1 * i}, [], experiment.build_student(a, s)) for i, a in enumerate(arms)]
    src = torch.randn(32, 4, generator=torch.Generator().manual_seed(1))
    per_seed = tables.transport_per_seed(
        src, arms, results, s, s.test_images, 16, headline_budget=0.1, same_dataset_prior="p"
    )
    assert per_seed[["seed", "student", "probe"]].values.tolist() == [[1, "b", 0.1]]
    assert -1 <= per_seed["out"].iloc[0] <= 1 and -1 <= per_seed["in"].iloc[0] <= 1
    feats = tables.similarity_features(
        ["rand"], arms, results, s, s.test_images, seed=0, headline_budget=0.1, arch_kwargs=KW, label=str
    )
    assert list(feats) == ["prior: rand"]  # seed 1's student is not seed 0's
    q = tables.prior_probes(["rand"], s, KW, 0)
    assert len(q) == 1 and 0 <= q[0] <= 1


def test_cost_panel_switch_summary_and_metrics():
    cost = pd.DataFrame({"arm": ["BYOL", "+ReLA A"], "matching budget": [None, 0.2]})
    fig, ax = plt.subplots()
    tables.cost_panel(ax, cost, ["C0", "C1"], [0.1, 0.5])
    assert [t.get_text() for t in ax.texts] == ["not within\n50%", "20%"]
    plt.close(fig)
    runs = pd.DataFrame(
        {
            "prior": ["", "p", "p"],
            "switch step": [None, 5, None],
            "steps": [10, 12, 12],
            "train seconds": [1.0, 2.0, 3.0],
        }
    )
    assert tables.switch_summary(runs) == "the switch fired in 1 of 2 ReLA runs; steps per run: [12]"
    stats = pd.DataFrame({"budget": [0.1], "column": ["BYOL"], "mean": [0.5], "std": [0.1], "count": [2]})
    m = tables.budget_metrics(
        headline=0.9,
        per_seed=pd.DataFrame({"seed": [0]}),
        full=pd.Series({"mean": 0.8, "std": 0.0}),
        untrained=pd.Series({"mean": 0.3}),
        cost=cost,
        stats=stats,
        runs=runs,
    )
    assert m["matching_budget"] == {"BYOL": None, "+ReLA A": 0.2} and m["train_seconds_total"] == 6.0
    assert m["cells"] == {"BYOL 10%": {"mean": 0.5, "std": 0.1, "seeds": 2}} and m["gap_closure"] == 0.9


def test_paper_table1_cells_and_gap_closures():
    priors = ["rand", "trained:priors/fmnist_byol.pt", "trained:priors/unknown.pt"]
    t = PTR.paper_table1(priors, [0.1, 0.3])
    assert list(t.columns) == ["budget", "BYOL", "+ReLA Rand.", "+ReLA CF10-T", "+ReLA None", "BYOL*"]
    assert t["BYOL"].iloc[0] == PT.cell("v2_table1", {"Data": "CF-10", "%": "10"}, "BYOL") and t["BYOL"].iloc[1] == ""
    assert t["BYOL*"].iloc[1] == "" and t["+ReLA None"].iloc[0] == ""
    g = PTR.paper_gap_closures(priors, [0.1, 0.3])
    assert g[2] == pytest.approx(0.934, abs=1e-3) and np.isnan(g[3]) and np.isnan(g[4])
    curves, full = PTR.paper_budget_curves(["trained:priors/fmnist_byol.pt"])
    assert [c[:2] for c in curves] == [("BYOL", "BYOL"), ("same-dataset BYOL*", "CF10-T")]
    assert full == PT.value(PT.cell("v2_table1", {"Data": "CF-10", "%": "10"}, "BYOL*"))


def test_annotate_runs_names_the_file_read_and_the_prior_it_stands_for():
    runs = _split_runs()
    out = tables.annotate_runs(runs)
    assert list(out.columns[out.columns.get_loc("prior") :][:2]) == ["prior", "prior file"]
    rela = out[out["arm"] == "ReLA P 10%"]
    assert set(rela["prior"]) == {"trained:priors/p.pt"} and rela["prior file"].str.contains("prior_replicates").all()
    assert rela["SSL-phase share"].tolist() == pytest.approx([0.6] * 6)


def test_a_trained_priors_role_comes_from_the_priors_stage_parameters(monkeypatch):
    """Table 1's columns follow the roles the priors stage gives its priors (its dataset and cross_dataset at each
    scale), not file names written in the table module: a new cross dataset is labelled and placed without edits."""
    from compendium.pipeline import params

    assert PT.prior_label("trained:priors/fmnist_supervised.pt") == "strong (supervised)"
    assert PT.paper_column("trained:priors/digits_byol.pt") == "CF100-T"
    assert PT.paper_column("trained:priors/cifar10_byol.pt") == "CF10-T"  # the paper scale's
    raw = params.load()
    raw["priors"]["cross_dataset"] = "tiny-imagenet"
    monkeypatch.setattr(params, "load", lambda *a, **k: raw)
    PT.analogues.cache_clear()
    try:
        assert PT.prior_label("trained:priors/tinyimagenet_byol.pt") == "cross-dataset BYOL (Tiny-ImageNet)"
        assert PT.paper_column("trained:priors/tinyimagenet_byol.pt") == "CF100-T"
        assert PT.paper_column("trained:priors/digits_byol.pt") is None and PT.prior_label("x/other.pt") == "other"
    finally:
        PT.analogues.cache_clear()
