from compendium.pipeline.schemas import SEED_MAX
from compendium.pipeline.spec import Param

SECTION = "rela_regime"
DATA = ()  # the stage reads the committed curves, not the data
SCHEMA = {
    "widths": Param("list[int]", "Conv-3 widths of the study", low=1, high=1024, nonempty=True),
    "seeds": Param(
        "list[int]", "seeds of every width (a curve per width and seed)", low=0, high=SEED_MAX, nonempty=True
    ),
    "epochs": Param("int", "BYOL epochs of each curve (the largest full budget studied)", low=1, high=10_000),
    "confirm_width": Param("int", "the width of the confirmation curves (0: none)", low=0, high=1024),
    "confirm_seeds": Param(
        "list[int]", "further seeds of confirm_width, each a curve stopped at confirm_epochs", low=0, high=SEED_MAX
    ),
    "confirm_epochs": Param("int", "where a confirmation curve stops (0: none)", low=0, high=10_000),
    "confirm_view": Param("str", "the probed features the confirmation plan judges", choices=("pooled", "flat")),
    "confirm_labels": Param("int", "the probe's labelled images the confirmation plan judges", low=10, high=60_000),
    "probe_at": Param(
        "list[int]",
        "epochs after which the frozen features are probed (0, the untrained network, always)",
        low=1,
        high=10_000,
        nonempty=True,
    ),
    "depth": Param("int", "ConvNet depth", low=1, high=8),
    "norm": Param("str", "ConvNet normalisation", choices=("batch", "instance", "none")),
    "batch_size": Param("int", "BYOL batch size", low=1, high=65_536),
    "lr": Param("float", "AdamW learning rate (constant)", low=0.0, high=1.0),
    "weight_decay": Param("float", "AdamW weight decay", low=0.0, high=1.0),
    "cpu_bf16": Param("bool", "bf16 autocast of pre-training on the CPU"),
    "probe_train": Param(
        "list[int]",
        "labelled images the probe trains on (nested subsets of one fixed draw)",
        low=10,
        high=60_000,
        nonempty=True,
    ),
    "probe_epochs": Param("int", "linear-probe epochs", low=1, high=1000),
    "probe_lr": Param("float", "linear-probe Adam learning rate", low=0.0, high=1.0),
    "probe_batch_size": Param("int", "linear-probe batch size", low=1, high=65_536),
    "full_gain": Param(
        "float",
        "points: BYOL at the full budget must exceed the untrained network by this, lower 95% bound",
        low=0.0,
        high=100.0,
    ),
    "low_gain": Param(
        "float",
        "points: BYOL at `budget` must exceed the untrained network by this, lower 95% bound",
        low=0.0,
        high=100.0,
    ),
    "budget": Param("float", "the low budget (ReLA Table 1's headline: 0.1)", low=0.001, high=1.0),
    "view": Param("str", "the probed features the choice is made on", choices=("pooled", "flat")),
    "labels": Param(
        "int", "the probe's labelled images the choice is made on (one of probe_train)", low=10, high=60_000
    ),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}


def check(values: dict) -> list[str]:
    problems = []
    if values["labels"] not in values["probe_train"]:
        problems.append(f"labels: {values['labels']} is not one of probe_train {values['probe_train']}")
    if max(values["probe_at"]) > values["epochs"]:
        problems.append(f"probe_at: {max(values['probe_at'])} is beyond epochs {values['epochs']}")
    if values["confirm_labels"] not in values["probe_train"]:
        problems.append(f"confirm_labels: {values['confirm_labels']} is not one of probe_train {values['probe_train']}")
    if values["confirm_seeds"] and not (values["confirm_width"] and 1 <= values["confirm_epochs"] <= values["epochs"]):
        problems.append(
            f"confirm_seeds: need confirm_width > 0 and confirm_epochs in 1..epochs ({values['epochs']}), got "
            f"{values['confirm_width']} and {values['confirm_epochs']}"
        )
    return problems
