from compendium.pipeline.schemas import IMAGE_FOLDER, DD_DATASET, SEED_MAX, dataset_problems
from compendium.core import paths
from compendium.distill.teachers import TORCHVISION
from compendium.pipeline.spec import Param

SECTION = "dd_teachers"
DATA = ("fashion-mnist",)
SCHEMA = {
    **DD_DATASET,
    **IMAGE_FOLDER,
    "seed": Param("int", "training seed", low=0, high=SEED_MAX),
    "teachers": Param(
        "list[str]",
        "teacher architectures",
        nonempty=True,
        choices=("convnet", "resnet18", "vit_bn", "mobilenet_v2", "shufflenet_v2"),
    ),
    "convnet_width": Param("int", "Conv-3 width (BatchNorm)", low=4, high=1024),
    "resnet_width_mult": Param("float", "ResNet-18 width multiplier", low=0.01, high=4.0),
    "vit_width_mult": Param("float", "ViT-BN width multiplier (of ViT-Tiny's 192)", low=0.01, high=4.0),
    "mobilenet_width_mult": Param(
        "float",
        "MobileNet-V2 width multiplier (a G-VBSM backbone; its stem stride is resnet_stem_stride's)",
        low=0.01,
        high=4.0,
    ),
    "shufflenet_width_mult": Param(
        "float", "ShuffleNet-V2 width multiplier (G-VBSM's ShuffleNetV2 0.5x at paper scale)", low=0.01, high=4.0
    ),
    "resnet_stem_stride": Param("int", "stride of ResNet-18's 3x3 stem (1 at paper scale)", choices=(1, 2)),
    "vit_depth": Param("int", "ViT-BN depth (12 at paper scale)", low=1, high=24),
    "vit_patch": Param(
        "int",
        "ViT-BN patch size in pixels (4 at paper scale; must divide the image size: 28 or 32)",
        choices=(2, 4, 7, 8, 14, 16),
    ),
    "train_n": Param("int", "training images (60000 = all)", low=100, high=60000),
    "epochs": Param("int", "training epochs", low=1, high=1000),
    "batch_size": Param("int", "batch size", low=8, high=16_384),
    "lr": Param("float", "AdamW learning rate (cosine)", low=0.0, high=1.0),
    "weight_decay": Param("float", "AdamW weight decay", low=0.0, high=1.0),
    "device": Param("str", "auto (CUDA when present), cpu or cuda", choices=("auto", "cpu", "cuda")),
    "nproc": Param(
        "int",
        "processes of the teachers' training under torchrun with DDP (one per GPU; 1: the stage's own process)",
        low=1,
        high=64,
    ),
    "imported_teachers": Param(
        "list[str]",
        "teachers loaded from torchvision's ImageNet-1K files in weights_dir instead of "
        "trained (dataset imagenet; SRe2L and DWA: [resnet18])",
        choices=tuple(TORCHVISION),
    ),
    "weights_dir": Param(
        "str",
        "folder (relative to the project root) holding torchvision's files of imported_teachers "
        "under their distributed names, e.g. resnet18-f37072fd.pth",
    ),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}


def check(values: dict) -> list[str]:
    """A non-shipped dataset needs ``data_root``; an imported teacher must be one of ``teachers``, ImageNet-1K's
    (torchvision's heads have its 1,000 classes), and its file must be in ``weights_dir`` (before any compute)."""
    problems = dataset_problems(values)
    imported = values.get("imported_teachers", [])
    if not imported:
        return problems
    extra = [t for t in imported if t not in values.get("teachers", [])]
    if extra:
        problems.append(f"imported_teachers: {extra} are not in `teachers`; add them there or leave them out here")
    if values.get("dataset") != "imagenet":
        problems.append(
            f"imported_teachers: torchvision's files are ImageNet-1K networks, but dataset is "
            f"{values.get('dataset')!r}; set dataset: imagenet or imported_teachers: []"
        )
    if not values.get("weights_dir"):
        problems.append("weights_dir: set it to the folder holding torchvision's files of imported_teachers")
        return problems
    folder = paths.ROOT / values["weights_dir"]
    for t in (t for t in imported if t in TORCHVISION):  # an unknown name is the schema's own problem
        f = folder / TORCHVISION[t].file
        if not f.is_file():
            problems.append(
                f"weights_dir: {f} is missing; copy torchvision's {TORCHVISION[t].file} there (nothing is "
                "downloaded), or leave the teacher out of imported_teachers to train it"
            )
    return problems
