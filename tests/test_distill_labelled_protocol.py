"""The labelled sets in their regime: DWA, SRe2L, RDED and the random real images, one synthesis per seed."""

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
    return L.Plan(ipc=2, seeds=(0, 1), student_steps=3, values=values), tmp_path


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
    assert L.run_pieces(plan, root=tmp / "rec", teacher_file=tmp / "teacher.pt") == []


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
