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

from compendium.core import data, paths  # noqa: E402
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
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture
def module_moves(monkeypatch):
    """Records every ``nn.Module.to(device)`` call as ``(class name, device)``: the device plumbing of a loop
    is checked on the CPU (the only device here) by the moves it makes."""
    import torch
    from torch import nn

    moves, to = [], nn.Module.to

    def spy(self, *args, **kw):
        if args and isinstance(args[0], (str, torch.device)):
            moves.append((type(self).__name__, str(args[0])))
        return to(self, *args, **kw)

    monkeypatch.setattr(nn.Module, "to", spy)
    return moves


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


def write_fake_cifar100(root, per_class_train: int = 2, per_class_test: int = 1, seed: int = 0):
    """A ``root/cifar-100-python`` folder in CIFAR-100's python-pickle format (``train``, ``test``,
    ``meta``; fine and coarse labels) with ``per_class_*`` random images of each of the 100 classes.
    Not the official files: read it with ``verify_md5=False``."""
    import pickle

    d = Path(root) / "cifar-100-python"
    d.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for name, per in (("train", per_class_train), ("test", per_class_test)):
        fine = [c for c in range(100) for _ in range(per)]
        batch = {
            "filenames": [f"{name}_{i}.png" for i in range(len(fine))],
            "batch_label": name,
            "data": rng.integers(0, 256, (len(fine), 3072), dtype=np.uint8),
            "fine_labels": fine,
            "coarse_labels": [c // 5 for c in fine],
        }
        with open(d / name, "wb") as f:
            pickle.dump(batch, f)
    with open(d / "meta", "wb") as f:
        pickle.dump(
            {
                "fine_label_names": [f"fine{i}" for i in range(100)],
                "coarse_label_names": [f"coarse{i}" for i in range(20)],
            },
            f,
        )
    return Path(root)


def write_fake_cifar10(root, per_class_train: int = 2, per_class_test: int = 1, seed: int = 0):
    """A ``root/cifar-10-batches-py`` folder in CIFAR-10's python-pickle format (five training batches, the test
    batch and ``batches.meta``) with ``per_class_*`` random images of each of the 10 classes per split. Not the
    official files: read it with ``verify_md5=False``."""
    import pickle

    d = Path(root) / "cifar-10-batches-py"
    d.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    train = [c for c in range(10) for _ in range(per_class_train)]
    parts = {f"data_batch_{i + 1}": train[i::5] for i in range(5)}
    parts["test_batch"] = [c for c in range(10) for _ in range(per_class_test)]
    for name, labels in parts.items():
        batch = {
            "batch_label": name,
            "labels": labels,
            "filenames": [f"{name}_{i}.png" for i in range(len(labels))],
            "data": rng.integers(0, 256, (len(labels), 3072), dtype=np.uint8),
        }
        with open(d / name, "wb") as f:
            pickle.dump(batch, f)
    with open(d / "batches.meta", "wb") as f:
        pickle.dump({"label_names": [f"class{i}" for i in range(10)], "num_cases_per_batch": 10000, "num_vis": 3072}, f)
    return Path(root)


def write_fake_mnist(root, per_class_train: int = 3, per_class_test: int = 1, seed: int = 0, gz: bool = True):
    """A ``root/MNIST/raw`` folder (torchvision's layout) with MNIST's four IDX files, gzipped as distributed
    (or not), holding ``per_class_*`` random 28x28 digits of each class."""
    import gzip

    d = Path(root) / "MNIST" / "raw"
    rng = np.random.default_rng(seed)
    for stem, per in (("train", per_class_train), ("t10k", per_class_test)):
        labels = np.repeat(np.arange(10), per)
        for kind, arr in (("images-idx3", rng.integers(0, 256, (len(labels), 28, 28))), ("labels-idx1", labels)):
            path = d / f"{stem}-{kind}-ubyte"
            data.write_idx(path, arr)
            if gz:
                path.with_name(path.name + ".gz").write_bytes(gzip.compress(path.read_bytes(), mtime=0))
                path.unlink()
    return Path(root)


def _write_jpegs(folder, names, size, generator):
    from torchvision.io import write_jpeg

    folder.mkdir(parents=True, exist_ok=True)
    for n in names:
        write_jpeg(torch.randint(0, 256, (3, size, size), dtype=torch.uint8, generator=generator), str(folder / n))


def write_fake_tiny_imagenet(root, classes: int = 4, per_class: int = 2, val: int = 4):
    """A ``root/tiny-imagenet-200`` folder in the distributed layout (64-px JPEGs under ``train/<wnid>/images``,
    ``wnids.txt``, ``val/images`` with ``val_annotations.txt``) with ``classes`` random classes; returns ``root``."""
    d = Path(root) / "tiny-imagenet-200"
    wnids = [f"n{k:08d}" for k in range(classes)]
    g = torch.Generator().manual_seed(0)
    for w in wnids:
        _write_jpegs(d / "train" / w / "images", [f"{w}_{i}.JPEG" for i in range(per_class)], 64, g)
    _write_jpegs(d / "val" / "images", [f"val_{i}.JPEG" for i in range(val)], 64, g)
    (d / "val" / "val_annotations.txt").write_text(
        "".join(f"val_{i}.JPEG\t{wnids[i % classes]}\t0\t0\t8\t8\n" for i in range(val))
    )
    (d / "wnids.txt").write_text("\n".join(wnids) + "\n")
    return Path(root)


def write_fake_imagenet(root, classes: int = 3, per_class: int = 3, val_per_class: int = 2, size=(180, 240)):
    """A ``root/imagenet`` folder in ImageNet-1K's usual sorted layout (``{train,val}/<wnid>/*.JPEG``) with
    ``classes`` random classes of ``size`` (h, w) JPEGs, not square, as ImageNet's are; returns the folder."""
    from torchvision.io import write_jpeg

    d = Path(root) / "imagenet"
    g = torch.Generator().manual_seed(0)
    for split, per in (("train", per_class), ("val", val_per_class)):
        for k in range(classes):
            folder = d / split / f"n{k:08d}"
            folder.mkdir(parents=True, exist_ok=True)
            for i in range(per):
                img = torch.randint(0, 256, (3, *size), dtype=torch.uint8, generator=g)
                write_jpeg(img, str(folder / f"n{k:08d}_{i}.JPEG"))
    return d


def write_fake_imagenette(root, classes: int = 3, per_class: int = 2, size: int = 160):
    """A ``root/imagenette2-160`` folder (``{train,val}/<wnid>/*.JPEG``) with ``classes`` random classes."""
    d = Path(root) / "imagenette2-160"
    g = torch.Generator().manual_seed(0)
    for split in ("train", "val"):
        for k in range(classes):
            _write_jpegs(d / split / f"n{k:08d}", [f"{split}_{k}_{i}.JPEG" for i in range(per_class)], size, g)
    return Path(root)


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
