from ..params import P

SECTION = "dd_teachers"
DATA = ("fashion-mnist",)
SCHEMA = {
    "seed": P("int", "training seed", low=0),
    "teachers": P("list[str]", "teacher architectures", nonempty=True, choices=("convnet", "resnet18", "vit_bn")),
    "convnet_width": P("int", "Conv-3 width (BatchNorm)", low=4, high=1024),
    "resnet_width_mult": P("float", "ResNet-18 width multiplier", low=0.01, high=4.0),
    "vit_width_mult": P("float", "ViT-BN width multiplier (of ViT-Tiny's 192)", low=0.01, high=4.0),
    "resnet_stem_stride": P("int", "stride of ResNet-18's 3x3 stem (1 at paper scale)", choices=(1, 2)),
    "vit_depth": P("int", "ViT-BN depth (12 at paper scale)", low=1, high=24),
    "vit_patch": P("int", "ViT-BN patch size in pixels (4 at paper scale; must divide 28)", choices=(2, 4, 7, 14)),
    "train_n": P("int", "training images (60000 = all)", low=100, high=60000),
    "epochs": P("int", "training epochs", low=1, high=1000),
    "batch_size": P("int", "batch size", low=8),
    "lr": P("float", "AdamW learning rate (cosine)", low=0.0, high=1.0),
    "weight_decay": P("float", "AdamW weight decay", low=0.0),
    "device": P("str", "auto (CUDA when present), cpu or cuda", choices=("auto", "cpu", "cuda")),
    "dpi": P("int", "PNG resolution", low=50, high=150),
}
