from compendium.pipeline.schemas import IMAGE_FOLDER, DD_DATASET, DD_EVAL, dataset_problems
from compendium.distill.inversion import REPLICATE_MODES
from compendium.distill.methods.inversion import METHODS
from compendium.pipeline.spec import Param

SECTION = "dd_inversion"
DATA = ("fashion-mnist",)
SCHEMA = {
    **DD_DATASET,
    **IMAGE_FOLDER,
    **DD_EVAL,
    "replicate_syntheses": Param(
        "str",
        "all: each evaluation seed's students train on sets synthesised with that seed "
        "(every arm, so comparisons stay paired), so the intervals cover the synthesis's "
        "randomness too; ladder: only the sets at ladder_ipc; none: every student on the "
        "seed-0 sets (three times fewer syntheses)",
        choices=REPLICATE_MODES,
    ),
    "methods": Param(
        "list[str]", "inversion methods (the family's registered methods)", nonempty=True, choices=tuple(METHODS)
    ),
    "gvbsm_backbones": Param(
        "list[str]",
        "G-VBSM: the dd_teachers teachers it recovers against, one per iteration in turn",
        nonempty=True,
        choices=("convnet", "resnet18", "vit_bn", "mobilenet_v2", "shufflenet_v2"),
    ),
    "gvbsm_iterations": Param(
        "int", "G-VBSM: recovery iterations per batch (4000 in its CIFAR code)", low=1, high=100000
    ),
    "gvbsm_stat_images": Param(
        "int",
        "G-VBSM: real images its convolution statistics are measured on (a seeded random subset; 0: all, as its code)",
        low=0,
        high=2_000_000,
    ),
    "gvbsm_lr": Param(
        "float", "G-VBSM: recovery Adam learning rate (cosine; 0.05 in its CIFAR code)", low=0.0, high=10.0
    ),
    "ladder_ipc": Param("int", "ipc of DWA's Table 3 ladder (arms D-F)", low=1, high=1000),
    "iterations": Param("int", "recovery iterations per batch (1000 in the papers)", low=1, high=100000),
    "lr": Param("float", "recovery Adam learning rate (cosine)", low=0.0, high=10.0),
    "jitter": Param("int", "random-roll jitter in pixels", low=0, high=32),
    "rho": Param("float", "DWA: total norm of the weight adjustment", low=0.0, high=10.0),
    "K": Param("int", "DWA: ascent steps", low=1, high=100),
    "dwa_r_var": Param(
        "float",
        "DWA's variance weight r_var of the BN loss (lambda_var = 0.01 r_var; DWA: 11 on CIFAR and "
        "Tiny-ImageNet, 2 on ImageNet-1K)",
        low=0.0,
        high=1000.0,
    ),
    "classes_per_batch": Param(
        "int",
        "classes recovered per batch, each chunk with a fresh teacher copy (0: all in one; "
        "ImageNet-1K at 224 px: 100, as DWA's code)",
        low=0,
        high=100_000,
    ),
    "rded_factor": Param("int", "RDED: crops per side of a stitched image", low=1, high=4),
    "rded_images_per_class": Param("int", "RDED: real images scored per class", low=1, high=6000),
    "students": Param("list[str]", "student architectures", nonempty=True, choices=("convnet", "resnet18")),
    "eval_resnet_width_mult": Param("float", "ResNet-18 student width multiplier", low=0.01, high=4.0),
    "eval_resnet_stem_stride": Param(
        "int", "stride of the ResNet-18 student's 3x3 stem (1 at paper scale)", choices=(1, 2)
    ),
    "temperature": Param("float", "temperature of the online teacher labels", low=0.01, high=100.0),
}


def check(values: dict) -> list[str]:
    """G-VBSM's backbones are convolutional. RDED (Sun et al., CVPR 2024) stitches ``rded_factor``² crops per synthetic
    image, each from a different
    scored real image, so it needs that many real images per class for every ipc; a non-shipped dataset needs
    ``data_root``; each method's configuration passes the method's own checks."""
    errs = dataset_problems(values) + [p for m in values["methods"] for p in METHODS[m].stage_problems(values)]
    if "gvbsm" in values["methods"] and "vit_bn" in values["gvbsm_backbones"]:
        errs.append(
            "gvbsm_backbones: vit_bn has no convolution statistics to match beyond its patch embedding; G-VBSM's "
            "backbones are convolutional (convnet, resnet18, mobilenet_v2, shufflenet_v2)"
        )
    return errs
