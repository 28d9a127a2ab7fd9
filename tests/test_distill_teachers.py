"""compendium.distill.teachers: a teacher file is byte-identical across identical runs (no timings)."""

import pytest
import torch

from compendium.core import volatile
from compendium.distill import evaluate as E
from compendium.distill import teachers

CFG = E.EvalConfig(arch="convnet", arch_kwargs={"width": 8, "depth": 2, "norm": "batch"})
RECORD = {"epochs": 1, "train_n": 100, "seed": 0, "test_acc": 0.5}


def _teacher():
    return E.build_student(CFG, (1, 12, 12), 10, seed=0)


def test_a_teacher_file_is_byte_identical_for_identical_inputs_and_loads_back(tmp_path):
    files = []
    for folder in ("a", "b", "a"):  # another folder, then the first file rewritten
        f = teachers.save(_teacher(), tmp_path / folder / "convnet.pt", CFG, (1, 12, 12), 10, (0.3,), (0.2,), RECORD)
        files.append(f.read_bytes())
    assert files[0] == files[1] == files[2]
    net, meta = teachers.load(tmp_path / "a" / "convnet.pt")
    x = torch.randn(2, 1, 12, 12)
    assert torch.equal(net(x), _teacher().eval()(x))
    assert meta["record"] == RECORD and meta["arch"] == "convnet" and meta["mean"] == [0.3]


def test_a_teacher_record_with_timings_is_refused_naming_the_key(tmp_path):
    f = tmp_path / "convnet.pt"
    with pytest.raises(ValueError, match=r"\['train_seconds'\].*reports/timings/dd_teachers.json"):
        teachers.save(_teacher(), f, CFG, (1, 12, 12), 10, (0.3,), (0.2,), {**RECORD, "train_seconds": 4.9})
    assert not f.exists()
    assert volatile.volatile_keys({"test_acc": 0.5, "wall time": 1, "info": {"host": "h"}}) == [
        "wall time",
        "info.host",
    ]


def test_a_synthesis_runs_on_a_device_copy_in_process_and_on_the_model_itself_in_workers():
    from compendium.distill import teachers as T

    net = torch.nn.Sequential(torch.nn.Linear(2, 2))
    assert T.synthesis_copy(net, "cpu", workers=2) is net  # worker processes: the model, on the CPU
    copy_ = T.synthesis_copy(net, "cpu", workers=0)
    assert copy_ is not net and next(copy_.parameters()).device.type == "cpu"
    assert torch.equal(copy_[0].weight, net[0].weight)
    copy_[0].weight.data.zero_()
    assert net[0].weight.abs().sum() > 0  # the caller's teacher is untouched
    assert T.synthesis_device("cpu", workers=0).type == "cpu" and T.synthesis_device("auto", workers=2).type == "cpu"
