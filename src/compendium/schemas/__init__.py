"""One module per pipeline stage: ``SECTION`` (its params.yaml section and notebook name),
``SCHEMA`` (its keys, see :class:`compendium.params.P`) and ``DATA`` (the shipped datasets it
reads, checked before the notebook starts)."""

from ..params import P

METHODS = ("byol", "simclr", "barlow_twins", "dino", "moco", "simsiam", "swav", "vicreg")

DATASETS = ("fashion-mnist", "cifar10", "cifar100", "tiny-imagenet", "imagenet")

# Which dataset D is (the ReLA experiment stages and the priors stage).
DATASET = {
    "dataset": P("str", "D: fashion-mnist (shipped) or a dataset read from data_root (must match the priors stage)",
                 choices=DATASETS),
    "data_root": P("str", "folder holding the non-shipped datasets (relative to the project root); '' for the shipped ones"),
}

# The keys every ReLA experiment stage shares (compendium.protocol.Setup and the Conv-3 student).
PROTOCOL = {
    "width": P("int", "Conv-3 width of the student (must match the priors stage)", low=4, high=1024),
    "depth": P("int", "ConvNet depth (must match the priors stage)", low=1, high=6),
    "norm": P("str", "normalisation layer (must match the priors stage)", choices=("batch", "instance", "group", "layer", "none")),
    "global_pool": P("bool", "globally pooled features (must match the priors stage)"),
    "epochs": P("int", "epochs of the full (100%) budget; a budget r trains r of its steps", low=1, high=1000),
    "batch_size": P("int", "pre-training batch size", low=8),
    "lr": P("float", "AdamW learning rate (constant, as the code)", low=0.0, high=1.0),
    "weight_decay": P("float", "AdamW weight decay", low=0.0),
    "head_mult": P("float", "width multiplier of the projection/prediction heads", low=0.01, high=4.0),
    "rela_code_extras": P("bool", "the code's colour jitter and grayscale in ReLA's weak views"),
    "probe_train": P("int", "images of D the linear probe trains on (0: all)", low=0, high=2_000_000),
    "probe_standardize": P("bool", "z-score the frozen features before the probe (false: the paper's raw features)"),
    "probe_epochs": P("int", "linear-probe epochs", low=1),
    "probe_batch_size": P("int", "linear-probe batch size", low=1),
    "probe_lr": P("float", "linear-probe Adam learning rate", low=0.0),
    "workers": P("int", "single-threaded worker processes (0: run in the notebook's process, for a GPU)", low=0, high=64),
    "device": P("str", "auto (CUDA when present), cpu or cuda", choices=("auto", "cpu", "cuda")),
    "dpi": P("int", "PNG resolution", low=50, high=150),
}

# The evaluation keys shared by the labeled-distillation stages (compendium.distill.evaluate).
DD_RUN = {
    "seeds": P("list[int]", "evaluation seeds (a fresh student per seed)", low=0, nonempty=True),
    "eval_steps": P("int", "optimiser steps of every student", low=1),
    "eval_batch": P("int", "student batch size", low=1),
    "eval_lr": P("float", "student AdamW learning rate (cosine)", low=0.0, high=1.0),
    "test_n": P("int", "class-balanced test images every student is tested on (0: all 10,000)", low=0),
    "workers": P("int", "single-threaded worker processes (0: in the notebook's process)", low=0, high=64),
    "device": P("str", "auto (CUDA when present), cpu or cuda", choices=("auto", "cpu", "cuda")),
    "dpi": P("int", "PNG resolution", low=50, high=150),
}
# Stages whose sets carry hard labels: their students' own batch size (dwa.md §6.3 reductions).
DD_HARD = {
    "eval_batch_hard": P("int", "batch size of the hard-label students (cpu: 32, within seed noise of 64 for hard "
                                "labels and half the cost; online-teacher students keep eval_batch)", low=1),
}
DD_EVAL = {
    **DD_RUN,
    "ipcs": P("list[int]", "images per class", low=1, high=1000, nonempty=True),
    "eval_width": P("int", "width of the Conv-3 student (BatchNorm)", low=4, high=1024),
}
