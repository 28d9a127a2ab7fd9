"""compendium.distill.ssdd.experiments (the ssdd stages' orchestration) and the TargetSet file format."""

import math

import pandas as pd
import pytest
import torch

from compendium.core import models, paths
from compendium.distill import ssdd
from compendium.distill.sets import load_tensors, save_tensors
from compendium.distill.ssdd import experiments


def _set(name, method="ssdd", n=4, floats=100, losses=(0.5, 0.25), **extra):
    params = {"teacher": "barlow_twins", "n": 10, "budget": 120, "u": 3, "augmentation": "rotation", "steps": 5}
    return ssdd.TargetSet(
        torch.randn(n, 1, 8, 8),
        torch.randn(n, 3),
        method,
        floats,
        params,
        0,
        0.5,
        2.0,
        {"name": name, "m": n, "losses": list(losses), **extra},
    )


# --- the set format -----------------------------------------------------------------------------------


def test_target_set_round_trip_through_the_one_set_format(tmp_path):
    ts = _set(
        "SSDD",
        approx="q",
        hidden=4,
        approx_mse=float("nan"),
        bx=torch.randn(3, 16),
        by=torch.randn(2, 3),
        pool_initial_steps=7,
    )
    ts.extra["m"] = 4  # a key set twice keeps its first position
    p = ts.save(tmp_path / "ssdd.pt")
    tensors, meta = load_tensors(p, "targets")  # the sets module's format, kind "targets"
    assert set(tensors) == {"images", "targets", "extra.bx", "extra.by"} and meta["method"] == "ssdd"
    back = ssdd.TargetSet.load(p)
    assert torch.equal(back.images, ts.images) and torch.equal(back.targets, ts.targets)
    assert list(back.extra) == list(ts.extra) and torch.equal(back.extra["bx"], ts.extra["bx"])
    assert back.extra["losses"] == [0.5, 0.25] and math.isnan(back.extra["approx_mse"])
    assert (back.method, back.floats, back.params, back.seed) == (ts.method, ts.floats, ts.params, ts.seed)
    assert math.isnan(back.synthesis_seconds) and back.peak_memory_mb == 0.0  # timings stay out of the file


def test_target_set_load_rejects_a_set_of_another_kind(tmp_path):
    save_tensors(tmp_path / "x.pt", "labelled", {"images": torch.zeros(1, 1, 2, 2)}, {})
    with pytest.raises(ssdd.SSDDError, match="not a readable target set"):
        ssdd.TargetSet.load(tmp_path / "x.pt")


# --- ssdd_teacher ---------------------------------------------------------------------------------


def test_pooled_averages_the_feature_map_over_positions():
    torch.manual_seed(0)
    net = models.build(
        "convnet", in_channels=1, image_size=28, width=8, depth=3, norm="batch", global_pool=False
    ).eval()
    x = torch.randn(3, 1, 28, 28)
    f = ssdd.pooled(net)(x)
    assert f.shape == (3, 8)
    assert torch.allclose(f, net.body(x).mean((2, 3)), atol=1e-6)


# --- ssdd_distill ---------------------------------------------------------------------------------


def _plan(**kw):
    base = dict(
        budget_n=10,
        budgets=[5, 10],
        basis_mult=2,
        s=2,
        augmentation="rotation",
        hidden=4,
        approx_variants=[("same", 0), ("q", 8)],
        approx_steps=200,
        ablation_augmentations=["jigsaw"],
        ablation_inits=["random"],
        free_teachers=["rand"],
        steps=5,
        lr=1e-3,
        krrst_lr=1e-4,
        seed=3,
        d_img=784,
        d_xb=196,
        dims={"barlow_twins": 500, "rand": 15},
    )
    return experiments.DistillPlan(**{**base, **kw})


def test_job_fills_the_budget_caps_the_bases_and_picks_each_methods_lr():
    plan = _plan()
    j = experiments.job(plan, "SSDD", "ssdd", 10)
    assert j["budget"] == 7840 and j["u"] == j["v"] == 20 and j["lr"] == 1e-3 and j["seed"] == 3
    assert j["approx"] == [["q", 4]] and j["init"] == "pca" and j["count_targets"] is False
    assert experiments.job(plan, "x", "ssdd", 10, teacher="rand")["u"] == 15  # capped by d_y
    assert experiments.job(plan, "x", "ssdd", 100)["u"] == 196  # capped by the image basis dimension
    k = experiments.job(plan, "KRR-ST", "krr_st", 5, count_targets=True)
    assert k["lr"] == 1e-4 and k["budget"] == 3920 and k["count_targets"] is True


def test_distill_jobs_make_every_table_set_once():
    jobs = experiments.distill_jobs(_plan())
    names = [j["name"] for j in jobs]
    assert len(names) == len(set(names)) == 16
    assert names[:2] == ["SSDD", "KRR-ST"] and "SSDD T=0 (PCA projection)" in names and "SSDD jigsaw" in names
    assert {"SSDD N=5", "KRR-ST N=5", "Random N=5", "SSDD teacher=rand", "Random teacher=rand"} <= set(names)
    assert jobs[0]["approx"] == [["q", 4], ["same", 0], ["q", 8]]
    t0 = jobs[names.index("SSDD T=0 (PCA projection)")]
    assert t0["steps"] == 0 and t0["approx"] == [["q", 4], ["same", 0]]
    assert jobs[names.index("SSDD no augmentation")]["augmentation"] == "none"
    assert jobs[names.index("SSDD init random")]["init"] == "random"
    assert jobs[names.index("KRR-ST teacher=rand")]["teacher"] == "rand"


def test_set_file_names():
    assert experiments.set_file("SSDD T=0 (PCA projection) / same") == "ssdd_t_0__pca_projection____same.pt"
    assert experiments.set_file("KRR-ST N=5") == "krr_st_n_5.pt"


def test_missing_teachers():
    assert experiments.missing_teachers(["rand", "x"], {"targets": {"barlow_twins": 0, "rand": 0}}) == ["x"]


def test_sets_table_and_metrics(tmp_path):
    made = [
        _set("SSDD", floats=100, approx="q", hidden=4, approx_mse=0.01),
        _set("SSDD / ideal", floats=500, approx="ideal", hidden=0, approx_mse=0.0),
        _set("Random", method="random", floats=120, losses=()),
    ]
    df = experiments.sets_table(made)
    assert list(df["set"]) == ["SSDD", "SSDD / ideal", "Random"]
    assert list(df["within budget"]) == [True, False, True] and list(df["approx"]) == ["q4", "ideal", ""]
    assert df["outer loss first→last"].iloc[0] == "0.3750 → 0.3750" and df["outer loss first→last"].iloc[2] == ""
    assert df["U=V"].iloc[2] == "" and df["augmentation"].iloc[2] == "none" and math.isnan(df["approx MSE"].iloc[2])
    m = experiments.sets_metrics(df)
    assert m["all_within_budget"] is True  # ideal stores every C^y_a and is exempt
    assert m["sets"]["Random"] == {"m": 4, "floats": 120, "synthesis_seconds": 0.5, "peak_mb": 2.0}
    experiments.save_sets(made, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["random.pt", "ssdd.pt", "ssdd___ideal.pt"]


def test_loss_curves_one_row_per_set_and_step_and_none_for_sets_without_a_loop():
    made = [_set("SSDD"), _set("Random", method="random", losses=())]
    curves = experiments.loss_curves(made)
    assert list(curves.columns) == ["set", "step", "loss"]
    assert set(curves["set"]) == {"SSDD"} and list(curves["step"]) == list(range(1, len(made[0].extra["losses"]) + 1))
    assert experiments.loss_curves([made[1]]).empty


# --- ssdd_eval ------------------------------------------------------------------------------------


def test_load_sets_by_name_and_missing_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "find_artifact", lambda rel: tmp_path / rel)
    experiments.save_sets([_set("SSDD"), _set("Random", method="random")], tmp_path / experiments.SETS_DIR)
    sets = experiments.load_sets(["SSDD"])
    assert sorted(sets) == ["Random", "SSDD"]
    with pytest.raises(ssdd.SSDDError, match="no set 'DSA'"):
        experiments.load_sets(["DSA"])
    with pytest.raises(ssdd.SSDDError, match="no set 'KMeans'"):
        experiments.load_sets(["KMeans"])


def test_student_kwargs_pool_the_convnet():
    arch = experiments.student_kwargs(["convnet", "vgg11"], width=16, width_mult=0.0625)
    assert list(arch) == ["convnet", "vgg11"] and arch["convnet"]["global_pool"] is True
    assert all(a["in_channels"] == 1 and a["image_size"] == 28 for a in arch.values())


def test_eval_jobs_order_seeds_and_full_data_epochs():
    sets = {
        n: _set(n) for n in ("Random", "SSDD", "SSDD / same", "KRR-ST N=5", "Full data (regression to the teacher)")
    }
    arch = {"convnet": {}, "vgg11": {}}
    pre = ssdd.PretrainConfig(epochs=10)
    jobs = experiments.eval_jobs(sets, arch, pre, ssdd.ProbeSpec(), [0, 1], [0], [5], ["Random", "SSDD"], 2)
    keys = [(k["set"], k["arch"], k["seed"]) for k, _ in jobs]
    assert keys == [
        ("Random", "convnet", 0),
        ("Random", "convnet", 1),
        ("SSDD", "convnet", 0),
        ("SSDD", "convnet", 1),
        ("untrained", "convnet", 0),
        ("untrained", "convnet", 1),
        ("Full data (regression to the teacher)", "convnet", 0),
        ("Full data (regression to the teacher)", "convnet", 1),
        ("KRR-ST N=5", "convnet", 0),
        ("SSDD / same", "convnet", 0),
        ("Random", "vgg11", 5),
        ("SSDD", "vgg11", 5),
        ("untrained", "vgg11", 5),
    ]
    untrained, full = jobs[4][1], jobs[6][1]
    assert untrained[0] is None and untrained[1] is None and untrained[-1] == 0
    assert full[4].epochs == 2 and jobs[0][1][4] is pre and jobs[0][1][0] is sets["Random"].images


def test_results_table_one_row_per_job():
    jobs = [({"set": "A", "arch": "convnet", "seed": 0}, ()), ({"set": "B", "arch": "convnet", "seed": 1}, ())]
    results = [
        {"acc": {"fashion-mnist": 0.5, "digits": 0.7}, "final_loss": 0.1, "seconds": 1.0},
        {"acc": {"fashion-mnist": 0.6, "digits": 0.8}, "final_loss": float("nan"), "seconds": 2.0},
    ]
    df = experiments.results_table(jobs, results)
    assert list(df.columns) == ["set", "arch", "seed", "acc fashion-mnist", "acc digits", "final loss", "seconds"]
    assert df["acc digits"].tolist() == [0.7, 0.8] and df["seed"].tolist() == [0, 1]


def test_converse_runs_each_arm_then_the_ssl_phase(monkeypatch):
    calls = []
    monkeypatch.setattr(ssdd, "probe", lambda bb, spec, seed: {"fashion-mnist": 0.1 * len(calls), "digits": 0.0})
    sets = {"SSDD": _set("SSDD", n=4), "Random": _set("Random", n=4)}
    pre = ssdd.PretrainConfig(epochs=1, batch_size=4)
    kw = dict(in_channels=1, image_size=8, width=4, depth=2, norm="batch", global_pool=True)
    rows = experiments.converse(sets, kw, pre, ssdd.ProbeSpec(), [7], lambda bb, sd: calls.append(sd))
    assert calls == [7, 7, 7] and [r["seed"] for r in rows] == [7, 7, 7]
    assert [r["arm"] for r in rows][0] == "BYOL from scratch" and rows[1]["arm"].startswith(
        "early phase on the SSDD set"
    )
    assert rows[0]["after the early phase"] == 0.0 and rows[0]["fashion-mnist"] == pytest.approx(0.1)
    assert isinstance(pd.DataFrame(rows), pd.DataFrame)
