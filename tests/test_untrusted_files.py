"""Nothing is executed from disk: every place the project unpickles a file refuses one it did not write.

Each test plants a pickle whose loading would create a marker file, and checks that the marker never appears."""

import ast
import pickle
from pathlib import Path

import pytest
import torch

from compendium.core import data, paths, resume
from conftest import write_fake_cifar10
from test_train import _byol, _data, _params, views
from compendium.ssl import train


class _Payload:
    """Unpickling this creates ``marker``: the proof that a file's code ran."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def _plant(path, marker, **extra):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        pickle.dump({**extra, "x": _Payload(marker)}, f)


@pytest.fixture(autouse=True)
def _own_key(tmp_path, monkeypatch):
    monkeypatch.setenv(resume.KEY_ENV, str(tmp_path / "key"))


def _square(x):
    return x * x


def test_a_planted_resume_result_is_refused_unrun_and_the_call_runs_again(tmp_path):
    marker, folder = tmp_path / "ran", tmp_path / "resume"
    key = resume.call_key(_square, (3,), {})
    _plant(resume.path_for(folder, _square, key), marker, format="compendium.core.resume/1", key=key)
    with pytest.warns(RuntimeWarning, match="no tag"):
        assert resume.load(folder, _square, key) is resume.MISSING
    assert not marker.exists()
    resume.store(folder, _square, key, 9)  # the call ran again and stored its own, signed result
    assert resume.load(folder, _square, key) == 9


def test_a_result_signed_under_another_machines_key_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "resume"
    key = resume.call_key(_square, (4,), {})
    resume.store(folder, _square, key, 16)
    monkeypatch.setenv(resume.KEY_ENV, str(tmp_path / "another-key"))
    with pytest.warns(RuntimeWarning, match="does not match"):
        assert resume.load(folder, _square, key) is resume.MISSING


def test_a_planted_or_damaged_training_checkpoint_is_dropped_and_training_restarts(tmp_path, capsys):
    marker, ck = tmp_path / "ran", tmp_path / "ck.pt"
    cfg = train.PretrainConfig(
        epochs=1, batch_size=16, budget=0.5, seed=3, device="cpu", checkpoint=str(ck), log_prefix="t"
    )
    clean = _byol()
    train.pretrain(
        clean,
        _data(),
        train.PretrainConfig(epochs=1, batch_size=16, budget=0.5, seed=3, device="cpu"),
        views,
        0.5,
        0.25,
    )
    for damage in ("planted", "damaged"):
        if damage == "planted":
            torch.save({"model": _Payload(marker)}, ck)
        else:
            ck.write_bytes(ck.read_bytes()[:100])
        m = _byol()
        train.pretrain(m, _data(), cfg, views, 0.5, 0.25)
        assert f"ignoring the checkpoint {ck}" in capsys.readouterr().out
        assert not marker.exists()
        assert torch.equal(_params(m), _params(clean))  # trained from epoch 0, as a run without a checkpoint


def test_a_planted_cifar_batch_is_refused_before_torchvision_unpickles_it(tmp_path):
    root = write_fake_cifar10(tmp_path / "d")
    data.load_cifar10(root, "test", verify_md5=False)  # the files as distributed load
    marker = tmp_path / "ran"
    _plant(root / "cifar-10-batches-py" / "test_batch", marker)
    with pytest.raises(data.DataError, match="test_batch would import pathlib"):
        data.load_cifar10(root, "test", verify_md5=False)
    assert not marker.exists()


# torch.load calls that unpickle more than tensors, each with its reason
UNPICKLING = {
    "core/resume.py": "load_signed: the bytes carry this machine's HMAC tag, checked before loading",
    "core/launch.py": "a call spec and its results passed through a private temporary folder made for that call",
}


def test_every_torch_load_is_weights_only_or_named_with_its_reason():
    for f in sorted((paths.SRC / "compendium").rglob("*.py")):
        rel = f.relative_to(paths.SRC / "compendium").as_posix()
        for node in ast.walk(ast.parse(f.read_text())):
            if (
                isinstance(node, ast.Call)
                and ast.unparse(node.func) in ("torch.load", "load")
                and any(k.arg == "weights_only" for k in node.keywords)
            ):
                safe = any(k.arg == "weights_only" and ast.unparse(k.value) == "True" for k in node.keywords)
                assert safe or rel in UNPICKLING, f"{rel}:{node.lineno} unpickles without a reason"
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "torch.load":
                assert any(k.arg == "weights_only" for k in node.keywords), f"{rel}:{node.lineno}: say weights_only"
