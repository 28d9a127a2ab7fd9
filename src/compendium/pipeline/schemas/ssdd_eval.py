from compendium.pipeline.schemas import DD_RUN, SEED_MAX
from compendium.pipeline.schemas.ssdd_teacher import SOURCE, source_problems
from compendium.pipeline.spec import Param

SECTION = "ssdd_eval"
DATA = ("fashion-mnist", "digits")
ARCHS = ("convnet", "vgg11", "resnet18", "alexnet", "mobilenet_v2", "vit_tiny")
SCHEMA = {
    **SOURCE,
    "seeds": Param(
        "list[int]", "student seeds of the main methods and controls (ConvNet)", low=0, high=SEED_MAX, nonempty=True
    ),
    "ablation_seeds": Param(
        "list[int]", "student seeds of the ablation sets (ConvNet)", low=0, high=SEED_MAX, nonempty=True
    ),
    "cross_seeds": Param("list[int]", "student seeds of the other architectures", low=0, high=SEED_MAX, nonempty=True),
    "archs": Param("list[str]", "Table 1's students (must include convnet)", nonempty=True, choices=ARCHS),
    "cross_methods": Param(
        "list[str]",
        "methods evaluated on every student",
        nonempty=True,
        choices=("Random", "KMeans", "DSA", "DM", "KRR-ST", "SSDD"),
    ),
    "budget_n": Param("int", "the main budget (must match ssdd_distill)", low=1, high=100_000),
    "budgets": Param("list[int]", "Table 2's budgets (must match ssdd_distill)", low=1, high=100_000, nonempty=True),
    "student_width": Param("int", "width of the globally pooled ConvNet-3 student", low=4, high=1024),
    "zoo_width_mult": Param("float", "width multiplier of the other students (1.0 at paper scale)", low=0.01, high=4.0),
    "zoo_vit_depth": Param("int", "ViT depth (12 at paper scale)", low=1, high=24),
    "zoo_vit_patch": Param("int", "ViT patch size (4 at paper scale)", choices=(2, 4, 7, 14)),
    "zoo_stem_stride": Param("int", "stem stride of ResNet-18 and MobileNet-V2 (1 at paper scale)", choices=(1, 2)),
    "zoo_depth_mult": Param("float", "blocks per stage of MobileNet-V2 (1.0 at paper scale)", low=0.1, high=1.0),
    "pre_epochs": Param("int", "pre-training epochs on a set (1,000 in the paper)", low=1, high=10_000),
    "pre_lr": Param("float", "pre-training SGD learning rate (0.1)", low=0.0, high=10.0),
    "pre_wd": Param("float", "pre-training weight decay (Table 5: 1e-3 at N = 100)", low=0.0, high=1.0),
    "probe_train_n": Param(
        "int", "probe training images of the source (Fashion-MNIST by default)", low=100, high=60000
    ),
    "probe_test_n": Param("int", "probe test images of the source", low=100, high=10000),
    "probe_epochs": Param(
        "int", "probe epochs (Adam, z-scored features; 100 for the low-label probe)", low=1, high=1000
    ),
    "probe_lr": Param("float", "probe Adam learning rate", low=0.0, high=1.0),
    "full_data_n": Param("int", "pool images of the full-data regression control", low=100, high=60000),
    "full_data_epochs": Param("int", "epochs of the full-data regression control", low=1, high=1000),
    "converse_n": Param("int", "real images of the BYOL phase of the converse experiment", low=100, high=60000),
    "converse_epochs": Param("int", "BYOL epochs of the converse experiment", low=1, high=1000),
    "workers": Param("int", "single-threaded worker processes (0: in the notebook's process)", low=0, high=64),
    "device": DD_RUN["device"],
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}


def check(values: dict) -> list[str]:
    """Table 1's students include the ConvNet (the students every set is evaluated on); a non-shipped
    source has a ``data_root``."""
    errs = source_problems(values)
    if "convnet" not in values.get("archs", ["convnet"]):
        errs.append(f"archs: {values['archs']} must include convnet (the main student); add it")
    return errs
