import pickle

import numpy as np
import pytest
import torch
from conftest import requires_data

from compendium.core import data


def test_idx_roundtrip_and_format_errors(tmp_path):
    a = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    f = tmp_path / "x-idx3-ubyte"
    data.write_idx(f, a)
    assert np.array_equal(data.read_idx(f), a)
    assert f.read_bytes()[:4] == bytes([0, 0, 8, 3])
    raw = f.read_bytes()
    (tmp_path / "short").write_bytes(raw[:-1])
    with pytest.raises(data.DataError, match="truncated or corrupted"):
        data.read_idx(tmp_path / "short")
    (tmp_path / "bad").write_bytes(b"\x01\x02" + raw[2:])
    with pytest.raises(data.DataError, match="bad magic"):
        data.read_idx(tmp_path / "bad")


def _manifest_for(root, monkeypatch):
    """Point the manifest at the tiny files, so verification passes on them."""
    m = dict(data.MANIFEST)
    for rel in data.MANIFEST:
        p = root / rel
        if p.is_file():  # the tiny folder has no fortunes files; their entries stay as they are
            m[rel] = (p.stat().st_size, data.file_md5(p))
    monkeypatch.setattr(data, "MANIFEST", m)
    data._verified.clear()


def test_loaders_on_tiny_files(tiny_data, monkeypatch):
    _manifest_for(tiny_data, monkeypatch)
    tr = data.load_fashion_mnist("train", root=tiny_data)
    te = data.load_fashion_mnist("test", root=tiny_data)
    assert tr.images.shape == (30, 1, 28, 28) and tr.images.dtype == torch.uint8
    assert te.labels.dtype == torch.int64 and len(te) == 20
    assert tr.num_classes == 10 and tr.classes[0] == "T-shirt/top"
    d = data.load_digits("all", root=tiny_data)
    assert d.images.shape == (40, 1, 28, 28)
    d8 = data.load_digits("all", size=8, root=tiny_data)
    raw = torch.from_numpy(data.read_idx(tiny_data / "digits/digits-images-idx3-ubyte").copy())
    assert torch.equal(d8.images[:, 0], (raw.float() * 255 / 16).round().to(torch.uint8))
    assert int(d.images.max()) <= 255
    with pytest.raises(ValueError, match="split"):
        data.load_fashion_mnist("val", root=tiny_data)


@pytest.mark.parametrize(
    "damage,needle",
    [
        ("delete", "is missing"),
        ("truncate", "is truncated"),
        ("flip", "is corrupted"),
    ],
)
def test_damaged_files_give_one_clear_error(tiny_data, monkeypatch, damage, needle):
    _manifest_for(tiny_data, monkeypatch)
    f = tiny_data / "fashion-mnist/train-images-idx3-ubyte"
    if damage == "delete":
        f.unlink()
    elif damage == "truncate":
        f.write_bytes(f.read_bytes()[:100])
    else:
        b = bytearray(f.read_bytes())
        b[500] ^= 0xFF
        f.write_bytes(bytes(b))
    with pytest.raises(data.DataError) as e:
        data.load_fashion_mnist("train", root=tiny_data)
    msg = str(e.value)
    assert str(f) in msg and needle in msg and "make setup" in msg


def test_digits_split_is_stratified_disjoint_and_fixed():
    labels = torch.arange(1797) % 10
    tr = data.digits_split_index(labels, "train")
    te = data.digits_split_index(labels, "test")
    assert len(set(tr.tolist()) & set(te.tolist())) == 0 and len(tr) + len(te) == 1797
    counts = torch.bincount(labels[te], minlength=10).float() / torch.bincount(labels, minlength=10)
    assert torch.allclose(counts, torch.full((10,), 0.25), atol=0.01)
    assert torch.equal(te, data.digits_split_index(labels, "test"))


def test_pixel_stats_match_direct_float64():
    x = torch.randint(0, 256, (50, 3, 5, 5), dtype=torch.uint8)
    mean, std = data.pixel_stats(x, chunk=7)
    ref = x.double().div(255).permute(1, 0, 2, 3).reshape(3, -1)
    assert np.allclose(mean, ref.mean(1).numpy(), atol=1e-12)
    assert np.allclose(std, ref.std(1, unbiased=False).numpy(), atol=1e-12)


def _write_cifar(root, name, n_train, n_test, classes, label_key, meta_key, folder, files):
    d = root / folder
    d.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for fname, n in files(n_train, n_test):
        batch = {
            "data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
            label_key: list(rng.integers(0, len(classes), n)),
        }
        with open(d / fname, "wb") as f:
            pickle.dump(batch, f)
    with open(d / ("batches.meta" if name == "cifar10" else "meta"), "wb") as f:
        pickle.dump({meta_key: classes}, f)


def test_cifar10_and_cifar100_in_their_pickle_format(tmp_path):
    _write_cifar(
        tmp_path,
        "cifar10",
        10,
        4,
        [f"c{i}" for i in range(10)],
        "labels",
        "label_names",
        "cifar-10-batches-py",
        lambda a, b: [(f"data_batch_{i}", 2) for i in range(1, 6)] + [("test_batch", 4)],
    )
    tr = data.load_cifar10(tmp_path, "train", verify_md5=False)
    assert tr.images.shape == (10, 3, 32, 32) and tr.images.dtype == torch.uint8 and len(tr.classes) == 10
    assert data.load_cifar10(tmp_path, "test", verify_md5=False).images.shape[0] == 4
    # the official md5 check is on by default: these files are not the official ones
    with pytest.raises(data.DataError, match="cifar-10-batches-py"):
        data.load_cifar10(tmp_path, "train")
    _write_cifar(
        tmp_path,
        "cifar100",
        6,
        3,
        [f"f{i}" for i in range(100)],
        "fine_labels",
        "fine_label_names",
        "cifar-100-python",
        lambda a, b: [("train", 6), ("test", 3)],
    )
    c100 = data.load_cifar100(tmp_path, "train", verify_md5=False)
    assert c100.images.shape == (6, 3, 32, 32) and c100.num_classes == 100
    with pytest.raises(data.DataError):
        data.load_cifar10(tmp_path / "nowhere", "train")


def _write_image(path, h, w, seed):
    from torchvision.io import write_jpeg

    path.parent.mkdir(parents=True, exist_ok=True)
    g = torch.Generator().manual_seed(seed)
    write_jpeg(torch.randint(0, 256, (3, h, w), dtype=torch.uint8, generator=g), str(path))


def test_tiny_imagenet_layout(tmp_path):
    root = tmp_path / "tiny-imagenet-200"
    wnids = ["n01", "n02", "n03"]
    root.mkdir()
    (root / "wnids.txt").write_text("\n".join(wnids) + "\n")
    for k, w in enumerate(wnids):
        for i in range(3):
            _write_image(root / "train" / w / "images" / f"{w}_{i}.JPEG", 64, 64, 10 * k + i)
    rows = []
    for i in range(5):
        _write_image(root / "val" / "images" / f"val_{i}.JPEG", 64, 64, 100 + i)
        rows.append(f"val_{i}.JPEG\t{wnids[i % 3]}\t0\t0\t10\t10")
    (root / "val" / "val_annotations.txt").write_text("\n".join(rows) + "\n")
    tr = data.load_tiny_imagenet(root, "train", resolution=32)
    assert tr.images.shape == (9, 3, 32, 32) and tr.classes == tuple(wnids)
    assert tr.labels.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    va = data.load_tiny_imagenet(root, "val", resolution=32)
    assert va.labels.tolist() == [0, 1, 2, 0, 1]
    assert data.load_tiny_imagenet(root, "train", resolution=16, max_per_class=1).images.shape == (3, 3, 16, 16)


def test_imagenet_layout_and_bad_images(tmp_path):
    root = tmp_path / "imagenet"
    for split, n in (("train", 2), ("val", 1)):
        for k, w in enumerate(["n0001", "n0002"]):
            for i in range(n):
                _write_image(root / split / w / f"{w}_{i}.JPEG", 40, 60, k * 7 + i)
    tr = data.load("imagenet", "train", root=root, resolution=24)
    assert tr.images.shape == (4, 3, 24, 24) and tr.classes == ("n0001", "n0002")
    assert data.load("imagenet", "val", root=root, resolution=24).labels.tolist() == [0, 1]
    (root / "train" / "n0001" / "broken.JPEG").write_bytes(b"not an image")
    with pytest.raises(data.DataError, match="broken.JPEG"):
        data.load("imagenet", "train", root=root, resolution=24)
    with pytest.raises(ValueError, match="unknown dataset"):
        data.load("svhn")


@requires_data
def test_real_fashion_mnist_and_digits():
    data.verify()
    tr, te = data.load_fashion_mnist("train"), data.load_fashion_mnist("test")
    assert (len(tr), len(te)) == (60_000, 10_000)
    assert data.class_counts(tr).tolist() == [6000] * 10
    d = data.load_digits("all")
    assert len(d) == 1797 and d.images.shape[1:] == (1, 28, 28)


def test_digits_export_is_byte_deterministic(tmp_path):
    """The set-up's digits export reproduces the manifest (and so data.dvc) exactly."""
    from compendium.pipeline import fetch_data

    fetch_data.fetch_digits(tmp_path)
    for rel in ("digits/digits-images-idx3-ubyte", "digits/digits-labels-idx1-ubyte"):
        assert data.check_file(rel, tmp_path) is None, rel


@requires_data
def test_fashion_mnist_normalisation_constants_match_the_data():
    ds = data.load_fashion_mnist("train")
    (m,), (s,) = data.pixel_stats(ds.images)
    assert abs(m - data.FASHION_MNIST_MEAN) < 5e-4 and abs(s - data.FASHION_MNIST_STD) < 5e-4


def test_imagenette_layout_from_its_folder_or_the_one_holding_it(tmp_path):
    from conftest import write_fake_imagenette

    root = write_fake_imagenette(tmp_path, classes=2, per_class=2, size=40)
    direct = data.load_imagenette(root / "imagenette2-160", "train", resolution=32)
    held = data.load_dataset("imagenette", "val", root, resolution=32)
    assert direct.images.shape == (4, 3, 32, 32) and held.labels.tolist() == [0, 0, 1, 1]
    assert data.train_test("imagenette", root, resolution=16)[1].images.shape[-1] == 16
    with pytest.raises(data.DataError, match="imagenette2"):
        data.load_imagenette(tmp_path / "nothing")
