"""DD-Ranking's IOR, HLR and label-robust score (compendium.distill.ranking) and the stage table with paired
intervals over matched seeds (compendium.pipeline.ranking)."""

import doctest
import math

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from compendium.distill import coresets
from compendium.distill import evaluate as E
from compendium.distill import ranking
from compendium.pipeline import ranking as pr
from compendium.distill import records as R
from compendium.verdicts.claims import Effect

E1 = math.exp(-1.0)


def lrs_by_hand(i, h, w=0.5):
    a = w * i - (1 - w) * h
    return (math.exp(a) - E1) / (math.e - E1)


# ------------------------------------------------------------------------------------------- the metrics


def test_doctests_of_the_module():
    assert doctest.testmod(ranking).failed == 0


def test_ior_hlr_and_score_by_hand():
    assert ranking.ior(0.70, 0.60) == pytest.approx(0.10)
    assert ranking.hlr(0.90, 0.50) == pytest.approx(0.40)
    # alpha = 0.5 * 0.1 - 0.5 * 0.4 = -0.15: (e^-0.15 - e^-1) / (e - e^-1) = (0.860708 - 0.367879) / 2.350402
    assert ranking.label_robust_score(0.10, 0.40) == pytest.approx(0.209679, abs=1e-6)
    assert ranking.dd_ranking_score(0.10, 0.40) == ranking.label_robust_score(0.10, 0.40)
    assert ranking.label_robust_score(0.0, 0.0) == pytest.approx(1 / (1 + math.e))


def test_score_spans_zero_to_one_at_the_extremes_and_weights_the_terms():
    assert ranking.label_robust_score(1.0, 0.0, weight=1.0) == pytest.approx(1.0)  # alpha = 1
    assert ranking.label_robust_score(0.0, 1.0, weight=0.0) == pytest.approx(0.0)  # alpha = -1
    assert ranking.label_robust_score(1.0, -1.0) == pytest.approx(1.0)
    assert ranking.label_robust_score(-1.0, 1.0) == pytest.approx(0.0)
    # w = 0.8 weighs IOR: alpha = 0.8 * 0.2 - 0.2 * 0.3 = 0.1
    assert ranking.label_robust_score(0.2, 0.3, weight=0.8) == pytest.approx(lrs_by_hand(0.2, 0.3, 0.8))
    assert ranking.label_robust_score(0.2, 0.3, weight=0.8) == pytest.approx((math.exp(0.1) - E1) / (math.e - E1))
    with pytest.raises(ValueError, match=r"weight w must lie in \[0, 1\]"):
        ranking.label_robust_score(0.1, 0.1, weight=1.5)


def test_metrics_work_elementwise_per_seed():
    np.testing.assert_allclose(ranking.ior([0.6, 0.7], [0.5, 0.5]), [0.1, 0.2])
    np.testing.assert_allclose(ranking.hlr(0.8, [0.5, 0.6]), [0.3, 0.2])
    np.testing.assert_allclose(
        ranking.label_robust_score([0.1, 0.2], [0.3, 0.2]), [lrs_by_hand(0.1, 0.3), lrs_by_hand(0.2, 0.2)]
    )


@pytest.mark.parametrize(
    "call", [lambda: ranking.ior(68.4, 60.0), lambda: ranking.hlr(84.1, 0.5), lambda: ranking.ior(0.6, 55.0)]
)
def test_percentages_are_refused_with_a_clear_error(call):
    with pytest.raises(ValueError, match=r"fractions in \[0, 1\].*percentages\? divide by 100"):
        call()


def test_scores_of_percentage_differences_and_bad_values_are_refused():
    with pytest.raises(ValueError, match=r"IOR must lie in \[-1, 1\].*percent"):
        ranking.label_robust_score(7.0, 3.0)
    with pytest.raises(ValueError, match="fractions"):
        ranking.ior(-0.1, 0.5)
    with pytest.raises(ValueError, match="finite"):
        ranking.hlr(float("-inf"), 0.5)
    assert math.isnan(ranking.ior(float("nan"), 0.5))  # a missing arm passes as NaN


# --------------------------------------------------------------------------------- pairing over seeds


def frame(rows):
    return pd.DataFrame(rows, columns=["method", "ipc", "student", "evaluation", "set", "seed", "acc"])


def arms(
    method="m",
    ipc=1,
    student="convnet",
    syn=(0.60, 0.64, 0.70),
    rnd=(0.50, 0.50, 0.52),
    hard=(0.40, 0.42, 0.45),
    full=(0.80, 0.82, 0.81),
    seeds=(0, 1, 2),
    random_seeds=None,
    full_ipc=0,
):
    rows = [(method, ipc, student, "teacher", "distilled", s, a) for s, a in zip(seeds, syn)]
    rows += [(method, ipc, student, "hard", "distilled", s, a) for s, a in zip(seeds, hard)]
    rows += [("random real", ipc, student, "teacher", "random", s, a) for s, a in zip(random_seeds or seeds, rnd)]
    rows += [("pool", full_ipc, student, "hard", "full", s, a) for s, a in zip(seeds, full)]
    return rows


def test_matched_runs_pairs_each_seed_by_hand():
    runs = ranking.matched_runs(frame(arms()))
    assert runs["seed"].tolist() == [0, 1, 2]
    np.testing.assert_allclose(runs["IOR"], [0.10, 0.14, 0.18])
    np.testing.assert_allclose(runs["HLR"], [0.40, 0.40, 0.36])
    np.testing.assert_allclose(runs["LRS"], [lrs_by_hand(i, h) for i, h in [(0.10, 0.40), (0.14, 0.40), (0.18, 0.36)]])
    assert set(runs["evaluation"]) == {"teacher"}


def test_only_seeds_every_arm_ran_are_paired():
    # the random arm ran seeds 1, 2, 3: seed 0 (no random) and 3 (no syn) are left out
    runs = ranking.matched_runs(frame(arms(rnd=(0.50, 0.52, 0.9), random_seeds=(1, 2, 3))))
    assert runs["seed"].tolist() == [1, 2]
    np.testing.assert_allclose(runs["IOR"], [0.64 - 0.50, 0.70 - 0.52])
    with pytest.raises(ValueError, match="share no seed"):
        ranking.matched_runs(frame(arms(random_seeds=(7, 8, 9))))


def test_arms_are_matched_by_ipc_and_student_never_mixed():
    ipc10 = [
        r for r in arms(ipc=10, syn=(0.7, 0.7, 0.7), rnd=(0.6, 0.6, 0.6)) if r[4] != "full"
    ]  # one full arm/student
    rows = arms(ipc=1, student="convnet") + ipc10
    rows += arms(ipc=1, student="resnet18", syn=(0.3, 0.3, 0.3), rnd=(0.2, 0.2, 0.2), full=(0.9, 0.9, 0.9))
    runs = ranking.matched_runs(frame(rows), by=["student"])
    cell = runs.set_index(["ipc", "student", "seed"])
    assert cell.loc[(10, "convnet", 0), "IOR"] == pytest.approx(0.1)
    assert cell.loc[(1, "resnet18", 0), "IOR"] == pytest.approx(0.1)
    assert cell.loc[(1, "resnet18", 0), "HLR"] == pytest.approx(0.9 - 0.40)
    assert cell.loc[(1, "convnet", 1), "HLR"] == pytest.approx(0.82 - 0.42)
    assert len(runs) == 9


def test_a_random_arm_under_another_label_mode_does_not_count():
    rows = [r if r[4] != "random" else (*r[:3], "soft", *r[4:]) for r in arms()]
    with pytest.raises(ValueError, match=r"no rows for the arm\(s\) \['random'\]"):
        ranking.matched_runs(frame(rows))


def test_missing_arms_duplicates_and_percentages_in_the_frame_raise():
    with pytest.raises(ValueError, match=r"\['syn hard'\]"):
        ranking.matched_runs(frame([r for r in arms() if not (r[3] == "hard" and r[4] == "distilled")]))
    with pytest.raises(ValueError, match="more than one row for seed"):
        ranking.matched_runs(frame(arms() + [("m", 1, "convnet", "teacher", "distilled", 0, 0.6)]))
    with pytest.raises(ValueError, match="percentages"):
        ranking.matched_runs(frame(arms(syn=(60.0, 64.0, 70.0))))
    with pytest.raises(ValueError, match="exactly one soft/teacher evaluation"):
        ranking.matched_runs(frame(arms() + [("m", 1, "convnet", "soft", "distilled", 0, 0.6)]))


def test_a_hard_label_method_gets_ior_on_hard_labels():
    rows = [
        ("m", 1, "s", "hard", "distilled", 0, 0.5),
        ("r", 1, "s", "hard", "random", 0, 0.4),
        ("p", 0, "s", "hard", "full", 0, 0.8),
    ]
    runs = ranking.matched_runs(frame(rows))
    assert runs.loc[0, "evaluation"] == "hard"
    assert runs.loc[0, "IOR"] == pytest.approx(0.1) and runs.loc[0, "HLR"] == pytest.approx(0.3)


# --------------------------------------------------------------------------- the table with intervals


def test_table_intervals_are_the_paired_t_intervals_over_matched_seeds():
    t = pr.ior_hlr_table(frame(arms()), by=["student"])
    assert len(t) == 1
    r = t.iloc[0]
    assert r["seeds"] == "0, 1, 2" and r["n"] == 3 and r["evaluation"] == "teacher"
    d = np.array([0.10, 0.14, 0.18])
    hw = stats.t.ppf(0.975, 2) * d.std(ddof=1) / math.sqrt(3)
    assert r["IOR"] == pytest.approx(0.14)
    assert (r["IOR low"], r["IOR high"]) == pytest.approx((0.14 - hw, 0.14 + hw))
    e = Effect.paired("HLR", {0: 0.80, 1: 0.82, 2: 0.81}, {0: 0.40, 1: 0.42, 2: 0.45})
    assert (r["HLR"], r["HLR low"], r["HLR high"]) == pytest.approx((e.mean, *e.interval))
    assert r["acc syn"] == pytest.approx(np.mean([0.60, 0.64, 0.70]))
    assert r["acc full hard"] == pytest.approx(0.81)
    # the score is the mean of the per-seed scores (DD-Ranking), not the score of the means
    per_seed = [lrs_by_hand(i, h) for i, h in [(0.10, 0.40), (0.14, 0.40), (0.18, 0.36)]]
    assert r["LRS"] == pytest.approx(np.mean(per_seed))
    assert r["LRS"] != pytest.approx(lrs_by_hand(0.14, np.mean([0.40, 0.40, 0.36])), abs=1e-9)
    assert r["LRS low"] < r["LRS"] < r["LRS high"]


def test_one_seed_gives_no_interval():
    t = pr.ior_hlr_table(frame(arms(syn=(0.6,), rnd=(0.5,), hard=(0.4,), full=(0.8,), seeds=(3,))))
    assert t.loc[0, "IOR"] == pytest.approx(0.1) and math.isnan(t.loc[0, "IOR low"])


# ------------------------------------------------------------------------------------ the stage's jobs


def test_jobs_add_hard_random_and_real_pool_arms_on_the_same_seeds():
    g = torch.Generator().manual_seed(0)
    labels = torch.arange(10).repeat(30)
    images = torch.randint(0, 256, (300, 1, 8, 8), dtype=torch.uint8, generator=g)
    mean, std = (0.3,), (0.3,)
    sets = {
        ("sre2l", 1): coresets.random_real(images, labels, 1, 10, mean, std, seed=9),
        ("dwa", 2): coresets.random_real(images, labels, 2, 10, mean, std, seed=8),
    }
    cfg = E.EvalConfig(steps=5, batch_size=8, label_mode="teacher", temperature=4.0)
    teacher = torch.nn.Linear(1, 1)
    jobs = pr.ior_hlr_jobs(sets, {"convnet": cfg}, [0, 1], teacher, images, labels, mean, std)
    kinds = pd.DataFrame(
        [
            {**j.key, "seed": j.seed, "mode": j.cfg.label_mode, "teacher": j.teacher is not None, "n": len(j.dset)}
            for j in jobs
        ]
    )
    assert len(jobs) == 2 * 2 + 2 * 2 + 2  # hard per set and seed, random per ipc and seed, the pool per seed
    hard = kinds[kinds["set"] == "distilled"]
    assert set(hard["mode"]) == {"hard"} and not hard["teacher"].any()
    rnd = kinds[kinds["set"] == "random"]
    assert set(rnd["mode"]) == {"teacher"} and rnd["teacher"].all() and set(rnd["labels"]) == {"teacher"}
    assert sorted(zip(rnd["ipc"], rnd["n"])) == [(1, 10), (1, 10), (2, 20), (2, 20)]
    full = kinds[kinds["set"] == "full"]
    assert set(full["n"]) == {40} and set(full["method"]) == {R.CEILING} and set(full["mode"]) == {"hard"}
    # everything but the label mode is the stage's config; a fresh random subset per seed
    assert all(j.cfg.replace(label_mode="teacher") == cfg for j in jobs)
    r0, r1 = [j.dset for j in jobs if j.key["set"] == "random" and j.key["ipc"] == 2]
    assert not torch.equal(r0.images, r1.images)
    assert torch.equal(torch.bincount(r0.labels, minlength=10), torch.full((10,), 2))


def test_long_frame_keeps_the_methods_own_rows_as_distilled():
    own = [
        {"method": "dwa", "ipc": 1, "student": "convnet", "labels": "teacher", "seed": 0, "acc": 0.6},
        {"method": R.REAL_INIT, "ipc": 1, "student": "convnet", "labels": "teacher", "seed": 0, "acc": 0.5},
    ]
    extra = [
        {"method": "dwa", "ipc": 1, "student": "convnet", "labels": "hard", "set": "distilled", "seed": 0, "acc": 0.4},
        {
            "method": pr.RANDOM_REAL,
            "ipc": 1,
            "student": "convnet",
            "labels": "teacher",
            "set": "random",
            "seed": 0,
            "acc": 0.5,
        },
        {"method": R.CEILING, "ipc": 0, "student": "convnet", "labels": "hard", "set": "full", "seed": 0, "acc": 0.8},
    ]
    df = pr.long_frame(own, extra, ["dwa"])
    assert list(df.columns) == ["method", "ipc", "student", "evaluation", "set", "seed", "acc"]
    assert R.REAL_INIT not in set(df["method"])
    t = pr.ior_hlr_table(df, by=["student"])
    assert t.loc[0, "IOR"] == pytest.approx(0.1) and t.loc[0, "HLR"] == pytest.approx(0.4)
