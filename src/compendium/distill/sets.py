"""The one on-disk format of every distilled set, and the labelled set every labelled method returns.

:func:`save_tensors` / :func:`load_tensors` write and read a set file: a dict of tensors and a JSON
meta record under a format number and a ``kind``, written atomically (a temporary file, then a rename)
and read with ``weights_only=True`` (no code is unpickled). Every set type persists through them.

A :class:`DistilledSet` holds the synthetic (or selected) images in the *normalised* space of their
dataset ((x/255 - mean) / std, float32, any resolution), their hard class labels, optional soft labels
(probabilities over the classes), the method, its params and seed, and what the synthesis cost
(wall seconds and peak memory). :func:`measure` records the cost around a synthesis call.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import torch

FORMAT_VERSION = 2  # 2: one file layout for every set type (tensors, kind, meta)


class SetError(ValueError):
    """A distilled set that is malformed, or a file that is not one."""


@dataclass
class DistilledSet:
    images: torch.Tensor  # float32 [N, C, H, W], normalised
    labels: torch.Tensor  # int64 [N], hard class labels
    num_classes: int
    mean: tuple[float, ...]
    std: tuple[float, ...]
    method: str
    dataset: str = "fashion-mnist"
    params: dict = field(default_factory=dict)
    seed: int = 0
    soft_labels: torch.Tensor | None = None  # float32 [N, num_classes], rows sum to 1
    synthesis_seconds: float = 0.0
    peak_memory_bytes: int = 0
    source_index: torch.Tensor | None = None  # int64 [N]: indices into the real training set (coresets)

    def __post_init__(self) -> None:
        self.mean, self.std = tuple(float(m) for m in self.mean), tuple(float(s) for s in self.std)
        self.validate()

    def validate(self) -> None:
        x, y = self.images, self.labels
        if not isinstance(x, torch.Tensor) or x.ndim != 4 or not x.is_floating_point():
            raise SetError(
                f"{self.method}: images must be a float tensor N x C x H x W, got "
                f"{getattr(x, 'dtype', type(x))} {tuple(getattr(x, 'shape', ()))}"
            )
        if y.dtype != torch.int64 or y.shape != (x.shape[0],):
            raise SetError(f"{self.method}: labels must be int64 [{x.shape[0]}], got {y.dtype} {tuple(y.shape)}")
        if x.shape[0] == 0:
            raise SetError(f"{self.method}: the set is empty")
        if int(y.min()) < 0 or int(y.max()) >= self.num_classes:
            raise SetError(f"{self.method}: labels outside [0, {self.num_classes})")
        if len(self.mean) not in (1, x.shape[1]) or len(self.std) != len(self.mean):
            raise SetError(f"{self.method}: {len(self.mean)} normalisation channels for {x.shape[1]} image channels")
        if not torch.isfinite(x).all():
            raise SetError(f"{self.method}: non-finite pixels")
        if self.soft_labels is not None:
            s = self.soft_labels
            if s.shape != (x.shape[0], self.num_classes) or not s.is_floating_point():
                raise SetError(f"{self.method}: soft labels must be float [{x.shape[0]}, {self.num_classes}]")
            if (s < -1e-6).any() or not torch.allclose(s.sum(1), torch.ones(len(s), dtype=s.dtype), atol=1e-3):
                raise SetError(f"{self.method}: soft labels must be probabilities (rows >= 0 summing to 1)")

    def __len__(self) -> int:
        return self.images.shape[0]

    @property
    def per_class(self) -> torch.Tensor:
        return torch.bincount(self.labels, minlength=self.num_classes)

    @property
    def ipc(self) -> int:
        """Images per class (the smallest class count; equal counts for every method here)."""
        return int(self.per_class.min())

    def pixels(self) -> torch.Tensor:
        """Images back in [0, 1] pixel space (clamped), for grids."""
        m = torch.tensor(self.mean).view(1, -1, 1, 1)
        s = torch.tensor(self.std).view(1, -1, 1, 1)
        return (self.images * s + m).clamp(0, 1)

    def with_soft_labels(self, soft: torch.Tensor, how: str) -> "DistilledSet":
        """The same images, relabelled (``how`` is recorded in the params)."""
        return DistilledSet(
            self.images,
            self.labels,
            self.num_classes,
            self.mean,
            self.std,
            self.method,
            self.dataset,
            {**self.params, "relabel": how},
            self.seed,
            soft.float(),
            self.synthesis_seconds,
            self.peak_memory_bytes,
            self.source_index,
        )

    def save(self, path: str | Path) -> Path:
        """Write the set (:func:`save_tensors`). Its synthesis time and peak memory stay out of the file:
        they differ between identical runs, and a rerun must rewrite the file byte for byte so that the
        stages that read it stay up to date (:mod:`compendium.core.volatile`); the stage that made the set
        reports them in its tables. A loaded set has ``synthesis_seconds`` NaN and ``peak_memory_bytes`` 0."""
        return save_tensors(
            path,
            "labelled",
            {
                "images": self.images.float(),
                "labels": self.labels,
                "soft_labels": None if self.soft_labels is None else self.soft_labels.float(),
                "source_index": self.source_index,
            },
            {
                "num_classes": self.num_classes,
                "mean": self.mean,
                "std": self.std,
                "method": self.method,
                "dataset": self.dataset,
                "params": self.params,
                "seed": self.seed,
            },
        )

    @classmethod
    def load(cls, path: str | Path, dataset: str | None = None) -> "DistilledSet":
        """The set in ``path``; with ``dataset``, a :class:`SetError` when it was made from another dataset
        (a stage that reads another's sets must run on the same ``dataset``)."""
        d, meta = load_tensors(path, "labelled")
        if dataset is not None and meta["dataset"] != dataset:
            raise SetError(
                f"{path}: a set of {meta['dataset']!r}, not {dataset!r}; set the same `dataset` in the stage "
                "that wrote it and in this one, and rerun that stage"
            )
        return cls(
            d["images"],
            d["labels"],
            meta["num_classes"],
            tuple(meta["mean"]),
            tuple(meta["std"]),
            meta["method"],
            meta["dataset"],
            meta["params"],
            meta["seed"],
            d["soft_labels"],
            float(meta.get("synthesis_seconds", math.nan)),
            int(meta.get("peak_memory_bytes", 0)),
            d["source_index"],
        )


def save_tensors(path: str | Path, kind: str, tensors: dict, meta: dict) -> Path:
    """Write a set file atomically: ``tensors`` (name -> tensor or None, moved to the CPU) and ``meta``
    (JSON-serialisable) under :data:`FORMAT_VERSION` and ``kind`` (the set type)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    body = {k: (None if v is None else v.detach().cpu()) for k, v in tensors.items()}
    torch.save({"format": FORMAT_VERSION, "kind": kind, "tensors": body, "meta": json.dumps(meta)}, tmp)
    tmp.replace(path)
    return path


def load_tensors(path: str | Path, kind: str) -> tuple[dict, dict]:
    """Read a set file of type ``kind``: ``(tensors, meta)``; a clear :class:`SetError` for a missing,
    corrupt or foreign file."""
    path = Path(path)
    if not path.is_file():
        raise SetError(f"no {kind} set at {path}")
    try:
        d = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - any unpickling failure means a corrupt file
        raise SetError(f"{path} is not a readable set file ({type(e).__name__}: {e})") from e
    if not isinstance(d, dict) or d.get("format") != FORMAT_VERSION or d.get("kind") != kind:
        raise SetError(
            f"{path}: not a {kind} set of format {FORMAT_VERSION} "
            f"(found kind {d.get('kind') if isinstance(d, dict) else None!r})"
        )
    return d["tensors"], json.loads(d["meta"])


def from_real(
    images_u8: torch.Tensor, labels: torch.Tensor, index: torch.Tensor, num_classes: int, mean, std, method: str, **kw
) -> DistilledSet:
    """A coreset: real images ``images_u8[index]`` (uint8) with their labels, normalised."""
    index = torch.as_tensor(index, dtype=torch.int64)
    x = images_u8[index].float().div_(255.0)
    m = torch.as_tensor(mean, dtype=torch.float32).view(1, -1, 1, 1)
    s = torch.as_tensor(std, dtype=torch.float32).view(1, -1, 1, 1)
    return DistilledSet(
        (x - m) / s,
        labels[index].clone(),
        num_classes,
        tuple(mean),
        tuple(std),
        method,
        source_index=index.clone(),
        **kw,
    )


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


@dataclass
class Cost:
    seconds: float = 0.0
    peak_memory_bytes: int = 0


@contextmanager
def measure(device: str | torch.device = "cpu", interval: float = 0.01):
    """Wall time and peak memory of the block: on CUDA the allocator's peak, on CPU the peak increase of
    the process's resident memory (sampled every ``interval`` s)."""
    cost = Cost()
    dev = torch.device(device)
    stop = threading.Event()
    base, peak = _rss_bytes(), [0]

    def poll():
        while not stop.is_set():
            peak[0] = max(peak[0], _rss_bytes() - base)
            stop.wait(interval)

    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
        base_cuda = torch.cuda.memory_allocated(dev)
        th = None
    else:
        th = threading.Thread(target=poll, daemon=True)
        th.start()
    t0 = time.perf_counter()
    try:
        yield cost
    finally:
        cost.seconds = time.perf_counter() - t0
        if th is not None:
            stop.set()
            th.join()
            cost.peak_memory_bytes = max(peak[0], _rss_bytes() - base, 0)
        else:
            cost.peak_memory_bytes = int(torch.cuda.max_memory_allocated(dev) - base_cuda)
