"""The unrolled stages' experiment modules (``distill.unrolled.*_experiment``), the set files of DD / SLDD and text
DD (``save`` / ``load`` through ``distill.sets``), and the family's figures: small synthetic inputs, no data files."""

import dataclasses
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from compendium.core import data  # noqa: E402
from compendium.distill import evaluate as E  # noqa: E402
from compendium.distill import protocol_sets, runner  # noqa: E402
from compendium.distill.sets import DistilledSet, SetError  # noqa: E402
from compendium.distill.unrolled import (  # noqa: E402  # noqa: E402
    dd,
    dd_experiment,
    figures,
    gtn_experiment,
    ld_experiment,
    mnemonics,
    mnemonics_experiment,
    nas,
    text_experiment,
    textdd,
    unroll,
)

# ------------------------------------------------------------------------------------------ set files


def _dd_result(soft=True):
    g = torch.Generator().manual_seed(0)
    targets = torch.softmax(torch.randn(4, 10, generator=g), 1) if soft else torch.tensor([0, 1, 2, 3])
    cfg = dict(size=4, steps=1, groups=((0, 2), (5, 7)), learn_labels=soft)
    return dd.DDResult(
        torch.randn(4, 1, 28, 28, generator=g),
        torch.tensor([0, 1, 2, 3]),
        targets,
        torch.tensor([0.1, 0.2]),
        [2.5, 2.25, float("nan")],
        cfg,
        1.5,
    )


def test_dd_result_round_trip_through_the_set_format(tmp_path):
    for soft in (True, False):
        r = _dd_result(soft)
        back = dd.DDResult.load(r.save(tmp_path / "sub" / f"s{soft}.pt"))
        for k in ("images", "labels", "targets", "lrs"):
            assert torch.equal(getattr(back, k), getattr(r, k))
        assert back.config == r.config and np.isnan(back.seconds)  # run time is not stored: reruns are byte-identical
        assert back.loss_trace[:2] == r.loss_trace[:2] and np.isnan(back.loss_trace[2])
    assert not list(tmp_path.glob("sub/*.tmp"))  # atomic write: no temporary left
    with pytest.raises(SetError, match="unrolled"):
        DistilledSet.load(tmp_path / "sub" / "sTrue.pt")  # another kind


def test_text_distilled_round_trip_through_the_set_format(tmp_path):
    g = torch.Generator().manual_seed(0)
    ds = textdd.TextDistilled(
        torch.randn(4, 5, 3, generator=g),
        torch.randn(4, 2, generator=g),
        torch.tensor([0.3, 0.2]),
        2,
        1,
        "textconvnet",
        {"filters": 4, "widths": (2, 3)},
        "fixed",
        7,
        True,
        "TDD",
        [1.0, 0.5],
        0.25,
    )
    back = textdd.TextDistilled.load(ds.save(tmp_path / "t.pt"))
    assert torch.equal(back.x, ds.x) and torch.equal(back.labels, ds.labels) and torch.equal(back.lrs, ds.lrs)
    assert {k: v for k, v in back.state().items() if k not in ("x", "labels", "lrs")} == {
        k: v for k, v in ds.state().items() if k not in ("x", "labels", "lrs")
    }
    with pytest.raises(SetError, match="text"):
        dd.DDResult.load(tmp_path / "t.pt")
    torch.save(ds.state(), tmp_path / "old.pt")  # the old pickled layout is refused, not unpickled
    with pytest.raises(SetError):
        textdd.TextDistilled.load(tmp_path / "old.pt")


# ------------------------------------------------------------------------------------------ DD experiment


def _splits(n=60, n_test=40):
    g = torch.Generator().manual_seed(1)
    X = torch.randint(0, 256, (n, 1, 28, 28), dtype=torch.uint8, generator=g)
    Y = torch.arange(n) % 10
    xt = torch.randn(n_test, 1, 28, 28, generator=g)
    return SimpleNamespace(
        X_u8=X,
        Y=Y,
        MEAN=(0.3,),
        STD=(0.35,),
        x_test=xt,
        te_y=torch.arange(n_test) % 10,
        x_val=xt[:20],
        y_val=torch.arange(20) % 10,
        dg=SimpleNamespace(images=X, labels=Y),
        tr=SimpleNamespace(classes=[f"class {i}" for i in range(10)]),
    )


def test_pretrain_pools_slices_the_pools_in_order():
    d = _splits()
    p = dd_experiment.pretrain_pools(
        d,
        arch="lenet",
        init="xavier",
        pool_size=2,
        pool_eval=1,
        pretrain_steps=1,
        poison_pool=1,
        ref_steps=1,
        workers=2,
    )  # tiny: runs here
    assert len(p.digit_pool) == 2 and len(p.digit_eval) == 1 and len(p.fm_pool) == 1 and len(p.fm_eval) == 1
    again = dd.pretrain_job(1001, d.X_u8, d.Y, d.MEAN, d.STD, 1, arch="lenet", init="xavier")
    assert all(torch.equal(again[k], p.digit_pool[1][k]) for k in again)
    ref = dd.pretrain_job(3000, d.X_u8, d.Y, d.MEAN, d.STD, 1, arch="lenet", init="xavier")
    assert all(torch.equal(ref[k], p.ref[k]) for k in ref)


def test_eval_thetas_and_distill_calls_name_every_run():
    pools = SimpleNamespace(digit_pool=["p0", "p1"], digit_eval=["e0"], fm_pool=["f0"])
    ev, theta, rand_eval = dd_experiment.eval_thetas_by_regime(
        pools, arch="lenet", init="xavier", seed=0, eval_inits=[101, 102], pool_eval=1
    )
    assert theta == {
        "fixed": ["own"],
        "random": [101, 102],
        "fixed_pretrained": ["own"],
        "random_pretrained": ["digits net 0"],
    }
    assert ev["fixed_pretrained"] == ["p0"] and ev["random"] is rand_eval and len(rand_eval) == 2
    assert torch.equal(
        ev["fixed"][0]["conv1.weight"] if "conv1.weight" in ev["fixed"][0] else next(iter(ev["fixed"][0].values())),
        next(iter(unroll.initial_params(dd.classifier(0, "lenet", None, "xavier")).values())),
    )
    kw = dict(
        seed=0,
        arch="lenet",
        init="xavier",
        size=20,
        steps=2,
        epochs=1,
        iterations=3,
        batch_real=8,
        lr_img=0.1,
        lr_label=0.1,
        lr_lr=0.1,
        init_lr=0.05,
        label_own=0.9,
        sl_sizes=[5, 10],
        sl_epochs=2,
        sl_iterations=2,
        similar_groups=[[0, 2]],
        poison_attacked=7,
        poison_target=5,
        poison_size=10,
        poison_iterations=1,
        poison_lr=0.01,
    )
    names, calls = dd_experiment.distill_calls(_splits(), pools, **kw)
    assert names == [
        "DD fixed",
        "DD random",
        "DD fixed_pretrained",
        "DD random_pretrained",
        "SLDD M=5 fixed",
        "SLDD M=10 fixed",
        "DD M=10 fixed",
        "SLDD M=5 random",
        "SLDD M=10 random",
        "DD M=10 random",
        "SLDD M=10 random shared",
        "poison",
    ]
    assert all(c[0] is dd.distill_job for c in calls)
    assert calls[2][2]["pool"] == ["p0", "p1"] and calls[0][2]["pool"] is None
    assert calls[10][1][1]["groups"] == ((0, 2),) and calls[10][1][1]["label_mode"] == "shared"
    assert calls[-1][2]["poison"] == (7, 5) and calls[-1][2]["pool"] == ["f0"] and calls[-1][1][1]["init_lr"] == 0.01
    # replicate distillations: DD fixed and every sizes run per extra seed, each fixed one at its own theta_0
    names2, calls2 = dd_experiment.distill_calls(
        _splits(), pools, **kw, fixed_seeds=[0, 1], plateau_every=5, min_iterations=10
    )
    assert (
        names2[:2] == ["DD fixed", "DD fixed seed 1"]
        and calls2[1][2]["fixed_seed"] == 1
        and calls2[1][1][1]["seed"] == 1
    )
    assert [n for n in names2 if n.endswith("seed 1")] == [
        "DD fixed seed 1",
        "SLDD M=5 fixed seed 1",
        "SLDD M=10 fixed seed 1",
        "DD M=10 fixed seed 1",
        "SLDD M=5 random seed 1",
        "SLDD M=10 random seed 1",
        "DD M=10 random seed 1",
    ]
    assert all(c[1][1]["plateau_every"] == 5 and c[1][1]["min_iterations"] == 10 for c in calls2)
    assert dd_experiment.replicate_seeds(dict.fromkeys(names2), "SLDD M=10 fixed", 0) == [0, 1]
    assert dd_experiment.replicate_seeds(dict.fromkeys(names2), "SLDD M=10 random", 0) == [0, 1]  # not "... shared"
    # sl_seeds: the size study's replicates apart from DD fixed's (one seed: the stage's own only)
    names3, _ = dd_experiment.distill_calls(_splits(), pools, **kw, fixed_seeds=[0, 1, 2], sl_seeds=[0])
    assert [n for n in names3 if " seed " in n] == ["DD fixed seed 1", "DD fixed seed 2"]
    names4, _ = dd_experiment.distill_calls(_splits(), pools, **kw, fixed_seeds=[0], sl_seeds=[3])
    assert [n for n in names4 if " seed " in n] == [
        "SLDD M=5 fixed seed 3",
        "SLDD M=10 fixed seed 3",
        "DD M=10 fixed seed 3",
        "SLDD M=5 random seed 3",
        "SLDD M=10 random seed 3",
        "DD M=10 random seed 3",
    ]
    # sl_random_seeds: the random-regime replicates on their own (here none), so SLDD vs DD pairs over the fixed ones
    names5, _ = dd_experiment.distill_calls(
        _splits(), pools, **kw, fixed_seeds=[0], sl_seeds=[0, 1], sl_random_seeds=[0]
    )
    assert [n for n in names5 if " seed " in n] == [
        "SLDD M=5 fixed seed 1",
        "SLDD M=10 fixed seed 1",
        "DD M=10 fixed seed 1",
    ]
    names6, _ = dd_experiment.distill_calls(_splits(), pools, **kw, fixed_seeds=[0], sl_seeds=[0], sl_random_seeds=[2])
    assert [n for n in names6 if " seed " in n] == [
        "SLDD M=5 random seed 2",
        "SLDD M=10 random seed 2",
        "DD M=10 random seed 2",
    ]
    # regimes: DD's four by default; a subset skips the others' runs, and the fixed regime cannot be left out
    names7, _ = dd_experiment.distill_calls(_splits(), pools, **kw, regimes=["random", "fixed"])
    assert [n for n in names7 if n.startswith("DD ") and "M=" not in n] == ["DD fixed", "DD random"]
    with pytest.raises(ValueError, match="fixed"):
        dd_experiment.distill_calls(_splits(), pools, **kw, regimes=["random"])
    with pytest.raises(ValueError, match="one of"):
        dd_experiment.distill_calls(_splits(), pools, **kw, regimes=["fixed", "pretrained"])


def test_curves_summary_accuracies_and_file_names(tmp_path):
    res = {"DD fixed": _dd_result(False), "SLDD M=10 random": _dd_result(True)}
    curves = dd_experiment.loss_curves(res)
    assert list(curves.columns) == ["run", "iteration", "loss"] and len(curves) == 6
    s = dd_experiment.run_summary(res)
    assert s["outer loss first"].tolist() == [2.5, 2.5] and s["learned lr (mean)"].iloc[0] == pytest.approx(0.15)
    acc = dd_experiment.Accuracies(3, {"random": [101, 102]})
    acc.record("e", "random", "DD", 10, [0.5, 0.7], lr=0.1)
    acc.record("e", "random", "SLDD", 10, [0.2], thetas=["x"], grouped=[0.4])
    t = acc.summary("e", ["method"])
    assert t["mean"].tolist() == pytest.approx([0.6, 0.2]) and t["std"].tolist() == pytest.approx([0.1, 0.0])
    assert acc.frame()["theta"].tolist() == [101, 102, "x"] and acc.lr[("e", "random", "DD", 10)] == 0.1
    assert dd_experiment.set_file_name("SLDD M=10 random shared") == "SLDD_M10_random_shared.pt"
    paths = dd_experiment.save_sets(res, tmp_path)
    assert [p.name for p in paths] == ["DD_fixed.pt", "SLDD_M10_random.pt"]
    assert torch.equal(dd.DDResult.load(paths[1]).targets, res["SLDD M=10 random"].targets)


def test_group_mate_mass_and_attack_stats():
    targets = torch.zeros(3, 10)
    targets[0, [0, 2, 4]] = torch.tensor([0.6, 0.3, 0.1])  # class 0, mates 2 and 4 hold 0.4
    targets[1, [5, 7]] = torch.tensor([0.8, 0.2])  # class 5, mate 7 holds 0.2
    targets[2, 1] = 1.0  # class 1: in no group
    assert dd_experiment.group_mate_mass(targets, torch.tensor([0, 5, 1]), [[0, 2, 4], [5, 7]]) == pytest.approx(0.3)
    y = torch.tensor([7, 7, 7, 7, 1, 2])
    pred = torch.tensor([7, 5, 5, 3, 1, 0])
    s = dd_experiment.attack_stats(pred, y, 7, 5)
    assert s == {"acc on K": 0.25, "K predicted as T": 0.5, "acc on other classes": 0.5}


def test_poison_experiment_rows_and_baselines_tuning_theta():
    d = _splits()
    fm_eval = [unroll.initial_params(dd.classifier(s, "lenet")) for s in (1, 2)]
    pz = dd.DDResult(torch.randn(10, 1, 28, 28), torch.full((10,), 5), torch.full((10,), 5), torch.tensor([0.01]))
    t = dd_experiment.poison_experiment(pz, d, fm_eval, arch="lenet", attacked=7, target=5, poison_size=3)
    assert t["data"].tolist() == ["before", "DD poison (1 step)", "label-flipped real (1 step)"] * 2
    net = dd.classifier(0, "lenet")
    before = dd_experiment.attack_stats(dd.predict(net, fm_eval[0], d.x_test), d.te_y, 7, 5)
    assert t.iloc[0][list(before)].to_dict() == before
    ev = {"fixed": ["own"], "fixed_pretrained": ["pre"]}
    bl = dd_experiment.Baselines(
        d, SimpleNamespace(digit_pool=["a", "b", "c"]), ev, seed=0, arch="lenet", init="xavier", opt_real_candidates=2
    )
    assert bl.tune_for("random_pretrained") == ["a", "b"] and bl.tune_for("fixed") == ["own"]
    assert len(bl.tune_for("random")) == 2
    sets, cands = bl.sets_for(1)
    assert set(sets) == {"random real", "k-means", "average real"} and len(cands) == 2
    assert bl.sets_for(1)[0] is sets  # built once per ipc


def test_dd_metrics_layout():
    regimes = pd.DataFrame({"regime": ["fixed"], "method": ["DD"], "mean": [0.5], "std": [0.1]})
    sizes = pd.DataFrame(
        {"regime": ["random"], "method": ["SLDD"], "M": [5], "mean": [0.4], "std": [0.0], "kNN": [0.3]}
    )
    poison = pd.DataFrame({"network": [0, 1], "data": ["before", "before"], "acc on K": [0.8, 0.6]})
    m = dd_experiment.metrics(0.9, regimes, sizes, poison)
    assert m == {
        "whole_acc": 0.9,
        "regimes": {"DD | fixed": {"mean": 0.5, "std": 0.1}},
        "sldd": {"SLDD M=5 random": {"mean": 0.4, "std": 0.0, "knn": 0.3}},
        "poison": {"before": {"network": 0.5, "acc on K": 0.7}},
    }


# ------------------------------------------------------------------------------------------ label distillation


def _ld_set(n=10, soft=True, labels=None):
    g = torch.Generator().manual_seed(n)
    y = torch.arange(n) % 10 if labels is None else labels
    s = torch.softmax(torch.randn(n, 10, generator=g), 1) if soft else None
    return DistilledSet(
        torch.randn(n, 1, 28, 28, generator=g),
        y,
        10,
        (0.3,),
        (0.35,),
        "ld",
        params={"steps": 4, "resets": 1, "times_to_overfit": [3], "target_loss": [2.3, 2.2]},
        soft_labels=s,
        synthesis_seconds=1.0,
    )


def test_ld_calls_tables_and_sets():
    w = (torch.zeros(10, 1, 28, 28), torch.arange(10) % 10, torch.arange(10))
    kw = dict(
        arch="lenet",
        inner_batch=5,
        target_batch=8,
        label_lr=0.1,
        model_lr=0.01,
        patience=2,
        window=2,
        rr_steps=3,
        lam=1.0,
        alpha=0.1,
        so_steps=2,
        inner_lr=0.01,
        inner_steps=1,
    )
    names, calls = ld_experiment.distill_calls(w, w, None, None, (0.3,), (0.35,), cross_variants=["rr"], **kw)
    assert names == [("within", "rr"), ("within", "second_order"), ("cross", "rr")]
    assert calls[1][2]["steps"] == 2 and "lam" not in calls[1][2] and calls[2][2]["dataset"] == "digits->fashion-mnist"
    made = {("within", "rr"): _ld_set(), ("within", "second_order"): _ld_set(), ("cross", "rr"): _ld_set(12)}
    y = torch.arange(10) % 10
    runs = ld_experiment.runs_table(made, y, y)
    assert runs["steps to overfit T_i"].tolist() == ["3"] * 3 and np.isnan(runs["argmax = true label"].iloc[2])
    assert len(ld_experiment.target_loss_curves(made)) == 6
    onehot, mapped = ld_experiment.true_label_sets(made, y, torch.arange(12) % 10)
    assert onehot.soft_labels[0].argmax() == 0 and mapped is not None
    sets = ld_experiment.label_sets(made, onehot, mapped, ["rr"])
    assert list(sets) == [
        ("within", "LD-RR"),
        ("within", "LD second-order"),
        ("within", "true labels"),
        ("cross", "LD-RR"),
        ("cross", "digit k -> class k"),
    ]
    flex = ld_experiment.flex_cells("lenet", ["lenet", "mlp"], [0.5, 1.0, 2.0])
    assert flex == [
        ("lenet", "adam", 1.0),
        ("mlp", "adam", 1.0),
        ("lenet", "sgd", 1.0),
        ("lenet", "adam", 0.5),
        ("lenet", "adam", 2.0),
    ]
    cfg = ld_experiment.eval_config(
        "mlp", "sgd", 0.5, eval_width=8, eval_steps=20, eval_batch=50, eval_lr=1e-3, eval_sgd_lr=0.01, device="cpu"
    )
    assert (
        cfg.steps == 10 and cfg.optimizer == "sgd" and cfg.lr == 0.01 and cfg.arch_kwargs == {"width": 128, "depth": 3}
    )
    jobs = ld_experiment.eval_jobs(sets, flex, [0, 1], lambda *a: a, 20)
    assert len(jobs) == 2 * (5 + 5 + 1 + 1 + 1) and isinstance(jobs[0], runner.Job)
    assert jobs[2].cost == pytest.approx(0.15 * 20)


def test_ld_main_flexibility_and_metrics():
    rows = [
        {
            "base": "within",
            "labels": lab,
            "student": "lenet",
            "optimizer": "adam",
            "mult": 1.0,
            "mean": m,
            "std": 0.01,
            "cell": "x",
        }
        for lab, m in (("LD-RR", 0.5), ("true labels", 0.4))
    ]
    summary = pd.DataFrame(rows + [dict(rows[0], student="mlp")])
    main, cells = ld_experiment.main_table(summary, "lenet")
    assert main["labels"].tolist() == ["LD-RR", "true labels"] and cells[("within", "LD-RR", "lenet", "adam", 1.0)] == (
        0.5,
        0.01,
    )
    flex = ld_experiment.flexibility_table(cells, [("lenet", "adam", 1.0)], 20)
    assert flex["gain (points)"].iloc[0] == pytest.approx(10.0) and flex["LD-RR"].iloc[0] == E.cell_text(0.5, 0.01)
    runs = pd.DataFrame([{"base": "within", "variant": "rr", "seconds": 2.0, "resets": 1}])
    m = ld_experiment.metrics(main, flex, runs, pd.DataFrame({"seconds": [1.0, 2.0]}))
    assert m["flexibility_gain"] == {"lenet adam 1x": pytest.approx(0.1)} and m["eval_seconds_total"] == 3.0
    assert list(m) == ["main", "flexibility_gain", "distillation_seconds", "resets", "eval_seconds_total"]


# ------------------------------------------------------------------------------------------ text DD


def _tdd(init="fixed", soft=True, losses=(1.0, 0.5)):
    return textdd.TextDistilled(
        torch.randn(2, 4, 3),
        torch.randn(2, 2) if soft else torch.tensor([0, 1]),
        torch.tensor([0.3, 0.2]),
        1,
        2,
        "textconvnet",
        {"filters": 4},
        init,
        0,
        soft,
        "TDD" if soft else "DD (hard labels)",
        list(losses),
        0.5,
    )


def test_text_specs_kwargs_and_names():
    with pytest.raises(ValueError, match="too large"):
        text_experiment.check_ipcs([1, 10], 100, 6)
    text_experiment.check_ipcs([1, 8], 100, 6)
    kw = dict(
        arch_kw={"textconvnet": {"filters": 4}, "bilstm": {"hidden": 4}},
        iterations=3,
        lstm_iterations=1,
        lr0=0.3,
        lstm_lr0=1.0,
        epochs=2,
        outer_lr=0.05,
        lr_lr=0.01,
        label_init=3.0,
        real_batch=16,
    )
    k = text_experiment.tdd_kwargs("bilstm", "fixed", 2, **kw)
    assert k["iterations"] == 1 and k["lr0"] == 1.0 and k["arch_kwargs"] == {"hidden": 4} and k["seed"] == 2

    def kw_for(a, i, s, soft=True):
        return text_experiment.tdd_kwargs(a, i, s, soft, **kw)

    specs = text_experiment.distill_specs(
        kw_for, archs=["textconvnet", "bilstm"], inits=["fixed", "random"], distill_seeds=[0], ipcs=[1, 2], dd_hard=True
    )
    rows = [(r["method"], r["distilled with"], r["init"], r["ipc"]) for r, _ in specs]
    assert rows == [
        ("TDD", "bilstm", "fixed", 1),
        ("TDD", "bilstm", "random", 1),
        ("TDD", "textconvnet", "fixed", 1),
        ("TDD", "textconvnet", "random", 1),
        ("TDD", "textconvnet", "fixed", 2),
        ("TDD", "textconvnet", "random", 2),
        ("DD (hard labels)", "textconvnet", "fixed", 1),
    ]
    assert specs[-1][1]["soft"] is False
    calls = text_experiment.distill_calls(specs, "x", "y", 6)
    assert calls[0][0] is textdd.distill_job and calls[-1][2]["method"] == "DD (hard labels)" and calls[4][1][3] == 2
    r = specs[-1][0] | {"rep": 0}
    assert text_experiment.run_name(r) == "DD textconvnet fixed ipc1 rep0"
    assert text_experiment.set_file_name(r) == "dd_textconvnet_fixed_ipc1_rep0.pt"
    sets = [(specs[0][0], _tdd()), (r, _tdd(soft=False, losses=(2.0,)))]
    assert len(text_experiment.loss_curves(sets)) == 3
    budget = text_experiment.learner_budget(sets, kw_for)
    assert budget == {
        "bilstm": {"outer iterations": 1, "plateau test every": 0, "epochs": 2, "real batch": 16, "lr0": 1.0}
    }
    stop = text_experiment.tdd_kwargs("bilstm", "fixed", 2, **kw, plateau_every=25, min_iterations=100)
    assert (stop["plateau_every"], stop["min_iterations"], stop["iterations"]) == (25, 100, 1)


def test_text_specs_distill_every_replicate_at_every_ipc():
    def kw_for(a, i, s, soft=True):
        return {"arch": a, "init": i, "seed": s, "soft": soft}

    specs = text_experiment.distill_specs(
        kw_for,
        archs=["textconvnet", "bilstm"],
        inits=["fixed", "random"],
        distill_seeds=[0, 1, 2],
        ipcs=[1, 3],
        dd_hard=True,
    )
    rows = [(r["method"], r["distilled with"], r["init"], r["ipc"], r["rep"]) for r, _ in specs]
    assert len(rows) == len(set(rows)) == 2 * 2 * 3 + 2 * 3 + 3
    for init in ("fixed", "random"):  # the larger ipc: the TextConvNet, every replicate (the claims pair over them)
        assert [r[4] for r in rows if r[3] == 3 and r[2] == init] == [0, 1, 2]
        assert all(r[1] == "textconvnet" for r in rows if r[3] == 3)
    assert all(kw["seed"] == r["rep"] for r, kw in specs)


def test_text_baseline_and_eval_calls():
    y = torch.arange(12) % 6
    x = torch.randn(12, 4, 3)
    reals = text_experiment.real_sets(x, y, [1], [0, 1], 6)
    assert set(reals) == {1} and set(reals[1]) == {0, 1} and reals[1][0][1].tolist() == list(range(6))
    calls = text_experiment.baseline_calls(reals, x, y, x, y, {"textconvnet": {}}, 6, [0], {"steps": 5}, 7)
    assert [c[1][0]["method"] for c in calls] == ["random real", "full train"] and calls[1][1][-1]["steps"] == 7
    assert calls[1][1][0]["ipc"] == 2
    rows = [{"rep": 0, "ipc": 1}, {"rep": 1, "ipc": 1}]
    ev = text_experiment.eval_calls([(rows[0], "d0"), (rows[1], "d1")], reals, x, y, [0], {"l": {}}, {"steps": 1}, 0)
    assert ev[0][2]["learners"] == {"l": {}} and ev[1][2]["learners"] is None and ev[0][0] is textdd.evaluate_set


def test_text_tables_and_metrics():
    res = pd.DataFrame(
        [
            dict(method="TDD", set="TDD", protocol="schedule", theta0="fresh", learner="textconvnet", acc=0.5),
            dict(method="TDD", set="TDD", protocol="schedule", theta0="fresh", learner="textconvnet", acc=0.7),
            dict(
                method="random real",
                set="DD (hard labels)",
                protocol="schedule",
                theta0="fresh",
                learner="textconvnet",
                acc=0.1,
            ),
            dict(method="TDD", set="TDD", protocol="adam", theta0="fresh", learner="bilstm", acc=0.4),
            dict(method="full train", set="full train", protocol="adam", theta0="fresh", learner="bilstm", acc=0.9),
        ]
    )
    res["distilled with"], res["init"], res["ipc"] = "textconvnet", "fixed", 1
    sched = text_experiment.schedule_rows(res)
    assert len(sched) == 2  # random real through DD's schedule stays in the results only
    t = text_experiment.schedule_table(sched)
    assert t["TDD"].iloc[0] == "0.600 ± 0.141 (n=2)"
    assert text_experiment.cell(res.iloc[:1]) == "0.500 ± 0.000 (n=1)"
    adam_df = text_experiment.adam_rows(res)
    assert adam_df["set"].tolist() == ["TDD (textconvnet, fixed init)", "full train"]
    assert list(text_experiment.adam_table(adam_df).columns) == ["bilstm"]
    m = text_experiment.metrics(res, sched, adam_df, [({}, _tdd())], chance=1 / 6, n_train=10, n_test=5)
    assert m["schedule"] == {"textconvnet fixed ipc1 theta0=fresh TDD": pytest.approx(0.6)}
    assert m["full_train"] == {"bilstm": 0.9} and m["distill_seconds"] == 0.5
    assert list(m) == ["chance", "train", "test", "schedule", "adam", "full_train", "distill_seconds"]


# ------------------------------------------------------------------------------------------ GTN / NAS


def _gtn_runs():
    arms = gtn_experiment.gtn_arms([0, 1], [0], ["full", "noise"])
    runs = [
        {
            "meta_loss": [2.3, 2.0, 1.8, 1.6],
            "accs": [0.5, 0.7],
            "init_accs": [0.1, 0.1],
            "diverged": i % 2,
            "lr": 0.1,
            "momentum": 0.5,
            "seconds": 1.0,
        }
        for i, _ in enumerate(arms)
    ]
    return arms, runs


def test_gtn_arms_tables_and_curves():
    arms, runs = _gtn_runs()
    assert arms == [
        ("WN", "full", True, 0),
        ("WN", "full", True, 1),
        ("no WN", "full", False, 0),
        ("no WN", "full", False, 1),
        ("WN", "noise", True, 0),
    ]
    t = gtn_experiment.runs_table(arms, runs)
    longer = [dict(r, meta_loss=r["meta_loss"] + [9.0, 0.1, 9.0]) if i == 2 else r for i, r in enumerate(runs)]
    assert (
        gtn_experiment.runs_table(arms, longer)["volatility"].tolist() == t["volatility"].tolist()
    )  # the shared steps only
    assert t["acc"].tolist() == pytest.approx([0.6] * 5) and t["final meta-loss"].iloc[0] == pytest.approx(1.6)
    assert len(gtn_experiment.meta_loss_curves(arms, runs)) == 20
    real = {"accs": [[0.4, 0.6], [0.8]], "lr": 0.3, "momentum": 0.9}
    reals = gtn_experiment.real_rows(real, [0, 1])
    assert [r["acc"] for r in reals] == pytest.approx([0.5, 0.8])
    s = gtn_experiment.arms_table(t, reals, real)
    assert s["curriculum"].tolist() == ["full", "full", "noise", "real data"]
    assert s["n"].tolist() == [2, 2, 1, 2] and s["diverged"].iloc[:3].tolist() == [1, 1, 0]
    assert gtn_experiment.arm_row(s, "no WN", "full")["n"] == 2
    assert gtn_experiment.first_run(arms, "no WN", "full") == 2
    cur = gtn_experiment.arm_curves(arms, runs, "WN", "full")
    assert cur.shape == (2, 4) and cur[0, 1] == pytest.approx(2.15)
    runs[1] = {**runs[1], "meta_loss": [2.3, 2.0]}  # stopped at its plateau: padded with NaN
    cur = gtn_experiment.arm_curves(arms, runs, "WN", "full")
    assert cur.shape == (2, 4) and np.isnan(cur[1, 2:]).all() and cur[1, 1] == pytest.approx(2.15)
    m = gtn_experiment.metrics(
        s,
        pd.DataFrame(
            [
                {"proxy": "DC", "seed": k, "rho": r, "top1 gt acc": 0.8, "time fraction": 0.1}
                for k, r in ((0, 0.4), (1, 0.6))
            ]
        ),
    )
    assert m["gtn_diverged"] == {"WN": 1, "no WN": 1} and m["nas"]["DC"]["rho"] == pytest.approx(0.5)  # over replicates


def test_nas_summary_scores_each_proxy_instance_against_the_ground_truth():
    codes = ["a", "b", "c", "d"]
    gt = [0.9, 0.8, 0.7, 0.6]
    rows = [
        {
            "arch": c,
            "proxy": "ground truth",
            "seed": 0,
            "acc": a,
            "cpu seconds": 10.0,
            "images seen": 100,
            "train seconds": 5.0,
        }
        for c, a in zip(codes, gt)
    ]
    rows += [
        {"arch": c, "proxy": "random", "seed": s, "acc": a, "cpu seconds": 1.0, "images seen": 10, "train seconds": 0.5}
        for s, accs in ((0, [0.1, 0.2, 0.3, 0.4]), (1, [0.4, 0.3, 0.2, 0.1]))
        for c, a in zip(codes, accs)
    ]
    rows += [
        {"arch": c, "proxy": "GTN", "seed": s, "acc": a, "cpu seconds": 2.0, "images seen": 20, "train seconds": 1.0}
        for s in (0, 1)
        for c, a in zip(codes, [0.4, 0.3, 0.2, 0.1])
    ]
    rows += [
        {"arch": c, "proxy": "DC", "seed": 0, "acc": a, "cpu seconds": 2.0, "images seen": 20, "train seconds": 1.0}
        for c, a in zip(codes, [0.4, 0.3, 0.1, 0.2])
    ]
    out = gtn_experiment.nas_summary(pd.DataFrame(rows), codes, n_train=1000)
    s = out.summary.set_index(["proxy", "seed"])
    assert sorted(s.index) == [("DC", 0), ("GTN", 0), ("GTN", 1), ("random", 0), ("random", 1)]
    assert s.loc[("GTN", 0), "rho"] == pytest.approx(1.0) and s.loc[("random", 0), "rho"] == pytest.approx(-1.0)
    # each replicate is compared with the random proxy of its own replicate
    assert s.loc[("GTN", 0), "rho - random"] == pytest.approx(2.0) and s.loc[
        ("GTN", 1), "rho - random"
    ] == pytest.approx(0.0)
    assert s.loc[("DC", 0), "rho - random"] == pytest.approx(0.8 + 1.0) and s.loc[("GTN", 0), "top1"] == "a"
    assert s.loc[("GTN", 1), "time fraction"] == pytest.approx(0.2) and s.loc[
        ("random", 0), "images fraction"
    ] == pytest.approx(0.1)
    assert out.epoch_scale == pytest.approx(0.1) and s.loc[("GTN", 0), "time fraction vs 1 epoch"] == pytest.approx(
        0.02
    )
    first = gtn_experiment.first_replicates(out.acc)
    assert list(first) == ["random", "GTN", "DC"] and first["random"].tolist() == [0.1, 0.2, 0.3, 0.4]


def test_gtn_proxy_files_are_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPENDIUM_MODELS_ROOT", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="dd_matching"):
        gtn_experiment.proxy_set_files(["dc"], 10)
    bad = DistilledSet(torch.zeros(10, 1, 8, 8), torch.arange(10), 10, (0.3,), (0.35,), "dc")
    bad.save(tmp_path / "dc.pt")
    with pytest.raises(ValueError, match="not a 10-class set of"):
        gtn_experiment.load_proxy_sets({"dc": tmp_path / "dc.pt"}, {0: "random set"})
    with pytest.raises(SetError, match="set the same `dataset`"):
        gtn_experiment.load_proxy_sets({"dc": tmp_path / "dc.pt"}, {}, "cifar10", (3, 32, 32))
    good = DistilledSet(torch.zeros(10, 1, 28, 28), torch.arange(10), 10, (0.3,), (0.35,), "dc")
    good.save(tmp_path / "dc.pt")
    got = gtn_experiment.load_proxy_sets({"dc": tmp_path / "dc.pt"}, {0: "random 0", 1: "random 1"})
    assert list(got) == [("random", 0), ("random", 1), ("DC", 0)] and got[("random", 1)] == "random 1"


# ------------------------------------------------------------------------------------------ Mnemonics


def _mn_runs():
    acc = torch.tensor([[0.8, 0.0], [0.6, 0.9]])  # rows: phases; columns: classes
    return [
        {
            "seed": s,
            "aia": {"random": 0.5 + s / 10, "mnemonics": 0.6 + s / 10},
            "forgetting": {"random": 0.2, "mnemonics": 0.1},
            "seconds": {"random": 1.0, "mnemonics": 2.0},
            "acc": {"random": acc, "mnemonics": acc},
            "mn_trace": [[1.0, 0.5], [0.9]],
            "cpu_seconds": 3.0,
        }
        for s in (0, 1)
    ]


def test_mnemonics_tables_gains_and_traces():
    runs = _mn_runs()
    res, per_phase = mnemonics_experiment.results_tables(runs, ["random", "mnemonics"], [1, 2])
    assert len(res) == 4 and per_phase["classes seen"].tolist() == [1, 2] * 4
    assert per_phase["acc"].iloc[:2].tolist() == pytest.approx([0.8, 0.75])
    summ = mnemonics_experiment.summary_table(res)
    assert summ["Δ acc vs random"].tolist() == pytest.approx([0.0, 0.1]) and summ["n"].tolist() == [2, 2]
    cells = {r["method"]: r for _, r in summ.iterrows()}
    txt = mnemonics_experiment.cell_texts(cells, ["random", "mnemonics"])
    assert txt["average incremental accuracy (%)"].tolist() == ["55.0 ± 7.1", "65.0 ± 7.1"]
    assert txt["Δ acc vs random (pts)"].tolist() == ["+0.0", "+10.0"]
    extra = [(5, 0)]
    gains = mnemonics_experiment.phase_gains(
        runs, extra, runs[:1], n_phases=6, increment=1, base_classes=5, num_classes=10
    )
    assert gains["phases"].tolist() == [6, 6, 2] and gains["gain"].tolist() == pytest.approx([0.1] * 3)
    # the phases of the dataset's own classes (CIFAR-100 at the paper scale: 50 base classes, then phases of 25)
    wide = mnemonics_experiment.phase_gains(
        runs, [(25, 0)], runs[:1], n_phases=6, increment=1, base_classes=50, num_classes=100
    )
    assert wide["phases"].tolist()[-1] == 3
    traces = mnemonics_experiment.exemplar_traces(runs, extra, runs[:1], n_phases=6, base_classes=5, num_classes=10)
    assert len(traces) == 9 and traces["run"].iloc[-1] == "seed 0 2-phase setting phase 1"
    curve = per_phase.groupby(["method", "classes seen"], sort=False)["acc"].mean().unstack(0)
    m = mnemonics_experiment.metrics(cells, curve, ["random", "mnemonics"], runs, 9.0)
    assert m["final_acc"]["random"] == pytest.approx(0.75) and m["cpu_seconds_per_seed"] == [3.0, 3.0]
    t = mnemonics_experiment.phase_table([(0, 1), (2,)], [2, 3], ["a", "b", "c"], [0, 1, 2], 5, 20)
    assert t["new classes"].tolist() == ["a, b", "c"] and t["new training images"].tolist() == [40, 20]


def test_mnemonics_memory_sets_and_calls(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPENDIUM_MODELS_ROOT", str(tmp_path))
    assert mnemonics_experiment.load_memory_sets(["random", "herding"], list(range(10)), 0.3, 0.35) == ({}, {})
    with pytest.raises(FileNotFoundError, match="DC memory"):
        mnemonics_experiment.load_memory_sets(["dc"], list(range(10)), 0.3, 0.35)
    tr = SimpleNamespace(images=torch.zeros(100, 1, 28, 28, dtype=torch.uint8), labels=torch.arange(100) % 10)
    cfg = mnemonics.CILConfig(train_per_class=2)
    calls, extra = mnemonics_experiment.incremental_calls(
        tr, "tx", "ty", ["random"], cfg, [0, 1], {}, list(range(10)), 0.3, 0.35, [5]
    )
    assert extra == [(5, 0), (5, 1)] and len(calls) == 4 and calls[0][2] == {"keep_exemplars": True}
    assert calls[2][1][4] == ["random", "mnemonics"] and calls[2][1][5].increment == 5 and len(calls[0][1][0]) == 20
    # the memory-1 pass: the same per-seed subsets, its own config and sets, no exemplars kept
    one = mnemonics_experiment.memory_calls(
        tr, "tx", "ty", ["herding"], dataclasses.replace(cfg, memory=1), [0, 1], {}, list(range(10)), 0.3, 0.35
    )
    assert [c[2] for c in one] == [{"keep_exemplars": False}] * 2 and one[0][1][5].memory == 1
    assert torch.equal(one[1][1][0], calls[1][1][0]) and torch.equal(one[1][1][1], calls[1][1][1])
    # per-seed memories: a seed without a method's synthesis runs without that method, the others keep theirs
    per_seed = mnemonics_experiment.memory_calls(
        tr, "tx", "ty", ["herding", "dsa"], cfg, [0, 1], {}, list(range(10)), 0.3, 0.35, seed_sets={0: {"dsa": "S0"}}
    )
    assert [c[1][4] for c in per_seed] == [["herding", "dsa"], ["herding"]]
    assert per_seed[0][1][-1] == {"dsa": "S0"} and per_seed[1][1][-1] == {}


def test_protocol_memories_are_one_finished_synthesis_per_seed(tmp_path):
    def finished(method, seed):
        d = DistilledSet(
            torch.randn(10, 1, 28, 28),
            torch.arange(10),
            10,
            (0.3,),
            (0.35,),
            method,
            "fashion-mnist",
            {"ipc": 1, "iterations": 1000, "loss_trace": [1.0, 0.5]},
            seed,
        )
        d.save(protocol_sets.set_file(method, 1, seed, tmp_path))

    for s in (0, 1, 2):
        finished("dc", s)
    finished("dsa", 1)
    sets, params = mnemonics_experiment.load_protocol_memories(
        ["random", "dc", "dsa"], [0, 1, 2], list(range(10)), 0.3, 0.35, "fashion-mnist", tmp_path
    )
    assert [sorted(sets[s]) for s in (0, 1, 2)] == [["dc"], ["dc", "dsa"], ["dc"]]
    assert params["dc"]["syntheses"] == 3 and params["dsa"]["syntheses"] == 1 and params["dsa"]["seeds"] == [1]
    assert params["dc"]["iterations"] == 1000 and len(sets[0]["dc"][0]) == 10
    with pytest.raises(
        FileNotFoundError, match="--methods dsa --ipcs 1"
    ):  # no finished seed: the command that makes one
        mnemonics_experiment.load_protocol_memories(["dsa"], [0, 2], list(range(10)), 0.3, 0.35, root=tmp_path)
    with pytest.raises(SetError, match="cifar100"):  # another dataset's synthesis is refused by name
        mnemonics_experiment.load_protocol_memories(["dc"], [0], list(range(10)), 0.3, 0.35, "cifar100", tmp_path)


# ------------------------------------------------------------------------------------------ figures


def test_figures_draw_from_small_inputs():
    res = {f"DD {r}": _dd_result(False) for r in dd.REGIMES} | {"SLDD": _dd_result(True)}
    figs = [
        figures.dd_regime_images(res, dd.REGIMES, 0.3, 0.35),
        figures.labelled_sets(res, [("SLDD", "soft"), ("DD fixed", "hard")], [f"c{i}" for i in range(10)], 0.3, 0.35),
        figures.poisoning_bars(
            pd.DataFrame(
                {"data": ["before"], "acc on K": [0.9], "K predicted as T": [0.0], "acc on other classes": [0.8]}
            ),
            "t",
        ),
        figures.learned_labels(
            {"within": _ld_set()}, {"within": torch.arange(10) % 10}, [f"c{i}" for i in range(10)], 10
        ),
        figures.steps_curve(
            pd.DataFrame(
                {
                    "student": ["lenet"] * 2,
                    "optimizer": ["adam"] * 2,
                    "mult": [1.0, 2.0],
                    "steps": [10, 20],
                    "ld_mean": [0.5, 0.6],
                    "ld_std": [0.0, 0.1],
                    "true_mean": [0.4, 0.5],
                    "true_std": [0.0, 0.0],
                }
            ),
            "lenet",
        ),
        figures.nas_scatter({"DC": np.array([0.1, 0.2, 0.3])}, np.array([0.3, 0.2, 0.1]), lambda a, b: -1.0),
        figures.accuracy_per_phase(
            pd.DataFrame({"random": [0.9, 0.5], "mnemonics": [0.9, 0.6]}, index=[5, 6]), ["random", "mnemonics"], "t"
        ),
        figures.mnemonics_exemplars(
            torch.zeros(4, 1, 28, 28),
            torch.ones(4, 1, 28, 28),
            torch.tensor([0, 0, 1, 1]),
            (0, 1),
            ["a", "b"],
            2,
            0.3,
            0.35,
        ),
        figures.gtn_images_and_meta_loss(
            [(_ld_set(), "a"), (_ld_set(), "b")], [f"c{i}" for i in range(10)], 1, [("full, WN", "C0", np.ones((2, 5)))]
        ),
    ]
    sched = pd.DataFrame(
        {
            "distilled with": ["textconvnet"] * 2,
            "init": ["fixed"] * 2,
            "ipc": [1, 1],
            "theta0": ["fresh"] * 2,
            "method": ["TDD", "random real"],
            "acc": [0.5, 0.3],
        }
    )
    figs.append(
        figures.text_accuracy_and_loss(
            sched,
            [
                (
                    {"method": "TDD", "rep": 0, "ipc": 1, "distilled with": "textconvnet", "init": "fixed"},
                    _tdd(losses=[1.0] * 6),
                )
            ],
            chance=1 / 6,
            num_classes=6,
            first_seed=0,
            ipc0=1,
        )
    )
    assert [len(f.axes) for f in figs] == [4, 8, 1, 12, 1, 1, 1, 3, 3, 2]
    plt.close("all")


def test_set_figures_name_classes_in_full_and_legibly():
    names = list(data.FASHION_MNIST_CLASSES)
    res = {"SLDD": _dd_result(True), "DD fixed": _dd_result(False)}
    for fig in (
        figures.labelled_sets(res, [("SLDD", "soft"), ("DD fixed", "hard")], names, 0.3, 0.35),
        figures.learned_labels({"within": _ld_set()}, {"within": torch.arange(10) % 10}, names, 10),
    ):
        titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
        text = "\n".join(titles)
        assert "Pullover" in text or "Ankle boot" in text or "T-shirt/top" in text
        assert all(
            line.split(" ")[0] in names or line.rsplit(" ", 1)[0] in names for t in titles for line in t.split("\n")
        )  # whole names, never cut
        assert min(ax.title.get_fontsize() for ax in fig.axes if ax.get_title()) >= 8
    plt.close("all")


def test_random_proxies_are_one_sample_per_seed():
    tr = SimpleNamespace(
        images=torch.randint(0, 255, (100, 1, 28, 28), dtype=torch.uint8), labels=torch.arange(100) % 10, name="mnist"
    )
    r = gtn_experiment.random_proxies(tr, 2, (0.3,), (0.35,), [0, 1])
    assert list(r) == [0, 1] and len(r[0]) == 20 and r[0].labels.bincount().tolist() == [2] * 10
    assert r[0].dataset == "mnist"  # the sets record the stage's dataset
    assert not torch.equal(r[0].images, r[1].images)


def test_the_ground_truth_is_read_from_dd_nas_with_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="dd_nas"):
        gtn_experiment.load_ground_truth(tmp_path)
    (tmp_path / "dd_nas").mkdir()
    rows = [
        {
            "arch": c,
            "proxy": "ground truth",
            "seed": 0,
            "acc": a,
            "train seconds": 1.0,
            "cpu seconds": 2.0,
            "images seen": 640,
            "test images": 500,
        }
        for c, a in (("w8-d1-relu-none-avg", 0.8), ("w16-d2-relu-instance-max", 0.9))
    ]
    pd.DataFrame(rows).to_csv(tmp_path / "dd_nas" / "ground_truth.csv", index=False)
    gt = gtn_experiment.load_ground_truth(tmp_path)
    assert (
        gt.codes == ["w8-d1-relu-none-avg", "w16-d2-relu-instance-max"]
        and gt.test_n == 500
        and gt.rows[1]["acc"] == 0.9
    )
    with pytest.raises(ValueError, match="nas_test_n"):
        gtn_experiment.load_ground_truth(tmp_path, 1000)
    pd.DataFrame(rows).drop(columns="images seen").to_csv(tmp_path / "dd_nas" / "ground_truth.csv", index=False)
    with pytest.raises(ValueError, match="images seen"):
        gtn_experiment.load_ground_truth(tmp_path)


def test_only_the_norm_free_and_batchnorm_convnets_train_in_nhwc():
    assert [
        nas.channels_last(nas.parse_code(c))
        for c in ("w8-d1-relu-none-avg", "w8-d1-relu-batch-avg", "w8-d1-relu-instance-avg", "w8-d1-relu-layer-max")
    ] == [True, True, False, False]
