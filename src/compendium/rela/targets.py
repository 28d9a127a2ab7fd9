"""ReLA-D: targets from a prior model (camera-ready Sec. 4.1 and eq. 10, Algorithm 2).

* :func:`prior_inputs`: clean images at the prior's input size and normalisation (the code's
  Resize + CenterCrop; square inputs here, so a resize), channels adapted (grey to RGB by repetition,
  RGB to grey by the mean).
* :func:`make_targets`: two streaming passes over the prior's features. The first fits the
  :class:`compendium.core.pca.TargetMap` (covariance accumulated batch by batch). The second writes the
  ``[N, n]`` targets, n = min(student dim, prior dim). Memory is O(d^2) plus the output, whatever N:
  the raw features are not held in full unless they are small (``store_features``: then one pass).
* :func:`cached_targets`: the same, cached under a key made of the prior, the dataset, the seed and
  every option (:func:`compendium.rela.priors.cache_key`). In the released code the key missed the seed
  and the architecture.
* :func:`save_targets`: a target file holds the targets, the fitted map and the key, never the
  timings (:attr:`Targets.seconds`): identical inputs give a byte-identical file, so an identical
  rerun of the ``priors`` stage leaves the stages that read ``models/targets/`` up to date. The
  stage reports the timings in ``reports/timings/priors.json``.
* :func:`write_index` / :func:`read_index`: the ``targets/index.json`` file of the ``priors`` stage
  (D's indices and normalisation, one entry per target file), versioned by :data:`INDEX_VERSION`.
* :class:`TargetBank`: the targets of D per (prior, n, order): read from that index when they are
  there, else made once (``rand`` for a new student architecture) and kept in memory.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F

from compendium.core import models
from compendium.core.device import pick_device
from compendium.core.pca import TargetMap
from compendium.rela import priors
from compendium.rela.priors import Prior, cache_key


def prior_inputs(images: torch.Tensor, prior: Prior) -> torch.Tensor:
    """``uint8 [B, C, H, W]`` to the prior's input: float, resized, channel-adapted, normalised."""
    x = images.float().div_(255.0)
    if x.shape[1] != prior.in_channels:
        if x.shape[1] == 1:
            x = x.expand(-1, prior.in_channels, -1, -1)
        elif prior.in_channels == 1:
            x = x.mean(1, keepdim=True)
        else:
            raise ValueError(f"cannot adapt {x.shape[1]} channels to the prior's {prior.in_channels}")
    if x.shape[-1] != prior.input_size or x.shape[-2] != prior.input_size:
        x = F.interpolate(
            x, size=(prior.input_size, prior.input_size), mode="bilinear", align_corners=False, antialias=True
        )
    mean = torch.as_tensor(prior.mean, dtype=x.dtype, device=x.device).view(1, -1, 1, 1)
    std = torch.as_tensor(prior.std, dtype=x.dtype, device=x.device).view(1, -1, 1, 1)
    if mean.shape[1] not in (1, x.shape[1]):
        raise ValueError(f"prior {prior.name}: {mean.shape[1]} normalisation channels for {x.shape[1]} input channels")
    return (x - mean) / std


@torch.no_grad()
def prior_features(prior: Prior, images: torch.Tensor, batch_size: int = 256, device="cpu"):
    """The prior's features of every image, batch by batch (float32 on the CPU), in eval mode."""
    prior.model.eval().to(device, memory_format=torch.channels_last)
    for i in range(0, images.shape[0], batch_size):
        x = prior_inputs(images[i : i + batch_size].to(device), prior).contiguous(memory_format=torch.channels_last)
        yield prior.model(x).float().reshape(x.shape[0], -1).cpu()


@dataclass
class Targets:
    """ReLA-D targets. ``seconds`` (fit / transform / total wall-clock time) stays in memory for the
    stage's timings report; :func:`save_targets` does not write it."""

    values: torch.Tensor  # [N, n] float32
    map: TargetMap
    prior: str
    seconds: dict = field(default_factory=dict)
    key: str = ""


KEEP_FEATURES_BYTES = 2 << 30


def target_dim(student_dim: int, prior_dim: int) -> int:
    """n = min(student feature dim, prior dim) (the code)."""
    return min(student_dim, prior_dim)


def make_targets(
    prior: Prior,
    images: torch.Tensor,
    n_components: int,
    order: str = "code",
    batch_size: int = 256,
    device="cpu",
    store_features: bool | str = "auto",
) -> Targets:
    """ReLA-D targets for ``images`` (``uint8 [N, C, H, W]``). See the module docstring.

    ``store_features="auto"`` keeps the raw features (one pass over the prior instead of two) when
    they take at most ``KEEP_FEATURES_BYTES``; the targets are the same either way."""
    if n_components > prior.feature_dim:
        raise ValueError(f"{n_components} target components exceed the prior's {prior.feature_dim} features")
    if store_features == "auto":
        store_features = images.shape[0] * prior.feature_dim * 4 <= KEEP_FEATURES_BYTES
    t0 = time.perf_counter()
    kept = [] if store_features else None

    def first_pass():
        for f in prior_features(prior, images, batch_size, device):
            if kept is not None:
                kept.append(f)
            yield f

    tmap = TargetMap.fit(first_pass(), n_components, order)
    t1 = time.perf_counter()
    out = torch.empty(images.shape[0], n_components, dtype=torch.float32)
    second = kept if kept is not None else prior_features(prior, images, batch_size, device)
    i = 0
    for f in second:
        out[i : i + f.shape[0]] = tmap.transform(f).float()
        i += f.shape[0]
    t2 = time.perf_counter()
    return Targets(out, tmap, prior.name, {"fit": t1 - t0, "transform": t2 - t1, "total": t2 - t0})


def save_targets(t: Targets, path: Path) -> None:
    """Write ``t`` to ``path`` (atomically: a temporary file of the same stem, then a rename). The file
    holds no timings (``t.seconds`` is left out), so identical targets give a byte-identical file:
    ``torch.save`` of the same tensors under the same file stem is byte-stable."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    p = t.map.pca
    tmp = path.with_suffix(".tmp")
    torch.save(
        {
            "values": t.values,
            "prior": t.prior,
            "order": t.map.order,
            "key": t.key,
            "mean": p.mean,
            "components": p.components,
            "eigenvalues": p.eigenvalues,
            "n": p.n,
        },
        tmp,
    )
    tmp.replace(path)


def load_targets(path: Path) -> dict:
    return torch.load(Path(path), map_location="cpu", weights_only=True)


def cached_targets(
    prior: Prior,
    images: torch.Tensor,
    dataset: str,
    seed: int,
    n_components: int,
    cache_dir: Path,
    order: str = "code",
    batch_size: int = 256,
    device="cpu",
) -> tuple[torch.Tensor, Path, bool]:
    """Targets from ``cache_dir/<key>.pt`` if there, else computed and saved. Returns (targets, file, hit)."""
    key = cache_key(
        prior.name, dataset, seed, n=n_components, order=order, N=int(images.shape[0]), size=list(images.shape[1:])
    )
    path = Path(cache_dir) / f"{key}.pt"
    if path.is_file():
        return load_targets(path)["values"], path, True
    t = make_targets(prior, images, n_components, order, batch_size, device)
    t.key = key
    save_targets(t, path)
    return t.values, path, False


# --- the priors stage's index of target files ----------------------------------------------------

#: The format of ``targets/index.json``: {"version", "dataset", "mean", "std", "indices", "targets"},
#: each target entry with prior, file, n, prior_dim, arch, order, seed, dataset, train_n,
#: indices_seed and student.
INDEX_VERSION = 1
_REMAKE = "remake it with `dvc repro priors`"


def write_index(path: Path, *, dataset: str, mean, std, indices, targets: list[dict]) -> Path:
    """Write the ``priors`` stage's index: D = ``indices`` of ``dataset``'s training split, its
    normalisation ``mean`` / ``std``, and one entry per target file (``targets``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    index = {
        "version": INDEX_VERSION,
        "dataset": dataset,
        "mean": list(mean),
        "std": list(std),
        "indices": list(indices),
        "targets": list(targets),
    }
    path.write_text(json.dumps(index, indent=1) + "\n")
    return path


def read_index(path: Path) -> dict:
    """The index written by :func:`write_index`; a missing file, or one without this
    :data:`INDEX_VERSION`, raises an error that names the file and the command that remakes it."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: the `priors` stage makes the targets (run `dvc repro priors`)")
    index = json.loads(path.read_text())
    version = index.get("version") if isinstance(index, dict) else None
    if version != INDEX_VERSION:
        found = "no version" if version is None else f"version {version!r}"
        raise ValueError(f"{path} has {found}, this code reads index version {INDEX_VERSION}: {_REMAKE}")
    missing = [k for k in ("dataset", "mean", "std", "indices", "targets") if k not in index]
    if missing:
        raise ValueError(f"{path} lacks {missing}: {_REMAKE}")
    return index


class TargetBank:
    """ReLA-D targets for D, per (prior, n, order; plus architecture and seed for ``rand``).

    ``setup``: anything with ``images`` (D, ``uint8 [N, C, H, W]``), ``mean``, ``std`` and ``device``
    (:class:`compendium.rela.experiment.Setup`)."""

    def __init__(self, setup, index_file: Path | None = None, batch_size: int = 512):
        self.setup = setup
        self.batch_size = batch_size
        self.memo: dict = {}
        self.entries = []
        self.index_dir = None
        self.made: list[dict] = []
        if index_file is not None:
            index_file = Path(index_file)
            index = read_index(index_file)
            if len(index["indices"]) != setup.images.shape[0]:
                raise ValueError(
                    f"the targets in {index_file} are for {len(index['indices'])} images, D has "
                    f"{setup.images.shape[0]}: load D with the index's `indices`"
                )
            self.entries, self.index_dir = index["targets"], index_file.parent

    def lookup(
        self, spec: str, student: models.Backbone, arch: str, kwargs: dict, seed: int, order: str = "code"
    ) -> torch.Tensor | None:
        """The targets if the index or the memory has them, else None (nothing is computed).
        ``rand:<arch>``: the index's random network of that architecture, for every student (the
        camera-ready Table 2's "RN18 (Rand.)" column is one random network for all students)."""
        if spec.startswith("rand:"):
            for e in self.entries:
                if (
                    e["prior"] == "rand"
                    and e["arch"] == spec[5:]
                    and e["order"] == order
                    and e["seed"] == seed
                    and e["n"] == target_dim(student.feature_dim, e["prior_dim"])
                ):
                    return self._load(e)
            return None
        for e in self.entries:
            same_student = e["student"] == kwargs and arch == e["arch"]
            if e["prior"] == spec and e["order"] == order and (spec != "rand" or (same_student and e["seed"] == seed)):
                if spec != "rand" and e["n"] != target_dim(student.feature_dim, e["prior_dim"]):
                    continue
                return self._load(e)
        return self.memo.get(self._key(spec, arch, kwargs, seed, order, student.feature_dim))

    def _load(self, entry: dict) -> torch.Tensor:
        key = ("index", entry["file"])
        if key not in self.memo:
            self.memo[key] = load_targets(self.index_dir / entry["file"])["values"]
        return self.memo[key]

    @staticmethod
    def _key(spec, arch, kwargs, seed, order, dim):
        return (
            spec,
            arch,
            json.dumps(kwargs, sort_keys=True) if spec == "rand" else "",
            seed if spec == "rand" else 0,
            order,
            dim,
        )

    def get(
        self, spec: str, student: models.Backbone, arch: str, kwargs: dict, seed: int, order: str = "code"
    ) -> torch.Tensor:
        """``[N, n]`` targets, n = min(student dim, prior dim): from the index, else made and kept."""
        found = self.lookup(spec, student, arch, kwargs, seed, order)
        if found is not None:
            return found
        if spec.startswith("rand:"):
            raise ValueError(
                f"prior {spec!r}: no such random network (seed {seed}, order {order}) in the priors "
                "stage's targets; use `rand` for the student's own random network"
            )
        s = self.setup
        prior = priors.load(
            spec, student_arch=arch, student_kwargs=kwargs, seed=seed, mean=tuple(s.mean), std=tuple(s.std)
        )
        n = target_dim(student.feature_dim, prior.feature_dim)
        t = make_targets(
            prior,
            s.images,
            n,
            order=order,
            batch_size=self.batch_size,
            device=pick_device(s.device),
            store_features=True,
        )
        self.made.append(
            {"prior": spec, "arch": arch, "seed": seed, "n": n, "order": order, "seconds": t.seconds["total"]}
        )
        self.memo[self._key(spec, arch, kwargs, seed, order, student.feature_dim)] = t.values
        return t.values
