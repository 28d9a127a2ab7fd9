"""SSDD Table 1's labelled baselines, DSA and DM, made beside SSDD's own sets.

SSDD (Yu, Yao & Chiu, ICLR 2025: self-supervised dataset distillation via parameterization, Table 1) compares its
set with sets that labelled methods distil, among them DSA (Zhao & Bilen, ICML 2021) and DM (Zhao & Bilen, WACV
2023), each relabelled with the self-supervised teacher's targets and used to pre-train a student as SSDD's set is.
This module synthesizes them from the labelled training set with the settings of the ``dd_matching`` stage (read
where they live, :func:`compendium.pipeline.params.stage_params`), so that SSDD's stages read no model of another
family: a host without DVC's cache can then rerun SSDD's stages and the labelled family's apart.

Example (a toy pool, a two-step DM set relabelled by a linear teacher)::

    >>> import torch
    >>> from compendium.distill.methods.base import Pool
    >>> pool = Pool(torch.randint(0, 256, (20, 1, 8, 8), dtype=torch.uint8), torch.arange(20) % 2, (0.5,), (0.25,))
    >>> values = matching_values({"width": 4, "batch_real": 4, "iterations": 1, "dm_iterations": 2,
    ...           "loops_ipc10": [1, 1], "loops_ipc50": [1, 1]}, "fashion-mnist")
    >>> made = synthesize(["dm"], 1, values, pool, workers=0)
    >>> teacher = lambda x: x.flatten(1)[:, :3]
    >>> ts = relabel(made["dm"], teacher, (0.5,), (0.25,))
    >>> ts.extra["name"], tuple(ts.images.shape), tuple(ts.targets.shape)
    ('DM', (2, 1, 8, 8), (2, 3))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import torch

from compendium.core.parallel import run_calls
from compendium.distill import ssdd
from compendium.distill.matching import dsa
from compendium.distill.methods import matching
from compendium.distill.methods.base import Pool
from compendium.distill.sets import DistilledSet

#: The ``dd_matching`` keys a baseline's synthesis reads (the rest of that stage sizes its evaluation).
SYNTHESIS_KEYS = ("width", "batch_real", "iterations", "dm_iterations", "loops_ipc10", "loops_ipc50")


def matching_values(settings: Mapping, dataset: str, device: str = "cpu") -> dict:
    """The ``values`` a matching method's :meth:`~compendium.distill.methods.base.DistillMethod.config` reads:
    the synthesis keys of ``settings`` (``dd_matching``'s parameters at a scale), the dataset, its default DSA
    strategy and the device. A missing key is named before any compute."""
    missing = [k for k in SYNTHESIS_KEYS if k not in settings]
    if missing:
        raise KeyError(f"dd_matching settings lack {missing}: params.yaml's dd_matching section sets them")
    values = {k: settings[k] for k in SYNTHESIS_KEYS}
    return values | {"dataset": dataset, "dsa_strategy": dsa.default_strategy(dataset), "device": device}


def synthesize(
    methods: Sequence[str], ipc: int, values: Mapping, pool: Pool, workers: int = 2
) -> dict[str, DistilledSet]:
    """``{method: DistilledSet}``: each of ``methods`` (names of the matching family's ``METHODS``) distilled
    from ``pool`` at ``ipc`` images per class, in one worker pool (``workers`` 0: here, one after the other)."""
    unknown = [m for m in methods if m not in matching.METHODS]
    if unknown:
        raise KeyError(f"unknown matching methods {unknown}; known: {sorted(matching.METHODS)}")
    calls = [
        (matching.METHODS[m].synthesize, (pool, ipc), matching.METHODS[m].config(ipc, dict(values))) for m in methods
    ]
    return dict(zip(methods, run_calls(calls, workers=workers)))


def relabel(
    ds: DistilledSet,
    teacher: Callable[[torch.Tensor], torch.Tensor],
    mean: Sequence[float],
    std: Sequence[float],
    budget: int = 0,
) -> ssdd.TargetSet:
    """The set ``ds`` as an SSDD target set: its images in the normalisation ``mean``/``std`` of SSDD's source
    (renormalised when ``ds``'s differs), the teacher's targets of them, its synthesis cost, and the float budget
    it is held to (default: its own size)."""
    x = ds.images
    if tuple(ds.mean) != tuple(float(m) for m in mean) or tuple(ds.std) != tuple(float(s) for s in std):
        view = (1, -1, 1, 1)
        raw = x * torch.tensor(ds.std).view(view) + torch.tensor(ds.mean).view(view)
        x = (raw - torch.tensor(mean, dtype=x.dtype).view(view)) / torch.tensor(std, dtype=x.dtype).view(view)
    floats = int(x[0].numel() * len(x))
    name = ds.method.upper()
    return ssdd.TargetSet(
        x,
        teacher(x),
        ds.method,
        floats,
        {
            "n": len(x),
            "teacher": getattr(teacher, "name", "teacher"),
            "budget": budget or floats,
            "source": f"{name} at {len(x) // max(ds.num_classes, 1)} images per class, labelled synthesis",
        },
        ds.seed,
        float(ds.synthesis_seconds),
        float(ds.peak_memory_bytes) / 2**20,
        {"name": name, "m": len(x), "losses": []},
    )
