import functools
import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from compendium.core import data, fakedata, paths  # noqa: E402
from compendium.pipeline import params  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated_outputs(tmp_path, monkeypatch):
    """Products of notebooks run by tests never land in reports/ or build/interactive/."""
    monkeypatch.setenv(paths.OUTPUT_ROOT_ENV, str(tmp_path / "out"))
    yield


@pytest.fixture
def one_thread():
    """Tiny models are bound by per-operator overhead: one intra-op thread is as fast, and steady on a busy
    2-core machine (OpenMP spin-waits make two threads up to 10x slower there). Use it with
    ``pytestmark = pytest.mark.usefixtures("one_thread")``."""

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture
def module_moves(monkeypatch):
    """Records every ``nn.Module.to(device)`` call as ``(class name, device)``: the device plumbing of a loop
    is checked on the CPU (the only device here) by the moves it makes."""
    from torch import nn

    moves, to = [], nn.Module.to

    def spy(self, *args, **kw):
        if args and isinstance(args[0], (str, torch.device)):
            moves.append((type(self).__name__, str(args[0])))
        return to(self, *args, **kw)

    monkeypatch.setattr(nn.Module, "to", spy)
    return moves


@pytest.fixture
def toy_regime_sets(monkeypatch):
    """The labelled regime study's Fashion-MNIST replaced by 200 training and 50 test images of 28 px whose grey
    level grows with the class (learnable in a few steps), for the record makers that read it."""
    from compendium.distill import regime

    g = torch.Generator().manual_seed(0)

    def make(n, split):
        labels = torch.arange(n) % 10
        images = (torch.rand(n, 1, 28, 28, generator=g) * 80 + labels.view(-1, 1, 1, 1) * 17).to(torch.uint8)
        return data.ImageDataset("toy", split, images, labels, tuple(str(i) for i in range(10)))

    monkeypatch.setitem(regime._SETS, "sets", (make(200, "train"), make(50, "test")))


@pytest.fixture
def tiny_data(tmp_path):
    """A data/ folder in the real on-disk format with tiny random contents (not the manifest's)."""
    root = tmp_path / "data"
    rng = np.random.default_rng(0)
    for stem, n in (("train", 30), ("t10k", 20)):
        data.write_idx(root / f"fashion-mnist/{stem}-images-idx3-ubyte", rng.integers(0, 256, (n, 28, 28)))
        data.write_idx(root / f"fashion-mnist/{stem}-labels-idx1-ubyte", np.arange(n) % 10)
    data.write_idx(root / "digits/digits-images-idx3-ubyte", rng.integers(0, 17, (40, 8, 8)))
    data.write_idx(root / "digits/digits-labels-idx1-ubyte", np.arange(40) % 10)
    return root


def benchmark_script(name: str):
    """A script of ``benchmarks/`` imported as a module (they are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(
        name, Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def real_data_available() -> bool:
    try:
        data.verify()
        return True
    except data.DataError:
        return False


requires_data = pytest.mark.skipif(
    not real_data_available() and not os.environ.get("CI"),
    reason="data/ not set up (run `make setup`); in CI this is an error, not a skip",
)


# the generated stand-ins of the papers' datasets (compendium.core.fakedata), under the names the tests use
write_fake_cifar100 = fakedata.write_cifar100
write_fake_cifar10 = fakedata.write_cifar10
write_fake_mnist = fakedata.write_mnist
write_fake_tiny_imagenet = fakedata.write_tiny_imagenet
write_fake_imagenet = fakedata.write_imagenet
write_fake_imagenette = fakedata.write_imagenette
write_fake_corpora = fakedata.write_text_corpora


def read_unverified(monkeypatch, name: str) -> None:
    """Read CIFAR ``name`` without torchvision's md5 check (the fake folders are not the official files)."""
    import functools

    loader = {"cifar10": data.load_cifar10, "cifar100": data.load_cifar100}[name]
    monkeypatch.setitem(data.LOADERS, name, functools.partial(loader, verify_md5=False))


@pytest.fixture
def fake_cifar10(tmp_path, monkeypatch):
    """A tiny fake CIFAR-10 under ``tmp_path/ext`` (2 training and 1 test image per class), read without
    torchvision's md5 check; the value is the ``data_root`` to give the stages."""
    root = write_fake_cifar10(tmp_path / "ext")
    read_unverified(monkeypatch, "cifar10")
    return str(root)


@pytest.fixture
def fake_mnist(tmp_path):
    """A tiny fake MNIST (gzipped IDX files, 3 training and 1 test image per class); the value is the
    ``data_root`` to give the stages."""
    return str(write_fake_mnist(tmp_path / "ext"))


@pytest.fixture
def fake_cifar100(tmp_path, monkeypatch):
    """A tiny fake CIFAR-100 under ``tmp_path/ext`` (2 training and 1 test image per class), read without
    torchvision's md5 check; the value is the ``data_root`` to give the stages."""
    root = write_fake_cifar100(tmp_path / "ext")
    read_unverified(monkeypatch, "cifar100")
    return str(root)


@functools.lru_cache(maxsize=1)
def params_file() -> dict:
    """``params.yaml`` as loaded (once per test session)."""
    return params.load()


def params_at(scale: str, stage: str) -> dict:
    """A stage's values resolved at ``scale``."""
    return params.resolve(dict(params_file(), scale=scale), stage)
