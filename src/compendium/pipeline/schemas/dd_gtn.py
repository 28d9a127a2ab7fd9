from compendium.pipeline.schemas import DD_DATASET, DD_RUN, SEED_MAX, dataset_problems
from compendium.pipeline.spec import Param

SECTION = "dd_gtn"
DATA = ("fashion-mnist",)
_RUN = {k: DD_RUN[k] for k in ("seeds", "test_n", "workers", "dpi")}
SCHEMA = {
    **DD_DATASET,
    **_RUN,
    "device": DD_RUN["device"],
    # GTN meta-training
    "meta_seeds": Param(
        "list[int]",
        "meta-training seeds of the full-curriculum runs, with and without weight norm",
        low=0,
        high=SEED_MAX,
        nonempty=True,
    ),
    "variant_seeds": Param(
        "list[int]",
        "meta-training seeds of the other curriculum variants (with weight norm)",
        low=0,
        high=SEED_MAX,
        nonempty=True,
    ),
    "curricula": Param(
        "list[str]",
        "curriculum variants (full is always run)",
        nonempty=True,
        choices=("full", "shuffled_batch", "shuffled", "noise"),
    ),
    "inner_steps": Param("int", "T: inner SGD steps of a learner on generated batches", low=1, high=256),
    "inner_batch": Param("int", "generated images per inner step (a multiple of the 10 classes)", low=10, high=1024),
    "noise_dim": Param("int", "generator input z dimension", low=1, high=1024),
    "hidden": Param("int", "generator hidden width (two hidden layers)", low=8, high=4096),
    "iterations": Param("int", "outer (meta) steps per run", low=1, high=100000),
    "plateau_every": Param(
        "int",
        "test the meta-loss for the claims' plateau every this many outer steps and stop there; "
        "``iterations`` is then a cap (0: off)",
        low=0,
        high=100_000,
    ),
    "min_iterations": Param("int", "outer steps before the first plateau test", low=0, high=100_000),
    "meta_lr": Param("float", "Adam learning rate of the generator and the curriculum", low=0.0, high=1.0),
    "hyper_lr": Param("float", "Adam learning rate of the log inner lr and the momentum logit", low=0.0, high=1.0),
    "real_batch": Param("int", "real images of each meta-loss", low=10, high=60000),
    "init_lr": Param("float", "initial inner learning rate", low=1e-5, high=10.0),
    "init_momentum": Param("float", "initial inner momentum", low=0.01, high=0.99),
    "truncate": Param("int", "back-propagate through the last k inner steps (0: all)", low=0, high=256),
    "learners": Param(
        "list[str]",
        "learner pool (NAS codes w<width>-d<depth>-<act>-<norm>-<pool>); the first is the evaluation learner",
        nonempty=True,
    ),
    "real_lrs": Param(
        "list[float]", "real-data arm: learning rates tried (validation)", low=1e-5, high=10.0, nonempty=True
    ),
    "real_momenta": Param(
        "list[float]", "real-data arm: momenta tried (validation)", low=0.0, high=0.99, nonempty=True
    ),
    "val_n": Param(
        "int", "held-out real training images the real arm's lr / momentum are chosen on", low=10, high=60000
    ),
    # NAS proxy study
    "proxy_sets": Param(
        "list[str]", "published ipc-10 sets used as proxies (dd_matching)", choices=("dc", "dsa", "dm")
    ),
    "random_proxy_seeds": Param(
        "list[int]",
        "random-real proxy sets, one per seed: with the GTN proxies of the full-curriculum "
        "meta seeds, the replicates the paired NAS comparisons need",
        low=0,
        high=SEED_MAX,
        nonempty=True,
    ),
    "proxy_ipc": Param("int", "images per class of the random and published proxy sets", low=1, high=50),
    "proxy_steps": Param("int", "proxy training: AdamW steps on the small set", low=1, high=100_000),
    "proxy_batch": Param("int", "proxy training: batch size", low=1, high=4096),
    "proxy_lr": Param("float", "proxy training: AdamW learning rate (cosine)", low=0.0, high=1.0),
    "nas_test_n": Param(
        "int", "class-balanced test images every NAS training is tested on (0: all 10,000)", low=0, high=10_000
    ),
}


def check(values: dict) -> list[str]:
    """GTN (Such et al., ICML 2020) differentiates through the learners' training, so they keep no BatchNorm
    statistics; its class-balanced generator batches hold the 10 classes equally; the truncated unroll
    back-propagates through at most the ``inner_steps`` steps; a non-shipped dataset needs ``data_root``."""
    errs = dataset_problems(values)
    codes = values["learners"]
    if any(c.split("-")[3:4] == ["batch"] for c in codes):
        errs.append(f"learners: GTN learners are unrolled: no BatchNorm in {codes}")
    if values["inner_batch"] % 10:
        errs.append(f"inner_batch: {values['inner_batch']} must be a multiple of the 10 classes")
    if values["truncate"] > values["inner_steps"]:
        errs.append(f"truncate: {values['truncate']} > inner_steps = {values['inner_steps']}")
    return errs
