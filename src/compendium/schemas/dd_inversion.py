from ..params import P
from . import DD_EVAL

SECTION = "dd_inversion"
DATA = ("fashion-mnist",)
SCHEMA = {
    **DD_EVAL,
    "methods": P("list[str]", "inversion methods", nonempty=True, choices=("sre2l", "dwa", "rded")),
    "ladder_ipc": P("int", "ipc of DWA's Table 3 ladder (arms D-F)", low=1, high=1000),
    "iterations": P("int", "recovery iterations per batch (1000 in the papers)", low=1, high=100000),
    "lr": P("float", "recovery Adam learning rate (cosine)", low=0.0, high=10.0),
    "jitter": P("int", "random-roll jitter in pixels", low=0, high=32),
    "rho": P("float", "DWA: total norm of the weight adjustment", low=0.0, high=10.0),
    "K": P("int", "DWA: ascent steps", low=1, high=100),
    "rded_factor": P("int", "RDED: crops per side of a stitched image", low=1, high=4),
    "rded_images_per_class": P("int", "RDED: real images scored per class", low=1, high=6000),
    "students": P("list[str]", "student architectures", nonempty=True, choices=("convnet", "resnet18")),
    "eval_resnet_width_mult": P("float", "ResNet-18 student width multiplier", low=0.01, high=4.0),
    "eval_resnet_stem_stride": P("int", "stride of the ResNet-18 student's 3x3 stem (1 at paper scale)", choices=(1, 2)),
    "temperature": P("float", "temperature of the online teacher labels", low=0.01, high=100.0),
}
