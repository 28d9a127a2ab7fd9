"""The experiment protocol of the ReLA tables (compendium.rela.experiment), the paper tables and the
representation-similarity measures."""

import math

import pandas as pd
import pytest
import torch

from compendium.core import paths, probe
from compendium.pipeline import paper_tables as PT
from compendium.rela import experiment, priors, replicates, similarity, tables, targets


def tiny_setup(n=192, **kw):
    g = torch.Generator().manual_seed(0)
    images = torch.randint(0, 256, (n, 1, 12, 12), generator=g, dtype=torch.uint8)
    labels = torch.arange(n) % 4
    settings = dict(epochs=2, batch_size=32, head_mult=0.1, probe_epochs=2, num_classes=4, device="cpu")
    settings.update(kw)
    return experiment.Setup(images, labels, images[:64], labels[:64], (0.5,), (0.25,), **settings)


KW = dict(width=4, depth=2, norm="batch", global_pool=True)


def test_gap_closure_and_matching_budget():
    assert experiment.gap_closure(0.8, 0.6, 0.9) == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        experiment.gap_closure(0.8, 0.9, 0.9)
    assert experiment.matching_budget([0.5, 0.1, 0.2], [0.9, 0.7, 0.85], 0.84) == 0.2
    assert experiment.matching_budget([0.1, 0.2], [0.7, 0.8], 0.9) is None


def test_marks_bold_the_best_and_underline_what_beats_full():
    m = experiment.mark({"a": 0.5, "b": 0.9, "c": 0.8}, full=0.85)
    assert m["b"] == ("**<u>", "</u>**")
    assert m["c"] == ("", "") and m["a"] == ("", "")
    assert experiment.cell_text(0.8123, 0.0042, 3) == "81.2 ± 0.4 (3 seeds)"
    assert experiment.cell_text(0.8123, 0.0, 1) == "81.2 (1 seed)"


@pytest.mark.parametrize("kw", [dict(schedule="cosine"), dict(budget=0.0), dict(budget=1.5), dict(budget_mode="fixed")])
def test_arm_rejects_bad_settings(kw):
    with pytest.raises(ValueError):
        experiment.Arm("x", **kw)


def test_run_untrained_byol_and_rela_arms():
    s = tiny_setup()
    bank = targets.TargetBank(s)
    untrained = experiment.run(experiment.Arm("u", arch_kwargs=KW, untrained=True), s)
    assert untrained.row["steps"] == 0 and 0 <= untrained.row["probe"] <= 1
    byol = experiment.run(experiment.Arm("b", arch_kwargs=KW, budget=0.5), s, keep_backbone=True)
    # budget 0.5 of 192 images at batch 32: 3 steps per epoch, 2 epochs
    assert byol.row["steps"] == 6 and byol.backbone is not None
    r = experiment.run(experiment.Arm("r", arch_kwargs=KW, budget=0.5, prior="rand", schedule="first", w=0.5), s, bank)
    assert r.row["steps"] == 6 and r.row["switch step"] == 3
    assert [st["lam"] for st in r.steps] == [1.0] * 3 + [0.0] * 3
    assert bank.made and bank.made[0]["prior"] == "rand" and bank.made[0]["n"] == 4
    with pytest.raises(ValueError, match="TargetBank"):
        experiment.run(experiment.Arm("r", arch_kwargs=KW, prior="rand"), s)


def test_rand_prior_is_the_students_own_initial_network():
    s = tiny_setup()
    bank = targets.TargetBank(s)
    arm = experiment.Arm("r", arch_kwargs=KW, prior="rand", seed=3)
    student = experiment.build_student(arm, s)
    t = bank.get("rand", student, "convnet", arm.student_kwargs(s), 3)
    student.eval()
    with torch.no_grad():
        feats = student(probe.to_float(s.images, s.mean, s.std))
    ours = targets.make_targets(targets.Prior("x", student, 4, 12, 1, s.mean, s.std), s.images, 4).values
    assert torch.allclose(t, ours, atol=1e-5)
    assert feats.shape == (len(s.images), 4)


def test_target_bank_reads_the_priors_index(tmp_path):
    s = tiny_setup()
    t = torch.randn(len(s.images), 4)
    torch.save({"values": t}, tmp_path / "t.pt")
    entry = {
        "prior": "trained:priors/p.pt",
        "file": "t.pt",
        "n": 4,
        "prior_dim": 8,
        "order": "code",
        "seed": 0,
        "student": {"in_channels": 1, "image_size": 12, **KW},
        "arch": "convnet",
    }
    targets.write_index(
        tmp_path / "index.json",
        dataset="fashion-mnist",
        mean=(0.5,),
        std=(0.25,),
        indices=list(range(len(s.images))),
        targets=[entry],
    )
    bank = targets.TargetBank(s, tmp_path / "index.json")
    student = experiment.build_student(experiment.Arm("x", arch_kwargs=KW), s)
    assert torch.equal(bank.get("trained:priors/p.pt", student, "convnet", {}, 0), t)
    targets.write_index(
        tmp_path / "index.json", dataset="fashion-mnist", mean=(0.5,), std=(0.25,), indices=[0, 1], targets=[entry]
    )
    with pytest.raises(ValueError, match="for 2 images"):
        targets.TargetBank(s, tmp_path / "index.json")
    with pytest.raises(FileNotFoundError, match="priors"):
        targets.TargetBank(s, tmp_path / "missing.json")


def test_results_do_not_depend_on_the_number_of_workers():
    s = tiny_setup()
    arms = [
        experiment.Arm("b", arch_kwargs=KW, budget=0.5),
        experiment.Arm("r", arch_kwargs=KW, budget=0.5, prior="rand"),
        experiment.Arm("u", arch_kwargs=KW, untrained=True),
    ]
    one = experiment.run_many(arms, s, targets.TargetBank(s), workers=1)
    two = experiment.run_many(arms, s, targets.TargetBank(s), workers=2)
    assert [r.row["probe"] for r in one] == [r.row["probe"] for r in two]
    assert [r.row["arm"] for r in two] == ["b", "r", "u"]
    with pytest.raises(ValueError, match="share a name"):
        experiment.run_many([arms[0], arms[0]], s, workers=0)


def test_seed_stats():
    df = pd.DataFrame({"k": ["a", "a", "b"], "probe": [0.5, 0.7, 0.9]})
    st = experiment.seed_stats(df, ["k"]).set_index("k")
    assert st.loc["a", "mean"] == pytest.approx(0.6) and st.loc["a", "std"] == pytest.approx(math.sqrt(0.02))
    assert st.loc["b", "std"] == 0 and st.loc["b", "count"] == 1


def test_paper_tables_parse_and_give_the_93_percent_gap_closure():
    for name in PT.TABLES:
        t = PT.table(name)
        assert len(t) >= 6 and t.shape[1] >= 8
    v = lambda col, pct="10": PT.value(PT.cell("v2_table1", {"Data": "CF-10", "%": pct}, col))
    assert (v("CF10-T") - v("BYOL")) / (v("BYOL*") - v("BYOL")) == pytest.approx(0.934, abs=1e-3)
    assert PT.value("") is None
    with pytest.raises(KeyError):
        PT.table("v3_table9")


def test_linear_cka():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(500, 8, generator=g)
    q, _ = torch.linalg.qr(torch.randn(8, 8, generator=g))
    assert similarity.linear_cka(x, 3 * x @ q + 1) == pytest.approx(1.0, abs=1e-9)
    assert similarity.linear_cka(x, torch.randn(500, 8, generator=g)) < 0.1


def test_transport_similarity_is_high_for_a_linear_map_and_low_for_noise():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1000, 6, generator=g)
    y = x @ torch.randn(6, 6, generator=g) + 0.5
    assert similarity.transport_similarity(x[:500], y[:500], x[500:], y[500:]) > 0.99
    z = torch.randn(1000, 6, generator=g)
    assert similarity.transport_similarity(z[:500], y[:500], z[500:], y[500:]) < 0.2


def test_an_arm_reuses_a_prior_trained_exactly_as_it_would_be(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.OUTPUT_ROOT_ENV, str(tmp_path / "out"))
    s = tiny_setup()
    arm = experiment.Arm("full", arch_kwargs=KW, budget=1.0)
    bb = experiment.build_student(arm, s)
    torch.nn.init.constant_(next(bb.parameters()), 0.5)
    spec = "trained:priors/byol_star.pt"
    target = paths.artifacts_out() / "priors" / "byol_star.pt"
    priors.save_backbone(
        bb, target, "convnet", arm.student_kwargs(s), s.mean, s.std, 12, train=experiment.train_record(arm, s)
    )  # a checkpoint's sidecar holds no timings
    assert experiment.reusable(spec, arm, s)
    assert not experiment.reusable(spec, experiment.Arm("full", arch_kwargs=KW, budget=1.0, seed=1), s)
    assert not experiment.reusable(spec, experiment.Arm("full", arch_kwargs=KW, budget=0.5), s)
    arm.reuse = spec
    r = experiment.run(arm, s, keep_backbone=True)
    assert torch.equal(next(r.backbone.parameters()), next(bb.parameters()))
    assert r.row["steps"] == 2 * (192 // 32) and r.row["reused"] == spec
    with pytest.raises(ValueError, match="not trained as"):
        experiment.run(experiment.Arm("other", arch_kwargs=KW, budget=1.0, seed=2, reuse=spec), s)


def test_replicate_specs_name_a_seed_beside_the_prior():
    assert (
        replicates.replicate_spec("trained:priors/fmnist_byol.pt", 2) == "trained:prior_replicates/fmnist_byol_seed2.pt"
    )
    with pytest.raises(ValueError, match="only a trained"):
        replicates.replicate_spec("rand:convnet", 1)


def test_byol_star_on_a_later_seed_reuses_the_priors_stage_replicate(tmp_path, monkeypatch):
    """train_byol writes the record that an arm trained the same way has, so Table 1's BYOL* arm on seed 1
    reuses the seed-1 replicate (seed 0 the prior itself), and the arm of a seed without one trains."""
    monkeypatch.setenv(paths.OUTPUT_ROOT_ENV, str(tmp_path / "out"))
    s = tiny_setup(epochs=1, head_mult=1.0)
    kw = {"in_channels": 1, "image_size": 12, **KW}
    same = "trained:priors/fmnist_byol.pt"
    rep = replicates.replicate_spec(same, 1)
    for seed, spec in ((0, same), (1, rep)):
        record, seconds, loss = replicates.train_byol(
            s.images,
            kw,
            s.mean,
            s.std,
            epochs=1,
            batch_size=s.batch_size,
            seed=seed,
            out=paths.artifacts_out() / spec.partition(":")[2],
            device="cpu",
            name=f"t{seed}",
        )
        assert seconds > 0 and math.isfinite(loss) and record["seed"] == seed
    arms = tables.budget_arms(
        s,
        KW,
        seeds=[0, 1, 2],
        full_seeds=3,
        budgets=[0.5],
        priors=[],
        headline_budget=0.5,
        same_dataset_prior=same,
        schedule="switch",
        label=str,
    )
    assert {a.seed: a.reuse for a in arms if a.name == "BYOL 100%"} == {0: same, 1: rep, 2: ""}
    assert replicates.byol_star_specs("rand", 1) == []


def test_rand_of_another_architecture_comes_from_the_index(tmp_path):
    s = tiny_setup()
    t = torch.randn(len(s.images), 4)
    torch.save({"values": t}, tmp_path / "r.pt")
    entry = {
        "prior": "rand",
        "file": "r.pt",
        "n": 4,
        "prior_dim": 4,
        "order": "code",
        "seed": 0,
        "student": {"in_channels": 1, "image_size": 12, **KW},
        "arch": "convnet",
    }
    targets.write_index(
        tmp_path / "index.json",
        dataset="fashion-mnist",
        mean=(0.5,),
        std=(0.25,),
        indices=list(range(len(s.images))),
        targets=[entry],
    )
    bank = targets.TargetBank(s, tmp_path / "index.json")
    other = experiment.Arm("r", arch="resnet18", arch_kwargs=dict(width_mult=0.125), prior="rand:convnet")
    student = experiment.build_student(other, s)
    assert torch.equal(bank.get("rand:convnet", student, "resnet18", other.student_kwargs(s), 0), t)
    with pytest.raises(ValueError, match="no such random network"):
        bank.get("rand:convnet", student, "resnet18", other.student_kwargs(s), 5)
