from compendium.pipeline.schemas import SEED_MAX
from compendium.pipeline.spec import Param

SECTION = "dd_text"
DATA = ("fortunes",)
SCHEMA = {
    # corpus and embedding (compendium.core.text)
    "corpus": Param(
        "str",
        "fortunes (shipped) or one of TDD's, read from data_root in its distributed format: imdb "
        "(aclImdb/), sst5 (trees/ of trainDevTestTrees_PTB), trec6 / trec50 (train_5500.label, "
        "TREC_10.label)",
        choices=("fortunes", "imdb", "sst5", "trec6", "trec50"),
    ),
    "data_root": Param("str", "folder holding the corpus when it is not the fortunes (relative to the project root)"),
    "max_per_class": Param(
        "int", "training texts per class of TDD's corpora (a seeded draw; 0: all)", low=0, high=1_000_000
    ),
    "categories": Param(
        "list[str]",
        "fortune categories = classes (shipped under data/fortunes; the fortunes only)",
        nonempty=True,
        choices=("computers", "food", "law", "love", "politics", "science"),
    ),
    "max_tokens": Param("int", "quotes with more basic tokens are dropped", low=4, high=1000),
    "test_fraction": Param("float", "test share of every (balanced) class", low=0.05, high=0.9),
    "length": Param("int", "L: word pieces per sentence matrix (pad / truncate)", low=5, high=256),
    "entry_std": Param("float", "entry std of the scaled MiniLM token embeddings", low=0.01, high=10.0),
    # learners
    "filters": Param("int", "TextConvNet filters per width (3, 4, 5)", low=1, high=512),
    "hidden": Param("int", "Bi-LSTM hidden units per direction", low=1, high=512),
    # TDD (compendium.distill.unrolled.textdd)
    "ipcs": Param("list[int]", "distilled sentences per class (M = ipc x classes)", low=1, high=100, nonempty=True),
    "inits": Param(
        "list[str]",
        "theta_0 regimes: fixed (one Xavier draw) / random (a fresh Xavier draw per iteration)",
        nonempty=True,
        choices=("fixed", "random"),
    ),
    "archs": Param(
        "list[str]",
        "learners distilled with (TDD at the smallest ipc; larger ipcs: textconvnet)",
        nonempty=True,
        choices=("textconvnet", "bilstm"),
    ),
    "distill_seeds": Param(
        "list[int]",
        "replicate distillations at the smallest ipc (fixed: theta_0 = Xavier draw of the seed)",
        low=0,
        high=SEED_MAX,
        nonempty=True,
    ),
    "iterations": Param("int", "outer Adam iterations, TextConvNet", low=1, high=100000),
    "lstm_iterations": Param("int", "outer Adam iterations, Bi-LSTM", low=1, high=100000),
    "plateau_every": Param(
        "int",
        "test the outer loss for a plateau (the claims' test) every this many outer iterations and stop there; the "
        "iteration counts are then caps (0: off)",
        low=0,
        high=100_000,
    ),
    "min_iterations": Param("int", "outer iterations before the first plateau test", low=0, high=100_000),
    "epochs": Param(
        "int", "inner epochs over the distilled set (one step each, its own learned rate)", low=1, high=100
    ),
    "lr0": Param("float", "initial inner step size, TextConvNet", low=1e-5, high=10.0),
    "lstm_lr0": Param("float", "initial inner step size, Bi-LSTM", low=1e-5, high=10.0),
    "outer_lr": Param("float", "Adam rate of the sentences and label logits", low=0.0, high=10.0),
    "lr_lr": Param("float", "Adam rate of the log step sizes", low=0.0, high=10.0),
    "label_init": Param("float", "initial label logits = label_init x one-hot", low=0.0, high=20.0),
    "real_batch": Param("int", "real sentences per outer iteration", low=1, high=100000),
    "dd_hard": Param("bool", "also distil with fixed hard labels (DD) at the smallest ipc, TextConvNet"),
    # evaluation
    "seeds": Param("list[int]", "evaluation seeds (fresh learners)", low=0, high=SEED_MAX, nonempty=True),
    "eval_steps": Param("int", "Adam steps of a learner trained on a small set", low=1, high=100_000),
    "eval_lr": Param("float", "Adam learning rate of the evaluation learners", low=0.0, high=1.0),
    "eval_batch": Param("int", "evaluation batch size", low=1, high=4096),
    "full_steps": Param("int", "Adam steps of the full-train upper bound", low=1, high=100_000),
    "show_rows": Param("int", "rows (tokens) shown per decoded sentence", low=1, high=256),
    "workers": Param("int", "single-threaded worker processes (0: in the notebook's process)", low=0, high=64),
    "dpi": Param("int", "PNG resolution", low=50, high=150),
}


def check(values: dict) -> list[str]:
    """A corpus other than the shipped fortunes needs ``data_root`` (before any compute)."""
    if values["corpus"] != "fortunes" and not values["data_root"]:
        return [
            f"data_root: corpus {values['corpus']!r} is not shipped with the compendium; set `data_root` to the folder "
            "that holds it (params.yaml, dd_text), or use corpus: fortunes"
        ]
    return []
