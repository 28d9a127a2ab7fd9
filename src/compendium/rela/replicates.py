"""Seed replicates of a trained prior: the same training on another seed.

Camera-ready Table 1's BYOL* (full-budget BYOL) on seed 0 *is* the same-dataset prior (the paper's CF10-T
is its BYOL* run), which the `priors` stage trains. The `priors` stage also trains every trained prior again on
further seeds (:func:`train_byol`, :func:`train_supervised`; written under ``models/prior_replicates/``, an
output of its own, so adding one leaves the stages that read ``models/priors/`` up to date). `rela_budget`
reuses the same-dataset replicates as BYOL* (:func:`byol_star_specs`) instead of repeating a full-budget
pre-training inside its own time budget. Whether a file may stand in for an arm is decided by
:func:`compendium.rela.experiment.reusable`: the record :func:`train_byol` writes must equal the arm's.

Priors trained per seed (:func:`prior_for_seed`): a student on seed s reads each trained prior's replicate on
the next seed, so that no "+ReLA" arm regresses onto the very network that is its own BYOL* reference and the
priors' own seed-to-seed spread enters the comparison (:func:`base_spec` names the prior a replicate stands for;
the priors stage's own seed is the prior itself).

Example:
    >>> replicate_spec("trained:priors/fmnist_byol.pt", 2)
    'trained:prior_replicates/fmnist_byol_seed2.pt'
    >>> base_spec("trained:prior_replicates/fmnist_byol_seed2.pt")
    'trained:priors/fmnist_byol.pt'
    >>> prior_for_seed("trained:priors/fmnist_byol.pt", 1, [0, 1, 2])
    'trained:prior_replicates/fmnist_byol_seed2.pt'
    >>> prior_for_seed("trained:priors/fmnist_byol.pt", 2, [0, 1, 2])   # seed 0: the priors stage's own run
    'trained:priors/fmnist_byol.pt'
    >>> prior_for_seed("rand", 2, [0, 1, 2])
    'rand'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import torch

from compendium.core import augment, models, resume
from compendium.core.device import distributed_rank
from compendium.rela import priors
from compendium.ssl import methods, train

#: ``models/<this>/``: the seed replicates of trained priors
REPLICATES = "prior_replicates"


def replicate_spec(spec: str, seed: int) -> str:
    """The ``trained:`` spec of the seed-``seed`` replicate of the trained prior ``spec``:
    ``trained:prior_replicates/<stem>_seed<seed>.pt``."""
    kind, _, file = str(spec).partition(":")
    if kind != "trained" or not file.strip():
        raise ValueError(f"replicate_spec({spec!r}): only a trained:<file> prior has seed replicates")
    return f"trained:{REPLICATES}/{Path(file).stem}_seed{int(seed)}.pt"


_REPLICATE = re.compile(rf"^trained:{REPLICATES}/(?P<stem>.+)_seed(?P<seed>\d+)\.pt$")


def base_spec(spec: str) -> str:
    """The trained prior a replicate spec stands for (``trained:priors/<stem>.pt``); any other spec unchanged."""
    m = _REPLICATE.match(str(spec))
    return f"trained:priors/{m.group('stem')}.pt" if m else str(spec)


def prior_for_seed(spec: str, seed: int, seeds: Sequence[int], base_seed: int = 0) -> str:
    """The prior a student on ``seed`` reads when priors are trained per seed: for a ``trained:`` prior, its
    replicate on the next seed of ``seeds`` (cyclically), never on the student's own seed; the prior itself where
    that next seed is ``base_seed`` (the priors stage's own ``seed``, whose run the prior is); any other prior
    (``rand``: the student's own initialisation, as in the paper) unchanged. Needs two seeds or more."""
    if not str(spec).startswith("trained:"):
        return spec
    seeds = list(seeds)
    if seed not in seeds or len(set(seeds)) < 2:
        raise ValueError(f"prior_for_seed({spec!r}, {seed}): seed must be one of two or more seeds, got {seeds}")
    nxt = seeds[(seeds.index(seed) + 1) % len(seeds)]
    return spec if nxt == base_seed else replicate_spec(spec, nxt)


def replicates_needed(specs: Sequence[str], seeds: Sequence[int], base_seed: int = 0) -> dict[str, list[int]]:
    """Per trained prior of ``specs``, the replicate seeds :func:`prior_for_seed` reads for ``seeds``."""
    out = {}
    for spec in specs:
        if str(spec).startswith("trained:"):
            out[spec] = sorted(
                {
                    int(_REPLICATE.match(r).group("seed"))
                    for s in seeds
                    if (r := prior_for_seed(spec, s, seeds, base_seed)) != spec
                }
            )
    return out


def train_byol(
    images: torch.Tensor,
    kwargs: dict,
    mean,
    std,
    *,
    epochs: int,
    batch_size: int,
    seed: int,
    out: Path,
    device: str = "auto",
    name: str = "byol",
    cpu_bf16: bool = False,
) -> tuple[dict, float, float]:
    """BYOL (Grill et al., NeurIPS 2020) at the full budget on ``images`` (uint8): a ConvNet built from
    ``kwargs`` and seeded by ``seed``, the `byol` augmentation preset, the default pre-training
    optimiser (``cpu_bf16``: bf16 autocast on the CPU, see :class:`compendium.ssl.train.PretrainConfig`);
    saved with :func:`compendium.rela.priors.save_backbone` at ``out`` with its train record.
    Resumes from its checkpoint (named after ``name``) after an interruption. Returns
    ``(record, seconds, final loss)``."""
    torch.manual_seed(seed)
    bb = models.build("convnet", **kwargs)
    method = methods.build("byol", bb)
    cfg = train.PretrainConfig(
        epochs=epochs,
        batch_size=batch_size,
        budget=1.0,
        seed=seed,
        device=device,
        log_prefix=name,
        checkpoint=resume.checkpoint_file(name),
        cpu_bf16=cpu_bf16,
    )
    size = kwargs["image_size"]
    hist = train.pretrain(
        method, images, cfg, augment.preset("byol", size=size, small_images=size < 64), list(mean), list(std)
    )
    record = {
        "method": "byol",
        "epochs": epochs,
        "batch_size": cfg.batch_size,
        "lr": cfg.lr,
        "weight_decay": cfg.weight_decay,
        "head_mult": 1.0,
        "budget": cfg.budget,
        "seed": seed,
        "images": len(images),
        **({"cpu_bf16": True} if cpu_bf16 else {}),
    }
    if distributed_rank()[0] == 0:  # under torchrun (compendium.core.launch) one rank writes the file
        priors.save_backbone(bb.cpu(), out, "convnet", kwargs, mean, std, size, train=record)
    return record, float(sum(e["seconds"] for e in hist.epochs)), float(hist.epochs[-1]["loss"])


def train_supervised(
    images: torch.Tensor,
    labels: torch.Tensor,
    num_classes: int,
    kwargs: dict,
    mean,
    std,
    *,
    epochs: int,
    batch_size: int,
    lr: float,
    seed: int,
    out: Path,
    device: str = "auto",
    test: tuple | None = None,
) -> list[dict]:
    """The supervised prior: a ConvNet built from ``kwargs`` and seeded by ``seed``, trained as a classifier on
    ``images``/``labels`` (:func:`compendium.ssl.train.train_classifier`) and saved at ``out``; returns the
    per-epoch records (with the test accuracy when ``test`` = (images, labels) is given)."""
    torch.manual_seed(seed)
    net = models.build("convnet", **kwargs)
    records = train.train_classifier(
        net,
        images,
        labels,
        num_classes,
        train.SupervisedConfig(epochs=epochs, batch_size=batch_size, lr=lr, seed=seed, device=device),
        list(mean),
        list(std),
        test=test,
    )
    priors.save_backbone(net, out, "convnet", kwargs, mean, std, kwargs["image_size"])
    return records


def byol_star_specs(same_dataset_prior: str, seed: int) -> list[str]:
    """The trained priors that may *be* BYOL* on ``seed``: the same-dataset prior (trained on the priors
    stage's seed) and its seed replicate; :func:`compendium.rela.experiment.reusable` decides which one was
    trained exactly as the arm (:func:`compendium.rela.tables.budget_arms` asks)."""
    if not str(same_dataset_prior).startswith("trained:"):
        return []
    return [same_dataset_prior, replicate_spec(same_dataset_prior, seed)]
