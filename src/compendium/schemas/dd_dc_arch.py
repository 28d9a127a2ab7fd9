from ..params import P
from . import DD_RUN, DD_HARD

SECTION = "dd_dc_arch"
DATA = ("fashion-mnist",)
SCHEMA = {
    **DD_RUN,
    **DD_HARD,
    "ipc": P("int", "images per class", low=1, high=1000),
    "variants": P("list[str]", "ConvNet variants (must include default)", nonempty=True,
                  choices=("default", "sigmoid", "leaky_relu", "max_pool", "no_norm", "batch_norm", "layer_norm", "group_norm")),
    "width": P("int", "ConvNet width (condensing and training)", low=4, high=1024),
    "iterations": P("int", "DC outer iterations (1000 in the paper)", low=1, high=100000),
    "loops": P("list[int]", "DC (outer, inner) loops (the code at ipc 10: 10, 50)", low=1, high=1000),
    "batch_real": P("int", "real images per class per matching step (256 in the code)", low=1, high=6000),
}
