"""The labelled family's regime study: teacher and student curves and their records."""

import pandas as pd
import pytest
import torch

from compendium.distill import regime


@pytest.fixture
def toy(toy_regime_sets):
    return regime.Plan(
        seeds=(0,), teacher_width=4, teacher_epochs=2, teacher_batch=64, student_width=4, steps=(2, 4), ipcs=(2,)
    )


def test_the_teacher_is_tested_after_every_epoch_and_the_students_after_each_length(toy, tmp_path):
    written = regime.run_pieces(toy, root=tmp_path, models_dir=tmp_path / "m")
    assert [p.name for p in written] == [
        "teacher__hard__seed0.csv",
        "whole__hard__seed0.csv",
        "random-ipc-2__hard__seed0.csv",
        "random-ipc-2__teacher__seed0.csv",
    ]
    rec = regime.load(tmp_path)
    t = rec[rec["curve"] == "teacher"]
    assert list(t["epoch"]) == [1.0, 2.0] and t["test acc"].between(0, 1).all()
    s = rec[rec["curve"] != "teacher"]
    assert set(s["steps"]) == {2, 4} and len(s) == 3 * 2
    # a second call finds every record and runs nothing
    assert regime.run_pieces(toy, root=tmp_path, models_dir=tmp_path / "m") == []
    # a longer grid runs only the new step counts and appends them (the teacher is kept)
    longer = regime.Plan(**{**toy.__dict__, "steps": (2, 4, 6)})
    before = regime.load(tmp_path)
    again = regime.run_pieces(longer, root=tmp_path, models_dir=tmp_path / "m")
    assert [p.name for p in again] == [
        "whole__hard__seed0.csv",
        "random-ipc-2__hard__seed0.csv",
        "random-ipc-2__teacher__seed0.csv",
    ]
    after = regime.load(tmp_path)
    s = after[after["curve"] != "teacher"]
    assert set(s["steps"]) == {2, 4, 6} and len(s) == 3 * 3
    kept = after.merge(before, on=["curve", "labels", "seed", "steps"], suffixes=("", " before"))
    assert (kept["test acc"] == kept["test acc before"]).all()


def test_a_seed_whose_teacher_is_lost_redoes_its_teacher_label_curves_whole_with_the_new_teacher(
    toy, tmp_path, monkeypatch
):
    regime.run_pieces(toy, root=tmp_path, models_dir=tmp_path / "m")
    (tmp_path / "m" / "teacher_w4_e2_seed0.pt").unlink()  # a machine without the seed's teacher
    longer = regime.Plan(**{**toy.__dict__, "steps": (2, 4, 6)})
    again = regime.run_pieces(longer, root=tmp_path, models_dir=tmp_path / "m")
    assert [p.name for p in again] == [
        "teacher__hard__seed0.csv",
        "whole__hard__seed0.csv",
        "random-ipc-2__hard__seed0.csv",
        "random-ipc-2__teacher__seed0.csv",
    ]
    soft = pd.read_csv(tmp_path / "random-ipc-2__teacher__seed0.csv")
    assert list(soft["steps"]) == [2, 4, 6]  # every length again, none kept from the lost teacher
    assert (tmp_path / "m" / "teacher_w4_e2_seed0.pt").is_file()
    # a run killed after the new teacher leaves no teacher-label curve of the lost one behind
    (tmp_path / "m" / "teacher_w4_e2_seed0.pt").unlink()
    longer = regime.Plan(**{**toy.__dict__, "steps": (2, 4, 6, 8)})  # a teacher-label curve needs the teacher again

    def killed(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(regime, "student_curve", killed)
    with pytest.raises(KeyboardInterrupt):
        regime.run_pieces(longer, root=tmp_path, models_dir=tmp_path / "m")
    assert (tmp_path / "m" / "teacher_w4_e2_seed0.pt").is_file()
    assert not (tmp_path / "random-ipc-2__teacher__seed0.csv").exists()


def test_the_teachers_are_kept_beside_the_records_so_that_every_machine_reads_the_same_one():
    assert regime.MODELS == regime.RECORDS


def test_random_subsets_hold_ipc_images_of_every_class(toy):
    tr, _, mean, std = regime._data()
    s = regime.random_subset(tr, 3, 0, mean, std)
    assert torch.bincount(s.labels, minlength=10).tolist() == [3] * 10
    assert torch.equal(regime.random_subset(tr, 3, 0, mean, std).source_index, s.source_index)
    assert not torch.equal(regime.random_subset(tr, 3, 1, mean, std).source_index, s.source_index)


def test_a_plateau_is_the_shortest_length_a_longer_run_no_longer_improves():
    rows = [
        {"curve": "whole", "labels": "hard", "seed": s, "steps": n, "epoch": None, "test acc": a + 0.001 * s}
        for s in (0, 1)
        for n, a in ((75, 0.70), (300, 0.80), (1200, 0.83), (4800, 0.832))
    ]
    rows += [
        {"curve": "teacher", "labels": "hard", "seed": 0, "steps": e * 10, "epoch": e, "test acc": a}
        for e, a in ((1, 0.80), (2, 0.85), (3, 0.858), (4, 0.856))
    ]
    rows += [
        {"curve": "random ipc 10", "labels": "hard", "seed": 0, "steps": n, "epoch": None, "test acc": a}
        for n, a in ((75, 0.5), (300, 0.6), (1200, 0.7))
    ]
    rows += [
        {"curve": "whole", "labels": "hard", "seed": 0, "steps": 19200, "epoch": None, "test acc": 0.95}
    ]  # one seed
    p = regime.plateaus(pd.DataFrame(rows), gain=0.005).set_index("curve")
    assert p.loc["whole", "longest"] == 4800  # 19,200 steps wait for the second seed
    assert p.loc["whole", "plateau at"] == 1200 and p.loc["whole", "reached"]
    assert (
        p.loc["teacher", "plateau at"] == 3 and p.loc["teacher", "reached"]
    )  # epoch 2 is followed by a gain of 0.8 point
    assert not p.loc["random ipc 10", "reached"] and p.loc["random ipc 10", "plateau at"] == 1200


def test_the_command_line_chooses_the_seeds(monkeypatch):
    seen = []
    monkeypatch.setattr(regime, "run_pieces", lambda plan, hours: seen.append((plan.seeds, hours)))
    monkeypatch.setattr(torch, "set_num_threads", lambda n: None)  # the test session keeps its threads
    assert regime.main(["--seeds", "1", "--hours", "0.5", "--threads", "1"]) == 0
    assert regime.main([]) == 0
    assert seen == [((1,), 0.5), (regime.Plan().seeds, 0.0)]
