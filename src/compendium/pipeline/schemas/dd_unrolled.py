from compendium.pipeline.schemas import DD_DATASET, DD_RUN, SEED_MAX, dataset_problems
from compendium.pipeline.spec import Param

SECTION = "dd_unrolled"
DATA = ("fashion-mnist", "digits")
SCHEMA = {
    **DD_DATASET,
    "seed": Param("int", "seed of the splits, the distilled images and the fixed init", low=0, high=SEED_MAX),
    "fixed_seeds": Param(
        "list[int]",
        "distillation seeds (= fixed theta_0) of DD's fixed regime (the stage's seed is always one)",
        low=0,
        high=SEED_MAX,
        nonempty=True,
    ),
    "sl_seeds": Param(
        "list[int]",
        "distillation seeds of the size study's fixed-regime SLDD / DD runs (the stage's seed is always one)",
        low=0,
        high=SEED_MAX,
        nonempty=True,
    ),
    "sl_random_seeds": Param(
        "list[int]",
        "distillation seeds of the size study's random-regime SLDD / DD runs (the fixed - random comparison pairs "
        "over the seeds both lists hold)",
        low=0,
        high=SEED_MAX,
        nonempty=True,
    ),
    "regimes": Param(
        "list[str]",
        "DD's initialisation regimes to distil in (fixed is always needed: its images are also judged from unseen "
        "inits)",
        nonempty=True,
        choices=("fixed", "random", "fixed_pretrained", "random_pretrained"),
    ),
    "plateau_every": Param(
        "int",
        "test the outer loss for a plateau (the claims' test) every this many outer steps and stop there; the "
        "iteration counts are then caps (0: off)",
        low=0,
        high=100_000,
    ),
    "min_iterations": Param("int", "outer steps before the first plateau test", low=0, high=100_000),
    "arch": Param(
        "str",
        "the unrolled learner (DD/SLDD: LeNet; convnet = Conv-3 width 32, instance norm)",
        choices=("lenet", "convnet"),
    ),
    "init": Param(
        "str",
        "p(theta_0) of the random regime: xavier (SLDD) or default (PyTorch's Kaiming-uniform)",
        choices=("xavier", "default"),
    ),
    "size": Param("int", "distilled images of the four-regime DD runs (class-cyclic, >= 10)", low=10, high=10000),
    "steps": Param("int", "inner GD steps per epoch (the images split into this many batches)", low=1, high=100),
    "epochs": Param("int", "epochs over the steps (rates not tied across epochs)", low=1, high=20),
    "iterations": Param("int", "outer Adam steps of the four-regime runs", low=0, high=100_000),
    "batch_real": Param("int", "real images per outer step", low=2, high=10_000),
    "lr_img": Param("float", "Adam learning rate of the pixels", low=0.0, high=10.0),
    "lr_label": Param("float", "Adam learning rate of SLDD's label logits", low=0.0, high=10.0),
    "lr_lr": Param("float", "Adam learning rate of the (softplus) step sizes", low=0.0, high=10.0),
    "init_lr": Param("float", "initial inner step size (DD: 0.02)", low=1e-6, high=10.0),
    "eval_inits": Param(
        "list[int]", "seeds of the unseen random inits every set is evaluated from", low=0, high=SEED_MAX, nonempty=True
    ),
    "pool_size": Param(
        "int", "pre-trained networks the pre-trained regimes (and the poisoning) distil against", low=1, high=100
    ),
    "pool_eval": Param("int", "held-out pre-trained networks of the evaluation", low=1, high=100),
    "pretrain_steps": Param(
        "int", "Adam steps of each pre-trained network (digits; Fashion-MNIST for the poisoning)", low=1, high=100_000
    ),
    "baseline_lr_grid": Param(
        "list[float]",
        "constant step sizes the baselines are tuned over (validation split)",
        low=0.0,
        high=10.0,
        nonempty=True,
    ),
    "opt_real_candidates": Param("int", "random real sets 'optimised real' picks the best of", low=1, high=1000),
    "val_n": Param("int", "training images held out as the validation split", low=10, high=50_000),
    "test_n": Param("int", "class-balanced test images (0: all 10,000)", low=0, high=10_000),
    "sl_sizes": Param("list[int]", "M of the SLDD-vs-DD study (DD only at M >= 10)", low=1, high=10000, nonempty=True),
    "sl_epochs": Param("int", "GD steps (one batch each) of the size study", low=1, high=100),
    "sl_iterations": Param("int", "outer steps of the size study's runs", low=0, high=100_000),
    "label_own": Param("float", "SLDD's initial label mass on the image's class", low=0.01, high=1.0),
    "similar_groups": Param(
        "list[list[int]]", "groups of similar classes for the label-sharing experiment", low=0, high=9
    ),
    "d_A": Param("float", "A of SLDD's A% distillation size d_A (percent)", low=1.0, high=100.0),
    "knn_k": Param("int", "k of the kNN learner", low=1, high=100),
    "poison_attacked": Param("int", "K: the class the poisoning makes the network forget", low=0, high=9),
    "poison_target": Param("int", "T: the class K is mapped to", low=0, high=9),
    "poison_size": Param("int", "poisoning images (one GD step)", low=1, high=1000),
    "poison_iterations": Param("int", "outer steps of the poisoning run", low=0, high=100_000),
    "poison_pool": Param(
        "int",
        "networks trained on Fashion-MNIST the poisoning images are learned against (pool_eval more are held out)",
        low=1,
        high=100,
    ),
    "poison_lr": Param(
        "float",
        "initial step size of the poisoning run (a large first step on noise wrecks a trained network)",
        low=1e-6,
        high=10.0,
    ),
    "ref_steps": Param("int", "Adam steps of the whole-data LeNet (r_M's denominator)", low=1, high=100_000),
    "workers": Param("int", "single-threaded worker processes", low=0, high=64),
    "device": DD_RUN["device"],
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}


def check(values: dict) -> list[str]:
    """DD (Wang et al. 2018, Algorithm 1) splits the ``size`` class-cyclic images into ``steps`` equal batches and
    holds at least one image per class; SLDD's distillation size d_A needs A > 0; DD's poisoning maps a class K
    of the 10 to a different class T."""
    errs = dataset_problems(values)
    if "fixed" not in values.get("regimes", ["fixed"]):
        errs.append(
            f"regimes: {values['regimes']!r} leaves out 'fixed', whose images the stage also judges from unseen "
            "inits; add it"
        )
    if values.get("dataset", "fashion-mnist") not in ("fashion-mnist", "mnist"):
        errs.append(
            f"dataset: {values.get('dataset')!r}: DD's learner takes 1 x 28 x 28 images; use fashion-mnist or mnist"
        )
    if values["arch"] not in ("lenet", "convnet"):
        errs.append(f"arch: {values['arch']!r} is not an unrolled learner; use lenet or convnet")
    if values["init"] not in ("xavier", "default"):
        errs.append(f"init: {values['init']!r}; use xavier or default")
    if values["size"] % values["steps"] or values["size"] < 10:
        errs.append(
            f"size: {values['size']} must split into steps = {values['steps']} equal batches and hold >= 1 image "
            "per class (>= 10)"
        )
    if any(s < 1 for s in values["sl_sizes"]):
        errs.append(f"sl_sizes: {values['sl_sizes']} must all be >= 1")
    if values["d_A"] <= 0:
        errs.append(f"d_A: {values['d_A']} must be > 0")
    K, T = values["poison_attacked"], values["poison_target"]
    if not 0 <= K < 10 or not 0 <= T < 10:
        errs.append(f"poison_attacked: poison classes must be in 0..9, got K = {K}, T = {T}")
    elif K == T:
        errs.append(f"poison_target: {T} equals poison_attacked; the poisoning maps K to another class")
    return errs
