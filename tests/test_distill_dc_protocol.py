"""DC's evaluation protocol study: the coresets evaluated as DC and DSA evaluate every set, and their records."""

import pandas as pd
import pytest
import torch

from compendium.distill import dc_protocol as D
from compendium.distill import evaluate as E
from compendium.distill import protocol_sets, regime
from test_distill_regime import toy  # noqa: F401, F811  (the study's toy image sets, a fixture)


@pytest.fixture
def dc_toy(toy, tmp_path):  # noqa: F811  (pytest passes the fixture imported above)
    """The labelled regime study's toy image sets, a feature network and a tiny plan."""
    net = E.build_student(regime.teacher_config(regime.Plan(), 1), (1, 28, 28), 10, seed=0)
    torch.save(net.state_dict(), tmp_path / "net.pt")
    return D.Plan(seeds=(0,), ipcs=(1, 2), width=4, epochs=2), tmp_path


def test_the_papers_evaluation_is_dcs_protocol_on_the_official_network():
    cfg = D.eval_config(D.Plan())
    assert (
        cfg.optimizer,
        cfg.lr,
        cfg.momentum,
        cfg.weight_decay,
        cfg.batch_size,
        cfg.epochs,
        cfg.schedule,
        cfg.augmentation,
        cfg.label_mode,
    ) == ("sgd", 0.01, 0.9, 5e-4, 256, 300, "step", "none", "hard")
    assert cfg.arch_kwargs == dict(width=128, depth=3, norm="instance", pooling="avg", first_padding=3)


def test_every_coreset_is_one_record_written_as_it_finishes_and_a_second_call_runs_nothing(dc_toy):
    plan, tmp = dc_toy
    written = D.run_pieces(plan, root=tmp / "rec", net_file=tmp / "net.pt")
    assert [p.name for p in written] == [f"{m}-ipc-{i}__seed0.csv" for i in (1, 2) for m in plan.methods]
    rec = D.load(tmp / "rec")
    assert rec["test acc"].between(0, 1).all() and set(rec["test images"]) == {50}
    assert D.run_pieces(plan, root=tmp / "rec", net_file=tmp / "net.pt") == []
    t = D.summary(rec, pd.DataFrame([{"method": "random", "ipc": 1, "acc": 0.5}]))
    assert list(t.columns[:5]) == [
        "method",
        "images per class",
        "seeds",
        "ours, DC's protocol",
        "ours, the pipeline's evaluation",
    ]
    assert t.set_index(["method", "images per class"]).loc[("random", 1), "ours, the pipeline's evaluation"] == "50.0"
    # the papers print no number at 2 per class
    assert t[t["images per class"] == 2]["paper's DC, same ipc"].isna().all()
    assert D.summary(rec[rec["ipc"] == 1])["paper's DSA, same ipc"].tolist() == [70.6] * 3


def test_a_missing_feature_network_is_named_before_any_training(dc_toy):
    plan, tmp = dc_toy
    with pytest.raises(FileNotFoundError, match="python -m compendium.distill.regime"):
        D.run_pieces(plan, root=tmp / "rec", net_file=tmp / "absent.pt")
    assert not (tmp / "rec").exists()


def test_the_evaluation_effect_and_the_gap_it_explains():
    import pandas as pd

    rec = pd.DataFrame(
        [
            {"method": m, "ipc": 10, "seed": s, "test acc": a + 0.01 * s}
            for m, a in (("random", 0.74), ("herding", 0.77), ("k_center", 0.64))
            for s in range(3)
        ]
    )
    pipe = pd.DataFrame(
        [
            {"method": m, "ipc": 10, "acc": a + 0.01 * s}
            for m, a in (("random", 0.68), ("herding", 0.70), ("k_center", 0.39))
            for s in range(3)
        ]
    )
    e = D.evaluation_effect(rec, pipe)
    r = e.set_index("method")
    assert abs(r.loc["random", "DC's protocol − the pipeline's evaluation"] - 6.0) < 1e-9
    assert r.loc["herding", "low"] < 7.0 < r.loc["herding", "high"]
    g = D.gap_table(e, {"DC": {10: 70.3}, "DSA": {10: 72.1}}).set_index(["method", "images per class"])
    dc = g.loc[("DC", 10)]
    assert abs(dc["gap"] - 12.0) < 1e-9 and abs(dc["evaluation effect (coresets)"] - 6.5) < 1e-9  # random, herding
    assert abs(dc["left after the evaluation"] - 5.5) < 1e-9 and dc["measured on"] == "herding, random"
    assert g.loc[("DC", 50), "measured on"] == "no coreset record yet"


def test_the_pipelines_dc_and_dsa_numbers_are_read_where_the_run_has_them():
    import pandas as pd

    classic = pd.DataFrame(
        {
            "method": ["random", "DC", "DSA"],
            "ipc 1": ["38.4 ± 1.2", "**<u>43.1 ± 2.5</u>**", ""],
            "ipc 10": ["67.8", "70.3 ± 0.5", "72.1 ± 0.3"],
        }
    )  # a smoke run: no ipc 50
    assert D.pipeline_numbers(classic) == {"DC": {1: 43.1, 10: 70.3}, "DSA": {10: 72.1}}
    assert D.pipeline_numbers(pd.DataFrame()) == {}
    g = D.gap_table(
        D.evaluation_effect(
            pd.DataFrame(columns=["method", "ipc", "seed", "test acc"]), pd.DataFrame(columns=["method", "ipc", "acc"])
        ),
        D.pipeline_numbers(classic),
    )
    assert len(g) == 6 and g["gap"].isna().sum() == 3  # the ipcs the run did not have stay empty


def test_forgetting_and_the_whole_dataset_row_are_records_too_and_the_history_is_recorded_once(dc_toy, monkeypatch):
    plan, tmp = dc_toy
    from compendium.distill import coresets

    calls = []
    real = coresets.forgetting_history

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(coresets, "forgetting_history", counted)
    monkeypatch.setattr(D, "FORGETTING", coresets.ForgettingConfig(epochs=2, width=4))
    plan = D.Plan(seeds=(0,), ipcs=(1,), methods=("forgetting", "whole"), width=4, epochs=2, whole_epochs=2)
    assert plan.jobs() == [("forgetting", 1, 0), ("whole", D.WHOLE_IPC, 0)]
    written = D.run_pieces(plan, root=tmp / "rec", net_file=tmp / "absent.pt")  # neither needs the feature network
    assert [p.name for p in written] == ["forgetting-ipc-1__seed0.csv", f"whole-ipc-{D.WHOLE_IPC}__seed0.csv"]
    assert (tmp / "rec" / D.FORGETTING_HISTORY.name).is_file() and len(calls) == 1
    curve = pd.read_csv(D.curve_file(0, tmp / "rec"))
    assert list(curve["epoch"]) == [1.0, 2.0] and curve["test_acc"].between(0, 1).all()
    rec = D.load(tmp / "rec").set_index("method")
    assert rec.loc["whole", "epochs"] == 2 and rec.loc["forgetting", "epochs"] == 2
    nl = D.never_learned(regime._data()[0].labels, tmp / "rec" / D.FORGETTING_HISTORY.name)
    assert list(nl.columns) == ["class", "never learned"] and nl["never learned"].between(0, 50).all()
    assert D.never_learned(regime._data()[0].labels, tmp / "absent.npz").empty
    # a second seed reads the committed history instead of recording it again
    D.run_pieces(D.Plan(seeds=(1,), ipcs=(1,), methods=("forgetting",), width=4, epochs=2), root=tmp / "rec")
    assert len(calls) == 1 and D.record_file("forgetting", 1, 1, tmp / "rec").is_file()


def test_forgetting_among_learned_images_leaves_the_never_learned_out():
    from compendium.distill import coresets

    labels = torch.arange(10).repeat_interleave(2)  # two images per class
    tr = type("Pool", (), {"images": torch.zeros(20, 1, 28, 28, dtype=torch.uint8), "labels": labels})
    hist = torch.ones(3, 20, dtype=torch.bool)
    hist[:, 0] = False  # class 0: image 0 never learned, image 1 forgotten once
    hist[1, 1] = False
    assert coresets.count_forgetting_events(hist)[:3].tolist() == [3, 1, 0]
    plain = D.select("forgetting", 1, 0, tr, (0.5,), (0.5,), None, hist)
    learned = D.select("forgetting_learned", 1, 0, tr, (0.5,), (0.5,), None, hist)
    assert 0 in plain.source_index.tolist() and 0 not in learned.source_index.tolist()
    assert 1 in learned.source_index.tolist() and learned.method == "forgetting_learned"


def small_batches(monkeypatch):
    monkeypatch.setattr(D, "SYNTHESES", {m: {**kw, "batch_real": 8, "batch_train": 8} for m, kw in D.SYNTHESES.items()})


def test_dcs_own_synthesis_is_evaluated_along_its_path_and_resumes_from_its_state(dc_toy, monkeypatch):
    _, tmp = dc_toy
    small_batches(monkeypatch)
    short = D.Plan(seeds=(0,), ipcs=(1,), methods=("dc",), width=4, epochs=2, snapshots=(2,), state_every=1)
    longer = D.Plan(seeds=(0,), ipcs=(1,), methods=("dc",), width=4, epochs=2, snapshots=(2, 4), state_every=1)
    assert D.synthesize_and_evaluate("dc", 1, 0, short, regime._data(), root=tmp / "a") is not None
    assert D.synthesize_and_evaluate("dc", 1, 0, longer, regime._data(), root=tmp / "a")["steps"] == 4  # resumed
    assert D.synthesize_and_evaluate("dc", 1, 0, longer, regime._data(), deadline=0.0, root=tmp / "b") is None
    written = D.run_pieces(longer, root=tmp / "b")  # from scratch, in one go
    assert [p.name for p in written] == ["dc-ipc-1__seed0.csv"]
    a, b = (D.load_snapshots(tmp / r) for r in ("a", "b"))
    assert list(b["iterations"]) == [2, 4] and a[["iterations", "test acc", "loss"]].equals(
        b[["iterations", "test acc", "loss"]]
    )
    assert D.load(tmp / "b").loc[0, "test acc"] == b.loc[1, "test acc"]
    assert D.run_pieces(longer, root=tmp / "b") == []
    # the finished run keeps its set (the last iteration's images, as its state holds them), for other studies
    kept = protocol_sets.finished_sets("dc", 1, [0, 1], tmp / "b", "fashion-mnist")
    state = torch.load(D.state_file("dc", 1, 0, tmp / "b"), weights_only=True)
    assert list(kept) == [0] and torch.equal(kept[0].images, state["images"]) and kept[0].params["iterations"] == 4
    # a run of older code kept none: the next run rebuilds it from the state, without running an iteration
    protocol_sets.set_file("dc", 1, 0, tmp / "b").unlink()
    assert D.unsaved_sets(longer, tmp / "b") == [("dc", 1, 0)] and D.unsaved_sets(longer, tmp / "a") == []
    assert [p.name for p in D.run_pieces(longer, root=tmp / "b")] == ["dc-ipc-1__seed0.pt"]
    assert torch.equal(protocol_sets.finished_sets("dc", 1, [0], tmp / "b")[0].images, kept[0].images)
    with pytest.raises(ValueError, match="has not finished"):  # an unfinished state has no set to keep
        D.save_finished_sets([("dc", 1, 0)], D.Plan(snapshots=(9,)), regime._data(), tmp / "b")
    with pytest.raises(SystemExit):
        D.main(["--methods", "dcc"])


def test_the_path_table_gives_each_snapshot_its_seeds_and_the_papers_number():
    snaps = pd.DataFrame(
        [
            {"method": "dc", "ipc": 1, "seed": s, "iterations": k, "test acc": 0.6 + 0.01 * s + k / 1e4, "seconds": 60}
            for s in (0, 1)
            for k in (100, 200)
        ]
        + [{"method": "dc", "ipc": 1, "seed": 0, "iterations": 500, "test acc": 0.7, "seconds": 120}]
    )
    t = D.path_table(snaps)
    assert list(t["iterations"]) == [100, 200, 500] and list(t["seeds"]) == [2, 2, 1]
    assert list(t["ours, DC's protocol"]) == ["61.5 ± 0.7", "62.5 ± 0.7", "70.0"]
    assert list(t["paper"]) == [70.5] * 3 and list(t["minutes per seed"]) == [1.0, 1.0, 2.0]
    assert D.path_table(pd.DataFrame()).empty


def test_the_command_line_shows_its_pieces_options_and_refuses_an_unknown_method(capsys):
    with pytest.raises(SystemExit) as e:
        D.main(["--help"])
    shown = capsys.readouterr().out
    assert e.value.code == 0 and all(o in shown for o in ("--methods", "--ipcs", "--seeds", "--hours"))
    with pytest.raises(SystemExit) as e:
        D.main(["--methods", "nope"])
    assert e.value.code == 2 and "unknown ['nope']" in capsys.readouterr().err


def test_dsa_is_synthesized_with_its_augmentation_and_evaluated_with_it_for_its_own_epochs(dc_toy, monkeypatch):
    _, tmp = dc_toy
    small_batches(monkeypatch)
    seen = {}
    synth, evaluate = D.synthesis.dc_synthesize, D.E.evaluate
    monkeypatch.setattr(D.synthesis, "dc_synthesize", lambda *a, **kw: seen.setdefault("synth", kw) and synth(*a, **kw))
    monkeypatch.setattr(
        D.E, "evaluate", lambda s, x, y, cfg, seed: seen.setdefault("cfg", cfg) and evaluate(s, x, y, cfg, seed)
    )
    plan = D.Plan(
        seeds=(0,), ipcs=(1,), methods=("dsa",), width=4, epochs=2, dsa_epochs=3, snapshots=(2,), state_every=1
    )
    assert [p.name for p in D.run_pieces(plan, root=tmp / "dsa")] == ["dsa-ipc-1__seed0.csv"]
    assert D.load(tmp / "dsa")["epochs"].tolist() == [3]  # the record names the epochs its evaluation trained
    assert seen["synth"]["dsa_strategy"] == "color_crop_cutout_flip_scale_rotate"
    assert seen["cfg"].augmentation == "dsa" and seen["cfg"].epochs == 3 and seen["cfg"].dsa is not None
    assert (
        D.synthesis_eval_config("dc", plan).augmentation == "none" and D.synthesis_eval_config("dc", plan).epochs == 2
    )
    assert D.path_table(D.load_snapshots(tmp / "dsa"))["paper"].tolist() == [70.6]
