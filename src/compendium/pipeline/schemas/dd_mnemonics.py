from compendium.pipeline.schemas import DD_DATASET, DD_RUN, dataset_problems
from compendium.pipeline.spec import Param

SECTION = "dd_mnemonics"
DATA = ("fashion-mnist",)
_RUN = {k: DD_RUN[k] for k in ("seeds", "test_n", "workers", "device", "dpi")}
#: Classes of the datasets whose phases the schema can check before any data is read.
CLASSES = {"fashion-mnist": 10, "mnist": 10, "cifar10": 10, "cifar100": 100}
SCHEMA = {
    **_RUN,
    **DD_DATASET,
    "methods": Param(
        "list[str]",
        "exemplar methods: random, herding, mnemonics, none (no memory) and the distilled sets dc, dsa, dm, dwa",
        nonempty=True,
        choices=("random", "herding", "mnemonics", "none", "dc", "dsa", "dm", "dwa"),
    ),
    "protocol_methods": Param(
        "list[str]",
        "methods of a second pass whose DC / DSA memories are their syntheses at the papers' settings, one per "
        "seed (reports/regime/dc_protocol/sets, 1 image per class); the DC and DSA rows are judged on it; [] to skip",
        choices=("random", "herding", "none", "dc", "dsa"),
    ),
    "protocol_memory": Param(
        "int", "exemplars per old class of that pass (the syntheses hold 1 image per class)", low=1, high=10
    ),
    "base_classes": Param("int", "classes of phase 0 (LUCIR: half of them)", low=1, high=999),
    "increment": Param(
        "int", "new classes per later phase (the rest of the classes must split into such phases)", low=1, high=999
    ),
    "phase_increments": Param(
        "list[int]",
        "other increments with fewer phases, run with random and Mnemonics memories only "
        "(the notes: the boost grows with the number of phases); [] to skip",
        low=1,
        high=999,
    ),
    "memory": Param("int", "exemplars per old class (<= 10, the distilled sets' ipc)", low=1, high=10),
    "train_per_class": Param(
        "int",
        "training images per class (a stratified subset; 6000: all of Fashion-MNIST's, 500: CIFAR-100's)",
        low=10,
        high=6000,
    ),
    "width": Param(
        "int", "ConvNet width (instance norm: the unrolled network keeps no running statistics)", low=4, high=1024
    ),
    "depth": Param("int", "ConvNet depth", low=1, high=4),
    "base_steps": Param("int", "SGD steps of phase 0", low=1, high=100_000),
    "inc_steps": Param("int", "SGD steps of each later phase", low=1, high=100_000),
    "batch": Param("int", "model-level batch size", low=1, high=4096),
    "lr": Param("float", "model-level SGD learning rate (constant)", low=0.0, high=1.0),
    "momentum": Param("float", "model-level SGD momentum", low=0.0, high=0.999),
    "weight_decay": Param("float", "model-level weight decay", low=0.0, high=0.1),
    "lam": Param("float", "lambda of lambda L_c + (1 - lambda) L_d", low=0.0, high=1.0),
    "temperature": Param("float", "KD temperature T of L_d", low=0.1, high=100.0),
    "mn_iterations": Param(
        "int",
        "Mnemonics: exemplar-level (outer) iterations per phase (0: the random initialisation)",
        low=0,
        high=10_000,
    ),
    "mn_lr": Param(
        "float", "Mnemonics: Adam learning rate of the exemplar pixels (normalised units)", low=0.0, high=10.0
    ),
    "mn_inner_steps": Param("int", "Mnemonics: unrolled SGD steps of the temporary model", low=1, high=100),
    "mn_inner_lr": Param("float", "Mnemonics: learning rate of the temporary model's steps", low=0.0, high=10.0),
    "mn_val_batch": Param(
        "int", "Mnemonics: class-balanced validation batch (D_i and the old exemplars)", low=1, high=4096
    ),
    "mn_adjust_iterations": Param(
        "int", "Mnemonics: A/B-split adjustment iterations of the old exemplars per half (0: off)", low=0, high=10_000
    ),
}


def check(values: dict) -> list[str]:
    """The claims compare Mnemonics (Liu et al., CVPR 2020) with the random and herding memories: each method
    once, and those three present; the phases must split the dataset's classes; a non-shipped dataset needs
    ``data_root``."""
    errs = dataset_problems(values)
    n = CLASSES.get(values["dataset"])
    for key, inc in [("increment", values["increment"])] + [
        ("phase_increments", i) for i in values["phase_increments"]
    ]:
        if n is not None and (values["base_classes"] >= n or (n - values["base_classes"]) % inc):
            errs.append(
                f"{key}: {inc} does not split the {n - values['base_classes']} classes after the "
                f"{values['base_classes']} of phase 0 ({values['dataset']}: {n} classes) into whole phases"
            )
    methods = values["methods"]
    if len(set(methods)) != len(methods):
        errs.append(f"methods: {methods} repeat a method")
    missing = [m for m in ("random", "herding", "mnemonics") if m not in methods]
    if missing:
        errs.append(f"methods: must include {', '.join(map(repr, missing))} (the claims compare against it)")
    second = values["protocol_methods"]
    if len(set(second)) != len(second):
        errs.append(f"protocol_methods: {second} repeat a method")
    if {"dc", "dsa"} & set(second) and values["protocol_memory"] > 1:
        errs.append(
            f"protocol_memory: {values['protocol_memory']} exceeds the 1 image per class of the DC / DSA "
            "syntheses at their papers' settings; set it to 1"
        )
    if second and not {"random", "herding", "dc"} <= set(second):
        errs.append(
            f"protocol_methods: {second} must include 'random', 'herding' and 'dc' (the DC row compares DC with "
            "herding; the table's differences are to random), or be []"
        )
    return errs
