"""The labelled sets in their regime: DWA, SRe2L, RDED and the random real images, one synthesis per seed."""

import pandas as pd
import pytest
import torch
import yaml

from compendium.core import paths
from compendium.distill import evaluate as E
from compendium.distill import labelled_protocol as L
from compendium.distill import records as R
from compendium.distill import regime


@pytest.fixture
def toy(toy_regime_sets, tmp_path):
    net = E.build_student(regime.teacher_config(regime.Plan(), 1), (1, 28, 28), 10)  # an untrained teacher
    torch.save(net.state_dict(), tmp_path / "teacher.pt")
    values = {**L._dd_inversion_values(), "iterations": 2, "rded_images_per_class": 4, "K": 1}
    return L.Plan(ipc=2, seeds=(0, 1), student_steps=3, floor_steps=3, values=values), tmp_path


def test_every_arm_and_seed_is_one_record_and_a_second_call_runs_nothing(toy):
    plan, tmp = toy
    written = L.run_pieces(plan, root=tmp / "rec", teacher_file=tmp / "teacher.pt")
    assert len(written) == len(plan.arms) * 2 + 2  # and arm B at 1 image per class, SRe2L's floor
    assert [p.name for p in written[:4]] == [
        "b-real-images-dwa-s-init-ipc-2__seed0.csv",
        "sre2l-ipc-2__seed0.csv",
        "dwa-ipc-2__seed0.csv",
        "rded-ipc-2__seed0.csv",
    ]  # the headline arms of every seed before the ladder
    rec = L.load(tmp / "rec")
    assert set(rec["arm"]) == set(plan.arms) and set(rec["seed"]) == {0, 1}
    assert (rec["test images"] == 50).all() and rec["test acc"].between(0, 1).all()
    assert set(rec.loc[rec["arm"] == "sre2l", "iterations"]) == {2}
    assert set(rec.loc[rec["arm"] == R.REAL_INIT, "iterations"]) == {0}  # the real images, unchanged
    assert set(rec.loc[rec["arm"] == R.REAL_INIT, "ipc"]) == {1, 2}
    assert (rec.loc[rec["arm"] == R.REAL_INIT, "displacement"] == 0).all()
    assert (rec.loc[rec["arm"] == "dwa", "displacement"] > 0).all()  # moved from its real images
    assert rec.loc[rec["arm"] == "sre2l", "displacement"].isna().all()  # from noise
    assert (rec.loc[rec["ipc"] == 1, "student steps"] == plan.floor_steps).all()  # the floor's own length
    assert L.run_pieces(plan, root=tmp / "rec", teacher_file=tmp / "teacher.pt") == []


def test_the_floor_trains_as_at_ten_images_per_class_at_every_ipc():
    assert L.Plan().floor_steps == L.Plan().student_steps == L.Plan.at(50).floor_steps


def test_each_seed_synthesises_its_own_set(toy, monkeypatch):
    plan, tmp = toy
    seen = []
    real = E.evaluate

    def spy(dset, *a, **k):
        seen.append(dset.images.clone())
        return real(dset, *a, **k)

    monkeypatch.setattr(E, "evaluate", spy)
    L.run_pieces(L.Plan(**{**plan.__dict__, "arms": ("dwa",)}), root=tmp / "r2", teacher_file=tmp / "teacher.pt")
    assert len(seen) == 2 and not torch.equal(seen[0], seen[1])


def test_bad_input_fails_before_compute(toy):
    plan, tmp = toy
    with pytest.raises(ValueError, match="unknown arm 'sre2'"):
        L.run_pieces(L.Plan(**{**plan.__dict__, "arms": ("sre2",)}), root=tmp / "r3", teacher_file=tmp / "x.pt")
    with pytest.raises(FileNotFoundError, match="python -m compendium.distill.regime"):
        L.run_pieces(plan, root=tmp / "r4", teacher_file=tmp / "missing.pt")
    with pytest.raises(SystemExit):
        L.main(["--arms", "nope"])


def test_the_recovery_settings_are_the_dd_inversion_stages():
    stage = yaml.safe_load(paths.PARAMS.read_text())["dd_inversion"]
    for k, v in L._dd_inversion_values().items():
        assert stage[k] == v, k
    assert L.TEACHER.is_file()  # committed: the study resumes on any machine
    assert regime.Plan().teacher_epochs == 20 and regime.Plan().teacher_width == 32


def test_at_50_images_per_class_the_students_train_to_the_studys_plateau_there(toy, monkeypatch):
    plan, tmp = toy
    curve = pd.DataFrame({"curve": "random ipc 50", "labels": "teacher", "seed": 0, "epoch": float("nan"),
                          "steps": [1200, 4800, 19200], "test acc": [0.80, 0.835, 0.85]})  # fmt: skip
    monkeypatch.setattr(regime, "load", lambda root=None: curve)
    at50 = L.Plan.at(50, seeds=(0,), values=plan.values)
    assert at50.arms == L.DWA_ARMS and "rded" not in at50.arms
    with pytest.raises(ValueError, match="still gains at 19,200 steps"):  # before any compute
        L.run_pieces(at50, root=tmp / "r5", teacher_file=tmp / "missing.pt")
    with pytest.raises(SystemExit):
        L.main(["--ipc", "50"])
    grown = pd.concat([curve, curve.iloc[-1:].assign(steps=76800, **{"test acc": 0.852})])
    monkeypatch.setattr(regime, "load", lambda root=None: grown)
    assert at50.steps() == 19200  # 4x longer gains 0.2 points: the plateau
    seen = []
    monkeypatch.setattr(L, "run_one", lambda p, arm, ipc, seed, net, steps=None: seen.append((arm, ipc, steps)) or
                        pd.DataFrame([{"arm": arm, "test acc": 0.5, "synthesis seconds": 0, "seconds": 0}]))  # fmt: skip
    L.run_pieces(at50, root=tmp / "r6", teacher_file=tmp / "teacher.pt")
    assert (R.REAL_INIT, 1, 4800) in seen  # SRe2L's floor, ten images, trained as at ipc 10
    assert {s for a, i, s in seen if i == 50} == {19200} and len(seen) == len(L.DWA_ARMS) + 1
