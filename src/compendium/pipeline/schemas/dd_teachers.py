from compendium.pipeline.schemas import DD_DATASET, SEED_MAX, dataset_problems
from compendium.pipeline.spec import Param

SECTION = "dd_teachers"
DATA = ("fashion-mnist",)
SCHEMA = {
    **DD_DATASET,
    "seed": Param("int", "training seed", low=0, high=SEED_MAX),
    "teachers": Param("list[str]", "teacher architectures", nonempty=True, choices=("convnet", "resnet18", "vit_bn", "mobilenet_v2", "shufflenet_v2")),
    "convnet_width": Param("int", "Conv-3 width (BatchNorm)", low=4, high=1024),
    "resnet_width_mult": Param("float", "ResNet-18 width multiplier", low=0.01, high=4.0),
    "vit_width_mult": Param("float", "ViT-BN width multiplier (of ViT-Tiny's 192)", low=0.01, high=4.0),
    "mobilenet_width_mult": Param("float", "MobileNet-V2 width multiplier (a G-VBSM backbone; its stem stride is "
                                  "resnet_stem_stride's)", low=0.01, high=4.0),
    "shufflenet_width_mult": Param("float", "ShuffleNet-V2 width multiplier (G-VBSM's ShuffleNetV2 0.5x at paper scale)",
                                   low=0.01, high=4.0),
    "resnet_stem_stride": Param("int", "stride of ResNet-18's 3x3 stem (1 at paper scale)", choices=(1, 2)),
    "vit_depth": Param("int", "ViT-BN depth (12 at paper scale)", low=1, high=24),
    "vit_patch": Param("int", "ViT-BN patch size in pixels (4 at paper scale; must divide the image size: 28 or 32)", choices=(2, 4, 7, 8, 14, 16)),
    "train_n": Param("int", "training images (60000 = all)", low=100, high=60000),
    "epochs": Param("int", "training epochs", low=1, high=1000),
    "batch_size": Param("int", "batch size", low=8, high=16_384),
    "lr": Param("float", "AdamW learning rate (cosine)", low=0.0, high=1.0),
    "weight_decay": Param("float", "AdamW weight decay", low=0.0, high=1.0),
    "device": Param("str", "auto (CUDA when present), cpu or cuda", choices=("auto", "cpu", "cuda")),
    "nproc": Param("int", "processes of the teachers' training under torchrun with DDP (one per GPU; 1: the stage's own process)",
                   low=1, high=64),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}


def check(values: dict) -> list[str]:
    """A non-shipped dataset needs ``data_root`` (before any compute)."""
    return dataset_problems(values)
