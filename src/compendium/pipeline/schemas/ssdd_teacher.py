from compendium.pipeline.schemas import DATASETS, SEED_MAX, dataset_problems
from compendium.pipeline.spec import Param

SECTION = "ssdd_teacher"
DATA = ("fashion-mnist", "digits")
# The source dataset, the same in the three SSDD stages (SSDD Sec. 4: CIFAR-100 as the source).
SOURCE = {
    "dataset": Param(
        "str",
        "the source: fashion-mnist (shipped) or a dataset read from data_root (SSDD: cifar100; "
        "the same in ssdd_teacher, ssdd_distill and ssdd_eval)",
        choices=DATASETS,
    ),
    "data_root": Param(
        "str", "folder holding the non-shipped datasets (relative to the project root); '' for the shipped ones"
    ),
}
SCHEMA = {
    "seed": Param("int", "seed of the training subset, the pool and the networks", low=0, high=SEED_MAX),
    **SOURCE,
    "arch": Param(
        "str",
        "the teacher: convnet (ConvNet-3, flattened features) or resnet18 (SSDD App. A.1, 512-d at width 64)",
        choices=("convnet", "resnet18"),
    ),
    "width": Param(
        "int",
        "teacher width: ConvNet-3 channels (BatchNorm; flattened 3x3 features: d_y = 9 width) or ResNet-18's "
        "first stage (64: the standard ResNet-18)",
        low=4,
        high=1024,
    ),
    "train_n": Param("int", "Barlow Twins training images", low=100, high=60000),
    "epochs": Param("int", "Barlow Twins epochs", low=1, high=1000),
    "batch_size": Param("int", "Barlow Twins batch size", low=8, high=16_384),
    "lr": Param("float", "AdamW learning rate", low=0.0, high=1.0),
    "weight_decay": Param("float", "AdamW weight decay", low=0.0, high=1.0),
    "head_mult": Param("float", "projector width multiplier (of 2048)", low=0.01, high=4.0),
    "lambd": Param("float", "Barlow Twins off-diagonal weight (5e-3)", low=0.0, high=1.0),
    "pool_n": Param("int", "real images the distillation draws from (their targets are cached)", low=100, high=60000),
    "free_teachers": Param(
        "list[str]", "free teachers: 'rand' (a seeded untrained teacher architecture) or 'trained:<file>'"
    ),
    "probe_train_n": Param("int", "source images of the teacher's linear probe", low=100, high=60000),
    "probe_test_n": Param("int", "source test images of the probe", low=100, high=10000),
    "probe_epochs": Param("int", "probe epochs (Adam, z-scored features)", low=1, high=1000),
    "untrained_seeds": Param(
        "list[int]",
        "seeds of the untrained networks of the teacher's architecture probed beside it "
        "(at least 2: their spread is the noise the teacher's gap is measured against)",
        low=0,
        high=SEED_MAX,
        nonempty=True,
    ),
    "device": Param("str", "auto (CUDA when present), cpu or cuda", choices=("auto", "cpu", "cuda")),
    "nproc": Param(
        "int",
        "processes of the Barlow Twins teacher's training under torchrun with DDP (one per GPU; 1: the stage's own "
        "process)",
        low=1,
        high=64,
    ),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}

#: Images in Fashion-MNIST's training split, the source of the teacher's training set and the pool.
FASHION_MNIST_TRAIN = 60_000
#: Images in each source's training split (the others are not bounded before the data is read).
TRAIN_SIZES = {"fashion-mnist": FASHION_MNIST_TRAIN, "cifar10": 50_000, "cifar100": 50_000}


def source_problems(values: dict) -> list[str]:
    """A source that is not shipped needs ``data_root`` (checked before any compute)."""
    return dataset_problems(values)


def check(values: dict) -> list[str]:
    """Each free teacher is ``rand`` or ``trained:<file>``; a non-shipped source has a ``data_root``; the
    training set and the pool fit in the source's training split."""
    errs = source_problems(values)
    bad = [t for t in values.get("free_teachers", []) if t != "rand" and not str(t).startswith("trained:")]
    if bad:
        errs.append(f"free_teachers: each must be 'rand' or 'trained:<file>', got {bad}")
    seeds = values.get("untrained_seeds", [0, 1])
    if len(set(seeds)) < 2:
        errs.append(f"untrained_seeds: at least 2 distinct seeds (their spread is the noise), got {seeds}")
    name = values.get("dataset", "fashion-mnist")
    size = TRAIN_SIZES.get(name)
    for key in ("train_n", "pool_n"):
        if size is not None and values.get(key, 0) > size:
            errs.append(
                f"{key}: {values[key]} is more than {name}'s {size} training images; lower it to at most {size}"
            )
    return errs
