"""DD-Ranking's IOR and HLR beyond dd_inversion: the arms derived from a stage's own evaluation jobs
(compendium.pipeline.ranking: arm_jobs, arm_frame, reuse, evaluate_ior_hlr, the cells of dd_coresets / dd_dwa /
dd_crossarch), HLR without IOR (no teacher), the full arm shared across a by column, label distillation's
convention (dd_labels), and the hard-label arms of SLDD (dd_unrolled) and TDD (dd_text)."""

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from compendium.distill import coresets, ranking, runner
from compendium.distill import evaluate as E
from compendium.distill.unrolled import dd, dd_experiment, text_experiment, textdd
from compendium.pipeline import ranking as pr
from compendium.distill import records as R
from compendium.verdicts.claims import Effect

COLS = ["method", "ipc", "student", "evaluation", "set", "seed", "acc"]


def frame(rows, cols=COLS):
    return pd.DataFrame(rows, columns=cols)


# ----------------------------------------------------------------- matched_runs / the table: new options


def test_without_ior_the_random_arm_is_not_needed_and_ior_and_score_are_nan():
    rows = [("m", 1, "s", "soft", "distilled", s, a) for s, a in ((0, 0.6), (1, 0.7))]
    rows += [("m", 1, "s", "hard", "distilled", s, a) for s, a in ((0, 0.3), (1, 0.4))]
    rows += [("pool", 0, "s", "hard", "full", s, a) for s, a in ((0, 0.8), (1, 0.9))]
    with pytest.raises(ValueError, match=r"\['random'\]"):
        ranking.matched_runs(frame(rows))
    runs = ranking.matched_runs(frame(rows), ior_defined=False)
    np.testing.assert_allclose(runs["HLR"], [0.5, 0.5])
    assert runs["IOR"].isna().all() and runs["LRS"].isna().all() and runs["random"].isna().all()
    t = pr.ior_hlr_table(frame(rows), ior_defined=False, note="x")
    r = t.iloc[0]
    assert r["HLR"] == pytest.approx(0.5) and r["n"] == 2 and r["acc syn"] == pytest.approx(0.65)
    assert all(math.isnan(r[c]) for c in ("IOR", "IOR low", "IOR high", "LRS", "LRS low", "acc random"))
    assert r["note"] == "x; " + pr.NO_TEACHER


def test_the_full_arm_can_be_shared_across_a_by_column():
    rows = []
    for t, syn, hard in (("convnet", 0.6, 0.4), ("resnet18", 0.5, 0.2)):  # two teachers relabel sets for one student
        rows += [
            ("m", 1, "s", t, "teacher", "distilled", 0, syn),
            ("m", 1, "s", t, "hard", "distilled", 0, hard),
            ("rnd", 1, "s", t, "teacher", "random", 0, 0.45),
        ]
    rows.append(("pool", 0, "s", None, "hard", "full", 0, 0.9))
    df = frame(rows, ["method", "ipc", "student", "teacher", "evaluation", "set", "seed", "acc"])
    with pytest.raises(ValueError, match=r"\['full hard'\]"):  # matched on every by column by default
        ranking.matched_runs(df, by=["student", "teacher"])
    with pytest.raises(ValueError, match="not among the by columns"):
        ranking.matched_runs(df, by=["student"], full_by=["teacher"])
    t = pr.ior_hlr_table(df, by=["student", "teacher"], full_by=["student"]).set_index("teacher")
    assert t.loc["convnet", "HLR"] == pytest.approx(0.5) and t.loc["resnet18", "HLR"] == pytest.approx(0.7)
    assert t.loc["resnet18", "IOR"] == pytest.approx(0.05)
    assert (t["note"] == pr.ONE_SEED).all()  # one seed: said so, intervals NaN
    assert t["IOR low"].isna().all()


def test_the_table_has_no_note_column_when_no_row_has_a_note():
    rows = [("m", 1, "s", "teacher", "distilled", s, 0.6 + s / 10) for s in (0, 1)]
    rows += [("m", 1, "s", "hard", "distilled", s, 0.4) for s in (0, 1)]
    rows += [("r", 1, "s", "teacher", "random", s, 0.5) for s in (0, 1)]
    rows += [("p", 0, "s", "hard", "full", s, 0.8) for s in (0, 1)]
    assert "note" not in pr.ior_hlr_table(frame(rows)).columns


# ------------------------------------------------------------------------------------ the own jobs' arms


def _data(n=300, size=8):
    g = torch.Generator().manual_seed(0)
    return torch.randint(0, 256, (n, 1, size, size), dtype=torch.uint8, generator=g), torch.arange(n) % 10


MEAN, STD = (0.3,), (0.3,)


def _own(cfg_t, teachers=None):
    """A stage's own jobs: two methods x two students (teacher labels), two seeds, plus a hard-label method."""
    images, labels = _data()
    teachers = teachers or {"a": torch.nn.Linear(1, 1)}
    sets = {
        m: coresets.random_real(images, labels, 1, 10, MEAN, STD, seed=k + 5) for k, m in enumerate(("sre2l", "dwa"))
    }
    jobs = []
    for st, cfg in cfg_t.items():
        for m, d in sets.items():
            for t, teacher in teachers.items():
                jobs += [
                    runner.Job({"method": m, "ipc": 1, "student": st, "by": t}, d, cfg, s, teacher, cost=3.0)
                    for s in (0, 1)
                ]
    jobs.append(
        runner.Job(
            {"method": "dc", "ipc": 1, "student": "convnet", "by": "-"},
            sets["dwa"],
            cfg_t["convnet"].replace(label_mode="hard"),
            0,
        )
    )
    return jobs, images, labels


CFG = E.EvalConfig(steps=5, batch_size=8, label_mode="teacher", temperature=4.0)
CFGS = {"convnet": CFG, "resnet18": CFG.replace(arch="resnet18", arch_kwargs={"width_mult": 0.0625})}


def _kinds(jobs):
    return pd.DataFrame(
        [
            {**j.key, "seed": j.seed, "mode": j.cfg.label_mode, "n": len(j.dset), "cost": j.cost, "teacher": j.teacher}
            for j in jobs
        ]
    )


def test_arm_jobs_add_hard_random_and_pool_arms_from_the_own_jobs():
    t1, t2 = torch.nn.Linear(1, 1), torch.nn.Linear(1, 1)
    jobs, images, labels = _own(CFGS, {"a": t1, "b": t2})
    cell = pr.by_method(["sre2l", "dwa"], ["method", "ipc", "student", "by"])
    extra = pr.arm_jobs(jobs, cell, images, labels, full_by=["student"])
    k = _kinds(extra)
    hard = k[k["set"] == "distilled"]
    assert len(hard) == 2 * 2 * 2 * 2 and set(hard["mode"]) == {"hard"} and hard["teacher"].isna().all()
    assert set(hard["cost"]) == {3.0}
    own = {(j.key["method"], j.key["student"], j.key["by"], j.seed): j for j in jobs if j.key["method"] != "dc"}
    for j in (j for j in extra if j.key["set"] == "distilled"):  # the same set and config, only the labels hard
        o = own[(j.key["method"], j.key["student"], j.key["by"], j.seed)]
        assert j.dset is o.dset and j.cfg == o.cfg.replace(label_mode="hard")
    rnd = k[k["set"] == "random"]  # per (ipc, student, teacher) and seed, the teacher of those own jobs
    assert len(rnd) == 2 * 2 * 2 and set(rnd["method"]) == {pr.RANDOM_REAL} and set(rnd["labels"]) == {"teacher"}
    assert all((r["teacher"] is t1) == (r["by"] == "a") for _, r in rnd.iterrows()) and set(rnd["n"]) == {10}
    draws = [j.dset for j in extra if j.key["set"] == "random"]
    assert len({id(d) for d in draws}) == 2  # one draw per (ipc, seed), shared by students and teachers
    seed0 = next(j.dset for j in extra if j.key["set"] == "random" and j.seed == 0)
    assert torch.equal(seed0.images, coresets.random_real(images, labels, 1, 10, MEAN, STD, seed=0).images)
    full = k[k["set"] == "full"]  # per student and seed, whichever teacher; steps x batch pool images
    assert len(full) == 2 * 2 and set(full["n"]) == {40} and set(full["method"]) == {R.CEILING}
    assert set(full.columns[full.notna().all()]) >= {"student"} and full["by"].isna().all()
    assert all(j.cfg == CFGS[j.key["student"]].replace(label_mode="hard") for j in extra if j.key["set"] == "full")


def test_arm_jobs_refuse_what_they_cannot_pair():
    jobs, images, labels = _own(CFGS)
    cell = pr.by_method(["sre2l", "dwa"])
    with pytest.raises(ValueError, match="differ in config"):  # one pool arm for two students' configs
        pr.arm_jobs(jobs, cell, images, labels, full_by=[])
    with pytest.raises(ValueError, match="full_by"):
        pr.arm_jobs(jobs, cell, images, labels, full_by=["teacher"])
    with pytest.raises(ValueError, match="soft or teacher labels"):
        pr.arm_jobs(jobs, pr.by_method(["dc"]), images, labels)
    soft = [runner.Job(j.key, j.dset, j.cfg.replace(label_mode="soft"), j.seed) for j in jobs[:2]]
    with pytest.raises(ValueError, match="needs a teacher"):
        pr.arm_jobs(soft, cell, images, labels)
    assert {j.key["set"] for j in pr.arm_jobs(soft, cell, images, labels, random=pr.NONE)} == {"distilled", "full"}
    with pytest.raises(ValueError, match="random must be one of"):
        pr.arm_jobs(jobs, cell, images, labels, random="fresh")
    with pytest.raises(ValueError, match="fixed steps"):
        pr.arm_jobs(
            [runner.Job(jobs[0].key, jobs[0].dset, CFG.replace(steps=None), 0, jobs[0].teacher)], cell, images, labels
        )


def test_arm_frame_pairs_each_own_row_with_its_job_and_self_makes_ior_zero():
    jobs, images, labels = _own({"convnet": CFG})
    cell = pr.by_method(["dwa"])
    rows = [{**j.key, "seed": j.seed, "acc": 0.5 + 0.1 * j.seed} for j in jobs]
    extra = [
        {**j.key, "seed": j.seed, "acc": 0.3 if j.key["set"] == "distilled" else 0.9}
        for j in pr.arm_jobs(jobs, cell, images, labels, random=pr.SELF)
    ]
    df = pr.arm_frame(jobs, rows, cell, extra, random=pr.SELF)
    assert list(df.columns) == ["method", "ipc", "student", "evaluation", "set", "seed", "acc"]
    assert sorted(df.loc[df["set"] == "random", "method"].unique()) == [pr.RANDOM_REAL]
    t = pr.ior_hlr_table(df, by=["student"])
    assert t.loc[0, "IOR"] == 0 and (t.loc[0, "IOR low"], t.loc[0, "IOR high"]) == (0, 0)
    assert t.loc[0, "HLR"] == pytest.approx(0.6) and t.loc[0, "acc syn"] == pytest.approx(0.55)
    with pytest.raises(ValueError, match="is not the job"):
        pr.arm_frame(jobs, rows[::-1], cell, extra)
    with pytest.raises(ValueError, match="in the order of the jobs"):
        pr.arm_frame(jobs, rows[1:], cell, extra)


def test_reuse_takes_an_identical_run_over_and_nothing_else():
    images, labels = _data()
    d = coresets.random_real(images, labels, 1, 10, MEAN, STD, seed=0)
    same = coresets.random_real(images, labels, 1, 10, MEAN, STD, seed=0)  # equal tensors, another object
    other = coresets.random_real(images, labels, 1, 10, MEAN, STD, seed=1)
    hard = CFG.replace(label_mode="hard", temperature=1.0)
    done = [
        runner.Job({"method": "random", "labels": "hard, batch 8"}, d, hard, 0),
        runner.Job({"method": "random", "labels": "hard, batch 16"}, d, hard.replace(batch_size=16), 1),
    ]
    rows = [{**j.key, "seed": j.seed, "acc": a, "seconds": 1.0} for j, a in zip(done, (0.41, 0.42))]
    new = [
        runner.Job({"method": "m", "set": "distilled"}, same, CFG.replace(label_mode="hard"), 0),  # T is unused
        runner.Job({"method": "m", "set": "distilled"}, same, CFG.replace(label_mode="hard"), 1),  # batch differs
        runner.Job({"method": "m", "set": "distilled"}, other, CFG.replace(label_mode="hard"), 0),  # other images
        runner.Job({"method": "m", "set": "distilled"}, d, CFG, 0, torch.nn.Linear(1, 1)),
    ]  # teacher labels
    to_run, reused = pr.reuse(new, done, rows)
    assert to_run == new[1:] and reused[1:] == [None] * 3
    assert reused[0] == {
        "method": "m",
        "set": "distilled",
        "seed": 0,
        "acc": 0.41,
        "seconds": 1.0,
        "same run as": "method random, labels hard, batch 8",
    }


def test_evaluate_ior_hlr_runs_only_what_is_missing_in_the_order_of_the_arms(monkeypatch):
    jobs, images, labels = _own({"convnet": CFG})
    # the stage's hard-label "dc" job ran dwa's set with hard labels at the arm's config (seed 0; T is unused there)
    rows = [{**j.key, "seed": j.seed, "acc": 0.25 if j.key["method"] == "dc" else 0.6} for j in jobs]
    calls = []

    def fake(js, x, y, workers=2):
        calls.append(list(js))
        return [
            {**j.key, "seed": j.seed, "acc": {"distilled": 0.35, "random": 0.5, "full": 0.85}[j.key["set"]]} for j in js
        ]

    monkeypatch.setattr(runner, "evaluate_many", fake)
    t, runs = pr.evaluate_ior_hlr(
        jobs,
        rows,
        pr.by_method(["sre2l", "dwa"]),
        images,
        labels,
        images[:10].float(),
        labels[:10],
        reuse_done=True,
        workers=0,
    )
    assert len(calls) == 1 and len(calls[0]) == len(runs) - 1  # the one identical run is taken over
    assert runs.loc[runs["same run as"].astype(bool), "same run as"].tolist() == [
        "method dc, ipc 1, student convnet, by -"
    ]
    t = t.set_index("method")
    assert t.loc["dwa", "acc syn hard"] == pytest.approx((0.25 + 0.35) / 2)
    assert t.loc["sre2l", "HLR"] == pytest.approx(0.5) and t.loc["sre2l", "IOR"] == pytest.approx(0.1)
    assert "note" not in t.columns
    t_self, _ = pr.evaluate_ior_hlr(
        jobs, rows, pr.by_method(["sre2l"]), images, labels, images[:10].float(), labels[:10], random=pr.SELF, workers=0
    )
    assert t_self.loc[0, "IOR"] == 0 and t_self.loc[0, "note"] == pr.SELF_NOTE
    t_none, _ = pr.evaluate_ior_hlr(
        jobs, rows, pr.by_method(["sre2l"]), images, labels, images[:10].float(), labels[:10], random=pr.NONE, workers=0
    )
    assert math.isnan(t_none.loc[0, "IOR"]) and t_none.loc[0, "note"] == pr.NO_TEACHER


def test_dwa_cell_keeps_the_sets_evaluated_on_enough_seeds():
    images, labels = _data()
    d1 = coresets.random_real(images, labels, 1, 10, MEAN, STD)
    d5 = coresets.random_real(images, labels, 5, 10, MEAN, STD)
    jobs = [runner.Job({"part": "sweep", "set": "dwa / decoupled / 0.11"}, d5, CFG, s) for s in (0, 1)]
    jobs += [runner.Job({"part": "real", "set": "1"}, d1, CFG, s) for s in (0, 1, 2)]
    jobs += [runner.Job({"part": "grid", "set": "1 / 0.005"}, d5, CFG, 0)]  # one seed: left out
    jobs += [runner.Job({"part": "ceiling", "set": R.CEILING}, d5, CFG, s) for s in (0, 1)]
    jobs += [runner.Job({"part": "continual", "set": "dwa", "task": 1, "classes": 2}, d1, CFG, s) for s in (0, 1)]
    cell = pr.dwa_cell(jobs)
    cells = [cell(j) for j in jobs]
    assert cells[0] == {"method": "sweep: dwa / decoupled / 0.11", "ipc": 5, "student": "convnet"}
    assert cells[2] == {"method": "real: 1", "ipc": 1, "student": "convnet"}
    assert cells[5:] == [None] * 5
    assert pr.dwa_cell(jobs, min_seeds=1)(jobs[5]) is not None


# ------------------------------------------------------------------------------------ label distillation


def test_label_distillation_uses_the_stage_convention_and_adds_only_the_pool(monkeypatch):
    images, labels = _data(n=400)
    base = coresets.random_real(images, labels, 1, 10, MEAN, STD)
    sets = {
        ("within", "LD-RR"): base,
        ("within", "LD second-order"): base,
        ("within", pr.LD_TRUE): base,
        ("cross", "LD-RR"): base,
        ("cross", pr.LD_MAPPED): base,
    }
    acc = {
        ("within", "LD-RR"): 0.7,
        ("within", "LD second-order"): 0.65,
        ("within", pr.LD_TRUE): 0.6,
        ("cross", "LD-RR"): 0.5,
        ("cross", pr.LD_MAPPED): 0.3,
    }
    rows = [
        {"base": b, "labels": n, "student": st, "optimizer": "adam", "mult": 1.0, "seed": s, "acc": a + s / 100}
        for (b, n), a in acc.items()
        for s in (0, 1)
        for st in ("lenet", "mlp")
    ]
    rows.append(
        {
            "base": "within",
            "labels": "LD-RR",
            "student": "lenet",
            "optimizer": "sgd",
            "mult": 1.0,
            "seed": 0,
            "acc": 0.1,
        }
    )
    ran = []

    def fake(js, x, y, workers=2):
        ran.extend(js)
        return [{**j.key, "seed": j.seed, "acc": 0.9} for j in js]

    monkeypatch.setattr(runner, "evaluate_many", fake)
    cfg = E.EvalConfig(arch="lenet", steps=6, batch_size=10, label_mode="soft")
    t, runs = pr.label_distillation(
        rows, sets, cfg, [0, 1], images, labels, images[:5].float(), labels[:5], student="lenet"
    )
    assert len(ran) == 2 and all(j.cfg == cfg.replace(label_mode="hard") and len(j.dset) == 60 for j in ran)
    assert len(runs) == 2
    t = t.set_index(["base", "method"])
    assert t.loc[("within", "LD-RR"), "IOR"] == pytest.approx(0.1)  # LD minus the true labels
    assert t.loc[("within", "LD-RR"), "HLR"] == pytest.approx(0.9 - 0.605)  # pool minus the true labels
    assert t.loc[("cross", "LD-RR"), "IOR"] == pytest.approx(-0.1)  # random arm: the within base, true labels
    assert t.loc[("cross", "LD-RR"), "HLR"] == pytest.approx(0.9 - 0.305)  # pool minus digit k -> class k
    assert t.loc[("within", "LD second-order"), "n"] == 2 and len(t) == 3
    assert (t["note"] == pr.LD_NOTE).all()


# -------------------------------------------------------------------------------- SLDD and TDD: HLR only


def test_sldd_ranking_frame_trains_the_argmax_labels_by_the_same_schedule(monkeypatch):
    g = torch.Generator().manual_seed(0)
    targets = torch.softmax(torch.randn(5, 10, generator=g) * 3, 1)
    rs = dd.DDResult(torch.randn(5, 1, 28, 28, generator=g), torch.arange(5), targets, torch.tensor([0.1, 0.2]))
    seen = []

    def fake(arch, thetas, x, t, lrs, steps, epochs, x_test, y_test):
        seen.append((t, lrs, steps, epochs, thetas))
        return [0.2 + 0.1 * i for i in range(len(thetas))]

    monkeypatch.setattr(dd, "eval_thetas", fake)
    acc = dd_experiment.Accuracies(0, {"fixed": ["own"], "random": [101, 102]})
    acc.record("sizes", "fixed", "SLDD", 5, [0.5])
    acc.record("sizes", "random", "SLDD", 5, [0.6, 0.4])
    acc.record("sizes", "random", "DD", 5, [0.9, 0.9])
    ev = {"fixed": ["th_own"], "random": ["th101", "th102"]}
    d = SimpleNamespace(x_test=None, te_y=None)
    df = dd_experiment.sldd_ranking_frame(
        {"SLDD M=5 fixed": rs, "SLDD M=5 random": rs}, d, ev, acc, 0.8, arch="lenet", sl_sizes=[5, 10], sl_epochs=2
    )
    assert all(
        torch.equal(t, targets.argmax(1)) and torch.equal(lrs, rs.lrs) and (st, ep) == (1, 2)
        for t, lrs, st, ep, _ in seen
    )
    assert [s[4] for s in seen] == [ev["fixed"], ev["random"]]
    assert set(df.loc[df["set"] == "full", "seed"]) == {"own", 101, 102}
    t = pr.ior_hlr_table(df, keys=["method", "M"], by=["regime"], full_by=[], ior_defined=False).set_index("regime")
    assert t.loc["fixed", "HLR"] == pytest.approx(0.6) and t.loc["fixed", "n"] == 1
    assert t.loc["random", "HLR"] == pytest.approx(0.8 - 0.25) and t.loc["random", "acc syn"] == pytest.approx(0.5)
    e = Effect.paired("HLR", {101: 0.8, 102: 0.8}, {101: 0.2, 102: 0.3})
    assert (t.loc["random", "HLR low"], t.loc["random", "HLR high"]) == pytest.approx(e.interval)
    assert t["IOR"].isna().all()


def _tdd(init="fixed", rep=0):
    g = torch.Generator().manual_seed(rep)
    return textdd.TextDistilled(
        torch.randn(6, 4, 3, generator=g),
        torch.randn(6, 6, generator=g) * 3,
        torch.tensor([0.3, 0.2]),
        1,
        2,
        "textconvnet",
        {"filters": 4},
        init,
        0,
        True,
        "TDD",
    )


def test_tdd_hard_labels_are_exact_one_hot_over_all_classes():
    ds = _tdd()
    ds.labels[:, 5] = -100.0  # no sentence's argmax is the last class
    h = textdd.with_hard_labels(ds)
    assert h.num_classes == 6 and torch.equal(h.hard_labels(), ds.hard_labels())
    assert torch.equal(h.targets(), torch.nn.functional.one_hot(ds.hard_labels(), 6).float())
    assert h.method == "TDD (argmax hard labels)" and torch.equal(h.lrs, ds.lrs) and h.init == ds.init
    r = {"method": "TDD", "distilled with": "textconvnet", "init": "fixed", "ipc": 1, "rep": 0}
    calls = text_experiment.hard_label_calls([(r, ds), ({**r, "method": "DD (hard labels)"}, ds)], "x", "y", [0, 1])
    assert len(calls) == 1 and calls[0][0] is textdd.evaluate_set and calls[0][1][0].method == h.method


def test_tdd_ranking_frame_pairs_the_schedule_runs_with_the_full_train_bound():
    base = {"distilled with": "textconvnet", "init": "fixed", "ipc": 1, "rep": 0, "learner": "textconvnet"}
    res = pd.DataFrame(
        [{**base, "method": "TDD", "set": "TDD", "protocol": "schedule", "theta0": "fixed", "seed": 0, "acc": 0.5}]
        + [
            {**base, "method": "TDD", "set": "TDD", "protocol": "schedule", "theta0": "fresh", "seed": s, "acc": a}
            for s, a in ((0, 0.4), (1, 0.6))
        ]
        + [
            {
                **base,
                "method": "random real",
                "set": "TDD",
                "protocol": "schedule",
                "theta0": "fresh",
                "seed": 0,
                "acc": 0.3,
            }
        ]
        + [{**base, "method": "TDD", "set": "TDD", "protocol": "adam", "theta0": "fresh", "seed": 0, "acc": 0.2}]
        + [
            {
                **base,
                "method": "full train",
                "set": "full train",
                "protocol": "adam",
                "theta0": "fresh",
                "learner": ln,
                "distilled with": "-",
                "init": "-",
                "ipc": 40,
                "seed": s,
                "acc": a,
            }
            for ln, s, a in (("textconvnet", 0, 0.9), ("textconvnet", 1, 0.8), ("bilstm", 0, 0.1), ("bilstm", 1, 0.1))
        ]
    )
    hard = [
        {
            **base,
            "method": "TDD (argmax hard labels)",
            "set": "TDD (argmax hard labels)",
            "protocol": "schedule",
            "theta0": t,
            "seed": s,
            "acc": a,
        }
        for t, s, a in (("fixed", 0, 0.45), ("fresh", 0, 0.3), ("fresh", 1, 0.2))
    ]
    df = text_experiment.ranking_frame(res, hard)
    t = pr.ior_hlr_table(
        df, by=["distilled with", "init", "rep", "theta0"], full_by=["distilled with"], ior_defined=False
    ).set_index("theta0")
    assert t.loc["fixed", "HLR"] == pytest.approx(0.9 - 0.45) and t.loc["fixed", "n"] == 1
    assert t.loc["fresh", "HLR"] == pytest.approx(((0.9 - 0.3) + (0.8 - 0.2)) / 2)
    assert t.loc["fresh", "acc syn"] == pytest.approx(0.5) and t.loc["fresh", "seeds"] == "0, 1"
    assert t["IOR"].isna().all() and set(t["method"]) == {"TDD"}
