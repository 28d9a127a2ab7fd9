from compendium.pipeline.schemas import IMAGE_FOLDER, DD_HARD, DD_RUN, SEED_MAX
from compendium.pipeline.spec import Param

# compendium.distill.zoo.ZOO (spelled out: the schemas stay free of torch; a test checks they agree)
ZOO = (
    "mlp",
    "lenet",
    "convnet",
    "alexnet",
    "vgg11",
    "resnet18",
    "mobilenet_v2",
    "efficientnet_b0",
    "shufflenet_v2",
    "vit_tiny",
    "vgg16",
    "resnet50",
    "resnet101",
)
DC_ARCHS = ("mlp", "lenet", "convnet", "alexnet", "vgg11")  # compendium.distill.zoo.DC_ARCHS

SECTION = "dd_crossarch"
DATA = ("fashion-mnist",)
SCHEMA = {
    **DD_RUN,
    **DD_HARD,
    "data_root": Param(
        "str",
        "folder holding the datasets of the sets it reads, where they are not shipped: each set is "
        "evaluated on the dataset it was made from (the `dataset` of dd_matching, dd_dc_arch, "
        "dd_inversion and dd_dwa); '' while they are all shipped",
    ),
    **IMAGE_FOLDER,
    "ipc": Param("int", "ipc of every set (the stages that made them must have it)", low=1, high=1000),
    "matrix_methods": Param(
        "list[str]",
        "rows of the DC/DSA cross-architecture matrix",
        nonempty=True,
        choices=("dc", "dsa", "dm", "dwa", "sre2l"),
    ),
    "matrix_archs": Param("list[str]", "students of the matrix", nonempty=True, choices=ZOO),
    "table4_archs": Param("list[str]", "students of DWA Table 4", nonempty=True, choices=ZOO),
    "table4_ipcs": Param(
        "list[int]",
        "ipcs of DWA Table 4 (must include ipc; the others must be dd_dwa's cross_ipc_extra and dd_inversion's ipcs)",
        low=1,
        high=1000,
        nonempty=True,
    ),
    "table9_archs": Param("list[str]", "students of DWA Table 9", nonempty=True, choices=ZOO),
    "cross_teachers": Param(
        "list[str]",
        "the other distilling models (must match dd_dwa; [] leaves out Table 4's ResNet-18 block and Table 9)",
        choices=("resnet18", "vit_bn"),
    ),
    "zoo_width": Param("int", "ConvNet width of the students (128 at paper scale)", low=4, high=1024),
    "zoo_width_mult": Param("float", "width multiplier of every other family (1.0 at paper scale)", low=0.01, high=4.0),
    "zoo_vit_depth": Param("int", "ViT depth (12 at paper scale)", low=1, high=24),
    "zoo_vit_patch": Param(
        "int",
        "ViT patch size in pixels (4 at paper scale; must divide the image size: 28 or 32)",
        choices=(2, 4, 7, 14),
    ),
    "zoo_stem_stride": Param(
        "int", "stride of the ImageNet-style stems and ResNet-18's small stem (1 at paper scale)", choices=(1, 2)
    ),
    "zoo_depth_mult": Param(
        "float",
        "blocks per stage of MobileNet-V2, EfficientNet-B0, ShuffleNet-V2 (1.0 at paper scale)",
        low=0.1,
        high=1.0,
    ),
    "temperature": Param("float", "temperature of the online teacher labels", low=0.01, high=100.0),
    "table2_archs": Param(
        "list[str]",
        "students of DC's Table 2 (DC's own networks: instance-norm ConvNet and VGG-11, "
        "AlexNet without norm), each trained on dd_dc_arch's ipc-1 DC set (the default ConvNet at "
        "the paper's 1,000 outer iterations); must include mlp and convnet. [] judges DC's "
        "cross-architecture row on the matrix instead",
        choices=DC_ARCHS,
    ),
    "table2_seeds": Param(
        "list[int]", "evaluation seeds of DC's Table 2 block (3 for an interval)", low=0, high=SEED_MAX, nonempty=True
    ),
    "table2_steps": Param(
        "int",
        "training steps of each Table 2 student (DC's ipc-1 evaluation: 300 epochs of one batch)",
        low=1,
        high=100_000,
    ),
    "table4_seeds": Param(
        "list[int]",
        "evaluation seeds of every SRe2L / DWA arm (Tables 4 and 9, the matrix's DWA row) "
        "and of their real-image references (3 for an interval)",
        low=0,
        high=SEED_MAX,
        nonempty=True,
    ),
    "table4_steps": Param(
        "int",
        "training steps of those arms (dd_inversion's evaluation, so that SRe2L's regime is read as there)",
        low=1,
        high=100_000,
    ),
}


def check(values: dict) -> list[str]:
    """DWA (Du et al., NeurIPS 2024) Table 4's blocks are read at ``table4_ipcs``; the ipc-``ipc`` block is the
    one the matrix and Table 9 share, so it must be among them. DC's Table 2 compares convolutional students
    with the MLP, and its set's regime is read on the ConvNet."""
    out = []
    if values["ipc"] not in values["table4_ipcs"]:
        out.append(f"table4_ipcs: {values['table4_ipcs']} must include ipc = {values['ipc']}")
    t2 = values.get("table2_archs", [])
    if t2 and not {"mlp", "convnet"} <= set(t2):
        out.append(
            f"table2_archs: {t2} must include mlp (the claim's baseline) and convnet (the set's regime is read on it)"
        )
    return out
