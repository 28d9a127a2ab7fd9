"""Generated stand-ins for the papers' datasets, in their distributed on-disk formats and shapes, with random
contents: CIFAR-10/100's python pickles, MNIST's gzipped IDX files, the ImageNet-style JPEG folders and the text
corpora of text dataset distillation (IMDB, TREC, SST-5's trees).

The tests read them to check each loader and each stage's ``scale: paper`` path on files laid out as the real ones
are; the paper-shapes check (:mod:`compendium.pipeline.paper_check`) runs the whole pipeline on them. They are not the
official files: CIFAR's readers take them only where :data:`compendium.core.data.GENERATED_ENV` names their folder
(torchvision's md5 check would refuse them).

Example::

    root = write_cifar10("/tmp/ext", per_class_train=50)   # /tmp/ext/cifar-10-batches-py/...
    data.load_cifar10(root, verify_md5=False).images.shape   # torch.Size([500, 3, 32, 32])
"""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import numpy as np
import torch
from torchvision.io import write_jpeg

from compendium.core import data


def write_cifar100(root, per_class_train: int = 2, per_class_test: int = 1, seed: int = 0):
    """A ``root/cifar-100-python`` folder in CIFAR-100's python-pickle format (``train``, ``test``,
    ``meta``; fine and coarse labels) with ``per_class_*`` random images of each of the 100 classes.
    Not the official files: read it with ``verify_md5=False``."""
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


def write_cifar10(root, per_class_train: int = 2, per_class_test: int = 1, seed: int = 0):
    """A ``root/cifar-10-batches-py`` folder in CIFAR-10's python-pickle format (five training batches, the test
    batch and ``batches.meta``) with ``per_class_*`` random images of each of the 10 classes per split. Not the
    official files: read it with ``verify_md5=False``."""
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


def write_mnist(root, per_class_train: int = 3, per_class_test: int = 1, seed: int = 0, gz: bool = True):
    """A ``root/MNIST/raw`` folder (torchvision's layout) with MNIST's four IDX files, gzipped as distributed
    (or not), holding ``per_class_*`` random 28x28 digits of each class."""
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
    folder.mkdir(parents=True, exist_ok=True)
    for n in names:
        write_jpeg(torch.randint(0, 256, (3, size, size), dtype=torch.uint8, generator=generator), str(folder / n))


def write_tiny_imagenet(root, classes: int = 4, per_class: int = 2, val: int = 4):
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


def write_imagenet(root, classes: int = 3, per_class: int = 3, val_per_class: int = 2, size=(180, 240)):
    """A ``root/imagenet`` folder in ImageNet-1K's usual sorted layout (``{train,val}/<wnid>/*.JPEG``) with
    ``classes`` random classes of ``size`` (h, w) JPEGs, not square, as ImageNet's are; returns the folder."""
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


def write_imagenette(root, classes: int = 3, per_class: int = 2, size: int = 160):
    """A ``root/imagenette2-160`` folder (``{train,val}/<wnid>/*.JPEG``) with ``classes`` random classes."""
    d = Path(root) / "imagenette2-160"
    g = torch.Generator().manual_seed(0)
    for split in ("train", "val"):
        for k in range(classes):
            _write_jpegs(d / split / f"n{k:08d}", [f"{split}_{k}_{i}.JPEG" for i in range(per_class)], size, g)
    return Path(root)


def write_text_corpora(root, per_class: int = 3, trec_repeats: int = 2, filler: int = 0, seed: int = 0):
    """Copies of ``aclImdb/`` (``per_class`` reviews per class and split), TREC's two label files (the six coarse
    classes: ``trec_repeats`` questions per class for training, one for testing) and SST-5's PTB trees (two each)
    under ``root``; ``filler`` random words end each review and question (0: the fixed sentences alone). Returns
    ``root``."""
    root = Path(root)
    rng = np.random.default_rng(seed)
    words = ("good", "bad", "film", "plot", "actor", "scene", "music", "story", "slow", "fun")

    def tail() -> str:
        return "".join(f" {w}" for w in rng.choice(words, filler)) if filler else ""

    for split in ("train", "test"):
        for cls, word in (("neg", "awful"), ("pos", "great")):
            d = root / "aclImdb" / split / cls
            d.mkdir(parents=True, exist_ok=True)
            for i in range(per_class):
                (d / f"{i}_1.txt").write_text(f"A {word} film.<br />Really {word}{tail()} {i}.")
    questions = (
        "DESC:manner How did it happen",
        "HUM:ind Who wrote it",
        "LOC:city Where is it",
        "NUM:date When was it",
        "ENTY:animal What animal is it",
        "ABBR:exp What does it stand for",
    )
    trec = root / "trec"
    trec.mkdir(parents=True, exist_ok=True)
    for name, copies in (("train_5500.label", trec_repeats), ("TREC_10.label", 1)):
        lines = [f"{q}{tail()} ?" for _ in range(copies) for q in questions]
        (trec / name).write_text("\n".join(lines) + "\n", encoding="latin-1")
    trees = root / "trees"
    trees.mkdir(parents=True, exist_ok=True)
    for split in ("train", "test"):
        (trees / f"{split}.txt").write_text("(3 (2 It) (4 (4 works) (2 .)))\n(0 (1 (0 Dreadful) (2 film)) (2 .))\n")
    return root
