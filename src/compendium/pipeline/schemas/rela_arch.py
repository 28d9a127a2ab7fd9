from compendium.pipeline.schemas import DATASET, PROTOCOL, SEED_MAX
from compendium.pipeline.schemas._rela import SCHEDULES, priors_param
from compendium.pipeline.spec import Param

SECTION = "rela_arch"
DATA = ("fashion-mnist",)
SCHEMA = {
    "seeds": Param("list[int]", "training seeds", low=0, high=SEED_MAX, nonempty=True),
    **DATASET,
    **PROTOCOL,
    "cpu_bf16": Param(
        "bool",
        "bf16 autocast of the SSL pre-training on the CPU (AMX / AVX512-BF16 CPUs: 1.5x on the BYOL step; false: fp32)",
    ),
    "students": Param(
        "list[str]",
        "student architectures (Table 2 rows)",
        nonempty=True,
        choices=("convnet", "resnet18", "mobilenet_v2", "efficientnet_b0", "vit_tiny"),
    ),
    "resnet_width_mult": Param("float", "ResNet-18 width multiplier", low=0.01, high=4.0),
    "mobilenet_width_mult": Param("float", "MobileNet-V2 width multiplier", low=0.01, high=4.0),
    "efficientnet_width_mult": Param("float", "EfficientNet-B0 width multiplier", low=0.01, high=4.0),
    "mobile_stem_stride": Param(
        "int",
        "stride of MobileNet-V2's and EfficientNet-B0's first conv at 28-32 px "
        "(1: the usual small-image stem; 2: torchvision's, ~1.5-2x cheaper)",
        low=1,
        high=2,
    ),
    "vit_width_mult": Param("float", "ViT-Tiny width multiplier (1.0: 192-d)", low=0.01, high=4.0),
    "vit_depth": Param("int", "ViT-Tiny blocks (12 in ViT-Ti/16)", low=1, high=24),
    "budget": Param("float", "training budget of every cell", low=0.001, high=1.0),
    "priors": priors_param("ReLA priors (trained ones need targets from the priors stage)"),
    "schedule": Param("str", "lambda schedule", choices=SCHEDULES),
}


def check(values: dict) -> list[str]:
    """Each student of camera-ready Table 2 has its width keys here: only those can run."""
    known = ("convnet", "resnet18", "mobilenet_v2", "efficientnet_b0", "vit_tiny")
    unknown = sorted(set(values["students"]) - set(known))
    return [f"students: unknown {unknown}; known: {list(known)}"] if unknown else []
