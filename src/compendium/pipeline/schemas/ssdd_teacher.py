from compendium.pipeline.schemas import SEED_MAX
from compendium.pipeline.spec import Param

SECTION = "ssdd_teacher"
DATA = ("fashion-mnist", "digits")
SCHEMA = {
    "seed": Param("int", "seed of the training subset, the pool and the networks", low=0, high=SEED_MAX),
    "width": Param("int", "ConvNet-3 width of the teacher (BatchNorm; flattened 3x3 features: d_y = 9 width)", low=4, high=1024),
    "train_n": Param("int", "Barlow Twins training images", low=100, high=60000),
    "epochs": Param("int", "Barlow Twins epochs", low=1, high=1000),
    "batch_size": Param("int", "Barlow Twins batch size", low=8, high=16_384),
    "lr": Param("float", "AdamW learning rate", low=0.0, high=1.0),
    "weight_decay": Param("float", "AdamW weight decay", low=0.0, high=1.0),
    "head_mult": Param("float", "projector width multiplier (of 2048)", low=0.01, high=4.0),
    "lambd": Param("float", "Barlow Twins off-diagonal weight (5e-3)", low=0.0, high=1.0),
    "pool_n": Param("int", "real images the distillation draws from (their targets are cached)", low=100, high=60000),
    "free_teachers": Param("list[str]", "free teachers: 'rand' (a seeded untrained teacher architecture) or 'trained:<file>'"),
    "probe_train_n": Param("int", "Fashion-MNIST images of the teacher's linear probe", low=100, high=60000),
    "probe_test_n": Param("int", "Fashion-MNIST test images of the probe", low=100, high=10000),
    "probe_epochs": Param("int", "probe epochs (Adam, z-scored features)", low=1, high=1000),
    "device": Param("str", "auto (CUDA when present), cpu or cuda", choices=("auto", "cpu", "cuda")),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}

#: Images in Fashion-MNIST's training split, the source of the teacher's training set and the pool.
FASHION_MNIST_TRAIN = 60_000


def check(values: dict) -> list[str]:
    """Each free teacher is ``rand`` or ``trained:<file>``; the training set and the pool fit in
    Fashion-MNIST's training split."""
    errs = []
    bad = [t for t in values.get("free_teachers", []) if t != "rand" and not str(t).startswith("trained:")]
    if bad:
        errs.append(f"free_teachers: each must be 'rand' or 'trained:<file>', got {bad}")
    for key in ("train_n", "pool_n"):
        if values.get(key, 0) > FASHION_MNIST_TRAIN:
            errs.append(f"{key}: {values[key]} is more than Fashion-MNIST's {FASHION_MNIST_TRAIN} training images")
    return errs
