from ..params import P
from . import DD_RUN

SECTION = "dd_mnemonics"
DATA = ("fashion-mnist",)
_RUN = {k: DD_RUN[k] for k in ("seeds", "test_n", "workers", "device", "dpi")}
SCHEMA = {
    **_RUN,
    "methods": P("list[str]", "exemplar methods: random, herding, mnemonics, none (no memory) and the distilled sets dc, "
                              "dsa, dm, dwa", nonempty=True,
                 choices=("random", "herding", "mnemonics", "none", "dc", "dsa", "dm", "dwa")),
    "base_classes": P("int", "classes of phase 0 (LUCIR: half of them)", low=1, high=9),
    "increment": P("int", "new classes per later phase", low=1, high=9),
    "phase_increments": P("list[int]", "other increments with fewer phases, run with random and Mnemonics memories only "
                                         "(the notes: the boost grows with the number of phases); [] to skip", low=1, high=5),
    "memory": P("int", "exemplars per old class (<= 10, the distilled sets' ipc)", low=1, high=10),
    "train_per_class": P("int", "training images per class (a stratified subset; 6000: all)", low=10, high=6000),
    "width": P("int", "ConvNet width (instance norm: the unrolled network keeps no running statistics)", low=4, high=1024),
    "depth": P("int", "ConvNet depth", low=1, high=4),
    "base_steps": P("int", "SGD steps of phase 0", low=1),
    "inc_steps": P("int", "SGD steps of each later phase", low=1),
    "batch": P("int", "model-level batch size", low=1),
    "lr": P("float", "model-level SGD learning rate (constant)", low=0.0, high=1.0),
    "momentum": P("float", "model-level SGD momentum", low=0.0, high=0.999),
    "weight_decay": P("float", "model-level weight decay", low=0.0, high=0.1),
    "lam": P("float", "lambda of lambda L_c + (1 - lambda) L_d", low=0.0, high=1.0),
    "temperature": P("float", "KD temperature T of L_d", low=0.1, high=100.0),
    "mn_iterations": P("int", "Mnemonics: exemplar-level (outer) iterations per phase (0: the random initialisation)", low=0),
    "mn_lr": P("float", "Mnemonics: Adam learning rate of the exemplar pixels (normalised units)", low=0.0, high=10.0),
    "mn_inner_steps": P("int", "Mnemonics: unrolled SGD steps of the temporary model", low=1, high=100),
    "mn_inner_lr": P("float", "Mnemonics: learning rate of the temporary model's steps", low=0.0, high=10.0),
    "mn_val_batch": P("int", "Mnemonics: class-balanced validation batch (D_i and the old exemplars)", low=1),
    "mn_adjust_iterations": P("int", "Mnemonics: A/B-split adjustment iterations of the old exemplars per half (0: off)",
                              low=0),
}
