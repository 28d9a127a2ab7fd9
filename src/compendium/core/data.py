"""Datasets as in-memory uint8 tensors.

Every loader returns an :class:`ImageDataset` whose ``images`` tensor is ``uint8`` of shape
``N x C x H x W`` and whose ``labels`` tensor is ``int64`` of shape ``N``: training loops index
and augment whole batches of it on the device, with no per-sample PIL in the hot path.

The two datasets shipped under ``data/`` (tracked by ``data.dvc``) are checked against
:data:`MANIFEST` before they are read: a missing, truncated or corrupted file raises one
:class:`DataError` that names the file and the command that restores it, before any compute.

* Fashion-MNIST (Xiao et al. 2017): the default dataset, 60,000 / 10,000 images of 28x28.
* scikit-learn's 8x8 digits (1,797 images), stored at 8x8 with values 0..16 and upsampled to
  28x28 on load; the cross-dataset prior of the ReLA experiments trains on it.
* Debian's ``fortunes`` quotes, six category files (text dataset distillation's corpus; read by
  :func:`compendium.core.text.load_fortunes`).
* CIFAR-10/100 (python pickle format) and ImageFolder-style Tiny-ImageNet / ImageNet are
  read through torchvision from a user-given root (the ``paper`` profile); nothing downloads. The
  ImageNet-style folders (:data:`FOLDER_DATASETS`) are decoded at a chosen resolution, their training
  split optionally limited to the first images of each class (:func:`train_test`'s ``train_per_class``):
  ImageNet-1K at 224 px is 193 GB as uint8, so the labeled-distillation stages keep a per-class pool of it.
* MNIST (LeCun et al. 1998) is read from a user-given root in its distributed IDX files, gzipped or
  not (:func:`load_mnist`): DD, SLDD, LD, GTN and DC/DSA report on it.
"""

from __future__ import annotations

import gzip
import os
import pickletools
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from compendium.core import paths
from compendium.core.prior_roles import TAGS, dataset_tag  # noqa: F401  (short names of datasets, kept there)
from compendium.core.integrity import file_md5  # noqa: F401  (the data manifest's md5, as DVC's)

FIX_COMMAND = "make setup"

#: Files under ``data/`` with their size in bytes and md5 (the uncompressed IDX bytes, identical
#: whichever source the set-up command took them from).
MANIFEST: dict[str, tuple[int, str]] = {
    "fashion-mnist/train-images-idx3-ubyte": (47040016, "f4a8712d7a061bf5bd6d2ca38dc4d50a"),
    "fashion-mnist/train-labels-idx1-ubyte": (60008, "9018921c3c673c538a1fc5bad174d6f9"),
    "fashion-mnist/t10k-images-idx3-ubyte": (7840016, "8181f5470baa50b63fa0f6fddb340f0a"),
    "fashion-mnist/t10k-labels-idx1-ubyte": (10008, "15d484375f8d13e6eb1aabb0c3f46965"),
    "digits/digits-images-idx3-ubyte": (115024, "a5adabccf8d3e2540826a202a7bfb422"),
    "digits/digits-labels-idx1-ubyte": (1805, "497796a0698e25d3920a9422b635bf34"),
    # Debian's `fortunes` 1:1.99.1-7.3, the category files as shipped (text DD's corpus, compendium.core.text)
    "fortunes/computers": (237981, "d5f19647f924b7a243c11a6dd1420ebd"),
    "fortunes/food": (34377, "3c6dbd6eddbc17a8d113d7a58f6e433b"),
    "fortunes/law": (56657, "f932dc72c5212f16e57a2c382bb82af2"),
    "fortunes/love": (20423, "17b72c752d9881c127ed7d73c27d7fc1"),
    "fortunes/politics": (114921, "4e30eeee18c3cd112aa7f3dfaf8c483e"),
    "fortunes/science": (129991, "8f2eab053e7d93e12c187bccf9d07edb"),
}

FASHION_MNIST_CLASSES = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)
DIGITS_CLASSES = tuple(str(i) for i in range(10))


class DataError(RuntimeError):
    """A data file is missing, truncated, corrupted or in the wrong format."""


@dataclass(frozen=True)
class ImageDataset:
    """Images ``uint8 [N, C, H, W]``, labels ``int64 [N]`` and the class names."""

    name: str
    split: str
    images: torch.Tensor
    labels: torch.Tensor
    classes: tuple[str, ...]

    def __post_init__(self) -> None:
        if self.images.dtype != torch.uint8 or self.images.ndim != 4:
            raise DataError(
                f"{self.name}/{self.split}: images must be uint8 N x C x H x W, "
                f"got {self.images.dtype} {tuple(self.images.shape)}"
            )
        if self.labels.shape != (self.images.shape[0],):
            raise DataError(
                f"{self.name}/{self.split}: {self.labels.shape[0]} labels for {self.images.shape[0]} images"
            )

    def __len__(self) -> int:
        return self.images.shape[0]

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    @property
    def shape(self) -> tuple[int, int, int]:
        return tuple(self.images.shape[1:])  # type: ignore[return-value]

    def subset(self, index: torch.Tensor) -> "ImageDataset":
        return ImageDataset(self.name, self.split, self.images[index], self.labels[index], self.classes)


# ----------------------------------------------------------------------------- verification


_verified: dict[str, tuple[int, int]] = {}


def check_file(rel: str, root: Path | None = None) -> str | None:
    """The problem with ``data/<rel>`` in one phrase, or None if it matches the manifest."""
    root = root or paths.DATA
    path = root / rel
    size, md5 = MANIFEST[rel]
    if not path.is_file():
        return "is missing"
    st = path.stat()
    if st.st_size != size:
        kind = "is truncated" if st.st_size < size else "is too long"
        return f"{kind} ({st.st_size} bytes, expected {size})"
    key = str(path)
    if _verified.get(key) == (st.st_size, st.st_mtime_ns):
        return None
    got = file_md5(path)
    if got != md5:
        return f"is corrupted (md5 {got}, expected {md5})"
    _verified[key] = (st.st_size, st.st_mtime_ns)
    return None


def verify(datasets: tuple[str, ...] = ("fashion-mnist", "digits", "fortunes"), root: Path | None = None) -> None:
    """Raise one :class:`DataError` listing every bad file of the given datasets (names of
    :data:`MANIFEST`'s folders: a name that is not one, e.g. a typo, is an error, not a pass)."""
    known = tuple(dict.fromkeys(rel.split("/")[0] for rel in MANIFEST))
    unknown = [d for d in datasets if d not in known]
    if unknown:
        raise ValueError(
            f"data.verify: {unknown} are not shipped datasets (known: {list(known)}); "
            "name shipped ones only (a stage's DATA lists the shipped datasets it reads)"
        )
    root = root or paths.DATA
    problems = []
    for rel in MANIFEST:
        if rel.split("/")[0] in datasets:
            problem = check_file(rel, root)
            if problem:
                problems.append(f"  {root / rel} {problem}")
    if problems:
        raise DataError(
            "data check failed:\n"
            + "\n".join(problems)
            + f"\nRestore the data with `{FIX_COMMAND}` (it fetches missing or damaged "
            "files again and checks them against data.dvc)."
        )


# ----------------------------------------------------------------------------- IDX format

_IDX_DTYPES = {0x08: np.uint8}


def read_idx(path: Path) -> np.ndarray:
    """Read an IDX file as used by MNIST and Fashion-MNIST (LeCun et al.); a ``.gz`` file is
    decompressed first."""
    raw = Path(path).read_bytes()
    if Path(path).suffix == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise DataError(f"{path}: not a complete gzip file ({e})") from e
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise DataError(f"{path}: not an unsigned-byte IDX file (bad magic number)")
    ndim = raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise DataError(f"{path}: IDX header is truncated")
    dims = [int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    expected = header + int(np.prod(dims))
    if len(raw) != expected:
        raise DataError(
            f"{path}: IDX payload has {len(raw) - header} bytes, dims {dims} need "
            f"{expected - header}; the file is truncated or corrupted"
        )
    return np.frombuffer(raw, dtype=np.uint8, offset=header).reshape(dims)


def write_idx(path: Path, array: np.ndarray) -> None:
    """Write a uint8 array as an uncompressed IDX file (byte-deterministic)."""
    array = np.ascontiguousarray(array, dtype=np.uint8)
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(header + array.tobytes())
    os.replace(tmp, path)


# ----------------------------------------------------------------------------- shipped datasets


def load_fashion_mnist(split: str = "train", root: Path | None = None, check: bool = True) -> ImageDataset:
    """Fashion-MNIST, ``split`` in {"train", "test"}: ``uint8 [N, 1, 28, 28]``."""
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    root = root or paths.DATA
    if check:
        verify(("fashion-mnist",), root)
    stem = "train" if split == "train" else "t10k"
    images = read_idx(root / f"fashion-mnist/{stem}-images-idx3-ubyte")
    labels = read_idx(root / f"fashion-mnist/{stem}-labels-idx1-ubyte")
    return ImageDataset(
        "fashion-mnist",
        split,
        torch.from_numpy(images.copy()).unsqueeze(1),
        torch.from_numpy(labels.astype(np.int64)),
        FASHION_MNIST_CLASSES,
    )


DIGITS_TEST_FRACTION = 0.25
DIGITS_SPLIT_SEED = 0


def digits_split_index(
    labels: torch.Tensor, split: str, test_fraction: float = DIGITS_TEST_FRACTION, seed: int = DIGITS_SPLIT_SEED
) -> torch.Tensor:
    """A fixed stratified split: per class, a seeded permutation's first ``round(f n_c)`` are test."""
    g = torch.Generator().manual_seed(seed)
    chosen = []
    for c in range(int(labels.max()) + 1):
        idx = torch.nonzero(labels == c).flatten()
        perm = idx[torch.randperm(len(idx), generator=g)]
        n_test = round(test_fraction * len(idx))
        chosen.append(perm[:n_test] if split == "test" else perm[n_test:])
    return torch.sort(torch.cat(chosen)).values


def load_digits(split: str = "train", size: int = 28, root: Path | None = None, check: bool = True) -> ImageDataset:
    """scikit-learn's 8x8 digits, ``split`` in {"train", "test", "all"}, upsampled to ``size``.

    Values 0..16 are mapped to 0..255 and the images bilinearly resized (``size=8`` keeps them).
    """
    if split not in ("train", "test", "all"):
        raise ValueError(f"split must be 'train', 'test' or 'all', got {split!r}")
    root = root or paths.DATA
    if check:
        verify(("digits",), root)
    raw = torch.from_numpy(read_idx(root / "digits/digits-images-idx3-ubyte").copy())
    labels = torch.from_numpy(read_idx(root / "digits/digits-labels-idx1-ubyte").astype(np.int64))
    x = raw.float().unsqueeze(1) * (255.0 / 16.0)
    if size != 8:
        x = torch.nn.functional.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)
    images = x.round().clamp(0, 255).to(torch.uint8)
    if split != "all":
        index = digits_split_index(labels, split)
        images, labels = images[index], labels[index]
    return ImageDataset("digits", split, images, labels, DIGITS_CLASSES)


# ----------------------------------------------------------------------------- user-given datasets

MNIST_CLASSES = tuple(str(i) for i in range(10))
#: Where an MNIST root may hold the four IDX files: torchvision's layout, then a plain folder.
MNIST_FOLDERS = ("MNIST/raw", "mnist", ".")


def _mnist_file(root: Path, stem: str) -> Path:
    for folder in MNIST_FOLDERS:
        for name in (stem, stem + ".gz"):
            if (root / folder / name).is_file():
                return root / folder / name
    raise DataError(
        f"mnist: {stem}[.gz] is not under {root} (looked in {', '.join(MNIST_FOLDERS)}; expected the "
        "distributed IDX files, for example torchvision's MNIST/raw folder; nothing downloads)"
    )


def load_mnist(root, split: str = "train") -> ImageDataset:
    """MNIST (LeCun et al. 1998), ``split`` in {"train", "test"}, from its distributed IDX files under
    ``root`` (``MNIST/raw``, ``mnist`` or ``root`` itself; gzipped or not): ``uint8 [N, 1, 28, 28]``."""
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    root, stem = Path(root), "train" if split == "train" else "t10k"
    images = read_idx(_mnist_file(root, f"{stem}-images-idx3-ubyte"))
    labels = read_idx(_mnist_file(root, f"{stem}-labels-idx1-ubyte"))
    if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
        raise DataError(f"mnist/{split} under {root}: {images.shape} images and {labels.shape} labels")
    return ImageDataset(
        "mnist",
        split,
        torch.from_numpy(images.copy()).unsqueeze(1),
        torch.from_numpy(labels.astype(np.int64)),
        MNIST_CLASSES,
    )


# ----------------------------------------------------------------------------- torchvision datasets


# What a CIFAR python batch may name: numpy's array reconstruction and the plain containers. Anything else
# (os.system, builtins.eval, ...) in a file that claims to be a batch would run when unpickled.
PICKLE_GLOBALS = frozenset(
    {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy.core.numeric", "_frombuffer"),
        ("numpy._core.numeric", "_frombuffer"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "scalar"),
        ("copy_reg", "_reconstructor"),
        ("copyreg", "_reconstructor"),
        ("__builtin__", "object"),
        ("builtins", "object"),
        ("_codecs", "encode"),
    }
)


def pickle_globals(path: Path) -> set[tuple[str, str]]:
    """The (module, name) pairs a pickle file would import when loaded, read from its opcodes without running
    it (``GLOBAL``, and ``STACK_GLOBAL`` with the two strings pushed before it; one whose name is not a plain
    string it pushed is reported as ``("?", "?")``)."""
    found: set[tuple[str, str]] = set()
    pushed: list = []  # what each op pushed, the string where it pushed one (enough for STACK_GLOBAL's two)
    memo: dict = {}
    text_ops = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "SHORT_BINSTRING", "BINSTRING", "STRING"}
    with open(path, "rb") as f:
        for op, arg, _ in pickletools.genops(f):
            name = op.name
            if name == "GLOBAL":
                mod, _, attr = str(arg).partition(" ")
                found.add((mod, attr))
                pushed.append(None)
            elif name == "STACK_GLOBAL":
                found.add((pushed[-2], pushed[-1]) if len(pushed) >= 2 else ("?", "?"))
                pushed.append(None)
            elif name in text_ops:
                pushed.append(arg)
            elif name == "MEMOIZE":
                memo[len(memo)] = pushed[-1] if pushed else None
            elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
                memo[arg] = pushed[-1] if pushed else None
            elif name in ("GET", "BINGET", "LONG_BINGET"):
                pushed.append(memo.get(arg))
            elif name not in ("PROTO", "FRAME", "STOP"):
                pushed.append(None)
    return {(m if isinstance(m, str) else "?", n if isinstance(n, str) else "?") for m, n in found}


def check_pickle(path: Path, allowed: frozenset = PICKLE_GLOBALS) -> None:
    """Refuse, before it is unpickled, a data file that would import anything but ``allowed``."""
    try:
        bad = sorted(pickle_globals(path) - allowed)
    except Exception as e:
        raise DataError(f"{path} is not a readable pickle ({type(e).__name__}: {e}); replace it with the original file")
    if bad:
        raise DataError(
            f"{path} would import {', '.join('.'.join(b) for b in bad)} when loaded: it is not a dataset batch as "
            "distributed, and is not loaded (replace it with the original file)"
        )


def _cifar_class(base, verify_md5: bool):
    if verify_md5:
        return base

    class Unverified(base):  # type: ignore[misc, valid-type]
        """torchvision's reader without the md5 check (for files that are not the official ones)."""

        def _check_integrity(self) -> bool:
            root = Path(self.root) / self.base_folder
            return all((root / name).is_file() for name, _ in self.train_list + self.test_list)

        def _load_meta(self) -> None:
            import pickle

            path = Path(self.root) / self.base_folder / self.meta["filename"]
            if not path.is_file():
                raise RuntimeError(f"{path} is missing")
            with open(path, "rb") as f:
                data = pickle.load(f, encoding="latin1")
            self.classes = data[self.meta["key"]]
            self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    return Unverified


def _load_cifar(base, name: str, root, split: str, verify_md5: bool) -> ImageDataset:
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    root = Path(root)
    cls = _cifar_class(base, verify_md5)
    folder = root / base.base_folder
    for fname, _ in (*base.train_list, *base.test_list, (base.meta["filename"], None)):
        if (folder / fname).is_file():
            check_pickle(folder / fname)  # before torchvision unpickles it
    try:
        ds = cls(str(root), train=(split == "train"), download=False)
    except RuntimeError as e:
        raise DataError(
            f"{name} under {root / base.base_folder}: {e} (expected the python-pickle "
            f"archive unpacked there; this compendium never downloads it at run time)"
        ) from e
    images = torch.from_numpy(np.ascontiguousarray(ds.data)).permute(0, 3, 1, 2).contiguous()
    return ImageDataset(name, split, images, torch.as_tensor(ds.targets, dtype=torch.int64), tuple(ds.classes))


def load_cifar10(root, split: str = "train", verify_md5: bool = True) -> ImageDataset:
    """CIFAR-10 from ``root/cifar-10-batches-py`` via torchvision: ``uint8 [N, 3, 32, 32]``."""
    from torchvision.datasets import CIFAR10

    return _load_cifar(CIFAR10, "cifar10", root, split, verify_md5)


def load_cifar100(root, split: str = "train", verify_md5: bool = True) -> ImageDataset:
    """CIFAR-100 (fine labels) from ``root/cifar-100-python`` via torchvision."""
    from torchvision.datasets import CIFAR100

    return _load_cifar(CIFAR100, "cifar100", root, split, verify_md5)


def _decode_one(path: str, resolution: int) -> torch.Tensor:
    from torchvision.io import ImageReadMode, decode_image
    from torchvision.transforms.v2 import functional as F

    try:
        img = decode_image(path, mode=ImageReadMode.RGB)
    except RuntimeError as e:
        raise DataError(f"{path}: cannot be decoded as an image ({e})") from e
    img = F.resize(img, [resolution], antialias=True)
    return F.center_crop(img, [resolution, resolution])


def decode_threads() -> int:
    """Threads that decode an image folder: the CPU's cores, at most 16 (torchvision's decoders and resizes
    release the GIL)."""
    return max(1, min(16, os.cpu_count() or 1))


def _decode_resized(files: list[str], resolution: int, threads: int | None = None) -> torch.Tensor:
    """Decode image files to RGB and resize (shorter side) + centre-crop to ``resolution``, on ``threads``
    threads (:func:`decode_threads`); the order of ``files`` is kept."""
    out = torch.empty((len(files), 3, resolution, resolution), dtype=torch.uint8)
    threads = threads or decode_threads()

    def put(i: int) -> None:
        out[i] = _decode_one(files[i], resolution)

    if threads == 1 or len(files) < 64:
        for i in range(len(files)):
            put(i)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(put, range(len(files)), chunksize=64))
    return out


def load_image_folder(
    root,
    resolution: int,
    max_per_class: int | None = None,
    name: str = "imagefolder",
    split: str = "train",
    classes: list[str] | None = None,
) -> ImageDataset:
    """``root/<class>/**/<image>`` (torchvision's ImageFolder layout) decoded once into memory.

    ``max_per_class`` keeps the first files of each class in sorted order (deterministic).
    """
    from torchvision.datasets.folder import IMG_EXTENSIONS, find_classes, make_dataset

    root = Path(root)
    if not root.is_dir():
        raise DataError(f"{root}: image folder is missing")
    found, _ = find_classes(str(root))
    classes = classes or found
    class_to_idx = {c: i for i, c in enumerate(classes)}
    missing = sorted(set(found) - set(classes))
    if missing:
        raise DataError(f"{root}: class folders {missing[:5]} are not among the known classes")
    samples = make_dataset(str(root), {c: class_to_idx[c] for c in found}, extensions=IMG_EXTENSIONS)
    if max_per_class is not None:
        kept, count = [], {}
        for path, y in samples:
            if count.get(y, 0) < max_per_class:
                kept.append((path, y))
                count[y] = count.get(y, 0) + 1
        samples = kept
    if not samples:
        raise DataError(f"{root}: no images found")
    images = _decode_resized([p for p, _ in samples], resolution)
    labels = torch.tensor([y for _, y in samples], dtype=torch.int64)
    return ImageDataset(name, split, images, labels, tuple(classes))


def load_tiny_imagenet(
    root, split: str = "train", resolution: int = 64, max_per_class: int | None = None
) -> ImageDataset:
    """Tiny-ImageNet-200 as distributed: ``train/<wnid>/images/*.JPEG``, ``val/images`` plus
    ``val/val_annotations.txt``; classes in the order of ``wnids.txt``. ``root`` is the unpacked
    ``tiny-imagenet-200`` folder or the folder that holds it (as ``data_root`` holds the CIFAR folders)."""
    root = Path(root)
    if not (root / "wnids.txt").is_file() and (root / "tiny-imagenet-200" / "wnids.txt").is_file():
        root = root / "tiny-imagenet-200"
    wnids_file = root / "wnids.txt"
    if not wnids_file.is_file():
        raise DataError(f"{wnids_file} is missing (expected the unpacked tiny-imagenet-200 folder)")
    wnids = wnids_file.read_text().split()
    if split == "train":
        return load_image_folder(root / "train", resolution, max_per_class, "tiny-imagenet", "train", wnids)
    if split not in ("val", "test"):
        raise ValueError(f"split must be 'train' or 'val', got {split!r}")
    ann = root / "val" / "val_annotations.txt"
    if not ann.is_file():
        raise DataError(f"{ann} is missing")
    index = {w: i for i, w in enumerate(wnids)}
    rows = [line.split("\t") for line in ann.read_text().splitlines() if line.strip()]
    rows.sort(key=lambda r: r[0])
    files, labels, count = [], [], {}
    for r in rows:
        y = index[r[1]]
        if max_per_class is None or count.get(y, 0) < max_per_class:
            files.append(str(root / "val" / "images" / r[0]))
            labels.append(y)
            count[y] = count.get(y, 0) + 1
    return ImageDataset(
        "tiny-imagenet",
        "val",
        _decode_resized(files, resolution),
        torch.tensor(labels, dtype=torch.int64),
        tuple(wnids),
    )


def load_imagenet(root, split: str = "train", resolution: int = 64, max_per_class: int | None = None) -> ImageDataset:
    """ImageNet-1K in the usual sorted layout ``{train,val}/<wnid>/*.JPEG``."""
    if split not in ("train", "val"):
        raise ValueError(f"split must be 'train' or 'val', got {split!r}")
    root = Path(root)
    classes = sorted(p.name for p in (root / "train").iterdir() if p.is_dir()) if (root / "train").is_dir() else None
    return load_image_folder(root / split, resolution, max_per_class, "imagenet", split, classes)


IMAGENETTE_FOLDERS = ("imagenette2", "imagenette2-320", "imagenette2-160")


def load_imagenette(
    root, split: str = "train", resolution: int = 128, max_per_class: int | None = None
) -> ImageDataset:
    """ImageNette (fast.ai's 10-class ImageNet subset) as distributed: ``{train,val}/<wnid>/*.JPEG``. ``root`` is
    the unpacked folder or the folder that holds one of :data:`IMAGENETTE_FOLDERS`; SSDD's Table 9 reads it at
    128 px."""
    root = Path(root)
    if not (root / "train").is_dir():
        root = next((root / f for f in IMAGENETTE_FOLDERS if (root / f / "train").is_dir()), root)
    if not (root / "train").is_dir():
        raise DataError(f"{root}: no train/ folder (expected the unpacked imagenette2 folder or one that holds it)")
    if split not in ("train", "val"):
        raise ValueError(f"split must be 'train' or 'val', got {split!r}")
    classes = sorted(p.name for p in (root / "train").iterdir() if p.is_dir())
    return load_image_folder(root / split, resolution, max_per_class, "imagenette", split, classes)


LOADERS: dict[str, Callable[..., ImageDataset]] = {
    "fashion-mnist": load_fashion_mnist,
    "digits": load_digits,
    "mnist": load_mnist,
    "cifar10": load_cifar10,
    "cifar100": load_cifar100,
    "tiny-imagenet": load_tiny_imagenet,
    "imagenet": load_imagenet,
    "imagenette": load_imagenette,
}


def load(name: str, split: str = "train", **kwargs) -> ImageDataset:
    """Load a dataset by name (see :data:`LOADERS`)."""
    if name not in LOADERS:
        raise ValueError(f"unknown dataset {name!r}; known: {sorted(LOADERS)}")
    return LOADERS[name](split=split, **kwargs)


def pixel_stats(images: torch.Tensor, chunk: int = 8192) -> tuple[list[float], list[float]]:
    """Per-channel mean and std of ``uint8`` images in [0, 1] units, in float64, chunked."""
    c = images.shape[1]
    s = torch.zeros(c, dtype=torch.float64)
    s2 = torch.zeros(c, dtype=torch.float64)
    n = 0
    for i in range(0, images.shape[0], chunk):
        x = images[i : i + chunk].to(torch.float64) / 255.0
        s += x.sum(dim=(0, 2, 3))
        s2 += (x * x).sum(dim=(0, 2, 3))
        n += x.shape[0] * x.shape[2] * x.shape[3]
    mean = s / n
    std = (s2 / n - mean * mean).clamp_min(0).sqrt()
    return mean.tolist(), std.tolist()


#: Split sizes that define Fashion-MNIST (Xiao et al. 2017).
FASHION_MNIST_SIZES = {"train": 60_000, "test": 10_000}
# Pixel mean/std of the Fashion-MNIST training split (on [0, 1]); data_overview measures them and a
# test recomputes them from data/.
FASHION_MNIST_MEAN, FASHION_MNIST_STD = 0.2860, 0.3530


def class_counts(ds: ImageDataset) -> torch.Tensor:
    """Images per class, ``int64 [num_classes]``."""
    return torch.bincount(ds.labels, minlength=ds.num_classes)


# --- a dataset by name, as the `dataset` and `data_root` keys of the ReLA stages give it -----------

SHIPPED = ("fashion-mnist", "digits")  # in the repository (data.dvc); the others need ``data_root``


#: The ImageNet-style folders: decoded from JPEGs at a ``resolution``; ``max_per_class`` limits what is decoded.
FOLDER_DATASETS = ("tiny-imagenet", "imagenet", "imagenette")


#: An environment variable naming a folder of generated stand-ins (:mod:`compendium.core.fakedata`): CIFAR-10/100
#: under it are read without torchvision's md5 check, which refuses them. The paper-shapes check sets it for its own
#: folder; nothing else does.
GENERATED_ENV = "COMPENDIUM_GENERATED_DATA"


def generated(root: Path) -> bool:
    """Whether ``root`` is, or lies inside, the folder of generated stand-ins that :data:`GENERATED_ENV` names."""
    named = os.environ.get(GENERATED_ENV, "")
    if not named:
        return False
    base = Path(named).resolve()
    root = Path(root).resolve()
    return root == base or base in root.parents


def load_dataset(
    name: str, split: str, data_root: str | Path = "", resolution: int | None = None, max_per_class: int | None = None
) -> ImageDataset:
    """A split of a named dataset (see :data:`LOADERS`). Fashion-MNIST and the digits ship with the
    repository; MNIST, CIFAR-10/100, Tiny-ImageNet and ImageNet are read from ``data_root`` (relative paths
    are under the project root) and never downloaded. ``resolution`` and ``max_per_class`` (the first files of
    each class, in sorted order) apply to :data:`FOLDER_DATASETS` only."""
    if name not in LOADERS:
        raise ValueError(f"unknown dataset {name!r}; known: {sorted(LOADERS)}")
    if name in SHIPPED:
        return load(name, split)
    if not data_root:
        raise ValueError(
            f"dataset {name!r} is not shipped with the compendium: set `data_root` to the folder "
            f"that holds it (see README, 'Data')"
        )
    root = Path(data_root)
    root = root if root.is_absolute() else paths.ROOT / root
    if not root.is_dir():
        raise FileNotFoundError(f"data_root {root} does not exist (dataset {name!r})")
    kw = {}
    if name in ("cifar10", "cifar100") and generated(root):
        kw = {"verify_md5": False}
    if name in FOLDER_DATASETS:
        kw = {
            **({"resolution": resolution} if resolution else {}),
            **({"max_per_class": max_per_class} if max_per_class else {}),
        }
    return load(name, split, root=root, **kw)


#: ImageNet-1K's per-channel mean and std (on [0, 1]): what torchvision's pretrained weights were trained with,
#: and what SRe2L's and DWA's ImageNet code normalises with.
IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def normalisation(name: str, images: torch.Tensor) -> tuple[tuple, tuple]:
    """Per-channel mean and std: Fashion-MNIST's and ImageNet-1K's usual constants (the latter is what an
    imported torchvision teacher expects, whatever pool of the training split is in memory), else the training
    images' own."""
    if name == "fashion-mnist":
        return (FASHION_MNIST_MEAN,), (FASHION_MNIST_STD,)
    if name == "imagenet":
        return IMAGENET_MEAN, IMAGENET_STD
    mean, std = pixel_stats(images)
    return tuple(mean), tuple(std)


#: Digit datasets: their augmentations leave out the horizontal flip (a flipped digit is another glyph; DSA's code).
DIGIT_DATASETS = ("mnist", "svhn", "digits", "usps", "kmnist", "emnist")

#: The evaluation split of each dataset (the ImageNet-style folders have no labelled test split).
TEST_SPLITS = {"tiny-imagenet": "val", "imagenet": "val", "imagenette": "val"}


def train_test(
    name: str, data_root: str | Path = "", resolution: int | None = None, train_per_class: int | None = None
) -> tuple[ImageDataset, ImageDataset, tuple, tuple]:
    """``(train, test, mean, std)`` of a named dataset, as the ``dataset`` / ``data_root`` keys of a stage
    give it (:func:`load_dataset`; the test split is ``val`` for the ImageNet-style folders, and the
    normalisation is :func:`normalisation` of the training images). For :data:`FOLDER_DATASETS`,
    ``resolution`` (None or 0: the reader's own) sets the decoded size of both splits and ``train_per_class``
    (None or 0: all) keeps the first training files of each class, a deterministic pool; the test split is
    always whole. Other datasets ignore both (they are read whole at their own size)."""
    tr = load_dataset(name, "train", data_root, resolution, train_per_class)
    te = load_dataset(name, TEST_SPLITS.get(name, "test"), data_root, resolution)
    mean, std = normalisation(name, tr.images)
    return tr, te, mean, std


def subset_indices(n: int, size: int, seed: int) -> torch.Tensor:
    """``size`` of the indices 0..n-1 drawn without replacement (``randperm`` with a generator seeded
    ``seed``), sorted: the ``priors`` stage's D."""
    if size > n:
        raise ValueError(f"a subset of {size} images of {n}: lower it to at most {n}")
    g = torch.Generator().manual_seed(seed)
    return torch.randperm(n, generator=g)[:size].sort().values
